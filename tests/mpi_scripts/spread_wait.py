"""Rank 0's item sleeps 3 s; rank 1, done at once, waits for it in the exchange. Rank 0 prints
one JSON list, a row per rank: the outcomes and the CPU seconds the process used in ``run``."""

import json
import resource
import time

from mpi4py import MPI

from rankmap.mpi.spread import MPIExecutor


def task(item, stage):
    if item == "slow":
        time.sleep(3)
    return item


def cpu_s() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


comm = MPI.COMM_WORLD
before = cpu_s()
outs = MPIExecutor(comm).run(task, ["slow", "quick"])
rows = comm.gather({"rank": comm.Get_rank(), "values": [o.value for o in outs],
                   "cpu_s": cpu_s() - before}, root=0)
if comm.Get_rank() == 0:
    print(json.dumps(rows), flush=True)
