"""Compiled grouping of a phase's flows into groups of identical flows, and the flows at each
end (:func:`end_flow_csr`).

Flows with the same source node, destination node and size are routed the same way, get the
same share of every link under max-min sharing and arrive at the same time, so routing and the
time model can work on one representative per group with its multiplicity. The grouping is
linear in the flows: a counting sort by source node (stable, so flows keep their order inside
a source; none when they come sorted by source, as rank orders give them), then, per source, a
marker array over destination nodes (one entry per node, reset by the source's id) lists the
source's destinations, which are put in order (by insertion when they are few, as a
stencil's are: no allocation per source); when every pair has one size, as in a stencil, each
destination is one group and a second pass gives every flow its group. A pair with several
sizes sends the source to the general grouping: its flows' groups are chained by size, then
ordered by (destination, size). Either way the groups come out in the order of the sorted
keys ``(source * n_nodes + destination, size)`` -- the order ``numpy.unique`` and
``numpy.lexsort`` give -- each represented by its first flow.
"""

from __future__ import annotations

import numpy as np

from .jit import kernel

__all__ = ["group_flows", "group_max", "end_flow_csr", "INSERTION_MAX"]


#: a source's groups are put in order by insertion (no allocation) up to this many, by two
#: stable merge sorts above
INSERTION_MAX = 32


@kernel(nogil=True)
def _sort_source_groups(lo, hi, dst, nbytes, first, count, remap, idx):
    """Order the groups lo..hi-1 (one source's) by (destination, size) in place, stably;
    remap[g - lo] gets each old group's new index (``idx`` is scratch of at least hi - lo).
    The groups usually come sorted: then nothing moves and False is returned (remap unset);
    True when they were reordered."""
    sorted_ = True
    for g in range(lo + 1, hi):
        a, b = first[g - 1], first[g]
        if dst[a] > dst[b] or (dst[a] == dst[b] and nbytes[a] > nbytes[b]):
            sorted_ = False
            break
    if sorted_:
        return False
    m = hi - lo
    if m <= INSERTION_MAX:
        # a stencil's few groups per source: stable insertion, nothing allocated
        for i in range(m):
            idx[i] = i
        for i in range(lo + 1, hi):
            f, c, k = first[i], count[i], idx[i - lo]
            j = i - 1
            while j >= lo and (dst[first[j]] > dst[f]
                               or (dst[first[j]] == dst[f] and nbytes[first[j]] > nbytes[f])):
                first[j + 1] = first[j]
                count[j + 1] = count[j]
                idx[j + 1 - lo] = idx[j - lo]
                j -= 1
            first[j + 1] = f
            count[j + 1] = c
            idx[j + 1 - lo] = k
        for i in range(m):
            remap[idx[i]] = lo + i
        return True
    size_key = np.empty(m, dtype=np.float64)
    dst_key = np.empty(m, dtype=np.int64)
    for i in range(m):
        size_key[i] = nbytes[first[lo + i]]
        dst_key[i] = dst[first[lo + i]]
    by_size = np.argsort(size_key, kind="mergesort")
    perm = by_size[np.argsort(dst_key[by_size], kind="mergesort")]
    new_first = first[lo:hi][perm]
    new_count = count[lo:hi][perm]
    for i in range(m):
        first[lo + i] = new_first[i]
        count[lo + i] = new_count[i]
        remap[perm[i]] = lo + i
    return True


@kernel(nogil=True)
def _open_group(g, f, first, count, chain, inverse):
    """Start group g with flow f (no other size of its pair yet); return the next group id."""
    first[g] = f
    count[g] = 1
    chain[g] = -1
    inverse[f] = g
    return g + 1


@kernel(nogil=True)
def group_flows(src, dst, nbytes, n_nodes):
    """Groups of identical flows (same source node, destination node and size).

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination node of every flow, in 0 .. n_nodes-1.
    nbytes : ndarray of float64, shape (n_flows,)
        Size of every flow, bytes.
    n_nodes : int
        Number of nodes (a bound on the node ids).

    Returns
    -------
    first : ndarray of int64, shape (n_groups,)
        The first flow (lowest index) of every group; groups are sorted by
        ``(src * n_nodes + dst, size)``.
    count : ndarray of int64, shape (n_groups,)
        Number of flows in every group.
    inverse : ndarray of int64, shape (n_flows,)
        Group of every flow.
    """
    n = src.shape[0]
    start = np.zeros(n_nodes + 1, dtype=np.int64)
    in_order = True                      # sources already sorted (rank orders): no sort
    for f in range(n):
        start[src[f] + 1] += 1
        if f > 0 and src[f] < src[f - 1]:
            in_order = False
    widest = 0
    for s in range(n_nodes):
        widest = max(widest, start[s + 1])
        start[s + 1] += start[s]
    if in_order:
        order = np.empty(0, dtype=np.int64)
    else:
        order = np.empty(n, dtype=np.int64)
        fill = start[:-1].copy()
        for f in range(n):
            s = src[f]
            order[fill[s]] = f
            fill[s] += 1
    mark = np.full(n_nodes, -1, dtype=np.int64)
    head = np.empty(n_nodes, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    count = np.empty(n, dtype=np.int64)  # set when a group opens: only g entries touched
    chain = np.empty(n, dtype=np.int64)
    inverse = np.empty(n, dtype=np.int64)
    remap = np.empty(n, dtype=np.int64)
    idx = np.empty(INSERTION_MAX, dtype=np.int64)
    ends = np.empty(widest, dtype=np.int64)  # one source's destinations
    g = 0
    for s in range(n_nodes):
        a, b = start[s], start[s + 1]
        if a == b:
            continue
        lo = g
        # the source's destinations, in order: one group each when every pair has one size
        m = 0
        for i in range(a, b):
            d = dst[i if in_order else order[i]]
            if mark[d] != 2 * s:
                mark[d] = 2 * s
                ends[m] = d
                m += 1
        if m <= INSERTION_MAX:
            for i in range(1, m):
                d = ends[i]
                j = i - 1
                while j >= 0 and ends[j] > d:
                    ends[j + 1] = ends[j]
                    j -= 1
                ends[j + 1] = d
        else:
            ends[:m] = np.sort(ends[:m])
        for k in range(m):
            head[ends[k]] = lo + k
            first[lo + k] = -1
        one_size = True
        for i in range(a, b):
            f = i if in_order else order[i]
            t = head[dst[f]]
            ft = first[t]
            if ft < 0:
                first[t] = f
                count[t] = 1
            elif nbytes[ft] == nbytes[f]:
                count[t] += 1
            else:
                one_size = False
                break
            inverse[f] = t
        if one_size:
            g = lo + m
        else:  # a pair with several sizes: chained groups, ordered by (destination, size)
            g = _chained_source(a, b, lo, 2 * s + 1, in_order, order, dst, nbytes, mark, head,
                                first, count, chain, inverse, remap, idx)
    # views: the arrays' untouched tails take no memory (a copy would write 2 x 8 x g bytes)
    return first[:g], count[:g], inverse


@kernel(nogil=True)
def _chained_source(a, b, lo, tag, in_order, order, dst, nbytes, mark, head, first, count,
                    chain, inverse, remap, idx):
    """Group one source's flows ``a..b-1`` (in ``order`` unless ``in_order``) from group
    ``lo`` on, when a destination takes several sizes: a marker (``tag``) per destination
    finds its groups, chained by size, which are then ordered by (destination, size).
    Returns the next group id."""
    g = lo
    for i in range(a, b):
        f = i if in_order else order[i]
        d = dst[f]
        if mark[d] != tag:
            mark[d] = tag
            head[d] = g
            g = _open_group(g, f, first, count, chain, inverse)
            continue
        t = head[d]
        while True:
            if nbytes[first[t]] == nbytes[f]:
                count[t] += 1
                inverse[f] = t
                break
            if chain[t] < 0:
                chain[t] = g
                g = _open_group(g, f, first, count, chain, inverse)
                break
            t = chain[t]
    if g - lo > 1 and _sort_source_groups(lo, g, dst, nbytes, first, count, remap, idx):
        for i in range(a, b):
            f = i if in_order else order[i]
            inverse[f] = remap[inverse[f] - lo]
    return g


@kernel(nogil=True)
def end_flow_csr(src, dst, n_ends):
    """The flows touching each end (rank or unit), as a CSR: a counting sort of the ends.

    Row ``x`` lists the flows whose source is ``x`` in increasing order, then those whose
    destination is ``x`` in increasing order (a flow from ``x`` to itself twice): the order
    of a stable sort of ``concatenate([src, dst])``, in linear time.

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination end of every flow, in 0 .. n_ends-1.
    n_ends : int
        Number of ends.

    Returns
    -------
    indptr : ndarray of int64, shape (n_ends + 1,)
        Row ``x`` is ``flows[indptr[x]:indptr[x + 1]]``.
    flows : ndarray of int64, shape (2 * n_flows,)
        Flow ids.
    """
    n = src.shape[0]
    indptr = np.zeros(n_ends + 1, dtype=np.int64)
    for f in range(n):
        indptr[src[f] + 1] += 1
        indptr[dst[f] + 1] += 1
    for x in range(n_ends):
        indptr[x + 1] += indptr[x]
    fill = indptr[:-1].copy()
    flows = np.empty(2 * n, dtype=np.int64)
    for f in range(n):
        x = src[f]
        flows[fill[x]] = f
        fill[x] += 1
    for f in range(n):
        x = dst[f]
        flows[fill[x]] = f
        fill[x] += 1
    return indptr, flows


@kernel(nogil=True)
def group_max(inverse, values, n_groups):
    """The largest of ``values`` over the flows of every group.

    Parameters
    ----------
    inverse : ndarray of int64, shape (n_flows,)
        Group of every flow (every group has at least one flow).
    values : ndarray of float64, shape (n_flows,)
        A value per flow (e.g. hops).
    n_groups : int
        Number of groups.

    Returns
    -------
    ndarray of float64, shape (n_groups,)
        The largest value of every group's flows (``-inf`` for a group without flows).
    """
    out = np.full(n_groups, -np.inf)
    for f in range(inverse.shape[0]):
        g = inverse[f]
        if values[f] > out[g]:
            out[g] = values[f]
    return out
