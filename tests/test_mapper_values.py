"""Parametrised mapper names are parsed by the registry into values (issue 12).

``rubik: ...`` is ``Rubik(spec)``, presets are ``RubikPreset(name)``, rank orders
``RankOrder(order)``, ``swap:X`` is ``Swap(start)`` and ``refine:X`` is ``Refine(start, budget,
router)``; the values are frozen, equal when their parameters are, and give the same
placement as the name.
"""

import dataclasses

import numpy as np
import pytest

from rankmap.allocation import parse_allocation
from rankmap.errors import RankmapError
from rankmap.machines import parse_machine
from rankmap.mappers import (MAPPERS, RankOrder, Refine, Rubik, RubikPreset, Swap, build_mapping,
                             resolve)
from rankmap.patterns import parse_pattern

SPEC = "rubik: app tile 1,4,4; net tile 4,4,1; tilt z x 1"


@pytest.fixture(scope="module")
def problem():
    m = parse_machine("torus:4x4x2")
    return m, parse_allocation(None, m), parse_pattern("stencil:2x4x4")


def test_names_parse_into_values(problem):
    m, _, _ = problem
    assert resolve(SPEC, m).fn == Rubik(SPEC)
    assert resolve("rubik-tile", m).fn == RubikPreset("rubik-tile")
    assert resolve("tzxy", m).fn == RankOrder("TZXY")
    swap = resolve("swap:greedy", m).fn
    assert isinstance(swap, Swap) and swap.start == MAPPERS["greedy"]
    refine = resolve("refine:rcb", m).fn
    assert refine == Refine(MAPPERS["rcb"]) and refine.name == "refine:rcb"
    assert MAPPERS["refine"].fn == Refine(MAPPERS["graph"])


def test_values_place_like_their_names(problem):
    m, a, p = problem
    assert np.array_equal(Rubik(SPEC)(p, m, a, 0), build_mapping(SPEC, p, m, a).core_of_rank)
    assert np.array_equal(RankOrder("TZXY")(p, m, a), build_mapping("TZXY", p, m, a).core_of_rank)
    assert np.array_equal(Refine(MAPPERS["rcb"], budget=300)(p, m, a, 1),
                          build_mapping("refine:rcb", p, m, a, 1, budget=300).core_of_rank)


def test_values_are_frozen_and_checked_when_built():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Rubik(SPEC).spec = "rubik:"
    with pytest.raises(RankmapError, match="bad statement"):
        Rubik("rubik: app spin 1,2")
    with pytest.raises(RankmapError, match="unknown rubik preset"):
        RubikPreset("rubik-nope")


def test_registry_tables_are_read_only():
    with pytest.raises(TypeError):
        MAPPERS["mine"] = MAPPERS["inorder"]
