/* rankmap PMPI library: recording who sends how much to whom (RANKMAP_RECORD=FILE).
 *
 * Every process keeps a hash map (phase, destination) -> (bytes, messages) of what it sent,
 * destinations as MPI_COMM_WORLD ranks (translated per communicator with
 * MPI_Group_translate_ranks, cached in a communicator attribute, one entry per partner).
 * MPI_Pcontrol starts a new phase. At MPI_Finalize the maps are gathered to world rank 0, which
 * folds identical phases into the first of them (their bytes and messages add up) and
 * writes FILE atomically (temporary file + rename): the graph CSV src,dst,bytes,messages,phase
 * or, with RANKMAP_RECORD_FORMAT=mat, the dense N x N matrix of bytes over the whole run.
 *
 * Collectives are recorded as the logical transfers of one algorithm each (README: "What is
 * recorded"); RANKMAP_RECORD_COLLECTIVES=0 (or no, false, off) leaves them out. Transfers to
 * oneself are not recorded. A value of either variable the library does not know is reported by
 * rank 0 at MPI_Finalize (the recording is still written: CSV, collectives in). Processes started
 * by MPI_Comm_spawn write nothing: the file is the launched program's.
 */
#define _GNU_SOURCE
#include "rankmap_pmpi.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- state ---- */

typedef struct {
    int32_t phase, dst;  /* dst < 0: empty slot */
    uint64_t bytes, msgs;
    double frac;         /* bytes below one carried between calls (allreduce shares), [0, 1) */
} entry_t;

/* one lock over the recording's state: under MPI_THREAD_MULTIPLE several threads send at
 * once (the counters lost bytes, and the communicator cache was read while being filled);
 * recursive, as MPI may call the attribute delete callback from inside a locked call */
static pthread_mutex_t rec_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
#define LOCKED(call)                      \
    do {                                  \
        if (!rm_recording()) break;       \
        pthread_mutex_lock(&rec_lock);    \
        call;                             \
        pthread_mutex_unlock(&rec_lock);  \
    } while (0)

static int rec_state = -1;  /* -1 unknown, 0 off, 1 on */
static int rec_collectives = 1;
static int cur_phase = 0;
static entry_t *tab = NULL;
static size_t tab_cap = 0, tab_used = 0;
static int rec_failed = 0;  /* out of memory: the recording is incomplete */
static int world_rank = -1;

/* whether this process was started by MPI_Comm_spawn and is still connected to its parent
 * (one that disconnected before MPI_Finalize is not told apart: README) */
static int spawned(void)
{
    int init = 0, fin = 0;
    MPI_Comm parent = MPI_COMM_NULL;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (init && !fin) PMPI_Comm_get_parent(&parent);
    return parent != MPI_COMM_NULL;
}

int rm_recording(void)
{
    if (rec_state < 0) {
        rec_state = rm_env("RANKMAP_RECORD") != NULL;
        const char *c = rm_env("RANKMAP_RECORD_COLLECTIVES");
        rec_collectives = !(c && rm_yes_no(c) == 0);
    }
    return rec_state;
}

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static entry_t *slot(int32_t phase, int32_t dst)
{
    if (tab_used * 2 >= tab_cap) {
        size_t ncap = tab_cap ? 2 * tab_cap : 64;
        entry_t *nt = malloc(ncap * sizeof *nt);
        if (!nt) return NULL;
        for (size_t i = 0; i < ncap; i++) nt[i].dst = -1;
        for (size_t i = 0; i < tab_cap; i++) {
            if (tab[i].dst < 0) continue;
            size_t h = mix(((uint64_t)(uint32_t)tab[i].phase << 32) | (uint32_t)tab[i].dst) &
                       (ncap - 1);
            while (nt[h].dst >= 0) h = (h + 1) & (ncap - 1);
            nt[h] = tab[i];
        }
        free(tab);
        tab = nt;
        tab_cap = ncap;
    }
    size_t h = mix(((uint64_t)(uint32_t)phase << 32) | (uint32_t)dst) & (tab_cap - 1);
    while (tab[h].dst >= 0) {
        if (tab[h].dst == dst && tab[h].phase == phase) return &tab[h];
        h = (h + 1) & (tab_cap - 1);
    }
    tab[h].dst = dst;
    tab[h].phase = phase;
    tab[h].bytes = tab[h].msgs = 0;
    tab[h].frac = 0.0;
    tab_used++;
    return &tab[h];
}

/* ---- rank translation, cached per communicator ---- */

typedef struct {
    int identity;        /* ranks are MPI_COMM_WORLD ranks */
    int inter;           /* intercommunicator: peers are in the remote group */
    MPI_Group group;     /* the peers' group */
    int size;            /* its size: a peer rank at or past it is no process */
    int *keys, *vals;    /* open addressing: rank -> world rank (key -1: empty) */
    size_t cap, used;
} comm_info_t;

static int keyval = MPI_KEYVAL_INVALID;
static MPI_Group world_group = MPI_GROUP_NULL;
static MPI_Comm last_comm = MPI_COMM_NULL;  /* one-entry cache in front of the attribute */
static comm_info_t *last_info = NULL;

static int info_delete(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)kv; (void)extra;
    pthread_mutex_lock(&rec_lock);
    comm_info_t *ci = attr;
    if (ci == last_info || comm == last_comm) {
        last_info = NULL;
        last_comm = MPI_COMM_NULL;
    }
    if (ci) {
        if (ci->group != MPI_GROUP_NULL) PMPI_Group_free(&ci->group);
        free(ci->keys);
        free(ci->vals);
        free(ci);
    }
    pthread_mutex_unlock(&rec_lock);
    return MPI_SUCCESS;
}

static comm_info_t *comm_info(MPI_Comm comm)
{
    if (comm == last_comm && last_info) return last_info;
    if (comm == MPI_COMM_NULL) return NULL;
    if (keyval == MPI_KEYVAL_INVALID) {
        if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, info_delete, &keyval, NULL) !=
            MPI_SUCCESS)
            return NULL;
        PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
        PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    }
    comm_info_t *ci = NULL;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &ci, &found) != MPI_SUCCESS) return NULL;
    if (!found || !ci) {
        ci = calloc(1, sizeof *ci);
        if (!ci) return NULL;
        PMPI_Comm_test_inter(comm, &ci->inter);
        if (ci->inter) PMPI_Comm_remote_group(comm, &ci->group);
        else PMPI_Comm_group(comm, &ci->group);
        PMPI_Group_size(ci->group, &ci->size);
        int cmp = MPI_UNEQUAL;
        PMPI_Group_compare(ci->group, world_group, &cmp);
        ci->identity = cmp == MPI_IDENT;
        if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF) {
            /* predefined communicators: keep the entry in our own cache only */
        }
        PMPI_Comm_set_attr(comm, keyval, ci);
    }
    last_comm = comm;
    last_info = ci;
    return ci;
}

static int to_world(comm_info_t *ci, int rank)
{
    if (rank < 0 || rank >= ci->size) return -1;  /* not a process of the group */
    if (ci->identity) return rank;
    if (ci->used * 2 >= ci->cap) {
        size_t ncap = ci->cap ? 2 * ci->cap : 16;
        int *nk = malloc(ncap * sizeof *nk), *nv = malloc(ncap * sizeof *nv);
        if (!nk || !nv) {
            free(nk); free(nv);
            return -1;
        }
        for (size_t i = 0; i < ncap; i++) nk[i] = -1;
        for (size_t i = 0; i < ci->cap; i++) {
            if (ci->keys[i] < 0) continue;
            size_t h = mix((uint64_t)ci->keys[i]) & (ncap - 1);
            while (nk[h] >= 0) h = (h + 1) & (ncap - 1);
            nk[h] = ci->keys[i];
            nv[h] = ci->vals[i];
        }
        free(ci->keys); free(ci->vals);
        ci->keys = nk; ci->vals = nv; ci->cap = ncap;
    }
    size_t h = mix((uint64_t)rank) & (ci->cap - 1);
    while (ci->keys[h] >= 0) {
        if (ci->keys[h] == rank) return ci->vals[h];
        h = (h + 1) & (ci->cap - 1);
    }
    int w = MPI_UNDEFINED;
    PMPI_Group_translate_ranks(ci->group, 1, &rank, world_group, &w);
    ci->keys[h] = rank;
    ci->vals[h] = w == MPI_UNDEFINED ? -1 : w;  /* a process outside MPI_COMM_WORLD */
    ci->used++;
    return ci->vals[h];
}

int64_t rm_type_bytes(int count, MPI_Datatype type)
{
    MPI_Count size = 0;  /* _x: a type of 2 GiB or more has no int size (MPI_UNDEFINED) */
    if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
    if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0) return 0;
    return (int64_t)count * (int64_t)size;
}

/* the entry of (this phase, peer's world rank); NULL for oneself, an unknown peer or no memory
 * (then the recording is marked incomplete) */
static entry_t *entry_for(comm_info_t *ci, int peer)
{
    int w = to_world(ci, peer);
    if (w < 0 || w == world_rank) return NULL;
    entry_t *e = slot(cur_phase, w);
    if (!e) rec_failed = 1;
    return e;
}

static void add(comm_info_t *ci, int peer, int64_t nbytes, uint64_t msgs)
{
    entry_t *e = entry_for(ci, peer);
    if (!e) return;
    e->bytes += (uint64_t)(nbytes > 0 ? nbytes : 0);
    e->msgs += msgs;
}

/* add() of a share that need not be whole bytes (nbytes >= 0): the whole bytes now, the
 * fraction carried in the entry until it makes a byte (and rounded once when the recording is
 * written) */
static void add_share(comm_info_t *ci, int peer, double nbytes, uint64_t msgs)
{
    entry_t *e = entry_for(ci, peer);
    if (!e) return;
    double whole = (double)(int64_t)nbytes;  /* truncation is the floor of a positive number */
    e->bytes += (uint64_t)whole;
    e->msgs += msgs;
    e->frac += nbytes - whole;
    if (e->frac >= 1.0) {
        e->bytes += 1;
        e->frac -= 1.0;
    }
}

static void record_send_unlocked(MPI_Comm comm, int peer, int64_t nbytes)
{
    if (!rm_recording() || rm_in_fortran || peer < 0 || peer == MPI_PROC_NULL) return;
    comm_info_t *ci = comm_info(comm);
    if (ci) add(ci, peer, nbytes, 1);
}

void rm_record_send(MPI_Comm comm, int peer, int64_t nbytes)
{
    LOCKED(record_send_unlocked(comm, peer, nbytes));
}

static void record_phase_unlocked(int level)
{
    (void)level;
    cur_phase++;
}

void rm_record_phase(int level)
{
    LOCKED(record_phase_unlocked(level));
}

/* ---- persistent send requests: request -> (world destination, bytes) ----
 * An open-addressing hash table keyed by the request handle (a pointer in Open MPI, an int in
 * MPICH; its bytes are hashed): MPI_Start costs the same with 16 or 10,000 persistent
 * requests alive (a flat list walked on every start made it 3.6 us at 8,192). */

typedef struct {
    MPI_Request req;
    int state;               /* 0 empty, 1 used, 2 removed (probing goes on past it) */
    int dst;
    int64_t bytes;
} preq_t;
static preq_t *ptab = NULL;
static size_t pcap = 0, pfill = 0, pused = 0;    /* slots, used + removed, used */

static size_t req_hash(MPI_Request r)
{
    uint64_t k = 0;
    memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k;
}

static preq_t *preq_find(MPI_Request r)
{
    if (!pcap) return NULL;
    size_t mask = pcap - 1;
    for (size_t i = req_hash(r) & mask;; i = (i + 1) & mask) {
        if (ptab[i].state == 0) return NULL;
        if (ptab[i].state == 1 && ptab[i].req == r) return &ptab[i];
    }
}

/* the slot for a new entry: the first removed or empty one on r's probe path */
static preq_t *preq_slot(MPI_Request r)
{
    size_t mask = pcap - 1;
    preq_t *first_removed = NULL;
    for (size_t i = req_hash(r) & mask;; i = (i + 1) & mask) {
        if (ptab[i].state == 0) return first_removed ? first_removed : &ptab[i];
        if (ptab[i].state == 2 && !first_removed) first_removed = &ptab[i];
    }
}

/* rehash into a table with room (twice as big when over half is in use): 0, or -1 */
static int preq_rehash(void)
{
    size_t nc = pcap == 0 ? 64 : (pused * 2 >= pcap ? 2 * pcap : pcap);
    preq_t *old = ptab;
    size_t oc = pcap;
    preq_t *nt = calloc(nc, sizeof *nt);
    if (!nt) return -1;
    ptab = nt;
    pcap = nc;
    pfill = pused = 0;
    for (size_t i = 0; i < oc; i++)
        if (old[i].state == 1) {
            *preq_slot(old[i].req) = old[i];
            pfill++;
            pused++;
        }
    free(old);
    return 0;
}

static void persistent_add_unlocked(MPI_Request req, MPI_Comm comm, int peer, int64_t nbytes)
{
    if (!rm_recording() || rm_in_fortran || peer < 0 || peer == MPI_PROC_NULL) return;
    comm_info_t *ci = comm_info(comm);
    if (!ci) return;
    int w = to_world(ci, peer);
    if (w < 0) return;
    preq_t *e = preq_find(req);     /* a handle the MPI library gave again: the new request */
    if (e) {
        e->dst = w;
        e->bytes = nbytes;
        return;
    }
    if ((pfill + 1) * 10 > pcap * 7 && preq_rehash() != 0) {
        rec_failed = 1;
        return;
    }
    e = preq_slot(req);
    if (e->state == 0) pfill++;
    *e = (preq_t){req, 1, w, nbytes};
    pused++;
}

void rm_persistent_add(MPI_Request req, MPI_Comm comm, int peer, int64_t nbytes)
{
    LOCKED(persistent_add_unlocked(req, comm, peer, nbytes));
}

static void persistent_start_unlocked(MPI_Request req)
{
    if (!rm_recording() || rm_in_fortran || req == MPI_REQUEST_NULL) return;
    preq_t *p = preq_find(req);     /* NULL: a persistent receive, or not recorded */
    if (!p || p->dst == world_rank) return;
    entry_t *e = slot(cur_phase, p->dst);
    if (!e) {
        rec_failed = 1;
        return;
    }
    e->bytes += (uint64_t)p->bytes;
    e->msgs++;
}

void rm_persistent_start(MPI_Request req)
{
    LOCKED(persistent_start_unlocked(req));
}

static void persistent_remove_unlocked(MPI_Request req)
{
    preq_t *p = preq_find(req);
    if (p) {
        p->state = 2;
        pused--;
    }
}

void rm_persistent_remove(MPI_Request req)
{
    LOCKED(persistent_remove_unlocked(req));
}

/* ---- collectives: the logical transfers of one algorithm each ---- */

/* communicator info for a collective, or NULL when it is not recorded */
static comm_info_t *coll_info(MPI_Comm comm, int *me, int *n)
{
    if (!rm_recording() || !rec_collectives || rm_in_fortran) return NULL;
    comm_info_t *ci = comm_info(comm);
    if (!ci || ci->inter) return NULL;  /* intercommunicator collectives: not recorded */
    PMPI_Comm_rank(comm, me);
    PMPI_Comm_size(comm, n);
    return ci;
}

/* root sends `bytes` to every other process (Bcast) */
static void coll_from_root_unlocked(MPI_Comm comm, int root, int64_t bytes)
{
    int me, n;
    comm_info_t *ci = coll_info(comm, &me, &n);
    if (!ci || me != root) return;
    for (int r = 0; r < n; r++)
        if (r != root) add(ci, r, bytes, 1);
}

void rm_coll_from_root(MPI_Comm comm, int root, int64_t bytes)
{
    LOCKED(coll_from_root_unlocked(comm, root, bytes));
}

/* every other process sends `bytes` to root (Reduce, Gather(v)) */
static void coll_to_root_unlocked(MPI_Comm comm, int root, int64_t bytes)
{
    int me, n;
    comm_info_t *ci = coll_info(comm, &me, &n);
    if (!ci || me == root) return;
    add(ci, root, bytes, 1);
}

void rm_coll_to_root(MPI_Comm comm, int root, int64_t bytes)
{
    LOCKED(coll_to_root_unlocked(comm, root, bytes));
}

/* root sends counts[r] elements of type to process r (Scatter: counts NULL, count each) */
static void coll_scatter_unlocked(MPI_Comm comm, int root, int count, const int *counts,
                                  MPI_Datatype type)
{
    int me, n;
    comm_info_t *ci = coll_info(comm, &me, &n);
    if (!ci || me != root) return;
    for (int r = 0; r < n; r++)
        if (r != root) add(ci, r, rm_type_bytes(counts ? counts[r] : count, type), 1);
}

void rm_coll_scatter(MPI_Comm comm, int root, int count, const int *counts, MPI_Datatype type)
{
    LOCKED(coll_scatter_unlocked(comm, root, count, counts, type));
}

/* this process sends `bytes` to every other process (Allgather(v)) */
static void coll_to_all_unlocked(MPI_Comm comm, int64_t bytes)
{
    int me, n;
    comm_info_t *ci = coll_info(comm, &me, &n);
    if (!ci) return;
    for (int r = 0; r < n; r++)
        if (r != me) add(ci, r, bytes, 1);
}

void rm_coll_to_all(MPI_Comm comm, int64_t bytes)
{
    LOCKED(coll_to_all_unlocked(comm, bytes));
}

/* this process sends counts[r] elements (types[r] or type) to process r (Alltoall(v/w),
 * Reduce_scatter); counts NULL: `count` to everyone */
static void coll_personal_unlocked(MPI_Comm comm, int count, const int *counts,
                                   MPI_Datatype type, const MPI_Datatype *types)
{
    int me, n;
    comm_info_t *ci = coll_info(comm, &me, &n);
    if (!ci) return;
    for (int r = 0; r < n; r++)
        if (r != me)
            add(ci, r, rm_type_bytes(counts ? counts[r] : count, types ? types[r] : type), 1);
}

void rm_coll_personal(MPI_Comm comm, int count, const int *counts, MPI_Datatype type,
                      const MPI_Datatype *types)
{
    LOCKED(coll_personal_unlocked(comm, count, counts, type, types));
}

/* ring allreduce (reduce-scatter then allgather): 2(n-1) messages to the next process carrying
 * 2(n-1)/n of the data */
static void coll_allreduce_unlocked(MPI_Comm comm, int64_t bytes)
{
    int me, n;
    comm_info_t *ci = coll_info(comm, &me, &n);
    if (!ci || n < 2) return;
    /* 2(n-1)/n of the data is rarely whole bytes: the fraction is carried, not rounded on
     * every call (8 bytes on 7 processes: 13.71 a call, not 14) */
    add_share(ci, (me + 1) % n, 2.0 * (n - 1) * (double)bytes / n, 2 * (uint64_t)(n - 1));
}

void rm_coll_allreduce(MPI_Comm comm, int64_t bytes)
{
    LOCKED(coll_allreduce_unlocked(comm, bytes));
}

/* linear scan: process r sends its partial result to r + 1 */
static void coll_scan_unlocked(MPI_Comm comm, int64_t bytes)
{
    int me, n;
    comm_info_t *ci = coll_info(comm, &me, &n);
    if (!ci || me + 1 >= n) return;
    add(ci, me + 1, bytes, 1);
}

void rm_coll_scan(MPI_Comm comm, int64_t bytes)
{
    LOCKED(coll_scan_unlocked(comm, bytes));
}

/* neighbourhood collectives: block i to out-neighbour i */
static void coll_neighbors_unlocked(MPI_Comm comm, int count, const int *counts,
                                    MPI_Datatype type, const MPI_Datatype *types)
{
    if (!rm_recording() || !rec_collectives || rm_in_fortran) return;
    comm_info_t *ci = comm_info(comm);
    if (!ci) return;
    int kind = MPI_UNDEFINED, nout = 0, nin = 0, weighted = 0, me = 0;
    PMPI_Topo_test(comm, &kind);
    PMPI_Comm_rank(comm, &me);
    int *dst = NULL;
    if (kind == MPI_CART) {
        int nd = 0;
        PMPI_Cartdim_get(comm, &nd);
        dst = malloc((2 * (size_t)nd + 1) * sizeof *dst);
        for (int d = 0; dst && d < nd; d++) {
            int lo, hi;
            PMPI_Cart_shift(comm, d, 1, &lo, &hi);
            dst[nout++] = lo;
            dst[nout++] = hi;
        }
    } else if (kind == MPI_GRAPH) {
        PMPI_Graph_neighbors_count(comm, me, &nout);
        dst = malloc(((size_t)nout + 1) * sizeof *dst);
        if (dst) PMPI_Graph_neighbors(comm, me, nout, dst);
    } else if (kind == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(comm, &nin, &nout, &weighted);
        int *src = malloc(2 * ((size_t)nin + 1) * sizeof *src);
        int *dw = malloc(((size_t)nout + 1) * sizeof *dw);
        dst = malloc(((size_t)nout + 1) * sizeof *dst);
        if (src && dst && dw)
            PMPI_Dist_graph_neighbors(comm, nin, src, src + nin + 1, nout, dst, dw);
        free(src);
        free(dw);
    }
    if (!dst) return;
    for (int i = 0; i < nout; i++)
        if (dst[i] != MPI_PROC_NULL)
            add(ci, dst[i], rm_type_bytes(counts ? counts[i] : count, types ? types[i] : type),
                1);
    free(dst);
}

void rm_coll_neighbors(MPI_Comm comm, int count, const int *counts, MPI_Datatype type,
                       const MPI_Datatype *types)
{
    LOCKED(coll_neighbors_unlocked(comm, count, counts, type, types));
}

/* ---- writing at MPI_Finalize ---- */

static int cmp_rec(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
    return 0;
}

/* whether phases a and b (records at recs + 5 * start, len rows each, sorted by src, dst)
   have the same (src, dst, bytes) rows */
static int same_rows(const int64_t *recs, int64_t a, int64_t b, int64_t len)
{
    for (int64_t i = 0; i < len; i++) {
        const int64_t *x = recs + 5 * (a + i), *y = recs + 5 * (b + i);
        if (x[1] != y[1] || x[2] != y[2] || x[3] != y[3]) return 0;
    }
    return 1;
}

/* Identical phases (the same (src, dst, bytes) rows: an iteration's steps between
   MPI_Pcontrol calls) fold into the first of them, whose bytes and messages grow by theirs.
   recs are sorted by (phase, src, dst); *n becomes the rows kept (in order); returns how
   many phases were folded into others (0 when out of memory: nothing folded). */
/* bytes travel from the processes to rank 0 and through the folding of phases in units of
 * 1/2^FRAC_BITS byte, so that an allreduce share's fractions are added up over the whole run
 * and rounded once, whatever MPI_Pcontrol cut it into (exact up to 2^53 bytes a row) */
#define FRAC_BITS 10

static int64_t whole_bytes(int64_t fixed)
{
    return (fixed + (1 << (FRAC_BITS - 1))) >> FRAC_BITS;
}

static int64_t fold_phases(int64_t *recs, int64_t *n)
{
    int64_t rows = *n, nph = 0, folded = 0;
    for (int64_t i = 0; i < rows; i++) nph += i == 0 || recs[5 * i] != recs[5 * (i - 1)];
    if (nph < 2) return 0;
    size_t cap = 1;
    while (cap < 2 * (size_t)nph) cap <<= 1;
    int64_t *start = malloc((size_t)(nph + 1) * sizeof *start);
    uint64_t *hash = malloc((size_t)nph * sizeof *hash);
    int64_t *table = malloc(cap * sizeof *table);     /* kept phases by hash; -1: empty */
    int64_t *rep = malloc((size_t)nph * sizeof *rep);  /* the phase p folds into */
    if (!start || !hash || !table || !rep) {
        free(start); free(hash); free(table); free(rep);
        return 0;
    }
    for (int64_t i = 0, p = 0; i < rows; i++)
        if (i == 0 || recs[5 * i] != recs[5 * (i - 1)]) start[p++] = i;
    start[nph] = rows;
    for (size_t t = 0; t < cap; t++) table[t] = -1;
    for (int64_t p = 0; p < nph; p++) {
        int64_t len = start[p + 1] - start[p];
        uint64_t h = mix((uint64_t)len);
        for (int64_t i = start[p]; i < start[p + 1]; i++)
            for (int k = 1; k < 4; k++)
                h = mix(h ^ (uint64_t)recs[5 * i + k]) + 0x9e3779b97f4a7c15ULL;
        hash[p] = h;
        size_t t = h & (cap - 1);
        for (; table[t] >= 0; t = (t + 1) & (cap - 1)) {
            int64_t q = table[t];
            if (hash[q] == h && start[q + 1] - start[q] == len &&
                same_rows(recs, start[q], start[p], len))
                break;
        }
        if (table[t] < 0) table[t] = p;
        rep[p] = table[t];
    }
    /* added up only now: the comparisons above saw every phase's own bytes */
    for (int64_t p = 0; p < nph; p++) {
        int64_t q = rep[p];
        if (q == p) continue;
        for (int64_t i = 0; i < start[p + 1] - start[p]; i++) {
            recs[5 * (start[q] + i) + 3] += recs[5 * (start[p] + i) + 3];
            recs[5 * (start[q] + i) + 4] += recs[5 * (start[p] + i) + 4];
        }
        folded++;
    }
    int64_t kept = 0;
    for (int64_t p = 0; p < nph; p++) {
        if (rep[p] != p) continue;
        for (int64_t i = start[p]; i < start[p + 1]; i++, kept++)
            if (kept != i) memcpy(recs + 5 * kept, recs + 5 * i, 5 * sizeof *recs);
    }
    *n = kept;
    free(start); free(hash); free(table); free(rep);
    return folded;
}

/* records are (phase, src, dst, bytes, msgs); mat: sorted by src, dst */
static int write_file(const char *path, int64_t *recs, int64_t n, int nprocs, int mat)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    if (!mat) {
        qsort(recs, (size_t)n, 5 * sizeof *recs, cmp_rec);
        int64_t folded = fold_phases(recs, &n), kept = 0;
        for (int64_t i = 0; i < n; i++) kept += i == 0 || recs[5 * i] != recs[5 * (i - 1)];
        fprintf(f, "src,dst,bytes,messages,phase\n");
        for (int64_t i = 0; i < n; i++) {
            int64_t *r = recs + 5 * i;
            if (whole_bytes(r[3]) == 0) continue;  /* under half a byte in all: no flow */
            fprintf(f, "%lld,%lld,%lld,%lld,%lld\n", (long long)r[1], (long long)r[2],
                    (long long)whole_bytes(r[3]), (long long)r[4], (long long)r[0]);
        }
        fprintf(f, "# ranks %d\n", nprocs);
        if (folded)  /* the phases the program made, for the summary */
            fprintf(f, "# recorded phases %lld\n", (long long)(kept + folded));
    } else {
        for (int64_t i = 0; i < n; i++) {  /* sort key (src, dst, phase) */
            int64_t *r = recs + 5 * i, ph = r[0];
            r[0] = r[1];
            r[1] = r[2];
            r[2] = ph;
        }
        qsort(recs, (size_t)n, 5 * sizeof *recs, cmp_rec);
        int64_t i = 0;
        for (int s = 0; s < nprocs; s++) {
            for (int d = 0; d < nprocs; d++) {
                int64_t sum = 0;
                while (i < n && recs[5 * i] == s && recs[5 * i + 1] == d) sum += recs[5 * i++ + 3];
                fprintf(f, d ? " %lld" : "%lld", (long long)whole_bytes(sum));
            }
            fputc('\n', f);
        }
    }
    int bad = ferror(f);
    if (fflush(f) != 0) bad = 1;
    if (fsync(fileno(f)) != 0) bad = 1;
    if (fclose(f) != 0 || bad) {
        unlink(tmp);
        return -1;
    }
    /* a link, not a rename: a file that exists (or appeared during the run) is not replaced */
    if (link(tmp, path) == 0) {
        unlink(tmp);
        return 0;
    }
    int err = errno;
    if (err != EEXIST && access(path, F_OK) != 0 && rename(tmp, path) == 0)
        return 0;   /* a filesystem without hard links */
    if (err == EEXIST || access(path, F_OK) == 0) {
        rm_log("%s exists: not replaced; the recording is in %s", path, tmp);
        return 1;
    }
    unlink(tmp);
    return -1;
}

void rm_record_finalize(void)
{
    if (!rm_recording()) return;
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (!init || fin) return;
    rec_state = 0;  /* nothing below is recorded, and a second call does nothing */
    /* processes MPI_Comm_spawn started inherit RANKMAP_RECORD: they write nothing, the file
     * is the launched program's */
    if (spawned()) return;
    int me, n;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    PMPI_Comm_size(MPI_COMM_WORLD, &n);
    int count = 0;
    /* a pair that only exchanged empty messages moves no bytes: it is not a flow */
    for (size_t i = 0; i < tab_cap; i++)
        count += tab[i].dst >= 0 && (tab[i].bytes > 0 || tab[i].frac > 0);
    int64_t *mine = malloc((5 * (size_t)count + 1) * sizeof *mine);
    int failed = rec_failed || !mine, too_big = 0;
    int why[2], any[2] = {0, 0};    /* out of memory; a pair past what can be counted */
    int k = 0;
    for (size_t i = 0; mine && i < tab_cap; i++) {
        if (tab[i].dst < 0 || (tab[i].bytes == 0 && tab[i].frac <= 0)) continue;
        int64_t *r = mine + 5 * k++;
        r[0] = tab[i].phase;
        r[1] = me;
        r[2] = tab[i].dst;
        /* fixed point: the carried fraction goes along, rounded once in write_file; a pair
         * past 2^52 bytes in a phase cannot be carried so: the recording is refused, never
         * wrapped round */
        if (tab[i].bytes >= (1ULL << (62 - FRAC_BITS))) too_big = 1;
        r[3] = (int64_t)((tab[i].bytes << FRAC_BITS) & INT64_MAX) +
               (int64_t)(tab[i].frac * (1 << FRAC_BITS) + 0.5);
        r[4] = (int64_t)tab[i].msgs;
    }
    if (failed || too_big) count = 0;
    int *counts = NULL, *displs = NULL;
    int64_t *all = NULL;
    int64_t total = 0;
    if (me == 0) {
        counts = malloc((size_t)n * sizeof *counts);
        displs = malloc((size_t)n * sizeof *displs);
    }
    int c5 = 5 * count;
    PMPI_Gather(&c5, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    why[0] = failed;
    why[1] = too_big;
    PMPI_Reduce(why, any, 2, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    int root_ok = 1;
    if (me == 0) {
        root_ok = counts && displs;
        for (int p = 0; root_ok && p < n; p++) {
            displs[p] = (int)total;
            total += counts[p];
            root_ok = total <= 0x7fffffff;
        }
        all = root_ok ? malloc(((size_t)total + 1) * sizeof *all) : NULL;
        root_ok = all != NULL;
    }
    PMPI_Bcast(&root_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    const char *path = rm_env("RANKMAP_RECORD");
    if (root_ok)
        PMPI_Gatherv(mine, c5, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0,
                     MPI_COMM_WORLD);
    if (me == 0) {
        int wrote = 0;
        const char *fmt = rm_env("RANKMAP_RECORD_FORMAT");
        const char *col = rm_env("RANKMAP_RECORD_COLLECTIVES");
        int mat = fmt && strcmp(fmt, "mat") == 0;
        if (fmt && !mat && strcmp(fmt, "csv") != 0)
            rm_log("RANKMAP_RECORD_FORMAT='%s' is not csv or mat: the recording is csv", fmt);
        if (col && rm_yes_no(col) < 0)
            rm_log("RANKMAP_RECORD_COLLECTIVES='%s' is not 0 or 1: collectives were recorded",
                   col);
        if (any[1])
            rm_log("recording to %s failed: a pair of processes exchanged 4 PiB or more in one "
                   "phase, more than a recording counts; no file written", path);
        else if (!root_ok || any[0])
            rm_log("recording to %s failed: out of memory; no file written", path);
        else if ((wrote = write_file(path, all, total / 5, n, mat)) < 0)
            rm_log("cannot write the recording %s", path);
        else if (wrote == 0 && rm_verbose())
            rm_log("recorded %lld (source, destination, phase) entries of %d processes in %s",
                   (long long)(total / 5), n, path);
    }
    free(all); free(counts); free(displs); free(mine);
}
