"""Patterns of the two Mantevo mini-applications of seed 002, and grids that fill an allocation.

* ``minighost[:PXxPYxPZ][:bytes=2MiB]`` — MiniGhost-like: a 3-D 7-point stencil (one message to
  each of the 6 face neighbours, non-periodic) with large messages (default 2 MiB: a face of a
  ~180^3 block of doubles with several variables).
* ``minimd[:PXxPYxPZ][:bytes=64KiB][:allreduce=8KiB]`` — MiniMD-like: phase ``halo`` sends to
  the ranks 1 and 2 grid steps away along each axis (12 neighbours, periodic, as MiniMD's
  multi-swap ghost exchange does when the cutoff spans two sub-domains), phase ``allreduce``
  is a recursive-doubling allreduce (rank r exchanges with r XOR 2^k for every k with the
  partner inside the job; each exchange carries ``allreduce`` bytes).

Without a grid the pattern fills the allocation: ranks = allocated nodes x cores / threads
(the ``default_ranks`` the command line passes), on a balanced grid from :func:`dims_create`.
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from .base import Pattern, Phase
from .stencil import stencil_flows


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def dims_create(n: int, ndim: int) -> tuple[int, ...]:
    """A balanced ``ndim``-D grid of ``n`` ranks, largest dimension first (as MPI_Dims_create):
    prime factors, largest first, each go to the currently smallest dimension."""
    if n < 1 or ndim < 1:
        raise RankmapError(f"cannot build a {ndim}-D grid of {n} ranks")
    dims = [1] * ndim
    for p in sorted(_prime_factors(n), reverse=True):
        i = int(np.argmin(dims))
        dims[i] *= p
    return tuple(sorted(dims, reverse=True))


def fill_grid(spec_text: str, default_ranks: int | None, ndim: int) -> tuple[int, ...]:
    """The grid a pattern without an explicit grid uses: ``default_ranks`` ranks, balanced."""
    if default_ranks is None:
        raise RankmapError(f"pattern {spec_text!r} has no grid and no allocation to fill: "
                           "give a grid, e.g. 16x16x8")
    return dims_create(int(default_ranks), ndim)


def make_minighost(spec_text: str, grid: tuple[int, ...], nbytes: int) -> Pattern:
    """MiniGhost-like 3-D 7-point halo exchange with ``nbytes`` per face message."""
    if len(grid) != 3:
        raise RankmapError(f"bad pattern {spec_text!r}: minighost takes a 3-D grid")
    offs = np.array([[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0], [0, 0, -1], [0, 0, 1]])
    src, dst = stencil_flows(grid, (False,) * 3, offs, nbytes)
    return Pattern(spec=spec_text, kind="minighost", n_ranks=int(np.prod(grid)),
                   phases=[Phase("halo", src, dst, float(nbytes))], grid=tuple(grid),
                   periodic=(False,) * 3, params={"bytes": nbytes})


def allreduce_flows(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Flows of a recursive-doubling allreduce on ``n`` ranks: r -> r XOR 2^k (partner < n)."""
    r = np.arange(n, dtype=np.int64)
    srcs, dsts = [], []
    k = 1
    while k < n:
        partner = r ^ k
        ok = partner < n
        srcs.append(r[ok])
        dsts.append(partner[ok])
        k <<= 1
    if not srcs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(srcs), np.concatenate(dsts)


def make_minimd(spec_text: str, grid: tuple[int, ...], nbytes: int, allreduce: int) -> Pattern:
    """MiniMD-like pattern: 12-neighbour periodic halo (steps 1 and 2 per axis) + allreduce."""
    if len(grid) != 3:
        raise RankmapError(f"bad pattern {spec_text!r}: minimd takes a 3-D grid")
    offs = []
    for d in range(3):
        for s in (-2, -1, 1, 2):
            o = [0, 0, 0]
            o[d] = s
            offs.append(o)
    src, dst = stencil_flows(grid, (True,) * 3, np.array(offs), nbytes)
    n = int(np.prod(grid))
    asrc, adst = allreduce_flows(n)
    phases = [Phase("halo", src, dst, float(nbytes))]
    if len(asrc):
        phases.append(Phase("allreduce", asrc, adst, float(allreduce)))
    return Pattern(spec=spec_text, kind="minimd", n_ranks=n, phases=phases, grid=tuple(grid),
                   periodic=(True,) * 3, params={"bytes": nbytes, "allreduce": allreduce})
