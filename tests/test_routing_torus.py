"""Hand-computed routes on tiny tori and meshes, and traffic conservation for both models."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from rankmap.machines import Torus, parse_machine
from rankmap.routing import router_for


def loads_by_name(machine, src, dst, routing, nbytes=1.0):
    """{(node, dim, dir): (bytes, streams)} for the non-idle links of one routed flow set."""
    ld = router_for(machine, routing).loads(np.array(src), np.array(dst), np.full(len(src), nbytes))
    out = {}
    for i in np.nonzero(ld.bytes)[0]:
        out[(int(machine.link_src[i]), int(machine.link_dim[i]), int(machine.link_dir[i]))] = (
            float(ld.bytes[i]), int(ld.streams[i]))
    return out


def test_dor_ring_short_way_and_tie_goes_plus():
    m = Torus((8,))
    assert loads_by_name(m, [0], [3], "dor") == {(0, 0, 1): (1, 1), (1, 0, 1): (1, 1), (2, 0, 1): (1, 1)}
    # offset 4 on a ring of 8 is a tie: + direction
    assert set(loads_by_name(m, [0], [4], "dor")) == {(n, 0, 1) for n in range(4)}
    # offset 5 = -3: the short way is backwards through the wrap link
    assert set(loads_by_name(m, [0], [5], "dor")) == {(0, 0, -1), (7, 0, -1), (6, 0, -1)}


def test_mesh_never_wraps():
    m = parse_machine("mesh:4")
    assert set(loads_by_name(m, [3], [0], "dor")) == {(3, 0, -1), (2, 0, -1), (1, 0, -1)}
    assert m.n_links == 6  # 3 cables, both directions


def test_dor_goes_x_first_then_y():
    m = Torus((4, 4))
    # node (0,0) -> (1,1): x+ from node 0, then y+ from node 1
    assert loads_by_name(m, [0], [5], "dor") == {(0, 0, 1): (1, 1), (1, 1, 1): (1, 1)}


def test_adaptive_splits_equally_at_each_hop():
    m = Torus((4, 4))
    got = loads_by_name(m, [0], [5], "adaptive", nbytes=8.0)
    assert got == {(0, 0, 1): (4, 1), (0, 1, 1): (4, 1), (1, 1, 1): (4, 1), (4, 0, 1): (4, 1)}


def test_adaptive_tie_uses_both_directions_until_committed():
    ring = Torus((4,))
    assert loads_by_name(ring, [0], [2], "adaptive", 2.0) == {
        (0, 0, 1): (1, 1), (0, 0, -1): (1, 1), (1, 0, 1): (1, 1), (3, 0, -1): (1, 1)}
    # 4x2 torus, (0,0) -> (1,1): y offset 1 on a ring of 2 is a tie, so 3 productive links
    m = Torus((4, 2))
    got = loads_by_name(m, [0], [5], "adaptive", 6.0)
    assert got == {(0, 0, 1): (2, 1), (0, 1, 1): (2, 1), (0, 1, -1): (2, 1),
                   (4, 0, 1): (4, 1), (1, 1, 1): (1, 1), (1, 1, -1): (1, 1)}


def test_flows_inside_a_node_load_nothing():
    m = Torus((4, 4))
    ld = router_for(m, "adaptive").loads(np.array([3, 3]), np.array([3, 3]), np.array([5.0, 7.0]))
    assert ld.bytes.sum() == 0 and ld.streams.sum() == 0 and list(ld.flow_hops) == [0, 0]


@st.composite
def torus_and_flows(draw):
    nd = draw(st.integers(1, 3))
    dims = tuple(draw(st.integers(1, 6)) for _ in range(nd))
    wrap = tuple(draw(st.booleans()) for _ in range(nd))
    m = Torus(dims, wrap=wrap)
    n = draw(st.integers(1, 30))
    src = np.array(draw(st.lists(st.integers(0, m.n_nodes - 1), min_size=n, max_size=n)))
    dst = np.array(draw(st.lists(st.integers(0, m.n_nodes - 1), min_size=n, max_size=n)))
    nbytes = np.array(draw(st.lists(st.integers(1, 1000), min_size=n, max_size=n)), float)
    return m, src, dst, nbytes


@given(torus_and_flows(), st.sampled_from(["dor", "adaptive"]))
def test_link_bytes_conserve_hop_bytes(case, routing):
    m, src, dst, nbytes = case
    ld = router_for(m, routing).loads(src, dst, nbytes)
    hops = m.hop_distance(src, dst)
    assert ld.bytes.sum() == pytest.approx(float((hops * nbytes).sum()))
    assert (ld.bytes >= -1e-9).all()
    if routing == "dor":  # one path per flow: streams count its links exactly
        assert ld.streams.sum() == hops.sum()
    else:  # a split flow has at least as many links with a share as its hop count
        assert ld.streams.sum() >= hops.sum()
    assert np.array_equal(ld.flow_hops, hops)


@given(torus_and_flows())
def test_dor_and_adaptive_agree_on_a_line(case):
    """With only one productive dimension there is one minimal path: both models agree."""
    m, src, dst, nbytes = case
    if len(m.dims) != 1 or (m.wrap[0] and m.dims[0] % 2 == 0):
        return
    a = router_for(m, "dor").loads(src, dst, nbytes)
    b = router_for(m, "adaptive").loads(src, dst, nbytes)
    assert np.allclose(a.bytes, b.bytes) and np.array_equal(a.streams, b.streams)


def reference_adaptive(m, s, t, nbytes):
    """Plain-Python equal-split model: walk hop by hop, splitting at every node."""
    from collections import defaultdict
    loads = defaultdict(float)
    frontier = {int(s): 1.0}
    while frontier:
        nxt = defaultdict(float)
        for node, w in frontier.items():
            if node == t:
                continue
            c, ct = m.coords(node), m.coords(t)
            moves = []
            for d, n in enumerate(m.dims):
                delta = int(ct[d] - c[d])
                if m.wrap[d]:
                    delta %= n
                    if delta == 0:
                        continue
                    if 2 * delta == n:
                        moves += [(d, 1), (d, -1)]
                    else:
                        moves.append((d, 1) if delta < n - delta else (d, -1))
                elif delta:
                    moves.append((d, 1 if delta > 0 else -1))
            for d, step in moves:
                loads[(node, d, step)] += w / len(moves) * nbytes
                c2 = c.copy()
                c2[d] = (c2[d] + step) % m.dims[d]
                nxt[int(m.node_ids(c2))] += w / len(moves)
        frontier = nxt
    return loads


@given(st.data())
def test_adaptive_matches_plain_reference(data):
    nd = data.draw(st.integers(1, 3))
    dims = tuple(data.draw(st.integers(2, 7)) for _ in range(nd))
    wrap = tuple(data.draw(st.booleans()) for _ in range(nd))
    m = Torus(dims, wrap=wrap)
    n = data.draw(st.integers(1, 12))
    ids = st.integers(0, m.n_nodes - 1)
    src = np.array(data.draw(st.lists(ids, min_size=n, max_size=n)))
    dst = np.array(data.draw(st.lists(ids, min_size=n, max_size=n)))
    ld = router_for(m, "adaptive").loads(src, dst, np.full(n, 3.0))
    expect, streams = {}, {}
    for s, t in zip(src, dst):
        for key, v in reference_adaptive(m, s, t, 3.0).items():
            expect[key] = expect.get(key, 0.0) + v
            streams[key] = streams.get(key, 0) + 1
    for key, v in expect.items():
        li = m.link_index(*key)
        assert ld.bytes[li] == pytest.approx(v) and ld.streams[li] == streams[key]
    assert ld.bytes.sum() == pytest.approx(sum(expect.values()))


@given(torus_and_flows(), st.integers(0, 5))
def test_dor_ring_sums_give_the_walks_bits(case, repeat):
    """Long paths are summed as runs per ring (time O(flows + links), not O(hops)); the
    loads are the same bits as walking every path, and links no flow crosses are exactly 0."""
    from rankmap.kernels import torus as tk
    m, src, dst, nbytes = case
    src, dst, nbytes = (np.tile(x, repeat + 1) for x in (src, dst, nbytes))
    args = (src.astype(np.int64), dst.astype(np.int64), nbytes, np.ones(len(src), np.int64),
            m.dims, m.strides, m.wrap)
    sums = (np.zeros(m.n_dense_slots), np.zeros(m.n_dense_slots, np.int64),
            np.zeros(len(src), np.int64))
    tk._dor_ring_sums(*args, *sums, tk._node_coords(m.dims, m.strides, m.n_nodes))
    walk = router_for(m, "dor").paths(src, dst)
    expect = np.zeros(m.n_links)
    np.add.at(expect, walk.indices, np.repeat(nbytes, np.diff(walk.indptr)))
    idx = m.dense_slot_of_link
    assert np.array_equal(sums[0][idx], expect)
    assert np.array_equal(sums[1][idx], np.bincount(walk.indices, minlength=m.n_links))
    assert np.array_equal(sums[2], np.diff(walk.indptr))


def test_long_dor_paths_are_summed_per_ring():
    # 20,000 flows half-way round a 100,000-node ring (ties go +): 10^9 link visits if walked
    m = Torus((100000, 2))
    src = np.arange(0, 100000, 5)
    dst = (src + 50000) % 100000
    ld = router_for(m, "dor").loads(src, dst, np.ones(len(src)))
    assert np.array_equal(ld.flow_hops, np.full(len(src), 50000.0))
    assert ld.bytes.sum() == 20000 * 50000
    # every + link of row 0 is crossed by the 10,000 flows that started within 50,000 before it
    assert ld.bytes.max() == 10000 and np.count_nonzero(ld.bytes) == 100000


@given(torus_and_flows())
def test_template_sizes_bound_the_adaptive_templates(case):
    """The size check counts every template's entries before building (exact without a tie)."""
    from rankmap.kernels import torus as tk
    m, src, dst, _ = case
    src, dst = src.astype(np.int64), dst.astype(np.int64)
    sizes = np.zeros(len(src))
    tk._flow_offsets(src, dst, m.dims, m.strides, m.wrap, np.zeros(len(src), np.int64),
                     np.zeros(len(src), np.int64), sizes)
    indptr, _, _ = tk.adaptive_paths(src, dst, m.dims, m.strides, m.wrap)
    built = np.diff(indptr)
    assert (sizes >= built).all()
    for f in range(len(src)):
        a, b = m.coords(int(src[f])), m.coords(int(dst[f]))
        tie = any(w and n % 2 == 0 and (y - x) % n == n // 2
                  for x, y, n, w in zip(a, b, m.dims, m.wrap))
        if not tie:
            assert sizes[f] == built[f]


@pytest.mark.parametrize("routing", ["dor", "adaptive"])
def test_routes_too_big_to_build_are_refused_first(routing, capsys):
    # 400,000 random pairs on a 100,000-node ring: 10^10 route entries (far more adaptive
    # shares); one line naming the size and the limit, exit 2, nothing allocated first
    from rankmap.cli import main
    rc = main(["compare", "-m", "torus:100000x4x1", "-p", "pairs:random", "--mappings",
               "inorder", "--routing", routing])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1
    assert "(flow, link) route entries; the limit is 67108864" in err
    # DOR's loads are summed per ring; only the time model needs every route
    assert ("--time-model off skips it" in err) == (routing == "dor")


@given(torus_and_flows(), st.integers(0, 2**31))
def test_hop_distances_by_lookup_and_by_division_agree(case, seed):
    # more pairs than twice the nodes take the coordinate-table path of the kernel
    from rankmap.kernels import torus as tk
    m = case[0]
    rng = np.random.default_rng(seed)
    a = rng.integers(0, m.n_nodes, 2 * m.n_nodes + 5)
    b = rng.integers(0, m.n_nodes, len(a))
    ca, cb = m.coords(a), m.coords(b)
    delta = np.abs(cb - ca)
    expect = np.where(m.wrap, np.minimum(delta, m.dims - delta), delta).sum(axis=-1)
    assert np.array_equal(tk.hop_distances(a, b, m.dims.astype(np.int64), m.strides, m.wrap),
                          expect)
    small = tk.hop_distances(a[:3], b[:3], m.dims.astype(np.int64), m.strides, m.wrap)
    assert np.array_equal(small, expect[:3])


@given(torus_and_flows())
def test_a_walk_takes_a_slot_exactly_when_the_closed_form_says_so(case):
    """``dor_takes_slot`` (O(ndim), no walk) names exactly the dense slots ``dor_walk`` writes,
    over every slot of the machine, ties and meshes included."""
    from rankmap.kernels import torus as tk
    m, src, dst, _ = case
    dims = m.dims.astype(np.int64)
    strides = np.asarray(m.strides, dtype=np.int64)
    wrap = np.asarray(m.wrap, dtype=np.bool_)
    buf = np.empty(int(dims.sum()) + 1, dtype=np.int64)
    n_slots = m.n_nodes * 2 * len(dims)
    for s, t in zip(src, dst):
        h = tk.dor_walk(s, t, dims, strides, wrap, buf)
        on = set(buf[:h].tolist())
        got = {slot for slot in range(n_slots)
               if tk.dor_takes_slot(s, t, slot, dims, strides, wrap)}
        assert got == on
