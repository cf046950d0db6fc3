"""The guarantees of README "Limits and guarantees" that need a real process or files:
temporary files removed on SIGTERM, outputs checked before any work, SimGrid platform and
hostfile naming the same hosts, the same --format on every command that prints results."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

from .harness import problems, run_cli


def test_sigterm_removes_the_temporary_file(tmp_path):
    script = (
        "import os, sys, time\n"
        "from rankmap.io import atomic\n"
        "atomic.install_signal_cleanup()\n"
        "real = os.replace\n"
        "def slow(a, b):\n"
        "    print('writing', flush=True); time.sleep(30); real(a, b)\n"
        "os.replace = slow\n"
        f"atomic.write_atomic({str(tmp_path / 'out.txt')!r}, 'x' * 1000)\n")
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "writing"
    assert [f for f in os.listdir(tmp_path) if f.startswith(".rankmap-")]
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=20) == 128 + signal.SIGTERM
    assert os.listdir(tmp_path) == []


def test_interrupt_is_one_line():
    """Ctrl-C once rankmap's code runs (imports included) is one line and status 130."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    exe = os.path.join(os.path.dirname(sys.executable), "rankmap")
    if not os.path.exists(exe):
        import pytest
        pytest.skip("the rankmap console script is not installed next to python")
    for delay in (0.3, 1.0):
        p = subprocess.Popen([exe, "compare", "-m", "torus:8x8x8", "-p", "stencil:8x8x8"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             env=env)
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        if p.returncode == 0:
            continue  # finished before the signal
        assert p.returncode == 130 and err.strip() == "rankmap: interrupted", err


def test_outputs_refused_before_any_work(tmp_path):
    existing = tmp_path / "plot.png"
    existing.write_text("keep")
    res = run_cli(["compare", "-m", "torus:4x4", "-p", "stencil:4x4", "--plot-dir",
                   str(existing)])
    assert res.code == 2 and res.out == "" and "is a file" in res.err
    counters = tmp_path / "c.csv"
    counters.write_text("src,dim,dir,dst,bytes\n0,0,1,1,5\n1,0,1,0,7\n")
    for cmd in (["counters", str(counters)], ["links", str(counters), "-m", "torus:2"]):
        res = run_cli([*cmd, "--plot", str(existing)])
        assert res.code == 2 and res.out == "" and "exists" in res.err, res.err
    assert existing.read_text() == "keep"
    res = run_cli(["map", "-m", "torus:4x4", "-p", "stencil:4x4", "--mapping", "XYT",
                   "--emit", "slurm", "-o", str(tmp_path / "newdir") + "/"])
    assert res.code == 2 and "newdir/" in res.err and ".rankmap-" not in res.err


def test_simgrid_platform_and_hostfile_name_the_same_hosts(tmp_path):
    plat, hosts = str(tmp_path / "p.xml"), str(tmp_path / "hosts")
    res = run_cli(["simgrid", "platform", "-m", "torus:4x4x2", "-o", plat])
    assert res.code == 0, res.err
    res = run_cli(["map", "-m", "torus:4x4x2", "-p", "stencil:4x8", "--mapping", "XYZT",
                   "--emit", "hostfile", "-o", hosts])
    assert res.code == 0, res.err
    assert "rankmap simgrid platform" in res.out
    xml = open(plat).read()
    m = re.search(r'prefix="([^"]*)" suffix="([^"]*)" radical="0-(\d+)"', xml)
    platform_hosts = {f"{m.group(1)}{i}{m.group(2)}" for i in range(int(m.group(3)) + 1)}
    written = open(hosts).read().split()
    assert len(written) == 32 and set(written) <= platform_hosts
    again = run_cli(["simgrid", "platform", "-m", "torus:4x4x2", "-o", plat])
    assert again.code == 2 and "--force" in again.err


def test_evaluate_takes_the_same_format_option_as_compare():
    base = ["-m", "torus:4x4", "-p", "stencil:4x4"]
    for fmt in ("table", "json", "csv"):
        ev = run_cli(["evaluate", *base, "--mapping", "XYT", "--format", fmt])
        cmp_ = run_cli(["compare", *base, "--mappings", "XYT", "--format", fmt])
        assert ev.code == 0 and cmp_.code == 0 and not problems(ev) and not problems(cmp_)
        if fmt == "csv":
            assert ev.out == cmp_.out
        if fmt == "json":
            assert json.loads(ev.out)["candidates"][0]["mapping"] == "XYT"
