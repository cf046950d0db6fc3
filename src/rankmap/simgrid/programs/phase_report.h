/* Shared by rankmap's SMPI programs: the timing report runner.py parses.
 *
 * report_phase(P, t0, t1): collective over MPI_COMM_WORLD; rank 0 prints "phase P SECONDS",
 * SECONDS running from the earliest t0 to the latest t1 over all ranks.
 */
#ifndef RANKMAP_PHASE_REPORT_H
#define RANKMAP_PHASE_REPORT_H
#include <mpi.h>
#include <stdio.h>

static void report_phase(long long phase, double t0, double t1) {
  int rank;
  double start, stop;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Reduce(&t0, &start, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&t1, &stop, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("phase %lld %.9e\n", phase, stop - start);
}
#endif
