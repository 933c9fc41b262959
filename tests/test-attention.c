/* test-attention.c: values and gradients of scaled dot-product attention
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>

#include "hp-test-utils.h"

typedef struct
{
  gboolean is_causal;
  gdouble scale;
} Options;

static HpTensor *
call_attention (HpTensor **inputs,
                gpointer   user_data,
                GError   **error)
{
  const Options *options = user_data;

  return hp_tensor_scaled_dot_product_attention (inputs[0], inputs[1], inputs[2], inputs[3],
                                                 options->is_causal, options->scale, error);
}

/* randn numbers (drawn in float64, so both dtypes see the same values
 * up to rounding); every @period-th element from @offset becomes -inf
 * when @period is not 0 */
static HpTensor *
random_tensor (HpDType       dtype,
               const gint64 *shape,
               guint         ndim,
               guint64       seed,
               gint64        period,
               gint64        offset)
{
  g_autoptr(HpTensor) base = hp_tensor_new_randn (HP_DTYPE_FLOAT64, shape, ndim, seed);
  gsize n;
  g_autofree gdouble *values = hp_tensor_to_float64_array (base, &n);

  if (period > 0)
    for (gsize i = offset; i < n; i += period)
      values[i] = -INFINITY;
  return hp_test_tensor (dtype, values, n, shape, ndim);
}

/* The attention written out loop by loop in double precision, as the
 * PyTorch documentation states it. */
static HpTensor *
reference_attention (HpTensor *query,
                     HpTensor *key,
                     HpTensor *value,
                     HpTensor *mask,
                     gboolean  is_causal,
                     gdouble   scale)
{
  const gint64 *qs = hp_tensor_get_shape (query, NULL);
  const gint64 *ks = hp_tensor_get_shape (key, NULL);
  const gint64 *vs = hp_tensor_get_shape (value, NULL);
  gint64 B = qs[0], H = qs[1], S = qs[2], D = qs[3];
  gint64 Hkv = ks[1], L = ks[2], Dv = vs[3];
  gint64 ms[4] = { 1, 1, 1, 1 };
  gsize n;
  g_autofree gdouble *q = hp_tensor_to_float64_array (query, &n);
  g_autofree gdouble *k = hp_tensor_to_float64_array (key, &n);
  g_autofree gdouble *v = hp_tensor_to_float64_array (value, &n);
  g_autofree gdouble *m = NULL;
  g_autofree gdouble *out = g_new0 (gdouble, MAX (B * H * S * Dv, 1));
  g_autofree gdouble *s = g_new (gdouble, MAX (L, 1));
  gint64 out_shape[4] = { B, H, S, Dv };

  if (scale <= 0.0 || isnan (scale))
    scale = 1.0 / sqrt ((gdouble) D);

  if (mask != NULL)
    {
      guint m_ndim;
      const gint64 *shape = hp_tensor_get_shape (mask, &m_ndim);

      for (guint i = 0; i < m_ndim; i++)
        ms[4 - m_ndim + i] = shape[i];
      m = hp_tensor_to_float64_array (mask, &n);
    }

  for (gint64 b = 0; b < B; b++)
    for (gint64 h = 0; h < H; h++)
      for (gint64 i = 0; i < S; i++)
        {
          gint64 g = h / (H / Hkv);
          gdouble max = -INFINITY, total = 0.0;
          gdouble *o = out + ((b * H + h) * S + i) * Dv;

          for (gint64 j = 0; j < L; j++)
            {
              gdouble dot = 0.0;

              for (gint64 d = 0; d < D; d++)
                dot += q[((b * H + h) * S + i) * D + d] * k[((b * Hkv + g) * L + j) * D + d];
              s[j] = dot * scale;
              if (m != NULL)
                s[j] += m[(((b % ms[0]) * ms[1] + h % ms[1]) * ms[2] + i % ms[2]) * ms[3] + j % ms[3]];
              if (is_causal && j > i)
                s[j] = -INFINITY;
              max = MAX (max, s[j]);
            }

          for (gint64 j = 0; j < L; j++)
            {
              s[j] = exp (s[j] - max);
              total += s[j];
            }

          for (gint64 e = 0; e < Dv; e++)
            {
              gdouble acc = 0.0;

              for (gint64 j = 0; j < L; j++)
                acc += s[j] / total * v[((b * Hkv + g) * L + j) * Dv + e];
              o[e] = L > 0 && max == -INFINITY ? NAN : acc;
            }
        }

  return hp_test_tensor (HP_DTYPE_FLOAT64, out, B * H * S * Dv, out_shape, 4);
}

typedef struct
{
  const gchar *name;
  gint64 q[4];
  gint64 k[4];
  gint64 v[4];
  guint mask_ndim;       /* 0: no mask */
  gint64 mask[4];
  gint64 inf_period;     /* -inf every so many mask elements */
  gboolean causal;
  gdouble scale;
} Case;

static const Case cases[] = {
  { "plain", { 2, 3, 4, 5 }, { 2, 3, 4, 5 }, { 2, 3, 4, 3 }, 0, { 0 }, 0, FALSE, 0.0 },
  { "single key", { 1, 2, 3, 2 }, { 1, 2, 1, 2 }, { 1, 2, 1, 4 }, 0, { 0 }, 0, FALSE, 0.0 },
  { "causal", { 2, 2, 4, 3 }, { 2, 2, 4, 3 }, { 2, 2, 4, 3 }, 0, { 0 }, 0, TRUE, 0.0 },
  { "causal more queries", { 1, 2, 5, 3 }, { 1, 2, 3, 3 }, { 1, 2, 3, 2 }, 0, { 0 }, 0, TRUE, 0.0 },
  { "causal more keys", { 1, 2, 3, 3 }, { 1, 2, 5, 3 }, { 1, 2, 5, 2 }, 0, { 0 }, 0, TRUE, 0.0 },
  { "mask [S, Skv]", { 2, 2, 3, 4 }, { 2, 2, 5, 4 }, { 2, 2, 5, 3 }, 2, { 3, 5 }, 4, FALSE, 0.0 },
  { "mask [B, 1, S, Skv]", { 2, 3, 4, 2 }, { 2, 3, 4, 2 }, { 2, 3, 4, 2 }, 4, { 2, 1, 4, 4 }, 3, FALSE, 0.0 },
  { "mask [1, H, 1, Skv]", { 2, 3, 2, 2 }, { 2, 3, 4, 2 }, { 2, 3, 4, 2 }, 4, { 1, 3, 1, 4 }, 0, FALSE, 0.0 },
  { "mask [B, 1, S, 1]", { 2, 2, 3, 2 }, { 2, 2, 4, 2 }, { 2, 2, 4, 2 }, 4, { 2, 1, 3, 1 }, 0, FALSE, 0.0 },
  { "mask [Skv]", { 1, 2, 3, 3 }, { 1, 2, 3, 3 }, { 1, 2, 3, 3 }, 1, { 3 }, 0, FALSE, 0.0 },
  { "mask full", { 2, 2, 3, 3 }, { 2, 2, 4, 3 }, { 2, 2, 4, 3 }, 4, { 2, 2, 3, 4 }, 5, FALSE, 0.0 },
  { "gqa", { 2, 4, 3, 4 }, { 2, 2, 3, 4 }, { 2, 2, 3, 5 }, 0, { 0 }, 0, FALSE, 0.0 },
  { "gqa causal", { 1, 6, 4, 2 }, { 1, 2, 4, 2 }, { 1, 2, 4, 2 }, 0, { 0 }, 0, TRUE, 0.0 },
  /* past 32 queries, causal attention goes in blocks of them */
  { "causal blocks", { 1, 2, 150, 3 }, { 1, 2, 150, 3 }, { 1, 2, 150, 2 }, 0, { 0 }, 0, TRUE, 0.0 },
  { "causal blocks more queries", { 1, 2, 140, 3 }, { 1, 2, 100, 3 }, { 1, 2, 100, 2 }, 0, { 0 }, 0,
    TRUE, 0.0 },
  { "causal blocks more keys", { 1, 2, 130, 3 }, { 1, 2, 140, 3 }, { 1, 2, 140, 2 }, 0, { 0 }, 0,
    TRUE, 0.0 },
  { "gqa causal blocks", { 2, 4, 128, 2 }, { 2, 2, 128, 2 }, { 2, 2, 128, 3 }, 0, { 0 }, 0, TRUE, 0.0 },
  { "gqa masked", { 2, 6, 3, 2 }, { 2, 3, 4, 2 }, { 2, 3, 4, 2 }, 3, { 6, 3, 4 }, 5, FALSE, 0.0 },
  { "multi-query", { 1, 3, 3, 2 }, { 1, 1, 3, 2 }, { 1, 1, 3, 2 }, 0, { 0 }, 0, TRUE, 0.0 },
  { "custom scale", { 1, 2, 3, 4 }, { 1, 2, 4, 4 }, { 1, 2, 4, 2 }, 0, { 0 }, 0, FALSE, 0.7 },
  { "large scale", { 1, 1, 3, 4 }, { 1, 1, 4, 4 }, { 1, 1, 4, 2 }, 0, { 0 }, 0, FALSE, 40.0 },
  { "negative scale", { 1, 2, 3, 4 }, { 1, 2, 4, 4 }, { 1, 2, 4, 2 }, 0, { 0 }, 0, FALSE, -2.0 },
  { "nan scale", { 1, 2, 3, 4 }, { 1, 2, 4, 4 }, { 1, 2, 4, 2 }, 0, { 0 }, 0, FALSE, NAN },
};

static void
test_values (void)
{
  static const HpDType dtypes[] = { HP_DTYPE_FLOAT64, HP_DTYPE_FLOAT32 };

  for (gsize t = 0; t < G_N_ELEMENTS (dtypes); t++)
    for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
      {
        const Case *cs = &cases[c];
        HpDType dtype = dtypes[t];
        gdouble tol = dtype == HP_DTYPE_FLOAT64 ? 1e-12 : 2e-5;
        g_autoptr(GError) error = NULL;
        g_autoptr(HpTensor) q = random_tensor (dtype, cs->q, 4, 10 + c, 0, 0);
        g_autoptr(HpTensor) k = random_tensor (dtype, cs->k, 4, 20 + c, 0, 0);
        g_autoptr(HpTensor) v = random_tensor (dtype, cs->v, 4, 30 + c, 0, 0);
        g_autoptr(HpTensor) mask = cs->mask_ndim > 0
          ? random_tensor (dtype, cs->mask, cs->mask_ndim, 40 + c, cs->inf_period, 1)
          : NULL;
        g_autoptr(HpTensor) out = NULL;
        g_autoptr(HpTensor) want = NULL;

        g_test_message ("%s, %s", cs->name, hp_dtype_to_string (dtype));
        out = hp_tensor_scaled_dot_product_attention (q, k, v, mask, cs->causal, cs->scale, &error);
        g_assert_no_error (error);
        g_assert_cmpint (hp_tensor_get_dtype (out), ==, dtype);
        g_assert_false (hp_tensor_get_requires_grad (out));

        want = reference_attention (q, k, v, mask, cs->causal, cs->scale);
        hp_test_assert_close (out, want, tol, tol);
      }
}

static void
test_tiny (void)
{
  const gdouble ln3 = log (3.0);
  g_autoptr(GError) error = NULL;
  /* one query [1, 0] against keys [1, 0] and [0, 1]: scores ln3 * (1, 0),
   * probabilities (3/4, 1/4), output 3/4 (4, 8) + 1/4 (0, -4) = (3, 5) */
  g_autoptr(HpTensor) q = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 0), HP_TEST_SHAPE (1, 1, 1, 2));
  g_autoptr(HpTensor) k = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 0, 0, 1), HP_TEST_SHAPE (1, 1, 2, 2));
  g_autoptr(HpTensor) v = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (4, 8, 0, -4), HP_TEST_SHAPE (1, 1, 2, 2));
  /* the default scale 1/sqrt(4) = 1/2 gives the same scores */
  g_autoptr(HpTensor) q4 = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (2 * ln3, 0, 0, 0), HP_TEST_SHAPE (1, 1, 1, 4));
  g_autoptr(HpTensor) k4 = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 0, 0, 0, 0, 0, 0, 0), HP_TEST_SHAPE (1, 1, 2, 4));
  g_autoptr(HpTensor) v4 = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (4, 8, 0, -4), HP_TEST_SHAPE (1, 1, 2, 2));
  /* zero queries: equal scores, so a plain average unless masked */
  g_autoptr(HpTensor) q0 = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 1, 2, 2));
  g_autoptr(HpTensor) m_log = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (ln3, 0, 0, -INFINITY), HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) out = NULL;
  g_autoptr(HpTensor) out4 = NULL;
  g_autoptr(HpTensor) causal = NULL;
  g_autoptr(HpTensor) masked = NULL;

  out = hp_tensor_scaled_dot_product_attention (q, k, v, NULL, FALSE, ln3, &error);
  g_assert_no_error (error);
  hp_test_assert_values (out, HP_TEST_DATA (3, 5), HP_TEST_SHAPE (1, 1, 1, 2), 1e-14, 1e-14);

  out4 = hp_tensor_scaled_dot_product_attention (q4, k4, v4, NULL, FALSE, 0.0, &error);
  g_assert_no_error (error);
  hp_test_assert_values (out4, HP_TEST_DATA (3, 5), HP_TEST_SHAPE (1, 1, 1, 2), 1e-6, 1e-6);

  /* query 0 sees key 0 only; query 1 averages both */
  causal = hp_tensor_scaled_dot_product_attention (q0, k, v, NULL, TRUE, 0.0, &error);
  g_assert_no_error (error);
  hp_test_assert_values (causal, HP_TEST_DATA (4, 8, 2, 2), HP_TEST_SHAPE (1, 1, 2, 2), 1e-15, 0);

  /* row 0: weights 3:1; row 1: key 1 excluded */
  masked = hp_tensor_scaled_dot_product_attention (q0, k, v, m_log, FALSE, 0.0, &error);
  g_assert_no_error (error);
  hp_test_assert_values (masked, HP_TEST_DATA (3, 5, 4, 8), HP_TEST_SHAPE (1, 1, 2, 2), 1e-14, 1e-14);
}

static void
test_fully_masked_row (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) q = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 1, 2, 2));
  g_autoptr(HpTensor) k = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 1, 2, 2));
  g_autoptr(HpTensor) v = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (4, 8, 0, -4), HP_TEST_SHAPE (1, 1, 2, 2));
  g_autoptr(HpTensor) mask = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (-INFINITY, -INFINITY, 0, 0),
                                             HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) out = hp_tensor_scaled_dot_product_attention (q, k, v, mask, FALSE, 0.0, &error);
  g_autofree gdouble *values = NULL;
  gsize n;

  g_assert_no_error (error);
  values = hp_tensor_to_float64_array (out, &n);
  g_assert_cmpuint (n, ==, 4);
  g_assert_true (isnan (values[0]) && isnan (values[1]));
  g_assert_cmpfloat (values[2], ==, 2.0);
  g_assert_cmpfloat (values[3], ==, 2.0);
}

/* Runs backward with ones as the output gradient; checks the shapes of
 * the gradients and returns the output. */
static HpTensor *
forward_backward (HpTensor     **inputs,
                  gboolean       is_causal,
                  const gint64  *out_shape,
                  guint          out_ndim)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) grad = hp_tensor_new_ones (hp_tensor_get_dtype (inputs[0]), out_shape, out_ndim);
  HpTensor *out = hp_tensor_scaled_dot_product_attention (inputs[0], inputs[1], inputs[2], inputs[3],
                                                          is_causal, 0.0, &error);

  g_assert_no_error (error);
  hp_test_assert_shape (out, out_shape, out_ndim);
  hp_tensor_backward (out, grad, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < 4; i++)
    if (inputs[i] != NULL)
      {
        guint ndim;
        const gint64 *shape = hp_tensor_get_shape (inputs[i], &ndim);

        g_assert_nonnull (hp_tensor_get_grad (inputs[i]));
        hp_test_assert_shape (hp_tensor_get_grad (inputs[i]), shape, ndim);
      }
  return out;
}

static void
test_empty (void)
{
  {
    /* no queries */
    g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 2, 0, 3), 1, TRUE);
    g_autoptr(HpTensor) k = hp_test_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 2, 4, 3), 2, TRUE);
    g_autoptr(HpTensor) v = hp_test_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 2, 4, 5), 3, TRUE);
    HpTensor *inputs[] = { q, k, v, NULL };
    g_autoptr(HpTensor) out = forward_backward (inputs, TRUE, HP_TEST_SHAPE (1, 2, 0, 5));
    g_autoptr(HpTensor) zeros = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 2, 4, 3));

    hp_test_assert_close (hp_tensor_get_grad (k), zeros, 0, 0);
  }
  {
    /* no keys: the output and the query gradient are zero */
    g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 2, 3, 3), 1, TRUE);
    g_autoptr(HpTensor) k = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 2, 0, 3), 2, TRUE);
    g_autoptr(HpTensor) v = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 2, 0, 5), 3, TRUE);
    g_autoptr(HpTensor) mask = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 0), 4, TRUE);
    HpTensor *inputs[] = { q, k, v, mask };
    g_autoptr(HpTensor) out = forward_backward (inputs, FALSE, HP_TEST_SHAPE (1, 2, 3, 5));
    g_autoptr(HpTensor) zeros = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 2, 3, 5));
    g_autoptr(HpTensor) zero_q = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 2, 3, 3));

    hp_test_assert_close (out, zeros, 0, 0);
    hp_test_assert_close (hp_tensor_get_grad (q), zero_q, 0, 0);
  }
  {
    /* no batch */
    g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (0, 4, 3, 3), 1, TRUE);
    g_autoptr(HpTensor) k = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (0, 2, 2, 3), 2, TRUE);
    g_autoptr(HpTensor) v = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (0, 2, 2, 1), 3, TRUE);
    HpTensor *inputs[] = { q, k, v, NULL };
    g_autoptr(HpTensor) out = forward_backward (inputs, TRUE, HP_TEST_SHAPE (0, 4, 3, 1));
  }
  {
    /* no query heads: the key and value gradients are zero */
    g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 0, 3, 3), 1, TRUE);
    g_autoptr(HpTensor) k = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 2, 2, 3), 2, TRUE);
    g_autoptr(HpTensor) v = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 2, 2, 1), 3, TRUE);
    HpTensor *inputs[] = { q, k, v, NULL };
    g_autoptr(HpTensor) out = forward_backward (inputs, FALSE, HP_TEST_SHAPE (2, 0, 3, 1));
    g_autoptr(HpTensor) zeros = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 2, 2, 1));

    hp_test_assert_close (hp_tensor_get_grad (v), zeros, 0, 0);
  }
  {
    /* head dim 0: all scores 0, so every query averages the values; the
     * value gradient spreads each query's ones evenly over the keys */
    g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 1, 2, 0), 1, TRUE);
    g_autoptr(HpTensor) k = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 1, 4, 0), 2, TRUE);
    g_autoptr(HpTensor) v = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2, 3, 4, 5, 6, 7, 8),
                                            HP_TEST_SHAPE (1, 1, 4, 2));
    HpTensor *inputs[] = { q, k, v, NULL };
    g_autoptr(HpTensor) out = NULL;

    hp_tensor_set_requires_grad (v, TRUE);
    out = forward_backward (inputs, FALSE, HP_TEST_SHAPE (1, 1, 2, 2));
    hp_test_assert_values (out, HP_TEST_DATA (4, 5, 4, 5), HP_TEST_SHAPE (1, 1, 2, 2), 1e-15, 0);
    hp_test_assert_values (hp_tensor_get_grad (v), HP_TEST_DATA (0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5),
                           HP_TEST_SHAPE (1, 1, 4, 2), 1e-15, 0);
  }
}

typedef struct
{
  const gchar *name;
  gint64 q[4];
  gint64 k[4];
  gint64 v[4];
  guint mask_ndim;
  gint64 mask[4];
  gint64 inf_period;
  Options options;
  gboolean grad_qkv;
} GradCase;

static const GradCase grad_cases[] = {
  { "plain", { 2, 2, 3, 4 }, { 2, 2, 3, 4 }, { 2, 2, 3, 2 }, 0, { 0 }, 0, { FALSE, 0.0 }, TRUE },
  { "gqa", { 2, 4, 3, 3 }, { 2, 2, 4, 3 }, { 2, 2, 4, 2 }, 0, { 0 }, 0, { FALSE, 0.0 }, TRUE },
  { "gqa causal", { 1, 4, 4, 2 }, { 1, 2, 3, 2 }, { 1, 2, 3, 3 }, 0, { 0 }, 0, { TRUE, 0.0 }, TRUE },
  { "causal more keys", { 2, 1, 2, 3 }, { 2, 1, 4, 3 }, { 2, 1, 4, 2 }, 0, { 0 }, 0, { TRUE, 0.0 }, TRUE },
  { "gqa causal blocks", { 1, 4, 130, 2 }, { 1, 2, 135, 2 }, { 1, 2, 135, 3 }, 0, { 0 }, 0,
    { TRUE, 0.0 }, TRUE },
  { "causal blocks more queries", { 1, 1, 140, 2 }, { 1, 1, 100, 2 }, { 1, 1, 100, 2 }, 0, { 0 }, 0,
    { TRUE, 0.0 }, TRUE },
  { "custom scale", { 1, 2, 3, 3 }, { 1, 2, 2, 3 }, { 1, 2, 2, 2 }, 0, { 0 }, 0, { FALSE, 0.45 }, TRUE },
  { "mask [S, Skv]", { 2, 2, 3, 2 }, { 2, 2, 4, 2 }, { 2, 2, 4, 2 }, 2, { 3, 4 }, 5, { FALSE, 0.0 }, TRUE },
  { "mask [B, 1, S, Skv] gqa", { 2, 4, 2, 2 }, { 2, 2, 3, 2 }, { 2, 2, 3, 3 }, 4, { 2, 1, 2, 3 }, 0,
    { FALSE, 0.8 }, TRUE },
  { "mask [1, H, 1, Skv]", { 2, 2, 3, 2 }, { 2, 2, 3, 2 }, { 2, 2, 3, 2 }, 4, { 1, 2, 1, 3 }, 0,
    { FALSE, 0.0 }, TRUE },
  { "mask [S, 1]", { 1, 2, 3, 2 }, { 1, 2, 4, 2 }, { 1, 2, 4, 2 }, 2, { 3, 1 }, 0, { FALSE, 0.0 }, TRUE },
  { "mask only", { 1, 2, 3, 2 }, { 1, 2, 4, 2 }, { 1, 2, 4, 2 }, 4, { 1, 2, 3, 4 }, 7, { FALSE, 0.0 }, FALSE },
};

static void
test_gradients (void)
{
  for (gsize c = 0; c < G_N_ELEMENTS (grad_cases); c++)
    {
      const GradCase *cs = &grad_cases[c];
      g_autoptr(HpTensor) q = random_tensor (HP_DTYPE_FLOAT64, cs->q, 4, 100 + c, 0, 0);
      g_autoptr(HpTensor) k = random_tensor (HP_DTYPE_FLOAT64, cs->k, 4, 200 + c, 0, 0);
      g_autoptr(HpTensor) v = random_tensor (HP_DTYPE_FLOAT64, cs->v, 4, 300 + c, 0, 0);
      g_autoptr(HpTensor) mask = cs->mask_ndim > 0
        ? random_tensor (HP_DTYPE_FLOAT64, cs->mask, cs->mask_ndim, 400 + c, cs->inf_period, 2)
        : NULL;
      HpTensor *inputs[] = { q, k, v, mask };

      hp_tensor_set_requires_grad (q, cs->grad_qkv);
      hp_tensor_set_requires_grad (k, cs->grad_qkv);
      hp_tensor_set_requires_grad (v, cs->grad_qkv);
      if (mask != NULL)
        hp_tensor_set_requires_grad (mask, TRUE);
      hp_test_gradcheck (cs->name, call_attention, (gpointer) &cs->options, inputs, 4);
    }

  {
    /* value alone: the softmax gradient is skipped */
    g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 2, 3, 2), 7, FALSE);
    g_autoptr(HpTensor) k = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 1, 3, 2), 8, FALSE);
    g_autoptr(HpTensor) v = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 1, 3, 2), 9, TRUE);
    HpTensor *inputs[] = { q, k, v, NULL };
    Options options = { TRUE, 0.0 };

    hp_test_gradcheck ("value only", call_attention, &options, inputs, 4);
    g_assert_null (hp_tensor_get_grad (q));
  }
}

/* float32 gradients against the float64 gradients of the same numbers */
static void
test_float32_backward (void)
{
  HpTensor *grads[2][4] = { { NULL } };
  const HpDType dtypes[] = { HP_DTYPE_FLOAT64, HP_DTYPE_FLOAT32 };

  for (guint t = 0; t < 2; t++)
    {
      g_autoptr(GError) error = NULL;
      /* rounded to float32 first so both runs see equal inputs */
      g_autoptr(HpTensor) q32 = random_tensor (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 4, 3, 3), 1, 0, 0);
      g_autoptr(HpTensor) k32 = random_tensor (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 2, 5, 3), 2, 0, 0);
      g_autoptr(HpTensor) v32 = random_tensor (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 2, 5, 2), 3, 0, 0);
      g_autoptr(HpTensor) m32 = random_tensor (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 1, 3, 5), 4, 4, 1);
      HpTensor *src[] = { q32, k32, v32, m32 };
      HpTensor *inputs[4] = { NULL };
      g_autoptr(HpTensor) out = NULL;
      g_autoptr(HpTensor) weights = NULL;

      for (guint i = 0; i < 4; i++)
        {
          guint ndim;
          const gint64 *shape = hp_tensor_get_shape (src[i], &ndim);
          gsize n;
          g_autofree gdouble *values = hp_tensor_to_float64_array (src[i], &n);

          inputs[i] = hp_test_tensor (dtypes[t], values, n, shape, ndim);
          hp_tensor_set_requires_grad (inputs[i], TRUE);
        }

      out = hp_tensor_scaled_dot_product_attention (inputs[0], inputs[1], inputs[2], inputs[3],
                                                    FALSE, 0.0, &error);
      g_assert_no_error (error);
      {
        g_autoptr(HpTensor) w64 = hp_tensor_new_uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4, 3, 2), -1.0, 1.0, 5);
        gsize n;
        g_autofree gdouble *w = hp_tensor_to_float64_array (w64, &n);

        weights = hp_test_tensor (dtypes[t], w, n, HP_TEST_SHAPE (2, 4, 3, 2));
      }
      hp_tensor_backward (out, weights, &error);
      g_assert_no_error (error);

      for (guint i = 0; i < 4; i++)
        {
          grads[t][i] = g_object_ref (hp_tensor_get_grad (inputs[i]));
          g_assert_cmpint (hp_tensor_get_dtype (grads[t][i]), ==, dtypes[t]);
          g_object_unref (inputs[i]);
        }
    }

  for (guint i = 0; i < 4; i++)
    {
      hp_test_assert_close (grads[1][i], grads[0][i], 1e-4, 1e-5);
      g_object_unref (grads[0][i]);
      g_object_unref (grads[1][i]);
    }
}

static void
test_recording (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 1, 2, 2), 1, TRUE);
  g_autoptr(HpTensor) k = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 1, 2, 2), 2, FALSE);
  g_autoptr(HpTensor) v = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 1, 2, 2), 3, FALSE);
  g_autoptr(HpTensor) recorded = hp_tensor_scaled_dot_product_attention (q, k, v, NULL, FALSE, 0.0, &error);
  g_autoptr(HpTensor) plain = NULL;

  g_assert_no_error (error);
  g_assert_true (hp_tensor_get_requires_grad (recorded));

  hp_grad_mode_set_enabled (FALSE);
  plain = hp_tensor_scaled_dot_product_attention (q, k, v, NULL, FALSE, 0.0, &error);
  hp_grad_mode_set_enabled (TRUE);
  g_assert_no_error (error);
  g_assert_false (hp_tensor_get_requires_grad (plain));
  hp_test_assert_close (plain, recorded, 0, 0);
}

static void
test_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) q = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 2, 4, 3));
  g_autoptr(HpTensor) kv = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 2, 4, 3));
  g_autoptr(HpTensor) q3 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 4, 3));
  g_autoptr(HpTensor) q_b2 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 2, 4, 3));
  g_autoptr(HpTensor) q_h3 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 3, 4, 3));
  g_autoptr(HpTensor) kv_h1 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 1, 4, 3));
  g_autoptr(HpTensor) kv_h0 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 0, 4, 3));
  g_autoptr(HpTensor) kv_l5 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 2, 5, 3));
  g_autoptr(HpTensor) k_d2 = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 2, 4, 2));
  g_autoptr(HpTensor) kv64 = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 2, 4, 3));
  /* empty, yet too wide for a BLAS int */
  g_autoptr(HpTensor) q_huge = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 1, 0, (gint64) G_MAXINT + 1));
  g_autoptr(HpTensor) k_huge = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 1, 0, (gint64) G_MAXINT + 1));
  g_autoptr(HpTensor) v_empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 1, 0, 1));
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 0, 1, 2, 3 }, 4, HP_TEST_SHAPE (1, 1, 2, 2));
  g_autoptr(HpTensor) mask = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (4, 4));
  g_autoptr(HpTensor) mask_bad = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3, 4));
  g_autoptr(HpTensor) mask_5d = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 1, 2, 4, 4));
  g_autoptr(HpTensor) mask64 = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 4));

  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q3, kv, kv, NULL, FALSE, 0, &error),
                        &error, HP_ERROR_SHAPE,
                        "scaled_dot_product_attention: query [2, 4, 3], key [1, 2, 4, 3] and "
                        "value [1, 2, 4, 3] must all have 4 dims");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q_b2, kv, kv, NULL, FALSE, 0, &error),
                        &error, HP_ERROR_SHAPE,
                        "scaled_dot_product_attention: query [2, 2, 4, 3], key [1, 2, 4, 3] and "
                        "value [1, 2, 4, 3] do not fit (batch sizes differ)");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q, kv, kv_h1, NULL, FALSE, 0, &error),
                        &error, HP_ERROR_SHAPE, "do not fit (key and value heads differ)");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q, kv, kv_l5, NULL, FALSE, 0, &error),
                        &error, HP_ERROR_SHAPE,
                        "key [1, 2, 4, 3] and value [1, 2, 5, 3] do not fit (key and value lengths differ)");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q, k_d2, kv, NULL, FALSE, 0, &error),
                        &error, HP_ERROR_SHAPE, "do not fit (query and key head dims differ)");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q_h3, kv, kv, NULL, FALSE, 0, &error),
                        &error, HP_ERROR_SHAPE,
                        "query [1, 3, 4, 3], key [1, 2, 4, 3] and value [1, 2, 4, 3] do not fit "
                        "(query heads are not a multiple of key/value heads)");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q, kv_h0, kv_h0, NULL, FALSE, 0, &error),
                        &error, HP_ERROR_SHAPE, "query heads are not a multiple of key/value heads");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q_huge, k_huge, v_empty, NULL, FALSE, 0, &error),
                        &error, HP_ERROR_SHAPE, "do not fit (a length or head dim exceeds the BLAS integer range)");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q, kv, kv, mask, TRUE, 0, &error),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "scaled_dot_product_attention: a mask and is_causal cannot be given together");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q, kv, kv, mask_bad, FALSE, 0, &error),
                        &error, HP_ERROR_SHAPE,
                        "scaled_dot_product_attention: mask [3, 4] does not broadcast to the scores [1, 2, 4, 4]");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q, kv, kv, mask_5d, FALSE, 0, &error),
                        &error, HP_ERROR_SHAPE, "mask [1, 1, 2, 4, 4] does not broadcast");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q, kv64, kv, NULL, FALSE, 0, &error),
                        &error, HP_ERROR_INVALID_ARGUMENT, "scaled_dot_product_attention: dtypes differ");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q, kv, kv64, NULL, FALSE, 0, &error),
                        &error, HP_ERROR_INVALID_ARGUMENT, "dtypes differ");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (q, kv, kv, mask64, FALSE, 0, &error),
                        &error, HP_ERROR_INVALID_ARGUMENT, "dtypes differ");
  hp_test_assert_error (hp_tensor_scaled_dot_product_attention (ids, ids, ids, NULL, FALSE, 0, &error),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "scaled_dot_product_attention: needs a floating point tensor");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/attention/values", test_values);
  g_test_add_func ("/attention/tiny", test_tiny);
  g_test_add_func ("/attention/fully-masked-row", test_fully_masked_row);
  g_test_add_func ("/attention/empty", test_empty);
  g_test_add_func ("/attention/gradients", test_gradients);
  g_test_add_func ("/attention/float32-backward", test_float32_backward);
  g_test_add_func ("/attention/recording", test_recording);
  g_test_add_func ("/attention/bad-input", test_bad_input);

  return g_test_run ();
}
