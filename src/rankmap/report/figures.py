"""Turning matplotlib figures into files (PNG or SVG by extension) or embeddable bytes."""

from __future__ import annotations

import os

from ..errors import RankmapError
from ..io.atomic import check_writable, write_atomic

__all__ = ["FORMATS", "pyplot", "image_format", "figure_bytes", "save_figure", "suffixed"]

FORMATS = {".png": "png", ".svg": "svg"}


def pyplot():
    """matplotlib.pyplot with the off-screen Agg backend.

    Returns
    -------
    module
        ``matplotlib.pyplot``, using the off-screen Agg backend.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def image_format(path: str) -> str:
    """``png`` or ``svg`` from the file name; anything else is a user error.

    Parameters
    ----------
    path : str
        An image file name.

    Returns
    -------
    str
        ``png`` or ``svg``.

    Raises
    ------
    RankmapError
        Any other extension.
    """
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise RankmapError(f"plot file {path!r}: expected a .png or .svg name")
    return FORMATS[ext]


def figure_bytes(fig, fmt: str = "png") -> bytes:
    """The figure rendered as PNG or SVG bytes; the figure is closed afterwards.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (closed afterwards).
    fmt : str
        ``png`` or ``svg``.

    Returns
    -------
    bytes
        The rendered image.
    """
    from ..io.image import figure_image
    data = figure_image(fig, fmt, dpi=110 if fmt == "png" else None)
    pyplot().close(fig)
    return data


def save_figure(fig, path: str, force: bool = False) -> str:
    """Write the figure to ``path`` (PNG or SVG by extension) atomically; return the path.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (closed afterwards).
    path : str
        ``.png`` or ``.svg`` file.
    force : bool
        Replace an existing file.

    Returns
    -------
    str
        The path written.
    """
    fmt = image_format(path)
    check_writable(path, force)
    return write_atomic(path, figure_bytes(fig, fmt), force=force)


def suffixed(path: str, suffix: str) -> str:
    """``links.png`` + ``halo`` -> ``links-halo.png`` (suffix made file-name safe).

    Parameters
    ----------
    path : str
        A file name (``links.png``).
    suffix : str
        A phase or candidate name (made file-name safe).

    Returns
    -------
    str
        ``links-halo.png`` for suffix ``halo``.
    """
    from ..io.file_names import file_safe
    stem, ext = os.path.splitext(path)
    return f"{stem}-{file_safe(suffix)}{ext}"
