"""Dragonfly and fat-tree routing benchmark (issue: dragonfly and fat-tree networks).

Times ``Machine.route`` (the per-link loads of one phase) and ``Machine.route_paths`` (the
flows x links matrix the time model uses), in process, median of several runs after a warm-up
(numba compilation excluded):

* xc:groups=26 (Cray XC, 9,984 nodes), 1,024 random nodes x 32 cores, stencil:32x32x32
  (32,768 ranks, 190,464 flows) placed by inorder and by random, under minimal, valiant, ugal;
* fattree:k=16:levels=3 (4,096 hosts), fft2d:64x64 one phase (258,048 flows) placed in order,
  under dmodk and ecmp (route only).

Writes benchmarks/RESULTS_dragonfly.md (above its earlier runs). Run:
``.venv/bin/python benchmarks/bench_dragonfly.py``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os
import sys
from rankmap.routing import router_for

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing_util import REPEATS, median_time, write_results  # noqa: E402




def main() -> int:
    from rankmap.allocation import parse_allocation
    from rankmap.machines import parse_machine
    from rankmap.mappers import build_mapping
    from rankmap.patterns import parse_pattern

    rows = []
    m = parse_machine("xc:groups=26")
    a = parse_allocation("random:1024:seed=1", m)
    p = parse_pattern("stencil:32x32x32")
    ph = p.phases[0]
    for mapping in ("inorder", "random"):
        nodes = build_mapping(mapping, p, m, a).nodes(a)
        s, d = nodes[ph.src], nodes[ph.dst]
        for routing in m.routings:
            t = median_time(lambda: router_for(m, routing).loads(s, d, ph.bytes), warmup=True)
            rows.append(("xc:groups=26", "stencil:32x32x32", mapping, routing, "route",
                         ph.n_flows, t))
        t = median_time(lambda: router_for(m, "minimal").paths(s, d), warmup=True)
        rows.append(("xc:groups=26", "stencil:32x32x32", mapping, "minimal", "route_paths",
                     ph.n_flows, t))
    f = parse_machine("fattree:k=16:levels=3")
    q = parse_pattern("fft2d:64x64").phases[0]
    for routing in f.routings:
        t = median_time(lambda: router_for(f, routing).loads(q.src, q.dst, q.bytes), warmup=True)
        rows.append(("fattree:k=16:levels=3", "fft2d:64x64 (one phase)", "inorder", routing,
                     "route", q.n_flows, t))
    lines = ["# Dragonfly and fat-tree routing", "",
             f"Median of {REPEATS} runs after a warm-up, in process, on this machine "
             f"({os.cpu_count()} cores, shared). Written by benchmarks/bench_dragonfly.py.", "",
             "| machine | pattern | mapping | routing | call | flows | median s |",
             "|---|---|---|---|---|---:|---:|"]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[6]:.3f} |")
    write_results("RESULTS_dragonfly.md", "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
