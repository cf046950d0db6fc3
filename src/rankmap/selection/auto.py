"""``auto``: evaluate every applicable mapper and keep the best (seed 001's automatic choice).

Candidates: every name ``--mappings all`` would try except ``random`` (rank orders, inorder,
greedy, mueller-resch, rcb, cubes, graph, rubik presets, ...), then ``refine:`` of the two
best. All of them are evaluated by one :class:`rankmap.evaluation.Evaluator` (one router, one
list of metrics), ranked by :func:`rankmap.metrics.ranking_key` (design.md's rule: predicted
time when a time model fills it in, else busiest link bytes then hop-bytes); the refinements
search under the evaluator's router. Above :data:`GRAPH_RANK_LIMIT` ranks the KaHIP ``graph``
mapper is left out to keep ``auto`` within seconds (recorded as skipped, with the reason).
"""

from __future__ import annotations

from typing import Callable

from ..errors import RankmapError
from ..evaluation import Comparison, Evaluator
from ..mappers import all_candidate_names, build_mapping, validate_mapping
from ..mappers.domain_placement import in_node_step
from ..mappers.refine import refine_cores
from ..metrics import DEFAULT_PLATEAU_Y
from .candidates import evaluate_candidates, sort_best_first

__all__ = ["auto_select", "candidate_names", "GRAPH_RANK_LIMIT", "REFINE_TOP"]

#: above this many ranks ``auto`` does not run the (slow) graph mapper
GRAPH_RANK_LIMIT = 8192
#: how many of the best candidates ``auto`` refines
REFINE_TOP = 2


def candidate_names(pattern, machine, allocation) -> list[str]:
    """The names ``auto`` evaluates before refining (``--mappings all`` minus itself)."""
    return [n for n in all_candidate_names(pattern, machine, allocation)
            if n not in ("auto", "refine", "random")]


def auto_select(pattern, machine, allocation, seed: int = 0, routing=None,
                plateau_y: float | None = None, progress: Callable | None = None,
                total_hook: Callable[[int], None] | None = None, *, budget: int | None = None,
                time_options=None, evaluator: Evaluator | None = None) -> Comparison:
    """Evaluate every candidate and the refinement of the best two.

    Parameters
    ----------
    pattern, machine, allocation
        The inputs.
    seed : int
        Seed of randomised mappers and of the refinements.
    routing : Router or str, optional
        Routing to select and refine under (default: the machine's); ignored when
        ``evaluator`` is given (its router is used).
    plateau_y : float, optional
        Plateau fraction of the link metrics.
    progress : callable, optional
        Called with each candidate name when done.
    total_hook : callable, optional
        Called once with the number of steps.
    budget : int, optional
        Work bound of each refinement (proposed moves).
    time_options : TimeOptions, optional
        Time-model settings of the evaluator.
    evaluator : Evaluator, optional
        The evaluator to use (e.g. ``compare``'s own).

    Returns
    -------
    Comparison
        Every candidate sorted best first; the winner is ``comparison.best``.
    """
    if evaluator is None:
        evaluator = Evaluator(machine, allocation, pattern, routing,
                              DEFAULT_PLATEAU_Y if plateau_y is None else plateau_y,
                              time_options=time_options)
    names = candidate_names(pattern, machine, allocation)
    if total_hook:
        total_hook(len(names) + REFINE_TOP)

    def skip(name):
        if name == "graph" and pattern.n_ranks > GRAPH_RANK_LIMIT:
            return (f"left out by auto above {GRAPH_RANK_LIMIT} ranks "
                    f"({pattern.n_ranks}) to stay fast")
        return None

    results, skipped = evaluate_candidates(
        evaluator, names, lambda n: build_mapping(n, pattern, machine, allocation, seed),
        skip=skip, progress=progress)
    if not results:
        raise RankmapError("auto: no candidate could be placed: " + "; ".join(skipped.values()))
    results = sort_best_first(results)

    def refined(name):
        base = next(e for e in results if e.name == name.split(":", 1)[1])
        cores = refine_cores(base.mapping.core_of_rank, pattern, machine, allocation, seed,
                             budget, evaluator.router)
        cores = in_node_step(cores, pattern, machine, allocation, seed)
        return validate_mapping(name, cores, pattern.n_ranks, allocation)

    more, _ = evaluate_candidates(evaluator, [f"refine:{e.name}" for e in results[:REFINE_TOP]],
                                  refined, skip_inapplicable=False, progress=progress)
    results = sort_best_first(results + more)
    return Comparison(machine, allocation, pattern, evaluator.routing, results, skipped)
