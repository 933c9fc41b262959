/* test-configurable.c: HpConfig (owners, build, copy, replace, equal,
 * traverse, paths), HpConfigList and HpConfigurable
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>
#include <string.h>

#include "hp-test-utils.h"
#include "test-config-types.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

/* Setting @path to @value fails with HP_ERROR_CONFIG and @message, and
 * changes nothing */
static void
assert_set_path_fails (HpConfig    *config,
                       const gchar *path,
                       const gchar *value,
                       gint         code,
                       const gchar *message)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *before = hp_config_to_json (config, FALSE);
  g_autofree gchar *after = NULL;
  gboolean ok = hp_config_set_path_from_string (config, path, value, &error);

  hp_test_assert_error (GINT_TO_POINTER (ok), &error, code, message);
  after = hp_config_to_json (config, FALSE);
  g_assert_cmpstr (after, ==, before);
}

/* ------------------------------------------------------------------ */
/* Owners                                                              */

/* Runs first: the class of TestLazyConfig has not been initialised, so
 * its owner is not registered until hp_config_type_for_owner() looks */
static void
test_owner_lazy (void)
{
  g_autoptr(HpConfigurable) lazy = NULL;

  g_type_ensure (TEST_TYPE_LAZY_CONFIG);
  g_assert_null (g_type_class_peek (TEST_TYPE_LAZY_CONFIG));

  lazy = g_object_new (TEST_TYPE_LAZY, NULL);
  g_assert_true (G_TYPE_CHECK_INSTANCE_TYPE (hp_configurable_get_config (lazy), TEST_TYPE_LAZY_CONFIG));
  g_assert_cmpuint (hp_config_type_for_owner (TEST_TYPE_LAZY), ==, TEST_TYPE_LAZY_CONFIG);
}

static void
test_owner_registry (void)
{
  g_autoptr(HpConfig) toy = g_object_new (TEST_TYPE_TOY_CONFIG, NULL);
  g_autoptr(HpConfig) fancy = g_object_new (TEST_TYPE_FANCY_TOY_CONFIG, NULL);
  g_autoptr(HpConfig) orphan = g_object_new (TEST_TYPE_ORPHAN_CONFIG, NULL);
  g_autoptr(HpConfig) late = g_object_new (TEST_TYPE_LATE_CONFIG, NULL);

  g_assert_cmpuint (hp_config_get_owner_type (toy), ==, TEST_TYPE_TOY);
  /* no owner of its own: the parent's */
  g_assert_cmpuint (hp_config_get_owner_type (fancy), ==, TEST_TYPE_TOY);
  g_assert_cmpuint (hp_config_get_owner_type (orphan), ==, G_TYPE_INVALID);

  g_assert_cmpuint (hp_config_type_for_owner (TEST_TYPE_TOY), ==, TEST_TYPE_TOY_CONFIG);
  /* an owner without a config type of its own: its parent's */
  g_assert_cmpuint (hp_config_type_for_owner (TEST_TYPE_SUB_TOY), ==, TEST_TYPE_TOY_CONFIG);
  g_assert_cmpuint (hp_config_type_for_owner (TEST_TYPE_PLAIN), ==, G_TYPE_INVALID);

  /* the binding way */
  g_assert_cmpuint (hp_config_get_owner_type (late), ==, G_TYPE_INVALID);
  g_assert_cmpuint (hp_config_type_for_owner (TEST_TYPE_LATE), ==, G_TYPE_INVALID);
  hp_config_register_owner (TEST_TYPE_LATE_CONFIG, TEST_TYPE_LATE);
  g_assert_cmpuint (hp_config_get_owner_type (late), ==, TEST_TYPE_LATE);
  g_assert_cmpuint (hp_config_type_for_owner (TEST_TYPE_LATE), ==, TEST_TYPE_LATE_CONFIG);

  /* an owner must be configurable */
  g_test_expect_message ("Hp", G_LOG_LEVEL_CRITICAL, "*HP_TYPE_CONFIGURABLE*");
  hp_config_register_owner (TEST_TYPE_ORPHAN_CONFIG, G_TYPE_OBJECT);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (hp_config_get_owner_type (orphan), ==, G_TYPE_INVALID);
}

/* ------------------------------------------------------------------ */
/* Fields                                                              */

static void
test_fields (void)
{
  static const gchar * const toy_fields[] = {
    "flag", "n-heads", "count", "offset", "size", "big", "seed", "ratio", "lr", "bias",
    "name", "kind", "options", "tags", "middle", "layers", "placement", NULL
  };
  g_autoptr(HpConfig) fancy = g_object_new (TEST_TYPE_FANCY_TOY_CONFIG, NULL);
  g_autoptr(HpConfig) odd = NULL;
  g_autofree GParamSpec **fields = NULL;
  g_autofree GParamSpec **odd_fields = NULL;
  guint n_fields = 0;
  guint i;

  /* ancestors first, then by property id; the construct-only "mode"
   * and the read-only "label" are not fields */
  fields = hp_config_list_fields (fancy, &n_fields);
  g_assert_cmpuint (n_fields, ==, g_strv_length ((GStrv) toy_fields) + 1);
  for (i = 0; toy_fields[i] != NULL; i++)
    g_assert_cmpstr (fields[i]->name, ==, toy_fields[i]);
  g_assert_cmpstr (fields[i]->name, ==, "extra");
  g_assert_null (fields[n_fields]);

  /* a property of a type configurations do not hold is left out, with a
   * warning the first time */
  g_test_expect_message ("Hp", G_LOG_LEVEL_WARNING,
                         "TestOddConfig:handle has type gpointer, which configurations do not support; it is not a field");
  g_test_expect_message ("Hp", G_LOG_LEVEL_WARNING,
                         "TestOddConfig:blob has type GBytes, which configurations do not support; it is not a field");
  odd = g_object_new (TEST_TYPE_ODD_CONFIG, NULL);
  odd_fields = hp_config_list_fields (odd, &n_fields);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (n_fields, ==, 1);
  g_assert_cmpstr (odd_fields[0]->name, ==, "ok");
  g_clear_pointer (&odd_fields, g_free);
  odd_fields = hp_config_list_fields (odd, NULL);
  g_assert_cmpstr (odd_fields[0]->name, ==, "ok");
}

/* ------------------------------------------------------------------ */
/* Build                                                               */

static void
on_built (HpConfig *config,
          GObject  *instance,
          gpointer  user_data)
{
  GPtrArray *seen = user_data;

  g_ptr_array_add (seen, instance);
}

static void
test_build (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = test_toy_config_new_populated ();
  g_autoptr(GPtrArray) seen = g_ptr_array_new ();
  g_autoptr(GObject) first = NULL;
  g_autoptr(GObject) second = NULL;
  g_autoptr(HpConfig) fancy = g_object_new (TEST_TYPE_FANCY_TOY_CONFIG, "extra", 7, NULL);
  g_autoptr(GObject) fancy_built = NULL;
  HpConfig *kept;
  HpConfig *middle;

  g_signal_connect (config, "built", G_CALLBACK (on_built), seen);

  first = hp_config_build (config, &error);
  g_assert_no_error (error);
  g_assert_true (G_TYPE_CHECK_INSTANCE_TYPE (first, TEST_TYPE_TOY));
  g_assert_cmpuint (seen->len, ==, 1);
  g_assert_true (g_ptr_array_index (seen, 0) == first);

  /* a shallow copy: equal, not the same object, nested configs shared */
  kept = hp_configurable_get_config (HP_CONFIGURABLE (first));
  g_assert_true (kept != config);
  g_assert_true (hp_config_equal (kept, config));
  g_object_get (config, "middle", &middle, NULL);
  g_assert_true (hp_test_get_object (kept, "middle") == middle);
  g_object_unref (middle);

  /* changing the original later leaves the built object alone */
  g_object_set (config, "n-heads", 2, "name", "changed", NULL);
  g_assert_cmpint (hp_test_get_int (kept, "n-heads"), ==, 16);
  g_assert_false (hp_config_equal (kept, config));

  /* built again: another instance */
  second = hp_config_build (config, &error);
  g_assert_no_error (error);
  g_assert_true (second != first);
  g_assert_cmpuint (seen->len, ==, 2);
  g_assert_cmpint (hp_test_get_int (hp_configurable_get_config (HP_CONFIGURABLE (second)), "n-heads"), ==, 2);

  /* a subclass without its own owner builds the parent's owner, with
   * its own type of config */
  fancy_built = hp_config_build (fancy, &error);
  g_assert_no_error (error);
  g_assert_true (G_OBJECT_TYPE (fancy_built) == TEST_TYPE_TOY);
  g_assert_true (G_TYPE_CHECK_INSTANCE_TYPE (hp_configurable_get_config (HP_CONFIGURABLE (fancy_built)),
                                             TEST_TYPE_FANCY_TOY_CONFIG));
  g_assert_cmpint (hp_test_get_int (hp_configurable_get_config (HP_CONFIGURABLE (fancy_built)), "extra"), ==, 7);
}

static void
test_build_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) orphan = g_object_new (TEST_TYPE_ORPHAN_CONFIG, NULL);
  g_autoptr(HpConfig) abstract = g_object_new (TEST_TYPE_ABSTRACT_OWNER_CONFIG, NULL);
  g_autoptr(HpConfig) leaf = g_object_new (TEST_TYPE_LEAF_CONFIG, "depth", 13, NULL);
  g_autoptr(HpConfig) fine_leaf = g_object_new (TEST_TYPE_LEAF_CONFIG, "depth", 12, NULL);
  g_autoptr(GObject) built = NULL;
  g_autofree gchar *leaf_before = hp_config_to_json (leaf, FALSE);
  g_autofree gchar *leaf_after = NULL;
  guint n_built = 0;

  hp_test_count_signal (orphan, "built", &n_built);
  hp_test_count_signal (abstract, "built", &n_built);
  hp_test_assert_error (hp_config_build (orphan, &error), &error, HP_ERROR_NOT_SUPPORTED,
                        "TestOrphanConfig has no owner class");
  hp_test_assert_error (hp_config_build (abstract, &error), &error, HP_ERROR_NOT_SUPPORTED,
                        "TestAbstractOwnerConfig builds TestAbstractOwner, which is abstract");

  /* an initable owner that refuses its config: no instance, no signal,
   * the config as it was */
  hp_test_count_signal (leaf, "built", &n_built);
  hp_test_assert_error (hp_config_build (leaf, &error), &error, HP_ERROR_CONFIG,
                        "TestLeaf: depth 13 is unlucky");
  g_assert_cmpuint (n_built, ==, 0);
  leaf_after = hp_config_to_json (leaf, FALSE);
  g_assert_cmpstr (leaf_after, ==, leaf_before);

  built = hp_config_build (fine_leaf, &error);
  g_assert_no_error (error);
  g_assert_true (G_TYPE_CHECK_INSTANCE_TYPE (built, TEST_TYPE_LEAF));
}

static void
test_build_with_properties (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = g_object_new (TEST_TYPE_TOY_CONFIG, NULL);
  g_autoptr(GObject) toy = NULL;
  g_autofree gchar *device = NULL;
  GValue values[3] = { G_VALUE_INIT, G_VALUE_INIT, G_VALUE_INIT };
  const gchar *names[3];
  g_autofree gchar *before = hp_config_to_json (config, FALSE);
  g_autofree gchar *after = NULL;
  guint n_built = 0;
  gint rank;

  hp_test_count_signal (config, "built", &n_built);
  g_value_init (&values[0], G_TYPE_STRING);
  g_value_set_string (&values[0], "cpu:1");
  g_value_init (&values[1], G_TYPE_INT64);   /* converted to the gint of "rank" */
  g_value_set_int64 (&values[1], 3);
  g_value_init (&values[2], G_TYPE_INT);

  names[0] = "device";
  names[1] = "rank";
  toy = hp_config_build_with_properties (config, 2, names, values, &error);
  g_assert_no_error (error);
  g_object_get (toy, "device", &device, "rank", &rank, NULL);
  g_assert_cmpstr (device, ==, "cpu:1");
  g_assert_cmpint (rank, ==, 3);
  g_assert_true (hp_config_equal (hp_configurable_get_config (HP_CONFIGURABLE (toy)), config));

  /* names that are config fields, in the order given */
  names[0] = "n_heads";
  names[1] = "device";
  names[2] = "lr";
  g_value_set_int (&values[2], 1);
  hp_test_assert_error (hp_config_build_with_properties (config, 3, names, values, &error), &error,
                        HP_ERROR_CONFIG, "build() arguments {n_heads, lr} overlap with config fields");

  names[0] = "nope";
  hp_test_assert_error (hp_config_build_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG, "build() argument 'nope' is not a writable property of TestToy");
  names[0] = "id";   /* read-only */
  hp_test_assert_error (hp_config_build_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG, "build() argument 'id' is not a writable property of TestToy");

  names[0] = "config";
  hp_test_assert_error (hp_config_build_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG,
                        "build() argument 'config' is not allowed: the configuration is TestToyConfig itself");

  names[0] = "device";
  names[1] = "device";
  g_value_unset (&values[1]);
  g_value_init (&values[1], G_TYPE_STRING);
  hp_test_assert_error (hp_config_build_with_properties (config, 2, names, values, &error), &error,
                        HP_ERROR_CONFIG, "build() argument 'device' is given twice");

  names[0] = "rank";
  hp_test_assert_error (hp_config_build_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG,
                        "build() argument 'rank' of TestToy: expected a value of type gint, got gchararray");
  g_value_set_int (&values[2], 65);
  names[0] = "rank";
  hp_test_assert_error (hp_config_build_with_properties (config, 1, names, values + 2, &error), &error,
                        HP_ERROR_CONFIG, "build() argument 'rank' of TestToy: value 65 out of range [0, 64]");

  /* no instance was built, the config is as it was */
  g_assert_cmpuint (n_built, ==, 1);
  after = hp_config_to_json (config, FALSE);
  g_assert_cmpstr (after, ==, before);

  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    g_value_unset (&values[i]);
}

static void
test_configurable_default_config (void)
{
  g_autoptr(HpConfigurable) toy = g_object_new (TEST_TYPE_TOY, NULL);
  g_autoptr(HpConfigurable) sub = g_object_new (TEST_TYPE_SUB_TOY, NULL);
  g_autoptr(HpConfigurable) plain = g_object_new (TEST_TYPE_PLAIN, NULL);
  g_autoptr(HpConfig) given = g_object_new (TEST_TYPE_TOY_CONFIG, "n-heads", 4, NULL);
  g_autoptr(HpConfigurable) with_config = g_object_new (TEST_TYPE_TOY, "config", given, NULL);
  g_autoptr(HpConfig) fresh = g_object_new (TEST_TYPE_TOY_CONFIG, NULL);
  HpConfig *property = NULL;

  /* a default config of the owner's config type */
  g_assert_true (G_OBJECT_TYPE (hp_configurable_get_config (toy)) == TEST_TYPE_TOY_CONFIG);
  g_assert_true (hp_config_equal (hp_configurable_get_config (toy), fresh));
  g_assert_true (G_OBJECT_TYPE (hp_configurable_get_config (sub)) == TEST_TYPE_TOY_CONFIG);
  g_assert_null (hp_configurable_get_config (plain));

  /* given: kept as it is */
  g_assert_true (hp_configurable_get_config (with_config) == given);
  g_object_get (with_config, "config", &property, NULL);
  g_assert_true (property == given);
  g_object_unref (property);
}

/* ------------------------------------------------------------------ */
/* Copy, replace, equal                                                */

static void
test_copy (void)
{
  g_autoptr(HpConfig) config = test_toy_config_new_populated ();
  g_autoptr(HpConfig) copy = hp_config_copy (config);
  g_autofree gchar *name = NULL;
  g_autofree gchar *copy_name = NULL;
  g_auto(GStrv) tags = NULL;
  g_auto(GStrv) copy_tags = NULL;

  g_assert_true (G_OBJECT_TYPE (copy) == TEST_TYPE_TOY_CONFIG);
  g_assert_true (copy != config);
  g_assert_true (hp_config_equal (copy, config));

  /* shallow: objects shared, strings and string arrays copied */
  g_assert_true (hp_test_get_object (copy, "middle") == hp_test_get_object (config, "middle"));
  g_assert_true (hp_test_get_object (copy, "layers") == hp_test_get_object (config, "layers"));
  g_assert_true (hp_test_get_object (copy, "placement") == hp_test_get_object (config, "placement"));
  g_object_get (config, "name", &name, "tags", &tags, NULL);
  g_object_get (copy, "name", &copy_name, "tags", &copy_tags, NULL);
  g_assert_cmpstr (name, ==, copy_name);
  g_assert_true (g_strv_equal ((const gchar * const *) tags, (const gchar * const *) copy_tags));

  /* a top-level change reaches only one of them */
  g_object_set (copy, "n-heads", 1, NULL);
  g_assert_cmpint (hp_test_get_int (config, "n-heads"), ==, 16);
}

static void
test_replace (void)
{
  g_autoptr(HpConfig) config = test_toy_config_new_populated ();
  g_autofree gchar *before = hp_config_to_json (config, FALSE);
  g_autofree gchar *after = NULL;
  g_autoptr(HpConfig) replaced = NULL;
  g_autoptr(HpConfig) fancy = g_object_new (TEST_TYPE_FANCY_TOY_CONFIG, NULL);
  g_autoptr(HpConfig) fancy_replaced = NULL;
  g_autofree gchar *name = NULL;

  replaced = hp_config_replace (config, "n_heads", 4, "name", "small", "lr", 0.5, NULL);
  g_assert_nonnull (replaced);
  g_assert_true (G_OBJECT_TYPE (replaced) == TEST_TYPE_TOY_CONFIG);
  g_assert_cmpint (hp_test_get_int (replaced, "n-heads"), ==, 4);
  g_object_get (replaced, "name", &name, NULL);
  g_assert_cmpstr (name, ==, "small");
  g_assert_cmpfloat (hp_test_get_double (replaced, "lr"), ==, 0.5);
  /* the rest is the original's, the original unchanged */
  g_assert_cmpint ((gint) hp_test_get_uint (replaced, "count"), ==, 7);
  g_assert_true (hp_test_get_object (replaced, "middle") == hp_test_get_object (config, "middle"));
  after = hp_config_to_json (config, FALSE);
  g_assert_cmpstr (after, ==, before);

  /* nothing to change: an equal copy */
  g_clear_object (&replaced);
  replaced = hp_config_replace_with_properties (config, 0, NULL, NULL, NULL);
  g_assert_true (replaced != config);
  g_assert_true (hp_config_equal (replaced, config));

  fancy_replaced = hp_config_replace (fancy, "extra", 9, "n-heads", 2, NULL);
  g_assert_true (G_OBJECT_TYPE (fancy_replaced) == TEST_TYPE_FANCY_TOY_CONFIG);
  g_assert_cmpint (hp_test_get_int (fancy_replaced, "extra"), ==, 9);

  /* programmer errors in the C convenience */
  g_test_expect_message ("Hp", G_LOG_LEVEL_CRITICAL, "*TestToyConfig has no field 'nope'*");
  g_assert_null (hp_config_replace (config, "n-heads", 4, "nope", 1, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Hp", G_LOG_LEVEL_CRITICAL,
                         "*TestToyConfig.n-heads: value 0 out of range [1, 1024]*");
  g_assert_null (hp_config_replace (config, "n-heads", 0, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Hp", G_LOG_LEVEL_CRITICAL,
                         "*TestToyConfig.middle: invalid object type 'TestLeafConfig'*");
  g_assert_null (hp_config_replace (config, "middle", hp_test_get_object (hp_test_get_object (config, "middle"), "leaf"),
                                    NULL));
  g_test_assert_expected_messages ();
}

static void
test_replace_with_properties (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = test_toy_config_new_populated ();
  g_autofree gchar *before = hp_config_to_json (config, FALSE);
  g_autofree gchar *after = NULL;
  g_autoptr(HpConfig) replaced = NULL;
  g_autoptr(HpConfig) leaf = g_object_new (TEST_TYPE_LEAF_CONFIG, NULL);
  GValue values[2] = { G_VALUE_INIT, G_VALUE_INIT };
  const gchar *names[2];

  /* numbers of other types, converted exactly */
  g_value_init (&values[0], G_TYPE_INT64);
  g_value_set_int64 (&values[0], 12);
  g_value_init (&values[1], G_TYPE_INT);
  g_value_set_int (&values[1], 2);
  names[0] = "n-heads";
  names[1] = "lr";
  replaced = hp_config_replace_with_properties (config, 2, names, values, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hp_test_get_int (replaced, "n-heads"), ==, 12);
  g_assert_cmpfloat (hp_test_get_double (replaced, "lr"), ==, 2.0);
  g_clear_object (&replaced);

  names[0] = "nope";
  hp_test_assert_error (hp_config_replace_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG, "TestToyConfig has no field 'nope'");
  names[0] = "n-heads";
  names[1] = "n_heads";
  hp_test_assert_error (hp_config_replace_with_properties (config, 2, names, values, &error), &error,
                        HP_ERROR_CONFIG, "TestToyConfig.n-heads: field is given twice");

  /* out of range: an error, not clamped */
  g_value_set_int64 (&values[0], 0);
  hp_test_assert_error (hp_config_replace_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG, "TestToyConfig.n-heads: value 0 out of range [1, 1024]");
  g_value_set_int64 (&values[0], G_MAXINT64);
  names[0] = "count";
  hp_test_assert_error (hp_config_replace_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG,
                        "TestToyConfig.count: value 9223372036854775807 out of range [0, 4294967295]");
  g_value_set_int64 (&values[0], -1);
  hp_test_assert_error (hp_config_replace_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG, "TestToyConfig.count: value -1 out of range [0, 4294967295]");
  names[0] = "lr";
  g_value_set_int (&values[1], 11);
  hp_test_assert_error (hp_config_replace_with_properties (config, 1, names, values + 1, &error), &error,
                        HP_ERROR_CONFIG, "TestToyConfig.lr: value 11.0 out of range [0.0, 10.0]");
  g_value_set_int64 (&values[0], (G_GINT64_CONSTANT (1) << 53) + 1);
  names[0] = "bias";
  hp_test_assert_error (hp_config_replace_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG, "TestToyConfig.bias: integer 9007199254740993 has no exact double value");

  /* every numeric GValue type converts when the value fits */
  {
    static const struct { GType type; const gchar *field; const gchar *shown; } conversions[] = {
      { G_TYPE_CHAR, "n-heads", "5" },
      { G_TYPE_UCHAR, "count", "5" },
      { G_TYPE_UINT, "big", "5" },
      { G_TYPE_ULONG, "ratio", "5.0" },
      { G_TYPE_FLOAT, "lr", "5.0" },
      { G_TYPE_INT, "ratio", "5.0" },
      { G_TYPE_UINT64, "bias", "5.0" },
    };

    for (guint i = 0; i < G_N_ELEMENTS (conversions); i++)
      {
        g_auto(GValue) number = G_VALUE_INIT;
        g_auto(GValue) five = G_VALUE_INIT;
        g_autofree gchar *shown = NULL;

        g_value_init (&five, G_TYPE_INT);
        g_value_set_int (&five, 5);
        g_value_init (&number, conversions[i].type);
        g_assert_true (g_value_transform (&five, &number));
        names[0] = conversions[i].field;
        g_clear_object (&replaced);
        replaced = hp_config_replace_with_properties (config, 1, names, &number, &error);
        g_assert_no_error (error);
        shown = hp_config_get_path_as_string (replaced, conversions[i].field, NULL);
        g_assert_cmpstr (shown, ==, conversions[i].shown);
      }
    g_clear_object (&replaced);
  }
  g_value_unset (&values[0]);
  g_value_init (&values[0], G_TYPE_UINT64);
  g_value_set_uint64 (&values[0], G_MAXUINT64);
  names[0] = "big";
  hp_test_assert_error (hp_config_replace_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG,
                        "TestToyConfig.big: value 18446744073709551615 out of range "
                        "[-9223372036854775808, 9223372036854775807]");
  names[0] = "bias";
  hp_test_assert_error (hp_config_replace_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG, "TestToyConfig.bias: integer 18446744073709551615 has no exact double value");

  /* GObject has no NaN property values */
  g_value_unset (&values[0]);
  g_value_init (&values[0], G_TYPE_DOUBLE);
  g_value_set_double (&values[0], NAN);
  names[0] = "bias";
  hp_test_assert_error (hp_config_replace_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG, "TestToyConfig.bias: NaN is not allowed");

  /* wrong types */
  g_value_set_double (&values[0], 2.5);
  names[0] = "n-heads";
  hp_test_assert_error (hp_config_replace_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG, "TestToyConfig.n-heads: expected an integer, got 2.5");
  g_value_unset (&values[0]);
  g_value_init (&values[0], G_TYPE_STRING);
  g_value_set_string (&values[0], "4");
  hp_test_assert_error (hp_config_replace_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG, "TestToyConfig.n-heads: expected a value of type gint, got gchararray");
  g_value_unset (&values[0]);
  g_value_init (&values[0], G_TYPE_OBJECT);
  g_value_set_object (&values[0], leaf);
  names[0] = "middle";
  hp_test_assert_error (hp_config_replace_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG, "TestToyConfig.middle: expected a TestMiddleConfig, got a TestLeafConfig");
  g_value_unset (&values[0]);
  g_value_init (&values[0], TEST_TYPE_SIZE);
  g_value_set_enum (&values[0], 7);
  names[0] = "kind";
  hp_test_assert_error (hp_config_replace_with_properties (config, 1, names, values, &error), &error,
                        HP_ERROR_CONFIG, "TestToyConfig.kind: invalid value");

  /* an object held in a GValue of a parent type is fine */
  g_value_unset (&values[0]);
  g_value_init (&values[0], G_TYPE_OBJECT);
  g_value_take_object (&values[0], g_object_new (TEST_TYPE_MIDDLE_CONFIG, "note", "n", NULL));
  names[0] = "middle";
  replaced = hp_config_replace_with_properties (config, 1, names, values, &error);
  g_assert_no_error (error);
  g_assert_true (hp_test_get_object (replaced, "middle") == g_value_get_object (&values[0]));

  after = hp_config_to_json (config, FALSE);
  g_assert_cmpstr (after, ==, before);

  g_value_unset (&values[0]);
  g_value_unset (&values[1]);
}

static void
test_equal (void)
{
  g_autoptr(HpConfig) a = test_toy_config_new_populated ();
  g_autoptr(HpConfig) b = test_toy_config_new_populated ();
  g_autoptr(HpConfig) fancy = g_object_new (TEST_TYPE_FANCY_TOY_CONFIG, NULL);
  g_autoptr(HpConfig) plain = g_object_new (TEST_TYPE_TOY_CONFIG, NULL);
  static const struct { const gchar *path; const gchar *value; } changes[] = {
    { "flag", "false" },
    { "n-heads", "3" },
    { "count", "1" },
    { "offset", "5" },
    { "size", "1" },
    { "big", "1" },
    { "seed", "1" },
    { "ratio", "0.25" },
    { "lr", "0.125" },
    { "bias", "1" },
    { "name", "other" },
    { "kind", "small" },
    { "options", "beta" },
    { "tags", "a" },
    { "middle.leaf.depth", "9" },
    { "middle.note", "other" },
    { "layers.1.n-heads", "1" },
    { "layers.0.leaf.scale", "3" },
    { "placement", "tp:S(1)" },
  };

  /* different objects, equal values */
  g_assert_true (hp_test_get_object (a, "middle") != hp_test_get_object (b, "middle"));
  g_assert_true (hp_config_equal (a, b));
  g_assert_true (hp_config_equal (a, a));
  g_assert_false (hp_config_equal (fancy, plain));
  g_assert_false (hp_config_equal (plain, fancy));

  for (guint i = 0; i < G_N_ELEMENTS (changes); i++)
    {
      g_autoptr(HpConfig) c = test_toy_config_new_populated ();

      hp_test_set_path (c, changes[i].path, changes[i].value);
      g_assert_false (hp_config_equal (a, c));
      g_assert_false (hp_config_equal (c, a));
    }

  /* NULL against a value, list lengths */
  {
    g_autoptr(HpConfig) c = test_toy_config_new_populated ();

    g_object_set (c, "middle", NULL, NULL);
    g_assert_false (hp_config_equal (a, c));
    g_assert_false (hp_config_equal (c, a));
    g_clear_object (&c);
    c = test_toy_config_new_populated ();
    hp_config_list_remove (HP_CONFIG_LIST (hp_test_get_object (c, "layers")), 1);
    g_assert_false (hp_config_equal (a, c));
    g_clear_object (&c);
    c = test_toy_config_new_populated ();
    g_object_set (c, "tags", NULL, NULL);
    g_assert_false (hp_config_equal (a, c));
  }

  /* -0 equals 0 */
  hp_test_set_path (a, "bias", "-0.0");
  hp_test_set_path (b, "bias", "0");
  g_assert_true (hp_config_equal (a, b));
}

/* ------------------------------------------------------------------ */
/* Traverse                                                            */

typedef struct
{
  gchar *fqn;
  HpConfig *config;
  HpConfig *parent;
  gchar *attribute;
  gint index;
} Visit;

static void
visit_free (gpointer data)
{
  Visit *visit = data;

  g_free (visit->fqn);
  g_free (visit->attribute);
  g_free (visit);
}

static void
record_visit (const gchar *fqn,
              HpConfig    *config,
              HpConfig    *parent,
              const gchar *attribute,
              gint         index,
              gpointer     user_data)
{
  Visit *visit = g_new0 (Visit, 1);

  visit->fqn = g_strdup (fqn);
  visit->config = config;
  visit->parent = parent;
  visit->attribute = g_strdup (attribute);
  visit->index = index;
  g_ptr_array_add (user_data, visit);
}

static GPtrArray *
traverse (HpConfig *config,
          GType     match_type,
          gboolean  recurse)
{
  GPtrArray *visits = g_ptr_array_new_with_free_func (visit_free);

  hp_config_traverse (config, match_type, recurse, record_visit, visits);
  return visits;
}

static void
assert_fqns (GPtrArray           *visits,
             const gchar * const *expected)
{
  g_assert_cmpuint (visits->len, ==, g_strv_length ((GStrv) expected));
  for (guint i = 0; i < visits->len; i++)
    g_assert_cmpstr (((Visit *) g_ptr_array_index (visits, i))->fqn, ==, expected[i]);
}

static void
test_traverse (void)
{
  static const gchar * const all[] = {
    "", "middle", "middle.leaf", "layers.0", "layers.0.leaf", "layers.1", "layers.1.leaf", NULL
  };
  static const gchar * const root_only[] = { "", NULL };
  static const gchar * const leaves[] = { "middle.leaf", "layers.0.leaf", "layers.1.leaf", NULL };
  static const gchar * const layers[] = { "layers.0", "layers.1", NULL };
  g_autoptr(HpConfig) root = test_toy_config_new_populated ();
  HpConfig *middle = hp_test_get_object (root, "middle");
  HpConfigList *list = HP_CONFIG_LIST (hp_test_get_object (root, "layers"));
  HpConfig *layer0 = hp_config_list_peek (list, 0);
  HpConfig *layer1 = hp_config_list_peek (list, 1);
  struct { HpConfig *config; HpConfig *parent; const gchar *attribute; gint index; } expected[] = {
    { root, NULL, NULL, -1 },
    { hp_test_get_object (middle, "leaf"), middle, "leaf", -1 },
    { layer0, root, "layers", 0 },
    { hp_test_get_object (layer0, "leaf"), layer0, "leaf", -1 },
    { layer1, root, "layers", 1 },
    { hp_test_get_object (layer1, "leaf"), layer1, "leaf", -1 },
  };
  g_autoptr(GPtrArray) visits = NULL;
  GType match_all[] = { G_TYPE_NONE, HP_TYPE_CONFIG };

  for (guint m = 0; m < G_N_ELEMENTS (match_all); m++)
    {
      g_clear_pointer (&visits, g_ptr_array_unref);
      visits = traverse (root, match_all[m], TRUE);
      assert_fqns (visits, all);
      for (guint i = 0, v = 0; i < G_N_ELEMENTS (expected); i++, v++)
        {
          Visit *visit;

          if (v == 1)
            {
              /* "middle" itself */
              visit = g_ptr_array_index (visits, 1);
              g_assert_true (visit->config == middle);
              g_assert_true (visit->parent == root);
              g_assert_cmpstr (visit->attribute, ==, "middle");
              g_assert_cmpint (visit->index, ==, -1);
              v++;
            }
          visit = g_ptr_array_index (visits, v);
          g_assert_true (visit->config == expected[i].config);
          g_assert_true (visit->parent == expected[i].parent);
          g_assert_cmpstr (visit->attribute, ==, expected[i].attribute);
          g_assert_cmpint (visit->index, ==, expected[i].index);
        }

      /* without recurse, the root matches and nothing below it is seen */
      g_clear_pointer (&visits, g_ptr_array_unref);
      visits = traverse (root, match_all[m], FALSE);
      assert_fqns (visits, root_only);
    }

  /* by type: nested configs inside non-matching ones are searched */
  g_clear_pointer (&visits, g_ptr_array_unref);
  visits = traverse (root, TEST_TYPE_LEAF_CONFIG, TRUE);
  assert_fqns (visits, leaves);
  g_clear_pointer (&visits, g_ptr_array_unref);
  visits = traverse (root, TEST_TYPE_LEAF_CONFIG, FALSE);
  assert_fqns (visits, leaves);

  /* a matching layer: without recurse its leaf is not visited */
  g_clear_pointer (&visits, g_ptr_array_unref);
  visits = traverse (root, TEST_TYPE_LAYER_CONFIG, FALSE);
  assert_fqns (visits, layers);
  g_assert_true (((Visit *) g_ptr_array_index (visits, 1))->config == layer1);
  g_assert_cmpint (((Visit *) g_ptr_array_index (visits, 1))->index, ==, 1);

  /* NULL nested configs and lists are skipped */
  g_object_set (root, "middle", NULL, "layers", NULL, NULL);
  g_clear_pointer (&visits, g_ptr_array_unref);
  visits = traverse (root, G_TYPE_NONE, TRUE);
  assert_fqns (visits, root_only);
}

/* ------------------------------------------------------------------ */
/* Paths                                                               */

static void
test_paths (void)
{
  static const struct { const gchar *path; const gchar *value; const gchar *shown; } cases[] = {
    { "flag", "true", NULL },
    { "n-heads", "4", NULL },
    { "n_heads", "5", "5" },
    { "count", "4294967295", NULL },
    { "offset", "-3", NULL },
    { "size", "12", NULL },
    { "big", "-9223372036854775808", NULL },
    { "seed", "18446744073709551615", NULL },
    { "ratio", "0.1", NULL },
    { "ratio", "3", "3.0" },
    { "lr", "0.1", NULL },
    { "lr", "1e-5", "1.0e-05" },
    { "bias", "-inf", NULL },
    { "bias", "2.5e+300", NULL },
    { "name", "", NULL },
    { "name", "a, b", NULL },
    { "kind", "large", NULL },
    { "kind", "TEST_SIZE_SMALL", "small" },
    { "options", "alpha|gamma", NULL },
    { "options", " gamma | alpha ", "alpha|gamma" },
    { "options", "", NULL },
    { "tags", "a,b,c", NULL },
    { "tags", " a , b ", "a,b" },
    { "tags", "", NULL },
    { "tags", "[\"a,b\", \"\"]", NULL },
    { "tags", "[\"null\"]", NULL },
    { "tags", "[\" x\"]", NULL },
    { "tags", "[\"[x\", \"y\"]", NULL },
    { "tags", "[]", "" },
    { "placement", "tp:S(0), dp:R", NULL },
    { "placement", "", NULL },
    { "middle.note", "hello", NULL },
    { "middle.leaf.depth", "42", NULL },
    { "middle.leaf.scale", "0.3", NULL },
    { "layers.1.n-heads", "2", NULL },
    { "layers.0.leaf.depth", "0", NULL },
    { "middle.leaf", "{\"@type\": \"TestLeafConfig\", \"depth\": 2, \"scale\": 1.5}", NULL },
    { "middle.leaf", "{\"depth\": 3}", "{\"@type\": \"TestLeafConfig\", \"depth\": 3, \"scale\": 1.0}" },
    { "layers", "[{\"@type\": \"TestLayerConfig\", \"n-heads\": 1, \"leaf\": null}]", NULL },
    { "layers", "[]", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(HpConfig) config = test_toy_config_new_populated ();
      g_autoptr(HpConfig) other = test_toy_config_new_populated ();
      g_autofree gchar *shown = NULL;

      hp_test_set_path (config, cases[i].path, cases[i].value);
      hp_test_assert_path (config, cases[i].path, cases[i].shown != NULL ? cases[i].shown : cases[i].value);

      /* what get gives, set reads back to an equal config */
      shown = hp_config_get_path_as_string (config, cases[i].path, NULL);
      hp_test_set_path (other, cases[i].path, shown);
      g_assert_true (hp_config_equal (config, other));
    }
}

static void
test_paths_null_and_items (void)
{
  g_autoptr(HpConfig) config = test_toy_config_new_populated ();
  g_autoptr(HpConfig) before = test_toy_config_new_populated ();
  HpConfigList *list = HP_CONFIG_LIST (hp_test_get_object (config, "layers"));
  g_autofree gchar *item = NULL;
  guint n_changed = 0;
  HpConfig *replaced;

  /* NULL for strings, string arrays and objects */
  hp_test_set_path (config, "name", NULL);
  hp_test_assert_path (config, "name", NULL);
  hp_test_set_path (config, "tags", NULL);
  hp_test_assert_path (config, "tags", NULL);
  hp_test_set_path (config, "middle.leaf", NULL);
  hp_test_assert_path (config, "middle.leaf", NULL);
  hp_test_set_path (config, "placement", NULL);
  hp_test_assert_path (config, "placement", NULL);
  hp_test_set_path (config, "middle.leaf", "null");
  hp_test_assert_path (config, "middle.leaf", NULL);

  /* a path ending in a list item: the item's JSON, replaced in place */
  item = hp_config_get_path_as_string (before, "layers.1", NULL);
  g_assert_cmpstr (item, ==,
                   "{\"@type\": \"TestLayerConfig\", \"n-heads\": 4, "
                   "\"leaf\": {\"@type\": \"TestLeafConfig\", \"depth\": 2, \"scale\": 0.5}}");
  hp_test_count_signal (list, "items-changed", &n_changed);
  hp_test_set_path (config, "layers.0", "{\"@type\": \"TestLayerConfig\", \"n-heads\": 64}");
  g_assert_cmpuint (n_changed, ==, 1);
  g_assert_cmpuint (hp_config_list_get_length (list), ==, 2);
  replaced = hp_config_list_peek (list, 0);
  g_assert_cmpint (hp_test_get_int (replaced, "n-heads"), ==, 64);
  hp_test_assert_path (config, "layers.0.n-heads", "64");
  hp_test_assert_path (config, "layers.0.leaf", NULL);
}

static void
test_path_errors (void)
{
  g_autoptr(HpConfig) config = test_toy_config_new_populated ();
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) hollow = test_toy_config_new_populated ();
  static const struct { const gchar *path; const gchar *value; const gchar *message; } cases[] = {
    { "", "1", "empty field path" },
    { "middle..note", "1", "middle.: empty field name" },
    { "foo", "1", "foo: no field 'foo' in TestToyConfig" },
    { "middle.nope", "1", "middle.nope: no field 'nope' in TestMiddleConfig" },
    { "layers.0.attention.n-heads", "4", "layers.0.attention: no field 'attention' in TestLayerConfig" },
    { "layers.9.n-heads", "1", "layers.9: index out of range (2 items)" },
    { "layers.2", "{}", "layers.2: index out of range (2 items)" },
    { "layers.x.n-heads", "1", "layers.x: expected an item index, got 'x'" },
    { "layers.-1", "{}", "layers.-1: expected an item index, got '-1'" },
    { "n-heads.x", "1", "n-heads: is a gint field, not a configuration or a list" },
    { "layers.0.n-heads", "x", "layers.0.n-heads: expected an integer, got 'x'" },
    { "layers.0.n-heads", "4 ", "layers.0.n-heads: expected an integer, got '4 '" },
    { "layers.0.n-heads", "0x10", "layers.0.n-heads: expected an integer, got '0x10'" },
    { "n-heads", "2000", "n-heads: value 2000 out of range [1, 1024]" },
    { "n-heads", "99999999999999999999", "n-heads: value 99999999999999999999 out of range [1, 1024]" },
    { "count", "-1", "count: value -1 out of range [0, 4294967295]" },
    { "count", "4294967296", "count: value 4294967296 out of range [0, 4294967295]" },
    { "seed", "18446744073709551616", "seed: value 18446744073709551616 out of range [0, 18446744073709551615]" },
    { "n-heads", "1.5", "n-heads: expected an integer, got '1.5'" },
    { "flag", "yes", "flag: expected true or false, got 'yes'" },
    { "lr", "fast", "lr: expected a number (or inf, -inf), got 'fast'" },
    { "lr", "1.5x", "lr: expected a number (or inf, -inf), got '1.5x'" },
    { "lr", "", "lr: expected a number (or inf, -inf), got ''" },
    { "lr", "1e999", "lr: expected a number (or inf, -inf), got '1e999'" },
    { "lr", "11", "lr: value 11.0 out of range [0.0, 10.0]" },
    { "lr", "nan", "lr: expected a number (or inf, -inf), got 'nan'" },
    { "ratio", "1e39", "ratio: value 1.0e+39 out of range [-3.4028235e+38, 3.4028235e+38]" },
    { "kind", "huge", "kind: expected one of {small, large}, got 'huge'" },
    { "options", "alpha|delta", "options: unknown flag 'delta' (flags are alpha, beta, gamma separated by '|')" },
    { "tags", "[1]", "tags.0: expected a string, got an integer" },
    { "tags", "[\"a\"", "tags: not valid JSON: unexpected end at byte 4" },
    { "placement", "tp:X", "placement: cannot parse named placement 'tp:X'" },
    { "middle.leaf", "{\"@type\": \"TestLayerConfig\"}", "middle.leaf.@type: TestLayerConfig is not a TestLeafConfig" },
    { "middle.leaf", "{\"depth\": 101}", "middle.leaf.depth: value 101 out of range [0, 100]" },
    { "middle.leaf", "[]", "middle.leaf: expected an object for TestLeafConfig, got an array" },
    { "layers", "[{\"n-heads\": 2}]", "layers.0.@type: HpConfig is abstract; name a concrete type" },
    { "layers.1", "{\"@type\": \"TestLayerConfig\", \"n-heads\": 0}", "layers.1.n-heads: value 0 out of range [1, 1024]" },
    { "layers.1", "{\"@type\": \"Nope\"}", "layers.1.@type: unknown type 'Nope': load the library or introspection namespace that "
      "defines it (hp-config --require NAMESPACE-VERSION)" },
    { "layers.1", "nope", "layers.1: not valid JSON: unexpected character 'n' at byte 0" },
    { "layers.1", NULL, "layers.1: a list item cannot be null" },
    { "n-heads", NULL, "n-heads: a gint field cannot be null" },
    { "note", "caf\xe9", "note: the text is not valid UTF-8" },
    { "not\xff", "1", "config path: the text is not valid UTF-8" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      assert_set_path_fails (config, cases[i].path, cases[i].value, HP_ERROR_CONFIG, cases[i].message);
    }

  /* through a NULL nested config or list */
  g_object_set (hollow, "middle", NULL, "layers", NULL, NULL);
  assert_set_path_fails (hollow, "middle.note", "x", HP_ERROR_CONFIG,
                         "middle: is null, so it has no field 'note'");
  assert_set_path_fails (hollow, "layers.0.n-heads", "1", HP_ERROR_CONFIG,
                         "layers: is null, so it has no item 0");

  hp_test_assert_error (hp_config_get_path_as_string (config, "layers.5", &error), &error,
                        HP_ERROR_CONFIG, "layers.5: index out of range (2 items)");
  hp_test_assert_error (hp_config_get_path_as_string (config, "nope", &error), &error,
                        HP_ERROR_CONFIG, "nope: no field 'nope' in TestToyConfig");
}

/* ------------------------------------------------------------------ */
/* HpConfigList                                                        */

typedef struct
{
  guint n_calls;
  guint position;
  guint removed;
  guint added;
} ItemsChanged;

static void
on_items_changed (GListModel *model,
                  guint       position,
                  guint       removed,
                  guint       added,
                  gpointer    user_data)
{
  ItemsChanged *record = user_data;

  record->n_calls++;
  record->position = position;
  record->removed = removed;
  record->added = added;
}

static void
assert_items_changed (ItemsChanged *record,
                      guint         n_calls,
                      guint         position,
                      guint         removed,
                      guint         added)
{
  g_assert_cmpuint (record->n_calls, ==, n_calls);
  g_assert_cmpuint (record->position, ==, position);
  g_assert_cmpuint (record->removed, ==, removed);
  g_assert_cmpuint (record->added, ==, added);
}

static void
test_config_list (void)
{
  g_autoptr(HpConfigList) list = hp_config_list_new ();
  g_autoptr(HpConfigList) copy = NULL;
  g_autoptr(HpConfig) a = g_object_new (TEST_TYPE_LEAF_CONFIG, "depth", 1, NULL);
  g_autoptr(HpConfig) b = g_object_new (TEST_TYPE_LAYER_CONFIG, NULL);
  g_autoptr(HpConfig) c = g_object_new (TEST_TYPE_LEAF_CONFIG, "depth", 3, NULL);
  g_autoptr(GObject) item = NULL;
  ItemsChanged record = { 0, 0, 0, 0 };
  guint n_notify = 0;
  guint n_items = 0;

  g_assert_true (g_list_model_get_item_type (G_LIST_MODEL (list)) == HP_TYPE_CONFIG);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 0);
  g_signal_connect (list, "items-changed", G_CALLBACK (on_items_changed), &record);
  hp_test_count_signal (list, "notify::n-items", &n_notify);

  hp_config_list_append (list, a);
  assert_items_changed (&record, 1, 0, 0, 1);
  hp_config_list_append (list, c);
  assert_items_changed (&record, 2, 1, 0, 1);
  hp_config_list_insert (list, 1, b);
  assert_items_changed (&record, 3, 1, 0, 1);
  g_assert_cmpuint (n_notify, ==, 3);

  g_assert_cmpuint (hp_config_list_get_length (list), ==, 3);
  g_object_get (list, "n-items", &n_items, NULL);
  g_assert_cmpuint (n_items, ==, 3);
  g_assert_true (hp_config_list_peek (list, 0) == a);
  g_assert_true (hp_config_list_peek (list, 1) == b);
  g_assert_true (hp_config_list_peek (list, 2) == c);
  item = g_list_model_get_item (G_LIST_MODEL (list), 1);
  g_assert_true (item == (GObject *) b);
  g_assert_null (g_list_model_get_item (G_LIST_MODEL (list), 3));

  /* a shallow copy: the same items, a list of its own */
  copy = hp_config_list_copy (list);
  g_assert_cmpuint (hp_config_list_get_length (copy), ==, 3);
  for (guint i = 0; i < 3; i++)
    g_assert_true (hp_config_list_peek (copy, i) == hp_config_list_peek (list, i));

  hp_config_list_remove (list, 0);
  assert_items_changed (&record, 4, 0, 1, 0);
  g_assert_cmpuint (n_notify, ==, 4);
  g_assert_cmpuint (hp_config_list_get_length (list), ==, 2);
  g_assert_true (hp_config_list_peek (list, 0) == b);
  g_assert_cmpuint (hp_config_list_get_length (copy), ==, 3);

  /* positions out of range are programmer errors */
  g_test_expect_message ("Hp", G_LOG_LEVEL_CRITICAL, "*position*");
  hp_config_list_insert (list, 3, a);
  g_test_assert_expected_messages ();
  g_test_expect_message ("Hp", G_LOG_LEVEL_CRITICAL, "*position*");
  hp_config_list_remove (list, 2);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (record.n_calls, ==, 4);
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init (&argc, &argv);

  /* first: before anything initialises every config class */
  g_test_add_func ("/configurable/lazy-owner", test_owner_lazy);
  g_test_add_func ("/config/owner/registry", test_owner_registry);
  g_test_add_func ("/config/fields", test_fields);
  g_test_add_func ("/config/build/basic", test_build);
  g_test_add_func ("/config/build/errors", test_build_errors);
  g_test_add_func ("/config/build/with-properties", test_build_with_properties);
  g_test_add_func ("/config/configurable/default-config", test_configurable_default_config);
  g_test_add_func ("/config/copy", test_copy);
  g_test_add_func ("/config/replace/varargs", test_replace);
  g_test_add_func ("/config/replace/with-properties", test_replace_with_properties);
  g_test_add_func ("/config/equal", test_equal);
  g_test_add_func ("/config/traverse", test_traverse);
  g_test_add_func ("/config/path/values", test_paths);
  g_test_add_func ("/config/path/null-and-items", test_paths_null_and_items);
  g_test_add_func ("/config/path/errors", test_path_errors);
  g_test_add_func ("/config/list", test_config_list);

  return g_test_run ();
}
