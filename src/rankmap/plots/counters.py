"""Empirical PDF and CDF of per-link counters with plateau points (seed 000, Figure 1)."""

from __future__ import annotations

import numpy as np

from ..counters.analysis import empirical_cdf, empirical_pdf
from ..metrics import plateau_point
from ..report.figures import pyplot

__all__ = ["count_scale", "plot_pdf_cdf"]


def count_scale(unit: str, vmax: float) -> tuple[float, str]:
    """Divisor and axis label for counts: MiB for bytes, thousands/millions for packets.

    Parameters
    ----------
    unit : str
        ``bytes`` or ``packets``.
    vmax : float
        The largest count shown.

    Returns
    -------
    tuple of (float, str)
        Divisor of the counts and the axis label (MiB for bytes; thousands or millions of
        packets).
    """
    if unit == "bytes":
        return (2**20, "bytes on a directed link (MiB)") if vmax >= 2**20 / 10 else \
               (1024.0, "bytes on a directed link (KiB)") if vmax >= 1024 else \
               (1.0, "bytes on a directed link (B)")
    if vmax >= 1e6:
        return 1e6, "packets on a directed link (millions)"
    if vmax >= 1e4:
        return 1e3, "packets on a directed link (thousands)"
    return 1.0, "packets on a directed link"


def plot_pdf_cdf(series: dict[str, np.ndarray], unit: str = "bytes", y: float = 0.99,
                 bins: int = 40, title: str = ""):
    """A two-panel figure: top, the fraction of links per count bin (PDF); bottom, the
    fraction of links carrying at most x (CDF) with each series' plateau point (x at ``y``)
    marked. ``series`` maps a label (placement) to its per-link counts; returns the figure.

    When a few busy links would squash the curves into the first tenth of a linear axis
    (:func:`rankmap.plots.cdf.log_x_edge`), x is logarithmic (the bins log-spaced, counts
    below the left edge, idle links included, drawn at it) and the axis label says so.

    Parameters
    ----------
    series : dict of str to numpy.ndarray
        Label (placement) -> per-link counts.
    unit : str
        ``bytes`` or ``packets``.
    y : float
        Fraction of links of the plateau point, in (0, 1].
    bins : int
        Histogram bins.
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    from ..counters.summary import fmt_count
    from .cdf import log_x_edge, set_log_x

    plt = pyplot()
    vmax = max((float(np.max(v)) for v in series.values() if len(v)), default=0.0)
    edge = log_x_edge(series.values(), y)
    # on a log axis, the unit of the middle decades (not 1e-05 MiB at the left edge)
    scale, xlabel = count_scale(unit, vmax if edge is None else float(np.sqrt(edge * vmax)))
    if edge is None:
        edges = np.linspace(0.0, vmax if vmax > 0 else 1.0, bins + 1)
    else:
        edges = np.geomspace(edge, vmax, bins + 1)

    def at_edge(v):
        v = np.asarray(v, dtype=np.float64)
        return v if edge is None else np.maximum(v, edge)

    fig, (top, bot) = plt.subplots(2, 1, figsize=(9.6, 7.0), dpi=110, sharex=True,
                                   layout="constrained")
    for label, v in series.items():
        e, frac = empirical_pdf(at_edge(v), edges)
        # every bin drawn with its width: the last (the busiest links) closes at its edge
        line, = top.step(e / scale, np.append(frac, frac[-1:]), where="post", label=label,
                         linewidth=1.3)
        xs, fs = empirical_cdf(at_edge(v))
        start = 0.0 if edge is None else edge
        bot.step(np.concatenate(([start], xs)) / scale, np.concatenate(([0.0], fs)),
                 where="post", color=line.get_color(), linewidth=1.3)
        px = plateau_point(v, y)
        bot.plot([float(at_edge(px)) / scale], [y], "o", color=line.get_color(), markersize=7,
                 markeredgecolor="black", label=f"{label} plateau x = {fmt_count(px, unit)}"
                 + ("" if unit == "bytes" else " packets"))
    top.set_ylabel("fraction of links in the bin")
    top.set_ylim(bottom=0)      # bins of 2 and 3 links are not a tall square wave
    spaced = "" if edge is None else " log-spaced"
    top.set_title((title + "\n" if title else "") + f"PDF (top) and CDF (bottom), "
                  f"{len(edges) - 1}{spaced} bins; dots: plateau points at y = {y:g}",
                  fontsize=9)
    # legends outside the axes: inside they covered the curves
    top.legend(fontsize=8, title="placement", title_fontsize=8, loc="upper left",
               bbox_to_anchor=(1.01, 1.0))
    top.grid(alpha=0.3)
    bot.axhline(y, color="grey", linestyle=":", linewidth=0.8, label=f"y = {y:g}")
    if edge is not None:
        set_log_x(bot, edge / scale, vmax / scale)
        xlabel += (f", log scale; links carrying less than {fmt_count(edge, unit)}, idle ones "
                   "included, are drawn at the left edge")
    bot.set_xlabel(xlabel, fontsize=9)
    bot.set_ylabel("fraction of links carrying at most x")
    bot.set_ylim(0, 1.03)
    bot.grid(alpha=0.3)
    bot.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig
