/* test-config-paths.c: dotted paths into the sharding config of a
 * configuration (hp_config_set_path_from_string(),
 * hp_config_get_path_as_string(), hp_config_get_value(),
 * hp_config_set_value())
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "hp-test-utils.h"
#include "test-config-types.h"

static HpShardingConfig *
sharding_of (HpConfig *config)
{
  return hp_module_config_get_sharding_config (HP_MODULE_CONFIG (config));
}

static void
assert_state (HpConfig    *config,
              const gchar *name,
              const gchar *expected)
{
  HpNamedPlacement *named = hp_sharding_config_get_state_sharding (sharding_of (config), name);
  g_autofree gchar *text = named != NULL ? hp_named_placement_to_string (named) : NULL;

  g_assert_cmpstr (text, ==, expected);
}

static void
count_changes (HpShardingConfig *sharding,
               guint            *count)
{
  (*count)++;
}

/* Every entry of a sharding config, set and read back by path, from a
 * null sharding config on */
static void
test_entries (void)
{
  g_autoptr(HpConfig) config = g_object_new (TEST_TYPE_SHARDED_CONFIG, NULL);
  g_autoptr(HpConfig) back = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *json = NULL;
  HpShardingConfig *sharding;
  guint changes = 0;

  /* a null sharding config has no entries, and reading makes none */
  g_assert_null (sharding_of (config));
  hp_test_assert_path (config, "sharding-config.state-shardings.weight", NULL);
  hp_test_assert_path (config, "sharding-config.out-dst-shardings.0", NULL);
  hp_test_assert_path (config, "sharding-config.local-map", NULL);
  g_assert_null (sharding_of (config));
  /* nor does removing an entry */
  hp_test_set_path (config, "sharding-config.state-shardings.weight", "null");
  hp_test_set_path (config, "sharding-config.in-src-shardings.x", NULL);
  g_assert_null (sharding_of (config));

  /* setting one makes it */
  hp_test_set_path (config, "sharding-config.state-shardings.weight", "tp:S(1)");
  sharding = sharding_of (config);
  g_assert_nonnull (sharding);
  assert_state (config, "weight", "tp:S(1)");
  hp_test_assert_path (config, "sharding-config.state-shardings.weight", "tp:S(1)");

  /* later entries go into the same sharding config, one change each */
  g_signal_connect (sharding, "changed", G_CALLBACK (count_changes), &changes);
  hp_test_set_path (config, "sharding-config.state-shardings.attention.wq.weight", "tp:S(0), dp:R");
  hp_test_set_path (config, "sharding_config.in_src_shardings.x", "tp:R");
  hp_test_set_path (config, "sharding-config.in-dst-shardings.x", "tp:S(1)");
  hp_test_set_path (config, "sharding-config.out-src-shardings.0", "tp:S(-1)");
  hp_test_set_path (config, "sharding-config.out-dst-shardings.2", "dp:R");
  hp_test_set_path (config, "sharding-config.local-map",
            "{\"callable-path\": \"attention\", \"in-placements\": [{\"tp\": \"S(0)\"}]}");
  g_assert_true (sharding_of (config) == sharding);
  g_assert_cmpuint (changes, ==, 6);

  assert_state (config, "attention.wq.weight", "tp:S(0), dp:R");
  hp_test_assert_path (config, "sharding-config.state-shardings.attention.wq.weight", "tp:S(0), dp:R");
  hp_test_assert_path (config, "sharding-config.in-src-shardings.x", "tp:R");
  hp_test_assert_path (config, "sharding-config.in-dst-shardings.x", "tp:S(1)");
  hp_test_assert_path (config, "sharding-config.in-dst-shardings.y", NULL);
  hp_test_assert_path (config, "sharding-config.out-src-shardings.0", "tp:S(-1)");
  /* the list grew with null entries */
  g_assert_cmpuint (hp_sharding_config_get_n_out_dst_shardings (sharding), ==, 3);
  hp_test_assert_path (config, "sharding-config.out-dst-shardings.0", NULL);
  hp_test_assert_path (config, "sharding-config.out-dst-shardings.2", "dp:R");
  hp_test_assert_path (config, "sharding-config.out-dst-shardings.9", NULL);
  g_assert_cmpstr (hp_local_map_config_get_callable_path (hp_sharding_config_get_local_map (sharding)),
                   ==, "attention");
  hp_test_assert_path (config, "sharding-config.local-map",
               "{\"callable-path\": \"attention\", \"in-placements\": [{\"tp\": \"S(0)\"}], "
               "\"out-placements\": [], \"in-grad-placements\": null}");

  /* the whole sharding config, as JSON, reads back equal */
  json = hp_config_to_json (config, FALSE);
  back = hp_config_new_from_json (TEST_TYPE_SHARDED_CONFIG, json, &error);
  g_assert_no_error (error);
  g_assert_true (hp_config_equal (back, config));

  /* null removes an entry; the last output entry shortens the list */
  hp_test_set_path (config, "sharding-config.state-shardings.weight", "null");
  hp_test_assert_path (config, "sharding-config.state-shardings.weight", NULL);
  hp_test_set_path (config, "sharding-config.out-dst-shardings.2", NULL);
  g_assert_cmpuint (hp_sharding_config_get_n_out_dst_shardings (sharding), ==, 0);
  hp_test_set_path (config, "sharding-config.local-map", "null");
  g_assert_null (hp_sharding_config_get_local_map (sharding));
  /* setting an equal entry changes nothing */
  changes = 0;
  hp_test_set_path (config, "sharding-config.in-src-shardings.x", "tp:R");
  g_assert_cmpuint (changes, ==, 0);
}

/* Sharding configs nested in configurations and list items */
static void
test_nested (void)
{
  g_autoptr(HpConfig) toy = g_object_new (TEST_TYPE_TOY_CONFIG, NULL);
  g_autoptr(HpConfig) populated = test_sharded_config_new_populated ();
  g_autoptr(HpConfigList) layers = hp_config_list_new ();

  hp_config_list_append (layers, populated);
  g_object_set (toy, "layers", layers, NULL);

  /* the entries of the populated config, by path */
  hp_test_assert_path (toy, "layers.0.sharding-config.state-shardings.layers.0.weight", "tp:S(0)");
  hp_test_assert_path (toy, "layers.0.sharding-config.state-shardings.bias", "tp:R");
  hp_test_assert_path (toy, "layers.0.sharding-config.in-dst-shardings.x", "tp:S(1), dp:S(0)");
  hp_test_assert_path (toy, "layers.0.sharding-config.out-src-shardings.0", NULL);
  hp_test_assert_path (toy, "layers.0.sharding-config.out-src-shardings.1", "tp:S(-1)");
  /* a named placement without axes is the empty text */
  hp_test_assert_path (toy, "layers.0.sharding-config.out-dst-shardings.0", "");

  hp_test_set_path (toy, "layers.0.sharding-config.state-shardings.bias", "tp:S(0)");
  hp_test_set_path (toy, "layers.0.sharding-config.out-dst-shardings.0", "tp:R");
  assert_state (populated, "bias", "tp:S(0)");
  hp_test_assert_path (populated, "sharding-config.out-dst-shardings.0", "tp:R");
}

/* hp_config_get_value() and hp_config_set_value() on entries */
static void
test_values (void)
{
  g_autoptr(HpConfig) config = g_object_new (TEST_TYPE_SHARDED_CONFIG, NULL);
  g_autoptr(HpNamedPlacement) named = hp_test_named ("tp:S(1)");
  g_autoptr(HpLocalMapConfig) local_map = hp_local_map_config_new ("attention");
  g_autoptr(GError) error = NULL;
  g_auto(GValue) value = G_VALUE_INIT;
  g_auto(GValue) got = G_VALUE_INIT;
  g_auto(GValue) none = G_VALUE_INIT;
  g_auto(GValue) map_value = G_VALUE_INIT;
  g_auto(GValue) map_got = G_VALUE_INIT;

  /* an entry that is not set is a NULL named placement */
  g_assert_true (hp_config_get_value (config, "sharding-config.state-shardings.weight", &got, &error));
  g_assert_no_error (error);
  g_assert_true (G_VALUE_HOLDS (&got, HP_TYPE_NAMED_PLACEMENT));
  g_assert_null (g_value_get_object (&got));
  g_value_unset (&got);

  g_value_init (&value, HP_TYPE_NAMED_PLACEMENT);
  g_value_set_object (&value, named);
  g_assert_true (hp_config_set_value (config, "sharding-config.state-shardings.weight", &value, &error));
  g_assert_no_error (error);
  g_assert_true (hp_config_get_value (config, "sharding-config.state-shardings.weight", &got, &error));
  g_assert_true (g_value_get_object (&got) == named);
  g_value_unset (&got);

  g_assert_true (hp_config_set_value (config, "sharding-config.out-src-shardings.1", &value, &error));
  g_assert_cmpuint (hp_sharding_config_get_n_out_src_shardings (sharding_of (config)), ==, 2);

  /* a NULL object removes the entry; so does a NULL pointer, gjs's null */
  g_value_init (&none, HP_TYPE_NAMED_PLACEMENT);
  g_assert_true (hp_config_set_value (config, "sharding-config.state-shardings.weight", &none, &error));
  assert_state (config, "weight", NULL);
  g_value_unset (&none);
  g_value_init (&none, G_TYPE_POINTER);
  g_assert_true (hp_config_set_value (config, "sharding-config.out-src-shardings.1", &none, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (hp_sharding_config_get_n_out_src_shardings (sharding_of (config)), ==, 0);

  g_value_init (&map_value, HP_TYPE_LOCAL_MAP_CONFIG);
  g_value_set_object (&map_value, local_map);
  g_assert_true (hp_config_set_value (config, "sharding-config.local-map", &map_value, &error));
  g_assert_true (hp_config_get_value (config, "sharding-config.local-map", &map_got, &error));
  g_assert_true (g_value_get_object (&map_got) == local_map);
}

/* A path error or a value that does not fit: HP_ERROR_CONFIG naming the
 * path, and nothing changed (no sharding config made either) */
static void
assert_set_fails (HpConfig    *config,
                  const gchar *path,
                  const gchar *value,
                  const gchar *message)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *before = hp_config_to_json (config, FALSE);
  g_autofree gchar *after = NULL;
  g_autofree gchar *got = NULL;

  g_assert_false (hp_config_set_path_from_string (config, path, value, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, message);
  after = hp_config_to_json (config, FALSE);
  g_assert_cmpstr (after, ==, before);

  /* reading the path fails the same way, unless only the value was bad */
  g_clear_error (&error);
  got = hp_config_get_path_as_string (config, path, &error);
  if (error != NULL)
    g_assert_cmpstr (error->message, ==, message);
}

static void
test_errors (void)
{
  g_autoptr(HpConfig) config = g_object_new (TEST_TYPE_SHARDED_CONFIG, NULL);
  g_autoptr(HpConfig) populated = test_sharded_config_new_populated ();
  g_autoptr(GError) error = NULL;
  g_auto(GValue) number = G_VALUE_INIT;
  g_auto(GValue) wrong_object = G_VALUE_INIT;
  g_auto(GValue) got = G_VALUE_INIT;
  g_autoptr(HpLocalMapConfig) local_map = hp_local_map_config_new (NULL);
  static const struct {
    const gchar *path;
    const gchar *value;
    const gchar *message;
  } cases[] = {
    { "sharding-config.state-sharding.weight", "tp:R",
      "sharding-config.state-sharding: no field 'state-sharding' in HpShardingConfig" },
    { "sharding-config.state-shardings", "tp:R",
      "sharding-config.state-shardings: expected an entry name after it" },
    { "sharding-config.out-dst-shardings", "tp:R",
      "sharding-config.out-dst-shardings: expected an output index after it" },
    { "sharding-config.out-dst-shardings.first", "tp:R",
      "sharding-config.out-dst-shardings.first: expected an output index, got 'first'" },
    { "sharding-config.out-dst-shardings.-1", "tp:R",
      "sharding-config.out-dst-shardings.-1: expected an output index, got '-1'" },
    { "sharding-config.out-dst-shardings.0.tp", "R",
      "sharding-config.out-dst-shardings.0: is a named placement, so it has no field 'tp'" },
    { "sharding-config.state-shardings.attention..weight", "tp:R",
      "sharding-config.state-shardings.attention.: empty name" },
    { "sharding-config..weight", "tp:R", "sharding-config.: empty field name" },
    { "sharding-config.local-map.callable-path", "f",
      "sharding-config.local-map: is a HpLocalMapConfig, set as a whole in its JSON form, "
      "so it has no field 'callable-path'" },
    { "sharding-config.state-shardings.weight", "tp:S(x)",
      "sharding-config.state-shardings.weight: cannot parse named placement 'tp:S(x)': "
      "entry 'tp:S(x)': cannot parse placement 'S(x)': shard dim 'x' is not an integer" },
    { "sharding-config.in-src-shardings.x", "tp",
      "sharding-config.in-src-shardings.x: cannot parse named placement 'tp': "
      "entry 'tp' is not axis:placement" },
    { "sharding-config.local-map", "{\"callable\": \"f\"}",
      "sharding-config.local-map.callable: no field 'callable' in HpLocalMapConfig" },
    { "sharding-config.local-map", "{",
      "sharding-config.local-map: not valid JSON: unexpected end at byte 1" },
    /* the other object fields have no parts */
    { "param-init.weight", "zeros", "param-init: is a HpParamInit field, not a configuration or a list" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      assert_set_fails (config, cases[i].path, cases[i].value, cases[i].message);
      g_assert_null (sharding_of (config));
      assert_set_fails (populated, cases[i].path, cases[i].value, cases[i].message);
    }

  /* hp_config_set_value() takes named placements (local map configs for
   * local-map) and null */
  g_value_init (&number, G_TYPE_INT);
  g_assert_false (hp_config_set_value (populated, "sharding-config.state-shardings.bias", &number, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, "sharding-config.state-shardings.bias: "
                   "expected a HpNamedPlacement or null, not gint");
  g_clear_error (&error);
  g_value_init (&wrong_object, HP_TYPE_LOCAL_MAP_CONFIG);
  g_value_set_object (&wrong_object, local_map);
  g_assert_false (hp_config_set_value (populated, "sharding-config.out-src-shardings.1", &wrong_object, &error));
  g_assert_cmpstr (error->message, ==, "sharding-config.out-src-shardings.1: "
                   "expected a HpNamedPlacement or null, not HpLocalMapConfig");
  g_clear_error (&error);
  hp_test_assert_path (populated, "sharding-config.state-shardings.bias", "tp:R");
  hp_test_assert_path (populated, "sharding-config.out-src-shardings.1", "tp:S(-1)");
  g_assert_false (hp_config_get_value (populated, "sharding-config.nope.x", &got, &error));
  g_assert_cmpstr (error->message, ==, "sharding-config.nope: no field 'nope' in HpShardingConfig");
  g_assert_false (G_IS_VALUE (&got));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/config/path/sharding/entries", test_entries);
  g_test_add_func ("/config/path/sharding/nested", test_nested);
  g_test_add_func ("/config/path/sharding/values", test_values);
  g_test_add_func ("/config/path/sharding/errors", test_errors);

  return g_test_run ();
}
