/* Time of MPI_Cart_create on a D0 x D1 periodic grid over MPI_COMM_WORLD (bench_pmpi.py).
 * Usage: cart_time D0 D1 REORDER. Rank 0 prints "TIME s" (slowest process, from a barrier to
 * the return of MPI_Cart_create) and "MOVED n" (processes whose rank changed). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, dims[2] = {atoi(argv[1]), atoi(argv[2])}, periods[2] = {1, 1};
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm cart;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, atoi(argv[3]), &cart);
    double t = MPI_Wtime() - t0, tmax;
    int me = -1, moved, total;
    if (cart != MPI_COMM_NULL) MPI_Comm_rank(cart, &me);
    moved = me >= 0 && me != r;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&moved, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (r == 0) printf("TIME %.6f\nMOVED %d\n", tmax, total);
    if (cart != MPI_COMM_NULL) MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
