"""The candidate search spread over the processes of ``mpirun -n K rankmap compare|map ...``.

Every process reads the same inputs and builds the same evaluator; in each candidate loop
(``compare``'s candidates, ``auto``'s candidates, then its refinements) the items are dealt
out as the processes become free: rank 0 hands the next item of the loop's dispatch order
(expensive mappers first) to every process that asks, and between two answers runs items
itself from the other end of the order (the cheapest), so it is never long away. With
``--jobs`` workers of its own in any process, the split is fixed instead (the k-th item of
the dispatch order on process ``k % K``, each running its share on its workers): the
processes decide it together (:class:`MPIExecutor` gathers every process's workers), as
nodes holding different numbers of processes give them different default ``--jobs``.
Before each loop, and at the end of the command, the processes check in
(:func:`check_in`): one that failed on its own (an input only on another node's disk) says
so there, and every process stops with the error instead of waiting for it. Who runs an
item changes nothing but the time: the outcomes are exchanged (``allgather``) so that every
process continues with the full, ordered list, and the result is the serial one. Rank 0 alone
prints and writes (:func:`quiet_unless_root`). A process done with its share waits for the
others asleep (:func:`rankmap.mpi.wait.wait_for_all`), not in the MPI library's blocking
collective, which polls without pause.

An MPI launch is detected from the environment the launcher sets (Open MPI:
``OMPI_COMM_WORLD_SIZE``; MPICH/Hydra, Slurm PMI: ``PMI_SIZE``); mpi4py, which initialises
MPI when imported, is imported only then.
"""

from __future__ import annotations

import os
import sys

from ..errors import RankmapError
from ..selection.parallel import (Executor, Outcome, SerialExecutor, portable_error,
                                  restore_error, usable_cores)
from .wait import nap_until, wait_for_all, wait_for_message

__all__ = ["launched_size", "launched_rank", "local_size", "MPIExecutor", "mpi_executor",
           "quiet_unless_root", "check_in", "fail_collectively", "finish_collectively",
           "SIZE_VARIABLES", "ASK_TAG", "GIVE_TAG"]

#: tags of the dealing's messages: a request for an item, and the item given (-1: none left)
ASK_TAG, GIVE_TAG = 7101, 7102
#: environment variables holding the process count of an MPI launch, checked in order
SIZE_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE")
_LOCAL_SIZE_VARIABLES = ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS")
#: environment variables holding this process's rank in the launch, checked in order
_RANK_VARIABLES = ("OMPI_COMM_WORLD_RANK", "PMI_RANK")


def _int_env(env, names, minimum: int = 1, what: str = "a process count") -> int | None:
    for name in names:
        text = env.get(name, "").strip()
        if text:
            if not (text.isascii() and text.isdigit()) or int(text) < minimum:
                raise RankmapError(f"bad ${name} {text!r}: expected {what}")
            return int(text)
    return None


def launched_size(env=None) -> int:
    """The number of processes of the MPI launch this process belongs to (1 if none).

    Parameters
    ----------
    env : mapping, optional
        Environment (default ``os.environ``).

    Returns
    -------
    int
        ``$OMPI_COMM_WORLD_SIZE`` or ``$PMI_SIZE``, else 1.
    """
    return _int_env(os.environ if env is None else env, SIZE_VARIABLES) or 1


def launched_rank(env=None) -> int:
    """This process's rank in the MPI launch it belongs to (0 if none).

    Parameters
    ----------
    env : mapping, optional
        Environment (default ``os.environ``).

    Returns
    -------
    int
        ``$OMPI_COMM_WORLD_RANK`` or ``$PMI_RANK``, else 0.
    """
    found = _int_env(os.environ if env is None else env, _RANK_VARIABLES, 0, "a rank")
    return found or 0


def local_size(env=None) -> int:
    """How many processes of the launch run on this node (1 if unknown).

    Parameters
    ----------
    env : mapping, optional
        Environment (default ``os.environ``).

    Returns
    -------
    int
        ``$OMPI_COMM_WORLD_LOCAL_SIZE`` or ``$MPI_LOCALNRANKS``, else 1.
    """
    return _int_env(os.environ if env is None else env, _LOCAL_SIZE_VARIABLES) or 1


class MPIExecutor(Executor):
    """Items spread over the processes of ``comm`` as they become free (with a serial
    ``local``), or the k-th item of the dispatch order on rank ``k % size``, each process
    running its share with ``local`` (local workers); outcomes exchanged with ``allgather``
    (module docstring).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator (``MPI.COMM_WORLD``).
    local : Executor, optional
        How each process runs its own share (default: in-process).
    """

    def __init__(self, comm, local: Executor | None = None):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.local = local if local is not None else SerialExecutor()
        _FAILED.clear()
        # collective: processes may have different numbers of local workers (nodes holding
        # different numbers of processes), and every process must follow the same protocol
        workers = check_in(comm, None, self.local.workers)
        self.workers = sum(workers)
        #: items are dealt out (one worker in every process): idle processes can be given a
        #: :class:`~rankmap.selection.parallel.Filler`'s work
        self.fills = max(workers) <= 1 and self.size > 1
        _ACTIVE[:] = [self]

    def run(self, fn, items, on_start=None, on_stage=None, on_done=None, order=None,
            fill=None):
        """Run every item's task; return the outcomes in the items' order (see
        :meth:`Executor.run`).

        Parameters
        ----------
        fn : callable
            ``fn(item, stage) -> value``.
        items : list
            The tasks' arguments.
        on_start, on_stage, on_done : callable, optional
            Progress callbacks, called with the item's index.
        order : list of int, optional
            Dispatch order of parallel workers.
        fill : Filler, optional
            Work for processes left without an item while others still run theirs (when
            :attr:`fills`: rank 0 hears of every item done and hands it out); every process
            then receives every value handed back, in order.

        Returns
        -------
        list of Outcome
            One per item.
        """
        order = list(order) if order is not None else list(range(len(items)))
        check_in(self.comm)      # a process that failed before this loop stops every one
        filled: list = []
        if self.fills:
            mine = self._dealt(fn, items, order, on_start, on_stage, on_done, fill, filled)
        else:
            mine = self._fixed_shares(fn, items, order, on_start, on_stage, on_done)
        here = {i for i, _ in mine}
        sent = [(i, out.value, None if out.error is None else portable_error(out.error),
                 out.ran) for i, out in mine]
        outcomes = [Outcome(ran=False) for _ in items]
        wait_for_all(self.comm)       # asleep: then the exchange finds everyone there
        for part in self.comm.allgather(sent):
            for i, value, error, ran in part:
                outcomes[i] = Outcome(value, None if error is None else restore_error(error),
                                      ran)
        if self.fills and fill is not None:
            # the values rank 0 was handed back, to every process, in the same order
            filled = self.comm.bcast(filled if self.rank == 0 else None, root=0)
            if self.rank != 0:
                for payload, value in filled:
                    fill.took(payload, value)
        if on_done:  # the others' items, so that a progress bar ends full
            for i in range(len(items)):
                if i not in here:
                    on_done(i)
        # as in a serial loop: nothing after the first failure counts
        failed = [i for i, out in enumerate(outcomes) if out.ran and out.error is not None]
        if failed:
            for i in range(failed[0] + 1, len(items)):
                outcomes[i] = Outcome(ran=False)
        return outcomes

    def _fixed_shares(self, fn, items, order, on_start, on_stage, on_done) -> list:
        """(index, outcome) of this process's items: the k-th of ``order`` on rank
        ``k % size``, run by ``local`` in the items' order (so that its first failure is the
        first of its share)."""
        mine = sorted(order[self.rank::self.size])
        position = {i: k for k, i in enumerate(mine)}
        local = self.local.run(
            fn, [items[i] for i in mine],
            on_start=(lambda k: on_start(mine[k])) if on_start else None,
            on_stage=(lambda k, text: on_stage(mine[k], text)) if on_stage else None,
            on_done=(lambda k: on_done(mine[k])) if on_done else None,
            order=[position[i] for i in order if i in position])
        return list(zip(mine, local))

    def _dealt(self, fn, items, order, on_start, on_stage, on_done, fill, filled) -> list:
        """(index, outcome) of the items this process ran, dealt out as processes become
        free (module docstring).

        The others ask rank 0 for work, sending what their last piece of work gave; rank 0
        answers with the next item of ``order`` (its front), or with ``fill``'s work while
        items still run elsewhere, or parks the request until one of those appears; between
        answers it runs the item at the back of ``order`` itself (or fills, when none is
        left). Once every item is done, every request is answered with None (stop). Rank 0
        appends every ``(payload, value)`` handed back to ``filled``.
        """
        def run_one(i):
            return self.local.run(
                fn, [items[i]],
                on_start=(lambda _k: on_start(i)) if on_start else None,
                on_stage=(lambda _k, text: on_stage(i, text)) if on_stage else None,
                on_done=(lambda _k: on_done(i)) if on_done else None)[0]

        def try_fill(payload):
            try:
                return fill.run(payload, lambda _text: None)
            except Exception:  # noqa: BLE001 - speculative work: its failure never shows
                return None

        comm, mine = self.comm, []
        if self.rank != 0:
            report = None
            while True:
                try:
                    asked = comm.isend(report, dest=0, tag=ASK_TAG)
                except Exception:  # noqa: BLE001 - a value that cannot travel stays here
                    asked = comm.isend(report[:-1] + (None,), dest=0, tag=ASK_TAG)
                # asleep until rank 0 takes it: a large report waits for rank 0's receive,
                # and a blocking send polled without pause all the while (rank 0 may be busy
                # with a long item or fill): as much CPU as the work it waited for
                nap_until(lambda: asked.test()[0])
                wait_for_message(comm, 0, GIVE_TAG)
                work = comm.recv(source=0, tag=GIVE_TAG)
                if work is None:
                    return mine
                if work[0] == "item":
                    out = run_one(work[1])
                    mine.append((work[1], out))
                    report = ("item", work[1],
                              out if fill is not None and out.error is None else None)
                else:
                    report = ("fill", try_fill(work[1]))
        from mpi4py import MPI

        front, back = 0, len(order)
        running = 0                  # items given to the others and not reported back
        parked: list[int] = []       # processes waiting for work
        filling: dict[int, object] = {}
        stopped = 0

        def hear(source):
            nonlocal running
            report = comm.recv(source=source, tag=ASK_TAG)
            if report is not None and report[0] == "item":
                running -= 1
                if fill is not None and report[2] is not None:
                    fill.item_done(items[report[1]], report[2])
            elif report is not None:
                payload = filling.pop(source)
                fill.took(payload, report[1])
                filled.append((payload, report[1]))
            parked.append(source)

        def serve():
            nonlocal front, running, stopped
            for source in parked[:]:
                if front < back:
                    comm.send(("item", order[front]), dest=source, tag=GIVE_TAG)
                    front += 1
                    running += 1
                elif running and fill is not None and (payload := fill.take()) is not None:
                    comm.send(("fill", payload), dest=source, tag=GIVE_TAG)
                    filling[source] = payload
                elif running:
                    continue     # stays parked: an item done elsewhere may give fill work
                else:
                    comm.send(None, dest=source, tag=GIVE_TAG)
                    stopped += 1
                parked.remove(source)

        status = MPI.Status()
        while stopped < self.size - 1:
            while comm.Iprobe(source=MPI.ANY_SOURCE, tag=ASK_TAG, status=status):
                hear(status.Get_source())
            serve()
            if front < back:
                back -= 1
                out = run_one(order[back])
                mine.append((order[back], out))
                if fill is not None:
                    fill.item_done(items[order[back]], out)
            elif running and fill is not None and (payload := fill.take()) is not None:
                value = _travelling(try_fill(payload))   # the others will get it too
                fill.took(payload, value)
                filled.append((payload, value))
            elif stopped < self.size - 1:
                hear(wait_for_message(comm, MPI.ANY_SOURCE, ASK_TAG))
        return mine


#: the executor of this process's command (set when made): the error path of
#: :func:`rankmap.cli.main` takes part in its next check-in (:func:`fail_collectively`)
_ACTIVE: list = []
#: this process's rank, once the processes know of a failure: no process takes part in
#: another check-in, and rank 0 alone says the error
_FAILED: list = []


def check_in(comm, failure: str | None = None, value=None) -> list:
    """Collective: every process of ``comm`` says whether it failed (and gives ``value``);
    raise :class:`RankmapError` on every process when one did.

    A process that fails on its own (a file only on another node's disk, an output it may
    not write) takes part with its ``failure`` instead of leaving the others waiting in the
    next collective. The processes wait asleep (:func:`rankmap.mpi.wait.wait_for_all`).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator.
    failure : str, optional
        This process's error message (one line), or None.
    value : object, optional
        A picklable value gathered from every process.

    Returns
    -------
    list
        Every process's ``value``, by rank (when no process failed).

    Raises
    ------
    RankmapError
        On every process, when one failed: on rank 0 its own message, else the message of
        the first process that failed, named (``process 1 of 2: ...``).
    """
    wait_for_all(comm)
    gathered = comm.allgather((failure, value))
    failed = [(rank, text) for rank, (text, _) in enumerate(gathered) if text is not None]
    if failed:
        _FAILED[:] = [comm.Get_rank()]
        if failure is not None and comm.Get_rank() == 0:
            raise RankmapError(failure)
        rank, text = failed[0]
        raise RankmapError(text if rank == 0 else
                           f"process {rank} of {comm.Get_size()}: {text}")
    return [v for _, v in gathered]


def fail_collectively(message: str, spreads: bool = True) -> bool:
    """Tell the other processes of this MPI launch that this one failed (``message``), so
    that every process stops with an error instead of waiting for this one.

    Called by the error path of :func:`rankmap.cli.main`: when this process has an
    :class:`MPIExecutor`, it takes part in the executor's next check-in (the start of a
    candidate loop, or the end of the command); with none yet and ``spreads`` (the command
    makes one first thing), in the one its making holds. Nothing when the processes already
    know of a failure, or outside an MPI launch of several processes.

    Parameters
    ----------
    message : str
        The error, on one line (what this process would print).
    spreads : bool
        The command spreads its search over the launch (``compare``, ``map``, ``evaluate``,
        ``launch``).

    Returns
    -------
    bool
        Whether this process says the error: False on the processes other than rank 0 of a
        launch whose failure was shared here (rank 0 says it, once).
    """
    if _FAILED:
        return _FAILED[0] == 0
    if _ACTIVE:
        comm = _ACTIVE.pop().comm
    else:
        try:
            if not spreads or launched_size() <= 1:
                return True
            from mpi4py import MPI
        except (ImportError, RankmapError):
            return True              # no MPI here: the error says so (mpi_executor)
        if MPI.COMM_WORLD.Get_size() != launched_size():
            return True              # each process alone (mpi4py of another MPI)
        comm = MPI.COMM_WORLD
    try:
        check_in(comm, message, 1)   # the others raise; this process prints its own error
    except RankmapError:
        pass
    return comm.Get_rank() == 0


def finish_collectively() -> None:
    """The end of a command that succeeded on this process: the check-in that a process
    failed after the last candidate loop takes part in (:func:`fail_collectively`).

    Raises
    ------
    RankmapError
        When another process failed.
    """
    if _ACTIVE and not _FAILED:
        executor = _ACTIVE.pop()
        check_in(executor.comm)


def _travelling(value):
    """``value`` when it pickles (it can reach the other processes), else None."""
    import pickle

    try:
        pickle.dumps(value)
    except Exception:  # noqa: BLE001 - anything that cannot travel is left behind
        return None
    return value


def mpi_executor(jobs: int | None = None, env=None) -> MPIExecutor | None:
    """The executor of an MPI launch, or None when this process was not started by one.

    Parameters
    ----------
    jobs : int, optional
        Worker processes of each MPI process (``--jobs``); default: the usable cores divided
        by the processes on this node.
    env : mapping, optional
        Environment (default ``os.environ``).

    Returns
    -------
    MPIExecutor or None
    """
    size = launched_size(env)
    if size <= 1:
        return None
    try:
        from mpi4py import MPI
    except ImportError:
        raise RankmapError(f"started by an MPI launcher with {size} processes, but mpi4py is "
                           "missing: pip install 'rankmap[mpi]' (or run without mpirun)") from None
    from ..selection.parallel import make_executor

    world = MPI.COMM_WORLD.Get_size()
    if world != size:
        # mpi4py built for another MPI than the launcher's (Open MPI's mpi4py under MPICH's
        # mpirun.mpich): every process is alone, would print the table and write the files
        if launched_rank(env) != 0:
            raise SystemExit(2)         # rank 0 of the launch says why, once
        library = MPI.Get_library_version().strip().splitlines()[0][:60]
        raise RankmapError(f"started by an MPI launcher with {size} processes, but mpi4py's MPI "
                           f"sees {world}: mpi4py is built for another MPI library ({library}) "
                           "than the launcher's; start rankmap with that library's launcher "
                           "(e.g. mpirun.openmpi), or without one")
    if jobs is None:
        jobs = max(1, usable_cores() // local_size(env))
    return MPIExecutor(MPI.COMM_WORLD, make_executor(jobs))


class _Piped:
    """A text stream that says it is not a terminal (everything else is the stream's)."""

    def __init__(self, stream):
        self._stream = stream

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name):
        return getattr(self._stream, name)


def quiet_unless_root(executor) -> bool:
    """On ranks other than 0 of ``executor``, send Python's stdout and stderr to /dev/null.

    Parameters
    ----------
    executor : Executor or None
        The command's executor.

    On rank 0, stdout is shown as not a terminal (Open MPI hands its processes a
    pseudo-terminal): tables come out as in a serial run piped to a file.

    Returns
    -------
    bool
        True on rank 0 (or without MPI): this process prints and writes.
    """
    if not isinstance(executor, MPIExecutor):
        return True
    if executor.rank == 0:
        # Open MPI gives rank 0 a pseudo-terminal as stdout even when mpirun's own output is
        # piped: print as to a pipe, so that the output is the serial run's
        if not isinstance(sys.stdout, _Piped):
            sys.stdout = _Piped(sys.stdout)
        return True
    sink = open(os.devnull, "w", encoding="utf-8")
    sys.stdout = sink
    sys.stderr = sink
    return False
