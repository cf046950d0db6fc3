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

from .torus_kernels import _offset, adaptive_templates


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
def _template_csr(src, tid, ptr, rel, slots, shares, dims, strides):
    """CSR arrays of flows whose shares are the templates ``tid[f]`` placed at ``src[f]``."""
    nd = dims.shape[0]
    n = src.shape[0]
    indptr = np.zeros(n + 1, dtype=np.int64)
    for f in range(n):
        indptr[f + 1] = indptr[f] + ptr[tid[f] + 1] - ptr[tid[f]]
    indices = np.empty(indptr[n], dtype=np.int64)
    data = np.empty(indptr[n], dtype=np.float64)
    sc = np.zeros(nd, dtype=np.int64)
    for f in range(n):
        for d in range(nd):
            sc[d] = (src[f] // strides[d]) % dims[d]
        k = indptr[f]
        t = tid[f]
        for e in range(ptr[t], ptr[t + 1]):
            node = 0
            for d in range(nd):
                x = sc[d] + rel[e, d]
                if x >= dims[d]:
                    x -= dims[d]
                elif x < 0:
                    x += dims[d]
                node += x * strides[d]
            indices[k] = node * 2 * nd + slots[e]
            data[k] = shares[e]
            k += 1
    return indptr, indices, data


def path_incidence(src, dst, dims, strides, wrap, routing: str):
    """CSR arrays ``(indptr, dense_slots, fractions)`` of the flows (src[f] -> dst[f]).

    ``routing`` is ``"dor"`` or ``"adaptive"``; fractions are unitless (share of the flow's
    bytes carried by the link). Flows inside a node have an empty row. Adaptive rows are the
    per-offset templates of :mod:`rankmap.routing.torus_kernels` placed at each source.
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
    tid, ptr, rel, slots, shares, _hops = adaptive_templates(src, dst, dims, strides, wrap)
    return _template_csr(src, tid, ptr, rel, slots, shares, dims, strides)
