"""Messages inside a node with packages and NUMA domains (:class:`~rankmap.machines.NodeStructure`).

Every NUMA domain of a node is a memory resource of bandwidth ``mem_bw``; every ordered pair
of packages of a node is joined by an inter-socket link of bandwidth ``socket_bw`` (one per
direction). A message between two ranks of one node uses the memory of the sender's domain,
the memory of the receiver's domain when that is another one, and the inter-socket link from
the sender's package to the receiver's when the packages differ. Bandwidth is shared max-min
fairly with re-sharing (:func:`~rankmap.timing.maxmin.completion_times`); when every message
stays inside its domain this is processor sharing per domain, computed in closed form
(:func:`~rankmap.timing.processor_sharing.shared_memory_times`).
"""

from __future__ import annotations

import numpy as np

from .maxmin import completion_times
from .processor_sharing import shared_memory_times

__all__ = ["domain_memory_times"]


def _groups(cols: list[np.ndarray], nbytes: np.ndarray):
    """Identical rows of (cols..., nbytes): representatives, multiplicities, inverse."""
    order = np.lexsort((nbytes, *reversed(cols)))
    start = np.ones(len(order), dtype=bool)
    for c in (*cols, nbytes):
        s = c[order]
        start[1:] |= s[1:] != s[:-1]
    group = np.cumsum(start) - 1
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = group
    first = order[start]
    return first, np.bincount(group).astype(np.float64), inverse


def domain_memory_times(node, src_core, dst_core, nbytes, structure, mem_bw: float | None,
                        socket_bw: float | None, shared: bool = True, tolerance: float = 0.0,
                        retire_fraction: float = 0.0) -> np.ndarray:
    """Finish times (s) of messages between ranks of one node, by domain and package.

    Parameters
    ----------
    node : array of int
        The node of every message.
    src_core, dst_core : array of int
        Core within the node of the sender and of the receiver (numbering of ``structure``).
    nbytes : array of float
        Bytes of every message.
    structure : NodeStructure
        Packages and NUMA domains of the node's cores.
    mem_bw : float or None
        Memory bandwidth of one NUMA domain, bytes/s (None: free).
    socket_bw : float or None
        Bandwidth of the inter-socket link in each direction, bytes/s (None: unlimited).
    shared : bool
        True: messages share the domains' and links' bandwidth; False: each message gets the
        full bandwidth of every resource it uses (``--mem-sharing flow``).
    tolerance, retire_fraction : float
        Re-sharing settings of :func:`~rankmap.timing.maxmin.completion_times`.

    Returns
    -------
    numpy.ndarray
        Finish time of every message, seconds (0 for a message using only free resources).
    """
    node = np.asarray(node, dtype=np.int64)
    nbytes = np.asarray(nbytes, dtype=np.float64)
    if node.size == 0:
        return np.zeros(0)
    pk = np.asarray(structure.package_of_core, dtype=np.int64)
    nu = np.asarray(structure.numa_of_core, dtype=np.int64)
    src_core = np.asarray(src_core, dtype=np.int64)
    dst_core = np.asarray(dst_core, dtype=np.int64)
    sd, dd, sp, dp = nu[src_core], nu[dst_core], pk[src_core], pk[dst_core]
    cross_dom = sd != dd
    cross_pack = sp != dp
    if not shared:
        bw = np.full(node.size, np.inf if mem_bw is None else float(mem_bw))
        if socket_bw is not None:
            bw[cross_pack] = np.minimum(bw[cross_pack], float(socket_bw))
        return np.where(np.isinf(bw), 0.0, nbytes / bw)
    if not (cross_dom | cross_pack).any():
        if mem_bw is None:
            return np.zeros(node.size)
        D = structure.n_domains
        ones = np.ones(node.size)
        return shared_memory_times(node * D + sd, nbytes, ones, float(mem_bw))
    first, mult, inverse = _groups([node, sd, dd, sp, dp], nbytes)
    g_node, g_sd, g_dd, g_sp, g_dp = node[first], sd[first], dd[first], sp[first], dp[first]
    g_bytes = nbytes[first]
    n = len(first)
    D, P = structure.n_domains, structure.n_packages
    cols = []   # per group: up to three resource keys (-1 = not used)
    use_mem = mem_bw is not None
    use_link = socket_bw is not None
    none = np.full(n, -1, dtype=np.int64)
    mem_src = g_node * D + g_sd if use_mem else none
    mem_dst = np.where(g_sd != g_dd, g_node * D + g_dd, -1) if use_mem else none
    link = (np.where(g_sp != g_dp, g_node * P * P + g_sp * P + g_dp, -1) if use_link else none)
    # resources: domain memories first, then links, numbered compactly
    mem_keys = np.unique(np.concatenate([mem_src[mem_src >= 0], mem_dst[mem_dst >= 0]]))
    link_keys = np.unique(link[link >= 0])
    for arr, keys, offset in ((mem_src, mem_keys, 0), (mem_dst, mem_keys, 0),
                              (link, link_keys, len(mem_keys))):
        cols.append(np.where(arr >= 0, np.searchsorted(keys, np.maximum(arr, 0)) + offset, -1))
    mat = np.stack(cols, axis=1)                      # n x 3
    present = mat >= 0
    indptr = np.concatenate([[0], np.cumsum(present.sum(axis=1))]).astype(np.int64)
    indices = mat[present].astype(np.int64)
    data = np.ones(len(indices), dtype=np.float64)
    cap = np.concatenate([np.full(len(mem_keys), float(mem_bw) if use_mem else np.inf),
                          np.full(len(link_keys), float(socket_bw) if use_link else np.inf)])
    finish, _fills = completion_times(indptr, indices, data, cap, g_bytes, float(tolerance),
                                      mult, float(retire_fraction))
    return finish[inverse]
