"""PMPI library benchmark: what recording costs per message, and what a reordering
MPI_Cart_create costs (Open MPI, oversubscribed on this machine, fake nodes of a bgp machine).

* recording overhead per message (ns): a 2-process ping-pong of 8-byte messages and a 2x2
  periodic halo (4 processes, Sendrecv to 4 neighbours), run without the library, with the
  library loaded but not recording, and with RANKMAP_RECORD set, alternating in the same run;
  overhead = (median time - median time without the library) / messages on the critical path;
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
PINGPONG_ITERS = 20000
HALO_ITERS = 5000
BIG = int(os.environ.get("RANKMAP_BENCH_PMPI_BIG", "256"))


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
        raise RuntimeError(f"{' '.join(argv)} on {n}: {proc.stderr[-500:]}")
    return proc.stdout


def _value(out: str, key: str) -> float:
    return float([ln for ln in out.splitlines() if ln.startswith(key)][-1].split()[1])


def _overhead(exe: str, lib: str, n: int, argv: list[str], messages: int, work: str) -> dict:
    configs = {"no library": {}, "library, not recording": {"LD_PRELOAD": lib},
               "library, recording": {"LD_PRELOAD": lib,
                                      "RANKMAP_RECORD": os.path.join(work, "rec.csv")}}
    times: dict[str, list[float]] = {k: [] for k in configs}
    for _ in range(REPEATS):
        for name, env in configs.items():
            times[name].append(_value(_mpirun(n, [exe, *argv], env), "TIME"))
    med = {k: statistics.median(v) for k, v in times.items()}
    base = med["no library"]
    return {k: (med[k], (med[k] - base) / messages * 1e9) for k in configs}


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
        for name, src in (("record_known", os.path.join(ROOT, "tests", "pmpi_programs",
                                                        "record_known.c")),
                          ("cart_time", os.path.join(HERE, "c", "cart_time.c"))):
            exes[name] = os.path.join(work, name)
            subprocess.run(["mpicc", "-O2", "-o", exes[name], src], check=True)
        ping = _overhead(exes["record_known"], lib, 2,
                         ["pingpong", "8", str(PINGPONG_ITERS)], 2 * PINGPONG_ITERS, work)
        halo = _overhead(exes["record_known"], lib, 4,
                         ["halo", "2", "2", "8", str(HALO_ITERS)], 4 * HALO_ITERS, work)
        engine = _engine(work)
        carts = [(64, (8, 8), 16, REPEATS)]
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
             f"Median of {REPEATS} runs of each configuration, alternating in the same run; "
             "8-byte messages. Overhead = (median time - median time without the library) / "
             "messages on rank 0's critical path.", "",
             "| program | configuration | median time (s) | overhead per message (ns) |",
             "|---|---|---|---|"]
    for label, res in ((f"ping-pong, 2 processes, {PINGPONG_ITERS} round trips", ping),
                       (f"halo 2x2 periodic, 4 processes, {HALO_ITERS} iterations x 4 "
                        "Sendrecv", halo)):
        for conf, (t, ns) in res.items():
            lines.append(f"| {label} | {conf} | {t:.4f} | "
                         f"{'(reference)' if conf == 'no library' else f'{ns:.0f}'} |")
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
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(HERE, "RESULTS_pmpi.md"), "w", encoding="utf-8") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
