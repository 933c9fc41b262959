/* hp-module-dict.h: modules by name
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-module.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_MODULE_DICT (hp_module_dict_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpModuleDict, hp_module_dict, HP, MODULE_DICT, HpModule)

HP_AVAILABLE_IN_ALL
HpModuleDict *hp_module_dict_new    (void);
HP_AVAILABLE_IN_ALL
gboolean      hp_module_dict_insert (HpModuleDict  *self,
                                     const gchar   *name,
                                     HpModule      *module,
                                     GError       **error);
HP_AVAILABLE_IN_ALL
HpModule     *hp_module_dict_lookup (HpModuleDict  *self,
                                     const gchar   *name);

G_END_DECLS
