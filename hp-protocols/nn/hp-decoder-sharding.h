/* hp-decoder-sharding.h: tensor-parallel layouts of the decoder's layers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-decoder.h"
#include "hp-feed-forward.h"
#include "hp-sharding-config.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

HP_AVAILABLE_IN_ALL
HpShardingConfig *hp_sharding_colwise           (void);
HP_AVAILABLE_IN_ALL
HpShardingConfig *hp_sharding_colwise_with_bias (void);
HP_AVAILABLE_IN_ALL
HpShardingConfig *hp_sharding_rowwise           (gboolean              output_sp);
HP_AVAILABLE_IN_ALL
HpShardingConfig *hp_sharding_rowwise_with_bias (gboolean              output_sp);
HP_AVAILABLE_IN_ALL
HpShardingConfig *hp_sharding_norm              (gboolean              enable_sp);
HP_AVAILABLE_IN_ALL
HpShardingConfig *hp_sharding_embedding         (gboolean              output_sp);
HP_AVAILABLE_IN_ALL
void              hp_set_dense_ffn_sharding     (HpFeedForwardConfig  *cfg,
                                                 gboolean              enable_sp);
HP_AVAILABLE_IN_ALL
gboolean          hp_set_decoder_sharding_config (HpDecoderConfig     *cfg,
                                                 gboolean              loss_parallel,
                                                 gboolean              enable_sp,
                                                 GError              **error);

G_END_DECLS
