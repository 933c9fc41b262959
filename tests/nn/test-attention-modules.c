/* test-attention-modules.c: rotary embedding, inner attention and
 * grouped-query attention on one rank
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>
#include <string.h>

#include <gio/gio.h>

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

/* Runs @module on the @n tensors that follow */
static GPtrArray *
forward_n (gpointer module,
           guint    n,
           ...)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  GPtrArray *outputs;
  va_list ap;

  va_start (ap, n);
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (args, va_arg (ap, HpTensor *));
  va_end (ap);
  outputs = hp_module_call (HP_MODULE (module), args, &error);
  g_assert_no_error (error);
  g_assert_nonnull (outputs);
  return outputs;
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

/* The values of @tensor as doubles */
static gdouble *
values_of (HpTensor *tensor,
           gsize    *n)
{
  gsize count;
  gdouble *values = hp_tensor_to_float64_array (tensor, &count);

  if (n != NULL)
    *n = count;
  return values;
}

static void
assert_bitwise_equal (HpTensor *a,
                      HpTensor *b)
{
  gsize na, nb;
  g_autofree gdouble *va = values_of (a, &na);
  g_autofree gdouble *vb = values_of (b, &nb);
  guint ndim_a, ndim_b;
  const gint64 *sa = hp_tensor_get_shape (a, &ndim_a);
  const gint64 *sb = hp_tensor_get_shape (b, &ndim_b);

  g_assert_cmpuint (ndim_a, ==, ndim_b);
  g_assert_true (memcmp (sa, sb, ndim_a * sizeof (gint64)) == 0);
  g_assert_cmpuint (na, ==, nb);
  g_assert_true (memcmp (va, vb, na * sizeof (gdouble)) == 0);
}

/* Writes @config as JSON, reads it back and checks the copy is equal
 * and writes the same text */
static void
assert_json_round_trip (HpConfig *config)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *text = hp_config_to_json (config, TRUE);
  g_autoptr(HpConfig) back = hp_config_new_from_json (G_OBJECT_TYPE (config), text, &error);
  g_autofree gchar *again = NULL;

  g_assert_no_error (error);
  g_assert_true (hp_config_equal (back, config));
  again = hp_config_to_json (back, TRUE);
  g_assert_cmpstr (again, ==, text);
}

static HpTensor *
transposed (HpTensor *t)
{
  g_autoptr(GError) error = NULL;
  HpTensor *out = hp_tensor_transpose (t, 1, 2, &error);

  g_assert_no_error (error);
  return out;
}

/* HpRotaryEmbedding */

static HpRotaryEmbeddingConfig *
rope_config (gint    head_dim,
             gint    max_seq_len,
             gdouble theta,
             HpDType dtype)
{
  return g_object_new (HP_TYPE_ROTARY_EMBEDDING_CONFIG,
                       "head-dim", head_dim,
                       "max-seq-len", max_seq_len,
                       "theta", theta,
                       "dtype", dtype,
                       NULL);
}

static void
test_rotary_config (void)
{
  g_autoptr(HpRotaryEmbeddingConfig) config = hp_rotary_embedding_config_new ();
  g_autoptr(HpRotaryEmbeddingConfig) changed = rope_config (6, 5, 100.0, HP_DTYPE_FLOAT64);

  g_assert_cmpint (hp_rotary_embedding_config_get_head_dim (config), ==, 64);
  g_assert_cmpint (hp_rotary_embedding_config_get_max_seq_len (config), ==, 2048);
  g_assert_cmpfloat (hp_rotary_embedding_config_get_theta (config), ==, 10000.0);
  g_assert_cmpint (hp_rotary_embedding_config_get_dtype (config), ==, HP_DTYPE_FLOAT32);
  g_assert_true (hp_config_get_owner_type (HP_CONFIG (config)) == HP_TYPE_ROTARY_EMBEDDING);
  assert_json_round_trip (HP_CONFIG (config));
  assert_json_round_trip (HP_CONFIG (changed));
}

/* The tables against values worked out by hand:
 * entry [s, i] is cos/sin (s * 100^(-2i/6)) */
static void
test_rotary_tables (void)
{
  g_autoptr(HpRotaryEmbeddingConfig) config = rope_config (6, 5, 100.0, HP_DTYPE_FLOAT64);
  g_autoptr(HpRotaryEmbedding) rope = build (config, HP_TYPE_ROTARY_EMBEDDING);
  HpTensor *cos_table = hp_module_get_buffer (HP_MODULE (rope), "cos");
  HpTensor *sin_table = hp_module_get_buffer (HP_MODULE (rope), "sin");
  g_auto(GStrv) names = hp_module_get_buffer_names (HP_MODULE (rope));
  g_autoptr(HpStateDict) params = hp_module_named_parameters (HP_MODULE (rope));
  const struct { gint s, i; gdouble cos, sin; } cases[] = {
    { 0, 2, 1.0, 0.0 },
    { 2, 0, -0.4161468365471424, 0.9092974268256817 },
    { 3, 2, 0.990320699135675, 0.13879810108005053 },
    { 4, 1, 0.651092123633923, 0.7589987131358448 },
    { 1, 1, 0.9768816851701912, 0.21378066605529897 },
  };
  gsize n;
  g_autofree gdouble *c = values_of (cos_table, &n);
  g_autofree gdouble *s = values_of (sin_table, NULL);

  g_assert_cmpuint (g_strv_length (names), ==, 2);
  g_assert_cmpstr (names[0], ==, "cos");
  g_assert_cmpstr (names[1], ==, "sin");
  g_assert_false (hp_module_buffer_is_persistent (HP_MODULE (rope), "cos"));
  g_assert_false (hp_module_buffer_is_persistent (HP_MODULE (rope), "sin"));
  g_assert_cmpuint (hp_state_dict_get_size (params), ==, 0);
  hp_test_assert_shape (cos_table, HP_TEST_SHAPE (5, 3));
  hp_test_assert_shape (sin_table, HP_TEST_SHAPE (5, 3));
  g_assert_cmpint (hp_tensor_get_dtype (cos_table), ==, HP_DTYPE_FLOAT64);
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      g_assert_cmpfloat_with_epsilon (c[cases[k].s * 3 + cases[k].i], cases[k].cos, 1e-15);
      g_assert_cmpfloat_with_epsilon (s[cases[k].s * 3 + cases[k].i], cases[k].sin, 1e-15);
    }
  /* every entry is on the unit circle */
  for (gsize k = 0; k < n; k++)
    g_assert_cmpfloat_with_epsilon (c[k] * c[k] + s[k] * s[k], 1.0, 1e-15);
}

/* Hugging Face's frequency i of head dim @d, written out as
 * modeling_rope_utils has it: the default inverse frequency, for linear
 * divided by the factor, for llama3 kept above the high-frequency
 * wavelength, divided below the low-frequency one and interpolated in
 * between */
static gdouble
hf_frequency (HpRopeScaling scaling,
              gint          i,
              gint          d,
              gdouble       theta,
              gdouble       factor,
              gdouble       low,
              gdouble       high,
              gdouble       old_context)
{
  gdouble inv_freq = 1.0 / pow (theta, (2.0 * i) / d);
  gdouble wavelen = 2 * M_PI / inv_freq;
  gdouble low_freq_wavelen = old_context / low;
  gdouble high_freq_wavelen = old_context / high;
  gdouble inv_freq_llama, smooth;

  if (scaling == HP_ROPE_SCALING_NONE)
    return inv_freq;
  if (scaling == HP_ROPE_SCALING_LINEAR)
    return inv_freq / factor;
  inv_freq_llama = wavelen > low_freq_wavelen ? inv_freq / factor : inv_freq;
  smooth = (old_context / wavelen - low) / (high - low);
  if (!(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen))
    return (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama;
  return inv_freq_llama;
}

/* The scaled tables against Hugging Face's formulas, float64; the
 * llama3 case has frequencies kept (i = 0), interpolated (1, 2) and
 * divided (3 and up) */
static void
test_rotary_scaled_tables (void)
{
  for (HpRopeScaling scaling = HP_ROPE_SCALING_NONE; scaling <= HP_ROPE_SCALING_LLAMA3; scaling++)
    {
      g_autoptr(HpRotaryEmbeddingConfig) config = rope_config (16, 7, 10000.0, HP_DTYPE_FLOAT64);
      g_autoptr(HpRotaryEmbedding) rope = NULL;
      g_autofree gdouble *c = NULL;
      g_autofree gdouble *s = NULL;

      g_object_set (config, "scaling", scaling, "scaling-factor", 8.0, "low-freq-factor", 1.0,
                    "high-freq-factor", 4.0, "original-max-seq-len", 64, NULL);
      assert_json_round_trip (HP_CONFIG (config));
      rope = build (config, HP_TYPE_ROTARY_EMBEDDING);
      c = values_of (hp_module_get_buffer (HP_MODULE (rope), "cos"), NULL);
      s = values_of (hp_module_get_buffer (HP_MODULE (rope), "sin"), NULL);
      for (gint pos = 0; pos < 7; pos++)
        for (gint i = 0; i < 8; i++)
          {
            gdouble f = hf_frequency (scaling, i, 16, 10000.0, 8.0, 1.0, 4.0, 64);

            g_assert_cmpfloat_with_epsilon (c[pos * 8 + i], cos (pos * f), 1e-14);
            g_assert_cmpfloat_with_epsilon (s[pos * 8 + i], sin (pos * f), 1e-14);
          }
      /* the three bands of llama3 */
      if (scaling == HP_ROPE_SCALING_LLAMA3)
        {
          gdouble plain1 = pow (10000.0, -2.0 / 16);

          g_assert_cmpfloat_with_epsilon (s[1 * 8 + 0], sin (1.0), 1e-15);
          g_assert_cmpfloat_with_epsilon (s[1 * 8 + 3], sin (pow (10000.0, -6.0 / 16) / 8), 1e-15);
          g_assert_cmpfloat (asin (s[1 * 8 + 1]), <, plain1 * (1 - 1e-9));
          g_assert_cmpfloat (asin (s[1 * 8 + 1]), >, plain1 / 8);
        }
      else if (scaling == HP_ROPE_SCALING_LINEAR)
        g_assert_cmpfloat_with_epsilon (s[1 * 8 + 0], sin (1.0 / 8), 1e-15);
    }
}

/* float32 tables hold the float64 values rounded */
static void
test_rotary_tables_float32 (void)
{
  g_autoptr(HpRotaryEmbeddingConfig) config = rope_config (6, 5, 100.0, HP_DTYPE_FLOAT32);
  g_autoptr(HpRotaryEmbedding) rope = build (config, HP_TYPE_ROTARY_EMBEDDING);
  HpTensor *sin_table = hp_module_get_buffer (HP_MODULE (rope), "sin");
  g_autofree gdouble *s = values_of (sin_table, NULL);

  g_assert_cmpint (hp_tensor_get_dtype (sin_table), ==, HP_DTYPE_FLOAT32);
  g_assert_cmpfloat (s[2 * 3 + 0], ==, (gdouble) (gfloat) 0.9092974268256817);
}

/* x [2, 4, 3, 6] rotated pair by pair with the first 4 rows of the
 * tables */
static void
test_rotary_forward (void)
{
  g_autoptr(HpRotaryEmbeddingConfig) config = rope_config (6, 5, 100.0, HP_DTYPE_FLOAT64);
  g_autoptr(HpRotaryEmbedding) rope = build (config, HP_TYPE_ROTARY_EMBEDDING);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4, 3, 6), 11, FALSE);
  g_autoptr(HpTensor) y = forward1 (rope, x);
  g_autofree gdouble *xv = values_of (x, NULL);
  g_autofree gdouble *c = values_of (hp_module_get_buffer (HP_MODULE (rope), "cos"), NULL);
  g_autofree gdouble *s = values_of (hp_module_get_buffer (HP_MODULE (rope), "sin"), NULL);
  gdouble expected[2 * 4 * 3 * 6];

  for (gint b = 0; b < 2; b++)
    for (gint p = 0; p < 4; p++)
      for (gint h = 0; h < 3; h++)
        for (gint i = 0; i < 3; i++)
          {
            gint at = ((b * 4 + p) * 3 + h) * 6 + 2 * i;
            gdouble x0 = xv[at], x1 = xv[at + 1];

            expected[at] = x0 * c[p * 3 + i] - x1 * s[p * 3 + i];
            expected[at + 1] = x0 * s[p * 3 + i] + x1 * c[p * 3 + i];
          }
  hp_test_assert_values (y, expected, G_N_ELEMENTS (expected), HP_TEST_SHAPE (2, 4, 3, 6),
                         1e-15, 1e-15);
  /* position 0 is not turned */
  for (gint k = 0; k < 18; k++)
    g_assert_cmpfloat (expected[k], ==, xv[k]);
}

static HpTensor *
call_module1 (HpTensor **inputs,
              gpointer   user_data,
              GError   **error)
{
  return hp_module_call1 (HP_MODULE (user_data), inputs[0], error);
}

static void
test_rotary_gradient (void)
{
  g_autoptr(HpRotaryEmbeddingConfig) config = rope_config (4, 3, 10.0, HP_DTYPE_FLOAT64);
  g_autoptr(HpRotaryEmbedding) rope = build (config, HP_TYPE_ROTARY_EMBEDDING);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 3, 2, 4), 4, TRUE);
  HpTensor *inputs[] = { x };

  hp_test_gradcheck ("rotary", call_module1, rope, inputs, 1);
}

/* init_states computes the tables anew */
static void
test_rotary_init_states (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpRotaryEmbeddingConfig) config = rope_config (4, 3, 10.0, HP_DTYPE_FLOAT64);
  g_autoptr(HpRotaryEmbedding) rope = build (config, HP_TYPE_ROTARY_EMBEDDING);
  g_autoptr(HpTensor) before = g_object_ref (hp_module_get_buffer (HP_MODULE (rope), "cos"));
  g_autoptr(HpTensor) zeros = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, (gint64[]) { 3, 2 }, 2);

  g_assert_true (hp_module_register_buffer (HP_MODULE (rope), "cos", zeros, FALSE, &error));
  g_assert_true (hp_module_init_states (HP_MODULE (rope), 1, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_get_buffer (HP_MODULE (rope), "cos") != zeros);
  assert_bitwise_equal (hp_module_get_buffer (HP_MODULE (rope), "cos"), before);
  g_assert_false (hp_module_buffer_is_persistent (HP_MODULE (rope), "cos"));
}

/* A DTensor sharded on the heads meets plain tables */
static void
test_rotary_dtensor (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpRotaryEmbeddingConfig) config = rope_config (4, 6, 10.0, HP_DTYPE_FLOAT64);
  g_autoptr(HpRotaryEmbedding) rope = build (config, HP_TYPE_ROTARY_EMBEDDING);
  gint shape[] = { hp_get_world_size () };
  g_autoptr(HpDeviceMesh) mesh = hp_device_mesh_new (shape, 1, (const gchar *[]) { "tp", NULL }, &error);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 5, 4, 4), 21, FALSE);
  g_autoptr(GPtrArray) heads = hp_placements_new_from_string ("S(2)", &error);
  g_autoptr(HpDTensor) x_dt = hp_dtensor_distribute (x, mesh, heads, -1, &error);
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) y_ref = forward1 (rope, x);
  g_autoptr(HpTensor) full = NULL;
  g_autofree gchar *placements = NULL;

  g_assert_no_error (error);
  y = forward1 (rope, HP_TENSOR (x_dt));
  g_assert_true (HP_IS_DTENSOR (y));
  placements = hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (y)));
  g_assert_cmpstr (placements, ==, "(S(2))");
  full = hp_dtensor_full_tensor (HP_DTENSOR (y), &error);
  g_assert_no_error (error);
  assert_bitwise_equal (full, y_ref);
}

static void
test_rotary_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpRotaryEmbeddingConfig) odd = rope_config (6, 5, 100.0, HP_DTYPE_FLOAT64);
  g_autoptr(HpRotaryEmbeddingConfig) ints = rope_config (6, 5, 100.0, HP_DTYPE_INT64);
  g_autoptr(HpRotaryEmbeddingConfig) config = rope_config (4, 3, 10.0, HP_DTYPE_FLOAT64);
  g_autoptr(HpRotaryEmbedding) rope = build (config, HP_TYPE_ROTARY_EMBEDDING);
  g_autoptr(HpTensor) wide = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 2, 2, 6), 1, FALSE);
  g_autoptr(HpTensor) flat = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4), 1, FALSE);
  g_autoptr(HpTensor) longer = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 4, 2, 4), 1, FALSE);
  g_autoptr(HpTensor) single = hp_test_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 2, 2, 4), 1, FALSE);
  g_autoptr(HpModuleConfig) plain = hp_module_config_new ();
  g_autoptr(HpRotaryEmbedding) bare = NULL;
  g_autoptr(HpRotaryEmbedding) unready = NULL;

  g_object_set (odd, "head-dim", 5, NULL);
  hp_test_assert_error (hp_rotary_embedding_new (odd, &error), &error, HP_ERROR_CONFIG,
                        "HpRotaryEmbedding: head-dim 5 must be even");
  hp_test_assert_error (hp_rotary_embedding_new (ints, &error), &error, HP_ERROR_CONFIG,
                        "HpRotaryEmbeddingConfig.dtype: int64 is not a floating-point type "
                        "(float32 or float64)");
  hp_test_assert_error (GINT_TO_POINTER (hp_config_validate (HP_CONFIG (odd), &error)), &error,
                        HP_ERROR_CONFIG, "HpRotaryEmbedding: head-dim 5 must be even");
  /* llama3 needs a band between its wavelengths; the factors are
   * positive and finite */
  {
    g_autoptr(HpRotaryEmbeddingConfig) no_band = rope_config (4, 3, 10.0, HP_DTYPE_FLOAT64);

    g_object_set (no_band, "scaling", HP_ROPE_SCALING_LLAMA3, "low-freq-factor", 2.0,
                  "high-freq-factor", 2.0, NULL);
    hp_test_assert_error (hp_rotary_embedding_new (no_band, &error), &error, HP_ERROR_CONFIG,
                          "HpRotaryEmbedding: high-freq-factor 2 must be greater than "
                          "low-freq-factor 2 for the llama3 scaling");
    /* the same factors mean nothing to the other scalings */
    g_object_set (no_band, "scaling", HP_ROPE_SCALING_LINEAR, NULL);
    g_assert_true (hp_config_validate (HP_CONFIG (no_band), &error));
    g_assert_no_error (error);
    hp_test_assert_error (GINT_TO_POINTER (hp_config_set_path_from_string (
                            HP_CONFIG (no_band), "scaling-factor", "0", &error)), &error,
                          HP_ERROR_CONFIG, "scaling-factor");
    hp_test_assert_error (GINT_TO_POINTER (hp_config_set_path_from_string (
                            HP_CONFIG (no_band), "scaling-factor", "inf", &error)), &error,
                          HP_ERROR_CONFIG, "scaling-factor");
    hp_test_assert_error (GINT_TO_POINTER (hp_config_set_path_from_string (
                            HP_CONFIG (no_band), "low-freq-factor", "nan", &error)), &error,
                          HP_ERROR_CONFIG, "low-freq-factor");
    hp_test_assert_error (GINT_TO_POINTER (hp_config_set_path_from_string (
                            HP_CONFIG (no_band), "scaling", "yarn", &error)), &error,
                          HP_ERROR_CONFIG, "scaling");
    g_assert_cmpfloat (hp_rotary_embedding_config_get_scaling_factor (no_band), ==, 8.0);
  }

  hp_test_assert_error (hp_module_call1 (HP_MODULE (rope), wide, &error), &error,
                        HP_ERROR_SHAPE,
                        "HpRotaryEmbedding: x has shape [1, 2, 2, 6], but needs [..., S, H, 4]");
  hp_test_assert_error (hp_module_call1 (HP_MODULE (rope), flat, &error), &error,
                        HP_ERROR_SHAPE, "x has shape [2, 4]");
  hp_test_assert_error (hp_module_call1 (HP_MODULE (rope), longer, &error), &error,
                        HP_ERROR_SHAPE,
                        "HpRotaryEmbedding: sequence length 4 exceeds max-seq-len 3");
  hp_test_assert_error (hp_module_call1 (HP_MODULE (rope), single, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "HpRotaryEmbedding: apply_rotary");
  {
    g_autoptr(GPtrArray) none = g_ptr_array_new ();

    hp_test_assert_error (hp_module_call (HP_MODULE (rope), none, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT,
                          "HpRotaryEmbedding: forward takes the 1 tensors (x), got 0 of 0 arguments");
  }

  bare = g_object_new (HP_TYPE_ROTARY_EMBEDDING, "config", plain, NULL);
  g_assert_false (g_initable_init (G_INITABLE (bare), NULL, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==,
                   "HpRotaryEmbedding needs a HpRotaryEmbeddingConfig, not HpModuleConfig");
  g_clear_error (&error);

  unready = g_object_new (HP_TYPE_ROTARY_EMBEDDING, "config", config, NULL);
  hp_test_assert_error (hp_module_call1 (HP_MODULE (unready), longer, &error), &error,
                        HP_ERROR_STATE, "HpRotaryEmbedding is not initialized");
  g_assert_false (hp_module_init_states (HP_MODULE (unready), 0, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_STATE);
  g_clear_error (&error);
  g_assert_true (g_initable_init (G_INITABLE (unready), NULL, &error));
  g_assert_true (g_initable_init (G_INITABLE (unready), NULL, &error));
  g_assert_no_error (error);
  g_assert_nonnull (hp_module_get_buffer (HP_MODULE (unready), "sin"));
}

/* HpSDPA */

static HpSDPAConfig *
sdpa_config (gboolean causal,
             gboolean return_lse,
             gdouble  scale)
{
  return g_object_new (HP_TYPE_SDPA_CONFIG,
                       "causal", causal,
                       "return-lse", return_lse,
                       "scale", scale,
                       NULL);
}

static void
test_sdpa_config (void)
{
  g_autoptr(HpSDPAConfig) config = hp_sdpa_config_new ();
  g_autoptr(HpSDPAConfig) changed = sdpa_config (FALSE, TRUE, 0.25);

  g_assert_true (hp_sdpa_config_get_causal (config));
  g_assert_false (hp_sdpa_config_get_return_lse (config));
  g_assert_cmpfloat (hp_sdpa_config_get_scale (config), ==, 0.0);
  g_assert_false (hp_sdpa_config_get_causal (changed));
  g_assert_true (hp_sdpa_config_get_return_lse (changed));
  g_assert_cmpfloat (hp_sdpa_config_get_scale (changed), ==, 0.25);
  g_assert_true (hp_config_get_owner_type (HP_CONFIG (config)) == HP_TYPE_SDPA);
  assert_json_round_trip (HP_CONFIG (config));
  assert_json_round_trip (HP_CONFIG (changed));
}

/* The module equals the op on [B, H, S, D], bit for bit */
static void
test_sdpa_matches_op (void)
{
  const struct { gboolean causal; gdouble scale; gint64 heads, kv_heads, kv_len; } cases[] = {
    { TRUE, 0.0, 4, 2, 5 },
    { FALSE, 0.0, 4, 2, 5 },
    { TRUE, 0.3, 3, 3, 5 },
    { FALSE, -1.0, 4, 1, 7 },
    { TRUE, 0.0, 2, 1, 3 },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpSDPAConfig) config = sdpa_config (cases[c].causal, FALSE, cases[c].scale);
      g_autoptr(HpSDPA) sdpa = build (config, HP_TYPE_SDPA);
      g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT64,
                                             HP_TEST_SHAPE (2, 5, cases[c].heads, 6), 10 + c, FALSE);
      g_autoptr(HpTensor) k = hp_test_randn (HP_DTYPE_FLOAT64,
                                             HP_TEST_SHAPE (2, cases[c].kv_len, cases[c].kv_heads, 6),
                                             20 + c, FALSE);
      g_autoptr(HpTensor) v = hp_test_randn (HP_DTYPE_FLOAT64,
                                             HP_TEST_SHAPE (2, cases[c].kv_len, cases[c].kv_heads, 6),
                                             30 + c, FALSE);
      g_autoptr(GPtrArray) outputs = forward_n (sdpa, 3, q, k, v);
      g_autoptr(HpTensor) qt = transposed (q);
      g_autoptr(HpTensor) kt = transposed (k);
      g_autoptr(HpTensor) vt = transposed (v);
      g_autoptr(HpTensor) direct = hp_tensor_scaled_dot_product_attention (qt, kt, vt, NULL,
                                                                           cases[c].causal,
                                                                           cases[c].scale, &error);
      g_autoptr(HpTensor) expected = NULL;

      g_assert_no_error (error);
      expected = transposed (direct);
      g_assert_cmpuint (outputs->len, ==, 1);
      hp_test_assert_shape (g_ptr_array_index (outputs, 0),
                            HP_TEST_SHAPE (2, 5, cases[c].heads, 6));
      assert_bitwise_equal (g_ptr_array_index (outputs, 0), expected);
    }
}

/* The forward goes through the registered callable inner_sdpa */
static void
test_sdpa_callable (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpSDPAConfig) config = sdpa_config (TRUE, TRUE, 0.0);
  g_autoptr(HpSDPA) sdpa = build (config, HP_TYPE_SDPA);
  g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 3, 2, 4), 1, FALSE);
  g_autoptr(HpTensor) k = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 3, 2, 4), 2, FALSE);
  g_autoptr(HpTensor) v = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 3, 2, 4), 3, FALSE);
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autoptr(GPtrArray) called = NULL;
  g_autoptr(GPtrArray) forwarded = forward_n (sdpa, 3, q, k, v);
  const gchar * const *names = hp_module_get_forward_arg_names (HP_MODULE (sdpa));

  g_assert_cmpstr (HP_SDPA_CALLABLE, ==, "inner_sdpa");
  g_assert_true (hp_module_has_callable (HP_MODULE (sdpa), "inner_sdpa"));
  g_assert_false (hp_module_callable_is_local_mapped (HP_MODULE (sdpa), "inner_sdpa"));
  g_assert_cmpstr (names[0], ==, "q");
  g_assert_cmpstr (names[1], ==, "k");
  g_assert_cmpstr (names[2], ==, "v");
  g_assert_null (names[3]);

  g_ptr_array_add (args, q);
  g_ptr_array_add (args, k);
  g_ptr_array_add (args, v);
  called = hp_module_run_callable (HP_MODULE (sdpa), "inner_sdpa", args, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (called->len, ==, 2);
  g_assert_cmpuint (forwarded->len, ==, 2);
  assert_bitwise_equal (g_ptr_array_index (called, 0), g_ptr_array_index (forwarded, 0));
  assert_bitwise_equal (g_ptr_array_index (called, 1), g_ptr_array_index (forwarded, 1));
}

/* log-sum-exp over the keys each query sees, in float64 loops:
 * q [B, S, H, D], k [B, Skv, Hkv, D] */
static gdouble *
direct_lse (HpTensor *q,
            HpTensor *k,
            gboolean  causal,
            gdouble   scale)
{
  const gint64 *qs = hp_tensor_get_shape (q, NULL);
  const gint64 *ks = hp_tensor_get_shape (k, NULL);
  gint64 B = qs[0], S = qs[1], H = qs[2], D = qs[3], Skv = ks[1], Hkv = ks[2];
  g_autofree gdouble *qv = values_of (q, NULL);
  g_autofree gdouble *kv = values_of (k, NULL);
  gdouble *out = g_new (gdouble, B * S * H);
  g_autofree gdouble *scores = g_new (gdouble, MAX (Skv, 1));

  if (!(scale > 0.0))
    scale = 1.0 / sqrt ((gdouble) D);
  for (gint64 b = 0; b < B; b++)
    for (gint64 i = 0; i < S; i++)
      for (gint64 h = 0; h < H; h++)
        {
          gint64 g = h / (H / Hkv);
          gint64 n = causal ? MIN (i + 1, Skv) : Skv;
          gdouble max = -INFINITY, sum = 0.0;

          for (gint64 j = 0; j < n; j++)
            {
              gdouble dot = 0.0;

              for (gint64 d = 0; d < D; d++)
                dot += qv[((b * S + i) * H + h) * D + d] * kv[((b * Skv + j) * Hkv + g) * D + d];
              scores[j] = scale * dot;
              max = MAX (max, scores[j]);
            }
          for (gint64 j = 0; j < n; j++)
            sum += exp (scores[j] - max);
          out[(b * S + i) * H + h] = max + log (sum);
        }
  return out;
}

static void
test_sdpa_lse (void)
{
  const struct { gboolean causal; gdouble scale; gint64 q_len, heads, kv_heads, kv_len; } cases[] = {
    { TRUE, 0.0, 5, 4, 2, 5 },
    { FALSE, 0.0, 5, 4, 2, 5 },
    { TRUE, 0.7, 4, 3, 3, 6 },
    { TRUE, 0.0, 6, 2, 1, 3 },
    { FALSE, 2.0, 1, 4, 4, 4 },
    { TRUE, 0.0, 3, 2, 2, 1 },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    for (guint t = 0; t < 2; t++)
      {
        HpDType dtype = t == 0 ? HP_DTYPE_FLOAT64 : HP_DTYPE_FLOAT32;
        gdouble tol = t == 0 ? 1e-12 : 2e-5;
        g_autoptr(HpSDPAConfig) config = sdpa_config (cases[c].causal, TRUE, cases[c].scale);
        g_autoptr(HpSDPA) sdpa = build (config, HP_TYPE_SDPA);
        g_autoptr(HpTensor) q = hp_test_randn (dtype,
                                               HP_TEST_SHAPE (2, cases[c].q_len, cases[c].heads, 4),
                                               40 + c, FALSE);
        g_autoptr(HpTensor) k = hp_test_randn (dtype,
                                               HP_TEST_SHAPE (2, cases[c].kv_len, cases[c].kv_heads, 4),
                                               50 + c, FALSE);
        g_autoptr(HpTensor) v = hp_test_randn (dtype,
                                               HP_TEST_SHAPE (2, cases[c].kv_len, cases[c].kv_heads, 4),
                                               60 + c, FALSE);
        g_autoptr(GPtrArray) outputs = forward_n (sdpa, 3, q, k, v);
        g_autofree gdouble *expected = direct_lse (q, k, cases[c].causal, cases[c].scale);
        HpTensor *lse = g_ptr_array_index (outputs, 1);

        g_assert_cmpuint (outputs->len, ==, 2);
        g_assert_cmpint (hp_tensor_get_dtype (lse), ==, dtype);
        hp_test_assert_values (lse, expected, 2 * cases[c].q_len * cases[c].heads,
                               HP_TEST_SHAPE (2, cases[c].q_len, cases[c].heads), tol, tol);
      }
}

typedef struct
{
  HpSDPA *sdpa;
  guint output;
} SdpaCall;

static HpTensor *
call_sdpa (HpTensor **inputs,
           gpointer   user_data,
           GError   **error)
{
  SdpaCall *call = user_data;
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autoptr(GPtrArray) outputs = NULL;

  for (guint i = 0; i < 3; i++)
    g_ptr_array_add (args, inputs[i]);
  outputs = hp_module_call (HP_MODULE (call->sdpa), args, error);
  if (outputs == NULL)
    return NULL;
  return g_object_ref (g_ptr_array_index (outputs, call->output));
}

/* Both outputs are differentiable in q, k and v */
static void
test_sdpa_gradients (void)
{
  for (guint causal = 0; causal < 2; causal++)
    {
      g_autoptr(HpSDPAConfig) config = sdpa_config (causal, TRUE, 0.0);
      g_autoptr(HpSDPA) sdpa = build (config, HP_TYPE_SDPA);
      g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 4, 4, 3), 71, TRUE);
      g_autoptr(HpTensor) k = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 5, 2, 3), 72, TRUE);
      g_autoptr(HpTensor) v = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 5, 2, 3), 73, TRUE);
      HpTensor *inputs[] = { q, k, v };
      SdpaCall out_call = { sdpa, 0 };
      SdpaCall lse_call = { sdpa, 1 };

      hp_test_gradcheck ("sdpa output", call_sdpa, &out_call, inputs, 3);
      /* the log-sum-exp does not depend on v */
      hp_tensor_set_requires_grad (v, FALSE);
      hp_test_gradcheck ("sdpa lse", call_sdpa, &lse_call, inputs, 3);
    }
}

/* No key at all: zero output, log-sum-exp -inf */
static void
test_sdpa_no_keys (void)
{
  g_autoptr(HpSDPAConfig) config = sdpa_config (TRUE, TRUE, 0.0);
  g_autoptr(HpSDPA) sdpa = build (config, HP_TYPE_SDPA);
  g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 2, 2, 4), 1, FALSE);
  g_autoptr(HpTensor) k = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, (gint64[]) { 1, 0, 1, 4 }, 4);
  g_autoptr(HpTensor) v = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, (gint64[]) { 1, 0, 1, 4 }, 4);
  g_autoptr(GPtrArray) outputs = forward_n (sdpa, 3, q, k, v);
  g_autofree gdouble *lse = values_of (g_ptr_array_index (outputs, 1), NULL);

  hp_test_assert_values (g_ptr_array_index (outputs, 0),
                         HP_TEST_DATA (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                         HP_TEST_SHAPE (1, 2, 2, 4), 0.0, 0.0);
  hp_test_assert_shape (g_ptr_array_index (outputs, 1), HP_TEST_SHAPE (1, 2, 2));
  for (guint i = 0; i < 4; i++)
    g_assert_true (isinf (lse[i]) && lse[i] < 0);
}

/* hp_sdpa_new() has no configuration it refuses: every value of every
 * field (the scale within the range of its property) builds a module,
 * and the configuration is left as it was */
static void
test_sdpa_new_any_config (void)
{
  const gdouble scales[] = { 0.0, -1.0, 0.5, G_MAXDOUBLE, -G_MAXDOUBLE };

  for (guint i = 0; i < G_N_ELEMENTS (scales); i++)
    for (guint flags = 0; flags < 4; flags++)
      {
        g_autoptr(GError) error = NULL;
        g_autoptr(HpSDPAConfig) config = sdpa_config ((flags & 1) != 0, (flags & 2) != 0, scales[i]);
        g_autofree gchar *before = hp_config_to_json (HP_CONFIG (config), FALSE);
        g_autofree gchar *after = NULL;
        g_autoptr(HpSDPA) sdpa = hp_sdpa_new (config, &error);

        g_assert_no_error (error);
        g_assert_true (HP_IS_SDPA (sdpa));
        after = hp_config_to_json (HP_CONFIG (config), FALSE);
        g_assert_cmpstr (after, ==, before);
      }
}

static void
test_sdpa_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpSDPAConfig) config = hp_sdpa_config_new ();
  g_autoptr(HpSDPA) sdpa = build (config, HP_TYPE_SDPA);
  g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 3, 4, 2), 1, FALSE);
  g_autoptr(HpTensor) k = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 3, 3, 2), 2, FALSE);
  g_autoptr(HpTensor) k2 = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 3, 2, 2), 2, FALSE);
  g_autoptr(HpTensor) v4 = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 4, 2, 2), 2, FALSE);
  g_autoptr(HpTensor) flat = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 4, 2), 3, FALSE);
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autoptr(HpModuleConfig) plain = hp_module_config_new ();
  g_autoptr(HpSDPA) bare = NULL;

  g_ptr_array_add (args, q);
  g_ptr_array_add (args, k);
  hp_test_assert_error (hp_module_call (HP_MODULE (sdpa), args, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpSDPA: forward takes the 3 tensors (q, k, v), got 2 of 2 arguments");
  g_ptr_array_add (args, NULL);
  hp_test_assert_error (hp_module_call (HP_MODULE (sdpa), args, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "got 2 of 3 arguments");
  hp_test_assert_error (hp_module_run_callable (HP_MODULE (sdpa), "inner_sdpa", args, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "got 2 of 3 arguments");

  g_ptr_array_index (args, 2) = k;
  hp_test_assert_error (hp_module_call (HP_MODULE (sdpa), args, &error), &error,
                        HP_ERROR_SHAPE,
                        "HpSDPA: q [1, 3, 4, 2], k [1, 3, 3, 2] and v [1, 3, 3, 2] do not fit "
                        "(q heads are not a multiple of k and v heads)");
  g_ptr_array_index (args, 1) = k2;
  g_ptr_array_index (args, 2) = v4;
  hp_test_assert_error (hp_module_call (HP_MODULE (sdpa), args, &error), &error,
                        HP_ERROR_SHAPE, "(k and v lengths differ)");
  g_ptr_array_index (args, 0) = flat;
  hp_test_assert_error (hp_module_call (HP_MODULE (sdpa), args, &error), &error,
                        HP_ERROR_SHAPE,
                        "HpSDPA: q [3, 4, 2], k [1, 3, 2, 2] and v [1, 4, 2, 2] do not fit "
                        "(all must be [batch, seq, heads, head_dim])");

  bare = g_object_new (HP_TYPE_SDPA, "config", plain, NULL);
  g_assert_false (g_initable_init (G_INITABLE (bare), NULL, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, "HpSDPA needs a HpSDPAConfig, not HpModuleConfig");
  g_clear_error (&error);
  hp_test_assert_error (hp_module_call (HP_MODULE (bare), args, &error), &error,
                        HP_ERROR_STATE, "HpSDPA is not initialized");
  hp_test_assert_error (hp_module_run_callable (HP_MODULE (bare), "inner_sdpa", args, &error), &error,
                        HP_ERROR_STATE, "HpSDPA is not initialized");
}

/* HpGQAttention */

static HpGQAttentionConfig *
gqa_config (gint    dim,
            gint    n_heads,
            gint    n_kv_heads,
            gint    max_seq_len,
            HpDType dtype)
{
  return g_object_new (HP_TYPE_GQ_ATTENTION_CONFIG,
                       "dim", dim,
                       "n-heads", n_heads,
                       "n-kv-heads", n_kv_heads,
                       "max-seq-len", max_seq_len,
                       "rope-theta", 500.0,
                       "dtype", dtype,
                       NULL);
}

static void
test_gqa_config (void)
{
  g_autoptr(HpGQAttentionConfig) config = hp_gq_attention_config_new ();
  g_autoptr(HpGQAttentionConfig) grouped = gqa_config (16, 4, 2, 8, HP_DTYPE_FLOAT64);

  g_assert_cmpint (hp_gq_attention_config_get_dim (config), ==, 256);
  g_assert_cmpint (hp_gq_attention_config_get_n_heads (config), ==, 8);
  g_assert_cmpint (hp_gq_attention_config_get_n_kv_heads (config), ==, 8);
  g_assert_cmpint (hp_gq_attention_config_get_head_dim (config), ==, 32);
  g_assert_cmpint (hp_gq_attention_config_get_max_seq_len (config), ==, 2048);
  g_assert_cmpfloat (hp_gq_attention_config_get_rope_theta (config), ==, 10000.0);
  g_assert_cmpint (hp_gq_attention_config_get_dtype (config), ==, HP_DTYPE_FLOAT32);
  g_assert_null (hp_gq_attention_config_get_wq (config));
  g_assert_null (hp_gq_attention_config_get_wk (config));
  g_assert_null (hp_gq_attention_config_get_wv (config));
  g_assert_null (hp_gq_attention_config_get_wo (config));
  g_assert_null (hp_gq_attention_config_get_rope (config));
  g_assert_null (hp_gq_attention_config_get_inner_attention (config));
  g_assert_true (hp_config_get_owner_type (HP_CONFIG (config)) == HP_TYPE_GQ_ATTENTION);

  g_assert_cmpint (hp_gq_attention_config_get_n_kv_heads (grouped), ==, 2);
  g_assert_cmpint (hp_gq_attention_config_get_head_dim (grouped), ==, 4);
  g_assert_true (hp_config_validate (HP_CONFIG (config), NULL));
  g_assert_true (hp_config_validate (HP_CONFIG (grouped), NULL));
  assert_json_round_trip (HP_CONFIG (config));
  assert_json_round_trip (HP_CONFIG (grouped));
}

static void
test_gqa_fill_children (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpGQAttentionConfig) config = gqa_config (16, 4, 2, 8, HP_DTYPE_FLOAT64);
  g_autoptr(HpLinearConfig) mine = g_object_new (HP_TYPE_LINEAR_CONFIG,
                                                 "in-features", 16, "out-features", 16,
                                                 "dtype", HP_DTYPE_FLOAT64, "bias", TRUE, NULL);
  HpLinearConfig *wk;
  HpRotaryEmbeddingConfig *rope;
  g_autofree gchar *json = NULL;
  g_autoptr(HpConfig) back = NULL;

  hp_gq_attention_config_set_wo (config, mine);
  g_assert_true (hp_gq_attention_config_fill_children (config, &error));
  g_assert_no_error (error);
  g_assert_true (hp_gq_attention_config_get_wo (config) == mine);
  wk = hp_gq_attention_config_get_wk (config);
  g_assert_cmpint (hp_linear_config_get_in_features (wk), ==, 16);
  g_assert_cmpint (hp_linear_config_get_out_features (wk), ==, 8);
  g_assert_false (hp_linear_config_get_bias (wk));
  g_assert_cmpint (hp_linear_config_get_dtype (wk), ==, HP_DTYPE_FLOAT64);
  g_assert_cmpint (hp_linear_config_get_out_features (hp_gq_attention_config_get_wq (config)), ==, 16);
  g_assert_cmpint (hp_linear_config_get_out_features (hp_gq_attention_config_get_wv (config)), ==, 8);
  rope = hp_gq_attention_config_get_rope (config);
  g_assert_cmpint (hp_rotary_embedding_config_get_head_dim (rope), ==, 4);
  g_assert_cmpint (hp_rotary_embedding_config_get_max_seq_len (rope), ==, 8);
  g_assert_cmpfloat (hp_rotary_embedding_config_get_theta (rope), ==, 500.0);
  g_assert_cmpint (hp_rotary_embedding_config_get_dtype (rope), ==, HP_DTYPE_FLOAT64);
  g_assert_true (hp_sdpa_config_get_causal (hp_gq_attention_config_get_inner_attention (config)));
  g_assert_true (hp_config_validate (HP_CONFIG (config), &error));
  g_assert_no_error (error);

  /* nested configs carry their type through JSON */
  json = hp_config_to_json (HP_CONFIG (config), TRUE);
  g_assert_nonnull (strstr (json, "\"rope\": {\n    \"@type\": \"HpRotaryEmbeddingConfig\""));
  assert_json_round_trip (HP_CONFIG (config));
  back = hp_config_new_from_json (HP_TYPE_GQ_ATTENTION_CONFIG, json, &error);
  g_assert_no_error (error);
  g_assert_true (hp_linear_config_get_bias (hp_gq_attention_config_get_wo (HP_GQ_ATTENTION_CONFIG (back))));
}

static void
test_gqa_shapes (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpGQAttentionConfig) config = gqa_config (16, 4, 2, 8, HP_DTYPE_FLOAT64);
  g_autoptr(HpGQAttention) attention = hp_gq_attention_new (config, &error);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 5, 16), 3, FALSE);
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) total = NULL;
  g_auto(GStrv) children = NULL;
  g_auto(GStrv) params = NULL;
  g_auto(GStrv) own = NULL;
  g_autoptr(HpStateDict) named = NULL;
  const gchar *expected_children[] = { "wq", "wk", "wv", "wo", "rope", "inner_attention", NULL };
  const gchar *expected_params[] = { "wq.weight", "wk.weight", "wv.weight", "wo.weight", NULL };

  g_assert_no_error (error);
  children = hp_module_get_child_names (HP_MODULE (attention));
  g_assert_true (g_strv_equal ((const gchar * const *) children, expected_children));
  named = hp_module_named_parameters (HP_MODULE (attention));
  params = hp_state_dict_get_names (named);
  g_assert_true (g_strv_equal ((const gchar * const *) params, expected_params));
  own = hp_module_get_parameter_names (HP_MODULE (attention));
  g_assert_cmpuint (g_strv_length (own), ==, 0);
  g_assert_true (HP_IS_LINEAR (hp_module_get_child (HP_MODULE (attention), "wq")));
  g_assert_true (HP_IS_ROTARY_EMBEDDING (hp_module_get_child (HP_MODULE (attention), "rope")));
  g_assert_true (HP_IS_SDPA (hp_module_get_child (HP_MODULE (attention), "inner_attention")));
  hp_test_assert_shape (hp_module_get_parameter (HP_MODULE (attention), "wq.weight"),
                        HP_TEST_SHAPE (16, 16));
  hp_test_assert_shape (hp_module_get_parameter (HP_MODULE (attention), "wk.weight"),
                        HP_TEST_SHAPE (8, 16));
  hp_test_assert_shape (hp_module_get_parameter (HP_MODULE (attention), "wv.weight"),
                        HP_TEST_SHAPE (8, 16));
  hp_test_assert_shape (hp_module_get_parameter (HP_MODULE (attention), "wo.weight"),
                        HP_TEST_SHAPE (16, 16));
  hp_test_assert_shape (hp_module_get_buffer (HP_MODULE (attention), "rope.cos"),
                        HP_TEST_SHAPE (8, 2));
  g_assert_null (hp_gq_attention_config_get_wq (config));

  g_assert_true (hp_module_init_states (HP_MODULE (attention), 7, &error));
  g_assert_no_error (error);
  y = forward1 (attention, x);
  hp_test_assert_shape (y, HP_TEST_SHAPE (2, 5, 16));
  total = hp_tensor_sum_all (y, &error);
  g_assert_true (hp_tensor_backward (total, NULL, &error));
  g_assert_no_error (error);
  for (guint i = 0; expected_params[i] != NULL; i++)
    {
      HpTensor *param = hp_module_get_parameter (HP_MODULE (attention), expected_params[i]);
      HpTensor *grad = hp_tensor_get_grad (param);

      g_assert_nonnull (grad);
      hp_test_assert_shape (grad, hp_tensor_get_shape (param, NULL), 2);
    }
}

/* The forward is the composition of its pieces */
static void
test_gqa_forward_by_hand (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpGQAttentionConfig) config = gqa_config (12, 3, 1, 6, HP_DTYPE_FLOAT64);
  g_autoptr(HpGQAttention) attention = hp_gq_attention_new (config, &error);
  HpModule *module = HP_MODULE (attention);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4, 12), 5, FALSE);
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) q = NULL;
  g_autoptr(HpTensor) k = NULL;
  g_autoptr(HpTensor) v = NULL;
  g_autoptr(HpTensor) q4 = NULL;
  g_autoptr(HpTensor) k4 = NULL;
  g_autoptr(HpTensor) v4 = NULL;
  g_autoptr(HpTensor) cos4 = NULL;
  g_autoptr(HpTensor) sin4 = NULL;
  g_autoptr(HpTensor) qr = NULL;
  g_autoptr(HpTensor) kr = NULL;
  g_autoptr(HpTensor) qt = NULL;
  g_autoptr(HpTensor) kt = NULL;
  g_autoptr(HpTensor) vt = NULL;
  g_autoptr(HpTensor) attended = NULL;
  g_autoptr(HpTensor) back = NULL;
  g_autoptr(HpTensor) merged = NULL;
  g_autoptr(HpTensor) expected = NULL;

  g_assert_no_error (error);
  g_assert_true (hp_module_init_states (module, 3, &error));
  y = forward1 (attention, x);

  q = hp_tensor_linear (x, hp_module_get_parameter (module, "wq.weight"), NULL, &error);
  k = hp_tensor_linear (x, hp_module_get_parameter (module, "wk.weight"), NULL, &error);
  v = hp_tensor_linear (x, hp_module_get_parameter (module, "wv.weight"), NULL, &error);
  q4 = hp_tensor_reshape (q, (gint64[]) { 2, 4, 3, 4 }, 4, &error);
  k4 = hp_tensor_reshape (k, (gint64[]) { 2, 4, 1, 4 }, 4, &error);
  v4 = hp_tensor_reshape (v, (gint64[]) { 2, 4, 1, 4 }, 4, &error);
  cos4 = hp_tensor_narrow (hp_module_get_buffer (module, "rope.cos"), 0, 0, 4, &error);
  sin4 = hp_tensor_narrow (hp_module_get_buffer (module, "rope.sin"), 0, 0, 4, &error);
  qr = hp_tensor_apply_rotary (q4, cos4, sin4, &error);
  kr = hp_tensor_apply_rotary (k4, cos4, sin4, &error);
  qt = transposed (qr);
  kt = transposed (kr);
  vt = transposed (v4);
  attended = hp_tensor_scaled_dot_product_attention (qt, kt, vt, NULL, TRUE, 0.0, &error);
  back = transposed (attended);
  merged = hp_tensor_reshape (back, (gint64[]) { 2, 4, 12 }, 3, &error);
  expected = hp_tensor_linear (merged, hp_module_get_parameter (module, "wo.weight"), NULL, &error);
  g_assert_no_error (error);
  assert_bitwise_equal (y, expected);
}

/* An explicit head dim and biases: the shapes, and the forward as the
 * composition of its pieces with the biases added */
static void
test_gqa_head_dim_and_bias (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpGQAttentionConfig) config = gqa_config (12, 3, 1, 6, HP_DTYPE_FLOAT64);
  g_autoptr(HpGQAttention) attention = NULL;
  HpModule *module;
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4, 12), 5, FALSE);
  g_autoptr(HpStateDict) biases = hp_state_dict_new ();
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) q = NULL;
  g_autoptr(HpTensor) k = NULL;
  g_autoptr(HpTensor) v = NULL;
  g_autoptr(HpTensor) q4 = NULL;
  g_autoptr(HpTensor) k4 = NULL;
  g_autoptr(HpTensor) v4 = NULL;
  g_autoptr(HpTensor) cos4 = NULL;
  g_autoptr(HpTensor) sin4 = NULL;
  g_autoptr(HpTensor) qr = NULL;
  g_autoptr(HpTensor) kr = NULL;
  g_autoptr(HpTensor) qt = NULL;
  g_autoptr(HpTensor) kt = NULL;
  g_autoptr(HpTensor) vt = NULL;
  g_autoptr(HpTensor) attended = NULL;
  g_autoptr(HpTensor) back = NULL;
  g_autoptr(HpTensor) merged = NULL;
  g_autoptr(HpTensor) expected = NULL;
  const struct { const gchar *name; gint64 rows, cols; } params[] = {
    { "wq", 18, 12 }, { "wk", 6, 12 }, { "wv", 6, 12 }, { "wo", 12, 18 },
  };

  g_object_set (config, "head-dim", 6, "bias", TRUE, "rope-scaling", HP_ROPE_SCALING_LLAMA3,
                "rope-original-max-seq-len", 16, NULL);
  assert_json_round_trip (HP_CONFIG (config));
  g_assert_cmpint (hp_gq_attention_config_get_head_dim (config), ==, 6);
  attention = hp_gq_attention_new (config, &error);
  g_assert_no_error (error);
  module = HP_MODULE (attention);
  g_assert_true (hp_module_init_states (module, 3, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (params); i++)
    {
      g_autofree gchar *weight = g_strconcat (params[i].name, ".weight", NULL);
      g_autofree gchar *bias = g_strconcat (params[i].name, ".bias", NULL);
      g_autoptr(HpTensor) random = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (params[i].rows), 30 + i,
                                                  FALSE);

      hp_test_assert_shape (hp_module_get_parameter (module, weight),
                            HP_TEST_SHAPE (params[i].rows, params[i].cols));
      hp_test_assert_shape (hp_module_get_parameter (module, bias), HP_TEST_SHAPE (params[i].rows));
      hp_state_dict_insert (biases, bias, random);
    }
  hp_test_assert_shape (hp_module_get_buffer (module, "rope.cos"), HP_TEST_SHAPE (6, 3));
  g_assert_cmpint (hp_rotary_embedding_config_get_scaling (
                     HP_ROTARY_EMBEDDING_CONFIG (hp_configurable_get_config (
                       HP_CONFIGURABLE (hp_module_get_child (module, "rope"))))),
                   ==, HP_ROPE_SCALING_LLAMA3);
  g_assert_true (hp_module_load_state_dict (module, biases, FALSE, &error));
  g_assert_no_error (error);
  y = forward1 (attention, x);

  q = hp_tensor_linear (x, hp_module_get_parameter (module, "wq.weight"),
                        hp_module_get_parameter (module, "wq.bias"), &error);
  k = hp_tensor_linear (x, hp_module_get_parameter (module, "wk.weight"),
                        hp_module_get_parameter (module, "wk.bias"), &error);
  v = hp_tensor_linear (x, hp_module_get_parameter (module, "wv.weight"),
                        hp_module_get_parameter (module, "wv.bias"), &error);
  q4 = hp_tensor_reshape (q, (gint64[]) { 2, 4, 3, 6 }, 4, &error);
  k4 = hp_tensor_reshape (k, (gint64[]) { 2, 4, 1, 6 }, 4, &error);
  v4 = hp_tensor_reshape (v, (gint64[]) { 2, 4, 1, 6 }, 4, &error);
  cos4 = hp_tensor_narrow (hp_module_get_buffer (module, "rope.cos"), 0, 0, 4, &error);
  sin4 = hp_tensor_narrow (hp_module_get_buffer (module, "rope.sin"), 0, 0, 4, &error);
  qr = hp_tensor_apply_rotary (q4, cos4, sin4, &error);
  kr = hp_tensor_apply_rotary (k4, cos4, sin4, &error);
  qt = transposed (qr);
  kt = transposed (kr);
  vt = transposed (v4);
  attended = hp_tensor_scaled_dot_product_attention (qt, kt, vt, NULL, TRUE, 0.0, &error);
  back = transposed (attended);
  merged = hp_tensor_reshape (back, (gint64[]) { 2, 4, 18 }, 3, &error);
  expected = hp_tensor_linear (merged, hp_module_get_parameter (module, "wo.weight"),
                               hp_module_get_parameter (module, "wo.bias"), &error);
  g_assert_no_error (error);
  assert_bitwise_equal (y, expected);
}

/* The gradients of the input and of every parameter, biases included,
 * against finite differences: the inputs after x are registered as the
 * parameters of the projections */
static HpTensor *
call_attention_with (HpTensor **inputs,
                     gpointer   user_data,
                     GError   **error)
{
  HpModule *module = user_data;
  static const gchar * const children[] = { "wq", "wk", "wv", "wo" };

  for (guint i = 0; i < G_N_ELEMENTS (children); i++)
    {
      HpModule *child = hp_module_get_child (module, children[i]);

      if (!hp_module_register_parameter (child, "weight", inputs[1 + 2 * i], error) ||
          !hp_module_register_parameter (child, "bias", inputs[2 + 2 * i], error))
        return NULL;
    }
  return hp_module_call1 (module, inputs[0], error);
}

static void
test_gqa_head_dim_and_bias_gradients (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpGQAttentionConfig) config = gqa_config (8, 2, 1, 4, HP_DTYPE_FLOAT64);
  g_autoptr(HpGQAttention) attention = NULL;
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 3, 8), 8, TRUE);
  HpTensor *inputs[9] = { x };
  const gint64 rows[] = { 12, 12, 6, 6, 6, 6, 8, 8 };
  const gint64 cols[] = { 8, 0, 8, 0, 8, 0, 12, 0 };

  g_object_set (config, "head-dim", 6, "bias", TRUE, "rope-scaling", HP_ROPE_SCALING_LINEAR,
                "rope-scaling-factor", 2.0, NULL);
  attention = hp_gq_attention_new (config, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < 8; i++)
    inputs[i + 1] = cols[i] > 0 ? hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (rows[i], cols[i]),
                                                 60 + i, TRUE)
                                : hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (rows[i]), 60 + i, TRUE);
  hp_test_gradcheck ("gqa head-dim + bias", call_attention_with, attention, inputs, 9);
  for (guint i = 1; i < 9; i++)
    g_object_unref (inputs[i]);
}

/* Building @config fails with @message, and so does validating it,
 * alone and in a block (with the path of the field) */
static void
assert_build_error (HpGQAttentionConfig *config,
                    const gchar         *message)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *before = hp_config_to_json (HP_CONFIG (config), FALSE);
  g_autofree gchar *after = NULL;
  g_autofree gchar *nested = g_strconcat ("attention: ", message, NULL);
  g_autoptr(HpFeedForwardConfig) feed_forward = hp_feed_forward_config_new (16, 32);
  g_autoptr(HpRMSNormConfig) norm = hp_rms_norm_config_new (16);
  g_autoptr(HpTransformerBlockConfig) block =
    hp_transformer_block_config_new (config, feed_forward, norm, norm);

  hp_test_assert_error (hp_gq_attention_new (config, &error), &error, HP_ERROR_CONFIG, message);
  hp_test_assert_error (GINT_TO_POINTER (hp_config_validate (HP_CONFIG (config), &error)), &error,
                        HP_ERROR_CONFIG, message);
  g_assert_false (hp_config_validate (HP_CONFIG (block), &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_true (g_str_has_prefix (error->message, nested));
  g_clear_error (&error);
  /* the configuration is as it was */
  after = hp_config_to_json (HP_CONFIG (config), FALSE);
  g_assert_cmpstr (after, ==, before);
}

static void
test_gqa_config_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpGQAttentionConfig) not_divided = gqa_config (10, 4, 0, 8, HP_DTYPE_FLOAT64);
  g_autoptr(HpGQAttentionConfig) bad_groups = gqa_config (24, 4, 3, 8, HP_DTYPE_FLOAT64);
  g_autoptr(HpGQAttentionConfig) more_kv = gqa_config (24, 4, 8, 8, HP_DTYPE_FLOAT64);
  g_autoptr(HpGQAttentionConfig) odd_head = gqa_config (12, 4, 2, 8, HP_DTYPE_FLOAT64);
  g_autoptr(HpGQAttentionConfig) ints = gqa_config (16, 4, 2, 8, HP_DTYPE_INT64);
  g_autoptr(HpGQAttentionConfig) wrong_wk = gqa_config (16, 4, 2, 8, HP_DTYPE_FLOAT64);
  g_autoptr(HpGQAttentionConfig) wrong_wo = gqa_config (16, 4, 2, 8, HP_DTYPE_FLOAT64);
  g_autoptr(HpGQAttentionConfig) wrong_dtype = gqa_config (16, 4, 2, 8, HP_DTYPE_FLOAT64);
  g_autoptr(HpGQAttentionConfig) wrong_rope = gqa_config (16, 4, 2, 8, HP_DTYPE_FLOAT64);
  g_autoptr(HpGQAttentionConfig) rope_dtype = gqa_config (16, 4, 2, 8, HP_DTYPE_FLOAT64);
  g_autoptr(HpLinearConfig) wk = g_object_new (HP_TYPE_LINEAR_CONFIG, "in-features", 16,
                                               "out-features", 16, "dtype", HP_DTYPE_FLOAT64, NULL);
  g_autoptr(HpLinearConfig) wo = g_object_new (HP_TYPE_LINEAR_CONFIG, "in-features", 8,
                                               "out-features", 16, "dtype", HP_DTYPE_FLOAT64, NULL);
  g_autoptr(HpLinearConfig) wq32 = g_object_new (HP_TYPE_LINEAR_CONFIG, "in-features", 16,
                                                 "out-features", 16, NULL);
  g_autoptr(HpRotaryEmbeddingConfig) rope6 = rope_config (6, 8, 10.0, HP_DTYPE_FLOAT64);
  g_autoptr(HpRotaryEmbeddingConfig) rope32 = rope_config (4, 16, 10.0, HP_DTYPE_FLOAT32);
  g_autoptr(HpModuleConfig) plain = hp_module_config_new ();
  g_autoptr(HpGQAttention) bare = NULL;
  g_autoptr(HpGQAttention) attention = NULL;
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 5, 8), 3, FALSE);

  assert_build_error (not_divided, "HpGQAttention: dim 10 is not a multiple of n-heads 4");
  assert_build_error (bad_groups, "HpGQAttention: n-heads 4 is not a multiple of n-kv-heads 3");
  assert_build_error (more_kv, "HpGQAttention: n-heads 4 is not a multiple of n-kv-heads 8");
  assert_build_error (odd_head,
                      "HpGQAttention: head dim 3 (dim 12 / n-heads 4) must be even for the "
                      "rotary embedding");
  assert_build_error (ints, "HpGQAttentionConfig.dtype: int64 is not a floating-point type "
                      "(float32 or float64)");
  /* an explicit head dim needs no multiple, but must be even */
  {
    g_autoptr(HpGQAttentionConfig) odd = gqa_config (16, 4, 2, 8, HP_DTYPE_FLOAT64);
    g_autoptr(HpGQAttentionConfig) band = gqa_config (16, 4, 2, 8, HP_DTYPE_FLOAT64);

    g_object_set (not_divided, "head-dim", 4, NULL);
    g_assert_true (hp_config_validate (HP_CONFIG (not_divided), &error));
    g_assert_no_error (error);
    g_object_set (not_divided, "head-dim", 0, NULL);
    g_object_set (odd, "head-dim", 5, NULL);
    assert_build_error (odd, "HpGQAttention: head-dim 5 must be even for the rotary embedding");
    g_object_set (odd, "head-dim", G_MAXINT / 2 - 1, NULL);
    assert_build_error (odd, "HpGQAttention: head-dim 1073741822 with n-heads 4 gives more than");
    g_object_set (band, "rope-scaling", HP_ROPE_SCALING_LLAMA3, "rope-low-freq-factor", 4.0, NULL);
    assert_build_error (band, "HpGQAttention: rope-high-freq-factor 4 must be greater than "
                        "rope-low-freq-factor 4 for the llama3 scaling");
  }

  hp_gq_attention_config_set_wk (wrong_wk, wk);
  assert_build_error (wrong_wk,
                      "HpGQAttention: wk maps 16 to 16 features, but dim 16 with 4 heads and 2 "
                      "key/value heads of dim 4 needs 16 to 8");
  hp_gq_attention_config_set_wo (wrong_wo, wo);
  assert_build_error (wrong_wo, "HpGQAttention: wo maps 8 to 16 features");
  hp_gq_attention_config_set_wq (wrong_dtype, wq32);
  assert_build_error (wrong_dtype, "HpGQAttention: wq has dtype float32, but dtype is float64");
  hp_gq_attention_config_set_rope (wrong_rope, rope6);
  assert_build_error (wrong_rope, "HpGQAttention: rope has head-dim 6, but the head dim is 4");
  hp_gq_attention_config_set_rope (rope_dtype, rope32);
  assert_build_error (rope_dtype, "HpGQAttention: rope has dtype float32, but dtype is float64");

  /* filling children checks the same and changes nothing on error */
  hp_test_assert_error (GINT_TO_POINTER (hp_gq_attention_config_fill_children (odd_head, &error)), &error,
                        HP_ERROR_CONFIG,
                        "HpGQAttention: head dim 3 (dim 12 / n-heads 4) must be even for the rotary embedding");
  g_assert_null (hp_gq_attention_config_get_wq (odd_head));
  g_assert_null (hp_gq_attention_config_get_rope (odd_head));

  bare = g_object_new (HP_TYPE_GQ_ATTENTION, "config", plain, NULL);
  g_assert_false (g_initable_init (G_INITABLE (bare), NULL, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==,
                   "HpGQAttention needs a HpGQAttentionConfig, not HpModuleConfig");
  g_clear_error (&error);
  hp_test_assert_error (hp_module_call1 (HP_MODULE (bare), x, &error), &error,
                        HP_ERROR_STATE, "HpGQAttention is not initialized");

  attention = hp_gq_attention_new (rope_dtype, &error);
  g_assert_null (attention);
  g_clear_error (&error);
  hp_gq_attention_config_set_rope (rope_dtype, NULL);
  attention = hp_gq_attention_new (rope_dtype, &error);
  g_assert_no_error (error);
  hp_test_assert_error (hp_module_call1 (HP_MODULE (attention), x, &error), &error,
                        HP_ERROR_SHAPE,
                        "HpGQAttention: x has shape [2, 5, 8], but needs [batch, seq, 16] (dim 16)");
}

/* Children given explicitly are built as given */
static void
test_gqa_given_children (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpGQAttentionConfig) config = gqa_config (8, 2, 0, 4, HP_DTYPE_FLOAT64);
  g_autoptr(HpLinearConfig) wq = g_object_new (HP_TYPE_LINEAR_CONFIG, "in-features", 8,
                                               "out-features", 8, "bias", TRUE,
                                               "dtype", HP_DTYPE_FLOAT64, NULL);
  g_autoptr(HpSDPAConfig) inner = sdpa_config (FALSE, TRUE, 0.5);
  g_autoptr(HpRotaryEmbeddingConfig) rope = rope_config (4, 32, 10.0, HP_DTYPE_FLOAT64);
  g_autoptr(HpGQAttention) attention = NULL;
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 6, 8), 3, FALSE);
  g_autoptr(HpTensor) y = NULL;
  HpModule *inner_module;

  hp_gq_attention_config_set_wq (config, wq);
  hp_gq_attention_config_set_inner_attention (config, inner);
  hp_gq_attention_config_set_rope (config, rope);
  attention = hp_gq_attention_new (config, &error);
  g_assert_no_error (error);
  g_assert_nonnull (hp_module_get_parameter (HP_MODULE (attention), "wq.bias"));
  g_assert_null (hp_module_get_parameter (HP_MODULE (attention), "wk.bias"));
  hp_test_assert_shape (hp_module_get_buffer (HP_MODULE (attention), "rope.sin"),
                        HP_TEST_SHAPE (32, 2));
  inner_module = hp_module_get_child (HP_MODULE (attention), "inner_attention");
  g_assert_true (hp_configurable_get_config (HP_CONFIGURABLE (inner_module)) != HP_CONFIG (inner));
  g_assert_true (hp_config_equal (hp_configurable_get_config (HP_CONFIGURABLE (inner_module)),
                                  HP_CONFIG (inner)));
  g_assert_true (hp_module_init_states (HP_MODULE (attention), 1, &error));
  /* a sequence longer than max-seq-len fits the longer tables; the
   * log-sum-exp of the inner attention is dropped */
  y = forward1 (attention, x);
  hp_test_assert_shape (y, HP_TEST_SHAPE (1, 6, 8));
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;

  hp_test_init (&argc, &argv);
  g_assert_true (hp_init (&error));
  g_assert_no_error (error);

  g_test_add_func ("/rotary/config", test_rotary_config);
  g_test_add_func ("/rotary/tables", test_rotary_tables);
  g_test_add_func ("/rotary/tables-float32", test_rotary_tables_float32);
  g_test_add_func ("/rotary/scaled-tables", test_rotary_scaled_tables);
  g_test_add_func ("/rotary/forward", test_rotary_forward);
  g_test_add_func ("/rotary/gradient", test_rotary_gradient);
  g_test_add_func ("/rotary/init-states", test_rotary_init_states);
  g_test_add_func ("/rotary/dtensor", test_rotary_dtensor);
  g_test_add_func ("/rotary/errors", test_rotary_errors);
  g_test_add_func ("/sdpa/config", test_sdpa_config);
  g_test_add_func ("/sdpa/matches-op", test_sdpa_matches_op);
  g_test_add_func ("/sdpa/callable", test_sdpa_callable);
  g_test_add_func ("/sdpa/lse", test_sdpa_lse);
  g_test_add_func ("/sdpa/gradients", test_sdpa_gradients);
  g_test_add_func ("/sdpa/no-keys", test_sdpa_no_keys);
  g_test_add_func ("/sdpa/errors", test_sdpa_errors);
  g_test_add_func ("/sdpa/new/any-config", test_sdpa_new_any_config);
  g_test_add_func ("/gqa/config", test_gqa_config);
  g_test_add_func ("/gqa/fill-children", test_gqa_fill_children);
  g_test_add_func ("/gqa/shapes", test_gqa_shapes);
  g_test_add_func ("/gqa/forward-by-hand", test_gqa_forward_by_hand);
  g_test_add_func ("/gqa/head-dim-and-bias", test_gqa_head_dim_and_bias);
  g_test_add_func ("/gqa/head-dim-and-bias-gradients", test_gqa_head_dim_and_bias_gradients);
  g_test_add_func ("/gqa/config-errors", test_gqa_config_errors);
  g_test_add_func ("/gqa/given-children", test_gqa_given_children);

  return g_test_run ();
}
