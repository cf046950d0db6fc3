"""Identical flows routed once (rankmap.routing.groups): the groups are numpy's unique keys,
and loads routed per group equal loads routed per flow on every router."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankmap.kernels.flows import INSERTION_MAX
from rankmap.machines import parse_machine
from rankmap.routing import router_for
from rankmap.routing.groups import flow_groups, grouped_loads


@st.composite
def flows(draw, max_nodes=40):
    n_nodes = draw(st.integers(1, max_nodes))
    n = draw(st.integers(0, 200))
    node = st.integers(0, n_nodes - 1)
    src = np.array(draw(st.lists(node, min_size=n, max_size=n)), dtype=np.int64)
    dst = np.array(draw(st.lists(node, min_size=n, max_size=n)), dtype=np.int64)
    sizes = draw(st.lists(st.sampled_from([1.0, 2.5, 4096.0, 1e6]), min_size=1, max_size=3))
    nbytes = np.array([sizes[i % len(sizes)] for i in
                       draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))])
    return src, dst, nbytes


def _reference(src, dst, nbytes):
    """Groups by numpy: lexicographic (key, size) order, first occurrence, counts."""
    n = max(int(src.max(initial=0)), int(dst.max(initial=0))) + 1
    key = src * n + dst
    order = np.lexsort((nbytes, key))
    ks, bs = key[order], nbytes[order]
    start = np.ones(len(order), dtype=bool)
    start[1:] = (ks[1:] != ks[:-1]) | (bs[1:] != bs[:-1])
    group = np.cumsum(start) - 1
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = group
    return order[start], np.bincount(group, minlength=int(start.sum())), inverse


@given(flows(), st.booleans())
@settings(max_examples=200, deadline=None)
def test_groups_are_the_sorted_unique_flows(case, by_source):
    src, dst, nbytes = case
    if by_source:           # sources already in order, as rank orders give them: not sorted again
        order = np.argsort(src, kind="stable")
        src, dst, nbytes = src[order], dst[order], nbytes[order]
    g = flow_groups(src, dst, nbytes)
    first, count, inverse = _reference(src, dst, nbytes)
    assert np.array_equal(g.src, src[first]) and np.array_equal(g.dst, dst[first])
    assert np.array_equal(g.nbytes, nbytes[first])
    assert np.array_equal(g.count, count) and np.array_equal(g.inverse, inverse)
    # every flow is what its group says
    assert np.array_equal(g.src[g.inverse], src) and np.array_equal(g.dst[g.inverse], dst)
    assert np.array_equal(g.nbytes[g.inverse], nbytes)


@pytest.mark.parametrize("per_source", [2, INSERTION_MAX, INSERTION_MAX + 1, 300])
def test_a_sources_groups_in_order_by_insertion_or_merge(per_source):
    """Sources whose groups come out of order, as few as insertion orders and as many as the
    merge sorts order, in several sizes per destination: numpy's order either way."""
    rng = np.random.default_rng(per_source)
    n_src = 7
    src = np.repeat(np.arange(n_src), 2 * per_source)
    dst = np.concatenate([rng.permutation(per_source).repeat(2) for _ in range(n_src)])
    nbytes = rng.choice([4096.0, 1.0, 2.5], len(src))
    g = flow_groups(src.astype(np.int64), dst.astype(np.int64), nbytes)
    first, count, inverse = _reference(src, dst, nbytes)
    assert np.array_equal(g.src, src[first]) and np.array_equal(g.dst, dst[first])
    assert np.array_equal(g.nbytes, nbytes[first]) and np.array_equal(g.count, count)
    assert np.array_equal(g.inverse, inverse)


@pytest.mark.parametrize("per_source", [2, INSERTION_MAX, INSERTION_MAX + 1, 300])
@pytest.mark.parametrize("in_order", [True, False])
def test_a_sources_destinations_in_order_with_one_size_each(per_source, in_order):
    """One size per node pair (a stencil's case: each destination one group, found in one
    pass and put in order by insertion or by a sort), sources in order or not, a second
    flow to some destinations: numpy's groups."""
    rng = np.random.default_rng(per_source + 7 * in_order)
    n_src = 5
    src = np.repeat(np.arange(n_src), per_source + 3)
    dst = np.concatenate([np.concatenate([rng.permutation(per_source),
                                          rng.integers(0, per_source, 3)])
                          for _ in range(n_src)])
    size = np.array([8.0, 1.0, 2.5, 4096.0, 3.0])[src]  # one size per source
    if not in_order:
        shuffle = rng.permutation(len(src))
        src, dst, size = src[shuffle], dst[shuffle], size[shuffle]
    g = flow_groups(src.astype(np.int64), dst.astype(np.int64), size)
    first, count, inverse = _reference(src, dst, size)
    assert np.array_equal(g.src, src[first]) and np.array_equal(g.dst, dst[first])
    assert np.array_equal(g.count, count) and np.array_equal(g.inverse, inverse)


def test_groups_of_a_stencil_with_four_ranks_per_node():
    # ranks 0..15 on 4 nodes of 4, ring neighbours: every node pair (i, i+1) carries 1 flow
    # from the last rank of one node to the first of the next, and flows inside nodes
    r = np.arange(16)
    src, dst = r, (r + 1) % 16
    g = flow_groups(src // 4, dst // 4, np.full(16, 8.0))
    assert g.n_groups == 8                      # 4 node-internal groups + 4 between nodes
    assert sorted(g.count.tolist()) == [1, 1, 1, 1, 3, 3, 3, 3]


MACHINES = [("torus:4x3x2", "dor"), ("mesh:4x4", "adaptive"), ("torus:5x4", "adaptive"),
            ("dragonfly:groups=4,rows=2,cols=2,nodes=2", "minimal"),
            ("dragonfly:groups=4,rows=2,cols=2,nodes=2", "valiant"),
            ("dragonfly:groups=4,rows=2,cols=2,nodes=2", "ugal"),
            ("fattree:k=4:levels=2", "dmodk"), ("fattree:k=4:levels=2", "ecmp")]


@pytest.mark.parametrize("spec,routing", MACHINES)
@given(data=st.data())
@settings(max_examples=25, deadline=None)
def test_grouped_loads_equal_per_flow_loads(spec, routing, data):
    m = parse_machine(spec)
    src, dst, nbytes = data.draw(flows(max_nodes=m.n_nodes))
    src, dst = src % m.n_nodes, dst % m.n_nodes
    router = router_for(m, routing).for_phase(src, dst, nbytes)
    want = router.loads(src, dst, nbytes)
    got, groups = grouped_loads(router, src, dst, nbytes)
    # byte sums: integer and half-integer sizes add exactly in any order
    assert np.allclose(got.bytes, want.bytes, rtol=1e-12, atol=0)
    assert np.array_equal(got.streams, want.streams)
    assert np.allclose(got.flow_hops, want.flow_hops, rtol=1e-12, atol=0)
    if want.class_hops is not None:
        assert np.allclose(got.class_hops, want.class_hops, rtol=1e-12, atol=0)
    assert groups.count.sum() == len(src)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)),
                                    max_size=300))
def test_flows_at_each_end_are_a_stable_sort_of_the_ends(n_ends, pairs):
    """``end_flow_csr``'s rows are the flows of a stable sort of (sources, then
    destinations): a rank's flows out in order, then its flows in, a loop twice; every flow
    appears once per end."""
    from rankmap.kernels.flows import end_flow_csr

    src = np.array([a % n_ends for a, _ in pairs], dtype=np.int64)
    dst = np.array([b % n_ends for _, b in pairs], dtype=np.int64)
    indptr, flows = end_flow_csr(src, dst, n_ends)
    ends = np.concatenate([src, dst])
    order = np.argsort(ends, kind="stable")
    assert np.array_equal(indptr, np.searchsorted(ends[order], np.arange(n_ends + 1)))
    assert np.array_equal(flows, np.concatenate([np.arange(len(src))] * 2)[order])
    for x in range(n_ends):
        row = flows[indptr[x]:indptr[x + 1]]
        assert sorted(row.tolist()) == sorted(np.flatnonzero(src == x).tolist()
                                              + np.flatnonzero(dst == x).tolist())
