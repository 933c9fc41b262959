/* test-activation-checkpointing.c: a decoder whose blocks recompute
 * their activations in the backward gives the losses and gradients of
 * the same decoder without, to the bit, on one rank, under tensor
 * parallelism over all ranks and under data x tensor parallelism
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi). The model with checkpointing
 * and the one without have the same layout, so their numbers must be
 * identical; the tensor-parallel ones are also compared, within
 * rounding, with one rank.
 */

#include <string.h>

#include "hp-test-utils.h"

#include "hp-module-private.h"

static gint world_size;

typedef struct
{
  HpDType dtype;
  HpActivationCheckpointing mode;
  gint every;
  gboolean sequence_parallel;
  gboolean tied;
} Case;

/* Three layers, so that every-2 checkpoints some but not all; heads
 * split over @tp ranks */
static HpDecoderConfig *
decoder_config (gint        tp,
                const Case *c,
                gboolean    checkpointed)
{
  return g_object_new (HP_TYPE_DECODER_CONFIG,
                       "dim", 8 * tp,
                       "n-layers", 3,
                       "n-heads", 2 * tp,
                       "n-kv-heads", tp,
                       "vocab-size", 11,
                       "ffn-hidden", 12,
                       "max-seq-len", 16,
                       "dtype", c->dtype,
                       "sequence-parallel", c->sequence_parallel,
                       "tie-word-embeddings", c->tied,
                       "activation-checkpointing", checkpointed ? c->mode
                                                                : HP_ACTIVATION_CHECKPOINTING_NONE,
                       "ac-every", c->every,
                       NULL);
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
  return HP_IS_DTENSOR (tensor) ? hp_test_full_tensor (tensor) : g_object_ref (tensor);
}

/* Two forwards and backwards (the second adds to the gradients of the
 * first, as gradient accumulation does) of @model on rows [first,
 * first + rows); the whole loss of the second */
static HpTensor *
run (HpModule     *model,
     HpDeviceMesh *tp_mesh,
     gint          first,
     gint          rows)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) loss = NULL;

  for (gint step = 0; step < 2; step++)
    {
      g_autoptr(HpTensor) ids = NULL;
      g_autoptr(HpTensor) targets = NULL;
      g_autoptr(HpTensor) logits = NULL;

      hp_test_token_batch (0, first + step, rows, &ids, &targets);
      if (tp_mesh != NULL)
        {
          HpTensor *local = targets;

          targets = HP_TENSOR (hp_test_local_dtensor (local, tp_mesh, "R"));
          g_object_unref (local);
        }
      logits = hp_module_call1 (model, ids, &error);
      g_assert_no_error (error);
      g_clear_object (&loss);
      loss = hp_tensor_cross_entropy (logits, targets, -100, &error);
      g_assert_no_error (error);
      g_assert_true (hp_tensor_backward (loss, NULL, &error));
      g_assert_no_error (error);
    }
  return whole (loss);
}

/* The gradients of @model and @expected: to the bit when @rtol is 0 */
static void
assert_grads (HpModule *model,
              HpModule *expected,
              gdouble   rtol)
{
  g_autoptr(HpStateDict) params = hp_module_named_parameters (model);
  g_autoptr(HpStateDict) reference = hp_module_named_parameters (expected);

  g_assert_cmpuint (hp_state_dict_get_size (params), ==, hp_state_dict_get_size (reference));
  for (guint i = 0; i < hp_state_dict_get_size (params); i++)
    {
      HpTensor *grad = hp_tensor_get_grad (hp_state_dict_get_tensor (params, i));
      HpTensor *expected_grad = hp_tensor_get_grad (hp_state_dict_get_tensor (reference, i));
      g_autoptr(HpTensor) full = NULL;
      g_autoptr(HpTensor) expected_full = NULL;

      g_assert_cmpstr (hp_state_dict_get_name (params, i), ==, hp_state_dict_get_name (reference, i));
      g_assert_nonnull (grad);
      g_assert_nonnull (expected_grad);
      full = whole (grad);
      expected_full = whole (expected_grad);
      if (rtol == 0)
        hp_test_assert_identical (full, expected_full);
      else
        hp_test_assert_close (full, expected_full, rtol, rtol * 1e-2);
    }
}

/* One rank, no parallelism: checkpointing changes no bit, and the
 * checkpointed blocks (only they) ran twice per step: in the forward
 * and in the backward */
static void
test_one_rank (gconstpointer data)
{
  const Case *c = data;
  g_autoptr(HpParallelDims) one = dims_for (1, 1);
  g_autoptr(HpDecoderConfig) plain_config = decoder_config (1, c, FALSE);
  g_autoptr(HpDecoderConfig) config = decoder_config (1, c, TRUE);
  g_autoptr(HpModule) plain = hp_test_decoder_build (plain_config, one, NULL);
  g_autoptr(HpModule) model = hp_test_decoder_build (config, one, NULL);
  g_autoptr(HpTensor) plain_loss = NULL;
  g_autoptr(HpTensor) loss = NULL;
  guint calls[3] = { 0 };

  for (guint i = 0; i < 3; i++)
    {
      g_autofree gchar *path = g_strdup_printf ("layers.%u", i);

      hp_test_count_signal (hp_module_get_child (model, path), "forward-pre", &calls[i]);
    }
  plain_loss = run (plain, NULL, 0, 3);
  loss = run (model, NULL, 0, 3);
  hp_test_assert_identical (loss, plain_loss);
  assert_grads (model, plain, 0);
  for (guint i = 0; i < 3; i++)
    g_assert_cmpuint (calls[i], ==,
                      c->mode == HP_ACTIVATION_CHECKPOINTING_FULL || (i + 1) % c->every == 0 ? 4 : 2);
}

/* tp = world size: checkpointing changes no bit of the tensor-parallel
 * numbers, which are those of one rank within rounding */
static void
test_tensor_parallel (gconstpointer data)
{
  const Case *c = data;
  g_autoptr(GError) error = NULL;
  gint tp = world_size;
  gint shape[] = { tp };
  g_autoptr(HpParallelDims) one = dims_for (1, 1);
  g_autoptr(HpParallelDims) dims = dims_for (1, tp);
  g_autoptr(HpDeviceMesh) mesh = hp_device_mesh_new (shape, 1, (const gchar *[]) { "tp", NULL },
                                                     &error);
  g_autoptr(HpDecoderConfig) reference_config = decoder_config (tp, c, FALSE);
  g_autoptr(HpDecoderConfig) plain_config = decoder_config (tp, c, FALSE);
  g_autoptr(HpDecoderConfig) config = decoder_config (tp, c, TRUE);
  g_autoptr(HpModule) reference = NULL;
  g_autoptr(HpModule) plain = NULL;
  g_autoptr(HpModule) model = NULL;
  g_autoptr(HpTensor) reference_loss = NULL;
  g_autoptr(HpTensor) plain_loss = NULL;
  g_autoptr(HpTensor) loss = NULL;
  gdouble rtol = c->dtype == HP_DTYPE_FLOAT64 ? 1e-9 : 2e-4;

  g_assert_no_error (error);
  /* also on one rank, where update_from_config leaves the layout alone */
  g_assert_true (hp_set_decoder_sharding_config (plain_config, TRUE, c->sequence_parallel, &error));
  g_assert_true (hp_set_decoder_sharding_config (config, TRUE, c->sequence_parallel, &error));
  g_assert_no_error (error);
  reference = hp_test_decoder_build (reference_config, one, NULL);
  plain = hp_test_decoder_build (plain_config, dims, mesh);
  model = hp_test_decoder_build (config, dims, mesh);
  g_assert_true (HP_IS_DTENSOR (hp_module_get_parameter (model, "layers.0.attention.wq.weight")));

  reference_loss = run (reference, NULL, 0, 3);
  plain_loss = run (plain, mesh, 0, 3);
  loss = run (model, mesh, 0, 3);
  hp_test_assert_identical (loss, plain_loss);
  assert_grads (model, plain, 0);
  hp_test_assert_close (loss, reference_loss, rtol, 0);
  assert_grads (model, reference, rtol);
}

/* dp 2 x tp world/2 (dp = world on an odd number of ranks), gradients
 * averaged over dp: with checkpointing as without */
static void
test_data_and_tensor_parallel (gconstpointer data)
{
  const Case *c = data;
  g_autoptr(GError) error = NULL;
  gint dp = world_size % 2 == 0 ? 2 : world_size;
  gint tp = world_size / dp;
  gint shape[] = { dp, tp };
  g_autoptr(HpParallelDims) dims = dims_for (dp, tp);
  g_autoptr(HpDeviceMesh) mesh = hp_device_mesh_new (shape, 2,
                                                     (const gchar *[]) { "dp_replicate", "tp", NULL },
                                                     &error);
  g_autoptr(HpDeviceMesh) tp_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "tp", NULL },
                                                          &error);
  g_autoptr(HpDeviceMesh) dp_mesh = hp_device_mesh_slice (mesh,
                                                          (const gchar *[]) { "dp_replicate", NULL },
                                                          &error);
  g_autoptr(HpDecoderConfig) plain_config = decoder_config (tp, c, FALSE);
  g_autoptr(HpDecoderConfig) config = decoder_config (tp, c, TRUE);
  g_autoptr(HpModule) plain = NULL;
  g_autoptr(HpModule) model = NULL;
  g_autoptr(HpTensor) plain_loss = NULL;
  g_autoptr(HpTensor) loss = NULL;
  gint first = 2 * hp_device_mesh_get_local_rank (dp_mesh, 0);

  g_assert_no_error (error);
  plain = hp_test_decoder_build (plain_config, dims, tp > 1 ? tp_mesh : NULL);
  model = hp_test_decoder_build (config, dims, tp > 1 ? tp_mesh : NULL);
  plain_loss = run (plain, tp > 1 ? tp_mesh : NULL, first, 2);
  loss = run (model, tp > 1 ? tp_mesh : NULL, first, 2);
  hp_test_assert_identical (loss, plain_loss);

  {
    g_autoptr(GPtrArray) plain_params = hp_module_parameters (plain);
    g_autoptr(GPtrArray) params = hp_module_parameters (model);

    g_assert_true (hp_data_parallel_average_gradients (plain_params, dp_mesh, &error));
    g_assert_true (hp_data_parallel_average_gradients (params, dp_mesh, &error));
    g_assert_no_error (error);
  }
  assert_grads (model, plain, 0);
}

/* In no-grad mode a checkpointed decoder runs as a plain one and
 * records nothing */
static void
test_no_grad (void)
{
  g_autoptr(GError) error = NULL;
  static const Case c = { HP_DTYPE_FLOAT64, HP_ACTIVATION_CHECKPOINTING_FULL, 2, FALSE };
  g_autoptr(HpParallelDims) one = dims_for (1, 1);
  g_autoptr(HpDecoderConfig) plain_config = decoder_config (1, &c, FALSE);
  g_autoptr(HpDecoderConfig) config = decoder_config (1, &c, TRUE);
  g_autoptr(HpModule) plain = hp_test_decoder_build (plain_config, one, NULL);
  g_autoptr(HpModule) model = hp_test_decoder_build (config, one, NULL);
  g_autoptr(HpTensor) ids = NULL;
  g_autoptr(HpTensor) targets = NULL;
  g_autoptr(HpTensor) logits = NULL;
  g_autoptr(HpTensor) plain_logits = NULL;

  hp_test_token_batch (0, 0, 2, &ids, &targets);
  hp_grad_mode_set_enabled (FALSE);
  logits = hp_module_call1 (model, ids, &error);
  plain_logits = hp_module_call1 (plain, ids, &error);
  hp_grad_mode_set_enabled (TRUE);
  g_assert_no_error (error);
  g_assert_false (hp_tensor_get_requires_grad (logits));
  hp_test_assert_identical (logits, plain_logits);

  /* with grad mode on, the logits carry the history */
  g_clear_object (&logits);
  logits = hp_module_call1 (model, ids, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_get_requires_grad (logits));
  hp_test_assert_identical (logits, plain_logits);
}

/* x * weight + outside (a tensor of the caller's) */
static GPtrArray *
scale_forward (HpModule   *module,
               GPtrArray  *args,
               gpointer    user_data,
               GError    **error)
{
  g_autoptr(HpTensor) scaled = hp_tensor_mul (g_ptr_array_index (args, 0),
                                              hp_module_get_parameter (module, "weight"), error);

  if (scaled == NULL)
    return NULL;
  return hp_test_one_output (hp_tensor_add (scaled, user_data, error));
}

/* Two copies of x */
static GPtrArray *
twice_forward (HpModule   *module,
               GPtrArray  *args,
               gpointer    user_data,
               GError    **error)
{
  GPtrArray *outputs = g_ptr_array_new_with_free_func (g_object_unref);

  g_ptr_array_add (outputs, g_object_ref (g_ptr_array_index (args, 0)));
  g_ptr_array_add (outputs, g_object_ref (g_ptr_array_index (args, 0)));
  return outputs;
}

/* What a checkpointed call cannot do is an error, and changes nothing:
 * a forward of two outputs; a forward using a tensor that requires grad
 * but is neither an argument nor a parameter, whose gradient the node
 * could not pass on (found in the backward, which then leaves every
 * gradient as it was) */
static void
test_module_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpModuleConfig) config = hp_module_config_new ();
  g_autoptr(HpTensor) outside = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3), 1, TRUE);
  g_autoptr(HpTensor) constant = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3), 2, FALSE);
  g_autoptr(HpTensor) weight = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3), 3, TRUE);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3), 4, TRUE);
  g_autoptr(HpFunctionModule) leaky = hp_function_module_new (config, NULL, scale_forward,
                                                              outside, NULL);
  g_autoptr(HpFunctionModule) sealed = hp_function_module_new (config, NULL, scale_forward,
                                                               constant, NULL);
  g_autoptr(HpFunctionModule) twice = hp_function_module_new (config, NULL, twice_forward,
                                                              NULL, NULL);
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autoptr(GPtrArray) outputs = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpTensor) expected = NULL;

  g_ptr_array_add (args, x);
  g_assert_true (hp_module_register_parameter (HP_MODULE (leaky), "weight", weight, &error));
  g_assert_true (hp_module_register_parameter (HP_MODULE (sealed), "weight", weight, &error));
  g_assert_no_error (error);

  outputs = _hp_module_call_checkpointed (HP_MODULE (twice), args, &error);
  hp_test_assert_error (outputs, &error, HP_ERROR_NOT_SUPPORTED,
                        "HpFunctionModule: activation checkpointing needs a forward that returns "
                        "one floating-point tensor");

  outputs = _hp_module_call_checkpointed (HP_MODULE (leaky), args, &error);
  g_assert_no_error (error);
  loss = hp_tensor_sum_all (g_ptr_array_index (outputs, 0), &error);
  g_assert_no_error (error);
  g_assert_false (hp_tensor_backward (loss, NULL, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_STATE);
  g_assert_nonnull (strstr (error->message, "HpFunctionModule: the graph reaches"));
  g_assert_nonnull (strstr (error->message, "neither an input nor a parameter"));
  g_clear_error (&error);
  g_assert_null (hp_tensor_get_grad (weight));
  g_assert_null (hp_tensor_get_grad (x));
  g_assert_null (hp_tensor_get_grad (outside));

  /* the same forward on a constant: the gradients of x * weight */
  g_clear_pointer (&outputs, g_ptr_array_unref);
  g_clear_object (&loss);
  outputs = _hp_module_call_checkpointed (HP_MODULE (sealed), args, &error);
  g_assert_no_error (error);
  loss = hp_tensor_sum_all (g_ptr_array_index (outputs, 0), &error);
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);
  hp_test_assert_identical (hp_tensor_get_grad (weight), x);
  hp_test_assert_identical (hp_tensor_get_grad (x), weight);
}

/* The fields: from JSON by name, and the bad values each an error */
static void
test_config (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = NULL;
  g_autoptr(HpConfig) bad = NULL;
  g_autoptr(HpDecoderConfig) every = hp_decoder_config_new ();

  config = hp_config_new_from_json (HP_TYPE_DECODER_CONFIG,
                                    "{\"n-layers\": 4, \"activation-checkpointing\": \"every-k\", "
                                    "\"ac-every\": 4}", &error);
  g_assert_no_error (error);
  g_assert_cmpint (hp_decoder_config_get_activation_checkpointing (HP_DECODER_CONFIG (config)), ==,
                   HP_ACTIVATION_CHECKPOINTING_EVERY_K);
  g_assert_cmpint (hp_decoder_config_get_ac_every (HP_DECODER_CONFIG (config)), ==, 4);
  g_assert_true (hp_config_validate (config, &error));
  g_assert_no_error (error);
  hp_test_assert_path (config, "activation-checkpointing", "every-k");

  bad = hp_config_new_from_json (HP_TYPE_DECODER_CONFIG,
                                 "{\"activation-checkpointing\": \"sometimes\"}", &error);
  hp_test_assert_error (bad, &error, HP_ERROR_CONFIG, "activation-checkpointing");
  bad = hp_config_new_from_json (HP_TYPE_DECODER_CONFIG, "{\"ac-every\": 0}", &error);
  hp_test_assert_error (bad, &error, HP_ERROR_CONFIG, "ac-every");

  /* every-k with a k past the last layer would checkpoint nothing */
  g_object_set (every, "n-layers", 2, "activation-checkpointing", HP_ACTIVATION_CHECKPOINTING_EVERY_K,
                "ac-every", 3, NULL);
  g_assert_false (hp_config_validate (HP_CONFIG (every), &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_assert_cmpstr (error->message, ==,
                   "ac-every: 3 is more than n-layers 2, so activation-checkpointing every-k "
                   "would checkpoint no block");
  g_clear_error (&error);
  g_assert_null (hp_config_build (HP_CONFIG (every), &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_CONFIG);
  g_clear_error (&error);
  /* the same k is fine for full, which does not read it */
  hp_decoder_config_set_activation_checkpointing (every, HP_ACTIVATION_CHECKPOINTING_FULL);
  g_assert_true (hp_config_validate (HP_CONFIG (every), &error));
  g_assert_no_error (error);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  static const Case cases[] = {
    { HP_DTYPE_FLOAT64, HP_ACTIVATION_CHECKPOINTING_FULL, 2, FALSE },
    { HP_DTYPE_FLOAT32, HP_ACTIVATION_CHECKPOINTING_FULL, 2, FALSE },
    { HP_DTYPE_FLOAT64, HP_ACTIVATION_CHECKPOINTING_EVERY_K, 2, FALSE },
    { HP_DTYPE_FLOAT32, HP_ACTIVATION_CHECKPOINTING_EVERY_K, 2, FALSE },
    { HP_DTYPE_FLOAT64, HP_ACTIVATION_CHECKPOINTING_FULL, 2, TRUE },
    { HP_DTYPE_FLOAT32, HP_ACTIVATION_CHECKPOINTING_EVERY_K, 3, TRUE },
    { HP_DTYPE_FLOAT64, HP_ACTIVATION_CHECKPOINTING_FULL, 2, FALSE, TRUE },
  };
  static const gchar *suffixes[] = {
    "full/float64", "full/float32", "every-2/float64", "every-2/float32",
    "full/float64/sequence-parallel", "every-3/float32/sequence-parallel",
    "full/float64/tied",
  };

  hp_test_init (&argc, &argv);
  g_assert_true (hp_init (&error));
  world_size = hp_get_world_size ();

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree gchar *one = g_strdup_printf ("/activation-checkpointing/one-rank/%s", suffixes[i]);
      g_autofree gchar *tp = g_strdup_printf ("/activation-checkpointing/tp/%s", suffixes[i]);
      g_autofree gchar *dp_tp = g_strdup_printf ("/activation-checkpointing/dp-tp/%s", suffixes[i]);

      if (!cases[i].sequence_parallel)
        g_test_add_data_func (one, &cases[i], test_one_rank);
      g_test_add_data_func (tp, &cases[i], test_tensor_parallel);
      if (!cases[i].sequence_parallel)
        g_test_add_data_func (dp_tp, &cases[i], test_data_and_tensor_parallel);
    }
  g_test_add_func ("/activation-checkpointing/no-grad", test_no_grad);
  g_test_add_func ("/activation-checkpointing/config", test_config);
  g_test_add_func ("/activation-checkpointing/module-errors", test_module_errors);

  return g_test_run ();
}
