/* hp-config-json.c: configurations as JSON
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "hp-config-list.h"
#include "hp-config-private.h"
#include "hp-config.h"
#include "hp-error.h"
#include "hp-initializer.h"
#include "hp-json-private.h"
#include "hp-local-map-config.h"
#include "hp-named-placement.h"
#include "hp-param-init.h"
#include "hp-sharding-config.h"
#include "hp-tensor-private.h"

/* ------------------------------------------------------------------ */
/* Writing nodes                                                       */

static JsonNode *
string_node (const gchar *text)
{
  JsonNode *node = json_node_new (JSON_NODE_VALUE);

  json_node_set_string (node, text);
  return node;
}

static JsonNode *
take_string_node (gchar *text)
{
  JsonNode *node = string_node (text);

  g_free (text);
  return node;
}

static JsonNode *
object_node (JsonObject *object)
{
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, object);
  return node;
}

static JsonNode *
array_node (JsonArray *array)
{
  JsonNode *node = json_node_new (JSON_NODE_ARRAY);

  json_node_take_array (node, array);
  return node;
}

static JsonNode *
strv_node (const gchar * const *strv)
{
  JsonArray *array = json_array_new ();

  for (guint i = 0; strv[i] != NULL; i++)
    json_array_add_element (array, string_node (strv[i]));
  return array_node (array);
}

/* A finite double as its own node; an infinite one as "inf" or "-inf" */
static JsonNode *
double_node (gdouble number)
{
  JsonNode *node;

  if (!isfinite (number))
    return take_string_node (_hp_config_format_double (number));
  node = json_node_new (JSON_NODE_VALUE);
  json_node_set_double (node, number);
  return node;
}

static JsonNode *config_to_node (HpConfig *self);

static JsonNode *
named_placement_to_node (HpNamedPlacement *named)
{
  JsonObject *object = json_object_new ();
  g_auto(GStrv) axes = hp_named_placement_get_axes (named);

  for (guint i = 0; axes[i] != NULL; i++)
    json_object_set_member (object, axes[i],
                            take_string_node (hp_placement_to_string (hp_named_placement_get (named, axes[i]))));
  return object_node (object);
}

/* An array of named placements, null for the NULL entries */
static JsonNode *
named_list_to_node (GPtrArray *list)
{
  JsonArray *array = json_array_new ();

  for (guint i = 0; i < list->len; i++)
    {
      HpNamedPlacement *named = g_ptr_array_index (list, i);

      json_array_add_element (array, named != NULL ? named_placement_to_node (named)
                                                   : json_node_new (JSON_NODE_NULL));
    }
  return array_node (array);
}

static JsonNode *
local_map_config_to_node (HpLocalMapConfig *local_map)
{
  JsonObject *object = json_object_new ();
  const gchar *callable_path = hp_local_map_config_get_callable_path (local_map);
  GPtrArray *in_grad = hp_local_map_config_get_in_grad_placements (local_map);

  json_object_set_member (object, "callable-path",
                          callable_path != NULL ? string_node (callable_path)
                                                : json_node_new (JSON_NODE_NULL));
  json_object_set_member (object, "in-placements",
                          named_list_to_node (hp_local_map_config_get_in_placements (local_map)));
  json_object_set_member (object, "out-placements",
                          named_list_to_node (hp_local_map_config_get_out_placements (local_map)));
  json_object_set_member (object, "in-grad-placements",
                          in_grad != NULL ? named_list_to_node (in_grad) : json_node_new (JSON_NODE_NULL));
  return object_node (object);
}

typedef GStrv              (*NamedMapList) (HpShardingConfig *self);
typedef HpNamedPlacement * (*NamedMapGet)  (HpShardingConfig *self,
                                            const gchar      *name);
typedef void               (*NamedMapSet)  (HpShardingConfig *self,
                                            const gchar      *name,
                                            HpNamedPlacement *named);
typedef guint              (*NamedListLength) (HpShardingConfig *self);
typedef HpNamedPlacement * (*NamedListGet)    (HpShardingConfig *self,
                                               guint             index);
typedef void               (*NamedListSet)    (HpShardingConfig *self,
                                               guint             index,
                                               HpNamedPlacement *named);

static JsonNode *
named_map_to_node (HpShardingConfig *sharding,
                   NamedMapList      list,
                   NamedMapGet       get)
{
  JsonObject *object = json_object_new ();
  g_auto(GStrv) names = list (sharding);

  for (guint i = 0; names[i] != NULL; i++)
    json_object_set_member (object, names[i], named_placement_to_node (get (sharding, names[i])));
  return object_node (object);
}

static JsonNode *
output_list_to_node (HpShardingConfig *sharding,
                     NamedListLength   length,
                     NamedListGet      get)
{
  g_autoptr(GPtrArray) list = g_ptr_array_new ();

  for (guint i = 0; i < length (sharding); i++)
    g_ptr_array_add (list, get (sharding, i));
  return named_list_to_node (list);
}

static JsonNode *
sharding_config_to_node (HpShardingConfig *sharding)
{
  JsonObject *object = json_object_new ();
  HpLocalMapConfig *local_map = hp_sharding_config_get_local_map (sharding);

  json_object_set_member (object, "state-shardings",
                          named_map_to_node (sharding, hp_sharding_config_list_state_shardings,
                                             hp_sharding_config_get_state_sharding));
  json_object_set_member (object, "in-src-shardings",
                          named_map_to_node (sharding, hp_sharding_config_list_in_src_shardings,
                                             hp_sharding_config_get_in_src_sharding));
  json_object_set_member (object, "in-dst-shardings",
                          named_map_to_node (sharding, hp_sharding_config_list_in_dst_shardings,
                                             hp_sharding_config_get_in_dst_sharding));
  json_object_set_member (object, "out-src-shardings",
                          output_list_to_node (sharding, hp_sharding_config_get_n_out_src_shardings,
                                               hp_sharding_config_get_out_src_sharding));
  json_object_set_member (object, "out-dst-shardings",
                          output_list_to_node (sharding, hp_sharding_config_get_n_out_dst_shardings,
                                               hp_sharding_config_get_out_dst_sharding));
  json_object_set_member (object, "local-map",
                          local_map != NULL ? local_map_config_to_node (local_map)
                                            : json_node_new (JSON_NODE_NULL));
  return object_node (object);
}

static JsonNode *
param_init_to_node (HpParamInit *param_init)
{
  JsonObject *object = json_object_new ();
  g_auto(GStrv) names = hp_param_init_get_names (param_init);

  for (guint i = 0; names[i] != NULL; i++)
    json_object_set_member (object, names[i],
                            take_string_node (hp_initializer_to_string (hp_param_init_get (param_init, names[i]))));
  return object_node (object);
}

JsonNode *
_hp_config_value_to_json_node (GParamSpec   *pspec,
                               const GValue *value)
{
  JsonNode *node;

  switch (_hp_config_field_kind (pspec))
    {
    case HP_CONFIG_FIELD_BOOLEAN:
      node = json_node_new (JSON_NODE_VALUE);
      json_node_set_boolean (node, g_value_get_boolean (value));
      return node;

    case HP_CONFIG_FIELD_SIGNED:
      node = json_node_new (JSON_NODE_VALUE);
      json_node_set_int (node, _hp_config_value_get_signed (value));
      return node;

    case HP_CONFIG_FIELD_UNSIGNED:
      {
        guint64 number = _hp_config_value_get_unsigned (value);

        /* a JSON reader holds integers as int64: larger ones as text */
        if (number > G_MAXINT64)
          return take_string_node (g_strdup_printf ("%" G_GUINT64_FORMAT, number));
        node = json_node_new (JSON_NODE_VALUE);
        json_node_set_int (node, (gint64) number);
        return node;
      }

    case HP_CONFIG_FIELD_FLOAT:
      {
        gfloat number = g_value_get_float (value);
        g_autofree gchar *text = NULL;

        if (!isfinite (number))
          return double_node (number);
        /* the double of the shortest text of the float, so that the
         * JSON text is that short too */
        text = _hp_config_format_float (number);
        return double_node (g_ascii_strtod (text, NULL));
      }

    case HP_CONFIG_FIELD_DOUBLE:
      return double_node (g_value_get_double (value));

    case HP_CONFIG_FIELD_STRING:
      if (g_value_get_string (value) == NULL)
        return json_node_new (JSON_NODE_NULL);
      return string_node (g_value_get_string (value));

    case HP_CONFIG_FIELD_ENUM:
      return take_string_node (_hp_config_value_dup_enum_nick (value));

    case HP_CONFIG_FIELD_FLAGS:
      {
        g_auto(GStrv) nicks = _hp_config_value_dup_flag_nicks (value);

        return strv_node ((const gchar * const *) nicks);
      }

    case HP_CONFIG_FIELD_STRV:
      if (g_value_get_boxed (value) == NULL)
        return json_node_new (JSON_NODE_NULL);
      return strv_node (g_value_get_boxed (value));

    default:
      break;
    }

  if (g_value_get_object (value) == NULL)
    return json_node_new (JSON_NODE_NULL);

  switch (_hp_config_field_kind (pspec))
    {
    case HP_CONFIG_FIELD_CONFIG:
      return config_to_node (g_value_get_object (value));

    case HP_CONFIG_FIELD_CONFIG_LIST:
      {
        HpConfigList *list = g_value_get_object (value);
        JsonArray *array = json_array_new ();

        for (guint i = 0; i < hp_config_list_get_length (list); i++)
          json_array_add_element (array, config_to_node (hp_config_list_peek (list, i)));
        return array_node (array);
      }

    case HP_CONFIG_FIELD_NAMED_PLACEMENT:
      return named_placement_to_node (g_value_get_object (value));

    case HP_CONFIG_FIELD_SHARDING_CONFIG:
      return sharding_config_to_node (g_value_get_object (value));

    case HP_CONFIG_FIELD_LOCAL_MAP_CONFIG:
      return local_map_config_to_node (g_value_get_object (value));

    case HP_CONFIG_FIELD_PARAM_INIT:
      return param_init_to_node (g_value_get_object (value));

    case HP_CONFIG_FIELD_INITIALIZER:
      return take_string_node (hp_initializer_to_string (g_value_get_object (value)));

    default:
      g_return_val_if_reached (json_node_new (JSON_NODE_NULL));
    }
}

static JsonNode *
config_to_node (HpConfig *self)
{
  JsonObject *object = json_object_new ();
  guint n_fields;
  GParamSpec **fields = _hp_config_type_get_fields (G_OBJECT_TYPE (self), &n_fields);

  json_object_set_member (object, "@type", string_node (G_OBJECT_TYPE_NAME (self)));
  for (guint i = 0; i < n_fields; i++)
    {
      g_auto(GValue) value = G_VALUE_INIT;

      _hp_config_get_field (self, fields[i], &value);
      json_object_set_member (object, fields[i]->name,
                              _hp_config_value_to_json_node (fields[i], &value));
    }
  return object_node (object);
}

/* ------------------------------------------------------------------ */
/* Writing text                                                        */

static void
write_string (GString     *out,
              const gchar *text)
{
  g_autofree gchar *valid = g_utf8_make_valid (text, -1);

  g_string_append_c (out, '"');
  for (const gchar *p = valid; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      switch (c)
        {
        case '"':
          g_string_append (out, "\\\"");
          break;
        case '\\':
          g_string_append (out, "\\\\");
          break;
        case '\b':
          g_string_append (out, "\\b");
          break;
        case '\f':
          g_string_append (out, "\\f");
          break;
        case '\n':
          g_string_append (out, "\\n");
          break;
        case '\r':
          g_string_append (out, "\\r");
          break;
        case '\t':
          g_string_append (out, "\\t");
          break;
        default:
          /* control characters, and what YAML does not take as it is:
           * DEL, the C1 controls, the line and paragraph separators, the
           * byte order mark and the non-characters U+FFFE and U+FFFF */
          if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x2028 || c == 0x2029 ||
              c == 0xfeff || c == 0xfffe || c == 0xffff)
            g_string_append_printf (out, "\\u%04x", c);
          else
            g_string_append_len (out, p, g_utf8_next_char (p) - p);
          break;
        }
    }
  g_string_append_c (out, '"');
}

static void
write_newline (GString *out,
               gboolean pretty,
               guint    depth)
{
  if (!pretty)
    return;
  g_string_append_c (out, '\n');
  for (guint i = 0; i < depth; i++)
    g_string_append (out, "  ");
}

static void
write_node (GString  *out,
            JsonNode *node,
            gboolean  pretty,
            guint     depth)
{
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_NULL:
      g_string_append (out, "null");
      break;

    case JSON_NODE_VALUE:
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_BOOLEAN:
          g_string_append (out, json_node_get_boolean (node) ? "true" : "false");
          break;
        case G_TYPE_INT64:
          g_string_append_printf (out, "%" G_GINT64_FORMAT, json_node_get_int (node));
          break;
        case G_TYPE_DOUBLE:
          {
            g_autofree gchar *text = _hp_config_format_double (json_node_get_double (node));

            g_string_append (out, text);
          }
          break;
        default:
          write_string (out, json_node_get_string (node));
          break;
        }
      break;

    case JSON_NODE_ARRAY:
      {
        JsonArray *array = json_node_get_array (node);
        guint length = json_array_get_length (array);

        g_string_append_c (out, '[');
        for (guint i = 0; i < length; i++)
          {
            if (i > 0)
              g_string_append (out, pretty ? "," : ", ");
            write_newline (out, pretty, depth + 1);
            write_node (out, json_array_get_element (array, i), pretty, depth + 1);
          }
        if (length > 0)
          write_newline (out, pretty, depth);
        g_string_append_c (out, ']');
      }
      break;

    case JSON_NODE_OBJECT:
      {
        JsonObject *object = json_node_get_object (node);
        g_autoptr(GList) members = json_object_get_members (object);

        g_string_append_c (out, '{');
        for (GList *l = members; l != NULL; l = l->next)
          {
            if (l != members)
              g_string_append (out, pretty ? "," : ", ");
            write_newline (out, pretty, depth + 1);
            write_string (out, l->data);
            g_string_append (out, ": ");
            write_node (out, json_object_get_member (object, l->data), pretty, depth + 1);
          }
        if (members != NULL)
          write_newline (out, pretty, depth);
        g_string_append_c (out, '}');
      }
      break;
    }
}

gchar *
_hp_config_json_node_to_string (JsonNode *node,
                                gboolean  pretty)
{
  GString *out = g_string_new (NULL);

  write_node (out, node, pretty, 0);
  return g_string_free (out, FALSE);
}

/**
 * hp_config_to_json_node:
 * @self: a [class@Hp.Config]
 *
 * Gets the JSON form of @self as a tree (see [method@Hp.Config.to_json]).
 *
 * Returns: (transfer full): a new JSON object node
 *
 * Since: 1.0
 */
JsonNode *
hp_config_to_json_node (HpConfig *self)
{
  g_return_val_if_fail (HP_IS_CONFIG (self), NULL);

  return config_to_node (self);
}

/**
 * hp_config_to_json:
 * @self: a [class@Hp.Config]
 * @pretty: whether to write one member per line, indented, rather than
 *   everything on one line
 *
 * Writes @self as a JSON object whose first member, `"@type"`, is the
 * name of its type, followed by every field in field order under its
 * canonical property name (`"n-heads"`), defaults included:
 *
 * - booleans, integers and numbers as JSON scalars; numbers in the
 *   shortest form that reads back to the same bits; `guint64` values
 *   above 2^63 - 1, which JSON readers do not hold as integers, as
 *   strings of decimal digits; the infinities (where a field's range
 *   allows them) as the strings `"inf"` and `"-inf"`;
 * - strings as strings, enums as their nicks, flags as arrays of
 *   nicks, string arrays as arrays of strings;
 * - nested configurations as objects with their own `"@type"`, so that
 *   a field declared with a parent type reads back with the type it
 *   had; lists as arrays of such objects;
 * - named placements as objects from axis to placement
 *   (`{"tp": "S(0)"}`);
 * - sharding configs as objects with all six members:
 *   `"state-shardings"`, `"in-src-shardings"` and `"in-dst-shardings"`
 *   (objects from name to named placement), `"out-src-shardings"` and
 *   `"out-dst-shardings"` (arrays of named placements or `null`) and
 *   `"local-map"` (`null` or a local map config);
 * - local map configs as objects with `"callable-path"`,
 *   `"in-placements"`, `"out-placements"` (arrays of named placements or
 *   `null`) and `"in-grad-placements"` (such an array or `null`);
 * - parameter initialisers as objects from parameter name to the
 *   initialiser's text (`{"weight": "normal(mean=0, std=0.02)"}`),
 *   initialisers as that text;
 * - %NULL strings, string arrays and objects as `null`.
 *
 * The text is also valid YAML: characters YAML does not take in
 * strings are escaped. [ctor@Hp.Config.new_from_json] reads it back to an
 * equal configuration, unless configurations are nested so deep that
 * the JSON has more than 64 levels of objects and arrays, which it
 * refuses ([ctor@Hp.Config.new_from_json_node] has no such limit).
 *
 * Returns: (transfer full): the JSON text
 *
 * Since: 1.0
 */
gchar *
hp_config_to_json (HpConfig *self,
                   gboolean  pretty)
{
  g_autoptr(JsonNode) node = NULL;

  g_return_val_if_fail (HP_IS_CONFIG (self), NULL);

  node = config_to_node (self);
  return _hp_config_json_node_to_string (node, pretty);
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */

static const gchar *
describe_node (JsonNode *node)
{
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_NULL:
      return "null";
    case JSON_NODE_ARRAY:
      return "an array";
    case JSON_NODE_OBJECT:
      return "an object";
    default:
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_BOOLEAN:
          return "a boolean";
        case G_TYPE_INT64:
          return "an integer";
        case G_TYPE_DOUBLE:
          return "a number";
        default:
          return "a string";
        }
    }
}

static gboolean
node_holds (JsonNode *node,
            GType     value_type)
{
  return JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == value_type;
}

static gboolean
wrong_type (const gchar  *path,
            const gchar  *expected,
            JsonNode     *node,
            GError      **error)
{
  _hp_config_set_error (error, path, "expected %s, got %s", expected, describe_node (node));
  return FALSE;
}

static gboolean
read_number (GParamSpec   *pspec,
             JsonNode     *node,
             GValue       *value,
             GError      **error)
{
  HpConfigFieldKind kind = _hp_config_field_kind (pspec);
  gboolean integer_field = kind == HP_CONFIG_FIELD_SIGNED || kind == HP_CONFIG_FIELD_UNSIGNED;
  guint64 big;
  gdouble number;

  if (node_holds (node, G_TYPE_INT64))
    return _hp_config_value_set_int64 (pspec, value, json_node_get_int (node), error);
  if (!integer_field && node_holds (node, G_TYPE_DOUBLE))
    {
      /* json-glib reads a literal beyond the doubles as an infinity */
      if (!isfinite (json_node_get_double (node)))
        {
          g_set_error_literal (error, HP_ERROR, HP_ERROR_CONFIG,
                               "number too large for a double (\"inf\" and \"-inf\" are the infinities)");
          return FALSE;
        }
      return _hp_config_value_set_double (pspec, value, json_node_get_double (node), error);
    }

  if (node_holds (node, G_TYPE_STRING))
    {
      const gchar *text = json_node_get_string (node);

      /* the string forms hp_config_to_json() writes */
      if (kind == HP_CONFIG_FIELD_UNSIGNED &&
          g_ascii_string_to_unsigned (text, 10, (guint64) G_MAXINT64 + 1, G_MAXUINT64, &big, NULL))
        return _hp_config_value_set_uint64 (pspec, value, big, error);
      if (!integer_field && _hp_config_parse_non_finite (text, &number))
        return _hp_config_value_set_double (pspec, value, number, error);
    }

  g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "expected %s, got %s",
               integer_field ? "an integer" : "a number", describe_node (node));
  return FALSE;
}

typedef gboolean (*MemberFunc) (const gchar  *name,
                                JsonNode     *member,
                                const gchar  *member_path,
                                gpointer      data,
                                GError      **error);

/* Calls @func on each member of the object @node, in order: the readers
 * of the maps from a name (an axis, a parameter, an argument) to a
 * value. A node that is not an object is an error naming the @expected
 * JSON, an empty name one naming the @kind of name. */
static gboolean
foreach_member (JsonNode     *node,
                const gchar  *path,
                const gchar  *expected,
                const gchar  *kind,
                MemberFunc    func,
                gpointer      data,
                GError      **error)
{
  g_autoptr(GList) members = NULL;
  JsonObject *object;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return wrong_type (path, expected, node, error);

  object = json_node_get_object (node);
  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    {
      g_autofree gchar *member_path = _hp_config_join_path (path, l->data);

      if (*(const gchar *) l->data == '\0')
        {
          _hp_config_set_error (error, path, "empty %s", kind);
          return FALSE;
        }
      if (!func (l->data, json_object_get_member (object, l->data), member_path, data, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
read_axis_placement (const gchar  *axis,
                     JsonNode     *member,
                     const gchar  *member_path,
                     gpointer      named,
                     GError      **error)
{
  g_autoptr(HpPlacement) placement = NULL;
  g_autoptr(GError) local_error = NULL;

  if (!node_holds (member, G_TYPE_STRING))
    return wrong_type (member_path, "a placement string", member, error);
  placement = hp_placement_new_from_string (json_node_get_string (member), &local_error);
  if (placement == NULL)
    {
      _hp_config_set_error (error, member_path, "%s", local_error->message);
      return FALSE;
    }
  hp_named_placement_set (named, axis, placement);
  return TRUE;
}

static HpNamedPlacement *
named_placement_from_node (JsonNode     *node,
                           const gchar  *path,
                           GError      **error)
{
  g_autoptr(HpNamedPlacement) named = hp_named_placement_new ();

  if (!foreach_member (node, path, "an object from axis name to placement", "axis name",
                       read_axis_placement, named, error))
    return NULL;
  return g_steal_pointer (&named);
}

/* Picks the members of @object named in @names ('_' may stand for
 * '-') into @found; any other member, or one given twice, is an error */
static gboolean
pick_members (JsonObject          *object,
              const gchar         *path,
              const gchar         *type_name,
              const gchar * const *names,
              JsonNode           **found,
              GError             **error)
{
  g_autoptr(GList) members = json_object_get_members (object);

  for (GList *l = members; l != NULL; l = l->next)
    {
      g_autofree gchar *member_path = _hp_config_join_path (path, l->data);
      guint i;

      for (i = 0; names[i] != NULL && !_hp_config_name_matches (names[i], l->data); i++)
        ;
      if (names[i] == NULL)
        {
          _hp_config_set_error (error, member_path, "no field '%s' in %s",
                                (const gchar *) l->data, type_name);
          return FALSE;
        }
      if (found[i] != NULL)
        {
          _hp_config_set_error (error, member_path, "field '%s' is given twice", names[i]);
          return FALSE;
        }
      found[i] = json_object_get_member (object, l->data);
    }
  return TRUE;
}

/* An array of named placements or nulls; a null array gives NULL when
 * @nullable, with no error */
static gboolean
named_list_from_node (JsonNode      *node,
                      const gchar   *path,
                      gboolean       nullable,
                      GPtrArray    **list,
                      GError       **error)
{
  g_autoptr(GPtrArray) out = NULL;
  JsonArray *array;

  *list = NULL;
  if (nullable && JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return wrong_type (path, nullable ? "an array of named placements or null"
                                      : "an array of named placements", node, error);

  array = json_node_get_array (node);
  out = g_ptr_array_new_full (json_array_get_length (array), _hp_object_unref_nullable);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);
      g_autofree gchar *element_path = g_strdup_printf ("%s.%u", path, i);
      HpNamedPlacement *named = NULL;

      if (!JSON_NODE_HOLDS_NULL (element))
        {
          named = named_placement_from_node (element, element_path, error);
          if (named == NULL)
            return FALSE;
        }
      g_ptr_array_add (out, named);
    }
  *list = g_steal_pointer (&out);
  return TRUE;
}

static HpLocalMapConfig *
local_map_config_from_node (JsonNode     *node,
                            const gchar  *path,
                            GError      **error)
{
  static const gchar * const names[] = {
    "callable-path", "in-placements", "out-placements", "in-grad-placements", NULL
  };
  JsonNode *found[G_N_ELEMENTS (names)] = { NULL };
  g_autoptr(HpLocalMapConfig) local_map = NULL;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      wrong_type (path, "an object for HpLocalMapConfig", node, error);
      return NULL;
    }
  if (!pick_members (json_node_get_object (node), path, "HpLocalMapConfig", names, found, error))
    return NULL;

  local_map = hp_local_map_config_new (NULL);
  if (found[0] != NULL && !JSON_NODE_HOLDS_NULL (found[0]))
    {
      if (!node_holds (found[0], G_TYPE_STRING))
        {
          g_autofree gchar *member_path = _hp_config_join_path (path, names[0]);

          wrong_type (member_path, "a string", found[0], error);
          return NULL;
        }
      hp_local_map_config_set_callable_path (local_map, json_node_get_string (found[0]));
    }
  for (guint i = 1; i < 4; i++)
    {
      g_autofree gchar *member_path = _hp_config_join_path (path, names[i]);
      g_autoptr(GPtrArray) list = NULL;

      if (found[i] == NULL)
        continue;
      if (!named_list_from_node (found[i], member_path, i == 3, &list, error))
        return NULL;
      if (i == 1)
        hp_local_map_config_set_in_placements (local_map, list);
      else if (i == 2)
        hp_local_map_config_set_out_placements (local_map, list);
      else
        hp_local_map_config_set_in_grad_placements (local_map, list);
    }
  return g_steal_pointer (&local_map);
}

typedef struct
{
  HpShardingConfig *sharding;
  NamedMapSet set;
} NamedMapTarget;

static gboolean
read_named_map_entry (const gchar  *name,
                      JsonNode     *member,
                      const gchar  *member_path,
                      gpointer      data,
                      GError      **error)
{
  NamedMapTarget *target = data;
  g_autoptr(HpNamedPlacement) named = named_placement_from_node (member, member_path, error);

  if (named == NULL)
    return FALSE;
  target->set (target->sharding, name, named);
  return TRUE;
}

static gboolean
named_map_from_node (JsonNode          *node,
                     const gchar       *path,
                     HpShardingConfig  *sharding,
                     NamedMapSet        set,
                     GError           **error)
{
  NamedMapTarget target = { sharding, set };

  return foreach_member (node, path, "an object from name to named placement", "name",
                         read_named_map_entry, &target, error);
}

static HpShardingConfig *
sharding_config_from_node (JsonNode     *node,
                           const gchar  *path,
                           GError      **error)
{
  static const gchar * const names[] = {
    "state-shardings", "in-src-shardings", "in-dst-shardings",
    "out-src-shardings", "out-dst-shardings", "local-map", NULL
  };
  static const NamedMapSet map_setters[] = {
    hp_sharding_config_set_state_sharding,
    hp_sharding_config_set_in_src_sharding,
    hp_sharding_config_set_in_dst_sharding,
  };
  static const NamedListSet list_setters[] = {
    hp_sharding_config_set_out_src_sharding,
    hp_sharding_config_set_out_dst_sharding,
  };
  JsonNode *found[G_N_ELEMENTS (names)] = { NULL };
  g_autoptr(HpShardingConfig) sharding = NULL;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      wrong_type (path, "an object for HpShardingConfig", node, error);
      return NULL;
    }
  if (!pick_members (json_node_get_object (node), path, "HpShardingConfig", names, found, error))
    return NULL;

  sharding = hp_sharding_config_new ();
  for (guint i = 0; i < G_N_ELEMENTS (map_setters); i++)
    {
      g_autofree gchar *member_path = _hp_config_join_path (path, names[i]);

      if (found[i] != NULL && !named_map_from_node (found[i], member_path, sharding, map_setters[i], error))
        return NULL;
    }
  for (guint i = 0; i < G_N_ELEMENTS (list_setters); i++)
    {
      JsonNode *member = found[G_N_ELEMENTS (map_setters) + i];
      g_autofree gchar *member_path = _hp_config_join_path (path, names[G_N_ELEMENTS (map_setters) + i]);
      g_autoptr(GPtrArray) list = NULL;

      if (member == NULL)
        continue;
      if (!named_list_from_node (member, member_path, FALSE, &list, error))
        return NULL;
      for (guint j = 0; j < list->len; j++)
        if (g_ptr_array_index (list, j) != NULL)
          list_setters[i] (sharding, j, g_ptr_array_index (list, j));
    }
  if (found[5] != NULL && !JSON_NODE_HOLDS_NULL (found[5]))
    {
      g_autofree gchar *member_path = _hp_config_join_path (path, names[5]);
      g_autoptr(HpLocalMapConfig) local_map = local_map_config_from_node (found[5], member_path, error);

      if (local_map == NULL)
        return NULL;
      hp_sharding_config_set_local_map (sharding, local_map);
    }
  return g_steal_pointer (&sharding);
}

static HpInitializer *
initializer_from_node (JsonNode     *node,
                       const gchar  *path,
                       GError      **error)
{
  g_autoptr(GError) local_error = NULL;
  HpInitializer *initializer;

  if (!node_holds (node, G_TYPE_STRING))
    {
      wrong_type (path, "an initializer string", node, error);
      return NULL;
    }
  initializer = hp_initializer_new_from_string (json_node_get_string (node), &local_error);
  if (initializer == NULL)
    _hp_config_set_error (error, path, "%s", local_error->message);
  return initializer;
}

static gboolean
read_param_initializer (const gchar  *name,
                        JsonNode     *member,
                        const gchar  *member_path,
                        gpointer      param_init,
                        GError      **error)
{
  g_autoptr(HpInitializer) initializer = initializer_from_node (member, member_path, error);

  if (initializer == NULL)
    return FALSE;
  hp_param_init_set (param_init, name, initializer);
  return TRUE;
}

static HpParamInit *
param_init_from_node (JsonNode     *node,
                      const gchar  *path,
                      GError      **error)
{
  g_autoptr(HpParamInit) param_init = hp_param_init_new ();

  if (!foreach_member (node, path, "an object from parameter name to initializer", "parameter name",
                       read_param_initializer, param_init, error))
    return NULL;
  return g_steal_pointer (&param_init);
}

static gboolean
read_enum (GParamSpec   *pspec,
           JsonNode     *node,
           const gchar  *path,
           GValue       *value,
           GError      **error)
{
  g_autoptr(GError) local_error = NULL;

  if (!node_holds (node, G_TYPE_STRING))
    return wrong_type (path, "a string", node, error);
  if (!_hp_config_value_set_enum_nick (pspec, json_node_get_string (node), FALSE, value, &local_error))
    {
      _hp_config_set_error (error, path, "%s", local_error->message);
      return FALSE;
    }
  return TRUE;
}

static gboolean
read_flags (GParamSpec   *pspec,
            JsonNode     *node,
            const gchar  *path,
            GValue       *value,
            GError      **error)
{
  g_autoptr(GFlagsClass) klass = g_type_class_ref (G_PARAM_SPEC_VALUE_TYPE (pspec));
  JsonArray *array;
  guint flags = 0;

  if (!JSON_NODE_HOLDS_ARRAY (node))
    return wrong_type (path, "an array of flag nicks", node, error);

  array = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);
      g_autofree gchar *element_path = g_strdup_printf ("%s.%u", path, i);

      if (!node_holds (element, G_TYPE_STRING))
        return wrong_type (element_path, "a string", element, error);
      if (!_hp_config_flags_from_nick (klass, json_node_get_string (element), &flags))
        {
          _hp_config_set_error (error, element_path, "unknown flag '%s' of %s",
                                json_node_get_string (element),
                                g_type_name (G_PARAM_SPEC_VALUE_TYPE (pspec)));
          return FALSE;
        }
    }
  g_value_set_flags (value, flags);
  return TRUE;
}

static gboolean
read_strv (JsonNode     *node,
           const gchar  *path,
           GValue       *value,
           GError      **error)
{
  g_autoptr(GStrvBuilder) builder = NULL;
  JsonArray *array;

  if (!JSON_NODE_HOLDS_ARRAY (node))
    return wrong_type (path, "an array of strings", node, error);

  builder = g_strv_builder_new ();
  array = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);

      if (!node_holds (element, G_TYPE_STRING))
        {
          g_autofree gchar *element_path = g_strdup_printf ("%s.%u", path, i);

          return wrong_type (element_path, "a string", element, error);
        }
      g_strv_builder_add (builder, json_node_get_string (element));
    }
  g_value_take_boxed (value, g_strv_builder_end (builder));
  return TRUE;
}

static HpConfigList *
config_list_from_node (JsonNode     *node,
                       const gchar  *path,
                       GError      **error)
{
  g_autoptr(HpConfigList) list = NULL;
  JsonArray *array;

  if (!JSON_NODE_HOLDS_ARRAY (node))
    {
      wrong_type (path, "an array of configurations", node, error);
      return NULL;
    }

  list = hp_config_list_new ();
  array = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      g_autofree gchar *item_path = g_strdup_printf ("%s.%u", path, i);
      g_autoptr(HpConfig) item = _hp_config_from_json_node (HP_TYPE_CONFIG,
                                                            json_array_get_element (array, i),
                                                            item_path, error);

      if (item == NULL)
        return NULL;
      hp_config_list_append (list, item);
    }
  return g_steal_pointer (&list);
}

/* The value of an object field, never NULL without an error */
static GObject *
object_from_node (GParamSpec   *pspec,
                  JsonNode     *node,
                  const gchar  *path,
                  GError      **error)
{
  switch (_hp_config_field_kind (pspec))
    {
    case HP_CONFIG_FIELD_CONFIG:
      return G_OBJECT (_hp_config_from_json_node (G_PARAM_SPEC_VALUE_TYPE (pspec), node, path, error));
    case HP_CONFIG_FIELD_CONFIG_LIST:
      return G_OBJECT (config_list_from_node (node, path, error));
    case HP_CONFIG_FIELD_NAMED_PLACEMENT:
      return G_OBJECT (named_placement_from_node (node, path, error));
    case HP_CONFIG_FIELD_SHARDING_CONFIG:
      return G_OBJECT (sharding_config_from_node (node, path, error));
    case HP_CONFIG_FIELD_LOCAL_MAP_CONFIG:
      return G_OBJECT (local_map_config_from_node (node, path, error));
    case HP_CONFIG_FIELD_PARAM_INIT:
      return G_OBJECT (param_init_from_node (node, path, error));
    case HP_CONFIG_FIELD_INITIALIZER:
      return G_OBJECT (initializer_from_node (node, path, error));
    default:
      g_return_val_if_reached (NULL);
    }
}

gboolean
_hp_config_value_from_json_node (GParamSpec   *pspec,
                                 JsonNode     *node,
                                 const gchar  *path,
                                 GValue       *value,
                                 GError      **error)
{
  g_autoptr(GError) local_error = NULL;
  HpConfigFieldKind kind = _hp_config_field_kind (pspec);
  gboolean ok = TRUE;

  g_value_init (value, G_PARAM_SPEC_VALUE_TYPE (pspec));

  if (JSON_NODE_HOLDS_NULL (node) && _hp_config_field_is_nullable (pspec))
    return TRUE;

  switch (kind)
    {
    case HP_CONFIG_FIELD_BOOLEAN:
      if (node_holds (node, G_TYPE_BOOLEAN))
        g_value_set_boolean (value, json_node_get_boolean (node));
      else
        ok = wrong_type (path, "a boolean", node, error);
      break;

    case HP_CONFIG_FIELD_SIGNED:
    case HP_CONFIG_FIELD_UNSIGNED:
    case HP_CONFIG_FIELD_FLOAT:
    case HP_CONFIG_FIELD_DOUBLE:
      if (!read_number (pspec, node, value, &local_error))
        {
          _hp_config_set_error (error, path, "%s", local_error->message);
          ok = FALSE;
        }
      break;

    case HP_CONFIG_FIELD_STRING:
      if (node_holds (node, G_TYPE_STRING))
        g_value_set_string (value, json_node_get_string (node));
      else
        ok = wrong_type (path, "a string", node, error);
      break;

    case HP_CONFIG_FIELD_ENUM:
      ok = read_enum (pspec, node, path, value, error);
      break;

    case HP_CONFIG_FIELD_FLAGS:
      ok = read_flags (pspec, node, path, value, error);
      break;

    case HP_CONFIG_FIELD_STRV:
      ok = read_strv (node, path, value, error);
      break;

    default:  /* the object fields */
      {
        g_autoptr(GObject) object = object_from_node (pspec, node, path, error);

        ok = object != NULL;
        g_value_set_object (value, object);
      }
      break;
    }

  if (ok && !_hp_config_value_validate (pspec, value, &local_error))
    {
      _hp_config_set_error (error, path, "%s", local_error->message);
      ok = FALSE;
    }
  if (!ok)
    g_value_unset (value);
  return ok;
}

gchar *
_hp_config_unknown_type_hint (const gchar *name)
{
  g_auto(GStrv) parts = NULL;
  g_autoptr(GString) module = NULL;

  /* gjs names the classes it registers Gjs_ClassName */
  if (g_str_has_prefix (name, "Gjs_"))
    return g_strdup (", defined in JavaScript: import its module "
                     "(gjs -m hp-config.js --import FILE)");
  if (strchr (name, '+') == NULL)
    return g_strdup (": load the library or introspection namespace that defines it "
                     "(hp-config --require NAMESPACE-VERSION)");

  /* "pkg+models+Linear+Config": the module's dotted name, then the
   * qualified name of the class; module names are in lower case and
   * class names are capitalised */
  parts = g_strsplit (name, "+", -1);
  module = g_string_new (parts[0]);
  for (guint i = 1; parts[i + 1] != NULL && g_ascii_islower (parts[i][0]); i++)
    g_string_append_printf (module, ".%s", parts[i]);
  if (g_str_equal (module->str, "__main__"))
    return g_strdup (", defined in a Python script run as the main program: define it in a module "
                     "and import that (python3 -m hp_config --import MODULE)");
  return g_strdup_printf (", defined in the Python module '%s': import it "
                          "(python3 -m hp_config --import %s)", module->str, module->str);
}

/* The type named by the "@type" member of @object, or @expected_type
 * without one */
static GType
read_type (JsonObject   *object,
           GType         expected_type,
           const gchar  *path,
           GError      **error)
{
  g_autofree gchar *type_path = _hp_config_join_path (path, "@type");
  JsonNode *node = json_object_get_member (object, "@type");
  GType type = expected_type;

  if (node != NULL)
    {
      const gchar *name;

      if (!node_holds (node, G_TYPE_STRING))
        {
          wrong_type (type_path, "a type name", node, error);
          return G_TYPE_INVALID;
        }
      name = json_node_get_string (node);
      /* a base class makes sure, in its class_init, that the subclasses
       * its library defines are registered */
      g_type_class_unref (g_type_class_ref (expected_type));
      type = g_type_from_name (name);
      if (type == G_TYPE_INVALID)
        {
          g_autofree gchar *hint = _hp_config_unknown_type_hint (name);

          _hp_config_set_error (error, type_path, "unknown type '%s'%s", name, hint);
          return G_TYPE_INVALID;
        }
      if (!g_type_is_a (type, expected_type))
        {
          _hp_config_set_error (error, type_path, "%s is not a %s", name, g_type_name (expected_type));
          return G_TYPE_INVALID;
        }
    }

  if (G_TYPE_IS_ABSTRACT (type))
    {
      _hp_config_set_error (error, type_path, "%s is abstract; name a concrete type",
                            g_type_name (type));
      return G_TYPE_INVALID;
    }
  return type;
}

HpConfig *
_hp_config_from_json_node (GType         expected_type,
                           JsonNode     *node,
                           const gchar  *path,
                           GError      **error)
{
  g_autoptr(GList) members = NULL;
  g_autofree const gchar **names = NULL;
  g_autofree gboolean *seen = NULL;
  g_autoptr(GArray) values = NULL;
  GParamSpec **fields;
  JsonObject *object;
  guint n_fields;
  GType type;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_autofree gchar *expected = g_strdup_printf ("an object for %s", g_type_name (expected_type));

      wrong_type (path, expected, node, error);
      return NULL;
    }

  object = json_node_get_object (node);
  type = read_type (object, expected_type, path, error);
  if (type == G_TYPE_INVALID)
    return NULL;

  fields = _hp_config_type_get_fields (type, &n_fields);
  names = g_new0 (const gchar *, n_fields + 1);
  seen = g_new0 (gboolean, n_fields);
  values = _hp_config_value_array_new (n_fields);

  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    {
      const gchar *member = l->data;
      g_autofree gchar *member_path = _hp_config_join_path (path, member);
      GValue value = G_VALUE_INIT;
      GParamSpec *pspec;
      guint index;

      if (g_str_equal (member, "@type"))
        continue;

      pspec = _hp_config_type_find_field (type, member);
      if (pspec == NULL)
        {
          _hp_config_set_error (error, member_path, "no field '%s' in %s", member, g_type_name (type));
          return NULL;
        }
      for (index = 0; fields[index] != pspec; index++)
        ;
      if (seen[index])
        {
          _hp_config_set_error (error, member_path, "field '%s' is given twice", pspec->name);
          return NULL;
        }
      seen[index] = TRUE;

      if (!_hp_config_value_from_json_node (pspec, json_object_get_member (object, member),
                                            member_path, &value, error))
        return NULL;
      names[values->len] = pspec->name;
      g_array_append_val (values, value);
    }

  return HP_CONFIG (g_object_new_with_properties (type, values->len, names,
                                                  (const GValue *) values->data));
}

/* Configuration text is read strictly (hp-json.c), so that a file
 * means one thing: json-glib alone would take comments, keep the last
 * of two members of one name and the first of two documents, wrap an
 * integer beyond 64 bits and decode a lone surrogate escape into a
 * string that is not UTF-8 */
JsonNode *
_hp_config_json_parse (const gchar  *text,
                       GError      **error)
{
  return _hp_json_parse_strict (text, strlen (text), error);
}

/**
 * hp_config_new_from_json:
 * @config_type: the type of configuration expected (a subtype of
 *   [class@Hp.Config])
 * @json: JSON text, as [method@Hp.Config.to_json] writes it
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads a configuration from JSON text (see
 * [ctor@Hp.Config.new_from_json_node] for the rules).
 *
 * The text must be one strict JSON value (RFC 8259), as
 * [method@Hp.Config.to_json] writes it: comments, single quotes, a member
 * given twice in one object, data after the value, an integer literal
 * beyond 64 bits, an unpaired surrogate escape or `\u0000` in a
 * string, and nesting deeper than 64 objects and arrays are errors
 * (`not valid JSON: unexpected character '/' at byte 0`), as is text
 * that is not UTF-8 (`not valid UTF-8 at byte 12`).
 *
 * Returns: (transfer full): a new configuration of @config_type or a
 *   subtype, or %NULL with [HP_ERROR_FORMAT][error@Hp.Error] when @json is not strict
 *   JSON, or with [HP_ERROR_CONFIG][error@Hp.Error] as for
 *   [ctor@Hp.Config.new_from_json_node]
 *
 * Since: 1.0
 */
HpConfig *
hp_config_new_from_json (GType         config_type,
                         const gchar  *json,
                         GError      **error)
{
  g_autoptr(JsonNode) node = NULL;

  g_return_val_if_fail (g_type_is_a (config_type, HP_TYPE_CONFIG), NULL);
  g_return_val_if_fail (json != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  node = _hp_config_json_parse (json, error);
  if (node == NULL)
    return NULL;
  return _hp_config_from_json_node (config_type, node, NULL, error);
}

/**
 * hp_config_new_from_json_node:
 * @config_type: the type of configuration expected (a subtype of
 *   [class@Hp.Config])
 * @node: a JSON object node, as [method@Hp.Config.to_json_node] makes it
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads a configuration from the JSON form [method@Hp.Config.to_json]
 * describes. The `"@type"` member, when there is one, names the type
 * to make, which must be @config_type or a subtype of it and known to
 * the type system (a C type is once its get_type function has run);
 * without it, @config_type is made (it must not be abstract then). The same holds
 * for nested configurations, with the type of their field. Fields
 * missing from the JSON keep their defaults; member names may use `_`
 * for `-`.
 *
 * Reading is strict: a member that is not a field, a value of the
 * wrong JSON type, a value out of the field's range, an unknown or
 * unrelated `"@type"` and a placement or initialiser that does not
 * parse are errors,
 * whose message starts with the dotted path of the member
 * (`layers.1.n-heads: value 0 out of range [1, 1024]`).
 *
 * Returns: (transfer full): a new configuration of @config_type or a
 *   subtype, or %NULL with [HP_ERROR_CONFIG][error@Hp.Error]
 *
 * Since: 1.0
 */
HpConfig *
hp_config_new_from_json_node (GType         config_type,
                              JsonNode     *node,
                              GError      **error)
{
  g_return_val_if_fail (g_type_is_a (config_type, HP_TYPE_CONFIG), NULL);
  g_return_val_if_fail (node != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return _hp_config_from_json_node (config_type, node, NULL, error);
}

GObject *
_hp_config_object_deep_copy (GObject *object)
{
  if (HP_IS_CONFIG_LIST (object))
    {
      HpConfigList *list = HP_CONFIG_LIST (object);
      HpConfigList *copy = hp_config_list_new ();

      for (guint i = 0; i < hp_config_list_get_length (list); i++)
        {
          g_autoptr(GObject) item = _hp_config_object_deep_copy (G_OBJECT (hp_config_list_peek (list, i)));

          hp_config_list_append (copy, HP_CONFIG (item));
        }
      return G_OBJECT (copy);
    }
  else
    {
      g_autoptr(JsonNode) node = config_to_node (HP_CONFIG (object));
      g_autoptr(GError) error = NULL;
      HpConfig *copy = _hp_config_from_json_node (G_OBJECT_TYPE (object), node, "", &error);

      /* what a configuration writes it reads back */
      if (copy == NULL)
        g_critical ("%s: %s does not read back its own JSON: %s", G_STRFUNC,
                    G_OBJECT_TYPE_NAME (object), error->message);
      return G_OBJECT (copy);
    }
}
