/* blocking-collectives.c: a profiling-interface (PMPI) shim, preloaded
 * into hp-train by run-collective-checks.sh, that takes away what the
 * library's default checks add to a collective, to measure what they cost
 * (README.md, "The cost of the default checks").
 *
 * Each non-blocking collective the library starts is made at once by the
 * blocking call, and its request comes back as MPI_REQUEST_NULL, which
 * every later MPI_Test or MPI_Wait finds complete: so the deadline's
 * polling costs nothing and the blocking algorithms run (Open MPI's
 * non-blocking ones, libnbc, are slower for some sizes). The agreement's
 * digest all-reduce, the only in-place all-reduce of two MPI_INT64_T
 * under MPI_MAX the library makes, is skipped: each rank then compares
 * its digest with itself and goes on.
 *
 * Point-to-point calls (the pipeline's) are left as they are. A bench
 * tool: never linked into the library or a test. */

#include <mpi.h>

static int
completed (MPI_Request *request,
           int          result)
{
  *request = MPI_REQUEST_NULL;
  return result;
}

int
MPI_Iallreduce (const void   *sendbuf,
                void         *recvbuf,
                int           count,
                MPI_Datatype  datatype,
                MPI_Op        op,
                MPI_Comm      comm,
                MPI_Request  *request)
{
  if (sendbuf == MPI_IN_PLACE && count == 2 && datatype == MPI_INT64_T && op == MPI_MAX)
    return completed (request, MPI_SUCCESS);
  return completed (request, PMPI_Allreduce (sendbuf, recvbuf, count, datatype, op, comm));
}

int
MPI_Iallgather (const void   *sendbuf,
                int           sendcount,
                MPI_Datatype  sendtype,
                void         *recvbuf,
                int           recvcount,
                MPI_Datatype  recvtype,
                MPI_Comm      comm,
                MPI_Request  *request)
{
  return completed (request, PMPI_Allgather (sendbuf, sendcount, sendtype,
                                             recvbuf, recvcount, recvtype, comm));
}

int
MPI_Iallgatherv (const void   *sendbuf,
                 int           sendcount,
                 MPI_Datatype  sendtype,
                 void         *recvbuf,
                 const int     recvcounts[],
                 const int     displs[],
                 MPI_Datatype  recvtype,
                 MPI_Comm      comm,
                 MPI_Request  *request)
{
  return completed (request, PMPI_Allgatherv (sendbuf, sendcount, sendtype,
                                              recvbuf, recvcounts, displs, recvtype, comm));
}

int
MPI_Ialltoallv (const void   *sendbuf,
                const int     sendcounts[],
                const int     sdispls[],
                MPI_Datatype  sendtype,
                void         *recvbuf,
                const int     recvcounts[],
                const int     rdispls[],
                MPI_Datatype  recvtype,
                MPI_Comm      comm,
                MPI_Request  *request)
{
  return completed (request, PMPI_Alltoallv (sendbuf, sendcounts, sdispls, sendtype,
                                             recvbuf, recvcounts, rdispls, recvtype, comm));
}

int
MPI_Ibcast (void         *buffer,
            int           count,
            MPI_Datatype  datatype,
            int           root,
            MPI_Comm      comm,
            MPI_Request  *request)
{
  return completed (request, PMPI_Bcast (buffer, count, datatype, root, comm));
}

int
MPI_Ireduce_scatter (const void   *sendbuf,
                     void         *recvbuf,
                     const int     recvcounts[],
                     MPI_Datatype  datatype,
                     MPI_Op        op,
                     MPI_Comm      comm,
                     MPI_Request  *request)
{
  return completed (request, PMPI_Reduce_scatter (sendbuf, recvbuf, recvcounts, datatype, op, comm));
}

int
MPI_Iscatterv (const void   *sendbuf,
               const int     sendcounts[],
               const int     displs[],
               MPI_Datatype  sendtype,
               void         *recvbuf,
               int           recvcount,
               MPI_Datatype  recvtype,
               int           root,
               MPI_Comm      comm,
               MPI_Request  *request)
{
  return completed (request, PMPI_Scatterv (sendbuf, sendcounts, displs, sendtype,
                                            recvbuf, recvcount, recvtype, root, comm));
}
