/* hp-transformer-block.h: one pre-norm transformer layer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-feed-forward.h"
#include "hp-gq-attention.h"
#include "hp-module.h"
#include "hp-rms-norm.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_TRANSFORMER_BLOCK_CONFIG (hp_transformer_block_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpTransformerBlockConfig, hp_transformer_block_config, HP, TRANSFORMER_BLOCK_CONFIG, HpModuleConfig)

HP_AVAILABLE_IN_ALL
HpTransformerBlockConfig *hp_transformer_block_config_new              (HpGQAttentionConfig      *attention,
                                                                        HpFeedForwardConfig      *feed_forward,
                                                                        HpRMSNormConfig          *attention_norm,
                                                                        HpRMSNormConfig          *ffn_norm);

#define HP_TYPE_TRANSFORMER_BLOCK (hp_transformer_block_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpTransformerBlock, hp_transformer_block, HP, TRANSFORMER_BLOCK, HpModule)

G_END_DECLS

#include "hp-transformer-block-fields.h"
