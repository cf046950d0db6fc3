"""Patterns made of other patterns: ``A + B + C`` and TOML ``[[phase]]`` tables.

The parts run one after the other: the phases of A, then B's, then C's. Every part must have
the same number of ranks. The result keeps the process grid (and wrap) of the first part that
has one. A phase name already taken by an earlier part gets ``.K`` appended, K being the
part's position (1-based), so ``stencil:... + stencil:...`` has phases ``halo`` and ``halo.2``.
A part in which no rank sends to another (``stencil:4x4:offsets=+1,0:to=lower``) is kept in
``params["empty_parts"]``: :func:`rankmap.patterns.check_moves_something` refuses it, as it
refuses that part alone, instead of reporting an all-zero phase.
"""

from __future__ import annotations

import re

from ..errors import RankmapError
from .base import Pattern, Phase

__all__ = ["split_composition", "compose", "unique_phase_name"]


def split_composition(text: str, kinds) -> list[str]:
    """Split ``A + B + C`` into its parts.

    A ``+`` separates parts when it has white space on both sides, or when a pattern kind
    (one of ``kinds``) or a ``.toml`` file name follows it directly; a ``+`` inside a part
    (``offsets=+1,0,0``, ``1e+6``) is left alone.

    Parameters
    ----------
    text : str
        A pattern spec, possibly ``A + B + C``.
    kinds : iterable of str
        The pattern kinds (a ``+`` directly followed by one separates parts).

    Returns
    -------
    list of str
        The parts, stripped; one part when ``text`` is no composition.
    """
    if re.search(r"(^|\s)\+\s*$|^\s*\+\s", text):
        raise RankmapError(f"bad pattern {text!r}: a '+' needs a pattern on each side")
    names = "|".join(sorted((re.escape(k) for k in kinds), key=len, reverse=True))
    pattern = rf"\s+\+\s+|\s*\+\s*(?=(?:{names})(?::|\s|\+|$)|[^\s+:]+\.toml(?:\s|\+|$))"
    parts = [p.strip() for p in re.split(pattern, text, flags=re.IGNORECASE)]
    if len(parts) > 1 and any(not p for p in parts):
        raise RankmapError(f"bad pattern {text!r}: a '+' needs a pattern on each side")
    return parts


def unique_phase_name(name: str, taken: set[str], part: int) -> str:
    """``name``, or ``name.PART`` (then ``name.PART.2`` ...) when ``name`` is taken.

    Parameters
    ----------
    name : str
        A phase name.
    taken : set of str
        Names already used.
    part : int
        Number of the part the phase comes from (2 for B in ``A + B``).

    Returns
    -------
    str
        ``name`` when free, else ``name.PART`` (then ``name.PART.2``, ...).
    """
    if name not in taken:
        return name
    out = f"{name}.{part}"
    k = 2
    while out in taken:
        out = f"{name}.{part}.{k}"
        k += 1
    return out


def compose(spec_text: str, parts: list[Pattern], names: list[str | None] | None = None,
            n_ranks: int | None = None, kind: str = "phases") -> Pattern:
    """The parts' phases in order, on the grid of the first part that has one.

    Parameters
    ----------
    spec_text : str
        Spec of the whole, kept on the pattern and named in errors.
    parts : list of Pattern
        The parts, in order.
    names : list of (str or None), optional
        A name for each part's phases (a one-phase part's phase is renamed to it, a
        multi-phase part's phases become ``NAME.PHASE``); None keeps the part's own names.
    n_ranks : int, optional
        Ranks every part must have (default: the first part's).
    kind : str
        Kind of the result.

    Returns
    -------
    Pattern
        Kind ``kind``; ``params`` lists the parts' specs and kinds, and under
        ``empty_parts`` (only when there are some) the specs of the parts, at any depth,
        in which no rank sends to another.
    """
    if not parts:
        raise RankmapError(f"pattern {spec_text!r} has no parts")
    n = parts[0].n_ranks if n_ranks is None else int(n_ranks)
    names = names or [None] * len(parts)
    phases: list[Phase] = []
    taken: set[str] = set()
    grid = periodic = None
    for k, (part, name) in enumerate(zip(parts, names), 1):
        if part.n_ranks != n:
            raise RankmapError(f"bad pattern {spec_text!r}: part {k} ({part.spec!r}) has "
                               f"{part.n_ranks} ranks, part 1 has {n}")
        if grid is None and part.grid is not None:
            grid, periodic = part.grid, part.periodic
        for ph in part.phases:
            if name is None:
                pname = ph.name
            elif len(part.phases) == 1:
                pname = str(name)
            else:
                pname = f"{name}.{ph.name}"
            pname = unique_phase_name(pname, taken, k)
            taken.add(pname)
            phases.append(Phase(pname, ph.src, ph.dst, ph.bytes))
    params = {"parts": [p.spec for p in parts], "part_kinds": [p.kind for p in parts]}
    # parts that move nothing (and those of parts that are compositions themselves)
    empty = [s for p in parts for s in ([p.spec] if not any(ph.n_flows for ph in p.phases)
                                        else p.params.get("empty_parts", []))]
    if empty:
        params["empty_parts"] = empty
    return Pattern(spec=spec_text, kind=kind, n_ranks=n, phases=phases, grid=grid,
                   periodic=periodic, params=params,
                   notes=list(dict.fromkeys(t for p in parts for t in p.notes)))
