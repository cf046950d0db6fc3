"""Plain hostfile: one host name per line, line r is the host of rank r.

SimGrid's ``smpirun -hostfile FILE`` reads this layout (``host1`` ... in rank order), and it is
also what Slurm's SLURM_HOSTFILE holds (see :mod:`rankmap.io.slurm`). Example line: ``nid00012``.
"""

from __future__ import annotations

import os

from ..allocation import Allocation
from ..errors import RankmapError
from ..mappers.base import Mapping
from .hostnames import check_host_name, mapping_from_hosts, rank_hosts, read_lines


def format_hostfile(mapping: Mapping, machine, allocation: Allocation) -> str:
    """One host per line in rank order (no header: some readers reject comments)."""
    hosts = rank_hosts(mapping, machine, allocation)
    for h in set(hosts):
        check_host_name(h)
    return "\n".join(hosts) + "\n"


def read_hostfile(path: str, machine, allocation: Allocation, n_ranks: int | None = None,
                  what: str = "hostfile") -> Mapping:
    """Read a one-host-per-line file back into a Mapping (errors name the file and line)."""
    lines = read_lines(path)
    hosts, where = [], []
    for lineno, text in lines:
        if len(text.split()) != 1:
            raise RankmapError(f"{path}: line {lineno}: expected one host name, got {text!r}")
        hosts.append(text)
        where.append(f"{path}: line {lineno}")
    return mapping_from_hosts(hosts, where, machine, allocation,
                              f"{what} {os.path.basename(path)!r}", n_ranks)
