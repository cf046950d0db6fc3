"""Identical flows routed once: :class:`FlowGroups` and :func:`grouped_loads`.

With several ranks per node, many flows of a phase join the same two nodes with the same size
(fft2d:128x128 on bgp:4096 in rank order: 2,080,768 flows a phase, 520,192 and 131,072
groups). Every router sends such flows the same way once its choices are fixed for the phase
(:meth:`Router.for_phase`), so a phase is routed as its groups, each with its multiplicity,
and the per-flow results (hops) are read back through the groups. The time model takes the
same groups (:func:`rankmap.timing.model.flow_times`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.flows import group_flows
from .base import LinkLoads, Router
from .symmetry import SymmetricPhase, symmetric_loads

__all__ = ["FlowGroups", "flow_groups", "grouped_loads"]


@dataclass(frozen=True)
class FlowGroups:
    """The groups of identical flows of a phase.

    ``src``, ``dst``: nodes of every group; ``nbytes``: the size of each of its flows (bytes);
    ``count``: its number of flows; ``inverse``: the group of every flow. Groups are sorted by
    (source, destination, size).
    """

    src: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray
    count: np.ndarray
    inverse: np.ndarray

    @property
    def n_groups(self) -> int:
        """Number of groups."""
        return len(self.src)


def flow_groups(src_node, dst_node, nbytes) -> FlowGroups:
    """Group the flows of a phase (same source node, destination node and size).

    Parameters
    ----------
    src_node, dst_node : array of int
        Source and destination node of every flow (non-negative).
    nbytes : array of float
        Size of every flow, bytes.

    Returns
    -------
    FlowGroups
        The groups, sorted by (source, destination, size), each with its first flow's values.
    """
    src_node = np.ascontiguousarray(src_node, dtype=np.int64)
    dst_node = np.ascontiguousarray(dst_node, dtype=np.int64)
    nbytes = np.ascontiguousarray(nbytes, dtype=np.float64)
    n_nodes = max(int(src_node.max(initial=-1)), int(dst_node.max(initial=-1))) + 1
    first, count, inverse = group_flows(src_node, dst_node, nbytes, n_nodes)
    return FlowGroups(src_node[first], dst_node[first], nbytes[first], count, inverse)


def grouped_loads(router: Router, src_node, dst_node, nbytes,
                  groups: FlowGroups | None = None,
                  symmetry: SymmetricPhase | bool | None = None
                  ) -> tuple[LinkLoads, FlowGroups]:
    """Link loads of a phase's flows, routed once per group of identical flows.

    Parameters
    ----------
    router : Router
        The router, its choices already fixed for the phase (:meth:`Router.for_phase`).
    src_node, dst_node : array of int
        Source and destination node of every flow.
    nbytes : array of float
        Size of every flow, bytes.
    groups : FlowGroups, optional
        The flows' groups, when already known.
    symmetry : SymmetricPhase, False or None
        The groups' :func:`rankmap.routing.symmetry.phase_symmetry` when already known (False:
        known to have none; None: found here when the routing can use it).

    Returns
    -------
    (LinkLoads, FlowGroups)
        The loads :meth:`Router.loads` gives for the flows (hops per flow) and the groups;
        under minimal adaptive routing a translation-invariant phase is routed as one cell's
        groups (:func:`rankmap.routing.symmetry.symmetric_loads`; equal to a relative 1e-14).
    """
    if groups is None:
        groups = flow_groups(src_node, dst_node, nbytes)
    ld = None if symmetry is False else symmetric_loads(router, groups.src, groups.dst,
                                                        groups.nbytes, groups.count, symmetry)
    if ld is None:
        ld = router.loads(groups.src, groups.dst, groups.nbytes, groups.count)
    cls = None if ld.class_hops is None else ld.class_hops[groups.inverse]
    return LinkLoads(bytes=ld.bytes, streams=ld.streams, flow_hops=ld.flow_hops[groups.inverse],
                     class_hops=cls), groups
