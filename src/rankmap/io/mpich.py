"""MPICH Hydra machinefile in rank order: ``host:count`` lines.

``mpiexec -f FILE -n N`` gives the first ``count`` ranks to the first line's host, the next
ones to the next line, and so on; consecutive ranks on one host are merged into one line.
Example line: ``nid00012:4``.
"""

from __future__ import annotations

import os

from ..allocation import Allocation
from ..errors import RankmapError
from ..validate import is_digits
from ..mappers.base import Placement
from .hostnames import check_host_name, mapping_from_hosts, rank_hosts, read_lines

__all__ = ["format_machinefile", "read_machinefile", "split_host_caveat"]


def format_machinefile(mapping: Placement, machine, allocation: Allocation) -> str:
    """Hydra machinefile: runs of consecutive ranks on one host as ``host:count``.

    Parameters
    ----------
    mapping : Placement
        The placement written.
    machine : Machine
        The machine (coordinates, default host names).
    allocation : Allocation
        The allocation the placement refers to.

    Returns
    -------
    str
        The file's text, one line per run of consecutive ranks on one host (``host:count``).
    """
    hosts = rank_hosts(mapping, machine, allocation)
    lines: list[str] = []
    run_host, run = None, 0
    for h in hosts + [None]:
        if h == run_host:
            run += 1
            continue
        if run_host is not None:
            lines.append(f"{run_host}:{run}")
        if h is not None:
            check_host_name(h)
        run_host, run = h, 1
    return "\n".join(lines) + "\n"


def split_host_caveat(text: str) -> str | None:
    """What a machinefile cannot give its ranks when a host holds ranks apart (its name on
    several lines): Hydra starts one proxy per line, so those ranks share no memory and its
    ``-bind-to core`` binds each line's ranks from the node's first core.

    Parameters
    ----------
    text : str
        The machinefile (:func:`format_machinefile`'s text).

    Returns
    -------
    str or None
        One line saying so, naming the first such host and its lines; None when every host
        is on one line.
    """
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        host = line.rpartition(":")[0] or line
        if host in seen:
            return (f"host {host} holds ranks apart (lines {seen[host]} and {lineno}): Hydra "
                    "starts a process group per line, so these ranks share no memory and "
                    "-bind-to core binds each line's ranks from the first core; a placement "
                    "with each node's ranks consecutive, or Open MPI with --emit openmpi, "
                    "avoids it")
        seen[host] = lineno
    return None


def read_machinefile(path: str, machine, allocation: Allocation,
                     n_ranks: int | None = None) -> Placement:
    """Read a Hydra machinefile (``host`` or ``host:count`` lines) into a Placement.

    Parameters
    ----------
    path : str
        The file.
    machine : Machine
        The machine whose nodes the file names.
    allocation : Allocation
        The allocation; every rank must land on one of its cores.
    n_ranks : int, optional
        Ranks expected (default: the sum of the counts).

    Returns
    -------
    Placement
        Ranks in file order on the next free cores of their hosts.
    """
    hosts, where = [], []
    for lineno, text in read_lines(path):
        host, sep, count = text.partition(":")
        host = host.strip()
        from ..validate import check_limit, show
        if not host or len(text.split()) != 1:
            raise RankmapError(f"{path}: line {lineno}: expected host or host:count, got "
                               f"{show(text)}")
        n = 1
        if sep:
            n = int(count) if is_digits(count) and len(count) <= 12 else 0
            if n <= 0:
                raise RankmapError(f"{path}: line {lineno}: bad rank count {show(count, 40)}")
            check_limit(len(hosts) + n, "ranks", f"{path}: line {lineno}")
        hosts.extend([host] * n)
        where.extend([f"{path}: line {lineno}"] * n)
    return mapping_from_hosts(hosts, where, machine, allocation,
                              f"machinefile {os.path.basename(path)!r}", n_ranks,
                              label=os.path.basename(path))
