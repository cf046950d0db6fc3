"""Statistics of one phase's counters: empirical PDF and CDF, plateau point, percentiles.

The plateau point (seed 000, section III) is the smallest x such that a fraction y of all
links carry at most x (bytes or packets); it is computed by
:func:`rankmap.metrics.plateau_point`, the same definition the model's metrics use.
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from ..metrics import DEFAULT_PLATEAU_Y, plateau_point
from ..validate import as_float

__all__ = ["DEFAULT_PERCENTILES", "empirical_cdf", "empirical_pdf", "phase_stats",
           "parse_percentiles", "percentile_label"]

#: percentiles reported by default (of the per-link counts).
DEFAULT_PERCENTILES = (50.0, 90.0, 99.0)


def empirical_cdf(values) -> tuple[np.ndarray, np.ndarray]:
    """Sorted counts x and the fraction of links carrying at most each x (a step function).

    Parameters
    ----------
    values : array_like of float
        Per-link counts (bytes or packets).

    Returns
    -------
    tuple of numpy.ndarray
        Sorted counts x and the fraction of links carrying at most each x (float64, same length).
    """
    v = np.sort(np.asarray(values, dtype=np.float64))
    return v, np.arange(1, len(v) + 1) / max(len(v), 1)


#: most bins a histogram may have
MAX_BINS = 100_000


def empirical_pdf(values, bins: int | np.ndarray = 40) -> tuple[np.ndarray, np.ndarray]:
    """Histogram of the counts: bin edges (count units) and the fraction of links per bin.

    Parameters
    ----------
    values : array_like of float
        Per-link counts (finite).
    bins : int or numpy.ndarray
        Number of bins (1 to :data:`MAX_BINS`; fewer when float64 cannot split the counts'
        range so finely), or their edges (count units, increasing).

    Returns
    -------
    tuple of numpy.ndarray
        Bin edges (count units, bins + 1) and the fraction of all links in each bin: they add
        up to 1 with a number of bins, and with edges when the edges cover every count
        (links outside them are in no bin).

    Raises
    ------
    RankmapError
        A count that is not finite, or bins that are no count in range nor increasing edges.
    """
    v = _finite_counts(values)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if not 1 <= bins <= MAX_BINS:
            raise RankmapError(f"bad number of bins {bins}: must be 1 to {MAX_BINS}")
        bins = _count_edges(v, int(bins))
    else:
        edges = np.asarray(bins, dtype=np.float64)
        if (edges.ndim != 1 or not 2 <= edges.size <= MAX_BINS + 1
                or not np.isfinite(edges).all() or (np.diff(edges) <= 0).any()):
            raise RankmapError(f"bad bin edges: give 2 to {MAX_BINS + 1} increasing finite "
                               "numbers")
        bins = edges
    hist, edges = np.histogram(v, bins=bins)
    return edges, hist / max(len(v), 1)


def _count_edges(v: np.ndarray, n: int) -> np.ndarray:
    """``n`` equal bins over the counts' range (numpy's: a single value v gets v - 0.5 to
    v + 0.5), fewer when float64 cannot split the range so finely (counts 2 apart at 1e16
    made numpy raise)."""
    lo, hi = (float(v.min()), float(v.max())) if v.size else (0.0, 1.0)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
        if lo == hi:
            hi = float(np.nextafter(lo, np.inf))
    while True:
        # halves, then doubled: a range wider than float64's largest number stays finite
        edges = np.linspace(lo / 2, hi / 2, n + 1) * 2
        if n == 1 or (np.diff(edges) > 0).all():
            edges[0], edges[-1] = lo, hi
            return edges
        n = max(1, n // 2)


def _finite_counts(values) -> np.ndarray:
    """The counts as a 1-D float64 array; a NaN or infinite count is an error."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size and not np.isfinite(v).all():
        raise RankmapError(f"link counts hold a non-finite value ({v[~np.isfinite(v)][0]})")
    return v


def phase_stats(values, y: float = DEFAULT_PLATEAU_Y,
                percentiles=DEFAULT_PERCENTILES) -> dict:
    """``links``, ``max``, ``mean``, ``percentiles`` {"p50": x, ...} and ``plateau`` {y, x}
    of one phase's per-link counts (same unit as the counts). A percentile is a measured count:
    the smallest that the given share of the links carry at most, as the plateau point is.

    Parameters
    ----------
    values : array_like of float
        One phase's per-link counts.
    y : float
        Fraction of links of the plateau point, in (0, 1].
    percentiles : sequence of float
        Percentiles to report, in [0, 100].

    Returns
    -------
    dict
        ``links``, ``max``, ``mean``, ``percentiles`` ({"p50": x, ...}) and ``plateau``
        ({"y", "x"}), counts in the unit of ``values``.
    """
    v = _finite_counts(values)
    if v.size == 0:
        raise RankmapError("no links to analyse")
    percentiles = [as_float(p, "percentile", 0, 100) for p in percentiles]
    y = as_float(y, "plateau fraction", 0, 1)
    # a link's own count, not one between two links: pXX is the smallest count that XX % of
    # the links carry at most, by the plateau point's rule (p99 = the plateau x at y = 0.99)
    pct = {percentile_label(p): plateau_point(v, p / 100) if p > 0 else float(v.min())
           for p in percentiles}
    return {"links": int(v.size), "max": float(v.max()), "mean": float(v.mean()),
            "percentiles": pct, "plateau": {"y": float(y), "x": plateau_point(v, y)}}


def parse_percentiles(text: str) -> tuple[float, ...]:
    """``"50,90,99"`` -> (50.0, 90.0, 99.0); each in [0, 100].

    Parameters
    ----------
    text : str
        Comma-separated percentiles, e.g. ``50,90,99``.

    Returns
    -------
    tuple of float
        The percentiles, each in [0, 100].

    Raises
    ------
    RankmapError
        A value that is not a number in [0, 100].
    """
    out = []
    for part in text.split(","):
        part = part.strip()
        try:
            p = float(part)
        except ValueError:
            raise RankmapError(f"bad percentile {part!r}: expected a number in [0, 100]") from None
        if not 0 <= p <= 100:
            raise RankmapError(f"bad percentile {part!r}: must be in [0, 100]")
        if p in out:   # one column each: a second would be dropped without a word
            raise RankmapError(f"bad percentiles {text!r}: {part} is given twice")
        out.append(p)
    return tuple(out)


def percentile_label(p: float) -> str:
    """The column of percentile ``p``: ``p50``, ``p99.9``, and every digit it needs
    (``p50.00001``: rounded to 6 digits it was ``p50``, and two percentiles shared a column).

    Parameters
    ----------
    p : float
        A percentile in [0, 100].

    Returns
    -------
    str
    """
    short = f"{p:g}"
    return f"p{short}" if float(short) == p else f"p{p!r}"
