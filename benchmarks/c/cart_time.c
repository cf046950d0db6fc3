/* Time of MPI_Cart_create on a D0 x D1 periodic grid over MPI_COMM_WORLD (bench_pmpi.py).
 * Usage: cart_time D0 D1 REPEATS. Each repeat times MPI_Cart_create with reorder = 0, then with
 * reorder = 1, in the same run (one launch, which is the expensive part at 1,024 processes).
 * Rank 0 prints, per repeat:
 *   PLAIN s                   slowest process, from a barrier to the return, reorder = 0
 *   REORDER s engine_cpu cpu  the same with reorder = 1; engine_cpu: CPU seconds of the
 *                             children rank 0 waited for meanwhile (the rankmap engine the
 *                             library runs); cpu: CPU seconds of all processes meanwhile
 * and at the end "MOVED n" (processes whose rank changed in the last reordering). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static double cpu_of(int who)
{
    struct rusage u;
    getrusage(who, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static double timed(int *dims, int reorder, MPI_Comm *cart, double *cpu_all, double *cpu_engine)
{
    int periods[2] = {1, 1};
    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu_of(RUSAGE_SELF), e0 = cpu_of(RUSAGE_CHILDREN), t0 = MPI_Wtime();
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, reorder, cart);
    double t = MPI_Wtime() - t0, tmax, c = cpu_of(RUSAGE_SELF) - c0;
    double e = cpu_of(RUSAGE_CHILDREN) - e0;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&c, cpu_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    *cpu_engine = e;
    return tmax;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, dims[2] = {atoi(argv[1]), atoi(argv[2])}, repeats = argc > 3 ? atoi(argv[3]) : 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    int moved = 0, total = 0;
    for (int i = 0; i < repeats; i++) {
        MPI_Comm cart;
        double cpu, engine;
        double plain = timed(dims, 0, &cart, &cpu, &engine);
        if (cart != MPI_COMM_NULL) MPI_Comm_free(&cart);
        if (r == 0) printf("PLAIN %.6f\n", plain);
        double t = timed(dims, 1, &cart, &cpu, &engine);
        /* engine_cpu: the engine's CPU on rank 0; cpu: the processes' own CPU, plus it */
        if (r == 0) printf("REORDER %.6f %.3f %.3f\n", t, engine, cpu + engine);
        int me = -1;
        if (cart != MPI_COMM_NULL) MPI_Comm_rank(cart, &me);
        moved = me >= 0 && me != r;
        if (cart != MPI_COMM_NULL) MPI_Comm_free(&cart);
        fflush(stdout);
    }
    MPI_Reduce(&moved, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (r == 0) printf("MOVED %d\n", total);
    MPI_Finalize();
    return 0;
}
