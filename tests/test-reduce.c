/* test-reduce.c: values and gradients of sum and mean
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>

#include "hp-test-utils.h"

typedef HpTensor *(*ReduceFunc) (HpTensor *, gint, gboolean, GError **);
typedef HpTensor *(*ReduceAllFunc) (HpTensor *, GError **);

/* What a sum or mean over @dim must give, added up element by element in
 * long double from the multi-index of each input element */
static HpTensor *
reference_reduce (HpTensor *x,
                  guint     dim,
                  gboolean  keepdim,
                  gboolean  mean,
                  HpDType   dtype)
{
  guint ndim, out_ndim = 0;
  const gint64 *shape = hp_tensor_get_shape (x, &ndim);
  gint64 out_shape[HP_TENSOR_MAX_NDIM];
  gint64 out_strides[HP_TENSOR_MAX_NDIM];
  gsize n;
  g_autofree gdouble *in = hp_tensor_to_float64_array (x, &n);
  g_autofree long double *acc = NULL;
  g_autofree gdouble *out = NULL;
  gint64 out_n = 1, stride = 1;

  for (guint d = 0; d < ndim; d++)
    if (d != dim)
      out_n *= shape[d];
  acc = g_new0 (long double, MAX (out_n, 1));
  out = g_new0 (gdouble, MAX (out_n, 1));

  /* strides of the output, indexed by input dim (0 for the reduced dim) */
  for (guint d = ndim; d-- > 0;)
    {
      out_strides[d] = d == dim ? 0 : stride;
      if (d != dim)
        stride *= shape[d];
    }

  for (gsize i = 0; i < n; i++)
    {
      gint64 rest = (gint64) i;
      gint64 offset = 0;

      for (guint d = ndim; d-- > 0;)
        {
          offset += (rest % shape[d]) * out_strides[d];
          rest /= shape[d];
        }
      acc[offset] += in[i];
    }

  for (gint64 i = 0; i < out_n; i++)
    out[i] = (gdouble) (mean ? acc[i] / shape[dim] : acc[i]);

  for (guint d = 0; d < ndim; d++)
    {
      if (d != dim)
        out_shape[out_ndim++] = shape[d];
      else if (keepdim)
        out_shape[out_ndim++] = 1;
    }

  return hp_test_tensor (dtype, out, out_n, out_shape, out_ndim);
}

static void
check_against_reference (HpDType       dtype,
                         const gint64 *shape,
                         guint         ndim,
                         gboolean      mean)
{
  g_autoptr(HpTensor) x = NULL;

  if (dtype == HP_DTYPE_INT64)
    {
      gint64 n = 1;
      g_autofree gint64 *ids = NULL;

      for (guint d = 0; d < ndim; d++)
        n *= shape[d];
      ids = g_new (gint64, MAX (n, 1));
      for (gint64 i = 0; i < n; i++)
        ids[i] = (i * 7919) % 201 - 100;
      x = hp_test_tensor_ids (ids, n, shape, ndim);
    }
  else
    x = hp_test_randn (dtype, shape, ndim, 99, FALSE);

  for (gint dim = -(gint) ndim; dim < (gint) ndim; dim++)
    for (int keepdim = 0; keepdim < 2; keepdim++)
      {
        g_autoptr(GError) error = NULL;
        guint d = dim < 0 ? (guint) (dim + (gint) ndim) : (guint) dim;
        g_autoptr(HpTensor) got = mean ? hp_tensor_mean (x, dim, keepdim, &error)
                                       : hp_tensor_sum (x, dim, keepdim, &error);
        g_autoptr(HpTensor) want = reference_reduce (x, d, keepdim, mean, HP_DTYPE_FLOAT64);

        g_assert_no_error (error);
        g_assert_cmpint (hp_tensor_get_dtype (got), ==, dtype);
        /* float32 results are rounded once from a double sum */
        hp_test_assert_close (got, want, dtype == HP_DTYPE_FLOAT32 ? 1e-7 : 1e-14,
                              dtype == HP_DTYPE_FLOAT32 ? 1e-7 : 1e-14);
      }
}

static void
test_sum_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2, 3, 4, 5, 6),
                                          HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) rows = hp_tensor_sum (x, 1, FALSE, &error);
  g_autoptr(HpTensor) cols = hp_tensor_sum (x, 0, TRUE, &error);
  g_autoptr(HpTensor) neg = hp_tensor_sum (x, -1, TRUE, &error);
  g_autoptr(HpTensor) all = hp_tensor_sum_all (x, &error);

  g_assert_no_error (error);
  hp_test_assert_values (rows, HP_TEST_DATA (6, 15), HP_TEST_SHAPE (2), 0, 0);
  hp_test_assert_values (cols, HP_TEST_DATA (5, 7, 9), HP_TEST_SHAPE (1, 3), 0, 0);
  hp_test_assert_values (neg, HP_TEST_DATA (6, 15), HP_TEST_SHAPE (2, 1), 0, 0);
  hp_test_assert_values (all, HP_TEST_DATA (21), NULL, 0, 0, 0);
}

static void
test_sum_reference (void)
{
  static const HpDType dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64, HP_DTYPE_INT64 };

  for (gsize t = 0; t < G_N_ELEMENTS (dtypes); t++)
    {
      check_against_reference (dtypes[t], HP_TEST_SHAPE (3, 4, 5), FALSE);
      check_against_reference (dtypes[t], HP_TEST_SHAPE (2, 1, 3, 1), FALSE);
      check_against_reference (dtypes[t], HP_TEST_SHAPE (7), FALSE);
      check_against_reference (dtypes[t], HP_TEST_SHAPE (2, 0, 3), FALSE);
    }
}

static void
test_mean_reference (void)
{
  static const HpDType dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64 };

  for (gsize t = 0; t < G_N_ELEMENTS (dtypes); t++)
    {
      check_against_reference (dtypes[t], HP_TEST_SHAPE (3, 4, 5), TRUE);
      check_against_reference (dtypes[t], HP_TEST_SHAPE (2, 1, 3, 1), TRUE);
      check_against_reference (dtypes[t], HP_TEST_SHAPE (7), TRUE);
    }
}

static void
test_mean_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 2, 3, 4, 5, 7),
                                          HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) rows = hp_tensor_mean (x, -1, FALSE, &error);
  g_autoptr(HpTensor) cols = hp_tensor_mean (x, 0, TRUE, &error);
  g_autoptr(HpTensor) all = hp_tensor_mean_all (x, &error);

  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (rows), ==, HP_DTYPE_FLOAT32);
  hp_test_assert_values (rows, HP_TEST_DATA (2, 16.0 / 3.0), HP_TEST_SHAPE (2), 1e-7, 0);
  hp_test_assert_values (cols, HP_TEST_DATA (2.5, 3.5, 5), HP_TEST_SHAPE (1, 3), 0, 0);
  hp_test_assert_values (all, HP_TEST_DATA (22.0 / 6.0), NULL, 0, 1e-7, 0);
}

static void
test_int64 (void)
{
  g_autoptr(GError) error = NULL;
  /* 2^53 + 1 and 2: the exact sum 2^53 + 3 has no double */
  const gint64 big = (G_GINT64_CONSTANT (1) << 53) + 1;
  g_autoptr(HpTensor) x = hp_test_tensor_ids ((const gint64[]) { big, 2, -5, 4 }, 4, HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) rows = hp_tensor_sum (x, 1, FALSE, &error);
  g_autoptr(HpTensor) all = hp_tensor_sum_all (x, &error);
  g_autoptr(GBytes) rows_bytes = NULL;
  g_autoptr(GBytes) all_bytes = NULL;
  const gint64 *r;

  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (rows), ==, HP_DTYPE_INT64);
  g_assert_cmpint (hp_tensor_get_dtype (all), ==, HP_DTYPE_INT64);
  rows_bytes = hp_tensor_get_bytes (rows);
  all_bytes = hp_tensor_get_bytes (all);
  r = g_bytes_get_data (rows_bytes, NULL);
  g_assert_cmpint (r[0], ==, big + 2);
  g_assert_cmpint (r[1], ==, -1);
  g_assert_cmpint (((const gint64 *) g_bytes_get_data (all_bytes, NULL))[0], ==, big + 1);

  hp_test_assert_error (hp_tensor_mean (x, 0, FALSE, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "mean: needs a floating point tensor, got int64 [2, 2]");
  hp_test_assert_error (hp_tensor_mean_all (x, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "mean_all: needs a floating point tensor, got int64 [2, 2]");
}

static void
test_float32_accumulates_in_double (void)
{
  g_autoptr(GError) error = NULL;
  /* in float32, 2^24 + 1 rounds back to 2^24, so a float accumulator
   * would lose every 1; 2^24 + 4 is a float32 */
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (16777216, 1, 1, 1, 1),
                                          HP_TEST_SHAPE (5, 1));
  g_autoptr(HpTensor) dim_sum = hp_tensor_sum (x, 0, FALSE, &error);
  g_autoptr(HpTensor) all_sum = hp_tensor_sum_all (x, &error);

  g_assert_no_error (error);
  hp_test_assert_values (dim_sum, HP_TEST_DATA (16777220), HP_TEST_SHAPE (1), 0, 0);
  hp_test_assert_values (all_sum, HP_TEST_DATA (16777220), NULL, 0, 0, 0);
}

static void
test_scalar (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) s = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, -2.5);
  g_autoptr(HpTensor) sum = hp_tensor_sum_all (s, &error);
  g_autoptr(HpTensor) mean = hp_tensor_mean_all (s, &error);

  g_assert_no_error (error);
  hp_test_assert_values (sum, HP_TEST_DATA (-2.5), NULL, 0, 0, 0);
  hp_test_assert_values (mean, HP_TEST_DATA (-2.5), NULL, 0, 0, 0);

  hp_test_assert_error (hp_tensor_sum (s, 0, FALSE, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "sum: dim 0 is out of range for a tensor of 0 dims");
  hp_test_assert_error (hp_tensor_mean (s, -1, TRUE, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "mean: dim -1 is out of range for a tensor of 0 dims");
}

static void
test_empty (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 0, 3));
  g_autoptr(HpTensor) ids = hp_tensor_new_zeros (HP_DTYPE_INT64, HP_TEST_SHAPE (0));
  g_autoptr(HpTensor) over_empty = hp_tensor_sum (x, 1, FALSE, &error);
  g_autoptr(HpTensor) keep_empty = hp_tensor_sum (x, 0, TRUE, &error);
  g_autoptr(HpTensor) all = hp_tensor_sum_all (x, &error);
  g_autoptr(HpTensor) ids_all = hp_tensor_sum_all (ids, &error);
  g_autoptr(HpTensor) mean_empty = hp_tensor_mean (x, -2, TRUE, &error);
  g_autoptr(HpTensor) mean_all = hp_tensor_mean_all (x, &error);
  gsize n;
  g_autofree gdouble *means = NULL;

  g_assert_no_error (error);
  hp_test_assert_values (over_empty, HP_TEST_DATA (0, 0, 0, 0, 0, 0), HP_TEST_SHAPE (2, 3), 0, 0);
  hp_test_assert_shape (keep_empty, HP_TEST_SHAPE (1, 0, 3));
  hp_test_assert_values (all, HP_TEST_DATA (0), NULL, 0, 0, 0);
  hp_test_assert_values (ids_all, HP_TEST_DATA (0), NULL, 0, 0, 0);

  /* a mean over nothing is NaN, as in PyTorch */
  hp_test_assert_shape (mean_empty, HP_TEST_SHAPE (2, 1, 3));
  means = hp_tensor_to_float64_array (mean_empty, &n);
  g_assert_cmpuint (n, ==, 6);
  for (gsize i = 0; i < n; i++)
    g_assert_true (isnan (means[i]));
  hp_test_assert_shape (mean_all, NULL, 0);
  g_assert_true (isnan (hp_tensor_item (mean_all, &error)));
}

static void
test_bad_dims (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3));

  hp_test_assert_error (hp_tensor_sum (x, 2, FALSE, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "sum: dim 2 is out of range for a tensor of 2 dims");
  hp_test_assert_error (hp_tensor_sum (x, -3, TRUE, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "sum: dim -3 is out of range for a tensor of 2 dims");
  hp_test_assert_error (hp_tensor_mean (x, 5, FALSE, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "mean: dim 5 is out of range for a tensor of 2 dims");
}

/* hp_tensor_sum_all() has no input it refuses: what mean_all and sum
 * refuse (an int64 tensor, a 0-d tensor) and an empty tensor give a sum
 * and stay as they were */
static void
test_sum_all_any_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 5, -2 }, 2, HP_TEST_SHAPE (2, 1));
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT32, NULL, 0, -1.5);
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 0));
  g_autoptr(HpTensor) s_ids = hp_tensor_sum_all (ids, &error);
  g_autoptr(HpTensor) s_scalar = hp_tensor_sum_all (scalar, &error);
  g_autoptr(HpTensor) s_empty = hp_tensor_sum_all (empty, &error);

  g_assert_no_error (error);
  hp_test_assert_values (s_ids, HP_TEST_DATA (3), NULL, 0, 0, 0);
  g_assert_cmpint (hp_tensor_get_dtype (s_ids), ==, HP_DTYPE_INT64);
  hp_test_assert_values (s_scalar, HP_TEST_DATA (-1.5), NULL, 0, 0, 0);
  hp_test_assert_values (s_empty, HP_TEST_DATA (0), NULL, 0, 0, 0);
  hp_test_assert_values (ids, HP_TEST_DATA (5, -2), HP_TEST_SHAPE (2, 1), 0, 0);
  hp_test_assert_values (scalar, HP_TEST_DATA (-1.5), NULL, 0, 0, 0);
  hp_test_assert_shape (empty, HP_TEST_SHAPE (3, 0));
}

/* Gradients */

typedef struct
{
  ReduceFunc func;
  gint dim;
  gboolean keepdim;
} ReduceArgs;

static HpTensor *
call_reduce (HpTensor **inputs,
             gpointer   user_data,
             GError   **error)
{
  const ReduceArgs *args = user_data;

  return args->func (inputs[0], args->dim, args->keepdim, error);
}

static HpTensor *
call_reduce_all (HpTensor **inputs,
                 gpointer   user_data,
                 GError   **error)
{
  ReduceAllFunc func = user_data;

  return func (inputs[0], error);
}

static void
test_gradients (void)
{
  static const struct { const gchar *name; ReduceFunc func; ReduceAllFunc all; } ops[] = {
    { "sum", hp_tensor_sum, hp_tensor_sum_all },
    { "mean", hp_tensor_mean, hp_tensor_mean_all },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3, 4), 21, TRUE);
      g_autoptr(HpTensor) ones = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 3, 1), 22, TRUE);
      g_autoptr(HpTensor) s = hp_test_randn (HP_DTYPE_FLOAT64, NULL, 0, 23, TRUE);
      HpTensor *x_in[] = { x };
      HpTensor *ones_in[] = { ones };
      HpTensor *s_in[] = { s };

      for (gint dim = -3; dim < 3; dim++)
        for (int keepdim = 0; keepdim < 2; keepdim++)
          {
            ReduceArgs args = { ops[i].func, dim, keepdim };

            hp_test_gradcheck (ops[i].name, call_reduce, &args, x_in, 1);
            hp_test_gradcheck (ops[i].name, call_reduce, &args, ones_in, 1);
          }

      hp_test_gradcheck (ops[i].name, call_reduce_all, ops[i].all, x_in, 1);
      hp_test_gradcheck (ops[i].name, call_reduce_all, ops[i].all, s_in, 1);
    }
}

/* A reduction over an empty dim still passes a gradient (of the input's
 * empty shape) back, and one over the other dims of an empty tensor too */
static void
test_empty_gradients (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 0), 31, TRUE);
  g_autoptr(HpTensor) sum = hp_tensor_sum (x, 1, FALSE, &error);
  g_autoptr(HpTensor) mean = hp_tensor_mean (x, 0, TRUE, &error);
  g_autoptr(HpTensor) w = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) w_empty = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 0));

  g_assert_no_error (error);
  hp_tensor_backward (sum, w, &error);
  g_assert_no_error (error);
  hp_test_assert_shape (hp_tensor_get_grad (x), HP_TEST_SHAPE (2, 0));

  hp_tensor_zero_grad (x);
  hp_tensor_backward (mean, w_empty, &error);
  g_assert_no_error (error);
  hp_test_assert_shape (hp_tensor_get_grad (x), HP_TEST_SHAPE (2, 0));
}

/* float32 gradients flow with the right dtype and values */
static void
test_float32_gradient (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 2, 3, 4, 5, 6),
                                          HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) m = NULL;
  g_autoptr(HpTensor) total = NULL;

  hp_tensor_set_requires_grad (x, TRUE);
  m = hp_tensor_mean (x, 1, FALSE, &error);     /* [2] */
  total = hp_tensor_sum_all (m, &error);
  g_assert_no_error (error);
  hp_tensor_backward (total, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (hp_tensor_get_grad (x)), ==, HP_DTYPE_FLOAT32);
  hp_test_assert_values (hp_tensor_get_grad (x),
                         HP_TEST_DATA (1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3, 1.0 / 3),
                         HP_TEST_SHAPE (2, 3), 1e-7, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/reduce/sum/values", test_sum_values);
  g_test_add_func ("/reduce/sum/reference", test_sum_reference);
  g_test_add_func ("/reduce/mean/values", test_mean_values);
  g_test_add_func ("/reduce/mean/reference", test_mean_reference);
  g_test_add_func ("/reduce/int64", test_int64);
  g_test_add_func ("/reduce/float32-accumulates-in-double", test_float32_accumulates_in_double);
  g_test_add_func ("/reduce/scalar", test_scalar);
  g_test_add_func ("/reduce/empty", test_empty);
  g_test_add_func ("/reduce/bad-dims", test_bad_dims);
  g_test_add_func ("/reduce/sum-all/any-input", test_sum_all_any_input);
  g_test_add_func ("/reduce/gradients", test_gradients);
  g_test_add_func ("/reduce/empty-gradients", test_empty_gradients);
  g_test_add_func ("/reduce/float32-gradient", test_float32_gradient);

  return g_test_run ();
}
