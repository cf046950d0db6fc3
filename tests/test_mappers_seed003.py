"""Seed 003 Table 1 shapes on a scattered allocation of torus:8x8x8 (issue 3, item 9)."""

import numpy as np
import pytest

from rankmap.allocation import parse_allocation
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping
from rankmap.mappers.geometry import average_hops
from rankmap.patterns import parse_pattern

SHAPES = ["32x1x1", "4x4x1", "8x4x1", "2x2x2", "3x3x3"]
MACHINE = parse_machine("torus:8x8x8")
# a 4x4x3 box (x, y < 4, z < 3) plus 60 scattered nodes
_BOX = [x + 8 * (y + 8 * z) for z in range(3) for y in range(4) for x in range(4)]
_RNG = np.random.default_rng(3)
_OTHERS = [int(n) for n in _RNG.choice(512, 200, replace=False) if n not in _BOX][:60]
ALLOCS = {"sorted": sorted(_BOX + _OTHERS), "box-first": _BOX + _OTHERS}


def _hops(name, spec, alloc_key):
    alloc = parse_allocation(",".join(map(str, ALLOCS[alloc_key])), MACHINE)
    pat = parse_pattern(spec)
    m = build_mapping(name, pat, MACHINE, alloc)
    return average_hops(m.core_of_rank, pat, MACHINE, alloc)


@pytest.mark.parametrize("alloc_key", list(ALLOCS))
@pytest.mark.parametrize("cyclic", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_greedy_and_mueller_resch_never_worse_than_default(shape, cyclic, alloc_key):
    spec = f"stencil:{shape}" + (":periodic" if cyclic else "")
    default = _hops("inorder", spec, alloc_key)
    assert _hops("greedy", spec, alloc_key) <= default + 1e-12
    assert _hops("mueller-resch", spec, alloc_key) <= default + 1e-12


@pytest.mark.parametrize("spec", ["stencil:32x1x1", "stencil:32x1x1:periodic", "stencil:4x4x1",
                                  "stencil:8x4x1", "stencil:2x2x2", "stencil:2x2x2:periodic"])
def test_greedy_finds_dilation_one_embedding(spec):
    # the box listed first holds a dilation-1 embedding the nearest-neighbour walk finds
    assert _hops("greedy", spec, "box-first") == pytest.approx(1.0)


def test_greedy_strictly_better_on_scattered_3x3x3():
    assert _hops("greedy", "stencil:3x3x3", "sorted") < _hops("inorder", "stencil:3x3x3", "sorted")


def test_greedy_walk_follows_the_ring_on_a_whole_torus():
    m = parse_machine("torus:16")
    alloc = parse_allocation(None, m)
    pat = parse_pattern("stencil:16:periodic")
    cores = build_mapping("greedy", pat, m, alloc).core_of_rank
    assert list(cores) == list(range(16))            # starts on core 0 (even count), walks +1


def test_greedy_odd_count_starts_on_highest_core():
    from rankmap.mappers.greedy import greedy_walk
    m = parse_machine("torus:15")
    alloc = parse_allocation(None, m)
    cores = greedy_walk((15,), m, alloc)
    assert cores[0] == 14
    assert average_hops(cores, parse_pattern("stencil:15"), m, alloc) == 1.0


def test_walk_dimension_order_puts_even_dimension_first():
    from rankmap.mappers.greedy import walk_dimension_order
    assert walk_dimension_order((4, 3)) == [0, 1]
    assert walk_dimension_order((3, 4)) == [1, 0]
    assert walk_dimension_order((3, 3, 3)) == [2, 1, 0]
