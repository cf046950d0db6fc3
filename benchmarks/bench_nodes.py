"""Nodes with two sockets: what the in-node placement step is worth (issue 13, item 3).

Machines with 2-socket nodes (``node=pack:2,numa:2,core:8``: 2 sockets x 2 NUMA domains x 8
cores = 32 cores per node; 10 GB/s network links, the default 10 GB/s per NUMA domain and
5 GB/s inter-socket link), patterns that fill them. For every mapper the placement is built
twice, without and with the in-node step (``build_mapping(..., in_node=False)``, then
``build_placement(...)`` as ``compare`` builds it: a node keeps its new order only where the
time model predicts it no slower, :func:`rankmap.selection.in_node.time_accept`): the
nodes of every rank are the same, only the cores inside each node differ. Reported: predicted
time, bytes between NUMA domains and between sockets of a node, the predicted time's ratio
(step / no step), and the CPU time of the step itself (median of RANKMAP_BENCH_REPEATS runs,
default 3) against the mapper's own CPU time measured in the same run.

Writes benchmarks/RESULTS_nodes.md. Run: ``make bench ONLY=nodes``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os
import sys

from rankmap.allocation import whole_machine
from rankmap.evaluation import Evaluator
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping
from rankmap.mappers.domain_placement import in_node_step
from rankmap.patterns import parse_pattern
from rankmap.selection import build_placement
from rankmap.selection.in_node import in_node_accept
from rankmap.units import format_bytes

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing_util import median_cpu  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "3"))
NODE = "node=pack:2,numa:2,core:8"
MAPPERS = ["TXYZ", "XYZT", "rcb", "greedy", "graph"]
#: (machine, pattern, mappers); graph is left out on fft2d, whose 2,048 ranks talk to 63
#: others each (the graph mapper takes minutes there, and the step has nothing to improve)
CASES = [
    (f"torus:4x4x4:bw=10GB/s:{NODE}", "stencil:16x16x8:box", MAPPERS),
    (f"torus:4x4x4:bw=10GB/s:{NODE}", "lulesh:16x16x8:s=16", MAPPERS),
    (f"torus:4x4x2:bw=10GB/s:{NODE}", "stencil:32x32:box", MAPPERS),
    (f"torus:4x4x4:bw=10GB/s:{NODE}", "fft2d:32x64", MAPPERS[:-1]),
]


def cpu(fn):
    """(result, median CPU seconds over REPEATS runs)."""
    return median_cpu(fn, REPEATS)


def main() -> None:
    lines = ["# Nodes with sockets and NUMA domains: the in-node placement step", "",
             "`benchmarks/bench_nodes.py` (`make bench ONLY=nodes`). Every node: "
             "`pack:2,numa:2,core:8` (2 sockets x 2 NUMA domains x 8 cores); network links "
             "10 GB/s, `--mem-bw` 10 GB/s per NUMA domain, `--socket-bw` 5 GB/s (defaults). "
             "*no step* = the mapper's own cores, *step* = after the in-node placement step "
             "(the default: a node keeps its new order only where the time model predicts "
             "it no slower); the nodes of every rank are the same in both. `inorder` (the "
             "launcher's order, never re-dealt) is the reference. CPU times: medians of "
             f"{REPEATS} runs on a shared 2-core machine; the step's cost is given as a ratio "
             "to the mapper's own time, measured in the same run.", ""]
    for spec, pat, mappers in CASES:
        m = parse_machine(spec)
        a = whole_machine(m)
        p = parse_pattern(pat, default_ranks=a.n_cores)
        ev = Evaluator(m, a, p)
        ref = ev.evaluate(build_mapping("inorder", p, m, a)).metrics
        lines += [f"## `{pat}` on `{spec}` ({p.n_ranks:,} ranks)", "",
                  f"inorder: predicted {ref['predicted_time_s'] * 1e3:.2f} ms, inter-domain "
                  f"{format_bytes(ref['inter_domain_bytes'])}, inter-socket "
                  f"{format_bytes(ref['inter_socket_bytes'])}", "",
                  "| mapping | time, no step | time, step | step / no step | inter-domain, "
                  "no step -> step | inter-socket, no step -> step | mapper CPU | step CPU "
                  "(ratio) |", "|---|---|---|---|---|---|---|---|"]
        for name in mappers:
            raw, t_map = cpu(lambda: build_mapping(name, p, m, a, in_node=False))
            cores, t_step = cpu(lambda: in_node_step(raw.core_of_rank, p, m, a,
                                                     accept=in_node_accept(p, m, a, ev)))
            step = build_placement(name, p, m, a, evaluator=ev)
            assert (step.core_of_rank == cores).all()
            e0, e1 = ev.evaluate(raw).metrics, ev.evaluate(step).metrics
            t0, t1 = e0["predicted_time_s"], e1["predicted_time_s"]
            lines.append(
                f"| {name} | {t0 * 1e3:.2f} ms | {t1 * 1e3:.2f} ms | {t1 / t0:.2f} | "
                f"{format_bytes(e0['inter_domain_bytes'])} -> "
                f"{format_bytes(e1['inter_domain_bytes'])} | "
                f"{format_bytes(e0['inter_socket_bytes'])} -> "
                f"{format_bytes(e1['inter_socket_bytes'])} | {t_map:.3f} s | {t_step:.3f} s "
                f"({t_step / t_map if t_map > 0 else float('inf'):.2f}x) |")
            print(lines[-1], flush=True)
        lines.append("")
    path = os.path.join(HERE, "RESULTS_nodes.md")
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines))
    os.replace(path + ".tmp", path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
