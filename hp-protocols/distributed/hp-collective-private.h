/* hp-collective-private.h: agreement before a collective, a deadline on each
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A collective that the ranks reach with different arguments, or that
 * one rank skips, deadlocks or silently mixes up data. Every collective
 * of the library is therefore preceded by _hp_collective_agree(): each
 * rank fills a fixed-size signature of what it is about to do (the
 * operation, the library function calling it and the op being
 * dispatched, the mesh dim, the dtype, the shape all ranks share and
 * the placements). By default the ranks all-reduce a 64-bit digest of
 * it, two numbers; with HP_DEBUG=collectives they gather the whole
 * signatures. Either way, when they differ, all of them gather the
 * signatures and fail with the same HP_ERROR_MPI naming every field that
 * differs. A rank that skips a collective is caught at its next one,
 * which meets the others' skipped one.
 *
 * The agreement runs on the communicator of the whole mesh even when the
 * collective runs on one mesh dim, so ranks that took different mesh
 * dims meet too; the shape in a signature is therefore one that every
 * rank of the mesh knows alike (the global shape of a DTensor, not the
 * local one, which differs between ranks when shards are uneven).
 *
 * The agreements and the collectives themselves are non-blocking and
 * waited for with a deadline, HP_COLLECTIVE_TIMEOUT seconds (default
 * 600, 0 for none), so that a rank that never comes (it skipped the
 * collective and makes no other, or failed) cannot hold the others for
 * ever. The communicator is unusable then: the program should report
 * the error and stop.
 */

#pragma once

#include <mpi.h>

#include "hp-device-mesh.h"
#include "hp-placement.h"

G_BEGIN_DECLS

typedef enum
{
  HP_COLLECTIVE_ALLGATHER,
  HP_COLLECTIVE_ALLGATHERV,
  HP_COLLECTIVE_ALLREDUCE,
  HP_COLLECTIVE_ALLTOALLV,
  HP_COLLECTIVE_BCAST,
  HP_COLLECTIVE_REDUCE_SCATTER,
  HP_COLLECTIVE_SCATTERV,
  HP_COLLECTIVE_COMM_DUP,
  HP_COLLECTIVE_COMM_SPLIT,
  /* point to point, between pipeline stages */
  HP_COLLECTIVE_SEND,
  HP_COLLECTIVE_RECV,
} HpCollective;

/* What a rank is about to do. Fields the ranks need not agree on stay
 * unset: mesh_dim -1 (the whole communicator), dtype -1, shape NULL,
 * placements and target NULL. */
typedef struct
{
  HpCollective   op;
  /* the library function that calls it, short: "redistribute" */
  const gchar   *caller;
  gint           mesh_dim;
  gint           dtype;
  const gint64  *shape;
  guint          ndim;
  GPtrArray     *placements;
  HpPlacement   *target;
} HpCollectiveCall;

#define HP_COLLECTIVE_CALL_INIT(op_, caller_) \
  { .op = (op_), .caller = (caller_), .mesh_dim = -1, .dtype = -1 }

gboolean _hp_collective_agree      (HpDeviceMesh            *mesh,
                                    const HpCollectiveCall  *call,
                                    GError                 **error);
gboolean _hp_collective_agree_comm (MPI_Comm                 comm,
                                    const gchar             *comm_name,
                                    const HpCollectiveCall  *call,
                                    GError                 **error);

gboolean _hp_collective_wait       (MPI_Request             *request,
                                    HpDeviceMesh            *mesh,
                                    HpCollective             op,
                                    const gchar             *caller,
                                    GError                 **error);
void     _hp_collective_abandon    (gpointer                 block);
gboolean _hp_collective_allreduce  (HpDeviceMesh            *mesh,
                                    MPI_Comm                 comm,
                                    gpointer                 data,
                                    int                      n,
                                    MPI_Datatype             type,
                                    MPI_Op                   op,
                                    const gchar             *caller,
                                    GError                 **error);

const gchar *_hp_collective_set_issuer (const gchar *issuer);

G_END_DECLS
