/* hp-feed-forward.h: the SwiGLU feed-forward block of Llama
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
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_FEED_FORWARD_CONFIG (hp_feed_forward_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpFeedForwardConfig, hp_feed_forward_config, HP, FEED_FORWARD_CONFIG, HpModuleConfig)

#define HP_TYPE_FEED_FORWARD (hp_feed_forward_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpFeedForward, hp_feed_forward, HP, FEED_FORWARD, HpModule)

HP_AVAILABLE_IN_ALL
HpFeedForwardConfig *hp_feed_forward_config_new            (gint                  dim,
                                                            gint                  hidden_dim);

HP_AVAILABLE_IN_ALL
HpFeedForward       *hp_feed_forward_new                   (HpFeedForwardConfig  *config,
                                                            GError              **error);

G_END_DECLS

#include "hp-feed-forward-fields.h"
