"""dist_graph_create_adjacent with edge weights MPI's int cannot hold: ``one`` (rank 1 gives
2**31, the others 1) or ``all`` (every process gives 2**70). Every process must raise the
same RankmapError (rank 1 raised mpi4py's OverflowError alone and the others waited in
Create_dist_graph_adjacent; with 2**70 everywhere, OverflowError). Rank 0 prints one line
per process: RESULT <rank> <exception type> <message>."""

import sys

from mpi4py import MPI

from rankmap.mpi import dist_graph_create_adjacent

comm = MPI.COMM_WORLD
r, n = comm.Get_rank(), comm.Get_size()
big = 2**70 if sys.argv[1] == "all" else (2**31 if r == 1 else 1)
try:
    dist_graph_create_adjacent(comm, [(r - 1) % n], [(r + 1) % n], weights=[big],
                               machine="torus:2x2:cores=1", mapping="TXY")
    said = "none no error"
except Exception as exc:  # noqa: BLE001 - the type is what is checked
    said = f"{type(exc).__name__} {exc}"
for k, text in enumerate(comm.gather(said, root=0) or []):
    print("RESULT", k, text, flush=True)
