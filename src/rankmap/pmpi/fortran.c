/* rankmap PMPI library: Fortran entry points (mpif.h and `use mpi`; gfortran/ifort mangling:
 * mpi_cart_create_, and the mpi_cart_create, mpi_cart_create__, MPI_CART_CREATE spellings;
 * `use mpi_f08`: mpi_cart_create_f08_, and for recorded routines MPICH's mpi_send_f08ts_).
 *
 * The MPI library's Fortran layer calls PMPI_* directly, so the C wrappers never see Fortran
 * calls; these do. The topology calls convert their arguments and take the C path of topo.c.
 * The recorded calls forward to the library's own pmpi_*_ Fortran routine (which keeps every
 * Fortran convention: MPI_BOTTOM, MPI_IN_PLACE, status arrays), with rm_in_fortran set so that
 * nothing is counted twice, then account the transfer unless the routine returned an error (a
 * call MPI refused sent nothing; with `use mpi_f08` and no ierror it cannot be told).
 */
#define _GNU_SOURCE
#include "rankmap_pmpi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef MPI_Fint F;

static void *real_fn(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) p = dlsym(RTLD_DEFAULT, name);
    if (!p) {
        rm_log("the MPI library has no Fortran routine %s; cannot continue", name);
        abort();
    }
    return p;
}

/* address of a Fortran sentinel (MPI_UNWEIGHTED, ...) in Open MPI or MPICH, NULL if unknown.
 * Open MPI's is the common block itself (mpi_fortran_unweighted_); MPICH's symbol
 * (MPIR_F_MPI_UNWEIGHTED) is a pointer its Fortran layer sets, at the first Fortran MPI call,
 * to the address of the common-block constant: its value is the sentinel (NULL before). */
static void *sentinel(const char *ompi, const char *mpich)
{
    void *p = dlsym(RTLD_DEFAULT, ompi);
    if (p) return p;
    void **q = dlsym(RTLD_DEFAULT, mpich);
    return q ? *q : NULL;
}

#define ALIASES(name, NAME, proto)                                     \
    void name proto __attribute__((alias(#name "_")));                 \
    void name##__ proto __attribute__((alias(#name "_")));             \
    void NAME proto __attribute__((alias(#name "_")));

/* which entry point the running wrapper was called through: 0 mpif.h / `use mpi`, 1 `use
 * mpi_f08` (NAME_f08_), 2 MPICH's `use mpi_f08` with a choice buffer (NAME_f08ts_) */
static __thread int f08_entry = 0;

/* the MPI library's own routine for pname ("pmpi_send_") called through `entry`: pname
 * itself, or the next definition of "mpi_send_f08_" / "mpi_send_f08ts_" (the library's own:
 * Open MPI's forward to the same code as pmpi_*_f08_, MPICH has no pmpi_*_f08_) */
static void *entry_routine(const char *pname, int entry)
{
    if (entry == 0) return real_fn(pname);
    char buf[96];
    snprintf(buf, sizeof buf, "%.*s%s", (int)strlen(pname) - 2, pname + 1,
             entry == 1 ? "_f08_" : "_f08ts_");
    void *p = dlsym(RTLD_NEXT, buf);  /* never RTLD_DEFAULT: that finds this library's own */
    if (!p) {
        rm_log("the MPI library has no Fortran routine %s; cannot continue", buf);
        abort();
    }
    return p;
}

#define FORWARD(fname, ...)                                            \
    do {                                                               \
        static void (*fn[3])() = {NULL, NULL, NULL};                   \
        int e_ = f08_entry;                                            \
        if (!fn[e_]) fn[e_] = (void (*)())entry_routine(fname, e_);    \
        rm_in_fortran++;                                               \
        f08_entry = 0;      /* a routine it calls is entered afresh */ \
        fn[e_](__VA_ARGS__);                                           \
        f08_entry = e_;                                                \
        rm_in_fortran--;                                               \
    } while (0)

/* a recorded routine's spellings, and its `use mpi_f08` entry points: NAME_f08_ (Open MPI,
 * and MPICH for routines without a choice buffer) and NAME_f08ts_ (MPICH's, whose buffer is
 * a C descriptor, passed on as it came); both take the other arguments as mpif.h does (a
 * TYPE(MPI_Comm) holds one INTEGER; a missing optional ierror is NULL, and the library's own
 * routine, which the wrapper forwards it to, expects that) */
#define F08_ENTRY(name, suffix, entry, proto, args)                    \
    void name##suffix proto                                            \
    {                                                                  \
        int saved_ = f08_entry;                                        \
        f08_entry = entry;                                             \
        name##_ args;                                                  \
        f08_entry = saved_;                                            \
    }
#define RECORDED_F08(name, NAME, proto, args)                          \
    ALIASES(name, NAME, proto)                                         \
    F08_ENTRY(name, _f08_, 1, proto, args)
#define RECORDED(name, NAME, proto, args)                              \
    RECORDED_F08(name, NAME, proto, args)                              \
    F08_ENTRY(name, _f08ts_, 2, proto, args)

/* `use mpi_f08`: the specific procedure (mpi_cart_create_f08_) takes the same arguments by
 * reference (a TYPE(MPI_Comm) holds one INTEGER; a missing optional ierror is NULL) */
#define F08(name, proto) void name##_f08_ proto __attribute__((alias(#name "_")));

static int *ints(const F *v, int n)
{
    int *out = malloc(((size_t)(n > 0 ? n : 0) + 1) * sizeof *out);
    for (int i = 0; out && i < n; i++) out[i] = (int)v[i];
    return out;
}

/* ---- topology creation ---- */

#define P_CART (F *comm, F *ndims, F *dims, F *periods, F *reorder, F *newcomm, F *ierr)
void mpi_cart_create_ P_CART
{
    int n = *ndims;
    int *d = ints(dims, n), *p = ints(periods, n);
    MPI_Comm out = MPI_COMM_NULL;
    int rc;
    if (!d || !p) {
        rc = PMPI_Cart_create(MPI_Comm_f2c(*comm), n, d, p, *reorder != 0, &out);
    } else {
        for (int i = 0; i < n; i++) p[i] = p[i] != 0;
        rc = rm_cart_create(MPI_Comm_f2c(*comm), n, d, p, *reorder != 0, &out);
    }
    free(d);
    free(p);
    *newcomm = MPI_Comm_c2f(out);
    if (ierr) *ierr = rc;
}
ALIASES(mpi_cart_create, MPI_CART_CREATE, P_CART)
F08(mpi_cart_create, P_CART)

#define P_GRAPH (F *comm, F *nnodes, F *index, F *edges, F *reorder, F *newcomm, F *ierr)
void mpi_graph_create_ P_GRAPH
{
    int n = *nnodes;
    int *ix = ints(index, n);
    int ne = (ix && n > 0) ? ix[n - 1] : 0;
    int *e = ints(edges, ne);
    MPI_Comm out = MPI_COMM_NULL;
    int rc = rm_graph_create(MPI_Comm_f2c(*comm), n, ix, e, *reorder != 0, &out);
    free(ix);
    free(e);
    *newcomm = MPI_Comm_c2f(out);
    if (ierr) *ierr = rc;
}
ALIASES(mpi_graph_create, MPI_GRAPH_CREATE, P_GRAPH)
F08(mpi_graph_create, P_GRAPH)

/* weights: the Fortran MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY sentinels become the C ones; NULL
 * *known when this MPI's sentinels cannot be found (then the call is forwarded unchanged).
 * Open MPI's mpi_f08 shares the mpif.h common blocks; MPICH's has sentinels of its own. */
static const int *c_weights(const F *w, int n, int **copy, int *known, int f08)
{
    void *unw = sentinel("mpi_fortran_unweighted_", "MPIR_F_MPI_UNWEIGHTED");
    void *empty = sentinel("mpi_fortran_weights_empty_", "MPIR_F_MPI_WEIGHTS_EMPTY");
    if (f08 && !dlsym(RTLD_DEFAULT, "mpi_fortran_unweighted_")) {
        unw = dlsym(RTLD_DEFAULT, "__mpi_f08_link_constants_MOD_mpi_unweighted");
        empty = dlsym(RTLD_DEFAULT, "__mpi_f08_link_constants_MOD_mpi_weights_empty");
    }
    *copy = NULL;
    *known = unw != NULL;
    if (!unw) return NULL;
    if ((const void *)w == unw) return MPI_UNWEIGHTED;
    if (empty && (const void *)w == empty) return MPI_WEIGHTS_EMPTY;
    *copy = ints(w, n);
    return *copy;
}

/* the MPI library's own routine: pmpi_NAME_ for mpif.h / `use mpi`, and for mpi_f08 the next
 * definition of NAME_f08_ (MPICH has no pmpi_*_f08_) */
static void (*own_routine(const char *name, int f08))()
{
    char buf[96];
    snprintf(buf, sizeof buf, f08 ? "%s_f08_" : "p%s_", name);
    if (!f08) return (void (*)())real_fn(buf);
    void *p = dlsym(RTLD_NEXT, buf);  /* never RTLD_DEFAULT: that finds this library's own */
    if (!p) {
        rm_log("the MPI library has no Fortran routine %s; cannot continue", buf);
        abort();
    }
    return (void (*)())p;
}

#define P_ADJ (F *comm, F *indeg, F *sources, F *sw, F *outdeg, F *dests, F *dw, F *info, \
               F *reorder, F *newcomm, F *ierr)
static void dist_graph_adjacent(int f08, F *comm, F *indeg, F *sources, F *sw, F *outdeg,
                                F *dests, F *dw, F *info, F *reorder, F *newcomm, F *ierr)
{
    int k1, k2, *c1, *c2;
    const int *csw = c_weights(sw, *indeg, &c1, &k1, f08);
    const int *cdw = c_weights(dw, *outdeg, &c2, &k2, f08);
    if (!k1 || !k2) {
        free(c1);
        free(c2);
        rm_in_fortran++;
        own_routine("mpi_dist_graph_create_adjacent", f08)(comm, indeg, sources, sw, outdeg,
                                                           dests, dw, info, reorder, newcomm,
                                                           ierr);
        rm_in_fortran--;
        return;
    }
    int *s = ints(sources, *indeg), *d = ints(dests, *outdeg);
    MPI_Comm out = MPI_COMM_NULL;
    int rc = rm_dist_graph_create_adjacent(MPI_Comm_f2c(*comm), *indeg, s, csw, *outdeg, d, cdw,
                                           MPI_Info_f2c(*info), *reorder != 0, &out);
    free(s); free(d); free(c1); free(c2);
    *newcomm = MPI_Comm_c2f(out);
    if (ierr) *ierr = rc;
}

void mpi_dist_graph_create_adjacent_ P_ADJ
{
    dist_graph_adjacent(0, comm, indeg, sources, sw, outdeg, dests, dw, info, reorder, newcomm,
                        ierr);
}
ALIASES(mpi_dist_graph_create_adjacent, MPI_DIST_GRAPH_CREATE_ADJACENT, P_ADJ)

void mpi_dist_graph_create_adjacent_f08_ P_ADJ
{
    dist_graph_adjacent(1, comm, indeg, sources, sw, outdeg, dests, dw, info, reorder, newcomm,
                        ierr);
}

#define P_DIST (F *comm, F *n, F *sources, F *degrees, F *dests, F *weights, F *info, \
                F *reorder, F *newcomm, F *ierr)
static void dist_graph(int f08, F *comm, F *n, F *sources, F *degrees, F *dests, F *weights,
                       F *info, F *reorder, F *newcomm, F *ierr)
{
    int ne = 0;
    for (int i = 0; i < *n; i++) ne += degrees[i];
    int known, *cw;
    const int *w = c_weights(weights, ne, &cw, &known, f08);
    if (!known) {
        rm_in_fortran++;
        own_routine("mpi_dist_graph_create", f08)(comm, n, sources, degrees, dests, weights,
                                                  info, reorder, newcomm, ierr);
        rm_in_fortran--;
        return;
    }
    int *s = ints(sources, *n), *g = ints(degrees, *n), *d = ints(dests, ne);
    MPI_Comm out = MPI_COMM_NULL;
    int rc = rm_dist_graph_create(MPI_Comm_f2c(*comm), *n, s, g, d, w, MPI_Info_f2c(*info),
                                  *reorder != 0, &out);
    free(s); free(g); free(d); free(cw);
    *newcomm = MPI_Comm_c2f(out);
    if (ierr) *ierr = rc;
}

void mpi_dist_graph_create_ P_DIST
{
    dist_graph(0, comm, n, sources, degrees, dests, weights, info, reorder, newcomm, ierr);
}
ALIASES(mpi_dist_graph_create, MPI_DIST_GRAPH_CREATE, P_DIST)

void mpi_dist_graph_create_f08_ P_DIST
{
    dist_graph(1, comm, n, sources, degrees, dests, weights, info, reorder, newcomm, ierr);
}

/* ---- recorded point-to-point sends ---- */

#define BYTES(c, t) rm_type_bytes(*(c), MPI_Type_f2c(*(t)))

#define P_SEND (void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr)
#define A_SEND (buf, count, type, dest, tag, comm, ierr)
#define SEND(name, NAME, pname)                                                  \
    void name##_ P_SEND                                                          \
    {                                                                            \
        FORWARD(pname, buf, count, type, dest, tag, comm, ierr);                 \
        if (!ierr || *ierr == MPI_SUCCESS)                                       \
            rm_record_send(MPI_Comm_f2c(*comm), *dest, BYTES(count, type));      \
    }                                                                            \
    RECORDED(name, NAME, P_SEND, A_SEND)
SEND(mpi_send, MPI_SEND, "pmpi_send_")
SEND(mpi_bsend, MPI_BSEND, "pmpi_bsend_")
SEND(mpi_ssend, MPI_SSEND, "pmpi_ssend_")
SEND(mpi_rsend, MPI_RSEND, "pmpi_rsend_")

#define P_ISEND (void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr)
#define A_ISEND (buf, count, type, dest, tag, comm, req, ierr)
#define ISEND(name, NAME, pname)                                                 \
    void name##_ P_ISEND                                                         \
    {                                                                            \
        FORWARD(pname, buf, count, type, dest, tag, comm, req, ierr);            \
        if (!ierr || *ierr == MPI_SUCCESS)                                       \
            rm_record_send(MPI_Comm_f2c(*comm), *dest, BYTES(count, type));      \
    }                                                                            \
    RECORDED(name, NAME, P_ISEND, A_ISEND)
ISEND(mpi_isend, MPI_ISEND, "pmpi_isend_")
ISEND(mpi_ibsend, MPI_IBSEND, "pmpi_ibsend_")
ISEND(mpi_issend, MPI_ISSEND, "pmpi_issend_")
ISEND(mpi_irsend, MPI_IRSEND, "pmpi_irsend_")

#define INIT(name, NAME, pname)                                                  \
    void name##_ P_ISEND                                                         \
    {                                                                            \
        FORWARD(pname, buf, count, type, dest, tag, comm, req, ierr);            \
        if (!ierr || *ierr == MPI_SUCCESS)   /* mpi_f08: an omitted ierror is NULL */ \
            rm_persistent_add(MPI_Request_f2c(*req), MPI_Comm_f2c(*comm), *dest, \
                              BYTES(count, type));                               \
    }                                                                            \
    RECORDED(name, NAME, P_ISEND, A_ISEND)
INIT(mpi_send_init, MPI_SEND_INIT, "pmpi_send_init_")
INIT(mpi_bsend_init, MPI_BSEND_INIT, "pmpi_bsend_init_")
INIT(mpi_ssend_init, MPI_SSEND_INIT, "pmpi_ssend_init_")
INIT(mpi_rsend_init, MPI_RSEND_INIT, "pmpi_rsend_init_")

#define P_START (F *req, F *ierr)
#define A_START (req, ierr)
void mpi_start_ P_START
{
    FORWARD("pmpi_start_", req, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_persistent_start(MPI_Request_f2c(*req));
}
RECORDED_F08(mpi_start, MPI_START, P_START, A_START)

#define P_STARTALL (F *count, F *reqs, F *ierr)
#define A_STARTALL (count, reqs, ierr)
void mpi_startall_ P_STARTALL
{
    FORWARD("pmpi_startall_", count, reqs, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    for (int i = 0; i < *count; i++) rm_persistent_start(MPI_Request_f2c(reqs[i]));
}
RECORDED_F08(mpi_startall, MPI_STARTALL, P_STARTALL, A_STARTALL)

void mpi_request_free_ P_START
{
    rm_persistent_remove(MPI_Request_f2c(*req));
    FORWARD("pmpi_request_free_", req, ierr);
}
RECORDED_F08(mpi_request_free, MPI_REQUEST_FREE, P_START, A_START)

#define P_SENDRECV (void *sbuf, F *scount, F *stype, F *dest, F *stag, void *rbuf, F *rcount, \
                    F *rtype, F *source, F *rtag, F *comm, F *status, F *ierr)
#define A_SENDRECV (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, \
                    status, ierr)
void mpi_sendrecv_ P_SENDRECV
{
    FORWARD("pmpi_sendrecv_", sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source,
            rtag, comm, status, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_record_send(MPI_Comm_f2c(*comm), *dest, BYTES(scount, stype));
}
RECORDED(mpi_sendrecv, MPI_SENDRECV, P_SENDRECV, A_SENDRECV)

#define P_REPLACE (void *buf, F *count, F *type, F *dest, F *stag, F *source, F *rtag, \
                   F *comm, F *status, F *ierr)
#define A_REPLACE (buf, count, type, dest, stag, source, rtag, comm, status, ierr)
void mpi_sendrecv_replace_ P_REPLACE
{
    FORWARD("pmpi_sendrecv_replace_", buf, count, type, dest, stag, source, rtag, comm, status,
            ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_record_send(MPI_Comm_f2c(*comm), *dest, BYTES(count, type));
}
RECORDED(mpi_sendrecv_replace, MPI_SENDRECV_REPLACE, P_REPLACE, A_REPLACE)

/* ---- recorded collectives (the same algorithms as the C wrappers) ---- */

#define P_BCAST (void *buf, F *count, F *type, F *root, F *comm, F *ierr)
#define A_BCAST (buf, count, type, root, comm, ierr)
void mpi_bcast_ P_BCAST
{
    FORWARD("pmpi_bcast_", buf, count, type, root, comm, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_from_root(MPI_Comm_f2c(*comm), *root, BYTES(count, type));
}
RECORDED(mpi_bcast, MPI_BCAST, P_BCAST, A_BCAST)

#define P_REDUCE (void *sbuf, void *rbuf, F *count, F *type, F *op, F *root, F *comm, F *ierr)
#define A_REDUCE (sbuf, rbuf, count, type, op, root, comm, ierr)
void mpi_reduce_ P_REDUCE
{
    FORWARD("pmpi_reduce_", sbuf, rbuf, count, type, op, root, comm, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_to_root(MPI_Comm_f2c(*comm), *root, BYTES(count, type));
}
RECORDED(mpi_reduce, MPI_REDUCE, P_REDUCE, A_REDUCE)

#define P_ALLREDUCE (void *sbuf, void *rbuf, F *count, F *type, F *op, F *comm, F *ierr)
#define A_ALLREDUCE (sbuf, rbuf, count, type, op, comm, ierr)
void mpi_allreduce_ P_ALLREDUCE
{
    FORWARD("pmpi_allreduce_", sbuf, rbuf, count, type, op, comm, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_allreduce(MPI_Comm_f2c(*comm), BYTES(count, type));
}
RECORDED(mpi_allreduce, MPI_ALLREDUCE, P_ALLREDUCE, A_ALLREDUCE)

#define P_ROOTED (void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *root, \
                  F *comm, F *ierr)
#define A_ROOTED (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, ierr)
void mpi_gather_ P_ROOTED
{
    FORWARD("pmpi_gather_", sbuf, scount, stype, rbuf, rcount, rtype, root, comm, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_to_root(MPI_Comm_f2c(*comm), *root, BYTES(scount, stype));
}
RECORDED(mpi_gather, MPI_GATHER, P_ROOTED, A_ROOTED)

void mpi_scatter_ P_ROOTED
{
    FORWARD("pmpi_scatter_", sbuf, scount, stype, rbuf, rcount, rtype, root, comm, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_scatter(MPI_Comm_f2c(*comm), *root, *scount, NULL, MPI_Type_f2c(*stype));
}
RECORDED(mpi_scatter, MPI_SCATTER, P_ROOTED, A_ROOTED)

#define P_ALL (void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *comm, \
               F *ierr)
#define A_ALL (sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr)
void mpi_allgather_ P_ALL
{
    FORWARD("pmpi_allgather_", sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_to_all(MPI_Comm_f2c(*comm), BYTES(rcount, rtype));
}
RECORDED(mpi_allgather, MPI_ALLGATHER, P_ALL, A_ALL)

void mpi_alltoall_ P_ALL
{
    FORWARD("pmpi_alltoall_", sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_personal(MPI_Comm_f2c(*comm), *rcount, NULL, MPI_Type_f2c(*rtype), NULL);
}
RECORDED(mpi_alltoall, MPI_ALLTOALL, P_ALL, A_ALL)

/* whether a choice buffer argument is MPI_IN_PLACE: mpif.h, `use mpi` and Open MPI's mpi_f08
 * pass the sentinel's address; MPICH's mpi_f08 (NAME_f08ts_) passes a C descriptor, whose
 * first member (base_addr) is the address of its own sentinel MPIR_F08_MPI_IN_PLACE */
static int is_in_place(void *buf)
{
    if (f08_entry == 2) {
        void *f08 = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_IN_PLACE");
        return f08 && buf && *(void **)buf == f08;
    }
    void *in_place = sentinel("mpi_fortran_in_place_", "MPIR_F_MPI_IN_PLACE");
    return in_place && buf == in_place;
}

#define P_ALLTOALLV (void *sbuf, F *scounts, F *sdispls, F *stype, void *rbuf, F *rcounts, \
                     F *rdispls, F *rtype, F *comm, F *ierr)
#define A_ALLTOALLV (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, ierr)
void mpi_alltoallv_ P_ALLTOALLV
{
    FORWARD("pmpi_alltoallv_", sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype,
            comm, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    int in = is_in_place(sbuf), n = 0;
    MPI_Comm c = MPI_Comm_f2c(*comm);
    PMPI_Comm_size(c, &n);
    int *counts = ints(in ? rcounts : scounts, n);
    if (counts) rm_coll_personal(c, 0, counts, MPI_Type_f2c(in ? *rtype : *stype), NULL);
    free(counts);
}
RECORDED(mpi_alltoallv, MPI_ALLTOALLV, P_ALLTOALLV, A_ALLTOALLV)

/* ---- the other collectives, and the nonblocking forms of all (same transfers) ---- */

static int f_rank(MPI_Comm c)
{
    int r = 0;
    PMPI_Comm_rank(c, &r);
    return r;
}

static int f_size(MPI_Comm c)
{
    int n = 0;
    PMPI_Comm_size(c, &n);
    return n;
}

#define P_IBCAST (void *buf, F *count, F *type, F *root, F *comm, F *req, F *ierr)
#define A_IBCAST (buf, count, type, root, comm, req, ierr)
void mpi_ibcast_ P_IBCAST
{
    FORWARD("pmpi_ibcast_", buf, count, type, root, comm, req, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_from_root(MPI_Comm_f2c(*comm), *root, BYTES(count, type));
}
RECORDED(mpi_ibcast, MPI_IBCAST, P_IBCAST, A_IBCAST)

#define P_IREDUCE (void *sbuf, void *rbuf, F *count, F *type, F *op, F *root, F *comm, F *req, \
                   F *ierr)
#define A_IREDUCE (sbuf, rbuf, count, type, op, root, comm, req, ierr)
void mpi_ireduce_ P_IREDUCE
{
    FORWARD("pmpi_ireduce_", sbuf, rbuf, count, type, op, root, comm, req, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_to_root(MPI_Comm_f2c(*comm), *root, BYTES(count, type));
}
RECORDED(mpi_ireduce, MPI_IREDUCE, P_IREDUCE, A_IREDUCE)

/* (sbuf, rbuf, count, type, op, comm[, req], ierr): allreduce, scan, exscan */
#define P_RED (void *sbuf, void *rbuf, F *count, F *type, F *op, F *comm, F *ierr)
#define A_RED (sbuf, rbuf, count, type, op, comm, ierr)
#define P_IRED (void *sbuf, void *rbuf, F *count, F *type, F *op, F *comm, F *req, F *ierr)
#define A_IRED (sbuf, rbuf, count, type, op, comm, req, ierr)
#define REDUCING(name, NAME, pname, record)                                      \
    void name##_ P_RED                                                           \
    {                                                                            \
        FORWARD(pname, sbuf, rbuf, count, type, op, comm, ierr);                 \
        if (!ierr || *ierr == MPI_SUCCESS)                                       \
            record(MPI_Comm_f2c(*comm), BYTES(count, type));                     \
    }                                                                            \
    RECORDED(name, NAME, P_RED, A_RED)
#define IREDUCING(name, NAME, pname, record)                                     \
    void name##_ P_IRED                                                          \
    {                                                                            \
        FORWARD(pname, sbuf, rbuf, count, type, op, comm, req, ierr);            \
        if (!ierr || *ierr == MPI_SUCCESS)                                       \
            record(MPI_Comm_f2c(*comm), BYTES(count, type));                     \
    }                                                                            \
    RECORDED(name, NAME, P_IRED, A_IRED)
IREDUCING(mpi_iallreduce, MPI_IALLREDUCE, "pmpi_iallreduce_", rm_coll_allreduce)
REDUCING(mpi_scan, MPI_SCAN, "pmpi_scan_", rm_coll_scan)
IREDUCING(mpi_iscan, MPI_ISCAN, "pmpi_iscan_", rm_coll_scan)
REDUCING(mpi_exscan, MPI_EXSCAN, "pmpi_exscan_", rm_coll_scan)
IREDUCING(mpi_iexscan, MPI_IEXSCAN, "pmpi_iexscan_", rm_coll_scan)

/* reduce_scatter_block (rcount) and reduce_scatter (rcounts, one per process) */
void mpi_reduce_scatter_block_ P_RED
{
    FORWARD("pmpi_reduce_scatter_block_", sbuf, rbuf, count, type, op, comm, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_personal(MPI_Comm_f2c(*comm), *count, NULL, MPI_Type_f2c(*type), NULL);
}
RECORDED(mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, P_RED, A_RED)

void mpi_ireduce_scatter_block_ P_IRED
{
    FORWARD("pmpi_ireduce_scatter_block_", sbuf, rbuf, count, type, op, comm, req, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_personal(MPI_Comm_f2c(*comm), *count, NULL, MPI_Type_f2c(*type), NULL);
}
RECORDED(mpi_ireduce_scatter_block, MPI_IREDUCE_SCATTER_BLOCK, P_IRED, A_IRED)

static void f_personal(F *comm, const F *counts, F *type)
{
    if (!rm_recording()) return;
    MPI_Comm c = MPI_Comm_f2c(*comm);
    int *n = ints(counts, f_size(c));
    if (n) rm_coll_personal(c, 0, n, MPI_Type_f2c(*type), NULL);
    free(n);
}

void mpi_reduce_scatter_ P_RED
{
    FORWARD("pmpi_reduce_scatter_", sbuf, rbuf, count, type, op, comm, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    f_personal(comm, count, type);    /* count: the array rcounts */
}
RECORDED(mpi_reduce_scatter, MPI_REDUCE_SCATTER, P_RED, A_RED)

void mpi_ireduce_scatter_ P_IRED
{
    FORWARD("pmpi_ireduce_scatter_", sbuf, rbuf, count, type, op, comm, req, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    f_personal(comm, count, type);
}
RECORDED(mpi_ireduce_scatter, MPI_IREDUCE_SCATTER, P_IRED, A_IRED)

#define P_IROOTED (void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *root, \
                   F *comm, F *req, F *ierr)
#define A_IROOTED (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req, ierr)
void mpi_igather_ P_IROOTED
{
    FORWARD("pmpi_igather_", sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_to_root(MPI_Comm_f2c(*comm), *root, BYTES(scount, stype));
}
RECORDED(mpi_igather, MPI_IGATHER, P_IROOTED, A_IROOTED)

void mpi_iscatter_ P_IROOTED
{
    FORWARD("pmpi_iscatter_", sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_scatter(MPI_Comm_f2c(*comm), *root, *scount, NULL, MPI_Type_f2c(*stype));
}
RECORDED(mpi_iscatter, MPI_ISCATTER, P_IROOTED, A_IROOTED)

#define P_GATHERV (void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts, F *displs, \
                   F *rtype, F *root, F *comm, F *ierr)
#define A_GATHERV (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, ierr)
#define P_IGATHERV (void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts, F *displs, \
                    F *rtype, F *root, F *comm, F *req, F *ierr)
#define A_IGATHERV (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, req, ierr)
void mpi_gatherv_ P_GATHERV
{
    FORWARD("pmpi_gatherv_", sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm,
            ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_to_root(MPI_Comm_f2c(*comm), *root, BYTES(scount, stype));
}
RECORDED(mpi_gatherv, MPI_GATHERV, P_GATHERV, A_GATHERV)

void mpi_igatherv_ P_IGATHERV
{
    FORWARD("pmpi_igatherv_", sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm,
            req, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_to_root(MPI_Comm_f2c(*comm), *root, BYTES(scount, stype));
}
RECORDED(mpi_igatherv, MPI_IGATHERV, P_IGATHERV, A_IGATHERV)

/* the root's scounts, one per process */
static void f_scatterv(F *comm, F *root, const F *scounts, F *stype)
{
    if (!rm_recording()) return;
    MPI_Comm c = MPI_Comm_f2c(*comm);
    if (f_rank(c) != *root) return;
    int *n = ints(scounts, f_size(c));
    if (n) rm_coll_scatter(c, *root, 0, n, MPI_Type_f2c(*stype));
    free(n);
}

#define P_SCATTERV (void *sbuf, F *scounts, F *displs, F *stype, void *rbuf, F *rcount, \
                    F *rtype, F *root, F *comm, F *ierr)
#define A_SCATTERV (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, ierr)
#define P_ISCATTERV (void *sbuf, F *scounts, F *displs, F *stype, void *rbuf, F *rcount, \
                     F *rtype, F *root, F *comm, F *req, F *ierr)
#define A_ISCATTERV (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, req, ierr)
void mpi_scatterv_ P_SCATTERV
{
    FORWARD("pmpi_scatterv_", sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm,
            ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    f_scatterv(comm, root, scounts, stype);
}
RECORDED(mpi_scatterv, MPI_SCATTERV, P_SCATTERV, A_SCATTERV)

void mpi_iscatterv_ P_ISCATTERV
{
    FORWARD("pmpi_iscatterv_", sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm,
            req, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    f_scatterv(comm, root, scounts, stype);
}
RECORDED(mpi_iscatterv, MPI_ISCATTERV, P_ISCATTERV, A_ISCATTERV)

#define P_IALL (void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *comm, \
                F *req, F *ierr)
#define A_IALL (sbuf, scount, stype, rbuf, rcount, rtype, comm, req, ierr)
void mpi_iallgather_ P_IALL
{
    FORWARD("pmpi_iallgather_", sbuf, scount, stype, rbuf, rcount, rtype, comm, req, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_to_all(MPI_Comm_f2c(*comm), BYTES(rcount, rtype));
}
RECORDED(mpi_iallgather, MPI_IALLGATHER, P_IALL, A_IALL)

void mpi_ialltoall_ P_IALL
{
    FORWARD("pmpi_ialltoall_", sbuf, scount, stype, rbuf, rcount, rtype, comm, req, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_personal(MPI_Comm_f2c(*comm), *rcount, NULL, MPI_Type_f2c(*rtype), NULL);
}
RECORDED(mpi_ialltoall, MPI_IALLTOALL, P_IALL, A_IALL)

/* neighbourhood collectives: block i to out-neighbour i */
#define NEIGHBOR(name, NAME, pname)                                              \
    void name##_ P_ALL                                                           \
    {                                                                            \
        FORWARD(pname, sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr);    \
        if (!ierr || *ierr == MPI_SUCCESS)                                       \
            rm_coll_neighbors(MPI_Comm_f2c(*comm), *scount,                      \
                              NULL, MPI_Type_f2c(*stype), NULL);                 \
    }                                                                            \
    RECORDED(name, NAME, P_ALL, A_ALL)
#define INEIGHBOR(name, NAME, pname)                                             \
    void name##_ P_IALL                                                          \
    {                                                                            \
        FORWARD(pname, sbuf, scount, stype, rbuf, rcount, rtype, comm, req, ierr); \
        if (!ierr || *ierr == MPI_SUCCESS)                                       \
            rm_coll_neighbors(MPI_Comm_f2c(*comm), *scount,                      \
                              NULL, MPI_Type_f2c(*stype), NULL);                 \
    }                                                                            \
    RECORDED(name, NAME, P_IALL, A_IALL)
NEIGHBOR(mpi_neighbor_allgather, MPI_NEIGHBOR_ALLGATHER, "pmpi_neighbor_allgather_")
INEIGHBOR(mpi_ineighbor_allgather, MPI_INEIGHBOR_ALLGATHER, "pmpi_ineighbor_allgather_")
NEIGHBOR(mpi_neighbor_alltoall, MPI_NEIGHBOR_ALLTOALL, "pmpi_neighbor_alltoall_")
INEIGHBOR(mpi_ineighbor_alltoall, MPI_INEIGHBOR_ALLTOALL, "pmpi_ineighbor_alltoall_")

#define P_ALLGATHERV (void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts, F *displs, \
                      F *rtype, F *comm, F *ierr)
#define A_ALLGATHERV (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, ierr)
#define P_IALLGATHERV (void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts, F *displs, \
                       F *rtype, F *comm, F *req, F *ierr)
#define A_IALLGATHERV (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req, ierr)
/* this process's block is rcounts[rank] (which also covers MPI_IN_PLACE) */
static void f_allgatherv(F *comm, const F *rcounts, F *rtype)
{
    if (!rm_recording()) return;
    MPI_Comm c = MPI_Comm_f2c(*comm);
    rm_coll_to_all(c, rm_type_bytes(rcounts[f_rank(c)], MPI_Type_f2c(*rtype)));
}

void mpi_allgatherv_ P_ALLGATHERV
{
    FORWARD("pmpi_allgatherv_", sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    f_allgatherv(comm, rcounts, rtype);
}
RECORDED(mpi_allgatherv, MPI_ALLGATHERV, P_ALLGATHERV, A_ALLGATHERV)

void mpi_iallgatherv_ P_IALLGATHERV
{
    FORWARD("pmpi_iallgatherv_", sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req,
            ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    f_allgatherv(comm, rcounts, rtype);
}
RECORDED(mpi_iallgatherv, MPI_IALLGATHERV, P_IALLGATHERV, A_IALLGATHERV)

void mpi_neighbor_allgatherv_ P_ALLGATHERV
{
    FORWARD("pmpi_neighbor_allgatherv_", sbuf, scount, stype, rbuf, rcounts, displs, rtype,
            comm, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_neighbors(MPI_Comm_f2c(*comm), *scount, NULL, MPI_Type_f2c(*stype), NULL);
}
RECORDED(mpi_neighbor_allgatherv, MPI_NEIGHBOR_ALLGATHERV, P_ALLGATHERV, A_ALLGATHERV)

void mpi_ineighbor_allgatherv_ P_IALLGATHERV
{
    FORWARD("pmpi_ineighbor_allgatherv_", sbuf, scount, stype, rbuf, rcounts, displs, rtype,
            comm, req, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    rm_coll_neighbors(MPI_Comm_f2c(*comm), *scount, NULL, MPI_Type_f2c(*stype), NULL);
}
RECORDED(mpi_ineighbor_allgatherv, MPI_INEIGHBOR_ALLGATHERV, P_IALLGATHERV, A_IALLGATHERV)

#define P_IALLTOALLV (void *sbuf, F *scounts, F *sdispls, F *stype, void *rbuf, F *rcounts, \
                      F *rdispls, F *rtype, F *comm, F *req, F *ierr)
#define A_IALLTOALLV (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req, \
                      ierr)
void mpi_ialltoallv_ P_IALLTOALLV
{
    FORWARD("pmpi_ialltoallv_", sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype,
            comm, req, ierr);
    if (ierr && *ierr != MPI_SUCCESS) return;
    int in = is_in_place(sbuf);
    if (rm_recording()) f_personal(comm, in ? rcounts : scounts, in ? rtype : stype);
}
RECORDED(mpi_ialltoallv, MPI_IALLTOALLV, P_IALLTOALLV, A_IALLTOALLV)

/* ---- phases and the end of the run ---- */

#define P_PCONTROL (F *level)
#define A_PCONTROL (level)
void mpi_pcontrol_ P_PCONTROL
{
    if (rm_recording()) rm_record_phase(*level);
    FORWARD("pmpi_pcontrol_", level);
}
RECORDED_F08(mpi_pcontrol, MPI_PCONTROL, P_PCONTROL, A_PCONTROL)

#define P_FINALIZE (F *ierr)
#define A_FINALIZE (ierr)
void mpi_finalize_ P_FINALIZE
{
    rm_record_finalize();
    FORWARD("pmpi_finalize_", ierr);
}
RECORDED_F08(mpi_finalize, MPI_FINALIZE, P_FINALIZE, A_FINALIZE)
