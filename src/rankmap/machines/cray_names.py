"""Cray XC node names ``cX-YcCsSnN`` (cabinet column X, row Y, chassis C, slot S, node N).

A dragonfly group is a pair of cabinets: group = floor(X/2) + Y*floor(cabinet_cols/2), router
row = C + 3*(X mod 2), router column = S.
"""

from __future__ import annotations

__all__ = ["cray_cname"]


def cray_cname(group: int, row: int, col: int, node: int, cabinet_cols: int) -> str:
    """The Cray cname of a node given by its dragonfly coordinates.

    Parameters
    ----------
    group, row, col, node : int
        Dragonfly group, router row (chassis, 0-5) and column (slot), node of the router.
    cabinet_cols : int
        Cabinets per row of the machine room (even).

    Returns
    -------
    str
        ``cX-YcCsSnN``.
    """
    half = cabinet_cols // 2
    y, x = group // half, 2 * (group % half) + row // 3
    return f"c{x}-{y}c{row % 3}s{col}n{node}"
