"""The fork server of ``make fuzz`` catches every way a command can break the contract: each
failure is injected into the real ``rankmap`` command line (a function every successful command
calls is replaced in the server before it forks) and must be reported by
:func:`harness.problems`; an untouched command gives the same result in a forked child as from
the installed ``rankmap`` script in a real subprocess."""

from __future__ import annotations

import os
import signal
import sys
import time
import warnings

import pytest

from rankmap.cli import notes
from rankmap.errors import RankmapError

from .forkrun import ForkServer, run_entry_point
from .harness import problems

ARGV = ["nodes", "-m", "torus:2x2", "--format", "json"]
COMPARE = ["compare", "-m", "torus:4x4", "-p", "stencil:4x4", "--mappings", "inorder,XYT",
           "--format", "csv"]


@pytest.fixture(scope="module")
def server():
    # warmed up as make fuzz's server is: with a cold numba cache (a fresh clone, as in CI)
    # compiling the kernels alone would use up a child's 3 s of CPU
    return ForkServer(memory=2 << 30, cpu=3, wall=120, warm=[ARGV, COMPARE])


def _inject(monkeypatch, action):
    """Make every successful command run ``action`` at its end (in the children only: the
    server forks after the patch)."""
    monkeypatch.setattr(notes, "flush_notes", lambda file=None: action())


def _raise(exc):
    raise exc


def _loop():
    while True:
        pass


def _second_line():
    print("rankmap: a stray line", file=sys.stderr)
    raise RankmapError("bad thing")


INJECTED = {
    "traceback": (lambda: 1 / 0, "escaped: ZeroDivisionError"),
    "hang (CPU)": (_loop, "hang: more than 3 s of CPU time"),
    "memory blow-up": (lambda: bytearray(3 << 30), "out of memory"),
    "leaked warning": (lambda: warnings.warn("overflow in exp", RuntimeWarning),
                       "warning leaked"),
    "two stderr lines": (_second_line, "exit 2 with 2 lines"),
    "crash by a signal": (lambda: os.kill(os.getpid(), signal.SIGSEGV), "killed by SIGSEGV"),
    "KeyboardInterrupt": (lambda: _raise(KeyboardInterrupt()), "exit status 130"),
    "NaN": (lambda: print("busiest link nan ms"), "NaN or infinity"),
    "exit 1": (lambda: _raise(SystemExit(1)), "exit status 1"),
}


@pytest.mark.parametrize("name", list(INJECTED))
def test_injected_failure_is_caught(server, monkeypatch, name):
    action, expected = INJECTED[name]
    _inject(monkeypatch, action)
    res = server.run(ARGV)
    found = problems(res)
    assert any(expected in p for p in found), (name, found, res.err[-500:])


def test_wall_clock_hang_is_caught(monkeypatch):
    quick = ForkServer(memory=2 << 30, cpu=30, wall=1.5)
    _inject(monkeypatch, lambda: time.sleep(60))
    start = time.monotonic()
    res = quick.run(ARGV)
    assert time.monotonic() - start < 30
    assert any("hang: more than 2 s of wall-clock time" in p for p in problems(res))


def test_server_state_does_not_leak_between_children(server, tmp_path):
    """A child's environment, working folder and output files stay its own."""
    out = tmp_path / "p.xml"
    argv = ["simgrid", "platform", "-m", "torus:2x2", "-o", str(out)]
    first = server.run(argv, env={"RANKMAP_MAX_NODES": "2"})
    assert first.code == 2 and "RANKMAP_MAX_NODES" in first.err
    assert "RANKMAP_MAX_NODES" not in os.environ
    second = server.run(argv)
    assert second.code == 0 and out.exists() and not problems(second, str(tmp_path))
    again = server.run(argv)  # the file exists now: refused without --force
    assert again.code == 2 and "--force" in again.err


def test_fork_server_agrees_with_the_rankmap_script(server, tmp_path):
    script = os.path.join(os.path.dirname(sys.executable), "rankmap")
    if not os.path.exists(script):
        pytest.skip("the rankmap console script is not installed next to python")
    for argv in (ARGV, COMPARE, ["compare", "-m", "torus:4x4:bw=1e400", "-p", "stencil:4x4"]):
        forked, real = server.run(argv), run_entry_point(argv)
        assert (forked.code, forked.out, forked.err) == (real.code, real.out, real.err)
        assert not problems(forked) and not problems(real)


def test_large_output_is_read_whole(server):
    """A result of several MiB reaches the checks whole (a cut JSON document would be
    reported as invalid JSON: found by make fuzz with `nodes -m mesh:2x4x65537`)."""
    import json
    res = ForkServer.run(server, ["nodes", "-m", "torus:300x300", "--format", "json"])
    assert res.code == 0 and len(res.out) > 4 << 20 and not problems(res)
    assert len(json.loads(res.out)) == 90_000
