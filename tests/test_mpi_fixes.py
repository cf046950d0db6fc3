"""``mpirun -n K``: processes that differ (workers, files on their node's disk, arguments) still
agree on one protocol and stop together on an error; Cartesian grids with dimensions of width
1; the launcher's order kept by ``auto`` is reported as not reordered.

Skipped, with what to install, when mpirun or mpi4py is missing, unless RANKMAP_REQUIRE_MPI=1.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_mpi_run import SCRIPTS, _check_procs, _json_line, _need_mpi, mpirun

from rankmap.cli import main
from rankmap.mpi.bench_report import format_table
from rankmap.selection.parallel import usable_cores

RANKMAP = os.path.join(os.path.dirname(sys.executable), "rankmap")
#: a hang is a failure: every run here ends in seconds
HANG_S = 120


def _mpmd(parts, cwd=None):
    """``mpirun A : B ...``, each part a (process count, working directory, env, argv);
    a hang fails the test."""
    _need_mpi()
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    for k, (n, wdir, env, argv) in enumerate(parts):
        if k:
            cmd.append(":")
        cmd += ["-n", str(n)]
        if wdir is not None:
            cmd += ["-wdir", str(wdir)]
        if env:   # this part's own environment, over the one mpirun gives every process
            cmd += ["env", *(f"{k}={v}" for k, v in env.items())]
        cmd += argv
    env = {k: v for k, v in os.environ.items() if k != "RANKMAP_MACHINE"}
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=HANG_S, env=env,
                              cwd=cwd)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hang: {' '.join(cmd)} still running after {HANG_S} s")


def _errors(proc):
    return [ln for ln in proc.stderr.splitlines() if ": error:" in ln]


def test_processes_with_different_worker_counts_agree_on_one_protocol(capsys):
    """The default --jobs is this node's cores / its processes: here one process has every
    core as workers, the other two one each. Each process chose its own protocol (items dealt
    out, or fixed shares) and the launch hung; the output must be the serial run's."""
    if usable_cores() < 2:
        pytest.skip("needs 2 usable cores (a process with more than one worker)")
    argv = ["compare", "--machine", "torus:4x4x4", "--pattern", "stencil:8x8", "--mappings",
            "all", "--format", "csv"]
    assert main(argv + ["--jobs", "1"]) == 0
    serial = capsys.readouterr().out
    proc = _mpmd([(2, None, {"OMPI_COMM_WORLD_LOCAL_SIZE": "2"}, [RANKMAP, *argv]),
                  (1, None, {"OMPI_COMM_WORLD_LOCAL_SIZE": "1"}, [RANKMAP, *argv])])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == serial


@pytest.mark.parametrize("present", [0, 1])
def test_an_input_missing_on_one_process_stops_every_process(tmp_path, present):
    """The graph file is on one process's disk only (its working directory): the other
    failed alone and the first waited forever in the search. Every process must stop with
    status 2, and rank 0 alone says it, naming the process that failed when not itself."""
    dirs = [tmp_path / "a", tmp_path / "b"]
    for d in dirs:
        d.mkdir()
    dirs[present].joinpath("g.csv").write_text("src,dst,bytes\n0,1,100\n1,2,100\n2,3,100\n"
                                               "3,0,100\n")
    argv = [RANKMAP, "compare", "--machine", "torus:2x2", "--pattern", "graph:g.csv"]
    proc = _mpmd([(1, dirs[0], None, argv), (1, dirs[1], None, argv)])
    assert proc.returncode == 2, proc.stderr
    said = "graph file 'g.csv' not found"
    expected = said if present == 1 else f"process 1 of 2: {said}"
    assert _errors(proc) == [f"rankmap compare: error: {expected}"]


def test_a_bad_environment_on_one_process_stops_every_process():
    """A process fails before its executor is made (its $OMPI_COMM_WORLD_LOCAL_SIZE is not a
    number): the other must not wait for it."""
    argv = [RANKMAP, "compare", "--machine", "torus:2x2", "--pattern", "stencil:2x2",
            "--mappings", "TXY"]
    proc = _mpmd([(1, None, None, argv),
                  (1, None, {"OMPI_COMM_WORLD_LOCAL_SIZE": "x"}, argv)])
    assert proc.returncode == 2, proc.stderr
    assert _errors(proc) == ["rankmap compare: error: process 1 of 2: bad "
                             "$OMPI_COMM_WORLD_LOCAL_SIZE 'x': expected a process count"]


@pytest.mark.parametrize("which", ["one", "all"])
def test_graph_weights_above_mpi_int_are_refused_on_every_process(which):
    """A weight above INT_MAX on one process: it raised OverflowError alone and the others
    hung; on every process, OverflowError. Every process must raise the same RankmapError."""
    _need_mpi()
    try:
        proc = mpirun(4, [sys.executable, str(SCRIPTS / "check_graph_weights.py"), which],
                      {"RANKMAP_NODE": "0,1,2,3"}, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("hang")
    lines = sorted(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT"))
    assert len(lines) == 4, proc.stdout + proc.stderr
    said = {ln.split(" ", 2)[2] for ln in lines}
    assert len(said) == 1, said
    text = said.pop()
    assert text.startswith("RankmapError "), text
    assert "at most 2147483647" in text
    assert text.startswith("RankmapError process 1: ") == (which == "one")


@pytest.mark.parametrize("dims", ["2x2x1x1x1x1x1", "2x1x1x1x1x1x1x1x2",
                                  "x".join(["1"] * 15 + ["4"])])
def test_cart_grid_with_width_1_dimensions_is_placed_without_them(dims):
    """MPI.Compute_dims(4, 7) = 2x2x1x1x1x1x1: MPI's Create_cart takes it, cart_create
    refused it ("bad stencil grid ...: 1 to 6 dimensions"). The grid is placed without its
    width-1 dimensions and the communicator keeps MPI's grid: TX on 2 nodes of 2 cores puts
    new rank r on node r // 2."""
    periods = "0" * len(dims.split("x"))
    proc = mpirun(4, [sys.executable, str(SCRIPTS / "check_cart.py"), dims, periods,
                      "torus:2:cores=2", "TX", "2"], {"RANKMAP_NODE": "1,0,1,0"})
    procs = _json_line(proc)["procs"]
    _check_procs(procs)
    assert sorted(p["new"] for p in procs) == [0, 1, 2, 3]
    assert all(int(p["node"]) == p["new"] // 2 for p in procs)
    assert [p["new"] for p in procs] != [0, 1, 2, 3]    # really reordered


def test_launchers_order_kept_by_auto_is_not_a_reorder(tmp_path):
    """auto's placement predicted no faster than the launcher's order: that order is kept,
    and the JSON said ``"reordered": true``; the header said "1 repeats"."""
    if shutil.which("mpirun") is None:
        _need_mpi()
    out = tmp_path / "b.json"
    proc = mpirun(4, [RANKMAP, "bench", "halo", "--dims", "2x2", "--sizes", "1KiB",
                      "--machine", "torus:2x2:cores=2", "--repeats", "1", "--json", str(out)],
                  {"RANKMAP_NODE": "0,1,0,1"})
    result = json.loads(Path(out).read_text())
    assert result["mapping"].startswith("the launcher's order")
    assert result["reordered"] is False
    assert "predicted no faster" in result["not_reordered_because"]
    head = proc.stdout.splitlines()[0]
    assert head.endswith(", 1 repeat") and "not reordered" not in head, head
    assert format_table({**result, "repeats": 2}).splitlines()[0].endswith(", 2 repeats")
