/* hp-kv-cache-private.h: how the attention layers fill a cache
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-kv-cache.h"

G_BEGIN_DECLS

/* The cached keys and values of @layer followed by @keys and @values
 * [B, S, Hkv, D] (joined along dim 1); the joined pair is held as the
 * layer's pending entry until _hp_kv_cache_commit() makes it the
 * cached one or _hp_kv_cache_discard() drops it, so that a forward
 * that fails half-way leaves the cache as it was */
gboolean _hp_kv_cache_extend  (HpKVCache  *self,
                               guint       layer,
                               HpTensor   *keys,
                               HpTensor   *values,
                               HpTensor  **all_keys,
                               HpTensor  **all_values,
                               GError    **error);
/* Every pending entry becomes the cached one; the length grows by
 * @n_new positions */
void     _hp_kv_cache_commit  (HpKVCache  *self,
                               gint64      n_new);
/* Drops every pending entry */
void     _hp_kv_cache_discard (HpKVCache  *self);

G_END_DECLS
