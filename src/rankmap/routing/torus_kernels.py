"""Compiled routing kernels for torus and mesh networks.

Both kernels add into dense per-link arrays indexed ``node*2*ndim + 2*dim + (0 for +, 1 for -)``:
``link_bytes`` (bytes, float64) and ``link_streams`` (number of flows with a share, int64).

* ``route_dor``: dimension-order routing. Dimensions in order 0, 1, ...; in each the shorter
  way round; an offset of exactly n/2 on a wrapped ring goes in the + direction; meshes never
  wrap.
* ``route_adaptive``: the first-order model of minimal adaptive routing (seed 001, section 3.1):
  at every hop the traffic still in flight is split equally among the productive links, that is
  one link per dimension with remaining offset, and both directions of a dimension whose
  offset is a tie (exactly n/2 on a wrapped ring) until the first step in it is taken.

The adaptive kernel walks, per flow, the lattice of partial progress (one counter per
dimension) in an order where every state comes after the states that feed it, so each state
is visited once and each link it feeds gets ``weight / productive_links`` of the flow.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _offset(src_c, dst_c, n, wrap):
    """(hops, direction, tie) to go from coordinate src_c to dst_c on a ring/line of size n."""
    if wrap:
        delta = (dst_c - src_c) % n
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


@njit(cache=True, nogil=True)
def route_dor(src, dst, nbytes, dims, strides, wrap, link_bytes, link_streams):
    """Add dimension-order routed flows into ``link_bytes``/``link_streams`` (dense layout)."""
    nd = dims.shape[0]
    for f in range(src.shape[0]):
        s = src[f]
        t = dst[f]
        if s == t:
            continue
        b = nbytes[f]
        node = s
        for d in range(nd):
            n = dims[d]
            stride = strides[d]
            c = (node // stride) % n
            tc = (t // stride) % n
            h, direction, _tie = _offset(c, tc, n, wrap[d])
            slot = 2 * d + (0 if direction > 0 else 1)
            for _ in range(h):
                li = node * 2 * nd + slot
                link_bytes[li] += b
                link_streams[li] += 1
                c2 = c + direction
                if c2 == n:
                    c2 = 0
                elif c2 < 0:
                    c2 = n - 1
                node += (c2 - c) * stride
                c = c2


@njit(cache=True, nogil=True)
def _adaptive_sizes(src, dst, dims, strides, wrap):
    """Largest per-flow state-lattice size (for the scratch buffer)."""
    nd = dims.shape[0]
    largest = 1
    for f in range(src.shape[0]):
        total = 1
        for d in range(nd):
            n = dims[d]
            h, _dir, tie = _offset((src[f] // strides[d]) % n, (dst[f] // strides[d]) % n,
                                   n, wrap[d])
            total *= (2 * h) if tie else (h + 1)
        if total > largest:
            largest = total
    return largest


@njit(cache=True, nogil=True)
def route_adaptive(src, dst, nbytes, dims, strides, wrap, link_bytes, link_streams):
    """Add minimal-adaptive (equal split per hop) flows into the dense link arrays."""
    nd = dims.shape[0]
    weights = np.zeros(_adaptive_sizes(src, dst, dims, strides, wrap), dtype=np.float64)
    hops = np.zeros(nd, dtype=np.int64)
    dirs = np.zeros(nd, dtype=np.int64)
    ties = np.zeros(nd, dtype=np.bool_)
    size = np.zeros(nd, dtype=np.int64)
    radix = np.zeros(nd, dtype=np.int64)
    src_c = np.zeros(nd, dtype=np.int64)
    state = np.zeros(nd, dtype=np.int64)
    for f in range(src.shape[0]):
        s = src[f]
        t = dst[f]
        if s == t:
            continue
        b = nbytes[f]
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
        for k in range(total):
            w = weights[k]
            if w == 0.0:
                continue
            # decode the state and find the current node
            node = 0
            productive = 0
            rem = k
            for d in range(nd):
                st = rem % size[d]
                rem //= size[d]
                state[d] = st
                n = dims[d]
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
                c = (src_c[d] + off) % n
                node += c * strides[d]
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
                        li = node * 2 * nd + 2 * d
                        link_bytes[li] += share * b
                        link_streams[li] += 1
                        weights[k + (nxt_plus - st) * radix[d]] += share
                        li = node * 2 * nd + 2 * d + 1
                        link_bytes[li] += share * b
                        link_streams[li] += 1
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
                li = node * 2 * nd + 2 * d + slot
                link_bytes[li] += share * b
                link_streams[li] += 1
                weights[k + (nxt - st) * radix[d]] += share
