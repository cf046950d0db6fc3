"""``graph-bisect``: dual recursive bipartitioning of the communication graph with KaHIP.

(The earlier ``graph`` mapper; ``graph`` is now the multilevel mapper of
:mod:`rankmap.mappers.graph_multilevel`, which uses :func:`communication_graph` from here.)

The pattern's flows (all phases) make an undirected weighted graph: the weight of edge {a, b}
is the bytes a and b exchange in both directions. The allocated nodes are split recursively
in two along their longest coordinate (``machine.geometry``) down to single nodes; at every
split the ranks of that part of the machine are bipartitioned by KaHIP (``kahip.kaffpa``)
with the two sides sized to the cores of the two machine halves (KaHIP's near-balanced cut is
then made exact by moving the vertices that gain most from switching sides). The ranks that
reach a single node take its cores in order. This works for any pattern, ``graph:FILE``
included, and any machine that provides coordinates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import RankmapError
from .geometry import bisect_order, flows_all_phases
from .kahip_cut import kahip_blocks
from .node_partition import KAHIP_IMBALANCE, KAHIP_MODE, int_weights

if TYPE_CHECKING:  # scipy.sparse loads in the functions that build matrices
    import scipy.sparse as sp

__all__ = ["SMALL_PART", "communication_graph", "drb_cores", "graph_mapping", "graph_bisect"]

#: parts with at most this many ranks are not cut by KaHIP: their ranks, in reverse
#: Cuthill-McKee order of their subgraph, take the part's nodes in bisection order
SMALL_PART = 8


def communication_graph(pattern) -> sp.csr_matrix:
    """The communication graph of a pattern, over all its phases.

    Parameters
    ----------
    pattern : Pattern
        The pattern.

    Returns
    -------
    scipy.sparse.csr_matrix
        Symmetric ranks x ranks matrix: entry (a, b) is the bytes a and b exchange in both
        directions; no diagonal.
    """
    import scipy.sparse as sp
    src, dst, nbytes = flows_all_phases(pattern)
    n = pattern.n_ranks
    keep = src != dst
    w = sp.coo_matrix((nbytes[keep], (src[keep], dst[keep])), shape=(n, n)).tocsr()
    w = (w + w.T).tocsr()
    w.sum_duplicates()
    return w


def _bipartition(sub: sp.csr_matrix, n1: int, seed: int) -> np.ndarray:
    """Boolean mask of the ``n1`` vertices put on side 0 (KaHIP cut, exact sizes)."""
    n = sub.shape[0]
    if n1 <= 0:
        return np.zeros(n, dtype=bool)
    if n1 >= n:
        return np.ones(n, dtype=bool)
    if sub.nnz == 0:
        side0 = np.zeros(n, dtype=bool)
        side0[:n1] = True
        return side0
    side0 = kahip_blocks(sub.indptr, sub.indices, int_weights(sub.data), 2, KAHIP_IMBALANCE,
                         seed, KAHIP_MODE) == 0
    # the larger KaHIP block goes where more cores are
    if (side0.sum() - n1) * 1.0 * (n - n1 - n1) < 0 and abs(side0.sum() - n1) > abs((~side0).sum() - n1):
        side0 = ~side0
    excess = int(side0.sum()) - n1
    if excess:
        move_from = side0 if excess > 0 else ~side0
        x = np.where(side0, 1.0, -1.0)
        conn = sub @ x                         # weight to side 0 minus weight to side 1
        gain = np.where(side0, -conn, conn)    # how much switching side reduces the cut
        cand = np.nonzero(move_from)[0]
        pick = cand[np.argsort(-gain[cand], kind="stable")[:abs(excess)]]
        side0[pick] = ~side0[pick]
    return side0


def drb_cores(graph: sp.csr_matrix, machine, allocation, seed: int) -> np.ndarray:
    """Core of every rank by dual recursive bipartitioning (see the module docstring).

    Parameters
    ----------
    graph : scipy.sparse.csr_matrix
        The symmetric communication graph (bytes).
    machine : Machine
        The machine (its geometry guides the node bisection).
    allocation : Allocation
        The allocation.
    seed : int
        Seeds KaHIP.

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """

    n = graph.shape[0]
    cpn = allocation.cores_per_node
    geo = machine.geometry(allocation.nodes).astype(np.float64)
    need = -(-n // cpn)
    nodes = np.sort(bisect_order(geo)[:need]) if need < allocation.n_nodes \
        else np.arange(allocation.n_nodes, dtype=np.int64)
    core_of_rank = np.full(n, -1, dtype=np.int64)
    stack = [(np.arange(n, dtype=np.int64), nodes)]
    while stack:
        ranks, part = stack.pop()
        if len(ranks) == 0:
            continue
        if len(part) == 1:
            core_of_rank[ranks] = part[0] * cpn + np.arange(len(ranks))
            continue
        if len(ranks) <= SMALL_PART:
            # imported here: scipy.sparse.csgraph adds 65 ms to every start-up
            from scipy.sparse.csgraph import reverse_cuthill_mckee
            sub = graph[ranks][:, ranks].tocsr()
            rorder = ranks[reverse_cuthill_mckee(sub, symmetric_mode=True)]
            porder = part[bisect_order(geo[part])]
            cores = (porder[:, None] * cpn + np.arange(cpn)).reshape(-1)[:len(ranks)]
            core_of_rank[rorder] = cores
            continue
        g = geo[part]
        axis = int(np.argmax(g.max(axis=0) - g.min(axis=0)))
        keys = [g[:, a] for a in range(g.shape[1])][::-1] + [g[:, axis]]
        part = part[np.lexsort(keys)]
        half = len(part) // 2
        p1, p2 = part[:half], part[half:]
        c1, c2 = len(p1) * cpn, len(p2) * cpn
        r = len(ranks)
        r1 = int(np.clip(round(r * c1 / (c1 + c2)), max(r - c2, 0), min(c1, r)))
        side0 = _bipartition(graph[ranks][:, ranks].tocsr(), r1, seed)
        stack.append((ranks[side0], p1))
        stack.append((ranks[~side0], p2))
    if (core_of_rank < 0).any():
        raise RankmapError("graph mapper left ranks unplaced (internal error)")
    return core_of_rank


def graph_mapping(pattern, machine, allocation, seed):
    """The ``graph`` placement of ``pattern`` (dual recursive bipartitioning with KaHIP).

    Parameters
    ----------
    pattern : Pattern
        The pattern whose ranks are placed.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocated nodes; ranks go on their cores only.
    seed : int
        Seeds KaHIP.

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    return drb_cores(communication_graph(pattern), machine, allocation, seed)


def graph_bisect(pattern, machine, allocation, seed):
    """Dual recursive bipartitioning with KaHIP (see module docstring); ``seed`` seeds KaHIP.

    Parameters
    ----------
    pattern : Pattern
        The pattern whose ranks are placed.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocated nodes; ranks go on their cores only.
    seed : int
        Seeds KaHIP.

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    return graph_mapping(pattern, machine, allocation, seed)
