"""Compiled steps of the search for a phase's translation symmetry on a torus
(:func:`rankmap.routing.symmetry.translation_classes`).

:func:`translation_signature` gives every flow group its offset (the node at the same
displacement from node 0) and every node an order-free hash of its groups, in one pass over
the groups; :func:`match_translates` then checks, for a candidate period, that every node
sends exactly the groups of the cell node it translates to, and names each group's
representative. The hash (splitmix64's finaliser) only proposes periods: a cell is taken only
when every group matches exactly, so a collision can cost the symmetry, never a wrong one.
"""

from __future__ import annotations

import numpy as np

from .jit import kernel

__all__ = ["translation_signature", "match_translates"]

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@kernel(nogil=True, inline="always")
def _mix(x):
    """splitmix64's finaliser of an unsigned 64-bit integer, wrapping."""
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@kernel(nogil=True)
def translation_signature(src, dst, nbytes_bits, mult_bits, dims, strides, n_nodes):
    """Offsets of the flow groups and every node's order-free hash of its groups.

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_groups,)
        Source and destination node of every group.
    nbytes_bits, mult_bits : ndarray of uint64, shape (n_groups,)
        The float64 size (bytes) and multiplicity of every group, as their bit patterns.
    dims, strides : ndarray of int64, shape (ndim,)
        Sides and node-id strides of the torus.
    n_nodes : int
        Nodes of the torus.

    Returns
    -------
    offset : ndarray of int64, shape (n_groups,)
        ``sum(((c_dst - c_src) mod dims) * strides)``: the node at the group's displacement
        from node 0.
    signature : ndarray of uint64, shape (n_nodes,)
        Per node, the wrapping sum of ``mix(offset ^ mix(size) ^ (mix(multiplicity) << 1))``
        over its groups (0 for a node that sends none).
    """
    n = src.shape[0]
    nd = dims.shape[0]
    coords = np.empty((n_nodes, nd), dtype=np.int64)
    for v in range(n_nodes):
        for d in range(nd):
            coords[v, d] = (v // strides[d]) % dims[d]
    offset = np.empty(n, dtype=np.int64)
    sig = np.zeros(n_nodes, dtype=np.uint64)
    for f in range(n):
        o = 0
        for d in range(nd):
            x = coords[dst[f], d] - coords[src[f], d]
            if x < 0:
                x += dims[d]
            o += x * strides[d]
        offset[f] = o
        h = _mix(np.uint64(o) ^ _mix(nbytes_bits[f]) ^ (_mix(mult_bits[f]) << np.uint64(1)))
        sig[src[f]] += h
    return offset, sig


@kernel(nogil=True)
def match_translates(src, offset, nbytes, mult, cell_node, n_nodes):
    """Whether every node sends the groups of the cell node it translates to, and the
    representative of every group.

    Parameters
    ----------
    src : ndarray of int64, shape (n_groups,)
        Source node of every group, sorted.
    offset : ndarray of int64, shape (n_groups,)
        :func:`translation_signature`'s offset of every group.
    nbytes, mult : ndarray of float64, shape (n_groups,)
        Size (bytes) and multiplicity of every group.
    cell_node : ndarray of int64, shape (n_nodes,)
        The node of the cell every node translates to (itself for a cell node).
    n_nodes : int
        Nodes of the torus.

    Returns
    -------
    ok : bool
        Every node sends as many groups as its cell node, each to the same offset with the
        same size and multiplicity as one of the cell node's, and no cell node sends two
        groups to one node. False: no symmetry with this cell.
    rows : ndarray of int64
        The groups sent by cell nodes, in group order (the representatives).
    class_of : ndarray of int64, shape (n_groups,)
        Index into ``rows`` of every group's representative (meaningful when ``ok``).
    """
    n = src.shape[0]
    ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    for f in range(n):
        ptr[src[f] + 1] += 1
    for v in range(n_nodes):
        ptr[v + 1] += ptr[v]
    # the representatives: groups of cell nodes, in group order (src is sorted)
    rpos = np.zeros(n_nodes, dtype=np.int64)
    n_rows = 0
    for v in range(n_nodes):
        if cell_node[v] == v:
            rpos[v] = n_rows
            n_rows += ptr[v + 1] - ptr[v]
    rows = np.empty(n_rows, dtype=np.int64)
    sorted_at = np.empty(n_rows, dtype=np.int64)   # a cell node's groups by offset
    class_of = np.empty(n, dtype=np.int64)
    for v in range(n_nodes):
        if cell_node[v] != v:
            continue
        lo, hi, base = ptr[v], ptr[v + 1], rpos[v]
        for g in range(lo, hi):
            rows[base + g - lo] = g
        # two sizes to one node: the search below finds the first, so the second's size
        # differs and the cell is refused
        order = np.argsort(offset[lo:hi], kind="mergesort")
        for k in range(hi - lo):
            sorted_at[base + k] = lo + order[k]
    for v in range(n_nodes):
        c = cell_node[v]
        lo, hi = ptr[v], ptr[v + 1]
        clo, chi, base = ptr[c], ptr[c + 1], rpos[c]
        if hi - lo != chi - clo:
            return False, rows, class_of
        for f in range(lo, hi):
            a, b = 0, chi - clo                        # binary search among c's offsets
            while a < b:
                mid = (a + b) // 2
                if offset[sorted_at[base + mid]] < offset[f]:
                    a = mid + 1
                else:
                    b = mid
            if a == chi - clo:
                return False, rows, class_of
            g = sorted_at[base + a]
            if offset[g] != offset[f] or nbytes[g] != nbytes[f] or mult[g] != mult[f]:
                return False, rows, class_of
            class_of[f] = base + g - clo
    return True, rows, class_of
