/* Start-up cost of a launcher (bench_pmpi.py): MPI_Init, one barrier, MPI_Finalize; rank 0
 * prints DONE after the barrier. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) printf("DONE\n");
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
