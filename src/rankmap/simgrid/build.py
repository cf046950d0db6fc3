"""Compiling the shipped SMPI programs with ``smpicc`` into a cache, once per source version.

The cache directory is ``$RANKMAP_CACHE/smpi`` or ``~/.cache/rankmap/smpi``; a binary is
named after its program and a hash of its source and its compiler (path and ``-show`` line),
so an edited program, or another SimGrid, is rebuilt; a binary whose bytes changed since it
was built (:mod:`rankmap.io.sealed`) is rebuilt too.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from importlib import resources

from ..errors import RankmapError

__all__ = ["INSTALL_HINT", "COMPILE_TIMEOUT_S", "find_tool", "smpi_available", "cache_dir",
           "program_source", "program_headers", "compiled_program"]

#: most seconds one compile of a shipped program may take
COMPILE_TIMEOUT_S = 300

INSTALL_HINT = ("SimGrid SMPI is not installed: install it with 'apt-get install "
                "libsimgrid-dev simgrid' (Debian/Ubuntu), which provides smpicc and smpirun")


def find_tool(name: str) -> str:
    """Path of an SMPI tool (``smpicc``/``smpirun``) on PATH.

    Parameters
    ----------
    name : str
        The tool's command name.

    Returns
    -------
    str
        Its full path.

    Raises
    ------
    RankmapError
        When the tool is absent (the message says what to install).
    """
    path = shutil.which(name)
    if not path:
        raise RankmapError(f"{name} not found. {INSTALL_HINT}")
    return path


def smpi_available() -> bool:
    """Whether both smpicc and smpirun are on PATH.

    Returns
    -------
    bool
        True when SMPI programs can be compiled and run.
    """
    return bool(shutil.which("smpicc") and shutil.which("smpirun"))


def cache_dir() -> str:
    """Directory holding compiled SMPI programs (created on demand).

    Returns
    -------
    str
        ``$RANKMAP_CACHE/smpi``, else ``$XDG_CACHE_HOME/rankmap/smpi`` (default
        ``~/.cache/rankmap/smpi``).
    """
    base = os.environ.get("RANKMAP_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "rankmap")
    return os.path.join(base, "smpi")


def program_source(name: str, suffix: str = ".c") -> str:
    """Text of the shipped program ``programs/<name><suffix>``.

    Parameters
    ----------
    name : str
        Program name, e.g. ``flows``.
    suffix : str, optional
        Source suffix (``.c`` for SMPI programs, ``.cpp`` for s4u tools).

    Returns
    -------
    str
        The source text.

    Raises
    ------
    RankmapError
        When no such program is shipped.
    """
    ref = resources.files(__package__).joinpath("programs", f"{name}{suffix}")
    if not ref.is_file():
        raise RankmapError(f"no SMPI program named {name!r}")
    return ref.read_text()


def program_headers() -> dict[str, str]:
    """The shipped headers ``programs/*.h`` the programs include.

    Returns
    -------
    dict of str to str
        Header file name -> its text, sorted by name.
    """
    folder = resources.files(__package__).joinpath("programs")
    return {ref.name: ref.read_text() for ref in sorted(folder.iterdir(), key=lambda r: r.name)
            if ref.name.endswith(".h")}


def compiled_program(name: str, suffix: str = ".c", compiler: str = "smpicc",
                     libs: tuple[str, ...] = ()) -> str:
    """Path of the compiled program ``programs/<name><suffix>``, compiled on first use.

    MPI programs (``.c``) are compiled with ``smpicc``; the SimGrid tools written against
    the s4u API (``.cpp``) with ``compiler="c++"`` and ``libs=("-lsimgrid",)``. The binary
    is named after a hash of the source, the shipped headers and the compiler, so changing
    any of them rebuilds; a cached binary that no longer has the bytes it was built with is
    rebuilt.

    Parameters
    ----------
    name : str
        Program name, e.g. ``flows``.
    suffix : str, optional
        Source suffix.
    compiler : str, optional
        Compiler command (``smpicc`` or a C++ compiler).
    libs : tuple of str, optional
        Extra linker arguments.

    Returns
    -------
    str
        Path of the cached executable.

    Raises
    ------
    RankmapError
        When the program or compiler is missing, or compilation fails (its first error line
        shown) or takes more than :data:`COMPILE_TIMEOUT_S`.
    """
    import tempfile

    from ..io.sealed import first_error_line, seal, usable

    src, headers = program_source(name, suffix), program_headers()
    cc = find_tool(compiler) if compiler == "smpicc" else shutil.which(compiler)
    if not cc:
        raise RankmapError(f"{compiler} not found: install a C++ compiler (apt-get install g++)")
    # the compiler is part of the key: another SimGrid (or compiler) builds its own binary
    digest = hashlib.sha256("\0".join([os.path.realpath(cc), _identity(cc, compiler), *libs,
                                       src, *headers.values()]).encode()).hexdigest()[:16]
    out_dir = cache_dir()
    exe = os.path.join(out_dir, f"{name}-{digest}")
    if usable(exe):         # a binary cut short or changed since it was built is built again
        return exe
    os.makedirs(out_dir, exist_ok=True)
    tmp = f"{exe}.tmp{os.getpid()}"
    with tempfile.TemporaryDirectory(prefix="rankmap-build-") as work:
        for fname, text in {f"{name}{suffix}": src, **headers}.items():
            with open(os.path.join(work, fname), "w") as fh:
                fh.write(text)
        try:
            proc = subprocess.run([cc, "-O2", "-o", tmp, f"{name}{suffix}", *libs], cwd=work,
                                  capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise RankmapError(f"{compiler} did not finish {name}{suffix} in "
                               f"{COMPILE_TIMEOUT_S} s") from None
        except OSError as exc:
            raise RankmapError(f"{compiler} failed on {name}{suffix}: {exc}") from None
    if proc.returncode != 0:
        why = first_error_line(proc.stderr) or f"exit status {proc.returncode}, no message"
        raise RankmapError(f"{compiler} failed on {name}{suffix}: {why}")
    os.replace(tmp, exe)
    seal(exe)
    return exe


def _identity(cc: str, compiler: str) -> str:
    """What the compiler is beyond its path: smpicc's ``-show`` line (SimGrid's flags and
    libraries), another compiler's ``--version``; empty when it cannot say."""
    try:
        proc = subprocess.run([cc, "-show" if compiler == "smpicc" else "--version"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""
