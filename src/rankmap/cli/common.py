"""Options and helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager

from typing import TYPE_CHECKING

from ..defaults import (BUDGET_PER_RANK, DEFAULT_BUDGET, DEFAULT_PLATEAU_Y, MAX_DEFAULT_BUDGET,
                        REFINE_WORK)
from ..errors import RankmapError
from .argtypes import FRACTION, JOBS, SEED, THREADS
from .notes import note

if TYPE_CHECKING:  # numpy and numba load only when a command runs, not for its --help
    from ..allocation import Allocation
    from ..machines import Machine
    from ..patterns import Pattern
    from ..timing import TimeOptions

__all__ = ["MACHINE_HELP", "PATTERN_HELP", "NODES_HELP", "add_input_options", "add_time_options",
           "add_force", "load_inputs", "print_mapper_notes", "time_options", "budget",
           "check_socket_setting",
           "add_budget", "add_in_node", "in_node", "IN_NODE_CHOICES", "example",
           "progress_bar", "write_report", "stdout_console", "PIPE_WIDTH", "TIME_SETTINGS",
           "given_time_settings", "counters_out_of_memory"]

MACHINE_HELP = ("machine spec or .toml file: torus:8x16x32:cores=4, mesh:8x8x8, "
                "bgp:4096 (Blue Gene/P, 4 cores/node), bgl:512; options :bw=425MB/s "
                ":lat=100ns :wrap=xy :node=pack:2,numa:2,core:16 (sockets, NUMA domains "
                "and cores of a node; or :node=FILE.xml from lstopo --of xml); dragonfly:groups=G,rows=R,cols=C,nodes=N,cores=K, "
                "xc:groups=26 (Cray XC/Aries), fattree:k=16:levels=3[:taper=2], "
                "fattree:topology=topology.conf")
PATTERN_HELP = ("pattern spec or .toml file: stencil:128x128[:box][:periodic][:bytes=1MiB]"
                "[:radius=R][:face=,edge=,corner=][:offsets=+1,0;-1,0][:to=lower], "
                "diagonal:GRID, alltoall:GRID[:dims=0,2], allreduce|bcast|allgather:P[:algo=], "
                "fft2d:P0xP1, fft3d:PxQ, pairs:random[:seed=N], graph:FILE[:grid=6x6x6] "
                "(.csv .mat .mtx .graph .metis .grf .src), minighost, minimd, "
                "lulesh[:6x6x6][:s=30] (no grid: fill the allocation); any of them :times=K "
                "(K repetitions, bytes added up); "
                "A + B runs A's phases then B's")
NODES_HELP = ("allocated nodes in scheduler order: ids and ranges (0-15,32-47) or a file "
              "with one per line (./3 for a file named like ids); Slurm host lists "
              "(nid[00001-00128]), Cray names (c0-0c0s0n0), site.csv[:HOSTLIST], "
              "random:N[:seed=S], contiguous:N[:start=S]; default: the whole machine")


def add_input_options(p: argparse.ArgumentParser, pattern_required: bool = True,
                      mem_help: str | None = None) -> None:
    """--machine, --nodes, --pattern, --routing, --seed, --y.

    Parameters
    ----------
    p : argparse.ArgumentParser
        A command's parser.
    pattern_required : bool
        Whether ``--pattern`` must be given.
    mem_help : str, optional
        The help of ``--mem-bw`` where the command reads it otherwise (validate).
    """
    p.add_argument("--machine", "-m", required=True, metavar="SPEC", help=MACHINE_HELP)
    p.add_argument("--nodes", "-n", metavar="SPEC", help=NODES_HELP)
    p.add_argument("--pattern", "-p", required=pattern_required, metavar="SPEC", help=PATTERN_HELP)
    p.add_argument("--routing", "-r", metavar="NAME",
                   help="routing model: dor or adaptive on a torus, minimal, valiant or ugal on a "
                   "dragonfly, dmodk or ecmp on a fat tree (default: the machine's first)")
    p.add_argument("--seed", type=SEED, default=0, help="seed for random placements (default 0)")
    p.add_argument("--y", type=FRACTION, default=DEFAULT_PLATEAU_Y, metavar="FRACTION",
                   help="fraction of links under the plateau point (default 0.99)")
    p.add_argument("--threads", type=THREADS, default=1, metavar="T",
                   help="threads per rank: ranks per node = cores per node / T (default 1)")
    add_time_options(p, mem_help)


def add_time_options(p: argparse.ArgumentParser, mem_help: str | None = None) -> None:
    """Options of the time model (rankmap.timing): --time-model, --nic-bw, --mem-bw,
    --msg-overhead.

    Parameters
    ----------
    p : argparse.ArgumentParser
        A command's parser.
    mem_help : str, optional
        The help of ``--mem-bw`` where the command reads it otherwise (validate).
    """
    g = p.add_argument_group("time model (predicted_time_s; best = lowest predicted time)")
    g.add_argument("--time-model", choices=("on", "off"), default="on",
                   help="predict each phase's time by max-min bandwidth sharing (default on; "
                   "off ranks by the busiest link)")
    g.add_argument("--nic-bw", metavar="BW",
                   help="per-node injection and ejection bandwidth, e.g. 2GB/s (default: "
                   "unlimited, only network links limit)")
    g.add_argument("--mem-bw", metavar="BW",
                   help=mem_help or "memory bandwidth shared by a node's intra-node messages, "
                   "per NUMA domain on machines with node=... (default 10GB/s; 'none' = free)")
    g.add_argument("--socket-bw", metavar="BW",
                   help="bandwidth of the link between two sockets of a node, each direction, "
                   "on machines with node=... (default 5GB/s; 'none' = unlimited); --mem-bw "
                   "is then per NUMA domain")
    g.add_argument("--mem-sharing", choices=("node", "flow"), default="node",
                   help="node: a node's intra-node messages share --mem-bw (default); flow: "
                   "each gets all of it")
    g.add_argument("--msg-overhead", metavar="TIME",
                   help="per-message overhead added to every flow (default 1us); per-hop "
                   "latency is the machine's lat= option")


#: the --format choices of every command that prints results (compare, evaluate, counters,
#: links, nodes, study).
FORMATS = ("table", "json", "csv")
#: values of --in-node: run the in-node placement step, or keep the mapper's cores
IN_NODE_CHOICES = ("place", "keep")


def add_format(p: argparse.ArgumentParser, default: str = "table", what: str = "") -> None:
    """--format table|json|csv: how a command prints its results on stdout.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    default : str
        The default format.
    what : str
        What the output holds (appended to the help).
    """
    p.add_argument("--format", choices=FORMATS, default=default,
                   help=f"output on stdout: table, json or csv (default {default})"
                   + (f"; {what}" if what else ""))


def print_csv(header: list[str], rows) -> None:
    """Print one CSV table (RFC 4180 quoting, ``\\n`` line ends) on stdout; floats in full
    precision (``repr``).

    Parameters
    ----------
    header : list of str
        Column names.
    rows : iterable of sequences
        One sequence of cells per row.
    """
    import csv

    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow([repr(v) if isinstance(v, float) else v for v in row])


def add_force(p: argparse.ArgumentParser) -> None:
    """--force: allow replacing existing output files.

    Parameters
    ----------
    p : argparse.ArgumentParser
        A command's parser.
    """
    p.add_argument("--force", "-f", action="store_true", help="overwrite existing output files")


def load_inputs(args, metrics: bool = True) -> tuple[Machine, Allocation, Pattern]:
    """Parse machine, allocation and pattern from the common options.

    Parameters
    ----------
    args : argparse.Namespace
        A parsed command line with ``--machine``, ``--nodes``, ``--pattern`` (and ``--threads``).
    metrics : bool
        The command reports the pattern's metrics: a pattern that moves nothing is refused
        (its metrics would all be zero); ``map`` writes a placement, of one rank if asked.

    Returns
    -------
    tuple of (Machine, Allocation, Pattern)
        The inputs; with ``--threads T`` the allocation has cores/T ranks per node.
    """
    from ..allocation import parse_allocation
    from ..machines import parse_machine
    from ..patterns import check_moves_something, parse_pattern

    machine = parse_machine(args.machine)
    allocation = parse_allocation(args.nodes, machine)
    if getattr(args, "threads", 1) != 1:
        allocation = allocation.with_threads(args.threads)
        _note_split_ranks(machine, args.threads)
    # (a graph file of a million lines takes seconds to read and to search for a grid)
    with status(f"reading the pattern {_short(args.pattern)}"):
        pattern = parse_pattern(args.pattern, default_ranks=allocation.n_cores)
    if metrics:
        check_moves_something(pattern)     # all-zero metrics are no answer
    machine.check_routing(args.routing)
    if not 0 < args.y <= 1:
        raise RankmapError(f"bad --y {args.y}: must be in (0, 1]")
    if hasattr(args, "time_model"):
        time_options(args)  # bad values fail here, before any work
        check_socket_setting(args, machine)
    if pattern.notes:  # notes only once the inputs are known to fit: an error stays one line
        from ..mappers.base import check_fits
        check_fits(pattern.n_ranks, allocation)
    for text in pattern.notes:
        note(text)
    return machine, allocation, pattern


def _note_split_ranks(machine, threads: int) -> None:
    """Say when ``--threads`` gives some rank cores of two sockets (``pack:2,core:3`` at 2
    threads: the middle rank's cores are 0:2 and 1:0), as the launcher files then bind it."""
    structure = machine.node_structure
    if structure is None or threads <= 1:
        return
    import numpy as np
    package = np.asarray(structure.package_of_core, dtype=np.int64)
    usable = len(package) // threads * threads
    split = (np.ptp(package[:usable].reshape(-1, threads), axis=1) > 0).nonzero()[0]
    if len(split):
        note(f"note: at {threads} threads a rank, {len(split)} rank slot"
             f"{'s' if len(split) != 1 else ''} of each node "
             f"span{'s' if len(split) == 1 else ''} two sockets "
             f"({structure.source}): the first is slot {int(split[0])}; a thread count "
             "that divides the cores of a socket keeps every rank on one")


def counters_out_of_memory(args) -> RankmapError:
    """The one line for ``counters`` or ``links`` running out of memory: the input named,
    not advice about machines and patterns.

    Parameters
    ----------
    args : argparse.Namespace
        The command line (``files`` or ``file``).

    Returns
    -------
    RankmapError
        The error to raise.
    """
    files = list(getattr(args, "files", None) or [args.file])
    size = sum(os.path.getsize(f) for f in files if os.path.isfile(f))
    return RankmapError(f"out of memory on {', '.join(files[:3])}"
                        f"{' ...' if len(files) > 3 else ''} ({size / 2 ** 20:.0f} MiB of "
                        "counters): free memory, or give fewer or smaller files (one phase "
                        "each)")


def _short(text: str, most: int = 60) -> str:
    """``text`` cut to ``most`` characters for a spinner's line."""
    text = str(text)
    return text if len(text) <= most else text[:most - 3] + "..."


def print_mapper_notes(names, pattern) -> None:
    """Say on stderr when a named mapper will not do what its name says (``rcb`` on a
    gridless pattern falls back to ``graph``).

    Parameters
    ----------
    names : iterable of str
        The mapping names asked for.
    pattern : Pattern
        The pattern.
    """
    from ..mappers.rcb import rcb_fallback_note

    if any(str(n).strip().lower() in ("rcb", "refine:rcb") for n in names):
        text = rcb_fallback_note(pattern)
        if text:
            note(f"note: {text}")


#: the time model's settings on the command line (besides --time-model): (flag, dest)
TIME_SETTINGS = (("--nic-bw", "nic_bw"), ("--mem-bw", "mem_bw"), ("--socket-bw", "socket_bw"),
                 ("--msg-overhead", "msg_overhead"))


def given_time_settings(args) -> list[str]:
    """The time model's settings a command line gives, as ``--nic-bw 1GB/s`` (and
    ``--mem-sharing flow``, the one that is not the default).

    Parameters
    ----------
    args : argparse.Namespace
        A parsed command line with the time options (:func:`add_time_options`).

    Returns
    -------
    list of str
        Each setting given, flag and value, in :data:`TIME_SETTINGS` order.
    """
    given = [f"{flag} {getattr(args, dest)}" for flag, dest in TIME_SETTINGS
             if getattr(args, dest, None) is not None]
    if getattr(args, "mem_sharing", None) == "flow":
        given.append("--mem-sharing flow")
    return given


def check_socket_setting(args, machine: Machine) -> None:
    """Refuse ``--socket-bw`` on a machine whose nodes have no inter-socket link to set.

    Parameters
    ----------
    args : argparse.Namespace
        A parsed command line with the time options (:func:`add_time_options`).
    machine : Machine
        The machine of the command line.

    Raises
    ------
    RankmapError
        When ``--socket-bw`` is given and the machine's nodes (``node=...``) have fewer than
        two packages: the setting would change nothing.
    """
    value = getattr(args, "socket_bw", None)
    if value is None:
        return
    structure = machine.node_structure
    if structure is None or structure.n_packages < 2:
        has = ("no node structure (node=...)" if structure is None
               else f"{structure.n_packages} package a node")
        raise RankmapError(f"--socket-bw {value}: the machine has {has}, so no inter-socket "
                           "link; give node=pack:2,... to model one")


def time_options(args) -> TimeOptions:
    """The time-model settings of the command line (--time-model, --nic-bw, --mem-bw,
    --mem-sharing, --msg-overhead); the defaults when the command has none.

    Parameters
    ----------
    args : argparse.Namespace
        A parsed command line.

    Returns
    -------
    TimeOptions
        The time-model settings (bandwidths in bytes/s, overhead in s); the defaults when the
        command has no time options.
    """
    from ..timing import TimeOptions, parse_time_options

    if not hasattr(args, "time_model"):
        return TimeOptions()
    if args.time_model == "off":
        # without the time model these settings change nothing: refused, never dropped
        given = given_time_settings(args)
        if given:
            raise RankmapError(f"{given[0]}: a setting of the time model, which --time-model "
                               "off switches off")
    return parse_time_options(nic=args.nic_bw, mem=args.mem_bw, overhead=args.msg_overhead,
                              enabled=args.time_model == "on", mem_sharing=args.mem_sharing,
                              socket=getattr(args, "socket_bw", None))


def budget(args) -> int | None:
    """The --budget of the command line as a whole number of moves (None: the default).

    Parameters
    ----------
    args : argparse.Namespace
        A parsed command line.

    Returns
    -------
    int or None
        ``--budget`` as proposed moves, or None for the default.
    """
    from ..mappers.refine import check_budget

    value = getattr(args, "budget", None)
    return None if value is None else check_budget(value)


def add_budget(p: argparse.ArgumentParser) -> None:
    """--budget: the work bound of refinements.

    Parameters
    ----------
    p : argparse.ArgumentParser
        A command's parser.
    """
    p.add_argument("--budget", default=None, metavar="MOVES",  # text: errors echo it as given
                   help="work bound of each refinement (refine:NAME, auto): proposed moves "
                   f"evaluated at most (default {BUDGET_PER_RANK} per rank, {DEFAULT_BUDGET} to "
                   f"{MAX_DEFAULT_BUDGET}; 0 = no refinement); a search "
                   f"also stops after 2^{REFINE_WORK.bit_length() - 1} route entries looked at; "
                   "the same input and seed give "
                   "the same placement")


def add_in_node(p: argparse.ArgumentParser) -> None:
    """--in-node: whether the in-node placement step runs after the mapper.

    Parameters
    ----------
    p : argparse.ArgumentParser
        A command's parser.
    """
    p.add_argument("--in-node", choices=IN_NODE_CHOICES, default=None,
                   help="on a machine whose nodes have sockets/NUMA domains (node=...): "
                   "'place' (default) re-deals each node's ranks over its domains to keep "
                   "heavy pairs in one domain; 'keep' leaves every rank on the core the "
                   "mapper chose (no effect without node=)")


def in_node(args) -> bool:
    """Whether ``--in-node`` asks for the in-node placement step.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    bool
        False for ``keep``; True for ``place``, the default (also when the command has no
        ``--in-node``).
    """
    return getattr(args, "in_node", None) != "keep"


def add_jobs(p: argparse.ArgumentParser, mpi: bool = True,
             what: str = "candidates and refinements") -> None:
    """--jobs: worker processes of the candidate search (``what`` runs in parallel)."""
    p.add_argument("--jobs", "-j", type=JOBS, default=None, metavar="N",
                   help=f"evaluate {what} on N worker processes (default: "
                   "every usable core; 1 = in this process); the result is the same for any N"
                   + ("; under 'mpirun -n K' the candidates are also spread over the K "
                      "processes (N each, default: this node's cores / its processes)"
                      if mpi else ""))


def search_executor(args, mpi: bool = True):
    """The executor of the candidate search: spread over the processes of an MPI launch
    (``mpirun -n K rankmap ...``, with ``mpi``) or over ``--jobs`` local worker processes.

    On ranks other than 0 of an MPI launch, Python's stdout and stderr go to /dev/null: rank 0
    alone prints (and the caller lets it alone write files: see :func:`is_root`).
    """
    jobs = getattr(args, "jobs", None)
    if mpi:
        from ..mpi.spread import mpi_executor, quiet_unless_root

        executor = mpi_executor(jobs)
        if executor is not None:
            quiet_unless_root(executor)
            return executor
    from ..selection.parallel import make_executor
    return make_executor(jobs)


def is_root(executor) -> bool:
    """Whether this process prints and writes (rank 0 of an MPI launch, or no MPI)."""
    return getattr(executor, "rank", 0) == 0


#: the step word of a candidate that has no step running but is not done
#: (:data:`rankmap.selection.auto.IDLE`; not imported: it loads numpy)
IDLE_STEP = "idle"
#: the step word of a candidate done, said through ``stage`` (``auto`` inside ``compare``:
#: :data:`rankmap.selection.auto.DONE`)
DONE_STEP = "done"


class SearchProgress:
    """What a progress bar of the candidate loop shows: done/total and the candidates in
    flight with their step (``building TXYZ``, ``routing greedy``, ``refining refine:rcb``).

    ``stage(name, "idle")``: ``name`` has no step running (not shown); ``stage(name,
    "done")`` is ``done(name)`` (:mod:`rankmap.selection.auto`'s words). A candidate that runs
    a search of its own (``auto`` inside ``compare``) reports its candidates' steps as
    ``stage(name, "STEP CANDIDATE for")`` (:func:`rankmap.selection.compare.compare`): each
    is in flight on its own (``routing XTYZ for auto``), and ``STEP`` ``done`` counts one of
    the ``steps`` the candidate was given, all but the last: ``done(name)`` counts that one
    (and any left) once the candidate itself is done.

    Parameters
    ----------
    prog : rich.progress.Progress, optional
        The bar (None: nothing shown, steps still counted).
    task : int, optional
        The bar's task id.
    label : str
        The bar's label.
    steps : dict of str to int, optional
        Steps of the bar's total a candidate counts for (default 1).
    """

    def __init__(self, prog=None, task=None, label: str = "",
                 steps: dict[str, int] | None = None):
        self._prog, self._task, self._label = prog, task, label
        self._flight: dict = {}        # name, or (name, inner candidate) -> step
        self._steps = dict(steps or {})
        self._counted: dict[str, int] = {}
        self.completed = 0             # steps counted

    def _show(self) -> None:
        if self._prog is None:
            return
        text = ", ".join(self.in_flight())
        if len(text) > 60:
            text = text[:57] + "..."
        self._prog.update(self._task, description=f"{self._label}: {text}" if text
                          else self._label)

    def _advance(self, n: int) -> None:
        if n <= 0:
            return
        self.completed += n
        if self._prog is not None:
            self._prog.update(self._task, advance=n)

    def in_flight(self) -> list[str]:
        """The steps shown, as the bar says them (``bounding TXYZ``, ``routing X for auto``).

        Returns
        -------
        list of str
            One per candidate in flight, in the order they started.
        """
        inside = {key[0] for key in self._flight if isinstance(key, tuple)}
        return [f"{what} {key[1]} for {key[0]}" if isinstance(key, tuple) else f"{what} {key}"
                for key, what in self._flight.items()
                if isinstance(key, tuple) or key not in inside]

    def stage(self, name: str, what: str) -> None:
        """Candidate ``name`` started step ``what`` (``idle``: none; class docstring).

        Parameters
        ----------
        name : str
            The candidate.
        what : str
            Its step, or ``"STEP INNER for"`` for a candidate of its own search.
        """
        inner = _inner_step(what)
        if inner is None:
            if what == DONE_STEP:
                self.done(name)
                return
            if what == IDLE_STEP:
                self._flight.pop(name, None)
            else:
                self._flight[name] = what
        else:
            step, sub = inner
            if step in (IDLE_STEP, DONE_STEP):
                self._flight.pop((name, sub), None)
            else:
                self._flight[(name, sub)] = step
            if step == DONE_STEP:      # the last of its steps: when it is done itself
                if self._counted.get(name, 0) < self._steps.get(name, 1) - 1:
                    self._counted[name] = self._counted.get(name, 0) + 1
                    self._advance(1)
        self._show()

    def done(self, name: str) -> None:
        """Candidate ``name`` is finished: the steps it counts for that are not counted yet.

        Parameters
        ----------
        name : str
            The candidate.
        """
        for key in [k for k in self._flight
                    if k == name or (isinstance(k, tuple) and k[0] == name)]:
            del self._flight[key]
        if name in self._steps:
            self._advance(self._steps[name] - self._counted.get(name, 0))
            self._counted[name] = self._steps[name]
        else:
            self._advance(1)
        self._show()

    __call__ = done


def _inner_step(what: str) -> tuple[str, str] | None:
    """``("routing", "XTYZ")`` from ``"routing XTYZ for"`` (a step of a candidate's own
    search, :class:`SearchProgress`), or None."""
    if not what.endswith(" for"):
        return None
    step, _, sub = what[:-len(" for")].partition(" ")
    return (step, sub) if sub else None


#: A bar or spinner appears only once its work has run this long (s): a run of 0.3 s
#: should not flash one on the terminal.
SHOW_AFTER_S = 1.0


@contextmanager
def _shown_after(live, delay: float = SHOW_AFTER_S):
    """Start ``live`` (a rich Progress or Status) once ``delay`` seconds have passed.

    Parameters
    ----------
    live : rich.progress.Progress or rich.status.Status
        What to show; its ``start()`` runs on a timer thread, ``stop()`` at the end if
        it was started.
    delay : float
        Seconds before it is shown.

    Yields
    ------
    None
    """
    import threading

    lock = threading.Lock()
    state = {"started": False, "ended": False}

    def start():
        with lock:
            if state["ended"]:
                return
            state["started"] = True     # before start(): a half-started display is stopped
            try:
                live.start()
            except Exception:           # a display that cannot show is no error of the work
                pass

    timer = threading.Timer(delay, start)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            state["ended"] = True
            if state["started"]:
                try:
                    live.stop()
                except Exception:
                    pass


@contextmanager
def search_progress(total: int, label: str, steps: dict[str, int] | None = None):
    """A rich progress bar on stderr for the candidate loop (only on a terminal).

    Yields a :class:`SearchProgress`: ``stage(name, what)`` and ``done(name)``.

    Parameters
    ----------
    total : int
        Steps of the search (every candidate's, ``steps`` included).
    label : str
        What the bar is counting.
    steps : dict of str to int, optional
        Steps a candidate counts for when not 1 (``auto`` in ``compare``: its own).

    Yields
    ------
    SearchProgress
        The bar's hooks (without a terminal: counts, shows nothing).
    """
    if total < 1 or not sys.stderr.isatty():
        yield SearchProgress(steps=steps)
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                               TextColumn, TimeElapsedColumn)

    prog = Progress(SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(),
                    MofNCompleteColumn(), TimeElapsedColumn(), console=Console(stderr=True),
                    transient=True)
    with _shown_after(prog):
        yield SearchProgress(prog, prog.add_task(label, total=total), label, steps)


@contextmanager
def status(text: str):
    """A spinner with ``text`` on stderr while one long step runs (only on a terminal)."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    with _shown_after(Console(stderr=True).status(text)):
        yield


def example(text: str) -> str:
    """An argparse epilog with an example block.

    Parameters
    ----------
    text : str
        One or more example command lines.

    Returns
    -------
    str
        The epilog: ``example:`` and the lines, indented.
    """
    return "example:\n  " + text.strip().replace("\n", "\n  ")


@contextmanager
def progress_bar(total: int, label: str):
    """A rich progress bar on stderr (only on a terminal and for more than one step).

    Yields a function ``advance(description)``.

    Parameters
    ----------
    total : int
        Steps of the work.
    label : str
        What the bar is counting.

    Yields
    ------
    callable
        ``advance(description)``: marks one step done (a no-op when no bar is shown).
    """
    if total <= 1 or not sys.stderr.isatty():
        yield lambda desc=None: None
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn)

    prog = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    with _shown_after(prog):
        task = prog.add_task(label, total=total)

        def advance(desc=None):
            prog.update(task, advance=1, description=f"{label} {desc}" if desc else label)

        yield advance


def write_report(comp, args) -> str:
    """Write ``--report`` of compare/evaluate (the command line is recorded); return the path.

    Parameters
    ----------
    comp : Comparison
        The evaluated candidates.
    args : argparse.Namespace
        The parsed command line (``--report``, ``--force``, ``--y``; recorded in the report).

    Returns
    -------
    str
        The path written.
    """
    import os
    import shlex

    from ..report.comparison import write_comparison_report

    command = "rankmap " + " ".join(shlex.quote(a) for a in sys.argv[1:]) \
        if sys.argv and os.path.basename(sys.argv[0]) == "rankmap" else None
    # its plots (a CDF of every candidate's link loads, the winner's link-load map) take
    # seconds: a spinner says so on a terminal
    with status(f"writing {args.report}: plots of {len(comp.candidates)} candidate(s)"):
        path = write_comparison_report(comp, args.report, args.y, args.force, command)
    print(f"wrote {path}", file=sys.stderr)
    return path


#: width of tables printed into a pipe or file (a terminal's own width otherwise)
PIPE_WIDTH = 120


def stdout_console():
    """The console a command prints its results on: a terminal's width; into a pipe or a
    file, tables :data:`PIPE_WIDTH` wide and lines of text never wrapped (``grep '^why:'``
    gets the whole line, a value keeps its unit).

    Returns
    -------
    rich.console.Console
        The console for standard output.
    """
    from rich.console import Console
    tty = sys.stdout.isatty()
    return Console(width=None if tty else PIPE_WIDTH, soft_wrap=not tty)
