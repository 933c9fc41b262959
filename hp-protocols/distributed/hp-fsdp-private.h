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
HpTensor *_hp_fsdp_refill_before_backward (HpTensor      *output,
                                           GPtrArray     *fulls,
                                           GPtrArray     *shards,
                                           guint64        data_dims);

G_END_DECLS
