"""The whole analysis of a set of counters files, as one JSON-ready document."""

from __future__ import annotations

from ..errors import RankmapError
from .analysis import DEFAULT_PERCENTILES, phase_stats
from .correlation import correlation_table
from .reader import ALL_PHASES, CounterPhase, CounterRun


def selected_phases(run: CounterRun, phase: str | None, aggregate: bool) -> list[CounterPhase]:
    """The phases of ``run`` to analyse: one named phase, all summed, or each in turn.

    Parameters
    ----------
    run : CounterRun
        A counters file.
    phase : str or None
        One phase by name, or None for all.
    aggregate : bool
        Sum the phases per link into one (phase ``all``).

    Returns
    -------
    list of CounterPhase
        The phases to analyse.
    """
    if aggregate:
        return [run.aggregated()]
    if phase is not None:
        return [run.phase(phase)]
    return list(run.phases.values())


def analyse(runs: list[CounterRun], y: float, percentiles=DEFAULT_PERCENTILES,
            phase: str | None = None, aggregate: bool = False, times: dict | None = None,
            ys=None, by: str = "pearson") -> dict:
    """``{"unit", "y", "counters": [{"label", "file", "phase", "links", "max", "mean",
    "percentiles", "plateau": {"y", "x"}}], "warnings": [...]}`` plus ``"correlation"``
    ({phase: sweep result}) when ``times`` are given. Counts are in ``unit`` (bytes/packets).

    Parameters
    ----------
    runs : list of CounterRun
        The counters files read.
    y : float
        Fraction of links of the plateau point, in (0, 1].
    percentiles : sequence of float
        Percentiles reported, in [0, 100].
    phase : str, optional
        Only this phase.
    aggregate : bool
        Sum each run's phases per link first.
    times : dict, optional
        ``{(label, phase): seconds}``; adds the correlation of every analysed phase (with
        ``phase`` or ``aggregate``, times of the phases left out are ignored).
    ys : numpy.ndarray, optional
        The y values of the correlation sweep.
    by : str
        ``pearson`` or ``spearman``.

    Returns
    -------
    dict
        The document above (counts in ``unit``, times in s).
    """
    if not 0 < y <= 1:
        raise RankmapError(f"bad --y {y}: must be in (0, 1]")
    notes: list[str] = []
    rows = []
    for r in runs:
        if aggregate and len(r.phases) > 1:
            notes.append(f"{r.path}: summing its {len(r.phases)} phases "
                         f"({', '.join(r.phases)}): counters spanning several phases hide "
                         "contention and correlate poorly with time (paper 000, section V)")
        for ph in selected_phases(r, phase, aggregate):
            st = phase_stats(ph.values, y, percentiles)
            rows.append({"label": r.label, "file": r.path, "phase": ph.name, **st})
    doc = {"unit": runs[0].unit, "y": y, "counters": rows}
    if times is not None:
        use = runs
        if aggregate or phase is not None:
            use = [CounterRun(r.label, r.path, r.unit,
                              {p.name: p for p in selected_phases(r, phase, aggregate)},
                              r.has_phase_column) for r in runs]
            # times of the phases --phase (or --aggregate) leaves out are not analysed: the
            # analysis of a phase uses that phase's times only
            kept = list(dict.fromkeys(p for r in use for p in r.phases))
            given = list(dict.fromkeys(ph for _lab, ph in times))
            times = {key: t for key, t in times.items() if key[1] in kept}
            if not times:
                flag = "--aggregate" if aggregate else f"--phase {phase}"
                raise RankmapError(f"the times give no time for phase {', '.join(kept)}, "
                                   f"which {flag} analyses (they give phase "
                                   f"{', '.join(given)})")
        corr, more = correlation_table(use, times, ys, by)
        notes.extend(more)
        doc["correlation"] = {
            ph: {"labels": res["labels"], "seconds": res["seconds"], "by": res["by"],
                 "best": res["best"], "busiest": res["busiest"], "sweep": res["sweep"],
                 "plateau_x": [{"y": yy, "x": xs} for yy, xs in sorted(res["x"].items())]}
            for ph, res in corr.items()}
        doc["_corr"] = corr
    doc["warnings"] = list(dict.fromkeys(notes))
    return doc


__all__ = ["ALL_PHASES", "analyse", "selected_phases", "phase_series", "fmt_count"]


def phase_series(runs, phase: str | None = None, aggregate: bool = False) -> dict:
    """Per-link counts of every analysed phase.

    Parameters
    ----------
    runs : list of CounterRun
        The counter files read.
    phase : str, optional
        Only this phase (``--phase``).
    aggregate : bool
        Sum the phases per link (``--aggregate``).

    Returns
    -------
    dict
        ``{phase: {label: per-link counts}}`` in file order.
    """
    by_phase: dict = {}
    for r in runs:
        for ph in selected_phases(r, phase, aggregate):
            by_phase.setdefault(ph.name, {})[r.label] = ph.values
    return by_phase


def fmt_count(v: float, unit: str) -> str:
    """A count for people: bytes with a binary suffix, packets as a number.

    Parameters
    ----------
    v : float
        The count.
    unit : str
        ``bytes`` or ``packets``.

    Returns
    -------
    str
        E.g. ``1.5 MiB`` or ``1234``.
    """
    from ..units import format_bytes

    return format_bytes(v) if unit == "bytes" else f"{v:.4g}"
