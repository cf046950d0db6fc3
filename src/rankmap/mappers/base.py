"""Placements, and the named mapper that produces one.

A :class:`Placement` is an integer array ``core_of_rank`` into the allocation's cores (core
``c`` is core ``c % cores_per_node`` of node ``allocation.nodes[c // cores_per_node]``). It is
always validated: every rank placed, no core used twice, no core outside the allocation.

A :class:`MapperInfo` is a mapper as the registry lists it: a name, the mapper itself (a
function or a parametrised value such as :class:`~rankmap.mappers.rubik.Rubik`, called as
``mapper(pattern, machine, allocation, seed) -> core_of_rank``) and when it applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..allocation import Allocation
from ..errors import RankmapError
from ..validate import first_repeated, id_array
from .domain_placement import current_rule, in_node_step

__all__ = ["Placement", "MapperInfo", "MapperFn", "KEEPS_CORES", "check_fits",
           "validate_mapping"]

#: mappers whose cores the in-node placement step leaves alone (the launcher's own order)
KEEPS_CORES = ("inorder",)

#: ``mapper(pattern, machine, allocation, seed) -> core_of_rank`` (int64 array, one per rank)
MapperFn = Callable[..., np.ndarray]


@dataclass
class Placement:
    """A validated placement: ``core_of_rank[r]`` is rank r's allocation core index."""

    name: str
    core_of_rank: np.ndarray

    def __post_init__(self):
        self.core_of_rank = id_array(self.core_of_rank, f"cores of placement {self.name!r}")
        core = first_repeated(self.core_of_rank)
        if core is not None:
            ranks = np.nonzero(self.core_of_rank == core)[0][:2]
            raise RankmapError(f"mapping {self.name!r} puts ranks {int(ranks[0])} and "
                               f"{int(ranks[1])} on the same core ({core})")

    def check(self, n_ranks: int, allocation: Allocation) -> None:
        """Raise unless this places exactly ``n_ranks`` ranks on cores of ``allocation``.

        Parameters
        ----------
        n_ranks : int
            Ranks of the pattern.
        allocation : Allocation
            The allocation the core indices refer to.

        Raises
        ------
        RankmapError
            Another rank count, or a core beyond the allocation's.
        """
        if len(self.core_of_rank) != n_ranks:
            raise RankmapError(f"mapping {self.name!r} places {len(self.core_of_rank)} ranks, "
                               f"the pattern has {n_ranks}")
        if n_ranks and self.core_of_rank.max() >= allocation.n_cores:
            raise RankmapError(f"mapping {self.name!r} uses core {int(self.core_of_rank.max())}"
                               f", outside the allocation's {allocation.n_cores} cores")

    def nodes(self, allocation: Allocation) -> np.ndarray:
        """Machine node of every rank.

        Parameters
        ----------
        allocation : Allocation
            The allocation the placement's core indices refer to.

        Returns
        -------
        numpy.ndarray
            int64 machine node id of every rank, shape (ranks,).

        Raises
        ------
        RankmapError
            When a core is not one of the allocation's (a placement made for another).
        """
        self.check_within(allocation)
        return allocation.node_of_core(self.core_of_rank)

    def check_within(self, allocation: Allocation) -> None:
        """Refuse an allocation whose cores do not hold this placement's (it was made for
        another: its launcher file came out an IndexError, or shorter).

        Parameters
        ----------
        allocation : Allocation
            The allocation the placement's core indices should refer to.

        Raises
        ------
        RankmapError
            Naming the core and the allocation's size.
        """
        cores = self.core_of_rank
        if cores.size and (int(cores.max()) >= allocation.n_cores or int(cores.min()) < 0):
            raise RankmapError(f"placement {self.name!r} uses core {int(cores.max())}, the "
                               f"allocation has {allocation.n_cores} ({allocation.n_nodes} "
                               "nodes): it was made for another allocation")

    def slots(self, allocation: Allocation) -> np.ndarray:
        """Core within its node of every rank.

        Parameters
        ----------
        allocation : Allocation
            The allocation the placement's core indices refer to.

        Returns
        -------
        numpy.ndarray
            int64 slot of every rank, 0 .. cores_per_node - 1, shape (ranks,).

        Raises
        ------
        RankmapError
            When a core is not one of the allocation's (a placement made for another).
        """
        self.check_within(allocation)
        return allocation.slot_of_core(self.core_of_rank)


def check_fits(n_ranks: int, allocation: Allocation) -> None:
    """Raise when the allocation has fewer cores than the pattern has ranks.

    Parameters
    ----------
    n_ranks : int
        Ranks of the pattern.
    allocation : Allocation
        The allocated nodes and cores per node.

    Raises
    ------
    RankmapError
        ``n_ranks`` exceeds ``allocation.n_cores`` (the message counts ranks a node, not
        cores, when each rank takes several cores: ``--threads``).
    """
    if n_ranks <= allocation.n_cores:
        return
    threads = int(allocation.extra.get("threads", 1))
    if threads > 1:
        # under --threads the allocation's "cores" are ranks per node (cores // threads)
        raise RankmapError(
            f"{n_ranks} ranks do not fit on {allocation.n_nodes} nodes x "
            f"{allocation.cores_per_node} ranks ({allocation.cores_per_node * threads} cores, "
            f"{threads} threads a rank) = {allocation.n_cores} ranks")
    raise RankmapError(f"{n_ranks} ranks do not fit on {allocation.n_nodes} nodes x "
                       f"{allocation.cores_per_node} cores = {allocation.n_cores} cores")


def validate_mapping(name: str, core_of_rank, n_ranks: int, allocation: Allocation) -> Placement:
    """Check that ``core_of_rank`` places ``n_ranks`` ranks and wrap it in a Placement.

    Parameters
    ----------
    name : str
        Name of the placement (shown in errors and tables).
    core_of_rank : array_like of int
        Allocation core index of every rank.
    n_ranks : int
        Ranks the pattern has.
    allocation : Allocation
        The allocation the core indices refer to.

    Returns
    -------
    Placement
        The placement, ``core_of_rank`` as int64.

    Raises
    ------
    RankmapError
        A rank is missing, a core is outside the allocation or used twice, or the values are
        not integers.
    """
    check_fits(n_ranks, allocation)
    cores = np.asarray(core_of_rank)
    if cores.ndim != 1:
        raise RankmapError(f"mapping {name!r}: expected one core per rank, got an array of "
                           f"shape {cores.shape}")
    if len(cores) != n_ranks:
        raise RankmapError(f"mapping {name!r} places {cores.size} ranks, the pattern has {n_ranks}")
    if not np.issubdtype(cores.dtype, np.integer):
        raise RankmapError(f"mapping {name!r} is not made of core numbers")
    if cores.dtype.kind == "u" and cores.size and int(cores.max()) >= allocation.n_cores:
        raise RankmapError(f"mapping {name!r} uses core {int(cores.max())}, outside the "
                           f"allocation's {allocation.n_cores} cores")
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
    return Placement(name, cores)


@dataclass(frozen=True)
class MapperInfo:
    """A named mapper: the mapper, a one-line description, and an applicability test.

    ``fn(pattern, machine, allocation, seed)`` returns the core of every rank; for a
    parametrised name it is the value the registry parsed (``Rubik(spec)``, ``Refine(...)``).
    ``applies(pattern, machine, allocation)`` returns None when the mapper can place the
    pattern, else a short reason why not. ``in_all`` says whether ``--mappings all`` tries it.
    ``same_as(pattern, machine, allocation)`` names another mapper whose placement (same
    seed, same in-node step) is this one's here, or returns None (``rcb`` of a pattern
    without a grid is the ``graph`` mapper): callers may build one of the two only.
    ``grid_machine_only`` says the mapper needs a Cartesian box of nodes (a torus or mesh):
    it is not offered by name on a dragonfly or a fat tree.
    """

    name: str
    fn: MapperFn
    description: str
    applies: Callable | None = None
    in_all: bool = True
    same_as: Callable | None = None
    grid_machine_only: bool = False

    def reason_not_applicable(self, pattern, machine, allocation) -> str | None:
        """Why the mapper cannot place ``pattern`` here, or None when it can.

        Parameters
        ----------
        pattern : Pattern
            The communication pattern.
        machine : Machine
            The machine.
        allocation : Allocation
            The allocated nodes.

        Returns
        -------
        str or None
            A short reason, or None when the mapper applies.
        """
        return self.applies(pattern, machine, allocation) if self.applies else None

    def same_placement_as(self, pattern, machine, allocation) -> str | None:
        """The name of another mapper that places ``pattern`` exactly as this one does here.

        Parameters
        ----------
        pattern : Pattern
            The communication pattern.
        machine : Machine
            The machine.
        allocation : Allocation
            The allocated nodes.

        Returns
        -------
        str or None
            That mapper's name (same seed, same in-node step give the same cores), or None.
        """
        return self.same_as(pattern, machine, allocation) if self.same_as else None

    def in_node_step(self, cores, pattern, machine, allocation, seed: int = 0,
                     accept=None) -> np.ndarray:
        """The mapper's cores re-dealt over each node's NUMA domains (node-structured machines).

        Parameters
        ----------
        cores : numpy.ndarray
            int64 allocation core of every rank, as the mapper placed them.
        pattern : Pattern
            The pattern.
        machine : Machine
            The machine; without a node structure the cores are returned as they are.
        allocation : Allocation
            The allocation.
        seed : int
            Seed of the in-node step.
        accept : callable, optional
            Which nodes keep their new deal
            (:data:`~rankmap.mappers.domain_placement.Accept`; default: the byte rule).

        Returns
        -------
        numpy.ndarray
            int64 allocation core of every rank (:func:`~rankmap.mappers.domain_placement.
            in_node_step`); unchanged for mappers in :data:`KEEPS_CORES`.
        """
        if machine.node_structure is None or self.name in KEEPS_CORES:
            return cores
        validate_mapping(self.name, cores, pattern.n_ranks, allocation)
        return in_node_step(cores, pattern, machine, allocation, seed, accept)

    def place(self, pattern, machine, allocation, seed: int = 0) -> Placement:
        """Run the mapper, with the in-node step (under the rule of the placement being
        built, :func:`~rankmap.mappers.domain_placement.in_node_rule`), and validate its
        result.

        Parameters
        ----------
        pattern : Pattern
            The communication pattern (its ``n_ranks`` ranks are placed).
        machine : Machine
            The machine.
        allocation : Allocation
            The allocated nodes; ranks go on its cores only.
        seed : int
            Seed of randomised mappers.

        Returns
        -------
        Placement
            The validated placement, named after this mapper.

        Raises
        ------
        RankmapError
            The ranks do not fit, the mapper does not apply, or its result is no placement.
        """
        check_fits(pattern.n_ranks, allocation)
        reason = self.reason_not_applicable(pattern, machine, allocation)
        if reason is not None:
            raise RankmapError(f"mapping {self.name!r} does not apply here: {reason}")
        cores = self.in_node_step(self.fn(pattern, machine, allocation, seed), pattern, machine,
                                  allocation, seed, current_rule())
        return validate_mapping(self.name, cores, pattern.n_ranks, allocation)
