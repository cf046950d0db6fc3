"""A matplotlib figure as PNG or SVG bytes that depend on the figure only.

matplotlib writes the time of the run into an SVG (``<dc:date>``) and names its clip paths
and glyphs by hashes salted with a random value: two runs of the same command wrote different
SVG files. Here the date is left out and the salt fixed, so the same figure gives the same
bytes (PNG already did).
"""

from __future__ import annotations

import io

__all__ = ["figure_image"]

#: the fixed salt of matplotlib's SVG ids (``svg.hashsalt``)
SVG_SALT = "rankmap"


def figure_image(fig, fmt: str = "png", dpi: float | None = None) -> bytes:
    """Render a figure as PNG or SVG bytes, the same bytes for the same figure.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (left open).
    fmt : str
        ``png`` or ``svg``.
    dpi : float, optional
        Dots per inch of a PNG (default: the figure's own); an SVG has none.

    Returns
    -------
    bytes
        The rendered image.
    """
    import matplotlib

    buf = io.BytesIO()
    if fmt == "svg":
        with matplotlib.rc_context({"svg.hashsalt": SVG_SALT}):
            fig.savefig(buf, format="svg", metadata={"Date": None})
    else:
        fig.savefig(buf, format=fmt, dpi=dpi)
    return buf.getvalue()
