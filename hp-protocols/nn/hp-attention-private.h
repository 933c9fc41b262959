/* hp-attention-private.h: checks and helpers shared by the attention
 * modules
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-config.h"
#include "hp-gq-attention.h"
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

G_END_DECLS
