"""Correlation of plateau x with time: correlation vs y (seed 000, Figures 7-8) and time vs
plateau x with a fitted line (Figure 16)."""

from __future__ import annotations

import numpy as np

from ..report.figures import pyplot
from .counters import count_scale

__all__ = ["plot_correlation_vs_y", "plot_time_vs_plateau"]


def plot_correlation_vs_y(results: dict, title: str = ""):
    """Pearson r (solid) and Spearman rho (dashed) of plateau x with time against y, one
    colour per phase; the best y and the busiest link (y = 1.0) are marked. ``results`` is
    :func:`rankmap.counters.correlation_table`'s first value; returns the figure.

    Parameters
    ----------
    results : dict
        Per phase, the correlation sweep (:func:`rankmap.counters.correlation_table`).
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=110)
    for phase, res in results.items():
        ys = np.array([e["y"] for e in res["sweep"]])
        order = np.argsort(ys)
        pr = np.array([np.nan if e["pearson"] is None else e["pearson"] for e in res["sweep"]])
        sr = np.array([np.nan if e["spearman"] is None else e["spearman"] for e in res["sweep"]])
        line, = ax.plot(ys[order], pr[order], "-", label=f"{phase}: Pearson r", linewidth=1.5)
        ax.plot(ys[order], sr[order], "--", color=line.get_color(),
                label=f"{phase}: Spearman rho", linewidth=1.2)
        b = res["best"]
        if b is not None:
            ax.plot([b["y"]], [b[res["by"]]], "*", color=line.get_color(), markersize=13,
                    markeredgecolor="black", label=f"{phase}: best y = {b['y']:g}")
        busy = res["busiest"]
        if busy[res["by"]] is not None:
            ax.plot([1.0], [busy[res["by"]]], "s", color=line.get_color(), markersize=7,
                    markeredgecolor="black", label=f"{phase}: busiest link (y = 1)")
    ax.axhline(0, color="grey", linewidth=0.6)
    ax.set_xlabel("plateau fraction y (fraction of links at or below x)")
    ax.set_ylabel("correlation of plateau x with time (unitless)")
    ax.set_ylim(-1.05, 1.05)
    ax.set_title((title + "\n" if title else "") + "which y predicts time best", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


def plot_time_vs_plateau(results: dict, unit: str = "bytes", title: str = ""):
    """One panel per phase: each placement's time (seconds) against its plateau x at the
    best y and at y = 1.0 (busiest link), each with its least-squares line; returns the
    figure.

    Parameters
    ----------
    results : dict
        Per phase, the correlation sweep with plateau x per placement.
    unit : str
        ``bytes`` (shown in MiB) or ``packets``.
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    plt = pyplot()
    n = len(results)
    fig, axes = plt.subplots(1, n, figsize=(6.0 * n, 4.6), dpi=110, squeeze=False)
    for ax, (phase, res) in zip(axes[0], results.items()):
        t = np.asarray(res["seconds"], dtype=np.float64)
        ys = sorted(res["x"], reverse=True)
        vmax = max(max(res["x"][y]) for y in ys)
        scale, xlabel = count_scale(unit, vmax)
        per = xlabel[xlabel.index("(") + 1:-1] if "(" in xlabel else "packet"
        for y, marker in zip(ys, ("s", "o")):
            x = np.asarray(res["x"][y]) / scale
            entry = next(e for e in res["sweep"] if e["y"] == y)
            r = entry["pearson"]
            name = "busiest link (y = 1)" if y == 1.0 else f"plateau y = {y:g}"
            pts = ax.scatter(x, t * 1e3, marker=marker, s=30, alpha=0.8,
                             label=f"{name}, r = {'n/a' if r is None else f'{r:.3f}'}")
            if np.ptp(x) > 0:
                slope, icpt = np.polyfit(x, t * 1e3, 1)
                xx = np.linspace(x.min(), x.max(), 2)
                ax.plot(xx, slope * xx + icpt, "-", color=pts.get_facecolor()[0], linewidth=1,
                        label=f"fit: {slope:.3g} ms per {per}")
        for lab, xv, tv in zip(res["labels"], np.asarray(res["x"][ys[-1]]) / scale, t * 1e3):
            ax.annotate(lab, (xv, tv), fontsize=6, xytext=(3, 3), textcoords="offset points")
        ax.set_xlabel("plateau x: " + xlabel)
        ax.set_ylabel("measured time (ms)")
        ax.set_title((title + ": " if title else "") + f"phase {phase}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig
