"""Counters on a machine's directed links: matching rows to links, and the busiest links.

:func:`align_to_machine` places one phase's rows on the machine's links;
:func:`link_load_summary` does it for every phase of a counters file and lists the busiest
links (what ``rankmap links`` prints, draws and reports).
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from .reader import CounterPhase, CounterRun

__all__ = ["align_to_machine", "hottest_links", "link_load_summary"]


#: link columns a counters file may leave out
OPTIONAL_COLUMNS = ("lane",)


def _codes(machine_col: np.ndarray, csv_col: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    a, b = np.asarray(machine_col), np.asarray(csv_col)
    if a.dtype.kind not in "iu" or b.dtype.kind not in "iu":
        a, b = a.astype(str), b.astype(str)
    both = np.concatenate([a, b])
    uniq, inv = np.unique(both, return_inverse=True)
    return inv[:len(machine_col)], inv[len(machine_col):], len(uniq)


def _occurrence(key: np.ndarray) -> np.ndarray:
    """How many earlier entries have the same key (0 for the first): tells apart parallel
    links that share every column, e.g. a dragonfly's parallel global links between the same
    two routers, by their order of appearance."""
    if len(key) == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(key, kind="stable")
    sk = key[order]
    start = np.r_[True, sk[1:] != sk[:-1]]
    first = np.maximum.accumulate(np.where(start, np.arange(len(sk)), 0))
    occ = np.empty(len(key), dtype=np.int64)
    occ[order] = np.arange(len(sk)) - first
    return occ


def align_to_machine(machine, phase: CounterPhase, source: str = "counters") -> np.ndarray:
    """Per-link counts of one phase in the machine's link order.

    Rows are matched by the machine's link columns (``src,dim,dir,dst`` on a torus); parallel
    links that share every column are told apart by their order of appearance.

    Parameters
    ----------
    machine : Machine
        The machine whose links the rows name.
    phase : CounterPhase
        One phase of a counters file.
    source : str
        Name of the file, for error messages (``FILE:LINE: ...``).

    Returns
    -------
    numpy.ndarray
        float64, shape (machine.n_links,): the phase's count (bytes or packets, the file's
        unit) on every link; links absent from the file count 0.

    Raises
    ------
    RankmapError
        A link column is missing, the machine has no links, a row names no link of the
        machine, or a link is given twice.
    """
    mcols = machine.link_columns()
    # a file without ``lane`` (written before it) tells parallel links apart by their order
    mcols = {c: v for c, v in mcols.items() if c in phase.columns or c not in OPTIONAL_COLUMNS}
    missing = [c for c in mcols if c not in phase.columns]
    if missing:
        raise RankmapError(f"{source}: columns {','.join(missing)} are needed to place the "
                           f"counters on {machine.spec} (it names links by {','.join(mcols)})")
    if machine.n_links == 0:
        raise RankmapError(f"{source}: machine {machine.spec} has no links to place the "
                           "counters on")
    key_m = np.zeros(machine.n_links, dtype=np.int64)
    key_c = np.zeros(len(phase.values), dtype=np.int64)
    for c in mcols:   # combine column codes, re-coded after each step so keys stay small
        cm, cc, n = _codes(mcols[c], phase.columns[c])
        key_m, key_c, _n = _codes(key_m * n + cm, key_c * n + cc)
    base_m, base_c = key_m, key_c
    occ_m, occ_c = _occurrence(base_m), _occurrence(base_c)
    span = int(max(occ_m.max(initial=0), occ_c.max(initial=0))) + 1
    key_m, key_c = base_m * span + occ_m, base_c * span + occ_c
    order = np.argsort(key_m, kind="stable")
    pos = np.searchsorted(key_m[order], key_c)
    pos = np.minimum(pos, len(order) - 1)
    found = key_m[order][pos] == key_c
    if not found.all():
        k = int(np.nonzero(~found)[0][0])
        row = ",".join(f"{c}={phase.columns[c][k]}" for c in mcols)
        where = f"{source}:{phase.lines[k]}" if phase.lines is not None else source
        if np.isin(base_c[k], base_m):
            raise RankmapError(f"{where}: link {row} appears twice in phase {phase.name}")
        raise RankmapError(f"{where}: link {row} is not a link of {machine.spec}")
    idx = order[pos]
    out = np.zeros(machine.n_links, dtype=np.float64)
    out[idx] = phase.values
    return out


def hottest_links(machine, loads: np.ndarray, n: int) -> list[dict]:
    """The ``n`` busiest links, busiest first.

    Parameters
    ----------
    machine : Machine
        The machine (its link columns name each link).
    loads : numpy.ndarray
        Count on every link, in the machine's link order (bytes or packets).
    n : int
        How many links to list (ties keep link order).

    Returns
    -------
    list of dict
        Per link: the machine's link columns (plain ints or strings), ``src_coords`` (the
        source node's coordinates, None when links have no ``src`` column or start at a
        switch or router) and ``load`` (the count, float).
    """
    cols = machine.link_columns()
    top = np.argsort(-loads, kind="stable")[:n]
    out = []
    for i in top.tolist():
        row = {c: (v[i].item() if hasattr(v[i], "item") else v[i]) for c, v in cols.items()}
        src = int(cols["src"][i]) if "src" in cols else -1
        # a switch's (or router's) vertex follows the nodes: it has no node coordinates
        row["src_coords"] = [int(c) for c in machine.coords(src)] \
            if 0 <= src < machine.n_nodes else None
        row["load"] = float(loads[i])
        out.append(row)
    return out


def link_load_summary(machine, run: CounterRun, phase: str | None, top: int,
                      source: str) -> tuple[dict[str, np.ndarray], dict]:
    """Every phase of a counters file on the machine's links, with its busiest links.

    Parameters
    ----------
    machine : Machine
        The machine whose links the file names.
    run : CounterRun
        The counters file read.
    phase : str or None
        Only this phase (None: every phase, in file order).
    top : int
        Busiest links listed per phase (>= 0).
    source : str
        The file name (shown in the document and in errors).

    Returns
    -------
    loads : dict of str to numpy.ndarray
        Per phase name, the count on every link in the machine's link order.
    doc : dict
        ``{"file", "machine", "unit", "phases": [{"phase", "links", "max", "mean",
        "hottest"}]}``: counts in the file's unit (bytes or packets), ``hottest`` as
        :func:`hottest_links` gives it.

    Raises
    ------
    RankmapError
        ``top`` is negative, the phase is unknown, or a row names no link of the machine.
    """
    if top < 0:
        raise RankmapError(f"bad --top {top}: must be >= 0")
    phases = [run.phase(phase)] if phase else list(run.phases.values())
    loads = {ph.name: align_to_machine(machine, ph, source) for ph in phases}
    doc = {"file": source, "machine": machine.spec, "unit": run.unit,
           "phases": [{"phase": name, "links": int(machine.n_links), "max": float(v.max()),
                       "mean": float(v.mean()), "hottest": hottest_links(machine, v, top)}
                      for name, v in loads.items()]}
    return loads, doc
