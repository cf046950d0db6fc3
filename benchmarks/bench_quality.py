"""Placement quality of rankmap's pick against Scotch on irregular and mismatched problems (issue 13).

For every problem, two placements are scored by the same rankmap evaluation (one
:class:`rankmap.evaluation.Evaluator`, ``dor`` routing, the time model on):

* **rankmap**: ``auto``'s pick (:func:`rankmap.selection.auto_select`, seed 0); the
  multilevel ``graph`` mapper on its own is reported too where auto runs it;
* **Scotch**: ``scotch_gmap -b0 -Cd`` (Debian package ``scotch``, a benchmark peer only;
  ``-Cd``: deterministic for one target file; ``amk_grf`` builds decomposition targets at
  random, so of the runs the one best for Scotch counts) on the same weighted communication
  graph, its edge weights scaled to sum under 2**30 (:func:`scotch_util.scotch_weights`;
  Debian's Scotch sums them in 32 bits and crashed or hung on the larger problems before). The
  target is ``torus3D X Y Z`` for a whole machine with one core per node; otherwise a
  decomposition-defined target built by ``amk_grf`` from the machine's node graph (links as
  edges, ``cores_per_node`` as every node's weight, ``-l`` the allocated nodes; ``-2`` above
  8,192 nodes), so Scotch fills each node's cores; a whole k-ary n-tree is Scotch's tree-leaf
  target ``tleaf`` (k sons a level, every level's links costing 1). Ranks Scotch puts on a
  node beyond its cores (it balances within ``-b0.0``, which it may miss) are moved to the
  nearest free core and counted.

Problems (2K-131K ranks): random geometric graphs (points in the unit cube, each linked to
its 6 nearest neighbours, 1 MiB per edge each way), a triangulated unstructured 2-D mesh read
from a Matrix Market file (``graph:FILE``), scattered allocations, multi-core nodes, grids
whose shape does not match the torus, large stencils, and two problems on a fat tree (d-mod-k
routing, the fat tree's default). Times are CPU seconds of this
process and its children (``time.process_time`` + ``RUSAGE_CHILDREN``; median of
RANKMAP_BENCH_REPEATS runs, default 3; 1 above 8,192 ranks); Scotch's include writing its
graph and target files and reading its mapping. The 1-minute load average is recorded before
and after each problem. ``auto``'s own explanation of its pick is kept with the figures.
Writes benchmarks/RESULTS_quality.md.

Run: ``make bench ONLY=quality`` or ``.venv/bin/python benchmarks/bench_quality.py``
(``RANKMAP_BENCH_MAX_CASES=N`` runs the first N problems only, ``RANKMAP_BENCH_CASES=i,j``
the listed ones; see :func:`main`).
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scotch_util import SCOTCH_GMAP, write_scotch_graph  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "3"))
SCOTCH_TIMEOUT = float(os.environ.get("RANKMAP_BENCH_SCOTCH_TIMEOUT", "300"))
MiB = 1 << 20

#: (label, machine spec, allocation spec or None, pattern spec; ``@rgg:N:seed`` and
#: ``@mesh:N:seed`` are generated into graph files)
CASES = [
    ("rgg 4K, 4 cores/node", "torus:8x8x16:cores=4", None, "@rgg:4096:1"),
    ("rgg 16K, 4 cores/node", "torus:16x16x16:cores=4", None, "@rgg:16384:2"),
    ("rgg 2K, scattered", "torus:16x16x16:cores=2", "random:1024:seed=3", "@rgg:2048:3"),
    ("FEM mesh (.mtx) 2K", "torus:8x8x8:cores=4", None, "@mesh:2048:4"),
    ("FEM mesh (.mtx) 8K, scattered", "torus:16x16x32:cores=2", "random:4096:seed=5",
     "@mesh:8192:5"),
    ("2-D periodic on 3-D torus", "torus:16x16x16", None, "stencil:64x64:periodic"),
    ("80x50 box on 3-D torus", "torus:16x16x16", None, "stencil:80x50:box"),
    ("3-D 27-point, shape mismatch", "torus:8x8x16:cores=4", None, "stencil:16x16x16:box"),
    ("fft2d, 4 cores/node", "torus:8x8x16:cores=4", None, "fft2d:64x64"),
    ("2-D box on BG/P", "bgp:4096", None, "stencil:128x128:box"),
    ("3-D stencil, scattered", "torus:16x16x32:cores=2", "random:4096:seed=6",
     "stencil:32x16x16"),
    ("3-D stencil 131K", "torus:32x32x32:cores=4", None, "stencil:64x32x64:periodic"),
    ("3-D 27-point on a fat tree", "fattree:k=16:levels=3:cores=4", None,
     "stencil:32x32x16:box"),
    ("rgg 4K on a fat tree", "fattree:k=16:levels=3", None, "@rgg:4096:7"),
]


# ----------------------------------------------------------------------------- problems

def random_geometric_graph(n: int, seed: int, k: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Undirected edges (a < b) linking each of n random points of the unit cube to its k
    nearest neighbours."""
    from scipy.spatial import cKDTree

    pts = np.random.default_rng(seed).random((n, 3))
    _, idx = cKDTree(pts).query(pts, k + 1)
    a = np.repeat(np.arange(n), k)
    b = idx[:, 1:].reshape(-1)
    e = np.unique(np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1), axis=0)
    return e[:, 0], e[:, 1]


def triangle_mesh(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Undirected edges of the Delaunay triangulation of n random points of the unit square
    (a 2-D unstructured finite-element mesh)."""
    from scipy.spatial import Delaunay

    pts = np.random.default_rng(seed).random((n, 2))
    tri = Delaunay(pts).simplices
    a = np.concatenate([tri[:, 0], tri[:, 1], tri[:, 2]])
    b = np.concatenate([tri[:, 1], tri[:, 2], tri[:, 0]])
    e = np.unique(np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1), axis=0)
    return e[:, 0], e[:, 1]


def materialise(spec: str, workdir: str) -> str:
    """Pattern spec for ``spec``: generated graphs are written to files in ``workdir``."""
    if not spec.startswith("@"):
        return spec
    kind, n, seed = spec[1:].split(":")
    n, seed = int(n), int(seed)
    if kind == "rgg":
        a, b = random_geometric_graph(n, seed)
        path = os.path.join(workdir, f"rgg{n}_{seed}.csv")
        with open(path, "w") as fh:
            fh.write("src,dst,bytes\n")
            for u, v in zip(a.tolist(), b.tolist()):
                fh.write(f"{u},{v},1048576\n{v},{u},1048576\n")
    else:
        a, b = triangle_mesh(n, seed)
        path = os.path.join(workdir, f"mesh{n}_{seed}.mtx")
        with open(path, "w") as fh:
            fh.write("%%MatrixMarket matrix coordinate pattern symmetric\n")
            fh.write(f"{n} {n} {len(a)}\n")
            for u, v in zip(a.tolist(), b.tolist()):
                fh.write(f"{v + 1} {u + 1}\n")
    return f"graph:{path}"


# ----------------------------------------------------------------------------- Scotch

def write_target(workdir: str, machine, allocation) -> str:
    """Scotch target file for the allocation (see module docstring); returns its path."""
    tgt = os.path.join(workdir, "t.tgt")
    whole = allocation.n_nodes == machine.n_nodes and np.array_equal(
        allocation.nodes, np.arange(machine.n_nodes))
    dims = getattr(machine, "dims", None)
    if whole and allocation.cores_per_node == 1 and dims is not None and len(dims) == 3 \
            and all(getattr(machine, "wrap", [True] * 3)):
        with open(tgt, "w") as fh:
            fh.write(f"torus3D {' '.join(str(int(d)) for d in dims)}\n")
        return tgt
    if whole and machine.kind == "fattree" and hasattr(machine, "levels"):
        # a k-ary n-tree: Scotch's tree-leaf target, k sons a level, every link costing 1
        # (two hosts are as far apart as the levels up to their common switch); its leaves
        # are numbered as the hosts are, and -b0 gives every host its share of the ranks
        with open(tgt, "w") as fh:
            fh.write(f"tleaf {machine.levels}" + f" {machine.k} 1" * machine.levels + "\n")
        return tgt
    n = machine.n_nodes
    a, b = machine.link_src, machine.link_dst
    ok = a != b
    a, b = np.concatenate([a[ok], b[ok]]), np.concatenate([b[ok], a[ok]])
    e = np.unique(np.stack([a, b], axis=1), axis=0)
    ptr = np.searchsorted(e[:, 0], np.arange(n + 1))
    grf = os.path.join(workdir, "t.grf")
    with open(grf, "w") as fh:
        fh.write(f"0\n{n} {len(e)}\n0 001\n")
        for v in range(n):
            nb = e[ptr[v]:ptr[v + 1], 1]
            fh.write(f"{allocation.cores_per_node} {len(nb)} {' '.join(map(str, nb.tolist()))}\n")
    cmd = ["amk_grf"]
    if allocation.n_nodes > 8192:
        cmd.append("-2")
    if not whole:
        lst = os.path.join(workdir, "t.lst")
        with open(lst, "w") as fh:
            fh.write(f"{allocation.n_nodes}\n" + "\n".join(map(str, np.sort(allocation.nodes)))
                     + "\n")
        cmd.append(f"-l{lst}")
    subprocess.run(cmd + [grf, tgt], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, timeout=SCOTCH_TIMEOUT)
    return tgt


def scotch_cores(machine, allocation, pattern, workdir: str) -> tuple[np.ndarray, float, int]:
    """Run scotch_gmap; return (core of every rank, seconds incl. files, ranks moved)."""
    t0 = time.perf_counter()
    grf, out = os.path.join(workdir, "g.grf"), os.path.join(workdir, "m.map")
    write_scotch_graph(grf, pattern)
    tgt = write_target(workdir, machine, allocation)
    proc = subprocess.run(SCOTCH_GMAP + [grf, tgt, out], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=SCOTCH_TIMEOUT)
    if proc.returncode != 0:
        raise RuntimeError(f"scotch_gmap exited with status {proc.returncode}")
    data = np.loadtxt(out, skiprows=1, dtype=np.int64).reshape(-1, 2)
    term = np.empty(pattern.n_ranks, dtype=np.int64)
    term[data[:, 0]] = data[:, 1]
    elapsed = time.perf_counter() - t0
    # terminal numbers are machine node ids (torus3D: first dimension fastest; deco built
    # from the node graph: the graph's vertex numbers, also with -l)
    node = term
    if (allocation.position_of_node(node) < 0).any():
        raise RuntimeError("scotch_gmap used a node outside the allocation")
    pos = allocation.position_of_node(node)
    return _fill_cores(pos, machine, allocation), elapsed, _fill_cores.moved


def _fill_cores(pos: np.ndarray, machine, allocation) -> np.ndarray:
    """Cores for ranks given allocation positions; overflow goes to the nearest free core."""
    cpn = allocation.cores_per_node
    order = np.argsort(pos, kind="stable")
    first = np.searchsorted(pos[order], np.arange(allocation.n_nodes))
    slot = np.empty(len(pos), dtype=np.int64)
    slot[order] = np.arange(len(pos)) - first[pos[order]]
    cores = pos * cpn + slot
    over = np.nonzero(slot >= cpn)[0]
    _fill_cores.moved = len(over)
    if len(over):
        used = np.zeros(allocation.n_cores, dtype=bool)
        used[cores[slot < cpn]] = True
        for r in over:
            free = np.nonzero(~used)[0]
            d = machine.hop_distance(np.full(len(free), allocation.nodes[pos[r]]),
                                     allocation.nodes[free // cpn])
            c = int(free[np.argmin(d)])
            cores[r] = c
            used[c] = True
    return cores


# ----------------------------------------------------------------------------- runs

def _cpu() -> float:
    """CPU seconds of this process and of its finished children (Scotch runs as one)."""
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + ch.ru_utime + ch.ru_stime


def _timed(fn, reps):
    """(result of the last run, median CPU seconds over ``reps`` runs)."""
    times, out = [], None
    for _ in range(reps):
        t0 = _cpu()
        out = fn()
        times.append(_cpu() - t0)
    return out, statistics.median(times)


def run_case(label, machine_spec, alloc_spec, pattern_spec, workdir, cached=None,
             keep_scotch=False) -> dict:
    """Scores of rankmap's pick, the graph mapper and Scotch on one problem (with ``cached``,
    a row from an earlier run, only Scotch is run again; with ``keep_scotch`` too, only
    rankmap is run again and the cached Scotch figures are kept)."""
    from rankmap.allocation import parse_allocation, whole_machine
    from rankmap.evaluation import Evaluator
    from rankmap.machines import parse_machine
    from rankmap.mappers import validate_mapping
    from rankmap.report.render import explain_pick
    from rankmap.selection import auto_select
    from rankmap.patterns import parse_pattern

    m = parse_machine(machine_spec)
    a = parse_allocation(alloc_spec, m) if alloc_spec else whole_machine(m)
    p = parse_pattern(materialise(pattern_spec, workdir), default_ranks=a.n_cores)
    ev = Evaluator(m, a, p)
    reps = REPEATS if p.n_ranks <= 8192 else 1
    row = {"label": label, "machine": machine_spec, "alloc": alloc_spec,
           "pattern": pattern_spec, "ranks": p.n_ranks, "runs": reps}

    def score(cores, name):
        met = ev.evaluate(validate_mapping(name, cores, p.n_ranks, a)).metrics
        return {"time": met.get("predicted_time_s", float("nan")),
                "max": met["max_link_bytes"], "hb": met["hop_bytes"]}

    if cached is not None and not keep_scotch:
        row = {k: v for k, v in cached.items() if not k.startswith("scotch")}
        _run_scotch(row, m, a, p, workdir, reps, score)
        return row
    row["load"] = [os.getloadavg()[0]]
    comp, t_auto = _timed(lambda: auto_select(p, m, a, seed=0), reps)
    row["pick"] = comp.best.name
    row["auto"] = score(comp.best.mapping.core_of_rank, "auto")
    row["auto_s"] = t_auto
    row["why"] = explain_pick(comp)
    # every candidate auto evaluated (graph among them up to GRAPH_RANK_LIMIT ranks), scored
    # by auto's own evaluator, which has the same settings as ``ev``
    row["others"] = {e.name: {"time": e.metrics.get("predicted_time_s", float("nan")),
                              "max": e.metrics["max_link_bytes"], "hb": e.metrics["hop_bytes"]}
                     for e in comp.candidates}
    if comp.find("graph") is not None:
        row["graph"] = row["others"]["graph"]
    if keep_scotch and cached is not None and ("scotch" in cached or "scotch_fail" in cached):
        row.update({k: v for k, v in cached.items() if k.startswith("scotch")})
        row["scotch_from_earlier_run"] = True
    else:
        _run_scotch(row, m, a, p, workdir, reps, score)
    row["load"].append(os.getloadavg()[0])
    return row


def _run_scotch(row, m, a, p, workdir, reps, score) -> None:
    """Add Scotch's scores (or why there are none) to ``row``."""
    if shutil.which("scotch_gmap") and shutil.which("amk_grf"):
        try:
            # amk_grf's target decomposition is randomised (it has no seed option), so
            # Scotch's mapping of one problem changes from run to run: of the runs, the one
            # best for Scotch (lowest predicted time, then busiest link, then hop-bytes) counts
            runs = []
            times = []
            for _ in range(reps):
                res, t_s = _timed(lambda: scotch_cores(m, a, p, workdir), 1)
                runs.append((score(res[0], "scotch"), res[2]))
                times.append(t_s)
            best, moved = min(runs, key=lambda r: (r[0]["time"], r[0]["max"], r[0]["hb"]))
            row["scotch"] = best
            row["scotch_runs"] = [r[0] for r in runs]
            row["scotch_s"] = statistics.median(times)
            row["scotch_moved"] = moved
        except subprocess.TimeoutExpired:
            row["scotch_fail"] = f"no mapping within {SCOTCH_TIMEOUT:.0f} s"
        except (RuntimeError, subprocess.CalledProcessError, MemoryError) as exc:
            row["scotch_fail"] = str(exc).splitlines()[0][:120]
    else:
        row["scotch_fail"] = "scotch not installed"


def _ratio(row, who, key):
    if who not in row or "scotch" not in row:
        return None
    s = row["scotch"][key]
    return row[who][key] / s if s else float("inf")


def _goal(r) -> str:
    t, mx, hb = (_ratio(r, "auto", k) for k in ("time", "max", "hb"))
    miss = [n for n, bad in (("time", t > 1 + 1e-9), ("busiest", mx > 1 + 1e-9),
                             ("hop-bytes", hb > 1.05 + 1e-9)) if bad]
    return "met" if not miss else "MISSED: " + ", ".join(miss)


def _this_run(r) -> bool:
    """Whether rankmap's figures of row ``r`` come from this code (rows of an earlier run
    have no per-candidate scores)."""
    return "others" in r


#: hand-written analysis appended to the generated tables (edit after a run)
NOTES = """
## Against the goal (read this before the numbers)

* **Latest rerun** (2026-11-25 evening, commit 5831e0d, `RANKMAP_BENCH_KEEP_SCOTCH=1`):
  rankmap's rows of the 8 problems on multi-core or scattered allocations, after `graph`
  (and `rcb` on a gridless graph, which cuts node parts the same way) moved to KaHIP's FAST
  k-way cut and phases came to be routed once per group of identical flows. Still **met in
  all 11 problems with a Scotch figure**. Picks' predicted time against the previous rows:
  better on rgg 2K scattered (0.63 -> 0.54 of Scotch's) and on the scattered 3-D stencil
  (0.86 -> 0.62; hop-bytes 1.02 -> 0.89), worse on the 2K FEM mesh (0.72 -> 0.78: 32.1 ->
  34.5 ms; with ECO's cut `rcb` and `graph` both reach 32.1 ms) and on rgg 16K (0.52 ->
  0.54: 61.7 -> 64.2 ms), the same on the other four (rgg 4K's hop-bytes 0.87 -> 0.92).
  `auto`'s CPU seconds of this rerun read high: a full test suite ran beside it (load
  average 1-4), e.g. rgg 16K 57.2 -> 71.0 s and rgg 4K 9.5 -> 12.7 s, which the code does not
  explain (`RESULTS_auto_speed.md` has `auto`'s time measured on a quieter box).
* **This run**: 2026-11-25, the corrected Scotch input below, load average 1-2 (the
  session's other benchmark processes ran beside it, so CPU seconds may read up to about 10 %
  high). rankmap's rows: commit 71cd33a for the seven problems whose pick is a refinement
  (`RANKMAP_BENCH_KEEP_SCOTCH=1`: Scotch's figures kept from the run on 022eb28 half an hour
  before, same Scotch command), 022eb28 for the other five; 71cd33a only computes `refine`'s
  move targets faster, with identical placements.
* **Met in all 11 problems with a Scotch figure.** Time ratios 0.19-0.86, busiest-link
  ratios 0.19-0.90, hop-bytes ratios 0.55-1.02. The two that missed or nearly missed before:
  `stencil:80x50:box` on `torus:16x16x16` (was `TXYZ`, 1.81x Scotch's hop-bytes: every rank
  order and the `graph` mapper had a 13 MiB busiest link and `TXYZ` was 0.3 us faster on
  latency; `graph`'s link swaps now only move flows the router really sends over the busiest
  link, onto places from which it no longer does, and reach 11 MiB with the same 2,000
  proposals: `refine:graph` 27.1 ms, 0.58x Scotch, 1.01x its hop-bytes) and the scattered
  3-D stencil (`refine:graph` 44.4 ms / 18 MiB / 160.6 GiB; with the refinement of the
  morning it was 49.3 ms / 20 MiB / 183 GiB, 1.09x Scotch's hop-bytes once Scotch's input was
  corrected).
* **Scotch's earlier figures were wrong, and so were its crashes.** Debian's Scotch 7.0.3 sums
  edge weights in 32-bit integers; the benchmark scaled every weight to 10^6, so every
  problem's weights summed past 2^31 (`gtst`: "edge load sum overflow"). `scotch_gmap` then
  died with SIGSEGV (rgg 16K, the 8K mesh, BG/P), hung in a futex wait, or mapped with
  wrapped weights (all other rows of earlier runs). The weights now sum under 2^30
  (`scotch_util.scotch_weights`): Scotch maps every problem but the 131K one, in 0.3-9 s of
  CPU, and better than it did (80x50: 71.6 -> 69.5 GiB; 3-D stencil scattered: 175.3 ->
  157.2 GiB; 27-point: 577 -> 461 ms). Ratios of earlier runs are not comparable with these.
* **Scotch varies from run to run** even with `-Cd` (deterministic for one target file):
  `amk_grf` builds the decomposition-defined target of a multi-core or scattered allocation
  by randomised bipartitioning and has no seed option (three runs of the scattered 3-D
  stencil: 54.3, 51.8, 51.8 ms). Each problem runs Scotch 3 times (1 above 8,192 ranks) and
  the run best for Scotch (lowest predicted time) counts.
* **No Scotch figure at 131,072 ranks**: `amk_grf -2` builds a `deco 2` target of the
  32,768 nodes; `scotch_gmap` hung on it for 300 s in this run and died with SIGSEGV in 3 of
  3 tries by hand; with unit node weights it gave no mapping within 200 s.
* **What it costs**: `auto`'s CPU time went up 2-3x on the problems of 4,096 ranks and more
  whose pick is a refinement: its two refinements rank every move's candidate targets by
  hop-bytes saved and get a bigger default budget (8,192 ranks: 65,536 proposals each instead
  of 20,000; the small-gain stop ends a search earlier where it stops paying). Before this
  session's `refine` changes (the session's first run, same machine): scattered 3-D stencil
  11.2 -> 37.2 s, rgg 16K 20.2 -> 57.2 s, 8K mesh 11.3 -> 23.1 s, 80x50 9.3 -> 18.0 s, rgg 4K
  5.7 -> 9.5 s; the problems whose pick is not a refinement (27-point, fft2d, BG/P, 131K)
  did not change. Problems of up to 2,500 ranks keep the 20,000 budget; `--budget` sets it
  by hand.
* **`hilbert` / `morton`** are cheap candidates (a few ms; no shape matching), valid on any
  grid, allocation and machine with coordinates; they win none of these problems.
"""


def render(rows) -> str:
    """The Markdown results document."""
    loads = [x for r in rows if _this_run(r) for x in r.get("load", [])]
    out = ["# Placement quality against Scotch (issue 13)", "",
           "Measured by `benchmarks/bench_quality.py` on this project's shared 2-core box. Every "
           "placement (rankmap's pick, the `graph` mapper alone, Scotch's `scotch_gmap -b0 -Cd`) is "
           "scored by the same rankmap evaluation: `dor` routing, the time model on "
           "(predicted time), busiest directed link bytes, hop-bytes. Ratios are rankmap / "
           "Scotch: below 1 is better than Scotch. Goal: time and busiest-link ratios <= 1 and "
           "hop-bytes ratio <= 1.05 for rankmap's pick in every problem. `auto (CPU s)` is the "
           "CPU time of `auto_select` (building, evaluating and refining every candidate), "
           f"median of {max([r.get('runs', 1) for r in rows if _this_run(r)] + [1])} run(s); "
           "Scotch's figure includes writing its files. "
           + (f"Load average (1 min) during this run: {min(loads):.0f}-{max(loads):.0f}."
              if loads else ""), "",
           "| problem | ranks | rankmap pick | time ratio | busiest ratio | hop-bytes ratio | "
           "goal | auto (CPU s) | Scotch (s) | rankmap figures |",
           "|---|---:|---|---:|---:|---:|---|---:|---:|---|"]
    for r in rows:
        when = "this run" if _this_run(r) else "earlier run, not rerun"
        unit = "" if _this_run(r) else " (wall)"
        if "scotch" not in r:
            out.append(f"| {r['label']} | {r['ranks']} | `{r['pick']}` | - | - | - | no Scotch "
                       f"figure ({r.get('scotch_fail', '')}) | {r['auto_s']:.1f}{unit} | - | "
                       f"{when} |")
            continue
        t, mx, hb = (_ratio(r, "auto", k) for k in ("time", "max", "hb"))
        sc = f"{r['scotch_s']:.1f}" + (" (kept from the previous run)"
                                       if r.get("scotch_from_earlier_run") else
                                       " (wall, earlier run)" if not _this_run(r) else "")
        out.append(f"| {r['label']} | {r['ranks']} | `{r['pick']}` | {t:.2f} | {mx:.2f} | "
                   f"{hb:.2f} | {_goal(r)} | {r['auto_s']:.1f}{unit} | {sc} | {when} |")
    out += ["", "## Why `auto` picked it (its own explanation)", ""]
    for r in rows:
        if _this_run(r):
            out.append(f"* **{r['label']}**: {r['why']}")
    out += ["", "## The `graph` mapper alone", "",
            "Where `auto` runs `graph` (up to 8,192 ranks); its figures as `auto` evaluated it. "
            "Ratios to Scotch.", "",
            "| problem | graph: time | busiest | hop-bytes |", "|---|---:|---:|---:|"]
    for r in rows:
        if "graph" in r and "scotch" in r:
            out.append(f"| {r['label']} | {_ratio(r, 'graph', 'time'):.2f} | "
                       f"{_ratio(r, 'graph', 'max'):.2f} | {_ratio(r, 'graph', 'hb'):.2f} |")
    out += ["", "## The space-filling curves (`hilbert`, `morton`)", "",
            "Ratios to Scotch where `auto` evaluated them (grid patterns).", "",
            "| problem | hilbert: time | busiest | hop-bytes | morton: time | busiest | "
            "hop-bytes |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        o = r.get("others", {})
        if "hilbert" in o and "scotch" in r:
            cells = []
            for name in ("hilbert", "morton"):
                cells += [f"{o[name][k] / r['scotch'][k]:.2f}" if r["scotch"][k] else "-"
                          for k in ("time", "max", "hb")]
            out.append(f"| {r['label']} | " + " | ".join(cells) + " |")
    out += ["", "## Problems and absolute figures", "",
            "| problem | machine | allocation | pattern | who | predicted time (ms) | busiest "
            "link (MiB) | hop-bytes (GiB) |", "|---|---|---|---|---|---:|---:|---:|"]
    for r in rows:
        for who in ("auto", "graph", "scotch"):
            if who in r:
                sc = r[who]
                name = {"auto": f"pick `{r['pick']}`", "graph": "`graph`",
                        "scotch": "Scotch" + (f" ({r['scotch_moved']} ranks moved off full "
                                              "nodes)" if r.get("scotch_moved") else "")}[who]
                out.append(f"| {r['label']} | `{r['machine']}` | {r['alloc'] or 'whole'} | "
                           f"`{r['pattern']}` | {name} | {sc['time'] * 1e3:.2f} | "
                           f"{sc['max'] / MiB:.1f} | {sc['hb'] / 2**30:.1f} |")
        if "scotch_fail" in r:
            out.append(f"| {r['label']} | `{r['machine']}` | {r['alloc'] or 'whole'} | "
                       f"`{r['pattern']}` | Scotch failed: {r['scotch_fail']} | | | |")
    out += ["", "`@rgg:N:S`: N random points of the unit cube (seed S), each linked to its 6 "
            "nearest neighbours, 1 MiB each way per edge, read as `graph:` CSV. `@mesh:N:S`: the "
            "Delaunay triangulation of N random points of the unit square, a Matrix Market "
            "pattern file read as `graph:` (1 MiB each way per edge). Allocations "
            "`random:N:seed=S` are N nodes drawn at random from the machine."]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    """Run the problems, print progress, write benchmarks/RESULTS_quality.md.

    ``RANKMAP_BENCH_CASES=0,3,5`` runs only those problems (indices into :data:`CASES`); every
    finished problem is kept as JSON in ``RANKMAP_BENCH_CACHE`` (default
    ``benchmarks/.quality_cache``), and the results file is written from all kept problems, so
    problems can be run in separate processes. ``RANKMAP_BENCH_RESCOTCH=1`` reruns only Scotch
    on problems already kept (e.g. with a longer ``RANKMAP_BENCH_SCOTCH_TIMEOUT``);
    ``RANKMAP_BENCH_KEEP_SCOTCH=1`` reruns only rankmap and keeps the kept Scotch figures
    (Scotch's mapping does not change with rankmap's code).
    """
    import json

    cache = os.environ.get("RANKMAP_BENCH_CACHE", os.path.join(HERE, ".quality_cache"))
    os.makedirs(cache, exist_ok=True)
    only = int(os.environ.get("RANKMAP_BENCH_MAX_CASES", str(len(CASES))))
    pick = os.environ.get("RANKMAP_BENCH_CASES")
    indices = ([int(x) for x in pick.split(",") if x.strip()] if pick is not None
               else list(range(only)))
    with tempfile.TemporaryDirectory() as workdir:
        for i in indices:
            case = CASES[i]
            print(f"case {case[0]}: {case[3]} on {case[1]}", flush=True)
            cached = None
            path = os.path.join(cache, f"{i}.json")
            keep = os.environ.get("RANKMAP_BENCH_KEEP_SCOTCH") == "1"
            if (os.environ.get("RANKMAP_BENCH_RESCOTCH") == "1" or keep) \
                    and os.path.exists(path):
                with open(path) as fh:
                    cached = json.load(fh)
            r = run_case(*case, workdir, cached=cached, keep_scotch=keep)
            with open(os.path.join(cache, f"{i}.json"), "w") as fh:
                json.dump(r, fh)
            print(f"  pick {r['pick']}: " + ", ".join(
                f"{k} {_ratio(r, 'auto', k):.2f}" for k in ("time", "max", "hb"))
                  if "scotch" in r else f"  no Scotch: {r.get('scotch_fail')}", flush=True)
    rows = []
    for i in range(len(CASES)):
        path = os.path.join(cache, f"{i}.json")
        if os.path.exists(path):
            with open(path) as fh:
                rows.append(json.load(fh))
    text = render(rows)
    with open(os.path.join(HERE, "RESULTS_quality.md"), "w") as fh:
        fh.write(text + NOTES)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
