"""Waiting for the other processes of a communicator (or for a message) without spinning.

MPI libraries wait in blocking collectives (``bcast``, ``allgather``) by polling without
pause: an Open MPI process waiting 3 s in ``allgather`` used 3 s of CPU, taken from the
processes (and their worker processes) still at work on the same node.
:func:`wait_for_all` waits asleep instead; the collective that follows then finds every
process there. :func:`wait_for_message` does the same before a receive.
"""

from __future__ import annotations

import time

__all__ = ["wait_for_all", "wait_for_message", "nap_until", "WAIT_POLL_S"]

#: the longest sleep between two checks of a process waiting for the others (s); the first
#: checks come sooner (1/16 of it, doubling), so a short wait costs little
WAIT_POLL_S = 0.008


def wait_for_all(comm) -> None:
    """Return once every process of ``comm`` has called this, sleeping while it waits.

    A non-blocking barrier (``Ibarrier``) is tested between sleeps of at most
    :data:`WAIT_POLL_S`: the time waited changes nothing but when this returns.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator.
    """
    nap_until(comm.Ibarrier().Test)


def wait_for_message(comm, source: int, tag: int) -> int:
    """Return once a message from ``source`` with ``tag`` has arrived (not received yet),
    sleeping while it waits, as :func:`wait_for_all` does.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator.
    source : int
        Rank of the sender, or ``MPI.ANY_SOURCE``.
    tag : int
        The message's tag.

    Returns
    -------
    int
        The sender's rank.
    """
    from mpi4py import MPI

    status = MPI.Status()
    nap_until(lambda: comm.Iprobe(source=source, tag=tag, status=status))
    return status.Get_source()


def nap_until(done) -> None:
    """Call ``done()`` until it is true, sleeping 1/16 of :data:`WAIT_POLL_S` after the
    first false answer, twice as long after each next one, at most :data:`WAIT_POLL_S`.

    Parameters
    ----------
    done : callable
        ``done() -> bool``, e.g. an MPI request's ``Test``.

    Returns
    -------
    None
    """
    pause = WAIT_POLL_S / 16
    while not done():
        time.sleep(pause)
        pause = min(2 * pause, WAIT_POLL_S)
