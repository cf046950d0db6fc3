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

__all__ = ["place_leaf_grid", "bisect_prep", "cut_cost", "bisect_finish"]


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


@njit(cache=True, nogil=True)
def bisect_prep(indptr, indices, data, verts, in_dom, centre_of, local_of, c0, c1, dims,
                strides, wrap):
    """The cut problem of one domain: pulls towards each half and the domain's subgraph.

    Parameters
    ----------
    indptr, indices, data : ndarray
        The graph (CSR; bytes between vertices).
    verts : ndarray of int64, shape (n,)
        The domain's vertices.
    in_dom : ndarray of bool
        Which vertices are in the domain (exactly ``verts``).
    centre_of : ndarray of int64
        Machine node at the centre of every vertex's current domain.
    local_of : ndarray of int64
        Scratch, one per graph vertex (any values; overwritten for ``verts``).
    c0, c1 : int
        Machine nodes at the centres of the two halves.
    dims, strides : ndarray of int64
        Sides and node-id strides of the torus/mesh.
    wrap : ndarray of bool
        Whether each dimension wraps around.

    Returns
    -------
    ext0, ext1 : ndarray of float64, shape (n,)
        Hop x bytes from each vertex to its partners outside the domain, were it in half 0
        or half 1 (partners at their domain's centre), summed in entry order.
    sub_indptr, sub_indices, sub_data : ndarray
        The domain's subgraph (local vertex ids), entries in the graph's order.
    d01 : float
        Hops between the halves' centres (at least 1).
    """
    n = verts.shape[0]
    for i in range(n):
        local_of[verts[i]] = i
    ext0 = np.zeros(n, dtype=np.float64)
    ext1 = np.zeros(n, dtype=np.float64)
    cap = 0
    for i in range(n):
        cap += indptr[verts[i] + 1] - indptr[verts[i]]
    sub_indptr = np.zeros(n + 1, dtype=np.int64)
    sub_indices = np.empty(cap, dtype=np.int64)
    sub_data = np.empty(cap, dtype=np.float64)
    m = 0
    for i in range(n):
        v = verts[i]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if in_dom[u]:
                sub_indices[m] = local_of[u]
                sub_data[m] = data[e]
                m += 1
            else:
                cu = centre_of[u]
                ext0[i] += data[e] * float(node_hop_distance(c0, cu, dims, strides, wrap))
                ext1[i] += data[e] * float(node_hop_distance(c1, cu, dims, strides, wrap))
        sub_indptr[i + 1] = m
    d01 = float(max(node_hop_distance(c0, c1, dims, strides, wrap), 1))
    return ext0, ext1, sub_indptr, sub_indices[:m].copy(), sub_data[:m].copy(), d01


@njit(cache=True, nogil=True)
def cut_cost(side0, sub_indptr, sub_indices, sub_data, ext0, ext1, d01):
    """Cost of a two-way cut: hops between the halves x bytes across, plus each vertex's
    pull towards the half it is not in (rankmap.mappers.network_bisection's ``_Cut.cost``).

    Parameters
    ----------
    side0 : ndarray of bool, shape (n,)
        Which vertices are in half 0.
    sub_indptr, sub_indices, sub_data : ndarray
        The domain's subgraph (CSR).
    ext0, ext1 : ndarray of float64, shape (n,)
        Pulls of the outside partners were the vertex in half 0 or half 1.
    d01 : float
        Hops between the halves' centres.

    Returns
    -------
    float
        The cost (exact for sums of whole multiples below 2**53 of them).
    """
    cut = 0.0
    e0 = 0.0
    e1 = 0.0
    for i in range(side0.shape[0]):
        if side0[i]:
            e0 += ext0[i]
            for e in range(sub_indptr[i], sub_indptr[i + 1]):
                if not side0[sub_indices[e]]:
                    cut += sub_data[e]
        else:
            e1 += ext1[i]
    return d01 * cut + (e0 + e1)


@njit(cache=True, nogil=True)
def _gains(side0, sub_indptr, sub_indices, sub_data, ext0, ext1, d01):
    """Cost drop of moving each vertex alone to the other side."""
    n = side0.shape[0]
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        conn = 0.0
        for e in range(sub_indptr[i], sub_indptr[i + 1]):
            conn += sub_data[e] if side0[sub_indices[e]] else -sub_data[e]
        if side0[i]:
            out[i] = ext0[i] - ext1[i] - d01 * conn
        else:
            out[i] = ext1[i] - ext0[i] - d01 * -conn
    return out


@njit(cache=True, nogil=True)
def _weight(sub_indptr, sub_indices, sub_data, a, b):
    """Bytes between local vertices a and b (0 when not linked)."""
    w = 0.0
    for e in range(sub_indptr[a], sub_indptr[a + 1]):
        if sub_indices[e] == b:
            w += sub_data[e]
    return w


@njit(cache=True, nogil=True)
def bisect_finish(side0, n0, sub_indptr, sub_indices, sub_data, ext0, ext1, d01, passes):
    """Make half 0 exactly ``n0`` vertices (best-gain vertices cross), then pairwise swaps
    across the cut, best gains first, while the cost drops (rankmap.mappers.
    network_bisection's ``_exact_size`` and ``_swap_passes``, step for step).

    Parameters
    ----------
    side0 : ndarray of bool, shape (n,)
        Which vertices start in half 0 (not changed).
    n0 : int
        Vertices half 0 must hold.
    sub_indptr, sub_indices, sub_data, ext0, ext1, d01
        The cut problem (:func:`bisect_prep`).
    passes : int
        Most swap passes.

    Returns
    -------
    ndarray of bool, shape (n,)
        Half 0 of the cut.
    """
    side0 = side0.copy()
    excess = 0
    for i in range(side0.shape[0]):
        if side0[i]:
            excess += 1
    excess -= n0
    if excess != 0:
        gain = _gains(side0, sub_indptr, sub_indices, sub_data, ext0, ext1, d01)
        want = excess > 0
        cand = np.nonzero(side0 == want)[0]
        order = np.argsort(-gain[cand], kind="mergesort")
        for j in range(abs(excess)):
            side0[cand[order[j]]] = not side0[cand[order[j]]]
    best = cut_cost(side0, sub_indptr, sub_indices, sub_data, ext0, ext1, d01)
    for _ in range(passes):
        gain = _gains(side0, sub_indptr, sub_indices, sub_data, ext0, ext1, d01)
        a = np.nonzero(side0)[0]
        b = np.nonzero(~side0)[0]
        if a.shape[0] == 0 or b.shape[0] == 0:
            break
        a = a[np.argsort(-gain[a], kind="mergesort")]
        b = b[np.argsort(-gain[b], kind="mergesort")]
        m = min(a.shape[0], b.shape[0])
        first_good = -1
        for i in range(m):
            pair = gain[a[i]] + gain[b[i]] - 2.0 * d01 * _weight(sub_indptr, sub_indices,
                                                                   sub_data, a[i], b[i])
            if pair <= 0:
                first_good = i
                break
        if first_good >= 0:
            m = first_good
        improved = False
        while m > 0:
            trial = side0.copy()
            for i in range(m):
                trial[a[i]] = False
                trial[b[i]] = True
            c = cut_cost(trial, sub_indptr, sub_indices, sub_data, ext0, ext1, d01)
            if c < best - 1e-9 * max(abs(best), 1.0):
                side0 = trial
                best = c
                improved = True
                break
            m //= 2
        if not improved:
            break
    return side0
