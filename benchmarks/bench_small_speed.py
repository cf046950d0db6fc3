"""A small ``compare`` and ``refine`` inside ``auto``: CPU time (issue 11, targets 6 and 3).

Part 1 runs whole ``rankmap`` processes, warm numba cache (one untimed run first), as
RANKMAP_BENCH_REPEATS (default 5) alternating runs per command, and reports the medians of
their CPU time (user + system of the child and its own children: forked workers count) and
wall time:

* ``rankmap --version``, ``rankmap --help``, ``rankmap compare --help`` and
  ``rankmap map --help`` (a command's help builds its parser without numpy or numba);
* ``rankmap compare -m torus:4x4x4 -p stencil:4x4x4`` (every candidate, default ``--jobs``).

With ``RANKMAP_BENCH_BEFORE=DIR`` (a source tree, e.g. ``git archive <rev> | tar -x -C DIR``)
the same commands also run on ``DIR/src`` in the same session, interleaved, as the reference.

Part 2 runs ``auto`` (seed 0, time model on, in this process) on ``stencil:16x16x16:box`` on
``torus:8x8x16:cores=4`` and on ``fft2d:32x32`` on ``torus:8x8x8:cores=2``, each twice: with
``refine``'s small-gain stop
(:data:`rankmap.mappers.refine.MIN_GAIN`) and with it switched off (``min_gain=0``: the search
of before, bounded by the budget and the refused-in-a-row limit only), and records the CPU time
of its refinements (each timed RANKMAP_BENCH_REPEATS_REFINE times, default 3, median), the
proposals they made, the pick and its metrics.

Writes benchmarks/RESULTS_small_speed.md.

Run: ``make bench ONLY=small_speed`` or ``.venv/bin/python benchmarks/bench_small_speed.py``.
"""

from __future__ import annotations

from rankmap.threads import child_environ, limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os  # noqa: E402

# a user's warm start reads cached bytecode; a PYTHONDONTWRITEBYTECODE in the benchmark's
# environment would compile every rankmap module again in every timed process (~0.08 s)
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from timing_util import write_results  # noqa: E402
REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "5"))
#: the load when the benchmark started (written into the results)
LOAD_BEFORE = os.getloadavg()
REFINE_REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS_REFINE", "3"))
COMMANDS = [["--version"], ["--help"], ["compare", "--help"], ["map", "--help"],
            ["compare", "-m", "torus:4x4x4", "-p", "stencil:4x4x4"]]
REFINE_CASES = [("stencil:16x16x16:box", "torus:8x8x16:cores=4"),
                ("fft2d:32x32", "torus:8x8x8:cores=2")]
#: what the installed ``rankmap`` script runs (its entry point, :func:`rankmap.cli.console`)
_LAUNCH = "import sys; from rankmap.cli import console; sys.argv[0] = 'rankmap'; console()"


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(argv: list[str], src: str | None) -> tuple[float, float, bytes]:
    """CPU and wall seconds of one ``rankmap`` process (``src``: the package's source dir)."""
    env = child_environ()      # each tree's own command line sets its thread limits
    if src:
        env["PYTHONPATH"] = src
    c0, t0 = _children_cpu(), time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _LAUNCH, *argv], env=env, check=True,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=HERE).stdout
    return _children_cpu() - c0, time.perf_counter() - t0, out


def startup_rows() -> list[dict]:
    """Part 1: medians of CPU and wall time per command and source tree."""
    before = os.environ.get("RANKMAP_BENCH_BEFORE")
    if before and not os.path.isdir(os.path.join(before, "src", "rankmap")):
        # a wrong folder would silently time the installed code twice
        raise SystemExit(f"RANKMAP_BENCH_BEFORE={before}: no src/rankmap in it")
    trees = [("now", None)] + ([("before", os.path.join(before, "src"))] if before else [])
    rows = []
    for argv in COMMANDS:
        runs: dict[str, list] = {label: [] for label, _ in trees}
        outs = {}
        for label, src in trees:
            outs[label] = _run(argv, src)[2]            # warm-up (numba cache, page cache)
        for _ in range(REPEATS):
            for label, src in trees:
                cpu, wall, _out = _run(argv, src)
                runs[label].append((cpu, wall))
        for label, _ in trees:
            cpu = statistics.median(r[0] for r in runs[label])
            wall = statistics.median(r[1] for r in runs[label])
            rows.append({"cmd": "rankmap " + " ".join(argv), "tree": label, "cpu": cpu,
                         "wall": wall, "same": outs[label] == outs["now"]})
            print(f"{rows[-1]['cmd']} [{label}]: cpu {cpu:.2f} s wall {wall:.2f} s", flush=True)
    return rows


def refine_rows(pat_spec: str, mach_spec: str) -> list[dict]:
    """Part 2: auto with and without refine's small-gain stop on one problem."""
    from rankmap.allocation import whole_machine
    from rankmap.machines import parse_machine
    from rankmap.mappers import refine as refine_mod
    from rankmap.patterns import parse_pattern
    from rankmap.selection import auto as auto_mod

    m = parse_machine(mach_spec)
    a = whole_machine(m)
    p = parse_pattern(pat_spec, default_ranks=a.n_cores)
    rows = []
    original = auto_mod.refine_cores
    for label, gain in (("small-gain stop", None), ("off (before)", 0.0)):
        calls = []

        def timed(start, *args, _gain=gain, **kw):
            times, run = [], None
            for _ in range(REFINE_REPEATS):
                t0 = time.process_time()
                run = refine_mod.refine_search(start, *args, **kw, min_gain=_gain)
                times.append(time.process_time() - t0)
            calls.append((statistics.median(times), run))
            return run.cores

        auto_mod.refine_cores = timed
        try:
            t0 = time.process_time()
            comp = auto_mod.auto_select(p, m, a, seed=0)
            total = time.process_time() - t0
        finally:
            auto_mod.refine_cores = original
        refine_s = sum(c[0] for c in calls)
        rows.append({"case": f"`{pat_spec}` on `{mach_spec}`", "label": label, "refine_s": refine_s,
                     "auto_s": total - refine_s * (REFINE_REPEATS - 1),
                     "runs": [(c[1].proposals, c[1].accepted, c[1].stop) for c in calls],
                     "pick": comp.best.name, "metrics": dict(comp.best.metrics),
                     "refined": {c.name: dict(c.metrics) for c in comp.candidates
                                 if c.name.startswith("refine:")}})
        print(f"refine [{label}]: {refine_s:.2f} s CPU, runs {rows[-1]['runs']}, "
              f"pick {comp.best.name}", flush=True)
    return rows


def _fmt_metrics(metrics: dict) -> str:
    keys = ("predicted_time_s", "max_link_bytes", "hop_bytes")
    return ", ".join(f"{k} {metrics[k]:.6g}" for k in keys if k in metrics)


def render(start: list[dict], refine: list[dict], version: str) -> str:
    """The results file."""
    lines = ["# A small `compare` and `refine` inside `auto`: CPU time (issue 11)", "",
             f"Measured by `benchmarks/bench_small_speed.py` ({version}) on the shared 2-core box "
             f"(load average {LOAD_BEFORE[0]:.1f} when it started): CPU seconds are "
             "user + system of the process and its children, medians of "
             f"{REPEATS} runs, warm numba cache; wall seconds are shown but depend on the load.",
             "", "## Start-up and a small compare (target 6: --version and --help under 0.3 s, a "
             "small compare under 1 s warm)", "",
             "| command | code | CPU (s) | wall (s) | same output as now |",
             "|---|---|---:|---:|---|"]
    for r in start:
        lines.append(f"| `{r['cmd']}` | {r['tree']} | {r['cpu']:.2f} | {r['wall']:.2f} | "
                     f"{'yes' if r['same'] else 'NO'} |")
    lines += ["", "\"before\" is the source tree given as RANKMAP_BENCH_BEFORE (main before the "
              "change), run "
              "interleaved with \"now\" in the same session. Where the small compare's CPU goes "
              "(`python -X importtime`, cProfile with process time, `NUMBA_DEBUG_CACHE=1`; "
              "2026-11-25, late evening): imports about 0.3 s (numba 0.14 s, scipy.sparse "
              "0.06 s, numpy 0.06 s; scipy.sparse.csgraph is imported only where the reverse "
              "Cuthill-McKee order is needed); numba's target context and the cached kernels' "
              "loads about 0.25 s (no compilation); the 39 candidates about 0.3 s, the largest "
              "`graph`'s exact link swaps (0.15 s); the rich table. Warm means what a user gets "
              "from the second run on: numba's cache and Python's bytecode cache written (the "
              "benchmark drops a PYTHONDONTWRITEBYTECODE it may inherit). The command line runs "
              "with one BLAS thread (`rankmap.threads`): OpenBLAS's idle threads used to spin "
              "for 0.2 s of CPU here. `--version` reads no numerical module."]
    lines += ["", "## `refine` inside `auto` (seed 0; target 3: stop on small expected gain)", "",
              "The two refinements of `auto` (its best two candidates), each timed "
              f"{REFINE_REPEATS} times (median; refine CPU is their sum), with the small-gain "
              "stop and without it (the search as before: budget and refused-in-a-row limit "
              "only; same proposals in the same order). auto CPU counts each refinement once.",
              "", "| problem | refine stop | refine CPU (s) | auto CPU (s) | proposals / kept / "
              "why stopped | pick | pick's metrics |", "|---|---|---:|---:|---|---|---|"]
    for r in refine:
        runs = "; ".join(f"{n} / {k} / {why}" for n, k, why in r["runs"])
        lines.append(f"| {r['case']} | {r['label']} | {r['refine_s']:.2f} | {r['auto_s']:.2f} | "
                     f"{runs} | `{r['pick']}` | {_fmt_metrics(r['metrics'])} |")
    for a, b in zip(refine[::2], refine[1::2]):
        lines += ["", f"{a['case']}: same pick: {'yes' if a['pick'] == b['pick'] else 'NO'}; "
                  f"same pick metrics: {'yes' if a['metrics'] == b['metrics'] else 'no'}; "
                  "refinements with the stop: "
                  + "; ".join(f"`{n}` {_fmt_metrics(v)}" for n, v in a["refined"].items())
                  + "; without: "
                  + "; ".join(f"`{n}` {_fmt_metrics(v)}" for n, v in b["refined"].items()) + "."]
    return "\n".join(lines) + "\n"


def main() -> int:
    """Run both parts, print progress, write benchmarks/RESULTS_small_speed.md."""
    version = subprocess.run([sys.executable, "-c", _LAUNCH, "--version"], check=True,
                             stdout=subprocess.PIPE, text=True).stdout.strip()
    parts = os.environ.get("RANKMAP_BENCH_PARTS", "startup,refine").split(",")
    start = startup_rows() if "startup" in parts else []
    refine = [r for case in REFINE_CASES for r in refine_rows(*case)] if "refine" in parts else []
    write_results("RESULTS_small_speed.md", render(start, refine, version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
