/* test-module-parallelize.c: hp_module_parallelize against the same
 * module on one rank (the seed's test_module_parallelize group)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi); every rank runs every
 * assertion. The parallel module and the reference are built from the
 * same configuration and initialised with the same seed, so values and
 * gradients must agree to rounding.
 */

#include "hp-test-toys.h"
#include "hp-test-utils.h"

static HpShardingConfig *
linear_sharding (void)
{
  HpShardingConfig *sharding = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) weight = hp_test_named ("tp:S(0)");
  g_autoptr(HpNamedPlacement) input = hp_test_named ("tp:R");
  g_autoptr(HpNamedPlacement) output = hp_test_named ("tp:S(-1)");

  hp_sharding_config_set_state_sharding (sharding, "weight", weight);
  hp_sharding_config_set_in_dst_sharding (sharding, "input", input);
  hp_sharding_config_set_out_dst_sharding (sharding, 0, output);
  return sharding;
}

static HpModule *
build_linear (gint              in_features,
              gint              out_features,
              gboolean          bias,
              HpShardingConfig *sharding)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = g_object_new (HP_TYPE_TOY_LINEAR_CONFIG,
                                             "in-features", in_features,
                                             "out-features", out_features,
                                             "bias", bias,
                                             "sharding-config", sharding,
                                             NULL);
  GObject *built = hp_config_build (config, &error);

  g_assert_no_error (error);
  return HP_MODULE (built);
}

static void
on_parallelized (HpModule     *module,
                 HpDeviceMesh *mesh,
                 guint        *count)
{
  g_assert_true (hp_module_get_mesh (module) == mesh);
  (*count)++;
}

/* The seed's group: weight tp:S(0), input tp:R, output tp:S(-1);
 * parameters become DTensors and forward and backward equal one rank */
static void
test_linear_equals_one_rank (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpShardingConfig) sharding = linear_sharding ();
  g_autoptr(HpModule) reference = build_linear (6, 5, FALSE, NULL);
  g_autoptr(HpModule) parallel = build_linear (6, 5, FALSE, sharding);
  g_autoptr(HpTensor) x_ref = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 6), 4, TRUE);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 6), 4, TRUE);
  g_autoptr(HpTensor) y_ref = NULL;
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) y_full = NULL;
  g_autoptr(HpTensor) loss_ref = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpTensor) grad_full = NULL;
  g_autoptr(HpTensor) weight_full = NULL;
  HpTensor *weight;
  guint parallelized = 0;

  g_signal_connect (parallel, "parallelized", G_CALLBACK (on_parallelized), &parallelized);
  g_assert_true (hp_module_parallelize (parallel, mesh, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (parallelized, ==, 1);
  g_assert_true (hp_module_get_mesh (parallel) == mesh);

  weight = hp_module_get_parameter (parallel, "weight");
  hp_test_assert_placements (weight, "(S(0))");
  g_assert_true (hp_tensor_get_requires_grad (weight));
  g_assert_true (hp_tensor_is_leaf (weight));
  hp_test_assert_shape (weight, HP_TEST_SHAPE (5, 6));

  /* initialised after parallelize: each rank gets its slice */
  g_assert_true (hp_module_init_states (reference, 42, &error));
  g_assert_true (hp_module_init_states (parallel, 42, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_get_parameter (parallel, "weight") == weight);
  weight_full = hp_test_full_tensor (weight);
  hp_test_assert_close (weight_full, hp_module_get_parameter (reference, "weight"), 0, 0);

  y_ref = hp_module_call1 (reference, x_ref, &error);
  y = hp_module_call1 (parallel, x, &error);
  g_assert_no_error (error);
  hp_test_assert_placements (y, "(S(1))");
  y_full = hp_test_full_tensor (y);
  hp_test_assert_close (y_full, y_ref, 1e-12, 1e-12);

  loss_ref = hp_tensor_sum_all (y_ref, &error);
  loss = hp_tensor_sum_all (y, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (loss_ref, NULL, &error));
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);

  grad_full = hp_test_full_tensor (hp_tensor_get_grad (weight));
  hp_test_assert_close (grad_full, hp_tensor_get_grad (hp_module_get_parameter (reference, "weight")),
                        1e-12, 1e-12);
  hp_test_assert_close (hp_tensor_get_grad (x), hp_tensor_get_grad (x_ref), 1e-12, 1e-12);
}

/* A tree: only modules with a sharding configuration change, a tensor
 * shared by two modules stays shared, every module hears the signal */
static void
test_tree (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpShardingConfig) sharding = linear_sharding ();
  g_autoptr(HpModule) root = hp_module_new ();
  g_autoptr(HpModule) sharded = build_linear (4, 3, TRUE, sharding);
  g_autoptr(HpModule) tied = build_linear (4, 3, FALSE, NULL);
  g_autoptr(HpModule) plain = build_linear (4, 3, FALSE, NULL);
  guint parallelized = 0;

  g_assert_true (hp_module_register_parameter (tied, "weight",
                                               hp_module_get_parameter (sharded, "weight"),
                                               &error));
  g_assert_true (hp_module_add_child (root, "sharded", sharded, &error));
  g_assert_true (hp_module_add_child (root, "tied", tied, &error));
  g_assert_true (hp_module_add_child (root, "plain", plain, &error));
  g_assert_no_error (error);
  g_signal_connect (root, "parallelized", G_CALLBACK (on_parallelized), &parallelized);
  g_signal_connect (sharded, "parallelized", G_CALLBACK (on_parallelized), &parallelized);
  g_signal_connect (tied, "parallelized", G_CALLBACK (on_parallelized), &parallelized);
  g_signal_connect (plain, "parallelized", G_CALLBACK (on_parallelized), &parallelized);

  g_assert_true (hp_module_parallelize (root, mesh, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (parallelized, ==, 4);
  g_assert_true (HP_IS_DTENSOR (hp_module_get_parameter (root, "sharded.weight")));
  g_assert_true (hp_module_get_parameter (root, "tied.weight") ==
                 hp_module_get_parameter (root, "sharded.weight"));
  g_assert_false (HP_IS_DTENSOR (hp_module_get_parameter (root, "sharded.bias")));
  g_assert_false (HP_IS_DTENSOR (hp_module_get_parameter (root, "plain.weight")));
}

/* A failed hp_module_parallelize() on @root: the error, and the tree
 * as it was (states, layouts, meshes, sharding configurations, the
 * inner callable of @inner not wrapped) */
static void
assert_parallelize_fails (HpModule     *root,
                          HpDeviceMesh *mesh,
                          HpModule     *inner,
                          gint          code,
                          const gchar  *message)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *before = hp_test_module_snapshot (root);
  g_autofree gchar *after = NULL;

  hp_test_assert_error (GINT_TO_POINTER (hp_module_parallelize (root, mesh, &error)), &error,
                        code, message);
  after = hp_test_module_snapshot (root);
  g_assert_cmpstr (after, ==, before);
  if (inner != NULL)
    g_assert_false (hp_module_callable_is_local_mapped (inner, "inner"));
}

/* Every error leaves the tree as it was, whichever module of the tree
 * it comes from and at which step */
static void
test_errors_leave_module_unchanged (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpDeviceMesh) unnamed = NULL;
  g_autoptr(HpShardingConfig) good = linear_sharding ();
  g_autoptr(HpShardingConfig) bad = linear_sharding ();
  g_autoptr(HpNamedPlacement) shard = hp_test_named ("tp:S(0)");
  g_autoptr(HpNamedPlacement) too_deep = hp_test_named ("tp:S(2)");
  g_autoptr(HpNamedPlacement) other_axis = hp_test_named ("dp:S(0)");
  g_autoptr(HpNamedPlacement) rows = hp_test_named ("tp:S(0)");
  g_autoptr(HpModuleConfig) inner_config = hp_module_config_new ();
  g_autoptr(HpShardingConfig) inner_sharding = hp_sharding_config_new ();
  g_autoptr(HpLocalMapConfig) inner_map = hp_local_map_config_new ("inner");
  g_autoptr(HpLocalMapConfig) missing_map = hp_local_map_config_new ("missing");
  g_autoptr(HpModule) root = hp_module_new ();
  g_autoptr(HpModule) first = build_linear (4, 3, FALSE, good);
  g_autoptr(HpToyInner) inner = NULL;
  g_autoptr(HpModule) second = build_linear (4, 3, FALSE, bad);
  g_autofree gchar *unnamed_text = NULL;
  g_autofree gchar *unnamed_message = NULL;
  g_autofree gchar *before = NULL;
  g_autofree gchar *after = NULL;
  HpTensor *first_weight = hp_module_get_parameter (first, "weight");
  guint parallelized = 0;

  /* first (fine), inner (a local map over its callable), second (bad) */
  hp_sharding_config_set_in_dst_sharding (inner_sharding, "x", rows);
  hp_sharding_config_set_local_map (inner_sharding, inner_map);
  hp_module_config_set_sharding_config (inner_config, inner_sharding);
  inner = hp_toy_inner_new (inner_config);
  g_assert_true (hp_module_add_child (root, "first", first, &error));
  g_assert_true (hp_module_add_child (root, "inner", HP_MODULE (inner), &error));
  g_assert_true (hp_module_add_child (root, "second", second, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_init_states (root, 5, &error));
  g_assert_no_error (error);
  g_signal_connect (first, "parallelized", G_CALLBACK (on_parallelized), &parallelized);

  /* planning: a state path that names nothing */
  hp_sharding_config_set_state_sharding (bad, "missing.weight", shard);
  assert_parallelize_fails (root, mesh, HP_MODULE (inner), HP_ERROR_CONFIG,
                            "HpToyLinear.state_shardings: 'missing.weight' names no parameter or buffer");
  hp_sharding_config_set_state_sharding (bad, "missing.weight", NULL);

  /* planning: an axis the mesh does not have, in a state and in an
   * input sharding */
  hp_sharding_config_set_state_sharding (bad, "weight", other_axis);
  assert_parallelize_fails (root, mesh, HP_MODULE (inner), HP_ERROR_PLACEMENT,
                            "HpToyLinear.state_shardings[weight]: NamedPlacement has axes not in mesh");
  hp_sharding_config_set_state_sharding (bad, "weight", shard);
  hp_sharding_config_set_in_src_sharding (bad, "input", other_axis);
  assert_parallelize_fails (root, mesh, HP_MODULE (inner), HP_ERROR_PLACEMENT,
                            "HpToyLinear.in_src_shardings[input]: NamedPlacement has axes not in mesh");
  hp_sharding_config_set_in_src_sharding (bad, "input", NULL);
  hp_sharding_config_set_out_dst_sharding (bad, 1, other_axis);
  assert_parallelize_fails (root, mesh, HP_MODULE (inner), HP_ERROR_PLACEMENT,
                            "HpToyLinear.out_dst_shardings[1]: NamedPlacement has axes not in mesh");
  hp_sharding_config_set_out_dst_sharding (bad, 1, NULL);

  /* planning: a local map over a callable that is not registered */
  hp_sharding_config_set_local_map (bad, missing_map);
  assert_parallelize_fails (root, mesh, HP_MODULE (inner), HP_ERROR_CONFIG,
                            "HpToyLinear.local_map: no callable 'missing' is registered");
  hp_sharding_config_set_local_map (bad, NULL);

  /* distributing: the last state cannot be laid out (no dim 2) */
  hp_sharding_config_set_state_sharding (bad, "weight", too_deep);
  assert_parallelize_fails (root, mesh, HP_MODULE (inner), HP_ERROR_PLACEMENT,
                            "HpToyLinear.weight: distribute: placement S(2) of (S(2)) is out of range "
                            "for a tensor of 2 dims");
  hp_sharding_config_set_state_sharding (bad, "weight", shard);

  /* a mesh without dim names */
  unnamed = hp_test_mesh ((gint[]) { hp_get_world_size () }, 1, NULL);
  unnamed_text = hp_device_mesh_to_string (unnamed);
  unnamed_message = g_strdup_printf ("HpModule: cannot parallelize over %s: the mesh has no dim names",
                                     unnamed_text);
  assert_parallelize_fails (root, unnamed, HP_MODULE (inner), HP_ERROR_MESH, unnamed_message);

  g_assert_true (hp_module_get_parameter (first, "weight") == first_weight);
  g_assert_null (hp_module_get_mesh (first));
  g_assert_cmpuint (parallelized, ==, 0);

  g_assert_true (hp_module_parallelize (root, mesh, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (parallelized, ==, 1);
  g_assert_true (hp_module_callable_is_local_mapped (HP_MODULE (inner), "inner"));

  /* once is enough, for the tree and for a part of it */
  before = hp_test_module_snapshot (root);
  hp_test_assert_error (GINT_TO_POINTER (hp_module_parallelize (root, mesh, &error)), &error,
                        HP_ERROR_STATE, "HpModule has already been parallelized");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_parallelize (second, mesh, &error)), &error,
                        HP_ERROR_STATE, "HpToyLinear has already been parallelized");
  after = hp_test_module_snapshot (root);
  g_assert_cmpstr (after, ==, before);
  g_assert_cmpuint (parallelized, ==, 1);
}

/* A DTensor argument whose placements differ from in_src */
static void
test_input_placement_mismatch (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpShardingConfig) sharding = linear_sharding ();
  g_autoptr(HpNamedPlacement) replicate = hp_test_named ("tp:R");
  g_autoptr(HpModule) linear = NULL;
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 4), 1, FALSE);
  g_autoptr(GPtrArray) shard0 = NULL;
  g_autoptr(HpDTensor) x_sharded = NULL;
  g_autoptr(HpTensor) y = NULL;

  hp_sharding_config_set_in_src_sharding (sharding, "input", replicate);
  linear = build_linear (4, 2, FALSE, sharding);
  g_assert_true (hp_module_init_states (linear, 0, &error));
  g_assert_true (hp_module_parallelize (linear, mesh, &error));
  g_assert_no_error (error);

  shard0 = hp_placements_new_from_string ("S(0)", &error);
  x_sharded = hp_dtensor_distribute (x, mesh, shard0, -1, &error);
  g_assert_no_error (error);
  hp_test_assert_error (hp_module_call1 (linear, HP_TENSOR (x_sharded), &error), &error,
                        HP_ERROR_PLACEMENT,
                        "HpToyLinear.input: input DTensor has placements (S(0)), "
                        "but in_src_shardings expects (R).");

  /* a plain tensor is taken as the in_src layout: replicated */
  y = hp_module_call1 (linear, x, &error);
  g_assert_no_error (error);
  g_assert_true (HP_IS_DTENSOR (y));
}

/* in_src S(-1) names the last dim, which a DTensor stores as S(1) */
static void
test_negative_shard_dim (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpShardingConfig) sharding = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) columns = hp_test_named ("tp:S(-1)");
  g_autoptr(HpModule) linear = NULL;
  g_autoptr(HpModule) reference = build_linear (4, 3, FALSE, NULL);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4), 2, FALSE);
  g_autoptr(GPtrArray) shard1 = NULL;
  g_autoptr(HpDTensor) x_columns = NULL;
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) y_full = NULL;
  g_autoptr(HpTensor) y_ref = NULL;

  hp_sharding_config_set_state_sharding (sharding, "weight", columns);
  hp_sharding_config_set_in_src_sharding (sharding, "input", columns);
  hp_sharding_config_set_in_dst_sharding (sharding, "input", columns);
  linear = build_linear (4, 3, FALSE, sharding);
  g_assert_true (hp_module_init_states (linear, 1, &error));
  g_assert_true (hp_module_init_states (reference, 1, &error));
  g_assert_true (hp_module_parallelize (linear, mesh, &error));
  g_assert_no_error (error);

  shard1 = hp_placements_new_from_string ("S(1)", &error);
  x_columns = hp_dtensor_distribute (x, mesh, shard1, -1, &error);
  g_assert_no_error (error);
  y = hp_module_call1 (linear, HP_TENSOR (x_columns), &error);
  g_assert_no_error (error);
  y_full = hp_dtensor_full_tensor (HP_DTENSOR (y), &error);
  y_ref = hp_module_call1 (reference, x, &error);
  g_assert_no_error (error);
  hp_test_assert_close (y_full, y_ref, 1e-12, 1e-12);
}

/* No sharding configuration anywhere: parallelize changes no tensor and
 * forward is the plain path */
static void
test_no_sharding_config (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpModule) linear = build_linear (3, 2, TRUE, NULL);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3), 9, FALSE);
  g_autoptr(HpTensor) before = NULL;
  g_autoptr(HpTensor) after = NULL;
  HpTensor *weight = hp_module_get_parameter (linear, "weight");

  g_assert_true (hp_module_init_states (linear, 3, &error));
  before = hp_module_call1 (linear, x, &error);
  g_assert_true (hp_module_parallelize (linear, mesh, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_get_parameter (linear, "weight") == weight);
  after = hp_module_call1 (linear, x, &error);
  g_assert_no_error (error);
  g_assert_false (HP_IS_DTENSOR (after));
  hp_test_assert_identical (after, before);
}

/* Tied states must agree on their layout; a state that is already a
 * DTensor must have the placements asked for; outputs are checked
 * against out_src */
static void
test_layout_conflicts (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpShardingConfig) rows = linear_sharding ();
  g_autoptr(HpShardingConfig) columns = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) shard1 = hp_test_named ("tp:S(1)");
  g_autoptr(HpModule) root = hp_module_new ();
  g_autoptr(HpModule) first = build_linear (4, 4, FALSE, rows);
  g_autoptr(HpModule) second = build_linear (4, 4, FALSE, columns);
  g_autoptr(HpModule) single = build_linear (4, 4, FALSE, rows);
  g_autoptr(HpModule) checked = NULL;
  g_autoptr(HpShardingConfig) out_rows = linear_sharding ();
  g_autoptr(GPtrArray) columns1 = NULL;
  g_autoptr(HpDTensor) laid_out = NULL;
  g_autoptr(HpNamedPlacement) replicate = hp_test_named ("tp:R");
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4), 3, FALSE);
  HpTensor *weight = hp_module_get_parameter (first, "weight");

  hp_sharding_config_set_state_sharding (columns, "weight", shard1);
  g_assert_true (hp_module_register_parameter (second, "weight", weight, &error));
  g_assert_true (hp_module_add_child (root, "first", first, &error));
  g_assert_true (hp_module_add_child (root, "second", second, &error));
  g_assert_no_error (error);
  assert_parallelize_fails (root, mesh, NULL, HP_ERROR_PLACEMENT,
                            "HpToyLinear.weight is tied to a state laid out as (S(0)), "
                            "but state_shardings asks for (S(1))");
  g_assert_true (hp_module_get_parameter (second, "weight") == weight);
  g_assert_false (HP_IS_DTENSOR (weight));

  /* a weight distributed by hand with other placements */
  columns1 = hp_placements_new_from_string ("S(1)", &error);
  hp_grad_mode_set_enabled (FALSE);
  laid_out = hp_dtensor_distribute (hp_module_get_parameter (single, "weight"), mesh, columns1,
                                    -1, &error);
  hp_grad_mode_set_enabled (TRUE);
  g_assert_no_error (error);
  g_assert_true (hp_module_register_parameter (single, "weight", HP_TENSOR (laid_out), &error));
  assert_parallelize_fails (single, mesh, NULL, HP_ERROR_PLACEMENT,
                            "HpToyLinear.weight is already a DTensor with placements (S(1)), "
                            "but state_shardings asks for (S(0))");

  /* the output is S(1) (weight rows sharded), but out_src says R */
  hp_sharding_config_set_out_src_sharding (out_rows, 0, replicate);
  checked = build_linear (4, 4, FALSE, out_rows);
  g_assert_true (hp_module_init_states (checked, 0, &error));
  g_assert_true (hp_module_parallelize (checked, mesh, &error));
  g_assert_no_error (error);
  hp_test_assert_error (hp_module_call1 (checked, x, &error), &error, HP_ERROR_PLACEMENT,
                        "HpToyLinear.output[0]: output DTensor has placements (S(1)), "
                        "but out_src_shardings expects (R).");
}

/* A buffer laid out as a DTensor stays one, with the same placements,
 * when init_self_buffers computes it anew */
static void
test_buffer_keeps_layout (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpShardingConfig) sharding = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) rows = hp_test_named ("tp:S(0)");
  g_autoptr(HpToyBuffered) buffered = hp_toy_buffered_new ();
  g_autoptr(HpTensor) full = NULL;
  HpTensor *table;

  hp_sharding_config_set_state_sharding (sharding, "table", rows);
  hp_module_set_sharding_config (HP_MODULE (buffered), sharding);
  g_assert_true (hp_module_parallelize (HP_MODULE (buffered), mesh, &error));
  g_assert_true (hp_module_init_states (HP_MODULE (buffered), 0, &error));
  g_assert_true (hp_module_init_states (HP_MODULE (buffered), 0, &error));
  g_assert_no_error (error);

  table = hp_module_get_buffer (HP_MODULE (buffered), "table");
  hp_test_assert_placements (table, "(S(0))");
  g_assert_true (hp_module_buffer_is_persistent (HP_MODULE (buffered), "table"));
  full = hp_test_full_tensor (table);
  hp_test_assert_values (full, HP_TEST_DATA (0, 2, 4, 6, 8, 10), HP_TEST_SHAPE (6), 0, 0);
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init_world (&argc, &argv);

  g_test_add_func ("/module-parallelize/linear-equals-one-rank", test_linear_equals_one_rank);
  g_test_add_func ("/module-parallelize/tree", test_tree);
  g_test_add_func ("/module-parallelize/errors-leave-module-unchanged",
                   test_errors_leave_module_unchanged);
  g_test_add_func ("/module-parallelize/input-placement-mismatch", test_input_placement_mismatch);
  g_test_add_func ("/module-parallelize/no-sharding-config", test_no_sharding_config);
  g_test_add_func ("/module-parallelize/negative-shard-dim", test_negative_shard_dim);
  g_test_add_func ("/module-parallelize/layout-conflicts", test_layout_conflicts);
  g_test_add_func ("/module-parallelize/buffer-keeps-layout", test_buffer_keeps_layout);

  return g_test_run ();
}
