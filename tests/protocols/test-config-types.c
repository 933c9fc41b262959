/* test-config-types.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>

#include "hp-test-utils.h"
#include "test-config-types.h"

GType
test_size_get_type (void)
{
  static gsize type = 0;

  if (g_once_init_enter (&type))
    {
      static const GEnumValue values[] = {
        { TEST_SIZE_SMALL, "TEST_SIZE_SMALL", "small" },
        { TEST_SIZE_LARGE, "TEST_SIZE_LARGE", "large" },
        { 0, NULL, NULL },
      };

      g_once_init_leave (&type, g_enum_register_static ("TestSize", values));
    }
  return type;
}

GType
test_options_get_type (void)
{
  static gsize type = 0;

  if (g_once_init_enter (&type))
    {
      static const GFlagsValue values[] = {
        { TEST_OPTIONS_ALPHA, "TEST_OPTIONS_ALPHA", "alpha" },
        { TEST_OPTIONS_BETA, "TEST_OPTIONS_BETA", "beta" },
        { TEST_OPTIONS_GAMMA, "TEST_OPTIONS_GAMMA", "gamma" },
        { 0, NULL, NULL },
      };

      g_once_init_leave (&type, g_flags_register_static ("TestOptions", values));
    }
  return type;
}

#define RW (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY)

/* ------------------------------------------------------------------ */

struct _TestLeafConfig
{
  HpConfig parent_instance;

  gint depth;
  gdouble scale;
};

G_DEFINE_FINAL_TYPE (TestLeafConfig, test_leaf_config, HP_TYPE_CONFIG)

static const HpConfigField leaf_fields[] = {
  HP_CONFIG_FIELD_INT (TestLeafConfig, depth, "depth", NULL, 0, 100, 1),
  HP_CONFIG_FIELD_DOUBLE (TestLeafConfig, scale, "scale", NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 1.0),
};

static void
test_leaf_config_class_init (TestLeafConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), leaf_fields, G_N_ELEMENTS (leaf_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), TEST_TYPE_LEAF);
}

static void
test_leaf_config_init (TestLeafConfig *self)
{
}

struct _TestLeaf
{
  HpConfigurable parent_instance;
};

G_DEFINE_FINAL_TYPE (TestLeaf, test_leaf, HP_TYPE_CONFIGURABLE)

static gboolean
test_leaf_setup (HpConfigurable  *configurable,
                 GError         **error)
{
  TestLeafConfig *config = TEST_LEAF_CONFIG (hp_configurable_get_config (configurable));

  if (!HP_CONFIGURABLE_CLASS (test_leaf_parent_class)->setup (configurable, error))
    return FALSE;

  if (config->depth == 13)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "TestLeaf: depth 13 is unlucky");
      return FALSE;
    }
  return TRUE;
}

static void
test_leaf_class_init (TestLeafClass *klass)
{
  HP_CONFIGURABLE_CLASS (klass)->setup = test_leaf_setup;
}

static void
test_leaf_init (TestLeaf *self)
{
}

/* ------------------------------------------------------------------ */

struct _TestMiddleConfig
{
  HpConfig parent_instance;

  gchar *note;
  TestLeafConfig *leaf;
};

G_DEFINE_FINAL_TYPE (TestMiddleConfig, test_middle_config, HP_TYPE_CONFIG)

/* the nested configurations of the tests are NULL unless set */
static const HpConfigField middle_fields[] = {
  HP_CONFIG_FIELD_STRING (TestMiddleConfig, note, "note", NULL, NULL),
  HP_CONFIG_FIELD_OBJECT (TestMiddleConfig, leaf, "leaf", NULL, test_leaf_config_get_type, NULL),
};

static void
test_middle_config_class_init (TestMiddleConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), middle_fields, G_N_ELEMENTS (middle_fields));
}

static void
test_middle_config_init (TestMiddleConfig *self)
{
}

struct _TestLayerConfig
{
  HpConfig parent_instance;

  gint n_heads;
  TestLeafConfig *leaf;
};

G_DEFINE_FINAL_TYPE (TestLayerConfig, test_layer_config, HP_TYPE_CONFIG)

static const HpConfigField layer_fields[] = {
  HP_CONFIG_FIELD_INT (TestLayerConfig, n_heads, "n-heads", NULL, 1, 1024, 8),
  HP_CONFIG_FIELD_OBJECT (TestLayerConfig, leaf, "leaf", NULL, test_leaf_config_get_type, NULL),
};

static void
test_layer_config_class_init (TestLayerConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), layer_fields, G_N_ELEMENTS (layer_fields));
}

static void
test_layer_config_init (TestLayerConfig *self)
{
}

/* ------------------------------------------------------------------ */

typedef struct
{
  gboolean flag;
  gint n_heads;
  guint count;
  glong offset;
  gulong size;
  gint64 big;
  guint64 seed;
  gfloat ratio;
  gdouble lr;
  gdouble bias;
  gchar *name;
  TestSize kind;
  TestOptions options;
  GStrv tags;
  TestMiddleConfig *middle;
  HpConfigList *layers;
  HpNamedPlacement *placement;

  gint mode;                    /* not a field: construct-only */
} TestToyConfigPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (TestToyConfig, test_toy_config, HP_TYPE_CONFIG)

/* A derivable class: the fields are in its private struct */
static const HpConfigField toy_fields[] = {
  HP_CONFIG_FIELD_BOOLEAN (TestToyConfigPrivate, flag, "flag", NULL, FALSE),
  HP_CONFIG_FIELD_INT (TestToyConfigPrivate, n_heads, "n-heads", NULL, 1, 1024, 8),
  HP_CONFIG_FIELD_UINT (TestToyConfigPrivate, count, "count", NULL, G_MAXUINT, 3),
  HP_CONFIG_FIELD_LONG (TestToyConfigPrivate, offset, "offset", NULL, G_MINLONG, G_MAXLONG, -1),
  HP_CONFIG_FIELD_ULONG (TestToyConfigPrivate, size, "size", NULL, G_MAXULONG, 0),
  HP_CONFIG_FIELD_INT64 (TestToyConfigPrivate, big, "big", NULL, G_MININT64, G_MAXINT64, 0),
  HP_CONFIG_FIELD_UINT64 (TestToyConfigPrivate, seed, "seed", NULL, G_MAXUINT64, 42),
  HP_CONFIG_FIELD_FLOAT (TestToyConfigPrivate, ratio, "ratio", NULL, -G_MAXFLOAT, G_MAXFLOAT, 0.5),
  HP_CONFIG_FIELD_DOUBLE (TestToyConfigPrivate, lr, "lr", NULL, 0.0, 10.0, 0.001),
  HP_CONFIG_FIELD_DOUBLE (TestToyConfigPrivate, bias, "bias", NULL, -INFINITY, INFINITY, 0.0),
  HP_CONFIG_FIELD_STRING (TestToyConfigPrivate, name, "name", NULL, "toy"),
  HP_CONFIG_FIELD_ENUM (TestToyConfigPrivate, kind, "kind", NULL, test_size_get_type, TEST_SIZE_SMALL),
  HP_CONFIG_FIELD_FLAGS (TestToyConfigPrivate, options, "options", NULL, test_options_get_type, 0),
  HP_CONFIG_FIELD_STRV (TestToyConfigPrivate, tags, "tags", NULL),
  HP_CONFIG_FIELD_OBJECT (TestToyConfigPrivate, middle, "middle", NULL,
                          test_middle_config_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (TestToyConfigPrivate, layers, "layers", NULL, hp_config_list_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (TestToyConfigPrivate, placement, "placement", NULL,
                          hp_named_placement_get_type, NULL),
};

/* The properties that are not fields */
enum {
  TOY_CONFIG_PROP_MODE = 1,
  TOY_CONFIG_PROP_LABEL,
};

static void
test_toy_config_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  TestToyConfigPrivate *priv = test_toy_config_get_instance_private (TEST_TOY_CONFIG (object));

  switch (prop_id)
    {
    case TOY_CONFIG_PROP_MODE:
      g_value_set_int (value, priv->mode);
      break;
    case TOY_CONFIG_PROP_LABEL:
      g_value_set_static_string (value, "read-only");
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_toy_config_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  TestToyConfigPrivate *priv = test_toy_config_get_instance_private (TEST_TOY_CONFIG (object));

  if (prop_id == TOY_CONFIG_PROP_MODE)
    priv->mode = g_value_get_int (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
test_toy_config_class_init (TestToyConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = test_toy_config_get_property;
  object_class->set_property = test_toy_config_set_property;
  g_object_class_install_property (object_class, TOY_CONFIG_PROP_MODE,
                                   g_param_spec_int ("mode", NULL, NULL, 0, 3, 0,
                                                     G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                                                     G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (object_class, TOY_CONFIG_PROP_LABEL,
                                   g_param_spec_string ("label", NULL, NULL, "read-only",
                                                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  hp_config_class_install_private_fields (HP_CONFIG_CLASS (klass), TestToyConfig_private_offset,
                                          toy_fields, G_N_ELEMENTS (toy_fields));

  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), TEST_TYPE_TOY);
}

static void
test_toy_config_init (TestToyConfig *self)
{
}

struct _TestFancyToyConfig
{
  TestToyConfig parent_instance;

  gint extra;
};

G_DEFINE_FINAL_TYPE (TestFancyToyConfig, test_fancy_toy_config, TEST_TYPE_TOY_CONFIG)

static const HpConfigField fancy_toy_fields[] = {
  HP_CONFIG_FIELD_INT (TestFancyToyConfig, extra, "extra", NULL, 0, 10, 5),
};

static void
test_fancy_toy_config_class_init (TestFancyToyConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), fancy_toy_fields,
                                  G_N_ELEMENTS (fancy_toy_fields));
}

static void
test_fancy_toy_config_init (TestFancyToyConfig *self)
{
}

typedef struct
{
  gchar *device;
  gint rank;
} TestToyPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (TestToy, test_toy, HP_TYPE_CONFIGURABLE)

enum {
  TOY_PROP_DEVICE = 1,
  TOY_PROP_RANK,
  TOY_PROP_ID,
};

static void
test_toy_finalize (GObject *object)
{
  TestToyPrivate *priv = test_toy_get_instance_private (TEST_TOY (object));

  g_free (priv->device);

  G_OBJECT_CLASS (test_toy_parent_class)->finalize (object);
}

static void
test_toy_get_property (GObject    *object,
                       guint       prop_id,
                       GValue     *value,
                       GParamSpec *pspec)
{
  TestToyPrivate *priv = test_toy_get_instance_private (TEST_TOY (object));

  switch (prop_id)
    {
    case TOY_PROP_DEVICE:
      g_value_set_string (value, priv->device);
      break;
    case TOY_PROP_RANK:
      g_value_set_int (value, priv->rank);
      break;
    case TOY_PROP_ID:
      g_value_set_int (value, 0);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_toy_set_property (GObject      *object,
                       guint         prop_id,
                       const GValue *value,
                       GParamSpec   *pspec)
{
  TestToyPrivate *priv = test_toy_get_instance_private (TEST_TOY (object));

  switch (prop_id)
    {
    case TOY_PROP_DEVICE:
      g_free (priv->device);
      priv->device = g_value_dup_string (value);
      break;
    case TOY_PROP_RANK:
      priv->rank = g_value_get_int (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_toy_class_init (TestToyClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = test_toy_finalize;
  object_class->get_property = test_toy_get_property;
  object_class->set_property = test_toy_set_property;
  g_object_class_install_property (object_class, TOY_PROP_DEVICE,
                                   g_param_spec_string ("device", NULL, NULL, "cpu", RW));
  g_object_class_install_property (object_class, TOY_PROP_RANK,
                                   g_param_spec_int ("rank", NULL, NULL, 0, 64, 0, RW | G_PARAM_CONSTRUCT));
  g_object_class_install_property (object_class, TOY_PROP_ID,
                                   g_param_spec_int ("id", NULL, NULL, 0, 100, 0,
                                                     G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
}

static void
test_toy_init (TestToy *self)
{
  TestToyPrivate *priv = test_toy_get_instance_private (self);

  priv->device = g_strdup ("cpu");
}

HP_TEST_DEFINE_EMPTY_TYPE (TestSubToy, test_sub_toy, TestToy, TEST_TYPE_TOY)

HP_TEST_DEFINE_EMPTY_TYPE (TestPlain, test_plain, HpConfigurable, HP_TYPE_CONFIGURABLE)

/* ------------------------------------------------------------------ */

struct _TestOrphanConfig
{
  HpConfig parent_instance;

  gint x;
};

G_DEFINE_FINAL_TYPE (TestOrphanConfig, test_orphan_config, HP_TYPE_CONFIG)

static const HpConfigField orphan_fields[] = {
  HP_CONFIG_FIELD_INT (TestOrphanConfig, x, "x", NULL, 0, 10, 0),
};

static void
test_orphan_config_class_init (TestOrphanConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), orphan_fields, G_N_ELEMENTS (orphan_fields));
}

static void
test_orphan_config_init (TestOrphanConfig *self)
{
}

G_DEFINE_ABSTRACT_TYPE (TestAbstractOwner, test_abstract_owner, HP_TYPE_CONFIGURABLE)

static void
test_abstract_owner_class_init (TestAbstractOwnerClass *klass)
{
}

static void
test_abstract_owner_init (TestAbstractOwner *self)
{
}

HP_TEST_DEFINE_OWNED_CONFIG (TestAbstractOwnerConfig, test_abstract_owner_config,
                             HpConfig, HP_TYPE_CONFIG, TEST_TYPE_ABSTRACT_OWNER)

HP_TEST_DEFINE_OWNED_CONFIG (TestLazyConfig, test_lazy_config,
                             HpConfig, HP_TYPE_CONFIG, TEST_TYPE_LAZY)

HP_TEST_DEFINE_EMPTY_TYPE (TestLazy, test_lazy, HpConfigurable, HP_TYPE_CONFIGURABLE)

HP_TEST_DEFINE_EMPTY_TYPE (TestLateConfig, test_late_config, HpConfig, HP_TYPE_CONFIG)

HP_TEST_DEFINE_EMPTY_TYPE (TestLate, test_late, HpConfigurable, HP_TYPE_CONFIGURABLE)

/* "handle" and "blob" are of types no field may have: hand-written
 * properties, which the configuration leaves out */
struct _TestOddConfig
{
  HpConfig parent_instance;

  gint ok;
  gpointer handle;
  GBytes *blob;
};

G_DEFINE_FINAL_TYPE (TestOddConfig, test_odd_config, HP_TYPE_CONFIG)

enum {
  ODD_PROP_HANDLE = 1,
  ODD_PROP_BLOB,
};

static const HpConfigField odd_fields[] = {
  HP_CONFIG_FIELD_INT (TestOddConfig, ok, "ok", NULL, 0, 10, 0),
};

static void
test_odd_config_finalize (GObject *object)
{
  g_clear_pointer (&TEST_ODD_CONFIG (object)->blob, g_bytes_unref);

  G_OBJECT_CLASS (test_odd_config_parent_class)->finalize (object);
}

static void
test_odd_config_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  TestOddConfig *self = TEST_ODD_CONFIG (object);

  switch (prop_id)
    {
    case ODD_PROP_HANDLE:
      g_value_set_pointer (value, self->handle);
      break;
    case ODD_PROP_BLOB:
      g_value_set_boxed (value, self->blob);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_odd_config_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  TestOddConfig *self = TEST_ODD_CONFIG (object);

  switch (prop_id)
    {
    case ODD_PROP_HANDLE:
      self->handle = g_value_get_pointer (value);
      break;
    case ODD_PROP_BLOB:
      g_clear_pointer (&self->blob, g_bytes_unref);
      self->blob = g_value_dup_boxed (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_odd_config_class_init (TestOddConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = test_odd_config_finalize;
  object_class->get_property = test_odd_config_get_property;
  object_class->set_property = test_odd_config_set_property;
  g_object_class_install_property (object_class, ODD_PROP_HANDLE,
                                   g_param_spec_pointer ("handle", NULL, NULL, RW));
  g_object_class_install_property (object_class, ODD_PROP_BLOB,
                                   g_param_spec_boxed ("blob", NULL, NULL, G_TYPE_BYTES, RW));
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), odd_fields, G_N_ELEMENTS (odd_fields));
}

static void
test_odd_config_init (TestOddConfig *self)
{
}

struct _TestShardedConfig
{
  HpModuleConfig parent_instance;

  HpInitializer *init;
  HpLocalMapConfig *local_map;
};

G_DEFINE_FINAL_TYPE (TestShardedConfig, test_sharded_config, HP_TYPE_MODULE_CONFIG)

static const HpConfigField sharded_fields[] = {
  HP_CONFIG_FIELD_OBJECT (TestShardedConfig, init, "init", NULL, hp_initializer_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (TestShardedConfig, local_map, "local-map", NULL,
                          hp_local_map_config_get_type, NULL),
};

static void
test_sharded_config_class_init (TestShardedConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), sharded_fields,
                                  G_N_ELEMENTS (sharded_fields));
}

static void
test_sharded_config_init (TestShardedConfig *self)
{
}

/* ------------------------------------------------------------------ */

static HpLocalMapConfig *
new_local_map (void)
{
  g_autoptr(HpLocalMapConfig) local_map = hp_local_map_config_new ("inner");
  g_autoptr(GPtrArray) in = g_ptr_array_new_with_free_func (hp_test_unref_nullable);
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (hp_test_unref_nullable);
  g_autoptr(GPtrArray) in_grad = g_ptr_array_new_with_free_func (hp_test_unref_nullable);

  g_ptr_array_add (in, hp_test_named ("tp:S(0)"));
  g_ptr_array_add (in, NULL);
  g_ptr_array_add (out, hp_test_named ("tp:S(0), dp:R"));
  g_ptr_array_add (in_grad, hp_test_named ("tp:P(sum)"));
  g_ptr_array_add (in_grad, NULL);
  hp_local_map_config_set_in_placements (local_map, in);
  hp_local_map_config_set_out_placements (local_map, out);
  hp_local_map_config_set_in_grad_placements (local_map, in_grad);
  return g_steal_pointer (&local_map);
}

HpConfig *
test_sharded_config_new_populated (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParamInit) param_init = hp_param_init_new_from_string ("weight=normal(std=0.02); bias=zeros", &error);
  g_autoptr(HpShardingConfig) sharding = hp_sharding_config_new ();
  g_autoptr(HpLocalMapConfig) local_map = new_local_map ();
  g_autoptr(HpLocalMapConfig) plain_local_map = hp_local_map_config_new (NULL);
  g_autoptr(HpInitializer) init = hp_initializer_new_trunc_normal (0.0, 0.5, -1.0, 1.0);
  g_autoptr(HpNamedPlacement) weight = hp_test_named ("tp:S(0)");
  g_autoptr(HpNamedPlacement) x = hp_test_named ("tp:R");
  g_autoptr(HpNamedPlacement) x_dst = hp_test_named ("tp:S(1), dp:S(0)");
  g_autoptr(HpNamedPlacement) y = hp_test_named ("tp:S(-1)");
  g_autoptr(HpNamedPlacement) y_dst = hp_test_named ("");

  g_assert_no_error (error);
  hp_sharding_config_set_state_sharding (sharding, "layers.0.weight", weight);
  hp_sharding_config_set_state_sharding (sharding, "bias", x);
  hp_sharding_config_set_in_src_sharding (sharding, "x", x);
  hp_sharding_config_set_in_dst_sharding (sharding, "x", x_dst);
  hp_sharding_config_set_out_src_sharding (sharding, 1, y);
  hp_sharding_config_set_out_dst_sharding (sharding, 0, y_dst);
  hp_sharding_config_set_local_map (sharding, local_map);

  return g_object_new (TEST_TYPE_SHARDED_CONFIG,
                       "param-init", param_init,
                       "sharding-config", sharding,
                       "init", init,
                       "local-map", plain_local_map,
                       NULL);
}

static HpConfig *
new_leaf (gint    depth,
          gdouble scale)
{
  return g_object_new (TEST_TYPE_LEAF_CONFIG, "depth", depth, "scale", scale, NULL);
}

HpConfig *
test_toy_config_new_populated (void)
{
  const gchar *tags[] = { "x", "y", NULL };
  g_autoptr(HpConfig) leaf = new_leaf (5, 2.0);
  g_autoptr(HpConfig) middle = g_object_new (TEST_TYPE_MIDDLE_CONFIG, "note", "mid", "leaf", leaf, NULL);
  g_autoptr(HpConfig) leaf0 = new_leaf (1, 0.25);
  g_autoptr(HpConfig) leaf1 = new_leaf (2, 0.5);
  g_autoptr(HpConfig) layer0 = g_object_new (TEST_TYPE_LAYER_CONFIG, "n-heads", 2, "leaf", leaf0, NULL);
  g_autoptr(HpConfig) layer1 = g_object_new (TEST_TYPE_LAYER_CONFIG, "n-heads", 4, "leaf", leaf1, NULL);
  g_autoptr(HpConfigList) layers = hp_config_list_new ();
  g_autoptr(HpNamedPlacement) placement = hp_named_placement_new_from_string ("tp:S(0)", NULL);

  hp_config_list_append (layers, layer0);
  hp_config_list_append (layers, layer1);

  return g_object_new (TEST_TYPE_TOY_CONFIG,
                       "flag", TRUE,
                       "n-heads", 16,
                       "count", 7u,
                       "offset", -2L,
                       "size", 3UL,
                       "big", G_GINT64_CONSTANT (-5),
                       "seed", G_GUINT64_CONSTANT (1234),
                       "ratio", 0.75f,
                       "lr", 0.01,
                       "bias", 1.5,
                       "name", "toy-1",
                       "kind", TEST_SIZE_LARGE,
                       "options", TEST_OPTIONS_ALPHA | TEST_OPTIONS_BETA,
                       "tags", tags,
                       "middle", middle,
                       "layers", layers,
                       "placement", placement,
                       NULL);
}
