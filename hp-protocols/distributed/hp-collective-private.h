/* hp-collective-private.h: HP_DEBUG=collectives, agreement before a collective
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A collective that the ranks reach with different arguments, or that
 * one rank skips, deadlocks or silently mixes up data. With
 * HP_DEBUG=collectives every collective of the library is preceded by
 * _hp_collective_agree(): the ranks gather a fixed-size signature of
 * what they are about to do (the operation and its caller, the mesh
 * dim, the dtype, the shape all ranks share and the placements) and all
 * of them fail with the same HP_ERROR_MPI naming every field that
 * differs. A rank that skips a collective is caught at its next one,
 * which meets the others' skipped one.
 * Without the flag these calls return TRUE at once.
 *
 * The agreement runs on the communicator of the whole mesh even when the
 * collective runs on one mesh dim, so ranks that took different mesh
 * dims meet too; the shape in a signature is therefore one that every
 * rank of the mesh knows alike (the global shape of a DTensor, not the
 * local one, which differs between ranks when shards are uneven).
 *
 * A rank that never reaches the agreement (it skipped the collective and
 * makes no other) leaves the others waiting; they give up after
 * HP_DEBUG_COLLECTIVES_TIMEOUT seconds (default 300). The communicator
 * is unusable then: the program should report the error and stop.
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

G_END_DECLS
