"""Run under mpirun with RANKMAP_NODE a comma list (entry r for MPI_COMM_WORLD rank r): a ring
on a sub-communicator whose ranks differ from the world's is placed by the world entries.

Usage: check_sub_nodes.py MODE MACHINE MAPPING
  MODE rev: all processes, ranked in reverse; half: the even and the odd world ranks apart.
Rank 0 prints one JSON line: (world rank, node of its RANKMAP_NODE entry, new rank) of every
process.
"""

import json
import os
import sys

from mpi4py import MPI

from rankmap.mpi import cart_create

mode, machine, mapping = sys.argv[1:4]
world = MPI.COMM_WORLD
w, n = world.Get_rank(), world.Get_size()
comm = world.Split(0, n - 1 - w) if mode == "rev" else world.Split(w % 2, w)
cart = cart_create(comm, [comm.Get_size()], [True], machine=machine, mapping=mapping)
node = int(os.environ["RANKMAP_NODE"].split(",")[w])
rows = world.gather({"world": w, "node": node, "color": 0 if mode == "rev" else w % 2,
                     "new": cart.Get_rank()}, root=0)
if w == 0:
    print(json.dumps({"procs": rows}))
