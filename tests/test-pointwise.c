/* test-pointwise.c: values and gradients of the element-wise ops
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>

#include "hp-test-utils.h"
#include "hp-tensor-private.h"

typedef HpTensor *(*BinaryFunc) (HpTensor *, HpTensor *, GError **);
typedef HpTensor *(*UnaryFunc) (HpTensor *, GError **);

static HpTensor *
call_binary (HpTensor **inputs,
             gpointer   user_data,
             GError   **error)
{
  BinaryFunc func = user_data;

  return func (inputs[0], inputs[1], error);
}

static HpTensor *
call_unary (HpTensor **inputs,
            gpointer   user_data,
            GError   **error)
{
  UnaryFunc func = user_data;

  return func (inputs[0], error);
}

static void
test_add_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) a = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) b = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (10, 20, 30), HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) c = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (100, 200), HP_TEST_SHAPE (2, 1));
  g_autoptr(HpTensor) ab = hp_tensor_add (a, b, &error);
  g_autoptr(HpTensor) ac = NULL;
  g_autoptr(HpTensor) bc = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (ab), ==, HP_DTYPE_FLOAT32);
  hp_test_assert_values (ab, HP_TEST_DATA (11, 22, 33, 14, 25, 36), HP_TEST_SHAPE (2, 3), 0, 0);

  ac = hp_tensor_add (a, c, &error);
  g_assert_no_error (error);
  hp_test_assert_values (ac, HP_TEST_DATA (101, 102, 103, 204, 205, 206), HP_TEST_SHAPE (2, 3), 0, 0);

  /* both sides broadcast: [3] + [2, 1] -> [2, 3] */
  bc = hp_tensor_add (b, c, &error);
  g_assert_no_error (error);
  hp_test_assert_values (bc, HP_TEST_DATA (110, 120, 130, 210, 220, 230), HP_TEST_SHAPE (2, 3), 0, 0);
}

static void
test_binary_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) a = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2, 3, 4), HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) s = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (2), HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) sub = hp_tensor_sub (a, s, &error);
  g_autoptr(HpTensor) mul = hp_tensor_mul (a, s, &error);
  g_autoptr(HpTensor) div = hp_tensor_div (s, a, &error);

  g_assert_no_error (error);
  hp_test_assert_values (sub, HP_TEST_DATA (-1, 0, 1, 2), HP_TEST_SHAPE (2, 2), 0, 0);
  hp_test_assert_values (mul, HP_TEST_DATA (2, 4, 6, 8), HP_TEST_SHAPE (2, 2), 0, 0);
  hp_test_assert_values (div, HP_TEST_DATA (2, 1, 2.0 / 3.0, 0.5), HP_TEST_SHAPE (2, 2), 1e-15, 0);
}

static void
test_int64 (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) a = hp_test_tensor_ids ((const gint64[]) { 1, 2, 3 }, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) sum = hp_tensor_add (a, a, &error);
  g_autoptr(HpTensor) prod = hp_tensor_mul (a, a, &error);
  g_autoptr(HpTensor) neg = hp_tensor_neg (a, &error);

  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (sum), ==, HP_DTYPE_INT64);
  hp_test_assert_values (sum, HP_TEST_DATA (2, 4, 6), HP_TEST_SHAPE (3), 0, 0);
  hp_test_assert_values (prod, HP_TEST_DATA (1, 4, 9), HP_TEST_SHAPE (3), 0, 0);
  hp_test_assert_values (neg, HP_TEST_DATA (-1, -2, -3), HP_TEST_SHAPE (3), 0, 0);

  hp_test_assert_error (hp_tensor_div (a, a, &error), &error, HP_ERROR_INVALID_ARGUMENT, "div");
  hp_test_assert_error (hp_tensor_exp (a, &error), &error, HP_ERROR_INVALID_ARGUMENT, "int64");
}

static void
test_edge_shapes (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0, 3));
  g_autoptr(HpTensor) row = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 3));
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT32, NULL, 0, 2.5);
  g_autoptr(HpTensor) r1 = hp_tensor_add (empty, row, &error);
  g_autoptr(HpTensor) r2 = hp_tensor_mul (row, scalar, &error);
  g_autoptr(HpTensor) r3 = hp_tensor_add (scalar, scalar, &error);

  g_assert_no_error (error);
  hp_test_assert_shape (r1, HP_TEST_SHAPE (0, 3));
  hp_test_assert_values (r2, HP_TEST_DATA (2.5, 2.5, 2.5), HP_TEST_SHAPE (1, 3), 0, 0);
  hp_test_assert_shape (r3, NULL, 0);
  g_assert_cmpfloat (hp_tensor_item (r3, &error), ==, 5.0);
}

static void
test_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) a = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) b = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) c = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3));

  hp_test_assert_error (hp_tensor_add (a, b, &error), &error, HP_ERROR_SHAPE,
                        "add: shapes [2, 3] and [4] cannot be broadcast together");
  hp_test_assert_error (hp_tensor_mul (a, c, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "mul: dtypes differ (float32 [2, 3] and float64 [2, 3])");
  hp_test_assert_error (hp_tensor_sub (b, a, &error), &error, HP_ERROR_SHAPE,
                        "sub: shapes [4] and [2, 3] cannot be broadcast together");
  hp_test_assert_error (hp_tensor_div (c, b, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "div: dtypes differ (float64 [2, 3] and float32 [4])");
  /* the inputs are as they were */
  hp_test_assert_values (a, HP_TEST_DATA (0, 0, 0, 0, 0, 0), HP_TEST_SHAPE (2, 3), 0, 0);
  hp_test_assert_values (b, HP_TEST_DATA (0, 0, 0, 0), HP_TEST_SHAPE (4), 0, 0);
  g_assert_cmpint (hp_tensor_get_dtype (c), ==, HP_DTYPE_FLOAT64);
}

/* The unary ops but neg need floating point tensors */
static void
test_unary_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { -1, 0, 2 }, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_INT64, HP_TEST_SHAPE (0, 2));

  hp_test_assert_error (hp_tensor_scale (ids, 2.0, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "scale: needs a floating point tensor, got int64 [3]");
  hp_test_assert_error (hp_tensor_exp (ids, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "exp: needs a floating point tensor, got int64 [3]");
  hp_test_assert_error (hp_tensor_silu (ids, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "silu: needs a floating point tensor, got int64 [3]");
  hp_test_assert_error (hp_tensor_gelu (ids, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "gelu: needs a floating point tensor, got int64 [3]");
  hp_test_assert_error (hp_tensor_relu (ids, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "relu: needs a floating point tensor, got int64 [3]");
  /* even without elements */
  hp_test_assert_error (hp_tensor_relu (empty, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "relu: needs a floating point tensor, got int64 [0, 2]");
  hp_test_assert_values (ids, HP_TEST_DATA (-1, 0, 2), HP_TEST_SHAPE (3), 0, 0);
  g_assert_false (hp_tensor_get_requires_grad (ids));
}

/* hp_tensor_neg() has no input it refuses (every dtype negates): the
 * inputs that the other unary ops refuse, and the edge shapes, give a
 * result and leave the input as it was */
static void
test_neg_any_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { G_MAXINT64, 0, -7 }, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 0));
  g_autoptr(HpTensor) odd = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (NAN, INFINITY, -0.0),
                                            HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) neg_ids = hp_tensor_neg (ids, &error);
  g_autoptr(HpTensor) neg_empty = hp_tensor_neg (empty, &error);
  g_autoptr(HpTensor) neg_odd = hp_tensor_neg (odd, &error);
  g_autofree gdouble *values = NULL;
  gsize n;

  g_assert_no_error (error);
  hp_test_assert_values (neg_ids, HP_TEST_DATA (-G_MAXINT64, 0, 7), HP_TEST_SHAPE (3), 0, 0);
  hp_test_assert_values (ids, HP_TEST_DATA (G_MAXINT64, 0, -7), HP_TEST_SHAPE (3), 0, 0);
  hp_test_assert_shape (neg_empty, HP_TEST_SHAPE (2, 0));
  values = hp_tensor_to_float64_array (neg_odd, &n);
  g_assert_cmpuint (n, ==, 3);
  g_assert_true (isnan (values[0]));
  g_assert_cmpfloat (values[1], ==, -INFINITY);
  g_assert_false (signbit (values[2]));
  g_clear_pointer (&values, g_free);
  values = hp_tensor_to_float64_array (odd, &n);
  g_assert_true (isnan (values[0]));
  g_assert_cmpfloat (values[1], ==, INFINITY);
  g_assert_true (signbit (values[2]));
}

/* The same-shape path works in blocks of 16 elements and a tail: 37
 * elements have both, in every dtype */
static void
test_same_shape_blocks (void)
{
  static const HpDType dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64, HP_DTYPE_INT64 };
  static const struct { const gchar *name; BinaryFunc func; } ops[] = {
    { "add", hp_tensor_add },
    { "sub", hp_tensor_sub },
    { "mul", hp_tensor_mul },
    { "div", hp_tensor_div },
  };
  gdouble av[37], bv[37];
  gint64 ai[37], bi[37];

  for (int i = 0; i < 37; i++)
    {
      ai[i] = 3 * i - 50;
      bi[i] = i % 5 + 1;
      av[i] = ai[i] * 0.25;
      bv[i] = bi[i] * 0.5;
    }

  for (gsize t = 0; t < G_N_ELEMENTS (dtypes); t++)
    for (gsize o = 0; o < G_N_ELEMENTS (ops); o++)
      {
        HpDType dtype = dtypes[t];
        gboolean ints = dtype == HP_DTYPE_INT64;
        g_autoptr(GError) error = NULL;
        g_autoptr(HpTensor) a = ints ? hp_test_tensor_ids (ai, 37, HP_TEST_SHAPE (37))
                                     : hp_test_tensor (dtype, av, 37, HP_TEST_SHAPE (37));
        g_autoptr(HpTensor) b = ints ? hp_test_tensor_ids (bi, 37, HP_TEST_SHAPE (37))
                                     : hp_test_tensor (dtype, bv, 37, HP_TEST_SHAPE (37));
        g_autoptr(HpTensor) got = NULL;
        gdouble want[37];

        if (ints && o == 3)
          continue;
        for (int i = 0; i < 37; i++)
          {
            gdouble x = ints ? ai[i] : av[i];
            gdouble y = ints ? bi[i] : bv[i];

            want[i] = o == 0 ? x + y : o == 1 ? x - y : o == 2 ? x * y : x / y;
          }

        got = ops[o].func (a, b, &error);
        g_assert_no_error (error);
        g_assert_cmpint (hp_tensor_get_dtype (got), ==, dtype);
        hp_test_assert_values (got, want, 37, HP_TEST_SHAPE (37), 1e-7, 0);
      }
}

/* Large outputs (from 128 KiB) reuse the buffers of freed tensors of the same
 * size (hp-storage.c), never one still in use */
static void
test_large_same_shape (void)
{
  const gint64 shape[] = { 512, 1024 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) a = hp_tensor_new_uniform (HP_DTYPE_FLOAT32, shape, 2, -1.0, 1.0, 1);
  g_autoptr(HpTensor) b = hp_tensor_new_uniform (HP_DTYPE_FLOAT32, shape, 2, 0.5, 2.0, 2);
  g_autoptr(HpTensor) sum = NULL;
  g_autoptr(HpTensor) prod = NULL;
  g_autoptr(HpTensor) diff = NULL;
  g_autoptr(HpTensor) quot = NULL;
  g_autoptr(GBytes) kept = NULL;
  g_autoptr(GBytes) kept_copy = NULL;
  g_autoptr(GBytes) prod_bytes = NULL;
  gsize n_a, n_b;
  g_autofree gdouble *av = hp_tensor_to_float64_array (a, &n_a);
  g_autofree gdouble *bv = hp_tensor_to_float64_array (b, &n_b);
  g_autofree gdouble *want_sum = g_new (gdouble, n_a);
  g_autofree gdouble *want_prod = g_new (gdouble, n_a);
  g_autofree gdouble *want_diff = g_new (gdouble, n_a);
  g_autofree gdouble *want_quot = g_new (gdouble, n_a);
  gconstpointer freed_data;

  for (gsize i = 0; i < n_a; i++)
    {
      want_sum[i] = (gfloat) (av[i] + bv[i]);
      want_prod[i] = (gfloat) (av[i] * bv[i]);
      want_diff[i] = (gfloat) (av[i] - bv[i]);
      want_quot[i] = (gfloat) (av[i] / bv[i]);
    }

  sum = hp_tensor_add (a, b, &error);
  g_assert_no_error (error);
  hp_test_assert_values (sum, want_sum, n_a, shape, 2, 0, 0);
  kept = hp_tensor_get_bytes (sum);
  kept_copy = g_bytes_new (g_bytes_get_data (kept, NULL), g_bytes_get_size (kept));
  g_clear_object (&sum);

  /* the buffer of sum lives on in kept: prod must not take it */
  prod = hp_tensor_mul (a, b, &error);
  g_assert_no_error (error);
  hp_test_assert_values (prod, want_prod, n_a, shape, 2, 0, 0);
  g_assert_true (g_bytes_equal (kept, kept_copy));

  /* once prod is freed, its buffer serves diff */
  prod_bytes = hp_tensor_get_bytes (prod);
  freed_data = g_bytes_get_data (prod_bytes, NULL);
  g_clear_pointer (&prod_bytes, g_bytes_unref);
  g_clear_object (&prod);
  diff = hp_tensor_sub (a, b, &error);
  g_assert_no_error (error);
  hp_test_assert_values (diff, want_diff, n_a, shape, 2, 0, 0);
  {
    g_autoptr(GBytes) diff_bytes = hp_tensor_get_bytes (diff);
    g_assert_true (g_bytes_get_data (diff_bytes, NULL) == freed_data);
  }

  /* two large outputs alive at once have their own buffers */
  quot = hp_tensor_div (a, b, &error);
  g_assert_no_error (error);
  hp_test_assert_values (quot, want_quot, n_a, shape, 2, 0, 0);
  hp_test_assert_values (diff, want_diff, n_a, shape, 2, 0, 0);
}

static gconstpointer
data_of (HpTensor *t)
{
  g_autoptr(GBytes) bytes = hp_tensor_get_bytes (t);

  return g_bytes_get_data (bytes, NULL);
}

/* The buffer cache follows the sizes in use: after many more sizes than
 * it has slots have come and gone, the buffer freed last still serves
 * the next tensor of its size */
static void
test_buffer_cache_follows_sizes (void)
{
  g_autoptr(GPtrArray) alive = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(HpTensor) again = NULL;
  const gint n = 40;
  const gint64 last_shape[] = { 64 + n - 1, 1024 };
  gconstpointer last_data;

  /* n sizes from 256 KiB up, all alive at once, then freed in order */
  for (gint i = 0; i < n; i++)
    {
      const gint64 shape[] = { 64 + i, 1024 };

      g_ptr_array_add (alive, hp_tensor_new_zeros (HP_DTYPE_FLOAT32, shape, 2));
    }
  last_data = data_of (g_ptr_array_index (alive, n - 1));
  g_clear_pointer (&alive, g_ptr_array_unref);

  again = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, last_shape, 2);
  g_assert_true (data_of (again) == last_data);
}

/* float32 SiLU, which has a loop of its own: its value and derivative
 * over [-100, 100] against double, including where e^-x overflows and
 * where the result is below the smallest normal float */
static void
test_silu_float32 (void)
{
  enum { N = 1003 };
  g_autoptr(GError) error = NULL;
  g_autofree gdouble *in = g_new (gdouble, N);
  g_autofree gdouble *want = g_new (gdouble, N);
  g_autofree gdouble *want_grad = g_new (gdouble, N);
  g_autoptr(HpTensor) x = NULL;
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) total = NULL;

  for (gint i = 0; i < N; i++)
    {
      gdouble s;

      /* the exact float32 inputs, so that the reference sees them too */
      in[i] = (gfloat) (-100.0 + 200.0 * i / (N - 1));
      s = 1.0 / (1.0 + exp (-in[i]));
      want[i] = in[i] * s;
      want_grad[i] = s * (1.0 + in[i] * (1.0 - s));
    }
  x = hp_test_tensor (HP_DTYPE_FLOAT32, in, N, HP_TEST_SHAPE (N));
  hp_tensor_set_requires_grad (x, TRUE);
  y = hp_tensor_silu (x, &error);
  g_assert_no_error (error);
  total = hp_tensor_sum_all (y, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (total, NULL, &error));
  g_assert_no_error (error);

  g_assert_cmpint (hp_tensor_get_dtype (y), ==, HP_DTYPE_FLOAT32);
  hp_test_assert_values (y, want, N, HP_TEST_SHAPE (N), 1e-6, 1e-37);
  hp_test_assert_values (hp_tensor_get_grad (x), want_grad, N, HP_TEST_SHAPE (N), 1e-6, 1e-7);
}

static void
test_unary_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (-2, -0.5, 0, 1.5), HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) scaled = hp_tensor_scale (x, 3.0, &error);
  g_autoptr(HpTensor) neg = hp_tensor_neg (x, &error);
  g_autoptr(HpTensor) ex = hp_tensor_exp (x, &error);
  g_autoptr(HpTensor) silu = hp_tensor_silu (x, &error);
  g_autoptr(HpTensor) gelu = hp_tensor_gelu (x, &error);
  g_autoptr(HpTensor) relu = hp_tensor_relu (x, &error);
  gdouble in[] = { -2, -0.5, 0, 1.5 };
  gdouble want_exp[4], want_silu[4], want_gelu[4];

  g_assert_no_error (error);
  for (int i = 0; i < 4; i++)
    {
      want_exp[i] = exp (in[i]);
      want_silu[i] = in[i] / (1.0 + exp (-in[i]));
      want_gelu[i] = 0.5 * in[i] * (1.0 + erf (in[i] / sqrt (2.0)));
    }

  hp_test_assert_values (scaled, HP_TEST_DATA (-6, -1.5, 0, 4.5), HP_TEST_SHAPE (4), 0, 0);
  hp_test_assert_values (neg, HP_TEST_DATA (2, 0.5, 0, -1.5), HP_TEST_SHAPE (4), 0, 0);
  hp_test_assert_values (ex, want_exp, 4, HP_TEST_SHAPE (4), 1e-15, 0);
  hp_test_assert_values (silu, want_silu, 4, HP_TEST_SHAPE (4), 1e-15, 0);
  hp_test_assert_values (gelu, want_gelu, 4, HP_TEST_SHAPE (4), 1e-15, 0);
  /* gelu(1.5) from PyTorch: 1.3995715... */
  hp_test_assert_values (relu, HP_TEST_DATA (0, 0, 0, 1.5), HP_TEST_SHAPE (4), 0, 0);
}

static void
test_binary_gradients (void)
{
  static const struct { const gchar *name; BinaryFunc func; } ops[] = {
    { "add", hp_tensor_add },
    { "sub", hp_tensor_sub },
    { "mul", hp_tensor_mul },
    { "div", hp_tensor_div },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      /* same shape, then both sides broadcast */
      g_autoptr(HpTensor) a = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3), 1, TRUE);
      g_autoptr(HpTensor) b = hp_tensor_new_uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3), 0.5, 2.0, 2);
      g_autoptr(HpTensor) c = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3), 3, TRUE);
      g_autoptr(HpTensor) d = hp_tensor_new_uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 1), 0.5, 2.0, 4);
      HpTensor *same[] = { a, b };
      HpTensor *broadcast[] = { c, d };

      hp_tensor_set_requires_grad (b, TRUE);
      hp_tensor_set_requires_grad (d, TRUE);
      hp_test_gradcheck (ops[i].name, call_binary, ops[i].func, same, 2);
      hp_test_gradcheck (ops[i].name, call_binary, ops[i].func, broadcast, 2);
    }
}

static HpTensor *
scale_by_three (HpTensor *x,
                GError  **error)
{
  return hp_tensor_scale (x, 3.0, error);
}

static void
test_unary_gradients (void)
{
  static const struct { const gchar *name; UnaryFunc func; } ops[] = {
    { "scale", scale_by_three },
    { "neg", hp_tensor_neg },
    { "exp", hp_tensor_exp },
    { "silu", hp_tensor_silu },
    { "gelu", hp_tensor_gelu },
    { "relu", hp_tensor_relu },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      /* randn values stay well away from relu's kink at 0 */
      g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64,
                                              HP_TEST_DATA (-1.7, -0.3, 0.2, 0.9, 2.1, -2.6),
                                              HP_TEST_SHAPE (2, 3));
      HpTensor *inputs[] = { x };

      hp_tensor_set_requires_grad (x, TRUE);
      hp_test_gradcheck (ops[i].name, call_unary, ops[i].func, inputs, 1);
    }
}

/* silu(gate) * up, the fused op of the feed-forward block: to the bit
 * what silu then mul give, value and both gradients, in float32 (its
 * vector loop, on a length that leaves a tail) and float64; and
 * against finite differences */
static void
test_silu_mul (void)
{
  static const HpDType dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64 };
  const gint64 shape[] = { 3, 37 };

  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) gate = hp_test_randn (dtypes[d], shape, 2, 11, TRUE);
      g_autoptr(HpTensor) up = hp_test_randn (dtypes[d], shape, 2, 12, TRUE);
      g_autoptr(HpTensor) gate2 = hp_test_randn (dtypes[d], shape, 2, 11, TRUE);
      g_autoptr(HpTensor) up2 = hp_test_randn (dtypes[d], shape, 2, 12, TRUE);
      g_autoptr(HpTensor) weights = hp_test_randn (dtypes[d], shape, 2, 13, FALSE);
      g_autoptr(HpTensor) fused = _hp_tensor_silu_mul (gate, up, &error);
      g_autoptr(HpTensor) act = hp_tensor_silu (gate2, &error);
      g_autoptr(HpTensor) twice = hp_tensor_mul (act, up2, &error);
      g_autoptr(HpTensor) fused_w = hp_tensor_mul (fused, weights, &error);
      g_autoptr(HpTensor) twice_w = hp_tensor_mul (twice, weights, &error);
      g_autoptr(HpTensor) fused_sum = hp_tensor_sum_all (fused_w, &error);
      g_autoptr(HpTensor) twice_sum = hp_tensor_sum_all (twice_w, &error);

      g_assert_no_error (error);
      hp_test_assert_identical (fused, twice);
      g_assert_true (hp_tensor_backward (fused_sum, NULL, &error));
      g_assert_true (hp_tensor_backward (twice_sum, NULL, &error));
      g_assert_no_error (error);
      hp_test_assert_identical (hp_tensor_get_grad (gate), hp_tensor_get_grad (gate2));
      hp_test_assert_identical (hp_tensor_get_grad (up), hp_tensor_get_grad (up2));
    }

  {
    g_autoptr(HpTensor) gate = hp_test_randn (HP_DTYPE_FLOAT64, shape, 2, 21, TRUE);
    g_autoptr(HpTensor) up = hp_test_randn (HP_DTYPE_FLOAT64, shape, 2, 22, TRUE);
    HpTensor *inputs[] = { gate, up };

    hp_test_gradcheck ("silu_mul", call_binary, _hp_tensor_silu_mul, inputs, 2);
    /* only one input asking for its gradient */
    hp_tensor_set_requires_grad (up, FALSE);
    hp_test_gradcheck ("silu_mul", call_binary, _hp_tensor_silu_mul, inputs, 2);
    hp_tensor_set_requires_grad (up, TRUE);
    hp_tensor_set_requires_grad (gate, FALSE);
    hp_test_gradcheck ("silu_mul", call_binary, _hp_tensor_silu_mul, inputs, 2);
  }
}

static void
test_silu_mul_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) a = hp_test_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3), 1, FALSE);
  g_autoptr(HpTensor) b = hp_test_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3, 2), 2, FALSE);
  g_autoptr(HpTensor) c = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3), 3, FALSE);
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 1, 2, 3, 4, 5, 6 }, 6, HP_TEST_SHAPE (2, 3));

  hp_test_assert_error (_hp_tensor_silu_mul (a, b, &error), &error, HP_ERROR_SHAPE,
                        "silu_mul: gate [2, 3] and up [3, 2] differ in shape");
  hp_test_assert_error (_hp_tensor_silu_mul (a, c, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "silu_mul");
  hp_test_assert_error (_hp_tensor_silu_mul (ids, ids, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "silu_mul: needs a floating point tensor");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/pointwise/add/values", test_add_values);
  g_test_add_func ("/pointwise/binary/values", test_binary_values);
  g_test_add_func ("/pointwise/int64", test_int64);
  g_test_add_func ("/pointwise/edge-shapes", test_edge_shapes);
  g_test_add_func ("/pointwise/bad-input", test_bad_input);
  g_test_add_func ("/pointwise/unary/bad-input", test_unary_bad_input);
  g_test_add_func ("/pointwise/neg/any-input", test_neg_any_input);
  g_test_add_func ("/pointwise/same-shape-blocks", test_same_shape_blocks);
  g_test_add_func ("/pointwise/large-same-shape", test_large_same_shape);
  g_test_add_func ("/pointwise/buffer-cache-follows-sizes", test_buffer_cache_follows_sizes);
  g_test_add_func ("/pointwise/unary/values", test_unary_values);
  g_test_add_func ("/pointwise/silu/float32", test_silu_float32);
  g_test_add_func ("/pointwise/silu-mul", test_silu_mul);
  g_test_add_func ("/pointwise/silu-mul/bad-input", test_silu_mul_bad_input);
  g_test_add_func ("/pointwise/binary/gradients", test_binary_gradients);
  g_test_add_func ("/pointwise/unary/gradients", test_unary_gradients);

  return g_test_run ();
}
