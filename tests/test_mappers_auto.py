"""refine (incremental search) and auto (one evaluator, best by the ranking rule, CLI)."""

import numpy as np
import pytest

from rankmap.allocation import parse_allocation
from rankmap.cli import main
from rankmap.evaluation import Evaluator
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping
from rankmap.mappers.refine import (GAIN_WINDOW, MAX_REFUSED, _State, refine_cores,
                                    refine_search)
from rankmap.selection import auto_select, build_placement
from rankmap.metrics import NEAR_TIE, best_first_order, primary
from rankmap.patterns import parse_pattern


def _setup(machine="torus:4x4x4", pattern="stencil:4x4x4:periodic", nodes=None):
    m = parse_machine(machine)
    a = parse_allocation(nodes, m)
    return m, a, parse_pattern(pattern, default_ranks=a.n_cores)


@pytest.mark.parametrize("machine,pattern,routing", [
    ("torus:4x4x4", "stencil:4x4x4:periodic", "adaptive"),
    ("dragonfly:groups=4,rows=2,cols=2,nodes=2,cores=4", "minimd", "minimal"),
    ("dragonfly:groups=4,rows=2,cols=2,nodes=2,cores=4", "lulesh:4x4x4", "ugal"),
    ("dragonfly:groups=4,rows=2,cols=2,nodes=2,cores=4", "fft2d:8x8", "valiant"),
    ("fattree:k=4:levels=3:cores=4", "minimd", "ecmp"),
])
def test_incremental_state_matches_full_routing(machine, pattern, routing):
    # moves and swaps kept and refused, one phase or many, routes split or not, a whole
    # phase routed afresh (UGAL): the loads, hop-bytes, busiest link and draw weights kept up
    # to date equal a state routed from scratch
    m, a, p = _setup(machine, pattern)
    start = build_mapping("random", p, m, a, seed=1).core_of_rank
    st = _State(p, m, a, routing, start)
    src = np.concatenate([ph.src for ph in st.phases])
    dst = np.concatenate([ph.dst for ph in st.phases])
    w = np.concatenate([ph.bytes for ph in st.phases])
    st.draw_table(src, dst, w)
    rng = np.random.default_rng(0)
    kept = 0
    for _ in range(60):
        r1, r2 = rng.choice(p.n_ranks, 2, replace=False)
        free = np.flatnonzero(st.rank_of_core < 0)
        if len(free) and rng.random() < 0.3:
            kept += st.try_move({int(r1): int(free[rng.integers(len(free))])})
        else:
            kept += st.try_move({int(r1): int(st.cores[r2]), int(r2): int(st.cores[r1])})
    assert 0 < kept < 60
    full = _State(p, m, a, routing, st.cores)
    full.draw_table(src, dst, w)
    for x, y in zip(st.loads, full.loads):
        assert np.allclose(x, y)
    assert st.hb == pytest.approx(full.hb)
    assert st.max == pytest.approx(full.max)
    assert np.allclose(st.weight, full.weight)
    assert np.array_equal(st.rank_of_core[st.cores], np.arange(p.n_ranks))


def test_refine_improves_a_random_start():
    m, a, p = _setup()
    start = build_mapping("random", p, m, a, seed=2).core_of_rank
    out = refine_cores(start, p, m, a, seed=0, budget=20000)
    before = _State(p, m, a, "dor", start).objective()
    after = _State(p, m, a, "dor", out).objective()
    assert after < before and after[1] < before[1]


def test_refine_stops_early_on_an_already_good_placement():
    # the natural order of a 4x4x4 stencil on a 4x4x4 torus is optimal: the first window of
    # proposals gains nothing, so the search ends there, far before the budget or the
    # refused-in-a-row limit, and returns the start
    m, a, p = _setup()
    start = build_mapping("inorder", p, m, a).core_of_rank
    run = refine_search(start, p, m, a, seed=0, budget=20000)
    assert run.stop == "small gain"
    assert run.proposals == GAIN_WINDOW < MAX_REFUSED and run.windows == 1
    assert run.accepted == 0 and np.array_equal(run.cores, start)
    # without the small-gain stop the same search runs until MAX_REFUSED refusals in a row
    full = refine_search(start, p, m, a, seed=0, budget=20000, min_gain=0)
    assert full.stop == "refused" and full.proposals >= MAX_REFUSED > run.proposals


def test_refine_small_gain_stop_is_deterministic_and_keeps_improving_a_bad_start():
    m, a, p = _setup()
    start = build_mapping("random", p, m, a, seed=2).core_of_rank
    one = refine_search(start, p, m, a, seed=0, budget=20000)
    two = refine_search(start, p, m, a, seed=0, budget=20000)
    assert np.array_equal(one.cores, two.cores)
    assert (one.proposals, one.accepted, one.stop) == (two.proposals, two.accepted, two.stop)
    assert one.proposals > GAIN_WINDOW and one.accepted > 0   # gains at first: goes on
    assert np.array_equal(one.cores, refine_cores(start, p, m, a, seed=0, budget=20000))
    before = _State(p, m, a, "dor", start).objective()
    assert _State(p, m, a, "dor", one.cores).objective() < before


def test_refine_budget_zero_returns_start():
    m, a, p = _setup()
    start = build_mapping("random", p, m, a, seed=2).core_of_rank
    out = build_mapping("refine:random", p, m, a, seed=2, budget=0).core_of_rank
    assert np.array_equal(out, start)


def test_refine_moves_to_free_cores_on_partial_allocation():
    m, a, p = _setup(machine="torus:4x4x4:cores=2", pattern="stencil:4x4:periodic")
    start = build_mapping("random", p, m, a, seed=3).core_of_rank
    out = refine_cores(start, p, m, a, seed=0, budget=10000)
    assert len(set(out.tolist())) == 16
    assert _State(p, m, a, "dor", out).objective() < _State(p, m, a, "dor", start).objective()


def test_auto_picks_best_by_ranking_key_and_reuses_one_evaluator(monkeypatch):
    import rankmap.evaluation as evaluation
    made = []
    orig = evaluation.Evaluator.__init__

    def counting(self, *args, **kw):
        made.append(1)
        orig(self, *args, **kw)

    monkeypatch.setattr(evaluation.Evaluator, "__init__", counting)
    m, a, p = _setup(nodes="0-31", pattern="stencil:4x8")
    comp = auto_select(p, m, a, budget=2000)
    assert len(made) == 1
    mets = [e.metrics for e in comp.candidates]
    assert best_first_order(mets) == list(range(len(mets)))
    names = {e.name for e in comp.candidates}
    # every mapper was tried: evaluated, or pruned by a bound of its ranking key
    assert {"greedy", "rcb", "graph", "mueller-resch", "TXYZ"} <= names | set(comp.skipped)
    assert all(r.startswith("pruned") for r in comp.skipped.values())
    assert any(n.startswith("refine:") for n in names)
    # the winner is at least as good as every candidate evaluated independently
    ev = Evaluator(m, a, p)
    for name in ("inorder", "greedy", "rcb", "graph"):
        other = ev.evaluate(build_mapping(name, p, m, a)).metrics
        assert primary(comp.best.metrics) <= (1 + NEAR_TIE) * primary(other)


def test_auto_as_plain_registered_mapper():
    m, a, p = _setup(nodes="0-15", pattern="stencil:4x4")
    cores = build_placement("auto", p, m, a, budget=1000).core_of_rank
    assert sorted(cores.tolist()) == list(range(16))


def test_cli_map_auto_prints_table_reason_and_writes_winner(capsys, tmp_path):
    out = tmp_path / "map"
    rc = main(["map", "--machine", "torus:8x8x8", "--nodes", "0-255", "--pattern",
               "stencil:8x4x8", "--mapping", "auto", "--emit", "bgp", "-o", str(out),
               "--budget", "2000"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "winner:" in cap.out and "lighter" in cap.out and "than inorder" in cap.out
    why = cap.out.split("why: ", 1)[1]
    assert why.startswith(cap.out.split("winner: ", 1)[1].split(":", 1)[0] + ": predicted ")
    assert "candidates evaluated" in why
    winner = cap.out.split("winner: ", 1)[1].split(":", 1)[0]
    assert f"{winner} placement of 256 ranks" in cap.err
    lines = [ln for ln in out.read_text().splitlines() if not ln.startswith("#")]
    assert len(lines) == 256


@pytest.mark.parametrize("bad", ["-2", "99999999999999999999", "1.5"])
def test_cli_budget_rejects_bad_values_as_written(capsys, bad):
    rc = main(["compare", "--machine", "torus:4x4", "--pattern", "stencil:4x4",
               "--mappings", "refine:rcb", "--budget", bad])
    err = capsys.readouterr().err
    assert rc == 2 and f"bad --budget {bad}: must be a whole number of moves from 0" in err


def test_a_single_candidate_is_counted_in_the_singular(capsys):
    assert main(["compare", "--machine", "torus:4x4", "--pattern", "stencil:4x4",
                 "--mappings", "rcb", "--time-model", "off"]) == 0
    assert "; 1 candidate evaluated" in capsys.readouterr().out


def test_refine_stops_on_its_route_entry_bound(monkeypatch):
    # long routes on a big machine: the search ends on the route entries it looked at,
    # counted, not timed, so the same seed stops at the same proposal
    from rankmap.mappers import refine as refine_module
    m, a, p = _setup()
    start = build_mapping("random", p, m, a, seed=2).core_of_rank
    free = refine_search(start, p, m, a, seed=0, budget=20000, min_gain=0)
    monkeypatch.setattr(refine_module, "REFINE_WORK", 2000)
    runs = [refine_search(start, p, m, a, seed=0, budget=20000, min_gain=0) for _ in range(2)]
    assert runs[0].stop == "work" and 0 < runs[0].proposals < free.proposals
    assert runs[0].proposals == runs[1].proposals
    assert np.array_equal(runs[0].cores, runs[1].cores)
    assert _State(p, m, a, None, runs[0].cores).objective() <= _State(p, m, a, None,
                                                                         start).objective()


def test_refine_relieves_the_busiest_links_one_at_a_time():
    # rcb on a scattered allocation: a rule on (busiest link, hop-bytes) alone stopped at
    # 5 MiB (2.27 GiB hop-bytes) from rcb's 6 MiB, since relieving one of the links at 5 MiB
    # changes neither while others carry it; counting the links at the busiest value lets the
    # search take them down one by one, to 4 MiB, with no more hop-bytes than rcb's
    from rankmap.mappers import validate_mapping
    m = parse_machine("torus:8x8x8")
    a = parse_allocation("random:256:seed=2", m)
    p = parse_pattern("stencil:16x16", default_ranks=a.n_cores)
    ev = Evaluator(m, a, p)
    start = build_mapping("rcb", p, m, a, 0).core_of_rank
    out = refine_search(start, p, m, a, 0, None, ev.router)
    before = ev.evaluate(validate_mapping("rcb", start, p.n_ranks, a)).metrics
    after = ev.evaluate(validate_mapping("refine:rcb", out.cores, p.n_ranks, a)).metrics
    assert before["max_link_bytes"] == 6 * 2**20
    assert after["max_link_bytes"] <= 4 * 2**20
    assert after["hop_bytes"] <= before["hop_bytes"]
    assert after["predicted_time_s"] < before["predicted_time_s"]


def test_default_budget_follows_the_ranks_within_its_bounds():
    from rankmap.mappers.refine import DEFAULT_BUDGET, MAX_DEFAULT_BUDGET, default_budget
    assert default_budget(1) == default_budget(2500) == DEFAULT_BUDGET == 20000
    assert default_budget(4096) == 8 * 4096
    assert default_budget(8192) == default_budget(10**6) == MAX_DEFAULT_BUDGET == 65536


def test_refine_counts_every_share_of_a_split_route_as_work():
    # minimal routing on a dragonfly with 4 parallel global links splits a flow between groups
    # over 4 paths: the work of a move is the moved flows plus the hop links of their old and
    # new routes, share by share, not their hops (the bound that keeps a refinement on a big
    # dragonfly from running for minutes)
    from rankmap.routing import router_for
    m, a, p = _setup("dragonfly:groups=3,rows=2,cols=2,nodes=2,gports=2,global=4", "stencil:6x4")
    router = router_for(m, "minimal")
    start = build_mapping("inorder", p, m, a, seed=0).core_of_rank
    st = _State(p, m, a, router, start)
    ph = st.phases[0]
    r, c = 0, int(start[-1])                      # rank 0 to the last rank's core: a swap
    moved = np.flatnonzero((ph.src == 0) | (ph.dst == 0) | (ph.src == p.n_ranks - 1)
                           | (ph.dst == p.n_ranks - 1))
    node = st.node_of
    after = start.copy()
    after[[r, p.n_ranks - 1]] = after[[p.n_ranks - 1, r]]
    hop = m.hop_links
    entries = 0
    hops = 0.0
    for cores in (start, after):
        paths = router.paths(node(cores[ph.src[moved]]), node(cores[ph.dst[moved]])).tocsr()
        entries += int(np.count_nonzero(hop[paths.indices] & (paths.data > 0)))
        hops += float(paths.multiply(hop[None, :].astype(float)).sum())
    before = st.work
    kept = st.try_move({r: c, p.n_ranks - 1: int(start[r])})
    assert not kept                       # (a kept move also counts the busiest links found)
    assert st.work - before == len(moved) + entries
    assert entries > 1.5 * hops


def test_auto_reports_the_default_placement_even_when_its_bound_pruned_it(monkeypatch):
    """inorder (what a job gets without rankmap) is evaluated after the search when its bound
    pruned it, so the pick is said against it; the search, its pick and every other
    candidate are unchanged."""
    from rankmap.report.render import reference
    from rankmap.selection import auto, compare
    m = parse_machine("torus:8x8x8")
    a = parse_allocation(None, m)
    p = parse_pattern("stencil:32x16:box")
    with monkeypatch.context() as mp:
        mp.setattr(auto, "BASELINE", "no such placement")
        before = auto_select(p, m, a)
    after = auto_select(p, m, a)
    assert "inorder" in before.skipped and before.find("inorder") is None
    assert "inorder" not in after.skipped and reference(after).name == "inorder"
    assert [(e.name, e.metrics) for e in after.candidates if e.name != "inorder"] == \
        [(e.name, e.metrics) for e in before.candidates]
    alone = compare(m, a, p, ["inorder"]).candidates[0]
    assert after.find("inorder").metrics == alone.metrics
    assert after.best.metrics["predicted_time_s"] < alone.metrics["predicted_time_s"]


def test_auto_with_budget_0_refines_nothing_and_says_so():
    """--budget 0 is 'no refinement': rows refine:X identical to their starts said that
    refining was tried (and were counted among the candidates evaluated)."""
    from rankmap.allocation import whole_machine
    from rankmap.machines import parse_machine
    from rankmap.patterns import parse_pattern
    from rankmap.selection import auto_select
    m = parse_machine("torus:4x4:cores=2")
    comp = auto_select(parse_pattern("stencil:8x4:box"), m, whole_machine(m), 0, budget=0)
    assert not any(e.name.startswith("refine:") for e in comp.candidates)
    refines = {k: v for k, v in comp.skipped.items() if k.startswith("refine:")}
    assert len(refines) == 2 and set(refines.values()) == {"not refined: --budget 0"}
