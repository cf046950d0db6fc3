"""Placement algorithms, all called alike and found in one registry.

``mapper(pattern, machine, allocation, seed) -> core_of_rank``; use :func:`build_mapping` to
run one by name and get a validated :class:`Placement`. Parametrised names are parsed into
values (:class:`RankOrder`, :class:`Rubik`, :class:`RubikPreset`, :class:`Swap`,
:class:`Refine`) by :mod:`rankmap.mappers.registry`.
"""

from .base import MapperInfo, Placement, check_fits, validate_mapping
from .rank_order import RankOrder
from .refine import Refine
from .registry import (FAMILIES, MAPPERS, MapperFamily, all_candidate_names, build_mapping,
                       inapplicable_names, resolve, same_placement_as)
from .rubik import Rubik, RubikPreset
from .swap_family import Swap

__all__ = ["Placement", "check_fits", "validate_mapping", "MAPPERS", "FAMILIES", "MapperInfo",
           "MapperFamily", "resolve", "build_mapping", "all_candidate_names", "RankOrder",
           "Rubik", "RubikPreset", "Swap", "Refine", "same_placement_as", "inapplicable_names"]
