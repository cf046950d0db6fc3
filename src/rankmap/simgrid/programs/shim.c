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
 *    lexicographically largest first (a search bounded by SEARCH_BUDGET calls: past it, on
 *    counts with thousands of divisors in tens of dimensions, the best found so far). Both
 *    were checked against the libraries on every process count up to 3000 in 1-5 dimensions. Fixed dimensions whose product does not
 *    divide the processes return MPI_ERR_DIMS; other invalid arguments (no processes,
 *    negative dimensions) go to SimGrid's own MPI_Dims_create (PMPI_Dims_create).
 *
 * Written by `rankmap simgrid shim -o shim.c [--like mpich]`; build:
 *   smpicc -O2 -o app.smpi app.c shim.c
 *   (C++: smpicxx -O2 -o app.smpi app.cpp shim.c;
 *    Fortran: smpicc -c shim.c, then smpif90 -o app.smpi app.f90 shim.o)
 */
#include <math.h>
#include <mpi.h>

#ifdef __cplusplus   /* a C++ build (smpicxx compiles a .c file as C++): C names */
extern "C" {
#endif

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
    long long budget;                            /* calls left (SEARCH_BUDGET) */
    const int *div;                              /* the divisors of the product, decreasing */
    int cur[SHIM_MAX_DIMS], best[SHIM_MAX_DIMS];
};

/* the most recursive calls of one search: beyond it (thousands of divisors in tens of
   dimensions) the best factorisation found so far is taken */
#define SEARCH_BUDGET 2000000LL

/* the largest x with x^r <= m (r >= 1) */
static int iroot(int m, int r)
{
    int x = (int)pow((double)m, 1.0 / r);
    while (x > 1) {                              /* x^r > m: one less */
        long long p = 1;
        for (int i = 0; i < r && p <= m; i++) p *= x;
        if (p <= m) break;
        x--;
    }
    for (;;) {                                   /* (x+1)^r <= m: one more */
        long long p = 1;
        for (int i = 0; i < r && p <= m; i++) p *= x + 1;
        if (p > m) return x < 1 ? 1 : x;
        x++;
    }
}

static void dims_search(struct search *s, int rem, int at, int maxv, int sum)
{
    if (s->budget-- <= 0) return;
    if (at == s->k - 1) {
        if (rem > maxv) return;
        s->cur[at] = rem;
        int spread = s->cur[0] - rem, total = sum + rem, larger = 0;
        if (s->found && spread == s->best_spread && total == s->best_sum)
            for (int i = 0; i < s->k && !larger; i++) {   /* lexicographically larger? */
                if (s->cur[i] != s->best[i]) {
                    larger = s->cur[i] > s->best[i];
                    break;
                }
            }
        if (!s->found || spread < s->best_spread ||
            (spread == s->best_spread && (total < s->best_sum || larger))) {
            s->found = 1;
            s->best_spread = spread;
            s->best_sum = total;
            for (int i = 0; i < s->k; i++) s->best[i] = s->cur[i];
        }
        return;
    }
    int left = s->k - at;                        /* factors still to choose, this one too */
    if (at > 0 && s->found) {
        /* the smallest of them is at most the left-th root of rem, and their sum at least
           left times it (the arithmetic mean is at least the geometric one) */
        int low = iroot(rem, left);
        if (s->cur[0] - low > s->best_spread) return;
        if (s->cur[0] - low == s->best_spread &&
            sum + left * pow((double)rem, 1.0 / left) > s->best_sum + 1e-9)
            return;
    }
    if (at == 0) {                               /* k >= 2 here (k = 1 is the leaf above) */
        /* the largest factor first, from the smallest it can be (at least the k-th root of
           the product) upwards: balanced factorisations are found first, and once the
           largest factor less the largest the smallest can then be exceeds the best spread,
           every larger one does too */
        for (int j = s->n_div - 1; j >= 0; j--) {
            int d = s->div[j];
            long long pw = 1;
            for (int i = 0; i < s->k && pw < rem; i++) pw *= d;
            if (pw < rem) continue;                  /* d^k < product: d too small */
            if (s->found && d - iroot(rem / d, s->k - 1) > s->best_spread) break;
            s->cur[0] = d;
            dims_search(s, rem / d, 1, d, d);
        }
        return;
    }
    for (int j = 0; j < s->n_div; j++) {
        int d = s->div[j];
        if (d > maxv || d > rem || rem % d) continue;
        /* the smallest factor is at most d: a spread of at least cur[0] - d, worse than the
           best found for this d and every smaller one */
        if (at > 0 && s->found && s->cur[0] - d > s->best_spread) break;
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
    struct search s;
    s.k = k;
    s.found = 0;
    s.best_spread = s.best_sum = 0;
    s.n_div = na;
    s.div = all;
    s.budget = SEARCH_BUDGET;
    dims_search(&s, m, 0, m, 0);
    for (int i = 0; i < k; i++) out[i] = s.best[i];
}

int MPI_Dims_create(int nnodes, int ndims, int dims[])
{
    if (ndims == 0) return MPI_SUCCESS;
    if (nnodes <= 0 || ndims < 0 || ndims > SHIM_MAX_DIMS || !dims)
        return PMPI_Dims_create(nnodes, ndims, dims);
    long long fixed = 1;
    int free_dims = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0) return PMPI_Dims_create(nnodes, ndims, dims);
        if (dims[i] == 0) free_dims++;
        else if ((fixed *= dims[i]) > nnodes) return MPI_ERR_DIMS;
    }
    /* fixed dimensions whose product does not divide the processes: an error (SimGrid's
       own would return dimensions of another product) */
    if (nnodes % fixed || (free_dims == 0 && fixed != nnodes)) return MPI_ERR_DIMS;
    if (free_dims == 0) return MPI_SUCCESS;
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

#ifdef __cplusplus
}
#endif
