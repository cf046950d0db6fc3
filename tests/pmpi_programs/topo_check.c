/* Checks every MPI promise on a topology communicator created with reorder = 1 (run with the
 * rankmap PMPI library preloaded). Usage: topo_check cart D0xD1[xD2] PERIODS | graph |
 * adjacent | dist. Rank 0 prints "RESULT errors=E moved=M null=N reordered=R". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errors = 0;
#define CHECK(c, ...)                                                       \
    do {                                                                    \
        if (!(c)) {                                                         \
            if (errors++ < 5) {                                             \
                fprintf(stderr, "rank %d: %s:%d: ", wrank, __FILE__, __LINE__); \
                fprintf(stderr, __VA_ARGS__);                               \
                fputc('\n', stderr);                                        \
            }                                                               \
        }                                                                   \
    } while (0)

static int wrank, wsize;

/* neighbour-collective check shared by all kinds: nin sources src[], nout destinations dst[]
 * (ranks of comm, MPI_PROC_NULL allowed). Each process sends rank*1000+i to destination i;
 * the value from source j must be src[j]*1000 + (position of this edge in src[j]'s list),
 * which `pos_in_sender(j)` gives. */
typedef int (*pos_fn)(int j, void *ctx);

static void neighbour_collectives(MPI_Comm comm, int nin, const int *src, int nout,
                                  const int *dst, pos_fn pos, void *ctx)
{
    int me;
    MPI_Comm_rank(comm, &me);
    int *sb = malloc((nout + 1) * sizeof(int)), *rb = malloc((nin + 1) * sizeof(int));
    int *sc = malloc((nout + 1) * sizeof(int)), *sd = malloc((nout + 1) * sizeof(int));
    int *rc = malloc((nin + 1) * sizeof(int)), *rd = malloc((nin + 1) * sizeof(int));
    MPI_Aint *sdw = malloc((nout + 1) * sizeof(MPI_Aint)), *rdw = malloc((nin + 1) * sizeof(MPI_Aint));
    MPI_Datatype *st = malloc((nout + 1) * sizeof(MPI_Datatype)), *rt = malloc((nin + 1) * sizeof(MPI_Datatype));
    for (int i = 0; i < nout; i++) {
        sb[i] = me * 1000 + (pos ? i : dst[i]); sc[i] = 1; sd[i] = i; sdw[i] = i * sizeof(int); st[i] = MPI_INT;
    }
    for (int j = 0; j < nin; j++) {
        rc[j] = 1; rd[j] = j; rdw[j] = j * sizeof(int); rt[j] = MPI_INT;
    }
    for (int variant = 0; variant < 5; variant++) {
        for (int j = 0; j < nin; j++) rb[j] = -7;
        MPI_Request r;
        switch (variant) {
        case 0: MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, comm); break;
        case 1: MPI_Ineighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, comm, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE); break;
        case 2: MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm); break;
        case 3: MPI_Neighbor_alltoallw(sb, sc, sdw, st, rb, rc, rdw, rt, comm); break;
        case 4: MPI_Ineighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE); break;
        }
        for (int j = 0; j < nin; j++) {
            int want = src[j] == MPI_PROC_NULL ? -7 : src[j] * 1000 + (pos ? pos(j, ctx) : me);
            CHECK(rb[j] == want, "alltoall variant %d: from source %d (#%d) got %d, want %d",
                  variant, src[j], j, rb[j], want);
        }
    }
    for (int variant = 0; variant < 3; variant++) {
        for (int j = 0; j < nin; j++) rb[j] = -7;
        int mine = me * 1000 + 999;
        MPI_Request r;
        if (variant == 0) MPI_Neighbor_allgather(&mine, 1, MPI_INT, rb, 1, MPI_INT, comm);
        if (variant == 1) {
            MPI_Ineighbor_allgather(&mine, 1, MPI_INT, rb, 1, MPI_INT, comm, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        if (variant == 2) MPI_Neighbor_allgatherv(&mine, 1, MPI_INT, rb, rc, rd, MPI_INT, comm);
        for (int j = 0; j < nin; j++) {
            int want = src[j] == MPI_PROC_NULL ? -7 : src[j] * 1000 + 999;
            CHECK(rb[j] == want, "allgather variant %d: from %d got %d", variant, src[j], rb[j]);
        }
    }
    free(sb); free(rb); free(sc); free(sd); free(rc); free(rd); free(sdw); free(rdw);
    free(st); free(rt);
}

/* ---- Cartesian ---- */
static int cart_nd, cart_dims[8];
static int cart_pos(int j, void *ctx) { (void)ctx; return j ^ 1; }  /* -1 <-> +1 */

static int check_cart(int argc, char **argv, MPI_Comm *out)
{
    int nd = 0, dims[8], periods[8], n = 1;
    for (char *s = argv[2]; s && *s && nd < 8; nd++) {
        dims[nd] = (int)strtol(s, &s, 10);
        n *= dims[nd];
        if (*s == 'x') s++;
    }
    for (int i = 0; i < nd; i++) periods[i] = argc > 3 && argv[3][i] == '1';
    cart_nd = nd;
    memcpy(cart_dims, dims, sizeof dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 1, &cart);
    *out = cart;
    if (cart == MPI_COMM_NULL) {
        CHECK(wrank >= 0, "never");
        return n;
    }
    int me, size, topo, ndg, gd[8], gp[8], gc[8], c[8];
    MPI_Comm_rank(cart, &me);
    MPI_Comm_size(cart, &size);
    CHECK(size == n, "cart size %d != %d", size, n);
    MPI_Topo_test(cart, &topo);
    CHECK(topo == MPI_CART, "Topo_test %d", topo);
    MPI_Cartdim_get(cart, &ndg);
    CHECK(ndg == nd, "Cartdim_get %d", ndg);
    MPI_Cart_get(cart, nd, gd, gp, gc);
    MPI_Cart_coords(cart, me, nd, c);
    int expect = 0;
    for (int i = 0; i < nd; i++) {
        CHECK(gd[i] == dims[i] && (gp[i] != 0) == (periods[i] != 0), "Cart_get dims/periods");
        CHECK(gc[i] == c[i], "Cart_get coords differ from Cart_coords");
        expect = expect * dims[i] + c[i];
    }
    CHECK(expect == me, "row-major coords of rank %d give %d", me, expect);
    int back;
    MPI_Cart_rank(cart, c, &back);
    CHECK(back == me, "Cart_rank(coords) %d != %d", back, me);
    int src[16], dst[16];
    for (int d = 0; d < nd; d++) {
        MPI_Cart_shift(cart, d, 1, &src[2 * d], &src[2 * d + 1]);
        dst[2 * d] = src[2 * d];
        dst[2 * d + 1] = src[2 * d + 1];
        for (int s = -1; s <= 1; s += 2) {
            int cc[8];
            memcpy(cc, c, sizeof cc);
            cc[d] += s;
            int want;
            if (cc[d] < 0 || cc[d] >= dims[d]) {
                if (!periods[d]) want = MPI_PROC_NULL;
                else { cc[d] = (cc[d] + dims[d]) % dims[d]; MPI_Cart_rank(cart, cc, &want); }
            } else {
                MPI_Cart_rank(cart, cc, &want);
            }
            int got = src[2 * d + (s > 0)];
            CHECK(got == want, "Cart_shift dim %d dir %d: %d != %d", d, s, got, want);
        }
    }
    /* neighbours agree on coordinates: send my coords to both neighbours in every dim */
    for (int d = 0; d < nd; d++) {
        int lo = src[2 * d], hi = src[2 * d + 1], got[8];
        MPI_Sendrecv(c, nd, MPI_INT, hi, 5, got, nd, MPI_INT, lo, 5, cart, MPI_STATUS_IGNORE);
        if (lo != MPI_PROC_NULL) {
            int want = (c[d] - 1 + dims[d]) % dims[d];
            CHECK(got[d] == want, "neighbour below in dim %d says coord %d, want %d", d,
                  got[d], want);
        }
    }
    neighbour_collectives(cart, 2 * nd, src, 2 * nd, dst, cart_pos, NULL);
    /* Cart_sub keeps the coordinates of the kept dimensions */
    int remain[8] = {0};
    remain[0] = 1;
    MPI_Comm sub;
    MPI_Cart_sub(cart, remain, &sub);
    int ssize, sc[8];
    MPI_Comm_size(sub, &ssize);
    CHECK(ssize == dims[0], "Cart_sub size %d", ssize);
    int sr;
    MPI_Comm_rank(sub, &sr);
    MPI_Cart_coords(sub, sr, 1, sc);
    CHECK(sc[0] == c[0], "Cart_sub coord %d != %d", sc[0], c[0]);
    MPI_Comm_free(&sub);
    /* Comm_dup keeps the topology */
    MPI_Comm dup;
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &topo);
    int dc[8];
    MPI_Cart_coords(dup, me, nd, dc);
    CHECK(topo == MPI_CART && memcmp(dc, c, nd * sizeof(int)) == 0, "Comm_dup lost topology");
    MPI_Comm_free(&dup);
    int mapped;
    MPI_Cart_map(cart, nd, dims, periods, &mapped);
    CHECK(mapped == MPI_UNDEFINED || (mapped >= 0 && mapped < n), "Cart_map %d", mapped);
    return n;
}

/* ---- MPI_Graph_create: ring with a chord to v+3, on the first n = P-1 processes ---- */
static int g_n;
static void graph_lists(int v, int *nb)  /* neighbours of v, in this order */
{
    nb[0] = (v + 1) % g_n; nb[1] = (v + g_n - 1) % g_n;
    nb[2] = (v + 3) % g_n; nb[3] = (v + g_n - 3) % g_n;
}
static int graph_me;
static int graph_pos(int j, void *ctx)
{
    int *mine = ctx, nb[4];
    graph_lists(mine[j], nb);
    for (int k = 0; k < 4; k++) if (nb[k] == graph_me) return k;
    return -1;
}

static int check_graph(MPI_Comm *out)
{
    g_n = wsize - 1;
    int *index = malloc(g_n * sizeof(int)), *edges = malloc(4 * g_n * sizeof(int));
    for (int v = 0; v < g_n; v++) {
        index[v] = 4 * (v + 1);
        graph_lists(v, edges + 4 * v);
    }
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, g_n, index, edges, 1, &g);
    *out = g;
    if (g == MPI_COMM_NULL) return g_n;
    int me, topo, nn, ne, cnt, nb[4], want[4];
    MPI_Comm_rank(g, &me);
    graph_me = me;
    MPI_Topo_test(g, &topo);
    CHECK(topo == MPI_GRAPH, "Topo_test %d", topo);
    MPI_Graphdims_get(g, &nn, &ne);
    CHECK(nn == g_n && ne == 4 * g_n, "Graphdims_get %d %d", nn, ne);
    int *gi = malloc(nn * sizeof(int)), *ge = malloc(ne * sizeof(int));
    MPI_Graph_get(g, nn, ne, gi, ge);
    CHECK(!memcmp(gi, index, nn * sizeof(int)) && !memcmp(ge, edges, ne * sizeof(int)),
          "Graph_get differs from the input");
    MPI_Graph_neighbors_count(g, me, &cnt);
    CHECK(cnt == 4, "Graph_neighbors_count %d", cnt);
    MPI_Graph_neighbors(g, me, 4, nb);
    graph_lists(me, want);
    CHECK(!memcmp(nb, want, sizeof want), "Graph_neighbors of %d", me);
    neighbour_collectives(g, 4, nb, 4, nb, graph_pos, nb);
    MPI_Comm dup;
    MPI_Comm_dup(g, &dup);
    MPI_Topo_test(dup, &topo);
    CHECK(topo == MPI_GRAPH, "Comm_dup lost the graph");
    MPI_Comm_free(&dup);
    int mapped;
    MPI_Graph_map(g, g_n, index, edges, &mapped);
    CHECK(mapped == MPI_UNDEFINED || (mapped >= 0 && mapped < g_n), "Graph_map %d", mapped);
    free(gi); free(ge); free(index); free(edges);
    return g_n;
}

/* ---- distributed graphs: vertex v sends to v+1 and v+3 (weights 10v+1, 10v+2) ---- */
static void out_lists(int v, int *d, int *w)
{
    d[0] = (v + 1) % wsize; d[1] = (v + 3) % wsize;
    w[0] = 10 * v + 1; w[1] = 10 * v + 2;
}
static void in_lists(int v, int *s, int *w)  /* sources in a fixed order, with their weights */
{
    s[0] = (v + wsize - 3) % wsize; w[0] = 10 * s[0] + 2;
    s[1] = (v + wsize - 1) % wsize; w[1] = 10 * s[1] + 1;
}
static int dist_me;
static int dist_pos(int j, void *ctx)
{
    int *src = ctx, d[2], w[2];
    out_lists(src[j], d, w);
    return d[0] == dist_me ? 0 : 1;
}

static int check_dist(int general, MPI_Comm *out)
{
    int d[2], dw[2], s[2], sw[2];
    MPI_Comm g;
    if (!general) {
        out_lists(wrank, d, dw);
        in_lists(wrank, s, sw);
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, s, sw, 2, d, dw, MPI_INFO_NULL, 1,
                                       &g);
    } else {  /* process r describes the out-edges of vertex r+1 */
        int v = (wrank + 1) % wsize, deg = 2;
        out_lists(v, d, dw);
        MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &v, &deg, d, dw, MPI_INFO_NULL, 1, &g);
    }
    *out = g;
    int me, topo, nin, nout, weighted;
    MPI_Comm_rank(g, &me);
    dist_me = me;
    MPI_Topo_test(g, &topo);
    CHECK(topo == MPI_DIST_GRAPH, "Topo_test %d", topo);
    MPI_Dist_graph_neighbors_count(g, &nin, &nout, &weighted);
    CHECK(nin == 2 && nout == 2 && weighted, "Dist_graph_neighbors_count %d %d %d", nin, nout,
          weighted);
    int gs[2], gsw[2], gd[2], gdw[2], ws[2], wsw[2], wd[2], wdw[2];
    MPI_Dist_graph_neighbors(g, 2, gs, gsw, 2, gd, gdw);
    out_lists(me, wd, wdw);
    in_lists(me, ws, wsw);
    if (!general) {  /* the order given is kept */
        CHECK(!memcmp(gs, ws, sizeof ws) && !memcmp(gsw, wsw, sizeof wsw),
              "sources of vertex %d: %d(%d) %d(%d)", me, gs[0], gsw[0], gs[1], gsw[1]);
        CHECK(!memcmp(gd, wd, sizeof wd) && !memcmp(gdw, wdw, sizeof wdw),
              "destinations of vertex %d: %d(%d) %d(%d)", me, gd[0], gdw[0], gd[1], gdw[1]);
    } else {  /* order unspecified: compare as sets of (neighbour, weight) */
        for (int k = 0; k < 2; k++) {
            int okd = 0, oks = 0;
            for (int j = 0; j < 2; j++) {
                okd |= gd[j] == wd[k] && gdw[j] == wdw[k];
                oks |= gs[j] == ws[k] && gsw[j] == wsw[k];
            }
            CHECK(okd && oks, "general dist graph: vertex %d misses an edge", me);
        }
    }
    /* the neighbour collectives follow the lists the library reports */
    int pos_src[2];
    memcpy(pos_src, gs, sizeof gs);
    if (general) {  /* neighbour order unspecified: blocks carry their destination */
        neighbour_collectives(g, 2, gs, 2, gd, NULL, NULL);
    } else {
        neighbour_collectives(g, 2, gs, 2, gd, dist_pos, pos_src);
    }
    MPI_Comm dup;
    MPI_Comm_dup(g, &dup);
    MPI_Topo_test(dup, &topo);
    CHECK(topo == MPI_DIST_GRAPH, "Comm_dup lost the distributed graph");
    MPI_Comm_free(&dup);
    return wsize;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm comm = MPI_COMM_NULL;
    int n = 0;
    const char *kind = argc > 1 ? argv[1] : "cart";
    if (!strcmp(kind, "cart")) n = check_cart(argc, argv, &comm);
    else if (!strcmp(kind, "graph")) n = check_graph(&comm);
    else if (!strcmp(kind, "adjacent")) n = check_dist(0, &comm);
    else if (!strcmp(kind, "dist")) n = check_dist(1, &comm);
    int newrank = -1;
    if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &newrank);
    int moved = comm != MPI_COMM_NULL && newrank != wrank, isnull = comm == MPI_COMM_NULL;
    int in[3] = {errors, moved, isnull}, sum[3];
    MPI_Reduce(in, sum, 3, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    /* every rank of the new communicator is taken exactly once */
    int *all = malloc(wsize * sizeof(int));
    MPI_Gather(&newrank, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (wrank == 0) {
        int *seen = calloc(n + 1, sizeof(int)), bad = 0;
        for (int p = 0; p < wsize; p++) {
            if (all[p] >= n || (all[p] >= 0 && seen[all[p]]++)) bad++;
        }
        sum[0] += bad;
        printf("RESULT errors=%d moved=%d null=%d ranks=", sum[0], sum[1], sum[2]);
        for (int p = 0; p < wsize; p++) printf(p ? ",%d" : "%d", all[p]);
        printf("\n");
        free(seen);
    }
    free(all);
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
