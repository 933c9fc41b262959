/* hp-rotary-embedding.h: rotary position embedding with cached tables
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-dtype.h"
#include "hp-module.h"
#include "hp-module-config.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

/**
 * HpRopeScaling:
 * @HP_ROPE_SCALING_NONE: the frequencies `theta^(-2i/D)` as they are
 * @HP_ROPE_SCALING_LINEAR: every frequency divided by the factor
 *   (position interpolation; Hugging Face's `rope_type` `"linear"`)
 * @HP_ROPE_SCALING_LLAMA3: Llama 3.1's scaling (Hugging Face's
 *   `rope_type` `"llama3"`): frequencies whose wavelength is longer than
 *   the original context over the low-frequency factor are divided by
 *   the factor, those shorter than it over the high-frequency factor
 *   are kept, and those between are interpolated smoothly
 *
 * How a [class@Hp.RotaryEmbedding] scales its frequencies for sequences
 * longer than those a model was trained on.
 *
 * Since: 1.0
 */
typedef enum
{
  HP_ROPE_SCALING_NONE,     /*< nick=none >*/
  HP_ROPE_SCALING_LINEAR,   /*< nick=linear >*/
  HP_ROPE_SCALING_LLAMA3,   /*< nick=llama3 >*/
} HpRopeScaling;

#define HP_TYPE_ROTARY_EMBEDDING_CONFIG (hp_rotary_embedding_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpRotaryEmbeddingConfig, hp_rotary_embedding_config, HP, ROTARY_EMBEDDING_CONFIG, HpModuleConfig)

#define HP_TYPE_ROTARY_EMBEDDING (hp_rotary_embedding_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpRotaryEmbedding, hp_rotary_embedding, HP, ROTARY_EMBEDDING, HpModule)

HP_AVAILABLE_IN_ALL
HpRotaryEmbeddingConfig *hp_rotary_embedding_config_new             (void);

HP_AVAILABLE_IN_ALL
HpRotaryEmbedding       *hp_rotary_embedding_new                    (HpRotaryEmbeddingConfig *config,
                                                                     GError                 **error);

G_END_DECLS

#include "hp-rotary-embedding-fields.h"
