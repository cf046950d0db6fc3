"""The in-node placement step: which cores of its node each rank gets, keeping heavy pairs in
one NUMA domain (machines whose nodes have a structure, ``node=``).

A mapper decides the node of every rank; on a node with packages and NUMA domains the
core inside the node decides which messages cross the inter-socket link and which share a
domain's memory. This step keeps every rank on its node and re-deals the node's ranks over
its *cells* (the distinct (package, NUMA domain) pairs of its slots, each holding as many
ranks as it has slots): first over packages, minimising the bytes between packages, then,
inside each package, over its cells, minimising the bytes between domains. Each split is
exact for small nodes (every subset of the right size is tried when there are at most
:data:`EXACT_LIMIT` of them) and made by KaHIP's k-way partitioner otherwise
(:func:`~rankmap.mappers.node_partition.node_parts`). Inside a cell ranks keep their order.
Whether a node's new deal is kept is decided node by node. By default (the byte rule) it is
kept only when it lowers the inter-socket or the inter-domain bytes and raises neither (else
the mapper's own order stays), so the step never increases either. A caller with a time
model passes ``accept`` instead: a callable given every node's two orders at once, which keeps
a node's new one only where the node's own finish times are predicted no later
(:func:`rankmap.selection.in_node.time_accept`; fewer bytes between sockets can cost more
time when they load one domain's memory). Nodes whose ranks exchange identical local graphs
reuse one solution, which makes the step cheap on structured patterns; it is deterministic
for a seed.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from itertools import combinations
from math import comb
from typing import Callable, Iterator

import numpy as np

from .node_partition import node_parts

__all__ = ["place_in_domains", "in_node_step", "EXACT_LIMIT", "Accept", "in_node_rule",
           "current_rule"]

#: largest number of subsets tried by the exact two-way split
EXACT_LIMIT = 20000

#: ``accept(before, after, nodes, fewer_bytes) -> bool array``: which of ``nodes``
#: (allocation positions, ascending) keep their new deal; ``before`` and ``after`` are the
#: allocation cores of every rank without and with every one of those nodes re-dealt (other
#: nodes alike in both); ``fewer_bytes`` is the byte rule's verdict on each node
Accept = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]

#: the rule of the placement being built (:func:`in_node_rule`), for the start a mapper
#: places itself (``refine:rcb``'s ``rcb``)
_RULE: ContextVar[Accept | None] = ContextVar("in_node_rule", default=None)


@contextmanager
def in_node_rule(accept: Accept | None) -> Iterator[None]:
    """Within the block, mappers that place a start themselves (``refine:``, ``swap:``, with
    :meth:`~rankmap.mappers.base.MapperInfo.place`) run its in-node step with ``accept``, the
    rule the finished placement is judged by (so ``compare``'s ``refine:rcb`` starts where
    ``auto``'s does).

    Parameters
    ----------
    accept : callable or None
        The rule (:data:`Accept`); None: the byte rule.

    Yields
    ------
    None
    """
    token = _RULE.set(accept)
    try:
        yield
    finally:
        _RULE.reset(token)


def current_rule() -> Accept | None:
    """The rule set by the innermost :func:`in_node_rule` block (None: the byte rule).

    Returns
    -------
    callable or None
    """
    return _RULE.get()


def _pair_bytes(pattern, pos_of_rank: np.ndarray):
    """Bytes between every two ranks of one node, summed over phases and directions:
    (i, j, w) with i < j, and the node position of each pair."""
    import scipy.sparse as sp
    src, dst, w = [], [], []
    for ph in pattern.phases:
        s, d = np.asarray(ph.src, dtype=np.int64), np.asarray(ph.dst, dtype=np.int64)
        same = (pos_of_rank[s] == pos_of_rank[d]) & (s != d)
        src.append(np.minimum(s[same], d[same]))
        dst.append(np.maximum(s[same], d[same]))
        w.append(np.asarray(ph.bytes, dtype=np.float64)[same])
    if not src:
        return (np.zeros(0, np.int64),) * 2 + (np.zeros(0),)
    i, j, w = np.concatenate(src), np.concatenate(dst), np.concatenate(w)
    n = len(pos_of_rank)
    m = sp.coo_matrix((w, (i, j)), shape=(n, n)).tocsr()
    m.sum_duplicates()
    m.eliminate_zeros()
    coo = m.tocoo()
    return coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data


@lru_cache(maxsize=64)
def _subsets(n: int, s: int) -> np.ndarray:
    """Every subset of size s of range(n) as rows of a bool matrix (lexicographic order)."""
    masks = np.zeros((comb(n, s), n), dtype=bool)
    for r, c in enumerate(combinations(range(n), s)):
        masks[r, list(c)] = True
    masks.setflags(write=False)
    return masks


def _two_way_exact(n: int, li, lj, w, cap0: int, cap1: int) -> np.ndarray | None:
    """Best split of n vertices into sides of at most cap0 and cap1 (fewest cut bytes), by
    trying every subset; None when there are more than EXACT_LIMIT subsets."""
    sizes = [s for s in range(max(0, n - cap1), min(n, cap0) + 1)]
    if not sizes or sum(comb(n, s) for s in sizes) > EXACT_LIMIT:
        return None
    best_cut, best = None, None
    for s in sizes:
        masks = _subsets(n, s)
        cut = (masks[:, li] != masks[:, lj]).astype(np.float64) @ w
        k = int(np.argmin(cut))
        if best_cut is None or cut[k] < best_cut:
            best_cut, best = cut[k], masks[k]
    return np.where(best, 0, 1).astype(np.int64)


def _split(n: int, li, lj, w, caps: list[int], seed: int) -> np.ndarray:
    """Part (index into ``caps``) of each of n vertices, at most caps[p] in part p, few bytes
    between parts."""
    import scipy.sparse as sp
    k = len(caps)
    if k == 1 or n == 0:
        return np.zeros(n, dtype=np.int64)
    if k == 2:
        exact = _two_way_exact(n, li, lj, w, caps[0], caps[1])
        if exact is not None:
            return exact
    if len(set(caps)) == 1 and len(w):
        g = sp.coo_matrix((np.concatenate([w, w]), (np.concatenate([li, lj]),
                                                     np.concatenate([lj, li]))),
                          shape=(n, n)).tocsr()
        g.sum_duplicates()
        g.sort_indices()
        return node_parts(g, caps[0], seed)
    # unequal cells (an irregular hwloc node): fill them in order, each with the vertex that
    # talks most to it (ties: lowest index)
    adj = np.zeros((n, n))
    np.add.at(adj, (li, lj), w)
    np.add.at(adj, (lj, li), w)
    part = np.full(n, -1, dtype=np.int64)
    for p, cap in enumerate(caps):
        for _ in range(min(cap, int((part < 0).sum()))):
            free = np.nonzero(part < 0)[0]
            pull = adj[np.ix_(free, np.nonzero(part == p)[0])].sum(axis=1)
            part[free[int(np.argmax(pull))]] = p
    return part


def _deal(n: int, li, lj, w, cell_pkg: np.ndarray, cell_cap: np.ndarray,
          seed: int) -> np.ndarray:
    """Cell of each of n local ranks: packages first, then the cells of each package."""
    pkgs = np.unique(cell_pkg)
    pkg_caps = [int(cell_cap[cell_pkg == p].sum()) for p in pkgs]
    top = _split(n, li, lj, w, pkg_caps, seed)
    cell = np.full(n, -1, dtype=np.int64)
    for t, p in enumerate(pkgs):
        members = np.nonzero(top == t)[0]
        cells = np.nonzero(cell_pkg == p)[0]
        local = np.full(n, -1, dtype=np.int64)
        local[members] = np.arange(len(members))
        keep = (local[li] >= 0) & (local[lj] >= 0)
        sub = _split(len(members), local[li[keep]], local[lj[keep]], w[keep],
                     [int(c) for c in cell_cap[cells]], seed)
        cell[members] = cells[sub]
    return cell


def _cost(li, lj, w, pkg: np.ndarray, dom: np.ndarray) -> tuple[float, float]:
    """(inter-socket, inter-domain) bytes of local pairs given each local rank's package and
    NUMA domain."""
    return (float(w[pkg[li] != pkg[lj]].sum()), float(w[dom[li] != dom[lj]].sum()))


def place_in_domains(core_of_rank, pattern, allocation, structure, seed: int = 0,
                     accept: Accept | None = None) -> np.ndarray:
    """Re-deal every node's ranks over its cores so heavy pairs share a NUMA domain.

    Parameters
    ----------
    core_of_rank : array of int
        A placement (allocation core of every rank).
    pattern : Pattern
        The communication pattern (all phases count, bytes summed).
    allocation : Allocation
        The allocation (``extra["threads"]``: cores per rank).
    structure : NodeStructure
        The nodes' packages and NUMA domains.
    seed : int
        KaHIP's seed for nodes too large for the exact split.
    accept : callable, optional
        Decides which nodes keep their new deal (:data:`Accept`; called once, with every
        node whose deal changed); default: the byte rule (fewer inter-socket or inter-domain
        bytes, neither more).

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank; every rank stays on its node.
    """
    cores = np.asarray(core_of_rank, dtype=np.int64).copy()
    cpn = allocation.cores_per_node
    threads = int(allocation.extra.get("threads", 1))
    slot_pkg = structure.slot_package(threads)
    slot_dom = structure.slot_domain(threads)
    slot_cell = structure.slot_cell(threads)
    n_cells = int(slot_cell.max()) + 1
    cell_pkg = np.array([slot_pkg[slot_cell == c][0] for c in range(n_cells)])
    cell_slots = [np.nonzero(slot_cell == c)[0] for c in range(n_cells)]
    cell_cap = np.array([len(s) for s in cell_slots])
    if n_cells == 1 or len(cores) == 0:
        return cores
    pos = cores // cpn
    i, j, w = _pair_bytes(pattern, pos)
    if len(w) == 0:
        return cores
    # ranks grouped by node, in slot order; pairs grouped by node
    order = np.lexsort((cores, pos))
    starts = np.searchsorted(pos[order], np.arange(allocation.n_nodes + 1))
    local_index = np.empty(len(cores), dtype=np.int64)
    local_index[order] = np.arange(len(cores)) - starts[pos[order]]
    pair_pos = pos[i]
    porder = np.argsort(pair_pos, kind="stable")
    pstarts = np.searchsorted(pair_pos[porder], np.arange(allocation.n_nodes + 1))
    cache: dict = {}
    proposed = cores.copy()
    changed: list[int] = []
    fewer: list[bool] = []
    for node in np.unique(pair_pos):
        ranks = order[starts[node]:starts[node + 1]]
        sel = porder[pstarts[node]:pstarts[node + 1]]
        li, lj, lw = local_index[i[sel]], local_index[j[sel]], w[sel]
        n = len(ranks)
        key = (n, li.tobytes(), lj.tobytes(), lw.tobytes())
        cell = cache.get(key)
        if cell is None:
            cell = _deal(n, li, lj, lw, cell_pkg, cell_cap, seed)
            cache[key] = cell
        slots_now = cores[ranks] % cpn
        new_slots = np.empty(n, dtype=np.int64)
        for c in range(n_cells):
            members = np.nonzero(cell == c)[0]     # local ranks, in slot order
            new_slots[members] = cell_slots[c][:len(members)]
        if np.array_equal(new_slots, slots_now):
            continue
        before = _cost(li, lj, lw, slot_pkg[slots_now], slot_dom[slots_now])
        after = _cost(li, lj, lw, slot_pkg[new_slots], slot_dom[new_slots])
        proposed[ranks] = node * cpn + new_slots
        changed.append(int(node))
        fewer.append(after[0] <= before[0] and after[1] <= before[1] and after != before)
    if not changed:
        return cores
    nodes = np.asarray(changed, dtype=np.int64)
    keep = np.asarray(fewer, dtype=bool)
    if accept is not None:
        keep = np.asarray(accept(cores, proposed, nodes, keep), dtype=bool).reshape(len(nodes))
    kept = np.zeros(allocation.n_nodes, dtype=bool)
    kept[nodes[keep]] = True
    return np.where(kept[pos], proposed, cores)


def in_node_step(core_of_rank, pattern, machine, allocation, seed: int = 0,
                 accept: Accept | None = None) -> np.ndarray:
    """:func:`place_in_domains` on a machine with a node structure; the placement unchanged
    otherwise.

    Parameters
    ----------
    core_of_rank : array of int
        A placement.
    pattern, machine, allocation
        The inputs.
    seed : int
        KaHIP's seed.
    accept : callable, optional
        Which nodes keep their new deal (:func:`place_in_domains`; default: the byte rule).

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    if machine.node_structure is None:
        return np.asarray(core_of_rank, dtype=np.int64)
    return place_in_domains(core_of_rank, pattern, allocation, machine.node_structure, seed,
                            accept)
