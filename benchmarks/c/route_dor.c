/* Reference for the core benchmark: the plainest single-threaded C loop that routes a list of
 * flows by dimension-order routing on a torus and accumulates bytes and streams per directed
 * link (same dense link layout as rankmap: node*2*ndim + 2*dim + (dir<0)).
 *
 * usage: route_dor FLOWS.bin NDIM D0 D1 ... REPEATS
 * FLOWS.bin: int64 n, then n int64 src, n int64 dst, n float64 bytes.
 * Prints the median routing time in seconds over REPEATS runs (file reading excluded) and the
 * total of link bytes as a check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: %s FLOWS.bin NDIM D0 .. REPEATS\n", argv[0]); return 2; }
    int nd = atoi(argv[2]);
    int64_t dims[8], strides[8], nodes = 1;
    for (int d = 0; d < nd; d++) { dims[d] = atoll(argv[3 + d]); strides[d] = nodes; nodes *= dims[d]; }
    int repeats = atoi(argv[3 + nd]);
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    int64_t n;
    if (fread(&n, 8, 1, f) != 1) return 2;
    int64_t *src = malloc(8 * n), *dst = malloc(8 * n);
    double *b = malloc(8 * n);
    if (fread(src, 8, n, f) != (size_t)n || fread(dst, 8, n, f) != (size_t)n ||
        fread(b, 8, n, f) != (size_t)n) return 2;
    fclose(f);
    int64_t nl = nodes * 2 * nd;
    double *lb = malloc(8 * nl);
    int64_t *ls = malloc(8 * nl);
    double times[64], total = 0;
    if (repeats > 64) repeats = 64;
    for (int r = 0; r < repeats; r++) {
        memset(lb, 0, 8 * nl);
        memset(ls, 0, 8 * nl);
        double t0 = now();
        for (int64_t i = 0; i < n; i++) {
            int64_t node = src[i], t = dst[i];
            if (node == t) continue;
            for (int d = 0; d < nd; d++) {
                int64_t k = dims[d], c = (node / strides[d]) % k, tc = (t / strides[d]) % k;
                int64_t delta = ((tc - c) % k + k) % k, h, dir;
                if (delta == 0) continue;
                if (2 * delta <= k) { h = delta; dir = 1; } else { h = k - delta; dir = -1; }
                for (int64_t s = 0; s < h; s++) {
                    int64_t li = node * 2 * nd + 2 * d + (dir < 0);
                    lb[li] += b[i];
                    ls[li] += 1;
                    int64_t c2 = c + dir;
                    if (c2 == k) c2 = 0; else if (c2 < 0) c2 = k - 1;
                    node += (c2 - c) * strides[d];
                    c = c2;
                }
            }
        }
        times[r] = now() - t0;
    }
    for (int64_t l = 0; l < nl; l++) total += lb[l];
    qsort(times, repeats, sizeof(double), cmp);
    printf("%.6f %.6e\n", times[repeats / 2], total);
    return 0;
}
