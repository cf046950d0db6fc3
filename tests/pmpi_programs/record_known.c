/* A program whose communication is known exactly, for the recording tests.
 *
 * record_known known: phase 0: ring (Isend 1000 B to r+1), reverse ring (Sendrecv 500 B to
 *   r-1), persistent sends on a reversed communicator (Send_init 64 ints, started twice: to
 *   world rank r-1), Ssend 8 doubles to r+2, a 2-D periodic halo on a 3 x (P/3) Cartesian
 *   communicator (reorder = 0, Sendrecv of 100*(d+1) bytes to both neighbours in dimension d),
 *   a Barrier (not recorded); MPI_Pcontrol(1); phase 1: Alltoall of 8 ints; MPI_Pcontrol(2);
 *   phase 2: Alltoall of 16 ints.
 * record_known halo D0 D1 BYTES [ITERS]: a periodic 2-D star halo exchange (Sendrecv of BYTES
 *   to each of the 4 neighbours), ITERS times (default 1).
 * record_known pingpong BYTES ITERS: ranks 0 and 1 exchange BYTES back and forth.
 * record_known threads T N (MPI_THREAD_MULTIPLE): T threads each send N messages of 8 bytes to
 *   r+1 at once (MPI_Sendrecv, tag = thread); prints NOMULTI if the library lacks the level.
 * record_known steps ITERS: ITERS times MPI_Pcontrol(1), a ring (Sendrecv 100 B to r+1),
 *   MPI_Pcontrol(2), Alltoall of 4 ints; then MPI_Pcontrol(3) and a ring of 101 B (the same
 *   pairs as the first ring, other bytes).
 * Timings (halo, pingpong) go to stdout as "TIME seconds" from rank 0.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void known(int r, int p)
{
    char big[1000], in[1000];
    memset(big, 1, sizeof big);
    MPI_Request req;
    MPI_Isend(big, 1000, MPI_BYTE, (r + 1) % p, 1, MPI_COMM_WORLD, &req);
    MPI_Recv(in, 1000, MPI_BYTE, (r + p - 1) % p, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Sendrecv(big, 500, MPI_BYTE, (r + p - 1) % p, 2, in, 500, MPI_BYTE, (r + 1) % p, 2,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* reversed communicator: rank rr = p-1-r; sending to rr+1 reaches world rank r-1 */
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, p - 1 - r, &rev);
    int rr, ints[64] = {0}, iin[64];
    MPI_Comm_rank(rev, &rr);
    MPI_Request ps;
    MPI_Send_init(ints, 64, MPI_INT, (rr + 1) % p, 3, rev, &ps);
    for (int k = 0; k < 2; k++) {
        MPI_Request rq;
        MPI_Irecv(iin, 64, MPI_INT, (rr + p - 1) % p, 3, rev, &rq);
        MPI_Start(&ps);
        MPI_Wait(&ps, MPI_STATUS_IGNORE);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&ps);
    MPI_Comm_free(&rev);
    double dd[8] = {0}, din[8];
    MPI_Irecv(din, 8, MPI_DOUBLE, (r + p - 2) % p, 4, MPI_COMM_WORLD, &req);
    MPI_Ssend(dd, 8, MPI_DOUBLE, (r + 2) % p, 4, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    int dims[2] = {3, p / 3}, periods[2] = {1, 1};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    if (cart != MPI_COMM_NULL) {
        for (int d = 0; d < 2; d++) {
            int lo, hi, n = 100 * (d + 1);
            MPI_Cart_shift(cart, d, 1, &lo, &hi);
            MPI_Sendrecv(big, n, MPI_BYTE, hi, 5, in, n, MPI_BYTE, lo, 5, cart, MPI_STATUS_IGNORE);
            MPI_Sendrecv(big, n, MPI_BYTE, lo, 6, in, n, MPI_BYTE, hi, 6, cart, MPI_STATUS_IGNORE);
        }
        MPI_Comm_free(&cart);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int *a = calloc(16 * p, sizeof(int)), *b = calloc(16 * p, sizeof(int));
    MPI_Pcontrol(1);
    MPI_Alltoall(a, 8, MPI_INT, b, 8, MPI_INT, MPI_COMM_WORLD);
    MPI_Pcontrol(2);
    MPI_Alltoall(a, 16, MPI_INT, b, 16, MPI_INT, MPI_COMM_WORLD);
    free(a);
    free(b);
}

static double halo(int d0, int d1, int nbytes, int iters)
{
    int dims[2] = {d0, d1}, periods[2] = {1, 1};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    if (cart == MPI_COMM_NULL) return 0;
    char *out = calloc(nbytes + 1, 1), *in = calloc(nbytes + 1, 1);
    MPI_Barrier(cart);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++)
        for (int d = 0; d < 2; d++) {
            int lo, hi;
            MPI_Cart_shift(cart, d, 1, &lo, &hi);
            MPI_Sendrecv(out, nbytes, MPI_BYTE, hi, 5, in, nbytes, MPI_BYTE, lo, 5, cart,
                         MPI_STATUS_IGNORE);
            MPI_Sendrecv(out, nbytes, MPI_BYTE, lo, 6, in, nbytes, MPI_BYTE, hi, 6, cart,
                         MPI_STATUS_IGNORE);
        }
    double t = MPI_Wtime() - t0;
    MPI_Comm_free(&cart);
    free(out);
    free(in);
    return t;
}

static double pingpong(int r, int nbytes, int iters)
{
    char *buf = calloc(nbytes + 1, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters && r < 2; it++) {
        if (r == 0) {
            MPI_Send(buf, nbytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, nbytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, nbytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, nbytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    free(buf);
    return t;
}

static void steps(int r, int p, int iters)
{
    char out[101] = {0}, in[101];
    int a[64] = {0}, b[64];
    for (int it = 0; it < iters; it++) {
        MPI_Pcontrol(1);
        MPI_Sendrecv(out, 100, MPI_BYTE, (r + 1) % p, 0, in, 100, MPI_BYTE, (r + p - 1) % p, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Pcontrol(2);
        MPI_Alltoall(a, 4, MPI_INT, b, 4, MPI_INT, MPI_COMM_WORLD);
    }
    MPI_Pcontrol(3);
    MPI_Sendrecv(out, 101, MPI_BYTE, (r + 1) % p, 0, in, 101, MPI_BYTE, (r + p - 1) % p, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

struct thread_arg {
    int tag, r, p, n;
};

static void *sender(void *v)
{
    struct thread_arg *a = v;
    char out[8] = {0}, in[8];
    for (int i = 0; i < a->n; i++)
        MPI_Sendrecv(out, 8, MPI_BYTE, (a->r + 1) % a->p, a->tag, in, 8, MPI_BYTE,
                     (a->r + a->p - 1) % a->p, a->tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

static void threads(int r, int p, int nt, int n)
{
    pthread_t th[16];
    struct thread_arg args[16];
    for (int t = 0; t < nt && t < 16; t++) {
        args[t] = (struct thread_arg){t, r, p, n};
        pthread_create(&th[t], NULL, sender, &args[t]);
    }
    for (int t = 0; t < nt && t < 16; t++) pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
    const char *first = argc > 1 ? argv[1] : "known";
    if (!strcmp(first, "threads")) {
        int provided = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided < MPI_THREAD_MULTIPLE) {
            printf("NOMULTI\n");
            MPI_Finalize();
            return 0;
        }
    } else {
        MPI_Init(&argc, &argv);
    }
    int r, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const char *mode = argc > 1 ? argv[1] : "known";
    double t = -1;
    if (!strcmp(mode, "known")) known(r, p);
    else if (!strcmp(mode, "halo") && argc > 4)
        t = halo(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), argc > 5 ? atoi(argv[5]) : 1);
    else if (!strcmp(mode, "steps") && argc > 2 && p <= 16) steps(r, p, atoi(argv[2]));
    else if (!strcmp(mode, "threads") && argc > 3) threads(r, p, atoi(argv[2]), atoi(argv[3]));
    else if (!strcmp(mode, "pingpong") && argc > 3) t = pingpong(r, atoi(argv[2]), atoi(argv[3]));
    if (t >= 0 && r == 0) printf("TIME %.9f\n", t);
    MPI_Finalize();
    return 0;
}
