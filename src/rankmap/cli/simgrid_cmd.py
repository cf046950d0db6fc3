"""``rankmap simgrid platform``: write the SimGrid platform XML of a machine, whose host
names (``node-<id>``) are those ``rankmap map --emit hostfile`` writes by default;
``rankmap simgrid shim``: write the C file to link into a program's ``smpicc`` build."""

from __future__ import annotations

import argparse
import sys

from ..errors import RankmapError
from ..io.atomic import check_writable, write_atomic
from .common import MACHINE_HELP, add_force, example

__all__ = ["add_parser", "run", "run_shim", "SHIM_CHOICES"]

#: ``--like`` choices: :data:`rankmap.simgrid.shim.SHIM_FLAVOURS` (not imported here: the
#: simgrid package would load with every command's start-up)
SHIM_CHOICES = ("openmpi", "mpich")


def add_parser(sub) -> None:
    """Add ``rankmap simgrid`` to the command parsers.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "simgrid", help="SimGrid files: the platform XML of a machine, the SMPI build's shim",
        description="Write SimGrid SMPI inputs. 'platform' writes the machine as one SimGrid "
        "cluster (torus, k-ary fat tree), or a zone of one cluster per router (dragonfly, whose "
        "node links get no latency; see rankmap.simgrid.platform), with hosts "
        "node-<id>, the names 'rankmap map --emit hostfile' uses by default. 'shim' writes the "
        "C file to compile into your program's smpicc build for 'rankmap validate -- PROGRAM': "
        "MPI_Pcontrol does nothing (SimGrid 3.32 aborts on it) and MPI_Dims_create gives Open "
        "MPI's (or MPICH's) dimensions, not SimGrid's (9x4 of 36 processes, not 6x6).",
        epilog=example("rankmap simgrid platform --machine torus:4x4x4 -o platform.xml\n"
                       "rankmap map --machine torus:4x4x4 --pattern stencil:4x4x4 --mapping "
                       "XYZT --emit hostfile -o hosts\n"
                       "smpirun -platform platform.xml -hostfile hosts -np 64 ./app\n"
                       "rankmap simgrid shim -o shim.c\n"
                       "smpicc -O2 -o app.smpi app.c shim.c"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    what = p.add_subparsers(dest="simgrid_command", metavar="WHAT", required=True)
    q = what.add_parser("platform", help="write the platform XML of --machine",
                        epilog=example("rankmap simgrid platform --machine torus:4x4x4 "
                                       "-o platform.xml"),
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("--machine", "-m", required=True, metavar="SPEC", help=MACHINE_HELP)
    q.add_argument("-o", "--output", required=True, metavar="FILE.xml", help="file to write")
    q.add_argument("--mem-bw", metavar="BW", default="10GB/s",
                   help="loopback (intra-node) bandwidth, e.g. 10GB/s (default), or 'none' for "
                   "free intra-node messages")
    add_force(q)
    q.set_defaults(func=run)
    q = what.add_parser("shim", help="write the C file to link into a program's smpicc build",
                        epilog=example("rankmap simgrid shim -o shim.c\n"
                                       "smpicc -O2 -o app.smpi app.c shim.c\n"
                                       "smpicc -c shim.c && smpif90 -o app.smpi app.f90 shim.o"),
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("-o", "--output", required=True, metavar="FILE.c", help="file to write")
    q.add_argument("--like", choices=SHIM_CHOICES, default="openmpi",
                   help="whose MPI_Dims_create to imitate: the MPI library the program's "
                   "recording was made with (default openmpi)")
    add_force(q)
    q.set_defaults(func=run_shim)


def run(args) -> int:
    """Run ``rankmap simgrid``: write the SimGrid platform of a machine.

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
    from ..machines import parse_machine
    from ..simgrid.platform import platform_xml
    from ..units import parse_bandwidth

    _check_extension(args.output, ".xml", "SimGrid reads a platform by its .xml extension")
    check_writable(args.output, args.force)
    # 'none', 'inf' or 'unlimited', as the time model's --mem-bw takes them
    mem = None if args.mem_bw.strip().lower() in ("none", "inf", "unlimited") else \
        parse_bandwidth(args.mem_bw, "--mem-bw")
    machine = parse_machine(args.machine)
    write_atomic(args.output, platform_xml(machine, mem_bw=mem), force=args.force)
    print(f"wrote {args.output}: {machine.n_nodes} hosts node-0 .. node-{machine.n_nodes - 1}",
          file=sys.stderr)
    return 0


def run_shim(args) -> int:
    """Run ``rankmap simgrid shim``: write the shim's C source.

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
    from ..simgrid.shim import shim_source

    _check_extension(args.output, ".c", "smpicc compiles it as C by its .c extension")
    check_writable(args.output, args.force)
    write_atomic(args.output, shim_source(args.like), force=args.force)
    print(f"wrote {args.output}: MPI_Pcontrol does nothing, MPI_Dims_create as {args.like}'s; "
          f"build with smpicc -O2 -o app.smpi app.c {args.output}", file=sys.stderr)
    return 0


def _check_extension(path: str, ext: str, why: str) -> None:
    """Refuse an output name without the extension the file is used by."""
    if not path.lower().endswith(ext):
        raise RankmapError(f"-o {path!r}: expected a {ext} file name ({why})")
