"""Compiling the shipped PMPI library with the MPI's own ``mpicc``, once per source version.

The library is ``<cache>/pmpi/<key>/librankmap_pmpi.so`` where ``<cache>`` is
``$RANKMAP_CACHE`` or ``~/.cache/rankmap`` and ``<key>`` hashes the C sources, the compiler's
path and its ``-show`` output (the MPI's include and library flags), so each MPI installation
(Open MPI, MPICH, ...) gets its own build matching its ABI.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from importlib import resources

from ..errors import RankmapError

__all__ = ["LIBRARY_NAME", "MPICC_ENV", "INSTALL_HINT", "sources", "find_mpicc", "cache_root",
           "library_path"]

LIBRARY_NAME = "librankmap_pmpi.so"
MPICC_ENV = "RANKMAP_MPICC"
INSTALL_HINT = ("install an MPI with its compiler wrapper (Debian/Ubuntu: apt-get install "
                "openmpi-bin libopenmpi-dev) or name it with --mpicc / $RANKMAP_MPICC")


def sources() -> dict[str, str]:
    """The shipped C sources and headers of the PMPI library, sorted by name.

    Returns
    -------
    dict of str to str
        File name (``*.c``, ``*.h``) -> its text.
    """
    folder = resources.files(__package__)
    return {ref.name: ref.read_text() for ref in sorted(folder.iterdir(), key=lambda r: r.name)
            if ref.name.endswith((".c", ".h"))}


def find_mpicc(mpicc: str | None = None) -> str:
    """Path of the MPI compiler wrapper: ``mpicc`` argument, ``$RANKMAP_MPICC``, else mpicc.

    Parameters
    ----------
    mpicc : str, optional
        Name or path of the wrapper; overrides ``$RANKMAP_MPICC``.

    Returns
    -------
    str
        The wrapper's full path (found on ``$PATH``).

    Raises
    ------
    RankmapError
        When ``mpicc`` is empty, or the wrapper is not found (the message says what to
        install).
    """
    if mpicc is not None and not mpicc.strip():
        raise RankmapError(f"--mpicc {mpicc!r}: give the MPI C compiler wrapper's name or path "
                           "(mpicc, mpicc.mpich, ...), or leave the option out for the default")
    name = mpicc or os.environ.get(MPICC_ENV, "").strip() or "mpicc"
    path = shutil.which(name)
    if not path:
        raise RankmapError(f"MPI compiler {name!r} not found: {INSTALL_HINT}")
    return path


def _show(cc: str) -> str:
    """The wrapper's underlying command line (Open MPI and MPICH both know ``-show``)."""
    try:
        proc = subprocess.run([cc, "-show"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RankmapError(f"{cc} -show failed: {exc}") from None
    return proc.stdout.strip() if proc.returncode == 0 else ""


def cache_root() -> str:
    """Directory holding built libraries (created on demand).

    Returns
    -------
    str
        ``$RANKMAP_CACHE/pmpi``, else ``$XDG_CACHE_HOME/rankmap/pmpi`` (default
        ``~/.cache/rankmap/pmpi``).
    """
    base = os.environ.get("RANKMAP_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "rankmap")
    return os.path.join(base, "pmpi")


def _cache_origin() -> str:
    """Which setting chose the cache folder, for error messages (``RANKMAP_CACHE='/x'``)."""
    for name in ("RANKMAP_CACHE", "XDG_CACHE_HOME"):
        if os.environ.get(name):
            return f"{name}={os.environ[name]!r}"
    return "the default ~/.cache/rankmap; set RANKMAP_CACHE to choose another"


def library_path(mpicc: str | None = None, rebuild: bool = False) -> str:
    """Path of the PMPI library for this MPI, compiled on first use (or again with rebuild).

    Parameters
    ----------
    mpicc : str, optional
        MPI C compiler wrapper (default ``$RANKMAP_MPICC`` or ``mpicc``).
    rebuild : bool
        Compile even when the cached library exists.

    Returns
    -------
    str
        Absolute path of ``librankmap_pmpi.so``.

    Raises
    ------
    RankmapError
        When the compiler is empty, missing or fails, or the cache folder cannot be made
        (naming the setting that chose it).
    """
    cc = find_mpicc(mpicc)
    src = sources()
    # the wrapper's real file: mpicc and mpicc.openmpi are one compiler and share one build
    # (its -show line tells a C wrapper from a C++ one behind the same file)
    key = hashlib.sha256("\0".join([os.path.realpath(cc), _show(cc), *src,
                                     *src.values()]).encode())
    out_dir = os.path.join(cache_root(), key.hexdigest()[:16])
    lib = os.path.join(out_dir, LIBRARY_NAME)
    from ..io.sealed import first_error_line, seal, usable

    if not rebuild and usable(lib):     # a library changed since it was built is built again
        return lib
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise RankmapError(f"cannot create the library's folder {out_dir!r} "
                           f"({_cache_origin()}): {exc.strerror or exc}") from None
    tmp = f"{lib}.tmp{os.getpid()}"
    with tempfile.TemporaryDirectory(prefix="rankmap-pmpi-build-") as work:
        for name, text in src.items():
            with open(os.path.join(work, name), "w") as fh:
                fh.write(text)
        cfiles = sorted(n for n in src if n.endswith(".c"))
        cmd = [cc, "-O2", "-fPIC", "-shared", "-o", tmp, *cfiles, "-ldl"]
        try:
            proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RankmapError(f"{cc} failed on the PMPI library: {exc}") from None
    if proc.returncode != 0:
        why = first_error_line(proc.stderr) or (f"exit status {proc.returncode}, no message "
                                                "(is it an MPI C compiler wrapper?)")
        raise RankmapError(f"{cc} failed on the PMPI library: {why}")
    os.replace(tmp, lib)
    seal(lib)
    return lib
