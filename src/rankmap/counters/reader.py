"""Reading per-link counters from CSV.

One row per directed link. A link is named either by torus columns ``src,dim,dir,dst`` (as
``rankmap evaluate --links-out`` writes them, other machines add their own columns such as a
link ``class``) or by a free ``link`` id. The counter is ``bytes`` or ``packets``; an optional
``phase`` column splits the rows into phases (without it every row belongs to phase ``all``).
Other columns (``streams``, ``class`` ...) are kept as text or numbers for link-load maps.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import RankmapError
from ..patterns.base import ALL_PHASES
from ..validate import groups_in_order

__all__ = ["ALL_PHASES", "VALUE_COLUMNS", "TORUS_KEY", "INT_COLUMNS", "CounterPhase", "CounterRun",
           "read_counters", "read_runs"]

# ALL_PHASES ("all") is the phase name given to counters without a ``phase`` column.
#: counter columns, in order of preference.
VALUE_COLUMNS = ("bytes", "packets")
TORUS_KEY = ("src", "dim", "dir", "dst")
#: columns read as integers when present (torus and dragonfly link columns, stream counts).
INT_COLUMNS = TORUS_KEY + ("streams", "src_router", "dst_router", "node", "lane")


@dataclass
class CounterPhase:
    """The counters of one phase: ``values[i]`` is link i's count (bytes or packets);
    ``columns`` holds the link-naming and extra columns, row-aligned with ``values``."""

    name: str
    values: np.ndarray
    columns: dict[str, np.ndarray] = field(default_factory=dict)
    lines: np.ndarray | None = None     # the file line of every row, for error messages


@dataclass
class CounterRun:
    """One counters file (one placement or run): its label, unit and phases in file order."""

    label: str
    path: str
    unit: str
    phases: dict[str, CounterPhase]
    has_phase_column: bool

    def phase(self, name: str) -> CounterPhase:
        """The phase called ``name`` (error naming the known phases otherwise).

        Parameters
        ----------
        name : str
            A phase name of the file.

        Returns
        -------
        CounterPhase
            The phase.

        Raises
        ------
        RankmapError
            No such phase (the message lists the file's phases).
        """
        if name not in self.phases:
            if not self.has_phase_column:   # evaluate --links-out of a one-phase pattern
                raise RankmapError(f"{self.path}: no phase {name!r}: the file has no phase "
                                   "column (one phase, as a one-phase pattern's --links-out "
                                   "writes it); drop --phase")
            raise RankmapError(f"{self.path}: no phase {name!r} (phases: {', '.join(self.phases)})")
        return self.phases[name]

    def aggregated(self) -> CounterPhase:
        """Counters summed over all phases per link: what a whole-run counter reads.

        Returns
        -------
        CounterPhase
            Phase ``all``: per link, the sum of its counts over the phases.
        """
        first = next(iter(self.phases.values()))
        if len(self.phases) == 1:
            return CounterPhase(ALL_PHASES, first.values, first.columns)
        key_cols = [c for c in first.columns if c != "streams"]
        keys = _row_keys(first.columns, key_cols)
        total = dict(zip(keys, first.values.astype(np.float64)))
        for ph in list(self.phases.values())[1:]:
            for k, v in zip(_row_keys(ph.columns, key_cols), ph.values):
                total[k] = total.get(k, 0.0) + float(v)
        order = list(total)
        if len(order) == len(keys):
            cols = {c: first.columns[c] for c in key_cols}
        else:
            cols = {c: np.array([k[i] for k in order]) for i, c in enumerate(key_cols)}
        return CounterPhase(ALL_PHASES, np.array([total[k] for k in order]), cols)


def _row_keys(columns: dict, key_cols: list[str]) -> list[tuple]:
    return list(zip(*[columns[c].tolist() for c in key_cols])) if key_cols else []


def _check_unique_links(path: str, lines: np.ndarray, phase_code: np.ndarray,
                        phase_names: list[str], cols: dict):
    """Refuse a link listed twice in one phase (naming both lines): its count would be taken
    twice, or once, silently.

    The key of a row is (phase name, then the columns in name order), compared as tuples:
    the repeat reported is the first in that order, whatever the file's size."""
    # phases ranked by name; integer columns offset by their minimum; text columns coded by
    # their sorted values: the combined key orders rows as the tuples would
    rank = np.empty(len(phase_names), dtype=np.int64)
    rank[np.argsort(np.array(phase_names, dtype=object), kind="stable")] = \
        np.arange(len(phase_names))
    key = rank[phase_code]
    span = max(len(phase_names), 1)
    for c in sorted(cols):
        v = cols[c]
        lo = hi = 0
        if v.dtype.kind in "iu" and len(v):
            lo, hi = int(v.min()), int(v.max())
        if v.dtype.kind in "iu" and hi - lo < 1 << 31:
            code, n = v, hi - lo + 1
        else:
            uniq, code = np.unique(v, return_inverse=True)
            code, n, lo = code.reshape(-1), max(len(uniq), 1), 0
        if span * n >= 1 << 62:       # re-coded so the key stays an int64
            key = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
            span = int(key.max(initial=0)) + 1
        key *= n                      # in place: no copies of a column of millions of rows
        key += code if lo == 0 else code - lo
        span *= n
    if len(key) < 2:
        return
    ordered = np.sort(key)
    if not (ordered[1:] == ordered[:-1]).any():
        return
    del ordered
    order = np.argsort(key, kind="stable")
    same = np.nonzero(key[order][1:] == key[order][:-1])[0]
    first, again = order[same[0]], order[same[0] + 1]
    row = ",".join(f"{c}={cols[c][first]}" for c in cols)
    raise RankmapError(f"{path}:{lines[again]}: link {row} is listed twice in phase "
                       f"{phase_names[phase_code[first]]} (line {lines[first]} too)")


def _kinds(path: str):
    """The header checks of a counters file, and the kind of each of its columns."""
    def kinds_of(header: list[str]) -> tuple[dict, dict]:
        if len(set(header)) != len(header):
            raise RankmapError(f"{path}:1: repeated column in header {','.join(header)}")
        unit = next((c for c in VALUE_COLUMNS if c in header), None)
        if unit is None:
            raise RankmapError(f"{path}:1: header {','.join(header)} has no 'bytes' or "
                               "'packets' column")
        if "link" not in header and not ("src" in header and "dst" in header):
            raise RankmapError(f"{path}:1: header {','.join(header)} names no link: expected "
                               "src,dim,dir,dst (or the machine's src,...,dst columns) or link")
        kinds = {c: ("float" if c == unit else "codes" if c == "phase"
                     else "int" if c in INT_COLUMNS else "text") for c in header}
        # counts are analysed as doubles: above 2^53 one would be rounded (9007199254740993
        # read as ...992), so it is refused, not rounded (9 PB on one link)
        checks = {unit: lambda v: ~np.isfinite(v) | (v < 0) | (v >= 2.0 ** 53),
                  "dir": lambda v: (v != 1) & (v != -1)}
        return kinds, checks
    return kinds_of


def read_counters(path: str, label: str | None = None) -> CounterRun:
    """Read one counters CSV into a :class:`CounterRun` labelled ``label`` (default: the
    file name without extension). Counts are bytes or packets per directed link; a malformed
    row raises :class:`RankmapError` naming the file and line number.

    The file is scanned with numpy a slice at a time (:mod:`rankmap.counters.csvscan`): peak
    memory is a few times the file's size.

    Parameters
    ----------
    path : str
        The CSV file.
    label : str, optional
        The run's label (default: the file name without extension).

    Returns
    -------
    CounterRun
        Its phases, counts in bytes or packets (``unit``).
    """
    from .csvscan import read_bytes, scan_csv

    label = label or os.path.splitext(os.path.basename(path))[0]
    data = read_bytes(path, "counters file")
    table = scan_csv(data, path, "counters file", _kinds(path))
    del data
    if table is None:
        raise RankmapError(f"{path}: empty file, expected a header such as src,dim,dir,dst,bytes")
    header = table.header
    unit = next(c for c in VALUE_COLUMNS if c in header)
    has_phase = "phase" in header
    lines = table.lines
    if not len(table):
        raise RankmapError(f"{path}: no link rows after the header")
    # errors in the order they were found before: the counts, then each integer column
    if unit in table.bad:
        _bad_value(path, lines, table.bad[unit], unit, np.float64)
    values = table.columns.pop(unit)
    if unit in table.refused:
        k, text = table.refused[unit]
        raise RankmapError(f"{path}:{lines[k]}: bad {unit} value {text!r}: expected a count "
                           "from 0 to 2^53 (counts above it would be rounded)")
    for c in header:
        if c in table.bad:
            _bad_value(path, lines, table.bad[c], c, np.int64)
    cols = {c: v for c, v in table.columns.items() if c != "phase"}
    if "dir" in table.refused:
        k, text = table.refused["dir"]
        raise RankmapError(f"{path}:{lines[k]}: bad dir value {text!r}: expected 1 or -1")
    if has_phase:
        code, names = table.columns["phase"], table.names["phase"]
    else:
        code, names = np.zeros(len(values), dtype=np.int32), [ALL_PHASES]
    if "" in names:
        k = int(np.argmax(code == names.index("")))
        raise RankmapError(f"{path}:{lines[k]}: empty phase name")
    if not ("class" in cols and "lane" not in cols):
        # (a dragonfly file without lanes, written before them, lists parallel global links
        # alike: they are told apart, and repeats found, against the machine's links)
        _check_unique_links(path, lines, code, names, {c: v for c, v in cols.items()
                                                       if c != "streams"})
    phases = {}
    for sel in _groups(code, len(names), path):
        name = names[int(code[sel][0])]
        phases[name] = CounterPhase(name, values[sel], {c: v[sel] for c, v in cols.items()},
                                    lines[sel])
    sizes = {len(p.values) for p in phases.values()}
    if len(sizes) > 1:
        raise RankmapError(f"{path}: phases have different numbers of links "
                           f"({', '.join(f'{p.name}: {len(p.values)}' for p in phases.values())})")
    return CounterRun(label, path, unit, phases, has_phase)


def _groups(code: np.ndarray, n_names: int, path: str) -> list:
    """The rows of every phase, first seen first: slices (views, no copies) when each phase's
    rows are one run, as ``evaluate --links-out`` writes them; else index arrays."""
    from ..validate import check_limit

    heads = np.flatnonzero(code[1:] != code[:-1]) + 1
    if len(heads) + 1 != n_names:
        return [np.asarray(sel) for sel in groups_in_order(code, f"counters file {path}")]
    check_limit(n_names, "phases", f"counters file {path}")
    bounds = [0, *heads.tolist(), len(code)]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def _bad_value(path: str, lines: np.ndarray, bad: tuple[int, str], col: str, dtype) -> None:
    """Raise the error of a field that is no integer or number."""
    from ..validate import show
    k, text = bad
    raise RankmapError(f"{path}:{lines[k]}: bad {col} value {show(text, 40)}: expected "
                       f"{'an integer' if dtype is np.int64 else 'a number'}")


def read_runs(paths: list[str], labels: list[str] | None = None) -> list[CounterRun]:
    """Read several counters files (several placements or runs), labelled by ``labels`` or by
    their file names; labels must be unique.

    Parameters
    ----------
    paths : list of str
        The files.
    labels : list of str, optional
        One unique label per file (default: file names).

    Returns
    -------
    list of CounterRun
        The runs, in order.

    Raises
    ------
    RankmapError
        Repeated labels, a count of labels different from the files', or a malformed file.
    """
    if not paths:
        raise RankmapError("no counters files given")
    if labels is not None and len(labels) != len(paths):
        raise RankmapError(f"--labels gives {len(labels)} labels for {len(paths)} files")
    # labels are known from the names: a repeat is said before any file is read (eight
    # copies of a 40 MB file were read, 52 s, before it was)
    names = [(labels[i] if labels else None) or os.path.splitext(os.path.basename(p))[0]
             for i, p in enumerate(paths)]
    seen: dict[str, str] = {}
    for name, path in zip(names, paths):
        if name in seen:
            raise RankmapError(f"label {name!r} is used for both {seen[name]} and {path}: "
                               "give distinct --labels")
        seen[name] = path
    runs = [read_counters(p, names[i]) for i, p in enumerate(paths)]
    units = {r.unit for r in runs}
    if len(units) > 1:
        raise RankmapError("files mix bytes and packets counters: "
                           + ", ".join(f"{r.path}: {r.unit}" for r in runs))
    return runs
