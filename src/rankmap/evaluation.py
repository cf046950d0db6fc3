"""Evaluating placements: route every phase's flows and compute metrics; compare candidates.

An :class:`Evaluator` binds one machine, allocation, pattern and routing model; its
:meth:`Evaluator.evaluate` takes any :class:`~rankmap.mappers.Mapping` and is reused for every
candidate, so nothing about the machine is rebuilt per candidate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .allocation import Allocation
from .errors import RankmapError
from .machines import Machine
from .mappers import Mapping, all_candidate_names, build_mapping
from .metrics import DEFAULT_PLATEAU_Y, combine, phase_metrics, ranking_key
from .patterns import Pattern


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

    mapping: Mapping
    phases: list[PhaseResult]
    metrics: dict
    extra: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The mapping's name."""
        return self.mapping.name

    def to_json(self) -> dict:
        """``{"mapping", "metrics", "phases": [{"name", "metrics"}]}`` as in design.md."""
        d = {"mapping": self.name, "metrics": self.metrics,
             "phases": [{"name": p.name, "metrics": p.metrics} for p in self.phases]}
        d.update(self.extra)
        return d


#: hooks that add metrics to a phase: fn(evaluator, phase, node_src, node_dst, loads) -> dict.
#: The time model and the bisection model register here.
PHASE_METRIC_HOOKS: list[Callable] = []


class Evaluator:
    """Routes the phases of ``pattern`` on ``machine`` for any placement."""

    def __init__(self, machine: Machine, allocation: Allocation, pattern: Pattern,
                 routing: str | None = None, plateau_y: float = DEFAULT_PLATEAU_Y):
        self.machine = machine
        self.allocation = allocation
        self.pattern = pattern
        self.routing = machine.check_routing(routing)
        self.plateau_y = plateau_y
        if not 0 < plateau_y <= 1:
            raise RankmapError(f"bad plateau fraction {plateau_y}: must be in (0, 1]")

    def evaluate(self, mapping: Mapping) -> Evaluation:
        """Route every phase under ``mapping``; return loads and metrics."""
        node_of_rank = mapping.nodes(self.allocation)
        results = []
        for phase in self.pattern.phases:
            s = node_of_rank[phase.src]
            d = node_of_rank[phase.dst]
            loads = self.machine.route(s, d, phase.bytes, self.routing)
            m = phase_metrics(loads.bytes, loads.streams, loads.flow_hops, phase.bytes,
                              self.plateau_y)
            for hook in PHASE_METRIC_HOOKS:
                m.update(hook(self, phase, s, d, loads) or {})
            results.append(PhaseResult(phase.name, m, loads.bytes, loads.streams))
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

    @property
    def best(self) -> Evaluation:
        """The winning candidate (lowest ranking key)."""
        return self.candidates[0]

    def find(self, name: str) -> Evaluation | None:
        """The candidate called ``name`` or None."""
        for c in self.candidates:
            if c.name == name:
                return c
        return None

    def to_json(self) -> dict:
        """The JSON document of ``compare --format json`` (design.md)."""
        d = {"machine": self.machine.describe(), "allocation": self.allocation.describe(),
             "pattern": self.pattern.describe(), "routing": self.routing,
             "candidates": [c.to_json() for c in self.candidates],
             "best": self.best.name}
        if self.skipped:
            d["skipped"] = self.skipped
        return d


def expand_names(names: list[str] | str, pattern: Pattern, machine: Machine,
                 allocation: Allocation) -> list[str]:
    """Turn ``--mappings`` (a list, or a comma string, possibly with ``all``) into names."""
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    out: list[str] = []
    for n in names:
        if n.lower() == "all":
            out.extend(all_candidate_names(pattern, machine, allocation))
        else:
            out.append(n)
    if not out:
        raise RankmapError("no mappings to compare")
    return list(dict.fromkeys(out))


def compare(machine: Machine, allocation: Allocation, pattern: Pattern, names,
            routing: str | None = None, seed: int = 0, plateau_y: float = DEFAULT_PLATEAU_Y,
            progress: Callable[[str], None] | None = None,
            skip_inapplicable: bool = False) -> Comparison:
    """Build and evaluate every named mapping; return them sorted best first.

    ``progress(name)`` is called after each candidate. With ``skip_inapplicable`` a mapper
    that fails on this input is recorded in ``skipped`` instead of stopping the comparison.
    """
    evaluator = Evaluator(machine, allocation, pattern, routing, plateau_y)
    names = expand_names(names, pattern, machine, allocation)
    results, skipped = [], {}
    for name in names:
        try:
            mapping = build_mapping(name, pattern, machine, allocation, seed)
        except RankmapError as exc:
            if not skip_inapplicable:
                raise
            skipped[name] = str(exc)
            if progress:
                progress(name)
            continue
        results.append(evaluator.evaluate(mapping))
        if progress:
            progress(name)
    if not results:
        raise RankmapError("no candidate could be placed: " + "; ".join(skipped.values()))
    results.sort(key=lambda e: ranking_key(e.metrics))
    return Comparison(machine, allocation, pattern, evaluator.routing, results, skipped)


# The time model registers its phase hook (predicted_time_s) on import.
from . import timing as _timing  # noqa: E402,F401

# The bisection model of seed 004 adds bisection_m / bisection_time_s to fft2d phases.
from .metrics.bisection import bisection_hook as _bisection_hook  # noqa: E402

PHASE_METRIC_HOOKS.append(_bisection_hook)
