"""``auto``: evaluate every applicable mapper and keep the best (seed 001's automatic choice).

Candidates: every name ``--mappings all`` would try except ``random`` (rank orders, inorder,
greedy, mueller-resch, rcb, cubes, graph, rubik presets, ...), then ``refine:`` of the two
best (the second only when its ranking value is within :data:`REFINE_SPREAD` of the best's:
a start that far behind is listed as skipped). All of them are evaluated by one
:class:`rankmap.evaluation.Evaluator` (one router, one list of metrics), ranked by
:func:`rankmap.metrics.ranking_key` (design.md's rule: predicted time when a time model fills
it in, else busiest link bytes then hop-bytes); the refinements
search under the evaluator's router, and one whose busiest link, at the pace of its last
windows, would not come down to the best start's within its budget ends early (refine's
``catch``: refining every candidate of 28 problems, none so cut would have ended ahead of the
best start's refinement, benchmarks/RESULTS_refine_starts.md). Above
:data:`GRAPH_RANK_LIMIT` ranks the KaHIP ``graph`` mapper is left out to keep ``auto`` within
seconds (recorded as skipped, with the reason).

Work that cannot change the pick is not done: every candidate is built first and given a cheap
lower bound of its ranking key (:mod:`rankmap.selection.bounds`, no routing); candidates are
then evaluated in order of their bound, and one whose bound exceeds the
:data:`REFINE_TOP`-th best real value so far is skipped with the reason (it can be neither
the pick nor a refinement start). A candidate placing every rank on the same core as one
already evaluated gets that evaluation, and its value counts among the best (it takes one of
the refinement starts' places); one whose mapper gives another candidate's placement
(``rcb`` of a pattern without a grid is ``graph``) is built once, and identical
refinement starts are refined once (in this process or in a worker; the other gets its
result); a refinement that returns a candidate's placement (a start it could not improve)
gets that candidate's evaluation. The pick, the refinements and every reported metric are
those of evaluating everything. A candidate whose evaluation is refused (routes over a size
limit such as ``RANKMAP_MAX_ROUTE_ENTRIES``) is left out with that reason.

With worker processes (up to :data:`SPECULATE_MAX_FLOWS` flows and
:data:`SPECULATE_MAX_LINK_ENTRIES`), candidates are evaluated ahead of the bound order: the
workers would otherwise idle while the slowest candidate (``graph``) is built and this process
then evaluates the others one by one. Workers (forked ones,
:class:`~rankmap.selection.parallel.ForkExecutor`, and MPI processes with one worker each)
evaluate only when they have nothing left to build, the built candidate of the lowest bound
first, leaving out those the best two evaluated so far prune (:class:`_Speculation`), and
stop when the last build ends; executors that cannot fill idle workers (MPI processes with
workers of their own) evaluate every candidate where it is built. The decisions stay those of
the bound order, taken here from the same bounds and values; evaluations of candidates the
order prunes are dropped.
That costs CPU time and saves wall time.
"""

from __future__ import annotations

from typing import Callable

from ..errors import RankmapError
from ..evaluation import Comparison, Evaluation, Evaluator
from ..mappers import (Placement, all_candidate_names, build_mapping, same_placement_as,
                       validate_mapping)
from ..mappers.domain_placement import in_node_step
from ..mappers.refine import BUDGET_PER_RANK, default_budget, refine_cores
from ..metrics import DEFAULT_PLATEAU_Y
from .bounds import (Bound, Pruner, link_bytes_time_bound, placement_bound, ranking_bound_kind,
                     ranking_value, routed_time_bound)
from .candidates import evaluate_candidates, job_size, skip_summary, sort_best_first
from .in_node import in_node_accept
from .parallel import Filler

__all__ = ["auto_select", "candidate_names", "step_count", "refine_catch", "GRAPH_RANK_LIMIT",
           "REFINE_TOP", "REFINE_SPREAD", "CATCH_SLACK", "SPECULATE_MAX_FLOWS",
           "SPECULATE_MAX_LINK_ENTRIES", "IDLE", "DONE"]

#: above this many ranks ``auto`` does not run the (slow) graph mapper
GRAPH_RANK_LIMIT = 8192
#: how many of the best candidates ``auto`` refines
REFINE_TOP = 2
#: ... each only when its ranking value (predicted time, or busiest link bytes with the time
#: model off) is at most this many times the best candidate's: over 41 problems
#: (bench_refine_starts' and bench_quality's), the second start was at most 1.47x the best
#: but on a 16,384-rank random graph (3.5x, its refinement 2.0x the best's after 1.6 s), and
#: of every start refined in benchmarks/RESULTS_refine_starts.md none further behind than
#: 1.83x ended ahead of the best start's refinement
REFINE_SPREAD = 2.5
#: a refinement is given the best start's busiest link bytes, times 1 + this, to catch
#: (:func:`rankmap.mappers.refine.refine_search`'s ``catch``)
CATCH_SLACK = 1e-6
#: with worker processes, candidates are evaluated where they are built when the pattern
#: has at most this many flows ...
SPECULATE_MAX_FLOWS = 1 << 20
#: ... and the candidates' link loads sent back (candidates x phases x links) at most this
#: many entries (16 bytes each)
SPECULATE_MAX_LINK_ENTRIES = 1 << 24
#: ``stage(name, IDLE)``: ``name`` has no step running any more, but is not done (built and
#: bounded, or routed ahead of the bound order by an idle worker: it waits for its turn)
IDLE = "idle"
#: ``stage(name, DONE)``: ``name`` is done, said through ``stage`` when no ``progress`` is
#: given (``compare``'s ``auto`` hears only ``stage``)
DONE = "done"


def candidate_names(pattern, machine, allocation) -> list[str]:
    """The names ``auto`` evaluates before refining (``--mappings all`` minus itself).

    Parameters
    ----------
    pattern : Pattern
        The communication pattern (its rank count decides which mappers apply).
    machine : Machine
        The machine.
    allocation : Allocation
        The job's nodes and cores per node.

    Returns
    -------
    list of str
        Every applicable candidate name except ``auto``, ``refine`` and ``random``, in
        ``--mappings all`` order.
    """
    return [n for n in all_candidate_names(pattern, machine, allocation)
            if n not in ("auto", "refine", "random")]


def step_count(pattern, machine, allocation) -> int:
    """The steps :func:`auto_select` reports (``total_hook``'s number): its candidates and
    :data:`REFINE_TOP` refinements.

    Parameters
    ----------
    pattern : Pattern
        The communication pattern.
    machine : Machine
        The machine.
    allocation : Allocation
        The job's nodes and cores per node.

    Returns
    -------
    int
        ``len(candidate_names(...)) + REFINE_TOP``.
    """
    return len(candidate_names(pattern, machine, allocation)) + REFINE_TOP


def auto_select(pattern, machine, allocation, seed: int = 0, routing=None,
                plateau_y: float | None = None, progress: Callable | None = None,
                total_hook: Callable[[int], None] | None = None, *, budget: int | None = None,
                time_options=None, evaluator: Evaluator | None = None, executor=None,
                stage: Callable[[str, str], None] | None = None,
                in_node: bool = True, baseline: bool = True) -> Comparison:
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
        Called with each candidate name when done (once each: a skipped candidate before
        the others are built, a pruned one as soon as the values evaluated so far prune it,
        :data:`REFINE_TOP` refinements or ``refine:`` names skipped).
    total_hook : callable, optional
        Called once with the number of steps (:func:`step_count`).
    budget : int, optional
        Work bound of each refinement (proposed moves).
    time_options : TimeOptions, optional
        Time-model settings of the evaluator.
    evaluator : Evaluator, optional
        The evaluator to use (e.g. ``compare``'s own).
    executor : Executor, optional
        Runs the candidates, then the refinements, in parallel
        (:mod:`rankmap.selection.parallel`, :mod:`rankmap.mpi.spread`); the result is the
        serial one (default: in this process).
    stage : callable, optional
        ``stage(name, what)`` when a candidate starts a step: ``"building"``, ``"bounding"``
        (its lower bound), ``"routing"`` (only when it is routed: evaluated in bound order,
        ahead of it by an idle worker, or where it was built), ``"refining"``; :data:`IDLE`
        when it has no step running but is not done; :data:`DONE` when it is done and no
        ``progress`` is given. The steps of one process's workers (the others' are not
        heard): each name has one step at a time.
    in_node : bool
        On a machine with a node structure, run the in-node placement step on every
        candidate and refinement (default); False keeps the mappers' cores. With the
        evaluator's time model on, a node keeps its new order only where it is predicted no
        slower (:func:`~rankmap.selection.in_node.time_accept`), as in ``compare``.
    baseline : bool
        Evaluate :data:`BASELINE` after the search when its bound pruned it, for the table
        (default); False leaves it among the skipped (for a caller that uses the pick only,
        as the MPI processes but rank 0 do: the pick is the same).

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
    count = _counter(progress, stage)

    def skip(name):
        if name == "graph" and pattern.n_ranks > GRAPH_RANK_LIMIT:
            return (f"left out by auto above {GRAPH_RANK_LIMIT} ranks "
                    f"({pattern.n_ranks}) to stay fast")
        return None

    accept = in_node_accept(pattern, machine, allocation, evaluator) if in_node else None
    kind = ranking_bound_kind(evaluator)
    ahead = _speculate(executor, names, pattern, machine)
    filler = _Speculation(evaluator, kind, names, stage) if ahead == "fill" else None
    if count:
        for name in names:          # left out unbuilt: done before anything is built
            if skip(name) is not None:
                count(name)
    # building (the costly part: graph, greedy, ...) is spread by the executor; routing
    # then goes in bound order in this process, so pruning never depends on timing
    prepared, skipped = evaluate_candidates(
        _Prepare(evaluator, kind is not None, ahead == "build"), names,
        lambda n: build_mapping(n, pattern, machine, allocation, seed, in_node=in_node,
                                in_node_accept=accept),
        skip=skip, executor=executor, stage=_build_stage(stage, kind, ahead),
        progress=stage and (lambda n: stage(n, IDLE)),
        same_as=lambda n: same_placement_as(n, pattern, machine, allocation), fill=filler)
    if filler is not None:
        filler.hand_out(prepared)
    if count:
        for name in skipped:
            count(name)
    results, pruned = _evaluate_in_bound_order(evaluator, prepared, kind, count, stage)
    skipped.update(pruned)
    if not results:
        raise RankmapError("auto: no candidate could be placed: " + skip_summary(skipped))
    results = sort_best_first(results)

    starts = {}
    for e in results[:REFINE_TOP]:
        # --budget 0 asks for no refinement: rows identical to their starts would say that
        # refining was tried
        reason = ("not refined: --budget 0" if budget is not None and int(budget) == 0
                  else _too_far_behind(e, results[0], kind))
        if reason is None:
            starts[f"refine:{e.name}"] = e
        else:
            skipped[f"refine:{e.name}"] = reason
            if count:
                count(f"refine:{e.name}")
    catch = refine_catch(results[0])
    # identical starts give identical refinements: the first is refined, the others get
    # its result (wherever the executor runs them)
    first_of: dict[bytes, str] = {}
    for name, e in starts.items():
        first_of.setdefault(e.mapping.core_of_rank.tobytes(), name)

    def refined(name):
        cores = refine_cores(starts[name].mapping.core_of_rank, pattern, machine, allocation,
                             seed, budget, evaluator.router, catch=catch)
        if in_node:
            cores = in_node_step(cores, pattern, machine, allocation, seed, accept)
        return validate_mapping(name, cores, pattern.n_ranks, allocation)

    def same_start(name):
        first = first_of[starts[name].mapping.core_of_rank.tobytes()]
        return None if first == name else first

    more, _ = evaluate_candidates(_Reuse(evaluator, results), list(starts),
                                  refined, skip_inapplicable=False, progress=count,
                                  executor=executor, stage=stage, building="refining",
                                  item_work=_refine_work(pattern, budget), same_as=same_start)
    results = sort_best_first(results + more)
    if baseline:
        results = _with_baseline(evaluator, prepared, skipped, results, stage)
    return Comparison(machine, allocation, pattern, evaluator.routing, results, skipped,
                      time_model=evaluator.time_model)


#: the placement a job gets without rankmap: ``auto`` always reports it, so that what the pick
#: gains over it can be said
BASELINE = "inorder"


def _counter(progress, stage):
    """The function ``auto_select`` says a candidate is done with: ``progress(name)``, else
    ``stage(name, DONE)``, once a name (None without either)."""
    if progress is None and stage is None:
        return None
    counted: set[str] = set()

    def count(name: str) -> None:
        if name not in counted:
            counted.add(name)
            if progress is not None:
                progress(name)
            else:
                stage(name, DONE)
    return count


def _build_stage(stage, kind, ahead):
    """``stage`` for the build loop: its ``"routing"`` step (the stand-in evaluator,
    :class:`_Prepare`) is ``"bounding"`` unless candidates are routed where they are built
    (and is not reported when there is no bound either)."""
    if stage is None:
        return None
    word = "routing" if ahead == "build" else "bounding" if kind is not None else None

    def build_stage(name: str, what: str) -> None:
        if what != "routing":
            stage(name, what)
        elif word is not None:
            stage(name, word)
    return build_stage


def _with_baseline(evaluator: Evaluator, prepared: list, skipped: dict,
                   results: list[Evaluation], stage=None) -> list[Evaluation]:
    """``results`` with :data:`BASELINE` evaluated after the search when its bound pruned it
    (it cannot have won: the search and its pick are unchanged; it sorts after every
    candidate it ties), and taken out of ``skipped``."""
    if BASELINE not in skipped or any(e.name == BASELINE for e in results):
        return results
    cand = next((c for c in prepared if c.name == BASELINE), None)
    if cand is None:
        return results
    if stage:
        stage(BASELINE, "routing")
    ev, _refused = evaluate_candidates(evaluator, [BASELINE], lambda _n: cand.mapping,
                                       skip_inapplicable=True)
    if stage:
        stage(BASELINE, IDLE)
    if not ev:
        return results
    del skipped[BASELINE]
    return sort_best_first(results + ev)


def refine_catch(best: Evaluation) -> float | None:
    """The busiest link a refinement must be expected to reach to go on.

    :func:`rankmap.mappers.refine.refine_search`'s ``catch``: the best start's busiest link
    bytes, raised by :data:`CATCH_SLACK` so that the best start's own search, and a tie's,
    whose sums may round the other way, never count as behind.

    Parameters
    ----------
    best : Evaluation
        The best refinement start.

    Returns
    -------
    float or None
        Bytes; None when its links carry nothing.
    """
    top = float(best.metrics.get("max_link_bytes", 0.0))
    return top * (1.0 + CATCH_SLACK) if top > 0 else None


def _too_far_behind(start: Evaluation, best: Evaluation, kind) -> str | None:
    """Why ``start`` is not refined (its ranking value above :data:`REFINE_SPREAD` times the
    best candidate's), or None; None too when the ranking has no such value (``kind``
    None: custom metrics)."""
    if kind is None or start is best:
        return None
    value, top = ranking_value(start.metrics, kind[0]), ranking_value(best.metrics, kind[0])
    if not (top > 0 and value > REFINE_SPREAD * top):
        return None
    what = "predicted time" if kind[0] == "time" else "busiest link"
    return (f"not refined: its start's {what} is {value / top:.3g}x the best candidate's "
            f"(above {REFINE_SPREAD:g}x)")


def _refine_work(pattern, budget: int | None) -> int:
    """Expected work of one refinement in :meth:`Executor.for_work`'s units (flows looked
    at): its proposals (the budget, or :data:`BUDGET_PER_RANK` a rank when fewer: the
    searches of converging placements stop on small gains about there) times the flows a
    proposal moves (both ranks' flows, both ends)."""
    n = max(pattern.n_ranks, 1)
    n_flows = sum(int(ph.n_flows) for ph in pattern.phases)
    proposals = min(default_budget(n) if budget is None else int(budget), BUDGET_PER_RANK * n)
    return proposals * (1 + 2 * n_flows // n)


def _speculate(executor, names, pattern, machine) -> str | None:
    """How candidates are evaluated ahead of the bound order (module docstring): None when no
    worker processes will build them (:meth:`Executor.for_work` on the sizing
    :func:`evaluate_candidates` uses) or the flows or link loads are too many to send back;
    ``"fill"`` when the executor gives idle workers work, else ``"build"`` (each candidate
    where it is built)."""
    if executor is None:
        return None
    size = job_size(pattern)                   # ranks + flows
    runner = executor.for_work(len(names) * size)
    if runner.workers <= 1:
        return None
    if (size - pattern.n_ranks > SPECULATE_MAX_FLOWS
            or len(names) * len(pattern.phases) * machine.n_links > SPECULATE_MAX_LINK_ENTRIES):
        return None
    return "fill" if runner.fills else "build"


class _Speculation(Filler):
    """Evaluations for workers with nothing left to build: of the candidates built so far and
    not yet evaluated (by placement), the one of the lowest bound (ties: the order of the
    names), leaving out those the best two speculative evaluations so far prune. Only a bet:
    the bound-order loop takes the decisions, from the same bounds and values.

    Parameters
    ----------
    evaluator : Evaluator
        Evaluates the candidates (in the workers).
    kind : (str, float) or None
        :func:`bounds.ranking_bound_kind` (None: no bounds, names' order).
    names : list of str
        The candidates' names, in order.
    stage : callable, optional
        ``stage(name, what)``: ``"routing"`` when a candidate is handed out, :data:`IDLE`
        when its value is back (or the build loop is over), in this process.
    """

    def __init__(self, evaluator: Evaluator, kind, names: list[str], stage=None):
        self.evaluator, self.stage = evaluator, stage
        self.running: set[str] = set()         # names handed out, value not back
        self.position = {name: i for i, name in enumerate(names)}
        self.pruner = Pruner(kind, REFINE_TOP) if kind is not None else None
        self.waiting: list[_Prepared] = []
        self.taken: set[bytes] = set()         # placements evaluated or being evaluated
        self.evaluations: dict[bytes, Evaluation] = {}

    def item_done(self, item, outcome) -> None:
        """Note a built candidate (a failed or inapplicable one is left out).

        Parameters
        ----------
        item : str
            The candidate's name.
        outcome : Outcome
            Its build's outcome (a :class:`_Prepared` when it was built).
        """
        if outcome.error is None and isinstance(outcome.value, _Prepared):
            self.waiting.append(outcome.value)

    def _order(self, cand: "_Prepared") -> tuple:
        bound = cand.bound.key() if cand.bound is not None else 0.0
        return (bound, self.position.get(cand.name, len(self.position)))

    def take(self):
        """The placement of the next candidate to evaluate, or None.

        Returns
        -------
        Placement or None
        """
        while self.waiting:
            cand = min(self.waiting, key=self._order)
            self.waiting.remove(cand)
            key = cand.mapping.core_of_rank.tobytes()
            if key in self.taken:
                continue
            if self.pruner is not None and cand.bound is not None \
                    and self.pruner.reason(cand.bound) is not None:
                continue               # the mark only comes down: it stays out
            self.taken.add(key)
            if self.stage:
                self.running.add(cand.name)
                self.stage(cand.name, "routing")
            return cand.mapping
        return None

    def run(self, payload, stage):
        """Evaluate a placement (in a worker).

        Parameters
        ----------
        payload : Placement
            From :meth:`take`.
        stage : callable
            Ignored.

        Returns
        -------
        Evaluation
        """
        return self.evaluator.evaluate(payload)

    def took(self, payload, value) -> None:
        """Keep an evaluation (None: it failed; the bound-order loop will meet it again).

        Parameters
        ----------
        payload : Placement
            The placement evaluated.
        value : Evaluation or None
            Its evaluation.
        """
        if self.stage and payload.name in self.running:
            self.running.discard(payload.name)
            self.stage(payload.name, IDLE)
        if value is None:
            return
        self.evaluations[payload.core_of_rank.tobytes()] = value
        if self.pruner is not None:
            self.pruner.record(value.metrics)

    def hand_out(self, prepared: list) -> None:
        """Give every built candidate placing its ranks as one evaluated here that evaluation.

        Parameters
        ----------
        prepared : list of _Prepared
            The built candidates.
        """
        for name in sorted(self.running):      # values nobody waited for
            self.stage(name, IDLE)
        self.running.clear()
        for cand in prepared:
            if cand.evaluation is None:
                twin = self.evaluations.get(cand.mapping.core_of_rank.tobytes())
                if twin is not None:
                    cand.evaluation = _shared(cand.mapping, twin)


class _Prepare:
    """Stands in for the evaluator while candidates are built: returns a :class:`_Prepared`
    (placement, node of every rank, bound, and the evaluation when ``speculate``) instead of
    routing."""

    def __init__(self, evaluator: Evaluator, bounded: bool, speculate: bool = False):
        self.evaluator, self.bounded, self.speculate = evaluator, bounded, speculate
        self.pattern = evaluator.pattern      # sizes the job (Executor.for_work)

    def evaluate(self, mapping) -> "_Prepared":
        """The built candidate, its lower bound (None when nothing is bounded) and, when
        speculating, its evaluation."""
        nodes = mapping.nodes(self.evaluator.allocation)
        evaluation = None
        if self.speculate:
            try:
                evaluation = self.evaluator.evaluate(mapping)
            except Exception:  # noqa: BLE001 - only ahead of time: in bound order, as serially
                evaluation = None      # (a pruned candidate's failure never shows; others raise)
        return _Prepared(mapping, nodes,
                         placement_bound(self.evaluator, nodes) if self.bounded else None,
                         evaluation)


class _PruneAfterRouting:
    """Stands in for the evaluator of one candidate: routes it, and runs the metrics (the
    time model) only when :func:`bounds.routed_time_bound` does not prune it; a pruned
    candidate's evaluation is the reason (recorded as skipped)."""

    def __init__(self, evaluator: Evaluator, pruner: Pruner):
        self.evaluator, self.pruner = evaluator, pruner
        self.pattern = evaluator.pattern      # sizes the job (Executor.for_work)

    def evaluate(self, mapping) -> "Evaluation | str":
        """The candidate's evaluation, or why it cannot be among the best."""
        routed = self.evaluator.route(mapping)
        reason = self.pruner.reason(Bound(routed_time_bound(self.evaluator, routed), 0.0, 0.0),
                                    "after routing")
        if reason is not None:
            return reason
        return self.evaluator.evaluate_routed(mapping, routed)


def _shared(mapping, twin: Evaluation) -> Evaluation:
    """``twin``'s evaluation for ``mapping``, which places every rank on the same core."""
    return Evaluation(mapping, twin.phases, dict(twin.metrics), dict(twin.extra))


class _Reuse:
    """Stands in for the evaluator of the refinements: a refinement that returns the
    placement of a candidate already evaluated (a start it could not improve) gets that
    evaluation, under its own name, instead of being routed again."""

    def __init__(self, evaluator: Evaluator, evaluations: list):
        self.evaluator = evaluator
        self.pattern = evaluator.pattern      # sizes the job (Executor.for_work)
        self.known = {e.mapping.core_of_rank.tobytes(): e for e in evaluations}

    def evaluate(self, mapping) -> Evaluation:
        """The refinement's evaluation (a known placement's, or routed now)."""
        twin = self.known.get(mapping.core_of_rank.tobytes())
        return self.evaluator.evaluate(mapping) if twin is None else _shared(mapping, twin)


class _Prepared:
    """A built candidate: its mapping, node of every rank, lower bound (or None) and its
    evaluation when it was evaluated where it was built (or None)."""

    __slots__ = ("mapping", "nodes", "bound", "evaluation")

    def __init__(self, mapping, nodes, bound, evaluation=None):
        self.mapping, self.nodes, self.bound = mapping, nodes, bound
        self.evaluation = evaluation

    def renamed(self, name: str) -> "_Prepared":
        """The same built candidate under another mapper's name."""
        return _Prepared(Placement(name, self.mapping.core_of_rank), self.nodes, self.bound,
                         None if self.evaluation is None else self.evaluation.renamed(name))

    @property
    def name(self) -> str:
        """The mapping's name."""
        return self.mapping.name


def _evaluate_in_bound_order(evaluator: Evaluator, prepared: list, kind, progress,
                             stage=None):
    """Evaluations (in the order of ``prepared``) and pruned names with reasons.

    Candidates are taken in order of their bound (ties: the order given); one placing every
    rank on the same core as a candidate already evaluated reuses its evaluation; one whose
    bound cannot reach the :data:`REFINE_TOP` best is pruned (:class:`bounds.Pruner`), and so
    is, with the same reason, one placing every rank as a pruned one. One whose evaluation
    is refused (a RankmapError: routes over a size limit) is left out with that reason, as
    ``compare --mappings all`` does. The outcome depends on the candidates only, never on
    timing.

    ``progress(name)`` once a candidate: when it is evaluated or pruned, and for those the
    values so far already prune (the mark only comes down: pruned at their turn, whatever
    comes before), as soon as that is so; ``stage(name, "routing")`` before one is routed.
    """
    order = list(range(len(prepared)))
    if kind is not None:
        order.sort(key=lambda i: (prepared[i].bound.key(), i))
    pruner = Pruner(kind, REFINE_TOP) if kind is not None else None
    time_kind = kind is not None and kind[0] == "time"
    done: dict[bytes, Evaluation] = {}
    pruned_as: dict[bytes, str] = {}      # placement -> why it was pruned
    evaluated: dict[int, Evaluation] = {}
    pruned: dict[str, str] = {}
    reported: set[int] = set()            # positions whose progress was said

    def report_pruned(after: int) -> None:
        """Progress of the candidates after position ``after`` that are sure to be pruned
        (never one that will share an evaluation): said early, decided at their turn."""
        if progress is None or pruner is None or pruner.threshold() is None:
            return
        for j in order[after + 1:]:
            if j in reported:
                continue
            key = prepared[j].mapping.core_of_rank.tobytes()
            if key in done:
                continue
            if key in pruned_as or pruner.reason(prepared[j].bound) is not None:
                reported.add(j)
                progress(prepared[j].name)

    for at, i in enumerate(order):
        cand, routed = prepared[i], False
        key = cand.mapping.core_of_rank.tobytes()
        twin = done.get(key)
        if twin is not None:
            evaluated[i] = _shared(cand.mapping, twin)
            if pruner is not None:
                pruner.record(twin.metrics)    # it takes one of the best places too
        elif key in pruned_as:
            # a pruned placement stays pruned (the mark only comes down): not routed again
            pruned[cand.name] = pruned_as[key]
        else:
            reason = pruner.reason(cand.bound) if pruner is not None else None
            if reason is None and cand.evaluation is not None:
                # evaluated where it was built: the same decision from the same loads
                ev = [cand.evaluation]
                if time_kind:
                    reason = pruner.reason(Bound(link_bytes_time_bound(
                        evaluator, [p.link_bytes for p in cand.evaluation.phases]), 0.0, 0.0),
                        "after routing")
            elif reason is None:
                # a refused evaluation (a size limit) leaves the candidate out with the reason
                routed = True
                if stage:
                    stage(cand.name, "routing")
                ev, after = evaluate_candidates(
                    _PruneAfterRouting(evaluator, pruner) if time_kind else evaluator,
                    [cand.name], lambda _n: cand.mapping, skip_inapplicable=True)
                reason = after.get(cand.name)
            if reason is not None:
                pruned[cand.name] = pruned_as[key] = reason
            else:
                evaluated[i] = done[key] = ev[0]
                if pruner is not None:
                    pruner.record(ev[0].metrics)
        if i not in reported:
            reported.add(i)
            if progress:
                progress(cand.name)
        elif stage and routed:
            # counted early as pruned, yet routed (only if two bounds of one placement
            # differed): its step ends here
            stage(cand.name, IDLE)
        report_pruned(at)
    results = [evaluated[i] for i in range(len(prepared)) if i in evaluated]
    names = [prepared[i].name for i in range(len(prepared))]
    return results, {n: pruned[n] for n in names if n in pruned}
