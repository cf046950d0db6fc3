"""Real MPI runs (mpirun --oversubscribe): reordered Cartesian and graph communicators are
consistent and follow the placement, and the benchmarks give sane output.

Skipped, with what to install, when mpirun or mpi4py is missing, unless RANKMAP_REQUIRE_MPI=1.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).parent / "mpi_scripts"
TIMEOUT = 180


def _need_mpi():
    missing = []
    if shutil.which("mpirun") is None:
        missing.append("mpirun (apt-get install openmpi-bin libopenmpi-dev)")
    if importlib.util.find_spec("mpi4py") is None:
        missing.append("mpi4py (pip install 'rankmap[mpi]')")
    if missing:
        message = "MPI tests need " + " and ".join(missing)
        if os.environ.get("RANKMAP_REQUIRE_MPI") == "1":
            pytest.fail(message + " (RANKMAP_REQUIRE_MPI=1)")
        pytest.skip(message)


def mpirun(n, argv, env=None, check=True):
    """Run ``argv`` on ``n`` processes; return the CompletedProcess."""
    _need_mpi()
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-n", str(n)]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    full_env = {**os.environ, **(env or {})}
    if "RANKMAP_MACHINE" not in (env or {}):
        full_env.pop("RANKMAP_MACHINE", None)
    proc = subprocess.run(cmd + argv, capture_output=True, text=True, timeout=TIMEOUT,
                          env=full_env)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _json_line(proc):
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert lines, proc.stdout + proc.stderr
    return json.loads(lines[-1])


def _check_procs(procs):
    errors = [e for p in procs for e in p["errors"]]
    assert not errors, errors[:5]


def test_cart_reordered_and_consistent():
    """2x2 grid on 6 processes claiming nodes p % 3 of a 3-node ring with 2 cores each.

    TX fills nodes in order, so new rank r must run on node r // 2; the 2 spare processes get
    COMM_NULL; every process checks its Shift and neighbour-allgather neighbours' coordinates.
    """
    proc = mpirun(6, [sys.executable, str(SCRIPTS / "check_cart.py"), "2x2", "01",
                      "torus:3:cores=2", "TX", "3"])
    procs = _json_line(proc)["procs"]
    _check_procs(procs)
    used = [p for p in procs if p["new"] >= 0]
    assert sorted(p["new"] for p in used) == list(range(4))
    assert sum(p["new"] < 0 for p in procs) == 2
    assert all(int(p["node"]) == p["new"] // 2 for p in used)
    assert [p["new"] for p in procs] != [p["old"] for p in procs]  # really reordered


def test_cart_periodic_3d_random_placement():
    proc = mpirun(6, [sys.executable, str(SCRIPTS / "check_cart.py"), "2x1x3", "111",
                      "torus:3:cores=2", "random", "3"])
    procs = _json_line(proc)["procs"]
    _check_procs(procs)
    assert sorted(p["new"] for p in procs) == list(range(6))
    assert not procs[0]["warnings"]


def test_cart_without_machine_falls_back_with_warning():
    proc = mpirun(4, [sys.executable, str(SCRIPTS / "check_cart.py"), "2x2", "00", "-", "TX",
                      "2"])
    procs = _json_line(proc)["procs"]
    _check_procs(procs)
    assert [p["new"] for p in procs] == [0, 1, 2, 3]
    assert any("not reordered: no machine description" in w for w in procs[0]["warnings"])


@pytest.mark.parametrize("mode", ["rev", "half"])
def test_node_list_is_read_by_world_rank_on_sub_communicators(mode):
    """RANKMAP_NODE=0,1,2,3,0,1,2,3 gives world rank r its node, whatever the communicator's
    ranks (as for the PMPI library): TX on a ring of 2-core nodes puts new rank k of each
    communicator on its k // 2-th node in node order."""
    proc = mpirun(8, [sys.executable, str(SCRIPTS / "check_sub_nodes.py"), mode,
                      "torus:4:cores=2", "TX"], env={"RANKMAP_NODE": "0,1,2,3,0,1,2,3"})
    procs = _json_line(proc)["procs"]
    for color in {p["color"] for p in procs}:
        group = [p for p in procs if p["color"] == color]
        used = sorted({p["node"] for p in group})
        assert sorted(p["new"] for p in group) == list(range(len(group)))
        assert all(used[p["new"] // 2] == p["node"] for p in group), group


@pytest.mark.parametrize("weights", [[], ["unweighted"]])
def test_dist_graph_reordered_and_consistent(weights):
    proc = mpirun(6, [sys.executable, str(SCRIPTS / "check_graph.py"), "torus:3:cores=2",
                      "TX", "3", *weights])
    procs = _json_line(proc)["procs"]
    _check_procs(procs)
    assert sorted(p["new"] for p in procs) == list(range(6))
    assert all(int(p["node"]) == p["new"] // 2 for p in procs)


def _sane_rows(result, sizes, sent_per_size):
    assert [r["size"] for r in result["rows"]] == sizes
    for r in result["rows"]:
        assert 0 < r["min_s"] <= r["median_s"] <= max(r["times_s"])
        assert len(r["times_s"]) == result["repeats"]
        assert r["bytes_per_process"] == pytest.approx(sent_per_size * r["size"])
        assert r["bandwidth_MBps"] == pytest.approx(r["bytes_per_process"] / r["median_s"] / 1e6)


def test_benchmarks_pairs_cart_fft(tmp_path):
    mpirun(4, [sys.executable, str(SCRIPTS / "run_benches.py"), str(tmp_path),
               "torus:2:cores=2"], env={"RANKMAP_NODE": "0,1,0,1"})
    sizes = [1024, 16384]
    pairs = json.loads((tmp_path / "pairs.json").read_text())
    assert pairs["reordered"] and pairs["mapping"] == "TX" and pairs["pairings"] == 3
    _sane_rows(pairs, sizes, 1.0)  # 4 ranks: everyone has a partner
    for r in pairs["rows"]:
        assert r["worst_median_s"] >= r["median_s"] == min(r["pairing_median_s"])
    cart = json.loads((tmp_path / "cart.json").read_text())
    _sane_rows(cart, sizes, 2.0)  # a cyclic ring: two neighbours each
    fft = json.loads((tmp_path / "fft.json").read_text())
    _sane_rows(fft, sizes, 2.0)  # 2x2: one partner in the row, one in the column


def test_bench_halo_cli_table_json_plot(tmp_path):
    rankmap = shutil.which("rankmap") or str(Path(sys.executable).parent / "rankmap")
    out, png = tmp_path / "halo.json", tmp_path / "halo.png"
    proc = mpirun(4, [rankmap, "bench", "halo", "--dims", "2x2", "--box", "--sizes",
                      "1KiB..4KiB", "--repeats", "2", "--mapping", "none", "--json", str(out),
                      "--plot", str(png)])
    assert "halo benchmark: 4 processes, dims 2x2, placement none" in proc.stdout
    assert len([ln for ln in proc.stdout.splitlines() if "KiB" in ln]) == 3
    result = json.loads(out.read_text())
    assert result["box"] is True and not result["reordered"]
    _sane_rows(result, [1024, 2048, 4096], 3.0)  # 2x2 box, not periodic: 3 neighbours each
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_bad_dims_fails_before_running():
    _need_mpi()
    rankmap = shutil.which("rankmap") or str(Path(sys.executable).parent / "rankmap")
    proc = subprocess.run([rankmap, "bench", "halo", "--dims", "3x3"], capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert proc.returncode == 2
    assert "dims 3x3 need 9 processes, the communicator has 1" in proc.stderr


def test_bench_refuses_another_benchmarks_options():
    """pairs --dims, halo --pairings and cart --box were ignored without a word."""
    _need_mpi()
    rankmap = shutil.which("rankmap") or str(Path(sys.executable).parent / "rankmap")
    for argv, opt in ((["pairs", "--dims", "2x2"], "--dims"),
                      (["halo", "--dims", "2x2", "--pairings", "3"], "--pairings"),
                      (["cart", "--dims", "4", "--box"], "--box"),
                      (["pairs", "--cyclic"], "--cyclic"),
                      (["fft", "--dims", "1x1", "--cyclic"], "--cyclic")):
        proc = subprocess.run([rankmap, "bench", *argv], capture_output=True, text=True,
                              timeout=TIMEOUT)
        assert proc.returncode == 2
        assert f"{opt} does not apply to the {argv[0]} benchmark" in proc.stderr


@pytest.mark.parametrize("argv, said", [
    (["--mapping", "bogus"], "--mapping bogus needs a machine"),
    (["--mapping", "bogus", "-m", "torus:1"], "unknown mapping 'bogus'"),
    (["--mapping", "none", "--sizes", "1KiB,1PiB"],
     "is more than an MPI message of bytes holds"),
])
def test_bench_refuses_a_mapping_or_size_it_cannot_use_before_running(argv, said):
    """A mistyped --mapping ran the benchmark (exit 0) unless ranks were reordered; a size
    past the node's memory ended in 'out of memory' on every process, --sizes unnamed."""
    _need_mpi()
    rankmap = shutil.which("rankmap") or str(Path(sys.executable).parent / "rankmap")
    proc = subprocess.run([rankmap, "bench", "halo", "--dims", "1x1", *argv],
                          capture_output=True, text=True, timeout=TIMEOUT,
                          env={k: v for k, v in os.environ.items() if k != "RANKMAP_MACHINE"})
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_bench_refuses_a_size_past_memory_before_running():
    """27 buffers of 2047 MiB (a box halo on 2x1x1): 54 GiB, past any test machine's memory;
    said once, by rank 0, naming --sizes (a grid of one process is refused before: it sends
    no bytes)."""
    rankmap = shutil.which("rankmap") or str(Path(sys.executable).parent / "rankmap")
    proc = mpirun(2, [rankmap, "bench", "halo", "--dims", "2x1x1", "--box", "--mapping",
                      "none", "--sizes", "1KiB,2047MiB"], check=False)
    said = "bad --sizes entry 2.0 GiB: the halo benchmark's buffers would take"
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert len([ln for ln in proc.stderr.splitlines() if "rankmap bench:" in ln]) == 1
    assert "MB/s" not in proc.stdout


def test_launch_runs_open_mpi_with_the_rankfile(tmp_path):
    """End to end with the real mpirun: each rank is bound to the core its rankfile line names."""
    _need_mpi()
    if not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 usable cores to check core binding")
    import socket
    host = socket.gethostname()
    hostfile = tmp_path / "hf"
    hostfile.write_text(f"{host} slots=2\n")
    rankmap = shutil.which("rankmap") or str(Path(sys.executable).parent / "rankmap")
    # each rank writes its own file (never a shared stdout, whose lines the launcher may
    # interleave under load): bound.<rank> holds the JSON list of the cores it may run on
    probe = ("import json, os; r = os.environ['OMPI_COMM_WORLD_RANK']; "
             f"p = os.path.join({str(tmp_path)!r}, 'bound.' + r); "
             "open(p + '.tmp', 'w').write(json.dumps(sorted(os.sched_getaffinity(0)))); "
             "os.replace(p + '.tmp', p)")
    argv = [rankmap, "launch", "-m", "torus:1:cores=2", "-p", "pairs:random:ranks=2",
            "--mapping", "random", "--seed", "3", "--hostfile", str(hostfile), "--nodes", "0",
            "-o", "rf", "--", "mpirun", "-n", "2", "--hostfile", str(hostfile)]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    proc = subprocess.run(argv + [sys.executable, "-c", probe], cwd=tmp_path,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    slots = {}
    for line in (tmp_path / "rf").read_text().splitlines():
        rank, _, slot = line.removeprefix("rank ").partition(f"={host} slot=")
        slots[int(rank)] = int(slot)
    bound = {int(f.name.removeprefix("bound.")): json.loads(f.read_text())
             for f in tmp_path.glob("bound.*") if not f.name.endswith(".tmp")}
    assert sorted(bound) == [0, 1] and sorted(slots) == [0, 1]
    # each rank is bound to its own core; the one on slot 0 to the lower-numbered one
    assert not set(bound[0]) & set(bound[1]), bound
    by_slot = sorted(slots, key=slots.get)
    assert min(bound[by_slot[0]]) < min(bound[by_slot[1]]), (slots, bound)
    assert slots != {0: 0, 1: 1}  # the seed swaps them, so the order really came from the file


def test_rankfile_binds_a_rank_of_two_threads_to_two_cores(tmp_path):
    """End to end with the real mpirun: with --threads 2 on nodes without a structure the
    rankfile line is ``slot=0-1`` and the rank may run on both cores (not on one)."""
    _need_mpi()
    if not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 usable cores to check core binding")
    import socket
    host = socket.gethostname()
    hostfile = tmp_path / "hf"
    hostfile.write_text(f"{host} slots=1\n")   # the job: one rank on the node
    rankmap = shutil.which("rankmap") or str(Path(sys.executable).parent / "rankmap")
    probe = ("import json, os; "
             f"p = os.path.join({str(tmp_path)!r}, 'bound'); "
             "open(p + '.tmp', 'w').write(json.dumps(sorted(os.sched_getaffinity(0)))); "
             "os.replace(p + '.tmp', p)")
    argv = [rankmap, "launch", "-m", "torus:1:cores=2", "-p", "stencil:1", "--threads", "2",
            "--mapping", "inorder", "--hostfile", str(hostfile), "--nodes", "0", "-o", "rf",
            "--", "mpirun", "-n", "1", "--hostfile", str(hostfile)]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    proc = subprocess.run(argv + [sys.executable, "-c", probe], cwd=tmp_path,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "rf").read_text() == f"rank 0={host} slot=0-1\n"
    assert len(json.loads((tmp_path / "bound").read_text())) == 2


def test_study_under_mpirun_runs_once(tmp_path):
    """mpirun -n 2 rankmap study --out DIR: every point saved once, the plot written once,
    exit 0 (each rank used to run the whole study and the second failed on the plot)."""
    _need_mpi()
    rankmap = shutil.which("rankmap") or str(Path(sys.executable).parent / "rankmap")
    argv = ["mpirun", "-n", "2", "--oversubscribe"]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    proc = subprocess.run(argv + [rankmap, "study", "--machine", "torus:4x4:cores=2",
                                  "--pattern", "minighost", "--nodes-sweep", "2,4", "--threads",
                                  "1", "--allocs", "2", "--mappings", "random", "--out", "sd",
                                  "--plot", "st.png", "--format", "json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len((tmp_path / "sd" / "results.jsonl").read_text().splitlines()) == 8
    assert proc.stdout.count('"summary"') == 1 and (tmp_path / "st.png").exists()


def test_one_process_s_bad_graph_is_every_process_s_error():
    proc = mpirun(4, [sys.executable, str(SCRIPTS / "check_bad_graph.py")],
                  {"RANKMAP_NODE": "0,1,2,3"})
    lines = sorted(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT"))
    assert len(lines) == 4, proc.stdout + proc.stderr
    assert all(ln.split(" ", 2)[2] == "process 1: destinations names rank 7, outside the "
               "communicator (0-3)" for ln in lines), lines
