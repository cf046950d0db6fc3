/* Imitates a conjugate-gradient iteration of a 2-D finite-difference solver (the Krylov loop
 * of HPCG or of PETSc's KSPCG on a structured grid): every iteration exchanges the halo of
 * the sparse matrix-vector product with the 4 neighbours of a periodic PX x PY MPI_Cart grid
 * (MPI_Isend/MPI_Irecv), then computes a dot product with an MPI_Allreduce of one double.
 *
 * usage: cg2d PX PY BYTES ITERS [PC]
 *   PX * PY processes; BYTES per halo message; ITERS iterations;
 *   PC=1 (optional last argument): MPI_Pcontrol(1) after the halo and after the allreduce,
 *   so `rankmap record` makes a phase of each (the SMPI build links a do-nothing
 *   MPI_Pcontrol: SimGrid 3.32 aborts on it).
 * The grid is given, not taken from MPI_Dims_create (SimGrid's differs from Open MPI's). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 5 || atoi(argv[1]) * atoi(argv[2]) != size) {
        if (!rank) fprintf(stderr, "usage: cg2d PX PY BYTES ITERS [PC], PX * PY = %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int dims[2] = {atoi(argv[1]), atoi(argv[2])}, periods[2] = {1, 1};
    int bytes = atoi(argv[3]), iters = atoi(argv[4]), pc = argc > 5 ? atoi(argv[5]) : 0;
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int nb[4];
    MPI_Cart_shift(cart, 0, 1, &nb[0], &nb[1]);
    MPI_Cart_shift(cart, 1, 1, &nb[2], &nb[3]);
    int n = bytes / (int)sizeof(double);
    double *sbuf = malloc(4 * (size_t)bytes), *rbuf = malloc(4 * (size_t)bytes);
    for (int i = 0; i < 4 * n; i++) sbuf[i] = rank + i;
    double x = 1.0, rho = 0.0;
    for (int it = 0; it < iters; it++) {
        MPI_Request req[8];
        for (int i = 0; i < 4 * n; i++) sbuf[i] = sbuf[i] * 0.5 + x;   /* pack the boundary */
        for (int d = 0; d < 4; d++)
            MPI_Irecv(rbuf + d * n, n, MPI_DOUBLE, nb[d], d ^ 1, cart, &req[d]);
        for (int d = 0; d < 4; d++)
            MPI_Isend(sbuf + d * n, n, MPI_DOUBLE, nb[d], d, cart, &req[4 + d]);
        MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
        if (pc) MPI_Pcontrol(1);
        double local = n ? rbuf[0] * 1e-6 + rbuf[n] * 1e-6 : 0.0;
        MPI_Allreduce(&local, &rho, 1, MPI_DOUBLE, MPI_SUM, cart);
        if (pc) MPI_Pcontrol(1);
        x = rho * 1e-9;
    }
    if (!rank) printf("cg2d done rho=%g\n", rho);
    free(sbuf);
    free(rbuf);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
