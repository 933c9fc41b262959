/* hp-adamw-config.h: the configuration of AdamW
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-optimizer-config.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_ADAMW_CONFIG (hp_adamw_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpAdamWConfig, hp_adamw_config, HP, ADAMW_CONFIG, HpOptimizerConfig)

HP_AVAILABLE_IN_ALL
HpAdamWConfig *hp_adamw_config_new       (void);

G_END_DECLS

#include "hp-adamw-config-fields.h"
