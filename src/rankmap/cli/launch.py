"""``rankmap launch``: run an MPI launcher with a computed placement (inside a batch job)."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys

from ..errors import RankmapError
from ..io.atomic import check_writable, write_atomic
from ..io.emit import get_emitter
from ..launch import command_for, job_allocation, job_hosts, launcher_format, launcher_ranks
from ..machines import parse_machine
from ..selection import build_placement
from ..mappers.base import check_fits
from ..mpi.nodes import MACHINE_ENV
from ..patterns import parse_pattern
from .argtypes import SEED
from .common import PATTERN_HELP, add_force, example, time_options

__all__ = ["add_parser", "reorder_environment", "run"]


def add_parser(sub) -> None:
    """Register the ``launch`` subcommand.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "launch", help="run srun/mpirun/mpiexec/smpirun/aprun with a computed placement",
        description="Inside a batch job: read the allocated nodes from the environment "
        "(Slurm SLURM_JOB_NODELIST + SLURM_TASKS_PER_NODE, PBS_NODEFILE, or an Open MPI "
        "hostfile), compute the placement of the pattern on them, write the launcher's "
        "placement file and run the launcher with the option or variable that reads it "
        "(srun: SLURM_HOSTFILE + --distribution=arbitrary; mpirun: --rankfile; "
        "mpiexec.hydra: -f; smpirun: -hostfile; aprun: MPICH_RANK_ORDER).",
        epilog=example("rankmap launch --machine site.toml --pattern halo.toml -- "
                       "srun -n 16384 ./app\n"
                       "rankmap launch --reorder --machine site.toml -- srun -n 16384 ./app\n"
                       "rankmap launch -m torus:8x8x8:cores=4 -p stencil:32x64 --mapping TXYZ "
                       "--dry-run -- mpirun -n 2048 ./app"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--machine", "-m", metavar="SPEC",
                   help=f"machine spec or .toml file (default: ${MACHINE_ENV})")
    p.add_argument("--pattern", "-p", metavar="SPEC",
                   help=PATTERN_HELP + " (required unless --reorder)")
    p.add_argument("--mapping", default="auto", metavar="NAME",
                   help="placement to apply (default: auto)")
    p.add_argument("--nodes", "-n", metavar="SPEC",
                   help="machine node ids of the job's hosts, in the job's order (default: "
                   "match host names to the machine's node names)")
    p.add_argument("--hostfile", metavar="FILE",
                   help="read the hosts from this file ('host' or 'host slots=N' lines) "
                   "instead of the batch environment")
    p.add_argument("--format", metavar="FORMAT",
                   help="placement file format (default: from the launcher name)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="placement file to write (default: rankmap-<job id>.<format>; "
                   "cray: MPICH_RANK_ORDER)")
    p.add_argument("--seed", type=SEED, default=0, help="seed for random placements (default 0)")
    p.add_argument("--reorder", action="store_true",
                   help="preload the rankmap PMPI library so that the program's "
                   "MPI_Cart_create/MPI_Graph_create/MPI_Dist_graph_create(_adjacent) with "
                   "reorder = true follow the placement --mapping on --machine (exports "
                   "LD_PRELOAD, RANKMAP_MACHINE, RANKMAP_MAPPING, RANKMAP_SEED, RANKMAP_BIN "
                   "and any other RANKMAP_* variable set); with --pattern the placement "
                   "file is written and used too")
    p.add_argument("--mpicc", metavar="CMD",
                   help="with --reorder: MPI C compiler wrapper of the program's MPI "
                   "(default: $RANKMAP_MPICC or mpicc)")
    p.add_argument("--dry-run", action="store_true",
                   help="write the placement file and print the command instead of running it")
    add_force(p)
    p.add_argument("launcher_argv", nargs=argparse.REMAINDER, metavar="-- LAUNCHER ARGS",
                   help="the launcher command line, after '--'")
    p.set_defaults(func=run)


def _output_path(args, fmt: str, job_id: str) -> str:
    if fmt == "cray":
        if args.output and os.path.basename(args.output) != "MPICH_RANK_ORDER":
            raise RankmapError(f"-o {args.output!r}: Cray MPICH reads the file MPICH_RANK_ORDER "
                               "in the working directory")
        return args.output or "MPICH_RANK_ORDER"
    return args.output or f"rankmap-{job_id or os.getpid()}.{fmt}"


def _engine_path() -> str:
    """The rankmap command the PMPI library should run on the compute nodes."""
    beside = os.path.join(os.path.dirname(sys.executable), "rankmap")
    found = beside if os.access(beside, os.X_OK) else shutil.which("rankmap")
    return os.path.abspath(found or sys.argv[0])


def reorder_environment(args, spec: str) -> dict[str, str]:
    """Variables that make the preloaded PMPI library reorder the program's topologies.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``launch`` command line (``--mpicc``, ``--mapping``, ...).
    spec : str
        The machine spec or TOML file the library passes to ``rankmap pmpi place``.

    Returns
    -------
    dict of str to str
        ``LD_PRELOAD`` (the library first), ``RANKMAP_MACHINE``, ``RANKMAP_MAPPING``,
        ``RANKMAP_SEED``, ``RANKMAP_BIN`` and every ``RANKMAP_*`` variable already set.
    """
    from ..pmpi.build import library_path
    lib = library_path(args.mpicc)
    preload = os.environ.get("LD_PRELOAD", "")
    env = {k: v for k, v in os.environ.items() if k.startswith("RANKMAP_")}
    env.update({"LD_PRELOAD": lib + (":" + preload if preload else ""),
                "RANKMAP_MACHINE": os.path.abspath(spec) if os.path.isfile(spec) else spec,
                "RANKMAP_MAPPING": args.mapping, "RANKMAP_SEED": str(args.seed),
                "RANKMAP_BIN": _engine_path()})
    return env


def _exec(argv: list[str], env: dict[str, str], dry_run: bool) -> int:
    line = " ".join([f"{k}={shlex.quote(v)}" for k, v in env.items()] + [shlex.join(argv)])
    if dry_run:
        print(line)
        return 0
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvpe(argv[0], argv, {**os.environ, **env})
    return 0  # not reached: exec replaces the process


def run(args) -> int:
    """Compute the placement, write the launcher file, then exec (or print) the launcher.

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
    argv = list(args.launcher_argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise RankmapError("no launcher command: give it after '--', e.g. -- srun ./app")
    if not args.pattern and not args.reorder:
        raise RankmapError("give --pattern (a placement file for the launcher) or --reorder "
                           "(the program's MPI_Cart_create & co. reorder)")
    renv: dict[str, str] = {}
    if args.reorder:
        from ..pmpi.environment import launcher_env_args
        spec = args.machine or os.environ.get(MACHINE_ENV, "").strip()
        if not spec:
            raise RankmapError(f"no machine: pass --machine or set ${MACHINE_ENV}")
        parse_machine(spec)  # a bad spec fails here, not silently in every process
        if not args.dry_run and shutil.which(argv[0]) is None:
            raise RankmapError(f"launcher {argv[0]!r} not found on PATH")
        renv = reorder_environment(args, spec)
        if not args.pattern:
            print(f"rankmap launch: {args.mapping} reordering of the program's topologies on "
                  f"{spec} (PMPI library {renv['LD_PRELOAD'].split(':')[0]})", file=sys.stderr)
            return _exec(launcher_env_args(argv, list(renv)), renv, args.dry_run)
    fmt = launcher_format(argv, args.format)
    emitter = get_emitter(fmt)
    spec = args.machine or os.environ.get(MACHINE_ENV, "").strip()
    if not spec:
        raise RankmapError(f"no machine: pass --machine or set ${MACHINE_ENV}")
    machine = parse_machine(spec)
    job = job_hosts(hostfile=args.hostfile)
    allocation = job_allocation(job, machine, args.nodes)
    n_launch = launcher_ranks(argv)
    pattern = parse_pattern(args.pattern, default_ranks=n_launch or allocation.n_cores)
    if n_launch is not None and n_launch != pattern.n_ranks:
        raise RankmapError(f"the launcher starts {n_launch} processes, pattern "
                           f"{args.pattern!r} has {pattern.n_ranks} ranks")
    try:
        check_fits(pattern.n_ranks, allocation)
    except RankmapError as exc:
        raise RankmapError(f"allocation too small ({job.source}): {exc}") from None
    path = _output_path(args, fmt, job.job_id)
    check_writable(path, args.force)
    plan = command_for(fmt, argv, path, pattern.n_ranks)
    if not args.dry_run and shutil.which(argv[0]) is None:
        raise RankmapError(f"launcher {argv[0]!r} not found on PATH")
    mapping = build_placement(args.mapping, pattern, machine, allocation, args.seed,
                              routing=getattr(args, "routing", None),
                              time_options=time_options(args))
    write_atomic(path, emitter.write(mapping, machine, allocation), force=args.force)
    print(f"rankmap launch: {mapping.name} placement of {pattern.n_ranks} ranks on "
          f"{allocation.n_nodes} nodes ({job.source}), wrote {path} ({fmt})", file=sys.stderr)
    cmd = plan.argv
    if renv:
        from ..pmpi.environment import launcher_env_args
        cmd = launcher_env_args(cmd, list(renv))
    return _exec(cmd, {**plan.env, **renv}, args.dry_run)
