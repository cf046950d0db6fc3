"""Pattern building benchmark (issue 14): how long the spec language takes to make flows.

For each spec, the median over several runs of ``parse_pattern`` (spec to Pattern: every
phase's src/dst/bytes arrays), in the same process after a warm-up run (numba kernels
compiled and cached). Reference measured in the same run: a bare numpy copy of the result's
three arrays (the least any generator must do to write them); the ratio says how far above
that floor each generator is. Also the grid detection (what ``graph:FILE`` does for a graph
without ``grid=``) of a gridless 32x32x32 box stencil, which it finds, and of a random
geometric graph of 4,096 and 16,384 ranks (points in the unit cube, each linked to its 6
nearest), which is no stencil and must be refused as fast.

Writes benchmarks/RESULTS_patterns.md (above its earlier runs). Run: ``make bench ONLY=patterns``.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import os
import sys
import statistics
import time


HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing_util import write_results  # noqa: E402
REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "5"))
# the 1M-rank allreduce has 20.9 M flows, above the default flow limit (16.8 M): raised here,
# as a user building it would (RANKMAP_MAX_FLOWS)
os.environ.setdefault("RANKMAP_MAX_FLOWS", str(1 << 25))
SPECS = [
    "stencil:64x64x32:box",                                     # 131,072 ranks, 26 neighbours
    "stencil:64x64x32:box:face=6936:edge=408:corner=24",        # same, per-class sizes
    "lulesh:64x64x32:s=16",                                     # three phases
    "stencil:64x64x32:box:radius=2:periodic",                   # 124 neighbours
    "diagonal:128x128",                                        # 16,384 ranks, 508 offsets
    "alltoall:64x64x32:dims=2",
    "allreduce:1048576:bytes=8",                                # 1M ranks, 20 rounds
    "stencil:128x128x64:periodic",                              # 1M ranks, 6 neighbours
]


def _median(fn) -> float:
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _geometric_graph(n: int, seed: int):
    """Flows of a random geometric graph: n points in the unit cube, each to its 6 nearest."""
    import numpy as np
    from scipy.spatial import cKDTree

    pts = np.random.default_rng(seed).random((n, 3))
    near = cKDTree(pts).query(pts, k=7)[1][:, 1:]
    return np.repeat(np.arange(n, dtype=np.int64), 6), near.ravel().astype(np.int64)


def _csv_reading(pattern) -> list:
    """(file, rows, read s, row-by-row s) for the pattern written as a plain CSV and as
    ``rankmap record`` writes it (header with messages and phase, a trailing ``# ranks``)."""
    import os
    import tempfile

    import numpy as np

    from rankmap.patterns.graph_files import _csv_row_by_row, read_csv_graph
    from rankmap.validate import read_csv_rows

    ph = pattern.phases[0]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        plain, recorded = os.path.join(tmp, "plain.csv"), os.path.join(tmp, "recorded.csv")
        table = np.c_[ph.src, ph.dst, ph.bytes.astype(np.int64)]
        with open(plain, "w") as fh:
            fh.write("src,dst,bytes\n")
            np.savetxt(fh, table, fmt="%d", delimiter=",")
        with open(recorded, "w") as fh:
            fh.write("src,dst,bytes,messages,phase\n")
            np.savetxt(fh, np.c_[table, np.ones(len(table), dtype=np.int64),
                                 np.zeros(len(table), dtype=np.int64)], fmt="%d", delimiter=",")
            fh.write(f"# ranks {pattern.n_ranks}\n")
        for name, path in (("plain `src,dst,bytes`", plain),
                           ("recorded `src,dst,bytes,messages,phase`", recorded)):
            read_csv_graph(path)
            t_read = _median(lambda: read_csv_graph(path))
            t_rows = _median(lambda: _csv_row_by_row(read_csv_rows(path, "graph file"), path))
            out.append((name, len(table), t_read, t_rows))
            print(f"read {name}: {t_read:.2f} s, row by row {t_rows:.2f} s", flush=True)
    return out


def main() -> int:
    from rankmap.patterns import parse_pattern
    from rankmap.patterns.grid_detect import detect_stencil_grid

    rows = []
    for spec in SPECS:
        p = parse_pattern(spec)  # warm-up (numba cache, imports)
        flows = sum(ph.n_flows for ph in p.phases)
        t = _median(lambda: parse_pattern(spec))
        arrays = [a for ph in p.phases for a in (ph.src, ph.dst, ph.bytes)]
        ref = _median(lambda: [a.copy() for a in arrays])
        rows.append((spec, p.n_ranks, len(p.phases), flows, t, ref))
        print(f"{spec}: {p.n_ranks:,} ranks, {flows:,} flows, {t * 1e3:.0f} ms "
              f"({t / ref:.1f}x a copy)", flush=True)
    g = parse_pattern("stencil:32x32x32:box")
    src, dst = g.phases[0].src, g.phases[0].dst
    detect_stencil_grid(g.n_ranks, src, dst)
    t_detect = _median(lambda: detect_stencil_grid(g.n_ranks, src, dst))
    print(f"detect 32x32x32 box ({len(src):,} flows): {t_detect:.2f} s", flush=True)
    refused = []
    for n in (4096, 16384):
        rsrc, rdst = _geometric_graph(n, seed=1)
        assert detect_stencil_grid(n, rsrc, rdst) is None
        t_refuse = _median(lambda: detect_stencil_grid(n, rsrc, rdst))
        refused.append((n, len(rsrc), t_refuse))
        print(f"refuse rgg {n} ({len(rsrc):,} flows): {t_refuse:.2f} s", flush=True)

    csv_rows = _csv_reading(g)

    lines = ["# Pattern building (bench_patterns.py)", "",
             f"Median of {REPEATS} runs of `parse_pattern(spec)` after a warm-up, on this "
             "machine (2 shared cores); reference: a numpy copy of the pattern's src/dst/bytes "
             "arrays, measured in the same run.", "",
             "| spec | ranks | phases | flows | build (ms) | copy (ms) | ratio |",
             "|---|---|---|---|---|---|---|"]
    for spec, n, ph, flows, t, ref in rows:
        lines.append(f"| `{spec}` | {n:,} | {ph} | {flows:,} | {t * 1e3:.0f} | {ref * 1e3:.1f} "
                     f"| {t / ref:.1f} |")
    lines += ["", f"Grid detection of a gridless `stencil:32x32x32:box` ({len(src):,} flows, "
              f"32,768 ranks: 3,473 candidate grids): median {t_detect:.2f} s."]
    for n, flows, t_refuse in refused:
        lines.append(f"Grid detection refusing a random geometric graph of {n:,} ranks "
                     f"({flows:,} flows, 6 nearest neighbours each): median {t_refuse:.2f} s.")
    lines += ["", "Reading the same stencil as a graph CSV file (`read_csv_graph`: one vectorised "
              "pass over a plain file), against the row-by-row reader every other file takes "
              "(each token checked; the reference, measured in the same run):", "",
              "| file | rows | read (s) | row by row (s) | ratio |", "|---|---:|---:|---:|---:|"]
    for name, rows, t_read, t_rows in csv_rows:
        lines.append(f"| {name} | {rows:,} | {t_read:.2f} | {t_rows:.2f} | "
                     f"{t_read / t_rows:.2f} |")
    lines.append("")
    write_results("RESULTS_patterns.md", "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
