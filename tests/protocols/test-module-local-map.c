/* test-module-local-map.c: parallelize wrapping a registered callable
 * with local_map (seed Part 9 §3.2), against one rank
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi); every rank runs every
 * assertion.
 */

#include "hp-test-toys.h"
#include "hp-test-utils.h"

static GPtrArray *
named_list (const gchar *text)
{
  GPtrArray *list = g_ptr_array_new_with_free_func (g_object_unref);

  g_ptr_array_add (list, hp_test_named (text));
  return list;
}

/* in: replicated x moved to rows; the callable runs on local rows */
static HpModuleConfig *
local_map_config (const gchar *callable_path)
{
  HpModuleConfig *config = hp_module_config_new ();
  g_autoptr(HpShardingConfig) sharding = hp_sharding_config_new ();
  g_autoptr(HpLocalMapConfig) local_map = hp_local_map_config_new (callable_path);
  g_autoptr(HpNamedPlacement) replicate = hp_test_named ("tp:R");
  g_autoptr(HpNamedPlacement) rows = hp_test_named ("tp:S(0)");
  g_autoptr(GPtrArray) in_placements = named_list ("tp:S(0)");
  g_autoptr(GPtrArray) out_placements = named_list ("tp:S(0)");

  hp_local_map_config_set_in_placements (local_map, in_placements);
  hp_local_map_config_set_out_placements (local_map, out_placements);
  hp_sharding_config_set_in_src_sharding (sharding, "x", replicate);
  hp_sharding_config_set_in_dst_sharding (sharding, "x", rows);
  hp_sharding_config_set_local_map (sharding, local_map);
  hp_module_config_set_sharding_config (config, sharding);
  return config;
}

static void
test_wraps_callable (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpModuleConfig) config = local_map_config ("inner");
  g_autoptr(HpToyInner) module = hp_toy_inner_new (config);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (7, 3), 5, TRUE);
  g_autoptr(HpTensor) x_ref = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (7, 3), 5, TRUE);
  g_autoptr(HpTensor) weights = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (7, 3), 6, FALSE);
  g_autoptr(HpDTensor) weights_dt = NULL;
  g_autoptr(GPtrArray) replicate = NULL;
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) y_full = NULL;
  g_autoptr(HpTensor) y_ref = NULL;
  g_autoptr(HpTensor) weighted = NULL;
  g_autoptr(HpTensor) weighted_ref = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpTensor) loss_ref = NULL;

  g_assert_false (hp_module_callable_is_local_mapped (HP_MODULE (module), "inner"));
  g_assert_true (hp_module_parallelize (HP_MODULE (module), mesh, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_callable_is_local_mapped (HP_MODULE (module), "inner"));

  y = hp_module_call1 (HP_MODULE (module), x, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hp_toy_inner_get_inner_calls (module), ==, 1);
  hp_test_assert_placements (y, "(S(0))");
  y_full = hp_test_full_tensor (y);
  y_ref = hp_tensor_softmax (x_ref, -1, &error);
  g_assert_no_error (error);
  hp_test_assert_close (y_full, y_ref, 1e-14, 1e-15);

  /* backward through the map reaches the plain input */
  replicate = hp_placements_new_from_string ("S(0)", &error);
  weights_dt = hp_dtensor_distribute (weights, mesh, replicate, -1, &error);
  weighted = hp_tensor_mul (y, HP_TENSOR (weights_dt), &error);
  weighted_ref = hp_tensor_mul (y_ref, weights, &error);
  loss = hp_tensor_sum_all (weighted, &error);
  loss_ref = hp_tensor_sum_all (weighted_ref, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_true (hp_tensor_backward (loss_ref, NULL, &error));
  g_assert_no_error (error);
  hp_test_assert_close (hp_tensor_get_grad (x), hp_tensor_get_grad (x_ref), 1e-12, 1e-14);
}

/* Without a local_map config the path is byte-identical to an
 * unparallelized module */
static void
test_unset_is_unchanged (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpToyInner) module = hp_toy_inner_new (NULL);
  g_autoptr(HpToyInner) untouched = hp_toy_inner_new (NULL);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 5), 8, FALSE);
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) y_ref = NULL;

  g_assert_true (hp_module_parallelize (HP_MODULE (module), mesh, &error));
  g_assert_no_error (error);
  g_assert_false (hp_module_callable_is_local_mapped (HP_MODULE (module), "inner"));
  y = hp_module_call1 (HP_MODULE (module), x, &error);
  y_ref = hp_module_call1 (HP_MODULE (untouched), x, &error);
  g_assert_no_error (error);
  g_assert_false (HP_IS_DTENSOR (y));
  hp_test_assert_identical (y, y_ref);
}

/* A parent's local_map may name a child's callable by a dotted path */
static void
test_dotted_callable_path (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpModuleConfig) config = local_map_config ("attention.inner");
  g_autoptr(HpModule) parent = NULL;
  g_autoptr(HpToyInner) child = hp_toy_inner_new (NULL);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 2), 2, FALSE);
  g_autoptr(GPtrArray) shard0 = NULL;
  g_autoptr(HpDTensor) x_rows = NULL;
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autoptr(GPtrArray) outputs = NULL;
  g_autoptr(HpTensor) full = NULL;
  g_autoptr(HpTensor) expected = NULL;

  parent = g_object_new (HP_TYPE_MODULE, "config", config, NULL);
  g_assert_true (hp_module_add_child (parent, "attention", HP_MODULE (child), &error));
  g_assert_true (hp_module_parallelize (parent, mesh, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_callable_is_local_mapped (HP_MODULE (child), "inner"));
  g_assert_true (hp_module_callable_is_local_mapped (parent, "attention.inner"));

  shard0 = hp_placements_new_from_string ("S(0)", &error);
  x_rows = hp_dtensor_distribute (x, mesh, shard0, -1, &error);
  g_ptr_array_add (args, x_rows);
  outputs = hp_module_run_callable (HP_MODULE (child), "inner", args, &error);
  g_assert_no_error (error);
  full = hp_dtensor_full_tensor (g_ptr_array_index (outputs, 0), &error);
  expected = hp_tensor_softmax (x, -1, &error);
  g_assert_no_error (error);
  hp_test_assert_close (full, expected, 1e-14, 1e-15);
}

static void
test_unknown_callable (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpModuleConfig) config = local_map_config ("nope");
  g_autoptr(HpToyInner) module = hp_toy_inner_new (config);

  g_assert_false (hp_module_parallelize (HP_MODULE (module), mesh, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, "HpToyInner.local_map: no callable 'nope' is registered");
  g_assert_false (hp_module_callable_is_local_mapped (HP_MODULE (module), "inner"));
  g_assert_null (hp_module_get_mesh (HP_MODULE (module)));
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init_world (&argc, &argv);

  g_test_add_func ("/module-local-map/wraps-callable", test_wraps_callable);
  g_test_add_func ("/module-local-map/unset-is-unchanged", test_unset_is_unchanged);
  g_test_add_func ("/module-local-map/dotted-callable-path", test_dotted_callable_path);
  g_test_add_func ("/module-local-map/unknown-callable", test_unknown_callable);

  return g_test_run ();
}
