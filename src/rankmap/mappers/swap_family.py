"""``swap:<mapping>``: another mapper's placement polished on the real objective, bounded by work.

The placement of ``<mapping>`` is improved rank by rank (:mod:`rankmap.mappers.swap_refine`):
vectorised hop-bytes swap passes, then swaps aimed at the busiest link, evaluated exactly on
the link loads under the machine's routing. Of the start and the polished placements the one
with the lowest (busiest link bytes, hop-bytes) is returned, so the result is never worse than
the start on that key. Deterministic for a seed; work bounded by :data:`PASSES` and
:data:`PROPOSALS`, never by seconds.

``--mappings all`` (and so ``auto``) tries ``swap:fold`` (or ``swap:greedy`` where no fold
applies) on 2-D grids on a 3-D machine, up to :data:`ALL_RANK_LIMIT` ranks: there the fold
and greedy's walk have few hop-bytes but some hot links, which the polish removes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..machines import GridMachine
from .base import MapperInfo
from .folding import fold_applies
from .geometry import check_seed, neighbour_csr
from .graph_partition import communication_graph
from .swap_refine import UnitPlacement, hop_swap_passes, link_swaps, placement_key, unit_phases

__all__ = ["Swap", "polish_cores", "swap_candidates", "PASSES", "PROPOSALS", "ALL_RANK_LIMIT"]

#: hop-bytes swap passes
PASSES = 4
#: busiest-link swap proposals
PROPOSALS = 1000
#: ``--mappings all`` offers ``swap:`` candidates up to this many ranks
ALL_RANK_LIMIT = 8192


def polish_cores(start: np.ndarray, pattern, machine, allocation, seed: int = 0,
                 passes: int = PASSES, proposals: int = PROPOSALS) -> np.ndarray:
    """Polished copy of placement ``start`` (module docstring); never worse on
    (busiest link bytes, hop-bytes).

    Parameters
    ----------
    start : numpy.ndarray
        Allocation core of every rank.
    pattern, machine, allocation
        The problem.
    seed : int
        Seed of the proposal choices.
    passes, proposals : int
        Work bounds.

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    seed = check_seed(seed)
    start = np.asarray(start, dtype=np.int64)
    g = communication_graph(pattern)
    if g.nnz == 0:
        return start
    nbrs = neighbour_csr(machine, allocation)
    routing = machine.check_routing(None)
    place = UnitPlacement(start, allocation.n_cores, allocation.cores_per_node, allocation)
    if passes:
        hop_swap_passes(g, place, machine, nbrs, seed, passes)
    after_hops = place.pos_of.copy()
    n = pattern.n_ranks
    if proposals:
        link_swaps(unit_phases(pattern, np.arange(n, dtype=np.int64), n), place, machine,
                   routing, nbrs, seed, proposals, n_units=n)
    cands = [start, after_hops, place.pos_of]
    keys = [placement_key(c, pattern, machine, allocation, routing) for c in cands]
    return cands[min(range(3), key=lambda i: (keys[i], -i))]


@dataclass(frozen=True)
class Swap:
    """The mapper ``swap:<start>`` as a value: ``start``'s placement polished by swaps.

    ``start`` is the mapper polished (a :class:`~rankmap.mappers.base.MapperInfo`, as the
    registry resolves ``<start>``).
    """

    start: MapperInfo

    @property
    def name(self) -> str:
        """``swap:<start's name>``."""
        return f"swap:{self.start.name}"

    def __call__(self, pattern, machine, allocation, seed: int = 0) -> np.ndarray:
        """Core of every rank: ``start``'s placement, polished (:func:`polish_cores`).

        Parameters
        ----------
        pattern : Pattern
            The pattern.
        machine : Machine
            The machine (routing: its default).
        allocation : Allocation
            The allocation.
        seed : int
            Seed of the start mapper and of the proposals.

        Returns
        -------
        numpy.ndarray
            int64 allocation core of every rank.
        """
        start = self.start.place(pattern, machine, allocation, seed).core_of_rank
        return polish_cores(start, pattern, machine, allocation, seed)


def _mismatched_2d(pattern, machine) -> bool:
    """A 2-D grid on a 3-D grid machine (the shapes cannot match)."""
    return (pattern.grid is not None and len(pattern.grid) == 2
            and isinstance(machine, GridMachine) and len(machine.dims) == 3)


def swap_candidates(pattern, machine, allocation) -> list[str]:
    """The ``swap:`` names ``--mappings all`` tries here.

    Parameters
    ----------
    pattern : Pattern
        The pattern.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocation.

    Returns
    -------
    list of str
        ``["swap:fold"]`` (or ``["swap:greedy"]`` when no fold applies) for a 2-D grid of at
        most :data:`ALL_RANK_LIMIT` ranks on a 3-D grid machine; else empty.
    """
    if pattern.n_ranks > ALL_RANK_LIMIT or not _mismatched_2d(pattern, machine):
        return []
    if fold_applies(pattern, machine, allocation) is None:
        return ["swap:fold"]
    return ["swap:greedy"]
