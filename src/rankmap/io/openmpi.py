"""Open MPI rankfile: ``rank N=host slot=S``, one line per rank.

``mpirun --rankfile FILE -n N ./app`` (Open MPI 4; Open MPI 5: ``--map-by rankfile:file=FILE``)
binds rank N to core S of ``host``. Example line: ``rank 5=nid00012 slot=1``.
"""

from __future__ import annotations

import os
import re

import numpy as np

from ..allocation import Allocation
from ..errors import RankmapError
from ..mappers.base import Mapping, validate_mapping
from .hostnames import check_host_name, position_lookup, rank_hosts, read_lines

_LINE = re.compile(r"^rank\s+(\d{1,12})\s*=\s*(\S+)\s+slot\s*=\s*(\d{1,12})$")


def format_rankfile(mapping: Mapping, machine, allocation: Allocation) -> str:
    """Open MPI rankfile text, ranks in order, slot = core within the node."""
    hosts = rank_hosts(mapping, machine, allocation)
    for h in set(hosts):
        check_host_name(h)
    slots = mapping.slots(allocation).tolist()
    return "".join(f"rank {r}={h} slot={s}\n" for r, (h, s) in enumerate(zip(hosts, slots)))


def read_rankfile(path: str, machine, allocation: Allocation,
                  n_ranks: int | None = None) -> Mapping:
    """Read a rankfile into a Mapping: every rank once, known hosts, slots inside the node."""
    lookup = position_lookup(machine, allocation)
    cpn = allocation.cores_per_node
    seen: dict[int, int] = {}
    cores: dict[int, int] = {}
    for lineno, text in read_lines(path):
        m = _LINE.match(text)
        if not m:
            from ..validate import show
            raise RankmapError(f"{path}: line {lineno}: expected 'rank N=host slot=S', "
                               f"got {show(text)}")
        rank, host, slot = int(m.group(1)), m.group(2), int(m.group(3))
        if rank in seen:
            raise RankmapError(f"{path}: lines {seen[rank]} and {lineno} both place rank {rank}")
        if host not in lookup:
            raise RankmapError(f"{path}: line {lineno}: host {host!r} is not in the allocation")
        if slot >= cpn:
            raise RankmapError(f"{path}: line {lineno}: slot {slot} is not in 0-{cpn - 1} "
                               f"(host {host!r} has {cpn} cores)")
        seen[rank] = lineno
        cores[rank] = lookup[host] * cpn + slot
    n = len(cores)
    if n_ranks is not None and n != n_ranks:
        raise RankmapError(f"rankfile {path!r} places {n} ranks, the pattern has {n_ranks}")
    missing = sorted(set(range(n)) - set(cores))
    if missing:
        raise RankmapError(f"rankfile {path!r} does not place rank {missing[0]}")
    core_of_rank = np.array([cores[r] for r in range(n)], dtype=np.int64)
    return validate_mapping(f"rankfile {os.path.basename(path)!r}", core_of_rank, n, allocation)
