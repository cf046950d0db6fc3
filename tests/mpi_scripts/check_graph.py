"""Run under mpirun: build a reordered distributed graph communicator and check it.

Usage: check_graph.py MACHINE MAPPING NODES_RR [unweighted]
The graph: vertex v sends to v+1 and v+3 (mod size) with weights 5 and 1 (no weights given
with ``unweighted``: the communicator must be unweighted), and receives from v-1 and v-3.
Process p claims node p % NODES_RR via RANKMAP_NODE. Every process checks that its neighbour
lists (and weights) are those of the vertex equal to its new rank and that a neighbour
all-to-all delivers each source's rank; rank 0 prints one JSON line.
"""

import json
import os
import sys

from mpi4py import MPI

from rankmap.mpi import dist_graph_create_adjacent

machine = None if sys.argv[1] == "-" else sys.argv[1]
mapping = sys.argv[2]
rr = int(sys.argv[3])
comm = MPI.COMM_WORLD
n = comm.Get_size()
os.environ["RANKMAP_NODE"] = str(comm.Get_rank() % rr)


def lists(v):
    """Sources, destinations and weights of vertex v."""
    return [(v - 1) % n, (v - 3) % n], [(v + 1) % n, (v + 3) % n], [5, 1]


unweighted = sys.argv[4:] == ["unweighted"]
s, d, w = lists(comm.Get_rank())
graph = dist_graph_create_adjacent(comm, s, d, None if unweighted else w, machine=machine,
                                   mapping=mapping)
me = graph.Get_rank()
errors = []
es, ed, ew = lists(me)
got_s, got_d, weighted = graph.Get_dist_neighbors()
if list(got_s) != es or list(got_d) != ed:
    errors.append(f"rank {me}: neighbours {got_s} {got_d}, expected {es} {ed}")
if unweighted and weighted is not None:
    errors.append(f"rank {me}: weights {weighted} on a graph given none (MPI_UNWEIGHTED)")
if not unweighted and (weighted is None or list(weighted[1]) != ew or list(weighted[0]) != [5, 1]):
    errors.append(f"rank {me}: weights {weighted}, expected sources [5, 1], destinations {ew}")
recv = graph.neighbor_alltoall([me] * len(ed))
if list(recv) != es:
    errors.append(f"rank {me}: neighbor_alltoall delivered {recv}, expected {es}")
rows = comm.gather({"old": comm.Get_rank(), "new": me, "node": os.environ["RANKMAP_NODE"],
                    "errors": errors}, root=0)
if comm.Get_rank() == 0:
    print(json.dumps({"procs": rows}))
