/* rankmap PMPI library: C entry points that record sends and collectives, MPI_Pcontrol phases
 * and the write-out at MPI_Finalize. Each calls the MPI library's PMPI_ twin, then records
 * what it sent: a call MPI refused (an error code returned under MPI_ERRORS_RETURN) sent
 * nothing and is not counted, and its arguments (a rank out of range) are never looked at. */
#include "rankmap_pmpi.h"

#define BYTES(c, t) rm_type_bytes((c), (t))

/* ---- point to point ---- */

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    int rc = PMPI_Send(buf, count, type, dest, tag, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_record_send(comm, dest, BYTES(count, type));
    return rc;
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    int rc = PMPI_Bsend(buf, count, type, dest, tag, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_record_send(comm, dest, BYTES(count, type));
    return rc;
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    int rc = PMPI_Ssend(buf, count, type, dest, tag, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_record_send(comm, dest, BYTES(count, type));
    return rc;
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    int rc = PMPI_Rsend(buf, count, type, dest, tag, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_record_send(comm, dest, BYTES(count, type));
    return rc;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    int rc = PMPI_Isend(buf, count, type, dest, tag, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_record_send(comm, dest, BYTES(count, type));
    return rc;
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    int rc = PMPI_Ibsend(buf, count, type, dest, tag, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_record_send(comm, dest, BYTES(count, type));
    return rc;
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    int rc = PMPI_Issend(buf, count, type, dest, tag, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_record_send(comm, dest, BYTES(count, type));
    return rc;
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    int rc = PMPI_Irsend(buf, count, type, dest, tag, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_record_send(comm, dest, BYTES(count, type));
    return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                                  recvtype, source, recvtag, comm, status);
    if (rc != MPI_SUCCESS) return rc;
    rm_record_send(comm, dest, BYTES(sendcount, sendtype));
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
    if (rc != MPI_SUCCESS) return rc;
    rm_record_send(comm, dest, BYTES(count, type));
    return rc;
}

/* persistent sends: counted at every MPI_Start/MPI_Startall */
#define PERSISTENT(NAME)                                                                      \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,          \
                   MPI_Comm comm, MPI_Request *req)                                           \
    {                                                                                         \
        int rc = PMPI_##NAME(buf, count, type, dest, tag, comm, req);                         \
        if (rc == MPI_SUCCESS) rm_persistent_add(*req, comm, dest, BYTES(count, type));       \
        return rc;                                                                            \
    }
PERSISTENT(Send_init)
PERSISTENT(Bsend_init)
PERSISTENT(Ssend_init)
PERSISTENT(Rsend_init)

int MPI_Start(MPI_Request *req)
{
    int rc = PMPI_Start(req);
    if (rc != MPI_SUCCESS) return rc;
    rm_persistent_start(*req);
    return rc;
}

int MPI_Startall(int count, MPI_Request reqs[])
{
    int rc = PMPI_Startall(count, reqs);
    if (rc != MPI_SUCCESS) return rc;
    for (int i = 0; i < count; i++) rm_persistent_start(reqs[i]);
    return rc;
}

int MPI_Request_free(MPI_Request *req)
{
    if (req) rm_persistent_remove(*req);
    return PMPI_Request_free(req);
}

/* ---- collectives (blocking and nonblocking record the same transfers) ---- */

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    int rc = PMPI_Bcast(buf, count, type, root, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_from_root(comm, root, BYTES(count, type));
    return rc;
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request *req)
{
    int rc = PMPI_Ibcast(buf, count, type, root, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_from_root(comm, root, BYTES(count, type));
    return rc;
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    int rc = PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_to_root(comm, root, BYTES(count, type));
    return rc;
}

int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_to_root(comm, root, BYTES(count, type));
    return rc;
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    int rc = PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_allreduce(comm, BYTES(count, type));
    return rc;
}

int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_allreduce(comm, BYTES(count, type));
    return rc;
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm)
{
    int rc = PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_to_root(comm, root, BYTES(scount, stype));
    return rc;
}

int MPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_to_root(comm, root, BYTES(scount, stype));
    return rc;
}

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                MPI_Comm comm)
{
    int rc = PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_to_root(comm, root, BYTES(scount, stype));
    return rc;
}

int MPI_Igatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                 const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                 MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_to_root(comm, root, BYTES(scount, stype));
    return rc;
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
    int rc = PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_scatter(comm, root, scount, NULL, stype);
    return rc;
}

int MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_scatter(comm, root, scount, NULL, stype);
    return rc;
}

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    int rc = PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_scatter(comm, root, 0, scounts, stype);
    return rc;
}

int MPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[],
                  MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                  MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_scatter(comm, root, 0, scounts, stype);
    return rc;
}

/* Allgather/Alltoall: the receive side gives the block size (type signatures match), which
 * also covers MPI_IN_PLACE */
int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    int rc = PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_to_all(comm, BYTES(rcount, rtype));
    return rc;
}

int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_to_all(comm, BYTES(rcount, rtype));
    return rc;
}

static int my_rank(MPI_Comm comm)
{
    int r = 0;
    PMPI_Comm_rank(comm, &r);
    return r;
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    int rc = PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    if (rc != MPI_SUCCESS) return rc;
    if (rm_recording()) rm_coll_to_all(comm, BYTES(rcounts[my_rank(comm)], rtype));
    return rc;
}

int MPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                    MPI_Request *req)
{
    int rc = PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    if (rm_recording()) rm_coll_to_all(comm, BYTES(rcounts[my_rank(comm)], rtype));
    return rc;
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm)
{
    int rc = PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_personal(comm, rcount, NULL, rtype, NULL);
    return rc;
}

int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_personal(comm, rcount, NULL, rtype, NULL);
    return rc;
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                  MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                  MPI_Datatype rtype, MPI_Comm comm)
{
    int rc = PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
    if (rc != MPI_SUCCESS) return rc;
    if (sbuf == MPI_IN_PLACE) rm_coll_personal(comm, 0, rcounts, rtype, NULL);
    else rm_coll_personal(comm, 0, scounts, stype, NULL);
    return rc;
}

int MPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                   MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                   MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,
                                    req);
    if (rc != MPI_SUCCESS) return rc;
    if (sbuf == MPI_IN_PLACE) rm_coll_personal(comm, 0, rcounts, rtype, NULL);
    else rm_coll_personal(comm, 0, scounts, stype, NULL);
    return rc;
}

int MPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                  const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                  const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
    int rc = PMPI_Alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
    if (rc != MPI_SUCCESS) return rc;
    if (sbuf == MPI_IN_PLACE) rm_coll_personal(comm, 0, rcounts, MPI_DATATYPE_NULL, rtypes);
    else rm_coll_personal(comm, 0, scounts, MPI_DATATYPE_NULL, stypes);
    return rc;
}

int MPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                   const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                   const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                   MPI_Request *req)
{
    int rc = PMPI_Ialltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
                                    req);
    if (rc != MPI_SUCCESS) return rc;
    if (sbuf == MPI_IN_PLACE) rm_coll_personal(comm, 0, rcounts, MPI_DATATYPE_NULL, rtypes);
    else rm_coll_personal(comm, 0, scounts, MPI_DATATYPE_NULL, stypes);
    return rc;
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm)
{
    int rc = PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_personal(comm, rcount, NULL, type, NULL);
    return rc;
}

int MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Ireduce_scatter_block(sbuf, rbuf, rcount, type, op, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_personal(comm, rcount, NULL, type, NULL);
    return rc;
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm)
{
    int rc = PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_personal(comm, 0, rcounts, type, NULL);
    return rc;
}

int MPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                        MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Ireduce_scatter(sbuf, rbuf, rcounts, type, op, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_personal(comm, 0, rcounts, type, NULL);
    return rc;
}

int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm)
{
    int rc = PMPI_Scan(sbuf, rbuf, count, type, op, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_scan(comm, BYTES(count, type));
    return rc;
}

int MPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Iscan(sbuf, rbuf, count, type, op, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_scan(comm, BYTES(count, type));
    return rc;
}

int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm)
{
    int rc = PMPI_Exscan(sbuf, rbuf, count, type, op, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_scan(comm, BYTES(count, type));
    return rc;
}

int MPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Iexscan(sbuf, rbuf, count, type, op, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_scan(comm, BYTES(count, type));
    return rc;
}

/* ---- neighbourhood collectives: block i to out-neighbour i ---- */

int MPI_Neighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                           int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    int rc = PMPI_Neighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_neighbors(comm, scount, NULL, stype, NULL);
    return rc;
}

int MPI_Ineighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Ineighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_neighbors(comm, scount, NULL, stype, NULL);
    return rc;
}

int MPI_Neighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            const int rcounts[], const int displs[], MPI_Datatype rtype,
                            MPI_Comm comm)
{
    int rc = PMPI_Neighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_neighbors(comm, scount, NULL, stype, NULL);
    return rc;
}

int MPI_Ineighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                             const int rcounts[], const int displs[], MPI_Datatype rtype,
                             MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Ineighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm,
                                              req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_neighbors(comm, scount, NULL, stype, NULL);
    return rc;
}

int MPI_Neighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    int rc = PMPI_Neighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_neighbors(comm, scount, NULL, stype, NULL);
    return rc;
}

int MPI_Ineighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                           int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Ineighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_neighbors(comm, scount, NULL, stype, NULL);
    return rc;
}

int MPI_Neighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                           MPI_Datatype stype, void *rbuf, const int rcounts[],
                           const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    int rc = PMPI_Neighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype,
                                            comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_neighbors(comm, 0, scounts, stype, NULL);
    return rc;
}

int MPI_Ineighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                            MPI_Datatype stype, void *rbuf, const int rcounts[],
                            const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                            MPI_Request *req)
{
    int rc = PMPI_Ineighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls,
                                             rtype, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_neighbors(comm, 0, scounts, stype, NULL);
    return rc;
}

int MPI_Neighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
    int rc = PMPI_Neighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
                                            rtypes, comm);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_neighbors(comm, 0, scounts, MPI_DATATYPE_NULL, stypes);
    return rc;
}

int MPI_Ineighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype rtypes[],
                            MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Ineighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
                                             rtypes, comm, req);
    if (rc != MPI_SUCCESS) return rc;
    rm_coll_neighbors(comm, 0, scounts, MPI_DATATYPE_NULL, stypes);
    return rc;
}

/* ---- phases and the end of the run ---- */

int MPI_Pcontrol(const int level, ...)
{
    /* MPICH's Fortran MPI_PCONTROL comes here through mpi_pcontrol_, which counted it */
    if (rm_recording() && !rm_in_fortran) rm_record_phase(level);
    return PMPI_Pcontrol(level);
}

int MPI_Finalize(void)
{
    rm_record_finalize();
    return PMPI_Finalize();
}
