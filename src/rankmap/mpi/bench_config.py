"""What ``rankmap bench`` runs, as a value, with no heavy import (``bench --help`` lists the
kinds without loading numpy); the benchmarks themselves are :mod:`rankmap.mpi.bench`."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KINDS", "BenchConfig"]

#: the benchmarks, in the order the help lists them
KINDS = ("pairs", "cart", "halo", "fft")


@dataclass
class BenchConfig:
    """What to run: kind, grid, sizes (bytes), repeats, iterations and the placement."""

    kind: str
    dims: tuple[int, ...] | None
    sizes: list[int]
    repeats: int = 5
    iters: int | None = None
    box: bool = False
    periodic: bool = False
    pairings: int = 4
    mapping: str = "auto"
    machine: object = None
    seed: int = 0
