"""The in-node step's rule under a time model: a node keeps its new order only where the time
model predicts it no slower.

The in-node step (:func:`~rankmap.mappers.domain_placement.place_in_domains`) never moves a
rank to another node, so the network's loads and finish times stay the same; with a node
structure the time model times the messages inside a node per node
(:func:`~rankmap.timing.domains.domain_memory_times`: each NUMA domain's memory and the
inter-socket links), and a phase's time is the latest of its messages. A node's new order is
kept only when, in every phase, the latest of the node's own in-node messages finishes no
later than with the mapper's cores (a dominance rule per node, so the predicted time of the
placement is never longer, up to rounding and the model's own ``tolerance``); where every
phase ties, the byte rule decides (fewer inter-socket or inter-domain bytes, neither more).
Cutting bytes between sockets is not always faster: the step may pile pairs onto one domain
whose memory then carries more than both did before.

The mappers layer cannot time anything, so the rule is built here and passed down as
``accept`` (:data:`~rankmap.mappers.domain_placement.Accept`). Every node is judged in one
pass: per phase, one call to the time model's own function for the old cores and one for the
new ones, over all the nodes whose order changed.
"""

from __future__ import annotations

import numpy as np

from ..evaluation import Evaluator
from ..metrics.node_domains import threads_per_rank
from ..timing import TimeModel, TimeOptions
from ..timing.domains import domain_memory_times

__all__ = ["in_node_options", "time_accept", "in_node_accept"]


def in_node_options(evaluator: Evaluator | None = None,
                    time_options: TimeOptions | None = None) -> TimeOptions | None:
    """The time-model settings the in-node step's rule is judged with.

    Parameters
    ----------
    evaluator : Evaluator, optional
        The evaluator the placement is ranked with: its time model's settings (None when it
        has none switched on); takes precedence over ``time_options``.
    time_options : TimeOptions, optional
        Settings when there is no evaluator (default: :class:`TimeOptions`'s, as
        :func:`~rankmap.evaluation.default_metrics` uses).

    Returns
    -------
    TimeOptions or None
        Settings of a time model that is on, else None (the byte rule applies).
    """
    if evaluator is not None:
        timed = [m.options for m in evaluator.metrics
                 if isinstance(m, TimeModel) and m.options.enabled]
        return timed[0] if timed else None
    options = time_options if time_options is not None else TimeOptions()
    return options if options.enabled else None


def time_accept(pattern, machine, allocation, options: TimeOptions | None):
    """The in-node step's ``accept`` under the time model (module docstring).

    Parameters
    ----------
    pattern : Pattern
        The pattern (every phase is judged apart).
    machine : Machine
        The machine (its ``node_structure``).
    allocation : Allocation
        The allocation (``extra["threads"]``: cores per rank).
    options : TimeOptions or None
        The time model's settings (``mem_bw``, ``socket_bw``, ``mem_shared``, ``tolerance``,
        ``retire_fraction``); None or switched off: no rule (None is returned).

    Returns
    -------
    callable or None
        ``accept(before, after, nodes, fewer_bytes)`` -> bool per node of ``nodes``: True
        where, in every phase, the latest finish of the node's in-node messages with
        ``after`` is no later than with ``before``, and either some phase's is earlier or
        ``fewer_bytes`` says the byte rule keeps it. None without a node structure or a
        time model.
    """
    structure = machine.node_structure
    if structure is None or options is None or not options.enabled:
        return None
    cpn = int(allocation.cores_per_node)
    threads = threads_per_rank(allocation)
    machine_node = np.asarray(allocation.nodes, dtype=np.int64)
    phases = [(np.asarray(ph.src, dtype=np.int64), np.asarray(ph.dst, dtype=np.int64),
               np.asarray(ph.bytes, dtype=np.float64)) for ph in pattern.phases]

    def latest(cores, src, dst, nbytes, node, where, n) -> np.ndarray:
        """Latest finish (s) of the in-node messages of each judged node."""
        core = cores % cpn * threads          # the time model's core within the node
        times = domain_memory_times(node, core[src], core[dst], nbytes, structure,
                                    options.mem_bw, options.socket_bw, options.mem_shared,
                                    options.tolerance, options.retire_fraction)
        out = np.zeros(n)
        np.maximum.at(out, where, times)
        return out

    def accept(before, after, nodes, fewer_bytes) -> np.ndarray:
        before = np.asarray(before, dtype=np.int64)
        after = np.asarray(after, dtype=np.int64)
        nodes = np.asarray(nodes, dtype=np.int64)
        n = len(nodes)
        pos = before // cpn                   # the step keeps every rank on its node
        index = np.full(len(machine_node), -1, dtype=np.int64)
        index[nodes] = np.arange(n)
        slower = np.zeros(n, dtype=bool)
        faster = np.zeros(n, dtype=bool)
        for src, dst, nbytes in phases:
            where = index[pos[src]]
            here = (pos[src] == pos[dst]) & (where >= 0)
            if not here.any():
                continue
            s, d, b, w = src[here], dst[here], nbytes[here], where[here]
            node = machine_node[pos[s]]
            old = latest(before, s, d, b, node, w, n)
            new = latest(after, s, d, b, node, w, n)
            slower |= new > old
            faster |= new < old
        return ~slower & (faster | np.asarray(fewer_bytes, dtype=bool))

    return accept


def in_node_accept(pattern, machine, allocation, evaluator: Evaluator | None = None,
                   time_options: TimeOptions | None = None):
    """The ``accept`` the in-node step is run with for a placement ranked by ``evaluator``
    (or under ``time_options``): :func:`time_accept` of :func:`in_node_options`.

    Parameters
    ----------
    pattern, machine, allocation
        The inputs.
    evaluator : Evaluator, optional
        The evaluator the placement is ranked with.
    time_options : TimeOptions, optional
        Settings when there is no evaluator (default: :class:`TimeOptions`'s).

    Returns
    -------
    callable or None
        The rule, or None for the byte rule (no node structure, time model off).
    """
    return time_accept(pattern, machine, allocation, in_node_options(evaluator, time_options))
