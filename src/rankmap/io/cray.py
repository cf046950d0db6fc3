"""Cray MPICH rank order file (MPICH_RANK_ORDER, used with MPICH_RANK_REORDER_METHOD=3).

The file lists rank numbers, comma separated (ranges ``a-b`` allowed), in the order in which
they take the job's cores: the first K listed go to the first node, the next K to the second,
and so on, K being the ranks per node (``srun --ntasks-per-node=K`` / ``aprun -N K``).
rankmap writes one line per node. Example line: ``0,1,16,17``.

Cray MPICH reads the file named ``MPICH_RANK_ORDER`` in the working directory, so a placement
must use the same number of ranks on every node it uses, and those nodes must be the first
ones of the allocation.
"""

from __future__ import annotations

import os
import re

import numpy as np

from ..allocation import Allocation
from ..errors import RankmapError
from ..mappers.base import Placement, validate_mapping
from .hostnames import read_lines

__all__ = ["USAGE", "ranks_per_node", "file_ranks_per_node", "format_rank_order",
           "read_rank_order", "ranks_per_node_in"]

USAGE = ("cp {path} MPICH_RANK_ORDER && MPICH_RANK_REORDER_METHOD=3 srun "
         "--ntasks-per-node={per_node} -n {n_ranks} ./app")
_HEADER = re.compile(r"ranks per node:\s*(\d+)", re.ASCII)


def file_ranks_per_node(path: str) -> int | None:
    """The ranks per node a rank order file says in its header (``ranks per node: 4``).

    Parameters
    ----------
    path : str
        A file :func:`format_rank_order` wrote.

    Returns
    -------
    int or None
        The count, None when the file does not say.
    """
    from ..validate import read_text
    return ranks_per_node_in(read_text(path, "rank order file"))


def ranks_per_node_in(text: str) -> int | None:
    """The ranks per node a rank order file's text says in its header.

    Parameters
    ----------
    text : str
        What :func:`format_rank_order` wrote.

    Returns
    -------
    int or None
        The count, None when the text does not say.
    """
    m = _HEADER.search(text[:4096])
    return int(m.group(1)) if m and len(m.group(1)) <= 9 else None


def ranks_per_node(mapping: Placement, allocation: Allocation) -> int:
    """The common number of ranks on every used node; error if nodes differ or are skipped.

    Parameters
    ----------
    mapping : Placement
        The placement.
    allocation : Allocation
        The allocation.

    Returns
    -------
    int
        Ranks on every used node.

    Raises
    ------
    RankmapError
        Used nodes hold different numbers of ranks, or an unused node comes before a used one
        (Cray MPICH fills nodes in allocation order).
    """
    pos = mapping.core_of_rank // allocation.cores_per_node
    counts = np.bincount(pos, minlength=allocation.n_nodes)
    used = np.nonzero(counts)[0]
    k = int(counts[used[0]])
    if (counts[used] != k).any():
        bad = int(used[np.nonzero(counts[used] != k)[0][0]])
        raise RankmapError(f"the cray rank order needs the same number of ranks on every node: "
                           f"node {int(allocation.nodes[used[0]])} has {k}, node "
                           f"{int(allocation.nodes[bad])} has {int(counts[bad])}")
    if used[-1] != len(used) - 1:
        gap = int(np.nonzero(counts == 0)[0][0])
        raise RankmapError(f"the cray rank order cannot skip allocated node "
                           f"{int(allocation.nodes[gap])}: pass --nodes with only the nodes used")
    return k


def _compress(ranks: list[int]) -> str:
    parts, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        parts.append(f"{ranks[i]}-{ranks[j]}" if j - i >= 2 else
                     ",".join(map(str, ranks[i:j + 1])))
        i = j + 1
    return ",".join(parts)


def format_rank_order(mapping: Placement, machine, allocation: Allocation) -> str:
    """MPICH_RANK_ORDER text: one line per node, its ranks in core order.

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
        The file's text, one line per node (its ranks in core order, comma separated).
    """
    mapping.check_within(allocation)     # made for another allocation: a shorter file
    k = ranks_per_node(mapping, allocation)
    order = np.argsort(mapping.core_of_rank, kind="stable").tolist()
    lines = [f"# rankmap {mapping.name}: {len(order)} ranks, ranks per node: {k} "
             "(MPICH_RANK_REORDER_METHOD=3)"]
    lines += [_compress(order[i:i + k]) for i in range(0, len(order), k)]
    return "\n".join(lines) + "\n"


def read_rank_order(path: str, machine, allocation: Allocation, n_ranks: int | None = None,
                    per_node: int | None = None) -> Placement:
    """Read an MPICH_RANK_ORDER file: the i-th listed rank takes core i % K of node i // K.

    K is ``per_node``, else the ``ranks per node`` noted in a rankmap header, else the
    allocation's cores per node.

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
    per_node : int, optional
        Ranks per node K (default: the file's header, else the cores per node).

    Returns
    -------
    Placement
        The validated placement.
    """
    if per_node is None and os.path.isfile(path):
        per_node = file_ranks_per_node(path)
    k = per_node or allocation.cores_per_node
    if k > allocation.cores_per_node:
        raise RankmapError(f"{k} ranks per node do not fit on {allocation.cores_per_node} cores")
    listed: list[int] = []
    where: list[int] = []        # the line of every listed rank, for the messages
    for lineno, text in read_lines(path):
        for item in text.replace(",", " ").split():
            from ..validate import check_limit, show
            m = re.fullmatch(r"([0-9]{1,12})(?:-([0-9]{1,12}))?", item)
            if not m:
                raise RankmapError(f"{path}: line {lineno}: bad rank {show(item, 40)}")
            lo = int(m.group(1))
            hi = int(m.group(2)) if m.group(2) else lo
            if hi < lo:
                raise RankmapError(f"{path}: line {lineno}: range {show(item, 40)} ends before "
                                   "it starts")
            check_limit(len(listed) + hi - lo + 1, "ranks", f"{path}: line {lineno}")
            listed.extend(range(lo, hi + 1))
            where.extend([lineno] * (hi - lo + 1))
    ranks = np.array(listed, dtype=np.int64)
    n = len(ranks)
    # a rank out of range or listed twice is named with its line, before the count
    expected = n if n_ranks is None else n_ranks
    out = np.nonzero(ranks >= expected)[0]
    if len(out) and n_ranks is not None:
        i = int(out[0])
        raise RankmapError(f"{path}: line {where[i]}: rank {int(ranks[i])} is outside 0-"
                           f"{expected - 1} ({expected} ranks)")
    _, first = np.unique(ranks, return_index=True)
    if len(first) < n:
        again = np.setdiff1d(np.arange(n), first)[0]
        earlier = int(np.nonzero(ranks == ranks[again])[0][0])
        raise RankmapError(f"{path}: line {where[int(again)]}: rank {int(ranks[again])} is "
                           f"listed again (first on line {where[earlier]})")
    if n_ranks is not None and n != n_ranks:
        raise RankmapError(f"rank order {path!r} lists {n} ranks, the pattern has {n_ranks}")
    if not np.array_equal(np.sort(ranks), np.arange(n)):
        seen = np.bincount(ranks, minlength=n)
        bad = np.nonzero(seen != 1)[0]
        r = int(bad[0]) if len(bad) else n
        raise RankmapError(f"rank order {path!r} lists rank {r} {int(seen[r]) if r < len(seen) else 0}"
                           " times (each of 0-" f"{n - 1} must appear once)")
    if (n + k - 1) // k > allocation.n_nodes:
        raise RankmapError(f"rank order {path!r} needs {(n + k - 1) // k} nodes at {k} per node, "
                           f"the allocation has {allocation.n_nodes}")
    i = np.arange(n)
    core_of_rank = np.empty(n, dtype=np.int64)
    core_of_rank[ranks] = (i // k) * allocation.cores_per_node + i % k
    # named after the file, as every format's placement (the file says what it is)
    return validate_mapping(os.path.basename(path), core_of_rank, n, allocation)
