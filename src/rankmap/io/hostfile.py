"""Plain hostfile: one host name per line, line r is the host of rank r.

SimGrid's ``smpirun -hostfile FILE`` reads this layout (``host1`` ... in rank order), and it is
also what Slurm's SLURM_HOSTFILE holds (see :mod:`rankmap.io.slurm`). Example line: ``nid00012``.

Host names are the allocation's (``--nodes`` given as names, or ``--names``); otherwise they
are the names of rankmap's SimGrid platform (``rankmap simgrid platform``), ``node-<id>``, so
``smpirun -platform platform.xml -hostfile FILE`` finds every host.
"""

from __future__ import annotations

import os

from ..allocation import Allocation
from ..errors import RankmapError
from ..mappers.base import Placement
from .hostnames import check_host_name, mapping_from_hosts, rank_hosts, read_lines

#: host names of rankmap's SimGrid platforms: ``node-<id>`` (a cluster's prefix + radical).
SIMGRID_HOST_PREFIX = "node-"

__all__ = ["SIMGRID_HOST_PREFIX", "simgrid_names", "host_lines", "format_hostfile", "read_hostfile"]


def simgrid_names(allocation: Allocation) -> Allocation:
    """``allocation`` with SimGrid platform host names (``node-<id>``) unless it has names.

    Parameters
    ----------
    allocation : Allocation

    Returns
    -------
    Allocation
    """
    if allocation.names is not None:
        return allocation
    import dataclasses
    return dataclasses.replace(allocation, names=[f"{SIMGRID_HOST_PREFIX}{n}"
                                                  for n in allocation.nodes.tolist()])


def format_hostfile(mapping: Placement, machine, allocation: Allocation) -> str:
    """One host per line in rank order (no header: some readers reject comments); default
    names are the SimGrid platform's (``node-<id>``).

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
        The file's text, one line per rank (its host name).
    """
    return host_lines(mapping, machine, simgrid_names(allocation), fmt="hostfile")


def host_lines(mapping: Placement, machine, allocation: Allocation,
               fmt: str | None = None) -> str:
    """One host per line in rank order, with the allocation's host names.

    Parameters
    ----------
    mapping : Placement
        The placement.
    machine : Machine
        The machine (its default names when the allocation has none).
    allocation : Allocation
        The allocation the placement's cores refer to.
    fmt : str, optional
        The format written (``slurm``, ``hostfile``): a host name its reader cannot hold is
        refused (:func:`rankmap.io.hostnames.check_host_name`).

    Returns
    -------
    str
        The host of rank r on line r, lines ending in ``\\n``.
    """
    hosts = rank_hosts(mapping, machine, allocation)
    for h in dict.fromkeys(hosts):  # first bad name in rank order, the same in every run
        check_host_name(h, fmt)
    return "\n".join(hosts) + "\n"


def read_hostfile(path: str, machine, allocation: Allocation, n_ranks: int | None = None,
                  what: str = "hostfile") -> Placement:
    """Read a one-host-per-line file back into a Placement (errors name the file and line).

    Parameters
    ----------
    path : str
        The file.
    machine : Machine
        The machine whose nodes the file names.
    allocation : Allocation
        The allocation; every rank must land on one of its cores.
    n_ranks : int, optional
        Ranks expected (default: one per line).
    what : str
        What the file is, for error messages.

    Returns
    -------
    Placement
        Rank r on the next free core of the host on line r.
    """
    lines = read_lines(path)
    hosts, where = [], []
    for lineno, text in lines:
        if len(text.split()) != 1:
            raise RankmapError(f"{path}: line {lineno}: expected one host name, got {text!r}")
        hosts.append(text)
        where.append(f"{path}: line {lineno}")
    if what == "hostfile" and allocation.names is None:  # SimGrid names or the machine's
        sg = simgrid_names(allocation)
        known = set(sg.names)
        if all(h in known for h in hosts):
            allocation = sg
    return mapping_from_hosts(hosts, where, machine, allocation,
                              f"{what} {os.path.basename(path)!r}", n_ranks,
                              label=os.path.basename(path))
