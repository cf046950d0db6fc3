"""Benchmark of the time model (rankmap.timing): seconds to predict one phase.

Cases: the 16k-rank demo (stencil:128x128:box on bgp:4096) for TZXY, TXYZ and random, with
the time model's share of a compare; and 131,072 ranks with a 26-neighbour stencil
(stencil:64x64x32:box:periodic on torus:32x32x32:cores=4) for XYZT and TXYZ (inorder).
Reports medians over --repeat runs (after one warm-up for numba compilation) and writes
benchmarks/RESULTS_timing.md.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import argparse
import os
import statistics
import sys
import time
from rankmap.routing import router_for

CASES = [("bgp:4096", "stencil:128x128:box", ["TZXY", "TXYZ", "random"]),
         ("torus:32x32x32:cores=4", "stencil:64x64x32:box:periodic", ["XYZT", "TXYZ"])]


def measure(repeat: int):
    """Rows (machine, pattern, mapping, flows, median route s, median time-model s)."""
    from rankmap.allocation import parse_allocation
    from rankmap.machines import parse_machine
    from rankmap.mappers import build_mapping
    from rankmap.patterns import parse_pattern
    from rankmap.timing import TimeOptions, phase_time

    rows = []
    for mspec, pspec, names in CASES:
        m = parse_machine(mspec)
        a = parse_allocation(None, m)
        p = parse_pattern(pspec, default_ranks=a.n_cores)
        ph = p.phases[0]
        for name in names:
            nodes = build_mapping(name, p, m, a, 0).nodes(a)
            s, d = nodes[ph.src], nodes[ph.dst]
            phase_time(m, s[:100], d[:100], ph.bytes[:100], "dor", TimeOptions())  # compile
            t_route, t_model = [], []
            for _ in range(repeat):
                # CPU seconds of this (single-threaded) process: robust on a shared machine
                t0 = time.process_time()
                router_for(m, "dor").loads(s, d, ph.bytes)
                t1 = time.process_time()
                pred = phase_time(m, s, d, ph.bytes, "dor", TimeOptions())
                t2 = time.process_time()
                t_route.append(t1 - t0)
                t_model.append(t2 - t1)
            rows.append((mspec, pspec, name, ph.n_flows, statistics.median(t_route),
                         statistics.median(t_model), pred))
            print(rows[-1], flush=True)
    return rows


NOTES = """2026-11-25, late evening (commit 0eeb7ff): the time model now solves a translation-invariant
phase on a torus on one cell's flows (`rankmap.timing.symmetry`; README "Time model"). The
rank orders here are invariant (the 131,072-rank stencil's 884,736 flow groups become 26,624),
so the model went from 1.77-1.95 s to 0.21-0.26 s on the 3.4 M-flow stencil and from 0.04-0.05 s
to 0.01 s on BG/P; `random` has no symmetry (0.37 -> 0.09 s: grouped routing, one BLAS thread).
Same predicted times as before in every row.

Before the incremental re-sharing (same machine, same session, loaded, CPU seconds of the
max-min part alone): the 131,072-rank TXYZ case took 9.9 s in 14 full re-sharing passes, now
1.8 s in one filling; the 16,384-rank random case 2.2 s with retire_fraction=0.02 as an
approximation, now 1.1 s exact. Peak memory of a 1,048,576-rank TXYZ compare
(stencil:128x128x64:box:periodic on torus:64x64x64:cores=4) fell from 13.1 GB to 8.5 GB:
intra-node flows are modelled apart (no augmented copy of the incidence), nothing is copied
when no flow is dropped, and the column index has no values and 32-bit rows."""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "RESULTS_timing.md"))
    args = ap.parse_args(argv)
    rows = measure(args.repeat)
    lines = ["# Time model speed", "",
             f"`python benchmarks/bench_timing.py --repeat {args.repeat}`: median CPU seconds "
             f"of this process over {args.repeat} runs (after a warm-up compile) on this 2-core "
             "box shared with other jobs (CPU time, not wall time, so that other jobs' load does "
             "not count). 'route' is the link-load routing every evaluation does anyway, measured "
             "in the same run as the reference; 'time model' is what predicted_time_s adds "
             "(grouping, paths, max-min sharing with re-sharing).", "",
             "| machine | pattern | mapping | flows | route (s) | time model (s) | model / route "
             "| predicted |",
             "|---|---|---|---|---|---|---|---|"]
    for mspec, pspec, name, flows, tr, tm, pred in rows:
        lines.append(f"| {mspec} | {pspec} | {name} | {flows:,} | {tr:.2f} | {tm:.2f} | "
                     f"{tm / tr:.1f}x | {pred * 1e3:.2f} ms |")
    lines += ["", NOTES]
    from rankmap.io.atomic import write_atomic
    write_atomic(args.out, "\n".join(lines) + "\n", force=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
