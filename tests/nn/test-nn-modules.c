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
  HpTensor *out = hp_module_call1 (HP_MODULE (module), input, &error);

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
  g_autoptr(HpConfig) config = NULL;
  g_autoptr(HpLinear) linear = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, -1, 2, 0.5),
                                          HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) y = NULL;

  config = g_object_new (HP_TYPE_LINEAR_CONFIG, "in-features", 2, "out-features", 3, "bias", TRUE,
                         "dtype", HP_DTYPE_FLOAT64, NULL);
  linear = hp_linear_new (HP_LINEAR_CONFIG (config), &error);
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
  result = hp_module_call1 (HP_MODULE (linear), x, &error);
  hp_test_assert_error (result, &error, HP_ERROR_SHAPE, "");

  g_ptr_array_add (two, x);
  g_ptr_array_add (two, x);
  hp_test_assert_error (hp_module_call (HP_MODULE (linear), two, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpLinear.forward takes one tensor 'input', got 2 arguments");
}

/* HpEmbedding */

static void
test_embedding_shapes_and_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpEmbeddingConfig) config = hp_embedding_config_new (3, 2);
  g_autoptr(HpConfig) f64 = NULL;
  g_autoptr(HpEmbedding) embedding = NULL;
  g_autoptr(HpEmbedding) single = build (config, HP_TYPE_EMBEDDING);
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 2, 0, 1, 2 }, 4,
                                                HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) out = NULL;
  g_auto(GStrv) names = hp_module_get_parameter_names (HP_MODULE (single));

  g_assert_cmpint (hp_embedding_config_get_num_embeddings (config), ==, 3);
  g_assert_cmpint (hp_embedding_config_get_embedding_dim (config), ==, 2);
  g_assert_cmpint (hp_embedding_config_get_dtype (config), ==, HP_DTYPE_FLOAT32);
  g_assert_cmpstrv (names, ((const gchar *[]) { "weight", NULL }));
  hp_test_assert_shape (hp_module_get_parameter (HP_MODULE (single), "weight"), HP_TEST_SHAPE (3, 2));
  g_assert_cmpint (hp_tensor_get_dtype (hp_module_get_parameter (HP_MODULE (single), "weight")), ==,
                   HP_DTYPE_FLOAT32);
  g_assert_cmpstrv ((GStrv) hp_module_get_forward_arg_names (HP_MODULE (single)),
                    ((const gchar *[]) { "ids", NULL }));

  f64 = hp_config_replace (HP_CONFIG (config), "dtype", HP_DTYPE_FLOAT64, NULL);
  embedding = hp_embedding_new (HP_EMBEDDING_CONFIG (f64), &error);
  g_assert_no_error (error);
  set_parameter (HP_MODULE (embedding), "weight", HP_TEST_DATA (1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (3, 2));
  out = forward1 (embedding, ids);
  hp_test_assert_values (out, HP_TEST_DATA (5, 6, 1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (2, 2, 2), 0, 0);

  /* each row's gradient counts its lookups */
  backward_sum (out);
  hp_test_assert_values (hp_tensor_get_grad (hp_module_get_parameter (HP_MODULE (embedding), "weight")),
                         HP_TEST_DATA (1, 1, 1, 1, 2, 2), HP_TEST_SHAPE (3, 2), 0, 0);
}

static void
test_embedding_json (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParamInit) init = hp_param_init_new_from_string ("weight=uniform(a=-1, b=1)", &error);
  g_autoptr(HpConfig) config = NULL;
  g_autofree gchar *json = NULL;

  g_assert_no_error (error);
  config = g_object_new (HP_TYPE_EMBEDDING_CONFIG, "num-embeddings", 11, "embedding-dim", 4,
                         "dtype", HP_DTYPE_FLOAT64, "param-init", init, NULL);
  json = assert_json_round_trip (config);
  g_assert_nonnull (strstr (json, "\"num-embeddings\": 11"));
  g_assert_nonnull (strstr (json, "\"embedding-dim\": 4"));
}

static void
test_embedding_init (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = g_object_new (HP_TYPE_EMBEDDING_CONFIG, "num-embeddings", 200,
                                             "embedding-dim", 50, "dtype", HP_DTYPE_FLOAT64, NULL);
  g_autoptr(HpEmbedding) a = build (config, HP_TYPE_EMBEDDING);
  g_autoptr(HpEmbedding) b = build (config, HP_TYPE_EMBEDDING);
  g_autoptr(HpTensor) expected = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (200, 50));
  g_autoptr(HpInitializer) normal = hp_initializer_new_normal (0.0, 1.0);
  HpTensor *weight = hp_module_get_parameter (HP_MODULE (a), "weight");
  gdouble mean, std;

  g_assert_true (hp_module_init_states (HP_MODULE (a), 5, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_init_states (HP_MODULE (b), 5, &error));
  g_assert_no_error (error);
  assert_same_values (weight, hp_module_get_parameter (HP_MODULE (b), "weight"));

  /* normal (0, 1) from the seed of a param_init entry */
  g_assert_true (hp_initializer_apply (normal, expected, hp_module_derive_seed (5, "weight"), &error));
  g_assert_no_error (error);
  assert_same_values (weight, expected);
  moments (weight, &mean, &std);
  g_assert_cmpfloat (fabs (mean), <, 0.05);
  g_assert_cmpfloat (fabs (std - 1.0), <, 0.03);
}

static void
test_embedding_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) int_config = g_object_new (HP_TYPE_EMBEDDING_CONFIG, "dtype", HP_DTYPE_INT64, NULL);
  g_autoptr(HpEmbeddingConfig) config = hp_embedding_config_new (3, 2);
  g_autoptr(HpEmbedding) embedding = build (config, HP_TYPE_EMBEDDING);
  g_autoptr(HpTensor) float_ids = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (0, 1), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) far_ids = hp_test_tensor_ids ((const gint64[]) { 0, 3 }, 2, HP_TEST_SHAPE (2));

  hp_test_assert_error (hp_config_build (int_config, &error), &error, HP_ERROR_CONFIG,
                        "HpEmbeddingConfig.dtype: int64 is not a floating-point type");
  hp_test_assert_error (hp_embedding_new (HP_EMBEDDING_CONFIG (int_config), &error), &error,
                        HP_ERROR_CONFIG, "int64");
  hp_test_assert_error (hp_config_new_from_json (HP_TYPE_EMBEDDING_CONFIG, "{\"num-embeddings\": 0}",
                                                 &error),
                        &error, HP_ERROR_CONFIG, "num-embeddings");
  hp_test_assert_error (hp_config_new_from_json (HP_TYPE_EMBEDDING_CONFIG, "{\"embedding-dim\": \"4\"}",
                                                 &error),
                        &error, HP_ERROR_CONFIG, "embedding-dim");
  hp_test_assert_error (hp_module_call1 (HP_MODULE (embedding), float_ids, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "int64");
  hp_test_assert_error (hp_module_call1 (HP_MODULE (embedding), far_ids, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "3");
}

/* HpRMSNorm */

static void
test_rms_norm_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpRMSNormConfig) config = hp_rms_norm_config_new (2);
  g_autoptr(HpRMSNorm) single = build (config, HP_TYPE_RMS_NORM);
  g_autoptr(HpConfig) exact_config = NULL;
  g_autoptr(HpConfig) eps_config = NULL;
  g_autoptr(HpRMSNorm) exact = NULL;
  g_autoptr(HpRMSNorm) with_eps = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (3, 4, 1, -1), HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) y_eps = NULL;
  g_auto(GStrv) names = hp_module_get_parameter_names (HP_MODULE (single));
  gdouble r1 = sqrt (12.5), r1_eps = sqrt (12.5 + 0.25), r2_eps = sqrt (1.25);

  g_assert_cmpint (hp_rms_norm_config_get_dim (config), ==, 2);
  g_assert_cmpfloat (hp_rms_norm_config_get_eps (config), ==, 1e-6);
  g_assert_cmpint (hp_rms_norm_config_get_dtype (config), ==, HP_DTYPE_FLOAT32);
  g_assert_cmpstrv (names, ((const gchar *[]) { "weight", NULL }));
  hp_test_assert_values (hp_module_get_parameter (HP_MODULE (single), "weight"), HP_TEST_DATA (1, 1),
                         HP_TEST_SHAPE (2), 0, 0);
  g_assert_cmpstrv ((GStrv) hp_module_get_forward_arg_names (HP_MODULE (single)),
                    ((const gchar *[]) { "input", NULL }));

  /* y = x / sqrt (mean (x^2) + eps) * w */
  exact_config = g_object_new (HP_TYPE_RMS_NORM_CONFIG, "dim", 2, "eps", 0.0, "dtype", HP_DTYPE_FLOAT64, NULL);
  exact = hp_rms_norm_new (HP_RMS_NORM_CONFIG (exact_config), &error);
  g_assert_no_error (error);
  set_parameter (HP_MODULE (exact), "weight", HP_TEST_DATA (2, 0.5), HP_TEST_SHAPE (2));
  y = forward1 (exact, x);
  hp_test_assert_values (y, HP_TEST_DATA (6 / r1, 2 / r1, 2, -0.5), HP_TEST_SHAPE (2, 2), 1e-14, 0);

  eps_config = g_object_new (HP_TYPE_RMS_NORM_CONFIG, "dim", 2, "eps", 0.25, "dtype", HP_DTYPE_FLOAT64, NULL);
  with_eps = hp_rms_norm_new (HP_RMS_NORM_CONFIG (eps_config), &error);
  g_assert_no_error (error);
  y_eps = forward1 (with_eps, x);
  hp_test_assert_values (y_eps, HP_TEST_DATA (3 / r1_eps, 4 / r1_eps, 1 / r2_eps, -1 / r2_eps),
                         HP_TEST_SHAPE (2, 2), 1e-14, 0);

  /* d sum(y) / dw = sum over rows of x / rms */
  backward_sum (y);
  hp_test_assert_values (hp_tensor_get_grad (hp_module_get_parameter (HP_MODULE (exact), "weight")),
                         HP_TEST_DATA (3 / r1 + 1, 4 / r1 - 1), HP_TEST_SHAPE (2), 1e-14, 0);
}

static void
test_rms_norm_json_and_init (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParamInit) init = hp_param_init_new_from_string ("weight=constant(value=3)", &error);
  g_autoptr(HpConfig) config = NULL;
  g_autoptr(HpConfig) plain = g_object_new (HP_TYPE_RMS_NORM_CONFIG, "dim", 3, "dtype", HP_DTYPE_FLOAT64,
                                            NULL);
  g_autoptr(HpRMSNorm) norm = NULL;
  g_autoptr(HpRMSNorm) ones = build (plain, HP_TYPE_RMS_NORM);
  g_autofree gchar *json = NULL;

  g_assert_no_error (error);
  config = g_object_new (HP_TYPE_RMS_NORM_CONFIG, "dim", 3, "eps", 1e-5, "dtype", HP_DTYPE_FLOAT64,
                         "param-init", init, NULL);
  json = assert_json_round_trip (config);
  g_assert_nonnull (strstr (json, "\"eps\": 1"));

  /* reset_parameters sets ones, a param_init entry anything */
  set_parameter (HP_MODULE (ones), "weight", HP_TEST_DATA (7, 7, 7), HP_TEST_SHAPE (3));
  g_assert_true (hp_module_init_states (HP_MODULE (ones), 1, &error));
  g_assert_no_error (error);
  hp_test_assert_values (hp_module_get_parameter (HP_MODULE (ones), "weight"), HP_TEST_DATA (1, 1, 1),
                         HP_TEST_SHAPE (3), 0, 0);
  norm = build (config, HP_TYPE_RMS_NORM);
  g_assert_true (hp_module_init_states (HP_MODULE (norm), 1, &error));
  g_assert_no_error (error);
  hp_test_assert_values (hp_module_get_parameter (HP_MODULE (norm), "weight"), HP_TEST_DATA (3, 3, 3),
                         HP_TEST_SHAPE (3), 0, 0);
}

static void
test_rms_norm_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) int_config = g_object_new (HP_TYPE_RMS_NORM_CONFIG, "dtype", HP_DTYPE_INT64, NULL);
  g_autoptr(HpRMSNormConfig) config = hp_rms_norm_config_new (4);
  g_autoptr(HpRMSNorm) norm = build (config, HP_TYPE_RMS_NORM);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3), 1, FALSE);
  g_autoptr(HpTensor) x64 = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4), 1, FALSE);

  hp_test_assert_error (hp_config_build (int_config, &error), &error, HP_ERROR_CONFIG,
                        "HpRMSNormConfig.dtype: int64 is not a floating-point type");
  hp_test_assert_error (hp_rms_norm_new (HP_RMS_NORM_CONFIG (int_config), &error), &error,
                        HP_ERROR_CONFIG, "int64");
  g_assert_false (hp_config_set_path_from_string (HP_CONFIG (config), "eps", "-inf", &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_clear_error (&error);
  hp_test_assert_error (hp_config_new_from_json (HP_TYPE_RMS_NORM_CONFIG, "{\"eps\": -1}", &error),
                        &error, HP_ERROR_CONFIG, "eps");
  hp_test_assert_error (hp_config_new_from_json (HP_TYPE_RMS_NORM_CONFIG, "{\"dim\": 0}", &error),
                        &error, HP_ERROR_CONFIG, "dim");
  hp_test_assert_error (hp_module_call1 (HP_MODULE (norm), x, &error), &error, HP_ERROR_SHAPE, "");
  /* float32 weight, float64 input */
  hp_test_assert_error (hp_module_call1 (HP_MODULE (norm), x64, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "");
}

/* HpFeedForward */

static void
assert_linear_config (HpLinearConfig *config,
                      gint            in_features,
                      gint            out_features,
                      HpDType         dtype)
{
  g_assert_nonnull (config);
  g_assert_cmpint (hp_linear_config_get_in_features (config), ==, in_features);
  g_assert_cmpint (hp_linear_config_get_out_features (config), ==, out_features);
  g_assert_false (hp_linear_config_get_bias (config));
  g_assert_cmpint (hp_linear_config_get_dtype (config), ==, dtype);
}

static void
test_ffn_config (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpFeedForwardConfig) config = hp_feed_forward_config_new (4, 6);
  g_autoptr(HpConfig) f64 = NULL;
  g_autoptr(HpLinearConfig) given = hp_linear_config_new (4, 6);
  g_autoptr(HpConfig) with_given = NULL;
  g_autoptr(HpConfig) from_json = NULL;
  g_autofree gchar *path_value = NULL;
  HpLinearConfig *old_w1;

  g_assert_cmpint (hp_feed_forward_config_get_dim (config), ==, 4);
  g_assert_cmpint (hp_feed_forward_config_get_hidden_dim (config), ==, 6);
  g_assert_cmpint (hp_feed_forward_config_get_dtype (config), ==, HP_DTYPE_FLOAT32);
  assert_linear_config (hp_feed_forward_config_get_w1 (config), 4, 6, HP_DTYPE_FLOAT32);
  assert_linear_config (hp_feed_forward_config_get_w2 (config), 6, 4, HP_DTYPE_FLOAT32);
  assert_linear_config (hp_feed_forward_config_get_w3 (config), 4, 6, HP_DTYPE_FLOAT32);

  /* no field given: the layers of the default dims */
  {
    g_autoptr(HpConfig) plain = g_object_new (HP_TYPE_FEED_FORWARD_CONFIG, NULL);

    assert_linear_config (hp_feed_forward_config_get_w2 (HP_FEED_FORWARD_CONFIG (plain)), 1, 1, HP_DTYPE_FLOAT32);
  }

  f64 = g_object_new (HP_TYPE_FEED_FORWARD_CONFIG, "dim", 2, "hidden-dim", 5, "dtype", HP_DTYPE_FLOAT64, NULL);
  assert_linear_config (hp_feed_forward_config_get_w2 (HP_FEED_FORWARD_CONFIG (f64)), 5, 2, HP_DTYPE_FLOAT64);

  /* a given layer is kept, the missing ones derived */
  with_given = g_object_new (HP_TYPE_FEED_FORWARD_CONFIG, "dim", 4, "hidden-dim", 6, "w3", given, NULL);
  g_assert_true (hp_feed_forward_config_get_w3 (HP_FEED_FORWARD_CONFIG (with_given)) == given);
  assert_linear_config (hp_feed_forward_config_get_w1 (HP_FEED_FORWARD_CONFIG (with_given)), 4, 6,
                        HP_DTYPE_FLOAT32);

  /* NULL later derives again, from the current dims */
  old_w1 = hp_feed_forward_config_get_w1 (config);
  g_object_set (config, "dim", 3, NULL);
  g_assert_true (hp_feed_forward_config_get_w1 (config) == old_w1);
  g_object_set (config, "w1", NULL, NULL);
  assert_linear_config (hp_feed_forward_config_get_w1 (config), 3, 6, HP_DTYPE_FLOAT32);
  g_object_set (config, "dim", 4, "w1", NULL, NULL);

  /* paths reach the layers */
  path_value = hp_config_get_path_as_string (HP_CONFIG (config), "w2.in-features", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (path_value, ==, "6");
  g_assert_true (hp_config_set_path_from_string (HP_CONFIG (config), "w2.param-init",
                                                 "weight=normal(std=0.01)", &error));
  g_assert_no_error (error);
  g_assert_nonnull (hp_module_config_get_param_init (HP_MODULE_CONFIG (hp_feed_forward_config_get_w2 (config))));

  /* a null layer in JSON is derived */
  from_json = hp_config_new_from_json (HP_TYPE_FEED_FORWARD_CONFIG,
                                       "{\"dim\": 3, \"hidden-dim\": 8, \"w1\": null}", &error);
  g_assert_no_error (error);
  assert_linear_config (hp_feed_forward_config_get_w1 (HP_FEED_FORWARD_CONFIG (from_json)), 3, 8,
                        HP_DTYPE_FLOAT32);
}

static void
collect_fqn (const gchar *fqn,
             HpConfig    *config,
             HpConfig    *parent,
             const gchar *attribute,
             gint         index,
             gpointer     user_data)
{
  g_ptr_array_add (user_data, g_strdup_printf ("%s:%s", fqn, G_OBJECT_TYPE_NAME (config)));
}

static void
test_ffn_traverse_and_json (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpFeedForwardConfig) config = hp_feed_forward_config_new (4, 6);
  g_autoptr(GPtrArray) visited = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) linears = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(HpParamInit) init = hp_param_init_new_from_string ("weight=depth_scaled_normal(std=0.02, depth=3)",
                                                               &error);
  g_autoptr(HpConfig) w2 = NULL;
  g_autoptr(HpConfig) read = NULL;
  g_autofree gchar *json = NULL;

  g_assert_no_error (error);
  hp_config_traverse (HP_CONFIG (config), HP_TYPE_CONFIG, TRUE, collect_fqn, visited);
  g_ptr_array_add (visited, NULL);
  g_assert_cmpstrv ((GStrv) visited->pdata,
                    ((const gchar *[]) { ":HpFeedForwardConfig", "w1:HpLinearConfig",
                                         "w2:HpLinearConfig", "w3:HpLinearConfig", NULL }));
  hp_config_traverse (HP_CONFIG (config), HP_TYPE_LINEAR_CONFIG, FALSE, collect_fqn, linears);
  g_assert_cmpuint (linears->len, ==, 3);

  /* nested layers with their own param_init and the TP layout round-trip */
  w2 = hp_config_replace (HP_CONFIG (hp_feed_forward_config_get_w2 (config)), "param-init", init, NULL);
  g_object_set (config, "w2", w2, "dtype", HP_DTYPE_FLOAT64, NULL);
  hp_set_dense_ffn_sharding (config, TRUE);
  json = assert_json_round_trip (HP_CONFIG (config));
  g_assert_nonnull (strstr (json, "\"w2\": {"));
  g_assert_nonnull (strstr (json, "\"@type\": \"HpLinearConfig\""));
  g_assert_nonnull (strstr (json, "depth_scaled_normal"));

  /* a layer of another type is refused */
  read = hp_config_new_from_json (HP_TYPE_FEED_FORWARD_CONFIG,
                                  "{\"w1\": {\"@type\": \"HpRMSNormConfig\"}}", &error);
  hp_test_assert_error (read, &error, HP_ERROR_CONFIG, "w1");
}

/* silu (v) = v / (1 + exp (-v)) */
static gdouble
silu (gdouble v)
{
  return v / (1.0 + exp (-v));
}

static void
test_ffn_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = g_object_new (HP_TYPE_FEED_FORWARD_CONFIG, "dim", 2, "hidden-dim", 3,
                                             "dtype", HP_DTYPE_FLOAT64, NULL);
  g_autoptr(HpFeedForward) ffn = hp_feed_forward_new (HP_FEED_FORWARD_CONFIG (config), &error);
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0.5, -1, 2, 0.25),
                                          HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) y = NULL;
  g_auto(GStrv) children = NULL;
  g_auto(GStrv) params = NULL;
  const gdouble w1[6] = { 1, 0, 0, 1, 1, 1 };
  const gdouble w3[6] = { 0.5, -0.5, 2, 0, -1, 1 };
  const gdouble w2[6] = { 1, 2, -1, 0.5, 0, 3 };
  const gdouble xs[4] = { 0.5, -1, 2, 0.25 };
  gdouble expected[4];

  g_assert_no_error (error);
  children = hp_module_get_child_names (HP_MODULE (ffn));
  g_assert_cmpstrv (children, ((const gchar *[]) { "w1", "w2", "w3", NULL }));
  params = hp_module_get_parameter_names (HP_MODULE (ffn));
  g_assert_cmpstrv (params, ((const gchar *[]) { NULL }));
  g_assert_true (HP_IS_LINEAR (hp_module_get_child (HP_MODULE (ffn), "w2")));
  hp_test_assert_shape (hp_module_get_parameter (HP_MODULE (ffn), "w2.weight"), HP_TEST_SHAPE (2, 3));
  hp_test_assert_shape (hp_module_get_parameter (HP_MODULE (ffn), "w3.weight"), HP_TEST_SHAPE (3, 2));
  g_assert_null (hp_module_get_parameter (HP_MODULE (ffn), "w1.bias"));

  set_parameter (hp_module_get_child (HP_MODULE (ffn), "w1"), "weight", w1, 6, HP_TEST_SHAPE (3, 2));
  set_parameter (hp_module_get_child (HP_MODULE (ffn), "w3"), "weight", w3, 6, HP_TEST_SHAPE (3, 2));
  set_parameter (hp_module_get_child (HP_MODULE (ffn), "w2"), "weight", w2, 6, HP_TEST_SHAPE (2, 3));

  /* out = w2 (silu (w1 x) * w3 x), written out */
  for (gint r = 0; r < 2; r++)
    for (gint o = 0; o < 2; o++)
      {
        gdouble sum = 0.0;

        for (gint h = 0; h < 3; h++)
          {
            gdouble a = w1[h * 2] * xs[r * 2] + w1[h * 2 + 1] * xs[r * 2 + 1];
            gdouble b = w3[h * 2] * xs[r * 2] + w3[h * 2 + 1] * xs[r * 2 + 1];

            sum += w2[o * 3 + h] * silu (a) * b;
          }
        expected[r * 2 + o] = sum;
      }
  y = forward1 (ffn, x);
  hp_test_assert_values (y, expected, 4, HP_TEST_SHAPE (2, 2), 1e-14, 1e-15);
}

static void
test_ffn_init (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = g_object_new (HP_TYPE_FEED_FORWARD_CONFIG, "dim", 8, "hidden-dim", 12,
                                             "dtype", HP_DTYPE_FLOAT64, NULL);
  g_autoptr(HpFeedForward) a = build (config, HP_TYPE_FEED_FORWARD);
  g_autoptr(HpFeedForward) b = build (config, HP_TYPE_FEED_FORWARD);
  g_autoptr(HpTensor) expected = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (12, 8));
  g_autoptr(HpInitializer) trunc = hp_initializer_new_trunc_normal (0.0, 0.02, -2.0, 2.0);

  g_assert_true (hp_module_init_states (HP_MODULE (a), 21, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_init_states (HP_MODULE (b), 21, &error));
  g_assert_no_error (error);
  assert_same_values (hp_module_get_parameter (HP_MODULE (a), "w3.weight"),
                      hp_module_get_parameter (HP_MODULE (b), "w3.weight"));
  g_assert_false (hp_tensor_allclose (hp_module_get_parameter (HP_MODULE (a), "w1.weight"),
                                      hp_module_get_parameter (HP_MODULE (a), "w3.weight"), 0.0, 0.0));

  /* each layer draws from the seed derived from its name */
  g_assert_true (hp_initializer_apply (trunc, expected,
                                       hp_module_derive_seed (hp_module_derive_seed (21, "w3"), "weight"),
                                       &error));
  g_assert_no_error (error);
  assert_same_values (hp_module_get_parameter (HP_MODULE (a), "w3.weight"), expected);
}

static void
test_ffn_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpFeedForwardConfig) config = hp_feed_forward_config_new (4, 6);
  g_autoptr(HpConfig) resized = hp_config_replace (HP_CONFIG (config), "dim", 5, NULL);
  g_autoptr(HpConfig) rederived = hp_config_replace (HP_CONFIG (config), "dim", 5, "w1", NULL, "w2", NULL,
                                                     "w3", NULL, NULL);
  g_autoptr(HpConfig) int_config = g_object_new (HP_TYPE_FEED_FORWARD_CONFIG, "dtype", HP_DTYPE_INT64, NULL);
  g_autoptr(HpConfig) f64_layer = g_object_new (HP_TYPE_LINEAR_CONFIG, "in-features", 6, "out-features", 4,
                                                "dtype", HP_DTYPE_FLOAT64, NULL);
  g_autoptr(HpConfig) int_layer = g_object_new (HP_TYPE_LINEAR_CONFIG, "in-features", 4, "out-features", 6,
                                                "dtype", HP_DTYPE_INT64, NULL);
  g_autoptr(HpConfig) wide_layer = g_object_new (HP_TYPE_LINEAR_CONFIG, "in-features", 4, "out-features", 7,
                                                 NULL);
  g_autoptr(HpConfig) mixed = hp_config_replace (HP_CONFIG (config), "w2", f64_layer, NULL);
  g_autoptr(HpConfig) bad_layer = hp_config_replace (HP_CONFIG (config), "w3", int_layer, NULL);
  g_autoptr(HpConfig) wide = hp_config_replace (HP_CONFIG (config), "w1", wide_layer, NULL);
  g_autoptr(HpFeedForward) ok = NULL;
  g_autoptr(HpFeedForward) ffn = build (config, HP_TYPE_FEED_FORWARD);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 5), 1, FALSE);

  hp_test_assert_error (hp_config_build (resized, &error), &error, HP_ERROR_CONFIG,
                        "HpFeedForwardConfig.w1: in-features 4 does not match dim 5");
  hp_test_assert_error (GINT_TO_POINTER (hp_config_validate (resized, &error)), &error, HP_ERROR_CONFIG,
                        "HpFeedForwardConfig.w1: in-features 4 does not match dim 5");
  ok = hp_feed_forward_new (HP_FEED_FORWARD_CONFIG (rederived), &error);
  g_assert_no_error (error);
  hp_test_assert_shape (hp_module_get_parameter (HP_MODULE (ok), "w2.weight"), HP_TEST_SHAPE (5, 6));

  hp_test_assert_error (hp_config_build (int_config, &error), &error, HP_ERROR_CONFIG,
                        "HpFeedForwardConfig.dtype: int64 is not a floating-point type");
  hp_test_assert_error (hp_config_build (mixed, &error), &error, HP_ERROR_CONFIG,
                        "HpFeedForwardConfig.w2: dtype float64 does not match dtype float32");
  {
    g_autofree gchar *before = hp_config_to_json (bad_layer, FALSE);
    g_autofree gchar *after = NULL;

    hp_test_assert_error (hp_feed_forward_new (HP_FEED_FORWARD_CONFIG (bad_layer), &error), &error,
                          HP_ERROR_CONFIG,
                          "HpFeedForwardConfig.w3: HpLinearConfig.dtype: int64 is not a floating-point type");
    hp_test_assert_error (GINT_TO_POINTER (hp_config_validate (bad_layer, &error)), &error, HP_ERROR_CONFIG,
                          "HpFeedForwardConfig.w3: HpLinearConfig.dtype: int64 is not a floating-point type");
    /* the configuration is as it was */
    after = hp_config_to_json (bad_layer, FALSE);
    g_assert_cmpstr (after, ==, before);
  }
  hp_test_assert_error (hp_config_build (wide, &error), &error, HP_ERROR_CONFIG,
                        "HpFeedForwardConfig.w1: out-features 7 does not match hidden-dim 6");
  hp_test_assert_error (hp_config_new_from_json (HP_TYPE_FEED_FORWARD_CONFIG, "{\"hidden-dim\": -2}", &error),
                        &error, HP_ERROR_CONFIG, "hidden-dim");

  /* dim 4, input [2, 5] */
  hp_test_assert_error (hp_module_call1 (HP_MODULE (ffn), x, &error), &error, HP_ERROR_SHAPE, "");
}

/* The tensor-parallel styles */

static void
assert_sharding (HpShardingConfig *config,
                 const gchar      *expected)
{
  g_autofree gchar *text = hp_sharding_config_to_string (config);

  g_assert_cmpstr (text, ==, expected);
}

static void
test_styles (void)
{
  g_autoptr(HpShardingConfig) colwise = hp_sharding_colwise ();
  g_autoptr(HpShardingConfig) colwise_bias = hp_sharding_colwise_with_bias ();
  g_autoptr(HpShardingConfig) rowwise = hp_sharding_rowwise (FALSE);
  g_autoptr(HpShardingConfig) rowwise_sp = hp_sharding_rowwise (TRUE);
  g_autoptr(HpShardingConfig) rowwise_bias = hp_sharding_rowwise_with_bias (FALSE);
  g_autoptr(HpShardingConfig) norm = hp_sharding_norm (FALSE);
  g_autoptr(HpShardingConfig) norm_sp = hp_sharding_norm (TRUE);
  g_autoptr(HpShardingConfig) embedding = hp_sharding_embedding (FALSE);
  g_autoptr(HpShardingConfig) embedding_sp = hp_sharding_embedding (TRUE);

  assert_sharding (colwise, "ShardingConfig(state={weight: tp:S(0)}, in_src={input: tp:R}, "
                   "in_dst={input: tp:R}, out_src=[], out_dst=[tp:S(-1)], local_map=None)");
  assert_sharding (colwise_bias, "ShardingConfig(state={weight: tp:S(0), bias: tp:S(0)}, "
                   "in_src={input: tp:R}, in_dst={input: tp:R}, out_src=[], out_dst=[tp:S(-1)], "
                   "local_map=None)");
  assert_sharding (rowwise, "ShardingConfig(state={weight: tp:S(1)}, in_src={}, "
                   "in_dst={input: tp:S(-1)}, out_src=[], out_dst=[tp:R], local_map=None)");
  assert_sharding (rowwise_sp, "ShardingConfig(state={weight: tp:S(1)}, in_src={}, "
                   "in_dst={input: tp:S(-1)}, out_src=[], out_dst=[tp:S(1)], local_map=None)");
  assert_sharding (rowwise_bias, "ShardingConfig(state={weight: tp:S(1), bias: tp:R}, in_src={}, "
                   "in_dst={input: tp:S(-1)}, out_src=[], out_dst=[tp:R], local_map=None)");
  assert_sharding (norm, "ShardingConfig(state={weight: tp:R}, in_src={input: tp:R}, "
                   "in_dst={input: tp:R}, out_src=[], out_dst=[], local_map=None)");
  assert_sharding (norm_sp, "ShardingConfig(state={weight: tp:R}, in_src={input: tp:S(1)}, "
                   "in_dst={input: tp:S(1)}, out_src=[], out_dst=[tp:S(1)], local_map=None)");
  assert_sharding (embedding, "ShardingConfig(state={weight: tp:S(0)}, in_src={ids: tp:R}, "
                   "in_dst={ids: tp:R}, out_src=[], out_dst=[tp:R], local_map=None)");
  assert_sharding (embedding_sp, "ShardingConfig(state={weight: tp:S(0)}, in_src={ids: tp:R}, "
                   "in_dst={ids: tp:R}, out_src=[], out_dst=[tp:S(1)], local_map=None)");
}

static void
count_notify (GObject    *object,
              GParamSpec *pspec,
              guint      *count)
{
  (*count)++;
}

static void
test_dense_ffn_sharding (void)
{
  g_autoptr(HpFeedForwardConfig) config = hp_feed_forward_config_new (4, 6);
  g_autoptr(HpConfig) copy = hp_config_copy (HP_CONFIG (config));
  g_autoptr(HpConfig) biased = g_object_new (HP_TYPE_LINEAR_CONFIG, "in-features", 6, "out-features", 4,
                                             "bias", TRUE, NULL);
  HpLinearConfig *old_w1 = hp_feed_forward_config_get_w1 (config);
  guint notified = 0;

  g_signal_connect (config, "notify", G_CALLBACK (count_notify), &notified);
  hp_set_dense_ffn_sharding (config, TRUE);
  g_assert_cmpuint (notified, ==, 4);
  assert_sharding (hp_module_config_get_sharding_config (HP_MODULE_CONFIG (config)),
                   "ShardingConfig(state={}, in_src={input: tp:S(1)}, in_dst={input: tp:R}, out_src=[], "
                   "out_dst=[], local_map=None)");
  assert_sharding (hp_module_config_get_sharding_config (HP_MODULE_CONFIG (hp_feed_forward_config_get_w1 (config))),
                   "ShardingConfig(state={weight: tp:S(0)}, in_src={input: tp:R}, in_dst={input: tp:R}, "
                   "out_src=[], out_dst=[tp:S(-1)], local_map=None)");
  assert_sharding (hp_module_config_get_sharding_config (HP_MODULE_CONFIG (hp_feed_forward_config_get_w3 (config))),
                   "ShardingConfig(state={weight: tp:S(0)}, in_src={input: tp:R}, in_dst={input: tp:R}, "
                   "out_src=[], out_dst=[tp:S(-1)], local_map=None)");
  assert_sharding (hp_module_config_get_sharding_config (HP_MODULE_CONFIG (hp_feed_forward_config_get_w2 (config))),
                   "ShardingConfig(state={weight: tp:S(1)}, in_src={}, in_dst={input: tp:S(-1)}, "
                   "out_src=[], out_dst=[tp:S(1)], local_map=None)");

  /* the layers were replaced, not changed: the copy still shares the old ones */
  g_assert_true (hp_feed_forward_config_get_w1 (config) != old_w1);
  g_assert_true (hp_feed_forward_config_get_w1 (HP_FEED_FORWARD_CONFIG (copy)) == old_w1);
  g_assert_null (hp_module_config_get_sharding_config (HP_MODULE_CONFIG (old_w1)));
  g_assert_null (hp_module_config_get_sharding_config (HP_MODULE_CONFIG (copy)));

  /* without sequence parallelism; a layer with a bias gets the bias entry */
  g_object_set (config, "w2", biased, NULL);
  hp_set_dense_ffn_sharding (config, FALSE);
  assert_sharding (hp_module_config_get_sharding_config (HP_MODULE_CONFIG (config)),
                   "ShardingConfig(state={}, in_src={input: tp:R}, in_dst={input: tp:R}, out_src=[], "
                   "out_dst=[], local_map=None)");
  assert_sharding (hp_module_config_get_sharding_config (HP_MODULE_CONFIG (hp_feed_forward_config_get_w2 (config))),
                   "ShardingConfig(state={weight: tp:S(1), bias: tp:R}, in_src={}, in_dst={input: tp:S(-1)}, "
                   "out_src=[], out_dst=[tp:R], local_map=None)");
  g_assert_true (hp_linear_config_get_bias (hp_feed_forward_config_get_w2 (config)));
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
  g_test_add_func ("/nn/embedding/shapes-values", test_embedding_shapes_and_values);
  g_test_add_func ("/nn/embedding/json", test_embedding_json);
  g_test_add_func ("/nn/embedding/init", test_embedding_init);
  g_test_add_func ("/nn/embedding/errors", test_embedding_errors);
  g_test_add_func ("/nn/rms-norm/values", test_rms_norm_values);
  g_test_add_func ("/nn/rms-norm/json-init", test_rms_norm_json_and_init);
  g_test_add_func ("/nn/rms-norm/errors", test_rms_norm_errors);
  g_test_add_func ("/nn/feed-forward/config", test_ffn_config);
  g_test_add_func ("/nn/feed-forward/traverse-json", test_ffn_traverse_and_json);
  g_test_add_func ("/nn/feed-forward/values", test_ffn_values);
  g_test_add_func ("/nn/feed-forward/init", test_ffn_init);
  g_test_add_func ("/nn/feed-forward/errors", test_ffn_errors);
  g_test_add_func ("/nn/sharding/styles", test_styles);
  g_test_add_func ("/nn/sharding/dense-ffn", test_dense_ffn_sharding);

  return g_test_run ();
}
