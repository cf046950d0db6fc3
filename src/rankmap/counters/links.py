"""Matching counters rows to a machine's directed links (for link-load maps)."""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from .reader import CounterPhase


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
    """Per-link counts in the machine's link order (length ``machine.n_links``), matching the
    rows by the machine's link columns (``src,dim,dir,dst`` on a torus). Links absent from the
    file count 0; a row naming no link of the machine, or a link given twice, is an error."""
    mcols = machine.link_columns()
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
