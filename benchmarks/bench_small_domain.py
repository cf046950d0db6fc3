"""Would the network bisection cut more of its small domains without KaHIP? (issue 11)

``graph`` maps its node parts onto the nodes by dual recursive bisection
(:mod:`rankmap.mappers.network_bisection`): domains of more than ``SMALL_DOMAIN`` vertices are
first cut by KaHIP, smaller ones from the vertices' preference for a side. KaHIP costs about
0.3 ms per call even on 32 vertices, and the domains of 32 and 64 vertices are half of the
bisection's KaHIP time on a 4,096-node problem. Raising the threshold makes ``graph`` (and
``auto``, which builds it) faster; this measures what it does to ``auto``'s pick.

For each threshold, ``auto`` (``dor``; ``dmodk`` on fat trees; time model on) runs on the
problems of bench_quality.py (the 131K one left out) and bench_refine_starts.py, each
problem once: the pick's predicted time, busiest link bytes and hop-bytes against the
default's, and ``auto``'s CPU seconds. The issue asks for no pick worse than today's on
predicted time.

Writes benchmarks/RESULTS_small_domain.md. Run: ``make bench ONLY=small_domain`` or
``.venv/bin/python benchmarks/bench_small_domain.py`` (about 4 minutes of CPU per threshold;
two processes share the problems).
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
import bench_refine_starts  # noqa: E402
from timing_util import write_results  # noqa: E402

#: the thresholds measured; the first is the default the others are compared with
THRESHOLDS = (16, 32, 64)
#: predicted times closer than this (relative) count as the same
SAME = 1e-9


def problems() -> list[tuple[str, str | None, str]]:
    """(machine, allocation or None, pattern) of every problem, each once."""
    out = [(c[1], c[2], c[3]) for c in bench_quality.CASES if c[0] != "3-D stencil 131K"]
    for pr in bench_refine_starts.PROBLEMS:
        if tuple(pr) not in out:
            out.append(tuple(pr))
    return out


def run_one(job) -> dict:
    """``auto``'s pick of one problem under one threshold."""
    threshold, (machine_spec, alloc_spec, pattern_spec) = job
    from rankmap.allocation import parse_allocation, whole_machine
    from rankmap.machines import parse_machine
    from rankmap.mappers import network_bisection
    from rankmap.patterns import parse_pattern
    from rankmap.selection.auto import auto_select

    network_bisection.SMALL_DOMAIN = threshold
    with tempfile.TemporaryDirectory() as workdir:
        m = parse_machine(machine_spec)
        a = parse_allocation(alloc_spec, m) if alloc_spec else whole_machine(m)
        p = parse_pattern(bench_quality.materialise(pattern_spec, workdir),
                          default_ranks=a.n_cores)
        t0 = time.process_time()
        best = auto_select(p, m, a, seed=0).best
        cpu = time.process_time() - t0
    met = best.metrics
    return {"threshold": threshold, "problem": (machine_spec, alloc_spec, pattern_spec),
            "ranks": p.n_ranks, "pick": best.name, "time": met["predicted_time_s"],
            "busiest": met["max_link_bytes"], "hop_bytes": met["hop_bytes"], "cpu": cpu}


def _label(problem) -> str:
    machine, alloc, pattern = problem
    return f"`{pattern}` on `{machine}`" + (f", {alloc}" if alloc else "")


def render(results: list[dict]) -> str:
    """The Markdown results document."""
    by = {(r["threshold"], r["problem"]): r for r in results}
    probs = problems()
    base = THRESHOLDS[0]
    out = ["# Small domains of the network bisection without KaHIP (issue 11)", "",
           f"`auto` on {len(probs)} problems (bench_quality's but the 131K one, and "
           "bench_refine_starts'), once per `network_bisection.SMALL_DOMAIN` threshold: its "
           f"pick against the default's ({base}); predicted times within a relative {SAME:g} "
           "count as the same. CPU seconds of `auto`, summed over the problems (one run "
           "each, two processes sharing the problems).", "",
           "| threshold | CPU (s) | picks faster | picks slower | same time | largest slowdown "
           "| largest speed-up |",
           "|---:|---:|---:|---:|---:|---:|---:|"]
    for th in THRESHOLDS:
        cpu = sum(by[(th, pr)]["cpu"] for pr in probs)
        faster = slower = same = 0
        worst, best = 1.0, 1.0
        for pr in probs:
            q = by[(th, pr)]["time"] / by[(base, pr)]["time"]
            if abs(q - 1.0) <= SAME:
                same += 1
            elif q < 1.0:
                faster += 1
            else:
                slower += 1
            worst, best = max(worst, q), min(best, q)
        out.append(f"| {th} | {cpu:.1f} | {faster} | {slower} | {same} | {worst:.3f}x | "
                   f"{best:.3f}x |")
    out += ["", "Problems whose pick's predicted time changed (ratio to the default's pick; "
            "busiest link bytes and hop-bytes likewise):", "",
            "| problem | ranks | default pick | threshold | pick | predicted time | busiest "
            "link | hop-bytes | CPU (s), default -> this |",
            "|---|---:|---|---:|---|---:|---:|---:|---|"]
    for pr in probs:
        b = by[(base, pr)]
        for th in THRESHOLDS[1:]:
            r = by[(th, pr)]
            if abs(r["time"] / b["time"] - 1.0) <= SAME:
                continue
            out.append(f"| {_label(pr)} | {b['ranks']} | `{b['pick']}` | {th} | `{r['pick']}` "
                       f"| {r['time'] / b['time']:.5f} | {r['busiest'] / b['busiest']:.5f} | "
                       f"{r['hop_bytes'] / b['hop_bytes']:.4f} | {b['cpu']:.2f} -> "
                       f"{r['cpu']:.2f} |")
    return "\n".join(out) + "\n"


def main() -> int:
    """Run every problem under every threshold, write benchmarks/RESULTS_small_domain.md."""
    jobs = [(th, pr) for th in THRESHOLDS for pr in problems()]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        results = []
        for i, r in enumerate(pool.imap_unordered(run_one, jobs), 1):
            results.append(r)
            print(f"{i}/{len(jobs)} threshold {r['threshold']}: {_label(r['problem'])}: "
                  f"{r['pick']} {r['time']:.6g} s ({r['cpu']:.2f} s CPU)", flush=True)
    write_results("RESULTS_small_domain.md", render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
