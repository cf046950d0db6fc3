"""Running the tasks of the candidate loop in order, in-process or on forked worker processes.

An executor runs ``fn(item, stage)`` for every item of a list and returns one
:class:`Outcome` per item, in the items' order; ``stage(text)`` lets a task say what it is
doing (``"building"``, ``"routing"``) for the progress bar. Whatever runs where, the outcomes
are those of the serial loop: results are placed by index, and when tasks fail the error of the
FIRST failing item (in order) is the one kept — items after it are not started (serially they
would never run).

* :class:`SerialExecutor` runs everything in this process (``--jobs 1``).
* :class:`ForkExecutor` forks ``jobs`` worker processes that inherit everything already built
  (evaluator, routers, numba's compiled kernels: nothing is pickled on the way in); each task
  sends back only its result (a placement and its metrics and link loads) over a pipe. Workers
  ignore Ctrl-C: the parent stops them (SIGTERM) and re-raises KeyboardInterrupt. A worker that
  dies (killed, out of memory) is one clear error, not a hang.

A :class:`Filler` gives workers that would otherwise wait (every item started, the last
ones still running) work of its own choosing: speculative work, chosen in this process from
the items done so far, whose results only ever save work later. :class:`ForkExecutor` runs
it (a worker still busy with it when the last item ends is stopped: nothing waits for it), and
so does the MPI executor with one worker per process (:mod:`rankmap.mpi.spread`); executors
that cannot (:attr:`Executor.fills` False) never ask.

With ``--jobs`` left at its default (every core) a job too small to repay forking (less than
:data:`SERIAL_WORK` flows and ranks over all its tasks, see :meth:`Executor.for_work`) runs in
this process: forking and loading the kernels again in each worker would cost more than the
tasks. An explicit ``--jobs N`` always forks.

The MPI executor (tasks spread over the processes of ``mpirun``) builds on the same
:class:`Outcome` contract in :mod:`rankmap.mpi.spread`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
import os
import sys
import signal
import traceback
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import RankmapError

__all__ = ["Outcome", "Filler", "Executor", "SerialExecutor", "ForkExecutor", "usable_cores",
           "make_executor", "first_error", "portable_error", "restore_error", "MAX_JOBS",
           "SERIAL_WORK", "death_cause"]

#: with the default --jobs, a job of less work than this (tasks x (flows + ranks) of the
#: pattern) runs in this process instead of on forked workers
SERIAL_WORK = 100_000

#: --jobs above this is refused (a typo such as --jobs 4096 would fork thousands of copies)
MAX_JOBS = 512

Task = Callable[[Any, Callable[[str], None]], Any]


def death_cause(exitcode) -> str:
    """Why a worker process ended, in words, from its exit code.

    Parameters
    ----------
    exitcode : int or None
        ``multiprocessing.Process.exitcode``: negative for the signal that killed it.

    Returns
    -------
    str
        E.g. ``"killed by SIGKILL; out of memory? try a smaller --jobs"``,
        ``"killed by SIGXCPU: CPU time limit reached"`` or ``"exit status 3"``.
    """
    if exitcode is None:
        return "it did not report an exit status"
    if exitcode >= 0:
        return f"exit status {exitcode}"
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        return f"killed by signal {-exitcode}"
    hint = {"SIGKILL": "; out of memory? try a smaller --jobs",
            "SIGXCPU": ": CPU time limit reached (ulimit -t)",
            "SIGSEGV": ": a crash in compiled code",
            "SIGBUS": ": a crash in compiled code"}.get(name, "")
    return f"killed by {name}{hint}"


@dataclass
class Outcome:
    """What one task gave: its value, or the exception it raised; ``ran`` is False for items
    left out after an earlier item failed."""

    value: Any = None
    error: BaseException | None = None
    ran: bool = True


class Filler(ABC):
    """Speculative work for idle workers (see the module docstring).

    :meth:`item_done`, :meth:`take` and :meth:`took` run in the process that called
    :meth:`Executor.run` (under MPI, rank 0; the other processes get every :meth:`took`
    afterwards, in rank 0's order); :meth:`run` where there is room: in a worker forked when
    :meth:`Executor.run` started (it sees the filler as it was then), in another MPI process,
    or in the calling process itself. A filled task's failure is never raised: :meth:`took`
    gets None.
    """

    @abstractmethod
    def item_done(self, item, outcome: "Outcome") -> None:
        """Note that an item is done (once per item whose outcome reaches this process, in
        completion order).

        Parameters
        ----------
        item : object
            The item (an element of :meth:`Executor.run`'s ``items``).
        outcome : Outcome
            What its task gave.
        """

    @abstractmethod
    def take(self):
        """The next piece of work for an idle worker, or None when there is none now.

        Returns
        -------
        object or None
            A picklable payload for :meth:`run`.
        """

    @abstractmethod
    def run(self, payload, stage: Callable[[str], None]):
        """Do one piece of work (in a worker).

        Parameters
        ----------
        payload : object
            What :meth:`take` returned.
        stage : callable
            Progress report (ignored by the executors).

        Returns
        -------
        object
            A picklable result for :meth:`took`.
        """

    @abstractmethod
    def took(self, payload, value) -> None:
        """Receive the result of a piece of work.

        Parameters
        ----------
        payload : object
            What :meth:`take` returned.
        value : object or None
            What :meth:`run` returned; None when it failed or could not be sent back.
        """


class _RemoteTraceback(Exception):
    """The traceback of an exception raised in another process (shown as its cause)."""

    def __init__(self, text: str):
        super().__init__(text)

    def __str__(self) -> str:
        return "\n" + self.args[0]


def portable_error(exc: BaseException) -> tuple[BaseException, str | None]:
    """``exc`` in a form that can be pickled to another process (see :func:`restore_error`).

    A :class:`~rankmap.errors.RankmapError` travels as is (its one-line message is the
    contract); any other exception keeps its type when it pickles, else becomes a
    RuntimeError with its text, and travels with the text of its traceback.

    Parameters
    ----------
    exc : BaseException
        The exception raised by a task.

    Returns
    -------
    (BaseException, str or None)
        A picklable exception and its traceback text (None for a RankmapError).
    """
    import pickle

    if isinstance(exc, RankmapError):
        return RankmapError(str(exc)), None
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        out = pickle.loads(pickle.dumps(exc))
    except Exception:
        out = RuntimeError(f"{type(exc).__name__}: {exc}")
    return out, text


def restore_error(packed: tuple[BaseException, str | None]) -> BaseException:
    """The exception of :func:`portable_error`, with the remote traceback as its cause.

    Parameters
    ----------
    packed : (BaseException, str or None)
        What :func:`portable_error` returned, after the trip.

    Returns
    -------
    BaseException
    """
    exc, text = packed
    if text is not None:
        exc.__cause__ = _RemoteTraceback(text)
    return exc


def first_error(outcomes: list[Outcome]) -> None:
    """Raise the exception of the first failed outcome (in order), if any.

    Parameters
    ----------
    outcomes : list of Outcome
        Outcomes in the items' order.
    """
    for out in outcomes:
        if out.ran and out.error is not None:
            raise out.error


class Executor(ABC):
    """Runs ``fn(item, stage)`` for every item; see the module docstring."""

    #: how many tasks can run at the same time
    workers: int = 1
    #: whether :meth:`run` gives idle workers a :class:`Filler`'s work
    fills: bool = False

    def for_work(self, work: int) -> "Executor":
        """The executor to run a job of ``work`` units on (this one, unless it says otherwise).

        Parameters
        ----------
        work : int
            Size of the whole job: tasks x (flows + ranks) of the pattern.

        Returns
        -------
        Executor
            ``self``; a :class:`ForkExecutor` made for the default ``--jobs`` gives a
            :class:`SerialExecutor` below :data:`SERIAL_WORK`.
        """
        return self

    @abstractmethod
    def run(self, fn: Task, items: list, on_start: Callable[[int], None] | None = None,
            on_stage: Callable[[int, str], None] | None = None,
            on_done: Callable[[int], None] | None = None,
            order: list[int] | None = None, fill: Filler | None = None) -> list[Outcome]:
        """Run every item's task; return the outcomes in the items' order.

        Parameters
        ----------
        fn : callable
            ``fn(item, stage) -> value``; ``stage(text)`` reports progress.
        items : list
            The tasks' arguments.
        on_start, on_stage, on_done : callable, optional
            Called (in this process) with the item's index when it starts, when it reports a
            stage (with the text), and when it is done.
        order : list of int, optional
            The order in which parallel workers pick up items (longest first keeps the
            workers busy); it never changes the outcomes.
        fill : Filler, optional
            Work for idle workers (only when :attr:`fills`); never changes the outcomes.

        Returns
        -------
        list of Outcome
            One per item; items after the first failing one are not run.
        """


class SerialExecutor(Executor):
    """Every task in this process, in order (``--jobs 1``)."""

    workers = 1

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
            Ignored: no worker is ever idle.

        Returns
        -------
        list of Outcome
            One per item.
        """
        outcomes = [Outcome(ran=False) for _ in items]
        for i, item in enumerate(items):
            if on_start:
                on_start(i)
            try:
                value = fn(item, (lambda text, i=i: on_stage(i, text)) if on_stage
                           else _no_stage)
            except Exception as exc:  # noqa: BLE001 - re-raised by first_error, in order
                outcomes[i] = Outcome(error=exc)
                if on_done:
                    on_done(i)
                break
            outcomes[i] = Outcome(value)
            if on_done:
                on_done(i)
        return outcomes


def _no_stage(text: str) -> None:
    return None


def _worker_main(conn, fn, items, parent: int, fill: "Filler | None" = None) -> None:
    """Loop of a forked worker: receive an index, run its task, send back the outcome (or a
    ``("fill", payload)``: run ``fill.run`` on it, send back its value, None on failure).

    ``parent`` is the forking process's pid: a worker whose parent died before it asked to
    go with it (the death signal is only sent for a death after the request) leaves at once.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent handles Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # and stops us with SIGTERM
    if sys.platform.startswith("linux"):  # and if it is killed outright, we go too
        try:
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent:
            os._exit(1)
    while True:
        try:
            i = conn.recv()
        except EOFError:
            return
        if i is None:
            return
        if isinstance(i, tuple):                 # ("fill", payload)
            try:
                value = fill.run(i[1], _no_stage)
            except Exception:  # noqa: BLE001 - speculative work: its failure never shows
                value = None
            try:
                conn.send(("fill", None, value))
            except Exception:  # noqa: BLE001 - the value does not pickle
                conn.send(("fill", None, None))
            continue

        def stage(text, i=i):
            conn.send(("stage", i, text))
        try:
            msg = ("ok", i, fn(items[i], stage))
        except Exception as exc:  # noqa: BLE001 - sent to the parent
            msg = ("error", i, portable_error(exc))
        try:
            conn.send(msg)
        except Exception as exc:  # noqa: BLE001 - the value does not pickle
            conn.send(("error", i, portable_error(exc)))


class ForkExecutor(Executor):
    """Tasks on ``jobs`` forked worker processes (see the module docstring).

    Parameters
    ----------
    jobs : int
        Number of worker processes (>= 1); never more than the number of items.
    """

    fills = True

    def __init__(self, jobs: int, serial_below: int = 0):
        self.workers = _check_jobs(jobs)
        self.serial_below = serial_below

    def for_work(self, work: int) -> Executor:
        """A :class:`SerialExecutor` for a job below ``serial_below`` units, else ``self``.

        Parameters
        ----------
        work : int
            Size of the whole job: tasks x (flows + ranks) of the pattern.

        Returns
        -------
        Executor
            Where to run the job; the outcomes are the same either way.
        """
        return SerialExecutor() if work < self.serial_below else self

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
            Work for workers left without an item; a worker still filling when the last item
            is done is stopped.

        Returns
        -------
        list of Outcome
            One per item.
        """
        n = len(items)
        if self.workers <= 1 or n <= 1:
            return SerialExecutor().run(fn, items, on_start, on_stage, on_done)
        queue = list(order) if order is not None else list(range(n))
        if sorted(queue) != list(range(n)):
            raise ValueError("order must be a permutation of the items' indices")
        import multiprocessing as mp
        from multiprocessing.connection import wait

        ctx = mp.get_context("fork")
        outcomes = [Outcome(ran=False) for _ in items]
        stop = n                        # no item after `stop` is started
        busy: dict = {}                 # connection -> index being run
        filling: dict = {}              # connection -> payload of the fill it runs
        idle: list = []                 # connections with nothing to run
        procs = []
        sys.stdout.flush()              # a forked child must not flush the parent's buffers
        sys.stderr.flush()
        try:
            for _ in range(min(self.workers, n)):
                here, there = ctx.Pipe()
                proc = ctx.Process(target=_worker_main,
                                   args=(there, fn, items, os.getpid(), fill), daemon=True)
                proc.start()
                there.close()
                procs.append((proc, here))

            def give(conn) -> None:
                while queue:
                    i = queue.pop(0)
                    if i < stop:  # items after the first failure are never needed
                        conn.send(i)
                        busy[conn] = i
                        if on_start:
                            on_start(i)
                        return
                payload = fill.take() if fill is not None and stop == n else None
                if payload is None:
                    idle.append(conn)
                else:
                    conn.send(("fill", payload))
                    filling[conn] = payload

            for proc, conn in procs:
                give(conn)
            while busy:
                for conn in wait(list(busy) + list(filling)):
                    try:
                        kind, j, payload = conn.recv()
                    except (EOFError, OSError):
                        proc = next(p for p, c in procs if c is conn)
                        proc.join(1)
                        what = (repr(items[busy[conn]]) if conn in busy
                                else "work for an idle worker")
                        raise RankmapError(
                            f"the worker process running {what} died "
                            f"({death_cause(proc.exitcode)})") from None
                    if kind == "stage":
                        if on_stage:
                            on_stage(j, payload)
                        continue
                    if kind == "fill":
                        fill.took(filling.pop(conn), payload)
                        give(conn)
                        continue
                    del busy[conn]
                    if kind == "ok":
                        outcomes[j] = Outcome(payload)
                    else:
                        outcomes[j] = Outcome(error=restore_error(payload))
                        stop = min(stop, j)
                    if fill is not None:
                        fill.item_done(items[j], outcomes[j])
                    if on_done:
                        on_done(j)
                    give(conn)
                    for other in idle[:]:        # a finished item may give them work
                        idle.remove(other)
                        give(other)
            # an item after the first failure may have finished meanwhile: drop it, as the
            # serial loop would never have run it
            for k in range(stop + 1, n):
                outcomes[k] = Outcome(ran=False)
            return outcomes
        finally:
            for proc, conn in procs:
                if conn in filling:      # speculative work nobody waits for
                    proc.terminate()
                    continue
                try:
                    conn.send(None)
                except OSError:
                    pass
            for proc, conn in procs:
                proc.join(0.5)
                if proc.is_alive():
                    proc.terminate()
                    proc.join(5)
                conn.close()


def _check_jobs(jobs) -> int:
    """``jobs`` as a worker count in [1, :data:`MAX_JOBS`] (RankmapError otherwise)."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS:
        raise RankmapError(f"bad --jobs {jobs!r}: must be a whole number from 1 to {MAX_JOBS}")
    return jobs


def usable_cores() -> int:
    """The number of cores this process may run on (its CPU affinity), at least 1.

    Returns
    -------
    int
        ``len(os.sched_getaffinity(0))`` (``os.cpu_count()`` where affinity is unknown).
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def make_executor(jobs: int | None = None) -> Executor:
    """The local executor for ``--jobs``: serial for 1, forked workers above.

    Parameters
    ----------
    jobs : int, optional
        Worker processes; None means every usable core (:func:`usable_cores`), and then jobs
        of less than :data:`SERIAL_WORK` run in this process (:meth:`Executor.for_work`).

    Returns
    -------
    Executor
    """
    if jobs is None:
        jobs = usable_cores()
        return SerialExecutor() if jobs == 1 else ForkExecutor(jobs, serial_below=SERIAL_WORK)
    jobs = _check_jobs(jobs)
    return SerialExecutor() if jobs == 1 else ForkExecutor(jobs)
