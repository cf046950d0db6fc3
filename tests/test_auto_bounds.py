"""``auto``'s pruning: the bounds of selection/bounds.py are lower bounds, and pruning, the
reuse of identical placements' evaluations and the single refinement of identical starts
change neither the pick nor any reported metric."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rankmap.allocation import parse_allocation, whole_machine
from rankmap.evaluation import Evaluator
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping, validate_mapping
from rankmap.patterns import parse_pattern
from rankmap.selection import auto as auto_mod
from rankmap.selection import auto_select
from rankmap.selection.bounds import (Bound, Pruner, placement_bound, ranking_bound_kind,
                                      routed_time_bound)
from rankmap.timing import TimeOptions

CASES = [
    ("torus:4x4x4:cores=2", "stencil:8x4x4:box", None, None, {}),
    ("mesh:4x3x5", "fft2d:6x10", None, "adaptive", {}),
    ("torus:6x6:cores=4", "stencil:12x12:periodic", None, None, {"nic_bw": 2e9}),
    ("torus:8x8x8:cores=2", "pairs:random:seed=3", "random:40:seed=2", None,
     {"mem_shared": False}),
    ("dragonfly:groups=5,rows=2,cols=3,nodes=2,cores=2", "stencil:12x10", None, "valiant", {}),
    ("dragonfly:groups=5,rows=2,cols=3,nodes=2,cores=2", "alltoall:6x10", None, "ugal", {}),
    ("fattree:k=4:levels=3:cores=2", "fft2d:8x4", None, "ecmp", {}),
    ("torus:4x4:node=pack:2,numa:2,core:4", "stencil:16x16:box", None, None, {}),
]


def _problem(ms, ps, alloc):
    m = parse_machine(ms)
    a = parse_allocation(alloc, m) if alloc else whole_machine(m)
    return m, a, parse_pattern(ps, default_ranks=a.n_cores)


@pytest.mark.parametrize("ms,ps,alloc,routing,opts", CASES)
def test_bounds_are_lower_bounds(ms, ps, alloc, routing, opts):
    """Every bound is at most the real value, for the exact model (tolerance 0) and for random
    placements as well as the mappers' (shuffled ranks are the hard case: long flows)."""
    m, a, p = _problem(ms, ps, alloc)
    ev = Evaluator(m, a, p, routing, time_options=TimeOptions(tolerance=0.0, **opts))
    rng = np.random.default_rng(7)
    placements = [build_mapping(n, p, m, a, 0) for n in ("inorder", "rcb")]
    placements += [validate_mapping(f"shuffle{i}", rng.permutation(a.n_cores)[:p.n_ranks],
                                    p.n_ranks, a) for i in range(4)]
    for mp in placements:
        b = placement_bound(ev, mp.nodes(a))
        real = ev.evaluate(mp).metrics
        routed = routed_time_bound(ev, ev.route(mp))
        assert routed <= real["predicted_time_s"] * (1 + 1e-12), mp.name
        assert b.time_s <= real["predicted_time_s"] * (1 + 1e-12), mp.name
        assert b.max_link_bytes <= real["max_link_bytes"] * (1 + 1e-12), mp.name
        assert b.hop_bytes <= real["hop_bytes"] * (1 + 1e-12), mp.name
        assert b.time_s > 0 and b.max_link_bytes >= 0


def test_grid_bound_is_tight_for_a_hand_case():
    """torus:4x4 one core per node, a rank sending 3 MiB to each of its 4 neighbours: a node
    pushes 12 MiB through 4 out-links, so the busiest link carries at least 3 MiB, which the
    identity placement reaches."""
    m, a, p = _problem("torus:4x4", "stencil:4x4:periodic:bytes=3MiB", None)
    ev = Evaluator(m, a, p)
    b = placement_bound(ev, build_mapping("inorder", p, m, a, 0).nodes(a))
    assert b.max_link_bytes == 3 * 2**20
    assert b.hop_bytes == 16 * 4 * 3 * 2**20


def test_pruner_rule():
    """A bound prunes only beyond the keep-th best real value plus the slack."""
    pr = Pruner(("bytes", 1e-9), keep=2)
    big = Bound(None, 10.0, 0.0)
    assert pr.reason(big) is None                      # nothing evaluated yet
    pr.record({"max_link_bytes": 4.0})
    assert pr.reason(big) is None                      # one real value, two kept
    pr.record({"max_link_bytes": 9.0})
    assert pr.reason(Bound(None, 9.0, 0.0)) is None    # equal: could tie
    assert "pruned before routing" in pr.reason(big)
    pr = Pruner(("bytes", 1e-9), keep=2, near_tie=0.05)
    pr.record({"max_link_bytes": 4.0})
    pr.record({"max_link_bytes": 4.1})
    assert pr.reason(Bound(None, 4.19, 0.0)) is None   # inside the 5% near-tie band of 4.0
    assert pr.reason(Bound(None, 4.21, 0.0)) is not None
    pr = Pruner(("bytes", 1e-9), keep=2)               # design.md's rule: no band
    pr.record({"max_link_bytes": 4.0})
    pr.record({"max_link_bytes": 4.1})
    assert pr.reason(Bound(None, 4.1, 0.0)) is None
    assert pr.reason(Bound(None, 4.11, 0.0)).endswith("above the 2nd best evaluated (3.91e-06 MiB)")
    pr = Pruner(("time", 0.02), keep=1, near_tie=0.05)
    pr.record({"predicted_time_s": 1.0, "max_link_bytes": 0.0})
    assert pr.reason(Bound(1.07, 0.0, 0.0)) is None    # 1.05 x 1.02 = 1.071
    assert "at least 1072 ms, above the best evaluated and the near tie of the fastest " \
        "(1050 ms)" in pr.reason(Bound(1.072, 0, 0))


def test_no_pruning_without_link_metrics_or_with_retire_fraction():
    m, a, p = _problem("torus:4x4", "stencil:4x4", None)
    assert ranking_bound_kind(Evaluator(m, a, p, metrics=[])) is None
    assert ranking_bound_kind(Evaluator(
        m, a, p, time_options=TimeOptions(retire_fraction=0.1))) is None
    assert ranking_bound_kind(Evaluator(m, a, p, time_options=TimeOptions(enabled=False)))[0] \
        == "bytes"


@pytest.mark.parametrize("ms,ps,alloc,opts", [
    ("torus:4x4x4:cores=2", "stencil:8x4x4:box", None, {}),
    ("torus:4x4x4", "stencil:4x4x4:periodic", None, {"enabled": False}),
    ("torus:8x8x8", "stencil:8x4", "random:32:seed=1", {}),
    ("torus:4x4x4:cores=2", "fft2d:16x8", None, {}),
])
def test_pruning_changes_nothing_reported(monkeypatch, ms, ps, alloc, opts):
    """auto with pruning and reuse gives the pick, the ranking and the metrics of auto
    evaluating every candidate; every candidate is either evaluated or skipped with a reason."""
    m, a, p = _problem(ms, ps, alloc)
    t = TimeOptions(**opts)
    pruned = auto_select(p, m, a, seed=0, time_options=t)
    monkeypatch.setattr(auto_mod, "ranking_bound_kind", lambda ev: None)
    full = auto_select(p, m, a, seed=0, time_options=t)
    assert pruned.best.name == full.best.name
    assert pruned.best.metrics == full.best.metrics
    assert [c.name for c in pruned.candidates] == [
        c.name for c in full.candidates if c.name not in pruned.skipped]
    for c in pruned.candidates:
        assert c.metrics == full.find(c.name).metrics
    why = {n: r for n, r in pruned.skipped.items() if n not in full.skipped}
    assert all(r.startswith(("pruned before routing", "pruned after routing"))
               for r in why.values())
    assert len(pruned.candidates) + len(why) == len(full.candidates)


def test_identical_placements_share_one_evaluation():
    """On a 1-core-per-node torus every rank order naming T in another position is the same
    placement as one without it: auto reports them all, with the metrics of a direct
    evaluation."""
    m, a, p = _problem("torus:4x4x4", "stencil:4x4x4:periodic", None)
    comp = auto_select(p, m, a, seed=0)
    ev = Evaluator(m, a, p)
    for name in ("XYZT", "TXYZ"):
        c = comp.find(name)
        if c is not None:
            assert c.metrics == ev.evaluate(build_mapping(name, p, m, a, 0)).metrics


def test_routed_bound_is_the_busiest_link_for_a_hand_case():
    """torus:4x4, one core per node, every rank sending 3 MiB to each of its 4 neighbours at
    the default 1 GiB/s-class link bandwidth: the identity placement loads every link with
    3 MiB, so the bound is 3 MiB / bandwidth + the overhead, and the real time is no less."""
    m, a, p = _problem("torus:4x4", "stencil:4x4:periodic:bytes=3MiB", None)
    ev = Evaluator(m, a, p, time_options=TimeOptions(tolerance=0.0))
    mp = build_mapping("inorder", p, m, a, 0)
    bw = float(np.asarray(m.link_bandwidth).max())
    bound = routed_time_bound(ev, ev.route(mp))
    assert bound == pytest.approx(3 * 2**20 / bw + TimeOptions().overhead_s, rel=1e-12)
    assert bound <= ev.evaluate(mp).metrics["predicted_time_s"]
    assert routed_time_bound(Evaluator(m, a, p, time_options=TimeOptions(enabled=False)),
                             ev.route(mp)) is None


def test_after_routing_pruning_skips_the_time_model_of_hopeless_candidates():
    """fft2d on a torus: the busiest link decides, so once two candidates are evaluated the
    slow rank orders are pruned after routing; pick and metrics are unchanged (the test
    above) and the reason says so."""
    m, a, p = _problem("torus:4x4x4:cores=2", "fft2d:16x8", None)
    comp = auto_select(p, m, a, seed=0)
    after = [r for r in comp.skipped.values() if r.startswith("pruned after routing")]
    assert after, comp.skipped
    assert all("predicted time is at least" in r for r in after)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["torus:4x4x4:cores=2", "mesh:5x3:cores=4", "torus:6x2:wrap=x:cores=3",
                        "torus:8", "mesh:3x3x3:cores=2", "torus:3x3"]),
       st.sampled_from(["stencil:8x4:box", "fft2d:4x6", "allreduce:16:algo=ring", "bcast:12",
                        "stencil:4x4:periodic:bytes=1.5KB + alltoall:2x8"]),
       st.integers(0, 2 ** 32 - 1), st.sampled_from([{}, {"nic_bw": 3e9},
                                                     {"mem_shared": False},
                                                     {"mem_bw": None, "nic_bw": 1e9}]))
def test_compiled_bound_sums_are_the_numpy_ones(ms, ps, seed, opts):
    """On tori and meshes placement_bound sums a phase in one compiled pass: the same bounds,
    bit for bit, as the numpy sums every machine uses (ranks sharing nodes, scattered
    placements, flows inside nodes, one-way flows (a ring, a broadcast), time-model options
    that use the node sums or not)."""
    from rankmap.selection import bounds as bounds_mod

    m = parse_machine(ms)
    a = whole_machine(m)
    p = parse_pattern(ps, default_ranks=a.n_cores)
    if p.n_ranks > a.n_cores:
        return
    cores = np.random.default_rng(seed).permutation(a.n_cores)[:p.n_ranks]
    nodes = validate_mapping("x", cores, p.n_ranks, a).nodes(a)
    for phase in p.phases:
        for per_node in (True, False):
            got = bounds_mod._grid_phase_sums(m, nodes, phase, per_node)
            want = bounds_mod._phase_sums(m, nodes, phase, per_node)
            for x, y in zip(got[:4], want[:4]):
                assert (x is None and y is None) or np.array_equal(x, y)
            assert np.array_equal(got[4](), want[4]())
            assert got[5:] == want[5:]
    ev = Evaluator(m, a, p, time_options=TimeOptions(**opts))
    got = placement_bound(ev, nodes)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bounds_mod, "_grid_phase_sums", bounds_mod._phase_sums)
        want = placement_bound(ev, nodes)
    assert got == want


def _geometric_graph(path, n=128, seed=1):
    """A graph file: n random points of the unit cube, each linked to its 4 nearest (64 KiB
    each way); its pattern has no grid, so ``rcb`` is ``graph``'s placement."""
    pts = np.random.default_rng(seed).random((n, 3))
    near = np.argsort(((pts[:, None] - pts[None]) ** 2).sum(-1), axis=1)[:, 1:5]
    rows = [f"{u},{v},65536\n{v},{u},65536\n" for u in range(n) for v in near[u]]
    path.write_text("src,dst,bytes\n" + "".join(rows))
    return f"graph:{path}"


def test_a_shared_placement_takes_one_of_the_best_places(tmp_path, monkeypatch):
    """``rcb`` and ``graph`` place a gridless graph alike: the two are auto's refinement
    starts, so nothing else can be, and every other candidate is measured against their
    value and pruned, never evaluated; the pick and its metrics stay those of evaluating
    everything."""
    from rankmap.selection.parallel import ForkExecutor

    m, a, p = _problem("torus:4x4x4:cores=2", _geometric_graph(tmp_path / "g.csv"), None)
    searches = []
    real = auto_mod.refine_cores

    def counted(start, *args, **kw):
        searches.append(start.tobytes())
        return real(start, *args, **kw)

    monkeypatch.setattr(auto_mod, "refine_cores", counted)
    pruned = auto_select(p, m, a, seed=0)
    # (inorder, pruned, is evaluated after the search to be reported)
    assert sorted(c.name for c in pruned.candidates) == [
        "graph", "inorder", "rcb", "refine:graph", "refine:rcb"]
    # the two identical starts are refined once, serially and with workers, and the other
    # refinement is that one under its own name
    assert len(searches) == 1
    forked = auto_select(p, m, a, seed=0, executor=ForkExecutor(2))
    assert len(searches) == 2
    one, other = pruned.find("refine:graph"), pruned.find("refine:rcb")
    assert np.array_equal(one.mapping.core_of_rank, other.mapping.core_of_rank)
    assert one.metrics == other.metrics
    assert [(c.name, c.metrics) for c in forked.candidates] == \
        [(c.name, c.metrics) for c in pruned.candidates]
    value = pruned.find("graph").metrics["predicted_time_s"]
    assert all(f"2nd best evaluated ({value * 1e3:.4g} ms)" in r
               for r in pruned.skipped.values() if r.startswith("pruned"))
    monkeypatch.setattr(auto_mod, "ranking_bound_kind", lambda ev: None)
    full = auto_select(p, m, a, seed=0)
    assert pruned.best.name == full.best.name
    assert pruned.best.metrics == full.best.metrics


@pytest.mark.parametrize("ms,ps", [("torus:8x8x8", "stencil:16x32:periodic"),
                                   ("torus:16x16x16", "stencil:64x64:periodic")])
def test_a_placement_is_routed_at_most_once(monkeypatch, ms, ps):
    """With one core per node, rank orders naming T in different places are one placement:
    once pruned (or evaluated), its twins get the same outcome without being routed again; a
    refinement that returns a start's placement gets the start's evaluation. (inorder, pruned
    after routing, is routed once more after the search to be reported.)"""
    m, a, p = _problem(ms, ps, None)
    routed = []
    real = Evaluator.route

    def spy(self, mapping, *args, **kw):
        routed.append(mapping.core_of_rank.tobytes())
        return real(self, mapping, *args, **kw)

    monkeypatch.setattr(Evaluator, "route", spy)
    comp = auto_select(p, m, a, seed=0)
    baseline = build_mapping("inorder", p, m, a, 0).core_of_rank.tobytes()
    assert routed[-1] == baseline and comp.find("inorder") is not None
    assert len(routed[:-1]) == len(set(routed[:-1]))
    # twins of a pruned placement carry its reason
    by_placement = {}
    for name in comp.skipped:
        if comp.skipped[name].startswith("pruned"):
            key = build_mapping(name, p, m, a, 0).core_of_rank.tobytes()
            by_placement.setdefault(key, set()).add(comp.skipped[name])
    assert by_placement and all(len(r) == 1 for r in by_placement.values())
