"""``rankmap evaluate``: metrics of one given placement (a mapfile or a mapping name)."""

from __future__ import annotations

import argparse
import sys

from ..errors import RankmapError
from ..io.atomic import write_atomic
from ..io.format_names import FORMAT_DESCRIPTIONS
from ..validate import json_text
from .common import (add_budget, add_force, add_in_node, add_input_options, add_jobs, budget,
                     example, in_node, is_root, load_inputs, search_executor, search_progress,
                     status, time_options)

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    """Add ``rankmap evaluate`` to the command parsers.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "evaluate", help="metrics of one placement (mapfile or mapping name), every link's load",
        description="Evaluate one placement and print its metrics as JSON (shaped like "
        "compare's, with one candidate). --links-out writes every directed link's load.",
        epilog=example("rankmap evaluate --machine torus:8x8x8:cores=2 --pattern fft2d:32x32 "
                       "--mapfile my.map --links-out links.csv"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_input_options(p)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--mapfile", metavar="FILE",
                     help="a placement file, as map --emit writes them for launchers: Blue "
                     "Gene mapfile (x y z t), Cray MPICH_RANK_ORDER, SLURM_HOSTFILE or host "
                     "list, Open MPI rankfile, MPICH machinefile; the format is told by the "
                     "first line (host-only formats fix each rank's node, its core follows "
                     "rank order)")
    src.add_argument("--mapping", metavar="NAME", help="a mapping name instead (e.g. TXYZ)")
    p.add_argument("--mapfile-format", choices=tuple(FORMAT_DESCRIPTIONS), metavar="FORMAT",
                   help=f"the --mapfile's format when its first line does not tell: "
                   f"{', '.join(FORMAT_DESCRIPTIONS)}")
    p.add_argument("--names", metavar="TEMPLATE",
                   help="with --mapfile: the host name template the file was written with "
                   "(map --names), e.g. 'nid{id:05d}', so its host names read back")
    p.add_argument("--format", choices=("table", "json", "csv"), default="json",
                   help="output: json on stdout (default, shaped like compare's), a readable "
                   "table, or csv")
    add_budget(p)
    add_in_node(p)
    add_jobs(p, what="the candidates and refinements of --mapping auto (or refine:X)")
    p.add_argument("--links-out", metavar="FILE.csv",
                   help="write every directed link's load: the machine's link columns "
                   "(src,dim,dir,dst on a torus; class,... on a dragonfly or k-ary fat tree; "
                   "src,dst,src_name,dst_name on a topology.conf tree), then "
                   "bytes,streams; a phase column first when the pattern has several phases")
    p.add_argument("--report", metavar="FILE.html",
                   help="write a self-contained HTML report (inputs, the placement's "
                   "metrics, plots)")
    add_force(p)
    p.set_defaults(func=run)


def _nothing():
    from contextlib import nullcontext
    return nullcontext()


def run(args) -> int:
    """Run ``rankmap evaluate``.

    Evaluate one placement (a mapper or a mapfile), print its metrics, write the link loads and
    the report.

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
    # numpy and numba: loaded to run, not for --help
    from ..evaluation import Comparison, Evaluator
    from ..io.links_csv import format_links_csv
    from ..io.read_placement import read_placement
    from ..mappers import Placement
    from ..selection import build_placement

    executor = search_executor(args)
    machine, allocation, pattern = load_inputs(args)
    if getattr(args, "report", None):
        from ..report.comparison import check_report_path
        check_report_path(args.report, args.force)
    if args.links_out:
        from ..io.atomic import check_writable
        if not args.links_out.lower().endswith(".csv"):
            raise RankmapError(f"--links-out {args.links_out!r}: expected a .csv file name")
        check_writable(args.links_out, args.force)
    if args.mapfile and args.in_node is not None:
        raise RankmapError(f"--in-node {args.in_node}: applies to --mapping, not to a --mapfile "
                           "(its cores are evaluated as written)")
    if args.mapfile_format and not args.mapfile:
        raise RankmapError(f"--mapfile-format {args.mapfile_format}: applies to --mapfile only")
    if args.names and not args.mapfile:
        raise RankmapError(f"--names {args.names}: applies to --mapfile only (the host names "
                           "a file was written with)")
    if args.mapfile:
        if args.names:
            from ..io.hostnames import apply_name_template
            allocation = apply_name_template(allocation, machine, args.names)
        mapping = read_placement(args.mapfile, machine, allocation, pattern.n_ranks,
                                 args.mapfile_format)
    evaluator = Evaluator(machine, allocation, pattern, args.routing, args.y,
                          time_options=time_options(args))
    if not args.mapfile:
        from ..selection import REFINE_TOP, candidate_names, is_auto

        total = (len(candidate_names(pattern, machine, allocation)) + REFINE_TOP
                 if is_auto(args.mapping) else 0)
        with search_progress(total, "auto") as bar, \
                status(f"building {args.mapping}") if not total else _nothing():
            if total:   # auto: its row says which candidate it picked
                from ..mappers import check_fits
                from ..selection import auto_select
                check_fits(pattern.n_ranks, allocation)
                best = auto_select(pattern, machine, allocation, args.seed, evaluator.router,
                                   budget=budget(args), evaluator=evaluator,
                                   executor=executor, stage=bar.stage, progress=bar.done,
                                   in_node=in_node(args), baseline=False).best
                mapping = Placement(f"auto ({best.name})", best.mapping.core_of_rank)
            else:
                mapping = build_placement(args.mapping, pattern, machine, allocation,
                                          args.seed, budget=budget(args), evaluator=evaluator,
                                          executor=executor, stage=bar.stage,
                                          progress=bar.done, in_node=in_node(args))
    with status(f"routing {mapping.name}"):
        ev = evaluator.evaluate(mapping)
    if not is_root(executor):
        return 0
    comp = Comparison(machine, allocation, pattern, evaluator.routing, [ev],
                      time_model=evaluator.time_model)
    if args.format == "json":
        doc = comp.to_json()
        doc["settings"] = {"plateau_y": args.y, "seed": args.seed}   # as compare's JSON
        print(json_text(doc, indent=1))
    elif args.format == "csv":
        from ..report import render
        sys.stdout.write(render.to_csv(comp))
    else:
        from .common import stdout_console

        from ..report import render
        con = stdout_console()
        con.print(render.table(comp, title=f"{pattern.spec} on {machine.spec} "
                               f"({allocation.n_nodes} nodes, {comp.routing} routing)"))
    if args.links_out:
        if not args.links_out.lower().endswith(".csv"):
            raise RankmapError(f"--links-out {args.links_out!r}: expected a .csv file name")
        write_atomic(args.links_out, format_links_csv(machine, ev.phases), force=args.force)
        print(f"wrote {args.links_out}", file=sys.stderr)
    if args.report:
        from .common import write_report
        write_report(comp, args)
    return 0
