"""Recording persistent sends: the CPU time of MPI_Start as the persistent requests grow.

The recording library looks up every started request (its destination and size, noted at
``MPI_Send_init``) and counts the send. ``benchmarks/c/persistent_start.c``, on 2 processes
(``mpirun -n 2``), holds K persistent 8-byte sends to the other process (and K receives) and
starts them all ROUNDS times; rank 0 prints the CPU nanoseconds per started send. For
K = 16, 1,024 and 8,192, run RANKMAP_BENCH_REPEATS times (default 5,
medians) in three ways, interleaved: without the library, with it loaded and not recording,
and recording (``RANKMAP_RECORD``). With ``RANKMAP_BENCH_BEFORE=DIR`` (a source tree) its
library is timed recording too, as the reference.

Writes benchmarks/RESULTS_persistent.md (above its earlier runs). Run:
``make bench ONLY=persistent``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from timing_util import REPEATS, write_results  # noqa: E402

#: persistent sends held, and the rounds that start them all (about 400,000 starts a run)
CASES = [(16, 25000), (1024, 400), (8192, 50)]


def _library(src: str | None) -> str:
    """The PMPI library of this tree (``src``: another tree's ``src`` folder), built if needed."""
    code = "from rankmap.pmpi.build import library_path; print(library_path())"
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    return subprocess.run([sys.executable, "-c", code], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def _ns(program: str, k: int, rounds: int, env: dict) -> float:
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-n", "2"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    for name in env:
        cmd += ["-x", name]
    out = subprocess.run(cmd + [program, str(k), str(rounds)], env={**os.environ, **env},
                         check=True, capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def main() -> int:
    """Build, time, write benchmarks/RESULTS_persistent.md."""
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        print("bench_persistent: needs mpicc and mpirun (apt-get install libopenmpi-dev "
              "openmpi-bin)")
        return 0
    work = tempfile.mkdtemp(prefix="rankmap-bench-persistent-")
    program = os.path.join(work, "persistent_start")
    subprocess.run(["mpicc", "-O2", "-o", program,
                    os.path.join(HERE, "c", "persistent_start.c")], check=True)
    record = os.path.join(work, "rec.csv")
    ways = [("no library", {}), ("loaded, not recording", {"LD_PRELOAD": _library(None)}),
            ("recording", {"LD_PRELOAD": _library(None), "RANKMAP_RECORD": record})]
    before = os.environ.get("RANKMAP_BENCH_BEFORE")
    if before:
        ways.append(("recording, before", {"LD_PRELOAD": _library(os.path.join(before, "src")),
                                           "RANKMAP_RECORD": record}))
    rows = []
    for k, rounds in CASES:
        times: dict[str, list[float]] = {name: [] for name, _ in ways}
        for _ in range(REPEATS):
            for name, env in ways:
                times[name].append(_ns(program, k, rounds, env))
                if os.path.exists(record):
                    os.unlink(record)
        med = {name: statistics.median(v) for name, v in times.items()}
        rows.append((k, med))
        print(f"K={k}: " + ", ".join(f"{n} {v:.1f} ns" for n, v in med.items()), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    names = [name for name, _ in ways]
    lines = ["# Recording persistent sends: CPU time per MPI_Start (PMPI library)", "",
             "Measured by `benchmarks/bench_persistent.py` (`benchmarks/c/persistent_start.c`: "
             "2 processes, each with K persistent 8-byte sends to the other and K receives, "
             "all started per round; rank 0 timed) on the shared 2-core box: CPU nanoseconds "
             "per started send (recorded: looked up and counted), "
             f"medians of {REPEATS} runs of each way, interleaved; the ratio is recording "
             "against no library in the same run.", "",
             "| K (persistent sends) | " + " | ".join(f"{n} (ns)" for n in names)
             + " | recording / no library |",
             "|---:|" + "---:|" * (len(names) + 1)]
    for k, med in rows:
        lines.append(f"| {k:,} | " + " | ".join(f"{med[n]:.1f}" for n in names)
                     + f" | {med['recording'] / med['no library']:.2f}x |")
    write_results("RESULTS_persistent.md", "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
