"""Issue 11's whole-command targets, each a `rankmap` process timed as a user runs it.

* ``compare --mappings all`` on bgp:4096 + fft2d:128x128 (target: under 30 s), default
  ``--jobs`` (every core);
* the dragonfly example of the README, xc:groups=26 with 1,024 nodes and the time model on
  (target: under 20 s);
* 1,048,576 ranks, ``stencil:128x128x64:box:periodic`` on ``torus:64x64x64:cores=4``, time
  model on (target: under 60 s and 12 GB); its 27 M flows and 231 M route entries are above
  the default input limits, so the run raises ``RANKMAP_MAX_FLOWS`` and
  ``RANKMAP_MAX_ROUTE_ENTRIES`` as a user would;
* a small compare, ``torus:4x4x4`` + ``stencil:4x4x4`` with every mapper (target: under 1 s).

Median wall, user and system CPU seconds and peak resident memory of
``RANKMAP_BENCH_REPEATS`` runs (default 3). Writes benchmarks/RESULTS_targets.md. Run:
``make bench ONLY=targets`` or ``.venv/bin/python benchmarks/bench_targets.py``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_core import rankmap_exe, timed_process  # noqa: E402
from timing_util import write_results  # noqa: E402

REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "3"))

#: (label, arguments, extra environment, target wall seconds, target peak GiB or None)
CASES = [
    ("`compare --mappings all`, bgp:4096 + fft2d:128x128 (16,384 ranks)",
     ["compare", "-m", "bgp:4096", "-p", "fft2d:128x128", "--mappings", "all"], {}, 30.0, None),
    ("README dragonfly example: xc:groups=26, 1,024 nodes, stencil:32x32x32, "
     "inorder,random,rcb",
     ["compare", "-m", "xc:groups=26", "--nodes", "random:1024:seed=1", "-p",
      "stencil:32x32x32", "--mappings", "inorder,random,rcb"], {}, 20.0, None),
    ("1,048,576 ranks: stencil:128x128x64:box:periodic on torus:64x64x64:cores=4, TXYZ",
     ["compare", "-m", "torus:64x64x64:cores=4", "-p", "stencil:128x128x64:box:periodic",
      "--mappings", "TXYZ"],
     {"RANKMAP_MAX_FLOWS": "30000000", "RANKMAP_MAX_ROUTE_ENTRIES": "300000000"}, 60.0, 12.0),
    ("small compare: torus:4x4x4 + stencil:4x4x4, every mapper",
     ["compare", "-m", "torus:4x4x4", "-p", "stencil:4x4x4"], {}, 1.0, None),
]


def run(args: list[str], env: dict) -> tuple[float, float, float, float]:
    """Median wall (s), peak memory (MiB, the largest), user and system CPU (s)."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        runs = [timed_process(rankmap_exe() + args) for _ in range(REPEATS)]
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return (statistics.median(r[0] for r in runs), max(r[1] for r in runs),
            statistics.median(r[2] for r in runs), statistics.median(r[3] for r in runs))


def main() -> int:
    load = os.getloadavg()
    # warm the numba cache so compile time is not measured
    subprocess.run(rankmap_exe() + ["compare", "-m", "torus:4x4", "-p", "stencil:4x4"],
                   check=True, capture_output=True)
    lines = ["# Issue 11's whole-command targets", "",
             f"`benchmarks/bench_targets.py`: each command as a user runs it (`rankmap ...`, "
             f"default `--jobs`, numba cache warm), median of {REPEATS} runs on this 2-core "
             "machine; CPU is user and system time of the process and its children; peak "
             "resident memory is the largest of the process (or of one worker).", "",
             "| command | median wall (s) | user CPU (s) | system CPU (s) | peak memory (MiB) "
             "| target | met |", "|---|---:|---:|---:|---:|---|---|"]
    for label, args, env, target_s, target_gib in CASES:
        wall, mem, user, system = run(args, env)
        met = wall < target_s and (target_gib is None or mem < target_gib * 1024)
        target = f"< {target_s:g} s" + (f", < {target_gib:g} GB" if target_gib else "")
        lines.append(f"| {label} | {wall:.2f} | {user:.2f} | {system:.2f} | {mem:.0f} "
                     f"| {target} | {'yes' if met else '**no**'} |")
        print(lines[-1], flush=True)
    lines += ["", "Commands: " + "; ".join(
        (" ".join(f"{k}={v}" for k, v in env.items()) + " " if env else "")
        + "`rankmap " + " ".join(args) + "`" for _l, args, env, _t, _g in CASES) + ".",
        "", f"Load average (1 min) {load[0]:.1f} before the run, {os.getloadavg()[0]:.1f} "
        "after.", ""]
    write_results("RESULTS_targets.md", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
