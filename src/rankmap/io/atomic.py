"""Atomic file output: the target appears complete or not at all.

On Linux the data goes into an unnamed file in the target's folder (``O_TMPFILE``), which is
given its name only once complete (``linkat`` through ``/proc/self/fd``; with ``force``, linked
under a temporary name and renamed over the target). A process killed while writing, even by
SIGKILL, leaves nothing behind: the kernel frees the unnamed file. Where ``O_TMPFILE`` is not
supported (another OS, an old kernel, a filesystem without it, no ``/proc``) a named temporary
file beside the target is written and renamed instead.

An existing file is never overwritten unless ``force`` is set, so a typo cannot destroy a
previous placement or report (without ``force`` the name is given by a ``link``, which fails if
the target appeared meanwhile); even with ``force`` only a regular file is replaced (never a
device such as ``/dev/null``, a folder or a socket). An output that is a symbolic link is
written through it, as a shell's ``>`` would: the file it leads to is written, the link kept.
A new file gets the permissions the umask leaves of 0o666; a replaced one keeps its own. Named temporary files (the fallback, and
the instant between the link and the rename of a forced write) are removed when the process
gets SIGTERM, SIGHUP or Ctrl-C (:func:`install_signal_cleanup`).
"""

from __future__ import annotations

import errno
import os
import secrets
import signal
import stat
import tempfile

from ..errors import RankmapError
from ..validate import show

__all__ = ["check_writable", "check_output_folder", "resolve_output", "write_atomic", "move_into_place",
           "install_signal_cleanup", "pending_temp_files", "mark_exiting"]

#: temporary files being written by this process (removed on SIGTERM/SIGHUP).
_PENDING: set[str] = set()


def pending_temp_files() -> set[str]:
    """Temporary files this process is writing right now (a copy).

    Returns
    -------
    set of str
    """
    return set(_PENDING)


#: set once the command has returned: the interpreter is exiting
_EXITING: list[bool] = [False]


def mark_exiting() -> None:
    """Say the command has returned: a SIGTERM or SIGHUP from now on ends the process at once
    with 128+signal (under ``mpirun`` the launcher sends SIGTERM to the other processes when
    one fails; raised inside the interpreter's exit functions, the handler's SystemExit was
    printed as 'Exception ignored in atexit callback' and a traceback)."""
    _EXITING[0] = True


def _cleanup_and_exit(signum, frame):
    for tmp in list(_PENDING):
        try:
            os.unlink(tmp)
        except OSError:
            pass
        _PENDING.discard(tmp)
    if _EXITING[0]:
        import sys
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        os._exit(128 + signum)
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


def resolve_output(path: str) -> str:
    """The file an output path names: ``path`` itself, or for a symbolic link the file it
    leads to (existing or not), which is written as a shell's ``>`` writes through a link.

    Parameters
    ----------
    path : str
        The output path as given.

    Returns
    -------
    str
        The path that is written.
    """
    return os.path.realpath(path) if os.path.islink(path) else path


def _file_mode(path: str) -> int:
    """Permission bits for the output ``path``: an existing regular file's own (a ``--force``
    keeps who may read it), else what the process's umask leaves of 0o666."""
    try:
        st = os.stat(path)
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode)
    except OSError:
        pass
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


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
    given, path = path, resolve_output(path)
    if os.path.isdir(path):
        raise RankmapError(f"output {show(given)} is a directory; give a file name")
    if path.endswith(os.sep):
        raise RankmapError(f"output {show(given)} names a folder; give a file name")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise RankmapError(f"output {show(given)}: {exc.strerror}") from None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            raise RankmapError(f"output {show(given)} exists and is not a regular file; "
                               "rankmap only replaces regular files")
        if not force:
            raise RankmapError(f"output {show(given)} exists; use --force to overwrite it")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RankmapError(f"folder {show(folder)} for output {show(given)} does not exist")
    if not os.access(folder, os.W_OK):
        raise RankmapError(f"cannot write output {show(given)}: folder {show(folder)} is not "
                           "writable")
    why = _refuses_files(folder)
    if why:
        raise RankmapError(f"cannot write output {show(given)}: folder {show(folder)} takes "
                           f"no new file ({why})")


def _refuses_files(folder: str) -> str | None:
    """Why ``folder`` takes no new file, found by making one that leaves no trace (an unnamed
    one, else a named one removed at once), or None. ``os.access`` says yes to root in
    ``/proc`` or on a filesystem that refuses files: the work was done, then the write failed."""
    try:
        fd = _open_unnamed(folder)
    except OSError as exc:
        return exc.strerror or str(exc)
    if fd is not None:
        os.close(fd)
        return None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".rankmap-", dir=folder)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    os.unlink(tmp)
    return None


def check_output_folder(path: str, flag: str) -> None:
    """Raise unless ``path`` is a writable folder, or one that can be made in an existing
    folder: an output folder is made, its missing parents are not (as no output file's
    folder is made).

    Parameters
    ----------
    path : str
        The output folder (``--plot-dir``, ``--out``).
    flag : str
        The option that names it, for the message.
    """
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise RankmapError(f"{flag} {show(path)} is a file, not a folder")
        why = (None if os.access(path, os.W_OK | os.X_OK) else "not writable") or \
            _refuses_files(path)
        if why:
            raise RankmapError(f"{flag} {show(path)}: the folder takes no new file ({why})")
        return
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise RankmapError(f"{flag} {show(path)}: cannot make a folder in {show(parent)}, "
                           "which is a file")
    if not os.path.isdir(parent):
        raise RankmapError(f"folder {show(parent)} for {flag} {show(path)} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise RankmapError(f"{flag} {show(path)}: cannot make a folder in {show(parent)}")
    try:   # made and removed: os.access says yes to root where no folder can be made
        os.mkdir(path)
        os.rmdir(path)
    except FileExistsError:
        pass   # made meanwhile by someone else: it is checked again when used
    except OSError as exc:
        raise RankmapError(f"{flag} {show(path)}: cannot make a folder in {show(parent)} "
                           f"({exc.strerror or exc})") from None


def _open_unnamed(folder: str) -> int | None:
    """A descriptor of a new unnamed file in ``folder`` (``O_TMPFILE``), or None where the
    system or the filesystem cannot make one."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return None   # no O_TMPFILE here: the named temporary file does the job
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view[:1 << 24]):]


def _link_fd(fd: int, folder: str, name: str) -> None:
    """``linkat(AT_FDCWD, "/proc/self/fd/FD", folder_fd, name, AT_SYMLINK_FOLLOW)``: give the
    unnamed file ``fd`` the name ``name`` in ``folder`` (FileExistsError if taken). A
    ``dst_dir_fd`` makes CPython call ``linkat`` with the follow flag; plain ``os.link`` calls
    ``link()``, which would link the /proc symlink itself (EXDEV)."""
    dfd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dfd, follow_symlinks=True)
    finally:
        os.close(dfd)


def _name_unnamed(fd: int, folder: str, path: str, force: bool) -> None:
    """Give the complete unnamed file ``fd`` the name ``path``."""
    if not force:
        try:
            _link_fd(fd, folder, os.path.basename(path))
        except FileExistsError:
            raise RankmapError(f"output {show(path)} exists; use --force to overwrite it") \
                from None
        return
    while True:   # a free temporary name, then a rename over the target
        name = f".rankmap-{secrets.token_hex(6)}"
        tmp = os.path.join(folder, name)
        _PENDING.add(tmp)
        try:
            _link_fd(fd, folder, name)
            break
        except FileExistsError:
            _PENDING.discard(tmp)
        except BaseException:
            _PENDING.discard(tmp)
            raise
    try:
        check_writable(path, force)   # still a regular file (or nothing) just before the rename
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    finally:
        _PENDING.discard(tmp)


def write_atomic(path: str, data: str | bytes, force: bool = False) -> str:
    """Write ``data`` to ``path`` atomically; refuse to replace an existing file without force.

    The data is written into an unnamed file (``O_TMPFILE``) that gets its name once complete,
    so not even a SIGKILL leaves a partial or temporary file; elsewhere a named temporary file
    beside the target is renamed over it.

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
    if isinstance(force, str) or force not in (True, False):
        # force="no" is a true string: it replaced the file it was meant to keep
        raise RankmapError(f"write_atomic: force={force!r} is not True or False")
    check_writable(path, force)
    path = resolve_output(path)
    folder = os.path.dirname(os.path.abspath(path))
    blob = data if isinstance(data, bytes) else data.encode("utf-8")
    mode = _file_mode(path)
    try:
        fd = _open_unnamed(folder)
    except OSError as exc:
        raise RankmapError(f"cannot write output {show(path)}: {exc.strerror}") from None
    if fd is None:
        return _write_named(path, folder, blob, force, mode)
    try:
        _write_all(fd, blob)
        os.fchmod(fd, mode)
        _name_unnamed(fd, folder, path, force)
    except OSError as exc:
        if exc.errno in (errno.EXDEV, errno.EPERM, errno.EOPNOTSUPP, errno.ENOENT):
            return _write_named(path, folder, blob, force, mode)   # no link here
        raise RankmapError(f"cannot write output {show(path)}: {exc.strerror or exc}") \
            from None
    finally:
        os.close(fd)
    return path


def _write_named(path: str, folder: str, blob: bytes, force: bool, mode: int) -> str:
    """The fallback of :func:`write_atomic`: a named temporary file beside the target."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".rankmap-", dir=folder)
    except OSError as exc:
        raise RankmapError(f"cannot write output {show(path)}: {exc.strerror}") from None
    _PENDING.add(tmp)
    try:
        try:
            _write_all(fd, blob)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)
        move_into_place(tmp, path, force)
    except BaseException as exc:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise RankmapError(f"cannot write output {show(path)}: {exc.strerror or exc}") \
                from None
        raise
    finally:
        _PENDING.discard(tmp)
    return path


def move_into_place(tmp: str, path: str, force: bool) -> str:
    """Give the complete file ``tmp`` (in ``path``'s folder) the name ``path``.

    Without ``force`` the name is given by a ``link``, which fails if ``path`` exists, even if
    it appeared a moment ago; ``tmp`` is then left as it is. With ``force`` a regular file is
    replaced by a rename.

    Parameters
    ----------
    tmp : str
        The complete file, on the same filesystem as ``path``.
    path : str
        Its final name.
    force : bool
        Whether an existing regular file may be replaced.

    Returns
    -------
    str
        ``path``.

    Raises
    ------
    RankmapError
        ``path`` exists and ``force`` is not set, or it is not a regular file.
    OSError
        The filesystem refused the rename.
    """
    check_writable(path, force)
    path = resolve_output(path)
    if force:
        os.replace(tmp, path)
        return path
    try:
        os.link(tmp, path)   # fails if the target appeared meanwhile: no clobbering
    except FileExistsError:
        raise RankmapError(f"output {show(path)} exists; use --force to overwrite it") \
            from None
    except OSError:          # a filesystem without hard links
        check_writable(path, force)
        os.replace(tmp, path)
    else:
        os.unlink(tmp)
    return path
