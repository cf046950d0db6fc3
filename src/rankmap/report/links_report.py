"""The HTML report of ``rankmap links``: inputs, the busiest links per phase, link-load maps."""

from __future__ import annotations

from typing import Callable

from ..counters.summary import fmt_count
from .html import Report

__all__ = ["links_report", "link_cell"]


def link_cell(value) -> str:
    """A link column value as a table cell.

    Parameters
    ----------
    value : int, str or list of int
        A column of :func:`rankmap.counters.links.hottest_links` (coordinates are a list).

    Returns
    -------
    str
        ``(x,y,z)`` for coordinates, ``-`` for none (a switch's link), else ``str(value)``.
    """
    if value is None:
        return "-"
    return "(" + ",".join(map(str, value)) + ")" if isinstance(value, list) else str(value)


def links_report(doc: dict, reduce: str, draw: Callable | None,
                 no_map: str | None = None, progress: Callable | None = None) -> Report:
    """Build the report of ``rankmap links``.

    Parameters
    ----------
    doc : dict
        :func:`rankmap.counters.links.link_load_summary`'s document (file, machine, unit,
        phases with their busiest links).
    reduce : str
        How 3-D+ torus maps fold hidden dimensions (``max`` or ``sum``; shown as an input).
    draw : callable or None
        ``draw(phase_name) -> matplotlib Figure``: the link-load map of a phase; None when
        no map can be drawn for the machine (a fat tree).
    no_map : str, optional
        With ``draw`` None: why there is no map (shown where the maps would be).
    progress : callable, optional
        ``progress(description)`` after each map is drawn (a progress bar's advance).

    Returns
    -------
    Report
        The report, not yet written.
    """
    unit = doc["unit"]
    rep = Report(f"rankmap links: {doc['file']} on {doc['machine']}")
    rep.heading("Inputs")
    rep.inputs({"counters": doc["file"], "machine": doc["machine"], "counter": unit,
                "phases": ", ".join(ph["phase"] for ph in doc["phases"]),
                **({"map reduction": reduce} if draw is not None else {})})
    rep.heading("Busiest links")
    for ph in doc["phases"]:
        keys = [k for k in ph["hottest"][0] if k != "load"] if ph["hottest"] else []
        rep.table(keys + [unit], [[link_cell(h[k]) for k in keys] + [fmt_count(h["load"], unit)]
                                  for h in ph["hottest"]],
                  caption=f"phase {ph['phase']}: busiest first", best_row=0,
                  table_id=f"hot-{ph['phase']}")
    rep.heading("Link-load maps")
    if draw is None:
        rep.paragraph(no_map or f"no link-load map is drawn for {doc['machine']}")
        return rep
    for ph in doc["phases"]:
        rep.figure(draw(ph["phase"]), f"link loads, phase {ph['phase']}")
        if progress is not None:
            progress(f"phase {ph['phase']}")
    return rep
