"""``rankmap links``: where the hot links are (link-load maps of a counters file)."""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager

from ..errors import RankmapError
from ..validate import json_text
from .argtypes import int_arg
from .common import (MACHINE_HELP, add_force, add_format, counters_out_of_memory, example,
                     print_csv, progress_bar, status)

__all__ = ["add_parser", "run", "steps"]


@contextmanager
def steps(total: int, label: str):
    """Progress of ``total`` slow steps on stderr (a terminal only): a bar for several, a
    spinner for one.

    Parameters
    ----------
    total : int
        The steps (maps or plots to draw and write).
    label : str
        What is being done (``writing m.html: maps of 3 phase(s)``).

    Yields
    ------
    callable
        ``advance(description)``: one step done.
    """
    if total > 1:
        with progress_bar(total, label) as advance:
            yield advance
    else:
        with status(label):
            yield lambda desc=None: None


def add_parser(sub) -> None:
    """Add ``rankmap links`` to the command parsers.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "links", help="link-load maps and the hottest links of a counters file",
        description="Place a counters file (as written by 'rankmap evaluate --links-out', or "
        "measured) on the machine's links, list the hottest links per phase and draw the "
        "link-load map: on a torus one heat map per dimension and direction, projected onto "
        "the other dimensions (--reduce max or sum over the hidden ones).",
        epilog=example("rankmap links links.csv --machine torus:8x8x16 --plot links.png"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE.csv", help="per-link counters (bytes or packets)")
    p.add_argument("--machine", "-m", required=True, metavar="SPEC", help=MACHINE_HELP)
    p.add_argument("--phase", metavar="NAME", help="only this phase (default: every phase)")
    p.add_argument("--reduce", choices=("max", "sum"), default=None,
                   help="how a 3-D+ torus map folds the hidden dimensions (default max)")
    p.add_argument("--top", type=int_arg(0, 1 << 30), default=10, metavar="N",
                   help="list the N busiest links per phase (default 10)")
    p.add_argument("--plot", metavar="FILE.png|svg",
                   help="write the link-load map (FILE-PHASE.png per phase when several; tori, "
                   "meshes and dragonflies)")
    add_format(p, what="csv has one row per listed link: phase, the link's columns, load, "
               "unit")
    p.add_argument("--report", metavar="FILE.html", help="write a self-contained HTML report")
    add_force(p)
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``rankmap links`` (see :func:`_run`); running out of memory is one line naming the
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
    """Run ``rankmap links``: parse, call :func:`rankmap.counters.links.link_load_summary`,
    render the table or JSON, write the report and the maps.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        Exit status 0 (errors raise RankmapError).
    """
    from ..counters import read_counters
    from ..counters.links import link_load_summary
    from ..counters.outputs import RunOutputs
    from ..io.atomic import check_writable
    from ..io.file_names import distinct_paths
    from ..machines import parse_machine
    from ..plots.linkmap import plot_link_map, supports
    from ..report.figures import image_format, save_figure, suffixed
    from ..report.links_report import links_report

    if args.top < 0:
        raise RankmapError(f"bad --top {args.top}: must be >= 0")
    if args.reduce is not None and not (args.plot or args.report):   # it would change nothing
        raise RankmapError(f"--reduce {args.reduce}: applies to the maps of --plot or --report")
    args.reduce = args.reduce or "max"
    if args.plot:
        image_format(args.plot)
    if args.report:
        if not args.report.lower().endswith((".html", ".htm")):
            raise RankmapError(f"--report {args.report!r}: expected a .html file name")
        check_writable(args.report, args.force)
    machine = parse_machine(args.machine)
    if args.plot and not supports(machine):
        raise RankmapError(f"--plot: no link-load map for {machine.spec} ({machine.kind}): "
                           "maps are drawn for tori, meshes and dragonflies; the table and "
                           "--format json list the busiest links")
    with status(f"reading {args.file}"):
        run_ = read_counters(args.file)
    names = [run_.phase(args.phase).name] if args.phase else list(run_.phases)
    paths = []
    if args.plot:  # every output is checked before any work
        paths = distinct_paths([args.plot if len(names) == 1 else suffixed(args.plot, n)
                                for n in names])
        for path in paths:
            check_writable(path, args.force)
    with status("placing the counts on the machine's links"):
        loads, doc = link_load_summary(machine, run_, args.phase, args.top, args.file)
    if args.format == "json":
        print(json_text(doc, indent=1))
    elif args.format == "csv":
        _print_csv(doc, machine)
    else:
        _print(doc)

    def draw(name):
        return plot_link_map(machine, loads[name], run_.unit, args.reduce,
                             title=f"{args.file}, phase {name}")

    # the maps take seconds each: a bar says which is drawn; an error or a Ctrl-C removes
    # the files this run wrote (a rerun is then not refused), never one that was there
    with RunOutputs() as outputs:
        if args.report:
            # no map for this machine (a fat tree): the report has the busiest links and
            # says so
            no_map = None if supports(machine) else (
                f"no link-load map is drawn for {machine.spec} ({machine.kind}): maps are "
                "drawn for tori, meshes and dragonflies; the tables above list the busiest "
                "links")
            n_maps = len(doc["phases"]) if no_map is None else 0
            with steps(n_maps, f"writing {args.report}"
                       + (f": maps of {n_maps} phase(s):" if n_maps else "")) as advance:
                rep = links_report(doc, args.reduce, draw if no_map is None else None,
                                   no_map=no_map, progress=advance)
                outputs.write(args.report, lambda: rep.write(args.report, force=args.force))
            print(f"wrote {args.report}", file=sys.stderr)
        with steps(len(paths), f"writing {len(paths)} map(s):") as advance:
            for path, name in zip(paths, loads):
                outputs.write(path, lambda: save_figure(draw(name), path, args.force))
                advance(path)
                print(f"wrote {path}", file=sys.stderr)
    return 0


def _print_csv(doc, machine) -> None:
    # the machine's link columns, also when no link is listed (--top 0: a header alone)
    keys = [*machine.link_columns(), "src_coords"]
    print_csv(["phase"] + keys + ["load", "unit"],
              ([ph["phase"]] + [" ".join(map(str, h[k])) if isinstance(h[k], list) else h[k]
                                for k in keys] + [h["load"], doc["unit"]]
               for ph in doc["phases"] for h in ph["hottest"]))


def _print(doc) -> None:
    from .common import stdout_console

    from ..counters.summary import fmt_count
    from ..report.links_report import link_cell
    from ..report.render import FitTable, TableColumn

    con = stdout_console()
    for ph in doc["phases"]:
        keys = [k for k in ph["hottest"][0] if k != "load"] if ph["hottest"] else []
        rows = [[link_cell(h[k]) for k in keys] + [fmt_count(h["load"], doc["unit"])]
                for h in ph["hottest"]]
        # a column of whole numbers is never broken; coordinates and names wrap after a
        # comma or a dash, never cut with an ellipsis; a narrow terminal leaves out the
        # source's coordinates, then the destination, first (the source names the link)
        drop = {"src_coords": 1, "dst": 2}
        cols = [TableColumn(k, number=all(r[j].isdigit() or r[j] == "-" for r in rows),
                            drop=drop.get(k), justify="right") for j, k in enumerate(keys)]
        cols.append(TableColumn(doc["unit"]))
        con.print(FitTable(cols, rows, title=f"phase {ph['phase']}: {ph['links']} links, max "
                           f"{fmt_count(ph['max'], doc['unit'])}, mean "
                           f"{fmt_count(ph['mean'], doc['unit'])}",
                           more="--format csv or json has every column"))
