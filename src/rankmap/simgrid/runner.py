"""Running a pattern under a placement in SimGrid SMPI and reading back per-phase times.

The run uses ``--cfg=smpi/simulate-computation:no`` (only communication takes simulated
time, so results are deterministic), SimGrid's ``CM02`` network model (plain max-min sharing
with no bandwidth or latency correction factors) and no cross-traffic (no simulated TCP
acknowledgements on the reverse path): the same assumptions as rankmap's time model, so the
two can be compared like with like. Buffers are SMPI shared mallocs.

Which program runs (``program="auto"``): stencil patterns run ``programs/halo.c``, a halo
exchange that computes its neighbours from the grid; fft2d patterns run ``programs/fft2d.c``,
MPI_Alltoall on row and column communicators from MPI_Comm_split; random pairs run
``programs/pairs.c``, an MPI_Sendrecv between partners read from a file (line r: rank r's
partner); everything else (graphs, mini-apps, TOML phases) runs ``programs/flows.c``, which
replays the flow list.
``program="flows"`` forces the replay. :func:`simulate_command` runs the user's own program
instead (built with ``smpicc``), in the current directory, and reads SimGrid's simulated time
of the whole run. A pattern-specific program is used only when the
pattern's phases are exactly what its generator makes from the recorded parameters, so both
programs send the same messages (tests/test_simgrid_programs.py checks equal phase times).

All-to-all algorithm. rankmap's model has every pair's message of an all-to-all in flight at
once, which is SMPI's ``basic_linear`` algorithm (all receives and sends posted together; the
block to self is a local copy that crosses no link, as the pattern has no self flow). SMPI's
default (the Open MPI decision table) picks another algorithm for some sizes, which sends
the same bytes in rounds and so takes longer. Measured with SimGrid 3.32, CM02, random
placement, phase times in ms as flow replay / fft2d.c with SMPI's default / fft2d.c with
``basic_linear``:

* ``fft2d:4x8`` (1 MiB) on ``torus:4x4x2``: dim0 9.870 / 9.870 / 9.870, dim1 19.739 /
  19.739 / 19.739 (the default is basic_linear here); forcing ``pair`` gives 14.80 and 34.54,
  ``ring`` 15.63 and 33.93, ``bruck`` 24.67 and 59.21;
* ``fft2d:4x8:bytes=768KiB`` on ``torus:4x4x2``, dim0 (4-rank columns): 7.402 / 11.103 (the
  default is ``pair``) / 7.402;
* ``fft2d:2x64`` (1 MiB) on ``torus:4x4x4:cores=2``, dim1 (64-rank rows): 266.5 / 488.9
  (``pair``) / 266.5;
* ``fft2d:1x32:bytes=256`` on ``torus:4x4x2``, dim1 (32-rank rows): 0.0160 / 0.0965
  (``bruck``) / 0.0160.

So every run uses ``--cfg=smpi/alltoall:basic_linear``, which matched the flow replay to
the printed digits in every case.

Shared buffers: SMPI maps a ``SMPI_SHARED_MALLOC`` buffer one block at a time (1 MiB by
default), so fft2d:32x32 on 1,024 ranks (two 32 MiB all-to-all buffers per rank) needed
about 65,000 mappings and aborted at Linux's ``vm.max_map_count``; runs use 64 MiB blocks
(``smpi/shared-malloc-blocksize``).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field

import numpy as np

from ..errors import RankmapError
from ..threads import child_environ
from .build import compiled_program, find_tool
from .flowfile import flow_file_bytes
from .platform import check_supported, hostfile, platform_xml

__all__ = ["SMPI_CONFIG", "SMPI_COMMAND_CONFIG", "PROGRAM_CHOICES", "MAX_MESSAGE", "STDERR_TAIL",
           "READ_GRACE_S",
           "SimulationTimeout", "SmpiResult", "SmpiRun", "ProgramRun", "choose_program",
           "simulate", "simulate_command", "check_program_args", "program_path"]

SMPI_CONFIG = ["--cfg=smpi/simulate-computation:no", "--cfg=network/model:CM02",
               "--cfg=network/crosstraffic:0", "--cfg=smpi/display-timing:0",
               "--cfg=smpi/alltoall:basic_linear", "--cfg=smpi/shared-malloc-blocksize:67108864",
               "--log=root.thres:critical"]

#: values of ``simulate(program=...)`` and ``rankmap validate --program``
PROGRAM_CHOICES = ("auto", "flows")

MAX_MESSAGE = 2**31 - 1  # SMPI's int counts
#: bytes of a simulation's standard error that are read (SimGrid's last lines are at its end)
STDERR_TAIL = 1 << 16
#: seconds a simulation's output is still read after its process group is gone
READ_GRACE_S = 2.0


@dataclass
class SmpiRun:
    """A finished ``smpirun``: exit status, standard output (empty when discarded) and the
    end of standard error."""

    returncode: int
    stdout: str
    stderr: str


class SimulationTimeout(RankmapError):
    """A simulation ran past its time limit."""


@dataclass
class SmpiResult:
    """Simulated seconds per phase (pattern order), their sum, wall-clock seconds, and the
    SMPI program that ran (``halo``, ``fft2d`` or ``flows``)."""

    phase_times: list[float]
    wall_s: float
    program: str = "flows"

    @property
    def total_s(self) -> float:
        """Simulated time of the whole pattern (sum of phases), seconds."""
        return float(sum(self.phase_times))


@dataclass
class ProgramRun:
    """One SMPI program and its inputs: ``args`` after the executable, ``files`` (name ->
    bytes) to write into the run directory first."""

    name: str
    args: list[str]
    files: dict[str, bytes] = field(default_factory=dict)


def _same_phases(pattern, rebuilt) -> bool:
    """Whether ``pattern`` has exactly the flows (src, dst, bytes per phase) of ``rebuilt``."""
    if len(pattern.phases) != len(rebuilt.phases):
        return False
    return all(np.array_equal(a.src, b.src) and np.array_equal(a.dst, b.dst)
               and np.array_equal(a.bytes, b.bytes)
               for a, b in zip(pattern.phases, rebuilt.phases))


def _message_bytes(pattern) -> int | None:
    """The pattern's per-message size in bytes if it is a whole number SMPI can send."""
    nbytes = pattern.params.get("bytes")
    if not isinstance(nbytes, (int, np.integer)) or not 0 <= nbytes <= MAX_MESSAGE:
        return None
    return int(nbytes)


def _halo_run(pattern) -> ProgramRun | None:
    """``halo`` for a stencil pattern its generator would make, else None."""
    from ..patterns.stencil import make_stencil

    nbytes, box = _message_bytes(pattern), pattern.params.get("box")
    if nbytes is None or pattern.grid is None or pattern.periodic is None:
        return None
    if box not in (True, False):
        return None
    rebuilt = make_stencil(pattern.spec, pattern.grid, box=box, periodic=pattern.periodic,
                           nbytes=nbytes)
    if not _same_phases(pattern, rebuilt):
        return None
    return ProgramRun("halo", ["x".join(map(str, pattern.grid)),
                               "".join("1" if p else "0" for p in pattern.periodic),
                               "box" if box else "star", str(nbytes)])


def _fft2d_run(pattern) -> ProgramRun | None:
    """``fft2d`` for an fft2d pattern its generator would make, else None."""
    from ..patterns.fft import make_fft2d

    nbytes = _message_bytes(pattern)
    if nbytes is None or pattern.grid is None or len(pattern.grid) != 2:
        return None
    if not _same_phases(pattern, make_fft2d(pattern.spec, pattern.grid, nbytes=nbytes)):
        return None
    return ProgramRun("fft2d", ["x".join(map(str, pattern.grid)), str(nbytes)])


def _pairs_run(pattern) -> ProgramRun | None:
    """``pairs`` for a random-pairs pattern (one phase, a perfect matching, one size), else
    None."""
    nbytes = _message_bytes(pattern)
    if nbytes is None or len(pattern.phases) != 1:
        return None
    ph = pattern.phases[0]
    partner = np.full(pattern.n_ranks, -1, dtype=np.int64)
    partner[ph.src] = ph.dst
    matched = (len(np.unique(ph.src)) == len(ph.src) and np.all(ph.src != ph.dst)
               and np.array_equal(np.sort(ph.src), np.sort(ph.dst))
               and np.all(partner[ph.dst] == ph.src)
               and np.all(np.asarray(ph.bytes) == nbytes))
    if not matched:
        return None
    text = "".join(f"{p}\n" for p in partner.tolist()).encode()
    return ProgramRun("pairs", ["partners.txt", str(nbytes)], {"partners.txt": text})


def choose_program(pattern, program: str = "auto") -> ProgramRun:
    """The SMPI program that runs ``pattern`` (see the module docstring) and its inputs.

    Parameters
    ----------
    pattern : Pattern
        The communication pattern to simulate.
    program : str, optional
        ``auto`` (the pattern's own MPI program when its phases are exactly what that program
        sends) or ``flows`` (always the flow replay).

    Returns
    -------
    ProgramRun
        Program name, its arguments and the input files (name -> bytes) to write first.

    Raises
    ------
    RankmapError
        When ``program`` is not a known choice, or a flow is too large for SMPI.
    """
    if program not in PROGRAM_CHOICES:
        raise RankmapError(f"bad SMPI program {program!r}: choose from "
                           f"{', '.join(PROGRAM_CHOICES)}")
    if program == "auto":
        specific = {"stencil": _halo_run, "fft2d": _fft2d_run,
                    "pairs": _pairs_run}.get(pattern.kind)
        run = specific(pattern) if specific else None
        if run is not None:
            return run
    return ProgramRun("flows", ["flows.bin"], {"flows.bin": flow_file_bytes(pattern)})


def simulate(machine, pattern, node_of_rank, routing: str = "dor", mem_bw: float | None = None,
             timeout: float | None = None, workdir: str | None = None,
             link_latency: float | None = 0.0, program: str = "auto") -> SmpiResult:
    """Simulate ``pattern`` with rank r on node ``node_of_rank[r]`` in SMPI.

    Parameters
    ----------
    machine : Machine
        A machine SimGrid can model (:func:`rankmap.simgrid.platform.check_supported`).
    pattern : Pattern
        The communication pattern (flow sizes in bytes).
    node_of_rank : array_like of int
        Machine node id of every rank (the placement).
    routing : str, optional
        rankmap routing SimGrid must reproduce.
    mem_bw : float, optional
        Intra-node (loopback) bandwidth in bytes/s; None: intra-node messages are free.
    timeout : float, optional
        Wall-clock limit of the simulation in seconds (None: no limit).
    workdir : str, optional
        Directory in which the temporary run directory is made (default: the system's).
    link_latency : float or None, optional
        Latency in seconds written on every link (default 0 for plain max-min sharing, see
        :mod:`.platform`; None: the machine's per-hop latency).
    program : str, optional
        ``auto`` (the pattern's own MPI program when there is one) or ``flows`` (always the
        flow replay).

    Returns
    -------
    SmpiResult
        Simulated seconds per phase, wall-clock seconds of the run and the program used.

    Raises
    ------
    SimulationTimeout
        After ``timeout`` wall-clock seconds.
    RankmapError
        When SimGrid cannot model the machine, SMPI is not installed, compilation fails, or
        smpirun fails or reports the wrong number of phases.
    """
    check_supported(machine, routing)
    run = choose_program(pattern, program)
    exe = compiled_program(run.name)
    proc, wall = _smpirun(machine, pattern.n_ranks, node_of_rank, [exe, *run.args], SMPI_CONFIG,
                          mem_bw=mem_bw, link_latency=link_latency, timeout=timeout,
                          workdir=workdir, files=run.files)
    times = {int(m.group(1)): float(m.group(2))
             for m in re.finditer(r"^phase (\d+) (\S+)$", proc.stdout, re.M)}
    if proc.returncode != 0 or len(times) != len(pattern.phases):
        tail = _failure_cause(proc.stderr) or (
            _program_lines(proc.stderr) or proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RankmapError(f"smpirun failed (exit {proc.returncode}, program {run.name}): {tail}")
    return SmpiResult([times[i] for i in range(len(pattern.phases))], wall, run.name)


class _Tail:
    """Reads a pipe to its end in a thread, keeping its last ``limit`` bytes (all: None)."""

    def __init__(self, pipe, limit: int | None):
        import collections
        import threading

        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._limit = limit
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe) -> None:
        with pipe:
            for chunk in iter(lambda: pipe.read1(1 << 16), b""):
                self._chunks.append(chunk)
                self._size += len(chunk)
                while self._limit is not None and self._size - len(self._chunks[0]) >= self._limit:
                    self._size -= len(self._chunks.popleft())

    def join(self, timeout: float) -> None:
        """Wait for the pipe's end, at most ``timeout`` seconds."""
        self._thread.join(timeout)

    def text(self) -> str:
        """What was kept, decoded (bad bytes replaced; a character cut at the start dropped)."""
        data = b"".join(list(self._chunks))
        if self._limit is not None and len(data) > self._limit:
            data = data[-self._limit:].lstrip(bytes(range(0x80, 0xC0)))
        return data.decode("utf-8", "replace")


def _smpirun(machine, n_ranks: int, node_of_rank, argv: list[str], config: list[str], *,
             mem_bw: float | None, link_latency: float | None, timeout: float | None,
             workdir: str | None, files: dict[str, bytes] | None = None,
             cwd: str | None = None, keep_stdout: bool = True) -> tuple[SmpiRun, float]:
    """Run ``smpirun`` on the machine's platform with rank r on node ``node_of_rank[r]``.

    The platform XML and the hostfile (and ``files``) go to a temporary directory, which is
    also the working directory unless ``cwd`` is given. The program's standard output is kept
    (``keep_stdout``) or discarded, and of its standard error only the last
    :data:`STDERR_TAIL` bytes are kept: a program printing without end costs neither memory
    nor disk. The
    run is a process group of its own, killed when it outlives ``timeout`` (raising
    :class:`SimulationTimeout`) or when this process is stopped (SIGTERM, Ctrl-C): SimGrid's
    ``smpimain`` must not keep running after ``smpirun``'s script is gone.
    Returns the finished run and its wall-clock seconds.
    """
    import signal
    import time

    smpirun = find_tool("smpirun")
    with tempfile.TemporaryDirectory(prefix="rankmap-smpi-", dir=workdir) as tmp:
        plat, hosts = (os.path.join(tmp, n) for n in ("platform.xml", "hosts"))
        with open(plat, "w") as fh:
            fh.write(platform_xml(machine, mem_bw, link_latency))
        with open(hosts, "w") as fh:
            fh.write(hostfile(node_of_rank))
        for name, data in (files or {}).items():
            with open(os.path.join(tmp, name), "wb") as fh:
                fh.write(data)
        cmd = [smpirun, "-np", str(n_ranks), "-platform", plat, "-hostfile", hosts, *config,
               *argv]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE if keep_stdout else subprocess.DEVNULL,
                                stderr=subprocess.PIPE, cwd=cwd or tmp, env=child_environ(),
                                start_new_session=True)
        readers = [_Tail(proc.stderr, STDERR_TAIL)]
        if keep_stdout:
            readers.append(_Tail(proc.stdout, None))
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise SimulationTimeout(f"SMPI simulation exceeded --timeout {timeout:g} s") from None
        finally:
            # the whole group goes, finished or not: a child the program left in the
            # background would hold the pipes open (and a core) after the run
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait()
            for r in readers:                     # a child in a session of its own may still
                r.join(READ_GRACE_S)              # hold a pipe: what was read is kept
        wall = time.perf_counter() - t0
        tail = readers[0].text()
        out = readers[1].text() if keep_stdout else ""
    return SmpiRun(proc.returncode, out, tail), wall


#: smpirun options of a user's own program: :data:`SMPI_CONFIG` with SimGrid's report of the
#: simulated time at the end of the run (the program prints no phase times), and collective
#: algorithms that send what ``rankmap record`` counts for them, as ``basic_linear`` does for
#: all-to-all. Measured on 18 ranks of ``torus:3x3:cores=2`` (1 MiB, pred/sim under SMPI's
#: default -> under the choice): allreduce 0.17-0.34 -> 1.00 with ``lr`` (the recorded ring);
#: bcast 1.20 -> 1.00 with ``flattree`` (root to every other); reduce_scatter_block 0.11 ->
#: 0.37-0.45 with ``mpich_pair`` (block by block, as recorded, in P-1 rounds). SMPI's defaults
#: already matched reduce, gather, scatter, allgather(v) and alltoallv (1.00; ``flat_tree``
#: reduce and ``ompi_basic_linear`` gather receive one by one: 0.37); scan sends along a chain
#: in P-1 steps (0.08-0.22) and no algorithm sends it at once.
SMPI_COMMAND_CONFIG = [c for c in SMPI_CONFIG if not c.startswith("--cfg=smpi/display-timing")] + [
    "--cfg=smpi/display-timing:1", "--log=smpi_utils.thres:info",
    "--log=smpi_pmpi.thres:warning", "--cfg=smpi/allreduce:lr",
    "--cfg=smpi/bcast:flattree", "--cfg=smpi/reduce_scatter:mpich_pair"]

_SIMULATED = re.compile(r"Simulated time: (\S+) seconds")
#: SimGrid's own lines, which are not the program's: log lines stamped with the simulated
#: time (``[0.000000] ...``, ``[node-1:1:(2) 0.000000] ...``) and its closing summary
_SIMGRID_LINE = re.compile(r"^(\[[^\]]*\d\.\d{6}\] |The simulation took |"
                           r"\S+ seconds were actual computation|Execution failed with code|"
                           r"Backtrace|\s*->|\S+ --cfg=)")
#: SimGrid's words for a run that ended by MPI_Abort or in a deadlock (it then exits 0)
_ABORTED = re.compile(r"\] (Oops! Deadlock detected|MPI_Abort was called)", re.M)
#: smpirun expands the program's arguments unquoted: split at white space, and matched as
#: file name patterns (other shell characters arrive as given)
_UNSAFE_ARG = re.compile(r"[\s*?\[]")
#: options SimGrid takes for itself wherever they appear on smpirun's command line
_SIMGRID_OPTIONS = ("--help", "--version", "--cfg-help", "--help-models", "--help-logs",
                    "--help-log-categories", "--help-aliases", "--help-tracing")
#: launchers given where the program belongs (validate starts smpirun itself)
_LAUNCHERS = ("mpirun", "mpiexec", "srun", "smpirun", "aprun", "orterun", "prun", "jsrun")


#: what the shell says of a process a signal ended: no cause, the program's or SimGrid's line
#: before it says why
_SHELL_NOTE = re.compile(r"^(\S+: line \d+: \d+ )?(Aborted|Segmentation fault|Killed|Bus error|"
                         r"Floating point exception)( \(core dumped\))?(\s+\S.*)?$")
#: SimGrid's own lines that say why a run failed (its stack for a simulated process, memory)
_SIMGRID_CAUSE = re.compile(r"Failed to allocate|out of memory|Cannot allocate|mmap", re.I)


def _program_lines(stderr: str) -> list[str]:
    """The lines of a run's standard error that the program printed (SimGrid's dropped, and
    the shell's "Aborted" that names no cause)."""
    return [ln.strip() for ln in stderr.splitlines()
            if ln.strip() and not _SIMGRID_LINE.match(ln) and not _SHELL_NOTE.match(ln.strip())]


def _failure_cause(stderr: str) -> str | None:
    """SimGrid's own line saying why a run failed (``Failed to allocate stack.``), if any."""
    causes = [ln.strip() for ln in stderr.splitlines() if _SIMGRID_CAUSE.search(ln)]
    if not causes:
        return None
    return re.sub(r"^\[[^\]]*\] (\[[^\]]*\] )?", "", causes[-1])


def check_program_args(command: list[str]) -> None:
    """Refuse a command smpirun would not hand to the program as given.

    smpirun is a shell script that passes the program's arguments on unquoted: an argument
    with a space would arrive as two, ``*.c`` as the matching files, and ``--cfg=``,
    ``--log=``, ``--help`` or ``--version`` would be taken by SimGrid. A launcher named in the
    program's place (without a path) is refused too: ``validate`` starts ``smpirun`` itself.

    Parameters
    ----------
    command : list of str
        The program and its arguments.

    Raises
    ------
    RankmapError
        Naming the first argument that would not arrive as given, or the launcher.
    """
    if command and os.sep not in command[0] and command[0].split(".")[0] in _LAUNCHERS:
        raise RankmapError(f"give the program itself after '--', not {command[0]!r}: "
                           "validate runs it with smpirun on every placement")
    for arg in command[1:]:
        if not arg or _UNSAFE_ARG.search(arg) or arg.startswith(("--cfg=", "--log=")) \
                or arg in _SIMGRID_OPTIONS:
            raise RankmapError(f"program argument {arg!r} would not reach the program as "
                               "given (smpirun expands arguments unquoted: white space splits "
                               "them, * ? [ match files; --cfg=, --log=, --help and --version "
                               "are SimGrid's)")


def program_path(exe: str) -> str:
    """The file of a program given by path or by a name looked up in ``PATH``.

    Parameters
    ----------
    exe : str
        The program's path, or a name looked up in ``PATH``.

    Returns
    -------
    str
        The program's path.

    Raises
    ------
    RankmapError
        The program is not found (a name without a path that is a file in the current
        directory, not in ``PATH``, is said so, with ``./`` to give) or is not an executable
        file.
    """
    import shutil

    if os.sep not in exe:
        path = shutil.which(exe)
        if path is None:
            # as a shell does: a name without a '/' is looked up in PATH only
            here = os.path.join(os.curdir, exe)
            hint = (f": give {here!r} for the file in the current directory"
                    if os.path.isfile(exe) else "")
            raise RankmapError(f"program {exe!r} not found on PATH (a name without "
                               f"'{os.sep}' is looked up there){hint}")
    else:
        path = exe
    if not os.path.exists(path):
        raise RankmapError(f"program {exe!r} not found")
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        raise RankmapError(f"program {exe!r} is not an executable file")
    return path


def simulate_command(machine, n_ranks: int, node_of_rank, command: list[str],
                     routing: str = "dor", mem_bw: float | None = None,
                     timeout: float | None = None, workdir: str | None = None,
                     link_latency: float | None = 0.0) -> SmpiResult:
    """Simulate the user's own MPI program (built with ``smpicc``) under a placement in SMPI.

    The program runs in the current working directory (it may read its own input files),
    with :data:`SMPI_COMMAND_CONFIG`: no simulated computation, plain max-min sharing,
    ``basic_linear`` all-to-all as in :func:`simulate`, and the collective algorithms that
    send what ``rankmap record`` counts (ring allreduce, flat bcast, pairwise
    reduce_scatter). Its time is the simulated time of the whole run (SimGrid's
    ``Simulated time`` line), reported as one phase.

    Parameters
    ----------
    machine : Machine
        A machine SimGrid can model (:func:`rankmap.simgrid.platform.check_supported`).
    n_ranks : int
        Number of MPI processes (``smpirun -np``).
    node_of_rank : array_like of int
        Machine node id of every rank (the placement).
    command : list of str
        The program (path of an executable built with ``smpicc``) and its arguments.
    routing : str, optional
        rankmap routing SimGrid must reproduce.
    mem_bw : float, optional
        Intra-node (loopback) bandwidth in bytes/s; None: intra-node messages are free.
    timeout : float, optional
        Wall-clock limit of the simulation in seconds (None: no limit).
    workdir : str, optional
        Directory in which the temporary platform directory is made (default: the system's).
    link_latency : float or None, optional
        Latency in seconds written on every link (default 0; None: the machine's).

    Returns
    -------
    SmpiResult
        One "phase": the simulated seconds of the whole run; wall-clock seconds; the
        program's file name.

    Raises
    ------
    SimulationTimeout
        After ``timeout`` wall-clock seconds.
    RankmapError
        When SimGrid cannot model the machine, the program is missing or fails (one not
        built with ``smpicc`` is named as such), or SimGrid reports no simulated time.
    """
    check_supported(machine, routing)
    if not command:
        raise RankmapError("no program to simulate")
    check_program_args(command)
    exe = command[0]
    path = program_path(exe)
    name = os.path.basename(path)
    proc, wall = _smpirun(machine, n_ranks, node_of_rank, [os.path.abspath(path), *command[1:]],
                          SMPI_COMMAND_CONFIG, mem_bw=mem_bw, link_latency=link_latency,
                          timeout=timeout, workdir=workdir, cwd=os.getcwd(), keep_stdout=False)
    found = _SIMULATED.findall(proc.stderr)
    if _ABORTED.search(proc.stderr):
        # SimGrid 3.32 ends a run in which a process called MPI_Abort, or whose processes
        # wait for each other for ever, and exits 0
        said = _program_lines(proc.stderr)
        raise RankmapError(f"{name} aborted (MPI_Abort) or deadlocked in SimGrid"
                           + (f": {said[-1]}" if said else "")
                           + f" (was it given the recording's arguments, on {n_ranks} ranks?)")
    if proc.returncode != 0 or not found:
        if "SMPI-specific compiler" in proc.stderr or "cannot dynamically load" in proc.stderr:
            raise RankmapError(f"smpirun cannot run {exe!r}: build it with SimGrid's smpicc "
                               f"(or smpicxx, smpif90), not with the cluster's mpicc")
        if "Not yet implemented: PMPI_Pcontrol" in proc.stderr:
            raise RankmapError(f"SimGrid aborts on MPI_Pcontrol ({name}): link the SMPI copy "
                               f"with the file 'rankmap simgrid shim -o shim.c' writes "
                               f"(smpicc -o {name} PROGRAM.c shim.c)")
        lines = [ln for ln in proc.stderr.strip().splitlines()
                 if "Configuration change" not in ln and "host-speed" not in ln]
        critical = [ln.split("CRITICAL] ", 1)[1] for ln in lines if "CRITICAL] " in ln]
        cause = _failure_cause(proc.stderr)
        tail = (critical or ([cause] if cause else []) or _program_lines(proc.stderr) or lines
                or ["no output"])[-1]
        raise RankmapError(f"smpirun failed (exit {proc.returncode}, program {name}): {tail}")
    return SmpiResult([float(found[-1])], wall, name)
