"""Per-link loads as CSV: ``src,dim,dir,dst,bytes,streams`` for a torus (one row per directed
link, ``src``/``dst`` node ids, ``dir`` +1/-1), other machines give their own link columns.
With several phases a ``phase`` column comes first and each phase has its own rows."""

from __future__ import annotations

import io

import numpy as np

__all__ = ["format_links_csv"]


def format_links_csv(machine, phases) -> str:
    """CSV text of every directed link's bytes and streams for each ``PhaseResult``.

    Parameters
    ----------
    machine : Machine
        The machine whose ``link_columns()`` name each link (for a torus ``src,dim,dir,dst``).
    phases : sequence of PhaseResult
        Evaluated phases; each gives ``link_bytes`` (bytes per link) and ``link_streams``
        (flows crossing each link). With more than one, a leading ``phase`` column names it.

    Returns
    -------
    str
        The CSV text, header line first, one row per directed link and phase; whole byte
        counts are written as integers, others with 17 significant digits (read back
        exactly); a phase name with a comma or a quote is quoted as CSV quotes it.
    """
    cols = machine.link_columns()
    names = list(cols)
    multi = len(phases) > 1
    out = io.StringIO()
    out.write(",".join((["phase"] if multi else []) + names + ["bytes", "streams"]) + "\n")
    for ph in phases:
        table = [np.asarray(cols[n]) for n in names]
        b = ph.link_bytes
        bytes_txt = np.where(b == np.round(b), np.round(b).astype(np.int64).astype(str),
                             np.char.mod("%.17g", b))
        parts = [t.astype(str) for t in table] + [bytes_txt, ph.link_streams.astype(str)]
        rows = np.stack(parts, axis=1)
        prefix = (_csv_field(ph.name) + ",") if multi else ""
        out.write("\n".join(prefix + ",".join(r) for r in rows.tolist()))
        out.write("\n")
    return out.getvalue()


def _csv_field(text: str) -> str:
    """``text`` as one CSV field: quoted (quotes doubled) when it holds a comma, a quote or a
    line break."""
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text
