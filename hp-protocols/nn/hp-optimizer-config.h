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

HP_AVAILABLE_IN_ALL
gdouble hp_optimizer_config_get_lr           (HpOptimizerConfig *self);
HP_AVAILABLE_IN_ALL
void    hp_optimizer_config_set_lr           (HpOptimizerConfig *self,
                                              gdouble            lr);
HP_AVAILABLE_IN_ALL
gdouble hp_optimizer_config_get_weight_decay (HpOptimizerConfig *self);
HP_AVAILABLE_IN_ALL
void    hp_optimizer_config_set_weight_decay (HpOptimizerConfig *self,
                                              gdouble            weight_decay);

G_END_DECLS
