/* hp-module-list.h: modules in a numbered list
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

#define HP_TYPE_MODULE_LIST (hp_module_list_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (HpModuleList, hp_module_list, HP, MODULE_LIST, HpModule)

/**
 * HpModuleListClass:
 * @parent_class: the parent class
 *
 * The class of module lists; [class@Hp.Sequential] derives from it.
 *
 * Since: 1.0
 */
struct _HpModuleListClass
{
  HpModuleClass parent_class;

  /*< private >*/
  gpointer padding[8];
};

HP_AVAILABLE_IN_ALL
HpModuleList *hp_module_list_new        (void);
HP_AVAILABLE_IN_ALL
gboolean      hp_module_list_append     (HpModuleList  *self,
                                         HpModule      *module,
                                         GError       **error);
HP_AVAILABLE_IN_ALL
HpModule     *hp_module_list_get        (HpModuleList *self,
                                         guint         index);
HP_AVAILABLE_IN_ALL
guint         hp_module_list_get_length (HpModuleList *self);

G_END_DECLS
