"""Scaling studies in the style of seed 002: sweep node counts and threads per rank over random
allocations, compare mappers, normalise to ``inorder``.

For every node count N, every threads-per-rank value T and every allocation seed
``0..allocs-1``, the allocation is ``random:N:seed=S`` (N nodes drawn uniformly, listed in
node-id order as a scheduler lists a scattered allocation), the pattern fills it with
``N * cores / T`` ranks, and every mapper is evaluated. A point's *time* is the evaluation's
``predicted_time_s`` when the time model provides one (``time_source = "model"``), else (or
with ``time="busiest-link"``, which switches the model off for speed) the sum over phases of the
busiest link's bytes / bandwidth (``time_source = "busiest-link"``).

The summary takes, per (N, T, mapper), the median over allocations of the busiest-link bytes
and of the time, and divides each by inorder's median (seed 002 plots the median of 8
allocations normalised to in-order). Where inorder's median is 0 (a point whose ranks share one
node moves no bytes over the network; one rank sends nothing) the ratio is not applicable
(None), never a 0/0 shown as 1.

Every point's inputs are checked before anything is written. With an output folder every
finished point is appended to ``results.jsonl`` at once, so an interrupted study resumes where
it stopped; ``study.json`` records the parameters and a different study in the same folder is
refused (unless the folder holds no point yet). Every line read back is checked.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from .allocation import parse_allocation
from .errors import RankmapError
from .evaluation import Evaluator
from .timing import TimeOptions
from .io.atomic import write_atomic
from .machines import Machine, parse_machine
from .selection import build_placement
from .patterns import parse_pattern
from .validate import json_text

__all__ = ["parse_sweep", "StudyParams", "Study", "point_time", "study_points", "check_params",
           "check_points", "run_study", "summary_csv", "summary_notes", "plot_study"]


def parse_sweep(text: str, what: str) -> list[int]:
    """Parse a sweep of positive integers.

    ``1,2,4,...,4096`` (``...`` continues the ratio of the two values before it up to the
    value after it), or plain ``1,8,32``.

    Parameters
    ----------
    text : str
        The sweep as given on the command line.
    what : str
        The option's name, used in error messages (e.g. ``--nodes-sweep``).

    Returns
    -------
    list of int
        Sorted distinct positive integers.

    Raises
    ------
    RankmapError
        When a value is not a positive integer or is given twice, ``...`` lacks two values
        before it and one after, the values before it are not a whole ratio, the end is not in
        the sequence, or there are no values.
    """
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    out: list[int] = []
    i = 0
    while i < len(parts):
        p = parts[i]
        if p in ("...", "…"):
            if len(out) < 2 or i + 1 >= len(parts):
                raise RankmapError(f"bad {what} {text!r}: '...' needs two values before it and "
                                   "one after, e.g. 1,2,4,...,64")
            a, b = out[-2], out[-1]
            end = _int(parts[i + 1], what, text)
            if b <= a or b % a:
                raise RankmapError(f"bad {what} {text!r}: '...' continues a doubling-like "
                                   f"sequence, {a},{b} is not one")
            r = b // a
            v = b * r
            while v <= end:
                out.append(v)
                v *= r
            if out[-1] != end:
                raise RankmapError(f"bad {what} {text!r}: {end} is not in the sequence "
                                   f"{a},{b},{b * r},...")
            i += 2
            continue
        out.append(_int(p, what, text))
        i += 1
    if not out:
        raise RankmapError(f"bad {what} {text!r}: no values")
    twice = sorted({v for v in out if out.count(v) > 1})
    if twice:       # as bench --sizes: a value given twice is a slip, not a wish
        raise RankmapError(f"bad {what} {text!r}: {twice[0]} is given twice")
    return sorted(out)


def _int(p: str, what: str, text: str) -> int:
    if not re.fullmatch(r"[0-9]+", p) or int(p) < 1:
        raise RankmapError(f"bad {what} {text!r}: {p!r} is not a positive integer")
    return int(p)


@dataclass
class StudyParams:
    """What a study sweeps (all JSON-ready)."""

    machine: str
    pattern: str
    nodes: list[int]
    threads: list[int]
    mappings: list[str]
    allocs: int = 8
    routing: str | None = None
    seed: int = 0
    #: "model": the time model's predicted_time_s; "busiest-link": the model is switched off
    #: and a point's time is the sum over phases of the busiest link's bytes / bandwidth
    #: (much faster on big machines).
    time: str = "model"
    #: False: the in-node placement step is not run after the mappers (``--in-node keep``)
    in_node: bool = True
    #: the time model's settings given (``nic_bw``, ``mem_bw``, ``socket_bw`` in bytes/s or
    #: None for unlimited, ``mem_shared``, ``overhead_s`` in s); None: the defaults
    time_options: dict | None = None
    #: the refinements' work bound (``--budget``, proposed moves); None: the default
    budget: int | None = None

    def key(self) -> dict:
        """The parameters a resumed study must share.

        Returns
        -------
        dict
            Every field, JSON-ready (written to ``study.json``); ``in_node`` only when it is
            False, ``time_options`` and ``budget`` only when given, so folders written before
            they existed still resume.
        """
        key = asdict(self)
        if self.in_node:
            del key["in_node"]
        if self.time_options is None:
            del key["time_options"]
        if self.budget is None:
            del key["budget"]
        return key


@dataclass
class Study:
    """Raw points and the parameters that produced them."""

    params: StudyParams
    points: list[dict] = field(default_factory=list)

    def summary(self) -> list[dict]:
        """Per (nodes, threads, mapping): medians over allocations and ratios to inorder.

        Returns
        -------
        list of dict
            One row per (nodes, threads, mapping), by nodes, threads and the mappings'
            order (inorder first): ranks, allocations,
            ``median_max_link_bytes`` (bytes), ``median_time_s`` (seconds),
            ``bytes_vs_inorder`` and ``time_vs_inorder`` (None without an inorder row, and
            None where inorder's median is 0: a point whose ranks share one node moves no
            bytes over the network, :func:`summary_notes` says so) and the time source.
        """
        groups: dict[tuple, list[dict]] = {}
        for p in self.points:
            groups.setdefault((p["nodes"], p["threads"], p["mapping"]), []).append(p)
        rows = []
        # mappings in the study's order (inorder, the reference, first), not by their names
        order = {name: i for i, name in enumerate(self.params.mappings)}
        order["inorder"] = -1
        for (n, t, name), pts in sorted(groups.items(), key=lambda kv: (
                kv[0][0], kv[0][1], order.get(kv[0][2], len(order)), kv[0][2])):
            rows.append({"nodes": n, "threads": t, "ranks": pts[0]["ranks"],
                         "total_threads": pts[0]["ranks"] * t, "mapping": name,
                         "allocations": len(pts),
                         "median_max_link_bytes": float(np.median([p["max_link_bytes"]
                                                                   for p in pts])),
                         "median_time_s": float(np.median([p["time_s"] for p in pts])),
                         "time_source": pts[0]["time_source"]})
        ref = {(r["nodes"], r["threads"]): r for r in rows if r["mapping"] == "inorder"}
        for r in rows:
            base = ref.get((r["nodes"], r["threads"]))
            for key, out in (("median_max_link_bytes", "bytes_vs_inorder"),
                             ("median_time_s", "time_vs_inorder")):
                # inorder's median 0 (its ranks share one node, or nothing is sent): a ratio
                # to it is not applicable, never a 0/0 shown as 1.00 (see summary_notes)
                r[out] = (r[key] / base[key] if base is not None and base[key] > 0
                          else None)
        return rows


def point_time(machine: Machine, evaluation) -> tuple[float, str]:
    """Time of one evaluation: the time model's, else the busiest-link time.

    Parameters
    ----------
    machine : Machine
        The machine (its ``link_bandwidth`` in bytes/s is used without the time model).
    evaluation : Evaluation
        An evaluated placement.

    Returns
    -------
    seconds : float
        ``predicted_time_s``, else the sum over phases of the busiest link's bytes /
        bandwidth.
    source : str
        ``model`` or ``busiest-link``.
    """
    if "predicted_time_s" in evaluation.metrics:
        return float(evaluation.metrics["predicted_time_s"]), "model"
    bw = machine.link_bandwidth
    return float(sum((ph.link_bytes / bw).max(initial=0.0) for ph in evaluation.phases)), \
        "busiest-link"


def _point_key(nodes: int, threads: int, alloc: int) -> str:
    return f"{nodes}/{threads}/{alloc}"


def study_points(params: StudyParams, machine: Machine, nodes: int, threads: int,
                 alloc_seed: int) -> list[dict]:
    """Evaluate every mapper on one random allocation; one dict per mapper.

    Parameters
    ----------
    params : StudyParams
        The study (pattern, mappers, routing, seed, time source).
    machine : Machine
        The machine built from ``params.machine``.
    nodes : int
        Number of nodes of the random allocation.
    threads : int
        Threads per rank (ranks = nodes x cores / threads).
    alloc_seed : int
        Index of the allocation, 0 to ``params.allocs - 1``.

    Returns
    -------
    list of dict
        Per mapper: nodes, threads, alloc, the allocation's ``--nodes`` spec and the mappers'
        seed (what ``evaluate --nodes SPEC --seed SEED`` reproduces the point with), ranks,
        mapping, ``max_link_bytes`` and ``hop_bytes`` (bytes), ``time_s`` (seconds) and its
        source.

    Raises
    ------
    RankmapError
        When the pattern, allocation or a mapper cannot be built.
    """
    allocation, pattern = _point_inputs(params, machine, nodes, threads, alloc_seed)
    evaluator = Evaluator(machine, allocation, pattern, params.routing,
                          time_options=TimeOptions(enabled=params.time != "busiest-link",
                                                   **(params.time_options or {})))
    out = []
    for name in params.mappings:
        mapping = build_placement(name, pattern, machine, allocation,
                                  _mapper_seed(params, alloc_seed), budget=params.budget,
                                  evaluator=evaluator, in_node=params.in_node)
        ev = evaluator.evaluate(mapping)
        t, source = point_time(machine, ev)
        out.append({"nodes": nodes, "threads": threads, "alloc": alloc_seed,
                    "allocation": _allocation_spec(params, nodes, alloc_seed),
                    "seed": _mapper_seed(params, alloc_seed),
                    "ranks": int(pattern.n_ranks), "mapping": name,
                    "max_link_bytes": float(ev.metrics["max_link_bytes"]),
                    "hop_bytes": float(ev.metrics["hop_bytes"]), "time_s": t,
                    "time_source": source})
    return out


def _allocation_spec(params: StudyParams, nodes: int, alloc_seed: int) -> str:
    """The ``--nodes`` of a point's allocation: ``random:N:seed=1000*S+k`` for allocation k
    of a study with ``--seed S`` (each point is written with it, so that ``evaluate --nodes``
    reproduces it)."""
    return f"random:{nodes}:seed={params.seed * 1000 + alloc_seed}"


def _mapper_seed(params: StudyParams, alloc_seed: int) -> int:
    """The mappers' ``--seed`` on allocation k of a study with ``--seed S``: S + k."""
    return params.seed + alloc_seed


def _point_inputs(params: StudyParams, machine: Machine, nodes: int, threads: int,
                  alloc_seed: int):
    """The allocation and the pattern of one point; a pattern too big for it is refused."""
    allocation = parse_allocation(_allocation_spec(params, nodes, alloc_seed),
                                  machine).with_threads(threads)
    pattern = parse_pattern(params.pattern, default_ranks=allocation.n_cores)
    if pattern.n_ranks > allocation.n_cores:
        raise RankmapError(f"{params.pattern} has {pattern.n_ranks} ranks; {nodes} nodes at "
                           f"{threads} threads per rank hold {allocation.n_cores} "
                           f"({machine.cores_per_node} cores a node): give a pattern without "
                           "a grid, which fills every point of the sweep")
    return allocation, pattern


def _point_name(nodes: int, threads: int, ranks: int | None = None) -> str:
    text = (f"{nodes} node{'s' if nodes != 1 else ''} x {threads} thread"
            f"{'s' if threads != 1 else ''} per rank")
    return text if ranks is None else f"{text} ({ranks} rank{'s' if ranks != 1 else ''})"


def check_points(params: StudyParams, machine: Machine) -> list[tuple[int, int, int]]:
    """Build the pattern of every (nodes, threads) point before any work or output.

    Parameters
    ----------
    params : StudyParams
        The study (its machine-level parameters checked by :func:`check_params`).
    machine : Machine
        The machine built from ``params.machine``.

    Returns
    -------
    list of (int, int, int)
        ``(nodes, threads, ranks)`` of the points whose pattern moves nothing (no rank sends
        to another, e.g. one rank); they are kept, their ratios to inorder not applicable.

    Raises
    ------
    RankmapError
        When the pattern cannot be built at a point, has more ranks than a point holds, or
        moves nothing at every point (its metrics would all be zero).
    """
    from .patterns import check_moves_something

    idle = []
    for n in params.nodes:
        for t in params.threads:
            _allocation, pattern = _point_inputs(params, machine, n, t, 0)
            try:
                check_moves_something(pattern)
            except RankmapError:
                idle.append((n, t, int(pattern.n_ranks)))
    if len(idle) == len(params.nodes) * len(params.threads):
        n, t, ranks = idle[0]
        raise RankmapError(f"pattern {params.pattern!r} moves nothing at any point of the "
                           f"sweep (at {_point_name(n, t)} no rank of its {ranks} sends to "
                           "another): give more nodes or fewer threads per rank")
    if params.time == "busiest-link" and set(params.nodes) == {1}:
        raise RankmapError("--nodes-sweep 1: every point is on one node, where no byte crosses "
                           "the network and the busiest-link time (--time-model off) is 0 s: "
                           "add node counts or use the time model")
    return idle


def check_params(params: StudyParams, machine: Machine) -> None:
    """Raise on node counts or thread counts the machine cannot run.

    Parameters
    ----------
    params : StudyParams
        The study to check.
    machine : Machine
        The machine built from ``params.machine``.

    Raises
    ------
    RankmapError
        When there are no mappings, a mapping name is unknown, ``allocs`` is below 1, a node
        count exceeds the machine, a thread count does not divide the cores per node, the
        routing is unknown, or the time source is neither ``model`` nor ``busiest-link``.
    """
    from .selection import check_name

    if not params.mappings:
        raise RankmapError("no mappings to study")
    for name in params.mappings:
        check_name(name, machine)
    if params.allocs < 1:
        raise RankmapError(f"bad --allocs {params.allocs}: must be at least 1")
    # allocation k is drawn with seed x 1000 + k, a 64-bit seed
    top = (2 ** 63 - 1 - (params.allocs - 1)) // 1000
    if params.seed > top:
        raise RankmapError(f"bad --seed {params.seed}: at most {top} (allocation k of the "
                           "study is drawn with seed x 1000 + k)")
    too_big = [n for n in params.nodes if n > machine.n_nodes]
    if too_big:
        raise RankmapError(f"--nodes-sweep asks for {too_big[0]} nodes, the machine has "
                           f"{machine.n_nodes}")
    bad = [t for t in params.threads if machine.cores_per_node % t]
    if bad:
        raise RankmapError(f"bad --threads {bad[0]}: must divide the {machine.cores_per_node} "
                           "cores per node")
    machine.check_routing(params.routing)
    if params.time not in ("model", "busiest-link"):
        raise RankmapError(f"bad --time {params.time!r}: choose model or busiest-link")


#: the keys of a point of results.jsonl: whole numbers, names, and finite numbers >= 0
_INT_KEYS = ("nodes", "threads", "alloc", "ranks")
_STR_KEYS = ("mapping", "time_source")
_NUM_KEYS = ("max_link_bytes", "hop_bytes", "time_s")


def _check_point(p, params: StudyParams, where: str) -> None:
    """Refuse a line of results.jsonl that is not a point of this study (naming file:line)."""
    def bad(what: str):
        return RankmapError(f"{where}: {what}: not a point of this study (a damaged "
                            "results.jsonl; remove that line, or the folder to start again)")

    def text(v) -> str:     # a value as the line spells it, cut short
        t = json.dumps(v)
        return t if len(t) <= 40 else t[:37] + "..."

    if not isinstance(p, dict):
        kind = ("an array" if isinstance(p, list) else "a string" if isinstance(p, str)
                else "null" if p is None else text(p))
        raise bad(f"{kind}, expected a JSON object")
    missing = [k for k in (*_INT_KEYS, *_STR_KEYS, *_NUM_KEYS) if k not in p]
    if missing:
        raise bad(f"no {missing[0]!r}")
    for k in _INT_KEYS:
        if type(p[k]) is not int or p[k] < (0 if k == "alloc" else 1):
            raise bad(f"{k} {text(p[k])} is not a "
                      f"{'whole number >= 0' if k == 'alloc' else 'positive whole number'}")
    for k in _STR_KEYS:
        if not isinstance(p[k], str):
            raise bad(f"{k} {text(p[k])} is not a name")
    for k in _NUM_KEYS:
        v = p[k]
        try:
            ok = (not isinstance(v, bool) and isinstance(v, (int, float))
                  and np.isfinite(float(v)) and v >= 0)
        except OverflowError:      # a whole number beyond float64
            ok = False
        if not ok:
            raise bad(f"{k} {text(v)} is not a number >= 0")
    for k, allowed, flag in (("nodes", params.nodes, "--nodes-sweep"),
                             ("threads", params.threads, "--threads"),
                             ("mapping", params.mappings, "--mappings")):
        if p[k] not in allowed:
            raise bad(f"{k} {text(p[k])} is not in the study's {flag} "
                      f"{','.join(map(str, allowed))}")
    if p["alloc"] >= params.allocs:
        raise bad(f"alloc {p['alloc']} is not below the study's --allocs {params.allocs}")
    if p["time_source"] not in ("model", "busiest-link"):
        raise bad(f"time_source {text(p['time_source'])} is neither model nor "
                  "busiest-link")
    # written since the points name their inputs; an older file's points have neither
    for k, want in (("allocation", _allocation_spec(params, p["nodes"], p["alloc"])),
                    ("seed", _mapper_seed(params, p["alloc"]))):
        if k in p and p[k] != want:
            raise bad(f"{k} {text(p[k])} is not this study's {text(want)} (another --seed?)")


def _read_lines(res: str) -> list[tuple[int, str]]:
    """The non-blank lines of results.jsonl with their line numbers."""
    if not os.path.exists(res):
        return []
    try:
        with open(res, encoding="utf-8") as fh:
            return [(n, line.strip()) for n, line in enumerate(fh, start=1) if line.strip()]
    except UnicodeDecodeError:
        raise RankmapError(f"{res!r} is not text (a damaged results.jsonl; remove the folder "
                           "to start again)") from None


def _holds_a_point(res: str) -> bool:
    """Whether results.jsonl holds a line that reads as a point (a JSON object)."""
    for _n, line in _read_lines(res):
        try:
            if isinstance(json.loads(line), dict):
                return True
        except json.JSONDecodeError:
            pass
    return False


def _load_existing(out_dir: str, params: StudyParams) -> list[dict]:
    meta = os.path.join(out_dir, "study.json")
    res = os.path.join(out_dir, "results.jsonl")
    if not os.path.exists(meta):
        if os.path.exists(res) and _holds_a_point(res):
            raise RankmapError(f"{out_dir!r} holds results.jsonl but no study.json: not a study "
                               "folder of this version")
        return []
    unreadable = object()
    with open(meta, encoding="utf-8") as fh:
        try:
            old = json.load(fh)
        except (json.JSONDecodeError, UnicodeDecodeError):
            old = unreadable    # a different study, unless no point was saved
    if old != params.key():
        if not _holds_a_point(res):
            return []       # no point finished (a study refused or stopped at once): afresh
        if old is unreadable:
            raise RankmapError(f"{meta!r} is not valid JSON")
        new = params.key()
        diff = ([k for k in dict.fromkeys([*new, *old]) if old.get(k) != new.get(k)]
                if isinstance(old, dict) else [])
        raise RankmapError(f"{out_dir!r} holds a different study (differs in "
                           f"{', '.join(diff) or 'format'}): use another --out folder (its "
                           "points are never replaced; remove the folder to start again)")
    points = []
    lines = _read_lines(res)
    for i, (n, line) in enumerate(lines):
        try:
            p = json.loads(line)
        except json.JSONDecodeError:
            if i == len(lines) - 1:
                break       # the last line cut by an interruption: redo from there
            raise RankmapError(f"{res}:{n}: not JSON: not a point of this study (a damaged "
                               "results.jsonl; remove that line, or the folder to start "
                               "again)") from None
        _check_point(p, params, f"{res}:{n}")
        points.append(p)
    return points


def run_study(params: StudyParams, out_dir: str | None = None,
              progress: Callable[[str], None] | None = None, executor=None) -> Study:
    """Run (or resume, with ``out_dir``) the study; return all points.

    Parameters
    ----------
    params : StudyParams
        What to sweep.
    out_dir : str, optional
        Folder for ``study.json`` and ``results.jsonl``; finished points found there are kept
        and only missing ones are computed.
    progress : callable, optional
        ``progress(text)``, called after each (nodes, threads, allocation) point.
    executor : Executor, optional
        Runs the allocations of a batch in parallel (:mod:`rankmap.selection.parallel`);
        points are saved in the same order and are the same as in-process.

    Returns
    -------
    Study
        The parameters and every point (resumed and new).

    Raises
    ------
    RankmapError
        On bad parameters (:func:`check_params`) or a point whose pattern cannot be built
        (:func:`check_points`), both before anything is written; when ``out_dir`` holds a
        different study with saved points, or a line of ``results.jsonl`` that is not a
        point of this study (naming the file and line; a last line cut by an interruption
        is computed again). A folder whose ``study.json`` differs but that holds no point
        is started afresh.
    """
    from .selection.parallel import SerialExecutor, first_error

    executor = executor if executor is not None else SerialExecutor()
    machine = parse_machine(params.machine)
    check_params(params, machine)
    check_points(params, machine)       # every point's inputs, before anything is written
    points: list[dict] = []
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        points = _load_existing(out_dir, params)
        write_atomic(os.path.join(out_dir, "study.json"), json_text(params.key(), indent=1),
                     force=True)
    per_key: dict[str, list[dict]] = {}
    for p in points:
        per_key.setdefault(_point_key(p["nodes"], p["threads"], p["alloc"]), []).append(p)
    done = {k for k, v in per_key.items()
            if sorted(x["mapping"] for x in v) == sorted(params.mappings)}
    points = [p for p in points if _point_key(p["nodes"], p["threads"], p["alloc"]) in done]
    if out_dir:  # rewrite without partial points before appending
        write_atomic(os.path.join(out_dir, "results.jsonl"),
                     "".join(json_text(p) + "\n" for p in points), force=True)
    steps = [(n, t, a) for n in params.nodes for t in params.threads
             for a in range(params.allocs)]
    batch = max(1, executor.workers)  # saved after each batch: an interrupted run resumes
    for start in range(0, len(steps), batch):
        chunk = steps[start:start + batch]
        todo = [s for s in chunk if _point_key(*s) not in done]
        outs = executor.run(lambda s, stage: study_points(params, machine, *s), todo)
        first_error(outs)
        for out in outs:
            points.extend(out.value)
            if out_dir:
                with open(os.path.join(out_dir, "results.jsonl"), "a", encoding="utf-8") as fh:
                    fh.write("".join(json_text(p) + "\n" for p in out.value))
        if progress:
            for n, t, _ in chunk:
                progress(f"{n} nodes, {t} threads")
    return Study(params, points)


def summary_notes(rows: list[dict]) -> list[str]:
    """Why a ratio to inorder is missing: one line per ratio and the points it concerns.

    Parameters
    ----------
    rows : list of dict
        Rows of :meth:`Study.summary`.

    Returns
    -------
    list of str
        Lines naming the (nodes, threads) points where inorder's median busiest-link bytes or
        time is 0, so the ratio is not applicable (``-`` in the table, empty in CSV, null in
        JSON); empty when every ratio is defined.
    """
    out = []
    for key, ratio, what in (
            ("median_max_link_bytes", "bytes_vs_inorder",
             "inorder's busiest link carries 0 bytes (its ranks share one node, or send "
             "nothing)"),
            ("median_time_s", "time_vs_inorder", "inorder's time is 0 s (nothing is sent)")):
        points = [_point_name(r["nodes"], r["threads"], r["ranks"]) for r in rows
                  if r["mapping"] == "inorder" and r[ratio] is None and r[key] == 0]
        if points:
            label = "busiest link" if ratio == "bytes_vs_inorder" else "time"
            out.append(f"{label} vs inorder not applicable at {', '.join(points)}: {what}; "
                       "shown as '-' (empty in CSV, null in JSON)")
    return out


def summary_csv(rows: list[dict]) -> str:
    """The summary as CSV text.

    Parameters
    ----------
    rows : list of dict
        Rows of :meth:`Study.summary`.

    Returns
    -------
    str
        A header line and one line per row (bytes, seconds, ratios in full precision;
        empty where None).
    """
    cols = ["nodes", "threads", "ranks", "total_threads", "mapping", "allocations",
            "median_max_link_bytes", "median_time_s", "bytes_vs_inorder", "time_vs_inorder",
            "time_source"]
    lines = [",".join(cols)]
    for r in rows:
        # floats in full (repr: the shortest text that reads back to the same number)
        lines.append(",".join("" if r[c] is None else (repr(r[c]) if isinstance(r[c], float)
                                                        else str(r[c])) for c in cols))
    return "\n".join(lines) + "\n"


def plot_study(study: Study, path: str, force: bool = False) -> str:
    """Seed 002 Figure 1 style plot of a study, written as a PNG.

    One panel per threads-per-rank value, x = total threads (log), y = time normalised to
    inorder, one line per mapper.

    Parameters
    ----------
    study : Study
        A study that includes the ``inorder`` mapping.
    path : str
        Output PNG file.
    force : bool, optional
        Overwrite an existing file.

    Returns
    -------
    str
        The path written (atomically).

    Raises
    ------
    RankmapError
        When the study has no inorder mapping or no point where inorder's time is above 0,
        or ``path`` exists without ``force``.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    every = study.summary()
    rows = [r for r in every if r["time_vs_inorder"] is not None]
    threads = sorted({r["threads"] for r in rows})
    if not threads:
        if any(r["mapping"] == "inorder" for r in every):
            raise RankmapError("nothing to plot: inorder's time is 0 s at every point, so no "
                               "time vs inorder is defined")
        raise RankmapError("nothing to plot: the study needs the inorder mapping")
    fig, axes = plt.subplots(1, len(threads), figsize=(4.2 * len(threads), 3.6), squeeze=False,
                             sharey=True)
    for ax, t in zip(axes[0], threads):
        for name in study.params.mappings:
            pts = sorted((r["total_threads"], r["time_vs_inorder"]) for r in rows
                         if r["threads"] == t and r["mapping"] == name)
            if pts:
                x, y = zip(*pts)
                ax.plot(x, y, marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.axhline(1.0, color="grey", lw=0.6, ls=":")
        ax.set_title(f"{t} thread{'s' if t > 1 else ''} per rank")
        ax.set_xlabel("threads (nodes x cores)")
    axes[0][0].set_ylabel("time / inorder (median)")
    axes[0][-1].legend(fontsize=8)
    fig.suptitle(f"{study.params.pattern} on {study.params.machine}", fontsize=10)
    fig.tight_layout()
    from .io.image import figure_image
    data = figure_image(fig, "svg" if path.lower().endswith(".svg") else "png", dpi=110)
    plt.close(fig)
    return write_atomic(path, data, force=force)
