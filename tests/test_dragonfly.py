"""Dragonfly machine: layout, hand-computed minimal/Valiant/UGAL routes, conservation,
shortest-path hop distance, path matrix agreement, per-class hop metrics, CLI."""

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import shortest_path
import scipy.sparse as sp

from rankmap.allocation import parse_allocation
from rankmap.cli import main
from rankmap.errors import RankmapError
from rankmap.selection import compare
from rankmap.machines import parse_machine
from rankmap.patterns import parse_pattern
from rankmap.routing import router_for
from rankmap.routing.ugal import ugal_valiant_pairs

TINY = "dragonfly:groups=4,rows=2,cols=3,nodes=2,cores=4"
# 3 groups of 2x2 routers, one node per router, one global link per group pair:
# global links (by the spread layout): g0->g1 router 0->5, g0->g2 1->8, g1->g2 4->9.
HAND = "dragonfly:groups=3,rows=2,cols=2,nodes=1,cores=1,global=1"


def loads_by_link(m, loads):
    """{(class, src_router, dst_router): bytes} of the loaded links (router links only)."""
    cols = m.link_columns()
    out = {}
    for i in np.nonzero(loads.bytes)[0]:
        if cols["class"][i] in ("row", "col", "global"):
            out[(str(cols["class"][i]), int(cols["src_router"][i]),
                 int(cols["dst_router"][i]))] = float(loads.bytes[i])
    return out


def test_global_link_layout_hand_checked():
    m = parse_machine(HAND)
    pairs = set(zip(m.g_src.tolist(), m.g_dst.tolist()))
    assert {(0, 5), (5, 0), (1, 8), (8, 1), (4, 9), (9, 4)} == pairs


def test_absolute_layout_puts_the_link_to_group_p_on_router_p():
    # 3 groups of 1x4 routers: group g's link to group p leaves from router p of g
    m = parse_machine("dragonfly:groups=3,rows=1,cols=4,nodes=1,global=1,layout=absolute")
    pairs = set(zip(m.g_src.tolist(), m.g_dst.tolist()))
    assert pairs == {(1, 4), (4, 1), (2, 8), (8, 2), (6, 9), (9, 6)}
    # two links per pair: the second one on router (G + p) mod 4
    m2 = parse_machine("dragonfly:groups=3,rows=1,cols=4,nodes=1,global=2,gports=2,"
                       "layout=absolute")
    assert (0 * 4 + (3 + 1) % 4, 1 * 4 + (3 + 0) % 4) in set(zip(m2.g_src.tolist(),
                                                                  m2.g_dst.tolist()))


def test_minimal_route_hand_computed():
    m = parse_machine(HAND)
    # node 3 = router 3 (group 0, row 1, col 1) -> node 6 = router 6 (group 1, row 1, col 0)
    loads = router_for(m, "minimal").loads(np.array([3]), np.array([6]), np.array([8.0]))
    assert loads_by_link(m, loads) == {
        ("row", 3, 2): 4.0, ("col", 2, 0): 4.0,      # row first to the exit router 0
        ("col", 3, 1): 4.0, ("row", 1, 0): 4.0,      # column first
        ("global", 0, 5): 8.0,
        ("row", 5, 4): 4.0, ("col", 4, 6): 4.0,      # entry router 5 -> 6, both orders
        ("col", 5, 7): 4.0, ("row", 7, 6): 4.0}
    assert loads.flow_hops[0] == pytest.approx(5.0)
    assert m.hop_distance(np.array([3]), np.array([6]))[0] == 5
    # the injection and ejection links carry the flow too
    cls = m.link_columns()["class"]
    assert loads.bytes[(cls == "inject")].sum() == 8.0
    assert loads.bytes[(cls == "eject")].sum() == 8.0


def test_valiant_route_hand_computed():
    m = parse_machine(HAND)
    loads = router_for(m, "valiant").loads(np.array([3]), np.array([6]), np.array([8.0]))
    # via group 2: 3 -col-> 1 -global-> 8 -row-> 9 -global-> 4 -col-> 6
    assert loads_by_link(m, loads) == {
        ("col", 3, 1): 8.0, ("global", 1, 8): 8.0, ("row", 8, 9): 8.0,
        ("global", 9, 4): 8.0, ("col", 4, 6): 8.0}
    assert loads.flow_hops[0] == pytest.approx(5.0)


def test_same_group_and_same_router():
    m = parse_machine(TINY)
    # nodes 0 and 1 share router 0: only injection + ejection, 0 hops
    loads = router_for(m, "minimal").loads(np.array([0, 0]), np.array([1, 0]), np.array([5.0, 7.0]))
    assert loads.flow_hops.tolist() == [0.0, 0.0]
    assert loads.bytes.sum() == 10.0
    # router 0 (row 0, col 0) -> router 4 (row 1, col 1): two orders, half each
    loads = router_for(m, "valiant").loads(np.array([0]), np.array([8]), np.array([2.0]))
    assert loads_by_link(m, loads) == {("row", 0, 1): 1.0, ("col", 1, 4): 1.0,
                                       ("col", 0, 3): 1.0, ("row", 3, 4): 1.0}


def test_ugal_rule():
    m = parse_machine(HAND)
    # all traffic from group 0 to group 1, 3 groups: gone Valiant it would load both global
    # links of its one intermediate group as much as it loads the minimal one, with twice the
    # hops: it stays minimal (a lone flow on an idle network does)
    src, dst = np.array([0, 1, 2, 3]), np.array([4, 5, 6, 7])
    assert not ugal_valiant_pairs(m, src, dst, np.ones(4)).any()
    np.testing.assert_allclose(router_for(m, "ugal").loads(src, dst, np.ones(4)).bytes,
                               router_for(m, "minimal").loads(src, dst, np.ones(4)).bytes)
    # with 5 groups it spreads over 3 intermediate groups, a third on each link: Valiant
    m5 = parse_machine("dragonfly:groups=5,rows=2,cols=2,nodes=1,cores=1,global=1")
    assert ugal_valiant_pairs(m5, src, dst, np.ones(4))[0, 1]
    np.testing.assert_allclose(router_for(m5, "ugal").loads(src, dst, np.ones(4)).bytes,
                               router_for(m5, "valiant").loads(src, dst, np.ones(4)).bytes)
    # uniform all-to-all between groups: every global link equally loaded, stay minimal
    a, b = np.meshgrid(np.arange(12), np.arange(12))
    keep = (a // 4) != (b // 4)
    src, dst = a[keep], b[keep]
    assert not ugal_valiant_pairs(m, src, dst, np.ones(len(src))).any()
    np.testing.assert_allclose(router_for(m, "ugal").loads(src, dst, np.ones(len(src))).bytes,
                               router_for(m, "minimal").loads(src, dst, np.ones(len(src))).bytes)


@pytest.mark.parametrize("routing", ["minimal", "valiant", "ugal"])
@pytest.mark.parametrize("spec", [TINY, "dragonfly:groups=5,rows=2,cols=2,nodes=1,cores=1,"
                                        "gports=2,layout=consecutive"])
def test_conservation_and_paths_agree(spec, routing):
    m = parse_machine(spec)
    rng = np.random.default_rng(7)
    src = rng.integers(0, m.n_nodes, 300)
    dst = rng.integers(0, m.n_nodes, 300)
    nbytes = rng.integers(1, 1000, 300).astype(float)
    loads = router_for(m, routing).loads(src, dst, nbytes)
    cls = m.link_columns()["class"]
    off = src != dst
    # every off-node byte is injected and ejected exactly once
    assert loads.bytes[cls == "inject"].sum() == pytest.approx(nbytes[off].sum())
    assert loads.bytes[cls == "eject"].sum() == pytest.approx(nbytes[off].sum())
    # bytes on router links = sum of bytes x hops
    net = np.isin(cls, ["row", "col", "global"])
    assert loads.bytes[net].sum() == pytest.approx(float(nbytes @ loads.flow_hops))
    per_group = m.R * m.C * m.N
    inter = (src // per_group) != (dst // per_group)
    glob = loads.bytes[cls == "global"].sum()
    if routing == "minimal":
        assert glob == pytest.approx(nbytes[inter].sum())
    elif routing == "valiant":
        assert glob == pytest.approx(2 * nbytes[inter].sum())
    else:
        assert nbytes[inter].sum() - 1e-6 <= glob <= 2 * nbytes[inter].sum() + 1e-6
    P = router_for(m, routing).paths(src, dst, nbytes)
    np.testing.assert_allclose(P.T @ nbytes, loads.bytes)
    assert ((P != 0).sum(axis=0).A1 == loads.streams).all()
    np.testing.assert_allclose(np.asarray(P.sum(axis=1)).ravel()[off],
                               loads.flow_hops[off] + 2)
    assert P[np.nonzero(~off)[0]].nnz == 0



@pytest.mark.parametrize("routing", ["minimal", "valiant", "ugal"])
@pytest.mark.parametrize("spec", [TINY, "dragonfly:groups=5,rows=2,cols=2,nodes=1,cores=1,"
                                        "gports=2,layout=consecutive"])
def test_few_flows_route_to_the_same_bits_as_many(spec, routing, monkeypatch):
    """paths() of a few flows (their stage rows from the router's cache, half of them seen
    before) equals, bit for bit and entry for entry, the routing of many flows (every key
    routed afresh)."""
    import rankmap.routing.dragonfly as rd
    m = parse_machine(spec)
    rng = np.random.default_rng(11)
    src = rng.integers(0, m.n_nodes, 200)
    dst = rng.integers(0, m.n_nodes, 200)
    nbytes = rng.integers(1, 1000, 200).astype(float)
    router = router_for(m, routing)
    router.paths(src[:100], dst[:100], nbytes[:100])
    per_flow = router.paths(src, dst, nbytes)
    monkeypatch.setattr(rd, "CACHED_FLOWS_MAX", 0)
    keyed = router.paths(src, dst, nbytes)
    assert per_flow.indices.dtype == keyed.indices.dtype
    assert (per_flow.indptr == keyed.indptr).all() and (per_flow.indices == keyed.indices).all()
    assert (per_flow.data == keyed.data).all()

@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(0, 400), st.sampled_from(["minimal", "valiant"]))
def test_cached_rows_are_the_fresh_rows_in_any_call_order(seed, room, routing):
    """A router's stage-row cache (any fill order, full or not) never changes a route: every
    call's arrays equal, bit for bit, those of a router routing every key afresh."""
    import rankmap.routing.dragonfly as rd
    m = parse_machine("dragonfly:groups=5,rows=2,cols=2,nodes=1,cores=1,gports=2,"
                      "layout=consecutive")
    rng = np.random.default_rng(seed)
    cached, fresh = router_for(m, routing), router_for(m, routing)
    old = rd.ROW_CACHE_ENTRIES
    try:
        rd.ROW_CACHE_ENTRIES = room
        for _ in range(4):
            n = int(rng.integers(1, 60))
            src = rng.integers(0, m.n_nodes, n)
            dst = rng.integers(0, m.n_nodes, n)
            got = cached.path_arrays(src, dst)
            rd.CACHED_FLOWS_MAX, keep = 0, rd.CACHED_FLOWS_MAX
            try:
                want = fresh.path_arrays(src, dst)
            finally:
                rd.CACHED_FLOWS_MAX = keep
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and np.array_equal(g, w)
        assert cached._rows_size <= room
    finally:
        rd.ROW_CACHE_ENTRIES = old


def test_hop_distance_is_shortest_router_path():
    m = parse_machine("dragonfly:groups=4,rows=2,cols=3,nodes=1,cores=1,global=1")
    cols = m.link_columns()
    net = np.isin(cols["class"], ["row", "col", "global"])
    g = sp.csr_matrix((np.ones(net.sum()), (cols["src_router"][net], cols["dst_router"][net])),
                      shape=(m.n_routers, m.n_routers))
    dist = shortest_path(g, unweighted=True)
    a, b = np.meshgrid(np.arange(m.n_nodes), np.arange(m.n_nodes), indexing="ij")
    np.testing.assert_array_equal(m.hop_distance(a, b), dist.astype(int))
    # minimal routes never take more than 2 + 1 + 2 router hops
    assert dist.max() <= 5


def test_coords_geometry_and_names():
    m = parse_machine(TINY)
    nodes = np.arange(m.n_nodes)
    c = m.coords(nodes)
    np.testing.assert_array_equal(m.node_ids(c), nodes)
    assert c[m.node_ids([3, 1, 2, 1])].tolist() == [3, 1, 2, 1]
    np.testing.assert_array_equal(m.geometry(nodes), c[:, [2, 1, 0]])
    with pytest.raises(RankmapError, match="outside the dragonfly"):
        m.node_ids([[4, 0, 0, 0]])
    x = parse_machine("xc:groups=26")
    assert x.n_nodes == 26 * 384 and x.cores_per_node == 32
    assert x.node_name(0) == "c0-0c0s0n0"
    assert x.describe()["global_links_per_group_pair"] == 96 * 5 // 25
    assert x.describe()["link_bandwidth_Bps"]["global"] == 9.4e9


def test_link_bandwidths_by_class():
    m = parse_machine(TINY + ",bw_global=1GB/s")
    cols = m.link_columns()
    bw = m.link_bandwidth
    assert set(bw[cols["class"] == "global"]) == {1e9}
    assert set(bw[cols["class"] == "row"]) == {5.25e9}
    assert set(bw[cols["class"] == "col"]) == {15.75e9}
    assert set(bw[cols["class"] == "inject"]) == {10e9}
    # 2 links per node + row/col all-to-all + G(G-1)L global
    n = m.n_nodes
    assert m.n_links == 2 * n + m.n_routers * (3 - 1) + m.n_routers * (2 - 1) + 4 * 3 * m.L


@pytest.mark.parametrize("bad,msg", [
    ("dragonfly:groups=0", "groups .0."),
    ("dragonfly:rows=2", "give groups"),
    ("dragonfly:groups=30,rows=1,cols=2", "cannot reach 29 other groups"),
    ("dragonfly:groups=3,rows=1,cols=2,global=2", "need 4 ports"),
    ("dragonfly:groups=3,layout=zigzag", "layout"),
    ("dragonfly:groups=5,rows=1,cols=4,global=1,layout=absolute", "raise gports"),
    ("dragonfly:groups=3,colour=red", "colour"),
    ("xc:groups=2,cabinet_cols=5", "even"),
])
def test_bad_specs(bad, msg):
    with pytest.raises(RankmapError, match=msg):
        parse_machine(bad)


def test_hop_counts_by_class_in_json(capsys):
    assert main(["compare", "--machine", TINY, "--pattern", "minimd", "--mappings",
                 "inorder,random", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for cand in doc["candidates"]:
        for ph in cand["phases"]:
            m = ph["metrics"]
            assert m["avg_row_hops"] + m["avg_col_hops"] + m["avg_global_hops"] == \
                pytest.approx(m["avg_hops"])
            assert m["hop_bytes_row"] + m["hop_bytes_col"] + m["hop_bytes_global"] == \
                pytest.approx(m["hop_bytes"])
    assert doc["machine"]["kind"] == "dragonfly"


def test_links_out_has_classes(tmp_path, capsys):
    out = tmp_path / "links.csv"
    assert main(["evaluate", "--machine", TINY, "--pattern", "stencil:4x4x2", "--mapping",
                 "inorder", "--routing", "valiant", "--links-out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "class,src_router,dst_router,node,src,dst,lane,bytes,streams"
    m = parse_machine(TINY)
    assert len(lines) == m.n_links + 1
    assert {ln.split(",")[0] for ln in lines[1:]} == {"inject", "eject", "row", "col", "global"}


def test_cli_bad_routing(capsys):
    assert main(["compare", "--machine", TINY, "--pattern", "stencil:4x4", "--routing",
                 "dor"]) == 2
    assert "unknown routing 'dor'" in capsys.readouterr().err


@pytest.mark.parametrize("mapper", ["inorder", "random", "rcb", "greedy", "graph"])
def test_mappers_work_on_a_dragonfly(mapper):
    m = parse_machine(TINY)
    alloc = parse_allocation("random:10:seed=2", m)
    pat = parse_pattern("minighost", default_ranks=alloc.n_cores)
    comp = compare(m, alloc, pat, [mapper])
    assert comp.best.name == mapper
    assert comp.best.metrics["flows"] == pat.phases[0].n_flows


def test_rcb_beats_random_on_a_whole_group():
    """RCB with group as z keeps a stencil inside groups; random spreads it over all."""
    m = parse_machine("dragonfly:groups=4,rows=2,cols=4,nodes=1,cores=1")
    alloc = parse_allocation(None, m)
    pat = parse_pattern("stencil:2x4x4")
    comp = compare(m, alloc, pat, ["rcb", "random"])
    by = {c.name: c for c in comp.candidates}
    hops = [p["metrics"]["avg_global_hops"] for p in by["rcb"].to_json()["phases"]]
    rhops = [p["metrics"]["avg_global_hops"] for p in by["random"].to_json()["phases"]]
    assert hops[0] < rhops[0]


def test_ugal_weighs_the_valiant_routes_second_link_in_its_direction():
    """A Valiant route s -> i -> d crosses the global links s->i and i->d (not d->i): UGAL
    compares T[s, d] with 2 x (mean_i max(T[s, i], T[i, d]) + T[s, d] / (G - 2)). Hand-built
    case on 5 groups of one router with one node: group 0 sends 1 MiB to group 1, and group 1
    sends 1 MiB to each of groups 2, 3 and 4. The links 0->i and i->1 are idle, so the
    Valiant routes of 0 -> 1 carry only its own third: 2/3 MiB < 1 MiB, Valiant; reading the
    reverse links 1->i (busy) would have made it 2 x 4/3 MiB and kept it minimal."""
    m = parse_machine("dragonfly:groups=5,rows=1,cols=1,nodes=1,cores=1,gports=4")
    src, dst = np.array([0, 1, 1, 1]), np.array([1, 2, 3, 4])
    nbytes = np.full(4, 1024.0 ** 2)
    pairs = ugal_valiant_pairs(m, src, dst, nbytes)
    assert pairs[0, 1]
    # 1 -> 2: its Valiant routes via 0 (1->0 idle, 0->2 idle), via 3 and via 4 (1->3, 1->4
    # busy) average 2/3 MiB, plus its own third: 1 MiB is not more than twice that: minimal
    assert not pairs[1, 2] and not pairs[1, 3] and not pairs[1, 4]
    ugal = router_for(m, "ugal").loads(src, dst, nbytes)
    minimal = router_for(m, "minimal").loads(src, dst, nbytes)
    assert ugal.flow_hops[0] > minimal.flow_hops[0]        # 0 -> 1 took a detour
    assert ugal.flow_hops[1:].tolist() == minimal.flow_hops[1:].tolist()


@pytest.mark.parametrize("spec", ["dragonfly:groups=5,rows=2,cols=3,nodes=2",
                                  "dragonfly:groups=4,rows=1,cols=4,nodes=1,global=3,gports=3",
                                  "xc:groups=3"])
def test_router_hops_equal_the_shortest_of_the_parallel_global_links(spec):
    """min_router_hops (rows, columns of the links' ends computed once; the search over the
    parallel global links stops at 1 hop) gives, for every router pair, the fewest row, column
    and global links over every parallel global link, as written out here."""
    from rankmap.kernels.dragonfly import min_router_hops
    from rankmap.machines import parse_machine
    m = parse_machine(spec)
    nr = m.R * m.C
    rr = np.arange(m.n_routers, dtype=np.int64)
    uu, vv = (a.ravel() for a in np.meshgrid(rr, rr, indexing="ij"))
    got = min_router_hops(uu, vv, m.G, m.R, m.C, m.L, m.g_src, m.g_dst)

    def local(x, y):
        return int((x % nr) // m.C != (y % nr) // m.C) + int(x % m.C != y % m.C)

    for u, v, h in zip(uu.tolist(), vv.tolist(), got.tolist()):
        gu, gv = u // nr, v // nr
        if gu == gv:
            assert h == local(u, v)
            continue
        ends = [(int(m.g_src[k]), int(m.g_dst[k])) for k in range(len(m.g_src))
                if int(m.g_src[k]) // nr == gu and int(m.g_dst[k]) // nr == gv]
        assert len(ends) == m.L and h == min(1 + local(u, e) + local(b, v) for e, b in ends)


def test_an_unknown_name_on_a_dragonfly_lists_no_rank_orders(capsys):
    """The list of names said 'rank orders (T plus the machine's letters, e.g. TXYZ)' on a
    dragonfly, which offers none; nor does it offer fold or cubes, which need a box of
    nodes."""
    from rankmap.cli import main
    assert main(["compare", "-m", "dragonfly:groups=2,rows=1,cols=2", "-p", "stencil:2x2",
                 "--mappings", "TXYZ"]) == 2
    err = capsys.readouterr().err
    assert "unknown mapping 'TXYZ'" in err and "rank orders" not in err and "rubik" not in err
    offered = err.split("choose from ", 1)[1].split(", ")
    assert "fold" not in offered and "cubes" not in offered and "graph" in offered
    assert main(["compare", "-m", "torus:2x2", "-p", "stencil:2x2", "--mappings", "TXYQ"]) == 2
    offered = capsys.readouterr().err.split("choose from ", 1)[1].split(", ")
    assert "fold" in offered and "cubes-dim1" in offered


@pytest.mark.parametrize("spec, gports", [
    ("dragonfly:groups=3,rows=1,cols=2,gports=2,layout=absolute", 2),
    ("dragonfly:groups=2,rows=1,cols=1,gports=1,layout=absolute", 1)])
def test_absolute_layout_counts_the_links_a_router_really_gets(spec, gports):
    """The check counted G*L links a group, but a group has no link to itself: these were
    refused ('puts 3 global links on one router') though no router gets more than gports."""
    m = parse_machine(spec)
    assert np.bincount(m.g_src).max() <= gports


def test_absolute_layout_check_agrees_with_the_links_built():
    from rankmap.machines.dragonfly import _absolute_ports
    for G in range(2, 9):
        for nr in range(1, 9):
            for L in range(1, 4):
                routers = [(l * G + p) % nr for g in range(G) for p in range(G) if p != g
                           for l in range(L)]
                groups = [g for g in range(G) for p in range(G) if p != g for l in range(L)]
                most = max(np.bincount(np.array(groups) * nr + np.array(routers)))
                assert _absolute_ports(G, L, nr) == most, (G, L, nr)


@pytest.mark.parametrize("groups", [1, 2])
def test_valiant_needs_a_third_group(groups):
    """With 1 or 2 groups there is no other group to route through: valiant was routed
    minimally under its own name, with no word."""
    m = parse_machine(f"dragonfly:groups={groups},rows=1,cols=2")
    with pytest.raises(RankmapError, match="valiant routing goes through a group other"):
        m.check_routing("valiant")
    assert m.check_routing("ugal") == "ugal" and m.check_routing(None) == "minimal"
    assert parse_machine("dragonfly:groups=3,rows=1,cols=2").check_routing("valiant") == \
        "valiant"
