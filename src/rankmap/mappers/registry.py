"""The one registry of mappers.

Every mapper has the signature ``mapper(pattern, machine, allocation, seed) -> core_of_rank``
(an integer array, see :mod:`rankmap.mappers.base`) and is found here by name. Names are either
fixed (``inorder``, ``random``) or members of a *family* recognised by a parser: rank orders
(``TXYZ``), and parametrised names such as ``refine:greedy`` or ``rubik: ...``.

``build_mapping`` resolves a name, runs the mapper and validates the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import RankmapError
from .base import Mapping, check_fits, validate_mapping
from .domain_placement import in_node_step

MapperFn = Callable[..., np.ndarray]


@dataclass
class MapperInfo:
    """A named mapper: the function, a one-line description, and an applicability test.

    ``applies(pattern, machine, allocation)`` returns None when the mapper can place the
    pattern, else a short reason why not. ``in_all`` says whether ``--mappings all`` tries it.
    """

    name: str
    fn: MapperFn
    description: str
    applies: Callable | None = None
    in_all: bool = True
    #: whether ``fn`` takes the keyword options ``router`` and ``budget`` (refine does)
    takes_options: bool = False

    def reason_not_applicable(self, pattern, machine, allocation) -> str | None:
        """None if the mapper applies, else why not."""
        return self.applies(pattern, machine, allocation) if self.applies else None


@dataclass
class MapperFamily:
    """Parametrised mapper names: ``parse(name, machine)`` returns a MapperInfo or None."""

    prefix: str
    parse: Callable
    description: str
    #: names of the family that ``--mappings all`` tries, given (pattern, machine, allocation)
    all_names: Callable | None = None


MAPPERS: dict[str, MapperInfo] = {}
#: mappers whose cores the in-node placement step leaves alone (the launcher's own order)
KEEPS_CORES = ("inorder",)
FAMILIES: list[MapperFamily] = []


def register(name: str, description: str, applies=None, in_all: bool = True,
             takes_options: bool = False):
    """Decorator adding a fixed-name mapper to the registry."""
    def deco(fn: MapperFn) -> MapperFn:
        MAPPERS[name] = MapperInfo(name, fn, description, applies, in_all, takes_options)
        return fn
    return deco


def register_family(family: MapperFamily) -> None:
    """Add a family of parametrised mapper names."""
    FAMILIES.append(family)


def resolve(name: str, machine, extra_known: tuple[str, ...] = ()) -> MapperInfo:
    """Find the mapper called ``name`` (fixed names first, then families).

    Parameters
    ----------
    name : str
        A mapper name (``greedy``, ``TXYZ``, ``refine:rcb``, ``rubik: ...``).
    machine : Machine
        The machine (families such as rank orders depend on its letters).
    extra_known : tuple of str
        Names a higher layer resolves itself (``auto``), listed in the error message.

    Returns
    -------
    MapperInfo
        The mapper.
    """
    key = name.strip()
    if key in MAPPERS:
        return MAPPERS[key]
    if key.lower() in MAPPERS:
        return MAPPERS[key.lower()]
    for family in FAMILIES:
        info = family.parse(key, machine)
        if info is not None:
            return info
    known = sorted([*MAPPERS, *extra_known]) + [f.prefix for f in FAMILIES]
    raise RankmapError(f"unknown mapping {name!r}: choose from {', '.join(known)}")


def all_candidate_names(pattern, machine, allocation) -> list[str]:
    """Names ``--mappings all`` evaluates: every applicable registered mapper and family member."""
    names: list[str] = []
    for family in FAMILIES:
        if family.all_names is not None:
            names.extend(family.all_names(pattern, machine, allocation))
    for info in MAPPERS.values():
        if info.in_all and info.reason_not_applicable(pattern, machine, allocation) is None:
            names.append(info.name)
    return list(dict.fromkeys(names))


def build_mapping(name: str, pattern, machine, allocation, seed: int = 0, *, router=None,
                  budget: int | None = None, extra_known: tuple[str, ...] = (),
                  in_node: bool = True) -> Mapping:
    """Run the mapper called ``name`` and return its validated :class:`Mapping`.

    Parameters
    ----------
    name : str
        Mapper name (see :func:`resolve`).
    pattern, machine, allocation
        The inputs.
    seed : int
        Seed of randomised mappers.
    router : Router or str, optional
        Routing that searching mappers (``refine``) optimise under (default: the machine's).
    budget : int, optional
        Work bound of searching mappers (``refine``: proposed moves; default
        :data:`rankmap.mappers.refine.DEFAULT_BUDGET`).
    extra_known : tuple of str
        Names listed in the unknown-name error besides the registry's.
    in_node : bool
        On a machine with a node structure, re-deal every node's ranks over its NUMA
        domains (:func:`~rankmap.mappers.domain_placement.in_node_step`); ``inorder``, the
        launcher's own order, is never changed. False keeps the mapper's cores.

    Returns
    -------
    Mapping
        The validated placement.
    """
    info = resolve(name, machine, extra_known)
    check_fits(pattern.n_ranks, allocation)
    reason = info.reason_not_applicable(pattern, machine, allocation)
    if reason is not None:
        raise RankmapError(f"mapping {name!r} does not apply here: {reason}")
    if info.takes_options:
        cores = info.fn(pattern, machine, allocation, seed, router=router, budget=budget)
    else:
        cores = info.fn(pattern, machine, allocation, seed)
    if in_node and machine.node_structure is not None and info.name not in KEEPS_CORES:
        validate_mapping(info.name, cores, pattern.n_ranks, allocation)
        cores = in_node_step(cores, pattern, machine, allocation, seed)
    return validate_mapping(info.name, cores, pattern.n_ranks, allocation)
