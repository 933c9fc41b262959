/* test-sharding-config.c: sharding configs and local map configs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "hp-test-utils.h"

/* An array of named placements from texts, NULL for "-" */
static GPtrArray *
named_list (const gchar * const *texts)
{
  GPtrArray *list = g_ptr_array_new_with_free_func (hp_test_unref_nullable);

  for (guint i = 0; texts[i] != NULL; i++)
    g_ptr_array_add (list, g_str_equal (texts[i], "-") ? NULL : hp_test_named (texts[i]));
  return list;
}

static void
assert_list (GPtrArray   *list,
             const gchar *expected)
{
  GString *text = g_string_new (NULL);

  g_assert_nonnull (list);
  for (guint i = 0; i < list->len; i++)
    {
      HpNamedPlacement *n = g_ptr_array_index (list, i);
      g_autofree gchar *entry = n != NULL ? hp_named_placement_to_string (n) : g_strdup ("-");

      g_string_append_printf (text, "%s%s", i > 0 ? " | " : "", entry);
    }
  g_assert_cmpstr (text->str, ==, expected);
  g_string_free (text, TRUE);
}

static void
assert_config (HpShardingConfig *config,
               const gchar      *expected)
{
  g_autofree gchar *text = hp_sharding_config_to_string (config);

  g_assert_cmpstr (text, ==, expected);
}

/* HpLocalMapConfig */

static void
test_local_map_config_basics (void)
{
  g_autoptr(HpLocalMapConfig) lm = hp_local_map_config_new ("attention");
  g_autoptr(HpLocalMapConfig) unnamed = hp_local_map_config_new (NULL);
  g_autoptr(GPtrArray) in = named_list ((const gchar *[]) { "tp:S(2)", "-", "tp:S(2), dp:R", NULL });
  g_autoptr(GPtrArray) out = named_list ((const gchar *[]) { "tp:S(2)", NULL });
  g_autoptr(GPtrArray) in_again = named_list ((const gchar *[]) { "tp:S(2)", "-", "dp:R, tp:S(2)", NULL });
  g_autoptr(GPtrArray) grads = named_list ((const gchar *[]) { "tp:P(sum)", NULL });
  g_autoptr(GPtrArray) empty = g_ptr_array_new ();
  guint path_notes = 0, in_notes = 0, out_notes = 0, grad_notes = 0;

  hp_test_count_signal (lm, "notify::callable-path", &path_notes);
  hp_test_count_signal (lm, "notify::in-placements", &in_notes);
  hp_test_count_signal (lm, "notify::out-placements", &out_notes);
  hp_test_count_signal (lm, "notify::in-grad-placements", &grad_notes);

  g_assert_cmpstr (hp_local_map_config_get_callable_path (lm), ==, "attention");
  g_assert_null (hp_local_map_config_get_callable_path (unnamed));
  assert_list (hp_local_map_config_get_in_placements (lm), "");
  assert_list (hp_local_map_config_get_out_placements (lm), "");
  g_assert_null (hp_local_map_config_get_in_grad_placements (lm));

  hp_local_map_config_set_callable_path (lm, "attention");
  g_assert_cmpuint (path_notes, ==, 0);
  hp_local_map_config_set_callable_path (lm, "inner.sdpa");
  g_assert_cmpuint (path_notes, ==, 1);
  g_assert_cmpstr (hp_local_map_config_get_callable_path (lm), ==, "inner.sdpa");
  hp_local_map_config_set_callable_path (lm, NULL);
  g_assert_cmpuint (path_notes, ==, 2);
  g_assert_null (hp_local_map_config_get_callable_path (lm));
  hp_local_map_config_set_callable_path (lm, "attention");
  g_assert_cmpuint (path_notes, ==, 3);

  /* setters keep a copy of the array that shares the named placements */
  hp_local_map_config_set_in_placements (lm, in);
  g_assert_cmpuint (in_notes, ==, 1);
  g_assert_true (hp_local_map_config_get_in_placements (lm) != in);
  assert_list (hp_local_map_config_get_in_placements (lm), "tp:S(2) | - | tp:S(2), dp:R");
  g_assert_true (g_ptr_array_index (hp_local_map_config_get_in_placements (lm), 0) ==
                 g_ptr_array_index (in, 0));
  g_ptr_array_add (in, NULL);
  assert_list (hp_local_map_config_get_in_placements (lm), "tp:S(2) | - | tp:S(2), dp:R");
  g_ptr_array_remove_index (in, 3);

  /* equal entries (axis order does not matter): no notification */
  hp_local_map_config_set_in_placements (lm, in_again);
  g_assert_cmpuint (in_notes, ==, 1);
  hp_local_map_config_set_in_placements (lm, NULL);
  g_assert_cmpuint (in_notes, ==, 2);
  assert_list (hp_local_map_config_get_in_placements (lm), "");
  hp_local_map_config_set_in_placements (lm, empty);
  g_assert_cmpuint (in_notes, ==, 2);
  hp_local_map_config_set_in_placements (lm, in);

  hp_local_map_config_set_out_placements (lm, out);
  hp_local_map_config_set_out_placements (lm, out);
  g_assert_cmpuint (out_notes, ==, 1);
  assert_list (hp_local_map_config_get_out_placements (lm), "tp:S(2)");

  /* gradient placements: unset (NULL) and empty differ */
  hp_local_map_config_set_in_grad_placements (lm, NULL);
  g_assert_cmpuint (grad_notes, ==, 0);
  hp_local_map_config_set_in_grad_placements (lm, empty);
  g_assert_cmpuint (grad_notes, ==, 1);
  assert_list (hp_local_map_config_get_in_grad_placements (lm), "");
  hp_local_map_config_set_in_grad_placements (lm, grads);
  g_assert_cmpuint (grad_notes, ==, 2);
  assert_list (hp_local_map_config_get_in_grad_placements (lm), "tp:P(sum)");
  hp_local_map_config_set_in_grad_placements (lm, NULL);
  g_assert_cmpuint (grad_notes, ==, 3);
  g_assert_null (hp_local_map_config_get_in_grad_placements (lm));

  g_assert_cmpuint (path_notes, ==, 3);
  g_assert_cmpuint (in_notes, ==, 3);
}

static void
test_local_map_config_properties (void)
{
  g_autoptr(GPtrArray) in = named_list ((const gchar *[]) { "tp:S(0)", "-", NULL });
  g_autoptr(HpLocalMapConfig) lm = g_object_new (HP_TYPE_LOCAL_MAP_CONFIG,
                                                 "callable-path", "f",
                                                 "in-placements", in,
                                                 NULL);
  g_autofree gchar *path = NULL;
  g_autoptr(GPtrArray) got_in = NULL;
  g_autoptr(GPtrArray) got_grad = NULL;

  g_object_get (lm, "callable-path", &path, "in-placements", &got_in,
                "in-grad-placements", &got_grad, NULL);
  g_assert_cmpstr (path, ==, "f");
  assert_list (got_in, "tp:S(0) | -");
  g_assert_null (got_grad);
  g_object_set (lm, "out-placements", in, NULL);
  assert_list (hp_local_map_config_get_out_placements (lm), "tp:S(0) | -");
}

static void
test_local_map_config_copy_equal (void)
{
  g_autoptr(HpLocalMapConfig) lm = hp_local_map_config_new ("attention");
  g_autoptr(GPtrArray) in = named_list ((const gchar *[]) { "tp:S(2)", "-", NULL });
  g_autoptr(GPtrArray) in_other = named_list ((const gchar *[]) { "tp:S(1)", "-", NULL });
  g_autoptr(GPtrArray) in_null = named_list ((const gchar *[]) { "-", "-", NULL });
  g_autoptr(GPtrArray) in_short = named_list ((const gchar *[]) { "tp:S(2)", NULL });
  g_autoptr(GPtrArray) out = named_list ((const gchar *[]) { "tp:S(2)", NULL });
  g_autoptr(GPtrArray) empty = g_ptr_array_new ();
  g_autoptr(HpLocalMapConfig) copy = NULL;
  g_autoptr(HpLocalMapConfig) blank_a = hp_local_map_config_new (NULL);
  g_autoptr(HpLocalMapConfig) blank_b = hp_local_map_config_new (NULL);

  hp_local_map_config_set_in_placements (lm, in);
  hp_local_map_config_set_out_placements (lm, out);
  hp_local_map_config_set_in_grad_placements (lm, in);

  copy = hp_local_map_config_copy (lm);
  g_assert_true (hp_local_map_config_equal (lm, copy));
  g_assert_true (hp_local_map_config_equal (blank_a, blank_b));
  g_assert_false (hp_local_map_config_equal (lm, blank_a));
  g_assert_true (hp_local_map_config_get_in_placements (copy) != hp_local_map_config_get_in_placements (lm));
  g_assert_true (hp_local_map_config_get_in_grad_placements (copy) !=
                 hp_local_map_config_get_in_grad_placements (lm));

  /* changing the copy leaves the original alone */
  hp_local_map_config_set_in_placements (copy, in_other);
  g_assert_false (hp_local_map_config_equal (lm, copy));
  assert_list (hp_local_map_config_get_in_placements (lm), "tp:S(2) | -");
  hp_local_map_config_set_in_placements (copy, in);
  g_assert_true (hp_local_map_config_equal (lm, copy));

  hp_local_map_config_set_in_placements (copy, in_null);
  g_assert_false (hp_local_map_config_equal (lm, copy));
  hp_local_map_config_set_in_placements (copy, in_short);
  g_assert_false (hp_local_map_config_equal (lm, copy));
  hp_local_map_config_set_in_placements (copy, in);

  hp_local_map_config_set_in_grad_placements (copy, NULL);
  g_assert_false (hp_local_map_config_equal (lm, copy));
  g_assert_nonnull (hp_local_map_config_get_in_grad_placements (lm));
  hp_local_map_config_set_in_grad_placements (copy, empty);
  g_assert_false (hp_local_map_config_equal (lm, copy));
  hp_local_map_config_set_in_grad_placements (copy, in);

  hp_local_map_config_set_callable_path (copy, "other");
  g_assert_false (hp_local_map_config_equal (lm, copy));
  g_assert_cmpstr (hp_local_map_config_get_callable_path (lm), ==, "attention");
  hp_local_map_config_set_callable_path (copy, NULL);
  g_assert_false (hp_local_map_config_equal (lm, copy));
  g_assert_false (hp_local_map_config_equal (copy, lm));
}

/* HpShardingConfig */

static void
test_empty (void)
{
  g_autoptr(HpShardingConfig) config = hp_sharding_config_new ();
  g_auto(GStrv) state = hp_sharding_config_list_state_shardings (config);
  g_auto(GStrv) in_src = hp_sharding_config_list_in_src_shardings (config);
  g_auto(GStrv) in_dst = hp_sharding_config_list_in_dst_shardings (config);

  g_assert_cmpuint (g_strv_length (state), ==, 0);
  g_assert_cmpuint (g_strv_length (in_src), ==, 0);
  g_assert_cmpuint (g_strv_length (in_dst), ==, 0);
  g_assert_cmpuint (hp_sharding_config_get_n_out_src_shardings (config), ==, 0);
  g_assert_cmpuint (hp_sharding_config_get_n_out_dst_shardings (config), ==, 0);
  g_assert_null (hp_sharding_config_get_out_src_sharding (config, 0));
  g_assert_null (hp_sharding_config_get_state_sharding (config, "weight"));
  g_assert_null (hp_sharding_config_get_local_map (config));
  assert_config (config, "ShardingConfig(state={}, in_src={}, in_dst={}, out_src=[], out_dst=[], "
                         "local_map=None)");
}

typedef void (*SetFunc) (HpShardingConfig *, const gchar *, HpNamedPlacement *);
typedef HpNamedPlacement *(*GetFunc) (HpShardingConfig *, const gchar *);
typedef GStrv (*ListFunc) (HpShardingConfig *);

static void
check_map (SetFunc  set,
           GetFunc  get,
           ListFunc list)
{
  g_autoptr(HpShardingConfig) config = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) s0 = hp_test_named ("tp:S(0)");
  g_autoptr(HpNamedPlacement) s0_again = hp_test_named ("tp:Shard(0)");
  g_autoptr(HpNamedPlacement) r = hp_test_named ("tp:R");
  g_autoptr(HpNamedPlacement) two = hp_test_named ("tp:S(1), dp:R");
  guint changed = 0;

  hp_test_count_signal (config, "changed", &changed);

  set (config, "weight", s0);
  set (config, "bias", r);
  set (config, "layers.0.w", two);
  g_assert_cmpuint (changed, ==, 3);
  g_assert_true (get (config, "weight") == s0);
  g_assert_true (get (config, "layers.0.w") == two);
  g_assert_null (get (config, "Weight"));
  {
    g_auto(GStrv) names = list (config);

    g_assert_cmpstrv (names, ((const gchar *[]) { "weight", "bias", "layers.0.w", NULL }));
  }

  /* equal value: no change, no signal; a different one keeps the position */
  set (config, "weight", s0_again);
  set (config, "weight", s0);
  g_assert_cmpuint (changed, ==, 3);
  g_assert_true (get (config, "weight") == s0);
  set (config, "weight", r);
  g_assert_cmpuint (changed, ==, 4);
  g_assert_true (get (config, "weight") == r);

  /* NULL removes; removing what is not there changes nothing */
  set (config, "bias", NULL);
  g_assert_cmpuint (changed, ==, 5);
  set (config, "bias", NULL);
  set (config, "missing", NULL);
  g_assert_cmpuint (changed, ==, 5);
  g_assert_null (get (config, "bias"));
  set (config, "bias", s0);
  g_assert_cmpuint (changed, ==, 6);
  {
    g_auto(GStrv) names = list (config);

    g_assert_cmpstrv (names, ((const gchar *[]) { "weight", "layers.0.w", "bias", NULL }));
  }
}

static void
test_maps (void)
{
  check_map (hp_sharding_config_set_state_sharding, hp_sharding_config_get_state_sharding,
             hp_sharding_config_list_state_shardings);
  check_map (hp_sharding_config_set_in_src_sharding, hp_sharding_config_get_in_src_sharding,
             hp_sharding_config_list_in_src_shardings);
  check_map (hp_sharding_config_set_in_dst_sharding, hp_sharding_config_get_in_dst_sharding,
             hp_sharding_config_list_in_dst_shardings);
}

static void
test_maps_are_separate (void)
{
  g_autoptr(HpShardingConfig) config = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) s0 = hp_test_named ("tp:S(0)");
  g_autoptr(HpNamedPlacement) r = hp_test_named ("tp:R");

  hp_sharding_config_set_state_sharding (config, "x", s0);
  hp_sharding_config_set_in_src_sharding (config, "x", r);
  hp_sharding_config_set_in_dst_sharding (config, "y", s0);
  g_assert_true (hp_sharding_config_get_state_sharding (config, "x") == s0);
  g_assert_true (hp_sharding_config_get_in_src_sharding (config, "x") == r);
  g_assert_null (hp_sharding_config_get_in_dst_sharding (config, "x"));
  g_assert_null (hp_sharding_config_get_state_sharding (config, "y"));
}

typedef void (*SetOutFunc) (HpShardingConfig *, guint, HpNamedPlacement *);
typedef HpNamedPlacement *(*GetOutFunc) (HpShardingConfig *, guint);
typedef guint (*CountFunc) (HpShardingConfig *);

static void
check_out_list (SetOutFunc set,
                GetOutFunc get,
                CountFunc  n)
{
  g_autoptr(HpShardingConfig) config = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) s0 = hp_test_named ("tp:S(0)");
  g_autoptr(HpNamedPlacement) s0_again = hp_test_named ("tp:S(0)");
  g_autoptr(HpNamedPlacement) r = hp_test_named ("tp:R");
  guint changed = 0;

  hp_test_count_signal (config, "changed", &changed);

  /* past the end: grows with NULL entries */
  set (config, 2, s0);
  g_assert_cmpuint (n (config), ==, 3);
  g_assert_null (get (config, 0));
  g_assert_null (get (config, 1));
  g_assert_true (get (config, 2) == s0);
  g_assert_null (get (config, 3));
  g_assert_null (get (config, 100));
  g_assert_cmpuint (changed, ==, 1);

  set (config, 0, r);
  g_assert_cmpuint (n (config), ==, 3);
  g_assert_cmpuint (changed, ==, 2);
  set (config, 2, s0_again);
  set (config, 1, NULL);
  set (config, 7, NULL);
  g_assert_cmpuint (changed, ==, 2);
  g_assert_cmpuint (n (config), ==, 3);

  /* NULL at the end trims every trailing NULL */
  set (config, 2, NULL);
  g_assert_cmpuint (changed, ==, 3);
  g_assert_cmpuint (n (config), ==, 1);
  g_assert_true (get (config, 0) == r);
  set (config, 0, NULL);
  g_assert_cmpuint (changed, ==, 4);
  g_assert_cmpuint (n (config), ==, 0);

  /* NULL in the middle stays */
  set (config, 0, r);
  set (config, 1, s0);
  set (config, 2, r);
  set (config, 1, NULL);
  g_assert_cmpuint (changed, ==, 8);
  g_assert_cmpuint (n (config), ==, 3);
  g_assert_null (get (config, 1));
}

static void
test_out_lists (void)
{
  check_out_list (hp_sharding_config_set_out_src_sharding, hp_sharding_config_get_out_src_sharding,
                  hp_sharding_config_get_n_out_src_shardings);
  check_out_list (hp_sharding_config_set_out_dst_sharding, hp_sharding_config_get_out_dst_sharding,
                  hp_sharding_config_get_n_out_dst_shardings);
}

static void
test_local_map (void)
{
  g_autoptr(HpShardingConfig) config = hp_sharding_config_new ();
  g_autoptr(HpLocalMapConfig) lm = hp_local_map_config_new ("attention");
  g_autoptr(HpLocalMapConfig) same = hp_local_map_config_new ("attention");
  g_autoptr(HpLocalMapConfig) other = hp_local_map_config_new ("mlp");
  g_autoptr(GPtrArray) in = named_list ((const gchar *[]) { "tp:S(2)", NULL });
  HpLocalMapConfig *got = NULL;
  guint changed = 0, notes = 0;

  hp_test_count_signal (config, "changed", &changed);
  hp_test_count_signal (config, "notify::local-map", &notes);

  hp_sharding_config_set_local_map (config, lm);
  g_assert_true (hp_sharding_config_get_local_map (config) == lm);
  g_assert_cmpuint (changed, ==, 1);
  g_assert_cmpuint (notes, ==, 1);
  hp_sharding_config_set_local_map (config, lm);
  g_assert_cmpuint (changed, ==, 1);
  g_assert_cmpuint (notes, ==, 1);

  /* the config follows changes of the local map config it holds */
  hp_local_map_config_set_in_placements (lm, in);
  g_assert_cmpuint (changed, ==, 2);
  hp_local_map_config_set_in_placements (lm, in);
  hp_local_map_config_set_callable_path (lm, "attention");
  g_assert_cmpuint (changed, ==, 2);
  hp_local_map_config_set_in_placements (lm, NULL);
  g_assert_cmpuint (changed, ==, 3);

  /* an equal object: held from now on, but the value did not change */
  hp_sharding_config_set_local_map (config, same);
  g_assert_true (hp_sharding_config_get_local_map (config) == same);
  g_assert_cmpuint (notes, ==, 2);
  g_assert_cmpuint (changed, ==, 3);
  hp_local_map_config_set_callable_path (lm, "elsewhere");
  g_assert_cmpuint (changed, ==, 3);
  hp_local_map_config_set_callable_path (same, "elsewhere");
  g_assert_cmpuint (changed, ==, 4);

  g_object_set (config, "local-map", other, NULL);
  g_assert_cmpuint (notes, ==, 3);
  g_assert_cmpuint (changed, ==, 5);
  g_object_get (config, "local-map", &got, NULL);
  g_assert_true (got == other);
  g_object_unref (got);
  assert_config (config, "ShardingConfig(state={}, in_src={}, in_dst={}, out_src=[], out_dst=[], "
                         "local_map=LocalMapConfig(callable_path='mlp', in=[], out=[], in_grad=None))");

  hp_sharding_config_set_local_map (config, NULL);
  g_assert_null (hp_sharding_config_get_local_map (config));
  g_assert_cmpuint (notes, ==, 4);
  g_assert_cmpuint (changed, ==, 6);
  hp_local_map_config_set_callable_path (other, "x");
  g_assert_cmpuint (changed, ==, 6);
}

static void
test_local_map_outlives_config (void)
{
  HpShardingConfig *config = hp_sharding_config_new ();
  g_autoptr(HpLocalMapConfig) lm = hp_local_map_config_new ("f");

  hp_sharding_config_set_local_map (config, lm);
  g_object_unref (config);
  /* no handler of the finalised config is left on lm */
  hp_local_map_config_set_callable_path (lm, "g");
  g_assert_cmpstr (hp_local_map_config_get_callable_path (lm), ==, "g");
}

/* weight tp:S(0), bias tp:S(0), input tp:R -> S(-1), local map */
static HpShardingConfig *
example (void)
{
  HpShardingConfig *config = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) s0 = hp_test_named ("tp:S(0)");
  g_autoptr(HpNamedPlacement) r = hp_test_named ("tp:R");
  g_autoptr(HpNamedPlacement) last = hp_test_named ("tp:S(-1)");
  g_autoptr(HpNamedPlacement) two = hp_test_named ("dp:R, tp:S(1)");
  g_autoptr(HpLocalMapConfig) lm = hp_local_map_config_new ("attention");
  g_autoptr(GPtrArray) in = named_list ((const gchar *[]) { "tp:S(2)", "-", NULL });

  hp_sharding_config_set_state_sharding (config, "weight", s0);
  hp_sharding_config_set_state_sharding (config, "bias", two);
  hp_sharding_config_set_in_dst_sharding (config, "input", r);
  hp_sharding_config_set_out_dst_sharding (config, 1, last);
  hp_local_map_config_set_in_placements (lm, in);
  hp_local_map_config_set_out_placements (lm, in);
  hp_sharding_config_set_local_map (config, lm);
  return config;
}

static void
test_to_string (void)
{
  g_autoptr(HpShardingConfig) config = hp_sharding_config_new ();
  g_autoptr(HpShardingConfig) full = example ();
  g_autoptr(HpNamedPlacement) s0 = hp_test_named ("tp:S(0)");
  g_autoptr(HpNamedPlacement) r = hp_test_named ("tp:R");
  g_autoptr(HpNamedPlacement) last = hp_test_named ("tp:S(-1)");
  g_autoptr(HpNamedPlacement) none = hp_named_placement_new ();

  hp_sharding_config_set_state_sharding (config, "weight", s0);
  hp_sharding_config_set_in_dst_sharding (config, "input", r);
  hp_sharding_config_set_out_dst_sharding (config, 0, last);
  assert_config (config, "ShardingConfig(state={weight: tp:S(0)}, in_src={}, in_dst={input: tp:R}, "
                         "out_src=[], out_dst=[tp:S(-1)], local_map=None)");

  hp_sharding_config_set_in_src_sharding (config, "input", none);
  hp_sharding_config_set_out_src_sharding (config, 1, r);
  assert_config (config, "ShardingConfig(state={weight: tp:S(0)}, in_src={input: ()}, "
                         "in_dst={input: tp:R}, out_src=[None, tp:R], out_dst=[tp:S(-1)], "
                         "local_map=None)");

  assert_config (full, "ShardingConfig(state={weight: tp:S(0), bias: (dp:R, tp:S(1))}, in_src={}, "
                       "in_dst={input: tp:R}, out_src=[], out_dst=[None, tp:S(-1)], "
                       "local_map=LocalMapConfig(callable_path='attention', in=[tp:S(2), None], "
                       "out=[tp:S(2), None], in_grad=None))");
}

static void
test_copy (void)
{
  g_autoptr(HpShardingConfig) config = example ();
  g_autoptr(HpShardingConfig) copy = hp_sharding_config_copy (config);
  g_autofree gchar *before = hp_sharding_config_to_string (config);
  g_autofree gchar *copied = hp_sharding_config_to_string (copy);
  g_autoptr(HpNamedPlacement) r = hp_test_named ("tp:R");
  g_autoptr(GPtrArray) in = named_list ((const gchar *[]) { "tp:R", NULL });
  HpLocalMapConfig *copy_lm = hp_sharding_config_get_local_map (copy);
  guint original_changed = 0, copy_changed = 0;

  hp_test_count_signal (config, "changed", &original_changed);
  hp_test_count_signal (copy, "changed", &copy_changed);

  g_assert_cmpstr (copied, ==, before);
  g_assert_true (hp_sharding_config_equal (config, copy));
  /* named placements are shared, the local map config is copied */
  g_assert_true (hp_sharding_config_get_state_sharding (copy, "weight") ==
                 hp_sharding_config_get_state_sharding (config, "weight"));
  g_assert_nonnull (copy_lm);
  g_assert_true (copy_lm != hp_sharding_config_get_local_map (config));

  /* changing the copy leaves the original alone */
  hp_sharding_config_set_state_sharding (copy, "weight", r);
  hp_sharding_config_set_state_sharding (copy, "extra", r);
  hp_sharding_config_set_in_dst_sharding (copy, "input", NULL);
  hp_sharding_config_set_in_src_sharding (copy, "input", r);
  hp_sharding_config_set_out_dst_sharding (copy, 1, NULL);
  hp_sharding_config_set_out_src_sharding (copy, 0, r);
  hp_local_map_config_set_in_placements (copy_lm, in);
  hp_local_map_config_set_callable_path (copy_lm, "mlp");
  g_assert_cmpuint (copy_changed, ==, 8);
  g_assert_cmpuint (original_changed, ==, 0);
  {
    g_autofree gchar *after = hp_sharding_config_to_string (config);

    g_assert_cmpstr (after, ==, before);
  }
  g_assert_false (hp_sharding_config_equal (config, copy));

  /* and the copy's local map config reports to the copy only */
  hp_local_map_config_set_in_grad_placements (hp_sharding_config_get_local_map (config), in);
  g_assert_cmpuint (original_changed, ==, 1);
  g_assert_cmpuint (copy_changed, ==, 8);
}

static void
test_equal (void)
{
  g_autoptr(HpShardingConfig) a = example ();
  g_autoptr(HpShardingConfig) b = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) s0 = hp_test_named ("tp:S(0)");
  g_autoptr(HpNamedPlacement) r = hp_test_named ("tp:R");
  g_autoptr(HpNamedPlacement) last = hp_test_named ("tp:S(-1)");
  g_autoptr(HpNamedPlacement) two = hp_test_named ("tp:S(1), dp:R");
  g_autoptr(HpLocalMapConfig) lm = hp_local_map_config_copy (hp_sharding_config_get_local_map (a));
  g_autoptr(HpShardingConfig) empty_a = hp_sharding_config_new ();
  g_autoptr(HpShardingConfig) empty_b = hp_sharding_config_new ();

  g_assert_true (hp_sharding_config_equal (empty_a, empty_b));
  g_assert_false (hp_sharding_config_equal (a, empty_a));

  /* built in another order, from equal but distinct objects */
  hp_sharding_config_set_local_map (b, lm);
  hp_sharding_config_set_out_dst_sharding (b, 1, last);
  hp_sharding_config_set_in_dst_sharding (b, "input", r);
  hp_sharding_config_set_state_sharding (b, "bias", two);
  g_assert_false (hp_sharding_config_equal (a, b));
  hp_sharding_config_set_state_sharding (b, "weight", s0);
  g_assert_true (hp_sharding_config_equal (a, b));
  g_assert_true (hp_sharding_config_equal (b, a));

  /* each part counts */
  hp_sharding_config_set_in_src_sharding (b, "input", r);
  g_assert_false (hp_sharding_config_equal (a, b));
  hp_sharding_config_set_in_src_sharding (b, "input", NULL);
  hp_sharding_config_set_in_dst_sharding (b, "input", s0);
  g_assert_false (hp_sharding_config_equal (a, b));
  hp_sharding_config_set_in_dst_sharding (b, "input", r);
  hp_sharding_config_set_out_src_sharding (b, 0, r);
  g_assert_false (hp_sharding_config_equal (a, b));
  hp_sharding_config_set_out_src_sharding (b, 0, NULL);
  hp_sharding_config_set_out_dst_sharding (b, 0, last);
  g_assert_false (hp_sharding_config_equal (a, b));
  hp_sharding_config_set_out_dst_sharding (b, 0, NULL);
  g_assert_true (hp_sharding_config_equal (a, b));
  hp_local_map_config_set_callable_path (lm, "mlp");
  g_assert_false (hp_sharding_config_equal (a, b));
  hp_sharding_config_set_local_map (b, NULL);
  g_assert_false (hp_sharding_config_equal (a, b));
  g_assert_false (hp_sharding_config_equal (b, a));
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init (&argc, &argv);

  g_test_add_func ("/local-map-config/basics", test_local_map_config_basics);
  g_test_add_func ("/local-map-config/properties", test_local_map_config_properties);
  g_test_add_func ("/local-map-config/copy-equal", test_local_map_config_copy_equal);
  g_test_add_func ("/sharding-config/empty", test_empty);
  g_test_add_func ("/sharding-config/maps", test_maps);
  g_test_add_func ("/sharding-config/maps-are-separate", test_maps_are_separate);
  g_test_add_func ("/sharding-config/out-lists", test_out_lists);
  g_test_add_func ("/sharding-config/local-map", test_local_map);
  g_test_add_func ("/sharding-config/local-map-outlives-config", test_local_map_outlives_config);
  g_test_add_func ("/sharding-config/to-string", test_to_string);
  g_test_add_func ("/sharding-config/copy", test_copy);
  g_test_add_func ("/sharding-config/equal", test_equal);

  return g_test_run ();
}
