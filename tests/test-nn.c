/* test-nn.c: values and gradients of the neural network functions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <complex.h>
#include <math.h>

#include "hp-test-utils.h"

static const HpDType floating[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64 };

/* Tolerance for comparing a result of @dtype with a double reference */
static gdouble
rtol_for (HpDType dtype)
{
  return dtype == HP_DTYPE_FLOAT32 ? 2e-6 : 1e-13;
}

static void
assert_all_nan (HpTensor *tensor)
{
  gsize n;
  g_autofree gdouble *values = hp_tensor_to_float64_array (tensor, &n);

  g_assert_cmpuint (n, >, 0);
  for (gsize i = 0; i < n; i++)
    g_assert_true (isnan (values[i]));
}

/* A float32 (or float64) copy of a float64 tensor, with the same
 * requires-grad flag; int64 tensors are returned as they are. */
static HpTensor *
copy_as (HpTensor *tensor,
         HpDType   dtype)
{
  gsize n;
  g_autofree gdouble *values = NULL;
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (tensor, &ndim);
  HpTensor *copy;

  if (hp_tensor_get_dtype (tensor) == HP_DTYPE_INT64)
    return g_object_ref (tensor);

  values = hp_tensor_to_float64_array (tensor, &n);
  copy = hp_test_tensor (dtype, values, n, shape, ndim);
  hp_tensor_set_requires_grad (copy, hp_tensor_get_requires_grad (tensor));
  return copy;
}

/* Runs @func on @inputs (float64) and on float32 copies of them, with
 * the same output weights for backward, and checks that the float32
 * outputs and gradients agree with the float64 ones. */
static void
check_float32_backward (HpTestFunc  func,
                        gpointer    user_data,
                        HpTensor  **inputs,
                        guint       n_inputs)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) copies = g_ptr_array_new_with_free_func (g_object_unref);
  HpTensor *in32[4] = { NULL };
  g_autoptr(HpTensor) out64 = NULL;
  g_autoptr(HpTensor) out32 = NULL;
  g_autoptr(HpTensor) w64 = NULL;
  g_autoptr(HpTensor) w32 = NULL;
  guint ndim;
  const gint64 *shape;

  g_assert_cmpuint (n_inputs, <=, G_N_ELEMENTS (in32));
  for (guint i = 0; i < n_inputs; i++)
    if (inputs[i] != NULL)
      {
        hp_tensor_zero_grad (inputs[i]);
        in32[i] = copy_as (inputs[i], HP_DTYPE_FLOAT32);
        g_ptr_array_add (copies, in32[i]);
      }

  out64 = func (inputs, user_data, &error);
  g_assert_no_error (error);
  out32 = func (in32, user_data, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (out32), ==, HP_DTYPE_FLOAT32);
  hp_test_assert_close (out32, out64, 1e-5, 1e-6);

  shape = hp_tensor_get_shape (out64, &ndim);
  w64 = hp_tensor_new_uniform (HP_DTYPE_FLOAT64, shape, ndim, -1.0, 1.0, 77);
  w32 = copy_as (w64, HP_DTYPE_FLOAT32);
  g_assert_true (hp_tensor_backward (out64, w64, &error));
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (out32, w32, &error));
  g_assert_no_error (error);

  for (guint i = 0; i < n_inputs; i++)
    if (inputs[i] != NULL && hp_tensor_get_requires_grad (inputs[i]))
      {
        HpTensor *g32 = hp_tensor_get_grad (in32[i]);

        g_assert_nonnull (g32);
        g_assert_cmpint (hp_tensor_get_dtype (g32), ==, HP_DTYPE_FLOAT32);
        hp_test_assert_close (g32, hp_tensor_get_grad (inputs[i]), 1e-4, 1e-5);
      }
}

/* ------------------------------------------------------------------ */
/* softmax and log_softmax                                             */
/* ------------------------------------------------------------------ */

typedef HpTensor *(*SoftmaxFunc) (HpTensor *, gint, GError **);

typedef struct
{
  SoftmaxFunc func;
  gint dim;
} SoftmaxCall;

static HpTensor *
call_softmax (HpTensor **inputs,
              gpointer   user_data,
              GError   **error)
{
  const SoftmaxCall *call = user_data;

  return call->func (inputs[0], call->dim, error);
}

/* Reference: for every element, the naive sum of exponentials over the
 * elements that differ from it only in @dim (inputs kept moderate). */
static void
reference_softmax (const gdouble *x,
                   const gint64  *shape,
                   guint          ndim,
                   guint          dim,
                   gboolean       log_space,
                   gdouble       *out)
{
  gint64 numel = 1, stride = 1;

  for (guint d = 0; d < ndim; d++)
    numel *= shape[d];
  for (guint d = dim + 1; d < ndim; d++)
    stride *= shape[d];

  for (gint64 i = 0; i < numel; i++)
    {
      gint64 coord = (i / stride) % shape[dim];
      gint64 first = i - coord * stride;
      gdouble total = 0.0;

      for (gint64 k = 0; k < shape[dim]; k++)
        total += exp (x[first + k * stride]);
      out[i] = log_space ? log (exp (x[i]) / total) : exp (x[i]) / total;
    }
}

static void
test_softmax_values (void)
{
  const gint64 shape[] = { 2, 3, 4 };

  for (gsize t = 0; t < G_N_ELEMENTS (floating); t++)
    for (int log_space = 0; log_space < 2; log_space++)
      for (gint dim = -3; dim < 3; dim++)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(HpTensor) x = hp_test_randn (floating[t], shape, 3, 11, FALSE);
          g_autoptr(HpTensor) y = NULL;
          g_autofree gdouble *xs = NULL;
          gdouble want[24];
          gsize n;

          y = log_space ? hp_tensor_log_softmax (x, dim, &error) : hp_tensor_softmax (x, dim, &error);
          g_assert_no_error (error);
          g_assert_cmpint (hp_tensor_get_dtype (y), ==, floating[t]);

          xs = hp_tensor_to_float64_array (x, &n);
          reference_softmax (xs, shape, 3, dim < 0 ? dim + 3 : dim, log_space, want);
          hp_test_assert_values (y, want, 24, shape, 3, rtol_for (floating[t]) * 4,
                                 rtol_for (floating[t]));
        }
}

static void
test_softmax_known (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0, 1, 2, 7, 7, 7),
                                          HP_TEST_SHAPE (2, 1, 3));
  g_autoptr(HpTensor) pair = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0, log (3.0)), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) s = hp_tensor_softmax (pair, 0, &error);
  g_autoptr(HpTensor) ls = hp_tensor_log_softmax (pair, -1, &error);
  g_autoptr(HpTensor) uniform = hp_tensor_new_full (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3, 5), 2.5);
  g_autoptr(HpTensor) us = hp_tensor_softmax (uniform, 1, &error);
  g_autoptr(HpTensor) uls = hp_tensor_log_softmax (uniform, 1, &error);
  g_autoptr(HpTensor) over_one = hp_tensor_softmax (x, 1, &error);
  g_autoptr(HpTensor) log_over_one = hp_tensor_log_softmax (x, -2, &error);
  gdouble want_us[15], want_uls[15];

  g_assert_no_error (error);
  /* softmax ([0, log 3]) = [1/4, 3/4] */
  hp_test_assert_values (s, HP_TEST_DATA (0.25, 0.75), HP_TEST_SHAPE (2), 1e-15, 0);
  hp_test_assert_values (ls, HP_TEST_DATA (log (0.25), log (0.75)), HP_TEST_SHAPE (2), 1e-15, 0);

  for (int i = 0; i < 15; i++)
    {
      want_us[i] = 0.2;
      want_uls[i] = -log (5.0);
    }
  hp_test_assert_values (us, want_us, 15, HP_TEST_SHAPE (3, 5), 1e-7, 0);
  hp_test_assert_values (uls, want_uls, 15, HP_TEST_SHAPE (3, 5), 1e-7, 0);

  /* a dim of size 1: softmax is 1, log_softmax is 0 */
  hp_test_assert_values (over_one, HP_TEST_DATA (1, 1, 1, 1, 1, 1), HP_TEST_SHAPE (2, 1, 3), 0, 0);
  hp_test_assert_values (log_over_one, HP_TEST_DATA (0, 0, 0, 0, 0, 0), HP_TEST_SHAPE (2, 1, 3), 0, 0);
}

static void
test_softmax_large (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (floating); t++)
    {
      g_autoptr(GError) error = NULL;
      /* exp (1000) overflows double; only the differences matter */
      g_autoptr(HpTensor) big = hp_test_tensor (floating[t], HP_TEST_DATA (1000, 1001, 1002, -1000, -1001, -1002),
                                                HP_TEST_SHAPE (2, 3));
      g_autoptr(HpTensor) s = hp_tensor_softmax (big, 1, &error);
      g_autoptr(HpTensor) ls = hp_tensor_log_softmax (big, 1, &error);
      gdouble total = 1.0 + exp (1.0) + exp (2.0);
      gdouble lse = log (total);

      g_assert_no_error (error);
      hp_test_assert_values (s, HP_TEST_DATA (1 / total, exp (1.0) / total, exp (2.0) / total,
                                              exp (2.0) / total, exp (1.0) / total, 1 / total),
                             HP_TEST_SHAPE (2, 3), rtol_for (floating[t]), 0);
      hp_test_assert_values (ls, HP_TEST_DATA (-lse, 1 - lse, 2 - lse,
                                               2 - lse, 1 - lse, -lse),
                             HP_TEST_SHAPE (2, 3), rtol_for (floating[t]), 0);
    }
}

static void
test_softmax_edges (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) with_inf = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (-INFINITY, 0, -INFINITY, log (3.0)),
                                                 HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) all_inf = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (-INFINITY, -INFINITY), HP_TEST_SHAPE (1, 2));
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 0, 3));
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 3.5);
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 1, 2 }, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) s = hp_tensor_softmax (with_inf, 0, &error);
  g_autoptr(HpTensor) ls = hp_tensor_log_softmax (with_inf, 0, &error);
  g_autoptr(HpTensor) nan_s = hp_tensor_softmax (all_inf, 1, &error);
  g_autoptr(HpTensor) nan_ls = hp_tensor_log_softmax (all_inf, -1, &error);
  g_autoptr(HpTensor) empty_s = hp_tensor_softmax (empty, 1, &error);
  g_autoptr(HpTensor) empty_other = hp_tensor_log_softmax (empty, 2, &error);
  g_autoptr(HpTensor) scalar_s = hp_tensor_softmax (scalar, -1, &error);
  g_autoptr(HpTensor) scalar_ls = hp_tensor_log_softmax (scalar, 0, &error);

  g_assert_no_error (error);
  hp_test_assert_values (s, HP_TEST_DATA (0, 0.25, 0, 0.75), HP_TEST_SHAPE (4), 1e-15, 0);
  hp_test_assert_values (ls, HP_TEST_DATA (-INFINITY, log (0.25), -INFINITY, log (0.75)),
                         HP_TEST_SHAPE (4), 1e-15, 0);
  assert_all_nan (nan_s);
  assert_all_nan (nan_ls);
  hp_test_assert_shape (empty_s, HP_TEST_SHAPE (2, 0, 3));
  hp_test_assert_shape (empty_other, HP_TEST_SHAPE (2, 0, 3));
  hp_test_assert_shape (scalar_s, NULL, 0);
  g_assert_cmpfloat (hp_tensor_item (scalar_s, &error), ==, 1.0);
  g_assert_cmpfloat (hp_tensor_item (scalar_ls, &error), ==, 0.0);
  g_assert_no_error (error);

  hp_test_assert_error (hp_tensor_softmax (empty, 3, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "softmax: dim 3 is out of range for a tensor of 3 dims");
  hp_test_assert_error (hp_tensor_log_softmax (empty, -4, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "log_softmax: dim -4 is out of range for a tensor of 3 dims");
  hp_test_assert_error (hp_tensor_softmax (scalar, 1, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "softmax: dim 1 is out of range for a tensor of 0 dims");
  hp_test_assert_error (hp_tensor_softmax (ids, 0, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "softmax: needs a floating point tensor, got int64 [2]");
  hp_test_assert_error (hp_tensor_log_softmax (ids, 0, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "log_softmax: needs a floating point tensor");
}

static void
test_softmax_gradients (void)
{
  static const SoftmaxFunc funcs[] = { hp_tensor_softmax, hp_tensor_log_softmax };

  for (gsize f = 0; f < G_N_ELEMENTS (funcs); f++)
    {
      for (gint dim = -1; dim < 3; dim++)
        {
          g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3, 4), 5, TRUE);
          SoftmaxCall call = { funcs[f], dim };
          HpTensor *inputs[] = { x };

          hp_test_gradcheck (f == 0 ? "softmax" : "log_softmax", call_softmax, &call, inputs, 1);
          check_float32_backward (call_softmax, &call, inputs, 1);
        }

      {
        /* 0-d input and a row with a -inf entry */
        g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 0.3);
        g_autoptr(HpTensor) masked = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0.2, -INFINITY, -0.7, 1.1),
                                                     HP_TEST_SHAPE (2, 2));
        SoftmaxCall call = { funcs[f], 0 };
        SoftmaxCall rows = { funcs[f], 1 };
        HpTensor *in_scalar[] = { scalar };
        HpTensor *in_masked[] = { masked };

        hp_tensor_set_requires_grad (scalar, TRUE);
        hp_tensor_set_requires_grad (masked, TRUE);
        hp_test_gradcheck ("softmax 0-d", call_softmax, &call, in_scalar, 1);
        if (f == 0)
          hp_test_gradcheck ("softmax masked", call_softmax, &rows, in_masked, 1);
      }
    }
}

/* softmax of a -inf entry has zero gradient; the other entries get the
 * gradient of the softmax over the finite ones */
static void
test_softmax_masked_gradient (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0, -INFINITY, log (3.0)), HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) g = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 5, 0), HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) y = NULL;

  hp_tensor_set_requires_grad (x, TRUE);
  y = hp_tensor_softmax (x, 0, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (y, g, &error));
  g_assert_no_error (error);
  /* y = [1/4, 0, 3/4], sum (g * y) = 1/4: g_in = y * (g - 1/4) */
  hp_test_assert_values (hp_tensor_get_grad (x), HP_TEST_DATA (0.25 * 0.75, 0, 0.75 * -0.25),
                         HP_TEST_SHAPE (3), 1e-15, 0);
}

/* ------------------------------------------------------------------ */
/* rms_norm                                                            */
/* ------------------------------------------------------------------ */

static HpTensor *
call_rms_norm (HpTensor **inputs,
               gpointer   user_data,
               GError   **error)
{
  return hp_tensor_rms_norm (inputs[0], inputs[1], *(const gdouble *) user_data, error);
}

static void
reference_rms_norm (const gdouble *x,
                    const gdouble *w,
                    gint64         rows,
                    gint64         d,
                    gdouble        eps,
                    gdouble       *out)
{
  for (gint64 r = 0; r < rows; r++)
    {
      gdouble ms = 0.0;

      for (gint64 j = 0; j < d; j++)
        ms += x[r * d + j] * x[r * d + j] / d;
      for (gint64 j = 0; j < d; j++)
        out[r * d + j] = x[r * d + j] / sqrt (ms + eps) * (w != NULL ? w[j] : 1.0);
    }
}

static void
test_rms_norm_values (void)
{
  const gdouble eps = 1e-5;

  for (gsize t = 0; t < G_N_ELEMENTS (floating); t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) x = hp_test_randn (floating[t], HP_TEST_SHAPE (2, 3, 5), 21, FALSE);
      g_autoptr(HpTensor) w = hp_test_randn (floating[t], HP_TEST_SHAPE (5), 22, FALSE);
      g_autoptr(HpTensor) y = hp_tensor_rms_norm (x, w, eps, &error);
      g_autoptr(HpTensor) y_plain = hp_tensor_rms_norm (x, NULL, eps, &error);
      g_autofree gdouble *xs = NULL;
      g_autofree gdouble *ws = NULL;
      gdouble want[30], want_plain[30];
      gsize n;

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (y), ==, floating[t]);
      xs = hp_tensor_to_float64_array (x, &n);
      ws = hp_tensor_to_float64_array (w, &n);
      reference_rms_norm (xs, ws, 6, 5, eps, want);
      reference_rms_norm (xs, NULL, 6, 5, eps, want_plain);
      hp_test_assert_values (y, want, 30, HP_TEST_SHAPE (2, 3, 5), rtol_for (floating[t]) * 2, 1e-12);
      hp_test_assert_values (y_plain, want_plain, 30, HP_TEST_SHAPE (2, 3, 5), rtol_for (floating[t]) * 2, 1e-12);
    }
}

static void
test_rms_norm_known (void)
{
  g_autoptr(GError) error = NULL;
  /* rows [3, 4] (mean square 12.5), [0, 0] and [1, -1] */
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (3, 4, 0, 0, 1, -1), HP_TEST_SHAPE (3, 2));
  g_autoptr(HpTensor) w = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (2, -1), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) one_d = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (3, 4), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) y = hp_tensor_rms_norm (x, w, 0.0, &error);
  g_autoptr(HpTensor) y_eps = hp_tensor_rms_norm (x, NULL, 3.0, &error);
  g_autoptr(HpTensor) y_1d = hp_tensor_rms_norm (one_d, NULL, 0.0, &error);
  gdouble r = sqrt (12.5);
  gsize n;
  g_autofree gdouble *ys = NULL;

  g_assert_no_error (error);
  ys = hp_tensor_to_float64_array (y, &n);
  g_assert_cmpfloat_with_epsilon (ys[0], 6 / r, 1e-15);
  g_assert_cmpfloat_with_epsilon (ys[1], -4 / r, 1e-15);
  /* a zero row with eps 0 is 0 / 0 */
  g_assert_true (isnan (ys[2]) && isnan (ys[3]));
  g_assert_cmpfloat_with_epsilon (ys[4], 2, 1e-15);
  g_assert_cmpfloat_with_epsilon (ys[5], 1, 1e-15);

  /* eps 3: [3, 4] / sqrt (15.5), zeros stay zero, [1, -1] / 2 */
  hp_test_assert_values (y_eps, HP_TEST_DATA (3 / sqrt (15.5), 4 / sqrt (15.5), 0, 0, 0.5, -0.5),
                         HP_TEST_SHAPE (3, 2), 1e-15, 0);
  hp_test_assert_values (y_1d, HP_TEST_DATA (3 / r, 4 / r), HP_TEST_SHAPE (2), 1e-7, 0);
}

static void
test_rms_norm_edges (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) no_rows = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0, 4));
  g_autoptr(HpTensor) w4 = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) no_cols = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 0));
  g_autoptr(HpTensor) single = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (-2, 5), HP_TEST_SHAPE (2, 1));
  g_autoptr(HpTensor) r1 = hp_tensor_rms_norm (no_rows, w4, 1e-6, &error);
  g_autoptr(HpTensor) r2 = hp_tensor_rms_norm (no_cols, NULL, 1e-6, &error);
  g_autoptr(HpTensor) r3 = hp_tensor_rms_norm (single, NULL, 0.0, &error);

  g_assert_no_error (error);
  hp_test_assert_shape (r1, HP_TEST_SHAPE (0, 4));
  hp_test_assert_shape (r2, HP_TEST_SHAPE (3, 0));
  /* one element per row: x / |x| */
  hp_test_assert_values (r3, HP_TEST_DATA (-1, 1), HP_TEST_SHAPE (2, 1), 1e-15, 0);
}

static void
test_rms_norm_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 4));
  g_autoptr(HpTensor) w3 = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) w2d = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 4));
  g_autoptr(HpTensor) w64 = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) scalar = hp_tensor_new_ones (HP_DTYPE_FLOAT32, NULL, 0);
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 1, 2 }, 2, HP_TEST_SHAPE (2));

  hp_test_assert_error (hp_tensor_rms_norm (x, w3, 1e-6, &error), &error, HP_ERROR_SHAPE,
                        "rms_norm: weight shape [3] does not fit input shape [2, 4] (needs [4])");
  hp_test_assert_error (hp_tensor_rms_norm (x, w2d, 1e-6, &error), &error, HP_ERROR_SHAPE,
                        "rms_norm: weight shape [1, 4] does not fit input shape [2, 4]");
  hp_test_assert_error (hp_tensor_rms_norm (x, w64, 1e-6, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "rms_norm: dtypes differ (float32 [2, 4] and float64 [4])");
  hp_test_assert_error (hp_tensor_rms_norm (x, NULL, -1e-6, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "rms_norm: eps must be >= 0, got -1e-06");
  hp_test_assert_error (hp_tensor_rms_norm (x, NULL, NAN, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "rms_norm: eps must be >= 0");
  hp_test_assert_error (hp_tensor_rms_norm (scalar, NULL, 1e-6, &error), &error, HP_ERROR_SHAPE,
                        "rms_norm: the input must have at least 1 dim, got shape []");
  hp_test_assert_error (hp_tensor_rms_norm (ids, NULL, 1e-6, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "rms_norm: needs a floating point tensor, got int64 [2]");
}

static void
test_rms_norm_gradients (void)
{
  gdouble eps = 1e-3;
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3, 4), 31, TRUE);
  g_autoptr(HpTensor) w = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4), 32, TRUE);
  g_autoptr(HpTensor) x_fixed = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 4), 33, FALSE);
  g_autoptr(HpTensor) x_1d = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5), 34, TRUE);
  HpTensor *both[] = { x, w };
  HpTensor *no_weight[] = { x, NULL };
  HpTensor *weight_only[] = { x_fixed, w };
  HpTensor *one_d[] = { x_1d, NULL };

  hp_test_gradcheck ("rms_norm x, w", call_rms_norm, &eps, both, 2);
  hp_test_gradcheck ("rms_norm x", call_rms_norm, &eps, no_weight, 2);
  hp_test_gradcheck ("rms_norm w", call_rms_norm, &eps, weight_only, 2);
  hp_test_gradcheck ("rms_norm 1-d", call_rms_norm, &eps, one_d, 2);

  eps = 0.0;
  hp_test_gradcheck ("rms_norm eps 0", call_rms_norm, &eps, both, 2);

  eps = 1e-5;
  check_float32_backward (call_rms_norm, &eps, both, 2);
  check_float32_backward (call_rms_norm, &eps, no_weight, 2);
}

/* ------------------------------------------------------------------ */
/* embedding                                                           */
/* ------------------------------------------------------------------ */

static HpTensor *
call_embedding (HpTensor **inputs,
                gpointer   user_data,
                GError   **error)
{
  return hp_tensor_embedding (inputs[0], inputs[1], error);
}

static void
test_embedding_values (void)
{
  const gint64 ids_data[] = { 2, 0, 2, 3, 1, 1 };

  for (gsize t = 0; t < G_N_ELEMENTS (floating); t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) w = hp_test_randn (floating[t], HP_TEST_SHAPE (4, 3), 41, FALSE);
      g_autoptr(HpTensor) ids = hp_test_tensor_ids (ids_data, 6, HP_TEST_SHAPE (2, 3));
      g_autoptr(HpTensor) one = hp_test_tensor_ids ((const gint64[]) { 3 }, 1, NULL, 0);
      g_autoptr(HpTensor) none = hp_test_tensor_ids (NULL, 0, HP_TEST_SHAPE (2, 0));
      g_autoptr(HpTensor) e = hp_tensor_embedding (w, ids, &error);
      g_autoptr(HpTensor) e_one = hp_tensor_embedding (w, one, &error);
      g_autoptr(HpTensor) e_none = hp_tensor_embedding (w, none, &error);
      g_autofree gdouble *ws = NULL;
      gdouble want[18];
      gsize n;

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (e), ==, floating[t]);
      ws = hp_tensor_to_float64_array (w, &n);
      for (int i = 0; i < 6; i++)
        for (int j = 0; j < 3; j++)
          want[i * 3 + j] = ws[ids_data[i] * 3 + j];
      hp_test_assert_values (e, want, 18, HP_TEST_SHAPE (2, 3, 3), 0, 0);
      hp_test_assert_values (e_one, ws + 9, 3, HP_TEST_SHAPE (3), 0, 0);
      hp_test_assert_shape (e_none, HP_TEST_SHAPE (2, 0, 3));
    }
}

static void
test_embedding_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) w = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (4, 3));
  g_autoptr(HpTensor) w1d = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) too_high = hp_test_tensor_ids ((const gint64[]) { 0, 4 }, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) negative = hp_test_tensor_ids ((const gint64[]) { -1 }, 1, HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) good = hp_test_tensor_ids ((const gint64[]) { 0, 1 }, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) float_ids = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) deep = hp_test_tensor_ids ((const gint64[]) { 0 }, 1,
                                                  HP_TEST_SHAPE (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1));

  hp_test_assert_error (hp_tensor_embedding (w, too_high, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "embedding: id 4 is outside [0, 4) for weight of shape [4, 3]");
  hp_test_assert_error (hp_tensor_embedding (w, negative, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "embedding: id -1 is outside [0, 4)");
  hp_test_assert_error (hp_tensor_embedding (w, float_ids, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "embedding: ids must be int64, got float32 [2]");
  hp_test_assert_error (hp_tensor_embedding (w1d, good, &error), &error, HP_ERROR_SHAPE,
                        "embedding: weight must be 2-d [V, D], got shape [4]");
  hp_test_assert_error (hp_tensor_embedding (good, good, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "embedding: needs a floating point tensor, got int64 [2]");
  hp_test_assert_error (hp_tensor_embedding (w, deep, &error), &error, HP_ERROR_SHAPE,
                        "embedding: ids shape [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1] leaves no room");
}

static void
test_embedding_gradients (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) w = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 3), 51, TRUE);
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 4, 1, 4, 0, 4, 1 }, 6, HP_TEST_SHAPE (3, 2));
  g_autoptr(HpTensor) scalar_id = hp_test_tensor_ids ((const gint64[]) { 2 }, 1, NULL, 0);
  g_autoptr(HpTensor) few = hp_test_tensor_ids ((const gint64[]) { 1, 3, 1 }, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) out = NULL;
  g_autoptr(HpTensor) g = NULL;
  HpTensor *inputs[] = { w, ids };
  HpTensor *scalar_inputs[] = { w, scalar_id };

  hp_test_gradcheck ("embedding", call_embedding, NULL, inputs, 2);
  hp_test_gradcheck ("embedding 0-d ids", call_embedding, NULL, scalar_inputs, 2);
  check_float32_backward (call_embedding, NULL, inputs, 2);

  /* repeated ids accumulate; rows nobody looked up get zero */
  hp_tensor_zero_grad (w);
  out = hp_tensor_embedding (w, few, &error);
  g_assert_no_error (error);
  g = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2, 3, 10, 20, 30, 100, 200, 300), HP_TEST_SHAPE (3, 3));
  g_assert_true (hp_tensor_backward (out, g, &error));
  g_assert_no_error (error);
  hp_test_assert_values (hp_tensor_get_grad (w),
                         HP_TEST_DATA (0, 0, 0, 101, 202, 303, 0, 0, 0, 10, 20, 30, 0, 0, 0),
                         HP_TEST_SHAPE (5, 3), 0, 0);
  g_assert_null (hp_tensor_get_grad (few));
}

/* ------------------------------------------------------------------ */
/* apply_rotary                                                        */
/* ------------------------------------------------------------------ */

static HpTensor *
call_rotary (HpTensor **inputs,
             gpointer   user_data,
             GError   **error)
{
  return hp_tensor_apply_rotary (inputs[0], inputs[1], inputs[2], error);
}

/* Reference as in Llama: each pair is a complex number multiplied by
 * cos + i sin. */
static void
reference_rotary (const gdouble *x,
                  const gdouble *c,
                  const gdouble *s,
                  gint64         batch,
                  gint64         seq,
                  gint64         heads,
                  gint64         d,
                  gdouble       *out)
{
  for (gint64 b = 0; b < batch; b++)
    for (gint64 p = 0; p < seq; p++)
      for (gint64 h = 0; h < heads; h++)
        for (gint64 i = 0; i < d / 2; i++)
          {
            gint64 at = ((b * seq + p) * heads + h) * d + 2 * i;
            double complex z = x[at] + I * x[at + 1];
            double complex rot = c[p * (d / 2) + i] + I * s[p * (d / 2) + i];
            double complex r = z * rot;

            out[at] = creal (r);
            out[at + 1] = cimag (r);
          }
}

/* cos and sin tables of Llama's frequencies, theta 10000 */
static void
rotary_tables (HpDType    dtype,
               gint64     seq,
               gint64     d,
               HpTensor **cos_out,
               HpTensor **sin_out)
{
  g_autofree gdouble *c = g_new (gdouble, seq * d / 2);
  g_autofree gdouble *s = g_new (gdouble, seq * d / 2);

  for (gint64 p = 0; p < seq; p++)
    for (gint64 i = 0; i < d / 2; i++)
      {
        gdouble angle = p / pow (10000.0, 2.0 * i / d);

        c[p * (d / 2) + i] = cos (angle);
        s[p * (d / 2) + i] = sin (angle);
      }
  *cos_out = hp_test_tensor (dtype, c, seq * d / 2, HP_TEST_SHAPE (seq, d / 2));
  *sin_out = hp_test_tensor (dtype, s, seq * d / 2, HP_TEST_SHAPE (seq, d / 2));
}

static void
test_rotary_values (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (floating); t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) x = hp_test_randn (floating[t], HP_TEST_SHAPE (2, 3, 2, 4), 61, FALSE);
      g_autoptr(HpTensor) x3 = hp_test_randn (floating[t], HP_TEST_SHAPE (3, 1, 4), 62, FALSE);
      g_autoptr(HpTensor) c = NULL;
      g_autoptr(HpTensor) s = NULL;
      g_autoptr(HpTensor) y = NULL;
      g_autoptr(HpTensor) y3 = NULL;
      g_autofree gdouble *xs = NULL;
      g_autofree gdouble *x3s = NULL;
      g_autofree gdouble *cs = NULL;
      g_autofree gdouble *ss = NULL;
      gdouble want[48], want3[12];
      gsize n;

      rotary_tables (floating[t], 3, 4, &c, &s);
      y = hp_tensor_apply_rotary (x, c, s, &error);
      g_assert_no_error (error);
      y3 = hp_tensor_apply_rotary (x3, c, s, &error);
      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (y), ==, floating[t]);

      xs = hp_tensor_to_float64_array (x, &n);
      x3s = hp_tensor_to_float64_array (x3, &n);
      cs = hp_tensor_to_float64_array (c, &n);
      ss = hp_tensor_to_float64_array (s, &n);
      reference_rotary (xs, cs, ss, 2, 3, 2, 4, want);
      reference_rotary (x3s, cs, ss, 1, 3, 1, 4, want3);
      hp_test_assert_values (y, want, 48, HP_TEST_SHAPE (2, 3, 2, 4), rtol_for (floating[t]) * 4, 1e-6);
      hp_test_assert_values (y3, want3, 12, HP_TEST_SHAPE (3, 1, 4), rtol_for (floating[t]) * 4, 1e-6);
    }
}

static void
test_rotary_known (void)
{
  g_autoptr(GError) error = NULL;
  /* one position, one head, two pairs: a quarter turn and no turn */
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2, 3, 4), HP_TEST_SHAPE (1, 1, 4));
  g_autoptr(HpTensor) c = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0, 1), HP_TEST_SHAPE (1, 2));
  g_autoptr(HpTensor) s = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 0), HP_TEST_SHAPE (1, 2));
  g_autoptr(HpTensor) y = hp_tensor_apply_rotary (x, c, s, &error);
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0, 2, 3, 6));
  g_autoptr(HpTensor) ce = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) ye = hp_tensor_apply_rotary (empty, ce, ce, &error);

  g_assert_no_error (error);
  /* (1 + 2i) * i = -2 + i; (3 + 4i) * 1 */
  hp_test_assert_values (y, HP_TEST_DATA (-2, 1, 3, 4), HP_TEST_SHAPE (1, 1, 4), 0, 0);
  hp_test_assert_shape (ye, HP_TEST_SHAPE (0, 2, 3, 6));
}

static void
test_rotary_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3, 2, 4));
  g_autoptr(HpTensor) x2d = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3, 4));
  g_autoptr(HpTensor) odd = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3, 2, 5));
  g_autoptr(HpTensor) table = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3, 2));
  g_autoptr(HpTensor) long_table = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (4, 2));
  g_autoptr(HpTensor) full_table = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3, 4));
  g_autoptr(HpTensor) table64 = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 2));

  hp_test_assert_error (hp_tensor_apply_rotary (x, long_table, table, &error), &error, HP_ERROR_SHAPE,
                        "apply_rotary: cos shape [4, 2] does not fit input shape [2, 3, 2, 4] "
                        "(needs [S, D/2] = [3, 2])");
  hp_test_assert_error (hp_tensor_apply_rotary (x, table, full_table, &error), &error, HP_ERROR_SHAPE,
                        "apply_rotary: sin shape [3, 4] does not fit input shape [2, 3, 2, 4]");
  hp_test_assert_error (hp_tensor_apply_rotary (x2d, table, table, &error), &error, HP_ERROR_SHAPE,
                        "apply_rotary: input shape [3, 4] is not [..., S, H, D] with D even");
  hp_test_assert_error (hp_tensor_apply_rotary (odd, table, table, &error), &error, HP_ERROR_SHAPE,
                        "apply_rotary: input shape [3, 2, 5] is not [..., S, H, D] with D even");
  hp_test_assert_error (hp_tensor_apply_rotary (x, table64, table, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "apply_rotary: dtypes differ (float32 [2, 3, 2, 4] and float64 [3, 2])");
  hp_test_assert_error (hp_tensor_apply_rotary (x, table, table64, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "apply_rotary: dtypes differ");
}

static void
test_rotary_gradients (void)
{
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3, 2, 4), 71, TRUE);
  g_autoptr(HpTensor) c = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 2), 72, TRUE);
  g_autoptr(HpTensor) s = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 2), 73, TRUE);
  g_autoptr(HpTensor) x3 = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 3, 4), 74, FALSE);
  g_autoptr(HpTensor) c_fixed = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 2), 75, FALSE);
  HpTensor *all[] = { x, c, s };
  HpTensor *tables_only[] = { x3, c, s };
  HpTensor *x_and_sin[] = { x, c_fixed, s };

  hp_test_gradcheck ("apply_rotary", call_rotary, NULL, all, 3);
  hp_test_gradcheck ("apply_rotary tables", call_rotary, NULL, tables_only, 3);
  hp_test_gradcheck ("apply_rotary x, sin", call_rotary, NULL, x_and_sin, 3);
  check_float32_backward (call_rotary, NULL, all, 3);
}

/* ------------------------------------------------------------------ */
/* cross_entropy                                                       */
/* ------------------------------------------------------------------ */

static HpTensor *
call_cross_entropy (HpTensor **inputs,
                    gpointer   user_data,
                    GError   **error)
{
  return hp_tensor_cross_entropy (inputs[0], inputs[1], *(const gint64 *) user_data, error);
}

static gdouble
reference_cross_entropy (const gdouble *x,
                         const gint64  *targets,
                         gint64         rows,
                         gint64         c,
                         gint64         ignore_index)
{
  gdouble total = 0.0;
  gint64 kept = 0;

  for (gint64 r = 0; r < rows; r++)
    {
      gdouble denominator = 0.0;

      if (targets[r] == ignore_index)
        continue;
      for (gint64 j = 0; j < c; j++)
        denominator += exp (x[r * c + j]);
      total -= log (exp (x[r * c + targets[r]]) / denominator);
      kept++;
    }
  return total / kept;
}

static void
test_cross_entropy_values (void)
{
  const gint64 targets_data[] = { 3, -100, 0, 2, 1, 3 };
  const gint64 no_skip_data[] = { 3, 1, 0, 2, 1, 3 };

  for (gsize t = 0; t < G_N_ELEMENTS (floating); t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) logits = hp_test_randn (floating[t], HP_TEST_SHAPE (2, 3, 4), 81, FALSE);
      g_autoptr(HpTensor) targets = hp_test_tensor_ids (targets_data, 6, HP_TEST_SHAPE (2, 3));
      g_autoptr(HpTensor) no_skip = hp_test_tensor_ids (no_skip_data, 6, HP_TEST_SHAPE (2, 3));
      g_autoptr(HpTensor) loss = hp_tensor_cross_entropy (logits, targets, -100, &error);
      g_autoptr(HpTensor) loss_all = hp_tensor_cross_entropy (logits, no_skip, -100, &error);
      /* an ignore_index that is a valid class skips that class */
      g_autoptr(HpTensor) loss_skip3 = hp_tensor_cross_entropy (logits, no_skip, 3, &error);
      g_autofree gdouble *xs = NULL;
      gsize n;
      gdouble want, want_all, want_skip3;

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (loss), ==, floating[t]);
      hp_test_assert_shape (loss, NULL, 0);

      xs = hp_tensor_to_float64_array (logits, &n);
      want = reference_cross_entropy (xs, targets_data, 6, 4, -100);
      want_all = reference_cross_entropy (xs, no_skip_data, 6, 4, -100);
      want_skip3 = reference_cross_entropy (xs, no_skip_data, 6, 4, 3);
      g_assert_cmpfloat (fabs (want - want_all), >, 1e-3);
      g_assert_cmpfloat (fabs (want_skip3 - want_all), >, 1e-3);
      hp_test_assert_values (loss, &want, 1, NULL, 0, rtol_for (floating[t]) * 2, 0);
      hp_test_assert_values (loss_all, &want_all, 1, NULL, 0, rtol_for (floating[t]) * 2, 0);
      hp_test_assert_values (loss_skip3, &want_skip3, 1, NULL, 0, rtol_for (floating[t]) * 2, 0);
    }
}

/* A row as long as a vocabulary, not a multiple of a vector's width,
 * logits spread over [-40, 40]: the float32 loss and its gradient
 * (softmax - onehot, over the kept rows) against double */
static void
test_cross_entropy_long_rows (void)
{
  enum { ROWS = 3, C = 1001 };
  const gint64 targets_data[ROWS] = { 17, 1000, 500 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) scaled = hp_test_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (ROWS, C), 7, FALSE);
  g_autoptr(HpTensor) logits = hp_tensor_scale (scaled, 15.0, &error);
  g_autoptr(HpTensor) targets = hp_test_tensor_ids (targets_data, ROWS, HP_TEST_SHAPE (ROWS));
  g_autoptr(HpTensor) loss = NULL;
  g_autofree gdouble *xs = NULL;
  g_autofree gdouble *want_grad = g_new (gdouble, ROWS * C);
  gdouble want;
  gsize n;

  g_assert_no_error (error);
  hp_tensor_set_requires_grad (logits, TRUE);
  loss = hp_tensor_cross_entropy (logits, targets, -100, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);

  xs = hp_tensor_to_float64_array (logits, &n);
  want = reference_cross_entropy (xs, targets_data, ROWS, C, -100);
  for (gint64 r = 0; r < ROWS; r++)
    {
      gdouble max = -INFINITY, sum = 0.0;

      for (gint64 j = 0; j < C; j++)
        max = MAX (max, xs[r * C + j]);
      for (gint64 j = 0; j < C; j++)
        sum += exp (xs[r * C + j] - max);
      for (gint64 j = 0; j < C; j++)
        want_grad[r * C + j] = (exp (xs[r * C + j] - max) / sum - (j == targets_data[r])) / ROWS;
    }
  hp_test_assert_values (loss, &want, 1, NULL, 0, rtol_for (HP_DTYPE_FLOAT32), 0);
  hp_test_assert_values (hp_tensor_get_grad (logits), want_grad, ROWS * C, HP_TEST_SHAPE (ROWS, C),
                         rtol_for (HP_DTYPE_FLOAT32), 1e-12);
}

static void
test_cross_entropy_known (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) uniform = hp_tensor_new_full (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (4, 7), 0.5);
  g_autoptr(HpTensor) u_targets = hp_test_tensor_ids ((const gint64[]) { 0, 6, 3, 3 }, 4, HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) row = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2, 3), HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) row_target = hp_test_tensor_ids ((const gint64[]) { 2 }, 1, NULL, 0);
  g_autoptr(HpTensor) big = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1001, 1002, 1003, -998, -999, -1000),
                                            HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) big_targets = hp_test_tensor_ids ((const gint64[]) { 2, 0 }, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) ignored = hp_test_tensor_ids ((const gint64[]) { 0, 5, 5, 1 }, 4, HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) l_uniform = hp_tensor_cross_entropy (uniform, u_targets, -100, &error);
  g_autoptr(HpTensor) l_row = hp_tensor_cross_entropy (row, row_target, -100, &error);
  g_autoptr(HpTensor) l_big = hp_tensor_cross_entropy (big, big_targets, -100, &error);
  g_autoptr(HpTensor) l_ignored = hp_tensor_cross_entropy (uniform, ignored, 5, &error);
  gdouble lse = log (1 + exp (1.0) + exp (2.0));

  g_assert_no_error (error);
  /* uniform logits over C classes: log C */
  hp_test_assert_values (l_uniform, HP_TEST_DATA (log (7.0)), NULL, 0, 1e-7, 0);
  hp_test_assert_values (l_ignored, HP_TEST_DATA (log (7.0)), NULL, 0, 1e-7, 0);
  /* PyTorch: F.cross_entropy (tensor ([1., 2., 3.]), tensor (2)) = 0.4076 */
  hp_test_assert_values (l_row, HP_TEST_DATA (0.40760596444437), NULL, 0, 1e-13, 0);
  /* shifted by 1000 the rows are [0, 1, 2] with target 2 and [2, 1, 0]
   * with target 0: both lose lse - 2 */
  hp_test_assert_values (l_big, HP_TEST_DATA (lse - 2), NULL, 0, 2e-6, 0);
}

static void
test_cross_entropy_edges (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) logits = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 4), 91, TRUE);
  g_autoptr(HpTensor) all_ignored = hp_test_tensor_ids ((const gint64[]) { -1, -1, -1 }, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) no_rows = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0, 4));
  g_autoptr(HpTensor) no_targets = hp_test_tensor_ids (NULL, 0, HP_TEST_SHAPE (0));
  g_autoptr(HpTensor) masked = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (-INFINITY, 0, 0), HP_TEST_SHAPE (1, 3));
  g_autoptr(HpTensor) masked_target = hp_test_tensor_ids ((const gint64[]) { 2 }, 1, HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) l_all = hp_tensor_cross_entropy (logits, all_ignored, -1, &error);
  g_autoptr(HpTensor) l_none = hp_tensor_cross_entropy (no_rows, no_targets, -100, &error);
  g_autoptr(HpTensor) l_masked = hp_tensor_cross_entropy (masked, masked_target, -100, &error);
  g_autoptr(HpTensor) zeros = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 4));

  g_assert_no_error (error);
  /* every position ignored, or none at all: NaN as PyTorch */
  assert_all_nan (l_all);
  assert_all_nan (l_none);
  g_assert_cmpint (hp_tensor_get_dtype (l_none), ==, HP_DTYPE_FLOAT32);
  /* a -inf logit is a class of probability 0 */
  hp_test_assert_values (l_masked, HP_TEST_DATA (G_LN2), NULL, 0, 1e-15, 0);

  /* the gradient of an all-ignored loss is zero */
  g_assert_true (hp_tensor_backward (l_all, NULL, &error));
  g_assert_no_error (error);
  hp_test_assert_close (hp_tensor_get_grad (logits), zeros, 0, 0);
}

static void
test_cross_entropy_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) logits = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) scalar = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, NULL, 0);
  g_autoptr(HpTensor) good = hp_test_tensor_ids ((const gint64[]) { 0, 2 }, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) too_high = hp_test_tensor_ids ((const gint64[]) { 0, 3 }, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) negative = hp_test_tensor_ids ((const gint64[]) { -1, 0 }, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) wrong_shape = hp_test_tensor_ids ((const gint64[]) { 0, 1, 2 }, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) same_shape = hp_test_tensor_ids ((const gint64[]) { 0, 0, 0, 0, 0, 0 }, 6, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) float_targets = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2));

  hp_test_assert_error (hp_tensor_cross_entropy (logits, too_high, -100, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "cross_entropy: target 3 is outside [0, 3) and is not ignore_index -100");
  hp_test_assert_error (hp_tensor_cross_entropy (logits, negative, -100, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "cross_entropy: target -1 is outside [0, 3)");
  hp_test_assert_error (hp_tensor_cross_entropy (logits, wrong_shape, -100, &error), &error, HP_ERROR_SHAPE,
                        "cross_entropy: logits shape [2, 3] and targets shape [3] do not fit");
  hp_test_assert_error (hp_tensor_cross_entropy (logits, same_shape, -100, &error), &error, HP_ERROR_SHAPE,
                        "cross_entropy: logits shape [2, 3] and targets shape [2, 3] do not fit");
  hp_test_assert_error (hp_tensor_cross_entropy (scalar, good, -100, &error), &error, HP_ERROR_SHAPE,
                        "cross_entropy: logits shape [] and targets shape [2] do not fit");
  hp_test_assert_error (hp_tensor_cross_entropy (logits, float_targets, -100, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "cross_entropy: targets must be int64, got float32 [2]");
  hp_test_assert_error (hp_tensor_cross_entropy (good, good, -100, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "cross_entropy: needs a floating point tensor, got int64 [2]");
}

static void
test_cross_entropy_gradients (void)
{
  g_autoptr(GError) error = NULL;
  gint64 ignore_index = -100;
  g_autoptr(HpTensor) logits = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3, 4), 101, TRUE);
  g_autoptr(HpTensor) targets = hp_test_tensor_ids ((const gint64[]) { 1, -100, 3, 0, -100, 2 }, 6,
                                                    HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) row = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5), 102, TRUE);
  g_autoptr(HpTensor) row_target = hp_test_tensor_ids ((const gint64[]) { 4 }, 1, NULL, 0);
  g_autoptr(HpTensor) simple = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0, log (3.0), 1, 1),
                                               HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) simple_targets = hp_test_tensor_ids ((const gint64[]) { 1, -100 }, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) loss = NULL;
  HpTensor *inputs[] = { logits, targets };
  HpTensor *row_inputs[] = { row, row_target };

  hp_test_gradcheck ("cross_entropy", call_cross_entropy, &ignore_index, inputs, 2);
  hp_test_gradcheck ("cross_entropy 1-d", call_cross_entropy, &ignore_index, row_inputs, 2);
  check_float32_backward (call_cross_entropy, &ignore_index, inputs, 2);

  /* softmax [1/4, 3/4] minus onehot (1), over one kept row, times 2;
   * the ignored row gets zeros */
  hp_tensor_set_requires_grad (simple, TRUE);
  loss = hp_tensor_cross_entropy (simple, simple_targets, -100, &error);
  g_assert_no_error (error);
  {
    g_autoptr(HpTensor) two = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 2.0);

    g_assert_true (hp_tensor_backward (loss, two, &error));
    g_assert_no_error (error);
  }
  hp_test_assert_values (hp_tensor_get_grad (simple), HP_TEST_DATA (0.5, -0.5, 0, 0),
                         HP_TEST_SHAPE (2, 2), 1e-15, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/nn/softmax/values", test_softmax_values);
  g_test_add_func ("/nn/softmax/known", test_softmax_known);
  g_test_add_func ("/nn/softmax/large", test_softmax_large);
  g_test_add_func ("/nn/softmax/edges", test_softmax_edges);
  g_test_add_func ("/nn/softmax/gradients", test_softmax_gradients);
  g_test_add_func ("/nn/softmax/masked-gradient", test_softmax_masked_gradient);
  g_test_add_func ("/nn/rms-norm/values", test_rms_norm_values);
  g_test_add_func ("/nn/rms-norm/known", test_rms_norm_known);
  g_test_add_func ("/nn/rms-norm/edges", test_rms_norm_edges);
  g_test_add_func ("/nn/rms-norm/bad-input", test_rms_norm_bad_input);
  g_test_add_func ("/nn/rms-norm/gradients", test_rms_norm_gradients);
  g_test_add_func ("/nn/embedding/values", test_embedding_values);
  g_test_add_func ("/nn/embedding/bad-input", test_embedding_bad_input);
  g_test_add_func ("/nn/embedding/gradients", test_embedding_gradients);
  g_test_add_func ("/nn/rotary/values", test_rotary_values);
  g_test_add_func ("/nn/rotary/known", test_rotary_known);
  g_test_add_func ("/nn/rotary/bad-input", test_rotary_bad_input);
  g_test_add_func ("/nn/rotary/gradients", test_rotary_gradients);
  g_test_add_func ("/nn/cross-entropy/values", test_cross_entropy_values);
  g_test_add_func ("/nn/cross-entropy/known", test_cross_entropy_known);
  g_test_add_func ("/nn/cross-entropy/long-rows", test_cross_entropy_long_rows);
  g_test_add_func ("/nn/cross-entropy/edges", test_cross_entropy_edges);
  g_test_add_func ("/nn/cross-entropy/bad-input", test_cross_entropy_bad_input);
  g_test_add_func ("/nn/cross-entropy/gradients", test_cross_entropy_gradients);

  return g_test_run ();
}
