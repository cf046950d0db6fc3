"""Compiled routing kernels for torus and mesh networks (loads and per-flow paths).

Both models add into dense per-link arrays indexed ``node*2*ndim + 2*dim + (0 for +, 1 for -)``:
``link_bytes`` (bytes, float64) and ``link_streams`` (number of flows with a share, int64), and
write each flow's hop count into ``flow_hops``.

* ``route_dor``: dimension-order routing. Dimensions in order 0, 1, ...; in each the shorter
  way round; an offset of exactly n/2 on a wrapped ring goes in the + direction; meshes never
  wrap.
* ``route_adaptive``: the first-order model of minimal adaptive routing (seed 001, section 3.1):
  at every hop the traffic still in flight is split equally among the productive links, that is
  one link per dimension with remaining offset, and both directions of a dimension whose
  offset is a tie (exactly n/2 on a wrapped ring) until the first step in it is taken.

Adaptive routing is computed per *distinct offset vector*: the split of a flow depends only on
its offset (the torus looks the same from every node, and a minimal path on a mesh never
leaves the box between its ends), so each distinct offset's split is worked out once, as a
list of (link position relative to the source, share) -- a template -- and then added at every
flow's source. Flows between the same two nodes are merged first (bytes add, stream counts
add). The template itself walks the lattice of partial progress (one counter per dimension)
in an order where every state comes after the states feeding it; each state passes
``weight / productive_links`` to each productive link.
"""

from __future__ import annotations

import numpy as np

from ..validate import check_limit
from .jit import kernel

#: ``route_dor`` sums runs per ring (:func:`_dor_ring_sums`) when the paths hold more than
#: this many link visits per dense link slot, and walks every path otherwise
RING_SUM_RATIO = 4

__all__ = ["node_hop_distance", "position_coords", "coords_hop", "side_gain_coords",
           "phase_bound_sums", "route_dor", "dor_crosses", "dor_takes_slot", "dor_link_sums",
           "dor_paths", "fold_resource_classes", "class_link_sums",
           "side_gain_grid", "adaptive_templates", "route_adaptive", "adaptive_paths",
           "adaptive_template", "adaptive_code", "adaptive_takes_slot", "placed_slot",
           "template_fold", "template_class_sums"]


@kernel(nogil=True)
def _offset(src_c, dst_c, n, wrap):
    """(hops, direction, tie) to go from coordinate src_c to dst_c on a ring or line.

    Parameters
    ----------
    src_c, dst_c : int
        Coordinates, in 0 .. n-1.
    n : int
        Nodes on the ring or line.
    wrap : bool
        A ring (True) or a line.

    Returns
    -------
    hops : int
        Links on a shortest way.
    direction : int
        +1 or -1 (+1 when the way does not move, or on a tie).
    tie : bool
        Whether both ways round a ring are shortest (half way round).
    """
    if wrap:
        delta = dst_c - src_c
        if delta < 0:
            delta += n
        if delta == 0:
            return 0, 1, False
        if 2 * delta == n:
            return delta, 1, True
        if delta < n - delta:
            return delta, 1, False
        return n - delta, -1, False
    delta = dst_c - src_c
    if delta >= 0:
        return delta, 1, False
    return -delta, -1, False


@kernel(nogil=True)
def _node_coords(dims, strides, n_nodes):
    """Coordinates of every node, shape (n_nodes, ndim)."""
    nd = dims.shape[0]
    out = np.empty((n_nodes, nd), dtype=np.int64)
    for v in range(n_nodes):
        for d in range(nd):
            out[v, d] = (v // strides[d]) % dims[d]
    return out


@kernel(nogil=True, inline="always")
def _axis_hops(d, side, wraps):
    """Links along one dimension between coordinates ``d`` apart on a side of ``side``
    nodes: ``|d|``, or the way round when the dimension ``wraps`` and that is shorter."""
    if d < 0:
        d = -d
    if wraps and side - d < d:
        d = side - d
    return d


@kernel(nogil=True)
def hop_distances(a, b, dims, strides, wrap):
    """Shortest hop count between nodes ``a[i]`` and ``b[i]`` (int64 arrays of node ids) of
    a torus/mesh with sides ``dims``, id strides ``strides`` and per-dimension ``wrap``."""
    n = a.shape[0]
    nd = dims.shape[0]
    out = np.empty(n, dtype=np.int64)
    n_nodes = 1
    for k in range(nd):
        n_nodes *= dims[k]
    table = n > 2 * n_nodes      # many pairs: look the coordinates up instead of dividing
    coords = _node_coords(dims, strides, n_nodes if table else 0)
    for i in range(n):
        h = 0
        for k in range(nd):
            if table:
                d = coords[a[i], k] - coords[b[i], k]
            else:
                d = (a[i] // strides[k]) % dims[k] - (b[i] // strides[k]) % dims[k]
            h += _axis_hops(d, dims[k], wrap[k])
        out[i] = h
    return out


@kernel(nogil=True)
def node_hop_distance(a, b, dims, strides, wrap):
    """Shortest hop count between nodes a and b (the rule of :func:`hop_distances`).

    Parameters
    ----------
    a, b : int
        Node ids.
    dims, strides : ndarray of int64, shape (ndim,)
        Sides and node-id strides of the torus/mesh.
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around.

    Returns
    -------
    int
        Links on a shortest path from a to b.
    """
    h = 0
    for k in range(dims.shape[0]):
        h += _axis_hops((a // strides[k]) % dims[k] - (b // strides[k]) % dims[k], dims[k],
                        wrap[k])
    return h


@kernel(nogil=True)
def phase_bound_sums(node_of_rank, src, dst, nbytes, n_nodes, dims, strides, wrap):
    """One pass over a phase's flows for the bounds of ``rankmap.selection.bounds``: the
    flows between nodes (their hop counts and bytes, in flow order), every node's bytes out
    and in, and the bytes that stay inside nodes.

    Parameters
    ----------
    node_of_rank : ndarray of int64
        Machine node of every rank.
    src, dst : ndarray of int64
        Source and destination rank of every flow.
    nbytes : ndarray of float64
        Bytes of every flow.
    n_nodes : int
        Nodes of the torus/mesh.
    dims, strides : ndarray of int64, shape (ndim,)
        Sides and node-id strides of the torus/mesh.
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around.

    Returns
    -------
    hops : ndarray of float64
        Shortest hop count of every flow between nodes, in flow order.
    net_bytes : ndarray of float64
        Their bytes, in the same order.
    out_bytes, in_bytes : ndarray of float64, shape (n_nodes,)
        Bytes of those flows per source and per destination node, added in flow order
        (``numpy.bincount``'s sums).
    inside_bytes : ndarray of float64, shape (n_nodes,)
        Bytes of the flows inside each node, added in flow order.
    inside_max : float
        The largest flow inside a node (-inf when none is).
    n_inside : int
        Flows inside nodes.
    """
    n = src.shape[0]
    hops = np.empty(n, dtype=np.float64)
    net_bytes = np.empty(n, dtype=np.float64)
    out_bytes = np.zeros(n_nodes, dtype=np.float64)
    in_bytes = np.zeros(n_nodes, dtype=np.float64)
    inside_bytes = np.zeros(n_nodes, dtype=np.float64)
    inside_max = -np.inf
    table = n > 2 * n_nodes            # many flows: the nodes' coordinates once
    coords = _node_coords(dims, strides, n_nodes if table else 0)
    k = 0
    n_inside = 0
    for f in range(n):
        a = node_of_rank[src[f]]
        b = node_of_rank[dst[f]]
        w = nbytes[f]
        if a == b:
            inside_bytes[a] += w
            inside_max = max(inside_max, w)
            n_inside += 1
            continue
        if table:
            h = coords_hop(coords, a, b, dims, wrap)
        else:
            h = node_hop_distance(a, b, dims, strides, wrap)
        hops[k] = h
        net_bytes[k] = w
        out_bytes[a] += w
        in_bytes[b] += w
        k += 1
    return hops[:k], net_bytes[:k], out_bytes, in_bytes, inside_bytes, inside_max, n_inside


@kernel(nogil=True)
def position_coords(nodes, dims, strides):
    """Coordinates of the nodes of every allocation position (one division per position and
    dimension, once, instead of in every hop count).

    Parameters
    ----------
    nodes : ndarray of int64, shape (n_positions,)
        Machine node of every position.
    dims, strides : ndarray of int64, shape (ndim,)
        Sides and node-id strides of the torus/mesh.

    Returns
    -------
    ndarray of int64, shape (n_positions, ndim)
        Coordinate of every position's node in every dimension.
    """
    nd = dims.shape[0]
    out = np.empty((nodes.shape[0], nd), dtype=np.int64)
    for q in range(nodes.shape[0]):
        for k in range(nd):
            out[q, k] = (nodes[q] // strides[k]) % dims[k]
    return out


@kernel(nogil=True)
def coords_hop(coords, pa, pb, dims, wrap):
    """Shortest hop count between positions ``pa`` and ``pb`` from their coordinates (the
    count :func:`node_hop_distance` gives their nodes).

    Parameters
    ----------
    coords : ndarray of int64, shape (n_positions, ndim)
        :func:`position_coords`.
    pa, pb : int
        Positions.
    dims : ndarray of int64, shape (ndim,)
        Sides of the torus/mesh.
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around.

    Returns
    -------
    int
        Links on a shortest path between their nodes.
    """
    h = 0
    for k in range(dims.shape[0]):
        h += _axis_hops(coords[pa, k] - coords[pb, k], dims[k], wrap[k])
    return h


@kernel(nogil=True)
def side_gain_coords(indptr, indices, data, units, other, pos_from, pos_to, pos_of_unit,
                     coords, dims, wrap):
    """:func:`side_gain_grid` from the coordinates of allocation positions: the same sums,
    in the same order, without a division per hop count.

    Parameters
    ----------
    indptr, indices, data : ndarray
        CSR of the bytes between units (both directions).
    units, other : ndarray of int64, shape (m,)
        Unit moving (-1: none, saves 0) and the unit it swaps with (-1: none).
    pos_from, pos_to : ndarray of int64, shape (m,)
        Allocation position (node) the unit leaves and the one it takes.
    pos_of_unit : ndarray of int64
        Allocation position (node) of every unit.
    coords : ndarray of int64, shape (n_positions, ndim)
        :func:`position_coords` of the allocation.
    dims : ndarray of int64, shape (ndim,)
        Sides of the torus/mesh.
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around.

    Returns
    -------
    ndarray of float64, shape (m,)
        Bytes x hops saved per proposal (negative: added).
    """
    return _side_gains(indptr, indices, data, units, other, pos_from, pos_to, pos_of_unit,
                       coords, dims, dims, wrap, True)       # (strides unused with coords)


@kernel(nogil=True)
def _side_gains(indptr, indices, data, units, other, at_from, at_to, at_of_unit, coords,
                dims, strides, wrap, by_coords):
    """The sums of :func:`side_gain_grid` and :func:`side_gain_coords`: hop counts from
    ``coords`` rows (``by_coords``) or by dividing node ids (``strides``)."""
    m = units.shape[0]
    out = np.zeros(m, dtype=np.float64)
    for i in range(m):
        u = units[i]
        if u < 0:
            continue
        acc = 0.0
        for k in range(indptr[u], indptr[u + 1]):
            x = indices[k]
            if x == other[i]:
                continue
            px = at_of_unit[x]
            if by_coords:
                d = (coords_hop(coords, at_from[i], px, dims, wrap)
                     - coords_hop(coords, at_to[i], px, dims, wrap))
            else:
                d = (node_hop_distance(at_from[i], px, dims, strides, wrap)
                     - node_hop_distance(at_to[i], px, dims, strides, wrap))
            acc += data[k] * np.float64(d)
        out[i] = acc
    return out


@kernel(nogil=True)
def side_gain_grid(indptr, indices, data, units, other, node_from, node_to, node_of_unit,
                   dims, strides, wrap):
    """Hop-bytes saved by moving each of ``units`` from node ``node_from`` to ``node_to``.

    For each proposal i, the sum over the CSR partners x of ``units[i]`` other than
    ``other[i]`` of ``data * (h(node_from[i], node_of_unit[x]) - h(node_to[i],
    node_of_unit[x]))``, added in the partners' order (the sums
    ``rankmap.mappers.swap_refine.side_gain`` makes on any machine, bit for bit).

    Parameters
    ----------
    indptr, indices, data : ndarray
        CSR of the bytes between units (both directions).
    units, other : ndarray of int64, shape (m,)
        Unit moving (-1: none, saves 0) and the unit it swaps with (-1: none).
    node_from, node_to : ndarray of int64, shape (m,)
        Node the unit leaves and the node it takes.
    node_of_unit : ndarray of int64
        Node of every unit.
    dims, strides : ndarray of int64, shape (ndim,)
        Sides and node-id strides of the torus/mesh.
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around.

    Returns
    -------
    ndarray of float64, shape (m,)
        Bytes x hops saved per proposal (negative: added).
    """
    entries = 0
    for i in range(units.shape[0]):
        if units[i] >= 0:
            entries += indptr[units[i] + 1] - indptr[units[i]]
    n_nodes = 1
    for k in range(dims.shape[0]):
        n_nodes *= dims[k]
    # few entries: divide per hop count, no table; many: the nodes' coordinates once
    table = entries > 2 * n_nodes
    return _side_gains(indptr, indices, data, units, other, node_from, node_to, node_of_unit,
                       _node_coords(dims, strides, n_nodes if table else 0), dims, strides,
                       wrap, table)


@kernel(nogil=True)
def dor_walk(s, t, dims, strides, wrap, out):
    """Write the dense link slots of the dimension-order path from node s to node t into
    ``out`` (in path order); return the number of links (0 when s == t).

    The one dimension-order walk: :func:`route_dor` accumulates loads along it,
    :func:`dor_paths` writes it as a row of the flow x link incidence and the compiled
    refinement step (:mod:`rankmap.kernels.refine_grid`) sums moved flows along it.

    Parameters
    ----------
    s, t : int
        Source and destination node.
    dims, strides : ndarray of int64, shape (ndim,)
        Sides and node-id strides of the torus/mesh.
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around.
    out : ndarray of int64
        Buffer of at least ``dims.sum()`` entries for the path's dense link slots.

    Returns
    -------
    int
        Links on the path.
    """
    nd = dims.shape[0]
    node = s
    h_total = 0
    for d in range(nd):
        n = dims[d]
        stride = strides[d]
        c = (node // stride) % n
        tc = (t // stride) % n
        h, direction, _tie = _offset(c, tc, n, wrap[d])
        slot = 2 * d + (0 if direction > 0 else 1)
        for _ in range(h):
            out[h_total] = node * 2 * nd + slot
            h_total += 1
            c2 = c + direction
            if c2 == n:
                c2 = 0
            elif c2 < 0:
                c2 = n - 1
            node += (c2 - c) * stride
            c = c2
    return h_total


@kernel(nogil=True)
def dor_takes_slot(s, t, slot, dims, strides, wrap):
    """Whether the dimension-order walk from node s to node t (:func:`dor_walk`) takes the
    dense link slot ``slot``, in O(ndim) without walking.

    The walk corrects dimension 0 first: while it moves in dimension k its node agrees with t
    in the dimensions below k and with s above k, and in dimension k it steps from s's
    coordinate in :func:`dor_walk`'s direction (ties as there) until it reaches t's.

    Parameters
    ----------
    s, t : int
        Source and destination node.
    slot : int
        Dense link slot (``node*2*ndim + 2*dim + (0 for +, 1 for -)``).
    dims, strides : ndarray of int64, shape (ndim,)
        Sides and node-id strides of the torus/mesh.
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around.

    Returns
    -------
    bool
        True when the walk leaves the slot's node by the slot's link.
    """
    nd = dims.shape[0]
    node = slot // (2 * nd)
    k = (slot % (2 * nd)) // 2
    for d in range(nd):
        if d == k:
            continue
        ref = t if d < k else s
        if (node // strides[d]) % dims[d] != (ref // strides[d]) % dims[d]:
            return False
    n = dims[k]
    cs = (s // strides[k]) % n
    h, direction, _tie = _offset(cs, (t // strides[k]) % n, n, wrap[k])
    if h == 0 or direction != (1 if slot % 2 == 0 else -1):
        return False
    step = ((node // strides[k]) % n - cs) * direction
    if step < 0:
        step += n
    return step < h


@kernel(nogil=True)
def adaptive_takes_slot(s, t, slot, dims, strides, wrap):
    """Whether the minimal-adaptive template of the flow from node s to node t
    (:func:`adaptive_template`) may put a share on the dense link slot ``slot``, in O(ndim).

    The template's states are every combination of per-dimension progress, all reached
    (each step splits over every productive link): in a dimension without a tie, the
    coordinates from s's to t's along the shortest way; in a tie dimension (half way round a
    ring), every coordinate, s's leaving both ways, the + side's going +, the - side's going -,
    t's not at all. A link is taken when its node is at such a state in every dimension and
    the link's own dimension still progresses its way there. That is exactly the template's
    links, unless shares underflow to zero on a route of thousands of hops: then this says
    True for links the template lacks, never False for one it has.

    Parameters
    ----------
    s, t, slot, dims, strides, wrap
        As :func:`dor_takes_slot`.

    Returns
    -------
    bool
        True when the template may leave the slot's node by the slot's link.
    """
    nd = dims.shape[0]
    node = slot // (2 * nd)
    k = (slot % (2 * nd)) // 2
    plus = slot % 2 == 0
    for d in range(nd):
        n = dims[d]
        cs = (s // strides[d]) % n
        h, direction, tie = _offset(cs, (t // strides[d]) % n, n, wrap[d])
        delta = (node // strides[d]) % n - cs
        if tie:
            if delta < 0:
                delta += n
            if d == k and (delta == h or (delta != 0 and (delta < h) != plus)):
                return False
            continue
        step = delta * direction
        if wrap[d] and step < 0:
            step += n
        if step < 0 or step > h:
            return False
        if d == k and (step == h or plus != (direction > 0)):
            return False
    return True


@kernel(nogil=True)
def dor_crosses(src, dst, dims, strides, wrap, slot):
    """Whether the dimension-order walk of every flow takes the dense link slot ``slot``.

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination node of every flow.
    dims, strides : ndarray of int64, shape (ndim,)
        Sides and node-id strides of the torus/mesh.
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around.
    slot : int
        Dense link slot (``node*2*ndim + 2*dim + (0 for +, 1 for -)``).

    Returns
    -------
    ndarray of bool, shape (n_flows,)
        True for the flows whose path crosses that link (:func:`dor_takes_slot`).
    """
    out = np.zeros(src.shape[0], dtype=np.bool_)
    for f in range(src.shape[0]):
        out[f] = dor_takes_slot(src[f], dst[f], slot, dims, strides, wrap)
    return out


@kernel(nogil=True)
def route_dor(src, dst, nbytes, counts, dims, strides, wrap, link_bytes, link_streams,
              flow_hops):
    """Add dimension-order routed flows into the dense link arrays; hops into flow_hops.

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination node of every flow.
    nbytes : ndarray of float64, shape (n_flows,)
        Size of every flow, bytes.
    counts : ndarray of int64, shape (n_flows,)
        Multiplicity of every flow (entry f stands for counts[f] identical flows).
    dims : ndarray of int64, shape (ndim,)
        Side of the torus/mesh in every dimension (nodes).
    strides : ndarray of int64, shape (ndim,)
        Node-id stride of every dimension (``node = sum(coord[d] * strides[d])``).
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around (torus) or not (mesh).
    link_bytes : ndarray of float64, shape (n_nodes * 2 * ndim,)
        Bytes crossing each dense link slot; the flows' shares are added in place (bytes).
    link_streams : ndarray of int64, shape (n_nodes * 2 * ndim,)
        Number of flows with a share on each link slot; incremented in place.
    flow_hops : ndarray, shape (n_flows,)
        Set in place to each flow's hop count (links on its minimal path; 0 inside a node).
    """
    coords = _node_coords(dims, strides, link_bytes.shape[0] // (2 * dims.shape[0]))
    total = 0
    for f in range(src.shape[0]):
        for d in range(dims.shape[0]):
            h, _dir, _tie = _offset(coords[src[f], d], coords[dst[f], d], dims[d], wrap[d])
            total += h
    if total > RING_SUM_RATIO * link_bytes.shape[0]:
        _dor_ring_sums(src, dst, nbytes, counts, dims, strides, wrap, link_bytes,
                       link_streams, flow_hops, coords)
        return
    path = np.empty(max(1, int(dims.sum())), dtype=np.int64)
    for f in range(src.shape[0]):
        h = dor_walk(src[f], dst[f], dims, strides, wrap, path)
        c = counts[f]
        b = nbytes[f] * c
        for k in range(h):
            li = path[k]
            link_bytes[li] += b
            link_streams[li] += c
        flow_hops[f] = h


@kernel(nogil=True)
def _mark_piece(diff_b, diff_s, base, stride, n, slot, nd2, lo, hi, b, c):
    """Mark ring positions lo .. hi-1 (0 <= lo < hi <= n) of the ring starting at ``base``."""
    i = (base + lo * stride) * nd2 + slot
    diff_b[i] += b
    diff_s[i] += c
    if hi < n:
        j = (base + hi * stride) * nd2 + slot
        diff_b[j] -= b
        diff_s[j] -= c


@kernel(nogil=True)
def _mark_run(diff_b, diff_s, base, stride, n, slot, nd2, lo, h, b, c):
    """Mark ring positions lo .. lo+h-1 (mod n; -n < lo < n, 0 < h <= n) of the ring
    starting at node ``base``: one piece, or two when the run passes position 0; ``b``
    bytes and ``c`` streams."""
    if lo < 0:
        lo += n
    hi = lo + h
    if hi > n:
        _mark_piece(diff_b, diff_s, base, stride, n, slot, nd2, 0, hi - n, b, c)
        hi = n
    _mark_piece(diff_b, diff_s, base, stride, n, slot, nd2, lo, hi, b, c)


@kernel(nogil=True)
def _dor_ring_sums(src, dst, nbytes, counts, dims, strides, wrap, link_bytes, link_streams,
                   flow_hops, coords):
    """:func:`route_dor` in time that follows the flows and the links, not the path lengths.

    A flow's dimension-order path is one straight run of links per dimension; each run is
    marked at its two ends in a difference array of its ring, and a running sum along every
    ring gives the loads. Every flow adds its bytes once and takes them away once, so
    integer byte counts below 2**53 sum exactly, and a link no flow crosses is exactly 0.
    ``coords`` is :func:`_node_coords`.
    """
    nd = dims.shape[0]
    nd2 = 2 * nd
    n_nodes = link_bytes.shape[0] // nd2
    diff_b = np.zeros(link_bytes.shape[0], dtype=np.float64)
    diff_s = np.zeros(link_bytes.shape[0], dtype=np.int64)
    for f in range(src.shape[0]):
        node = src[f]
        s_f = src[f]
        t = dst[f]
        cnt = counts[f]
        b = nbytes[f] * cnt
        h_total = 0
        for d in range(nd):
            n = dims[d]
            stride = strides[d]
            c = coords[s_f, d]                  # dimensions not walked yet: the source's
            tc = coords[t, d]
            h, direction, _tie = _offset(c, tc, n, wrap[d])
            base = node - c * stride
            if h > 0:
                if direction > 0:               # links leaving c, c+1, ..., c+h-1 upwards
                    _mark_run(diff_b, diff_s, base, stride, n, 2 * d, nd2, c, h, b, cnt)
                else:                           # links leaving c, c-1, ..., c-h+1 downwards
                    _mark_run(diff_b, diff_s, base, stride, n, 2 * d + 1, nd2, c - h + 1, h, b,
                              cnt)
            h_total += h
            node = base + tc * stride
        flow_hops[f] = h_total
    for d in range(nd):
        n = dims[d]
        stride = strides[d]
        for start in range(n_nodes):
            if coords[start, d] != 0:
                continue
            for slot in (2 * d, 2 * d + 1):
                acc_b = 0.0
                acc_s = 0
                for k in range(n):
                    i = (start + k * stride) * nd2 + slot
                    acc_b += diff_b[i]
                    acc_s += diff_s[i]
                    if acc_s != 0:
                        link_bytes[i] += acc_b
                        link_streams[i] += acc_s


@kernel(nogil=True)
def _dor_counts(src, dst, dims, strides, wrap, counts):
    """Number of links on the dimension-order path of every flow (0 inside a node)."""
    nd = dims.shape[0]
    for f in range(src.shape[0]):
        total = 0
        for d in range(nd):
            n = dims[d]
            h, _dir, _tie = _offset((src[f] // strides[d]) % n, (dst[f] // strides[d]) % n,
                                    n, wrap[d])
            total += h
        counts[f] = total


@kernel(nogil=True)
def _dor_fill_links(src, dst, dims, strides, wrap, indptr, links, link_of_slot):
    """Write each flow's dimension-order path as a CSR row of link ids
    (``link_of_slot[dense slot]``), through a one-path buffer."""
    longest = 0
    for d in range(dims.shape[0]):
        longest += dims[d]
    buf = np.empty(longest, dtype=np.int64)
    for f in range(src.shape[0]):
        pos = indptr[f]
        h = dor_walk(src[f], dst[f], dims, strides, wrap, buf)
        for k in range(h):
            links[pos + k] = link_of_slot[buf[k]]


@kernel(nogil=True)
def dor_link_sums(src, dst, weight, part, n_links, dims, strides, wrap, link_of_slot, hop,
                  use_hop):
    """Signed flow weights summed per (part, link) along the dimension-order walks.

    The same sums, in the same order, as adding every entry of :func:`dor_paths` (fraction
    1) in flow order, then path order: into a dense scratch of parts x links when the
    entries number at least an eighth of it, else sorted by key with a stable sort, each
    key's run added from 0. Parts must come in order (the last flow's part is the largest).

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination node of every flow.
    weight : ndarray of float64, shape (n_flows,)
        Signed weight of every flow (bytes).
    part : ndarray of int64, shape (n_flows,)
        Part of every flow.
    n_links : int
        Number of links of the machine (keys are ``part * n_links + link``).
    dims, strides : ndarray of int64, shape (ndim,)
        Sides and node-id strides of the torus/mesh.
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around.
    link_of_slot : ndarray of int, shape (n_dense_slots,)
        Link id of every dense link slot.
    hop : ndarray of bool, shape (n_links,)
        Which links count as hops (read only when ``use_hop``).
    use_hop : bool
        Whether ``hop`` applies (else every link is a hop).

    Returns
    -------
    keys : ndarray of int64
        Sorted distinct keys of every link on any walk.
    sums : ndarray of float64
        Each key's sum of weights.
    flow_hops : ndarray of float64, shape (n_flows,)
        Hops of every flow.
    """
    n = src.shape[0]
    longest = 0
    for d in range(dims.shape[0]):
        longest += dims[d]
    buf = np.empty(longest, dtype=np.int64)
    counts = np.empty(n, dtype=np.int64)
    _dor_counts(src, dst, dims, strides, wrap, counts)
    total = counts.sum()
    flow_hops = np.zeros(n, dtype=np.float64)
    n_slots = (part[n - 1] + 1) * n_links if n else 0
    dense_sums = n_slots <= 8 * total
    # a dense scratch when the entries number at least an eighth of it (as the generic
    # sums do), else the entries sorted by key
    dense = np.zeros(n_slots if dense_sums else 0, dtype=np.float64)
    seen = np.zeros(n_slots if dense_sums else 0, dtype=np.bool_)
    entry_key = np.empty(0 if dense_sums else total, dtype=np.int64)
    entry_val = np.empty(0 if dense_sums else total, dtype=np.float64)
    p = 0
    for f in range(n):
        h = dor_walk(src[f], dst[f], dims, strides, wrap, buf)
        acc = 0.0
        w = weight[f]
        base = part[f] * n_links
        for k in range(h):
            link = link_of_slot[buf[k]]
            if dense_sums:
                dense[base + link] += w
                seen[base + link] = True
            else:
                entry_key[p] = base + link
                entry_val[p] = w
                p += 1
            if use_hop:
                acc += 1.0 if hop[link] else 0.0
            else:
                acc += 1.0
        flow_hops[f] = acc
    keys = np.empty(total, dtype=np.int64)
    sums = np.empty(total, dtype=np.float64)
    m = 0
    if dense_sums:
        for key in range(n_slots):
            if seen[key]:
                keys[m] = key
                sums[m] = dense[key]
                m += 1
        return keys[:m].copy(), sums[:m].copy(), flow_hops
    order = np.argsort(entry_key, kind="mergesort")
    i = 0
    while i < total:
        key = entry_key[order[i]]
        acc = 0.0
        while i < total and entry_key[order[i]] == key:
            acc += entry_val[order[i]]
            i += 1
        keys[m] = key
        sums[m] = acc
        m += 1
    return keys[:m].copy(), sums[:m].copy(), flow_hops


@kernel(nogil=True)
def fold_resource_classes(indptr, indices, data, cap, n_links, n_nodes, dense_slot_of_link,
                          cell_of_node, n_cells, nd2):
    """A flows x resources incidence summed onto resource classes, row by row.

    Resource ``r`` is a link (``r < n_links``; class ``cell * nd2 + direction`` of its dense
    slot's node and direction), an injection port (``n_links + node``; class
    ``n_cells * nd2 + cell``) or an ejection port (``n_links + n_nodes + node``; class
    ``n_cells * (nd2 + 1) + cell``). Each row's entries of one class are added in entry
    order; a row's classes come out in the order they first appear (the max-min model adds
    up a resource's flows in flow order, whatever the order inside a row).

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_rows + 1,)
        CSR row pointers.
    indices : ndarray of int, shape (nnz,)
        Resource of every entry.
    data : ndarray of float64, shape (nnz,)
        Fraction of every entry.
    cap : ndarray of float64, shape (n_resources,)
        Capacity of every resource, bytes/s.
    n_links, n_nodes : int
        Links and nodes of the machine.
    dense_slot_of_link : ndarray of int64, shape (n_links,)
        Dense slot (``node * nd2 + direction``) of every link.
    cell_of_node : ndarray of int64, shape (n_nodes,)
        Cell node (0 .. n_cells-1) every node translates to.
    n_cells : int
        Nodes in the cell.
    nd2 : int
        Link directions per node (2 x dimensions).

    Returns
    -------
    ptr, cls, frac : ndarray
        CSR over the classes (int64 pointers, int32 classes, float64 sums; the last two
        are views of arrays sized for the input's entries).
    class_cap : ndarray of float64, shape (n_cells * (nd2 + 2),)
        Capacity of a resource of every class (``inf`` when no entry has the class).
    """
    n_rows = indptr.shape[0] - 1
    acc, used, touched, class_cap, ptr, out_cls, out_frac = _fold_arrays(
        n_cells * (nd2 + 2), n_rows, indices.shape[0])
    m = 0
    for f in range(n_rows):
        m = _fold_row(indices, data, indptr[f], indptr[f + 1], cap, n_links, n_nodes,
                      dense_slot_of_link, cell_of_node, n_cells, nd2, acc, used, touched,
                      class_cap, out_cls, out_frac, m)
        ptr[f + 1] = m
    return ptr, out_cls[:m], out_frac[:m], class_cap


@kernel(nogil=True)
def _fold_arrays(n_cls, n_rows, n_entries):
    """The work arrays of a fold onto ``n_cls`` classes (sums and marks, zero and False),
    class capacities (``inf``) and the output CSR sized for ``n_entries`` entries."""
    return (np.zeros(n_cls, dtype=np.float64), np.zeros(n_cls, dtype=np.bool_),
            np.empty(n_cls, dtype=np.int64), np.full(n_cls, np.inf),
            np.zeros(n_rows + 1, dtype=np.int64),
            np.empty(n_entries, dtype=np.int32),           # classes: fewer than 2**31
            np.empty(n_entries, dtype=np.float64))


@kernel(nogil=True)
def _fold_row(indices, data, lo, hi, cap, n_links, n_nodes, dense_slot_of_link, cell_of_node,
              n_cells, nd2, acc, used, touched, class_cap, out_cls, out_frac, m):
    """Fold the entries ``lo:hi`` of one row onto their classes (see
    :func:`fold_resource_classes`), written from ``out_cls[m]`` on; returns the next ``m``.
    ``acc`` and ``used`` are zero and False on entry and on return."""
    n_t = 0
    for k in range(lo, hi):
        r = indices[k]
        if r < n_links:
            slot = dense_slot_of_link[r]
            c = cell_of_node[slot // nd2] * nd2 + slot % nd2
        elif r < n_links + n_nodes:
            c = n_cells * nd2 + cell_of_node[r - n_links]
        else:
            c = n_cells * (nd2 + 1) + cell_of_node[r - n_links - n_nodes]
        class_cap[c] = cap[r]
        if not used[c]:
            used[c] = True
            touched[n_t] = c
            n_t += 1
        acc[c] += data[k]
    for i in range(n_t):
        c = touched[i]
        out_cls[m] = c
        out_frac[m] = acc[c]
        m += 1
        acc[c] = 0.0
        used[c] = False
    return m


@kernel(nogil=True)
def template_fold(src, dst, tid, ptr, rel, slots, shares, dims, strides, link_of_slot, use_nic,
                  cap, n_links, n_nodes, dense_slot_of_link, cell_of_node, n_cells, nd2):
    """:func:`fold_resource_classes` of the minimal-adaptive rows of flows ``src -> dst``
    (their templates, :func:`adaptive_templates`), each row's links followed, with
    ``use_nic``, by its injection and ejection ports, as
    :func:`rankmap.timing.model.resource_incidence` lays them out: the same classes and
    sums, added in the same order, without the rows' link entries ever stored (one row at a
    time).

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_rows,)
        Source and destination node of every row (flow group).
    tid, ptr, rel, slots, shares : ndarray
        The rows' templates (:func:`adaptive_templates` of ``src``, ``dst``).
    dims, strides : ndarray of int64
        The torus.
    link_of_slot : ndarray of int
        Link id of every dense slot.
    use_nic : bool
        Whether rows between two nodes also use their ports.
    cap, n_links, n_nodes, dense_slot_of_link, cell_of_node, n_cells, nd2
        As :func:`fold_resource_classes` takes them.

    Returns
    -------
    ptr, cls, frac, class_cap : ndarray
        As :func:`fold_resource_classes` returns them.
    """
    n_rows = src.shape[0]
    nd = dims.shape[0]
    longest = 0
    total = 0
    for f in range(n_rows):
        size = ptr[tid[f] + 1] - ptr[tid[f]] + (2 if use_nic and src[f] != dst[f] else 0)
        longest = max(longest, size)
        total += size
    row_idx = np.empty(longest, dtype=np.int64)
    row_val = np.empty(longest, dtype=np.float64)
    sc = np.zeros(nd, dtype=np.int64)
    acc, used, touched, class_cap, out_ptr, out_cls, out_frac = _fold_arrays(
        n_cells * (nd2 + 2), n_rows, total)
    m = 0
    for f in range(n_rows):
        t = tid[f]
        k = _template_row(src[f], t, ptr, rel, slots, dims, strides, link_of_slot, sc,
                          row_idx)
        row_val[:k] = shares[ptr[t]:ptr[t + 1]]
        if use_nic and src[f] != dst[f]:
            row_idx[k] = n_links + src[f]
            row_val[k] = 1.0
            row_idx[k + 1] = n_links + n_nodes + dst[f]
            row_val[k + 1] = 1.0
            k += 2
        m = _fold_row(row_idx, row_val, 0, k, cap, n_links, n_nodes, dense_slot_of_link,
                      cell_of_node, n_cells, nd2, acc, used, touched, class_cap, out_cls,
                      out_frac, m)
        out_ptr[f + 1] = m
    return out_ptr, out_cls[:m], out_frac[:m], class_cap


@kernel(nogil=True)
def class_link_sums(indptr, links, frac, weight, count, link_class, n_cls):
    """Bytes (``frac * weight[row]``) and streams (``count[row]``) of every route entry summed
    per link class, in entry order.

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_rows + 1,)
        CSR row pointers of the routes.
    links : ndarray of int, shape (nnz,)
        Link of every entry.
    frac : ndarray of float64, shape (nnz,)
        Share of the row's bytes on the link.
    weight : ndarray of float64, shape (n_rows,)
        Bytes of every row (all its flows).
    count : ndarray of float64, shape (n_rows,)
        Flows of every row.
    link_class : ndarray of int64, shape (n_links,)
        Class of every link.
    n_cls : int
        Number of classes.

    Returns
    -------
    class_bytes, class_streams : ndarray of float64, shape (n_cls,)
        Sums per class.
    """
    class_bytes = np.zeros(n_cls, dtype=np.float64)
    class_streams = np.zeros(n_cls, dtype=np.float64)
    for f in range(indptr.shape[0] - 1):
        w = weight[f]
        c = count[f]
        for k in range(indptr[f], indptr[f + 1]):
            cl = link_class[links[k]]
            class_bytes[cl] += frac[k] * w
            class_streams[cl] += c
    return class_bytes, class_streams


@kernel(nogil=True)
def template_class_sums(src, tid, ptr, rel, slots, shares, dims, strides, link_of_slot, weight,
                        count, link_class, n_cls):
    """:func:`class_link_sums` of the minimal-adaptive rows of flows from ``src`` (their
    templates, :func:`adaptive_templates`): the same sums in the same order, without the
    rows' link entries ever stored.

    Parameters
    ----------
    src : ndarray of int64, shape (n_rows,)
        Source node of every row (flow group).
    tid, ptr, rel, slots, shares : ndarray
        The rows' templates.
    dims, strides : ndarray of int64
        The torus.
    link_of_slot : ndarray of int
        Link id of every dense slot.
    weight, count, link_class, n_cls
        As :func:`class_link_sums` takes them.

    Returns
    -------
    class_bytes, class_streams : ndarray of float64, shape (n_cls,)
        Sums per class.
    """
    nd = dims.shape[0]
    sc = np.zeros(nd, dtype=np.int64)
    class_bytes = np.zeros(n_cls, dtype=np.float64)
    class_streams = np.zeros(n_cls, dtype=np.float64)
    longest = 0
    for t in range(ptr.shape[0] - 1):
        longest = max(longest, ptr[t + 1] - ptr[t])
    row = np.empty(longest, dtype=np.int64)
    for f in range(src.shape[0]):
        w = weight[f]
        c = count[f]
        t = tid[f]
        n = _template_row(src[f], t, ptr, rel, slots, dims, strides, link_of_slot, sc, row)
        for k in range(n):
            cl = link_class[row[k]]
            class_bytes[cl] += shares[ptr[t] + k] * w
            class_streams[cl] += c
    return class_bytes, class_streams


def dor_paths(src, dst, dims, strides, wrap, link_of_slot):
    """CSR arrays ``(indptr, links, fractions)`` of the dimension-order paths.

    Flows inside a node have an empty row. Link ids are written straight from the walk
    (``link_of_slot[dense slot]``), int32 when they fit, and the fractions, all 1 (a flow
    takes one path), are a read-only view of a single 1.0: no array of dense slots, no
    gathered copy, no 8 bytes per entry.

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination node of every flow.
    dims : ndarray of int64, shape (ndim,)
        Side of the torus/mesh in every dimension (nodes).
    strides : ndarray of int64, shape (ndim,)
        Node-id stride of every dimension (``node = sum(coord[d] * strides[d])``).
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around (torus) or not (mesh).
    link_of_slot : ndarray of int
        Link id of every dense slot (``node*2*ndim + 2*dim + (0 for +, 1 for -)``).

    Returns
    -------
    indptr : ndarray of int64, shape (n_flows + 1,)
        Row f of the result is ``links[indptr[f]:indptr[f+1]]``.
    links : ndarray of int32 (int64 above 2**31 slots)
        Directed links used by each flow, in path order.
    fractions : ndarray of float64
        All 1.0, read-only: a flow takes its whole dimension-order path.
    """
    src = np.ascontiguousarray(src, dtype=np.int64)
    dst = np.ascontiguousarray(dst, dtype=np.int64)
    counts = np.zeros(len(src), dtype=np.int64)
    _dor_counts(src, dst, dims, strides, wrap, counts)
    indptr = np.zeros(len(src) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    check_limit(int(indptr[-1]), "route_entries",
                f"dimension-order routing of {len(src):,} node pairs on a "
                + "x".join(str(int(n)) for n in dims) + " grid")
    table = np.asarray(link_of_slot)
    # link ids are below the number of slots: int32 when that count fits (no copy of the
    # machine-sized table: a refinement calls this for a few flows at a time)
    links = np.empty(indptr[-1], dtype=np.int32 if table.size < 2**31 else np.int64)
    _dor_fill_links(src, dst, dims, strides, wrap, indptr, links, table)
    return indptr, links, np.broadcast_to(np.float64(1.0), links.shape)


@kernel(nogil=True)
def _flow_offsets(src, dst, dims, strides, wrap, flow_hops, codes, sizes):
    """Hop count, a code of the offset vector (equal codes = same split) and the template
    size bound of every flow.

    The bound is exact without ties: the lattice of partial progress has prod(h_d + 1)
    states, and a state passes shares to each dimension with progress left, so dimension d
    contributes h_d x prod(others' states); a tie dimension counts 2 h_d + 1 states and both
    directions' links. It is a float: it cannot overflow.
    """
    nd = dims.shape[0]
    for f in range(src.shape[0]):
        code = 0
        total = 0
        states = 1.0
        links = 0.0
        for d in range(nd):
            n = dims[d]
            sc = (src[f] // strides[d]) % n
            tc = (dst[f] // strides[d]) % n
            h, _dir, tie = _offset(sc, tc, n, wrap[d])
            total += h
            rel = (tc - sc) % n if wrap[d] else tc - sc + n - 1
            code = code * (2 * n) + rel
            k = 2.0 * h + 1.0 if tie else h + 1.0
            # the links of the dimensions so far, over this one's states, plus its own
            links = links * k + (2.0 * h if tie else 1.0 * h) * states
            states *= k
        flow_hops[f] = total
        codes[f] = code
        sizes[f] = links


@kernel(nogil=True)
def adaptive_code(cs, ct, dims, wrap):
    """The offset code of the flow between two nodes given by their coordinates (the codes of
    :func:`adaptive_templates`: equal codes, same template) and its hop count.

    Parameters
    ----------
    cs, ct : ndarray of int64, shape (ndim,)
        Coordinates of the source and destination nodes.
    dims : ndarray of int64, shape (ndim,)
        Sides of the torus or mesh (nodes).
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around.

    Returns
    -------
    code : int
        In ``0 .. prod(2 * dims) - 1``.
    hops : int
        Links on a minimal path.
    """
    code = 0
    hops = 0
    for d in range(dims.shape[0]):
        n = dims[d]
        h, _dir, _tie = _offset(cs[d], ct[d], n, wrap[d])
        hops += h
        if wrap[d]:
            rel = ct[d] - cs[d]
            if rel < 0:
                rel += n
        else:
            rel = ct[d] - cs[d] + n - 1
        code = code * (2 * n) + rel
    return code, hops


@kernel(nogil=True)
def adaptive_template(s, t, dims, strides, wrap):
    """Equal-split shares of one flow from node s to node t (its template).

    Parameters
    ----------
    s, t, dims, strides, wrap
        As :func:`dor_takes_slot`.

    Returns
    -------
    rel : ndarray of int64, shape (k, ndim)
        For each link with a share, its source node's coordinate offsets from s (in steps
        taken, may be negative).
    slots : ndarray of int64, shape (k,)
        Its slot ``2*dim + (0 for +, 1 for -)`` at that node.
    shares : ndarray of float64, shape (k,)
        The fraction (0..1) of the flow it carries.
    """
    nd = dims.shape[0]
    hops = np.zeros(nd, dtype=np.int64)
    dirs = np.zeros(nd, dtype=np.int64)
    ties = np.zeros(nd, dtype=np.bool_)
    size = np.zeros(nd, dtype=np.int64)
    radix = np.zeros(nd, dtype=np.int64)
    state = np.zeros(nd, dtype=np.int64)
    offs = np.zeros(nd, dtype=np.int64)
    total = 1
    n_ties = 0
    for d in range(nd):
        n = dims[d]
        h, direction, tie = _offset((s // strides[d]) % n, (t // strides[d]) % n, n, wrap[d])
        hops[d] = h
        dirs[d] = direction
        ties[d] = tie
        n_ties += 1 if tie else 0
        size[d] = 2 * h if tie else h + 1
        radix[d] = total
        total *= size[d]
    weights = np.zeros(total, dtype=np.float64)
    weights[0] = 1.0
    cap = total * (nd + n_ties)
    rel = np.zeros((cap, nd), dtype=np.int64)
    slots = np.zeros(cap, dtype=np.int64)
    share_out = np.zeros(cap, dtype=np.float64)
    k_out = 0
    for k in range(total):
        w = weights[k]
        if w == 0.0:
            continue
        productive = 0
        rem = k
        for d in range(nd):
            st = rem % size[d]
            rem //= size[d]
            state[d] = st
            h = hops[d]
            if ties[d]:
                if st == 0:
                    offs[d] = 0
                    productive += 2
                elif st == 2 * h - 1:
                    offs[d] = h
                elif st < h:
                    offs[d] = st
                    productive += 1
                else:
                    offs[d] = -(st - h + 1)
                    productive += 1
            else:
                offs[d] = st * dirs[d]
                if st < h:
                    productive += 1
        if productive == 0:
            continue
        share = w / productive
        for d in range(nd):
            st = state[d]
            h = hops[d]
            n_links = 1
            if ties[d]:
                done = 2 * h - 1
                if st == done:
                    continue
                if st == 0:
                    n_links = 2
                    nxt_a = 1 if h > 1 else done
                    nxt_b = h if h > 1 else done
                    slot_a = 0
                elif st < h:
                    nxt_a = st + 1 if st + 1 <= h - 1 else done
                    slot_a = 0
                else:
                    nxt_a = st + 1 if st + 1 <= 2 * h - 2 else done
                    slot_a = 1
            else:
                if st >= h:
                    continue
                nxt_a = st + 1
                slot_a = 0 if dirs[d] > 0 else 1
            for j in range(n_links):
                slot = slot_a if j == 0 else 1
                nxt = nxt_a if j == 0 else nxt_b
                for e in range(nd):
                    rel[k_out, e] = offs[e]
                slots[k_out] = 2 * d + slot
                share_out[k_out] = share
                k_out += 1
                weights[k + (nxt - st) * radix[d]] += share
    return rel[:k_out], slots[:k_out], share_out[:k_out]


@kernel(nogil=True)
def _scatter_templates(src, nbytes, count, tid, ptr, rel, slots, shares, dims, strides,
                       link_bytes, link_streams):
    """Add template ``tid[f]`` at source ``src[f]`` with ``nbytes[f]`` bytes, ``count[f]`` streams.

    Flow-major (a flow's links are near its source, which keeps the updates cache-local). When
    a template's bounding box fits around the source without wrapping, each entry is a single
    precomputed offset in the dense link array.
    """
    nd = dims.shape[0]
    n_t = ptr.shape[0] - 1
    lin = np.zeros(rel.shape[0], dtype=np.int64)
    lo = np.zeros((n_t, nd), dtype=np.int64)
    hi = np.zeros((n_t, nd), dtype=np.int64)
    for t in range(n_t):
        for e in range(ptr[t], ptr[t + 1]):
            off = 0
            for d in range(nd):
                r = rel[e, d]
                off += r * strides[d]
                if e == ptr[t] or r < lo[t, d]:
                    lo[t, d] = r
                if e == ptr[t] or r > hi[t, d]:
                    hi[t, d] = r
            lin[e] = off * 2 * nd + slots[e]
    sc = np.zeros(nd, dtype=np.int64)
    for f in range(src.shape[0]):
        s = src[f]
        t = tid[f]
        inside = True
        for d in range(nd):
            sc[d] = (s // strides[d]) % dims[d]
            if sc[d] + lo[t, d] < 0 or sc[d] + hi[t, d] >= dims[d]:
                inside = False
        b = nbytes[f]
        c = count[f]
        if inside:
            base = s * 2 * nd
            for e in range(ptr[t], ptr[t + 1]):
                li = base + lin[e]
                link_bytes[li] += shares[e] * b
                link_streams[li] += c
            continue
        for e in range(ptr[t], ptr[t + 1]):
            node = 0
            for d in range(nd):
                x = sc[d] + rel[e, d]
                n = dims[d]
                if x >= n:
                    x -= n
                elif x < 0:
                    x += n
                node += x * strides[d]
            li = node * 2 * nd + slots[e]
            link_bytes[li] += shares[e] * b
            link_streams[li] += c


def adaptive_templates(src, dst, dims, strides, wrap, use_cap: str = "route_work",
                       cache=None):
    """Templates of the distinct offset vectors among flows (src, dst).

    Returns (tid, ptr, rel, slots, shares, hops): flow f uses template ``tid[f]`` whose
    entries are ``ptr[tid]:ptr[tid+1]`` of rel/slots/shares; ``hops[f]`` is its hop count.
    Flows inside a node get an empty template. Before anything is built, the templates'
    entries are checked against the cap ``route_entries``, and the entries of all flows'
    templates together (what the caller will add up or store) against ``use_cap``. With a
    ``cache``, a template already worked out for the same offset code on this machine is
    taken from it (the same arrays), and new ones are kept in it.

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination node of every flow.
    dims : ndarray of int64, shape (ndim,)
        Side of the torus/mesh in every dimension (nodes).
    strides : ndarray of int64, shape (ndim,)
        Node-id stride of every dimension (``node = sum(coord[d] * strides[d])``).
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around (torus) or not (mesh).
    use_cap : str
        The :data:`rankmap.validate.LIMITS` cap of the flows' templates together:
        ``"route_work"`` when they are added into link loads, ``"route_entries"`` when each
        flow's row is stored.
    cache : TemplateCache, optional
        Templates of this machine by offset code
        (:class:`rankmap.kernels.template_cache.TemplateCache`).

    Returns
    -------
    tid : ndarray of int64, shape (n_flows,)
        Template of every flow (flows with the same offset vector share one).
    ptr : ndarray of int64, shape (n_templates + 1,)
        Entries of template t are ``ptr[t]:ptr[t+1]`` of ``rel``, ``slots`` and ``shares``.
    rel : ndarray of int64, shape (n_entries, ndim)
        Coordinate offsets (steps, may be negative) of each link's source node from the flow's
        source node.
    slots : ndarray of int64, shape (n_entries,)
        Slot ``2*dim + (0 for +, 1 for -)`` of each link at that node.
    shares : ndarray of float64, shape (n_entries,)
        Fraction (0..1) of the flow's bytes crossing each link.
    hops : ndarray of int64, shape (n_flows,)
        Hop count of every flow (links on a minimal path).
    """
    hops = np.zeros(len(src), dtype=np.int64)
    codes = np.zeros(len(src), dtype=np.int64)
    sizes = np.zeros(len(src), dtype=np.float64)
    _flow_offsets(src, dst, dims, strides, wrap, hops, codes, sizes)
    uniq, first, tid = np.unique(codes, return_index=True, return_inverse=True)
    what = (f"minimal adaptive routing of {len(src):,} node pairs on a "
            + "x".join(str(int(n)) for n in dims) + " grid")
    check_limit(float(sizes[first].sum()), "route_entries", what)
    check_limit(float(sizes.sum()), use_cap, what)
    templates = []
    for code, f in zip(uniq.tolist(), first.tolist()):
        template = None if cache is None else cache.get(code)
        if template is None:
            template = adaptive_template(src[f], dst[f], dims, strides, wrap)
            if cache is not None:
                cache.put(code, template)
        templates.append(template)
    ptr = np.zeros(len(uniq) + 1, dtype=np.int64)
    np.cumsum([len(t[1]) for t in templates], out=ptr[1:])
    nd = len(dims)
    rel = (np.concatenate([t[0] for t in templates]) if templates
           else np.zeros((0, nd), dtype=np.int64))
    slots = (np.concatenate([t[1] for t in templates]) if templates
             else np.zeros(0, dtype=np.int64))
    shares = np.concatenate([t[2] for t in templates]) if templates else np.zeros(0)
    return tid.astype(np.int64), ptr, np.ascontiguousarray(rel), slots, shares, hops


def route_adaptive(src, dst, nbytes, counts, dims, strides, wrap, link_bytes, link_streams,
                   flow_hops):
    """Add minimal-adaptive (equal split per hop) flows into the dense link arrays.

    Flows between the same two nodes are merged (bytes and stream counts add), then each
    distinct offset's split is computed once and scattered (see module docstring).

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination node of every flow.
    nbytes : ndarray of float64, shape (n_flows,)
        Size of every flow, bytes.
    counts : ndarray of int64, shape (n_flows,)
        Multiplicity of every flow (entry f stands for counts[f] identical flows).
    dims : ndarray of int64, shape (ndim,)
        Side of the torus/mesh in every dimension (nodes).
    strides : ndarray of int64, shape (ndim,)
        Node-id stride of every dimension (``node = sum(coord[d] * strides[d])``).
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around (torus) or not (mesh).
    link_bytes : ndarray of float64, shape (n_nodes * 2 * ndim,)
        Bytes crossing each dense link slot; the flows' shares are added in place (bytes).
    link_streams : ndarray of int64, shape (n_nodes * 2 * ndim,)
        Number of flows with a share on each link slot; incremented in place.
    flow_hops : ndarray, shape (n_flows,)
        Set in place to each flow's hop count (links on its minimal path; 0 inside a node).
    """
    if len(src) == 0:
        return
    n_nodes = int(np.prod(dims))
    key = src * n_nodes + dst
    pairs, inverse = np.unique(key, return_inverse=True)
    inverse = inverse.reshape(-1)
    merged_bytes = np.bincount(inverse, weights=nbytes * counts, minlength=len(pairs))
    count = np.bincount(inverse, weights=counts, minlength=len(pairs))
    psrc, pdst = pairs // n_nodes, pairs % n_nodes
    tid, ptr, rel, slots, shares, hops = adaptive_templates(psrc, pdst, dims, strides, wrap)
    _scatter_templates(psrc, merged_bytes, np.rint(count).astype(np.int64), tid, ptr, rel, slots,
                       shares, dims, strides, link_bytes, link_streams)
    flow_hops[:] = hops[inverse]


@kernel(nogil=True)
def _template_fill(src, tid, ptr, rel, slots, shares, dims, strides, link_of_slot, indptr,
                   indices, data):
    """Write the templates ``tid[f]`` placed at ``src[f]`` as CSR rows (``indptr`` given):
    the link id (``link_of_slot[dense slot]``) and share of every entry."""
    sc = np.zeros(dims.shape[0], dtype=np.int64)
    for f in range(src.shape[0]):
        t = tid[f]
        _template_row(src[f], t, ptr, rel, slots, dims, strides, link_of_slot, sc,
                      indices[indptr[f]:indptr[f + 1]])
        data[indptr[f]:indptr[f + 1]] = shares[ptr[t]:ptr[t + 1]]


@kernel(nogil=True)
def placed_slot(sc, rel, e, slot, dims, strides):
    """The dense slot of a template's entry ``e`` placed at a node.

    Parameters
    ----------
    sc : ndarray of int64, shape (ndim,)
        The node's coordinates.
    rel : ndarray of int64, shape (entries, ndim)
        The template's offsets (:func:`adaptive_template`).
    e : int
        The entry.
    slot : int
        Its slot ``2*dim + (0 for +, 1 for -)``.
    dims, strides : ndarray of int64, shape (ndim,)
        Sides and node-id strides of the torus/mesh.

    Returns
    -------
    int
        ``node*2*ndim + slot`` of the entry's link's node.
    """
    nd = dims.shape[0]
    at = 0
    for d in range(nd):
        x = sc[d] + rel[e, d]
        if x >= dims[d]:
            x -= dims[d]
        elif x < 0:
            x += dims[d]
        at += x * strides[d]
    return at * 2 * nd + slot


@kernel(nogil=True)
def _template_row(node, t, ptr, rel, slots, dims, strides, link_of_slot, sc, out):
    """Write the link ids of template ``t`` placed at ``node`` into ``out`` (``sc``: a
    scratch array of one coordinate per dimension); return how many."""
    nd = dims.shape[0]
    for d in range(nd):
        sc[d] = (node // strides[d]) % dims[d]
    k = 0
    for e in range(ptr[t], ptr[t + 1]):
        out[k] = link_of_slot[placed_slot(sc, rel, e, slots[e], dims, strides)]
        k += 1
    return k


def adaptive_paths(src, dst, dims, strides, wrap, link_of_slot=None, cache=None):
    """CSR arrays ``(indptr, dense_slots, fractions)`` of the minimal-adaptive splits: the
    per-offset templates (:func:`adaptive_templates`) placed at each flow's source, so that
    summing ``fraction x bytes`` per link gives :func:`route_adaptive`'s link bytes. With
    ``link_of_slot`` the rows hold link ids instead (int32 when they fit), written directly.

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination node of every flow.
    dims : ndarray of int64, shape (ndim,)
        Side of the torus/mesh in every dimension (nodes).
    strides : ndarray of int64, shape (ndim,)
        Node-id stride of every dimension (``node = sum(coord[d] * strides[d])``).
    wrap : ndarray of bool, shape (ndim,)
        Whether each dimension wraps around (torus) or not (mesh).
    link_of_slot : ndarray of int, optional
        Link id of every dense slot.
    cache : TemplateCache, optional
        Templates of this machine by offset code (:func:`adaptive_templates`).

    Returns
    -------
    indptr : ndarray of int64, shape (n_flows + 1,)
        Row f of the result is ``dense_slots[indptr[f]:indptr[f+1]]``.
    dense_slots : ndarray of int64 (int32 or int64 link ids with ``link_of_slot``)
        Dense link slots (``node*2*ndim + 2*dim + (0 for +, 1 for -)``) used by each flow.
    fractions : ndarray of float64
        Fraction (0..1) of the flow's bytes crossing each listed link.
    """
    src = np.ascontiguousarray(src, dtype=np.int64)
    dst = np.ascontiguousarray(dst, dtype=np.int64)
    tid, ptr, rel, slots, shares, _hops = adaptive_templates(src, dst, dims, strides, wrap,
                                                             "route_entries", cache)
    sizes = (ptr[1:] - ptr[:-1])[tid]
    indptr = np.zeros(len(src) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    if link_of_slot is None:
        link_of_slot = np.arange(int(np.prod(dims)) * 2 * len(dims), dtype=np.int64)
        kind = np.int64
    else:
        link_of_slot = np.asarray(link_of_slot, dtype=np.int64)
        kind = np.int32 if link_of_slot.max(initial=0) < 2**31 else np.int64
    indices = np.empty(indptr[-1], dtype=kind)
    data = np.empty(indptr[-1], dtype=np.float64)
    _template_fill(src, tid, ptr, rel, slots, shares, dims, strides, link_of_slot, indptr,
                   indices, data)
    return indptr, indices, data
