"""KaHIP's 32-bit edge weights: placements with the weights capped to sum below 2**30 (as
shipped, :func:`rankmap.mappers.node_partition.int_weights`) against the earlier scaling
(the largest weight 10**6 whatever the sum, which wrapped around inside KaHIP).

KaHIP adds edge weights in 32-bit integers: the edges of its coarse graphs, cuts, gains. With
every weight scaled to at most 10**6, a graph whose weights sum past 2**31 (a 4,096-rank
27-point stencil: 93,240 weights of 10**6) made KaHIP cut with wrapped-around sums. This
benchmark measures what that cost, on the problems of bench_quality.py and bench_kahip_mode.py:

* the bytes KaHIP's bisection (k = 2) and 8-way cut leave between parts, both scalings;
* the ``graph`` and ``graph-bisect`` mappers' placements: predicted time, busiest link and
  hop-bytes (``dor``, time model on), both scalings;
* ``auto``'s pick, both scalings.

Ratios are capped / earlier: below 1 is better. One run each (placements are deterministic;
no timing is reported). Writes benchmarks/RESULTS_kahip_weights.md (above its earlier runs).

Run: ``make bench ONLY=kahip_weights`` or ``.venv/bin/python benchmarks/bench_kahip_weights.py``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import contextlib
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_quality as bq  # noqa: E402
from timing_util import write_results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

#: (machine, allocation, pattern): bench_quality's problems up to 16K ranks, then
#: bench_kahip_mode's
CASES = (
    ("torus:8x8x16:cores=4", "", "stencil:16x16x16:box"),
    ("torus:16x16x32:cores=2", "random:4096:seed=6", "stencil:32x16x16"),
    ("torus:8x8x16:cores=4", "", "fft2d:64x64"),
    ("torus:16x16x16", "", "stencil:64x64:periodic"),
    ("torus:16x16x16", "", "stencil:80x50:box"),
    ("bgp:4096", "", "stencil:128x128:box"),
    ("torus:8x8x16:cores=4", "", "@rgg:4096:1"),
    ("torus:16x16x16:cores=2", "random:1024:seed=3", "@rgg:2048:3"),
    ("torus:8x8x8:cores=4", "", "@mesh:2048:4"),
    ("torus:16x16x32:cores=2", "random:4096:seed=5", "@mesh:8192:5"),
    ("torus:16x16x16:cores=4", "", "@rgg:16384:2"),
    ("torus:8x8x8:cores=2", "", "fft2d:32x32"),
    ("torus:8x8x8:cores=4", "", "lulesh:8x8x8"),
    ("torus:8x8x8:cores=4", "", "stencil:16x16x8:box"),
    ("torus:8x8x8:cores=8", "", "minighost"),
)
#: ``auto`` runs on the problems up to this many ranks (16K-rank rgg: about 10 s each way)
AUTO_RANKS = 16384


def earlier_weights(data: np.ndarray) -> np.ndarray:
    """The earlier scaling: the largest weight 10**6, any sum (int32)."""
    if data.size == 0:
        return data.astype(np.int32)
    return np.maximum(1, np.rint(data / float(data.max()) * 1e6)).astype(np.int32)


@contextlib.contextmanager
def _patched(weights):
    """Every KaHIP caller of rankmap uses ``weights`` inside the block."""
    from rankmap.mappers import graph_partition, network_bisection, node_partition

    saved = [(m, m.int_weights) for m in (node_partition, network_bisection, graph_partition)]
    for m, _ in saved:
        m.int_weights = weights
    try:
        yield
    finally:
        for m, f in saved:
            m.int_weights = f


def _cut(g, weights, k):
    import kahip

    from rankmap.mappers.node_partition import KAHIP_IMBALANCE, KAHIP_MODE
    n = g.shape[0]
    _c, part = kahip.kaffpa(np.ones(n, dtype=np.int32), g.indptr.astype(np.int32),
                            weights(g.data), g.indices.astype(np.int32), k, KAHIP_IMBALANCE,
                            True, 0, KAHIP_MODE)
    part = np.asarray(part)
    coo = g.tocoo()
    return float(g.data[part[coo.row] != part[coo.col]].sum()) / 2


def run_case(machine_spec, alloc_spec, pattern_spec, workdir) -> dict:
    """Cuts, mapper metrics and auto's pick of one problem under both scalings."""
    from rankmap.allocation import parse_allocation, whole_machine
    from rankmap.evaluation import Evaluator
    from rankmap.machines import parse_machine
    from rankmap.mappers import build_mapping
    from rankmap.mappers.graph_partition import communication_graph
    from rankmap.mappers.node_partition import int_weights
    from rankmap.patterns import parse_pattern
    from rankmap.selection import auto_select

    m = parse_machine(machine_spec)
    a = parse_allocation(alloc_spec, m) if alloc_spec else whole_machine(m)
    p = parse_pattern(bq.materialise(pattern_spec, workdir), default_ranks=a.n_cores)
    g = communication_graph(p)
    ev = Evaluator(m, a, p)
    row = {"label": f"`{pattern_spec}` on `{machine_spec}`" + (f" ({alloc_spec})"
                                                                 if alloc_spec else ""),
           "ranks": p.n_ranks,
           "overflow": float((g.data / g.data.max()).sum()) * 1e6 >= 2 ** 31}
    for name, weights in (("capped", int_weights), ("earlier", earlier_weights)):
        with _patched(weights):
            row[name] = {"cut2": _cut(g, weights, 2), "cut8": _cut(g, weights, 8)}
            for mapper in ("graph", "graph-bisect"):
                met = ev.evaluate(build_mapping(mapper, p, m, a, 0)).metrics
                row[name][mapper] = (met["predicted_time_s"], met["max_link_bytes"],
                                     met["hop_bytes"])
            if p.n_ranks <= AUTO_RANKS:
                best = auto_select(p, m, a, seed=0, evaluator=ev).best
                row[name]["auto"] = (best.name, best.metrics["predicted_time_s"],
                                     best.metrics["max_link_bytes"],
                                     best.metrics["hop_bytes"])
        print(name, row[name], flush=True)
    return row


def _r(new, old) -> str:
    return f"{new / old:.3f}" if old else "-"


def render(rows) -> str:
    out = ["# KaHIP's edge weights: capped below 2**30 against the earlier 10**6 scale", "",
           "`benchmarks/bench_kahip_weights.py`: ratios capped / earlier (below 1 is "
           "better) of the bytes KaHIP's 2-way and 8-way cuts leave between parts, of the "
           "`graph` and `graph-bisect` placements' predicted time (`dor`, time model on), "
           "busiest link and hop-bytes, and of `auto`'s pick. \"sums past 2**31\": whether "
           "the earlier weights summed past KaHIP's 32-bit range.", "",
           "| problem | ranks | sums past 2**31 | 2-way cut | 8-way cut | graph: time | busiest "
           "| hop-bytes | graph-bisect: time | busiest | hop-bytes | auto: pick (earlier -> "
           "capped) | time | busiest | hop-bytes |",
           "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        c, e = r["capped"], r["earlier"]
        cells = [r["label"], str(r["ranks"]), "yes" if r["overflow"] else "no",
                 _r(c["cut2"], e["cut2"]), _r(c["cut8"], e["cut8"])]
        for mapper in ("graph", "graph-bisect"):
            cells += [_r(x, y) for x, y in zip(c[mapper], e[mapper])]
        if "auto" in c:
            cells.append(f"`{e['auto'][0]}` -> `{c['auto'][0]}`")
            cells += [_r(x, y) for x, y in zip(c["auto"][1:], e["auto"][1:])]
        else:
            cells += ["not run", "", "", ""]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for case in CASES:
            print("case", case, flush=True)
            rows.append(run_case(*case, workdir))
    write_results("RESULTS_kahip_weights.md", render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
