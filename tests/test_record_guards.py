"""``rankmap record``'s guards around the program it runs: interrupted, it stops the
launcher so that the launcher stops the program's processes (a SIGKILL, as ``subprocess.run``
sent, left them running without a parent); a bad RANKMAP_REORDER is refused before the run.

The first test is skipped, with what to install, when mpirun or mpi4py is missing, unless
RANKMAP_REQUIRE_MPI=1.
"""

import os
import signal
import subprocess
import sys
import time

from test_mpi_run import _need_mpi


def _running(command: str) -> list[int]:
    """Processes whose whole command line is ``command`` (read from /proc: no pgrep needed)."""
    want = command.split()
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                args = fh.read().decode(errors="replace").split("\0")[:-1]
        except OSError:
            continue
        if args == want:
            found.append(int(pid))
    return found


def test_a_sigterm_to_record_stops_the_program_it_runs(tmp_path):
    _need_mpi()
    marker = "97.125"                # a sleep of this length is this test's program
    launcher = ["mpirun", "--oversubscribe", "-n", "2"]
    if os.geteuid() == 0:
        launcher.append("--allow-run-as-root")
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from rankmap.cli import main; "
                             "sys.exit(main())", "record", "-o", str(tmp_path / "r.csv"), "--",
                             *launcher, "sleep", marker], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120      # the library may be compiled first
        while len(_running(f"sleep {marker}")) < 2 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        assert len(_running(f"sleep {marker}")) == 2
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
        assert proc.returncode == 128 + signal.SIGTERM
        deadline = time.monotonic() + 20
        while _running(f"sleep {marker}") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _running(f"sleep {marker}") == []
    finally:
        for pid in _running(f"sleep {marker}"):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
    assert not (tmp_path / "r.csv").exists()
    assert [p for p in os.listdir(tmp_path) if p.startswith(".rankmap")] == []


def test_a_bad_reorder_variable_is_refused_before_the_run(tmp_path, monkeypatch, capsys):
    """RANKMAP_REORDER goes to the job (=1 reorders while recording): 'disabled' was read by
    the library as on, and the program's ranks reordered during the recording."""
    from rankmap.cli import main
    monkeypatch.setenv("RANKMAP_REORDER", "disabled")
    assert main(["record", "-o", str(tmp_path / "r.csv"), "--", "mpirun", "-n", "2",
                 "./nonexistent"]) == 2
    assert "bad RANKMAP_REORDER='disabled'" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []
