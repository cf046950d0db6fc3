"""Dual recursive bisection of a graph and of the allocated nodes, guided by the network.

Maps the vertices of a graph (one vertex per node: the node-sized parts of the multilevel
``graph`` mapper) onto as many allocated nodes. The nodes are split in two along their
longest coordinate (``machine.geometry``), recursively, level by level; at every split the
vertices of that domain are cut in two with exactly as many vertices as each half has nodes.
The cut minimises, in hop x bytes, both

* the bytes between the two halves, times the hop distance between the halves' centres, and
* the bytes to vertices outside the domain (already sent towards their own sub-domains),
  times the hop distance from each half's centre to their sub-domain's centre
  (``machine.hop_distance``), which orients every cut towards the outside partners, as
  Scotch's dual recursive bipartitioning does.

KaHIP (``kahip.kaffpa``) gives the first cut of large domains; the side each KaHIP block goes
to is the cheaper orientation, and a few passes of pairwise swaps (vectorised over the whole
domain, each pass kept only if the exact cost drops) make it exact in size and lower in cost.
Domains of at most :data:`SMALL_DOMAIN` vertices skip KaHIP and start from the vertices'
preference for a side.
"""

from __future__ import annotations

import functools
import itertools
from typing import TYPE_CHECKING

import numpy as np

from ..kernels.bisection import (bisect_finish, bisect_prep, bisect_small_domains, cut_cost,
                                 place_leaf_grid)
from .exact_grid import hop_geometry, whole_sums_exact
from .kahip_cut import kahip_blocks
from .node_partition import KAHIP_IMBALANCE, KAHIP_MODE, int_weights
from .swap_refine import partner_entries

if TYPE_CHECKING:  # scipy.sparse loads in the functions that build matrices
    import scipy.sparse as sp

__all__ = ["map_graph_to_nodes", "SMALL_DOMAIN", "LEAF_DOMAIN", "SWAP_PASSES",
           "MAX_LEVEL_DOMAINS", "MAX_LEAF_PLACEMENTS"]

#: domains of at most this many vertices are cut without KaHIP
SMALL_DOMAIN = 16
#: domains of at most this many vertices are placed by trying every permutation
LEAF_DOMAIN = 4
#: sweeps over the small domains
LEAF_SWEEPS = 2
#: most swap passes per cut
SWAP_PASSES = 6
#: work bound: a level with more domains than this is not cut further (its domains keep
#: their order); graphs of up to 4 x this many vertices are cut down to the leaves
MAX_LEVEL_DOMAINS = 1 << 13
#: work bound: leaf placements (leaves x sweeps) at most; fewer sweeps beyond it
MAX_LEAF_PLACEMENTS = 1 << 14


class _Rows:
    """The rows of a CSR graph for some vertices, as scipy's ``q[verts]`` gives them (same
    entries in the same order), without building a sparse matrix: ``row`` (index into the
    vertices), ``col`` (graph vertex) and ``data`` of every entry, and ``indptr``."""

    def __init__(self, q: sp.csr_matrix, verts: np.ndarray):
        self.row, flat = partner_entries(q.indptr, verts)
        self.col = q.indices[flat]
        self.data = q.data[flat]
        deg = np.diff(q.indptr)[verts]
        self.indptr = np.concatenate([[0], np.cumsum(deg)]).astype(q.indptr.dtype)
        self.n_rows, self.n_cols = len(verts), q.shape[1]
        self.index_dtype = q.indices.dtype


def _induced(rows: _Rows, verts: np.ndarray) -> sp.csr_matrix:
    """``q[verts][:, verts]`` from the domain's rows: the subgraph of the domain, in time
    that follows its rows (scipy's column indexing costs the whole graph's width, which made
    the recursion quadratic). Entries keep their order within each row, so the arrays are the
    ones scipy's indexing gives."""
    import scipy.sparse as sp
    n_cols = rows.n_cols
    local = np.full(n_cols, -1, dtype=np.int64) if n_cols <= 4 * len(rows.col) + 64 \
        else None
    if local is None:   # a sparse domain of a wide graph: look the columns up by sorting
        order = np.argsort(verts, kind="stable")
        sv = verts[order]
        at = np.searchsorted(sv, rows.col)
        at[at == len(sv)] = 0
        col = np.where(sv[at] == rows.col, order[at], -1) if len(sv) else \
            np.full(len(rows.col), -1)
    else:
        local[verts] = np.arange(len(verts))
        col = local[rows.col]
    keep = col >= 0
    counts = np.bincount(rows.row[keep], minlength=rows.n_rows)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(rows.indptr.dtype)
    return sp.csr_matrix((rows.data[keep], col[keep].astype(rows.index_dtype), indptr),
                         shape=(rows.n_rows, len(verts)))


def _centre_nodes(geo: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """For every group of rows of ``geo``, the row nearest to the group's centroid."""
    out = np.empty(len(groups), dtype=np.int64)
    for i, g in enumerate(groups):
        pts = geo[g]
        c = pts.mean(axis=0)
        out[i] = g[int(np.argmin(((pts - c) ** 2).sum(axis=1)))]
    return out


def _split_nodes(geo: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Halves of the node rows ``pos``: sorted along their longest axis, other axes breaking
    ties; the first half has ``len // 2`` nodes."""
    g = geo[pos]
    axis = int(np.argmax(g.max(axis=0) - g.min(axis=0)))
    keys = [g[:, a] for a in range(g.shape[1])][::-1] + [g[:, axis]]
    pos = pos[np.lexsort(keys)]
    half = len(pos) // 2
    return pos[:half], pos[half:]


class _Cut:
    """Cost of a two-way cut of one domain: hop-weighted internal cut plus external pulls."""

    def __init__(self, sub: sp.csr_matrix, ext0: np.ndarray, ext1: np.ndarray, d01: float):
        self.sub, self.ext0, self.ext1, self.d01 = sub, ext0, ext1, d01

    def cost(self, side0: np.ndarray) -> float:
        x = side0.astype(np.float64)
        cut = float(x @ (self.sub @ (1.0 - x)))
        return self.d01 * cut + float(self.ext0[side0].sum() + self.ext1[~side0].sum())

    def gains(self, side0: np.ndarray) -> np.ndarray:
        """Cost drop of moving each vertex alone to the other side."""
        s = np.where(side0, 1.0, -1.0)
        conn = self.sub @ s                     # bytes to side 0 minus bytes to side 1
        own_minus_other = np.where(side0, conn, -conn)
        ext_here = np.where(side0, self.ext0, self.ext1)
        ext_there = np.where(side0, self.ext1, self.ext0)
        return ext_here - ext_there - self.d01 * own_minus_other


def _exact_size(cut: _Cut, side0: np.ndarray, n0: int) -> np.ndarray:
    """Move the best-gain vertices across until side 0 has exactly ``n0`` vertices."""
    excess = int(side0.sum()) - n0
    if excess == 0:
        return side0
    side0 = side0.copy()
    gain = cut.gains(side0)
    cand = np.nonzero(side0 if excess > 0 else ~side0)[0]
    pick = cand[np.argsort(-gain[cand], kind="stable")[:abs(excess)]]
    side0[pick] = ~side0[pick]
    return side0


def _swap_passes(cut: _Cut, side0: np.ndarray, passes: int) -> np.ndarray:
    """Pairwise swaps across the cut, best gains first, while the exact cost drops."""
    best = cut.cost(side0)
    for _ in range(passes):
        gain = cut.gains(side0)
        a = np.nonzero(side0)[0]
        b = np.nonzero(~side0)[0]
        if len(a) == 0 or len(b) == 0:
            break
        a = a[np.argsort(-gain[a], kind="stable")]
        b = b[np.argsort(-gain[b], kind="stable")]
        m = min(len(a), len(b))
        a, b = a[:m], b[:m]
        w_ab = np.asarray(cut.sub[a, b]).ravel()
        pair = gain[a] + gain[b] - 2.0 * cut.d01 * w_ab
        good = np.nonzero(pair <= 0)[0]
        m = int(good[0]) if len(good) else m
        improved = False
        while m > 0:
            trial = side0.copy()
            trial[a[:m]] = False
            trial[b[:m]] = True
            c = cut.cost(trial)
            if c < best - 1e-9 * max(abs(best), 1.0):
                side0, best, improved = trial, c, True
                break
            m //= 2
        if not improved:
            break
    return side0


def _first_side(n: int, n0: int, indptr, indices, data, ext0, ext1, seed: int,
                cost) -> np.ndarray:
    """Side-0 mask of a domain's first cut, before sizing: KaHIP's bisection of its subgraph
    (CSR ``indptr``, ``indices``, ``data``), each block on its cheaper side by ``cost``, or,
    for small domains and domains without edges, the ``n0`` vertices pulled most towards
    side 0 (``ext0 - ext1`` lowest)."""
    if n > SMALL_DOMAIN and len(data):
        side0 = kahip_blocks(indptr, indices, int_weights(data), 2, KAHIP_IMBALANCE, seed,
                             KAHIP_MODE) == 0
        return ~side0 if cost(~side0) < cost(side0) else side0
    side0 = np.zeros(n, dtype=bool)
    side0[np.argsort(ext0 - ext1, kind="stable")[:n0]] = True
    return side0


def _bisect_grid(grid, verts: np.ndarray, n0: int, in_dom: np.ndarray, centre_of: np.ndarray,
                 c0: int, c1: int, seed: int) -> np.ndarray:
    """:func:`_bisect` with the cut problem built, sized and swapped in compiled calls
    (:mod:`rankmap.kernels.bisection`; same sums, exact: the same cut)."""
    indptr, indices, data, dims, strides, wrap, local_of = grid
    n = len(verts)
    ext0, ext1, s_ptr, s_idx, s_dat, d01 = bisect_prep(indptr, indices, data, verts, in_dom,
                                                       centre_of, local_of, c0, c1, dims,
                                                       strides, wrap)
    side0 = _first_side(n, n0, s_ptr, s_idx, s_dat, ext0, ext1, seed,
                        lambda x: cut_cost(x, s_ptr, s_idx, s_dat, ext0, ext1, d01))
    return bisect_finish(side0, n0, s_ptr, s_idx, s_dat, ext0, ext1, d01, SWAP_PASSES)


def _bisect(q: sp.csr_matrix, verts: np.ndarray, n0: int, in_dom: np.ndarray,
            centre_of: np.ndarray, c0: int, c1: int, machine, seed: int) -> np.ndarray:
    """Side-0 mask over ``verts`` (exactly ``n0`` True) for halves centred on nodes c0, c1."""
    n = len(verts)
    rows = _Rows(q, verts)
    outside = ~in_dom[rows.col]
    r, u, w = rows.row[outside], rows.col[outside], rows.data[outside]
    if len(u):
        cu = centre_of[u]
        d0 = machine.hop_distance(np.full(len(u), c0), cu).astype(np.float64)
        d1 = machine.hop_distance(np.full(len(u), c1), cu).astype(np.float64)
        ext0 = np.bincount(r, weights=w * d0, minlength=n)
        ext1 = np.bincount(r, weights=w * d1, minlength=n)
    else:
        ext0 = ext1 = np.zeros(n)
    sub = _induced(rows, verts)
    d01 = float(max(int(machine.hop_distance(np.array([c0]), np.array([c1]))[0]), 1))
    cut = _Cut(sub, ext0, ext1, d01)
    side0 = _first_side(n, n0, sub.indptr, sub.indices, sub.data, ext0, ext1, seed, cut.cost)
    side0 = _exact_size(cut, side0, n0)
    return _swap_passes(cut, side0, SWAP_PASSES)


def _external(rows: _Rows, in_dom, centre_of, targets, machine):
    """(len(rows), len(targets)) hop x bytes from each vertex (a row of ``rows``: the graph's
    rows of the domain) to its partners outside the domain if the vertex sat on each target
    node; one hop-distance call for every target."""
    n = rows.n_rows
    outside = ~in_dom[rows.col]
    r, u, w = rows.row[outside], rows.col[outside], rows.data[outside]
    if not len(u):
        return np.zeros((n, len(targets)))
    cu = centre_of[u]
    t = len(targets)
    d = machine.hop_distance(np.repeat(np.asarray(targets), len(u)),
                             np.tile(cu, t)).astype(np.float64)
    # target j's sums in bins j*n .. j*n+n-1, each added in entry order as one bincount would
    flat = np.bincount(np.tile(r, t) + np.repeat(np.arange(t) * n, len(u)),
                       weights=np.tile(w, t) * d, minlength=t * n)
    return flat.reshape(t, n).T.copy()


@functools.cache
def _leaf_tables(s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row and column index of every cell of an s x s table (row-major), and every
    permutation of range(s) in lexicographic order (read-only)."""
    ii, jj = np.meshgrid(np.arange(s), np.arange(s), indexing="ij")
    perms = np.array(list(itertools.permutations(range(s))), dtype=np.int64).reshape(-1, s)
    for a in (ii, jj, perms):
        a.flags.writeable = False
    return ii.ravel(), jj.ravel(), perms


def _place_leaf(q, verts, nodes, in_dom, centre_of, machine) -> np.ndarray:
    """Order of ``nodes`` (indices into it) for ``verts`` minimising internal plus external
    hop-bytes, over every permutation (small domains only)."""
    s = len(verts)
    rows = _Rows(q, verts)
    ext = _external(rows, in_dom, centre_of, nodes, machine)
    wint = _induced(rows, verts).toarray()
    ii, jj, perms = _leaf_tables(s)
    dist = machine.hop_distance(nodes[ii], nodes[jj]).reshape(s, s)
    internal = (dist[perms[:, :, None], perms[:, None, :]] * wint[None]).sum(axis=(1, 2)) / 2
    external = ext[np.arange(s)[None, :], perms].sum(axis=1)
    return perms[int(np.argmin(internal + external))]


def _small_domains(level, grid, geo, node_of_row, positions, place, centre_of, in_dom):
    """The levels left and the leaf sweeps of :func:`map_graph_to_nodes` when every domain
    of ``level`` is small, by :func:`rankmap.kernels.bisection.bisect_small_domains` (the
    same steps in the same order)."""
    indptr, indices, data, dims, strides, wrap, local_of = grid
    sizes = [len(v) for v, _r in level]
    # every permutation of each leaf size (leaves hold 2 to LEAF_DOMAIN vertices)
    tables = [_leaf_tables(s)[2].reshape(-1) if s >= 2 else np.zeros(0, dtype=np.int64)
              for s in range(LEAF_DOMAIN + 1)]
    bisect_small_domains(np.concatenate([v for v, _r in level]).astype(np.int64),
                         np.concatenate([r for _v, r in level]).astype(np.int64),
                         np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
                         np.ascontiguousarray(geo, dtype=np.float64), node_of_row,
                         positions, indptr, indices, data, local_of, place, centre_of, in_dom,
                         np.concatenate(tables).astype(np.int64),
                         np.concatenate([[0], np.cumsum([len(t) for t in tables])]
                                        ).astype(np.int64),
                         LEAF_DOMAIN, SWAP_PASSES, MAX_LEVEL_DOMAINS, LEAF_SWEEPS,
                         MAX_LEAF_PLACEMENTS, dims, strides, wrap)


def map_graph_to_nodes(q: sp.csr_matrix, positions: np.ndarray, machine, allocation,
                       seed: int = 0) -> np.ndarray:
    """Allocation position of every vertex of ``q`` by network-guided dual recursive bisection.

    Parameters
    ----------
    q : scipy.sparse.csr_matrix
        Symmetric graph (bytes between vertices), one vertex per node to fill.
    positions : numpy.ndarray
        Allocation positions (indices into ``allocation.nodes``) to use, as many as vertices.
    machine : rankmap.machines.Machine
        The machine (``geometry`` and ``hop_distance`` are used).
    allocation : rankmap.allocation.Allocation
        The allocation the positions refer to.
    seed : int
        KaHIP's seed.

    Returns
    -------
    numpy.ndarray
        int64 allocation position of every vertex (a permutation of ``positions``).
    """
    k = q.shape[0]
    positions = np.asarray(positions, dtype=np.int64)
    nodes = allocation.nodes
    geo = machine.geometry(nodes[positions]).astype(np.float64)
    place = np.full(k, -1, dtype=np.int64)
    # centre node (machine id) of each vertex's current domain
    centre_of = np.full(k, nodes[positions[_centre_nodes(geo, [np.arange(k)])[0]]],
                        dtype=np.int64)
    in_dom = np.zeros(k, dtype=bool)
    # on a torus, mesh or k-ary n-tree with exact sums, cuts and leaves run in compiled calls
    # (same result)
    grid = None
    geometry = hop_geometry(machine)
    if geometry is not None and whole_sums_exact(q.data, machine):
        grid = (q.indptr.astype(np.int64), q.indices.astype(np.int64),
                q.data.astype(np.float64), *geometry, np.zeros(k, dtype=np.int64))
    level = [(np.arange(k, dtype=np.int64), np.arange(k, dtype=np.int64))]   # (verts, rows)
    leaves = []
    while level:
        if (grid is not None and not leaves and geo.shape[1] < 8
                and all(len(rows) <= SMALL_DOMAIN for _v, rows in level)):
            # every domain left is small (no KaHIP cut): the rest in one compiled call
            _small_domains(level, grid, geo, nodes[positions].astype(np.int64), positions,
                           place, centre_of, in_dom)
            return place
        if len(level) > MAX_LEVEL_DOMAINS:
            # work bound (huge graphs only): the domains of this level keep their order
            for verts, rows in level:
                place[verts] = positions[rows]
            break
        nxt = []
        for verts, rows in level:
            if len(rows) == 1:
                place[verts] = positions[rows]
                continue
            if len(rows) <= LEAF_DOMAIN:
                leaves.append((verts, rows))
                continue
            h0, h1 = _split_nodes(geo, rows)
            c0, c1 = (nodes[positions[c]] for c in _centre_nodes(geo, [h0, h1]))
            in_dom[verts] = True
            if grid is None:
                side0 = _bisect(q, verts, len(h0), in_dom, centre_of, int(c0), int(c1),
                                machine, seed)
            else:
                side0 = _bisect_grid(grid, verts, len(h0), in_dom, centre_of, int(c0),
                                     int(c1), seed)
            in_dom[verts] = False
            centre_of[verts[side0]] = c0
            centre_of[verts[~side0]] = c1
            nxt.append((verts[side0], h0))
            nxt.append((verts[~side0], h1))
        level = nxt
    # small domains: every permutation, twice (the second sweep sees every other leaf placed)
    sweeps = min(LEAF_SWEEPS, MAX_LEAF_PLACEMENTS // max(len(leaves), 1))
    if sweeps == 0:   # work bound (huge graphs only): the leaves keep their order
        for verts, rows in leaves:
            place[verts] = positions[rows]
    for _sweep in range(sweeps):
        for verts, rows in leaves:
            in_dom[verts] = True
            if grid is None:
                order = _place_leaf(q, verts, nodes[positions[rows]], in_dom, centre_of,
                                    machine)
            else:
                indptr, indices, data, dims, strides, wrap, _local = grid
                order = place_leaf_grid(indptr, indices, data, verts,
                                        nodes[positions[rows]].astype(np.int64), in_dom,
                                        centre_of, _leaf_tables(len(verts))[2], dims, strides,
                                        wrap)
            in_dom[verts] = False
            centre_of[verts] = nodes[positions[rows[order]]]
            place[verts] = positions[rows[order]]
    return place
