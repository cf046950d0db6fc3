"""``auto`` and ``refine`` off the torus: dragonfly, fat tree, adaptive routing (issue 11).

Where the compiled refinement step does not apply, ``refine`` judges its proposals in Python
(:mod:`rankmap.mappers.refine`), and each proposal routes the moved flows with the router's
:meth:`~rankmap.routing.Router.path_arrays`. Two things are measured:

1. Dragonfly ``path_arrays`` (:class:`rankmap.routing.dragonfly.DragonflyMinimal`) against a
   reference written here: the same rows built with scipy sparse products (each stage's
   distinct keys as a matrix, selected per flow and added), the way rankmap built them
   before. Same entries required (row by row, as sets); medians of RANKMAP_BENCH_REPEATS
   (default 5) wall-clock runs after a warm-up, and their ratio.
2. ``auto`` on small and mid-sized problems off the torus's compiled path: CPU seconds of one
   run (the result is deterministic), the pick, and each refinement's predicted time as a
   share of its start's; then ``refine_search`` alone from the start ``auto`` refines on the
   two biggest, with its proposals and why it stopped.

Writes benchmarks/RESULTS_refine_dragonfly.md (above its earlier runs).

Run: ``make bench ONLY=refine_dragonfly`` or ``.venv/bin/python
benchmarks/bench_refine_dragonfly.py``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing_util import median_time, write_results  # noqa: E402

REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "5"))

#: path_arrays problems: (machine, flows, seed)
PATH_CASES = [("dragonfly:groups=5,rows=2,cols=2,nodes=4,cores=4", 400, 1),
              ("dragonfly:groups=5,rows=2,cols=2,nodes=4,cores=4", 3000, 2),
              ("xc:groups=3", 50000, 3),
              ("xc:groups=26", 100000, 4)]

#: auto problems: (pattern, machine, allocation or None, threads per rank, routing or None)
AUTO_CASES = [
    ("stencil:8x8x5", "dragonfly:groups=5,rows=2,cols=2,nodes=4,cores=4", None, 1, None),
    ("fft2d:16x20", "dragonfly:groups=5,rows=2,cols=2,nodes=4,cores=4", None, 1, None),
    ("stencil:16x16x4", "xc:groups=2", "random:256:seed=1", 1, None),
    ("minimd", "xc:groups=2", "random:256:seed=1", 1, None),
    ("lulesh:8x8x16", "dragonfly:groups=4,rows=2,cols=4,nodes=2:node=pack:2,numa:2,core:8",
     None, 1, None),
    ("stencil:16x16", "fattree:k=8:levels=3:cores=2", None, 1, "ecmp"),
    ("stencil:16x16x8:box", "torus:8x8x8:cores=4", None, 1, "adaptive"),
    ("stencil:16x16x4:box", "xc:groups=2:cores=2", "random:512:seed=2", 1, None),
    ("minimd", "xc:groups=3", None, 4, None),
]


def scipy_reference(router, src, dst):
    """The rows of ``router.path_arrays(src, dst)`` built with scipy sparse products: the
    reference of the same run (each stage's distinct keys routed once, as a matrix)."""
    m = router.machine
    F = len(src)
    off = np.nonzero(src != dst)[0]
    ones = np.ones(len(off))
    P = sp.csr_matrix((np.concatenate([ones, ones]),
                       (np.concatenate([off, off]),
                        np.concatenate([src[off], m.n_nodes + dst[off]]))),
                      shape=(F, m.n_links))
    for stage, valiant, flows, a, b in router._stage_keys(src, dst, np.ones(F)):
        k = int(max(a.max(), b.max())) + 1
        keys, inv = np.unique(a * k + b, return_inverse=True)
        ptr, links, frac = router._kernel_rows(stage, valiant, keys // k, keys % k)
        A = sp.csr_matrix((frac, links, ptr), shape=(len(keys), m.n_links))
        sel = sp.csr_matrix((np.ones(len(flows)), (flows, inv.ravel())),
                            shape=(F, len(keys)))
        P = P + sel @ A
    P = P.tocsr()
    return P.indptr, P.indices, P.data


def same_rows(a, b) -> bool:
    """Whether two CSR triples hold the same entries, row by row (in any order)."""
    if not np.array_equal(a[0], b[0]):
        return False
    rows = np.repeat(np.arange(len(a[0]) - 1), np.diff(a[0]))
    oa, ob = np.lexsort((a[1], rows)), np.lexsort((b[1], rows))
    return (np.array_equal(np.asarray(a[1])[oa], np.asarray(b[1])[ob])
            and np.array_equal(np.asarray(a[2])[oa], np.asarray(b[2])[ob]))


def bench_paths() -> list[str]:
    from rankmap.machines import parse_machine
    from rankmap.routing import router_for

    out = ["| machine | flows | route entries | path_arrays (ms) | scipy reference (ms) | "
           "ratio | same entries |", "|---|---:|---:|---:|---:|---:|---|"]
    for spec, n, seed in PATH_CASES:
        m = parse_machine(spec)
        rng = np.random.default_rng(seed)
        src = rng.integers(0, m.n_nodes, n)
        dst = rng.integers(0, m.n_nodes, n)
        router = router_for(m, "minimal")
        got = router.path_arrays(src, dst)
        same = same_rows(got, scipy_reference(router, src, dst))
        t_new = median_time(lambda: router.path_arrays(src, dst), REPEATS, warmup=True)
        t_ref = median_time(lambda: scipy_reference(router, src, dst), REPEATS, warmup=True)
        out.append(f"| `{spec}` | {n:,} | {len(got[1]):,} | {1e3 * t_new:.2f} | "
                   f"{1e3 * t_ref:.2f} | {t_new / t_ref:.2f}x | {'yes' if same else 'NO'} |")
        print(out[-1], flush=True)
    return out


def _inputs(pattern, machine, nodes, threads):
    from rankmap.allocation import parse_allocation, whole_machine
    from rankmap.machines import parse_machine
    from rankmap.patterns import parse_pattern

    m = parse_machine(machine)
    a = parse_allocation(nodes, m) if nodes else whole_machine(m)
    if threads > 1:
        a = a.with_threads(threads)
    return m, a, parse_pattern(pattern, default_ranks=a.n_cores)


def bench_auto() -> tuple[list[str], list[str]]:
    from rankmap.mappers.refine import refine_search
    from rankmap.mappers.registry import resolve
    from rankmap.selection import auto_select

    out = ["| pattern | machine | routing | ranks | auto CPU (s) | pick | refinements: "
           "predicted time / start's |", "|---|---|---|---:|---:|---|---|"]
    searches = ["| problem | start | proposals | kept | stop | CPU (s) |",
                "|---|---|---:|---:|---|---:|"]
    for pattern, machine, nodes, threads, routing in AUTO_CASES:
        m, a, p = _inputs(pattern, machine, nodes, threads)
        t = time.process_time()
        c = auto_select(p, m, a, seed=0, routing=routing)
        dt = time.process_time() - t
        shares = []
        starts = []
        for e in c.candidates:
            if e.name.startswith("refine:"):
                base = c.find(e.name.split(":", 1)[1])
                shares.append(f"`{e.name}` {e.metrics['predicted_time_s'] / base.metrics['predicted_time_s']:.3f}")
                starts.append(e.name.split(":", 1)[1])
        where = machine + (f", {nodes}" if nodes else "") + (f", {threads} threads/rank"
                                                            if threads > 1 else "")
        out.append(f"| `{pattern}` | `{where}` | {routing or 'default'} | {p.n_ranks:,} | "
                   f"{dt:.1f} | `{c.best.name}` | {'; '.join(shares)} |")
        print(out[-1], flush=True)
        if p.n_ranks >= 1024 and starts and pattern.startswith(("minimd", "stencil:16x16x4:box")):
            start = resolve(starts[0], m).place(p, m, a, 0).core_of_rank
            t = time.process_time()
            run = refine_search(start, p, m, a, 0, None, routing)
            searches.append(f"| `{pattern}` on `{where}` | `{starts[0]}` | {run.proposals:,} | "
                            f"{run.accepted:,} | {run.stop} | {time.process_time() - t:.1f} |")
            print(searches[-1], flush=True)
    return out, searches


def main() -> int:
    paths = bench_paths()
    auto, searches = bench_auto()
    text = "\n".join([
        "# `auto` and `refine` off the torus (issue 11)", "",
        "Measured by `benchmarks/bench_refine_dragonfly.py` on the shared 2-core box.", "",
        f"**Dragonfly `path_arrays`** (minimal routing, random node pairs) against scipy "
        f"sparse products building the same rows, in the same run: wall-clock medians of "
        f"{REPEATS} runs after a warm-up.", "", *paths, "",
        "**`auto`** (seed 0, time model on): CPU seconds of one run, the pick, and every "
        "refinement's predicted time as a share of its start's (below 1: it helped).", "",
        *auto, "",
        "**`refine_search` alone** from the first start `auto` refines, default budget "
        "(`stop`: `budget`, `work` = `REFINE_WORK` route entries, `small gain`, `refused`).",
        "", *searches, ""])
    write_results("RESULTS_refine_dragonfly.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
