"""``refine`` and ``refine:<mapper>``: swap-based local search on a placement.

Starting from another mapper's placement (``refine`` alone starts from ``graph``), the search
repeatedly proposes to move a rank next to one of its communication partners: a flow is drawn
with probability proportional to its bytes x hops, one of its ends is moved onto a core of
the other end's node or of a node linked to it, swapping with the rank already there (or
taking a free core). Only the flows of the ranks that move are re-routed (``machine.route`` on
those flows, their old routes subtracted and new ones added), so a proposal costs about as
much as routing a handful of flows. A proposal is kept only when it lowers the objective:
the busiest link's bytes (worst phase), then the hop-bytes (all phases). The search stops
after ``budget`` seconds (:func:`settings`, default 2 s) or when many proposals in a row were
refused, and the result is checked by routing everything again: it is never worse than the
start.
"""

from __future__ import annotations

import contextlib
import contextvars
import time

import numpy as np

from ..errors import RankmapError
from .geometry import check_seed
from .registry import MapperFamily, MapperInfo, build_mapping, register, register_family, resolve

#: default time budget of one refinement, seconds
DEFAULT_BUDGET_S = 2.0
#: stop after this many refused proposals in a row
MAX_REFUSED = 1500

_SETTINGS = contextvars.ContextVar("refine_settings", default={"budget": DEFAULT_BUDGET_S,
                                                               "routing": None})


@contextlib.contextmanager
def settings(budget: float | None = None, routing: str | None = None):
    """Within this block, refinements use ``budget`` seconds and ``routing`` (None: default)."""
    if budget is not None and not budget >= 0:
        raise RankmapError(f"bad --budget {budget}: must be a non-negative number of seconds")
    cur = dict(_SETTINGS.get())
    if budget is not None:
        cur["budget"] = float(budget)
    if routing is not None:
        cur["routing"] = routing
    token = _SETTINGS.set(cur)
    try:
        yield
    finally:
        _SETTINGS.reset(token)


def current_settings() -> dict:
    """The budget (seconds) and routing refinements use right now."""
    return dict(_SETTINGS.get())


def _rank_flow_csr(src, dst, n_ranks):
    """CSR of flow indices touching each rank (as source or destination)."""
    f = np.arange(len(src))
    r = np.concatenate([src, dst])
    ff = np.concatenate([f, f])
    order = np.argsort(r, kind="stable")
    return np.searchsorted(r[order], np.arange(n_ranks + 1)), ff[order]


class _State:
    """Link loads per phase and hop-bytes under a placement; applies moves incrementally."""

    def __init__(self, pattern, machine, allocation, routing, cores):
        self.machine, self.routing = machine, routing
        self.alloc_nodes = allocation.nodes
        self.cpn = allocation.cores_per_node
        self.cores = cores.copy()
        self.rank_of_core = np.full(allocation.n_cores, -1, dtype=np.int64)
        self.rank_of_core[cores] = np.arange(len(cores))
        self.phases = [p for p in pattern.phases if p.n_flows]
        self.csr = [_rank_flow_csr(p.src, p.dst, pattern.n_ranks) for p in self.phases]
        self.loads, self.hb = [], 0.0
        node = self.node_of(self.cores)
        for p in self.phases:
            ld = machine.route(node[p.src], node[p.dst], p.bytes, routing)
            self.loads.append(ld.bytes.copy())
            self.hb += float(np.dot(ld.flow_hops, p.bytes))
        self.max = max((float(l.max()) for l in self.loads if l.size), default=0.0)

    def node_of(self, cores):
        return self.alloc_nodes[cores // self.cpn]

    def objective(self):
        return (self.max, self.hb)

    def try_move(self, moves: dict[int, int]) -> bool:
        """Give rank r the core moves[r] for every r; keep it only if the objective drops."""
        ranks = np.fromiter(moves.keys(), dtype=np.int64)
        old = {r: int(self.cores[r]) for r in moves}
        for r, c in moves.items():
            self.cores[r] = c
        deltas, dhb = [], 0.0
        for p, (indptr, fl) in zip(self.phases, self.csr):
            idx = np.unique(np.concatenate([fl[indptr[r]:indptr[r + 1]] for r in ranks]))
            if len(idx) == 0:
                deltas.append(None)
                continue
            s, d, w = p.src[idx], p.dst[idx], p.bytes[idx]
            new_s, new_d = self.node_of(self.cores[s]), self.node_of(self.cores[d])
            for r in ranks:
                self.cores[r] = old[r]
            old_s, old_d = self.node_of(self.cores[s]), self.node_of(self.cores[d])
            for r, c in moves.items():
                self.cores[r] = c
            ld = self.machine.route(np.concatenate([old_s, new_s]), np.concatenate([old_d, new_d]),
                                    np.concatenate([-w, w]), self.routing)
            deltas.append(ld.bytes)
            k = len(idx)
            dhb += float(np.dot(ld.flow_hops[k:], w) - np.dot(ld.flow_hops[:k], w))
        new_max = max((float((l + d).max()) if d is not None else float(l.max())
                       for l, d in zip(self.loads, deltas) if l.size), default=0.0)
        tol = 1e-9 * max(self.max, 1.0)
        better = new_max < self.max - tol or (new_max <= self.max + tol
                                              and dhb < -1e-9 * max(self.hb, 1.0))
        if not better:
            for r in ranks:
                self.cores[r] = old[r]
            return False
        for i, d in enumerate(deltas):
            if d is not None:
                self.loads[i] += d
        self.max, self.hb = new_max, self.hb + dhb
        for r in ranks:
            self.rank_of_core[old[r]] = -1
        for r, c in moves.items():
            self.rank_of_core[c] = r
        return True


def _neighbours(machine, allocation):
    """CSR of allocation positions linked to each allocation position."""
    from .greedy import _neighbour_csr
    return _neighbour_csr(machine, allocation)


def refine_cores(start: np.ndarray, pattern, machine, allocation, seed: int = 0,
                 budget: float | None = None, routing: str | None = None) -> np.ndarray:
    """Locally improved copy of placement ``start`` (see module docstring); never worse."""
    cfg = current_settings()
    budget = cfg["budget"] if budget is None else budget
    routing = machine.check_routing(routing if routing is not None else cfg["routing"])
    start = np.asarray(start, dtype=np.int64)
    st = _State(pattern, machine, allocation, routing, start)
    if not st.phases or budget <= 0:
        return start
    rng = np.random.default_rng(check_seed(seed))
    src = np.concatenate([p.src for p in st.phases])
    dst = np.concatenate([p.dst for p in st.phases])
    w = np.concatenate([p.bytes for p in st.phases])
    indptr, nbrs = _neighbours(machine, allocation)
    cpn = st.cpn
    t_end = time.perf_counter() + budget
    refused = 0
    batch = 256
    while time.perf_counter() < t_end and refused < MAX_REFUSED:
        node = st.node_of(st.cores)
        hops = machine.hop_distance(node[src], node[dst]).astype(np.float64)
        weight = hops * w
        total = weight.sum()
        if total <= 0:
            break
        picks = rng.choice(len(src), size=batch, p=weight / total)
        flip = rng.random(batch) < 0.5
        for f, fl in zip(picks, flip):
            if time.perf_counter() >= t_end:
                break
            a, partner = (int(src[f]), int(dst[f])) if fl else (int(dst[f]), int(src[f]))
            ppos = int(st.cores[partner]) // cpn
            opts = nbrs[indptr[ppos]:indptr[ppos + 1]]
            tpos = ppos if len(opts) == 0 or rng.random() < 0.3 else int(rng.choice(opts))
            c = tpos * cpn + int(rng.integers(cpn))
            if c == st.cores[a]:
                continue
            b = int(st.rank_of_core[c])
            moves = {a: c} if b < 0 else {a: c, b: int(st.cores[a])}
            if st.try_move(moves):
                refused = 0
                break                       # weights changed: draw again
            refused += 1
    # exact check: never return something worse than the start
    final = _State(pattern, machine, allocation, routing, st.cores)
    base = _State(pattern, machine, allocation, routing, start)
    return st.cores if final.objective() <= base.objective() else start


def _parse_refine(name: str, machine):
    key = name.strip()
    if not key.lower().startswith("refine:"):
        return None
    inner = key.split(":", 1)[1].strip()
    if not inner:
        raise RankmapError(f"bad mapping {name!r}: say what to refine, e.g. refine:greedy")
    info = resolve(inner, machine)

    def fn(pattern, machine, allocation, seed, _inner=inner):
        start = build_mapping(_inner, pattern, machine, allocation, seed).core_of_rank
        return refine_cores(start, pattern, machine, allocation, seed)

    return MapperInfo(f"refine:{info.name}", fn, f"swap refinement of {info.name}",
                      info.applies, in_all=False)


register_family(MapperFamily(prefix="refine:<mapping>", parse=_parse_refine,
                             description="swap-based local search started from another mapping"))


@register("refine", "graph placement improved by swap-based local search", in_all=False)
def refine(pattern, machine, allocation, seed):
    """``refine:graph`` (see module docstring)."""
    start = build_mapping("graph", pattern, machine, allocation, seed).core_of_rank
    return refine_cores(start, pattern, machine, allocation, seed)
