"""Evaluating placements: route every phase once and compute the given metrics.

An :class:`Evaluator` binds one machine, allocation, pattern, router and list of phase
metrics; its :meth:`Evaluator.evaluate` takes any :class:`~rankmap.mappers.Placement` and is
reused for every candidate, so nothing about the machine is rebuilt per candidate. Each phase
is routed once (:meth:`rankmap.routing.Router.for_phase` then ``loads``) and every metric
reads that one :class:`~rankmap.metrics.RoutedPhase`. Comparing named candidates, ``auto``
included, is the selection layer's job (:mod:`rankmap.selection`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .allocation import Allocation
from .errors import RankmapError
from .machines import Dragonfly, Machine
from .mappers import Placement
from .metrics import DEFAULT_PLATEAU_Y, LinkMetrics, PhaseMetric, RoutedPhase, combine
from .metrics import bisection
from .metrics.dragonfly_hops import DragonflyClassHops
from .metrics.node_domains import NodeDomainBytes, core_in_node_of_ranks
from .patterns import Pattern
from .routing import Router, router_for
from .routing.groups import flow_groups, grouped_loads
from .routing.symmetry import phase_symmetry
from .routing.torus import DOR, Adaptive
from .timing import TimeModel, TimeOptions

__all__ = ["Evaluator", "Evaluation", "PhaseResult", "Comparison", "default_metrics"]


@dataclass
class PhaseResult:
    """One phase of one candidate: its metrics and its per-link loads."""

    name: str
    metrics: dict
    link_bytes: np.ndarray
    link_streams: np.ndarray


@dataclass
class Evaluation:
    """A candidate placement, its per-phase results and combined metrics."""

    mapping: Placement
    phases: list[PhaseResult]
    metrics: dict
    extra: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The mapping's name."""
        return self.mapping.name

    def renamed(self, name: str) -> "Evaluation":
        """This evaluation under another mapping name (same cores, phases and metrics).

        Parameters
        ----------
        name : str
            The other mapper's name (one placing every rank as this one does).

        Returns
        -------
        Evaluation
            A new evaluation; its metrics and extra keys are copies.
        """
        return Evaluation(Placement(name, self.mapping.core_of_rank), self.phases,
                          dict(self.metrics), dict(self.extra))

    def to_json(self) -> dict:
        """The candidate as JSON (design.md).

        Returns
        -------
        dict
            ``{"mapping", "metrics", "phases": [{"name", "metrics"}]}`` plus any extra keys
            (notes of the mapper); bytes in bytes, times in seconds.
        """
        d = {"mapping": self.name, "metrics": self.metrics,
             "phases": [{"name": p.name, "metrics": p.metrics} for p in self.phases]}
        d.update(self.extra)
        return d


def default_metrics(machine: Machine, pattern: Pattern, plateau_y: float = DEFAULT_PLATEAU_Y,
                    time_options: TimeOptions | None = None) -> list[PhaseMetric]:
    """The metrics every command reports, in the order their keys appear.

    Parameters
    ----------
    machine : Machine
        The network (dragonflies add class hops, grids the bisection model of fft2d).
    pattern : Pattern
        The communication pattern.
    plateau_y : float
        Fraction of links under the plateau point, in (0, 1].
    time_options : TimeOptions, optional
        Time-model settings (default: :class:`TimeOptions`'s); ``enabled=False`` leaves the
        time model out.

    Returns
    -------
    list of PhaseMetric
        Link metrics, bytes inside nodes and across NUMA domains and sockets (machines with a
        node structure), then the time model, the bisection model, dragonfly class hops
        (those that apply).
    """
    time_options = time_options if time_options is not None else TimeOptions()
    out: list[PhaseMetric] = [LinkMetrics(plateau_y)]
    if machine.node_structure is not None:
        out.append(NodeDomainBytes(machine.node_structure))
    if time_options.enabled:
        out.append(TimeModel(time_options))
    if bisection.applies(machine, pattern):
        out.append(bisection.Bisection(pattern))
    if isinstance(machine, Dragonfly):
        out.append(DragonflyClassHops())
    return out


class Evaluator:
    """Routes the phases of ``pattern`` on ``machine`` for any placement.

    Parameters
    ----------
    machine, allocation, pattern
        The inputs.
    router : Router, str or None
        The routing (a router of ``machine``, a routing name, or None for the default).
    plateau_y : float
        Plateau fraction of the default link metrics (ignored when ``metrics`` is given).
    metrics : list of PhaseMetric, optional
        The phase metrics (default: :func:`default_metrics` with ``time_options``).
    time_options : TimeOptions, optional
        Time-model settings of the default metrics.
    """

    def __init__(self, machine: Machine, allocation: Allocation, pattern: Pattern,
                 router: Router | str | None = None, plateau_y: float = DEFAULT_PLATEAU_Y,
                 *, metrics: list[PhaseMetric] | None = None,
                 time_options: TimeOptions | None = None):
        self.machine = machine
        self.allocation = allocation
        self.pattern = pattern
        allocation.check_on(machine)
        self.router = router_for(machine, router)
        self.plateau_y = plateau_y
        if not 0 < plateau_y <= 1:
            raise RankmapError(f"bad plateau fraction {plateau_y}: must be in (0, 1]")
        self.metrics = (list(metrics) if metrics is not None else
                        default_metrics(machine, pattern, plateau_y, time_options))

    def _symmetry_used(self, router: Router) -> str | None:
        """What a phase's translation symmetry serves: ``"loads"`` (looked for while
        routing, then handed to the time model) under minimal adaptive routing, and under
        dimension order when an exact time model (``retire_fraction`` 0) takes it too: the
        search, one cell's routes and their sums cost less than routing every group (0.06
        against 0.10 s on the 131,072-rank stencil), so a symmetric placement costs less
        even when routing prunes it (an asymmetric one pays for the search, 0.02 s there).
        ``"time"`` when only a time model that is switched on uses it (it looks for it when
        it runs: a placement pruned after routing never does), else None."""
        if type(router) is Adaptive:
            return "loads"
        timed = [m.options for m in self.metrics
                 if isinstance(m, TimeModel) and m.options.enabled]
        if not timed:
            return None
        if type(router) is DOR and any(o.retire_fraction == 0 for o in timed):
            return "loads"
        return "time"

    @property
    def routing(self) -> str:
        """The routing's name."""
        return self.router.name

    @property
    def time_model(self) -> dict:
        """What the predicted times assume: ``enabled``, and when on the time model's
        settings (:meth:`rankmap.timing.TimeOptions.describe`: bandwidths in bytes/s, the
        per-message overhead in s), as the JSON output records them."""
        timed = [m.options for m in self.metrics
                 if isinstance(m, TimeModel) and m.options.enabled]
        if not timed:
            return {"enabled": False}
        return {"enabled": True, **timed[0].describe()}

    def route(self, mapping: Placement) -> list[RoutedPhase]:
        """Every phase of the pattern routed once under ``mapping``.

        Parameters
        ----------
        mapping : Placement
            The placement.

        Returns
        -------
        list of RoutedPhase
            One per phase, in the pattern's order.
        """
        mapping.check(self.pattern.n_ranks, self.allocation)
        node_of_rank = mapping.nodes(self.allocation)
        core_in_node = core_in_node_of_ranks(mapping, self.machine, self.allocation)
        out = []
        for phase in self.pattern.phases:
            s = node_of_rank[phase.src]
            d = node_of_rank[phase.dst]
            router = self.router.for_phase(s, d, phase.bytes)
            groups = flow_groups(s, d, phase.bytes)
            # a translation-invariant phase: its cell's routes serve the loads and the time model
            # (False: none, or none that anything here would use; not looked for again; None:
            # the time model looks for it, with the same routes, if it runs)
            used = self._symmetry_used(router)
            sym = ((phase_symmetry(router, groups.src, groups.dst, groups.nbytes, groups.count)
                    or False) if used == "loads" else None if used == "time" else False)
            loads, groups = grouped_loads(router, s, d, phase.bytes, groups, sym)
            out.append(RoutedPhase(phase, node_of_rank, s, d, loads, router, core_in_node,
                                   groups, sym))
        return out

    def evaluate(self, mapping: Placement) -> Evaluation:
        """Route every phase under ``mapping`` once; return loads and metrics.

        Parameters
        ----------
        mapping : Placement
            The placement.

        Returns
        -------
        Evaluation
            Per-phase metrics and link loads, and the combined metrics.
        """
        return self.evaluate_routed(mapping, self.route(mapping))

    def evaluate_routed(self, mapping: Placement, routed: list[RoutedPhase]) -> Evaluation:
        """The metrics of a placement whose phases :meth:`route` has already routed.

        Parameters
        ----------
        mapping : Placement
            The placement.
        routed : list of RoutedPhase
            ``self.route(mapping)``.

        Returns
        -------
        Evaluation
            Per-phase metrics and link loads, and the combined metrics.
        """
        results = []
        for phase in routed:
            m: dict = {}
            for metric in self.metrics:
                m.update(metric(phase))
            results.append(PhaseResult(phase.phase.name, m, phase.loads.bytes,
                                       phase.loads.streams))
        return Evaluation(mapping, results, combine([r.metrics for r in results]))


@dataclass
class Comparison:
    """The result of comparing candidates: evaluations sorted best first."""

    machine: Machine
    allocation: Allocation
    pattern: Pattern
    routing: str
    candidates: list[Evaluation]
    skipped: dict[str, str] = field(default_factory=dict)
    #: what the predicted times assume (:attr:`Evaluator.time_model`), when known
    time_model: dict | None = None

    @property
    def best(self) -> Evaluation:
        """The winning candidate (lowest ranking key)."""
        return self.candidates[0]

    def find(self, name: str) -> Evaluation | None:
        """The candidate called ``name``.

        Parameters
        ----------
        name : str
            A candidate (mapping) name, as in the table.

        Returns
        -------
        Evaluation or None
            The candidate, or None when none has that name.
        """
        for c in self.candidates:
            if c.name == name:
                return c
        return None

    def to_json(self) -> dict:
        """The JSON document of ``compare --format json`` (design.md).

        Returns
        -------
        dict
            Machine, allocation, pattern, routing, every candidate's :meth:`Evaluation.to_json`
            and the best candidate's name; strict JSON values.
        """

        d = {"machine": self.machine.describe(), "allocation": self.allocation.describe(),
             "pattern": self.pattern.describe(), "routing": self.routing,
             "candidates": [c.to_json() for c in self.candidates],
             "best": self.best.name}
        if self.time_model is not None:
            d["time_model"] = self.time_model
        if self.skipped:
            d["skipped"] = self.skipped
        return d
