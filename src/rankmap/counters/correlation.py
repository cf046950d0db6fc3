"""Which plateau fraction y predicts time best (seed 000, section VI, Figures 7-9).

For every y of a sweep, each placement's plateau x (per phase) is correlated with its
measured time over all placements, with Pearson's r (linear) and Spearman's rho (rank order),
both from :mod:`scipy.stats`. The busiest link (y = 1.0) is always evaluated beside the sweep.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..errors import RankmapError
from ..metrics import plateau_point
from .reader import ALL_PHASES


def parse_sweep(text: str) -> np.ndarray:
    """``"0.6:1.0"`` (step 0.01) or ``"0.6:1.0:0.05"`` -> the y values, both ends included,
    each in (0, 1].

    Parameters
    ----------
    text : str
        ``START:STOP`` (step 0.01) or ``START:STOP:STEP``.

    Returns
    -------
    numpy.ndarray
        float64 y values from START to STOP, both included, each in (0, 1].

    Raises
    ------
    RankmapError
        A malformed sweep, a value outside (0, 1], or more points than
        ``RANKMAP_MAX_POINTS``.
    """
    parts = text.split(":")
    if len(parts) not in (2, 3):
        raise RankmapError(f"bad --sweep-y {text!r}: expected START:STOP[:STEP], e.g. 0.6:1.0")
    from ..validate import check_limit, parse_float_text, show

    lo, hi = (parse_float_text(p, f"--sweep-y {show(text, 40)}: value") for p in parts[:2])
    step = parse_float_text(parts[2], f"--sweep-y {show(text, 40)}: step") \
        if len(parts) == 3 else 0.01
    if not (0 < lo <= hi <= 1) or step <= 0:
        raise RankmapError(f"bad --sweep-y {show(text)}: need 0 < START <= STOP <= 1 and "
                           "STEP > 0")
    check_limit(int((hi - lo) / step) + 1, "points", f"--sweep-y {text}")
    n = int(math.floor((hi - lo) / step + 1e-9)) + 1
    ys = np.round(lo + step * np.arange(n), 10)
    if ys[-1] < hi - 1e-9:
        ys = np.append(ys, hi)
    return ys


def read_times(path: str) -> dict[tuple[str, str], float]:
    """Read ``label,phase,seconds`` rows (``phase`` is ``all`` for counters without phases)
    into {(label, phase): seconds}; malformed rows name the file and line.

    Parameters
    ----------
    path : str
        The CSV file (``label,phase,seconds``).

    Returns
    -------
    dict of (str, str) to float
        Seconds per (label, phase).

    Raises
    ------
    RankmapError
        A malformed or repeated row (naming the file and line).
    """
    from ..validate import read_csv_rows
    rows = read_csv_rows(path, "times file")
    if not rows:
        raise RankmapError(f"{path}: empty file, expected the header label,phase,seconds")
    header = [h.strip().lower() for h in rows[0]]
    if header != ["label", "phase", "seconds"]:
        raise RankmapError(f"{path}:1: header {','.join(header)!r}, expected label,phase,seconds")
    out: dict[tuple[str, str], float] = {}
    for n, row in enumerate(rows[1:], start=2):
        if not row or all(not f.strip() for f in row):
            continue
        if len(row) != 3:
            raise RankmapError(f"{path}:{n}: {len(row)} fields, expected label,phase,seconds")
        label, phase, sec = (f.strip() for f in row)
        try:
            t = float(sec)
        except ValueError:
            raise RankmapError(f"{path}:{n}: bad seconds value {sec!r}") from None
        if not math.isfinite(t) or t < 0:
            raise RankmapError(f"{path}:{n}: bad seconds value {sec!r}: must be >= 0")
        if not label or not phase:
            raise RankmapError(f"{path}:{n}: empty label or phase")
        if (label, phase) in out:
            raise RankmapError(f"{path}:{n}: second time for label {label!r} phase {phase!r}")
        out[(label, phase)] = t
    if not out:
        raise RankmapError(f"{path}: no times after the header")
    return out


def correlate(x, t) -> tuple[float | None, float | None]:
    """Pearson r and Spearman rho of x with t; None when undefined (a constant series).

    Parameters
    ----------
    x : array_like of float
        Plateau points of the placements (count units).
    t : array_like of float
        Their times (s).

    Returns
    -------
    tuple of (float or None, float or None)
        Pearson r and Spearman rho; None when undefined (a constant series, fewer than 3).

    Raises
    ------
    RankmapError
        Series of different lengths, or a value that is not finite.
    """
    from scipy import stats

    x = np.asarray(x, dtype=np.float64).ravel()
    t = np.asarray(t, dtype=np.float64).ravel()
    if x.shape != t.shape:
        raise RankmapError(f"{len(x)} plateau points and {len(t)} times: one time each")
    if not (np.isfinite(x).all() and np.isfinite(t).all()):
        raise RankmapError("plateau points and times must be finite numbers")
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(t) == 0:
        return None, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = float(stats.pearsonr(x, t)[0])
        rho = float(stats.spearmanr(x, t)[0])
    return (None if math.isnan(r) else r), (None if math.isnan(rho) else rho)


def sweep_phase(series: list[np.ndarray], times: np.ndarray, ys, by: str = "pearson") -> dict:
    """Correlation of plateau x with time over placements for every y in ``ys``.

    ``series[i]`` is placement i's per-link counts, ``times[i]`` its time (seconds).
    Returns {"sweep": [{"y", "pearson", "spearman"}] (y = 1.0 added when ``ys`` lacks it),
    "best": entry of ``ys`` with the highest correlation ``by`` (pearson or spearman; ties ->
    the larger y), "busiest": the y = 1.0 entry,
    "x": {y: [plateau x per placement]} for the best and busiest y,
    "note": why nothing correlates (``times are all equal: no correlation``) or None}.

    Parameters
    ----------
    series : list of numpy.ndarray
        Per placement, the per-link counts of the phase.
    times : numpy.ndarray
        Per placement, the phase's time (s).
    ys : numpy.ndarray
        The y values, in (0, 1].
    by : str
        ``pearson`` or ``spearman``.

    Returns
    -------
    dict
        ``sweep``, ``best``, ``busiest``, ``x`` and ``note`` as above (plateau x in count
        units).
    """
    if by not in ("pearson", "spearman"):
        raise RankmapError(f"bad correlation {by!r}: pearson or spearman")
    if len(series) < 3:
        raise RankmapError(f"correlating needs at least 3 placements with times, got {len(series)}")
    asked = [float(y) for y in ys]
    ys = asked + ([] if 1.0 in asked else [1.0])
    # plateau x for every y and placement, from each placement's sorted counts
    xs = {}
    for y in ys:
        xs[y] = np.array([plateau_point(s, y) for s in series])
    sweep = []
    for y in ys:
        r, rho = correlate(xs[y], times)
        sweep.append({"y": y, "pearson": r, "spearman": rho})
    defined = [e for e in sweep if e[by] is not None and e["y"] in asked]
    best = max(defined, key=lambda e: (round(e[by], 9), e["y"])) if defined else None
    busiest = next(e for e in sweep if e["y"] == 1.0)
    # why no y correlates: said in the warnings and on the plots, not only as n/a
    note = None
    if np.ptp(np.asarray(times, dtype=np.float64)) == 0:
        note = "times are all equal: no correlation"
    elif all(e["pearson"] is None and e["spearman"] is None for e in sweep):
        note = "plateau x is the same for every run at every y: no correlation"
    out = {"sweep": sweep, "best": best, "busiest": busiest, "by": by,
           "x": {y: xs[y].tolist() for y in {1.0, best["y"] if best else 1.0}}, "note": note}
    return out


def correlation_table(runs, times: dict, ys, by: str = "pearson") -> tuple[dict, list[str]]:
    """Sweep every phase that has a time for at least three runs.

    Returns ({phase: sweep_phase result + "labels", "seconds"}, warnings). A time given for
    phase ``all`` of a run whose counters have several phases is matched with the counters
    summed over phases, with a warning (seed 000, section V: aggregates correlate poorly).

    Parameters
    ----------
    runs : list of CounterRun
        The counters of every placement or run.
    times : dict
        ``{(label, phase): seconds}`` (:func:`read_times`).
    ys : numpy.ndarray
        The y values swept, in (0, 1].
    by : str
        ``pearson`` or ``spearman``: which correlation picks the best y.

    Returns
    -------
    tuple of (dict, list of str)
        Per phase :func:`sweep_phase`'s result plus ``labels`` and ``seconds``, and warnings.
    """
    notes: list[str] = []
    known = {r.label for r in runs}
    unknown = sorted({lab for lab, _ph in times} - known)
    if unknown:
        notes.append(f"times for unknown labels ignored: {', '.join(unknown)}")
    phases = list(dict.fromkeys(ph for _lab, ph in times))
    result = {}
    for ph in phases:
        labels, series, secs = [], [], []
        for r in runs:
            if (r.label, ph) not in times:
                continue
            if ph in r.phases:
                series.append(r.phases[ph].values)
            elif ph == ALL_PHASES:
                series.append(r.aggregated().values)
                notes.append(f"{r.path}: its {len(r.phases)} phases are summed to match the "
                             f"'all' time: counters spanning several phases correlate poorly "
                             f"with time (paper 000, section V); give per-phase times")
            else:
                raise RankmapError(f"times give phase {ph!r} for {r.label!r} but {r.path} has "
                                   f"phases {', '.join(r.phases)}")
            labels.append(r.label)
            secs.append(times[(r.label, ph)])
        missing = [r.label for r in runs if (r.label, ph) not in times]
        if missing:     # a run left out of the correlation is said, as an unknown label is
            notes.append(f"phase {ph}: no time for {', '.join(missing)}: left out of the "
                         "correlation")
        if len(labels) < 3:
            notes.append(f"phase {ph}: only {len(labels)} runs with times, need 3 to correlate")
            continue
        res = sweep_phase(series, np.array(secs), ys, by)
        if res["note"]:
            notes.append(f"phase {ph}: {res['note']}")
        res["labels"] = labels
        res["seconds"] = secs
        result[ph] = res
    if not result:
        raise RankmapError("no phase has times for at least 3 counters files: check the "
                           "labels and phases in the times file")
    return result, notes


__all__ = ["ALL_PHASES", "correlate", "correlation_table", "parse_sweep", "read_times",
           "sweep_phase"]
