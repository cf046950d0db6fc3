"""Compiled attack on one busy link by ``graph``'s link swaps, on tori and meshes under
dimension order and on k-ary n-trees under d-mod-k.

:func:`rankmap.mappers.swap_refine.link_swaps` picks the busiest link and the flows over it
in Python; for each of those flows (in the order given) it draws which end moves first, lists
the positions that end may take (on its partner's node, the nodes linked to it, the nodes
linked to its own node), keeps those from which the flow's dimension-order walk no longer
takes the link, ranks them by hop-bytes gain and evaluates the best few exactly. In Python
that costs about 0.1 ms of numpy call overhead per end; :func:`attack_link_grid` takes the
same steps in the same order, in one compiled call: the same draws from the same generator,
the same gains (:func:`rankmap.kernels.torus.side_gain_coords`, the sums of
:func:`rankmap.kernels.torus.side_gain_grid`), the same stable order and the
same exact evaluation (:func:`rankmap.kernels.refine_grid.swap_step`), so the placement is
the Python loop's, bit for bit. On a k-ary n-tree (``wrap`` int8, as
:mod:`rankmap.kernels.refine_grid` takes it: positions' coordinates are the hosts' base-k
digits, dense slots are link ids) the crossing test is
:func:`rankmap.kernels.fattree.dmodk_takes` and the hop counts
:func:`rankmap.kernels.hops.position_hop`'s; the branch is chosen when compiling, so the
grid's code is the same.
"""

from __future__ import annotations

import numpy as np

from .fattree import dmodk_takes
from .hops import position_hop
from .jit import kernel
from .refine_grid import swap_step
from .torus import dor_takes_slot, side_gain_coords

__all__ = ["attack_link_grid", "flows_over_slot"]


@kernel(nogil=True)
def _targets(mover, partner, pos_of, slots, nb_ptr, nb_pos):
    """Positions ``mover`` may take: every slot of its partner's node, of the nodes linked to
    it and of the nodes linked to its own node, not its own node, in increasing order."""
    pn = pos_of[partner] // slots
    mn = pos_of[mover] // slots
    n = 1 + (nb_ptr[pn + 1] - nb_ptr[pn]) + (nb_ptr[mn + 1] - nb_ptr[mn])
    nodes = np.empty(n, dtype=np.int64)
    nodes[0] = pn
    c = 1
    for j in range(nb_ptr[pn], nb_ptr[pn + 1]):
        nodes[c] = nb_pos[j]
        c += 1
    for j in range(nb_ptr[mn], nb_ptr[mn + 1]):
        nodes[c] = nb_pos[j]
        c += 1
    nodes = np.sort(nodes)
    out = np.empty(n * slots, dtype=np.int64)
    m = 0
    for j in range(n):
        x = nodes[j]
        if x == mn or (j > 0 and x == nodes[j - 1]):
            continue
        for k in range(slots):
            out[m] = x * slots + k
            m += 1
    return out[:m]


@kernel(nogil=True)
def flows_over_slot(end_nodes, by_src, n_nodes, at, alloc_nodes, rf_indptr, rf_fl, src, dst,
                    nbytes, hops, most, slot, dims, strides, wrap):
    """The flows whose dimension-order walk (a tree's d-mod-k route) takes a link, most
    bytes x hops first (the ``flows_over_link`` of ``rankmap.mappers.swap_refine`` for a
    torus, mesh or k-ary n-tree, then its stable order by bytes x hops, cut to ``most``).

    Only the flows of the units on ``end_nodes`` are looked at: every flow over the link
    starts (``by_src``) or ends on one of them (``Router.ends_through``); each is looked at
    from the row of that end's unit.

    Parameters
    ----------
    end_nodes : ndarray of int64
        Machine nodes every flow over the link starts (or ends) at.
    by_src : bool
        Whether ``end_nodes`` are the flows' sources (else their destinations).
    n_nodes : int
        Nodes of the machine.
    at : ndarray of int64
        Allocation position (node) of every unit.
    alloc_nodes : ndarray of int64
        Machine node of every allocation position.
    rf_indptr, rf_fl : ndarray of int64
        CSR of the flows touching each unit.
    src, dst : ndarray of int64
        Source and destination unit of every flow.
    nbytes : ndarray of float64
        Bytes of every flow.
    hops : ndarray of int64
        Hop count of every flow under the placement.
    most : int
        Flows returned at most.
    slot : int
        The link's dense slot (a tree's: its link id).
    dims, strides : ndarray of int64
        Sides and node-id strides of the torus/mesh (a k-ary n-tree's: the arity per level
        and its powers).
    wrap : ndarray of bool or int8
        Whether each dimension wraps around; int8 on a k-ary n-tree.

    Returns
    -------
    ndarray of int64
        The flows over the link, in decreasing bytes x hops (ties in flow order), at most
        ``most`` of them.
    """
    on = np.zeros(n_nodes, dtype=np.bool_)
    for v in end_nodes:
        on[v] = True
    cap = 0
    for u in range(at.shape[0]):
        if on[alloc_nodes[at[u]]]:
            cap += rf_indptr[u + 1] - rf_indptr[u]
    hit = np.empty(cap, dtype=np.int64)
    m = 0
    for u in range(at.shape[0]):
        if not on[alloc_nodes[at[u]]]:
            continue
        for j in range(rf_indptr[u], rf_indptr[u + 1]):
            f = rf_fl[j]
            if (src[f] if by_src else dst[f]) != u:
                continue
            a, b = alloc_nodes[at[src[f]]], alloc_nodes[at[dst[f]]]
            if isinstance(wrap[0], bool):          # decided when compiling
                on_link = dor_takes_slot(a, b, slot, dims, strides, wrap)
            else:
                on_link = dmodk_takes(a, b, slot, dims[0], dims.shape[0])
            if on_link:
                hit[m] = f
                m += 1
    hit = np.sort(hit[:m])
    k = 0
    for j in range(m):                   # each flow once (a unit's flow to itself came twice)
        if j == 0 or hit[j] != hit[j - 1]:
            hit[k] = hit[j]
            k += 1
    hit = hit[:k]
    key = np.empty(k, dtype=np.float64)
    for j in range(k):
        key[j] = -nbytes[hit[j]] * hops[hit[j]]
    return hit[np.argsort(key, kind="mergesort")[:most]]


@kernel(nogil=True)
def _tree_side_gains(indptr, indices, data, units, other, at_from, at_to, at_of_unit, coords,
                     dims, wrap):
    """:func:`rankmap.kernels.torus.side_gain_coords`'s sums on a k-ary n-tree: per
    proposal, unit ``units[i]``'s bytes with every partner but ``other[i]`` times the hops
    it saves going from ``at_from[i]`` to ``at_to[i]`` (:func:`position_hop`; -1: none,
    saves 0)."""
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
            d = (position_hop(coords, at_from[i], px, dims, wrap)
                 - position_hop(coords, at_to[i], px, dims, wrap))
            acc += data[k] * np.float64(d)
        out[i] = acc
    return out


@kernel(nogil=True)
def attack_link_grid(cross, src, dst, rng, slot, exact_tries, tried, max_proposals,
                     w_indptr, w_indices, w_data, nb_ptr, nb_pos, coords, pos_of, unit_at, slots,
                     alloc_nodes, f_src, f_dst, f_bytes, f_off, rf_indptr, rf_fl, rf_off,
                     loads, top, n_top, scal, scratch, mark, dims, strides, wrap, link_of_slot):
    """Offer the ends of the flows over one link positions off it until a swap is kept
    (the inner loop of ``rankmap.mappers.swap_refine.link_swaps``, module docstring).

    Parameters
    ----------
    cross : ndarray of int64
        The flows over the link (ids into ``src``/``dst``), in the order they are tried.
    src, dst : ndarray of int64
        Source and destination unit of every flow of the link's phase.
    rng : numpy.random.Generator
        Draws, for every flow tried, whether its destination moves first (``random() <
        0.5``); shared with the caller.
    slot : int
        The link's dense slot (``node*2*ndim + 2*dim + (0 for +, 1 for -)``; a tree's:
        its link id).
    exact_tries : int
        Targets of one end evaluated exactly (the best by hop-bytes gain).
    tried : int
        Proposals evaluated so far.
    max_proposals : int
        Most proposals: the loop stops when ``tried`` reaches it.
    w_indptr, w_indices, w_data : ndarray
        CSR of the bytes between units, both directions.
    nb_ptr, nb_pos : ndarray of int64
        CSR of the allocation nodes linked to each allocation node.
    coords : ndarray of int64, shape (allocation nodes, ndim)
        :func:`rankmap.kernels.torus.position_coords` of the allocation's nodes (a tree's:
        the hosts' base-k digits).
    pos_of, unit_at, slots, alloc_nodes, f_src, f_dst, f_bytes, f_off : ndarray or int
        The placement and the flows, as :func:`rankmap.kernels.refine_grid.swap_step` takes
        them (``pos_of`` and ``unit_at`` updated when a swap is kept).
    rf_indptr, rf_fl, rf_off, loads, top, n_top, scal, scratch, mark : ndarray
        The rest of its state (link bytes and busiest values updated when a swap is kept).
    dims, strides, wrap, link_of_slot : ndarray
        The torus or mesh (or k-ary n-tree), as it takes them.

    Returns
    -------
    tried : int
        Proposals evaluated so far, these included.
    mover : int
        The unit moved by the kept swap, or -1 when none was kept.
    holder : int
        The unit that took its place (-1: the position was free, or none kept).
    """
    n_units = pos_of.shape[0]
    node_of_unit = np.empty(n_units, dtype=np.int64)
    at = np.empty(n_units, dtype=np.int64)             # allocation node of every unit
    for x in range(n_units):
        at[x] = pos_of[x] // slots
        node_of_unit[x] = alloc_nodes[at[x]]
    for f in cross:
        flip = rng.random() < 0.5
        for turn in range(2):
            first_src = (turn == 0) != flip
            mover = src[f] if first_src else dst[f]
            partner = dst[f] if first_src else src[f]
            tps = _targets(mover, partner, pos_of, slots, nb_ptr, nb_pos)
            # only targets that take this flow off the link
            pn = node_of_unit[partner]
            keep = np.empty(tps.shape[0], dtype=np.bool_)
            for j in range(tps.shape[0]):
                tn = alloc_nodes[tps[j] // slots]
                a, b = (tn, pn) if mover == src[f] else (pn, tn)
                if isinstance(wrap[0], bool):      # decided when compiling
                    keep[j] = not dor_takes_slot(a, b, slot, dims, strides, wrap)
                else:
                    keep[j] = not dmodk_takes(a, b, slot, dims[0], dims.shape[0])
            tps = tps[keep]
            m = tps.shape[0]
            if m == 0:
                continue
            mv = np.full(m, mover, dtype=np.int64)
            held = np.empty(m, dtype=np.int64)
            at_to = np.empty(m, dtype=np.int64)
            for j in range(m):
                held[j] = unit_at[tps[j]]
                at_to[j] = tps[j] // slots
            at_from = np.full(m, at[mover], dtype=np.int64)
            if isinstance(wrap[0], bool):          # decided when compiling
                g = (side_gain_coords(w_indptr, w_indices, w_data, mv, held, at_from, at_to,
                                      at, coords, dims, wrap)
                     + side_gain_coords(w_indptr, w_indices, w_data, held, mv, at_to,
                                        at_from, at, coords, dims, wrap))
            else:
                g = (_tree_side_gains(w_indptr, w_indices, w_data, mv, held, at_from, at_to,
                                      at, coords, dims, wrap)
                     + _tree_side_gains(w_indptr, w_indices, w_data, held, mv, at_to,
                                        at_from, at, coords, dims, wrap))
            order = np.argsort(-g, kind="mergesort")
            for j in range(min(exact_tries, m)):
                tp = tps[order[j]]
                tried += 1
                holder = unit_at[tp]
                if swap_step(mover, tp, pos_of, unit_at, slots, alloc_nodes, f_src, f_dst,
                             f_bytes, f_off, rf_indptr, rf_fl, rf_off, loads, top, n_top, scal,
                             scratch, mark, dims, strides, wrap, link_of_slot):
                    return tried, mover, holder
                if tried >= max_proposals:
                    return tried, -1, -1
    return tried, -1, -1
