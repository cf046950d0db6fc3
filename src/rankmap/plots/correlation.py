"""Correlation of plateau x with time: correlation vs y (seed 000, Figures 7-8) and time vs
plateau x with a fitted line (Figure 16)."""

from __future__ import annotations

import numpy as np

from ..report.figures import pyplot
from .counters import count_scale

__all__ = ["plot_correlation_vs_y", "plot_time_vs_plateau"]


def _time_unit(seconds) -> tuple[float, str]:
    """Multiplier and name of the unit the measured times read best in (us, ms or s)."""
    top = max((abs(float(t)) for t in seconds), default=0.0)
    if top >= 10:
        return 1.0, "s"
    if 0 < top < 0.01:
        return 1e6, "us"
    return 1e3, "ms"


def plot_correlation_vs_y(results: dict, title: str = ""):
    """Pearson r (solid) and Spearman rho (dashed) of plateau x with time against y, one
    colour per phase; the best y and the busiest link (y = 1.0) are marked. A phase whose
    correlation is undefined (times all equal, or plateau points equal at every y) draws no
    curve and is named in a note on the plot. The legend is outside the axes. ``results``
    is :func:`rankmap.counters.correlation_table`'s first value; returns the figure.

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
    fig, ax = plt.subplots(figsize=(9.6, 4.8), dpi=110, layout="constrained")
    notes, all_ys = [], []
    for phase, res in results.items():
        ys = np.array([e["y"] for e in res["sweep"]])
        all_ys.extend(ys.tolist())
        order = np.argsort(ys)
        pr = np.array([np.nan if e["pearson"] is None else e["pearson"] for e in res["sweep"]])
        sr = np.array([np.nan if e["spearman"] is None else e["spearman"] for e in res["sweep"]])
        if np.isnan(pr).all() and np.isnan(sr).all():
            # nothing to draw: a legend entry for no curve would read as a curve hidden
            notes.append(f"phase {phase}: {res.get('note') or 'no correlation'}")
            continue
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
    lo, hi = min(all_ys), max(all_ys)
    pad = max(0.01, (hi - lo) * 0.03)
    ax.set_xlim(lo - pad, hi + pad)       # the y swept, also when no curve is drawn
    if notes:
        ax.text(0.5, 0.5 if len(notes) == len(results) else 0.06, "\n".join(notes),
                transform=ax.transAxes, ha="center",
                va="center" if len(notes) == len(results) else "bottom", fontsize=10,
                bbox={"facecolor": "white", "edgecolor": "grey", "alpha": 0.9})
    ax.set_xlabel("plateau fraction y (fraction of links at or below x)")
    ax.set_ylabel("correlation of plateau x with time (unitless)")
    ax.set_ylim(-1.05, 1.05)
    ax.set_title((title + "\n" if title else "") + "which y predicts time best", fontsize=9)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        # outside the axes: inside, it covered a phase's curves
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def plot_time_vs_plateau(results: dict, unit: str = "bytes", title: str = ""):
    """Each placement's measured time against its plateau x, with the least-squares line:
    one row of panels per phase, one panel for the busiest link (y = 1.0) and one for the
    best y (when it is not 1.0), each with its own x axis and unit (the busiest link
    carries far more than the plateau point). A panel whose correlation is undefined (times
    all equal) draws no line and says so; returns the figure.

    Parameters
    ----------
    results : dict
        Per phase, the correlation sweep with plateau x per placement.
    unit : str
        ``bytes`` (shown in B, KiB or MiB) or ``packets``.
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    plt = pyplot()
    panels = {phase: sorted(res["x"], reverse=True) for phase, res in results.items()}
    ncol = max(len(ys) for ys in panels.values())
    fig, axes = plt.subplots(len(results), ncol, figsize=(5.6 * ncol, 4.4 * len(results)),
                             dpi=110, squeeze=False, layout="constrained")
    for row, (phase, res) in zip(axes, results.items()):
        mult, tunit = _time_unit(res["seconds"])
        t = np.asarray(res["seconds"], dtype=np.float64) * mult
        for ax in row[len(panels[phase]):]:
            ax.set_axis_off()       # a phase whose best y is 1: the busiest link alone
        for ax, y, marker in zip(row, panels[phase], ("s", "o")):
            raw = np.asarray(res["x"][y], dtype=np.float64)
            scale, xlabel = count_scale(unit, float(raw.max(initial=0.0)))
            per = xlabel[xlabel.index("(") + 1:-1] if "(" in xlabel else "packet"
            x = raw / scale
            entry = next(e for e in res["sweep"] if e["y"] == y)
            r, rho = entry["pearson"], entry["spearman"]
            name = "busiest link (y = 1)" if y == 1.0 else f"plateau point at best y = {y:g}"
            pts = ax.scatter(x, t, marker=marker, s=30, alpha=0.8,
                             color="C0" if y == 1.0 else "C1",
                             label=f"{name}: r = " + ("n/a" if r is None else f"{r:.3f}") +
                             ", rho = " + ("n/a" if rho is None else f"{rho:.3f}"))
            if r is not None:       # a line only where the correlation is defined
                slope, icpt = np.polyfit(x, t, 1)
                xx = np.linspace(x.min(), x.max(), 2)
                ax.plot(xx, slope * xx + icpt, "-", color=pts.get_facecolor()[0], linewidth=1,
                        label=f"fit: {slope:.3g} {tunit} per {per}")
            else:
                why = (res.get("note") or ("times are all equal" if np.ptp(t) == 0 else
                                           "plateau x is the same for every run"))
                ax.text(0.5, 0.8, f"{why.split(': no correlation')[0]}: no correlation, "
                        "no fit", transform=ax.transAxes, ha="center", va="center",
                        fontsize=9, bbox={"facecolor": "white", "edgecolor": "grey",
                                          "alpha": 0.9})
            for lab, xv, tv in zip(res["labels"], x, t):
                ax.annotate(lab, (xv, tv), fontsize=6, xytext=(3, 3), textcoords="offset points")
            ax.set_xlabel(f"{name}: " + xlabel, fontsize=8)
            ax.set_ylabel(f"measured time ({tunit})")
            ax.set_title((title + ": " if title else "") + f"phase {phase}, {name}", fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="best")
    return fig
