"""Compiling the shipped SMPI programs with ``smpicc`` into a cache, once per source version.

The cache directory is ``$RANKMAP_CACHE/smpi`` or ``~/.cache/rankmap/smpi``; a binary is
named after its program and a hash of its source, so an edited program is rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from importlib import resources

from ..errors import RankmapError

__all__ = ["INSTALL_HINT", "find_tool", "smpi_available", "cache_dir", "program_source",
           "program_headers", "compiled_program"]

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
    is named after a hash of the source and the shipped headers, so editing either rebuilds.

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
        When the program or compiler is missing, or compilation fails (last error line shown).
    """
    import tempfile

    src, headers = program_source(name, suffix), program_headers()
    digest = hashlib.sha256("\0".join([src, *headers.values()]).encode()).hexdigest()[:16]
    out_dir = cache_dir()
    exe = os.path.join(out_dir, f"{name}-{digest}")
    if os.path.exists(exe):
        return exe
    cc = find_tool(compiler) if compiler == "smpicc" else shutil.which(compiler)
    if not cc:
        raise RankmapError(f"{compiler} not found: install a C++ compiler (apt-get install g++)")
    os.makedirs(out_dir, exist_ok=True)
    tmp = f"{exe}.tmp{os.getpid()}"
    with tempfile.TemporaryDirectory(prefix="rankmap-build-") as work:
        for fname, text in {f"{name}{suffix}": src, **headers}.items():
            with open(os.path.join(work, fname), "w") as fh:
                fh.write(text)
        proc = subprocess.run([cc, "-O2", "-o", tmp, f"{name}{suffix}", *libs], cwd=work,
                              capture_output=True, text=True)
    if proc.returncode != 0:
        raise RankmapError(f"{compiler} failed on {name}{suffix}: "
                           f"{proc.stderr.strip().splitlines()[-1:]}")
    os.replace(tmp, exe)
    return exe
