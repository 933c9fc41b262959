/* hp-gq-attention.h: grouped-query attention with rotary embedding
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-dtype.h"
#include "hp-linear.h"
#include "hp-module.h"
#include "hp-module-config.h"
#include "hp-rotary-embedding.h"
#include "hp-sdpa.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_GQ_ATTENTION_CONFIG (hp_gq_attention_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpGQAttentionConfig, hp_gq_attention_config, HP, GQ_ATTENTION_CONFIG, HpModuleConfig)

#define HP_TYPE_GQ_ATTENTION (hp_gq_attention_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpGQAttention, hp_gq_attention, HP, GQ_ATTENTION, HpModule)

HP_AVAILABLE_IN_ALL
HpGQAttentionConfig     *hp_gq_attention_config_new                 (void);
HP_AVAILABLE_IN_ALL
gint                     hp_gq_attention_config_get_n_kv_heads      (HpGQAttentionConfig     *self);
HP_AVAILABLE_IN_ALL
gint                     hp_gq_attention_config_get_head_dim        (HpGQAttentionConfig     *self);

HP_AVAILABLE_IN_ALL
gboolean                 hp_gq_attention_config_fill_children       (HpGQAttentionConfig     *self,
                                                                     GError                 **error);

HP_AVAILABLE_IN_ALL
HpGQAttention           *hp_gq_attention_new                        (HpGQAttentionConfig     *config,
                                                                     GError                 **error);

G_END_DECLS

#include "hp-gq-attention-fields.h"
