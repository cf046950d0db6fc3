"""Bytes inside nodes, across NUMA domains and across sockets (machines with ``node=``)."""

from __future__ import annotations

import numpy as np

from .routed import PhaseMetric, RoutedPhase

__all__ = ["NodeDomainBytes", "core_in_node_of_ranks", "threads_per_rank", "domain_bytes"]


def threads_per_rank(allocation) -> int:
    """Cores each rank takes (``--threads``; 1 when not set).

    Parameters
    ----------
    allocation : Allocation

    Returns
    -------
    int
    """
    return int(allocation.extra.get("threads", 1))


def core_in_node_of_ranks(mapping, machine, allocation) -> np.ndarray | None:
    """Core within its node of every rank, in the node structure's numbering (a rank of T
    threads: its first core, slot x T); None when the machine has no node structure.

    Parameters
    ----------
    mapping : Placement
    machine : Machine
    allocation : Allocation

    Returns
    -------
    numpy.ndarray or None
        int64 per rank.
    """
    if machine.node_structure is None:
        return None
    return mapping.slots(allocation).astype(np.int64) * threads_per_rank(allocation)


def domain_bytes(structure, src_node, dst_node, src_core, dst_core, nbytes) -> dict:
    """Bytes of the flows inside one node, and of those among them between two NUMA
    domains and between two packages.

    Parameters
    ----------
    structure : NodeStructure
    src_node, dst_node : array of int
        Nodes of every flow.
    src_core, dst_core : array of int
        Cores within the node of every flow's ends.
    nbytes : array of float
        Bytes of every flow.

    Returns
    -------
    dict
        ``intra_node_bytes``, ``inter_domain_bytes``, ``inter_socket_bytes`` (floats).
    """
    nbytes = np.asarray(nbytes, dtype=np.float64)
    inside = np.asarray(src_node) == np.asarray(dst_node)
    pk = np.asarray(structure.package_of_core, dtype=np.int64)
    nu = np.asarray(structure.numa_of_core, dtype=np.int64)
    sc, dc = np.asarray(src_core)[inside], np.asarray(dst_core)[inside]
    b = nbytes[inside]
    return {"intra_node_bytes": float(b.sum()),
            "inter_domain_bytes": float(b[nu[sc] != nu[dc]].sum()),
            "inter_socket_bytes": float(b[pk[sc] != pk[dc]].sum())}


class NodeDomainBytes(PhaseMetric):
    """``intra_node_bytes``, ``inter_domain_bytes`` (between NUMA domains of one node) and
    ``inter_socket_bytes`` (between packages of one node) of a phase.

    Parameters
    ----------
    structure : NodeStructure
        The machine's node structure.
    """

    def __init__(self, structure):
        self.structure = structure

    def __call__(self, routed: RoutedPhase) -> dict:
        """The three byte counts of one routed phase (empty without per-rank cores)."""
        cores = routed.core_in_node
        if cores is None:
            return {}
        ph = routed.phase
        return domain_bytes(self.structure, routed.src_node, routed.dst_node, cores[ph.src],
                            cores[ph.dst], ph.bytes)
