"""``mpirun -n 2 rankmap compare|map ...``: candidates spread over the MPI processes (mpi4py),
rank 0 alone prints and writes, and everything is the serial run's; ``launch --search-procs``
runs the search as a real MPI job.

Skipped, with what to install, when mpirun or mpi4py is missing, unless RANKMAP_REQUIRE_MPI=1.
"""

import json
import os
import sys

from test_mpi_run import _need_mpi, mpirun

from rankmap.cli import main

RANKMAP = os.path.join(os.path.dirname(sys.executable), "rankmap")
SMALL = ["-m", "torus:4x4:cores=2", "-n", "random:6:seed=3", "-p", "stencil:3x4:box"]


def test_compare_spread_over_two_processes_is_the_serial_run(capsys):
    argv = ["compare", *SMALL, "--mappings", "all,auto", "--format", "json", "--jobs", "1"]
    assert main(argv) == 0
    serial = capsys.readouterr().out
    proc = mpirun(2, [RANKMAP, *argv])
    assert proc.stdout == serial  # printed once, by rank 0, same bytes


def test_twin_mappers_spread_over_two_processes_are_the_serial_run(tmp_path, capsys):
    # a pattern without a grid: rcb is graph's placement, built once and renamed
    path = tmp_path / "g.csv"
    path.write_text("src,dst,bytes\n" + "".join(
        f"{i},{(i * 5 + 1) % 12},{4096 * (1 + i % 3)}\n" for i in range(12)))
    argv = ["compare", "-m", "torus:4x4:cores=2", "-n", "random:6:seed=3", "-p",
            f"graph:{path}", "--mappings", "TXY,rcb,graph,auto", "--format", "json",
            "--jobs", "1"]
    assert main(argv) == 0
    serial = capsys.readouterr().out
    assert '"mapping": "rcb"' in serial and '"mapping": "graph"' in serial
    proc = mpirun(2, [RANKMAP, *argv])
    assert proc.stdout == serial


def test_map_auto_spread_writes_once(tmp_path, capsys):
    serial_file, mpi_file = tmp_path / "serial.rf", tmp_path / "mpi.rf"
    argv = ["map", *SMALL, "--mapping", "auto", "--emit", "openmpi", "--jobs", "1"]
    assert main(argv + ["-o", str(serial_file)]) == 0
    serial = capsys.readouterr().out
    proc = mpirun(2, [RANKMAP, *argv, "-o", str(mpi_file)])
    assert mpi_file.read_text() == serial_file.read_text()
    assert proc.stdout.replace(str(mpi_file), "F") == serial.replace(str(serial_file), "F")
    assert proc.stderr.count("wrote ") == 1


def test_error_is_rank_0s_one_line():
    proc = mpirun(2, [RANKMAP, "compare", *SMALL, "--mappings", "XYT,rubik: app tile 5",
                      "--jobs", "1"], check=False)
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if "rankmap compare: error:" in ln]
    assert lines == ["rankmap compare: error: rubik needs a box of nodes: the 6 allocated "
                     "nodes do not fill a box (bounding box 4x4)"]


def test_launch_search_procs_runs_a_real_mpi_search(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for var in ("SLURM_JOB_NODELIST", "SLURM_NODELIST", "PBS_NODEFILE", "RANKMAP_MACHINE"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "hf").write_text("node0 slots=2\nnode1 slots=2\nnode2 slots=2\n")
    common = ["launch", "--hostfile", "hf", "-m", "torus:3:cores=2", "-p", "stencil:3x2",
              "--dry-run"]
    assert main(common + ["-o", "serial.rf", "--", "mpirun", "-n", "6", "./app"]) == 0
    _need_mpi()  # skips here, with what to install, without MPI
    launcher = "mpirun --oversubscribe --bind-to none" + \
        (" --allow-run-as-root" if os.geteuid() == 0 else "")
    capsys.readouterr()
    assert main(common + ["-o", "mpi.rf", "--search-procs", "2", "--search-launcher", launcher,
                          "--", "mpirun", "-n", "6", "./app"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "mpirun --rankfile mpi.rf -n 6 ./app"
    assert "searching with 2 processes: mpirun --oversubscribe" in err
    assert (tmp_path / "mpi.rf").read_text() == (tmp_path / "serial.rf").read_text()
    assert not [p for p in os.listdir(tmp_path) if p.startswith((".rankmap", "mpi.rf."))]


def _rows(script, *args, n=2):
    proc = mpirun(n, [sys.executable, os.path.join(os.path.dirname(__file__), "mpi_scripts",
                                                   script), *args])
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[")]
    assert len(lines) == 1, proc.stdout
    return {r["rank"]: r for r in json.loads(lines[0])}


def test_a_process_with_nothing_left_waits_asleep():
    """One process runs an item of 3 s (asleep) while the other has nothing left: that one
    waits without spinning (a blocking allgather polled for the whole 3 s, using 3 s of CPU
    that the processes still at work on its node could have had), and both get every
    outcome."""
    rows = _rows("spread_wait.py")
    assert [rows[r]["values"] for r in (0, 1)] == [["slow", "quick"]] * 2
    assert rows[0]["cpu_s"] < 1.0 and rows[1]["cpu_s"] < 1.0, rows


def test_items_go_to_the_process_that_is_free():
    """Rank 1 asks first and gets the first item of the order (3 s); rank 0 runs the quick
    ones from the other end meanwhile (a fixed split would have left half of them to rank 1,
    after its 3 s); every item runs once, and every process gets every outcome in the items'
    order."""
    rows = _rows("spread_deal.py")
    values = rows[0]["values"]
    assert rows[1]["values"] == values
    assert [v[0] for v in values] == ["slow"] + [f"quick{k}" for k in range(10)]
    by_rank = {r: [v[0] for v in values if v[1] == r] for r in (0, 1)}
    assert by_rank[1][:1] == ["slow"] and "slow" not in by_rank[0]
    assert len(by_rank[0]) >= 5, by_rank      # most of the quick ones, during the 2 s


def test_processes_left_without_an_item_fill_and_everyone_hears_the_values():
    """While rank 1 runs the 4 s item, rank 0 (its quick items done) does the filler's work;
    rank 0 hears of every item done, and every process receives every value handed back, in
    rank 0's order: ``auto``'s speculation is the same everywhere."""
    rows = _rows("spread_fill.py")
    quick = [f"quick{k}" for k in range(8)]
    assert rows[0]["values"] == rows[1]["values"] == [["slow", 1]] + [[q, 0] for q in quick]
    assert rows[0]["heard"] == [[q, q] for q in quick] + [["slow", "slow"]]
    assert [b[:1] + b[1][:1] for b in rows[0]["back"]] == [[1, 2], [2, 4], [3, 6]]
    assert rows[1]["back"] == rows[0]["back"]


def test_a_fill_value_that_cannot_travel_is_none_everywhere():
    """Payload 2's work gives a lambda: whichever process ran it, every process hears None
    for it (and the others' values), so ``auto``'s decisions stay the same everywhere."""
    rows = _rows("spread_fill.py", "unpicklable", n=3)
    backs = [[[b[0], None if b[1] is None else b[1][0]] for b in rows[r]["back"]]
             for r in range(3)]
    # the same values in the same order everywhere; the order itself follows which of the
    # two idle processes finished its fill first
    assert backs[0] == backs[1] == backs[2]
    assert sorted(backs[0], key=lambda b: b[0]) == [[1, 2], [2, None], [3, 6]]


def test_a_launcher_of_another_mpi_is_one_error(tmp_path):
    """Under MPICH's mpirun.mpich, mpi4py (built for Open MPI) gives every process a world of
    one: each printed the table and wrote the file (the second then failed on the first's
    file). Rank 0 of the launch says why, once; nothing is written."""
    import shutil
    import subprocess

    import pytest
    _need_mpi()
    if shutil.which("mpirun.mpich") is None:
        message = "needs MPICH's mpirun.mpich (apt-get install mpich)"
        if os.environ.get("RANKMAP_REQUIRE_MPI") == "1":
            pytest.fail(message + " (RANKMAP_REQUIRE_MPI=1)")
        pytest.skip(message)
    probe = subprocess.run([sys.executable, "-c", "from mpi4py import MPI; "
                            "print(MPI.Get_library_version())"], capture_output=True, text=True,
                           timeout=120)
    if "MPICH" in probe.stdout:
        pytest.skip("mpi4py is built for MPICH here: mpirun.mpich is its own launcher")
    out = tmp_path / "m.txt"
    proc = subprocess.run(["mpirun.mpich", "-n", "2", RANKMAP, "map", *SMALL, "--mapping",
                           "inorder", "--emit", "openmpi", "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    errors = [ln for ln in proc.stderr.splitlines() if "error" in ln]
    assert proc.returncode == 2 and not out.exists()
    assert len(errors) == 1 and "mpi4py's MPI sees 1" in errors[0], proc.stderr
    assert proc.stdout == ""
