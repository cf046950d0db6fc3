"""The HTML report of ``compare`` and ``evaluate``: inputs, candidate table, the winner and
why (:func:`rankmap.report.render.explain`), link-load CDFs and the winner's link-load map."""

from __future__ import annotations

import os
import tempfile

from ..evaluation import Comparison
from .html import Report

__all__ = ["comparison_report", "write_comparison_report", "check_report_path"]


def _inputs(comp: Comparison, y: float, command: str | None) -> dict:
    alloc = comp.allocation
    d = {"machine": comp.machine.spec,
         "allocation": f"{alloc.n_nodes} nodes x {alloc.cores_per_node} cores",
         "pattern": comp.pattern.spec,
         "ranks": comp.pattern.n_ranks,
         "phases": ", ".join(p.name for p in comp.candidates[0].phases),
         "routing": comp.routing,
         "plateau y": f"{y:g}"}
    if command:
        d["command"] = command
    return d


def _candidate_table(rep: Report, comp: Comparison) -> None:
    from .render import COLUMNS, busiest_ratio, reference

    present = [c for c in COLUMNS if all(c[0] in e.metrics for e in comp.candidates)]
    ref = reference(comp)
    alone = len(comp.candidates) == 1          # (evaluate: no other candidate to compare)
    headers = ["mapping"] + [h.replace("-\n", "-").replace("\n", " ") for _k, h, _f in present] + \
              ([] if alone else [f"busiest link vs {ref.name}"])
    rows = []
    for e in comp.candidates:
        rows.append([e.name] + [fmt(e.metrics[k]) for k, _h, fmt in present]
                    + ([] if alone else [busiest_ratio(e, ref)]))
    rep.table(headers, rows, caption="candidates, best first (combined over phases)",
              best_row=0, table_id="candidates")
    if len(comp.candidates[0].phases) > 1:
        headers = ["mapping", "phase"] + [h.replace("-\n", "-").replace("\n", " ")
                                          for _k, h, _f in present]
        rows = [[e.name, p.name] + [fmt(p.metrics[k]) if k in p.metrics else "" for k, _h, fmt
                                    in present] for e in comp.candidates for p in e.phases]
        rep.table(headers, rows, caption="per phase", table_id="phases")


def comparison_report(comp: Comparison, y: float, title: str | None = None,
                      command: str | None = None, links_map: bool = True) -> Report:
    """Build the report of a comparison (or of one evaluated placement).

    Parameters
    ----------
    comp : Comparison
        The evaluated candidates.
    y : float
        Fraction of links of the plateau point marked on the CDFs, in (0, 1].
    title : str, optional
        The report's title (default: pattern on machine).
    command : str, optional
        The command line, shown with the inputs.
    links_map : bool
        Whether to add the winner's link-load maps.

    Returns
    -------
    Report
        The report, not yet written.
    """
    from .render import explain, explain_pick
    from ..plots.cdf import plot_link_cdfs

    rep = Report(title or f"rankmap: {comp.pattern.spec} on {comp.machine.spec}")
    rep.heading("Inputs")
    rep.inputs(_inputs(comp, y, command))
    rep.heading("Candidates")
    _candidate_table(rep, comp)
    for name, why in comp.skipped.items():
        rep.paragraph(f"skipped {name}: {why}", css="warn")
    rep.heading("The winner and why")
    rep.paragraph(f"best: {explain(comp)}", css="winner")
    rep.paragraph(f"why: {explain_pick(comp)}")
    rep.paragraph("The best candidate has the lowest predicted time when a time model is "
                  "available, else the lightest busiest link, ties broken by hop-bytes.")
    rep.heading("Link-load distributions")
    with tempfile.TemporaryDirectory(prefix="rankmap-report-") as tmp:
        paths = plot_link_cdfs(comp, tmp, y=y)
        for ph, path in zip(comp.candidates[0].phases, paths):
            with open(path, "rb") as fh:
                rep.image(fh.read(), "png", f"CDF of bytes per directed link, phase {ph.name}, "
                          f"plateau points at y = {y:g}")
    if links_map:
        from ..plots.linkmap import plot_link_map, supports

        best = comp.best
        if supports(comp.machine):
            rep.heading(f"Where the hot links are ({best.name})")
            for ph in best.phases:
                fig = plot_link_map(comp.machine, ph.link_bytes, "bytes",
                                    title=f"{best.name}, phase {ph.name}")
                rep.figure(fig, f"link loads of {best.name}, phase {ph.name}")
    return rep


def write_comparison_report(comp: Comparison, path: str, y: float, force: bool = False,
                            command: str | None = None) -> str:
    """Build and write the report to ``path`` (.html); return the path.

    Parameters
    ----------
    comp : Comparison
        The evaluated candidates.
    path : str
        The ``.html`` file.
    y : float
        Fraction of links of the plateau point.
    force : bool
        Replace an existing file.
    command : str, optional
        The command line, shown with the inputs.

    Returns
    -------
    str
        The path written.
    """
    rep = comparison_report(comp, y, command=command)
    out = rep.write(path, force=force)
    return os.fspath(out)


def check_report_path(path: str, force: bool) -> None:
    """Fail early (before any work) when ``--report`` cannot be written.

    Parameters
    ----------
    path : str
        The ``--report`` file name (``.html``).
    force : bool
        Whether an existing file may be replaced.

    Raises
    ------
    RankmapError
        Not an ``.html`` name, or a file that exists (without force) or cannot be written.
    """
    from ..errors import RankmapError
    from ..io.atomic import check_writable

    if not path.lower().endswith((".html", ".htm")):
        raise RankmapError(f"--report {path!r}: expected a .html file name")
    check_writable(path, force)
