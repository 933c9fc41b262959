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
 *
 * It is a [iface@Gio.ListModel] of its modules, so that a language
 * binding's list idioms work on it (Python: `len (layers)`,
 * `layers[0]`, `for layer in layers`).
 *
 * Since: 1.0
 */

static void hp_module_list_model_init (GListModelInterface *iface);

G_DEFINE_TYPE_WITH_CODE (HpModuleList, hp_module_list, HP_TYPE_MODULE,
                         G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, hp_module_list_model_init))

static GType
hp_module_list_get_item_type (GListModel *model)
{
  return HP_TYPE_MODULE;
}

static guint
hp_module_list_get_n_items (GListModel *model)
{
  return hp_module_list_get_length (HP_MODULE_LIST (model));
}

static gpointer
hp_module_list_get_item (GListModel *model,
                         guint       position)
{
  HpModule *module = hp_module_list_get (HP_MODULE_LIST (model), position);

  return module != NULL ? g_object_ref (module) : NULL;
}

static void
hp_module_list_model_init (GListModelInterface *iface)
{
  iface->get_item_type = hp_module_list_get_item_type;
  iface->get_n_items = hp_module_list_get_n_items;
  iface->get_item = hp_module_list_get_item;
}

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
 * Returns: (transfer full): a new empty [class@Hp.ModuleList]
 *
 * Since: 1.0
 */
HpModuleList *
hp_module_list_new (void)
{
  /* cannot fail: a container has nothing of its own to set up */
  return g_initable_new (HP_TYPE_MODULE_LIST, NULL, NULL, NULL);
}

/**
 * hp_module_list_get_length:
 * @self: a [class@Hp.ModuleList]
 *
 * Counts the modules in the list.
 *
 * Returns: the number of modules in the list
 *
 * Since: 1.0
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
 * @self: a [class@Hp.ModuleList]
 * @module: the module to add
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds @module at the end of the list, as the child named by its
 * position.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when
 *   @module is the list or contains it; the list is unchanged then
 *
 * Since: 1.0
 */
gboolean
hp_module_list_append (HpModuleList  *self,
                       HpModule      *module,
                       GError       **error)
{
  g_autofree gchar *name = NULL;
  guint position;

  g_return_val_if_fail (HP_IS_MODULE_LIST (self), FALSE);
  g_return_val_if_fail (HP_IS_MODULE (module), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  position = hp_module_list_get_length (self);
  name = g_strdup_printf ("%u", position);
  if (!hp_module_add_child (HP_MODULE (self), name, module, error))
    return FALSE;
  g_list_model_items_changed (G_LIST_MODEL (self), position, 0, 1);
  return TRUE;
}

/**
 * hp_module_list_get:
 * @self: a [class@Hp.ModuleList]
 * @index: a position in the list
 *
 * Gets the module at a position.
 *
 * Returns: (transfer none) (nullable): the module at @index, or %NULL
 *   past the end
 *
 * Since: 1.0
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
