"""Processor sharing in closed form: flows that share one resource and nothing else."""

from __future__ import annotations

import numpy as np

__all__ = ["shared_memory_times"]


def shared_memory_times(node, nbytes, mult, mem_bw: float) -> np.ndarray:
    """Finish times (s) of flows inside nodes that share their node's memory bandwidth.

    Parameters
    ----------
    node : array of int
        The node of each flow (group of ``mult`` identical flows).
    nbytes : array of float
        Bytes of each flow.
    mult : array of float
        How many identical flows each entry stands for.
    mem_bw : float
        A node's memory bandwidth in bytes/s, shared equally by its running flows.

    Returns
    -------
    numpy.ndarray
        The finish time of each entry in seconds: exact processor sharing (a node's flows
        all start at 0; when the smallest finish, the rest share the whole bandwidth).
    """
    node = np.asarray(node, dtype=np.int64)
    nbytes = np.asarray(nbytes, dtype=np.float64)
    mult = np.asarray(mult, dtype=np.float64)
    if node.size == 0:
        return np.zeros(0)
    order = np.lexsort((nbytes, node))
    n_s, b_s, m_s = node[order], nbytes[order], mult[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = n_s[1:] != n_s[:-1]
    seg = np.cumsum(first) - 1
    # flows still running when this entry's size is reached: this one and the larger ones
    total = np.bincount(seg, weights=m_s)
    before = np.cumsum(m_s) - m_s
    start_of_seg = before[first]
    running = total[seg] - (before - start_of_seg[seg])
    prev = np.where(first, 0.0, np.concatenate([[0.0], b_s[:-1]]))
    step = (b_s - prev) * running / mem_bw
    done = np.cumsum(step)
    base = (done - step)[first]
    out = np.empty(len(order))
    out[order] = done - base[seg]
    return out
