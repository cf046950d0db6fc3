"""Nearest-neighbour stencils on a Cartesian process grid (halo exchange).

``stencil:128x128`` is a star stencil (2d neighbours: ±1 along each dimension); ``:box`` adds
the diagonals (3^d - 1 neighbours). ``:periodic`` wraps every dimension; otherwise ranks on
the boundary have fewer neighbours. Every rank sends ``bytes`` (default 1 MiB) to each
neighbour. A neighbour that is the rank itself (a periodic dimension of size 1) is dropped;
on a periodic dimension of size 2 both sides are the same rank and both messages are kept,
as MPI_Cart_shift would give them.
"""

from __future__ import annotations

import itertools

import numpy as np
from numba import njit

from ..errors import RankmapError
from .base import Pattern, Phase


def stencil_offsets(ndim: int, box: bool) -> np.ndarray:
    """Neighbour offsets: the 2*ndim axis steps (star) or all 3^ndim - 1 (box)."""
    if box:
        offs = [o for o in itertools.product((-1, 0, 1), repeat=ndim) if any(o)]
    else:
        offs = []
        for d in range(ndim):
            for s in (-1, 1):
                o = [0] * ndim
                o[d] = s
                offs.append(tuple(o))
    return np.array(offs, dtype=np.int64)


@njit(cache=True)
def _stencil_kernel(grid, periodic, offsets, src, dst):
    """Fill src/dst with every (rank, neighbour) pair; returns the number of flows written."""
    nd = grid.shape[0]
    n = 1
    for d in range(nd):
        n *= grid[d]
    cstride = np.ones(nd, dtype=np.int64)  # row-major, last dimension fastest
    for d in range(nd - 2, -1, -1):
        cstride[d] = cstride[d + 1] * grid[d + 1]
    coords = np.zeros(nd, dtype=np.int64)
    k = 0
    for r in range(n):
        rem = r
        for d in range(nd):
            coords[d] = rem // cstride[d]
            rem -= coords[d] * cstride[d]
        for o in range(offsets.shape[0]):
            target = 0
            ok = True
            for d in range(nd):
                x = coords[d] + offsets[o, d]
                if x < 0 or x >= grid[d]:
                    if not periodic[d]:
                        ok = False
                        break
                    x %= grid[d]
                target += x * cstride[d]
            if ok and target != r:
                src[k] = r
                dst[k] = target
                k += 1
    return k


def stencil_flows(grid, periodic, offsets, nbytes=None) -> tuple[np.ndarray, np.ndarray]:
    """Flows (src, dst) of every rank of ``grid`` to every offset neighbour, rank-major."""
    grid = np.asarray(grid, dtype=np.int64)
    n = int(np.prod(grid))
    cap = n * len(offsets)
    src = np.empty(cap, dtype=np.int64)
    dst = np.empty(cap, dtype=np.int64)
    k = _stencil_kernel(grid, np.asarray(periodic, dtype=np.bool_),
                        np.ascontiguousarray(offsets, dtype=np.int64), src, dst)
    return src[:k], dst[:k]


def make_stencil(spec_text: str, grid: tuple[int, ...], box: bool = False,
                 periodic: bool | tuple[bool, ...] = False, nbytes: int = 1 << 20,
                 name: str = "halo") -> Pattern:
    """A one-phase halo-exchange pattern on ``grid`` (see module docstring)."""
    if not 1 <= len(grid) <= 6:
        raise RankmapError(f"bad stencil grid {'x'.join(map(str, grid))}: 1 to 6 dimensions")
    per = (periodic,) * len(grid) if isinstance(periodic, bool) else tuple(periodic)
    src, dst = stencil_flows(grid, per, stencil_offsets(len(grid), box), nbytes)
    return Pattern(spec=spec_text, kind="stencil", n_ranks=int(np.prod(grid)),
                   phases=[Phase(name, src, dst, float(nbytes))], grid=tuple(grid),
                   periodic=per, params={"box": box, "bytes": nbytes})
