"""``refine_search``'s ``catch``: a search that cannot be expected to reach a busiest link ends.

``auto`` hands the refinement of each of its starts the best start's busiest link bytes. A
search above them ends after a window when, at the pace of its last :data:`BEHIND_WINDOWS`
windows, the rest of its budget would not bring its busiest link down to them
(``kernels.refine_grid.window_stop``, called by both the compiled and the Python loop).
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rankmap.allocation import whole_machine
from rankmap.kernels.refine_grid import (GO_ON, STOP_BEHIND, STOP_SMALL_GAIN, window_stop)
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping
from rankmap.mappers.refine import BEHIND_WINDOWS, _State, refine_search
from rankmap.metrics import ranking_key
from rankmap.patterns import parse_pattern
from rankmap.selection import auto as auto_module

K = BEHIND_WINDOWS


def _counters(left, windows):
    """The search's counters (proposals left, made, kept, windows, refused, stale)."""
    return np.array([left, 0, 0, windows, 0, 0], dtype=np.int64)


def _stop(left, windows, behind, now, window=100, min_gain=0.0, start=None):
    start = np.array([now, 1.0, 1e9] if start is None else start, dtype=np.float64)
    scal = np.array([now, 1.0, 1e9, 0.0, 0.0], dtype=np.float64)
    code = window_stop(_counters(left, windows), start, behind, window, min_gain, scal)
    return code, start


def test_window_stop_extrapolates_the_pace_of_the_last_windows():
    # K windows ago the busiest link carried 200 bytes, now 180: 5 bytes a window
    behind = np.array([100.0, 200.0, 0, 0, 0])[:K + 1]
    # 10 windows left: 180 - 50 = 130 > 100, cannot catch up
    code, _ = _stop(1000, K, behind.copy(), 180.0)
    assert code == STOP_BEHIND
    # 20 windows left: 180 - 100 = 80 <= 100, may catch up; history moves on
    b = behind.copy()
    code, start = _stop(2000, K, b, 180.0)
    assert code == GO_ON and b[1 + K % K] == 180.0 and start[0] == 180.0
    # exactly reaching the catch is enough
    assert _stop(1600, K, behind.copy(), 180.0)[0] == GO_ON
    # no catch, or already at it or below: never behind, whatever the pace
    assert _stop(10, K, np.array([0.0] + [200.0] * K), 180.0)[0] == GO_ON
    assert _stop(10, K, np.array([180.0] + [180.0] * K), 180.0)[0] == GO_ON
    # fewer than K windows done: no pace yet, the busiest link is recorded in its slot
    b = np.array([100.0] + [0.0] * K)
    assert _stop(10, K - 1, b, 180.0)[0] == GO_ON and b[1 + (K - 1) % K] == 180.0


def test_window_stop_small_gain_comes_first():
    # no figure dropped: the small-gain stop, whatever the catch says
    start = [180.0, 1.0, 1e9]
    code, _ = _stop(1000, K, np.array([100.0, 200.0] + [0.0] * (K - 1)), 180.0,
                    min_gain=1e-3, start=start)
    assert code == STOP_SMALL_GAIN


def _case():
    machine = parse_machine("torus:4x4x4:cores=2")
    allocation = whole_machine(machine)
    pattern = parse_pattern("stencil:8x4x4:box")
    return machine, allocation, pattern


def _top(cores, pattern, machine, allocation):
    return _State(pattern, machine, allocation, "dor", np.asarray(cores)).progress()[0]


@pytest.mark.parametrize("compiled", [False, True])
def test_a_search_far_behind_ends_early_and_never_worse(compiled):
    machine, allocation, pattern = _case()
    start = build_mapping("random", pattern, machine, allocation, seed=4).core_of_rank
    best = build_mapping("rcb", pattern, machine, allocation).core_of_rank
    catch = _top(best, pattern, machine, allocation)
    assert _top(start, pattern, machine, allocation) > 2 * catch
    free = refine_search(start, pattern, machine, allocation, 3, 20000, window=200, min_gain=0,
                         compiled=compiled)
    cut = refine_search(start, pattern, machine, allocation, 3, 20000, window=200, min_gain=0,
                        catch=catch / 4, compiled=compiled)
    assert free.stop != "behind" and cut.stop == "behind"
    assert K * 200 <= cut.proposals < free.proposals
    assert _top(cut.cores, pattern, machine, allocation) <= _top(start, pattern, machine,
                                                                   allocation)
    # the same input gives the same stop
    again = refine_search(start, pattern, machine, allocation, 3, 20000, window=200,
                          min_gain=0, catch=catch / 4, compiled=compiled)
    assert np.array_equal(again.cores, cut.cores) and again.proposals == cut.proposals


def test_the_best_starts_own_search_is_never_cut():
    machine, allocation, pattern = _case()
    start = build_mapping("random", pattern, machine, allocation, seed=4).core_of_rank
    top = _top(start, pattern, machine, allocation)
    free = refine_search(start, pattern, machine, allocation, 3, 6000, window=200)
    own = refine_search(start, pattern, machine, allocation, 3, 6000, window=200,
                        catch=top * (1 + auto_module.CATCH_SLACK))
    assert np.array_equal(free.cores, own.cores)
    assert (free.proposals, free.accepted, free.stop) == (own.proposals, own.accepted, own.stop)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_a_catch_that_is_not_a_positive_number_of_bytes_is_refused(bad):
    machine, allocation, pattern = _case()
    start = np.arange(pattern.n_ranks)
    with pytest.raises(ValueError, match="catch"):
        refine_search(start, pattern, machine, allocation, 0, 100, catch=bad)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10 ** 6), st.sampled_from([0.1, 0.5, 0.9, 1.0]),
       st.sampled_from(["torus:4x4:cores=2", "mesh:4x3:cores=2", "torus:4x3x2"]))
def test_compiled_and_python_loops_stop_behind_alike(seed, scale, spec):
    machine = parse_machine(spec)
    allocation = whole_machine(machine)
    pattern = parse_pattern(f"pairs:random:seed={seed % 1000}",
                            default_ranks=allocation.n_cores)
    start = np.random.default_rng(seed).permutation(allocation.n_cores)[:pattern.n_ranks]
    catch = scale * _top(start, pattern, machine, allocation)
    if catch <= 0:
        return
    runs = [refine_search(start, pattern, machine, allocation, seed, 3000, window=50,
                          min_gain=0, catch=catch, compiled=c) for c in (False, True)]
    assert np.array_equal(runs[0].cores, runs[1].cores)
    assert (runs[0].proposals, runs[0].accepted, runs[0].windows, runs[0].stop) == \
        (runs[1].proposals, runs[1].accepted, runs[1].windows, runs[1].stop)


def test_auto_gives_its_refinements_the_best_starts_busiest_link(monkeypatch):
    seen = []
    real = auto_module.refine_cores

    def spy(*args, **kw):
        seen.append(kw.get("catch"))
        return real(*args, **kw)

    monkeypatch.setattr(auto_module, "refine_cores", spy)
    machine, allocation, pattern = _case()
    comparison = auto_module.auto_select(pattern, machine, allocation, seed=0, budget=2000)
    best = min((e for e in comparison.candidates if not e.name.startswith("refine:")),
               key=lambda e: ranking_key(e.metrics))
    assert seen
    assert seen == [best.metrics["max_link_bytes"] * (1 + auto_module.CATCH_SLACK)] * len(seen)


def test_fewer_links_at_the_busiest_value_count_only_at_a_pace_that_gets_there():
    """Relieving links at the busiest value one by one is how it comes down; a window that
    relieves too few for the budget left to take the last of them off it (even at
    COUNT_PACE_MARGIN times its pace) brings no gain: the busiest link would stay."""
    from rankmap.kernels.refine_grid import COUNT_PACE_MARGIN

    window, left = 1000, 45000                        # 45 windows left
    hb = 1e12

    def stop(count_before, count_now, top_now=100.0, hb_now=hb):
        start = np.array([100.0, count_before, hb], dtype=np.float64)
        scal = np.array([top_now, count_now, hb_now, 0.0, 0.0], dtype=np.float64)
        behind = np.zeros(K + 1)
        return window_stop(_counters(left, 3), start, behind, window, 1e-3, scal)

    # 8 of 4,096 a window: 2 x 8 x 45 = 720 links, far from all: no gain, the search ends
    assert stop(4096.0, 4088.0) == STOP_SMALL_GAIN
    # at a pace that would take them all off (with the margin), it goes on
    fast = 4096.0 / (COUNT_PACE_MARGIN * 45) + 1
    assert stop(4096.0, 4096.0 - fast) == GO_ON
    # just short of it, it ends
    assert stop(4096.0, 4096.0 - (4096.0 - 1) / (COUNT_PACE_MARGIN * 45 + 1) + 1) \
        == STOP_SMALL_GAIN
    # a lower busiest value, or hop-bytes still coming down, go on whatever the count does
    assert stop(4096.0, 4095.0, top_now=99.0) == GO_ON
    assert stop(4096.0, 4095.0, hb_now=hb * (1 - 1e-3)) == GO_ON


@pytest.mark.parametrize("time_model", [True, False])
def test_a_second_start_far_behind_the_best_is_not_refined(monkeypatch, time_model):
    """``auto`` refines its second best candidate only when its ranking value (predicted
    time, or busiest link bytes with the time model off) is within REFINE_SPREAD of the
    best's; one further behind is listed as skipped with the ratio, the progress bar still
    counts it, and the pick is the one refining both gives (a 2-D stencil on a 3-D torus:
    ``greedy`` first, the next 3x behind it)."""
    from rankmap.timing import TimeOptions

    machine = parse_machine("torus:4x4x4")
    allocation = whole_machine(machine)
    pattern = parse_pattern("stencil:8x8")
    opts = None if time_model else TimeOptions(enabled=False)
    key = "predicted_time_s" if time_model else "max_link_bytes"
    monkeypatch.setattr(auto_module, "REFINE_SPREAD", float("inf"))
    both = auto_module.auto_select(pattern, machine, allocation, seed=0, time_options=opts)
    starts = [e for e in both.candidates if not e.name.startswith("refine:")][:2]
    ratio = starts[1].metrics[key] / starts[0].metrics[key]
    name = f"refine:{starts[1].name}"
    assert ratio > 2 and name in [e.name for e in both.candidates]
    # a spread just below the second start's ratio leaves its refinement out
    monkeypatch.setattr(auto_module, "REFINE_SPREAD", ratio * (1 - 1e-9))
    ticks, total = [], []
    one = auto_module.auto_select(pattern, machine, allocation, seed=0, time_options=opts,
                                  progress=ticks.append, total_hook=total.append)
    assert name not in [e.name for e in one.candidates]
    assert one.skipped[name].startswith("not refined: its start's")
    assert f"{ratio:.3g}x the best candidate's" in one.skipped[name]
    assert len(ticks) == total[0] and name in ticks
    assert one.best.name == both.best.name
    assert np.array_equal(one.best.mapping.core_of_rank, both.best.mapping.core_of_rank)
    # a spread just above it keeps it
    monkeypatch.setattr(auto_module, "REFINE_SPREAD", ratio * (1 + 1e-9))
    again = auto_module.auto_select(pattern, machine, allocation, seed=0, time_options=opts)
    assert [e.name for e in again.candidates] == [e.name for e in both.candidates]
