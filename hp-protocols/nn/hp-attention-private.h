/* hp-attention-private.h: checks and helpers shared by the attention
 * modules
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-config.h"
#include "hp-gq-attention.h"
#include "hp-kv-cache.h"
#include "hp-module.h"
#include "hp-rotary-embedding.h"
#include "hp-tensor.h"

G_BEGIN_DECLS

/* @config is of @type, else HP_ERROR_CONFIG naming @module's type */
gboolean  _hp_attention_check_config  (gpointer       module,
                                       HpConfig      *config,
                                       GType          type,
                                       GError       **error);
/* @initialized, else HP_ERROR_STATE: the module was made without
 * g_initable_init() */
gboolean  _hp_attention_check_ready   (gpointer       module,
                                       gboolean       initialized,
                                       GError       **error);
/* @args holds @n tensors, else HP_ERROR_INVALID_ARGUMENT naming the
 * forward arguments of @module */
gboolean  _hp_attention_check_args    (gpointer       module,
                                       GPtrArray     *args,
                                       guint          n,
                                       GError       **error);
/* The plain tensor @plain as a Replicate DTensor on the mesh of the
 * DTensor @like, without communication */
HpTensor *_hp_attention_replicate_like (HpTensor     *plain,
                                        HpTensor     *like,
                                        GError      **error);

/* The scalar fields of @config fit together (what
 * hp_gq_attention_config_fill_children() checks, and validate before
 * the children given), else HP_ERROR_CONFIG; changes nothing */
gboolean  _hp_gq_attention_config_check_sizes (HpGQAttentionConfig  *config,
                                               GError              **error);

/* The llama3 scaling's factors leave a band to interpolate in, else
 * HP_ERROR_CONFIG: "@prefix@field_prefixhigh-freq-factor ... must be
 * greater than @field_prefixlow-freq-factor"; one message for the
 * rotary, attention and decoder configurations */
gboolean  _hp_rotary_check_scaling    (const gchar    *prefix,
                                       const gchar    *field_prefix,
                                       HpRopeScaling   scaling,
                                       gdouble         low_freq_factor,
                                       gdouble         high_freq_factor,
                                       GError        **error);

/* The rotary embedding's forward rotates the rows of x as positions
 * @offset, @offset + 1, ... (the key/value cache's length during a
 * cached forward; 0 otherwise) */
void      _hp_rotary_embedding_set_offset (HpRotaryEmbedding *self,
                                           gint64             offset);
/* The inner attention's queries are the positions from @offset on of
 * its keys, so the causal mask lets query i see keys j <= @offset + i
 * (the cached keys come first); 0 otherwise */
void      _hp_sdpa_set_query_offset       (HpSDPA            *self,
                                           gint64             offset);
/* While @cache is set (not NULL), the attention's forward rotates at
 * the cache's length, extends layer @layer of @cache with its new keys
 * and values and attends over all of them; see
 * hp_decoder_forward_with_cache() */
void      _hp_gq_attention_set_cache      (HpGQAttention     *self,
                                           HpKVCache         *cache,
                                           guint              layer);

G_END_DECLS
