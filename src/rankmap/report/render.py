"""Presenting a comparison: rich table, CSV, JSON, and the one-line explanation of the winner."""

from __future__ import annotations

import csv
import io

from ..evaluation import Comparison, Evaluation
from ..units import format_bytes
from ..validate import json_text

COLUMNS = [
    ("max_link_streams", "max\nstreams", lambda v: f"{v:d}"),
    ("max_link_bytes", "busiest\nlink", format_bytes),
    ("plateau_bytes", "plateau\npoint", format_bytes),
    ("mean_link_bytes", "mean\nlink", format_bytes),
    ("avg_hops", "avg\nhops", lambda v: f"{v:.2f}"),
    ("hop_bytes", "hop-\nbytes", lambda v: f"{v:.3g}"),
    ("predicted_time_s", "predicted\ntime", lambda v: f"{v * 1e3:.3f} ms"),
    # machines with a node structure (node=): bytes between NUMA domains of a node (JSON
    # also has intra_node_bytes and inter_socket_bytes)
    ("inter_domain_bytes", "inter-\ndomain", format_bytes),
]


def reference(comp: Comparison) -> Evaluation:
    """The baseline the winner is compared with: ``inorder`` if evaluated, else the worst."""
    return comp.find("inorder") or comp.candidates[-1]


def explain(comp: Comparison) -> str:
    """One line saying which candidate wins and by how much over the baseline."""
    best, ref = comp.best, reference(comp)
    if len(comp.candidates) == 1:
        return f"{best.name}: the only candidate"
    if best is ref:
        return f"{best.name}: best of {len(comp.candidates)} candidates (the default order is already best)"
    mb, mr = best.metrics, ref.metrics
    parts = []
    if "predicted_time_s" in mb and mb["predicted_time_s"] > 0:
        parts.append(f"predicted time {mr['predicted_time_s'] / mb['predicted_time_s']:.2f}x shorter")
    if mb["max_link_bytes"] > 0:
        ratio = mr["max_link_bytes"] / mb["max_link_bytes"]
        parts.append(f"busiest link {ratio:.2f}x lighter" if ratio >= 1
                     else "busiest link carries traffic the reference's does not" if ratio == 0
                     else f"busiest link {1 / ratio:.2f}x heavier")
    elif mr["max_link_bytes"] > 0:
        parts.append("no network traffic at all")
    text = f"{best.name}: " + ", ".join(parts) + (f" than {ref.name}" if parts else "")
    if mr["hop_bytes"] > 0:
        text += (", " if parts else "") + (f"hop-bytes {mb['hop_bytes'] / mr['hop_bytes']:.2f}x "
                                           f"{ref.name}'s")
    return text


def table(comp: Comparison, title: str | None = None):
    """A rich Table of every candidate, best first."""
    from rich.table import Table

    present = [c for c in COLUMNS if all(c[0] in e.metrics for e in comp.candidates)]
    t = Table(title=title, title_justify="left", header_style="bold")
    t.add_column("", width=1)
    t.add_column("mapping", style="bold")
    for _key, head, _fmt in present:
        t.add_column(head, justify="right")
    ref = reference(comp)
    t.add_column(f"vs\n{ref.name}", justify="right")
    for i, e in enumerate(comp.candidates):
        ratio = (e.metrics["max_link_bytes"] / ref.metrics["max_link_bytes"]
                 if ref.metrics["max_link_bytes"] else 1.0)
        t.add_row("*" if i == 0 else "", e.name,
                  *[fmt(e.metrics[key]) for key, _h, fmt in present], f"{ratio:.2f}",
                  style="green" if i == 0 else None)
    return t


def to_csv(comp: Comparison) -> str:
    """One row per candidate and phase (phase ``all`` = combined), best first."""
    keys = [c[0] for c in COLUMNS if all(c[0] in e.metrics for e in comp.candidates)]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["mapping", "best", "phase"] + keys)
    for i, e in enumerate(comp.candidates):
        rows = [("all", e.metrics)] + [(p.name, p.metrics) for p in e.phases]
        for phase, m in rows:
            w.writerow([e.name, int(i == 0), phase] + [repr(m[k]) if isinstance(m[k], float)
                                                       else m[k] for k in keys])
    return out.getvalue()


def to_json(comp: Comparison) -> str:
    """The compare JSON document (design.md), with the explanation added."""
    doc = comp.to_json()
    doc["why"] = explain(comp)
    return json_text(doc, indent=1)
