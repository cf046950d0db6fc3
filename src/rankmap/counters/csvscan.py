"""Lean, vectorised reading of a big CSV file into typed columns.

A counters file of millions of rows was read as Python lists of strings, then as a
fixed-width unicode array: some 35 bytes of memory per byte of file. Here the file's bytes
are scanned with numpy a few megabytes at a time: line ends and commas are found with
vectorised comparisons, every column's fields are gathered into a small byte matrix and
converted at once (integers and numbers by numpy's parser, text decoded and stripped), and
the results are appended to typed arrays. Peak memory is a small multiple of the file size.

Rows that hold a quote or a NUL character (rare: a phase name with a comma) are split by the
``csv`` module, one row at a time, as the whole file was before; quotes that are not plain
CSV quoting (``a"b``) send the whole file that way. Fields are what ``csv.reader`` gives,
stripped of whitespace, so the result is the same as reading every row with ``csv`` (line
numbers are the row's first line in the file).
"""

from __future__ import annotations

import codecs
import csv
import io

import numpy as np

from ..errors import RankmapError
from ..validate import INT64_MAX, read_file_bytes, show

__all__ = ["ColumnTable", "scan_csv", "read_bytes"]

#: bytes scanned at a time (the transient arrays are a few times this)
CHUNK_BYTES = 1 << 18
#: fields up to this many bytes are gathered in a matrix; longer ones one by one
GATHER_WIDTH = 64
#: rows the csv-module fallback gathers before converting them
SLOW_BATCH = 1 << 15

_NL, _CR, _COMMA, _QUOTE = 10, 13, 44, 34
#: ASCII bytes that str.strip() removes
_WS = np.zeros(256, dtype=bool)
_WS[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True
#: bytes that make a row non-blank: ASCII other than whitespace and commas
_SOLID = ~_WS
_SOLID[_COMMA] = False
_SOLID[128:] = False


#: the array type of each kind of column but text
_DTYPES = {"int": np.int64, "float": np.float64, "codes": np.int32}


class _Fallback(Exception):
    """The quotes of the file are not plain CSV quoting: read it with the csv module."""


def read_bytes(path: str, what: str) -> bytes:
    """The bytes of a UTF-8 text file after its byte-order mark, checked as ``read_text`` checks.

    Parameters
    ----------
    path : str
        The file.
    what : str
        What it is, for messages (``"counters file"``).

    Returns
    -------
    bytes
        The file's contents, without a leading UTF-8 byte-order mark.

    Raises
    ------
    RankmapError
        Not a regular file, above ``RANKMAP_MAX_FILE_BYTES``, or not UTF-8 (the line named).
    """
    data = read_file_bytes(path, what)
    buf = np.frombuffer(data, dtype=np.uint8)
    if buf.size and int(buf.max()) >= 0x80:
        # validated a slice at a time, cut at line ends (never inside a character): no
        # decoded copy of the whole file
        dec = codecs.getincrementaldecoder("utf-8")()
        pos = 0
        while pos < len(data):
            end = data.find(b"\n", min(pos + CHUNK_BYTES, len(data)))
            end = len(data) if end < 0 else end + 1
            try:
                dec.decode(data[pos:end], final=end == len(data))
            except UnicodeDecodeError as exc:
                at = pos + exc.start
                line = data[:at].count(b"\n") + 1
                raise RankmapError(f"{what} {show(path)} line {line}: not UTF-8 text (byte "
                                   f"0x{data[at]:02x})") from None
            pos = end
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    return data


class ColumnTable:
    """Typed columns of a CSV file's rows, and the first bad value of each column.

    Attributes
    ----------
    header : list of str
        The header's fields, stripped and lower-cased.
    lines : numpy.ndarray
        int64: the file line of every row kept (blank rows are skipped).
    columns : dict of str to numpy.ndarray
        Per column: float64 or int64 numbers, str text, or int32 codes (``codes`` columns).
    names : dict of str to list of str
        For a ``codes`` column, the text of every code, in order of first appearance.
    bad : dict of str to tuple of (int, str)
        Per numeric column, the first row whose field is no number: (row, stripped text).
    refused : dict of str to tuple of (int, str)
        Per column with a check, the first row whose value the check refuses (same form).
    """

    def __init__(self, header: list[str]):
        self.header = header
        self.lines = np.zeros(0, dtype=np.int64)
        self.columns: dict[str, np.ndarray] = {}
        self.names: dict[str, list[str]] = {}
        self.bad: dict[str, tuple[int, str]] = {}
        self.refused: dict[str, tuple[int, str]] = {}

    def __len__(self) -> int:
        return len(self.lines)


class _Builder:
    """Converts batches of rows into typed column arrays, in file order."""

    def __init__(self, header, kinds, checks, what, path, capacity=None):
        self.header, self.kinds, self.what, self.path = header, kinds, what, path
        self.checks = checks
        # numeric columns go straight into arrays of ``capacity`` rows (when known): no
        # joining of parts, which held two copies of a column at once
        self.full = {c: np.empty(capacity, dtype=_DTYPES[k]) for c, k in kinds.items()
                     if capacity is not None and k in _DTYPES}
        self.refused: dict[str, tuple[int, str]] = {}
        self.parts: dict[str, list[np.ndarray]] = {c: [] for c in header}
        self.lines: list[np.ndarray] = []
        self.n = 0
        self.bad: dict[str, tuple[int, str]] = {}
        self.code_of: dict[str, dict[str, int]] = {c: {} for c, k in kinds.items()
                                                    if k == "codes"}

    def add(self, lines, buf, clean, offsets, dirty, rows) -> None:
        """Add one batch: rows ``clean`` (positions in the batch) by field byte offsets
        ``offsets[j] = (start, end)`` into ``buf``; rows ``dirty`` by their csv fields."""
        n = len(lines)
        for j, c in enumerate(self.header):
            kind = self.kinds[c]
            pieces = []   # (positions, values, first bad (position, text) or None)
            if len(clean):
                s, e = offsets[j]
                pieces.append((clean, *_convert_bytes(buf, s, e, kind, c in self.bad)))
            if len(dirty):
                pieces.append((dirty, *_convert_text([r[j] for r in rows], kind,
                                                     c in self.bad)))
            first = None
            for pos, _v, bad in pieces:
                if bad is not None and (first is None or int(pos[bad[0]]) < first[0]):
                    first = (int(pos[bad[0]]), bad[1])
            if len(pieces) == 1:      # every row of the batch, in order
                vals = pieces[0][1]
            else:
                vals = np.empty(n, dtype=np.result_type(*[p[1].dtype for p in pieces]))
                for pos, v, _bad in pieces:
                    vals[pos] = v
            if first is not None and c not in self.bad:
                self.bad[c] = (self.n + first[0], first[1])
            if c in self.checks and c not in self.bad and c not in self.refused:
                wrong = np.nonzero(self.checks[c](vals))[0]
                if wrong.size:
                    k = int(wrong[0])
                    i = int(np.searchsorted(clean, k)) if len(clean) else 0
                    if len(clean) and i < len(clean) and clean[i] == k:
                        s, e = offsets[j]
                        text = bytes(buf[s[i]:e[i]]).decode("utf-8").strip()
                    else:
                        text = rows[int(np.searchsorted(dirty, k))][j].strip()
                    self.refused[c] = (self.n + k, text)
            if kind == "codes":
                vals = self._codes(c, vals)
            if c in self.full:
                self.full[c][self.n:self.n + n] = vals
            else:
                self.parts[c].append(vals)
        self.lines.append(np.asarray(lines, dtype=np.int64))
        self.n += n

    def _codes(self, c: str, text: np.ndarray) -> np.ndarray:
        """int32 codes of a text column (phase names), by runs of equal values."""
        if len(text) == 0:
            return np.zeros(0, dtype=np.int32)
        heads = np.ones(len(text), dtype=bool)
        heads[1:] = text[1:] != text[:-1]
        table = self.code_of[c]
        head_codes = np.array([table.setdefault(t, len(table)) for t in text[heads].tolist()],
                              dtype=np.int32)
        return head_codes[np.cumsum(heads) - 1]

    def table(self) -> ColumnTable:
        out = ColumnTable(self.header)
        out.lines = _join(self.lines, np.int64)
        self.lines = []
        for c in self.header:
            kind = self.kinds[c]
            if c in self.full:
                col = self.full.pop(c)
                out.columns[c] = col[:self.n] if 2 * self.n >= len(col) else col[:self.n].copy()
            else:
                out.columns[c] = _join(self.parts[c], _DTYPES.get(kind, str))
            self.parts[c] = []
            if kind == "codes":
                out.names[c] = list(self.code_of[c])
        out.bad, out.refused = self.bad, self.refused
        return out


def _join(parts: list, dtype) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=dtype)
    if len(parts) == 1:
        return parts[0]
    out = np.concatenate(parts)
    parts.clear()
    return out


def _gather(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fields ``buf[s:e]`` of at most :data:`GATHER_WIDTH` bytes as a bytes (``S``) array,
    and the positions of the longer ones (left empty)."""
    lens = e - s
    long = np.nonzero(lens > GATHER_WIDTH)[0]
    if long.size:
        lens = lens.copy()
        lens[long] = 0
    w = max(int(lens.max(initial=0)), 1)
    cols = np.arange(w, dtype=np.int64)
    idx = s[:, None] + cols[None, :]
    mat = buf[np.minimum(idx, len(buf) - 1)]
    mat[cols[None, :] >= lens[:, None]] = 0
    return np.ascontiguousarray(mat).view(f"S{w}").ravel(), long


def _convert_bytes(buf, s, e, kind, skip):
    """Convert fields ``buf[s:e]``: (values, first bad (index, text) or None)."""
    raw, long = _gather(buf, s, e)
    if kind in ("int", "float"):
        if skip:     # the column already has a bad value: the first one is reported
            return np.zeros(len(s), dtype=np.int64 if kind == "int" else np.float64), None
        if not long.size:
            try:
                return raw.astype(np.int64 if kind == "int" else np.float64), None
            except (ValueError, OverflowError):
                pass
        texts = [bytes(buf[a:b]).decode("utf-8") for a, b in zip(s.tolist(), e.tolist())]
        return _convert_text(texts, kind, skip)
    if raw.size and (raw.view(np.uint8).max() >= 0x80):
        text = np.char.decode(raw, "utf-8")
    else:
        text = raw.astype(f"U{raw.dtype.itemsize}")
    if long.size:
        extra = [bytes(buf[s[k]:e[k]]).decode("utf-8") for k in long.tolist()]
        text = text.astype(f"U{max(text.dtype.itemsize // 4, max(map(len, extra)))}")
        text[long] = extra
    return np.char.strip(text), None


def _convert_text(texts: list[str], kind, skip):
    """Convert fields given as text: (values, first bad (index, stripped text) or None)."""
    if kind not in ("int", "float"):
        return np.array([t.strip() for t in texts], dtype=str).reshape(-1), None
    out = np.zeros(len(texts), dtype=np.int64 if kind == "int" else np.float64)
    if skip:
        return out, None
    for k, t in enumerate(texts):
        t = t.strip()
        try:
            if kind == "int":
                v = int(t.lstrip("+"))
                if abs(v) > INT64_MAX:
                    raise ValueError
            else:
                v = float(t)
        except ValueError:
            return out, (k, t)
        out[k] = v
    return out, None


def _positions(buf: np.ndarray, byte: int) -> np.ndarray:
    """Positions of ``byte`` in ``buf``, found a slice at a time."""
    dtype = np.int32 if len(buf) < 1 << 31 else np.int64     # half the memory when it fits
    parts = [(np.flatnonzero(buf[a:a + CHUNK_BYTES] == byte) + a).astype(dtype)
             for a in range(0, len(buf), CHUNK_BYTES)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _csv_rows(text: str, what: str, path: str, first_line: int) -> tuple[list, list[int]]:
    """Rows of ``text`` by the csv module and each row's last line (relative to the text)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    rows, ends = [], []
    try:
        for row in reader:
            rows.append(row)
            ends.append(reader.line_num)
    except csv.Error as exc:
        raise RankmapError(f"{what} {show(path)} line {first_line + reader.line_num - 1}: "
                           f"{exc}") from None
    return rows, ends


def _is_blank(row: list[str]) -> bool:
    return not any(f.strip() for f in row)


def scan_csv(data: bytes, path: str, what: str, kinds_of) -> ColumnTable | None:
    """Read the rows of CSV ``data`` into typed columns.

    Parameters
    ----------
    data : bytes
        UTF-8 CSV text (as :func:`read_bytes` gives it).
    path, what : str
        The file and what it is, for messages.
    kinds_of : callable
        ``kinds_of(header) -> (kinds, checks)``: called with the header (stripped,
        lower-cased) once it is read (it may raise to refuse it); ``kinds`` maps every column
        to ``"int"``, ``"float"``, ``"text"`` or ``"codes"``, ``checks`` some columns to a
        function of their values giving a mask of values refused (see ``refused``).

    Returns
    -------
    ColumnTable or None
        The columns; None for an empty file.

    Raises
    ------
    RankmapError
        A row with more or fewer fields than the header (the first such line), or a field
        above the csv module's field size limit.
    """
    if not data:
        return None
    buf = np.frombuffer(data, dtype=np.uint8)
    cr = _positions(buf, _CR)
    quotes = _positions(buf, _QUOTE)
    if cr.size:
        nxt = np.minimum(cr + 1, len(buf) - 1)
        lone = cr[(buf[nxt] != _NL) | (cr + 1 == len(buf))]
        if lone.size:
            if quotes.size:
                return _scan_slow(data, path, what, kinds_of)
            buf = buf.copy()          # an old Mac file: a lone CR ends a line, as csv reads it
            buf[lone] = _NL
    try:
        return _scan_fast(buf, quotes, path, what, kinds_of)
    except _Fallback:
        return _scan_slow(data, path, what, kinds_of)


def _scan_fast(buf, quotes, path, what, kinds_of) -> ColumnTable:
    nl = _positions(buf, _NL)
    if not nl.size or nl[-1] != len(buf) - 1:
        nl = np.append(nl, len(buf))       # a last line without a line end
    nul = _positions(buf, 0)
    if quotes.size:
        # a line end is a row end unless inside quotes (an odd count of quotes before it)
        ends = nl[np.searchsorted(quotes, nl) % 2 == 0]
        if not ends.size or ends[-1] != nl[-1]:
            ends = np.append(ends, nl[-1])
    else:
        ends = nl
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    rec_line = np.searchsorted(nl, starts) + 1
    special = np.concatenate([quotes, nul])
    special.sort()
    dirty = (np.searchsorted(special, ends) - np.searchsorted(special, starts)) > 0 \
        if special.size else np.zeros(len(ends), dtype=bool)
    # the header: the first row, by the csv module
    head_rows, _ = _checked_rows(buf, starts[:1], ends[:1], rec_line[:1], nl, path, what)
    header = [h.strip().lower() for h in (head_rows[0] if head_rows else [])]
    kinds = kinds_of(header)
    width = len(header)
    limit = csv.field_size_limit()
    longest = np.nonzero(ends - starts > limit)[0]
    for k in longest.tolist():   # a field over the csv module's limit: its error, as before
        if not dirty[k]:
            lens = np.diff(np.r_[starts[k] - 1, _positions(buf[starts[k]:ends[k]], _COMMA)
                                 + starts[k], ends[k]]) - 1
            if lens.max() > limit:
                raise RankmapError(f"{what} {show(path)} line {rec_line[k]}: field larger than "
                                   f"field limit ({limit})")
        else:
            _checked_rows(buf, starts[k:k + 1], ends[k:k + 1], rec_line[k:k + 1], nl, path,
                          what)
    b = _Builder(header, *kinds, what, path, capacity=max(len(ends) - 1, 0))
    n = len(ends)
    r = 1
    while r < n:
        # rows starting within the next CHUNK_BYTES bytes (at least one)
        stop = max(int(np.searchsorted(starts, int(starts[r]) + CHUNK_BYTES)), r + 1)
        _fast_chunk(b, buf, starts[r:stop], ends[r:stop], rec_line[r:stop], dirty[r:stop],
                    width, nl, path, what)
        r = stop
    return b.table()


def _checked_rows(buf, starts, ends, lines, nl, path, what) -> tuple[list, list]:
    """The csv rows of records ``starts[k]:ends[k]``, checked to be one row each (else the
    quotes are not plain CSV quoting: :class:`_Fallback`)."""
    if not len(starts):
        return [], []
    pieces = [bytes(buf[a:min(z + 1, len(buf))]) for a, z in zip(starts.tolist(),
                                                                  ends.tolist())]
    # each record's physical lines (a record without a line end is the file's last)
    nlines = np.searchsorted(nl, ends, side="right") - np.searchsorted(nl, starts)
    nlines = np.maximum(nlines, 1)
    text = b"".join(p if p.endswith(b"\n") else p + b"\n" for p in pieces).decode("utf-8")
    rows, row_ends = _csv_rows(text, what, path, int(lines[0]))
    if len(rows) != len(pieces) or row_ends != np.cumsum(nlines).tolist():
        raise _Fallback
    return rows, row_ends


def _fast_chunk(b: _Builder, buf, starts, ends, lines, dirty, width, nl, path, what):
    """One chunk of rows: blank rows dropped, widths checked, fields converted."""
    lo, hi = int(starts[0]), int(min(ends[-1] + 1, len(buf)))
    part = buf[lo:hi]
    d_idx = np.nonzero(dirty)[0]
    rows = _checked_rows(buf, starts[d_idx], ends[d_idx], lines[d_idx], nl, path, what)[0] \
        if d_idx.size else []
    # blank rows (only whitespace and commas) are skipped, as before
    # rows are contiguous in the chunk (each ends with its line end, never solid): a sum
    # over each row's start to the next's
    s_loc, e_loc = starts - lo, ends - lo
    e_loc = np.minimum(e_loc, len(part))
    n_solid = np.add.reduceat(_SOLID[part], s_loc, dtype=np.int32)
    n_high = np.add.reduceat(part >= 0x80, s_loc, dtype=np.int32)
    blank = n_solid == 0
    odd = np.nonzero(blank & (n_high > 0) & ~dirty)[0]
    for k in odd.tolist():      # non-ASCII whitespace only? strip() decides
        fields = bytes(part[s_loc[k]:e_loc[k]]).decode("utf-8").split(",")
        blank[k] = _is_blank(fields)
    for k, row in zip(d_idx.tolist(), rows):
        blank[k] = _is_blank(row)
    commas = np.flatnonzero(part == _COMMA)
    c_lo, c_hi = np.searchsorted(commas, s_loc), np.searchsorted(commas, e_loc)
    widths = c_hi - c_lo + 1
    for k, row in zip(d_idx.tolist(), rows):
        widths[k] = len(row)
    wrong = np.nonzero(~blank & (widths != width))[0]
    if wrong.size:
        k = int(wrong[0])
        raise RankmapError(f"{path}:{lines[k]}: {widths[k]} fields, the header has {width}")
    keep = np.nonzero(~blank)[0]
    if not keep.size:
        return
    is_dirty = dirty[keep]
    clean = np.nonzero(~is_dirty)[0]
    dpos = np.nonzero(is_dirty)[0]
    keep_rows = [row for k, row in zip(d_idx.tolist(), rows) if not blank[k]]
    cs, ce, first = s_loc[keep[clean]], e_loc[keep[clean]], c_lo[keep[clean]]
    offsets = []
    for j in range(width):
        s = cs if j == 0 else commas[first + j - 1] + 1
        e = ce if j == width - 1 else commas[first + j]
        offsets.append((s, e))
    b.add(lines[keep], part, clean, offsets, dpos, keep_rows)


def _scan_slow(data: bytes, path, what, kinds_of) -> ColumnTable:
    """Every row by the csv module (a file whose quotes are not plain CSV quoting), in
    batches: slower, as lean."""
    text = data.decode("utf-8")
    reader = csv.reader(io.StringIO(text, newline=""))
    batch, lines = [], []
    b = None
    last = 0
    try:
        for row in reader:
            line, last = last + 1, reader.line_num
            if b is None:
                header = [h.strip().lower() for h in row]
                b = _Builder(header, *kinds_of(header), what, path)
                continue
            if _is_blank(row):
                continue
            if len(row) != len(b.header):
                raise RankmapError(f"{path}:{line}: {len(row)} fields, the header has "
                                   f"{len(b.header)}")
            batch.append(row)
            lines.append(line)
            if len(batch) >= SLOW_BATCH:
                b.add(np.array(lines), None, [], None, np.arange(len(batch)), batch)
                batch, lines = [], []
    except csv.Error as exc:
        raise RankmapError(f"{what} {show(path)} line {reader.line_num}: {exc}") from None
    if b is None:
        return None
    if batch:
        b.add(np.array(lines), None, [], None, np.arange(len(batch)), batch)
    return b.table()
