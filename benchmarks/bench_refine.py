"""``refine``'s search and ``graph``'s link swaps, compiled steps against Python (issue 11).

On tori and meshes under dimension-order routing, and on k-ary n-trees under d-mod-k routing,
with whole-number bytes, :func:`rankmap.mappers.refine.refine_search` draws and judges its
proposals in compiled batches (:mod:`rankmap.kernels.refine_grid`); elsewhere, and with
``compiled=False``, in Python. Both give the same placement, proposal for proposal: this
benchmark checks that on every problem and measures, in the same run, the CPU seconds of each
(medians of RANKMAP_BENCH_REPEATS runs, default 3) and their ratio. The search state (routing the start)
and the final check are included: the whole ``refine_search`` call.

Then the Python step with and without its witness refusals
(:data:`rankmap.mappers.refine.WITNESS_REFUSALS`: a move that surely adds hop-bytes is refused
unrouted when a link at the busiest value is on none of its flows' old routes), same result
required: ECMP on fat trees, and d-mod-k with ``compiled=False``.

Then the whole ``graph`` mapper with its link swaps evaluated in Python and compiled
(:func:`rankmap.kernels.link_swap_grid.attack_link_grid` around
:func:`rankmap.kernels.refine_grid.swap_step`; tori and meshes under dimension order, k-ary
n-trees under d-mod-k), same placement required.

Writes benchmarks/RESULTS_refine.md (above its earlier runs: timing_util.write_results).

Run: ``make bench ONLY=refine`` or ``.venv/bin/python benchmarks/bench_refine.py``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing_util import median_cpu, write_results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "3"))

#: problems of the ``graph`` mapper's link swaps: (pattern, machine)
GRAPH_CASES = [
    ("stencil:16x16x16:box", "torus:8x8x16:cores=4"),
    ("fft2d:64x64", "torus:8x8x16:cores=4"),
    ("stencil:64x64:periodic", "torus:16x16x16"),
    ("stencil:80x50:box", "torus:16x16x16"),
    ("stencil:16x16x8:box", "fattree:k=8:levels=3:cores=4"),
    ("stencil:16x16x16", "fattree:k=16:levels=3"),
]

#: (pattern, machine, allocation or None, start mapper, budget or None for the default)
CASES = [
    ("stencil:32x16x16", "torus:16x16x32:cores=2", "random:4096:seed=6", "morton", 20000),
    ("stencil:16x16x16:box", "torus:8x8x16:cores=4", None, "rcb", None),
    ("fft2d:64x64", "torus:8x8x16:cores=4", None, "TZXY", None),
    ("lulesh:8x8x8", "torus:8x8x8:cores=4", None, "random", 5000),
    ("stencil:64x64:periodic", "torus:16x16x16", None, "fold", None),
    ("stencil:80x50:box", "torus:16x16x16", None, "graph", None),
    ("stencil:16x16x2:box", "fattree:k=8:levels=3:cores=4", None, "random", None),
    ("stencil:32x32x16:box", "fattree:k=16:levels=3:cores=4", None, "rcb", None),
]

#: Python-step problems with and without witness refusals: CASES' fields, then the routing
WITNESS_CASES = [
    ("stencil:16x16x2:box", "fattree:k=8:levels=3:cores=4", None, "random", None, "ecmp"),
    ("stencil:16x16x8:box", "fattree:k=8:levels=3:cores=4", None, "rcb", None, "ecmp"),
    ("stencil:32x32x16:box", "fattree:k=16:levels=3:cores=4", None, "rcb", None, "dmodk"),
]


def main() -> int:
    from rankmap.allocation import whole_machine
    from rankmap.machines import parse_machine
    from rankmap.mappers.refine import refine_search
    from rankmap.patterns import parse_pattern

    # compile (or load) the kernels once, outside the timings
    m0 = parse_machine("torus:4x4:cores=2")
    a0 = whole_machine(m0)
    p0 = parse_pattern("stencil:8x4")
    refine_search(np.arange(32), p0, m0, a0, 0, 200)
    rows = []
    for pat, spec, alloc, start_name, budget in CASES:
        machine, allocation, pattern, start = _problem(pat, spec, alloc, start_name)
        runs = {}
        for compiled in (False, True):
            runs[compiled] = median_cpu(
                lambda: refine_search(start, pattern, machine, allocation, 0, budget,
                                      compiled=compiled), REPEATS)
        (py, t_py), (comp, t_comp) = runs[False], runs[True]
        same = (np.array_equal(py.cores, comp.cores)
                and (py.proposals, py.accepted, py.stop) == (comp.proposals, comp.accepted,
                                                             comp.stop))
        label = f"`{pat}` on `{spec}`" + (f" ({alloc})" if alloc else "") + f", from `{start_name}`"
        rows.append((label, pattern.n_ranks, comp.proposals, comp.accepted, comp.stop, t_py,
                     t_comp, same))
        print(f"{label}: {comp.proposals} proposals ({comp.accepted} kept, {comp.stop}); "
              f"Python {t_py:.2f} s, compiled {t_comp:.2f} s ({t_py / t_comp:.1f}x), "
              f"{'same' if same else 'DIFFERENT'} placement", flush=True)
    witness_rows = _witness_rows()
    graph_rows = _graph_rows()
    load = os.getloadavg()[0]
    lines = [
        "# `refine`: compiled step against the Python step",
        "",
        f"`benchmarks/bench_refine.py`: CPU seconds of one `refine_search` call (median of "
        f"{REPEATS}), seed 0, the machine's routing (`dor`; `dmodk` on the fat trees), with "
        "the proposals judged in Python (`compiled=False`) and in compiled batches (the "
        "default on tori and meshes under dimension order and on k-ary n-trees under d-mod-k, "
        "with whole-number bytes). Both must give the same placement, proposals, kept moves "
        "and stop.",
        "",
        "| problem | ranks | proposals | kept | stop | Python (s) | compiled (s) | speed-up "
        "| Python per proposal (us) | compiled per proposal (us) | same result |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for label, n, props, kept, stop, t_py, t_comp, same in rows:
        lines.append(f"| {label} | {n} | {props} | {kept} | {stop} | {t_py:.2f} | {t_comp:.2f} "
                     f"| {t_py / t_comp:.1f}x | {1e6 * t_py / max(props, 1):.0f} "
                     f"| {1e6 * t_comp / max(props, 1):.0f} | {'yes' if same else '**no**'} |")
    lines += ["", "Per-proposal figures divide the whole call (start routing and final check "
              "included) by the proposals.", "",
              "The Python step (`compiled=False`) with and without its witness refusals "
              "(`WITNESS_REFUSALS`: a move that surely adds hop-bytes is refused unrouted when "
              "a link at the busiest value is on none of its flows' old routes); the same "
              "result is required.", "",
              "| problem | ranks | routing | proposals | refused unrouted | without (s) "
              "| with (s) | speed-up | same result |",
              "|---|---:|---|---:|---:|---:|---:|---:|---|"]
    for label, n, routing, props, refused, t_off, t_on, same in witness_rows:
        lines.append(f"| {label} | {n} | `{routing}` | {props} | {refused} | {t_off:.2f} "
                     f"| {t_on:.2f} | {t_off / t_on:.2f}x | {'yes' if same else '**no**'} |")
    lines += ["",
              "The `graph` mapper (whole call, median CPU seconds) with its link swaps evaluated in "
              "Python and compiled (`rankmap.kernels.link_swap_grid.attack_link_grid` around "
              "`rankmap.kernels.refine_grid.swap_step`, where the sums are exact): the same "
              "placement is required.", "",
              "| problem | ranks | Python swaps (s) | compiled swaps (s) | speed-up | same placement |",
              "|---|---:|---:|---:|---:|---|"]
    for label, n, t_py, t_comp, same in graph_rows:
        lines.append(f"| {label} | {n} | {t_py:.2f} | {t_comp:.2f} | {t_py / t_comp:.2f}x "
                     f"| {'yes' if same else '**no**'} |")
    lines += ["", f"Load average (1 min) after the run: {load:.1f}.", ""]
    write_results("RESULTS_refine.md", "\n".join(lines))
    return 0 if all(r[-1] for r in rows + witness_rows + graph_rows) else 1


def _problem(pat, spec, alloc, start_name):
    """(machine, allocation, pattern, start placement's cores) of one problem."""
    from rankmap.allocation import parse_allocation, whole_machine
    from rankmap.machines import parse_machine
    from rankmap.mappers import build_mapping
    from rankmap.patterns import parse_pattern

    machine = parse_machine(spec)
    allocation = parse_allocation(alloc, machine) if alloc else whole_machine(machine)
    pattern = parse_pattern(pat)
    return machine, allocation, pattern, build_mapping(start_name, pattern, machine,
                                                       allocation).core_of_rank


def _witness_rows():
    """(label, ranks, routing, proposals, refused unrouted, seconds without, seconds with,
    same result) per WITNESS_CASES."""
    from rankmap.mappers import refine

    real_witness, real_refused = refine.WITNESS_REFUSALS, refine._State._refused_by_witness
    refused = []

    def counted(self, moves, idx):
        out = real_refused(self, moves, idx)
        refused.append(out)
        return out

    rows = []
    for pat, spec, alloc, start_name, budget, routing in WITNESS_CASES:
        machine, allocation, pattern, start = _problem(pat, spec, alloc, start_name)
        out = {}
        for witness in (False, True):
            refine.WITNESS_REFUSALS = witness
            try:
                out[witness] = median_cpu(
                    lambda: refine.refine_search(start, pattern, machine, allocation, 0,
                                                 budget, routing, compiled=False), REPEATS)
            finally:
                refine.WITNESS_REFUSALS = real_witness
        refine._State._refused_by_witness = counted
        try:
            refine.refine_search(start, pattern, machine, allocation, 0, budget, routing,
                                 compiled=False)
        finally:
            refine._State._refused_by_witness = real_refused
        (off, t_off), (on, t_on) = out[False], out[True]
        same = (np.array_equal(off.cores, on.cores)
                and (off.proposals, off.accepted, off.stop) == (on.proposals, on.accepted,
                                                                on.stop))
        label = f"`{pat}` on `{spec}`" + (f" ({alloc})" if alloc else "") + f", from `{start_name}`"
        rows.append((label, pattern.n_ranks, routing, on.proposals, sum(refused), t_off, t_on,
                     same))
        refused.clear()
        print(f"{label}, {routing}: {on.proposals} proposals, {rows[-1][4]} refused unrouted; "
              f"without {t_off:.2f} s, with {t_on:.2f} s, "
              f"{'same' if same else 'DIFFERENT'} result", flush=True)
    return rows


def _graph_rows():
    """(label, ranks, Python seconds, compiled seconds, same placement) per GRAPH_CASES."""
    from rankmap.allocation import whole_machine
    from rankmap.machines import parse_machine
    from rankmap.mappers import build_mapping, swap_refine
    from rankmap.patterns import parse_pattern

    real = (swap_refine.grid_steps_apply, swap_refine.tree_steps_apply)
    rows = []
    for pat, spec in GRAPH_CASES:
        machine = parse_machine(spec)
        allocation = whole_machine(machine)
        pattern = parse_pattern(pat)
        out = {}
        for compiled in (False, True):
            if not compiled:            # neither compiled routing applies: the Python swaps
                swap_refine.grid_steps_apply = swap_refine.tree_steps_apply = \
                    lambda router, m: False
            try:
                out[compiled] = median_cpu(
                    lambda: build_mapping("graph", pattern, machine, allocation).core_of_rank,
                    REPEATS)
            finally:
                swap_refine.grid_steps_apply, swap_refine.tree_steps_apply = real
        (py, t_py), (comp, t_comp) = out[False], out[True]
        same = bool(np.array_equal(py, comp))
        label = f"`graph`, `{pat}` on `{spec}`"
        rows.append((label, pattern.n_ranks, t_py, t_comp, same))
        print(f"{label}: Python swaps {t_py:.2f} s, compiled {t_comp:.2f} s, "
              f"{'same' if same else 'DIFFERENT'} placement", flush=True)
    return rows


if __name__ == "__main__":
    sys.exit(main())
