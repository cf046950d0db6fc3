"""Core engine benchmark (issue: core engine, item 12).

Evaluates a 131,072-rank 3-D box stencil (stencil:64x64x32:box:periodic, 26 neighbours,
3.4 M flows) on torus:32x32x32:cores=4 with TXYZ and TZXY, under dor and adaptive routing:

* the whole ``rankmap compare`` process with one candidate (start-up, pattern, placement,
  routing, metrics, table), median of several runs, and its peak memory;
* the same evaluation's steps in one process (routing, evaluation with and without the time
  model), median CPU seconds after a warm-up;
* the default's kernel loads from numba's cache: how many, and their time in all (median);
* for reference, a single-threaded C loop (benchmarks/c/route_dor.c, gcc -O2) that only routes
  the same flows by dimension order.

Writes benchmarks/RESULTS_core.md. Run: ``make bench`` or ``.venv/bin/python benchmarks/bench_core.py``.
"""

from __future__ import annotations

from rankmap.threads import child_environ, limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os  # noqa: E402

# a user's warm start reads cached bytecode; a PYTHONDONTWRITEBYTECODE in the benchmark's
# environment would compile every rankmap module again in every timed process (~0.08 s)
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing_util import median_time, write_results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MACHINE = "torus:32x32x32:cores=4"
PATTERN = "stencil:64x64x32:box:periodic"
REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "7"))


def rankmap_exe() -> list[str]:
    exe = os.path.join(os.path.dirname(sys.executable), "rankmap")
    return [exe] if os.path.exists(exe) else [sys.executable, "-m", "rankmap.cli"]


def timed_process(cmd: list[str]) -> tuple[float, float, float, float]:
    """Wall seconds, peak resident memory (MiB), user and system CPU seconds of one child
    process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=child_environ())   # the command sets its own limits
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}\n{proc.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024.0, usage.ru_utime, usage.ru_stime


class CLoop:
    """The C DOR loop (benchmarks/c/route_dor.c, gcc -O2) built once, with the node-level flows
    of each mapping written once, run again in every round of the benchmark."""

    def __init__(self, tmp: str):
        self.tmp = tmp
        self.exe = os.path.join(tmp, "route_dor")
        subprocess.run(["gcc", "-O2", "-o", self.exe, os.path.join(HERE, "c", "route_dor.c")],
                       check=True)
        self.flows = {}
        self.dims = ()

    def prepare(self, mapping: str) -> None:
        """Write the flows of ``mapping`` (the placement's nodes) for the loop."""
        from rankmap.allocation import whole_machine
        from rankmap.machines import parse_machine
        from rankmap.mappers import build_mapping
        from rankmap.patterns import parse_pattern

        m = parse_machine(MACHINE)
        a = whole_machine(m)
        p = parse_pattern(PATTERN)
        nodes = build_mapping(mapping, p, m, a).nodes(a)
        ph = p.phases[0]
        path = os.path.join(self.tmp, f"flows-{mapping}.bin")
        with open(path, "wb") as fh:
            np.array([ph.n_flows], dtype=np.int64).tofile(fh)
            nodes[ph.src].astype(np.int64).tofile(fh)
            nodes[ph.dst].astype(np.int64).tofile(fh)
            ph.bytes.astype(np.float64).tofile(fh)
        self.flows[mapping] = path
        self.dims = tuple(m.dims)

    def run(self, mapping: str, repeats: int = 3) -> float:
        """Median seconds of ``repeats`` loops in one run of the program."""
        out = subprocess.run([self.exe, self.flows[mapping], str(len(self.dims)),
                              *map(str, self.dims), str(repeats)], check=True,
                             capture_output=True, text=True).stdout.split()
        return float(out[0])


def in_process(mapping: str) -> dict:
    """Median CPU seconds, in this process after a warm-up, of the steps of one evaluation:
    routing the phase (link loads only), the whole evaluation with the time model off, and
    with it on."""
    from rankmap.allocation import whole_machine
    from rankmap.evaluation import Evaluator
    from rankmap.machines import parse_machine
    from rankmap.mappers import build_mapping
    from rankmap.patterns import parse_pattern
    from rankmap.timing import TimeOptions

    m = parse_machine(MACHINE)
    a = whole_machine(m)
    p = parse_pattern(PATTERN)
    placement = build_mapping(mapping, p, m, a)
    off = Evaluator(m, a, p, "dor", time_options=TimeOptions(enabled=False))
    on = Evaluator(m, a, p, "dor")
    adaptive_on = Evaluator(m, a, p, "adaptive")
    out = {}
    for key, fn in (("route", lambda: off.route(placement)),
                    ("evaluate, time model off", lambda: off.evaluate(placement)),
                    ("evaluate, time model on", lambda: on.evaluate(placement)),
                    ("adaptive: evaluate, time model on",
                     lambda: adaptive_on.evaluate(placement))):
        out[key] = median_time(fn, REPEATS, warmup=True, clock=time.process_time)
    return out


#: runs the default compare in a child, timing every kernel load numba's dispatcher asks of
#: rankmap's cache (rankmap.kernels.jit.QuickLoadCache.load_overload)
_KERNEL_LOADS = """\
import sys, time
from rankmap.kernels import jit
LOADS = []
_load = jit.QuickLoadCache.load_overload
def timed(self, sig, ctx):
    t = time.perf_counter()
    try:
        return _load(self, sig, ctx)
    finally:
        LOADS.append((time.perf_counter() - t, self.kernel_name.rsplit('.', 1)[-1]))
jit.QuickLoadCache.load_overload = timed
from rankmap.cli import main
main(sys.argv[1:])
print('LOADS', len(LOADS), sum(t for t, _ in LOADS),
      ' '.join(f'{n}:{t * 1e3:.1f}' for t, n in sorted(LOADS, reverse=True)[:3]))
"""


def kernel_loads(mapping: str) -> tuple[int, float, str]:
    """How many kernels the default compare of ``mapping`` loads from numba's cache, the
    median of their total load time (seconds) over REPEATS processes, and the slowest three of
    the median run."""
    runs = []
    for _ in range(REPEATS):
        out = subprocess.run([sys.executable, "-c", _KERNEL_LOADS, "compare", "-m", MACHINE,
                              "-p", PATTERN, "--mappings", mapping], capture_output=True,
                             text=True, check=True, env=child_environ()).stdout
        fields = out.split("LOADS ", 1)[1].split(maxsplit=2)
        runs.append((float(fields[1]), int(fields[0]), fields[2].strip() if len(fields) > 2
                     else ""))
    runs.sort()
    total, count, slowest = runs[len(runs) // 2]
    return count, total, slowest


def main() -> int:
    rows = []
    load = os.getloadavg()
    cmd0 = rankmap_exe()
    # warm the numba cache once so compile time is not measured
    subprocess.run(cmd0 + ["compare", "-m", "torus:4x4", "-p", "stencil:4x4", "--mappings",
                           "TXY", "--routing", "adaptive"], check=True, capture_output=True)
    subprocess.run(cmd0 + ["compare", "-m", "torus:4x4", "-p", "stencil:4x4", "--mappings",
                           "TXY"], check=True, capture_output=True)
    cases = [(r, m, "off") for r in ("dor", "adaptive") for m in ("TXYZ", "TZXY")]
    cases += [(r, m, "on") for r in ("dor", "adaptive") for m in ("TXYZ", "TZXY")]
    runs = {case: [] for case in cases}
    c_runs = {"TXYZ": [], "TZXY": []}
    with tempfile.TemporaryDirectory() as tmp:
        c_loop = CLoop(tmp) if shutil.which("gcc") else None
        if c_loop is not None:
            for mapping in c_runs:
                c_loop.prepare(mapping)
        # rounds: every case once per round, the C loop too, so that the machine's drift
        # (other tenants, memory given to the process) falls on all of them alike
        for _ in range(REPEATS):
            for routing, mapping, tm in cases:
                cmd = cmd0 + ["compare", "-m", MACHINE, "-p", PATTERN, "--mappings", mapping,
                              "--routing", routing, "--time-model", tm]
                runs[(routing, mapping, tm)].append(timed_process(cmd))
            if c_loop is not None:
                for mapping in c_runs:
                    c_runs[mapping].append(c_loop.run(mapping))
    rows = []
    for (routing, mapping, tm), rs in runs.items():
        wall = statistics.median(r[0] for r in rs)
        mem = max(r[1] for r in rs)
        user = statistics.median(r[2] for r in rs)
        system = statistics.median(r[3] for r in rs)
        rows.append((routing, mapping, tm, wall, mem, user, system))
        print(f"rankmap compare {routing:8s} {mapping} time model {tm}: median {wall:.2f} s over "
              f"{REPEATS} runs, peak {mem:.0f} MiB", flush=True)
    ref = {m: (statistics.median(ts),) for m, ts in c_runs.items() if ts}
    lines = ["# Core engine benchmark", "",
             f"`{PATTERN}` (131,072 ranks, 26 neighbours, 3.4 M flows of 1 MiB) on `{MACHINE}`.",
             f"Whole `rankmap compare` process with one candidate (start-up included, numba cache warm); "
             f"median of {REPEATS} runs on this 2-core machine, taken in rounds (each case and "
             f"the C loop once per round); peak resident memory.", "",
             "| routing | mapping | time model | median wall (s) | user CPU (s) | system CPU (s) "
             "| peak memory (MiB) | C DOR loop (s) | ratio to C |",
             "|---|---|---|---|---|---|---|---|---|"]
    for routing, mapping, tm, wall, mem, user, system in rows:
        c = ref.get(mapping)
        if c and (routing == "dor" or tm == "on"):   # adaptive + model: target 10x
            cs, ratio = f"{c[0]:.3f}", f"{wall / c[0]:.1f}x"
        else:
            cs, ratio = "", ""
        lines.append(f"| {routing} | {mapping} | {tm} | {wall:.2f} | {user:.2f} | {system:.2f} "
                     f"| {mem:.0f} | {cs} | {ratio} |")
    steps = {m: in_process(m) for m in ("TXYZ", "TZXY")}
    lines += ["", "The same evaluation in one process after a warm-up (no start-up, pattern or "
              f"placement): median CPU seconds of {REPEATS} calls, and the ratio to the C loop.",
              "", "| mapping | step | CPU (s) | ratio to C |", "|---|---|---:|---:|"]
    for mapping, st in steps.items():
        c = ref.get(mapping)
        for key, t in st.items():
            ratio = f"{t / c[0]:.1f}x" if c else ""
            lines.append(f"| {mapping} | {key} | {t:.3f} | {ratio} |")
    loads = {m: kernel_loads(m) for m in ("TXYZ", "TZXY")}
    lines += ["", "Kernel loads of the default (dor, time model on): how many kernels the "
              "process loads from numba's cache (none is compiled: the cache is warm), the median "
              f"over {REPEATS} processes of the time they take in all, and the slowest three of "
              "that run (ms).", "",
              "| mapping | kernels loaded | load time, all (ms) | slowest three (ms) |",
              "|---|---:|---:|---|"]
    for mapping, (count, total, slowest) in loads.items():
        lines.append(f"| {mapping} | {count} | {total * 1e3:.1f} | {slowest} |")
    lines += ["", "The C loop (benchmarks/c/route_dor.c, gcc -O2, single thread) only routes the "
              "same node-level flows by dimension order; its time excludes reading the flows "
              "(the median over the rounds of each run's median of 3 loops). "
              "Targets (issue 11): the default (dor, time model on: the max-min bandwidth sharing "
              "prediction included) within 4x of the C loop; routing alone (time model off) "
              "within 2x; adaptive with the time model within 10x. User and system CPU are medians "
              "too: on this virtual machine the system time of one run varies from 0.3 to 1.4 s "
              "(memory given to the process), which moves the wall time. Load average (1 min) "
              f"{load[0]:.1f} before the run, {os.getloadavg()[0]:.1f} after.", ""]
    write_results("RESULTS_core.md", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
