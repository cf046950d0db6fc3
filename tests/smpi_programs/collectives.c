/* Collectives for `rankmap validate -- PROGRAM`: one phase each (MPI_Pcontrol(1) before it,
 * a do-nothing one in the SMPI build) of MPI_Allreduce, MPI_Bcast from rank 3, MPI_Allgather,
 * MPI_Reduce to rank 0, MPI_Gather and MPI_Scatter at rank 0, MPI_Alltoallv, MPI_Allgatherv,
 * on COUNT doubles (per process block: COUNT / size).
 *
 * usage: collectives COUNT
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || atoi(argv[1]) < size) {
        fprintf(stderr, "usage: collectives COUNT (at least %d)\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int count = atoi(argv[1]), block = count / size;
    double *a = calloc((size_t)count, sizeof(double));
    double *b = calloc((size_t)block * size + count, sizeof(double));
    int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    for (int i = 0; i < size; i++) {
        counts[i] = block;
        displs[i] = i * block;
    }
    MPI_Pcontrol(1);
    MPI_Allreduce(a, b, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    MPI_Bcast(a, count, MPI_DOUBLE, 3 % size, MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    MPI_Allgather(a, block, MPI_DOUBLE, b, block, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    MPI_Reduce(a, b, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    MPI_Gather(a, block, MPI_DOUBLE, b, block, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    MPI_Scatter(b, block, MPI_DOUBLE, a, block, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    MPI_Alltoallv(b, counts, displs, MPI_DOUBLE, a, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    MPI_Allgatherv(a, block, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
    free(a);
    free(b);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
