"""Per-flow paths on a torus or mesh: the flow x link incidence used by the time model.

:func:`path_incidence` returns, in CSR form (``indptr``, ``indices``, ``data``), for every
flow ``f`` the dense link slots it crosses (``node*2*ndim + 2*dim + (0 for +, 1 for -)``, the
layout of :mod:`rankmap.routing.torus_kernels`) and the fraction of the flow's bytes on each.

The rules are exactly those of :mod:`rankmap.routing.torus_kernels`: ``dor`` gives each link
of the single dimension-order path the fraction 1; ``adaptive`` walks the same lattice of
partial progress and gives each link the share of the flow that reaches it (the fractions
leaving a node sum to what arrived there). Summing ``data * bytes`` per link therefore
reproduces the link bytes of :meth:`rankmap.machines.Torus.route`.

Within one flow every (lattice state, dimension, direction) step uses a different directed
link (two states of one flow are never at the same node), so a row has no repeated column.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .torus_kernels import _offset


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _dor_fill(src, dst, dims, strides, wrap, indptr, indices, data):
    """Write the dense link slots of each flow's dimension-order path (fraction 1 each)."""
    nd = dims.shape[0]
    for f in range(src.shape[0]):
        pos = indptr[f]
        node = src[f]
        t = dst[f]
        for d in range(nd):
            n = dims[d]
            stride = strides[d]
            c = (node // stride) % n
            h, direction, _tie = _offset(c, (t // stride) % n, n, wrap[d])
            slot = 2 * d + (0 if direction > 0 else 1)
            for _ in range(h):
                indices[pos] = node * 2 * nd + slot
                data[pos] = 1.0
                pos += 1
                c2 = c + direction
                if c2 == n:
                    c2 = 0
                elif c2 < 0:
                    c2 = n - 1
                node += (c2 - c) * stride
                c = c2


@njit(cache=True, nogil=True)
def _adaptive_walk(s, t, dims, strides, wrap, weights, indices, data, pos, write):
    """Walk one flow's progress lattice; write (slot, fraction) pairs from ``pos`` when
    ``write``; return the number of pairs."""
    nd = dims.shape[0]
    hops = np.empty(nd, dtype=np.int64)
    dirs = np.empty(nd, dtype=np.int64)
    ties = np.empty(nd, dtype=np.bool_)
    size = np.empty(nd, dtype=np.int64)
    radix = np.empty(nd, dtype=np.int64)
    src_c = np.empty(nd, dtype=np.int64)
    state = np.empty(nd, dtype=np.int64)
    total = 1
    for d in range(nd):
        n = dims[d]
        src_c[d] = (s // strides[d]) % n
        h, direction, tie = _offset(src_c[d], (t // strides[d]) % n, n, wrap[d])
        hops[d] = h
        dirs[d] = direction
        ties[d] = tie
        size[d] = 2 * h if tie else h + 1
        radix[d] = total
        total *= size[d]
    weights[:total] = 0.0
    weights[0] = 1.0
    count = 0
    for k in range(total):
        w = weights[k]
        if w == 0.0:
            continue
        node = 0
        productive = 0
        rem = k
        for d in range(nd):
            st = rem % size[d]
            rem //= size[d]
            state[d] = st
            h = hops[d]
            if ties[d]:
                if st == 0:
                    off = 0
                    productive += 2
                elif st == 2 * h - 1:
                    off = h
                elif st < h:
                    off = st
                    productive += 1
                else:
                    off = -(st - h + 1)
                    productive += 1
            else:
                off = st * dirs[d]
                if st < h:
                    productive += 1
            node += ((src_c[d] + off) % dims[d]) * strides[d]
        if productive == 0:
            continue
        share = w / productive
        for d in range(nd):
            st = state[d]
            h = hops[d]
            if ties[d]:
                done = 2 * h - 1
                if st == done:
                    continue
                if st == 0:
                    nxt_plus = 1 if h > 1 else done
                    nxt_minus = h if h > 1 else done
                    if write:
                        indices[pos + count] = node * 2 * nd + 2 * d
                        data[pos + count] = share
                        indices[pos + count + 1] = node * 2 * nd + 2 * d + 1
                        data[pos + count + 1] = share
                    count += 2
                    weights[k + (nxt_plus - st) * radix[d]] += share
                    weights[k + (nxt_minus - st) * radix[d]] += share
                    continue
                if st < h:
                    slot = 0
                    nxt = st + 1 if st + 1 <= h - 1 else done
                else:
                    slot = 1
                    nxt = st + 1 if st + 1 <= 2 * h - 2 else done
            else:
                if st >= h:
                    continue
                slot = 0 if dirs[d] > 0 else 1
                nxt = st + 1
            if write:
                indices[pos + count] = node * 2 * nd + 2 * d + slot
                data[pos + count] = share
            count += 1
            weights[k + (nxt - st) * radix[d]] += share
    return count


@njit(cache=True, nogil=True)
def _lattice_size(s, t, dims, strides, wrap):
    total = 1
    for d in range(dims.shape[0]):
        n = dims[d]
        h, _dir, tie = _offset((s // strides[d]) % n, (t // strides[d]) % n, n, wrap[d])
        total *= (2 * h) if tie else (h + 1)
    return total


@njit(cache=True, nogil=True)
def _adaptive_csr(src, dst, dims, strides, wrap):
    """CSR arrays (indptr, dense slots, fractions) of minimal-adaptive routing."""
    n = src.shape[0]
    largest = 1
    for f in range(n):
        sz = _lattice_size(src[f], dst[f], dims, strides, wrap)
        if sz > largest:
            largest = sz
    weights = np.zeros(largest, dtype=np.float64)
    dummy_i = np.zeros(1, dtype=np.int64)
    dummy_d = np.zeros(1, dtype=np.float64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    for f in range(n):
        c = 0
        if src[f] != dst[f]:
            c = _adaptive_walk(src[f], dst[f], dims, strides, wrap, weights, dummy_i, dummy_d,
                               0, False)
        indptr[f + 1] = indptr[f] + c
    indices = np.empty(indptr[n], dtype=np.int64)
    data = np.empty(indptr[n], dtype=np.float64)
    for f in range(n):
        if src[f] != dst[f]:
            _adaptive_walk(src[f], dst[f], dims, strides, wrap, weights, indices, data,
                           indptr[f], True)
    return indptr, indices, data


def path_incidence(src, dst, dims, strides, wrap, routing: str):
    """CSR arrays ``(indptr, dense_slots, fractions)`` of the flows (src[f] -> dst[f]).

    ``routing`` is ``"dor"`` or ``"adaptive"``; fractions are unitless (share of the flow's
    bytes carried by the link). Flows inside a node have an empty row.
    """
    src = np.ascontiguousarray(src, dtype=np.int64)
    dst = np.ascontiguousarray(dst, dtype=np.int64)
    if routing == "dor":
        counts = np.zeros(len(src), dtype=np.int64)
        _dor_counts(src, dst, dims, strides, wrap, counts)
        indptr = np.zeros(len(src) + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        indices = np.empty(indptr[-1], dtype=np.int64)
        data = np.empty(indptr[-1], dtype=np.float64)
        _dor_fill(src, dst, dims, strides, wrap, indptr, indices, data)
        return indptr, indices, data
    return _adaptive_csr(src, dst, dims, strides, wrap)
