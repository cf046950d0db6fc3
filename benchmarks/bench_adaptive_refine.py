"""``refine`` and ``auto`` under minimal adaptive routing, with and without the adaptive
router's template cache (issue 11: fast at every scale).

Under adaptive routing on a torus or mesh ``refine`` judges its proposals in Python: each one
routes the moved flows' old and new routes, about forty node pairs, from the templates of
their offsets (:func:`rankmap.kernels.torus.adaptive_templates`). The router keeps the
templates it has worked out (:class:`rankmap.kernels.template_cache.TemplateCache`);
``Adaptive(machine, template_entries=0)`` keeps none, as before the cache. Both must give the
same placement, proposal for proposal. Measured in the same run: CPU seconds of one
``refine_search`` call (a fresh router each call, so the cache starts empty; medians of
RANKMAP_BENCH_REPEATS runs, default 3), then one whole ``auto`` (serial) on the 80x50 box.

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
        runs = {}
        for entries in (0, None):
            def one():
                router = Adaptive(machine) if entries is None else Adaptive(machine, entries)
                return refine_search(start, pattern, machine, allocation, 0, budget, router)
            runs[entries] = median_cpu(one, REPEATS)
        (off, t_off), (on, t_on) = runs[0], runs[None]
        same = (np.array_equal(off.cores, on.cores)
                and (off.proposals, off.accepted, off.stop) == (on.proposals, on.accepted,
                                                                on.stop))
        label = f"`{pat}` on `{spec}`, from `{start_name}`"
        rows.append((label, pattern.n_ranks, on.proposals, on.accepted, on.stop, t_off, t_on,
                     same))
        print(f"{label}: {on.proposals} proposals ({on.accepted} kept, {on.stop}); without "
              f"the cache {t_off:.2f} s, with it {t_on:.2f} s ({t_off / t_on:.2f}x), "
              f"{'same' if same else 'DIFFERENT'} result", flush=True)
    pat, spec = AUTO_CASE
    machine = parse_machine(spec)
    allocation = whole_machine(machine)
    pattern = parse_pattern(pat, default_ranks=allocation.n_cores)
    autos = {}
    for entries in (0, None):
        router = Adaptive(machine) if entries is None else Adaptive(machine, entries)
        t0 = time.process_time()
        comp = auto_select(pattern, machine, allocation, seed=0, routing=router)
        autos[entries] = (comp, time.process_time() - t0)
    (c_off, a_off), (c_on, a_on) = autos[0], autos[None]
    auto_same = (c_off.best.name == c_on.best.name
                 and np.array_equal(c_off.best.mapping.core_of_rank,
                                    c_on.best.mapping.core_of_rank)
                 and c_off.best.metrics == c_on.best.metrics)
    print(f"auto on {pat} / {spec}: {a_off:.1f} s without, {a_on:.1f} s with "
          f"({a_off / a_on:.2f}x), pick {c_on.best.name}, "
          f"{'same' if auto_same else 'DIFFERENT'} pick and metrics", flush=True)
    load = os.getloadavg()[0]
    lines = [
        "# `refine` and `auto` under adaptive routing: the template cache",
        "",
        "`benchmarks/bench_adaptive_refine.py`: CPU seconds of one `refine_search` call under "
        f"minimal adaptive routing (median of {REPEATS}; a fresh router per call, so its cache "
        "starts empty), seed 0, with the router keeping no templates "
        "(`Adaptive(machine, template_entries=0)`, as before the cache) and with its default "
        "cache. Both must give the same placement, proposals, kept moves and stop.",
        "",
        "| problem | ranks | proposals | kept | stop | without (s) | with (s) | speed-up "
        "| with, per proposal (us) | same result |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---|",
    ]
    for label, n, props, kept, stop, t_off, t_on, same in rows:
        lines.append(f"| {label} | {n} | {props} | {kept} | {stop} | {t_off:.2f} | {t_on:.2f} "
                     f"| {t_off / t_on:.2f}x | {1e6 * t_on / max(props, 1):.0f} "
                     f"| {'yes' if same else '**no**'} |")
    lines += ["",
              f"The whole `auto` (serial, one run each way, CPU seconds) on `{pat}` on "
              f"`{spec}` under adaptive routing: {a_off:.1f} s without the cache, {a_on:.1f} s "
              f"with it ({a_off / a_on:.2f}x); pick `{c_on.best.name}`, "
              f"{'the same pick, placement and metrics' if auto_same else '**a different pick**'}"
              ". The same `auto` under dimension order takes under 2 s: there the search is "
              "compiled (`benchmarks/RESULTS_refine.md`).",
              "",
              f"Load average (1 min) {load:.1f} after the run."]
    write_results("RESULTS_adaptive_refine.md", "\n".join(lines))
    ok = all(r[-1] for r in rows) and auto_same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
