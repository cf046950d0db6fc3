"""The ``graph`` mapper timed with one setting of ``rankmap.mappers.node_partition`` changed,
for the benchmarks that compare two ways of cutting node parts (bench_kahip_mode,
bench_two_level).
"""

from __future__ import annotations

import contextlib
import statistics
import time


@contextlib.contextmanager
def node_partition_setting(name: str, value):
    """``node_partition.<name>`` set to ``value`` inside the ``with`` block, restored after.

    Parameters
    ----------
    name : str
        The module constant (``KAHIP_MODE``, ``TWO_LEVEL_MIN_ENTRIES``).
    value
        Its value inside the block.
    """
    from rankmap.mappers import node_partition

    saved = getattr(node_partition, name)
    setattr(node_partition, name, value)
    try:
        yield
    finally:
        setattr(node_partition, name, saved)


def timed_graph(pattern, machine, allocation, evaluator, repeats: int = 1):
    """``graph``'s placement (seed 0), its median CPU time and its metrics.

    Parameters
    ----------
    pattern, machine, allocation
        The problem.
    evaluator : rankmap.evaluation.Evaluator
        Evaluates the placement.
    repeats : int
        Runs timed (the placement is the same every time).

    Returns
    -------
    cores : numpy.ndarray
        Core of every rank.
    cpu : float
        Median CPU seconds of one run.
    metrics : dict
        The evaluator's metrics of the placement.
    """
    from rankmap.mappers import Placement
    from rankmap.mappers.graph_multilevel import graph

    cpu = []
    for _ in range(repeats):
        t = time.process_time()
        cores = graph(pattern, machine, allocation, 0)
        cpu.append(time.process_time() - t)
    return cores, statistics.median(cpu), evaluator.evaluate(Placement("graph", cores)).metrics
