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


def median_cpu(fn, repeats: int = REPEATS):
    """(result of the last call, median CPU seconds) of ``repeats`` calls of ``fn``."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return out, statistics.median(times)


def write_results(name: str, text: str) -> None:
    """Print ``text`` and write it to ``benchmarks/<name>`` (a results document), above the
    file's earlier runs.

    ``text`` starts with the document's ``# title`` line; a line naming the date and commit
    follows it. The file's previous content is kept below, its title line turned into
    ``## The run before``, so every earlier run (and the notes written into it by hand) stays
    in the file, newest first. The file is replaced atomically.
    """
    print(text)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    title, _, body = text.partition("\n")
    out = f"{title}\n\n{_run_stamp()}\n{body.rstrip()}\n"
    if os.path.exists(path):
        with open(path) as fh:
            old = fh.read()
        first, _, rest = old.partition("\n")
        if first.startswith("# "):
            old = "## The run before\n" + rest
        out += "\n" + old
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(out)
    os.replace(tmp, path)


def _run_stamp() -> str:
    """``Run of <UTC date and time>, commit <hash>`` (marked when the tree has changes)."""
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))

    def git(*args):
        r = subprocess.run(["git", *args], cwd=here, capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    # results files written by earlier benchmarks of the same session do not count as changes
    dirty = " with uncommitted changes" if git("status", "--porcelain", "--untracked-files=no",
                                               "--", ":(top)", ":(top,exclude)benchmarks/RESULTS_*") \
        else ""
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return f"Run of {when}, commit {commit}{dirty}."
