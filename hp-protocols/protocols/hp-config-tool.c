/* hp-config-tool.c: lists, shows, makes, edits, checks and compares
 * configurations from the command line
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hp-config-list.h"
#include "hp-config-private.h"
#include "hp-config-tool.h"
#include "hp-config.h"
#include "hp-error.h"
#include "hp-sharding-config.h"

/**
 * HpConfigTool:
 *
 * The `hp-config` command line: it lists, shows, makes, edits, checks
 * and compares the JSON files of configurations ([class@Hp.Config]) of
 * every type registered in the process, whatever language defined it.
 *
 * Everything it knows about a configuration type comes from the type
 * system: its fields, their types, defaults, ranges and descriptions
 * from their param specs, the checks across fields from
 * [vfunc@Hp.Config.validate]. How the types get registered is up to the
 * program that runs the tool, through load options
 * ([method@Hp.ConfigTool.add_load_option]): the `hp-config` program
 * loads introspected libraries (`--require NAMESPACE-VERSION`),
 * `python3 -m hp_config` imports Python modules too (`--import MODULE`),
 * `gjs -m hp-config.js` ES modules (`--import FILE`), and all run the
 * same commands, with the same output and exit statuses:
 *
 * ```sh
 * hp-config show HpDecoderConfig
 * hp-config new HpDecoderConfig --set dim=128 -o model.json
 * hp-config set model.json n-heads=8 sharding-config.state-shardings.weight=tp:S(1)
 * hp-config validate model.json
 * python3 -m hp_config --import models diff model.json other.json
 * ```
 *
 * The tool writes to the standard output and the standard error of the
 * process (errors through [func@GLib.printerr]), and flushes the standard
 * output before each error line and before [method@Hp.ConfigTool.run]
 * returns, so that a program written in another language gets the
 * output in order if it flushes its own streams before the call.
 *
 * Since: 1.0
 */

struct _HpConfigTool
{
  GObject parent_instance;

  gchar *description;
  GPtrArray *load_options;   /* LoadOption * */
};

G_DEFINE_FINAL_TYPE (HpConfigTool, hp_config_tool, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_DESCRIPTION,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* The program the messages and --help name */
#define PROGRAM_NAME "hp-config"

/* Exit statuses (diff uses 1 for "the files differ" and 2 for trouble,
 * as diff(1) does) */
enum {
  STATUS_OK = 0,
  STATUS_FAILURE = 1,
  STATUS_USAGE = 2,
};

typedef struct
{
  gchar *long_name;
  gchar short_name;
  gchar *description;
  gchar *arg_description;
  HpConfigToolLoadFunc func;
  gpointer user_data;
  GDestroyNotify destroy;
} LoadOption;

static void
load_option_free (LoadOption *option)
{
  if (option->destroy != NULL)
    option->destroy (option->user_data);
  g_free (option->long_name);
  g_free (option->description);
  g_free (option->arg_description);
  g_free (option);
}

/* What one run of the tool has read from its command line */
typedef struct
{
  HpConfigTool *tool;
  GPtrArray *load_values;    /* per load option, a NULL-terminated GPtrArray of values */
  gboolean show_help;
  gboolean show_version;
  gchar **set_options;       /* new --set */
  gchar *output_file;        /* new -o */
} Run;

static void
run_clear (Run *run)
{
  g_clear_pointer (&run->load_values, g_ptr_array_unref);
  g_clear_pointer (&run->set_options, g_strfreev);
  g_clear_pointer (&run->output_file, g_free);
}

/* Runs a command on its positional arguments; gives the exit status, or
 * -1 with @error set (in G_OPTION_ERROR for a usage error) */
typedef gint (*CommandFunc) (Run     *run,
                             gchar  **args,
                             guint    n_args,
                             GError **error);

typedef struct
{
  const gchar *name;
  const gchar *parameters;      /* the positional arguments, for --help */
  const gchar *summary;         /* one line, for hp-config --help */
  const gchar *description;     /* the rest of its --help */
  gboolean takes_new_options;   /* --set and -o */
  guint min_args;
  guint max_args;
  CommandFunc run;
  gint error_status;            /* the exit status of an error that is not a usage error */
} Command;

/* ------------------------------------------------------------------ */
/* Output                                                              */

static void
print_text (const gchar *text)
{
  fputs (text, stdout);
}

/* An error that is not a usage error: one line on the standard error,
 * after what the standard output has so far */
static void
print_error (const GError *error)
{
  fflush (stdout);
  g_printerr ("%s: %s\n", g_get_prgname (), error->message);
}

static void
set_usage_error (GError      **error,
                 const gchar  *format,
                 ...) G_GNUC_PRINTF (2, 3);

static void
set_usage_error (GError      **error,
                 const gchar  *format,
                 ...)
{
  g_autofree gchar *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, message);
}

/* ------------------------------------------------------------------ */
/* Configuration types                                                 */

static void
collect_concrete_types (GType      type,
                        GPtrArray *names)
{
  guint n_children;
  g_autofree GType *children = g_type_children (type, &n_children);

  if (!G_TYPE_IS_ABSTRACT (type))
    g_ptr_array_add (names, (gpointer) g_type_name (type));
  for (guint i = 0; i < n_children; i++)
    collect_concrete_types (children[i], names);
}

static gint
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* The names of @type and its registered subtypes that are not abstract,
 * sorted, in a NULL-terminated array */
static GPtrArray *
concrete_types (GType type)
{
  GPtrArray *names = g_ptr_array_new_null_terminated (16, NULL, TRUE);

  collect_concrete_types (type, names);
  g_ptr_array_sort (names, compare_names);
  return names;
}

/* The concrete configuration type named @name */
static GType
lookup_config_type (const gchar  *name,
                    GError      **error)
{
  GType type = g_type_from_name (name);
  g_autoptr(GPtrArray) subtypes = NULL;
  g_autofree gchar *list = NULL;

  if (type == G_TYPE_INVALID)
    {
      g_autofree gchar *hint = _hp_config_unknown_type_hint (name);

      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "no configuration type named '%s' (hp-config types lists them)%s", name, hint);
      return G_TYPE_INVALID;
    }
  if (!g_type_is_a (type, HP_TYPE_CONFIG))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "%s is not a configuration type (not derived from %s)",
                   name, g_type_name (HP_TYPE_CONFIG));
      return G_TYPE_INVALID;
    }
  if (!G_TYPE_IS_ABSTRACT (type))
    return type;

  subtypes = concrete_types (type);
  if (subtypes->len == 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "%s is abstract and has no concrete subtype", name);
      return G_TYPE_INVALID;
    }
  list = g_strjoinv (", ", (gchar **) subtypes->pdata);
  g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "%s is abstract; name one of %s", name, list);
  return G_TYPE_INVALID;
}

/* ------------------------------------------------------------------ */
/* Files                                                               */

/* Reads a configuration file strictly; its type is the one its "@type"
 * member names */
static HpConfig *
read_config_file (const gchar  *filename,
                  GError      **error)
{
  g_autofree gchar *text = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) local_error = NULL;
  HpConfig *config;

  if (!g_file_get_contents (filename, &text, NULL, error))
    return NULL;

  node = _hp_config_json_parse (text, &local_error);
  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node) &&
      !json_object_has_member (json_node_get_object (node), "@type"))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "%s: no \"@type\" member naming the configuration type", filename);
      return NULL;
    }
  if (node != NULL)
    {
      config = _hp_config_from_json_node (HP_TYPE_CONFIG, node, NULL, &local_error);
      if (config != NULL)
        return config;
    }
  g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "%s: ", filename);
  return NULL;
}

/* Writes @config as pretty JSON to @filename atomically, or to the
 * standard output when @filename is NULL */
static gboolean
write_config (HpConfig     *config,
              const gchar  *filename,
              GError      **error)
{
  g_autofree gchar *json = hp_config_to_json (config, TRUE);
  g_autofree gchar *text = g_strconcat (json, "\n", NULL);

  if (filename == NULL)
    {
      print_text (text);
      return TRUE;
    }
  return g_file_set_contents (filename, text, -1, error);
}

/* Checks that every item of @assignments is PATH=VALUE */
static gboolean
check_assignments (gchar   **assignments,
                   guint     n_assignments,
                   GError  **error)
{
  for (guint i = 0; i < n_assignments; i++)
    {
      const gchar *equals = strchr (assignments[i], '=');

      if (equals == NULL || equals == assignments[i])
        {
          set_usage_error (error, "expected PATH=VALUE, got '%s'", assignments[i]);
          return FALSE;
        }
    }
  return TRUE;
}

/* Applies PATH=VALUE items in order; the error names the path */
static gboolean
apply_assignments (HpConfig  *config,
                   gchar    **assignments,
                   guint      n_assignments,
                   GError   **error)
{
  for (guint i = 0; i < n_assignments; i++)
    {
      const gchar *equals = strchr (assignments[i], '=');
      g_autofree gchar *path = g_strndup (assignments[i], equals - assignments[i]);

      if (!hp_config_set_path_from_string (config, path, equals + 1, error))
        return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* hp-config types                                                     */

static gint
run_types (Run     *run,
           gchar  **args,
           guint    n_args,
           GError **error)
{
  g_autoptr(GPtrArray) names = concrete_types (HP_TYPE_CONFIG);

  for (guint i = 0; i < names->len; i++)
    printf ("%s\n", (const gchar *) g_ptr_array_index (names, i));
  return STATUS_OK;
}

/* ------------------------------------------------------------------ */
/* hp-config show                                                      */

static const gchar *
type_label (GType type)
{
  if (type == G_TYPE_STRV)
    return "string list";
  switch (G_TYPE_FUNDAMENTAL (type))
    {
    case G_TYPE_BOOLEAN:
      return "boolean";
    case G_TYPE_INT:
      return "int";
    case G_TYPE_UINT:
      return "uint";
    case G_TYPE_LONG:
      return "long";
    case G_TYPE_ULONG:
      return "ulong";
    case G_TYPE_INT64:
      return "int64";
    case G_TYPE_UINT64:
      return "uint64";
    case G_TYPE_FLOAT:
      return "float";
    case G_TYPE_DOUBLE:
      return "double";
    case G_TYPE_STRING:
      return "string";
    default:
      return g_type_name (type);
    }
}

/* The shortest decimal form of @number that reads back to it (to the
 * same float when @single), with no ".0" for a whole number as a bound
 * of a range reads best */
static gchar *
format_bound (gdouble  number,
              gboolean single)
{
  gchar buffer[G_ASCII_DTOSTR_BUF_SIZE];
  gchar format[8];

  if (isinf (number))
    return g_strdup (number > 0 ? "inf" : "-inf");
  for (gint digits = 1; digits <= 17; digits++)
    {
      gdouble back;

      g_snprintf (format, sizeof format, "%%.%dg", digits);
      g_ascii_formatd (buffer, sizeof buffer, format, number);
      back = g_ascii_strtod (buffer, NULL);
      if (single ? (gfloat) back == (gfloat) number : back == number)
        break;
    }
  return g_strdup (buffer);
}

/* ", range [a, b]", ", >= a", ", <= b", or nothing for the bounds that
 * are NULL (the limits of the type) */
static void
append_bounds (GString     *out,
               const gchar *minimum,
               const gchar *maximum)
{
  if (minimum != NULL && maximum != NULL)
    g_string_append_printf (out, ", range [%s, %s]", minimum, maximum);
  else if (minimum != NULL)
    g_string_append_printf (out, ", >= %s", minimum);
  else if (maximum != NULL)
    g_string_append_printf (out, ", <= %s", maximum);
}

static void
append_signed_bounds (GString *out,
                      gint64   minimum,
                      gint64   maximum,
                      gint64   lowest,
                      gint64   highest)
{
  g_autofree gchar *low = minimum > lowest ? g_strdup_printf ("%" G_GINT64_FORMAT, minimum) : NULL;
  g_autofree gchar *high = maximum < highest ? g_strdup_printf ("%" G_GINT64_FORMAT, maximum) : NULL;

  append_bounds (out, low, high);
}

static void
append_unsigned_bounds (GString *out,
                        guint64  minimum,
                        guint64  maximum,
                        guint64  highest)
{
  g_autofree gchar *low = minimum > 0 ? g_strdup_printf ("%" G_GUINT64_FORMAT, minimum) : NULL;
  g_autofree gchar *high = maximum < highest ? g_strdup_printf ("%" G_GUINT64_FORMAT, maximum) : NULL;

  append_bounds (out, low, high);
}

static void
append_real_bounds (GString  *out,
                    gdouble   minimum,
                    gdouble   maximum,
                    gdouble   highest,
                    gboolean  single)
{
  g_autofree gchar *low = minimum > -highest ? format_bound (minimum, single) : NULL;
  g_autofree gchar *high = maximum < highest ? format_bound (maximum, single) : NULL;

  append_bounds (out, low, high);
}

/* ", one of a, b, c" or ", any of a, b, c joined by |" */
static void
append_nicks (GString *out,
              GType    type)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (type);
  gboolean flags = G_IS_FLAGS_CLASS (klass);
  guint n_values = flags ? G_FLAGS_CLASS (klass)->n_values : G_ENUM_CLASS (klass)->n_values;

  g_string_append (out, flags ? ", any of " : ", one of ");
  for (guint i = 0; i < n_values; i++)
    {
      if (i > 0)
        g_string_append (out, ", ");
      g_string_append (out, flags ? G_FLAGS_CLASS (klass)->values[i].value_nick
                                  : G_ENUM_CLASS (klass)->values[i].value_nick);
    }
  if (flags)
    g_string_append (out, " joined by |");
}

/* The values @pspec accepts, for numbers, enums and flags */
static void
append_constraint (GString    *out,
                   GParamSpec *pspec)
{
  GParamSpec *target = g_param_spec_get_redirect_target (pspec);

  if (target != NULL)
    pspec = target;

  if (G_IS_PARAM_SPEC_INT (pspec))
    append_signed_bounds (out, G_PARAM_SPEC_INT (pspec)->minimum, G_PARAM_SPEC_INT (pspec)->maximum,
                          G_MININT, G_MAXINT);
  else if (G_IS_PARAM_SPEC_LONG (pspec))
    append_signed_bounds (out, G_PARAM_SPEC_LONG (pspec)->minimum, G_PARAM_SPEC_LONG (pspec)->maximum,
                          G_MINLONG, G_MAXLONG);
  else if (G_IS_PARAM_SPEC_INT64 (pspec))
    append_signed_bounds (out, G_PARAM_SPEC_INT64 (pspec)->minimum, G_PARAM_SPEC_INT64 (pspec)->maximum,
                          G_MININT64, G_MAXINT64);
  else if (G_IS_PARAM_SPEC_UINT (pspec))
    append_unsigned_bounds (out, G_PARAM_SPEC_UINT (pspec)->minimum, G_PARAM_SPEC_UINT (pspec)->maximum,
                            G_MAXUINT);
  else if (G_IS_PARAM_SPEC_ULONG (pspec))
    append_unsigned_bounds (out, G_PARAM_SPEC_ULONG (pspec)->minimum, G_PARAM_SPEC_ULONG (pspec)->maximum,
                            G_MAXULONG);
  else if (G_IS_PARAM_SPEC_UINT64 (pspec))
    append_unsigned_bounds (out, G_PARAM_SPEC_UINT64 (pspec)->minimum, G_PARAM_SPEC_UINT64 (pspec)->maximum,
                            G_MAXUINT64);
  else if (G_IS_PARAM_SPEC_FLOAT (pspec))
    append_real_bounds (out, G_PARAM_SPEC_FLOAT (pspec)->minimum, G_PARAM_SPEC_FLOAT (pspec)->maximum,
                        G_MAXFLOAT, TRUE);
  else if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    append_real_bounds (out, G_PARAM_SPEC_DOUBLE (pspec)->minimum, G_PARAM_SPEC_DOUBLE (pspec)->maximum,
                        G_MAXDOUBLE, FALSE);
  else if (G_IS_PARAM_SPEC_ENUM (pspec) || G_IS_PARAM_SPEC_FLAGS (pspec))
    append_nicks (out, G_PARAM_SPEC_VALUE_TYPE (pspec));
}

/* The value of the field @pspec of @config as show prints it: nested
 * configurations by their type, lists by their length, strings quoted,
 * everything else in the text form of hp_config_get_path_as_string() */
static gchar *
field_value_text (HpConfig    *config,
                  GParamSpec  *pspec,
                  GError     **error)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);
  g_autoptr(GError) local_error = NULL;
  g_autofree gchar *text = NULL;
  g_autofree gchar *escaped = NULL;

  if (g_type_is_a (type, HP_TYPE_CONFIG) || g_type_is_a (type, HP_TYPE_CONFIG_LIST))
    {
      g_autoptr(GObject) value = NULL;

      g_object_get (config, pspec->name, &value, NULL);
      if (value == NULL)
        return g_strdup ("null");
      if (HP_IS_CONFIG_LIST (value))
        return g_strdup_printf ("%u items", hp_config_list_get_length (HP_CONFIG_LIST (value)));
      return g_strdup (G_OBJECT_TYPE_NAME (value));
    }

  text = hp_config_get_path_as_string (config, pspec->name, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  if (text == NULL)
    return g_strdup ("null");
  if (G_TYPE_FUNDAMENTAL (type) != G_TYPE_STRING)
    return g_steal_pointer (&text);
  escaped = g_strescape (text, NULL);
  return g_strdup_printf ("\"%s\"", escaped);
}

static gboolean append_fields (GString   *out,
                               HpConfig  *config,
                               gint       indent,
                               GArray    *open_types,
                               GError   **error);

static gboolean
type_is_open (GArray *open_types,
              GType   type)
{
  for (guint i = 0; i < open_types->len; i++)
    if (g_array_index (open_types, GType, i) == type)
      return TRUE;
  return FALSE;
}

/* The fields of the configuration in the field @pspec of @config: of
 * its value, or of a new configuration of the field's type */
static gboolean
append_nested_config (GString     *out,
                      HpConfig    *config,
                      GParamSpec  *pspec,
                      gint         indent,
                      GArray      *open_types,
                      GError     **error)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);
  g_autoptr(HpConfig) nested = NULL;

  g_object_get (config, pspec->name, &nested, NULL);
  if (nested == NULL)
    {
      if (type_is_open (open_types, type))
        {
          g_string_append_printf (out, "%*s(the fields of %s, as above)\n", indent, "",
                                  g_type_name (type));
          return TRUE;
        }
      if (G_TYPE_IS_ABSTRACT (type))
        {
          g_autoptr(GPtrArray) subtypes = concrete_types (type);
          g_autofree gchar *list = g_strjoinv (", ", (gchar **) subtypes->pdata);

          g_string_append_printf (out, "%*s(abstract; one of: %s)\n", indent, "",
                                  subtypes->len > 0 ? list : "none registered");
          return TRUE;
        }
      nested = g_object_new (type, NULL);
    }
  return append_fields (out, nested, indent, open_types, error);
}

static gboolean
append_list_items (GString     *out,
                   HpConfig    *config,
                   GParamSpec  *pspec,
                   gint         indent,
                   GArray      *open_types,
                   GError     **error)
{
  g_autoptr(HpConfigList) list = NULL;

  g_object_get (config, pspec->name, &list, NULL);
  for (guint i = 0; list != NULL && i < hp_config_list_get_length (list); i++)
    {
      HpConfig *item = hp_config_list_peek (list, i);

      g_string_append_printf (out, "%*s%s.%u (%s)\n", indent, "", pspec->name, i,
                              G_OBJECT_TYPE_NAME (item));
      if (!append_fields (out, item, indent + 2, open_types, error))
        return FALSE;
    }
  return TRUE;
}

/* One field: "name (type) = value, constraint", its description below,
 * then what it holds */
static gboolean
append_field (GString     *out,
              HpConfig    *config,
              GParamSpec  *pspec,
              gint         indent,
              GArray      *open_types,
              GError     **error)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);
  const gchar *blurb = g_param_spec_get_blurb (pspec);
  g_autofree gchar *value = field_value_text (config, pspec, error);

  if (value == NULL)
    return FALSE;
  g_string_append_printf (out, "%*s%s (%s) = %s", indent, "", pspec->name, type_label (type), value);
  append_constraint (out, pspec);
  g_string_append_c (out, '\n');
  if (blurb != NULL && *blurb != '\0')
    g_string_append_printf (out, "%*s%s\n", indent + 4, "", blurb);

  if (g_type_is_a (type, HP_TYPE_CONFIG))
    return append_nested_config (out, config, pspec, indent + 2, open_types, error);
  if (g_type_is_a (type, HP_TYPE_CONFIG_LIST))
    return append_list_items (out, config, pspec, indent + 2, open_types, error);
  return TRUE;
}

static gboolean
append_fields (GString   *out,
               HpConfig  *config,
               gint       indent,
               GArray    *open_types,
               GError   **error)
{
  guint n_fields;
  g_autofree GParamSpec **fields = hp_config_list_fields (config, &n_fields);
  GType type = G_OBJECT_TYPE (config);
  gboolean ok = TRUE;

  g_array_append_val (open_types, type);
  for (guint i = 0; ok && i < n_fields; i++)
    ok = append_field (out, config, fields[i], indent, open_types, error);
  g_array_set_size (open_types, open_types->len - 1);
  return ok;
}

/* A type name never holds a '.' or a '/'; a file name given to show
 * must */
static gboolean
names_file (const gchar *argument)
{
  return strchr (argument, '.') != NULL || strchr (argument, '/') != NULL;
}

static gint
run_show (Run     *run,
          gchar  **args,
          guint    n_args,
          GError **error)
{
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GArray) open_types = g_array_new (FALSE, FALSE, sizeof (GType));
  g_autoptr(HpConfig) config = NULL;
  GType owner;

  if (names_file (args[0]))
    {
      config = read_config_file (args[0], error);
      if (config == NULL)
        return -1;
      g_string_append_printf (out, "%s: ", args[0]);
    }
  else
    {
      GType type = lookup_config_type (args[0], error);

      if (type == G_TYPE_INVALID)
        return -1;
      config = g_object_new (type, NULL);
    }
  owner = hp_config_get_owner_type (config);
  g_string_append (out, G_OBJECT_TYPE_NAME (config));
  if (owner != G_TYPE_INVALID)
    g_string_append_printf (out, " (builds %s)", g_type_name (owner));
  g_string_append_c (out, '\n');
  if (!append_fields (out, config, 2, open_types, error))
    return -1;
  print_text (out->str);
  return STATUS_OK;
}

/* ------------------------------------------------------------------ */
/* hp-config new, get, set, validate                                   */

static gint
run_new (Run     *run,
         gchar  **args,
         guint    n_args,
         GError **error)
{
  guint n_sets = run->set_options != NULL ? g_strv_length (run->set_options) : 0;
  g_autoptr(HpConfig) config = NULL;
  GType type;

  if (!check_assignments (run->set_options, n_sets, error))
    return -1;
  type = lookup_config_type (args[0], error);
  if (type == G_TYPE_INVALID)
    return -1;
  config = g_object_new (type, NULL);
  if (!apply_assignments (config, run->set_options, n_sets, error) ||
      !write_config (config, run->output_file, error))
    return -1;
  return STATUS_OK;
}

static gint
run_get (Run     *run,
         gchar  **args,
         guint    n_args,
         GError **error)
{
  g_autoptr(HpConfig) config = read_config_file (args[0], error);
  g_autoptr(GString) out = g_string_new (NULL);

  if (config == NULL)
    return -1;
  for (guint i = 1; i < n_args; i++)
    {
      g_autoptr(GError) local_error = NULL;
      g_autofree gchar *value = hp_config_get_path_as_string (config, args[i], &local_error);

      if (local_error != NULL)
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "%s: ", args[0]);
          return -1;
        }
      g_string_append_printf (out, "%s\n", value != NULL ? value : "null");
    }
  print_text (out->str);
  return STATUS_OK;
}

static gint
run_set (Run     *run,
         gchar  **args,
         guint    n_args,
         GError **error)
{
  g_autoptr(HpConfig) config = NULL;

  if (!check_assignments (args + 1, n_args - 1, error))
    return -1;
  config = read_config_file (args[0], error);
  if (config == NULL)
    return -1;
  if (!apply_assignments (config, args + 1, n_args - 1, error))
    {
      g_prefix_error (error, "%s: ", args[0]);
      return -1;
    }
  if (!write_config (config, args[0], error))
    return -1;
  return STATUS_OK;
}

static gint
run_validate (Run     *run,
              gchar  **args,
              guint    n_args,
              GError **error)
{
  gint status = STATUS_OK;

  /* every file is checked; each error is printed as it comes */
  for (guint i = 0; i < n_args; i++)
    {
      g_autoptr(GError) local_error = NULL;
      g_autoptr(HpConfig) config = read_config_file (args[i], &local_error);

      if (config != NULL && !hp_config_validate (config, &local_error))
        g_prefix_error (&local_error, "%s: ", args[i]);
      if (local_error != NULL)
        {
          print_error (local_error);
          status = STATUS_FAILURE;
          continue;
        }
      printf ("%s: valid %s\n", args[i], G_OBJECT_TYPE_NAME (config));
    }
  return status;
}

/* ------------------------------------------------------------------ */
/* hp-config diff                                                      */

typedef struct
{
  GString *out;
  guint n_differences;
} Diff;

static void
add_difference (Diff        *diff,
                const gchar *path,
                const gchar *a,
                const gchar *b)
{
  g_string_append_printf (diff->out, "%s: %s -> %s\n", path, a, b);
  diff->n_differences++;
}

static const gchar *
describe_object (GObject *object)
{
  return object != NULL ? G_OBJECT_TYPE_NAME (object) : "null";
}

static gboolean diff_configs (Diff         *diff,
                              const gchar  *prefix,
                              HpConfig     *a,
                              HpConfig     *b,
                              GError      **error);

static gboolean
diff_nested (Diff         *diff,
             const gchar  *path,
             HpConfig     *a,
             HpConfig     *b,
             GError      **error)
{
  if (a == NULL && b == NULL)
    return TRUE;
  if (a == NULL || b == NULL)
    {
      add_difference (diff, path, describe_object (G_OBJECT (a)), describe_object (G_OBJECT (b)));
      return TRUE;
    }
  if (hp_config_equal (a, b))
    return TRUE;
  return diff_configs (diff, path, a, b, error);
}

static gboolean
diff_lists (Diff          *diff,
            const gchar   *path,
            HpConfigList  *a,
            HpConfigList  *b,
            GError       **error)
{
  guint n_a = a != NULL ? hp_config_list_get_length (a) : 0;
  guint n_b = b != NULL ? hp_config_list_get_length (b) : 0;

  if ((a == NULL) != (b == NULL))
    {
      g_autofree gchar *a_text = a != NULL ? g_strdup_printf ("%u items", n_a) : g_strdup ("null");
      g_autofree gchar *b_text = b != NULL ? g_strdup_printf ("%u items", n_b) : g_strdup ("null");

      add_difference (diff, path, a_text, b_text);
      return TRUE;
    }
  for (guint i = 0; i < MAX (n_a, n_b); i++)
    {
      g_autofree gchar *item_path = g_strdup_printf ("%s.%u", path, i);
      HpConfig *item_a = i < n_a ? hp_config_list_peek (a, i) : NULL;
      HpConfig *item_b = i < n_b ? hp_config_list_peek (b, i) : NULL;

      if (item_a == NULL || item_b == NULL)
        add_difference (diff, item_path, item_a != NULL ? G_OBJECT_TYPE_NAME (item_a) : "absent",
                        item_b != NULL ? G_OBJECT_TYPE_NAME (item_b) : "absent");
      else if (!diff_nested (diff, item_path, item_a, item_b, error))
        return FALSE;
    }
  return TRUE;
}

/* The parts of a sharding config, by the names paths give them: the
 * entries of the maps by name, of the output lists by index, and the
 * local map as one entry, the member itself */
typedef struct
{
  const gchar *name;
  GStrv (*list)   (HpShardingConfig *self);
  guint (*length) (HpShardingConfig *self);
} ShardingPart;

static const ShardingPart sharding_parts[] = {
  { "state-shardings", hp_sharding_config_list_state_shardings, NULL },
  { "in-src-shardings", hp_sharding_config_list_in_src_shardings, NULL },
  { "in-dst-shardings", hp_sharding_config_list_in_dst_shardings, NULL },
  { "out-src-shardings", NULL, hp_sharding_config_get_n_out_src_shardings },
  { "out-dst-shardings", NULL, hp_sharding_config_get_n_out_dst_shardings },
  { "local-map", NULL, NULL },
};

/* Adds the entries of @part of @sharding (may be NULL) that @entries
 * has not, in their order */
static void
add_sharding_entries (GPtrArray          *entries,
                      HpShardingConfig   *sharding,
                      const ShardingPart *part)
{
  g_auto(GStrv) names = NULL;

  if (sharding == NULL)
    return;
  if (part->list != NULL)
    names = part->list (sharding);
  else
    {
      guint length = part->length (sharding);

      names = g_new0 (gchar *, length + 1);
      for (guint i = 0; i < length; i++)
        names[i] = g_strdup_printf ("%u", i);
    }
  for (guint i = 0; names[i] != NULL; i++)
    if (!g_ptr_array_find_with_equal_func (entries, names[i], g_str_equal, NULL))
      g_ptr_array_add (entries, g_strdup (names[i]));
}

/* A sharding config field, entry by entry, at the paths that get and
 * set take (a null sharding config has no entries) */
static gboolean
diff_sharding (Diff         *diff,
               const gchar  *path,
               HpConfig     *a,
               HpConfig     *b,
               GParamSpec   *pspec,
               GError      **error)
{
  g_autoptr(HpShardingConfig) sharding_a = NULL;
  g_autoptr(HpShardingConfig) sharding_b = NULL;
  guint n_differences = diff->n_differences;

  g_object_get (a, pspec->name, &sharding_a, NULL);
  g_object_get (b, pspec->name, &sharding_b, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (sharding_parts); i++)
    {
      const ShardingPart *part = &sharding_parts[i];
      g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func (g_free);

      if (part->list == NULL && part->length == NULL)
        g_ptr_array_add (entries, g_strdup (""));
      else
        {
          add_sharding_entries (entries, sharding_a, part);
          add_sharding_entries (entries, sharding_b, part);
        }
      for (guint j = 0; j < entries->len; j++)
        {
          const gchar *entry = g_ptr_array_index (entries, j);
          const gchar *dot = *entry != '\0' ? "." : "";
          g_autofree gchar *field_path = g_strconcat (pspec->name, ".", part->name, dot, entry, NULL);
          g_autofree gchar *shown_path = g_strconcat (path, ".", part->name, dot, entry, NULL);
          g_autoptr(GError) local_error = NULL;
          g_autofree gchar *a_text = hp_config_get_path_as_string (a, field_path, &local_error);
          g_autofree gchar *b_text = NULL;

          if (local_error == NULL)
            b_text = hp_config_get_path_as_string (b, field_path, &local_error);
          if (local_error != NULL)
            {
              g_propagate_error (error, g_steal_pointer (&local_error));
              return FALSE;
            }
          if (g_strcmp0 (a_text, b_text) != 0)
            add_difference (diff, shown_path, a_text != NULL ? a_text : "null",
                            b_text != NULL ? b_text : "null");
        }
    }

  /* null and a sharding config without entries */
  if (diff->n_differences == n_differences && (sharding_a == NULL) != (sharding_b == NULL))
    {
      g_autofree gchar *a_text = hp_config_get_path_as_string (a, pspec->name, NULL);
      g_autofree gchar *b_text = hp_config_get_path_as_string (b, pspec->name, NULL);

      add_difference (diff, path, a_text != NULL ? a_text : "null", b_text != NULL ? b_text : "null");
    }
  return TRUE;
}

static gboolean
diff_field (Diff         *diff,
            const gchar  *path,
            HpConfig     *a,
            HpConfig     *b,
            GParamSpec   *pspec,
            GError      **error)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);
  g_autoptr(GError) local_error = NULL;
  g_autofree gchar *a_text = NULL;
  g_autofree gchar *b_text = NULL;

  if (g_type_is_a (type, HP_TYPE_CONFIG) || g_type_is_a (type, HP_TYPE_CONFIG_LIST))
    {
      g_autoptr(GObject) a_value = NULL;
      g_autoptr(GObject) b_value = NULL;

      g_object_get (a, pspec->name, &a_value, NULL);
      g_object_get (b, pspec->name, &b_value, NULL);
      if (g_type_is_a (type, HP_TYPE_CONFIG))
        return diff_nested (diff, path, (HpConfig *) a_value, (HpConfig *) b_value, error);
      return diff_lists (diff, path, (HpConfigList *) a_value, (HpConfigList *) b_value, error);
    }
  if (g_type_is_a (type, HP_TYPE_SHARDING_CONFIG))
    return diff_sharding (diff, path, a, b, pspec, error);

  a_text = hp_config_get_path_as_string (a, pspec->name, &local_error);
  if (local_error == NULL)
    b_text = hp_config_get_path_as_string (b, pspec->name, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  if (g_strcmp0 (a_text, b_text) != 0)
    add_difference (diff, path, a_text != NULL ? a_text : "null", b_text != NULL ? b_text : "null");
  return TRUE;
}

/* Lists the paths of the fields in which @a and @b differ, through
 * nested configurations and list items */
static gboolean
diff_configs (Diff         *diff,
              const gchar  *prefix,
              HpConfig     *a,
              HpConfig     *b,
              GError      **error)
{
  guint n_fields;
  g_autofree GParamSpec **fields = NULL;

  if (G_OBJECT_TYPE (a) != G_OBJECT_TYPE (b))
    {
      g_autofree gchar *path = *prefix != '\0' ? g_strconcat (prefix, ".@type", NULL)
                                               : g_strdup ("@type");

      add_difference (diff, path, G_OBJECT_TYPE_NAME (a), G_OBJECT_TYPE_NAME (b));
      return TRUE;
    }
  fields = hp_config_list_fields (a, &n_fields);
  for (guint i = 0; i < n_fields; i++)
    {
      g_autofree gchar *path = *prefix != '\0' ? g_strconcat (prefix, ".", fields[i]->name, NULL)
                                               : g_strdup (fields[i]->name);

      if (!diff_field (diff, path, a, b, fields[i], error))
        return FALSE;
    }
  return TRUE;
}

static gint
run_diff (Run     *run,
          gchar  **args,
          guint    n_args,
          GError **error)
{
  g_autoptr(HpConfig) a = read_config_file (args[0], error);
  g_autoptr(HpConfig) b = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  Diff diff = { out, 0 };

  if (a == NULL)
    return -1;
  b = read_config_file (args[1], error);
  if (b == NULL)
    return -1;
  if (hp_config_equal (a, b))
    {
      printf ("%s and %s are equal\n", args[0], args[1]);
      return STATUS_OK;
    }
  if (!diff_configs (&diff, "", a, b, error))
    return -1;
  /* values hp_config_equal() tells apart with the same text */
  if (diff.n_differences == 0)
    g_string_append_printf (out, "%s and %s differ\n", args[0], args[1]);
  print_text (out->str);
  return STATUS_FAILURE;
}

/* ------------------------------------------------------------------ */
/* Commands                                                            */

static const Command commands[] = {
  {
    "types", NULL,
    "List the configuration types",
    "Prints the name of every concrete configuration type (HpConfig subclass) that is\n"
    "loaded (see hp-config --help), one per line, sorted.\n",
    FALSE, 0, 0, run_types, STATUS_FAILURE,
  },
  {
    "show", "TYPE|FILE",
    "Show the fields of a configuration type or file",
    "Prints the fields of the configuration type TYPE, or of the configuration in FILE\n"
    "(an argument with a '.' or a '/' in it, such as model.json), in field order, one\n"
    "per line as\n"
    "\n"
    "  NAME (TYPE) = VALUE, RANGE\n"
    "      DESCRIPTION\n"
    "\n"
    "where VALUE is the default (for a TYPE) or the value in FILE, and RANGE gives the\n"
    "bounds of a number (\"range [1, 1024]\", \">= 1\") or the nicks of an enum\n"
    "(\"one of float32, float64, int64\"). A field holding a nested configuration is\n"
    "followed by the fields of that configuration, indented: those of its value, or of\n"
    "a new configuration of the field's type when it is null. A list of configurations\n"
    "is followed by its items (NAME.0, NAME.1, ...) and their fields.\n"
    "\n"
    "Examples:\n"
    "  hp-config show HpDecoderConfig\n"
    "  hp-config show model.json\n",
    FALSE, 1, 1, run_show, STATUS_FAILURE,
  },
  {
    "new", "TYPE",
    "Write a configuration with default values",
    "Makes a configuration of TYPE with its default values, applies the --set options\n"
    "in order and writes it as JSON (with an \"@type\" member naming TYPE) to the\n"
    "standard output or to FILE. A PATH is dotted through nested configurations and\n"
    "list items (layers.0.attention.n-heads), and into sharding configurations\n"
    "(sharding-config.state-shardings.weight, sharding-config.out-dst-shardings.0); a\n"
    "VALUE is in the text form \"get\" prints: true/false, numbers, strings as they are,\n"
    "enum nicks, comma-separated string lists, named placements (tp:S(0), dp:R; null\n"
    "removes a sharding entry), nested configurations and lists as JSON.\n"
    "\n"
    "Example:\n"
    "  hp-config new HpDecoderConfig --set dim=128 --set n-heads=8 -o model.json\n",
    TRUE, 1, 1, run_new, STATUS_FAILURE,
  },
  {
    "get", "FILE PATH…",
    "Print fields of a configuration file",
    "Prints the value of the field at each PATH of the configuration in FILE, one per\n"
    "line, in the text form \"set\" reads back (\"null\" for an unset string or object).\n"
    "\n"
    "Example:\n"
    "  hp-config get model.json dim layers.0.attention.n-heads\n",
    FALSE, 2, G_MAXUINT, run_get, STATUS_FAILURE,
  },
  {
    "set", "FILE PATH=VALUE…",
    "Change fields of a configuration file",
    "Sets each field at PATH of the configuration in FILE from VALUE, in order, and\n"
    "writes FILE back (atomically, as pretty JSON). Every value is checked against its\n"
    "field (type, range, enum nicks); on any error FILE is left as it was and the\n"
    "message names the path. PATH and VALUE are as for \"new --set\". How fields agree\n"
    "with each other is checked by \"validate\".\n"
    "\n"
    "Example:\n"
    "  hp-config set model.json dim=256 norm-eps=1e-6 dtype=float64\n",
    FALSE, 2, G_MAXUINT, run_set, STATUS_FAILURE,
  },
  {
    "validate", "FILE…",
    "Check configuration files",
    "Reads each FILE strictly, as hp_config_new_from_json() does (text that is not\n"
    "strict JSON, such as a comment or a member given twice, an unknown member, a\n"
    "value of the wrong type or out of range and an unknown \"@type\" are errors), runs\n"
    "the checks of how its fields agree with each other that building it would run\n"
    "(hp_config_validate(), on every nested configuration too), and prints\n"
    "\"FILE: valid TYPE\", or the error on the standard error. The exit status is 1 if\n"
    "any file is not valid.\n",
    FALSE, 1, G_MAXUINT, run_validate, STATUS_FAILURE,
  },
  {
    "diff", "A B",
    "List the fields in which two configuration files differ",
    "Compares the configurations in the files A and B field by field, through nested\n"
    "configurations and list items, and prints one line per difference:\n"
    "\n"
    "  PATH: VALUE-IN-A -> VALUE-IN-B\n"
    "\n"
    "or \"A and B are equal\". As with diff(1), the exit status is 0 when they are\n"
    "equal, 1 when they differ and 2 when a file cannot be read.\n",
    FALSE, 2, 2, run_diff, STATUS_USAGE,
  },
};

static const gchar files_description[] =
  "Configuration files are JSON objects as hp_config_to_json() writes them: the\n"
  "\"@type\" member names the configuration type (its GType name, as \"types\" lists\n"
  "them) and the other members are its fields.\n";

static const gchar status_description[] =
  "Exit status: 0 on success, 1 on an error (one line on the standard error),\n"
  "2 for a usage error; diff exits with 1 when the files differ and 2 on an error.\n"
  "\n"
  "Run \"hp-config COMMAND --help\" for the help of a command.\n";

static const Command *
find_command (const gchar *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (commands[i].name, name))
      return &commands[i];
  return NULL;
}

/* ------------------------------------------------------------------ */
/* Options                                                             */

static gboolean
collect_load_value (const gchar  *option_name,
                    const gchar  *value,
                    gpointer      data,
                    GError      **error)
{
  Run *run = data;

  for (guint i = 0; i < run->tool->load_options->len; i++)
    {
      LoadOption *option = g_ptr_array_index (run->tool->load_options, i);
      gboolean matches = option_name[1] == '-' ? g_str_equal (option_name + 2, option->long_name)
                                               : option_name[1] == option->short_name;

      if (matches)
        {
          g_ptr_array_add (g_ptr_array_index (run->load_values, i), g_strdup (value));
          return TRUE;
        }
    }
  g_return_val_if_reached (FALSE);
}

/* A context whose options set @run: @entries (NULL-terminated, or NULL)
 * with --help and the load options */
static GOptionContext *
make_context (Run                *run,
              const gchar        *parameters,
              const GOptionEntry *entries)
{
  GOptionContext *context = g_option_context_new (parameters);
  GOptionGroup *group = g_option_group_new (NULL, NULL, NULL, run, NULL);
  const GOptionEntry help_entries[] = {
    { "help", 'h', 0, G_OPTION_ARG_NONE, &run->show_help, "Show help options", NULL },
    G_OPTION_ENTRY_NULL
  };

  /* GLib's own --help would exit the process */
  g_option_context_set_help_enabled (context, FALSE);
  g_option_group_add_entries (group, help_entries);
  if (entries != NULL)
    g_option_group_add_entries (group, entries);
  for (guint i = 0; i < run->tool->load_options->len; i++)
    {
      LoadOption *option = g_ptr_array_index (run->tool->load_options, i);
      const GOptionEntry load_entries[] = {
        { option->long_name, option->short_name, 0, G_OPTION_ARG_CALLBACK,
          (gpointer) collect_load_value, option->description, option->arg_description },
        G_OPTION_ENTRY_NULL
      };

      g_option_group_add_entries (group, load_entries);
    }
  g_option_context_set_main_group (context, group);
  return context;
}

static GOptionContext *
make_main_context (Run *run)
{
  const GOptionEntry entries[] = {
    { "version", 0, 0, G_OPTION_ARG_NONE, &run->show_version, "Print the version of hp-config", NULL },
    G_OPTION_ENTRY_NULL
  };
  GOptionContext *context = make_context (run, "COMMAND [ARGUMENT…]", entries);
  g_autoptr(GString) summary = g_string_new ("Lists, shows, makes, edits, checks and compares "
                                             "hp-protocols configurations.\n\nCommands:\n");
  g_autoptr(GString) description = g_string_new (files_description);
  const gchar *types = run->tool->description;

  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    g_string_append_printf (summary, "  %-10s%s\n", commands[i].name, commands[i].summary);
  g_string_append_printf (summary, "  %-10s%s", "help", "Show the help of a command");
  g_option_context_set_summary (context, summary->str);

  if (types != NULL && *types != '\0')
    g_string_append_printf (description, "\n%s%s", types,
                            g_str_has_suffix (types, "\n") ? "" : "\n");
  g_string_append_printf (description, "\n%s", status_description);
  g_option_context_set_description (context, description->str);
  /* the options after the command are the command's */
  g_option_context_set_strict_posix (context, TRUE);
  return context;
}

static GOptionContext *
make_command_context (Run           *run,
                      const Command *command)
{
  const GOptionEntry new_entries[] = {
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &run->set_options,
      "Set the field at PATH from its text form (repeatable, applied in order)", "PATH=VALUE" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &run->output_file,
      "Write the configuration to FILE instead of the standard output", "FILE" },
    G_OPTION_ENTRY_NULL
  };
  GOptionContext *context = make_context (run, command->parameters,
                                          command->takes_new_options ? new_entries : NULL);

  g_option_context_set_summary (context, command->summary);
  g_option_context_set_description (context, command->description);
  return context;
}

static void
set_command_prgname (const Command *command)
{
  g_autofree gchar *prgname = g_strdup_printf (PROGRAM_NAME " %s", command->name);

  g_set_prgname (prgname);
}

static void
print_help (GOptionContext *context)
{
  g_autofree gchar *help = g_option_context_get_help (context, TRUE, NULL);

  print_text (help);
}

/* Runs the load functions on the values of their options */
static gboolean
load_types (Run     *run,
            GError **error)
{
  for (guint i = 0; i < run->tool->load_options->len; i++)
    {
      LoadOption *option = g_ptr_array_index (run->tool->load_options, i);
      GPtrArray *values = g_ptr_array_index (run->load_values, i);

      if (!option->func (run->tool, (const gchar * const *) values->pdata, option->user_data, error))
        return FALSE;
    }
  return TRUE;
}

static gint
run_command (Run            *run,
             const Command  *command,
             gchar        ***argv,
             GError        **error)
{
  g_autoptr(GOptionContext) context = make_command_context (run, command);
  guint n_args;

  set_command_prgname (command);
  if (!g_option_context_parse_strv (context, argv, error))
    return -1;
  if (run->show_help)
    {
      print_help (context);
      return STATUS_OK;
    }
  n_args = g_strv_length (*argv) - 1;
  if (n_args < command->min_args)
    {
      set_usage_error (error, "expected %s", command->parameters);
      return -1;
    }
  if (n_args > command->max_args)
    {
      set_usage_error (error, "unexpected argument '%s'", (*argv)[command->max_args + 1]);
      return -1;
    }
  if (!load_types (run, error))
    return -1;
  return command->run (run, *argv + 1, n_args, error);
}

/* hp-config help [COMMAND] */
static gint
run_help (Run             *run,
          GOptionContext  *main_context,
          gchar          **argv,
          GError         **error)
{
  const Command *command;
  g_autoptr(GOptionContext) context = NULL;

  if (argv[1] == NULL)
    {
      print_help (main_context);
      return STATUS_OK;
    }
  if (argv[2] != NULL)
    {
      set_usage_error (error, "unexpected argument '%s'", argv[2]);
      return -1;
    }
  command = find_command (argv[1]);
  if (command == NULL)
    {
      set_usage_error (error, "unknown command '%s'", argv[1]);
      return -1;
    }
  set_command_prgname (command);
  context = make_command_context (run, command);
  print_help (context);
  return STATUS_OK;
}

/* ------------------------------------------------------------------ */
/* The object                                                          */

static void
hp_config_tool_finalize (GObject *object)
{
  HpConfigTool *self = HP_CONFIG_TOOL (object);

  g_free (self->description);
  g_ptr_array_unref (self->load_options);

  G_OBJECT_CLASS (hp_config_tool_parent_class)->finalize (object);
}

static void
hp_config_tool_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  HpConfigTool *self = HP_CONFIG_TOOL (object);

  switch (prop_id)
    {
    case PROP_DESCRIPTION:
      g_value_set_string (value, self->description);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_config_tool_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  HpConfigTool *self = HP_CONFIG_TOOL (object);

  switch (prop_id)
    {
    case PROP_DESCRIPTION:
      hp_config_tool_set_description (self, g_value_get_string (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_config_tool_class_init (HpConfigToolClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_config_tool_finalize;
  object_class->get_property = hp_config_tool_get_property;
  object_class->set_property = hp_config_tool_set_property;

  /**
   * HpConfigTool:description:
   *
   * The paragraph of `hp-config --help` that says where the
   * configuration types come from: the load options and how they find
   * what they load. %NULL for none.
   *
   * Since: 1.0
   */
  properties[PROP_DESCRIPTION] =
    g_param_spec_string ("description", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_config_tool_init (HpConfigTool *self)
{
  self->load_options = g_ptr_array_new_with_free_func ((GDestroyNotify) load_option_free);
}

/**
 * hp_config_tool_new:
 *
 * Creates a tool with no load options: its commands see the
 * configuration types registered when they run.
 *
 * Returns: (transfer full): a new tool
 *
 * Since: 1.0
 */
HpConfigTool *
hp_config_tool_new (void)
{
  return g_object_new (HP_TYPE_CONFIG_TOOL, NULL);
}

/**
 * hp_config_tool_add_load_option:
 * @self: a tool
 * @long_name: the option's name without the leading `--`, such as
 *   `require`; not `help`, `version`, `set` or `output`, nor the name of
 *   another load option
 * @short_name: its one-letter form (`r` for `-r`), or 0 for none
 * @description: the option's line in `--help`
 * @arg_description: the name of its value in `--help`, such as
 *   `NAMESPACE-VERSION`
 * @func: (scope notified) (closure user_data) (destroy destroy): loads
 *   what the values name
 * @user_data: data for @func
 * @destroy: (nullable): frees @user_data with the tool
 *
 * Adds an option, repeatable, before or after the command, whose
 * values name what to load for its configuration types. Before each
 * command runs, @func gets the values given (in the order of the
 * command line); load options are run in the order they were added.
 *
 * Since: 1.0
 */
void
hp_config_tool_add_load_option (HpConfigTool         *self,
                                const gchar          *long_name,
                                gchar                 short_name,
                                const gchar          *description,
                                const gchar          *arg_description,
                                HpConfigToolLoadFunc  func,
                                gpointer              user_data,
                                GDestroyNotify        destroy)
{
  LoadOption *option;

  g_return_if_fail (HP_IS_CONFIG_TOOL (self));
  g_return_if_fail (long_name != NULL && *long_name != '\0' && *long_name != '-');
  g_return_if_fail (short_name == 0 || g_ascii_isalpha (short_name));
  g_return_if_fail (description != NULL);
  g_return_if_fail (arg_description != NULL);
  g_return_if_fail (func != NULL);

  option = g_new0 (LoadOption, 1);
  option->long_name = g_strdup (long_name);
  option->short_name = short_name;
  option->description = g_strdup (description);
  option->arg_description = g_strdup (arg_description);
  option->func = func;
  option->user_data = user_data;
  option->destroy = destroy;
  g_ptr_array_add (self->load_options, option);
}

/**
 * hp_config_tool_get_description:
 * @self: a tool
 *
 * Gets [property@Hp.ConfigTool:description].
 *
 * Returns: (nullable): the paragraph of `--help` on where the types come
 *   from
 *
 * Since: 1.0
 */
const gchar *
hp_config_tool_get_description (HpConfigTool *self)
{
  g_return_val_if_fail (HP_IS_CONFIG_TOOL (self), NULL);

  return self->description;
}

/**
 * hp_config_tool_set_description:
 * @self: a tool
 * @description: (nullable): the paragraph of `--help` on where the
 *   configuration types come from, or %NULL
 *
 * Sets [property@Hp.ConfigTool:description].
 *
 * Since: 1.0
 */
void
hp_config_tool_set_description (HpConfigTool *self,
                                const gchar  *description)
{
  g_return_if_fail (HP_IS_CONFIG_TOOL (self));

  if (g_strcmp0 (self->description, description) == 0)
    return;
  g_free (self->description);
  self->description = g_strdup (description);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DESCRIPTION]);
}

/**
 * hp_config_tool_run:
 * @self: a tool
 * @args: (array zero-terminated=1) (element-type filename): the
 *   command line after the program name: global options, the command,
 *   its arguments and options, as `hp-config --help` describes them
 *
 * Runs one `hp-config` command: prints its output on the standard
 * output and its errors, one line each, on the standard error, and
 * gives the exit status of the program. While it runs, the program name
 * ([func@GLib.get_prgname]) is `hp-config` or `hp-config COMMAND`, as the
 * messages and `--help` name the program; it is set back afterwards.
 *
 * Returns: the exit status: 0 on success, 1 on an error, 2 on a usage
 *   error; for `diff`, 0 when the files are equal, 1 when they differ
 *   and 2 on an error
 *
 * Since: 1.0
 */
gint
hp_config_tool_run (HpConfigTool        *self,
                    const gchar * const *args)
{
  g_autofree gchar *old_prgname = NULL;
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) argv = NULL;
  g_autoptr(GStrvBuilder) builder = NULL;
  const Command *command = NULL;
  Run run = { self, NULL, FALSE, FALSE, NULL, NULL };
  gint status = -1;

  g_return_val_if_fail (HP_IS_CONFIG_TOOL (self), STATUS_USAGE);
  g_return_val_if_fail (args != NULL, STATUS_USAGE);

  old_prgname = g_strdup (g_get_prgname ());
  g_set_prgname (PROGRAM_NAME);
  run.load_values = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  for (guint i = 0; i < self->load_options->len; i++)
    g_ptr_array_add (run.load_values, g_ptr_array_new_null_terminated (1, g_free, TRUE));

  builder = g_strv_builder_new ();
  g_strv_builder_add (builder, PROGRAM_NAME);
  g_strv_builder_addv (builder, (const gchar **) args);
  argv = g_strv_builder_end (builder);

  context = make_main_context (&run);
  if (g_option_context_parse_strv (context, &argv, &error))
    {
      if (run.show_help)
        {
          print_help (context);
          status = STATUS_OK;
        }
      else if (run.show_version)
        {
          printf (PROGRAM_NAME " %s\n", PACKAGE_VERSION);
          status = STATUS_OK;
        }
      else if (argv[1] == NULL)
        set_usage_error (&error, "no command given");
      else if (g_str_equal (argv[1], "help"))
        status = run_help (&run, context, argv + 1, &error);
      else if ((command = find_command (argv[1])) == NULL)
        set_usage_error (&error, "unknown command '%s'", argv[1]);
      else
        {
          g_auto(GStrv) command_argv = g_strdupv (argv + 1);

          status = run_command (&run, command, &command_argv, &error);
        }
    }

  if (error != NULL && error->domain == G_OPTION_ERROR)
    {
      fflush (stdout);
      g_printerr ("%s: %s (see %s --help)\n", g_get_prgname (), error->message, g_get_prgname ());
      status = STATUS_USAGE;
    }
  else if (error != NULL)
    {
      print_error (error);
      status = command != NULL ? command->error_status : STATUS_FAILURE;
    }

  fflush (stdout);
  run_clear (&run);
  g_set_prgname (old_prgname);
  return status;
}
