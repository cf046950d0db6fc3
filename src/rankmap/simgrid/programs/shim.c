/* rankmap's SMPI shim: link it into the smpicc build of a program that `rankmap validate --
 * PROGRAM` simulates, so that the simulated run sends what its recording (made under Open MPI or
 * MPICH) holds. SimGrid loads every rank's copy of the program with the program's own symbols
 * first, so these definitions replace SimGrid's:
 *
 *  - MPI_Pcontrol (C) and mpi_pcontrol_ (Fortran) do nothing: SimGrid 3.32 aborts on them, and
 *    `rankmap record` uses them only to start phases.
 *  - MPI_Dims_create (C) and mpi_dims_create_ (Fortran) give the dimensions Open MPI's or
 *    MPICH's give (RANKMAP_DIMS_LIKE_MPICH below): SimGrid 3.32's are far less balanced
 *    (36 processes in 2-D: 9x4, where both MPI libraries give 6x6), and a program that sizes
 *    its grid with them would send other messages than its recording. Open MPI 4.1: the prime
 *    factors of the free product, largest first, each multiplied into the smallest dimension
 *    so far, sorted in non-increasing order. MPICH 4: of the non-increasing factorisations,
 *    the one with the least difference between largest and smallest, then the least sum, the
 *    lexicographically largest first. Both were checked against the libraries on every
 *    process count up to 3000 in 1-5 dimensions. Invalid arguments go to SimGrid's own
 *    MPI_Dims_create (PMPI_Dims_create), which reports them.
 *
 * Written by `rankmap simgrid shim -o shim.c [--like mpich]`; build:
 *   smpicc -O2 -o app.smpi app.c shim.c
 *   (Fortran: smpicc -c shim.c, then smpif90 -o app.smpi app.f90 shim.o)
 */
#include <mpi.h>

#ifndef RANKMAP_DIMS_LIKE_MPICH
#define RANKMAP_DIMS_LIKE_MPICH 0
#endif

/* the most dimensions handled here (more go to SimGrid's own) */
#define SHIM_MAX_DIMS 64

int MPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}

void mpi_pcontrol_(int *level)   /* Fortran: no ierr */
{
    (void)level;
}

/* Open MPI: largest prime factors first, each into the smallest dimension so far */
static void dims_openmpi(int m, int k, int *out)
{
    for (int i = 0; i < k; i++) out[i] = 1;
    int f[32], nf = 0;
    for (int d = 2; (long long)d * d <= m; d++)
        while (m % d == 0) {
            f[nf++] = d;
            m /= d;
        }
    if (m > 1) f[nf++] = m;
    for (int j = nf - 1; j >= 0; j--) {          /* factors were found in increasing order */
        int low = 0;
        for (int i = 1; i < k; i++)
            if (out[i] < out[low]) low = i;
        out[low] *= f[j];
    }
    for (int i = 1; i < k; i++)                  /* non-increasing */
        for (int j = i; j > 0 && out[j] > out[j - 1]; j--) {
            int t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
}

/* MPICH: the non-increasing factorisation with the least spread, then the least sum */
struct search {
    int k, best_spread, best_sum, found, n_div;
    const int *div;                              /* the divisors of the product, decreasing */
    int cur[SHIM_MAX_DIMS], best[SHIM_MAX_DIMS];
};

static void dims_search(struct search *s, int rem, int at, int maxv, int sum)
{
    if (at == s->k - 1) {
        if (rem > maxv) return;
        s->cur[at] = rem;
        int spread = s->cur[0] - rem, total = sum + rem;
        if (!s->found || spread < s->best_spread ||
            (spread == s->best_spread && total < s->best_sum)) {
            s->found = 1;
            s->best_spread = spread;
            s->best_sum = total;
            for (int i = 0; i < s->k; i++) s->best[i] = s->cur[i];
        }
        return;
    }
    for (int j = 0; j < s->n_div; j++) {
        int d = s->div[j];
        if (d > maxv || d > rem || rem % d) continue;
        /* the remaining k - at - 1 factors are at most d each */
        long long cap = 1;
        for (int i = at + 1; i < s->k && cap < rem / d; i++) cap *= d;
        if (cap < rem / d) break;                /* a smaller d cannot cover the rest either */
        s->cur[at] = d;
        dims_search(s, rem / d, at + 1, d, sum + d);
    }
}

static void dims_mpich(int m, int k, int *out)
{
    int div[2048], n = 0, high[1024], nh = 0;    /* m < 2^31 has at most 1600 divisors */
    for (int d = 1; (long long)d * d <= m; d++)
        if (m % d == 0) {
            div[n++] = d;                        /* increasing */
            if (d != m / d) high[nh++] = m / d;  /* decreasing */
        }
    int all[2048], na = 0;
    for (int i = 0; i < nh; i++) all[na++] = high[i];
    for (int i = n - 1; i >= 0; i--) all[na++] = div[i];
    struct search s = {.k = k, .found = 0, .div = all, .n_div = na};
    dims_search(&s, m, 0, m, 0);
    for (int i = 0; i < k; i++) out[i] = s.best[i];
}

int MPI_Dims_create(int nnodes, int ndims, int dims[])
{
    if (nnodes <= 0 || ndims < 0 || ndims > SHIM_MAX_DIMS || (ndims > 0 && !dims))
        return PMPI_Dims_create(nnodes, ndims, dims);
    long long fixed = 1;
    int free_dims = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0) return PMPI_Dims_create(nnodes, ndims, dims);
        if (dims[i] == 0) free_dims++;
        else fixed *= dims[i];
    }
    if (fixed == 0 || nnodes % fixed) return PMPI_Dims_create(nnodes, ndims, dims);
    if (free_dims == 0)
        return fixed == nnodes ? MPI_SUCCESS : PMPI_Dims_create(nnodes, ndims, dims);
    int got[SHIM_MAX_DIMS];
    if (RANKMAP_DIMS_LIKE_MPICH)
        dims_mpich((int)(nnodes / fixed), free_dims, got);
    else
        dims_openmpi((int)(nnodes / fixed), free_dims, got);
    for (int i = 0, j = 0; i < ndims; i++)
        if (dims[i] == 0) dims[i] = got[j++];
    return MPI_SUCCESS;
}

void mpi_dims_create_(int *nnodes, int *ndims, int *dims, int *ierr)
{
    *ierr = MPI_Dims_create(*nnodes, *ndims, dims);
}
