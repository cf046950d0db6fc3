"""``rankmap study``: seed 002's scaling study (node counts x threads per rank x mappers over
random allocations, normalised to inorder), with a Figure-1-style plot."""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import RankmapError
from ..io.atomic import check_output_folder, check_writable, write_atomic
from .common import (MACHINE_HELP, PATTERN_HELP, add_budget, add_force, add_in_node, add_jobs,
                     add_time_options, budget, check_socket_setting, example,
                     given_time_settings, in_node, progress_bar, search_executor)
from ..validate import json_text
from .argtypes import SEED, int_arg
from .notes import note

#: node counts of the default sweep (those up to the machine's size are studied)
DEFAULT_NODES = (4, 8, 16, 32)

__all__ = ["add_parser", "default_threads", "run"]


def add_parser(sub) -> None:
    """Register ``rankmap study``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "study", help="sweep node counts and threads per rank over random allocations",
        description="For every node count, threads-per-rank value and random allocation "
        "(random:N:seed=S), fill the allocation with the pattern and evaluate every mapper of "
        "--mappings; "
        "report per mapper the median busiest-link bytes and predicted time normalised to "
        "inorder (paper 002, Figure 1). With --out DIR every point is saved as it finishes and "
        "a rerun resumes.",
        epilog=example("rankmap study --machine xc:groups=26 --pattern minighost "
                       "--nodes-sweep 1,2,4,...,256 --threads 1,2,4,8,16,32 --plot study.png "
                       "--out study-dir"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--machine", "-m", required=True, metavar="SPEC", help=MACHINE_HELP)
    p.add_argument("--pattern", "-p", required=True, metavar="SPEC",
                   help=PATTERN_HELP + "; give no grid so it fills each allocation")
    p.add_argument("--nodes-sweep", default=None, metavar="LIST",
                   help="node counts, e.g. 1,2,4,...,4096 (default 4,8,16,32, those the "
                   "machine has)")
    p.add_argument("--threads", metavar="LIST",
                   help="threads per rank, e.g. 1,2,4,...,32; each must divide the cores per "
                   "node (default: 1, a middle power of two, and all cores: 1,8,32 on an xc)")
    p.add_argument("--mappings", default="inorder,random,rcb", metavar="LIST",
                   help="mappers to compare (default inorder,random,rcb; inorder is the "
                   "reference and is added when missing)")
    p.add_argument("--allocs", type=int_arg(1, 100000), default=8, metavar="K",
                   help="random allocations per node count (default 8, like paper 002)")
    p.add_argument("--routing", "-r", metavar="NAME", help="routing model (default: the "
                   "machine's first)")
    p.add_argument("--seed", type=SEED, default=0,
                   help="base seed S of allocations and mappers (default 0): allocation k "
                   "of a point is random:N:seed=1000*S+k and its mappers get seed S+k, as "
                   "each point of results.jsonl records")
    add_time_options(p)
    add_budget(p)
    # with --time-model off a point's time is its busiest link's bytes / bandwidth (much faster
    # on big machines); unset here so that the option's first spelling, kept for scripts, can
    # be told apart from the default
    p.set_defaults(time_model=None)
    p.add_argument("--time", choices=("model", "busiest-link"), default=None,
                   help=argparse.SUPPRESS)
    p.add_argument("--out", "-o", metavar="DIR",
                   help="save points here (results.jsonl, study.json, summary.csv) and resume "
                   "an interrupted study")
    p.add_argument("--plot", metavar="FILE.png|svg", help="write the Figure-1-style plot")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="summary on stdout: table (default), json or csv")
    add_in_node(p)
    add_jobs(p, mpi=False, what="several random allocations at a time")
    add_force(p)
    p.set_defaults(func=run)


def default_threads(cores: int) -> list[int]:
    """1, the middle power of two dividing ``cores``, and all cores (1,8,32 for 32; 1,2,12
    for 12).

    Parameters
    ----------
    cores : int
        Cores per node.

    Returns
    -------
    list of int
        Threads per rank to try: 1, the middle power of two dividing ``cores`` and ``cores``
        (one rank a node; 12 cores gave 1, 2, 4 and left it out).
    """
    powers = [1 << i for i in range(cores.bit_length()) if cores % (1 << i) == 0]
    return sorted({1, powers[len(powers) // 2], cores})


def _time_source(args) -> str:
    """The study's time of a point, ``model`` or ``busiest-link``, from ``--time-model``
    (or its first spelling ``--time``)."""
    if args.time_model is not None and args.time is not None:
        want = "model" if args.time_model == "on" else "busiest-link"
        if want != args.time:
            raise RankmapError(f"--time-model {args.time_model} and --time {args.time} "
                               "disagree: give --time-model only")
    if args.time_model is not None:
        return "model" if args.time_model == "on" else "busiest-link"
    return args.time or "model"


def _given_time_options(args) -> dict | None:
    """The time model's settings the command line gives (bytes/s, seconds), JSON-ready; None
    when it gives none (the defaults, and a study folder written before they could be
    given still resumes)."""
    if (args.nic_bw, args.mem_bw, args.socket_bw, args.msg_overhead) == (None,) * 4 \
            and args.mem_sharing == "node":
        return None
    if _time_source(args) == "busiest-link":   # settings that would change nothing
        raise RankmapError(f"{given_time_settings(args)[0]}: a setting of the time model, "
                           "which the study's busiest-link time (--time-model off) does not use")
    from ..timing import parse_time_options

    opts = parse_time_options(nic=args.nic_bw, mem=args.mem_bw, overhead=args.msg_overhead,
                              mem_sharing=args.mem_sharing, socket=args.socket_bw)
    return {"nic_bw": opts.nic_bw, "mem_bw": opts.mem_bw, "socket_bw": opts.socket_bw,
            "mem_shared": opts.mem_shared, "overhead_s": opts.overhead_s}


def _node_counts(args) -> list[int]:
    """--nodes-sweep as given, or the default sweep up to the machine's node count."""
    from ..machines import parse_machine
    from ..study import parse_sweep

    if args.nodes_sweep is not None:
        return parse_sweep(args.nodes_sweep, "--nodes-sweep")
    size = parse_machine(args.machine).n_nodes
    return [n for n in DEFAULT_NODES if n <= size] or [size]


def _refuse_a_pattern_that_moves_nothing(spec: str) -> None:
    """A pattern with its own rank count that moves nothing (``stencil:1``) is refused: every
    point of the sweep would show speedup 1.00 for nothing measured. A pattern that fills
    each point's allocation is parsed there."""
    from ..patterns import check_moves_something, parse_pattern
    try:
        pattern = parse_pattern(spec)
    except RankmapError:
        return          # needs the point's rank count (or is bad: said at the first point)
    check_moves_something(pattern)


def run(args) -> int:
    """Run or resume the study, print the summary, write the plot; exit status 0.

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
    from ..machines import parse_machine
    from ..selection import distinct_names, split_names
    from ..study import (StudyParams, parse_sweep, plot_study, run_study, summary_csv,
                         summary_notes)

    _refuse_a_pattern_that_moves_nothing(args.pattern)
    mappings = split_names(args.mappings)
    if any(m.lower() == "all" for m in mappings):
        raise RankmapError("study --mappings takes mapper names, not 'all' (what applies "
                           "depends on each point's allocation): name them, e.g. "
                           "inorder,random,rcb,greedy")
    # case-blind, as compare's; the reference by the name the summary looks for
    from ..mappers.registry import MAPPERS
    # the fixed names spelled as compare prints them ('Rcb' is rcb), so a study resumes
    # whatever the case typed
    mappings = [m.strip().lower() if m.strip().lower() in MAPPERS else m
                for m in distinct_names(mappings)]
    if "inorder" not in mappings:
        mappings.insert(0, "inorder")
    threads = (parse_sweep(args.threads, "--threads") if args.threads is not None
               else default_threads(parse_machine(args.machine).cores_per_node))
    check_socket_setting(args, parse_machine(args.machine))
    params = StudyParams(machine=args.machine, pattern=args.pattern,
                         nodes=_node_counts(args),
                         threads=threads,
                         mappings=list(dict.fromkeys(mappings)), allocs=args.allocs,
                         routing=args.routing, seed=args.seed, time=_time_source(args),
                         time_options=_given_time_options(args),
                         in_node=in_node(args), budget=budget(args))
    if args.plot:
        from ..report.figures import image_format
        image_format(args.plot)          # .png or .svg, as every plot of rankmap
        check_writable(args.plot, args.force)
    if args.out:
        check_output_folder(args.out, "--out")
        summary = os.path.join(args.out, "summary.csv")
        if (os.path.exists(summary) and not os.path.exists(os.path.join(args.out, "study.json"))
                and not args.force):
            raise RankmapError(f"--out {args.out!r} holds a summary.csv of no study (no "
                               "study.json); use --force to replace it")
    total = len(params.nodes) * len(params.threads) * params.allocs
    with progress_bar(total, "study") as advance:
        study = run_study(params, args.out, progress=advance,
                          executor=search_executor(args, mpi=False))
    rows = study.summary()
    notes = summary_notes(rows)
    for line in notes:
        note(f"rankmap study: note: {line}")
    if args.out:
        write_atomic(os.path.join(args.out, "summary.csv"), summary_csv(rows), force=True)
    if args.format == "json":
        print(json_text({"params": params.key(), "summary": rows, "notes": notes}, indent=1))
    elif args.format == "csv":
        sys.stdout.write(summary_csv(rows))
    else:
        _print_table(rows, params)
    if args.plot:
        print(f"wrote {plot_study(study, args.plot, args.force)}", file=sys.stderr)
    return 0


def _print_table(rows, params) -> None:
    from .common import stdout_console
    from ..report.render import FitTable, TableColumn

    src = rows[0]["time_source"] if rows else "model"
    # numbers never broken, mapping names wrapped (never cut to "refine:…")
    columns = [TableColumn("nodes"), TableColumn("threads/rank"), TableColumn("ranks"),
               TableColumn("mapping", number=False, justify="right"),
               TableColumn("busiest link vs inorder"), TableColumn("time vs inorder")]
    cells = [[str(r["nodes"]), str(r["threads"]), str(r["ranks"]), r["mapping"],
              *("-" if r[k] is None else f"{r[k]:.2f}"     # not applicable: 0/0
                for k in ("bytes_vs_inorder", "time_vs_inorder"))] for r in rows]
    stdout_console().print(FitTable(
        columns, cells, title=f"{params.pattern} on {params.machine}: medians of "
        f"{params.allocs} random allocations, normalised to inorder (time: {src})"))
