"""``rankmap map``: compute a placement and write it in a launcher's format."""

from __future__ import annotations

import argparse
import sys

from ..errors import RankmapError
from ..io.atomic import check_writable, write_atomic
from ..io.format_names import FORMAT_DESCRIPTIONS
from .notes import note
from .common import (add_budget, add_force, add_in_node, add_input_options, add_jobs, budget,
                     example, in_node, is_root, load_inputs, print_mapper_notes,
                     search_executor, search_progress,
                     status, time_options)

__all__ = ["add_parser", "run", "run_auto", "rank_order_nodes", "cray_pick",
           "simgrid_platform_problem", "cores_follow_rank_order", "HOST_ONLY_FORMATS"]


def add_parser(sub) -> None:
    """Add ``rankmap map`` to the command parsers.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "map", help="write a placement file for a launcher",
        description="Compute the placement NAME for the pattern on the allocation and write "
        "it in a launcher's format.\n\nformats (--emit):\n" +
        "\n".join(f"  {name:<9} {text}" for name, text in FORMAT_DESCRIPTIONS.items()),
        epilog=example("rankmap map --machine bgp:4096 --pattern stencil:128x128:box "
                       "--mapping TZXY --emit bgp -o mapfile\n"
                       "mpirun -n 4 rankmap map --jobs 1 --machine bgp:4096 --pattern "
                       "stencil:128x128:box --mapping auto --emit bgp -o mapfile"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_input_options(p)
    p.add_argument("--mapping", required=True, metavar="NAME",
                   help="mapping name (e.g. TZXY, inorder, greedy, rcb, graph, cubes, "
                   "'refine:greedy', 'rubik: app tile 1,8,16; net tile 8,8,2'), or auto: "
                   "evaluate every applicable one, print the table and write the best")
    add_budget(p)
    add_in_node(p)
    add_jobs(p)
    p.add_argument("--emit", required=True, metavar="FORMAT",
                   help="file format: " + ", ".join(FORMAT_DESCRIPTIONS))
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="file to write")
    p.add_argument("--names", metavar="TEMPLATE",
                   help="host name template for launcher files, e.g. 'nid{id:05d}' (fields: "
                   "id, pos = position in the allocation, machine letters x y z ...); "
                   "default: names given in --nodes, else the machine's (node<x>-<y>-<z> on "
                   "a torus; node-<id> in hostfile, as rankmap's SimGrid platforms)")
    add_force(p)
    p.set_defaults(func=run)


def run(args) -> int:
    """Run ``rankmap map``: compute one placement and write it in the launcher's format.

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
    from ..io.emit import get_emitter, usage_text
    from ..io.hostnames import apply_name_template, check_host_names
    from ..selection import build_placement, is_auto

    emitter = get_emitter(args.emit)
    executor = search_executor(args)
    check_writable(args.output, args.force)
    # a placement file is no metric: a one-rank job may be placed (auto's table, refused)
    machine, allocation, pattern = load_inputs(args, metrics=is_auto(args.mapping))
    if emitter.check_machine is not None:     # a format that cannot say where: before the search
        emitter.check_machine(machine)
    if getattr(args, "names", None):
        if emitter.name in ("bgp", "bgq", "cray"):     # they say coordinates or ranks only
            raise RankmapError(f"--names {args.names}: the {emitter.name} format names no "
                               "hosts (it gives coordinates or rank lists)")
        allocation = apply_name_template(allocation, machine, args.names)
    # a host name the launcher would misread: refused before the search, naming it
    check_host_names(allocation, machine, emitter.name)
    if emitter.name == "cray":
        allocation = rank_order_nodes(allocation, pattern.n_ranks)
    if is_auto(args.mapping):
        mapping = run_auto(args, machine, allocation, pattern, executor, fmt=emitter.name)
    else:
        print_mapper_notes([args.mapping], pattern)
        with status(f"building {args.mapping}"):
            # (the in-node step is judged with the command's time model)
            mapping = build_placement(args.mapping, pattern, machine, allocation, args.seed,
                                      routing=args.routing, budget=budget(args),
                                      time_options=time_options(args), in_node=in_node(args))
        if emitter.name == "cray":
            from ..io.cray import rank_order_problem, uneven_advice
            problem = rank_order_problem(mapping, allocation)
            if problem is not None:
                raise RankmapError(uneven_advice(problem, args.mapping,
                                                 allocation.cores_per_node))
    if not is_root(executor):
        return 0
    text = emitter.write(mapping, machine, allocation)
    write_atomic(args.output, text, force=args.force)
    print(f"wrote {args.output}: {mapping.name} placement of {pattern.n_ranks} ranks "
          f"({emitter.name})", file=sys.stderr)
    caveat = emitter.caveat(text) if emitter.caveat is not None else None
    if caveat:
        note(f"note: {caveat}")
    if emitter.name in HOST_ONLY_FORMATS and machine.node_structure is not None and \
            not cores_follow_rank_order(mapping, allocation):
        note(f"note: the {emitter.name} file gives each rank its node, not its core: the "
             "launcher gives a node's ranks its cores in rank order, not the sockets and "
             "NUMA domains this placement chose for them; --emit openmpi keeps the cores")
    if emitter.usage:
        print(usage_text(emitter, args.output, mapping, allocation, machine.spec,
                         no_platform=(simgrid_platform_problem(machine)
                                      if emitter.name == "hostfile" else None)))
    return 0


#: formats that name each rank's host only (the launcher picks the cores)
HOST_ONLY_FORMATS = ("slurm", "mpich", "hostfile")


def cores_follow_rank_order(mapping, allocation) -> bool:
    """Whether every node's ranks sit on its first cores in rank order, as a launcher reading
    a host-only file puts them.

    Parameters
    ----------
    mapping : Placement
        The placement.
    allocation : Allocation
        The allocation its cores refer to.

    Returns
    -------
    bool
        True when a host-only file loses nothing of the placement.
    """
    import numpy as np
    cores = np.asarray(mapping.core_of_rank, dtype=np.int64)
    cpn = allocation.cores_per_node
    node = cores // cpn
    order = np.lexsort((np.arange(len(cores)), node))        # by node, then rank
    first = np.searchsorted(node[order], node[order], side="left")
    return bool(np.array_equal(cores[order] % cpn, np.arange(len(cores)) - first))


def simgrid_platform_problem(machine) -> str | None:
    """Why ``rankmap simgrid platform`` cannot write a platform for ``machine`` (the
    platform writer's own check), or None when it can.

    Parameters
    ----------
    machine : Machine
        The machine.

    Returns
    -------
    str or None
        The platform writer's one-line reason; None when a platform can be written.
    """
    from ..simgrid.platform import check_supported
    try:
        check_supported(machine, machine.routings[0])
    except RankmapError as exc:
        return str(exc)
    return None


def rank_order_nodes(allocation, n_ranks: int, prefix: str = ""):
    """The allocation a Cray rank order of ``n_ranks`` ranks runs on: its first nodes, as
    Cray MPICH fills them in order (a note says so when that leaves nodes out).

    Parameters
    ----------
    allocation : Allocation
        The allocation given (``--nodes``, the batch job's hosts).
    n_ranks : int
        Ranks placed.
    prefix : str
        Start of the note (``rankmap launch: ``).

    Returns
    -------
    Allocation
        Its first ``ceil(n_ranks / cores_per_node)`` nodes (itself when it has no more).
    """
    from ..io.cray import rank_order_allocation
    first = rank_order_allocation(allocation, n_ranks)
    if first.n_nodes < allocation.n_nodes:
        which = "node" if first.n_nodes == 1 else f"{first.n_nodes} nodes"
        note(f"{prefix}note: the cray rank order places the {n_ranks} ranks on the first "
             f"{which} of the {allocation.n_nodes} allocated (Cray MPICH fills them in "
             f"allocation order, {allocation.cores_per_node} a node)")
    return first



def run_auto(args, machine, allocation, pattern, executor=None, fmt: str | None = None):
    """``--mapping auto``: evaluate every candidate (progress on stderr; spread by
    ``executor``), print the table and the reason for the winner on stdout (rank 0 of an MPI
    launch only), return the winning Placement (for ``fmt`` ``cray``, the best one a rank
    order can hold, with a line saying so when that is not the winner).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``map`` command line (routing, time options, budget, seed).
    machine : Machine
        The machine.
    allocation : Allocation
        The allocation.
    pattern : Pattern
        The pattern.
    executor : Executor, optional
        Where the candidates run (:mod:`rankmap.selection.parallel`, :mod:`rankmap.mpi.spread`).
    fmt : str, optional
        The format written (``--emit``).

    Returns
    -------
    Placement
        The winner.
    """
    from .common import stdout_console

    from ..selection import auto_select
    from ..selection.auto import step_count
    from ..report import render

    with search_progress(step_count(pattern, machine, allocation), "auto") as bar:
        # the baseline row (inorder) is for rank 0's table: the other processes use the
        # pick only, which it never changes
        comp = auto_select(pattern, machine, allocation, args.seed, routing=args.routing,
                           plateau_y=args.y, progress=bar.done, budget=budget(args),
                           time_options=time_options(args), executor=executor,
                           stage=bar.stage, in_node=in_node(args),
                           baseline=is_root(executor))
    if not is_root(executor):
        return comp.best.mapping
    con = stdout_console()
    con.print(render.table(comp, title=f"auto: {pattern.spec} on {machine.spec} "
                           f"({allocation.n_nodes} nodes, {comp.routing} routing)"))
    con.print(f"winner: {render.explain(comp)}")
    con.print(f"why: {render.explain_pick(comp)}")
    for name, why in comp.skipped.items():   # left out, pruned or not refined: as compare
        con.print(f"[dim]skipped {name}: {why}[/dim]")
    if fmt == "cray":
        pick, problem = cray_pick(comp)
        if problem is not None:
            con.print(f"cray: {comp.best.name} cannot be written ({problem}); writing "
                      f"{pick.name}, the best candidate a rank order can hold", markup=False)
        return pick.mapping
    return comp.best.mapping


def cray_pick(comp):
    """The best of ``auto``'s candidates a Cray rank order can hold, and why the winner
    cannot when it cannot.

    Parameters
    ----------
    comp : Comparison
        ``auto``'s evaluated candidates, best first.

    Returns
    -------
    pick : Evaluation
        The candidate to write.
    problem : str or None
        Why the winner cannot be written; None when it is the pick.

    Raises
    ------
    RankmapError
        When no candidate can be written.
    """
    from ..io.cray import rank_order_pick
    pick, problem = rank_order_pick(comp.candidates, comp.allocation)
    if pick is None:
        raise RankmapError(f"auto: no candidate can be written as a cray rank order: "
                           f"{problem}")
    return pick, problem
