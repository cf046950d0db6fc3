"""``mueller-resch``: best of the axis permutations by average hops (seed 003, section 3).

The allocated nodes are sorted by their coordinates (``machine.geometry``) under every
permutation of the axes (first axis of the permutation fastest); rank r takes the r-th core of
that order (cores of a node first). The permutation with the lowest average hop count over all
flows of the pattern wins; ties go to the first permutation in lexicographic order. The allocation's own order (the
default, ``inorder``) is the starting candidate, so the result is never worse than it.
"""

from __future__ import annotations

import itertools

import numpy as np

from .geometry import average_hops, cores_of_node_order

__all__ = ["MAX_AXES", "permutation_orders", "mueller_resch"]

#: more axes than this are not permuted exhaustively (6! = 720 orders is the limit)
MAX_AXES = 6


def permutation_orders(machine, allocation):
    """Every axis-permuted order of the allocated nodes.

    Parameters
    ----------
    machine : Machine
        The machine (its geometry coordinates are sorted).
    allocation : Allocation
        The allocation.

    Yields
    ------
    perm : tuple of int
        The axes, most significant last (at most :data:`MAX_AXES` are permuted).
    cores : numpy.ndarray
        int64 allocation cores, node by node in that order.
    """

    g = machine.geometry(allocation.nodes)
    ndim = g.shape[1]
    for perm in itertools.permutations(range(min(ndim, MAX_AXES))):
        keys = [g[:, a] for a in perm] + [g[:, a] for a in range(len(perm), ndim)]
        node_order = np.lexsort(keys)
        yield perm, cores_of_node_order(node_order, allocation)


def mueller_resch(pattern, machine, allocation, seed):
    """The axis-permuted node order with the lowest average hops (see module docstring).

    Parameters
    ----------
    pattern : Pattern
        The pattern whose ranks are placed.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocated nodes; ranks go on their cores only.
    seed : int
        Unused (deterministic).

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    best = np.arange(pattern.n_ranks, dtype=np.int64)          # the allocation's own order
    best_hops = average_hops(best, pattern, machine, allocation)
    for _perm, cores in permutation_orders(machine, allocation):
        cand = cores[:pattern.n_ranks]
        h = average_hops(cand, pattern, machine, allocation)
        if h < best_hops - 1e-12:
            best, best_hops = cand, h
    return best
