"""Shared timing helper for the bench_*.py scripts."""

from __future__ import annotations

import os
import statistics
import time

#: runs per measurement (override with RANKMAP_BENCH_REPEATS)
REPEATS = int(os.environ.get("RANKMAP_BENCH_REPEATS", "5"))


def median_time(fn, repeats: int = REPEATS, warmup: bool = False,
                clock=time.perf_counter) -> float:
    """Median time (seconds of ``clock``: wall by default, ``time.process_time`` for CPU) of
    ``repeats`` calls of ``fn``; one untimed call first when ``warmup`` (numba compilation,
    lazily built tables)."""
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times)


def write_results(name: str, text: str) -> None:
    """Print ``text`` and write it to ``benchmarks/<name>`` (a results document)."""
    print(text)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), name), "w") as fh:
        fh.write(text)
