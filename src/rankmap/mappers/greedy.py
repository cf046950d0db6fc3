"""``greedy``: the nearest-unused-processor walk of seed 003 (sections 3.2-3.3), generalised.

The process grid is walked dimension by dimension (the innermost dimension is an even-sized
one when there is one, as the paper advises; otherwise the grid's last dimension). Every step
takes the unused allocated core nearest to a reference core: the previous core along the
innermost dimension, or, when an outer index advances, the first core of the previous
sub-block (so successive rows start next to each other). "Nearest" is the machine's hop
distance between the nodes; in seed 003 ties go to the lowest logical distance (difference of
allocation core numbers), then to the lowest core number. ``greedy`` uses a compact tie rule
instead (:func:`greedy_walk` with ``partners``): when the reference node is full, every free
node up to :data:`TIE_WINDOW` hops farther than the nearest one counts as tied, and the tie
goes to the node with the fewest hop-bytes to the rank's partners already placed (the
pattern's bytes), then the fewest hops, then seed 003's rules. On 2-D grids folded into 3-D
tori this keeps the rows of the grid close to the rows before them instead of following the
allocation's order (``stencil:80x50:box`` on ``torus:16x16x16``: 12% fewer hop-bytes, busiest
link 32 -> 18 MiB). The walk starts on allocation core 0 when the
number of ranks is even, on the highest allocation core when it is odd (seed 003). Small
problems also try a few other start cores, and the allocation's own order is returned when
it beats every walk on average hops (see :func:`greedy`).

Only ``machine.hop_distance`` and the machine's link list are used, so the walk works on tori,
meshes, scattered allocations and any other machine kind. Candidates are found among the
current node's link neighbours (seed 003's rule) or the nodes within 1 + ``TIE_WINDOW``
allocated links (compact rule); only when none is free is every free node scanned.
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from ..kernels.greedy import greedy_walk_grid
from .exact_grid import hop_geometry
from .geometry import average_hops, flows_all_phases, neighbour_csr

__all__ = ["walk_dimension_order", "partner_csr", "greedy_walk", "TIE_WINDOW", "SMALL_WALK",
           "EXTRA_STARTS", "greedy"]


def walk_dimension_order(grid: tuple[int, ...]) -> list[int]:
    """Grid dimensions from innermost to outermost, as the walk visits them.

    The last dimension is innermost, except that an even-sized dimension goes first when the
    innermost one would be odd (seed 003).

    Parameters
    ----------
    grid : tuple of int
        The process grid.

    Returns
    -------
    list of int
        Dimension indices, innermost first.
    """

    dims = list(range(len(grid)))[::-1]
    if grid[dims[0]] % 2 == 1:
        even = [d for d in dims if grid[d] % 2 == 0]
        if even:
            dims.remove(even[0])
            dims.insert(0, even[0])
    return dims


class _CoreWalker:
    """State of the walk: which cores are free; finds the nearest free core to a core."""

    def __init__(self, machine, allocation, balls: dict | None = None):
        self.machine = machine
        self.balls = {} if balls is None else balls                # position -> _ball
        self.nodes = allocation.nodes
        self.cpn = allocation.cores_per_node
        n = allocation.n_nodes
        self.lo = np.arange(n, dtype=np.int64) * self.cpn          # lowest free core
        self.hi = self.lo + self.cpn - 1                           # highest free core
        self.indptr, self.nbrs = neighbour_csr(machine, allocation)
        self.free_nodes = np.arange(n, dtype=np.int64)             # compacted lazily
        self.used_nodes = 0

    def _has_free(self, k):
        return self.lo[k] <= self.hi[k]

    def take(self, core: int) -> None:
        """Mark ``core`` used (it is always the lowest or highest free core of its node)."""
        k = core // self.cpn
        if core == self.lo[k]:
            self.lo[k] += 1
        else:
            self.hi[k] -= 1
        if not self._has_free(k):
            self.used_nodes += 1

    def _pick(self, cand: np.ndarray, core: int) -> int:
        """Among candidate nodes, the free core of lowest logical distance, then lowest id."""
        below = self.hi[cand] < core
        best = np.where(below, self.hi[cand], self.lo[cand])
        logical = np.abs(best - core)
        i = np.lexsort((best, logical))[0]
        return int(best[i])

    def _pick_compact(self, k: int, cand: np.ndarray, core: int, placed) -> int:
        """Among free candidate nodes, those within :data:`TIE_WINDOW` hops of the nearest
        to position ``k``; of them the fewest hop-bytes to the rank's placed partners
        (``placed``: their positions and bytes), then the fewest hops to ``k``, then the
        lowest logical distance and core."""
        pos, w = placed
        m = len(pos)
        d = self.machine.hop_distance(self.nodes[cand], np.full(len(cand), self.nodes[k]))
        near = d <= d.min() + TIE_WINDOW
        cand, d = cand[near], d[near]
        # hops to the partners of the near candidates only
        hops = self.machine.hop_distance(np.repeat(self.nodes[cand], m),
                                         np.tile(self.nodes[pos], len(cand)))
        hop_bytes = hops.reshape(len(cand), m) @ w
        best = np.where(self.hi[cand] < core, self.hi[cand], self.lo[cand])
        i = np.lexsort((best, np.abs(best - core), d, hop_bytes))[0]
        return int(best[i])

    def _ball(self, k: int, radius: int) -> np.ndarray:
        """Allocation positions within ``radius`` allocated links of position ``k`` (cached:
        the links do not change during the walk)."""
        ball = self.balls.get(k)
        if ball is None:
            ball = self.balls[k] = self._bfs(k, radius)
        return ball

    def _bfs(self, k: int, radius: int) -> np.ndarray:
        seen = np.zeros(len(self.lo), dtype=bool)
        seen[k] = True
        frontier = np.array([k], dtype=np.int64)
        for _ in range(radius):
            starts, ends = self.indptr[frontier], self.indptr[frontier + 1]
            counts = ends - starts
            idx = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
            nxt = np.unique(self.nbrs[idx])
            frontier = nxt[~seen[nxt]]
            seen[frontier] = True
        return np.flatnonzero(seen)

    def _free_nodes(self) -> np.ndarray:
        """Every position that still has a free core."""
        if self.used_nodes * 4 > len(self.free_nodes):
            f = self.free_nodes
            self.free_nodes = f[self.lo[f] <= self.hi[f]]
            self.used_nodes = 0
        f = self.free_nodes
        return f[self.lo[f] <= self.hi[f]]

    def nearest(self, core: int, placed=None) -> int:
        """The free core nearest to ``core``: hops, then logical distance, then id; with
        ``placed`` (the rank's partners already placed, positions and bytes, not empty),
        the compact rule of :meth:`_pick_compact`."""
        k = core // self.cpn
        if self._has_free(k):
            lo, hi = self.lo[k], self.hi[k]
            return int(hi if hi < core else lo) if not (lo <= core <= hi) else int(core)
        if placed is not None:
            ball = self._ball(k, 1 + TIE_WINDOW)
            f = ball[self.lo[ball] <= self.hi[ball]]
            if not len(f):
                f = self._free_nodes()
            return self._pick_compact(k, f, core, placed)
        nb = self.nbrs[self.indptr[k]:self.indptr[k + 1]]
        nb = nb[self.lo[nb] <= self.hi[nb]]
        if len(nb):
            d = self.machine.hop_distance(np.full(len(nb), self.nodes[k]), self.nodes[nb])
            if d.min() <= 1:
                return self._pick(nb[d == d.min()], core)
        # full scan over the nodes that still have free cores
        f = self._free_nodes()
        d = self.machine.hop_distance(np.full(len(f), self.nodes[k]), self.nodes[f])
        return self._pick(f[d == d.min()], core)


def partner_csr(pattern) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Communication partners of every rank with the bytes between them (both directions,
    every phase), as a CSR.

    Parameters
    ----------
    pattern : Pattern
        The pattern.

    Returns
    -------
    indptr : numpy.ndarray
        int64, shape (n_ranks + 1,).
    partners : numpy.ndarray
        int64 partner ranks of rank r: ``partners[indptr[r]:indptr[r + 1]]`` (no self).
    nbytes : numpy.ndarray
        float64 bytes exchanged with each partner, both directions summed.
    """
    import scipy.sparse as sp
    n = pattern.n_ranks
    src, dst, w = flows_all_phases(pattern)
    keep = src != dst
    g = sp.coo_matrix((np.asarray(w, dtype=np.float64)[keep], (src[keep], dst[keep])),
                      shape=(n, n)).tocsr()
    g = (g + g.T).tocsr()
    g.sum_duplicates()
    g.eliminate_zeros()
    return g.indptr.astype(np.int64), g.indices.astype(np.int64), g.data.astype(np.float64)


def greedy_walk(grid: tuple[int, ...], machine, allocation, start: int | None = None,
                partners=None, ball_cache: dict | None = None,
                compiled: bool | None = None) -> np.ndarray:
    """One greedy walk of the process grid (see the module docstring).

    Parameters
    ----------
    grid : tuple of int
        The process grid (ranks numbered row-major, as MPI does).
    machine : Machine
        The machine (its hop distance and links).
    allocation : Allocation
        The allocation.
    start : int, optional
        Allocation core the walk starts on (default: seed 003's rule, core 0 for an even
        rank count, the last core for an odd one).
    partners : tuple of numpy.ndarray, optional
        The pattern's :func:`partner_csr`: turns on the compact tie rule. When the
        reference core's node is full, every free node up to :data:`TIE_WINDOW` hops
        farther than the nearest one counts as tied, and the tie goes to the fewest
        hop-bytes to the rank's partners already placed, then the fewest hops, then seed
        003's rules. Without it, seed 003's walk: the nearest free node, ties by logical
        distance, then lowest core.
    ball_cache : dict, optional
        Shared by walks on the same machine and allocation (the compact rule's
        neighbourhoods of each node, kept between walks).
    compiled : bool, optional
        Walk in one compiled call (:func:`rankmap.kernels.greedy.greedy_walk_grid`: the same
        cores) or in Python (False). Default: compiled on a torus, mesh or k-ary n-tree.

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    n = int(np.prod(grid))
    dims = walk_dimension_order(grid)
    sizes = [grid[d] for d in dims]
    # position p of the walk -> mixed-radix digits, innermost first
    strides = np.cumprod([1] + sizes[:-1])
    walker = _CoreWalker(machine, allocation, ball_cache)
    if start is None:
        start = 0 if n % 2 == 0 else allocation.n_cores - 1
    elif start % allocation.cores_per_node:
        raise RankmapError(f"greedy walk start {start} is not the first core of a node")
    # walk position -> grid coordinates (dims order) -> MPI rank
    pos = np.arange(n)
    coords = np.empty((n, len(grid)), dtype=np.int64)
    for level, d in enumerate(dims):
        coords[:, d] = (pos // strides[level]) % sizes[level]
    ranks = np.ravel_multi_index(tuple(coords.T), grid)
    ref_pos = _reference_positions(n, sizes, strides)
    if compiled is None:
        compiled = hop_geometry(machine) is not None
    if compiled:
        # the same walk, compiled (kernels.greedy); a test checks both give the same cores
        core_of_rank = np.empty(n, dtype=np.int64)
        core_of_rank[ranks] = _grid_walk(ranks, ref_pos, start, machine, allocation, walker,
                                         partners)
        return core_of_rank
    seq = np.empty(n, dtype=np.int64)
    seq[0] = start
    walker.take(start)
    node_of_rank = np.full(n, -1, dtype=np.int64)
    node_of_rank[ranks[0]] = start // allocation.cores_per_node
    placed = None
    for p in range(1, n):
        ref = seq[ref_pos[p]]
        if partners is not None:
            indptr, nbr, w = partners
            r = ranks[p]
            js, ws = nbr[indptr[r]:indptr[r + 1]], w[indptr[r]:indptr[r + 1]]
            at = node_of_rank[js]
            placed = (at[at >= 0], ws[at >= 0]) if (at >= 0).any() else None
        c = walker.nearest(int(ref), placed)
        seq[p] = c
        walker.take(c)
        node_of_rank[ranks[p]] = c // allocation.cores_per_node
    core_of_rank = np.empty(n, dtype=np.int64)
    core_of_rank[ranks] = seq
    return core_of_rank


def _reference_positions(n: int, sizes, strides) -> np.ndarray:
    """Walk position whose core is the reference of each position (entry 0 unused): the
    previous position along the innermost dimension, or, where an outer digit advances,
    the start of the previous sub-block at the lowest level whose digit advanced."""
    p = np.arange(n, dtype=np.int64)
    ref = p - 1
    pending = (p % sizes[0] == 0) & (p > 0)
    for level in range(1, len(sizes)):
        here = pending & ((p // strides[level]) % sizes[level] != 0)
        ref[here] = p[here] - strides[level]
        pending &= ~here
    ref[0] = 0
    return ref


def _grid_walk(ranks, ref_pos, start, machine, allocation, walker, partners):
    """:func:`greedy_walk`'s core of every walk position on a torus, mesh or k-ary n-tree
    (:func:`rankmap.kernels.greedy.greedy_walk_grid`)."""
    geometry = hop_geometry(machine)
    if geometry is None:
        raise ValueError(f"the compiled greedy walk needs a torus, mesh or k-ary n-tree, "
                         f"not a {machine.kind}")
    if partners is None:
        p_ptr = np.zeros(allocation.n_cores + 1, dtype=np.int64)
        p_nbr, p_w = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    else:
        p_ptr, p_nbr, p_w = (np.ascontiguousarray(x) for x in partners)
    return greedy_walk_grid(np.ascontiguousarray(ranks, dtype=np.int64), ref_pos, int(start),
                            int(allocation.cores_per_node),
                            np.ascontiguousarray(allocation.nodes, dtype=np.int64), *geometry,
                            walker.indptr.astype(np.int64), walker.nbrs.astype(np.int64),
                            p_ptr.astype(np.int64), p_nbr.astype(np.int64),
                            p_w.astype(np.float64), partners is not None, TIE_WINDOW)


#: nodes up to this many hops farther from the reference than the nearest free one count as
#: tied under the compact rule (:func:`greedy_walk` with ``partners``)
TIE_WINDOW = 2
#: up to this many ranks, the walk is also tried from EXTRA_STARTS other start cores
SMALL_WALK = 4096
EXTRA_STARTS = 4


def greedy(pattern, machine, allocation, seed):
    """Greedy nearest-unused walk of the pattern's grid (see module docstring).

    Up to :data:`SMALL_WALK` ranks the walk is also started from a few other cores (evenly
    spread over the allocation) and the walk with the lowest average hops is kept; the
    allocation's own order is kept instead when it has fewer average hops than every walk,
    so greedy is never worse than the default on that measure. Deterministic; ``seed`` unused.

    Parameters
    ----------
    pattern : Pattern
        The pattern whose ranks are placed.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocated nodes; ranks go on their cores only.
    seed : int
        Unused (deterministic).

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    grid = tuple(pattern.grid)
    partners, balls = partner_csr(pattern), {}
    best = greedy_walk(grid, machine, allocation, partners=partners, ball_cache=balls)
    best_h = average_hops(best, pattern, machine, allocation)
    if pattern.n_ranks <= SMALL_WALK:
        starts = np.linspace(0, allocation.n_nodes - 1, EXTRA_STARTS + 2).astype(np.int64)[1:-1]
        for st in np.unique(starts * allocation.cores_per_node):   # first core of a node
            cand = greedy_walk(grid, machine, allocation, int(st), partners, balls)
            h = average_hops(cand, pattern, machine, allocation)
            if h < best_h - 1e-12:
                best, best_h = cand, h
    default = np.arange(pattern.n_ranks, dtype=np.int64)
    if average_hops(default, pattern, machine, allocation) < best_h - 1e-12:
        return default
    return best
