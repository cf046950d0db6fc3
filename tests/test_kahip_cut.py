"""KaHIP cuts made once per build (rankmap.mappers.kahip_cut): a repeated cut inside
``memoised_cuts`` is answered from memory with KaHIP's own blocks, and the mappers' placements
do not change."""

import kahip
import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from rankmap.allocation import whole_machine
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping, node_partition
from rankmap.mappers.graph_multilevel import multilevel_cores
from rankmap.mappers.kahip_cut import kahip_blocks, memoised_cuts
from rankmap.patterns import parse_pattern


def _ring(n, weight=5):
    """CSR of a ring of ``n`` vertices (both directions, int32 weights)."""
    indptr = np.arange(0, 2 * n + 1, 2, dtype=np.int64)
    indices = np.empty(2 * n, dtype=np.int64)
    indices[0::2] = (np.arange(n) - 1) % n
    indices[1::2] = (np.arange(n) + 1) % n
    return indptr, indices, np.full(2 * n, weight, dtype=np.int32)


@pytest.fixture
def counted(monkeypatch):
    """KaHIP's ``kaffpa`` counting its calls."""
    calls = []
    real = kahip.kaffpa

    def kaffpa(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(kahip, "kaffpa", kaffpa)
    return calls


def test_a_repeated_cut_runs_kahip_once_and_gives_its_blocks(counted):
    g = _ring(40)
    outside = kahip_blocks(*g, 4, 0.03, 7, 0)
    with memoised_cuts():
        first = kahip_blocks(*g, 4, 0.03, 7, 0)
        first[:] = -1                           # the caller's own copy
        again = kahip_blocks(*g, 4, 0.03, 7, 0)
        assert np.array_equal(again, outside)
        again[:] = -2                           # and every later caller's too
        again = kahip_blocks(*g, 4, 0.03, 7, 0)
    assert len(counted) == 2                    # outside, then once inside
    assert again.dtype == np.int64
    assert np.array_equal(again, outside)
    assert sorted(np.unique(outside)) == [0, 1, 2, 3]


def test_every_setting_and_every_entry_tells_cuts_apart(counted):
    g = _ring(40)
    heavier = (g[0], g[1], g[2].copy())
    heavier[2][0] = 6
    with memoised_cuts():
        kahip_blocks(*g, 4, 0.03, 7, 0)
        kahip_blocks(*g, 2, 0.03, 7, 0)            # k
        kahip_blocks(*g, 4, 0.05, 7, 0)            # imbalance
        kahip_blocks(*g, 4, 0.03, 8, 0)            # seed
        kahip_blocks(*g, 4, 0.03, 7, 1)            # mode
        kahip_blocks(*heavier, 4, 0.03, 7, 0)      # one weight
        kahip_blocks(*_ring(41), 4, 0.03, 7, 0)    # the graph
        assert len(counted) == 7
        kahip_blocks(*g, 4, 0.03, 7 + 2 ** 31, 0)  # another seed, not 7 modulo 2**31
        kahip_blocks(*g, 4, 0.03, 7 + 2 ** 31, 0)  # itself again
        assert len(counted) == 8


def test_outside_a_build_every_cut_runs_and_builds_share_no_memory(counted):
    g = _ring(30)
    kahip_blocks(*g, 3, 0.03, 1, 0)
    kahip_blocks(*g, 3, 0.03, 1, 0)
    assert len(counted) == 2
    with memoised_cuts():
        with memoised_cuts():                      # nested: the outer block's memory
            kahip_blocks(*g, 3, 0.03, 1, 0)
        kahip_blocks(*g, 3, 0.03, 1, 0)
    with memoised_cuts():
        kahip_blocks(*g, 3, 0.03, 1, 0)
    assert len(counted) == 4


def test_graph_on_fft2d_cuts_less_and_places_as_without_memory(counted, monkeypatch):
    # fft2d's rows are the same subgraph: the blocks of a two-level node cut (forced here on
    # a small pattern) repeat cuts, which a build makes once
    monkeypatch.setattr(node_partition, "TWO_LEVEL_MIN_ENTRIES", 1000)
    m = parse_machine("torus:4x4x4:cores=8")
    a = whole_machine(m)
    p = parse_pattern("fft2d:16x32", default_ranks=a.n_cores)
    plain = multilevel_cores(p, m, a, 3)          # outside any build: every cut runs
    every = len(counted)
    built = build_mapping("graph", p, m, a, 3, in_node=False)
    assert np.array_equal(built.core_of_rank, plain)
    assert 0 < len(counted) - every <= every // 2


@st.composite
def _graphs(draw):
    """A small symmetric weighted graph with at least one edge, as CSR arrays."""
    n = draw(st.integers(min_value=3, max_value=40))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                    st.integers(1, 1000)), min_size=1, max_size=3 * n))
    pairs = [(a, b, w) for a, b, w in pairs if a != b] or [(0, 1, 1)]
    src, dst, w = (np.array(x) for x in zip(*pairs))
    g = sp.coo_matrix((w, (src, dst)), shape=(n, n)).tocsr()
    g = (g + g.T).tocsr()
    g.sum_duplicates()
    g.sort_indices()
    return g.indptr, g.indices, g.data.astype(np.int32)


@settings(max_examples=40, deadline=None)
@given(_graphs(), st.integers(min_value=2, max_value=5), st.integers(min_value=0, max_value=9))
def test_a_remembered_cut_is_kahip_s_cut(graph, k, seed):
    direct = kahip_blocks(*graph, k, 0.03, seed, 0)
    with memoised_cuts():
        first = kahip_blocks(*graph, k, 0.03, seed, 0)
        second = kahip_blocks(*graph, k, 0.03, seed, 0)
    assert np.array_equal(first, direct) and np.array_equal(second, direct)
    assert direct.min() >= 0 and direct.max() < k


def test_seeds_past_31_bits_are_not_aliased():
    """KaHIP takes a C int seed: --seed 2**31 and 2**32 were both its seed 0 (the same graph
    placement as --seed 0); a seed below 2**31 is passed as it is."""
    from rankmap.mappers.kahip_cut import kahip_seed
    assert [kahip_seed(s) for s in (0, 7, 2 ** 31 - 1)] == [0, 7, 2 ** 31 - 1]
    big = [kahip_seed(s) for s in (2 ** 31, 2 ** 32, 2 ** 63 - 1, 2 ** 31 + 7)]
    assert len(set(big)) == 4 and all(0 <= s < 2 ** 31 for s in big)
    assert not set(big) & {0, 7, 2 ** 31 - 1}
