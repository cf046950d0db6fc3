"""Predicted (rankmap) versus simulated (SimGrid SMPI) time of candidate placements.

:func:`validate` evaluates every candidate with rankmap's time model, simulates it in SMPI,
and reports per candidate both times and their ratio, plus the Spearman and Pearson
correlations over candidates and which candidate each side ranks first. To compare like with
like, the prediction uses memory bandwidth per flow (SimGrid's loopback link is not shared),
no NIC limit (a SimGrid cluster has none beyond the node links a fat tree or dragonfly already
has), and both sides drop latency terms: SimGrid's links get zero latency (otherwise its CM02 model
shares bandwidth in inverse proportion to route latency, see :mod:`.platform`) and the
prediction uses zero per-hop latency and per-message overhead. What is compared is the
bandwidth-sharing part of the model, which dominates for messages of kilobytes and more.
Before simulating, :func:`validate` checks that SimGrid routes the machine's host pairs over
the same links as rankmap (:mod:`.routes`) and reports the result with the scenario.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..errors import RankmapError
from ..selection import compare
from ..timing import TimeOptions
from .platform import check_supported
from .routes import RouteAgreement, compare_routes, sample_pairs
from .runner import SimulationTimeout, simulate, simulate_command

__all__ = ["ValidationRow", "Validation", "validate", "scatter_plot", "SIM_TIE"]

#: simulated times this close (relative) are a tie: SimGrid's event order moves the times of
#: equivalent placements in the fifth or sixth digit (12.33676 against 12.33669 ms named
#: another winner, "0.0% slower")
SIM_TIE = 1e-4


@dataclass
class ValidationRow:
    """One candidate: predicted and simulated seconds (None when the simulation failed)."""

    mapping: str
    predicted_s: float
    simulated_s: float | None
    wall_s: float | None = None
    error: str | None = None
    program: str | None = None

    @property
    def ratio(self) -> float | None:
        """predicted / simulated (1 = exact)."""
        if not self.simulated_s:
            return None
        return self.predicted_s / self.simulated_s


@dataclass
class Validation:
    """All candidates of one scenario (``rows`` in rankmap's ranking order, best first) and
    the agreement statistics."""

    scenario: str
    rows: list[ValidationRow]
    options: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)
    routes: RouteAgreement | None = None

    @property
    def done(self) -> list[ValidationRow]:
        """Rows with a simulated time."""
        return [r for r in self.rows if r.simulated_s is not None]

    def _tie_rounded(self) -> tuple[np.ndarray, np.ndarray]:
        """Predicted and simulated times of the simulated rows, rounded to 4 significant
        digits (times equal to that are ties, within the 1e-3 event tolerance)."""
        done = self.done
        return (np.array([float(f"{r.predicted_s:.4g}") for r in done]),
                np.array([float(f"{r.simulated_s:.4g}") for r in done]))

    def correlation_note(self) -> str | None:
        """Why the correlations are undefined, or None when they are defined.

        Returns
        -------
        str or None
            The reason (fewer than 3 simulated rows, or every placement predicted or simulated
            the same time to 4 significant digits); None when :meth:`correlations` gives
            numbers.
        """
        done = self.done
        if len(done) < 3:
            return f"fewer than 3 placements simulated ({len(done)})"
        p, s = self._tie_rounded()
        same_p, same_s = bool(np.ptp(p) == 0), bool(np.ptp(s) == 0)
        if same_p and same_s:
            return (f"all {len(done)} placements are predicted the same time and simulated the "
                    "same time (to 4 significant digits): no ranking to correlate")
        if same_p:
            return (f"all {len(done)} placements are predicted the same time (to 4 significant "
                    "digits): correlation is undefined")
        if same_s:
            return (f"all {len(done)} placements are simulated the same time (to 4 significant "
                    "digits): correlation is undefined")
        return None

    def correlations(self) -> tuple[float | None, float | None]:
        """Rank and linear correlation between predicted and simulated times.

        Spearman ranks times equal to 4 significant digits as ties (SimGrid's event order
        moves equivalent placements' times in the fifth or sixth digit); Pearson uses the
        times as they are.

        Returns
        -------
        spearman, pearson : float or None
            Both None when they are undefined: fewer than 3 simulated rows, or one side (or
            both) constant to 4 significant digits (:meth:`correlation_note` says which).
        """
        if self.correlation_note() is not None:
            return None, None
        from scipy.stats import pearsonr, spearmanr

        p, s = self._tie_rounded()
        raw_p = np.array([r.predicted_s for r in self.done])
        raw_s = np.array([r.simulated_s for r in self.done])
        return float(spearmanr(p, s).statistic), float(pearsonr(raw_p, raw_s).statistic)

    def best_predicted(self) -> ValidationRow:
        """The candidate rankmap ranks first among simulated rows: the first row, as rows are
        in ``compare``'s order (its ranking rule: predicted times within the near-tie band
        are told apart by hop-bytes, not by rounding noise).

        Returns
        -------
        ValidationRow
            Among all rows when none was simulated.
        """
        return (self.done or self.rows)[0]

    def tied_with_pick(self) -> list[ValidationRow]:
        """The simulated candidates predicted the same time as rankmap's pick (equal to 9
        significant digits, ``compare``'s rule), the pick first: when there are several,
        the ranking's later keys (busiest link, hop-bytes, the order given) chose.

        Returns
        -------
        list of ValidationRow
            The pick and the candidates tied with it; empty when nothing was simulated.
        """
        done = self.done
        if not done:
            return []
        top = f"{done[0].predicted_s:.9g}"
        return [r for r in done if f"{r.predicted_s:.9g}" == top]

    def best_simulated(self) -> ValidationRow | None:
        """The candidate SMPI ranks first (lowest simulated time): rankmap's pick when its
        time is within :data:`SIM_TIE` of the lowest (a tie).

        Returns
        -------
        ValidationRow or None
            None when no candidate was simulated.
        """
        if not self.done:
            return None
        best = min(self.done, key=lambda r: r.simulated_s)
        pick = self.best_predicted()
        if pick.simulated_s <= best.simulated_s * (1.0 + SIM_TIE):
            return pick
        return best

    def best_gap(self) -> float | None:
        """How much slower (simulated) rankmap's pick is than SMPI's best.

        Returns
        -------
        float or None
            Relative gap: 0.03 = 3 %; None when nothing was simulated or the best time is 0.
        """
        bs = self.best_simulated()
        if bs is None or not bs.simulated_s:
            return None
        return self.best_predicted().simulated_s / bs.simulated_s - 1.0

    def to_json(self) -> dict:
        """JSON-ready summary.

        Returns
        -------
        dict
            Scenario, options, every candidate (times in seconds, ratio, program, error), the
            correlations (None when undefined, ``correlation_note`` saying why), both picks,
            their gap, the candidates predicted the same time as the pick
            (``tied_with_pick``, the pick first), the candidates skipped (name -> why) and
            the route agreement.
        """
        sp, pe = self.correlations()
        bs = self.best_simulated()
        return {"scenario": self.scenario, "options": self.options,
                "candidates": [{"mapping": r.mapping, "predicted_s": r.predicted_s,
                                "simulated_s": r.simulated_s, "ratio": r.ratio,
                                "wall_s": r.wall_s, "error": r.error, "program": r.program}
                               for r in self.rows],
                "spearman": sp, "pearson": pe, "correlation_note": self.correlation_note(),
                "best_predicted": self.best_predicted().mapping,
                "best_simulated": bs.mapping if bs else None, "best_gap": self.best_gap(),
                "tied_with_pick": [r.mapping for r in self.tied_with_pick()],
                "skipped": dict(self.skipped),
                "routes": None if self.routes is None else {
                    "identical": self.routes.identical, "summary": self.routes.describe()}}


def validate(machine, allocation, pattern, names, routing: str | None = None, seed: int = 0,
             timeout: float | None = None, progress=None, program: str = "auto",
             time_options: TimeOptions | None = None,
             command: list[str] | None = None, skip_inapplicable: bool = True,
             stage=None, budget: int | None = None) -> Validation:
    """Predict and simulate every named candidate (see the module docstring).

    Parameters
    ----------
    machine : Machine
        A machine SimGrid can model (:func:`rankmap.simgrid.platform.check_supported`).
    allocation : Allocation
        The nodes and cores the pattern is placed on.
    pattern : Pattern
        The communication pattern (flow sizes in bytes).
    names : list of str
        Candidate placements; those that do not apply to the pattern are skipped.
    routing : str, optional
        rankmap routing (default: the machine's default).
    seed : int, optional
        Seed of the randomised placements and of the sampled route check.
    timeout : float, optional
        Wall-clock limit of each simulation in seconds; a candidate that times out is kept
        with ``simulated_s = None`` and its error.
    progress : callable, optional
        ``progress(name)``, called when a step is done: each candidate's prediction, then
        each candidate's simulation.
    program : str, optional
        ``auto`` or ``flows`` (see :func:`rankmap.simgrid.runner.choose_program`).
    time_options : TimeOptions, optional
        Base time model; latencies, per-message overhead and the NIC limit are dropped and
        memory bandwidth is per flow, to compare like with like.
    command : list of str, optional
        The user's own program (built with ``smpicc``) and its arguments: it is simulated
        under every placement instead of ``program``, and its whole run's simulated time is
        compared with the pattern's predicted time
        (:func:`rankmap.simgrid.runner.simulate_command`).
    skip_inapplicable : bool, optional
        Record a candidate that cannot be built here in ``skipped`` (default) instead of
        stopping with its error (``compare``'s rule for names given one by one).
    stage : callable, optional
        ``stage(name, what)`` when a step starts: building and routing a candidate (as in
        ``compare``), then ``stage(name, "simulating")`` before its simulation.
    budget : int, optional
        Work bound of the refinements (``refine:NAME``, ``auto``) in proposed moves; None:
        the default (as ``compare``'s).

    Returns
    -------
    Validation
        One row per candidate, the options used, skipped candidates and the route agreement.

    Raises
    ------
    RankmapError
        When SimGrid cannot model the machine or routing, the time model is off, or a
        simulation fails other than by timing out.
    """
    routing = machine.check_routing(routing)
    check_supported(machine, routing)
    routes = compare_routes(machine, sample_pairs(machine.n_nodes, seed=seed), routing)
    base = time_options if time_options is not None else TimeOptions()
    if not base.enabled:
        raise RankmapError("validate needs the time model: drop --time-model off")
    # SimGrid's torus cluster has no NIC resource and no per-hop latency: predict without
    opts = dataclasses.replace(base, mem_shared=False, overhead_s=0.0, nic_bw=None,
                               hop_latency_s=0.0)
    comp = compare(machine, allocation, pattern, names, routing=routing, seed=seed,
                   progress=progress, skip_inapplicable=skip_inapplicable, time_options=opts,
                   stage=stage, budget=budget)
    rows = []
    for cand in comp.candidates:
        row = ValidationRow(cand.name, cand.metrics["predicted_time_s"], None)
        if stage:                   # the bar names the simulation in progress
            stage(cand.name, "simulating")
        try:
            if command:
                res = simulate_command(machine, pattern.n_ranks, cand.mapping.nodes(allocation),
                                       command, routing, mem_bw=opts.mem_bw, timeout=timeout)
            else:
                res = simulate(machine, pattern, cand.mapping.nodes(allocation), routing,
                               mem_bw=opts.mem_bw, timeout=timeout, program=program)
            row.simulated_s, row.wall_s, row.program = res.total_s, res.wall_s, res.program
        except SimulationTimeout as exc:
            row.error = str(exc)
        rows.append(row)
        if progress:
            progress(cand.name)
    if progress:                    # a skipped candidate has no simulation: its step is done
        for name in comp.skipped:
            progress(name)
    scenario = f"{pattern.spec} on {machine.spec} ({routing})"
    if allocation.n_nodes < machine.n_nodes:        # a part of the machine: said
        scenario += f", {allocation.n_nodes} of its {machine.n_nodes} nodes"
    # what reproduces the run: the allocation, the seed and what SMPI ran
    # no link between sockets in SimGrid's platform (validate refuses machines with sockets):
    # the socket bandwidth is no part of the prediction
    return Validation(scenario, rows, {**opts.describe(), "socket_bw_Bps": None,
                                       "routing": routing,
                                       "hop_latency_s": 0.0, "smpi_link_latency_s": 0.0,
                                       "allocation": allocation.describe(), "seed": seed,
                                       "command": list(command) if command else None},
                      skipped=comp.skipped, routes=routes)


def scatter_plot(val: Validation, path: str, force: bool = False) -> str:
    """Scatter plot (PNG or SVG) of simulated versus predicted time per candidate, in ms.

    Parameters
    ----------
    val : Validation
        The result of :func:`validate`.
    path : str
        Output file, ``.png`` or ``.svg``.
    force : bool, optional
        Overwrite an existing file.

    Returns
    -------
    str
        The path written (atomically).

    Raises
    ------
    RankmapError
        When ``path`` exists and ``force`` is not given.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = val.done
    fig, ax = plt.subplots(figsize=(5.5, 5))
    p = np.array([r.predicted_s for r in done]) * 1e3
    s = np.array([r.simulated_s for r in done]) * 1e3
    ax.scatter(p, s, zorder=3)
    # placements at the same point (equal times to 3 digits) share one label, not a pile
    points: dict[tuple[str, str], list] = {}
    for r, x, y in zip(done, p, s):
        points.setdefault((f"{x:.3g}", f"{y:.3g}"), [x, y, []])[2].append(r.mapping)
    for x, y, names in points.values():
        text = ", ".join(names[:4]) + (f" +{len(names) - 4} more" if len(names) > 4 else "")
        ax.annotate(text, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    if len(done):
        lo, hi = min(p.min(), s.min()), max(p.max(), s.max())
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="predicted = simulated")
        ax.legend(fontsize=7)
    else:
        ax.text(0.5, 0.5, "no placement was simulated\n(every simulation failed or timed out)",
                ha="center", va="center", transform=ax.transAxes, fontsize=9)
    sp, pe = val.correlations()
    fmt = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
    ax.set_title(f"{val.scenario}\nSpearman {fmt(sp)}, Pearson {fmt(pe)}", fontsize=8)
    ax.set_xlabel("rankmap predicted time (ms)")
    ax.set_ylabel("SimGrid SMPI simulated time (ms)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    from ..io.atomic import write_atomic
    from ..report.figures import figure_bytes, image_format

    return write_atomic(path, figure_bytes(fig, image_format(path)), force=force)
