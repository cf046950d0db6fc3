/* rankmap pairwise exchange for SimGrid SMPI (the pairs:random pattern).
 *
 * Usage: pairs PARTNERS BYTES
 * PARTNERS: text, line r = the partner of rank r, or -1 for a rank that sits out.
 * One phase: barrier, then every paired rank exchanges BYTES with its partner in both
 * directions at once (MPI_Sendrecv). Rank 0 prints "phase 0 SECONDS", SECONDS running from
 * the earliest start to the latest end over all ranks. Buffers come from SMPI_SHARED_MALLOC.
 */
#include <mpi.h>
#include "phase_report.h"
#include <stdio.h>
#include <stdlib.h>

static void die(const char *msg) {
  fprintf(stderr, "pairs: %s\n", msg);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) die("usage: pairs PARTNERS BYTES");
  long long nbytes = atoll(argv[2]);
  if (nbytes < 0 || nbytes > 2147483647LL) die("BYTES must be in 0..2^31-1");
  FILE *fh = fopen(argv[1], "r");
  if (!fh) die("cannot open the partner file");
  int partner = -1;
  for (int r = 0; r <= rank; r++)
    if (fscanf(fh, "%d", &partner) != 1) die("partner file is shorter than the ranks");
  fclose(fh);
  if (partner >= size || partner == rank) die("bad partner in the partner file");
  char *sbuf = SMPI_SHARED_MALLOC(nbytes + 1), *rbuf = SMPI_SHARED_MALLOC(nbytes + 1);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (partner >= 0)
    MPI_Sendrecv(sbuf, (int)nbytes, MPI_BYTE, partner, 0, rbuf, (int)nbytes, MPI_BYTE, partner, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  double t1 = MPI_Wtime();
  report_phase(0, t0, t1);
  SMPI_SHARED_FREE(sbuf);
  SMPI_SHARED_FREE(rbuf);
  MPI_Finalize();
  return 0;
}
