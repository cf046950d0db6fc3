/* Edge cases of the PMPI library, each a mode of this program.
 *
 * edge_cases attr: MPI_COMM_WORLD carries an attribute whose copy callback refuses (returns
 *   MPI_ERR_OTHER) and counts its calls, as a library guarding its communicator would; then
 *   MPI_Cart_create(reorder = 1) of a 1-D periodic ring. MPI runs copy callbacks only in
 *   MPI_Comm_dup, so the call must succeed and the count stay 0.
 *   Prints "RESULT errors=E copies=C rank=R" per process (R: the rank in the new grid).
 * edge_cases zero: every process sends 0 bytes to r+1 (MPI_Send of count 0) and a sparse
 *   MPI_Alltoallv: 4 ints to r+1, none to the others; rank 0 also sends 0 bytes to 2.
 *   Only the 16-byte blocks move data.
 * edge_cases appear PATH: one 8-byte send to r+1, then world rank 0 creates PATH (as another
 *   program might while this one runs) before MPI_Finalize writes the recording.
 * edge_cases dots N: N calls of MPI_Allreduce of one double (a dot product): a ring share of
 *   2(p-1)/p x 8 bytes a call is rarely whole bytes.
 * edge_cases pdots N: the same with MPI_Pcontrol(1) before every call (N identical phases).
 * edge_cases sigchld: SIGCHLD ignored (children reaped by the kernel), then the ring of
 *   attr; prints "RESULT errors=E rank=R ignored=I" (I: still ignored after the call).
 * edge_cases refused: under MPI_ERRORS_RETURN, sends MPI refuses (a rank past the
 *   communicator on MPI_COMM_WORLD and on MPI_COMM_SELF, a negative tag, an MPI_Isend to a
 *   rank past it), then one 8-byte send to r+1; prints "RESULT refused=K" (calls that returned
 *   an error). Only the 8-byte sends moved data.
 * edge_cases churn N ROUNDS: N persistent sends to r+1 of 1-5 doubles (request i: i % 5 + 1)
 *   alive at once; every round starts them all, then frees and re-creates every other one
 *   (other sizes: the recording library's table reuses removed slots and rehashes); prints
 *   "RESULT bytes=B msgs=M", what this rank sent to r+1.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int copies = 0;

static int refuse_copy(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag)
{
    (void)comm; (void)key; (void)extra; (void)in; (void)out;
    copies++;
    *flag = 0;
    return MPI_ERR_OTHER;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "attr") == 0) {
        int key, dims[1] = {p}, per[1] = {1}, errors = 0, nr = -1;
        MPI_Comm_create_keyval(refuse_copy, MPI_COMM_NULL_DELETE_FN, &key, NULL);
        MPI_Comm_set_attr(MPI_COMM_WORLD, key, NULL);
        MPI_Comm cart;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 1, &cart) != MPI_SUCCESS) errors++;
        else MPI_Comm_rank(cart, &nr);
        printf("RESULT errors=%d copies=%d rank=%d\n", errors, copies, nr);
    } else if (strcmp(mode, "sigchld") == 0) {
        int dims[1] = {p}, per[1] = {1}, errors = 0, nr = -1;
        signal(SIGCHLD, SIG_IGN);
        MPI_Comm cart;
        if (MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 1, &cart) != MPI_SUCCESS) errors++;
        else MPI_Comm_rank(cart, &nr);
        struct sigaction now;
        sigaction(SIGCHLD, NULL, &now);
        printf("RESULT errors=%d rank=%d ignored=%d\n", errors, nr, now.sa_handler == SIG_IGN);
    } else if (strcmp(mode, "churn") == 0 && argc > 3) {
        int n = atoi(argv[2]), rounds = atoi(argv[3]);
        int to = (r + 1) % p, from = (r + p - 1) % p;
        double *out = calloc(5 * (size_t)n, sizeof *out), *in = calloc(5 * (size_t)n, sizeof *in);
        int *len = malloc((size_t)n * sizeof *len);
        MPI_Request *sq = malloc((size_t)n * sizeof *sq), *rq = malloc((size_t)n * sizeof *rq);
        long long bytes = 0, msgs = 0;
        for (int i = 0; i < n; i++) {
            len[i] = i % 5 + 1;
            MPI_Send_init(out + 5 * i, len[i], MPI_DOUBLE, to, i, MPI_COMM_WORLD, sq + i);
            MPI_Recv_init(in + 5 * i, 5, MPI_DOUBLE, from, i, MPI_COMM_WORLD, rq + i);
        }
        for (int k = 0; k < rounds; k++) {
            MPI_Startall(n, rq);
            MPI_Startall(n, sq);
            MPI_Waitall(n, sq, MPI_STATUSES_IGNORE);
            MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
            for (int i = 0; i < n; i++) {
                bytes += 8LL * len[i];
                msgs++;
            }
            for (int i = k % 2; i < n; i += 2) {   /* free and re-create every other send */
                MPI_Request_free(sq + i);
                len[i] = (len[i] + k) % 5 + 1;
                MPI_Send_init(out + 5 * i, len[i], MPI_DOUBLE, to, i, MPI_COMM_WORLD, sq + i);
            }
        }
        for (int i = 0; i < n; i++) {
            MPI_Request_free(sq + i);
            MPI_Request_free(rq + i);
        }
        printf("RESULT bytes=%lld msgs=%lld\n", bytes, msgs);
        free(out); free(in); free(len); free(sq); free(rq);
    } else if (strcmp(mode, "refused") == 0) {
        char b[8] = {0}, in[8];
        int refused = 0;
        MPI_Request rq;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        refused += MPI_Send(b, 8, MPI_BYTE, p + 1000, 0, MPI_COMM_WORLD) != MPI_SUCCESS;
        refused += MPI_Send(b, 8, MPI_BYTE, 1000000, 0, MPI_COMM_SELF) != MPI_SUCCESS;
        refused += MPI_Send(b, 8, MPI_BYTE, (r + 1) % p, -5, MPI_COMM_WORLD) != MPI_SUCCESS;
        refused += MPI_Isend(b, 8, MPI_BYTE, p + 7, 0, MPI_COMM_WORLD, &rq) != MPI_SUCCESS;
        MPI_Sendrecv(b, 8, MPI_BYTE, (r + 1) % p, 4, in, 8, MPI_BYTE, (r + p - 1) % p, 4,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("RESULT refused=%d\n", refused);
    } else if (strcmp(mode, "zero") == 0) {
        int buf[4] = {1, 2, 3, 4}, in[4];
        MPI_Request rq;
        MPI_Irecv(in, 0, MPI_INT, (r + p - 1) % p, 1, MPI_COMM_WORLD, &rq);
        MPI_Send(buf, 0, MPI_INT, (r + 1) % p, 1, MPI_COMM_WORLD);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (r == 0 && p > 2) MPI_Send(buf, 0, MPI_INT, 2, 2, MPI_COMM_WORLD);
        if (r == 2 && p > 2) MPI_Recv(in, 0, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int *sc = calloc(p, sizeof *sc), *rc = calloc(p, sizeof *rc);
        int *sd = calloc(p, sizeof *sd), *rd = calloc(p, sizeof *rd);
        sc[(r + 1) % p] = 4;
        rc[(r + p - 1) % p] = 4;
        MPI_Alltoallv(buf, sc, sd, MPI_INT, in, rc, rd, MPI_INT, MPI_COMM_WORLD);
        free(sc); free(rc); free(sd); free(rd);
    } else if (strcmp(mode, "appear") == 0 && argc > 2) {
        double x = 1.0, y;
        MPI_Sendrecv(&x, 1, MPI_DOUBLE, (r + 1) % p, 3, &y, 1, MPI_DOUBLE, (r + p - 1) % p, 3,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (r == 0) {
            FILE *f = fopen(argv[2], "w");
            if (f) {
                fputs("precious\n", f);
                fclose(f);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else if ((strcmp(mode, "dots") == 0 || strcmp(mode, "pdots") == 0) && argc > 2) {
        double x = r, y;
        for (int i = atoi(argv[2]); i > 0; i--) {
            if (mode[0] == 'p') MPI_Pcontrol(1);
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
