"""``compare``: build and evaluate named candidates (``auto`` included) with one evaluator."""

from __future__ import annotations

from typing import Callable

from ..errors import RankmapError
from ..evaluation import Comparison, Evaluator
from ..mappers import same_placement_as
from ..metrics import DEFAULT_PLATEAU_Y
from .candidates import evaluate_candidates, expand_names, skip_summary, sort_best_first
from .names import build_placement, is_auto

__all__ = ["compare"]


def compare(machine, allocation, pattern, names, routing=None, seed: int = 0,
            plateau_y: float = DEFAULT_PLATEAU_Y, progress: Callable[[str], None] | None = None,
            skip_inapplicable: bool = False, *, time_options=None, budget: int | None = None,
            metrics=None, executor=None, stage: Callable[[str, str], None] | None = None,
            in_node: bool = True) -> Comparison:
    """Build and evaluate every named mapping; return them sorted best first.

    Parameters
    ----------
    machine, allocation, pattern
        The inputs.
    names : list of str or str
        Candidate names (``--mappings``; ``all`` expands).
    routing : Router or str, optional
        The routing every candidate is evaluated, refined and selected (``auto``) under.
    seed : int
        Seed of randomised mappers.
    plateau_y : float
        Plateau fraction of the link metrics.
    progress : callable, optional
        Called after each candidate with its name.
    skip_inapplicable : bool
        Record a mapper that fails on this input in ``skipped`` instead of stopping.
    time_options : TimeOptions, optional
        Time-model settings.
    budget : int, optional
        Work bound (proposed moves) of ``refine`` candidates and of ``auto``'s refinements.
    metrics : list of PhaseMetric, optional
        Phase metrics instead of the defaults.
    executor : Executor, optional
        Runs the candidates (and ``auto``'s own candidates) in parallel
        (:mod:`rankmap.selection.parallel`, :mod:`rankmap.mpi.spread`); the result is the
        serial one.
    stage : callable, optional
        ``stage(name, what)`` when a candidate starts being built, routed or refined.
    in_node : bool
        On a machine with a node structure, run the in-node placement step after every
        mapper (default); False keeps the mappers' cores (``--in-node keep``). With the time
        model on, a node keeps its new order only where it is predicted no slower
        (:func:`~rankmap.selection.in_node.time_accept`), the rule ``auto`` applies too.

    Returns
    -------
    Comparison
        The candidates, best first.
    """
    evaluator = Evaluator(machine, allocation, pattern, routing, plateau_y, metrics=metrics,
                          time_options=time_options)
    names = expand_names(names, pattern, machine, allocation)
    results, skipped = evaluate_candidates(
        evaluator, names,
        lambda n: build_placement(n, pattern, machine, allocation, seed, budget=budget,
                                  evaluator=evaluator, executor=executor, in_node=in_node,
                                  stage=stage and (lambda c, what: stage(n, f"{what} {c} for"))),
        skip_inapplicable=skip_inapplicable, progress=progress, executor=executor,
        stage=stage, in_parent=is_auto,
        same_as=lambda n: same_placement_as(n, pattern, machine, allocation))
    if not results:
        raise RankmapError("no candidate could be placed: " + skip_summary(skipped))
    return Comparison(machine, allocation, pattern, evaluator.routing, sort_best_first(results),
                      skipped, time_model=evaluator.time_model)
