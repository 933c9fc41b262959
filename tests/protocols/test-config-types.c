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
};

G_DEFINE_FINAL_TYPE (TestLeafConfig, test_leaf_config, HP_TYPE_CONFIG)

static void
test_leaf_config_class_init (TestLeafConfigClass *klass)
{
  hp_test_class_store_properties (klass);
  g_object_class_install_property (G_OBJECT_CLASS (klass), 1,
                                   g_param_spec_int ("depth", NULL, NULL, 0, 100, 1, RW));
  g_object_class_install_property (G_OBJECT_CLASS (klass), 2,
                                   g_param_spec_double ("scale", NULL, NULL,
                                                        -G_MAXDOUBLE, G_MAXDOUBLE, 1.0, RW));
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
  HpConfig *config = hp_configurable_get_config (configurable);

  if (!HP_CONFIGURABLE_CLASS (test_leaf_parent_class)->setup (configurable, error))
    return FALSE;

  if (hp_test_get_int (config, "depth") == 13)
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
};

G_DEFINE_FINAL_TYPE (TestMiddleConfig, test_middle_config, HP_TYPE_CONFIG)

static void
test_middle_config_class_init (TestMiddleConfigClass *klass)
{
  hp_test_class_store_properties (klass);
  g_object_class_install_property (G_OBJECT_CLASS (klass), 1,
                                   g_param_spec_string ("note", NULL, NULL, NULL, RW));
  g_object_class_install_property (G_OBJECT_CLASS (klass), 2,
                                   g_param_spec_object ("leaf", NULL, NULL, TEST_TYPE_LEAF_CONFIG, RW));
}

static void
test_middle_config_init (TestMiddleConfig *self)
{
}

struct _TestLayerConfig
{
  HpConfig parent_instance;
};

G_DEFINE_FINAL_TYPE (TestLayerConfig, test_layer_config, HP_TYPE_CONFIG)

static void
test_layer_config_class_init (TestLayerConfigClass *klass)
{
  hp_test_class_store_properties (klass);
  g_object_class_install_property (G_OBJECT_CLASS (klass), 1,
                                   g_param_spec_int ("n-heads", NULL, NULL, 1, 1024, 8, RW));
  g_object_class_install_property (G_OBJECT_CLASS (klass), 2,
                                   g_param_spec_object ("leaf", NULL, NULL, TEST_TYPE_LEAF_CONFIG, RW));
}

static void
test_layer_config_init (TestLayerConfig *self)
{
}

/* ------------------------------------------------------------------ */

G_DEFINE_TYPE (TestToyConfig, test_toy_config, HP_TYPE_CONFIG)

static void
test_toy_config_class_init (TestToyConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  guint id = 1;

  hp_test_class_store_properties (klass);
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_boolean ("flag", NULL, NULL, FALSE, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_int ("n-heads", NULL, NULL, 1, 1024, 8, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_int ("mode", NULL, NULL, 0, 3, 0,
                                                     G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                                                     G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_uint ("count", NULL, NULL, 0, G_MAXUINT, 3, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_long ("offset", NULL, NULL, G_MINLONG, G_MAXLONG, -1, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_ulong ("size", NULL, NULL, 0, G_MAXULONG, 0, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_int64 ("big", NULL, NULL, G_MININT64, G_MAXINT64, 0, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_uint64 ("seed", NULL, NULL, 0, G_MAXUINT64, 42, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_float ("ratio", NULL, NULL, -G_MAXFLOAT, G_MAXFLOAT, 0.5f, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_double ("lr", NULL, NULL, 0.0, 10.0, 0.001, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_double ("bias", NULL, NULL, -INFINITY, INFINITY, 0.0, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_string ("name", NULL, NULL, "toy", RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_enum ("kind", NULL, NULL, TEST_TYPE_SIZE, TEST_SIZE_SMALL, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_flags ("options", NULL, NULL, TEST_TYPE_OPTIONS, 0, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_boxed ("tags", NULL, NULL, G_TYPE_STRV, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_object ("middle", NULL, NULL, TEST_TYPE_MIDDLE_CONFIG, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_object ("layers", NULL, NULL, HP_TYPE_CONFIG_LIST, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_object ("placement", NULL, NULL, HP_TYPE_NAMED_PLACEMENT, RW));
  g_object_class_install_property (object_class, id++,
                                   g_param_spec_string ("label", NULL, NULL, "read-only",
                                                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), TEST_TYPE_TOY);
}

static void
test_toy_config_init (TestToyConfig *self)
{
}

struct _TestFancyToyConfig
{
  TestToyConfig parent_instance;
};

G_DEFINE_FINAL_TYPE (TestFancyToyConfig, test_fancy_toy_config, TEST_TYPE_TOY_CONFIG)

static void
test_fancy_toy_config_class_init (TestFancyToyConfigClass *klass)
{
  hp_test_class_store_properties (klass);
  g_object_class_install_property (G_OBJECT_CLASS (klass), 1,
                                   g_param_spec_int ("extra", NULL, NULL, 0, 10, 5, RW));
}

static void
test_fancy_toy_config_init (TestFancyToyConfig *self)
{
}

G_DEFINE_TYPE (TestToy, test_toy, HP_TYPE_CONFIGURABLE)

static void
test_toy_class_init (TestToyClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  hp_test_class_store_properties (klass);
  g_object_class_install_property (object_class, 1,
                                   g_param_spec_string ("device", NULL, NULL, "cpu", RW));
  g_object_class_install_property (object_class, 2,
                                   g_param_spec_int ("rank", NULL, NULL, 0, 64, 0, RW | G_PARAM_CONSTRUCT));
  g_object_class_install_property (object_class, 3,
                                   g_param_spec_int ("id", NULL, NULL, 0, 100, 0,
                                                     G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
}

static void
test_toy_init (TestToy *self)
{
}

HP_TEST_DEFINE_EMPTY_TYPE (TestSubToy, test_sub_toy, TestToy, TEST_TYPE_TOY)

HP_TEST_DEFINE_EMPTY_TYPE (TestPlain, test_plain, HpConfigurable, HP_TYPE_CONFIGURABLE)

/* ------------------------------------------------------------------ */

struct _TestOrphanConfig
{
  HpConfig parent_instance;
};

G_DEFINE_FINAL_TYPE (TestOrphanConfig, test_orphan_config, HP_TYPE_CONFIG)

static void
test_orphan_config_class_init (TestOrphanConfigClass *klass)
{
  hp_test_class_store_properties (klass);
  g_object_class_install_property (G_OBJECT_CLASS (klass), 1,
                                   g_param_spec_int ("x", NULL, NULL, 0, 10, 0, RW));
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

struct _TestOddConfig
{
  HpConfig parent_instance;
};

G_DEFINE_FINAL_TYPE (TestOddConfig, test_odd_config, HP_TYPE_CONFIG)

static void
test_odd_config_class_init (TestOddConfigClass *klass)
{
  hp_test_class_store_properties (klass);
  g_object_class_install_property (G_OBJECT_CLASS (klass), 1,
                                   g_param_spec_pointer ("handle", NULL, NULL, RW));
  g_object_class_install_property (G_OBJECT_CLASS (klass), 2,
                                   g_param_spec_int ("ok", NULL, NULL, 0, 10, 0, RW));
  g_object_class_install_property (G_OBJECT_CLASS (klass), 3,
                                   g_param_spec_boxed ("blob", NULL, NULL, G_TYPE_BYTES, RW));
}

static void
test_odd_config_init (TestOddConfig *self)
{
}

struct _TestShardedConfig
{
  HpModuleConfig parent_instance;
};

G_DEFINE_FINAL_TYPE (TestShardedConfig, test_sharded_config, HP_TYPE_MODULE_CONFIG)

static void
test_sharded_config_class_init (TestShardedConfigClass *klass)
{
  hp_test_class_store_properties (klass);
  g_object_class_install_property (G_OBJECT_CLASS (klass), 1,
                                   g_param_spec_object ("init", NULL, NULL, HP_TYPE_INITIALIZER, RW));
  g_object_class_install_property (G_OBJECT_CLASS (klass), 2,
                                   g_param_spec_object ("local-map", NULL, NULL, HP_TYPE_LOCAL_MAP_CONFIG, RW));
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
