"""``auto``: evaluate every applicable mapper and keep the best (seed 001's automatic choice).

Candidates: every name ``--mappings all`` would try except ``random`` (rank orders, inorder,
greedy, mueller-resch, rcb, cubes, graph, rubik presets, ...), then ``refine:`` of the two best. All of
them are evaluated by one :class:`rankmap.evaluation.Evaluator` (one routed model of the
machine), ranked by :func:`rankmap.metrics.ranking_key` (design.md's rule: predicted time when
a time model fills it in, else busiest link bytes then hop-bytes). Above
:data:`GRAPH_RANK_LIMIT` ranks the KaHIP ``graph`` mapper is left out to keep ``auto`` within
seconds (it is recorded as skipped, with the reason).
"""

from __future__ import annotations

from typing import Callable

from ..errors import RankmapError
from .refine import refine_cores
from .registry import all_candidate_names, build_mapping, register, validate_mapping

#: above this many ranks ``auto`` does not run the (slow) graph mapper
GRAPH_RANK_LIMIT = 8192
#: how many of the best candidates ``auto`` refines
REFINE_TOP = 2


def candidate_names(pattern, machine, allocation) -> list[str]:
    """The names ``auto`` evaluates before refining (``--mappings all`` minus itself)."""
    return [n for n in all_candidate_names(pattern, machine, allocation)
            if n not in ("auto", "refine", "random")]


def auto_select(pattern, machine, allocation, seed: int = 0, routing: str | None = None,
                plateau_y: float | None = None, progress: Callable | None = None,
                total_hook: Callable[[int], None] | None = None):
    """Evaluate every candidate and the refinement of the best two; return the Comparison
    (sorted best first; the winner is ``comparison.best``)."""
    from ..evaluation import Comparison, Evaluator
    from ..metrics import DEFAULT_PLATEAU_Y, ranking_key

    evaluator = Evaluator(machine, allocation, pattern, routing,
                          DEFAULT_PLATEAU_Y if plateau_y is None else plateau_y)
    names = candidate_names(pattern, machine, allocation)
    if total_hook:
        total_hook(len(names) + REFINE_TOP)
    results, skipped = [], {}
    for name in names:
        if name == "graph" and pattern.n_ranks > GRAPH_RANK_LIMIT:
            skipped[name] = (f"left out by auto above {GRAPH_RANK_LIMIT} ranks "
                             f"({pattern.n_ranks}) to stay fast")
        else:
            try:
                results.append(evaluator.evaluate(
                    build_mapping(name, pattern, machine, allocation, seed)))
            except RankmapError as exc:
                skipped[name] = str(exc)
        if progress:
            progress(name)
    if not results:
        raise RankmapError("auto: no candidate could be placed: " + "; ".join(skipped.values()))
    results.sort(key=lambda e: ranking_key(e.metrics))
    for base in results[:REFINE_TOP]:
        cores = refine_cores(base.mapping.core_of_rank, pattern, machine, allocation, seed,
                             routing=evaluator.routing)
        mapping = validate_mapping(f"refine:{base.name}", cores, pattern.n_ranks, allocation)
        results.append(evaluator.evaluate(mapping))
        if progress:
            progress(f"refine:{base.name}")
    results.sort(key=lambda e: ranking_key(e.metrics))
    return Comparison(machine, allocation, pattern, evaluator.routing, results, skipped)


@register("auto", "the best of every applicable mapper and the refinement of the best two",
          in_all=False)
def auto(pattern, machine, allocation, seed):
    """The winner of :func:`auto_select` (default routing and refine budget)."""
    return auto_select(pattern, machine, allocation, seed).best.mapping.core_of_rank
