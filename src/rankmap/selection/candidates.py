"""The one candidate loop of ``compare`` and ``auto``: build each named placement, evaluate
it with one :class:`~rankmap.evaluation.Evaluator`, sort by the ranking rule."""

from __future__ import annotations

from typing import Callable

from ..errors import RankmapError
from ..evaluation import Evaluation, Evaluator
from ..mappers import all_candidate_names
from ..metrics import best_first_order

__all__ = ["expand_names", "evaluate_candidates", "sort_best_first"]


def expand_names(names: list[str] | str, pattern, machine, allocation) -> list[str]:
    """Turn ``--mappings`` (a list, or a comma string, possibly with ``all``) into names.

    Parameters
    ----------
    names : list of str or str
        Mapping names; ``all`` expands to every applicable one.
    pattern, machine, allocation
        The inputs (what applies depends on them).

    Returns
    -------
    list of str
        Distinct names in order.
    """
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


def sort_best_first(results: list[Evaluation]) -> list[Evaluation]:
    """Evaluations best first by the ranking rule (:mod:`rankmap.metrics.ranking`: fastest
    first, candidates within 5 % of the fastest ordered by hop-bytes)."""
    return [results[i] for i in best_first_order([e.metrics for e in results])]


def evaluate_candidates(evaluator: Evaluator, names: list[str], build: Callable,
                        skip: Callable[[str], str | None] | None = None,
                        skip_inapplicable: bool = True,
                        progress: Callable[[str], None] | None = None
                        ) -> tuple[list[Evaluation], dict[str, str]]:
    """Build and evaluate every named candidate.

    Parameters
    ----------
    evaluator : Evaluator
        Evaluates every candidate (one routed model of the machine).
    names : list of str
        Candidate names, in order.
    build : callable
        ``build(name) -> Mapping``.
    skip : callable, optional
        ``skip(name)`` returns a reason to leave a name out without building it, or None.
    skip_inapplicable : bool
        Record a candidate whose mapper fails (RankmapError) as skipped instead of raising.
    progress : callable, optional
        Called with each name once it is done.

    Returns
    -------
    (list of Evaluation, dict)
        The evaluations in the order of ``names`` and the skipped names with their reasons.
    """
    results, skipped = [], {}
    for name in names:
        reason = skip(name) if skip else None
        if reason is not None:
            skipped[name] = reason
        else:
            try:
                mapping = build(name)
            except RankmapError as exc:
                if not skip_inapplicable:
                    raise
                skipped[name] = str(exc)
                mapping = None
            if mapping is not None:
                results.append(evaluator.evaluate(mapping))
        if progress:
            progress(name)
    return results, skipped
