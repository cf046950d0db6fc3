"""The time model: max-min sharing, re-sharing, route_paths, options, ranking, CLI."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_matrix

from rankmap.allocation import parse_allocation
from rankmap.cli import main
from rankmap.selection import compare
from rankmap.machines import parse_machine
from rankmap.patterns import parse_pattern
from rankmap.timing import TimeOptions, completion_times, phase_time
from rankmap.timing.maxmin import _completion_times, _rates_never_refill, maxmin_rates
from rankmap.routing import router_for


def _rates(rows, cap, mult=None):
    m = csr_matrix(np.array(rows, dtype=float))
    ip, ix, d = m.indptr.astype(np.int64), m.indices.astype(np.int64), m.data
    rate = np.zeros(len(rows))
    mult = np.ones(len(rows)) if mult is None else np.asarray(mult, dtype=float)
    maxmin_rates(ip, ix, d, np.asarray(cap, float), np.ones(len(rows), bool),
                 rate, mult)
    return rate


def _finish(rows, cap, nbytes, mult=None, retire=0.0):
    m = csr_matrix(np.array(rows, dtype=float))
    mult = np.ones(len(rows)) if mult is None else np.asarray(mult, dtype=float)
    fin, _ = completion_times(m.indptr.astype(np.int64), m.indices.astype(np.int64), m.data,
                              np.asarray(cap, float), np.asarray(nbytes, float), 0.0, mult,
                              retire)
    return fin


def test_maxmin_classic_example():
    # A crosses links 0 and 1, B only 0, C only 1: everyone gets half a link
    assert _rates([[1, 1], [1, 0], [0, 1]], [1.0, 1.0]) == pytest.approx([0.5, 0.5, 0.5])
    # a bottleneck elsewhere leaves the rest of the big link to C
    assert _rates([[1, 1], [1, 0], [0, 1]], [1.0, 10.0]) == pytest.approx([0.5, 0.5, 9.5])


def test_maxmin_split_flow_and_multiplicity():
    # a flow split half/half over two links of capacity 1 next to a whole flow on link 0
    r = _rates([[0.5, 0.5], [1, 0]], [1.0, 1.0])
    assert r[0] * 0.5 + r[1] == pytest.approx(1.0)  # link 0 is saturated
    assert r[0] == pytest.approx(r[1])  # and shared equally (both frozen there)
    # a row standing for 3 identical flows equals 3 copies of it
    assert _rates([[1, 0], [1, 1]], [1.0, 5.0], mult=[3, 1]) == pytest.approx(
        _rates([[1, 0], [1, 0], [1, 0], [1, 1]], [1.0, 5.0])[[0, 3]])


def test_resharing_when_a_flow_finishes():
    # two flows of 1 and 3 bytes on one link of 1 B/s: at t=2 the short one ends and the
    # long one (1 byte sent) gets the whole link for its last 2 bytes: ends at t=4
    assert _finish([[1], [1]], [1.0], [1.0, 3.0]) == pytest.approx([2.0, 4.0])
    # without re-sharing it would end at 6: check the model does not do that
    assert _finish([[1], [1]], [1.0], [1.0, 3.0])[1] < 5


def test_retire_fraction_bounds_events_but_keeps_order():
    rng = np.random.default_rng(0)
    rows = (rng.random((60, 8)) < 0.3).astype(float)
    rows[:, 0] = 1.0
    nbytes = rng.random(60) * 100 + 1
    exact = _finish(rows, np.ones(8), nbytes)
    rough = _finish(rows, np.ones(8), nbytes, retire=0.2)
    # an approximation: the phase time stays close and the finish order mostly holds
    assert rough.max() == pytest.approx(exact.max(), rel=0.2)
    from scipy.stats import spearmanr
    assert spearmanr(rough, exact).statistic > 0.9
    np.testing.assert_allclose(_finish(rows, np.ones(8), nbytes, retire=0.0), exact)


@given(dims=st.lists(st.integers(1, 6), min_size=1, max_size=3), seed=st.integers(0, 99),
       routing=st.sampled_from(["dor", "adaptive"]))
def test_route_paths_agree_with_route(dims, seed, routing):
    m = parse_machine("torus:" + "x".join(map(str, dims)))
    rng = np.random.default_rng(seed)
    s, d = rng.integers(0, m.n_nodes, 50), rng.integers(0, m.n_nodes, 50)
    b = rng.random(50) * 1000
    paths = router_for(m, routing).paths(s, d)
    loads = router_for(m, routing).loads(s, d, b)
    assert paths.shape == (50, m.n_links)
    np.testing.assert_allclose(paths.T @ b, loads.bytes, rtol=1e-9, atol=1e-6)
    np.testing.assert_array_equal((paths != 0).sum(axis=0).A1, loads.streams)
    # every inter-node flow leaves its source with all of its bytes
    out = np.asarray(paths[:, :].multiply(m.link_src[None, :] == s[:, None]).sum(axis=1)).ravel()
    np.testing.assert_allclose(out, (s != d).astype(float))


def test_single_flow_time_is_bytes_over_bw_plus_latency():
    m = parse_machine("torus:4x4:bw=1GB/s:lat=1us")
    opts = TimeOptions(overhead_s=2e-6)
    t = phase_time(m, np.array([0]), np.array([2]), np.array([1e6]), "dor", opts)
    assert t == pytest.approx(1e6 / 1e9 + 2e-6 + 2 * 1e-6)


def test_nic_and_memory_options():
    m = parse_machine("torus:4x4:bw=1GB/s:lat=0ns")
    s, d, b = np.array([0, 0]), np.array([1, 4]), np.array([1e6, 1e6])  # +x and +y
    free = TimeOptions(overhead_s=0)
    assert phase_time(m, s, d, b, "dor", free) == pytest.approx(1e-3)
    nic = TimeOptions(overhead_s=0, nic_bw=1e9)  # both leave through one 1 GB/s NIC
    assert phase_time(m, s, d, b, "dor", nic) == pytest.approx(2e-3)
    inside = (np.array([3, 3]), np.array([3, 3]), np.array([1e6, 1e6]))
    shared = TimeOptions(overhead_s=0, mem_bw=1e9)
    per_flow = TimeOptions(overhead_s=0, mem_bw=1e9, mem_shared=False)
    assert phase_time(m, *inside, "dor", shared) == pytest.approx(2e-3)
    assert phase_time(m, *inside, "dor", per_flow) == pytest.approx(1e-3)
    assert phase_time(m, *inside, "dor", TimeOptions(overhead_s=0, mem_bw=None)) == 0.0


def test_bad_options_rejected():
    from rankmap.errors import RankmapError
    with pytest.raises(RankmapError, match="nic_bw"):
        TimeOptions(nic_bw=-1.0)
    with pytest.raises(RankmapError, match="tolerance"):
        TimeOptions(tolerance=2.0)


def test_seed001_tzxy_still_best_by_predicted_time():
    m = parse_machine("torus:8x16x32:cores=4")
    comp = compare(m, parse_allocation(None, m), parse_pattern("stencil:128x128:box"),
                   "TXYZ,XYZT,TZXY,ZYXT", routing="dor")
    assert all("predicted_time_s" in c.metrics for c in comp.candidates)
    assert comp.best.name == "TZXY"
    times = [c.metrics["predicted_time_s"] for c in comp.candidates]
    assert all(a <= b * (1 + 1e-9) for a, b in zip(times, times[1:]))
    t = {c.name: c.metrics["predicted_time_s"] for c in comp.candidates}
    assert t["TXYZ"] / t["TZXY"] == pytest.approx(4.08, rel=0.05)  # 49 vs 12 streams


def test_compare_json_has_predicted_time_and_best_first(capsys):
    assert main(["compare", "-m", "torus:4x4x4", "-p", "stencil:8x8:periodic",
                 "--mappings", "random,XYZT", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    first = doc["candidates"][0]
    assert doc["best"] == first["mapping"]
    assert first["metrics"]["predicted_time_s"] <= doc["candidates"][1]["metrics"]["predicted_time_s"]
    assert all("predicted_time_s" in p["metrics"] for p in first["phases"])


def test_cli_time_model_off_and_options(capsys):
    assert main(["compare", "-m", "torus:4x4x4", "-p", "stencil:8x8:periodic",
                 "--mappings", "XYZT", "--format", "json", "--time-model", "off"]) == 0
    assert "predicted_time_s" not in capsys.readouterr().out
    assert main(["compare", "-m", "torus:4x4x4:cores=2", "-p", "stencil:8x16:periodic",
                 "--mappings", "TXYZ", "--format", "json", "--nic-bw", "100MB/s"]) == 0
    slow = json.loads(capsys.readouterr().out)["candidates"][0]["metrics"]["predicted_time_s"]
    assert main(["compare", "-m", "torus:4x4x4:cores=2", "-p", "stencil:8x16:periodic",
                 "--mappings", "TXYZ", "--format", "json"]) == 0
    fast = json.loads(capsys.readouterr().out)["candidates"][0]["metrics"]["predicted_time_s"]
    assert slow > fast


@pytest.mark.parametrize("flag,value,msg", [("--nic-bw", "fast", "NIC bandwidth (--nic-bw) 'fast'"),
                                            ("--mem-bw", "0GB/s", "memory bandwidth"),
                                            ("--msg-overhead", "soon", "per-message overhead")])
def test_cli_bad_time_options(capsys, flag, value, msg):
    assert main(["compare", "-m", "torus:4x4", "-p", "stencil:4x4", flag, value]) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err


def test_shared_memory_is_processor_sharing():
    from rankmap.timing import shared_memory_times
    # node 5: flows of 1 and 3 bytes (the 3-byte entry standing for 2 flows) on 1 B/s:
    # three flows share until t=3 (1 byte each), then two share for 2 more bytes each: t=7
    t = shared_memory_times([5, 5, 2], [1.0, 3.0, 4.0], [1, 2, 1], 1.0)
    np.testing.assert_allclose(t, [3.0, 7.0, 4.0])


def _both_ways(rows, cap, nbytes, mult, tolerance):
    m = csr_matrix(np.array(rows, dtype=float))
    args = (m.indptr.astype(np.int64), m.indices.astype(np.int64), m.data,
            np.asarray(cap, float), np.asarray(nbytes, float), tolerance,
            np.asarray(mult, float), 0.0)
    return _completion_times(*args, True), _completion_times(*args, False)


@given(data=st.data(), n_flows=st.integers(1, 25), n_res=st.integers(1, 6),
       tolerance=st.sampled_from([0.0, 1e-3, 0.3]), equal=st.booleans())
def test_event_loop_shortcut_gives_the_loops_times_bit_for_bit(data, n_flows, n_res, tolerance,
                                                               equal):
    # phases whose rates can never change skip the event loop: same finish times exactly
    rows = data.draw(st.lists(st.lists(st.sampled_from([0.0, 0.0, 1.0, 0.5]), min_size=n_res,
                                       max_size=n_res), min_size=n_flows, max_size=n_flows))
    cap = data.draw(st.lists(st.sampled_from([1.0, 3.0, 7.0, 1e9 / 3]), min_size=n_res,
                             max_size=n_res))
    size = data.draw(st.sampled_from([1.0, 2.0 ** 20, 1e6 / 7]))
    nbytes = ([size] * n_flows if equal else
              data.draw(st.lists(st.sampled_from([size, 2 * size, 0.0]), min_size=n_flows,
                                 max_size=n_flows)))
    mult = data.draw(st.lists(st.integers(1, 5), min_size=n_flows, max_size=n_flows))
    (fast, fills_fast), (loop, fills_loop) = _both_ways(rows, cap, nbytes, mult, tolerance)
    assert np.array_equal(fast, loop)
    assert fills_fast == fills_loop


def test_shortcut_only_when_no_event_would_refill():
    size = np.array([8.0, 8.0, 8.0])
    # three distinct rates far apart: no refill, the loop can be skipped
    assert _rates_never_refill(size, np.array([1.0, 2.0, 4.0]), 0.0)
    # a rate a few ulps below another: the loop refills it when they are retired apart ...
    close = np.array([1.0, 1.0 * (1 - 1e-14), 4.0])
    assert not _rates_never_refill(size, close, 0.0)
    # ... but not when one event's horizon retires both together
    assert _rates_never_refill(size, close, 1e-3)
    # different sizes, or a flow using nothing (infinite rate): run the loop
    assert not _rates_never_refill(np.array([8.0, 4.0, 8.0]), np.array([1.0, 2.0, 4.0]), 0.0)
    assert not _rates_never_refill(size, np.array([1.0, np.inf, 4.0]), 0.0)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([("torus:4x4x2:cores=2", "dor"), ("torus:4x4x2:cores=2", "adaptive"),
                        ("mesh:3x5", "dor"), ("xc:groups=3:cores=2", None),
                        ("fattree:k=4:levels=2:cores=2", None),
                        ("torus:2x2x2:node=pack:2,numa:2,core:2", "dor")]),
       st.integers(0, 10**6), st.sampled_from(["none", "groups", "varying"]),
       st.sampled_from([None, 1e9]), st.booleans())
def test_phase_time_is_the_latest_flow_time_bit_for_bit(case, seed, hops, nic, cores):
    """phase_time takes the latest arrival per group (its finish time plus the latency of its
    flow with the most hops) instead of building every flow's time: the same number as the
    maximum of flow_times, bit for bit, with the default hops, hops given per flow (constant
    or varying within a group), NIC ports, and a node structure timing flows inside a node
    one by one."""
    from rankmap.routing.groups import flow_groups
    from rankmap.timing.model import flow_times

    spec, routing = case
    m = parse_machine(spec)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    pairs = rng.integers(0, m.n_nodes, size=(max(1, n // 3), 2))
    pick = rng.integers(0, len(pairs), n)               # repeated node pairs: several per group
    s, d = pairs[pick, 0], pairs[pick, 1]
    b = rng.choice([1024.0, 65536.0], n)
    g = flow_groups(s, d, b)
    if hops == "none":
        fh = None
    elif hops == "groups":
        fh = np.asarray(m.hop_distance(s, d), dtype=np.float64)
    else:
        fh = rng.random(n) * 5
    sc = rng.integers(0, m.cores_per_node, n) if cores else None
    dc = rng.integers(0, m.cores_per_node, n) if cores else None
    options = TimeOptions(nic_bw=nic, hop_latency_s=1e-6)
    want = flow_times(m, s, d, b, router_for(m, routing), options, fh, sc, dc, g).max()
    got = phase_time(m, s, d, b, router_for(m, routing), options, fh, sc, dc, g)
    assert got == want
