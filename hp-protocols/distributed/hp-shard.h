/* hp-shard.h: a tensor dim split across a mesh dim
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-placement.h"

G_BEGIN_DECLS

#define HP_TYPE_SHARD (hp_shard_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpShard, hp_shard, HP, SHARD, HpPlacement)

HP_AVAILABLE_IN_ALL
HpPlacement *hp_shard_new                 (gint          dim);
HP_AVAILABLE_IN_ALL
gint         hp_shard_get_dim             (HpShard      *self);

G_END_DECLS
