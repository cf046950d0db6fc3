"""``rankmap demo``: the embedded default comparison (seed 001, section 3.2).

A Blue Gene/P-like 4,096-node torus (8x16x32, 4 cores per node) runs a 128x128 box
halo exchange (16,384 ranks, 1 MiB per neighbour) under dimension-order routing. Every rank
order, ``inorder`` and ``random`` are compared; the table, the winner and its reason are
printed, and the link-load CDF plot and ``compare.json`` go to ``./rankmap-demo/`` (the demo
replaces its own previous outputs in that folder).
"""

from __future__ import annotations

import argparse
import os

from ..errors import RankmapError
from ..io.atomic import write_atomic
from ..io.sealed import file_digest
from .common import progress_bar

__all__ = ["DEMO_MACHINE", "DEMO_PATTERN", "DEMO_DIR", "DEMO_FILES", "MANIFEST", "DESCRIPTION",
           "add_parser", "run"]

DEMO_MACHINE = "bgp:4096"
DEMO_PATTERN = "stencil:128x128:box"
DEMO_DIR = "rankmap-demo"
#: what ``rankmap demo --help`` says (plain text: the module docstring's markup is not shown)
DESCRIPTION = (
    "The embedded default comparison (paper 001, section 3.2). A Blue Gene/P-like 4,096-node\n"
    "torus (8x16x32, 4 cores per node) runs a 128x128 box halo exchange (16,384 ranks, 1 MiB\n"
    "per neighbour) under dimension-order routing. Every rank order, inorder and random are\n"
    "compared; the table, the winner and its reason are printed, and the link-load CDF plot\n"
    "and compare.json go to ./rankmap-demo/ (the demo replaces its own earlier outputs there).")


def add_parser(sub) -> None:
    """Add ``rankmap demo`` to the command parsers.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "demo", help="the embedded default: BG/P 4096-node torus, 2-D box halo, all rank orders",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  rankmap demo")
    p.add_argument("--force", "-f", action="store_true",
                   help="replace files in rankmap-demo/ that an earlier demo did not write")
    p.set_defaults(func=run)


#: the files the demo writes into :data:`DEMO_DIR`
DEMO_FILES = ("cdf-halo.png", "compare.json")


#: the fingerprints of the files the last demo wrote (``sha256  name`` lines), in DEMO_DIR
MANIFEST = ".rankmap-demo.sha256"


def _check_own_outputs(force: bool) -> None:
    """The demo replaces its own earlier outputs only: each file it would write that exists
    must be, byte for byte, what the last demo wrote (its fingerprint in :data:`MANIFEST`);
    a file the user wrote or changed since is kept unless ``force``, and named."""
    present = [n for n in DEMO_FILES if os.path.lexists(os.path.join(DEMO_DIR, n))]
    if not present or force:
        return
    known = {}
    try:
        with open(os.path.join(DEMO_DIR, MANIFEST), encoding="utf-8") as fh:
            for line in fh.read(1 << 16).splitlines():
                digest, _, name = line.partition("  ")
                known[name] = digest
    except (OSError, ValueError):
        known = {}
    for name in present:
        path = os.path.join(DEMO_DIR, name)
        try:
            own = os.path.isfile(path) and known.get(name) == file_digest(path)
        except OSError:
            own = False
        if not own:
            raise RankmapError(f"{path} exists and is not what an earlier demo wrote: use "
                               "--force to replace it, or run the demo elsewhere")


def _write_manifest(paths: list[str]) -> None:
    """Record the fingerprints of the files the demo just wrote (:data:`MANIFEST`)."""
    lines = "".join(f"{file_digest(p)}  {os.path.basename(p)}\n" for p in paths)
    write_atomic(os.path.join(DEMO_DIR, MANIFEST), lines, force=True)


def run(args) -> int:
    """Run ``rankmap demo``: run the embedded default comparison into rankmap-demo/.

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
    from .common import stdout_console

    from ..allocation import whole_machine  # numpy and numba: loaded to run, not for --help
    from ..io.atomic import check_output_folder
    from ..machines import parse_machine
    from ..mappers.rank_order import rank_order_names
    from ..patterns import parse_pattern
    from ..report import render
    from ..selection import compare

    check_output_folder(DEMO_DIR, "the demo's folder")    # before the work, not after it
    _check_own_outputs(args.force)
    con = stdout_console()
    machine = parse_machine(DEMO_MACHINE)
    allocation = whole_machine(machine)
    pattern = parse_pattern(DEMO_PATTERN)
    names = rank_order_names(machine) + ["inorder", "random"]
    con.print(f"[bold]rankmap demo[/bold]: {pattern.n_ranks} ranks of {DEMO_PATTERN} "
              f"(8 neighbours, 1 MiB each) on {DEMO_MACHINE} = torus "
              f"{'x'.join(map(str, machine.dims))}, {machine.cores_per_node} cores/node, "
              "dimension-order routing")
    with progress_bar(len(names), "evaluating") as advance:
        comp = compare(machine, allocation, pattern, names, routing="dor", progress=advance)
    con.print(render.table(comp))
    con.print(f"best: {render.explain(comp)}")
    con.print(f"why: {render.explain_pick(comp)}")
    worst = comp.candidates[-1]
    con.print(f"worst: {worst.name} (busiest link {worst.metrics['max_link_streams']} streams "
              f"vs {comp.best.metrics['max_link_streams']} for {comp.best.name})")
    os.makedirs(DEMO_DIR, exist_ok=True)
    from ..plots.cdf import plot_link_cdfs

    paths = plot_link_cdfs(comp, DEMO_DIR)
    json_path = os.path.join(DEMO_DIR, "compare.json")
    from ..defaults import DEFAULT_PLATEAU_Y
    write_atomic(json_path, render.to_json(comp, {"plateau_y": DEFAULT_PLATEAU_Y, "seed": 0})
                 + "\n", force=True)
    _write_manifest(paths + [json_path])
    for path in paths + [json_path]:
        con.print(f"wrote {path}")
    return 0
