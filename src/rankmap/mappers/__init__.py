"""Placement algorithms, all with one signature and found in one registry.

``mapper(pattern, machine, allocation, seed) -> core_of_rank``; use :func:`build_mapping` to
run one by name and get a validated :class:`Mapping`. Importing this package registers every
built-in mapper.
"""

from . import rank_order  # noqa: F401  (registers rank orders, inorder, random)
from . import greedy, mueller_resch, rcb, cubes, graph_partition, rubik  # noqa: F401,E401
from . import graph_multilevel, folding, space_filling, swap_family  # noqa: F401,E401
from . import refine  # noqa: F401  (after the others: it builds on them)
from .base import Mapping, check_fits, validate_mapping
from .registry import (FAMILIES, MAPPERS, MapperFamily, MapperInfo, all_candidate_names,
                       build_mapping, register, register_family, resolve)

__all__ = ["Mapping", "check_fits", "validate_mapping", "MAPPERS", "FAMILIES", "MapperInfo",
           "MapperFamily", "register", "register_family", "resolve", "build_mapping",
           "all_candidate_names"]
