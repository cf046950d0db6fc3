"""The ``graph`` mapper with its node parts cut in one level and in two (issue 11).

``rankmap.mappers.node_partition`` cuts graphs of more than ``TWO_LEVEL_MIN_ENTRIES``
adjacency entries in two levels (16 blocks, then the parts of each block) and smaller ones in
one KaHIP k-way cut. For every problem, in the same run: ``graph``'s CPU seconds (medians of
RANKMAP_BENCH_REPEATS runs, default 3; 1 run above 8,192 ranks) and its placement's predicted
time, busiest link and hop-bytes (``dor``, time model on) with each cut forced, and the bytes
the two cuts leave between parts. Lower is better. The problems are those of
bench_kahip_mode.py and bench_quality.py with more than one core per node, and three dense
graphs above the threshold.

Writes benchmarks/RESULTS_two_level.md (above its earlier runs).
Run: ``make bench ONLY=two_level`` or ``.venv/bin/python benchmarks/bench_two_level.py``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_quality as bq  # noqa: E402
from graph_setting import node_partition_setting, timed_graph  # noqa: E402
from timing_util import write_results  # noqa: E402

REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "3"))

#: (machine, allocation or "", pattern; ``@rgg``/``@mesh`` as in bench_quality)
CASES = [
    ("torus:8x8x16:cores=4", "", "stencil:16x16x16:box"),
    ("torus:16x16x32:cores=2", "random:4096:seed=6", "stencil:32x16x16"),
    ("torus:8x8x8:cores=2", "", "fft2d:32x32"),
    ("bgp:4096", "", "stencil:128x128:box"),
    ("torus:8x8x8:cores=4", "", "lulesh:8x8x8"),
    ("torus:8x8x8:cores=4", "", "stencil:16x16x8:box"),
    ("torus:8x8x8:cores=8", "", "minighost"),
    ("torus:8x8x8:cores=2", "", "alltoall:32x32:dims=0"),
    ("torus:16x16x16:cores=4", "", "alltoall:16x16x16:dims=2"),
    ("torus:8x8x16:cores=4", "", "@rgg:4096:1"),
    ("torus:16x16x16:cores=4", "", "@rgg:16384:2"),
    ("torus:16x16x16:cores=2", "random:1024:seed=3", "@rgg:2048:3"),
    ("torus:8x8x8:cores=4", "", "@mesh:2048:4"),
    ("torus:16x16x32:cores=2", "random:4096:seed=5", "@mesh:8192:5"),
    ("torus:8x8x16:cores=4", "", "fft2d:64x64"),
    ("bgp:4096", "", "fft2d:128x128"),
    ("torus:16x16x16:cores=4", "", "fft2d:128x128"),
]
#: relative difference of predicted times counted as the same (placements that differ but
#: load the busiest link equally differ in the sixth digit)
SAME = 1e-3
#: label and TWO_LEVEL_MIN_ENTRIES forcing each cut
CUTS = (("one level", 2 ** 62), ("two levels", -1))


def run_case(machine_spec, alloc_spec, pattern_spec, workdir) -> dict:
    """graph's CPU time, metrics and cut bytes with each cut forced."""
    import numpy as np

    from rankmap.allocation import parse_allocation, whole_machine
    from rankmap.evaluation import Evaluator
    from rankmap.machines import parse_machine
    from rankmap.mappers import node_partition
    from rankmap.mappers.graph_partition import communication_graph
    from rankmap.patterns import parse_pattern

    m = parse_machine(machine_spec)
    a = parse_allocation(alloc_spec, m) if alloc_spec else whole_machine(m)
    p = parse_pattern(bq.materialise(pattern_spec, workdir), default_ranks=a.n_cores)
    g = communication_graph(p)
    coo = g.tocoo()
    cpn = a.cores_per_node
    reps = REPEATS if p.n_ranks <= 8192 else 1
    ev = Evaluator(m, a, p)
    out = {"ranks": p.n_ranks, "entries": g.nnz,
           "natural": "two levels" if g.nnz > node_partition.TWO_LEVEL_MIN_ENTRIES else "one level"}
    for label, threshold in CUTS:
        with node_partition_setting("TWO_LEVEL_MIN_ENTRIES", threshold):
            _cores, cpu, met = timed_graph(p, m, a, ev, reps)
            part = node_partition.node_parts(g, cpn, 0)
        assert np.bincount(part).max() <= cpn
        cut = float(coo.data[part[coo.row] != part[coo.col]].sum()) / 2
        out[label] = {"cpu": cpu, "cut": cut, "runs": reps,
                      **{k: float(met[k]) for k in ("predicted_time_s", "max_link_bytes",
                                                     "hop_bytes")}}
    return out


def render(results) -> str:
    out = ["# `graph` with its node parts cut in one level and in two", "",
           "`benchmarks/bench_two_level.py`: the `graph` mapper's CPU seconds (median of the "
           "runs shown) and its placement's predicted time (`dor`, time model on) with each "
           "cut forced; the cut bytes between node parts; two-level / one-level ratios (lower "
           "is better). `used` is the cut rankmap makes for that graph (two levels above "
           "2^18 adjacency entries).", "",
           "| problem | entries | used | runs | CPU one (s) | CPU two (s) | time one (s) "
           "| time two (s) | time two/one | busiest two/one | hop-bytes two/one | cut two/one |",
           "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (ms, al, ps), r in results:
        one, two = r["one level"], r["two levels"]
        name = f"`{ps}` on `{ms}`" + (f" ({al})" if al else "")
        out.append(f"| {name} | {r['entries']:,} | {r['natural']} | {one['runs']} | "
                   f"{one['cpu']:.2f} | {two['cpu']:.2f} | {one['predicted_time_s']:.5g} | "
                   f"{two['predicted_time_s']:.5g} | "
                   f"{two['predicted_time_s'] / one['predicted_time_s']:.3f} | "
                   f"{two['max_link_bytes'] / one['max_link_bytes']:.3f} | "
                   f"{two['hop_bytes'] / one['hop_bytes']:.3f} | {two['cut'] / one['cut']:.3f} |")
    for side, pick in (("below", lambda r: r["natural"] == "one level"),
                       ("above", lambda r: r["natural"] == "two levels")):
        ratios = [r["two levels"]["predicted_time_s"] / r["one level"]["predicted_time_s"]
                  for _c, r in results if pick(r)]
        if not ratios:
            continue
        better = sum(x < 1 - SAME for x in ratios)
        same = sum(abs(x - 1) <= SAME for x in ratios)
        speed = [r["one level"]["cpu"] / r["two levels"]["cpu"] for _c, r in results if pick(r)]
        out += ["", f"{side.capitalize()} the threshold ({len(ratios)} problems): two levels "
                f"give a lower predicted time in {better}, the same (within 0.1%) in {same} and "
                f"a higher one "
                f"in {len(ratios) - better - same} (ratios {min(ratios):.3f}-{max(ratios):.3f}); "
                f"`graph` runs {min(speed):.2f}-{max(speed):.2f}x as fast."]
    return "\n".join(out) + "\n"


def main() -> int:
    results = []
    with tempfile.TemporaryDirectory() as workdir:
        for case in CASES:
            r = run_case(*case, workdir)
            print(case, {k: (v["cpu"], v["predicted_time_s"]) for k, v in r.items()
                         if isinstance(v, dict)}, flush=True)
            results.append((case, r))
    write_results("RESULTS_two_level.md", render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
