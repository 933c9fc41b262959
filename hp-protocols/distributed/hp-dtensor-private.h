/* hp-dtensor-private.h: layouts and redistribution inside the library
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <mpi.h>

#include "hp-device-mesh.h"
#include "hp-dtensor.h"
#include "hp-partial.h"
#include "hp-placement-private.h"
#include "hp-placement.h"
#include "hp-replicate.h"
#include "hp-shard.h"
#include "hp-tensor-private.h"

G_BEGIN_DECLS

/* A DTensor over @local (kept as is: it must have no gradient history)
 * with normalised @placements; no checks, no communication, no autograd. */
HpDTensor  *_hp_dtensor_new                  (HpTensor        *local,
                                              HpDeviceMesh    *mesh,
                                              GPtrArray       *placements,
                                              const gint64    *shape,
                                              guint            ndim);
HpTensor   *_hp_dtensor_peek_local           (HpDTensor       *self);
HpTensor   *_hp_dtensor_get_local_summing_grad (HpDTensor     *self,
                                              guint64          sum_dims);
gboolean    _hp_dtensor_dispatch             (const HpOpCall  *call,
                                              HpTensor       **outputs,
                                              GError         **error);

/* Layout arithmetic (hp-dtensor-layout.c) */
void        _hp_chunk                        (gint64           size,
                                              gint             n,
                                              gint             index,
                                              gint64          *offset,
                                              gint64          *length);
gint64      _hp_layout_level_size            (const gint64    *shape,
                                              GPtrArray       *placements,
                                              HpDeviceMesh    *mesh,
                                              const gint      *coordinate,
                                              guint            mesh_dim,
                                              guint            tensor_dim,
                                              gint64          *offset);
void        _hp_layout_local_region          (const gint64    *shape,
                                              guint            ndim,
                                              GPtrArray       *placements,
                                              HpDeviceMesh    *mesh,
                                              const gint      *coordinate,
                                              gint64          *offsets,
                                              gint64          *lengths);
GPtrArray  *_hp_placements_normalize         (const gchar     *op,
                                              GPtrArray       *placements,
                                              HpDeviceMesh    *mesh,
                                              guint            tensor_ndim,
                                              GError         **error);
GPtrArray  *_hp_placements_for_grad          (GPtrArray       *placements);
GPtrArray  *_hp_placements_replicated        (guint            n);
GPtrArray  *_hp_placements_copy              (GPtrArray       *placements);
gboolean    _hp_placements_equal             (GPtrArray       *a,
                                              GPtrArray       *b);
gboolean    _hp_placements_have_partial      (GPtrArray       *placements);
HpTensor   *_hp_tensor_copy_region           (HpTensor        *self,
                                              const gint64    *offsets,
                                              const gint64    *lengths);
HpTensor   *_hp_dtensor_local_block          (HpDTensor       *layout,
                                              HpTensor        *whole);

/* Loss parallelism (hp-dtensor-loss.c) */
HpTensor   *_hp_cross_entropy_class_parallel (HpTensor        *logits,
                                              HpTensor        *targets,
                                              gint64           ignore_index,
                                              gint64           first_class,
                                              gint64           n_classes,
                                              HpDeviceMesh    *mesh,
                                              guint            mesh_dim,
                                              GError         **error);

/* Collectives on local tensors (hp-dtensor-redistribute.c) */
MPI_Datatype _hp_mpi_datatype                (HpDType          dtype);
void        _hp_dtensor_divide_for_avg       (HpTensor        *t,
                                              gint             n);
void        _hp_divide_values                (gpointer         data,
                                              HpDType          dtype,
                                              gint64           numel,
                                              gint             n);
HpTensor   *_hp_redistribute_local           (HpTensor        *local,
                                              const gint64    *shape,
                                              guint            ndim,
                                              HpDeviceMesh    *mesh,
                                              GPtrArray       *from,
                                              GPtrArray       *to,
                                              GError         **error);

G_END_DECLS
