/* hp-rms-norm.h: root mean square normalisation with a learned scale
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

#define HP_TYPE_RMS_NORM_CONFIG (hp_rms_norm_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpRMSNormConfig, hp_rms_norm_config, HP, RMS_NORM_CONFIG, HpModuleConfig)

#define HP_TYPE_RMS_NORM (hp_rms_norm_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpRMSNorm, hp_rms_norm, HP, RMS_NORM, HpModule)

HP_AVAILABLE_IN_ALL
HpRMSNormConfig *hp_rms_norm_config_new       (gint              dim);

HP_AVAILABLE_IN_ALL
HpRMSNorm       *hp_rms_norm_new              (HpRMSNormConfig  *config,
                                               GError          **error);

G_END_DECLS

#include "hp-rms-norm-fields.h"
