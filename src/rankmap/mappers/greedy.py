"""``greedy``: the nearest-unused-processor walk of seed 003 (sections 3.2-3.3), generalised.

The process grid is walked dimension by dimension (the innermost dimension is an even-sized
one when there is one, as the paper advises; otherwise the grid's last dimension). Every step
takes the unused allocated core nearest to a reference core: the previous core along the
innermost dimension, or, when an outer index advances, the first core of the previous
sub-block (so successive rows start next to each other). "Nearest" is the machine's hop
distance between the nodes; ties go to the lowest logical distance (difference of allocation
core numbers), then to the lowest core number. The walk starts on allocation core 0 when the
number of ranks is even, on the highest allocation core when it is odd (seed 003). Small
problems also try a few other start cores, and the allocation's own order is returned when
it beats every walk on average hops (see :func:`greedy`).

Only ``machine.hop_distance`` and the machine's link list are used, so the walk works on tori,
meshes, scattered allocations and any other machine kind. Distance-1 candidates are found
among the current node's link neighbours; only when none is free is every free node scanned.
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from .geometry import average_hops, needs_grid, neighbour_csr

__all__ = ["walk_dimension_order", "greedy_walk", "SMALL_WALK", "EXTRA_STARTS", "greedy"]


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

    def __init__(self, machine, allocation):
        self.machine = machine
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

    def nearest(self, core: int) -> int:
        """The free core nearest to ``core`` (hops, then logical distance, then id)."""
        k = core // self.cpn
        if self._has_free(k):
            lo, hi = self.lo[k], self.hi[k]
            return int(hi if hi < core else lo) if not (lo <= core <= hi) else int(core)
        nb = self.nbrs[self.indptr[k]:self.indptr[k + 1]]
        nb = nb[self.lo[nb] <= self.hi[nb]]
        if len(nb):
            d = self.machine.hop_distance(np.full(len(nb), self.nodes[k]), self.nodes[nb])
            if d.min() <= 1:
                return self._pick(nb[d == d.min()], core)
        # full scan over the nodes that still have free cores
        if self.used_nodes * 4 > len(self.free_nodes):
            f = self.free_nodes
            self.free_nodes = f[self.lo[f] <= self.hi[f]]
            self.used_nodes = 0
        f = self.free_nodes
        f = f[self.lo[f] <= self.hi[f]]
        d = self.machine.hop_distance(np.full(len(f), self.nodes[k]), self.nodes[f])
        return self._pick(f[d == d.min()], core)


def greedy_walk(grid: tuple[int, ...], machine, allocation, start: int | None = None) -> np.ndarray:
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
    walker = _CoreWalker(machine, allocation)
    if start is None:
        start = 0 if n % 2 == 0 else allocation.n_cores - 1
    elif start % allocation.cores_per_node:
        raise RankmapError(f"greedy walk start {start} is not the first core of a node")
    seq = np.empty(n, dtype=np.int64)
    seq[0] = start
    walker.take(start)
    inner = sizes[0]
    for p in range(1, n):
        if p % inner:
            ref = seq[p - 1]
        else:
            # lowest level whose digit advanced: start of the previous sub-block
            level = 1
            while (p // strides[level]) % sizes[level] == 0:
                level += 1
            ref = seq[p - strides[level]]
        c = walker.nearest(int(ref))
        seq[p] = c
        walker.take(c)
    # walk position -> grid coordinates (dims order) -> MPI rank
    pos = np.arange(n)
    coords = np.empty((n, len(grid)), dtype=np.int64)
    for level, d in enumerate(dims):
        coords[:, d] = (pos // strides[level]) % sizes[level]
    ranks = np.ravel_multi_index(tuple(coords.T), grid)
    core_of_rank = np.empty(n, dtype=np.int64)
    core_of_rank[ranks] = seq
    return core_of_rank


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
    best = greedy_walk(grid, machine, allocation)
    best_h = average_hops(best, pattern, machine, allocation)
    if pattern.n_ranks <= SMALL_WALK:
        starts = np.linspace(0, allocation.n_nodes - 1, EXTRA_STARTS + 2).astype(np.int64)[1:-1]
        for st in np.unique(starts * allocation.cores_per_node):   # first core of a node
            cand = greedy_walk(grid, machine, allocation, int(st))
            h = average_hops(cand, pattern, machine, allocation)
            if h < best_h - 1e-12:
                best, best_h = cand, h
    default = np.arange(pattern.n_ranks, dtype=np.int64)
    if average_hops(default, pattern, machine, allocation) < best_h - 1e-12:
        return default
    return best
