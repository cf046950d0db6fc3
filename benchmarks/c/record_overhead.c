/* Recording overhead inside one run (bench_pmpi.py): exchanges through the MPI_ entry points
 * (the preloaded rankmap library, which records) alternate with exchanges through PMPI_
 * (straight to the MPI library, not recorded). Usage:
 *   record_overhead pingpong BYTES ITERS BLOCKS   (ranks 0 and 1, Send/Recv round trips)
 *   record_overhead halo BYTES ITERS BLOCKS       (2-D periodic star halo, Sendrecv x 4)
 * Wrapped and direct exchanges alternate one by one. Rank 0 prints "WRAPPED s" and "DIRECT s":
 * the median time of one exchange (round trip, or 4 Sendrecv) on rank 0, and "MESSAGES n": the
 * messages of one exchange on rank 0's critical path.
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
    size_t total = (size_t)iters * blocks;
    double *tw = malloc(total * sizeof(double)), *td = malloc(total * sizeof(double));
    int dims[2] = {0, 0}, periods[2] = {1, 1}, nb[4] = {0, 0, 0, 0};
    MPI_Comm cart = MPI_COMM_WORLD;
    if (halo) {
        MPI_Dims_create(p, 2, dims);
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
        MPI_Cart_shift(cart, 0, 1, &nb[0], &nb[1]);
        MPI_Cart_shift(cart, 1, 1, &nb[2], &nb[3]);
    }
    /* wrapped and direct exchanges alternate one by one; each is timed on rank 0, so a
     * preemption by another job spoils single samples, which the medians ignore */
    size_t nw = 0, nd = 0;
    for (int b = 0; b < blocks + 1; b++) {
        PMPI_Barrier(MPI_COMM_WORLD);
        for (int it = 0; it < 2 * iters; it++) {
            int wrapped = it % 2 == 0;
            send_fn snd = wrapped ? MPI_Send : PMPI_Send;
            recv_fn rcv = wrapped ? MPI_Recv : PMPI_Recv;
            sendrecv_fn sr = wrapped ? MPI_Sendrecv : PMPI_Sendrecv;
            double t0 = MPI_Wtime();
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
            double t = MPI_Wtime() - t0;
            if (b == 0) continue;  /* the first block warms up */
            if (wrapped) tw[nw++] = t;
            else td[nd++] = t;
        }
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
    qsort(tw, nw, sizeof(double), cmp);
    qsort(td, nd, sizeof(double), cmp);
    if (r == 0)
        printf("WRAPPED %.9f\nDIRECT %.9f\nMESSAGES %d\n", tw[nw / 2], td[nd / 2],
               halo ? 4 : 2);
    if (halo) MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
