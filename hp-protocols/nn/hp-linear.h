/* hp-linear.h: the linear layer y = x W^T + b
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

#define HP_TYPE_LINEAR_CONFIG (hp_linear_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpLinearConfig, hp_linear_config, HP, LINEAR_CONFIG, HpModuleConfig)

#define HP_TYPE_LINEAR (hp_linear_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpLinear, hp_linear, HP, LINEAR, HpModule)

HP_AVAILABLE_IN_ALL
HpLinearConfig *hp_linear_config_new              (gint             in_features,
                                                   gint             out_features);

HP_AVAILABLE_IN_ALL
HpLinear       *hp_linear_new                     (HpLinearConfig  *config,
                                                   GError         **error);

G_END_DECLS

#include "hp-linear-fields.h"
