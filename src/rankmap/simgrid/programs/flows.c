/* rankmap flow replayer for SimGrid SMPI.
 *
 * Usage: flows FILE
 * FILE (little-endian, written by rankmap.simgrid.flowfile):
 *   int64 magic 0x70616d6b6e6172 ("rankmap"), int64 n_ranks, int64 n_phases
 *   int64 send_index[n_phases * n_ranks + 1]   offsets (records) of rank r's sends in phase p
 *   int64 recv_index[n_phases * n_ranks + 1]   the same for receives
 *   send records: int64 peer, int64 bytes      (sorted by phase, source, flow order)
 *   recv records: int64 peer, int64 bytes      (sorted by phase, destination, flow order)
 * Every phase: barrier, then every rank posts all its receives and sends at once
 * (MPI_Irecv/MPI_Isend) and waits for them. Rank 0 prints "phase P SECONDS" where SECONDS
 * runs from the earliest phase start to the latest phase end over all ranks.
 * Buffers come from SMPI_SHARED_MALLOC so simulated memory stays flat.
 */
#include <mpi.h>
#include "phase_report.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void die(const char *msg) {
  fprintf(stderr, "flows: %s\n", msg);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

static void read_at(FILE *fh, long offset, void *buf, size_t n) {
  if (n == 0) return;
  if (fseek(fh, offset, SEEK_SET) != 0 || fread(buf, 1, n, fh) != n) die("truncated flow file");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) die("usage: flows FILE");
  FILE *fh = fopen(argv[1], "rb");
  if (!fh) die("cannot open flow file");
  int64_t head[3];
  read_at(fh, 0, head, sizeof head);
  if (head[0] != 0x70616d6b6e6172LL) die("not a rankmap flow file");
  if (head[1] != size) die("flow file is for another number of ranks");
  int64_t n_phases = head[2];
  int64_t n_index = n_phases * size + 1;
  long send_index_at = sizeof head;
  long recv_index_at = send_index_at + n_index * 8;
  int64_t n_send, n_recv;
  read_at(fh, send_index_at + (n_index - 1) * 8, &n_send, 8);
  read_at(fh, recv_index_at + (n_index - 1) * 8, &n_recv, 8);
  long send_at = recv_index_at + n_index * 8;
  long recv_at = send_at + n_send * 16;

  for (int64_t p = 0; p < n_phases; p++) {
    int64_t se[2], re[2];
    read_at(fh, send_index_at + (p * size + rank) * 8, se, 16);
    read_at(fh, recv_index_at + (p * size + rank) * 8, re, 16);
    int64_t ns = se[1] - se[0], nr = re[1] - re[0];
    int64_t *srec = malloc((ns + 1) * 16), *rrec = malloc((nr + 1) * 16);
    read_at(fh, send_at + se[0] * 16, srec, ns * 16);
    read_at(fh, recv_at + re[0] * 16, rrec, nr * 16);
    int64_t biggest = 1;
    for (int64_t i = 0; i < ns; i++) if (srec[2 * i + 1] > biggest) biggest = srec[2 * i + 1];
    for (int64_t i = 0; i < nr; i++) if (rrec[2 * i + 1] > biggest) biggest = rrec[2 * i + 1];
    char *sbuf = SMPI_SHARED_MALLOC(biggest), *rbuf = SMPI_SHARED_MALLOC(biggest);
    MPI_Request *req = malloc((ns + nr + 1) * sizeof(MPI_Request));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int k = 0;
    for (int64_t i = 0; i < nr; i++)
      MPI_Irecv(rbuf, (int)rrec[2 * i + 1], MPI_BYTE, (int)rrec[2 * i], (int)p, MPI_COMM_WORLD, &req[k++]);
    for (int64_t i = 0; i < ns; i++)
      MPI_Isend(sbuf, (int)srec[2 * i + 1], MPI_BYTE, (int)srec[2 * i], (int)p, MPI_COMM_WORLD, &req[k++]);
    MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
    double t1 = MPI_Wtime();
    report_phase(p, t0, t1);
    SMPI_SHARED_FREE(sbuf);
    SMPI_SHARED_FREE(rbuf);
    free(req);
    free(srec);
    free(rrec);
  }
  fclose(fh);
  MPI_Finalize();
  return 0;
}
