/* test-config-fields.c: configuration fields declared in a table (C),
 * declared at run time (as language bindings do), and the validate
 * virtual function
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>

#include <hp-protocols/hp-protocols.h>

#include "hp-test-utils.h"

/* ------------------------------------------------------------------ */
/* A C configuration class with a field of every table type and a
 * property of its own */

#define TEST_TYPE_EVERY_FIELD_CONFIG (test_every_field_config_get_type ())
G_DECLARE_FINAL_TYPE (TestEveryFieldConfig, test_every_field_config,
                      TEST, EVERY_FIELD_CONFIG, HpConfig)

struct _TestEveryFieldConfig
{
  HpConfig parent_instance;

  gboolean flag;
  gint count;
  guint width;
  gint64 big;
  guint64 ubig;
  gdouble scale;
  gchar *label;
  HpDType dtype;
  GBindingFlags bind;
  GStrv tags;
  HpModuleConfig *child;         /* a new one by default */
  HpConfigList *layers;          /* a new one by default */
  HpShardingConfig *sharding;    /* NULL by default */

  gint extra;                    /* a hand-written, construct-only property */
};

G_DEFINE_FINAL_TYPE (TestEveryFieldConfig, test_every_field_config, HP_TYPE_CONFIG)

static const HpConfigField every_fields[] = {
  HP_CONFIG_FIELD_BOOLEAN (TestEveryFieldConfig, flag, "flag", "a boolean", TRUE),
  HP_CONFIG_FIELD_INT (TestEveryFieldConfig, count, "count", "an int", -5, 5, 2),
  HP_CONFIG_FIELD_UINT (TestEveryFieldConfig, width, "width", "a uint", 100, 7),
  HP_CONFIG_FIELD_INT64 (TestEveryFieldConfig, big, "big", "an int64", G_MININT64, G_MAXINT64, G_MAXINT64),
  HP_CONFIG_FIELD_UINT64 (TestEveryFieldConfig, ubig, "ubig", "a uint64", G_MAXUINT64, 3),
  HP_CONFIG_FIELD_DOUBLE (TestEveryFieldConfig, scale, "scale", "a double", 0.0, 1.0, 0.25),
  HP_CONFIG_FIELD_STRING (TestEveryFieldConfig, label, "label", "a string", "none"),
  HP_CONFIG_FIELD_ENUM (TestEveryFieldConfig, dtype, "dtype", "an enum", hp_dtype_get_type, HP_DTYPE_FLOAT64),
  HP_CONFIG_FIELD_FLAGS (TestEveryFieldConfig, bind, "bind", "flags", g_binding_flags_get_type,
                         G_BINDING_SYNC_CREATE),
  HP_CONFIG_FIELD_STRV (TestEveryFieldConfig, tags, "tags", "strings"),
  HP_CONFIG_FIELD_OBJECT (TestEveryFieldConfig, child, "child", "a nested config",
                          hp_module_config_get_type, hp_module_config_get_type),
  HP_CONFIG_FIELD_OBJECT (TestEveryFieldConfig, layers, "layers", "a list",
                          hp_config_list_get_type, hp_config_list_get_type),
  HP_CONFIG_FIELD_OBJECT (TestEveryFieldConfig, sharding, "sharding", "may be NULL",
                          hp_sharding_config_get_type, NULL),
};

static void
test_every_field_config_get_property (GObject    *object,
                                      guint       prop_id,
                                      GValue     *value,
                                      GParamSpec *pspec)
{
  g_value_set_int (value, TEST_EVERY_FIELD_CONFIG (object)->extra);
}

static void
test_every_field_config_set_property (GObject      *object,
                                      guint         prop_id,
                                      const GValue *value,
                                      GParamSpec   *pspec)
{
  TEST_EVERY_FIELD_CONFIG (object)->extra = g_value_get_int (value);
}

static gboolean
test_every_field_config_validate (HpConfig  *config,
                                  GError   **error)
{
  TestEveryFieldConfig *self = TEST_EVERY_FIELD_CONFIG (config);

  if (!HP_CONFIG_CLASS (test_every_field_config_parent_class)->validate (config, error))
    return FALSE;
  if (self->count > 0 && (guint) self->count > self->width)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "count %d exceeds width %u",
                   self->count, self->width);
      return FALSE;
    }
  return TRUE;
}

static void
test_every_field_config_class_init (TestEveryFieldConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = test_every_field_config_get_property;
  object_class->set_property = test_every_field_config_set_property;
  HP_CONFIG_CLASS (klass)->validate = test_every_field_config_validate;
  /* its id, 1, is also the first table field's */
  g_object_class_install_property (object_class, 1,
                                   g_param_spec_int ("extra", NULL, NULL, 0, 100, 0,
                                                     G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY));
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), every_fields, G_N_ELEMENTS (every_fields));
}

static void
test_every_field_config_init (TestEveryFieldConfig *self)
{
}

/* A subclass adds fields after its parent's */
#define TEST_TYPE_MORE_FIELDS_CONFIG (test_more_fields_config_get_type ())
G_DECLARE_FINAL_TYPE (TestMoreFieldsConfig, test_more_fields_config, TEST, MORE_FIELDS_CONFIG,
                      HpModuleConfig)

struct _TestMoreFieldsConfig
{
  HpModuleConfig parent_instance;

  gint depth;
  TestEveryFieldConfig *every;
};

G_DEFINE_FINAL_TYPE (TestMoreFieldsConfig, test_more_fields_config, HP_TYPE_MODULE_CONFIG)

static const HpConfigField more_fields[] = {
  HP_CONFIG_FIELD_INT (TestMoreFieldsConfig, depth, "depth", NULL, 0, 10, 4),
  HP_CONFIG_FIELD_OBJECT (TestMoreFieldsConfig, every, "every", NULL,
                          test_every_field_config_get_type, test_every_field_config_get_type),
};

static void
test_more_fields_config_class_init (TestMoreFieldsConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), more_fields, G_N_ELEMENTS (more_fields));
}

static void
test_more_fields_config_init (TestMoreFieldsConfig *self)
{
}

/**
 * test_more_fields_config_get_depth:
 * @self: a configuration
 *
 * The typed getter of the table macro.
 *
 * Returns: the depth
 */
gint test_more_fields_config_get_depth (TestMoreFieldsConfig *self);
HP_CONFIG_DEFINE_GETTER (test_more_fields_config, TestMoreFieldsConfig, gint, depth, -1)

void test_more_fields_config_set_every (TestMoreFieldsConfig *self, TestEveryFieldConfig *every);
HP_CONFIG_DEFINE_SETTER (test_more_fields_config, TestMoreFieldsConfig, TestEveryFieldConfig *,
                         every, "every")

/* A derivable class keeps its fields in its private struct; these are
 * also the table types of the hand-written property kinds glong,
 * gulong and gfloat */
#define TEST_TYPE_PRIVATE_FIELDS_CONFIG (test_private_fields_config_get_type ())
G_DECLARE_DERIVABLE_TYPE (TestPrivateFieldsConfig, test_private_fields_config,
                          TEST, PRIVATE_FIELDS_CONFIG, HpConfig)

struct _TestPrivateFieldsConfigClass
{
  HpConfigClass parent_class;
};

typedef struct
{
  glong offset;
  gulong size;
  gfloat ratio;
  gchar *note;
  HpModuleConfig *child;         /* a new one by default */
} TestPrivateFieldsConfigPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (TestPrivateFieldsConfig, test_private_fields_config, HP_TYPE_CONFIG)

static const HpConfigField private_fields[] = {
  HP_CONFIG_FIELD_LONG (TestPrivateFieldsConfigPrivate, offset, "offset", "a long", -10, G_MAXLONG, -1),
  HP_CONFIG_FIELD_ULONG (TestPrivateFieldsConfigPrivate, size, "size", "a ulong", 100, 9),
  HP_CONFIG_FIELD_FLOAT (TestPrivateFieldsConfigPrivate, ratio, "ratio", "a float", -1.0, 1.0, 0.5),
  HP_CONFIG_FIELD_STRING (TestPrivateFieldsConfigPrivate, note, "note", "a string", "hello"),
  HP_CONFIG_FIELD_OBJECT (TestPrivateFieldsConfigPrivate, child, "child", "a nested config",
                          hp_module_config_get_type, hp_module_config_get_type),
};

static void
test_private_fields_config_class_init (TestPrivateFieldsConfigClass *klass)
{
  hp_config_class_install_private_fields (HP_CONFIG_CLASS (klass),
                                          TestPrivateFieldsConfig_private_offset,
                                          private_fields, G_N_ELEMENTS (private_fields));
}

static void
test_private_fields_config_init (TestPrivateFieldsConfig *self)
{
}

/**
 * test_private_fields_config_get_ratio:
 * @self: a configuration
 *
 * The typed getter of a private field.
 *
 * Returns: the ratio
 */
gfloat test_private_fields_config_get_ratio (TestPrivateFieldsConfig *self);
HP_CONFIG_DEFINE_PRIVATE_GETTER (test_private_fields_config, TestPrivateFieldsConfig, gfloat,
                                 ratio, 0.0f)

glong test_private_fields_config_get_offset (TestPrivateFieldsConfig *self);
HP_CONFIG_DEFINE_PRIVATE_GETTER (test_private_fields_config, TestPrivateFieldsConfig, glong,
                                 offset, 0)

/* Its subclass adds fields of its instance struct after them */
#define TEST_TYPE_AFTER_PRIVATE_CONFIG (test_after_private_config_get_type ())
G_DECLARE_FINAL_TYPE (TestAfterPrivateConfig, test_after_private_config, TEST, AFTER_PRIVATE_CONFIG,
                      TestPrivateFieldsConfig)

struct _TestAfterPrivateConfig
{
  TestPrivateFieldsConfig parent_instance;

  gint depth;
};

G_DEFINE_FINAL_TYPE (TestAfterPrivateConfig, test_after_private_config,
                     TEST_TYPE_PRIVATE_FIELDS_CONFIG)

static const HpConfigField after_private_fields[] = {
  HP_CONFIG_FIELD_INT (TestAfterPrivateConfig, depth, "depth", NULL, 0, 10, 4),
};

static void
test_after_private_config_class_init (TestAfterPrivateConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), after_private_fields,
                                  G_N_ELEMENTS (after_private_fields));
}

static void
test_after_private_config_init (TestAfterPrivateConfig *self)
{
}

static gchar **
field_names (gpointer config)
{
  guint n;
  g_autofree GParamSpec **fields = hp_config_list_fields (config, &n);
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  for (guint i = 0; i < n; i++)
    g_strv_builder_add (builder, fields[i]->name);
  return g_strv_builder_end (builder);
}

static void
count_notify (GObject    *object,
              GParamSpec *pspec,
              gpointer    user_data)
{
  (*(guint *) user_data)++;
}

static void
test_table_defaults_and_order (void)
{
  g_autoptr(TestEveryFieldConfig) a = g_object_new (TEST_TYPE_EVERY_FIELD_CONFIG, "extra", 9, NULL);
  g_autoptr(TestEveryFieldConfig) b = g_object_new (TEST_TYPE_EVERY_FIELD_CONFIG, NULL);
  g_autoptr(TestMoreFieldsConfig) more = g_object_new (TEST_TYPE_MORE_FIELDS_CONFIG, NULL);
  g_auto(GStrv) names = field_names (a);
  g_auto(GStrv) more_names = field_names (more);
  g_autofree gchar *label = NULL;
  g_auto(GStrv) tags = NULL;
  HpDType dtype;

  g_assert_cmpstrv (names, ((const gchar *[]) { "flag", "count", "width", "big", "ubig", "scale",
                                                "label", "dtype", "bind", "tags", "child", "layers",
                                                "sharding", NULL }));
  /* parent fields first, then the subclass's in table order */
  g_assert_cmpstrv (more_names, ((const gchar *[]) { "param-init", "sharding-config", "depth",
                                                     "every", NULL }));

  g_assert_true (a->flag);
  g_assert_cmpint (a->count, ==, 2);
  g_assert_cmpuint (a->width, ==, 7);
  g_assert_cmpint (a->big, ==, G_MAXINT64);
  g_assert_cmpuint (a->ubig, ==, 3);
  g_assert_cmpfloat (a->scale, ==, 0.25);
  g_assert_cmpstr (a->label, ==, "none");
  g_assert_cmpint (a->dtype, ==, HP_DTYPE_FLOAT64);
  g_assert_cmpint (a->bind, ==, G_BINDING_SYNC_CREATE);
  g_assert_null (a->tags);
  g_assert_null (a->sharding);
  g_assert_cmpint (a->extra, ==, 9);

  /* each configuration has its own default nested instances */
  g_assert_true (HP_IS_MODULE_CONFIG (a->child));
  g_assert_true (HP_IS_CONFIG_LIST (a->layers));
  g_assert_true (a->child != b->child);
  g_assert_true (a->layers != b->layers);
  g_assert_true (TEST_IS_EVERY_FIELD_CONFIG (more->every));
  g_assert_true (HP_IS_MODULE_CONFIG (more->every->child));
  g_assert_cmpint (test_more_fields_config_get_depth (more), ==, 4);

  g_object_get (a, "label", &label, "tags", &tags, "dtype", &dtype, NULL);
  g_assert_cmpstr (label, ==, "none");
  g_assert_null (tags);
  g_assert_cmpint (dtype, ==, HP_DTYPE_FLOAT64);

  /* the defaults are the param specs' */
  g_assert_cmpint (G_PARAM_SPEC_INT (g_object_class_find_property (G_OBJECT_GET_CLASS (a),
                                                                   "count"))->default_value, ==, 2);
}

static void
test_table_set_and_notify (void)
{
  g_autoptr(TestEveryFieldConfig) config = g_object_new (TEST_TYPE_EVERY_FIELD_CONFIG, NULL);
  g_autoptr(TestEveryFieldConfig) nested = g_object_new (TEST_TYPE_EVERY_FIELD_CONFIG, NULL);
  g_autoptr(TestMoreFieldsConfig) more = g_object_new (TEST_TYPE_MORE_FIELDS_CONFIG, NULL);
  g_autoptr(HpShardingConfig) sharding = hp_sharding_config_new ();
  const gchar *tags[] = { "a", "b", NULL };
  guint notified = 0;

  g_signal_connect (config, "notify", G_CALLBACK (count_notify), &notified);

  g_object_set (config, "flag", FALSE, "count", -5, "width", 100, "big", G_MININT64,
                "ubig", G_MAXUINT64, "scale", 1.0, "label", "x", "dtype", HP_DTYPE_INT64,
                "bind", G_BINDING_BIDIRECTIONAL, "tags", tags, "sharding", sharding, NULL);
  g_assert_cmpuint (notified, ==, 11);
  g_assert_false (config->flag);
  g_assert_cmpint (config->count, ==, -5);
  g_assert_cmpuint (config->width, ==, 100);
  g_assert_cmpint (config->big, ==, G_MININT64);
  g_assert_cmpuint (config->ubig, ==, G_MAXUINT64);
  g_assert_cmpfloat (config->scale, ==, 1.0);
  g_assert_cmpstr (config->label, ==, "x");
  g_assert_cmpint (config->dtype, ==, HP_DTYPE_INT64);
  g_assert_cmpint (config->bind, ==, G_BINDING_BIDIRECTIONAL);
  g_assert_cmpstrv (config->tags, tags);
  g_assert_true (config->sharding == sharding);

  /* setting what is there already notifies nothing */
  g_object_set (config, "flag", FALSE, "count", -5, "label", "x", "tags", tags,
                "sharding", sharding, "scale", 1.0, NULL);
  g_assert_cmpuint (notified, ==, 11);
  g_object_set (config, "label", NULL, "tags", NULL, "sharding", NULL, NULL);
  g_assert_cmpuint (notified, ==, 14);
  g_assert_null (config->label);
  g_assert_null (config->tags);
  g_assert_null (config->sharding);

  test_more_fields_config_set_every (more, nested);
  g_assert_true (more->every == nested);

  /* -0.0 is another value than 0.0 */
  g_object_set (config, "scale", 0.0, NULL);
  g_object_set (config, "scale", -0.0, NULL);
  g_assert_cmpuint (notified, ==, 16);
  g_assert_true (signbit (config->scale));
}

static void
test_table_private_fields (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestAfterPrivateConfig) a = g_object_new (TEST_TYPE_AFTER_PRIVATE_CONFIG, NULL);
  g_autoptr(TestAfterPrivateConfig) b = g_object_new (TEST_TYPE_AFTER_PRIVATE_CONFIG,
                                                      "size", 100ul, NULL);
  g_autoptr(HpConfig) read = NULL;
  g_autoptr(HpModuleConfig) child_a = NULL;
  g_autoptr(HpModuleConfig) child_b = NULL;
  g_auto(GStrv) names = field_names (a);
  g_autofree gchar *note = NULL;
  g_autofree gchar *json = NULL;
  g_autofree gchar *range_error = g_strdup_printf ("offset: value -11 out of range [-10, %ld]",
                                                   G_MAXLONG);
  gulong size = 0;
  guint notified = 0;

  /* the parent's private fields first */
  g_assert_cmpstrv (names, ((const gchar *[]) { "offset", "size", "ratio", "note", "child", "depth",
                                                NULL }));
  g_assert_cmpint (test_private_fields_config_get_offset (TEST_PRIVATE_FIELDS_CONFIG (a)), ==, -1);
  g_assert_cmpfloat (test_private_fields_config_get_ratio (TEST_PRIVATE_FIELDS_CONFIG (a)), ==, 0.5f);
  g_object_get (a, "size", &size, "note", &note, "child", &child_a, NULL);
  g_object_get (b, "child", &child_b, NULL);
  g_assert_cmpuint (size, ==, 9);
  g_assert_cmpstr (note, ==, "hello");
  g_assert_true (HP_IS_MODULE_CONFIG (child_a));
  g_assert_true (child_a != child_b);
  g_assert_cmpint (a->depth, ==, 4);

  g_signal_connect (a, "notify", G_CALLBACK (count_notify), &notified);
  g_object_set (a, "offset", G_MAXLONG, "ratio", 0.25f, "depth", 2, NULL);
  g_assert_cmpuint (notified, ==, 3);
  g_object_set (a, "offset", G_MAXLONG, "ratio", 0.25f, NULL);
  g_assert_cmpuint (notified, ==, 3);
  /* a change smaller than a float param spec's epsilon is a change */
  g_object_set (a, "ratio", 0.0f, NULL);
  g_object_set (a, "ratio", 1e-35f, NULL);
  g_assert_cmpuint (notified, ==, 5);
  g_assert_cmpfloat (test_private_fields_config_get_ratio (TEST_PRIVATE_FIELDS_CONFIG (a)), ==, 1e-35f);
  g_assert_cmpint (test_private_fields_config_get_offset (TEST_PRIVATE_FIELDS_CONFIG (a)), ==, G_MAXLONG);
  g_object_set (a, "ratio", -0.75f, NULL);

  /* the ranges of the table */
  g_assert_false (hp_config_set_path_from_string (HP_CONFIG (a), "offset", "-11", &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, range_error);
  g_clear_error (&error);
  g_assert_false (hp_config_set_path_from_string (HP_CONFIG (a), "ratio", "2", &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, "ratio: value 2.0 out of range [-1.0, 1.0]");
  g_clear_error (&error);
  g_assert_false (hp_config_set_path_from_string (HP_CONFIG (a), "size", "101", &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, "size: value 101 out of range [0, 100]");
  g_clear_error (&error);

  json = hp_config_to_json (HP_CONFIG (b), FALSE);
  g_assert_cmpstr (json, ==,
                   "{\"@type\": \"TestAfterPrivateConfig\", \"offset\": -1, \"size\": 100, "
                   "\"ratio\": 0.5, \"note\": \"hello\", \"child\": {\"@type\": \"HpModuleConfig\", "
                   "\"param-init\": null, \"sharding-config\": null}, \"depth\": 4}");
  g_clear_pointer (&json, g_free);
  json = hp_config_to_json (HP_CONFIG (a), FALSE);
  read = hp_config_new_from_json (TEST_TYPE_PRIVATE_FIELDS_CONFIG, json, &error);
  g_assert_no_error (error);
  g_assert_true (TEST_IS_AFTER_PRIVATE_CONFIG (read));
  g_assert_true (hp_config_equal (read, HP_CONFIG (a)));
  g_assert_cmpfloat (test_private_fields_config_get_ratio (TEST_PRIVATE_FIELDS_CONFIG (read)), ==, -0.75f);
}

static void
test_table_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestMoreFieldsConfig) config = g_object_new (TEST_TYPE_MORE_FIELDS_CONFIG, NULL);
  g_autoptr(HpConfig) copy = NULL;
  g_autoptr(HpConfig) read = NULL;
  g_autofree gchar *json = NULL;
  g_autofree gchar *json_again = NULL;

  g_assert_true (hp_config_set_path_from_string (HP_CONFIG (config), "every.label", "text", &error));
  g_assert_true (hp_config_set_path_from_string (HP_CONFIG (config), "every.tags", "[\"p\", \"q\"]",
                                                 &error));
  g_assert_true (hp_config_set_path_from_string (HP_CONFIG (config), "every.child.param-init",
                                                 "weight=zeros", &error));
  g_assert_no_error (error);

  copy = hp_config_copy (HP_CONFIG (config));
  g_assert_true (hp_config_equal (copy, HP_CONFIG (config)));
  /* shallow: the nested configuration is shared */
  g_assert_true (TEST_MORE_FIELDS_CONFIG (copy)->every == config->every);

  json = hp_config_to_json (HP_CONFIG (config), FALSE);
  read = hp_config_new_from_json (TEST_TYPE_MORE_FIELDS_CONFIG, json, &error);
  g_assert_no_error (error);
  g_assert_true (hp_config_equal (read, HP_CONFIG (config)));
  json_again = hp_config_to_json (read, FALSE);
  g_assert_cmpstr (json_again, ==, json);
  g_assert_cmpstr (json, ==,
                   "{\"@type\": \"TestMoreFieldsConfig\", \"param-init\": null, \"sharding-config\": null, "
                   "\"depth\": 4, \"every\": {\"@type\": \"TestEveryFieldConfig\", \"flag\": true, "
                   "\"count\": 2, \"width\": 7, \"big\": 9223372036854775807, \"ubig\": 3, "
                   "\"scale\": 0.25, \"label\": \"text\", \"dtype\": \"float64\", "
                   "\"bind\": [\"sync-create\"], \"tags\": [\"p\", \"q\"], "
                   "\"child\": {\"@type\": \"HpModuleConfig\", \"param-init\": {\"weight\": \"zeros\"}, "
                   "\"sharding-config\": null}, \"layers\": [], \"sharding\": null}}");
}

static void
test_validate (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestMoreFieldsConfig) config = g_object_new (TEST_TYPE_MORE_FIELDS_CONFIG, NULL);
  g_autoptr(TestEveryFieldConfig) item = g_object_new (TEST_TYPE_EVERY_FIELD_CONFIG, NULL);
  g_autofree gchar *before = NULL;
  g_autofree gchar *after = NULL;

  g_assert_true (hp_config_validate (HP_CONFIG (config), &error));
  g_assert_no_error (error);

  /* the error of a nested configuration names its path */
  g_object_set (config->every, "count", 5, "width", 3, NULL);
  before = hp_config_to_json (HP_CONFIG (config), FALSE);
  g_assert_false (hp_config_validate (HP_CONFIG (config), &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, "every: count 5 exceeds width 3");
  g_clear_error (&error);
  after = hp_config_to_json (HP_CONFIG (config), FALSE);
  g_assert_cmpstr (after, ==, before);

  /* list items too */
  g_object_set (config->every, "count", 1, NULL);
  g_object_set (item, "count", 4, "width", 2, NULL);
  hp_config_list_append (config->every->layers, HP_CONFIG (item));
  g_assert_false (hp_config_validate (HP_CONFIG (config), &error));
  g_assert_cmpstr (error->message, ==, "every.layers.0: count 4 exceeds width 2");
  g_clear_error (&error);

  /* the root's own error has no prefix */
  g_assert_false (hp_config_validate (HP_CONFIG (item), &error));
  g_assert_cmpstr (error->message, ==, "count 4 exceeds width 2");
  g_clear_error (&error);
}

/* A configuration whose owner counts its setups; build refuses an
 * invalid configuration before it makes anything */
#define TEST_TYPE_COUNTED (test_counted_get_type ())
G_DECLARE_FINAL_TYPE (TestCounted, test_counted, TEST, COUNTED, HpConfigurable)

struct _TestCounted
{
  HpConfigurable parent_instance;
};

G_DEFINE_FINAL_TYPE (TestCounted, test_counted, HP_TYPE_CONFIGURABLE)

static guint counted_setups;

static gboolean
test_counted_setup (HpConfigurable  *configurable,
                    GError         **error)
{
  TestEveryFieldConfig *config = TEST_EVERY_FIELD_CONFIG (hp_configurable_get_config (configurable));

  if (!HP_CONFIGURABLE_CLASS (test_counted_parent_class)->setup (configurable, error))
    return FALSE;
  counted_setups++;
  if (g_strcmp0 (config->label, "fail") == 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_STATE, "TestCounted: told to fail");
      return FALSE;
    }
  /* a binding that forgets to return TRUE */
  return g_strcmp0 (config->label, "false") != 0;
}

static void
test_counted_class_init (TestCountedClass *klass)
{
  HP_CONFIGURABLE_CLASS (klass)->setup = test_counted_setup;
}

static void
test_counted_init (TestCounted *self)
{
}

/* NaN is in no range: a typed setter (g_object_set()) warns and keeps
 * the value, as for any value out of range; hp_config_set_value() says so */
static void
test_nan_refused (void)
{
  g_autoptr(HpAdamWConfig) config = hp_adamw_config_new ();
  g_autoptr(GError) error = NULL;
  g_auto(GValue) nan_value = G_VALUE_INIT;

  hp_optimizer_config_set_lr (HP_OPTIMIZER_CONFIG (config), 0.5);
  g_test_expect_message ("GLib-GObject", G_LOG_LEVEL_WARNING,
                         "value \"nan\" of type 'gdouble' is invalid or out of range for "
                         "property 'lr' of type 'gdouble'");
  hp_optimizer_config_set_lr (HP_OPTIMIZER_CONFIG (config), NAN);
  g_test_assert_expected_messages ();
  g_assert_cmpfloat (hp_optimizer_config_get_lr (HP_OPTIMIZER_CONFIG (config)), ==, 0.5);

  g_value_init (&nan_value, G_TYPE_DOUBLE);
  g_value_set_double (&nan_value, NAN);
  g_assert_false (hp_config_set_value (HP_CONFIG (config), "eps", &nan_value, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, "eps: NaN is not allowed");
  g_assert_cmpfloat (hp_adamw_config_get_eps (config), ==, 1e-8);
}

static void
test_build_runs_validate_and_setup_once (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestEveryFieldConfig) config = g_object_new (TEST_TYPE_EVERY_FIELD_CONFIG, NULL);
  g_autoptr(GObject) built = NULL;
  g_autoptr(GObject) made = NULL;

  hp_config_register_owner (TEST_TYPE_EVERY_FIELD_CONFIG, TEST_TYPE_COUNTED);
  counted_setups = 0;

  built = hp_config_build (HP_CONFIG (config), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (counted_setups, ==, 1);
  /* initialising again gives the first result */
  g_assert_true (g_initable_init (G_INITABLE (built), NULL, &error));
  g_assert_cmpuint (counted_setups, ==, 1);

  g_object_set (config, "count", 5, "width", 1, NULL);
  hp_test_assert_error (hp_config_build (HP_CONFIG (config), &error), &error, HP_ERROR_CONFIG,
                        "count 5 exceeds width 1");
  g_assert_cmpuint (counted_setups, ==, 1);

  g_object_set (config, "count", 1, "label", "fail", NULL);
  hp_test_assert_error (hp_config_build (HP_CONFIG (config), &error), &error, HP_ERROR_STATE,
                        "TestCounted: told to fail");
  g_object_set (config, "label", "false", NULL);
  hp_test_assert_error (hp_config_build (HP_CONFIG (config), &error), &error, HP_ERROR_CONFIG,
                        "TestCounted.setup() returned FALSE without an error; "
                        "it returns TRUE when it succeeds");

  /* made by g_object_new(), set up by g_initable_init(): the failure
   * is kept and given again */
  made = g_object_new (TEST_TYPE_COUNTED, "config", config, NULL);
  g_assert_false (g_initable_init (G_INITABLE (made), NULL, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_clear_error (&error);
  counted_setups = 0;
  g_assert_false (g_initable_init (G_INITABLE (made), NULL, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpuint (counted_setups, ==, 0);
}

/* ------------------------------------------------------------------ */
/* Fields declared at run time, as a language binding declares them:
 * a subclass with no C struct of its own */

static GType
register_plain_subclass (const gchar *name,
                         GType        parent)
{
  GTypeQuery query;

  g_type_query (parent, &query);
  return g_type_register_static_simple (parent, g_intern_string (name),
                                        query.class_size, NULL, query.instance_size, NULL, 0);
}

static void
add_int_field (GType        type,
               const gchar *name,
               gint64       def,
               gint64       min,
               gint64       max)
{
  g_autoptr(GError) error = NULL;
  g_auto(GValue) v_def = G_VALUE_INIT;
  g_auto(GValue) v_min = G_VALUE_INIT;
  g_auto(GValue) v_max = G_VALUE_INIT;

  /* 64-bit values for an int field, as a binding passes its numbers */
  g_value_set_int64 (g_value_init (&v_def, G_TYPE_INT64), def);
  g_value_set_int64 (g_value_init (&v_min, G_TYPE_INT64), min);
  g_value_set_int64 (g_value_init (&v_max, G_TYPE_INT64), max);
  g_assert_true (hp_config_type_add_field (type, name, G_TYPE_INT, &v_def, &v_min, &v_max,
                                           "an int", &error));
  g_assert_no_error (error);
}

static void
test_runtime_fields (void)
{
  GType type = register_plain_subclass ("TestRuntimeConfig", HP_TYPE_MODULE_CONFIG);
  GType sub = G_TYPE_INVALID;
  g_autoptr(GError) error = NULL;
  g_autoptr(HpLinearConfig) prototype = hp_linear_config_new (3, 5);
  g_autoptr(HpConfig) a = NULL;
  g_autoptr(HpConfig) b = NULL;
  g_autoptr(HpConfig) read = NULL;
  g_autoptr(HpConfig) sub_config = NULL;
  g_autoptr(HpLinearConfig) linear_a = NULL;
  g_autoptr(HpLinearConfig) linear_b = NULL;
  g_autofree gchar *name = NULL;
  g_autofree gchar *json = NULL;
  g_auto(GStrv) names = NULL;
  g_auto(GStrv) sub_names = NULL;
  g_auto(GValue) v_name = G_VALUE_INIT;
  g_auto(GValue) v_linear = G_VALUE_INIT;
  g_auto(GValue) v_scale = G_VALUE_INIT;
  guint notified = 0;

  /* declared out of name order: the order is kept */
  add_int_field (type, "zeta", 4, 1, 10);
  g_value_set_static_string (g_value_init (&v_name, G_TYPE_STRING), "anon");
  g_assert_true (hp_config_type_add_field (type, "name", G_TYPE_STRING, &v_name, NULL, NULL, NULL, &error));
  g_value_set_object (g_value_init (&v_linear, HP_TYPE_LINEAR_CONFIG), prototype);
  g_assert_true (hp_config_type_add_field (type, "proj", HP_TYPE_LINEAR_CONFIG, &v_linear,
                                           NULL, NULL, "a nested default", &error));
  g_value_set_int (g_value_init (&v_scale, G_TYPE_INT), 1);
  /* an int default for a double field converts exactly */
  g_assert_true (hp_config_type_add_field (type, "alpha_rate", G_TYPE_DOUBLE, &v_scale,
                                           NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  /* the prototype was copied: changing it later changes no default */
  g_object_set (prototype, "in-features", 7, NULL);

  a = g_object_new (type, NULL);
  b = g_object_new (type, NULL);
  names = field_names (a);
  g_assert_cmpstrv (names, ((const gchar *[]) { "param-init", "sharding-config", "zeta", "name",
                                                "proj", "alpha-rate", NULL }));
  g_assert_cmpint (hp_test_get_int (a, "zeta"), ==, 4);
  g_assert_cmpfloat (hp_test_get_double (a, "alpha-rate"), ==, 1.0);
  g_object_get (a, "name", &name, "proj", &linear_a, NULL);
  g_object_get (b, "proj", &linear_b, NULL);
  g_assert_cmpstr (name, ==, "anon");
  g_assert_cmpint (hp_linear_config_get_in_features (linear_a), ==, 3);
  g_assert_true (linear_a != linear_b);
  g_assert_true (linear_a != prototype);

  g_signal_connect (a, "notify::zeta", G_CALLBACK (count_notify), &notified);
  g_object_set (a, "zeta", 9, NULL);
  g_object_set (a, "zeta", 9, NULL);
  g_assert_cmpuint (notified, ==, 1);
  g_assert_cmpint (hp_test_get_int (a, "zeta"), ==, 9);
  g_assert_cmpint (hp_test_get_int (b, "zeta"), ==, 4);
  /* a change smaller than a double param spec's epsilon is a change */
  g_object_set (a, "alpha-rate", 0.0, NULL);
  g_object_set (a, "alpha-rate", 1e-100, NULL);
  g_assert_cmpfloat (hp_test_get_double (a, "alpha-rate"), ==, 1e-100);
  g_object_set (a, "alpha-rate", 0.0, NULL);
  g_object_set (a, "alpha-rate", -0.0, NULL);
  g_assert_true (signbit (hp_test_get_double (a, "alpha-rate")));

  json = hp_config_to_json (a, FALSE);
  read = hp_config_new_from_json (type, json, &error);
  g_assert_no_error (error);
  g_assert_true (hp_config_equal (read, a));

  /* a subclass declares its own, after its parent's */
  sub = register_plain_subclass ("TestRuntimeSubConfig", type);
  add_int_field (sub, "extra", 0, 0, 1);
  sub_config = g_object_new (sub, "zeta", 2, "extra", 1, NULL);
  sub_names = field_names (sub_config);
  g_assert_cmpstrv (sub_names, ((const gchar *[]) { "param-init", "sharding-config", "zeta", "name",
                                                    "proj", "alpha-rate", "extra", NULL }));
  g_assert_cmpint (hp_test_get_int (sub_config, "zeta"), ==, 2);
  g_assert_cmpint (hp_test_get_int (sub_config, "extra"), ==, 1);
}

/* The kinds of the hand-written glong, gulong and gfloat properties are
 * field types of bindings too */
static void
test_runtime_narrow_numbers (void)
{
  GType type = register_plain_subclass ("TestRuntimeNumbersConfig", HP_TYPE_CONFIG);
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = NULL;
  g_auto(GValue) v_def = G_VALUE_INIT;
  g_auto(GValue) v_max = G_VALUE_INIT;
  g_auto(GStrv) names = NULL;
  g_autofree gchar *ratio = NULL;
  glong offset = 0;

  g_value_set_double (g_value_init (&v_def, G_TYPE_DOUBLE), 0.5);
  g_value_set_double (g_value_init (&v_max, G_TYPE_DOUBLE), 1.0);
  g_assert_true (hp_config_type_add_field (type, "ratio", G_TYPE_FLOAT, &v_def, NULL, &v_max,
                                           NULL, &error));
  g_assert_true (hp_config_type_add_field (type, "offset", G_TYPE_LONG, NULL, NULL, NULL,
                                           NULL, &error));
  g_assert_true (hp_config_type_add_field (type, "size", G_TYPE_ULONG, NULL, NULL, NULL,
                                           NULL, &error));
  g_assert_no_error (error);

  config = g_object_new (type, "offset", -3l, NULL);
  names = field_names (config);
  g_assert_cmpstrv (names, ((const gchar *[]) { "ratio", "offset", "size", NULL }));
  g_object_get (config, "offset", &offset, NULL);
  g_assert_cmpint (offset, ==, -3);
  g_assert_false (hp_config_set_path_from_string (config, "ratio", "1.5", &error));
  g_assert_cmpstr (error->message, ==, "ratio: value 1.5 out of range [-3.4028235e+38, 1.0]");
  g_clear_error (&error);
  g_assert_true (hp_config_set_path_from_string (config, "ratio", "0.1", &error));
  ratio = hp_config_get_path_as_string (config, "ratio", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (ratio, ==, "0.1");
}

static void
test_runtime_strv_default (void)
{
  GType type = register_plain_subclass ("TestRuntimeStrvConfig", HP_TYPE_CONFIG);
  const gchar *tags[] = { "a", "b", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) a = NULL;
  g_autoptr(HpConfig) b = NULL;
  g_auto(GStrv) read_a = NULL;
  g_auto(GStrv) read_b = NULL;
  g_auto(GValue) v_tags = G_VALUE_INIT;

  g_value_set_boxed (g_value_init (&v_tags, G_TYPE_STRV), tags);
  g_assert_true (hp_config_type_add_field (type, "tags", G_TYPE_STRV, &v_tags, NULL, NULL, NULL, &error));
  g_assert_no_error (error);

  a = g_object_new (type, NULL);
  b = g_object_new (type, NULL);
  g_object_set (a, "tags", (const gchar *[]) { "c", NULL }, NULL);
  g_object_get (a, "tags", &read_a, NULL);
  g_object_get (b, "tags", &read_b, NULL);
  g_assert_cmpstrv (read_a, ((const gchar *[]) { "c", NULL }));
  g_assert_cmpstrv (read_b, tags);
}

static void
test_runtime_field_errors (void)
{
  GType type = register_plain_subclass ("TestRuntimeErrorsConfig", HP_TYPE_CONFIG);
  g_autoptr(GError) error = NULL;
  g_autoptr(HpShardingConfig) sharding = hp_sharding_config_new ();
  g_auto(GValue) v_big = G_VALUE_INIT;
  g_auto(GValue) v_small = G_VALUE_INIT;
  g_auto(GValue) v_text = G_VALUE_INIT;
  g_auto(GValue) v_sharding = G_VALUE_INIT;
  g_auto(GStrv) names = NULL;
  g_autoptr(HpConfig) config = NULL;

  g_value_set_int64 (g_value_init (&v_big, G_TYPE_INT64), 1000);
  g_value_set_int64 (g_value_init (&v_small, G_TYPE_INT64), 10);
  g_value_set_static_string (g_value_init (&v_text, G_TYPE_STRING), "ten");
  g_value_set_object (g_value_init (&v_sharding, HP_TYPE_SHARDING_CONFIG), sharding);

  g_assert_false (hp_config_type_add_field (type, "bad name", G_TYPE_INT, NULL, NULL, NULL, NULL, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, "'bad name' is not a valid field name");
  g_clear_error (&error);

  g_assert_false (hp_config_type_add_field (type, "ptr", G_TYPE_POINTER, NULL, NULL, NULL, NULL, &error));
  g_assert_cmpstr (error->message, ==,
                   "TestRuntimeErrorsConfig.ptr: fields of type gpointer are not supported");
  g_clear_error (&error);

  g_assert_false (hp_config_type_add_field (type, "n", G_TYPE_INT, &v_big, NULL, &v_small, NULL, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, "TestRuntimeErrorsConfig.n: default 1000 is outside [-, 10]");
  g_clear_error (&error);

  g_assert_false (hp_config_type_add_field (type, "n", G_TYPE_INT, NULL, &v_big, &v_small, NULL, &error));
  g_assert_cmpstr (error->message, ==, "TestRuntimeErrorsConfig.n: minimum 1000 is greater than maximum 10");
  g_clear_error (&error);

  g_assert_false (hp_config_type_add_field (type, "n", G_TYPE_UINT, &v_text, NULL, NULL, NULL, &error));
  g_assert_cmpstr (error->message, ==,
                   "TestRuntimeErrorsConfig.n: expected a value of type guint, got gchararray");
  g_clear_error (&error);

  g_assert_false (hp_config_type_add_field (type, "s", HP_TYPE_SHARDING_CONFIG, &v_sharding,
                                            NULL, NULL, NULL, &error));
  g_assert_cmpstr (error->message, ==,
                   "TestRuntimeErrorsConfig.s: only configurations and configuration lists have "
                   "default instances, not HpShardingConfig");
  g_clear_error (&error);

  /* nothing was added by the failures */
  config = g_object_new (type, NULL);
  names = field_names (config);
  g_assert_cmpstrv (names, ((const gchar *[]) { NULL }));
  g_clear_object (&config);

  add_int_field (type, "n", 1, 0, 10);
  g_assert_false (hp_config_type_add_field (type, "n", G_TYPE_INT, NULL, NULL, NULL, NULL, &error));
  g_assert_cmpstr (error->message, ==, "TestRuntimeErrorsConfig already has a field or property 'n'");
  g_clear_error (&error);

  register_plain_subclass ("TestRuntimeErrorsSubConfig", type);
  g_assert_false (hp_config_type_add_field (type, "late", G_TYPE_INT, NULL, NULL, NULL, NULL, &error));
  g_assert_cmpstr (error->message, ==,
                   "cannot add field 'late' to TestRuntimeErrorsConfig: it has subclasses already");
  g_clear_error (&error);
}

static void
test_get_and_set_value (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestMoreFieldsConfig) config = g_object_new (TEST_TYPE_MORE_FIELDS_CONFIG, NULL);
  g_autoptr(TestEveryFieldConfig) item = g_object_new (TEST_TYPE_EVERY_FIELD_CONFIG, NULL);
  g_autoptr(HpLinearConfig) linear = hp_linear_config_new (2, 3);
  g_auto(GValue) value = G_VALUE_INIT;
  g_auto(GValue) number = G_VALUE_INIT;
  g_auto(GValue) read = G_VALUE_INIT;
  g_auto(GValue) listed = G_VALUE_INIT;
  g_auto(GValue) text = G_VALUE_INIT;
  g_auto(GValue) object = G_VALUE_INIT;
  g_autofree gchar *before = NULL;
  g_autofree gchar *after = NULL;

  hp_config_list_append (config->every->layers, HP_CONFIG (item));

  /* a number of another type that the field holds exactly */
  g_value_set_int64 (g_value_init (&number, G_TYPE_INT64), 3);
  g_assert_true (hp_config_set_value (HP_CONFIG (config), "every.count", &number, &error));
  g_assert_no_error (error);
  g_assert_cmpint (config->every->count, ==, 3);
  g_assert_true (hp_config_get_value (HP_CONFIG (config), "every.count", &read, &error));
  g_assert_true (G_VALUE_HOLDS_INT (&read));
  g_assert_cmpint (g_value_get_int (&read), ==, 3);
  g_assert_true (hp_config_get_value (HP_CONFIG (config), "every.layers.0", &listed, &error));
  g_assert_true (g_value_get_object (&listed) == (gpointer) item);

  before = hp_config_to_json (HP_CONFIG (config), FALSE);
  g_value_set_double (g_value_init (&value, G_TYPE_DOUBLE), 3.0);
  g_assert_false (hp_config_set_value (HP_CONFIG (config), "every.count", &value, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, "every.count: expected an integer, got 3.0");
  g_clear_error (&error);
  g_value_set_int64 (&number, 6);
  g_assert_false (hp_config_set_value (HP_CONFIG (config), "every.count", &number, &error));
  g_assert_cmpstr (error->message, ==, "every.count: value 6 out of range [-5, 5]");
  g_clear_error (&error);
  g_value_set_static_string (g_value_init (&text, G_TYPE_STRING), "six");
  g_assert_false (hp_config_set_value (HP_CONFIG (config), "depth", &text, &error));
  g_assert_cmpstr (error->message, ==, "depth: expected a value of type gint, got gchararray");
  g_clear_error (&error);
  g_value_set_object (g_value_init (&object, HP_TYPE_LINEAR_CONFIG), linear);
  g_assert_false (hp_config_set_value (HP_CONFIG (config), "every", &object, &error));
  g_assert_cmpstr (error->message, ==, "every: expected a TestEveryFieldConfig, got a HpLinearConfig");
  g_clear_error (&error);
  g_assert_false (hp_config_set_value (HP_CONFIG (config), "every.layers.0", &text, &error));
  g_assert_cmpstr (error->message, ==,
                   "every.layers.0: a list item must be a configuration, not gchararray");
  g_clear_error (&error);
  g_assert_false (hp_config_set_value (HP_CONFIG (config), "every.nothing", &number, &error));
  g_assert_cmpstr (error->message, ==, "every.nothing: no field 'nothing' in TestEveryFieldConfig");
  g_clear_error (&error);
  after = hp_config_to_json (HP_CONFIG (config), FALSE);
  g_assert_cmpstr (after, ==, before);

  /* a list item is replaced by a configuration */
  g_assert_true (hp_config_set_value (HP_CONFIG (config), "every.layers.0", &object, &error));
  g_assert_true (hp_config_list_peek (config->every->layers, 0) == HP_CONFIG (linear));

  g_value_unset (&read);
  g_assert_false (hp_config_get_value (HP_CONFIG (config), "depth.x", &read, &error));
  g_assert_false (G_IS_VALUE (&read));
  g_assert_cmpstr (error->message, ==, "depth: is a gint field, not a configuration or a list");
  g_clear_error (&error);
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init (&argc, &argv);

  g_test_add_func ("/config-fields/table/defaults-and-order", test_table_defaults_and_order);
  g_test_add_func ("/config-fields/table/set-and-notify", test_table_set_and_notify);
  g_test_add_func ("/config-fields/table/values", test_table_values);
  g_test_add_func ("/config-fields/table/private-fields", test_table_private_fields);
  g_test_add_func ("/config-fields/validate", test_validate);
  g_test_add_func ("/config-fields/nan-refused", test_nan_refused);
  g_test_add_func ("/config-fields/build-runs-validate-and-setup-once",
                   test_build_runs_validate_and_setup_once);
  g_test_add_func ("/config-fields/get-and-set-value", test_get_and_set_value);
  g_test_add_func ("/config-fields/runtime", test_runtime_fields);
  g_test_add_func ("/config-fields/runtime-strv-default", test_runtime_strv_default);
  g_test_add_func ("/config-fields/runtime-errors", test_runtime_field_errors);
  g_test_add_func ("/config-fields/runtime-narrow-numbers", test_runtime_narrow_numbers);

  return g_test_run ();
}
