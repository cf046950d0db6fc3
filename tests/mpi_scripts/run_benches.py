"""Run under mpirun: the pairs, cart and fft benchmarks of ``rankmap bench`` in one MPI job.

Usage: run_benches.py OUTDIR MACHINE   (JSON results written to OUTDIR/<kind>.json)
"""

import sys

from rankmap.cli import main

outdir, machine = sys.argv[1], sys.argv[2]
common = ["--sizes", "1KiB,16KiB", "--repeats", "2", "--machine", machine, "--mapping", "TX"]
runs = [["pairs", "--pairings", "3"], ["cart", "--dims", "4", "--cyclic"],
        ["fft", "--dims", "2x2"]]
for run in runs:
    rc = main(["bench", *run, *common, "--json", f"{outdir}/{run[0]}.json"])
    if rc:
        sys.exit(rc)
