"""Swap refinement of a placement on the real objective, on nodes or on ranks, bounded by work.

*Units* (node-sized parts of ranks, or single ranks) occupy *positions* (allocation nodes, or
allocation cores; ``slots`` positions per node). Two kinds of passes improve a placement:

``hop_swap_passes``
    Vectorised over all units at once: every unit proposes a swap with the unit on (or near)
    the node of its most stretched partner (largest bytes x hops); the hop-bytes gain of every
    proposal is computed exactly with ``machine.hop_distance``; the best proposals that touch
    neither each other nor each other's partners are applied together (a numba kernel picks
    them). At most ``passes`` passes.

``link_swaps``
    The busiest link of the worst phase is attacked directly: the flows that cross it
    (the hop-distance test ``h(s, a) + 1 + h(b, d) = h(s, d)`` of minimal routes, then the
    router's own paths of those few flows, so that only flows it really sends over the link
    are taken) propose to move one of their ends next to the other end, onto a position from
    which the router no longer sends that flow over the link (a move that keeps the flow on
    it cannot relieve the link, and is not evaluated; for routers whose routes depend on the
    whole phase, UGAL, both checks are left to the exact evaluation); every proposal is evaluated
    exactly by re-routing only the flows of the moved units (``machine.route`` with the old
    routes subtracted) and kept only when it lowers (busiest link bytes over all phases, then
    the sum of squared link bytes, which spreads the load and with it the predicted time).
    At most ``max_proposals`` proposals. On a torus or mesh under dimension order, and on a
    k-ary n-tree under d-mod-k, with sums that are exact (:mod:`rankmap.mappers.exact_grid`),
    the flows over the link are found and offered their targets, and the swaps evaluated, in
    compiled calls (:mod:`rankmap.kernels.link_swap_grid`): the same swaps.

Both are deterministic for a seed and bounded by counts of passes and proposals, never by
seconds; neither ever makes its own objective worse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..kernels.flows import end_flow_csr
from ..kernels.jit import kernel
from ..kernels.link_swap_grid import attack_link_grid, flows_over_slot
from ..kernels.refine_grid import swap_step
from ..kernels.torus import position_coords, side_gain_grid
from ..machines import GridMachine
from ..routing import Router, router_for
from ..routing.groups import grouped_loads
from .exact_grid import (grid_steps_apply, hop_geometry, link_slots, tree_steps_apply,
                         whole_sums_exact)

if TYPE_CHECKING:  # scipy.sparse loads in the functions that build matrices
    import scipy.sparse as sp

__all__ = ["UnitPlacement", "hop_swap_passes", "link_swaps", "hop_bytes", "unit_phases",
           "placement_key", "flows_over_link", "side_gain", "side_gain_vectorised",
           "symmetric_bytes", "partner_entries"]


class UnitPlacement:
    """Units on positions: ``pos_of[u]``, ``unit_at[p]`` (-1 free), node of a position.

    Parameters
    ----------
    pos_of : numpy.ndarray
        Position of every unit (distinct, in 0..n_positions-1).
    n_positions : int
        Number of positions.
    slots : int
        Positions per allocation node (1 for nodes, cores_per_node for cores).
    allocation : rankmap.allocation.Allocation
        Gives the machine node of a position (``nodes[pos // slots]``).
    """

    def __init__(self, pos_of: np.ndarray, n_positions: int, slots: int, allocation):
        self.pos_of = np.asarray(pos_of, dtype=np.int64).copy()
        self.unit_at = np.full(n_positions, -1, dtype=np.int64)
        self.unit_at[self.pos_of] = np.arange(len(self.pos_of))
        self.slots = int(slots)
        self.alloc_nodes = allocation.nodes

    def node(self, pos: np.ndarray) -> np.ndarray:
        """Machine node of positions.

        Parameters
        ----------
        pos : numpy.ndarray
            Positions (allocation nodes, or cores when ``slots`` > 1).

        Returns
        -------
        numpy.ndarray
            int64 machine node id of every position.
        """
        return self.alloc_nodes[np.asarray(pos) // self.slots]

    def swap(self, u: int, p: int) -> int:
        """Put unit u on position p; the unit there (if any) takes u's old position.

        Parameters
        ----------
        u : int
            The unit moved.
        p : int
            Its new position.

        Returns
        -------
        int
            The unit that was on p (now on u's old position), or -1 when p was free.
        """

        q = int(self.pos_of[u])
        v = int(self.unit_at[p])
        self.pos_of[u] = p
        self.unit_at[p] = u
        self.unit_at[q] = v
        if v >= 0:
            self.pos_of[v] = q
        return v


def hop_bytes(w: sp.csr_matrix, place: UnitPlacement, machine) -> float:
    """Hop-bytes of symmetric unit graph ``w`` (each pair counted once) under ``place``.

    Parameters
    ----------
    w : scipy.sparse.csr_matrix
        Symmetric bytes between units.
    place : UnitPlacement
        Where the units are.
    machine : rankmap.machines.Machine
        Gives ``hop_distance``.

    Returns
    -------
    float
        Sum over unit pairs of bytes x hops (bytes).
    """
    import scipy.sparse as sp
    coo = sp.triu(w, k=1).tocoo()
    n = place.node(place.pos_of)
    return float(np.dot(coo.data, machine.hop_distance(n[coo.row], n[coo.col])))


@kernel
def _pick_independent(order, u, v, indptr, indices, n_units):
    """Proposals (indices into u/v, in ``order``) that share no unit and no partner."""
    locked = np.zeros(n_units, dtype=np.bool_)
    out = np.empty(len(order), dtype=np.int64)
    m = 0
    for i in order:
        a, b = u[i], v[i]
        if locked[a] or (b >= 0 and locked[b]):
            continue
        ok = True
        for k in range(indptr[a], indptr[a + 1]):
            if locked[indices[k]]:
                ok = False
                break
        if ok and b >= 0:
            for k in range(indptr[b], indptr[b + 1]):
                if locked[indices[k]]:
                    ok = False
                    break
        if not ok:
            continue
        out[m] = i
        m += 1
        locked[a] = True
        if b >= 0:
            locked[b] = True
        for k in range(indptr[a], indptr[a + 1]):
            locked[indices[k]] = True
        if b >= 0:
            for k in range(indptr[b], indptr[b + 1]):
                locked[indices[k]] = True
    return out[:m]


@kernel(nogil=True)
def _row_argmax(indptr, values):
    """Entry of the largest value of every CSR row (the first of equals; -1 for an empty
    row)."""
    n = indptr.shape[0] - 1
    out = np.full(n, -1, dtype=np.int64)
    for r in range(n):
        for k in range(indptr[r], indptr[r + 1]):
            if out[r] < 0 or values[k] > values[out[r]]:
                out[r] = k
    return out


@kernel(nogil=True)
def _flows_on_a_shortest_path(src, dst, at, hops, to_a, from_b):
    """Flows (in order) that leave their node and can cross link a -> b on a shortest path:
    ``to_a[at[src]] + 1 + from_b[at[dst]] == hops``, in one pass without temporaries."""
    out = np.empty(src.shape[0], dtype=np.int64)
    m = 0
    for f in range(src.shape[0]):
        h = hops[f]
        if h > 0 and to_a[at[src[f]]] + 1 + from_b[at[dst[f]]] == h:
            out[m] = f
            m += 1
    return out[:m]


def flows_over_link(router, src, dst, at, hops, alloc_nodes, link: int,
                    unit_flows=None) -> np.ndarray:
    """The flows that ``router`` sends over ``link``, found without routing them all where
    the router allows.

    When the router narrows down the nodes such flows start or end at
    (:meth:`~rankmap.routing.Router.ends_through`: dimension order on a torus or mesh) and
    ``unit_flows`` is given, only the flows of the units on those nodes are looked at.
    Otherwise, when the router tells crossings cheaply
    (:attr:`~rankmap.routing.Router.cheap_crosses`: trees, whose switch ends are not nodes),
    every flow is asked; else a flow can cross link a -> b on a shortest route only when
    ``h(s, a) + 1 + h(b, d)`` is its hop count (one pass over the flows with the distances
    of the allocation's nodes to the link's ends). Each way the router's own paths of
    the flows then decide. Where every route is a shortest one (tori, meshes, trees) all
    give the same flows. A dragonfly's minimal routes also spread over parallel global
    links reached by longer local detours, which the hop test leaves out: there the search
    attacks only the link's flows on shortest paths (on ``xc:groups=4``, 4 of a random
    link's 185), not a wrong load (every kept move is judged on the router's full loads).
    Asking every flow instead was measured on the 7 dragonfly problems of
    benchmarks/bench_refine_dragonfly.py: ``graph`` took up to 11x the CPU time and its
    placement's predicted time was worse on 3 (up to 35%, the README's
    ``lulesh:8x8x16`` example, whose ``auto`` pick got 31% slower) and better on 1, so the
    narrower attack stays.

    Parameters
    ----------
    router : Router
        The routing (not one whose routes follow the whole phase, UGAL).
    src, dst : numpy.ndarray
        int64 unit (rank) at each end of every flow.
    at : numpy.ndarray
        int64 allocation position (node index into ``alloc_nodes``) of every unit.
    hops : numpy.ndarray
        Hop count of every flow under the current placement (links).
    alloc_nodes : numpy.ndarray
        int64 machine node of every allocation position.
    link : int
        The directed link.
    unit_flows : tuple of numpy.ndarray, optional
        CSR (indptr, flow ids) of the flows touching each unit.

    Returns
    -------
    numpy.ndarray
        int64 indices of the flows (in order) with bytes on ``link``.
    """
    ends = router.ends_through(link) if unit_flows is not None else None
    if ends is None and router.cheap_crosses:
        # every flow asked directly: the hop-distance test below needs nodes at the link's
        # ends, and a fat tree's switch ends are not
        hit = router.crosses(alloc_nodes[at[src]], alloc_nodes[at[dst]], link)
        return np.flatnonzero(hit).astype(np.int64)
    if ends is None:
        cand = _could_cross(router.machine, src, dst, at, hops, alloc_nodes, link)
        if len(cand) == 0:
            return cand
        return cand[router.crosses(alloc_nodes[at[src[cand]]], alloc_nodes[at[dst[cand]]],
                                   link)]
    side, nodes = ends
    on = np.zeros(router.machine.n_nodes, dtype=bool)
    on[nodes] = True
    units = np.flatnonzero(on[alloc_nodes[at]])
    indptr, fl = unit_flows
    rows, flat = partner_entries(indptr, units)
    cand = fl[flat]
    # each flow once: from the row of the unit at its start (or end), not its other end's
    cand = cand[(src[cand] if side == "src" else dst[cand]) == units[rows]]
    if len(cand) == 0:
        return cand
    hit = cand[router.crosses(alloc_nodes[at[src[cand]]], alloc_nodes[at[dst[cand]]], link)]
    return np.unique(hit)                   # in order (a unit's flow to itself came twice)


def _could_cross(machine, src, dst, at, hops, alloc_nodes, link: int) -> np.ndarray:
    """Flows (in order) that can cross ``link`` on a minimal route (the hop-distance test of
    :func:`flows_over_link`)."""
    a_node, b_node = int(machine.link_src[link]), int(machine.link_dst[link])
    to_a = machine.hop_distance(alloc_nodes, np.full(len(alloc_nodes), a_node))
    from_b = machine.hop_distance(np.full(len(alloc_nodes), b_node), alloc_nodes)
    return _flows_on_a_shortest_path(src, dst, at, hops, to_a, from_b)


def partner_entries(indptr: np.ndarray, units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every CSR entry of every unit's row, flattened, in order.

    Parameters
    ----------
    indptr : numpy.ndarray
        Row pointers of a CSR matrix over units (e.g. :func:`symmetric_bytes`).
    units : numpy.ndarray
        int64 units; -1 stands for no unit (no entries).

    Returns
    -------
    rows : numpy.ndarray
        int64 index into ``units`` of every entry.
    flat : numpy.ndarray
        int64 position of every entry in the matrix's ``indices`` and ``data``.
    """
    ok = units >= 0
    uu = np.where(ok, units, 0)
    deg = np.where(ok, np.diff(indptr)[uu], 0)
    rows = np.repeat(np.arange(len(units)), deg)
    offs = np.arange(int(deg.sum())) - np.repeat(np.cumsum(deg) - deg, deg)
    return rows, np.repeat(np.where(ok, indptr[uu], 0), deg) + offs


def side_gain(w, units, other, p_from, p_to, place, machine):
    """Hop-bytes saved by moving each of ``units`` from ``p_from`` to ``p_to``.

    For each proposal i: the sum over partners x of ``units[i]`` (x != ``other[i]``, the unit
    it swaps with, whose distance a swap keeps) of w * (h(p_from, x) - h(p_to, x)).

    Parameters
    ----------
    w : scipy.sparse.csr_matrix
        Bytes between units, both directions (:func:`symmetric_bytes`).
    units, other : numpy.ndarray
        int64 unit moving and the unit it swaps with (-1: none); a proposal whose unit is
        -1 saves 0.
    p_from, p_to : numpy.ndarray
        int64 positions the unit leaves and takes.
    place : object
        ``pos_of`` (position of every unit) and ``node(positions)`` (their machine nodes),
        e.g. a :class:`UnitPlacement`.
    machine : Machine
        Gives ``hop_distance``.

    Returns
    -------
    numpy.ndarray
        float64 bytes x hops saved per proposal (negative: added).
    """
    if isinstance(machine, GridMachine):
        # compiled: no per-entry temporaries (partner expansion, node and distance arrays)
        return side_gain_grid(w.indptr, w.indices, w.data, np.asarray(units, dtype=np.int64),
                              np.asarray(other, dtype=np.int64), place.node(p_from),
                              place.node(p_to), place.node(place.pos_of), machine.dims,
                              machine.strides, machine.wrap)
    return side_gain_vectorised(w, units, other, p_from, p_to, place, machine)


def side_gain_vectorised(w, units, other, p_from, p_to, place, machine):
    """:func:`side_gain` on any machine, vectorised with numpy (the same sums, parameters
    and result).

    Parameters
    ----------
    w, units, other, p_from, p_to, place, machine
        As :func:`side_gain`.

    Returns
    -------
    numpy.ndarray
        float64 bytes x hops saved per proposal.
    """
    m = len(units)
    rows, flat = partner_entries(w.indptr, units)
    x = w.indices[flat]
    keep = x != other[rows]
    rows, x, wt = rows[keep], x[keep], w.data[flat][keep]
    nx = place.node(place.pos_of[x])
    d = (machine.hop_distance(place.node(p_from[rows]), nx)
         - machine.hop_distance(place.node(p_to[rows]), nx)).astype(np.float64)
    return np.bincount(rows, weights=wt * d, minlength=m).astype(np.float64)


def hop_swap_passes(w: sp.csr_matrix, place: UnitPlacement, machine, neighbours, seed: int,
                    passes: int = 8) -> int:
    """Vectorised hop-bytes swap passes (module docstring); returns the swaps applied.

    Parameters
    ----------
    w : scipy.sparse.csr_matrix
        Symmetric bytes between units.
    place : UnitPlacement
        Placement, changed in place.
    machine : rankmap.machines.Machine
        Gives ``hop_distance``.
    neighbours : tuple of numpy.ndarray
        CSR (indptr, allocation positions) of the allocation nodes linked to each node.
    seed : int
        Seed of the target choice.
    passes : int
        Most passes.

    Returns
    -------
    int
        Number of swaps applied.
    """
    rng = np.random.default_rng(seed)
    n = w.shape[0]
    if n < 2 or w.nnz == 0:
        return 0
    nb_ptr, nb_pos = neighbours
    row_of = np.repeat(np.arange(n), np.diff(w.indptr))
    applied = 0
    for _ in range(passes):
        node = place.node(place.pos_of)
        stretch = w.data * machine.hop_distance(node[row_of], node[w.indices])
        if not (stretch > 0).any():
            break
        # most stretched partner of every unit (the first of equals)
        top = _row_argmax(w.indptr, stretch)
        u = np.nonzero(top >= 0)[0]
        u = u[stretch[top[u]] > 0]
        best = top[u]
        partner = w.indices[best]
        # target: a position on the partner's node, or on a node linked to it
        p_node = place.pos_of[partner] // place.slots
        deg = nb_ptr[p_node + 1] - nb_ptr[p_node]
        pick = np.floor(rng.random(len(u)) * (deg + 1)).astype(np.int64)
        tgt_node = p_node.copy()
        via = pick < deg
        tgt_node[via] = nb_pos[nb_ptr[p_node[via]] + pick[via]]
        tgt = tgt_node * place.slots + rng.integers(0, place.slots, len(u))
        v = place.unit_at[tgt]
        keep = (v != u) & (tgt // place.slots != place.pos_of[u] // place.slots)
        u, v, tgt = u[keep], v[keep], tgt[keep]
        if len(u) == 0:
            break
        p_u = place.pos_of[u]
        g = side_gain(w, u, v, p_u, tgt, place, machine)
        g += side_gain(w, v, u, tgt, p_u, place, machine)
        good = np.nonzero(g > 1e-9)[0]
        if len(good) == 0:
            break
        good = good[np.argsort(-g[good], kind="stable")]
        chosen = _pick_independent(good, u, v, w.indptr, w.indices, n)
        for i in chosen:
            place.swap(int(u[i]), int(tgt[i]))
        applied += len(chosen)
    return applied


def _route_deltas(router, moved):
    """Changed links, their byte change and the moved flows' hops, per phase, from one call
    of the router's :meth:`~rankmap.routing.Router.link_sums_by_part` for all phases
    together (each phase a part).

    Parameters
    ----------
    router : Router
        The router (its :meth:`~rankmap.routing.Router.paths`); not one whose routes depend
        on the whole phase's traffic (UGAL): such phases must be routed afresh.
    moved : list
        Per phase, ``(old_src, new_src, old_dst, new_dst, nbytes)`` (nodes of the moved flows'
        ends before and after, and their bytes), or None when no flow of the phase moves.

    Returns
    -------
    list
        Per phase, None or ``(links, delta, old_hops, new_hops)``: sorted distinct link ids
        on any old or new route, the byte change on each, and every moved flow's hops before
        and after (row sums of the paths over the machine's
        :attr:`~rankmap.machines.Machine.hop_links`, as :meth:`Router.loads` counts them).
    """
    live = [i for i, mf in enumerate(moved) if mf is not None]
    out = [None] * len(moved)
    if not live:
        return out
    src = np.concatenate([x for i in live for x in (moved[i][0], moved[i][1])])
    dst = np.concatenate([x for i in live for x in (moved[i][2], moved[i][3])])
    w = np.concatenate([x for i in live for x in (-moved[i][4], moved[i][4])])
    sizes = [len(moved[i][4]) for i in live]
    phase = np.repeat(np.arange(len(live), dtype=np.int64), [2 * k for k in sizes])
    keys, delta, hops, _entries = router.link_sums_by_part(src, dst, w, phase, len(live))
    n_links = router.machine.n_links
    cut = np.searchsorted(keys, np.arange(len(live) + 1) * n_links)
    start = np.concatenate([[0], np.cumsum([2 * k for k in sizes])])
    for k, i in enumerate(live):
        h = hops[start[k]:start[k + 1]]
        out[i] = ((keys[cut[k]:cut[k + 1]] - k * n_links).astype(np.int64),
                  delta[cut[k]:cut[k + 1]], h[:sizes[k]], h[sizes[k]:])
    return out


class _Loads:
    """Link loads of every phase under a unit placement; exact incremental swaps."""

    def __init__(self, phases, place: UnitPlacement, machine, routing, n_units):
        self.phases = [(s, d, b) for s, d, b in phases if len(s)]
        self.place, self.machine, self.routing = place, machine, routing
        # the flows touching each unit, per phase (CSR)
        self.csr = [end_flow_csr(np.asarray(s, dtype=np.int64), np.asarray(d, dtype=np.int64),
                                 int(n_units)) for s, d, b in self.phases]
        self.router = router_for(machine, routing)
        # UGAL's routes depend on the whole phase's traffic: such phases are routed afresh
        self.whole_phase = type(self.router).for_phase is not Router.for_phase
        node = place.node(place.pos_of)
        routed = [grouped_loads(self.router, node[s], node[d], b)[0] for s, d, b in self.phases]
        self.loads = [ld.bytes.astype(np.float64) for ld in routed]
        self.top = [float(x.max()) if x.size else 0.0 for x in self.loads]
        self.max = max(self.top, default=0.0)
        self.sq = sum(float(np.dot(x, x)) for x in self.loads)
        # swaps evaluated in one compiled call where its sums are exact (same decisions)
        self.grid = None
        if self.phases and not self.whole_phase \
                and (grid_steps_apply(self.router, machine)
                     or tree_steps_apply(self.router, machine)) \
                and whole_sums_exact(np.concatenate([b for _s, _d, b in self.phases]), machine,
                                     squares=True, busiest=self.max):
            self.grid = _GridSwaps(self, place, machine)
            self.loads = list(self.grid.loads)          # row views: one copy of the loads

    def objective(self):
        return (self.max, self.sq)

    def sync_from_grid(self):
        """Take the busiest values and the objective from the compiled state after a kept
        swap (the loads are its row views already)."""
        self.top = [float(t) for t in self.grid.top]
        self.max, self.sq = float(self.grid.scal[0]), float(self.grid.scal[1])

    def _fresh_deltas(self, moved_flows, u: int, p: int):
        """Per phase, (changed links, byte change) of putting unit u on position p, each
        changed phase routed whole under the new placement, or None (unchanged phases)."""
        q = int(self.place.pos_of[u])
        self.place.swap(u, p)
        node = self.place.node(self.place.pos_of)
        self.place.swap(u, q)
        out = []
        for (s, d, b), cur, mf in zip(self.phases, self.loads, moved_flows):
            if mf is None:
                out.append(None)
                continue
            dl = grouped_loads(self.router, node[s], node[d], b)[0].bytes - cur
            links = np.flatnonzero(dl)
            out.append((links.astype(np.int64), dl[links]))
        return out

    def _deltas(self, moved_flows):
        """Per phase, (changed links, byte change) of moving the given flows, or None."""
        return [None if d is None else d[:2]
                for d in _route_deltas(self.router, moved_flows)]

    def try_swap(self, u: int, p: int) -> bool:
        """Move unit u to position p (swapping with its holder); keep it only if
        (max, sum of squares) drops."""
        if self.grid is not None:
            kept = self.grid.try_swap(u, p)
            if kept:
                self.sync_from_grid()
            return kept
        place = self.place
        q = int(place.pos_of[u])
        v = int(place.unit_at[p])
        units = [u] if v < 0 else [u, v]
        moved_flows = []        # per phase: (old src, new src, old dst, new dst, bytes) or None
        for (s, d, b), (indptr, fl) in zip(self.phases, self.csr):
            idx = np.unique(np.concatenate([fl[indptr[x]:indptr[x + 1]] for x in units]))
            if len(idx) == 0:
                moved_flows.append(None)
                continue
            ss, dd = s[idx], d[idx]
            pos = place.pos_of
            old_s, old_d = place.node(pos[ss]), place.node(pos[dd])
            new_ps, new_pd = pos[ss].copy(), pos[dd].copy()
            for x, c in ((u, p), (v, q)):
                if x >= 0:
                    new_ps[ss == x] = c
                    new_pd[dd == x] = c
            new_s, new_d = place.node(new_ps), place.node(new_pd)
            moved = (old_s != new_s) | (old_d != new_d)
            moved_flows.append((old_s[moved], new_s[moved], old_d[moved], new_d[moved],
                                b[idx][moved]) if moved.any() else None)
        deltas = (self._fresh_deltas(moved_flows, u, p) if self.whole_phase
                  else self._deltas(moved_flows))
        if all(x is None for x in deltas):
            return False
        # only the changed links are touched: the cost follows the moved flows' routes
        new_max, new_sq, tops = 0.0, self.sq, []
        for i, (cur, dl) in enumerate(zip(self.loads, deltas)):
            if dl is None:
                tops.append(self.top[i])
                new_max = max(new_max, self.top[i])
                continue
            links, delta = dl
            after = cur[links] + delta
            new_sq += float(np.dot(after, after) - np.dot(cur[links], cur[links]))
            if np.any(cur[links] >= self.top[i]):
                # a busiest link changed: the rest of the phase is looked at once
                saved = cur[links].copy()
                cur[links] = after
                top = float(cur.max())
                cur[links] = saved
            else:
                top = max(self.top[i], float(after.max()))
            tops.append(top)
            new_max = max(new_max, top)
        tol = 1e-9 * max(self.max, 1.0)
        better = new_max < self.max - tol or (new_max <= self.max + tol
                                              and new_sq < self.sq - 1e-9 * max(self.sq, 1.0))
        if not better:
            return False
        for cur, dl in zip(self.loads, deltas):
            if dl is not None:
                cur[dl[0]] += dl[1]
        self.top = tops
        self.max, self.sq = new_max, new_sq
        place.swap(u, p)
        return True


class _GridSwaps:
    """:class:`_Loads`'s state as arrays for the compiled swap
    (:func:`rankmap.kernels.refine_grid.swap_step`): dimension order on a torus or mesh, or
    d-mod-k on a k-ary n-tree, sums exact (:mod:`rankmap.mappers.exact_grid`). Shares the
    placement's arrays."""

    def __init__(self, st: _Loads, place: UnitPlacement, machine):
        self.place = place
        sizes = [len(s) for s, _d, _b in st.phases]
        self.f_off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.f_src = np.concatenate([s for s, _d, _b in st.phases]).astype(np.int64)
        self.f_dst = np.concatenate([d for _s, d, _b in st.phases]).astype(np.int64)
        self.f_bytes = np.concatenate([b for _s, _d, b in st.phases]).astype(np.float64)
        self.rf_indptr = np.stack([ip for ip, _fl in st.csr]).astype(np.int64)
        self.rf_fl = np.concatenate([fl for _ip, fl in st.csr]).astype(np.int64)
        self.rf_off = np.concatenate([[0], np.cumsum([len(fl) for _ip, fl in st.csr])]
                                     ).astype(np.int64)
        self.loads = np.stack(st.loads)
        self.top = np.array(st.top, dtype=np.float64)
        # links at each phase's busiest value (kernels.refine_grid.swap_step)
        self.n_top = (self.loads >= self.top[:, None]).sum(axis=1).astype(np.int64)
        self.scal = np.array([st.max, st.sq], dtype=np.float64)
        self.scratch = np.zeros(machine.n_links, dtype=np.float64)
        self.mark = np.zeros(machine.n_links, dtype=np.bool_)
        self.alloc_nodes = np.ascontiguousarray(place.alloc_nodes, dtype=np.int64)
        # on a k-ary n-tree: the arity per level, its powers, an int8 ``wrap`` that makes the
        # kernels compile their tree steps, and link ids for dense slots
        dims, strides, wrap = hop_geometry(machine)
        link_of_slot, self.dense_slot_of_link = link_slots(machine)
        self.grid = (dims, strides, wrap, link_of_slot)
        self.n_nodes = int(machine.n_nodes)
        # coordinates of the allocation's nodes, for the compiled attack's hop counts
        self.coords = position_coords(self.alloc_nodes, *self.grid[:2])

    def _swap_state(self):
        pl = self.place
        return (pl.pos_of, pl.unit_at, pl.slots, self.alloc_nodes, self.f_src, self.f_dst,
                self.f_bytes, self.f_off, self.rf_indptr, self.rf_fl, self.rf_off, self.loads,
                self.top, self.n_top, self.scal, self.scratch, self.mark, *self.grid)

    def try_swap(self, u: int, p: int) -> bool:
        """As :meth:`_Loads.try_swap`, in one compiled call."""
        return bool(swap_step(u, p, *self._swap_state()))

    def _phase_flows(self, phase: int):
        """Source units, destination units and bytes of one phase's flows (views)."""
        lo, hi = self.f_off[phase], self.f_off[phase + 1]
        return self.f_src[lo:hi], self.f_dst[lo:hi], self.f_bytes[lo:hi]

    def flows_over(self, router, phase: int, link: int, at, hops, most: int) -> np.ndarray:
        """:func:`flows_over_link` of one phase's flows and its order by bytes x hops, cut to
        ``most``, in one compiled call
        (:func:`rankmap.kernels.link_swap_grid.flows_over_slot`)."""
        side, nodes = router.ends_through(link)
        src, dst, nbytes = self._phase_flows(phase)
        return flows_over_slot(np.ascontiguousarray(nodes, dtype=np.int64), side == "src",
                               self.n_nodes, np.ascontiguousarray(at, dtype=np.int64),
                               self.alloc_nodes, self.rf_indptr[phase],
                               self.rf_fl[self.rf_off[phase]:self.rf_off[phase + 1]],
                               src, dst, nbytes, np.ascontiguousarray(hops, dtype=np.int64),
                               int(most), int(self.dense_slot_of_link[link]), *self.grid[:3])

    def attack(self, phase: int, cross, rng, link: int, tried: int, max_proposals: int, w,
               nb_ptr, nb_pos) -> tuple[int, int, int]:
        """The inner loop of :func:`link_swaps` for the flows ``cross`` of ``phase`` over
        ``link``, in one compiled call
        (:func:`rankmap.kernels.link_swap_grid.attack_link_grid`): returns (proposals tried
        so far, the unit moved or -1, the unit that took its place or -1)."""
        src, dst, _nbytes = self._phase_flows(phase)
        tried, mover, holder = attack_link_grid(
            cross, src, dst, rng, int(self.dense_slot_of_link[link]), EXACT_TRIES, int(tried),
            int(max_proposals), w.indptr, w.indices, w.data, nb_ptr, nb_pos, self.coords,
            *self._swap_state())
        return int(tried), int(mover), int(holder)


#: targets of one move evaluated exactly (the best by hop-bytes gain)
EXACT_TRIES = 3
#: flows over the busiest link whose ends are offered targets (the most bytes x hops first)
CROSS_TRIES = 8


def symmetric_bytes(phases, n_units) -> sp.csr_matrix:
    """Bytes between units in both directions, all phases.

    Parameters
    ----------
    phases : list of (numpy.ndarray, numpy.ndarray, numpy.ndarray)
        Per phase, source unit, destination unit and bytes of every flow.
    n_units : int
        Number of units.

    Returns
    -------
    scipy.sparse.csr_matrix
        Symmetric (n_units x n_units) bytes, duplicates summed, indices sorted.
    """
    import scipy.sparse as sp
    s = np.concatenate([p[0] for p in phases])
    d = np.concatenate([p[1] for p in phases])
    b = np.concatenate([p[2] for p in phases])
    m = sp.coo_matrix((b, (s, d)), shape=(n_units, n_units)).tocsr()
    m = (m + m.T).tocsr()
    m.sum_duplicates()
    m.sort_indices()
    return m


def _targets(mover: int, partner: int, place: UnitPlacement, nb_ptr, nb_pos) -> np.ndarray:
    """Positions a unit may move to: on its partner's node, the nodes linked to it, and the
    nodes linked to its own node (not its own node)."""
    pn = int(place.pos_of[partner]) // place.slots
    mn = int(place.pos_of[mover]) // place.slots
    nodes = np.unique(np.concatenate([[pn], nb_pos[nb_ptr[pn]:nb_ptr[pn + 1]],
                                      nb_pos[nb_ptr[mn]:nb_ptr[mn + 1]]]))
    nodes = nodes[nodes != mn]
    return (nodes[:, None] * place.slots + np.arange(place.slots)).reshape(-1)


#: work bound of :func:`link_swaps` beyond its proposals: rounds x (links of every phase +
#: allocated nodes + flows of the largest phase), element operations; it binds only on
#: very large machines (a few hundred thousand nodes), where one round costs tens of ms
LINK_SWAP_WORK = 1 << 29


def link_swaps(phases, place: UnitPlacement, machine, routing, neighbours, seed: int,
               max_proposals: int = 2000, n_units: int | None = None,
               compiled: bool | None = None) -> int:
    """Attack the busiest link with exactly evaluated swaps (module docstring).

    Parameters
    ----------
    phases : list of (numpy.ndarray, numpy.ndarray, numpy.ndarray)
        Per phase, flows between units: source unit, destination unit, bytes.
    place : UnitPlacement
        Placement, changed in place.
    machine : rankmap.machines.Machine
        Routes the flows (``route``) and gives ``hop_distance``.
    routing : str
        Routing name.
    neighbours : tuple of numpy.ndarray
        CSR (indptr, allocation positions) of the allocation nodes linked to each node.
    seed : int
        Seed of the proposal choice.
    max_proposals : int
        Most proposals evaluated (a work bound, with :data:`LINK_SWAP_WORK`).
    n_units : int, optional
        Number of units (default: ``len(place.pos_of)``).
    compiled : bool, optional
        Offer the ends of the flows over a link their targets in one compiled call
        (:func:`rankmap.kernels.link_swap_grid.attack_link_grid`: the same swaps); False
        keeps the Python loop, True raises ``ValueError`` where the compiled swap step does
        not apply. Default: compiled where it applies.

    Returns
    -------
    int
        Number of swaps kept.
    """
    n_units = len(place.pos_of) if n_units is None else n_units
    st = _Loads(phases, place, machine, routing, n_units)
    if compiled and st.grid is None:
        raise ValueError("the compiled link swaps need dimension-order routing on a torus or "
                         "mesh, or d-mod-k on a k-ary n-tree, and exact sums")
    compiled = st.grid is not None if compiled is None else compiled
    if not st.phases or st.max <= 0:
        return 0
    rng = np.random.default_rng(seed)
    nb_ptr, nb_pos = (np.ascontiguousarray(x, dtype=np.int64) for x in neighbours)
    w = symmetric_bytes(st.phases, n_units)
    kept, tried, refused_link = 0, 0, 0
    skip_links: set = set()
    # hop counts of every flow, per phase, updated for the swapped units' flows after a kept
    # swap; distances to a link's ends are taken over the allocation's nodes (few) and
    # indexed per flow (many)
    alloc_nodes = place.alloc_nodes
    hops: dict = {}
    # every round looks at all links and allocated nodes once: bound the rounds by that work
    round_work = sum(len(ld) for ld in st.loads) + 2 * len(alloc_nodes) \
        + max(len(p[0]) for p in st.phases)
    max_rounds = max(16, LINK_SWAP_WORK // max(round_work, 1))
    rounds = 0
    while tried < max_proposals and rounds < max_rounds:
        rounds += 1
        # the busiest link not yet given up on, over all phases
        best_ph, best_l, best_v = -1, -1, -1.0
        for i, ld in enumerate(st.loads):
            m = min(len(skip_links) + 1, len(ld))
            top = np.argpartition(-ld, m - 1)[:m] if m < len(ld) else np.arange(len(ld))
            order = top[np.lexsort((top, -ld[top]))]
            for l in order:
                if (i, int(l)) not in skip_links:
                    if ld[l] > best_v:
                        best_ph, best_l, best_v = i, int(l), float(ld[l])
                    break
        if best_v <= 0:
            break
        s, d, b = st.phases[best_ph]
        at = place.pos_of // place.slots                   # allocation position of units
        if best_ph not in hops:
            hops[best_ph] = machine.hop_distance(alloc_nodes[at[s]], alloc_nodes[at[d]])
        h = hops[best_ph]
        if compiled:
            cross = st.grid.flows_over(st.router, best_ph, best_l, at, h, CROSS_TRIES)
        else:
            cross = (_could_cross(machine, s, d, at, h, alloc_nodes, best_l) if st.whole_phase
                     else flows_over_link(st.router, s, d, at, h, alloc_nodes, best_l,
                                          unit_flows=st.csr[best_ph]))
            cross = cross[np.argsort(-b[cross] * h[cross], kind="stable")][:CROSS_TRIES]
        if len(cross) == 0:
            skip_links.add((best_ph, best_l))
            continue
        improved = False
        if compiled:
            tried, mover, holder = st.grid.attack(best_ph, cross, rng, best_l, tried,
                                                  max_proposals, w, nb_ptr, nb_pos)
            improved = mover >= 0
            if improved:
                kept += 1
                st.sync_from_grid()
                moved_units = [mover] + ([holder] if holder >= 0 else [])
        for f in ([] if compiled else cross):
            flip = rng.random() < 0.5
            for mover, partner in ((s[f], d[f]), (d[f], s[f]))[::(-1 if flip else 1)]:
                tps = _targets(int(mover), int(partner), place, nb_ptr, nb_pos)
                if len(tps) and not st.whole_phase:
                    # only targets that take this flow off the link
                    pn = np.full(len(tps), place.node(place.pos_of[partner]))
                    tn = place.node(tps)
                    on = (st.router.crosses(tn, pn, best_l) if mover == s[f]
                          else st.router.crosses(pn, tn, best_l))
                    tps = tps[~on]
                if len(tps) == 0:
                    continue
                # rank the targets by hop-bytes gain; evaluate the best few exactly
                mv = np.full(len(tps), int(mover))
                pm = np.full(len(tps), int(place.pos_of[mover]))
                v = place.unit_at[tps]
                g = (side_gain(w, mv, v, pm, tps, place, machine)
                     + side_gain(w, v, mv, tps, pm, place, machine))
                for tp in tps[np.argsort(-g, kind="stable")[:EXACT_TRIES]]:
                    tried += 1
                    holder = int(place.unit_at[tp])
                    if st.try_swap(int(mover), int(tp)):
                        kept += 1
                        improved = True
                        moved_units = [int(mover)] + ([holder] if holder >= 0 else [])
                        break
                    if tried >= max_proposals:
                        break
                if improved or tried >= max_proposals:
                    break
            if improved or tried >= max_proposals:
                break
        if improved:
            skip_links.clear()
            # only the flows of the swapped units changed their hop counts
            at = place.pos_of // place.slots
            for i, h_i in hops.items():
                indptr, fl = st.csr[i]
                idx = np.unique(np.concatenate([fl[indptr[x]:indptr[x + 1]]
                                                for x in moved_units]))
                if len(idx):
                    si, di = st.phases[i][0][idx], st.phases[i][1][idx]
                    h_i[idx] = machine.hop_distance(alloc_nodes[at[si]], alloc_nodes[at[di]])
        else:
            skip_links.add((best_ph, best_l))
            refused_link += 1
            if len(skip_links) > 64:
                break
    return kept


def unit_phases(pattern, unit_of_rank: np.ndarray, n_units: int):
    """Per phase, the flows between units (summed per ordered pair; flows inside a unit dropped).

    Parameters
    ----------
    pattern : Pattern
        The pattern.
    unit_of_rank : numpy.ndarray
        int64 unit of every rank.
    n_units : int
        Number of units.

    Returns
    -------
    list of (numpy.ndarray, numpy.ndarray, numpy.ndarray)
        Per phase: int64 source units, int64 destination units, float64 bytes.
    """
    import scipy.sparse as sp
    out = []
    for ph in pattern.phases:
        s, d = unit_of_rank[ph.src], unit_of_rank[ph.dst]
        keep = s != d
        m = sp.coo_matrix((ph.bytes[keep], (s[keep], d[keep])), shape=(n_units, n_units)).tocsr()
        m.sum_duplicates()
        c = m.tocoo()
        out.append((c.row.astype(np.int64), c.col.astype(np.int64), c.data.astype(np.float64)))
    return out


def placement_key(cores: np.ndarray, pattern, machine, allocation, routing) -> tuple[float, float]:
    """The key refinements minimise: busiest link, then hop-bytes, of a rank placement.

    Parameters
    ----------
    cores : numpy.ndarray
        int64 allocation core of every rank.
    pattern : Pattern
        The pattern.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocation.
    routing : Router or str or None
        The routing (None: the machine's default).

    Returns
    -------
    tuple of (float, float)
        Bytes on the busiest link of the worst phase, and the sum over all phases of bytes x
        hops (byte-hops).
    """
    node = allocation.node_of_core(cores)
    router = router_for(machine, routing)
    top, hb = 0.0, 0.0
    for ph in pattern.phases:
        if not ph.n_flows:
            continue
        ld, _g = grouped_loads(router, node[ph.src], node[ph.dst], ph.bytes)
        if ld.bytes.size:
            top = max(top, float(ld.bytes.max()))
        hb += float(np.dot(ld.flow_hops, ph.bytes))
    return top, hb
