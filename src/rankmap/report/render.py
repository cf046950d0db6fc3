"""Presenting a comparison: rich table, CSV, JSON, and the one-line explanation of the winner."""

from __future__ import annotations

import csv
import io
import re
from typing import NamedTuple

from ..evaluation import Comparison, Evaluation
from ..metrics import near_tie_band, primary, ranking_key
from ..patterns.base import ALL_PHASES
from ..units import format_bytes, format_seconds
from ..validate import json_text

__all__ = ["COLUMNS", "reference", "busiest_ratio", "explain", "table", "to_csv", "to_json",
           "share_text", "TableColumn", "FitTable", "break_text"]

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

# the columns a narrow terminal leaves out first (1 first); the others are always shown
_DROP_ORDER = {"mean_link_bytes": 1, "avg_hops": 2, "max_link_streams": 3,
               "inter_domain_bytes": 4, "hop_bytes": 5, "plateau_bytes": 6}


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
    modelled), busiest-link bytes and hop-bytes, and says so when the baseline is the worst
    of three or more candidates (inorder not evaluated).

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
    if ref.name != "inorder" and len(comp.candidates) > 2:
        # the baseline is then the worst of several: the ratios would read as gains on inorder
        text += f" ({ref.name} is the worst candidate: inorder, the usual baseline, was not " \
                "evaluated)"
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
        # (with the time model off nothing is timed: the busiest link ties)
        tied = "as fast as" if "predicted_time_s" in mb else "tied with"
        parts[0] += (f", {tied} {len(band) - 1} more: "
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


def table(comp: Comparison, title: str | None = None) -> "FitTable":
    """A table of every candidate, best first, fitted to the console's width.

    Shows the :data:`COLUMNS` every candidate has a metric for, and (with more than one
    candidate) the ratio of each candidate's busiest-link bytes to the :func:`reference`'s
    (:func:`busiest_ratio`); the winner is starred. Numbers are never broken across lines;
    mapping names wrap after ``:``, ``-``, ``,`` and the like. On a terminal too narrow for
    every column, the least telling (mean link, avg hops, max streams, inter-domain,
    hop-bytes, plateau point, in that order) are left out and a line below the table names
    them (:class:`FitTable`).

    Parameters
    ----------
    comp : Comparison
        The evaluated candidates, best first.
    title : str, optional
        Title printed above the table.

    Returns
    -------
    FitTable
        The table, ready for a rich Console.
    """
    present = [c for c in COLUMNS if all(c[0] in e.metrics for e in comp.candidates)]
    ref = reference(comp)
    alone = len(comp.candidates) == 1          # (evaluate: no other candidate to compare)
    columns = [TableColumn("", justify="left"),
               TableColumn("mapping", number=False, style="bold")]
    columns += [TableColumn(head, drop=_DROP_ORDER.get(key)) for key, head, _fmt in present]
    if not alone:
        columns.append(TableColumn(f"busiest\nvs {ref.name}", drop=7))
    rows = [["*" if i == 0 else "", e.name, *[fmt(e.metrics[key]) for key, _h, fmt in present],
             *([] if alone else [busiest_ratio(e, ref)])]
            for i, e in enumerate(comp.candidates)]
    return FitTable(columns, rows, title=title,
                    row_styles=["green" if i == 0 else None for i in range(len(rows))])


class TableColumn(NamedTuple):
    """A column of a :class:`FitTable`.

    Parameters
    ----------
    header : str
        The heading (``\\n`` starts a new line; it also wraps at spaces and after ``-``).
    number : bool
        A column of numbers (with their units): a cell is never broken across lines. Else
        a column of names, wrapped after ``:``, ``,``, ``_``, ``-``, ``/`` and the like (and
        cut only where a part alone is wider than the column).
    drop : int or None
        On a console too narrow for every column, the columns are left out in this order
        (1 first); None: always shown.
    style : str or None
        The rich style of the column's cells.
    justify : str or None
        ``left`` or ``right``; by default numbers right, names left.
    """

    header: str
    number: bool = True
    drop: int | None = None
    style: str | None = None
    justify: str | None = None


_NAME_MIN = 10          # a name column is not made narrower than this (if its names are wider)
_PIECE = re.compile(r"[^\s:,;_/+=)\-]+[:,;_/+=)\-]*\s*|[:,;_/+=)\-]+\s*|\s+")


def break_text(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` cells, broken after a space, ``:``, ``,``,
    ``;``, ``_``, ``/``, ``+``, ``=``, ``)`` or ``-`` where it can, else cut (a part longer
    than a whole line). Line breaks in ``text`` are kept.

    Parameters
    ----------
    text : str
        The text (a name, a heading).
    width : int
        The most cells per line (at least 1).

    Returns
    -------
    list of str
        The lines, trailing spaces removed; ``[""]`` for an empty text.
    """
    from rich.cells import cell_len, chop_cells

    width = max(1, width)
    out: list[str] = []
    for para in text.split("\n"):
        line = ""
        for piece in _PIECE.findall(para) or [""]:
            if cell_len((line + piece).rstrip()) <= width:
                line += piece
                continue
            if line.strip():
                out.append(line.rstrip())
            line = piece.lstrip()
            while cell_len(line.rstrip()) > width:      # a part wider than a line: cut
                head = chop_cells(line, width)[0]
                out.append(head)
                line = line[len(head):]
        out.append(line.rstrip())
    return out


def _widest_piece(text: str) -> int:
    """The widest part of ``text`` :func:`break_text` does not break."""
    from rich.cells import cell_len
    return max((cell_len(p.rstrip()) for line in text.split("\n")
                for p in _PIECE.findall(line)), default=0)


class FitTable:
    """A rich renderable: a table laid out for the width it is printed at.

    Number cells are never broken (a number split over two lines reads as two numbers, a
    number cut short as another number); names wrap at sensible points
    (:func:`break_text`), never with an ellipsis. When the numbers and the names' least
    width do not fit, the columns with a ``drop`` rank are left out (rank 1 first) and a
    dim line under the table names them.

    Parameters
    ----------
    columns : list of TableColumn
        The columns.
    rows : list of list of str
        The cells, one string each (printed as they are: no rich markup).
    title : str, optional
        Title above the table.
    row_styles : list of (str or None), optional
        A rich style per row.
    more : str
        What the line naming left-out columns adds (where to find them).
    """

    def __init__(self, columns, rows, title: str | None = None, row_styles=None,
                 more: str = "--format csv or json has every column"):
        self.columns = list(columns)
        self.rows = [list(r) for r in rows]
        self.title = title
        self.row_styles = list(row_styles) if row_styles is not None else [None] * len(rows)
        self.more = more

    def _needs(self):
        """Per column: (width of the numbers or of the widest name, least width)."""
        from rich.cells import cell_len
        out = []
        for i, col in enumerate(self.columns):
            cells = [r[i] for r in self.rows]
            head = _widest_piece(col.header)
            widest = max([1] + [cell_len(line) for c in cells for line in c.split("\n")])
            full = max([widest] + [cell_len(line) for line in col.header.split("\n")])
            if col.number:          # the numbers whole; the heading whole if there is room
                out.append((full, max(widest, head)))
            else:
                out.append((full, min(full, max(_NAME_MIN, head))))
        return out

    def layout(self, width: int) -> tuple[list[int], dict[int, int], bool]:
        """Which columns to show at ``width`` cells, and how wide.

        Parameters
        ----------
        width : int
            The cells available.

        Returns
        -------
        tuple
            The indices of the columns shown, their widths ({index: cells, no padding})
            and whether even so the numbers do not fit (then they fold: a console this
            narrow shows no table whole).
        """
        needs = self._needs()
        keep = list(range(len(self.columns)))

        def overhead(n):          # the borders (n + 1) and a space each side of a cell
            return 3 * n + 1

        def least(cols):
            return overhead(len(cols)) + sum(needs[i][1] for i in cols)

        order = sorted((c.drop, i) for i, c in enumerate(self.columns) if c.drop is not None)
        for _rank, i in order:
            if least(keep) <= width:
                break
            keep.remove(i)
        names = [i for i in keep if not self.columns[i].number]
        # the numbers' headings whole (on fewer lines) when the names keep their least width
        whole = least(keep) + sum(needs[i][0] - needs[i][1] for i in keep if i not in names)
        widths = {i: needs[i][0 if whole <= width else 1] for i in keep if i not in names}
        room = width - overhead(len(keep)) - sum(widths.values())
        # the names share the room: each its full width if it fits, else an equal share
        for k, i in enumerate(sorted(names, key=lambda j: needs[j][0])):
            share = room // (len(names) - k)
            widths[i] = max(needs[i][1] if room >= needs[i][1] else 1,
                            min(needs[i][0], share))
            room -= widths[i]
        for i in keep:          # what is left keeps the numbers' headings on fewer lines
            if self.columns[i].number and room > 0:
                grow = min(room, needs[i][0] - widths[i])
                widths[i] += grow
                room -= grow
        return keep, widths, least(keep) > width

    def __rich_console__(self, console, options):
        from rich.table import Table
        from rich.text import Text

        keep, widths, squeezed = self.layout(options.max_width)
        # (names and titles are printed as they are: a '[b]' in a phase name is no markup)
        title = None if self.title is None else Text(self.title, style="table.title")
        t = Table(title=title, title_justify="left", header_style="bold")
        for i in keep:
            col, w = self.columns[i], widths[i]
            justify = col.justify or ("right" if col.number else "left")
            fold = squeezed or not col.number
            t.add_column(Text("\n".join(break_text(col.header, w))), justify=justify,
                         style=col.style, width=w, no_wrap=not fold,
                         overflow="fold" if fold else "crop")
        for row, style in zip(self.rows, self.row_styles):
            t.add_row(*[Text(row[i] if self.columns[i].number else
                             "\n".join(break_text(row[i], widths[i]))) for i in keep],
                      style=style)
        yield t
        left_out = [self.columns[i].header.replace("-\n", "-").replace("\n", " ")
                    for i in range(len(self.columns)) if i not in keep]
        if left_out:
            yield Text(f"not shown at this width ({options.max_width} columns): "
                       f"{', '.join(left_out)}" + (f"; {self.more}" if self.more else ""),
                       style="dim")

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement

        needs = self._needs()
        kept = [w for c, (_f, w) in zip(self.columns, needs) if c.drop is None]
        least = 3 * len(kept) + 1 + sum(kept)       # every column that may go left out
        full = 3 * len(needs) + 1 + sum(f for f, _w in needs)
        return Measurement(min(least, options.max_width), min(full, options.max_width))


def to_csv(comp: Comparison) -> str:
    """One row per candidate and phase (phase ``all`` = combined), best first.

    Columns: ``mapping``, ``best`` (1 for the winner), ``phase``, then the :data:`COLUMNS`
    metrics every candidate has, then every other metric of the JSON (``flows``,
    ``intra_node_bytes``, a dragonfly phase's ``avg_row_hops``, ...; empty in a row without
    it), in their units (bytes, seconds for ``predicted_time_s``); floats are written exactly
    (``repr``).

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
    # then every other metric the JSON has (in-node bytes, a dragonfly's hops by link kind,
    # flows), empty in a row without it: the same fields in every format
    keys += list(dict.fromkeys(k for e in comp.candidates
                               for m in [e.metrics] + [p.metrics for p in e.phases]
                               for k in m if k not in keys))
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["mapping", "best", "phase"] + keys)
    for i, e in enumerate(comp.candidates):
        rows = [(ALL_PHASES, e.metrics)] + [(p.name, p.metrics) for p in e.phases]
        for phase, m in rows:
            w.writerow([e.name, int(i == 0), phase] + [_csv_cell(m.get(k)) for k in keys])
    return out.getvalue()


def _csv_cell(value) -> str:
    """A metric as CSV writes it: floats exactly (``repr``), absent as empty."""
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


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
