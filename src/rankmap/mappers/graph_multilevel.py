"""``graph``: multilevel mapping of any communication graph (nodes first, then ranks).

1. **Node parts.** The weighted communication graph (bytes between ranks, all phases) is cut
   by KaHIP's k-way partitioner into one part per node, exactly ``cores_per_node`` ranks each
   (:mod:`rankmap.mappers.node_partition`): the bytes between parts are the bytes that will
   cross the network, and KaHIP minimises them.
2. **Parts onto nodes.** The quotient graph of the parts is mapped onto the allocated nodes
   by dual recursive bisection of both sides guided by hop distances
   (:mod:`rankmap.mappers.network_bisection`).
3. **Refinement on nodes, then on ranks** (:mod:`rankmap.mappers.swap_refine`): vectorised
   hop-bytes swap passes, then swaps aimed at the busiest link, evaluated exactly on the
   machine's link loads under its routing (busiest link bytes, then sum of squared link
   bytes). First whole node parts move (node-level flows: bytes between parts), then single
   ranks between nodes (with one core per node the two are the same, and the node stage
   gets both stages' proposals).

Of the placement after step 2 and the refined ones, the one with the lowest (busiest link
bytes over all phases, hop-bytes) is returned, so refinement never makes the result worse than
its start. Work is bounded by pass and proposal counts (:data:`HOP_PASSES`,
:data:`NODE_PROPOSALS`, :data:`RANK_PROPOSALS`), never by seconds; the result depends only on
the inputs and the seed. With fewer ranks than cores, a compact set of nodes (the first of a
recursive bisection order of the allocation) is used, as ``rcb`` does, and the refinement may
move parts onto the free nodes.
"""

from __future__ import annotations

import numpy as np

from .geometry import bisect_order, check_seed, neighbour_csr
from .graph_partition import communication_graph
from .network_bisection import map_graph_to_nodes
from .node_partition import node_parts, quotient_graph
from .swap_refine import UnitPlacement, hop_swap_passes, link_swaps, placement_key, unit_phases

__all__ = ["graph", "multilevel_cores", "HOP_PASSES", "NODE_PROPOSALS", "RANK_PROPOSALS"]

#: vectorised hop-bytes swap passes (nodes, then ranks)
HOP_PASSES = 8
#: busiest-link swap proposals on node parts
NODE_PROPOSALS = 1000
#: busiest-link swap proposals on single ranks
RANK_PROPOSALS = 1000


def multilevel_cores(pattern, machine, allocation, seed: int = 0, hop_passes: int = HOP_PASSES,
                     node_proposals: int = NODE_PROPOSALS,
                     rank_proposals: int = RANK_PROPOSALS) -> np.ndarray:
    """Core of every rank by the multilevel graph mapping (module docstring).

    Parameters
    ----------
    pattern : rankmap.patterns.Pattern
        The communication (any pattern; the grid is not used).
    machine : rankmap.machines.Machine
        The machine (geometry, hop distances, routing).
    allocation : rankmap.allocation.Allocation
        The nodes to place on.
    seed : int
        Seeds KaHIP and the refinement's choices.
    hop_passes, node_proposals, rank_proposals : int
        Work bounds of the refinement (0 turns a stage off). With one core per node the
        node stage also gets the rank stage's proposals (there is no rank stage then).

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    seed = check_seed(seed)
    n = pattern.n_ranks
    cpn = allocation.cores_per_node
    g = communication_graph(pattern)
    if g.nnz == 0:
        return np.arange(n, dtype=np.int64)
    routing = machine.check_routing(None)      # refine takes a router as a value
    nbrs = neighbour_csr(machine, allocation)
    k = -(-n // cpn)
    part = node_parts(g, cpn, seed)
    q = quotient_graph(g, part, k)
    geo = machine.geometry(allocation.nodes).astype(np.float64)
    used = np.sort(bisect_order(geo)[:k]) if k < allocation.n_nodes \
        else np.arange(allocation.n_nodes, dtype=np.int64)
    pos_of_part = map_graph_to_nodes(q, used, machine, allocation, seed)

    def cores_of(pos_parts):
        order = np.argsort(part, kind="stable")
        first = np.searchsorted(part[order], np.arange(k))
        slot = np.empty(n, dtype=np.int64)
        slot[order] = np.arange(n) - first[part[order]]
        return pos_parts[part] * cpn + slot

    candidates = [cores_of(pos_of_part)]
    if cpn == 1:
        # one core per node: a node part is a rank and the rank stage below does not run,
        # so its proposals go to the node stage (the same work bound for any cores per node)
        node_proposals += rank_proposals
    place = UnitPlacement(pos_of_part, allocation.n_nodes, 1, allocation)
    if hop_passes:
        hop_swap_passes(q, place, machine, nbrs, seed, hop_passes)
    if node_proposals:
        link_swaps(unit_phases(pattern, part, k), place, machine, routing, nbrs, seed,
                   node_proposals, n_units=k)
    cores = cores_of(place.pos_of)
    candidates.append(cores)
    if cpn > 1:
        rplace = UnitPlacement(cores, allocation.n_cores, cpn, allocation)
        if hop_passes:
            hop_swap_passes(g, rplace, machine, nbrs, seed + 1, hop_passes)
        if rank_proposals:
            ranks = np.arange(n, dtype=np.int64)
            link_swaps(unit_phases(pattern, ranks, n), rplace, machine, routing, nbrs,
                       seed + 1, rank_proposals, n_units=n)
        candidates.append(rplace.pos_of.copy())
    keys = [placement_key(c, pattern, machine, allocation, routing) for c in candidates]
    best = min(range(len(candidates)), key=lambda i: (keys[i], -i))
    return candidates[best]


def graph(pattern, machine, allocation, seed):
    """Multilevel mapping of the communication graph (see module docstring).

    Parameters
    ----------
    pattern : Pattern
        The pattern whose ranks are placed.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocated nodes; ranks go on their cores only.
    seed : int
        Seeds KaHIP and the refinement's choices.

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    return multilevel_cores(pattern, machine, allocation, seed)
