"""``rankmap validate``: rankmap's predicted time versus SimGrid SMPI's simulated time."""

from __future__ import annotations

import argparse
import sys

from ..errors import RankmapError
from ..units import format_seconds
from ..io.atomic import check_writable, write_atomic
from ..report.figures import image_format
from ..validate import json_text
from .argtypes import float_arg
from .common import (add_budget, add_force, add_input_options, budget, example, load_inputs,
                     search_progress, time_options)

__all__ = ["add_parser", "run", "print_table"]


def add_parser(sub) -> None:
    """Add ``rankmap validate`` to the command parsers.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "validate", help="predicted time (rankmap) vs simulated time (SimGrid SMPI) per placement",
        description="For each candidate placement, predict its time with rankmap's max-min "
        "bandwidth-sharing model and simulate the same flows in SimGrid SMPI (real MPI code, "
        "platform XML of the machine, hostfile of the placement). Prints both times, their "
        "ratio, Spearman and Pearson correlation and which placement each ranks first. Needs "
        "smpicc/smpirun (Debian: apt-get install libsimgrid-dev simgrid). Machines SimGrid "
        "routes like rankmap: tori (dor), k-ary fat trees (dmodk, taper=1) and dragonflies "
        "with rows=1,global=1,layout=absolute (minimal); the route check line says whether "
        "SimGrid's routes are rankmap's. After '--', your own MPI program built with SimGrid's "
        "smpicc runs instead, under every placement, and its whole run's simulated time is "
        "compared with the pattern's prediction (record the pattern from the same program "
        "built with mpicc: rankmap record).",
        epilog=example("rankmap validate --machine torus:8x8x16 --pattern stencil:32x32:periodic "
                       "--mappings XYZT,random,greedy,graph --plot v.png\n"
                       "rankmap record -o app.csv -- mpirun -n 64 ./app\n"
                       "smpicc -O2 -o app.smpi app.c\n"
                       "rankmap validate --machine torus:4x4x4 --pattern graph:app.csv "
                       "-- ./app.smpi"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    # the prediction is made like SimGrid's platform: a loopback link per message
    add_input_options(p, mem_help="bandwidth of the loopback link each intra-node message "
                      "takes, as in SimGrid's platform, e.g. 10GB/s (default), or 'none' for "
                      "free intra-node messages")
    p.add_argument("--mappings", default="all", metavar="LIST",
                   help="comma-separated mapping names, or 'all' (default)")
    p.add_argument("--timeout", type=float_arg(0.0, 86400.0, positive=True, what="--timeout"),
                   default=600.0, metavar="SECONDS",
                   help="wall-clock limit per simulation (default 600); a candidate that "
                   "exceeds it is reported without a simulated time")
    p.add_argument("--program", choices=("auto", "flows"), default=None,
                   help="SMPI program: 'auto' (default) runs the pattern's own MPI program "
                   "(halo exchange for stencil, sub-communicator MPI_Alltoall for fft2d, "
                   "MPI_Sendrecv for random pairs) and the flow-list replay for other "
                   "patterns; 'flows' always replays the flows")
    p.add_argument("--plot", metavar="FILE.png|svg",
                   help="scatter plot of simulated vs predicted (PNG or SVG)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    add_budget(p)
    add_force(p)
    p.set_defaults(mem_sharing=None)         # given or not: validate always shares per flow
    # options validate refuses (the prediction is made as SimGrid's platform works) or does
    # not use: accepted only to refuse them by name, and kept out of --help
    for action in p._actions:
        if action.dest in ("time_model", "nic_bw", "msg_overhead", "mem_sharing", "socket_bw",
                           "y"):
            action.help = argparse.SUPPRESS
    p.add_argument("program_argv", nargs=argparse.REMAINDER, metavar="-- PROGRAM ARGS",
                   help="your own MPI program (built with smpicc) and its arguments, after "
                   "'--': simulated with --pattern's rank count in the current directory")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``rankmap validate``.

    Simulate the placements in SimGrid SMPI and compare with the predicted times.

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
    from ..simgrid import validation as V

    command = list(args.program_argv or [])
    if command and command[0] == "--":
        command = command[1:]
    if args.program_argv and not command:
        raise RankmapError("no program after '--': give your smpicc-built program, e.g. "
                           "-- ./app.smpi")
    if command and args.program:
        raise RankmapError(f"--program {args.program} and a program after '--' both choose "
                           f"what SMPI runs: give one")
    if command:
        from ..simgrid.runner import check_program_args, program_path
        check_program_args(command)
        program_path(command[0])
    if args.time_model == "off":        # before mem_sharing is set below
        raise RankmapError("validate needs the time model: drop --time-model off")
    # the prediction is made like SimGrid's platform (no NIC limit, no per-message overhead
    # setting, loopback per flow): options that say otherwise would be dropped, so they are refused
    given = [opt for opt, value in (("--nic-bw", args.nic_bw),
                                    ("--msg-overhead", args.msg_overhead),
                                    ("--socket-bw", args.socket_bw)) if value is not None]
    if args.mem_sharing == "node":
        given.append("--mem-sharing node")
    from ..defaults import DEFAULT_PLATEAU_Y
    if args.y != DEFAULT_PLATEAU_Y:
        raise RankmapError(f"--y {args.y} does not apply to validate: it compares times, not "
                           "the plateau of link loads")
    if given:
        raise RankmapError(f"{given[0]} does not apply to validate: the prediction is made like "
                           "SimGrid's platform, which has no NIC limit, no per-message overhead "
                           "setting, no link between sockets and a loopback link per message")
    args.mem_sharing = "flow"
    for out in (args.plot, args.json):
        if out:
            check_writable(out, args.force)
    if args.plot:
        image_format(args.plot)          # .png or .svg, said before the simulations run
    machine, allocation, pattern = load_inputs(args)
    ns = machine.node_structure
    if ns is not None and (ns.n_packages > 1 or ns.n_domains > 1):
        raise RankmapError(f"machine {machine.spec!r} has {ns.n_packages} socket(s) and "
                           f"{ns.n_domains} NUMA domain(s) a node (node=...), which SimGrid's "
                           "platform does not have (a host has one loopback link): the "
                           "prediction would not be the simulation's; validate the machine "
                           "without node=")
    from ..selection import expand_names

    every = args.mappings.strip().lower() == "all"
    # --mappings all lists the mappers that do not apply as skipped, as compare does
    names = expand_names(args.mappings, pattern, machine, allocation, inapplicable=every)
    # a step per candidate's prediction and per simulation; the bar names the steps in
    # progress (building, routing, simulating), not the last one done
    with search_progress(2 * len(names), "validate") as bar:
        val = V.validate(machine, allocation, pattern, names, routing=args.routing,
                         seed=args.seed, timeout=args.timeout, progress=bar.done,
                         stage=bar.stage, budget=budget(args),
                         program=args.program or "auto", time_options=time_options(args),
                         command=command or None,
                         skip_inapplicable=every)
    print_table(val)
    if args.plot:
        print(f"wrote {V.scatter_plot(val, args.plot, args.force)}", file=sys.stderr)
    if args.json:
        write_atomic(args.json, json_text(val.to_json(), indent=1) + "\n", force=args.force)
        print(f"wrote {args.json}", file=sys.stderr)
    if not val.done:        # nothing to compare with: not a validation
        raise RankmapError(f"no placement was simulated: all {len(val.rows)} timed out or "
                           f"failed (raise --timeout {args.timeout:g}, or check the program)")
    if all(r.simulated_s == 0 for r in val.done):   # a ranking of zeros is no validation
        raise RankmapError("the program sent nothing in SMPI (every placement simulated in "
                           "0 s): is it the program of the pattern?")
    return 0


def print_table(val) -> None:
    """The per-candidate table and the agreement summary.

    Parameters
    ----------
    val : Validation
        The validation result (predicted and simulated times per candidate, route check).
    """
    from .common import stdout_console
    from ..report.render import FitTable, TableColumn

    con = stdout_console()
    # numbers never broken, names wrapped; on a narrow terminal the wall time goes first
    columns = [TableColumn("mapping", number=False), TableColumn("predicted"),
               TableColumn("simulated"), TableColumn("pred/sim"),
               TableColumn("sim wall", drop=1)]
    cells = [[r.mapping, format_seconds(r.predicted_s),   # rankmap's ranking order
              format_seconds(r.simulated_s) if r.simulated_s is not None else "timeout",
              f"{r.ratio:.3f}" if r.ratio is not None else "-",
              f"{r.wall_s:.1f} s" if r.wall_s is not None else "-"] for r in val.rows]
    con.print(FitTable(columns, cells, title=val.scenario, more="--json has every column"))
    programs = sorted({r.program for r in val.rows if r.program})
    if programs:
        con.print(f"SMPI program: {', '.join(programs)}")
    if val.routes is not None:
        con.print(val.routes.describe())
    sp, pe = val.correlations()
    note = val.correlation_note()
    if note is not None:
        con.print(f"Spearman n/a   Pearson n/a: {note}")
    else:
        con.print(f"Spearman {sp:.3f}   Pearson {pe:.3f}")
    bs = val.best_simulated()
    bp = val.best_predicted()
    if bs is not None:
        gap = val.best_gap()
        con.print(f"rankmap ranks first: {bp.mapping}; SMPI ranks first: {bs.mapping}"
                  + (f" (rankmap's pick is {gap * 100:.1f}% slower in SMPI)" if gap else
                     " (same time)"))
        tied = val.tied_with_pick()
        if len(tied) > 1:
            sims = [r.simulated_s for r in tied]
            con.print(f"{len(tied)} placements, the pick among them, are predicted the same "
                      f"time ({format_seconds(bp.predicted_s)}): the ranking's later keys "
                      f"(busiest link, hop-bytes, then the order given) chose; SMPI gives "
                      f"them {format_seconds(min(sims))}"
                      + (f" to {format_seconds(max(sims))}" if max(sims) > min(sims) else ""))
    for name, why in val.skipped.items():
        con.print(f"[dim]skipped {name}: {why}[/dim]")
    for r in val.rows:
        if r.error:
            con.print(f"[dim]{r.mapping}: {r.error}[/dim]")
