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


def _column(text: np.ndarray, lines: np.ndarray, path: str, col: str, dtype) -> np.ndarray:
    """Convert a text column to numbers; on failure name the first bad line."""
    try:
        if dtype is np.int64:
            return np.char.lstrip(text, "+").astype(np.int64)
        return text.astype(np.float64)
    except (ValueError, OverflowError):
        from ..validate import INT64_MAX, show
        for k, t in enumerate(text.tolist()):
            try:
                v = int(t) if dtype is np.int64 else float(t)
                if dtype is np.int64 and abs(v) > INT64_MAX:
                    raise ValueError
            except ValueError:
                raise RankmapError(f"{path}:{lines[k]}: bad {col} value {show(t, 40)}: expected "
                                   f"{'an integer' if dtype is np.int64 else 'a number'}") from None
        raise


def _check_unique_links(path: str, lines: np.ndarray, phase_of: np.ndarray, cols: dict):
    """Refuse a link listed twice in one phase (naming both lines): its count would be taken
    twice, or once, silently."""
    key = np.unique(phase_of, return_inverse=True)[1].astype(np.int64)
    for c in sorted(cols):
        code = np.unique(cols[c], return_inverse=True)[1].astype(np.int64)
        key = np.unique(key * (int(code.max(initial=0)) + 1) + code, return_inverse=True)[1]
    order = np.argsort(key, kind="stable")
    same = np.nonzero(key[order][1:] == key[order][:-1])[0]
    if same.size:
        first, again = order[same[0]], order[same[0] + 1]
        row = ",".join(f"{c}={cols[c][first]}" for c in cols)
        raise RankmapError(f"{path}:{lines[again]}: link {row} is listed twice in phase "
                           f"{phase_of[first]} (line {lines[first]} too)")


def read_counters(path: str, label: str | None = None) -> CounterRun:
    """Read one counters CSV into a :class:`CounterRun` labelled ``label`` (default: the
    file name without extension). Counts are bytes or packets per directed link; a malformed
    row raises :class:`RankmapError` naming the file and line number.

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
    label = label or os.path.splitext(os.path.basename(path))[0]
    from ..validate import read_csv_rows
    rows = read_csv_rows(path, "counters file")
    if not rows:
        raise RankmapError(f"{path}: empty file, expected a header such as src,dim,dir,dst,bytes")
    header = [h.strip().lower() for h in rows[0]]
    if len(set(header)) != len(header):
        raise RankmapError(f"{path}:1: repeated column in header {','.join(header)}")
    unit = next((c for c in VALUE_COLUMNS if c in header), None)
    if unit is None:
        raise RankmapError(f"{path}:1: header {','.join(header)} has no 'bytes' or 'packets' column")
    if "link" not in header and not ("src" in header and "dst" in header):
        raise RankmapError(f"{path}:1: header {','.join(header)} names no link: expected "
                           "src,dim,dir,dst (or the machine's src,...,dst columns) or link")
    has_phase = "phase" in header
    idx = {c: i for i, c in enumerate(header)}
    int_cols = [c for c in INT_COLUMNS if c in idx]
    lines = np.arange(2, len(rows) + 1)
    keep = [i for i, r in enumerate(rows[1:]) if any(f.strip() for f in r)]
    body = [rows[1 + i] for i in keep]
    lines = lines[keep]
    widths = np.fromiter((len(r) for r in body), dtype=np.int64, count=len(body))
    if (widths != len(header)).any():
        k = int(np.nonzero(widths != len(header))[0][0])
        raise RankmapError(f"{path}:{lines[k]}: {widths[k]} fields, the header has {len(header)}")
    if not body:
        raise RankmapError(f"{path}: no link rows after the header")
    table = np.char.strip(np.array(body, dtype=str))
    values = _column(table[:, idx[unit]], lines, path, unit, np.float64)
    # counts are analysed as doubles: above 2^53 one would be rounded (9007199254740993 read
    # as ...992), so it is refused, not rounded (9 PB on one link)
    bad = ~np.isfinite(values) | (values < 0) | (values >= 2.0 ** 53)
    if bad.any():
        k = int(np.nonzero(bad)[0][0])
        raise RankmapError(f"{path}:{lines[k]}: bad {unit} value {str(table[k, idx[unit]])!r}: "
                           "expected a count from 0 to 2^53 (counts above it would be rounded)")
    cols = {}
    for c, i in idx.items():
        if c in (unit, "phase"):
            continue
        cols[c] = (_column(table[:, i], lines, path, c, np.int64) if c in int_cols
                   else table[:, i])
    if "dir" in cols and not np.isin(cols["dir"], (1, -1)).all():
        k = int(np.nonzero(~np.isin(cols["dir"], (1, -1)))[0][0])
        raise RankmapError(f"{path}:{lines[k]}: bad dir value {str(table[k, idx['dir']])!r}: "
                           "expected 1 or -1")
    phase_of = table[:, idx["phase"]] if has_phase else np.full(len(table), ALL_PHASES)
    if (phase_of == "").any():
        raise RankmapError(f"{path}:{lines[int(np.nonzero(phase_of == '')[0][0])]}: empty phase name")
    if not ("class" in cols and "lane" not in cols):
        # (a dragonfly file without lanes, written before them, lists parallel global links
        # alike: they are told apart, and repeats found, against the machine's links)
        _check_unique_links(path, lines, phase_of, {c: v for c, v in cols.items()
                                                    if c != "streams"})
    phases = {}
    for sel in groups_in_order(phase_of, f"counters file {path}"):
        name = str(phase_of[sel[0]])
        phases[name] = CounterPhase(name, values[sel], {c: v[sel] for c, v in cols.items()},
                                     lines[sel])
    sizes = {len(p.values) for p in phases.values()}
    if len(sizes) > 1:
        raise RankmapError(f"{path}: phases have different numbers of links "
                           f"({', '.join(f'{p.name}: {len(p.values)}' for p in phases.values())})")
    return CounterRun(label, path, unit, phases, has_phase)


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
