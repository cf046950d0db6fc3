"""Cached build products checked before use: a digest file beside each one.

rankmap compiles its C sources on first use into caches (:mod:`rankmap.simgrid.build`,
:mod:`rankmap.pmpi.build`). A cached file cut short by a full disk or changed by hand used to
be run as it was, and failed where nothing named the cache (``smpirun failed (exit 134)``).
:func:`seal` writes the SHA-256 of a finished file to ``FILE.sha256``; :func:`is_sealed` says
whether the file still has that digest, and callers rebuild it when it has not.
"""

from __future__ import annotations

import hashlib
import os

__all__ = ["seal", "is_sealed"]


def _digest(path: str) -> str:
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
        fh.write(_digest(path) + "\n")
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
        return _digest(path) == want
    except (OSError, UnicodeDecodeError):
        return False
