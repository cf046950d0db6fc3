/* Imitates a discrete-ordinates (Sn) transport sweep with the KBA wavefront algorithm
 * (Sweep3D, PARTISN, Kripke): a non-periodic PX x PY MPI_Cart grid is swept from each of its
 * four corners in turn; a process waits for the angular fluxes of its upstream x and y
 * neighbours (MPI_Recv), computes, and sends its own downstream (MPI_Isend), once per k-block,
 * so the NBLK blocks of a sweep run through the grid as a pipeline.
 *
 * usage: sweep PX PY BYTES ITERS NBLK [PC]
 *   PX * PY processes; BYTES per message; ITERS iterations of the four sweeps;
 *   NBLK k-blocks per sweep;
 *   PC=1 (optional last argument): MPI_Pcontrol(1) after each sweep, so `rankmap record`
 *   makes a phase of each (the SMPI build links a do-nothing MPI_Pcontrol: SimGrid 3.32
 *   aborts on it). */
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
            fprintf(stderr, "usage: sweep PX PY BYTES ITERS NBLK [PC], PX * PY = %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int dims[2] = {atoi(argv[1]), atoi(argv[2])}, periods[2] = {0, 0};
    int bytes = atoi(argv[3]), iters = atoi(argv[4]), nblk = atoi(argv[5]);
    int pc = argc > 6 ? atoi(argv[6]) : 0;
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int xlo, xhi, ylo, yhi;
    MPI_Cart_shift(cart, 0, 1, &xlo, &xhi);
    MPI_Cart_shift(cart, 1, 1, &ylo, &yhi);
    int n = bytes / (int)sizeof(double);
    double *inx = calloc(n + 1, sizeof(double)), *iny = calloc(n + 1, sizeof(double));
    double *outx = calloc(n + 1, sizeof(double)), *outy = calloc(n + 1, sizeof(double));
    for (int it = 0; it < iters; it++) {
        for (int oct = 0; oct < 4; oct++) {   /* one sweep from each corner */
            int upx = (oct & 1) ? xhi : xlo, dnx = (oct & 1) ? xlo : xhi;
            int upy = (oct & 2) ? yhi : ylo, dny = (oct & 2) ? ylo : yhi;
            for (int b = 0; b < nblk; b++) {
                int tag = oct * 1000 + b;
                MPI_Recv(inx, n, MPI_DOUBLE, upx, tag, cart, MPI_STATUS_IGNORE);
                MPI_Recv(iny, n, MPI_DOUBLE, upy, tag, cart, MPI_STATUS_IGNORE);
                for (int i = 0; i < n; i++) outx[i] = outy[i] = 0.5 * (inx[i] + iny[i]);
                MPI_Request r[2];
                MPI_Isend(outx, n, MPI_DOUBLE, dnx, tag, cart, &r[0]);
                MPI_Isend(outy, n, MPI_DOUBLE, dny, tag, cart, &r[1]);
                MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            }
            if (pc) MPI_Pcontrol(1);
        }
    }
    if (!rank) printf("sweep done\n");
    free(inx);
    free(iny);
    free(outx);
    free(outy);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
