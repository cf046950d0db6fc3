"""``auto``'s CPU time against Scotch's ``gmap`` on the problems of bench_quality.py (issue 11).

For every problem it measures, in the same run, as CPU seconds (medians of
RANKMAP_BENCH_REPEATS runs, default 3; 1 above 8,192 ranks):

* ``auto`` as shipped (:func:`rankmap.selection.auto_select`, seed 0, time model on): built
  candidates evaluated in order of their lower bound, the hopeless ones pruned
  (:mod:`rankmap.selection.bounds`);
* ``auto`` evaluating every candidate (pruning switched off in this process only: the
  reference for the pick and the metrics, which must be identical);
* Scotch: ``amk_grf`` + ``scotch_gmap -b0 -Cd`` (children's CPU time) plus this process's CPU time
  writing its files and reading its mapping (bench_quality's :func:`scotch_cores`);
* the wait a user sees: ``auto`` with the command line's default executor (every usable core,
  :func:`rankmap.selection.parallel.make_executor`) in wall-clock seconds, its pick and metrics
  required to equal the serial run's, against Scotch's wall-clock seconds.

Writes benchmarks/RESULTS_auto_speed.md (above its earlier runs, kept: timing_util.write_results). ``RANKMAP_BENCH_CASES=i,j`` picks problems by their
index in bench_quality's CASES (default: a set of 4K-16K problems).

Run: ``make bench ONLY=auto_speed`` or ``.venv/bin/python benchmarks/bench_auto_speed.py``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_quality as bq  # noqa: E402
from timing_util import write_results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "3"))
DEFAULT_CASES = "7,8,5,9,10"
#: attempts per Scotch run (see run_case)
SCOTCH_TRIES = 3


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _cpu(fn, reps, children=False):
    times, out = [], None
    for _ in range(reps):
        c0, t0 = _children_cpu(), time.process_time()
        out = fn()
        times.append(time.process_time() - t0 + (_children_cpu() - c0 if children else 0.0))
    return out, statistics.median(times), times


def _stage_seconds(run) -> dict:
    """CPU seconds of one serial ``auto`` by stage: ``run(stage)`` calls ``auto_select`` with
    the stage hook; the time between two hook calls goes to the first one's stage
    (building, routing, refining), and KaHIP's calls (``kahip.kaffpa``, timed around each
    call) are counted apart as well."""
    import kahip

    marks, kahip_s = [], [0.0]
    real = kahip.kaffpa

    def timed(*args):
        t = time.process_time()
        try:
            return real(*args)
        finally:
            kahip_s[0] += time.process_time() - t

    kahip.kaffpa = timed
    try:
        t0 = time.process_time()
        run(lambda name, what: marks.append((time.process_time(), name, what)))
        t1 = time.process_time()
    finally:
        kahip.kaffpa = real
    out = {"total": t1 - t0, "kahip": kahip_s[0], "before": (marks[0][0] if marks else t1) - t0}
    spans: dict = {}
    for (t, name, what), nxt in zip(marks, [m[0] for m in marks[1:]] + [t1]):
        out[what] = out.get(what, 0.0) + nxt - t
        spans[(name, what)] = spans.get((name, what), 0.0) + nxt - t
    out["path"] = _critical_path(marks, spans, t1)
    return out


def _critical_path(marks, spans, end) -> dict:
    """The chain of dependent work in a serial run's stage marks: the slowest candidate's
    build, then the slowest refinement (with its evaluation). Workers run builds side by
    side and refinements side by side, but refinements start only once every candidate is
    built, and each build and each refinement runs in one process: with any number of
    cores, ``auto`` as it stands takes at least their sum. Evaluating the candidates (from
    the last build's mark to the first refinement's) comes between them serially; workers
    may do part of it while others build, so it is reported but not counted."""
    refining = [i for i, m in enumerate(marks) if m[2] == "refining"]
    first_refine = refining[0] if refining else len(marks)
    builds = {name: v for (name, what), v in spans.items() if what == "building"}
    last_build = max((i for i, m in enumerate(marks[:first_refine]) if m[2] == "routing"),
                     default=None)
    evaluating = ((marks[first_refine][0] if refining else end) - marks[last_build][0]
                  if last_build is not None else 0.0)
    refines = {}
    for i in refining:
        name = marks[i][1]
        refines[name] = spans.get((name, "refining"), 0.0) + spans.get((name, "routing"), 0.0)
    b = max(builds.items(), key=lambda kv: kv[1], default=("-", 0.0))
    r = max(refines.items(), key=lambda kv: kv[1], default=("-", 0.0))
    return {"build": b, "evaluating": evaluating, "refine": r,
            "total": b[1] + r[1]}


def run_case(label, machine_spec, alloc_spec, pattern_spec, workdir) -> dict:
    """Times, picks and metrics of one problem."""
    from rankmap.allocation import parse_allocation, whole_machine
    from rankmap.evaluation import Evaluator
    from rankmap.machines import parse_machine
    from rankmap.mappers import validate_mapping
    from rankmap.patterns import parse_pattern
    from rankmap.selection import auto as auto_mod

    m = parse_machine(machine_spec)
    a = parse_allocation(alloc_spec, m) if alloc_spec else whole_machine(m)
    p = parse_pattern(bq.materialise(pattern_spec, workdir), default_ranks=a.n_cores)
    reps = REPEATS if p.n_ranks <= 8192 else 1
    row = {"label": label, "machine": machine_spec, "alloc": alloc_spec,
           "pattern": pattern_spec, "ranks": p.n_ranks, "runs": reps}
    if reps == 1:
        # one run, no median: compile what this problem uses first (numba's cache may be cold
        # for this kind of machine: a fat tree's kernels once cost a run 9 s)
        auto_mod.auto_select(p, m, a, seed=0)
    comp, row["auto_s"], row["auto_runs"] = _cpu(lambda: auto_mod.auto_select(p, m, a, seed=0),
                                                 reps)
    row["pick"], row["metrics"] = comp.best.name, comp.best.metrics
    from rankmap.selection.parallel import make_executor
    walls = []
    for _ in range(reps):
        t0 = time.perf_counter()
        par = auto_mod.auto_select(p, m, a, seed=0, executor=make_executor(None))
        walls.append(time.perf_counter() - t0)
    row["par_wall"] = statistics.median(walls)
    row["par_same"] = (par.best.name == comp.best.name and par.best.metrics == comp.best.metrics)
    row["evaluated"], row["pruned"] = len(comp.candidates), sum(
        r.startswith("pruned") for r in comp.skipped.values())
    kind = auto_mod.ranking_bound_kind
    auto_mod.ranking_bound_kind = lambda ev: None
    try:
        full, row["full_s"], _ = _cpu(lambda: auto_mod.auto_select(p, m, a, seed=0), 1)
    finally:
        auto_mod.ranking_bound_kind = kind
    row["stages"] = _stage_seconds(lambda stage: auto_mod.auto_select(p, m, a, seed=0,
                                                                       stage=stage))
    row["full_pick"], row["full_metrics"] = full.best.name, full.best.metrics
    row["same"] = (full.best.name == comp.best.name and full.best.metrics == comp.best.metrics
                   and all(c.metrics == full.find(c.name).metrics for c in comp.candidates))
    def scotch():
        # scotch_gmap died with SIGSEGV or hung in a futex wait while the graph's edge weights
        # summed past 2**31 (fixed in scotch_util.scotch_weights); the retries stay for a
        # crash of any other cause: up to SCOTCH_TRIES attempts, only a finished one is timed
        for attempt in range(SCOTCH_TRIES):
            c0, t0, w0 = _children_cpu(), time.process_time(), time.perf_counter()
            try:
                out = bq.scotch_cores(m, a, p, workdir)
            except (RuntimeError, subprocess.TimeoutExpired):
                if attempt == SCOTCH_TRIES - 1:
                    raise
                continue
            row.setdefault("scotch_walls", []).append(time.perf_counter() - w0)
            row.setdefault("scotch_runs", []).append(time.process_time() - t0
                                                     + _children_cpu() - c0)
            row["scotch_crashes"] = attempt + row.get("scotch_crashes", 0)
            return out

    try:
        res = None
        for _ in range(reps):
            res = scotch()
        row["scotch_s"] = statistics.median(row["scotch_runs"])
        row["scotch_wall"] = statistics.median(row["scotch_walls"])
        ev = Evaluator(m, a, p)
        row["scotch_time"] = ev.evaluate(validate_mapping("scotch", res[0], p.n_ranks, a)
                                         ).metrics["predicted_time_s"]
    except Exception as exc:  # noqa: BLE001 - Scotch is a peer: record why it has no figure
        row["scotch_fail"] = str(exc).splitlines()[0][:100] if str(exc) else type(exc).__name__
    return row


def render(rows) -> str:
    """The Markdown results document."""
    out = ["# `auto` against Scotch: CPU time (issue 11)", "",
           "Measured by `benchmarks/bench_auto_speed.py` on the shared 2-core box: CPU seconds "
           "(this process's, plus the children's for Scotch: `amk_grf` and `scotch_gmap -b0 -Cd`, "
           "with writing and reading its files), medians of the runs shown, the machine's "
           "routing (`dor`; `dmodk` on the fat trees), the time model on. `auto (all)` "
           "evaluates every candidate (pruning switched off): its pick and metrics are the "
           "reference and must equal `auto`'s. Goal: `auto` <= Scotch.",
           "",
           "| problem | ranks | runs | auto (s) | auto, all evaluated (s) | Scotch (s) | auto / "
           "Scotch | evaluated / pruned | pick | same pick and metrics | predicted time: "
           "pick / Scotch's |",
           "|---|---:|---:|---:|---:|---:|---:|---|---|---|---:|"]
    for r in rows:
        sc = (f"{r['scotch_s']:.2f}" if "scotch_s" in r else f"failed: {r['scotch_fail']}")
        if r.get("scotch_crashes"):
            sc += f" ({r['scotch_crashes']} crashed run(s) retried)"
        q = r["auto_s"] / r["scotch_s"] if "scotch_s" in r else None
        ratio = "-" if q is None else f"{q:.1f}x" if q >= 0.1 else f"{q:.2f}x"
        tr = (f"{r['metrics']['predicted_time_s'] / r['scotch_time']:.2f}"
              if "scotch_time" in r else "-")
        out.append(f"| {r['label']} (`{r['pattern']}` on `{r['machine']}`"
                   f"{', ' + r['alloc'] if r['alloc'] else ''}) | {r['ranks']} | {r['runs']} | "
                   f"{r['auto_s']:.2f} | {r['full_s']:.2f} | {sc} | {ratio} | "
                   f"{r['evaluated']} / {r['pruned']} | `{r['pick']}` | "
                   f"{'yes' if r['same'] else 'NO'} | {tr} |")
    out += ["", "The wait a user sees: `auto` with the command line's default executor (every "
            "usable core, here 2 processes; building the candidates and the two refinements run "
            "side by side) in wall-clock seconds, medians of the same number of runs, against "
            "Scotch's wall-clock seconds (its two programs and its files). The pick and every "
            "metric must equal the serial run's.", "",
            "| problem | auto, serial CPU (s) | auto, default executor, wall (s) | Scotch wall "
            "(s) | wall: auto / Scotch | same pick and metrics |",
            "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        sw = r.get("scotch_wall")
        q = None if sw is None else r["par_wall"] / sw
        ratio = "-" if q is None else f"{q:.1f}x" if q >= 0.1 else f"{q:.2f}x"
        out.append(f"| {r['label']} | {r['auto_s']:.2f} | {r['par_wall']:.2f} | "
                   f"{'-' if sw is None else f'{sw:.2f}'} | {ratio} | "
                   f"{'yes' if r['par_same'] else 'NO'} |")
    out += ["", "Where `auto`'s CPU time goes (one more serial run, CPU seconds): building the "
            "candidates, KaHIP's calls among them (the `graph` mapper's cuts, and `rcb`'s on a "
            "pattern without a grid), evaluating them (routing and metrics, in bound order), "
            "and refining the best. A stage runs from its hook call to the next one.", "",
            "| problem | auto (s) | building (s) | of it KaHIP (s) | evaluating (s) | refining "
            "(s) | Scotch (s) |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        st = r["stages"]
        sc = f"{r['scotch_s']:.2f}" if "scotch_s" in r else "-"
        out.append(f"| {r['label']} | {st['total']:.2f} | "
                   f"{st.get('building', 0.0) + st['before']:.2f} | {st['kahip']:.2f} | "
                   f"{st.get('routing', 0.0):.2f} | {st.get('refining', 0.0):.2f} | {sc} |")
    out += ["", "The critical path of the same serial run (CPU seconds): the slowest candidate's "
            "build plus the slowest refinement. Builds run side by side on workers, and so do "
            "the refinements, but refinements start only once every candidate is built, and "
            "each build and each refinement runs in one process: with any number of cores "
            "`auto` takes at least their sum, so where it exceeds Scotch's time no "
            "parallelism meets the goal. Evaluating the candidates comes between them in a "
            "serial run (shown, not counted: workers may do part of it while others build).", "",
            "| problem | slowest build (s) | evaluating (s) | slowest refinement (s) | critical "
            "path (s) | Scotch (s) | path / Scotch |",
            "|---|---|---:|---|---:|---:|---:|"]
    for r in rows:
        path = r["stages"]["path"]
        (bn, bs), (rn, rs) = path["build"], path["refine"]
        sc = r.get("scotch_s")
        tail = "- | -" if sc is None else f"{sc:.2f} | {path['total'] / sc:.2f}x"
        out.append(f"| {r['label']} | `{bn}` {bs:.2f} | {path['evaluating']:.2f} | "
                   f"`{rn}` {rs:.2f} | {path['total']:.2f} | {tail} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    """Run the problems, print progress, write benchmarks/RESULTS_auto_speed.md."""
    pick = os.environ.get("RANKMAP_BENCH_CASES", DEFAULT_CASES)
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for i in [int(x) for x in pick.split(",")]:
            case = bq.CASES[i]
            print(f"case {case[0]}: {case[3]} on {case[1]}", flush=True)
            rows.append(run_case(*case, workdir))
            print(render(rows[-1:]).splitlines()[-1], flush=True)
    write_results("RESULTS_auto_speed.md", render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
