"""Compiled greedy walk on tori, meshes and k-ary n-trees
(:func:`rankmap.mappers.greedy.greedy_walk`).

The walk places one rank per step, so a Python loop pays numpy's call overhead thousands of
times (0.4-0.9 s at 4,096 ranks). This kernel runs the same walk, step for step, with the
hop distance of a torus or mesh or of a k-ary n-tree
(:func:`rankmap.kernels.hops.position_hop`, from the allocation positions' coordinates,
divided out once):
the free core nearest to the reference core, the compact tie rule (free nodes up to
``tie_window`` hops farther than the nearest, fewest hop-bytes to the rank's placed partners,
then fewest hops, then the lowest logical distance and core) when partners are given and
some are placed, and seed 003's rule (a free link neighbour at most one hop away, else the
nearest free node; ties by logical distance, then lowest core) otherwise. Candidates are
the free nodes within ``1 + tie_window`` allocated links of the reference node (breadth
first over the allocation's links), or every free node when none of them is free.
"""

from __future__ import annotations

import numpy as np

from .hops import position_hop
from .jit import kernel
from .torus import position_coords

__all__ = ["greedy_walk_grid"]


@kernel(nogil=True)
def _free_core(lo, hi, k, core):
    """The free core of position k nearest to ``core`` in number (seed 003's choice)."""
    return hi[k] if hi[k] < core else lo[k]


@kernel(nogil=True)
def _ball(k, radius, nb_ptr, nbrs, seen, out):
    """Positions within ``radius`` links of position k (k included) into ``out``; returns
    their count. ``seen`` is all False on entry and left so."""
    out[0] = k
    seen[k] = True
    n = 1
    begin = 0
    for _ in range(radius):
        end = n
        for i in range(begin, end):
            p = out[i]
            for j in range(nb_ptr[p], nb_ptr[p + 1]):
                q = nbrs[j]
                if not seen[q]:
                    seen[q] = True
                    out[n] = q
                    n += 1
        begin = end
    for i in range(n):
        seen[out[i]] = False
    return n


@kernel(nogil=True)
def greedy_walk_grid(ranks, ref_pos, start, cpn, nodes, dims, strides, wrap, nb_ptr, nbrs,
                     p_ptr, p_nbr, p_w, use_partners, tie_window):
    """The greedy walk's allocation core of every walk position.

    Parameters
    ----------
    ranks : ndarray of int64, shape (n,)
        MPI rank of every walk position.
    ref_pos : ndarray of int64, shape (n,)
        Walk position whose core is each position's reference (entry 0 unused).
    start : int
        Allocation core of the first position.
    cpn : int
        Cores per node.
    nodes : ndarray of int64, shape (n_positions,)
        Machine node of every allocation position.
    dims, strides : ndarray of int64, shape (ndim_machine,)
        Sides and node-id strides of the torus/mesh (a k-ary n-tree's:
        :func:`rankmap.kernels.hops.tree_geometry`).
    wrap : ndarray of bool or int8, shape (ndim_machine,)
        Whether each machine dimension wraps around; int8 on a k-ary n-tree.
    nb_ptr, nbrs : ndarray of int64
        CSR of the allocation positions linked to every position.
    p_ptr, p_nbr : ndarray of int64
        CSR of every rank's partner ranks.
    p_w : ndarray of float64
        Bytes exchanged with each partner.
    use_partners : bool
        Whether the compact tie rule applies.
    tie_window : int
        Hops beyond the nearest free node that still count as tied (compact rule).

    Returns
    -------
    ndarray of int64, shape (n,)
        Allocation core of every walk position.
    """
    n = ranks.shape[0]
    n_pos = nodes.shape[0]
    lo = np.arange(n_pos, dtype=np.int64) * cpn
    hi = lo + cpn - 1
    seq = np.empty(n, dtype=np.int64)
    node_of_rank = np.full(n, -1, dtype=np.int64)
    seen = np.zeros(n_pos, dtype=np.bool_)
    ball = np.empty(n_pos, dtype=np.int64)
    cand = np.empty(n_pos, dtype=np.int64)
    cand_d = np.empty(n_pos, dtype=np.int64)
    placed_pos = np.empty(max(1, p_nbr.shape[0]), dtype=np.int64)
    placed_w = np.empty(max(1, p_nbr.shape[0]), dtype=np.float64)
    pc = position_coords(nodes, dims, strides)
    seq[0] = start
    k0 = start // cpn
    if start == lo[k0]:
        lo[k0] += 1
    else:
        hi[k0] -= 1
    node_of_rank[ranks[0]] = k0
    for p in range(1, n):
        ref = seq[ref_pos[p]]
        k = ref // cpn
        n_placed = 0
        if use_partners:
            r = ranks[p]
            for j in range(p_ptr[r], p_ptr[r + 1]):
                at = node_of_rank[p_nbr[j]]
                if at >= 0:
                    placed_pos[n_placed] = at
                    placed_w[n_placed] = p_w[j]
                    n_placed += 1
        if lo[k] <= hi[k]:
            if lo[k] <= ref <= hi[k]:
                c = ref
            else:
                c = _free_core(lo, hi, k, ref)
        elif n_placed > 0:
            # compact rule: free nodes near k, ties by hop-bytes to the placed partners
            nb = _ball(k, 1 + tie_window, nb_ptr, nbrs, seen, ball)
            m = 0
            for i in range(nb):
                q = ball[i]
                if lo[q] <= hi[q]:
                    cand[m] = q
                    m += 1
            if m == 0:
                for q in range(n_pos):
                    if lo[q] <= hi[q]:
                        cand[m] = q
                        m += 1
            d_min = -1
            for i in range(m):
                cand_d[i] = position_hop(pc, cand[i], k, dims, wrap)
                if d_min < 0 or cand_d[i] < d_min:
                    d_min = cand_d[i]
            c = -1
            best_hb = 0.0
            best_d = 0
            best_log = 0
            for i in range(m):
                if cand_d[i] > d_min + tie_window:
                    continue
                q = cand[i]
                hb = 0.0
                for j in range(n_placed):
                    hb += position_hop(pc, q, placed_pos[j], dims, wrap) * placed_w[j]
                core = _free_core(lo, hi, q, ref)
                logical = abs(core - ref)
                if c < 0 or hb < best_hb or (hb == best_hb and (
                        cand_d[i] < best_d or (cand_d[i] == best_d and (
                            logical < best_log or (logical == best_log and core < c))))):
                    c, best_hb, best_d, best_log = core, hb, cand_d[i], logical
        else:
            # seed 003's rule: a free link neighbour at most one hop away, else the nearest
            # free node anywhere; ties by logical distance, then lowest core
            m = 0
            for j in range(nb_ptr[k], nb_ptr[k + 1]):
                q = nbrs[j]
                if lo[q] <= hi[q]:
                    cand[m] = q
                    cand_d[m] = position_hop(pc, k, q, dims, wrap)
                    m += 1
            d_min = -1
            for i in range(m):
                if d_min < 0 or cand_d[i] < d_min:
                    d_min = cand_d[i]
            if m == 0 or d_min > 1:
                m = 0
                d_min = -1
                for q in range(n_pos):
                    if lo[q] <= hi[q]:
                        cand[m] = q
                        cand_d[m] = position_hop(pc, k, q, dims, wrap)
                        if d_min < 0 or cand_d[m] < d_min:
                            d_min = cand_d[m]
                        m += 1
            c = -1
            best_log = 0
            for i in range(m):
                if cand_d[i] != d_min:
                    continue
                core = _free_core(lo, hi, cand[i], ref)
                logical = abs(core - ref)
                if c < 0 or logical < best_log or (logical == best_log and core < c):
                    c, best_log = core, logical
        seq[p] = c
        kc = c // cpn
        if c == lo[kc]:
            lo[kc] += 1
        else:
            hi[kc] -= 1
        node_of_rank[ranks[p]] = kc
    return seq
