"""Reading big link-counter files: ``rankmap counters`` and ``rankmap links`` on the links of
the 131,072-rank stencil.

The file is ``evaluate --links-out`` of ``stencil:64x64x32:box:periodic + allreduce:131072``
under ``rcb`` on ``torus:32x32x32:cores=4`` (two phases, 3.5 M lines, about 117 MiB). For each
command: CPU seconds and peak resident memory of the child process (``getrusage``), medians of
RANKMAP_BENCH_REPEATS runs (default 3), against ``wc -l`` reading the same file in the same
run (a C loop over every byte: the floor of any reader), and the peak memory as a multiple of
the file's size.

Writes benchmarks/RESULTS_counters.md (above its earlier runs). Run:
``make bench ONLY=counters`` or ``.venv/bin/python benchmarks/bench_counters.py``.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing_util import write_results  # noqa: E402

REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "3"))
MACHINE = "torus:32x32x32:cores=4"
PATTERN = "stencil:64x64x32:box:periodic + allreduce:131072"
RANKMAP = [sys.executable, "-m", "rankmap"]


def _child(cmd: list[str]) -> tuple[float, float]:
    """CPU seconds and peak resident MiB of one run of ``cmd`` (its own process)."""
    code = ("import resource, subprocess, sys\n"
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
            "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "print(r.ru_utime + r.ru_stime, r.ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", code, *cmd], check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1]) / 1024


def _median(cmd: list[str]) -> tuple[float, float]:
    runs = [_child(cmd) for _ in range(REPEATS)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="rankmap-bench-counters-") as tmp:
        path = os.path.join(tmp, "links.csv")
        subprocess.run([*RANKMAP, "evaluate", "--machine", MACHINE, "--pattern", PATTERN,
                        "--mapping", "rcb", "--time-model", "off", "--links-out", path,
                        "--format", "csv"], check=True, stdout=subprocess.DEVNULL)
        size_mib = os.path.getsize(path) / 2**20
        with open(path, "rb") as fh:
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 24), b""))
        wc_cpu, wc_mib = _median(["wc", "-l", path])
        rows = []
        for name, cmd in (("counters FILE --format csv",
                           [*RANKMAP, "counters", path, "--format", "csv"]),
                          (f"links FILE --machine {MACHINE} --format csv",
                           [*RANKMAP, "links", path, "--machine", MACHINE, "--format", "csv"])):
            cpu, mib = _median(cmd)
            rows.append(f"| `{name}` | {cpu:.2f} | {cpu / wc_cpu:.0f}x | {mib:.0f} | "
                        f"{mib / size_mib:.1f}x |")
    text = "\n".join([
        "# Reading big counters files (`counters`, `links`)",
        "",
        f"`benchmarks/bench_counters.py`: the links of `{PATTERN}` under `rcb` on `{MACHINE}`"
        f" ({lines:,} lines, {size_mib:.0f} MiB). CPU seconds and peak resident memory of each "
        f"command's process, medians of {REPEATS} runs; `wc -l` on the same file, the same run: "
        f"{wc_cpu:.3f} s CPU, {wc_mib:.0f} MiB.",
        "",
        "| command | CPU (s) | CPU / `wc -l` | peak memory (MiB) | peak / file size |",
        "|---|---:|---:|---:|---:|",
        *rows,
        "",
        "Before the numpy reader (the rows held as Python strings, then one fixed-width text "
        "array), the same file took 4.18 GB and 23.5 s of CPU in `counters`, 4.19 GB and 25.5 s "
        "in `links` (measured by hand on 2026-11-28, one run each); a 237 MiB file, under the "
        "256 MiB input cap, ran out of memory at 8 GB.",
    ])
    write_results("RESULTS_counters.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
