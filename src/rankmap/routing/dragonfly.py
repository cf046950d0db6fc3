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

import numpy as np
import scipy.sparse as sp

from ..kernels import dragonfly as dk
from ..validate import check_limit
from .base import LinkLoads, Router
from .ugal import ugal_valiant_pairs

__all__ = ["DragonflyMinimal", "Valiant", "UGAL", "PER_FLOW_MAX"]

#: up to this many flows, :meth:`paths` routes one row per flow (no key grouping): the cost
#: of a swap's few moved flows is then the stages' own work, not sparse-matrix set-up.
PER_FLOW_MAX = 256

#: link entries kept in a router's cache of stage rows (16 bytes each)
ROW_CACHE_ENTRIES = 1 << 22


class _DragonflyRouter(Router):

    def __init__(self, machine):
        super().__init__(machine)
        # stage rows already computed for :meth:`paths` of a few flows, by (stage, valiant,
        # key): swaps route the same keys again and again
        self._rows: dict[tuple[int, bool, int], tuple[np.ndarray, np.ndarray]] = {}
        self._rows_size = 0

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

    def _rows_of(self, stage, valiant, a, b):
        """Links and fractions of every key (a[i], b[i]) of one stage, one pair of arrays per
        key, from the cache or computed (all missing keys in one kernel call)."""
        cache = self._rows
        keys = [(stage, valiant, int(x), int(y)) for x, y in zip(a.tolist(), b.tolist())]
        missing = list(dict.fromkeys(k for k in keys if k not in cache))
        if missing:
            indptr, links, frac = self._kernel_rows(stage, valiant, [k[2] for k in missing],
                                                    [k[3] for k in missing])
            found = {k: (links[indptr[i]:indptr[i + 1]], frac[indptr[i]:indptr[i + 1]])
                     for i, k in enumerate(missing)}
            if self._rows_size + len(links) <= ROW_CACHE_ENTRIES:
                cache.update(found)
                self._rows_size += len(links)
        else:
            found = {}
        got = [cache.get(k) or found[k] for k in keys]
        return [g[0] for g in got], [g[1] for g in got]

    def path_arrays(self, src, dst, nbytes=None):
        """Flows x links fractions as CSR arrays (see :meth:`Router.path_arrays`), injection
        and ejection links included.

        A few flows (the moved ones of a swap) are routed one row per flow from a cache of
        stage rows. Many flows share their stage keys: each distinct key is routed once and
        its row gathered for every flow that has it. Both give the same arrays, bit for bit:
        a key's row is computed the same way either way, and a flow's row holds its injection
        and ejection links, then its stages in route order (they use disjoint links).
        """
        m = self.machine
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        F = len(src)
        off = np.nonzero(src != dst)[0]
        weights = np.ones(F) if nbytes is None else np.asarray(nbytes, dtype=np.float64)
        index = np.int32 if m.n_links < 2**31 else np.int64
        if F <= PER_FLOW_MAX:
            ones = np.ones(len(off))
            rows = [off, off]
            cols = [src[off], m.n_nodes + dst[off]]
            data = [ones, ones]
            for stage, valiant, flows, a, b in self._stage_keys(src, dst, weights):
                links, frac = self._rows_of(stage, valiant, a, b)
                rows.append(np.repeat(flows, [len(x) for x in links]))
                cols += links
                data += frac
            # one row per flow: injection, ejection, then the stages in order (each part
            # comes sorted by flow: the stable sort only merges a few runs)
            row = np.concatenate(rows)
            order = np.argsort(row, kind="stable")
            indptr = np.concatenate([[0], np.cumsum(np.bincount(row, minlength=F))])
            return (indptr.astype(np.int64), np.concatenate(cols)[order].astype(index),
                    np.concatenate(data)[order])
        stages = [self._keyed_rows(*s) for s in self._stage_keys(src, dst, weights)]
        count = np.zeros(F, dtype=np.int64)
        count[off] = 2
        for flows, key, kptr, _links, _frac in stages:
            count[flows] += np.diff(kptr)[key]
        # the routes of a big phase split over many parallel global links can outgrow memory:
        # count their entries before they are gathered
        check_limit(int(count.sum()), "route_entries",
                    f"the routes of {F:,} flows on {m.spec} (the time model needs them; "
                    "--time-model off skips it)")
        indptr = np.concatenate([[0], np.cumsum(count)])
        links = np.empty(int(indptr[-1]), dtype=index)
        frac = np.empty(int(indptr[-1]), dtype=np.float64)
        first = indptr[off]
        links[first], links[first + 1] = src[off], m.n_nodes + dst[off]
        frac[first] = frac[first + 1] = 1.0
        fill = indptr[:-1].copy()
        fill[off] += 2
        for flows, key, kptr, klinks, kfrac in stages:
            dk.gather_rows(flows, key, kptr, klinks, kfrac, fill, links, frac)
        return indptr, links, frac

    def _keyed_rows(self, stage, valiant, flows, a, b):
        """(flows, key of each flow, the distinct keys' rows as indptr, links, fractions) of
        one stage: each distinct key (a, b) routed once."""
        k = int(max(a.max(), b.max())) + 1
        keys, inv = np.unique(a * k + b, return_inverse=True)
        indptr, links, frac = self._kernel_rows(stage, valiant, keys // k, keys % k)
        return (np.ascontiguousarray(flows, dtype=np.int64), inv.ravel().astype(np.int64),
                indptr, links, frac)

    def paths(self, src, dst, nbytes=None) -> sp.csr_matrix:
        """Flows x links fractions, injection and ejection links included (see
        :class:`Router`), from :meth:`path_arrays`."""
        indptr, links, frac = self.path_arrays(src, dst, nbytes)
        return sp.csr_matrix((frac, links, indptr), shape=(len(indptr) - 1, self.machine.n_links))

    def loads(self, src, dst, nbytes, counts=None) -> LinkLoads:
        """Link bytes and streams, expected router-to-router hops per flow and their split
        by link class (row, column, global), from one pass over the stages (``counts``: see
        :meth:`Router.loads`)."""
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
