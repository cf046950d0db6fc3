"""Compiled leaf placement of the network bisection on tori, meshes and k-ary n-trees
(:func:`rankmap.mappers.network_bisection.map_graph_to_nodes`).

A leaf domain holds at most a handful of vertices (node-sized parts) and as many nodes; its
vertices go onto its nodes in the order, among every permutation, that minimises the hop x
bytes between them plus the hop x bytes to their partners outside the domain (at the centre
of the partner's domain). The Python version pays numpy's call overhead a few dozen times per
leaf (0.2 ms; thousands of leaves); this kernel does the same sums in one call, with the hop
distance of a torus or mesh or of a k-ary n-tree (:func:`rankmap.kernels.fattree.ktree_hop`,
``dims[0]`` its arity; each call site tests ``isinstance(wrap[0], bool)``, which numba decides
when compiling: through one wrapper of both, the grid's bisection ran 2-5% slower). Its caller
runs it only where every sum is exact (:mod:`rankmap.mappers.exact_grid`), so the order of
additions cannot change the pick.
"""

from __future__ import annotations

import numpy as np

from .fattree import ktree_hop
from .jit import kernel
from .torus import node_hop_distance

__all__ = ["place_leaf_grid", "bisect_prep", "cut_cost", "bisect_finish", "bisect_small_domains"]


@kernel(nogil=True)
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
    wrap : ndarray of bool or int8
        Whether each dimension wraps around; int8 on a k-ary n-tree
        (:func:`rankmap.kernels.hops.tree_geometry`).

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
                    if isinstance(wrap[0], bool):      # decided when compiling
                        h = node_hop_distance(nodes[t], centre_of[u], dims, strides, wrap)
                    else:
                        h = ktree_hop(nodes[t], centre_of[u], dims[0])
                    ext[a, t] += data[e] * float(h)
    dist = np.empty((s, s), dtype=np.float64)
    for a in range(s):
        for b in range(s):
            if isinstance(wrap[0], bool):
                h = node_hop_distance(nodes[a], nodes[b], dims, strides, wrap)
            else:
                h = ktree_hop(nodes[a], nodes[b], dims[0])
            dist[a, b] = float(h)
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


@kernel(nogil=True)
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
    wrap : ndarray of bool or int8
        Whether each dimension wraps around; int8 on a k-ary n-tree
        (:func:`rankmap.kernels.hops.tree_geometry`).

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
                if isinstance(wrap[0], bool):  # decided when compiling
                    h0 = node_hop_distance(c0, cu, dims, strides, wrap)
                    h1 = node_hop_distance(c1, cu, dims, strides, wrap)
                else:
                    h0 = ktree_hop(c0, cu, dims[0])
                    h1 = ktree_hop(c1, cu, dims[0])
                ext0[i] += data[e] * float(h0)
                ext1[i] += data[e] * float(h1)
        sub_indptr[i + 1] = m
    if isinstance(wrap[0], bool):
        h01 = node_hop_distance(c0, c1, dims, strides, wrap)
    else:
        h01 = ktree_hop(c0, c1, dims[0])
    d01 = float(max(h01, 1))
    return ext0, ext1, sub_indptr, sub_indices[:m].copy(), sub_data[:m].copy(), d01


@kernel(nogil=True)
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


@kernel(nogil=True)
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


@kernel(nogil=True)
def _weight(sub_indptr, sub_indices, sub_data, a, b):
    """Bytes between local vertices a and b (0 when not linked)."""
    w = 0.0
    for e in range(sub_indptr[a], sub_indptr[a + 1]):
        if sub_indices[e] == b:
            w += sub_data[e]
    return w


@kernel(nogil=True)
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


@kernel(nogil=True)
def _split_rows(geo, rows):
    """``rows`` sorted along their longest axis (first widest), ties by coordinate 0, 1, ...,
    then by position (``network_bisection._split_nodes``' lexsort); the first half holds
    ``len // 2``."""
    m = rows.shape[0]
    nd = geo.shape[1]
    axis = 0
    widest = -1.0
    for d in range(nd):
        lo = geo[rows[0], d]
        hi = lo
        for i in range(1, m):
            lo = min(lo, geo[rows[i], d])
            hi = max(hi, geo[rows[i], d])
        if hi - lo > widest:
            widest = hi - lo
            axis = d
    out = rows.copy()
    for i in range(1, m):                 # insertion sort: stable
        r = out[i]
        j = i - 1
        while j >= 0 and _row_after(geo, out[j], r, axis):
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = r
    return out


@kernel(nogil=True)
def _row_after(geo, a, b, axis):
    """Whether row ``a`` sorts strictly after row ``b`` (longest axis, then 0, 1, ...)."""
    if geo[a, axis] != geo[b, axis]:
        return geo[a, axis] > geo[b, axis]
    for d in range(geo.shape[1]):
        if geo[a, d] != geo[b, d]:
            return geo[a, d] > geo[b, d]
    return False


@kernel(nogil=True)
def _centre_row(geo, rows):
    """The row of ``rows`` nearest the centroid (the first on ties;
    ``network_bisection._centre_nodes``' sums for fewer than 8 axes)."""
    m = rows.shape[0]
    nd = geo.shape[1]
    c = np.zeros(nd, dtype=np.float64)
    for i in range(m):
        for d in range(nd):
            c[d] += geo[rows[i], d]
    for d in range(nd):
        c[d] /= m
    best = rows[0]
    best_d = np.inf
    for i in range(m):
        acc = 0.0
        for d in range(nd):
            x = geo[rows[i], d] - c[d]
            acc += x * x
        if acc < best_d:
            best_d = acc
            best = rows[i]
    return best


@kernel(nogil=True)
def bisect_small_domains(verts, rows, ptr, geo, node_of_row, positions, indptr, indices, data,
                         local_of, place, centre_of, in_dom, perm_flat, perm_off, leaf_domain,
                         swap_passes, max_level_domains, leaf_sweeps, max_leaf_placements, dims,
                         strides, wrap):
    """The rest of :func:`rankmap.mappers.network_bisection.map_graph_to_nodes` once every
    domain of a level is small (no KaHIP cut: the first side is the vertices pulled most
    towards it), level by level in the same order, then its leaf sweeps: the same cuts,
    centres and placements, in one call.

    Parameters
    ----------
    verts, rows, ptr : ndarray of int64
        The level's domains: domain d holds vertices ``verts[ptr[d]:ptr[d + 1]]`` and node
        rows (indices into ``positions`` and ``geo``) ``rows[ptr[d]:ptr[d + 1]]``.
    geo : ndarray of float64, shape (rows, ndim)
        Whole-number coordinates of every row's node, fewer than 8 axes.
    node_of_row, positions : ndarray of int64
        Machine node and allocation position of every row.
    indptr, indices, data : ndarray
        The graph (CSR; bytes between vertices).
    local_of : ndarray of int64
        Scratch of one entry per vertex (:func:`bisect_prep`).
    place, centre_of, in_dom : ndarray
        Position of every vertex (set), the node at the centre of every vertex's domain
        (updated) and the domain mask (False on entry and on return).
    perm_flat, perm_off : ndarray of int64
        Every permutation of range(s) for s up to ``leaf_domain``, rows of s entries, those
        of size s from ``perm_off[s]`` to ``perm_off[s + 1]``.
    leaf_domain, swap_passes, max_level_domains, leaf_sweeps, max_leaf_placements : int
        The bisection's constants (``LEAF_DOMAIN``, ``SWAP_PASSES``, work bounds).
    dims, strides : ndarray of int64
        Sides and node-id strides of the torus/mesh.
    wrap : ndarray of bool or int8
        Whether each dimension wraps around; int8 on a k-ary n-tree
        (:func:`rankmap.kernels.hops.tree_geometry`).
    """
    n_all = verts.shape[0]
    leaf_v = np.empty(n_all, dtype=np.int64)
    leaf_r = np.empty(n_all, dtype=np.int64)
    leaf_ptr = np.zeros(n_all + 1, dtype=np.int64)
    n_leaves = 0
    while ptr.shape[0] > 1:
        n_dom = ptr.shape[0] - 1
        if n_dom > max_level_domains:
            for j in range(ptr[n_dom]):
                place[verts[j]] = positions[rows[j]]
            break
        nv = np.empty(n_all, dtype=np.int64)
        nr = np.empty(n_all, dtype=np.int64)
        nptr = np.zeros(2 * n_dom + 1, dtype=np.int64)
        n_next = 0
        fill = 0
        for d in range(n_dom):
            lo, hi = ptr[d], ptr[d + 1]
            m = hi - lo
            if m == 1:
                place[verts[lo]] = positions[rows[lo]]
                continue
            if m <= leaf_domain:
                start = leaf_ptr[n_leaves]
                leaf_v[start:start + m] = verts[lo:hi]
                leaf_r[start:start + m] = rows[lo:hi]
                leaf_ptr[n_leaves + 1] = start + m
                n_leaves += 1
                continue
            ordered = _split_rows(geo, rows[lo:hi])
            half = m // 2
            h0 = ordered[:half]
            h1 = ordered[half:]
            c0 = node_of_row[_centre_row(geo, h0)]
            c1 = node_of_row[_centre_row(geo, h1)]
            dv = verts[lo:hi]
            for v in dv:
                in_dom[v] = True
            ext0, ext1, s_ptr, s_idx, s_dat, d01 = bisect_prep(indptr, indices, data, dv,
                                                               in_dom, centre_of, local_of,
                                                               c0, c1, dims, strides, wrap)
            side0 = np.zeros(m, dtype=np.bool_)
            pull = np.argsort(ext0 - ext1, kind="mergesort")
            for j in range(half):
                side0[pull[j]] = True
            side0 = bisect_finish(side0, half, s_ptr, s_idx, s_dat, ext0, ext1, d01,
                                  swap_passes)
            for v in dv:
                in_dom[v] = False
            for half_side in (True, False):
                part = h0 if half_side else h1
                for j in range(m):
                    if side0[j] == half_side:
                        centre_of[dv[j]] = c0 if half_side else c1
                        nv[fill] = dv[j]
                        fill += 1
                nr[nptr[n_next]:nptr[n_next] + part.shape[0]] = part
                nptr[n_next + 1] = fill
                n_next += 1
        verts, rows, ptr = nv[:fill], nr[:fill], nptr[:n_next + 1]
    sweeps = min(leaf_sweeps, max_leaf_placements // max(n_leaves, 1))
    if sweeps == 0:
        for j in range(leaf_ptr[n_leaves]):
            place[leaf_v[j]] = positions[leaf_r[j]]
    for _sweep in range(sweeps):
        for q in range(n_leaves):
            lo, hi = leaf_ptr[q], leaf_ptr[q + 1]
            s = hi - lo
            lv = leaf_v[lo:hi]
            lr = leaf_r[lo:hi]
            for v in lv:
                in_dom[v] = True
            perms = perm_flat[perm_off[s]:perm_off[s + 1]].reshape(
                ((perm_off[s + 1] - perm_off[s]) // s, s))
            order = place_leaf_grid(indptr, indices, data, lv, node_of_row[lr], in_dom,
                                    centre_of, perms, dims, strides, wrap)
            for v in lv:
                in_dom[v] = False
            for j in range(s):
                centre_of[lv[j]] = node_of_row[lr[order[j]]]
                place[lv[j]] = positions[lr[order[j]]]
