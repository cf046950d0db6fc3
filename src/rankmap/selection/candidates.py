"""The one candidate loop of ``compare`` and ``auto``: build each named placement, evaluate
it with one :class:`~rankmap.evaluation.Evaluator`, sort by the ranking rule."""

from __future__ import annotations

from typing import Callable

from ..errors import RankmapError
from ..evaluation import Evaluation, Evaluator
from ..mappers import all_candidate_names, inapplicable_names
from ..metrics import best_first_order
from .parallel import Executor, Filler, Outcome, SerialExecutor

__all__ = ["split_names", "distinct_names", "expand_names", "evaluate_candidates", "sort_best_first", "dispatch_order",
           "is_slow", "job_size", "skip_summary", "SLOW_MAPPERS"]

#: mappers that take much longer than routing a candidate (partitioning, local search): parallel
#: workers start them first, so that the cheap ones fill the other workers meanwhile
SLOW_MAPPERS = ("graph", "refine", "swap:", "auto", "greedy")


def split_names(text: str) -> list[str]:
    """Split a comma list of mapping names, keeping a ``rubik:`` spec's sizes whole.

    A ``rubik: app tile 1,8,16; ...`` spec has commas of its own: a piece that starts
    with a digit continues the ``rubik:`` spec before it (no mapping name starts with one).

    Parameters
    ----------
    text : str
        ``--mappings``' value, e.g. ``inorder,rubik: app tile 1,8,16; net tile 8,8,2,rcb``.

    Returns
    -------
    list of str
        The names, stripped.

    Raises
    ------
    RankmapError
        On no name at all, or an empty item (``inorder,,greedy``): as ``--nodes`` refuses
        one, rather than dropping it (inside a ``rubik:`` spec's sizes, ``4,,4`` is left to
        the spec's own check, which refuses the empty size).
    """
    from ..validate import is_digits, show

    if not text.strip():
        raise RankmapError(f"bad --mappings {text!r}: no values")
    out: list[str] = []          # pieces as given: a rubik spec keeps its own spacing
    for piece in text.split(","):
        if out and "rubik:" in out[-1].lower() and (is_digits(piece.strip()[:1])
                                                     or not piece.strip()):
            out[-1] += "," + piece
        elif piece.strip():
            out.append(piece)
        else:
            raise RankmapError(f"bad --mappings {show(text)}: an empty item")
    return [o.strip() for o in out]


def expand_names(names: list[str] | str, pattern, machine, allocation,
                 inapplicable: bool = False) -> list[str]:
    """Turn ``--mappings`` (a list, or a comma string, possibly with ``all``) into names.

    Parameters
    ----------
    names : list of str or str
        Mapping names; ``all`` expands to every applicable one.
    pattern, machine, allocation
        The inputs (what applies depends on them).
    inapplicable : bool
        ``all`` also gives, after them, the mappers that do not apply here
        (:func:`rankmap.mappers.registry.inapplicable_names`), for a comparison that lists
        them as skipped with the reason.

    Returns
    -------
    list of str
        Distinct names in order.
    """
    if isinstance(names, str):
        names = split_names(names)
    out: list[str] = []
    for n in names:
        if n.lower() == "all":
            out.extend(all_candidate_names(pattern, machine, allocation))
            if inapplicable:
                out.extend(inapplicable_names(pattern, machine, allocation))
        else:
            out.append(n)
    if not out:
        raise RankmapError("no mappings to compare")
    return distinct_names(out)


def distinct_names(names: list[str]) -> list[str]:
    """Mapping names without repeats: names are case-blind (rcb and RCB, TXYZ and txyz are
    one mapper), and runs of spaces inside one (a rubik spec's) count as one.

    Parameters
    ----------
    names : list of str
        Mapping names, in order.

    Returns
    -------
    list of str
        One name per mapper, in order of first appearance, each as first spelled.
    """
    first: dict[str, str] = {}
    for n in names:
        first.setdefault(" ".join(n.lower().split()), n)
    return list(first.values())


def dispatch_order(names: list[str]) -> list[int]:
    """Indices of ``names``, slow mappers (:data:`SLOW_MAPPERS`) first, else in order.

    Parameters
    ----------
    names : list of str
        Candidate names.

    Returns
    -------
    list of int
        A permutation of ``range(len(names))`` (longest expected work first).
    """
    return sorted(range(len(names)), key=lambda i: (not is_slow(names[i]), i))


def is_slow(name: str) -> bool:
    """Whether mapper ``name`` is one of :data:`SLOW_MAPPERS` (e.g. ``graph``, ``refine:X``).

    Parameters
    ----------
    name : str
        A candidate name (case and surrounding spaces do not matter).

    Returns
    -------
    bool
        True when the name starts with one of :data:`SLOW_MAPPERS`' prefixes.
    """
    return name.strip().lower().startswith(SLOW_MAPPERS)


def _twins(todo: list[str], same_as: Callable[[str], str | None]) -> dict[str, str]:
    """Names of ``todo`` whose placement another one of ``todo`` gives, with that name."""
    twins = {}
    for name in todo:
        other = same_as(name)
        if other is not None and other != name and other in todo and same_as(other) is None:
            twins[name] = other
    return twins


def skip_summary(skipped: dict[str, str], shown: int = 4) -> str:
    """Why candidates were skipped, each reason once, with the candidates it stopped.

    Parameters
    ----------
    skipped : dict of str to str
        The reason of every skipped candidate, by name, in the order they were tried.
    shown : int
        Names listed with one reason before the rest are counted (``and 3 more``).

    Returns
    -------
    str
        ``"REASON (a, b and 3 more)"`` per reason, in the order first met, joined by ``"; "``;
        ``"REASON (all 8 candidates)"`` when one reason stopped every one of several.
    """
    by_reason: dict[str, list[str]] = {}
    for name, reason in skipped.items():
        by_reason.setdefault(reason, []).append(name)
    parts = []
    for reason, names in by_reason.items():
        if len(by_reason) == 1 and len(names) > 1:
            who = f"all {len(names)} candidates"
        elif len(names) > shown:
            who = f"{', '.join(names[:shown])} and {len(names) - shown} more"
        else:
            who = ", ".join(names)
        parts.append(f"{reason} ({who})")
    return "; ".join(parts)


def sort_best_first(results: list[Evaluation]) -> list[Evaluation]:
    """Evaluations best first by the ranking rule (:mod:`rankmap.metrics.ranking`: lowest
    predicted time, exact ties by busiest link then hop-bytes).

    Parameters
    ----------
    results : list of Evaluation
        The evaluated candidates, in any order.

    Returns
    -------
    list of Evaluation
        The same evaluations, best first; equal keys keep their input order.
    """
    return [results[i] for i in best_first_order([e.metrics for e in results])]


def job_size(pattern) -> int:
    """The work of evaluating one candidate, in :meth:`Executor.for_work`'s units.

    Parameters
    ----------
    pattern : Pattern
        The pattern.

    Returns
    -------
    int
        Its ranks plus the flows of all its phases.
    """
    return pattern.n_ranks + sum(int(ph.n_flows) for ph in pattern.phases)


def evaluate_candidates(evaluator: Evaluator, names: list[str], build: Callable,
                        skip: Callable[[str], str | None] | None = None,
                        skip_inapplicable: bool = True,
                        progress: Callable[[str], None] | None = None, *,
                        executor: Executor | None = None,
                        stage: Callable[[str, str], None] | None = None,
                        building: str = "building",
                        in_parent: Callable[[str], bool] | None = None,
                        same_as: Callable[[str], str | None] | None = None,
                        item_work: int | None = None, fill: Filler | None = None
                        ) -> tuple[list[Evaluation], dict[str, str]]:
    """Build and evaluate every named candidate, in this process or spread by ``executor``.

    The result does not depend on the executor: evaluations come back in the order of
    ``names``, skipped names with the same reasons, and when a build fails (with
    ``skip_inapplicable`` False) the error is the first failing name's, as in a serial loop.

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
        Record a candidate whose mapper fails, or whose evaluation is refused (RankmapError:
        e.g. routes over the ``route_entries`` cap, as a random placement's under adaptive
        routing at 131,072 ranks), as skipped with the reason instead of raising.
    progress : callable, optional
        Called with each name once it is done.
    executor : Executor, optional
        Runs the candidates (:mod:`rankmap.selection.parallel`; default: in this process).
    stage : callable, optional
        ``stage(name, what)`` when a candidate starts being built (``building``) or routed
        (``"routing"``), for a progress bar.
    building : str
        The word for the build step (``"refining"`` for refinements).
    in_parent : callable, optional
        ``in_parent(name)`` is True for names whose ``build`` spreads its own work over the
        executor (``auto`` inside ``compare``): they are built first, here, not in a worker.
    same_as : callable, optional
        ``same_as(name)`` names another candidate whose placement is ``name``'s
        (:func:`rankmap.mappers.same_placement_as`), or None. When that one is among
        ``names`` too, ``name`` is not built: it gets the other's result, renamed (built after
        all when the other one fails or is skipped).
    item_work : int, optional
        The work of one name, in the units of :meth:`Executor.for_work`, when building it
        costs far more than evaluating it (a refinement); default: the pattern's ranks plus
        flows.
    fill : Filler, optional
        Speculative work for workers left idle (:meth:`Executor.run`); told of every name
        built (``item_done(name, outcome)``), here or in a worker. Never changes the result.

    Returns
    -------
    (list of Evaluation, dict)
        The evaluations in the order of ``names`` and the skipped names with their reasons.
    """
    executor = executor if executor is not None else SerialExecutor()
    pattern = getattr(evaluator, "pattern", None)
    if pattern is not None or item_work is not None:
        size = item_work if item_work is not None else job_size(pattern)
        executor = executor.for_work(len(names) * size)
    reasons = {n: skip(n) for n in names} if skip else {}
    todo = [n for n in names if reasons.get(n) is None]
    twins = _twins(todo, same_as) if same_as else {}

    def task(name, report):
        report(building)
        try:
            mapping = build(name)
        except RankmapError as exc:
            if not skip_inapplicable:
                raise
            return str(exc)
        report("routing")
        try:
            return evaluator.evaluate(mapping)
        except RankmapError as exc:
            if not skip_inapplicable:
                # a command's one error line says which of its candidates failed
                raise RankmapError(f"evaluating {name}: {exc}") from None
            return str(exc)

    outcome: dict[str, Outcome] = {}
    built = [n for n in todo if n not in twins]

    def run_here(name):
        try:
            outcome[name] = Outcome(task(name, lambda what, n=name: stage and stage(n, what)))
        except Exception as exc:  # noqa: BLE001 - raised below, in order
            outcome[name] = Outcome(error=exc)
        if progress:
            progress(name)

    first = [n for n in built if in_parent and in_parent(n)]
    if executor.workers > 1 and len(built) - len(first) > 1:
        # one cheap candidate here first: the routing and time-model kernels get loaded once,
        # before the workers fork, instead of once in every worker
        cheap = [n for n in built if not is_slow(n) and n not in first]
        first.extend(cheap[:1])
    for name in first:
        run_here(name)
        if fill is not None:
            fill.item_done(name, outcome[name])
    rest = [n for n in built if n not in outcome]
    outcomes = executor.run(
        task, rest,
        on_stage=(lambda i, what: stage(rest[i], what)) if stage else None,
        on_done=(lambda i: progress(rest[i])) if progress else None,
        order=dispatch_order(rest), fill=fill if executor.fills else None)
    outcome.update(zip(rest, outcomes))
    for name, twin in twins.items():
        out = outcome[twin]
        if not out.ran:
            outcome[name] = Outcome(ran=False)   # left out after an earlier failure
        elif out.error is None and not isinstance(out.value, str):
            outcome[name] = Outcome(out.value.renamed(name))
            if progress:
                progress(name)
        else:
            run_here(name)               # the twin did not place: this one reports itself
    if progress:
        for name in names:
            if reasons.get(name) is not None:
                progress(name)
    results, skipped = [], {}
    for name in names:
        if reasons.get(name) is not None:
            skipped[name] = reasons[name]
            continue
        out = outcome[name]
        if not out.ran:
            continue
        if out.error is not None:
            raise out.error
        if isinstance(out.value, str):
            skipped[name] = out.value
        else:
            results.append(out.value)
    return results, skipped
