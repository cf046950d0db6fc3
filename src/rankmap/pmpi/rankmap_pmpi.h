/* rankmap PMPI library: shared declarations of the reordering and recording parts.
 *
 * The library is loaded with LD_PRELOAD; it defines MPI_* (C) and mpi_*_ (Fortran) entry
 * points and calls the MPI library through its PMPI_* profiling interface.
 */
#ifndef RANKMAP_PMPI_H
#define RANKMAP_PMPI_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* ---- common.c ---- */

/* getenv that treats an empty value as unset */
const char *rm_env(const char *name);
/* "rankmap: <text>" on stderr, one line */
void rm_log(const char *fmt, ...);
/* 1 or 0 for a yes/no word (1, yes, true, on / 0, no, false, off: any case), -1 otherwise */
int rm_yes_no(const char *v);
/* whether RANKMAP_VERBOSE is a "yes" word or a level above 0; another value is off, said once
 * ("RANKMAP_VERBOSE='maybe' is not 0 or 1") */
int rm_verbose(void);
/* run argv (argv[0] found on PATH unless it has a '/') with a time limit in seconds;
 * the child's stderr goes to err_path. Returns the exit status, -1 when it could not start,
 * -2 on timeout (the child is killed), -3 when a SIGCHLD handler of the program took its
 * status (it has exited; its result file tells). A SIGCHLD the program ignores is set to
 * the default while the child runs, then restored. */
int rm_run(char *const argv[], double timeout_s, const char *err_path);
/* last non-empty line of a text file (for error messages), into out */
void rm_last_line(const char *path, char *out, size_t n);

/* Re-entrancy guard: Fortran wrappers that forward to the MPI library's Fortran layer set it,
 * so that C wrappers reached from inside that layer do not count the same message twice. */
extern __thread int rm_in_fortran;

/* ---- record.c ---- */

/* account one transfer of nbytes from the calling process to rank `peer` of comm (peer in the
 * remote group for intercommunicators) */
void rm_record_send(MPI_Comm comm, int peer, int64_t nbytes);
/* bytes of count elements of type (0 on error) */
int64_t rm_type_bytes(int count, MPI_Datatype type);
/* start a new phase (MPI_Pcontrol) */
void rm_record_phase(int level);
/* write the recording (collective over MPI_COMM_WORLD; called before PMPI_Finalize) */
void rm_record_finalize(void);
/* whether recording is on (RANKMAP_RECORD set) */
int rm_recording(void);
/* persistent send requests */
void rm_persistent_add(MPI_Request req, MPI_Comm comm, int peer, int64_t nbytes);
void rm_persistent_start(MPI_Request req);
void rm_persistent_remove(MPI_Request req);

/* collectives: logical transfers (record.c documents each algorithm) */
void rm_coll_from_root(MPI_Comm comm, int root, int64_t bytes);
void rm_coll_to_root(MPI_Comm comm, int root, int64_t bytes);
void rm_coll_scatter(MPI_Comm comm, int root, int count, const int *counts, MPI_Datatype type);
void rm_coll_to_all(MPI_Comm comm, int64_t bytes);
void rm_coll_personal(MPI_Comm comm, int count, const int *counts, MPI_Datatype type,
                      const MPI_Datatype *types);
void rm_coll_allreduce(MPI_Comm comm, int64_t bytes);
void rm_coll_scan(MPI_Comm comm, int64_t bytes);
void rm_coll_neighbors(MPI_Comm comm, int count, const int *counts, MPI_Datatype type,
                       const MPI_Datatype *types);

/* ---- topo.c ---- */
int rm_cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                   int reorder, MPI_Comm *out);
int rm_graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                    int reorder, MPI_Comm *out);
int rm_dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                  const int sourceweights[], int outdegree,
                                  const int destinations[], const int destweights[],
                                  MPI_Info info, int reorder, MPI_Comm *out);
int rm_dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                         const int destinations[], const int weights[], MPI_Info info,
                         int reorder, MPI_Comm *out);

#endif
