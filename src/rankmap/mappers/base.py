"""Placements: which allocation core each rank runs on.

A :class:`Mapping` is an integer array ``core_of_rank`` into the allocation's cores (core ``c``
is core ``c % cores_per_node`` of node ``allocation.nodes[c // cores_per_node]``). It is always
validated: every rank placed, no core used twice, no core outside the allocation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..allocation import Allocation
from ..errors import RankmapError


@dataclass
class Mapping:
    """A validated placement: ``core_of_rank[r]`` is rank r's allocation core index."""

    name: str
    core_of_rank: np.ndarray

    def nodes(self, allocation: Allocation) -> np.ndarray:
        """Machine node id of every rank."""
        return allocation.node_of_core(self.core_of_rank)

    def slots(self, allocation: Allocation) -> np.ndarray:
        """Core within its node of every rank."""
        return allocation.slot_of_core(self.core_of_rank)


def check_fits(n_ranks: int, allocation: Allocation) -> None:
    """Raise when the allocation has fewer cores than the pattern has ranks."""
    if n_ranks > allocation.n_cores:
        raise RankmapError(f"{n_ranks} ranks do not fit on {allocation.n_nodes} nodes x "
                           f"{allocation.cores_per_node} cores = {allocation.n_cores} cores")


def validate_mapping(name: str, core_of_rank, n_ranks: int, allocation: Allocation) -> Mapping:
    """Check ``core_of_rank`` is a placement of ``n_ranks`` ranks and wrap it in a Mapping."""
    check_fits(n_ranks, allocation)
    cores = np.asarray(core_of_rank)
    if cores.ndim != 1 or len(cores) != n_ranks:
        raise RankmapError(f"mapping {name!r} places {cores.size} ranks, the pattern has {n_ranks}")
    if not np.issubdtype(cores.dtype, np.integer):
        raise RankmapError(f"mapping {name!r} is not made of core numbers")
    cores = cores.astype(np.int64)
    if n_ranks and (cores.min() < 0 or cores.max() >= allocation.n_cores):
        bad = int(cores[(cores < 0) | (cores >= allocation.n_cores)][0])
        raise RankmapError(f"mapping {name!r} uses core {bad}, outside the allocation's "
                           f"{allocation.n_cores} cores")
    counts = np.bincount(cores, minlength=allocation.n_cores)
    if (counts > 1).any():
        core = int(np.nonzero(counts > 1)[0][0])
        ranks = np.nonzero(cores == core)[0][:2]
        raise RankmapError(f"mapping {name!r} puts ranks {int(ranks[0])} and {int(ranks[1])} on "
                           f"the same core (node {int(allocation.node_of_core(core))}, core "
                           f"{core % allocation.cores_per_node})")
    return Mapping(name, cores)
