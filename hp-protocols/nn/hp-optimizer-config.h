/* hp-optimizer-config.h: the configuration every optimizer has
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-config.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_OPTIMIZER_CONFIG (hp_optimizer_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (HpOptimizerConfig, hp_optimizer_config, HP, OPTIMIZER_CONFIG, HpConfig)

/**
 * HpOptimizerConfigClass:
 * @parent_class: the parent class
 *
 * The class of optimizer configurations.
 *
 * Since: 1.0
 */
struct _HpOptimizerConfigClass
{
  HpConfigClass parent_class;

  /*< private >*/
  gpointer padding[8];
};

G_END_DECLS

#include "hp-optimizer-config-fields.h"
