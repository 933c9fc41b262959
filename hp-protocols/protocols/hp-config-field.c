/* hp-config-field.c: fields declared in a table, for C classes and for
 * the classes of language bindings, and the get, set, default and
 * clean-up functions that come from it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-config-field.h"
#include "hp-config-list.h"
#include "hp-config-private.h"
#include "hp-error.h"

/* One installed field */
typedef struct
{
  GParamSpec *pspec;
  HpConfigFieldType type;
  gssize offset;                /* from the instance pointer, negative in the
                                 * private struct; 0: in the instance's store */
  guint slot;                   /* its place in the store */
  guint order;                  /* its place in its class's table */
  GType default_type;           /* OBJECT: G_TYPE_INVALID for NULL */
  GObject *prototype;           /* OBJECT, from a binding: copied for each instance */
  GStrv default_strv;           /* STRV, from a binding (a string array param
                                 * spec has no default of its own) */
} FieldEntry;

/* The fields a class declared itself */
typedef struct
{
  GPtrArray *entries;           /* FieldEntry, in declaration order */
  guint n_stored_before;        /* stored fields of the ancestors */
  guint n_stored;
  GObjectGetPropertyFunc chained_get;  /* for the class's other properties */
  GObjectSetPropertyFunc chained_set;
} FieldClass;

static GQuark
field_class_quark (void)
{
  return g_quark_from_static_string ("hp-config-field-class");
}

static GQuark
field_entry_quark (void)
{
  return g_quark_from_static_string ("hp-config-field-entry");
}

static FieldEntry *
entry_of (GParamSpec *pspec)
{
  return g_param_spec_get_qdata (pspec, field_entry_quark ());
}

static FieldClass *
field_class_of (GType type)
{
  return g_type_get_qdata (type, field_class_quark ());
}

static guint
stored_fields_up_to (GType type)
{
  for (GType t = type; t != HP_TYPE_CONFIG && t != G_TYPE_INVALID; t = g_type_parent (t))
    {
      FieldClass *fc = field_class_of (t);

      if (fc != NULL)
        return fc->n_stored_before + fc->n_stored;
    }
  return 0;
}

static HpConfigFieldType
type_of_value_type (GType value_type)
{
  switch (G_TYPE_FUNDAMENTAL (value_type))
    {
    case G_TYPE_BOOLEAN:
      return HP_CONFIG_FIELD_TYPE_BOOLEAN;
    case G_TYPE_INT:
      return HP_CONFIG_FIELD_TYPE_INT;
    case G_TYPE_UINT:
      return HP_CONFIG_FIELD_TYPE_UINT;
    case G_TYPE_INT64:
      return HP_CONFIG_FIELD_TYPE_INT64;
    case G_TYPE_UINT64:
      return HP_CONFIG_FIELD_TYPE_UINT64;
    case G_TYPE_LONG:
      return HP_CONFIG_FIELD_TYPE_LONG;
    case G_TYPE_ULONG:
      return HP_CONFIG_FIELD_TYPE_ULONG;
    case G_TYPE_FLOAT:
      return HP_CONFIG_FIELD_TYPE_FLOAT;
    case G_TYPE_DOUBLE:
      return HP_CONFIG_FIELD_TYPE_DOUBLE;
    case G_TYPE_STRING:
      return HP_CONFIG_FIELD_TYPE_STRING;
    case G_TYPE_ENUM:
      return HP_CONFIG_FIELD_TYPE_ENUM;
    case G_TYPE_FLAGS:
      return HP_CONFIG_FIELD_TYPE_FLAGS;
    case G_TYPE_BOXED:
      return HP_CONFIG_FIELD_TYPE_STRV;
    default:
      return HP_CONFIG_FIELD_TYPE_OBJECT;
    }
}

/* The param spec of a field whose default, minimum and maximum (NULL:
 * the whole range) hold values of @value_type; NULL if that type is not
 * one a field may have */
static GParamSpec *
field_pspec_new (const gchar  *name,
                 const gchar  *blurb,
                 GType         value_type,
                 const GValue *def,
                 const GValue *min,
                 const GValue *max,
                 GParamFlags   flags)
{
  GParamSpec *pspec = NULL;

  flags |= G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY;
  switch (G_TYPE_FUNDAMENTAL (value_type))
    {
    case G_TYPE_BOOLEAN:
      pspec = g_param_spec_boolean (name, NULL, blurb, def ? g_value_get_boolean (def) : FALSE, flags);
      break;
    case G_TYPE_INT:
      pspec = g_param_spec_int (name, NULL, blurb,
                                min ? g_value_get_int (min) : G_MININT,
                                max ? g_value_get_int (max) : G_MAXINT,
                                def ? g_value_get_int (def) : 0, flags);
      break;
    case G_TYPE_UINT:
      pspec = g_param_spec_uint (name, NULL, blurb,
                                 min ? g_value_get_uint (min) : 0,
                                 max ? g_value_get_uint (max) : G_MAXUINT,
                                 def ? g_value_get_uint (def) : 0, flags);
      break;
    case G_TYPE_INT64:
      pspec = g_param_spec_int64 (name, NULL, blurb,
                                  min ? g_value_get_int64 (min) : G_MININT64,
                                  max ? g_value_get_int64 (max) : G_MAXINT64,
                                  def ? g_value_get_int64 (def) : 0, flags);
      break;
    case G_TYPE_UINT64:
      pspec = g_param_spec_uint64 (name, NULL, blurb,
                                   min ? g_value_get_uint64 (min) : 0,
                                   max ? g_value_get_uint64 (max) : G_MAXUINT64,
                                   def ? g_value_get_uint64 (def) : 0, flags);
      break;
    case G_TYPE_LONG:
      pspec = g_param_spec_long (name, NULL, blurb,
                                 min ? g_value_get_long (min) : G_MINLONG,
                                 max ? g_value_get_long (max) : G_MAXLONG,
                                 def ? g_value_get_long (def) : 0, flags);
      break;
    case G_TYPE_ULONG:
      pspec = g_param_spec_ulong (name, NULL, blurb,
                                  min ? g_value_get_ulong (min) : 0,
                                  max ? g_value_get_ulong (max) : G_MAXULONG,
                                  def ? g_value_get_ulong (def) : 0, flags);
      break;
    case G_TYPE_FLOAT:
      pspec = g_param_spec_float (name, NULL, blurb,
                                  min ? g_value_get_float (min) : -G_MAXFLOAT,
                                  max ? g_value_get_float (max) : G_MAXFLOAT,
                                  def ? g_value_get_float (def) : 0.0f, flags);
      break;
    case G_TYPE_DOUBLE:
      pspec = g_param_spec_double (name, NULL, blurb,
                                   min ? g_value_get_double (min) : -G_MAXDOUBLE,
                                   max ? g_value_get_double (max) : G_MAXDOUBLE,
                                   def ? g_value_get_double (def) : 0.0, flags);
      break;
    case G_TYPE_STRING:
      pspec = g_param_spec_string (name, NULL, blurb, def ? g_value_get_string (def) : NULL, flags);
      break;
    case G_TYPE_ENUM:
      {
        g_autoptr(GEnumClass) klass = g_type_class_ref (value_type);

        pspec = g_param_spec_enum (name, NULL, blurb, value_type,
                                   def ? g_value_get_enum (def) : klass->values[0].value, flags);
        break;
      }
    case G_TYPE_FLAGS:
      pspec = g_param_spec_flags (name, NULL, blurb, value_type,
                                  def ? g_value_get_flags (def) : 0, flags);
      break;
    case G_TYPE_BOXED:
      if (value_type == G_TYPE_STRV)
        pspec = g_param_spec_boxed (name, NULL, blurb, G_TYPE_STRV, flags);
      break;
    case G_TYPE_OBJECT:
      pspec = g_param_spec_object (name, NULL, blurb, value_type, flags);
      break;
    default:
      break;
    }

  if (pspec != NULL && _hp_config_field_kind (pspec) == HP_CONFIG_FIELD_UNSUPPORTED)
    g_clear_pointer (&pspec, g_param_spec_unref);
  return pspec != NULL ? g_param_spec_ref_sink (pspec) : NULL;
}

static void
field_entry_free (gpointer data)
{
  FieldEntry *entry = data;

  g_clear_object (&entry->prototype);
  g_strfreev (entry->default_strv);
  g_param_spec_unref (entry->pspec);
  g_free (entry);
}

static void field_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec);
static void field_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec);

/* The fields of the class @klass, made at its first field; the class's
 * property functions become the table's, which pass the other
 * properties on to the functions they replace */
static FieldClass *
field_class_ensure (GObjectClass *klass)
{
  GType type = G_OBJECT_CLASS_TYPE (klass);
  FieldClass *fc = field_class_of (type);

  if (fc != NULL)
    return fc;

  fc = g_new0 (FieldClass, 1);
  fc->entries = g_ptr_array_new_with_free_func (field_entry_free);
  fc->n_stored_before = stored_fields_up_to (g_type_parent (type));
  if (klass->get_property != field_get_property)
    fc->chained_get = klass->get_property;
  if (klass->set_property != field_set_property)
    fc->chained_set = klass->set_property;
  klass->get_property = field_get_property;
  klass->set_property = field_set_property;
  /* class data lives as long as the type, that is, for good */
  g_type_set_qdata (type, field_class_quark (), fc);
  return fc;
}

static void
install_entry (GObjectClass *klass,
               FieldClass   *fc,
               FieldEntry   *entry)
{
  entry->order = fc->entries->len;
  if (entry->offset == 0)
    entry->slot = fc->n_stored_before + fc->n_stored++;
  g_param_spec_set_qdata (entry->pspec, field_entry_quark (), entry);
  g_ptr_array_add (fc->entries, entry);
  g_object_class_install_property (klass, entry->order + 1, entry->pspec);
}

/* The GValues of a table entry's default, minimum and maximum */
static void
table_values (const HpConfigField *field,
              GType                value_type,
              GValue              *def,
              GValue              *min,
              GValue              *max)
{
  g_value_init (def, value_type);
  g_value_init (min, value_type);
  g_value_init (max, value_type);
  switch (field->type)
    {
    case HP_CONFIG_FIELD_TYPE_BOOLEAN:
      g_value_set_boolean (def, field->default_value.b);
      break;
    case HP_CONFIG_FIELD_TYPE_INT:
      g_value_set_int (def, (gint) field->default_value.i);
      g_value_set_int (min, (gint) field->int_minimum);
      g_value_set_int (max, (gint) field->int_maximum);
      break;
    case HP_CONFIG_FIELD_TYPE_UINT:
      g_value_set_uint (def, (guint) field->default_value.u);
      g_value_set_uint (max, (guint) field->uint_maximum);
      break;
    case HP_CONFIG_FIELD_TYPE_INT64:
      g_value_set_int64 (def, field->default_value.i);
      g_value_set_int64 (min, field->int_minimum);
      g_value_set_int64 (max, field->int_maximum);
      break;
    case HP_CONFIG_FIELD_TYPE_UINT64:
      g_value_set_uint64 (def, field->default_value.u);
      g_value_set_uint64 (max, field->uint_maximum);
      break;
    case HP_CONFIG_FIELD_TYPE_LONG:
      g_value_set_long (def, (glong) field->default_value.i);
      g_value_set_long (min, (glong) field->int_minimum);
      g_value_set_long (max, (glong) field->int_maximum);
      break;
    case HP_CONFIG_FIELD_TYPE_ULONG:
      g_value_set_ulong (def, (gulong) field->default_value.u);
      g_value_set_ulong (max, (gulong) field->uint_maximum);
      break;
    case HP_CONFIG_FIELD_TYPE_FLOAT:
      g_value_set_float (def, (gfloat) field->default_value.d);
      g_value_set_float (min, (gfloat) field->double_minimum);
      g_value_set_float (max, (gfloat) field->double_maximum);
      break;
    case HP_CONFIG_FIELD_TYPE_DOUBLE:
      g_value_set_double (def, field->default_value.d);
      g_value_set_double (min, field->double_minimum);
      g_value_set_double (max, field->double_maximum);
      break;
    case HP_CONFIG_FIELD_TYPE_STRING:
      g_value_set_static_string (def, field->default_value.s);
      break;
    case HP_CONFIG_FIELD_TYPE_ENUM:
      g_value_set_enum (def, (gint) field->default_value.i);
      break;
    case HP_CONFIG_FIELD_TYPE_FLAGS:
      g_value_set_flags (def, (guint) field->default_value.u);
      break;
    case HP_CONFIG_FIELD_TYPE_STRV:
    case HP_CONFIG_FIELD_TYPE_OBJECT:
      break;
    }
}

static GType
table_value_type (const HpConfigField *field)
{
  switch (field->type)
    {
    case HP_CONFIG_FIELD_TYPE_BOOLEAN: return G_TYPE_BOOLEAN;
    case HP_CONFIG_FIELD_TYPE_INT:     return G_TYPE_INT;
    case HP_CONFIG_FIELD_TYPE_UINT:    return G_TYPE_UINT;
    case HP_CONFIG_FIELD_TYPE_INT64:   return G_TYPE_INT64;
    case HP_CONFIG_FIELD_TYPE_UINT64:  return G_TYPE_UINT64;
    case HP_CONFIG_FIELD_TYPE_LONG:    return G_TYPE_LONG;
    case HP_CONFIG_FIELD_TYPE_ULONG:   return G_TYPE_ULONG;
    case HP_CONFIG_FIELD_TYPE_FLOAT:   return G_TYPE_FLOAT;
    case HP_CONFIG_FIELD_TYPE_DOUBLE:  return G_TYPE_DOUBLE;
    case HP_CONFIG_FIELD_TYPE_STRING:  return G_TYPE_STRING;
    case HP_CONFIG_FIELD_TYPE_STRV:    return G_TYPE_STRV;
    case HP_CONFIG_FIELD_TYPE_ENUM:
    case HP_CONFIG_FIELD_TYPE_FLAGS:
    case HP_CONFIG_FIELD_TYPE_OBJECT:
      return field->value_type != NULL ? field->value_type () : G_TYPE_INVALID;
    }
  return G_TYPE_INVALID;
}

/* Installs @fields, whose members lie @base bytes from the instance
 * pointer */
static void
install_table (HpConfigClass       *klass,
               gssize               base,
               const HpConfigField *fields,
               guint                n_fields)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  FieldClass *fc = field_class_ensure (object_class);

  for (guint i = 0; i < n_fields; i++)
    {
      const HpConfigField *field = &fields[i];
      GType value_type = table_value_type (field);
      g_auto(GValue) def = G_VALUE_INIT;
      g_auto(GValue) min = G_VALUE_INIT;
      g_auto(GValue) max = G_VALUE_INIT;
      FieldEntry *entry;
      gboolean ranged;
      gboolean bounded;

      g_return_if_fail (field->name != NULL);
      g_return_if_fail (value_type != G_TYPE_INVALID);

      table_values (field, value_type, &def, &min, &max);
      ranged = field->type == HP_CONFIG_FIELD_TYPE_INT || field->type == HP_CONFIG_FIELD_TYPE_INT64 ||
               field->type == HP_CONFIG_FIELD_TYPE_LONG || field->type == HP_CONFIG_FIELD_TYPE_FLOAT ||
               field->type == HP_CONFIG_FIELD_TYPE_DOUBLE;
      bounded = ranged || field->type == HP_CONFIG_FIELD_TYPE_UINT ||
                field->type == HP_CONFIG_FIELD_TYPE_UINT64 || field->type == HP_CONFIG_FIELD_TYPE_ULONG;
      entry = g_new0 (FieldEntry, 1);
      entry->pspec = field_pspec_new (field->name, field->blurb, value_type, &def,
                                      ranged ? &min : NULL, bounded ? &max : NULL,
                                      field->flags | G_PARAM_STATIC_STRINGS);
      if (entry->pspec == NULL)
        {
          g_critical ("%s: %s.%s has type %s, which configurations do not support",
                      G_STRFUNC, G_OBJECT_CLASS_NAME (klass), field->name, g_type_name (value_type));
          g_free (entry);
          return;
        }
      entry->type = field->type;
      entry->offset = base + (gssize) field->offset;
      entry->default_type = field->default_type != NULL ? field->default_type () : G_TYPE_INVALID;
      install_entry (object_class, fc, entry);
    }
}

/**
 * hp_config_class_install_fields: (skip)
 * @klass: the class of a configuration type, in its class_init
 * @fields: (array length=n_fields): the table of its fields, which must
 *   live as long as the type (a static table)
 * @n_fields: the number of fields
 *
 * Declares the fields of a configuration class written in C, one table
 * entry each (see `hp-config-field.h`): makes their param specs, in the
 * order of the table, and makes the class's get_property and
 * set_property the table's. Properties the class installs itself keep
 * its own get_property and set_property, which must be set before this
 * call. A new instance starts with every field at its default; a nested
 * configuration field whose entry names a default type gets a new
 * instance of it.
 *
 * Since: 1.0
 */
void
hp_config_class_install_fields (HpConfigClass       *klass,
                                const HpConfigField *fields,
                                guint                n_fields)
{
  g_return_if_fail (HP_IS_CONFIG_CLASS (klass));
  g_return_if_fail (n_fields == 0 || fields != NULL);
  for (guint i = 0; i < n_fields; i++)
    g_return_if_fail (fields[i].offset > 0);

  install_table (klass, 0, fields, n_fields);
}

/**
 * hp_config_class_install_private_fields: (skip)
 * @klass: the class of a configuration type, in its class_init
 * @private_offset: the offset of the type's private struct, the
 *   `TypeName_private_offset` of [func@GObject.DEFINE_TYPE_WITH_PRIVATE] (final
 *   by the time class_init runs)
 * @fields: (array length=n_fields): the table of its fields, whose
 *   members are those of the private struct; it must live as long as
 *   the type (a static table)
 * @n_fields: the number of fields
 *
 * Declares the fields of a derivable configuration class written in C,
 * whose values live in its private struct, as
 * `hp_config_class_install_fields()` does for the members of an
 * instance struct: the instance struct of a derivable type is its
 * parent's alone.
 *
 * Since: 1.0
 */
void
hp_config_class_install_private_fields (HpConfigClass       *klass,
                                        gint                 private_offset,
                                        const HpConfigField *fields,
                                        guint                n_fields)
{
  g_return_if_fail (HP_IS_CONFIG_CLASS (klass));
  g_return_if_fail (private_offset < 0);
  g_return_if_fail (n_fields == 0 || fields != NULL);
  for (guint i = 0; i < n_fields; i++)
    g_return_if_fail ((gssize) fields[i].offset < -(gssize) private_offset);

  install_table (klass, private_offset, fields, n_fields);
}

static void
field_entry_free_unset (FieldEntry *entry)
{
  g_clear_object (&entry->prototype);
  g_strfreev (entry->default_strv);
  g_free (entry);
}

/* Checks @min <= @max (either may be NULL) and that @def, when given,
 * lies between them; when it is not given, makes it the number nearest
 * zero in the bounds (the zero value otherwise). @def is initialised to
 * the type of @wide. Errors have no prefix. */
static gboolean
field_default_in_bounds (GParamSpec    *wide,
                         GValue        *def,
                         gboolean       has_def,
                         const GValue  *min,
                         const GValue  *max,
                         GError       **error)
{
  g_autofree gchar *shown_min = NULL;
  g_autofree gchar *shown_max = NULL;

  if (!has_def)
    {
      g_value_init (def, G_PARAM_SPEC_VALUE_TYPE (wide));
      if (min != NULL && g_param_values_cmp (wide, def, min) < 0)
        g_value_copy (min, def);
      else if (max != NULL && g_param_values_cmp (wide, def, max) > 0)
        g_value_copy (max, def);
    }
  if ((min == NULL || g_param_values_cmp (wide, min, def) <= 0) &&
      (max == NULL || g_param_values_cmp (wide, def, max) <= 0))
    return TRUE;

  shown_min = min != NULL ? g_strdup_value_contents (min) : g_strdup ("-");
  shown_max = max != NULL ? g_strdup_value_contents (max) : g_strdup ("-");
  if (min != NULL && max != NULL && g_param_values_cmp (wide, min, max) > 0)
    g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "minimum %s is greater than maximum %s",
                 shown_min, shown_max);
  else
    {
      g_autofree gchar *shown = g_strdup_value_contents (def);

      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "default %s is outside [%s, %s]",
                   shown, shown_min, shown_max);
    }
  return FALSE;
}

/* Converts @value (may be NULL) for @pspec into @out, errors without a
 * prefix */
static gboolean
convert_optional (GParamSpec    *pspec,
                  const GValue  *value,
                  GValue        *out,
                  gboolean      *given,
                  GError       **error)
{
  /* gjs passes null as a value holding a NULL gpointer */
  *given = value != NULL && G_IS_VALUE (value) &&
           !(G_VALUE_HOLDS_POINTER (value) && g_value_get_pointer (value) == NULL);
  return !*given || _hp_config_value_convert (pspec, value, out, error);
}

/**
 * hp_config_type_add_field:
 * @config_type: a configuration type (a subtype of [class@Hp.Config])
 *   that has no subclasses yet
 * @name: the field's name: words joined by `-` (or `_`)
 * @value_type: its type: `gboolean`, `gint`, `guint`, `gint64`, `guint64`,
 *   `glong`, `gulong`, `gfloat`, `gdouble`, a string, an enum, a flags type, a string array
 *   (%G_TYPE_STRV) or one of the object types a field may have (see
 *   [class@Hp.Config])
 * @default_value: (nullable): the default, any value that converts
 *   exactly to @value_type, or %NULL for zero, %FALSE, the first enum
 *   member or %NULL. For a nested configuration or a configuration list,
 *   an instance here is the default of every new configuration, each of
 *   which gets its own copy of it, as a `field(default_factory=...)`;
 *   likewise a string array.
 * @minimum: (nullable): the least value of a numeric field, or %NULL
 * @maximum: (nullable): the greatest value of a numeric field, or %NULL
 * @blurb: (nullable): a one-line description
 * @error: return location for a [struct@GLib.Error]
 *
 * Declares a field of a configuration class defined in a language
 * binding, whose instances have no C struct to hold it: the library
 * keeps its values, and the field comes after those declared before it,
 * in [method@Hp.Config.list_fields], JSON and
 * [method@Hp.Config.traverse], as the entries of a C class's table do.
 * Call it right after registering the class, before any subclass is
 * made. The class's get_property and set_property are made the
 * library's, which pass the class's other properties on to the
 * functions they replace. The Python override calls this for each
 * annotated attribute of a `Config` class.
 *
 * Returns: %TRUE on success; %FALSE with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when
 *   @config_type has subclasses, @name is not a valid property name or is
 *   already a property of @config_type, or @value_type is not a type a
 *   field may have, or with [HP_ERROR_CONFIG][error@Hp.Error] when a default or a bound
 *   does not convert to @value_type or lies outside the bounds, or an
 *   object default is not a configuration or a configuration list
 *
 * Since: 1.0
 */
gboolean
hp_config_type_add_field (GType          config_type,
                          const gchar   *name,
                          GType          value_type,
                          const GValue  *default_value,
                          const GValue  *minimum,
                          const GValue  *maximum,
                          const gchar   *blurb,
                          GError       **error)
{
  g_autoptr(GTypeClass) klass = NULL;
  g_autofree GType *children = NULL;
  g_autofree gchar *canonical = NULL;
  g_autoptr(GParamSpec) wide = NULL;
  g_auto(GValue) def = G_VALUE_INIT;
  g_auto(GValue) min = G_VALUE_INIT;
  g_auto(GValue) max = G_VALUE_INIT;
  g_autoptr(GError) local_error = NULL;
  gboolean has_def, has_min, has_max;
  guint n_children;
  FieldEntry *entry;

  g_return_val_if_fail (g_type_is_a (config_type, HP_TYPE_CONFIG), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  canonical = g_strdelimit (g_strdup (name), "_", '-');
  klass = g_type_class_ref (config_type);
  children = g_type_children (config_type, &n_children);
  if (n_children > 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "cannot add field '%s' to %s: it has subclasses already",
                   canonical, g_type_name (config_type));
      return FALSE;
    }
  if (!g_param_spec_is_valid_name (canonical))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "'%s' is not a valid field name", canonical);
      return FALSE;
    }
  if (g_object_class_find_property (G_OBJECT_CLASS (klass), canonical) != NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s already has a field or property '%s'", g_type_name (config_type), canonical);
      return FALSE;
    }

  wide = field_pspec_new (canonical, NULL, value_type, NULL, NULL, NULL, 0);
  if (wide == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s.%s: fields of type %s are not supported",
                   g_type_name (config_type), canonical, g_type_name (value_type));
      return FALSE;
    }
  if (!convert_optional (wide, default_value, &def, &has_def, &local_error) ||
      !convert_optional (wide, minimum, &min, &has_min, &local_error) ||
      !convert_optional (wide, maximum, &max, &has_max, &local_error))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "%s.%s: ",
                                  g_type_name (config_type), canonical);
      return FALSE;
    }

  entry = g_new0 (FieldEntry, 1);
  entry->type = type_of_value_type (value_type);
  if (entry->type == HP_CONFIG_FIELD_TYPE_OBJECT && has_def && g_value_get_object (&def) != NULL)
    {
      GObject *prototype = g_value_get_object (&def);

      if (!HP_IS_CONFIG (prototype) && !HP_IS_CONFIG_LIST (prototype))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                       "%s.%s: only configurations and configuration lists have default instances, not %s",
                       g_type_name (config_type), canonical, G_OBJECT_TYPE_NAME (prototype));
          g_free (entry);
          return FALSE;
        }
      entry->prototype = _hp_config_object_deep_copy (prototype);
      g_value_reset (&def);
    }
  if (entry->type == HP_CONFIG_FIELD_TYPE_STRV && has_def)
    entry->default_strv = g_value_dup_boxed (&def);
  if (!field_default_in_bounds (wide, &def, has_def, has_min ? &min : NULL, has_max ? &max : NULL,
                                &local_error))
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "%s.%s: ",
                                  g_type_name (config_type), canonical);
      field_entry_free_unset (entry);
      return FALSE;
    }
  entry->pspec = field_pspec_new (canonical, blurb, value_type,
                                  entry->type != HP_CONFIG_FIELD_TYPE_OBJECT ? &def : NULL,
                                  has_min ? &min : NULL, has_max ? &max : NULL, 0);

  install_entry (G_OBJECT_CLASS (klass), field_class_ensure (G_OBJECT_CLASS (klass)), entry);
  _hp_config_type_forget_fields (config_type);
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Values                                                              */

static gpointer
member_of (HpConfig   *self,
           FieldEntry *entry)
{
  return G_STRUCT_MEMBER_P (self, entry->offset);
}

/* The stored value of @entry; NULL for an instance made before the
 * field was declared, which has no place for it */
static GValue *
stored_of (HpConfig   *self,
           FieldEntry *entry)
{
  HpConfigPrivate *priv = _hp_config_get_private (self);

  if (entry->slot < priv->n_store)
    return &priv->store[entry->slot];
  g_critical ("%s.%s was declared after this configuration was made; it has no value",
              G_OBJECT_TYPE_NAME (self), entry->pspec->name);
  return NULL;
}

static void
read_value (HpConfig   *self,
            FieldEntry *entry,
            GValue     *value)
{
  gpointer member;

  if (entry->offset == 0)
    {
      GValue *stored = stored_of (self, entry);

      if (stored != NULL)
        g_value_copy (stored, value);
      return;
    }

  member = member_of (self, entry);
  switch (entry->type)
    {
    case HP_CONFIG_FIELD_TYPE_BOOLEAN:
      g_value_set_boolean (value, *(gboolean *) member);
      break;
    case HP_CONFIG_FIELD_TYPE_INT:
      g_value_set_int (value, *(gint *) member);
      break;
    case HP_CONFIG_FIELD_TYPE_UINT:
      g_value_set_uint (value, *(guint *) member);
      break;
    case HP_CONFIG_FIELD_TYPE_INT64:
      g_value_set_int64 (value, *(gint64 *) member);
      break;
    case HP_CONFIG_FIELD_TYPE_UINT64:
      g_value_set_uint64 (value, *(guint64 *) member);
      break;
    case HP_CONFIG_FIELD_TYPE_LONG:
      g_value_set_long (value, *(glong *) member);
      break;
    case HP_CONFIG_FIELD_TYPE_ULONG:
      g_value_set_ulong (value, *(gulong *) member);
      break;
    case HP_CONFIG_FIELD_TYPE_FLOAT:
      g_value_set_float (value, *(gfloat *) member);
      break;
    case HP_CONFIG_FIELD_TYPE_DOUBLE:
      g_value_set_double (value, *(gdouble *) member);
      break;
    case HP_CONFIG_FIELD_TYPE_STRING:
      g_value_set_string (value, *(gchar **) member);
      break;
    case HP_CONFIG_FIELD_TYPE_ENUM:
      g_value_set_enum (value, *(gint *) member);
      break;
    case HP_CONFIG_FIELD_TYPE_FLAGS:
      g_value_set_flags (value, *(guint *) member);
      break;
    case HP_CONFIG_FIELD_TYPE_STRV:
      g_value_set_boxed (value, *(GStrv *) member);
      break;
    case HP_CONFIG_FIELD_TYPE_OBJECT:
      g_value_set_object (value, *(GObject **) member);
      break;
    }
}

/* Whether two values of a field are the same: numbers exactly, real
 * numbers to the bit (the epsilon of a float or double param spec would
 * let a small change go, and == would take -0.0 for 0.0; GObject keeps
 * NaN out), objects by identity */
static gboolean
stored_values_same (FieldEntry   *entry,
                    const GValue *a,
                    const GValue *b)
{
  switch (entry->type)
    {
    case HP_CONFIG_FIELD_TYPE_FLOAT:
      {
        gfloat fa = g_value_get_float (a);
        gfloat fb = g_value_get_float (b);

        return memcmp (&fa, &fb, sizeof fa) == 0;
      }
    case HP_CONFIG_FIELD_TYPE_DOUBLE:
      {
        gdouble da = g_value_get_double (a);
        gdouble db = g_value_get_double (b);

        return memcmp (&da, &db, sizeof da) == 0;
      }
    case HP_CONFIG_FIELD_TYPE_STRV:
      {
        const gchar * const *sa = g_value_get_boxed (a);
        const gchar * const *sb = g_value_get_boxed (b);

        return sa == NULL || sb == NULL ? sa == sb : g_strv_equal (sa, sb);
      }
    case HP_CONFIG_FIELD_TYPE_OBJECT:
      return g_value_get_object (a) == g_value_get_object (b);
    default:
      /* booleans, integers, enums and flags compare exactly, strings by content */
      return g_param_values_cmp (entry->pspec, a, b) == 0;
    }
}

/* Stores @value; whether the field changed */
static gboolean
write_value (HpConfig     *self,
             FieldEntry   *entry,
             const GValue *value)
{
  gpointer member;

  if (entry->offset == 0)
    {
      GValue *stored = stored_of (self, entry);

      if (stored == NULL || (G_IS_VALUE (stored) && stored_values_same (entry, stored, value)))
        return FALSE;
      if (!G_IS_VALUE (stored))
        g_value_init (stored, G_PARAM_SPEC_VALUE_TYPE (entry->pspec));
      g_value_copy (value, stored);
      return TRUE;
    }

  member = member_of (self, entry);
  switch (entry->type)
    {
      /* bits, as stored_values_same() compares */
#define SET_SCALAR(ctype, getter)                     \
      {                                               \
        ctype v = getter (value);                     \
        if (memcmp (member, &v, sizeof v) == 0)       \
          return FALSE;                               \
        *(ctype *) member = v;                        \
        return TRUE;                                  \
      }
    case HP_CONFIG_FIELD_TYPE_BOOLEAN:
      SET_SCALAR (gboolean, g_value_get_boolean)
    case HP_CONFIG_FIELD_TYPE_INT:
      SET_SCALAR (gint, g_value_get_int)
    case HP_CONFIG_FIELD_TYPE_UINT:
      SET_SCALAR (guint, g_value_get_uint)
    case HP_CONFIG_FIELD_TYPE_INT64:
      SET_SCALAR (gint64, g_value_get_int64)
    case HP_CONFIG_FIELD_TYPE_UINT64:
      SET_SCALAR (guint64, g_value_get_uint64)
    case HP_CONFIG_FIELD_TYPE_LONG:
      SET_SCALAR (glong, g_value_get_long)
    case HP_CONFIG_FIELD_TYPE_ULONG:
      SET_SCALAR (gulong, g_value_get_ulong)
    case HP_CONFIG_FIELD_TYPE_FLOAT:
      SET_SCALAR (gfloat, g_value_get_float)
    case HP_CONFIG_FIELD_TYPE_DOUBLE:
      SET_SCALAR (gdouble, g_value_get_double)
    case HP_CONFIG_FIELD_TYPE_ENUM:
      SET_SCALAR (gint, g_value_get_enum)
    case HP_CONFIG_FIELD_TYPE_FLAGS:
      SET_SCALAR (guint, g_value_get_flags)
#undef SET_SCALAR
    case HP_CONFIG_FIELD_TYPE_STRING:
      {
        gchar **str = member;

        if (g_strcmp0 (*str, g_value_get_string (value)) == 0)
          return FALSE;
        g_free (*str);
        *str = g_value_dup_string (value);
        return TRUE;
      }
    case HP_CONFIG_FIELD_TYPE_STRV:
      {
        GStrv *strv = member;
        const gchar * const *given = g_value_get_boxed (value);

        if (*strv == NULL && given == NULL)
          return FALSE;
        if (*strv != NULL && given != NULL && g_strv_equal ((const gchar * const *) *strv, given))
          return FALSE;
        g_strfreev (*strv);
        *strv = g_strdupv ((GStrv) given);
        return TRUE;
      }
    case HP_CONFIG_FIELD_TYPE_OBJECT:
      return g_set_object ((GObject **) member, g_value_get_object (value));
    }
  return FALSE;
}

static void
field_get_property (GObject    *object,
                    guint       prop_id,
                    GValue     *value,
                    GParamSpec *pspec)
{
  FieldEntry *entry = entry_of (pspec);
  FieldClass *fc;

  if (entry != NULL)
    {
      read_value (HP_CONFIG (object), entry, value);
      return;
    }
  fc = field_class_of (pspec->owner_type);
  if (fc != NULL && fc->chained_get != NULL)
    fc->chained_get (object, prop_id, value, pspec);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
field_set_property (GObject      *object,
                    guint         prop_id,
                    const GValue *value,
                    GParamSpec   *pspec)
{
  FieldEntry *entry = entry_of (pspec);
  FieldClass *fc;

  if (entry != NULL)
    {
      if (write_value (HP_CONFIG (object), entry, value))
        g_object_notify_by_pspec (object, pspec);
      return;
    }
  fc = field_class_of (pspec->owner_type);
  if (fc != NULL && fc->chained_set != NULL)
    fc->chained_set (object, prop_id, value, pspec);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

/* ------------------------------------------------------------------ */
/* Instances                                                           */

/* The default instances being made on this thread, outermost first: a
 * configuration type whose default holds (through its own defaults) an
 * instance of itself would otherwise recurse without end */
static GPrivate defaults_in_progress;

static GObject *
new_default_object (FieldEntry *entry)
{
  GSList *making = g_private_get (&defaults_in_progress);
  GType type = entry->prototype != NULL ? G_OBJECT_TYPE (entry->prototype) : entry->default_type;
  GObject *made;

  if (g_slist_find (making, GSIZE_TO_POINTER (type)) != NULL)
    {
      g_critical ("the default of %s.%s holds a %s again: configuration defaults must not nest "
                  "their own type; its default is NULL",
                  g_type_name (entry->pspec->owner_type), entry->pspec->name, g_type_name (type));
      return NULL;
    }

  making = g_slist_prepend (making, GSIZE_TO_POINTER (type));
  g_private_set (&defaults_in_progress, making);
  made = entry->prototype != NULL ? _hp_config_object_deep_copy (entry->prototype)
                                  : g_object_new (type, NULL);
  g_private_set (&defaults_in_progress, g_slist_delete_link (making, making));
  return made;
}

static void
apply_defaults (HpConfig *self,
                GType     type)
{
  FieldClass *fc;

  if (type == HP_TYPE_CONFIG)
    return;
  apply_defaults (self, g_type_parent (type));

  fc = field_class_of (type);
  for (guint i = 0; fc != NULL && i < fc->entries->len; i++)
    {
      FieldEntry *entry = g_ptr_array_index (fc->entries, i);
      g_auto(GValue) value = G_VALUE_INIT;

      g_value_init (&value, G_PARAM_SPEC_VALUE_TYPE (entry->pspec));
      if (entry->type == HP_CONFIG_FIELD_TYPE_OBJECT &&
          (entry->default_type != G_TYPE_INVALID || entry->prototype != NULL))
        g_value_take_object (&value, new_default_object (entry));
      else if (entry->default_strv != NULL)
        g_value_set_boxed (&value, entry->default_strv);
      else
        g_param_value_set_default (entry->pspec, &value);
      write_value (self, entry, &value);
    }
}

void
_hp_config_fields_construct (HpConfig *self)
{
  HpConfigPrivate *priv = _hp_config_get_private (self);

  priv->n_store = stored_fields_up_to (G_OBJECT_TYPE (self));
  priv->store = g_new0 (GValue, priv->n_store);
  apply_defaults (self, G_OBJECT_TYPE (self));
}

static void
release_values (HpConfig *self,
                gboolean  objects)
{
  for (GType type = G_OBJECT_TYPE (self); type != HP_TYPE_CONFIG; type = g_type_parent (type))
    {
      FieldClass *fc = field_class_of (type);

      for (guint i = 0; fc != NULL && i < fc->entries->len; i++)
        {
          FieldEntry *entry = g_ptr_array_index (fc->entries, i);

          if (entry->offset == 0)
            continue;
          if (objects && entry->type == HP_CONFIG_FIELD_TYPE_OBJECT)
            g_clear_object ((GObject **) member_of (self, entry));
          else if (!objects && entry->type == HP_CONFIG_FIELD_TYPE_STRING)
            g_clear_pointer ((gchar **) member_of (self, entry), g_free);
          else if (!objects && entry->type == HP_CONFIG_FIELD_TYPE_STRV)
            g_clear_pointer ((GStrv *) member_of (self, entry), g_strfreev);
        }
    }
}

void
_hp_config_fields_dispose (HpConfig *self)
{
  HpConfigPrivate *priv = _hp_config_get_private (self);

  release_values (self, TRUE);
  for (guint i = 0; i < priv->n_store; i++)
    if (G_VALUE_HOLDS_OBJECT (&priv->store[i]))
      g_value_set_object (&priv->store[i], NULL);
}

void
_hp_config_fields_finalize (HpConfig *self)
{
  HpConfigPrivate *priv = _hp_config_get_private (self);

  release_values (self, FALSE);
  for (guint i = 0; i < priv->n_store; i++)
    if (G_IS_VALUE (&priv->store[i]))
      g_value_unset (&priv->store[i]);
  g_clear_pointer (&priv->store, g_free);
  priv->n_store = 0;
}

gint
_hp_config_field_order (GParamSpec *pspec)
{
  FieldEntry *entry = entry_of (pspec);

  return entry != NULL ? (gint) entry->order : -1;
}
