"""Idle processes fill while an item runs elsewhere: rank 1 gets the 4 s item, rank 0 the eight
of 0.25 s (2 s: time enough for rank 1 to ask first), then the filler's work (payloads 1, 2,
3, each doubled) while rank 1 still runs. With the argument ``unpicklable`` the work of
payload 2 gives a value that cannot travel between processes (a lambda).
Rank 0 prints one JSON list, a row per rank: outcomes, what the filler heard and got back."""

import json
import sys
import time

from mpi4py import MPI

from rankmap.mpi.spread import MPIExecutor
from rankmap.selection.parallel import Filler

comm = MPI.COMM_WORLD


class Doubling(Filler):
    def __init__(self):
        self.left, self.heard, self.back = [1, 2, 3], [], []

    def item_done(self, item, outcome):
        self.heard.append([item, outcome.value[0]])

    def take(self):
        return self.left.pop(0) if self.left else None

    def run(self, payload, stage):
        time.sleep(0.05)
        if payload == 2 and sys.argv[1:] == ["unpicklable"]:
            return lambda: payload
        return [payload * 2, comm.Get_rank()]

    def took(self, payload, value):
        self.back.append([payload, value])


def task(item, stage):
    time.sleep(4.0 if item == "slow" else 0.25)
    return item, comm.Get_rank()


fill = Doubling()
outs = MPIExecutor(comm).run(task, ["slow"] + [f"quick{k}" for k in range(8)], fill=fill)
rows = comm.gather({"rank": comm.Get_rank(), "values": [o.value for o in outs],
                    "heard": sorted(fill.heard), "back": fill.back}, root=0)
if comm.Get_rank() == 0:
    print(json.dumps(rows), flush=True)
