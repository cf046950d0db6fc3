"""PMPI library benchmark: what recording costs per message, and what a reordering
MPI_Cart_create costs (Open MPI, oversubscribed on this machine, fake nodes of a bgp machine).

* recording overhead per message (ns): a 2-process ping-pong of 8-byte messages and a 2x2
  periodic halo (4 processes, Sendrecv to 4 neighbours), with blocks through the library's
  MPI_ entry points alternating with blocks through PMPI_ (no library) in the same run, with
  the library recording and not recording (benchmarks/c/record_overhead.c), plus the
  bookkeeping alone in CPU time;
* MPI_Cart_create(reorder = 1) of a periodic grid, slowest process, against reorder = 0 in
  the same run (each launch times both, REPEATS times): 64 processes under Open MPI and
  64, 256 and BIG (default 1,024; RANKMAP_BENCH_PMPI_BIG) under MPICH's hydra, with p on
  node p mod (P / 4) of bgp:512; CPU time of the engine, of all processes during the call,
  and of the whole launch;
* what starting N oversubscribed processes costs each launcher (a program doing MPI_Init,
  one barrier, MPI_Finalize): why the big rows use MPICH;
* the engine alone (``rankmap pmpi place``) on the request of a 1,024-process 32x32 grid on
  256 nodes of bgp:512: the part of the reordering that grows with the job.

Writes benchmarks/RESULTS_pmpi.md (above its earlier runs). Run: ``make bench ONLY=pmpi``.
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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from timing_util import REPEATS, write_results  # noqa: E402

BIN = os.path.dirname(sys.executable)
PINGPONG_ITERS = 2000
HALO_ITERS = 500
BIG = int(os.environ.get("RANKMAP_BENCH_PMPI_BIG", "1024"))
CART_REPEATS = 3  # reorder = 0 / reorder = 1 pairs inside one launch
LAUNCH_SIZES = (64, 256)  # start-up cost of each launcher (MPI_Init, barrier, Finalize)
LAUNCH_TIMEOUT = 1800
IMPROPER: list[int] = []  # process counts whose run ended with Open MPI's 'exiting improperly'
OPEN_MPI, MPICH = "Open MPI", "MPICH"
TOOLS = {OPEN_MPI: ("mpicc", "mpirun"), MPICH: ("mpicc.mpich", "mpirun.mpich")}


def _children_cpu() -> float:
    """CPU seconds (user + system) of the children waited for so far."""
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def _launch(mpi: str, n: int, argv: list[str], env: dict[str, str], done: str = "MOVED"):
    """Run ``argv`` on ``n`` oversubscribed processes: (stdout, wall s, CPU s of the launch).
    ``done``: what the program prints once finished (a run that printed it counts even if
    Open MPI then reports a process 'exiting improperly')."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("RANKMAP_")}
    full.pop("LD_PRELOAD", None)
    full["PATH"] = BIN + os.pathsep + full.get("PATH", "")
    full.update(env)
    if mpi == OPEN_MPI:
        cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-n", str(n)]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        for k in [*env, "PATH"]:
            cmd += ["-x", k]
    else:  # hydra passes the whole environment on
        cmd = ["mpirun.mpich", "-n", str(n)]
    c0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd + argv, capture_output=True, text=True, env=full,
                          timeout=LAUNCH_TIMEOUT)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if proc.returncode != 0:
        # Open MPI 4.1 with a few hundred oversubscribed processes reports a process "exiting
        # improperly" after MPI_Finalize even for a plain program (no library) that uses
        # MPI_Comm_dup and collectives; the measurement printed before that is kept
        if done in proc.stdout and "exiting improperly" in proc.stderr:
            IMPROPER.append(n)
            return proc.stdout, wall, cpu
        raise RuntimeError(f"{mpi}: {' '.join(argv)} on {n}: {proc.stderr[-500:]}")
    return proc.stdout, wall, cpu


def _mpirun(n: int, argv: list[str], env: dict[str, str]) -> str:
    return _launch(OPEN_MPI, n, argv, env, done="MESSAGES")[0]


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


def _cart(mpi: str, exe: str, lib: str, n: int, dims: tuple[int, int]) -> dict:
    """One launch timing CART_REPEATS pairs of MPI_Cart_create(reorder = 0 / 1)."""
    n_nodes = n // 4
    env = {"LD_PRELOAD": lib, "RANKMAP_MACHINE": "bgp:512",
           "RANKMAP_NODE": ",".join(str(p % n_nodes) for p in range(n))}
    out, wall, cpu = _launch(mpi, n, [exe, str(dims[0]), str(dims[1]), str(CART_REPEATS)], env)
    plain = [float(ln.split()[1]) for ln in out.splitlines() if ln.startswith("PLAIN")]
    reorder = [[float(x) for x in ln.split()[1:4]] for ln in out.splitlines()
               if ln.startswith("REORDER")]
    if len(plain) != CART_REPEATS or len(reorder) != CART_REPEATS:
        raise RuntimeError(f"{mpi} cart_time on {n}: unexpected output {out[-300:]!r}")
    med = [statistics.median(r[i] for r in reorder) for i in range(3)]
    return {"mpi": mpi, "n": n, "dims": dims, "nodes": n_nodes, "plain": statistics.median(plain),
            "reorder": med[0], "engine_cpu": med[1], "cpu": med[2],
            "moved": int(_value(out, "MOVED")), "wall": wall, "launch_cpu": cpu}


def _startup(exes: dict[str, str]) -> list[tuple[str, int, float, float]]:
    """(launcher, processes, wall s, CPU s) of starting and ending a barrier-only program."""
    rows = []
    for n in LAUNCH_SIZES:
        for mpi in (OPEN_MPI, MPICH):
            _, wall, cpu = _launch(mpi, n, [exes[mpi]], {}, done="DONE")
            rows.append((mpi, n, wall, cpu))
    return rows


def _engine(work: str) -> dict:
    n, n_nodes = 1024, 256
    req = os.path.join(work, "req1024.txt")
    labels = "\n".join(str(p % n_nodes) for p in range(n))
    with open(req, "w") as fh:
        fh.write("rankmap-pmpi-request 1\ncall MPI_Cart_create\nmachine bgp:512\nmapping auto\n"
                 f"stencil star\nseed 0\nprocesses {n}\nranks {n}\ndims 32 32\nperiods 1 1\n"
                 f"labels\n{labels}\n")
    times, cpus = [], []
    for _ in range(REPEATS):
        c0, t0 = _children_cpu(), time.perf_counter()
        subprocess.run([os.path.join(BIN, "rankmap"), "pmpi", "place", req, "-o",
                        os.path.join(work, "res.txt")], check=True)
        times.append(time.perf_counter() - t0)
        cpus.append(_children_cpu() - c0)
    return {"wall": statistics.median(times), "cpu": statistics.median(cpus)}


def main() -> int:
    """Measure and write RESULTS_pmpi.md (skips with a message when MPI is missing)."""
    if not (shutil.which("mpicc") and shutil.which("mpirun")):
        print("bench_pmpi: needs mpicc and mpirun (apt-get install openmpi-bin libopenmpi-dev)")
        return 0
    from rankmap.pmpi.build import library_path
    lib = library_path()
    mpis = [m for m in (OPEN_MPI, MPICH) if all(shutil.which(t) for t in TOOLS[m])]
    libs = {m: library_path(TOOLS[m][0]) for m in mpis}
    with tempfile.TemporaryDirectory(prefix="rankmap-bench-pmpi-") as work:
        exes = {}
        for name in ("record_overhead", "cart_time", "init_barrier"):
            for mpi in mpis:
                exes[name, mpi] = os.path.join(work, f"{name}-{mpi.replace(' ', '')}")
                subprocess.run([TOOLS[mpi][0], "-O2", "-o", exes[name, mpi],
                                os.path.join(HERE, "c", f"{name}.c"), "-ldl"], check=True)
        ping = _overhead(exes["record_overhead", OPEN_MPI], lib, 2,
                         ["pingpong", "8", str(PINGPONG_ITERS), "9"], work)
        halo = _overhead(exes["record_overhead", OPEN_MPI], lib, 4,
                         ["halo", "8", str(HALO_ITERS), "9"], work)
        engine = _engine(work)
        startup = _startup({m: exes["init_barrier", m] for m in mpis}) \
            if MPICH in mpis else []
        carts = [(OPEN_MPI, 64)] + [(MPICH, n) for n in (64, 256, BIG) if MPICH in mpis and n]
        cart_rows = []
        for mpi, n in carts:  # one launch at a time, smallest first
            side = int(round(n ** 0.5))
            cart_rows.append(_cart(mpi, exes["cart_time", mpi], libs[mpi], n,
                                   (side, n // side)))
    load = os.getloadavg()[0]
    lines = ["# PMPI library (benchmarks/bench_pmpi.py)", "",
             f"All processes oversubscribed on this machine's {os.cpu_count()} CPUs "
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
              f"One launch per row times {CART_REPEATS} pairs (reorder = 0 then 1): medians. "
              "Fake nodes through RANKMAP_NODE: process p on node p mod (processes / 4) of "
              "bgp:512, 4 per node. CPU: the engine's (rank 0's children), and all processes' "
              "during the reordering call including the engine's (waiting processes sleep "
              "between polls); the launch columns are the whole run (start, 2 x "
              f"{CART_REPEATS} calls, end), wall and CPU of every process it started.", "",
              "| MPI | processes | grid | nodes | reorder = 1 (s) | reorder = 0 (s) | "
              "engine CPU (s) | CPU of all processes (s) | processes moved | launch wall (s) | "
              "launch CPU (s) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in cart_rows:
        lines.append(f"| {r['mpi']} | {r['n']} | {r['dims'][0]}x{r['dims'][1]} | {r['nodes']} "
                     f"| {r['reorder']:.2f} | {r['plain']:.4f} | {r['engine_cpu']:.2f} | "
                     f"{r['cpu']:.2f} | {r['moved']} | {r['wall']:.0f} | "
                     f"{r['launch_cpu']:.0f} |")
    lines += ["", f"The engine alone (`rankmap pmpi place`, a new Python process: start-up, "
              f"auto placement, answer) on the request of a 1,024-process 32x32 grid over 256 "
              f"nodes of bgp:512: median {engine['wall']:.2f} s wall, {engine['cpu']:.2f} s "
              f"CPU of {REPEATS} runs."]
    if startup:
        lines += ["", "## Starting oversubscribed processes", "",
                  "A program doing only MPI_Init, one barrier and MPI_Finalize, launched once "
                  "per row (whole run: wall, and CPU of every process it started):", "",
                  "| processes | Open MPI wall (s) | Open MPI CPU (s) | MPICH wall (s) | "
                  "MPICH CPU (s) |", "|---|---|---|---|---|"]
        for n in LAUNCH_SIZES:
            o = next(r for r in startup if r[:2] == (OPEN_MPI, n))
            m = next(r for r in startup if r[:2] == (MPICH, n))
            lines.append(f"| {n} | {o[2]:.1f} | {o[3]:.1f} | {m[2]:.1f} | {m[3]:.1f} |")
        lines += ["", "Open MPI's cost grows much faster than the process count: `orted` "
                  "forks the processes one by one while those already started busy-poll in "
                  "MPI_Init (oversubscribed: sched_yield, mostly system time), so each new "
                  "process gets a smaller share of the 2 CPUs; hence the rows of 256 and more "
                  "processes use MPICH's hydra (ch4:ucx), which starts them several times "
                  "cheaper."]
    if IMPROPER:
        lines += ["", f"Runs of {sorted(set(IMPROPER))} processes ended with Open MPI's "
                  "'process exiting improperly' after MPI_Finalize (the timings were printed "
                  "before it). The start-up program above, without the library (MPI_Init, "
                  "one barrier, MPI_Finalize), can end the same way at 256 oversubscribed "
                  "processes here, so it is Open MPI's, not the library's."]
    text = "\n".join(lines) + "\n"
    write_results("RESULTS_pmpi.md", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
