"""Launch-time overhead benchmark (issue: launch with it).

What a job pays before its MPI program starts, or inside ``rankmap.mpi.cart_create``, at the
scale of a 32,768-node Blue Gene/P (131,072 processes, 4 per node):

* resolving every process's node label (host names ``node<x>-<y>-<z>``) to node ids;
* assigning new ranks from a TXYZ placement of stencil:512x256 (``assign_ranks``);
* writing each launcher file format for that placement.

Medians of several runs, in seconds, single process (no MPI needed). Writes
benchmarks/RESULTS_launch.md. Run: ``make bench ONLY=launch`` or
``.venv/bin/python benchmarks/bench_launch.py``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing_util import REPEATS, median_time, write_results  # noqa: E402
MACHINE = "bgp:32768"
PATTERN = "stencil:512x256"




def main() -> int:
    """Time label resolution, rank assignment and every emitter; write RESULTS_launch.md."""
    from rankmap.allocation import whole_machine
    from rankmap.io.emit import EMITTERS
    from rankmap.machines import parse_machine
    from rankmap.mappers import build_mapping
    from rankmap.mpi.nodes import resolve_node_labels
    from rankmap.mpi.placement import assign_ranks
    from rankmap.patterns import parse_pattern

    machine = parse_machine(MACHINE)
    pattern = parse_pattern(PATTERN)
    cpn = machine.cores_per_node
    rng = np.random.default_rng(0)
    proc_nodes = rng.permutation(np.repeat(np.arange(machine.n_nodes), cpn))
    labels = [machine.node_name(int(n)) for n in proc_nodes]
    rows = [("resolve 131,072 host names to node ids",
             median_time(lambda: resolve_node_labels(labels, machine)))]
    rows.append(("assign_ranks (TXYZ placement + new rank of every process)",
                 median_time(lambda: assign_ranks(pattern, machine, proc_nodes, "TXYZ"))))
    alloc = whole_machine(machine)
    mapping = build_mapping("TXYZ", pattern, machine, alloc)
    for name, emitter in EMITTERS.items():
        if name == "bgq":
            continue  # needs a 5-D machine
        rows.append((f"write the {name} file", median_time(lambda e=emitter: e.write(mapping, machine,
                                                                                 alloc))))
    lines = ["# Launch-time overhead (benchmarks/bench_launch.py)", "",
             f"{MACHINE} ({machine.n_nodes} nodes x {cpn} cores = {pattern.n_ranks} processes), "
             f"pattern {PATTERN}; median of {REPEATS} runs, one process, on the machine that ran "
             f"`make bench` (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs when "
             "it finished).", "", "| step | median (s) |", "|---|---|"]
    lines += [f"| {label} | {t:.3f} |" for label, t in rows]
    text = "\n".join(lines) + "\n"
    write_results("RESULTS_launch.md", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
