/* hp-attention-sharding.h: tensor-parallel layouts of the attention
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-gq-attention.h"
#include "hp-sdpa.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

HP_AVAILABLE_IN_ALL
gboolean hp_set_gqa_attention_sharding       (HpGQAttentionConfig  *cfg,
                                              gboolean              enable_sp,
                                              GError              **error);
HP_AVAILABLE_IN_ALL
void     hp_set_gqa_inner_attention_local_map (HpSDPAConfig        *inner_attn_cfg,
                                              gboolean              return_lse);

G_END_DECLS
