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

G_END_DECLS
