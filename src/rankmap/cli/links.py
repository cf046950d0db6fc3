"""``rankmap links``: where the hot links are (link-load maps of a counters file)."""

from __future__ import annotations

import argparse
import sys

from ..errors import RankmapError
from .common import MACHINE_HELP, add_force, example
from ..validate import json_text
from .argtypes import int_arg


def add_parser(sub) -> None:
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
    p.add_argument("--reduce", choices=("max", "sum"), default="max",
                   help="how a 3-D+ torus map folds the hidden dimensions (default max)")
    p.add_argument("--top", type=int_arg(0, 1 << 30), default=10, metavar="N",
                   help="list the N busiest links per phase (default 10)")
    p.add_argument("--plot", metavar="FILE.png|svg",
                   help="write the link-load map (FILE-PHASE.png per phase when several)")
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="output on stdout (default table)")
    p.add_argument("--report", metavar="FILE.html", help="write a self-contained HTML report")
    add_force(p)
    p.set_defaults(func=run)


def hottest(machine, loads, n: int) -> list[dict]:
    """The ``n`` busiest links: their machine link columns and load, busiest first."""
    import numpy as np

    cols = machine.link_columns()
    top = np.argsort(-loads, kind="stable")[:n]
    out = []
    for i in top.tolist():
        row = {c: (v[i].item() if hasattr(v[i], "item") else v[i]) for c, v in cols.items()}
        if hasattr(machine, "coords"):
            row["src_coords"] = [int(c) for c in machine.coords(int(cols["src"][i]))] \
                if "src" in cols else None
        row["load"] = float(loads[i])
        out.append(row)
    return out


def run(args) -> int:
    from ..counters import read_counters
    from ..counters.links import align_to_machine
    from ..io.atomic import check_writable
    from ..machines import parse_machine
    from ..plots.linkmap import plot_link_map
    from ..report.figures import image_format, save_figure, suffixed

    if args.top < 0:
        raise RankmapError(f"bad --top {args.top}: must be >= 0")
    if args.plot:
        image_format(args.plot)
    if args.report:
        if not args.report.lower().endswith((".html", ".htm")):
            raise RankmapError(f"--report {args.report!r}: expected a .html file name")
        check_writable(args.report, args.force)
    machine = parse_machine(args.machine)
    run_ = read_counters(args.file)
    phases = [run_.phase(args.phase)] if args.phase else list(run_.phases.values())
    paths = []
    if args.plot:  # every output is checked before any work
        paths = [args.plot if len(phases) == 1 else suffixed(args.plot, ph.name) for ph in phases]
        for path in paths:
            check_writable(path, args.force)
    loads = {ph.name: align_to_machine(machine, ph, args.file) for ph in phases}
    doc = {"file": args.file, "machine": machine.spec, "unit": run_.unit,
           "phases": [{"phase": n, "links": int(machine.n_links), "max": float(v.max()),
                       "mean": float(v.mean()), "hottest": hottest(machine, v, args.top)}
                      for n, v in loads.items()]}
    if args.format == "json":
        print(json_text(doc, indent=1))
    else:
        _print(doc)
    def draw(name):
        return plot_link_map(machine, loads[name], run_.unit, args.reduce,
                             title=f"{args.file}, phase {name}")

    if args.report:
        from ..report.html import Report

        rep = Report(f"rankmap links: {args.file} on {machine.spec}")
        rep.heading("Inputs")
        rep.inputs({"counters": args.file, "machine": machine.spec, "counter": run_.unit,
                    "phases": ", ".join(loads), "map reduction": args.reduce})
        rep.heading("Busiest links")
        for ph in doc["phases"]:
            keys = [k for k in ph["hottest"][0] if k != "load"] if ph["hottest"] else []
            rep.table(keys + [run_.unit], [[_cell(h[k]) for k in keys] + [_fmt(h["load"], run_.unit)]
                                          for h in ph["hottest"]],
                      caption=f"phase {ph['phase']}: busiest first", best_row=0,
                      table_id=f"hot-{ph['phase']}")
        rep.heading("Link-load maps")
        for name in loads:
            rep.figure(draw(name), f"link loads, phase {name}")
        rep.write(args.report, force=args.force)
        print(f"wrote {args.report}", file=sys.stderr)
    for path, name in zip(paths, loads):
        save_figure(draw(name), path, args.force)
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _cell(v) -> str:
    return "(" + ",".join(map(str, v)) + ")" if isinstance(v, list) else str(v)


def _fmt(v: float, unit: str) -> str:
    from .counters import fmt_count

    return fmt_count(v, unit)


def _print(doc) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console(width=None if sys.stdout.isatty() else 120)
    for ph in doc["phases"]:
        t = Table(title=f"phase {ph['phase']}: {ph['links']} links, max "
                  f"{_fmt(ph['max'], doc['unit'])}, mean {_fmt(ph['mean'], doc['unit'])}",
                  title_justify="left", header_style="bold")
        keys = [k for k in ph["hottest"][0] if k != "load"] if ph["hottest"] else []
        for k in keys + [doc["unit"]]:
            t.add_column(k, justify="right")
        for h in ph["hottest"]:
            t.add_row(*[_cell(h[k]) for k in keys], _fmt(h["load"], doc["unit"]))
        con.print(t)
