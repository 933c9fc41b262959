/* hp-kv-cache.h: the keys and values a decoder has seen, for generation
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-tensor.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_KV_CACHE (hp_kv_cache_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpKVCache, hp_kv_cache, HP, KV_CACHE, GObject)

HP_AVAILABLE_IN_ALL
HpKVCache *hp_kv_cache_new            (guint      n_layers,
                                       gint64     batch_size,
                                       gint64     capacity);
HP_AVAILABLE_IN_ALL
guint      hp_kv_cache_get_n_layers   (HpKVCache *self);
HP_AVAILABLE_IN_ALL
gint64     hp_kv_cache_get_batch_size (HpKVCache *self);
HP_AVAILABLE_IN_ALL
gint64     hp_kv_cache_get_capacity   (HpKVCache *self);
HP_AVAILABLE_IN_ALL
gint64     hp_kv_cache_get_length     (HpKVCache *self);
HP_AVAILABLE_IN_ALL
HpTensor  *hp_kv_cache_get_keys       (HpKVCache *self,
                                       guint      layer);
HP_AVAILABLE_IN_ALL
HpTensor  *hp_kv_cache_get_values     (HpKVCache *self,
                                       guint      layer);
HP_AVAILABLE_IN_ALL
void       hp_kv_cache_reset          (HpKVCache *self);

G_END_DECLS
