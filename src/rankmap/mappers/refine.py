"""``refine`` and ``refine:<mapper>``: swap-based local search on a placement.

Starting from another mapper's placement (``refine`` alone starts from ``graph``), the search
repeatedly proposes to move a rank next to one of its communication partners: a flow is drawn
with probability proportional to its bytes x hops, one of its ends is moved onto the core of
the other end's node or of a node linked to it whose move saves the most hop-bytes (exactly:
every partner's distance before and after, of both ranks when the move is a swap with the
rank already there), or onto a random one of those cores when none saves any. Only the flows
of the ranks that move are re-routed (the router's ``loads`` on those flows, their old routes
subtracted and new ones added), so a proposal costs about as much as routing a handful of
flows. A proposal is kept when it lowers the busiest link's bytes (worst phase), or keeps them
and either leaves fewer links at that value without adding hop-bytes, or lowers the hop-bytes
(all phases) without adding links at that value, under the router given (:class:`Refine`):
relieving the busiest links one at a time is how their value comes down, which a rule on
(busiest link, hop-bytes) alone refuses while any other link still carries it. The draw's
table (cumulative bytes x hops of every flow; the weights of a kept move's flows are updated
as it is kept) is rebuilt after a kept move, or later when the flows outnumber
:data:`REWEIGHT_RATIO` times the route entries looked at since the last build (a build then
costs a bounded share of the work). The search is bounded by work, not time: it
stops after ``budget`` proposals (``--budget``, default :func:`default_budget`: 8 per rank,
20,000 to 65,536), after :data:`REFINE_WORK` route entries (the hop links of the moved flows'
old and new routes, each share of a route split over parallel links apart: long routes on a
big machine, or wide ones), when :data:`MAX_REFUSED` proposals in a row were refused, or
when its expected gain is small: after every window of :data:`GAIN_WINDOW` proposals, the gain
of that window (of the busiest link's bytes and of the hop-bytes, relative to their values at
the window's start) is extrapolated over the proposals left in the budget, and when neither
(nor the number of links at the busiest value) would reach :data:`MIN_GAIN` the search ends;
fewer links at an unchanged busiest value count only while twice the window's pace would take
the last of them off it within the budget (``kernels.refine_grid.COUNT_PACE_MARGIN``): else
the busiest value would stay, and with it the predicted time (on the 27-point stencil of
``fattree:k=16:levels=3:cores=4``, 4,096 links sat at it and each window relieved 8; the
search ran its 45,000 proposals for the same busiest link and predicted time).
Given a busiest link to catch (``catch``: ``auto`` gives its refinements the best start's), a
search above it also ends when, at the pace of its last :data:`BEHIND_WINDOWS` windows, the
proposals left would not bring its busiest link down to it: it would not be the pick
(benchmarks/RESULTS_refine_starts.md: over 28 problems no refinement so cut would have ended
ahead of the best start's, and the refinements took 0.56x the CPU time).
All of these count proposals, never seconds, so the same input and seed give the same
placement.
The result is checked by routing everything again: it is never worse than the start.

On a torus or mesh under dimension-order or minimal adaptive routing, and on a k-ary n-tree
under d-mod-k routing, when every hop-bytes sum of the search is exact
(:mod:`rankmap.mappers.exact_grid`), the proposals are drawn (from the same generator, draw for
draw) and judged in compiled batches, the whole loop with its table builds and stops in one
call (:mod:`rankmap.kernels.refine_grid`): the same placement, 6-19x fewer seconds per
proposal (3-14x under adaptive routing, where the compiled step keeps every offset's template
in a store of arrays, :mod:`rankmap.kernels.template_store`, and adds the split shares in the
Python step's order, so that the rounded link sums are the same bit for bit).
``refine_search(..., compiled=False)`` keeps the Python step. Elsewhere (ECMP, dragonflies,
fractional bytes) the Python step
refuses most moves that surely add hop-bytes without routing them, where routes are shortest
and crossings cheap to tell (:data:`WITNESS_REFUSALS`), and, on a torus, mesh or k-ary n-tree
whose hop-bytes sums are exact, chooses a move's target core with the compiled step's gains
(:data:`COMPILED_TARGETS`): the same core, 1.2-1.6x fewer seconds per proposal
(benchmarks/RESULTS_adaptive_refine.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..defaults import (BUDGET_PER_RANK, DEFAULT_BUDGET, MAX_DEFAULT_BUDGET,
                        REFINE_WORK)
from ..errors import RankmapError
from ..validate import limit
from ..kernels.flows import end_flow_csr
from ..kernels.refine_grid import (GO_ON, STOP_BEHIND, STOP_BUDGET, STOP_NO_HOPS, STOP_REFUSED,
                                   STOP_SMALL_GAIN, STOP_WORK, best_target, count_at_top,
                                   flow_route_entries, flow_weights, moved_hop_bytes,
                                   rank_hop_bytes, refine_batches, refine_step, window_stop)
from ..kernels.template_store import template_store
from ..routing import Router, router_for
from ..routing.groups import grouped_loads
from .base import MapperInfo
from .exact_grid import (adaptive_steps_apply, grid_steps_apply, hop_geometry,
                         largest_template, link_slots, tree_steps_apply, whole_sums_exact)
from .geometry import check_seed, neighbour_csr
from .swap_refine import partner_entries, symmetric_bytes

__all__ = ["Refine", "RefineRun", "refine_cores", "refine_search", "check_budget",
           "DEFAULT_BUDGET", "BUDGET_PER_RANK", "MAX_DEFAULT_BUDGET", "default_budget",
           "MAX_REFUSED", "WITNESS_REFUSALS", "COMPILED_TARGETS", "GAIN_WINDOW", "MIN_GAIN",
           "REFINE_WORK",
           "REWEIGHT_RATIO", "BEHIND_WINDOWS"]

#: stop after this many refused proposals in a row
MAX_REFUSED = 1500
#: the Python step refuses a move that surely adds hop-bytes without routing it when a link
#: at the busiest value is on none of its flows' old routes (the same decisions; False routes
#: every move, for checking that)
WITNESS_REFUSALS = True
#: the Python step (ECMP, ``compiled=False``, ...) picks a move's target core with the compiled
#: step's hop-bytes gains (:func:`rankmap.kernels.refine_grid.best_target`) on a torus, mesh
#: or k-ary n-tree whose every hop-bytes sum is exact: the same core as its numpy gains
#: (False: numpy, for checking that)
COMPILED_TARGETS = True
#: proposals per window of the small-gain stop
GAIN_WINDOW = 1000
#: the weights of the draws (bytes x hops of every flow, O(flows) to build) are rebuilt after
#: a kept move once this many times the route entries looked at since the last build reach
#: the number of flows: a build costs at most 1/REWEIGHT_RATIO of the proposals' work
REWEIGHT_RATIO = 64
#: the stop reasons of the search loops (kernels.refine_grid.refine_batches, window_stop)
_STOPS = {STOP_BUDGET: "budget", STOP_REFUSED: "refused", STOP_WORK: "work",
          STOP_NO_HOPS: "no hops", STOP_SMALL_GAIN: "small gain", STOP_BEHIND: "behind"}
#: the changed links of up to this many kept moves wait in separate arrays for the next
#: compaction of a phase's busy-link set; more are joined into one
MAX_ADDED = 32
#: the search ends when a window's relative gain (busiest link and hop-bytes alike), times the
#: windows left in the budget, is below this
MIN_GAIN = 1e-3
#: windows whose pace a search given a busiest link to catch (``catch``) extrapolates: it ends
#: when, at that pace, the rest of its budget would not bring its busiest link down to it
BEHIND_WINDOWS = 4


def default_budget(n_ranks: int) -> int:
    """The default work bound of one refinement of ``n_ranks`` ranks.

    Parameters
    ----------
    n_ranks : int
        Ranks of the pattern.

    Returns
    -------
    int
        Proposed moves: :data:`BUDGET_PER_RANK` x ``n_ranks``, at least :data:`DEFAULT_BUDGET`
        and at most :data:`MAX_DEFAULT_BUDGET`.
    """
    return int(min(max(DEFAULT_BUDGET, BUDGET_PER_RANK * int(n_ranks)), MAX_DEFAULT_BUDGET))


def check_budget(budget) -> int:
    """A work budget as a non-negative int (number of proposed moves).

    Parameters
    ----------
    budget : int, float or str
        The number of moves; a float must be a whole number.

    Returns
    -------
    int
        The budget.
    """
    try:
        value = float(budget)
    except (TypeError, ValueError):
        raise RankmapError(f"bad --budget {budget}: must be a whole number of moves") from None
    if not value >= 0 or value != int(value) or value > 1e12:
        raise RankmapError(f"bad --budget {budget}: must be a whole number of moves from 0 to "
                           "10^12")
    return int(value)


def _rank_flow_csr(src, dst, n_ranks):
    """CSR of flow indices touching each rank (as source or destination)."""
    return end_flow_csr(np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64),
                        int(n_ranks))


class _State:
    """Link loads per phase and hop-bytes under a placement; applies moves incrementally."""

    def __init__(self, pattern, machine, allocation, routing, cores):
        self.machine = machine
        self.router = router_for(machine, routing)
        self.alloc_nodes = allocation.nodes
        self.cpn = allocation.cores_per_node
        self.cores = cores.copy()
        self.rank_of_core = np.full(allocation.n_cores, -1, dtype=np.int64)
        self.rank_of_core[cores] = np.arange(len(cores))
        self.phases = [p for p in pattern.phases if p.n_flows]
        self.csr = [_rank_flow_csr(p.src, p.dst, pattern.n_ranks) for p in self.phases]
        # UGAL's routes depend on the whole phase's traffic: such phases are routed afresh
        self.whole_phase = type(self.router).for_phase is not Router.for_phase
        # busy[i]: links of phase i that may carry bytes (a superset, compacted when the
        # links added since the last compaction outnumber it: amortised O(1) per link)
        self.busy, self.added, self.phase_hb = [], [], []
        node = self.node_of(self.cores)
        # loads[i] is row i of one (phases x links) array: a move's changed links are looked
        # up in all phases at once
        self.loads_2d = np.zeros((len(self.phases), machine.n_links), dtype=np.float64)
        self.loads = list(self.loads_2d)
        for i, p in enumerate(self.phases):
            ld, _g = grouped_loads(self.router, node[p.src], node[p.dst], p.bytes)
            self.loads[i][:] = ld.bytes
            self.busy.append(np.flatnonzero(ld.bytes))
            self.added.append([])
            self.phase_hb.append(float(np.dot(ld.flow_hops, p.bytes)))
        self.hb = sum(self.phase_hb)
        # every phase's flows one after the other, and the (global) flows of every rank
        none = [np.zeros(0)]
        self.f_src = np.concatenate([p.src for p in self.phases] or none).astype(np.int64)
        self.f_dst = np.concatenate([p.dst for p in self.phases] or none).astype(np.int64)
        self.f_bytes = np.concatenate([p.bytes for p in self.phases] or none).astype(np.float64)
        self.f_phase = np.repeat(np.arange(len(self.phases)),
                                 [p.n_flows for p in self.phases]).astype(np.int64)
        self._rank_flows = None           # (the Python step's: built when first asked for)
        self.n_ranks = pattern.n_ranks
        # draw weights (bytes x hops of every flow, phases one after the other): built by the
        # first draw_table, then kept up to date for the flows of kept moves
        self.weight = None
        self.flow_off = np.concatenate([[0], np.cumsum([p.n_flows for p in self.phases])])
        self.work = 0.0                   # route entries looked at by try_move (REFINE_WORK)
        self.top = [float(l.max()) if l.size else 0.0 for l in self.loads]
        self.max = max((t for t, l in zip(self.top, self.loads) if l.size), default=0.0)
        self.at_max = self._count_at_max()
        # a move adding hop-bytes is kept only if it lowers the busiest link, so only if every
        # link at that value is on a moved flow's old route: one such link (the witness,
        # (phase, link)) not on any refuses the move unrouted (:meth:`_refused_by_witness`);
        # a router whose hops are the machine's hop distances tells the hop-bytes change
        self.by_witness = (WITNESS_REFUSALS and self.router.minimal
                           and self.router.cheap_crosses and not self.whole_phase)
        self.witness: tuple[int, int] | None = None
        # the compiled choice of a move's target (:meth:`use_compiled_targets`), or None
        self.targets: _CompiledTargets | None = None

    def use_compiled_targets(self, wsym) -> bool:
        """Choose the targets of :meth:`propose` with the compiled gains from now on, where
        they give the numpy gains' choice (:data:`COMPILED_TARGETS`; every hop-bytes sum
        exact on a torus, mesh or k-ary n-tree); returns whether it does."""
        geometry = hop_geometry(self.machine)
        if (not COMPILED_TARGETS or geometry is None or self.machine.hop_links is not None
                or not whole_sums_exact(self.f_bytes, self.machine)):
            return False
        self.targets = _CompiledTargets(self, wsym, geometry)
        return True

    def _hot(self, i: int) -> np.ndarray:
        """Links of phase ``i`` whose bytes are the busiest link's (over all phases), within
        tolerance, looked for among the phase's loaded links only (sorted, distinct)."""
        if self.max <= 0 or self.top[i] < self.max - 1e-9 * max(self.max, 1.0):
            return np.zeros(0, dtype=np.int64)
        links = np.unique(np.concatenate([self.busy[i], *self.added[i]]))
        self.work += len(links)
        return links[self.loads[i][links] >= self.max - 1e-9 * max(self.max, 1.0)]

    def _count_at_max(self) -> int:
        """Links (over all phases) whose bytes are the busiest link's, within tolerance."""
        return sum(len(self._hot(i)) for i in range(len(self.loads)))

    def node_of(self, cores):
        return self.alloc_nodes[cores // self.cpn]

    def _fresh(self, moved):
        """Per phase, None or (changed links, byte change, hop-bytes change) of the cores as
        they are now, each changed phase routed whole (for a router whose routes follow the
        whole phase's traffic: UGAL)."""
        out = []
        node = self.node_of(self.cores)
        for i, (p, cur, m) in enumerate(zip(self.phases, self.loads, moved)):
            if m is None:
                out.append(None)
                continue
            ld, _g = grouped_loads(self.router, node[p.src], node[p.dst], p.bytes)
            dl = ld.bytes - cur
            links = np.flatnonzero(dl)
            out.append((links.astype(np.int64), dl[links],
                        float(np.dot(ld.flow_hops, p.bytes)) - self.phase_hb[i]))
        return out

    def objective(self):
        """(busiest link bytes, hop-bytes): what the result is judged on."""
        return (self.max, self.hb)

    def progress(self):
        """(busiest link bytes, links at it, hop-bytes): what the search lowers."""
        return (self.max, self.at_max, self.hb)

    def _max_after(self, i: int, d) -> float:
        """Busiest link bytes of phase ``i`` after adding ``d`` (links, delta).

        Only links that carry bytes (``busy``) or change can hold the maximum, so the cost
        follows the routes of the ranks, never the machine's size (other links carry 0,
        and no link carries less).
        """
        loads = self.loads[i]
        sets = [self.busy[i], *self.added[i]]         # a maximum needs no deduplication
        links, delta = d
        before = loads[links]
        loads[links] = before + delta
        try:
            return max([0.0] + [float(loads[b].max()) for b in (*sets, links) if b.size])
        finally:
            loads[links] = before

    def _compact(self, i: int) -> None:
        """Fold the links added to phase ``i``'s busy set in, dropping links now empty."""
        loads = self.loads[i]
        sets = [self.busy[i], *self.added[i]]
        if sum(map(len, sets)) * 16 > loads.size:   # a mask is cheaper than sorting
            mask = np.zeros(loads.size, dtype=bool)
            for b in sets:
                mask[b] = True
            self.busy[i] = np.flatnonzero(mask & (loads != 0))
        else:
            both = np.unique(np.concatenate(sets))
            self.busy[i] = both[loads[both] != 0]
        self.added[i] = []

    def _top_after(self, i: int, d) -> float:
        """As :meth:`_max_after`, looking only at the changed links unless one of them is
        a busiest link of the phase now (then the phase's loaded links are looked at)."""
        if d is None:
            return self.top[i]
        links, delta = d
        cur = self.loads[i][links]
        if cur.size and cur.max() >= self.top[i]:
            return self._max_after(i, d)
        return max(self.top[i], float((cur + delta).max())) if cur.size else self.top[i]

    def _at_busiest(self) -> tuple[int, int] | None:
        """A (phase, link) whose bytes are the busiest link's within tolerance (as
        :meth:`_hot` finds them, without counting work), or None when nothing is loaded."""
        if self.max <= 0:
            return None
        thr = self.max - 1e-9 * max(self.max, 1.0)
        if self.witness is not None:
            i, link = self.witness
            if self.loads[i][link] >= thr:
                return self.witness
        self.witness = None
        for i in range(len(self.loads)):
            if self.top[i] < thr:
                continue
            links = np.concatenate([self.busy[i], *self.added[i]])
            hit = links[self.loads[i][links] >= thr]
            if hit.size:
                self.witness = (i, int(hit.min()))
                break
        return self.witness

    def _moved_flows(self, ranks) -> np.ndarray:
        """Global ids of the flows with an end among ``ranks`` (sorted, distinct)."""
        if self._rank_flows is None:
            self._rank_flows = _rank_flow_csr(self.f_src, self.f_dst, self.n_ranks)
        ptr, fl = self._rank_flows
        return np.unique(np.concatenate([fl[ptr[r]:ptr[r + 1]] for r in ranks]))

    def _refused_by_witness(self, moves, idx) -> bool:
        """Whether the move is refused whatever its routes: it surely adds hop-bytes (from
        the machine's hop distances, beyond the tolerance of :meth:`try_move` and a margin
        for the order of additions), and the witness link at the busiest value is on no
        moved flow's old route, so the busiest value cannot drop. A refused move counts the
        work of routing it, as :meth:`_routed_moved` would."""
        wit = self._at_busiest()
        if wit is None or not len(idx):
            return False
        s, d, w = self.f_src[idx], self.f_dst[idx], self.f_bytes[idx]
        cs, cd = self.cores[s], self.cores[d]
        old_s, old_d = self.node_of(cs), self.node_of(cd)
        for r, c in moves.items():
            cs = np.where(s == r, c, cs)
            cd = np.where(d == r, c, cd)
        new_s, new_d = self.node_of(cs), self.node_of(cd)
        h_old = np.asarray(self.machine.hop_distance(old_s, old_d), dtype=np.float64)
        h_new = np.asarray(self.machine.hop_distance(new_s, new_d), dtype=np.float64)
        aw = np.abs(w)
        margin = 1e-9 * max(self.hb, 1.0) + 1e-7 * float(np.dot(aw, h_old + h_new))
        if float(np.dot(w, h_new - h_old)) <= margin:
            return False
        i, link = wit
        on = self.f_phase[idx] == i
        if on.any() and self.router.crosses(old_s[on], old_d[on], link).any():
            return False
        self.work += len(idx) + int(self.router.route_entries(old_s, old_d).sum()) \
            + int(self.router.route_entries(new_s, new_d).sum())
        return True

    def try_move(self, moves: dict[int, int]) -> bool:
        """Give rank r the core moves[r] for every r; keep it only if the objective drops."""
        ranks = np.fromiter(moves.keys(), dtype=np.int64)
        old = {r: int(self.cores[r]) for r in moves}
        if self.whole_phase:
            change = self._routed_afresh(moves, ranks)
        else:
            idx = self._moved_flows(ranks)
            if self.by_witness and self._refused_by_witness(moves, idx):
                return False
            change = self._routed_moved(moves, idx)
        deltas, dhbs, tops, at_max_change, weights = change
        dhb = sum(dhbs)
        new_max = max(tops, default=0.0)
        tol = 1e-9 * max(self.max, 1.0)
        lower = new_max < self.max - tol
        at_max = self.at_max
        if not lower and new_max <= self.max + tol and self.max > 0:
            # the busiest value stays: count the links that reach it before and after
            at_max += at_max_change(self.max - tol)
        # fewer links at the busiest value is progress towards lowering it, when it costs no
        # hop-bytes; else the hop-bytes must drop without more links at the busiest value
        hb_tol = 1e-9 * max(self.hb, 1.0)
        better = lower or (new_max <= self.max + tol and (
            (at_max < self.at_max and dhb <= hb_tol)
            or (at_max <= self.at_max and dhb < -hb_tol)))
        if not better:
            for r in ranks:
                self.cores[r] = old[r]
            return False
        for i, d in enumerate(deltas):
            if d is not None:
                links, delta = d
                self.phase_hb[i] += dhbs[i]
                self.loads[i][links] += delta
                added = self.added[i]
                added.append(links)
                if sum(map(len, added)) > len(self.busy[i]):
                    self._compact(i)
                elif len(added) > MAX_ADDED:      # one array for _max_after to look at
                    self.added[i] = [np.concatenate(added)]
        self.max, self.hb, self.top = new_max, self.hb + dhb, tops
        self.at_max = self._count_at_max() if lower else at_max
        if self.weight is not None:
            self._update_weights(*weights)
        for r in ranks:
            self.rank_of_core[old[r]] = -1
        for r, c in moves.items():
            self.rank_of_core[c] = r
        return True

    def _routed_moved(self, moves, idx):
        """The change of giving the ranks their new cores (set here), from the moved flows
        (global ids ``idx``, :meth:`_moved_flows`) of every phase routed in one call of the
        router's
        :meth:`~rankmap.routing.Router.link_sums_by_part` (their old routes taken off, the new
        ones added; each phase a part): per phase None or (changed links, byte change), per
        phase the hop-bytes change, per phase the busiest link bytes after, a function
        counting the links at or above a value after minus before, and the moved flows with
        their new nodes (for the draw weights)."""
        s, d, w = self.f_src[idx], self.f_dst[idx], self.f_bytes[idx]
        old_s, old_d = self.node_of(self.cores[s]), self.node_of(self.cores[d])
        for r, c in moves.items():
            self.cores[r] = c
        new_s, new_d = self.node_of(self.cores[s]), self.node_of(self.cores[d])
        # per phase with moved flows (a part): its old routes, then its new ones
        n = len(idx)
        live, first = np.unique(self.f_phase[idx], return_index=True)
        sizes = np.diff(np.append(first, n))
        part = np.repeat(np.arange(len(live), dtype=np.int64), sizes)
        at_old = np.arange(n) + first[part]
        at_new = at_old + sizes[part]
        src, dst, weight = np.empty(2 * n, np.int64), np.empty(2 * n, np.int64), np.empty(2 * n)
        src[at_old], src[at_new] = old_s, new_s
        dst[at_old], dst[at_new] = old_d, new_d
        weight[at_old], weight[at_new] = -w, w
        parts = np.empty(2 * n, np.int64)
        parts[at_old] = parts[at_new] = part
        keys, delta, hops, entries = self.router.link_sums_by_part(src, dst, weight, parts,
                                                                   len(live))
        self.work += n + int(entries.sum())
        n_links = self.machine.n_links
        cut = np.searchsorted(keys, np.arange(len(live) + 1) * n_links)
        key_part = np.repeat(np.arange(len(live), dtype=np.int64), np.diff(cut))
        links = keys - key_part * n_links
        cur = self.loads_2d.ravel()[live[key_part] * n_links + links]
        after = cur + delta
        deltas = [None] * len(self.phases)
        dhbs = [0.0] * len(self.phases)
        tops = list(self.top)
        for k in range(len(live)):
            i = int(live[k])
            lo, hi = cut[k], cut[k + 1]
            h = hops[2 * first[k]:2 * first[k] + 2 * sizes[k]]
            wk = w[first[k]:first[k] + sizes[k]]
            dhbs[i] = float(np.dot(h[sizes[k]:], wk) - np.dot(h[:sizes[k]], wk))
            deltas[i] = (links[lo:hi], delta[lo:hi])
            if hi > lo:
                # only links that change can raise the phase's busiest value; when one of them
                # is its busiest link now, the phase's loaded links are looked at
                if cur[lo:hi].max() >= self.top[i]:
                    tops[i] = self._max_after(i, deltas[i])
                else:
                    tops[i] = max(self.top[i], float(after[lo:hi].max()))

        def at_max_change(thr):
            return int(np.count_nonzero(after >= thr)) - int(np.count_nonzero(cur >= thr))

        return deltas, dhbs, tops, at_max_change, (idx, new_s, new_d, w)

    def _routed_afresh(self, moves, ranks):
        """As :meth:`_routed_moved`, every phase with a moved flow routed whole (for a router
        whose routes follow the whole phase's traffic: UGAL)."""
        for r, c in moves.items():
            self.cores[r] = c
        moved, idx_all = [], []
        for i, (p, (indptr, fl)) in enumerate(zip(self.phases, self.csr)):
            idx = np.unique(np.concatenate([fl[indptr[r]:indptr[r + 1]] for r in ranks]))
            moved.append(True if len(idx) else None)
            idx_all.append(self.flow_off[i] + idx)
        routed = self._fresh(moved)
        self.work += sum(len(p.src) + len(r[0]) for p, r in zip(self.phases, routed)
                         if r is not None)
        deltas = [None if r is None else r[:2] for r in routed]
        dhbs = [0.0 if r is None else r[2] for r in routed]
        tops = [self._top_after(i, d) for i, d in enumerate(deltas)]

        def at_max_change(thr):
            change = 0
            for i, d in enumerate(deltas):
                if d is not None:
                    cur = self.loads[i][d[0]]
                    change += int(np.count_nonzero(cur + d[1] >= thr)) \
                        - int(np.count_nonzero(cur >= thr))
            return change

        idx = np.concatenate(idx_all)
        s, d = self.f_src[idx], self.f_dst[idx]
        return (deltas, dhbs, tops, at_max_change,
                (idx, self.node_of(self.cores[s]), self.node_of(self.cores[d]),
                 self.f_bytes[idx]))

    def _update_weights(self, idx, new_src, new_dst, nbytes) -> None:
        """Draw weights of the flows a kept move changed (global ids ``idx``, their new end
        nodes and bytes; one hop-distance call): each the value a full rebuild would give
        it."""
        if len(idx):
            h = np.asarray(self.machine.hop_distance(new_src, new_dst)).astype(np.float64)
            self.weight[idx] = h * nbytes

    def draw_table(self, src, dst, w):
        """(total, cumulative table) of the flows' draw weights, bytes x hops under the
        placement (``src``, ``dst``, ``w``: every phase's flows one after the other); the
        table is None when the total is not positive. The weights are computed once and then
        kept up to date by the kept moves (the same values a rebuild gives)."""
        if self.weight is None:
            node = self.node_of(self.cores)
            self.weight = self.machine.hop_distance(node[src], node[dst]).astype(np.float64) * w
        weight = self.weight
        total = weight.sum()
        if total <= 0:
            return total, None
        cdf = (weight / total).cumsum()
        cdf /= cdf[-1]
        return total, cdf

    def propose(self, a: int, ppos: int, opts: np.ndarray, c: int, wsym) -> int:
        """Move rank ``a`` to the core near its partner's position ``ppos`` (or ``opts``)
        that saves the most hop-bytes, else to the drawn core ``c``; -1 when that is its own
        core (no proposal), else whether the move was kept (1) or refused (0)."""
        if self.targets is not None:
            best = self.targets.best(self, a, ppos, opts)
        else:
            best = _best_target(a, ppos, opts, self, wsym)
        if best >= 0:
            c = best
        here = int(self.cores[a])
        if c == here:
            return -1
        b = int(self.rank_of_core[c])
        kept = self.try_move({a: c} if b < 0 else {a: c, b: here})
        if kept and self.targets is not None:
            self.targets.moved(self, [a] if b < 0 else [a, b],
                               [here // self.cpn] if b < 0 else [here // self.cpn, c // self.cpn])
        return int(kept)


def _hop_bytes_terms(st: _State, wsym, dims, wrap) -> tuple:
    """``(w, w_hb, pcoords)`` of the compiled steps: the bytes between ranks (both
    directions, all phases) as int64/float64 CSR arrays ``(indptr, indices, data)``, every
    rank's hop-bytes under ``st.cores`` (:func:`rankmap.kernels.refine_grid.rank_hop_bytes`)
    and the coordinates of every allocation position's node."""
    w = (wsym.indptr.astype(np.int64), wsym.indices.astype(np.int64),
         wsym.data.astype(np.float64))
    pcoords = np.ascontiguousarray(st.machine.coords(st.alloc_nodes), dtype=np.int64)
    return w, rank_hop_bytes(st.cores, int(st.cpn), *w, pcoords, dims, wrap), pcoords


class _CompiledTargets:
    """Every rank's hop-bytes and the geometry :func:`rankmap.kernels.refine_grid.best_target`
    needs, kept up to date for :meth:`_State.propose`: its target is :func:`_best_target`'s
    (the first core saving the most hop-bytes), from exact sums in another order."""

    def __init__(self, st: _State, wsym, geometry):
        self.dims, _strides, self.wrap = geometry
        self.cpn = int(st.cpn)
        self.w, self.w_hb, self.pcoords = _hop_bytes_terms(st, wsym, self.dims, self.wrap)

    def best(self, st: _State, a: int, ppos: int, opts) -> int:
        """The core rank ``a`` moves to (on position ``ppos`` or ``opts``), or -1."""
        tpos = np.empty(1 + len(opts), dtype=np.int64)
        tpos[0] = ppos
        tpos[1:] = opts
        return int(best_target(a, tpos, st.cores, st.rank_of_core, self.cpn, *self.w,
                               self.w_hb, self.pcoords, self.dims, self.wrap))

    def moved(self, st: _State, ranks, old_pos) -> None:
        """Bring the hop-bytes up to date after a kept move of ``ranks`` from ``old_pos``."""
        moved_hop_bytes(np.array(ranks, dtype=np.int64), np.array(old_pos, dtype=np.int64),
                        st.cores, self.cpn, *self.w, self.w_hb, self.pcoords, self.dims,
                        self.wrap)


class _GridState:
    """:class:`_State` as arrays for the compiled step
    (:func:`rankmap.kernels.refine_grid.refine_step`): dimension-order or minimal adaptive
    routing on a torus or mesh, or d-mod-k on a k-ary n-tree, whole-number bytes. Same
    proposals, same decisions, same placement."""

    @staticmethod
    def applies(st: _State) -> bool:
        """Whether the compiled step gives the Python step's results for this search (under
        adaptive routing: also where no proposal's routes could pass the route-entry limit,
        which the Python step checks and the compiled one does not)."""
        if adaptive_steps_apply(st.router, st.machine):
            # a proposal routes the flows of two ranks per phase, old and new
            moved = sum(int(np.sort(np.diff(ip))[-2:].sum()) for ip, _fl in st.csr)
            if 2.0 * moved * largest_template(st.machine) > limit("route_entries"):
                return False
        elif not (grid_steps_apply(st.router, st.machine)
                  or tree_steps_apply(st.router, st.machine)):
            return False
        return whole_sums_exact(np.concatenate([p.bytes for p in st.phases]), st.machine)

    def __init__(self, st: _State, pattern, wsym):
        m = st.machine
        n_ph, n_links = len(st.phases), m.n_links
        self.cores, self.rank_of_core = st.cores, st.rank_of_core
        self.alloc_nodes = np.ascontiguousarray(st.alloc_nodes, dtype=np.int64)
        self.cpn = int(st.cpn)
        # on a k-ary n-tree: hosts' base-k digits, the arity once per level, link ids for
        # dense slots, and an int8 ``wrap`` that makes the kernels compile their tree steps
        # (kernels.hops, kernels.refine_grid's _walk and witness test)
        dims, strides, wrap = hop_geometry(m)
        link_of_slot, slot_of_link = link_slots(m)
        # the partners' bytes, and every rank's hop-bytes (kept up to date by the kernels)
        w, w_hb, self.pcoords = _hop_bytes_terms(st, wsym, dims, wrap)
        self.w = w + (w_hb,)
        # every phase's flows one after the other, as the Python state has them
        self.f_off = st.flow_off.astype(np.int64)
        self.f_src, self.f_dst, self.f_bytes = st.f_src, st.f_dst, st.f_bytes
        self.rf_indptr = np.stack([ip for ip, _ in st.csr]).astype(np.int64)
        self.rf_fl = np.concatenate([fl for _, fl in st.csr]).astype(np.int64)
        self.rf_off = np.concatenate([[0], np.cumsum([len(fl) for _, fl in st.csr])]
                                     ).astype(np.int64)
        self.loads = st.loads_2d.copy()
        self.members = np.zeros((n_ph, n_links), dtype=np.int32)
        self.in_set = np.zeros((n_ph, n_links), dtype=np.bool_)
        self.n_members = np.zeros(n_ph, dtype=np.int64)
        for i in range(n_ph):
            # a fresh state has nothing added since its last compaction
            busy = st.busy[i]
            self.members[i, :len(busy)] = busy
            self.in_set[i, busy] = True
            self.n_members[i] = len(busy)
        self.busy_len = self.n_members.copy()
        self.added_len = np.zeros(n_ph, dtype=np.int64)
        self.top = np.array(st.top, dtype=np.float64)
        # links at each phase's busiest value (the busiest link's bytes are found from the
        # changed links alone while another link stays at it)
        self.n_top = np.array([count_at_top(i, self.loads, self.members, self.n_members,
                                            self.top, n_links) for i in range(n_ph)],
                              dtype=np.int64)
        self.phase_hb = np.array(st.phase_hb, dtype=np.float64)
        self.weight, total = flow_weights(self.cores, self.cpn, self.f_src, self.f_dst,
                                          self.f_bytes, self.pcoords, dims, wrap)
        self.scal = np.array([st.max, st.at_max, st.hb, st.work, total], dtype=np.float64)
        self.grid = (np.int64(n_links), dims, strides, wrap, link_of_slot, slot_of_link)
        # a link at the busiest value (phase, link, dense slot): a move adding hop-bytes whose
        # moved flows do not take it is refused before any walk (kernels.refine_grid)
        ph, link = np.unravel_index(int(np.argmax(self.loads)), self.loads.shape)
        self.wit = np.array([ph, link, self.grid[-1][link]], dtype=np.int64)
        # minimal adaptive routing: the templates by offset code, kept as they are met, and
        # every flow's route entries (the work of a move refused unrouted)
        self.tpl = None
        if adaptive_steps_apply(st.router, m):
            store = template_store(dims, strides)
            self.tpl = store + (flow_route_entries(self.cores, self.cpn, self.alloc_nodes,
                                                   self.f_src, self.f_dst, dims, strides, wrap,
                                                   store),)
        self.scratch = np.zeros(n_links, dtype=np.float64)
        self.mark = np.zeros(n_links, dtype=np.bool_)

    @property
    def work(self) -> float:
        """Route entries looked at so far (:data:`REFINE_WORK`)."""
        return float(self.scal[3])

    def progress(self):
        """(busiest link bytes, links at it, hop-bytes), as :meth:`_State.progress`."""
        return (float(self.scal[0]), int(self.scal[1]), float(self.scal[2]))

    def run_search(self, rng, batch: int, src, dst, nb_ptr, nb_pos, counters, window_start,
                   behind, window: int, min_gain: float) -> str:
        """The search loop of :func:`refine_search` (its batches, table builds and stops) in
        one compiled call (:func:`rankmap.kernels.refine_grid.refine_batches`, which documents
        the arguments); returns why it stopped."""
        code = refine_batches(rng, batch, MAX_REFUSED, src, dst,
                              np.ascontiguousarray(nb_ptr, dtype=np.int64),
                              np.ascontiguousarray(nb_pos, dtype=np.int64), counters,
                              window_start, behind, window, float(min_gain),
                              float(REFINE_WORK),
                              REWEIGHT_RATIO, self.cores, self.rank_of_core, self.alloc_nodes,
                              self.cpn, *self.w, self.pcoords, self.f_src, self.f_dst,
                              self.f_bytes, self.f_off, self.rf_indptr, self.rf_fl, self.rf_off,
                              self.loads, self.members, self.n_members, self.in_set,
                              self.busy_len, self.added_len, self.top, self.n_top, self.phase_hb,
                              self.weight, self.scal, self.scratch, self.mark, *self.grid,
                              self.wit, self.tpl)
        return _STOPS[int(code)]

    def node_of(self, cores):
        """Machine node of every core."""
        return self.alloc_nodes[cores // self.cpn]

    def propose(self, a: int, ppos: int, opts: np.ndarray, c: int, wsym) -> int:
        """As :meth:`_State.propose`, in one compiled call."""
        return int(refine_step(a, ppos, np.ascontiguousarray(opts, dtype=np.int64), c,
                               self.cores, self.rank_of_core, self.alloc_nodes, self.cpn,
                               *self.w, self.pcoords, self.f_src, self.f_dst, self.f_bytes,
                               self.f_off,
                               self.rf_indptr, self.rf_fl, self.rf_off, self.loads,
                               self.members, self.n_members, self.in_set, self.busy_len,
                               self.added_len, self.top, self.n_top, self.phase_hb, self.weight,
                               self.scal, self.scratch, self.mark, *self.grid, self.wit,
                               self.tpl))


def _target_gains(mover: int, targets: np.ndarray, st: _State, wsym) -> np.ndarray:
    """Hop-bytes saved by moving rank ``mover`` onto each of ``targets`` (cores), swapping with
    the rank there if any, all from one call of the machine's hop distance.

    For target core t holding rank v (or none): the sum over ``mover``'s partners x (x != v)
    of w * (h(here, x) - h(t, x)), plus over v's partners y (y != ``mover``) of
    w * (h(t, y) - h(here, y)), where ``here`` is ``mover``'s core and h the hop distance of
    the cores' nodes (:func:`~rankmap.mappers.swap_refine.side_gain` of both ranks).

    Parameters
    ----------
    mover : int
        The rank that moves.
    targets : numpy.ndarray
        int64 allocation cores it may move to.
    st : _State
        The search's placement (cores of ranks, rank of cores, nodes).
    wsym : scipy.sparse.csr_matrix
        Bytes between ranks, both directions
        (:func:`~rankmap.mappers.swap_refine.symmetric_bytes`).

    Returns
    -------
    numpy.ndarray
        float64 bytes x hops saved per target (negative: added).
    """
    cpn, nodes, cores = st.cpn, st.alloc_nodes, st.cores
    n_t = len(targets)
    here_node = nodes[int(cores[mover]) // cpn]
    t_node = nodes[targets // cpn]
    holder = st.rank_of_core[targets]
    a0, a1 = wsym.indptr[mover], wsym.indptr[mover + 1]
    xa, wa = wsym.indices[a0:a1], wsym.data[a0:a1]
    xa_node = nodes[cores[xa] // cpn]
    rows, flat = partner_entries(wsym.indptr, holder)
    y, wy = wsym.indices[flat], wsym.data[flat]
    y_node = nodes[cores[y] // cpn]
    da, dy = len(xa), len(y)
    h = st.machine.hop_distance(
        np.concatenate([np.full(da, here_node), np.repeat(t_node, da), t_node[rows],
                        np.full(dy, here_node)]),
        np.concatenate([xa_node, np.tile(xa_node, n_t), y_node, y_node])).astype(np.float64)
    h_here_x, h_t_x = h[:da], h[da:da + n_t * da].reshape(n_t, da)
    h_t_y, h_here_y = h[da + n_t * da:da + n_t * da + dy], h[da + n_t * da + dy:]
    gain = np.where(xa[None, :] == holder[:, None], 0.0,
                    (h_here_x[None, :] - h_t_x) * wa[None, :]).sum(axis=1)
    keep = y != mover
    return gain + np.bincount(rows[keep], weights=(wy * (h_t_y - h_here_y))[keep],
                              minlength=n_t)


def _best_target(mover: int, ppos: int, opts, st: _State, wsym) -> int:
    """The core on the partner's node (``ppos``) or a node linked to it (``opts``) whose move
    (a swap with the rank there, if any) saves the most hop-bytes (:func:`_target_gains`), or
    -1 when none saves any; whether the move is kept is still decided by
    :meth:`_State.try_move`.
    """
    tp = np.concatenate([[ppos], opts]).astype(np.int64)
    tps = (tp[:, None] * st.cpn + np.arange(st.cpn)).reshape(-1)
    g = _target_gains(mover, tps, st, wsym)
    k = int(np.argmax(g))
    return int(tps[k]) if g[k] > 0 else -1


@dataclass(frozen=True, eq=False)
class RefineRun:
    """What one refinement did (:func:`refine_search`).

    ``cores`` is the placement returned (never worse than the start); ``proposals`` the
    proposed moves evaluated, ``accepted`` those kept, ``windows`` the completed windows of
    :data:`GAIN_WINDOW` proposals, and ``stop`` why the search ended: ``"budget"``,
    ``"work"`` (:data:`REFINE_WORK` route entries),
    ``"refused"`` (:data:`MAX_REFUSED` in a row), ``"small gain"`` (expected gain below
    :data:`MIN_GAIN`), ``"behind"`` (not expected to reach the busiest link it was to catch),
    ``"no flows"`` or ``"no hops"``.
    """

    cores: np.ndarray
    proposals: int
    accepted: int
    windows: int
    stop: str


def refine_cores(start: np.ndarray, pattern, machine, allocation, seed: int = 0,
                 budget: int | None = None, routing: "Router | str | None" = None, *,
                 catch: float | None = None) -> np.ndarray:
    """Locally improved copy of placement ``start`` (see module docstring); never worse.

    Parameters
    ----------
    start : array of int
        Core of every rank to start from.
    pattern, machine, allocation
        The inputs.
    seed : int
        Seed of the proposals.
    budget : int, optional
        Proposed moves to evaluate at most (default :func:`default_budget`).
    routing : Router or str, optional
        The routing the objective is measured under (default: the machine's).
    catch : float, optional
        Busiest link bytes the search must be expected to reach to go on
        (:func:`refine_search`).

    Returns
    -------
    numpy.ndarray
        Core of every rank.
    """
    return refine_search(start, pattern, machine, allocation, seed, budget, routing,
                         catch=catch).cores


def refine_search(start: np.ndarray, pattern, machine, allocation, seed: int = 0,
                  budget: int | None = None, routing: "Router | str | None" = None, *,
                  min_gain: float | None = None, window: int | None = None,
                  catch: float | None = None, compiled: bool | None = None) -> RefineRun:
    """:func:`refine_cores` with a record of the work done (see module docstring).

    Parameters
    ----------
    start : array of int
        Core of every rank to start from.
    pattern, machine, allocation
        The inputs.
    seed : int
        Seed of the proposals.
    budget : int, optional
        Proposed moves to evaluate at most (default :func:`default_budget`).
    routing : Router or str, optional
        The routing the objective is measured under (default: the machine's).
    min_gain : float, optional
        Relative gain the rest of the budget must be expected to bring (the last window's gain
        times the windows left) for the search to go on (default :data:`MIN_GAIN`; 0 switches
        the small-gain stop off).
    window : int, optional
        Proposals per window of the small-gain stop (default :data:`GAIN_WINDOW`).
    catch : float, optional
        Busiest link bytes (the worst phase's) the search must be expected to reach: while
        its own are above, it ends (``"behind"``) after a window when, at the pace of its last
        :data:`BEHIND_WINDOWS` windows, the rest of the budget would not bring them down to
        ``catch`` (``auto`` gives a refinement the best start's busiest link: a search that
        cannot catch up with it is not the pick). Default: no such stop.
    compiled : bool, optional
        Judge proposals in one compiled call
        (:func:`rankmap.kernels.refine_grid.refine_step`; only where it gives the same
        results: dimension order or minimal adaptive routing on a torus or mesh, or d-mod-k on
        a k-ary n-tree, whole-number bytes) or in Python (False).
        Default: compiled where it applies.

    Returns
    -------
    RefineRun
        The placement (core of every rank) and the proposals made, kept and why it stopped.
    """
    budget = default_budget(pattern.n_ranks) if budget is None else check_budget(budget)
    min_gain = MIN_GAIN if min_gain is None else float(min_gain)
    window = GAIN_WINDOW if window is None else int(window)
    if window < 1:
        raise ValueError(f"window must be at least 1, not {window}")
    if not 0.0 <= min_gain < 1.0:
        raise ValueError(f"min_gain must be in [0, 1), not {min_gain}")
    if catch is not None and not (np.isfinite(catch) and catch > 0):
        raise ValueError(f"catch must be a positive number of bytes, not {catch}")
    routing = router_for(machine, routing)
    start = np.asarray(start, dtype=np.int64)
    st = _State(pattern, machine, allocation, routing, start)
    if not st.phases or budget <= 0:
        return RefineRun(start, 0, 0, 0, "no flows" if not st.phases else "budget")
    start_objective = st.objective()           # routed from scratch: the exact check's base
    rng = np.random.default_rng(check_seed(seed))
    src = np.concatenate([p.src for p in st.phases])
    dst = np.concatenate([p.dst for p in st.phases])
    w = np.concatenate([p.bytes for p in st.phases])
    indptr, nbrs = neighbour_csr(machine, allocation)
    cpn = st.cpn
    left = budget
    refused = 0
    batch = 256
    proposals = accepted = windows = 0
    window_start = np.array(st.progress(), dtype=np.float64)
    behind = np.zeros(1 + BEHIND_WINDOWS)   # the catch value, then the busiest link's history
    behind[0] = 0.0 if catch is None else float(catch)
    behind[1] = window_start[0]
    # bytes between ranks (all phases, both directions) rank the targets of a move
    wsym = symmetric_bytes([(p.src, p.dst, p.bytes) for p in st.phases], pattern.n_ranks)
    applies = _GridState.applies(st)
    if compiled and not applies:
        raise ValueError("the compiled refinement step needs dimension-order or minimal "
                         "adaptive routing on a torus or mesh, or d-mod-k on a k-ary n-tree, "
                         "and whole-number bytes")
    if applies if compiled is None else compiled:
        st = _GridState(st, pattern, wsym)
        src, dst = st.f_src, st.f_dst
    else:
        st.use_compiled_targets(wsym)
    stop = "budget"
    built = 0.0                            # st.work when the weights were built
    stale = False
    cdf = None
    if isinstance(st, _GridState):
        # the loop below, every batch and table build in one compiled call
        counters = np.array([left, proposals, accepted, windows, refused, 0], dtype=np.int64)
        stop = st.run_search(rng, batch, src, dst, indptr, nbrs, counters, window_start,
                             behind, window, min_gain)
        left, proposals, accepted, windows, refused, _stale = (int(v) for v in counters)
    while left > 0 and not isinstance(st, _GridState):
        if refused >= MAX_REFUSED:
            stop = "refused"
            break
        if st.work > REFINE_WORK:
            stop = "work"
            break
        if cdf is None or (stale and (st.work - built) * REWEIGHT_RATIO >= len(src)):
            total, cdf = st.draw_table(src, dst, w)
            if total <= 0:
                stop = "no hops"
                break
            built, stale = st.work, False
        # as rng.choice(len(src), batch, p=weight / total) draws, without rebuilding the table
        picks = cdf.searchsorted(rng.random(batch), side="right")
        flip = rng.random(batch) < 0.5
        for f, fl in zip(picks, flip):
            if left <= 0 or st.work > REFINE_WORK:
                break
            a, partner = (int(src[f]), int(dst[f])) if fl else (int(dst[f]), int(src[f]))
            ppos = int(st.cores[partner]) // cpn
            opts = nbrs[indptr[ppos]:indptr[ppos + 1]]
            # opts[rng.integers(n)] draws as rng.choice(opts) does, without its overhead
            tpos = (ppos if len(opts) == 0 or rng.random() < 0.3
                    else int(opts[rng.integers(len(opts))]))
            c = tpos * cpn + int(rng.integers(cpn))
            kept = st.propose(a, ppos, opts, c, wsym)
            if kept < 0:
                continue
            left -= 1
            proposals += 1
            if proposals % window == 0:
                windows += 1
                counters = np.array([left, proposals, accepted, windows, refused, 0],
                                    dtype=np.int64)
                code = window_stop(counters, window_start, behind, window, min_gain,
                                   np.array(st.progress(), dtype=np.float64))
                if code != GO_ON:
                    stop = _STOPS[int(code)]
                    left = 0
                    break
            if kept:
                accepted += 1
                refused = 0
                stale = True
                if (st.work - built) * REWEIGHT_RATIO >= len(src):
                    break                   # weights changed: draw again
                continue
            refused += 1
        if left <= 0:
            break
    # exact check (everything routed again): never return something worse than the start
    if accepted == 0:
        return RefineRun(start, proposals, accepted, windows, stop)
    final = _State(pattern, machine, allocation, routing, st.cores)
    cores = st.cores if final.objective() <= start_objective else start
    return RefineRun(cores, proposals, accepted, windows, stop)


@dataclass(frozen=True)
class Refine:
    """The mapper ``refine:<start>`` as a value.

    Refines ``start``'s placement (:func:`refine_cores`) with at most ``budget`` proposed
    moves (None: :func:`default_budget`) under ``router`` (a router or routing name; None:
    the machine's default). ``start`` is a :class:`~rankmap.mappers.base.MapperInfo`, as the
    registry resolves ``<start>``.
    """

    start: MapperInfo
    budget: int | None = None
    router: "Router | str | None" = None

    @property
    def name(self) -> str:
        """``refine:<start's name>``."""
        return f"refine:{self.start.name}"

    def __call__(self, pattern, machine, allocation, seed: int = 0) -> np.ndarray:
        """Core of every rank: ``start``'s placement, refined.

        Parameters
        ----------
        pattern : Pattern
            The pattern.
        machine : Machine
            The machine.
        allocation : Allocation
            The allocation.
        seed : int
            Seed of the start mapper and of the proposals.

        Returns
        -------
        numpy.ndarray
            int64 allocation core of every rank; never worse than the start on (busiest link
            bytes, hop-bytes) under ``router``.
        """
        base = self.start.place(pattern, machine, allocation, seed).core_of_rank
        return refine_cores(base, pattern, machine, allocation, seed, self.budget, self.router)
