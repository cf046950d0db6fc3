/* Imitates a time step of a pseudo-spectral or FFT-based solver with a 2-D (pencil)
 * decomposition (P3DFFT, 2DECOMP&FFT users): a halo exchange with the 4 neighbours of a
 * periodic PX x PY MPI_Cart grid (the finite-difference part), then the FFT's transpose, an
 * MPI_Alltoall among the PY processes of each grid row (MPI_Comm_split).
 *
 * usage: spectral PX PY HALO BLOCK ITERS [PC]
 *   PX * PY processes; HALO bytes per halo message; BLOCK bytes per all-to-all block;
 *   ITERS time steps;
 *   PC=1 (optional last argument): MPI_Pcontrol(1) after the halo and after the all-to-all,
 *   so `rankmap record` makes a phase of each (the SMPI build links a do-nothing
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
            fprintf(stderr, "usage: spectral PX PY HALO BLOCK ITERS [PC], PX * PY = %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int dims[2] = {atoi(argv[1]), atoi(argv[2])}, periods[2] = {1, 1};
    int hb = atoi(argv[3]), blk = atoi(argv[4]), iters = atoi(argv[5]);
    int pc = argc > 6 ? atoi(argv[6]) : 0;
    MPI_Comm cart, row;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int coords[2], nb[4];
    MPI_Cart_coords(cart, rank, 2, coords);
    MPI_Comm_split(cart, coords[0], coords[1], &row);   /* the processes of a grid row */
    MPI_Cart_shift(cart, 0, 1, &nb[0], &nb[1]);
    MPI_Cart_shift(cart, 1, 1, &nb[2], &nb[3]);
    char *hs = calloc(4, hb + 1), *hr = calloc(4, hb + 1);
    char *as = calloc(dims[1], blk + 1), *ar = calloc(dims[1], blk + 1);
    for (int it = 0; it < iters; it++) {
        MPI_Request req[8];
        for (int d = 0; d < 4; d++)
            MPI_Irecv(hr + (size_t)d * hb, hb, MPI_BYTE, nb[d], d ^ 1, cart, &req[d]);
        for (int d = 0; d < 4; d++)
            MPI_Isend(hs + (size_t)d * hb, hb, MPI_BYTE, nb[d], d, cart, &req[4 + d]);
        MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
        if (pc) MPI_Pcontrol(1);
        MPI_Alltoall(as, blk, MPI_BYTE, ar, blk, MPI_BYTE, row);
        if (pc) MPI_Pcontrol(1);
    }
    if (!rank) printf("spectral done\n");
    free(hs);
    free(hr);
    free(as);
    free(ar);
    MPI_Comm_free(&row);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
