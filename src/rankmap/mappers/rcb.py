"""``rcb``: recursive coordinate bisection (seed 002, section II-C).

The allocated nodes (coordinates from ``machine.geometry``) and the ranks (their process-grid
coordinates) are split in two along their own longest dimension, recursively, and the first
half of the ranks goes to the first half of the nodes. The number of ranks sent to a half is
proportional to its cores (never more than it has). At a single node the ranks take its cores
in order. With fewer ranks than cores, only the first nodes of a recursive bisection order of the
allocation are used (a compact subset). Patterns without a grid use the ``graph`` mapper instead (its partitioning plays the
role of the coordinate split).
"""

from __future__ import annotations

import numpy as np

from .geometry import bisect_order

__all__ = ["rcb_cores", "rcb_fallback_note", "rcb_same_as", "rcb"]


def _split_sets(pts: np.ndarray, order: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Sort each segment of ``order`` (bounds ``bounds``) along that segment's longest axis,
    other coordinates breaking ties; returns the new order."""
    n = len(order)
    sizes = np.diff(bounds)
    seg = np.repeat(np.arange(len(sizes)), sizes)
    p = pts[order]
    nseg = len(sizes)
    mx = np.full((nseg, pts.shape[1]), -np.inf)
    mn = np.full((nseg, pts.shape[1]), np.inf)
    np.maximum.at(mx, seg, p)
    np.minimum.at(mn, seg, p)
    axis = np.argmax(mx - mn, axis=1)
    # secondary keys: the other coordinates in order, so the split is deterministic
    keys = [p[:, a] for a in range(pts.shape[1])][::-1]
    keys.append(p[np.arange(n), axis[seg]])
    keys.append(seg)
    return order[np.lexsort(keys)]


def rcb_cores(points: np.ndarray, machine, allocation) -> np.ndarray:
    """Recursive coordinate bisection of ranks and nodes, paired.

    Parameters
    ----------
    points : numpy.ndarray
        Grid coordinates of every rank, one row per rank.
    machine : Machine
        The machine (its geometry coordinates are bisected).
    allocation : Allocation
        The allocation; with fewer ranks than cores a compact set of nodes is used.

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    n_ranks = len(points)
    cpn = allocation.cores_per_node
    geo_all = machine.geometry(allocation.nodes).astype(np.float64)
    # fewer ranks than cores: keep a compact set of nodes (first ones in bisection order)
    need = -(-n_ranks // cpn)
    used = np.sort(bisect_order(geo_all)[:need]) if need < allocation.n_nodes \
        else np.arange(allocation.n_nodes, dtype=np.int64)
    geo = geo_all[used]
    # grid columns reversed: on equal extents the last (fastest-varying, MPI) grid dimension
    # is split together with the first machine axis (X), matching the two numbering rules
    pts = np.asarray(points, dtype=np.float64)[:, ::-1]
    node_order = np.arange(len(used), dtype=np.int64)
    rank_order = np.arange(n_ranks, dtype=np.int64)
    nb = np.array([0, len(used)], dtype=np.int64)              # node segment bounds
    rb = np.array([0, n_ranks], dtype=np.int64)                # rank segment bounds
    while (np.diff(nb) > 1).any():
        nsz, rsz = np.diff(nb), np.diff(rb)
        node_order = _split_sets(geo, node_order, nb)
        rank_order = _split_sets(pts, rank_order, rb)
        n1 = nsz // 2
        n1[nsz == 1] = 1
        c1, c2 = n1 * cpn, (nsz - n1) * cpn
        r1 = np.where(nsz > 0, np.rint(rsz * c1 / np.maximum(c1 + c2, 1)), 0).astype(np.int64)
        r1 = np.clip(r1, np.maximum(rsz - c2, 0), np.minimum(c1, rsz))
        split = np.nonzero(nsz > 1)[0]
        nb = np.insert(nb, split + 1, (nb[:-1] + n1)[split])
        # rank segments stay aligned with node segments (a rank segment may be empty)
        rb = np.insert(rb, split + 1, (rb[:-1] + r1)[split])
    # each node segment has one node; its ranks take its cores in order
    rsz = np.diff(rb)
    seg = np.repeat(np.arange(len(rsz)), rsz)
    slot = np.arange(n_ranks) - rb[:-1][seg]
    core_of_rank = np.empty(n_ranks, dtype=np.int64)
    core_of_rank[rank_order] = used[node_order[seg]] * cpn + slot
    return core_of_rank


def rcb_fallback_note(pattern) -> str | None:
    """The note shown when ``rcb`` falls back to the graph mapper.

    Parameters
    ----------
    pattern : Pattern
        The pattern.

    Returns
    -------
    str or None
        The note when ``pattern`` has no grid, else None.
    """

    if pattern.grid is not None:
        return None
    return (f"rcb: pattern {pattern.spec!r} has no Cartesian grid (give one with :grid=), "
            "so rcb falls back to graph partitioning (the graph mapper)")


def rcb_same_as(pattern, machine, allocation) -> str | None:
    """``"graph"`` when ``rcb`` falls back to the graph mapper here (no grid), else None.

    Parameters
    ----------
    pattern : Pattern
        The pattern.
    machine : Machine
        The machine (unused: the fallback depends on the pattern only).
    allocation : Allocation
        The allocation (unused).

    Returns
    -------
    str or None
        The name of the mapper whose placement ``rcb``'s is, with the same seed.
    """
    return "graph" if pattern.grid is None else None


def rcb(pattern, machine, allocation, seed):
    """Recursive coordinate bisection (see module docstring); gridless patterns go to graph.

    Parameters
    ----------
    pattern : Pattern
        The pattern whose ranks are placed.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocated nodes; ranks go on their cores only.
    seed : int
        Seeds the graph mapper of gridless patterns; unused otherwise.

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    if pattern.grid is None:
        from .graph_multilevel import multilevel_cores
        return multilevel_cores(pattern, machine, allocation, seed)
    return rcb_cores(pattern.grid_coords(), machine, allocation)
