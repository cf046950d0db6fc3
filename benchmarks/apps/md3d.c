/* Imitates the ghost-atom exchange of a molecular-dynamics code (LAMMPS's Comm::borders,
 * GROMACS's domain decomposition): on a periodic PX x PY x PZ MPI_Cart grid the ghosts are
 * exchanged in three dependent stages, x, then y, then z, each an MPI_Sendrecv up and one
 * down; a later stage forwards the ghosts received in the earlier ones (so edge and corner
 * neighbours are reached without diagonal messages), hence its messages are larger: FACE
 * bytes along x, 1.5 FACE along y, 2 FACE along z.
 *
 * usage: md3d PX PY PZ FACE ITERS [PC]
 *   PX * PY * PZ processes; ITERS time steps;
 *   PC=1 (optional last argument): MPI_Pcontrol(1) after each stage, so `rankmap record`
 *   makes a phase of each (PC=2: also between a stage's two MPI_Sendrecv); the SMPI build
 *   links a do-nothing MPI_Pcontrol (SimGrid 3.32 aborts on it). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 6 || atoi(argv[1]) * atoi(argv[2]) * atoi(argv[3]) != size) {
        if (!rank)
            fprintf(stderr, "usage: md3d PX PY PZ FACE ITERS [PC], PX * PY * PZ = %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int dims[3] = {atoi(argv[1]), atoi(argv[2]), atoi(argv[3])}, periods[3] = {1, 1, 1};
    int face = atoi(argv[4]), iters = atoi(argv[5]), pc = argc > 6 ? atoi(argv[6]) : 0;
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    int sz[3] = {face, face + face / 2, 2 * face};
    char *buf[3][4];   /* per dimension: send down, send up, received from below, from above */
    for (int d = 0; d < 3; d++)
        for (int k = 0; k < 4; k++) buf[d][k] = calloc(sz[d] + 1, 1);
    for (int it = 0; it < iters; it++) {
        for (int d = 0; d < 3; d++) {
            int lo, hi;
            MPI_Cart_shift(cart, d, 1, &lo, &hi);
            if (d > 0) {   /* forward the ghosts of the previous stage */
                buf[d][0][0] = buf[d - 1][2][0];
                buf[d][1][0] = buf[d - 1][3][0];
            }
            MPI_Sendrecv(buf[d][1], sz[d], MPI_BYTE, hi, 10 + d, buf[d][2], sz[d], MPI_BYTE, lo,
                         10 + d, cart, MPI_STATUS_IGNORE);
            if (pc == 2) MPI_Pcontrol(1);
            MPI_Sendrecv(buf[d][0], sz[d], MPI_BYTE, lo, 20 + d, buf[d][3], sz[d], MPI_BYTE, hi,
                         20 + d, cart, MPI_STATUS_IGNORE);
            if (pc) MPI_Pcontrol(1);
        }
    }
    if (!rank) printf("md3d done\n");
    for (int d = 0; d < 3; d++)
        for (int k = 0; k < 4; k++) free(buf[d][k]);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
