/* hp-module-dict.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gio/gio.h>

#include "hp-module-dict.h"

/**
 * HpModuleDict:
 *
 * A module holding other modules as children by name, in insertion
 * order. It has no forward of its own.
 *
 * Since: 1.0
 */

struct _HpModuleDict
{
  HpModule parent_instance;
};

G_DEFINE_FINAL_TYPE (HpModuleDict, hp_module_dict, HP_TYPE_MODULE)

static void
hp_module_dict_class_init (HpModuleDictClass *klass)
{
}

static void
hp_module_dict_init (HpModuleDict *self)
{
}

/**
 * hp_module_dict_new:
 *
 * Creates an empty module dict.
 *
 * Returns: (transfer full): a new empty [class@Hp.ModuleDict]
 *
 * Since: 1.0
 */
HpModuleDict *
hp_module_dict_new (void)
{
  /* cannot fail: a container has nothing of its own to set up */
  return g_initable_new (HP_TYPE_MODULE_DICT, NULL, NULL, NULL);
}

/**
 * hp_module_dict_insert:
 * @self: a [class@Hp.ModuleDict]
 * @name: the key, without dots
 * @module: the module
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds @module under @name (replacing a module of that name in its
 * position), as [method@Hp.Module.add_child] does.
 *
 * Returns: %TRUE, or %FALSE with the errors of [method@Hp.Module.add_child]
 *
 * Since: 1.0
 */
gboolean
hp_module_dict_insert (HpModuleDict  *self,
                       const gchar   *name,
                       HpModule      *module,
                       GError       **error)
{
  g_return_val_if_fail (HP_IS_MODULE_DICT (self), FALSE);

  return hp_module_add_child (HP_MODULE (self), name, module, error);
}

/**
 * hp_module_dict_lookup:
 * @self: a [class@Hp.ModuleDict]
 * @name: a key
 *
 * Looks a module up by key.
 *
 * Returns: (transfer none) (nullable): the module under @name, or %NULL
 *
 * Since: 1.0
 */
HpModule *
hp_module_dict_lookup (HpModuleDict *self,
                       const gchar  *name)
{
  g_return_val_if_fail (HP_IS_MODULE_DICT (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  return hp_module_get_child (HP_MODULE (self), name);
}
