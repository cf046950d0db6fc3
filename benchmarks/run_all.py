"""Run every benchmark in this folder (``make bench``): each bench_*.py script's main().

``make bench ONLY=core`` (or ``python benchmarks/run_all.py core``) runs just the named ones.
Results are printed and written to benchmarks/RESULTS_*.md by each script.
"""

from __future__ import annotations

from rankmap.threads import limit_blas_threads

limit_blas_threads()  # as the command line does, before numpy loads (rankmap.threads)

import glob
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv: list[str]) -> int:
    wanted = set(argv)
    scripts = sorted(glob.glob(os.path.join(HERE, "bench_*.py")))
    failed = []
    for path in scripts:
        name = os.path.basename(path)[len("bench_"):-3]
        if wanted and name not in wanted:
            continue
        print(f"=== benchmark: {name}", flush=True)
        module = runpy.run_path(path, run_name="rankmap_bench")
        code = module["main"]()
        if code:
            failed.append(name)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
