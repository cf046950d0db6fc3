"""Self-contained HTML reports (inputs, candidate table, the winner and why, plots) and
helpers that turn matplotlib figures into PNG/SVG files or embedded images."""

from .figures import figure_bytes, image_format, save_figure
from .html import Report

__all__ = ["Report", "figure_bytes", "image_format", "save_figure"]
