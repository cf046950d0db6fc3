"""Turning matplotlib figures into files (PNG or SVG by extension) or embeddable bytes."""

from __future__ import annotations

import io
import os

from ..errors import RankmapError
from ..io.atomic import check_writable, write_atomic

__all__ = ["FORMATS", "pyplot", "image_format", "figure_bytes", "save_figure", "suffixed"]

FORMATS = {".png": "png", ".svg": "svg"}


def pyplot():
    """matplotlib.pyplot with the off-screen Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def image_format(path: str) -> str:
    """``png`` or ``svg`` from the file name; anything else is a user error."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise RankmapError(f"plot file {path!r}: expected a .png or .svg name")
    return FORMATS[ext]


def figure_bytes(fig, fmt: str = "png") -> bytes:
    """The figure rendered as PNG or SVG bytes; the figure is closed afterwards."""
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=110 if fmt == "png" else None)
    pyplot().close(fig)
    return buf.getvalue()


def save_figure(fig, path: str, force: bool = False) -> str:
    """Write the figure to ``path`` (PNG or SVG by extension) atomically; return the path."""
    fmt = image_format(path)
    check_writable(path, force)
    return write_atomic(path, figure_bytes(fig, fmt), force=force)


def suffixed(path: str, suffix: str) -> str:
    """``links.png`` + ``halo`` -> ``links-halo.png`` (suffix made file-name safe)."""
    stem, ext = os.path.splitext(path)
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in suffix)
    return f"{stem}-{safe}{ext}"
