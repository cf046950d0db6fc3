/* A user's program for `rankmap validate -- PROGRAM`: a 2-D periodic halo exchange on an
 * MPI_Cart grid of PX x PY processes, then an all-to-all along each grid row,
 * repeated ITERS times, with MPI_Pcontrol(1) before each part (phases for `rankmap record`;
 * the SMPI build links `rankmap simgrid shim`'s file: SimGrid 3.32 aborts on MPI_Pcontrol).
 * PX PY = 0 0 takes the grid from MPI_Dims_create, as many programs do: SimGrid 3.32's own
 * makes 9x4 of 36 processes where Open MPI's makes 6x6, and the shim's gives Open MPI's.
 *
 * usage: halo_phases PX PY BYTES ITERS [ALLTOALL_BYTES]   (ALLTOALL_BYTES 0: no all-to-all)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size, dims[2], periods[2] = {1, 1}, coords[2];
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc >= 5) {
        dims[0] = atoi(argv[1]);
        dims[1] = atoi(argv[2]);
        if (dims[0] == 0 && dims[1] == 0) MPI_Dims_create(size, 2, dims);
    }
    if (argc < 5 || dims[0] * dims[1] != size) {
        fprintf(stderr, "usage: halo_phases PX PY BYTES ITERS [ALLTOALL_BYTES], PX * PY = %d "
                "(0 0: MPI_Dims_create's)\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int bytes = atoi(argv[3]), iters = atoi(argv[4]);
    int a2a = argc > 5 ? atoi(argv[5]) : 0;
    MPI_Comm cart, row;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int rank;
    MPI_Comm_rank(cart, &rank);
    MPI_Cart_coords(cart, rank, 2, coords);
    MPI_Comm_split(cart, coords[0], coords[1], &row);
    char *send = calloc(4 * (size_t)bytes + 1, 1), *recv = calloc(4 * (size_t)bytes + 1, 1);
    char *a2a_send = calloc((size_t)a2a * dims[1] + 1, 1);
    char *a2a_recv = calloc((size_t)a2a * dims[1] + 1, 1);
    for (int it = 0; it < iters; it++) {
        MPI_Pcontrol(1);
        MPI_Request req[8];
        int k = 0;
        for (int d = 0; d < 2; d++) {
            int lo, hi;
            MPI_Cart_shift(cart, d, 1, &lo, &hi);
            MPI_Irecv(recv + (2 * d) * (size_t)bytes, bytes, MPI_CHAR, lo, d, cart, &req[k++]);
            MPI_Irecv(recv + (2 * d + 1) * (size_t)bytes, bytes, MPI_CHAR, hi, d, cart, &req[k++]);
            MPI_Isend(send + (2 * d) * (size_t)bytes, bytes, MPI_CHAR, hi, d, cart, &req[k++]);
            MPI_Isend(send + (2 * d + 1) * (size_t)bytes, bytes, MPI_CHAR, lo, d, cart, &req[k++]);
        }
        MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
        if (a2a > 0) {
            MPI_Pcontrol(1);
            MPI_Alltoall(a2a_send, a2a, MPI_CHAR, a2a_recv, a2a, MPI_CHAR, row);
        }
    }
    free(send);
    free(recv);
    free(a2a_send);
    free(a2a_recv);
    MPI_Comm_free(&row);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
