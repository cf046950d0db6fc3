/* Recording overhead inside one run (bench_pmpi.py): blocks of exchanges through the MPI_
 * entry points (the preloaded rankmap library, which records) alternate with blocks through
 * PMPI_ (straight to the MPI library, not recorded). Usage:
 *   record_overhead pingpong BYTES ITERS BLOCKS   (ranks 0 and 1, Send/Recv round trips)
 *   record_overhead halo BYTES ITERS BLOCKS       (2-D periodic star halo, Sendrecv x 4)
 * Rank 0 prints "WRAPPED s" and "DIRECT s": the median over blocks of the slowest process's
 * block time, and "MESSAGES n": messages sent per block on the critical path.
 * When the library is preloaded, rank 0 also times (thread CPU time) its bookkeeping alone (rm_record_send, found
 * with dlsym: datatype size, rank translation, hash-map update) on MPI_COMM_WORLD and on a
 * reversed communicator, and prints "BOOK_WORLD ns" and "BOOK_OTHER ns" per message. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU time of this thread (s): the bookkeeping figure must not depend on other jobs' load */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
typedef int (*sendrecv_fn)(const void *, int, MPI_Datatype, int, int, void *, int, MPI_Datatype,
                           int, int, MPI_Comm, MPI_Status *);

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int halo = !strcmp(argv[1], "halo"), nbytes = atoi(argv[2]), iters = atoi(argv[3]);
    int blocks = atoi(argv[4]);
    char *out = calloc(nbytes + 1, 1), *in = calloc(nbytes + 1, 1);
    double *tw = malloc(blocks * sizeof(double)), *td = malloc(blocks * sizeof(double));
    int dims[2] = {0, 0}, periods[2] = {1, 1}, nb[4] = {0, 0, 0, 0};
    MPI_Comm cart = MPI_COMM_WORLD;
    if (halo) {
        MPI_Dims_create(p, 2, dims);
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
        MPI_Cart_shift(cart, 0, 1, &nb[0], &nb[1]);
        MPI_Cart_shift(cart, 1, 1, &nb[2], &nb[3]);
    }
    for (int b = 0; b < 2 * blocks + 2; b++) {
        int wrapped = b % 2 == 0;
        send_fn snd = wrapped ? MPI_Send : PMPI_Send;
        recv_fn rcv = wrapped ? MPI_Recv : PMPI_Recv;
        sendrecv_fn sr = wrapped ? MPI_Sendrecv : PMPI_Sendrecv;
        PMPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int it = 0; it < iters; it++) {
            if (halo) {
                for (int k = 0; k < 4; k++)
                    sr(out, nbytes, MPI_BYTE, nb[k], 5, in, nbytes, MPI_BYTE, nb[k ^ 1], 5, cart,
                       MPI_STATUS_IGNORE);
            } else if (r == 0) {
                snd(out, nbytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                rcv(in, nbytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (r == 1) {
                rcv(in, nbytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                snd(out, nbytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0, tmax;
        PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (b >= 2) (wrapped ? tw : td)[(b - 2) / 2] = tmax;  /* the first pair warms up */
    }
    void (*book)(MPI_Comm, int, int64_t) = (void (*)(MPI_Comm, int, int64_t))dlsym(
        RTLD_DEFAULT, "rm_record_send");
    int64_t (*tbytes)(int, MPI_Datatype) = (int64_t (*)(int, MPI_Datatype))dlsym(
        RTLD_DEFAULT, "rm_type_bytes");
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, p - 1 - r, &rev);
    double bw = -1, bo = -1;
    if (book && tbytes && r == 0 && p > 1) {
        const int n = 1000000, nb_blocks = 7;
        double w[7], o[7];
        for (int b = 0; b < nb_blocks; b++) {
            double t0 = cpu_now();
            for (int i = 0; i < n; i++) book(MPI_COMM_WORLD, 1 + (i & 1) * (p > 2), tbytes(1, MPI_BYTE));
            w[b] = (cpu_now() - t0) / n * 1e9;
            t0 = cpu_now();
            for (int i = 0; i < n; i++) book(rev, 1 + (i & 1) * (p > 2), tbytes(1, MPI_BYTE));
            o[b] = (cpu_now() - t0) / n * 1e9;
        }
        qsort(w, nb_blocks, sizeof(double), cmp);
        qsort(o, nb_blocks, sizeof(double), cmp);
        bw = w[nb_blocks / 2];
        bo = o[nb_blocks / 2];
    }
    MPI_Comm_free(&rev);
    if (r == 0 && bw >= 0) printf("BOOK_WORLD %.2f\nBOOK_OTHER %.2f\n", bw, bo);
    qsort(tw, blocks, sizeof(double), cmp);
    qsort(td, blocks, sizeof(double), cmp);
    if (r == 0)
        printf("WRAPPED %.9f\nDIRECT %.9f\nMESSAGES %d\n", tw[blocks / 2], td[blocks / 2],
               halo ? 4 * iters : 2 * iters);
    if (halo) MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
