"""Cheap lower bounds of a placement's ranking key, computed before routing, and the pruning
rule ``auto`` uses them for.

:func:`placement_bound` reads only the placement's node of every rank, the machine's hop
distances and link capacities (no routing, no time model). For every phase it bounds:

* the hop-bytes: every flow between nodes crosses at least the machine's shortest hop
  distance (any routing, minimal or not, adaptive fractions included);
* the busiest link's bytes: the link bytes of a phase sum to at least its hop-bytes, so
  the busiest of the ``n_links`` links carries at least hop-bytes / ``n_links``; on a grid
  (torus or mesh) every flow leaving node n takes one of n's own out-links first (and enters
  its destination by one of its in-links), so the busiest link also carries at least a node's
  bytes out (in) divided by its number of out- (in-) links;
* the predicted time (when the evaluator's time model is on): under max-min sharing a
  resource of capacity c carrying B bytes is busy at least B / c seconds, so the last
  transfer of the phase ends no sooner than hop-bytes / (sum of link capacities), a grid
  node's bytes out (in) / (capacity of its out- (in-) links), a node's injected (ejected)
  bytes / ``nic_bw`` and a node's bytes between its own ranks / ``mem_bw`` (shared memory,
  on nodes without NUMA domains);
  the phase ends at that time plus the per-message overhead, and no sooner than the overhead
  plus the largest shortest hop count x the per-hop latency. Phase times add up.

:func:`routed_time_bound` bounds the predicted time once a placement is routed, before the
time model runs: each phase lasts at least its busiest link's bytes / capacity plus the
per-message overhead.

:class:`Pruner` turns bounds into decisions that depend on the candidates and their bounds
only: candidates are evaluated in order of their bound (ties in the order given), and a
candidate whose bound exceeds the ``keep``-th best real key among those evaluated so far is
skipped, because it cannot be among the ``keep`` best (``auto`` refines its two best, so it
keeps two); with a near-tie band (:mod:`rankmap.metrics.ranking`; none by default) the bound
must also exceed the band of the fastest so far, inside which hop-bytes decide the order. The
time model's default ``tolerance`` retires flows finishing within a relative 0.1% of each
other together, so its times are within 1% of the exact event-by-event model
(``tests/test_timing_exact.py``); a time bound therefore prunes only beyond
:data:`TIME_SLACK` above the real value it is compared with (1e-9 for the exact model and for
the link bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.torus import phase_bound_sums
from ..machines import GridMachine
from ..metrics import LinkMetrics
from ..metrics.ranking import NEAR_TIE
from ..timing import TimeModel

__all__ = ["Bound", "Pruner", "placement_bound", "ranking_bound_kind", "ranking_value",
           "routed_time_bound",
           "link_bytes_time_bound", "TIME_SLACK"]

#: relative margin a time bound must exceed a real predicted time by to prune (see module)
TIME_SLACK = 0.02
#: relative margin for bounds that are exact up to float rounding
EXACT_SLACK = 1e-9


@dataclass(frozen=True)
class Bound:
    """Lower bounds of one placement's metrics (module docstring).

    ``time_s``: predicted time in seconds (None when the time model is off);
    ``max_link_bytes``: the busiest link's bytes (worst phase); ``hop_bytes``: hop-bytes
    summed over phases.
    """

    time_s: float | None
    max_link_bytes: float
    hop_bytes: float

    def key(self) -> float:
        """The bounded first component of the ranking key.

        Returns
        -------
        float
            The predicted-time bound (s) when the time model ranks, else the busiest-link
            bound (bytes).
        """
        return self.time_s if self.time_s is not None else self.max_link_bytes


def ranking_bound_kind(evaluator) -> tuple[str, float] | None:
    """What the evaluator ranks by and the pruning margin, or None when nothing is bounded.

    Parameters
    ----------
    evaluator : rankmap.evaluation.Evaluator
        The evaluator whose metrics decide the ranking.

    Returns
    -------
    (str, float) or None
        ``("time", slack)`` when the time model fills in ``predicted_time_s``, ``("bytes",
        slack)`` when the busiest link decides, None when the evaluator has no link metrics
        (custom metrics: no pruning).
    """
    if not any(isinstance(m, LinkMetrics) for m in evaluator.metrics):
        return None
    model = [m for m in evaluator.metrics if isinstance(m, TimeModel) and m.options.enabled]
    if not model:
        return ("bytes", EXACT_SLACK)
    opts = model[0].options
    if opts.retire_fraction > 0:
        return None           # an approximation with no stated error bound: never prune
    return ("time", TIME_SLACK if opts.tolerance > 0 else EXACT_SLACK)


def ranking_value(metrics: dict, kind: str) -> float:
    """The first component of the ranking key that a bound of ``kind`` bounds.

    Parameters
    ----------
    metrics : dict
        A candidate's combined metrics.
    kind : str
        ``"time"`` or ``"bytes"`` (:func:`ranking_bound_kind`'s first field).

    Returns
    -------
    float
        ``predicted_time_s`` (s) for ``"time"``, else ``max_link_bytes`` (bytes).
    """
    return float(metrics["predicted_time_s"] if kind == "time" else metrics["max_link_bytes"])


def _time_options(evaluator):
    for m in evaluator.metrics:
        if isinstance(m, TimeModel) and m.options.enabled:
            return m.options
    return None


def placement_bound(evaluator, node_of_rank: np.ndarray) -> Bound:
    """Lower bounds of the metrics ``evaluator`` would give a placement (module docstring).

    Parameters
    ----------
    evaluator : rankmap.evaluation.Evaluator
        Machine, pattern and time-model options.
    node_of_rank : numpy.ndarray
        Machine node of every rank.

    Returns
    -------
    Bound
        Time (s; None with the time model off), busiest link bytes and hop-bytes bounds.
    """
    machine, pattern = evaluator.machine, evaluator.pattern
    opts = _time_options(evaluator)
    n_nodes = machine.n_nodes
    grid = isinstance(machine, GridMachine)
    cap = np.asarray(machine.link_bandwidth, dtype=np.float64)
    total_cap = float(cap.sum())
    n_links = machine.n_links
    if grid:
        src_l = np.asarray(machine.link_src, dtype=np.int64)
        dst_l = np.asarray(machine.link_dst, dtype=np.int64)
        out_deg = np.bincount(src_l, minlength=n_nodes).astype(np.float64)
        in_deg = np.bincount(dst_l, minlength=n_nodes).astype(np.float64)
        out_cap = np.bincount(src_l, weights=cap, minlength=n_nodes)
        in_cap = np.bincount(dst_l, weights=cap, minlength=n_nodes)
    t_total, max_bytes, hb_total = 0.0, 0.0, 0.0
    for phase in pattern.phases:
        if phase.n_flows == 0:
            continue
        sums = (_grid_phase_sums if grid else _phase_sums)(
            machine, node_of_rank, phase, grid or (opts is not None and opts.nic_bw is not None))
        hops, bn, out_b, in_b, inside_b, inside_max, n_inside = sums
        hb = float(np.dot(hops, bn))
        hb_total += hb
        link_lb = hb / n_links if n_links else 0.0
        t_lb = hb / total_cap if total_cap > 0 else 0.0
        if grid and out_b is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                link_lb = max(link_lb, float(np.max(np.where(out_deg > 0, out_b / out_deg, 0))),
                              float(np.max(np.where(in_deg > 0, in_b / in_deg, 0))))
                t_lb = max(t_lb, float(np.max(np.where(out_cap > 0, out_b / out_cap, 0))),
                           float(np.max(np.where(in_cap > 0, in_b / in_cap, 0))))
        max_bytes = max(max_bytes, link_lb)
        if opts is None:
            continue
        if opts.nic_bw is not None and out_b is not None:
            t_lb = max(t_lb, float(out_b.max()) / opts.nic_bw, float(in_b.max()) / opts.nic_bw)
        if (opts.mem_bw is not None and n_inside > 0
                and machine.node_structure is None):
            # (with a node structure every NUMA domain has its own mem_bw: no such bound)
            if opts.mem_shared:
                t_lb = max(t_lb, float(inside_b().max()) / opts.mem_bw)
            else:
                t_lb = max(t_lb, float(inside_max) / opts.mem_bw)
        lat = machine.hop_latency_s if opts.hop_latency_s is None else opts.hop_latency_s
        t_lat = float(hops.max()) * lat if hops.size else 0.0
        t_total += max(t_lb, t_lat) + opts.overhead_s
    return Bound(t_total if opts is not None else None, max_bytes, hb_total)


def _phase_sums(machine, node_of_rank, phase, per_node: bool):
    """:func:`placement_bound`'s sums of one phase on any machine: hop counts and bytes of
    the flows between nodes (flow order), bytes out and in per node (None unless
    ``per_node`` and some flow leaves its node), a callable giving the bytes inside each
    node, the largest flow inside a node and how many there are."""
    s = node_of_rank[phase.src]
    d = node_of_rank[phase.dst]
    b = np.asarray(phase.bytes, dtype=np.float64)
    net = s != d
    sn, dn, bn = s[net], d[net], b[net]
    hops = machine.hop_distance(sn, dn).astype(np.float64) if sn.size else np.zeros(0)
    out_b = in_b = None
    if sn.size and per_node:
        out_b = np.bincount(sn, weights=bn, minlength=machine.n_nodes)
        in_b = np.bincount(dn, weights=bn, minlength=machine.n_nodes)
    inside = ~net
    n_inside = int(inside.sum())
    return (hops, bn, out_b, in_b,
            lambda: np.bincount(s[inside], weights=b[inside], minlength=machine.n_nodes),
            float(b[inside].max()) if n_inside else -np.inf, n_inside)


def _grid_phase_sums(machine, node_of_rank, phase, per_node: bool):
    """:func:`_phase_sums` on a torus or mesh in one compiled pass
    (:func:`rankmap.kernels.torus.phase_bound_sums`: the same values, sums in flow order)."""
    hops, bn, out_b, in_b, inside_b, inside_max, n_inside = phase_bound_sums(
        np.ascontiguousarray(node_of_rank, dtype=np.int64),
        np.ascontiguousarray(phase.src, dtype=np.int64),
        np.ascontiguousarray(phase.dst, dtype=np.int64),
        np.ascontiguousarray(phase.bytes, dtype=np.float64), int(machine.n_nodes),
        machine.dims.astype(np.int64), machine.strides.astype(np.int64),
        machine.wrap.astype(np.bool_))
    if not (len(hops) and per_node):
        out_b = in_b = None
    return hops, bn, out_b, in_b, lambda: inside_b, float(inside_max), int(n_inside)


def routed_time_bound(evaluator, routed) -> float | None:
    """A lower bound of the predicted time of a placement already routed, before the time model.

    Every link carries its phase's routed bytes (the time model shares bandwidth over the same
    routes), so the phase lasts at least the busiest link's bytes / its capacity, and its last
    message adds the per-message overhead; phase times add up. This is far tighter than
    :func:`placement_bound` when one link is the bottleneck (all-to-all phases), and costs a
    pass over the links.

    Parameters
    ----------
    evaluator : rankmap.evaluation.Evaluator
        The evaluator (machine and time-model options).
    routed : list of rankmap.metrics.routed.RoutedPhase
        ``evaluator.route(placement)``.

    Returns
    -------
    float or None
        Seconds; None when the evaluator's time model is off.
    """
    return link_bytes_time_bound(evaluator, [phase.loads.bytes for phase in routed])


def link_bytes_time_bound(evaluator, link_bytes: list) -> float | None:
    """:func:`routed_time_bound` from every phase's link bytes (an evaluation's
    :attr:`~rankmap.evaluation.PhaseResult.link_bytes`, or a routed phase's loads).

    Parameters
    ----------
    evaluator : rankmap.evaluation.Evaluator
        The evaluator (machine, pattern and time-model options).
    link_bytes : list of numpy.ndarray
        Bytes on every link (B), one array per phase of the evaluator's pattern, in order.

    Returns
    -------
    float or None
        Seconds; None when the evaluator's time model is off.
    """
    opts = _time_options(evaluator)
    if opts is None:
        return None
    cap = np.asarray(evaluator.machine.link_bandwidth, dtype=np.float64)
    total = 0.0
    for phase, nbytes in zip(evaluator.pattern.phases, link_bytes):
        if phase.n_flows == 0:
            continue
        loads = np.asarray(nbytes, dtype=np.float64)
        busy = float(np.max(loads / cap)) if loads.size else 0.0
        total += busy + opts.overhead_s
    return total


class Pruner:
    """Decides which candidates cannot be among the ``keep`` best (module docstring).

    Parameters
    ----------
    kind : (str, float)
        From :func:`ranking_bound_kind`: ``"time"`` or ``"bytes"`` and the relative slack.
    keep : int
        How many of the best candidates must stay exact (``auto`` refines its best two).
    near_tie : float
        Tolerance of the ranking's near-tie band (:mod:`rankmap.metrics.ranking`; default 0,
        design.md's rule): with a band, any candidate within it of the fastest may win.
    """

    def __init__(self, kind: tuple[str, float], keep: int, near_tie: float = NEAR_TIE):
        self.kind, self.slack = kind
        self.keep = max(1, int(keep))
        self.near_tie = float(near_tie)
        self._real: list[float] = []

    def _value(self, metrics: dict) -> float:
        return ranking_value(metrics, self.kind)

    def record(self, metrics: dict) -> None:
        """Note an evaluated candidate's real metrics.

        Parameters
        ----------
        metrics : dict
            The candidate's combined metrics (``predicted_time_s`` in s or
            ``max_link_bytes`` in bytes is read).
        """
        self._real.append(self._value(metrics))
        self._real.sort()

    def threshold(self) -> float | None:
        """The value a candidate must exceed to be out of the ``keep`` best.

        Returns
        -------
        float or None
            The larger of the ``keep``-th best real value so far and the top of the near-tie
            band of the fastest so far (:mod:`rankmap.metrics.ranking`; with a band any member
            may be first), in s or bytes as the ranking; None until ``keep`` were evaluated.
        """
        if len(self._real) < self.keep:
            return None
        return max(self._real[self.keep - 1], self._real[0] * (1.0 + self.near_tie))

    def reason(self, bound: Bound, when: str = "before routing") -> str | None:
        """Why a candidate cannot be among the best.

        Parameters
        ----------
        bound : Bound
            The candidate's lower bound.
        when : str
            When the bound was computed, for the message (``"before routing"``, or
            ``"after routing"`` for :func:`routed_time_bound`).

        Returns
        -------
        str or None
            The reason it is pruned (recorded as skipped), or None: evaluate it.
        """
        t = self.threshold()
        if t is None:
            return None
        lb = bound.key()
        if lb > t * (1.0 + self.slack):
            band = (f" and the near tie of the {'fastest' if self.kind == 'time' else 'lightest'}"
                    if self.near_tie > 0 else "")
            if self.kind == "time":
                return (f"pruned {when}: its predicted time is at least "
                        f"{lb * 1e3:.4g} ms, above the {_ordinal(self.keep)} evaluated{band} "
                        f"({t * 1e3:.4g} ms)")
            return (f"pruned {when}: its busiest link carries at least "
                    f"{lb / 2**20:.4g} MiB, above the {_ordinal(self.keep)} evaluated{band} "
                    f"({t / 2**20:.4g} MiB)")
        return None


def _ordinal(k: int) -> str:
    """``best`` for 1, else ``2nd best``, ``3rd best``, ``4th best`` ..."""
    return "best" if k == 1 else {2: "2nd", 3: "3rd"}.get(k, f"{k}th") + " best"
