"""Shared timing helper for the bench_*.py scripts."""

from __future__ import annotations

import os
import statistics
import time

#: runs per measurement (override with RANKMAP_BENCH_REPEATS)
REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "5"))


def median_time(fn, repeats: int = REPEATS, warmup: bool = False) -> float:
    """Median wall time (seconds) of ``repeats`` calls of ``fn``; one untimed call first
    when ``warmup`` (numba compilation, lazily built tables)."""
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
