/* fuzz-config-json.c: libFuzzer target for the configuration JSON reader
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The first byte of an input picks the type asked for, by its value
 * modulo the number of types (so the digits '0' to '5' name them in the
 * seeds); the rest, up to the first NUL, is JSON text read with
 * hp_config_new_from_json():
 *
 *   0  HpConfig: any configuration its "@type" names
 *   1  HpDecoderConfig: nested configs, a list of blocks, enums, numbers,
 *      booleans, initialisers and sharding configs
 *   2  HpLinearConfig: a plain module config
 *   3  HpModuleConfig: the base of the modules, or any of them
 *   4  HpOptimizerConfig: abstract, so only a "@type" makes one
 *   5  FuzzEveryConfig (below): one field of every kind a config takes
 *
 * An input must either fail with HP_ERROR_FORMAT or HP_ERROR_CONFIG, or
 * read; then its JSON, compact and pretty, must read back to an equal
 * configuration of the same type whose JSON is the same text (through
 * JSON nodes too), and so must a copy. (JSON written nested deeper than
 * the 64 levels the reader takes, which defaults of nested
 * configurations can make, must fail with HP_ERROR_FORMAT as text and
 * round-trip as a node.) A decoder config is then adjusted
 * to tensor parallelism of degree 2 (expansion and sharding, as
 * hp-train does), which may fail with HP_ERROR_CONFIG only, and must
 * round-trip again. Anything else (a crash, a sanitizer report, a leak,
 * a GLib warning or critical, another error, a failed round trip) is a
 * bug.
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hp-protocols/hp-protocols.h>

#include "fuzz-common.h"

int LLVMFuzzerInitialize (int    *argc,
                          char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

/* Decoders with more layers than this are read and written back but not
 * expanded, to keep each input fast */
#define MAX_EXPANDED_LAYERS 16

/* ------------------------------------------------------------------ */
/* A configuration with one field of every kind                         */

typedef enum
{
  FUZZ_OPTIONS_ALPHA = 1 << 0,
  FUZZ_OPTIONS_BETA = 1 << 1,
  FUZZ_OPTIONS_GAMMA = 1 << 2,
} FuzzOptions;

static GType
fuzz_options_get_type (void)
{
  static GType type = 0;
  static const GFlagsValue values[] = {
    { FUZZ_OPTIONS_ALPHA, "FUZZ_OPTIONS_ALPHA", "alpha" },
    { FUZZ_OPTIONS_BETA, "FUZZ_OPTIONS_BETA", "beta" },
    { FUZZ_OPTIONS_GAMMA, "FUZZ_OPTIONS_GAMMA", "gamma" },
    { 0, NULL, NULL },
  };

  if (type == 0)
    type = g_flags_register_static ("FuzzOptions", values);
  return type;
}

#define FUZZ_TYPE_EVERY_CONFIG (fuzz_every_config_get_type ())
G_DECLARE_FINAL_TYPE (FuzzEveryConfig, fuzz_every_config, FUZZ, EVERY_CONFIG, HpConfig)

enum {
  PROP_0,
  PROP_FLAG,
  PROP_COUNT,
  PROP_N_ITEMS,
  PROP_OFFSET,
  PROP_SIZE,
  PROP_BIG,
  PROP_SEED,
  PROP_RATIO,
  PROP_SCALE,
  PROP_LR,
  PROP_NAME,
  PROP_DTYPE,
  PROP_OPTIONS,
  PROP_TAGS,
  PROP_CHILD,
  PROP_MODULE,
  PROP_ITEMS,
  PROP_PLACEMENT,
  PROP_SHARDING,
  PROP_LOCAL_MAP,
  PROP_PARAM_INIT,
  PROP_INIT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

struct _FuzzEveryConfig
{
  HpConfig parent_instance;

  GValue values[N_PROPS];
};

G_DEFINE_FINAL_TYPE (FuzzEveryConfig, fuzz_every_config, HP_TYPE_CONFIG)

static void
fuzz_every_config_finalize (GObject *object)
{
  FuzzEveryConfig *self = FUZZ_EVERY_CONFIG (object);

  for (guint i = 1; i < N_PROPS; i++)
    g_value_unset (&self->values[i]);

  G_OBJECT_CLASS (fuzz_every_config_parent_class)->finalize (object);
}

static void
fuzz_every_config_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  g_value_copy (&FUZZ_EVERY_CONFIG (object)->values[prop_id], value);
}

static void
fuzz_every_config_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  FuzzEveryConfig *self = FUZZ_EVERY_CONFIG (object);

  g_value_copy (value, &self->values[prop_id]);
  g_object_notify_by_pspec (object, pspec);
}

#define FIELD_FLAGS (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS)

static void
fuzz_every_config_class_init (FuzzEveryConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = fuzz_every_config_finalize;
  object_class->get_property = fuzz_every_config_get_property;
  object_class->set_property = fuzz_every_config_set_property;

  properties[PROP_FLAG] = g_param_spec_boolean ("flag", NULL, NULL, FALSE, FIELD_FLAGS);
  properties[PROP_COUNT] = g_param_spec_int ("count", NULL, NULL, -5, 1000, 3, FIELD_FLAGS);
  properties[PROP_N_ITEMS] = g_param_spec_uint ("n-items", NULL, NULL, 1, G_MAXUINT, 1, FIELD_FLAGS);
  properties[PROP_OFFSET] = g_param_spec_long ("offset", NULL, NULL, G_MINLONG, G_MAXLONG, -1, FIELD_FLAGS);
  properties[PROP_SIZE] = g_param_spec_ulong ("size", NULL, NULL, 0, G_MAXULONG, 0, FIELD_FLAGS);
  properties[PROP_BIG] = g_param_spec_int64 ("big", NULL, NULL, G_MININT64, G_MAXINT64, 0, FIELD_FLAGS);
  properties[PROP_SEED] = g_param_spec_uint64 ("seed", NULL, NULL, 0, G_MAXUINT64, 42, FIELD_FLAGS);
  properties[PROP_RATIO] = g_param_spec_float ("ratio", NULL, NULL, -G_MAXFLOAT, G_MAXFLOAT, 0.5f,
                                               FIELD_FLAGS);
  properties[PROP_SCALE] = g_param_spec_double ("scale", NULL, NULL, -INFINITY, INFINITY, 1.0,
                                                FIELD_FLAGS);
  properties[PROP_LR] = g_param_spec_double ("lr", NULL, NULL, 0.0, 1.0, 0.001, FIELD_FLAGS);
  properties[PROP_NAME] = g_param_spec_string ("name", NULL, NULL, "every", FIELD_FLAGS);
  properties[PROP_DTYPE] = g_param_spec_enum ("dtype", NULL, NULL, HP_TYPE_DTYPE, HP_DTYPE_FLOAT32,
                                              FIELD_FLAGS);
  properties[PROP_OPTIONS] = g_param_spec_flags ("options", NULL, NULL, fuzz_options_get_type (),
                                                 FUZZ_OPTIONS_BETA, FIELD_FLAGS);
  properties[PROP_TAGS] = g_param_spec_boxed ("tags", NULL, NULL, G_TYPE_STRV, FIELD_FLAGS);
  properties[PROP_CHILD] = g_param_spec_object ("child", NULL, NULL, HP_TYPE_CONFIG, FIELD_FLAGS);
  properties[PROP_MODULE] = g_param_spec_object ("module", NULL, NULL, HP_TYPE_MODULE_CONFIG,
                                                 FIELD_FLAGS);
  properties[PROP_ITEMS] = g_param_spec_object ("items", NULL, NULL, HP_TYPE_CONFIG_LIST, FIELD_FLAGS);
  properties[PROP_PLACEMENT] = g_param_spec_object ("placement", NULL, NULL, HP_TYPE_NAMED_PLACEMENT,
                                                    FIELD_FLAGS);
  properties[PROP_SHARDING] = g_param_spec_object ("sharding", NULL, NULL, HP_TYPE_SHARDING_CONFIG,
                                                   FIELD_FLAGS);
  properties[PROP_LOCAL_MAP] = g_param_spec_object ("local-map", NULL, NULL, HP_TYPE_LOCAL_MAP_CONFIG,
                                                    FIELD_FLAGS);
  properties[PROP_PARAM_INIT] = g_param_spec_object ("param-init", NULL, NULL, HP_TYPE_PARAM_INIT,
                                                     FIELD_FLAGS);
  properties[PROP_INIT] = g_param_spec_object ("init", NULL, NULL, HP_TYPE_INITIALIZER, FIELD_FLAGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
fuzz_every_config_init (FuzzEveryConfig *self)
{
  for (guint i = 1; i < N_PROPS; i++)
    {
      g_value_init (&self->values[i], G_PARAM_SPEC_VALUE_TYPE (properties[i]));
      g_param_value_set_default (properties[i], &self->values[i]);
    }
}

/* ------------------------------------------------------------------ */

static GType requested_types[6];

/* Every concrete configuration type of the library, so that "@type"
 * finds each by name */
static void
register_types (void)
{
  g_type_ensure (HP_TYPE_MODULE_CONFIG);
  g_type_ensure (HP_TYPE_BASE_MODEL_CONFIG);
  g_type_ensure (HP_TYPE_PARALLEL_DIMS);
  g_type_ensure (HP_TYPE_LINEAR_CONFIG);
  g_type_ensure (HP_TYPE_EMBEDDING_CONFIG);
  g_type_ensure (HP_TYPE_RMS_NORM_CONFIG);
  g_type_ensure (HP_TYPE_FEED_FORWARD_CONFIG);
  g_type_ensure (HP_TYPE_ROTARY_EMBEDDING_CONFIG);
  g_type_ensure (HP_TYPE_SDPA_CONFIG);
  g_type_ensure (HP_TYPE_GQ_ATTENTION_CONFIG);
  g_type_ensure (HP_TYPE_TRANSFORMER_BLOCK_CONFIG);
  g_type_ensure (HP_TYPE_DECODER_CONFIG);
  g_type_ensure (HP_TYPE_OPTIMIZER_CONFIG);
  g_type_ensure (HP_TYPE_ADAMW_CONFIG);
  g_type_ensure (HP_TYPE_SGD_CONFIG);
  g_type_ensure (FUZZ_TYPE_EVERY_CONFIG);

  requested_types[0] = HP_TYPE_CONFIG;
  requested_types[1] = HP_TYPE_DECODER_CONFIG;
  requested_types[2] = HP_TYPE_LINEAR_CONFIG;
  requested_types[3] = HP_TYPE_MODULE_CONFIG;
  requested_types[4] = HP_TYPE_OPTIMIZER_CONFIG;
  requested_types[5] = FUZZ_TYPE_EVERY_CONFIG;
}

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_make_warnings_fatal ();
  register_types ();
  return 0;
}

static void G_GNUC_NORETURN
round_trip_failure (const gchar *what,
                    const gchar *text,
                    const gchar *detail)
{
  fprintf (stderr, "config JSON round trip: %s\n--- written:\n%s\n--- detail:\n%s\n",
           what, text, detail != NULL ? detail : "");
  abort ();
}

/* The JSON nesting the library reads (objects and arrays). It writes
 * deeper JSON: the defaults of a nested configuration can add levels to
 * what was read. */
#define JSON_MAX_DEPTH 64

static guint
json_depth (JsonNode *node)
{
  guint deepest = 0;

  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObjectIter iter;
      JsonNode *member;

      json_object_iter_init (&iter, json_node_get_object (node));
      while (json_object_iter_next (&iter, NULL, &member))
        {
          guint depth = json_depth (member);

          deepest = MAX (deepest, depth);
        }
      return deepest + 1;
    }
  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          guint depth = json_depth (json_array_get_element (array, i));

          deepest = MAX (deepest, depth);
        }
      return deepest + 1;
    }
  return 0;
}

/* @config written as JSON (compact and pretty, and as a node) reads back
 * as @type to an equal configuration of the same type with the same
 * JSON; returns the configuration read from the pretty text. JSON text
 * nested deeper than the reader takes must fail with HP_ERROR_FORMAT,
 * and then the node's round trip gives the configuration returned. */
static HpConfig *
check_round_trip (HpConfig *config,
                  GType     type)
{
  HpConfig *pretty_back = NULL;
  g_autoptr(HpConfig) copy = NULL;
  g_autoptr(JsonNode) node = hp_config_to_json_node (config);
  gboolean too_deep = json_depth (node) > JSON_MAX_DEPTH;
  g_autofree gchar *text = NULL;
  g_autofree gchar *copy_text = NULL;

  for (guint pretty = 0; pretty < 2; pretty++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree gchar *again = NULL;
      g_autoptr(HpConfig) back = NULL;

      g_free (text);
      text = hp_config_to_json (config, pretty);
      back = hp_config_new_from_json (type, text, &error);
      if (too_deep)
        {
          if (back != NULL || !g_error_matches (error, HP_ERROR, HP_ERROR_FORMAT))
            round_trip_failure ("the JSON written is deeper than the reader takes, but reads", text,
                                error != NULL ? error->message : NULL);
          continue;
        }
      if (back == NULL)
        round_trip_failure ("the JSON written does not read back", text, error->message);
      if (G_OBJECT_TYPE (back) != G_OBJECT_TYPE (config))
        round_trip_failure ("the JSON written reads back to another type", text,
                            G_OBJECT_TYPE_NAME (back));
      if (!hp_config_equal (back, config))
        round_trip_failure ("the JSON written reads back to a different configuration", text, NULL);
      again = hp_config_to_json (back, pretty);
      if (strcmp (again, text) != 0)
        round_trip_failure ("the configuration read back writes other JSON", text, again);
      if (pretty)
        pretty_back = g_steal_pointer (&back);
    }

  /* through json-glib nodes, which have no depth limit */
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(HpConfig) back = hp_config_new_from_json_node (type, node, &error);

    if (back == NULL)
      round_trip_failure ("the JSON node written does not read back", text, error->message);
    if (G_OBJECT_TYPE (back) != G_OBJECT_TYPE (config))
      round_trip_failure ("the JSON node written reads back to another type", text,
                          G_OBJECT_TYPE_NAME (back));
    if (!hp_config_equal (back, config))
      round_trip_failure ("the JSON node written reads back to a different configuration", text, NULL);
    if (too_deep)
      pretty_back = g_steal_pointer (&back);
  }

  copy = hp_config_copy (config);
  if (!hp_config_equal (copy, config) || !hp_config_equal (config, copy))
    round_trip_failure ("a copy is not equal", text, NULL);
  copy_text = hp_config_to_json (copy, TRUE);
  if (strcmp (copy_text, text) != 0)
    round_trip_failure ("a copy writes other JSON", text, copy_text);

  return pretty_back;
}

/* What hp-train does with a decoder config it read: make the missing
 * parts and install the tensor-parallel shardings */
static void
check_parallelize (HpDecoderConfig *decoder)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) dims = NULL;
  gint n_layers = 0;

  g_object_get (decoder, "n-layers", &n_layers, NULL);
  if (n_layers > MAX_EXPANDED_LAYERS)
    return;

  dims = g_object_new (HP_TYPE_PARALLEL_DIMS, "tp", 2, NULL);
  if (!hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (decoder), dims, &error))
    {
      if (!g_error_matches (error, HP_ERROR, HP_ERROR_CONFIG))
        abort ();
      return;
    }
  g_object_unref (check_round_trip (HP_CONFIG (decoder), HP_TYPE_DECODER_CONFIG));
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = NULL;
  g_autoptr(HpConfig) back = NULL;
  g_autofree gchar *text = NULL;
  GType type;

  if (size == 0)
    return 0;

  type = requested_types[data[0] % G_N_ELEMENTS (requested_types)];
  text = g_strndup ((const gchar *) data + 1, size - 1);

  config = hp_config_new_from_json (type, text, &error);
  if (config == NULL)
    {
      if (error == NULL || error->domain != HP_ERROR ||
          (error->code != HP_ERROR_FORMAT && error->code != HP_ERROR_CONFIG) ||
          !g_utf8_validate (error->message, -1, NULL))
        abort ();
      return 0;
    }
  if (error != NULL || !g_type_is_a (G_OBJECT_TYPE (config), type))
    abort ();

  /* the configuration read back is a new tree, which the decoder step
   * may change */
  back = check_round_trip (config, type);
  if (HP_IS_DECODER_CONFIG (back))
    check_parallelize (HP_DECODER_CONFIG (back));
  return 0;
}
