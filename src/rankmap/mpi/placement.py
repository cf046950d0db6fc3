"""Assign new ranks to the processes of a running job from a placement (no MPI needed).

The launcher has already fixed which processes run on which node. A placement computed on the
allocation formed by those nodes says on which node each *new* rank should run; new rank r is
then given to a free process on node ``node_of_rank[r]`` (the node's processes in old-rank
order, the rank's core order on that node). When nodes hold different numbers of processes the
placement is computed as if every node had as many cores as the fullest one, and ranks that
land on a node with no free process left take the remaining free processes in old-rank order.

Under ``auto`` (the default) a reorder is never worse than none: the assignment and the
launcher's own order are both evaluated under the machine's routing, and the launcher's order
is kept unless the assignment ranks before it (with 14 processes on nodes of 4, 3, 4, 3 the
fixed-up ``auto`` pick, ``TXYZ``, was predicted 3x slower than the launcher's order). A named
placement is applied as asked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..allocation import Allocation
from ..errors import RankmapError
from ..evaluation import Evaluator
from ..mappers import Placement
from ..metrics import ranking_key
from ..selection import build_placement, is_auto

__all__ = ["Assignment", "job_allocation", "assign_ranks"]


@dataclass
class Assignment:
    """Result of :func:`assign_ranks`.

    ``new_rank[p]`` is the new rank of process p (old rank p), -1 when the pattern has fewer
    ranks than processes and p is not used. ``allocation`` lists the job's nodes in order of
    first appearance; ``moved`` counts ranks that could not go to their placed node;
    ``kept_order`` says the launcher's order was kept because the placement was not better.
    """

    new_rank: np.ndarray
    mapping: str
    allocation: Allocation
    moved: int
    kept_order: bool = False


def job_allocation(proc_nodes: np.ndarray) -> Allocation:
    """The allocation of a job whose process p runs on machine node ``proc_nodes[p]``.

    Parameters
    ----------
    proc_nodes : numpy.ndarray of int
        Machine node id of every process, by old rank.

    Returns
    -------
    Allocation
        The job's nodes in order of their first process; cores per node = most processes on
        one node; ``extra["processes"]`` holds the number of processes on each node.
    """
    proc_nodes = np.asarray(proc_nodes, dtype=np.int64)
    uniq, first, counts = np.unique(proc_nodes, return_index=True, return_counts=True)
    order = np.argsort(first)
    return Allocation(uniq[order], int(counts.max()), source="MPI job",
                      extra={"processes": counts[order]})


def assign_ranks(pattern, machine, proc_nodes: np.ndarray, mapping: str = "auto",
                 seed: int = 0) -> Assignment:
    """New rank of every process so that the pattern's ranks follow the placement ``mapping``.

    Parameters
    ----------
    pattern : Pattern
        The communication pattern (at most one rank per process).
    machine : Machine
        The machine the job runs on.
    proc_nodes : numpy.ndarray of int
        Machine node id of every process, by old rank.
    mapping : str, optional
        Name of the placement (``auto`` picks the best candidate).
    seed : int, optional
        Seed of the randomised placements.

    Returns
    -------
    Assignment
        New rank of every process, the placement applied (``auto`` named after its pick:
        ``auto (refine:rcb)``), the job's allocation and the number of ranks that could not go
        to their placed node.

    Raises
    ------
    RankmapError
        When the placement cannot be built (unknown mapping, pattern larger than the job), or
        a node runs more processes than the machine's nodes have cores.
    """
    proc_nodes = np.asarray(proc_nodes, dtype=np.int64)
    alloc = job_allocation(proc_nodes)
    if alloc.cores_per_node > machine.cores_per_node:
        # the machine description is not this job's (or the launch oversubscribes): a
        # placement for cores that do not exist would be applied silently
        busiest = int(alloc.nodes[int(np.argmax(alloc.extra["processes"]))])
        raise RankmapError(f"node {busiest} runs {alloc.cores_per_node} processes, more than "
                           f"the {machine.cores_per_node} core(s) a node of {machine.spec} "
                           "has: is the machine description this job's?")
    placed = build_placement(mapping, pattern, machine, alloc, seed, name_pick=True)
    cpn = alloc.cores_per_node
    capacity = alloc.extra["processes"]
    n = pattern.n_ranks
    # processes grouped by allocation position, in old-rank order inside a node
    proc_pos = alloc.position_of_node(proc_nodes)
    procs = np.argsort(proc_pos, kind="stable")
    proc_start = np.concatenate([[0], np.cumsum(capacity)[:-1]])
    # ranks grouped by target node, in core order
    ranks = np.argsort(placed.core_of_rank, kind="stable")
    target = placed.core_of_rank[ranks] // cpn
    per_target = np.bincount(target, minlength=alloc.n_nodes)
    rank_start = np.concatenate([[0], np.cumsum(per_target)[:-1]])
    within = np.arange(n) - rank_start[target]
    fits = within < capacity[target]
    new_rank = np.full(len(proc_nodes), -1, dtype=np.int64)
    chosen = procs[proc_start[target[fits]] + within[fits]]
    new_rank[chosen] = ranks[fits]
    left_ranks = ranks[~fits]
    if len(left_ranks):
        free = np.nonzero(new_rank < 0)[0][:len(left_ranks)]
        new_rank[free] = np.sort(left_ranks)
    # the launcher's order: rank r stays on process r
    order = np.where(np.arange(len(proc_nodes)) < n, np.arange(len(proc_nodes)), -1)
    if np.array_equal(new_rank, order) or not is_auto(mapping):
        return Assignment(new_rank, placed.name, alloc, int(len(left_ranks)))
    # each process's core: its node's position, then its place among the node's processes
    local = np.empty(len(proc_nodes), dtype=np.int64)
    local[procs] = np.arange(len(procs)) - np.repeat(proc_start, capacity)
    core = proc_pos * cpn + local
    ev = Evaluator(machine, alloc, pattern)

    def score(ranks_of_process):
        used = ranks_of_process >= 0
        core_of_rank = np.empty(n, dtype=np.int64)
        core_of_rank[ranks_of_process[used]] = core[used]
        return ranking_key(ev.evaluate(Placement("job", core_of_rank)).metrics)

    if score(order) <= score(new_rank):     # a tie keeps the launcher's order too
        return Assignment(order, f"the launcher's order ({placed.name} predicted no faster)",
                          alloc, 0, kept_order=True)
    return Assignment(new_rank, placed.name, alloc, int(len(left_ranks)))
