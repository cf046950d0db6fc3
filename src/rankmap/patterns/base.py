"""Communication patterns: ranks, an optional Cartesian process grid, phases of flows.

A phase is a set of flows that happen at the same time: parallel arrays ``src`` and ``dst``
(rank numbers) and ``bytes`` (message size of each flow, bytes). Ranks of a Cartesian grid
are numbered as MPI_Cart_create does: row-major, last dimension fastest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..errors import RankmapError
from ..units import MAX_SIZE, exact_bytes
from ..validate import as_int, id_array, read_only_view

__all__ = ["Phase", "Pattern", "ALL_PHASES", "byte_count_text"]

#: the name of the whole pattern's row (every phase together) in tables and counter files; no
#: phase may have it
ALL_PHASES = "all"


#: floats from here on are not every integer: a byte count computed in floats may be rounded
_FLOAT_EXACT = 1 << 53


def byte_count_text(value: int | float | Fraction) -> str:
    """A byte count for a message, every digit when they are known to be exact.

    Parameters
    ----------
    value : int, float or fractions.Fraction
        Bytes: an exact count (``int``, ``Fraction``), or a float, exact below 2^53 only
        (a float past it may be the rounding of the count it stands for).

    Returns
    -------
    str
        ``240,000,004,800,000,024`` for an exact whole count; ``about ...`` for an exact
        count with a fraction of a byte (rounded to a whole byte) or a float from 2^53 on.
    """
    if isinstance(value, (int, Fraction)):
        return f"{int(value):,}" if value == int(value) else f"about {round(value):,}"
    value = float(value)
    return exact_bytes(value) if abs(value) < _FLOAT_EXACT else f"about {exact_bytes(value)}"


@dataclass
class Phase:
    """Flows that happen together: ``src[f]`` sends ``bytes[f]`` bytes to ``dst[f]``."""

    name: str
    src: np.ndarray
    dst: np.ndarray
    bytes: np.ndarray

    def __post_init__(self):
        # checked in place and kept as read-only views: a generated phase of 27 M flows is
        # not copied again (the pattern's rank range check follows)
        self.src = read_only_view(id_array(self.src, f"phase {self.name!r}: source ranks",
                                           copy=False))
        self.dst = read_only_view(id_array(self.dst, f"phase {self.name!r}: destination ranks",
                                           copy=False))
        if np.iscomplexobj(self.bytes):     # its imaginary part would be dropped silently
            raise RankmapError(f"phase {self.name!r}: message sizes are complex numbers")
        try:
            self.bytes = np.ascontiguousarray(np.broadcast_to(self.bytes, self.src.shape),
                                              dtype=np.float64)
        except (TypeError, ValueError):
            raise RankmapError(f"phase {self.name!r}: src, dst and bytes differ in length, "
                               "or bytes are not numbers") from None
        if not (self.src.shape == self.dst.shape == self.bytes.shape):
            raise RankmapError(f"phase {self.name!r}: src, dst and bytes differ in length")
        if self.bytes.size and not (np.isfinite(self.bytes).all() and self.bytes.min() >= 0):
            bad = self.bytes[~(np.isfinite(self.bytes) & (self.bytes >= 0))][0]
            raise RankmapError(f"phase {self.name!r}: message size {bad} is not a finite "
                               "non-negative number of bytes")
        if self.bytes.size and float(self.bytes.max()) > MAX_SIZE:
            # the limit every spec meets (1 PiB): 1e308 bytes made hop-bytes infinite
            raise RankmapError(f"phase {self.name!r}: a message of "
                               f"{byte_count_text(self.bytes.max())} bytes, more than "
                               f"{MAX_SIZE:,} (1 PiB)")

    @property
    def n_flows(self) -> int:
        """Number of flows."""
        return len(self.src)

    @property
    def total_bytes(self) -> float:
        """Bytes moved by the whole phase."""
        return float(self.bytes.sum())


@dataclass
class Pattern:
    """A program's communication: ``n_ranks`` ranks, ``phases``, optional ``grid``.

    ``kind`` names the generator (``stencil``, ``fft2d``, ``pairs``, ``graph``, ``phases``, ...);
    ``params`` keeps its parameters for mappers that exploit structure (e.g. FFT groups).
    """

    spec: str
    kind: str
    n_ranks: int
    phases: list[Phase]
    grid: tuple[int, ...] | None = None
    periodic: tuple[bool, ...] | None = None
    params: dict = field(default_factory=dict)
    #: one-line remarks for the user (e.g. a grid detected in a graph), printed by the CLI
    notes: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.n_ranks = as_int(self.n_ranks, f"rank count of pattern {self.spec!r}")
        if self.n_ranks <= 0:
            raise RankmapError(f"pattern {self.spec!r} has no ranks")
        if not self.phases:
            raise RankmapError(f"pattern {self.spec!r} has no phases")
        if self.grid is not None:
            # whole extents from 1, as many periodic flags (a grid of (-2, -4) or (2.0, 4.0)
            # failed deep inside the grid mappers, or went through some of them)
            grid = self.grid if isinstance(self.grid, (tuple, list, np.ndarray)) else None
            if grid is None or not all(isinstance(g, (int, np.integer)) and
                                       not isinstance(g, bool) and g >= 1 for g in grid):
                raise RankmapError(f"pattern {self.spec!r}: bad grid {self.grid!r}: whole "
                                   "extents from 1 expected")
            self.grid = tuple(int(g) for g in grid)
            if math.prod(self.grid) != self.n_ranks:
                raise RankmapError(f"pattern {self.spec!r}: grid {self.grid} has "
                                   f"{math.prod(self.grid)} ranks, the pattern {self.n_ranks}")
        if self.periodic is not None:
            flags = self.periodic if isinstance(self.periodic, (tuple, list, np.ndarray)) \
                else None
            if self.grid is None or flags is None or len(flags) != len(self.grid) or \
                    not all(isinstance(f, (bool, np.bool_)) for f in flags):
                raise RankmapError(f"pattern {self.spec!r}: bad periodic flags "
                                   f"{self.periodic!r}: one True or False a grid dimension")
        for ph in self.phases:
            if ph.n_flows and (ph.src.min() < 0 or ph.dst.min() < 0
                               or ph.src.max() >= self.n_ranks or ph.dst.max() >= self.n_ranks):
                raise RankmapError(f"phase {ph.name!r} of {self.spec!r} names a rank outside "
                                   f"0-{self.n_ranks - 1}")
        names = [ph.name for ph in self.phases]
        if len(set(names)) != len(names):
            raise RankmapError(f"pattern {self.spec!r} has two phases with the same name")
        if ALL_PHASES in names:
            raise RankmapError(f"pattern {self.spec!r}: a phase may not be called "
                               f"{ALL_PHASES!r}, the name of the whole pattern's row (rename it)")

    def grid_coords(self, ranks=None) -> np.ndarray:
        """Grid coordinates (row-major, last dimension fastest) of ranks; needs a grid.

        Parameters
        ----------
        ranks : numpy.ndarray, optional
            Ranks (default: all).

        Returns
        -------
        numpy.ndarray
            int64 grid coordinates, one row per rank (row-major numbering, last dimension fastest).

        Raises
        ------
        RankmapError
            The pattern has no grid.
        """
        if self.grid is None:
            raise RankmapError(f"pattern {self.spec!r} has no Cartesian grid")
        ranks = np.arange(self.n_ranks) if ranks is None else np.asarray(ranks)
        return np.stack(np.unravel_index(ranks, self.grid), axis=-1).astype(np.int64)

    def describe(self) -> dict:
        """JSON-ready summary.

        Returns
        -------
        dict
            Spec, kind, ranks, per-phase flow counts and bytes, and the grid when there is
            one (JSON values).
        """
        # bytes summed exactly, rounded once: a ring allreduce's 7 flows of 96/7 bytes make
        # 96, not 95.99999999999999
        d = {"spec": self.spec, "kind": self.kind, "ranks": int(self.n_ranks),
             "phases": [{"name": p.name, "flows": int(p.n_flows),
                         "bytes": math.fsum(p.bytes.tolist())} for p in self.phases]}
        if self.grid is not None:
            d["grid"] = [int(g) for g in self.grid]
        if self.periodic is not None:
            d["periodic"] = [bool(p) for p in self.periodic]
        return d
