"""``hilbert`` and ``morton``: node blocks of the process grid laid along a space-filling curve.

For grids whose shape does not match the machine (a 2-D grid on a 3-D torus, odd sizes) a
space-filling curve gives an embedding of low dilation without any fitting of shapes:

1. the process grid is cut into **node blocks** of ``cores_per_node`` ranks (the most cubic
   block shape dividing the grid; single ranks when none does);
2. the grid of blocks is ordered along a Hilbert (or Morton, Z-order) curve of its own
   dimension, on the enclosing power-of-two cube (cells outside the grid are skipped);
3. the allocated nodes are ordered along the same kind of curve of the machine's coordinates
   (``machine.geometry``; on a scattered allocation only the allocated nodes count, so the
   curve runs through the allocation);
4. the k-th block goes to the k-th node; a block's ranks take the node's cores in row-major
   order.

Consecutive blocks on the grid's curve are grid neighbours and land on consecutive nodes of the
machine's curve, which are link neighbours on a whole torus (Hilbert; Morton jumps at
power-of-two boundaries but keeps aligned sub-cubes together). Which grid axis the curve
starts along changes the result, so every permutation of the grid axes (up to 3-D; identity
and reverse above) is tried and the one with the fewest hop-bytes over the pattern's flows is
kept (ties: the first tried). Everything is vectorised and deterministic; ``seed`` is unused.

The curve indices follow J. Skilling, "Programming the Hilbert curve", AIP Conf. Proc. 707
(2004): coordinates are transformed into the "transposed" Hilbert index by Gray-code
operations on their bits, then the bits are interleaved (Morton is the interleave alone).
"""

from __future__ import annotations

import itertools

import numpy as np


__all__ = ["hilbert", "morton", "hilbert_index", "morton_index", "curve_order", "node_block",
           "curve_cores"]

#: curve kinds and their index functions (filled below)
_KINDS: dict = {}


def _bits_for(coords: np.ndarray) -> int:
    """Bits per axis needed for non-negative integer coordinates ``coords``."""
    top = int(coords.max()) if coords.size else 0
    return max(1, top.bit_length())


def _interleave(axes: list[np.ndarray], bits: int) -> np.ndarray:
    """Index whose bits are, from the most significant: bit ``bits-1`` of axis 0, of axis 1,
    ..., then bit ``bits-2`` of every axis, and so on."""
    n = len(axes)
    out = np.zeros(len(axes[0]), dtype=np.int64)
    for j in range(bits - 1, -1, -1):
        for i in range(n):
            out = (out << 1) | ((axes[i] >> j) & 1)
    return out


def _check(coords) -> tuple[np.ndarray, int]:
    c = np.asarray(coords, dtype=np.int64)
    if c.ndim != 2:
        raise ValueError("coords must be a (points, dimensions) array")
    if c.size and c.min() < 0:
        raise ValueError("curve coordinates must be non-negative")
    return c, _bits_for(c)


def morton_index(coords, bits: int | None = None) -> np.ndarray:
    """Morton (Z-order) index of every row of ``coords``.

    Parameters
    ----------
    coords : array_like of int, shape (n, d)
        Non-negative integer coordinates.
    bits : int, optional
        Bits per axis (default: enough for the largest coordinate); ``bits * d <= 63``.

    Returns
    -------
    numpy.ndarray
        int64 index of every point: the axes' bits interleaved, axis 0 most significant.
    """
    c, need = _check(coords)
    bits = need if bits is None else int(bits)
    if bits * max(c.shape[1], 1) > 63:
        raise ValueError(f"{c.shape[1]}-D curve with {bits} bits per axis exceeds 63 bits")
    return _interleave([c[:, i] for i in range(c.shape[1])], bits)


def hilbert_index(coords, bits: int | None = None) -> np.ndarray:
    """Hilbert index of every row of ``coords`` on the cube of side ``2**bits``.

    Parameters
    ----------
    coords : array_like of int, shape (n, d)
        Non-negative integer coordinates below ``2**bits``.
    bits : int, optional
        Bits per axis (default: enough for the largest coordinate); ``bits * d <= 63``.

    Returns
    -------
    numpy.ndarray
        int64 position of every point along the d-dimensional Hilbert curve: a bijection of
        the cube onto ``[0, 2**(bits*d))`` in which consecutive positions are unit steps.
    """
    c, need = _check(coords)
    bits = need if bits is None else int(bits)
    n = c.shape[1]
    if bits * max(n, 1) > 63:
        raise ValueError(f"{n}-D curve with {bits} bits per axis exceeds 63 bits")
    x = [c[:, i].copy() for i in range(n)]
    # Skilling's AxestoTranspose, every point at once
    q = 1 << (bits - 1)
    while q > 1:
        p = q - 1
        for i in range(n):
            has = (x[i] & q) != 0
            if i == 0:
                x[0] = np.where(has, x[0] ^ p, x[0])
                continue
            t = np.where(has, 0, (x[0] ^ x[i]) & p)
            x[0] = np.where(has, x[0] ^ p, x[0] ^ t)
            x[i] = x[i] ^ t
        q >>= 1
    for i in range(1, n):
        x[i] = x[i] ^ x[i - 1]
    t = np.zeros_like(x[0]) if n else np.zeros(0, dtype=np.int64)
    q = 1 << (bits - 1)
    while q > 1:
        t = np.where((x[n - 1] & q) != 0, t ^ (q - 1), t)
        q >>= 1
    x = [xi ^ t for xi in x]
    return _interleave(x, bits)


_KINDS.update(hilbert=hilbert_index, morton=morton_index)


def curve_order(points, kind: str = "hilbert") -> np.ndarray:
    """Permutation of the rows of ``points`` along a space-filling curve.

    Parameters
    ----------
    points : array_like, shape (n, d)
        Coordinates (any numbers; each axis is replaced by the rank of its distinct values,
        so only their order matters).
    kind : {'hilbert', 'morton'}
        The curve.

    Returns
    -------
    numpy.ndarray
        int64 row indices in curve order (ties, e.g. equal points, by row index).
    """
    pts = np.asarray(points)
    if pts.ndim != 2:
        raise ValueError("points must be a (points, dimensions) array")
    dense = np.stack([np.unique(pts[:, i], return_inverse=True)[1].reshape(-1)
                      for i in range(pts.shape[1])], axis=1) if len(pts) else \
        np.zeros((0, pts.shape[1]), dtype=np.int64)
    key = _KINDS[kind](dense.astype(np.int64))
    return np.lexsort((np.arange(len(pts)), key)).astype(np.int64)


def node_block(grid: tuple[int, ...], cpn: int) -> tuple[int, ...]:
    """The most cubic block shape of ``cpn`` ranks dividing ``grid`` (all ones if none does).

    Parameters
    ----------
    grid : tuple of int
        Process grid.
    cpn : int
        Ranks per node block.

    Returns
    -------
    tuple of int
        Block sides (product ``cpn``, each dividing its grid side); ties go to the block
        longest along the last (fastest, MPI) grid dimensions.
    """
    best = None

    def rec(i, left, acc):
        nonlocal best
        if i == len(grid):
            if left == 1:
                key = (max(acc) / min(acc), tuple(-b for b in reversed(acc)))
                if best is None or key < best[0]:
                    best = (key, tuple(acc))
            return
        for b in range(1, left + 1):
            if left % b == 0 and grid[i] % b == 0:
                rec(i + 1, left // b, acc + [b])

    rec(0, int(cpn), [])
    return best[1] if best is not None else (1,) * len(grid)


def _hop_bytes(core_of_rank, pattern, machine, allocation) -> float:
    node = allocation.node_of_core(core_of_rank)
    total = 0.0
    for ph in pattern.phases:
        if len(ph.src):
            total += float((machine.hop_distance(node[ph.src], node[ph.dst]) * ph.bytes).sum())
    return total


def _axis_orders(d: int) -> list[tuple[int, ...]]:
    if d <= 3:
        return list(itertools.permutations(range(d)))
    return [tuple(range(d)), tuple(range(d - 1, -1, -1))]


def curve_cores(pattern, machine, allocation, kind: str = "hilbert") -> np.ndarray:
    """Core of every rank with node blocks along a space-filling curve (module docstring).

    Parameters
    ----------
    pattern : rankmap.patterns.Pattern
        A pattern with a process grid.
    machine : rankmap.machines.Machine
        Any machine with ``geometry``.
    allocation : rankmap.allocation.Allocation
        The allocated nodes.
    kind : {'hilbert', 'morton'}
        The curve.

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    grid = tuple(int(g) for g in pattern.grid)
    n = pattern.n_ranks
    cpn = allocation.cores_per_node
    block = node_block(grid, cpn)
    per_block = int(np.prod(block))
    coords = pattern.grid_coords().astype(np.int64)
    bc = coords // np.asarray(block)
    bgrid = tuple(g // b for g, b in zip(grid, block))
    # slot of a rank inside its block: row-major over the block
    slot = np.ravel_multi_index(tuple((coords % np.asarray(block)).T), block).astype(np.int64)
    block_id = np.ravel_multi_index(tuple(bc.T), bgrid).astype(np.int64)
    n_blocks = int(np.prod(bgrid))
    cells = np.stack(np.unravel_index(np.arange(n_blocks), bgrid), axis=1).astype(np.int64)
    node_order = curve_order(machine.geometry(allocation.nodes), kind)
    best = None
    for axes in _axis_orders(len(grid)):
        order = curve_order(cells[:, list(axes)], kind)      # blocks along the curve
        rank_of_block = np.empty(n_blocks, dtype=np.int64)
        rank_of_block[order] = np.arange(n_blocks)           # position of a block on it
        k = rank_of_block[block_id] * per_block + slot       # rank's place in curve order
        cores = node_order[k // cpn] * cpn + k % cpn
        cost = _hop_bytes(cores, pattern, machine, allocation)
        if best is None or cost < best[0]:
            best = (cost, cores)
    assert best is not None and len(best[1]) == n
    return best[1]


def hilbert(pattern, machine, allocation, seed):
    """Node blocks along Hilbert curves of the block grid and the allocation.

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
    return curve_cores(pattern, machine, allocation, "hilbert")


def morton(pattern, machine, allocation, seed):
    """Node blocks along Morton curves of the block grid and the allocation.

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
    return curve_cores(pattern, machine, allocation, "morton")
