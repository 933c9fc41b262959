/* test-gqa-tp.c: grouped-query attention under tensor parallelism
 * (hp_set_gqa_attention_sharding, with and without sequence
 * parallelism and the inner local map, and with the attention variants:
 * an explicit head dim, biases, RoPE scaling), against one rank
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi, 1, 2, 3, 4 and 8 ranks);
 * every rank runs every assertion. The tp mesh is the whole world; the
 * head counts are picked so that they split over it (8 query and 4
 * key/value heads on 1, 2 and 4 ranks, 6 and 3 on 3 ranks, 8 and 8 on
 * 8 ranks), and a configuration that cannot split is checked to fail
 * clearly with the local map and to work through the ops' sharding
 * rules without it. Everything is float64: forward and backward match
 * one rank to 1e-10, and on one rank bit for bit.
 */

#include <string.h>

#include "hp-test-utils.h"

#define SEQ_LEN 5

typedef struct
{
  gint dim;
  gint heads;
  gint kv_heads;
  /* the variants: 0 for dim / heads, biases, RoPE scaling */
  gint head_dim;
  gboolean bias;
  HpRopeScaling scaling;
} Sizes;

static Sizes
sizes_for_world (void)
{
  switch (hp_get_world_size ())
    {
    case 3:
      return (Sizes) { 24, 6, 3 };
    case 8:
      return (Sizes) { 32, 8, 8 };
    default:
      return (Sizes) { 32, 8, 4 };
    }
}

static HpDeviceMesh *
tp_mesh (void)
{
  g_autoptr(GError) error = NULL;
  gint shape[] = { hp_get_world_size () };
  HpDeviceMesh *mesh = hp_device_mesh_new (shape, 1, (const gchar *[]) { "tp", NULL }, &error);

  g_assert_no_error (error);
  return mesh;
}

static HpGQAttentionConfig *
new_config (Sizes sizes)
{
  return g_object_new (HP_TYPE_GQ_ATTENTION_CONFIG,
                       "dim", sizes.dim,
                       "n-heads", sizes.heads,
                       "n-kv-heads", sizes.kv_heads,
                       "head-dim", sizes.head_dim,
                       "bias", sizes.bias,
                       "rope-scaling", sizes.scaling,
                       "rope-scaling-factor", 4.0,
                       "rope-original-max-seq-len", 8,
                       "max-seq-len", 8,
                       "dtype", HP_DTYPE_FLOAT64,
                       NULL);
}

/* A module of @sizes, initialised with one seed; laid out with
 * hp_set_gqa_attention_sharding() when @sharded, its inner attention
 * local-mapped when @local_map, and parallelized over @mesh when
 * given */
static HpGQAttention *
new_attention (Sizes         sizes,
               gboolean      sharded,
               gboolean      sp,
               gboolean      local_map,
               HpDeviceMesh *mesh)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpGQAttentionConfig) config = new_config (sizes);
  HpGQAttention *attention;

  if (sharded)
    {
      g_assert_true (hp_set_gqa_attention_sharding (config, sp, &error));
      g_assert_no_error (error);
    }
  if (local_map)
    {
      g_assert_true (hp_gq_attention_config_fill_children (config, &error));
      hp_set_gqa_inner_attention_local_map (hp_gq_attention_config_get_inner_attention (config),
                                            FALSE);
    }
  attention = hp_gq_attention_new (config, &error);
  g_assert_no_error (error);
  if (mesh != NULL)
    {
      g_assert_true (hp_module_parallelize (HP_MODULE (attention), mesh, &error));
      g_assert_no_error (error);
    }
  g_assert_true (hp_module_init_states (HP_MODULE (attention), 42, &error));
  g_assert_no_error (error);
  /* the biases start as zeros: the same random ones everywhere */
  if (sizes.bias)
    {
      g_autoptr(HpStateDict) states = hp_module_state_dict (HP_MODULE (attention));
      g_autoptr(HpStateDict) biases = hp_state_dict_new ();

      for (guint i = 0; i < hp_state_dict_get_size (states); i++)
        if (g_str_has_suffix (hp_state_dict_get_name (states, i), ".bias"))
          {
            g_autoptr(HpTensor) random =
              hp_test_randn (HP_DTYPE_FLOAT64,
                             hp_tensor_get_shape (hp_state_dict_get_tensor (states, i), NULL), 1,
                             50 + i, FALSE);

            hp_state_dict_insert (biases, hp_state_dict_get_name (states, i), random);
          }
      g_assert_cmpuint (hp_state_dict_get_size (biases), ==, 4);
      g_assert_true (hp_module_load_state_dict (HP_MODULE (attention), biases, FALSE, &error));
      g_assert_no_error (error);
    }
  return attention;
}

static HpTensor *
full (HpTensor *tensor)
{
  g_autoptr(GError) error = NULL;
  HpTensor *out;

  g_assert_nonnull (tensor);
  if (!HP_IS_DTENSOR (tensor))
    return g_object_ref (tensor);
  out = hp_dtensor_full_tensor (HP_DTENSOR (tensor), &error);
  g_assert_no_error (error);
  return out;
}

static void
assert_bitwise_equal (HpTensor *a,
                      HpTensor *b)
{
  gsize na, nb;
  g_autofree gdouble *va = hp_tensor_to_float64_array (a, &na);
  g_autofree gdouble *vb = hp_tensor_to_float64_array (b, &nb);

  g_assert_cmpuint (na, ==, nb);
  g_assert_true (memcmp (va, vb, na * sizeof (gdouble)) == 0);
}

/* @tensor, gathered, against @expected: to 1e-10, or bit for bit */
static void
assert_matches (HpTensor *tensor,
                HpTensor *expected,
                gboolean  bitwise)
{
  g_autoptr(HpTensor) whole = full (tensor);

  if (bitwise)
    assert_bitwise_equal (whole, expected);
  else
    hp_test_assert_close (whole, expected, 0.0, 1e-10);
}

/* sum (y * w) with fixed weights w laid out like @y */
static HpTensor *
weighted_loss (HpTensor     *y,
               HpDeviceMesh *mesh)
{
  g_autoptr(GError) error = NULL;
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (y, &ndim);
  g_autoptr(HpTensor) w = hp_test_randn (HP_DTYPE_FLOAT64, shape, ndim, 77, FALSE);
  g_autoptr(HpTensor) w_laid = NULL;
  g_autoptr(HpTensor) product = NULL;
  HpTensor *loss;

  if (HP_IS_DTENSOR (y))
    w_laid = HP_TENSOR (hp_dtensor_distribute (w, mesh, hp_dtensor_get_placements (HP_DTENSOR (y)),
                                               -1, &error));
  else
    w_laid = g_object_ref (w);
  g_assert_no_error (error);
  product = hp_tensor_mul (y, w_laid, &error);
  g_assert_no_error (error);
  loss = hp_tensor_sum_all (product, &error);
  g_assert_no_error (error);
  return loss;
}

static void
backward (HpTensor *loss)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);
}

/* The input x [2, SEQ_LEN, dim]: a plain tensor, or with @sp a leaf
 * DTensor sharded on the sequence as a sequence-parallel norm leaves
 * it */
static HpTensor *
new_input (Sizes         sizes,
           gboolean      sp,
           HpDeviceMesh *mesh)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, SEQ_LEN, sizes.dim), 9,
                                         !sp);
  g_autoptr(GPtrArray) seq = NULL;
  HpDTensor *x_dt;

  if (!sp)
    return g_steal_pointer (&x);
  seq = hp_placements_new_from_string ("S(1)", &error);
  x_dt = hp_dtensor_distribute (x, mesh, seq, -1, &error);
  g_assert_no_error (error);
  hp_tensor_set_requires_grad (HP_TENSOR (x_dt), TRUE);
  return HP_TENSOR (x_dt);
}

typedef struct
{
  gboolean sp;
  gboolean local_map;
  gint head_dim;
  gboolean bias;
  HpRopeScaling scaling;
} Variant;

/* The sizes of the world with the attention variant of @variant */
static Sizes
variant_sizes (const Variant *variant)
{
  Sizes sizes = sizes_for_world ();

  sizes.head_dim = variant->head_dim;
  sizes.bias = variant->bias;
  sizes.scaling = variant->scaling;
  return sizes;
}

/* forward-pre of the inner attention: q, k and v arrive sharded on the
 * heads, straight from the column-wise projections */
static void
inner_forward_pre (HpModule  *inner,
                   GPtrArray *args,
                   gpointer   user_data)
{
  guint *calls = user_data;

  g_assert_cmpuint (args->len, ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      HpTensor *arg = g_ptr_array_index (args, i);
      g_autofree gchar *text = NULL;

      g_assert_true (HP_IS_DTENSOR (arg));
      text = hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (arg)));
      g_assert_cmpstr (text, ==, "(S(2))");
    }
  (*calls)++;
}

/* Forward and backward of the sharded module equal those of the
 * module on one rank */
static void
test_matches_one_rank (gconstpointer data)
{
  const Variant *variant = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = tp_mesh ();
  Sizes sizes = variant_sizes (variant);
  gboolean bitwise = hp_get_world_size () == 1;
  g_autoptr(HpGQAttention) reference = new_attention (sizes, FALSE, FALSE, FALSE, NULL);
  g_autoptr(HpGQAttention) sharded = new_attention (sizes, TRUE, variant->sp, variant->local_map,
                                                    mesh);
  g_autoptr(HpTensor) x_ref = new_input (sizes, FALSE, mesh);
  g_autoptr(HpTensor) x = new_input (sizes, variant->sp, mesh);
  g_autoptr(HpTensor) y_ref = NULL;
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) loss_ref = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpStateDict) params_ref = hp_module_named_parameters (HP_MODULE (reference));
  g_autoptr(HpStateDict) params = hp_module_named_parameters (HP_MODULE (sharded));
  g_autofree gchar *placements = NULL;
  guint inner_calls = 0;

  g_signal_connect (hp_module_get_child (HP_MODULE (sharded), "inner_attention"), "forward-pre",
                    G_CALLBACK (inner_forward_pre), &inner_calls);
  g_assert_cmpint (hp_module_callable_is_local_mapped (HP_MODULE (sharded),
                                                       "inner_attention.inner_sdpa"),
                   ==, variant->local_map);
  g_assert_true (HP_IS_DTENSOR (hp_module_get_buffer (HP_MODULE (sharded), "rope.cos")));

  /* the sharded parameters are slices of the same values */
  g_assert_cmpuint (hp_state_dict_get_size (params), ==, sizes.bias ? 8 : 4);
  for (guint i = 0; i < hp_state_dict_get_size (params); i++)
    {
      const gchar *name = hp_state_dict_get_name (params, i);

      g_assert_true (HP_IS_DTENSOR (hp_state_dict_lookup (params, name)));
      assert_matches (hp_state_dict_lookup (params, name), hp_state_dict_lookup (params_ref, name),
                      TRUE);
    }

  y_ref = hp_module_call1 (HP_MODULE (reference), x_ref, &error);
  g_assert_no_error (error);
  y = hp_module_call1 (HP_MODULE (sharded), x, &error);
  g_assert_no_error (error);
  g_assert_true (HP_IS_DTENSOR (y));
  placements = hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (y)));
  g_assert_cmpstr (placements, ==, variant->sp ? "(S(1))" : "(R)");
  g_assert_cmpuint (inner_calls, ==, 1);
  hp_test_assert_shape (y, HP_TEST_SHAPE (2, SEQ_LEN, sizes.dim));
  assert_matches (y, y_ref, bitwise);

  loss_ref = weighted_loss (y_ref, mesh);
  loss = weighted_loss (y, mesh);
  backward (loss_ref);
  backward (loss);
  for (guint i = 0; i < hp_state_dict_get_size (params); i++)
    {
      const gchar *name = hp_state_dict_get_name (params, i);
      HpTensor *param = hp_state_dict_lookup (params, name);
      HpTensor *grad = hp_tensor_get_grad (param);
      HpTensor *grad_ref = hp_tensor_get_grad (hp_state_dict_lookup (params_ref, name));
      g_autofree gchar *have = NULL;
      g_autofree gchar *want = NULL;

      g_assert_true (HP_IS_DTENSOR (grad));
      have = hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (grad)));
      want = hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (param)));
      g_assert_cmpstr (have, ==, want);
      assert_matches (grad, grad_ref, bitwise);
    }
  assert_matches (hp_tensor_get_grad (x), hp_tensor_get_grad (x_ref), bitwise);
}

/* Heads that do not split over the ranks: a clear error with the
 * local map, the ops' sharding rules (through Replicate) without it */
static void
test_uneven_heads (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = tp_mesh ();
  gint n = hp_get_world_size ();
  Sizes sizes = { 32, 8, 4 };
  g_autoptr(HpGQAttention) reference = new_attention (sizes, FALSE, FALSE, FALSE, NULL);
  g_autoptr(HpGQAttention) mapped = new_attention (sizes, TRUE, FALSE, TRUE, mesh);
  g_autoptr(HpGQAttention) unmapped = new_attention (sizes, TRUE, FALSE, FALSE, mesh);
  g_autoptr(HpTensor) x = new_input (sizes, FALSE, mesh);
  g_autoptr(HpTensor) y_ref = hp_module_call1 (HP_MODULE (reference), x, &error);
  g_autoptr(HpTensor) y_mapped = NULL;
  g_autoptr(HpTensor) y_unmapped = NULL;

  g_assert_no_error (error);
  y_mapped = hp_module_call1 (HP_MODULE (mapped), x, &error);
  if (8 % n == 0 && 4 % n == 0)
    {
      g_assert_no_error (error);
      assert_matches (y_mapped, y_ref, n == 1);
    }
  else
    {
      g_autofree gchar *message =
        g_strdup_printf ("HpSDPA: 8 query heads and 4 key/value heads cannot be split over the "
                         "%d ranks of mesh dim 'tp' (the local_map of 'inner_sdpa' needs whole "
                         "head groups on each rank: both counts must be multiples of %d)", n, n);

      g_assert_null (y_mapped);
      g_assert_error (error, HP_ERROR, HP_ERROR_PLACEMENT);
      g_assert_cmpstr (error->message, ==, message);
      g_clear_error (&error);
    }
  y_unmapped = hp_module_call1 (HP_MODULE (unmapped), x, &error);
  g_assert_no_error (error);
  assert_matches (y_unmapped, y_ref, n == 1);
}

/* Without any sharding configuration, parallelizing changes nothing:
 * the numbers are those of the module never parallelized, bit for bit */
static void
test_unsharded_is_unchanged (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = tp_mesh ();
  Sizes sizes = sizes_for_world ();
  g_autoptr(HpGQAttention) reference = new_attention (sizes, FALSE, FALSE, FALSE, NULL);
  g_autoptr(HpGQAttention) parallelized = new_attention (sizes, FALSE, FALSE, FALSE, mesh);
  g_autoptr(HpTensor) x_ref = new_input (sizes, FALSE, mesh);
  g_autoptr(HpTensor) x = new_input (sizes, FALSE, mesh);
  g_autoptr(HpTensor) y_ref = hp_module_call1 (HP_MODULE (reference), x_ref, &error);
  g_autoptr(HpTensor) y = hp_module_call1 (HP_MODULE (parallelized), x, &error);
  g_autoptr(HpTensor) loss_ref = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpStateDict) params_ref = hp_module_named_parameters (HP_MODULE (reference));
  g_autoptr(HpStateDict) params = hp_module_named_parameters (HP_MODULE (parallelized));

  g_assert_no_error (error);
  g_assert_true (hp_module_get_mesh (HP_MODULE (parallelized)) == mesh);
  g_assert_false (hp_module_callable_is_local_mapped (HP_MODULE (parallelized),
                                                      "inner_attention.inner_sdpa"));
  g_assert_false (HP_IS_DTENSOR (y));
  assert_bitwise_equal (y, y_ref);

  loss_ref = weighted_loss (y_ref, mesh);
  loss = weighted_loss (y, mesh);
  backward (loss_ref);
  backward (loss);
  for (guint i = 0; i < hp_state_dict_get_size (params); i++)
    {
      const gchar *name = hp_state_dict_get_name (params, i);

      g_assert_false (HP_IS_DTENSOR (hp_state_dict_lookup (params, name)));
      assert_bitwise_equal (hp_tensor_get_grad (hp_state_dict_lookup (params, name)),
                            hp_tensor_get_grad (hp_state_dict_lookup (params_ref, name)));
    }
  assert_bitwise_equal (hp_tensor_get_grad (x), hp_tensor_get_grad (x_ref));
}

/* The sharding configuration of the configuration @config */
static HpShardingConfig *
sharding_of (gpointer config)
{
  return hp_module_config_get_sharding_config (HP_MODULE_CONFIG (config));
}

/* The layouts the helpers write */
static void
test_sharding_configs (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpGQAttentionConfig) config = new_config ((Sizes) { 16, 4, 2 });
  g_autoptr(HpGQAttentionConfig) odd = new_config ((Sizes) { 12, 4, 2 });
  g_autoptr(HpLinearConfig) wq = g_object_new (HP_TYPE_LINEAR_CONFIG, "in-features", 16,
                                               "out-features", 16, "bias", TRUE,
                                               "dtype", HP_DTYPE_FLOAT64, NULL);
  g_autoptr(HpShardingConfig) colwise = hp_sharding_colwise ();
  g_autoptr(HpShardingConfig) colwise_bias = hp_sharding_colwise_with_bias ();
  g_autoptr(HpShardingConfig) rowwise_sp = hp_sharding_rowwise (TRUE);
  HpShardingConfig *own;
  HpShardingConfig *rope;
  HpSDPAConfig *inner;
  g_autofree gchar *in_src = NULL;
  g_autofree gchar *in_dst = NULL;
  g_autofree gchar *cos = NULL;
  g_auto(GStrv) states = NULL;

  hp_gq_attention_config_set_wq (config, wq);
  g_assert_true (hp_set_gqa_attention_sharding (config, TRUE, &error));
  g_assert_no_error (error);
  g_assert_true (hp_sharding_config_equal (sharding_of (wq), colwise_bias));
  g_assert_true (hp_sharding_config_equal (sharding_of (hp_gq_attention_config_get_wk (config)),
                                           colwise));
  g_assert_true (hp_sharding_config_equal (sharding_of (hp_gq_attention_config_get_wv (config)),
                                           colwise));
  g_assert_true (hp_sharding_config_equal (sharding_of (hp_gq_attention_config_get_wo (config)),
                                           rowwise_sp));
  own = sharding_of (config);
  in_src = hp_named_placement_to_string (hp_sharding_config_get_in_src_sharding (own, "x"));
  in_dst = hp_named_placement_to_string (hp_sharding_config_get_in_dst_sharding (own, "x"));
  g_assert_cmpstr (in_src, ==, "tp:S(1)");
  g_assert_cmpstr (in_dst, ==, "tp:R");
  rope = sharding_of (hp_gq_attention_config_get_rope (config));
  states = hp_sharding_config_list_state_shardings (rope);
  g_assert_cmpuint (g_strv_length (states), ==, 2);
  cos = hp_named_placement_to_string (hp_sharding_config_get_state_sharding (rope, "cos"));
  g_assert_cmpstr (cos, ==, "tp:R");
  inner = hp_gq_attention_config_get_inner_attention (config);
  g_assert_null (sharding_of (inner));

  /* without sequence parallelism the input is replicated */
  g_assert_true (hp_set_gqa_attention_sharding (config, FALSE, &error));
  g_clear_pointer (&in_src, g_free);
  own = sharding_of (config);
  in_src = hp_named_placement_to_string (hp_sharding_config_get_in_src_sharding (own, "x"));
  g_assert_cmpstr (in_src, ==, "tp:R");

  /* the inner local map of seed Part 9 §3.3 */
  for (guint lse = 0; lse < 2; lse++)
    {
      HpLocalMapConfig *local_map;
      GPtrArray *in, *out;

      hp_set_gqa_inner_attention_local_map (inner, lse);
      local_map = hp_sharding_config_get_local_map (sharding_of (inner));
      g_assert_cmpstr (hp_local_map_config_get_callable_path (local_map), ==, "inner_sdpa");
      in = hp_local_map_config_get_in_placements (local_map);
      out = hp_local_map_config_get_out_placements (local_map);
      g_assert_cmpuint (in->len, ==, 3);
      g_assert_cmpuint (out->len, ==, lse ? 2 : 1);
      g_assert_null (hp_local_map_config_get_in_grad_placements (local_map));
      for (guint i = 0; i < in->len + out->len; i++)
        {
          HpNamedPlacement *named = i < in->len ? g_ptr_array_index (in, i)
                                                : g_ptr_array_index (out, i - in->len);
          g_autofree gchar *text = hp_named_placement_to_string (named);

          g_assert_cmpstr (text, ==, "tp:S(2)");
        }
      g_assert_false (hp_sdpa_config_get_return_lse (inner));
    }

  /* the configuration round-trips through JSON with every layout */
  {
    g_autofree gchar *json = hp_config_to_json (HP_CONFIG (config), TRUE);
    g_autoptr(HpConfig) back = hp_config_new_from_json (HP_TYPE_GQ_ATTENTION_CONFIG, json, &error);

    g_assert_no_error (error);
    g_assert_true (hp_config_equal (back, HP_CONFIG (config)));
  }

  {
    g_autofree gchar *before = hp_config_to_json (HP_CONFIG (odd), FALSE);
    g_autofree gchar *after = NULL;

    hp_test_assert_error (GINT_TO_POINTER (hp_set_gqa_attention_sharding (odd, TRUE, &error)), &error,
                          HP_ERROR_CONFIG,
                          "HpGQAttention: head dim 3 (dim 12 / n-heads 4) must be even for the rotary embedding");
    g_assert_null (sharding_of (odd));
    g_assert_null (hp_gq_attention_config_get_wq (odd));
    after = hp_config_to_json (HP_CONFIG (odd), FALSE);
    g_assert_cmpstr (after, ==, before);
  }
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  static const Variant variants[] = {
    { FALSE, FALSE },
    { FALSE, TRUE },
    { TRUE, FALSE },
    { TRUE, TRUE },
    { FALSE, TRUE, 6, FALSE, HP_ROPE_SCALING_NONE },
    { FALSE, TRUE, 0, TRUE, HP_ROPE_SCALING_NONE },
    { TRUE, TRUE, 0, TRUE, HP_ROPE_SCALING_NONE },
    { FALSE, FALSE, 0, TRUE, HP_ROPE_SCALING_NONE },
    { FALSE, TRUE, 0, FALSE, HP_ROPE_SCALING_LLAMA3 },
    { TRUE, TRUE, 10, TRUE, HP_ROPE_SCALING_LINEAR },
  };
  static const gchar *names[] = {
    "/gqa-tp/matches-one-rank/plain",
    "/gqa-tp/matches-one-rank/local-map",
    "/gqa-tp/matches-one-rank/sp",
    "/gqa-tp/matches-one-rank/sp-local-map",
    "/gqa-tp/matches-one-rank/head-dim",
    "/gqa-tp/matches-one-rank/bias",
    "/gqa-tp/matches-one-rank/sp-bias",
    "/gqa-tp/matches-one-rank/plain-bias",
    "/gqa-tp/matches-one-rank/llama3",
    "/gqa-tp/matches-one-rank/sp-head-dim-bias-linear",
  };

  hp_test_init (&argc, &argv);
  g_assert_true (hp_init (&error));
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (variants); i++)
    g_test_add_data_func (names[i], &variants[i], test_matches_one_rank);
  g_test_add_func ("/gqa-tp/uneven-heads", test_uneven_heads);
  g_test_add_func ("/gqa-tp/unsharded-is-unchanged", test_unsharded_is_unchanged);
  g_test_add_func ("/gqa-tp/sharding-configs", test_sharding_configs);

  return g_test_run ();
}
