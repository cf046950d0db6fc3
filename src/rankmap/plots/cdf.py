"""The link-load CDF of every candidate, with its plateau point marked (seed 000, Figure 1)."""

from __future__ import annotations

import os

import numpy as np

from ..evaluation import Comparison
from ..metrics import plateau_point

__all__ = ["plot_link_cdfs"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_link_cdfs(comp: Comparison, out_dir: str, y: float = 0.99, max_curves: int = 8,
                   prefix: str = "cdf", fmt: str = "png") -> list[str]:
    """Write one CDF plot per phase into ``out_dir``; return the file paths.

    x: bytes carried by a directed link (MiB); y: fraction of all directed links carrying at
    most x. Each candidate's plateau point (x at fraction ``y``) is marked. At most
    ``max_curves`` candidates are drawn: the best ones, plus ``inorder`` when evaluated.

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
    shown = comp.candidates[:max_curves]
    ref = comp.find("inorder")
    if ref is not None and ref not in shown:
        shown = shown[:-1] + [ref]
    paths = []
    for k, phase_name in enumerate(p.name for p in comp.candidates[0].phases):
        fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=110)
        for e in shown:
            loads = np.sort(e.phases[k].link_bytes) / 2**20
            frac = np.arange(1, len(loads) + 1) / len(loads)
            line, = ax.step(loads, frac, where="post", label=e.name, linewidth=1.4)
            px = plateau_point(e.phases[k].link_bytes, y) / 2**20
            ax.plot([px], [y], "o", color=line.get_color(), markersize=6)
        ax.axhline(y, color="grey", linestyle=":", linewidth=0.8)
        ax.set_xlabel("bytes on a directed link (MiB)")
        ax.set_ylabel("fraction of links carrying at most x")
        ax.set_title(f"{comp.pattern.spec} on {comp.machine.spec}, {comp.routing}: "
                     f"phase {phase_name}\n(dot = plateau point at y = {y})", fontsize=9)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right", title="best first", title_fontsize=8)
        fig.tight_layout()
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in phase_name)
        path = os.path.join(out_dir, f"{prefix}-{safe}.{fmt}")
        import io

        from ..io.atomic import write_atomic
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt)
        plt.close(fig)
        write_atomic(path, buf.getvalue(), force=True)  # the caller refused existing files
        paths.append(path)
    return paths
