/* hp-config-path.c: fields reached by dotted paths, and their text
 * forms
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "hp-config-list.h"
#include "hp-config-private.h"
#include "hp-config.h"
#include "hp-enum-private.h"
#include "hp-error-private.h"
#include "hp-error.h"
#include "hp-initializer.h"
#include "hp-local-map-config.h"
#include "hp-named-placement.h"
#include "hp-param-init.h"
#include "hp-sharding-config.h"

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

/* The parts of a sharding config a path reaches into: the entries of
 * its name-keyed maps and of its output lists, by the names of the
 * members of its JSON form */
typedef struct
{
  const gchar *name;
  HpNamedPlacement *(*get_named)  (HpShardingConfig *self,
                                   const gchar      *name);
  void              (*set_named)  (HpShardingConfig *self,
                                   const gchar      *name,
                                   HpNamedPlacement *named);
  HpNamedPlacement *(*get_output) (HpShardingConfig *self,
                                   guint             index);
  void              (*set_output) (HpShardingConfig *self,
                                   guint             index,
                                   HpNamedPlacement *named);
} ShardingMember;

static const ShardingMember sharding_members[] = {
  { "state-shardings", hp_sharding_config_get_state_sharding, hp_sharding_config_set_state_sharding,
    NULL, NULL },
  { "in-src-shardings", hp_sharding_config_get_in_src_sharding, hp_sharding_config_set_in_src_sharding,
    NULL, NULL },
  { "in-dst-shardings", hp_sharding_config_get_in_dst_sharding, hp_sharding_config_set_in_dst_sharding,
    NULL, NULL },
  { "out-src-shardings", NULL, NULL,
    hp_sharding_config_get_out_src_sharding, hp_sharding_config_set_out_src_sharding },
  { "out-dst-shardings", NULL, NULL,
    hp_sharding_config_get_out_dst_sharding, hp_sharding_config_set_out_dst_sharding },
};

/* Where a path leads: a field of @config, an item of @list, or a part
 * of the sharding config in the field @pspec of @config (@sharding, NULL
 * when the field is: an empty one) that @member names with its @key or
 * @index, or its local map config when @member is NULL */
typedef struct
{
  HpConfig *config;
  GParamSpec *pspec;
  HpConfigList *list;
  guint index;
  gboolean in_sharding;
  HpShardingConfig *sharding;
  const ShardingMember *member;
  gchar *key;
} PathTarget;

static void
path_target_clear (PathTarget *target)
{
  g_clear_object (&target->config);
  g_clear_object (&target->list);
  g_clear_object (&target->sharding);
  g_clear_pointer (&target->key, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (PathTarget, path_target_clear)

static GParamSpec *
local_map_pspec (void)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (HP_TYPE_SHARDING_CONFIG);

  return g_object_class_find_property (G_OBJECT_CLASS (klass), "local-map");
}

/* Resolves @parts, the rest of a path after the sharding config field
 * @pspec of @config (@walked so far): `state-shardings.NAME` (a NAME
 * may have dots: `attention.wq.weight`), `in-src-shardings.NAME`,
 * `in-dst-shardings.NAME`, `out-src-shardings.INDEX`,
 * `out-dst-shardings.INDEX` or `local-map` */
static gboolean
resolve_sharding_path (HpConfig     *config,
                       GParamSpec   *pspec,
                       gchar       **parts,
                       GString      *walked,
                       PathTarget   *target,
                       GError      **error)
{
  const ShardingMember *member = NULL;
  guint64 index;

  g_string_append_printf (walked, ".%s", parts[0]);
  if (*parts[0] == '\0')
    {
      _hp_config_set_error (error, walked->str, "empty field name");
      return FALSE;
    }
  if (_hp_config_name_matches ("local-map", parts[0]))
    {
      if (parts[1] != NULL)
        {
          _hp_config_set_error (error, walked->str,
                                "is a %s, set as a whole in its JSON form, so it has no field '%s'",
                                g_type_name (HP_TYPE_LOCAL_MAP_CONFIG), parts[1]);
          return FALSE;
        }
    }
  else
    {
      for (guint i = 0; member == NULL && i < G_N_ELEMENTS (sharding_members); i++)
        if (_hp_config_name_matches (sharding_members[i].name, parts[0]))
          member = &sharding_members[i];
      if (member == NULL)
        {
          _hp_config_set_error (error, walked->str, "no field '%s' in %s", parts[0],
                                g_type_name (HP_TYPE_SHARDING_CONFIG));
          return FALSE;
        }
      if (parts[1] == NULL)
        {
          _hp_config_set_error (error, walked->str, "expected %s after it",
                                member->set_named != NULL ? "an entry name" : "an output index");
          return FALSE;
        }
      for (guint i = 1; parts[i] != NULL; i++)
        {
          if (member->set_output != NULL && i > 1)
            {
              _hp_config_set_error (error, walked->str,
                                    "is a named placement, so it has no field '%s'", parts[i]);
              return FALSE;
            }
          g_string_append_printf (walked, ".%s", parts[i]);
          if (*parts[i] == '\0')
            {
              _hp_config_set_error (error, walked->str, "empty name");
              return FALSE;
            }
        }
      if (member->set_named != NULL)
        target->key = g_strjoinv (".", parts + 1);
      else if (g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXUINT, &index, NULL))
        target->index = (guint) index;
      else
        {
          _hp_config_set_error (error, walked->str, "expected an output index, got '%s'", parts[1]);
          return FALSE;
        }
    }

  g_object_get (config, pspec->name, &target->sharding, NULL);
  target->config = g_object_ref (config);
  target->pspec = pspec;
  target->in_sharding = TRUE;
  target->member = member;
  return TRUE;
}

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
      if (kind == HP_CONFIG_FIELD_SHARDING_CONFIG)
        return resolve_sharding_path (current, pspec, parts + i + 1, walked, target, error);
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
object_to_string (HpConfigFieldKind  kind,
                  GObject           *object)
{
  switch (kind)
    {
    case HP_CONFIG_FIELD_NAMED_PLACEMENT:
      return hp_named_placement_to_string (HP_NAMED_PLACEMENT (object));
    case HP_CONFIG_FIELD_PARAM_INIT:
      return hp_param_init_to_string (HP_PARAM_INIT (object));
    case HP_CONFIG_FIELD_INITIALIZER:
      return hp_initializer_to_string (HP_INITIALIZER (object));
    default:
      g_return_val_if_reached (NULL);
    }
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
      return _hp_config_value_dup_enum_nick (value);
    case HP_CONFIG_FIELD_FLAGS:
      {
        g_auto(GStrv) nicks = _hp_config_value_dup_flag_nicks (value);

        return g_strjoinv ("|", nicks);
      }
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
    case HP_CONFIG_FIELD_PARAM_INIT:
    case HP_CONFIG_FIELD_INITIALIZER:
      if (g_value_get_object (value) == NULL)
        return NULL;
      return object_to_string (_hp_config_field_kind (pspec), g_value_get_object (value));
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

      _hp_config_set_range_error (pspec, text, error);
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
              g_autofree gchar *nicks = _hp_enum_list_nicks (G_PARAM_SPEC_VALUE_TYPE (pspec));

              g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                           "unknown flag '%s' (flags are %s separated by '|')", nick, nicks);
              return FALSE;
            }
        }
    }
  g_value_set_flags (value, flags);
  return TRUE;
}

/* The objects that have a text form of their own */
static GObject *
object_new_from_string (HpConfigFieldKind   kind,
                        const gchar        *text,
                        GError            **error)
{
  switch (kind)
    {
    case HP_CONFIG_FIELD_NAMED_PLACEMENT:
      return G_OBJECT (hp_named_placement_new_from_string (text, error));
    case HP_CONFIG_FIELD_PARAM_INIT:
      return G_OBJECT (hp_param_init_new_from_string (text, error));
    case HP_CONFIG_FIELD_INITIALIZER:
      return G_OBJECT (hp_initializer_new_from_string (text, error));
    default:
      g_return_val_if_reached (NULL);
    }
}

/* The constructors' errors become HP_ERROR_CONFIG errors, as every
 * error of a path is */
static gboolean
parse_object (HpConfigFieldKind   kind,
              const gchar        *text,
              GValue             *value,
              GError            **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GObject) object = object_new_from_string (kind, text, &local_error);

  if (object == NULL)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_CONFIG, local_error->message);
      return FALSE;
    }
  g_value_set_object (value, object);
  return TRUE;
}

/* The JSON form of a value, read strictly; a syntax error is a config
 * error at @path, as every error of a path is */
static JsonNode *
parse_json (const gchar  *text,
            const gchar  *path,
            GError      **error)
{
  g_autoptr(GError) local_error = NULL;
  JsonNode *node = _hp_config_json_parse (text, &local_error);

  if (node == NULL)
    _hp_config_set_error (error, path, "%s", local_error->message);
  return node;
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
      if (_hp_config_field_is_nullable (pspec))
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
      g_autoptr(JsonNode) node = parse_json (text, path, error);

      return node != NULL && _hp_config_value_from_json_node (pspec, node, path, value, error);
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
      ok = _hp_config_value_set_enum_nick (pspec, text, TRUE, value, &local_error);
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
    case HP_CONFIG_FIELD_PARAM_INIT:
    case HP_CONFIG_FIELD_INITIALIZER:
      ok = parse_object (kind, text, value, &local_error);
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

/* The part of a sharding config @target leads to, in @value (zeroed):
 * a named placement or a local map config, NULL when there is none */
static void
sharding_get (PathTarget *target,
              GValue     *value)
{
  HpShardingConfig *sharding = target->sharding;

  if (target->member == NULL)
    {
      g_value_init (value, HP_TYPE_LOCAL_MAP_CONFIG);
      if (sharding != NULL)
        g_value_set_object (value, hp_sharding_config_get_local_map (sharding));
      return;
    }
  g_value_init (value, HP_TYPE_NAMED_PLACEMENT);
  if (sharding == NULL)
    return;
  if (target->member->get_named != NULL)
    g_value_set_object (value, target->member->get_named (sharding, target->key));
  else
    g_value_set_object (value, target->member->get_output (sharding, target->index));
}

/* Sets the part of a sharding config @target leads to from @object (of
 * the type sharding_get() gives, or NULL to remove it); a null sharding
 * config field gets a new one, unless there is nothing to set */
static void
sharding_set (PathTarget *target,
              GObject    *object)
{
  g_autoptr(HpShardingConfig) created = NULL;
  HpShardingConfig *sharding = target->sharding;

  if (sharding == NULL)
    {
      if (object == NULL)
        return;
      sharding = created = hp_sharding_config_new ();
    }
  if (target->member == NULL)
    hp_sharding_config_set_local_map (sharding, HP_LOCAL_MAP_CONFIG (object));
  else if (target->member->set_named != NULL)
    target->member->set_named (sharding, target->key, HP_NAMED_PLACEMENT (object));
  else
    target->member->set_output (sharding, target->index, HP_NAMED_PLACEMENT (object));
  if (created != NULL)
    g_object_set (target->config, target->pspec->name, created, NULL);
}

/* The text forms of the parts of a sharding config: a named placement
 * as hp_named_placement_new_from_string() reads it or null for none,
 * a local map config in its JSON form */
static gboolean
sharding_parse (PathTarget   *target,
                const gchar  *text,
                const gchar  *path,
                GValue       *value,
                GError      **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(HpNamedPlacement) named = NULL;

  if (target->member == NULL)
    return parse_value (local_map_pspec (), text, path, value, error);

  g_value_init (value, HP_TYPE_NAMED_PLACEMENT);
  if (text == NULL || g_str_equal (text, "null"))
    return TRUE;
  named = hp_named_placement_new_from_string (text, &local_error);
  if (named == NULL)
    {
      _hp_config_set_error (error, path, "%s", local_error->message);
      g_value_unset (value);
      return FALSE;
    }
  g_value_set_object (value, named);
  return TRUE;
}

/**
 * hp_config_set_path_from_string:
 * @self: a [class@Hp.Config]
 * @path: a dotted path to a field, through nested configurations and
 *   list items, such as `layers.0.attention.n-heads`; field names may
 *   use `_` for `-`
 * @value: (nullable): the new value as text, or %NULL for a string,
 *   string array or object field that is to be %NULL
 * @error: return location for a [struct@GLib.Error]
 *
 * Sets the field at @path from its text form, the form
 * [method@Hp.Config.get_path_as_string] gives:
 *
 * - booleans: `true` or `false`;
 * - integers in decimal; numbers as C reads them (`0.1`, `1e-5`), and
 *   `inf`, `-inf`;
 * - strings as they are;
 * - enums by nick (or name), flags as nicks separated by `|`;
 * - string arrays as items separated by commas (stripped of
 *   surrounding whitespace; the empty string is the empty array), or as
 *   a JSON array of strings;
 * - named placements as [ctor@Hp.NamedPlacement.new_from_string] reads them
 *   (`tp:S(0), dp:R`), parameter initialisers as
 *   [ctor@Hp.ParamInit.new_from_string] reads them
 *   (`weight=normal(std=0.02); bias=zeros`), initialisers as
 *   [ctor@Hp.Initializer.new_from_string] does;
 * - nested configurations, lists, sharding configs and local map
 *   configs in their JSON form (see [method@Hp.Config.to_json]):
 *   `{"@type": "MyLeafConfig", "depth": 2}`.
 *
 * A path ending in a list item (`layers.1`) replaces that item of the
 * list with a configuration given in its JSON form.
 *
 * A path goes on into a sharding config field (see
 * [class@Hp.ShardingConfig]) by the members of its JSON form:
 * `sharding-config.state-shardings.NAME` (a state path, which may have
 * dots: `sharding-config.state-shardings.attention.wq.weight`),
 * `sharding-config.in-src-shardings.NAME`,
 * `sharding-config.in-dst-shardings.NAME`,
 * `sharding-config.out-src-shardings.INDEX`,
 * `sharding-config.out-dst-shardings.INDEX` (the entries, whose value is
 * a named placement in the form
 * [ctor@Hp.NamedPlacement.new_from_string] reads, such as `tp:S(1)`;
 * `null` or %NULL removes the entry) and `sharding-config.local-map`
 * (the local map config, in its JSON form). A null sharding config
 * field holds no entries: setting one gives the field a new sharding
 * config.
 *
 * JSON forms are read strictly, as [ctor@Hp.Config.new_from_json] reads
 * them (no comments, single quotes, member given twice or data after
 * the value), but the error is [HP_ERROR_CONFIG][error@Hp.Error] naming the path
 * (`layers.1: not valid JSON: unexpected end at byte 1`).
 *
 * The value is checked against the field's param spec (an out-of-range
 * value is an error, not clamped). The configuration that holds the
 * field is changed in place, so configurations sharing it (shallow
 * copies) see the change. On error nothing is changed.
 *
 * Returns: %TRUE on success, %FALSE with [HP_ERROR_CONFIG][error@Hp.Error] naming the
 *   path (`layers.0.attention.n-heads: expected an integer, got 'x'`,
 *   `layers.9: index out of range (2 items)`,
 *   `foo: no field 'foo' in MyConfig`) when the path leads nowhere or the
 *   value does not fit the field
 *
 * Since: 1.0
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

  if (!_hp_error_check_utf8 (path, "config path", HP_ERROR_CONFIG, error) ||
      (value != NULL && !_hp_error_check_utf8 (value, path, HP_ERROR_CONFIG, error)))
    return FALSE;
  if (!resolve_path (self, path, &target, error))
    return FALSE;

  if (target.in_sharding)
    {
      if (!sharding_parse (&target, value, path, &parsed, error))
        return FALSE;
      sharding_set (&target, g_value_get_object (&parsed));
      return TRUE;
    }
  if (target.list != NULL)
    {
      g_autoptr(JsonNode) node = NULL;
      g_autoptr(HpConfig) item = NULL;

      if (value == NULL)
        {
          _hp_config_set_error (error, path, "a list item cannot be null");
          return FALSE;
        }
      node = parse_json (value, path, error);
      if (node == NULL)
        return FALSE;
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
 * @self: a [class@Hp.Config]
 * @path: a dotted path to a field or list item, as for
 *   [method@Hp.Config.set_path_from_string]
 * @error: return location for a [struct@GLib.Error]
 *
 * Gets the value of the field (or list item) at @path in the text form
 * that [method@Hp.Config.set_path_from_string] reads back to an equal value.
 * Numbers are written in their shortest form that reads back exactly;
 * a string array whose items the comma form cannot hold (empty items,
 * commas, surrounding whitespace) in its JSON form.
 *
 * Returns: (transfer full) (nullable): the value as text; %NULL without
 *   an error for a string, string array or object field that is %NULL,
 *   and for a sharding config entry that is not set;
 *   %NULL with [HP_ERROR_CONFIG][error@Hp.Error] naming the path when the path leads
 *   nowhere
 *
 * Since: 1.0
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
  if (target.in_sharding)
    {
      sharding_get (&target, &value);
      if (target.member == NULL)
        return format_value (local_map_pspec (), &value);
      if (g_value_get_object (&value) == NULL)
        return NULL;
      return hp_named_placement_to_string (g_value_get_object (&value));
    }

  _hp_config_get_field (target.config, target.pspec, &value);
  return format_value (target.pspec, &value);
}

/**
 * hp_config_get_value:
 * @self: a configuration
 * @path: a dotted path to a field or list item, as for
 *   [method@Hp.Config.set_path_from_string]
 * @value: (out caller-allocates): an uninitialised [struct@GObject.Value] for the value
 * @error: return location for a [struct@GLib.Error]
 *
 * Gets the value of the field (or list item) at @path: a value of the
 * field's type (a list item's is its configuration; a sharding config
 * entry's a [class@Hp.NamedPlacement], %NULL when it is not set). Language bindings
 * read fields they declared with [func@Hp.Config.type_add_field]
 * through this.
 *
 * Returns: (skip): %TRUE with @value set; %FALSE with [HP_ERROR_CONFIG][error@Hp.Error]
 *   naming the path when the path leads nowhere, @value untouched
 *
 * Since: 1.0
 */
gboolean
hp_config_get_value (HpConfig     *self,
                     const gchar  *path,
                     GValue       *value,
                     GError      **error)
{
  g_auto(PathTarget) target = { NULL, NULL, NULL, 0 };

  g_return_val_if_fail (HP_IS_CONFIG (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (value != NULL && !G_IS_VALUE (value), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!resolve_path (self, path, &target, error))
    return FALSE;

  if (target.list != NULL)
    {
      g_value_init (value, G_OBJECT_TYPE (hp_config_list_peek (target.list, target.index)));
      g_value_set_object (value, hp_config_list_peek (target.list, target.index));
    }
  else if (target.in_sharding)
    sharding_get (&target, value);
  else
    _hp_config_get_field (target.config, target.pspec, value);
  return TRUE;
}

/**
 * hp_config_set_value:
 * @self: a configuration
 * @path: a dotted path to a field or list item, as for
 *   [method@Hp.Config.set_path_from_string]
 * @value: the new value: one of the field's type, a number of another
 *   type that the field holds exactly, a configuration for a list
 *   item, or a [class@Hp.NamedPlacement] (or %NULL, to remove the entry) for a
 *   sharding config entry
 * @error: return location for a [struct@GLib.Error]
 *
 * Sets the field (or list item) at @path, checking @value as
 * [method@Hp.Config.replace] does: a value out of range or of a wrong
 * type is an error, not clamped or ignored with a warning as
 * [method@GObject.Object.set_property] would.
 *
 * Returns: %TRUE on success; %FALSE with [HP_ERROR_CONFIG][error@Hp.Error] naming the
 *   path otherwise, and then nothing has changed
 *
 * Since: 1.0
 */
gboolean
hp_config_set_value (HpConfig      *self,
                     const gchar   *path,
                     const GValue  *value,
                     GError       **error)
{
  g_auto(PathTarget) target = { NULL, NULL, NULL, 0 };
  g_auto(GValue) converted = G_VALUE_INIT;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (HP_IS_CONFIG (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (G_IS_VALUE (value), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!_hp_error_check_utf8 (path, "config path", HP_ERROR_CONFIG, error) ||
      !resolve_path (self, path, &target, error))
    return FALSE;

  if (target.list != NULL)
    {
      if (!G_VALUE_HOLDS (value, HP_TYPE_CONFIG) || g_value_get_object (value) == NULL)
        {
          _hp_config_set_error (error, path, "a list item must be a configuration, not %s",
                                G_VALUE_HOLDS_OBJECT (value) && g_value_get_object (value) == NULL
                                  ? "null" : G_VALUE_TYPE_NAME (value));
          return FALSE;
        }
      _hp_config_list_set (target.list, target.index, g_value_get_object (value));
      return TRUE;
    }
  if (target.in_sharding)
    {
      GType type = target.member == NULL ? HP_TYPE_LOCAL_MAP_CONFIG : HP_TYPE_NAMED_PLACEMENT;
      GObject *object = G_VALUE_HOLDS_OBJECT (value) ? g_value_get_object (value) : NULL;
      /* gjs passes null as a value holding a NULL gpointer */
      gboolean null = G_VALUE_HOLDS_OBJECT (value) ? object == NULL
                                                   : G_VALUE_HOLDS_POINTER (value) &&
                                                     g_value_get_pointer (value) == NULL;

      if (!null && (object == NULL || !g_type_is_a (G_OBJECT_TYPE (object), type)))
        {
          _hp_config_set_error (error, path, "expected a %s or null, not %s", g_type_name (type),
                                object != NULL ? G_OBJECT_TYPE_NAME (object) : G_VALUE_TYPE_NAME (value));
          return FALSE;
        }
      sharding_set (&target, object);
      return TRUE;
    }

  if (!_hp_config_value_convert (target.pspec, value, &converted, &local_error))
    {
      _hp_config_set_error (error, path, "%s", local_error->message);
      return FALSE;
    }
  g_object_set_property (G_OBJECT (target.config), target.pspec->name, &converted);
  return TRUE;
}
