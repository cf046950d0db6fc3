"""``fold``: a 2-D process grid folded into a 3-D box of nodes with low dilation.

When a 2-D grid does not match the torus (``stencil:64x64`` on ``torus:16x16x16``), its two
dimensions are laid along two machine dimensions and *folded* into the third: grid dimension
0 runs along machine dimension B for ``L_B`` steps, then turns back (boustrophedon) one layer
further along machine dimension C, and so on for ``f0`` layers; grid dimension 1 does the same
along machine dimension A with ``f1`` layers. Layer ``(z0, z1)`` sits at ``C = z0 + f0 * z1``
(or ``z1 + f1 * z0``). Neighbours along grid dimension 0 are always one hop apart (at a turn
the coordinate along B repeats and C moves by one); along grid dimension 1 they are one hop
apart except at turns, where C moves by ``f0``. Every assignment of the machine dimensions
and both layer orders is tried; the one with the lowest hop count summed over grid edges
(the periodic wrap edges included when the stencil is periodic) is kept.

With several cores per node the grid is first cut into node blocks of ``cores_per_node``
ranks (the most square block shape dividing the grid), and the grid of blocks is folded.
Grids whose blocks do not fit any fold (more blocks than a dimension's layers can hold) are
not applicable. Needs an allocation that fills a box.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import RankmapError
from .geometry import allocation_box

__all__ = ["fold", "fold_applies", "fold_cores", "fold_layout"]


def _node_block(grid: tuple[int, int], cpn: int) -> tuple[int, int] | None:
    """Most square (b0, b1) with b0 * b1 = cpn dividing the grid, or None."""
    best = None
    for b0 in range(1, cpn + 1):
        if cpn % b0:
            continue
        b1 = cpn // b0
        if grid[0] % b0 or grid[1] % b1:
            continue
        key = (abs(b0 - b1), -b1)
        if best is None or key < best[0]:
            best = (key, (b0, b1))
    return None if best is None else best[1]


def _snake(g: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """(coordinate along the run, layer) of positions g of a boustrophedon of runs ``length``."""
    layer = g // length
    r = g % length
    return np.where(layer % 2 == 0, r, length - 1 - r), layer


def _layout_coords(g0, g1, shape, a, b, c, f0, f1, order):
    """Box coordinates (rows) of node-grid points (g0, g1) under one fold layout."""
    xa, z1 = _snake(g1, shape[a])
    xb, z0 = _snake(g0, shape[b])
    coords = np.zeros((len(g0), len(shape)), dtype=np.int64)
    coords[:, a] = xa
    coords[:, b] = xb
    coords[:, c] = z0 + f0 * z1 if order == 0 else z1 + f1 * z0
    return coords


def _grid_edges(shape: tuple[int, int], periodic: bool):
    """Node-grid point pairs along both dimensions (wrap edges when periodic)."""
    g0, g1 = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), indexing="ij")
    g0, g1 = g0.ravel(), g1.ravel()
    out = []
    for dim in (0, 1):
        nxt0 = g0 + (dim == 0)
        nxt1 = g1 + (dim == 1)
        if periodic and shape[dim] > 2:
            nxt0, nxt1 = nxt0 % shape[0], nxt1 % shape[1]
        ok = (nxt0 < shape[0]) & (nxt1 < shape[1])
        out.append((g0[ok], g1[ok], nxt0[ok], nxt1[ok]))
    return [np.concatenate(x) for x in zip(*out)]


def _fold_plan(pattern, machine, allocation):
    """What :func:`fold_layout` searches, without costing any fold: the node block, the
    box's origin and shape, the node grid and every feasible ``(a, b, c, f0, f1)`` (box
    axes for the node grid's dimension 1, dimension 0 and the folds, and the fold counts);
    or why no fold applies."""
    if pattern.grid is None or len(pattern.grid) != 2:
        return "fold needs a 2-D process grid"
    box = allocation_box(machine, allocation)
    if isinstance(box, str):
        return box
    origin, shape = box
    if len(shape) != 3:
        return f"fold needs a 3-D box of nodes (this one has {len(shape)} dimensions)"
    cpn = allocation.cores_per_node
    block = _node_block(tuple(pattern.grid), cpn)
    if block is None:
        return (f"the grid {'x'.join(map(str, pattern.grid))} cannot be cut into node blocks "
                f"of {cpn} ranks")
    ngrid = (pattern.grid[0] // block[0], pattern.grid[1] // block[1])
    feasible = []
    for a, b, c in itertools.permutations(range(3)):
        f1 = -(-ngrid[1] // int(shape[a]))
        f0 = -(-ngrid[0] // int(shape[b]))
        if f0 * f1 <= shape[c]:
            feasible.append((a, b, c, f0, f1))
    if not feasible:
        return (f"the {ngrid[0]}x{ngrid[1]} node grid does not fold into the "
                f"{'x'.join(map(str, shape))} box")
    return block, origin, shape, ngrid, feasible


def fold_layout(pattern, machine, allocation):
    """The best fold of the pattern's grid into the allocated box, or a reason string.

    Parameters
    ----------
    pattern : Pattern
        The pattern (a 2-D grid).
    machine : Machine
        A 3-D grid machine.
    allocation : Allocation
        A box of nodes.

    Returns
    -------
    tuple or str
        ``(block, origin, coords)``: node block shape, box origin, and the box coordinates
        of every node-grid point (row-major, dimension 1 fastest); or why no fold applies.
    """
    plan = _fold_plan(pattern, machine, allocation)
    if isinstance(plan, str):
        return plan
    block, origin, shape, ngrid, feasible = plan
    periodic = bool(pattern.periodic and all(pattern.periodic))
    e0, e1, e2, e3 = _grid_edges(ngrid, periodic)
    g0, g1 = np.meshgrid(np.arange(ngrid[0]), np.arange(ngrid[1]), indexing="ij")
    g0, g1 = g0.ravel(), g1.ravel()
    best = None
    for a, b, c, f0, f1 in feasible:
        for order in (0, 1):
            coords = _layout_coords(g0, g1, shape, a, b, c, f0, f1, order)
            nodes = machine.node_ids(coords + origin)
            idx = lambda x, y: x * ngrid[1] + y           # noqa: E731
            cost = int(machine.hop_distance(nodes[idx(e0, e1)], nodes[idx(e2, e3)]).sum())
            key = (cost, a, b, c, order)
            if best is None or key < best[0]:
                best = (key, coords)
    return block, origin, best[1]


def fold_cores(pattern, machine, allocation) -> np.ndarray:
    """Core of every rank under the best fold (module docstring).

    Parameters
    ----------
    pattern : rankmap.patterns.Pattern
        A pattern with a 2-D grid.
    machine : rankmap.machines.Machine
        A machine with Cartesian coordinates.
    allocation : rankmap.allocation.Allocation
        An allocation filling a 3-D box.

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    lay = fold_layout(pattern, machine, allocation)
    if isinstance(lay, str):
        raise RankmapError(f"fold does not apply: {lay}")
    block, origin, coords = lay
    pos = allocation.position_of_node(machine.node_ids(coords + origin))
    ranks = np.arange(pattern.n_ranks)
    r0, r1 = np.unravel_index(ranks, pattern.grid)
    ngrid1 = pattern.grid[1] // block[1]
    point = (r0 // block[0]) * ngrid1 + r1 // block[1]
    slot = (r0 % block[0]) * block[1] + r1 % block[1]
    return pos[point] * allocation.cores_per_node + slot


def fold_applies(pattern, machine, allocation):
    """The applicability test of ``fold``.

    Parameters
    ----------
    pattern : Pattern
        The pattern.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocation.

    Returns
    -------
    str or None
        Why no fold applies (not a 2-D grid, no 3-D box, no node block), or None.
    """

    plan = _fold_plan(pattern, machine, allocation)       # no fold costed to know
    return plan if isinstance(plan, str) else None


def fold(pattern, machine, allocation, seed):
    """The best fold of the 2-D grid into the allocated 3-D box (module docstring).

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
    return fold_cores(pattern, machine, allocation)
