"""Run under mpirun: build a reordered Cartesian communicator and check it is consistent.

Usage: check_cart.py DIMS PERIODS MACHINE MAPPING NODES_RR
  DIMS 4x4, PERIODS e.g. 10 (1 = periodic per dimension), MACHINE spec or '-' (none),
  NODES_RR: process p claims node p % NODES_RR through RANKMAP_NODE (0: use the host name).
Rank 0 prints one JSON line: errors found by any process and (new rank, node) of every process.
"""

import json
import os
import sys
import warnings

from mpi4py import MPI

from rankmap.mpi import cart_create

dims = [int(d) for d in sys.argv[1].split("x")]
periods = [c == "1" for c in sys.argv[2]]
machine = None if sys.argv[3] == "-" else sys.argv[3]
mapping = sys.argv[4]
rr = int(sys.argv[5])
comm = MPI.COMM_WORLD
if rr:
    os.environ["RANKMAP_NODE"] = str(comm.Get_rank() % rr)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    cart = cart_create(comm, dims, periods, machine=machine, mapping=mapping)
warned = [str(w.message) for w in caught]
errors = []
if cart != MPI.COMM_NULL:
    me = cart.Get_rank()
    coords = cart.Get_coords(me)
    if cart.Get_cart_rank(coords) != me:
        errors.append(f"rank {me}: Get_cart_rank(Get_coords) = {cart.Get_cart_rank(coords)}")
    expected_coords = []
    for d in range(len(dims)):
        src, dst = cart.Shift(d, 1)
        got = cart.sendrecv(coords, dest=dst, source=src)
        for disp, nb in ((-1, src), (1, dst)):
            c = list(coords)
            c[d] += disp
            inside = 0 <= c[d] < dims[d]
            if periods[d]:
                c[d] %= dims[d]
                inside = True
            if (nb == MPI.PROC_NULL) == inside and not (periods[d] and dims[d] == 1):
                errors.append(f"rank {me} dim {d} disp {disp}: neighbour {nb}, inside={inside}")
            expected_coords.append(c if inside else None)
        if src != MPI.PROC_NULL:
            c = list(coords)
            c[d] = (c[d] - 1) % dims[d]
            if list(got) != c:
                errors.append(f"rank {me} at {coords}: Shift source sent {got}, expected {c}")
    nb_coords = cart.neighbor_allgather(list(coords))
    for i, (got, exp) in enumerate(zip(nb_coords, expected_coords)):
        if exp is not None and list(got) != exp:
            errors.append(f"rank {me}: neighbor_allgather[{i}] = {got}, expected {exp}")
    new = me
else:
    new = -1
node = os.environ.get("RANKMAP_NODE", MPI.Get_processor_name())
rows = comm.gather({"old": comm.Get_rank(), "new": new, "node": node, "errors": errors,
                    "warnings": warned}, root=0)
if comm.Get_rank() == 0:
    print(json.dumps({"procs": rows}))
