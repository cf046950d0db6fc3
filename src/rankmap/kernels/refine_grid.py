"""Compiled steps of the local searches on tori and meshes under dimension order: ``refine``'s
search loop and proposals (:func:`refine_batches`, :func:`refine_batch`, :func:`refine_step`)
and ``graph``'s link swaps (:func:`swap_step`). ``refine``'s also run on k-ary n-trees under
d-mod-k routing: positions' coordinates are then the hosts' base-k digits, ``dims`` the arity
once per level, dense slots the link ids, and ``wrap`` an int8 array whose type marks the tree
(:func:`rankmap.kernels.hops.position_hop`, :func:`_walk` and the witness test are compiled
for one or the other: no branch is taken at run time, which cost the grid's search up to 1.9x).
They also run on tori and meshes under minimal adaptive routing: ``tpl`` is then a template
store (:mod:`rankmap.kernels.template_store`) and a route is its offset's template placed at
its source, each link taking its share of the bytes; elsewhere ``tpl`` is None, and the
kernels are compiled apart for each (a test of ``tpl is None`` is settled when compiling).

:func:`rankmap.mappers.refine.refine_search` draws a proposal (a rank and a core near its
partner) in Python, then spends about 0.2 ms of numpy call overhead judging it: the core
that saves the most hop-bytes, the moved flows' link changes, the busiest link after the
move, the links at that value, the accept rule and the bookkeeping of the kept move. This
module does the same steps, in the same order, in one compiled call (:func:`refine_step`):

* the target saving the most hop-bytes (every partner's hop distance before and after, of
  both ranks when the move is a swap; the first best target, or none when none saves any);
* a move that adds hop-bytes can only be kept if it lowers the busiest link, so every link
  at the busiest value must be on a moved flow's old walk: when a witness link at that value
  is on none (:func:`rankmap.kernels.torus.dor_takes_slot`, O(ndim) per flow), the move is
  refused from the hop distances alone, its work counted as if walked (nine in ten
  proposals of a converging search end here);
* the moved flows' link changes, summed along the dimension-order walks as
  :func:`rankmap.kernels.torus.dor_link_sums` sums them for the Python step (per phase and
  link, in flow order from 0), in a scratch array instead of sorting;
* the busiest link after the move (looking at every loaded link of a phase only when a
  changed link is one of its busiest), the links at that value, the accept rule and the work
  counter (route entries looked at), with the same tolerances;
* the kept move applied: loads, hop-bytes, the per-phase set of links that may carry bytes
  (links added since the last compaction, compacted once they outnumber it) and the rank of
  every core.

The callers run these only where every sum is exact
(:mod:`rankmap.mappers.exact_grid`: sizes that are whole multiples of a common power of two,
sums below 2**53 such multiples), so the order of additions (numpy's pairwise sums, BLAS
dots) cannot change a result and the placements are those of the Python steps, bit for bit.
Under adaptive routing the link sums round (shares such as 1/3); they are added in the
Python step's order (:meth:`rankmap.routing.Router.link_sums_by_part`: flow by flow, each
route in its order), and the hops, hence the hop-bytes, are the minimal hop counts, exact.

State arrays (all updated in place):

* ``cores`` (ranks) and ``rank_of_core`` (allocation cores, -1 when free);
* ``loads`` (phases x links, bytes); ``members`` (phases x links) with ``n_members``: the
  links that may carry bytes per phase, ``in_set`` (phases x links) their membership,
  ``busy_len`` and ``added_len`` (per phase: the set's size at the last compaction and the
  link entries added since);
* ``top`` (per phase: busiest link bytes), ``phase_hb`` (per phase: hop-bytes);
* ``weight`` (every flow of every phase: bytes x hops, the draw weights, kept up to date);
* ``scal``: float64 ``[busiest link bytes, links at it, hop-bytes, work, total weight]``;
* ``wit``: int64 ``[phase, link, dense slot]`` of a link at the busiest value (replaced
  after a kept move that takes it off that value; an out-of-date witness only means walking).
"""

from __future__ import annotations

import numpy as np

from .fattree import dmodk_takes, dmodk_walk
from .hops import position_hop
from .jit import kernel
from .template_store import stored_entries, stored_template
from .torus import adaptive_takes_slot, dor_takes_slot, dor_walk, placed_slot

__all__ = ["refine_step", "refine_batch", "refine_batches", "rank_hop_bytes", "swap_step",
           "flow_route_entries",
           "best_target", "moved_hop_bytes",
           "count_at_max", "count_at_top", "flow_weights", "draw_table", "cumulative_weights",
           "draw_from_sums", "window_stop", "COUNT_PACE_MARGIN", "STOP_BUDGET", "STOP_REFUSED",
           "STOP_WORK", "STOP_NO_HOPS", "STOP_SMALL_GAIN", "STOP_BEHIND", "GO_ON"]

#: indices into the ``scal`` state array
MAX, AT_MAX, HB, WORK, TOTAL = 0, 1, 2, 3, 4

#: why :func:`refine_batches` stopped: the proposal budget is spent, too many refusals in a
#: row, the work bound is passed, no flow crosses a link, the expected gain is small, the
#: search cannot be expected to catch up with the busiest link it was given
#: (:func:`window_stop`)
(STOP_BUDGET, STOP_REFUSED, STOP_WORK, STOP_NO_HOPS, STOP_SMALL_GAIN,
 STOP_BEHIND) = 0, 1, 2, 3, 4, 5
#: :func:`window_stop` and :func:`refine_batch`: the search goes on
GO_ON = -1
#: the small-gain stop counts fewer links at the busiest value as a gain only while this many
#: times the window's pace would bring them to none within the budget left (:func:`_small_gain`)
COUNT_PACE_MARGIN = 2.0


#: hops between allocation positions from their coordinates (grid or tree)
_hop = position_hop


@kernel(nogil=True)
def _walk(s, t, dims, strides, wrap, out):
    """The links of the route from node s to node t written into ``out``, their number:
    dense slots of the dimension-order walk on a torus or mesh (``wrap`` bool), link ids of
    the d-mod-k route on a k-ary n-tree (``wrap`` int8; ``dims``: the arity per level)."""
    if isinstance(wrap[0], bool):
        return dor_walk(s, t, dims, strides, wrap, out)
    return dmodk_walk(s, t, dims[0], dims.shape[0], out)


@kernel(nogil=True)
def _tree_takes(s, t, slot, dims):
    """Whether the d-mod-k route from host s to host t takes link ``slot`` (``dims``: the
    tree's arity per level)."""
    return dmodk_takes(s, t, slot, dims[0], dims.shape[0])


@kernel(nogil=True)
def best_target(mover, tpos, cores, rank_of_core, cpn, w_indptr, w_indices, w_data, w_hb,
                pcoords, dims, wrap):
    """The core on the positions ``tpos`` whose move (a swap with its rank, if any) saves
    the most hop-bytes, or -1 when none saves any (rankmap.mappers.refine's
    ``_target_gains``: the first best target in position, then core order).

    A rank's terms where it stands are its hop-bytes ``w_hb`` (:func:`rank_hop_bytes`), so
    only the distances from where it would go are summed: the mover's once per position,
    a holder's once per core. A core's holder, when one of the mover's partners, has its
    term taken out again (exact: whole-number sums, so the order of additions cannot change
    a gain).

    Parameters
    ----------
    mover : int
        The rank that moves.
    tpos : ndarray of int64
        Allocation positions whose cores are the targets, in order.
    cores, rank_of_core : ndarray of int64
        Allocation core of every rank; rank of every core (-1: free).
    cpn, w_indptr, w_indices, w_data, pcoords, dims, wrap
        As :func:`rank_hop_bytes` (the CSR's indices sorted).
    w_hb : ndarray of float64
        Every rank's hop-bytes under ``cores`` (:func:`rank_hop_bytes`).

    Returns
    -------
    int
        The target core, or -1.
    """
    here = cores[mover] // cpn
    a0, a1 = w_indptr[mover], w_indptr[mover + 1]
    best_core = -1
    best_g = 0.0
    first = True
    for j in range(tpos.shape[0]):
        tp = tpos[j]
        there = 0.0
        for e in range(a0, a1):
            xp = cores[w_indices[e]] // cpn
            there += float(_hop(pcoords, tp, xp, dims, wrap)) * w_data[e]
        gx_all = w_hb[mover] - there
        for k in range(cpn):
            t = tp * cpn + k
            holder = rank_of_core[t]
            gx = gx_all
            gy = 0.0
            if holder >= 0:
                # the holder's terms where it would go (here); the mover's distance to it
                # does not change (a swap), so neither side counts that pair
                moved = 0.0
                for e in range(w_indptr[holder], w_indptr[holder + 1]):
                    y = w_indices[e]
                    if y == mover:
                        continue
                    moved += w_data[e] * float(_hop(pcoords, here, cores[y] // cpn, dims,
                                                    wrap))
                gy = w_hb[holder] - moved
                e = a0 + np.searchsorted(w_indices[a0:a1], holder)
                if e < a1 and w_indices[e] == holder:
                    hp = cores[holder] // cpn
                    gx -= (float(_hop(pcoords, here, hp, dims, wrap))
                           - float(_hop(pcoords, tp, hp, dims, wrap))) * w_data[e]
                    gy -= w_data[e] * float(_hop(pcoords, tp, here, dims, wrap))
            g = gx + gy
            if first or g > best_g:
                first = False
                best_core = t
                best_g = g
    if not first and best_g > 0:
        return best_core
    return -1


@kernel(nogil=True)
def rank_hop_bytes(cores, cpn, w_indptr, w_indices, w_data, pcoords, dims, wrap):
    """Every rank's hop-bytes: its bytes with each partner (both directions, all phases)
    times the hops between their nodes.

    Parameters
    ----------
    cores : ndarray of int64
        Allocation core of every rank.
    cpn : int
        Cores per node.
    w_indptr, w_indices, w_data : ndarray
        Bytes between ranks, both directions, all phases (CSR).
    pcoords : ndarray of int64, shape (positions, ndim)
        Coordinates of every allocation position's node.
    dims : ndarray of int64
        Sides of the torus/mesh (a k-ary n-tree's arity once per level).
    wrap : ndarray of bool or int8
        Whether each dimension wraps around (int8 on a k-ary n-tree).

    Returns
    -------
    ndarray of float64
        Byte-hops of every rank (B x links).
    """
    n = w_indptr.shape[0] - 1
    out = np.zeros(n, dtype=np.float64)
    for r in range(n):
        out[r] = _one_rank_hop_bytes(r, cores, cpn, w_indptr, w_indices, w_data, pcoords,
                                     dims, wrap)
    return out


@kernel(nogil=True)
def _one_rank_hop_bytes(r, cores, cpn, w_indptr, w_indices, w_data, pcoords, dims, wrap):
    """Rank ``r``'s hop-bytes under ``cores`` (:func:`rank_hop_bytes`)."""
    pr = cores[r] // cpn
    s = 0.0
    for e in range(w_indptr[r], w_indptr[r + 1]):
        s += w_data[e] * float(_hop(pcoords, pr, cores[w_indices[e]] // cpn, dims, wrap))
    return s


@kernel(nogil=True)
def moved_hop_bytes(ranks, old_pos, cores, cpn, w_indptr, w_indices, w_data, w_hb, pcoords,
                    dims, wrap):
    """After a kept move (``cores`` updated): each partner of a moved rank that did not move
    has its term with that rank changed, and the moved ranks' hop-bytes are summed again
    (exact sums).

    Parameters
    ----------
    ranks : ndarray of int64
        The ranks that moved.
    old_pos : ndarray of int64
        The allocation position each of them left.
    cores : ndarray of int64
        Allocation core of every rank, after the move.
    cpn, w_indptr, w_indices, w_data, pcoords, dims, wrap
        As :func:`rank_hop_bytes`.
    w_hb : ndarray of float64
        Every rank's hop-bytes (:func:`rank_hop_bytes`), brought up to date in place.
    """
    for k in range(ranks.shape[0]):
        for e in range(w_indptr[ranks[k]], w_indptr[ranks[k] + 1]):
            y = w_indices[e]
            moved = False
            for q in range(ranks.shape[0]):
                if ranks[q] == y:
                    moved = True
            if not moved:
                py = cores[y] // cpn
                w_hb[y] += w_data[e] * (float(_hop(pcoords, cores[ranks[k]] // cpn, py, dims,
                                                   wrap))
                                        - float(_hop(pcoords, old_pos[k], py, dims, wrap)))
    for k in range(ranks.shape[0]):
        w_hb[ranks[k]] = _one_rank_hop_bytes(ranks[k], cores, cpn, w_indptr, w_indices,
                                             w_data, pcoords, dims, wrap)


@kernel(nogil=True)
def flow_weights(cores, cpn, src, dst, nbytes, pcoords, dims, wrap):
    """Draw weight of every flow, bytes x hops under the placement, and their total.

    Parameters
    ----------
    cores : ndarray of int64
        Allocation core of every rank.
    cpn : int
        Cores per node.
    src, dst : ndarray of int64
        Every flow's ranks (all phases).
    nbytes : ndarray of float64
        Every flow's bytes.
    pcoords : ndarray of int64, shape (positions, ndim)
        Coordinates of every allocation position's node.
    dims : ndarray of int64
        Sides of the torus/mesh (a k-ary n-tree's: its arity once per level).
    wrap : ndarray of bool or int8
        Whether each dimension wraps around; int8 on a k-ary n-tree (module docstring).

    Returns
    -------
    weight : ndarray of float64
        Bytes x hops of every flow.
    total : float
        Their sum (exact for whole-number bytes).
    """
    n = src.shape[0]
    weight = np.empty(n, dtype=np.float64)
    total = 0.0
    for f in range(n):
        weight[f] = float(_hop(pcoords, cores[src[f]] // cpn, cores[dst[f]] // cpn, dims,
                               wrap)) * nbytes[f]
        total += weight[f]
    return weight, total


@kernel(nogil=True)
def draw_table(weight, total):
    """The cumulative draw table of :func:`rankmap.mappers.refine.refine_search`: the
    weights divided by their total, summed in flow order, divided by the last sum (numpy's
    ``(weight / total).cumsum()`` then ``/= cdf[-1]``, operation for operation).

    Parameters
    ----------
    weight : ndarray of float64
        Draw weight of every flow.
    total : float
        Their (positive) sum.

    Returns
    -------
    ndarray of float64
        The cumulative table.
    """
    cdf = np.empty(weight.shape[0], dtype=np.float64)
    last = cumulative_weights(weight, total, cdf)
    for f in range(cdf.shape[0]):
        cdf[f] /= last
    return cdf


@kernel(nogil=True)
def cumulative_weights(weight, total, out):
    """The first pass of :func:`draw_table`: the weights divided by their total, summed in
    flow order, into ``out`` (not yet divided by the last sum).

    Parameters
    ----------
    weight : ndarray of float64
        Draw weight of every flow.
    total : float
        Their (positive) sum.
    out : ndarray of float64
        Filled with the running sums (as long as ``weight``).

    Returns
    -------
    float
        The last sum: :func:`draw_table` is ``out`` divided by it.
    """
    acc = 0.0
    for f in range(weight.shape[0]):
        acc += weight[f] / total
        out[f] = acc
    return out[weight.shape[0] - 1]


@kernel(nogil=True)
def draw_from_sums(sums, last, r):
    """``numpy.searchsorted(draw_table, r, side="right")`` from the running sums of
    :func:`cumulative_weights`, dividing only the entries the binary search looks at: the
    table is the sums divided by ``last``, a division that keeps their order, so the first
    entry above ``r`` is the same.

    Parameters
    ----------
    sums : ndarray of float64
        Running sums (:func:`cumulative_weights`), non-decreasing.
    last : float
        Their last value (positive).
    r : float
        A uniform draw in [0, 1).

    Returns
    -------
    int
        The drawn flow: the first index whose table entry exceeds ``r``.
    """
    lo, hi = 0, sums.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if sums[mid] / last <= r:
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel(nogil=True)
def _at_top_change(cur, delta, value):
    """How the count of links at ``value`` changes (-1, 0 or +1) when a link carrying
    ``cur`` bytes gets ``delta`` more."""
    return (1 if cur + delta >= value else 0) - (1 if cur >= value else 0)


@kernel(nogil=True)
def _hot_count(i, loads, members, n_members, top, scal):
    """Links of phase ``i`` at the busiest value (over all phases), within tolerance; adds
    the phase's loaded links looked at to the work (rankmap.mappers.refine's ``_hot``)."""
    mx = scal[MAX]
    tol = 1e-9 * max(mx, 1.0)
    if mx <= 0 or top[i] < mx - tol:
        return 0
    m = n_members[i]
    scal[WORK] += m
    c = 0
    for j in range(m):
        if loads[i, members[i, j]] >= mx - tol:
            c += 1
    return c


@kernel(nogil=True)
def count_at_max(loads, members, n_members, top, scal):
    """Links (over all phases) at the busiest value, within tolerance, counting the loaded
    links looked at as work.

    Parameters
    ----------
    loads : ndarray of float64, shape (phases, links)
        Link bytes per phase.
    members, n_members : ndarray of int64
        Per phase, the links that may carry bytes (the first ``n_members[i]`` of row i).
    top : ndarray of float64, shape (phases,)
        Busiest link bytes per phase.
    scal : ndarray of float64, shape (4,)
        Busiest link bytes, links at it, hop-bytes, work (work updated).

    Returns
    -------
    int
        Links at the busiest value.
    """
    c = 0
    for i in range(loads.shape[0]):
        c += _hot_count(i, loads, members, n_members, top, scal)
    return c


@kernel(nogil=True)
def _top_after(i, links, delta, lo, hi, loads, members, n_members, top, n_top):
    """Busiest link bytes of phase ``i`` after adding ``delta[lo:hi]`` on ``links[lo:hi]``:
    from the changed links, unless one of them is a busiest link now and no other link is
    (``n_top[i]`` links are at the busiest value); then from every link that may carry
    bytes, as rankmap.mappers.refine's ``_max_after``. Either way the exact maximum."""
    if hi == lo:
        return top[i]
    cur_max = loads[i, links[lo]]
    at_top = 0
    for j in range(lo, hi):
        cur = loads[i, links[j]]
        cur_max = max(cur_max, cur)
        if cur >= top[i]:
            at_top += 1
    if cur_max >= top[i] and at_top >= n_top[i]:
        before = np.empty(hi - lo, dtype=np.float64)
        for j in range(lo, hi):
            before[j - lo] = loads[i, links[j]]
            loads[i, links[j]] = before[j - lo] + delta[j]
        out = 0.0
        for j in range(n_members[i]):
            out = max(out, loads[i, members[i, j]])
        for j in range(lo, hi):
            out = max(out, loads[i, links[j]])
        for j in range(lo, hi):
            loads[i, links[j]] = before[j - lo]
        return out
    # an unchanged link stays at the busiest value (or none of the changed links is at it)
    out = top[i]
    for j in range(lo, hi):
        out = max(out, loads[i, links[j]] + delta[j])
    return out


@kernel(nogil=True)
def count_at_top(i, loads, members, n_members, top, n_links):
    """Links of phase ``i`` whose bytes equal its busiest value ``top[i]`` (every link when
    the phase carries nothing).

    Parameters
    ----------
    i : int
        The phase.
    loads : ndarray of float64, shape (phases, links)
        Link bytes per phase.
    members, n_members : ndarray of int64
        Per phase, the links that may carry bytes (the first ``n_members[i]`` of row i);
        the others carry none.
    top : ndarray of float64, shape (phases,)
        Busiest link bytes per phase.
    n_links : int
        Links of the machine.

    Returns
    -------
    int
        Links at ``top[i]``.
    """
    if top[i] <= 0:
        return n_links
    c = 0
    for j in range(n_members[i]):
        if loads[i, members[i, j]] >= top[i]:
            c += 1
    return c


@kernel(nogil=True)
def _compact(i, loads, members, n_members, in_set, busy_len, added_len):
    """Drop the links of phase ``i`` that carry nothing from its set; restart the count of
    links added since."""
    m = 0
    for j in range(n_members[i]):
        link = members[i, j]
        if loads[i, link] != 0:
            members[i, m] = link
            m += 1
        else:
            in_set[i, link] = False
    n_members[i] = m
    busy_len[i] = m
    added_len[i] = 0


@kernel(nogil=True)
def _move_sums(src, dst, wgt, part, n_live, scratch, mark, dims, strides, wrap, link_of_slot,
               tpl):
    """Per part (phase), the links on any entry's route and the signed weights summed on each,
    added in entry order from 0 and, within an entry, in route order (the sums
    :meth:`rankmap.routing.Router.link_sums_by_part` gives, without sorting: a part's links
    come in first-touch order), every entry's hops and its route entries. Routes are the
    dimension-order walks (``tpl`` None), or with a template store ``tpl``
    (:mod:`.template_store`) the minimal-adaptive templates, each link's share of the weight
    added. ``scratch``
    and ``mark`` (one per link) are zero and False on entry and on return."""
    nd = dims.shape[0]
    longest = 0
    for d in range(nd):
        longest += dims[d]
    buf = np.empty(longest, dtype=np.int64)
    n = src.shape[0]
    hops = np.empty(n, dtype=np.float64)
    entries = np.empty(n, dtype=np.float64)
    # a part's links are distinct: at most every link per part, at most the routes' entries
    if tpl is not None:
        total = 0
        for f in range(n):
            total += _route_entries(src[f], dst[f], dims, strides, wrap, tpl)
        cap = min(total, n_live * scratch.shape[0])
    else:
        cap = min(n * longest, n_live * scratch.shape[0])
    links = np.empty(cap, dtype=np.int64)
    sums = np.empty(cap, dtype=np.float64)
    cut = np.zeros(n_live + 1, dtype=np.int64)
    m = 0
    f = 0
    for k in range(n_live):
        first = m
        while f < n and part[f] == k:
            w = wgt[f]
            if tpl is not None:
                rel, sl, sh, h = _template(src[f], dst[f], dims, strides, wrap, tpl)
                sc = tpl[6][src[f]]
                for e in range(sl.shape[0]):
                    link = link_of_slot[placed_slot(sc, rel, e, sl[e], dims, strides)]
                    if not mark[link]:
                        mark[link] = True
                        links[m] = link
                        m += 1
                    scratch[link] += sh[e] * w
                hops[f] = float(h)
                entries[f] = float(sl.shape[0])
            else:
                h = _walk(src[f], dst[f], dims, strides, wrap, buf)
                for q in range(h):
                    link = link_of_slot[buf[q]]
                    if not mark[link]:
                        mark[link] = True
                        links[m] = link
                        m += 1
                    scratch[link] += w
                hops[f] = float(h)
                entries[f] = float(h)
            f += 1
        for j in range(first, m):
            link = links[j]
            sums[j] = scratch[link]
            scratch[link] = 0.0
            mark[link] = False
        cut[k + 1] = m
    return links[:m], sums[:m], hops, entries, cut


@kernel(nogil=True)
def _template(s, t, dims, strides, wrap, tpl):
    """:func:`rankmap.kernels.template_store.stored_template` from the store ``tpl``."""
    return stored_template(s, t, dims, strides, wrap, tpl[0], tpl[1], tpl[2], tpl[3], tpl[4],
                           tpl[5], tpl[6])


@kernel(nogil=True)
def flow_route_entries(cores, cpn, alloc_nodes, f_src, f_dst, dims, strides, wrap, store):
    """Every flow's route entries under minimal adaptive routing: its template's links (the
    templates are kept in ``store`` as they are met).

    Parameters
    ----------
    cores, cpn
        As :func:`rank_hop_bytes`.
    alloc_nodes : ndarray of int64
        Machine node of every allocation position.
    f_src, f_dst : ndarray of int64
        Source and destination rank of every flow.
    dims, strides, wrap
        As :func:`rankmap.kernels.torus.adaptive_template`.
    store : tuple of ndarray
        A template store (:func:`rankmap.kernels.template_store.template_store`).

    Returns
    -------
    ndarray of float64
        Entries of every flow's route (0 inside a node).
    """
    out = np.empty(f_src.shape[0], dtype=np.float64)
    for f in range(f_src.shape[0]):
        out[f] = _route_entries(alloc_nodes[cores[f_src[f]] // cpn],
                                alloc_nodes[cores[f_dst[f]] // cpn], dims, strides, wrap, store)
    return out


@kernel(nogil=True)
def _route_entries(s, t, dims, strides, wrap, tpl):
    """Route entries of the flow from node s to node t: its template's, from the store
    ``tpl`` (its first seven arrays; the template is kept there)."""
    return stored_entries(s, t, dims, strides, wrap, tpl[0], tpl[1], tpl[2], tpl[3], tpl[4],
                          tpl[5], tpl[6])


@kernel(nogil=True)
def _new_core(r, ranks, new_cores, cores):
    """The core rank ``r`` has after the move."""
    for q in range(ranks.shape[0]):
        if ranks[q] == r:
            return new_cores[q]
    return cores[r]


@kernel(nogil=True)
def _refused_by_witness(n_moved, flows, start, ranks, new_cores, cores, cpn, alloc_nodes,
                        f_src, f_dst, f_bytes, f_off, pcoords, loads, scal, dims, strides, wrap,
                        wit, tpl):
    """True (and the move's work counted) when the move adds hop-bytes and cannot lower the
    busiest link: the witness link is at the busiest value and no moved flow's old route
    takes it, so it keeps its bytes (see :func:`_try_move`). The hop-bytes change and the
    work are those :func:`_try_move` computes from the routes (hops are the minimal hop
    counts; every sum is exact; under adaptive routing, ``tpl`` not None, the work is the
    templates' entries: the old routes' kept in ``tpl``, the new ones' looked up)."""
    mx = scal[MAX]
    ph, link = wit[0], wit[1]
    if loads[ph, link] < mx - 1e-9 * max(mx, 1.0):
        return False                       # no witness at the busiest value: walk
    crossed = False
    work_add = 0.0
    dhb = 0.0
    for i in range(n_moved.shape[0]):
        m = n_moved[i]
        if m == 0:
            continue
        old_sum = 0.0
        new_sum = 0.0
        old_dot = 0.0
        new_dot = 0.0
        for j in range(start[i], start[i + 1]):
            f = f_off[i] + flows[j]
            ps = cores[f_src[f]] // cpn
            pd = cores[f_dst[f]] // cpn
            h0 = float(_hop(pcoords, ps, pd, dims, wrap))
            h1 = float(_hop(pcoords, _new_core(f_src[f], ranks, new_cores, cores) // cpn,
                            _new_core(f_dst[f], ranks, new_cores, cores) // cpn, dims, wrap))
            w = f_bytes[f]
            if tpl is None:
                old_sum += h0
                new_sum += h1               # a walk's entries are its hops
            else:
                old_sum += tpl[7][f]        # the new routes' entries: only for a refusal
            old_dot += h0 * w
            new_dot += h1 * w
            if i == ph and not crossed and h0 > 0:
                # the grid's test called here, not through a helper: 7% of a search's time
                if tpl is not None:
                    crossed = adaptive_takes_slot(alloc_nodes[ps], alloc_nodes[pd], wit[2],
                                                  dims, strides, wrap)
                elif isinstance(wrap[0], bool):
                    crossed = dor_takes_slot(alloc_nodes[ps], alloc_nodes[pd], wit[2], dims,
                                             strides, wrap)
                else:
                    crossed = _tree_takes(alloc_nodes[ps], alloc_nodes[pd], wit[2], dims)
        work_add += m + (old_sum + new_sum)
        dhb += new_dot - old_dot
    if crossed or not dhb > 1e-9 * max(scal[HB], 1.0):
        return False
    if tpl is not None:
        # the entries of the moved flows' new templates (whole numbers: any order sums alike)
        for i in range(n_moved.shape[0]):
            for j in range(start[i], start[i + 1]):
                f = f_off[i] + flows[j]
                work_add += _route_entries(
                    alloc_nodes[_new_core(f_src[f], ranks, new_cores, cores) // cpn],
                    alloc_nodes[_new_core(f_dst[f], ranks, new_cores, cores) // cpn], dims,
                    strides, wrap, tpl)
    scal[WORK] += work_add
    return True


@kernel(nogil=True)
def _keep_witness(loads, members, n_members, top, scal, slot_of_link, wit):
    """After a kept move: when the witness link is no longer at the busiest value, take the
    first link at it (phases in order, each phase's loaded links); no work is counted."""
    mx = scal[MAX]
    thr = mx - 1e-9 * max(mx, 1.0)
    if loads[wit[0], wit[1]] >= thr:
        return
    for i in range(loads.shape[0]):
        if top[i] < thr:
            continue
        for j in range(n_members[i]):
            link = members[i, j]
            if loads[i, link] >= thr:
                wit[0] = i
                wit[1] = link
                wit[2] = slot_of_link[link]
                return


@kernel(nogil=True)
def _try_move(ranks, new_cores, cores, rank_of_core, alloc_nodes, cpn, pcoords, f_src, f_dst,
              f_bytes, f_off, rf_indptr, rf_fl, rf_off, loads, members, n_members, in_set, busy_len,
              added_len, top, n_top, phase_hb, weight, scal, scratch, mark, n_links, dims, strides,
              wrap, link_of_slot, slot_of_link, wit, tpl):
    """Give ``ranks[k]`` the core ``new_cores[k]``; keep it only if the objective drops
    (rankmap.mappers.refine's ``_State.try_move``). Returns whether it was kept.

    A move that adds hop-bytes is kept only if it lowers the busiest link's bytes, which
    needs every link at that value to lose bytes: when the witness ``wit`` (phase, link,
    dense slot of a link at the busiest value) is on none of the moved flows' old walks
    (:func:`dor_takes_slot`), such a move is refused from the hop distances alone, with the
    same work counted, before any walk."""
    n_ph = loads.shape[0]
    n_r = ranks.shape[0]
    # the moved flows of every phase (sorted, distinct) and their ends' nodes
    n_moved = np.zeros(n_ph, dtype=np.int64)
    cap = 0
    for i in range(n_ph):
        for r in ranks:
            cap += rf_indptr[i, r + 1] - rf_indptr[i, r]
    flows = np.empty(max(cap, 1), dtype=np.int64)
    start = np.zeros(n_ph + 1, dtype=np.int64)
    p = 0
    for i in range(n_ph):
        q = p
        for r in ranks:
            for j in range(rf_indptr[i, r], rf_indptr[i, r + 1]):
                flows[q] = rf_fl[rf_off[i] + j]
                q += 1
        seg = np.sort(flows[p:q])
        m = 0
        for j in range(seg.shape[0]):
            if j == 0 or seg[j] != seg[j - 1]:
                flows[p + m] = seg[j]
                m += 1
        n_moved[i] = m
        p += m
        start[i + 1] = p
    total = p
    if _refused_by_witness(n_moved, flows, start, ranks, new_cores, cores, cpn, alloc_nodes,
                           f_src, f_dst, f_bytes, f_off, pcoords, loads, scal, dims, strides,
                           wrap, wit, tpl):
        return False
    # route entries: per live phase (in order), the old ends then the new ends
    n_live = 0
    for i in range(n_ph):
        if n_moved[i] > 0:
            n_live += 1
    src = np.empty(2 * total, dtype=np.int64)
    dst = np.empty(2 * total, dtype=np.int64)
    wgt = np.empty(2 * total, dtype=np.float64)
    part = np.empty(2 * total, dtype=np.int64)
    live = np.empty(n_live, dtype=np.int64)
    e = 0
    k = 0
    for i in range(n_ph):
        if n_moved[i] == 0:
            continue
        live[k] = i
        for half in range(2):
            for j in range(start[i], start[i + 1]):
                f = f_off[i] + flows[j]
                cs = cores[f_src[f]]
                cd = cores[f_dst[f]]
                if half == 1:
                    cs = _new_core(f_src[f], ranks, new_cores, cores)
                    cd = _new_core(f_dst[f], ranks, new_cores, cores)
                src[e] = alloc_nodes[cs // cpn]
                dst[e] = alloc_nodes[cd // cpn]
                wgt[e] = -f_bytes[f] if half == 0 else f_bytes[f]
                part[e] = k
                e += 1
        k += 1
    links, sums, hops, entries, cut = _move_sums(src, dst, wgt, part, n_live, scratch, mark,
                                                 dims, strides, wrap, link_of_slot, tpl)
    # work and hop-bytes change per phase
    dhbs = np.zeros(n_ph, dtype=np.float64)
    work_add = 0.0
    e = 0
    for k in range(n_live):
        i = live[k]
        m = n_moved[i]
        old_sum = 0.0
        new_sum = 0.0
        old_dot = 0.0
        new_dot = 0.0
        for j in range(m):
            w = f_bytes[f_off[i] + flows[start[i] + j]]
            old_sum += entries[e + j]
            new_sum += entries[e + m + j]
            old_dot += hops[e + j] * w
            new_dot += hops[e + m + j] * w
        e += 2 * m
        work_add += m + (old_sum + new_sum)
        dhbs[i] = new_dot - old_dot
    scal[WORK] += work_add
    dhb = 0.0
    for i in range(n_ph):
        dhb += dhbs[i]
    tops = top.copy()
    for k in range(n_live):
        i = live[k]
        tops[i] = _top_after(i, links, sums, cut[k], cut[k + 1], loads, members, n_members,
                             top, n_top)
    new_max = 0.0
    for i in range(n_ph):
        new_max = tops[i] if i == 0 else max(new_max, tops[i])
    mx = scal[MAX]
    tol = 1e-9 * max(mx, 1.0)
    lower = new_max < mx - tol
    at_max = scal[AT_MAX]
    if not lower and new_max <= mx + tol and mx > 0:
        thr = mx - tol
        for k in range(n_live):
            i = live[k]
            for j in range(cut[k], cut[k + 1]):
                cur = loads[i, links[j]]
                if cur + sums[j] >= thr:
                    at_max += 1
                if cur >= thr:
                    at_max -= 1
    hb = scal[HB]
    hb_tol = 1e-9 * max(hb, 1.0)
    better = lower or (new_max <= mx + tol and (
        (at_max < scal[AT_MAX] and dhb <= hb_tol)
        or (at_max <= scal[AT_MAX] and dhb < -hb_tol)))
    if not better:
        return False
    e = 0
    for k in range(n_live):
        i = live[k]
        m = n_moved[i]
        for j in range(m):
            f = f_off[i] + flows[start[i] + j]
            w_new = hops[e + m + j] * f_bytes[f]
            scal[TOTAL] += w_new - weight[f]
            weight[f] = w_new
            if tpl is not None:
                tpl[7][f] = entries[e + m + j]
        e += 2 * m
        phase_hb[i] += dhbs[i]
        same_top = tops[i] == top[i]
        for j in range(cut[k], cut[k + 1]):
            link = links[j]
            if same_top:
                n_top[i] += _at_top_change(loads[i, link], sums[j], top[i])
            loads[i, link] += sums[j]
            if not in_set[i, link]:
                in_set[i, link] = True
                members[i, n_members[i]] = link
                n_members[i] += 1
        added_len[i] += cut[k + 1] - cut[k]
        if added_len[i] > busy_len[i]:
            _compact(i, loads, members, n_members, in_set, busy_len, added_len)
    scal[MAX] = new_max
    scal[HB] = hb + dhb
    for k in range(n_live):
        i = live[k]
        if tops[i] != top[i]:
            top[i] = tops[i]
            n_top[i] = count_at_top(i, loads, members, n_members, top, n_links)
    if lower:
        scal[AT_MAX] = count_at_max(loads, members, n_members, top, scal)
    else:
        scal[AT_MAX] = at_max
    for k in range(n_r):
        rank_of_core[cores[ranks[k]]] = -1
    for k in range(n_r):
        rank_of_core[new_cores[k]] = ranks[k]
        cores[ranks[k]] = new_cores[k]
    _keep_witness(loads, members, n_members, top, scal, slot_of_link, wit)
    return True


@kernel(nogil=True)
def refine_step(a, ppos, opts, c, cores, rank_of_core, alloc_nodes, cpn, w_indptr, w_indices,
                w_data, w_hb, pcoords, f_src, f_dst, f_bytes, f_off, rf_indptr, rf_fl, rf_off,
                loads, members, n_members, in_set, busy_len, added_len, top, n_top, phase_hb,
                weight, scal, scratch, mark, n_links, dims, strides, wrap, link_of_slot,
                slot_of_link, wit, tpl):
    """Judge, and keep or refuse, one proposal of the refinement (see the module docstring).

    Parameters
    ----------
    a : int
        The rank that moves.
    ppos : int
        Allocation position (node index) of its partner.
    opts : ndarray of int64
        Allocation positions linked to ``ppos``.
    c : int
        The core drawn for ``a`` (used when no target saves hop-bytes).
    cores, rank_of_core, loads, members, n_members, in_set, busy_len, added_len, top, \
phase_hb, weight, scal : ndarray
        The search's state (module docstring), updated in place.
    scratch, mark : ndarray of float64 and bool, shape (links,)
        Zeros and False (left so on return).
    alloc_nodes : ndarray of int64
        Machine node of every allocation position.
    cpn : int
        Cores per node.
    w_indptr, w_indices, w_data : ndarray
        Bytes between ranks, both directions, all phases (CSR, sorted int64 indices,
        float64).
    w_hb : ndarray of float64
        Every rank's hop-bytes under ``cores`` (:func:`rank_hop_bytes`; updated when kept).
    pcoords : ndarray of int64, shape (positions, ndim)
        Coordinates of every allocation position's node.
    f_src, f_dst, f_bytes, f_off : ndarray
        Every phase's flows (ranks, bytes) one after the other; phase i's are
        ``f_off[i]:f_off[i + 1]``.
    rf_indptr, rf_fl, rf_off : ndarray
        Per phase, the flows (phase-local ids) touching each rank: row i of ``rf_indptr``
        points into ``rf_fl[rf_off[i]:]``.
    n_links : int
        Links of the machine.
    dims, strides : ndarray of int64
        Sides and node-id strides of the torus/mesh (a k-ary n-tree's: its arity once per
        level, and the powers of the arity).
    wrap : ndarray of bool or int8
        Whether each dimension wraps around; int8 on a k-ary n-tree (module docstring), where
        ``pcoords`` are the hosts' base-k digits and dense slots are link ids.
    link_of_slot : ndarray of int64
        Link id of every dense link slot.
    slot_of_link : ndarray of int64
        Dense link slot of every link.
    wit : ndarray of int64, shape (3,)
        Phase, link and dense slot of a link at the busiest value, when there is one
        (updated; only speeds refusals up, never changes a decision).
    tpl : tuple of ndarray or None
        Under minimal adaptive routing on a torus or mesh, its template store
        (:func:`rankmap.kernels.template_store.template_store`; filled as flows are routed)
        and, last, every flow's route entries under ``cores`` (:func:`flow_route_entries`;
        updated when kept): routes are then the templates; else None (dimension-order walks,
        or d-mod-k routes on a tree; the kernels are compiled apart for each, so the walks
        take no test of it).

    Returns
    -------
    int
        -1 when the move is no move (the core chosen is ``a``'s own: not a proposal), 0
        when refused, 1 when kept.
    """
    tpos = np.empty(1 + opts.shape[0], dtype=np.int64)
    tpos[0] = ppos
    tpos[1:] = opts
    best = best_target(a, tpos, cores, rank_of_core, cpn, w_indptr, w_indices, w_data,
                       w_hb, pcoords, dims, wrap)
    if best >= 0:
        c = best
    if c == cores[a]:
        return -1
    b = rank_of_core[c]
    if b < 0:
        ranks = np.empty(1, dtype=np.int64)
        new_cores = np.empty(1, dtype=np.int64)
        ranks[0] = a
        new_cores[0] = c
    else:
        ranks = np.empty(2, dtype=np.int64)
        new_cores = np.empty(2, dtype=np.int64)
        ranks[0] = a
        ranks[1] = b
        new_cores[0] = c
        new_cores[1] = cores[a]
    here = cores[a] // cpn
    kept = _try_move(ranks, new_cores, cores, rank_of_core, alloc_nodes, cpn, pcoords, f_src,
                     f_dst, f_bytes, f_off, rf_indptr, rf_fl, rf_off, loads, members, n_members,
                     in_set, busy_len, added_len, top, n_top, phase_hb, weight, scal, scratch, mark,
                     n_links, dims, strides, wrap, link_of_slot, slot_of_link, wit, tpl)
    if kept:
        # where the moved ranks were: a here, b (if any) on a's new core
        old_pos = np.empty(ranks.shape[0], dtype=np.int64)
        old_pos[0] = here
        if ranks.shape[0] > 1:
            old_pos[1] = new_cores[0] // cpn
        moved_hop_bytes(ranks, old_pos, cores, cpn, w_indptr, w_indices, w_data, w_hb,
                        pcoords, dims, wrap)
    return 1 if kept else 0


#: indices into ``refine_batch``'s ``counters``
LEFT, PROPOSALS, ACCEPTED, WINDOWS, REFUSED, STALE = 0, 1, 2, 3, 4, 5


@kernel(nogil=True)
def _small_gain(before, scal, min_gain, windows_left):
    """True when no figure of ``before`` (busiest link, links at it, hop-bytes) dropped by
    ``min_gain`` (relative) in the state now. Fewer links at an unchanged busiest value count
    only while :data:`COUNT_PACE_MARGIN` times the window's pace, over ``windows_left``
    windows, would take the last of them off it: relieving them one by one is how the busiest
    value comes down, and a search that cannot get there within its budget ends with it."""
    for k in range(3):
        b = before[k]
        if b > 0 and not b - scal[k] < min_gain * b:
            if k == AT_MAX and not scal[MAX] < before[MAX] \
                    and COUNT_PACE_MARGIN * (b - scal[k]) * windows_left < scal[k]:
                continue
            return False
    return True


@kernel(nogil=True)
def window_stop(counters, window_start, behind, window, min_gain, scal):
    """Whether a refinement search ends after the window it has just completed, and why
    (both loops of :func:`rankmap.mappers.refine.refine_search` call it): when no figure
    dropped enough in the window (``min_gain``; fewer links at the busiest value only
    while that pace could take them all off it, :func:`_small_gain`), or when, given a
    busiest link to catch and above it, the pace of the last ``k`` windows would not bring
    the busiest link down to it over the windows left. When the search goes on, the window's
    start figures and the busiest link's history move on.

    Parameters
    ----------
    counters : ndarray of int64
        As :func:`refine_batch` (its completed windows already counted).
    window_start : ndarray of float64, shape (3,)
        Busiest link bytes, links at it and hop-bytes at the window's start (updated).
    behind : ndarray of float64
        ``[catch, b_0 ... b_(k-1)]``: the busiest link bytes the search must be expected to
        reach (0: no such stop), then the busiest link bytes at the end of the last ``k``
        windows, window ``w``'s at ``1 + w % k`` (the start's at ``b_0``; updated).
    window : int
        Proposals per window.
    min_gain : float
        Relative gain a window must bring, scaled to the budget left (0: no such stop).
    scal : ndarray of float64
        The search's state figures (busiest link bytes, links at it, hop-bytes first).

    Returns
    -------
    int
        :data:`STOP_SMALL_GAIN`, :data:`STOP_BEHIND` or :data:`GO_ON`.
    """
    left = counters[LEFT]
    if min_gain > 0 and _small_gain(window_start, scal, min_gain * window / max(left, window),
                                    left / window):
        return STOP_SMALL_GAIN
    window_start[:] = scal[:3]
    k = behind.shape[0] - 1
    w = counters[WINDOWS]
    slot = 1 + w % k
    catch, now = behind[0], scal[MAX]
    if catch > 0 and w >= k:
        # bytes a window over the last k windows; never negative (no kept move raises the
        # busiest link), so a search at or below the catch goes on
        pace = (behind[slot] - now) / k
        if now - pace * (left / window) > catch:
            return STOP_BEHIND
    behind[slot] = now
    return GO_ON


@kernel(nogil=True)
def refine_batch(rng, sums, last, batch, src, dst, nb_ptr, nb_pos, counters, window_start,
                 behind, window, min_gain, max_work, reweight_ratio, built, cores, rank_of_core,
                 alloc_nodes, cpn, w_indptr, w_indices, w_data, w_hb, pcoords, f_src, f_dst,
                 f_bytes, f_off, rf_indptr, rf_fl, rf_off, loads, members, n_members, in_set,
                 busy_len, added_len, top, n_top, phase_hb, weight, scal, scratch, mark, n_links,
                 dims, strides, wrap, link_of_slot, slot_of_link, wit, tpl):
    """One batch of :func:`rankmap.mappers.refine.refine_search`'s proposals, drawn and
    judged as its Python loop does, draw for draw from the same generator.

    ``batch`` flows are drawn from the draw table (one uniform each), then one uniform per flow
    picks the end that moves; per proposal, a uniform (when the partner's node has linked
    nodes) chooses the partner's node or a linked one (``integers``), and ``integers``
    a core on it; :func:`refine_step` judges the move. The batch ends early when the budget
    or the work bound is spent, after a kept move once the work since the draw table was
    built reaches the flows / ``reweight_ratio``, or when a window's gain is small.

    Parameters
    ----------
    rng : numpy.random.Generator
        The search's generator (advanced in place).
    sums, last : ndarray of float64, float
        The flows' draw table as running sums and their last value
        (:func:`cumulative_weights`; the table is ``sums / last``, :func:`draw_table`).
    batch : int
        Flows drawn.
    src, dst : ndarray of int64
        Every flow's ranks (all phases, the table's order).
    nb_ptr, nb_pos : ndarray of int64
        Allocated link neighbours of every allocation position (CSR).
    counters : ndarray of int64
        Proposals left, made, kept, completed windows, refused in a row, and whether the
        table is stale (updated).
    window_start : ndarray of float64, shape (3,)
        Busiest link bytes, links at it and hop-bytes at the window's start (updated).
    behind : ndarray of float64
        The catch value and the busiest link's history (:func:`window_stop`; updated).
    window : int
        Proposals per window.
    min_gain : float
        Relative gain a window must bring, scaled to the budget left (0: no such stop).
    max_work : float
        Work bound (route entries looked at).
    reweight_ratio : int
        The table is rebuilt after a kept move once ``(work - built) * reweight_ratio``
        reaches the number of flows.
    built : float
        Work when the table was built.
    cores, rank_of_core, alloc_nodes, cpn, w_indptr, w_indices, w_data, w_hb, pcoords, \
f_src, f_dst, f_bytes, f_off, rf_indptr, rf_fl, rf_off, loads, members, n_members, in_set, \
busy_len, added_len, top, n_top, phase_hb, weight, scal, scratch, mark, n_links, dims, strides, \
wrap, link_of_slot, slot_of_link, wit, tpl
        As :func:`refine_step`.

    Returns
    -------
    int
        :data:`GO_ON`, or why the search ends after a window (:func:`window_stop`).
    """
    draws = rng.random(batch)
    picks = np.empty(batch, dtype=np.int64)
    for q in range(batch):
        picks[q] = draw_from_sums(sums, last, draws[q])
    flips = rng.random(batch)
    n_src = src.shape[0]
    for q in range(batch):
        if counters[LEFT] <= 0 or scal[WORK] > max_work:
            break
        f = picks[q]
        if flips[q] < 0.5:
            a, partner = src[f], dst[f]
        else:
            a, partner = dst[f], src[f]
        ppos = cores[partner] // cpn
        o0, o1 = nb_ptr[ppos], nb_ptr[ppos + 1]
        if o1 == o0 or rng.random() < 0.3:
            tpos = ppos
        else:
            tpos = nb_pos[o0 + rng.integers(0, o1 - o0)]
        c = tpos * cpn + rng.integers(0, cpn)
        kept = refine_step(a, ppos, nb_pos[o0:o1], c, cores, rank_of_core, alloc_nodes, cpn,
                           w_indptr, w_indices, w_data, w_hb, pcoords, f_src, f_dst, f_bytes,
                           f_off,
                           rf_indptr, rf_fl, rf_off, loads, members, n_members, in_set,
                           busy_len, added_len, top, n_top, phase_hb, weight, scal, scratch, mark,
                           n_links, dims, strides, wrap, link_of_slot, slot_of_link, wit, tpl)
        if kept < 0:
            continue
        counters[LEFT] -= 1
        counters[PROPOSALS] += 1
        if counters[PROPOSALS] % window == 0:
            counters[WINDOWS] += 1
            code = window_stop(counters, window_start, behind, window, min_gain, scal)
            if code != GO_ON:
                counters[LEFT] = 0
                return code
        if kept == 1:
            counters[ACCEPTED] += 1
            counters[REFUSED] = 0
            counters[STALE] = 1
            if (scal[WORK] - built) * reweight_ratio >= n_src:
                break
            continue
        counters[REFUSED] += 1
    return GO_ON


@kernel(nogil=True)
def refine_batches(rng, batch, max_refused, src, dst, nb_ptr, nb_pos, counters, window_start,
                   behind, window, min_gain, max_work, reweight_ratio, cores, rank_of_core,
                   alloc_nodes, cpn, w_indptr, w_indices, w_data, w_hb, pcoords, f_src,
                   f_dst, f_bytes, f_off, rf_indptr, rf_fl, rf_off, loads, members, n_members,
                   in_set, busy_len, added_len, top, n_top, phase_hb, weight, scal, scratch, mark,
                   n_links, dims, strides, wrap, link_of_slot, slot_of_link, wit, tpl):
    """The whole search loop of :func:`rankmap.mappers.refine.refine_search` in one call:
    batches of :func:`refine_batch`, with the loop's checks before each (budget, refusals
    in a row, work bound) and the draw table (:func:`draw_table`) built first and rebuilt
    before a batch once the work since the last build, times ``reweight_ratio``, reaches
    the number of flows after a kept move -- the Python loop's steps in its order, so the
    same draws and the same placement, without a return to Python per batch.

    Parameters
    ----------
    rng : numpy.random.Generator
        The search's generator (advanced in place).
    batch : int
        Flows drawn per batch.
    max_refused : int
        The search stops after this many refused proposals in a row.
    src, dst, nb_ptr, nb_pos, counters, window_start, behind, window, min_gain, max_work, \
reweight_ratio
        As :func:`refine_batch` (``counters``, ``window_start`` and ``behind`` updated).
    cores, rank_of_core, alloc_nodes, cpn, w_indptr, w_indices, w_data, w_hb, pcoords, \
f_src, f_dst, f_bytes, f_off, rf_indptr, rf_fl, rf_off, loads, members, n_members, in_set, \
busy_len, added_len, top, n_top, phase_hb, weight, scal, scratch, mark, n_links, dims, strides, \
wrap, link_of_slot, slot_of_link, wit, tpl
        As :func:`refine_step` (``scal[TOTAL]`` is the draw weights' sum).

    Returns
    -------
    int
        Why it stopped: :data:`STOP_BUDGET`, :data:`STOP_REFUSED`, :data:`STOP_WORK`,
        :data:`STOP_NO_HOPS`, :data:`STOP_SMALL_GAIN` or :data:`STOP_BEHIND`.
    """
    n_src = src.shape[0]
    sums = np.empty(weight.shape[0], dtype=np.float64)
    last = 0.0
    have_table = False
    built = 0.0
    while counters[LEFT] > 0:
        if counters[REFUSED] >= max_refused:
            return STOP_REFUSED
        if scal[WORK] > max_work:
            return STOP_WORK
        if not have_table or (counters[STALE] != 0
                              and (scal[WORK] - built) * reweight_ratio >= n_src):
            total = scal[TOTAL]
            if not total > 0:
                return STOP_NO_HOPS
            last = cumulative_weights(weight, total, sums)
            have_table = True
            built = scal[WORK]
            counters[STALE] = 0
        code = refine_batch(rng, sums, last, batch, src, dst, nb_ptr, nb_pos, counters,
                            window_start, behind, window, min_gain, max_work, reweight_ratio,
                            built, cores, rank_of_core, alloc_nodes, cpn, w_indptr, w_indices,
                            w_data, w_hb, pcoords, f_src, f_dst, f_bytes, f_off, rf_indptr,
                            rf_fl,
                            rf_off, loads, members, n_members, in_set, busy_len, added_len, top,
                            n_top, phase_hb, weight, scal, scratch, mark, n_links, dims, strides,
                            wrap, link_of_slot, slot_of_link, wit, tpl)
        if code != GO_ON:
            return code
    return STOP_BUDGET


@kernel(nogil=True)
def _swapped(x, pos, u, v, p, q):
    """Position of unit x (now at ``pos``) once u goes to p and v (if any) to u's place q."""
    if x == u:
        return p
    if x == v:
        return q
    return pos


@kernel(nogil=True)
def _count_at(loads, i, value):
    """Links of phase ``i`` carrying at least ``value`` bytes (every link of the row)."""
    c = 0
    for link in range(loads.shape[1]):
        if loads[i, link] >= value:
            c += 1
    return c


@kernel(nogil=True)
def swap_step(u, p, pos_of, unit_at, slots, alloc_nodes, f_src, f_dst, f_bytes, f_off,
              rf_indptr, rf_fl, rf_off, loads, top, n_top, scal, scratch, mark, dims, strides,
              wrap, link_of_slot):
    """One exactly evaluated swap of ``graph``'s link swaps (rankmap.mappers.swap_refine's
    ``_Loads.try_swap``): unit ``u`` onto position ``p``, the unit there (if any) onto
    ``u``'s position; kept only if (busiest link bytes, sum of squared link bytes) drops.

    The moved flows (those of the two units whose nodes change) are summed along their old
    and new dimension-order walks per phase, in flow order, as the Python step sums them;
    the caller runs this only where every sum is exact (whole multiples of a common power
    of two whose squares sum below 2**53), so the decisions are the Python step's.

    Parameters
    ----------
    u, p : int
        The unit and the position it is offered.
    pos_of, unit_at : ndarray of int64
        Position of every unit; unit of every position (-1 free); updated when kept.
    slots : int
        Positions per allocation node.
    alloc_nodes : ndarray of int64
        Machine node of every allocation position.
    f_src, f_dst, f_bytes, f_off : ndarray
        Every phase's flows between units, one phase after the other
        (``f_off[i]:f_off[i + 1]``).
    rf_indptr, rf_fl, rf_off : ndarray
        Per phase, the flows (phase-local ids) touching each unit (row i of ``rf_indptr``
        points into ``rf_fl[rf_off[i]:]``).
    loads : ndarray of float64, shape (phases, links)
        Link bytes per phase (updated when kept).
    top : ndarray of float64, shape (phases,)
        Busiest link bytes per phase (updated when kept).
    n_top : ndarray of int64, shape (phases,)
        Links at each phase's busiest value (updated when kept): while a link the swap does
        not change stays at it, the phase's new busiest value comes from the changed links
        alone, without looking at the rest of the phase.
    scal : ndarray of float64, shape (2,)
        Busiest link bytes over all phases and the sum of squared link bytes (updated).
    scratch, mark : ndarray of float64 and bool, shape (links,)
        Zeros and False (left so on return).
    dims, strides : ndarray of int64
        Sides and node-id strides of the torus/mesh.
    wrap : ndarray of bool
        Whether each dimension wraps around.
    link_of_slot : ndarray of int64
        Link id of every dense link slot.

    Returns
    -------
    bool
        Whether the swap was kept.
    """
    n_ph = loads.shape[0]
    q = pos_of[u]
    v = unit_at[p]
    # moved flows per phase: sorted distinct flows of u (and v) whose end nodes change
    cap = 0
    for i in range(n_ph):
        cap += rf_indptr[i, u + 1] - rf_indptr[i, u]
        if v >= 0:
            cap += rf_indptr[i, v + 1] - rf_indptr[i, v]
    src = np.empty(2 * cap, dtype=np.int64)
    dst = np.empty(2 * cap, dtype=np.int64)
    wgt = np.empty(2 * cap, dtype=np.float64)
    part = np.empty(2 * cap, dtype=np.int64)
    live = np.empty(n_ph, dtype=np.int64)
    n_live = 0
    e = 0
    buf = np.empty(max(cap, 1), dtype=np.int64)
    for i in range(n_ph):
        c = 0
        for x in (u, v):
            if x < 0:
                continue
            for j in range(rf_indptr[i, x], rf_indptr[i, x + 1]):
                buf[c] = rf_fl[rf_off[i] + j]
                c += 1
        if c == 0:
            continue
        seg = np.sort(buf[:c])
        # old ends then new ends of the moved flows, in flow order
        first = e
        m = 0
        for j in range(c):
            if j > 0 and seg[j] == seg[j - 1]:
                continue
            f = f_off[i] + seg[j]
            ps, pd = pos_of[f_src[f]], pos_of[f_dst[f]]
            nps = _swapped(f_src[f], ps, u, v, p, q)
            npd = _swapped(f_dst[f], pd, u, v, p, q)
            os_, od = alloc_nodes[ps // slots], alloc_nodes[pd // slots]
            ns, nd = alloc_nodes[nps // slots], alloc_nodes[npd // slots]
            if os_ == ns and od == nd:
                continue
            src[first + m] = os_
            dst[first + m] = od
            wgt[first + m] = -f_bytes[f]
            buf[m] = f                      # (seg holds the flows: buf is free again)
            m += 1
        for j in range(m):
            f = buf[j]
            nps = _swapped(f_src[f], pos_of[f_src[f]], u, v, p, q)
            npd = _swapped(f_dst[f], pos_of[f_dst[f]], u, v, p, q)
            src[first + m + j] = alloc_nodes[nps // slots]
            dst[first + m + j] = alloc_nodes[npd // slots]
            wgt[first + m + j] = f_bytes[f]
        if m == 0:
            continue
        for j in range(first, first + 2 * m):
            part[j] = n_live
        live[n_live] = i
        n_live += 1
        e = first + 2 * m
    if n_live == 0:
        return False
    links, sums, _hops, _entries, cut = _move_sums(src[:e], dst[:e], wgt[:e], part[:e], n_live,
                                                   scratch, mark, dims, strides, wrap,
                                                   link_of_slot, None)
    tops = top.copy()
    new_sq = scal[1]
    for k in range(n_live):
        i = live[k]
        lo, hi = cut[k], cut[k + 1]
        sa = 0.0
        sc = 0.0
        at_top = 0
        a_max = -np.inf
        for j in range(lo, hi):
            cur = loads[i, links[j]]
            after = cur + sums[j]
            sa += after * after
            sc += cur * cur
            if cur >= top[i]:
                at_top += 1
            a_max = max(a_max, after)
        new_sq += sa - sc
        if at_top > 0 and at_top >= n_top[i]:
            # a busiest link changed: the rest of the phase is looked at once
            for j in range(lo, hi):
                scratch[j - lo] = loads[i, links[j]]
                loads[i, links[j]] = scratch[j - lo] + sums[j]
            t = loads[i, 0]
            for link in range(1, loads.shape[1]):
                t = max(t, loads[i, link])
            for j in range(lo, hi):
                loads[i, links[j]] = scratch[j - lo]
                scratch[j - lo] = 0.0
            tops[i] = t
        elif hi > lo:
            # an unchanged link stays at the busiest value (or none of the changed is at it)
            tops[i] = max(top[i], a_max)
    new_max = 0.0
    for i in range(n_ph):
        new_max = max(new_max, tops[i])
    mx, sq = scal[0], scal[1]
    tol = 1e-9 * max(mx, 1.0)
    better = new_max < mx - tol or (new_max <= mx + tol and new_sq < sq - 1e-9 * max(sq, 1.0))
    if not better:
        return False
    for k in range(n_live):
        i = live[k]
        same_top = tops[i] == top[i]
        for j in range(cut[k], cut[k + 1]):
            link = links[j]
            if same_top:
                n_top[i] += _at_top_change(loads[i, link], sums[j], top[i])
            loads[i, link] += sums[j]
        if not same_top:
            n_top[i] = _count_at(loads, i, tops[i])
    top[:] = tops
    scal[0] = new_max
    scal[1] = new_sq
    pos_of[u] = p
    unit_at[p] = u
    unit_at[q] = v
    if v >= 0:
        pos_of[v] = q
    return True
