/* rankmap 2-D decomposed FFT transposes for SimGrid SMPI.
 *
 * Usage: fft2d P0xP1 BYTES
 * Ranks sit on a P0 x P1 grid, rank = i*P1 + j (as rankmap's fft2d pattern numbers them).
 * Phase 0 (dim0): MPI_Alltoall inside every column communicator (ranks sharing j, ordered
 * by i); phase 1 (dim1): MPI_Alltoall inside every row communicator (ranks sharing i,
 * ordered by j). Both come from MPI_Comm_split. Every rank sends BYTES to every member of
 * its communicator; the block a rank "sends" to itself is a local copy inside MPI_Alltoall
 * and crosses no link, as rankmap's pattern has no self flow.
 * Every phase: barrier on MPI_COMM_WORLD, the all-to-all, then rank 0 prints
 * "phase P SECONDS", from the earliest start to the latest end over all ranks.
 * Which algorithm SMPI uses for MPI_Alltoall is set on the smpirun command line
 * (rankmap runs it with --cfg=smpi/alltoall:basic_linear). Buffers come from
 * SMPI_SHARED_MALLOC.
 */
#include <mpi.h>
#include "phase_report.h"
#include <stdio.h>
#include <stdlib.h>

static void die(const char *msg, const char *value) {
  fprintf(stderr, "fft2d: %s%s\n", msg, value ? value : "");
  MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Times one all-to-all of `bytes` per pair on `comm` and reports it as phase `phase`. */
static void timed_alltoall(int phase, MPI_Comm comm, long long bytes) {
  int members;
  MPI_Comm_size(comm, &members);
  size_t total = (size_t)bytes * members;
  char *sbuf = SMPI_SHARED_MALLOC(total ? total : 1), *rbuf = SMPI_SHARED_MALLOC(total ? total : 1);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  MPI_Alltoall(sbuf, (int)bytes, MPI_BYTE, rbuf, (int)bytes, MPI_BYTE, comm);
  double t1 = MPI_Wtime();
  report_phase(phase, t0, t1);
  SMPI_SHARED_FREE(sbuf);
  SMPI_SHARED_FREE(rbuf);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, p0, p1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 3) die("usage: fft2d P0xP1 BYTES", NULL);
  char tail;
  if (sscanf(argv[1], "%dx%d%c", &p0, &p1, &tail) != 2 || p0 < 1 || p1 < 1)
    die("bad grid ", argv[1]);
  if ((long)p0 * p1 != size) die("grid size differs from the number of ranks: ", argv[1]);
  char *end;
  long long bytes = strtoll(argv[2], &end, 10);
  if (*end != '\0' || bytes < 0 || bytes > 2147483647LL) die("bad message size ", argv[2]);

  int i = rank / p1, j = rank % p1;
  MPI_Comm column, row;
  MPI_Comm_split(MPI_COMM_WORLD, j, i, &column);  /* dim0: ranks i*P1 + j, i = 0..P0-1 */
  MPI_Comm_split(MPI_COMM_WORLD, i, j, &row);     /* dim1: ranks i*P1 + j, j = 0..P1-1 */
  timed_alltoall(0, column, bytes);
  timed_alltoall(1, row, bytes);
  MPI_Comm_free(&column);
  MPI_Comm_free(&row);
  MPI_Finalize();
  return 0;
}
