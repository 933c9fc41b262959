/* hp-config-list.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-config-list.h"
#include "hp-config-private.h"

/**
 * HpConfigList:
 *
 * An ordered list of configurations, the type of a configuration field
 * that holds several nested configurations, such as the configurations
 * of the layers of a model (a `list[Config]` field of a torchtitan
 * configuration).
 *
 * The list implements [iface@Gio.ListModel] with [HP_TYPE_CONFIG][class@Hp.Config] items and emits
 * [signal@Gio.ListModel::items-changed] on every change. Items may be of different
 * configuration types. [method@Hp.Config.traverse] gives the items of a list
 * field `layers` the paths `layers.0`, `layers.1`, ...; the JSON form
 * of a list is an array of configuration objects, each with its
 * `"@type"`.
 *
 * Like the rest of a configuration, lists are shared by shallow copies:
 * [method@Hp.Config.copy] copies the reference to the list, and
 * [method@Hp.ConfigList.copy] makes a new list of the same configurations.
 *
 * Since: 1.0
 */

struct _HpConfigList
{
  GObject parent_instance;

  GPtrArray *items;   /* HpConfig * */
};

static void hp_config_list_model_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (HpConfigList, hp_config_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, hp_config_list_model_init))

enum {
  PROP_0,
  PROP_N_ITEMS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static GType
hp_config_list_get_item_type (GListModel *model)
{
  return HP_TYPE_CONFIG;
}

static guint
hp_config_list_get_n_items (GListModel *model)
{
  return HP_CONFIG_LIST (model)->items->len;
}

static gpointer
hp_config_list_get_item (GListModel *model,
                         guint       position)
{
  HpConfigList *self = HP_CONFIG_LIST (model);

  if (position >= self->items->len)
    return NULL;
  return g_object_ref (g_ptr_array_index (self->items, position));
}

static void
hp_config_list_model_init (GListModelInterface *iface)
{
  iface->get_item_type = hp_config_list_get_item_type;
  iface->get_n_items = hp_config_list_get_n_items;
  iface->get_item = hp_config_list_get_item;
}

static void
hp_config_list_finalize (GObject *object)
{
  HpConfigList *self = HP_CONFIG_LIST (object);

  g_clear_pointer (&self->items, g_ptr_array_unref);

  G_OBJECT_CLASS (hp_config_list_parent_class)->finalize (object);
}

static void
hp_config_list_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  HpConfigList *self = HP_CONFIG_LIST (object);

  switch (prop_id)
    {
    case PROP_N_ITEMS:
      g_value_set_uint (value, self->items->len);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_config_list_class_init (HpConfigListClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_config_list_finalize;
  object_class->get_property = hp_config_list_get_property;

  /**
   * HpConfigList:n-items:
   *
   * The number of configurations in the list.
   *
   * Since: 1.0
   */
  properties[PROP_N_ITEMS] =
    g_param_spec_uint ("n-items", NULL, NULL,
                       0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_config_list_init (HpConfigList *self)
{
  self->items = g_ptr_array_new_with_free_func (g_object_unref);
}

static void
items_changed (HpConfigList *self,
               guint         position,
               guint         removed,
               guint         added)
{
  g_list_model_items_changed (G_LIST_MODEL (self), position, removed, added);
  if (removed != added)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_ITEMS]);
}

/**
 * hp_config_list_new:
 *
 * Creates an empty list of configurations.
 *
 * Returns: (transfer full): a new [class@Hp.ConfigList]
 *
 * Since: 1.0
 */
HpConfigList *
hp_config_list_new (void)
{
  return g_object_new (HP_TYPE_CONFIG_LIST, NULL);
}

/**
 * hp_config_list_append:
 * @self: a [class@Hp.ConfigList]
 * @config: the configuration to add
 *
 * Adds @config (a reference to it, not a copy) at the end of @self.
 *
 * Since: 1.0
 */
void
hp_config_list_append (HpConfigList *self,
                       HpConfig     *config)
{
  g_return_if_fail (HP_IS_CONFIG_LIST (self));
  g_return_if_fail (HP_IS_CONFIG (config));

  hp_config_list_insert (self, self->items->len, config);
}

/**
 * hp_config_list_insert:
 * @self: a [class@Hp.ConfigList]
 * @position: where to insert @config, at most the length of @self
 * @config: the configuration to add
 *
 * Inserts @config (a reference to it, not a copy) at @position, moving
 * the items from @position on one place further.
 *
 * Since: 1.0
 */
void
hp_config_list_insert (HpConfigList *self,
                       guint         position,
                       HpConfig     *config)
{
  g_return_if_fail (HP_IS_CONFIG_LIST (self));
  g_return_if_fail (position <= self->items->len);
  g_return_if_fail (HP_IS_CONFIG (config));

  g_ptr_array_insert (self->items, (gint) position, g_object_ref (config));
  items_changed (self, position, 0, 1);
}

/**
 * hp_config_list_remove:
 * @self: a [class@Hp.ConfigList]
 * @position: the position of the item to remove
 *
 * Removes the item at @position.
 *
 * Since: 1.0
 */
void
hp_config_list_remove (HpConfigList *self,
                       guint         position)
{
  g_return_if_fail (HP_IS_CONFIG_LIST (self));
  g_return_if_fail (position < self->items->len);

  g_ptr_array_remove_index (self->items, position);
  items_changed (self, position, 1, 0);
}

void
_hp_config_list_set (HpConfigList *self,
                     guint         position,
                     HpConfig     *config)
{
  HpConfig *old = g_ptr_array_index (self->items, position);

  g_ptr_array_index (self->items, position) = g_object_ref (config);
  g_object_unref (old);
  items_changed (self, position, 1, 1);
}

/**
 * hp_config_list_peek:
 * @self: a [class@Hp.ConfigList]
 * @position: the position of an item
 *
 * Gets the item at @position without adding a reference, unlike
 * [method@Gio.ListModel.get_item].
 *
 * Returns: (transfer none): the configuration at @position
 *
 * Since: 1.0
 */
HpConfig *
hp_config_list_peek (HpConfigList *self,
                     guint         position)
{
  g_return_val_if_fail (HP_IS_CONFIG_LIST (self), NULL);
  g_return_val_if_fail (position < self->items->len, NULL);

  return g_ptr_array_index (self->items, position);
}

/**
 * hp_config_list_get_length:
 * @self: a [class@Hp.ConfigList]
 *
 * Gets the number of configurations in @self.
 *
 * Returns: the number of items
 *
 * Since: 1.0
 */
guint
hp_config_list_get_length (HpConfigList *self)
{
  g_return_val_if_fail (HP_IS_CONFIG_LIST (self), 0);

  return self->items->len;
}

/**
 * hp_config_list_copy:
 * @self: a [class@Hp.ConfigList]
 *
 * Makes a new list of the same configurations, in the same order. The
 * copy is shallow: the items are shared, not copied; adding or removing
 * items of either list later does not change the other.
 *
 * Returns: (transfer full): the new list
 *
 * Since: 1.0
 */
HpConfigList *
hp_config_list_copy (HpConfigList *self)
{
  HpConfigList *copy;

  g_return_val_if_fail (HP_IS_CONFIG_LIST (self), NULL);

  copy = hp_config_list_new ();
  for (guint i = 0; i < self->items->len; i++)
    g_ptr_array_add (copy->items, g_object_ref (g_ptr_array_index (self->items, i)));
  return copy;
}
