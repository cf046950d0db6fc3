/* Imitates a geometric-multigrid V-cycle on a fixed process grid (NAS MG, HPGMG): on a
 * periodic PX x PY MPI_Cart grid, level l of LEVELS exchanges halos with the 4 processes
 * 2^l grid steps away (the owners of the neighbouring coarse points) with messages of
 * BYTES / 2^l; the cycle goes down the levels and up again (0, 1, ..., LEVELS-1, ..., 1, 0)
 * and ends with an MPI_Allreduce of the residual norm (one double).
 *
 * usage: mg PX PY BYTES LEVELS ITERS [PC]
 *   PX * PY processes; ITERS V-cycles;
 *   PC=1 (optional last argument): MPI_Pcontrol(1) after each level's halo and after the
 *   allreduce, so `rankmap record` makes a phase of each (the SMPI build links a do-nothing
 *   MPI_Pcontrol: SimGrid 3.32 aborts on it). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 6 || atoi(argv[1]) * atoi(argv[2]) != size) {
        if (!rank)
            fprintf(stderr, "usage: mg PX PY BYTES LEVELS ITERS [PC], PX * PY = %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int dims[2] = {atoi(argv[1]), atoi(argv[2])}, periods[2] = {1, 1};
    int bytes = atoi(argv[3]), levels = atoi(argv[4]), iters = atoi(argv[5]);
    int pc = argc > 6 ? atoi(argv[6]) : 0;
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    char *sb = calloc(4, bytes + 1), *rb = calloc(4, bytes + 1);
    double res = 1.0, glob = 0.0;
    for (int it = 0; it < iters; it++) {
        for (int s = 0; s < 2 * levels - 1; s++) {
            int l = s < levels ? s : 2 * levels - 2 - s;   /* 0, 1, .., L-1, .., 1, 0 */
            int dist = 1 << l, m = bytes >> l, nb[4];
            MPI_Cart_shift(cart, 0, dist, &nb[0], &nb[1]);
            MPI_Cart_shift(cart, 1, dist, &nb[2], &nb[3]);
            MPI_Request req[8];
            for (int d = 0; d < 4; d++)
                MPI_Irecv(rb + (size_t)d * m, m, MPI_BYTE, nb[d], 100 * l + (d ^ 1), cart,
                          &req[d]);
            for (int d = 0; d < 4; d++)
                MPI_Isend(sb + (size_t)d * m, m, MPI_BYTE, nb[d], 100 * l + d, cart,
                          &req[4 + d]);
            MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
            if (pc) MPI_Pcontrol(1);
        }
        MPI_Allreduce(&res, &glob, 1, MPI_DOUBLE, MPI_SUM, cart);
        if (pc) MPI_Pcontrol(1);
        res = glob * 1e-3;
    }
    if (!rank) printf("mg done\n");
    free(sb);
    free(rb);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
