"""Max-min fair bandwidth sharing by progressive filling, and the flow-level event loop.

Resources (network links, NIC ports, node memory) have capacities in bytes/s. Flow ``f``
uses resource ``r`` with weight ``a[f, r]`` (the fraction of its bytes on ``r``; 1 on a
single path). A rate vector ``x`` is feasible when ``sum_f a[f, r] x[f] <= cap[r]`` for
every ``r``. Progressive filling raises the rate of every unfrozen flow together; when a
resource saturates, the flows crossing it freeze at the current level. The result is the
max-min fair allocation (the model of SimGrid's CM02 network model and of seed 001's
"streams share a link" argument).

:func:`completion_times` runs the phase: all flows start at t = 0, rates are the max-min
allocation of the flows still running, and it is recomputed each time flows finish. Flows
whose finish time is within a relative ``tolerance`` of the earliest one are retired
together (each at its own finish time under the current rates), and every event retires at
least a fraction ``retire_fraction`` of the running flows (the soonest-finishing ones, again
each at its own finish time under the current rates). The second rule bounds the work to
about (1 / retire_fraction) passes over the incidence however spread out the finish times
are (random placements); flows retired early free their bandwidth slightly before they
would have, so others finish slightly early. ``retire_fraction = 0`` gives the exact event
sequence (up to ``tolerance``).

Everything runs in numba on CSR (flow -> resources) and CSC (resource -> flows) arrays.
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

@njit(cache=True, nogil=True)
def transpose_csr(indptr, indices, data, n_cols):
    """CSC arrays (col_ptr, rows, values) of a CSR matrix with ``n_cols`` columns."""
    nnz = indices.shape[0]
    col_ptr = np.zeros(n_cols + 1, dtype=np.int64)
    for k in range(nnz):
        col_ptr[indices[k] + 1] += 1
    for c in range(n_cols):
        col_ptr[c + 1] += col_ptr[c]
    fill = col_ptr[:-1].copy()
    rows = np.empty(nnz, dtype=np.int64)
    vals = np.empty(nnz, dtype=np.float64)
    for f in range(indptr.shape[0] - 1):
        for k in range(indptr[f], indptr[f + 1]):
            c = indices[k]
            rows[fill[c]] = f
            vals[fill[c]] = data[k]
            fill[c] += 1
    return col_ptr, rows, vals


@njit(cache=True, nogil=True)
def maxmin_rates(indptr, indices, data, col_ptr, col_rows, col_vals, cap, active, rate, mult):
    """Max-min fair rates (bytes/s) of the ``active`` flows, written into ``rate``.

    Row ``f`` stands for ``mult[f]`` identical flows (same resources and bytes); ``rate[f]``
    is the rate of each of them. Active flows that use no resource get ``inf``. Returns the
    number of saturation steps.

    Progressive filling with a heap: while the unfrozen flows all run at level L, resource r
    carries ``F[r] + W[r] * L`` (F: frozen flows' usage, W: unfrozen weight), so it
    saturates at ``L_r = (cap[r] - F[r]) / W[r]``. The resource with the smallest ``L_r``
    saturates next; its flows freeze at that level and the ``L`` of the resources they
    cross is updated (stale heap entries are skipped by a version number).
    """
    n_flows = indptr.shape[0] - 1
    n_res = cap.shape[0]
    weight = np.zeros(n_res, dtype=np.float64)
    frozen_use = np.zeros(n_res, dtype=np.float64)
    count = np.zeros(n_res, dtype=np.int64)
    version = np.zeros(n_res, dtype=np.int64)
    touched = np.zeros(n_res, dtype=np.bool_)
    touched_list = np.empty(n_res, dtype=np.int64)
    frozen = np.ones(n_flows, dtype=np.bool_)
    n_open = 0
    for f in range(n_flows):
        if not active[f]:
            continue
        if indptr[f] == indptr[f + 1]:
            rate[f] = np.inf
            continue
        frozen[f] = False
        n_open += 1
        for k in range(indptr[f], indptr[f + 1]):
            weight[indices[k]] += data[k] * mult[f]
            count[indices[k]] += 1
    heap = [(0.0, np.int64(0), np.int64(0))]
    heap.pop()
    for r in range(n_res):
        if count[r] > 0:
            heap.append((cap[r] / weight[r], np.int64(r), np.int64(0)))
    heapq.heapify(heap)
    steps = 0
    level = 0.0
    while n_open > 0 and len(heap) > 0:
        key, r, ver = heapq.heappop(heap)
        if ver != version[r] or count[r] == 0:
            continue
        if key > level:
            level = key
        steps += 1
        version[r] += 1
        n_touched = 0
        for k in range(col_ptr[r], col_ptr[r + 1]):
            f = col_rows[k]
            if frozen[f]:
                continue
            frozen[f] = True
            n_open -= 1
            rate[f] = level
            for j in range(indptr[f], indptr[f + 1]):
                q = indices[j]
                w = data[j] * mult[f]
                frozen_use[q] += w * level
                weight[q] -= w
                count[q] -= 1
                if not touched[q]:
                    touched[q] = True
                    touched_list[n_touched] = q
                    n_touched += 1
        for i in range(n_touched):
            q = touched_list[i]
            touched[q] = False
            if q == r or count[q] == 0:
                continue
            version[q] += 1
            w = weight[q]
            sat = (cap[q] - frozen_use[q]) / w if w > 0 else np.inf
            if sat < level:
                sat = level
            heapq.heappush(heap, (sat, np.int64(q), version[q]))
    return steps


@njit(cache=True, nogil=True)
def _compact(indptr, indices, data, keep):
    """CSR of the rows flagged in ``keep`` (in order)."""
    n_keep = 0
    nnz = 0
    for f in range(keep.shape[0]):
        if keep[f]:
            n_keep += 1
            nnz += indptr[f + 1] - indptr[f]
    ptr = np.zeros(n_keep + 1, dtype=np.int64)
    idx = np.empty(nnz, dtype=np.int64)
    val = np.empty(nnz, dtype=np.float64)
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


@njit(cache=True, nogil=True)
def completion_times(indptr, indices, data, cap, nbytes, tolerance, mult, retire_fraction):
    """Finish time (s) of every flow of a phase under max-min sharing with re-sharing.

    Row ``f`` stands for ``mult[f]`` identical flows. Flows of zero bytes finish at 0;
    flows that use no resource (unlimited) finish at 0. Returns (finish, number of
    re-sharing events). The working set is compacted whenever the running flows hold
    less than half of the incidence entries, so late events cost what is left.
    """
    n = nbytes.shape[0]
    finish = np.zeros(n, dtype=np.float64)
    keep = np.zeros(n, dtype=np.bool_)
    for f in range(n):
        keep[f] = nbytes[f] > 0 and indptr[f + 1] > indptr[f]
    ids = np.nonzero(keep)[0]
    ptr, idx, val = _compact(indptr, indices, data, keep)
    col_ptr, col_rows, col_vals = transpose_csr(ptr, idx, val, cap.shape[0])
    remaining = nbytes[ids].copy()
    wmult = mult[ids].copy()
    m = ids.shape[0]
    active = np.ones(m, dtype=np.bool_)
    n_active = m
    active_nnz = idx.shape[0]
    rate = np.zeros(m, dtype=np.float64)
    t = 0.0
    events = 0
    while n_active > 0:
        if 2 * active_nnz < idx.shape[0]:
            ptr, idx, val = _compact(ptr, idx, val, active)
            col_ptr, col_rows, col_vals = transpose_csr(ptr, idx, val, cap.shape[0])
            sel = np.nonzero(active)[0]
            ids = ids[sel]
            remaining = remaining[sel].copy()
            wmult = wmult[sel].copy()
            m = ids.shape[0]
            active = np.ones(m, dtype=np.bool_)
            rate = np.zeros(m, dtype=np.float64)
        events += 1
        maxmin_rates(ptr, idx, val, col_ptr, col_rows, col_vals, cap, active, rate, wmult)
        dt = np.inf
        for f in range(m):
            if active[f]:
                v = remaining[f] / rate[f]
                if v < dt:
                    dt = v
        horizon = (t + dt) * (1.0 + tolerance) - t
        k_min = int(n_active * retire_fraction)
        if k_min > 1:
            vs = np.empty(n_active, dtype=np.float64)
            j = 0
            for f in range(m):
                if active[f]:
                    vs[j] = remaining[f] / rate[f]
                    j += 1
            vs.sort()
            if vs[k_min - 1] > horizon:
                horizon = vs[k_min - 1]
        for f in range(m):
            if not active[f]:
                continue
            v = remaining[f] / rate[f]
            if v <= horizon:
                finish[ids[f]] = t + v
                active[f] = False
                n_active -= 1
                active_nnz -= ptr[f + 1] - ptr[f]
            else:
                remaining[f] -= rate[f] * dt
        t += dt
    return finish, events
