"""``rankmap compare``: evaluate candidate placements side by side and mark the best."""

from __future__ import annotations

import os
import sys

from ..errors import RankmapError
from ..io.atomic import check_output_folder, check_writable
from .common import (add_budget, add_force, add_in_node, add_input_options, add_jobs, budget,
                     example, in_node, is_root, load_inputs, print_mapper_notes,
                     search_executor, search_progress, time_options)

__all__ = ["add_parser", "run", "write_plots"]


def add_parser(sub) -> None:
    """Add ``rankmap compare`` to the command parsers.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "compare", help="evaluate candidate placements side by side, mark the best",
        description="Route the pattern's flows under each candidate placement, compute link "
        "metrics per phase, and rank the candidates (best first).",
        epilog=example("rankmap compare --machine bgp:4096 --pattern stencil:128x128:box "
                       "--mappings all\n"
                       "mpirun -n 4 rankmap compare --jobs 1 --machine bgp:4096 --pattern "
                       "fft2d:128x128   # spread over 4 MPI processes"),
        formatter_class=__import__("argparse").RawDescriptionHelpFormatter)
    add_input_options(p)
    p.add_argument("--mappings", default="all", metavar="LIST",
                   help="comma-separated mapping names, or 'all' (default: every one that "
                   "applies, swap:X polishing up to 8,192 ranks; one that does not, or whose "
                   "evaluation is over a size limit, is "
                   "listed as skipped with the reason): rank orders such as TXYZ, inorder, "
                   "random, greedy, mueller-resch, rcb, cubes, cubes-dim1, fold, hilbert, "
                   "morton, graph, graph-bisect, refine:NAME, swap:NAME, rubik-tile, "
                   "'rubik: ...', auto; names are case-blind")
    add_budget(p)
    add_in_node(p)
    add_jobs(p)
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="output: a readable table (default), or json/csv on stdout")
    p.add_argument("--plot-dir", metavar="DIR",
                   help="write the link-load CDF of every phase (PNG) into DIR")
    p.add_argument("--report", metavar="FILE.html",
                   help="write a self-contained HTML report (inputs, candidates, winner, plots)")
    add_force(p)
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``rankmap compare``.

    Evaluate the candidate placements, print the table and the winner, write plots and the
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
    from ..report import render  # numpy and numba: loaded to run, not for --help
    from ..selection import compare, expand_names, is_auto
    from ..selection.auto import step_count

    executor = search_executor(args)
    if args.plot_dir:
        check_output_folder(args.plot_dir, "--plot-dir")
    machine, allocation, pattern = load_inputs(args)
    if args.plot_dir and os.path.isdir(args.plot_dir):  # refuse before any work
        from ..plots.cdf import phase_file_names
        for name in phase_file_names(ph.name for ph in pattern.phases):
            check_writable(os.path.join(args.plot_dir, name), args.force)
    if getattr(args, "report", None):
        from ..report.comparison import check_report_path
        check_report_path(args.report, args.force)
    explicit = args.mappings.strip().lower() != "all"
    # --mappings all lists the mappers that do not apply as skipped; beside a named one
    # (all,auto), where a mapper that does not apply stops the command, they are left out
    names = expand_names(args.mappings, pattern, machine, allocation, inapplicable=not explicit)
    print_mapper_notes(names, pattern)
    # auto counts its own candidates' steps on the bar, as map's does
    steps = {n: step_count(pattern, machine, allocation) for n in names if is_auto(n)}
    with search_progress(len(names) - len(steps) + sum(steps.values()), "compare",
                         steps) as bar:
        comp = compare(machine, allocation, pattern, names, routing=args.routing,
                       seed=args.seed, plateau_y=args.y, progress=bar.done,
                       skip_inapplicable=not explicit, time_options=time_options(args),
                       budget=budget(args), executor=executor, stage=bar.stage,
                       in_node=in_node(args))
    if not is_root(executor):
        return 0
    if args.format == "json":
        print(render.to_json(comp, {"plateau_y": args.y, "seed": args.seed}))
    elif args.format == "csv":
        sys.stdout.write(render.to_csv(comp))
    else:
        from .common import stdout_console

        con = stdout_console()
        con.print(render.table(comp, title=f"{pattern.spec} on {machine.spec} "
                               f"({allocation.n_nodes} nodes, {comp.routing} routing)"))
        con.print(f"best: {render.explain(comp)}")
        con.print(f"why: {render.explain_pick(comp)}")
        for name, why in comp.skipped.items():
            con.print(f"[dim]skipped {name}: {why}[/dim]")
    if args.plot_dir:
        write_plots(comp, args.plot_dir, args.y, args.force)
    if args.report:
        from .common import write_report
        write_report(comp, args)
    return 0


def write_plots(comp, plot_dir: str, y: float, force: bool) -> list[str]:
    """Write the CDF plots into ``plot_dir`` (refusing to replace files without force).

    Parameters
    ----------
    comp : Comparison
        The evaluated candidates.
    plot_dir : str
        Folder for the plots (created when missing).
    y : float
        Fraction of links of the plateau point marked on each CDF.
    force : bool
        Replace existing files.

    Returns
    -------
    list of str
        The files written, one CDF per phase.
    """
    from ..plots.cdf import phase_file_names, plot_link_cdfs

    if os.path.exists(plot_dir) and not os.path.isdir(plot_dir):
        raise RankmapError(f"--plot-dir {plot_dir!r} is a file")
    if os.path.isdir(plot_dir):
        for name in phase_file_names(ph.name for ph in comp.candidates[0].phases):
            check_writable(os.path.join(plot_dir, name), force)
    paths = plot_link_cdfs(comp, plot_dir, y=y)
    for path in paths:
        print(f"wrote {path}", file=sys.stderr)
    return paths
