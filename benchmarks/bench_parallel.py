"""Parallel candidate search benchmark (issue 11, item 7).

``rankmap compare --mappings all`` of a small and a larger case, each run as a whole process:

* ``--jobs 1`` (the reference, in-process), ``--jobs 2`` and ``--jobs 4`` (forked workers;
  4 is more workers than this machine's 2 cores);
* ``mpirun -n 2`` and ``mpirun -n 4 --oversubscribe`` with ``--jobs 1`` per MPI process
  (candidates spread over the MPI processes with mpi4py), when mpirun and mpi4py are there.

For each: median wall time and median CPU time (user + system of the whole process tree, from
``wait4``) of ``RANKMAP_BENCH_REPEATS`` runs (default 3), and the speed-up = reference wall /
wall, measured in the same run. Every run's output must be byte-identical to the reference's
(same winner, metrics, order, skipped reasons): the benchmark fails otherwise. The load average
before and after is written next to the figures (the machine is shared).

Cases: ``RANKMAP_BENCH_PARALLEL_CASE="MACHINE PATTERN[; MACHINE PATTERN ...]"`` (default
:data:`CASES`: a 4,096-rank stencil whose whole search takes about a second, where start-up
bounds any speed-up, and a 16,384-rank one of several seconds). Writes
benchmarks/RESULTS_parallel.md. Run: ``make bench ONLY=parallel``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import datetime
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing_util import write_results  # noqa: E402
#: (machine, pattern) of every case
CASES = [tuple(c.split()) for c in os.environ.get(
    "RANKMAP_BENCH_PARALLEL_CASE",
    "torus:16x16x16 stencil:64x64:periodic; torus:16x16x16:cores=4 stencil:32x32x16:box"
).split(";") if c.strip()]
REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "3"))


def rankmap_exe() -> list[str]:
    exe = os.path.join(os.path.dirname(sys.executable), "rankmap")
    return [exe] if os.path.exists(exe) else [sys.executable, "-c",
                                              "import sys; from rankmap.cli import main; "
                                              "sys.exit(main())"]


def mpi_available() -> bool:
    import importlib.util
    return shutil.which("mpirun") is not None and importlib.util.find_spec("mpi4py") is not None


def run_once(cmd: list[str], env: dict) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds (user + sys of the process and its reaped descendants) and
    stdout of one run."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        err = proc.stderr.read().decode(errors="replace")
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"benchmark command failed: {' '.join(cmd)}\n{err}")
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, out.read()


def main() -> int:
    sections = [measure_case(machine, pattern) for machine, pattern in CASES]
    write_results("RESULTS_parallel.md",
                  "# Parallel candidate search (bench_parallel.py)\n\n" + "\n".join(sections))
    return 0


def measure_case(machine: str, pattern: str) -> str:
    """Run every configuration on one case; return its Markdown section."""
    base = ["compare", "--machine", machine, "--pattern", pattern, "--mappings", "all",
            "--format", "csv"]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPI_COMM_WORLD", "PMI_"))}
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    exe = rankmap_exe()
    configs = [("--jobs 1 (reference, in-process)", exe + base + ["--jobs", "1"]),
               ("--jobs 2", exe + base + ["--jobs", "2"]),
               ("--jobs 4 (2 cores: oversubscribed)", exe + base + ["--jobs", "4"])]
    root = ["--allow-run-as-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    if mpi_available():
        for n in (2, 4):
            configs.append((f"mpirun -n {n}{' --oversubscribe' if n > 2 else ''} --jobs 1",
                            ["mpirun", "--oversubscribe", "--bind-to", "none", *root, "-n",
                             str(n)] + exe + base + ["--jobs", "1"]))
    else:
        print("mpirun or mpi4py missing: the MPI rows are left out", file=sys.stderr)
    run_once(configs[0][1], env)  # warm the numba cache: compile time is not measured
    load_before = os.getloadavg()
    started = time.time()
    rows, reference_out = [], None
    # runs interleaved (config after config, REPEATS rounds) so a change in the machine's
    # load hits every configuration alike
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in configs}
    for _ in range(REPEATS):
        for name, cmd in configs:
            wall, cpu, out = run_once(cmd, env)
            if reference_out is None:
                reference_out = out
            elif out != reference_out:
                raise SystemExit(f"{name}: output differs from the serial run's")
            samples[name].append((wall, cpu))
            print(f"{name}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    load_after = os.getloadavg()
    ref_wall = statistics.median(w for w, _ in samples[configs[0][0]])
    for name, _ in configs:
        wall = statistics.median(w for w, _ in samples[name])
        cpu = statistics.median(c for _, c in samples[name])
        rows.append((name, wall, cpu, ref_wall / wall))
    n_candidates = reference_out.decode().count(",all,")
    lines = [
        f"### `{pattern}` on `{machine}`", "",
        f"`rankmap compare --machine {machine} --pattern {pattern} --mappings all` "
        f"({n_candidates} candidates), whole process, median of {REPEATS} interleaved runs "
        f"each; CPU = user + system time of the process tree (wait4). Speed-up = reference "
        "wall / wall, measured in the same run. Every run printed byte-identical output "
        "(same winner, metrics, order).", "",
        f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on a "
        f"shared {os.cpu_count()}-core machine "
        + ("(**busy**: other work was running)" if load_before[0] > (os.cpu_count() or 1)
           else "(quiet: load below the core count before the run)")
        + f": load average (1, 5, 15 min) {load_before[0]:.1f}, {load_before[1]:.1f}, "
        f"{load_before[2]:.1f} before and {load_after[0]:.1f}, {load_after[1]:.1f}, "
        f"{load_after[2]:.1f} after ({time.time() - started:.0f} s). With a load above the "
        "core count, wall times and speed-ups mostly measure the other users: read the CPU "
        "column (the work added by parallelism: forks, pickled results, MPI start-up and the "
        "evaluator every MPI process builds) and treat the wall speed-up as a lower bound.", "",
        "| run | wall (s) | CPU (s) | speed-up (wall) |", "|---|---:|---:|---:|"]
    for name, wall, cpu, speed in rows:
        lines.append(f"| {name} | {wall:.1f} | {cpu:.1f} | {speed:.2f}x |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
