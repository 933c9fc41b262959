/* hp-placement-private.h: placements shared inside the library
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-partial.h"
#include "hp-placement.h"

G_BEGIN_DECLS

/* A reference to one process-wide placement of that value, made on first
 * use (hp-placement.c). Placements never change, so the library shares
 * these among its own arrays instead of making a new object each time;
 * hp_shard_new() and friends still give a new object per call. */
HpPlacement *_hp_placement_shared_replicate (void);
HpPlacement *_hp_placement_shared_shard     (gint        dim);
HpPlacement *_hp_placement_shared_partial   (HpReduceOp  reduce_op);

G_END_DECLS
