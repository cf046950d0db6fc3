"""``link_swaps`` aims its proposals: only flows the router really sends over the busiest link
propose a move, and only to positions that take that flow off the link."""

import numpy as np
from hypothesis import given, settings, strategies as st

from rankmap.allocation import whole_machine
from rankmap.evaluation import Evaluator
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping
from rankmap.patterns import parse_pattern
from rankmap.routing import router_for


def _random_flows(case, seed, n):
    """(machine, router, generator, sources, destinations) of ``n`` random node pairs on the
    machine and routing of ``case``."""
    spec, routing = case
    machine = parse_machine(spec)
    rng = np.random.default_rng(seed)
    src = rng.integers(0, machine.n_nodes, n)
    return machine, router_for(machine, routing), rng, src, rng.integers(0, machine.n_nodes, n)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([(spec, r) for spec in ("torus:4x3x5", "mesh:4x4", "torus:6x2:wrap=x",
                                               "torus:8") for r in ("dor", "adaptive")]
                       + [("dragonfly:groups=4,rows=2,cols=2,nodes=2", "minimal"),
                          ("dragonfly:groups=4,rows=2,cols=2,nodes=2", "valiant"),
                          ("fattree:k=4:levels=2", "dmodk"), ("fattree:k=4:levels=2", "ecmp")]),
       st.integers(0, 2**31 - 1))
def test_crosses_matches_the_routers_paths(case, seed):
    machine, router, rng, src, dst = _random_flows(case, seed, 30)
    paths = router.paths(src, dst).tocsc()
    for link in rng.integers(0, machine.n_links, 5):
        col = paths[:, int(link)]
        expect = np.zeros(len(src), dtype=bool)
        expect[col.indices[col.data > 0]] = True
        assert np.array_equal(router.crosses(src, dst, int(link)), expect)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([(spec, r) for spec in ("torus:4x3x5", "mesh:4x4", "torus:6x2:wrap=x",
                                               "torus:8", "torus:3x2x2x3") for r in ("dor",)]
                       + [("torus:4x3x5", "adaptive"),
                          ("dragonfly:groups=4,rows=2,cols=2,nodes=2", "minimal"),
                          ("fattree:k=4:levels=2", "dmodk"), ("fattree:k=3:levels=3", "dmodk"),
                          ("fattree:k=2:levels=4:taper=2", "dmodk"),
                          ("fattree:k=4:levels=2", "ecmp")]),
       st.integers(0, 2**31 - 1))
def test_every_flow_over_a_link_starts_or_ends_where_the_router_says(case, seed):
    """``Router.ends_through``: each flow with bytes on the link starts at one of the nodes
    (or ends at one); under dimension order the set is the smaller side, and under d-mod-k
    a down link's flows all go to one host."""
    machine, router, rng, src, dst = _random_flows(case, seed, 200)
    for link in rng.integers(0, machine.n_links, 6):
        ends = router.ends_through(int(link))
        if case[1] not in ("dor", "dmodk"):
            assert ends is None
            continue
        if case[1] == "dmodk":
            side, nodes = ends
            assert np.all(np.diff(nodes) > 0) and len(nodes) <= machine.n_nodes
            n = machine.n_nodes
            a = np.repeat(np.arange(n), n)
            b = np.tile(np.arange(n), n)
            hit = router.crosses(a, b, int(link))
            assert np.isin((a if side == "src" else b)[hit], nodes).all()
            k, levels = machine.k, machine.levels
            hosts, per_level = k ** levels, k ** (levels - 1) * k
            if hosts <= link < 2 * hosts or link >= 2 * hosts + (levels - 1) * per_level:
                # a host's down link, or a switch link on the way down: one destination
                assert side == "dst" and len(nodes) == 1
                assert np.array_equal(np.unique(b[hit]), nodes)
            continue
        side, nodes = ends
        assert np.all(np.diff(nodes) > 0) and len(nodes) <= machine.n_nodes
        over = router.crosses(src, dst, int(link))
        assert np.isin((src if side == "src" else dst)[over], nodes).all()
        # all node pairs: the flows over the link start (end) in the set, and the set is
        # the smaller of the two a dimension-order walk allows
        n = machine.n_nodes
        a = np.repeat(np.arange(n), n)
        b = np.tile(np.arange(n), n)
        hit = router.crosses(a, b, int(link))
        assert np.isin((a if side == "src" else b)[hit], nodes).all()
        k = int(machine.link_dim[link])
        assert len(nodes) == min(np.prod(machine.dims[:k + 1]), np.prod(machine.dims[k:]))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["torus:4x4x4", "mesh:5x3x2", "torus:6x4:wrap=x", "torus:3x2x2x3"]),
       st.integers(0, 2**31 - 1), st.integers(1, 3))
def test_flows_over_a_link_from_the_units_on_its_ends_are_the_scanned_ones(spec, seed, slots):
    """``flows_over_link`` gives the same flows, in the same order, whether it scans every
    flow or looks only at the units on the nodes the router names."""
    from rankmap.kernels.flows import end_flow_csr
    from rankmap.mappers.swap_refine import flows_over_link

    machine = parse_machine(spec)
    router = router_for(machine, "dor")
    rng = np.random.default_rng(seed)
    n_units = machine.n_nodes * slots
    at = rng.permutation(n_units) // slots                   # units on every node
    alloc = rng.permutation(machine.n_nodes)                 # positions in any node order
    s = rng.integers(0, n_units, 300)
    d = rng.integers(0, n_units, 300)
    h = machine.hop_distance(alloc[at[s]], alloc[at[d]])
    csr = end_flow_csr(s, d, n_units)
    for link in range(machine.n_links):
        scanned = flows_over_link(router, s, d, at, h, alloc, link)
        by_unit = flows_over_link(router, s, d, at, h, alloc, link, unit_flows=csr)
        assert np.array_equal(scanned, by_unit)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([("fattree:k=4:levels=3", "dmodk"), ("fattree:k=4:levels=3", "ecmp"),
                        ("fattree:k=3:levels=2:taper=2", "dmodk"), ("torus:4x3x2", "dor"),
                        ("torus:4x4", "adaptive")]),
       st.integers(0, 2**31 - 1))
def test_flows_over_a_link_are_the_flows_routed_over_it(case, seed):
    """Every link, a fat tree's switch links too (their ends are not nodes, so no hop
    distance tells which flows can cross them): the flows found are exactly those whose
    route puts bytes on the link, in order."""
    from rankmap.mappers.swap_refine import flows_over_link

    spec, routing = case
    machine = parse_machine(spec)
    router = router_for(machine, routing)
    rng = np.random.default_rng(seed)
    at = rng.permutation(machine.n_nodes)                     # one unit a node
    alloc = np.arange(machine.n_nodes)
    s = rng.integers(0, machine.n_nodes, 60)
    d = rng.integers(0, machine.n_nodes, 60)
    h = machine.hop_distance(alloc[at[s]], alloc[at[d]])
    paths = router.paths(alloc[at[s]], alloc[at[d]]).tocsc()
    for link in range(machine.n_links):
        col = paths[:, link]
        routed = np.sort(col.indices[col.data > 0])
        np.testing.assert_array_equal(flows_over_link(router, s, d, at, h, alloc, link), routed)


def test_graph_relieves_the_busiest_link_every_rank_order_shares():
    # 80x50 box stencil on a 16^3 torus: every rank order's busiest link carries 13 MiB
    # (TXYZ: 407 links at 13 MiB); aimed link swaps take the graph mapper to 11 MiB, below
    # them, where unaimed proposals left it at 13 MiB
    m = parse_machine("torus:16x16x16")
    a = whole_machine(m)
    p = parse_pattern("stencil:80x50:box", default_ranks=a.n_cores)
    ev = Evaluator(m, a, p)
    txyz = ev.evaluate(build_mapping("TXYZ", p, m, a, 0)).metrics
    graph = ev.evaluate(build_mapping("graph", p, m, a, 0)).metrics
    assert txyz["max_link_bytes"] == 13 * 2**20
    assert graph["max_link_bytes"] <= 11 * 2**20
    assert graph["predicted_time_s"] < txyz["predicted_time_s"]
    assert graph["hop_bytes"] < 0.6 * txyz["hop_bytes"]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["torus:4x3x5", "mesh:4x4:cores=2", "torus:6x2:wrap=x:cores=3",
                        "torus:8"]), st.integers(0, 2**31 - 1))
def test_compiled_side_gain_is_the_vectorised_one_bit_for_bit(spec, seed):
    """On tori and meshes side_gain runs a compiled loop; its sums are the vectorised
    version's, bit for bit (same partners, same order), with float byte weights."""
    from rankmap.mappers.swap_refine import (UnitPlacement, side_gain, side_gain_vectorised,
                                             symmetric_bytes)
    m = parse_machine(spec)
    a = whole_machine(m)
    rng = np.random.default_rng(seed)
    n = a.n_cores
    flows = int(rng.integers(1, 4 * n))
    src, dst = rng.integers(0, n, flows), rng.integers(0, n, flows)
    w = symmetric_bytes([(src, dst, rng.random(flows) * 1e6)], n)
    place = UnitPlacement(rng.permutation(a.n_cores), a.n_cores, a.cores_per_node, a)
    k = 25
    units = rng.integers(-1, n, k)
    other = rng.integers(-1, n, k)
    p_from, p_to = rng.integers(0, a.n_cores, k), rng.integers(0, a.n_cores, k)
    got = side_gain(w, units, other, p_from, p_to, place, m)
    want = side_gain_vectorised(w, units, other, p_from, p_to, place, m)
    assert np.array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["torus:4x3x5", "mesh:4x4", "torus:6x2:wrap=x", "torus:8",
                        "torus:5x5x5:cores=2"]),
       st.integers(0, 2**31 - 1), st.integers(1, 3))
def test_dor_link_sums_are_the_generic_sums_bit_for_bit(spec, seed, n_parts):
    """The compiled DOR walk gives the generic (path arrays + bincount) sums exactly, with
    float weights of both signs, flows inside a node and several parts."""
    _compare_link_sums(spec, "dor", seed, n_parts, 40)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([("torus:4x3x5", "dor"), ("torus:4x3x5", "adaptive"),
                        ("dragonfly:groups=4,rows=2,cols=2,nodes=2", "minimal"),
                        ("dragonfly:groups=4,rows=2,cols=2,nodes=2", "valiant"),
                        ("fattree:k=4:levels=2", "ecmp")]),
       st.integers(0, 2**31 - 1))
def test_link_sums_count_the_route_entries_of_every_flow(case, seed):
    """The work of summing a route is its hop-link entries: a single-path route's hops, and
    far more than its hops for a route split over parallel links."""
    machine, router, rng, src, dst = _random_flows(case, seed, 25)
    routing = case[1]
    part = np.zeros(25, dtype=np.int64)
    _keys, _sums, hops, entries = router.link_sums_by_part(src, dst, rng.normal(size=25),
                                                           part, 1)
    paths = router.paths(src, dst).tocsr()
    hop = machine.hop_links
    want = np.array([np.count_nonzero(paths[f].data[(paths[f].data > 0)]
                                      if hop is None else
                                      hop[paths[f].indices[paths[f].data > 0]])
                     for f in range(25)])
    assert entries.dtype == np.int64 and np.array_equal(entries, want)
    assert np.all(entries >= np.floor(hops + 1e-9))
    if routing == "dor":
        assert np.array_equal(entries, hops)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["dragonfly:groups=4,rows=2,cols=2,nodes=2",
                        "dragonfly:groups=3,rows=2,cols=3,nodes=2,gports=2,global=3",
                        "dragonfly:groups=5,rows=2,cols=2,nodes=4,cores=4",
                        "dragonfly:groups=2,rows=1,cols=4,nodes=1",
                        "dragonfly:groups=3,rows=2,cols=4,nodes=2,gports=4,global=8"]),
       st.integers(0, 2**31 - 1), st.integers(1, 3))
def test_minimal_dragonfly_link_sums_are_the_generic_sums_bit_for_bit(spec, seed, n_parts):
    """The compiled minimal-route walk gives the generic (path arrays + bincount) sums,
    hops and entries exactly, with float weights of both signs, flows inside a node or a
    router and several parts, however many parallel global links it is used for."""
    import rankmap.routing.dragonfly as rd

    rd.MINIMAL_WALK_MAX_L, keep = 10**6, rd.MINIMAL_WALK_MAX_L
    try:
        _compare_link_sums(spec, "minimal", seed, n_parts, 60)
    finally:
        rd.MINIMAL_WALK_MAX_L = keep


def _compare_link_sums(spec, routing, seed, n_parts, max_flows):
    """A router's own link_sums_by_part against the generic one (path arrays + bincount) on
    random flows, bit for bit."""
    from rankmap.routing.base import Router

    machine = parse_machine(spec)
    router = router_for(machine, routing)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, max_flows))
    src = rng.integers(0, machine.n_nodes, n)
    dst = np.where(rng.random(n) < 0.2, src, rng.integers(0, machine.n_nodes, n))
    weight = rng.normal(0, 1e6, n) * rng.choice([1.0, 1 / 3.0, 7.125], n)
    part = np.sort(rng.integers(0, n_parts, n))
    got = router.link_sums_by_part(src, dst, weight, part, n_parts)
    want = Router._link_sums_by_part(router, src, dst, weight, part, n_parts)   # generic
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)


def _numpy_link_sums(router, src, dst, weight, part, n_parts):
    """The sums of Router.link_sums_by_part, array at a time: path rows, bincount per key."""
    p_ptr, p_links, p_frac = router.path_arrays(src, dst, weight)
    rows = np.repeat(np.arange(len(src)), np.diff(p_ptr))
    n_links, hop = router.machine.n_links, router.machine.hop_links
    hops = np.bincount(rows, p_frac if hop is None else p_frac * hop[p_links],
                       minlength=len(src)).astype(np.float64)
    entries = np.bincount(rows if hop is None else rows[hop[p_links]],
                          minlength=len(src)).astype(np.int64)
    flat = part[rows] * n_links + p_links
    keys, inv = np.unique(flat, return_inverse=True)
    sums = np.bincount(inv.ravel(), p_frac * weight[rows], minlength=len(keys))
    return keys.astype(np.int64), sums.astype(np.float64), hops, entries


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([("torus:4x3x5", "adaptive"), ("mesh:4x4", "adaptive"),
                        ("dragonfly:groups=4,rows=2,cols=2,nodes=2", "valiant"),
                        ("dragonfly:groups=3,rows=2,cols=4,nodes=2,gports=4,global=8",
                         "minimal"),
                        ("fattree:k=4:levels=2", "ecmp"), ("fattree:k=4:levels=3", "dmodk")]),
       st.integers(0, 2**31 - 1), st.integers(1, 3))
def test_link_sums_are_the_array_sums_bit_for_bit(case, seed, n_parts):
    """The compiled per-row sums of any router's paths equal the array-at-a-time sums (path
    rows, numpy bincount per key) exactly: keys, sums, hops and entries."""
    machine, router, rng, src, dst = _random_flows(case, seed, int(seed % 50) + 1)
    n = len(src)
    dst = np.where(rng.random(n) < 0.2, src, dst)
    weight = rng.normal(0, 1e6, n) * rng.choice([1.0, 1 / 3.0, 7.125], n)
    part = np.sort(rng.integers(0, n_parts, n))
    from rankmap.routing.base import Router

    got = Router._link_sums_by_part(router, src, dst, weight, part, n_parts)   # the generic
    want = _numpy_link_sums(router, src, dst, weight, part, n_parts)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["torus:4x3x5", "mesh:4x4:cores=2", "torus:6x2:wrap=x:cores=3",
                        "torus:8", "mesh:3x3x3"]), st.integers(0, 2**31 - 1), st.booleans())
def test_side_gains_from_position_coordinates_are_the_node_ones_bit_for_bit(spec, seed,
                                                                          scattered):
    """kernels.torus.side_gain_coords (allocation positions and their coordinates, as the
    compiled link swaps use it) sums what side_gain_grid sums from node ids, bit for bit,
    on whole and scattered allocations, with float byte weights."""
    from rankmap.allocation import parse_allocation
    from rankmap.kernels import torus as tk
    from rankmap.mappers.swap_refine import symmetric_bytes
    m = parse_machine(spec)
    a = whole_machine(m)
    if scattered and a.n_nodes > 3:
        a = parse_allocation(f"random:{a.n_nodes - 2}:seed={seed % 97}", m)
    rng = np.random.default_rng(seed)
    n = a.n_nodes                                   # units on allocation nodes
    flows = int(rng.integers(1, 4 * n))
    src, dst = rng.integers(0, n, flows), rng.integers(0, n, flows)
    w = symmetric_bytes([(src, dst, rng.random(flows) * 1e6)], n)
    at = rng.permutation(n).astype(np.int64)        # allocation node of every unit
    k = 25
    units, other = rng.integers(-1, n, k), rng.integers(-1, n, k)
    p_from, p_to = rng.integers(0, n, k), rng.integers(0, n, k)
    nodes = np.asarray(a.nodes, dtype=np.int64)
    dims, strides = m.dims.astype(np.int64), m.strides.astype(np.int64)
    coords = tk.position_coords(nodes, dims, strides)
    assert np.array_equal(coords, m.coords(nodes))
    got = tk.side_gain_coords(w.indptr, w.indices, w.data, units, other, p_from, p_to, at,
                              coords, dims, m.wrap)
    want = tk.side_gain_grid(w.indptr, w.indices, w.data, units, other, nodes[p_from],
                             nodes[p_to], nodes[at], dims, strides, m.wrap)
    assert np.array_equal(got, want)
    pa, pb = rng.integers(0, n, 2)
    assert tk.coords_hop(coords, pa, pb, dims, m.wrap) == tk.node_hop_distance(
        nodes[pa], nodes[pb], dims, strides, m.wrap)
