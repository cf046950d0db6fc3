/* rankmap halo exchange (nearest-neighbour stencil) for SimGrid SMPI.
 *
 * Usage: halo GRID PERIODIC star|box BYTES
 *   GRID      process grid, e.g. 32x32 or 8x8x4 (its product must be the number of ranks)
 *   PERIODIC  one digit per dimension, 1 = wraps, e.g. 11 or 100
 *   star|box  2*d axis neighbours, or all 3^d - 1 neighbours (diagonals included)
 *   BYTES     message size sent to every neighbour
 * Ranks are numbered on the grid as MPI_Cart_create numbers them (row-major, last dimension
 * fastest), as rankmap's stencil pattern does. Rank r sends BYTES to r + o for every offset
 * o of the neighbourhood; a neighbour off a non-periodic edge is skipped, and so is a
 * neighbour that is r itself (a periodic dimension of size 1). On a periodic dimension of
 * size 2 both sides are the same rank and both messages are sent. Message k (offset k) is
 * tagged k, so rank r receives it from r - o.
 * One phase: barrier, every rank posts all its receives then all its sends (MPI_Irecv /
 * MPI_Isend) and waits for them. Rank 0 prints "phase 0 SECONDS", from the earliest start
 * to the latest end over all ranks. Buffers come from SMPI_SHARED_MALLOC.
 */
#include <mpi.h>
#include "phase_report.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIMS 16

static void die(const char *msg, const char *value) {
  fprintf(stderr, "halo: %s%s\n", msg, value ? value : "");
  MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Parses "AxBxC" into dims; returns the number of dimensions. */
static int parse_grid(const char *text, int *dims) {
  int nd = 0;
  const char *p = text;
  while (*p) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || v < 1 || nd == MAX_DIMS) die("bad grid ", text);
    dims[nd++] = (int)v;
    if (*end == 'x') end++;
    else if (*end != '\0') die("bad grid ", text);
    p = end;
  }
  if (nd == 0) die("bad grid ", text);
  return nd;
}

/* Neighbour offsets (n_offs x nd, row-major) in rankmap's order; returns their number. */
static int make_offsets(int nd, int box, int *offs) {
  int n = 0;
  if (!box) {
    for (int d = 0; d < nd; d++)
      for (int s = -1; s <= 1; s += 2, n++)
        for (int e = 0; e < nd; e++) offs[n * nd + e] = (e == d) ? s : 0;
    return n;
  }
  int total = 1;
  for (int d = 0; d < nd; d++) total *= 3;
  for (int code = 0; code < total; code++) {  /* last dimension fastest, -1, 0, +1 */
    int rem = code, any = 0;
    for (int d = nd - 1; d >= 0; d--) {
      offs[n * nd + d] = rem % 3 - 1;
      any |= offs[n * nd + d] != 0;
      rem /= 3;
    }
    if (any) n++;
  }
  return n;
}

/* Rank at coords + sign * off, or -1 if it falls off a non-periodic edge or is rank itself. */
static int neighbour(int rank, int nd, const int *dims, const int *per, const int *coords,
                     const int *off, int sign) {
  int target = 0;
  for (int d = 0; d < nd; d++) {
    int x = coords[d] + sign * off[d];
    if (x < 0 || x >= dims[d]) {
      if (!per[d]) return -1;
      x = (x % dims[d] + dims[d]) % dims[d];
    }
    target = target * dims[d] + x;
  }
  return target == rank ? -1 : target;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 5) die("usage: halo GRID PERIODIC star|box BYTES", NULL);
  int dims[MAX_DIMS], per[MAX_DIMS], coords[MAX_DIMS];
  int nd = parse_grid(argv[1], dims);
  long n = 1;
  for (int d = 0; d < nd; d++) n *= dims[d];
  if (n != size) die("grid size differs from the number of ranks: ", argv[1]);
  if ((int)strlen(argv[2]) != nd || strspn(argv[2], "01") != strlen(argv[2]))
    die("bad periodic flags (one 0/1 digit per dimension): ", argv[2]);
  for (int d = 0; d < nd; d++) per[d] = argv[2][d] == '1';
  int box = strcmp(argv[3], "box") == 0;
  if (!box && strcmp(argv[3], "star") != 0) die("neighbourhood must be star or box: ", argv[3]);
  char *end;
  long long bytes = strtoll(argv[4], &end, 10);
  if (*end != '\0' || bytes < 0 || bytes > 2147483647LL) die("bad message size ", argv[4]);

  for (int d = nd - 1, rem = rank; d >= 0; d--) {
    coords[d] = rem % dims[d];
    rem /= dims[d];
  }
  int max_offs = 1;
  for (int d = 0; d < nd; d++) max_offs *= 3;
  int *offs = malloc((size_t)max_offs * nd * sizeof(int));
  int n_offs = make_offsets(nd, box, offs);
  MPI_Request *req = malloc(2 * (size_t)n_offs * sizeof(MPI_Request));
  char *sbuf = SMPI_SHARED_MALLOC(bytes ? bytes : 1), *rbuf = SMPI_SHARED_MALLOC(bytes ? bytes : 1);

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  int k = 0;
  for (int o = 0; o < n_offs; o++) {
    int from = neighbour(rank, nd, dims, per, coords, offs + o * nd, -1);
    if (from >= 0) MPI_Irecv(rbuf, (int)bytes, MPI_BYTE, from, o, MPI_COMM_WORLD, &req[k++]);
  }
  for (int o = 0; o < n_offs; o++) {
    int to = neighbour(rank, nd, dims, per, coords, offs + o * nd, +1);
    if (to >= 0) MPI_Isend(sbuf, (int)bytes, MPI_BYTE, to, o, MPI_COMM_WORLD, &req[k++]);
  }
  MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
  double t1 = MPI_Wtime();
  report_phase(0, t0, t1);

  SMPI_SHARED_FREE(sbuf);
  SMPI_SHARED_FREE(rbuf);
  free(req);
  free(offs);
  MPI_Finalize();
  return 0;
}
