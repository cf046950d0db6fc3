"""Atomic file output: write to a temporary file beside the target, then rename.

An existing file is never overwritten unless ``force`` is set, so a typo cannot destroy a
previous placement or report.
"""

from __future__ import annotations

import os
import tempfile

from ..errors import RankmapError


def check_writable(path: str, force: bool) -> None:
    """Raise if ``path`` exists (and not ``force``) or its folder does not exist."""
    if os.path.isdir(path):
        raise RankmapError(f"output {path!r} is a directory")
    if os.path.exists(path) and not force:
        raise RankmapError(f"output {path!r} exists; use --force to overwrite it")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RankmapError(f"folder {folder!r} for output {path!r} does not exist")


def write_atomic(path: str, data: str | bytes, force: bool = False) -> str:
    """Write ``data`` to ``path`` atomically; refuse to replace an existing file without force.

    Returns the path written.
    """
    check_writable(path, force)
    folder = os.path.dirname(os.path.abspath(path))
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=".rankmap-", dir=folder)
    try:
        with os.fdopen(fd, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
