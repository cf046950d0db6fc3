"""``rankmap nodes``: list every allocated node in order with its name, id and coordinates."""

from __future__ import annotations

import argparse

from .common import MACHINE_HELP, NODES_HELP, add_format, example, print_csv
from ..validate import json_text

__all__ = ["add_parser", "node_records", "run"]


def add_parser(sub) -> None:
    """Register ``rankmap nodes``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "nodes", help="list the allocated nodes: name, node id, coordinates",
        description="Resolve --nodes on the machine and list every allocated node in "
        "allocation order, so a host list or topology file can be checked before trusting a "
        "placement. Dragonfly coordinates are [group, row, col, node].",
        epilog=example('rankmap nodes --machine xc:groups=26 --nodes "c0-0c0s[0-3]n[0-3]"\n'
                       "rankmap nodes --machine xc:groups=26 --nodes site.csv:nid[00001-00064] "
                       "--format json"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--machine", "-m", required=True, metavar="SPEC", help=MACHINE_HELP)
    p.add_argument("--nodes", "-n", metavar="SPEC", help=NODES_HELP)
    add_format(p, what="json is a list of {name, id, coords}; csv has columns name, id, "
               "coord0, coord1, ...")
    p.set_defaults(func=run)


def node_records(machine, allocation) -> list[dict]:
    """``[{"name", "id", "coords"}]`` for every allocated node, in allocation order.

    Parameters
    ----------
    machine : Machine
        The machine.
    allocation : Allocation
        The allocation.

    Returns
    -------
    list of dict
        ``{"name", "id", "coords"}`` of every allocated node, in allocation order.
    """
    names = allocation.host_names(machine)
    coords = machine.coords(allocation.nodes).tolist()
    return [{"name": n, "id": int(i), "coords": [int(v) for v in c]}
            for n, i, c in zip(names, allocation.nodes.tolist(), coords)]


def run(args) -> int:
    """List the allocation (table or JSON on stdout); exit status 0.

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
    from ..allocation import parse_allocation  # numpy and numba: to run, not for --help
    from ..machines import parse_machine

    machine = parse_machine(args.machine)
    allocation = parse_allocation(args.nodes, machine)
    records = node_records(machine, allocation)
    if args.format == "json":
        print(json_text(records))
        return 0
    if args.format == "csv":
        ndim = max(len(r["coords"]) for r in records)
        print_csv(["name", "id"] + [f"coord{d}" for d in range(ndim)],
                  ([r["name"], r["id"], *r["coords"]] for r in records))
        return 0
    width = max(4, max(len(r["name"]) for r in records))
    print(f"{'name':<{width}}  {'id':>8}  coords")
    for r in records:
        print(f"{r['name']:<{width}}  {r['id']:>8}  {' '.join(map(str, r['coords']))}")
    return 0
