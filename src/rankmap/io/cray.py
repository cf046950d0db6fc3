"""Cray MPICH rank order file (MPICH_RANK_ORDER, used with MPICH_RANK_REORDER_METHOD=3).

The file lists rank numbers, comma separated (ranges ``a-b`` allowed), in the order in which
they take the job's cores: the first K listed go to the first node, the next K to the second,
and so on, K being the ranks per node (``srun --ntasks-per-node=K`` / ``aprun -N K``).
rankmap writes one line per node. Example line: ``0,1,16,17``.

Cray MPICH reads the file named ``MPICH_RANK_ORDER`` in the working directory. It gives K
ranks to each node in allocation order, so a placement must use the first nodes of the
allocation, K ranks on each but the last (which may hold fewer): ``map --emit cray`` and
``launch`` place the ranks on those first nodes (:func:`rank_order_allocation`). The header
comments say K and the nodes the file was written for (``# rankmap nodes: 3,17-19``), which
the reader checks against the allocation it is given.
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
           "read_rank_order", "ranks_per_node_in", "rank_order_allocation",
           "rank_order_problem", "rank_order_pick", "uneven_advice", "node_ranges",
           "file_nodes"]

USAGE = ("cp {path} MPICH_RANK_ORDER && MPICH_RANK_REORDER_METHOD=3 srun "
         "--ntasks-per-node={per_node} -n {n_ranks} ./app")
_HEADER = re.compile(r"ranks per node:\s*(\d+)", re.ASCII)
#: the header comment lines that list the nodes a rank order was written for
_NODES = re.compile(r"#\s*rankmap nodes:\s*([0-9,\-\s]*)$", re.ASCII)
#: characters of node ranges on one header comment line
_NODES_WIDTH = 88


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


def rank_order_problem(mapping: Placement, allocation: Allocation) -> str | None:
    """Why Cray MPICH cannot be given this placement by a rank order, or None when it can.

    Cray MPICH gives K ranks to each node in allocation order (``aprun -N K``), the last node
    used the rest: the placement must use the allocation's first nodes, with the same number
    of ranks on each but the last, which may hold fewer.

    Parameters
    ----------
    mapping : Placement
        The placement.
    allocation : Allocation
        The allocation its cores refer to.

    Returns
    -------
    str or None
        One line naming the first node that breaks the rule; None when the placement can
        be written.
    """
    pos = mapping.core_of_rank // allocation.cores_per_node
    counts = np.bincount(pos, minlength=allocation.n_nodes)
    used = np.nonzero(counts)[0]
    k = int(counts[used[0]])
    if used[-1] != len(used) - 1:
        gap = int(np.nonzero(counts == 0)[0][0])
        return (f"the cray rank order cannot skip allocated node {int(allocation.nodes[gap])} "
                "(Cray MPICH fills the allocation's nodes in order): place the ranks on the "
                "allocation's first nodes")
    bad = np.nonzero(counts[used[:-1]] != k)[0]
    if len(bad) or counts[used[-1]] > k:
        b = int(used[bad[0]]) if len(bad) else int(used[-1])
        return (f"the cray rank order needs the same number of ranks on every node but the "
                f"last: node {int(allocation.nodes[used[0]])} has {k}, node "
                f"{int(allocation.nodes[b])} has {int(counts[b])}")
    return None


def ranks_per_node(mapping: Placement, allocation: Allocation) -> int:
    """The ranks on every used node but the last (which may hold fewer); error if the
    placement cannot be written as a rank order (:func:`rank_order_problem`).

    Parameters
    ----------
    mapping : Placement
        The placement.
    allocation : Allocation
        The allocation.

    Returns
    -------
    int
        Ranks on every used node but the last (the launcher's ranks per node).

    Raises
    ------
    RankmapError
        Used nodes but the last hold different numbers of ranks, the last holds more, or an
        unused node comes before a used one (Cray MPICH fills nodes in allocation order).
    """
    problem = rank_order_problem(mapping, allocation)
    if problem is not None:
        raise RankmapError(problem)
    return int(np.bincount(mapping.core_of_rank // allocation.cores_per_node).max())


def rank_order_allocation(allocation: Allocation, n_ranks: int) -> Allocation:
    """The nodes a rank order of ``n_ranks`` ranks runs on: the allocation's first
    ``ceil(n_ranks / cores_per_node)`` nodes (Cray MPICH fills the nodes in allocation order,
    ``cores_per_node`` ranks a node), with their names and settings.

    Parameters
    ----------
    allocation : Allocation
        The job's allocation (``--nodes``, or the batch job's hosts).
    n_ranks : int
        Ranks placed; at most ``allocation.n_cores``.

    Returns
    -------
    Allocation
        ``allocation`` itself when every node is needed, else its first nodes.
    """
    need = -(-int(n_ranks) // allocation.cores_per_node)
    if need >= allocation.n_nodes:
        return allocation
    import dataclasses
    names = None if allocation.names is None else list(allocation.names[:need])
    return dataclasses.replace(allocation, nodes=allocation.nodes[:need].copy(), names=names)


def rank_order_pick(candidates, allocation: Allocation, per_node: int | None = None):
    """The best of ``candidates`` (evaluations best first, as ``auto`` ranks them) that a
    rank order can hold, and why the first cannot when it cannot.

    Parameters
    ----------
    candidates : list of Evaluation
        Evaluated placements, best first (``Comparison.candidates``).
    allocation : Allocation
        The allocation their cores refer to.
    per_node : int, optional
        Ranks a node the launcher command gives (``aprun -N``): a candidate must put that
        many on every node but the last.

    Returns
    -------
    pick : Evaluation or None
        The first candidate :func:`rank_order_problem` accepts; None when none is.
    problem : str or None
        Why the first candidate cannot be written; None when it can.
    """
    first = None
    for i, e in enumerate(candidates):
        problem = rank_order_problem(e.mapping, allocation)
        if problem is None and per_node is not None:
            k = int(np.bincount(e.mapping.core_of_rank // allocation.cores_per_node).max())
            if k != per_node:
                problem = (f"it puts {k} ranks on a node, the launcher command {per_node}")
        if i == 0:
            first = problem
        if problem is None:
            return e, first
    return None, first


def uneven_advice(problem: str, name: str, per_node: int) -> str:
    """The message for a placement a rank order cannot hold, with what does.

    Parameters
    ----------
    problem : str
        :func:`rank_order_problem`'s line.
    name : str
        The placement asked for (``--mapping``).
    per_node : int
        Ranks a node (the allocation's cores per node).

    Returns
    -------
    str
        One line: the problem, then ``--mapping auto`` (the best placement a rank order
        holds) or a number of ranks that fills the nodes.
    """
    return (f"{problem} ({name}): --mapping auto picks the best placement a rank order can "
            f"hold; or start a multiple of {per_node} ranks")


def node_ranges(nodes) -> str:
    """Node ids as ranges in their order: ``3,17-19,40``.

    Parameters
    ----------
    nodes : array_like of int
        Node ids, in allocation order.

    Returns
    -------
    str
        Comma-separated ids, runs of consecutive increasing ids as ``a-b``.
    """
    ids = [int(n) for n in np.asarray(nodes).tolist()]
    parts, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(f"{ids[i]}-{ids[j]}" if j > i else str(ids[i]))
        i = j + 1
    return ",".join(parts)


def _node_comment(nodes) -> list[str]:
    """``# rankmap nodes: ...`` lines listing ``nodes`` (ranges, lines of bounded width)."""
    lines, line = [], ""
    for part in node_ranges(nodes).split(","):
        if line and len(line) + 1 + len(part) > _NODES_WIDTH:
            lines.append(line)
            line = ""
        line = f"{line},{part}" if line else part
    lines.append(line)
    return [f"# rankmap nodes: {text}" for text in lines]


def file_nodes(text: str) -> list[int] | None:
    """The node ids a rank order's ``# rankmap nodes:`` comments list, in order.

    Parameters
    ----------
    text : str
        The file's text.

    Returns
    -------
    list of int or None
        The nodes the file was written for; None when it does not say (files written before
        rankmap recorded them, or by hand).

    Raises
    ------
    RankmapError
        A nodes comment that is not a list of ids and ranges.
    """
    found = None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("#") or "rankmap nodes:" not in line:
            continue
        m = _NODES.fullmatch(line)
        items = m.group(1).replace(" ", "").split(",") if m else [""]
        found = [] if found is None else found
        for item in items:
            lo, _, hi = item.partition("-")
            if not lo.isdigit() or not (hi.isdigit() or not hi) or len(item) > 40:
                from ..validate import show
                raise RankmapError(f"bad '# rankmap nodes:' comment {show(line, 60)}: expected "
                                   "node ids and ranges such as 3,17-19")
            found.extend(range(int(lo), int(hi or lo) + 1))
            if len(found) > 1 << 31:
                raise RankmapError("bad '# rankmap nodes:' comment: too many nodes")
    return found


def _check_file_nodes(path: str, text: str, allocation: Allocation) -> None:
    """Refuse an allocation whose first nodes are not those the file was written for."""
    nodes = file_nodes(text)
    if nodes is None:
        return
    given = allocation.nodes[:len(nodes)].tolist()
    if given == nodes:
        return
    ranges = node_ranges(nodes)
    shown = ranges if len(ranges) <= 80 else ranges[:77] + "..."
    now = node_ranges(given)
    where = f"the allocation given starts {now if len(now) <= 40 else now[:37] + '...'}"
    give = (f"give --nodes {ranges}" if len(ranges) <= 80 else
            "give --nodes with the nodes its '# rankmap nodes:' comments list")
    raise RankmapError(f"{path}: written for nodes {shown} (its '# rankmap nodes:' comment), "
                       f"{where}: {give}")


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
    used = -(-len(order) // k)
    lines = [f"# rankmap {mapping.name}: {len(order)} ranks, ranks per node: {k} "
             "(MPICH_RANK_REORDER_METHOD=3)"]
    lines += _node_comment(allocation.nodes[:used])
    lines += [_compress(order[i:i + k]) for i in range(0, len(order), k)]
    return "\n".join(lines) + "\n"


def read_rank_order(path: str, machine, allocation: Allocation, n_ranks: int | None = None,
                    per_node: int | None = None) -> Placement:
    """Read an MPICH_RANK_ORDER file: the i-th listed rank takes core i % K of node i // K.

    K is ``per_node``, else the ``ranks per node`` noted in a rankmap header, else the
    allocation's cores per node. A file whose ``# rankmap nodes:`` comments list the nodes it
    was written for is refused unless the allocation starts with them (the file names no
    nodes: read on other nodes it would say another placement).

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
    whole = ""
    if os.path.isfile(path):
        from ..validate import read_text
        whole = read_text(path, "rank order file")
    if per_node is None:
        per_node = ranks_per_node_in(whole)
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
    _check_file_nodes(path, whole, allocation)    # (map records them in a comment)
    if (n + k - 1) // k > allocation.n_nodes:
        raise RankmapError(f"rank order {path!r} needs {(n + k - 1) // k} nodes at {k} per node, "
                           f"the allocation has {allocation.n_nodes}")
    i = np.arange(n)
    core_of_rank = np.empty(n, dtype=np.int64)
    core_of_rank[ranks] = (i // k) * allocation.cores_per_node + i % k
    # named after the file, as every format's placement (the file says what it is)
    return validate_mapping(os.path.basename(path), core_of_rank, n, allocation)
