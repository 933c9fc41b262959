/* hp-sdpa.h: scaled dot-product attention as a module
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-module.h"
#include "hp-module-config.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_SDPA_CONFIG (hp_sdpa_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpSDPAConfig, hp_sdpa_config, HP, SDPA_CONFIG, HpModuleConfig)

#define HP_TYPE_SDPA (hp_sdpa_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpSDPA, hp_sdpa, HP, SDPA, HpModule)

/**
 * HP_SDPA_CALLABLE:
 *
 * The name of the inner callable of [class@Hp.SDPA], `inner_sdpa`: the piece a
 * [class@Hp.LocalMapConfig] names to run attention on local heads.
 *
 * Since: 1.0
 */
#define HP_SDPA_CALLABLE "inner_sdpa"

HP_AVAILABLE_IN_ALL
HpSDPAConfig *hp_sdpa_config_new            (void);

HP_AVAILABLE_IN_ALL
HpSDPA       *hp_sdpa_new                   (HpSDPAConfig *config,
                                             GError      **error);

G_END_DECLS

#include "hp-sdpa-fields.h"
