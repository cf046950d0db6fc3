"""``rankmap launch``: run an MPI launcher with a computed placement (inside a batch job)."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import sys

from ..errors import RankmapError
from ..threads import child_environ
from ..io.atomic import check_writable, write_atomic
from ..mpi.env_names import HOST_NODES_ENV, MACHINE_ENV
from ..specs import files_beside
from ..validate import is_digits
from .argtypes import SEED, THREADS, int_arg
from .notes import note
from .common import (PATTERN_HELP, TIME_SETTINGS, add_budget, add_force, add_in_node,
                     add_jobs, add_time_options, budget, check_socket_setting, example,
                     in_node, is_root, search_executor, search_progress, time_options)

__all__ = ["add_parser", "reorder_environment", "refuse_search_options", "host_node_ids", "run",
           "with_job_threads", "failure_line", "warm_engine", "WARM_NODES", "absolute_spec",
           "search_command", "CARRIED_OPTIONS", "SEARCH_OPTIONS"]


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
                       "--dry-run -- mpirun -n 2048 ./app   # in a Slurm or PBS job, else add "
                       "--hostfile FILE\n"
                       "rankmap launch --search-procs 64 -m site.toml -p halo.toml -- "
                       "srun -n 16384 ./app   # the search itself runs as 'srun -n 64'"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--machine", "-m", metavar="SPEC",
                   help=f"machine spec or .toml file (default: ${MACHINE_ENV})")
    p.add_argument("--pattern", "-p", metavar="SPEC",
                   help=PATTERN_HELP + " (required unless --reorder)")
    p.add_argument("--mapping", default=None, metavar="NAME",
                   help="placement to apply (default: $RANKMAP_MAPPING, else auto)")
    p.add_argument("--nodes", "-n", metavar="SPEC",
                   help="machine node ids of the job's hosts, in the job's order (default: "
                   "match host names to the machine's node names)")
    p.add_argument("--hostfile", metavar="FILE",
                   help="read the hosts from this file ('host' or 'host slots=N' lines) "
                   "instead of the batch environment")
    p.add_argument("--emit", metavar="FORMAT", dest="emit",
                   help="placement file format, as map --emit names them (default: from the "
                   "launcher name)")
    # the option's first name, kept for scripts; --format means table|json|csv elsewhere
    p.add_argument("--format", dest="emit_format", metavar="FORMAT", help=argparse.SUPPRESS)
    p.add_argument("--routing", "-r", metavar="NAME",
                   help="routing model the search predicts with, as compare and map take it "
                   "(default: the machine's first)")
    add_budget(p)
    p.add_argument("-o", "--output", metavar="FILE",
                   help="placement file to write (default: rankmap-<job id>.<format>, "
                   "outside a batch job rankmap.<format>; -2, -3, ... added when "
                   "it exists; cray: MPICH_RANK_ORDER)")
    p.add_argument("--seed", type=SEED, default=None,
                   help="seed for random placements (default: $RANKMAP_SEED, else 0)")
    p.add_argument("--threads", type=THREADS, default=None, metavar="T",
                   help="threads per rank: the job's slots per node are its ranks per node, "
                   "and each rank gets T cores of the placement file (slots x T must fit the "
                   "machine's cores per node; default: SLURM_CPUS_PER_TASK in a Slurm job, "
                   "else 1)")
    p.add_argument("--reorder", action="store_true",
                   help="preload the rankmap PMPI library so that the program's "
                   "MPI_Cart_create/MPI_Graph_create/MPI_Dist_graph_create(_adjacent) with "
                   "reorder = true follow the placement --mapping on --machine (exports "
                   "LD_PRELOAD, RANKMAP_MACHINE, RANKMAP_MAPPING, RANKMAP_SEED, RANKMAP_BIN "
                   "and any other RANKMAP_* variable set); with --pattern the placement "
                   "file is written and used too")
    p.add_argument("--mpicc", metavar="CMD",
                   help="with --reorder: MPI C compiler wrapper of the program's MPI "
                   "(default: $RANKMAP_MPICC, else the launcher's: mpicc.mpich under MPICH's "
                   "mpirun.mpich or mpiexec.hydra, else mpicc)")
    p.add_argument("--dry-run", action="store_true",
                   help="write the placement file and print the command instead of running it")
    p.add_argument("--search-procs", type=int_arg(1, 1 << 20, what="--search-procs"),
                   metavar="K",
                   help="run the placement search itself as an MPI job of K processes on the "
                   "allocation (the program's launcher with -n K: 'srun -n K', 'mpirun -n K', "
                   "... running 'rankmap launch --dry-run'), its candidates spread over the K "
                   "processes, then launch the program with the placement it wrote; needs "
                   "mpi4py on the nodes and a working directory they share")
    p.add_argument("--search-launcher", metavar="CMD",
                   help="with --search-procs: the command that starts the search job instead "
                   "of the program's launcher, e.g. 'srun --ntasks-per-node=1' (-n K is added "
                   "unless it has a process count)")
    add_time_options(p)
    add_in_node(p)
    add_jobs(p)
    add_force(p)
    p.add_argument("launcher_argv", nargs=argparse.REMAINDER, metavar="-- LAUNCHER ARGS",
                   help="the launcher command line, after '--'")
    p.set_defaults(func=run)


def _output_path(args, fmt: str, job_id: str) -> str:
    if fmt == "cray":
        if args.output and (os.path.basename(args.output) != "MPICH_RANK_ORDER" or
                            os.path.realpath(os.path.dirname(os.path.abspath(args.output)))
                            != os.path.realpath(os.getcwd())):
            raise RankmapError(f"-o {args.output!r}: Cray MPICH reads the file MPICH_RANK_ORDER "
                               "in the working directory (run launch from the job's folder)")
        return args.output or "MPICH_RANK_ORDER"
    if args.output:
        return args.output
    return _free_default_name(args, fmt, job_id)


def _free_default_name(args, fmt: str, job_id: str) -> str:
    """The first default name not taken: a second launch in one job (another job step) gets
    a name of its own, not a refusal; outside a batch job, rankmap.FORMAT (a process id made
    every run's output differ)."""
    base = f"rankmap-{job_id}" if job_id else "rankmap"
    path, k = f"{base}.{fmt}", 2
    while os.path.lexists(path) and not args.force:
        path, k = f"{base}-{k}.{fmt}", k + 1
    return path


def _write_placement_file(args, fmt: str, job_id: str, path: str, text: str) -> str:
    """Write the placement file; a default name another launch of the job took between the
    choice and the write (job steps started together) moves on to the next free one.

    Returns
    -------
    str
        The path written.
    """
    while True:
        try:
            return write_atomic(path, text, force=args.force)
        except RankmapError:
            if args.output or args.force or fmt == "cray" or not os.path.lexists(path):
                raise
            path = _free_default_name(args, fmt, job_id)


def _settings_from_environment(args) -> None:
    """--mapping and --seed default to $RANKMAP_MAPPING and $RANKMAP_SEED, as --machine does
    to $RANKMAP_MACHINE: the library's own settings are never silently replaced."""
    from ..validate import parse_int_text
    if args.mapping is None:
        args.mapping = os.environ.get("RANKMAP_MAPPING", "").strip() or "auto"
        args.mapping_from = "RANKMAP_MAPPING" if args.mapping != "auto" else None
    if args.seed is None:
        text = os.environ.get("RANKMAP_SEED", "").strip()
        args.seed = parse_int_text(text, "RANKMAP_SEED", minimum=0) if text else 0


def _from_variable(what: str | None, call, *a):
    """``call(*a)``, its error prefixed with the environment variable ``what`` the value came
    from (None: from the command line)."""
    try:
        return call(*a)
    except RankmapError as exc:
        if what is None:
            raise
        raise RankmapError(f"${what}: {exc}") from None


def _machine_of(args):
    """The machine (``--machine``, else ``$RANKMAP_MACHINE``, named in its errors) and its
    spec; the mapping name is checked on it (``$RANKMAP_MAPPING`` named too)."""
    from ..machines import parse_machine
    from ..selection import check_name
    spec = args.machine or os.environ.get(MACHINE_ENV, "").strip()
    if not spec:
        raise RankmapError(f"no machine: pass --machine or set ${MACHINE_ENV}")
    machine = _from_variable(None if args.machine else MACHINE_ENV, parse_machine, spec)
    _from_variable(getattr(args, "mapping_from", None), check_name, args.mapping, machine)
    return spec, machine


def _check_node_variable(machine, processes: int | None) -> None:
    """Refuse a $RANKMAP_NODE whose entries are not the machine's nodes (ids in range or its
    node names), or whose list is not one entry a process: the job's engine would leave the
    ranks in the MPI library's order."""
    from ..mpi.env_names import NODE_ENV
    from ..mpi.nodes import resolve_node_labels
    text = os.environ.get(NODE_ENV, "").strip()
    if not text:
        return
    labels = [item.strip() for item in text.split(",")]
    if len(labels) > 1 and processes is not None and len(labels) != processes:
        raise RankmapError(f"${NODE_ENV}={text[:60]!r} has {len(labels)} entries for "
                           f"{processes} processes (one a process, or one for all)")
    nodes, reason = resolve_node_labels(labels, machine)
    if nodes is None:
        raise RankmapError(f"${NODE_ENV}={text[:60]!r}: {reason}")


def _launcher_counts(cmd: list[str], per_node: int | None, threads: int) -> list[str]:
    """The options that give the launcher the ranks per node and threads per rank the
    placement file assumes (aprun's ``-N`` and ``-d``, srun's ``--ntasks-per-node`` and
    ``--cpus-per-task``) and that the command lacks; a value it gives that contradicts them is
    refused by name (the launcher would put the ranks elsewhere than rankmap placed them).
    ``per_node`` None: not known here, neither checked nor added."""
    from ..launch import option_value, program_index
    name = os.path.basename(cmd[0])
    own = cmd[1:program_index(cmd)]
    if name == "aprun":
        spellings = ("-N", "--pes-per-node"), ("-d", "--cpus-per-pe")
    elif name == "srun":
        spellings = ("--ntasks-per-node",), ("-c", "--cpus-per-task")
    else:
        return []
    extra = []
    for names, value in ((spellings[0], per_node), (spellings[1], threads)):
        given = option_value(own, names)
        if given is not None and value is not None:
            if not is_digits(given) or int(given) != value:
                has = f"puts {value} ranks on a node" if names is spellings[0] else \
                    f"gives each rank {value} core{'s' if value != 1 else ''}"
                fix = "give --threads instead" if names is spellings[1] else \
                    "remove it (launch sets it)"
                raise RankmapError(f"{names[0]} {given} in the {name} command: the placement "
                                   f"file {has}; {fix}")
        elif given is None and value is not None and (names is spellings[0] or value > 1):
            extra += [names[0], str(value)] if name == "aprun" else [f"{names[-1]}={value}"]
    return extra


def _slurm_cpus_per_task(job) -> int:
    """Threads per rank a Slurm job asked for (``SLURM_CPUS_PER_TASK``; srun passes it on to
    its tasks), else 1."""
    text = os.environ.get("SLURM_CPUS_PER_TASK", "").strip()
    if job.source != "Slurm" or not text:
        return 1
    try:
        threads = THREADS(text)
    except (argparse.ArgumentTypeError, ValueError):
        raise RankmapError(f"bad SLURM_CPUS_PER_TASK {text!r}: expected a whole number of "
                           "cores from 1") from None
    if threads > 1:
        note(f"rankmap launch: {threads} threads per rank (SLURM_CPUS_PER_TASK)")
    return threads


def _slot_list(slots) -> str:
    """``4,4,3`` (at most 6 counts shown)."""
    shown = ",".join(str(int(n)) for n in slots[:6])
    return shown + (",..." if len(slots) > 6 else "")


def absolute_spec(text: str) -> str:
    """A machine or pattern spec that reads the same from any folder: a spec file's path, or
    the files the spec names (``topology=FILE``, ``node=FILE.xml``, ``graph:FILE``), made
    absolute. The program and the search job may start elsewhere.

    Parameters
    ----------
    text : str
        The spec as the user gave it.

    Returns
    -------
    str
        The spec with absolute file names.
    """
    if os.path.isfile(text):
        return os.path.abspath(text)
    return files_beside(text, os.getcwd())


def _engine_path() -> str:
    """The rankmap command the PMPI library should run on the compute nodes."""
    from ..pmpi.environment import engine_command
    return engine_command(sys.argv[0])


def reorder_environment(args, spec: str, launcher: str = "") -> dict[str, str]:
    """Variables that make the preloaded PMPI library reorder the program's topologies.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``launch`` command line (``--mpicc``, ``--mapping``, ...).
    spec : str
        The machine spec or TOML file the library passes to ``rankmap pmpi place``.
    launcher : str
        The launcher command: the library is built for its MPI when ``--mpicc`` is not given
        (:func:`rankmap.pmpi.environment.mpicc_for_launcher`).

    Returns
    -------
    dict of str to str
        ``LD_PRELOAD`` (the library first), ``RANKMAP_MACHINE``, ``RANKMAP_MAPPING``,
        ``RANKMAP_SEED``, ``RANKMAP_BIN`` and every ``RANKMAP_*`` variable already set.
    """
    from ..pmpi.build import library_path
    from ..pmpi.environment import mpicc_for_launcher
    lib = library_path(mpicc_for_launcher(launcher, args.mpicc) if launcher else args.mpicc)
    preload = os.environ.get("LD_PRELOAD", "")
    env = {k: v for k, v in os.environ.items() if k.startswith("RANKMAP_")}
    env.update({"LD_PRELOAD": lib + (":" + preload if preload else ""),
                "RANKMAP_MACHINE": absolute_spec(spec),
                "RANKMAP_MAPPING": args.mapping, "RANKMAP_SEED": str(args.seed),
                "RANKMAP_BIN": _engine_path()})
    return env


#: nodes of the machine the engine is warmed on (their cores make the warm-up's ranks)
WARM_NODES = 4


def warm_engine(machine, mapping: str, seed: int) -> float:
    """Run the in-job engine's placement once on a small periodic 3-D stencil of the first
    :data:`WARM_NODES` nodes of the machine, before the job starts: its first run on a machine
    compiles rankmap's kernels into their cache (about a minute), which would take the in-job
    engine past ``RANKMAP_TIMEOUT`` and leave the ranks in the MPI library's order. A warm
    cache makes this a fraction of a second; a placement that cannot be made here (a mapping
    for another size) is left to the job, which reports it.

    Parameters
    ----------
    machine : rankmap.machines.Machine
        The machine (``--machine``, parsed once by the caller).
    mapping : str
        The placement the job applies (``--mapping``).
    seed : int
        Its seed.

    Returns
    -------
    float
        Seconds taken.
    """
    import logging
    import time

    import numpy as np

    from ..kernels.jit import LOGGER
    from ..mpi.placement import assign_ranks
    from ..patterns import parse_pattern

    class Count(logging.Handler):
        compiled = 0

        def emit(self, record):
            self.compiled += 1

    start = time.perf_counter()
    n = min(machine.n_nodes, WARM_NODES) * machine.cores_per_node
    if n < 2:
        return 0.0
    count = Count(logging.INFO)
    saved = LOGGER.level, LOGGER.propagate
    LOGGER.addHandler(count)
    LOGGER.setLevel(logging.INFO)      # compiles are logged at INFO, before they start
    LOGGER.propagate = False
    try:
        pattern = parse_pattern("stencil:dims=3:periodic", default_ranks=n)
        assign_ranks(pattern, machine, np.arange(n) // machine.cores_per_node, mapping, seed)
    except RankmapError:
        pass
    finally:
        LOGGER.removeHandler(count)
        LOGGER.setLevel(saved[0])
        LOGGER.propagate = saved[1]
    took = time.perf_counter() - start
    if count.compiled:
        print(f"rankmap launch: compiled {count.compiled} of rankmap's kernels for the in-job "
              f"engine in {took:.0f} s (once: they are cached)", file=sys.stderr)
    return took


def _exec(argv: list[str], env: dict[str, str], dry_run: bool) -> int:
    line = " ".join([f"{k}={shlex.quote(v)}" for k, v in env.items()] + [shlex.join(argv)])
    if dry_run:
        print(line)
        return 0
    from .notes import flush_notes
    flush_notes()           # the launcher replaces this process: main never prints them
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvpe(argv[0], argv, child_environ(env))
    return 0  # not reached: exec replaces the process


def _nodes_used(mapping, allocation) -> int:
    """Nodes of ``allocation`` the placement puts ranks on."""
    import numpy as np
    return int(len(np.unique(mapping.core_of_rank // allocation.cores_per_node)))


def _nodes_text(n: int) -> str:
    """``1 node``, ``2 nodes``."""
    return f"{n} node{'' if n == 1 else 's'}"


def _given_per_node(argv: list[str], fmt: str) -> int | None:
    """Ranks a node a Cray rank order's launcher command gives (``aprun -N 4``, ``srun
    --ntasks-per-node=4``); None when it gives none (or another format is written)."""
    from ..launch import option_value, program_index
    name = os.path.basename(argv[0])
    if fmt != "cray" or name not in ("aprun", "srun"):
        return None
    names = ("-N", "--pes-per-node") if name == "aprun" else ("--ntasks-per-node",)
    given = option_value(argv[1:program_index(argv)], names)
    return int(given) if given is not None and is_digits(given) else None


def _auto_placement(args, pattern, machine, allocation, executor, bar, fmt: str,
                    per_node: int | None):
    """``auto``'s placement named after its pick (``auto (hilbert)``) and the lines that say
    why (map's ``why:``; for a Cray rank order, the best candidate it can hold)."""
    from ..mappers.base import check_fits, validate_mapping
    from ..selection import auto_select
    check_fits(pattern.n_ranks, allocation)
    comp = auto_select(pattern, machine, allocation, args.seed, args.routing,
                       budget=budget(args), time_options=time_options(args),
                       executor=executor, stage=bar.stage, progress=bar.done,
                       in_node=in_node(args))
    if not is_root(executor):
        return comp.best.mapping, []
    from ..report import render
    pick, why = comp.best, [f"why: {render.explain_pick(comp)}"]
    if fmt == "cray":
        from ..io.cray import rank_order_pick
        pick, problem = rank_order_pick(comp.candidates, allocation, per_node)
        if pick is None:
            raise RankmapError(f"auto: no candidate can be written as a cray rank order: "
                               f"{problem}")
        if problem is not None:
            why.append(f"cray: {comp.best.name} cannot be written ({problem}); wrote "
                       f"{pick.name}, the best candidate a rank order can hold")
    return validate_mapping(f"auto ({pick.name})", pick.mapping.core_of_rank,
                            pattern.n_ranks, allocation), why


def _auto_steps(mapping: str, pattern, machine, allocation) -> int:
    """Steps of ``auto``'s progress bar (0 for any other placement)."""
    from ..selection import REFINE_TOP, candidate_names, is_auto
    if not is_auto(mapping):
        return 0
    return len(candidate_names(pattern, machine, allocation)) + REFINE_TOP


#: options of the program's launcher the search job gets too (without them the launcher may
#: refuse to start the search where it starts the program)
CARRIED_OPTIONS = ("--oversubscribe", "--allow-run-as-root")


def failure_line(stderr: str) -> str:
    """The line of a failed launcher's output that says why: the first naming an error,
    else the last with words (not a rule of dashes), else ``no message``.

    Parameters
    ----------
    stderr : str
        What the launcher wrote on standard error.

    Returns
    -------
    str
        One line.
    """
    lines = [ln.strip() for ln in stderr.splitlines() if re.search(r"[A-Za-z]{2}", ln)]
    for ln in lines:
        if "error:" in ln:
            return ln.split("error:", 1)[1].strip()
    for ln in lines:
        if re.search(r"not enough slots|error|cannot|could not|failed", ln, re.I):
            return ln
    return lines[-1] if lines else "no message"


def search_command(args, spec: str, argv: list[str], fmt: str, hostfile: str,
                   allocation, path: str) -> list[str]:
    """The command of the search job: ``<launcher> -n K rankmap launch --dry-run ...`` with
    the same inputs, the job's hosts in ``hostfile`` and their node ids, writing ``path``.

    Parameters
    ----------
    args : argparse.Namespace
        ``launch``'s options (``--search-procs K``, ``--search-launcher``).
    spec : str
        Machine spec.
    argv : list of str
        The program's launcher command.
    fmt : str
        Placement file format.
    hostfile : str
        File listing the job's hosts and slots (``host slots=N``).
    allocation : Allocation
        The job's allocation (its node ids are passed with ``--nodes``).
    path : str
        Placement file the search job writes.

    Returns
    -------
    list of str
    """
    from ..launch import launcher_ranks, program_index

    k = str(args.search_procs)
    if args.search_launcher:
        head = shlex.split(args.search_launcher)
        if not head:
            raise RankmapError("--search-launcher is empty")
    else:
        name = os.path.basename(argv[0])
        if name == "smpirun":
            raise RankmapError("--search-procs: smpirun simulates the program, it cannot run "
                               "the search; give --search-launcher (e.g. 'mpirun')")
        # the program's launcher, with the options that let it start processes here at all
        own = argv[1:program_index(argv)]
        head = [argv[0]] + [a for a in CARRIED_OPTIONS if a in own]
    if launcher_ranks(head) is None:
        head = head + ["-n", k]

    inner = [_engine_path(), "launch", "--dry-run", "--force", "-m", absolute_spec(spec),
             "--hostfile", os.path.abspath(hostfile),
             "--nodes", ",".join(str(int(n)) for n in allocation.nodes),
             "-p", absolute_spec(args.pattern), "--mapping", args.mapping,
             "--seed", str(args.seed), "--emit", fmt, "-o", os.path.abspath(path)]
    for flag, value in (("--routing", getattr(args, "routing", None)),
                        ("--budget", getattr(args, "budget", None)),
                        ("--nic-bw", getattr(args, "nic_bw", None)),
                        ("--mem-bw", getattr(args, "mem_bw", None)),
                        ("--socket-bw", getattr(args, "socket_bw", None)),
                        ("--msg-overhead", getattr(args, "msg_overhead", None))):
        if value is not None:
            inner += [flag, str(value)]
    for flag, dest, default in (("--time-model", "time_model", "on"),
                                ("--mem-sharing", "mem_sharing", "node")):
        value = getattr(args, dest, default)
        if value != default:
            inner += [flag, value]
    if (getattr(args, "threads", 1) or 1) != 1:
        inner += ["--threads", str(args.threads)]
    if args.jobs is not None:
        inner += ["--jobs", str(args.jobs)]
    if getattr(args, "in_node", None) is not None:
        inner += ["--in-node", args.in_node]
    return head + inner + ["--"] + argv


def run_search_job(args, spec, argv, fmt, job, allocation, path) -> str:
    """Run the placement search as an MPI job (``--search-procs``); return the placement's
    name once the job has written ``path``."""
    import subprocess

    from ..selection import is_auto

    import tempfile

    # the search job's hostfile, in a folder of its own beside the output (a name of the
    # user's, such as FILE.hosts, was replaced by it, then removed)
    try:
        folder = tempfile.mkdtemp(prefix=".rankmap-search-",
                                  dir=os.path.dirname(os.path.abspath(path)))
    except OSError as exc:
        raise RankmapError(f"cannot write the search's hostfile beside {path!r}: "
                           f"{exc.strerror}") from None
    hostfile = os.path.join(folder, "hosts")
    write_atomic(hostfile, "".join(f"{h} slots={n}\n" for h, n in zip(job.hosts, job.slots)))
    cmd = search_command(args, spec, argv, fmt, hostfile, allocation, path)
    print(f"rankmap launch: searching with {args.search_procs} processes: "
          f"{shlex.join(cmd)}", file=sys.stderr)
    try:
        if shutil.which(cmd[0]) is None:
            raise RankmapError(f"search launcher {cmd[0]!r} not found on PATH")
        sys.stderr.flush()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, env=child_environ())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if proc.returncode != 0:
        why = failure_line(proc.stderr)
        raise RankmapError(f"the placement search ({cmd[0]} -n {args.search_procs}) failed "
                           f"with exit status {proc.returncode}: {why}")
    if not os.path.isfile(path):
        raise RankmapError(f"the placement search ({cmd[0]} -n {args.search_procs}) wrote no "
                           f"{path}")
    said = re.findall(r"^rankmap launch: (.+?) placement of [0-9]+ ranks? on ", proc.stderr,
                      re.M)
    if said:        # the search's own line names auto's pick: auto (hilbert)
        return said[-1]
    return "auto" if is_auto(args.mapping) else args.mapping


def with_job_threads(allocation, machine, threads: int):
    """The job's allocation with ``threads`` cores per rank: its slots per node stay its
    ranks per node, and the placement file binds each rank to ``threads`` cores.

    Parameters
    ----------
    allocation : Allocation
        The job's allocation (slots per node as cores per node).
    machine : Machine
        The machine (cores per node).
    threads : int
        Threads (cores) per rank.

    Returns
    -------
    Allocation
        ``allocation`` itself for one thread, else a copy that records the threads.

    Raises
    ------
    RankmapError
        The slots times ``threads`` exceed the machine's cores per node.
    """
    if threads == 1:
        return allocation
    need = allocation.cores_per_node * threads
    if need > machine.cores_per_node:
        raise RankmapError(f"bad --threads {threads}: {allocation.cores_per_node} ranks per node "
                           f"need {need} cores, the machine's nodes have "
                           f"{machine.cores_per_node}")
    from dataclasses import replace
    return replace(allocation, extra={**allocation.extra, "threads": int(threads)})


#: options of the placement search and its file: ``(flag, dest, value when not given)``;
#: with ``--reorder`` alone the in-job engine does the placement and there is no file
SEARCH_OPTIONS = (("--emit", "emit", None), ("--format", "emit_format", None),
                  ("--output", "output", None), ("--routing", "routing", None),
                  ("--budget", "budget", None), ("--threads", "threads", None),
                  ("--search-procs", "search_procs", None),
                  ("--search-launcher", "search_launcher", None), ("--jobs", "jobs", None),
                  ("--time-model", "time_model", "on"),
                  ("--mem-sharing", "mem_sharing", "node"),
                  *((flag, dest, None) for flag, dest in TIME_SETTINGS))


def refuse_search_options(args) -> None:
    """Refuse, naming it, an option ``launch --reorder`` without ``--pattern`` cannot apply:
    the in-job engine places the ranks with the machine's first routing and its default time
    model, and writes no placement file.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``launch`` command line.

    Raises
    ------
    RankmapError
        For the first such option given (and for ``--hostfile`` without ``--nodes``).
    """
    for flag, dest, unset in SEARCH_OPTIONS:
        if getattr(args, dest, unset) != unset:
            raise RankmapError(f"{flag}: applies to the placement file of --pattern; with "
                               "--reorder alone the program's MPI_Cart_create & co. place the "
                               "ranks in the job, with the machine's first routing")
    if args.hostfile is not None and args.nodes is None:
        raise RankmapError(f"--hostfile {args.hostfile}: with --reorder alone it only names "
                           "the hosts that --nodes gives node ids for (each process finds "
                           "its node by its host name)")


def host_node_ids(job, allocation) -> str:
    """``RANKMAP_HOST_NODES`` for the job: ``host=id`` for each of its hosts, comma-separated,
    so that the in-job engine knows the node of a process by its host name.

    Parameters
    ----------
    job : rankmap.launch.JobHosts
        The job's hosts, in job order.
    allocation : Allocation
        Their machine nodes (:func:`rankmap.launch.job_allocation` with ``--nodes``).

    Returns
    -------
    str
        The variable's value.
    """
    return ",".join(f"{h}={int(n)}" for h, n in zip(job.hosts, allocation.nodes))


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
    # numpy and numba: loaded to run, not for --help
    from ..io.emit import EMITTERS, get_emitter
    from ..launch import (check_launcher_format, command_for, job_allocation, job_hosts,
                          launcher_format, launcher_ranks)
    from ..io.hostnames import check_host_names
    from ..mappers.base import check_fits
    from ..patterns import parse_pattern
    from ..selection import build_placement, is_auto

    _settings_from_environment(args)
    argv = list(args.launcher_argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise RankmapError("no launcher command: give it after '--', e.g. -- srun ./app")
    if not args.pattern and not args.reorder:
        raise RankmapError("give --pattern (a placement file for the launcher) or --reorder "
                           "(the program's MPI_Cart_create & co. reorder)")
    if getattr(args, "in_node", None) is not None and not args.pattern:
        raise RankmapError(f"--in-node {args.in_node}: applies to the placement file of "
                           "--pattern; the PMPI reorder (--reorder alone) always places "
                           "ranks inside nodes")
    renv: dict[str, str] = {}
    if args.reorder:
        from ..pmpi.environment import check_reorder_variables, launcher_env_args
        if not args.pattern:
            refuse_search_options(args)
        # a bad spec, mapping name or RANKMAP_* value fails here, not in the job's engine
        spec, machine = _machine_of(args)
        check_reorder_variables(os.environ)
        from ..pmpi.environment import launcher_index
        _check_node_variable(machine, launcher_ranks(argv[launcher_index(argv):]))
        if not args.dry_run and shutil.which(argv[0]) is None:
            raise RankmapError(f"launcher {argv[0]!r} not found on PATH")
        renv = reorder_environment(args, spec, argv[min(launcher_index(argv), len(argv) - 1)])
        if not args.pattern:
            if args.nodes is not None:
                job = job_hosts(hostfile=args.hostfile)
                renv[HOST_NODES_ENV] = host_node_ids(job, job_allocation(job, machine,
                                                                         args.nodes))
            print(f"rankmap launch: {args.mapping} reordering of the program's topologies on "
                  f"{spec} (PMPI library {renv['LD_PRELOAD'].split(':')[0]})", file=sys.stderr)
            if not args.dry_run:
                warm_engine(machine, args.mapping, args.seed)
            return _exec(launcher_env_args(argv, list(renv)), renv, args.dry_run)
    if args.emit and args.emit_format and args.emit != args.emit_format:
        raise RankmapError(f"--emit {args.emit} and --format {args.emit_format} disagree: "
                           "give --emit only")
    fmt = launcher_format(argv, args.emit or args.emit_format)
    if not args.emit and args.emit_format and fmt not in EMITTERS:   # named as it was given
        raise RankmapError(f"unknown --format {fmt!r} (the launcher file's format, as --emit "
                           f"takes it): choose from {', '.join(EMITTERS)}")
    emitter = get_emitter(fmt)
    check_launcher_format(argv, fmt)
    spec, machine = _machine_of(args)
    if args.routing is not None:
        machine.check_routing(args.routing)     # refused here even when no search routes
    check_socket_setting(args, machine)
    if emitter.check_machine is not None:     # a format that cannot say where: before the search
        emitter.check_machine(machine)
    job = job_hosts(hostfile=args.hostfile)
    if args.threads is None:
        args.threads = _slurm_cpus_per_task(job)
    allocation = with_job_threads(job_allocation(job, machine, args.nodes), machine,
                                  args.threads)
    if renv and args.nodes is not None:     # --reorder: the job's topologies too
        renv[HOST_NODES_ENV] = host_node_ids(job, allocation)
    check_host_names(allocation, machine, fmt)     # a name the launcher would misread
    uneven = len(set(job.slots)) > 1
    if uneven:
        note(f"rankmap launch: the job's nodes have {_slot_list(job.slots)} slots; the "
             f"placement uses {min(job.slots)} on every node ({allocation.n_cores} ranks at "
             "most)")
    n_launch = launcher_ranks(argv)
    pattern = parse_pattern(args.pattern, default_ranks=n_launch or allocation.n_cores)
    if n_launch is not None and n_launch != pattern.n_ranks:
        raise RankmapError(f"the launcher starts {n_launch} processes, pattern "
                           f"{args.pattern!r} has {pattern.n_ranks} ranks")
    try:
        check_fits(pattern.n_ranks, allocation)
    except RankmapError as exc:
        why = (f"; with uneven slots ({_slot_list(job.slots)}) every node gets "
               f"{min(job.slots)}" if uneven else "")
        raise RankmapError(f"allocation too small ({job.source}): {exc}{why}") from None
    full = allocation       # the job's nodes (the search job is given them all)
    given = _given_per_node(argv, fmt)
    if fmt == "cray":       # Cray MPICH fills the job's first nodes: the ranks go there
        from .map_cmd import rank_order_nodes
        if given is not None and 0 < given < allocation.cores_per_node and \
                -(-pattern.n_ranks // given) <= allocation.n_nodes:
            from dataclasses import replace     # the command's ranks a node (aprun -N 2)
            allocation = replace(allocation, cores_per_node=given)
        allocation = rank_order_nodes(allocation, pattern.n_ranks, "rankmap launch: ")
    path = _output_path(args, fmt, job.job_id)
    check_writable(path, args.force)
    # a launcher count that contradicts the file is refused before the search: the file's
    # ranks per node are known now when the pattern fills the first nodes (or one node)
    known = fmt == "cray" and (pattern.n_ranks == allocation.n_cores or allocation.n_nodes == 1)
    _launcher_counts(argv, min(allocation.cores_per_node, pattern.n_ranks) if known else None,
                     args.threads)
    if fmt == "cray" and given is not None and \
            min(given, pattern.n_ranks) != min(allocation.cores_per_node, pattern.n_ranks):
        flag = "-N" if os.path.basename(argv[0]) == "aprun" else "--ntasks-per-node"
        why = (f"the job has {full.cores_per_node} slots a node" if given > full.cores_per_node
               else f"{pattern.n_ranks} ranks at {given} a node need "
               f"{-(-pattern.n_ranks // given)} nodes, the job has {full.n_nodes}")
        raise RankmapError(f"{flag} {given} in the {os.path.basename(argv[0])} command: {why}; "
                           "remove it (launch sets it)")
    plan = command_for(fmt, argv, path, pattern.n_ranks)
    if not args.dry_run and shutil.which(argv[0]) is None:
        raise RankmapError(f"launcher {argv[0]!r} not found on PATH")
    why: list[str] = []
    if args.search_procs:
        name = run_search_job(args, spec, argv, fmt, job, full, path)
        used = _nodes_used(emitter.read(path, machine, allocation, pattern.n_ranks),
                           allocation)
    else:
        executor = search_executor(args)
        total = _auto_steps(args.mapping, pattern, machine, allocation)
        with search_progress(total, args.mapping) as bar:
            if is_auto(args.mapping):
                mapping, why = _auto_placement(args, pattern, machine, allocation, executor,
                                               bar, fmt, _given_per_node(argv, fmt))
            else:
                mapping = build_placement(args.mapping, pattern, machine, allocation,
                                          args.seed, routing=args.routing,
                                          budget=budget(args), time_options=time_options(args),
                                          executor=executor, stage=bar.stage,
                                          progress=bar.done, in_node=in_node(args))
        if not is_root(executor):  # inside a search job: rank 0 writes and prints
            return 0
        if fmt == "cray" and not is_auto(args.mapping):
            from ..io.cray import rank_order_problem, uneven_advice
            problem = rank_order_problem(mapping, allocation)
            if problem is not None:
                raise RankmapError(uneven_advice(problem, args.mapping,
                                                 allocation.cores_per_node))
        used = _nodes_used(mapping, allocation)
        text = emitter.write(mapping, machine, allocation)
        if fmt == "cray":   # a launcher count the file contradicts: refused before writing it
            from ..io.cray import ranks_per_node_in
            _launcher_counts(plan.argv, ranks_per_node_in(text), args.threads)
        written = _write_placement_file(args, fmt, job.job_id, path, text)
        if written != path:     # the launcher reads the name the file got
            path, plan = written, command_for(fmt, argv, written, pattern.n_ranks)
        if emitter.caveat is not None and emitter.caveat(text):
            note(f"rankmap launch: note: {emitter.caveat(text)}")
        name = mapping.name
    on = _nodes_text(used) if used == len(job.hosts) else \
        f"{used} of the job's {_nodes_text(len(job.hosts))}"
    ranks = f"{pattern.n_ranks} rank{'' if pattern.n_ranks == 1 else 's'}"
    print(f"rankmap launch: {name} placement of {ranks} on {on} "
          f"({job.source}), wrote {path} ({fmt})", file=sys.stderr)
    for line in why:
        print(f"rankmap launch: {line}", file=sys.stderr)
    if fmt == "cray":
        from ..io.cray import file_ranks_per_node
        per_node = file_ranks_per_node(path)
    else:
        per_node = None
    cmd = plan.argv[:1] + _launcher_counts(plan.argv, per_node, args.threads) + plan.argv[1:]
    if renv:
        from ..pmpi.environment import launcher_env_args
        cmd = launcher_env_args(cmd, list(renv))
    return _exec(cmd, {**plan.env, **renv}, args.dry_run)
