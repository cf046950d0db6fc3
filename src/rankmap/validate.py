"""The one validation layer for numbers, sizes and text read from users.

Every parser (specs, options, files) turns user text into numbers through these helpers, so
the rules hold everywhere:

* numbers are finite (no NaN, no infinity, no overflow to infinity: ``1e400`` is an error);
* an integer is written as an integer (``2.7``, ``true`` or ``"2"`` is not a rank) and fits in
  a signed 64-bit integer;
* sizes that decide how much memory is allocated (nodes, ranks, flows, bins, name widths,
  host-list expansions) are checked against a cap *before* anything is allocated; each cap
  has an environment variable to raise it (:func:`limit`);
* a bad value is echoed cut to a readable length (:func:`show`);
* text files are read as UTF-8 with a clean error on bad bytes (:func:`read_text`).

Only :mod:`rankmap.errors` is imported: this is the core layer.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re

from .errors import RankmapError

__all__ = ["INT64_MAX", "LIMITS", "show", "limit", "check_limit", "as_int", "as_float", "id_array",
           "first_repeated", "groups_in_order", "read_only_view",
           "is_digits", "parse_int_text", "parse_float_text", "finite_array", "check_input_file",
           "read_text", "read_lines", "read_file_bytes",
           "read_csv_rows", "format_count", "json_text", "hostlist_size", "expand_hostlist"]

INT64_MAX = (1 << 63) - 1

#: size caps: name -> (default, environment variable, what is counted). Chosen so that the
#: largest allowed input fits comfortably in a few GiB (see the README's "Limits").
LIMITS: dict[str, tuple[int, str, str]] = {
    "nodes": (1 << 20, "RANKMAP_MAX_NODES", "nodes"),
    "ranks": (1 << 22, "RANKMAP_MAX_RANKS", "ranks"),
    "flows": (1 << 24, "RANKMAP_MAX_FLOWS", "flows"),
    "bins": (100_000, "RANKMAP_MAX_BINS", "bins"),
    "name_width": (256, "RANKMAP_MAX_NAME_WIDTH", "characters"),
    "hosts": (1 << 22, "RANKMAP_MAX_HOSTS", "host names"),
    "cores": (1 << 16, "RANKMAP_MAX_CORES", "cores per node"),
    "links": (1 << 25, "RANKMAP_MAX_LINKS", "links"),
    "route_entries": (1 << 26, "RANKMAP_MAX_ROUTE_ENTRIES", "(flow, link) route entries"),
    "route_work": (1 << 32, "RANKMAP_MAX_ROUTE_WORK", "(flow, link) shares to add up"),
    "file_bytes": (1 << 28, "RANKMAP_MAX_FILE_BYTES", "bytes"),
    "points": (10_000, "RANKMAP_MAX_POINTS", "points"),
    "phases": (1 << 16, "RANKMAP_MAX_PHASES", "phases"),
}

#: how many characters of a bad value an error message echoes.
SHOW_WIDTH = 80


def show(value, width: int = SHOW_WIDTH) -> str:
    """``repr(value)`` cut to about ``width`` characters (``'abc...' (5000 chars)``).

    Parameters
    ----------
    value : object
        The bad value to echo in a message.
    width : int
        Characters kept.

    Returns
    -------
    str
        A printable, bounded rendering of ``value``.
    """
    text = repr(value) if not isinstance(value, str) else repr(value)
    if len(text) <= width:
        return text
    n = len(value) if isinstance(value, (str, bytes, list, tuple)) else len(text)
    return f"{text[:width - 3]}... ({n} characters)" if isinstance(value, str) \
        else f"{text[:width - 3]}..."


def format_count(n: int | float) -> str:
    """An exact count for humans: ``4194304``, or ``10^10`` / ``about 3.1e+40`` when huge.

    Parameters
    ----------
    n : int or float
        A count (nodes, ranks, flows).

    Returns
    -------
    str
        The exact integer below 10^7; a power of ten (``10^10``) or ``about 3.1e+40`` above.
    """
    n = int(n)
    if n < 10**7:
        return str(n)
    digits = len(str(n))
    if n == 10 ** (digits - 1):
        return f"10^{digits - 1}"
    if digits > 15:
        return f"about {float(n):.1e}" if digits < 300 else f"about 10^{digits - 1}"
    return str(n)


def limit(name: str) -> int:
    """The cap ``name`` (see :data:`LIMITS`), raised by its environment variable if set.

    Parameters
    ----------
    name : str
        A key of :data:`LIMITS`.

    Returns
    -------
    int
        The largest allowed count.
    """
    default, env, _ = LIMITS[name]
    text = os.environ.get(env)
    if text is None or not text.strip():
        return default
    value = parse_int_text(text, env, minimum=1)
    return value


def check_limit(count: int, name: str, subject: str) -> int:
    """Raise unless ``count`` is within the cap ``name``; return ``count``.

    Parameters
    ----------
    count : int
        The number about to be allocated (may be a huge Python int).
    name : str
        A key of :data:`LIMITS`.
    subject : str
        What has that many, e.g. ``"torus:100000x100000"``.

    Returns
    -------
    int
        ``count``, unchanged.
    """
    cap = limit(name)
    if count > cap:
        _, env, unit = LIMITS[name]
        if isinstance(subject, str) and len(subject) > 100:
            subject = subject[:97] + "..."
        raise RankmapError(f"{subject} "
                           f"has {format_count(count)} {unit}; the limit is {cap} "
                           f"(set {env} to raise it)")
    return count


_INT = re.compile(r"[+-]?[0-9]+")   # ASCII digits: int() also takes other scripts' digits
_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


def is_digits(text) -> bool:
    """Whether ``text`` is one or more ASCII decimal digits (``str.isdigit`` also takes
    other scripts' digits and superscripts, which ``int`` reads or refuses unevenly).

    Parameters
    ----------
    text : str

    Returns
    -------
    bool
    """
    return bool(text) and text.isascii() and text.isdigit()


def parse_int_text(text, what: str, minimum: int | None = None,
                   maximum: int | None = INT64_MAX) -> int:
    """An integer written in decimal digits (optionally signed), within bounds.

    Parameters
    ----------
    text : str
        The text (surrounding blanks ignored); ``2.0``, ``1e3`` and ``0x10`` are rejected.
    what : str
        Name of the value for the message.
    minimum, maximum : int or None
        Inclusive bounds (``maximum`` defaults to the int64 range).

    Returns
    -------
    int
    """
    s = str(text).strip()
    if not _INT.fullmatch(s) or len(s) > 40:
        if _INT.fullmatch(s):
            raise RankmapError(f"bad {what} {show(s)}: too large")
        raise RankmapError(f"bad {what} {show(text)}: not an integer")
    return _in_range(int(s), what, minimum, maximum, s)


def _in_range(value: int, what: str, minimum, maximum, shown) -> int:
    if minimum is not None and value < minimum:
        raise RankmapError(f"bad {what} {show(shown)}: must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise RankmapError(f"bad {what} {show(shown)}: must be at most {maximum}")
    return value


def as_int(value, what: str, minimum: int | None = None,
           maximum: int | None = INT64_MAX) -> int:
    """A strict integer from a parsed value (TOML, JSON, Python): ``int`` (or a numpy
    integer) only, never ``bool``, ``float`` or ``str``.

    Parameters
    ----------
    value : int
    what : str
        Name of the value for the message.
    minimum, maximum : int or None
        Inclusive bounds.

    Returns
    -------
    int
    """
    if isinstance(value, bool) or not isinstance(value, int):
        if hasattr(value, "__index__") and not isinstance(value, (bool, str)) \
                and type(value).__module__ == "numpy":  # numpy integers
            return _in_range(int(value.__index__()), what, minimum, maximum, value)
        raise RankmapError(f"bad {what} {show(value)}: not an integer")
    return _in_range(value, what, minimum, maximum, value)


def parse_float_text(text, what: str, minimum: float | None = None,
                     maximum: float | None = None, positive: bool = False) -> float:
    """A finite decimal number (``2``, ``0.5``, ``1e-3``), within bounds.

    Parameters
    ----------
    text : str
    what : str
        Name of the value for the message.
    minimum, maximum : float or None
        Inclusive bounds.
    positive : bool
        Reject zero and negative values.

    Returns
    -------
    float
    """
    s = str(text).strip()
    if len(s) > 60 or not _FLOAT.fullmatch(s):  # length first: the match backtracks O(n^2)
        raise RankmapError(f"bad {what} {show(text)}: not a number")
    return as_float(float(s), what, minimum, maximum, positive, shown=s)


def as_float(value, what: str, minimum: float | None = None, maximum: float | None = None,
             positive: bool = False, shown=None) -> float:
    """A finite float within bounds (``bool`` is not a number).

    Parameters
    ----------
    value : int or float
    what : str
        Name of the value for the message.
    minimum, maximum : float or None
        Inclusive bounds.
    positive : bool
        Reject zero and negative values.

    Returns
    -------
    float
    """
    shown = value if shown is None else shown
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if isinstance(value, str):
            return parse_float_text(value, what, minimum, maximum, positive)
        raise RankmapError(f"bad {what} {show(value)}: not a number")
    try:
        x = float(value)
    except OverflowError:
        raise RankmapError(f"bad {what} {show(shown)}: too large") from None
    if not math.isfinite(x):
        raise RankmapError(f"bad {what} {show(shown)}: not a finite number")
    if positive and not x > 0:
        raise RankmapError(f"bad {what} {show(shown)}: must be positive")
    if minimum is not None and x < minimum:
        raise RankmapError(f"bad {what} {show(shown)}: must be at least {minimum:g}")
    if maximum is not None and x > maximum:
        raise RankmapError(f"bad {what} {show(shown)}: must be at most {maximum:g}")
    return x


def finite_array(values, what: str):
    """Raise unless every element of the numpy array ``values`` is finite; return it.

    Parameters
    ----------
    values : numpy.ndarray
    what : str
        What the numbers are, for the message.

    Returns
    -------
    numpy.ndarray
        ``values``, unchanged.
    """
    import numpy as np

    arr = np.asarray(values)
    if arr.dtype.kind == "f" and arr.size and not np.isfinite(arr).all():
        bad = arr[~np.isfinite(arr)].flat[0]
        raise RankmapError(f"{what} holds a non-finite number ({bad})")
    return values


def id_array(values, what: str, size: int | None = None, copy: bool = True):
    """A read-only 1-D int64 copy of whole numbers 0 .. ``size`` - 1 (node ids, ranks, cores).

    Floats are accepted only when every value is a whole number (``2.0``, never ``2.5``, which
    would be cut quietly), and booleans never.

    Parameters
    ----------
    values : array_like
        The ids.
    what : str
        What they are, for the message (``node ids of the allocation``).
    size : int, optional
        Ids must be below it.
    copy : bool
        True: a read-only copy. False: the values themselves when they already are int64
        (checked, not copied: for large arrays, e.g. a phase's ranks).

    Returns
    -------
    numpy.ndarray
        int64, shape (n,); not writeable when copied.

    Raises
    ------
    RankmapError
        Not one-dimensional, not whole numbers, negative, or ``size`` or above.
    """
    import numpy as np

    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        raise RankmapError(f"{what}: not an array of whole numbers") from None
    if arr.ndim != 1:
        raise RankmapError(f"{what}: expected a flat list of numbers, got shape {arr.shape}")
    if arr.dtype.kind == "f":
        whole = np.isfinite(arr) & (arr == np.round(arr)) & (np.abs(arr) < 2.0 ** 62)
        if not whole.all():
            raise RankmapError(f"{what}: {float(arr[~whole][0])!r} is not a whole number")
    elif arr.size and arr.dtype.kind not in "iu":
        raise RankmapError(f"{what}: not whole numbers (got {arr.dtype} values)")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > INT64_MAX:
        raise RankmapError(f"{what}: {int(arr.max())} is too large")
    out = np.array(arr, dtype=np.int64) if copy else np.asarray(arr, dtype=np.int64)
    if out.size and out.min() < 0:
        raise RankmapError(f"{what}: {int(out.min())} is negative")
    if size is not None and out.size and out.max() >= size:
        raise RankmapError(f"{what}: {int(out.max())} is beyond the last, {size - 1}")
    if copy:
        out.flags.writeable = False
    return out


def read_only_view(arr):
    """A view of the array ``arr`` that cannot be written (the data is not copied).

    Parameters
    ----------
    arr : numpy.ndarray
        Any array.

    Returns
    -------
    numpy.ndarray
        A C-contiguous view (a copy only when ``arr`` is not contiguous) with
        ``flags.writeable`` False.
    """
    import numpy as np

    view = np.ascontiguousarray(arr).view()
    view.flags.writeable = False
    return view


def first_repeated(ids) -> int | None:
    """The smallest id that occurs twice in ``ids`` (non-negative int64), or None.

    Counts in an array as long as the largest id when that is small (linear time), else sorts,
    so a huge id costs no memory.

    Parameters
    ----------
    ids : numpy.ndarray
        int64 ids, all at least 0.

    Returns
    -------
    int or None
        The smallest repeated id, None when all differ.
    """
    import numpy as np

    if ids.size < 2:
        return None
    if int(ids.max()) < 4 * ids.size + 1024:
        counts = np.bincount(ids)
        return int(np.argmax(counts > 1)) if (counts > 1).any() else None
    s = np.sort(ids)
    same = s[1:] == s[:-1]
    return int(s[1:][same][0]) if same.any() else None


def groups_in_order(labels, subject: str) -> list:
    """Row indices of every distinct label, labels in order of first appearance, in one pass
    (a scan per label is quadratic); their number is capped by ``RANKMAP_MAX_PHASES``.

    Parameters
    ----------
    labels : numpy.ndarray
        One label (a phase name) per row.
    subject : str
        What the labels come from (a file), for the cap's message.

    Returns
    -------
    list of numpy.ndarray
        For each distinct label, first seen first, the int64 indices of its rows, ascending.

    Raises
    ------
    RankmapError
        More distinct labels than the cap.
    """
    import numpy as np

    labels = np.asarray(labels)
    if labels.size == 0:
        return []
    uniq, first, code = np.unique(labels, return_index=True, return_inverse=True)
    check_limit(len(uniq), "phases", subject)
    rank_of = np.empty(len(uniq), dtype=np.int64)
    rank_of[np.argsort(first, kind="stable")] = np.arange(len(uniq))
    code = rank_of[code.ravel()]
    rows = np.argsort(code, kind="stable")
    return np.split(rows, np.searchsorted(code[rows], np.arange(1, len(uniq))))


def check_input_file(path: str, what: str = "file", quote=None) -> None:
    """Refuse an input path that is not a regular file, saying what it is instead.

    Parameters
    ----------
    path : str
        The path given.
    what : str
        What the file is, for the message (``"graph file"``).
    quote : callable, optional
        How the path is shown (default :func:`show`).

    Raises
    ------
    RankmapError
        ``not found`` when nothing is there, ``is a folder`` for a directory, ``is not a
        regular file`` for a device, pipe or socket (``/dev/null``, ``/dev/zero``).
    """
    if os.path.isfile(path):
        return
    shown = (quote or show)(path)
    if not os.path.exists(path):
        raise RankmapError(f"{what} {shown} not found")
    if os.path.isdir(path):
        raise RankmapError(f"{what} {shown} is a folder, not a file")
    raise RankmapError(f"{what} {shown} is not a regular file (a device, pipe or socket): "
                       "give a file")


def read_file_bytes(path: str, what: str = "file") -> bytes:
    """The raw contents of an input file: a regular file (a device such as ``/dev/zero`` is
    refused by name, never read for ever) within ``RANKMAP_MAX_FILE_BYTES``.

    Parameters
    ----------
    path : str
    what : str
        What the file is, for the message (``"counters file"``).

    Returns
    -------
    bytes
    """
    if os.path.exists(path):
        check_input_file(path, what)
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    check_limit(size, "file_bytes", f"{what} {path}")
    with open(path, "rb") as fh:
        return fh.read()


def read_text(path: str, what: str = "file") -> str:
    """The contents of a UTF-8 text file; bad bytes and oversize files are clean errors.

    Parameters
    ----------
    path : str
    what : str
        What the file is, for the message (``"counters file"``).

    Returns
    -------
    str
    """
    data = read_file_bytes(path, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise RankmapError(f"{what} {show(path)} line {line}: not UTF-8 text (byte "
                           f"0x{data[exc.start]:02x})") from None


def read_lines(path: str, what: str = "file") -> list[str]:
    """The lines of a UTF-8 text file (see :func:`read_text`), without line ends.

    Parameters
    ----------
    path : str
    what : str

    Returns
    -------
    list of str
    """
    return read_text(path, what).splitlines()


def read_csv_rows(path: str, what: str = "CSV file") -> list[list[str]]:
    """Rows of a UTF-8 CSV file; bad bytes, NUL characters and oversized fields give a
    one-line error naming the line.

    Parameters
    ----------
    path : str
    what : str

    Returns
    -------
    list of list of str
    """
    text = read_text(path, what)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        return list(reader)
    except csv.Error as exc:
        raise RankmapError(f"{what} {show(path)} line {reader.line_num}: {exc}") from None


def json_text(doc, indent: int | None = None) -> str:
    """``doc`` as strict JSON text: NaN and infinity are refused, never written as
    ``NaN``/``Infinity`` (which are not JSON).

    Parameters
    ----------
    doc : object
        JSON-ready data.
    indent : int or None
        As :func:`json.dumps`.

    Returns
    -------
    str
    """
    import json

    try:
        return json.dumps(doc, indent=indent, allow_nan=False)
    except ValueError:
        raise RankmapError("internal error: a result holds NaN or infinity; please report "
                           "the command that gave it") from None


_BRACKET = re.compile(r"\[([^\[\]]*)\]")


def _top_items(text: str) -> list[str]:
    """The comma-separated items of a host list outside brackets (``a[1,2],b`` -> 2)."""
    depth, start = 0, 0
    items = []
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return items


def hostlist_size(text: str) -> int:
    """How many names a Slurm host list expands to, computed without expanding it.

    Parameters
    ----------
    text : str
        A host list such as ``nid[00001-00128,00200]`` or ``a[1-2]b[3-4],c``.

    Returns
    -------
    int
        The count (an over-estimate is never smaller than the expansion).
    """
    total = 0
    for item in _top_items(text):
        n = 1
        for group in _BRACKET.findall(item):
            size = 0
            for part in group.split(","):
                lo, dash, hi = part.partition("-")
                if dash and is_digits(lo.strip()) and is_digits(hi.strip()):
                    size += max(0, int(hi) - int(lo) + 1) if len(hi) < 30 and len(lo) < 30 \
                        else 1 << 100
                else:
                    size += 1
            n *= max(size, 1)
        total += n
    return total


def expand_hostlist(text: str, where: str, allow_duplicates: bool = True) -> list[str]:
    """Expand a Slurm host list (python-hostlist) after checking its size against the
    ``hosts`` cap.

    Parameters
    ----------
    text : str
        The host list.
    where : str
        Where it came from, for the message.
    allow_duplicates : bool
        Keep repeated names (as python-hostlist's option of that name).

    Returns
    -------
    list of str
    """
    import hostlist

    check_limit(hostlist_size(text), "hosts", f"host list {show(text, 40)} in {where}")
    if any(not item.strip() for item in _top_items(text)):
        # python-hostlist drops it: an empty variable in "$A,$B" would pass unseen
        raise RankmapError(f"bad host list {show(text)} in {where}: an empty name between "
                           "commas")
    # python-hostlist's own guard (its MAX_SIZE setting, 100,000 names) would refuse a list
    # under rankmap's cap, which was checked above: it is raised to that cap for the call
    saved = hostlist.MAX_SIZE
    hostlist.MAX_SIZE = max(saved, limit("hosts"))
    try:
        return hostlist.expand_hostlist(text, allow_duplicates=allow_duplicates)
    except hostlist.BadHostlist as exc:
        raise RankmapError(f"bad host list {show(text)} in {where}: {exc}") from None
    except (ValueError, OverflowError, MemoryError):
        raise RankmapError(f"bad host list {show(text)} in {where}") from None
    finally:
        hostlist.MAX_SIZE = saved
