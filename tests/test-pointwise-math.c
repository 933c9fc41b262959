/* test-pointwise-math.c: values and gradients of the element-wise math
 * ops (log ... pow), the comparisons, where and masked_fill
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>

#include "hp-test-utils.h"

typedef HpTensor *(*UnaryFunc) (HpTensor *, GError **);
typedef HpTensor *(*BinaryFunc) (HpTensor *, HpTensor *, GError **);

static HpTensor *
call_unary (HpTensor **inputs,
            gpointer   user_data,
            GError   **error)
{
  UnaryFunc func = user_data;

  return func (inputs[0], error);
}

static HpTensor *
clamp_half (HpTensor *x,
            GError  **error)
{
  return hp_tensor_clamp (x, -0.5, 1.0, error);
}

static HpTensor *
pow_two_and_half (HpTensor *x,
                  GError  **error)
{
  return hp_tensor_pow_scalar (x, 2.5, error);
}

static HpTensor *
pow_three (HpTensor *x,
           GError  **error)
{
  return hp_tensor_pow_scalar (x, 3.0, error);
}

/* The values as doubles; one element of @t */
static gdouble
element (HpTensor *t,
         gsize     i)
{
  gsize n;
  g_autofree gdouble *values = hp_tensor_to_float64_array (t, &n);

  g_assert_cmpuint (i, <, n);
  return values[i];
}

/* The gradient of sum(f(x)) with respect to x, for the kinks */
static HpTensor *
grad_of_sum (UnaryFunc  func,
             HpTensor  *x)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) leaf = hp_tensor_detach (x);
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) loss = NULL;

  hp_tensor_set_requires_grad (leaf, TRUE);
  y = func (leaf, &error);
  g_assert_no_error (error);
  loss = hp_tensor_sum_all (y, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);
  return g_object_ref (hp_tensor_get_grad (leaf));
}

static void
test_unary_values (void)
{
  static const struct { const gchar *name; UnaryFunc func; gdouble (*ref) (gdouble); } ops[] = {
    { "log", hp_tensor_log, log },
    { "sqrt", hp_tensor_sqrt, sqrt },
    { "tanh", hp_tensor_tanh, tanh },
    { "abs", hp_tensor_abs, fabs },
  };
  static const gdouble in[] = { 0.25, 0.5, 1.0, 2.0, 7.5, 100.0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, in, 6, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) xf = hp_test_tensor (HP_DTYPE_FLOAT32, in, 6, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) signed_x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (-3, -0.5, 0, 0.5, 2, 4),
                                                 HP_TEST_SHAPE (6));
  g_autoptr(HpTensor) rsqrt = hp_tensor_rsqrt (x, &error);
  g_autoptr(HpTensor) sigmoid = hp_tensor_sigmoid (signed_x, &error);
  g_autoptr(HpTensor) abs = hp_tensor_abs (signed_x, &error);
  g_autoptr(HpTensor) clamp = hp_tensor_clamp (signed_x, -1.0, 0.5, &error);
  g_autoptr(HpTensor) low = hp_tensor_clamp (signed_x, 0.0, INFINITY, &error);
  g_autoptr(HpTensor) high = hp_tensor_clamp (signed_x, -INFINITY, 1.0, &error);
  g_autoptr(HpTensor) square = hp_tensor_pow_scalar (signed_x, 2.0, &error);
  g_autoptr(HpTensor) root = hp_tensor_pow_scalar (x, 0.5, &error);
  g_autoptr(HpTensor) cube = hp_tensor_pow_scalar (signed_x, 3.0, &error);
  gdouble want_rsqrt[6], want_sigmoid[6], want_root[6];

  g_assert_no_error (error);
  for (gsize o = 0; o < G_N_ELEMENTS (ops); o++)
    {
      g_autoptr(HpTensor) got = ops[o].func (x, &error);
      g_autoptr(HpTensor) got_f = ops[o].func (xf, &error);
      gdouble want[6];

      g_assert_no_error (error);
      for (int i = 0; i < 6; i++)
        want[i] = ops[o].ref (in[i]);
      g_assert_cmpint (hp_tensor_get_dtype (got), ==, HP_DTYPE_FLOAT64);
      g_assert_cmpint (hp_tensor_get_dtype (got_f), ==, HP_DTYPE_FLOAT32);
      hp_test_assert_values (got, want, 6, HP_TEST_SHAPE (2, 3), 1e-15, 0);
      hp_test_assert_values (got_f, want, 6, HP_TEST_SHAPE (2, 3), 1e-7, 0);
    }

  for (int i = 0; i < 6; i++)
    {
      gdouble s = element (signed_x, i);

      want_rsqrt[i] = 1.0 / sqrt (in[i]);
      want_sigmoid[i] = 1.0 / (1.0 + exp (-s));
      want_root[i] = sqrt (in[i]);
    }
  hp_test_assert_values (rsqrt, want_rsqrt, 6, HP_TEST_SHAPE (2, 3), 1e-15, 0);
  hp_test_assert_values (sigmoid, want_sigmoid, 6, HP_TEST_SHAPE (6), 1e-15, 0);
  hp_test_assert_values (abs, HP_TEST_DATA (3, 0.5, 0, 0.5, 2, 4), HP_TEST_SHAPE (6), 0, 0);
  hp_test_assert_values (clamp, HP_TEST_DATA (-1, -0.5, 0, 0.5, 0.5, 0.5), HP_TEST_SHAPE (6), 0, 0);
  hp_test_assert_values (low, HP_TEST_DATA (0, 0, 0, 0.5, 2, 4), HP_TEST_SHAPE (6), 0, 0);
  hp_test_assert_values (high, HP_TEST_DATA (-3, -0.5, 0, 0.5, 1, 1), HP_TEST_SHAPE (6), 0, 0);
  hp_test_assert_values (square, HP_TEST_DATA (9, 0.25, 0, 0.25, 4, 16), HP_TEST_SHAPE (6), 0, 0);
  hp_test_assert_values (cube, HP_TEST_DATA (-27, -0.125, 0, 0.125, 8, 64), HP_TEST_SHAPE (6), 0, 0);
  hp_test_assert_values (root, want_root, 6, HP_TEST_SHAPE (2, 3), 1e-15, 0);
  /* sigmoid(0) is one half exactly, tanh(0) 0 */
  g_assert_cmpfloat (element (sigmoid, 2), ==, 0.5);
}

/* What C gives outside the domains, NaN through clamp, abs on int64 */
static void
test_unary_special (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0, -1, NAN, INFINITY, -0.0),
                                          HP_TEST_SHAPE (5));
  g_autoptr(HpTensor) log = hp_tensor_log (x, &error);
  g_autoptr(HpTensor) sqrt_x = hp_tensor_sqrt (x, &error);
  g_autoptr(HpTensor) rsqrt = hp_tensor_rsqrt (x, &error);
  g_autoptr(HpTensor) clamp = hp_tensor_clamp (x, -0.5, 0.5, &error);
  g_autoptr(HpTensor) abs = hp_tensor_abs (x, &error);
  g_autoptr(HpTensor) tanh_x = hp_tensor_tanh (x, &error);
  g_autoptr(HpTensor) sigmoid = hp_tensor_sigmoid (x, &error);
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { G_MININT64, -7, 0, G_MAXINT64 }, 4,
                                                HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) abs_ids = hp_tensor_abs (ids, &error);
  g_autoptr(GBytes) bytes = NULL;
  const gint64 *abs_values;

  g_assert_no_error (error);
  g_assert_cmpfloat (element (log, 0), ==, -INFINITY);
  g_assert_true (isnan (element (log, 1)));
  g_assert_true (isnan (element (log, 2)));
  g_assert_cmpfloat (element (log, 3), ==, INFINITY);
  g_assert_true (isnan (element (sqrt_x, 1)));
  g_assert_cmpfloat (element (rsqrt, 0), ==, INFINITY);
  g_assert_cmpfloat (element (rsqrt, 3), ==, 0.0);
  g_assert_cmpfloat (element (clamp, 1), ==, -0.5);
  g_assert_true (isnan (element (clamp, 2)));
  g_assert_cmpfloat (element (clamp, 3), ==, 0.5);
  g_assert_cmpfloat (element (abs, 3), ==, INFINITY);
  g_assert_false (signbit (element (abs, 4)));
  g_assert_cmpfloat (element (tanh_x, 3), ==, 1.0);
  g_assert_cmpfloat (element (sigmoid, 3), ==, 1.0);

  /* int64 stays exact; the smallest int64 wraps to itself */
  g_assert_cmpint (hp_tensor_get_dtype (abs_ids), ==, HP_DTYPE_INT64);
  bytes = hp_tensor_get_bytes (abs_ids);
  abs_values = g_bytes_get_data (bytes, NULL);
  g_assert_cmpint (abs_values[0], ==, G_MININT64);
  g_assert_cmpint (abs_values[1], ==, 7);
  g_assert_cmpint (abs_values[2], ==, 0);
  g_assert_cmpint (abs_values[3], ==, G_MAXINT64);
}

/* hp_tensor_abs() has no input it refuses (every dtype has absolute
 * values): the inputs that the other ops refuse, and the edge shapes,
 * give a result and leave the input as it was */
static void
test_abs_any_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { -7, 0, 9 }, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_INT64, HP_TEST_SHAPE (2, 0));
  g_autoptr(HpTensor) odd = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (NAN, -INFINITY, -0.0),
                                            HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) abs_ids = hp_tensor_abs (ids, &error);
  g_autoptr(HpTensor) abs_empty = hp_tensor_abs (empty, &error);
  g_autoptr(HpTensor) abs_odd = hp_tensor_abs (odd, &error);

  g_assert_no_error (error);
  hp_test_assert_values (abs_ids, HP_TEST_DATA (7, 0, 9), HP_TEST_SHAPE (3), 0, 0);
  hp_test_assert_shape (abs_empty, HP_TEST_SHAPE (2, 0));
  g_assert_cmpint (hp_tensor_get_dtype (abs_empty), ==, HP_DTYPE_INT64);
  g_assert_true (isnan (element (abs_odd, 0)));
  g_assert_cmpfloat (element (abs_odd, 1), ==, INFINITY);
  g_assert_false (signbit (element (abs_odd, 2)));
  hp_test_assert_values (ids, HP_TEST_DATA (-7, 0, 9), HP_TEST_SHAPE (3), 0, 0);
  g_assert_cmpfloat (element (odd, 1), ==, -INFINITY);
  g_assert_true (signbit (element (odd, 2)));
}

static void
test_unary_gradients (void)
{
  static const struct { const gchar *name; UnaryFunc func; gboolean positive; } ops[] = {
    { "log", hp_tensor_log, TRUE },
    { "sqrt", hp_tensor_sqrt, TRUE },
    { "rsqrt", hp_tensor_rsqrt, TRUE },
    { "pow_scalar 2.5", pow_two_and_half, TRUE },
    { "tanh", hp_tensor_tanh, FALSE },
    { "sigmoid", hp_tensor_sigmoid, FALSE },
    { "abs", hp_tensor_abs, FALSE },
    { "clamp", clamp_half, FALSE },
    { "pow_scalar 3", pow_three, FALSE },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      /* away from the kinks of abs (0) and clamp (-0.5, 1), on both
       * sides of clamp's bounds */
      g_autoptr(HpTensor) x = ops[i].positive
        ? hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0.3, 0.9, 1.7, 2.4, 5.1, 0.05), HP_TEST_SHAPE (2, 3))
        : hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (-1.7, -0.3, 0.2, 0.9, 2.1, -2.6), HP_TEST_SHAPE (2, 3));
      HpTensor *inputs[] = { x };

      hp_tensor_set_requires_grad (x, TRUE);
      hp_test_gradcheck (ops[i].name, call_unary, ops[i].func, inputs, 1);
    }
}

static HpTensor *
pow_zero (HpTensor *x,
          GError  **error)
{
  return hp_tensor_pow_scalar (x, 0.0, error);
}

/* Where finite differences cannot look: as PyTorch, abs has gradient 0
 * at 0, clamp passes the gradient on its bounds and x^0 has gradient 0 */
static void
test_unary_kinks (void)
{
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (-2, -0.5, 0, 1, 3),
                                          HP_TEST_SHAPE (5));
  g_autoptr(HpTensor) abs_grad = grad_of_sum (hp_tensor_abs, x);
  g_autoptr(HpTensor) clamp_grad = grad_of_sum (clamp_half, x);
  g_autoptr(HpTensor) pow_grad = grad_of_sum (pow_zero, x);

  hp_test_assert_values (abs_grad, HP_TEST_DATA (-1, -1, 0, 1, 1), HP_TEST_SHAPE (5), 0, 0);
  hp_test_assert_values (clamp_grad, HP_TEST_DATA (0, 1, 1, 1, 0), HP_TEST_SHAPE (5), 0, 0);
  hp_test_assert_values (pow_grad, HP_TEST_DATA (0, 0, 0, 0, 0), HP_TEST_SHAPE (5), 0, 0);
}

static HpTensor *
call_pow (HpTensor **inputs,
          gpointer   user_data,
          GError   **error)
{
  return hp_tensor_pow (inputs[0], inputs[1], error);
}

static void
test_pow (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) a = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) row = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (2, 0.5, -1), HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) col = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (2, 3), HP_TEST_SHAPE (2, 1));
  g_autoptr(HpTensor) base = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 2, 3), HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) ar = hp_tensor_pow (a, row, &error);
  g_autoptr(HpTensor) bc = hp_tensor_pow (base, col, &error);
  g_autoptr(HpTensor) neg = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (-2, -2), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) neg_exp = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (3, 0.5), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) negp = hp_tensor_pow (neg, neg_exp, &error);

  g_assert_no_error (error);
  hp_test_assert_values (ar, HP_TEST_DATA (1, sqrt (2), 1.0 / 3, 16, sqrt (5), 1.0 / 6),
                         HP_TEST_SHAPE (2, 3), 1e-15, 0);
  /* both sides broadcast: [3] ^ [2, 1] -> [2, 3] */
  g_assert_cmpint (hp_tensor_get_dtype (bc), ==, HP_DTYPE_FLOAT32);
  hp_test_assert_values (bc, HP_TEST_DATA (1, 4, 9, 1, 8, 27), HP_TEST_SHAPE (2, 3), 0, 0);
  /* C's pow: a negative base with a fractional exponent is NaN */
  g_assert_cmpfloat (element (negp, 0), ==, -8.0);
  g_assert_true (isnan (element (negp, 1)));
}

static void
test_pow_gradients (void)
{
  /* positive bases, for log a; same shape, then both sides broadcast */
  g_autoptr(HpTensor) a = hp_tensor_new_uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3), 0.5, 2.0, 1);
  g_autoptr(HpTensor) b = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3), 2, TRUE);
  g_autoptr(HpTensor) c = hp_tensor_new_uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3), 0.5, 2.0, 3);
  g_autoptr(HpTensor) d = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 1), 4, TRUE);
  HpTensor *same[] = { a, b };
  HpTensor *broadcast[] = { c, d };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) zero = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0, 0, 2), HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) exps = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0, 2, 0), HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) loss = NULL;

  hp_tensor_set_requires_grad (a, TRUE);
  hp_tensor_set_requires_grad (c, TRUE);
  hp_test_gradcheck ("pow", call_pow, NULL, same, 2);
  hp_test_gradcheck ("pow broadcast", call_pow, NULL, broadcast, 2);

  /* 0^0 and 0^2: no NaN in either gradient, as in PyTorch */
  hp_tensor_set_requires_grad (zero, TRUE);
  hp_tensor_set_requires_grad (exps, TRUE);
  y = hp_tensor_pow (zero, exps, &error);
  loss = y != NULL ? hp_tensor_sum_all (y, &error) : NULL;
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  hp_test_assert_values (y, HP_TEST_DATA (1, 0, 1), HP_TEST_SHAPE (3), 0, 0);
  hp_test_assert_values (hp_tensor_get_grad (zero), HP_TEST_DATA (0, 0, 0), HP_TEST_SHAPE (3), 0, 0);
  hp_test_assert_values (hp_tensor_get_grad (exps), HP_TEST_DATA (0, 0, log (2)), HP_TEST_SHAPE (3), 1e-15, 0);
}

static void
test_compare (void)
{
  static const struct { const gchar *name; BinaryFunc func; gdouble want[6]; } ops[] = {
    /* a = [[1, 2, 3], [4, NaN, 6]] against b = [2, 2, 6] */
    { "eq", hp_tensor_eq, { 0, 1, 0, 0, 0, 1 } },
    { "ne", hp_tensor_ne, { 1, 0, 1, 1, 1, 0 } },
    { "lt", hp_tensor_lt, { 1, 0, 1, 0, 0, 0 } },
    { "le", hp_tensor_le, { 1, 1, 1, 0, 0, 1 } },
    { "gt", hp_tensor_gt, { 0, 0, 0, 1, 0, 0 } },
    { "ge", hp_tensor_ge, { 0, 1, 0, 1, 0, 1 } },
  };
  static const HpDType dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64 };
  /* 2^53 + 1 and 2^53 are one double: int64 compares in int64 */
  static const gint64 big[] = { (G_GINT64_CONSTANT (1) << 53) + 1, -5 };
  static const gint64 big_b[] = { G_GINT64_CONSTANT (1) << 53, -5 };
  g_autoptr(HpTensor) ia = hp_test_tensor_ids (big, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) ib = hp_test_tensor_ids (big_b, 2, HP_TEST_SHAPE (2));

  for (gsize t = 0; t < G_N_ELEMENTS (dtypes); t++)
    for (gsize o = 0; o < G_N_ELEMENTS (ops); o++)
      {
        g_autoptr(GError) error = NULL;
        g_autoptr(HpTensor) a = hp_test_tensor (dtypes[t], HP_TEST_DATA (1, 2, 3, 4, NAN, 6),
                                                HP_TEST_SHAPE (2, 3));
        g_autoptr(HpTensor) b = hp_test_tensor (dtypes[t], HP_TEST_DATA (2, 2, 6), HP_TEST_SHAPE (3));
        g_autoptr(HpTensor) got = NULL;
        g_autoptr(HpTensor) ints = NULL;

        /* no gradient flows through a comparison */
        hp_tensor_set_requires_grad (a, TRUE);
        got = ops[o].func (a, b, &error);
        g_assert_no_error (error);
        g_assert_cmpint (hp_tensor_get_dtype (got), ==, HP_DTYPE_INT64);
        g_assert_false (hp_tensor_get_requires_grad (got));
        hp_test_assert_values (got, ops[o].want, 6, HP_TEST_SHAPE (2, 3), 0, 0);

        ints = ops[o].func (ia, ib, &error);
        g_assert_no_error (error);
        g_assert_cmpint (hp_tensor_get_dtype (ints), ==, HP_DTYPE_INT64);
        /* [2^53 + 1 vs 2^53, -5 vs -5]: eq 0 1, ne 1 0, lt 0 0, le 0 1, gt 1 0, ge 1 1 */
        g_assert_cmpfloat (element (ints, 0), ==, (o == 1 || o == 4 || o == 5) ? 1.0 : 0.0);
        g_assert_cmpfloat (element (ints, 1), ==, (o == 0 || o == 3 || o == 5) ? 1.0 : 0.0);
      }
}

static HpTensor *
call_where (HpTensor **inputs,
            gpointer   user_data,
            GError   **error)
{
  return hp_tensor_where (user_data, inputs[0], inputs[1], error);
}

static void
test_where (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) cond = hp_test_tensor_ids ((const gint64[]) { 1, 0, -3 }, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) a = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) b = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (10, 20), HP_TEST_SHAPE (2, 1));
  g_autoptr(HpTensor) col_cond = hp_test_tensor_ids ((const gint64[]) { 0, 1 }, 2, HP_TEST_SHAPE (2, 1));
  g_autoptr(HpTensor) row = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (7, 8, 9), HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, -1.0);
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 5, 6, 7 }, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) minus = hp_test_tensor_ids ((const gint64[]) { -1 }, 1, HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) ab = hp_tensor_where (cond, a, b, &error);
  g_autoptr(HpTensor) all3 = hp_tensor_where (col_cond, row, scalar, &error);
  g_autoptr(HpTensor) int_where = hp_tensor_where (cond, ids, minus, &error);
  /* gradients through broadcast operands of every shape */
  g_autoptr(HpTensor) ga = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3), 5, TRUE);
  g_autoptr(HpTensor) gb = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 1), 6, TRUE);
  g_autoptr(HpTensor) grow = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3), 7, TRUE);
  g_autoptr(HpTensor) gs = hp_test_randn (HP_DTYPE_FLOAT64, NULL, 0, 8, TRUE);
  HpTensor *pair[] = { ga, gb };
  HpTensor *pair2[] = { grow, gs };

  g_assert_no_error (error);
  hp_test_assert_values (ab, HP_TEST_DATA (1, 10, 3, 4, 20, 6), HP_TEST_SHAPE (2, 3), 0, 0);
  hp_test_assert_values (all3, HP_TEST_DATA (-1, -1, -1, 7, 8, 9), HP_TEST_SHAPE (2, 3), 0, 0);
  g_assert_cmpint (hp_tensor_get_dtype (int_where), ==, HP_DTYPE_INT64);
  hp_test_assert_values (int_where, HP_TEST_DATA (5, -1, 7), HP_TEST_SHAPE (3), 0, 0);

  hp_test_gradcheck ("where", call_where, cond, pair, 2);
  hp_test_gradcheck ("where broadcast", call_where, col_cond, pair2, 2);
}

static HpTensor *
call_masked_fill (HpTensor **inputs,
                  gpointer   user_data,
                  GError   **error)
{
  return hp_tensor_masked_fill (inputs[0], user_data, 2.5, error);
}

static void
test_masked_fill (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) causal = hp_test_tensor_ids ((const gint64[]) { 0, 1, 1, 0, 0, 1 }, 6, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) row = hp_test_tensor_ids ((const gint64[]) { 1, 0, 0 }, 3, HP_TEST_SHAPE (1, 3));
  g_autoptr(HpTensor) filled = hp_tensor_masked_fill (x, causal, -INFINITY, &error);
  g_autoptr(HpTensor) by_row = hp_tensor_masked_fill (x, row, 0.0, &error);
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 5, 6, 7 }, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) first = hp_test_tensor_ids ((const gint64[]) { 1, 0, 0 }, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) int_fill = hp_tensor_masked_fill (ids, first, -4503599627370497.0, &error);
  g_autoptr(HpTensor) gx = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3), 9, TRUE);
  HpTensor *inputs[] = { gx };
  g_autoptr(GBytes) bytes = NULL;

  g_assert_no_error (error);
  g_assert_cmpfloat (element (filled, 1), ==, -INFINITY);
  g_assert_cmpfloat (element (filled, 5), ==, -INFINITY);
  g_assert_cmpfloat (element (filled, 3), ==, 4.0);
  g_assert_cmpint (hp_tensor_get_dtype (filled), ==, HP_DTYPE_FLOAT32);
  hp_test_assert_values (by_row, HP_TEST_DATA (0, 2, 3, 0, 5, 6), HP_TEST_SHAPE (2, 3), 0, 0);
  g_assert_cmpint (hp_tensor_get_dtype (int_fill), ==, HP_DTYPE_INT64);
  bytes = hp_tensor_get_bytes (int_fill);
  g_assert_cmpint (((const gint64 *) g_bytes_get_data (bytes, NULL))[0], ==, G_GINT64_CONSTANT (-4503599627370497));
  g_assert_cmpint (((const gint64 *) g_bytes_get_data (bytes, NULL))[1], ==, 6);
  /* the input is as it was */
  hp_test_assert_values (x, HP_TEST_DATA (1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (2, 3), 0, 0);

  hp_test_gradcheck ("masked_fill", call_masked_fill, causal, inputs, 1);
  {
    /* the filled elements get gradient 0 */
    g_autoptr(HpTensor) leaf = hp_tensor_detach (gx);
    g_autoptr(HpTensor) y = NULL;
    g_autoptr(HpTensor) loss = NULL;

    hp_tensor_set_requires_grad (leaf, TRUE);
    y = hp_tensor_masked_fill (leaf, row, 2.5, &error);
    loss = y != NULL ? hp_tensor_sum_all (y, &error) : NULL;
    g_assert_no_error (error);
    g_assert_true (hp_tensor_backward (loss, NULL, &error));
    hp_test_assert_values (hp_tensor_get_grad (leaf), HP_TEST_DATA (0, 1, 1, 0, 1, 1), HP_TEST_SHAPE (2, 3), 0, 0);
  }
}

/* Empty dims, size-1 dims and 0-d tensors through every family */
static void
test_edge_shapes (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) empty = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (0, 3));
  g_autoptr(HpTensor) row = hp_tensor_new_full (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 3), 4.0);
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 2.0);
  g_autoptr(HpTensor) empty_mask = hp_tensor_new_zeros (HP_DTYPE_INT64, HP_TEST_SHAPE (0, 1));
  g_autoptr(HpTensor) one_mask = hp_tensor_new_ones (HP_DTYPE_INT64, HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) log_empty = hp_tensor_log (empty, &error);
  g_autoptr(HpTensor) clamp_empty = hp_tensor_clamp (empty, 0, 1, &error);
  g_autoptr(HpTensor) sqrt_scalar = hp_tensor_sqrt (scalar, &error);
  g_autoptr(HpTensor) pow_empty = hp_tensor_pow (empty, row, &error);
  g_autoptr(HpTensor) pow_row = hp_tensor_pow (row, scalar, &error);
  g_autoptr(HpTensor) lt_empty = hp_tensor_lt (empty, row, &error);
  g_autoptr(HpTensor) eq_scalar = hp_tensor_eq (scalar, scalar, &error);
  g_autoptr(HpTensor) where_empty = hp_tensor_where (empty_mask, row, scalar, &error);
  g_autoptr(HpTensor) where_scalar = hp_tensor_where (one_mask, scalar, row, &error);
  g_autoptr(HpTensor) fill_empty = hp_tensor_masked_fill (empty, empty_mask, 1.0, &error);
  g_autoptr(HpTensor) fill_row = hp_tensor_masked_fill (row, one_mask, 1.0, &error);

  g_assert_no_error (error);
  hp_test_assert_shape (log_empty, HP_TEST_SHAPE (0, 3));
  hp_test_assert_shape (clamp_empty, HP_TEST_SHAPE (0, 3));
  hp_test_assert_shape (sqrt_scalar, NULL, 0);
  g_assert_cmpfloat (hp_tensor_item (sqrt_scalar, &error), ==, sqrt (2.0));
  hp_test_assert_shape (pow_empty, HP_TEST_SHAPE (0, 3));
  hp_test_assert_values (pow_row, HP_TEST_DATA (16, 16, 16), HP_TEST_SHAPE (1, 3), 0, 0);
  hp_test_assert_shape (lt_empty, HP_TEST_SHAPE (0, 3));
  g_assert_cmpint (hp_tensor_get_dtype (lt_empty), ==, HP_DTYPE_INT64);
  hp_test_assert_shape (eq_scalar, NULL, 0);
  g_assert_cmpfloat (hp_tensor_item (eq_scalar, &error), ==, 1.0);
  hp_test_assert_shape (where_empty, HP_TEST_SHAPE (0, 3));
  hp_test_assert_values (where_scalar, HP_TEST_DATA (2, 2, 2), HP_TEST_SHAPE (1, 3), 0, 0);
  hp_test_assert_shape (fill_empty, HP_TEST_SHAPE (0, 3));
  hp_test_assert_values (fill_row, HP_TEST_DATA (1, 1, 1), HP_TEST_SHAPE (1, 3), 0, 0);
  /* a [1] mask would make a 0-d self [1] */
  hp_test_assert_error (hp_tensor_masked_fill (scalar, one_mask, 1.0, &error), &error, HP_ERROR_SHAPE,
                        "masked_fill: mask of shape [1] does not broadcast to the shape [] of self");
}

/* Bad input: a clear error, and the inputs as they were */
static void
test_bad_input (void)
{
  static const struct { const gchar *name; UnaryFunc func; } unary[] = {
    { "log", hp_tensor_log }, { "sqrt", hp_tensor_sqrt }, { "rsqrt", hp_tensor_rsqrt },
    { "tanh", hp_tensor_tanh }, { "sigmoid", hp_tensor_sigmoid },
  };
  static const struct { const gchar *name; BinaryFunc func; } compare[] = {
    { "eq", hp_tensor_eq }, { "ne", hp_tensor_ne }, { "lt", hp_tensor_lt },
    { "le", hp_tensor_le }, { "gt", hp_tensor_gt }, { "ge", hp_tensor_ge },
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { -1, 0, 2 }, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) a = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) b = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) c = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) float_mask = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) mask = hp_tensor_new_ones (HP_DTYPE_INT64, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) wide_mask = hp_tensor_new_ones (HP_DTYPE_INT64, HP_TEST_SHAPE (3, 2, 3));
  g_autoptr(HpTensor) bad_mask = hp_tensor_new_ones (HP_DTYPE_INT64, HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) ids_mask = hp_tensor_new_ones (HP_DTYPE_INT64, HP_TEST_SHAPE (3));

  hp_tensor_set_requires_grad (a, TRUE);

  for (gsize o = 0; o < G_N_ELEMENTS (unary); o++)
    {
      g_autofree gchar *want = g_strdup_printf ("%s: needs a floating point tensor, got int64 [3]",
                                                unary[o].name);

      hp_test_assert_error (unary[o].func (ids, &error), &error, HP_ERROR_INVALID_ARGUMENT, want);
    }
  hp_test_assert_error (hp_tensor_clamp (ids, 0, 1, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "clamp: needs a floating point tensor, got int64 [3]");
  hp_test_assert_error (hp_tensor_clamp (a, 1, 0, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "clamp: min 1 is greater than max 0");
  hp_test_assert_error (hp_tensor_clamp (a, NAN, 1, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "clamp: a bound is NaN");
  hp_test_assert_error (hp_tensor_clamp (a, 0, NAN, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "clamp: a bound is NaN");
  hp_test_assert_error (hp_tensor_pow_scalar (ids, 2, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "pow_scalar: needs a floating point tensor, got int64 [3]");

  hp_test_assert_error (hp_tensor_pow (a, c, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "pow: dtypes differ (float32 [2, 3] and float64 [2, 3])");
  hp_test_assert_error (hp_tensor_pow (a, b, &error), &error, HP_ERROR_SHAPE,
                        "pow: shapes [2, 3] and [4] cannot be broadcast together");
  hp_test_assert_error (hp_tensor_pow (ids, ids, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "pow: needs a floating point tensor, got int64 [3]");

  for (gsize o = 0; o < G_N_ELEMENTS (compare); o++)
    {
      g_autofree gchar *dtypes = g_strdup_printf ("%s: dtypes differ (float32 [2, 3] and float64 [2, 3])",
                                                  compare[o].name);
      g_autofree gchar *shapes = g_strdup_printf ("%s: shapes [2, 3] and [4] cannot be broadcast together",
                                                  compare[o].name);

      hp_test_assert_error (compare[o].func (a, c, &error), &error, HP_ERROR_INVALID_ARGUMENT, dtypes);
      hp_test_assert_error (compare[o].func (a, b, &error), &error, HP_ERROR_SHAPE, shapes);
    }

  hp_test_assert_error (hp_tensor_where (float_mask, a, a, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "where: condition must be int64, got float32 [2, 3]");
  hp_test_assert_error (hp_tensor_where (mask, a, c, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "where: dtypes differ (float32 [2, 3] and float64 [2, 3])");
  hp_test_assert_error (hp_tensor_where (bad_mask, a, a, &error), &error, HP_ERROR_SHAPE,
                        "where: shapes [4] and [2, 3] cannot be broadcast together");
  hp_test_assert_error (hp_tensor_where (mask, a, b, &error), &error, HP_ERROR_SHAPE,
                        "where: shapes [2, 3] and [4] cannot be broadcast together");

  hp_test_assert_error (hp_tensor_masked_fill (a, float_mask, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "masked_fill: mask must be int64, got float32 [2, 3]");
  hp_test_assert_error (hp_tensor_masked_fill (a, bad_mask, 0, &error), &error, HP_ERROR_SHAPE,
                        "masked_fill: mask of shape [4] does not broadcast to the shape [2, 3] of self");
  /* a mask that would grow self */
  hp_test_assert_error (hp_tensor_masked_fill (a, wide_mask, 0, &error), &error, HP_ERROR_SHAPE,
                        "masked_fill: mask of shape [3, 2, 3] does not broadcast to the shape [2, 3] of self");
  hp_test_assert_error (hp_tensor_masked_fill (ids, bad_mask, 0.5, &error), &error, HP_ERROR_SHAPE,
                        "masked_fill: mask of shape [4]");
  hp_test_assert_error (hp_tensor_masked_fill (ids, ids_mask, 0.5, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "masked_fill: value 0.5 is not an int64, as self is");

  /* the inputs are as they were */
  hp_test_assert_values (a, HP_TEST_DATA (1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (2, 3), 0, 0);
  hp_test_assert_values (ids, HP_TEST_DATA (-1, 0, 2), HP_TEST_SHAPE (3), 0, 0);
  g_assert_true (hp_tensor_get_requires_grad (a));
  g_assert_null (hp_tensor_get_grad (a));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/pointwise-math/unary/values", test_unary_values);
  g_test_add_func ("/pointwise-math/unary/special", test_unary_special);
  g_test_add_func ("/pointwise-math/abs/any-input", test_abs_any_input);
  g_test_add_func ("/pointwise-math/unary/gradients", test_unary_gradients);
  g_test_add_func ("/pointwise-math/unary/kinks", test_unary_kinks);
  g_test_add_func ("/pointwise-math/pow/values", test_pow);
  g_test_add_func ("/pointwise-math/pow/gradients", test_pow_gradients);
  g_test_add_func ("/pointwise-math/compare", test_compare);
  g_test_add_func ("/pointwise-math/where", test_where);
  g_test_add_func ("/pointwise-math/masked-fill", test_masked_fill);
  g_test_add_func ("/pointwise-math/edge-shapes", test_edge_shapes);
  g_test_add_func ("/pointwise-math/bad-input", test_bad_input);

  return g_test_run ();
}
