"""One process gives dist_graph_create_adjacent a rank outside the communicator: every
process must raise the same RankmapError (process 1 raised alone and the others waited in
the gather forever). Rank 0 prints one line per process: RESULT <rank> <message> (one
writer: the processes' own lines interleaved in the pipe)."""

from mpi4py import MPI

from rankmap.errors import RankmapError
from rankmap.mpi import dist_graph_create_adjacent

comm = MPI.COMM_WORLD
r, n = comm.Get_rank(), comm.Get_size()
try:
    dist_graph_create_adjacent(comm, [(r - 1) % n], [n + 3] if r == 1 else [(r + 1) % n],
                               machine="torus:2x2:cores=1", mapping="TXY")
    said = "no error"
except RankmapError as exc:
    said = str(exc)
for k, text in enumerate(comm.gather(said, root=0) or []):
    print("RESULT", k, text, flush=True)
