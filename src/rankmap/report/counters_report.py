"""The HTML report of ``rankmap counters``: inputs, per-run statistics, the correlation of
plateau x with time (best y and the busiest link), and the plots."""

from __future__ import annotations

from .html import Report

__all__ = ["counters_report"]


def counters_report(runs, doc: dict, corr: dict | None, *, times: str | None = None,
                    sweep_y: str | None = None, by: str | None = None, bins: int = 50,
                    phase: str | None = None, aggregate: bool = False,
                    progress=None) -> Report:
    """Build the report of ``rankmap counters``.

    Parameters
    ----------
    runs : list of CounterRun
        The counter files read.
    doc : dict
        :func:`rankmap.counters.summary.analyse`'s document.
    corr : dict or None
        Raw correlation results (with a times file).
    times, sweep_y, by : str, optional
        The times file, the y sweep and the correlation chosen (shown as inputs).
    bins : int
        Histogram bins of the PDF plots.
    phase : str, optional
        Only this phase; ``aggregate`` sums the phases per link.
    progress : callable, optional
        ``progress(description)`` after each plot is drawn (a progress bar's advance).

    Returns
    -------
    Report
        The HTML report.
    """
    from ..counters.summary import fmt_count, phase_series
    from ..plots.counters import plot_pdf_cdf

    def step(what: str) -> None:
        if progress is not None:
            progress(what)

    unit = doc["unit"]
    rep = Report(f"rankmap counters: {len(runs)} runs")
    rep.heading("Inputs")
    items = {f"run {r.label}": f"{r.path} ({len(r.phases)} phase(s): {', '.join(r.phases)})"
             for r in runs}
    items.update({"counter": unit, "plateau y": f"{doc['y']:g}"})
    if times:
        items.update({"times": times, "y sweep": sweep_y, "best y chosen by": by})
    rep.inputs(items)
    for w in doc["warnings"]:
        rep.paragraph(f"warning: {w}", css="warn")
    rep.heading("Runs (candidates)")
    pkeys = list(doc["counters"][0]["percentiles"])
    rows = [[row["label"], row["phase"], row["links"], fmt_count(row["max"], unit),
             fmt_count(row["mean"], unit), *[fmt_count(row["percentiles"][k], unit)
                                             for k in pkeys],
             fmt_count(row["plateau"]["x"], unit)] for row in doc["counters"]]
    order = sorted(range(len(rows)), key=lambda i: (doc["counters"][i]["phase"],
                                                    doc["counters"][i]["plateau"]["x"]))
    rep.table(["label", "phase", "links", "max", "mean"] + pkeys +
              [f"plateau x (y = {doc['y']:g})"], [rows[i] for i in order],
              caption="per run and phase, lowest plateau x first within a phase", best_row=0,
              table_id="candidates")
    rep.heading("The winner and why")
    for ph in dict.fromkeys(r["phase"] for r in doc["counters"]):
        mine = [r for r in doc["counters"] if r["phase"] == ph]
        low = min(r["plateau"]["x"] for r in mine)
        tied = [r for r in mine if r["plateau"]["x"] == low]
        # among runs tied on the plateau point, the lightest busiest link first
        win = min(tied, key=lambda r: r["max"])
        busy = min(mine, key=lambda r: r["max"])
        names = (win["label"] if len(tied) == 1 else
                 f"{', '.join(r['label'] for r in tied)} tie with")
        text = (f"phase {ph}: {names} the lowest plateau point "
                f"({fmt_count(low, unit)} at y = {doc['y']:g}): "
                f"{doc['y']:.0%} of {'its' if len(tied) == 1 else 'their'} links carry at "
                "most that")
        if len(tied) == 1:
            text = text.replace(f"{names} the lowest", f"{names} has the lowest", 1)
        lightest = [r for r in mine if r["max"] == busy["max"]]
        if win in lightest:
            who = "it" if len(tied) == 1 else win["label"]
            text += (f"; {who} also has the lightest busiest link." if len(lightest) == 1 else
                     f"; the lightest busiest link ({fmt_count(busy['max'], unit)}) is "
                     f"shared by {', '.join(r['label'] for r in lightest)}.")
        else:
            text += (f"; the lightest busiest link is {busy['label']}'s "
                     f"({fmt_count(busy['max'], unit)}), which the plateau point ranks lower.")
        rep.paragraph(text, css="winner")
    if corr:
        rep.heading("Which y predicts time")
        rows = []
        for ph, res in corr.items():
            b, busy = res["best"], res["busiest"]

            def num(v):
                return "n/a" if v is None else f"{v:.3f}"
            if b is not None:
                rows.append([ph, f"best y = {b['y']:g}", num(b["pearson"]), num(b["spearman"]),
                             len(res["labels"])])
            rows.append([ph, "busiest link (y = 1)", num(busy["pearson"]),
                         num(busy["spearman"]), len(res["labels"])])
        rep.table(["phase", "y", "Pearson r", "Spearman rho", "runs"], rows,
                  caption="correlation of plateau x with time", table_id="correlation")
        from ..plots.correlation import plot_correlation_vs_y, plot_time_vs_plateau

        rep.figure(plot_correlation_vs_y(corr), "correlation of plateau x with time vs y")
        step("correlation vs y")
        rep.figure(plot_time_vs_plateau(corr, unit), "time vs plateau x, with fitted lines")
        step("time vs plateau x")
    rep.heading("Distributions")
    for ph, series in phase_series(runs, phase, aggregate).items():
        rep.figure(plot_pdf_cdf(series, unit, doc["y"], bins, title=f"phase {ph}"),
                   f"PDF and CDF of per-link {unit}, phase {ph}")
        step(f"phase {ph}")
    return rep
