"""The candidate loop on forked workers (``--jobs``): the same result as in-process, in the
same order, with the same skipped reasons and the same first error; dead workers and Ctrl-C
end cleanly; the progress bar sees every candidate's steps."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from rankmap.allocation import parse_allocation
from rankmap.cli import main
from rankmap.cli.common import SearchProgress
from rankmap.errors import RankmapError
from rankmap.machines import parse_machine
from rankmap.patterns import parse_pattern
from rankmap.evaluation import Evaluator
from rankmap.selection import auto_select, build_placement, compare
from rankmap.selection.candidates import evaluate_candidates
from rankmap.selection.parallel import (MAX_JOBS, SERIAL_WORK, Filler, ForkExecutor,
                                        SerialExecutor, death_cause, first_error,
                                        make_executor)

SMALL = ["-m", "torus:4x4:cores=2", "-n", "random:6:seed=3", "-p", "stencil:3x4:box"]


@pytest.fixture(scope="module")
def small():
    machine = parse_machine("torus:4x4:cores=2")
    allocation = parse_allocation("random:6:seed=3", machine)
    return machine, allocation, parse_pattern("stencil:3x4:box",
                                              default_ranks=allocation.n_cores)


def _same(a, b):
    """Two comparisons are identical: JSON, order, placements and every link load."""
    assert json.dumps(a.to_json()) == json.dumps(b.to_json())
    assert [c.name for c in a.candidates] == [c.name for c in b.candidates]
    assert list(a.skipped.items()) == list(b.skipped.items())
    for x, y in zip(a.candidates, b.candidates):
        assert np.array_equal(x.mapping.core_of_rank, y.mapping.core_of_rank)
        for p, q in zip(x.phases, y.phases):
            assert np.array_equal(p.link_bytes, q.link_bytes)
            assert np.array_equal(p.link_streams, q.link_streams)


def test_compare_and_auto_identical_on_two_workers(small):
    machine, allocation, pattern = small
    # 'all' has inapplicable names here (cubes, rubik boxes): skipped with the same reasons;
    # auto inside compare spreads its own candidates and refinements
    names = "all,auto,cubes,rubik-tile"
    serial = compare(machine, allocation, pattern, names, skip_inapplicable=True,
                     executor=SerialExecutor())
    forked = compare(machine, allocation, pattern, names, skip_inapplicable=True,
                     executor=ForkExecutor(2))
    _same(serial, forked)
    assert serial.skipped and "auto" in [c.name for c in serial.candidates]
    _same(auto_select(pattern, machine, allocation, executor=SerialExecutor()),
          auto_select(pattern, machine, allocation, executor=ForkExecutor(2)))


def _task(item, stage):
    kind, delay = item
    stage(f"doing {kind}")
    time.sleep(delay)
    if kind == "fail":
        raise RankmapError(f"item failed after {delay}")
    if kind == "bug":
        raise KeyError("no such key")
    if kind == "die":
        os._exit(9)
    if kind == "xcpu":
        os.kill(os.getpid(), signal.SIGXCPU)
    return kind, os.getpid()


def test_first_error_in_order_wins_and_later_items_do_not_count():
    # item 1 fails late, item 3 fails at once: the serial loop would stop at item 1
    items = [("ok", 0.0), ("fail", 0.3), ("ok", 0.0), ("fail", 0.0), ("ok", 0.0)]
    for executor in (SerialExecutor(), ForkExecutor(3)):
        outs = executor.run(_task, items)
        assert outs[0].value[0] == "ok" and outs[1].error is not None
        assert not any(o.ran for o in outs[2:]) or executor.workers > 1
        assert [o.ran for o in outs[2:]] == [False, False, False]
        with pytest.raises(RankmapError, match="item failed after 0.3"):
            first_error(outs)


def test_results_in_order_from_several_processes():
    items = [("ok", d) for d in (0.2, 0.0, 0.1, 0.0, 0.0)]
    stages = []
    outs = ForkExecutor(2).run(_task, items, on_stage=lambda i, t: stages.append(i))
    assert [o.value[0] for o in outs] == ["ok"] * 5
    assert len({o.value[1] for o in outs}) == 2 and os.getpid() not in {o.value[1] for o in outs}
    assert sorted(stages) == [0, 1, 2, 3, 4]


def test_worker_errors_and_death():
    outs = ForkExecutor(2).run(_task, [("ok", 0.0), ("bug", 0.0)])
    with pytest.raises(KeyError) as info:
        first_error(outs)
    assert "no such key" in str(info.value.__cause__)  # the worker's traceback
    with pytest.raises(RankmapError, match=r"worker process running \('die', 0.0\) died "
                       r"\(exit status 9"):
        ForkExecutor(2).run(_task, [("ok", 0.1), ("die", 0.0)])
    # a worker killed by a signal names it, and guesses memory only for SIGKILL
    with pytest.raises(RankmapError, match=r"died \(killed by SIGXCPU: CPU time limit"):
        ForkExecutor(2).run(_task, [("ok", 0.1), ("xcpu", 0.0)])


def test_death_cause_words():
    assert death_cause(3) == "exit status 3"
    assert death_cause(-signal.SIGKILL).startswith("killed by SIGKILL; out of memory?")
    assert "out of memory" not in death_cause(-signal.SIGXCPU)
    assert death_cause(-200) == "killed by signal 200"
    assert death_cause(None) == "it did not report an exit status"


def test_jobs_values():
    assert isinstance(make_executor(1), SerialExecutor)
    assert make_executor(2).workers == 2 and make_executor().workers == len(os.sched_getaffinity(0))
    for bad in (0, -1, MAX_JOBS + 1, 1.5, True):
        with pytest.raises(RankmapError, match="bad --jobs"):
            make_executor(bad)


def test_default_jobs_runs_a_tiny_job_in_process(small):
    # with the default --jobs a job under SERIAL_WORK does not fork (forking would cost more
    # than the tasks); an explicit --jobs N always forks; the result is the same either way
    default = make_executor()
    if default.workers > 1:
        assert isinstance(default.for_work(SERIAL_WORK - 1), SerialExecutor)
        assert default.for_work(SERIAL_WORK) is default
    assert make_executor(2).for_work(1).workers == 2
    machine, allocation, pattern = small
    built_here = []

    def build(name):
        built_here.append(name)           # a forked worker's append is lost with it
        return build_placement(name, pattern, machine, allocation, 0)

    ev = Evaluator(machine, allocation, pattern)
    names = ["inorder", "rcb", "greedy", "hilbert"]
    tiny, _ = evaluate_candidates(ev, names, build,
                                  executor=ForkExecutor(2, serial_below=SERIAL_WORK))
    assert built_here == names
    built_here.clear()
    forked, _ = evaluate_candidates(ev, names, build, executor=ForkExecutor(2))
    assert len(built_here) < len(names)
    assert [json.dumps(e.to_json()) for e in tiny] == [json.dumps(e.to_json()) for e in forked]


def test_cli_jobs_same_output_and_same_error(capsys):
    out = {}
    for jobs in ("1", "2"):
        assert main(["compare", *SMALL, "--mappings", "all", "--format", "csv",
                     "--jobs", jobs]) == 0
        out[jobs] = capsys.readouterr().out
    assert out["1"] == out["2"] and out["1"].count("\n") > 20
    errors = {}
    for jobs in ("1", "2"):
        assert main(["compare", *SMALL, "--mappings", "XYT,rubik: app tile 5,cubes",
                     "--jobs", jobs]) == 2
        errors[jobs] = capsys.readouterr().err.strip().splitlines()
    assert errors["1"] == errors["2"] and len(errors["1"]) == 1
    assert "rubik needs a box of nodes" in errors["1"][0]  # rubik's, the first to fail
    assert main(["compare", *SMALL, "--jobs", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--jobs" in err[0] and "'0'" in err[0]


def test_progress_sees_every_step(small):
    machine, allocation, pattern = small
    seen = []
    done = []
    for executor in (SerialExecutor(), ForkExecutor(2)):
        seen.clear()
        done.clear()
        auto_select(pattern, machine, allocation, executor=executor,
                    stage=lambda n, what: seen.append((n, what)), progress=done.append)
        names = {n for n, _ in seen}
        for name in names:
            steps = [w for n, w in seen if n == name]
            # building, then bounding (routing only when the candidate is routed); 'idle'
            # when its step is over but it is not done
            first = "refining" if name.startswith("refine:") else "building"
            assert steps[0] == first, (name, steps)
            assert set(steps) <= {first, "bounding", "routing", "idle"}, (name, steps)
        assert sorted(done) == sorted(names)
        assert sum(n.startswith("refine:") for n in names) == 2


def test_progress_line_lists_candidates_in_flight():
    class Bar:
        def __init__(self):
            self.desc, self.completed = "", 0

        def update(self, task, description=None, advance=0):
            self.desc = description if description is not None else self.desc
            self.completed += advance
    bar = Bar()
    prog = SearchProgress(bar, 0, "compare")
    prog.stage("TXYZ", "building")
    prog.stage("greedy", "routing")
    assert bar.desc == "compare: building TXYZ, routing greedy"
    prog.done("TXYZ")
    assert bar.desc == "compare: routing greedy" and bar.completed == 1


def test_ctrl_c_stops_the_workers(tmp_path):
    """SIGINT to the parent: it stops its workers and ends with KeyboardInterrupt."""
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent("""
        import multiprocessing, sys, time
        from rankmap.selection.parallel import ForkExecutor

        def task(item, stage):
            time.sleep(60)

        def started(i):
            if i == 1:
                print(" ".join(str(p.pid) for p in multiprocessing.active_children()),
                      flush=True)
        try:
            ForkExecutor(2).run(task, [0, 1, 2], on_start=started)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(130)
    """))
    # SIGINT as a terminal leaves it (a test run started in the background inherits it
    # ignored, and Python then never raises KeyboardInterrupt)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(pids) == 2
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in out
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    # killed outright (SIGKILL: no cleanup runs), the workers still go with their parent
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    pids = [int(p) for p in proc.stdout.readline().split()]
    proc.kill()
    proc.wait(timeout=60)
    deadline = time.time() + 30
    while time.time() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in pids)


def _default_sigint():
    """In the child before it runs Python: SIGINT back to its default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _alive(pid):
    """Whether process ``pid`` still runs (a zombie waiting for init does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_launch_search_procs_runs_the_search_with_the_launcher(tmp_path):
    """--search-procs K: the program's launcher first runs 'rankmap launch --dry-run' as a
    K-process job (here a fake mpirun that runs it once), then the program with its file."""
    import stat

    fake = tmp_path / "bin" / "mpirun"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho "CALL $*" >> "$LAUNCH_LOG"\n'
                    'case " $* " in *" --dry-run "*) shift 2; exec "$@" ;; esac\n'
                    'echo "ARGS $*"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "hf").write_text("node0 slots=2\nnode1 slots=2\nnode2 slots=2\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "PBS_", "OMPI_", "PMI_", "RANKMAP_MACHINE"))}
    env.update(PATH=f"{fake.parent}{os.pathsep}{env.get('PATH', '')}",
               LAUNCH_LOG=str(tmp_path / "log"))
    base = [sys.executable, "-c", "import sys; from rankmap.cli import main; sys.exit(main())",
            "launch", "--hostfile", "hf", "-m", "torus:3:cores=2", "-p", "stencil:3x2"]
    (tmp_path / "rf.hosts").write_text("the user's own\n")   # never the search's hostfile
    proc = subprocess.run(base + ["--search-procs", "3", "-o", "rf", "--force", "--", "mpirun",
                                  "-n", "6", "./app"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["ARGS --rankfile rf -n 6 ./app"]
    # (mpirun --version: asked once a process which MPI a plain mpirun is)
    calls = [c for c in (tmp_path / "log").read_text().splitlines() if c != "CALL --version"]
    assert len(calls) == 2 and calls[1] == "CALL --rankfile rf -n 6 ./app"
    assert calls[0].startswith("CALL -n 3 ") and " launch --dry-run --force " in calls[0]
    assert "/.rankmap-search-" in calls[0] and "rf.hosts" not in calls[0]
    assert "--nodes 0,1,2" in calls[0] and calls[0].endswith("-- mpirun -n 6 ./app")
    ref = subprocess.run(base + ["-o", "ref", "--dry-run", "--", "mpirun", "-n", "6", "./app"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert ref.returncode == 0, ref.stderr
    assert (tmp_path / "rf").read_text() == (tmp_path / "ref").read_text()
    assert (tmp_path / "rf.hosts").read_text() == "the user's own\n"
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".rankmap")]
    # a failing search is one line naming the search and the reason
    bad = subprocess.run(base + ["--search-procs", "2", "--mapping", "rubik: app tile 5", "-o",
                                 "rf2", "--", "mpirun", "-n", "6", "./app"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1] == (
        "rankmap launch: error: the placement search (mpirun -n 2) failed with exit status 2: "
        "tile 5 has 1 sizes, the space 3x2 has 2 dimensions")


def test_search_command_uses_the_launcher_family(tmp_path):
    from types import SimpleNamespace

    from rankmap.cli.launch import search_command

    alloc = parse_allocation("0-3", parse_machine("torus:4x4:cores=2"))
    args = SimpleNamespace(search_procs=8, search_launcher=None, pattern="stencil:4x2",
                           mapping="auto", seed=3, jobs=None)
    cmd = search_command(args, "torus:4x4:cores=2", ["srun", "-n", "8", "./app"], "slurm",
                         "h", alloc, "out")
    assert cmd[:3] == ["srun", "-n", "8"] and cmd[4:7] == ["launch", "--dry-run", "--force"]
    assert cmd[cmd.index("--nodes") + 1] == "0,1,2,3" and cmd[-4:] == ["srun", "-n", "8",
                                                                        "./app"]
    args.search_launcher = "srun --ntasks-per-node=1 -n 4"
    assert search_command(args, "x", ["srun", "./app"], "slurm", "h", alloc, "o")[:4] == \
        ["srun", "--ntasks-per-node=1", "-n", "4"]
    args.search_launcher = None
    with pytest.raises(RankmapError, match="smpirun simulates"):
        search_command(args, "x", ["smpirun", "./app"], "hostfile", "h", alloc, "o")


def test_dispatch_order_changes_nothing_but_who_starts_first():
    from rankmap.selection.candidates import dispatch_order

    assert dispatch_order(["TXYZ", "graph", "inorder", "refine:rcb", "swap:fold"]) == \
        [1, 3, 4, 0, 2]
    items = [("ok", 0.0), ("fail", 0.2), ("ok", 0.0), ("ok", 0.0), ("fail", 0.0)]
    started = []
    outs = ForkExecutor(2).run(_task, items, on_start=started.append, order=[4, 3, 2, 1, 0])
    assert started[:2] == [4, 3]
    assert outs[0].value[0] == "ok" and outs[1].error is not None
    assert [o.ran for o in outs[2:]] == [False, False, False]  # as if run in order
    with pytest.raises(RankmapError, match="after 0.2"):
        first_error(outs)


def test_study_on_two_workers_is_the_serial_study(tmp_path):
    from rankmap.study import StudyParams, run_study

    params = StudyParams(machine="torus:4x4:cores=4", pattern="stencil:box",
                         nodes=[2, 4], threads=[1, 2], mappings=["inorder", "rcb"], allocs=2,
                         routing=None, seed=1, time="model")
    serial = run_study(params, str(tmp_path / "a"), executor=SerialExecutor())
    forked = run_study(params, str(tmp_path / "b"), executor=ForkExecutor(3))
    assert forked.points == serial.points and len(serial.points) == 16
    assert (tmp_path / "a" / "results.jsonl").read_text() == \
        (tmp_path / "b" / "results.jsonl").read_text()



@pytest.mark.parametrize("spec,pat,before,after", [("torus:4x4x4", "fft2d:8x8", 0, 31),
                                                  ("torus:4x4x4:cores=2", "stencil:16x8:box",
                                                   0, 16),
                                                  ("torus:4x4x4", "stencil:8x8:periodic", 28,
                                                   3)])
def test_candidates_evaluated_where_built_keep_the_bound_orders_decisions(spec, pat, before,
                                                                          after):
    """With workers, ``auto`` evaluates each candidate where it is built; the bound order
    then takes the same decisions from those evaluations (pruned before routing, after
    routing from the same link loads, twins, the values recorded) as when it evaluates
    them itself, and a forked ``auto`` equals the serial one."""
    from rankmap.allocation import whole_machine
    from rankmap.mappers import build_mapping
    from rankmap.selection import auto as auto_mod
    from rankmap.selection.bounds import ranking_bound_kind

    machine = parse_machine(spec)
    allocation = whole_machine(machine)
    pattern = parse_pattern(pat)
    ev = Evaluator(machine, allocation, pattern)
    names = auto_mod.candidate_names(pattern, machine, allocation)
    plain, ahead = [], []
    for name in names:
        try:
            mapping = build_mapping(name, pattern, machine, allocation, 0)
        except RankmapError:
            continue
        plain.append(auto_mod._Prepare(ev, True).evaluate(mapping))
        ahead.append(auto_mod._Prepare(ev, True, speculate=True).evaluate(mapping))
    assert all(p.evaluation is None for p in plain) and all(p.evaluation for p in ahead)
    kind = ranking_bound_kind(ev)
    got, pruned = auto_mod._evaluate_in_bound_order(ev, ahead, kind, None)
    want, want_pruned = auto_mod._evaluate_in_bound_order(ev, plain, kind, None)
    assert pruned == want_pruned
    assert sum("before routing" in r for r in pruned.values()) == before
    assert sum("after routing" in r for r in pruned.values()) == after
    assert [e.name for e in got] == [e.name for e in want]
    assert [e.metrics for e in got] == [e.metrics for e in want]
    assert auto_mod._speculate(ForkExecutor(2), names, pattern, machine) == "fill"

    class NoFill(ForkExecutor):      # as the MPI executor: every candidate where it is built
        fills = False

    assert auto_mod._speculate(NoFill(2), names, pattern, machine) == "build"
    assert auto_mod._speculate(SerialExecutor(), names, pattern, machine) is None
    _same(auto_select(pattern, machine, allocation, executor=SerialExecutor()),
          auto_select(pattern, machine, allocation, executor=ForkExecutor(2)))


def test_refinements_fork_when_their_proposals_repay_it():
    """``auto``'s two refinements go to workers under the default ``--jobs`` when their
    expected proposals (8 a rank, or the budget) times the flows a proposal moves repay
    forking: a 4,000-rank stencil's do, a 64-rank one's run here."""
    from rankmap.selection.auto import _refine_work

    big, tiny = parse_pattern("stencil:80x50:box"), parse_pattern("stencil:4x4x4")
    assert 2 * _refine_work(big, None) >= SERIAL_WORK
    assert 2 * _refine_work(tiny, None) < SERIAL_WORK
    assert _refine_work(big, 100) < _refine_work(big, None)


def test_a_candidate_failing_ahead_of_time_is_judged_in_bound_order(monkeypatch, small):
    """An evaluation that fails where the candidate is built is left to the bound order,
    which evaluates it only if it is not pruned, as without workers."""
    from rankmap.selection import auto as auto_mod

    machine, allocation, pattern = small
    ev = Evaluator(machine, allocation, pattern)
    mapping = build_placement("inorder", pattern, machine, allocation, 0)

    def fail(_mapping):
        raise RankmapError("too many route entries")

    monkeypatch.setattr(ev, "evaluate", fail)
    prepared = auto_mod._Prepare(ev, True, speculate=True).evaluate(mapping)
    assert prepared.evaluation is None and prepared.bound is not None


class _Signal(Filler):
    """A filler whose one piece of work writes ``flag`` and then sleeps ``linger`` seconds;
    it records what the executor tells it (in this process)."""

    def __init__(self, flag, linger=0.0):
        self.flag, self.linger = str(flag), linger
        self.done, self.given, self.back = [], [], []

    def item_done(self, item, outcome):
        self.done.append((item, outcome.value))

    def take(self):
        if self.given:
            return None
        self.given.append(7)
        return 7

    def run(self, payload, stage):
        with open(self.flag, "w") as fh:
            fh.write("filled")
        time.sleep(self.linger)
        return payload * 6

    def took(self, payload, value):
        self.back.append((payload, value))


def _wait_for(path):
    """An item that ends once ``path`` exists (an idle worker's fill writes it)."""
    for _ in range(6000):
        if os.path.exists(path):
            return "saw the fill"
        time.sleep(0.01)
    raise RuntimeError("no worker filled while this item ran")


def _fill_task(item, stage):
    return _wait_for(item[1]) if item[0] == "wait" else item[0]


def test_an_idle_worker_fills_while_an_item_runs_and_outcomes_stay(tmp_path):
    """Item 0 can only end once an idle worker has run the filler's work: the executor gives
    the worker freed by item 1 that work, hands its value back, tells the filler of every
    item, and returns the serial outcomes."""
    flag = tmp_path / "flag"
    items = [("wait", str(flag)), ("quick", "")]
    fill = _Signal(flag)
    outs = ForkExecutor(2).run(_fill_task, items, fill=fill)
    assert [o.value for o in outs] == ["saw the fill", "quick"]
    assert sorted(fill.done) == [(("quick", ""), "quick"), (("wait", str(flag)), "saw the fill")]
    assert fill.back == [(7, 42)]
    # the serial executor never has an idle worker: it never asks
    assert SerialExecutor().run(_fill_task, [("quick", "")], fill=_Signal(flag)) \
        [0].value == "quick"


def test_a_worker_still_filling_when_the_items_end_is_stopped(tmp_path):
    """A fill that would run for ten minutes does not hold up the run: its worker is stopped
    once the last item is done, and its value is never handed back."""
    flag = tmp_path / "flag"
    fill = _Signal(flag, linger=600.0)
    start = time.monotonic()
    outs = ForkExecutor(2).run(_fill_task, [("wait", str(flag)), ("quick", "")], fill=fill)
    assert time.monotonic() - start < 300           # nowhere near the fill's ten minutes
    assert [o.value for o in outs] == ["saw the fill", "quick"]
    assert fill.given == [7] and fill.back == []


def test_a_failing_fill_hands_back_none(tmp_path):
    class Failing(_Signal):
        def run(self, payload, stage):
            super().run(payload, stage)
            raise RuntimeError("speculation failed")

    flag = tmp_path / "flag"
    fill = Failing(flag)
    outs = ForkExecutor(2).run(_fill_task, [("wait", str(flag)), ("quick", "")], fill=fill)
    assert [o.value for o in outs] == ["saw the fill", "quick"] and fill.back == [(7, None)]


def test_speculation_takes_built_candidates_in_bound_order():
    """Idle workers get, of the candidates built so far, the lowest bound first (ties: the
    names' order); a placement already taken is not taken again; once two evaluations are
    back, a candidate their values prune is left out; every candidate placing its ranks as
    an evaluated one gets that evaluation, under its own name."""
    from rankmap.allocation import whole_machine
    from rankmap.selection import auto as auto_mod
    from rankmap.selection.bounds import Bound, ranking_bound_kind
    from rankmap.selection.parallel import Outcome

    machine = parse_machine("torus:4x4x4")
    allocation = whole_machine(machine)
    pattern = parse_pattern("stencil:8x8:periodic")
    ev = Evaluator(machine, allocation, pattern)
    names = ["XYZT", "TXYZ", "hilbert", "swap:fold", "fold", "morton"]
    built = {n: auto_mod._Prepare(ev, True).evaluate(
        build_placement(n, pattern, machine, allocation, 0)) for n in names}
    spec = auto_mod._Speculation(ev, ranking_bound_kind(ev), names)
    assert spec.take() is None                      # nothing built yet
    for n in ("hilbert", "TXYZ", "XYZT"):           # in completion order
        spec.item_done(n, Outcome(built[n]))
    spec.item_done("graph", Outcome("not applicable"))
    want = sorted(("hilbert", "XYZT"), key=lambda n: (built[n].bound.key(), names.index(n)))
    first = spec.take()
    assert first.name == want[0]
    second = spec.take()
    # XYZT and TXYZ are one placement on a 1-core-per-node torus: one of them only
    assert {first.name, second.name} == {"hilbert", "XYZT"} and spec.take() is None
    for m in (first, second):
        spec.took(m, ev.evaluate(m))
    # fold and swap:fold are one placement; a candidate whose bound is above both values
    # (1 s, against a few ms) is pruned by them
    hopeless = auto_mod._Prepared(built["morton"].mapping, built["morton"].nodes,
                                  Bound(1.0, 0.0, 0.0))
    for n, cand in (("fold", built["fold"]), ("swap:fold", built["swap:fold"]),
                    ("morton", hopeless)):
        spec.item_done(n, Outcome(cand))
    taken = []
    while (m := spec.take()) is not None:
        taken.append(m.name)
    assert taken == ["swap:fold"]            # the same bound: the first in the names
    prepared = [built[n] for n in names]
    spec.hand_out(prepared)
    twin = built["TXYZ"]
    assert twin.evaluation is not None and twin.evaluation.name == "TXYZ"
    assert twin.evaluation.metrics == ev.evaluate(twin.mapping).metrics
    assert built["hilbert"].evaluation.metrics == ev.evaluate(built["hilbert"].mapping).metrics
