"""Start-up and exit: the top-level parser imports no command module, and its summaries are
the commands' own; the installed script keeps the collector off while the command's modules
load, then freezes what they made, and freezes the collector before the interpreter exits."""

import subprocess
import sys

import pytest

from rankmap.cli import COMMANDS, build_parser, main


def test_summaries_equal_each_command_modules_own_help():
    full = build_parser("*")
    light = build_parser(None)
    (full_sub,) = [a for a in full._actions if a.dest == "command"]
    (light_sub,) = [a for a in light._actions if a.dest == "command"]
    full_help = {c.dest: c.help for c in full_sub._choices_actions}
    light_help = {c.dest: c.help for c in light_sub._choices_actions}
    assert list(full_help) == list(COMMANDS)
    assert light_help == full_help


def test_version_and_every_help_import_no_heavy_module():
    """``rankmap --version``, ``rankmap --help`` and ``rankmap COMMAND --help`` build their
    parsers without numpy, numba, scipy, matplotlib or rich: those load only when a command
    runs (a command's help took 0.5-1.2 s; now a tenth)."""
    code = ("import sys; from rankmap.cli import COMMANDS, main\n"
            "for argv in [['--version'], ['--help']] + [[n, '--help'] for n in COMMANDS]:\n"
            "    try: main(argv)\n"
            "    except SystemExit: pass\n"
            "heavy = [m for m in ('numpy', 'numba', 'scipy', 'matplotlib', 'rich', "
            "'rankmap.machines') if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "HEAVY []" in out
    assert "compare" in out and "validate" in out  # every command listed
    for name in COMMANDS:  # each printed its own help
        assert f"usage: rankmap {name}" in out


def test_the_help_lists_the_formats_the_emitters_write():
    from rankmap.io.emit import EMITTERS
    from rankmap.io.format_names import FORMAT_DESCRIPTIONS

    assert list(EMITTERS) == list(FORMAT_DESCRIPTIONS)
    assert all(e.description == FORMAT_DESCRIPTIONS[e.name] for e in EMITTERS.values())


def test_unknown_command_is_one_line(capsys):
    assert main(["frobnicate"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "frobnicate" in err[0]


def test_the_script_freezes_the_collector_and_keeps_mains_status(monkeypatch):
    """The installed script (pyproject's entry point) runs main, freezes the objects alive out
    of the garbage collector (the interpreter's exit skips its passes over numba's objects)
    and exits with main's status; main itself, as tests call it, never freezes anything."""
    import pathlib
    import tomllib

    import rankmap.cli as cli

    project = pathlib.Path(__file__).resolve().parents[1] / "pyproject.toml"
    scripts = tomllib.loads(project.read_text())["project"]["scripts"]
    assert scripts["rankmap"] == "rankmap.cli:console"
    calls = []
    monkeypatch.setattr(cli, "main", lambda **kw: calls.append(("main", kw)) or 3)
    monkeypatch.setattr(cli.gc, "freeze", lambda: calls.append("freeze"))
    # (this process's own exit must keep its teardown: the handler is recorded, not registered)
    monkeypatch.setattr(cli.atexit, "register", lambda fn, *a: calls.append(("exit", fn, a)))
    with pytest.raises(SystemExit) as exc:
        cli.console()
    assert exc.value.code == 3
    ((_, handler, (status,)), main_call, freeze) = calls
    assert handler is cli._exit_without_teardown and status == [3]
    assert (main_call, freeze) == (("main", {"freeze_loaded": True}), "freeze")


_SCRIPT_EXIT = """
import atexit, os, sys, threading, time
import rankmap.cli as cli

def command(**kw):
    print("OUT")  # a pipe: buffered, flushed only at exit
    import ctypes
    libc = ctypes.CDLL(None)
    c_stdout = ctypes.c_void_p.in_dll(libc, "stdout")
    libc.setvbuf(c_stdout, None, 0, 4096)  # fully buffered, as a C library's output to a pipe
    libc.printf(b"C-OUT ")  # in the C library's buffer: flushed as sys.exit is handled
    atexit.register(lambda: os.write(2, b"HANDLER\\n"))
    def late():
        time.sleep(0.2)
        open(sys.argv[1], "w").write("joined")
    threading.Thread(target=late).start()
    return int(sys.argv[2])

cli.main = command
cli.console()
"""


@pytest.mark.parametrize("status", [0, 2])
def test_the_script_exits_without_teardown_after_threads_handlers_and_output(tmp_path, status):
    """The installed script's exit: non-daemon threads joined, the command's exit handlers
    run, buffered output flushed (a pipe, unbuffered mode off; Python's and the C
    library's), main's status kept."""
    import os
    mark = tmp_path / "thread"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.run([sys.executable, "-c", _SCRIPT_EXIT, str(mark), str(status)],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == status
    assert sorted(proc.stdout.split()) == ["C-OUT", "OUT"]
    assert "HANDLER" in proc.stderr
    assert mark.read_text() == "joined"


def test_the_last_exit_handler_flushes_and_leaves_with_the_status(monkeypatch):
    """``_exit_without_teardown`` flushes stdout and stderr and ends the process with the
    status (os._exit: no teardown); a failed flush of stdout turns 0 into 120, as the
    interpreter's own exit does, and keeps any other status; without a status (main raised)
    or under MPI it does nothing."""
    import rankmap.cli as cli

    class Out:
        def __init__(self, fail):
            self.fail, self.flushed = fail, False

        def flush(self):
            if self.fail:
                raise BrokenPipeError(32, "Broken pipe")
            self.flushed = True

    for fail, status, expected in ((False, 0, 0), (False, 2, 2), (True, 0, 120), (True, 2, 2),
                                   (False, None, None)):
        out, err, left = Out(fail), Out(False), []
        monkeypatch.setattr(cli.sys, "stdout", out)
        monkeypatch.setattr(cli.sys, "stderr", err)
        monkeypatch.setattr(cli.os, "_exit", left.append)
        cli._exit_without_teardown([status])
        if status is None:  # main did not return: the interpreter's own exit goes on
            assert left == [] and not err.flushed and not out.flushed
            continue
        assert left == [expected]
        assert err.flushed and out.flushed is not fail
    # under MPI the interpreter's own exit runs (mpi4py finalises MPI after the teardown)
    left = []
    monkeypatch.setattr(cli.os, "_exit", left.append)
    monkeypatch.setitem(sys.modules, "mpi4py.MPI", object())
    cli._exit_without_teardown([0])
    assert left == []


@pytest.mark.parametrize("freeze_loaded", [False, True])
def test_the_collector_is_off_only_while_the_commands_modules_load(monkeypatch, freeze_loaded):
    """With ``freeze_loaded`` the collector is off while the parser (and so the command's
    modules) is built, what loaded is frozen, and the collector is on again for the command
    itself; without it (tests, library callers) the collector is never touched."""
    import gc

    import rankmap.cli as cli

    seen = {}
    real_build = cli.build_parser

    def build(only):
        seen["loading"] = gc.isenabled()
        return real_build(only)

    freezes = []
    monkeypatch.setattr(cli, "build_parser", build)
    monkeypatch.setattr(cli.gc, "freeze", lambda: freezes.append(gc.isenabled()))
    assert gc.isenabled()
    assert cli.main(["nodes", "--machine", "torus:2x2"], freeze_loaded=freeze_loaded) == 0
    assert gc.isenabled()
    assert seen["loading"] is not freeze_loaded
    assert freezes == ([False] if freeze_loaded else [])


def test_the_collector_is_on_again_after_a_failed_load(monkeypatch):
    import gc

    import rankmap.cli as cli

    def broken(only):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", broken)
    monkeypatch.setattr(cli.gc, "freeze", lambda: None)
    assert cli.main(["compare"], freeze_loaded=True) == 130
    assert gc.isenabled()


def test_the_installed_script_prints_and_exits_as_main_says(tmp_path):
    import os

    exe = os.path.join(os.path.dirname(sys.executable), "rankmap")
    if not os.path.exists(exe):
        pytest.skip("no installed rankmap script next to this Python (pip install -e .)")
    ok = subprocess.run([exe, "compare", "-m", "torus:4x4", "-p", "stencil:4x4", "--mappings",
                         "inorder", "--format", "csv"], capture_output=True, text=True,
                        cwd=tmp_path)
    assert ok.returncode == 0 and ok.stdout.startswith("mapping,") and ok.stderr == ""
    bad = subprocess.run([exe, "compare", "-m", "torus:4x4", "-p", "stencil:4x4:nope"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "nope" in bad.stderr


def _run_python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout


def test_a_default_compare_loads_neither_scipy_sparse_nor_scipy_linalg():
    """The default path needs neither: scipy.sparse loads only in the functions that build
    matrices, and numba's BLAS probe does not run while kernels only load (numba's array
    modules are not imported, rankmap.kernels.jit); when it runs, it is answered without
    scipy.linalg (the finder then leaves sys.meta_path); scipy.linalg still loads for whoever
    asks afterwards."""
    code = ("import sys; from rankmap.cli import main\n"
            "from rankmap.kernels.blas_probe import BlasProbeFinder\n"
            "assert main(['compare', '-m', 'torus:4x4x4', '-p', 'stencil:4x4x4:box',"
            " '--mappings', 'TXYZ']) == 0\n"
            "print('LOADED', [m for m in ('scipy.sparse', 'scipy.linalg') if m in sys.modules])\n"
            "print('PROBED', 'numba.np.arraymath' in sys.modules)\n"
            "import numba.np.arraymath as am\n"
            "print('FINDERS', [f for f in sys.meta_path if isinstance(f, BlasProbeFinder)])\n"
            "print('BLAS', am._HAVE_BLAS)\n"
            "import scipy.linalg, scipy.stats\n"
            "print('SOLVE', scipy.linalg.solve([[2.0]], [4.0]))\n")
    out = _run_python(code)
    assert "LOADED []" in out and "PROBED False" in out
    assert "FINDERS []" in out
    assert "BLAS False" in out
    assert "SOLVE [2.]" in out


def test_the_blas_probe_finder_refuses_nobody_else():
    """Installed, the finder lets any other import of scipy.linalg through and stays for the
    probe; it is not installed twice, nor once the probe has run."""
    code = ("import sys\n"
            "from rankmap.kernels.blas_probe import BlasProbeFinder, decline_blas_probe\n"
            "finder = decline_blas_probe()\n"
            "print('AGAIN', decline_blas_probe())\n"
            "import scipy.linalg\n"
            "print('STAYS', finder in sys.meta_path)\n"
            "import numba.np.arraymath as am\n"
            "print('BLAS', am._HAVE_BLAS, 'AFTER', decline_blas_probe())\n")
    out = _run_python(code)
    assert "AGAIN None" in out
    assert "STAYS True" in out
    assert "BLAS True AFTER None" in out


def test_a_system_exit_inside_main_keeps_its_status():
    """A ``SystemExit`` raised inside main (an MPI worker's, a signal handler's) leaves
    through the interpreter's own exit, with that exit's status."""
    script = ("import rankmap.cli as cli\n"
              "def command(**kw):\n"
              "    raise SystemExit(5)\n"
              "cli.main = command\n"
              "cli.console()\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 5


@pytest.mark.parametrize("argv", [["compare", "-m", "torus:4x4", "-p", "stencil:4x4",
                                   "--mappings", "TXY"], ["--version"]])
def test_a_closed_stdout_is_one_line_and_status_2(argv):
    """``rankmap ... >&-``: Python gives no stdout, and print() would drop the results while
    the command said 0: it is an error naming the closed stream, as GNU tools report a write
    error, with no traceback."""
    import os

    proc = subprocess.run([sys.executable, "-c", "import sys; from rankmap.cli import console;"
                           " sys.argv[0] = 'rankmap'; console()", *argv],
                          stderr=subprocess.PIPE, text=True, timeout=300,
                          preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == ("rankmap: error: standard output is closed: nowhere to "
                                   "print the results")


def test_a_warning_is_one_line_naming_the_command(monkeypatch, capsys):
    """A warning raised inside a command prints 'rankmap CMD: warning: ...' on one line,
    never Python's file:line and source line."""
    import warnings

    from rankmap.cli import main, nodes

    def warn_then_run(args, run=nodes.run):
        warnings.warn("rankmap: ranks not reordered:\n  this host is not a node", UserWarning)
        return run(args)
    monkeypatch.setattr(nodes, "run", warn_then_run)
    assert main(["nodes", "-m", "torus:2", "--format", "json"]) == 0
    err = capsys.readouterr().err
    assert err == "rankmap nodes: warning: ranks not reordered: this host is not a node\n"


@pytest.mark.parametrize("stop,code,said", [(SystemExit(143), 143, ""),
                                            (KeyboardInterrupt(), 130,
                                             "rankmap: interrupted\n")])
def test_a_signal_inside_a_compiled_kernel_ends_as_the_signal_says(monkeypatch, capsys, stop,
                                                                   code, said):
    """SIGTERM's SystemExit (or Ctrl-C) raised while a kernel's dispatcher calls back into
    Python reaches main as the dispatcher's SystemError: the status is the signal's, with
    no traceback."""
    from rankmap.cli import main, nodes

    def interrupted(args):
        try:
            raise stop
        except BaseException as inner:
            raise SystemError("KernelDispatcher(...) returned a result with an exception "
                              "set") from inner
    monkeypatch.setattr(nodes, "run", interrupted)
    assert main(["nodes", "-m", "torus:2"]) == code
    assert capsys.readouterr().err == said


def test_any_other_system_error_is_not_swallowed(monkeypatch):
    from rankmap.cli import main, nodes

    def broken(args):
        raise SystemError("a real bug")
    monkeypatch.setattr(nodes, "run", broken)
    with pytest.raises(SystemError, match="a real bug"):
        main(["nodes", "-m", "torus:2"])


def test_one_process_commands_run_on_rank_0_of_an_mpi_launch(monkeypatch, capsys):
    """Under 'mpirun -n 2', nodes (study, counters, ...) runs on rank 0 only, which says so;
    the other rank ends at once with nothing printed."""
    from rankmap.cli import main
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    assert main(["nodes", "-m", "torus:2"]) == 0
    assert capsys.readouterr() == ("", "")
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "0")
    assert main(["nodes", "-m", "torus:2"]) == 0
    out, err = capsys.readouterr()
    assert "node1" in out
    assert err == "rankmap nodes: runs in one process: the other 1 of this MPI launch did nothing\n"


def test_python_dash_m_runs_the_command():
    """python -m rankmap is the rankmap command: its version, and a bad value's one line and
    status 2."""
    import subprocess
    import sys
    ok = subprocess.run([sys.executable, "-m", "rankmap", "--version"], capture_output=True,
                        text=True, timeout=120)
    assert ok.returncode == 0 and ok.stdout.startswith("rankmap ")
    bad = subprocess.run([sys.executable, "-m", "rankmap", "compare", "-m", "torus:2x2", "-p",
                          "stencil:2x2:times=0", "--mappings", "XYT"], capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0
    assert "times=" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("exiting", [True, False])
def test_a_sigterm_in_the_exit_functions_is_no_traceback(exiting):
    """Under mpirun a failing rank makes the launcher SIGTERM the others, which may be in
    the interpreter's exit functions by then: once the command has returned (the script
    calls mark_exiting) the handler ends the process with 143 instead of raising."""
    code = ("import atexit, os, signal\n"
            "from rankmap.io.atomic import install_signal_cleanup, mark_exiting\n"
            "install_signal_cleanup()\n"
            "atexit.register(lambda: os.kill(os.getpid(), signal.SIGTERM))\n"
            + ("mark_exiting()\n" if exiting else ""))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if exiting:
        assert proc.returncode == 143 and proc.stderr == ""
    else:   # what it was: Python prints the SystemExit raised in an exit function
        assert "Exception ignored in atexit callback" in proc.stderr
