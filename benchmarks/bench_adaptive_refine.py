"""``refine`` and ``auto`` under minimal adaptive routing: the Python step (with and without
its template cache and compiled target choice) and the compiled step (issue 11: fast at every
scale).

Under adaptive routing on a torus or mesh ``refine`` judged its proposals in Python; it now
judges them in the compiled step too (:mod:`rankmap.kernels.refine_grid` with a template store,
:mod:`rankmap.kernels.template_store`) where every hop-bytes sum is exact. Measured each way in
the same run, CPU seconds of one ``refine_search`` call (a fresh router each call, so the
router's cache starts empty; medians of RANKMAP_BENCH_REPEATS runs, default 3):

* the Python step without its template cache and compiled target choice: no templates kept
  (``Adaptive(machine, template_entries=0)``), targets from numpy gains
  (``COMPILED_TARGETS = False``), as it was before both;
* the Python step now (``compiled=False``): the router's template cache and the compiled
  target choice;
* the compiled step (the default).

All three must give the same placement, proposals, kept moves and stop. Then one whole
``auto`` (serial) on the 80x50 box with the Python step and with the compiled one: the same
pick, placement and metrics.

Writes benchmarks/RESULTS_adaptive_refine.md (above its earlier runs).

Run: ``make bench ONLY=adaptive_refine`` or
``.venv/bin/python benchmarks/bench_adaptive_refine.py``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing_util import median_cpu, write_results  # noqa: E402

REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "3"))

#: (pattern, machine, start mapper, budget or None for the default)
CASES = [
    ("stencil:80x50:box", "torus:16x16x16", "graph", None),
    ("stencil:16x16x16:box", "torus:8x8x16:cores=4", "rcb", None),
    ("lulesh:8x8x8", "torus:8x8x8:cores=4", "random", 5000),
    ("stencil:32x32", "mesh:8x8x16", "inorder", 8000),
]

#: the whole ``auto`` measured once each way
AUTO_CASE = ("stencil:80x50:box", "torus:16x16x16")


def main() -> int:
    from rankmap.allocation import whole_machine
    from rankmap.machines import parse_machine
    import rankmap.mappers.refine as refine
    from rankmap.mappers import build_mapping
    from rankmap.mappers.refine import refine_search
    from rankmap.patterns import parse_pattern
    from rankmap.routing.torus import Adaptive
    from rankmap.selection.auto import auto_select

    m0 = parse_machine("torus:4x4:cores=2")
    refine_search(np.arange(32), parse_pattern("stencil:8x4"), m0, whole_machine(m0), 0, 200,
                  Adaptive(m0))                           # kernels loaded outside the timings
    rows = []
    for pat, spec, start_name, budget in CASES:
        machine = parse_machine(spec)
        allocation = whole_machine(machine)
        pattern = parse_pattern(pat, default_ranks=allocation.n_cores)
        start = build_mapping(start_name, pattern, machine, allocation).core_of_rank
        runs = [median_cpu(lambda: _refine(refine_search, Adaptive, cache, targets, compiled,
                                           start, pattern, machine, allocation, budget), REPEATS)
                for cache, targets, compiled in STEPS]
        first = runs[0][0]
        same = all(np.array_equal(first.cores, r.cores)
                   and (first.proposals, first.accepted, first.stop) == (r.proposals,
                                                                         r.accepted, r.stop)
                   for r, _t in runs)
        label = f"`{pat}` on `{spec}`, from `{start_name}`"
        times = [t for _r, t in runs]
        rows.append((label, pattern.n_ranks, first.proposals, first.accepted, first.stop,
                     times, same))
        print(f"{label}: {first.proposals} proposals ({first.accepted} kept, {first.stop}); "
              + ", ".join(f"{t:.2f} s" for t in times)
              + f" ({times[0] / times[-1]:.2f}x), {'same' if same else 'DIFFERENT'} result",
              flush=True)
    pat, spec = AUTO_CASE
    machine = parse_machine(spec)
    allocation = whole_machine(machine)
    pattern = parse_pattern(pat, default_ranks=allocation.n_cores)
    autos = []
    compiled_applies = refine.adaptive_steps_apply
    for compiled in (False, True):
        # auto refines with compiled=None: the compiled step where it applies; switched off
        # here for the Python step's run (this process only)
        refine.adaptive_steps_apply = compiled_applies if compiled else (lambda r, m: False)
        try:
            t0 = time.process_time()
            comp = auto_select(pattern, machine, allocation, seed=0, routing="adaptive")
            autos.append((comp, time.process_time() - t0))
        finally:
            refine.adaptive_steps_apply = compiled_applies
    (c_off, a_off), (c_on, a_on) = autos
    auto_same = (c_off.best.name == c_on.best.name
                 and np.array_equal(c_off.best.mapping.core_of_rank,
                                    c_on.best.mapping.core_of_rank)
                 and c_off.best.metrics == c_on.best.metrics)
    print(f"auto on {pat} / {spec}: {a_off:.1f} s Python step, {a_on:.1f} s compiled "
          f"({a_off / a_on:.2f}x), pick {c_on.best.name}, "
          f"{'same' if auto_same else 'DIFFERENT'} pick and metrics", flush=True)
    load = os.getloadavg()[0]
    lines = [
        "# `refine` and `auto` under adaptive routing: the Python step and the compiled step",
        "",
        "`benchmarks/bench_adaptive_refine.py`: CPU seconds of one `refine_search` call under "
        f"minimal adaptive routing (median of {REPEATS}; a fresh router per call, so its cache "
        "starts empty), seed 0: the Python step without its speed-ups (no templates kept: `Adaptive("
        "machine, template_entries=0)`; targets from numpy gains: `COMPILED_TARGETS = False`), "
        "the Python step now (`compiled=False`: the router's template cache, the compiled "
        "target choice) and the compiled step with its template store (the default). All "
        "three must give the same placement, proposals, kept moves and stop.",
        "",
        "| problem | ranks | proposals | kept | stop | Python step, no cache (s) | Python "
        "step (s) | compiled step (s) | compiled / Python step | compiled, per proposal (us) "
        "| same result |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for label, n, props, kept, stop, times, same in rows:
        lines.append(f"| {label} | {n} | {props} | {kept} | {stop} | {times[0]:.2f} "
                     f"| {times[1]:.2f} | {times[2]:.2f} | {times[1] / times[2]:.1f}x faster "
                     f"| {1e6 * times[2] / max(props, 1):.0f} | {'yes' if same else '**no**'} |")
    lines += ["",
              f"The whole `auto` (serial, one run each way, CPU seconds) on `{pat}` on "
              f"`{spec}` under adaptive routing: {a_off:.1f} s with the Python step, "
              f"{a_on:.1f} s with the compiled step ({a_off / a_on:.2f}x); pick "
              f"`{c_on.best.name}`, "
              f"{'the same pick, placement and metrics' if auto_same else '**a different pick**'}"
              ". The same `auto` under dimension order takes under 2 s "
              "(`benchmarks/RESULTS_refine.md`).",
              "",
              f"Load average (1 min) {load:.1f} after the run."]
    write_results("RESULTS_adaptive_refine.md", "\n".join(lines))
    ok = all(r[-1] for r in rows) and auto_same
    return 0 if ok else 1


#: (keep templates, compiled targets, compiled step): the Python step as it was, the Python
#: step now, the compiled step (the default)
STEPS = [(False, False, False), (True, True, False), (True, True, None)]


def _refine(refine_search, adaptive, cache, targets, compiled, start, pattern, machine,
            allocation, budget):
    """One ``refine_search`` under adaptive routing with a fresh router."""
    import rankmap.mappers.refine as refine

    refine.COMPILED_TARGETS = targets
    try:
        router = adaptive(machine) if cache else adaptive(machine, 0)
        return refine_search(start, pattern, machine, allocation, 0, budget, router,
                             compiled=compiled)
    finally:
        refine.COMPILED_TARGETS = True


if __name__ == "__main__":
    sys.exit(main())
