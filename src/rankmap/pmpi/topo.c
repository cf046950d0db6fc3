/* rankmap PMPI library: MPI_Cart_create, MPI_Graph_create, MPI_Dist_graph_create_adjacent and
 * MPI_Dist_graph_create that really reorder ranks when reorder = true.
 *
 * First the MPI library's own call with the caller's arguments: it checks them all (an invalid
 * one is its error, from its function, and rankmap does nothing more), and what it made stays
 * the answer unless the ranks are reordered. Then the protocol (collective over the input
 * communicator, on a private duplicate of it):
 *  1. every process reports its node label ($RANKMAP_NODE: one label, or a comma-separated
 *     list with entry r for MPI_COMM_WORLD rank r; else MPI_Get_processor_name) and whether its
 *     arguments are valid; graph edges are gathered to rank 0 for the graph calls;
 *  2. rank 0 writes a request file and runs `rankmap pmpi place REQUEST -o RESULT`
 *     ($RANKMAP_BIN or rankmap on PATH) bounded by $RANKMAP_TIMEOUT seconds, then checks the
 *     answer is a valid assignment of new ranks;
 *  3. rank 0 broadcasts the new rank of every process (or "not reordered"); waiting processes
 *     poll with short sleeps so the engine gets the CPU on oversubscribed nodes;
 *  4. MPI_Comm_split by new rank, then the MPI library's own PMPI_*_create(reorder = 0), whose
 *     communicator replaces the first one (freed) when every process has it.
 * Anything going wrong in 1-4 keeps the MPI library's own communicator of the first call and
 * gives one warning line on rank 0: every process takes the same branch because only rank 0
 * decides.
 *
 * Graph semantics: vertex ids are ranks; after reordering the process with rank v in the new
 * communicator plays vertex v (MPI_Graph_create defines it so; for the distributed graphs the
 * neighbour lists given for vertex v by the process with rank v in the old communicator move
 * to the process that receives rank v).
 */
#define _GNU_SOURCE
#include "rankmap_pmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LABEL_LEN 256

enum { PLAN_FALLBACK = 0, PLAN_REORDER = 1 };

typedef struct {
    const char *call;        /* "MPI_Cart_create", ... */
    int n_ranks;             /* ranks of the topology (<= processes) */
    int ndims;               /* Cartesian: dims and periods */
    const int *dims, *periods;
    int64_t n_edges;         /* graphs: directed edges (rank 0 only) */
    const int *esrc, *edst, *ew;
} request_t;

static int warned = 0;

static void warn_fallback(const char *call, const char *reason)
{
    if (warned && !rm_verbose()) return;
    warned = 1;
    rm_log("%s: ranks not reordered (%s); the MPI library's own order is kept", call, reason);
}

/* This process's node label into out (LABEL_LEN bytes). Returns 0, or -1 with a reason. */
static int node_label(char *out, char *reason, size_t rn)
{
    const char *env = rm_env("RANKMAP_NODE");
    int wrank = 0, wsize = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    PMPI_Comm_size(MPI_COMM_WORLD, &wsize);
    memset(out, 0, LABEL_LEN);
    if (env && strchr(env, ',')) {
        int k = 0;
        const char *p = env;
        while (k < wrank && (p = strchr(p, ','))) { p++; k++; }
        int count = 1;
        for (const char *c = env; *c; c++) count += *c == ',';
        if (count != wsize || !p) {
            snprintf(reason, rn, "$RANKMAP_NODE has %d entries, MPI_COMM_WORLD has %d processes",
                     count, wsize);
            return -1;
        }
        while (*p == ' ') p++;
        size_t len = strcspn(p, ",");
        while (len && p[len - 1] == ' ') len--;
        if (len == 0 || len >= LABEL_LEN) {
            snprintf(reason, rn, "$RANKMAP_NODE entry %d is empty or too long", wrank);
            return -1;
        }
        memcpy(out, p, len);
        return 0;
    }
    if (env) {
        snprintf(out, LABEL_LEN, "%s", env);
        return 0;
    }
    int len = 0;
    char name[MPI_MAX_PROCESSOR_NAME + 1] = {0};
    if (PMPI_Get_processor_name(name, &len) != MPI_SUCCESS || len <= 0) {
        if (gethostname(name, sizeof name - 1) != 0) {
            snprintf(reason, rn, "cannot read this process's host name");
            return -1;
        }
    }
    snprintf(out, LABEL_LEN, "%s", name);
    return 0;
}

static int write_request(const char *path, const request_t *rq, int nprocs, const char *labels,
                         char *reason, size_t rn)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(reason, rn, "cannot write the request file %s", path);
        return -1;
    }
    const char *seed = rm_env("RANKMAP_SEED");
    fprintf(f, "rankmap-pmpi-request 1\n");
    fprintf(f, "call %s\n", rq->call);
    fprintf(f, "machine %s\n", rm_env("RANKMAP_MACHINE"));
    fprintf(f, "mapping %s\n", rm_env("RANKMAP_MAPPING") ? rm_env("RANKMAP_MAPPING") : "auto");
    fprintf(f, "stencil %s\n", rm_env("RANKMAP_STENCIL") ? rm_env("RANKMAP_STENCIL") : "star");
    fprintf(f, "seed %s\n", seed ? seed : "0");
    fprintf(f, "processes %d\n", nprocs);
    fprintf(f, "ranks %d\n", rq->n_ranks);
    if (rq->dims) {
        fprintf(f, "dims");
        for (int i = 0; i < rq->ndims; i++) fprintf(f, " %d", rq->dims[i]);
        fprintf(f, "\nperiods");
        for (int i = 0; i < rq->ndims; i++) fprintf(f, " %d", rq->periods[i] ? 1 : 0);
        fprintf(f, "\n");
    }
    fprintf(f, "labels\n");
    for (int p = 0; p < nprocs; p++) fprintf(f, "%s\n", labels + (size_t)p * LABEL_LEN);
    if (!rq->dims) {
        fprintf(f, "edges %lld\n", (long long)rq->n_edges);
        for (int64_t e = 0; e < rq->n_edges; e++)
            fprintf(f, "%d %d %d\n", rq->esrc[e], rq->edst[e], rq->ew ? rq->ew[e] : 1);
    }
    if (fclose(f) != 0) {
        snprintf(reason, rn, "cannot write the request file %s", path);
        return -1;
    }
    return 0;
}

/* Parse and check the engine's answer: new_rank[p] for every process, a bijection between
 * n_ranks processes and 0..n_ranks-1, -1 for the others. */
static int read_result(const char *path, int nprocs, int n_ranks, int *new_rank, char *mapping,
                       char *reason, size_t rn)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(reason, rn, "the engine wrote no result");
        return -1;
    }
    char word[64];
    int ok = fscanf(f, "%63s", word) == 1 && strcmp(word, "rankmap-pmpi-result") == 0 &&
             fscanf(f, " 1 mapping %255[^\n]%*[^\n]", mapping) == 1 &&  /* the rest of the line */
             fscanf(f, " new_rank") == 0;
    int *seen = ok ? calloc((size_t)n_ranks + 1, sizeof *seen) : NULL;
    int used = 0;
    for (int p = 0; ok && p < nprocs; p++) {
        if (!seen || fscanf(f, "%d", &new_rank[p]) != 1 || new_rank[p] < -1 ||
            new_rank[p] >= n_ranks || (new_rank[p] >= 0 && seen[new_rank[p]]++)) {
            ok = 0;
            break;
        }
        used += new_rank[p] >= 0;
    }
    fclose(f);
    free(seen);
    if (!ok || used != n_ranks) {
        snprintf(reason, rn, "the engine's answer is not a valid assignment of %d ranks", n_ranks);
        return -1;
    }
    return 0;
}

/* Rank 0: run the engine on the request; PLAN_REORDER with new_rank filled, or PLAN_FALLBACK
 * with a reason. */
static int root_plan(const request_t *rq, int nprocs, const char *labels, int all_valid,
                     int *new_rank, char *mapping, char *reason, size_t rn)
{
    if (!all_valid) {
        snprintf(reason, rn, "%s", "a process could not name its node (see $RANKMAP_NODE)");
        return PLAN_FALLBACK;
    }
    if (!rm_env("RANKMAP_MACHINE")) {
        snprintf(reason, rn, "no machine description: set RANKMAP_MACHINE");
        return PLAN_FALLBACK;
    }
    double timeout = 60.0;
    const char *t = rm_env("RANKMAP_TIMEOUT");
    if (t) {
        char *end;
        timeout = strtod(t, &end);
        if (*end || timeout != timeout) {
            snprintf(reason, rn, "bad RANKMAP_TIMEOUT=%s (seconds expected)", t);
            return PLAN_FALLBACK;
        }
        if (timeout <= 0) {
            snprintf(reason, rn, "RANKMAP_TIMEOUT=%s leaves no time for the engine", t);
            return PLAN_FALLBACK;
        }
    }
    const char *tmp = rm_env("TMPDIR") ? rm_env("TMPDIR") : "/tmp";
    char dir[4096], req[4200], res[4200], err[4200];
    snprintf(dir, sizeof dir, "%s/rankmap-pmpi-XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        snprintf(reason, rn, "cannot create a temporary directory in %s", tmp);
        return PLAN_FALLBACK;
    }
    snprintf(req, sizeof req, "%s/request.txt", dir);
    snprintf(res, sizeof res, "%s/result.txt", dir);
    snprintf(err, sizeof err, "%s/stderr.txt", dir);
    int status = PLAN_FALLBACK;
    if (write_request(req, rq, nprocs, labels, reason, rn) == 0) {
        const char *bin = rm_env("RANKMAP_BIN") ? rm_env("RANKMAP_BIN") : "rankmap";
        char *argv[] = {(char *)bin, "pmpi", "place", req, "-o", res, NULL};
        int rc = rm_run(argv, timeout, err);
        if (rc == -1) {
            snprintf(reason, rn, "cannot run the rankmap engine '%s' (set RANKMAP_BIN or PATH)",
                     bin);
        } else if (rc == -2) {
            snprintf(reason, rn, "the rankmap engine took longer than RANKMAP_TIMEOUT=%g s; "
                     "its first run compiles rankmap's kernels into their cache, about a "
                     "minute: run the job again, or a rankmap compare first, or raise "
                     "RANKMAP_TIMEOUT", timeout);
        } else if (rc != 0 && rc != -3) {     /* -3: reaped by the program: see the result */
            char last[600];
            rm_last_line(err, last, sizeof last);
            if (rc == 127 && !last[0])
                snprintf(reason, rn, "rankmap engine '%s' not found (set RANKMAP_BIN or PATH)",
                         bin);
            else
                snprintf(reason, rn, "%s", last[0] ? last : "the rankmap engine failed");
        } else if (read_result(res, nprocs, rq->n_ranks, new_rank, mapping, reason, rn) == 0) {
            status = PLAN_REORDER;
        }
    }
    unlink(req);
    unlink(res);
    unlink(err);
    rmdir(dir);
    return status;
}

/* Steps 1-3 of the protocol. Returns PLAN_REORDER (new_rank filled on every process) or
 * PLAN_FALLBACK. `valid` is this process's verdict on its own arguments. */
static int plan(MPI_Comm priv, const request_t *rq, int valid, int *new_rank)
{
    int rank, size;
    PMPI_Comm_rank(priv, &rank);
    PMPI_Comm_size(priv, &size);
    char reason[1024] = "";
    char mapping[256] = "?";
    char label[LABEL_LEN];
    char why[512] = "";
    int named = node_label(label, why, sizeof why) == 0;
    /* minima: all arguments valid, all nodes named, the first process that could not name it */
    int local[3] = {valid, named, named ? size : rank}, all[3] = {0, 0, 0};
    if (!local[1]) memset(label, 0, sizeof label);
    char *labels = NULL;
    if (rank == 0) labels = malloc((size_t)size * LABEL_LEN);
    int fail = rank == 0 && !labels;
    PMPI_Gather(label, LABEL_LEN, MPI_CHAR, labels, LABEL_LEN, MPI_CHAR, 0, priv);
    PMPI_Reduce(local, all, 3, MPI_INT, MPI_MIN, 0, priv);
    int *msg = malloc(((size_t)size + 1) * sizeof *msg);
    if (!msg) fail = 1;  /* still take part in the broadcast below with a small buffer */
    int small = PLAN_FALLBACK;
    int *buf = msg ? msg : &small;
    if (rank == 0) {
        buf[0] = PLAN_FALLBACK;
        if (fail) {
            snprintf(reason, sizeof reason, "out of memory");
        } else if (!all[0]) {
            snprintf(reason, sizeof reason, "invalid arguments are left to the MPI library");
        } else if (!all[1] && why[0]) {
            snprintf(reason, sizeof reason, "%s", why);
        } else if (!all[1]) {
            snprintf(reason, sizeof reason, "process %d of the communicator could not name its "
                     "node (see $RANKMAP_NODE)", all[2]);
        } else {
            buf[0] = root_plan(rq, size, labels, all[1], buf + 1, mapping, reason,
                               sizeof reason);
        }
    }
    /* status first (every process can receive it), then the assignment */
    MPI_Request r;
    int head = buf[0];
    /* the others wait for rank 0's engine: naps from 1 ms doubling up to 50 ms, so that on
     * oversubscribed nodes hundreds of waiting processes do not take the CPU from the engine
     * (1,000 polls a second each did) and the answer is still seen within 50 ms */
    struct timespec nap = {0, 1000000};
    PMPI_Ibcast(&head, 1, MPI_INT, 0, priv, &r);
    for (int done = 0; PMPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done;) {
        nanosleep(&nap, NULL);
        if (nap.tv_nsec < 50000000) nap.tv_nsec = nap.tv_nsec * 2 > 50000000 ? 50000000
                                                                               : nap.tv_nsec * 2;
    }
    /* a process that ran out of memory cannot hold the answer: all agree to fall back */
    int can = msg != NULL, all_can = 0;
    PMPI_Allreduce(&can, &all_can, 1, MPI_INT, MPI_MIN, priv);
    if (head == PLAN_REORDER && !all_can) {
        head = PLAN_FALLBACK;
        snprintf(reason, sizeof reason, "out of memory");
    }
    if (head == PLAN_REORDER) {
        PMPI_Bcast(buf + 1, size, MPI_INT, 0, priv);
        memcpy(new_rank, buf + 1, (size_t)size * sizeof *new_rank);
    }
    if (rank == 0) {
        if (head != PLAN_REORDER) {
            warn_fallback(rq->call, reason);
        } else if (rm_verbose()) {
            int moved = 0;
            for (int p = 0; p < size; p++) moved += new_rank[p] >= 0 && new_rank[p] != p;
            if (rq->n_ranks < size)
                rm_log("%s: %d ranks reordered by placement '%s' (%d of them changed rank; %d "
                       "of %d processes left out)", rq->call, rq->n_ranks, mapping, moved,
                       size - rq->n_ranks, size);
            else
                rm_log("%s: %d ranks reordered by placement '%s' (%d of %d processes changed "
                       "rank)", rq->call, rq->n_ranks, mapping, moved, size);
        }
    }
    free(labels);
    free(msg);
    return head;
}

/* Whether to reorder a call the MPI library has already accepted (so comm is a valid
 * communicator: nothing here calls MPI on it before the MPI library's own call did). */
static int reorder_wanted(int reorder, MPI_Comm comm)
{
    static int said = 0;
    int inter = 0, size = 0, rank = 0;
    const char *off = rm_env("RANKMAP_REORDER");
    if (!reorder || comm == MPI_COMM_NULL) return 0;
    /* RANKMAP_REORDER=0: the library only records (rankmap record sets it): the MPI
     * library's own call, without a word */
    int flag = off ? rm_yes_no(off) : 1;
    if (flag == 0) return 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return 0;
    /* one process has nothing to reorder: no engine (N single-process communicators would
     * start N of them) */
    if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size < 2) return 0;
    if (flag < 0) {  /* an unknown word: the safe reading, the launcher's ranks kept */
        PMPI_Comm_rank(comm, &rank);
        if (rank == 0 && !said++)
            rm_log("RANKMAP_REORDER='%s' is not 0 or 1: ranks are not reordered", off);
        return 0;
    }
    return 1;
}

/* A private copy of comm for the library's own messages. MPI_Comm_split, not MPI_Comm_dup:
 * a dup would run the program's attribute copy callbacks (and abort the job when one refuses),
 * which MPI only promises in MPI_Comm_dup itself. */
static MPI_Comm private_comm(MPI_Comm comm)
{
    int rank;
    MPI_Comm priv;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_split(comm, 0, rank, &priv);
    return priv;
}

/* split comm by new rank (COMM_NULL for processes left out) */
static MPI_Comm split(MPI_Comm comm, const int *new_rank)
{
    int rank;
    MPI_Comm sub;
    PMPI_Comm_rank(comm, &rank);
    int nr = new_rank[rank];
    PMPI_Comm_split(comm, nr >= 0 ? 0 : MPI_UNDEFINED, nr >= 0 ? nr : 0, &sub);
    return sub;
}

/* The reordered topology `mine` (rc: the MPI library's answer on this process; COMM_NULL on
 * processes left out) replaces the MPI library's own *out when every process has it; else
 * every process keeps the MPI library's own and frees `mine`. */
static void adopt(MPI_Comm priv, const char *call, int rc, MPI_Comm mine, MPI_Comm *out)
{
    int ok = rc == MPI_SUCCESS, all = 0, rank;
    PMPI_Comm_rank(priv, &rank);
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, priv);
    if (all) {
        if (*out != MPI_COMM_NULL) PMPI_Comm_free(out);
        *out = mine;
        return;
    }
    if (ok && mine != MPI_COMM_NULL) PMPI_Comm_free(&mine);
    if (rank == 0) warn_fallback(call, "the MPI library refused the reordered topology");
}

/* Every creator below makes the MPI library's own call first, with the caller's arguments:
 * the MPI library checks them (an invalid one is its own error, reported by its own function,
 * before rankmap touches the communicator or an output pointer), and what it made is the
 * answer whenever the ranks are not reordered. When they are, the topology built on the
 * reordered communicator replaces it (adopt). */

int rm_cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                   int reorder, MPI_Comm *out)
{
    int rc = PMPI_Cart_create(comm, ndims, dims, periods, reorder, out);
    if (rc != MPI_SUCCESS || !reorder_wanted(reorder, comm)) return rc;
    int size;
    PMPI_Comm_size(comm, &size);
    int64_t n = 1;
    int valid = ndims > 0 && dims && periods;
    for (int i = 0; valid && i < ndims; i++) {
        valid = dims[i] > 0;
        n *= valid ? dims[i] : 1;
        valid = valid && n <= size;
    }
    /* arguments the MPI library took but rankmap does not (the same on every process: MPI
     * requires equal arguments), or one cell: the MPI library's own */
    if (!valid || n < 2) return rc;
    MPI_Comm priv = private_comm(comm);
    int *new_rank = malloc((size_t)size * sizeof *new_rank);
    request_t rq = {"MPI_Cart_create", (int)n, ndims, dims, periods, 0, NULL, NULL, NULL};
    if (plan(priv, &rq, new_rank != NULL, new_rank) == PLAN_REORDER) {
        MPI_Comm sub = split(comm, new_rank), mine = MPI_COMM_NULL;
        int made = MPI_SUCCESS;
        if (sub != MPI_COMM_NULL) {
            made = PMPI_Cart_create(sub, ndims, dims, periods, 0, &mine);
            PMPI_Comm_free(&sub);
        }
        adopt(priv, rq.call, made, mine, out);
    }
    free(new_rank);
    PMPI_Comm_free(&priv);
    return MPI_SUCCESS;
}

int rm_graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                    int reorder, MPI_Comm *out)
{
    int rc = PMPI_Graph_create(comm, nnodes, index, edges, reorder, out);
    if (rc != MPI_SUCCESS || !reorder_wanted(reorder, comm)) return rc;
    int size;
    PMPI_Comm_size(comm, &size);
    int valid = nnodes > 0 && nnodes <= size && index && (index[nnodes - 1] == 0 || edges);
    for (int i = 0; valid && i < nnodes; i++)
        valid = index[i] >= (i ? index[i - 1] : 0);
    int64_t ne = valid ? index[nnodes - 1] : 0;
    for (int64_t e = 0; valid && e < ne; e++) valid = edges[e] >= 0 && edges[e] < nnodes;
    if (!valid || nnodes < 2)  /* not rankmap's to reorder, or one vertex */
        return rc;
    int *src = malloc(((size_t)ne + 1) * sizeof *src);
    int *new_rank = malloc((size_t)size * sizeof *new_rank);
    for (int v = 0, e = 0; src && v < nnodes; v++)
        for (; e < index[v]; e++) src[e] = v;
    MPI_Comm priv = private_comm(comm);
    request_t rq = {"MPI_Graph_create", nnodes, 0, NULL, NULL, ne, src, edges, NULL};
    int st = plan(priv, &rq, src && new_rank, new_rank);
    free(src);
    if (st == PLAN_REORDER) {
        MPI_Comm sub = split(comm, new_rank), mine = MPI_COMM_NULL;
        int made = MPI_SUCCESS;
        if (sub != MPI_COMM_NULL) {
            made = PMPI_Graph_create(sub, nnodes, index, edges, 0, &mine);
            PMPI_Comm_free(&sub);
        }
        adopt(priv, rq.call, made, mine, out);
    }
    free(new_rank);
    PMPI_Comm_free(&priv);
    return MPI_SUCCESS;
}

/* Gather every process's out-edges (src = its rank unless given) to rank 0 of priv. On rank 0
 * esrc, edst, ew and ne receive the whole graph. Returns 0, -1 on allocation failure (rank 0). */
static int gather_edges(MPI_Comm priv, int count, const int *src, const int *dst, const int *w,
                        int **esrc, int **edst, int **ew, int64_t *ne)
{
    int rank, size;
    PMPI_Comm_rank(priv, &rank);
    PMPI_Comm_size(priv, &size);
    int *counts = NULL, *displs = NULL;
    int64_t total = 0;
    int fail = 0;
    if (rank == 0) {
        counts = malloc((size_t)size * sizeof *counts);
        displs = malloc((size_t)size * sizeof *displs);
        fail = !counts || !displs;
    }
    int big = 0, tmp = 0;
    PMPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, priv);
    if (rank == 0 && !fail) {
        for (int p = 0; p < size; p++) {
            displs[p] = (int)total;
            total += counts[p];
        }
        big = total > 0x7fffffff;  /* Gatherv displacements are int */
        fail = big;
    }
    PMPI_Bcast(&fail, 1, MPI_INT, 0, priv);
    if (fail) {
        free(counts);
        free(displs);
        return -1;
    }
    int *s = NULL, *d = NULL, *ww = NULL;
    if (rank == 0) {
        s = malloc(((size_t)total + 1) * sizeof *s);
        d = malloc(((size_t)total + 1) * sizeof *d);
        ww = malloc(((size_t)total + 1) * sizeof *ww);
        tmp = !s || !d || !ww;
    }
    PMPI_Bcast(&tmp, 1, MPI_INT, 0, priv);
    if (tmp) {
        free(s); free(d); free(ww); free(counts); free(displs);
        return -1;
    }
    PMPI_Gatherv(src, count, MPI_INT, s, counts, displs, MPI_INT, 0, priv);
    PMPI_Gatherv(dst, count, MPI_INT, d, counts, displs, MPI_INT, 0, priv);
    PMPI_Gatherv(w, count, MPI_INT, ww, counts, displs, MPI_INT, 0, priv);
    free(counts);
    free(displs);
    *esrc = s;
    *edst = d;
    *ew = ww;
    *ne = total;
    return 0;
}

static int is_unweighted(const int *w)
{
    return w == MPI_UNWEIGHTED;
}

/* weights of `count` edges that rankmap can read: every one >= 0 (the MPI standard requires
 * it); MPI_WEIGHTS_EMPTY only stands for no edge */
static int weights_ok(const int *w, int64_t count)
{
    if (count == 0) return 1;
    if (!w || w == MPI_WEIGHTS_EMPTY || is_unweighted(w)) return 0;
    for (int64_t i = 0; i < count; i++)
        if (w[i] < 0) return 0;
    return 1;
}

int rm_dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                  const int sourceweights[], int outdegree,
                                  const int destinations[], const int destweights[],
                                  MPI_Info info, int reorder, MPI_Comm *out)
{
    int rc = PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                             destinations, destweights, info, reorder, out);
    if (rc != MPI_SUCCESS || !reorder_wanted(reorder, comm)) return rc;
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    /* weighted unless both lists are MPI_UNWEIGHTED (one of them alone is invalid) */
    int weighted = !is_unweighted(destweights) || !is_unweighted(sourceweights);
    int valid = indegree >= 0 && outdegree >= 0 && (indegree == 0 || sources) &&
                (outdegree == 0 || destinations) &&
                (is_unweighted(sourceweights) == is_unweighted(destweights)) &&
                (!weighted || (weights_ok(sourceweights, indegree) &&
                               weights_ok(destweights, outdegree)));
    for (int i = 0; valid && i < indegree; i++) valid = sources[i] >= 0 && sources[i] < size;
    for (int i = 0; valid && i < outdegree; i++)
        valid = destinations[i] >= 0 && destinations[i] < size;
    int cnt = valid ? outdegree : 0;
    int *src = malloc(((size_t)cnt + 1) * sizeof *src);
    int *w = malloc(((size_t)cnt + 1) * sizeof *w);
    int *new_rank = malloc((size_t)size * sizeof *new_rank);
    for (int i = 0; src && w && i < cnt; i++) {
        src[i] = rank;
        w[i] = weighted ? destweights[i] : 1;
    }
    MPI_Comm priv = private_comm(comm);
    int *es = NULL, *ed = NULL, *ew = NULL;
    int64_t ne = 0;
    int ok = src && w && new_rank;
    int gathered = gather_edges(priv, ok ? cnt : 0, src, ok ? destinations : src, w,
                                &es, &ed, &ew, &ne) == 0;
    request_t rq = {"MPI_Dist_graph_create_adjacent", size, 0, NULL, NULL, ne, es, ed, ew};
    int st = gathered ? plan(priv, &rq, ok && valid, new_rank) : PLAN_FALLBACK;
    if (!gathered && rank == 0) warn_fallback(rq.call, "out of memory gathering the graph");
    free(es); free(ed); free(ew); free(src); free(w);
    if (st != PLAN_REORDER) {
        PMPI_Comm_free(&priv);
        free(new_rank);
        return MPI_SUCCESS;
    }
    /* move vertex lists: this process (old rank p) sends its lists to the process that gets
     * rank p and receives those of vertex new_rank[p] from old rank new_rank[p] */
    int to = 0, from = new_rank[rank];
    for (int p = 0; p < size; p++)
        if (new_rank[p] == rank) to = p;
    int head[3] = {indegree, outdegree, weighted}, got[3];
    PMPI_Sendrecv(head, 3, MPI_INT, to, 1, got, 3, MPI_INT, from, 1, priv, MPI_STATUS_IGNORE);
    size_t nsend = 2 * ((size_t)indegree + outdegree), nrecv = 2 * ((size_t)got[0] + got[1]);
    int *sbuf = malloc((nsend + 1) * sizeof *sbuf), *rbuf = malloc((nrecv + 1) * sizeof *rbuf);
    int mem_ok = sbuf && rbuf, all_mem = 0;
    PMPI_Allreduce(&mem_ok, &all_mem, 1, MPI_INT, MPI_MIN, priv);
    if (!all_mem) {  /* every process keeps the MPI library's own together */
        free(sbuf); free(rbuf); free(new_rank);
        PMPI_Comm_free(&priv);
        if (rank == 0) warn_fallback(rq.call, "out of memory moving the neighbour lists");
        return MPI_SUCCESS;
    }
    int *q = sbuf;
    for (int i = 0; i < indegree; i++) *q++ = sources[i];
    for (int i = 0; i < indegree; i++) *q++ = weighted ? sourceweights[i] : 1;
    for (int i = 0; i < outdegree; i++) *q++ = destinations[i];
    for (int i = 0; i < outdegree; i++) *q++ = weighted ? destweights[i] : 1;
    PMPI_Sendrecv(sbuf, (int)nsend, MPI_INT, to, 2, rbuf, (int)nrecv, MPI_INT, from, 2, priv,
                  MPI_STATUS_IGNORE);
    MPI_Comm sub = split(comm, new_rank), mine = MPI_COMM_NULL;
    free(new_rank);
    free(sbuf);
    int in = got[0], outd = got[1];
    int *rs = rbuf, *rsw = rbuf + in, *rd = rbuf + 2 * in, *rdw = rbuf + 2 * in + outd;
    const int *sw = got[2] ? (in ? rsw : MPI_WEIGHTS_EMPTY) : MPI_UNWEIGHTED;
    const int *dw = got[2] ? (outd ? rdw : MPI_WEIGHTS_EMPTY) : MPI_UNWEIGHTED;
    int made = PMPI_Dist_graph_create_adjacent(sub, in, rs, sw, outd, rd, dw, info, 0, &mine);
    PMPI_Comm_free(&sub);
    free(rbuf);
    adopt(priv, rq.call, made, mine, out);
    PMPI_Comm_free(&priv);
    return MPI_SUCCESS;
}

int rm_dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                         const int destinations[], const int weights[], MPI_Info info,
                         int reorder, MPI_Comm *out)
{
    int rc = PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info,
                                    reorder, out);
    if (rc != MPI_SUCCESS || !reorder_wanted(reorder, comm)) return rc;
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    int weighted = !is_unweighted(weights);
    int valid = n >= 0 && (n == 0 || (sources && degrees));
    int64_t ne = 0;
    for (int i = 0; valid && i < n; i++) {
        valid = sources[i] >= 0 && sources[i] < size && degrees[i] >= 0;
        ne += valid ? degrees[i] : 0;
    }
    valid = valid && ne <= 0x7fffffff && (ne == 0 || destinations) &&
            (!weighted || weights_ok(weights, ne));
    for (int64_t e = 0; valid && e < ne; e++)
        valid = destinations[e] >= 0 && destinations[e] < size;
    int cnt = valid ? (int)ne : 0;
    int *src = malloc(((size_t)cnt + 1) * sizeof *src);
    int *w = malloc(((size_t)cnt + 1) * sizeof *w);
    int *new_rank = malloc((size_t)size * sizeof *new_rank);
    for (int i = 0, e = 0; src && w && i < (valid ? n : 0); i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            src[e] = sources[i];
            w[e] = weighted ? weights[e] : 1;
        }
    MPI_Comm priv = private_comm(comm);
    int *es = NULL, *ed = NULL, *ew = NULL;
    int64_t total = 0;
    int ok = src && w && new_rank;
    int gathered = gather_edges(priv, ok ? cnt : 0, src, ok && cnt ? destinations : src, w,
                                &es, &ed, &ew, &total) == 0;
    request_t rq = {"MPI_Dist_graph_create", size, 0, NULL, NULL, total, es, ed, ew};
    int st = gathered ? plan(priv, &rq, ok && valid, new_rank) : PLAN_FALLBACK;
    if (!gathered && rank == 0) warn_fallback(rq.call, "out of memory gathering the graph");
    free(es); free(ed); free(ew); free(src); free(w);
    if (st == PLAN_REORDER) {
        /* vertex ids are ranks of the new communicator: the edges stay as given */
        MPI_Comm sub = split(comm, new_rank), mine = MPI_COMM_NULL;
        int made = PMPI_Dist_graph_create(sub, n, sources, degrees, destinations, weights, info,
                                          0, &mine);
        PMPI_Comm_free(&sub);
        adopt(priv, rq.call, made, mine, out);
    }
    free(new_rank);
    PMPI_Comm_free(&priv);
    return MPI_SUCCESS;
}

/* ---- C entry points ---- */

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart)
{
    return rm_cart_create(comm, ndims, dims, periods, reorder, comm_cart);
}

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *comm_graph)
{
    return rm_graph_create(comm, nnodes, index, edges, reorder, comm_graph);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    return rm_dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                         destinations, destweights, info, reorder,
                                         comm_dist_graph);
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *comm_dist_graph)
{
    return rm_dist_graph_create(comm, n, sources, degrees, destinations, weights, info, reorder,
                                comm_dist_graph);
}
