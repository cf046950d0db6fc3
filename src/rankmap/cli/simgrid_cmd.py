"""``rankmap simgrid platform``: write the SimGrid platform XML of a machine, whose host
names (``node-<id>``) are those ``rankmap map --emit hostfile`` writes by default."""

from __future__ import annotations

import argparse
import sys

from ..io.atomic import check_writable, write_atomic
from .common import MACHINE_HELP, add_force, example

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    """Add ``rankmap simgrid`` to the command parsers.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "simgrid", help="SimGrid files: the platform XML of a machine",
        description="Write SimGrid SMPI inputs. 'platform' writes the machine as one SimGrid "
        "cluster (torus, k-ary fat tree or dragonfly; see rankmap.simgrid.platform) with hosts "
        "node-<id>, the names 'rankmap map --emit hostfile' uses by default.",
        epilog=example("rankmap simgrid platform --machine torus:4x4x4 -o platform.xml\n"
                       "rankmap map --machine torus:4x4x4 --pattern stencil:4x4x4 --mapping "
                       "XYZT --emit hostfile -o hosts\n"
                       "smpirun -platform platform.xml -hostfile hosts -np 64 ./app"),
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

    check_writable(args.output, args.force)
    mem = None if args.mem_bw.strip().lower() == "none" else \
        parse_bandwidth(args.mem_bw, "--mem-bw")
    machine = parse_machine(args.machine)
    write_atomic(args.output, platform_xml(machine, mem_bw=mem), force=args.force)
    print(f"wrote {args.output}: {machine.n_nodes} hosts node-0 .. node-{machine.n_nodes - 1}",
          file=sys.stderr)
    return 0
