/* persistent_start K ROUNDS (2 or more processes): each process holds K persistent 8-byte
 * sends to the next rank and K matching persistent receives from the previous one, and starts
 * them all (MPI_Startall, then MPI_Waitall) ROUNDS times. Rank 0 prints the CPU time per
 * started send in ns (the process's CPU clock: the box is shared). Under the recording library
 * every MPI_Start looks its request up and counts the send: this measures whether that grows
 * with K. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: persistent_start K ROUNDS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int k = atoi(argv[1]), rounds = atoi(argv[2]), me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int to = (me + 1) % p, from = (me + p - 1) % p;
    double *out = calloc((size_t)k, sizeof *out), *in = calloc((size_t)k, sizeof *in);
    MPI_Request *reqs = malloc(2 * (size_t)k * sizeof *reqs);
    for (int i = 0; i < k; i++) {
        MPI_Recv_init(in + i, 1, MPI_DOUBLE, from, i, MPI_COMM_WORLD, reqs + i);
        MPI_Send_init(out + i, 1, MPI_DOUBLE, to, i, MPI_COMM_WORLD, reqs + k + i);
    }
    MPI_Startall(2 * k, reqs);                   /* one untimed round */
    MPI_Waitall(2 * k, reqs, MPI_STATUSES_IGNORE);
    double t0 = cpu_seconds();
    for (int r = 0; r < rounds; r++) {
        MPI_Startall(2 * k, reqs);
        MPI_Waitall(2 * k, reqs, MPI_STATUSES_IGNORE);
    }
    double t = cpu_seconds() - t0;
    if (me == 0) printf("%.3f\n", 1e9 * t / ((double)k * rounds));
    for (int i = 0; i < 2 * k; i++) MPI_Request_free(reqs + i);
    free(out);
    free(in);
    free(reqs);
    MPI_Finalize();
    return 0;
}
