/* test-nn-modules.c: the basic layers on one rank
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>
#include <string.h>

#include "hp-test-utils.h"

/* Builds @config, which must succeed, as an instance of @type */
static gpointer
build (gpointer config,
       GType    type)
{
  g_autoptr(GError) error = NULL;
  GObject *built = hp_config_build (HP_CONFIG (config), &error);

  g_assert_no_error (error);
  g_assert_true (G_TYPE_CHECK_INSTANCE_TYPE (built, type));
  return built;
}

static gdouble *
values_of (HpTensor *tensor,
           gsize    *n)
{
  return hp_tensor_to_float64_array (tensor, n);
}

/* Replaces parameter @name of @module by a float64 tensor of @data */
static void
set_parameter (HpModule      *module,
               const gchar   *name,
               const gdouble *data,
               gsize          n_data,
               const gint64  *shape,
               guint          ndim)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) tensor = hp_test_tensor (HP_DTYPE_FLOAT64, data, n_data, shape, ndim);

  g_assert_true (hp_module_register_parameter (module, name, tensor, &error));
  g_assert_no_error (error);
}

/* Writes @config as JSON (pretty and compact), reads both back and
 * checks they equal @config; returns the pretty text */
static gchar *
assert_json_round_trip (HpConfig *config)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *pretty = hp_config_to_json (config, TRUE);
  g_autofree gchar *compact = hp_config_to_json (config, FALSE);
  g_autoptr(HpConfig) back = hp_config_new_from_json (G_OBJECT_TYPE (config), pretty, &error);
  g_autoptr(HpConfig) back_compact = NULL;
  g_autofree gchar *again = NULL;

  g_assert_no_error (error);
  g_assert_true (G_OBJECT_TYPE (back) == G_OBJECT_TYPE (config));
  g_assert_true (hp_config_equal (back, config));
  again = hp_config_to_json (back, TRUE);
  g_assert_cmpstr (again, ==, pretty);
  back_compact = hp_config_new_from_json (G_OBJECT_TYPE (config), compact, &error);
  g_assert_no_error (error);
  g_assert_true (hp_config_equal (back_compact, config));
  return g_steal_pointer (&pretty);
}

/* Mean and standard deviation of the values of @tensor */
static void
moments (HpTensor *tensor,
         gdouble  *mean,
         gdouble  *std)
{
  gsize n;
  g_autofree gdouble *v = values_of (tensor, &n);
  gdouble sum = 0.0, sq = 0.0;

  for (gsize i = 0; i < n; i++)
    sum += v[i];
  *mean = sum / n;
  for (gsize i = 0; i < n; i++)
    sq += (v[i] - *mean) * (v[i] - *mean);
  *std = sqrt (sq / n);
}

static void
assert_same_values (HpTensor *a,
                    HpTensor *b)
{
  hp_test_assert_close (a, b, 0.0, 0.0);
}

static HpTensor *
forward1 (gpointer  module,
          HpTensor *input)
{
  g_autoptr(GError) error = NULL;
  HpTensor *out = hp_module_forward1 (HP_MODULE (module), input, &error);

  g_assert_no_error (error);
  g_assert_nonnull (out);
  return out;
}

static void
backward_sum (HpTensor *out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) total = hp_tensor_sum_all (out, &error);

  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (total, NULL, &error));
  g_assert_no_error (error);
}

/* HpLinear */

static void
test_linear_shapes (void)
{
  g_autoptr(HpLinearConfig) config = hp_linear_config_new (3, 5);
  g_autoptr(HpLinearConfig) with_bias =
    HP_LINEAR_CONFIG (hp_config_replace (HP_CONFIG (config), "bias", TRUE, NULL));
  g_autoptr(HpLinear) linear = build (config, HP_TYPE_LINEAR);
  g_autoptr(HpLinear) biased = build (with_bias, HP_TYPE_LINEAR);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 4, 3), 1, FALSE);
  g_autoptr(HpTensor) y = NULL;
  g_auto(GStrv) names = hp_module_get_parameter_names (HP_MODULE (linear));
  g_auto(GStrv) biased_names = hp_module_get_parameter_names (HP_MODULE (biased));
  HpTensor *weight = hp_module_get_parameter (HP_MODULE (linear), "weight");

  g_assert_cmpint (hp_linear_config_get_in_features (config), ==, 3);
  g_assert_cmpint (hp_linear_config_get_out_features (config), ==, 5);
  g_assert_false (hp_linear_config_get_bias (config));
  g_assert_true (hp_linear_config_get_bias (with_bias));
  g_assert_cmpint (hp_linear_config_get_dtype (config), ==, HP_DTYPE_FLOAT32);
  g_assert_true (hp_config_get_owner_type (HP_CONFIG (config)) == HP_TYPE_LINEAR);

  g_assert_cmpstrv (names, ((const gchar *[]) { "weight", NULL }));
  g_assert_cmpstrv (biased_names, ((const gchar *[]) { "weight", "bias", NULL }));
  hp_test_assert_shape (weight, HP_TEST_SHAPE (5, 3));
  g_assert_cmpint (hp_tensor_get_dtype (weight), ==, HP_DTYPE_FLOAT32);
  g_assert_true (hp_tensor_get_requires_grad (weight));
  hp_test_assert_shape (hp_module_get_parameter (HP_MODULE (biased), "bias"), HP_TEST_SHAPE (5));
  g_assert_cmpstrv ((GStrv) hp_module_get_forward_arg_names (HP_MODULE (linear)),
                    ((const gchar *[]) { "input", NULL }));

  y = forward1 (linear, x);
  hp_test_assert_shape (y, HP_TEST_SHAPE (2, 4, 5));
  g_assert_cmpint (hp_tensor_get_dtype (y), ==, HP_DTYPE_FLOAT32);
}

static void
test_linear_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpLinear) linear = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, -1, 2, 0.5),
                                          HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) y = NULL;

  linear = hp_linear_new (HP_LINEAR_CONFIG (g_object_new (HP_TYPE_LINEAR_CONFIG,
                                                          "in-features", 2, "out-features", 3,
                                                          "bias", TRUE, "dtype", HP_DTYPE_FLOAT64,
                                                          NULL)),
                          &error);
  g_assert_no_error (error);
  set_parameter (HP_MODULE (linear), "weight", HP_TEST_DATA (1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (3, 2));
  set_parameter (HP_MODULE (linear), "bias", HP_TEST_DATA (0.5, -1, 2), HP_TEST_SHAPE (3));

  /* y = x W^T + b */
  y = forward1 (linear, x);
  hp_test_assert_values (y, HP_TEST_DATA (-0.5, -2, 1, 3.5, 7, 15), HP_TEST_SHAPE (2, 3), 0, 1e-15);

  /* d sum(y) / dW[o, i] = sum over rows of x[:, i]; d sum(y) / db = rows */
  backward_sum (y);
  hp_test_assert_values (hp_tensor_get_grad (hp_module_get_parameter (HP_MODULE (linear), "weight")),
                         HP_TEST_DATA (3, -0.5, 3, -0.5, 3, -0.5), HP_TEST_SHAPE (3, 2), 0, 1e-15);
  hp_test_assert_values (hp_tensor_get_grad (hp_module_get_parameter (HP_MODULE (linear), "bias")),
                         HP_TEST_DATA (2, 2, 2), HP_TEST_SHAPE (3), 0, 1e-15);
}

static void
test_linear_json (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParamInit) init = hp_param_init_new_from_string ("weight=normal(std=0.5); bias=ones",
                                                               &error);
  g_autoptr(HpConfig) config = NULL;
  g_autoptr(HpConfig) read = NULL;
  g_autofree gchar *json = NULL;

  g_assert_no_error (error);
  config = g_object_new (HP_TYPE_LINEAR_CONFIG, "in-features", 7, "out-features", 9,
                         "bias", TRUE, "dtype", HP_DTYPE_FLOAT64, "param-init", init, NULL);
  json = assert_json_round_trip (config);
  g_assert_nonnull (strstr (json, "\"in-features\": 7"));
  g_assert_nonnull (strstr (json, "\"dtype\": \"float64\""));

  read = hp_config_new_from_json (HP_TYPE_LINEAR_CONFIG,
                                  "{\"in-features\": 4, \"out-features\": 2}", &error);
  g_assert_no_error (error);
  g_assert_cmpint (hp_linear_config_get_in_features (HP_LINEAR_CONFIG (read)), ==, 4);
  g_assert_false (hp_linear_config_get_bias (HP_LINEAR_CONFIG (read)));
  g_assert_cmpint (hp_linear_config_get_dtype (HP_LINEAR_CONFIG (read)), ==, HP_DTYPE_FLOAT32);
}

static HpLinear *
initialized_linear (gint     in_features,
                    gint     out_features,
                    guint64  seed)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = g_object_new (HP_TYPE_LINEAR_CONFIG,
                                             "in-features", in_features,
                                             "out-features", out_features,
                                             "bias", TRUE, "dtype", HP_DTYPE_FLOAT64, NULL);
  HpLinear *linear = build (config, HP_TYPE_LINEAR);

  g_assert_true (hp_module_init_states (HP_MODULE (linear), seed, &error));
  g_assert_no_error (error);
  return linear;
}

static void
test_linear_init (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpLinear) a = initialized_linear (64, 96, 11);
  g_autoptr(HpLinear) b = initialized_linear (64, 96, 11);
  g_autoptr(HpLinear) c = initialized_linear (64, 96, 12);
  g_autoptr(HpTensor) expected = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (96, 64));
  g_autoptr(HpTensor) zeros = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (96));
  g_autoptr(HpInitializer) trunc = hp_initializer_new_trunc_normal (0.0, 0.02, -2.0, 2.0);
  g_autoptr(HpParamInit) init = NULL;
  g_autoptr(HpConfig) config = NULL;
  g_autoptr(HpLinear) d = NULL;
  HpTensor *weight = hp_module_get_parameter (HP_MODULE (a), "weight");
  gdouble mean, std;

  /* same seed, same values; another seed, other values */
  assert_same_values (weight, hp_module_get_parameter (HP_MODULE (b), "weight"));
  g_assert_false (hp_tensor_allclose (weight, hp_module_get_parameter (HP_MODULE (c), "weight"),
                                      0.0, 0.0));

  /* trunc_normal (0, 0.02) from the seed a param_init entry would use */
  g_assert_true (hp_initializer_apply (trunc, expected, hp_module_derive_seed (11, "weight"), &error));
  g_assert_no_error (error);
  assert_same_values (weight, expected);
  moments (weight, &mean, &std);
  g_assert_cmpfloat (fabs (mean), <, 0.002);
  g_assert_cmpfloat (fabs (std - 0.02), <, 0.001);
  assert_same_values (hp_module_get_parameter (HP_MODULE (a), "bias"), zeros);

  /* a param_init entry takes over */
  init = hp_param_init_new_from_string ("weight=ones; bias=constant(value=0.5)", &error);
  g_assert_no_error (error);
  config = g_object_new (HP_TYPE_LINEAR_CONFIG, "in-features", 2, "out-features", 2,
                         "bias", TRUE, "param-init", init, NULL);
  d = build (config, HP_TYPE_LINEAR);
  g_assert_true (hp_module_init_states (HP_MODULE (d), 11, &error));
  g_assert_no_error (error);
  hp_test_assert_values (hp_module_get_parameter (HP_MODULE (d), "weight"),
                         HP_TEST_DATA (1, 1, 1, 1), HP_TEST_SHAPE (2, 2), 0, 0);
  hp_test_assert_values (hp_module_get_parameter (HP_MODULE (d), "bias"),
                         HP_TEST_DATA (0.5, 0.5), HP_TEST_SHAPE (2), 0, 0);
}

static void
test_linear_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) int_config = g_object_new (HP_TYPE_LINEAR_CONFIG, "dtype", HP_DTYPE_INT64, NULL);
  g_autoptr(HpLinearConfig) config = hp_linear_config_new (3, 2);
  g_autoptr(HpLinear) linear = build (config, HP_TYPE_LINEAR);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 4), 1, FALSE);
  g_autoptr(GPtrArray) two = g_ptr_array_new ();
  gpointer result;

  hp_test_assert_error (hp_config_build (int_config, &error), &error, HP_ERROR_CONFIG,
                        "HpLinearConfig.dtype: int64 is not a floating-point type");
  hp_test_assert_error (hp_linear_new (HP_LINEAR_CONFIG (int_config), &error), &error,
                        HP_ERROR_CONFIG, "int64");
  hp_test_assert_error (hp_config_new_from_json (HP_TYPE_LINEAR_CONFIG, "{\"in-features\": 0}", &error),
                        &error, HP_ERROR_CONFIG, "in-features");
  hp_test_assert_error (hp_config_new_from_json (HP_TYPE_LINEAR_CONFIG, "{\"bias\": 1}", &error),
                        &error, HP_ERROR_CONFIG, "bias");
  hp_test_assert_error (hp_config_new_from_json (HP_TYPE_LINEAR_CONFIG, "{\"dtype\": \"float16\"}",
                                                 &error),
                        &error, HP_ERROR_CONFIG, "dtype");
  hp_test_assert_error (hp_config_new_from_json (HP_TYPE_LINEAR_CONFIG, "{\"in_dim\": 3}", &error),
                        &error, HP_ERROR_CONFIG, "in_dim");

  /* in-features 3, input [2, 4] */
  result = hp_module_forward1 (HP_MODULE (linear), x, &error);
  hp_test_assert_error (result, &error, HP_ERROR_SHAPE, "");

  g_ptr_array_add (two, x);
  g_ptr_array_add (two, x);
  hp_test_assert_error (hp_module_forward (HP_MODULE (linear), two, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpLinear.forward takes one tensor 'input', got 2 arguments");
}

int
main (int    argc,
      char **argv)
{
  hp_test_init (&argc, &argv);

  g_test_add_func ("/nn/linear/shapes", test_linear_shapes);
  g_test_add_func ("/nn/linear/values", test_linear_values);
  g_test_add_func ("/nn/linear/json", test_linear_json);
  g_test_add_func ("/nn/linear/init", test_linear_init);
  g_test_add_func ("/nn/linear/errors", test_linear_errors);

  return g_test_run ();
}
