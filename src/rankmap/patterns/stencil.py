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


def stencil_flows(grid, periodic, offsets, nbytes) -> tuple[np.ndarray, np.ndarray]:
    """Flows (src, dst) of every rank of ``grid`` to every offset neighbour."""
    grid = np.array(grid, dtype=np.int64)
    n = int(np.prod(grid))
    coords = np.stack(np.unravel_index(np.arange(n), tuple(grid)), axis=-1)
    srcs, dsts = [], []
    periodic = np.array(periodic, dtype=bool)
    for off in offsets:
        nc = coords + off
        ok = np.ones(n, dtype=bool)
        for d in range(len(grid)):
            if periodic[d]:
                nc[:, d] %= grid[d]
            else:
                ok &= (nc[:, d] >= 0) & (nc[:, d] < grid[d])
        dst = np.ravel_multi_index(tuple(nc[ok].T), tuple(grid))
        src = np.nonzero(ok)[0]
        keep = src != dst
        srcs.append(src[keep])
        dsts.append(dst[keep])
    return np.concatenate(srcs), np.concatenate(dsts)


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
