"""Two-dimensionally decomposed 3-D FFT: row and column all-to-alls (seeds 000, 004).

``fft2d:P0xP1`` has P0*P1 ranks on a P0 x P1 grid (rank = i*P1 + j) and two phases:

* ``dim0``: an all-to-all inside every group of P0 ranks that share the index j of
  dimension 1 (the ranks i*P1 + j, i = 0..P0-1);
* ``dim1``: an all-to-all inside every group of P1 ranks that share the index i of
  dimension 0 (consecutive ranks).

Every rank sends ``bytes`` (default 1 MiB) to every other member of its group.
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from .base import Pattern, Phase

__all__ = ["alltoall_groups", "alltoall_flows", "make_fft2d", "make_fft3d"]


def alltoall_groups(grid: tuple[int, int], dim: int) -> np.ndarray:
    """Member ranks of every all-to-all group of phase ``dim``: shape (groups, group size).

    Parameters
    ----------
    grid : tuple of int
        The P0 x P1 process grid.
    dim : int
        0: the groups of phase ``dim0`` (ranks sharing their dimension-1 coordinate, i.e. the
        columns), 1: those of ``dim1``.

    Returns
    -------
    numpy.ndarray
        int64 member ranks, shape (groups, group size).
    """
    p0, p1 = grid
    ranks = np.arange(p0 * p1).reshape(p0, p1)
    return ranks.T.copy() if dim == 0 else ranks.copy()


def alltoall_flows(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (a, b), a != b, inside every group (rows of ``groups``).

    Parameters
    ----------
    groups : numpy.ndarray
        int64 member ranks, one group per row.

    Returns
    -------
    tuple of numpy.ndarray
        int64 (src, dst) of every ordered pair inside every group.
    """
    g = groups.shape[1]
    a, b = np.nonzero(~np.eye(g, dtype=bool))
    src = groups[:, a].reshape(-1)
    dst = groups[:, b].reshape(-1)
    return src, dst


def make_fft2d(spec_text: str, grid: tuple[int, ...], nbytes: int = 1 << 20) -> Pattern:
    """The two all-to-all phases of a P0 x P1 decomposed FFT (see module docstring).

    Parameters
    ----------
    spec_text : str
        The spec, kept as the pattern's name.
    grid : tuple of int
        The P0 x P1 grid.
    nbytes : int
        Bytes of every message.

    Returns
    -------
    Pattern
        Phases ``dim0`` and ``dim1``.
    """
    if len(grid) != 2:
        raise RankmapError(f"bad fft2d grid {'x'.join(map(str, grid))}: expected P0xP1")
    phases = []
    for dim in (0, 1):
        src, dst = alltoall_flows(alltoall_groups(grid, dim))
        phases.append(Phase(f"dim{dim}", src, dst, float(nbytes)))
    return Pattern(spec=spec_text, kind="fft2d", n_ranks=grid[0] * grid[1], phases=phases,
                   grid=tuple(grid), periodic=(False, False), params={"bytes": nbytes})


def make_fft3d(spec_text: str, grid: tuple[int, ...], nbytes: int = 1 << 20) -> Pattern:
    """A pencil-decomposed 3-D FFT on a P x Q grid: the forward transform's two transposes.

    Phase ``dim1``: an all-to-all inside every row (the Q consecutive ranks i*Q .. i*Q+Q-1);
    then phase ``dim0``: an all-to-all inside every column (the P ranks i*Q + j, i = 0..P-1).
    Every rank sends ``nbytes`` to every other member of its group. The same flows as
    ``alltoall:PxQ:dims=1 + alltoall:PxQ:dims=0``.

    Parameters
    ----------
    spec_text : str
        The spec, kept on the pattern.
    grid : tuple of int
        (P, Q).
    nbytes : int
        Bytes per message.

    Returns
    -------
    Pattern
        Kind ``fft3d``, phases ``dim1`` and ``dim0``.
    """
    if len(grid) != 2:
        raise RankmapError(f"bad fft3d grid {'x'.join(map(str, grid))}: expected PxQ")
    phases = []
    for dim in (1, 0):
        src, dst = alltoall_flows(alltoall_groups(grid, dim))
        phases.append(Phase(f"dim{dim}", src, dst, float(nbytes)))
    return Pattern(spec=spec_text, kind="fft3d", n_ranks=grid[0] * grid[1], phases=phases,
                   grid=tuple(grid), periodic=(False, False), params={"bytes": nbytes})
