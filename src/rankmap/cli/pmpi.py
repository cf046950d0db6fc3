"""``rankmap pmpi``: the PMPI library for C/C++/Fortran programs (path, build, place)."""

from __future__ import annotations

import argparse
import sys

# nothing heavy at module level: `rankmap pmpi path` needs no numpy, and `rankmap pmpi place`
# (run by the library on one process of the job at every reordering) imports only what the
# placement needs (cli.common would add the analysis modules)

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    """Register the ``pmpi`` subcommand.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "pmpi", help="the PMPI library that reorders MPI_Cart_create & co. in any MPI program",
        description="The rankmap PMPI library, loaded with LD_PRELOAD into a C, C++ or Fortran "
        "MPI program: MPI_Cart_create, MPI_Graph_create and MPI_Dist_graph_create(_adjacent) "
        "with reorder = true follow a rankmap placement (RANKMAP_MACHINE), and RANKMAP_RECORD "
        "records who sends how much to whom. It is compiled on first use with the MPI's own "
        "mpicc.",
        epilog="example:\n  LD_PRELOAD=$(rankmap pmpi path) RANKMAP_MACHINE=torus:4x4x4:cores=4 "
        "mpirun -x LD_PRELOAD -x RANKMAP_MACHINE -n 256 ./app\n"
        "  rankmap pmpi build --mpicc mpicc.mpich",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    for name, text, ex in (
            ("path", "print the library's path (compiled on first use)",
             "LD_PRELOAD=$(rankmap pmpi path --mpicc mpicc.openmpi) mpirun ... ./app"),
            ("build", "compile the library again and print its path",
             "rankmap pmpi build --mpicc mpicc.mpich")):
        a = actions.add_parser(name, help=text, description=text.capitalize() + ".",
                               epilog=f"example:\n  {ex}",
                               formatter_class=argparse.RawDescriptionHelpFormatter)
        a.add_argument("--mpicc", metavar="CMD",
                       help="MPI C compiler wrapper of the MPI the program runs with "
                       "(default: $RANKMAP_MPICC or mpicc)")
        a.set_defaults(func=run)
    place = actions.add_parser(
        "place", help="(internal) answer a reordering request of the library",
        description="Used by the library on one process: read REQUEST, compute the placement, "
        "write the new rank of every process to RESULT.",
        epilog="example:\n  rankmap pmpi place /tmp/rankmap-pmpi-x/request -o /tmp/result",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    place.add_argument("request", metavar="REQUEST",
                       help="the request file the library wrote (machine, grid, processes)")
    place.add_argument("-o", "--output", required=True, metavar="RESULT",
                       help="file to write the new rank of every process to")
    place.add_argument("--force", "-f", action="store_true",
                       help="overwrite an existing RESULT")
    place.set_defaults(func=run)
    p.set_defaults(func=_no_action)


def _no_action(args) -> int:
    """``rankmap pmpi`` without an action: one line, as ``rankmap simgrid`` says it."""
    from ..errors import RankmapError
    raise RankmapError("give an action: path or build (rankmap pmpi --help)")


def run(args) -> int:
    """Print the library path (building it if needed) or answer a placement request.

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
    if args.action == "place":
        from ..pmpi.place import run_place
        run_place(args.request, args.output, args.force)
        return 0
    from ..pmpi.build import library_path
    print(library_path(args.mpicc, rebuild=args.action == "build"))
    sys.stdout.flush()
    return 0
