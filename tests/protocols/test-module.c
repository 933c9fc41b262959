/* test-module.c: HpModule on one rank (the seed's test_module group)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>
#include <string.h>

#include "hp-test-toys.h"
#include "hp-test-utils.h"

static HpToyLinear *
build_linear (gint     in_features,
              gint     out_features,
              gboolean bias)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = g_object_new (HP_TYPE_TOY_LINEAR_CONFIG,
                                             "in-features", in_features,
                                             "out-features", out_features,
                                             "bias", bias,
                                             NULL);
  GObject *built = hp_config_build (config, &error);

  g_assert_no_error (error);
  g_assert_true (HP_IS_TOY_LINEAR (built));
  return HP_TOY_LINEAR (built);
}

static gdouble *
values (HpTensor *tensor)
{
  gsize n;

  return hp_tensor_to_float64_array (tensor, &n);
}

static void
test_build_registers_parameters (void)
{
  g_autoptr(HpToyLinear) linear = build_linear (3, 2, TRUE);
  g_auto(GStrv) names = hp_module_get_parameter_names (HP_MODULE (linear));
  HpTensor *weight = hp_module_get_parameter (HP_MODULE (linear), "weight");

  g_assert_cmpstrv (names, ((const gchar *[]) { "weight", "bias", NULL }));
  hp_test_assert_shape (weight, HP_TEST_SHAPE (2, 3));
  g_assert_true (hp_tensor_get_requires_grad (weight));
  g_assert_null (hp_module_get_parameter (HP_MODULE (linear), "nothing"));
  g_assert_null (hp_module_get_sharding_config (HP_MODULE (linear)));
  g_assert_null (hp_module_get_mesh (HP_MODULE (linear)));
}

static void
test_init_states_param_init (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpToyLinear) linear = build_linear (3, 2, TRUE);
  g_autoptr(HpParamInit) init = hp_param_init_new ();
  g_autoptr(HpInitializer) normal = hp_initializer_new_normal (0.0, 0.02);
  g_autoptr(HpInitializer) ones = hp_initializer_new_ones ();
  g_autoptr(HpTensor) expected = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3));
  HpTensor *weight = hp_module_get_parameter (HP_MODULE (linear), "weight");
  guint initialized = 0;

  hp_param_init_set (init, "weight", normal);
  hp_param_init_set (init, "bias", ones);
  hp_module_set_param_init (HP_MODULE (linear), init);
  hp_test_count_signal (linear, "states-initialized", &initialized);

  g_assert_true (hp_module_init_states (HP_MODULE (linear), 7, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (initialized, ==, 1);
  g_assert_cmpuint (hp_toy_linear_get_reset_count (linear), ==, 0);

  /* in place: the parameter object is the same one */
  g_assert_true (hp_module_get_parameter (HP_MODULE (linear), "weight") == weight);
  g_assert_true (hp_initializer_apply (normal, expected, hp_module_derive_seed (7, "weight"), &error));
  g_assert_no_error (error);
  hp_test_assert_close (weight, expected, 0, 0);
  hp_test_assert_values (hp_module_get_parameter (HP_MODULE (linear), "bias"),
                         HP_TEST_DATA (1, 1), HP_TEST_SHAPE (2), 0, 0);
  g_assert_true (hp_tensor_get_requires_grad (weight));
  g_assert_true (hp_tensor_is_leaf (weight));
}

static void
test_init_states_deterministic (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpToyLinear) a = build_linear (5, 4, FALSE);
  g_autoptr(HpToyLinear) b = build_linear (5, 4, FALSE);
  g_autofree gdouble *first = NULL;
  g_autofree gdouble *again = NULL;
  g_autofree gdouble *other = NULL;
  HpTensor *weight = hp_module_get_parameter (HP_MODULE (a), "weight");

  g_assert_true (hp_module_init_states (HP_MODULE (a), 1, &error));
  first = values (weight);
  g_assert_true (hp_module_init_states (HP_MODULE (b), 1, &error));
  again = values (hp_module_get_parameter (HP_MODULE (b), "weight"));
  g_assert_true (memcmp (first, again, 20 * sizeof (gdouble)) == 0);
  g_assert_true (hp_module_init_states (HP_MODULE (a), 2, &error));
  g_assert_no_error (error);
  other = values (weight);
  g_assert_false (memcmp (first, other, 20 * sizeof (gdouble)) == 0);
  g_assert_cmpuint (hp_toy_linear_get_reset_count (a), ==, 2);

  /* uniform(-1/sqrt(5), 1/sqrt(5)) from reset_parameters */
  for (guint i = 0; i < 20; i++)
    g_assert_cmpfloat (ABS (first[i]), <=, 1 / sqrt (5));
}

static void
test_init_states_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpModule) root = hp_module_new ();
  g_autoptr(HpToyLinear) linear = build_linear (2, 2, TRUE);
  g_autoptr(HpToyNoInit) bare = hp_toy_no_init_new ();
  g_autoptr(HpParamInit) init = hp_param_init_new ();
  g_autoptr(HpInitializer) ones = hp_initializer_new_ones ();
  g_autoptr(HpInitializer) constant = hp_initializer_new_constant (3);
  g_autofree gchar *before = NULL;
  g_autofree gchar *after = NULL;
  guint initialized = 0;

  g_assert_true (hp_module_add_child (root, "linear", HP_MODULE (linear), &error));
  g_assert_true (hp_module_add_child (root, "bare", HP_MODULE (bare), &error));
  hp_test_count_signal (linear, "states-initialized", &initialized);
  before = hp_test_module_snapshot (root);

  hp_test_assert_error (GINT_TO_POINTER (hp_module_init_states (root, 0, &error)), &error,
                        HP_ERROR_CONFIG,
                        "HpToyNoInit has parameters ['w', 'v'] but neither param_init "
                        "nor reset_parameters is available");
  /* checked before anything is written: the linear child is untouched */
  g_assert_cmpuint (hp_toy_linear_get_reset_count (linear), ==, 0);
  g_assert_cmpuint (initialized, ==, 0);
  after = hp_test_module_snapshot (root);
  g_assert_cmpstr (after, ==, before);
  g_clear_pointer (&after, g_free);

  hp_param_init_set (init, "w", ones);
  hp_module_set_param_init (HP_MODULE (bare), init);
  g_clear_pointer (&before, g_free);
  before = hp_test_module_snapshot (root);
  hp_test_assert_error (GINT_TO_POINTER (hp_module_init_states (root, 0, &error)), &error,
                        HP_ERROR_CONFIG,
                        "No initializer for parameter 'v' in HpToyNoInit. Available: ['w']");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_init_self_parameters (HP_MODULE (bare), 0, &error)),
                        &error, HP_ERROR_CONFIG,
                        "No initializer for parameter 'v' in HpToyNoInit. Available: ['w']");
  after = hp_test_module_snapshot (root);
  g_assert_cmpstr (after, ==, before);
  hp_test_assert_values (hp_module_get_parameter (HP_MODULE (bare), "w"),
                         HP_TEST_DATA (0, 0), HP_TEST_SHAPE (2), 0, 0);
  g_assert_cmpuint (hp_toy_linear_get_reset_count (linear), ==, 0);
  g_assert_cmpuint (initialized, ==, 0);

  hp_param_init_set (init, "v", constant);
  g_assert_true (hp_module_init_states (root, 0, &error));
  g_assert_no_error (error);
  hp_test_assert_values (hp_module_get_parameter (root, "bare.v"),
                         HP_TEST_DATA (3, 3, 3), HP_TEST_SHAPE (3), 0, 0);
  g_assert_cmpuint (initialized, ==, 1);
}

/* A parameter no initialiser can fill (a Partial DTensor) in the last
 * module of a tree: found before the first module is written */
static void
test_init_states_unfillable (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpModule) root = hp_module_new ();
  g_autoptr(HpToyLinear) first = build_linear (2, 2, TRUE);
  g_autoptr(HpToyLinear) second = build_linear (2, 2, FALSE);
  g_autoptr(HpToyNoInit) bare = hp_toy_no_init_new ();
  g_autoptr(HpParamInit) init = hp_param_init_new ();
  g_autoptr(HpInitializer) ones = hp_initializer_new_ones ();
  g_autoptr(GPtrArray) partial = hp_test_placements ((const gchar *[]) { "P(sum)" }, 1);
  g_autoptr(HpTensor) local = hp_tensor_new_full (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 2), 5.0);
  g_autoptr(HpDTensor) summed = hp_dtensor_new_from_local (local, mesh, partial, NULL, 0, FALSE, &error);
  g_autofree gchar *before = NULL;
  g_autofree gchar *after = NULL;
  guint initialized = 0;

  g_assert_no_error (error);
  g_assert_true (hp_module_register_parameter (HP_MODULE (second), "weight", HP_TENSOR (summed), &error));
  hp_param_init_set (init, "w", ones);
  hp_param_init_set (init, "v", ones);
  hp_module_set_param_init (HP_MODULE (bare), init);
  g_assert_true (hp_module_add_child (root, "first", HP_MODULE (first), &error));
  g_assert_true (hp_module_add_child (root, "bare", HP_MODULE (bare), &error));
  g_assert_true (hp_module_add_child (root, "second", HP_MODULE (second), &error));
  g_assert_no_error (error);
  hp_test_count_signal (first, "states-initialized", &initialized);
  hp_test_count_signal (bare, "states-initialized", &initialized);
  before = hp_test_module_snapshot (root);

  hp_test_assert_error (GINT_TO_POINTER (hp_module_init_states (root, 4, &error)), &error,
                        HP_ERROR_PLACEMENT,
                        "HpToyLinear.weight: cannot initialise a Partial DTensor (placements (P(sum)))");
  after = hp_test_module_snapshot (root);
  g_assert_cmpstr (after, ==, before);
  g_assert_cmpuint (hp_toy_linear_get_reset_count (first), ==, 0);
  g_assert_cmpuint (initialized, ==, 0);

  /* the module alone: the same */
  hp_test_assert_error (GINT_TO_POINTER (hp_module_init_self_parameters (HP_MODULE (second), 4, &error)),
                        &error, HP_ERROR_PLACEMENT,
                        "HpToyLinear.weight: cannot initialise a Partial DTensor (placements (P(sum)))");
  g_clear_pointer (&after, g_free);
  after = hp_test_module_snapshot (root);
  g_assert_cmpstr (after, ==, before);
  g_assert_cmpuint (hp_toy_linear_get_reset_count (second), ==, 0);
}

static void
test_init_self_buffers (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpToyBuffered) buffered = hp_toy_buffered_new ();
  g_autoptr(HpStateDict) buffers = NULL;
  guint initialized = 0;

  hp_test_count_signal (buffered, "states-initialized", &initialized);
  g_assert_true (hp_module_init_states (HP_MODULE (buffered), 0, &error));
  g_assert_true (hp_module_init_states (HP_MODULE (buffered), 0, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (initialized, ==, 2);
  hp_test_assert_values (hp_module_get_buffer (HP_MODULE (buffered), "table"),
                         HP_TEST_DATA (0, 2, 4, 6, 8, 10), HP_TEST_SHAPE (6), 0, 0);
  g_assert_true (hp_module_buffer_is_persistent (HP_MODULE (buffered), "table"));
  g_assert_false (hp_module_buffer_is_persistent (HP_MODULE (buffered), "scratch"));
  g_assert_false (hp_module_buffer_is_persistent (HP_MODULE (buffered), "nothing"));

  buffers = hp_module_named_buffers (HP_MODULE (buffered));
  g_assert_cmpuint (hp_state_dict_get_size (buffers), ==, 2);
  g_assert_cmpstr (hp_state_dict_get_name (buffers, 0), ==, "table");
  g_assert_cmpstr (hp_state_dict_get_name (buffers, 1), ==, "scratch");
}

static void
test_named_parameters (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpModule) root = hp_module_new ();
  g_autoptr(HpModule) block = hp_module_new ();
  g_autoptr(HpToyLinear) first = build_linear (2, 3, TRUE);
  g_autoptr(HpToyLinear) second = build_linear (3, 2, FALSE);
  g_autoptr(HpTensor) scale = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2));
  g_autoptr(HpStateDict) named = NULL;
  g_autoptr(GPtrArray) params = NULL;
  g_auto(GStrv) names = NULL;
  g_auto(GStrv) children = NULL;

  g_assert_true (hp_module_register_parameter (root, "scale", scale, &error));
  g_assert_true (hp_module_add_child (block, "first", HP_MODULE (first), &error));
  g_assert_true (hp_module_add_child (block, "second", HP_MODULE (second), &error));
  g_assert_true (hp_module_add_child (root, "block", block, &error));
  /* the same module twice: its parameters appear once */
  g_assert_true (hp_module_add_child (root, "again", HP_MODULE (first), &error));
  g_assert_no_error (error);

  named = hp_module_named_parameters (root);
  names = hp_state_dict_get_names (named);
  g_assert_cmpstrv (names, ((const gchar *[]) { "scale", "block.first.weight",
                                                "block.first.bias", "block.second.weight",
                                                NULL }));
  params = hp_module_parameters (root);
  g_assert_cmpuint (params->len, ==, 4);
  g_assert_true (g_ptr_array_index (params, 1) == hp_module_get_parameter (HP_MODULE (first), "weight"));

  g_assert_true (hp_module_get_parameter (root, "block.second.weight") ==
                 hp_module_get_parameter (HP_MODULE (second), "weight"));
  g_assert_true (hp_module_get_parameter (root, "again.bias") ==
                 hp_module_get_parameter (HP_MODULE (first), "bias"));
  g_assert_null (hp_module_get_parameter (root, "block.third.weight"));
  g_assert_null (hp_module_get_parameter (root, "block"));
  g_assert_true (hp_module_get_child (root, "block.second") == HP_MODULE (second));
  g_assert_null (hp_module_get_child (root, "block.second.weight"));
  children = hp_module_get_child_names (root);
  g_assert_cmpstrv (children, ((const gchar *[]) { "block", "again", NULL }));
}

static void
test_registration_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpModule) root = hp_module_new ();
  g_autoptr(HpModule) child = hp_module_new ();
  g_autoptr(HpTensor) weight = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) other = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) ids = hp_tensor_new_zeros (HP_DTYPE_INT64, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) scratch = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) derived = NULL;
  g_autofree gchar *before = NULL;
  g_autofree gchar *after = NULL;
  g_auto(GStrv) names = NULL;

  g_assert_true (hp_module_register_parameter (root, "w", weight, &error));
  g_assert_true (hp_module_register_buffer (root, "b", scratch, FALSE, &error));
  g_assert_true (hp_module_add_child (root, "child", child, &error));
  g_assert_no_error (error);
  derived = hp_tensor_scale (weight, 2.0, &error);
  g_assert_no_error (error);
  before = hp_test_module_snapshot (root);

  hp_test_assert_error (GINT_TO_POINTER (hp_module_register_parameter (root, "a.b", other, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpModule: 'a.b' is not a valid parameter name (empty or with a '.')");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_register_parameter (root, "", other, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpModule: '' is not a valid parameter name (empty or with a '.')");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_register_parameter (root, "child", other, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpModule: cannot register parameter 'child': the name is already a child module");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_register_parameter (root, "b", other, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpModule: cannot register parameter 'b': the name is already a buffer");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_register_parameter (root, "ids", ids, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpModule: parameter 'ids' must be a floating-point tensor, not int64");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_register_parameter (root, "derived", derived, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpModule: parameter 'derived' must be a leaf tensor, not the result of an op");
  /* a rejected parameter is not made to require gradients */
  g_assert_false (hp_tensor_get_requires_grad (other));

  hp_test_assert_error (GINT_TO_POINTER (hp_module_register_buffer (root, "w", other, TRUE, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpModule: cannot register buffer 'w': the name is already a parameter");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_register_buffer (root, "x.y", other, TRUE, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpModule: 'x.y' is not a valid buffer name (empty or with a '.')");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_register_buffer (root, "child", other, TRUE, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpModule: cannot register buffer 'child': the name is already a child module");

  hp_test_assert_error (GINT_TO_POINTER (hp_module_add_child (child, "loop", root, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpModule: cannot add child 'loop': HpModule contains the module itself");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_add_child (root, "self", root, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpModule: cannot add child 'self': HpModule contains the module itself");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_add_child (root, "w", child, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpModule: cannot register child module 'w': the name is already a parameter");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_add_child (root, "", child, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpModule: '' is not a valid child module name (empty or with a '.')");

  /* nothing changed; replacing a parameter keeps its position */
  after = hp_test_module_snapshot (root);
  g_assert_cmpstr (after, ==, before);
  names = hp_module_get_parameter_names (root);
  g_assert_cmpstrv (names, ((const gchar *[]) { "w", NULL }));
  g_assert_true (hp_module_register_parameter (root, "w", other, &error));
  g_assert_true (hp_module_get_parameter (root, "w") == other);
}

static GPtrArray *
double_forward (HpModule   *module,
                GPtrArray  *args,
                gpointer    user_data,
                GError    **error)
{
  (*(guint *) user_data)++;
  return hp_test_one_output (hp_tensor_mul (g_ptr_array_index (args, 0),
                                            hp_module_get_parameter (module, "factor"), error));
}

static void
test_function_module_shares_config (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpModuleConfig) config = hp_module_config_new ();
  g_autoptr(HpShardingConfig) sharding = hp_sharding_config_new ();
  g_autoptr(HpParamInit) init = hp_param_init_new ();
  g_autoptr(HpInitializer) constant = hp_initializer_new_constant (2);
  g_autoptr(HpFunctionModule) a = NULL;
  g_autoptr(HpFunctionModule) b = NULL;
  g_autoptr(HpTensor) factor_a = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) factor_b = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2, 3), HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) y = NULL;
  guint calls = 0;

  hp_param_init_set (init, "factor", constant);
  hp_module_config_set_param_init (config, init);
  hp_module_config_set_sharding_config (config, sharding);

  a = hp_function_module_new (config, NULL, double_forward, &calls, NULL);
  b = hp_function_module_new (config, (const gchar * const[]) { "x", NULL },
                              double_forward, &calls, NULL);
  g_assert_true (hp_configurable_get_config (HP_CONFIGURABLE (a)) == HP_CONFIG (config));
  g_assert_true (hp_configurable_get_config (HP_CONFIGURABLE (b)) == HP_CONFIG (config));
  g_assert_true (hp_module_get_sharding_config (HP_MODULE (a)) == sharding);
  g_assert_true (hp_module_get_param_init (HP_MODULE (b)) == init);
  g_assert_cmpstrv (hp_module_get_forward_arg_names (HP_MODULE (a)),
                    ((const gchar *[]) { "input", NULL }));
  g_assert_cmpstrv (hp_module_get_forward_arg_names (HP_MODULE (b)),
                    ((const gchar *[]) { "x", NULL }));

  g_assert_true (hp_module_register_parameter (HP_MODULE (a), "factor", factor_a, &error));
  g_assert_true (hp_module_register_parameter (HP_MODULE (b), "factor", factor_b, &error));
  g_assert_true (hp_module_init_states (HP_MODULE (a), 0, &error));
  g_assert_true (hp_module_init_states (HP_MODULE (b), 0, &error));
  g_assert_no_error (error);

  y = hp_module_call1 (HP_MODULE (b), x, &error);
  g_assert_no_error (error);
  hp_test_assert_values (y, HP_TEST_DATA (2, 4, 6), HP_TEST_SHAPE (3), 0, 0);
  g_assert_cmpuint (calls, ==, 1);
}

static void
test_forward_arg_names_of_class (void)
{
  g_autoptr(HpToyInner) inner = hp_toy_inner_new (NULL);
  g_autoptr(HpToyLinear) linear = build_linear (2, 2, FALSE);
  g_autoptr(HpModule) plain = hp_module_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0, 0), HP_TEST_SHAPE (1, 2));

  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(HpTensor) y = hp_module_call1 (HP_MODULE (inner), x, &error);

      g_assert_no_error (error);
      g_assert_cmpstrv (hp_module_get_forward_arg_names (HP_MODULE (inner)),
                        ((const gchar *[]) { "x", NULL }));
    }
  g_assert_cmpuint (hp_toy_inner_get_inner_calls (inner), ==, 3);
  g_assert_cmpstrv (hp_module_get_forward_arg_names (HP_MODULE (linear)),
                    ((const gchar *[]) { "input", NULL }));
  g_assert_cmpstrv (hp_module_get_forward_arg_names (plain),
                    ((const gchar *[]) { "input", NULL }));
}

typedef struct
{
  guint pre;
  guint post;
  GPtrArray *args;
  HpTensor *output;
} ForwardLog;

static void
on_forward_pre (HpModule   *module,
                GPtrArray  *args,
                ForwardLog *log)
{
  log->pre++;
  g_assert_cmpuint (log->post, ==, 0);
  log->args = args;
}

static void
on_forward_post (HpModule   *module,
                 GPtrArray  *args,
                 GPtrArray  *outputs,
                 ForwardLog *log)
{
  log->post++;
  g_assert_true (args == log->args);
  g_assert_cmpuint (outputs->len, ==, 1);
  log->output = g_ptr_array_index (outputs, 0);
}

static void
test_forward_signals (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpToyLinear) linear = build_linear (2, 1, TRUE);
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2), HP_TEST_SHAPE (1, 2));
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autoptr(GPtrArray) outputs = NULL;
  ForwardLog log = { 0 };

  g_assert_true (hp_module_init_states (HP_MODULE (linear), 3, &error));
  g_signal_connect (linear, "forward-pre", G_CALLBACK (on_forward_pre), &log);
  g_signal_connect (linear, "forward-post", G_CALLBACK (on_forward_post), &log);
  g_ptr_array_add (args, x);
  outputs = hp_module_call (HP_MODULE (linear), args, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (log.pre, ==, 1);
  g_assert_cmpuint (log.post, ==, 1);
  g_assert_true (log.output == g_ptr_array_index (outputs, 0));
}

static void
test_forward_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpModule) plain = hp_module_new ();
  g_autoptr(HpToyLinear) linear = build_linear (2, 1, FALSE);
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2, 3), HP_TEST_SHAPE (1, 3));
  g_autoptr(GPtrArray) no_args = g_ptr_array_new ();
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autofree gchar *before = hp_test_module_snapshot (HP_MODULE (linear));
  g_autofree gchar *after = NULL;

  g_ptr_array_add (args, x);
  hp_test_assert_error (hp_module_call (plain, args, &error), &error,
                        HP_ERROR_NOT_SUPPORTED, "HpModule does not implement forward");
  hp_test_assert_error (hp_module_call (HP_MODULE (linear), args, &error), &error,
                        HP_ERROR_SHAPE, "linear: input [1, 3] and weight [1, 2] do not fit (3 != 2)");
  hp_test_assert_error (hp_module_call1 (plain, x, &error), &error,
                        HP_ERROR_NOT_SUPPORTED, "HpModule does not implement forward");
  hp_test_assert_error (hp_module_call1 (HP_MODULE (linear), x, &error), &error,
                        HP_ERROR_SHAPE, "linear: input [1, 3] and weight [1, 2] do not fit (3 != 2)");
  hp_test_assert_error (hp_module_run_callable (plain, "inner", no_args, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "HpModule has no callable 'inner'");
  hp_test_assert_error (hp_module_run_callable (HP_MODULE (linear), "missing.inner", no_args, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "HpToyLinear has no callable 'missing.inner'");
  after = hp_test_module_snapshot (HP_MODULE (linear));
  g_assert_cmpstr (after, ==, before);
}

static void
test_containers (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpSequential) seq = hp_sequential_new ();
  g_autoptr(HpModuleDict) dict = hp_module_dict_new ();
  g_autoptr(HpToyLinear) first = build_linear (2, 3, FALSE);
  g_autoptr(HpToyLinear) second = build_linear (3, 1, FALSE);
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, -1), HP_TEST_SHAPE (1, 2));
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) h = NULL;
  g_autoptr(HpTensor) expected = NULL;
  g_autoptr(HpStateDict) named = NULL;
  g_autoptr(GObject) item = NULL;
  guint n_changed = 0;

  /* an empty sequential passes its arguments through */
  y = hp_module_call1 (HP_MODULE (seq), x, &error);
  g_assert_no_error (error);
  g_assert_true (y == x);
  g_clear_object (&y);

  hp_test_count_signal (seq, "items-changed", &n_changed);
  g_assert_true (hp_module_list_append (HP_MODULE_LIST (seq), HP_MODULE (first), &error));
  g_assert_true (hp_module_list_append (HP_MODULE_LIST (seq), HP_MODULE (second), &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n_changed, ==, 2);
  g_assert_cmpuint (hp_module_list_get_length (HP_MODULE_LIST (seq)), ==, 2);
  g_assert_true (hp_module_list_get (HP_MODULE_LIST (seq), 1) == HP_MODULE (second));
  g_assert_null (hp_module_list_get (HP_MODULE_LIST (seq), 2));
  /* a list model of its modules */
  g_assert_true (g_list_model_get_item_type (G_LIST_MODEL (seq)) == HP_TYPE_MODULE);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (seq)), ==, 2);
  item = g_list_model_get_item (G_LIST_MODEL (seq), 0);
  g_assert_true (item == (gpointer) first);
  g_assert_null (g_list_model_get_item (G_LIST_MODEL (seq), 2));
  g_assert_true (hp_module_init_states (HP_MODULE (seq), 5, &error));
  g_assert_cmpuint (hp_toy_linear_get_reset_count (first), ==, 1);

  y = hp_module_call1 (HP_MODULE (seq), x, &error);
  h = hp_module_call1 (HP_MODULE (first), x, &error);
  expected = hp_module_call1 (HP_MODULE (second), h, &error);
  g_assert_no_error (error);
  hp_test_assert_close (y, expected, 0, 0);

  named = hp_module_named_parameters (HP_MODULE (seq));
  g_assert_cmpstr (hp_state_dict_get_name (named, 1), ==, "1.weight");

  g_assert_true (hp_module_dict_insert (dict, "proj", HP_MODULE (first), &error));
  g_assert_true (hp_module_dict_lookup (dict, "proj") == HP_MODULE (first));
  g_assert_null (hp_module_dict_lookup (dict, "other"));
}

/* A list or dict that would hold itself, a bad key: refused, the
 * container and the module offered unchanged */
static void
test_container_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpSequential) seq = hp_sequential_new ();
  g_autoptr(HpModuleDict) dict = hp_module_dict_new ();
  g_autoptr(HpModule) outer = hp_module_new ();
  g_autoptr(HpToyLinear) first = build_linear (2, 3, FALSE);
  g_autoptr(HpToyLinear) second = build_linear (3, 1, FALSE);
  g_autofree gchar *seq_before = NULL;
  g_autofree gchar *dict_before = NULL;
  g_autofree gchar *outer_before = NULL;
  g_autofree gchar *after = NULL;

  g_assert_true (hp_module_list_append (HP_MODULE_LIST (seq), HP_MODULE (first), &error));
  g_assert_true (hp_module_list_append (HP_MODULE_LIST (seq), HP_MODULE (second), &error));
  g_assert_true (hp_module_dict_insert (dict, "proj", HP_MODULE (first), &error));
  g_assert_true (hp_module_add_child (outer, "seq", HP_MODULE (seq), &error));
  g_assert_true (hp_module_add_child (outer, "dict", HP_MODULE (dict), &error));
  g_assert_no_error (error);
  seq_before = hp_test_module_snapshot (HP_MODULE (seq));
  dict_before = hp_test_module_snapshot (HP_MODULE (dict));
  outer_before = hp_test_module_snapshot (outer);

  /* a list cannot hold itself, or a module that holds it */
  hp_test_assert_error (GINT_TO_POINTER (hp_module_list_append (HP_MODULE_LIST (seq), HP_MODULE (seq),
                                                                &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpSequential: cannot add child '2': HpSequential contains the module itself");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_list_append (HP_MODULE_LIST (seq), outer, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpSequential: cannot add child '2': HpModule contains the module itself");
  after = hp_test_module_snapshot (HP_MODULE (seq));
  g_assert_cmpstr (after, ==, seq_before);
  g_assert_cmpuint (hp_module_list_get_length (HP_MODULE_LIST (seq)), ==, 2);
  g_assert_null (hp_module_list_get (HP_MODULE_LIST (seq), 2));
  g_clear_pointer (&after, g_free);

  /* keys are names without dots; no cycles either */
  hp_test_assert_error (GINT_TO_POINTER (hp_module_dict_insert (dict, "a.b", HP_MODULE (second), &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpModuleDict: 'a.b' is not a valid child module name (empty or with a '.')");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_dict_insert (dict, "", HP_MODULE (second), &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpModuleDict: '' is not a valid child module name (empty or with a '.')");
  hp_test_assert_error (GINT_TO_POINTER (hp_module_dict_insert (dict, "proj", outer, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "HpModuleDict: cannot add child 'proj': HpModule contains the module itself");
  after = hp_test_module_snapshot (HP_MODULE (dict));
  g_assert_cmpstr (after, ==, dict_before);
  g_assert_true (hp_module_dict_lookup (dict, "proj") == HP_MODULE (first));
  g_clear_pointer (&after, g_free);

  after = hp_test_module_snapshot (outer);
  g_assert_cmpstr (after, ==, outer_before);
}

static void
test_base_model (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = g_object_new (HP_TYPE_TOY_MODEL_CONFIG,
                                             "vocab", 10, "dim", 4, "n-layers", 2,
                                             "n-heads", 2, NULL);
  g_autoptr(GObject) built = hp_config_build (config, &error);
  HpBaseModel *model = HP_BASE_MODEL (built);
  g_autoptr(HpShardingConfig) sharding = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) shard = hp_test_named ("tp:S(0)");
  g_autoptr(HpLocalMapConfig) local_map = hp_local_map_config_new ("missing");
  g_autoptr(HpToyNoInit) bare = hp_toy_no_init_new ();
  g_autoptr(HpTensor) ids = NULL;
  g_autoptr(HpTensor) out = NULL;
  gint64 nparams = 0;
  gint64 flops = 0;
  gint64 ids_data[] = { 1, 3, 9 };
  g_autofree gchar *before = NULL;
  g_autofree gchar *after = NULL;

  g_assert_no_error (error);
  g_assert_true (hp_base_model_verify_module_protocol (model, &error));
  g_assert_no_error (error);
  g_assert_true (hp_base_model_init_weights (model, 11, &error));
  g_assert_no_error (error);

  /* 10 * 4 embedding + 2 * (16 + 4) */
  hp_base_model_config_get_nparams_and_flops (HP_BASE_MODEL_CONFIG (config), model, 8,
                                              &nparams, &flops);
  g_assert_cmpint (nparams, ==, 80);
  g_assert_cmpint (flops, ==, 6 * 40 + 6 * 2 * 2 * 2 * 8);
  g_assert_true (hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config),
                                                          NULL, &error));

  ids = hp_test_tensor_ids (ids_data, 3, HP_TEST_SHAPE (3));
  out = hp_module_call1 (HP_MODULE (model), ids, &error);
  g_assert_no_error (error);
  hp_test_assert_shape (out, HP_TEST_SHAPE (3, 4));

  hp_sharding_config_set_state_sharding (sharding, "weight", shard);
  hp_sharding_config_set_state_sharding (sharding, "nothing", shard);
  hp_sharding_config_set_in_dst_sharding (sharding, "input", shard);
  hp_sharding_config_set_in_src_sharding (sharding, "x", shard);
  hp_sharding_config_set_local_map (sharding, local_map);
  hp_module_set_sharding_config (hp_module_get_child (HP_MODULE (model), "layers.1"), sharding);
  g_assert_true (hp_module_add_child (HP_MODULE (model), "bare", HP_MODULE (bare), &error));

  before = hp_test_module_snapshot (HP_MODULE (model));
  hp_test_assert_error (GINT_TO_POINTER (hp_base_model_verify_module_protocol (model, &error)), &error,
                        HP_ERROR_CONFIG,
                        "HpToyModel does not follow the module protocol: "
                        "state_shardings of layers.1 names 'nothing', which is not a parameter or buffer; "
                        "in_src_shardings of layers.1 names 'x', which is not a forward argument; "
                        "local_map of layers.1 names callable 'missing', which is not registered; "
                        "parameter 'bare.w' has no initializer; "
                        "parameter 'bare.v' has no initializer");
  after = hp_test_module_snapshot (HP_MODULE (model));
  g_assert_cmpstr (after, ==, before);
}

/* init_weights with a parameter nothing initialises, update_from_config
 * with a job the model does not fit: errors, and the model and its
 * configuration as they were */
static void
test_base_model_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = g_object_new (HP_TYPE_TOY_MODEL_CONFIG,
                                             "vocab", 10, "dim", 4, "n-layers", 2,
                                             "n-heads", 2, NULL);
  g_autoptr(GObject) built = hp_config_build (config, &error);
  HpBaseModel *model = HP_BASE_MODEL (built);
  g_autoptr(HpToyNoInit) bare = hp_toy_no_init_new ();
  g_autoptr(HpParallelDims) tp3 = g_object_new (HP_TYPE_PARALLEL_DIMS, "tp", 3, NULL);
  g_autoptr(HpParallelDims) tp2 = g_object_new (HP_TYPE_PARALLEL_DIMS, "tp", 2, NULL);
  g_autoptr(HpModuleConfig) not_a_job = hp_module_config_new ();
  g_autofree gchar *config_before = hp_config_to_json (config, FALSE);
  g_autofree gchar *config_after = NULL;
  g_autofree gchar *before = NULL;
  g_autofree gchar *after = NULL;
  guint initialized = 0;

  g_assert_no_error (error);
  g_assert_true (hp_base_model_init_weights (model, 1, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_add_child (HP_MODULE (model), "bare", HP_MODULE (bare), &error));
  g_assert_no_error (error);
  hp_test_count_signal (hp_module_get_child (HP_MODULE (model), "embed"), "states-initialized",
                        &initialized);

  before = hp_test_module_snapshot (HP_MODULE (model));
  hp_test_assert_error (GINT_TO_POINTER (hp_base_model_init_weights (model, 2, &error)), &error,
                        HP_ERROR_CONFIG,
                        "HpToyNoInit has parameters ['w', 'v'] but neither param_init "
                        "nor reset_parameters is available");
  after = hp_test_module_snapshot (HP_MODULE (model));
  g_assert_cmpstr (after, ==, before);
  g_assert_cmpuint (initialized, ==, 0);

  hp_test_assert_error (GINT_TO_POINTER (hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config),
                                                                                  HP_CONFIG (tp3), &error)),
                        &error, HP_ERROR_CONFIG, "HpToyModelConfig: n-heads 2 cannot be split over tp = 3");
  hp_test_assert_error (GINT_TO_POINTER (hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config),
                                                                                  HP_CONFIG (not_a_job), &error)),
                        &error, HP_ERROR_CONFIG,
                        "HpToyModelConfig: update_from_config takes a HpParallelDims, not a HpModuleConfig");
  config_after = hp_config_to_json (config, FALSE);
  g_assert_cmpstr (config_after, ==, config_before);
  g_clear_pointer (&config_after, g_free);

  g_assert_true (hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config),
                                                          HP_CONFIG (tp2), &error));
  g_assert_no_error (error);
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init (&argc, &argv);

  g_test_add_func ("/module/build-registers-parameters", test_build_registers_parameters);
  g_test_add_func ("/module/init-states/param-init", test_init_states_param_init);
  g_test_add_func ("/module/init-states/deterministic", test_init_states_deterministic);
  g_test_add_func ("/module/init-states/errors", test_init_states_errors);
  g_test_add_func ("/module/init-states/unfillable", test_init_states_unfillable);
  g_test_add_func ("/module/init-self-buffers", test_init_self_buffers);
  g_test_add_func ("/module/named-parameters", test_named_parameters);
  g_test_add_func ("/module/registration-errors", test_registration_errors);
  g_test_add_func ("/module/function-module-shares-config", test_function_module_shares_config);
  g_test_add_func ("/module/forward-arg-names-of-class", test_forward_arg_names_of_class);
  g_test_add_func ("/module/forward-signals", test_forward_signals);
  g_test_add_func ("/module/forward-errors", test_forward_errors);
  g_test_add_func ("/module/containers", test_containers);
  g_test_add_func ("/module/containers/errors", test_container_errors);
  g_test_add_func ("/module/base-model", test_base_model);
  g_test_add_func ("/module/base-model/errors", test_base_model_errors);

  return g_test_run ();
}
