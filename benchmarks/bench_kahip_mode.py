"""The ``graph`` mapper with KaHIP's k-way cut in ECO and in FAST mode (issue 11).

``graph`` cuts the ranks into node-sized parts with KaHIP (``rankmap.mappers.node_partition``).
ECO cuts a little less than FAST but takes longer; what counts is the placement ``graph``
makes of the parts. For every problem: ``graph``'s CPU seconds and its placement's predicted
time, busiest link and hop-bytes (``dor``, time model on), in each mode. Problems with one
core per node are left out (no k-way cut there), and so are dense graphs of more than 2^18
adjacency entries (fft2d:64x64 on 1,024 nodes), where ECO took over 400 s against FAST's 2 s.
Writes benchmarks/RESULTS_kahip_mode.md.
Run: ``make bench ONLY=kahip_mode`` or ``.venv/bin/python benchmarks/bench_kahip_mode.py``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from graph_setting import node_partition_setting, timed_graph  # noqa: E402
from timing_util import write_results  # noqa: E402

#: (machine, allocation or "", pattern)
CASES = [
    ("torus:8x8x16:cores=4", "", "stencil:16x16x16:box"),
    ("torus:16x16x32:cores=2", "random:4096:seed=6", "stencil:32x16x16"),
    ("torus:8x8x8:cores=2", "", "fft2d:32x32"),
    ("bgp:4096", "", "stencil:128x128:box"),
    ("dragonfly:groups=4,rows=2,cols=4,nodes=2:node=pack:2,numa:2,core:8", "", "lulesh:8x8x16"),
    ("torus:3x3x3:cores=8", "", "lulesh:6x6x6:s=16"),
    ("torus:3x3x3:cores=8", "", "stencil:6x6x6:box:bytes=6936"),
    ("torus:8x8x8:cores=4", "", "lulesh:8x8x8"),
    ("torus:8x8x8:cores=4", "", "stencil:16x16x8:box"),
    ("torus:8x8x8:cores=8", "", "minighost"),
    ("torus:8x8x8:cores=2", "", "alltoall:32x32:dims=0"),
]
MODES = (("ECO", 1), ("FAST", 0))


def run_case(machine_spec, alloc_spec, pattern_spec) -> list[dict]:
    """graph's CPU time and metrics in each mode."""
    from rankmap.allocation import parse_allocation, whole_machine
    from rankmap.evaluation import Evaluator
    from rankmap.machines import parse_machine
    from rankmap.patterns import parse_pattern

    m = parse_machine(machine_spec)
    a = parse_allocation(alloc_spec, m) if alloc_spec else whole_machine(m)
    p = parse_pattern(pattern_spec, default_ranks=a.n_cores)
    ev = Evaluator(m, a, p)
    rows = []
    for label, mode in MODES:
        with node_partition_setting("KAHIP_MODE", mode):
            _cores, cpu, met = timed_graph(p, m, a, ev)
        rows.append({"mode": label, "cpu": cpu, **met})
    return rows


def render(results) -> str:
    out = ["# `graph` with KaHIP's k-way cut in ECO and FAST mode", "",
           "`benchmarks/bench_kahip_mode.py`: the `graph` mapper's CPU seconds (one run) and "
           "its placement's predicted time, busiest link and hop-bytes (`dor`, time model on) "
           "with the node parts cut in each mode; FAST / ECO ratios. Lower is better.", "",
           "| problem | ECO CPU (s) | FAST CPU (s) | ECO time (s) | FAST time (s) | time FAST/ECO "
           "| busiest FAST/ECO | hop-bytes FAST/ECO |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (ms, al, ps), (eco, fast) in results:
        name = f"`{ps}` on `{ms}`" + (f" ({al})" if al else "")
        out.append(f"| {name} | {eco['cpu']:.1f} | {fast['cpu']:.1f} | "
                   f"{eco['predicted_time_s']:.5g} | {fast['predicted_time_s']:.5g} | "
                   f"{fast['predicted_time_s'] / eco['predicted_time_s']:.3f} | "
                   f"{fast['max_link_bytes'] / eco['max_link_bytes']:.3f} | "
                   f"{fast['hop_bytes'] / eco['hop_bytes']:.3f} |")
    ratios = [f["predicted_time_s"] / e["predicted_time_s"] for _c, (e, f) in results]
    better = sum(r < 1 - 1e-9 for r in ratios)
    same = sum(abs(r - 1) <= 1e-9 for r in ratios)
    out += ["", f"FAST's predicted time is lower in {better} of {len(ratios)} problems, the "
            f"same in {same} and higher in {len(ratios) - better - same} (at most "
            f"{max(ratios):.3f}x); its CPU time is "
            f"{min(e['cpu'] / f['cpu'] for _c, (e, f) in results):.1f}-"
            f"{max(e['cpu'] / f['cpu'] for _c, (e, f) in results):.1f}x less. "
            "rankmap uses FAST (`node_partition.KAHIP_MODE`).", ""]
    return "\n".join(out)


def main() -> int:
    results = []
    for case in CASES:
        rows = run_case(*case)
        print(case, [(r["mode"], round(r["cpu"], 1), r["predicted_time_s"]) for r in rows],
              flush=True)
        results.append((case, rows))
    write_results("RESULTS_kahip_mode.md", render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
