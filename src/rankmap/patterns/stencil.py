"""Neighbour stencils on a Cartesian process grid (halo exchange), in every shape the spec
language can write.

``stencil:128x128`` is a star stencil (2d neighbours: ±1 along each dimension); ``:box`` adds
the diagonals (3^d - 1 neighbours). ``:radius=R`` reaches R steps: star, ±1..±R along each
axis (2dR neighbours); box, the whole (2R+1)^d cube but the rank itself. ``:offsets=`` gives
any explicit list of offsets. ``:periodic`` wraps every dimension; otherwise ranks on the
boundary have fewer neighbours. A neighbour that is the rank itself (a periodic dimension of
size 1) is dropped; on a periodic dimension of size 2 both sides are the same rank and both
messages are kept, as MPI_Cart_shift would give them.

Message sizes: an offset that differs from 0 in K coordinates is of *class* K (1 = face,
2 = edge, 3 = corner, as in a 3-D box). Each offset's size is, first found: its own size
(``offsets=+1,0,0@64KiB``), its class's size (``face=``, ``edge=``, ``corner=``, ``classK=``),
``bytes=`` (default 1 MiB). An offset of size 0 is left out. ``to=lower`` / ``to=higher`` keep
only the messages to neighbours whose rank is lower / higher than the sender's.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import RankmapError
from ..kernels.jit import kernel
from .base import Pattern, Phase

__all__ = ["stencil_offsets", "offset_classes", "stencil_flows", "stencil_flows_indexed",
           "stencil_flows_sized", "make_stencil", "diagonal_offsets", "make_diagonal",
           "check_stencil_offsets", "check_radius", "CLASS_NAMES", "DIRECTIONS",
           "MAX_STENCIL_DIMS"]

#: neighbour-class names accepted as options, by class (coordinates that differ)
CLASS_NAMES = {1: "face", 2: "edge", 3: "corner"}
#: values of ``to=``
DIRECTIONS = ("both", "lower", "higher")


def stencil_offsets(ndim: int, box: bool, radius: int = 1) -> np.ndarray:
    """Neighbour offsets, shape (offsets, ndim).

    Parameters
    ----------
    ndim : int
        Grid dimensions.
    box : bool
        False: star (±1..±radius along each axis, axis by axis, negative steps first);
        True: every point of the (2*radius+1)^ndim cube but the origin, in lexicographic order.
    radius : int
        Steps along each axis (default 1).

    Returns
    -------
    numpy.ndarray
        int64 offsets.
    """
    steps = list(range(-radius, 0)) + list(range(1, radius + 1))
    if box:
        offs = [o for o in itertools.product(range(-radius, radius + 1), repeat=ndim) if any(o)]
    else:
        offs = []
        for d in range(ndim):
            for s in steps:
                o = [0] * ndim
                o[d] = s
                offs.append(tuple(o))
    return np.array(offs, dtype=np.int64).reshape(-1, ndim)


def offset_classes(offsets: np.ndarray) -> np.ndarray:
    """Class of every offset: the number of coordinates in which it is non-zero.

    Parameters
    ----------
    offsets : numpy.ndarray
        int offsets, one row per neighbour.

    Returns
    -------
    numpy.ndarray
        int64 class of every offset: 1 face, 2 edge, 3 corner, ...
    """
    return np.count_nonzero(np.asarray(offsets), axis=1).astype(np.int64)


def diagonal_offsets(grid: tuple[int, ...]) -> np.ndarray:
    """Offsets k*v of every diagonal direction v in {-1, 1}^d, k = 1..min(grid)-1.

    A rank's diagonals are the lines through it along the 2^(d-1) directions whose every
    coordinate is ±1; these offsets reach every other rank on them.

    Parameters
    ----------
    grid : tuple of int
        The process grid (d dimensions).

    Returns
    -------
    numpy.ndarray
        int64 offsets, one row each, shape (2^d (min(grid) - 1), d).
    """
    nd = len(grid)
    reach = min(grid) - 1
    dirs = np.array(list(itertools.product((-1, 1), repeat=nd)), dtype=np.int64)
    ks = np.arange(1, reach + 1, dtype=np.int64)
    return (ks[:, None, None] * dirs[None, :, :]).reshape(-1, nd)


@kernel
def _stencil_kernel(grid, periodic, offsets, per_offset, src, dst, out):
    """Fill src/dst with every (rank, neighbour) pair and out with its offset's entry of
    ``per_offset`` (the offset's row, or its size); returns flows written."""
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
                out[k] = per_offset[o]
                k += 1
    return k


def stencil_flows_indexed(grid, periodic, offsets) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flows of every rank of ``grid`` to every offset neighbour, rank-major.

    Parameters
    ----------
    grid : sequence of int
        Process grid (ranks numbered last dimension fastest).
    periodic : sequence of bool
        Wrap of every dimension.
    offsets : array_like, shape (offsets, ndim)
        Neighbour offsets.

    Returns
    -------
    src, dst, offset : numpy.ndarray
        Sender rank, receiver rank and the row of ``offsets`` of every flow (int64).
    """
    grid = np.asarray(grid, dtype=np.int64)
    offsets = np.ascontiguousarray(np.asarray(offsets, dtype=np.int64).reshape(-1, len(grid)))
    return _flows_with(grid, periodic, offsets, np.arange(len(offsets), dtype=np.int64))


def stencil_flows_sized(grid, periodic, offsets, sizes
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flows of every rank of ``grid`` to every offset neighbour, rank-major, with their sizes.

    The flows of :func:`stencil_flows_indexed`, each with its offset's size written as it is
    found (no offset-row array, no second pass: 27 MB and a gather fewer at 3.4 M flows).

    Parameters
    ----------
    grid, periodic, offsets
        As :func:`stencil_flows_indexed`.
    sizes : array_like of float, shape (offsets,)
        Bytes sent to each offset's neighbour.

    Returns
    -------
    src, dst : numpy.ndarray of int64
        Sender and receiver rank of every flow.
    nbytes : numpy.ndarray of float64
        Size of every flow, bytes.
    """
    grid = np.asarray(grid, dtype=np.int64)
    offsets = np.ascontiguousarray(np.asarray(offsets, dtype=np.int64).reshape(-1, len(grid)))
    return _flows_with(grid, periodic, offsets,
                       np.ascontiguousarray(sizes, dtype=np.float64).reshape(len(offsets)))


def _flows_with(grid, periodic, offsets, per_offset):
    """The kernel's flows, with ``per_offset[offset]`` for each (its dtype)."""
    per = np.asarray(periodic, dtype=np.bool_)
    # exact on a mesh, an upper bound with wrapped dimensions: no over-allocation for long
    # offsets (diagonals, radius) that most ranks cannot use
    reach = np.where(per[None, :], grid[None, :],
                     np.maximum(grid[None, :] - np.abs(offsets), 0))
    cap = int(np.prod(reach, axis=1).sum()) if len(offsets) else 0
    src = np.empty(cap, dtype=np.int64)
    dst = np.empty(cap, dtype=np.int64)
    out = np.empty(cap, dtype=per_offset.dtype)
    k = _stencil_kernel(grid, per, offsets, per_offset, src, dst, out)
    return src[:k], dst[:k], out[:k]


def stencil_flows(grid, periodic, offsets) -> tuple[np.ndarray, np.ndarray]:
    """Flows of every rank of ``grid`` to every offset neighbour, rank-major.

    Parameters
    ----------
    grid : sequence of int
        Process grid (ranks numbered last dimension fastest).
    periodic : sequence of bool
        Wrap of every dimension.
    offsets : array_like, shape (offsets, ndim)
        Neighbour offsets.

    Returns
    -------
    src, dst : numpy.ndarray
        int64 sender and receiver rank of every flow (sizes are the caller's).
    """
    src, dst, _ = stencil_flows_indexed(grid, periodic, offsets)
    return src, dst


def _grid_text(grid) -> str:
    return "x".join(str(int(g)) for g in grid)


def _offset_text(o) -> str:
    return ",".join(f"{int(v):+d}" if v else "0" for v in o)


def check_radius(spec_text: str, grid: tuple[int, ...], radius: int) -> None:
    """Refuse a radius below 1 or one that reaches past the grid along some dimension.

    Parameters
    ----------
    spec_text : str
        The pattern spec, for the message.
    grid : tuple of int
        The process grid.
    radius : int
        Neighbours up to this many steps along each axis.

    Raises
    ------
    RankmapError
        A radius below 1 or reaching past the grid.
    """
    if radius < 1:
        raise RankmapError(f"bad radius={radius} in {spec_text!r}: must be at least 1")
    small = [g for g in grid if radius >= g and g > 1]
    if small:
        raise RankmapError(f"bad radius={radius} in {spec_text!r}: larger than the grid "
                           f"{_grid_text(grid)} (a dimension of {small[0]} ranks reaches "
                           f"at most {small[0] - 1} steps)")


def check_stencil_offsets(spec_text: str, grid: tuple[int, ...], offsets: np.ndarray) -> None:
    """Refuse offsets of the wrong length, the zero offset, repeats and steps past the grid.

    Parameters
    ----------
    spec_text : str
        The pattern spec, for the message.
    grid : tuple of int
        The process grid.
    offsets : numpy.ndarray
        int offsets, one row per neighbour.

    Raises
    ------
    RankmapError
        An offset of the wrong length, the zero offset, a repeat, or a step past the grid.
    """
    offsets = np.asarray(offsets)
    if offsets.ndim != 2 or offsets.shape[1] != len(grid):
        raise RankmapError(f"bad offsets in {spec_text!r}: each offset needs {len(grid)} "
                           f"coordinates for the grid {_grid_text(grid)}")
    if len(offsets) == 0:
        raise RankmapError(f"bad offsets in {spec_text!r}: no offsets")
    zero = ~offsets.any(axis=1)
    if zero.any():
        raise RankmapError(f"bad offset {_offset_text(offsets[zero][0])} in {spec_text!r}: "
                           "a rank does not send to itself")
    uniq, counts = np.unique(offsets, axis=0, return_counts=True)
    if (counts > 1).any():
        raise RankmapError(f"bad offsets in {spec_text!r}: {_offset_text(uniq[counts > 1][0])} "
                           "given twice")
    # offsets <= -extent too (np.abs of the most negative int64 is negative)
    g = np.asarray(grid)[None, :]
    far = ((offsets >= g) | (offsets <= -g)) & (g > 1)
    far |= (offsets != 0) & (np.asarray(grid)[None, :] == 1)
    if far.any():
        row = int(np.nonzero(far.any(axis=1))[0][0])
        raise RankmapError(f"bad offset {_offset_text(offsets[row])} in {spec_text!r}: "
                           f"larger than the grid {_grid_text(grid)}")


#: most dimensions of a stencil's grid
MAX_STENCIL_DIMS = 6


def make_stencil(spec_text: str, grid: tuple[int, ...], box: bool = False,
                 periodic: bool | tuple[bool, ...] = False, nbytes: int = 1 << 20,
                 name: str = "halo", *, radius: int = 1, offsets=None,
                 offset_bytes=None, class_bytes: dict[int, int] | None = None,
                 to: str = "both") -> Pattern:
    """A one-phase neighbour-exchange pattern on ``grid`` (see module docstring).

    Parameters
    ----------
    spec_text : str
        The spec, kept on the pattern and named in errors.
    grid : tuple of int
        Process grid, 1 to 6 dimensions.
    box, radius : bool, int
        Star or box stencil of that radius (ignored when ``offsets`` is given).
    periodic : bool or tuple of bool
        Wrap of every dimension.
    nbytes : int
        Bytes of a message whose offset and class have no size of their own.
    name : str
        Phase name.
    offsets : array_like, optional
        Explicit offsets, shape (offsets, ndim).
    offset_bytes : sequence of (int or None), optional
        Per-offset sizes in bytes (None: use the class's or ``nbytes``).
    class_bytes : dict, optional
        Bytes by class K (coordinates that differ); 0 leaves the class out.
    to : {"both", "lower", "higher"}
        Keep every message, or only those to a lower / higher rank.

    Returns
    -------
    Pattern
        Kind ``stencil``, one phase; every flow carries its offset's size in bytes.
    """
    if not 1 <= len(grid) <= MAX_STENCIL_DIMS:
        raise RankmapError(f"bad stencil grid {_grid_text(grid)}: 1 to {MAX_STENCIL_DIMS} "
                           "dimensions")
    if to not in DIRECTIONS:
        raise RankmapError(f"bad to={to} in {spec_text!r}: choose lower, higher or both")
    per = (periodic,) * len(grid) if isinstance(periodic, bool) else tuple(periodic)
    explicit = offsets is not None
    if explicit:
        offs = np.asarray(offsets, dtype=np.int64)
        check_stencil_offsets(spec_text, grid, offs)
    else:
        if radius != 1:
            check_radius(spec_text, grid, radius)
        offs = stencil_offsets(len(grid), box, radius)
    classes = offset_classes(offs)
    sizes = np.full(len(offs), float(nbytes))
    for k, b in (class_bytes or {}).items():
        sizes[classes == k] = float(b)
    if offset_bytes is not None:
        for i, b in enumerate(offset_bytes):
            if b is not None:
                sizes[i] = float(b)
    keep = sizes > 0
    if not keep.any():
        raise RankmapError(f"bad pattern {spec_text!r}: every neighbour has 0 bytes: "
                           "at least one size must be positive")
    offs, sizes = offs[keep], sizes[keep]
    src, dst, flow_bytes = stencil_flows_sized(grid, per, offs, sizes)
    if to != "both":
        sel = dst < src if to == "lower" else dst > src
        src, dst, flow_bytes = src[sel], dst[sel], flow_bytes[sel]
    uniform = len(np.unique(sizes)) == 1
    params = {"box": box if not explicit else None,
              "bytes": int(sizes[0]) if uniform and not explicit and radius == 1
              and to == "both" and keep.all() else None,
              "radius": radius, "to": to, "offsets": offs, "offset_bytes": sizes}
    return Pattern(spec=spec_text, kind="stencil", n_ranks=int(np.prod(grid)),
                   phases=[Phase(name, src, dst, flow_bytes)], grid=tuple(grid),
                   periodic=per, params=params)


def make_diagonal(spec_text: str, grid: tuple[int, ...], nbytes: int = 1 << 20) -> Pattern:
    """Ray-tracing exchange (seed 001): every rank sends ``nbytes`` to every other rank on its
    diagonals (the lines through it along directions in {-1, 1}^d), non-periodic.

    Parameters
    ----------
    spec_text : str
        The spec, kept on the pattern.
    grid : tuple of int
        Process grid, 2 to 6 dimensions.
    nbytes : int
        Bytes of every message.

    Returns
    -------
    Pattern
        Kind ``diagonal``, one phase ``diagonal``.
    """
    if not 2 <= len(grid) <= 6:
        raise RankmapError(f"bad diagonal grid {_grid_text(grid)}: 2 to 6 dimensions")
    if min(grid) < 2:
        raise RankmapError(f"bad diagonal grid {_grid_text(grid)}: every dimension needs "
                           "at least 2 ranks for a rank to have a diagonal")
    offs = diagonal_offsets(grid)
    src, dst, _ = stencil_flows_indexed(grid, (False,) * len(grid), offs)
    return Pattern(spec=spec_text, kind="diagonal", n_ranks=int(np.prod(grid)),
                   phases=[Phase("diagonal", src, dst, float(nbytes))], grid=tuple(grid),
                   periodic=(False,) * len(grid), params={"bytes": nbytes, "offsets": offs})
