/* test-module-state.c: hp_module_state_dict and hp_module_load_state_dict,
 * with plain and laid-out states
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi); every rank runs every
 * assertion.
 */

#include "hp-test-toys.h"
#include "hp-test-utils.h"

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

/* A tree: "linear" (weight, bias), "buffered" (table persistent,
 * scratch not) and "tied", whose weight is linear's */
static HpModule *
build_tree (HpShardingConfig *sharding)
{
  g_autoptr(GError) error = NULL;
  HpModule *root = hp_module_new ();
  g_autoptr(HpModule) linear = build_linear (4, 6, TRUE, sharding);
  g_autoptr(HpModule) tied = build_linear (4, 6, FALSE, NULL);
  g_autoptr(HpToyBuffered) buffered = hp_toy_buffered_new ();

  g_assert_true (hp_module_register_parameter (tied, "weight",
                                               hp_module_get_parameter (linear, "weight"), &error));
  g_assert_true (hp_module_add_child (root, "linear", linear, &error));
  g_assert_true (hp_module_add_child (root, "buffered", HP_MODULE (buffered), &error));
  g_assert_true (hp_module_add_child (root, "tied", tied, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_init_states (root, 3, &error));
  g_assert_no_error (error);
  return root;
}

/* A state dict of new plain tensors: value v at index i is i + offset */
static HpStateDict *
numbered (HpModule *module,
          gdouble   offset)
{
  g_autoptr(HpStateDict) states = hp_module_state_dict (module);
  HpStateDict *out = hp_state_dict_new ();

  for (guint i = 0; i < hp_state_dict_get_size (states); i++)
    {
      HpTensor *state = hp_state_dict_get_tensor (states, i);
      guint ndim;
      const gint64 *shape = hp_tensor_get_shape (state, &ndim);
      gint64 numel = hp_tensor_get_numel (state);
      g_autofree gdouble *data = g_new (gdouble, MAX (numel, 1));
      g_autoptr(HpTensor) tensor = NULL;

      for (gint64 j = 0; j < numel; j++)
        data[j] = j + offset + 100 * i;
      tensor = hp_test_tensor (HP_DTYPE_FLOAT64, data, numel, shape, ndim);
      hp_state_dict_insert (out, hp_state_dict_get_name (states, i), tensor);
    }
  return out;
}

/* The values of a state, gathered when it is laid out */
static HpTensor *
whole (HpTensor *tensor)
{
  return HP_IS_DTENSOR (tensor) ? hp_test_full_tensor (tensor) : g_object_ref (tensor);
}

static void
assert_loaded (HpModule    *module,
               HpStateDict *expected)
{
  for (guint i = 0; i < hp_state_dict_get_size (expected); i++)
    {
      const gchar *name = hp_state_dict_get_name (expected, i);
      HpTensor *state = hp_module_get_parameter (module, name);
      g_autoptr(HpTensor) full = NULL;

      if (state == NULL)
        state = hp_module_get_buffer (module, name);
      g_assert_nonnull (state);
      full = whole (state);
      hp_test_assert_close (full, hp_state_dict_get_tensor (expected, i), 0, 0);
    }
}

static void
test_state_dict (void)
{
  g_autoptr(HpModule) root = build_tree (NULL);
  g_autoptr(HpStateDict) states = hp_module_state_dict (root);
  g_auto(GStrv) names = hp_state_dict_get_names (states);

  /* per module: parameters, persistent buffers, children; tied paths
   * both present; non-persistent buffers left out */
  g_assert_cmpstrv (names, ((const gchar *[]) { "linear.weight", "linear.bias",
                                                "buffered.table", "tied.weight", NULL }));
  g_assert_true (hp_state_dict_lookup (states, "linear.weight") ==
                 hp_module_get_parameter (root, "linear.weight"));
  g_assert_true (hp_state_dict_lookup (states, "tied.weight") ==
                 hp_state_dict_lookup (states, "linear.weight"));
}

static void
test_load_round_trip (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpModule) root = build_tree (NULL);
  g_autoptr(HpStateDict) values = numbered (root, 0.5);
  HpTensor *weight = hp_module_get_parameter (root, "linear.weight");

  /* both tied names carry the same values, as a saved dict would */
  hp_state_dict_insert (values, "tied.weight", hp_state_dict_lookup (values, "linear.weight"));
  g_assert_true (hp_module_load_state_dict (root, values, TRUE, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_get_parameter (root, "linear.weight") == weight);
  g_assert_true (hp_tensor_get_requires_grad (weight));
  assert_loaded (root, values);
}

/* A failed load: the error, and the module and the state dict given as
 * they were */
static void
assert_load_fails (HpModule    *module,
                   HpStateDict *values,
                   gboolean     strict,
                   gint         code,
                   const gchar *message)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *module_before = hp_test_module_snapshot (module);
  g_autofree gchar *values_before = hp_test_state_dict_snapshot (values);
  g_autofree gchar *module_after = NULL;
  g_autofree gchar *values_after = NULL;

  hp_test_assert_error (GINT_TO_POINTER (hp_module_load_state_dict (module, values, strict, &error)),
                        &error, code, message);
  module_after = hp_test_module_snapshot (module);
  values_after = hp_test_state_dict_snapshot (values);
  g_assert_cmpstr (module_after, ==, module_before);
  g_assert_cmpstr (values_after, ==, values_before);
}

static void
test_load_errors_leave_module_unchanged (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpModule) root = build_tree (NULL);
  g_autoptr(HpStateDict) before = NULL;
  g_autoptr(HpStateDict) values = numbered (root, 1);
  g_autoptr(HpTensor) wrong = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 4));
  g_autoptr(HpTensor) ids = hp_tensor_new_zeros (HP_DTYPE_INT64, HP_TEST_SHAPE (6));
  g_autoptr(HpTensor) extra = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1));

  before = numbered (root, 0);
  for (guint i = 0; i < hp_state_dict_get_size (before); i++)
    {
      /* the module's current values, copied */
      const gchar *name = hp_state_dict_get_name (before, i);
      HpTensor *state = hp_module_get_parameter (root, name);
      g_autoptr(HpTensor) copy = NULL;

      if (state == NULL)
        state = hp_module_get_buffer (root, name);
      copy = whole (state);
      hp_state_dict_insert (before, name, copy);
    }

  hp_state_dict_remove (values, "linear.bias");
  hp_state_dict_remove (values, "buffered.table");
  hp_state_dict_insert (values, "linear.extra", extra);
  assert_load_fails (root, values, TRUE, HP_ERROR_INVALID_ARGUMENT,
                     "Error(s) in loading state_dict for HpModule: Missing key(s): "
                     "'linear.bias', 'buffered.table'. Unexpected key(s): 'linear.extra'.");
  assert_loaded (root, before);

  /* the entries that fit come first, the one that does not last: still
   * nothing is written */
  hp_state_dict_remove (values, "linear.extra");
  hp_state_dict_insert (values, "tied.weight", wrong);
  assert_load_fails (root, values, FALSE, HP_ERROR_SHAPE,
                     "size mismatch for tied.weight: the state dict has shape [5, 4], "
                     "the module [6, 4]");
  assert_loaded (root, before);

  hp_state_dict_remove (values, "tied.weight");
  hp_state_dict_insert (values, "linear.bias", ids);
  assert_load_fails (root, values, FALSE, HP_ERROR_INVALID_ARGUMENT,
                     "dtype mismatch for linear.bias: cannot load int64 into float64");
  assert_loaded (root, before);

  /* not strict: the keys there are loaded, the others kept */
  hp_state_dict_remove (values, "linear.bias");
  g_assert_true (hp_module_load_state_dict (root, values, FALSE, &error));
  g_assert_no_error (error);
  hp_test_assert_close (hp_module_get_parameter (root, "linear.weight"),
                        hp_state_dict_lookup (values, "linear.weight"), 0, 0);
  hp_test_assert_close (hp_module_get_parameter (root, "linear.bias"),
                        hp_state_dict_lookup (before, "linear.bias"), 0, 0);
}

/* A laid-out module takes the slices of whole tensors; float32 values
 * load into float64 states */
static void
test_load_into_dtensors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpShardingConfig) sharding = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) rows = hp_test_named ("tp:S(0)");
  g_autoptr(HpModule) root = NULL;
  g_autoptr(HpStateDict) values = NULL;
  g_autoptr(HpStateDict) saved = NULL;
  g_autoptr(HpStateDict) narrow = hp_state_dict_new ();
  g_autoptr(HpModule) other = NULL;

  hp_sharding_config_set_state_sharding (sharding, "weight", rows);
  hp_sharding_config_set_state_sharding (sharding, "bias", rows);
  root = build_tree (sharding);
  g_assert_true (hp_module_parallelize (root, mesh, &error));
  g_assert_no_error (error);
  g_assert_true (HP_IS_DTENSOR (hp_module_get_parameter (root, "tied.weight")));

  values = numbered (root, 0.25);
  hp_state_dict_insert (values, "tied.weight", hp_state_dict_lookup (values, "linear.weight"));
  for (guint i = 0; i < hp_state_dict_get_size (values); i++)
    {
      g_autoptr(HpTensor) as_float32 = NULL;
      gsize n;
      g_autofree gdouble *data = hp_tensor_to_float64_array (hp_state_dict_get_tensor (values, i), &n);
      guint ndim;
      const gint64 *shape = hp_tensor_get_shape (hp_state_dict_get_tensor (values, i), &ndim);

      as_float32 = hp_test_tensor (HP_DTYPE_FLOAT32, data, n, shape, ndim);
      hp_state_dict_insert (narrow, hp_state_dict_get_name (values, i), as_float32);
    }
  g_assert_true (hp_module_load_state_dict (root, narrow, TRUE, &error));
  g_assert_no_error (error);
  assert_loaded (root, values);

  /* the DTensors of one module load into another laid out alike */
  saved = hp_module_state_dict (root);
  other = build_tree (sharding);
  g_assert_true (hp_module_parallelize (other, mesh, &error));
  g_assert_true (hp_module_load_state_dict (other, saved, TRUE, &error));
  g_assert_no_error (error);
  assert_loaded (other, values);

  /* errors leave the local shards as they were on every rank */
  {
    g_autoptr(HpTensor) wrong = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (7, 4));

    hp_state_dict_insert (narrow, "tied.weight", wrong);
    assert_load_fails (root, narrow, TRUE, HP_ERROR_SHAPE,
                       "size mismatch for tied.weight: the state dict has shape [7, 4], "
                       "the module [6, 4]");
    hp_state_dict_remove (narrow, "tied.weight");
    hp_state_dict_remove (narrow, "buffered.table");
    assert_load_fails (root, narrow, TRUE, HP_ERROR_INVALID_ARGUMENT,
                       "Error(s) in loading state_dict for HpModule: Missing key(s): "
                       "'buffered.table', 'tied.weight'.");
    assert_loaded (root, values);
  }
}

static void
test_load_dtensor_elsewhere (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpShardingConfig) sharding = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) rows = hp_test_named ("tp:S(0)");
  g_autoptr(HpModule) laid_out = NULL;
  g_autoptr(HpModule) plain = build_linear (4, 6, TRUE, NULL);
  g_autoptr(HpStateDict) saved = NULL;

  hp_sharding_config_set_state_sharding (sharding, "weight", rows);
  laid_out = build_linear (4, 6, TRUE, sharding);
  g_assert_true (hp_module_parallelize (laid_out, mesh, &error));
  g_assert_no_error (error);
  saved = hp_module_state_dict (laid_out);
  assert_load_fails (plain, saved, TRUE, HP_ERROR_PLACEMENT,
                     "cannot load weight: the state dict's DTensor is laid out differently "
                     "from the module's (redistribute it, or load a plain tensor)");
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init_world (&argc, &argv);

  g_test_add_func ("/module-state/state-dict", test_state_dict);
  g_test_add_func ("/module-state/load-round-trip", test_load_round_trip);
  g_test_add_func ("/module-state/load-errors-leave-module-unchanged",
                   test_load_errors_leave_module_unchanged);
  g_test_add_func ("/module-state/load-into-dtensors", test_load_into_dtensors);
  g_test_add_func ("/module-state/load-dtensor-elsewhere", test_load_dtensor_elsewhere);

  return g_test_run ();
}
