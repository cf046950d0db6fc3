"""``cubes`` and ``cubes-dim1``: compact blocks for the all-to-all groups of an FFT (seed 004).

For an ``fft2d:P0xP1`` pattern, every all-to-all group of one phase (``cubes``: the P1 groups
of P0 ranks of phase ``dim0``, seed 004's "rows"; ``cubes-dim1``: the P0 groups of P1 ranks of
phase ``dim1``) is placed on its own compact block of the allocated box: all cores of
``P/cpn`` nodes shaped as close to a cube as the box allows (the 8-cube 2x2x2 and 64-cube
4x4x4 of seed 004 on an 8x8x8 torus). Group g takes block g (blocks numbered X fastest) and
every group sees the same basic image displaced, member k on the k-th core of its block
(cores of a node first, then X, Y, Z). The other phase's groups then take one core in every
block, at the same position: the complementary, evenly spread pattern.

Needs an allocation that fills a box of a machine with Cartesian coordinates.
"""

from __future__ import annotations

import itertools

import numpy as np

from .geometry import allocation_box, box_core_array

__all__ = ["block_shape", "cube_cores", "cubes_applies", "cubes", "cubes_dim1"]


def block_shape(n_nodes: int, box: np.ndarray) -> tuple[int, ...] | None:
    """The most cube-like block of ``n_nodes`` nodes whose sides divide ``box``'s sides
    (smallest largest side, then smallest total side length; ties: larger sides first
    along X).

    Parameters
    ----------
    n_nodes : int
        Nodes the block holds.
    box : numpy.ndarray
        int sides of the allocated box (nodes per dimension).

    Returns
    -------
    tuple of int or None
        The block's sides (nodes), or None when no such block exists.
    """

    divs = [[d for d in range(1, int(s) + 1) if s % d == 0] for s in box]
    best, best_key = None, None
    for shape in itertools.product(*divs):
        if int(np.prod(shape)) != n_nodes:
            continue
        key = (max(shape), sum(shape), tuple(-s for s in shape))
        if best_key is None or key < best_key:
            best, best_key = shape, key
    return best


def _group_size(pattern, dim: int) -> int:
    return int(pattern.grid[dim])


def _plan(pattern, machine, allocation, dim: int):
    """(core array of the box, block shape) or a reason string."""
    if pattern.kind != "fft2d" or pattern.grid is None or len(pattern.grid) != 2:
        return f"cubes places the groups of an fft2d pattern, not {pattern.kind} ({pattern.spec!r})"
    box = allocation_box(machine, allocation)
    if isinstance(box, str):
        return box
    origin, shape = box
    g = _group_size(pattern, dim)
    cpn = allocation.cores_per_node
    if pattern.n_ranks != allocation.n_cores:
        return (f"cubes needs one rank per allocated core ({pattern.n_ranks} ranks, "
                f"{allocation.n_cores} cores)")
    if g % cpn:
        return f"group size {g} is not a multiple of {cpn} cores per node"
    bshape = block_shape(g // cpn, shape)
    if bshape is None:
        return (f"no block of {g // cpn} nodes tiles the allocated box "
                f"{'x'.join(map(str, shape))}")
    return box_core_array(machine, allocation, origin, shape), bshape


def cube_cores(pattern, machine, allocation, dim: int) -> np.ndarray:
    """Core of every rank with the all-to-all groups of phase ``dim`` on compact blocks.

    Parameters
    ----------
    pattern : Pattern
        An fft2d pattern.
    machine : Machine
        A grid machine.
    allocation : Allocation
        A box of nodes.
    dim : int
        0 for the groups of phase ``dim0``, 1 for ``dim1``.

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    plan = _plan(pattern, machine, allocation, dim)
    cores, bshape = plan
    shape = np.array(cores.shape[:-1])
    nblk = shape // np.array(bshape)
    cpn = cores.shape[-1]
    # position inside a block: core fastest, then X, Y, ...; blocks numbered X fastest
    within = [cpn] + list(bshape)
    nd = len(bshape)
    g_total = int(np.prod(nblk))
    k = np.arange(cpn * int(np.prod(bshape)))
    blk = np.arange(g_total)
    kc = np.stack(np.unravel_index(k, within[::-1], order="C")[::-1], axis=-1)  # t, x, y..
    bc = np.stack(np.unravel_index(blk, tuple(nblk[::-1]), order="C")[::-1], axis=-1)
    # coordinates of member k of group b
    xyz = bc[:, None, :] * np.array(bshape) + kc[None, :, 1:]
    t = np.broadcast_to(kc[None, :, 0], xyz.shape[:2])
    idx = tuple(xyz[..., d] for d in range(nd)) + (t,)
    core_gk = cores[idx]                                   # (group, member)
    p0, p1 = pattern.grid
    ranks = np.arange(p0 * p1).reshape(p0, p1)
    groups = ranks.T if dim == 0 else ranks               # (group, member) rank numbers
    core_of_rank = np.empty(pattern.n_ranks, dtype=np.int64)
    core_of_rank[groups.reshape(-1)] = core_gk.reshape(-1)
    return core_of_rank


def cubes_applies(dim):
    """The applicability test of ``cubes`` (``dim`` 0) or ``cubes-dim1`` (``dim`` 1).

    Parameters
    ----------
    dim : int
        The fft2d phase whose groups are placed on blocks.

    Returns
    -------
    callable
        ``applies(pattern, machine, allocation) -> str or None``: why the mapper cannot
        place the pattern (not an fft2d, no box, no block shape), or None.
    """

    def applies(pattern, machine, allocation):
        plan = _plan(pattern, machine, allocation, dim)
        return plan if isinstance(plan, str) else None
    return applies


def cubes(pattern, machine, allocation, seed):
    """Groups of phase dim0 on compact blocks (see module docstring); ``seed`` unused.

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
    return cube_cores(pattern, machine, allocation, 0)


def cubes_dim1(pattern, machine, allocation, seed):
    """Groups of phase dim1 on compact blocks (see module docstring); ``seed`` unused.

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
    return cube_cores(pattern, machine, allocation, 1)
