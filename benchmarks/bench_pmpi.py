"""PMPI library benchmark: what recording costs per message, and what a reordering
MPI_Cart_create costs (Open MPI, oversubscribed on this machine, fake nodes of a bgp machine).

* recording overhead per message (ns): a 2-process ping-pong of 8-byte messages and a 2x2
  periodic halo (4 processes, Sendrecv to 4 neighbours), with blocks through the library's
  MPI_ entry points alternating with blocks through PMPI_ (no library) in the same run, with
  the library recording and not recording (benchmarks/c/record_overhead.c), plus the
  bookkeeping alone in CPU time;
* MPI_Cart_create(reorder = 1) of a periodic grid, slowest process, against reorder = 0 in
  the same run: 64 processes (16x... on 16 nodes of bgp:512, 4 per node) and BIG processes
  (default 256: starting 1,024 Open MPI processes on 2 cores takes longer than a benchmark
  should; set RANKMAP_BENCH_PMPI_BIG=1024 to try);
* the engine alone (``rankmap pmpi place``) on the request of a 1,024-process 32x32 grid on
  256 nodes of bgp:512: the part of the reordering that grows with the job.

Writes benchmarks/RESULTS_pmpi.md. Run: ``make bench ONLY=pmpi``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from timing_util import REPEATS  # noqa: E402

BIN = os.path.dirname(sys.executable)
PINGPONG_ITERS = 2000
HALO_ITERS = 500
BIG = int(os.environ.get("RANKMAP_BENCH_PMPI_BIG", "256"))
IMPROPER: list[int] = []  # process counts whose run ended with Open MPI's 'exiting improperly'


def _mpirun(n: int, argv: list[str], env: dict[str, str]) -> str:
    full = {k: v for k, v in os.environ.items() if not k.startswith("RANKMAP_")}
    full.pop("LD_PRELOAD", None)
    full["PATH"] = BIN + os.pathsep + full.get("PATH", "")
    full.update(env)
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-n", str(n)]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    for k in [*env, "PATH"]:
        cmd += ["-x", k]
    proc = subprocess.run(cmd + argv, capture_output=True, text=True, env=full, timeout=3600)
    if proc.returncode != 0:
        # Open MPI 4.1 with a few hundred oversubscribed processes reports a process "exiting
        # improperly" after MPI_Finalize even for a plain program (no library) that uses
        # MPI_Comm_dup and collectives; the measurement printed before that is kept
        if "TIME" in proc.stdout and "exiting improperly" in proc.stderr:
            IMPROPER.append(n)
            return proc.stdout
        raise RuntimeError(f"{' '.join(argv)} on {n}: {proc.stderr[-500:]}")
    return proc.stdout


def _value(out: str, key: str) -> float:
    return float([ln for ln in out.splitlines() if ln.startswith(key)][-1].split()[1])


def _overhead(exe: str, lib: str, n: int, argv: list[str], work: str) -> dict:
    """Per-message overhead (ns) of the wrapped calls against PMPI_ calls in the same run."""
    out = {}
    for name, env in (("library loaded, not recording", {"LD_PRELOAD": lib}),
                      ("library loaded, recording", {"LD_PRELOAD": lib, "RANKMAP_RECORD":
                                                     os.path.join(work, "rec.csv")})):
        per, wrapped, direct, book = [], [], [], []
        for _ in range(REPEATS):
            text = _mpirun(n, [exe, *argv], env)
            w, d, m = _value(text, "WRAPPED"), _value(text, "DIRECT"), _value(text, "MESSAGES")
            wrapped.append(w)
            direct.append(d)
            per.append((w - d) / m * 1e9)
            if "BOOK_WORLD" in text:
                book.append((_value(text, "BOOK_WORLD"), _value(text, "BOOK_OTHER")))
        out[name] = {"wrapped": statistics.median(wrapped), "direct": statistics.median(direct),
                     "ns": statistics.median(per),
                     "book": tuple(statistics.median(b[i] for b in book) for i in (0, 1))
                     if book else None}
    return out


def _cart(exe: str, lib: str, n: int, dims: tuple[int, int], n_nodes: int, repeats: int):
    env = {"LD_PRELOAD": lib, "RANKMAP_MACHINE": "bgp:512",
           "RANKMAP_NODE": ",".join(str(p % n_nodes) for p in range(n))}
    reorder, plain, moved = [], [], 0
    for _ in range(repeats):
        out = _mpirun(n, [exe, str(dims[0]), str(dims[1]), "1"], env)
        reorder.append(_value(out, "TIME"))
        moved = int(_value(out, "MOVED"))
        plain.append(_value(_mpirun(n, [exe, str(dims[0]), str(dims[1]), "0"], env), "TIME"))
    return statistics.median(reorder), statistics.median(plain), moved


def _engine(work: str) -> float:
    n, n_nodes = 1024, 256
    req = os.path.join(work, "req1024.txt")
    labels = "\n".join(str(p % n_nodes) for p in range(n))
    with open(req, "w") as fh:
        fh.write("rankmap-pmpi-request 1\ncall MPI_Cart_create\nmachine bgp:512\nmapping auto\n"
                 f"stencil star\nseed 0\nprocesses {n}\nranks {n}\ndims 32 32\nperiods 1 1\n"
                 f"labels\n{labels}\n")
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        subprocess.run([os.path.join(BIN, "rankmap"), "pmpi", "place", req, "-o",
                        os.path.join(work, "res.txt")], check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    """Measure and write RESULTS_pmpi.md (skips with a message when MPI is missing)."""
    if not (shutil.which("mpicc") and shutil.which("mpirun")):
        print("bench_pmpi: needs mpicc and mpirun (apt-get install openmpi-bin libopenmpi-dev)")
        return 0
    from rankmap.pmpi.build import library_path
    lib = library_path()
    with tempfile.TemporaryDirectory(prefix="rankmap-bench-pmpi-") as work:
        exes = {}
        for name in ("record_overhead", "cart_time"):
            exes[name] = os.path.join(work, name)
            subprocess.run(["mpicc", "-O2", "-o", exes[name],
                            os.path.join(HERE, "c", f"{name}.c"), "-ldl"], check=True)
        ping = _overhead(exes["record_overhead"], lib, 2,
                         ["pingpong", "8", str(PINGPONG_ITERS), "9"], work)
        halo = _overhead(exes["record_overhead"], lib, 4,
                         ["halo", "8", str(HALO_ITERS), "9"], work)
        engine = _engine(work)
        carts = [(64, (8, 8), 16, min(REPEATS, 3))]
        if BIG:
            side = int(round(BIG ** 0.5))
            carts.append((BIG, (side, BIG // side), BIG // 4, 1))
        cart_rows = [(n, dims, nodes, *_cart(exes["cart_time"], lib, n, dims, nodes, reps),
                      reps) for n, dims, nodes, reps in carts]
    load = os.getloadavg()[0]
    lines = ["# PMPI library (benchmarks/bench_pmpi.py)", "",
             f"Open MPI, all processes oversubscribed on this machine's {os.cpu_count()} CPUs "
             f"(load average {load:.1f} when it finished; other jobs share the machine, so the "
             "small differences below are within noise of a few tens of ns).", "",
             "## Recording overhead per message", "",
             "Inside one run, exchanges through the MPI_ entry points (the preloaded library) "
             "alternate one by one with exchanges through PMPI_ (the MPI library directly, "
             "nothing recorded), 8-byte messages, each timed on rank 0; the medians of the "
             "wrapped and the direct exchange times (9 blocks of the iterations below) ignore "
             f"the samples other jobs preempted; median over {REPEATS} runs. Overhead = "
             "(wrapped - direct) / messages of one exchange on rank 0's critical path. The "
             "bookkeeping alone (datatype size, rank translation, hash-map update: the "
             "library's rm_record_send called 10^6 times, in thread CPU time) is the figure "
             "least disturbed by the machine's load.", "",
             "| exchange | library | wrapped exchange (us) | direct exchange (us) | "
             "overhead per message (ns) |", "|---|---|---|---|---|"]
    for label, res in ((f"ping-pong round trip, 2 processes, 9 x {PINGPONG_ITERS} samples", ping),
                       (f"halo 2x2 periodic (4 Sendrecv), 4 processes oversubscribed, 9 x "
                        f"{HALO_ITERS} samples", halo)):
        for conf, v in res.items():
            lines.append(f"| {label} | {conf} | {v['wrapped'] * 1e6:.3f} | "
                         f"{v['direct'] * 1e6:.3f} | "
                         f"{v['ns']:.0f} |")
    book = ping["library loaded, recording"]["book"]
    idle = ping["library loaded, not recording"]["book"]
    if book:
        lines += ["", f"Bookkeeping per recorded message (CPU time, median): {book[0]:.0f} ns on "
                  f"MPI_COMM_WORLD, {book[1]:.0f} ns on another communicator (rank "
                  "translation through the per-communicator cache)"
                  + (f"; {idle[0]:.0f} ns when the library is loaded but not recording."
                     if idle else ".")]
    lines += ["", "## Reordering MPI_Cart_create", "",
              "Slowest process, from a barrier to the return of MPI_Cart_create on a periodic "
              "grid, with reorder = 1 (node labels gathered, `rankmap pmpi place` run with the "
              "auto mapping on rank 0, new ranks broadcast, MPI_Comm_split, "
              "PMPI_Cart_create) against reorder = 0 (the library passes the call through). "
              "Fake nodes through RANKMAP_NODE: process p on node p mod (processes / 4) of "
              "bgp:512, 4 per node.", "",
              "| processes | grid | nodes | runs | reorder = 1 (s) | reorder = 0 (s) | "
              "processes moved |", "|---|---|---|---|---|---|---|"]
    for n, dims, nodes, reorder, plain, moved, reps in cart_rows:
        lines.append(f"| {n} | {dims[0]}x{dims[1]} | {nodes} | {reps} | {reorder:.2f} | "
                     f"{plain:.4f} | {moved} |")
    lines += ["", f"The engine alone (`rankmap pmpi place`, a new Python process: start-up, "
              f"auto placement, answer) on the request of a 1,024-process 32x32 grid over 256 "
              f"nodes of bgp:512: median {engine:.2f} s of {REPEATS} runs. A 1,024-process "
              "MPI_Cart_create is this plus the label gather and the broadcast; starting "
              f"1,024 Open MPI processes on {os.cpu_count()} CPUs is not practical here "
              f"(256 already take minutes to start), so the end-to-end row stops at {BIG}."]
    if IMPROPER:
        lines += ["", f"Runs of {sorted(set(IMPROPER))} processes ended with Open MPI's "
                  "'process exiting improperly' after MPI_Finalize (the timings were printed "
                  "before it). A plain program without the library that calls MPI_Comm_dup, a "
                  "few collectives and MPI_Cart_create ends the same way at 256 oversubscribed "
                  "processes here, so it is Open MPI's, not the library's."]
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(HERE, "RESULTS_pmpi.md"), "w", encoding="utf-8") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
