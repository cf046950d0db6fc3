"""Presenting a comparison: rich table, CSV, JSON, and the one-line explanation of the winner."""

from __future__ import annotations

import csv
import io

from ..evaluation import Comparison, Evaluation
from ..metrics import near_tie_band, primary, ranking_key
from ..patterns.base import ALL_PHASES
from ..units import format_bytes, format_seconds
from ..validate import json_text

__all__ = ["COLUMNS", "reference", "busiest_ratio", "explain", "table", "to_csv", "to_json",
           "share_text"]

COLUMNS = [
    ("max_link_streams", "max\nstreams", lambda v: f"{v:d}"),
    ("max_link_bytes", "busiest\nlink", format_bytes),
    ("plateau_bytes", "plateau\npoint", format_bytes),
    ("mean_link_bytes", "mean\nlink", format_bytes),
    ("avg_hops", "avg\nhops", lambda v: f"{v:.2f}"),
    ("hop_bytes", "hop-\nbytes", lambda v: f"{v:.3g}"),
    ("predicted_time_s", "predicted\ntime", format_seconds),
    # machines with a node structure (node=): bytes between NUMA domains of a node (JSON
    # also has intra_node_bytes and inter_socket_bytes)
    ("inter_domain_bytes", "inter-\ndomain", format_bytes),
]


def reference(comp: Comparison) -> Evaluation:
    """The baseline the winner is compared with: ``inorder`` if evaluated, else the worst.

    Parameters
    ----------
    comp : Comparison
        The evaluated candidates, best first.

    Returns
    -------
    Evaluation
        The ``inorder`` candidate, or the last (worst-ranked) candidate when it was not
        evaluated.
    """
    return comp.find("inorder") or comp.candidates[-1]


def busiest_ratio(e: Evaluation, ref: Evaluation) -> str:
    """``e``'s busiest-link bytes over ``ref``'s, as the tables show it.

    Parameters
    ----------
    e, ref : Evaluation
        A candidate and the reference (:func:`reference`).

    Returns
    -------
    str
        The ratio with two decimals; ``1.00`` when both send nothing over the network, and
        ``n/a`` when only the reference does not (no ratio to a busiest link of 0 B).
    """
    mine, theirs = e.metrics["max_link_bytes"], ref.metrics["max_link_bytes"]
    if theirs > 0:
        return f"{mine / theirs:.2f}"
    return "1.00" if mine == 0 else "n/a"


def explain(comp: Comparison) -> str:
    """One line saying which candidate wins and by how much over the baseline.

    The baseline is :func:`reference`; the line gives the ratios of predicted time (when
    modelled), busiest-link bytes and hop-bytes.

    Parameters
    ----------
    comp : Comparison
        The evaluated candidates, best first.

    Returns
    -------
    str
        The explanation, without a trailing newline.
    """
    best, ref = comp.best, reference(comp)
    if len(comp.candidates) == 1:
        return f"{best.name}: the only candidate"
    if best is ref:
        return (f"{best.name}: best of {len(comp.candidates)} candidates (the default order "
                "is already best)")
    mb, mr = best.metrics, ref.metrics
    parts, same, facts = [], [], []     # "X shorter" than ref; the same X; X (no comparison)
    if "predicted_time_s" in mb and mb["predicted_time_s"] > 0:
        if ranking_key(mb)[0] == ranking_key(mr)[0]:   # a tie of the ranking rule
            same.append("predicted time")
        else:
            parts.append("predicted time " + _ratio_text(mr["predicted_time_s"],
                                                         mb["predicted_time_s"],
                                                         "shorter", "longer"))
    if mb["max_link_bytes"] > 0:
        if _same_bytes(mr["max_link_bytes"], mb["max_link_bytes"]):
            same.append("busiest link")
        elif mr["max_link_bytes"] == 0:
            facts.append(f"its busiest link carries traffic {ref.name}'s does not")
        else:
            parts.append("busiest link " + _ratio_text(mr["max_link_bytes"],
                                                       mb["max_link_bytes"], "lighter",
                                                       "heavier"))
    elif mr["max_link_bytes"] > 0:
        facts.append("no network traffic at all")
    text = f"{best.name}: " + ", ".join(parts) + (f" than {ref.name}" if parts else "")
    if facts:
        text += ("; " if parts else "") + ", ".join(facts)
    if same:
        text += ("; " if parts or facts else "") + f"the same {' and '.join(same)} as {ref.name}"
    if mr["hop_bytes"] > 0:
        text += (", " if parts or same or facts else "") + (
            f"hop-bytes {mb['hop_bytes'] / mr['hop_bytes']:.2f}x {ref.name}'s")
        if not parts and not facts and ref.name == "inorder" and \
                ranking_key(mb) == ranking_key(mr):
            # ranked first only because it was given first: the default order is as good
            text += (f" (a tie: {ref.name}, the default order, is as good; {best.name} was "
                     "given first)")
    elif not parts and not same and not facts:
        # nothing crosses the network under either (every rank on one node, or no bytes)
        text += f"no traffic crosses the network under it or {ref.name}: a tie, given first"
    return text


def _same_bytes(a: float, b: float) -> bool:
    """Whether two byte counts are the same up to float rounding (a relative 1e-9: sums of
    adaptive routing's 1/3 shares gave 268435456.00000143 for 2^28, which read as
    '5.3e-13% heavier')."""
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def _ratio_text(reference: float, value: float, better: str, worse: str) -> str:
    """``value`` against ``reference`` (both positive, unequal) as "1.25x better" or, when
    two decimals would show 1.00x, as "0.04% better" (worse: ``worse``)."""
    ratio = reference / value
    word = better if ratio > 1 else worse
    ratio = max(ratio, 1 / ratio)
    if ratio >= 1.005:
        return f"{ratio:.2f}x {word}"
    return f"{share_text(abs(1 - value / reference))} {word}"


def share_text(share: float) -> str:
    """A share as a percentage: one decimal (``12.5%``), two significant digits below 0.5 %
    (``0.06%``, ``0.002%``: a small margin never reads as ``0.0%``), ``0%`` for none.

    Parameters
    ----------
    share : float
        The share, e.g. 0.125 for 12.5 %.

    Returns
    -------
    str
        The percentage text.
    """
    if share == 0 or share >= 5e-3:
        return f"{share:.1%}" if share else "0%"
    return f"{share * 100:.2g}%"


def _time_text(seconds: float) -> str:
    """Three significant digits in the unit the table uses below 10 us (us), else ms or s."""
    if 0 < seconds < 1e-5:
        return f"{seconds * 1e6:.3g} us"
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def _primary_text(m: dict) -> str:
    return (_time_text(m["predicted_time_s"]) if "predicted_time_s" in m
            else f"busiest link {format_bytes(m['max_link_bytes'])}")


def pick_facts(comp: Comparison) -> dict:
    """Why the winner won, from the metrics of the evaluated candidates.

    Parameters
    ----------
    comp : Comparison
        Candidates best first (the ranking rule of :mod:`rankmap.metrics.ranking`).

    Returns
    -------
    dict
        ``winner``; ``decided_by`` (``"only candidate"``; ``"faster"``; ``"tie"``: as fast
        as others, ahead on busiest link then hop-bytes, design.md's tie rule, or given first
        when equal on both); ``runner_up`` (the next candidate) and ``fastest`` names;
        ``margin`` (1 - winner's primary figure / runner-up's: how far below the next the
        winner is); ``band`` (names as fast as the winner, itself included); the winner's and
        runner-up's predicted time, busiest link and hop-bytes; ``evaluated`` and ``skipped``
        counts; ``text``, the same in one line.
    """
    cands = comp.candidates
    best = cands[0]
    mets = [e.metrics for e in cands]
    band = [cands[i].name for i in near_tie_band(mets, 0.0)]     # exact ties of the primary figure
    facts = {"winner": best.name, "band": band,
             "evaluated": len(cands), "skipped": len(comp.skipped)}
    mb = best.metrics
    tail = f"{len(cands)} candidate{'s' if len(cands) != 1 else ''} evaluated" + (
        f", {len(comp.skipped)} skipped" if comp.skipped else "")
    if len(cands) == 1:
        facts.update(decided_by="only candidate", text=f"{best.name}: the only candidate "
                     f"({_primary_text(mb)}); {tail}")
        return facts
    nxt = cands[1]
    fastest = min(cands, key=lambda e: ranking_key(e.metrics))
    mn = nxt.metrics
    pb, pn = primary(mb), primary(mn)
    margin = 1 - pb / pn if pn > 0 else 0.0
    facts.update(runner_up=nxt.name, fastest=fastest.name, margin=margin,
                 winner_metrics={k: mb[k] for k in ("predicted_time_s", "max_link_bytes",
                                                    "hop_bytes") if k in mb},
                 runner_up_metrics={k: mn[k] for k in ("predicted_time_s", "max_link_bytes",
                                                       "hop_bytes") if k in mn})
    what = "predicted" if "predicted_time_s" in mb else "ranked on its"
    parts = [f"{best.name}: {what} {_primary_text(mb)}"]
    if len(band) > 1:
        # an exact tie on the primary figure: ranking_key's busiest link, then hop-bytes
        facts["decided_by"] = "tie"
        parts[0] += (f", as fast as {len(band) - 1} more: "
                     + _tie_text(mb, [(c.name, c.metrics) for c in cands
                                      if c.name in band[1:]]))
        if mn["hop_bytes"] > 0:
            parts.append(f"hop-bytes {mb['hop_bytes'] / mn['hop_bytes']:.2f}x {nxt.name}'s")
    else:
        facts["decided_by"] = "faster"
        parts[0] += f", {share_text(margin)} below the next ({nxt.name}, {_primary_text(mn)})"
        if mn["hop_bytes"] > 0:
            parts.append(f"hop-bytes {mb['hop_bytes'] / mn['hop_bytes']:.2f}x {nxt.name}'s")
    parts.append(f"busiest link {format_bytes(mb['max_link_bytes'])} vs "
                 f"{format_bytes(mn['max_link_bytes'])}")
    parts.append(tail)
    facts["text"] = "; ".join(parts)
    return facts


def _tie_text(mb: dict, others: list[tuple[str, dict]]) -> str:
    """How the winner (metrics ``mb``) ranks ahead of the candidates exactly as fast as it
    (``others``, names and metrics): a lighter busiest link, the same one with fewer
    hop-bytes, or neither (then it was given before them)."""
    groups = {"lighter": [], "fewer": [], "equal": [], "band": []}
    for name, m in others:
        link, hop = m["max_link_bytes"] - mb["max_link_bytes"], m["hop_bytes"] - mb["hop_bytes"]
        if _same_bytes(m["max_link_bytes"], mb["max_link_bytes"]):
            link = 0.0
        # "band": the other's busiest link is lighter; a near-tie band ranked it behind on
        # hop-bytes (a tolerance of the Python API's ranking)
        groups["lighter" if link > 0 else "band" if link < 0 else
               "fewer" if hop > 0 else "equal"].append(name)

    def whom(names):
        return (names[0] if len(names) == 1 else "them" if len(names) == len(others)
                else f"{len(names)} of them")

    bits = []
    if groups["lighter"]:
        bits.append(f"a lighter busiest link than {whom(groups['lighter'])}")
    if groups["fewer"]:
        bits.append(f"the same busiest link and fewer hop-bytes than {whom(groups['fewer'])}")
    if groups["band"]:
        bits.append(f"fewer hop-bytes than {whom(groups['band'])}, inside the near-tie band")
    if groups["equal"]:
        bits.append(f"the same busiest link and hop-bytes as {whom(groups['equal'])}, "
                    "and given before")
    return ", ".join(bits)


def explain_pick(comp: Comparison) -> str:
    """One line saying why the winner beat the others (:func:`pick_facts`)."""
    return pick_facts(comp)["text"]


def table(comp: Comparison, title: str | None = None):
    """A rich Table of every candidate, best first.

    Shows the :data:`COLUMNS` every candidate has a metric for, and (with more than one
    candidate) the ratio of each candidate's busiest-link bytes to the :func:`reference`'s
    (:func:`busiest_ratio`); the winner is starred.

    Parameters
    ----------
    comp : Comparison
        The evaluated candidates, best first.
    title : str, optional
        Title printed above the table.

    Returns
    -------
    rich.table.Table
        The table, ready for a rich Console.
    """
    from rich.table import Table

    present = [c for c in COLUMNS if all(c[0] in e.metrics for e in comp.candidates)]
    t = Table(title=title, title_justify="left", header_style="bold")
    # on a narrow terminal a cell wraps onto a second line (overflow="fold"), never "…":
    # a number cut short would read as another number
    t.add_column("", width=1)
    t.add_column("mapping", style="bold", overflow="fold")
    for _key, head, _fmt in present:
        t.add_column(head, justify="right", overflow="fold")
    ref = reference(comp)
    alone = len(comp.candidates) == 1          # (evaluate: no other candidate to compare)
    if not alone:
        t.add_column(f"busiest\nvs {ref.name}", justify="right", overflow="fold")
    for i, e in enumerate(comp.candidates):
        t.add_row("*" if i == 0 else "", e.name,
                  *[fmt(e.metrics[key]) for key, _h, fmt in present],
                  *([] if alone else [busiest_ratio(e, ref)]),
                  style="green" if i == 0 else None)
    return t


def to_csv(comp: Comparison) -> str:
    """One row per candidate and phase (phase ``all`` = combined), best first.

    Columns: ``mapping``, ``best`` (1 for the winner), ``phase``, then the :data:`COLUMNS`
    metrics every candidate has, in their units (bytes, seconds for ``predicted_time_s``);
    floats are written exactly (``repr``).

    Parameters
    ----------
    comp : Comparison
        The evaluated candidates, best first.

    Returns
    -------
    str
        The CSV text with a header row, lines ending in ``\\n``.
    """
    keys = [c[0] for c in COLUMNS if all(c[0] in e.metrics for e in comp.candidates)]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["mapping", "best", "phase"] + keys)
    for i, e in enumerate(comp.candidates):
        rows = [(ALL_PHASES, e.metrics)] + [(p.name, p.metrics) for p in e.phases]
        for phase, m in rows:
            w.writerow([e.name, int(i == 0), phase] + [repr(m[k]) if isinstance(m[k], float)
                                                       else m[k] for k in keys])
    return out.getvalue()


def to_json(comp: Comparison, settings: dict | None = None) -> str:
    """The compare JSON document (design.md), with the explanation added.

    Parameters
    ----------
    comp : Comparison
        The evaluated candidates, best first.
    settings : dict, optional
        What else the numbers depend on, recorded under ``settings`` (the command line's
        ``plateau_y``, the fraction of links of ``plateau_bytes``, and ``seed``).

    Returns
    -------
    str
        The JSON text: :meth:`Comparison.to_json` plus ``why`` (:func:`explain`), ``pick``
        (:func:`pick_facts`) and ``settings`` when given.
    """
    doc = comp.to_json()
    doc["why"] = explain(comp)
    doc["pick"] = pick_facts(comp)
    if settings:
        doc["settings"] = dict(settings)
    return json_text(doc, indent=1)
