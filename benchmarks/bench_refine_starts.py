"""Do refinements of starts behind the best one ever win? And what does ``catch`` save?

``auto`` refines its two best candidates. The evidence for ending the refinement of a start
behind the best one early (``refine_search(..., catch=...)``: when, at the pace of its last
windows, the rest of its budget would not bring its busiest link down to the best start's)
is measured here, on 28 problems of 512-16,384 ranks (stencils matching the torus or not,
box stencils, fft2d, random pairs, random geometric graphs, FEM meshes, scattered
allocations, BG/P):

* every distinct candidate placement ``auto`` builds is evaluated (``dor``, the time model
  on) and refined with the default budget, once without ``catch`` (as ``refine:NAME`` does)
  and once with the catch ``auto`` gives (the best start's busiest link bytes);
* a refinement *ends ahead* when its ranking key (predicted time, busiest link, hop-bytes) is
  below that of the best start's refinement;
* the CPU seconds of all refinements are summed, without and with ``catch``.

Writes benchmarks/RESULTS_refine_starts.md. Run: ``make bench ONLY=refine_starts`` (about
15 minutes of CPU; two processes share the problems).
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import multiprocessing
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_quality  # noqa: E402
from timing_util import write_results  # noqa: E402

#: (machine, allocation or None, pattern; ``@rgg``/``@mesh`` as in bench_quality)
PROBLEMS = [
    ("torus:8x8x16", None, "stencil:32x32"),
    ("torus:8x8x8:cores=8", None, "stencil:16x16x16"),
    ("torus:8x8x8:cores=8", None, "stencil:64x64:box"),
    ("torus:8x8x8:cores=2", None, "fft2d:32x32"),
    ("torus:8x8x8:cores=4", None, "@rgg:2048:7"),
    ("torus:16x16x16", "random:2048:seed=8", "@rgg:2048:8"),
    ("torus:8x8x16:cores=4", None, "@mesh:4096:9"),
    ("torus:8x8x8:cores=4", None, "stencil:48x40"),
    ("torus:8x8x8:cores=8", None, "stencil:20x20x10"),
    ("torus:16x16x16:cores=2", "random:1024:seed=11", "stencil:16x16x8"),
    ("bgp:512", None, "stencil:64x32"),
    ("torus:8x8x8", None, "stencil:8x8x8:box"),
    ("torus:16x16x8:cores=2", "random:1024:seed=12", "@mesh:2048:12"),
    ("torus:4x8x16:cores=4", None, "stencil:16x16x8"),
    ("torus:8x8x8:cores=4", None, "pairs:random:seed=3"),
    ("torus:16x16x16", "random:1536:seed=13", "stencil:48x32:box:periodic"),
    ("torus:8x8x16", None, "fft2d:32x32"),
    ("torus:8x8x8:cores=4", None, "stencil:16x16x8:box:periodic"),
] + [(ms, al, ps) for _label, ms, al, ps in bench_quality.CASES[:11]
     if ps != "@rgg:16384:2"]


def problem_label(ms, al, ps) -> str:
    """``pattern on machine (allocation)``."""
    return f"`{ps}` on `{ms}`" + (f" (`{al}`)" if al else "")


def run_problem(args):
    """Every distinct candidate of one problem, refined without and with ``catch``."""
    ms, al, ps, workdir = args
    from rankmap.allocation import parse_allocation, whole_machine
    from rankmap.errors import RankmapError
    from rankmap.evaluation import Evaluator
    from rankmap.machines import parse_machine
    from rankmap.mappers import build_mapping, validate_mapping
    from rankmap.mappers.domain_placement import in_node_step
    from rankmap.mappers.refine import refine_search
    from rankmap.metrics import ranking_key
    from rankmap.patterns import parse_pattern
    from rankmap.selection.auto import GRAPH_RANK_LIMIT, candidate_names, refine_catch

    m = parse_machine(ms)
    a = parse_allocation(al, m) if al else whole_machine(m)
    p = parse_pattern(bench_quality.materialise(ps, workdir), default_ranks=a.n_cores)
    ev = Evaluator(m, a, p, None, 0.9)
    seen = {}
    for name in candidate_names(p, m, a):
        if name == "graph" and p.n_ranks > GRAPH_RANK_LIMIT:
            continue
        try:
            mp = build_mapping(name, p, m, a, 0)
        except RankmapError:
            continue
        seen.setdefault(mp.core_of_rank.tobytes(), (name, mp))
    starts = sorted(((ev.evaluate(mp), name) for name, mp in seen.values()),
                    key=lambda e: ranking_key(e[0].metrics))
    catch = refine_catch(starts[0][0])
    rows = []
    cpu = [0.0, 0.0]
    for e, name in starts:
        keys = []
        for k, c in enumerate((None, catch)):
            t0 = time.process_time()
            run = refine_search(e.mapping.core_of_rank, p, m, a, 0, None, ev.router, catch=c)
            cpu[k] += time.process_time() - t0
            cores = in_node_step(run.cores, p, m, a, 0)
            keys.append((ranking_key(ev.evaluate(validate_mapping("r", cores, p.n_ranks,
                                                                  a)).metrics), run))
        rows.append((name, ranking_key(e.metrics), keys))
    return problem_label(ms, al, ps), p.n_ranks, rows, cpu


def main() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        jobs = [(ms, al, ps, workdir) for ms, al, ps in PROBLEMS]
        with multiprocessing.get_context("fork").Pool(2) as pool:
            results = pool.map(run_problem, jobs, chunksize=1)
    lines = ["# Refinements of starts behind the best: do they win, and what `catch` saves",
             "",
             "Measured by `benchmarks/bench_refine_starts.py`: every distinct candidate "
             "placement `auto` builds, evaluated (`dor`, time model on) and refined with the "
             "default budget, seed 0, without `catch` (as `refine:NAME`) and with `auto`'s "
             "catch (the best start's busiest link bytes). *Behind*: starts whose ranking key "
             "is above the best start's. *Ahead*: refinements whose key ends below the best "
             "start's refinement (without `catch` / with it). CPU: all refinements of the "
             "problem, seconds.",
             "",
             "| problem | ranks | starts | behind | worst start / best (time) | ahead without "
             "catch | ahead with catch | stopped behind | same result | CPU without (s) | "
             "CPU with (s) |",
             "|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|"]
    totals = [0.0, 0.0]
    n_ahead = [0, 0]
    n_changed_ahead = 0
    for label, ranks, rows, cpu in results:
        best_key = [rows[0][2][k][0] for k in (0, 1)]
        behind = [r for r in rows[1:] if r[1] > rows[0][1]]
        ahead = [[f"{n} ({k0[0] / rows[0][1][0]:.2f}x)" for n, k0, ks in rows[1:]
                  if ks[k][0] < best_key[k]] for k in (0, 1)]
        stopped = sum(ks[1][1].stop == "behind" for _n, _k0, ks in rows)
        same = sum(ks[0][0] == ks[1][0] for _n, _k0, ks in rows)
        n_changed_ahead += sum(ks[0][0] < best_key[0] and ks[1][0] != ks[0][0]
                               for _n, _k0, ks in rows[1:])
        worst = max(k0[0] for _n, k0, _ks in rows) / rows[0][1][0]
        totals[0] += cpu[0]
        totals[1] += cpu[1]
        n_ahead[0] += len(ahead[0])
        n_ahead[1] += len(ahead[1])
        lines.append(f"| {label} | {ranks} | {len(rows)} | {len(behind)} | {worst:.2f} | "
                     f"{', '.join(ahead[0]) or 'none'} | {', '.join(ahead[1]) or 'none'} | "
                     f"{stopped} | {same} / {len(rows)} | {cpu[0]:.1f} | {cpu[1]:.1f} |")
    lines += ["",
              f"Over {len(results)} problems: {n_ahead[0]} refinements of a start behind the "
              f"best ended ahead of the best start's refinement without `catch`, {n_ahead[1]} "
              f"with it; {n_changed_ahead} of those ahead without `catch` ended elsewhere with "
              f"it. CPU of all refinements: {totals[0]:.1f} s without `catch`, {totals[1]:.1f} s "
              f"with it ({totals[1] / max(totals[0], 1e-9):.2f}x)."]
    write_results("RESULTS_refine_starts.md", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
