"""Patterns of the two Mantevo mini-applications of seed 002, and grids that fill an allocation.

* ``minighost[:PXxPYxPZ][:bytes=2MiB]`` — MiniGhost-like: a 3-D 7-point stencil (one message to
  each of the 6 face neighbours, non-periodic) with large messages (default 2 MiB: a face of a
  ~180^3 block of doubles with several variables).
* ``minimd[:PXxPYxPZ][:bytes=64KiB][:allreduce=8KiB]`` — MiniMD-like: phase ``halo`` sends to
  the ranks 1 and 2 grid steps away along each axis (12 neighbours, periodic, as MiniMD's
  multi-swap ghost exchange does when the cutoff spans two sub-domains), then a
  recursive-doubling allreduce of ``allreduce`` bytes over all ranks, one phase per round
  (``allreduce.r0``, ``allreduce.r1``, ...: the general collective of
  :mod:`rankmap.patterns.collectives`, as ``allreduce:P:algo=recursive-doubling`` writes it).
* ``lulesh[:PXxPYxPZ][:s=30]`` — LULESH 2.0's time step on a non-periodic grid, s^3 elements
  per rank, n = s + 1 nodes per edge, doubles of 8 bytes, three phases: ``force`` (to all 26
  neighbours, 3 fields: face 3n^2, edge 3n, corner 3 doubles), ``posvel`` (to the 13
  neighbours with a lower rank, 6 fields: 6n^2, 6n, 6) and ``monoq`` (to the 6 face
  neighbours, 3s^2 doubles).

Without a grid the pattern fills the allocation: ranks = allocated nodes x cores / threads
(the ``default_ranks`` the command line passes), on a balanced grid from :func:`dims_create`.
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from ..units import MAX_SIZE
from ..validate import show
from .base import Pattern, Phase
from .collectives import collective_phases
from .stencil import make_stencil, stencil_flows

__all__ = ["dims_create", "fill_grid", "make_minighost", "allreduce_flows", "make_minimd",
           "lulesh_spec", "make_lulesh"]


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
    """A balanced ``ndim``-D grid of ``n`` ranks, largest dimension first (as MPI_Dims_create).

    Prime factors, largest first, each go to the currently smallest dimension.

    Parameters
    ----------
    n : int
        Number of ranks (at least 1).
    ndim : int
        Number of dimensions (at least 1).

    Returns
    -------
    tuple of int
        ``ndim`` extents whose product is ``n``, in non-increasing order.

    Raises
    ------
    RankmapError
        When ``n`` or ``ndim`` is below 1.
    """
    if n < 1 or ndim < 1:
        raise RankmapError(f"cannot build a {ndim}-D grid of {n} ranks")
    dims = [1] * ndim
    for p in sorted(_prime_factors(n), reverse=True):
        i = int(np.argmin(dims))
        dims[i] *= p
    return tuple(sorted(dims, reverse=True))


def fill_grid(spec_text: str, default_ranks: int | None, ndim: int) -> tuple[int, ...]:
    """The grid a pattern without an explicit grid uses: ``default_ranks`` ranks, balanced.

    Parameters
    ----------
    spec_text : str
        The pattern spec (named in the error).
    default_ranks : int or None
        Ranks that fill the allocation (nodes x cores / threads), None without an allocation.
    ndim : int
        Number of grid dimensions.

    Returns
    -------
    tuple of int
        The grid from :func:`dims_create`.

    Raises
    ------
    RankmapError
        When there is no allocation to fill (``default_ranks`` is None).
    """
    if default_ranks is None:
        raise RankmapError(f"pattern {spec_text!r} has no grid and no allocation to fill: "
                           "give a grid, e.g. 16x16x8")
    return dims_create(int(default_ranks), ndim)


def make_minighost(spec_text: str, grid: tuple[int, ...], nbytes: int) -> Pattern:
    """MiniGhost-like 3-D 7-point halo exchange with ``nbytes`` per face message.

    Parameters
    ----------
    spec_text : str
        The pattern spec, kept on the pattern.
    grid : tuple of int
        3-D process grid (non-periodic).
    nbytes : int
        Bytes of each face message.

    Returns
    -------
    Pattern
        Kind ``minighost``, one ``halo`` phase to the 6 face neighbours.

    Raises
    ------
    RankmapError
        When ``grid`` is not 3-D.
    """
    if len(grid) != 3:
        raise RankmapError(f"bad pattern {spec_text!r}: minighost takes a 3-D grid")
    offs = np.array([[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0], [0, 0, -1], [0, 0, 1]])
    src, dst = stencil_flows(grid, (False,) * 3, offs)
    return Pattern(spec=spec_text, kind="minighost", n_ranks=int(np.prod(grid)),
                   phases=[Phase("halo", src, dst, float(nbytes))], grid=tuple(grid),
                   periodic=(False,) * 3, params={"bytes": nbytes})


def allreduce_flows(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every flow of a recursive-doubling allreduce on ``n`` ranks, all rounds concatenated.

    See :mod:`rankmap.patterns.collectives` for the rounds.

    Parameters
    ----------
    n : int
        Number of ranks.

    Returns
    -------
    src, dst : numpy.ndarray of int64
        Sending and receiving rank of every flow (empty for a single rank).
    """
    phases = collective_phases("allreduce", np.arange(n, dtype=np.int64)[None, :], 1.0,
                               "recursive-doubling")
    if not phases:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return (np.concatenate([p.src for p in phases]), np.concatenate([p.dst for p in phases]))


def make_minimd(spec_text: str, grid: tuple[int, ...], nbytes: int, allreduce: int) -> Pattern:
    """MiniMD-like pattern: 12-neighbour periodic halo (steps 1 and 2 per axis) + allreduce.

    Parameters
    ----------
    spec_text : str
        The pattern spec, kept on the pattern.
    grid : tuple of int
        3-D process grid (periodic).
    nbytes : int
        Bytes of each halo message.
    allreduce : int
        Bytes reduced by the allreduce.

    Returns
    -------
    Pattern
        Kind ``minimd``: phase ``halo`` then one ``allreduce.rK`` phase per round.

    Raises
    ------
    RankmapError
        When ``grid`` is not 3-D.
    """
    if len(grid) != 3:
        raise RankmapError(f"bad pattern {spec_text!r}: minimd takes a 3-D grid")
    offs = []
    for d in range(3):
        for s in (-2, -1, 1, 2):
            o = [0, 0, 0]
            o[d] = s
            offs.append(o)
    src, dst = stencil_flows(grid, (True,) * 3, np.array(offs))
    n = int(np.prod(grid))
    phases = [Phase("halo", src, dst, float(nbytes))]
    phases += collective_phases("allreduce", np.arange(n, dtype=np.int64)[None, :],
                                float(allreduce), "recursive-doubling")
    return Pattern(spec=spec_text, kind="minimd", n_ranks=n, phases=phases, grid=tuple(grid),
                   periodic=(True,) * 3, params={"bytes": nbytes, "allreduce": allreduce})


def lulesh_spec(grid: tuple[int, ...], s: int) -> str:
    """The one-line composition that :func:`make_lulesh` builds, for ``grid`` and size ``s``.

    Parameters
    ----------
    grid : tuple of int
        3-D process grid.
    s : int
        Elements per rank along each edge (LULESH's ``-s``).

    Returns
    -------
    str
        A ``stencil:... + stencil:... + stencil:...`` spec with sizes in bytes.
    """
    g = "x".join(map(str, grid))
    n = s + 1
    return (f"stencil:{g}:box:face={24 * n * n}:edge={24 * n}:corner=24 + "
            f"stencil:{g}:box:face={48 * n * n}:edge={48 * n}:corner=48:to=lower + "
            f"stencil:{g}:bytes={24 * s * s}")


def make_lulesh(spec_text: str, grid: tuple[int, ...], s: int = 30) -> Pattern:
    """LULESH 2.0's three communication phases per time step (see module docstring).

    Parameters
    ----------
    spec_text : str
        The spec, kept on the pattern.
    grid : tuple of int
        3-D process grid (LULESH runs on a cube of ranks; any box is accepted).
    s : int
        Elements per rank along each edge (LULESH's ``-s``).

    Returns
    -------
    Pattern
        Kind ``lulesh``, phases ``force``, ``posvel``, ``monoq``.

    Raises
    ------
    RankmapError
        When ``grid`` is not 3-D, or ``s`` makes a message larger than
        :data:`rankmap.units.MAX_SIZE` (1 PiB; reckoned exactly, in integers).
    """
    from .compose import compose

    if len(grid) != 3:
        raise RankmapError(f"bad pattern {spec_text!r}: lulesh takes a 3-D grid")
    n, dbl = s + 1, 8
    if int(np.prod(grid)) > 1:      # then every phase has face messages, the largest
        for phase, fields in (("force", 3), ("posvel", 6)):
            if fields * n * n * dbl > MAX_SIZE:
                raise RankmapError(
                    f"bad s={s} in {show(spec_text)}: a face message of phase {phase!r} would "
                    f"carry {fields * n * n * dbl:,} bytes ({fields} fields of (s+1)^2 doubles), "
                    f"more than {MAX_SIZE:,} (1 PiB)")
    force = make_stencil(spec_text, grid, box=True, name="force",
                         class_bytes={1: 3 * n * n * dbl, 2: 3 * n * dbl, 3: 3 * dbl})
    posvel = make_stencil(spec_text, grid, box=True, name="posvel", to="lower",
                          class_bytes={1: 6 * n * n * dbl, 2: 6 * n * dbl, 3: 6 * dbl})
    monoq = make_stencil(spec_text, grid, name="monoq", nbytes=3 * s * s * dbl)
    out = compose(spec_text, [force, posvel, monoq], kind="lulesh")
    out.params = {"s": s}
    return out
