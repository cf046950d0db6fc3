"""A self-contained HTML report: one file, no external resources, images embedded as
base64 data URIs (PNG or SVG), readable in any browser and safe to mail around."""

from __future__ import annotations

import base64
import html

from .. import __version__
from ..io.atomic import write_atomic
from .figures import figure_bytes

__all__ = ["Report"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;
max-width:1100px;color:#222;line-height:1.45;padding:0 1em}
h1{font-size:1.5em;border-bottom:2px solid #345;padding-bottom:.2em}
h2{font-size:1.2em;margin-top:1.6em;color:#234}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #bbb;padding:.25em .6em;text-align:right}
td:first-child,td:nth-child(2){max-width:22em;overflow-wrap:anywhere}
th{background:#e8edf3}td:first-child,th:first-child{text-align:left}
tr.best td{background:#e3f6e3;font-weight:600}
dl.inputs{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}
dl.inputs dt{font-weight:600}dl.inputs dd{margin:0;font-family:monospace;overflow-wrap:anywhere}
.winner{background:#eef7ee;border-left:4px solid #3a3;padding:.6em 1em}
.warn{background:#fff6e0;border-left:4px solid #d90;padding:.4em 1em}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}
figcaption{font-size:.85em;color:#555}footer{margin-top:2em;font-size:.8em;color:#777}
"""


class Report:
    """An HTML report assembled section by section, rendered by :meth:`render`."""

    def __init__(self, title: str):
        self.title = title
        self.parts: list[str] = []
        self.n_tables = 0
        self.n_images = 0

    def heading(self, text: str) -> None:
        """A section heading.

        Parameters
        ----------
        text : str
            The heading (escaped).
        """
        self.parts.append(f"<h2>{html.escape(text)}</h2>")

    def inputs(self, items: dict) -> None:
        """The inputs as a definition list (name -> value text).

        Parameters
        ----------
        items : dict of str to object
            Name -> value (shown as text).
        """
        rows = "".join(f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(str(v))}</dd>"
                       for k, v in items.items())
        self.parts.append(f'<dl class="inputs">{rows}</dl>')

    def paragraph(self, text: str, css: str | None = None) -> None:
        """A paragraph of plain text (``css``: winner or warn for a highlighted box).

        Parameters
        ----------
        text : str
            Plain text (escaped).
        css : str, optional
            ``winner`` or ``warn`` for a highlighted box.
        """
        cls = f' class="{css}"' if css else ""
        self.parts.append(f"<p{cls}>{html.escape(text)}</p>")

    def table(self, headers: list[str], rows: list[list], caption: str = "",
              best_row: int | None = None, table_id: str | None = None) -> None:
        """A table of text cells; row ``best_row`` is highlighted.

        Parameters
        ----------
        headers : list of str
            Column headers.
        rows : list of list
            Cells (shown as text).
        caption : str
            Caption above the table.
        best_row : int, optional
            Row highlighted as the best.
        table_id : str, optional
            HTML id of the table.
        """
        self.n_tables += 1
        tid = f' id="{html.escape(table_id)}"' if table_id else ""
        head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
        body = []
        for i, r in enumerate(rows):
            cls = ' class="best"' if i == best_row else ""
            body.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r)
                        + "</tr>")
        cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
        self.parts.append(f"<table{tid}>{cap}<thead><tr>{head}</tr></thead>"
                          f"<tbody>{''.join(body)}</tbody></table>")

    def image(self, data: bytes, fmt: str, caption: str) -> None:
        """An embedded image (``fmt`` png or svg) with a caption.

        Parameters
        ----------
        data : bytes
            The image (embedded as base64).
        fmt : str
            ``png`` or ``svg``.
        caption : str
            Caption under the image.
        """
        self.n_images += 1
        mime = "image/png" if fmt == "png" else "image/svg+xml"
        b64 = base64.b64encode(data).decode("ascii")
        alt = html.escape(caption)
        self.parts.append(f'<figure><img src="data:{mime};base64,{b64}" alt="{alt}">'
                          f"<figcaption>{alt}</figcaption></figure>")

    def figure(self, fig, caption: str, fmt: str = "png") -> None:
        """Embed a matplotlib figure (rendered now, then closed).

        Parameters
        ----------
        fig : matplotlib.figure.Figure
            The figure (rendered now, then closed).
        caption : str
            Caption under the image.
        fmt : str
            ``png`` or ``svg``.
        """
        self.image(figure_bytes(fig, fmt), fmt, caption)

    def render(self) -> str:
        """The complete HTML document.

        Returns
        -------
        str
            The complete, self-contained HTML document.
        """
        # no date: the same inputs give the same bytes (the file's own time says when)
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{html.escape(self.title)}</title><style>{_CSS}</style></head><body>"
                f"<h1>{html.escape(self.title)}</h1>" + "\n".join(self.parts)
                + f"<footer>rankmap {html.escape(__version__)}</footer></body></html>\n")

    def write(self, path: str, force: bool = False) -> str:
        """Write the report to ``path`` atomically (refusing to overwrite without force).

        Parameters
        ----------
        path : str
            The ``.html`` file.
        force : bool
            Replace an existing file.

        Returns
        -------
        str
            The path written.
        """
        if not path.lower().endswith((".html", ".htm")):
            from ..errors import RankmapError
            raise RankmapError(f"--report {path!r}: expected a .html file name")
        return write_atomic(path, self.render(), force=force)
