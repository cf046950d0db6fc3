"""Allocations and the built-in placements: rank orders, inorder, random."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from rankmap.allocation import parse_allocation
from rankmap.errors import RankmapError
from rankmap.machines import Torus, parse_machine
from rankmap.mappers import all_candidate_names, build_mapping
from rankmap.mappers.rank_order import rank_order_names
from rankmap.patterns import parse_pattern


def test_txyz_and_xyzt_on_whole_torus():
    m = parse_machine("torus:4x2x2:cores=2")
    a = parse_allocation(None, m)
    p = parse_pattern("stencil:32")
    txyz = build_mapping("TXYZ", p, m, a)
    nodes, slots = txyz.nodes(a), txyz.slots(a)
    assert slots[:4].tolist() == [0, 1, 0, 1] and nodes[:4].tolist() == [0, 0, 1, 1]
    xyzt = build_mapping("XYZT", p, m, a)
    c = m.coords(xyzt.nodes(a))
    r = np.arange(32)
    assert (c[:, 0] == r % 4).all() and (c[:, 1] == (r // 4) % 2).all()
    assert (xyzt.slots(a) == r // 16).all()
    assert np.array_equal(build_mapping("inorder", p, m, a).core_of_rank, txyz.core_of_rank)


def test_rank_order_on_scattered_allocation_sorts_by_coordinates():
    m = parse_machine("torus:4x4")
    a = parse_allocation("15,0,5,10", m)       # scheduler order is not coordinate order
    p = parse_pattern("stencil:4")
    assert build_mapping("TXY", p, m, a).nodes(a).tolist() == [0, 5, 10, 15]
    assert build_mapping("inorder", p, m, a).nodes(a).tolist() == [15, 0, 5, 10]
    # YX: y fastest -> (0,0),(1,1),(2,2),(3,3) sorted by x then y; 'TYX' on 2x2 block
    a2 = parse_allocation("0,1,4,5", m)
    assert build_mapping("TYX", p, m, a2).nodes(a2).tolist() == [0, 4, 1, 5]


def test_all_names_include_every_rank_order():
    m = parse_machine("torus:2x2x2")
    assert len(rank_order_names(m)) == 24
    names = all_candidate_names(parse_pattern("stencil:8"), m, parse_allocation(None, m))
    assert {"TXYZ", "ZYXT", "inorder", "random"} <= set(names)


@st.composite
def machine_alloc_pattern(draw):
    nd = draw(st.integers(1, 3))
    dims = tuple(draw(st.integers(1, 4)) for _ in range(nd))
    cores = draw(st.integers(1, 3))
    m = Torus(dims, cores_per_node=cores)
    nodes = draw(st.lists(st.integers(0, m.n_nodes - 1), min_size=1, max_size=m.n_nodes,
                          unique=True))
    a = parse_allocation(",".join(map(str, nodes)), m)
    n_ranks = draw(st.integers(1, a.n_cores))
    return m, a, parse_pattern(f"pairs:random:ranks={max(2, n_ranks)}") if n_ranks >= 2 \
        else parse_pattern("stencil:1"), draw(st.integers(0, 100))


@given(machine_alloc_pattern(), st.sampled_from(["inorder", "random", "rank-order"]))
def test_every_placement_is_valid(case, name):
    m, a, p, seed = case
    if name == "rank-order":
        orders = rank_order_names(m)
        name = orders[seed % len(orders)]
    if p.n_ranks > a.n_cores:
        with pytest.raises(RankmapError, match="do not fit"):
            build_mapping(name, p, m, a, seed)
        return
    mp = build_mapping(name, p, m, a, seed)
    assert len(mp.core_of_rank) == p.n_ranks
    assert len(set(mp.core_of_rank.tolist())) == p.n_ranks          # injective
    assert set(mp.nodes(a).tolist()) <= set(a.nodes.tolist())        # inside the allocation
    assert np.array_equal(mp.core_of_rank, build_mapping(name, p, m, a, seed).core_of_rank)


def test_random_depends_on_seed():
    m = parse_machine("torus:4x4:cores=2")
    a = parse_allocation(None, m)
    p = parse_pattern("stencil:32")
    r1, r2 = (build_mapping("random", p, m, a, s).core_of_rank for s in (1, 2))
    assert not np.array_equal(r1, r2)


def test_more_ranks_than_cores_is_an_error():
    m = parse_machine("torus:2x2:cores=2")
    with pytest.raises(RankmapError, match="9 ranks do not fit on 4 nodes x 2 cores"):
        build_mapping("TXY", parse_pattern("stencil:9"), m, parse_allocation(None, m))


@pytest.mark.parametrize("text,needle", [
    ("0-3,2", "listed twice"), ("5-2", "end before start"), ("0,99", "99"), ("a,b", "unknown node names"),
    ("nodes.txt", "not found"),
])
def test_bad_allocations(text, needle):
    with pytest.raises(RankmapError, match=needle):
        parse_allocation(text, parse_machine("torus:4x4"))


def test_allocation_file(tmp_path):
    f = tmp_path / "alloc.txt"
    f.write_text("# from the scheduler\n3\n0-1\n\n7 # last\n")
    a = parse_allocation(str(f), parse_machine("torus:4x4:cores=2"))
    assert a.nodes.tolist() == [3, 0, 1, 7] and a.n_cores == 8


def test_unknown_mapping_lists_choices():
    m = parse_machine("torus:4x4")
    with pytest.raises(RankmapError, match="unknown mapping 'TXYQ'.*inorder"):
        build_mapping("TXYQ", parse_pattern("stencil:4"), m, parse_allocation(None, m))


def _lexsort_reference(order, machine, allocation):
    """Cores sorted by the letters' keys in turn, the first letter fastest (numpy.lexsort)."""
    cpn = allocation.cores_per_node
    cores = np.arange(allocation.n_cores)
    coords = machine.coords(allocation.nodes)
    keys = [cores % cpn if letter == "T"
            else np.repeat(coords[:, machine.letters.index(letter)], cpn) for letter in order]
    return cores[np.lexsort(keys)]


@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.integers(1, 3),
       st.randoms(use_true_random=False), st.data())
def test_rank_orders_sort_cores_as_lexsort_does(dims, cores, rnd, data):
    """Any order of T and the machine's letters, on the whole machine or a scattered
    allocation in scheduler order: the cores lexsort gives, letter by letter."""
    from rankmap.mappers.rank_order import rank_order_cores

    m = parse_machine("torus:" + "x".join(map(str, dims)) + f":cores={cores}")
    nodes = list(range(m.n_nodes))
    rnd.shuffle(nodes)
    nodes = nodes[:data.draw(st.integers(1, m.n_nodes))]
    a = parse_allocation(",".join(map(str, nodes)), m)
    order = "".join(rnd.sample(["T"] + list(m.letters), m.ndim + 1))
    assert np.array_equal(rank_order_cores(order, m, a), _lexsort_reference(order, m, a))


def test_rank_orders_with_keys_too_wide_for_one_integer_sort_letter_by_letter():
    """Coordinates whose mixed-radix key would pass 2**62 take the letter-by-letter sort."""
    from rankmap.mappers.rank_order import rank_order_cores

    class Wide:  # a machine whose coordinates reach 2**40 (no real one does)
        letters = "XY"

        def coords(self, nodes):
            nodes = np.asarray(nodes)
            return np.stack([(nodes * 7919) % 5 * 2 ** 40, nodes % 3 * 2 ** 30], axis=1)

    class Alloc:
        nodes, cores_per_node, n_cores = np.arange(12), 2, 24

    m, a = Wide(), Alloc()
    for order in ("TXY", "YXT", "XTY"):
        assert np.array_equal(rank_order_cores(order, m, a), _lexsort_reference(order, m, a))
