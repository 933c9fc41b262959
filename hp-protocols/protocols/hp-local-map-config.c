/* hp-local-map-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-local-map-config.h"
#include "hp-named-placement-private.h"
#include "hp-tensor-private.h"

/**
 * HpLocalMapConfig:
 *
 * Which inner callable of a module runs on local shards, and how its
 * arguments and results are laid out: the `local_map` of a
 * [class@Hp.ShardingConfig].
 *
 * When a module is parallelised, the callable the module registered
 * under [property@Hp.LocalMapConfig:callable-path] is wrapped with a [class@Hp.LocalMap]
 * made from the three lists of named placements: one entry per argument
 * ([property@Hp.LocalMapConfig:in-placements]), one per output
 * ([property@Hp.LocalMapConfig:out-placements]) and, optionally, one per argument
 * for its gradient ([property@Hp.LocalMapConfig:in-grad-placements]). A %NULL entry
 * marks an argument or output that is not a tensor.
 *
 * The setters keep a copy of the array they are given, but share its
 * named placements: treat a named placement as a value once it is in a
 * config, and set a new one instead of changing it.
 *
 * Since: 1.0
 */

struct _HpLocalMapConfig
{
  GObject parent_instance;

  gchar *callable_path;
  GPtrArray *in_placements;       /* HpNamedPlacement * or NULL */
  GPtrArray *out_placements;      /* HpNamedPlacement * or NULL */
  GPtrArray *in_grad_placements;  /* NULL when not set */
};

G_DEFINE_FINAL_TYPE (HpLocalMapConfig, hp_local_map_config, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_CALLABLE_PATH,
  PROP_IN_PLACEMENTS,
  PROP_OUT_PLACEMENTS,
  PROP_IN_GRAD_PLACEMENTS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_local_map_config_finalize (GObject *object)
{
  HpLocalMapConfig *self = HP_LOCAL_MAP_CONFIG (object);

  g_clear_pointer (&self->callable_path, g_free);
  g_clear_pointer (&self->in_placements, g_ptr_array_unref);
  g_clear_pointer (&self->out_placements, g_ptr_array_unref);
  g_clear_pointer (&self->in_grad_placements, g_ptr_array_unref);

  G_OBJECT_CLASS (hp_local_map_config_parent_class)->finalize (object);
}

static void
hp_local_map_config_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  HpLocalMapConfig *self = HP_LOCAL_MAP_CONFIG (object);

  switch (prop_id)
    {
    case PROP_CALLABLE_PATH:
      g_value_set_string (value, self->callable_path);
      break;

    case PROP_IN_PLACEMENTS:
      g_value_set_boxed (value, self->in_placements);
      break;

    case PROP_OUT_PLACEMENTS:
      g_value_set_boxed (value, self->out_placements);
      break;

    case PROP_IN_GRAD_PLACEMENTS:
      g_value_set_boxed (value, self->in_grad_placements);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_local_map_config_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  HpLocalMapConfig *self = HP_LOCAL_MAP_CONFIG (object);

  switch (prop_id)
    {
    case PROP_CALLABLE_PATH:
      hp_local_map_config_set_callable_path (self, g_value_get_string (value));
      break;

    case PROP_IN_PLACEMENTS:
      hp_local_map_config_set_in_placements (self, g_value_get_boxed (value));
      break;

    case PROP_OUT_PLACEMENTS:
      hp_local_map_config_set_out_placements (self, g_value_get_boxed (value));
      break;

    case PROP_IN_GRAD_PLACEMENTS:
      hp_local_map_config_set_in_grad_placements (self, g_value_get_boxed (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_local_map_config_class_init (HpLocalMapConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_local_map_config_finalize;
  object_class->get_property = hp_local_map_config_get_property;
  object_class->set_property = hp_local_map_config_set_property;

  /**
   * HpLocalMapConfig:callable-path:
   *
   * The name under which the module registered the callable to wrap
   * (see [method@Hp.Module.register_callable]), or %NULL while it is not set.
   *
   * Since: 1.0
   */
  properties[PROP_CALLABLE_PATH] =
    g_param_spec_string ("callable-path", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpLocalMapConfig:in-placements: (type GPtrArray(HpNamedPlacement))
   *
   * One named placement per argument of the callable, %NULL for an
   * argument that is not a tensor. Never %NULL itself: empty by default.
   *
   * Since: 1.0
   */
  properties[PROP_IN_PLACEMENTS] =
    g_param_spec_boxed ("in-placements", NULL, NULL,
                        G_TYPE_PTR_ARRAY,
                        (G_PARAM_READWRITE |
                         G_PARAM_EXPLICIT_NOTIFY |
                         G_PARAM_STATIC_STRINGS));

  /**
   * HpLocalMapConfig:out-placements: (type GPtrArray(HpNamedPlacement))
   *
   * One named placement per output of the callable, %NULL for an output
   * that is not a tensor. Never %NULL itself: empty by default.
   *
   * Since: 1.0
   */
  properties[PROP_OUT_PLACEMENTS] =
    g_param_spec_boxed ("out-placements", NULL, NULL,
                        G_TYPE_PTR_ARRAY,
                        (G_PARAM_READWRITE |
                         G_PARAM_EXPLICIT_NOTIFY |
                         G_PARAM_STATIC_STRINGS));

  /**
   * HpLocalMapConfig:in-grad-placements: (type GPtrArray(HpNamedPlacement))
   *
   * One named placement per argument for the layout of its gradient, or
   * %NULL (the default) to let [class@Hp.LocalMap] choose.
   *
   * Since: 1.0
   */
  properties[PROP_IN_GRAD_PLACEMENTS] =
    g_param_spec_boxed ("in-grad-placements", NULL, NULL,
                        G_TYPE_PTR_ARRAY,
                        (G_PARAM_READWRITE |
                         G_PARAM_EXPLICIT_NOTIFY |
                         G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_local_map_config_init (HpLocalMapConfig *self)
{
  self->in_placements = g_ptr_array_new_with_free_func (_hp_object_unref_nullable);
  self->out_placements = g_ptr_array_new_with_free_func (_hp_object_unref_nullable);
}

/**
 * hp_local_map_config_new:
 * @callable_path: (nullable): the name of the callable to wrap
 *
 * Creates a config for wrapping @callable_path, with no argument and no
 * output placements yet.
 *
 * Returns: (transfer full): a new [class@Hp.LocalMapConfig]
 *
 * Since: 1.0
 */
HpLocalMapConfig *
hp_local_map_config_new (const gchar *callable_path)
{
  return g_object_new (HP_TYPE_LOCAL_MAP_CONFIG,
                       "callable-path", callable_path,
                       NULL);
}

/**
 * hp_local_map_config_get_callable_path:
 * @self: a [class@Hp.LocalMapConfig]
 *
 * Gets [property@Hp.LocalMapConfig:callable-path].
 *
 * Returns: (transfer none) (nullable): the name of the callable
 *
 * Since: 1.0
 */
const gchar *
hp_local_map_config_get_callable_path (HpLocalMapConfig *self)
{
  g_return_val_if_fail (HP_IS_LOCAL_MAP_CONFIG (self), NULL);

  return self->callable_path;
}

/**
 * hp_local_map_config_set_callable_path:
 * @self: a [class@Hp.LocalMapConfig]
 * @callable_path: (nullable): the name of the callable to wrap
 *
 * Sets [property@Hp.LocalMapConfig:callable-path].
 *
 * Since: 1.0
 */
void
hp_local_map_config_set_callable_path (HpLocalMapConfig *self,
                                       const gchar      *callable_path)
{
  g_return_if_fail (HP_IS_LOCAL_MAP_CONFIG (self));

  if (g_strcmp0 (self->callable_path, callable_path) == 0)
    return;

  g_free (self->callable_path);
  self->callable_path = g_strdup (callable_path);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CALLABLE_PATH]);
}

static gboolean
check_list (GPtrArray *list)
{
  for (guint i = 0; list != NULL && i < list->len; i++)
    {
      gpointer named = g_ptr_array_index (list, i);

      if (named != NULL && !HP_IS_NAMED_PLACEMENT (named))
        return FALSE;
    }
  return TRUE;
}

/* Stores a copy of @list in *@field and notifies @prop, unless the
 * entries are equal to those there already. A NULL @list is stored as
 * NULL when the field is @nullable, else as an empty list. */
static void
set_list (HpLocalMapConfig  *self,
          GPtrArray        **field,
          GPtrArray         *list,
          gboolean           nullable,
          guint              prop)
{
  g_autoptr(GPtrArray) empty = NULL;

  if (list == NULL && !nullable)
    list = empty = g_ptr_array_new ();
  if (_hp_named_placement_lists_equal (*field, list))
    return;

  g_clear_pointer (field, g_ptr_array_unref);
  *field = list != NULL ? _hp_object_array_copy (list) : NULL;
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop]);
}

/**
 * hp_local_map_config_get_in_placements:
 * @self: a [class@Hp.LocalMapConfig]
 *
 * Gets [property@Hp.LocalMapConfig:in-placements].
 *
 * Returns: (transfer none) (element-type HpNamedPlacement): the named
 *   placements of the arguments, entries %NULL for non-tensor arguments;
 *   owned by @self
 *
 * Since: 1.0
 */
GPtrArray *
hp_local_map_config_get_in_placements (HpLocalMapConfig *self)
{
  g_return_val_if_fail (HP_IS_LOCAL_MAP_CONFIG (self), NULL);

  return self->in_placements;
}

/**
 * hp_local_map_config_set_in_placements:
 * @self: a [class@Hp.LocalMapConfig]
 * @placements: (nullable) (element-type HpNamedPlacement): one named
 *   placement or %NULL per argument; %NULL for none
 *
 * Sets [property@Hp.LocalMapConfig:in-placements] to a copy of @placements that
 * shares its named placements. Notifies unless the entries equal the
 * current ones.
 *
 * Since: 1.0
 */
void
hp_local_map_config_set_in_placements (HpLocalMapConfig *self,
                                       GPtrArray        *placements)
{
  g_return_if_fail (HP_IS_LOCAL_MAP_CONFIG (self));
  g_return_if_fail (check_list (placements));

  set_list (self, &self->in_placements, placements, FALSE, PROP_IN_PLACEMENTS);
}

/**
 * hp_local_map_config_get_out_placements:
 * @self: a [class@Hp.LocalMapConfig]
 *
 * Gets [property@Hp.LocalMapConfig:out-placements].
 *
 * Returns: (transfer none) (element-type HpNamedPlacement): the named
 *   placements of the outputs, entries %NULL for non-tensor outputs;
 *   owned by @self
 *
 * Since: 1.0
 */
GPtrArray *
hp_local_map_config_get_out_placements (HpLocalMapConfig *self)
{
  g_return_val_if_fail (HP_IS_LOCAL_MAP_CONFIG (self), NULL);

  return self->out_placements;
}

/**
 * hp_local_map_config_set_out_placements:
 * @self: a [class@Hp.LocalMapConfig]
 * @placements: (nullable) (element-type HpNamedPlacement): one named
 *   placement or %NULL per output; %NULL for none
 *
 * Sets [property@Hp.LocalMapConfig:out-placements] to a copy of @placements that
 * shares its named placements. Notifies unless the entries equal the
 * current ones.
 *
 * Since: 1.0
 */
void
hp_local_map_config_set_out_placements (HpLocalMapConfig *self,
                                        GPtrArray        *placements)
{
  g_return_if_fail (HP_IS_LOCAL_MAP_CONFIG (self));
  g_return_if_fail (check_list (placements));

  set_list (self, &self->out_placements, placements, FALSE, PROP_OUT_PLACEMENTS);
}

/**
 * hp_local_map_config_get_in_grad_placements:
 * @self: a [class@Hp.LocalMapConfig]
 *
 * Gets [property@Hp.LocalMapConfig:in-grad-placements].
 *
 * Returns: (transfer none) (nullable) (element-type HpNamedPlacement):
 *   the named placements of the arguments' gradients, or %NULL if they
 *   are not set; owned by @self
 *
 * Since: 1.0
 */
GPtrArray *
hp_local_map_config_get_in_grad_placements (HpLocalMapConfig *self)
{
  g_return_val_if_fail (HP_IS_LOCAL_MAP_CONFIG (self), NULL);

  return self->in_grad_placements;
}

/**
 * hp_local_map_config_set_in_grad_placements:
 * @self: a [class@Hp.LocalMapConfig]
 * @placements: (nullable) (element-type HpNamedPlacement): one named
 *   placement or %NULL per argument, or %NULL to unset them
 *
 * Sets [property@Hp.LocalMapConfig:in-grad-placements] to a copy of @placements
 * that shares its named placements. %NULL (not set) and an empty array
 * differ. Notifies unless the entries equal the current ones.
 *
 * Since: 1.0
 */
void
hp_local_map_config_set_in_grad_placements (HpLocalMapConfig *self,
                                            GPtrArray        *placements)
{
  g_return_if_fail (HP_IS_LOCAL_MAP_CONFIG (self));
  g_return_if_fail (check_list (placements));

  set_list (self, &self->in_grad_placements, placements, TRUE, PROP_IN_GRAD_PLACEMENTS);
}

/**
 * hp_local_map_config_copy:
 * @self: a [class@Hp.LocalMapConfig]
 *
 * Copies @self: new arrays sharing the named placements, so setting or
 * changing a list of either config does not affect the other.
 *
 * Returns: (transfer full): a new [class@Hp.LocalMapConfig]
 *
 * Since: 1.0
 */
HpLocalMapConfig *
hp_local_map_config_copy (HpLocalMapConfig *self)
{
  HpLocalMapConfig *copy;

  g_return_val_if_fail (HP_IS_LOCAL_MAP_CONFIG (self), NULL);

  copy = hp_local_map_config_new (self->callable_path);
  g_ptr_array_unref (copy->in_placements);
  copy->in_placements = _hp_object_array_copy (self->in_placements);
  g_ptr_array_unref (copy->out_placements);
  copy->out_placements = _hp_object_array_copy (self->out_placements);
  if (self->in_grad_placements != NULL)
    copy->in_grad_placements = _hp_object_array_copy (self->in_grad_placements);
  return copy;
}

/**
 * hp_local_map_config_equal:
 * @self: a [class@Hp.LocalMapConfig]
 * @other: another [class@Hp.LocalMapConfig]
 *
 * Tells whether two configs name the same callable and have equal
 * lists: the same length, %NULL entries in the same places and equal
 * named placements elsewhere (see [method@Hp.NamedPlacement.equal]). Unset
 * gradient placements equal only unset ones.
 *
 * Returns: %TRUE if @self and @other are equal
 *
 * Since: 1.0
 */
gboolean
hp_local_map_config_equal (HpLocalMapConfig *self,
                           HpLocalMapConfig *other)
{
  g_return_val_if_fail (HP_IS_LOCAL_MAP_CONFIG (self), FALSE);
  g_return_val_if_fail (HP_IS_LOCAL_MAP_CONFIG (other), FALSE);

  return g_strcmp0 (self->callable_path, other->callable_path) == 0 &&
         _hp_named_placement_lists_equal (self->in_placements, other->in_placements) &&
         _hp_named_placement_lists_equal (self->out_placements, other->out_placements) &&
         _hp_named_placement_lists_equal (self->in_grad_placements, other->in_grad_placements);
}
