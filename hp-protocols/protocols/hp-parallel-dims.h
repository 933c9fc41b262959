/* hp-parallel-dims.h: the degrees of each kind of parallelism of a job
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-config.h"
#include "hp-device-mesh.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_PARALLEL_DIMS (hp_parallel_dims_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpParallelDims, hp_parallel_dims, HP, PARALLEL_DIMS, HpConfig)

HP_AVAILABLE_IN_ALL
HpParallelDims *hp_parallel_dims_new                          (void);
HP_AVAILABLE_IN_ALL
HpParallelDims *hp_parallel_dims_resolve                      (HpParallelDims  *self,
                                                               gint             world_size,
                                                               GError         **error);
HP_AVAILABLE_IN_ALL
HpDeviceMesh   *hp_parallel_dims_build_mesh                   (HpParallelDims  *self,
                                                               GError         **error);
HP_AVAILABLE_IN_ALL
HpDeviceMesh   *hp_parallel_dims_build_expert_mesh            (HpParallelDims  *self,
                                                               GError         **error);

HP_AVAILABLE_IN_ALL
gint            hp_parallel_dims_get_world_size               (HpParallelDims  *self);
HP_AVAILABLE_IN_ALL
gint            hp_parallel_dims_get_non_data_parallel_size   (HpParallelDims  *self);

HP_AVAILABLE_IN_ALL
gboolean        hp_parallel_dims_get_dp_enabled               (HpParallelDims  *self);
HP_AVAILABLE_IN_ALL
gboolean        hp_parallel_dims_get_dp_replicate_enabled     (HpParallelDims  *self);
HP_AVAILABLE_IN_ALL
gboolean        hp_parallel_dims_get_dp_shard_enabled         (HpParallelDims  *self);
HP_AVAILABLE_IN_ALL
gboolean        hp_parallel_dims_get_fsdp_enabled             (HpParallelDims  *self);
HP_AVAILABLE_IN_ALL
gboolean        hp_parallel_dims_get_cp_enabled               (HpParallelDims  *self);
HP_AVAILABLE_IN_ALL
gboolean        hp_parallel_dims_get_dp_cp_enabled            (HpParallelDims  *self);
HP_AVAILABLE_IN_ALL
gboolean        hp_parallel_dims_get_tp_enabled               (HpParallelDims  *self);
HP_AVAILABLE_IN_ALL
gboolean        hp_parallel_dims_get_pp_enabled               (HpParallelDims  *self);
HP_AVAILABLE_IN_ALL
gboolean        hp_parallel_dims_get_ep_enabled               (HpParallelDims  *self);

G_END_DECLS

#include "hp-parallel-dims-fields.h"
