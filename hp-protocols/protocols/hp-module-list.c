/* hp-module-list.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gio/gio.h>

#include "hp-module-list.h"

/**
 * HpModuleList:
 *
 * A module holding other modules as children named `0`, `1`, ... in
 * order, such as the layers of a transformer. It has no forward of its
 * own: its owner runs the modules.
 */

G_DEFINE_TYPE (HpModuleList, hp_module_list, HP_TYPE_MODULE)

static void
hp_module_list_class_init (HpModuleListClass *klass)
{
}

static void
hp_module_list_init (HpModuleList *self)
{
}

/**
 * hp_module_list_new:
 *
 * Creates an empty module list.
 *
 * Returns: (transfer full): a new empty #HpModuleList
 */
HpModuleList *
hp_module_list_new (void)
{
  /* cannot fail: a container has nothing of its own to set up */
  return g_initable_new (HP_TYPE_MODULE_LIST, NULL, NULL, NULL);
}

/**
 * hp_module_list_get_length:
 * @self: a #HpModuleList
 *
 * Counts the modules in the list.
 *
 * Returns: the number of modules in the list
 */
guint
hp_module_list_get_length (HpModuleList *self)
{
  g_auto(GStrv) names = NULL;

  g_return_val_if_fail (HP_IS_MODULE_LIST (self), 0);

  names = hp_module_get_child_names (HP_MODULE (self));
  return g_strv_length (names);
}

/**
 * hp_module_list_append:
 * @self: a #HpModuleList
 * @module: the module to add
 * @error: return location for a #GError
 *
 * Adds @module at the end of the list, as the child named by its
 * position.
 *
 * Returns: %TRUE, or %FALSE with %HP_ERROR_INVALID_ARGUMENT when
 *   @module is the list or contains it; the list is unchanged then
 */
gboolean
hp_module_list_append (HpModuleList  *self,
                       HpModule      *module,
                       GError       **error)
{
  g_autofree gchar *name = NULL;

  g_return_val_if_fail (HP_IS_MODULE_LIST (self), FALSE);
  g_return_val_if_fail (HP_IS_MODULE (module), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  name = g_strdup_printf ("%u", hp_module_list_get_length (self));
  return hp_module_add_child (HP_MODULE (self), name, module, error);
}

/**
 * hp_module_list_get:
 * @self: a #HpModuleList
 * @index: a position in the list
 *
 * Gets the module at a position.
 *
 * Returns: (transfer none) (nullable): the module at @index, or %NULL
 *   past the end
 */
HpModule *
hp_module_list_get (HpModuleList *self,
                    guint         index)
{
  g_autofree gchar *name = NULL;

  g_return_val_if_fail (HP_IS_MODULE_LIST (self), NULL);

  name = g_strdup_printf ("%u", index);
  return hp_module_get_child (HP_MODULE (self), name);
}
