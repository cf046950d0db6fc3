"""Long profile of the fuzz suite (``make fuzz``): N generated and mutated inputs, each run in a
forked child of one fork server (tests/fuzz/forkrun.py) under an address-space, CPU-time and
wall-clock limit, and checked against the contract; one input in ``--sample`` also runs through
the installed ``rankmap`` script in a real subprocess, which must agree with the forked child.

    python -m tests.fuzz.run --count 100000 --seed 1

Input I of seed S is generated from ``random.Random(f"{S}:{I}")`` alone, so
``--first I --count 1`` replays it. Prints progress and a summary (inputs, exit 0, exit 2,
failures, time), writes every failure (index, command line, what broke, stderr, the subprocess
run's verdict) to ``--failures`` and the running totals to ``--summary``. Exits 1 when any input
broke the contract. Ctrl-C or SIGTERM stops early and still writes the summary of the inputs
done.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time

from . import generators as gen
from .forkrun import CPU_LIMIT_S, MEMORY_LIMIT, WALL_LIMIT_S, ForkServer, run_entry_point
from .harness import problems


def make_input(seed: int, index: int, folder: str) -> list[str]:
    """The command line of input ``index`` of ``seed`` (its files written into ``folder``)."""
    rng = random.Random(f"{seed}:{index}")
    make = gen.generated if rng.random() < 0.6 else gen.mutated
    return make(rng, folder)


def warm_up(folder: str) -> list[list[str]]:
    """Command lines the fork server runs once before forking, so every child inherits the
    compiled numba kernels of every machine kind, mapper and the time model."""
    argv = [[a.replace("{out}", folder) for a in v] for v in gen.VALID]
    for m in ("torus:4x4:cores=2", "mesh:3x3", "bgp:512", "fattree:k=4:levels=2",
              "dragonfly:groups=3", "xc:groups=2"):
        argv.append(["compare", "-m", m, "-p", "stencil:4x4:box", "--mappings",
                     "inorder,random,greedy,rcb,graph", "--format", "json"])
        argv.append(["evaluate", "-m", m, "-p", "fft2d:4x4", "--mapping", "inorder",
                     "--routing", "adaptive", "--format", "csv"])
    counters = os.path.join(folder, "warm-counters.csv")
    with open(counters, "w", encoding="utf-8") as fh:
        fh.write("src,dim,dir,dst,bytes\n0,0,1,1,5\n1,0,1,0,7\n0,0,-1,1,3\n1,0,-1,0,2\n")
    argv += [["counters", counters, "--plot", os.path.join(folder, "warm.png")],
             ["links", counters, "-m", "torus:2", "--plot", os.path.join(folder, "warm2.png")]]
    return argv


def _neutral(text: str, folder: str) -> str:
    """``text`` with the input folder's name (whole, relative to the root or with doubled
    slashes as a mutated input may give it, or cut short by a message that bounds a long
    path) replaced by a placeholder."""
    text = text.replace(folder, "{folder}").replace(folder.lstrip(os.sep), "{folder}")
    base = os.path.basename(folder)
    text = text.replace(base, "{name}")  # the rest: a path spelt otherwise ("/tmp///...")
    for n in range(len(base), 0, -1):  # a prefix of the name, cut by "..."
        text = text.replace(base[:n] + "...", "{cut}...")
    return text


def _same(a, b, folder_a: str, folder_b: str) -> str | None:
    """Why two runs of one input (forked child in ``folder_a``, subprocess in ``folder_b``)
    disagree, or None."""
    if a.code != b.code:
        return f"exit {a.code} in the fork server but {b.code} from the rankmap script"
    if _neutral(a.out, folder_a) != _neutral(b.out, folder_b):
        return "stdout differs between the fork server and the rankmap script"
    if _neutral(a.err, folder_a) != _neutral(b.err, folder_b):
        return "stderr differs between the fork server and the rankmap script"
    return None


def _copy_folder(folder: str, twin: str) -> None:
    """Copy an input's folder for the subprocess run; files that name the folder (a TOML
    file that includes itself by its absolute path) name the twin instead, so that both
    runs see the same inputs."""
    shutil.copytree(folder, twin, symlinks=True, dirs_exist_ok=True)
    old, new = os.fsencode(folder), os.fsencode(twin)
    for root, _dirs, files in os.walk(twin):
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as fh:
                data = fh.read()
            if old in data:
                with open(path, "wb") as fh:
                    fh.write(data.replace(old, new))


def _stop(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100_000, help="inputs to run")
    ap.add_argument("--first", type=int, default=0, help="index of the first input")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sample", type=int, default=100,
                    help="every SAMPLE-th input also runs through the rankmap script (0: none)")
    ap.add_argument("--memory", type=int, default=MEMORY_LIMIT,
                    help="address-space limit per input (bytes)")
    ap.add_argument("--cpu", type=int, default=CPU_LIMIT_S, help="CPU seconds per input")
    ap.add_argument("--wall", type=float, default=WALL_LIMIT_S, help="wall seconds per input")
    ap.add_argument("--failures", default="fuzz-failures.jsonl")
    ap.add_argument("--summary", default="fuzz-summary.json")
    ap.add_argument("--every", type=int, default=1000, help="progress line every N inputs")
    args = ap.parse_args(argv)

    start, cpu0 = time.time(), os.times()
    with tempfile.TemporaryDirectory(prefix="rankmap-fuzz-warm-") as warm_dir:
        server = ForkServer(args.memory, args.cpu, args.wall, warm=warm_up(warm_dir))
    print(f"fork server ready ({time.time() - start:.0f} s)", flush=True)
    signal.signal(signal.SIGTERM, _stop)
    total = {"seed": args.seed, "first": args.first, "inputs": 0, "exit0": 0, "exit2": 0,
             "sampled": 0, "failures": 0, "complete": False}

    def summary():
        t = os.times()
        total["wall_s"] = round(time.time() - start, 1)
        total["cpu_s"] = round(t.user + t.system + t.children_user + t.children_system
                               - cpu0.user - cpu0.system, 1)
        with open(args.summary, "w", encoding="utf-8") as fh:
            json.dump(total, fh, indent=1)
        return (f"{total['inputs']} inputs ({total['sampled']} also through the rankmap script), "
                f"{total['exit0']} exit 0, {total['exit2']} exit 2, {total['failures']} failures; "
                f"{total['wall_s']:.0f} s wall, {total['cpu_s']:.0f} s CPU")

    with open(args.failures, "w", encoding="utf-8") as log:
        try:
            for i in range(args.first, args.first + args.count):
                with tempfile.TemporaryDirectory(prefix="rankmap-fuzz-") as folder:
                    try:
                        argv_i = make_input(args.seed, i, folder)
                    except OSError:
                        continue
                    # exec cannot pass a NUL byte in an argument: such an input runs only
                    # in the fork server, where main(argv) receives it as a user's script would
                    execable = not any("\0" in a for a in argv_i)
                    sampled = execable and args.sample and i % args.sample == 0
                    if sampled:  # the same files for the subprocess, in a twin folder
                        # as long as the folder's name, so messages that cut a long path
                        # at a fixed width cut both the same way
                        twin = tempfile.mkdtemp(prefix="rankmap-fuzz-")
                        _copy_folder(folder, twin)
                    res = server.run(argv_i)
                    issues = problems(res, folder)
                    if sampled:
                        try:
                            # the folder named absolutely, relative to the working folder
                            # ("tmp/rankmap-fuzz-...") or with doubled slashes by a mutated
                            # input: its unique name names the twin in all of them, so both
                            # runs write apart and their messages neutralise alike
                            name, twin_name = os.path.basename(folder), os.path.basename(twin)
                            sub = run_entry_point([a.replace(name, twin_name) for a in argv_i],
                                                  memory=args.memory, cpu=args.cpu,
                                                  wall=args.wall)
                            issues += [f"rankmap script: {p}" for p in problems(sub, twin)]
                            differ = _same(res, sub, folder, twin)
                            issues += [differ] if differ else []
                        finally:
                            shutil.rmtree(twin, ignore_errors=True)
                        total["sampled"] += 1
                    if issues and not sampled and execable:  # confirm with the real script
                        again = run_entry_point(argv_i, memory=args.memory, cpu=args.cpu,
                                                wall=args.wall)
                        confirmed = problems(again) or ["(the rankmap script kept the contract)"]
                    else:
                        confirmed = None
                total["inputs"] += 1
                total["exit0"] += res.code == 0
                total["exit2"] += res.code == 2
                if issues:
                    total["failures"] += 1
                    log.write(json.dumps({"index": i, "seed": args.seed, "argv": argv_i,
                                          "problems": issues,
                                          "stderr": (res.crash or res.err)[-2000:],
                                          "rankmap_script": confirmed}) + "\n")
                    log.flush()
                    print(f"input {i}: {', '.join(issues)}: rankmap {' '.join(argv_i)[:300]}",
                          flush=True)
                if total["inputs"] % args.every == 0:
                    print(summary(), flush=True)
            total["complete"] = True
        except KeyboardInterrupt:
            print("stopped early", flush=True)
    print(f"fuzz (seed {args.seed}): {summary()} (failures in {args.failures})", flush=True)
    return 1 if total["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
