/* test-config-types.h: configuration and configurable classes shared by
 * the config test programs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <hp-protocols/hp-protocols.h>

G_BEGIN_DECLS

typedef enum
{
  TEST_SIZE_SMALL,
  TEST_SIZE_LARGE,
} TestSize;

typedef enum
{
  TEST_OPTIONS_ALPHA = 1 << 0,
  TEST_OPTIONS_BETA = 1 << 1,
  TEST_OPTIONS_GAMMA = 1 << 2,
} TestOptions;

GType test_size_get_type (void);
GType test_options_get_type (void);
#define TEST_TYPE_SIZE (test_size_get_type ())
#define TEST_TYPE_OPTIONS (test_options_get_type ())

/* depth (gint, [0, 100], 1), scale (gdouble, 1.0); builds TestLeaf, which
 * refuses depth 13 */
#define TEST_TYPE_LEAF_CONFIG (test_leaf_config_get_type ())
G_DECLARE_FINAL_TYPE (TestLeafConfig, test_leaf_config, TEST, LEAF_CONFIG, HpConfig)
#define TEST_TYPE_LEAF (test_leaf_get_type ())
G_DECLARE_FINAL_TYPE (TestLeaf, test_leaf, TEST, LEAF, HpConfigurable)

/* note (string), leaf (TestLeafConfig); no owner */
#define TEST_TYPE_MIDDLE_CONFIG (test_middle_config_get_type ())
G_DECLARE_FINAL_TYPE (TestMiddleConfig, test_middle_config, TEST, MIDDLE_CONFIG, HpConfig)

/* n-heads (gint, [1, 1024], 8), leaf (TestLeafConfig); no owner */
#define TEST_TYPE_LAYER_CONFIG (test_layer_config_get_type ())
G_DECLARE_FINAL_TYPE (TestLayerConfig, test_layer_config, TEST, LAYER_CONFIG, HpConfig)

/* One field of every supported type, in its private struct (it is
 * derivable), a construct-only "mode" and a read-only "label" (not
 * fields); builds TestToy */
#define TEST_TYPE_TOY_CONFIG (test_toy_config_get_type ())
G_DECLARE_DERIVABLE_TYPE (TestToyConfig, test_toy_config, TEST, TOY_CONFIG, HpConfig)
struct _TestToyConfigClass
{
  HpConfigClass parent_class;
};

/* TestToyConfig + extra (gint, [0, 10], 5); no owner of its own */
#define TEST_TYPE_FANCY_TOY_CONFIG (test_fancy_toy_config_get_type ())
G_DECLARE_FINAL_TYPE (TestFancyToyConfig, test_fancy_toy_config, TEST, FANCY_TOY_CONFIG, TestToyConfig)

/* device (string), rank (gint, [0, 64]), id (read-only gint) */
#define TEST_TYPE_TOY (test_toy_get_type ())
G_DECLARE_DERIVABLE_TYPE (TestToy, test_toy, TEST, TOY, HpConfigurable)
struct _TestToyClass
{
  HpConfigurableClass parent_class;
};

#define TEST_TYPE_SUB_TOY (test_sub_toy_get_type ())
G_DECLARE_FINAL_TYPE (TestSubToy, test_sub_toy, TEST, SUB_TOY, TestToy)

/* a configurable no config type names */
#define TEST_TYPE_PLAIN (test_plain_get_type ())
G_DECLARE_FINAL_TYPE (TestPlain, test_plain, TEST, PLAIN, HpConfigurable)

/* x (gint); no owner anywhere */
#define TEST_TYPE_ORPHAN_CONFIG (test_orphan_config_get_type ())
G_DECLARE_FINAL_TYPE (TestOrphanConfig, test_orphan_config, TEST, ORPHAN_CONFIG, HpConfig)

#define TEST_TYPE_ABSTRACT_OWNER (test_abstract_owner_get_type ())
G_DECLARE_DERIVABLE_TYPE (TestAbstractOwner, test_abstract_owner, TEST, ABSTRACT_OWNER, HpConfigurable)
struct _TestAbstractOwnerClass
{
  HpConfigurableClass parent_class;
};
#define TEST_TYPE_ABSTRACT_OWNER_CONFIG (test_abstract_owner_config_get_type ())
G_DECLARE_FINAL_TYPE (TestAbstractOwnerConfig, test_abstract_owner_config, TEST, ABSTRACT_OWNER_CONFIG, HpConfig)

/* owner named in class_init, which nothing runs before the test */
#define TEST_TYPE_LAZY_CONFIG (test_lazy_config_get_type ())
G_DECLARE_FINAL_TYPE (TestLazyConfig, test_lazy_config, TEST, LAZY_CONFIG, HpConfig)
#define TEST_TYPE_LAZY (test_lazy_get_type ())
G_DECLARE_FINAL_TYPE (TestLazy, test_lazy, TEST, LAZY, HpConfigurable)

/* owner registered by the test with hp_config_register_owner() */
#define TEST_TYPE_LATE_CONFIG (test_late_config_get_type ())
G_DECLARE_FINAL_TYPE (TestLateConfig, test_late_config, TEST, LATE_CONFIG, HpConfig)
#define TEST_TYPE_LATE (test_late_get_type ())
G_DECLARE_FINAL_TYPE (TestLate, test_late, TEST, LATE, HpConfigurable)

/* handle (gpointer) and blob (GBytes), not field types; ok (gint) */
#define TEST_TYPE_ODD_CONFIG (test_odd_config_get_type ())
G_DECLARE_FINAL_TYPE (TestOddConfig, test_odd_config, TEST, ODD_CONFIG, HpConfig)

/* An HpModuleConfig (param-init, sharding-config) + init (HpInitializer),
 * local-map (HpLocalMapConfig) */
#define TEST_TYPE_SHARDED_CONFIG (test_sharded_config_get_type ())
G_DECLARE_FINAL_TYPE (TestShardedConfig, test_sharded_config, TEST, SHARDED_CONFIG, HpModuleConfig)

/* A TestShardedConfig with every field set: param-init
 * "weight=normal(std=0.02); bias=zeros", state, input and output
 * shardings, a local map in the sharding config and in local-map */
HpConfig *test_sharded_config_new_populated (void);

/* A TestToyConfig with every field away from its default, nested
 * middle.leaf and two layers with leaves */
HpConfig *test_toy_config_new_populated (void);

G_END_DECLS
