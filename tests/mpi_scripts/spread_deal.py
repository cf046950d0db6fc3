"""Items dealt out as processes become free: one item of 3 s first in the dispatch order, ten
of 0.2 s after it (2 s in all: time enough for rank 1 to ask first). Rank 0 prints one JSON
list, a row per rank: the outcomes (item, and the rank that ran it)."""

import json
import time

from mpi4py import MPI

from rankmap.mpi.spread import MPIExecutor

comm = MPI.COMM_WORLD


def task(item, stage):
    time.sleep(3.0 if item == "slow" else 0.2)
    return item, comm.Get_rank()


items = ["slow"] + [f"quick{k}" for k in range(10)]
outs = MPIExecutor(comm).run(task, items)
rows = comm.gather({"rank": comm.Get_rank(), "values": [o.value for o in outs]}, root=0)
if comm.Get_rank() == 0:
    print(json.dumps(rows), flush=True)
