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
gint                     hp_gq_attention_config_get_dim             (HpGQAttentionConfig     *self);
HP_AVAILABLE_IN_ALL
gint                     hp_gq_attention_config_get_n_heads         (HpGQAttentionConfig     *self);
HP_AVAILABLE_IN_ALL
gint                     hp_gq_attention_config_get_n_kv_heads      (HpGQAttentionConfig     *self);
HP_AVAILABLE_IN_ALL
gint                     hp_gq_attention_config_get_head_dim        (HpGQAttentionConfig     *self);
HP_AVAILABLE_IN_ALL
gint                     hp_gq_attention_config_get_max_seq_len     (HpGQAttentionConfig     *self);
HP_AVAILABLE_IN_ALL
gdouble                  hp_gq_attention_config_get_rope_theta      (HpGQAttentionConfig     *self);
HP_AVAILABLE_IN_ALL
HpDType                  hp_gq_attention_config_get_dtype           (HpGQAttentionConfig     *self);

HP_AVAILABLE_IN_ALL
HpLinearConfig          *hp_gq_attention_config_get_wq              (HpGQAttentionConfig     *self);
HP_AVAILABLE_IN_ALL
void                     hp_gq_attention_config_set_wq              (HpGQAttentionConfig     *self,
                                                                     HpLinearConfig          *wq);
HP_AVAILABLE_IN_ALL
HpLinearConfig          *hp_gq_attention_config_get_wk              (HpGQAttentionConfig     *self);
HP_AVAILABLE_IN_ALL
void                     hp_gq_attention_config_set_wk              (HpGQAttentionConfig     *self,
                                                                     HpLinearConfig          *wk);
HP_AVAILABLE_IN_ALL
HpLinearConfig          *hp_gq_attention_config_get_wv              (HpGQAttentionConfig     *self);
HP_AVAILABLE_IN_ALL
void                     hp_gq_attention_config_set_wv              (HpGQAttentionConfig     *self,
                                                                     HpLinearConfig          *wv);
HP_AVAILABLE_IN_ALL
HpLinearConfig          *hp_gq_attention_config_get_wo              (HpGQAttentionConfig     *self);
HP_AVAILABLE_IN_ALL
void                     hp_gq_attention_config_set_wo              (HpGQAttentionConfig     *self,
                                                                     HpLinearConfig          *wo);
HP_AVAILABLE_IN_ALL
HpRotaryEmbeddingConfig *hp_gq_attention_config_get_rope            (HpGQAttentionConfig     *self);
HP_AVAILABLE_IN_ALL
void                     hp_gq_attention_config_set_rope            (HpGQAttentionConfig     *self,
                                                                     HpRotaryEmbeddingConfig *rope);
HP_AVAILABLE_IN_ALL
HpSDPAConfig            *hp_gq_attention_config_get_inner_attention (HpGQAttentionConfig     *self);
HP_AVAILABLE_IN_ALL
void                     hp_gq_attention_config_set_inner_attention (HpGQAttentionConfig     *self,
                                                                     HpSDPAConfig            *inner_attention);
HP_AVAILABLE_IN_ALL
gboolean                 hp_gq_attention_config_fill_children       (HpGQAttentionConfig     *self,
                                                                     GError                 **error);

HP_AVAILABLE_IN_ALL
HpGQAttention           *hp_gq_attention_new                        (HpGQAttentionConfig     *config,
                                                                     GError                 **error);

G_END_DECLS
