/* test-decoder.c: the whole decoder, forward and backward, on meshes of
 * the world size against the same model on one rank
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi). Every rank builds the
 * reference model too and computes it unsharded, so the comparison
 * needs no communication of its own. float64 throughout.
 */

#include <math.h>
#include <string.h>

#include "hp-test-utils.h"

static gint world_size;

typedef struct
{
  gboolean loss_parallel;
  gboolean sequence_parallel;
  gboolean local_map;
  gboolean tied;
  /* the attention variants */
  gint head_dim;
  gboolean attention_bias;
  HpRopeScaling rope_scaling;
} Variant;

/* A small float64 decoder whose heads split over @tp ranks */
static HpDecoderConfig *
decoder_config (gint     tp,
                gboolean loss_parallel,
                gboolean sequence_parallel)
{
  return g_object_new (HP_TYPE_DECODER_CONFIG,
                       "dim", 8 * tp,
                       "n-layers", 2,
                       "n-heads", 2 * tp,
                       "n-kv-heads", tp,
                       "vocab-size", 11,
                       "ffn-hidden", 12,
                       "max-seq-len", 16,
                       "dtype", HP_DTYPE_FLOAT64,
                       "loss-parallel", loss_parallel,
                       "sequence-parallel", sequence_parallel,
                       NULL);
}

/* The decoder of @variant; llama3 with an original length that puts
 * the head's frequencies on both sides of its band */
static HpDecoderConfig *
variant_config (gint           tp,
                const Variant *variant)
{
  HpDecoderConfig *config = decoder_config (tp, variant->loss_parallel, variant->sequence_parallel);

  g_object_set (config, "tie-word-embeddings", variant->tied,
                "head-dim", variant->head_dim, "attention-bias", variant->attention_bias,
                "rope-scaling", variant->rope_scaling, "rope-scaling-factor", 3.0,
                "rope-original-max-seq-len", 8, NULL);
  return config;
}

/* Gives the biases of @reference and @model the same random values
 * (they start as zeros) */
static void
randomize_biases (HpModule *reference,
                  HpModule *model)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpStateDict) states = hp_module_state_dict (reference);
  g_autoptr(HpStateDict) biases = hp_state_dict_new ();

  for (guint i = 0; i < hp_state_dict_get_size (states); i++)
    if (g_str_has_suffix (hp_state_dict_get_name (states, i), ".bias"))
      {
        guint ndim;
        const gint64 *shape = hp_tensor_get_shape (hp_state_dict_get_tensor (states, i), &ndim);
        g_autoptr(HpTensor) random = hp_test_randn (HP_DTYPE_FLOAT64, shape, ndim, 100 + i, FALSE);

        hp_state_dict_insert (biases, hp_state_dict_get_name (states, i), random);
      }
  g_assert_true (hp_module_load_state_dict (reference, biases, FALSE, &error));
  g_assert_true (hp_module_load_state_dict (model, biases, FALSE, &error));
  g_assert_no_error (error);
}

static HpModule *
build (HpDecoderConfig *config,
       HpParallelDims  *dims)
{
  g_autoptr(GError) error = NULL;
  GObject *model;

  g_assert_true (hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config),
                                                          HP_CONFIG (dims), &error));
  g_assert_no_error (error);
  model = hp_config_build (HP_CONFIG (config), &error);
  g_assert_no_error (error);
  return HP_MODULE (model);
}

static HpParallelDims *
dims_for (gint dp,
          gint tp)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParallelDims) dims = hp_parallel_dims_new ();
  HpParallelDims *resolved;

  g_object_set (dims, "dp-replicate", dp, "dp-shard", 1, "tp", tp, NULL);
  resolved = hp_parallel_dims_resolve (dims, dp * tp, &error);
  g_assert_no_error (error);
  return resolved;
}

static HpTensor *
whole (HpTensor *tensor)
{
  g_autoptr(GError) error = NULL;
  HpTensor *full;

  if (!HP_IS_DTENSOR (tensor))
    return g_object_ref (tensor);
  full = hp_dtensor_full_tensor (HP_DTENSOR (tensor), &error);
  g_assert_no_error (error);
  return full;
}

/* Forward, loss and backward of @model on rows [first, first + rows) */
static HpTensor *
run (HpModule     *model,
     HpDeviceMesh *tp_mesh,
     gint          first,
     gint          rows,
     HpTensor    **logits_out)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ids = NULL;
  g_autoptr(HpTensor) targets = NULL;
  g_autoptr(HpTensor) logits = NULL;
  HpTensor *loss;

  hp_test_token_batch (0, first, rows, &ids, &targets);
  if (tp_mesh != NULL)
    {
      HpTensor *local = targets;

      targets = HP_TENSOR (hp_test_local_dtensor (local, tp_mesh, "R"));
      g_object_unref (local);
    }
  logits = hp_module_call1 (model, ids, &error);
  g_assert_no_error (error);
  loss = hp_tensor_cross_entropy (logits, targets, -100, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);
  *logits_out = g_steal_pointer (&logits);
  return loss;
}

static void
assert_grads_equal (HpModule *model,
                    HpModule *reference)
{
  g_autoptr(HpStateDict) params = hp_module_named_parameters (model);
  g_autoptr(HpStateDict) expected = hp_module_named_parameters (reference);

  g_assert_cmpuint (hp_state_dict_get_size (params), ==, hp_state_dict_get_size (expected));
  for (guint i = 0; i < hp_state_dict_get_size (params); i++)
    {
      g_autoptr(HpTensor) grad = NULL;
      HpTensor *expected_grad = hp_tensor_get_grad (hp_state_dict_get_tensor (expected, i));

      g_assert_cmpstr (hp_state_dict_get_name (params, i), ==, hp_state_dict_get_name (expected, i));
      g_assert_nonnull (hp_tensor_get_grad (hp_state_dict_get_tensor (params, i)));
      grad = whole (hp_tensor_get_grad (hp_state_dict_get_tensor (params, i)));
      if (g_test_verbose ())
        g_test_message ("%s", hp_state_dict_get_name (params, i));
      hp_test_assert_close (grad, expected_grad, 1e-9, 1e-11);
    }
}

static void
remove_local_maps (HpModule *model)
{
  HpModuleList *layers = HP_MODULE_LIST (hp_module_get_child (model, "layers"));

  for (guint i = 0; i < hp_module_list_get_length (layers); i++)
    {
      HpModule *inner = hp_module_get_child (hp_module_list_get (layers, i),
                                             "attention.inner_attention");

      hp_module_set_sharding_config (inner, NULL);
    }
}

/* tp = world size on a 1-D mesh */
static void
test_tensor_parallel (gconstpointer data)
{
  const Variant *variant = data;
  g_autoptr(GError) error = NULL;
  gint tp = world_size;
  g_autoptr(HpParallelDims) one = dims_for (1, 1);
  g_autoptr(HpParallelDims) dims = dims_for (1, tp);
  g_autoptr(HpDecoderConfig) reference_config = variant_config (tp, variant);
  g_autoptr(HpDecoderConfig) config = variant_config (tp, variant);
  g_autoptr(HpModule) reference = build (reference_config, one);
  g_autoptr(HpModule) model = NULL;
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpTensor) reference_loss = NULL;
  g_autoptr(HpTensor) logits = NULL;
  g_autoptr(HpTensor) reference_logits = NULL;
  g_autoptr(HpTensor) full_loss = NULL;
  g_autoptr(HpTensor) full_logits = NULL;
  gint shape[] = { tp };

  /* also on one rank, where update_from_config leaves the layout alone */
  g_assert_true (hp_set_decoder_sharding_config (config, variant->loss_parallel,
                                                 variant->sequence_parallel, &error));
  g_assert_no_error (error);
  model = build (config, dims);

  mesh = hp_device_mesh_new (shape, 1, (const gchar *[]) { "tp", NULL }, &error);
  g_assert_no_error (error);
  if (!variant->local_map)
    remove_local_maps (model);
  g_assert_true (hp_module_parallelize (model, mesh, &error));
  g_assert_no_error (error);
  g_assert_true (hp_base_model_verify_module_protocol (HP_BASE_MODEL (model), &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_init_states (reference, 5, &error));
  g_assert_true (hp_module_init_states (model, 5, &error));
  g_assert_no_error (error);
  randomize_biases (reference, model);
  g_assert_true (HP_IS_DTENSOR (hp_module_get_parameter (model, "layers.0.attention.wq.weight")));
  if (variant->tied)
    {
      HpTensor *table = hp_module_get_parameter (model, "tok_embeddings.weight");

      /* one DTensor, in the layout both plans give it */
      g_assert_true (hp_module_get_parameter (model, "lm_head.weight") == table);
      hp_test_assert_placements (table, "(S(0))");
    }
  g_assert_true ((hp_module_get_parameter (model, "layers.1.attention.wo.bias") != NULL) ==
                 variant->attention_bias);
  g_assert_cmpint (hp_tensor_get_shape (hp_module_get_parameter (model, "layers.0.attention.wq.weight"),
                                        NULL)[0], ==, 2 * tp * (variant->head_dim > 0 ? variant->head_dim : 4));

  reference_loss = run (reference, NULL, 0, 3, &reference_logits);
  loss = run (model, mesh, 0, 3, &logits);
  full_loss = whole (loss);
  full_logits = whole (logits);
  hp_test_assert_close (full_logits, reference_logits, 1e-10, 1e-12);
  hp_test_assert_close (full_loss, reference_loss, 1e-12, 0);
  assert_grads_equal (model, reference);
}

/* dp 2 x tp world/2 (dp = world on an odd number of ranks): each
 * replica trains on its rows of the batch; averaged gradients equal the
 * whole batch's */
static void
test_data_and_tensor_parallel (gconstpointer data)
{
  const Variant *variant = data;
  g_autoptr(GError) error = NULL;
  gint dp = world_size % 2 == 0 ? 2 : world_size;
  gint tp = world_size / dp;
  gint rows = 2;
  g_autoptr(HpParallelDims) one = dims_for (1, 1);
  g_autoptr(HpParallelDims) dims = dims_for (dp, tp);
  g_autoptr(HpDecoderConfig) reference_config = variant_config (tp, variant);
  g_autoptr(HpDecoderConfig) config = variant_config (tp, variant);
  g_autoptr(HpModule) reference = build (reference_config, one);
  g_autoptr(HpModule) model = build (config, dims);
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpDeviceMesh) tp_mesh = NULL;
  g_autoptr(HpDeviceMesh) dp_mesh = NULL;
  g_autoptr(GPtrArray) params = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpTensor) reference_loss = NULL;
  g_autoptr(HpTensor) logits = NULL;
  g_autoptr(HpTensor) reference_logits = NULL;
  g_autoptr(HpTensor) full_loss = NULL;
  gdouble loss_value;
  gint shape[] = { dp, tp };

  mesh = hp_device_mesh_new (shape, 2, (const gchar *[]) { "dp_replicate", "tp", NULL }, &error);
  g_assert_no_error (error);
  tp_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "tp", NULL }, &error);
  dp_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "dp_replicate", NULL }, &error);
  g_assert_no_error (error);
  if (tp > 1)
    g_assert_true (hp_module_parallelize (model, tp_mesh, &error));
  g_assert_true (hp_module_init_states (reference, 9, &error));
  g_assert_true (hp_module_init_states (model, 9, &error));
  g_assert_no_error (error);
  randomize_biases (reference, model);

  reference_loss = run (reference, NULL, 0, dp * rows, &reference_logits);
  loss = run (model, tp > 1 ? tp_mesh : NULL, rows * hp_device_mesh_get_local_rank (dp_mesh, 0),
              rows, &logits);
  params = hp_module_parameters (model);
  /* a tied table is averaged once: it is one parameter; biases are 4
   * per layer */
  g_assert_cmpuint (params->len, ==, 21 - variant->tied +
                    (variant->attention_bias ? 4 * hp_decoder_config_get_n_layers (config) : 0));
  g_assert_true (hp_data_parallel_average_gradients (params, dp_mesh, &error));
  full_loss = whole (loss);
  loss_value = hp_tensor_item (full_loss, &error);
  g_assert_true (hp_data_parallel_average_scalar (dp_mesh, &loss_value, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat_with_epsilon (loss_value, hp_tensor_item (reference_loss, NULL), 1e-12);
  assert_grads_equal (model, reference);
}

/* The variants' fields through JSON, before and after expanding, and
 * into every layer */
static void
test_variants_json (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoderConfig) config = decoder_config (1, FALSE, FALSE);
  g_autoptr(HpConfig) back = NULL;
  g_autofree gchar *text = NULL;

  g_object_set (config, "head-dim", 6, "attention-bias", TRUE, "rope-scaling", HP_ROPE_SCALING_LLAMA3,
                "rope-scaling-factor", 32.0, "rope-low-freq-factor", 0.5, "rope-high-freq-factor", 2.5,
                "rope-original-max-seq-len", 4096, NULL);
  for (guint expanded = 0; expanded < 2; expanded++)
    {
      g_clear_pointer (&text, g_free);
      g_clear_object (&back);
      text = hp_config_to_json (HP_CONFIG (config), TRUE);
      back = hp_config_new_from_json (HP_TYPE_DECODER_CONFIG, text, &error);
      g_assert_no_error (error);
      g_assert_true (hp_config_equal (back, HP_CONFIG (config)));
      g_assert_nonnull (strstr (text, "\"rope-scaling\": \"llama3\""));
      g_assert_true (hp_decoder_config_expand (config, &error));
      g_assert_no_error (error);
    }
  hp_test_assert_path (HP_CONFIG (config), "layers.1.attention.head-dim", "6");
  hp_test_assert_path (HP_CONFIG (config), "layers.1.attention.bias", "true");
  hp_test_assert_path (HP_CONFIG (config), "layers.1.attention.wv.bias", "true");
  hp_test_assert_path (HP_CONFIG (config), "layers.1.attention.wv.out-features", "6");
  hp_test_assert_path (HP_CONFIG (config), "layers.1.attention.wo.in-features", "12");
  hp_test_assert_path (HP_CONFIG (config), "layers.0.attention.rope.scaling", "llama3");
  hp_test_assert_path (HP_CONFIG (config), "layers.0.attention.rope.high-freq-factor", "2.5");
  hp_test_assert_path (HP_CONFIG (config), "layers.0.attention.rope.original-max-seq-len", "4096");
  hp_test_assert_path (HP_CONFIG (config), "layers.0.attention.rope.head-dim", "6");
}

/* update_from_config fails with @message and leaves @config as it was */
static void
assert_update_error (HpDecoderConfig *config,
                     gint             tp,
                     const gchar     *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParallelDims) dims = dims_for (1, tp);
  g_autofree gchar *before = hp_config_to_json (HP_CONFIG (config), FALSE);
  g_autofree gchar *after = NULL;
  gboolean ok = hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config),
                                                         HP_CONFIG (dims), &error);

  hp_test_assert_error (GINT_TO_POINTER (ok), &error, HP_ERROR_CONFIG, message);
  after = hp_config_to_json (HP_CONFIG (config), FALSE);
  g_assert_cmpstr (after, ==, before);
}

static void
test_heads_not_divisible (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoderConfig) config = decoder_config (2, TRUE, FALSE);
  g_autoptr(HpDecoderConfig) expanded = decoder_config (2, TRUE, FALSE);
  g_autoptr(HpDecoderConfig) blocks_only = decoder_config (2, TRUE, FALSE);
  g_autoptr(HpConfigList) layers = NULL;
  HpGQAttentionConfig *attention;

  /* before expanding: by the decoder's own sizes, nothing is expanded */
  assert_update_error (config, 3, "n-heads: 4 heads cannot be split over tp = 3");
  /* after: by each block's */
  g_assert_true (hp_decoder_config_expand (expanded, &error));
  g_assert_no_error (error);
  assert_update_error (expanded, 3, "layers.0.attention.n-heads: 4 heads cannot be split over tp = 3");

  /* blocks whose heads split over tp but whose attention does not fit:
   * the parts that expand added are taken back when the layout fails */
  g_assert_true (hp_decoder_config_expand (blocks_only, &error));
  g_object_get (blocks_only, "layers", &layers, NULL);
  g_object_set (blocks_only, "tok-embeddings", NULL, "norm", NULL, "lm-head", NULL, NULL);
  attention = hp_transformer_block_config_get_attention (
    HP_TRANSFORMER_BLOCK_CONFIG (hp_config_list_peek (layers, 1)));
  g_object_set (attention, "n-heads", 6, NULL);
  assert_update_error (blocks_only, 2,
                       "layers.1.attention: HpGQAttention: dim 16 is not a multiple of n-heads 6");
}

/* Expanding or laying out @config fails with @message and leaves it as
 * it was (its JSON, which holds every nested configuration and sharding
 * configuration, does not change) */
static void
assert_config_error (HpDecoderConfig *config,
                     gboolean         sharding,
                     const gchar     *message)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *before = hp_config_to_json (HP_CONFIG (config), FALSE);
  g_autofree gchar *after = NULL;
  gboolean ok = sharding ? hp_set_decoder_sharding_config (config, TRUE, TRUE, &error)
                         : hp_decoder_config_expand (config, &error);

  hp_test_assert_error (GINT_TO_POINTER (ok), &error, HP_ERROR_CONFIG, message);
  after = hp_config_to_json (HP_CONFIG (config), FALSE);
  g_assert_cmpstr (after, ==, before);
}

static void
test_config_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoderConfig) odd_heads = decoder_config (1, FALSE, FALSE);
  g_autoptr(HpDecoderConfig) kv_heads = decoder_config (1, FALSE, FALSE);
  g_autoptr(HpDecoderConfig) ints = decoder_config (1, FALSE, FALSE);
  g_autoptr(HpDecoderConfig) short_list = decoder_config (1, FALSE, FALSE);
  g_autoptr(HpDecoderConfig) bad_layer = decoder_config (1, FALSE, FALSE);
  g_autoptr(HpConfigList) one_block = hp_config_list_new ();
  g_autoptr(HpConfigList) layers = NULL;
  g_autoptr(HpConfig) block = NULL;
  HpGQAttentionConfig *attention;
  gpointer nested = NULL;

  g_object_set (odd_heads, "n-heads", 3, NULL);
  g_object_set (kv_heads, "n-kv-heads", 3, "n-heads", 4, NULL);
  g_object_set (ints, "dtype", HP_DTYPE_INT64, NULL);
  for (guint i = 0; i < 2; i++)
    {
      gboolean sharding = i == 1;

      assert_config_error (odd_heads, sharding, "n-heads: 3 heads do not split dim 8 into even head sizes");
      assert_config_error (kv_heads, sharding, "n-kv-heads: 3 key/value heads do not divide 4 heads");
      /* the blocks are made before anything is set */
      assert_config_error (ints, sharding,
                           "layers.0: HpGQAttentionConfig.dtype: int64 is not a floating-point type "
                           "(float32 or float64)");
    }
  g_object_get (ints, "tok-embeddings", &nested, NULL);
  g_assert_null (nested);

  /* a list of blocks that does not match n-layers */
  g_assert_true (hp_decoder_config_expand (bad_layer, &error));
  g_assert_no_error (error);
  g_object_get (bad_layer, "layers", &layers, NULL);
  block = hp_config_copy (hp_config_list_peek (layers, 0));
  hp_config_list_append (one_block, block);
  g_object_set (short_list, "layers", one_block, NULL);
  assert_config_error (short_list, FALSE, "layers: 1 blocks configured but n-layers is 2");
  assert_config_error (short_list, TRUE, "layers: 1 blocks configured but n-layers is 2");

  /* a layer whose attention does not fit: the layers before it, the
   * embeddings and the head keep the layout they had (none) */
  attention = hp_transformer_block_config_get_attention (HP_TRANSFORMER_BLOCK_CONFIG (hp_config_list_peek (layers, 1)));
  g_object_set (attention, "n-heads", 3, NULL);
  assert_config_error (bad_layer, TRUE,
                       "layers.1.attention: HpGQAttention: dim 8 is not a multiple of n-heads 3");
  g_object_get (bad_layer, "tok-embeddings", &nested, NULL);
  g_assert_null (hp_module_config_get_sharding_config (nested));
  g_object_unref (nested);

  /* once it fits, the layout is installed */
  g_object_set (attention, "n-heads", 2, NULL);
  g_assert_true (hp_set_decoder_sharding_config (bad_layer, TRUE, TRUE, &error));
  g_assert_no_error (error);
  g_object_get (bad_layer, "tok-embeddings", &nested, NULL);
  g_assert_nonnull (hp_module_config_get_sharding_config (nested));
  g_object_unref (nested);
}

/* hp_config_validate() and hp_config_build() of @config fail with
 * exactly @message */
static void
assert_invalid (gpointer     config,
                const gchar *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) built = NULL;

  g_assert_false (hp_config_validate (HP_CONFIG (config), &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, message);
  g_clear_error (&error);
  built = hp_config_build (HP_CONFIG (config), &error);
  g_assert_null (built);
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==, message);
}

/* validate checks what building checks, down the tree */
static void
test_validate (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoderConfig) config = decoder_config (1, FALSE, FALSE);
  g_autoptr(HpDecoderConfig) expanded = decoder_config (1, FALSE, FALSE);
  g_autoptr(HpDecoderConfig) ints = decoder_config (1, FALSE, FALSE);
  g_autoptr(HpTransformerBlockConfig) block = g_object_new (HP_TYPE_TRANSFORMER_BLOCK_CONFIG, NULL);
  g_autoptr(HpConfigList) layers = NULL;
  HpTransformerBlockConfig *layer;

  g_assert_true (hp_config_validate (HP_CONFIG (config), &error));
  g_assert_true (hp_decoder_config_expand (expanded, &error));
  g_assert_true (hp_config_validate (HP_CONFIG (expanded), &error));
  g_assert_no_error (error);

  g_object_set (config, "n-heads", 3, NULL);
  assert_invalid (config, "n-heads: 3 heads do not split dim 8 into even head sizes");
  g_object_set (config, "n-heads", 4, "n-kv-heads", 3, NULL);
  assert_invalid (config, "n-kv-heads: 3 key/value heads do not divide 4 heads");
  g_object_set (ints, "dtype", HP_DTYPE_INT64, NULL);
  assert_invalid (ints, "HpDecoderConfig.dtype: int64 is not a floating-point type (float32 or float64)");
  /* an explicit head dim: no multiple of the heads needed, but even;
   * llama3 needs a band between its factors */
  g_object_set (config, "n-heads", 3, "n-kv-heads", 0, "head-dim", 4, NULL);
  g_assert_true (hp_config_validate (HP_CONFIG (config), &error));
  g_assert_no_error (error);
  g_object_set (config, "head-dim", 3, NULL);
  assert_invalid (config, "head-dim: 3 must be even (the rotary embedding turns pairs)");
  g_object_set (config, "n-heads", 4, "head-dim", 0, "rope-scaling", HP_ROPE_SCALING_LLAMA3,
                "rope-low-freq-factor", 5.0, NULL);
  assert_invalid (config, "rope-high-freq-factor 4 must be greater than rope-low-freq-factor 5 "
                  "for the llama3 scaling");
  g_object_set (config, "rope-low-freq-factor", 1.0, "rope-scaling", HP_ROPE_SCALING_NONE, NULL);

  /* a layer's own checks, with its path */
  g_object_get (expanded, "layers", &layers, NULL);
  layer = HP_TRANSFORMER_BLOCK_CONFIG (hp_config_list_peek (layers, 1));
  g_object_set (hp_transformer_block_config_get_attention (layer), "n-heads", 3, NULL);
  g_assert_false (hp_config_validate (HP_CONFIG (expanded), &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==,
                   "layers.1.attention: HpGQAttention: dim 8 is not a multiple of n-heads 3");
  g_clear_error (&error);
  g_object_set (hp_transformer_block_config_get_attention (layer), "n-heads", 2, NULL);
  g_object_set (layer, "ffn-norm", NULL, NULL);
  assert_invalid (expanded, "layers.1.ffn-norm: a block of a decoder needs one");

  /* a block alone needs its four parts */
  assert_invalid (block, "HpTransformerBlockConfig.attention-norm is not set");
  g_object_set (block, "attention-norm", hp_transformer_block_config_get_attention_norm (layer),
                "attention", hp_transformer_block_config_get_attention (layer),
                "feed-forward", hp_transformer_block_config_get_feed_forward (layer), NULL);
  assert_invalid (block, "HpTransformerBlockConfig.ffn-norm is not set");
}

/* Data parallelism over a mesh that is not 1-D: every rank fails before
 * communicating, and no gradient or value changes */
static void
test_data_parallel_errors (void)
{
  g_autoptr(GError) error = NULL;
  const gchar *names[] = { "dp", "tp", NULL };
  g_autoptr(HpDeviceMesh) flat = hp_test_mesh ((const gint[]) { world_size, 1 }, 2, names);
  g_autoptr(HpDeviceMesh) line = hp_test_mesh ((const gint[]) { world_size }, 1, NULL);
  g_autoptr(HpTensor) w = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) grad = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0.5, -4), HP_TEST_SHAPE (2));
  g_autoptr(GPtrArray) params = g_ptr_array_new ();
  g_autofree gchar *message = NULL;
  g_autofree gchar *flat_text = hp_device_mesh_to_string (flat);
  gdouble value = 3.25;

  hp_tensor_set_requires_grad (w, TRUE);
  hp_tensor_set_grad (w, grad);
  g_ptr_array_add (params, w);
  message = g_strdup_printf ("data parallelism needs a 1-D mesh, got %s", flat_text);

  hp_test_assert_error (GINT_TO_POINTER (hp_data_parallel_average_gradients (params, flat, &error)),
                        &error, HP_ERROR_MESH, message);
  g_assert_true (hp_tensor_get_grad (w) == grad);
  hp_test_assert_values (grad, HP_TEST_DATA (0.5, -4), HP_TEST_SHAPE (2), 0, 0);
  hp_test_assert_values (w, HP_TEST_DATA (1, 2), HP_TEST_SHAPE (2), 0, 0);

  hp_test_assert_error (GINT_TO_POINTER (hp_data_parallel_average_scalar (flat, &value, &error)),
                        &error, HP_ERROR_MESH, message);
  g_assert_cmpfloat (value, ==, 3.25);

  /* the ranks are still in step: the same values average to themselves */
  g_assert_true (hp_data_parallel_average_gradients (params, line, &error));
  g_assert_no_error (error);
  hp_test_assert_values (hp_tensor_get_grad (w), HP_TEST_DATA (0.5, -4), HP_TEST_SHAPE (2), 0, 0);
  g_assert_true (hp_data_parallel_average_scalar (line, &value, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (value, ==, 3.25);
}

/* Gradients longer than one of the 512 KiB pieces that the average is
 * made in, with a last piece that is not full, in float32 and float64,
 * and a parameter without one: each element is the exact mean, on any
 * number of ranks (division by 3 included), and the rest is untouched */
static void
test_data_parallel_large_gradients (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) line = hp_test_mesh ((const gint[]) { world_size }, 1, NULL);
  g_autoptr(GPtrArray) params = g_ptr_array_new_with_free_func (g_object_unref);
  const gint64 numel = 2 * 131072 + 3;
  const HpDType dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64 };
  g_autofree gdouble *mine = g_new (gdouble, numel);
  g_autofree gdouble *mean = g_new (gdouble, numel);
  gint rank = hp_get_world_rank ();
  g_autoptr(HpTensor) without = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, (const gint64[]) { 3 }, 1);

  /* rank r holds (r + 1) * v, whose sum over n ranks is exact in float:
   * the mean is v * (n + 1) / 2 */
  for (gint64 i = 0; i < numel; i++)
    {
      gdouble v = (gdouble) (i % 7) + 0.25;

      mine[i] = (rank + 1) * v;
      mean[i] = v * world_size * (world_size + 1) / 2 / world_size;
    }
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      HpTensor *w = hp_tensor_new_zeros (dtypes[d], &numel, 1);
      g_autoptr(HpTensor) grad = hp_test_tensor (dtypes[d], mine, numel, &numel, 1);

      hp_tensor_set_requires_grad (w, TRUE);
      hp_tensor_set_grad (w, grad);
      g_ptr_array_add (params, w);
    }
  hp_tensor_set_requires_grad (without, TRUE);
  g_ptr_array_add (params, g_object_ref (without));

  g_assert_true (hp_data_parallel_average_gradients (params, line, &error));
  g_assert_no_error (error);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    hp_test_assert_values (hp_tensor_get_grad (g_ptr_array_index (params, d)), mean, numel,
                           &numel, 1, 0, 0);
  g_assert_null (hp_tensor_get_grad (without));
}

/* A layer list read from JSON can hold any configuration: expanding,
 * adjusting to tp and building refuse one that is not a block, and
 * leave the configuration as it was (found by fuzz-config-json) */
static void
test_layers_not_blocks (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParallelDims) dims = dims_for (1, 2);
  g_autoptr(HpConfig) config = NULL;
  g_autoptr(GObject) model = NULL;
  g_autofree gchar *before = NULL;
  g_autofree gchar *after = NULL;
  gboolean ok;

  config = hp_config_new_from_json (HP_TYPE_DECODER_CONFIG,
                                    "{\"n-layers\": 2, \"layers\": [{\"@type\": \"HpLinearConfig\", \"in-features\": 64}, "
                                    "{\"@type\": \"HpTransformerBlockConfig\"}]}",
                                    &error);
  g_assert_no_error (error);
  before = hp_config_to_json (config, FALSE);

  ok = hp_decoder_config_expand (HP_DECODER_CONFIG (config), &error);
  hp_test_assert_error (GINT_TO_POINTER (ok), &error, HP_ERROR_CONFIG,
                        "layers.0: expected a HpTransformerBlockConfig, got a HpLinearConfig");
  ok = hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config), HP_CONFIG (dims), &error);
  hp_test_assert_error (GINT_TO_POINTER (ok), &error, HP_ERROR_CONFIG,
                        "layers.0: expected a HpTransformerBlockConfig, got a HpLinearConfig");
  model = hp_config_build (config, &error);
  hp_test_assert_error (model, &error, HP_ERROR_CONFIG,
                        "layers.0: expected a HpTransformerBlockConfig, got a HpLinearConfig");
  ok = hp_config_validate (config, &error);
  hp_test_assert_error (GINT_TO_POINTER (ok), &error, HP_ERROR_CONFIG,
                        "layers.0: expected a HpTransformerBlockConfig, got a HpLinearConfig");

  after = hp_config_to_json (config, FALSE);
  g_assert_cmpstr (after, ==, before);

  /* a block without its parts, adjusted to tensor parallelism */
  g_clear_object (&config);
  g_clear_pointer (&before, g_free);
  g_clear_pointer (&after, g_free);
  config = hp_config_new_from_json (HP_TYPE_DECODER_CONFIG,
                                    "{\"n-layers\": 1, \"layers\": [{\"@type\": \"HpTransformerBlockConfig\"}]}",
                                    &error);
  g_assert_no_error (error);
  before = hp_config_to_json (config, FALSE);
  ok = hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config), HP_CONFIG (dims), &error);
  hp_test_assert_error (GINT_TO_POINTER (ok), &error, HP_ERROR_CONFIG,
                        "layers.0.attention: a block of a decoder needs one");
  ok = hp_config_validate (config, &error);
  hp_test_assert_error (GINT_TO_POINTER (ok), &error, HP_ERROR_CONFIG,
                        "layers.0.attention: a block of a decoder needs one");
  after = hp_config_to_json (config, FALSE);
  g_assert_cmpstr (after, ==, before);
}

/* The loss of @model on rows [0, 3), without recording */
static gdouble
loss_value (HpModule *model)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ids = NULL;
  g_autoptr(HpTensor) targets = NULL;
  g_autoptr(HpTensor) logits = NULL;
  g_autoptr(HpTensor) loss = NULL;
  gboolean enabled = hp_grad_mode_is_enabled ();
  gdouble value;

  hp_test_token_batch (0, 0, 3, &ids, &targets);
  hp_grad_mode_set_enabled (FALSE);
  logits = hp_module_call1 (model, ids, &error);
  g_assert_no_error (error);
  loss = hp_tensor_cross_entropy (logits, targets, -100, &error);
  g_assert_no_error (error);
  hp_grad_mode_set_enabled (enabled);
  value = hp_tensor_item (loss, &error);
  g_assert_no_error (error);
  return value;
}

/* Copies @values (the table's shape) into the tied table of @model */
static void
load_table (HpModule      *model,
            const gdouble *values,
            gsize          n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpStateDict) states = hp_state_dict_new ();
  g_autoptr(HpTensor) table = hp_test_tensor (HP_DTYPE_FLOAT64, values, n, HP_TEST_SHAPE (11, 8));

  hp_state_dict_insert (states, "tok_embeddings.weight", table);
  g_assert_true (hp_module_load_state_dict (model, states, FALSE, &error));
  g_assert_no_error (error);
}

/* One rank, float64: a tied decoder is an untied one whose head has the
 * embedding's values, its table's gradient the sum of the lookup's and
 * the head's, as central finite differences of the loss confirm; an
 * optimizer steps it once and clipping counts it once */
static void
test_tied_gradient (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParallelDims) one = dims_for (1, 1);
  g_autoptr(HpDecoderConfig) tied_config = decoder_config (1, FALSE, FALSE);
  g_autoptr(HpDecoderConfig) untied_config = decoder_config (1, FALSE, FALSE);
  g_autoptr(HpModule) tied = NULL;
  g_autoptr(HpModule) untied = build (untied_config, one);
  g_autoptr(HpStateDict) states = NULL;
  g_autoptr(HpStateDict) named = NULL;
  g_autoptr(HpStateDict) untied_named = NULL;
  g_autoptr(GPtrArray) params = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpTensor) untied_loss = NULL;
  g_autoptr(HpTensor) logits = NULL;
  g_autoptr(HpTensor) untied_logits = NULL;
  g_autoptr(HpOptimizerConfig) sgd = g_object_new (HP_TYPE_SGD_CONFIG, "lr", 0.5, NULL);
  g_autoptr(HpOptimizer) optimizer = NULL;
  g_autofree gdouble *values = NULL;
  g_autofree gdouble *grad = NULL;
  g_autofree gdouble *lookup_grad = NULL;
  g_autofree gdouble *head_grad = NULL;
  g_autofree gdouble *stepped = NULL;
  HpTensor *table;
  gsize n, n_grad;
  gdouble squares = 0;
  gdouble norm;

  g_object_set (tied_config, "tie-word-embeddings", TRUE, NULL);
  tied = build (tied_config, one);
  g_assert_true (hp_module_init_states (tied, 5, &error));
  g_assert_no_error (error);
  table = hp_module_get_parameter (tied, "tok_embeddings.weight");
  g_assert_true (hp_module_get_parameter (tied, "lm_head.weight") == table);

  /* one parameter, two paths in the state dict */
  named = hp_module_named_parameters (tied);
  untied_named = hp_module_named_parameters (untied);
  g_assert_cmpuint (hp_state_dict_get_size (named), ==, hp_state_dict_get_size (untied_named) - 1);
  g_assert_false (hp_state_dict_contains (named, "lm_head.weight"));
  states = hp_module_state_dict (tied);
  g_assert_true (hp_state_dict_lookup (states, "lm_head.weight") == table);
  g_assert_true (hp_state_dict_lookup (states, "tok_embeddings.weight") == table);
  g_assert_true (hp_module_load_state_dict (untied, states, TRUE, &error));
  g_assert_no_error (error);

  loss = run (tied, NULL, 0, 3, &logits);
  untied_loss = run (untied, NULL, 0, 3, &untied_logits);
  hp_test_assert_close (logits, untied_logits, 1e-13, 1e-14);
  hp_test_assert_close (loss, untied_loss, 1e-13, 0);

  values = hp_tensor_to_float64_array (table, &n);
  grad = hp_tensor_to_float64_array (hp_tensor_get_grad (table), &n_grad);
  lookup_grad = hp_tensor_to_float64_array (
    hp_tensor_get_grad (hp_module_get_parameter (untied, "tok_embeddings.weight")), &n_grad);
  head_grad = hp_tensor_to_float64_array (
    hp_tensor_get_grad (hp_module_get_parameter (untied, "lm_head.weight")), &n_grad);
  g_assert_cmpuint (n_grad, ==, n);
  for (gsize j = 0; j < n; j++)
    {
      gdouble saved = values[j];
      gdouble f[2];
      gdouble numeric;

      g_assert_cmpfloat_with_epsilon (grad[j], lookup_grad[j] + head_grad[j], 1e-13);
      for (gint side = 0; side < 2; side++)
        {
          values[j] = saved + (side == 0 ? 1e-6 : -1e-6);
          load_table (tied, values, n);
          f[side] = loss_value (tied);
        }
      values[j] = saved;
      numeric = (f[0] - f[1]) / 2e-6;
      g_assert_cmpfloat (fabs (grad[j] - numeric), <=, 1e-6 * fabs (numeric) + 1e-8);
    }
  load_table (tied, values, n);

  /* the other parameters as in the untied model */
  for (guint i = 1; i < hp_state_dict_get_size (named); i++)
    hp_test_assert_close (hp_tensor_get_grad (hp_state_dict_get_tensor (named, i)),
                          hp_tensor_get_grad (hp_module_get_parameter (untied,
                                                hp_state_dict_get_name (named, i))),
                          1e-13, 1e-14);

  /* clipping's norm counts the table's gradient once */
  params = hp_module_parameters (tied);
  for (guint i = 0; i < params->len; i++)
    {
      g_autofree gdouble *g = hp_tensor_to_float64_array (
        hp_tensor_get_grad (g_ptr_array_index (params, i)), &n_grad);

      for (gsize j = 0; j < n_grad; j++)
        squares += g[j] * g[j];
    }
  norm = hp_clip_grad_norm (params, 1e6, 2, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat_with_epsilon (norm, sqrt (squares), 1e-12);

  /* one step of lr 0.5 moves the table by half its gradient, once */
  optimizer = hp_optimizer_config_build_optimizer (sgd, params, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hp_optimizer_get_n_parameters (optimizer), ==, hp_state_dict_get_size (named));
  g_assert_true (hp_optimizer_step (optimizer, &error));
  g_assert_no_error (error);
  stepped = hp_tensor_to_float64_array (table, &n);
  for (gsize j = 0; j < n; j++)
    g_assert_cmpfloat_with_epsilon (stepped[j], values[j] - 0.5 * grad[j], 1e-15);
}

/* A tied head must describe the embedding's table, and under tensor
 * parallelism a plan may not lay the table out two ways: each is an
 * error before anything is built or communicated */
static void
test_tied_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoderConfig) biased = decoder_config (1, FALSE, FALSE);
  g_autoptr(HpDecoderConfig) wider = decoder_config (1, FALSE, FALSE);
  g_autoptr(HpDecoderConfig) laid_out = decoder_config (world_size, TRUE, FALSE);
  g_autoptr(HpEmbeddingConfig) table = NULL;
  g_autoptr(HpShardingConfig) rowwise = hp_sharding_rowwise (FALSE);
  g_autoptr(HpParallelDims) dims = dims_for (1, world_size);
  g_autoptr(HpModule) model = NULL;
  g_autoptr(HpDeviceMesh) mesh = NULL;
  gint shape[] = { world_size };
  gpointer built;

  g_object_set (biased, "tie-word-embeddings", TRUE, NULL);
  g_assert_true (hp_decoder_config_expand (biased, &error));
  g_assert_no_error (error);
  hp_test_set_path (HP_CONFIG (biased), "lm-head.bias", "true");
  g_assert_false (hp_config_validate (HP_CONFIG (biased), &error));
  hp_test_assert_error (NULL, &error, HP_ERROR_CONFIG,
                        "tie-word-embeddings: lm-head has a bias, which a head tied to the token "
                        "embedding cannot have");

  /* a table given whole, the head made by building from the sizes */
  table = g_object_new (HP_TYPE_EMBEDDING_CONFIG, "num-embeddings", 12, "embedding-dim", 8,
                        "dtype", HP_DTYPE_FLOAT64, NULL);
  g_object_set (wider, "tie-word-embeddings", TRUE, "tok-embeddings", table, NULL);
  built = hp_config_build (HP_CONFIG (wider), &error);
  hp_test_assert_error (built, &error, HP_ERROR_CONFIG,
                        "tie-word-embeddings: lm-head (out-features 11, in-features 8, float64) "
                        "cannot share the table of tok-embeddings (num-embeddings 12, "
                        "embedding-dim 8, float64)");

  /* a head laid out row-wise would want the table as S(1) */
  g_object_set (laid_out, "tie-word-embeddings", TRUE, NULL);
  /* also on one rank, where update_from_config leaves the layout alone */
  g_assert_true (hp_set_decoder_sharding_config (laid_out, TRUE, FALSE, &error));
  g_assert_no_error (error);
  model = build (laid_out, dims);
  hp_module_set_sharding_config (hp_module_get_child (model, "lm_head"), rowwise);
  mesh = hp_device_mesh_new (shape, 1, (const gchar *[]) { "tp", NULL }, &error);
  g_assert_no_error (error);
  hp_test_assert_error (GINT_TO_POINTER (hp_module_parallelize (model, mesh, &error)), &error,
                        HP_ERROR_PLACEMENT,
                        "HpLinear.weight is tied to a state laid out as (S(0)), but "
                        "state_shardings asks for (S(1))");
  g_assert_false (HP_IS_DTENSOR (hp_module_get_parameter (model, "tok_embeddings.weight")));
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  static const Variant variants[] = {
    { TRUE, FALSE, TRUE },
    { FALSE, FALSE, TRUE },
    { TRUE, TRUE, TRUE },
    { FALSE, TRUE, TRUE },
    { TRUE, FALSE, FALSE },
    { TRUE, FALSE, TRUE, TRUE },
    { FALSE, FALSE, TRUE, TRUE },
    { TRUE, TRUE, TRUE, TRUE },
    { FALSE, TRUE, TRUE, TRUE },
    { TRUE, FALSE, TRUE, FALSE, 6, FALSE, HP_ROPE_SCALING_NONE },
    { FALSE, FALSE, TRUE, FALSE, 0, TRUE, HP_ROPE_SCALING_NONE },
    { TRUE, TRUE, TRUE, FALSE, 0, TRUE, HP_ROPE_SCALING_NONE },
    { TRUE, FALSE, TRUE, FALSE, 0, FALSE, HP_ROPE_SCALING_LLAMA3 },
    { TRUE, FALSE, TRUE, FALSE, 0, FALSE, HP_ROPE_SCALING_LINEAR },
    { TRUE, TRUE, FALSE, FALSE, 6, TRUE, HP_ROPE_SCALING_LLAMA3 },
    { TRUE, TRUE, TRUE, TRUE, 0, FALSE, HP_ROPE_SCALING_LLAMA3 },
  };
  static const Variant dp_tp_variants[] = {
    { TRUE, TRUE, TRUE },
    { TRUE, TRUE, TRUE, TRUE },
    { TRUE, TRUE, TRUE, FALSE, 6, TRUE, HP_ROPE_SCALING_LLAMA3 },
    { TRUE, FALSE, TRUE, FALSE, 10, TRUE, HP_ROPE_SCALING_LINEAR },
    { TRUE, TRUE, TRUE, TRUE, 0, FALSE, HP_ROPE_SCALING_LLAMA3 },
  };
  static const gchar *dp_tp_names[] = {
    "/decoder/dp-tp",
    "/decoder/dp-tp/tied",
    "/decoder/dp-tp/head-dim+bias+llama3",
    "/decoder/dp-tp/head-dim+bias+linear",
    "/decoder/dp-tp/tied+llama3",
  };
  static const gchar *names[] = {
    "/decoder/tp/loss-parallel",
    "/decoder/tp/plain",
    "/decoder/tp/loss-parallel+sequence-parallel",
    "/decoder/tp/sequence-parallel",
    "/decoder/tp/without-local-map",
    "/decoder/tp/tied/loss-parallel",
    "/decoder/tp/tied/plain",
    "/decoder/tp/tied/loss-parallel+sequence-parallel",
    "/decoder/tp/tied/sequence-parallel",
    "/decoder/tp/head-dim",
    "/decoder/tp/attention-bias",
    "/decoder/tp/attention-bias+sequence-parallel",
    "/decoder/tp/rope-llama3",
    "/decoder/tp/rope-linear",
    "/decoder/tp/head-dim+bias+llama3+sequence-parallel",
    "/decoder/tp/tied+llama3+sequence-parallel",
  };

  hp_test_init (&argc, &argv);
  g_assert_true (hp_init (&error));
  world_size = hp_get_world_size ();

  for (guint i = 0; i < G_N_ELEMENTS (variants); i++)
    g_test_add_data_func (names[i], &variants[i], test_tensor_parallel);
  for (guint i = 0; i < G_N_ELEMENTS (dp_tp_variants); i++)
    g_test_add_data_func (dp_tp_names[i], &dp_tp_variants[i], test_data_and_tensor_parallel);
  g_test_add_func ("/decoder/tied-gradient", test_tied_gradient);
  g_test_add_func ("/decoder/tied-errors", test_tied_errors);
  g_test_add_func ("/decoder/heads-not-divisible", test_heads_not_divisible);
  g_test_add_func ("/decoder/config-errors", test_config_errors);
  g_test_add_func ("/decoder/validate", test_validate);
  g_test_add_func ("/decoder/variants-json", test_variants_json);
  g_test_add_func ("/decoder/data-parallel-errors", test_data_parallel_errors);
  g_test_add_func ("/decoder/data-parallel-large-gradients", test_data_parallel_large_gradients);
  g_test_add_func ("/decoder/layers-not-blocks", test_layers_not_blocks);

  return g_test_run ();
}
