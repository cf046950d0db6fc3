"""Long profile of the fuzz suite (``make fuzz``): N generated and mutated inputs in worker
processes limited to a set address space, each checked against the contract.

    python -m tests.fuzz.run --count 100000 --workers 2 --seed 1

Prints a summary (inputs, exit 0, exit 2, failures) and writes every failure (command line,
what broke, stderr) to ``--failures`` (default fuzz-failures.jsonl). Exits 1 when any input
broke the contract.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import resource
import sys
import tempfile
import time


def _worker(job):
    seed, count, memory = job
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    from . import generators as gen
    from .harness import problems, run_cli

    rng = random.Random(seed)
    stats = {"inputs": 0, "exit0": 0, "exit2": 0, "failures": []}
    for i in range(count):
        make = gen.generated if rng.random() < 0.6 else gen.mutated
        with tempfile.TemporaryDirectory(prefix="rankmap-fuzz-") as folder:
            try:
                argv = make(rng, folder)
            except OSError:
                continue
            res = run_cli(argv, timeout=float(os.environ.get("RANKMAP_FUZZ_TIMEOUT", "120")))
            issues = problems(res, folder)
        stats["inputs"] += 1
        stats["exit0"] += res.code == 0
        stats["exit2"] += res.code == 2
        if issues:
            stats["failures"].append({"argv": argv, "problems": issues,
                                      "stderr": (res.crash or res.err)[-2000:]})
    return stats


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--chunk", type=int, default=500, help="inputs per worker task")
    ap.add_argument("--memory", type=int, default=8 << 30, help="address-space limit (bytes)")
    ap.add_argument("--failures", default="fuzz-failures.jsonl")
    args = ap.parse_args(argv)
    jobs = []
    left, k = args.count, 0
    while left > 0:
        n = min(args.chunk, left)
        jobs.append((args.seed * 1_000_003 + k, n, args.memory))
        left -= n
        k += 1
    total = {"inputs": 0, "exit0": 0, "exit2": 0, "failures": []}
    start = time.time()
    ctx = mp.get_context("fork")
    with ctx.Pool(args.workers, maxtasksperchild=1) as pool, \
            open(args.failures, "w", encoding="utf-8") as out:
        for stats in pool.imap_unordered(_worker, jobs):
            for key in ("inputs", "exit0", "exit2"):
                total[key] += stats[key]
            for f in stats["failures"]:
                out.write(json.dumps(f) + "\n")
                out.flush()
            total["failures"] += stats["failures"]
            print(f"{total['inputs']} inputs, {total['exit0']} exit 0, {total['exit2']} exit 2, "
                  f"{len(total['failures'])} failures ({time.time() - start:.0f} s)", flush=True)
    print(f"fuzz: {total['inputs']} inputs, {len(total['failures'])} failures "
          f"(details in {args.failures})")
    return 1 if total["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
