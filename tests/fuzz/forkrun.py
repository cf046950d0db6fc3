"""A fork server for the long fuzz profile: import rankmap and the command line once, then run
every input in a fresh ``os.fork()`` child, as isolated as a new process but without paying
Python's and numba's start-up for each input.

Each child gets a fresh process state (its own memory, environment, signal handlers, file
descriptors) and the limits a user's process would hit: an address-space limit
(``RLIMIT_AS``), a CPU-time limit (``RLIMIT_CPU``, a hang) and a wall-clock limit (the parent
kills it). stdout and stderr are anonymous in-memory files (``memfd``), stdin is /dev/null. The
child calls ``rankmap.cli.main(argv)`` the way the console script does (an exception that
escapes is printed as a traceback and gives status 1, like the interpreter) and leaves with
``os._exit``. The parent reads the exit status (or the signal that killed the child) and the
output, and :func:`rankmap_entry_point` runs the real installed ``rankmap`` script for the sample
of inputs that is checked both ways.
"""

from __future__ import annotations

import faulthandler
import gc
import importlib
import io
import os
import pkgutil
import resource
import select
import signal
import subprocess
import sys
import traceback
import warnings

from .harness import Result

__all__ = ["ForkServer", "rankmap_entry_point", "run_entry_point"]

#: CPU seconds an input may use before it counts as a hang (the hangs of issue 15 ran for
#: minutes; the slowest valid input of the generators takes a few seconds).
CPU_LIMIT_S = int(os.environ.get("RANKMAP_FUZZ_CPU", "60"))
#: wall-clock seconds before the parent kills a child (a child blocked without using CPU).
WALL_LIMIT_S = float(os.environ.get("RANKMAP_FUZZ_WALL", "900"))
#: address-space limit of every child (bytes).
MEMORY_LIMIT = int(os.environ.get("RANKMAP_FUZZ_MEMORY", str(8 << 30)))
#: bytes of stdout/stderr read per input (all of any output the generators can cause: a
#: cut JSON document would be reported as invalid JSON).
OUTPUT_CAP = 1 << 30


def preload() -> int:
    """Import every module of ``rankmap`` (so children never read code from disk, and a long
    run keeps testing the code it started with even if the source tree changes meanwhile).

    Returns
    -------
    int
        Number of modules imported.
    """
    # one BLAS thread before numpy loads, as the command line asks (rankmap.threads): the
    # children's sums must be the installed script's
    from rankmap.threads import limit_blas_threads

    limit_blas_threads()
    import rankmap

    n = 0
    for info in pkgutil.walk_packages(rankmap.__path__, "rankmap."):
        try:
            importlib.import_module(info.name)
            n += 1
        except Exception:  # noqa: BLE001 - optional extras (mpi4py, matplotlib backends)
            pass
    return n


def _print_warning(message, category, filename, lineno, file=None, line=None):
    """Print a warning on stderr as a fresh interpreter does (pytest records them instead)."""
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _read(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks, left = [], OUTPUT_CAP
    while left > 0:
        b = os.read(fd, min(left, 1 << 20))
        if not b:
            break
        chunks.append(b)
        left -= len(b)
    return b"".join(chunks).decode("utf-8", "backslashreplace")


class ForkServer:
    """Runs ``rankmap.cli.main(argv)`` in forked children.

    Parameters
    ----------
    memory : int
        Address-space limit of a child (bytes).
    cpu : int
        CPU-time limit of a child (seconds); a child past it is a hang.
    wall : float
        Wall-clock limit (seconds); the parent kills a child past it.
    warm : list of list of str, optional
        Command lines run once in the parent before any fork, so numba kernels are compiled
        (or loaded from the cache) once and inherited by every child.
    """

    def __init__(self, memory: int = MEMORY_LIMIT, cpu: int = CPU_LIMIT_S,
                 wall: float = WALL_LIMIT_S, warm: list[list[str]] | None = None):
        self.memory, self.cpu, self.wall = memory, cpu, wall
        preload()
        from rankmap.cli import main
        self._main = main
        for argv in warm or []:
            # outputs of the warm-up are thrown away; only compiled kernels are kept
            with open(os.devnull, "w") as null:
                saved = sys.stdout, sys.stderr
                sys.stdout = sys.stderr = null
                try:
                    main(list(argv))
                except BaseException:  # noqa: BLE001 - the warm-up only compiles kernels
                    pass
                finally:
                    sys.stdout, sys.stderr = saved
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        gc.collect()
        gc.freeze()  # the children's collector never touches (and copies) the parent's objects

    def _child(self, argv: list[str], env: dict | None, cwd: str | None,
               out_fd: int, err_fd: int) -> None:
        code = 1
        try:
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGALRM, signal.SIGXCPU):
                signal.signal(sig, signal.SIG_DFL)
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as the interpreter sets it up
            signal.signal(signal.SIGINT, signal.default_int_handler)
            faulthandler.disable()  # off in a fresh interpreter (pytest turns it on)
            resource.setrlimit(resource.RLIMIT_AS, (self.memory, self.memory))
            resource.setrlimit(resource.RLIMIT_CPU, (self.cpu, self.cpu + 5))
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out_fd, 1)
            os.dup2(err_fd, 2)
            # as in a fresh interpreter whose stdout/stderr are files, not a terminal
            sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
            sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                                          errors="strict")
            sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                          errors="backslashreplace", line_buffering=True)
            if cwd:
                os.chdir(cwd)
            os.environ.update(env or {})
            sys.argv = [rankmap_entry_point(), *argv]
            warnings.resetwarnings()
            warnings.simplefilter("default")  # an interpreter's default: each warning shown
            warnings.showwarning = _print_warning  # even if the server runs under pytest
            try:
                code = self._main(list(argv))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (
                    0 if exc.code is None else (print(exc.code, file=sys.stderr) or 1))
            except BaseException:  # noqa: BLE001 - printed as the interpreter would
                traceback.print_exc()
                code = 1
            try:
                sys.stdout.flush()
            except BaseException:  # noqa: BLE001 - the interpreter says so and exits 120
                traceback.print_exc()
                code = 120
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001 - never return into the parent's stack
            try:
                os.write(2, traceback.format_exc().encode())
            except OSError:
                pass
        finally:
            os._exit(code & 0xFF if isinstance(code, int) else 1)

    def run(self, argv: list[str], env: dict | None = None, cwd: str | None = None) -> Result:
        """Run one command line in a forked child.

        Parameters
        ----------
        argv : list of str
            Arguments after ``rankmap``.
        env : dict, optional
            Extra environment variables of the child.
        cwd : str, optional
            Working folder of the child.

        Returns
        -------
        Result
            Exit status (None when killed), stdout, stderr, and ``crash`` set for a traceback,
            a hang or a child killed by a signal.
        """
        out_fd = os.memfd_create("rankmap-fuzz-out")
        err_fd = os.memfd_create("rankmap-fuzz-err")
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                self._child(argv, env, cwd, out_fd, err_fd)
            crash = None
            pidfd = os.pidfd_open(pid)
            try:
                ready, _, _ = select.select([pidfd], [], [], self.wall)
            finally:
                os.close(pidfd)
            if not ready:
                os.kill(pid, signal.SIGKILL)
                crash = f"hang: more than {self.wall:.0f} s of wall-clock time"
            _, status, usage = os.wait4(pid, 0)
            out, err = _read(out_fd), _read(err_fd)
        finally:
            os.close(out_fd)
            os.close(err_fd)
        code = os.waitstatus_to_exitcode(status)
        if code < 0 and crash is None:
            sig = signal.Signals(-code)
            crash = (f"hang: more than {self.cpu} s of CPU time" if sig == signal.SIGXCPU
                     else f"killed by {sig.name}")
        if crash is None and ("Traceback (most recent call last)" in err
                              or "MemoryError" in err):
            crash = err
        return Result(list(argv), code if code >= 0 else None, out, err, crash,
                      cpu_s=usage.ru_utime + usage.ru_stime)


def rankmap_entry_point() -> str:
    """Path of the installed ``rankmap`` console script (beside the running interpreter)."""
    return os.path.join(os.path.dirname(sys.executable), "rankmap")


def run_entry_point(argv: list[str], env: dict | None = None, cwd: str | None = None,
                    memory: int = MEMORY_LIMIT, cpu: int = CPU_LIMIT_S,
                    wall: float = WALL_LIMIT_S) -> Result:
    """Run the installed ``rankmap`` script in a real subprocess under the same limits as
    :class:`ForkServer` children.

    Parameters
    ----------
    argv : list of str
        Arguments after ``rankmap``.
    env : dict, optional
        Extra environment variables.
    cwd : str, optional
        Working folder.
    memory, cpu, wall
        Address-space limit (bytes), CPU-time limit (s), wall-clock limit (s).

    Returns
    -------
    Result
    """
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))

    try:
        p = subprocess.run([rankmap_entry_point(), *argv], capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=wall,
                           env={**os.environ, **(env or {})}, preexec_fn=limit, cwd=cwd)
    except subprocess.TimeoutExpired:
        return Result(list(argv), None, "", "", f"hang: more than {wall:.0f} s of wall-clock time")
    out = p.stdout[:OUTPUT_CAP].decode("utf-8", "backslashreplace")
    err = p.stderr[:OUTPUT_CAP].decode("utf-8", "backslashreplace")
    crash = None
    if p.returncode < 0:
        sig = signal.Signals(-p.returncode)
        crash = (f"hang: more than {cpu} s of CPU time" if sig == signal.SIGXCPU
                 else f"killed by {sig.name}")
    elif "Traceback (most recent call last)" in err or "MemoryError" in err:
        crash = err
    return Result(list(argv), p.returncode if p.returncode >= 0 else None, out, err, crash)
