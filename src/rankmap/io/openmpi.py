"""Open MPI rankfile: ``rank N=host slot=S``, one line per rank.

``mpirun --rankfile FILE -n N ./app`` (Open MPI 4; Open MPI 5: ``--map-by rankfile:file=FILE``)
binds rank N to core S of ``host``. Example line: ``rank 5=nid00012 slot=1``. On a machine
whose nodes have a structure (``node=``) the slot is written ``socket:core``
(``rank 5=nid00012 slot=1:3``: core 3 of socket 1, hwloc's logical numbering, the core
within its socket), so the binding holds whatever order the OS numbers cores in; a rank of
T threads gets its T cores (``slot=1:2-3``, or ``0:7,1:0`` across sockets). Without a node
structure a rank of T threads gets cores ``slot*T`` to ``slot*T + T - 1`` (``slot=4-5``).
"""

from __future__ import annotations

import os
import re

import numpy as np

from ..allocation import Allocation
from ..errors import RankmapError
from ..mappers.base import Placement, validate_mapping
from .hostnames import check_host_name, position_lookup, rank_hosts, read_lines

_SOCKET_CORES = r"[0-9]{1,6}:[0-9]{1,6}(?:-[0-9]{1,6})?"
_LINE = re.compile(r"^rank\s+([0-9]{1,12})\s*=\s*(\S+)\s+slot\s*=\s*"
                   r"(?:([0-9]{1,12})(?:-([0-9]{1,12}))?|"
                   rf"({_SOCKET_CORES}(?:,{_SOCKET_CORES})*))$", re.ASCII)

__all__ = ["format_rankfile", "read_rankfile", "socket_core_slots"]


def socket_core_slots(slots: np.ndarray, structure, threads: int = 1) -> list[str]:
    """Open MPI ``socket:core`` slot text of every rank slot.

    Parameters
    ----------
    slots : numpy.ndarray
        Slot (rank position) within its node of every rank.
    structure : NodeStructure
        The node's packages and cores.
    threads : int
        Cores per rank: slot s takes cores s*threads .. s*threads+threads-1.

    Returns
    -------
    list of str
        ``S:C`` (one core), ``S:A-B`` (consecutive cores of one socket) or ``S:C,S:C``.
    """
    pk = np.asarray(structure.package_of_core, dtype=np.int64)
    cip = structure.core_in_package
    texts = {}
    for s in np.unique(slots).tolist():
        cores = range(s * threads, s * threads + threads)
        socks = {int(pk[c]) for c in cores}
        if len(socks) == 1:
            a, b = int(cip[cores[0]]), int(cip[cores[-1]])
            texts[s] = f"{pk[cores[0]]}:{a}" + (f"-{b}" if b != a else "")
        else:
            texts[s] = ",".join(f"{pk[c]}:{cip[c]}" for c in cores)
    return [texts[s] for s in slots.tolist()]


def format_rankfile(mapping: Placement, machine, allocation: Allocation) -> str:
    """Open MPI rankfile text, ranks in order, slot = core within the node (``socket:core``
    when the machine has a node structure).

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
        The file's text, one line per rank (``rank N=host slot=S``).
    """
    hosts = rank_hosts(mapping, machine, allocation)
    for h in dict.fromkeys(hosts):  # first bad name in rank order, the same in every run
        check_host_name(h)
    slots = mapping.slots(allocation)
    threads = int(allocation.extra.get("threads", 1))
    if machine.node_structure is not None:
        text = socket_core_slots(slots, machine.node_structure, threads)
    elif threads > 1:
        text = [f"{s * threads}-{s * threads + threads - 1}" for s in slots.tolist()]
    else:
        text = slots.tolist()
    return "".join(f"rank {r}={h} slot={s}\n" for r, (h, s) in enumerate(zip(hosts, text)))


def _slot_of_socket_cores(text: str, machine, allocation: Allocation, where: str) -> int:
    """The slot whose cores are exactly those ``S:C``, ``S:A-B`` and ``S:C,S:C`` name (every
    core a rank's, none left out: with T threads a rank holds cores slot*T .. slot*T+T-1)."""
    structure = machine.node_structure
    if structure is None:
        raise RankmapError(f"{where}: slot={text} names a socket, but the machine "
                           "has no node structure (give node= in the machine spec)")
    pk = np.asarray(structure.package_of_core, dtype=np.int64)
    cip = np.asarray(structure.core_in_package, dtype=np.int64)
    threads = int(allocation.extra.get("threads", 1))
    named = []
    for item in text.split(","):
        sock, _, cores = item.partition(":")
        lo, _, hi = cores.partition("-")
        lo, hi = int(lo), int(hi or lo)
        if hi < lo:
            raise RankmapError(f"{where}: slot={text}: core range {lo}-{hi} ends before it "
                               "starts")
        for core in range(lo, min(hi, lo + len(pk)) + 1):
            hit = np.nonzero((pk == int(sock)) & (cip == core))[0]
            if len(hit) == 0:
                raise RankmapError(f"{where}: slot={text}: no core {int(sock)}:{core} on a "
                                   f"node of {structure.n_packages} sockets "
                                   f"({structure.source})")
            named.append(int(hit[0]))
    first = min(named)
    if first % threads or sorted(named) != list(range(first, first + threads)):
        want = ("one core" if threads == 1
                else f"its {threads} cores, starting at a multiple of {threads}")
        raise RankmapError(f"{where}: slot={text} is not a rank's cores ({threads} thread"
                           f"{'s' if threads > 1 else ''} per rank: {want})")
    return first // threads


def _slot_of_cores(first: int, last: str | None, allocation: Allocation, where: str) -> int:
    """The slot of a plain ``slot=C`` or ``slot=A-B``: with T threads a rank's cores are
    ``slot*T`` to ``slot*T + T - 1``; one core names the slot it starts (with one thread,
    the slot itself)."""
    threads = int(allocation.extra.get("threads", 1))
    end = first if last is None else int(last)
    if first % threads or (last is not None and end != first + threads - 1):
        text = str(first) if last is None else f"{first}-{end}"
        want = ("one core" if threads == 1
                else f"{threads} cores starting at a multiple of {threads}")
        raise RankmapError(f"{where}: slot={text} is not a rank's cores ({threads} thread"
                           f"{'s' if threads > 1 else ''} per rank: {want})")
    return first // threads


def read_rankfile(path: str, machine, allocation: Allocation,
                  n_ranks: int | None = None) -> Placement:
    """Read a rankfile into a Placement: every rank once, known hosts, slots inside the node.

    Parameters
    ----------
    path : str
        The file.
    machine : Machine
        The machine whose nodes the file names.
    allocation : Allocation
        The allocation; every rank must land on one of its cores.
    n_ranks : int, optional
        Ranks expected (default: as many as listed).

    Returns
    -------
    Placement
        The validated placement (every rank once, known hosts, slots inside the node).
    """
    lookup = position_lookup(machine, allocation)
    cpn = allocation.cores_per_node
    seen: dict[int, int] = {}
    cores: dict[int, int] = {}
    for lineno, text in read_lines(path):
        m = _LINE.match(text)
        if not m:
            from ..validate import show
            raise RankmapError(f"{path}: line {lineno}: expected 'rank N=host slot=S' or "
                               f"'slot=SOCKET:CORE', got {show(text)}")
        rank, host = int(m.group(1)), m.group(2)
        if m.group(3) is not None:
            slot = _slot_of_cores(int(m.group(3)), m.group(4), allocation,
                                  f"{path}: line {lineno}")
        else:
            slot = _slot_of_socket_cores(m.group(5), machine, allocation,
                                         f"{path}: line {lineno}")
        if rank in seen:
            raise RankmapError(f"{path}: lines {seen[rank]} and {lineno} both place rank {rank}")
        if host not in lookup:
            raise RankmapError(f"{path}: line {lineno}: host {host!r} is not in the allocation "
                               "(written with map --names? give the same --names)")
        if slot >= cpn:
            raise RankmapError(f"{path}: line {lineno}: slot {slot} is not in 0-{cpn - 1} "
                               f"(host {host!r} has {cpn} cores)")
        seen[rank] = lineno
        cores[rank] = lookup[host] * cpn + slot
    n = len(cores)
    expected = n if n_ranks is None else n_ranks
    outside = [r for r in cores if r >= expected] if n_ranks is not None else []
    if outside:                     # named with its line, before the count
        r = min(outside, key=lambda x: seen[x])
        raise RankmapError(f"{path}: line {seen[r]}: rank {r} is outside 0-{expected - 1} "
                           f"({expected} ranks)")
    if n_ranks is not None and n != n_ranks:
        raise RankmapError(f"rankfile {path!r} places {n} ranks, the pattern has {n_ranks}")
    missing = sorted(set(range(n)) - set(cores))
    if missing:
        raise RankmapError(f"rankfile {path!r} does not place rank {missing[0]}")
    core_of_rank = np.array([cores[r] for r in range(n)], dtype=np.int64)
    # named after the file, as every format's placement (the file says what it is)
    return validate_mapping(os.path.basename(path), core_of_rank, n, allocation)
