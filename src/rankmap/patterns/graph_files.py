"""Reading a weighted communication graph from a file into one or more phases.

Formats, chosen by file extension:

* ``.csv``: rows ``src,dst,bytes[,phase]`` (directed: src sends bytes to dst); an optional
  header row; ``bytes`` may carry a unit (``64KiB``). A ``phase`` column splits flows into
  phases (in order of first appearance). The header ``src,dst,bytes,messages,phase`` (what
  ``rankmap record`` writes) adds a message count, which is read and ignored; a comment line
  ``# ranks N`` gives the rank count when the last ranks send nothing.
* ``.mat``: a dense N x N matrix of whitespace-separated numbers, row i column j = bytes
  rank i sends to rank j (Open MPI's monitoring tools and TreeMatch use it).
* ``.mtx``: Matrix Market; entry (i, j) = v means rank i sends v bytes to rank j (symmetric
  matrices count both directions; pattern matrices use the default size).
* ``.grf`` / ``.src``: Scotch source graph; ``.graph`` / ``.metis``: METIS graph. Both list
  every undirected edge from both ends, so each end sends to the other.

Edge weights are bytes. With ``bytes=SIZE`` in the spec, weights are multiplied by SIZE
(weights as units of SIZE); unweighted edges carry SIZE (default 1 MiB). Self-loops are dropped.
"""

from __future__ import annotations

import os
from itertools import repeat

import numpy as np

from ..errors import RankmapError
from ..units import MAX_SIZE, parse_size
from ..validate import (check_input_file, check_limit, groups_in_order, is_digits, limit,
                        parse_float_text, parse_int_text, read_csv_rows, read_lines, read_text,
                        show)
from .base import Pattern, Phase

__all__ = ["read_csv_graph", "read_dense_matrix", "read_matrix_market", "read_metis",
           "read_scotch", "READERS", "make_graph_pattern"]


def _int_token(tok: str, path: str, where: str, minimum: int | None = None) -> int:
    return parse_int_text(tok, f"integer in {path}: {where}:", minimum=minimum)


def _rank_token(tok: str, path: str, where: str) -> int:
    """A rank or vertex number: an integer from 0 to the rank cap."""
    return parse_int_text(tok, f"rank in {path}: {where}:", minimum=0, maximum=limit("ranks"))


def read_csv_graph(path: str):
    """Read an edge-list CSV (``src,dst,bytes[,phase]``, see module docstring).

    Parameters
    ----------
    path : str
        The graph file.

    Returns
    -------
    src, dst : numpy.ndarray of int64
        Sending and receiving rank of every edge (0-based).
    weights : numpy.ndarray of float64
        Bytes of every edge (a unit such as ``64KiB`` is allowed in the file).
    phase_names : list of str or None
        Phase of every edge when the file has a phase column, else None.
    n_ranks : int or None
        Rank count from a ``# ranks N`` comment, or None (then the largest rank + 1).

    Raises
    ------
    RankmapError
        When the file is unreadable, has a bad header or row, a negative rank, a bad size
        or no edges, or exceeds the rank/flow limits.
    """
    plain = _plain_csv(read_text(path, "graph file"), path)
    return plain if plain is not None else _csv_row_by_row(read_csv_rows(path, "graph file"),
                                                           path)


#: the headers a graph CSV may start with
_CSV_HEADERS = (["src", "dst", "bytes"], ["src", "dst", "bytes", "phase"],
                ["src", "dst", "bytes", "messages"], ["src", "dst", "bytes", "messages", "phase"])
#: most digits of a token the vectorised reader converts (int64 holds 18 digits)
_PLAIN_DIGITS = 18
#: 10**k for every k < _PLAIN_DIGITS (int64)
_POW10 = 10 ** np.arange(_PLAIN_DIGITS, dtype=np.int64)
#: longest line the vectorised reader takes (longer ones go to the csv module, which refuses
#: fields past its size limit)
_PLAIN_LINE = 4096


def _comment_ranks(row: list[str], path: str) -> int | None:
    """The rank count of a ``# ranks N`` comment row (cells stripped), else None."""
    words = ",".join(row).lstrip("#").split()
    if len(words) == 2 and words[0] == "ranks" and is_digits(words[1]):
        return check_limit(parse_int_text(words[1], f"ranks in {path}"), "ranks",
                           f"graph file {path}")
    return None


def _number_cell(cell: str) -> bool:
    """Whether a first cell reads as a (signed) number, so that its row is data, no header:
    ``+1`` is a rank on line 1 as on every other line."""
    return is_digits(cell.lstrip("+-"))


def _plain_ints(cells) -> np.ndarray | None:
    """int64 values of tokens that are all 1-18 ASCII digits, else None."""
    if not cells:
        return None
    lengths = np.fromiter(map(len, cells), dtype=np.int64, count=len(cells))
    if lengths.min() < 1 or lengths.max() > _PLAIN_DIGITS:
        return None
    joined = "".join(cells)
    if not (joined.isascii() and joined.isdigit()):
        return None
    # every digit times 10 to the number of digits after it in its token, summed per token
    digits = np.frombuffer(joined.encode("ascii"), dtype=np.uint8).astype(np.int64) - 48
    ends = np.cumsum(lengths)
    after = np.repeat(ends, lengths) - 1 - np.arange(len(digits), dtype=np.int64)
    return np.add.reduceat(digits * _POW10[after], ends - lengths)


def _plain_csv(text: str, path: str):
    """:func:`read_csv_graph`'s result for a plain file, in vectorised passes over its text:
    an optional header, then rows of plain digits (ranks, bytes and the ``messages`` column;
    phase names of any unquoted text), ``# ranks N`` comments and blank lines anywhere after
    the first. None for anything else (quotes, carriage returns, long lines), or for any
    value :func:`_csv_row_by_row` would refuse: that reader then gives the answer, or the
    one-line error naming the line."""
    if not text or '"' in text or "\r" in text or "\0" in text:
        return None
    lines = text.split("\n")
    if max(map(len, lines)) > _PLAIN_LINE:
        return None
    first = [c.strip() for c in lines[0].split(",")]
    header = None
    if not _number_cell(first[0]):
        header = [c.lower() for c in first]
        if header not in _CSV_HEADERS:
            return None
    body = lines[1:] if header is not None else lines
    width = len(header) if header is not None else 3
    n_ranks = None
    odd = [k for k, ln in enumerate(body) if not ln or ln[0] in "# \t"]
    for k in odd:                       # comments and blank lines (or a reason to give up)
        row = [c.strip() for c in body[k].split(",")]
        if row[0].startswith("#"):
            found = _comment_ranks(row, path)
            n_ranks = found if found is not None else n_ranks
        elif any(row):
            return None
    if odd:
        skip = set(odd)
        body = [ln for k, ln in enumerate(body) if k not in skip]
    if not body or len(body) > limit("flows"):
        return None
    if set(map(str.count, body, repeat(",", len(body)))) != {width - 1}:
        return None                     # a line of another width
    tokens = ",".join(body).split(",")
    src, dst, nbytes = (_plain_ints(tokens[c::width]) for c in range(3))
    if src is None or dst is None or nbytes is None:
        return None
    if header is not None and "messages" in header and _plain_ints(tokens[3::width]) is None:
        return None                     # a count that is no plain number: named by line below
    top = limit("ranks")
    if max(int(src.max()), int(dst.max())) > top or nbytes.max() > MAX_SIZE:
        return None
    phases = None
    if header is not None and header[-1] == "phase":
        phases = [c.strip() for c in tokens[width - 1::width]]
        if not all(phases):
            return None                 # an empty phase name: the other reader names its line
    return src, dst, nbytes.astype(np.float64), phases, n_ranks


def _csv_row_by_row(rows: list[list[str]], path: str):
    """:func:`read_csv_graph` one row at a time, every token checked (any file)."""
    src, dst, nb, phase = [], [], [], []
    n_ranks = None
    has_phase = False
    width, phase_col = (3, 4), 3
    first, header = True, None      # the header, if any, is the first row that is no comment
    for lineno, row in enumerate(rows, 1):
        row = [c.strip() for c in row]
        if row and row[0].startswith("#"):
            found = _comment_ranks(row, path)
            n_ranks = found if found is not None else n_ranks
            continue
        if not row or not any(row):
            continue
        if first and not _number_cell(row[0]):
            header = [c.lower() for c in row]
            if header not in _CSV_HEADERS:
                raise RankmapError(f"{path}: line {lineno}: expected header "
                                   "src,dst,bytes[,phase] or src,dst,bytes,messages,phase, got "
                                   f"{show(','.join(row))}")
            has_phase = header[-1] == "phase"
            width = (len(header),)
            phase_col = len(header) - 1 if has_phase else -1
            first = False
            continue
        if len(row) not in width:
            want = ("src,dst,bytes[,phase]" if len(width) > 1 else ",".join(header)
                    if header is not None else f"{width[0]} columns as in the first row")
            raise RankmapError(f"{path}: line {lineno}: expected {want}, got "
                               f"{show(','.join(row))}"
                               + (" (a trailing comma?)" if row[-1] == "" else ""))
        if first:       # without a header the first row sets the columns of every row
            width = (len(row),)
            first = False
        if len(src) >= limit("flows"):
            check_limit(len(src) + 1, "flows", f"graph file {path}")
        if row[0].strip().startswith("-") or row[1].strip().startswith("-"):
            raise RankmapError(f"{path}: line {lineno}: negative rank")
        s = _rank_token(row[0], path, f"line {lineno}")
        d = _rank_token(row[1], path, f"line {lineno}")
        if s < 0 or d < 0:
            raise RankmapError(f"{path}: line {lineno}: negative rank")
        try:
            b = parse_size(row[2], "bytes", allow_zero=True)   # 0 bytes: no flow
        except RankmapError as exc:
            raise RankmapError(f"{path}: line {lineno}: {exc}") from None
        if header is not None and "messages" in header:   # read and checked, then ignored
            parse_int_text(row[3], f"messages in {path}: line {lineno}:", minimum=0)
        name = row[phase_col] if 0 <= phase_col < len(row) else "graph"
        if not name:
            raise RankmapError(f"{path}: line {lineno}: empty phase name in "
                               f"{show(','.join(row))} (a trailing comma?)")
        src.append(s)
        dst.append(d)
        nb.append(b)
        phase.append(name)
        has_phase = has_phase or (header is None and len(row) == 4)   # src,dst,bytes,phase
    if not src:
        raise RankmapError(f"{path}: no edges")
    return (np.array(src), np.array(dst), np.array(nb, dtype=np.float64),
            phase if has_phase else None, n_ranks)


def read_dense_matrix(path: str):
    """Read a dense N x N matrix file (``.mat``): row i, column j = bytes i sends to j.

    Parameters
    ----------
    path : str
        The graph file.

    Returns
    -------
    src, dst : numpy.ndarray of int64
        Sending and receiving rank of every edge (0-based).
    weights : numpy.ndarray of float64 or None
        Bytes of every non-zero entry.
    phase_names : None
        Always None (one phase).
    n_ranks : int
        N, the matrix size.

    Raises
    ------
    RankmapError
        When a value is not a non-negative number, the matrix is not square or is all zeros.
    """
    rows = []
    for lineno, line in enumerate(read_lines(path, "graph file"), 1):
        if not line.strip() or line.lstrip().startswith(("#", "%")):
            continue
        toks = line.split()
        if not rows:
            check_limit(len(toks), "ranks", f"graph file {path}")
        rows.append(np.array([parse_float_text(t, f"bytes in {path}: line {lineno}:", minimum=0)
                              for t in toks], dtype=np.float64))
        if len(rows[-1]) != len(rows[0]):
            raise RankmapError(f"{path}: line {lineno}: {len(rows[-1])} values, line 1 has "
                               f"{len(rows[0])}")
        if len(rows) > len(rows[0]):
            break
    n = len(rows[0]) if rows else 0
    if not n or len(rows) != n:
        raise RankmapError(f"{path}: expected a square matrix, got {len(rows)} rows of {n}")
    m = np.vstack(rows)
    src, dst = np.nonzero(m)
    if not len(src):
        raise RankmapError(f"{path}: no edges (the matrix is all zeros)")
    return src.astype(np.int64), dst.astype(np.int64), m[src, dst], None, n


def _check_mtx_header(path: str) -> None:
    """Refuse dense, complex and oversized Matrix Market files before scipy reads them."""
    lines = read_lines(path, "graph file")
    if not lines or not lines[0].lower().startswith("%%matrixmarket"):
        raise RankmapError(f"{path}: not a Matrix Market file (no %%MatrixMarket header)")
    head = lines[0].lower().split()
    if len(head) < 5 or head[1] != "matrix" or head[2] != "coordinate":
        raise RankmapError(f"{path}: expected '%%MatrixMarket matrix coordinate FIELD SYMMETRY' "
                           "(a sparse graph)")
    if head[3] not in ("real", "integer", "pattern"):
        raise RankmapError(f"{path}: field {show(head[3], 20)} is not a graph weight: use real, "
                           "integer or pattern")
    size = next((ln for ln in lines[1:] if ln.strip() and not ln.lstrip().startswith("%")), "")
    toks = size.split()
    if len(toks) != 3:
        raise RankmapError(f"{path}: expected a size line 'rows cols entries', got {show(size)}")
    rows, cols, nnz = (_int_token(t, path, "size line", minimum=0) for t in toks)
    check_limit(max(rows, cols), "ranks", f"graph file {path}")
    check_limit(nnz * (2 if head[4] != "general" else 1), "flows", f"graph file {path}")
    want = 2 if head[3] == "pattern" else 3
    seen_size = False
    for lineno, ln in enumerate(lines[1:], 2):
        t = ln.split()
        if not t or t[0].startswith("%"):
            continue
        if not seen_size:           # the size line, checked above
            seen_size = True
            continue
        if len(t) != want:          # scipy would drop a value it does not expect
            raise RankmapError(f"{path}: line {lineno}: expected 'i j"
                               + (" value'" if want == 3 else "' (a pattern matrix has no "
                                  "values)") + f", got {show(ln.strip(), 40)}")
        if want == 3:   # scipy turns an unparsable weight into garbage: checked here
            parse_float_text(t[2], f"weight in {path}")
            if head[3] == "integer" and not is_digits(t[2].lstrip("+-")):
                # scipy would cut 1.5 to 1
                raise RankmapError(f"{path}: weight {show(t[2], 30)} in an integer matrix is "
                                   "not an integer")


def read_matrix_market(path: str):
    """Read a sparse Matrix Market file (``.mtx``): entry (i, j) = v, rank i sends v bytes to j.

    Parameters
    ----------
    path : str
        The graph file.

    Returns
    -------
    src, dst : numpy.ndarray of int64
        Sending and receiving rank of every edge (0-based).
    weights : numpy.ndarray of float64 or None
        Absolute value of every entry (bytes), or None for a ``pattern`` matrix.
    phase_names : None
        Always None (one phase).
    n_ranks : int
        The matrix size.

    Raises
    ------
    RankmapError
        When the file is not a coordinate real/integer/pattern Matrix Market file, is not
        square, has a bad weight or exceeds the rank/flow limits.
    """
    from scipy.io import mmread

    _check_mtx_header(path)
    try:
        m = mmread(path)
    except Exception as exc:  # scipy raises ValueError/IndexError variants on bad files
        raise RankmapError(f"{path}: not a readable Matrix Market file ({exc})") from None
    if not hasattr(m, "tocoo"):
        raise RankmapError(f"{path}: dense Matrix Market arrays are not a graph; use coordinate format")
    m = m.tocoo()
    if m.shape[0] != m.shape[1]:
        raise RankmapError(f"{path}: matrix is {m.shape[0]}x{m.shape[1]}, a graph needs a square one")
    pattern_only = "pattern" in read_lines(path, "graph file")[0].lower()
    w = None if pattern_only else np.abs(np.asarray(m.data, dtype=np.float64))
    return m.row.astype(np.int64), m.col.astype(np.int64), w, None, m.shape[0]


def read_metis(path: str):
    """Read a METIS graph file (``.graph``/``.metis``; every edge listed from both ends).

    Parameters
    ----------
    path : str
        The graph file.

    Returns
    -------
    src, dst : numpy.ndarray of int64
        Sending and receiving rank of every edge (0-based).
    weights : numpy.ndarray of float64 or None
        Edge weights (bytes) when the format flags give them, else None.
    phase_names : None
        Always None (one phase).
    n_ranks : int
        The vertex count of the header.

    Raises
    ------
    RankmapError
        When the header or a vertex line is malformed, a neighbour is outside 1-n, the
        neighbours listed are not twice the header's edge count, or the file exceeds the
        rank/flow limits.
    """
    lines = [ln for ln in read_lines(path, "graph file") if not ln.lstrip().startswith("%")]
    if not lines:
        raise RankmapError(f"{path}: empty METIS file")
    head = lines[0].split()
    if len(head) < 2:
        raise RankmapError(f"{path}: line 1: expected 'vertices edges [fmt [ncon]]'")
    n = _int_token(head[0], path, "header", minimum=1)
    check_limit(n, "ranks", f"graph file {path}")
    fmt = head[2] if len(head) > 2 else "0"
    ncon = _int_token(head[3], path, "header", minimum=1) if len(head) > 3 else 1
    if len(fmt) > 3 or any(ch not in "01" for ch in fmt):
        raise RankmapError(f"{path}: line 1: bad METIS format {show(fmt, 20)}: up to three "
                           "digits 0/1")
    fmt = fmt.zfill(3)
    has_size, has_vw, has_ew = fmt[-3] == "1", fmt[-2] == "1", fmt[-1] == "1"
    if len(lines) - 1 < n:
        raise RankmapError(f"{path}: header says {n} vertices but only {len(lines) - 1} lines follow")
    src, dst, w = [], [], []
    for v in range(n):
        toks = lines[1 + v].split()
        skip = int(has_size) + (ncon if has_vw else 0)
        toks = toks[skip:]
        step = 2 if has_ew else 1
        if len(toks) % step:
            raise RankmapError(f"{path}: vertex {v + 1}: odd number of neighbour/weight fields")
        for k in range(0, len(toks), step):
            u = _int_token(toks[k], path, f"vertex {v + 1}")
            if len(src) >= limit("flows"):
                check_limit(len(src) + 1, "flows", f"graph file {path}")
            if not 1 <= u <= n:
                raise RankmapError(f"{path}: vertex {v + 1}: neighbour {u} outside 1-{n}")
            src.append(v)
            dst.append(u - 1)
            if has_ew:
                w.append(float(_int_token(toks[k + 1], path, f"vertex {v + 1}", minimum=0)))
    extra = next((k for k in range(1 + n, len(lines)) if lines[k].strip()), None)
    if extra is not None:
        raise RankmapError(f"{path}: {show(lines[extra].strip(), 40)} after the {n} vertex lines "
                           "of the header")
    m = _int_token(head[1], path, "header", minimum=0)
    pairs = np.array(src, dtype=np.int64) * n + np.array(dst, dtype=np.int64)
    back = np.array(dst, dtype=np.int64) * n + np.array(src, dtype=np.int64)
    missing = ~np.isin(back, pairs)
    if missing.any():
        k = int(np.argmax(missing))
        raise RankmapError(f"{path}: vertex {src[k] + 1} lists {dst[k] + 1}, which does not list "
                           f"it back (METIS lists every edge from both ends)")
    if len(src) != 2 * m:
        raise RankmapError(f"{path}: line 1: header says {m} edges, the vertex lines list "
                           f"{len(src)} neighbours (every edge twice: expected {2 * m})")
    return (np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
            np.array(w) if has_ew else None, None, n)


def read_scotch(path: str):
    """Read a Scotch source graph (``.grf``/``.src``; every edge listed from both ends).

    Parameters
    ----------
    path : str
        The graph file.

    Returns
    -------
    src, dst : numpy.ndarray of int64
        Sending and receiving rank of every edge (0-based).
    weights : numpy.ndarray of float64 or None
        Edge loads (bytes) when the flags give them, else None.
    phase_names : None
        Always None (one phase).
    n_ranks : int
        The vertex count of the header.

    Raises
    ------
    RankmapError
        When the version, counts, base or flags are bad, the arc count disagrees with the
        vertices, a label repeats, a neighbour is not a vertex, a vertex lists a neighbour
        that does not list it back, or fields are left over.
    """
    toks = read_text(path, "graph file").split()
    pos = 0

    def take(where, minimum=0):
        nonlocal pos
        if pos >= len(toks):
            raise RankmapError(f"{path}: file ends early ({where})")
        pos += 1
        return _int_token(toks[pos - 1], path, where, minimum=minimum)

    version = take("version")
    if version != 0:
        raise RankmapError(f"{path}: unsupported Scotch graph version {version}")
    n = take("vertex count", minimum=1)
    check_limit(n, "ranks", f"graph file {path}")
    arcs = take("arc count")
    check_limit(arcs, "flows", f"graph file {path}")
    base = take("base value")
    if base not in (0, 1):
        raise RankmapError(f"{path}: base value {base}: must be 0 or 1")
    flags = toks[pos] if pos < len(toks) else "000"
    if len(flags) > 3 or any(ch not in "01" for ch in flags):
        raise RankmapError(f"{path}: bad flags {show(flags, 20)}: up to three digits 0/1")
    flags = flags.zfill(3)
    take("flags")
    has_label, has_ew, has_vw = flags[-3] == "1", flags[-2] == "1", flags[-1] == "1"
    labels, src, nbr, w = [], [], [], []
    for v in range(n):
        labels.append(take(f"vertex {v} label") if has_label else v + base)
        if has_vw:
            take(f"vertex {v} load")
        deg = take(f"vertex {v} degree")
        if len(nbr) + deg > arcs:
            raise RankmapError(f"{path}: vertex {v} has degree {deg}: more arcs than the "
                               f"{arcs} the header gives")
        for _ in range(deg):
            if has_ew:
                w.append(float(take(f"vertex {v} edge load")))
            nbr.append(take(f"vertex {v} neighbour"))
            src.append(v)
    if len(nbr) != arcs:
        raise RankmapError(f"{path}: the header gives {arcs} arcs, the vertices list {len(nbr)}")
    if pos < len(toks):
        raise RankmapError(f"{path}: {len(toks) - pos} unexpected fields after the last vertex "
                           f"(from {show(toks[pos], 30)})")
    index = {lab: i for i, lab in enumerate(labels)}
    if len(index) != len(labels):
        from collections import Counter
        dup = next(lab for lab, c in Counter(labels).items() if c > 1)
        raise RankmapError(f"{path}: vertex label {dup} is used twice")
    try:
        dst = [index[u] for u in nbr]
    except KeyError as exc:
        raise RankmapError(f"{path}: neighbour {exc.args[0]} is not a vertex") from None
    src_a, dst_a = np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)
    # Scotch graphs are symmetric: an arc v -> u needs its arc u -> v (as METIS files)
    missing = ~np.isin(dst_a * n + src_a, src_a * n + dst_a)
    if missing.any():
        k = int(np.argmax(missing))
        raise RankmapError(f"{path}: vertex {labels[src[k]]} lists {nbr[k]}, which does not "
                           "list it back (Scotch lists every edge from both ends)")
    return src_a, dst_a, np.array(w) if has_ew else None, None, n


READERS = {".csv": read_csv_graph, ".mat": read_dense_matrix, ".mtx": read_matrix_market, ".graph": read_metis,
           ".metis": read_metis, ".grf": read_scotch, ".src": read_scotch}


def make_graph_pattern(spec_text: str, path: str, nbytes: int | None = None,
                       n_ranks: int | None = None) -> Pattern:
    """Read ``path`` (format by extension, see module docstring) into a Pattern.

    Parameters
    ----------
    spec_text : str
        The pattern spec, kept on the pattern.
    path : str
        The graph file; its extension picks the reader (:data:`READERS`).
    nbytes : int, optional
        Size in bytes: weights are multiplied by it, unweighted edges carry it (default
        1 MiB for unweighted edges, weights as bytes otherwise).
    n_ranks : int, optional
        Rank count of the pattern; must be at least the ranks the file uses.

    Returns
    -------
    Pattern
        Kind ``graph``, one phase per ``phase`` value of a CSV (else one ``graph`` phase),
        self-loops dropped, sizes in bytes.

    Raises
    ------
    RankmapError
        When the file is missing, its extension unknown, its contents bad (see the readers),
        a weight negative, no edge between two ranks carries bytes, or it uses more ranks
        than ``n_ranks``.
    """
    check_input_file(path, "graph file")
    ext = os.path.splitext(path)[1].lower()
    reader = READERS.get(ext)
    if reader is None:
        raise RankmapError(f"graph file {show(path)}: unknown format {ext or '(no extension)'!r}; "
                           f"use {', '.join(sorted(READERS))}")
    src, dst, weights, phase_names, n = reader(path)
    if ext == ".csv":
        used = int(max(src.max(), dst.max())) + 1
        if n is not None and used > n:
            raise RankmapError(f"graph file {show(path)} uses {used} ranks, more than its "
                               f"'# ranks {n}' comment says")
        n = max(used, n or 0)
        check_limit(n, "ranks", f"graph file {path}")
    if n_ranks is not None:
        if n_ranks < n:
            raise RankmapError(f"graph file {show(path)} uses {n} ranks, more than ranks={n_ranks}")
        n = n_ranks
    unit = float(nbytes) if nbytes is not None else None
    if weights is None:
        sizes = np.full(len(src), unit if unit is not None else float(1 << 20))
    else:
        if (weights < 0).any():
            raise RankmapError(f"graph file {show(path)} has a negative edge weight")
        sizes = weights * (unit if unit is not None else 1.0)
    if sizes.size and float(sizes.max()) > MAX_SIZE:
        raise RankmapError(f"graph file {show(path)}: an edge of {float(sizes.max()):.6g} bytes "
                           "(its weight times bytes=): at most 1PiB a message")
    keep = src != dst
    if not (sizes[keep] > 0).any():
        why = "it has no edges" if not len(src) else \
            "every edge is a self-loop (a rank to itself)" if not keep.any() \
            else "every edge between two ranks has 0 bytes"
        raise RankmapError(f"graph file {show(path)} moves nothing: {why}")
    keep &= sizes > 0           # a 0-byte entry is no flow (as a stencil class of 0 bytes)
    src, dst, sizes = src[keep], dst[keep], sizes[keep]
    if phase_names is None:
        phases = [Phase("graph", src, dst, sizes)]
    else:
        names = np.array(phase_names, dtype=object)[keep].astype(str)
        phases = [Phase(str(names[part[0]]), src[part], dst[part], sizes[part])
                  for part in groups_in_order(names, f"graph file {path}")]
    return Pattern(spec=spec_text, kind="graph", n_ranks=int(n), phases=phases,
                   params={"file": path})
