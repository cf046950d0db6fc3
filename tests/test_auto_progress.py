"""What ``auto``'s progress bar says and when (through its stage and progress hooks): one
current step per worker, ``routing X`` only when X is routed, pruned candidates counted as
soon as they are sure to be pruned, the total reached; ``compare --mappings auto`` counts
auto's steps as ``map`` does; the MPI processes but rank 0 leave out the baseline row. The
search's result never changes."""

import json
from contextlib import contextmanager

import numpy as np
import pytest

from rankmap.allocation import parse_allocation
from rankmap.cli import build_parser, common, main
from rankmap.machines import parse_machine
from rankmap.patterns import parse_pattern
from rankmap.selection import auto_select, candidate_names
from rankmap.selection.parallel import ForkExecutor, SerialExecutor

#: 512 ranks: most rank orders are pruned before routing, a few after
MEDIUM = ("torus:8x8x4:cores=2", "stencil:16x8x4:box")


@pytest.fixture(scope="module")
def medium():
    machine = parse_machine(MEDIUM[0])
    allocation = parse_allocation(None, machine)
    return machine, allocation, parse_pattern(MEDIUM[1], default_ranks=allocation.n_cores)


class _Bar:
    """A rich Progress stand-in: every description shown, steps completed."""

    def __init__(self):
        self.shown, self.completed = [], 0

    def update(self, task, description=None, advance=0):
        if description is not None:
            self.shown.append(description)
        self.completed += advance


def _in_flight(description: str, label: str) -> list[str]:
    text = description[len(label) + 2:] if description.startswith(label + ": ") else ""
    return [t for t in text.split(", ") if t]


def _run(medium, executor):
    machine, allocation, pattern = medium
    events, bar = [], _Bar()
    prog = common.SearchProgress(bar, 0, "auto")

    def stage(name, what):
        events.append(("stage", name, what))
        prog.stage(name, what)

    def done(name):
        events.append(("done", name))
        prog.done(name)
    comp = auto_select(pattern, machine, allocation, executor=executor, stage=stage,
                       progress=done)
    return comp, events, bar


def _same(a, b):
    assert json.dumps(a.to_json()) == json.dumps(b.to_json())
    assert list(a.skipped.items()) == list(b.skipped.items())
    for x, y in zip(a.candidates, b.candidates):
        assert np.array_equal(x.mapping.core_of_rank, y.mapping.core_of_rank)


def test_only_routed_candidates_are_said_routing_one_at_a_time(medium):
    machine, allocation, pattern = medium
    comp, events, bar = _run(medium, SerialExecutor())
    _same(comp, auto_select(pattern, machine, allocation))       # no hooks: the same result
    before = [n for n, why in comp.skipped.items() if why.startswith("pruned before routing")]
    assert len(before) > 10
    routed = {n for kind, n, *what in events if kind == "stage" and what == ["routing"]}
    assert not routed & set(before)                 # never routed: never said routing
    assert {"building", "bounding"} <= {e[2] for e in events if e[0] == "stage"}
    # one process, one job: one step at a time on the bar
    assert max(len(_in_flight(d, "auto")) for d in bar.shown) == 1
    assert _in_flight(bar.shown[-1], "auto") == []
    # every step counted once, the total reached
    total = len(candidate_names(pattern, machine, allocation)) + 2
    done = [e[1] for e in events if e[0] == "done"]
    assert len(done) == len(set(done)) == total and bar.completed == total


def test_pruned_candidates_count_as_soon_as_they_are_sure(medium):
    comp, events, _bar = _run(medium, SerialExecutor())
    done = [e[1] for e in events if e[0] == "done"]
    before = {n for n, why in comp.skipped.items() if why.startswith("pruned before routing")}
    evaluated = {c.name for c in comp.candidates if not c.name.startswith("refine:")}
    last_evaluated = max(done.index(n) for n in evaluated if n in done)
    # not all at the end: most pruned candidates are counted before the last routed one
    early = [n for n in before if done.index(n) < last_evaluated]
    assert len(early) >= len(before) // 2, (early, done)


def test_two_workers_show_at_most_two_steps_and_the_same_result(medium):
    serial, _, _ = _run(medium, SerialExecutor())
    forked, events, bar = _run(medium, ForkExecutor(2))
    _same(serial, forked)
    assert max(len(_in_flight(d, "auto")) for d in bar.shown) <= 2
    before = {n for n, why in forked.skipped.items() if why.startswith("pruned before routing")}
    said = {n for kind, n, *what in events if kind == "stage" and what == ["bounding"]}
    assert before <= said
    assert bar.completed == len([e for e in events if e[0] == "done"])


def test_compare_counts_autos_steps(monkeypatch, medium, capsys):
    machine, allocation, pattern = medium
    seen = {}

    @contextmanager
    def fake_progress(total, label, *more, **kw):
        bar = _Bar()
        prog = common.SearchProgress(bar, 0, label, *more, **kw)
        seen.update(total=total, bar=bar)

        real_done = prog.done

        def done(name):
            seen.setdefault("before_done", {})[name] = bar.completed
            real_done(name)
        prog.done = done
        yield prog

    monkeypatch.setattr("rankmap.cli.compare.search_progress", fake_progress)
    argv = ["compare", "-m", MEDIUM[0], "-p", MEDIUM[1], "--mappings", "TXYZ,auto",
            "--jobs", "1", "--format", "json"]
    assert main(argv) == 0
    auto_steps = len(candidate_names(pattern, machine, allocation)) + 2
    assert seen["total"] == auto_steps + 1
    bar = seen["bar"]
    assert bar.completed == seen["total"]
    # auto's own candidates moved the bar before auto's row was done
    assert seen["before_done"]["auto"] >= auto_steps - 1
    assert any("for auto" in d for d in bar.shown)
    capsys.readouterr()


def test_search_progress_nested_steps():
    bar = _Bar()
    prog = common.SearchProgress(bar, 0, "compare", {"auto": 3})
    prog.stage("auto", "building")
    prog.stage("auto", "building XYZ for")
    prog.stage("TXYZ", "routing")
    assert bar.shown[-1] == "compare: building XYZ for auto, routing TXYZ"
    prog.stage("auto", "bounding XYZ for")
    prog.stage("auto", "idle XYZ for")
    assert bar.shown[-1] == "compare: building auto, routing TXYZ"
    for name in ("XYZ", "rcb", "refine:rcb"):
        prog.stage("auto", f"done {name} for")
    assert bar.completed == 2                  # the last step: when auto itself is done
    prog.done("auto")
    prog.done("TXYZ")
    assert bar.completed == 4 and bar.shown[-1] == "compare"


def test_other_mpi_processes_leave_out_the_baseline(monkeypatch, medium):
    """map's auto on a process other than rank 0 uses the pick only: the baseline (inorder,
    evaluated after the search for the table) is not evaluated there; the pick is the
    same."""
    from rankmap.cli import map_cmd
    from rankmap.selection import auto as auto_mod

    machine, allocation, pattern = medium
    calls = []
    real = auto_mod._with_baseline

    def counted(*a, **kw):
        calls.append(1)
        return real(*a, **kw)
    monkeypatch.setattr(auto_mod, "_with_baseline", counted)

    class Rank1(SerialExecutor):
        rank = 1

    args = build_parser().parse_args(
        ["map", "-m", MEDIUM[0], "-p", MEDIUM[1], "--mapping", "auto", "--emit", "openmpi",
         "-o", "unused"])
    other = map_cmd.run_auto(args, machine, allocation, pattern, Rank1())
    assert calls == []
    full = auto_select(pattern, machine, allocation, args.seed)
    assert calls == [1] and "inorder" in [c.name for c in full.candidates]
    assert np.array_equal(other.core_of_rank, full.best.mapping.core_of_rank)
    lean = auto_select(pattern, machine, allocation, args.seed, baseline=False)
    assert lean.best.name == full.best.name
    assert "inorder" in lean.skipped and "inorder" not in full.skipped
    assert [c.name for c in lean.candidates] == [c.name for c in full.candidates
                                                 if c.name != "inorder"]
    for a in lean.candidates:
        b = next(c for c in full.candidates if c.name == a.name)
        assert a.metrics == b.metrics


def test_callers_that_use_the_pick_alone_skip_the_baseline(monkeypatch, capsys):
    """evaluate --mapping auto and build_placement('auto') use auto's pick only: the table's
    inorder baseline, evaluated after the search when its bound pruned it, was CPU spent for
    nothing (on every process under mpirun)."""
    from rankmap.allocation import whole_machine
    from rankmap.cli import main
    from rankmap.machines import parse_machine
    from rankmap.patterns import parse_pattern
    from rankmap.selection import build_placement

    def boom(*args, **kwargs):
        raise AssertionError("the baseline was evaluated")

    machine = parse_machine("torus:4x4x4:cores=2")
    pattern = parse_pattern("stencil:8x16")
    monkeypatch.setattr("rankmap.selection.auto._with_baseline", boom)
    placement = build_placement("auto", pattern, machine, whole_machine(machine))
    assert sorted(placement.core_of_rank.tolist()) == list(range(128))
    assert main(["evaluate", "-m", "torus:4x4x4:cores=2", "-p", "stencil:8x16",
                 "--mapping", "auto", "--jobs", "1"]) == 0
    capsys.readouterr()
