"""Node-sized parts of a communication graph (the first level of the multilevel ``graph`` mapper).

The ranks are cut into ``k = ceil(ranks / cores_per_node)`` parts of at most
``cores_per_node`` ranks each (exactly that many when the ranks fill the nodes), minimising the
bytes between parts, that is the bytes that will cross the network. KaHIP's k-way partitioner
(``kahip.kaffpa``) makes the cut; its near-balanced result is made exact by moving the
vertices that lose least from overfull parts to parts with room (preferring a part they talk
to). The quotient graph of the parts (bytes between every two parts) is what the network
placement then maps onto nodes.

Graphs of more than :data:`TWO_LEVEL_MIN_ENTRIES` adjacency entries are cut in two levels
(:func:`two_level_parts`): first into :data:`TWO_LEVEL_BLOCKS` blocks of whole parts, then
every block into its parts. With thousands of parts KaHIP barely coarsens the graph before
its initial partitioning, and on dense graphs that costs most of the ``graph`` mapper's time:
on fft2d:128x128 (4.2 M entries) with 4,096 parts, ``graph`` took 31.4 s with one cut and
15.0 s with two, for the same cut bytes (benchmarks/RESULTS_two_level.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import RankmapError
from .kahip_cut import kahip_blocks

if TYPE_CHECKING:  # scipy.sparse loads in the functions that build matrices
    import scipy.sparse as sp

__all__ = ["int_weights", "kway_parts", "node_parts", "two_level_parts", "quotient_graph",
           "KAHIP_MODE", "KAHIP_IMBALANCE", "KAHIP_MAX_WEIGHT", "KAHIP_WEIGHT_TOTAL",
           "TWO_LEVEL_MIN_ENTRIES", "TWO_LEVEL_BLOCKS"]

#: KaHIP mode of the k-way cut: FAST (0). ECO (1) cuts a little less, but the placement the
#: ``graph`` mapper makes of the parts is not better for it: over 11 problems
#: (benchmarks/RESULTS_kahip_mode.md) FAST's predicted time was lower in 7 (by up to 30%, on a
#: scattered allocation), the same in 1 and at most 2.7% higher in 3, in 1.1-4.2x less CPU;
#: on dense graphs ECO's time grows far faster than the graph (fft2d:64x64: over 400 s).
#: Among ``auto``'s picks of benchmarks/RESULTS_quality.md (``rcb`` on a gridless graph cuts
#: the same way) two got 14% and 28% faster and two 4% and 8% slower (rgg 16K, 2K FEM mesh)
KAHIP_MODE = 0
#: imbalance handed to KaHIP before the exact fix-up
KAHIP_IMBALANCE = 0.03
#: the largest edge weight handed to KaHIP
KAHIP_MAX_WEIGHT = 1e6
#: the most all edge weights handed to KaHIP may sum to (its sums are 32-bit integers)
KAHIP_WEIGHT_TOTAL = 2 ** 30
#: graphs with more adjacency entries than this (and at least two parts per block) are cut
#: in two levels. Below it the one-level cut is kept: over 14 problems of fewer entries
#: (benchmarks/RESULTS_two_level.md) two levels gave ``graph`` a placement with a lower
#: predicted time in 6, the same in 5 and a higher one in 3 (by up to 7.7%, a 2K FEM mesh),
#: in about the same CPU time; on the 3 dense graphs above it ``graph`` ran 1.8-2.3x as fast
#: and its placements' predicted times were 0.67-0.97x
TWO_LEVEL_MIN_ENTRIES = 2 ** 18
#: blocks of the first level of a two-level cut
TWO_LEVEL_BLOCKS = 16


def int_weights(data: np.ndarray) -> np.ndarray:
    """Edge weights (bytes) scaled to integers for KaHIP, none below 1.

    The largest becomes :data:`KAHIP_MAX_WEIGHT`, or less when needed for all of them to sum
    to at most :data:`KAHIP_WEIGHT_TOTAL`: KaHIP adds edge weights in 32-bit integers (the
    edges of its coarse graphs, cuts, gains), and a sum past 2**31 wraps around silently
    (a 4,096-rank 27-point stencil's bisection cut 2.6x more bytes than it could).

    Parameters
    ----------
    data : numpy.ndarray
        Positive edge weights, bytes.

    Returns
    -------
    numpy.ndarray
        int32 weights in proportion to ``data`` (rounded), summing to at most
        :data:`KAHIP_WEIGHT_TOTAL`.

    Raises
    ------
    RankmapError
        More edges than 32-bit weights can sum (over 2**30 entries).
    """
    if data.size == 0:
        return data.astype(np.int32)
    rel = data / float(data.max())
    # rounding (and the floor of 1) adds less than 1 per weight
    scale = min(KAHIP_MAX_WEIGHT, (KAHIP_WEIGHT_TOTAL - data.size) / float(rel.sum()))
    if scale < 1:
        raise RankmapError(f"communication graph too large for KaHIP: {data.size} edge "
                           f"weights cannot sum below 2**31")
    return np.maximum(1, np.rint(rel * scale)).astype(np.int32)


def kway_parts(graph: sp.csr_matrix, k: int, seed: int, mode: int | None = None) -> np.ndarray:
    """KaHIP's k-way partition of ``graph`` (block of every vertex, 0..k-1, near-balanced).

    Parameters
    ----------
    graph : scipy.sparse.csr_matrix
        Symmetric weighted adjacency (bytes), no diagonal.
    k : int
        Number of blocks.
    seed : int
        KaHIP's random seed.
    mode : int, optional
        KaHIP mode (0 FAST, 1 ECO, 2 STRONG); default :data:`KAHIP_MODE`.

    Returns
    -------
    numpy.ndarray
        int64 block of every vertex.
    """
    n = graph.shape[0]
    if k <= 1 or n == 0:
        return np.zeros(n, dtype=np.int64)
    if graph.nnz == 0:
        return np.arange(n, dtype=np.int64) * k // max(n, 1)
    return kahip_blocks(graph.indptr, graph.indices, int_weights(graph.data), k,
                        KAHIP_IMBALANCE, seed, KAHIP_MODE if mode is None else mode)


def _fix_balance(graph: sp.csr_matrix, part: np.ndarray, k: int, cap) -> np.ndarray:
    """Move vertices out of parts holding more than their capacity until none does.

    ``cap`` is one capacity for every part or an array of ``k``. Every move takes, from an
    overfull part, the vertex whose move loses least (bytes to a part with room minus bytes to
    its own part), to the part with room it talks to most (or, when it talks to none, the part
    with most room). Touches only the excess vertices.
    """
    part = part.copy()
    cap = np.broadcast_to(np.asarray(cap, dtype=np.int64), (k,))
    size = np.bincount(part, minlength=k)
    if (size <= cap).all():
        return part
    indptr, indices, data = graph.indptr, graph.indices, graph.data
    over = np.nonzero(size > cap)[0]
    for p in over:
        members = np.nonzero(part == p)[0]
        # bytes of each member to its own part (moving it loses them)
        own = np.array([data[indptr[v]:indptr[v + 1]][part[indices[indptr[v]:indptr[v + 1]]] == p].sum()
                        for v in members])
        for v in members[np.argsort(own, kind="stable")]:
            if size[p] <= cap[p]:
                break
            nb = indices[indptr[v]:indptr[v + 1]]
            w = data[indptr[v]:indptr[v + 1]]
            room = size[part[nb]] < cap[part[nb]]
            if room.any():
                tgt_w = np.bincount(part[nb][room], weights=w[room], minlength=k)
                q = int(np.argmax(tgt_w))
            else:
                q = int(np.argmax(cap - size))
            part[v] = q
            size[p] -= 1
            size[q] += 1
    return part


def two_level_parts(graph: sp.csr_matrix, k: int, cap: int, seed: int,
                    blocks: int = TWO_LEVEL_BLOCKS) -> np.ndarray:
    """Parts of at most ``cap`` vertices cut in two levels: blocks, then parts of each block.

    KaHIP first cuts the graph into ``blocks`` blocks; block ``b`` is then made to hold at
    most ``parts_b * cap`` vertices, where ``parts_b`` is its share of the ``k`` parts
    (``k // blocks``, one more for the first ``k % blocks`` blocks), and is cut by KaHIP into
    its ``parts_b`` parts. The parts of block ``b`` are numbered after those of the blocks
    before it.

    Parameters
    ----------
    graph : scipy.sparse.csr_matrix
        Symmetric weighted adjacency (bytes), no diagonal.
    k : int
        Number of parts, at least ``blocks``; ``k * cap`` at least the vertices.
    cap : int
        Capacity of a part (vertices).
    seed : int
        KaHIP's seed (every cut).
    blocks : int
        Blocks of the first level.

    Returns
    -------
    numpy.ndarray
        int64 part (0..k-1) of every vertex, at most ``cap`` vertices in each.
    """
    n = graph.shape[0]
    parts_in = np.full(blocks, k // blocks, dtype=np.int64)
    parts_in[:k % blocks] += 1
    block = _fix_balance(graph, kway_parts(graph, blocks, seed), blocks, parts_in * cap)
    order = np.argsort(block, kind="stable")
    bounds = np.searchsorted(block[order], np.arange(blocks + 1))
    part = np.empty(n, dtype=np.int64)
    first = 0
    for b in range(blocks):
        members = order[bounds[b]:bounds[b + 1]]
        if len(members):
            kb = int(min(parts_in[b], len(members)))
            sub = graph[members][:, members].tocsr()
            part[members] = first + _fix_balance(sub, kway_parts(sub, kb, seed), kb, cap)
        first += int(parts_in[b])
    return part


def node_parts(graph: sp.csr_matrix, cores_per_node: int, seed: int) -> np.ndarray:
    """Part (0..k-1, k = ceil(ranks / cores_per_node)) of every rank, at most
    ``cores_per_node`` ranks per part (see module docstring).

    Parameters
    ----------
    graph : scipy.sparse.csr_matrix
        Symmetric communication graph (bytes between ranks).
    cores_per_node : int
        Capacity of a part (ranks).
    seed : int
        KaHIP's seed.

    Returns
    -------
    numpy.ndarray
        int64 part of every rank.
    """
    n = graph.shape[0]
    cap = int(cores_per_node)
    k = -(-n // cap)
    if cap == 1:
        return np.arange(n, dtype=np.int64)
    if graph.nnz > TWO_LEVEL_MIN_ENTRIES and k >= 2 * TWO_LEVEL_BLOCKS:
        return two_level_parts(graph, k, cap, seed, blocks=TWO_LEVEL_BLOCKS)
    part = kway_parts(graph, k, seed)
    return _fix_balance(graph, part, k, cap)


def quotient_graph(graph: sp.csr_matrix, part: np.ndarray, k: int) -> sp.csr_matrix:
    """Bytes between every two parts (symmetric CSR, no diagonal).

    Parameters
    ----------
    graph : scipy.sparse.csr_matrix
        Symmetric communication graph (bytes between ranks).
    part : numpy.ndarray
        Part of every rank.
    k : int
        Number of parts.

    Returns
    -------
    scipy.sparse.csr_matrix
        k x k matrix of bytes between parts.
    """
    import scipy.sparse as sp
    n = graph.shape[0]
    a = sp.csr_matrix((np.ones(n), (np.arange(n), part)), shape=(n, k))
    q = (a.T @ graph @ a).tocsr()
    q.setdiag(0)
    q.eliminate_zeros()
    q.sort_indices()
    return q
