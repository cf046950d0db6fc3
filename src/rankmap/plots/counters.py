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
    plt = pyplot()
    vmax = max((float(np.max(v)) for v in series.values() if len(v)), default=0.0)
    scale, xlabel = count_scale(unit, vmax)
    edges = np.linspace(0.0, vmax if vmax > 0 else 1.0, bins + 1)
    fig, (top, bot) = plt.subplots(2, 1, figsize=(7.5, 7.0), dpi=110, sharex=True)
    for label, v in series.items():
        e, frac = empirical_pdf(v, edges)
        # every bin drawn with its width: the last (the busiest links) closes at its edge
        line, = top.step(e / scale, np.append(frac, frac[-1:]), where="post", label=label,
                         linewidth=1.3)
        xs, fs = empirical_cdf(v)
        bot.step(np.concatenate(([0.0], xs)) / scale, np.concatenate(([0.0], fs)),
                 where="post", color=line.get_color(), label=label, linewidth=1.3)
        px = plateau_point(v, y) / scale
        bot.plot([px], [y], "o", color=line.get_color(), markersize=7,
                 markeredgecolor="black",
                 label=f"{label} plateau x = {px:.4g} {xlabel.rsplit('(', 1)[-1].rstrip(')')}"
                 if "(" in xlabel else f"{label} plateau x = {px:.4g}")
    top.set_ylabel("fraction of links in the bin")
    top.set_ylim(bottom=0)      # bins of 2 and 3 links are not a tall square wave
    top.set_title((title + "\n" if title else "") + f"PDF (top) and CDF (bottom), "
                  f"{len(edges) - 1} bins; dots: plateau points at y = {y:g}", fontsize=9)
    top.legend(fontsize=8, title="placement", title_fontsize=8)
    top.grid(alpha=0.3)
    bot.axhline(y, color="grey", linestyle=":", linewidth=0.8, label=f"y = {y:g}")
    bot.set_xlabel(xlabel)
    bot.set_ylabel("fraction of links carrying at most x")
    bot.set_ylim(0, 1.03)
    bot.grid(alpha=0.3)
    bot.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig
