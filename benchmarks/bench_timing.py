"""Benchmark of the time model (rankmap.timing): seconds to predict one phase.

Cases: the 16k-rank demo (stencil:128x128:box on bgp:4096) for TZXY, TXYZ and random, with
the time model's share of a compare; and 131,072 ranks with a 26-neighbour stencil
(stencil:64x64x32:box:periodic on torus:32x32x32:cores=4) for XYZT and TXYZ (inorder).
Reports medians over --repeat runs (after one warm-up for numba compilation) and writes
benchmarks/RESULTS_timing.md.
"""

from __future__ import annotations

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
                t0 = time.perf_counter()
                router_for(m, "dor").loads(s, d, ph.bytes)
                t1 = time.perf_counter()
                pred = phase_time(m, s, d, ph.bytes, "dor", TimeOptions())
                t2 = time.perf_counter()
                t_route.append(t1 - t0)
                t_model.append(t2 - t1)
            rows.append((mspec, pspec, name, ph.n_flows, statistics.median(t_route),
                         statistics.median(t_model), pred))
            print(rows[-1], flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "RESULTS_timing.md"))
    args = ap.parse_args(argv)
    rows = measure(args.repeat)
    lines = ["# Time model speed", "",
             f"`python benchmarks/bench_timing.py --repeat {args.repeat}`: median seconds over "
             f"{args.repeat} runs (after a warm-up compile) on this 2-core box shared with other "
             "jobs. 'route' is the link-load routing every evaluation does anyway; 'time model' "
             "is what predicted_time_s adds (paths, max-min sharing with re-sharing).", "",
             "| machine | pattern | mapping | flows | route (s) | time model (s) | predicted |",
             "|---|---|---|---|---|---|---|"]
    for mspec, pspec, name, flows, tr, tm, pred in rows:
        lines.append(f"| {mspec} | {pspec} | {name} | {flows:,} | {tr:.2f} | {tm:.2f} | "
                     f"{pred * 1e3:.2f} ms |")
    from rankmap.io.atomic import write_atomic
    write_atomic(args.out, "\n".join(lines) + "\n", force=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
