"""The link-load CDF of every candidate, with its plateau point marked (seed 000, Figure 1)."""

from __future__ import annotations

import os

import numpy as np

from ..evaluation import Comparison
from ..metrics import plateau_point

__all__ = ["plot_link_cdfs", "phase_file_names", "byte_unit", "log_x_edge", "set_log_x",
           "LOG_SPAN"]

#: a count axis is drawn in log x when its largest value is more than this many times the
#: lowest plateau point of the curves drawn: on a linear axis their bodies would be squashed
#: into its first tenth by a few busy links
LOG_SPAN = 10.0


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def phase_file_names(phase_names, prefix: str = "cdf", fmt: str = "png") -> list[str]:
    """One file name per phase, ``PREFIX-PHASE.FMT`` (:func:`rankmap.io.file_names.file_safe`);
    names that would come out alike get ``-2``, ``-3`` ... in phase order, so no plot
    replaces another.

    Parameters
    ----------
    phase_names : iterable of str
        The phases, in order.
    prefix : str
        File name prefix.
    fmt : str
        Extension (``png`` or ``svg``).

    Returns
    -------
    list of str
        Distinct file names (no folder), one per phase.
    """
    from ..io.file_names import distinct_paths, file_safe
    return distinct_paths([f"{prefix}-{file_safe(name)}.{fmt}" for name in phase_names])


def _short(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters with an ellipsis in the middle."""
    if len(text) <= width:
        return text
    half = (width - 3) // 2
    return text[:half] + "..." + text[len(text) - (width - 3 - half):]


def byte_unit(largest: float) -> tuple[str, float]:
    """The binary unit a byte axis reads best in, for values up to ``largest`` bytes.

    Parameters
    ----------
    largest : float
        The largest value shown (bytes).

    Returns
    -------
    tuple of (str, float)
        The unit's name (``B``, ``KiB``, ``MiB``, ``GiB``, ``TiB``) and its bytes.
    """
    for name, size in (("TiB", 2.0 ** 40), ("GiB", 2.0 ** 30), ("MiB", 2.0 ** 20),
                       ("KiB", 2.0 ** 10)):
        if largest >= size:
            return name, size
    return "B", 1.0


def log_x_edge(series, y: float) -> float | None:
    """The left edge of a log x axis for these per-link counts, or None when a linear axis
    reads well.

    A log axis is chosen when the largest count is more than :data:`LOG_SPAN` times the
    lowest positive plateau point (x at fraction ``y``) of the series: on a linear axis
    those curves would sit in its first tenth. The edge is the smallest positive count, but
    at most five decades below the largest; counts below it (idle links included) are drawn
    at the edge.

    Parameters
    ----------
    series : iterable of array_like
        Per-link counts of each curve.
    y : float
        Fraction of links of the plateau point, in (0, 1].

    Returns
    -------
    float or None
        The left edge (count units), or None for a linear axis.
    """
    arrays = [np.asarray(v, dtype=np.float64) for v in series]
    top = max((float(v.max()) for v in arrays if v.size), default=0.0)
    bodies = [plateau_point(v, y) for v in arrays if v.size]
    bodies = [b for b in bodies if b > 0]
    if top <= 0 or not bodies or top <= LOG_SPAN * min(bodies):
        return None
    low = min(float(v[v > 0].min()) for v in arrays if (v > 0).any())
    return max(low, top * 1e-5) / 1.25


def set_log_x(ax, edge: float, top: float) -> None:
    """Make ``ax``'s x axis logarithmic from ``edge`` to past ``top`` (both in the axis'
    unit), its ticks labelled as plain numbers (``0.5``, ``10``, ``200``).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes.
    edge : float
        The left edge.
    top : float
        The largest value drawn.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator

    ax.set_xscale("log")
    ax.set_xlim(edge, top * 1.25)
    ax.xaxis.set_major_locator(LogLocator(base=10))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    few = np.log10(top * 1.25 / edge) <= 2.5     # few decades: 2 and 5 labelled too
    ax.xaxis.set_minor_locator(LogLocator(base=10, subs=(2, 3, 4, 5, 6, 7, 8, 9)))
    ax.xaxis.set_minor_formatter(FuncFormatter(
        lambda v, _pos: f"{v:g}" if few and round(v / 10 ** np.floor(np.log10(v)), 6)
        in (2.0, 5.0) else ""))
    ax.tick_params(axis="x", which="minor", labelsize=7)


def _identical(a: np.ndarray, b: np.ndarray) -> bool:
    """Two sorted load vectors that draw the same curve (equal up to float rounding)."""
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-9, atol=0.0)


def _group_label(names: list[str], first=()) -> str:
    """``TXYZ``, or ``TXYZ (+2 identical: inorder, TXZY)``: the names in ``first`` (inorder,
    the reference, and the worst) listed before the others; a long list ends ``...``."""
    if len(names) == 1:
        return names[0]
    listed, width = [], 0
    for name in sorted(names[1:], key=lambda n: n not in first):    # (a stable sort)
        if listed and width + len(name) > 24:
            listed.append("...")
            break
        listed.append(name)
        width += len(name) + 2
    return f"{names[0]} (+{len(names) - 1} identical: {', '.join(listed)})"


def _curves(comp: Comparison, k: int, max_curves: int):
    """The curves of phase ``k`` to draw: groups of candidates whose loads are identical,
    each drawn once, best first; the winner's, inorder's (or the worst's) group and the
    worst's always, the best of the others in the slots left. Returns (groups, left out)
    where a group is (sorted loads, [candidates]) in ranking order."""
    groups: list = []
    for e in comp.candidates:
        loads = np.sort(np.asarray(e.phases[k].link_bytes, dtype=np.float64))
        for g in groups:
            if _identical(g[0], loads):
                g[1].append(e)
                break
        else:
            groups.append((loads, [e]))
    must = {0}
    for e in (comp.find("inorder"), comp.candidates[-1]):
        if e is not None:
            must.add(next(i for i, g in enumerate(groups) if e in g[1]))
    room = max(0, max_curves - len(must))
    others = [i for i in range(len(groups)) if i not in must][:room]
    chosen = sorted(must | set(others))
    drawn = [groups[i] for i in chosen]
    left_out = len(comp.candidates) - sum(len(g[1]) for g in drawn)
    return drawn, left_out


def plot_link_cdfs(comp: Comparison, out_dir: str, y: float = 0.99, max_curves: int = 8,
                   prefix: str = "cdf", fmt: str = "png") -> list[str]:
    """Write one CDF plot per phase into ``out_dir``; return the file paths.

    x: bytes carried by a directed link (in the unit that reads best: B to TiB; a log axis
    when a few busy links would squash the curves, :func:`log_x_edge`); y: fraction of all
    directed links carrying at most x. Each curve's plateau point (x at fraction ``y``) is
    marked. Candidates whose loads are identical in a phase are drawn as one curve, named
    together in the legend (``TXYZ (+4 identical: ...)``). At most ``max_curves`` curves are
    drawn: the best ones, plus ``inorder``'s when evaluated and the worst's, so the plot
    spans the range (the legend says how many candidates were left out).

    Parameters
    ----------
    comp : Comparison
        The evaluated candidates.
    out_dir : str
        Folder written into (created when missing).
    y : float
        Fraction of links of the plateau point, in (0, 1].
    max_curves : int
        Most curves drawn per plot.
    prefix : str
        File name prefix (``cdf-<phase>.png``).
    fmt : str
        ``png`` or ``svg``.

    Returns
    -------
    list of str
        The files written, one per phase.
    """
    plt = _pyplot()
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    phase_names = [p.name for p in comp.candidates[0].phases]
    files = phase_file_names(phase_names, prefix, fmt)
    styles = ("--", "-.", ":", (0, (5, 1, 1, 1)))
    for k, phase_name in enumerate(phase_names):
        drawn, left_out = _curves(comp, k, max_curves)
        fig, ax = plt.subplots(figsize=(9.6, 4.8), dpi=110, layout="constrained")
        top = max(float(g[0][-1]) if g[0].size else 0.0 for g in drawn)
        edge = log_x_edge([g[0] for g in drawn], y)
        # on a log axis, the unit of the middle decades (not 1e-05 MiB at the left edge)
        unit, size = byte_unit(top if edge is None else float(np.sqrt(edge * top)))
        for i, (loads, members) in enumerate(drawn):
            # the winner on top, solid and wider; the others dashed, so curves that nearly
            # coincide still show through one another
            best = comp.candidates[0] in members
            xs = (loads if edge is None else np.maximum(loads, edge)) / size
            frac = np.arange(1, len(loads) + 1) / max(len(loads), 1)
            label = _group_label([e.name for e in members],
                                 first=("inorder", comp.candidates[-1].name))
            line, = ax.step(xs, frac, where="post", label=label,
                            linewidth=2.4 if best else 1.4,
                            linestyle="-" if best else styles[i % len(styles)],
                            zorder=len(drawn) + 2 if best else len(drawn) - i)
            px = plateau_point(loads, y)
            px = (px if edge is None else max(px, edge)) / size
            ax.plot([px], [y], "o", color=line.get_color(), markersize=6,
                    zorder=len(drawn) + 3 if best else len(drawn) - i)
        ax.axhline(y, color="grey", linestyle=":", linewidth=0.8)
        xlabel = f"bytes on a directed link ({unit})"
        if top <= 0:
            ax.set_xlim(0, 1)
            ax.text(0.5, 0.5, "no traffic crosses the network in this phase",
                    transform=ax.transAxes, ha="center", va="center", fontsize=10)
        elif edge is None:
            ax.set_xlim(left=0)
        else:
            set_log_x(ax, edge / size, top / size)
            from ..units import format_bytes
            xlabel = (f"bytes on a directed link ({unit}, log scale; links carrying less than "
                      f"{format_bytes(edge)}, idle ones included, are drawn at the left edge)")
        ax.set_xlabel(xlabel, fontsize=9)
        ax.set_ylabel("fraction of links carrying at most x")
        # the phase first: long specs are shortened, the phase name never
        ax.set_title(f"phase {_short(phase_name, 44)}: {_short(comp.pattern.spec, 36)} on "
                     f"{_short(comp.machine.spec, 30)}, {comp.routing}\n"
                     f"(dot = plateau point at y = {y})", fontsize=9)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.grid(alpha=0.12, which="minor", axis="x")
        title = "best first" + (f"\n({left_out} of {len(comp.candidates)} not drawn)"
                                if left_out else "")
        # outside the axes: a legend inside covered the curves it names
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), title=title,
                  title_fontsize=8)
        path = os.path.join(out_dir, files[k])
        from ..io.atomic import write_atomic
        from ..io.image import figure_image
        data = figure_image(fig, fmt)
        plt.close(fig)
        write_atomic(path, data, force=True)  # the caller refused existing files
        paths.append(path)
    return paths
