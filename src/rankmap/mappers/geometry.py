"""Geometric helpers shared by the placement algorithms of issue 3.

Everything here works on the machine's public interface only: ``machine.geometry(nodes)``
for coordinates, ``machine.hop_distance`` for distances, ``machine.coords``/``node_ids`` for
box-shaped allocations. No mapper reaches into torus internals, so a dragonfly or fat-tree
machine works as long as it implements those methods.
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from ..machines import GridMachine

__all__ = ["needs_grid", "flows_all_phases", "average_hops", "cores_of_node_order",
           "allocation_box", "box_core_array", "bisect_order", "check_seed", "neighbour_csr"]


def needs_grid(pattern, machine, allocation) -> str | None:
    """Applicability test of mappers that walk or split the process grid.

    Parameters
    ----------
    pattern : Pattern
        The pattern.
    machine : Machine
        Unused (the test is the same on every machine).
    allocation : Allocation
        Unused.

    Returns
    -------
    str or None
        None when the pattern has a Cartesian grid, else why not.
    """
    if pattern.grid is None:
        return f"pattern {pattern.spec!r} has no Cartesian process grid"
    return None


def flows_all_phases(pattern) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every flow of every phase, concatenated.

    Parameters
    ----------
    pattern : Pattern
        The pattern.

    Returns
    -------
    src, dst : numpy.ndarray
        int64 source and destination ranks.
    nbytes : numpy.ndarray
        float64 bytes of each flow.
    """
    if not pattern.phases:
        z = np.zeros(0, dtype=np.int64)
        return z, z, np.zeros(0)
    return (np.concatenate([p.src for p in pattern.phases]),
            np.concatenate([p.dst for p in pattern.phases]),
            np.concatenate([p.bytes for p in pattern.phases]))


def average_hops(core_of_rank: np.ndarray, pattern, machine, allocation) -> float:
    """Mean hop count over every flow of every phase of a placement.

    Parameters
    ----------
    core_of_rank : numpy.ndarray
        int64 allocation core of every rank.
    pattern : Pattern
        The pattern.
    machine : Machine
        The machine (its hop distance).
    allocation : Allocation
        The allocation the cores refer to.

    Returns
    -------
    float
        Mean links per flow (unweighted by bytes); 0 without flows.
    """
    src, dst, _ = flows_all_phases(pattern)
    if len(src) == 0:
        return 0.0
    node = allocation.node_of_core(core_of_rank)
    return float(machine.hop_distance(node[src], node[dst]).mean())


def cores_of_node_order(node_order: np.ndarray, allocation) -> np.ndarray:
    """Allocation cores listed node by node, cores of a node first.

    Parameters
    ----------
    node_order : numpy.ndarray
        Allocation positions (indices into ``allocation.nodes``) in the order wanted.
    allocation : Allocation
        The allocation.

    Returns
    -------
    numpy.ndarray
        int64 allocation cores, ``cores_per_node`` per listed node.
    """
    cpn = allocation.cores_per_node
    return (np.asarray(node_order, dtype=np.int64)[:, None] * cpn
            + np.arange(cpn, dtype=np.int64)).reshape(-1)


def allocation_box(machine, allocation) -> tuple[np.ndarray, np.ndarray] | str:
    """(origin, shape) of the box the allocated nodes fill exactly, or a reason string.

    Needs a grid machine; the box may not wrap around.

    Parameters
    ----------
    machine : Machine
        The machine.
    allocation : Allocation
        The allocated nodes.

    Returns
    -------
    tuple of numpy.ndarray, or str
        (origin, shape): int64 coordinates of the box's lowest corner and its sides in
        nodes; or why the nodes fill no box.
    """
    if not isinstance(machine, GridMachine):
        return f"the {machine.kind} machine has no Cartesian box of nodes"
    c = machine.coords(allocation.nodes)
    lo, hi = c.min(axis=0), c.max(axis=0)
    shape = hi - lo + 1
    if int(np.prod(shape)) != allocation.n_nodes:
        return (f"the {allocation.n_nodes} allocated nodes do not fill a box "
                f"(bounding box {'x'.join(map(str, shape))})")
    return lo.astype(np.int64), shape.astype(np.int64)


def box_core_array(machine, allocation, origin, shape) -> np.ndarray:
    """Allocation core index at every position of a box of nodes.

    Parameters
    ----------
    machine : Machine
        A grid machine.
    allocation : Allocation
        The allocation (it must hold every node of the box).
    origin : numpy.ndarray
        Coordinates of the box's lowest corner.
    shape : numpy.ndarray
        Sides of the box (nodes).

    Returns
    -------
    numpy.ndarray
        int64, shape ``(*shape, cores_per_node)``: the core at (x, y, ..., t).
    """
    grids = np.meshgrid(*[np.arange(s) for s in shape], indexing="ij")
    coords = np.stack([g.reshape(-1) for g in grids], axis=-1) + origin
    pos = allocation.position_of_node(machine.node_ids(coords))
    cpn = allocation.cores_per_node
    cores = pos[:, None] * cpn + np.arange(cpn)
    return cores.reshape(*[int(s) for s in shape], cpn)


def bisect_order(points: np.ndarray) -> np.ndarray:
    """Order of the rows of ``points`` given by recursive coordinate bisection.

    Each set is split at its median along the coordinate of largest extent, the lower half
    first, recursively, level by level (vectorised over all sets of a level).

    Parameters
    ----------
    points : numpy.ndarray
        Coordinates, one row per point.

    Returns
    -------
    numpy.ndarray
        int64 permutation of the row indices; consecutive positions are geometrically close.
    """
    n = len(points)
    order = np.arange(n, dtype=np.int64)
    if n <= 1:
        return order
    pts = np.asarray(points, dtype=np.float64)
    # segments: [starts[k], starts[k+1]) of ``order`` form one set
    bounds = np.array([0, n], dtype=np.int64)
    while True:
        sizes = np.diff(bounds)
        if (sizes <= 1).all():
            return order
        seg = np.repeat(np.arange(len(sizes)), sizes)
        p = pts[order]
        # sets are contiguous runs of ``order`` (no empty one): reduce each run
        mx = np.maximum.reduceat(p, bounds[:-1], axis=0)
        mn = np.minimum.reduceat(p, bounds[:-1], axis=0)
        axis = np.argmax(mx - mn, axis=1)
        key = p[np.arange(n), axis[seg]]
        # stable sort inside each segment along its axis, ties keep the previous order
        perm = np.lexsort((np.arange(n), key, seg))
        order = order[perm]
        half = bounds[:-1] + sizes // 2
        split = sizes > 1
        bounds = np.unique(np.concatenate([bounds, half[split]]))


def check_seed(seed) -> int:
    """Check a seed.

    Parameters
    ----------
    seed : int or str
        The seed given.

    Returns
    -------
    int
        The seed, a non-negative int.

    Raises
    ------
    RankmapError
        Not an integer, or negative.
    """

    try:
        s = int(seed)
    except (TypeError, ValueError):
        raise RankmapError(f"bad seed {seed!r}: expected an integer") from None
    if s < 0:
        raise RankmapError(f"bad seed {seed}: must be non-negative")
    return s


def neighbour_csr(machine, allocation) -> tuple[np.ndarray, np.ndarray]:
    """Allocated link neighbours of every allocation position, as a CSR.

    Parameters
    ----------
    machine : Machine
        The machine (its link list).
    allocation : Allocation
        The allocated nodes; positions are indices into ``allocation.nodes``.

    Returns
    -------
    indptr : numpy.ndarray
        int64, shape (n_nodes + 1,): the neighbours of position p are
        ``positions[indptr[p]:indptr[p + 1]]``.
    positions : numpy.ndarray
        int64 allocation positions linked to each position (either direction), sorted, no
        repeats, no self.
    """
    pos_src = allocation.position_of_node(machine.link_src)
    pos_dst = allocation.position_of_node(machine.link_dst)
    ok = (pos_src >= 0) & (pos_dst >= 0) & (pos_src != pos_dst)
    n = np.int64(max(allocation.n_nodes, 1))
    # one int64 key per (position, neighbour) pair: sorting and de-duplicating it is one
    # vectorised step (positions are < n, so the key orders by position, then neighbour)
    key = np.sort(np.concatenate([pos_src[ok] * n + pos_dst[ok], pos_dst[ok] * n + pos_src[ok]]))
    key = key[np.r_[True, key[1:] != key[:-1]]] if len(key) else key  # np.unique hashes: slow
    a, b = key // n, key % n
    indptr = np.searchsorted(a, np.arange(allocation.n_nodes + 1))
    return indptr, b
