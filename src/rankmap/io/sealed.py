"""Cached build products checked before use: a digest file beside each one.

rankmap compiles its C sources on first use into caches (:mod:`rankmap.simgrid.build`,
:mod:`rankmap.pmpi.build`). A cached file cut short by a full disk or changed by hand used to
be run as it was, and failed where nothing named the cache (``smpirun failed (exit 134)``).
:func:`seal` writes the SHA-256 of a finished file to ``FILE.sha256``; :func:`is_sealed` says
whether the file still has that digest, and callers rebuild it when it has not (:func:`usable`:
a file built before digests were kept is sealed as it is, once, or used as it is where the
cache cannot be written). :func:`first_error_line` picks, from a failed build's compiler
output, the line that says why.
"""

from __future__ import annotations

import hashlib
import os

__all__ = ["seal", "is_sealed", "usable", "first_error_line", "file_digest"]


def file_digest(path: str) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks.

    Parameters
    ----------
    path : str
        The file.

    Returns
    -------
    str
        The hex digest.
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def seal(path: str) -> None:
    """Record the digest of a finished file in ``path + ".sha256"`` (written atomically).

    Parameters
    ----------
    path : str
        The file (a compiled program or library).
    """
    tmp = f"{path}.sha256.tmp{os.getpid()}"
    with open(tmp, "w", encoding="ascii") as fh:
        fh.write(file_digest(path) + "\n")
    os.replace(tmp, f"{path}.sha256")


def is_sealed(path: str) -> bool:
    """Whether ``path`` exists and has the digest :func:`seal` recorded for it.

    Parameters
    ----------
    path : str
        The cached file.

    Returns
    -------
    bool
        False when the file or its digest file is missing, unreadable or disagrees.
    """
    try:
        with open(f"{path}.sha256", encoding="ascii") as fh:
            want = fh.read().strip()
        return file_digest(path) == want
    except (OSError, UnicodeDecodeError):
        return False


def usable(path: str) -> bool:
    """Whether a cached file may be used as it is: sealed and unchanged, or built before
    digests were kept (no digest file: sealed now, or used unsealed when its folder cannot be
    written, e.g. a read-only shared cache).

    Parameters
    ----------
    path : str
        The cached file.

    Returns
    -------
    bool
        False when the file is missing or its bytes differ from its recorded digest: the
        caller rebuilds it.
    """
    if not os.path.isfile(path):
        return False
    if os.path.exists(f"{path}.sha256"):
        return is_sealed(path)
    try:
        seal(path)
    except OSError:
        pass
    return True


#: words that mark the line of a compiler's output that says what went wrong
_CAUSES = ("error", "cannot", "denied", "not permitted", "no such file")


def first_error_line(stderr: str) -> str | None:
    """The first line of a compiler's output that says what went wrong (the linker's 'cannot
    open output file ...' comes before collect2's 'ld returned 1 exit status'), else its last
    line, else None.

    Parameters
    ----------
    stderr : str
        The compiler's standard error.

    Returns
    -------
    str or None
        The line, stripped.
    """
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in lines:
        if any(word in ln.lower() for word in _CAUSES):
            return ln
    return lines[-1] if lines else None
