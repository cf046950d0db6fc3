"""Max-min fair bandwidth sharing by progressive filling, and the flow-level event loop.

Resources (network links, NIC ports, node memory) have capacities in bytes/s. Flow ``f``
uses resource ``r`` with weight ``a[f, r]`` (the fraction of its bytes on ``r``; 1 on a
single path). A rate vector ``x`` is feasible when ``sum_f a[f, r] x[f] <= cap[r]`` for
every ``r``. Progressive filling raises the rate of every unfrozen flow together; when a
resource saturates, the flows crossing it freeze at the current level. The result is the
max-min fair allocation (the model of SimGrid's CM02 network model and of seed 001's
"streams share a link" argument).

:func:`completion_times` runs the phase: all flows start at t = 0, rates are the max-min
allocation of the flows still running, and it is recomputed each time flows finish, exactly
and incrementally (only the flows running at the lowest finished rate or faster are filled
again; see its docstring). Flows whose finish time is within a relative ``tolerance`` of the
earliest one are retired together, each at its own finish time. ``retire_fraction`` > 0 makes
every event retire at least that fraction of the running flows (an approximation kept for
experiments; the default is 0, exact).

Everything runs in numba on CSR (flow -> resources) and CSC (resource -> flows) arrays.
"""

from __future__ import annotations

import heapq

import numpy as np

from ..kernels.jit import kernel

__all__ = ["completion_times", "maxmin_rates"]


@kernel(nogil=True)
def _columns(indptr, indices, n_cols):
    """CSC structure (col_ptr, rows) of a CSR matrix: which rows use each column.

    Rows are stored as 32-bit numbers (half the memory of the largest array of a phase);
    the matrix must have fewer than 2**31 rows.
    """
    nnz = indices.shape[0]
    n_rows = indptr.shape[0] - 1
    col_ptr = np.zeros(n_cols + 1, dtype=np.int64)
    for k in range(nnz):
        col_ptr[indices[k] + 1] += 1
    for c in range(n_cols):
        col_ptr[c + 1] += col_ptr[c]
    fill = col_ptr[:-1].copy()
    rows = np.empty(nnz, dtype=np.int32)  # row numbers: callers keep rows below 2**31
    for f in range(n_rows):
        for k in range(indptr[f], indptr[f + 1]):
            c = indices[k]
            rows[fill[c]] = f
            fill[c] += 1
    return col_ptr, rows


@kernel(nogil=True)
def maxmin_rates(indptr, indices, data, cap, active, rate, mult):
    """Max-min fair rates (bytes/s) of the ``active`` flows, written into ``rate``.

    Row ``f`` stands for ``mult[f]`` identical flows (same resources and bytes); ``rate[f]``
    is the rate of each of them. Active flows that use no resource get ``inf``. Returns the
    number of saturation steps (one progressive filling, :func:`_fill`).

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_flows + 1,)
        CSR row pointers: flow f uses ``indices[indptr[f]:indptr[f+1]]``.
    indices : ndarray of int, shape (nnz,)
        Resource of every entry.
    data : ndarray of float64, shape (nnz,)
        Weight of every entry: the fraction of the flow's bytes on that resource.
    cap : ndarray of float64, shape (n_resources,)
        Capacity of every resource, bytes/s.
    active : ndarray of bool, shape (n_flows,)
        Which flows take part; the others are ignored and their ``rate`` left as it is.
    rate : ndarray of float64, shape (n_flows,)
        Output: the rate of each active flow, bytes/s (written in place).
    mult : ndarray, shape (n_flows,)
        Number of identical flows each row stands for.

    Returns
    -------
    int
        Number of saturation steps of the progressive filling.
    """
    n_flows = indptr.shape[0] - 1
    n_res = cap.shape[0]
    col_ptr, col_rows = _columns(indptr, indices, n_res)
    flows = np.empty(n_flows, dtype=np.int64)
    n_open = 0
    for f in range(n_flows):
        if not active[f]:
            continue
        if indptr[f] == indptr[f + 1]:
            rate[f] = np.inf
        else:
            flows[n_open] = f
            n_open += 1
    return _fill(indptr, indices, data, col_ptr, col_rows, cap, np.zeros(n_res), rate, mult,
                 flows, n_open, 0.0, np.ones(n_flows, dtype=np.bool_), np.zeros(n_res),
                 np.zeros(n_res, dtype=np.int64), np.zeros(n_res, dtype=np.bool_),
                 np.empty(n_res, dtype=np.int64))


@kernel(nogil=True)
def _compact(indptr, indices, data, keep):
    """CSR of the rows flagged in ``keep`` (in order)."""
    n_keep = 0
    nnz = 0
    for f in range(keep.shape[0]):
        if keep[f]:
            n_keep += 1
            nnz += indptr[f + 1] - indptr[f]
    ptr = np.zeros(n_keep + 1, dtype=np.int64)
    idx = np.empty(nnz, dtype=indices.dtype)
    val = np.empty(nnz, dtype=data.dtype)
    i = 0
    p = 0
    for f in range(keep.shape[0]):
        if not keep[f]:
            continue
        for k in range(indptr[f], indptr[f + 1]):
            idx[p] = indices[k]
            val[p] = data[k]
            p += 1
        i += 1
        ptr[i] = p
    return ptr, idx, val


@kernel(nogil=True)
def _fill(ptr, idx, val, col_ptr, col_rows, cap, use, rate, mult, flows, n_flows_open,
          start_level, frozen, weight, count, touched, touched_list):
    """Progressive filling of the flows ``flows[:n_flows_open]`` from ``start_level`` up.

    Every other running flow keeps its rate; its usage of each resource is already in
    ``use`` (bytes/s), and the filled flows' usage is added there as they freeze. The scratch
    arrays (``weight``, ``count``, ``touched``) are all-zero on entry and left so. Returns
    the number of saturation steps.

    The heap holds one entry per resource still crossed by an unfrozen flow, keyed by a
    lower bound of its saturation level: freezing a flow at the current level never lowers
    the saturation level of the other resources it crosses (it adds ``w * level`` to their
    usage and takes ``w`` off their weight, and ``level`` is at most their level), so an
    entry is re-checked when it reaches the top and pushed back if its level has risen,
    instead of being pushed again on every change.
    """
    n_res_touched = 0
    for i in range(n_flows_open):
        f = flows[i]
        frozen[f] = False
        for k in range(ptr[f], ptr[f + 1]):
            q = idx[k]
            weight[q] += val[k] * mult[f]
            count[q] += 1
            if not touched[q]:
                touched[q] = True
                touched_list[n_res_touched] = q
                n_res_touched += 1
    heap = [(0.0, np.int64(0))]
    heap.pop()
    for i in range(n_res_touched):
        q = touched_list[i]
        touched[q] = False
        sat = (cap[q] - use[q]) / weight[q]
        if sat < start_level:
            sat = start_level
        heap.append((sat, np.int64(q)))
    heapq.heapify(heap)
    n_open = n_flows_open
    level = start_level
    steps = 0
    while n_open > 0 and len(heap) > 0:
        key, r = heapq.heappop(heap)
        if count[r] == 0:
            continue
        sat = (cap[r] - use[r]) / weight[r] if weight[r] > 0 else np.inf
        if sat < level:
            sat = level
        if sat > key * (1.0 + 1e-12) and sat > level:
            heapq.heappush(heap, (sat, r))  # its level rose since it was pushed
            continue
        if sat > level:
            level = sat
        steps += 1
        for k in range(col_ptr[r], col_ptr[r + 1]):
            f = col_rows[k]
            if frozen[f]:
                continue
            frozen[f] = True
            n_open -= 1
            rate[f] = level
            for j in range(ptr[f], ptr[f + 1]):
                q = idx[j]
                w = val[j] * mult[f]
                if level < np.inf:
                    use[q] += w * level
                count[q] -= 1
                if count[q] == 0:
                    weight[q] = 0.0
                else:
                    weight[q] -= w
    for i in range(n_res_touched):
        q = touched_list[i]
        count[q] = 0
        weight[q] = 0.0
    return steps


@kernel(nogil=True)
def _release(ptr, idx, val, use, mult, f, flow_rate):
    """Take flow ``f``'s usage at ``flow_rate`` off the resources it crosses."""
    if flow_rate == np.inf:
        return
    for k in range(ptr[f], ptr[f + 1]):
        use[idx[k]] -= val[k] * mult[f] * flow_rate


@kernel(nogil=True)
def _next(order, pos, heap, active, version):
    """Skip finished or moved flows at ``order[pos:]`` and at the top of ``heap``.

    A flow is listed in ``order`` (sorted once) while ``version[f] == 0`` and in ``heap``
    (entries ``(key, f, version)``) after its rate changed. Returns the position in ``order``
    of the next valid flow (``len(order)`` when none); the heap's top is then valid too.
    """
    m = order.shape[0]
    while pos < m and (not active[order[pos]] or version[order[pos]] != 0):
        pos += 1
    while len(heap) > 0:
        _key, f, ver = heap[0]
        if active[f] and ver == version[f]:
            break
        heapq.heappop(heap)
    return pos


@kernel(nogil=True)
def _rates_never_refill(remaining, rate, tolerance):
    """Whether the event loop of :func:`completion_times` would never refill a flow.

    With every flow of the same size S, finish times are ``S / rate`` (division is
    monotone): each event retires the fastest running flows, those finishing by its horizon,
    and every flow still running is strictly slower than the slowest retired one. A refill
    happens only when such a flow is within the refill band (a relative 1e-12) of it, which
    float noise on one saturation level can cause. This replays the events on the sorted
    rates (the same horizons as the loop) and answers True when no event refills: then every
    flow finishes at ``S / rate``, the loop's outcome, without running it. Exact only without
    ``retire_fraction``; all rates must be finite and positive.
    """
    m = remaining.shape[0]
    for f in range(m):
        if remaining[f] != remaining[0] or not np.isfinite(rate[f]) or rate[f] <= 0.0:
            return False
    if m == 0:
        return True
    size = remaining[0]
    r = np.sort(rate)[::-1]
    i = 0
    while i < m:
        horizon = (size / r[i]) * (1.0 + tolerance)
        j = i
        while j + 1 < m and size / r[j + 1] <= horizon:
            j += 1
        if j + 1 < m and r[j + 1] >= r[j] * (1.0 - 1e-12):
            return False
        i = j + 1
    return True


@kernel(nogil=True)
def completion_times(indptr, indices, data, cap, nbytes, tolerance, mult, retire_fraction):
    """Finish time (s) of every flow of a phase under max-min sharing with re-sharing.

    Row ``f`` stands for ``mult[f]`` identical flows. Flows of zero bytes finish at 0;
    flows that use no resource (unlimited) finish at 0. Returns (finish, number of
    progressive fillings).

    Re-sharing is incremental and exact. When flows finish, let L be the lowest rate among
    them. Every resource that saturates below L does so with the same flows as before (a
    finished flow crosses none of them, or it would have been frozen there), so progressive
    filling of the remaining flows is the same as before up to level L: flows running slower
    than L keep their rates and their finish times, and only the flows running at L or
    faster are filled again, starting from L. When every flow has the same size the fastest
    finish first and no rate ever changes: a phase costs one filling, and when no two rates
    are within the refill band of each other the loop is not run at all (every flow finishes
    at size / rate; :func:`_rates_never_refill`). Running flows are
    sorted once by finish time and by rate; flows whose rate changes move to two small heaps,
    so an event costs what it changes, not a pass over all flows. Flows finishing within a
    relative ``tolerance`` of the earliest are retired in the same event (each at its own
    finish time); ``retire_fraction`` > 0 makes every event retire at least that fraction of
    the running flows (an approximation that bounds the number of events; 0 = exact). Before
    a refill, the working set is compacted when the running flows hold less than half of
    the incidence entries.

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_flows + 1,)
        CSR row pointers: flow f uses ``indices[indptr[f]:indptr[f+1]]``.
    indices : ndarray of int, shape (nnz,)
        Resource of every entry.
    data : ndarray of float64, shape (nnz,)
        Weight of every entry: the fraction of the flow's bytes on that resource.
    cap : ndarray of float64, shape (n_resources,)
        Capacity of every resource, bytes/s.
    nbytes : ndarray of float64, shape (n_flows,)
        Size of every flow, bytes.
    tolerance : float
        Relative tolerance on finish times within which flows are retired in one event
        (dimensionless; 0 retires only exact ties).
    mult : ndarray, shape (n_flows,)
        Number of identical flows each row stands for.
    retire_fraction : float
        Least fraction (0..1) of the running flows every event retires; 0 is exact.

    Returns
    -------
    finish : ndarray of float64, shape (n_flows,)
        Finish time of every flow, seconds from the start of the phase.
    n_fillings : int
        Number of progressive fillings run.
    """
    return _completion_times(indptr, indices, data, cap, nbytes, tolerance, mult,
                             retire_fraction, True)


@kernel(nogil=True)
def _completion_times(indptr, indices, data, cap, nbytes, tolerance, mult, retire_fraction,
                      shortcut):
    """:func:`completion_times`; ``shortcut`` lets a phase whose rates can never change
    (:func:`_rates_never_refill`, exact only with ``retire_fraction == 0``) skip the event
    loop, whose outcome is then known (tests compare both ways bit for bit)."""
    n = nbytes.shape[0]  # fewer than 2**31 (see _columns)
    n_res = cap.shape[0]
    finish = np.zeros(n, dtype=np.float64)
    keep = np.zeros(n, dtype=np.bool_)
    for f in range(n):
        keep[f] = nbytes[f] > 0 and indptr[f + 1] > indptr[f]
    ids = np.nonzero(keep)[0]
    if ids.shape[0] == n:  # nothing to drop: work on the caller's arrays (no copy)
        ptr, idx, val = indptr, indices, data
    else:
        ptr, idx, val = _compact(indptr, indices, data, keep)
    col_ptr, col_rows = _columns(ptr, idx, n_res)
    remaining = nbytes[ids].copy()
    wmult = mult[ids].copy()
    m = ids.shape[0]
    active = np.ones(m, dtype=np.bool_)
    frozen = np.ones(m, dtype=np.bool_)
    n_active = m
    active_nnz = idx.shape[0]
    rate = np.zeros(m, dtype=np.float64)
    since = np.zeros(m, dtype=np.float64)  # time at which remaining[f] was last updated
    tfin = np.zeros(m, dtype=np.float64)
    version = np.zeros(m, dtype=np.int64)
    use = np.zeros(n_res, dtype=np.float64)
    weight = np.zeros(n_res, dtype=np.float64)
    count = np.zeros(n_res, dtype=np.int64)
    touched = np.zeros(n_res, dtype=np.bool_)
    touched_list = np.empty(n_res, dtype=np.int64)
    flows = np.arange(m)
    _fill(ptr, idx, val, col_ptr, col_rows, cap, use, rate, wmult, flows, m, 0.0, frozen,
          weight, count, touched, touched_list)
    fills = 1
    for f in range(m):
        tfin[f] = remaining[f] / rate[f]
    if shortcut and retire_fraction == 0.0 and _rates_never_refill(remaining, rate, tolerance):
        for f in range(m):
            finish[ids[f]] = tfin[f]
        return finish, fills
    by_finish = np.argsort(tfin)
    by_rate = np.argsort(-rate)
    pf = 0
    pr = 0
    moved_finish = [(0.0, np.int64(0), np.int64(0))]
    moved_finish.pop()
    moved_rate = [(0.0, np.int64(0), np.int64(0))]
    moved_rate.pop()
    t = 0.0
    while n_active > 0:
        # retire the earliest flow and every flow finishing within the tolerance of it
        horizon = np.inf
        k_min = int(n_active * retire_fraction)
        low = np.inf
        retired = 0
        while True:
            pf = _next(by_finish, pf, moved_finish, active, version)
            if pf < m and (len(moved_finish) == 0 or tfin[by_finish[pf]] <= moved_finish[0][0]):
                f = by_finish[pf]
                pf += 1
            elif len(moved_finish) > 0:
                f = heapq.heappop(moved_finish)[1]
            else:
                break
            if horizon == np.inf:
                horizon = tfin[f] * (1.0 + tolerance)
                t_next = tfin[f]
            elif tfin[f] > horizon and retired >= k_min:
                # not this time: put it back where it was
                if version[f] == 0:
                    pf -= 1
                else:
                    heapq.heappush(moved_finish, (tfin[f], f, version[f]))
                break
            finish[ids[f]] = tfin[f]
            active[f] = False
            n_active -= 1
            retired += 1
            active_nnz -= ptr[f + 1] - ptr[f]
            _release(ptr, idx, val, use, wmult, f, rate[f])
            if rate[f] < low:
                low = rate[f]
        t = t_next
        if n_active == 0:
            break
        # the running flows at the lowest finished rate or faster (ties included) refill
        threshold = low * (1.0 - 1e-12)
        n_open = 0
        while True:
            pr = _next(by_rate, pr, moved_rate, active, version)
            if pr < m and (len(moved_rate) == 0 or -rate[by_rate[pr]] <= moved_rate[0][0]):
                f = by_rate[pr]
                if rate[f] < threshold:
                    break
                pr += 1
            elif len(moved_rate) > 0:
                if -moved_rate[0][0] < threshold:
                    break
                f = heapq.heappop(moved_rate)[1]
            else:
                break
            remaining[f] -= rate[f] * (t - since[f])
            since[f] = t
            _release(ptr, idx, val, use, wmult, f, rate[f])
            flows[n_open] = f
            n_open += 1
        if n_open == 0:
            continue
        if 2 * active_nnz < idx.shape[0]:
            # compact: renumber the running flows (refill set included) and re-sort
            sel = np.nonzero(active)[0]
            new_id = np.full(m, -1, dtype=np.int64)
            new_id[sel] = np.arange(sel.shape[0])
            ptr, idx, val = _compact(ptr, idx, val, active)
            col_ptr, col_rows = _columns(ptr, idx, n_res)
            for i in range(n_open):
                flows[i] = new_id[flows[i]]
            ids = ids[sel]
            remaining = remaining[sel].copy()
            wmult = wmult[sel].copy()
            rate = rate[sel].copy()
            since = since[sel].copy()
            tfin = tfin[sel].copy()
            m = sel.shape[0]
            active = np.ones(m, dtype=np.bool_)
            frozen = np.ones(m, dtype=np.bool_)
            version = np.zeros(m, dtype=np.int64)
            for i in range(n_open):
                version[flows[i]] = 1  # about to change: not in the sorted orders
            by_finish = np.argsort(tfin)
            by_rate = np.argsort(-rate)
            pf = 0
            pr = 0
            moved_finish.clear()
            moved_rate.clear()
        _fill(ptr, idx, val, col_ptr, col_rows, cap, use, rate, wmult, flows, n_open, low,
              frozen, weight, count, touched, touched_list)
        fills += 1
        for i in range(n_open):
            f = flows[i]
            version[f] += 1
            tfin[f] = t + remaining[f] / rate[f]
            heapq.heappush(moved_finish, (tfin[f], f, version[f]))
            heapq.heappush(moved_rate, (-rate[f], f, version[f]))
    return finish, fills
