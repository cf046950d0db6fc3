"""Hop counts between allocation positions from their coordinates, for the compiled searches
(``refine``'s proposals, the greedy walk) on a torus or mesh and on a k-ary n-tree.

A position's coordinates are computed once (:func:`rankmap.kernels.torus.position_coords`):
a grid node's coordinates, or a tree host's base-k digits, most significant first (the
"sides" are then the arity once per level and the "strides" its powers). The type of ``wrap``
tells the two apart when compiling (bool on a grid, int8 on a tree), so each kind of machine
gets code with one path and no branch at run time.
"""

from __future__ import annotations

import numpy as np

from .jit import kernel
from .torus import coords_hop

__all__ = ["position_hop", "tree_geometry"]


@kernel(nogil=True)
def position_hop(pcoords, p, q, dims, wrap):
    """Links between the nodes of allocation positions ``p`` and ``q``.

    Parameters
    ----------
    pcoords : ndarray of int64, shape (n_positions, ndim)
        Coordinates of every position's node (a tree's: base-k digits, most significant
        first).
    p, q : int
        Positions.
    dims : ndarray of int64, shape (ndim,)
        Sides of the torus or mesh (a tree's: the arity once per level).
    wrap : ndarray of bool or int8, shape (ndim,)
        Whether each dimension wraps around; int8 on a k-ary n-tree.

    Returns
    -------
    int
        On a grid, the shortest hop count (:func:`~rankmap.kernels.torus.coords_hop`); on a
        tree, twice the level of the two hosts' common switch (0 for the same host).
    """
    if isinstance(wrap[0], bool):          # decided when compiling: one branch is kept
        return coords_hop(pcoords, p, q, dims, wrap)
    nd = pcoords.shape[1]
    for j in range(nd):
        if pcoords[p, j] != pcoords[q, j]:
            return 2 * (nd - j)
    return 0


def tree_geometry(k: int, levels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dims, strides, wrap)`` of a k-ary n-tree for the compiled searches.

    Parameters
    ----------
    k : int
        Arity of the tree.
    levels : int
        Switch levels.

    Returns
    -------
    tuple of numpy.ndarray
        int64 arity once per level, int64 powers of the arity (most significant first, so
        that :func:`~rankmap.kernels.torus.position_coords` gives the base-k digits) and an
        int8 ``wrap`` marking the tree.
    """
    return (np.full(levels, k, dtype=np.int64),
            k ** np.arange(levels - 1, -1, -1, dtype=np.int64),
            np.zeros(levels, dtype=np.int8))
