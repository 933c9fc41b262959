/* hp-fsdp-private.h: the collectives of fully sharded data parallelism
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-dtensor.h"

G_BEGIN_DECLS

HpTensor *_hp_fsdp_unshard (HpDTensor     *shard,
                            guint64        data_dims,
                            HpDeviceMesh  *compute_mesh,
                            GError       **error);

void      _hp_fsdp_release                (HpTensor      *full,
                                           HpDTensor     *shard);
gboolean  _hp_fsdp_refill                 (HpTensor      *full,
                                           HpDTensor     *shard,
                                           guint64        data_dims,
                                           GError       **error);

typedef struct _HpFsdpRefill HpFsdpRefill;

HpFsdpRefill *_hp_fsdp_refill_ref   (HpFsdpRefill *refill);
void          _hp_fsdp_refill_unref (HpFsdpRefill *refill);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HpFsdpRefill, _hp_fsdp_refill_unref)

HpTensor *_hp_fsdp_refill_before_backward (HpTensor      *output,
                                           GPtrArray     *fulls,
                                           GPtrArray     *shards,
                                           guint64        data_dims,
                                           gboolean       prefetch,
                                           HpFsdpRefill **chain);

typedef struct _HpFsdpGather HpFsdpGather;

HpFsdpGather *_hp_fsdp_gather_start  (HpDTensor     *shard,
                                      guint64        data_dims,
                                      HpTensor      *into,
                                      GError       **error);
HpTensor     *_hp_fsdp_gather_finish (HpFsdpGather  *gather,
                                      HpDeviceMesh  *compute_mesh,
                                      GError       **error);
void          _hp_fsdp_gather_drop   (HpFsdpGather  *gather);

G_END_DECLS
