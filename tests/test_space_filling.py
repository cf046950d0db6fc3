"""``hilbert`` and ``morton`` mappers (issue 13 item 2): the curves themselves, and valid,
deterministic placements on any grid, machine and allocation."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rankmap.allocation import Allocation, whole_machine
from rankmap.machines import parse_machine
from rankmap.mappers import all_candidate_names, build_mapping
from rankmap.mappers.space_filling import (curve_order, hilbert_index, morton_index,
                                           node_block)
from rankmap.patterns import parse_pattern


@pytest.mark.parametrize("d,bits", [(1, 3), (2, 1), (2, 3), (3, 2), (4, 2)])
def test_hilbert_visits_every_cell_once_in_unit_steps(d, bits):
    cells = np.array(list(itertools.product(range(2 ** bits), repeat=d)))
    h = hilbert_index(cells, bits)
    assert sorted(h.tolist()) == list(range(2 ** (bits * d)))
    walk = cells[np.argsort(h)]
    assert (np.abs(np.diff(walk, axis=0)).sum(axis=1) == 1).all()
    assert (walk[0] == 0).all()                                  # starts at the origin


def test_morton_is_the_bit_interleave():
    # (x, y) = (0b10, 0b01): bits x1 y1 x0 y0 = 1 0 0 1
    assert morton_index(np.array([[2, 1]])).tolist() == [0b1001]
    cells = np.array(list(itertools.product(range(4), repeat=3)))
    assert sorted(morton_index(cells).tolist()) == list(range(64))


def test_curve_order_only_uses_the_order_of_coordinates():
    pts = np.array([[0.0, 10.0], [5.0, 10.0], [5.0, 30.0], [0.0, 30.0]])
    # dense coordinates (0,0) (1,0) (1,1) (0,1): a 2x2 Hilbert curve from the origin
    order = curve_order(pts, "hilbert")
    assert order[0] == 0
    assert set(order.tolist()) == {0, 1, 2, 3}
    steps = np.abs(np.diff(np.array([[0, 0], [1, 0], [1, 1], [0, 1]])[order], axis=0)).sum(1)
    assert (steps == 1).all()


def test_node_block_is_most_cubic_divisor():
    assert node_block((64, 64), 4) == (2, 2)
    assert node_block((80, 50), 4) == (2, 2)
    assert node_block((16, 16, 16), 8) == (2, 2, 2)
    assert node_block((7, 5), 4) == (1, 1)                       # nothing divides: single ranks
    assert node_block((6, 3), 2) == (2, 1)


@st.composite
def grid_problems(draw):
    dims = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    cpn = draw(st.integers(1, 4))
    kind = "torus" if draw(st.booleans()) else "mesh"
    machine = parse_machine(f"{kind}:{'x'.join(map(str, dims))}:cores={cpn}")
    n_nodes = draw(st.integers(1, machine.n_nodes))
    perm = draw(st.permutations(list(range(machine.n_nodes))))
    alloc = Allocation(np.array(perm[:n_nodes], dtype=np.int64), cpn)
    grid = draw(st.lists(st.integers(1, 6), min_size=1, max_size=3).filter(
        lambda g: int(np.prod(g)) <= alloc.n_cores))
    periodic = ":periodic" if draw(st.booleans()) else ""
    box = ":box" if draw(st.booleans()) else ""
    return machine, alloc, parse_pattern(f"stencil:{'x'.join(map(str, grid))}{box}{periodic}")


@settings(max_examples=40, deadline=None)
@given(grid_problems(), st.sampled_from(["hilbert", "morton"]))
def test_curve_mappers_valid_and_deterministic(prob, name):
    machine, alloc, pattern = prob
    cores = build_mapping(name, pattern, machine, alloc).core_of_rank     # validated
    assert len(np.unique(cores)) == pattern.n_ranks
    assert cores.min() >= 0 and cores.max() < alloc.n_cores
    assert np.array_equal(cores, build_mapping(name, pattern, machine, alloc, seed=3).core_of_rank)


def test_hilbert_keeps_node_blocks_together_and_neighbours_close():
    m = parse_machine("torus:4x4x4:cores=4")
    a = whole_machine(m)
    p = parse_pattern("stencil:16x16")
    cores = build_mapping("hilbert", p, m, a).core_of_rank
    node = a.node_of_core(cores).reshape(16, 16)
    # every 2x2 block of the grid is one node
    blocks = node.reshape(8, 2, 8, 2).transpose(0, 2, 1, 3).reshape(64, 4)
    assert (blocks == blocks[:, :1]).all()
    # consecutive blocks on the curve are link neighbours, so most grid neighbours are 0-1 hop
    src, dst = p.phases[0].src, p.phases[0].dst
    hops = m.hop_distance(a.node_of_core(cores)[src], a.node_of_core(cores)[dst])
    assert hops.mean() < 1.0
    # a worse-dilation baseline: the same blocks in row-major order on the 4x4x4 torus
    assert hops.mean() <= m.hop_distance(
        a.node_of_core(build_mapping("XYZT", p, m, a).core_of_rank)[src],
        a.node_of_core(build_mapping("XYZT", p, m, a).core_of_rank)[dst]).mean()


def test_auto_considers_curves_and_gridless_patterns_do_not():
    m = parse_machine("torus:4x4x4")
    names = all_candidate_names(parse_pattern("stencil:8x8"), m, whole_machine(m))
    assert {"hilbert", "morton"} <= set(names)
    gridless = all_candidate_names(parse_pattern("pairs:random:ranks=64"), m, whole_machine(m))
    assert "hilbert" not in gridless and "morton" not in gridless
