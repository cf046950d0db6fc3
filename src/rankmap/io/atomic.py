"""Atomic file output: write to a temporary file beside the target, then rename.

An existing file is never overwritten unless ``force`` is set, so a typo cannot destroy a
previous placement or report; even with ``force`` only a regular file is replaced (never a
device such as ``/dev/null``, a folder or a socket). Temporary files of unfinished writes are
removed when the process gets SIGTERM, SIGHUP or Ctrl-C (:func:`install_signal_cleanup`); a
SIGKILL can leave one ``.rankmap-*`` file beside the target.
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile

from ..errors import RankmapError
from ..validate import show

__all__ = ["check_writable", "write_atomic", "install_signal_cleanup", "pending_temp_files"]

#: temporary files being written by this process (removed on SIGTERM/SIGHUP).
_PENDING: set[str] = set()


def pending_temp_files() -> set[str]:
    """Temporary files this process is writing right now (a copy).

    Returns
    -------
    set of str
    """
    return set(_PENDING)


def _cleanup_and_exit(signum, frame):
    for tmp in list(_PENDING):
        try:
            os.unlink(tmp)
        except OSError:
            pass
        _PENDING.discard(tmp)
    raise SystemExit(128 + signum)


def install_signal_cleanup() -> None:
    """Remove pending temporary files and exit with 128+signal on SIGTERM and SIGHUP.

    Only installs the handler where the signal still has its default action (so an embedding
    program's own handler is kept) and only in the main thread.
    """
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None and signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, _cleanup_and_exit)


def check_writable(path: str, force: bool) -> None:
    """Raise if ``path`` exists (and not ``force``), is not a regular file, or its folder does
    not exist.

    Parameters
    ----------
    path : str
        The output file.
    force : bool
        Whether an existing regular file may be replaced.
    """
    if not isinstance(path, str) or not path or "\0" in path:
        raise RankmapError(f"bad output path {show(path)}")
    if os.path.isdir(path):
        raise RankmapError(f"output {show(path)} is a directory; give a file name")
    if path.endswith(os.sep):
        raise RankmapError(f"output {show(path)} names a folder; give a file name")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise RankmapError(f"output {show(path)}: {exc.strerror}") from None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            raise RankmapError(f"output {show(path)} exists and is not a regular file; "
                               "rankmap only replaces regular files")
        if not force:
            raise RankmapError(f"output {show(path)} exists; use --force to overwrite it")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RankmapError(f"folder {show(folder)} for output {show(path)} does not exist")
    if not os.access(folder, os.W_OK):
        raise RankmapError(f"cannot write output {show(path)}: folder {show(folder)} is not "
                           "writable")


def write_atomic(path: str, data: str | bytes, force: bool = False) -> str:
    """Write ``data`` to ``path`` atomically; refuse to replace an existing file without force.

    Parameters
    ----------
    path : str
        The output file.
    data : str or bytes
        Contents (text is written as UTF-8).
    force : bool
        Whether an existing regular file may be replaced.

    Returns
    -------
    str
        The path written.
    """
    check_writable(path, force)
    folder = os.path.dirname(os.path.abspath(path))
    mode = "wb" if isinstance(data, bytes) else "w"
    try:
        fd, tmp = tempfile.mkstemp(prefix=".rankmap-", dir=folder)
    except OSError as exc:
        raise RankmapError(f"cannot write output {show(path)}: {exc.strerror}") from None
    _PENDING.add(tmp)
    try:
        with os.fdopen(fd, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise RankmapError(f"cannot write output {show(path)}: {exc.strerror or exc}") \
                from None
        raise
    finally:
        _PENDING.discard(tmp)
    return path
