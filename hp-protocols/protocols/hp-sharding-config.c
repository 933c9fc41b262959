/* hp-sharding-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-name-map-private.h"
#include "hp-named-placement-private.h"
#include "hp-sharding-config.h"
#include "hp-tensor-private.h"

/**
 * HpShardingConfig:
 *
 * How a module's parameters, buffers, inputs and outputs are laid out
 * over a device mesh, by mesh axis name: the `sharding_config` of a
 * module config.
 *
 * A sharding config holds:
 *
 * - `state_shardings`: parameter or buffer path (dotted paths reach into
 *   children) -> the [class@Hp.NamedPlacement] the state is distributed with;
 * - `in_src_shardings`: forward argument name -> the layout a plain
 *   tensor argument is taken to have (and a DTensor argument must have);
 * - `in_dst_shardings`: forward argument name -> the layout the forward
 *   function gets the argument in;
 * - `out_src_shardings`: per output index, the layout the forward
 *   function produces;
 * - `out_dst_shardings`: per output index, the layout the caller gets;
 * - `local_map`: an optional [class@Hp.LocalMapConfig] naming an inner callable
 *   to run on local shards.
 *
 * The three name-keyed maps keep their names in the order they were
 * first set; setting %NULL removes an entry. The two output lists may
 * hold %NULL entries (outputs left as they are): setting an index past
 * the end grows the list with %NULL entries, and trailing %NULL entries
 * are dropped.
 *
 * [signal@Hp.ShardingConfig::changed] is emitted once for every setter call that
 * changes the config, and whenever the [class@Hp.LocalMapConfig] it holds
 * notifies a change. Named placements are shared, not copied: treat one
 * as a value once it is in a config and set a new one instead of
 * changing it (such changes are not noticed). A sharding config can be
 * shared by reference between modules.
 *
 * Since: 1.0
 */

struct _HpShardingConfig
{
  GObject parent_instance;

  HpNameMap state;     /* name -> HpNamedPlacement */
  HpNameMap in_src;
  HpNameMap in_dst;
  GPtrArray *out_src;   /* HpNamedPlacement * or NULL, no trailing NULL */
  GPtrArray *out_dst;

  HpLocalMapConfig *local_map;
  gulong local_map_handler;
};

G_DEFINE_FINAL_TYPE (HpShardingConfig, hp_sharding_config, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_LOCAL_MAP,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum {
  CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static GPtrArray *
out_list_new (void)
{
  return g_ptr_array_new_with_free_func (_hp_object_unref_nullable);
}

/* Returns whether the list changed */
static gboolean
out_list_set (GPtrArray        *list,
              guint             index,
              HpNamedPlacement *named)
{
  HpNamedPlacement *old = index < list->len ? g_ptr_array_index (list, index) : NULL;

  if (_hp_named_placement_equal0 (old, named))
    return FALSE;

  while (list->len <= index)
    g_ptr_array_add (list, NULL);
  g_ptr_array_index (list, index) = named != NULL ? g_object_ref (named) : NULL;
  g_clear_object (&old);

  while (list->len > 0 && g_ptr_array_index (list, list->len - 1) == NULL)
    g_ptr_array_set_size (list, list->len - 1);
  return TRUE;
}

static void
emit_changed (HpShardingConfig *self)
{
  g_signal_emit (self, signals[CHANGED], 0);
}

static void
local_map_notified (HpLocalMapConfig *local_map,
                    GParamSpec       *pspec,
                    HpShardingConfig *self)
{
  emit_changed (self);
}

/* Drops the local map config and stops listening to it */
static void
release_local_map (HpShardingConfig *self)
{
  if (self->local_map == NULL)
    return;

  g_clear_signal_handler (&self->local_map_handler, self->local_map);
  g_clear_object (&self->local_map);
}

/* Holds @local_map (a new reference) and listens to its changes */
static void
hold_local_map (HpShardingConfig *self,
                HpLocalMapConfig *local_map)
{
  self->local_map = local_map;
  if (local_map != NULL)
    self->local_map_handler = g_signal_connect (local_map, "notify",
                                                G_CALLBACK (local_map_notified), self);
}

static void
hp_sharding_config_finalize (GObject *object)
{
  HpShardingConfig *self = HP_SHARDING_CONFIG (object);

  release_local_map (self);
  _hp_name_map_clear (&self->state);
  _hp_name_map_clear (&self->in_src);
  _hp_name_map_clear (&self->in_dst);
  g_clear_pointer (&self->out_src, g_ptr_array_unref);
  g_clear_pointer (&self->out_dst, g_ptr_array_unref);

  G_OBJECT_CLASS (hp_sharding_config_parent_class)->finalize (object);
}

static void
hp_sharding_config_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  HpShardingConfig *self = HP_SHARDING_CONFIG (object);

  switch (prop_id)
    {
    case PROP_LOCAL_MAP:
      g_value_set_object (value, self->local_map);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_sharding_config_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  HpShardingConfig *self = HP_SHARDING_CONFIG (object);

  switch (prop_id)
    {
    case PROP_LOCAL_MAP:
      hp_sharding_config_set_local_map (self, g_value_get_object (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_sharding_config_class_init (HpShardingConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_sharding_config_finalize;
  object_class->get_property = hp_sharding_config_get_property;
  object_class->set_property = hp_sharding_config_set_property;

  /**
   * HpShardingConfig:local-map:
   *
   * The inner callable to run on local shards and its layouts, or %NULL
   * for none. The config keeps a reference, not a copy, and emits
   * [signal@Hp.ShardingConfig::changed] when it notifies a change.
   *
   * Since: 1.0
   */
  properties[PROP_LOCAL_MAP] =
    g_param_spec_object ("local-map", NULL, NULL,
                         HP_TYPE_LOCAL_MAP_CONFIG,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * HpShardingConfig::changed:
   * @self: the sharding config
   *
   * Emitted once after each change: an entry added, replaced by an
   * unequal one or removed, a different local map config set, or a
   * change the local map config notified.
   *
   * Since: 1.0
   */
  signals[CHANGED] =
    g_signal_new ("changed",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 0);
}

static void
hp_sharding_config_init (HpShardingConfig *self)
{
  _hp_name_map_init (&self->state);
  _hp_name_map_init (&self->in_src);
  _hp_name_map_init (&self->in_dst);
  self->out_src = out_list_new ();
  self->out_dst = out_list_new ();
}

/**
 * hp_sharding_config_new:
 *
 * Creates an empty sharding config: no entries and no local map.
 *
 * Returns: (transfer full): a new [class@Hp.ShardingConfig]
 *
 * Since: 1.0
 */
HpShardingConfig *
hp_sharding_config_new (void)
{
  return g_object_new (HP_TYPE_SHARDING_CONFIG, NULL);
}

/**
 * hp_sharding_config_set_state_sharding:
 * @self: a [class@Hp.ShardingConfig]
 * @path: the path of a parameter or buffer (such as `weight` or
 *   `attention.wq.weight`), not empty
 * @named: (nullable): its layout, or %NULL to remove the entry
 *
 * Sets how the state at @path is distributed when the module is
 * parallelised. A new path goes after the existing ones; an existing
 * path keeps its position. Emits [signal@Hp.ShardingConfig::changed] unless
 * nothing changes (@named equal to the current entry, or %NULL for a
 * path without one).
 *
 * Since: 1.0
 */
void
hp_sharding_config_set_state_sharding (HpShardingConfig *self,
                                       const gchar      *path,
                                       HpNamedPlacement *named)
{
  g_return_if_fail (HP_IS_SHARDING_CONFIG (self));
  g_return_if_fail (path != NULL && *path != '\0');
  g_return_if_fail (named == NULL || HP_IS_NAMED_PLACEMENT (named));

  if (_hp_name_map_set (&self->state, path, named, (GEqualFunc) hp_named_placement_equal))
    emit_changed (self);
}

/**
 * hp_sharding_config_get_state_sharding:
 * @self: a [class@Hp.ShardingConfig]
 * @path: the path of a parameter or buffer
 *
 * Gets the layout of the state at @path.
 *
 * Returns: (transfer none) (nullable): the named placement, or %NULL if
 *   @self has none for @path
 *
 * Since: 1.0
 */
HpNamedPlacement *
hp_sharding_config_get_state_sharding (HpShardingConfig *self,
                                       const gchar      *path)
{
  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  return _hp_name_map_lookup (&self->state, path);
}

/**
 * hp_sharding_config_list_state_shardings:
 * @self: a [class@Hp.ShardingConfig]
 *
 * Gets the paths that have a state sharding, in the order they were
 * first set.
 *
 * Returns: (transfer full) (array zero-terminated=1): a new
 *   %NULL-terminated array of paths
 *
 * Since: 1.0
 */
GStrv
hp_sharding_config_list_state_shardings (HpShardingConfig *self)
{
  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), NULL);

  return _hp_name_map_dup_names (&self->state);
}

/**
 * hp_sharding_config_set_in_src_sharding:
 * @self: a [class@Hp.ShardingConfig]
 * @arg_name: the name of a forward argument, not empty
 * @named: (nullable): its layout, or %NULL to remove the entry
 *
 * Sets the layout the forward argument @arg_name comes in: a plain
 * tensor is taken to be the local part of a DTensor with this layout,
 * and a DTensor must have it. Ordering and signal as for
 * [method@Hp.ShardingConfig.set_state_sharding].
 *
 * Since: 1.0
 */
void
hp_sharding_config_set_in_src_sharding (HpShardingConfig *self,
                                        const gchar      *arg_name,
                                        HpNamedPlacement *named)
{
  g_return_if_fail (HP_IS_SHARDING_CONFIG (self));
  g_return_if_fail (arg_name != NULL && *arg_name != '\0');
  g_return_if_fail (named == NULL || HP_IS_NAMED_PLACEMENT (named));

  if (_hp_name_map_set (&self->in_src, arg_name, named, (GEqualFunc) hp_named_placement_equal))
    emit_changed (self);
}

/**
 * hp_sharding_config_get_in_src_sharding:
 * @self: a [class@Hp.ShardingConfig]
 * @arg_name: the name of a forward argument
 *
 * Gets the layout the forward argument @arg_name comes in.
 *
 * Returns: (transfer none) (nullable): the named placement, or %NULL if
 *   @self has none for @arg_name
 *
 * Since: 1.0
 */
HpNamedPlacement *
hp_sharding_config_get_in_src_sharding (HpShardingConfig *self,
                                        const gchar      *arg_name)
{
  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), NULL);
  g_return_val_if_fail (arg_name != NULL, NULL);

  return _hp_name_map_lookup (&self->in_src, arg_name);
}

/**
 * hp_sharding_config_list_in_src_shardings:
 * @self: a [class@Hp.ShardingConfig]
 *
 * Gets the argument names that have an input source sharding, in the
 * order they were first set.
 *
 * Returns: (transfer full) (array zero-terminated=1): a new
 *   %NULL-terminated array of names
 *
 * Since: 1.0
 */
GStrv
hp_sharding_config_list_in_src_shardings (HpShardingConfig *self)
{
  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), NULL);

  return _hp_name_map_dup_names (&self->in_src);
}

/**
 * hp_sharding_config_set_in_dst_sharding:
 * @self: a [class@Hp.ShardingConfig]
 * @arg_name: the name of a forward argument, not empty
 * @named: (nullable): its layout, or %NULL to remove the entry
 *
 * Sets the layout the forward function gets the argument @arg_name in;
 * the argument is redistributed to it. Ordering and signal as for
 * [method@Hp.ShardingConfig.set_state_sharding].
 *
 * Since: 1.0
 */
void
hp_sharding_config_set_in_dst_sharding (HpShardingConfig *self,
                                        const gchar      *arg_name,
                                        HpNamedPlacement *named)
{
  g_return_if_fail (HP_IS_SHARDING_CONFIG (self));
  g_return_if_fail (arg_name != NULL && *arg_name != '\0');
  g_return_if_fail (named == NULL || HP_IS_NAMED_PLACEMENT (named));

  if (_hp_name_map_set (&self->in_dst, arg_name, named, (GEqualFunc) hp_named_placement_equal))
    emit_changed (self);
}

/**
 * hp_sharding_config_get_in_dst_sharding:
 * @self: a [class@Hp.ShardingConfig]
 * @arg_name: the name of a forward argument
 *
 * Gets the layout the forward function gets the argument @arg_name in.
 *
 * Returns: (transfer none) (nullable): the named placement, or %NULL if
 *   @self has none for @arg_name
 *
 * Since: 1.0
 */
HpNamedPlacement *
hp_sharding_config_get_in_dst_sharding (HpShardingConfig *self,
                                        const gchar      *arg_name)
{
  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), NULL);
  g_return_val_if_fail (arg_name != NULL, NULL);

  return _hp_name_map_lookup (&self->in_dst, arg_name);
}

/**
 * hp_sharding_config_list_in_dst_shardings:
 * @self: a [class@Hp.ShardingConfig]
 *
 * Gets the argument names that have an input destination sharding, in
 * the order they were first set.
 *
 * Returns: (transfer full) (array zero-terminated=1): a new
 *   %NULL-terminated array of names
 *
 * Since: 1.0
 */
GStrv
hp_sharding_config_list_in_dst_shardings (HpShardingConfig *self)
{
  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), NULL);

  return _hp_name_map_dup_names (&self->in_dst);
}

/**
 * hp_sharding_config_set_out_src_sharding:
 * @self: a [class@Hp.ShardingConfig]
 * @index: the index of a forward output
 * @named: (nullable): its layout, or %NULL for none
 *
 * Sets the layout the forward function produces output @index in. An
 * @index past the end grows the list with %NULL entries; trailing %NULL
 * entries are dropped, so setting the last entry to %NULL shortens the
 * list. Emits [signal@Hp.ShardingConfig::changed] unless the entry was equal to
 * @named already.
 *
 * Since: 1.0
 */
void
hp_sharding_config_set_out_src_sharding (HpShardingConfig *self,
                                         guint             index,
                                         HpNamedPlacement *named)
{
  g_return_if_fail (HP_IS_SHARDING_CONFIG (self));
  g_return_if_fail (named == NULL || HP_IS_NAMED_PLACEMENT (named));

  if (out_list_set (self->out_src, index, named))
    emit_changed (self);
}

/**
 * hp_sharding_config_get_out_src_sharding:
 * @self: a [class@Hp.ShardingConfig]
 * @index: the index of a forward output
 *
 * Gets the layout the forward function produces output @index in.
 *
 * Returns: (transfer none) (nullable): the named placement, or %NULL
 *   for a %NULL entry or an @index past the end
 *
 * Since: 1.0
 */
HpNamedPlacement *
hp_sharding_config_get_out_src_sharding (HpShardingConfig *self,
                                         guint             index)
{
  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), NULL);

  return index < self->out_src->len ? g_ptr_array_index (self->out_src, index) : NULL;
}

/**
 * hp_sharding_config_get_n_out_src_shardings:
 * @self: a [class@Hp.ShardingConfig]
 *
 * Gets the length of the output source list: one more than the index
 * of its last entry that is not %NULL.
 *
 * Returns: the number of entries
 *
 * Since: 1.0
 */
guint
hp_sharding_config_get_n_out_src_shardings (HpShardingConfig *self)
{
  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), 0);

  return self->out_src->len;
}

/**
 * hp_sharding_config_set_out_dst_sharding:
 * @self: a [class@Hp.ShardingConfig]
 * @index: the index of a forward output
 * @named: (nullable): its layout, or %NULL for none
 *
 * Sets the layout the caller gets output @index in; the output is
 * redistributed to it. The list behaves as in
 * [method@Hp.ShardingConfig.set_out_src_sharding].
 *
 * Since: 1.0
 */
void
hp_sharding_config_set_out_dst_sharding (HpShardingConfig *self,
                                         guint             index,
                                         HpNamedPlacement *named)
{
  g_return_if_fail (HP_IS_SHARDING_CONFIG (self));
  g_return_if_fail (named == NULL || HP_IS_NAMED_PLACEMENT (named));

  if (out_list_set (self->out_dst, index, named))
    emit_changed (self);
}

/**
 * hp_sharding_config_get_out_dst_sharding:
 * @self: a [class@Hp.ShardingConfig]
 * @index: the index of a forward output
 *
 * Gets the layout the caller gets output @index in.
 *
 * Returns: (transfer none) (nullable): the named placement, or %NULL
 *   for a %NULL entry or an @index past the end
 *
 * Since: 1.0
 */
HpNamedPlacement *
hp_sharding_config_get_out_dst_sharding (HpShardingConfig *self,
                                         guint             index)
{
  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), NULL);

  return index < self->out_dst->len ? g_ptr_array_index (self->out_dst, index) : NULL;
}

/**
 * hp_sharding_config_get_n_out_dst_shardings:
 * @self: a [class@Hp.ShardingConfig]
 *
 * Gets the length of the output destination list: one more than the
 * index of its last entry that is not %NULL.
 *
 * Returns: the number of entries
 *
 * Since: 1.0
 */
guint
hp_sharding_config_get_n_out_dst_shardings (HpShardingConfig *self)
{
  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), 0);

  return self->out_dst->len;
}

/**
 * hp_sharding_config_set_local_map:
 * @self: a [class@Hp.ShardingConfig]
 * @local_map: (nullable): the local map config, or %NULL for none
 *
 * Sets [property@Hp.ShardingConfig:local-map]. @self keeps a reference to
 * @local_map (not a copy) and from then on emits
 * [signal@Hp.ShardingConfig::changed] when @local_map notifies a change. Setting
 * a different object notifies [property@Hp.ShardingConfig:local-map]; it emits
 * [signal@Hp.ShardingConfig::changed] too unless the new config is equal to the
 * old one (see [method@Hp.LocalMapConfig.equal]).
 *
 * Since: 1.0
 */
void
hp_sharding_config_set_local_map (HpShardingConfig *self,
                                  HpLocalMapConfig *local_map)
{
  gboolean same_value;

  g_return_if_fail (HP_IS_SHARDING_CONFIG (self));
  g_return_if_fail (local_map == NULL || HP_IS_LOCAL_MAP_CONFIG (local_map));

  if (self->local_map == local_map)
    return;

  same_value = self->local_map != NULL && local_map != NULL &&
               hp_local_map_config_equal (self->local_map, local_map);
  release_local_map (self);
  hold_local_map (self, local_map != NULL ? g_object_ref (local_map) : NULL);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOCAL_MAP]);
  if (!same_value)
    emit_changed (self);
}

/**
 * hp_sharding_config_get_local_map:
 * @self: a [class@Hp.ShardingConfig]
 *
 * Gets [property@Hp.ShardingConfig:local-map].
 *
 * Returns: (transfer none) (nullable): the local map config, or %NULL
 *
 * Since: 1.0
 */
HpLocalMapConfig *
hp_sharding_config_get_local_map (HpShardingConfig *self)
{
  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), NULL);

  return self->local_map;
}

/**
 * hp_sharding_config_copy:
 * @self: a [class@Hp.ShardingConfig]
 *
 * Copies @self: new maps and lists with the same entries in the same
 * order, sharing the named placements, and a copy of the local map
 * config (see [method@Hp.LocalMapConfig.copy]). Later changes to either
 * config do not affect the other.
 *
 * Returns: (transfer full): a new [class@Hp.ShardingConfig]
 *
 * Since: 1.0
 */
HpShardingConfig *
hp_sharding_config_copy (HpShardingConfig *self)
{
  HpShardingConfig *copy;

  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), NULL);

  copy = hp_sharding_config_new ();
  _hp_name_map_copy (&copy->state, &self->state);
  _hp_name_map_copy (&copy->in_src, &self->in_src);
  _hp_name_map_copy (&copy->in_dst, &self->in_dst);
  g_ptr_array_unref (copy->out_src);
  copy->out_src = _hp_object_array_copy (self->out_src);
  g_ptr_array_unref (copy->out_dst);
  copy->out_dst = _hp_object_array_copy (self->out_dst);
  if (self->local_map != NULL)
    hold_local_map (copy, hp_local_map_config_copy (self->local_map));
  return copy;
}

/**
 * hp_sharding_config_equal:
 * @self: a [class@Hp.ShardingConfig]
 * @other: another [class@Hp.ShardingConfig]
 *
 * Tells whether two sharding configs are equal: the same names with
 * equal named placements in each map (in any order), output lists of
 * the same length with equal entries, and both without a local map
 * config or with equal ones.
 *
 * Returns: %TRUE if @self and @other are equal
 *
 * Since: 1.0
 */
gboolean
hp_sharding_config_equal (HpShardingConfig *self,
                          HpShardingConfig *other)
{
  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), FALSE);
  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (other), FALSE);

  if (!_hp_name_map_equal (&self->state, &other->state, (GEqualFunc) hp_named_placement_equal) ||
      !_hp_name_map_equal (&self->in_src, &other->in_src, (GEqualFunc) hp_named_placement_equal) ||
      !_hp_name_map_equal (&self->in_dst, &other->in_dst, (GEqualFunc) hp_named_placement_equal) ||
      !_hp_named_placement_lists_equal (self->out_src, other->out_src) ||
      !_hp_named_placement_lists_equal (self->out_dst, other->out_dst))
    return FALSE;

  if (self->local_map == NULL || other->local_map == NULL)
    return self->local_map == other->local_map;
  return hp_local_map_config_equal (self->local_map, other->local_map);
}

/* `tp:S(0)` for one axis, `(tp:S(0), dp:R)` for several or none, `None`
 * for NULL */
static void
append_named (GString          *out,
              HpNamedPlacement *named)
{
  g_autofree gchar *text = NULL;

  if (named == NULL)
    {
      g_string_append (out, "None");
      return;
    }

  text = hp_named_placement_to_string (named);
  if (hp_named_placement_get_n_axes (named) == 1)
    g_string_append (out, text);
  else
    g_string_append_printf (out, "(%s)", text);
}

static void
append_map (GString     *out,
            const gchar *label,
            HpNameMap   *map)
{
  g_string_append_printf (out, "%s={", label);
  for (guint i = 0; i < map->names->len; i++)
    {
      g_string_append_printf (out, "%s%s: ", i > 0 ? ", " : "",
                              (const gchar *) g_ptr_array_index (map->names, i));
      append_named (out, g_ptr_array_index (map->values, i));
    }
  g_string_append_c (out, '}');
}

static void
append_list (GString     *out,
             const gchar *label,
             GPtrArray   *list)
{
  g_string_append_printf (out, "%s=", label);
  if (list == NULL)
    {
      g_string_append (out, "None");
      return;
    }

  g_string_append_c (out, '[');
  for (guint i = 0; i < list->len; i++)
    {
      if (i > 0)
        g_string_append (out, ", ");
      append_named (out, g_ptr_array_index (list, i));
    }
  g_string_append_c (out, ']');
}

/**
 * hp_sharding_config_to_string:
 * @self: a [class@Hp.ShardingConfig]
 *
 * Formats @self on one line for reading, such as
 * `ShardingConfig(state={weight: tp:S(0)}, in_src={}, in_dst={input: tp:R},
 * out_src=[], out_dst=[tp:S(-1)], local_map=None)`. A named placement
 * with one axis is written as [method@Hp.NamedPlacement.to_string] does, one
 * with several axes (or none) in parentheses; %NULL entries are `None`.
 * A local map config is written as
 * `LocalMapConfig(callable_path='attention', in=[...], out=[...],
 * in_grad=None)`.
 *
 * Returns: (transfer full): the text
 *
 * Since: 1.0
 */
gchar *
hp_sharding_config_to_string (HpShardingConfig *self)
{
  GString *out;

  g_return_val_if_fail (HP_IS_SHARDING_CONFIG (self), NULL);

  out = g_string_new ("ShardingConfig(");
  append_map (out, "state", &self->state);
  g_string_append (out, ", ");
  append_map (out, "in_src", &self->in_src);
  g_string_append (out, ", ");
  append_map (out, "in_dst", &self->in_dst);
  g_string_append (out, ", ");
  append_list (out, "out_src", self->out_src);
  g_string_append (out, ", ");
  append_list (out, "out_dst", self->out_dst);
  g_string_append (out, ", local_map=");

  if (self->local_map == NULL)
    {
      g_string_append (out, "None");
    }
  else
    {
      const gchar *path = hp_local_map_config_get_callable_path (self->local_map);

      g_string_append (out, "LocalMapConfig(callable_path=");
      if (path != NULL)
        g_string_append_printf (out, "'%s'", path);
      else
        g_string_append (out, "None");
      g_string_append (out, ", ");
      append_list (out, "in", hp_local_map_config_get_in_placements (self->local_map));
      g_string_append (out, ", ");
      append_list (out, "out", hp_local_map_config_get_out_placements (self->local_map));
      g_string_append (out, ", ");
      append_list (out, "in_grad", hp_local_map_config_get_in_grad_placements (self->local_map));
      g_string_append_c (out, ')');
    }

  g_string_append_c (out, ')');
  return g_string_free (out, FALSE);
}
