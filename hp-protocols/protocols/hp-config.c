/* hp-config.c: the HpConfig class, its owner registry, its fields, and
 * the value operations build, copy, replace, equal and traverse
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <gobject/gvaluecollector.h>

#include "hp-config-list.h"
#include "hp-config-private.h"
#include "hp-config.h"
#include "hp-configurable.h"
#include "hp-error.h"
#include "hp-initializer.h"
#include "hp-local-map-config.h"
#include "hp-named-placement.h"
#include "hp-param-init.h"
#include "hp-sharding-config.h"

/**
 * HpConfig:
 *
 * The configuration of an object, the torchtitan `Config` dataclass
 * nested in every configurable class, as a GObject.
 *
 * A configuration class is a subclass of [class@Hp.Config] whose **fields** are
 * its readable and writable properties (construct-only properties are
 * not fields). The param specs are the documentation and the validation
 * of the fields: their defaults are the defaults of the configuration,
 * their ranges the values it accepts. The fields are ordered as they
 * are declared: the fields of a parent class first, then those of the
 * class itself by property id ([method@Hp.Config.list_fields]); printing, JSON
 * and [method@Hp.Config.traverse] follow that order.
 *
 * A field may have one of these types: `gboolean`, `gint`, `guint`,
 * `glong`, `gulong`, `gint64`, `guint64`, `gfloat`, `gdouble`, a string, an
 * enum, a flags type, a string array (%G_TYPE_STRV), a nested
 * configuration (any [class@Hp.Config] type; the value may be of a subtype), an
 * [class@Hp.ConfigList], an [class@Hp.NamedPlacement], an [class@Hp.ShardingConfig], an
 * [class@Hp.LocalMapConfig], an [class@Hp.ParamInit] or an [class@Hp.Initializer]. A readable
 * and writable property of any other type is not a field: it is
 * neither copied, compared nor written, and a warning names it the
 * first time the fields of its class are listed.
 *
 * Each configuration class names the class it builds, its **owner**, in
 * its class_init with [method@Hp.ConfigClass.set_owner_type], or from a
 * language binding with [func@Hp.Config.register_owner]. A configuration
 * class without an owner of its own builds the owner of its nearest
 * ancestor. [method@Hp.Config.build] makes a new owner instance whose
 * [property@Hp.Configurable:config] is a shallow copy of the configuration, so a
 * configuration can be built any number of times and changing it later
 * does not change what was built from it.
 *
 * Configurations are values: [method@Hp.Config.copy] and [method@Hp.Config.replace]
 * make new ones, [method@Hp.Config.equal] compares them field by field, and
 * [method@Hp.Config.to_json] and [ctor@Hp.Config.new_from_json] write and strictly
 * read them. Copies are shallow, as Python's `dataclasses.replace()`
 * is: nested configurations, lists and the other object values are
 * shared between a configuration and its copies, strings and string
 * arrays are copied.
 *
 * Fields can also be reached by a dotted path through nested
 * configurations and list items, as `layers.0.attention.n-heads`, and
 * set from and read as text ([method@Hp.Config.set_path_from_string],
 * [method@Hp.Config.get_path_as_string]), which is what a command-line
 * override or a configuration editor needs.
 *
 * Since: 1.0
 */

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (HpConfig, hp_config, G_TYPE_OBJECT)

enum {
  BUILT,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* The owner registry and the field lists of the config classes */
G_LOCK_DEFINE_STATIC (registry);
static GHashTable *owner_of_config;     /* config GType -> owner GType */
static GHashTable *config_of_owner;     /* owner GType -> first config GType registered */
static GHashTable *fields_of_config;    /* config GType -> GPtrArray of GParamSpec */

HpConfigPrivate *
_hp_config_get_private (HpConfig *self)
{
  return hp_config_get_instance_private (self);
}

static void
hp_config_constructed (GObject *object)
{
  G_OBJECT_CLASS (hp_config_parent_class)->constructed (object);

  _hp_config_fields_construct (HP_CONFIG (object));
}

static void
hp_config_dispose (GObject *object)
{
  _hp_config_fields_dispose (HP_CONFIG (object));

  G_OBJECT_CLASS (hp_config_parent_class)->dispose (object);
}

static void
hp_config_finalize (GObject *object)
{
  _hp_config_fields_finalize (HP_CONFIG (object));

  G_OBJECT_CLASS (hp_config_parent_class)->finalize (object);
}

static gboolean
hp_config_real_validate (HpConfig  *self,
                         GError   **error)
{
  return TRUE;
}

/**
 * HpConfigClass::validate:
 * @self: the configuration
 * @error: return location for a [struct@GLib.Error]
 *
 * Checks what the param specs of the fields cannot: how fields agree
 * with each other (the number of heads divides the model dim, ...).
 * [method@Hp.Config.build] runs it before it makes anything, and
 * [method@Hp.Config.validate] runs it on a configuration and on every
 * configuration nested in it, so that a configuration that validates
 * builds. An implementation chains up to its parent class first; the
 * base implementation accepts everything.
 *
 * Returns: %TRUE if @self is valid, %FALSE with @error set
 *   ([HP_ERROR_CONFIG][error@Hp.Error]) otherwise
 *
 * Since: 1.0
 */

static void
hp_config_class_init (HpConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = hp_config_constructed;
  object_class->dispose = hp_config_dispose;
  object_class->finalize = hp_config_finalize;
  klass->validate = hp_config_real_validate;

  /**
   * HpConfig::built:
   * @self: the configuration
   * @instance: the object [method@Hp.Config.build] just made
   *
   * Emitted by [method@Hp.Config.build] and [method@Hp.Config.build_with_properties]
   * after they made an instance of the owner class.
   *
   * Since: 1.0
   */
  signals[BUILT] =
    g_signal_new ("built",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_OBJECT);
}

static void
hp_config_init (HpConfig *self)
{
}

/* ------------------------------------------------------------------ */
/* Owners                                                              */

static void
register_owner (GType config_type,
                GType owner_type)
{
  G_LOCK (registry);
  if (owner_of_config == NULL)
    {
      owner_of_config = g_hash_table_new (NULL, NULL);
      config_of_owner = g_hash_table_new (NULL, NULL);
    }
  g_hash_table_insert (owner_of_config, GSIZE_TO_POINTER (config_type), GSIZE_TO_POINTER (owner_type));
  if (!g_hash_table_contains (config_of_owner, GSIZE_TO_POINTER (owner_type)))
    g_hash_table_insert (config_of_owner, GSIZE_TO_POINTER (owner_type), GSIZE_TO_POINTER (config_type));
  G_UNLOCK (registry);
}

/* Looks @type and then its ancestors up to (not including) @stop in
 * @table; G_TYPE_INVALID if none is there */
static GType
lookup_type_chain (GHashTable *table,
                   GType       type,
                   GType       stop)
{
  GType found = G_TYPE_INVALID;

  G_LOCK (registry);
  for (GType t = type; table != NULL && t != stop && t != G_TYPE_INVALID; t = g_type_parent (t))
    {
      gpointer value;

      if (g_hash_table_lookup_extended (table, GSIZE_TO_POINTER (t), NULL, &value))
        {
          found = GPOINTER_TO_SIZE (value);
          break;
        }
    }
  G_UNLOCK (registry);

  return found;
}

/* Runs the class_init of every registered config type that has not run
 * it yet, so that the owners they name are known */
static void
initialise_config_classes (GType type)
{
  g_autofree GType *children = NULL;
  guint n_children;

  if (g_type_class_peek (type) == NULL)
    g_type_class_unref (g_type_class_ref (type));

  children = g_type_children (type, &n_children);
  for (guint i = 0; i < n_children; i++)
    initialise_config_classes (children[i]);
}

/**
 * hp_config_class_set_owner_type:
 * @klass: the class of a configuration type, in its class_init
 * @owner_type: the [class@Hp.Configurable] type that configurations of this
 *   class build
 *
 * Names the class that [method@Hp.Config.build] makes from configurations of
 * @klass and its subclasses that do not name an owner of their own.
 * This is what the torchtitan `__init_subclass__` hook does for a
 * `Config` class nested in a configurable class.
 *
 * The first configuration type named for an owner type is also the one
 * [func@Hp.Config.type_for_owner] gives for it.
 *
 * Since: 1.0
 */
void
hp_config_class_set_owner_type (HpConfigClass *klass,
                                GType          owner_type)
{
  g_return_if_fail (HP_IS_CONFIG_CLASS (klass));
  g_return_if_fail (g_type_is_a (owner_type, HP_TYPE_CONFIGURABLE));

  register_owner (G_TYPE_FROM_CLASS (klass), owner_type);
}

/**
 * hp_config_register_owner:
 * @config_type: a configuration type (a subtype of [class@Hp.Config])
 * @owner_type: the [class@Hp.Configurable] type that configurations of
 *   @config_type build
 *
 * Names the owner of @config_type as [method@Hp.ConfigClass.set_owner_type]
 * does, for language bindings, where a class_init is out of reach.
 * Registering another owner for @config_type replaces the first one.
 *
 * Since: 1.0
 */
void
hp_config_register_owner (GType config_type,
                          GType owner_type)
{
  g_return_if_fail (g_type_is_a (config_type, HP_TYPE_CONFIG));
  g_return_if_fail (g_type_is_a (owner_type, HP_TYPE_CONFIGURABLE));

  register_owner (config_type, owner_type);
}

/**
 * hp_config_get_owner_type:
 * @self: a [class@Hp.Config]
 *
 * Gets the class that [method@Hp.Config.build] makes from @self: the owner
 * registered for the type of @self or, if it has none, for its nearest
 * ancestor.
 *
 * Returns: the owner type, or %G_TYPE_INVALID if neither the type of
 *   @self nor any of its ancestors has an owner
 *
 * Since: 1.0
 */
GType
hp_config_get_owner_type (HpConfig *self)
{
  g_return_val_if_fail (HP_IS_CONFIG (self), G_TYPE_INVALID);

  return lookup_type_chain (owner_of_config, G_OBJECT_TYPE (self), HP_TYPE_CONFIG);
}

/**
 * hp_config_type_for_owner:
 * @owner_type: an [class@Hp.Configurable] type
 *
 * Gets the configuration type whose owner is @owner_type or, if there
 * is none, the one whose owner is the nearest ancestor of @owner_type.
 * When several configuration types name the same owner, the first one
 * registered is given. An [class@Hp.Configurable] made without a configuration
 * gets a default configuration of this type.
 *
 * The configuration types considered are those registered with the
 * type system: a C configuration class is found once its get_type
 * function has run (an owner class can make sure of that with
 * [func@GObject.type_ensure] in its class_init).
 *
 * Returns: the configuration type, or %G_TYPE_INVALID if none names
 *   @owner_type or one of its ancestors
 *
 * Since: 1.0
 */
GType
hp_config_type_for_owner (GType owner_type)
{
  GType found;

  g_return_val_if_fail (g_type_is_a (owner_type, HP_TYPE_CONFIGURABLE), G_TYPE_INVALID);

  found = lookup_type_chain (config_of_owner, owner_type, HP_TYPE_CONFIGURABLE);
  if (found == G_TYPE_INVALID)
    {
      initialise_config_classes (HP_TYPE_CONFIG);
      found = lookup_type_chain (config_of_owner, owner_type, HP_TYPE_CONFIGURABLE);
    }
  return found;
}

/* ------------------------------------------------------------------ */
/* Fields                                                              */

HpConfigFieldKind
_hp_config_field_kind (GParamSpec *pspec)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);

  switch (G_TYPE_FUNDAMENTAL (type))
    {
    case G_TYPE_BOOLEAN:
      return HP_CONFIG_FIELD_BOOLEAN;
    case G_TYPE_INT:
    case G_TYPE_LONG:
    case G_TYPE_INT64:
      return HP_CONFIG_FIELD_SIGNED;
    case G_TYPE_UINT:
    case G_TYPE_ULONG:
    case G_TYPE_UINT64:
      return HP_CONFIG_FIELD_UNSIGNED;
    case G_TYPE_FLOAT:
      return HP_CONFIG_FIELD_FLOAT;
    case G_TYPE_DOUBLE:
      return HP_CONFIG_FIELD_DOUBLE;
    case G_TYPE_STRING:
      return HP_CONFIG_FIELD_STRING;
    case G_TYPE_ENUM:
      return HP_CONFIG_FIELD_ENUM;
    case G_TYPE_FLAGS:
      return HP_CONFIG_FIELD_FLAGS;
    case G_TYPE_BOXED:
      return type == G_TYPE_STRV ? HP_CONFIG_FIELD_STRV : HP_CONFIG_FIELD_UNSUPPORTED;
    case G_TYPE_OBJECT:
      if (g_type_is_a (type, HP_TYPE_CONFIG))
        return HP_CONFIG_FIELD_CONFIG;
      if (type == HP_TYPE_CONFIG_LIST)
        return HP_CONFIG_FIELD_CONFIG_LIST;
      if (type == HP_TYPE_NAMED_PLACEMENT)
        return HP_CONFIG_FIELD_NAMED_PLACEMENT;
      if (type == HP_TYPE_SHARDING_CONFIG)
        return HP_CONFIG_FIELD_SHARDING_CONFIG;
      if (type == HP_TYPE_LOCAL_MAP_CONFIG)
        return HP_CONFIG_FIELD_LOCAL_MAP_CONFIG;
      if (type == HP_TYPE_PARAM_INIT)
        return HP_CONFIG_FIELD_PARAM_INIT;
      if (type == HP_TYPE_INITIALIZER)
        return HP_CONFIG_FIELD_INITIALIZER;
      return HP_CONFIG_FIELD_UNSUPPORTED;
    default:
      return HP_CONFIG_FIELD_UNSUPPORTED;
    }
}

gboolean
_hp_config_field_is_nullable (GParamSpec *pspec)
{
  HpConfigFieldKind kind = _hp_config_field_kind (pspec);

  return kind == HP_CONFIG_FIELD_STRING || kind == HP_CONFIG_FIELD_STRV ||
         G_TYPE_FUNDAMENTAL (G_PARAM_SPEC_VALUE_TYPE (pspec)) == G_TYPE_OBJECT;
}

void
_hp_config_get_field (HpConfig   *self,
                      GParamSpec *field,
                      GValue     *value)
{
  g_value_init (value, G_PARAM_SPEC_VALUE_TYPE (field));
  g_object_get_property (G_OBJECT (self), field->name, value);
}

/* Parent classes first; in a class, the table fields in their order,
 * then the other properties by id */
static gint
compare_fields (gconstpointer a,
                gconstpointer b)
{
  GParamSpec *pa = *(GParamSpec * const *) a;
  GParamSpec *pb = *(GParamSpec * const *) b;
  guint da = g_type_depth (pa->owner_type);
  guint db = g_type_depth (pb->owner_type);
  gint oa = _hp_config_field_order (pa);
  gint ob = _hp_config_field_order (pb);

  if (da != db)
    return da < db ? -1 : 1;
  if ((oa >= 0) != (ob >= 0))
    return oa >= 0 ? -1 : 1;
  if (oa != ob)
    return oa < ob ? -1 : 1;
  if (pa->param_id != pb->param_id)
    return pa->param_id < pb->param_id ? -1 : 1;
  return 0;
}

static GPtrArray *
collect_fields (GType config_type)
{
  GTypeClass *klass = g_type_class_ref (config_type);
  g_autofree GParamSpec **pspecs = NULL;
  GPtrArray *fields;
  guint n_pspecs;

  pspecs = g_object_class_list_properties (G_OBJECT_CLASS (klass), &n_pspecs);
  fields = g_ptr_array_new_with_free_func ((GDestroyNotify) g_param_spec_unref);
  for (guint i = 0; i < n_pspecs; i++)
    {
      GParamSpec *pspec = pspecs[i];

      if ((pspec->flags & G_PARAM_READWRITE) != G_PARAM_READWRITE ||
          (pspec->flags & G_PARAM_CONSTRUCT_ONLY) != 0 ||
          !g_type_is_a (pspec->owner_type, HP_TYPE_CONFIG))
        continue;

      if (_hp_config_field_kind (pspec) == HP_CONFIG_FIELD_UNSUPPORTED)
        {
          g_warning ("%s:%s has type %s, which configurations do not support; it is not a field",
                     g_type_name (pspec->owner_type), pspec->name,
                     g_type_name (G_PARAM_SPEC_VALUE_TYPE (pspec)));
          continue;
        }
      g_ptr_array_add (fields, g_param_spec_ref (pspec));
    }
  g_ptr_array_sort (fields, compare_fields);
  g_type_class_unref (klass);

  return fields;
}

GParamSpec **
_hp_config_type_get_fields (GType  config_type,
                            guint *n_fields)
{
  GPtrArray *fields;

  G_LOCK (registry);
  fields = fields_of_config != NULL
    ? g_hash_table_lookup (fields_of_config, GSIZE_TO_POINTER (config_type))
    : NULL;
  G_UNLOCK (registry);

  if (fields == NULL)
    {
      GPtrArray *collected = collect_fields (config_type);

      G_LOCK (registry);
      if (fields_of_config == NULL)
        fields_of_config = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_ptr_array_unref);
      fields = g_hash_table_lookup (fields_of_config, GSIZE_TO_POINTER (config_type));
      if (fields == NULL)
        {
          fields = collected;
          g_hash_table_insert (fields_of_config, GSIZE_TO_POINTER (config_type), fields);
        }
      else
        g_ptr_array_unref (collected);
      G_UNLOCK (registry);
    }

  *n_fields = fields->len;
  return (GParamSpec **) fields->pdata;
}

void
_hp_config_type_forget_fields (GType config_type)
{
  G_LOCK (registry);
  if (fields_of_config != NULL)
    g_hash_table_remove (fields_of_config, GSIZE_TO_POINTER (config_type));
  G_UNLOCK (registry);
}

gboolean
_hp_config_name_matches (const gchar *canonical,
                         const gchar *name)
{
  for (; *canonical != '\0' && *name != '\0'; canonical++, name++)
    if (*canonical != *name && !(*canonical == '-' && *name == '_'))
      return FALSE;
  return *canonical == *name;
}

static gint
field_index (GParamSpec  **fields,
             guint         n_fields,
             const gchar  *name)
{
  for (guint i = 0; i < n_fields; i++)
    if (_hp_config_name_matches (fields[i]->name, name))
      return (gint) i;
  return -1;
}

GParamSpec *
_hp_config_type_find_field (GType        config_type,
                            const gchar *name)
{
  guint n_fields;
  GParamSpec **fields = _hp_config_type_get_fields (config_type, &n_fields);
  gint index = field_index (fields, n_fields, name);

  return index >= 0 ? fields[index] : NULL;
}

/**
 * hp_config_list_fields:
 * @self: a [class@Hp.Config]
 * @n_fields: (out) (optional): return location for the number of fields
 *
 * Lists the fields of @self: its readable and writable properties that
 * are not construct-only and have a type configurations support (see
 * [class@Hp.Config]), in field order: the fields of the parent classes first,
 * then those of each class in the order of their property ids.
 *
 * Returns: (transfer container) (array length=n_fields): the param specs
 *   of the fields; free the array with [func@GLib.free]
 *
 * Since: 1.0
 */
GParamSpec **
hp_config_list_fields (HpConfig *self,
                       guint    *n_fields)
{
  GParamSpec **fields;
  GParamSpec **out;
  guint n;

  g_return_val_if_fail (HP_IS_CONFIG (self), NULL);

  fields = _hp_config_type_get_fields (G_OBJECT_TYPE (self), &n);
  out = g_new0 (GParamSpec *, n + 1);
  /* a configuration without fields has no array to copy from */
  if (n > 0)
    memcpy (out, fields, n * sizeof (GParamSpec *));
  if (n_fields != NULL)
    *n_fields = n;
  return out;
}

/* ------------------------------------------------------------------ */
/* Build, copy, replace, equal                                         */

GArray *
_hp_config_value_array_new (guint reserved)
{
  GArray *values = g_array_sized_new (FALSE, TRUE, sizeof (GValue), reserved);

  g_array_set_clear_func (values, (GDestroyNotify) g_value_unset);
  return values;
}

static gchar *
format_names (GPtrArray *names)
{
  GString *out = g_string_new ("{");

  for (guint i = 0; i < names->len; i++)
    g_string_append_printf (out, "%s%s", i > 0 ? ", " : "", (const gchar *) g_ptr_array_index (names, i));
  g_string_append_c (out, '}');
  return g_string_free (out, FALSE);
}

/**
 * hp_config_build:
 * @self: a [class@Hp.Config]
 * @error: return location for a [struct@GLib.Error]
 *
 * Builds an instance of the owner class of @self (see
 * [method@Hp.Config.get_owner_type]) whose [property@Hp.Configurable:config] is a
 * shallow copy of @self, as torchtitan's `Config.build()` does. Emits
 * [signal@Hp.Config::built].
 *
 * Returns: (transfer full): the new instance, or %NULL
 *   with [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] when the type of @self has no owner
 *   class or its owner is abstract, or with the error of the owner's
 *   [method@Gio.Initable.init] when the owner implements [iface@Gio.Initable] and its
 *   initialisation fails
 *
 * Since: 1.0
 */
GObject *
hp_config_build (HpConfig  *self,
                 GError   **error)
{
  g_return_val_if_fail (HP_IS_CONFIG (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return hp_config_build_with_properties (self, 0, NULL, NULL, error);
}

/**
 * hp_config_build_with_properties:
 * @self: a [class@Hp.Config]
 * @n_properties: the number of runtime properties
 * @names: (array length=n_properties) (nullable): the names of
 *   properties of the owner class
 * @values: (array length=n_properties) (nullable): their values
 * @error: return location for a [struct@GLib.Error]
 *
 * Builds an instance of the owner class of @self as [method@Hp.Config.build]
 * does, setting also the given properties of the owner: runtime
 * arguments that are not part of the configuration, as the keyword
 * arguments of torchtitan's `Config.build(**kwargs)`. A value of
 * another numeric type than its property is converted when the
 * property's range holds it exactly. Emits [signal@Hp.Config::built].
 *
 * Returns: (transfer full): the new instance, or %NULL
 *   with an error: [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] as for [method@Hp.Config.build];
 *   [HP_ERROR_CONFIG][error@Hp.Error] when names are also fields of @self
 *   (`build() arguments {a, b} overlap with config fields`), a name is
 *   given twice, is `config`, or is not a writable property of the
 *   owner, or a value does not fit its property
 *
 * Since: 1.0
 */
GObject *
hp_config_build_with_properties (HpConfig      *self,
                                 guint          n_properties,
                                 const gchar  **names,
                                 const GValue  *values,
                                 GError       **error)
{
  g_autoptr(GTypeClass) owner_class = NULL;
  g_autoptr(GPtrArray) overlap = NULL;
  g_autoptr(GPtrArray) all_names = NULL;
  g_autoptr(GArray) all_values = NULL;
  g_autoptr(HpConfig) copy = NULL;
  GValue config_value = G_VALUE_INIT;
  GObject *instance;
  GType owner;

  g_return_val_if_fail (HP_IS_CONFIG (self), NULL);
  g_return_val_if_fail (n_properties == 0 || (names != NULL && values != NULL), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  owner = hp_config_get_owner_type (self);
  if (owner == G_TYPE_INVALID)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED, "%s has no owner class",
                   G_OBJECT_TYPE_NAME (self));
      return NULL;
    }
  if (G_TYPE_IS_ABSTRACT (owner))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "%s builds %s, which is abstract", G_OBJECT_TYPE_NAME (self), g_type_name (owner));
      return NULL;
    }

  if (!HP_CONFIG_GET_CLASS (self)->validate (self, error))
    return NULL;

  overlap = g_ptr_array_new ();
  for (guint i = 0; i < n_properties; i++)
    if (_hp_config_type_find_field (G_OBJECT_TYPE (self), names[i]) != NULL)
      g_ptr_array_add (overlap, (gpointer) names[i]);
  if (overlap->len > 0)
    {
      g_autofree gchar *listed = format_names (overlap);

      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "build() arguments %s overlap with config fields", listed);
      return NULL;
    }

  owner_class = g_type_class_ref (owner);
  all_names = g_ptr_array_new ();
  all_values = _hp_config_value_array_new (n_properties + 1);
  for (guint i = 0; i < n_properties; i++)
    {
      g_autoptr(GError) local_error = NULL;
      GParamSpec *pspec = g_object_class_find_property (G_OBJECT_CLASS (owner_class), names[i]);
      GValue converted = G_VALUE_INIT;

      if (pspec == NULL || (pspec->flags & G_PARAM_WRITABLE) == 0)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                       "build() argument '%s' is not a writable property of %s",
                       names[i], g_type_name (owner));
          return NULL;
        }
      if (g_str_equal (pspec->name, "config"))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                       "build() argument 'config' is not allowed: the configuration is %s itself",
                       G_OBJECT_TYPE_NAME (self));
          return NULL;
        }
      for (guint j = 0; j < all_names->len; j++)
        if (g_str_equal (g_ptr_array_index (all_names, j), pspec->name))
          {
            g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                         "build() argument '%s' is given twice", names[i]);
            return NULL;
          }
      if (!_hp_config_value_convert (pspec, &values[i], &converted, &local_error))
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                      "build() argument '%s' of %s: ", names[i], g_type_name (owner));
          return NULL;
        }
      g_ptr_array_add (all_names, (gpointer) pspec->name);
      g_array_append_val (all_values, converted);
    }

  copy = hp_config_copy (self);
  g_value_init (&config_value, HP_TYPE_CONFIG);
  g_value_set_object (&config_value, copy);
  g_ptr_array_add (all_names, (gpointer) "config");
  g_array_append_val (all_values, config_value);

  instance = g_object_new_with_properties (owner, all_names->len,
                                           (const gchar **) all_names->pdata,
                                           (const GValue *) all_values->data);

  if (G_IS_INITABLE (instance) && !g_initable_init (G_INITABLE (instance), NULL, error))
    {
      g_object_unref (instance);
      return NULL;
    }

  g_signal_emit (self, signals[BUILT], 0, instance);
  return instance;
}

/* A new config of the type of @self: field i from @given[i] when
 * @given_set[i], else from @self */
static HpConfig *
new_with_fields (HpConfig *self,
                 GValue   *given,
                 gboolean *given_set)
{
  GType type = G_OBJECT_TYPE (self);
  guint n_fields;
  GParamSpec **fields = _hp_config_type_get_fields (type, &n_fields);
  g_autofree const gchar **names = g_new (const gchar *, n_fields + 1);
  g_autoptr(GArray) values = _hp_config_value_array_new (n_fields);
  HpConfig *copy;

  g_array_set_size (values, n_fields);
  for (guint i = 0; i < n_fields; i++)
    {
      GValue *value = &g_array_index (values, GValue, i);

      names[i] = fields[i]->name;
      if (given_set != NULL && given_set[i])
        {
          g_value_init (value, G_VALUE_TYPE (&given[i]));
          g_value_copy (&given[i], value);
        }
      else
        _hp_config_get_field (self, fields[i], value);
    }

  copy = HP_CONFIG (g_object_new_with_properties (type, n_fields, names,
                                                  (const GValue *) values->data));
  return copy;
}

/**
 * hp_config_copy:
 * @self: a [class@Hp.Config]
 *
 * Copies @self: a new configuration of the same type whose fields have
 * the values of those of @self. The copy is shallow: nested
 * configurations, lists and the other object values (named placements,
 * sharding configs, ...) are shared, strings and string arrays copied.
 *
 * Returns: (transfer full): the copy
 *
 * Since: 1.0
 */
HpConfig *
hp_config_copy (HpConfig *self)
{
  g_return_val_if_fail (HP_IS_CONFIG (self), NULL);

  return new_with_fields (self, NULL, NULL);
}

static HpConfig *
replace_fields (HpConfig      *self,
                guint          n_properties,
                const gchar  **names,
                const GValue  *values,
                GError       **error)
{
  GType type = G_OBJECT_TYPE (self);
  guint n_fields;
  GParamSpec **fields = _hp_config_type_get_fields (type, &n_fields);
  g_autoptr(GArray) given = _hp_config_value_array_new (n_fields);
  g_autofree gboolean *given_set = g_new0 (gboolean, n_fields);

  g_array_set_size (given, n_fields);
  for (guint i = 0; i < n_properties; i++)
    {
      g_autoptr(GError) local_error = NULL;
      gint index = field_index (fields, n_fields, names[i]);

      if (index < 0)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "%s has no field '%s'",
                       g_type_name (type), names[i]);
          return NULL;
        }
      if (given_set[index])
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "%s.%s: field is given twice",
                       g_type_name (type), fields[index]->name);
          return NULL;
        }
      if (!_hp_config_value_convert (fields[index], &values[i], &g_array_index (given, GValue, index), &local_error))
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "%s.%s: ",
                                      g_type_name (type), fields[index]->name);
          return NULL;
        }
      given_set[index] = TRUE;
    }

  return new_with_fields (self, (GValue *) given->data, given_set);
}

/**
 * hp_config_replace: (skip)
 * @self: a [class@Hp.Config]
 * @first_property_name: the name of the first field to change
 * @...: its value, then more name-value pairs, then %NULL
 *
 * Makes a shallow copy of @self (see [method@Hp.Config.copy]) with some fields
 * changed, as Python's `dataclasses.replace()`; @self is not changed.
 * Values are collected as [ctor@GObject.Object.new] collects them, so each must
 * have the C type of its field. Names may use `_` for `-`.
 *
 * A name that is not a field of @self or a value that the field does
 * not accept is a programmer error here; use
 * [method@Hp.Config.replace_with_properties] to get a [struct@GLib.Error] instead.
 *
 * Returns: (transfer full) (nullable): the new configuration, or %NULL
 *   after a critical warning
 *
 * Since: 1.0
 */
HpConfig *
hp_config_replace (HpConfig    *self,
                   const gchar *first_property_name,
                   ...)
{
  g_autoptr(GPtrArray) names = NULL;
  g_autoptr(GArray) values = NULL;
  g_autoptr(GError) error = NULL;
  HpConfig *copy;
  const gchar *name;
  va_list args;

  g_return_val_if_fail (HP_IS_CONFIG (self), NULL);

  names = g_ptr_array_new ();
  values = _hp_config_value_array_new (4);

  va_start (args, first_property_name);
  for (name = first_property_name; name != NULL; name = va_arg (args, const gchar *))
    {
      GParamSpec *pspec = _hp_config_type_find_field (G_OBJECT_TYPE (self), name);
      g_autofree gchar *collect_error = NULL;
      GValue value = G_VALUE_INIT;

      if (pspec == NULL)
        {
          g_critical ("%s: %s has no field '%s'", G_STRFUNC, G_OBJECT_TYPE_NAME (self), name);
          va_end (args);
          return NULL;
        }
      G_VALUE_COLLECT_INIT (&value, G_PARAM_SPEC_VALUE_TYPE (pspec), args, 0, &collect_error);
      if (collect_error != NULL)
        {
          g_critical ("%s: %s.%s: %s", G_STRFUNC, G_OBJECT_TYPE_NAME (self), pspec->name, collect_error);
          g_value_unset (&value);
          va_end (args);
          return NULL;
        }
      g_ptr_array_add (names, (gpointer) name);
      g_array_append_val (values, value);
    }
  va_end (args);

  copy = replace_fields (self, names->len, (const gchar **) names->pdata,
                         (const GValue *) values->data, &error);
  if (copy == NULL)
    g_critical ("%s: %s", G_STRFUNC, error->message);
  return copy;
}

/**
 * hp_config_replace_with_properties: (rename-to hp_config_replace)
 * @self: a [class@Hp.Config]
 * @n_properties: the number of fields to change
 * @names: (array length=n_properties) (nullable): their names (`_` may
 *   stand for `-`)
 * @values: (array length=n_properties) (nullable): their new values
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes a shallow copy of @self (see [method@Hp.Config.copy]) with some fields
 * changed, as Python's `dataclasses.replace()`; @self is not changed. A
 * value of another numeric type than its field is converted when the
 * field's range holds it exactly. Values are checked as
 * [func@GObject.param_value_validate] checks them, but a value out of range is an
 * error, not clamped.
 *
 * Returns: (transfer full): the new configuration, or %NULL with
 *   [HP_ERROR_CONFIG][error@Hp.Error] when a name is not a field of @self or is given
 *   twice, or a value does not fit its field
 *
 * Since: 1.0
 */
HpConfig *
hp_config_replace_with_properties (HpConfig      *self,
                                   guint          n_properties,
                                   const gchar  **names,
                                   const GValue  *values,
                                   GError       **error)
{
  g_return_val_if_fail (HP_IS_CONFIG (self), NULL);
  g_return_val_if_fail (n_properties == 0 || (names != NULL && values != NULL), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return replace_fields (self, n_properties, names, values, error);
}

/**
 * hp_config_equal:
 * @self: a [class@Hp.Config]
 * @other: another [class@Hp.Config]
 *
 * Tells whether two configurations have the same type and equal
 * fields. Nested configurations, lists, named placements, sharding
 * configs, local map configs and initialisers are compared by value
 * (with their own `equal` functions), numbers exactly (`-0.0` equals `0.0`).
 *
 * Returns: %TRUE if @self and @other are equal
 *
 * Since: 1.0
 */
gboolean
hp_config_equal (HpConfig *self,
                 HpConfig *other)
{
  guint n_fields;
  GParamSpec **fields;

  g_return_val_if_fail (HP_IS_CONFIG (self), FALSE);
  g_return_val_if_fail (HP_IS_CONFIG (other), FALSE);

  if (self == other)
    return TRUE;
  if (G_OBJECT_TYPE (self) != G_OBJECT_TYPE (other))
    return FALSE;

  fields = _hp_config_type_get_fields (G_OBJECT_TYPE (self), &n_fields);
  for (guint i = 0; i < n_fields; i++)
    {
      g_auto(GValue) a = G_VALUE_INIT;
      g_auto(GValue) b = G_VALUE_INIT;

      _hp_config_get_field (self, fields[i], &a);
      _hp_config_get_field (other, fields[i], &b);
      if (!_hp_config_values_equal (fields[i], &a, &b))
        return FALSE;
    }
  return TRUE;
}

/* Validates @self, then what is nested in it, errors prefixed with
 * @path */
static gboolean
validate_tree (HpConfig     *self,
               const gchar  *path,
               GError      **error)
{
  guint n_fields;
  GParamSpec **fields;

  if (!HP_CONFIG_GET_CLASS (self)->validate (self, error))
    {
      if (*path != '\0')
        g_prefix_error (error, "%s: ", path);
      return FALSE;
    }

  fields = _hp_config_type_get_fields (G_OBJECT_TYPE (self), &n_fields);
  for (guint i = 0; i < n_fields; i++)
    {
      HpConfigFieldKind kind = _hp_config_field_kind (fields[i]);
      g_autofree gchar *child_path = NULL;
      g_autoptr(GObject) child = NULL;

      if (kind != HP_CONFIG_FIELD_CONFIG && kind != HP_CONFIG_FIELD_CONFIG_LIST)
        continue;

      g_object_get (self, fields[i]->name, &child, NULL);
      child_path = _hp_config_join_path (path, fields[i]->name);
      if (HP_IS_CONFIG (child) && !validate_tree (HP_CONFIG (child), child_path, error))
        return FALSE;
      for (guint j = 0; HP_IS_CONFIG_LIST (child) && j < hp_config_list_get_length (HP_CONFIG_LIST (child)); j++)
        {
          g_autofree gchar *item_path = g_strdup_printf ("%s.%u", child_path, j);

          if (!validate_tree (hp_config_list_peek (HP_CONFIG_LIST (child), j), item_path, error))
            return FALSE;
        }
    }
  return TRUE;
}

/**
 * hp_config_validate:
 * @self: a configuration
 * @error: return location for a [struct@GLib.Error]
 *
 * Runs the checks of [vfunc@Hp.Config.validate] on @self and on every
 * configuration nested in it, depth first in field order: the checks
 * across fields that [method@Hp.Config.build] runs on each of them
 * (the checks of single fields, their types and ranges, hold already
 * for every configuration). A configuration that validates builds as
 * far as its own fields can tell.
 *
 * Returns: %TRUE if every configuration is valid; %FALSE with the
 *   error of the first one that is not, prefixed with its dotted path
 *   (`layers.0.attention: ...`), otherwise
 *
 * Since: 1.0
 */
gboolean
hp_config_validate (HpConfig  *self,
                    GError   **error)
{
  g_return_val_if_fail (HP_IS_CONFIG (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return validate_tree (self, "", error);
}

/* ------------------------------------------------------------------ */
/* Traverse                                                            */

typedef struct
{
  GType match_type;
  gboolean recurse;
  HpConfigTraverseFunc func;
  gpointer user_data;
} Traversal;

static void
traverse_config (Traversal   *traversal,
                 const gchar *fqn,
                 HpConfig    *config,
                 HpConfig    *parent,
                 const gchar *attribute,
                 gint         index)
{
  gboolean matches = traversal->match_type == G_TYPE_NONE ||
                     G_TYPE_CHECK_INSTANCE_TYPE (config, traversal->match_type);
  guint n_fields;
  GParamSpec **fields;

  if (matches)
    {
      traversal->func (fqn, config, parent, attribute, index, traversal->user_data);
      if (!traversal->recurse)
        return;
    }

  fields = _hp_config_type_get_fields (G_OBJECT_TYPE (config), &n_fields);
  for (guint i = 0; i < n_fields; i++)
    {
      HpConfigFieldKind kind = _hp_config_field_kind (fields[i]);
      g_autofree gchar *child_fqn = NULL;

      if (kind != HP_CONFIG_FIELD_CONFIG && kind != HP_CONFIG_FIELD_CONFIG_LIST)
        continue;

      child_fqn = _hp_config_join_path (fqn, fields[i]->name);
      if (kind == HP_CONFIG_FIELD_CONFIG)
        {
          g_autoptr(HpConfig) child = NULL;

          g_object_get (config, fields[i]->name, &child, NULL);
          if (child != NULL)
            traverse_config (traversal, child_fqn, child, config, fields[i]->name, -1);
        }
      else
        {
          g_autoptr(HpConfigList) list = NULL;

          g_object_get (config, fields[i]->name, &list, NULL);
          for (guint j = 0; list != NULL && j < hp_config_list_get_length (list); j++)
            {
              g_autoptr(HpConfig) item = g_object_ref (hp_config_list_peek (list, j));
              g_autofree gchar *item_fqn = g_strdup_printf ("%s.%u", child_fqn, j);

              traverse_config (traversal, item_fqn, item, config, fields[i]->name, (gint) j);
            }
        }
    }
}

/**
 * hp_config_traverse:
 * @self: a [class@Hp.Config]
 * @match_type: the configuration type to look for, or %G_TYPE_NONE (or
 *   [HP_TYPE_CONFIG][class@Hp.Config]) for every configuration
 * @recurse: whether to look inside the configurations that match too
 * @func: (scope call): called for each matching configuration
 * @user_data: (closure): data for @func
 *
 * Walks @self and the configurations nested in it, depth first in field
 * order, and calls @func for each one that is an instance of
 * @match_type, with its dotted path from @self (its "fqn"), its parent
 * configuration, the field of the parent that holds it and its index
 * in that field's [class@Hp.ConfigList]. @self itself is visited first, with
 * the path "", no parent and index -1; the items of a list field
 * `layers` get the paths `layers.0`, `layers.1`, ... Paths use the
 * canonical field names (`n-heads`).
 *
 * Configurations nested in one that does not match are always looked
 * at; without @recurse, the walk does not go below a matching one.
 * With a root holding `middle` (which holds `leaf`) and a two-item
 * list `layers` of configurations holding a `leaf`, every
 * configuration is visited in the order `""`, `middle`, `middle.leaf`,
 * `layers.0`, `layers.0.leaf`, `layers.1`, `layers.1.leaf`.
 *
 * Since: 1.0
 */
void
hp_config_traverse (HpConfig             *self,
                    GType                 match_type,
                    gboolean              recurse,
                    HpConfigTraverseFunc  func,
                    gpointer              user_data)
{
  Traversal traversal;

  g_return_if_fail (HP_IS_CONFIG (self));
  g_return_if_fail (match_type == G_TYPE_NONE || G_TYPE_IS_INTERFACE (match_type) ||
                    g_type_is_a (match_type, HP_TYPE_CONFIG));
  g_return_if_fail (func != NULL);

  traversal.match_type = match_type == HP_TYPE_CONFIG ? G_TYPE_NONE : match_type;
  traversal.recurse = recurse;
  traversal.func = func;
  traversal.user_data = user_data;

  traverse_config (&traversal, "", self, NULL, NULL, -1);
}
