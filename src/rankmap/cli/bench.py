"""``rankmap bench``: MPI benchmarks with a placement applied by reordering ranks in the job."""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import RankmapError
from ..mpi.bench_config import KINDS, BenchConfig
from ..mpi.env_names import MACHINE_ENV
from ..specs import parse_shape
from ..units import parse_size
from .common import add_force, example
from ..validate import json_text
from .argtypes import SEED, int_arg

__all__ = ["MAX_SIZES", "MAX_MESSAGE", "parse_sizes", "add_parser", "run"]

MAX_SIZES = 40
#: largest message (bytes): MPI counts are C ints, and the benchmarks send bytes
MAX_MESSAGE = (1 << 31) - 1


def parse_sizes(text: str) -> list[int]:
    """Message sizes from ``1KiB..4MiB`` (doubling from the first) or ``1KiB,64KiB,1MiB``.

    Parameters
    ----------
    text : str
        ``1KiB..4MiB`` (doubling from the first size up to the last) or a comma list.

    Returns
    -------
    list of int
        Message sizes in bytes, at most :data:`MAX_SIZES`.
    """
    if ".." in text:
        lo_t, _, hi_t = text.partition("..")
        lo, hi = parse_size(lo_t, "--sizes start"), parse_size(hi_t, "--sizes end")
        if hi < lo:
            raise RankmapError(f"bad --sizes {text!r}: the end is below the start")
        sizes = []
        s = lo
        while s <= hi:
            sizes.append(s)
            s *= 2
        if sizes[-1] != hi:
            raise RankmapError(f"bad --sizes {text!r}: the end is not a doubling of the start "
                               f"({sizes[-1]} B, then {2 * sizes[-1]} B), as study's sweeps")
    else:
        sizes = [parse_size(t, "--sizes entry") for t in text.split(",")]
    if len(sizes) > MAX_SIZES:
        raise RankmapError(f"bad --sizes {text!r}: {len(sizes)} sizes, at most {MAX_SIZES}")
    if max(sizes) > MAX_MESSAGE:
        raise RankmapError(f"bad --sizes {text!r}: {max(sizes)} B is more than an MPI message "
                           f"of bytes holds ({MAX_MESSAGE} B, a C int's count)")
    twice = sorted({s for s in sizes if sizes.count(s) > 1})
    if twice:
        raise RankmapError(f"bad --sizes {text!r}: {twice[0]} B is given twice")
    return sizes


def add_parser(sub) -> None:
    """Register the ``bench`` subcommand.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "bench", help="MPI benchmarks (pairs, cart, halo, fft) under a placement",
        description="Run under mpirun or srun (needs mpi4py). Ranks are first reordered by the "
        "placement of the benchmark's own pattern on the job's nodes (as rankmap.mpi."
        "cart_create does); then every message size is exchanged --iters times, --repeats "
        "times. Reports min and median time of the slowest process per exchange and the "
        "bandwidth per process (bytes sent per process / median time, MB/s = 10^6 B/s). "
        "pairs: random pairings with Isend/Irecv/Wait, best and worst pairing (paper 003 "
        "section 2); cart: 1-D/2-D/3-D neighbour exchange, --cyclic or not (paper 003 "
        "section 4); halo: 2-D/3-D star or --box halo; fft: Alltoall in every row then "
        "every column of a P0xP1 grid.",
        epilog=example("mpirun -n 16 rankmap bench halo --dims 4x4 --sizes 1KiB..4MiB "
                       "--machine torus:4x4:cores=1 --mapping TXY --json out.json --plot out.png"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=KINDS, help="benchmark")
    p.add_argument("--dims", metavar="SHAPE", help="process grid, e.g. 32, 4x8, 2x4x4")
    p.add_argument("--sizes", default="1KiB..1MiB", metavar="RANGE",
                   help="message sizes: 1KiB..4MiB (doubling) or 1KiB,1MiB (default 1KiB..1MiB)")
    p.add_argument("--repeats", type=int_arg(1, 10000), default=5, help="timed repeats per size (default 5)")
    p.add_argument("--iters", type=int_arg(1, 1 << 30), help="exchanges per repeat (default: 1 MiB / size, "
                   "1 to 50)")
    p.add_argument("--box", action="store_true", help="halo: box stencil (3^d - 1 neighbours)")
    p.add_argument("--cyclic", "--periodic", dest="periodic", action="store_true",
                   help="cart/halo: periodic (cyclic) grid")
    p.add_argument("--pairings", type=int_arg(1, 10000), default=None,
                   help="pairs: number of random pairings (default 4)")
    p.add_argument("--machine", "-m", metavar="SPEC",
                   help=f"machine spec or .toml (default ${MACHINE_ENV}; none: no reordering)")
    p.add_argument("--mapping", default="auto", metavar="NAME",
                   help="placement to apply, or 'none' for the launcher's order (default auto)")
    p.add_argument("--seed", type=SEED, default=0,
                   help="seed of placements and pairings (default 0)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    p.add_argument("--plot", metavar="FILE.png|svg",
                   help="write a plot of bandwidth vs size (PNG or SVG)")
    add_force(p)
    p.set_defaults(func=run)


def _config(args) -> BenchConfig:
    if args.repeats < 1:
        raise RankmapError(f"bad --repeats {args.repeats}: must be at least 1")
    if args.iters is not None and args.iters < 1:
        raise RankmapError(f"bad --iters {args.iters}: must be at least 1")
    # options of another benchmark would be ignored: said instead
    given = [opt for opt, kinds, on in (("--dims", ("cart", "halo", "fft"), args.dims),
                                        ("--pairings", ("pairs",), args.pairings is not None),
                                        ("--box", ("halo",), args.box),
                                        ("--cyclic", ("cart", "halo"), args.periodic))
             if on and args.kind not in kinds]
    if given:
        raise RankmapError(f"{given[0]} does not apply to the {args.kind} benchmark")
    pairings = 4 if args.pairings is None else args.pairings
    if pairings < 1:
        raise RankmapError(f"bad --pairings {pairings}: must be at least 1")
    if args.plot:
        from ..report.figures import image_format
        image_format(args.plot)         # .png or .svg, as every picture of rankmap
    dims = parse_shape(args.dims, "--dims", max_dims=3) if args.dims else None
    machine = args.machine or os.environ.get(MACHINE_ENV, "").strip() or None
    if machine is not None:
        from ..machines import parse_machine
        from ..selection import check_name
        machine = parse_machine(machine)
        if args.mapping.strip().lower() != "none":
            check_name(args.mapping, machine)      # a typo is refused before the job runs
    elif args.mapping.strip().lower() not in ("auto", "none"):
        raise RankmapError(f"--mapping {args.mapping} needs a machine (--machine or "
                           f"${MACHINE_ENV}): without one the launcher's order is kept")
    return BenchConfig(args.kind, dims, parse_sizes(args.sizes), args.repeats, args.iters,
                       args.box, args.periodic, pairings, args.mapping, machine, args.seed)


def run(args) -> int:
    """Run the benchmark on MPI.COMM_WORLD; rank 0 prints the table and writes the files.

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
    try:
        from mpi4py import MPI
    except ImportError:
        raise RankmapError("rankmap bench needs mpi4py: pip install 'rankmap[mpi]' (with an MPI "
                           "library installed, e.g. apt-get install openmpi-bin "
                           "libopenmpi-dev)") from None
    comm = MPI.COMM_WORLD
    try:
        return _run(args, comm)
    except RankmapError:
        if comm.Get_rank() != 0:  # every process fails alike: let rank 0 say it once
            sys.exit(2)
        raise


def _run(args, comm) -> int:
    from ..io.atomic import check_writable
    from ..mpi.bench import check_buffer_memory, check_config, run_benchmark
    from ..mpi.bench_report import format_table, plot_bandwidth
    # every process reads the options (a machine file may be missing on one node's disk
    # only): the processes agree before the first collective, instead of the others waiting
    # in it for a process that failed alone
    error = None
    try:
        cfg = _config(args)
        check_config(cfg, comm.Get_size())
        if comm.Get_rank() == 0:
            for path in (args.json, args.plot):
                if path:
                    check_writable(path, args.force)
            check_buffer_memory(cfg)        # this node's memory: said once, by rank 0
    except RankmapError as exc:
        error = str(exc)
    except OSError as exc:
        error = f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc)
    errors = comm.gather(error, root=0)
    if comm.Get_rank() == 0:
        first = next(((p, e) for p, e in enumerate(errors) if e is not None), None)
        error = None if first is None else (first[1] if first[0] == 0 else
                                            f"process {first[0]}: {first[1]}")
    error = comm.bcast(error, root=0)
    if error:
        raise RankmapError(error)
    result = run_benchmark(comm, cfg)
    if result is None:
        return 0
    sys.stdout.write(format_table(result))
    if args.json:
        from ..io.atomic import write_atomic
        write_atomic(args.json, json_text(result, indent=1) + "\n", force=args.force)
        print(f"wrote {args.json}", file=sys.stderr)
    if args.plot:
        plot_bandwidth(result, args.plot, force=args.force)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0
