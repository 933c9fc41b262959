/* test-config-json.c: configurations as JSON, written and strictly read
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <float.h>
#include <math.h>
#include <string.h>

#include "hp-test-utils.h"
#include "test-config-types.h"

/* to_json -> new_from_json (as @read_type) gives an equal config of the
 * same type whose JSON is the same text; returns the copy */
static HpConfig *
assert_round_trip (HpConfig *config,
                   GType     read_type)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *pretty = hp_config_to_json (config, TRUE);
  g_autofree gchar *compact = hp_config_to_json (config, FALSE);
  g_autofree gchar *again = NULL;
  g_autoptr(HpConfig) from_compact = NULL;
  HpConfig *back;

  back = hp_config_new_from_json (read_type, pretty, &error);
  g_assert_no_error (error);
  g_assert_true (G_OBJECT_TYPE (back) == G_OBJECT_TYPE (config));
  g_assert_true (hp_config_equal (back, config));
  again = hp_config_to_json (back, TRUE);
  g_assert_cmpstr (again, ==, pretty);

  from_compact = hp_config_new_from_json (read_type, compact, &error);
  g_assert_no_error (error);
  g_assert_true (hp_config_equal (from_compact, config));
  return back;
}

static HpConfig *
from_json (GType        type,
           const gchar *json)
{
  g_autoptr(GError) error = NULL;
  HpConfig *config = hp_config_new_from_json (type, json, &error);

  g_assert_no_error (error);
  g_assert_nonnull (config);
  return config;
}

/* ------------------------------------------------------------------ */

static void
test_text (void)
{
  g_autoptr(HpConfig) toy = g_object_new (TEST_TYPE_TOY_CONFIG, NULL);
  g_autoptr(HpConfig) leaf = g_object_new (TEST_TYPE_LEAF_CONFIG, "depth", 3, NULL);
  g_autoptr(HpConfig) layer = g_object_new (TEST_TYPE_LAYER_CONFIG, "leaf", leaf, NULL);
  g_autofree gchar *compact = hp_config_to_json (toy, FALSE);
  g_autofree gchar *pretty = hp_config_to_json (layer, TRUE);
  g_autoptr(JsonNode) node = hp_config_to_json_node (layer);
  g_autoptr(GList) members = NULL;

  /* every field, defaults too, in field order, after "@type" */
  g_assert_cmpstr (compact, ==,
                   "{\"@type\": \"TestToyConfig\", \"flag\": false, \"n-heads\": 8, \"count\": 3, "
                   "\"offset\": -1, \"size\": 0, \"big\": 0, \"seed\": 42, \"ratio\": 0.5, "
                   "\"lr\": 0.001, \"bias\": 0.0, \"name\": \"toy\", \"kind\": \"small\", "
                   "\"options\": [], \"tags\": null, \"middle\": null, \"layers\": null, "
                   "\"placement\": null}");
  g_assert_cmpstr (pretty, ==,
                   "{\n"
                   "  \"@type\": \"TestLayerConfig\",\n"
                   "  \"n-heads\": 8,\n"
                   "  \"leaf\": {\n"
                   "    \"@type\": \"TestLeafConfig\",\n"
                   "    \"depth\": 3,\n"
                   "    \"scale\": 1.0\n"
                   "  }\n"
                   "}");

  g_assert_true (JSON_NODE_HOLDS_OBJECT (node));
  members = json_object_get_members (json_node_get_object (node));
  g_assert_cmpstr (members->data, ==, "@type");
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (node), "@type"), ==, "TestLayerConfig");
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (node), "n-heads"), ==, 8);
}

static void
test_round_trip (void)
{
  g_autoptr(HpConfig) toy = test_toy_config_new_populated ();
  g_autoptr(HpConfig) fancy = g_object_new (TEST_TYPE_FANCY_TOY_CONFIG, "extra", 2, NULL);
  g_autoptr(HpConfig) sharded = test_sharded_config_new_populated ();
  g_autoptr(HpConfig) empty_sharded = g_object_new (TEST_TYPE_SHARDED_CONFIG, NULL);
  g_autoptr(HpModuleConfig) module = hp_module_config_new ();
  g_autoptr(HpConfig) back = NULL;
  HpConfigList *layers;

  g_clear_object (&back);
  back = assert_round_trip (toy, TEST_TYPE_TOY_CONFIG);
  /* the nested objects are new ones */
  g_assert_true (hp_test_get_object (back, "middle") != hp_test_get_object (toy, "middle"));
  layers = hp_test_get_object (back, "layers");
  g_assert_cmpuint (hp_config_list_get_length (layers), ==, 2);
  g_assert_true (G_OBJECT_TYPE (hp_config_list_peek (layers, 1)) == TEST_TYPE_LAYER_CONFIG);

  /* the "@type" of the root picks the subtype */
  g_clear_object (&back);
  back = assert_round_trip (fancy, TEST_TYPE_TOY_CONFIG);
  g_clear_object (&back);
  back = assert_round_trip (toy, HP_TYPE_CONFIG);

  g_clear_object (&back);
  back = assert_round_trip (sharded, TEST_TYPE_SHARDED_CONFIG);
  g_assert_true (hp_test_get_object (back, "sharding-config") != hp_test_get_object (sharded, "sharding-config"));
  g_clear_object (&back);
  back = assert_round_trip (empty_sharded, HP_TYPE_MODULE_CONFIG);
  g_clear_object (&back);
  back = assert_round_trip (HP_CONFIG (module), HP_TYPE_MODULE_CONFIG);

  /* to_json (from_json (to_json (c))) == to_json (c) also for the copy */
  {
    g_autoptr(HpConfig) copy = hp_config_copy (toy);
    g_autofree gchar *a = hp_config_to_json (toy, FALSE);
    g_autofree gchar *b = hp_config_to_json (copy, FALSE);

    g_assert_cmpstr (a, ==, b);
  }
}

static void
assert_double_round_trip (HpConfig *config,
                          gdouble   number)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *json = NULL;
  g_autoptr(HpConfig) back = NULL;
  gdouble read;

  g_object_set (config, "bias", number, NULL);
  json = hp_config_to_json (config, FALSE);
  back = hp_config_new_from_json (TEST_TYPE_TOY_CONFIG, json, &error);
  g_assert_no_error (error);
  read = hp_test_get_double (back, "bias");
  if (memcmp (&read, &number, sizeof number) != 0)
    g_error ("%.17g read back as %.17g from %s", number, read, json);
}

static void
assert_float_round_trip (HpConfig *config,
                         gfloat    number)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *json = NULL;
  g_autoptr(HpConfig) back = NULL;
  gfloat read;

  g_object_set (config, "ratio", number, NULL);
  json = hp_config_to_json (config, FALSE);
  back = hp_config_new_from_json (TEST_TYPE_TOY_CONFIG, json, &error);
  g_assert_no_error (error);
  g_object_get (back, "ratio", &read, NULL);
  if (memcmp (&read, &number, sizeof number) != 0)
    g_error ("%.9g read back as %.9g from %s", number, read, json);
}

static void
assert_member (HpConfig    *config,
               const gchar *fragment)
{
  g_autofree gchar *json = hp_config_to_json (config, FALSE);

  if (strstr (json, fragment) == NULL)
    g_error ("%s lacks %s", json, fragment);
}

static void
test_round_trip_numbers (void)
{
  static const gdouble doubles[] = {
    0.1, 1.0 / 3.0, -0.0, 0.0, 1e-300, 5e-324, DBL_MAX, -DBL_MAX, DBL_MIN, 1e16, 1e15,
    123456789012345678.0, 9007199254740993.0, 2.5e-5, INFINITY, -INFINITY,
  };
  static const gfloat floats[] = { 0.1f, 1.0f / 3.0f, -0.0f, FLT_MAX, -FLT_MAX, FLT_MIN, 1e-45f, 16777217.0f };
  g_autoptr(HpConfig) config = g_object_new (TEST_TYPE_TOY_CONFIG, NULL);
  g_autoptr(HpConfig) back = NULL;
  g_autoptr(GRand) rand = g_rand_new_with_seed (7);

  for (guint i = 0; i < G_N_ELEMENTS (doubles); i++)
    assert_double_round_trip (config, doubles[i]);
  /* random bit patterns: every finite double reads back exactly */
  for (guint i = 0; i < 2000; i++)
    {
      guint64 bits = ((guint64) g_rand_int (rand) << 32) | g_rand_int (rand);
      gdouble number;

      memcpy (&number, &bits, sizeof number);
      if (isfinite (number))
        assert_double_round_trip (config, number);
    }
  for (guint i = 0; i < G_N_ELEMENTS (floats); i++)
    assert_float_round_trip (config, floats[i]);
  for (guint i = 0; i < 2000; i++)
    {
      guint32 bits = g_rand_int (rand);
      gfloat number;

      memcpy (&number, &bits, sizeof number);
      if (isfinite (number))
        assert_float_round_trip (config, number);
    }

  /* the short forms */
  g_object_set (config, "ratio", 0.1f, "lr", 0.1, "bias", 1e-5, NULL);
  assert_member (config, "\"ratio\": 0.1,");
  assert_member (config, "\"lr\": 0.1,");
  assert_member (config, "\"bias\": 1.0e-05,");
  g_object_set (config, "bias", 1e16, NULL);
  assert_member (config, "\"bias\": 1.0e+16,");
  g_object_set (config, "bias", 1e15, NULL);
  assert_member (config, "\"bias\": 1000000000000000.0,");
  g_object_set (config, "bias", -INFINITY, NULL);
  assert_member (config, "\"bias\": \"-inf\",");

  /* the ends of the integer ranges; uint64 above int64 as text */
  g_object_set (config,
                "count", G_MAXUINT,
                "offset", G_MINLONG,
                "size", G_MAXULONG,
                "big", G_MININT64,
                "seed", G_MAXUINT64,
                NULL);
  assert_member (config, "\"count\": 4294967295,");
  assert_member (config, "\"seed\": \"18446744073709551615\",");
  back = assert_round_trip (config, TEST_TYPE_TOY_CONFIG);
  g_clear_object (&back);
  g_object_set (config, "seed", (guint64) G_MAXINT64, "big", G_MAXINT64, NULL);
  assert_member (config, "\"seed\": 9223372036854775807,");
  back = assert_round_trip (config, TEST_TYPE_TOY_CONFIG);
  g_clear_object (&back);
  g_object_set (config, "seed", (guint64) G_MAXINT64 + 1, NULL);
  assert_member (config, "\"seed\": \"9223372036854775808\",");
  back = assert_round_trip (config, TEST_TYPE_TOY_CONFIG);
}

static void
test_round_trip_strings (void)
{
  const gchar *tags[] = { "", "a,b", " c ", "null", NULL };
  const gchar *no_tags[] = { NULL };
  g_autoptr(HpConfig) config = g_object_new (TEST_TYPE_TOY_CONFIG,
                                             "name", "q\"b\\s/\n\t\r\b\f\x01\x7f\xc2\x85\xc3\xa9"
                                                     "\xe2\x80\xa8\xef\xbb\xbf\xf0\x9f\x98\x80",
                                             "tags", tags,
                                             NULL);
  g_autoptr(HpConfig) empty = g_object_new (TEST_TYPE_TOY_CONFIG, "name", NULL, "tags", no_tags, NULL);
  g_autoptr(HpConfig) back = NULL;

  /* escapes for JSON and for YAML; other UTF-8 as it is */
  assert_member (config, "\"name\": \"q\\\"b\\\\s/\\n\\t\\r\\b\\f\\u0001\\u007f\\u0085\xc3\xa9"
                         "\\u2028\\ufeff\xf0\x9f\x98\x80\",");
  assert_member (config, "\"tags\": [\"\", \"a,b\", \" c \", \"null\"],");
  back = assert_round_trip (config, TEST_TYPE_TOY_CONFIG);
  g_clear_object (&back);

  /* NULL string, empty (not NULL) string array */
  assert_member (empty, "\"name\": null,");
  assert_member (empty, "\"tags\": [],");
  back = assert_round_trip (empty, TEST_TYPE_TOY_CONFIG);
}

static void
test_read_lenient_forms (void)
{
  g_autoptr(HpConfig) defaults = g_object_new (TEST_TYPE_TOY_CONFIG, NULL);
  g_autoptr(HpConfig) read = NULL;
  g_autoptr(HpConfig) expected = NULL;

  /* missing members keep their defaults; no "@type" needed for a
   * concrete type */
  read = from_json (TEST_TYPE_TOY_CONFIG, "{}");
  g_assert_true (hp_config_equal (read, defaults));
  g_clear_object (&read);

  /* '_' for '-', an integer for a number, uint64 above int64 as text,
   * infinities */
  read = from_json (TEST_TYPE_TOY_CONFIG,
                    "{\"n_heads\": 3, \"lr\": 2, \"seed\": \"9223372036854775809\", \"bias\": \"inf\", "
                    "\"middle\": {\"leaf\": {\"depth\": 4}}}");
  g_assert_cmpint (hp_test_get_int (read, "n-heads"), ==, 3);
  g_assert_cmpfloat (hp_test_get_double (read, "lr"), ==, 2.0);
  g_assert_cmpfloat (hp_test_get_double (read, "bias"), ==, INFINITY);
  g_assert_cmpint (hp_test_get_int (hp_test_get_object (hp_test_get_object (read, "middle"), "leaf"), "depth"), ==, 4);
  expected = hp_config_replace (defaults, "n-heads", 3, "lr", 2.0, "seed", G_GUINT64_CONSTANT (9223372036854775809),
                                "bias", INFINITY, NULL);
  g_object_set (expected, "middle", hp_test_get_object (read, "middle"), NULL);
  g_assert_true (hp_config_equal (read, expected));
  g_clear_object (&read);

  /* digits in a string are no integer literal; an escaped surrogate
   * pair is one character */
  read = from_json (TEST_TYPE_TOY_CONFIG,
                    "{\"n-heads\": 5, \"name\": \"99999999999999999999 \\ud83d\\ude00\"}");
  g_assert_cmpint (hp_test_get_int (read, "n-heads"), ==, 5);
  assert_member (read, "\"name\": \"99999999999999999999 \xf0\x9f\x98\x80\",");
}

static void
test_read_errors (void)
{
  static const struct { const gchar *json; gint code; const gchar *message; } cases[] = {
    { "{\"nope\": 1}", HP_ERROR_CONFIG, "nope: no field 'nope' in TestToyConfig" },
    { "{\"mode\": 1}", HP_ERROR_CONFIG, "mode: no field 'mode' in TestToyConfig" },
    { "{\"n-heads\": 2, \"n_heads\": 3}", HP_ERROR_CONFIG, "n_heads: field 'n-heads' is given twice" },
    { "[]", HP_ERROR_CONFIG, "expected an object for TestToyConfig, got an array" },
    { "{\"flag\": 1}", HP_ERROR_CONFIG, "flag: expected a boolean, got an integer" },
    { "{\"n-heads\": \"4\"}", HP_ERROR_CONFIG, "n-heads: expected an integer, got a string" },
    { "{\"n-heads\": 4.0}", HP_ERROR_CONFIG, "n-heads: expected an integer, got a number" },
    { "{\"n-heads\": null}", HP_ERROR_CONFIG, "n-heads: expected an integer, got null" },
    { "{\"n-heads\": 0}", HP_ERROR_CONFIG, "n-heads: value 0 out of range [1, 1024]" },
    { "{\"count\": -1}", HP_ERROR_CONFIG, "count: value -1 out of range [0, 4294967295]" },
    { "{\"count\": \"4294967296\"}", HP_ERROR_CONFIG, "count: expected an integer, got a string" },
    { "{\"seed\": \"12\"}", HP_ERROR_CONFIG, "seed: expected an integer, got a string" },
    { "{\"seed\": \"-1\"}", HP_ERROR_CONFIG, "seed: expected an integer, got a string" },
    { "{\"count\": \"18446744073709551615\"}", HP_ERROR_CONFIG,
      "count: value 18446744073709551615 out of range [0, 4294967295]" },
    { "{\"big\": \"18446744073709551615\"}", HP_ERROR_CONFIG, "big: expected an integer, got a string" },
    { "{\"seed\": \"12x\"}", HP_ERROR_CONFIG, "seed: expected an integer, got a string" },
    /* integer literals beyond 64 bits are refused, not wrapped */
    { "{\"n-heads\": 99999999999999999999}", HP_ERROR_FORMAT,
      "not valid JSON: integer out of the 64-bit range at byte 12" },
    { "{\n\"big\": -9223372036854775809}", HP_ERROR_FORMAT,
      "not valid JSON: integer out of the 64-bit range at byte 9" },
    { "{\"name\": \"\\\"\\n\\\\ 99999999999999999999\", \n\"big\": 18446744073709551616}", HP_ERROR_FORMAT,
      "not valid JSON: integer out of the 64-bit range at byte 48" },
    { "{\"lr\": 11.5}", HP_ERROR_CONFIG, "lr: value 11.5 out of range [0.0, 10.0]" },
    { "{\"lr\": \"inf\"}", HP_ERROR_CONFIG, "lr: value inf out of range [0.0, 10.0]" },
    { "{\"lr\": \"fast\"}", HP_ERROR_CONFIG, "lr: expected a number, got a string" },
    { "{\"lr\": true}", HP_ERROR_CONFIG, "lr: expected a number, got a boolean" },
    { "{\"bias\": -1e400}", HP_ERROR_CONFIG, "bias: number too large for a double" },
    { "{\"ratio\": 1e39}", HP_ERROR_CONFIG, "ratio: value 1.0e+39 out of range [-3.4028235e+38, 3.4028235e+38]" },
    { "{\"name\": 3}", HP_ERROR_CONFIG, "name: expected a string, got an integer" },
    { "{\"kind\": \"huge\"}", HP_ERROR_CONFIG, "kind: expected one of {small, large}, got 'huge'" },
    { "{\"kind\": \"TEST_SIZE_LARGE\"}", HP_ERROR_CONFIG, "kind: expected one of {small, large}, got 'TEST_SIZE_LARGE'" },
    { "{\"kind\": 1}", HP_ERROR_CONFIG, "kind: expected a string, got an integer" },
    { "{\"options\": \"alpha\"}", HP_ERROR_CONFIG, "options: expected an array of flag nicks, got a string" },
    { "{\"options\": [\"alpha\", \"delta\"]}", HP_ERROR_CONFIG, "options.1: unknown flag 'delta' of TestOptions" },
    { "{\"options\": [1]}", HP_ERROR_CONFIG, "options.0: expected a string, got an integer" },
    { "{\"tags\": \"a\"}", HP_ERROR_CONFIG, "tags: expected an array of strings, got a string" },
    { "{\"tags\": [\"a\", 2]}", HP_ERROR_CONFIG, "tags.1: expected a string, got an integer" },
    { "{\"middle\": 1}", HP_ERROR_CONFIG, "middle: expected an object for TestMiddleConfig, got an integer" },
    { "{\"middle\": {\"leaf\": {\"depth\": -1}}}", HP_ERROR_CONFIG,
      "middle.leaf.depth: value -1 out of range [0, 100]" },
    { "{\"middle\": {\"@type\": \"TestLeafConfig\"}}", HP_ERROR_CONFIG,
      "middle.@type: TestLeafConfig is not a TestMiddleConfig" },
    /* an unknown type says what to load: a library, or the Python module
     * of a Python class (module+Qualified+Name) */
    { "{\"middle\": {\"@type\": \"NoSuchConfig\"}}", HP_ERROR_CONFIG,
      "middle.@type: unknown type 'NoSuchConfig': load the library or introspection namespace "
      "that defines it (hp-config --require NAMESPACE-VERSION)" },
    { "{\"middle\": {\"@type\": \"models+Linear+Config\"}}", HP_ERROR_CONFIG,
      "middle.@type: unknown type 'models+Linear+Config', defined in the Python module 'models': "
      "import it (python3 -m hp_config --import models)" },
    { "{\"middle\": {\"@type\": \"pkg+models+Linear+Config-v2\"}}", HP_ERROR_CONFIG,
      "middle.@type: unknown type 'pkg+models+Linear+Config-v2', defined in the Python module "
      "'pkg.models': import it (python3 -m hp_config --import pkg.models)" },
    { "{\"middle\": {\"@type\": \"Gjs_LinearConfig\"}}", HP_ERROR_CONFIG,
      "middle.@type: unknown type 'Gjs_LinearConfig', defined in JavaScript: import its module "
      "(gjs -m hp-config.js --import FILE)" },
    { "{\"middle\": {\"@type\": \"__main__+Linear+Config\"}}", HP_ERROR_CONFIG,
      "middle.@type: unknown type '__main__+Linear+Config', defined in a Python script run as the "
      "main program: define it in a module and import that (python3 -m hp_config --import MODULE)" },
    { "{\"middle\": {\"@type\": 3}}", HP_ERROR_CONFIG, "middle.@type: expected a type name, got an integer" },
    { "{\"layers\": {}}", HP_ERROR_CONFIG, "layers: expected an array of configurations, got an object" },
    { "{\"layers\": [{\"@type\": \"TestLayerConfig\"}, {\"@type\": \"TestLayerConfig\", \"n-heads\": 0}]}",
      HP_ERROR_CONFIG, "layers.1.n-heads: value 0 out of range [1, 1024]" },
    { "{\"layers\": [{\"n-heads\": 2}]}", HP_ERROR_CONFIG, "layers.0.@type: HpConfig is abstract; name a concrete type" },
    { "{\"layers\": [2]}", HP_ERROR_CONFIG, "layers.0: expected an object for HpConfig, got an integer" },
    { "{\"layers\": [{\"@type\": \"GObject\"}]}", HP_ERROR_CONFIG, "layers.0.@type: GObject is not a HpConfig" },
    { "{\"placement\": \"tp:S(0)\"}", HP_ERROR_CONFIG,
      "placement: expected an object from axis name to placement, got a string" },
    { "{\"placement\": {\"tp\": \"X(0)\"}}", HP_ERROR_CONFIG, "placement.tp: " },
    { "{\"placement\": {\"tp\": 0}}", HP_ERROR_CONFIG, "placement.tp: expected a placement string, got an integer" },
    { "{\"placement\": {\"\": \"R\"}}", HP_ERROR_CONFIG, "placement: empty axis name" },
    /* a number at the very end of the text (read past it before) */
    { "0", HP_ERROR_CONFIG, "expected an object for TestToyConfig, got an integer" },
    { " -12", HP_ERROR_CONFIG, "expected an object for TestToyConfig, got an integer" },
    { "1e5", HP_ERROR_CONFIG, "expected an object for TestToyConfig, got a number" },
    { "99999999999999999999", HP_ERROR_FORMAT, "not valid JSON: integer out of the 64-bit range at byte 0" },
    /* json-glib alone reads a lone surrogate escape into a string that
     * is not UTF-8 (found by fuzz-config-json) */
    { "{\"name\": \"\\ud800x\"}", HP_ERROR_FORMAT,
      "not valid JSON: unpaired surrogate \\ud800 in a string at byte 10" },
    { "{\"placement\": {\"\\ud8\\dtp\": \"R\"}}", HP_ERROR_FORMAT,
      "not valid JSON: bad \\u escape in a string at byte 16" },
    { "{\"n-heads\": }", HP_ERROR_FORMAT, "not valid JSON: unexpected character '}' at byte 12" },
    { "", HP_ERROR_FORMAT, "not valid JSON: no value at byte 0" },
    { " /* nothing */ ", HP_ERROR_FORMAT, "not valid JSON: unexpected character '/' at byte 1" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      /* on the heap, where sanitizers and valgrind see a read past the end */
      g_autofree gchar *json = g_strdup (cases[i].json);

      hp_test_assert_error (hp_config_new_from_json (TEST_TYPE_TOY_CONFIG, json, &error), &error,
                            cases[i].code, cases[i].message);
    }
}

/* Configuration text is strict JSON: what json-glib alone would read
 * (comments, single quotes, a member given twice keeping the last, two
 * documents keeping the first) is refused, by hp_config_new_from_json()
 * with HP_ERROR_FORMAT and by hp_config_set_path_from_string() with
 * HP_ERROR_CONFIG naming the path, leaving the config as it was */
static void
test_read_strict (void)
{
  static const struct { const gchar *json; const gchar *message; } cases[] = {
    { "{\"n-heads\": 8, \"n-heads\": 16}", "not valid JSON: member 'n-heads' appears twice in one object" },
    { "{\"middle\": {\"leaf\": {\"depth\": 1, \"depth\": 2}}}",
      "not valid JSON: member 'depth' appears twice in one object" },
    { "{\"layers\": [{\"@type\": \"TestLayerConfig\", \"@type\": \"TestLayerConfig\"}]}",
      "not valid JSON: member '@type' appears twice in one object" },
    { "{} {}", "not valid JSON: data after the JSON value at byte 3" },
    { "{\"n-heads\": 8} {\"n-heads\": 16}", "not valid JSON: data after the JSON value at byte 15" },
    { "{}x", "not valid JSON: data after the JSON value at byte 2" },
    { "{\"n-heads\": 8 /* heads */}", "not valid JSON: unexpected character '/' at byte 14" },
    { "// heads\n{\"n-heads\": 8}", "not valid JSON: unexpected character '/' at byte 0" },
    { "{'n-heads': 8}", "not valid JSON: unexpected character ''' at byte 1" },
    { "{\"name\": 'x'}", "not valid JSON: unexpected character ''' at byte 9" },
    { "{n_heads: 8}", "not valid JSON: unexpected character 'n' at byte 1" },
    { "{\"n-heads\": 0x10}", "not valid JSON: unexpected character 'x' at byte 13" },
    { "{\"n-heads\": 08}", "not valid JSON: number with a leading zero at byte 12" },
    { "{\"n-heads\": 8,}", "not valid JSON: unexpected character '}' at byte 14" },
    { "{\"tags\": [\"a\",]}", "not valid JSON: unexpected character ']' at byte 14" },
    { "{\"name\": \"a\\u0000b\"}", "not valid JSON: \\u0000 in a string at byte 11" },
    { "{\"name\": \"\\udc00\"}", "not valid JSON: unpaired surrogate \\udc00 in a string at byte 10" },
    { "{\"name\": \"\xff\"}", "not valid UTF-8 at byte 10" },
  };
  static const struct { const gchar *path; const gchar *value; const gchar *message; } path_cases[] = {
    { "middle", "{\"leaf\": {\"depth\": 1, \"depth\": 2}}",
      "middle: not valid JSON: member 'depth' appears twice in one object" },
    { "middle.leaf", "{\"depth\": 1} {\"depth\": 2}",
      "middle.leaf: not valid JSON: data after the JSON value at byte 13" },
    { "layers.1", "{\"@type\": \"TestLayerConfig\", /* c */ \"n-heads\": 2}",
      "layers.1: not valid JSON: unexpected character '/' at byte 29" },
    { "layers", "[{'@type': 'TestLayerConfig'}]", "layers: not valid JSON: unexpected character ''' at byte 2" },
    { "tags", "['a']", "tags: not valid JSON: unexpected character ''' at byte 1" },
    { "tags", "[\"a\"] [\"b\"]", "tags: not valid JSON: data after the JSON value at byte 6" },
  };
  g_autoptr(HpConfig) toy = test_toy_config_new_populated ();
  g_autofree gchar *before = hp_config_to_json (toy, FALSE);
  g_autofree gchar *after = NULL;
  g_autoptr(GString) deep = g_string_new ("{\"tags\": ");
  g_autoptr(GString) deep_value = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  gboolean ok;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    hp_test_assert_error (hp_config_new_from_json (TEST_TYPE_TOY_CONFIG, cases[i].json, &error), &error,
                          HP_ERROR_FORMAT, cases[i].message);

  for (guint i = 0; i < G_N_ELEMENTS (path_cases); i++)
    {
      ok = hp_config_set_path_from_string (toy, path_cases[i].path, path_cases[i].value, &error);
      hp_test_assert_error (GINT_TO_POINTER (ok), &error, HP_ERROR_CONFIG, path_cases[i].message);
      g_free (after);
      after = hp_config_to_json (toy, FALSE);
      g_assert_cmpstr (after, ==, before);
    }

  /* 64 levels parse (then the config refuses the inner arrays); 65 do
   * not */
  for (guint i = 0; i < 63; i++)
    g_string_append_c (deep, '[');
  for (guint i = 0; i < 63; i++)
    g_string_append_c (deep, ']');
  g_string_append_c (deep, '}');
  hp_test_assert_error (hp_config_new_from_json (TEST_TYPE_TOY_CONFIG, deep->str, &error), &error,
                        HP_ERROR_CONFIG, "tags.0: expected a string, got an array");
  g_string_insert_c (deep, 9, '[');
  g_string_insert_c (deep, deep->len - 1, ']');
  hp_test_assert_error (hp_config_new_from_json (TEST_TYPE_TOY_CONFIG, deep->str, &error), &error,
                        HP_ERROR_FORMAT, "not valid JSON: nested deeper than 64 levels at byte 72");

  for (guint i = 0; i < 65; i++)
    g_string_append_c (deep_value, '[');
  for (guint i = 0; i < 65; i++)
    g_string_append_c (deep_value, ']');
  ok = hp_config_set_path_from_string (toy, "tags", deep_value->str, &error);
  hp_test_assert_error (GINT_TO_POINTER (ok), &error, HP_ERROR_CONFIG,
                        "tags: not valid JSON: nested deeper than 64 levels at byte 64");
  g_free (after);
  after = hp_config_to_json (toy, FALSE);
  g_assert_cmpstr (after, ==, before);
}

static void
test_read_root_type (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) read = NULL;

  read = from_json (TEST_TYPE_TOY_CONFIG, "{\"@type\": \"TestFancyToyConfig\", \"extra\": 1}");
  g_assert_true (G_OBJECT_TYPE (read) == TEST_TYPE_FANCY_TOY_CONFIG);
  g_assert_cmpint (hp_test_get_int (read, "extra"), ==, 1);

  hp_test_assert_error (hp_config_new_from_json (HP_TYPE_CONFIG, "{\"n-heads\": 2}", &error), &error,
                        HP_ERROR_CONFIG, "@type: HpConfig is abstract; name a concrete type");
  hp_test_assert_error (hp_config_new_from_json (TEST_TYPE_FANCY_TOY_CONFIG, "{\"@type\": \"TestToyConfig\"}",
                                                 &error), &error,
                        HP_ERROR_CONFIG, "@type: TestToyConfig is not a TestFancyToyConfig");
  hp_test_assert_error (hp_config_new_from_json (TEST_TYPE_TOY_CONFIG, "{\"extra\": 1}", &error), &error,
                        HP_ERROR_CONFIG, "extra: no field 'extra' in TestToyConfig");
}

static void
test_sharding (void)
{
  g_autoptr(HpConfig) sharded = test_sharded_config_new_populated ();
  g_autofree gchar *sharding = NULL;
  g_autofree gchar *local_map = NULL;
  g_autofree gchar *param_init = NULL;
  g_autofree gchar *init = NULL;

  /* the text forms hp_config_get_path_as_string() gives: JSON for
   * sharding and local map configs, the initialisers' own text */
  sharding = hp_config_get_path_as_string (sharded, "sharding-config", NULL);
  g_assert_cmpstr (sharding, ==,
                   "{\"state-shardings\": {\"layers.0.weight\": {\"tp\": \"S(0)\"}, \"bias\": {\"tp\": \"R\"}}, "
                   "\"in-src-shardings\": {\"x\": {\"tp\": \"R\"}}, "
                   "\"in-dst-shardings\": {\"x\": {\"tp\": \"S(1)\", \"dp\": \"S(0)\"}}, "
                   "\"out-src-shardings\": [null, {\"tp\": \"S(-1)\"}], "
                   "\"out-dst-shardings\": [{}], "
                   "\"local-map\": {\"callable-path\": \"inner\", "
                   "\"in-placements\": [{\"tp\": \"S(0)\"}, null], "
                   "\"out-placements\": [{\"tp\": \"S(0)\", \"dp\": \"R\"}], "
                   "\"in-grad-placements\": [{\"tp\": \"P(sum)\"}, null]}}");
  local_map = hp_config_get_path_as_string (sharded, "local-map", NULL);
  g_assert_cmpstr (local_map, ==,
                   "{\"callable-path\": null, \"in-placements\": [], \"out-placements\": [], "
                   "\"in-grad-placements\": null}");
  param_init = hp_config_get_path_as_string (sharded, "param-init", NULL);
  g_assert_cmpstr (param_init, ==, "weight=normal(mean=0, std=0.02); bias=zeros");
  init = hp_config_get_path_as_string (sharded, "init", NULL);
  g_assert_cmpstr (init, ==, "trunc_normal(mean=0, std=0.5, a=-1, b=1)");
  assert_member (sharded, "\"param-init\": {\"weight\": \"normal(mean=0, std=0.02)\", \"bias\": \"zeros\"},");

  /* and set_path reads them back */
  {
    g_autoptr(HpConfig) other = g_object_new (TEST_TYPE_SHARDED_CONFIG, NULL);
    g_autoptr(GError) error = NULL;

    g_assert_true (hp_config_set_path_from_string (other, "sharding-config", sharding, &error));
    g_assert_true (hp_config_set_path_from_string (other, "local_map", local_map, &error));
    g_assert_true (hp_config_set_path_from_string (other, "param-init", param_init, &error));
    g_assert_true (hp_config_set_path_from_string (other, "init", init, &error));
    g_assert_no_error (error);
    g_assert_true (hp_config_equal (other, sharded));

    /* the parts of a sharding config can be left out */
    g_assert_true (hp_config_set_path_from_string (other, "sharding-config",
                                                   "{\"out_dst_shardings\": [null, {\"tp\": \"R\"}]}", &error));
    g_assert_no_error (error);
    g_assert_cmpuint (hp_sharding_config_get_n_out_dst_shardings (hp_test_get_object (other, "sharding-config")), ==, 2);
    g_assert_null (hp_sharding_config_get_local_map (hp_test_get_object (other, "sharding-config")));
    g_clear_pointer (&sharding, g_free);
    sharding = hp_config_get_path_as_string (other, "sharding-config", NULL);
    g_assert_cmpstr (sharding, ==,
                     "{\"state-shardings\": {}, \"in-src-shardings\": {}, \"in-dst-shardings\": {}, "
                     "\"out-src-shardings\": [], \"out-dst-shardings\": [null, {\"tp\": \"R\"}], "
                     "\"local-map\": null}");
  }
}

static void
test_sharding_errors (void)
{
  static const struct { const gchar *json; const gchar *message; } cases[] = {
    { "{\"sharding-config\": []}", "sharding-config: expected an object for HpShardingConfig, got an array" },
    { "{\"sharding-config\": {\"shardings\": {}}}", "sharding-config.shardings: no field 'shardings' in HpShardingConfig" },
    { "{\"sharding-config\": {\"in-src-shardings\": {}, \"in_src_shardings\": {}}}",
      "sharding-config.in_src_shardings: field 'in-src-shardings' is given twice" },
    { "{\"sharding-config\": {\"state-shardings\": []}}",
      "sharding-config.state-shardings: expected an object from name to named placement, got an array" },
    { "{\"sharding-config\": {\"state-shardings\": {\"w\": {\"tp\": \"S(x)\"}}}}",
      "sharding-config.state-shardings.w.tp: " },
    { "{\"sharding-config\": {\"state-shardings\": {\"w\": null}}}",
      "sharding-config.state-shardings.w: expected an object from axis name to placement, got null" },
    { "{\"sharding-config\": {\"in-dst-shardings\": {\"\": {}}}}", "sharding-config.in-dst-shardings: empty name" },
    { "{\"sharding-config\": {\"out-src-shardings\": {}}}",
      "sharding-config.out-src-shardings: expected an array of named placements, got an object" },
    { "{\"sharding-config\": {\"out-dst-shardings\": null}}",
      "sharding-config.out-dst-shardings: expected an array of named placements, got null" },
    { "{\"sharding-config\": {\"out-dst-shardings\": [null, 3]}}",
      "sharding-config.out-dst-shardings.1: expected an object from axis name to placement, got an integer" },
    { "{\"sharding-config\": {\"local-map\": 1}}",
      "sharding-config.local-map: expected an object for HpLocalMapConfig, got an integer" },
    { "{\"sharding-config\": {\"local-map\": {\"callable\": \"f\"}}}",
      "sharding-config.local-map.callable: no field 'callable' in HpLocalMapConfig" },
    { "{\"local-map\": {\"callable-path\": 1}}", "local-map.callable-path: expected a string, got an integer" },
    { "{\"local-map\": {\"in-placements\": null}}",
      "local-map.in-placements: expected an array of named placements, got null" },
    { "{\"local-map\": {\"in-grad-placements\": {}}}",
      "local-map.in-grad-placements: expected an array of named placements or null, got an object" },
    { "{\"local-map\": {\"out-placements\": [{\"tp\": \"Q\"}]}}", "local-map.out-placements.0.tp: " },
    { "{\"param-init\": \"weight=zeros\"}",
      "param-init: expected an object from parameter name to initializer, got a string" },
    { "{\"param-init\": {\"weight\": \"gaussian\"}}", "param-init.weight: " },
    { "{\"param-init\": {\"weight\": {}}}", "param-init.weight: expected an initializer string, got an object" },
    { "{\"param-init\": {\"\": \"zeros\"}}", "param-init: empty parameter name" },
    { "{\"init\": \"normal(std=-1)\"}", "init: " },
    { "{\"init\": 0}", "init: expected an initializer string, got an integer" },
  };
  g_autoptr(HpConfig) sharded = test_sharded_config_new_populated ();
  g_autoptr(GError) error = NULL;
  g_autofree gchar *before = hp_config_to_json (sharded, FALSE);
  g_autofree gchar *after = NULL;
  gboolean ok;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    hp_test_assert_error (hp_config_new_from_json (TEST_TYPE_SHARDED_CONFIG, cases[i].json, &error), &error,
                          HP_ERROR_CONFIG, cases[i].message);

  /* through paths: errors name the path, nothing changes */
  ok = hp_config_set_path_from_string (sharded, "param-init", "weight=gaussian", &error);
  hp_test_assert_error (GINT_TO_POINTER (ok), &error, HP_ERROR_CONFIG, "param-init: cannot parse param init");
  ok = hp_config_set_path_from_string (sharded, "init", "normal(", &error);
  hp_test_assert_error (GINT_TO_POINTER (ok), &error, HP_ERROR_CONFIG, "init: ");
  ok = hp_config_set_path_from_string (sharded, "sharding-config", "{\"local-map\": {\"x\": 1}}", &error);
  hp_test_assert_error (GINT_TO_POINTER (ok), &error, HP_ERROR_CONFIG,
                        "sharding-config.local-map.x: no field 'x' in HpLocalMapConfig");
  ok = hp_config_set_path_from_string (sharded, "local-map", "{", &error);
  hp_test_assert_error (GINT_TO_POINTER (ok), &error, HP_ERROR_CONFIG,
                        "local-map: not valid JSON: unexpected end at byte 1");
  after = hp_config_to_json (sharded, FALSE);
  g_assert_cmpstr (after, ==, before);
}

static void
test_json_glib_nodes (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) toy = test_toy_config_new_populated ();
  g_autoptr(JsonNode) node = hp_config_to_json_node (toy);
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree gchar *text = NULL;
  g_autoptr(HpConfig) from_node = NULL;
  g_autoptr(HpConfig) from_text = NULL;

  /* the node is an ordinary json-glib tree */
  from_node = hp_config_new_from_json_node (TEST_TYPE_TOY_CONFIG, node, &error);
  g_assert_no_error (error);
  g_assert_true (hp_config_equal (from_node, toy));

  json_generator_set_root (generator, node);
  text = json_generator_to_data (generator, NULL);
  from_text = hp_config_new_from_json (TEST_TYPE_TOY_CONFIG, text, &error);
  g_assert_no_error (error);
  g_assert_true (hp_config_equal (from_text, toy));

  g_assert_true (json_parser_load_from_data (parser, "[1]", -1, &error));
  hp_test_assert_error (hp_config_new_from_json_node (TEST_TYPE_TOY_CONFIG, json_parser_get_root (parser), &error),
                        &error, HP_ERROR_CONFIG, "expected an object for TestToyConfig, got an array");
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init (&argc, &argv);

  g_test_add_func ("/config-json/text", test_text);
  g_test_add_func ("/config-json/round-trip/configs", test_round_trip);
  g_test_add_func ("/config-json/round-trip/numbers", test_round_trip_numbers);
  g_test_add_func ("/config-json/round-trip/strings", test_round_trip_strings);
  g_test_add_func ("/config-json/read/lenient-forms", test_read_lenient_forms);
  g_test_add_func ("/config-json/read/errors", test_read_errors);
  g_test_add_func ("/config-json/read/strict", test_read_strict);
  g_test_add_func ("/config-json/read/root-type", test_read_root_type);
  g_test_add_func ("/config-json/sharding/values", test_sharding);
  g_test_add_func ("/config-json/sharding/errors", test_sharding_errors);
  g_test_add_func ("/config-json/json-glib-nodes", test_json_glib_nodes);

  return g_test_run ();
}
