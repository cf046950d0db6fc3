"""Routers of a dragonfly: :class:`DragonflyMinimal`, :class:`Valiant` and :class:`UGAL`.

* ``minimal``: at most a row and a column hop in the source group, one global hop, at most a
  row and a column hop in the destination group; equal split over the parallel global links
  and, inside a group, between row-then-column and column-then-row when both differ.
* ``valiant``: traffic between groups goes minimally to an intermediate group and on from
  there, split equally over all ``G-2`` intermediate groups; traffic inside a group, and every
  flow on a machine with fewer than 3 groups, routes minimally.
* ``ugal``: per pair of groups, :func:`rankmap.routing.ugal.ugal_valiant_pairs` of the phase's
  traffic; :meth:`UGAL.for_phase` fixes that choice so paths and loads agree.

A route is a sequence of stages (inside the source group, to the global link, the global hop,
the Valiant hop, inside the destination group), each computed once per distinct key by
:func:`rankmap.kernels.dragonfly.stage_rows`. Injection and ejection links carry every
inter-node flow but are not hops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..kernels import dragonfly as dk
from ..validate import check_limit
from .base import LinkLoads, Router
from .ugal import ugal_valiant_pairs

if TYPE_CHECKING:  # scipy.sparse loads in the functions that build matrices
    import scipy.sparse as sp

__all__ = ["DragonflyMinimal", "Valiant", "UGAL", "CACHED_FLOWS_MAX", "MINIMAL_WALK_MAX_L"]

#: up to this many flows, :meth:`path_arrays` takes the stage rows from the router's cache
#: (a search's moved flows route the same keys again and again); more flows (a whole phase)
#: are routed key by key without keeping the rows
CACHED_FLOWS_MAX = 4096

#: link entries kept in a router's cache of stage rows (16 bytes each)
ROW_CACHE_ENTRIES = 1 << 22

#: up to this many parallel global links per pair of groups, minimal routing sums a few
#: flows' routes (:meth:`DragonflyMinimal.link_sums_by_part`) by walking them in one compiled
#: call; with more, a route spreads over so many links that gathering the cached stage rows
#: costs less (400 moved flows on a 9-group dragonfly: 0.12 against 0.27 ms with 1 link,
#: even at 4, 0.65 against 0.46 ms at 8)
MINIMAL_WALK_MAX_L = 4


class _RowStore:
    """The rows of one stage's keys computed so far: the keys sorted, each key's entries in
    shared link and fraction arrays (grown by doubling)."""

    def __init__(self):
        self.keys = np.zeros(0, dtype=np.int64)
        self.start = np.zeros(0, dtype=np.int64)
        self.end = np.zeros(0, dtype=np.int64)
        self.links = np.zeros(1024, dtype=np.int64)
        self.frac = np.zeros(1024, dtype=np.float64)
        self.used = 0

    def find(self, q: np.ndarray) -> np.ndarray:
        """Position of every key of ``q`` among the stored keys, -1 where it is missing."""
        idx = np.searchsorted(self.keys, q)
        ok = idx < len(self.keys)
        ok[ok] = self.keys[idx[ok]] == q[ok]
        return np.where(ok, idx, -1)

    def add(self, keys: np.ndarray, indptr: np.ndarray, links: np.ndarray,
            frac: np.ndarray) -> None:
        """Keep the rows of ``keys`` (sorted, distinct, none stored yet) as the kernel gave
        them."""
        n = self.used + len(links)
        if n > len(self.links):
            size = max(n, 2 * len(self.links))
            self.links = np.concatenate([self.links[:self.used],
                                         np.zeros(size - self.used, dtype=np.int64)])
            self.frac = np.concatenate([self.frac[:self.used],
                                        np.zeros(size - self.used, dtype=np.float64)])
        self.links[self.used:n] = links
        self.frac[self.used:n] = frac
        at = np.searchsorted(self.keys, keys)          # one copy of the arrays, no sort
        self.keys = np.insert(self.keys, at, keys)
        self.start = np.insert(self.start, at, self.used + indptr[:-1])
        self.end = np.insert(self.end, at, self.used + indptr[1:])
        self.used = n


class _DragonflyRouter(Router):

    def __init__(self, machine):
        super().__init__(machine)
        # stage rows already computed for :meth:`path_arrays` of a few flows, per (stage,
        # valiant): a search's swaps route the same keys again and again
        self._stores: dict[tuple[int, bool], _RowStore] = {}
        self._rows_size = 0
        self._rows_full = False

    def _valiant(self, gu, gv, inter, src, dst, nbytes) -> np.ndarray:
        """Which flows go Valiant (boolean per flow)."""
        return np.zeros(len(gu), dtype=bool)

    def _kernel_rows(self, stage: int, valiant: bool, a, b):
        """(indptr, links, fractions) of the keys (a[k], b[k]) of one stage."""
        m = self.machine
        return dk.stage_rows(
            stage, valiant, np.ascontiguousarray(a, dtype=np.int64),
            np.ascontiguousarray(b, dtype=np.int64), m.G, m.R, m.C, m.L, m.row0, m.col0,
            m.glob0, m.g_src, m.g_dst, m.n_links)

    def _stage(self, stage: int, valiant: bool, a, b) -> sp.csr_matrix:
        import scipy.sparse as sp
        indptr, links, frac = self._kernel_rows(stage, valiant, a, b)
        return sp.csr_matrix((frac, links, indptr), shape=(len(a), self.machine.n_links))

    def _keyed(self, stage, valiant, flows, a, b):
        k = int(max(a.max(), b.max())) + 1
        keys, inv = np.unique(a * k + b, return_inverse=True)
        return flows, inv.ravel(), self._stage(stage, valiant, keys // k, keys % k)

    def _stage_keys(self, src, dst, nbytes):
        """Every non-empty stage as (stage, valiant, flow indices, key halves a and b per
        flow)."""
        m = self.machine
        nr = m.R * m.C
        ru, rv = src // m.N, dst // m.N
        gu, gv = ru // nr, rv // nr
        idx = np.arange(len(src))
        out = []
        local = (gu == gv) & (ru != rv)
        out.append((0, False, idx[local], ru[local], rv[local]))
        inter = gu != gv
        if m.G < 3:
            val = np.zeros(len(src), dtype=bool)
        else:
            val = self._valiant(gu, gv, inter, src, dst, nbytes) & inter
        for valiant, sel in ((False, inter & ~val), (True, val)):
            f = idx[sel]
            out.append((1, valiant, f, ru[sel], gv[sel]))
            out.append((2, valiant, f, gu[sel], gv[sel]))
            if valiant:
                out.append((3, True, f, gu[sel], gv[sel]))
            out.append((4, valiant, f, rv[sel], gu[sel]))
        return [s for s in out if len(s[2])]

    def _stages(self, src, dst, nbytes):
        """Every stage as (flow indices, key per flow, key x links matrix)."""
        return [self._keyed(*s) for s in self._stage_keys(src, dst, nbytes)]

    def _path_arrays(self, src, dst, nbytes=None):
        """Flows x links fractions as CSR arrays (see :meth:`Router.path_arrays`), injection
        and ejection links included.

        Every flow's row holds its injection and ejection links, then its stages in route
        order (they use disjoint links), each stage's row computed once per distinct key and
        copied to every flow that has the key. Up to :data:`CACHED_FLOWS_MAX` flows take the
        rows of keys seen before from the router's cache. A key's row is computed the same way
        with or without the cache, so the arrays are the same, bit for bit.
        """
        m = self.machine
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        F = len(src)
        off = np.nonzero(src != dst)[0]
        weights = np.ones(F) if nbytes is None else np.asarray(nbytes, dtype=np.float64)
        rows_of = self._cached_rows if F <= CACHED_FLOWS_MAX else self._fresh_rows
        stages = []
        for stage, valiant, flows, a, b in self._stage_keys(src, dst, weights):
            mul = m.G * m.R * m.C if stage == 0 else m.G          # router or group ids
            stages.append((np.ascontiguousarray(flows, dtype=np.int64),
                           *rows_of(stage, valiant, a * mul + b, mul)))
        count = np.zeros(F, dtype=np.int64)
        count[off] = 2
        for flows, key, start, end, _links, _frac in stages:
            count[flows] += end[key] - start[key]
        # the routes of a big phase split over many parallel global links can outgrow memory:
        # count their entries before they are gathered
        check_limit(int(count.sum()), "route_entries", f"routing {F:,} flows on {m.spec}")
        indptr = np.concatenate([[0], np.cumsum(count)])
        links = np.empty(int(indptr[-1]), dtype=np.int32 if m.n_links < 2**31 else np.int64)
        frac = np.empty(int(indptr[-1]), dtype=np.float64)
        first = indptr[off]
        links[first], links[first + 1] = src[off], m.n_nodes + dst[off]
        frac[first] = frac[first + 1] = 1.0
        fill = indptr[:-1].copy()
        fill[off] += 2
        for flows, key, start, end, klinks, kfrac in stages:
            dk.gather_rows(flows, key, start, end, klinks, kfrac, fill, links, frac)
        return indptr, links, frac

    def _fresh_rows(self, stage, valiant, q, mul):
        """(key of every flow, first and past-the-last entry of every key's row, the rows'
        links and fractions) of one stage, the flows' keys ``q`` (``a * mul + b``) routed
        once each."""
        keys, inv = np.unique(q, return_inverse=True)
        indptr, links, frac = self._kernel_rows(stage, valiant, keys // mul, keys % mul)
        return inv.ravel().astype(np.int64), indptr[:-1], indptr[1:], links, frac

    def _cached_rows(self, stage, valiant, q, mul):
        """As :meth:`_fresh_rows`, the rows of keys seen before taken from the cache and the
        missing ones computed (one kernel call) and kept while the cache has room."""
        store = self._stores.setdefault((stage, valiant), _RowStore())
        key = store.find(q)
        missing = key < 0
        if missing.any():
            if self._rows_full:
                return self._fresh_rows(stage, valiant, q, mul)
            new = np.unique(q[missing])
            indptr, links, frac = self._kernel_rows(stage, valiant, new // mul, new % mul)
            if self._rows_size + len(links) > ROW_CACHE_ENTRIES:
                # full: from now on, flows with a key not kept are routed without the cache
                self._rows_full = True
                return self._fresh_rows(stage, valiant, q, mul)
            store.add(new, indptr, links, frac)
            self._rows_size += len(links)
            key = store.find(q)
        return key, store.start, store.end, store.links, store.frac

    def _paths(self, src, dst, nbytes=None) -> sp.csr_matrix:
        """Flows x links fractions, injection and ejection links included (see
        :class:`Router`), from :meth:`path_arrays`."""
        import scipy.sparse as sp
        indptr, links, frac = self._path_arrays(src, dst, nbytes)
        return sp.csr_matrix((frac, links, indptr), shape=(len(indptr) - 1, self.machine.n_links))

    def _loads(self, src, dst, nbytes, counts=None) -> LinkLoads:
        """Link bytes and streams, expected router-to-router hops per flow and their split
        by link class (row, column, global), from one pass over the stages (``counts``: see
        :meth:`Router.loads`)."""
        import scipy.sparse as sp
        m = self.machine
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        nbytes = np.asarray(nbytes, dtype=np.float64)
        many = (np.ones(len(src), dtype=np.int64) if counts is None
                else np.asarray(counts, dtype=np.int64))
        if counts is not None:
            nbytes = nbytes * many
        n = m.n_nodes
        off = src != dst
        link_bytes = np.bincount(src[off], weights=nbytes[off], minlength=2 * n)
        link_bytes[n:] += np.bincount(dst[off], weights=nbytes[off], minlength=n)[:n]
        link_bytes = np.concatenate([link_bytes[:2 * n], np.zeros(m.n_links - 2 * n)])
        streams = np.concatenate([np.bincount(src[off], weights=many[off], minlength=n),
                                  np.bincount(dst[off], weights=many[off], minlength=n),
                                  np.zeros(m.n_links - 2 * n)])
        streams = np.rint(streams).astype(np.int64)
        hops = np.zeros(len(src))
        class_hops = np.zeros((len(src), 3))
        cls = m.link_class
        onehot = sp.csr_matrix((np.ones(int((cls >= 2).sum())),
                                (np.nonzero(cls >= 2)[0], cls[cls >= 2] - 2)),
                               shape=(m.n_links, 3))
        for flows, keys, A in self._stages(src, dst, nbytes):
            nk = A.shape[0]
            w = np.bincount(keys, weights=nbytes[flows], minlength=nk)
            cnt = np.bincount(keys, weights=many[flows], minlength=nk).astype(np.float64)
            link_bytes += A.T @ w
            ones = A.copy()
            ones.data[:] = 1.0
            streams += np.rint(ones.T @ cnt).astype(np.int64)
            hops[flows] += np.asarray(A.sum(axis=1)).ravel()[keys]
            np.add.at(class_hops, flows, (A @ onehot).toarray()[keys])
        return LinkLoads(bytes=link_bytes, streams=streams, flow_hops=hops,
                         class_hops=class_hops)


class DragonflyMinimal(_DragonflyRouter):
    """Minimal routing (module docstring)."""

    name = "minimal"

    def _link_sums_by_part(self, src, dst, weight, part, n_parts: int):
        """Signed weights summed per part and link (see :meth:`Router.link_sums_by_part`),
        the same sums in the same order; walked without building the rows when a route
        spreads over at most :data:`MINIMAL_WALK_MAX_L` parallel global links."""
        m = self.machine
        if m.L > MINIMAL_WALK_MAX_L:
            return super()._link_sums_by_part(src, dst, weight, part, n_parts)
        return dk.minimal_link_sums(
            np.ascontiguousarray(src, dtype=np.int64), np.ascontiguousarray(dst, dtype=np.int64),
            np.ascontiguousarray(weight, dtype=np.float64),
            np.ascontiguousarray(part, dtype=np.int64), m.N, m.n_nodes, m.G, m.R, m.C, m.L,
            m.row0, m.col0, m.glob0, m.g_src, m.g_dst, m.n_links)


class Valiant(_DragonflyRouter):
    """Valiant routing through every other group equally (module docstring)."""

    name = "valiant"

    def _valiant(self, gu, gv, inter, src, dst, nbytes):
        return inter.copy()


class _UGALDecided(_DragonflyRouter):
    """UGAL with its Valiant group pairs fixed (from one phase's traffic)."""

    name = "ugal"

    def __init__(self, machine, valiant_pairs: np.ndarray):
        super().__init__(machine)
        self.valiant_pairs = valiant_pairs

    def _valiant(self, gu, gv, inter, src, dst, nbytes):
        return self.valiant_pairs[gu, gv]


class UGAL(_DragonflyRouter):
    """UGAL: per pair of groups, Valiant when the minimal global link is loaded more than
    twice the Valiant estimate of the phase's own traffic (:mod:`rankmap.routing.ugal`)."""

    name = "ugal"

    def for_phase(self, src, dst, nbytes) -> Router:
        """UGAL with the Valiant group pairs of this phase's traffic fixed."""
        return _UGALDecided(self.machine, ugal_valiant_pairs(self.machine, src, dst, nbytes))

    def _valiant(self, gu, gv, inter, src, dst, nbytes):
        return ugal_valiant_pairs(self.machine, src, dst, nbytes)[gu, gv]
