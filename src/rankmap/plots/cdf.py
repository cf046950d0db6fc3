"""The link-load CDF of every candidate, with its plateau point marked (seed 000, Figure 1)."""

from __future__ import annotations

import os

import numpy as np

from ..evaluation import Comparison
from ..metrics import plateau_point

__all__ = ["plot_link_cdfs", "phase_file_names", "byte_unit"]


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


def plot_link_cdfs(comp: Comparison, out_dir: str, y: float = 0.99, max_curves: int = 8,
                   prefix: str = "cdf", fmt: str = "png") -> list[str]:
    """Write one CDF plot per phase into ``out_dir``; return the file paths.

    x: bytes carried by a directed link (in the unit that reads best: B to TiB); y: fraction
    of all directed links carrying at most x. Each candidate's plateau point (x at fraction
    ``y``) is marked. At most ``max_curves`` candidates are drawn: the best ones, plus
    ``inorder`` when evaluated and the worst, so the plot spans the range (the legend says how
    many were left out).

    Parameters
    ----------
    comp : Comparison
        The evaluated candidates.
    out_dir : str
        Folder written into (created when missing).
    y : float
        Fraction of links of the plateau point, in (0, 1].
    max_curves : int
        Most candidates drawn per plot.
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
    ref = comp.find("inorder")
    extras = [e for e in (ref, comp.candidates[-1]) if e is not None]
    extras = [e for i, e in enumerate(extras) if e not in extras[:i]]    # inorder may be last
    if len(comp.candidates) <= max_curves:
        shown = list(comp.candidates)
    else:
        room = max(1, max_curves - len(extras))
        shown = [e for e in comp.candidates[:room] if e not in extras]
        shown += [e for e in comp.candidates if e in extras]    # in ranking order
    paths = []
    phase_names = [p.name for p in comp.candidates[0].phases]
    files = phase_file_names(phase_names, prefix, fmt)
    left_out = len(comp.candidates) - len(shown)
    legend_title = "best first" + (f" ({left_out} of {len(comp.candidates)} not drawn)"
                                   if left_out else "")
    for k, phase_name in enumerate(phase_names):
        fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=110)
        unit, size = byte_unit(max(float(np.max(e.phases[k].link_bytes, initial=0.0))
                                   for e in shown))
        styles = ("--", "-.", ":", (0, (5, 1, 1, 1)))
        drawn: list = []              # (sorted loads, name) of the curves drawn so far
        for i, e in enumerate(shown):
            loads = np.sort(e.phases[k].link_bytes) / size
            frac = np.arange(1, len(loads) + 1) / len(loads)
            # the winner on top, solid and wider; the others dashed, so curves that coincide
            # still show through one another, and the legend says which coincide
            best = e is comp.candidates[0]
            same = next((name for other, name in drawn if np.array_equal(other, loads)), None)
            drawn.append((loads, e.name))
            label = e.name if same is None else f"{e.name} (= {same})"
            line, = ax.step(loads, frac, where="post", label=label,
                            linewidth=2.4 if best else 1.4,
                            linestyle="-" if best else styles[i % len(styles)],
                            zorder=len(shown) + 2 if best else len(shown) - i)
            px = plateau_point(e.phases[k].link_bytes, y) / size
            ax.plot([px], [y], "o", color=line.get_color(), markersize=6,
                    zorder=len(shown) + 3 if best else len(shown) - i)
        ax.axhline(y, color="grey", linestyle=":", linewidth=0.8)
        ax.set_xlim(left=0)
        if not any(np.any(e.phases[k].link_bytes) for e in shown):
            ax.set_xlim(0, 1)
            ax.text(0.5, 0.5, "no traffic crosses the network in this phase",
                    transform=ax.transAxes, ha="center", va="center", fontsize=10)
        ax.set_xlabel(f"bytes on a directed link ({unit})")
        ax.set_ylabel("fraction of links carrying at most x")
        # the phase first: long specs are shortened, the phase name never
        ax.set_title(f"phase {_short(phase_name, 44)}: {_short(comp.pattern.spec, 36)} on "
                     f"{_short(comp.machine.spec, 30)}, {comp.routing}\n"
                     f"(dot = plateau point at y = {y})", fontsize=9)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right", title=legend_title, title_fontsize=8)
        fig.tight_layout()
        path = os.path.join(out_dir, files[k])
        from ..io.atomic import write_atomic
        from ..io.image import figure_image
        data = figure_image(fig, fmt)
        plt.close(fig)
        write_atomic(path, data, force=True)  # the caller refused existing files
        paths.append(path)
    return paths
