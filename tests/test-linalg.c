/* test-linalg.c: values and gradients of matmul and linear
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include "hp-test-utils.h"

static const HpDType float_dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64 };

typedef struct
{
  guint ndim;
  gint64 dims[5];
} Shape;

#define SHAPE(...) { sizeof ((const gint64[]) { __VA_ARGS__ }) / sizeof (gint64), { __VA_ARGS__ } }
#define SHAPE0 { 0, { 0 } }

static gdouble
tolerance (HpDType dtype)
{
  return dtype == HP_DTYPE_FLOAT32 ? 1e-5 : 1e-12;
}

/* The same values in another dtype */
static HpTensor *
convert (HpTensor *t,
         HpDType   dtype)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (t, &ndim);
  gsize n;
  g_autofree gdouble *values = hp_tensor_to_float64_array (t, &n);

  return hp_test_tensor (dtype, values, n, shape, ndim);
}

/* matmul by its definition, in double precision:
 * out[t.., i, j] = sum_p a[t.., i, p] b[t.., p, j], where the batch index
 * t of the output is read in a and b right-aligned, with their size-1
 * batch dims repeated. @out_shape is the expected shape of the result. */
static HpTensor *
reference_matmul (HpTensor     *a,
                  HpTensor     *b,
                  const gint64 *out_shape,
                  guint         out_ndim)
{
  guint a_ndim, b_ndim;
  const gint64 *as = hp_tensor_get_shape (a, &a_ndim);
  const gint64 *bs = hp_tensor_get_shape (b, &b_ndim);
  gsize n_a, n_b;
  g_autofree gdouble *av = hp_tensor_to_float64_array (a, &n_a);
  g_autofree gdouble *bv = hp_tensor_to_float64_array (b, &n_b);
  gint64 m = a_ndim == 1 ? 1 : as[a_ndim - 2];
  gint64 k = as[a_ndim - 1];
  gint64 n = b_ndim == 1 ? 1 : bs[b_ndim - 1];
  guint a_bnd = a_ndim > 2 ? a_ndim - 2 : 0;
  guint b_bnd = b_ndim > 2 ? b_ndim - 2 : 0;
  guint nb = out_ndim - (a_ndim > 1) - (b_ndim > 1);
  gint64 n_batch = 1;
  g_autofree gdouble *out = NULL;

  for (guint d = 0; d < nb; d++)
    n_batch *= out_shape[d];
  out = g_new0 (gdouble, MAX (n_batch * m * n, 1));

  for (gint64 t = 0; t < n_batch; t++)
    {
      gint64 idx[8];
      gint64 rest = t, ai = 0, bi = 0;

      for (guint d = nb; d-- > 0;)
        {
          idx[d] = rest % out_shape[d];
          rest /= out_shape[d];
        }
      for (guint j = 0; j < a_bnd; j++)
        ai = ai * as[j] + (as[j] == 1 ? 0 : idx[j + nb - a_bnd]);
      for (guint j = 0; j < b_bnd; j++)
        bi = bi * bs[j] + (bs[j] == 1 ? 0 : idx[j + nb - b_bnd]);

      for (gint64 i = 0; i < m; i++)
        for (gint64 j = 0; j < n; j++)
          {
            gdouble sum = 0.0;

            for (gint64 p = 0; p < k; p++)
              sum += av[(ai * m + i) * k + p] * bv[(bi * k + p) * n + j];
            out[(t * m + i) * n + j] = sum;
          }
    }

  return hp_test_tensor (HP_DTYPE_FLOAT64, out, n_batch * m * n, out_shape, out_ndim);
}

/* linear by its definition: out[r, o] = sum_i x[r, i] w[o, i] + bias[o] */
static HpTensor *
reference_linear (HpTensor *x,
                  HpTensor *w,
                  HpTensor *bias)
{
  guint x_ndim;
  const gint64 *xs = hp_tensor_get_shape (x, &x_ndim);
  const gint64 *ws = hp_tensor_get_shape (w, NULL);
  gsize n_x, n_w, n_b = 0;
  g_autofree gdouble *xv = hp_tensor_to_float64_array (x, &n_x);
  g_autofree gdouble *wv = hp_tensor_to_float64_array (w, &n_w);
  g_autofree gdouble *bv = bias != NULL ? hp_tensor_to_float64_array (bias, &n_b) : NULL;
  gint64 n_out = ws[0], n_in = ws[1];
  gint64 rows = 1;
  gint64 shape[8];
  g_autofree gdouble *out = NULL;

  for (guint d = 0; d + 1 < x_ndim; d++)
    rows *= xs[d];
  memcpy (shape, xs, x_ndim * sizeof (gint64));
  shape[x_ndim - 1] = n_out;
  out = g_new0 (gdouble, MAX (rows * n_out, 1));

  for (gint64 r = 0; r < rows; r++)
    for (gint64 o = 0; o < n_out; o++)
      {
        gdouble sum = bv != NULL ? bv[o] : 0.0;

        for (gint64 i = 0; i < n_in; i++)
          sum += xv[r * n_in + i] * wv[o * n_in + i];
        out[r * n_out + o] = sum;
      }

  return hp_test_tensor (HP_DTYPE_FLOAT64, out, rows * n_out, shape, x_ndim);
}

/* ---- matmul ------------------------------------------------------------ */

static void
test_matmul_values (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (float_dtypes); t++)
    {
      HpDType dtype = float_dtypes[t];
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) a = hp_test_tensor (dtype, HP_TEST_DATA (1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (2, 3));
      g_autoptr(HpTensor) b = hp_test_tensor (dtype, HP_TEST_DATA (7, 8, 9, 10, 11, 12), HP_TEST_SHAPE (3, 2));
      g_autoptr(HpTensor) v = hp_test_tensor (dtype, HP_TEST_DATA (1, 2, 3), HP_TEST_SHAPE (3));
      g_autoptr(HpTensor) ab = hp_tensor_matmul (a, b, &error);
      g_autoptr(HpTensor) ba = hp_tensor_matmul (b, a, &error);
      g_autoptr(HpTensor) vb = hp_tensor_matmul (v, b, &error);
      g_autoptr(HpTensor) av = hp_tensor_matmul (a, v, &error);
      g_autoptr(HpTensor) vv = hp_tensor_matmul (v, v, &error);

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (ab), ==, dtype);
      hp_test_assert_values (ab, HP_TEST_DATA (58, 64, 139, 154), HP_TEST_SHAPE (2, 2), 0, 0);
      hp_test_assert_values (ba, HP_TEST_DATA (39, 54, 69, 49, 68, 87, 59, 82, 105),
                             HP_TEST_SHAPE (3, 3), 0, 0);
      /* a 1-d operand loses its dim of 1 again */
      hp_test_assert_values (vb, HP_TEST_DATA (58, 64), HP_TEST_SHAPE (2), 0, 0);
      hp_test_assert_values (av, HP_TEST_DATA (14, 32), HP_TEST_SHAPE (2), 0, 0);
      hp_test_assert_values (vv, HP_TEST_DATA (14), NULL, 0, 0, 0);
      g_assert_false (hp_tensor_get_requires_grad (ab));
    }
}

typedef struct
{
  Shape a, b, out;
} MatmulCase;

static const MatmulCase broadcast_cases[] = {
  { SHAPE (2, 1, 3, 4), SHAPE (5, 4, 6), SHAPE (2, 5, 3, 6) },
  { SHAPE (3, 4), SHAPE (2, 4, 5), SHAPE (2, 3, 5) },
  { SHAPE (2, 3, 4), SHAPE (4, 5), SHAPE (2, 3, 5) },
  { SHAPE (2, 3, 4), SHAPE (1, 4, 5), SHAPE (2, 3, 5) },
  { SHAPE (1, 3, 4), SHAPE (2, 4, 5), SHAPE (2, 3, 5) },
  { SHAPE (2, 2, 3, 4), SHAPE (2, 2, 4, 5), SHAPE (2, 2, 3, 5) },
  { SHAPE (3, 1, 2, 4), SHAPE (1, 5, 4, 3), SHAPE (3, 5, 2, 3) },
  { SHAPE (4), SHAPE (2, 4, 5), SHAPE (2, 5) },
  { SHAPE (2, 3, 4), SHAPE (4), SHAPE (2, 3) },
  { SHAPE (1, 1, 4), SHAPE (4, 1), SHAPE (1, 1, 1) },
  { SHAPE (1, 4), SHAPE (4), SHAPE (1) },
  { SHAPE (4), SHAPE (4, 1), SHAPE (1) },
};

static void
test_matmul_broadcast (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (float_dtypes); t++)
    for (gsize i = 0; i < G_N_ELEMENTS (broadcast_cases); i++)
      {
        const MatmulCase *c = &broadcast_cases[i];
        HpDType dtype = float_dtypes[t];
        g_autoptr(GError) error = NULL;
        g_autoptr(HpTensor) a = hp_tensor_new_randn (dtype, c->a.dims, c->a.ndim, 10 + i);
        g_autoptr(HpTensor) b = hp_tensor_new_randn (dtype, c->b.dims, c->b.ndim, 20 + i);
        g_autoptr(HpTensor) want = reference_matmul (a, b, c->out.dims, c->out.ndim);
        g_autoptr(HpTensor) got = hp_tensor_matmul (a, b, &error);

        g_assert_no_error (error);
        hp_test_assert_shape (got, c->out.dims, c->out.ndim);
        hp_test_assert_close (got, want, tolerance (dtype), tolerance (dtype));
      }
}

static const MatmulCase empty_cases[] = {
  { SHAPE (0, 3), SHAPE (3, 4), SHAPE (0, 4) },
  { SHAPE (2, 0), SHAPE (0, 3), SHAPE (2, 3) },
  { SHAPE (2, 3), SHAPE (3, 0), SHAPE (2, 0) },
  { SHAPE (0, 2, 3), SHAPE (3, 4), SHAPE (0, 2, 4) },
  { SHAPE (1, 0, 3), SHAPE (4, 3, 5), SHAPE (4, 0, 5) },
  { SHAPE (2, 2, 0), SHAPE (2, 0, 3), SHAPE (2, 2, 3) },
  { SHAPE (2, 0), SHAPE (3, 0, 4), SHAPE (3, 2, 4) },
  { SHAPE (2, 3), SHAPE (0, 3, 4), SHAPE (0, 2, 4) },
  { SHAPE (0), SHAPE (0), SHAPE0 },
  { SHAPE (2, 0), SHAPE (0), SHAPE (2) },
};

static void
test_matmul_empty (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (float_dtypes); t++)
    for (gsize i = 0; i < G_N_ELEMENTS (empty_cases); i++)
      {
        const MatmulCase *c = &empty_cases[i];
        HpDType dtype = float_dtypes[t];
        g_autoptr(GError) error = NULL;
        g_autoptr(HpTensor) a = hp_tensor_new_ones (dtype, c->a.dims, c->a.ndim);
        g_autoptr(HpTensor) b = hp_tensor_new_ones (dtype, c->b.dims, c->b.ndim);
        g_autoptr(HpTensor) zeros = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, c->out.dims, c->out.ndim);
        g_autoptr(HpTensor) got = hp_tensor_matmul (a, b, &error);

        /* an inner size of 0 sums nothing: every element is 0 */
        g_assert_no_error (error);
        hp_test_assert_close (got, zeros, 0, 0);
      }
}

static void
test_matmul_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT32, NULL, 0, 2.0);
  g_autoptr(HpTensor) v3 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) v4 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) a = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) b = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (4, 5));
  g_autoptr(HpTensor) c = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 2));
  g_autoptr(HpTensor) a3 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3, 4));
  g_autoptr(HpTensor) b3 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (5, 4, 6));
  g_autoptr(HpTensor) c3 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 4, 5));
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 1, 2, 3, 4 }, 4, HP_TEST_SHAPE (2, 2));

  hp_test_assert_error (hp_tensor_matmul (scalar, v3, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "matmul: both operands need at least 1 dim, got [] and [3]");
  hp_test_assert_error (hp_tensor_matmul (v3, scalar, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "matmul: both operands need at least 1 dim, got [3] and []");
  hp_test_assert_error (hp_tensor_matmul (ids, ids, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "matmul: needs a floating point tensor, got int64 [2, 2]");
  hp_test_assert_error (hp_tensor_matmul (a, c, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "matmul: dtypes differ (float32 [2, 3] and float64 [3, 2])");
  hp_test_assert_error (hp_tensor_matmul (a, b, &error), &error, HP_ERROR_SHAPE,
                        "matmul: shapes [2, 3] and [4, 5] do not fit (3 != 4)");
  hp_test_assert_error (hp_tensor_matmul (v3, v4, &error), &error, HP_ERROR_SHAPE,
                        "matmul: shapes [3] and [4] do not fit (3 != 4)");
  hp_test_assert_error (hp_tensor_matmul (a, v4, &error), &error, HP_ERROR_SHAPE,
                        "matmul: shapes [2, 3] and [4] do not fit (3 != 4)");
  hp_test_assert_error (hp_tensor_matmul (v3, c3, &error), &error, HP_ERROR_SHAPE,
                        "matmul: shapes [3] and [2, 4, 5] do not fit (3 != 4)");
  hp_test_assert_error (hp_tensor_matmul (a3, b3, &error), &error, HP_ERROR_SHAPE,
                        "matmul: shapes [2, 3, 4] and [5, 4, 6] do not fit "
                        "(batch dims [2] and [5] cannot be broadcast together)");
}

static HpTensor *
call_matmul (HpTensor **inputs,
             gpointer   user_data,
             GError   **error)
{
  return hp_tensor_matmul (inputs[0], inputs[1], error);
}

static const MatmulCase gradient_cases[] = {
  { SHAPE (3, 4), SHAPE (4, 2), SHAPE (3, 2) },
  { SHAPE (2, 1, 3, 4), SHAPE (5, 4, 6), SHAPE (2, 5, 3, 6) },
  { SHAPE (3, 4), SHAPE (2, 4, 5), SHAPE (2, 3, 5) },
  { SHAPE (2, 3, 4), SHAPE (4, 5), SHAPE (2, 3, 5) },
  { SHAPE (2, 3, 4), SHAPE (1, 4, 5), SHAPE (2, 3, 5) },
  { SHAPE (2, 2, 3, 4), SHAPE (2, 2, 4, 5), SHAPE (2, 2, 3, 5) },
  { SHAPE (3, 1, 2, 4), SHAPE (1, 5, 4, 3), SHAPE (3, 5, 2, 3) },
  { SHAPE (4), SHAPE (4, 3), SHAPE (3) },
  { SHAPE (3, 4), SHAPE (4), SHAPE (3) },
  { SHAPE (4), SHAPE (4), SHAPE0 },
  { SHAPE (4), SHAPE (2, 4, 5), SHAPE (2, 5) },
  { SHAPE (2, 3, 4), SHAPE (4), SHAPE (2, 3) },
  { SHAPE (0, 3), SHAPE (3, 4), SHAPE (0, 4) },
  { SHAPE (2, 0), SHAPE (0, 3), SHAPE (2, 3) },
  { SHAPE (1, 0, 3), SHAPE (4, 3, 5), SHAPE (4, 0, 5) },
  { SHAPE (2, 3), SHAPE (0, 3, 4), SHAPE (0, 2, 4) },
};

static void
test_matmul_gradients (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (gradient_cases); i++)
    {
      const MatmulCase *c = &gradient_cases[i];
      g_autofree gchar *name = g_strdup_printf ("matmul case %" G_GSIZE_FORMAT, i);

      /* both inputs, then each one alone */
      for (int which = 0; which < 3; which++)
        {
          g_autoptr(HpTensor) a = hp_test_randn (HP_DTYPE_FLOAT64, c->a.dims, c->a.ndim, 30 + i, which != 2);
          g_autoptr(HpTensor) b = hp_test_randn (HP_DTYPE_FLOAT64, c->b.dims, c->b.ndim, 40 + i, which != 1);
          HpTensor *inputs[] = { a, b };

          hp_test_gradcheck (name, call_matmul, NULL, inputs, 2);
          if (which == 1)
            g_assert_null (hp_tensor_get_grad (b));
          if (which == 2)
            g_assert_null (hp_tensor_get_grad (a));
        }
    }
}

/* The float32 backward gives the gradients of the float64 one */
static void
test_matmul_float32_backward (void)
{
  static const MatmulCase cases[] = {
    { SHAPE (2, 1, 3, 4), SHAPE (5, 4, 6), SHAPE (2, 5, 3, 6) },
    { SHAPE (2, 3, 4), SHAPE (4, 5), SHAPE (2, 3, 5) },
    { SHAPE (4), SHAPE (2, 4, 5), SHAPE (2, 5) },
    { SHAPE (2, 3, 4), SHAPE (4), SHAPE (2, 3) },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const MatmulCase *c = &cases[i];
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) a64 = hp_test_randn (HP_DTYPE_FLOAT64, c->a.dims, c->a.ndim, 50 + i, TRUE);
      g_autoptr(HpTensor) b64 = hp_test_randn (HP_DTYPE_FLOAT64, c->b.dims, c->b.ndim, 60 + i, TRUE);
      g_autoptr(HpTensor) g64 = hp_tensor_new_randn (HP_DTYPE_FLOAT64, c->out.dims, c->out.ndim, 70 + i);
      g_autoptr(HpTensor) a32 = convert (a64, HP_DTYPE_FLOAT32);
      g_autoptr(HpTensor) b32 = convert (b64, HP_DTYPE_FLOAT32);
      g_autoptr(HpTensor) g32 = convert (g64, HP_DTYPE_FLOAT32);
      g_autoptr(HpTensor) out64 = hp_tensor_matmul (a64, b64, &error);
      g_autoptr(HpTensor) out32 = NULL;

      g_assert_no_error (error);
      hp_tensor_set_requires_grad (a32, TRUE);
      hp_tensor_set_requires_grad (b32, TRUE);
      out32 = hp_tensor_matmul (a32, b32, &error);
      g_assert_no_error (error);
      g_assert_true (hp_tensor_backward (out64, g64, &error));
      g_assert_true (hp_tensor_backward (out32, g32, &error));
      g_assert_no_error (error);

      g_assert_cmpint (hp_tensor_get_dtype (hp_tensor_get_grad (a32)), ==, HP_DTYPE_FLOAT32);
      hp_test_assert_close (hp_tensor_get_grad (a32), hp_tensor_get_grad (a64), 1e-5, 1e-5);
      hp_test_assert_close (hp_tensor_get_grad (b32), hp_tensor_get_grad (b64), 1e-5, 1e-5);
    }
}

/* ---- linear ------------------------------------------------------------ */

static void
test_linear_values (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (float_dtypes); t++)
    {
      HpDType dtype = float_dtypes[t];
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) x = hp_test_tensor (dtype, HP_TEST_DATA (1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (2, 3));
      g_autoptr(HpTensor) w = hp_test_tensor (dtype, HP_TEST_DATA (1, 0, -1, 2, 1, 0), HP_TEST_SHAPE (2, 3));
      g_autoptr(HpTensor) bias = hp_test_tensor (dtype, HP_TEST_DATA (10, 20), HP_TEST_SHAPE (2));
      g_autoptr(HpTensor) v = hp_test_tensor (dtype, HP_TEST_DATA (1, 2, 3), HP_TEST_SHAPE (3));
      g_autoptr(HpTensor) with_bias = hp_tensor_linear (x, w, bias, &error);
      g_autoptr(HpTensor) without = hp_tensor_linear (x, w, NULL, &error);
      g_autoptr(HpTensor) vec = hp_tensor_linear (v, w, bias, &error);
      g_autoptr(HpTensor) x3 = hp_tensor_new_randn (dtype, HP_TEST_SHAPE (2, 3, 4), 1);
      g_autoptr(HpTensor) w3 = hp_tensor_new_randn (dtype, HP_TEST_SHAPE (5, 4), 2);
      g_autoptr(HpTensor) b3 = hp_tensor_new_randn (dtype, HP_TEST_SHAPE (5), 3);
      g_autoptr(HpTensor) got3 = hp_tensor_linear (x3, w3, b3, &error);
      g_autoptr(HpTensor) want3 = reference_linear (x3, w3, b3);

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (with_bias), ==, dtype);
      hp_test_assert_values (with_bias, HP_TEST_DATA (8, 24, 8, 33), HP_TEST_SHAPE (2, 2), 0, 0);
      hp_test_assert_values (without, HP_TEST_DATA (-2, 4, -2, 13), HP_TEST_SHAPE (2, 2), 0, 0);
      hp_test_assert_values (vec, HP_TEST_DATA (8, 24), HP_TEST_SHAPE (2), 0, 0);
      hp_test_assert_shape (got3, HP_TEST_SHAPE (2, 3, 5));
      hp_test_assert_close (got3, want3, tolerance (dtype), tolerance (dtype));
    }
}

static void
test_linear_empty (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (float_dtypes); t++)
    {
      HpDType dtype = float_dtypes[t];
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) no_rows = hp_tensor_new_ones (dtype, HP_TEST_SHAPE (0, 3));
      g_autoptr(HpTensor) no_rows3 = hp_tensor_new_ones (dtype, HP_TEST_SHAPE (2, 0, 3));
      g_autoptr(HpTensor) w = hp_tensor_new_ones (dtype, HP_TEST_SHAPE (2, 3));
      g_autoptr(HpTensor) no_in = hp_tensor_new_ones (dtype, HP_TEST_SHAPE (2, 0));
      g_autoptr(HpTensor) w_no_in = hp_tensor_new_ones (dtype, HP_TEST_SHAPE (3, 0));
      g_autoptr(HpTensor) bias = hp_test_tensor (dtype, HP_TEST_DATA (1, 2, 3), HP_TEST_SHAPE (3));
      g_autoptr(HpTensor) x = hp_tensor_new_ones (dtype, HP_TEST_SHAPE (2, 3));
      g_autoptr(HpTensor) w_no_out = hp_tensor_new_ones (dtype, HP_TEST_SHAPE (0, 3));
      g_autoptr(HpTensor) r1 = hp_tensor_linear (no_rows, w, NULL, &error);
      g_autoptr(HpTensor) r2 = hp_tensor_linear (no_rows3, w, NULL, &error);
      g_autoptr(HpTensor) r3 = hp_tensor_linear (no_in, w_no_in, bias, &error);
      g_autoptr(HpTensor) r4 = hp_tensor_linear (no_in, w_no_in, NULL, &error);
      g_autoptr(HpTensor) r5 = hp_tensor_linear (x, w_no_out, NULL, &error);

      g_assert_no_error (error);
      hp_test_assert_shape (r1, HP_TEST_SHAPE (0, 2));
      hp_test_assert_shape (r2, HP_TEST_SHAPE (2, 0, 2));
      /* no inputs: each row is the bias alone */
      hp_test_assert_values (r3, HP_TEST_DATA (1, 2, 3, 1, 2, 3), HP_TEST_SHAPE (2, 3), 0, 0);
      hp_test_assert_values (r4, HP_TEST_DATA (0, 0, 0, 0, 0, 0), HP_TEST_SHAPE (2, 3), 0, 0);
      hp_test_assert_shape (r5, HP_TEST_SHAPE (2, 0));
    }
}

static void
test_linear_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT32, NULL, 0, 2.0);
  g_autoptr(HpTensor) x = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) w = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) w4 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 4));
  g_autoptr(HpTensor) w1 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) w3 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 2, 3));
  g_autoptr(HpTensor) w64 = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) b3 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) b12 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 2));
  g_autoptr(HpTensor) b64 = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 1, 2, 3 }, 3, HP_TEST_SHAPE (3));

  hp_test_assert_error (hp_tensor_linear (scalar, w, NULL, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "linear: input needs at least 1 dim, got []");
  hp_test_assert_error (hp_tensor_linear (ids, w, NULL, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "linear: needs a floating point tensor, got int64 [3]");
  hp_test_assert_error (hp_tensor_linear (x, w64, NULL, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "linear: dtypes differ (float32 [2, 3] and float64 [2, 3])");
  hp_test_assert_error (hp_tensor_linear (x, w, b64, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "linear: dtypes differ (float32 [2, 3] and float64 [2])");
  hp_test_assert_error (hp_tensor_linear (x, w1, NULL, &error), &error, HP_ERROR_SHAPE,
                        "linear: weight must be 2-d [out, in], got [3]");
  hp_test_assert_error (hp_tensor_linear (x, w3, NULL, &error), &error, HP_ERROR_SHAPE,
                        "linear: weight must be 2-d [out, in], got [1, 2, 3]");
  hp_test_assert_error (hp_tensor_linear (x, w4, NULL, &error), &error, HP_ERROR_SHAPE,
                        "linear: input [2, 3] and weight [2, 4] do not fit (3 != 4)");
  hp_test_assert_error (hp_tensor_linear (x, w, b3, &error), &error, HP_ERROR_SHAPE,
                        "linear: bias [3] does not fit weight [2, 3] (needs [2])");
  hp_test_assert_error (hp_tensor_linear (x, w, b12, &error), &error, HP_ERROR_SHAPE,
                        "linear: bias [1, 2] does not fit weight [2, 3] (needs [2])");
}

static HpTensor *
call_linear (HpTensor **inputs,
             gpointer   user_data,
             GError   **error)
{
  return hp_tensor_linear (inputs[0], inputs[1], inputs[2], error);
}

typedef struct
{
  Shape x, w;
  gboolean bias;
} LinearCase;

static const LinearCase linear_cases[] = {
  { SHAPE (3, 4), SHAPE (2, 4), TRUE },
  { SHAPE (3, 4), SHAPE (2, 4), FALSE },
  { SHAPE (2, 3, 4), SHAPE (5, 4), TRUE },
  { SHAPE (2, 3, 4), SHAPE (5, 4), FALSE },
  { SHAPE (4), SHAPE (3, 4), TRUE },
  { SHAPE (4), SHAPE (3, 4), FALSE },
  { SHAPE (0, 4), SHAPE (3, 4), TRUE },
  { SHAPE (3, 0), SHAPE (2, 0), TRUE },
};

static void
test_linear_gradients (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (linear_cases); i++)
    {
      const LinearCase *c = &linear_cases[i];
      g_autofree gchar *name = g_strdup_printf ("linear case %" G_GSIZE_FORMAT, i);

      /* every input, then the weight alone */
      for (int which = 0; which < 2; which++)
        {
          g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, c->x.dims, c->x.ndim, 80 + i, which == 0);
          g_autoptr(HpTensor) w = hp_test_randn (HP_DTYPE_FLOAT64, c->w.dims, c->w.ndim, 90 + i, TRUE);
          g_autoptr(HpTensor) b = c->bias ? hp_test_randn (HP_DTYPE_FLOAT64, c->w.dims, 1, 100 + i, which == 0) : NULL;
          HpTensor *inputs[] = { x, w, b };

          hp_test_gradcheck (name, call_linear, NULL, inputs, 3);
          if (which == 1)
            {
              g_assert_null (hp_tensor_get_grad (x));
              if (b != NULL)
                g_assert_null (hp_tensor_get_grad (b));
            }
        }
    }
}

static void
test_linear_float32_backward (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x64 = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3, 4), 1, TRUE);
  g_autoptr(HpTensor) w64 = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 4), 2, TRUE);
  g_autoptr(HpTensor) b64 = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5), 3, TRUE);
  g_autoptr(HpTensor) g64 = hp_tensor_new_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3, 5), 4);
  g_autoptr(HpTensor) x32 = convert (x64, HP_DTYPE_FLOAT32);
  g_autoptr(HpTensor) w32 = convert (w64, HP_DTYPE_FLOAT32);
  g_autoptr(HpTensor) b32 = convert (b64, HP_DTYPE_FLOAT32);
  g_autoptr(HpTensor) g32 = convert (g64, HP_DTYPE_FLOAT32);
  g_autoptr(HpTensor) out64 = hp_tensor_linear (x64, w64, b64, &error);
  g_autoptr(HpTensor) out32 = NULL;

  g_assert_no_error (error);
  hp_tensor_set_requires_grad (x32, TRUE);
  hp_tensor_set_requires_grad (w32, TRUE);
  hp_tensor_set_requires_grad (b32, TRUE);
  out32 = hp_tensor_linear (x32, w32, b32, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (out64, g64, &error));
  g_assert_true (hp_tensor_backward (out32, g32, &error));
  g_assert_no_error (error);

  g_assert_cmpint (hp_tensor_get_dtype (hp_tensor_get_grad (b32)), ==, HP_DTYPE_FLOAT32);
  hp_test_assert_close (hp_tensor_get_grad (x32), hp_tensor_get_grad (x64), 1e-5, 1e-5);
  hp_test_assert_close (hp_tensor_get_grad (w32), hp_tensor_get_grad (w64), 1e-5, 1e-5);
  hp_test_assert_close (hp_tensor_get_grad (b32), hp_tensor_get_grad (b64), 1e-5, 1e-5);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/linalg/matmul/values", test_matmul_values);
  g_test_add_func ("/linalg/matmul/broadcast", test_matmul_broadcast);
  g_test_add_func ("/linalg/matmul/empty", test_matmul_empty);
  g_test_add_func ("/linalg/matmul/bad-input", test_matmul_bad_input);
  g_test_add_func ("/linalg/matmul/gradients", test_matmul_gradients);
  g_test_add_func ("/linalg/matmul/float32-backward", test_matmul_float32_backward);
  g_test_add_func ("/linalg/linear/values", test_linear_values);
  g_test_add_func ("/linalg/linear/empty", test_linear_empty);
  g_test_add_func ("/linalg/linear/bad-input", test_linear_bad_input);
  g_test_add_func ("/linalg/linear/gradients", test_linear_gradients);
  g_test_add_func ("/linalg/linear/float32-backward", test_linear_float32_backward);

  return g_test_run ();
}
