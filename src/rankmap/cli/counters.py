"""``rankmap counters``: analyse per-link counters of one or more runs (seed 000)."""

from __future__ import annotations

import argparse
import sys

from ..defaults import DEFAULT_PLATEAU_Y
from ..errors import RankmapError
from .common import (add_force, add_format, counters_out_of_memory, example, print_csv,
                     status)
from .notes import note
from ..validate import json_text
from .argtypes import FRACTION, int_arg

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    """Add ``rankmap counters`` to the command parsers.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "counters", help="plateau point, PDF/CDF and time correlation of link counters",
        description="Read per-link counters (one CSV per placement or run: src,dim,dir,dst or "
        "link, then bytes or packets, optional phase column; 'rankmap evaluate --links-out' "
        "writes this format) and report per phase the links' max, mean, percentiles and the "
        "plateau point x at fraction y (paper 000). With --times, correlate plateau x with "
        "time for every y of a sweep (Pearson and Spearman) and name the y that predicts time "
        "best, beside y = 1.0 (the busiest link).",
        epilog=example("rankmap counters tile.csv txyz.csv --labels Tile,TXYZ --y 0.99 "
                       "--plot cdf.png\nrankmap counters runs/*.csv --times times.csv "
                       "--sweep-y 0.6:1.0 --plot corr.png --scatter fit.png --report r.html"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILE.csv", help="counters files")
    p.add_argument("--labels", metavar="A,B,...",
                   help="one label per file (default: the file names without .csv)")
    p.add_argument("--y", type=FRACTION, default=DEFAULT_PLATEAU_Y, metavar="FRACTION",
                   help="plateau fraction of links (default 0.99)")
    p.add_argument("--percentiles", default="50,90,99", metavar="LIST",
                   help="percentiles of the per-link counts to report (default 50,90,99)")
    p.add_argument("--phase", metavar="NAME", help="analyse only this phase")
    p.add_argument("--aggregate", action="store_true",
                   help="sum each file's phases per link (a whole-run counter; warns)")
    p.add_argument("--times", metavar="FILE.csv",
                   help="measured times: label,phase,seconds (phase 'all' without phases)")
    p.add_argument("--sweep-y", default=None, metavar="START:STOP[:STEP]",
                   help="y values to correlate with --times (default 0.6:1.0, step 0.01); "
                   "y = 1.0, the busiest link, is always correlated as well, as the reference "
                   "(added to the sweep and its plot when outside START:STOP, and then never "
                   "picked as the best y)")
    p.add_argument("--by", choices=("pearson", "spearman"), default=None,
                   help="correlation that picks the best y (default pearson)")
    p.add_argument("--bins", type=int_arg(1, cap="bins"), default=40,
                   help="PDF histogram bins (default 40)")
    p.add_argument("--plot", metavar="FILE.png|svg",
                   help="PDF and CDF with plateau points (one file per phase when there are "
                   "several, named FILE-PHASE.png); with --times: the correlation vs y of "
                   "every phase, in one figure FILE")
    p.add_argument("--scatter", metavar="FILE.png|svg",
                   help="with --times: time vs plateau x at the best y and at y = 1, each on "
                   "its own panel and x axis (a row per phase), with fits")
    add_format(p, what="csv has one row per run and phase (with --times, the phase's "
               "correlation in the last columns)")
    p.add_argument("--report", metavar="FILE.html", help="write a self-contained HTML report")
    add_force(p)
    p.set_defaults(func=run)


def _check_outputs(args) -> None:
    from ..io.atomic import check_writable
    from ..report.figures import image_format

    if args.scatter and not args.times:
        raise RankmapError("--scatter needs --times")
    for flag, value in (("--sweep-y", args.sweep_y), ("--by", args.by)):
        if value is not None and not args.times:      # it would change nothing: said
            raise RankmapError(f"{flag} {value}: applies with --times (the correlation of "
                               "plateau points with measured times)")
    args.sweep_y = args.sweep_y if args.sweep_y is not None else "0.6:1.0"
    args.by = args.by or "pearson"
    for path in (args.plot, args.scatter):
        if path:
            image_format(path)
            check_writable(path, args.force)
    if args.report:
        if not args.report.lower().endswith((".html", ".htm")):
            raise RankmapError(f"--report {args.report!r}: expected a .html file name")
        check_writable(args.report, args.force)
    if args.bins < 1:
        raise RankmapError(f"bad --bins {args.bins}: must be >= 1")


def run(args) -> int:
    """Run ``rankmap counters`` (see :func:`_run`); running out of memory is one line naming the
    input, not advice about machines and patterns.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        Exit status 0 (errors raise RankmapError).
    """
    try:
        return _run(args)
    except MemoryError:
        raise counters_out_of_memory(args) from None


def _run(args) -> int:
    """Run ``rankmap counters``.

    Analyse counter files (statistics, plateau points, correlation with times), print, plot and
    report.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        Exit status: 0 (bad input raises RankmapError, which :func:`rankmap.cli.main` turns
        into one line and status 2).
    """
    from ..counters import parse_percentiles, parse_sweep, read_runs, read_times
    from ..counters.outputs import RunOutputs
    from ..counters.summary import analyse
    from .links import steps

    _check_outputs(args)
    labels = [s.strip() for s in args.labels.split(",")] if args.labels else None
    pct = parse_percentiles(args.percentiles)
    ys = parse_sweep(args.sweep_y)
    with status(f"reading {len(args.files)} counters file{'s' if len(args.files) > 1 else ''}"):
        runs = read_runs(args.files, labels)
        times = read_times(args.times) if args.times else None
    with status("analysing"):
        doc = analyse(runs, args.y, pct, args.phase, args.aggregate, times, ys, args.by)
    corr = doc.pop("_corr", None)
    for w in doc["warnings"]:
        note(f"rankmap counters: warning: {w}")
    # the figures' files (one per phase) are checked before anything is printed: a refusal
    # is then the command's only output
    with status("drawing the plots"):
        figures = _figures(runs, doc, corr, args)
    if args.format == "json":
        print(json_text(doc, indent=1))
    elif args.format == "csv":
        _print_csv(doc)
    else:
        _print_tables(doc)
    # the plots take seconds: a bar or spinner says so; an error or a Ctrl-C removes the
    # files this run wrote (a rerun is then not refused), never one that was there
    files = figures.get("files", [])
    with RunOutputs() as outputs:
        with steps(len(files), f"writing {len(files)} plot(s):") as advance:
            for path, fig in files:
                from ..report.figures import save_figure
                outputs.write(path, lambda: save_figure(fig, path, args.force))
                advance(path)
                print(f"wrote {path}", file=sys.stderr)
        if args.report:
            from ..report.counters_report import counters_report
            n_plots = len(dict.fromkeys(r["phase"] for r in doc["counters"])) + 2 * bool(corr)
            with steps(n_plots, f"writing {args.report}: plots of {len(runs)} run(s):") \
                    as advance:
                rep = counters_report(runs, doc, corr, times=args.times,
                                      sweep_y=args.sweep_y, by=args.by, bins=args.bins,
                                      phase=args.phase, aggregate=args.aggregate,
                                      progress=advance)
                outputs.write(args.report, lambda: rep.write(args.report, force=args.force))
            print(f"wrote {args.report}", file=sys.stderr)
    return 0


def _figures(runs, doc, corr, args) -> dict:
    """The figures to write to --plot and --scatter: {"files": [(path, figure)]}."""
    from ..counters.summary import phase_series
    from ..report.figures import suffixed

    out = []
    if args.plot and corr is None:
        from ..plots.counters import plot_pdf_cdf

        by_phase = phase_series(runs, args.phase, args.aggregate)
        for ph, series in by_phase.items():
            path = args.plot if len(by_phase) == 1 else suffixed(args.plot, ph)
            out.append((path, plot_pdf_cdf(series, doc["unit"], args.y, args.bins,
                                           title=f"phase {ph}")))
    if args.plot and corr is not None:
        from ..plots.correlation import plot_correlation_vs_y
        out.append((args.plot, plot_correlation_vs_y(corr)))
    if args.scatter:
        from ..plots.correlation import plot_time_vs_plateau
        out.append((args.scatter, plot_time_vs_plateau(corr, doc["unit"])))
    from ..io.atomic import check_writable
    from ..io.file_names import distinct_paths
    # phases whose names come out alike get -2, -3, ...: no figure replaces another
    out = list(zip(distinct_paths([path for path, _fig in out]), [fig for _p, fig in out]))
    for path, _fig in out:
        check_writable(path, args.force)
    return {"files": out}


def _print_csv(doc) -> None:
    """The table of :func:`_print_tables` as CSV: raw numbers, the counter unit in a column;
    with --times each row also holds its phase's correlation (empty without), and a phase
    correlated but not analysed per file (``all`` of files with phases) gets a row per
    correlated run with only the correlation."""
    pkeys = list(doc["counters"][0]["percentiles"])
    corr = doc.get("correlation", {})
    extra = ["best_y", "best_pearson", "best_spearman", "busiest_pearson", "busiest_spearman"]

    def corr_cells(phase):
        res = corr.get(phase)
        if res is None:
            return [""] * len(extra)
        b, busy = res["best"] or {}, res["busiest"]
        return [_blank(b.get("y")), _blank(b.get("pearson")), _blank(b.get("spearman")),
                _blank(busy["pearson"]), _blank(busy["spearman"])]

    rows = [[row["label"], row["phase"], row["links"], row["max"], row["mean"],
             *[row["percentiles"][k] for k in pkeys], row["plateau"]["x"], doc["unit"],
             *(corr_cells(row["phase"]) if corr else [])] for row in doc["counters"]]
    # a correlated phase no row shows (a time for phase 'all' of files with phases, matched
    # with their summed counters): a row per correlated run carries it, as the table and JSON
    # do, its per-link statistics empty (only the file's own phases are analysed)
    shown = {row["phase"] for row in doc["counters"]}
    for ph, res in corr.items():
        if ph not in shown:
            rows.extend([label, ph, *[""] * (3 + len(pkeys) + 1), doc["unit"], *corr_cells(ph)]
                        for label in res["labels"])
    print_csv(["label", "phase", "links", "max", "mean"] + pkeys + ["plateau_x", "unit"]
              + (extra if corr else []), rows)


def _blank(v):
    return "" if v is None else v


def _print_tables(doc) -> None:
    from .common import stdout_console

    from ..counters.summary import fmt_count
    from ..report.render import FitTable, TableColumn

    con = stdout_console()
    unit = doc["unit"]
    pkeys = list(doc["counters"][0]["percentiles"])
    # labels and phases wrap (never an ellipsis: two labels alike but for their end stay
    # apart); numbers are never broken; on a narrow terminal the percentiles, then the mean
    # and the link count are left out first
    cols = [TableColumn("label", number=False), TableColumn("phase", number=False),
            TableColumn("links", drop=len(pkeys) + 2), TableColumn("max"),
            TableColumn("mean", drop=len(pkeys) + 1)]
    cols += [TableColumn(k, drop=len(pkeys) - j) for j, k in enumerate(pkeys)]
    cols.append(TableColumn("plateau x"))
    rows = [[row["label"], row["phase"], str(row["links"]), fmt_count(row["max"], unit),
             fmt_count(row["mean"], unit),
             *[fmt_count(row["percentiles"][k], unit) for k in pkeys],
             fmt_count(row["plateau"]["x"], unit)] for row in doc["counters"]]
    con.print(FitTable(cols, rows, title=f"per-link {unit} counters, plateau at y = "
                       f"{doc['y']:g}"))
    for ph, res in doc.get("correlation", {}).items():
        def num(v):
            return "n/a" if v is None else f"{v:.3f}"
        b, busy = res["best"], res["busiest"]
        rows, styles = [], []
        if b is not None:
            rows.append([f"best y (by {res['by']})", f"{b['y']:g}", num(b["pearson"]),
                         num(b["spearman"])])
            styles.append("green")
        rows.append(["busiest link", "1", num(busy["pearson"]), num(busy["spearman"])])
        styles.append(None)
        con.print(FitTable([TableColumn("", number=False), TableColumn("y"),
                            TableColumn("Pearson r"), TableColumn("Spearman rho")], rows,
                           title=f"phase {ph}: correlation of plateau x with time over "
                           f"{len(res['labels'])} runs", row_styles=styles))
