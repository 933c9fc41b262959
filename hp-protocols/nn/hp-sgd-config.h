/* hp-sgd-config.h: the configuration of stochastic gradient descent
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

#define HP_TYPE_SGD_CONFIG (hp_sgd_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpSGDConfig, hp_sgd_config, HP, SGD_CONFIG, HpOptimizerConfig)

HP_AVAILABLE_IN_ALL
HpSGDConfig *hp_sgd_config_new           (void);

G_END_DECLS

#include "hp-sgd-config-fields.h"
