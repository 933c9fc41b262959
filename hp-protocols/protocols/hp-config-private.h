/* hp-config-private.h: what the files of HpConfig (hp-config.c,
 * hp-config-value.c, hp-config-path.c, hp-config-json.c) and
 * hp-config-list.c share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "hp-config.h"
#include "hp-config-list.h"

G_BEGIN_DECLS

/* The property types a config field may have */
typedef enum
{
  HP_CONFIG_FIELD_UNSUPPORTED,
  HP_CONFIG_FIELD_BOOLEAN,
  HP_CONFIG_FIELD_SIGNED,          /* gint, glong, gint64 */
  HP_CONFIG_FIELD_UNSIGNED,        /* guint, gulong, guint64 */
  HP_CONFIG_FIELD_FLOAT,
  HP_CONFIG_FIELD_DOUBLE,
  HP_CONFIG_FIELD_STRING,
  HP_CONFIG_FIELD_ENUM,
  HP_CONFIG_FIELD_FLAGS,
  HP_CONFIG_FIELD_STRV,
  HP_CONFIG_FIELD_CONFIG,
  HP_CONFIG_FIELD_CONFIG_LIST,
  HP_CONFIG_FIELD_NAMED_PLACEMENT,
  HP_CONFIG_FIELD_SHARDING_CONFIG,
  HP_CONFIG_FIELD_LOCAL_MAP_CONFIG,
  HP_CONFIG_FIELD_PARAM_INIT,
  HP_CONFIG_FIELD_INITIALIZER,
} HpConfigFieldKind;

/* The instance data of HpConfig: the values of the fields declared by
 * language bindings (hp_config_type_add_field()) */
typedef struct
{
  GValue *store;
  guint n_store;
} HpConfigPrivate;

/* hp-config.c */
HpConfigPrivate  *_hp_config_get_private         (HpConfig      *self);
/* Drops the cached field list of @config_type (its fields changed) */
void              _hp_config_type_forget_fields  (GType          config_type);
HpConfigFieldKind _hp_config_field_kind          (GParamSpec    *pspec);
/* Strings, string arrays and objects may be NULL */
gboolean          _hp_config_field_is_nullable   (GParamSpec    *pspec);

/* The fields of @config_type in field order (transfer none, cached for
 * the life of the process) */
GParamSpec      **_hp_config_type_get_fields     (GType          config_type,
                                                  guint         *n_fields);
/* The field named @name ('-' or '_' between words), or NULL */
GParamSpec       *_hp_config_type_find_field     (GType          config_type,
                                                  const gchar   *name);
/* Whether @name is the canonical @field_name, '_' standing for '-' */
gboolean          _hp_config_name_matches        (const gchar   *field_name,
                                                  const gchar   *name);
/* Initialises @value (zeroed) to the type of @field and reads it */
void              _hp_config_get_field           (HpConfig      *self,
                                                  GParamSpec    *field,
                                                  GValue        *value);
/* An array of GValues that unsets them when freed */
GArray           *_hp_config_value_array_new     (guint          reserved);

/* hp-config-value.c */
/* Store a number in @value (initialised to the field's type), checking
 * it against the field's range; the error has no path prefix */
gboolean          _hp_config_value_set_int64     (GParamSpec    *pspec,
                                                  GValue        *value,
                                                  gint64         number,
                                                  GError       **error);
gboolean          _hp_config_value_set_uint64    (GParamSpec    *pspec,
                                                  GValue        *value,
                                                  guint64        number,
                                                  GError       **error);
gboolean          _hp_config_value_set_double    (GParamSpec    *pspec,
                                                  GValue        *value,
                                                  gdouble        number,
                                                  GError       **error);
/* "value @shown out of range [min, max]" for an integer field */
void              _hp_config_set_range_error     (GParamSpec    *pspec,
                                                  const gchar   *shown,
                                                  GError       **error);
/* g_param_value_validate() as an error instead of a silent fix */
gboolean          _hp_config_value_validate      (GParamSpec    *pspec,
                                                  const GValue  *value,
                                                  GError       **error);
/* Stores @source in @dest (zeroed) as a value of @pspec: a number of any
 * numeric type when the field's range holds it exactly, a value of a
 * compatible type as it is, an object of a fitting type whatever the
 * declared type of @source. The error has no path prefix. */
gboolean          _hp_config_value_convert       (GParamSpec    *pspec,
                                                  const GValue  *source,
                                                  GValue        *dest,
                                                  GError       **error);
/* Field values compared by value (nested configs, lists, placements and
 * initialisers with their own equal functions) */
gboolean          _hp_config_values_equal        (GParamSpec    *pspec,
                                                  const GValue  *a,
                                                  const GValue  *b);

gint64            _hp_config_value_get_signed    (const GValue  *value);
guint64           _hp_config_value_get_unsigned  (const GValue  *value);

/* The shortest decimal forms that read back to the same bits with
 * g_ascii_strtod() (for a float: after rounding the double to float);
 * "nan", "inf" and "-inf" for the non-finite values (GObject rejects NaN
 * as a property value, so a config never holds one) */
gchar            *_hp_config_format_double       (gdouble        number);
gchar            *_hp_config_format_float        (gfloat         number);
/* "inf", "-inf" -> TRUE and the number */
gboolean          _hp_config_parse_non_finite    (const gchar   *text,
                                                  gdouble       *number);

/* Enum and flags nicks, as the JSON and the path strings use them.
 * Sets the enum member named by the nick @text (or, @names_too, by its
 * name); the error lists the nicks and has no path prefix */
gboolean          _hp_config_value_set_enum_nick (GParamSpec    *pspec,
                                                  const gchar   *text,
                                                  gboolean       names_too,
                                                  GValue        *value,
                                                  GError       **error);
gchar            *_hp_config_value_dup_enum_nick (const GValue  *value);
/* The nicks of the flags set, in the order of the flags type */
GStrv             _hp_config_value_dup_flag_nicks (const GValue *value);
gboolean          _hp_config_flags_from_nick     (GFlagsClass   *klass,
                                                  const gchar   *nick,
                                                  guint         *flags);

/* hp-config-field.c: the table fields of an instance: defaults at
 * construction, release at dispose (objects) and finalize (the rest) */
void              _hp_config_fields_construct    (HpConfig      *self);
void              _hp_config_fields_dispose      (HpConfig      *self);
void              _hp_config_fields_finalize     (HpConfig      *self);
/* The place of @pspec in its class's field table, or -1 if it is not a
 * table field */
gint              _hp_config_field_order         (GParamSpec    *pspec);

/* hp-config-path.c */
/* "path: message" (or the message alone for the empty path) */
void              _hp_config_set_error           (GError       **error,
                                                  const gchar   *path,
                                                  const gchar   *format,
                                                  ...) G_GNUC_PRINTF (3, 4);
gchar            *_hp_config_join_path           (const gchar   *path,
                                                  const gchar   *name);

/* hp-config-json.c */
JsonNode         *_hp_config_value_to_json_node  (GParamSpec    *pspec,
                                                  const GValue  *value);
/* Reads @node into @value (zeroed; initialised to the field's type on
 * success), errors naming @path */
gboolean          _hp_config_value_from_json_node (GParamSpec   *pspec,
                                                   JsonNode     *node,
                                                   const gchar  *path,
                                                   GValue       *value,
                                                   GError      **error);
HpConfig         *_hp_config_from_json_node      (GType          expected_type,
                                                  JsonNode      *node,
                                                  const gchar   *path,
                                                  GError       **error);
/* What to load for the type @name that is not registered, as the end
 * of a message: ", defined in the Python module 'models': import it
 * (...)" for the name of a Python class (`module+Qualified+Name`),
 * ", defined in JavaScript: ..." for a gjs class (`Gjs_Name`), ": load
 * the library ... (hp-config --require NAMESPACE-VERSION)" otherwise */
gchar            *_hp_config_unknown_type_hint   (const gchar   *name);
gchar            *_hp_config_json_node_to_string (JsonNode      *node,
                                                  gboolean       pretty);
/* Parses configuration text strictly, as _hp_json_parse_strict() does
 * (%HP_ERROR_FORMAT, "not valid JSON: ... at byte N") */
JsonNode         *_hp_config_json_parse          (const gchar   *text,
                                                  GError       **error);

/* A copy of a configuration or configuration list that shares nothing
 * with it (through its JSON form) */
GObject          *_hp_config_object_deep_copy    (GObject       *object);

/* hp-config-list.c: replaces one item, one items-changed emission */
void              _hp_config_list_set            (HpConfigList  *self,
                                                  guint          position,
                                                  HpConfig      *config);

G_END_DECLS
