/* hp-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <stdlib.h>
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
 * A configuration class is a subclass of #HpConfig whose **fields** are
 * its readable and writable properties (construct-only properties are
 * not fields). The param specs are the documentation and the validation
 * of the fields: their defaults are the defaults of the configuration,
 * their ranges the values it accepts. The fields are ordered as they
 * are declared: the fields of a parent class first, then those of the
 * class itself by property id (hp_config_list_fields()); printing, JSON
 * and hp_config_traverse() follow that order.
 *
 * A field may have one of these types: #gboolean, #gint, #guint,
 * #glong, #gulong, #gint64, #guint64, #gfloat, #gdouble, a string, an
 * enum, a flags type, a string array (%G_TYPE_STRV), a nested
 * configuration (any #HpConfig type; the value may be of a subtype), an
 * #HpConfigList, an #HpNamedPlacement, an #HpShardingConfig, an
 * #HpLocalMapConfig, an #HpParamInit or an #HpInitializer. A readable
 * and writable property of any other type is not a field: it is
 * neither copied, compared nor written, and a warning names it the
 * first time the fields of its class are listed.
 *
 * Each configuration class names the class it builds, its **owner**, in
 * its class_init with hp_config_class_set_owner_type(), or from a
 * language binding with hp_config_register_owner(). A configuration
 * class without an owner of its own builds the owner of its nearest
 * ancestor. hp_config_build() makes a new owner instance whose
 * #HpConfigurable:config is a shallow copy of the configuration, so a
 * configuration can be built any number of times and changing it later
 * does not change what was built from it.
 *
 * Configurations are values: hp_config_copy() and hp_config_replace()
 * make new ones, hp_config_equal() compares them field by field, and
 * hp_config_to_json() and hp_config_new_from_json() write and strictly
 * read them. Copies are shallow, as Python's `dataclasses.replace()`
 * is: nested configurations, lists and the other object values are
 * shared between a configuration and its copies, strings and string
 * arrays are copied.
 *
 * Fields can also be reached by a dotted path through nested
 * configurations and list items, as `layers.0.attention.n-heads`, and
 * set from and read as text (hp_config_set_path_from_string(),
 * hp_config_get_path_as_string()), which is what a command-line
 * override or a configuration editor needs.
 */

G_DEFINE_ABSTRACT_TYPE (HpConfig, hp_config, G_TYPE_OBJECT)

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

static void
hp_config_class_init (HpConfigClass *klass)
{
  /**
   * HpConfig::built:
   * @self: the configuration
   * @instance: the object hp_config_build() just made
   *
   * Emitted by hp_config_build() and hp_config_build_with_properties()
   * after they made an instance of the owner class.
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

void
_hp_config_set_error (GError      **error,
                      const gchar  *path,
                      const gchar  *format,
                      ...)
{
  g_autofree gchar *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  if (path == NULL || *path == '\0')
    g_set_error_literal (error, HP_ERROR, HP_ERROR_CONFIG, message);
  else
    g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "%s: %s", path, message);
}

gchar *
_hp_config_join_path (const gchar *path,
                      const gchar *name)
{
  if (path == NULL || *path == '\0')
    return g_strdup (name);
  return g_strconcat (path, ".", name, NULL);
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
 * @owner_type: the #HpConfigurable type that configurations of this
 *   class build
 *
 * Names the class that hp_config_build() makes from configurations of
 * @klass and its subclasses that do not name an owner of their own.
 * This is what the torchtitan `__init_subclass__` hook does for a
 * `Config` class nested in a configurable class.
 *
 * The first configuration type named for an owner type is also the one
 * hp_config_type_for_owner() gives for it.
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
 * @config_type: a configuration type (a subtype of #HpConfig)
 * @owner_type: the #HpConfigurable type that configurations of
 *   @config_type build
 *
 * Names the owner of @config_type as hp_config_class_set_owner_type()
 * does, for language bindings, where a class_init is out of reach.
 * Registering another owner for @config_type replaces the first one.
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
 * @self: a #HpConfig
 *
 * Gets the class that hp_config_build() makes from @self: the owner
 * registered for the type of @self or, if it has none, for its nearest
 * ancestor.
 *
 * Returns: the owner type, or %G_TYPE_INVALID if neither the type of
 *   @self nor any of its ancestors has an owner
 */
GType
hp_config_get_owner_type (HpConfig *self)
{
  g_return_val_if_fail (HP_IS_CONFIG (self), G_TYPE_INVALID);

  return lookup_type_chain (owner_of_config, G_OBJECT_TYPE (self), HP_TYPE_CONFIG);
}

/**
 * hp_config_type_for_owner:
 * @owner_type: an #HpConfigurable type
 *
 * Gets the configuration type whose owner is @owner_type or, if there
 * is none, the one whose owner is the nearest ancestor of @owner_type.
 * When several configuration types name the same owner, the first one
 * registered is given. An #HpConfigurable made without a configuration
 * gets a default configuration of this type.
 *
 * The configuration types considered are those registered with the
 * type system: a C configuration class is found once its get_type
 * function has run (an owner class can make sure of that with
 * g_type_ensure() in its class_init).
 *
 * Returns: the configuration type, or %G_TYPE_INVALID if none names
 *   @owner_type or one of its ancestors
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

static gint
compare_fields (gconstpointer a,
                gconstpointer b)
{
  GParamSpec *pa = *(GParamSpec * const *) a;
  GParamSpec *pb = *(GParamSpec * const *) b;
  guint da = g_type_depth (pa->owner_type);
  guint db = g_type_depth (pb->owner_type);

  if (da != db)
    return da < db ? -1 : 1;
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
        fields_of_config = g_hash_table_new (NULL, NULL);
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
 * @self: a #HpConfig
 * @n_fields: (out) (optional): return location for the number of fields
 *
 * Lists the fields of @self: its readable and writable properties that
 * are not construct-only and have a type configurations support (see
 * #HpConfig), in field order: the fields of the parent classes first,
 * then those of each class in the order of their property ids.
 *
 * Returns: (transfer container) (array length=n_fields): the param specs
 *   of the fields; free the array with g_free()
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
  memcpy (out, fields, n * sizeof (GParamSpec *));
  if (n_fields != NULL)
    *n_fields = n;
  return out;
}

/* ------------------------------------------------------------------ */
/* Values                                                              */

/* The param spec that holds the range of @pspec */
static GParamSpec *
range_pspec (GParamSpec *pspec)
{
  GParamSpec *target = g_param_spec_get_redirect_target (pspec);

  return target != NULL ? target : pspec;
}

gint64
_hp_config_value_get_signed (const GValue *value)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value)))
    {
    case G_TYPE_INT:
      return g_value_get_int (value);
    case G_TYPE_LONG:
      return g_value_get_long (value);
    case G_TYPE_INT64:
      return g_value_get_int64 (value);
    default:
      g_return_val_if_reached (0);
    }
}

guint64
_hp_config_value_get_unsigned (const GValue *value)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value)))
    {
    case G_TYPE_UINT:
      return g_value_get_uint (value);
    case G_TYPE_ULONG:
      return g_value_get_ulong (value);
    case G_TYPE_UINT64:
      return g_value_get_uint64 (value);
    default:
      g_return_val_if_reached (0);
    }
}

static void
signed_range (GParamSpec *pspec,
              gint64     *min,
              gint64     *max)
{
  pspec = range_pspec (pspec);
  if (G_IS_PARAM_SPEC_INT (pspec))
    {
      *min = G_PARAM_SPEC_INT (pspec)->minimum;
      *max = G_PARAM_SPEC_INT (pspec)->maximum;
    }
  else if (G_IS_PARAM_SPEC_LONG (pspec))
    {
      *min = G_PARAM_SPEC_LONG (pspec)->minimum;
      *max = G_PARAM_SPEC_LONG (pspec)->maximum;
    }
  else
    {
      *min = G_PARAM_SPEC_INT64 (pspec)->minimum;
      *max = G_PARAM_SPEC_INT64 (pspec)->maximum;
    }
}

static void
unsigned_range (GParamSpec *pspec,
                guint64    *min,
                guint64    *max)
{
  pspec = range_pspec (pspec);
  if (G_IS_PARAM_SPEC_UINT (pspec))
    {
      *min = G_PARAM_SPEC_UINT (pspec)->minimum;
      *max = G_PARAM_SPEC_UINT (pspec)->maximum;
    }
  else if (G_IS_PARAM_SPEC_ULONG (pspec))
    {
      *min = G_PARAM_SPEC_ULONG (pspec)->minimum;
      *max = G_PARAM_SPEC_ULONG (pspec)->maximum;
    }
  else
    {
      *min = G_PARAM_SPEC_UINT64 (pspec)->minimum;
      *max = G_PARAM_SPEC_UINT64 (pspec)->maximum;
    }
}

static void
double_range (GParamSpec *pspec,
              gdouble    *min,
              gdouble    *max)
{
  pspec = range_pspec (pspec);
  if (G_IS_PARAM_SPEC_FLOAT (pspec))
    {
      *min = G_PARAM_SPEC_FLOAT (pspec)->minimum;
      *max = G_PARAM_SPEC_FLOAT (pspec)->maximum;
    }
  else
    {
      *min = G_PARAM_SPEC_DOUBLE (pspec)->minimum;
      *max = G_PARAM_SPEC_DOUBLE (pspec)->maximum;
    }
}

static void
value_set_signed (GValue *value,
                  gint64  number)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value)))
    {
    case G_TYPE_INT:
      g_value_set_int (value, (gint) number);
      break;
    case G_TYPE_LONG:
      g_value_set_long (value, (glong) number);
      break;
    default:
      g_value_set_int64 (value, number);
      break;
    }
}

static void
value_set_unsigned (GValue  *value,
                    guint64  number)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value)))
    {
    case G_TYPE_UINT:
      g_value_set_uint (value, (guint) number);
      break;
    case G_TYPE_ULONG:
      g_value_set_ulong (value, (gulong) number);
      break;
    default:
      g_value_set_uint64 (value, number);
      break;
    }
}

/* @number with @precision significant digits, written out in full rather
 * than with an exponent below 1e16, as Python's repr() does */
static void
format_with_precision (gchar   *buffer,
                       gint     precision,
                       gdouble  number)
{
  gchar format[8];
  const gchar *e;
  gint exponent;

  g_snprintf (format, sizeof format, "%%.%dg", precision);
  g_ascii_formatd (buffer, G_ASCII_DTOSTR_BUF_SIZE, format, number);
  e = strchr (buffer, 'e');
  if (e == NULL)
    return;
  exponent = atoi (e + 1);
  if (exponent >= precision && exponent < 16)
    {
      g_snprintf (format, sizeof format, "%%.%dg", exponent + 1);
      g_ascii_formatd (buffer, G_ASCII_DTOSTR_BUF_SIZE, format, number);
    }
}

/* Keeps a number a floating-point number for JSON readers (10 -> 10.0)
 * and for YAML 1.1 readers, whose floats have a point (1e-05 ->
 * 1.0e-05) */
static gchar *
finish_number (const gchar *buffer)
{
  const gchar *e = strchr (buffer, 'e');

  if (strchr (buffer, '.') != NULL)
    return g_strdup (buffer);
  if (e == NULL)
    return g_strconcat (buffer, ".0", NULL);
  return g_strdup_printf ("%.*s.0%s", (gint) (e - buffer), buffer, e);
}

gchar *
_hp_config_format_double (gdouble number)
{
  gchar buffer[G_ASCII_DTOSTR_BUF_SIZE];

  if (!isfinite (number))
    return g_strdup (isnan (number) ? "nan" : number > 0 ? "inf" : "-inf");

  for (gint precision = 1; precision <= 17; precision++)
    {
      gdouble back;

      format_with_precision (buffer, precision, number);
      back = g_ascii_strtod (buffer, NULL);
      if (memcmp (&back, &number, sizeof number) == 0)
        break;
    }
  return finish_number (buffer);
}

gchar *
_hp_config_format_float (gfloat number)
{
  gchar buffer[G_ASCII_DTOSTR_BUF_SIZE];

  if (!isfinite (number))
    return _hp_config_format_double (number);

  for (gint precision = 1; precision <= 9; precision++)
    {
      gfloat back;

      format_with_precision (buffer, precision, number);
      back = (gfloat) g_ascii_strtod (buffer, NULL);
      if (memcmp (&back, &number, sizeof number) == 0)
        break;
    }
  return finish_number (buffer);
}

gboolean
_hp_config_parse_non_finite (const gchar *text,
                             gdouble     *number)
{
  if (g_str_equal (text, "inf"))
    *number = INFINITY;
  else if (g_str_equal (text, "-inf"))
    *number = -INFINITY;
  else
    return FALSE;
  return TRUE;
}

static gboolean
signed_in_range (GParamSpec  *pspec,
                 GValue      *value,
                 const gchar *shown,
                 gint64       number,
                 GError     **error)
{
  gint64 min, max;

  signed_range (pspec, &min, &max);
  if (number < min || number > max)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "value %s out of range [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                   shown, min, max);
      return FALSE;
    }
  value_set_signed (value, number);
  return TRUE;
}

static gboolean
unsigned_in_range (GParamSpec  *pspec,
                   GValue      *value,
                   const gchar *shown,
                   guint64      number,
                   gboolean     negative,
                   GError     **error)
{
  guint64 min, max;

  unsigned_range (pspec, &min, &max);
  if (negative || number < min || number > max)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "value %s out of range [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "]",
                   shown, min, max);
      return FALSE;
    }
  value_set_unsigned (value, number);
  return TRUE;
}

gboolean
_hp_config_value_set_double (GParamSpec  *pspec,
                             GValue      *value,
                             gdouble      number,
                             GError     **error)
{
  HpConfigFieldKind kind = _hp_config_field_kind (pspec);
  gdouble min, max;

  if (kind == HP_CONFIG_FIELD_SIGNED || kind == HP_CONFIG_FIELD_UNSIGNED)
    {
      g_autofree gchar *shown = _hp_config_format_double (number);

      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "expected an integer, got %s", shown);
      return FALSE;
    }
  g_return_val_if_fail (kind == HP_CONFIG_FIELD_FLOAT || kind == HP_CONFIG_FIELD_DOUBLE, FALSE);

  /* GObject takes NaN for out of range too */
  if (isnan (number))
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_CONFIG, "NaN is not allowed");
      return FALSE;
    }

  /* a float field compares the float the number rounds to: the
   * shortest text of FLT_MAX reads as a double above it */
  double_range (pspec, &min, &max);
  if (kind == HP_CONFIG_FIELD_FLOAT ? ((gfloat) number < min || (gfloat) number > max)
                                    : (number < min || number > max))
    {
      g_autofree gchar *shown = _hp_config_format_double (number);
      g_autofree gchar *shown_min = kind == HP_CONFIG_FIELD_FLOAT
        ? _hp_config_format_float ((gfloat) min) : _hp_config_format_double (min);
      g_autofree gchar *shown_max = kind == HP_CONFIG_FIELD_FLOAT
        ? _hp_config_format_float ((gfloat) max) : _hp_config_format_double (max);

      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "value %s out of range [%s, %s]", shown, shown_min, shown_max);
      return FALSE;
    }

  if (kind == HP_CONFIG_FIELD_FLOAT)
    g_value_set_float (value, (gfloat) number);
  else
    g_value_set_double (value, number);
  return TRUE;
}

gboolean
_hp_config_value_set_int64 (GParamSpec  *pspec,
                            GValue      *value,
                            gint64       number,
                            GError     **error)
{
  g_autofree gchar *shown = g_strdup_printf ("%" G_GINT64_FORMAT, number);

  switch (_hp_config_field_kind (pspec))
    {
    case HP_CONFIG_FIELD_SIGNED:
      return signed_in_range (pspec, value, shown, number, error);
    case HP_CONFIG_FIELD_UNSIGNED:
      return unsigned_in_range (pspec, value, shown, (guint64) number, number < 0, error);
    case HP_CONFIG_FIELD_FLOAT:
      return _hp_config_value_set_double (pspec, value, (gdouble) number, error);
    case HP_CONFIG_FIELD_DOUBLE:
      /* 2^63 does not fit an int64: the conversion back is only defined
       * below it */
      if ((gdouble) number >= 9223372036854775808.0 || (gint64) (gdouble) number != number)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                       "integer %s has no exact double value", shown);
          return FALSE;
        }
      return _hp_config_value_set_double (pspec, value, (gdouble) number, error);
    default:
      g_return_val_if_reached (FALSE);
    }
}

gboolean
_hp_config_value_set_uint64 (GParamSpec  *pspec,
                             GValue      *value,
                             guint64      number,
                             GError     **error)
{
  g_autofree gchar *shown = g_strdup_printf ("%" G_GUINT64_FORMAT, number);

  switch (_hp_config_field_kind (pspec))
    {
    case HP_CONFIG_FIELD_SIGNED:
      if (number > G_MAXINT64)
        {
          gint64 min, max;

          signed_range (pspec, &min, &max);
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                       "value %s out of range [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                       shown, min, max);
          return FALSE;
        }
      return signed_in_range (pspec, value, shown, (gint64) number, error);
    case HP_CONFIG_FIELD_UNSIGNED:
      return unsigned_in_range (pspec, value, shown, number, FALSE, error);
    case HP_CONFIG_FIELD_FLOAT:
      return _hp_config_value_set_double (pspec, value, (gdouble) number, error);
    case HP_CONFIG_FIELD_DOUBLE:
      if ((gdouble) number >= 18446744073709551616.0 || (guint64) (gdouble) number != number)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                       "integer %s has no exact double value", shown);
          return FALSE;
        }
      return _hp_config_value_set_double (pspec, value, (gdouble) number, error);
    default:
      g_return_val_if_reached (FALSE);
    }
}

gboolean
_hp_config_value_validate (GParamSpec    *pspec,
                           const GValue  *value,
                           GError       **error)
{
  g_auto(GValue) check = G_VALUE_INIT;

  g_value_init (&check, G_PARAM_SPEC_VALUE_TYPE (pspec));
  g_value_copy (value, &check);
  if (g_param_value_validate (pspec, &check))
    {
      g_autofree gchar *contents = g_strdup_value_contents (value);

      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "invalid value %s for a field of type %s",
                   contents, g_type_name (G_PARAM_SPEC_VALUE_TYPE (pspec)));
      return FALSE;
    }
  return TRUE;
}

gchar *
_hp_config_enum_nicks (GType enum_type)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (enum_type);
  GString *out = g_string_new ("{");

  for (guint i = 0; i < klass->n_values; i++)
    g_string_append_printf (out, "%s%s", i > 0 ? ", " : "", klass->values[i].value_nick);
  g_string_append_c (out, '}');
  return g_string_free (out, FALSE);
}

gboolean
_hp_config_flags_from_nick (GFlagsClass *klass,
                            const gchar *nick,
                            guint       *flags)
{
  GFlagsValue *flag = g_flags_get_value_by_nick (klass, nick);

  if (flag == NULL)
    return FALSE;
  *flags |= flag->value;
  return TRUE;
}

static gboolean
is_numeric_type (GType type)
{
  switch (G_TYPE_FUNDAMENTAL (type))
    {
    case G_TYPE_CHAR:
    case G_TYPE_UCHAR:
    case G_TYPE_INT:
    case G_TYPE_UINT:
    case G_TYPE_LONG:
    case G_TYPE_ULONG:
    case G_TYPE_INT64:
    case G_TYPE_UINT64:
    case G_TYPE_FLOAT:
    case G_TYPE_DOUBLE:
      return TRUE;
    default:
      return FALSE;
    }
}

static gboolean
is_numeric_kind (HpConfigFieldKind kind)
{
  return kind == HP_CONFIG_FIELD_SIGNED || kind == HP_CONFIG_FIELD_UNSIGNED ||
         kind == HP_CONFIG_FIELD_FLOAT || kind == HP_CONFIG_FIELD_DOUBLE;
}

/* Stores @source in @dest (zeroed) as a value of @pspec: a number of any
 * numeric type when the field's range holds it exactly, a value of a
 * compatible type as it is, an object of a fitting type whatever the
 * declared type of @source. The error has no path prefix. */
static gboolean
convert_value (GParamSpec    *pspec,
               const GValue  *source,
               GValue        *dest,
               GError       **error)
{
  GType want = G_PARAM_SPEC_VALUE_TYPE (pspec);
  GType have = G_VALUE_TYPE (source);
  gboolean ok = TRUE;

  g_value_init (dest, want);

  if (is_numeric_type (have) && is_numeric_kind (_hp_config_field_kind (pspec)))
    {
      switch (G_TYPE_FUNDAMENTAL (have))
        {
        case G_TYPE_CHAR:
          ok = _hp_config_value_set_int64 (pspec, dest, g_value_get_schar (source), error);
          break;
        case G_TYPE_UCHAR:
          ok = _hp_config_value_set_int64 (pspec, dest, g_value_get_uchar (source), error);
          break;
        case G_TYPE_INT:
        case G_TYPE_LONG:
        case G_TYPE_INT64:
          ok = _hp_config_value_set_int64 (pspec, dest, _hp_config_value_get_signed (source), error);
          break;
        case G_TYPE_UINT:
        case G_TYPE_ULONG:
        case G_TYPE_UINT64:
          ok = _hp_config_value_set_uint64 (pspec, dest, _hp_config_value_get_unsigned (source), error);
          break;
        case G_TYPE_FLOAT:
          ok = _hp_config_value_set_double (pspec, dest, g_value_get_float (source), error);
          break;
        default:
          ok = _hp_config_value_set_double (pspec, dest, g_value_get_double (source), error);
          break;
        }
    }
  else if (g_value_type_compatible (have, want))
    g_value_copy (source, dest);
  else if (G_VALUE_HOLDS_OBJECT (source) && g_type_is_a (want, G_TYPE_OBJECT))
    {
      GObject *object = g_value_get_object (source);

      if (object != NULL && !G_TYPE_CHECK_INSTANCE_TYPE (object, want))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "expected a %s, got a %s",
                       g_type_name (want), G_OBJECT_TYPE_NAME (object));
          ok = FALSE;
        }
      else
        g_value_set_object (dest, object);
    }
  else
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "expected a value of type %s, got %s",
                   g_type_name (want), g_type_name (have));
      ok = FALSE;
    }

  if (ok)
    ok = _hp_config_value_validate (pspec, dest, error);
  if (!ok)
    g_value_unset (dest);
  return ok;
}

static gboolean config_lists_equal (HpConfigList *a,
                                    HpConfigList *b);

static gboolean
values_equal (GParamSpec   *pspec,
              const GValue *a,
              const GValue *b)
{
  switch (_hp_config_field_kind (pspec))
    {
    case HP_CONFIG_FIELD_BOOLEAN:
      return g_value_get_boolean (a) == g_value_get_boolean (b);
    case HP_CONFIG_FIELD_SIGNED:
      return _hp_config_value_get_signed (a) == _hp_config_value_get_signed (b);
    case HP_CONFIG_FIELD_UNSIGNED:
      return _hp_config_value_get_unsigned (a) == _hp_config_value_get_unsigned (b);
    case HP_CONFIG_FIELD_FLOAT:
      return g_value_get_float (a) == g_value_get_float (b);
    case HP_CONFIG_FIELD_DOUBLE:
      return g_value_get_double (a) == g_value_get_double (b);
    case HP_CONFIG_FIELD_STRING:
      return g_strcmp0 (g_value_get_string (a), g_value_get_string (b)) == 0;
    case HP_CONFIG_FIELD_ENUM:
      return g_value_get_enum (a) == g_value_get_enum (b);
    case HP_CONFIG_FIELD_FLAGS:
      return g_value_get_flags (a) == g_value_get_flags (b);
    case HP_CONFIG_FIELD_STRV:
      {
        const gchar * const *sa = g_value_get_boxed (a);
        const gchar * const *sb = g_value_get_boxed (b);

        if (sa == NULL || sb == NULL)
          return sa == sb;
        return g_strv_equal (sa, sb);
      }
    default:
      break;
    }

  /* object fields: equal when both are NULL or both equal by value */
  {
    GObject *oa = g_value_get_object (a);
    GObject *ob = g_value_get_object (b);

    if (oa == NULL || ob == NULL)
      return oa == ob;

    switch (_hp_config_field_kind (pspec))
      {
      case HP_CONFIG_FIELD_CONFIG:
        return hp_config_equal (HP_CONFIG (oa), HP_CONFIG (ob));
      case HP_CONFIG_FIELD_CONFIG_LIST:
        return config_lists_equal (HP_CONFIG_LIST (oa), HP_CONFIG_LIST (ob));
      case HP_CONFIG_FIELD_NAMED_PLACEMENT:
        return hp_named_placement_equal (HP_NAMED_PLACEMENT (oa), HP_NAMED_PLACEMENT (ob));
      case HP_CONFIG_FIELD_SHARDING_CONFIG:
        return hp_sharding_config_equal (HP_SHARDING_CONFIG (oa), HP_SHARDING_CONFIG (ob));
      case HP_CONFIG_FIELD_LOCAL_MAP_CONFIG:
        return hp_local_map_config_equal (HP_LOCAL_MAP_CONFIG (oa), HP_LOCAL_MAP_CONFIG (ob));
      case HP_CONFIG_FIELD_PARAM_INIT:
        return hp_param_init_equal (HP_PARAM_INIT (oa), HP_PARAM_INIT (ob));
      case HP_CONFIG_FIELD_INITIALIZER:
        return hp_initializer_equal (HP_INITIALIZER (oa), HP_INITIALIZER (ob));
      default:
        g_return_val_if_reached (FALSE);
      }
  }
}

static gboolean
config_lists_equal (HpConfigList *a,
                    HpConfigList *b)
{
  guint n = hp_config_list_get_length (a);

  if (n != hp_config_list_get_length (b))
    return FALSE;
  for (guint i = 0; i < n; i++)
    if (!hp_config_equal (hp_config_list_peek (a, i), hp_config_list_peek (b, i)))
      return FALSE;
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Build, copy, replace, equal                                         */

/* An array of GValues that unsets them when freed */
static GArray *
value_array_new (guint reserved)
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
 * @self: a #HpConfig
 * @error: return location for a #GError
 *
 * Builds an instance of the owner class of @self (see
 * hp_config_get_owner_type()) whose #HpConfigurable:config is a
 * shallow copy of @self, as torchtitan's `Config.build()` does. Emits
 * #HpConfig::built.
 *
 * Returns: (transfer full): the new instance, or %NULL
 *   with %HP_ERROR_NOT_SUPPORTED when the type of @self has no owner
 *   class or its owner is abstract, or with the error of the owner's
 *   g_initable_init() when the owner implements #GInitable and its
 *   initialisation fails
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
 * @self: a #HpConfig
 * @n_properties: the number of runtime properties
 * @names: (array length=n_properties) (nullable): the names of
 *   properties of the owner class
 * @values: (array length=n_properties) (nullable): their values
 * @error: return location for a #GError
 *
 * Builds an instance of the owner class of @self as hp_config_build()
 * does, setting also the given properties of the owner: runtime
 * arguments that are not part of the configuration, as the keyword
 * arguments of torchtitan's `Config.build(**kwargs)`. A value of
 * another numeric type than its property is converted when the
 * property's range holds it exactly. Emits #HpConfig::built.
 *
 * Returns: (transfer full): the new instance, or %NULL
 *   with an error: %HP_ERROR_NOT_SUPPORTED as for hp_config_build();
 *   %HP_ERROR_CONFIG when names are also fields of @self
 *   (`build() arguments {a, b} overlap with config fields`), a name is
 *   given twice, is `config`, or is not a writable property of the
 *   owner, or a value does not fit its property
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
  all_values = value_array_new (n_properties + 1);
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
      if (!convert_value (pspec, &values[i], &converted, &local_error))
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
  g_autoptr(GArray) values = value_array_new (n_fields);
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
        {
          g_value_init (value, G_PARAM_SPEC_VALUE_TYPE (fields[i]));
          g_object_get_property (G_OBJECT (self), fields[i]->name, value);
        }
    }

  copy = HP_CONFIG (g_object_new_with_properties (type, n_fields, names,
                                                  (const GValue *) values->data));
  return copy;
}

/**
 * hp_config_copy:
 * @self: a #HpConfig
 *
 * Copies @self: a new configuration of the same type whose fields have
 * the values of those of @self. The copy is shallow: nested
 * configurations, lists and the other object values (named placements,
 * sharding configs, ...) are shared, strings and string arrays copied.
 *
 * Returns: (transfer full): the copy
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
  g_autoptr(GArray) given = value_array_new (n_fields);
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
      if (!convert_value (fields[index], &values[i], &g_array_index (given, GValue, index), &local_error))
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
 * @self: a #HpConfig
 * @first_property_name: the name of the first field to change
 * @...: its value, then more name-value pairs, then %NULL
 *
 * Makes a shallow copy of @self (see hp_config_copy()) with some fields
 * changed, as Python's `dataclasses.replace()`; @self is not changed.
 * Values are collected as g_object_new() collects them, so each must
 * have the C type of its field. Names may use `_` for `-`.
 *
 * A name that is not a field of @self or a value that the field does
 * not accept is a programmer error here; use
 * hp_config_replace_with_properties() to get a #GError instead.
 *
 * Returns: (transfer full) (nullable): the new configuration, or %NULL
 *   after a critical warning
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
  values = value_array_new (4);

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
 * @self: a #HpConfig
 * @n_properties: the number of fields to change
 * @names: (array length=n_properties) (nullable): their names (`_` may
 *   stand for `-`)
 * @values: (array length=n_properties) (nullable): their new values
 * @error: return location for a #GError
 *
 * Makes a shallow copy of @self (see hp_config_copy()) with some fields
 * changed, as Python's `dataclasses.replace()`; @self is not changed. A
 * value of another numeric type than its field is converted when the
 * field's range holds it exactly. Values are checked as
 * g_param_value_validate() checks them, but a value out of range is an
 * error, not clamped.
 *
 * Returns: (transfer full): the new configuration, or %NULL with
 *   %HP_ERROR_CONFIG when a name is not a field of @self or is given
 *   twice, or a value does not fit its field
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
 * @self: a #HpConfig
 * @other: another #HpConfig
 *
 * Tells whether two configurations have the same type and equal
 * fields. Nested configurations, lists, named placements, sharding
 * configs, local map configs and initialisers are compared by value
 * (with their own `equal` functions), numbers exactly (`-0.0` equals `0.0`).
 *
 * Returns: %TRUE if @self and @other are equal
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

      g_value_init (&a, G_PARAM_SPEC_VALUE_TYPE (fields[i]));
      g_value_init (&b, G_PARAM_SPEC_VALUE_TYPE (fields[i]));
      g_object_get_property (G_OBJECT (self), fields[i]->name, &a);
      g_object_get_property (G_OBJECT (other), fields[i]->name, &b);
      if (!values_equal (fields[i], &a, &b))
        return FALSE;
    }
  return TRUE;
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
 * @self: a #HpConfig
 * @match_type: the configuration type to look for, or %G_TYPE_NONE (or
 *   %HP_TYPE_CONFIG) for every configuration
 * @recurse: whether to look inside the configurations that match too
 * @func: (scope call): called for each matching configuration
 * @user_data: (closure): data for @func
 *
 * Walks @self and the configurations nested in it, depth first in field
 * order, and calls @func for each one that is an instance of
 * @match_type, with its dotted path from @self (its "fqn"), its parent
 * configuration, the field of the parent that holds it and its index
 * in that field's #HpConfigList. @self itself is visited first, with
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

/* ------------------------------------------------------------------ */
/* Paths                                                               */

/* Where a path leads: a field of @config, or an item of @list */
typedef struct
{
  HpConfig *config;
  GParamSpec *pspec;
  HpConfigList *list;
  guint index;
} PathTarget;

static void
path_target_clear (PathTarget *target)
{
  g_clear_object (&target->config);
  g_clear_object (&target->list);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (PathTarget, path_target_clear)

static gboolean
resolve_path (HpConfig     *self,
              const gchar  *path,
              PathTarget   *target,
              GError      **error)
{
  g_auto(GStrv) parts = NULL;
  g_autoptr(GString) walked = g_string_new (NULL);
  g_autoptr(HpConfig) current = g_object_ref (self);

  if (*path == '\0')
    {
      _hp_config_set_error (error, NULL, "empty field path");
      return FALSE;
    }

  parts = g_strsplit (path, ".", -1);
  for (guint i = 0; parts[i] != NULL; i++)
    {
      g_autoptr(HpConfigList) list = NULL;
      g_autoptr(HpConfig) next = NULL;
      GParamSpec *pspec;
      HpConfigFieldKind kind;
      guint64 index;

      g_string_append_printf (walked, "%s%s", i > 0 ? "." : "", parts[i]);
      if (*parts[i] == '\0')
        {
          _hp_config_set_error (error, walked->str, "empty field name");
          return FALSE;
        }

      pspec = _hp_config_type_find_field (G_OBJECT_TYPE (current), parts[i]);
      if (pspec == NULL)
        {
          _hp_config_set_error (error, walked->str, "no field '%s' in %s",
                                parts[i], G_OBJECT_TYPE_NAME (current));
          return FALSE;
        }
      if (parts[i + 1] == NULL)
        {
          target->config = g_steal_pointer (&current);
          target->pspec = pspec;
          return TRUE;
        }

      kind = _hp_config_field_kind (pspec);
      if (kind == HP_CONFIG_FIELD_CONFIG)
        {
          g_object_get (current, pspec->name, &next, NULL);
          if (next == NULL)
            {
              _hp_config_set_error (error, walked->str, "is null, so it has no field '%s'",
                                    parts[i + 1]);
              return FALSE;
            }
          g_set_object (&current, next);
          continue;
        }
      if (kind != HP_CONFIG_FIELD_CONFIG_LIST)
        {
          _hp_config_set_error (error, walked->str,
                                "is a %s field, not a configuration or a list",
                                g_type_name (G_PARAM_SPEC_VALUE_TYPE (pspec)));
          return FALSE;
        }

      g_object_get (current, pspec->name, &list, NULL);
      if (list == NULL)
        {
          _hp_config_set_error (error, walked->str, "is null, so it has no item %s", parts[i + 1]);
          return FALSE;
        }
      i++;
      g_string_append_printf (walked, ".%s", parts[i]);
      if (!g_ascii_string_to_unsigned (parts[i], 10, 0, G_MAXUINT, &index, NULL))
        {
          _hp_config_set_error (error, walked->str, "expected an item index, got '%s'", parts[i]);
          return FALSE;
        }
      if (index >= hp_config_list_get_length (list))
        {
          guint length = hp_config_list_get_length (list);

          _hp_config_set_error (error, walked->str, "index out of range (%u item%s)",
                                length, length == 1 ? "" : "s");
          return FALSE;
        }
      if (parts[i + 1] == NULL)
        {
          target->list = g_steal_pointer (&list);
          target->index = (guint) index;
          return TRUE;
        }
      g_set_object (&current, hp_config_list_peek (list, (guint) index));
    }

  g_return_val_if_reached (FALSE);
}

static gchar *
format_flags (GType  flags_type,
              guint  flags)
{
  g_autoptr(GFlagsClass) klass = g_type_class_ref (flags_type);
  GString *out = g_string_new (NULL);

  while (flags != 0)
    {
      GFlagsValue *flag = g_flags_get_first_value (klass, flags);

      if (flag == NULL || flag->value == 0)
        break;
      g_string_append_printf (out, "%s%s", out->len > 0 ? "|" : "", flag->value_nick);
      flags &= ~flag->value;
    }
  return g_string_free (out, FALSE);
}

/* Whether a string array needs its JSON form to read back exactly */
static gboolean
strv_needs_json (const gchar * const *strv)
{
  if (strv[0] != NULL && strv[1] == NULL && g_str_equal (strv[0], "null"))
    return TRUE;
  if (strv[0] != NULL && strv[0][0] == '[')
    return TRUE;
  for (guint i = 0; strv[i] != NULL; i++)
    {
      gsize length = strlen (strv[i]);

      if (length == 0 || strchr (strv[i], ',') != NULL ||
          g_ascii_isspace (strv[i][0]) || g_ascii_isspace (strv[i][length - 1]))
        return TRUE;
    }
  return FALSE;
}

static gchar *
format_value (GParamSpec   *pspec,
              const GValue *value)
{
  switch (_hp_config_field_kind (pspec))
    {
    case HP_CONFIG_FIELD_BOOLEAN:
      return g_strdup (g_value_get_boolean (value) ? "true" : "false");
    case HP_CONFIG_FIELD_SIGNED:
      return g_strdup_printf ("%" G_GINT64_FORMAT, _hp_config_value_get_signed (value));
    case HP_CONFIG_FIELD_UNSIGNED:
      return g_strdup_printf ("%" G_GUINT64_FORMAT, _hp_config_value_get_unsigned (value));
    case HP_CONFIG_FIELD_FLOAT:
      return _hp_config_format_float (g_value_get_float (value));
    case HP_CONFIG_FIELD_DOUBLE:
      return _hp_config_format_double (g_value_get_double (value));
    case HP_CONFIG_FIELD_STRING:
      return g_value_dup_string (value);
    case HP_CONFIG_FIELD_ENUM:
      {
        /* GObject keeps enum properties to the values of their type */
        g_autoptr(GEnumClass) klass = g_type_class_ref (G_VALUE_TYPE (value));

        return g_strdup (g_enum_get_value (klass, g_value_get_enum (value))->value_nick);
      }
    case HP_CONFIG_FIELD_FLAGS:
      return format_flags (G_VALUE_TYPE (value), g_value_get_flags (value));
    case HP_CONFIG_FIELD_STRV:
      {
        const gchar * const *strv = g_value_get_boxed (value);

        if (strv == NULL)
          return NULL;
        if (!strv_needs_json (strv))
          return g_strjoinv (",", (GStrv) strv);
      }
      break;
    case HP_CONFIG_FIELD_NAMED_PLACEMENT:
      {
        HpNamedPlacement *named = g_value_get_object (value);

        return named != NULL ? hp_named_placement_to_string (named) : NULL;
      }
    case HP_CONFIG_FIELD_PARAM_INIT:
      {
        HpParamInit *param_init = g_value_get_object (value);

        return param_init != NULL ? hp_param_init_to_string (param_init) : NULL;
      }
    case HP_CONFIG_FIELD_INITIALIZER:
      {
        HpInitializer *initializer = g_value_get_object (value);

        return initializer != NULL ? hp_initializer_to_string (initializer) : NULL;
      }
    default:
      if (g_value_get_object (value) == NULL)
        return NULL;
      break;
    }

  /* compound values, and string arrays the comma form cannot hold */
  {
    g_autoptr(JsonNode) node = _hp_config_value_to_json_node (pspec, value);

    return _hp_config_json_node_to_string (node, FALSE);
  }
}

static gboolean
parse_signed (GParamSpec   *pspec,
              const gchar  *text,
              GValue       *value,
              GError      **error)
{
  g_autoptr(GError) parse_error = NULL;
  gint64 number;
  guint64 unsigned_number;

  if (g_ascii_string_to_signed (text, 10, G_MININT64, G_MAXINT64, &number, &parse_error))
    return _hp_config_value_set_int64 (pspec, value, number, error);

  /* beyond 64 bits: out of range if it is a number at all */
  if (g_error_matches (parse_error, G_NUMBER_PARSER_ERROR, G_NUMBER_PARSER_ERROR_OUT_OF_BOUNDS))
    {
      if (_hp_config_field_kind (pspec) == HP_CONFIG_FIELD_UNSIGNED &&
          g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT64, &unsigned_number, NULL))
        return _hp_config_value_set_uint64 (pspec, value, unsigned_number, error);

      if (_hp_config_field_kind (pspec) == HP_CONFIG_FIELD_SIGNED)
        {
          gint64 min, max;

          signed_range (pspec, &min, &max);
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                       "value %s out of range [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                       text, min, max);
        }
      else
        {
          guint64 min, max;

          unsigned_range (pspec, &min, &max);
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                       "value %s out of range [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "]",
                       text, min, max);
        }
      return FALSE;
    }

  g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "expected an integer, got '%s'", text);
  return FALSE;
}

static gboolean
parse_number (GParamSpec   *pspec,
              const gchar  *text,
              GValue       *value,
              GError      **error)
{
  gchar *end = NULL;
  gdouble number;

  if (_hp_config_parse_non_finite (text, &number))
    return _hp_config_value_set_double (pspec, value, number, error);

  number = g_ascii_strtod (text, &end);
  if (*text == '\0' || g_ascii_isspace (*text) || *end != '\0' || !isfinite (number))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "expected a number (or inf, -inf), got '%s'", text);
      return FALSE;
    }
  return _hp_config_value_set_double (pspec, value, number, error);
}

static gboolean
parse_enum (GParamSpec   *pspec,
            const gchar  *text,
            GValue       *value,
            GError      **error)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (G_PARAM_SPEC_VALUE_TYPE (pspec));
  GEnumValue *member = g_enum_get_value_by_nick (klass, text);

  if (member == NULL)
    member = g_enum_get_value_by_name (klass, text);
  if (member == NULL)
    {
      g_autofree gchar *nicks = _hp_config_enum_nicks (G_PARAM_SPEC_VALUE_TYPE (pspec));

      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "expected one of %s, got '%s'", nicks, text);
      return FALSE;
    }
  g_value_set_enum (value, member->value);
  return TRUE;
}

static gboolean
parse_flags (GParamSpec   *pspec,
             const gchar  *text,
             GValue       *value,
             GError      **error)
{
  g_autoptr(GFlagsClass) klass = g_type_class_ref (G_PARAM_SPEC_VALUE_TYPE (pspec));
  g_auto(GStrv) parts = NULL;
  guint flags = 0;

  if (*text != '\0')
    {
      parts = g_strsplit (text, "|", -1);
      for (guint i = 0; parts[i] != NULL; i++)
        {
          const gchar *nick = g_strstrip (parts[i]);

          if (!_hp_config_flags_from_nick (klass, nick, &flags))
            {
              GString *nicks = g_string_new (NULL);

              for (guint j = 0; j < klass->n_values; j++)
                g_string_append_printf (nicks, "%s%s", j > 0 ? ", " : "", klass->values[j].value_nick);
              g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                           "unknown flag '%s' (flags are %s separated by '|')", nick, nicks->str);
              g_string_free (nicks, TRUE);
              return FALSE;
            }
        }
    }
  g_value_set_flags (value, flags);
  return TRUE;
}

static gboolean
parse_named_placement (const gchar  *text,
                       GValue       *value,
                       GError      **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(HpNamedPlacement) named = hp_named_placement_new_from_string (text, &local_error);

  if (named == NULL)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_CONFIG, local_error->message);
      return FALSE;
    }
  g_value_set_object (value, named);
  return TRUE;
}

static gboolean
parse_param_init (const gchar  *text,
                  GValue       *value,
                  GError      **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(HpParamInit) param_init = hp_param_init_new_from_string (text, &local_error);

  if (param_init == NULL)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_CONFIG, local_error->message);
      return FALSE;
    }
  g_value_set_object (value, param_init);
  return TRUE;
}

static gboolean
parse_initializer (const gchar  *text,
                   GValue       *value,
                   GError      **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(HpInitializer) initializer = hp_initializer_new_from_string (text, &local_error);

  if (initializer == NULL)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_CONFIG, local_error->message);
      return FALSE;
    }
  g_value_set_object (value, initializer);
  return TRUE;
}

/* The text forms of hp_config_set_path_from_string(): @value zeroed,
 * errors prefixed with @path */
static gboolean
parse_value (GParamSpec   *pspec,
             const gchar  *text,
             const gchar  *path,
             GValue       *value,
             GError      **error)
{
  g_autoptr(GError) local_error = NULL;
  HpConfigFieldKind kind = _hp_config_field_kind (pspec);
  gboolean ok = TRUE;

  if (text == NULL)
    {
      if (kind == HP_CONFIG_FIELD_STRING || kind == HP_CONFIG_FIELD_STRV ||
          G_TYPE_FUNDAMENTAL (G_PARAM_SPEC_VALUE_TYPE (pspec)) == G_TYPE_OBJECT)
        {
          g_value_init (value, G_PARAM_SPEC_VALUE_TYPE (pspec));
          return TRUE;
        }
      _hp_config_set_error (error, path, "a %s field cannot be null",
                            g_type_name (G_PARAM_SPEC_VALUE_TYPE (pspec)));
      return FALSE;
    }

  /* compound values and the JSON form of string arrays */
  if (kind == HP_CONFIG_FIELD_CONFIG || kind == HP_CONFIG_FIELD_CONFIG_LIST ||
      kind == HP_CONFIG_FIELD_SHARDING_CONFIG || kind == HP_CONFIG_FIELD_LOCAL_MAP_CONFIG ||
      (kind == HP_CONFIG_FIELD_STRV && (text[0] == '[' || g_str_equal (text, "null"))))
    {
      g_autoptr(JsonNode) node = _hp_config_json_parse (text, &local_error);

      if (node == NULL)
        {
          _hp_config_set_error (error, path, "%s", local_error->message);
          return FALSE;
        }
      return _hp_config_value_from_json_node (pspec, node, path, value, error);
    }

  g_value_init (value, G_PARAM_SPEC_VALUE_TYPE (pspec));
  switch (kind)
    {
    case HP_CONFIG_FIELD_BOOLEAN:
      if (g_str_equal (text, "true") || g_str_equal (text, "false"))
        g_value_set_boolean (value, g_str_equal (text, "true"));
      else
        {
          g_set_error (&local_error, HP_ERROR, HP_ERROR_CONFIG,
                       "expected true or false, got '%s'", text);
          ok = FALSE;
        }
      break;
    case HP_CONFIG_FIELD_SIGNED:
    case HP_CONFIG_FIELD_UNSIGNED:
      ok = parse_signed (pspec, text, value, &local_error);
      break;
    case HP_CONFIG_FIELD_FLOAT:
    case HP_CONFIG_FIELD_DOUBLE:
      ok = parse_number (pspec, text, value, &local_error);
      break;
    case HP_CONFIG_FIELD_STRING:
      g_value_set_string (value, text);
      break;
    case HP_CONFIG_FIELD_ENUM:
      ok = parse_enum (pspec, text, value, &local_error);
      break;
    case HP_CONFIG_FIELD_FLAGS:
      ok = parse_flags (pspec, text, value, &local_error);
      break;
    case HP_CONFIG_FIELD_STRV:
      {
        g_auto(GStrv) parts = *text == '\0' ? g_new0 (gchar *, 1) : g_strsplit (text, ",", -1);

        for (guint i = 0; parts[i] != NULL; i++)
          g_strstrip (parts[i]);
        g_value_take_boxed (value, g_steal_pointer (&parts));
      }
      break;
    case HP_CONFIG_FIELD_NAMED_PLACEMENT:
      ok = parse_named_placement (text, value, &local_error);
      break;
    case HP_CONFIG_FIELD_PARAM_INIT:
      ok = parse_param_init (text, value, &local_error);
      break;
    case HP_CONFIG_FIELD_INITIALIZER:
      ok = parse_initializer (text, value, &local_error);
      break;
    default:
      g_return_val_if_reached (FALSE);
    }

  if (ok)
    ok = _hp_config_value_validate (pspec, value, &local_error);
  if (!ok)
    {
      _hp_config_set_error (error, path, "%s", local_error->message);
      g_value_unset (value);
    }
  return ok;
}

/**
 * hp_config_set_path_from_string:
 * @self: a #HpConfig
 * @path: a dotted path to a field, through nested configurations and
 *   list items, such as `layers.0.attention.n-heads`; field names may
 *   use `_` for `-`
 * @value: (nullable): the new value as text, or %NULL for a string,
 *   string array or object field that is to be %NULL
 * @error: return location for a #GError
 *
 * Sets the field at @path from its text form, the form
 * hp_config_get_path_as_string() gives:
 *
 * - booleans: `true` or `false`;
 * - integers in decimal; numbers as C reads them (`0.1`, `1e-5`), and
 *   `inf`, `-inf`;
 * - strings as they are;
 * - enums by nick (or name), flags as nicks separated by `|`;
 * - string arrays as items separated by commas (stripped of
 *   surrounding whitespace; the empty string is the empty array), or as
 *   a JSON array of strings;
 * - named placements as hp_named_placement_new_from_string() reads them
 *   (`tp:S(0), dp:R`), parameter initialisers as
 *   hp_param_init_new_from_string() reads them
 *   (`weight=normal(std=0.02); bias=zeros`), initialisers as
 *   hp_initializer_new_from_string() does;
 * - nested configurations, lists, sharding configs and local map
 *   configs in their JSON form (see hp_config_to_json()):
 *   `{"@type": "MyLeafConfig", "depth": 2}`.
 *
 * A path ending in a list item (`layers.1`) replaces that item of the
 * list with a configuration given in its JSON form.
 *
 * The value is checked against the field's param spec (an out-of-range
 * value is an error, not clamped). The configuration that holds the
 * field is changed in place, so configurations sharing it (shallow
 * copies) see the change. On error nothing is changed.
 *
 * Returns: %TRUE on success, %FALSE with %HP_ERROR_CONFIG naming the
 *   path (`layers.0.attention.n-heads: expected an integer, got 'x'`,
 *   `layers.9: index out of range (2 items)`,
 *   `foo: no field 'foo' in MyConfig`) when the path leads nowhere or the
 *   value does not fit the field
 */
gboolean
hp_config_set_path_from_string (HpConfig     *self,
                                const gchar  *path,
                                const gchar  *value,
                                GError      **error)
{
  g_auto(PathTarget) target = { NULL, NULL, NULL, 0 };
  g_auto(GValue) parsed = G_VALUE_INIT;

  g_return_val_if_fail (HP_IS_CONFIG (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!resolve_path (self, path, &target, error))
    return FALSE;

  if (target.list != NULL)
    {
      g_autoptr(JsonNode) node = NULL;
      g_autoptr(GError) local_error = NULL;
      g_autoptr(HpConfig) item = NULL;

      if (value == NULL)
        {
          _hp_config_set_error (error, path, "a list item cannot be null");
          return FALSE;
        }
      node = _hp_config_json_parse (value, &local_error);
      if (node == NULL)
        {
          _hp_config_set_error (error, path, "%s", local_error->message);
          return FALSE;
        }
      item = _hp_config_from_json_node (HP_TYPE_CONFIG, node, path, error);
      if (item == NULL)
        return FALSE;
      _hp_config_list_set (target.list, target.index, item);
      return TRUE;
    }

  if (!parse_value (target.pspec, value, path, &parsed, error))
    return FALSE;
  g_object_set_property (G_OBJECT (target.config), target.pspec->name, &parsed);
  return TRUE;
}

/**
 * hp_config_get_path_as_string:
 * @self: a #HpConfig
 * @path: a dotted path to a field or list item, as for
 *   hp_config_set_path_from_string()
 * @error: return location for a #GError
 *
 * Gets the value of the field (or list item) at @path in the text form
 * that hp_config_set_path_from_string() reads back to an equal value.
 * Numbers are written in their shortest form that reads back exactly;
 * a string array whose items the comma form cannot hold (empty items,
 * commas, surrounding whitespace) in its JSON form.
 *
 * Returns: (transfer full) (nullable): the value as text; %NULL without
 *   an error for a string, string array or object field that is %NULL;
 *   %NULL with %HP_ERROR_CONFIG naming the path when the path leads
 *   nowhere
 */
gchar *
hp_config_get_path_as_string (HpConfig     *self,
                              const gchar  *path,
                              GError      **error)
{
  g_auto(PathTarget) target = { NULL, NULL, NULL, 0 };
  g_auto(GValue) value = G_VALUE_INIT;

  g_return_val_if_fail (HP_IS_CONFIG (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!resolve_path (self, path, &target, error))
    return NULL;

  if (target.list != NULL)
    return hp_config_to_json (hp_config_list_peek (target.list, target.index), FALSE);

  g_value_init (&value, G_PARAM_SPEC_VALUE_TYPE (target.pspec));
  g_object_get_property (G_OBJECT (target.config), target.pspec->name, &value);
  return format_value (target.pspec, &value);
}
