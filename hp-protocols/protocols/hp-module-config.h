/* hp-module-config.h: the configuration every module has
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-config.h"
#include "hp-param-init.h"
#include "hp-sharding-config.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_MODULE_CONFIG (hp_module_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (HpModuleConfig, hp_module_config, HP, MODULE_CONFIG, HpConfig)

/**
 * HpModuleConfigClass:
 * @parent_class: the parent class
 *
 * The class of module configurations.
 *
 * Since: 1.0
 */
struct _HpModuleConfigClass
{
  HpConfigClass parent_class;

  /*< private >*/
  gpointer padding[8];
};

HP_AVAILABLE_IN_ALL
HpModuleConfig   *hp_module_config_new                 (void);

G_END_DECLS

#include "hp-module-config-fields.h"
