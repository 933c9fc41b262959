/* hp-decoder.h: a Llama-style decoder-only transformer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-base-model.h"
#include "hp-config-list.h"
#include "hp-dtype.h"
#include "hp-embedding.h"
#include "hp-linear.h"
#include "hp-rms-norm.h"
#include "hp-rotary-embedding.h"
#include "hp-kv-cache.h"
#include "hp-model-spec.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

/**
 * HpActivationCheckpointing:
 * @HP_ACTIVATION_CHECKPOINTING_NONE: every block keeps its activations
 *   for the backward
 * @HP_ACTIVATION_CHECKPOINTING_FULL: every block keeps only its input
 *   and recomputes its activations in the backward
 * @HP_ACTIVATION_CHECKPOINTING_EVERY_K: every k-th block
 *   ([property@Hp.DecoderConfig:ac-every]) does, counting from 1: blocks
 *   k, 2k, ..., as torchtitan's `ac_freq`
 *
 * Which blocks of a [class@Hp.Decoder] recompute their activations in
 * the backward instead of keeping them
 * ([property@Hp.DecoderConfig:activation-checkpointing]).
 *
 * Since: 1.0
 */
typedef enum
{
  HP_ACTIVATION_CHECKPOINTING_NONE,     /*< nick=none >*/
  HP_ACTIVATION_CHECKPOINTING_FULL,     /*< nick=full >*/
  HP_ACTIVATION_CHECKPOINTING_EVERY_K,  /*< nick=every-k >*/
} HpActivationCheckpointing;

#define HP_TYPE_DECODER_CONFIG (hp_decoder_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpDecoderConfig, hp_decoder_config, HP, DECODER_CONFIG, HpBaseModelConfig)

HP_AVAILABLE_IN_ALL
HpDecoderConfig *hp_decoder_config_new            (void);
HP_AVAILABLE_IN_ALL
gboolean         hp_decoder_config_expand         (HpDecoderConfig  *self,
                                                   GError          **error);
HP_AVAILABLE_IN_ALL
gint             hp_decoder_config_get_ffn_hidden_size (HpDecoderConfig *self);

#define HP_TYPE_DECODER (hp_decoder_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpDecoder, hp_decoder, HP, DECODER, HpBaseModel)

HP_AVAILABLE_IN_ALL
HpTensor        *hp_decoder_forward_with_cache    (HpDecoder        *self,
                                                   HpTensor         *ids,
                                                   HpKVCache        *cache,
                                                   GError          **error);

HP_AVAILABLE_IN_ALL
guint            hp_decoder_stage_layers          (guint             n_layers,
                                                   guint             n_stages,
                                                   guint             stage,
                                                   guint            *n_stage_layers);
HP_AVAILABLE_IN_ALL
gboolean         hp_decoder_split_stage           (HpDecoder        *self,
                                                   guint             stage,
                                                   guint             n_stages,
                                                   GError          **error);
HP_AVAILABLE_IN_ALL
HpModelSpec     *hp_decoder_config_build_model_spec (HpDecoderConfig *self);

G_END_DECLS

#include "hp-decoder-fields.h"
