"""Placement quality and speed of every mapper vs Scotch (issue 3, item 10).

Cases (one rank per core, periodic stencils on matching tori):

* ``stencil:32x32:periodic`` on ``torus:32x32`` (1,024 ranks),
* ``stencil:128x128:periodic`` on ``torus:128x128`` (16,384 ranks),
* ``stencil:64x32x64:periodic`` on ``torus:64x32x64`` (131,072 ranks).

For every mapper it reports the busiest directed link's bytes, the hop-bytes and the time to
compute the placement (median of RANKMAP_BENCH_REPEATS runs, default 3; 1 at 131,072 ranks),
with ``dor`` routing. Scotch's ``scotch_gmap`` (Debian package ``scotch``) is run when it is
installed, on the same graph with target ``torus3D X Y Z`` (Z = 1 for 2-D tori) and ``-b0``; its
time includes writing and reading its files. A mapper too slow at a scale is skipped there,
with the reason written into the results. Writes benchmarks/RESULTS_mappers.md (above its
earlier runs).

Run: ``make bench`` or ``.venv/bin/python benchmarks/bench_mappers.py``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scotch_util import SCOTCH_GMAP, write_scotch_graph  # noqa: E402
from timing_util import write_results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "3"))
#: the max-min time model (predicted_time_s) costs far more per evaluation than routing at
#: these sizes; it is off here (RANKMAP_BENCH_TIME_MODEL=1 turns it on), so auto ranks by the
#: busiest link, then hop-bytes, the same objective Scotch is compared on
TIME_MODEL = os.environ.get("RANKMAP_BENCH_TIME_MODEL", "0") == "1"
CASES = [
    ("torus:32x32", "stencil:32x32:periodic"),
    ("torus:128x128", "stencil:128x128:periodic"),
    ("torus:64x32x64", "stencil:64x32x64:periodic"),
]
MAPPERS = ["inorder", "greedy", "mueller-resch", "rcb", "graph", "refine:rcb", "rubik-tile",
           "auto"]
#: seconds scotch_gmap may take before it counts as failed
SCOTCH_TIMEOUT = float(os.environ.get("RANKMAP_BENCH_SCOTCH_TIMEOUT", "120"))
#: mappers left out above a rank count, and why (measured: too slow to be useful there)
SKIP_ABOVE = {"graph": (20000, "not run at this size to keep the benchmark short "
                              "(its time grows with size; not measured here)"),
              "refine:rcb": (20000, "not run at this size to keep the benchmark short "
                                    "(not measured here)")}


def scotch_mapping(machine, pattern, workdir: str) -> tuple[np.ndarray, float]:
    """Run scotch_gmap; return (core of every rank, seconds incl. file I/O)."""
    t0 = time.perf_counter()
    grf, tgt, out = (os.path.join(workdir, n) for n in ("g.grf", "t.tgt", "m.map"))
    write_scotch_graph(grf, pattern)
    dims = [int(d) for d in machine.dims] + [1] * (3 - len(machine.dims))
    with open(tgt, "w") as fh:
        fh.write(f"torus3D {' '.join(map(str, dims))}\n")
    proc = subprocess.run(SCOTCH_GMAP + [grf, tgt, out], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=SCOTCH_TIMEOUT)
    if proc.returncode != 0:
        raise RuntimeError(f"scotch_gmap exited with status {proc.returncode}")
    data = np.loadtxt(out, skiprows=1, dtype=np.int64).reshape(-1, 2)
    cores = np.empty(pattern.n_ranks, dtype=np.int64)
    cores[data[:, 0]] = data[:, 1]          # terminal numbers: first dimension fastest
    return cores, time.perf_counter() - t0


def run_case(machine_spec: str, pattern_spec: str) -> list[dict]:
    """Rows {mapper, max_link_bytes, hop_bytes, seconds or skip reason} for one case."""
    from rankmap.allocation import whole_machine
    from rankmap.errors import RankmapError
    from rankmap.evaluation import Evaluator
    from rankmap.machines import parse_machine
    from rankmap.mappers import build_mapping, validate_mapping
    from rankmap.patterns import parse_pattern
    from rankmap.selection import auto_select
    from rankmap.timing import TimeOptions

    m = parse_machine(machine_spec)
    time_options = TimeOptions(enabled=TIME_MODEL)
    a = whole_machine(m)
    p = parse_pattern(pattern_spec)
    ev = Evaluator(m, a, p, time_options=time_options)
    reps = 1 if p.n_ranks > 20000 else REPEATS
    rows = []
    for name in MAPPERS:
        limit = SKIP_ABOVE.get(name)
        if limit and p.n_ranks > limit[0]:
            rows.append({"mapper": name, "skip": limit[1]})
            continue
        times, mapping = [], None
        try:
            for _ in range(reps):
                t0 = time.perf_counter()
                if name == "auto":
                    comp = auto_select(p, m, a, seed=0, time_options=time_options)
                    mapping = comp.best.mapping
                else:
                    mapping = build_mapping(name, p, m, a, seed=0)
                times.append(time.perf_counter() - t0)
        except RankmapError as exc:
            rows.append({"mapper": name, "skip": str(exc)})
            continue
        met = ev.evaluate(mapping).metrics
        rows.append({"mapper": name if name != "auto" else f"auto (winner {mapping.name})",
                     "max_link_bytes": met["max_link_bytes"], "hop_bytes": met["hop_bytes"],
                     "seconds": statistics.median(times)})
        print(f"  {pattern_spec} {rows[-1]['mapper']}: {rows[-1]['seconds']:.2f} s", flush=True)
    if shutil.which("scotch_gmap"):
        times, cores, failure = [], None, None
        for _ in range(reps):
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    cores, dt = scotch_mapping(m, p, tmp)
                except subprocess.TimeoutExpired:
                    failure = f"no mapping within {SCOTCH_TIMEOUT:.0f} s"
                except RuntimeError as exc:
                    failure = str(exc)
            if failure:
                break
            times.append(dt)
        if failure:
            rows.append({"mapper": "scotch_gmap -b0", "skip": failure})
        else:
            met = ev.evaluate(validate_mapping("scotch", cores, p.n_ranks, a)).metrics
            rows.append({"mapper": "scotch_gmap -b0", "max_link_bytes": met["max_link_bytes"],
                         "hop_bytes": met["hop_bytes"], "seconds": statistics.median(times)})
        print(f"  {pattern_spec} scotch: {failure or statistics.median(times)}", flush=True)
    else:
        rows.append({"mapper": "scotch_gmap", "skip": "not installed"})
    return rows


def render(results, when: str = "") -> str:
    """The Markdown results document; ``when`` says when and under what load it ran."""
    lines = ["# Mapper quality and speed (issue 3, item 10)", "",
             "Measured by `benchmarks/bench_mappers.py` on this project's 2-core box "
             f"(median of {REPEATS} runs; 1 run at 131,072 ranks), `dor` routing, 1 MiB per "
             "message, one rank per core. Busiest link = most bytes on one directed link; "
             "hop-bytes summed over all flows. Times are wall seconds to compute the placement "
             "(Scotch: including writing its graph file and reading its mapping). The time model "
             "(predicted_time_s) is " + ("on" if TIME_MODEL else "off (set "
             "RANKMAP_BENCH_TIME_MODEL=1 to include it)") + ", so `auto` ranks by busiest link "
             "then hop-bytes; `refine` under its default work bounds (20,000 proposals, "
             "2^27 route entries, the small-gain stop). " + when, ""]
    for (mspec, pspec), rows in results:
        lines += [f"## `{pspec}` on `{mspec}`", "",
                  "| mapper | busiest link (MiB) | hop-bytes (GiB) | time (s) |",
                  "|---|---:|---:|---:|"]
        for r in rows:
            if "skip" in r:
                lines.append(f"| {r['mapper']} | skipped: {r['skip']} | | |")
            else:
                lines.append(f"| {r['mapper']} | {r['max_link_bytes'] / 2**20:.1f} | "
                             f"{r['hop_bytes'] / 2**30:.1f} | {r['seconds']:.2f} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    """Run every case, print progress, write benchmarks/RESULTS_mappers.md."""
    only = int(os.environ.get("RANKMAP_BENCH_MAX_CASES", str(len(CASES))))
    load = os.getloadavg()[0]
    results = []
    for mspec, pspec in CASES[:only]:
        print(f"case {pspec} on {mspec}", flush=True)
        results.append(((mspec, pspec), run_case(mspec, pspec)))
    when = (f"Run on {time.strftime('%Y-%m-%d', time.gmtime())}; load average (1 min) "
            f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end.")
    text = render(results, when)
    write_results("RESULTS_mappers.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
