"""Compiled leaf placement of the network bisection on tori and meshes
(:func:`rankmap.mappers.network_bisection.map_graph_to_nodes`).

A leaf domain holds at most a handful of vertices (node-sized parts) and as many nodes; its
vertices go onto its nodes in the order, among every permutation, that minimises the hop x
bytes between them plus the hop x bytes to their partners outside the domain (at the centre
of the partner's domain). The Python version pays numpy's call overhead a few dozen times per
leaf (0.2 ms; thousands of leaves); this kernel does the same sums in one call, with the hop
distance of a torus or mesh. Its caller runs it only where every sum is exact
(:mod:`rankmap.mappers.exact_grid`), so the order of additions cannot change the pick.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .torus import node_hop_distance

__all__ = ["place_leaf_grid"]


@njit(cache=True, nogil=True)
def place_leaf_grid(indptr, indices, data, verts, nodes, in_dom, centre_of, perms, dims,
                    strides, wrap):
    """Order of ``nodes`` for ``verts`` minimising internal plus external hop-bytes.

    Parameters
    ----------
    indptr, indices, data : ndarray
        The graph (CSR; bytes between vertices).
    verts : ndarray of int64, shape (s,)
        The leaf's vertices.
    nodes : ndarray of int64, shape (s,)
        The leaf's machine nodes.
    in_dom : ndarray of bool
        Which vertices are in the leaf (exactly ``verts``).
    centre_of : ndarray of int64
        Machine node at the centre of every vertex's current domain.
    perms : ndarray of int64, shape (s!, s)
        Every permutation of range(s), in lexicographic order.
    dims, strides : ndarray of int64
        Sides and node-id strides of the torus/mesh.
    wrap : ndarray of bool
        Whether each dimension wraps around.

    Returns
    -------
    ndarray of int64, shape (s,)
        The permutation (row of ``perms``) with the lowest cost, the first on ties: vertex
        ``verts[a]`` goes on ``nodes[result[a]]``.
    """
    s = verts.shape[0]
    ext = np.zeros((s, s), dtype=np.float64)
    wint = np.zeros((s, s), dtype=np.float64)
    for a in range(s):
        v = verts[a]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if in_dom[u]:
                for b in range(s):
                    if verts[b] == u:
                        wint[a, b] += data[e]
            else:
                for t in range(s):
                    ext[a, t] += data[e] * float(node_hop_distance(nodes[t], centre_of[u], dims,
                                                                   strides, wrap))
    dist = np.empty((s, s), dtype=np.float64)
    for a in range(s):
        for b in range(s):
            dist[a, b] = float(node_hop_distance(nodes[a], nodes[b], dims, strides, wrap))
    best = 0
    best_cost = 0.0
    for k in range(perms.shape[0]):
        internal = 0.0
        external = 0.0
        for a in range(s):
            external += ext[a, perms[k, a]]
            for b in range(s):
                internal += dist[perms[k, a], perms[k, b]] * wint[a, b]
        cost = internal / 2 + external
        if k == 0 or cost < best_cost:
            best = k
            best_cost = cost
    return perms[best].copy()
