/* test-kv-cache.c: the decoder's cached forward against the plain one,
 * on one rank and tensor parallel over every rank
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi). A prompt fed whole, in
 * pieces or one token at a time through an HpKVCache gives the logits
 * of the plain forward of the whole prompt; the tensor-parallel model's
 * equal the one-rank model's.
 */

#include <math.h>

#include "hp-test-utils.h"

#define BATCH 2
#define LENGTH 9
#define VOCAB 11

typedef struct
{
  HpDType dtype;
  gboolean tensor_parallel;
  gboolean loss_parallel;
  gboolean local_map;
  gboolean sequence_parallel;
} Variant;

/* A small decoder whose heads split over @tp ranks */
static HpModule *
build_decoder (HpDType  dtype,
               gint     tp,
               gboolean sharded,
               gboolean loss_parallel,
               gboolean sequence_parallel)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParallelDims) dims = hp_parallel_dims_new ();
  g_autoptr(HpParallelDims) resolved = NULL;
  g_autoptr(HpDecoderConfig) config = g_object_new (HP_TYPE_DECODER_CONFIG,
                                                    "dim", 8 * tp,
                                                    "n-layers", 2,
                                                    "n-heads", 2 * tp,
                                                    "n-kv-heads", tp,
                                                    "vocab-size", VOCAB,
                                                    "ffn-hidden", 12,
                                                    "max-seq-len", 16,
                                                    "dtype", dtype,
                                                    "loss-parallel", loss_parallel,
                                                    "sequence-parallel", sequence_parallel,
                                                    NULL);
  GObject *model;

  if (sharded)
    {
      g_assert_true (hp_set_decoder_sharding_config (config, loss_parallel, sequence_parallel,
                                                     &error));
      g_assert_no_error (error);
    }
  g_object_set (dims, "dp-replicate", 1, "dp-shard", 1, "tp", sharded ? tp : 1, NULL);
  resolved = hp_parallel_dims_resolve (dims, sharded ? tp : 1, &error);
  g_assert_no_error (error);
  g_assert_true (hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config),
                                                          HP_CONFIG (resolved), &error));
  g_assert_no_error (error);
  model = hp_config_build (HP_CONFIG (config), &error);
  g_assert_no_error (error);
  return HP_MODULE (model);
}

static HpTensor *
prompt (void)
{
  gint64 ids[BATCH * LENGTH];

  for (gint i = 0; i < BATCH * LENGTH; i++)
    ids[i] = (i * 7 + 3) % VOCAB;
  return hp_test_tensor_ids (ids, BATCH * LENGTH, HP_TEST_SHAPE (BATCH, LENGTH));
}

static HpTensor *
whole (HpTensor *tensor)
{
  return HP_IS_DTENSOR (tensor) ? hp_test_full_tensor (tensor) : g_object_ref (tensor);
}

static HpTensor *
narrow (HpTensor *tensor,
        gint64    start,
        gint64    length)
{
  g_autoptr(GError) error = NULL;
  HpTensor *part = hp_tensor_narrow (tensor, 1, start, length, &error);

  g_assert_no_error (error);
  return part;
}

/* Feeds the prompt in pieces of the sizes @pieces (summing to LENGTH)
 * and checks each piece's logits against @expected, the whole prompt's */
static void
assert_pieces (HpModule     *model,
               HpTensor     *expected,
               const gint   *pieces,
               gdouble       rtol,
               gdouble       atol)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ids = prompt ();
  g_autoptr(HpKVCache) cache = hp_kv_cache_new (2, BATCH, LENGTH);
  gint64 start = 0;

  for (guint i = 0; start < LENGTH; start += pieces[i], i++)
    {
      g_autoptr(HpTensor) piece = narrow (ids, start, pieces[i]);
      g_autoptr(HpTensor) want = narrow (expected, start, pieces[i]);
      g_autoptr(HpTensor) logits = NULL;
      g_autoptr(HpTensor) got = NULL;

      logits = hp_decoder_forward_with_cache (HP_DECODER (model), piece, cache, &error);
      g_assert_no_error (error);
      got = whole (logits);
      hp_test_assert_close (got, want, rtol, atol);
      g_assert_false (hp_tensor_get_requires_grad (logits));
      g_assert_cmpint (hp_kv_cache_get_length (cache), ==, start + pieces[i]);
    }
  /* the decoders have as many key/value heads as ranks, of dim 4 */
  hp_test_assert_shape (hp_kv_cache_get_keys (cache, 1),
                        HP_TEST_SHAPE (BATCH, LENGTH, hp_get_world_size (), 4));
  if (HP_IS_DTENSOR (hp_kv_cache_get_keys (cache, 0)) && hp_get_world_size () > 1)
    {
      hp_test_assert_placements (hp_kv_cache_get_keys (cache, 0), "(S(2))");
      hp_test_assert_placements (hp_kv_cache_get_values (cache, 0), "(S(2))");
    }
  hp_kv_cache_reset (cache);
  g_assert_cmpint (hp_kv_cache_get_length (cache), ==, 0);
  g_assert_null (hp_kv_cache_get_keys (cache, 0));
}

static void
test_cached_forward (gconstpointer data)
{
  const Variant *variant = data;
  g_autoptr(GError) error = NULL;
  gint tp = hp_get_world_size ();
  g_autoptr(HpModule) reference = build_decoder (variant->dtype, tp, FALSE, FALSE, FALSE);
  g_autoptr(HpModule) model = NULL;
  g_autoptr(HpTensor) ids = prompt ();
  g_autoptr(HpTensor) expected = NULL;
  gdouble tol = variant->dtype == HP_DTYPE_FLOAT64 ? 1e-12 : 1e-5;
  static const gint whole_prompt[] = { LENGTH };
  static const gint pieces[] = { 4, 1, 3, 1 };
  static const gint tokens[] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };

  g_assert_true (hp_module_init_states (reference, 3, &error));
  g_assert_no_error (error);
  expected = hp_module_call1 (reference, ids, &error);
  g_assert_no_error (error);

  if (variant->tensor_parallel)
    {
      g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();

      model = build_decoder (variant->dtype, tp, TRUE, variant->loss_parallel,
                             variant->sequence_parallel);
      if (!variant->local_map)
        {
          HpModuleList *layers = HP_MODULE_LIST (hp_module_get_child (model, "layers"));

          for (guint i = 0; i < hp_module_list_get_length (layers); i++)
            hp_module_set_sharding_config (hp_module_get_child (hp_module_list_get (layers, i),
                                                                "attention.inner_attention"),
                                           NULL);
        }
      g_assert_true (hp_module_parallelize (model, mesh, &error));
      g_assert_no_error (error);
      g_assert_true (hp_module_init_states (model, 3, &error));
      g_assert_no_error (error);
    }
  else
    model = g_object_ref (reference);

  assert_pieces (model, expected, whole_prompt, tol, tol);
  assert_pieces (model, expected, pieces, tol, tol);
  assert_pieces (model, expected, tokens, tol, tol);
}

/* Bad input: an error, and the cache as it was */
static void
test_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpModule) model = build_decoder (HP_DTYPE_FLOAT32, 1, FALSE, FALSE, FALSE);
  g_autoptr(HpKVCache) cache = hp_kv_cache_new (2, BATCH, 6);
  g_autoptr(HpKVCache) one_layer = hp_kv_cache_new (1, BATCH, 6);
  g_autoptr(HpKVCache) long_cache = hp_kv_cache_new (2, BATCH, 64);
  g_autoptr(HpTensor) ids = prompt ();
  g_autoptr(HpTensor) first = narrow (ids, 0, 4);
  g_autoptr(HpTensor) rest = narrow (ids, 4, 3);
  g_autoptr(HpTensor) none = narrow (ids, 0, 0);
  g_autoptr(HpTensor) row = hp_tensor_narrow (first, 0, 0, 1, &error);
  g_autoptr(HpTensor) floats = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 2),
                                               HP_TEST_SHAPE (1, 2));
  g_autoptr(HpTensor) flat = hp_test_tensor_ids ((const gint64[]) { 1, 2 }, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) logits = NULL;
  g_autoptr(HpTensor) fourteen = NULL;
  HpTensor *keys;

  g_assert_no_error (error);
  g_assert_cmpuint (hp_kv_cache_get_n_layers (cache), ==, 2);
  g_assert_cmpint (hp_kv_cache_get_batch_size (cache), ==, BATCH);
  g_assert_cmpint (hp_kv_cache_get_capacity (cache), ==, 6);
  logits = hp_decoder_forward_with_cache (HP_DECODER (model), first, cache, &error);
  g_assert_no_error (error);
  keys = hp_kv_cache_get_keys (cache, 0);

  /* full: 4 + 3 > 6 */
  hp_test_assert_error (hp_decoder_forward_with_cache (HP_DECODER (model), rest, cache, &error),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "3 new positions do not fit in the cache (4 of 6 positions used)");
  g_clear_error (&error);
  hp_test_assert_error (hp_decoder_forward_with_cache (HP_DECODER (model), row, cache, &error),
                        &error, HP_ERROR_SHAPE, "the cache holds a batch of 2");
  g_clear_error (&error);
  hp_test_assert_error (hp_decoder_forward_with_cache (HP_DECODER (model), floats, cache, &error),
                        &error, HP_ERROR_INVALID_ARGUMENT, "but token ids are int64");
  g_clear_error (&error);
  hp_test_assert_error (hp_decoder_forward_with_cache (HP_DECODER (model), flat, cache, &error),
                        &error, HP_ERROR_SHAPE, "but need [batch, new positions]");
  g_clear_error (&error);
  hp_test_assert_error (hp_decoder_forward_with_cache (HP_DECODER (model), none, cache, &error),
                        &error, HP_ERROR_SHAPE, "at least one new position");
  g_clear_error (&error);
  hp_test_assert_error (hp_decoder_forward_with_cache (HP_DECODER (model), first, one_layer,
                                                       &error),
                        &error, HP_ERROR_INVALID_ARGUMENT, "the cache has 1 layers, but the decoder 2");
  g_clear_error (&error);
  g_assert_cmpint (hp_kv_cache_get_length (cache), ==, 4);
  g_assert_true (hp_kv_cache_get_keys (cache, 0) == keys);

  /* past the rotary tables (max-seq-len 16): fails in the forward,
   * after some layers ran, and still leaves the cache alone */
  {
    gint64 many[BATCH * 14] = { 0 };

    fourteen = hp_test_tensor_ids (many, BATCH * 14, HP_TEST_SHAPE (BATCH, 14));
  }
  g_clear_object (&logits);
  logits = hp_decoder_forward_with_cache (HP_DECODER (model), fourteen, long_cache, &error);
  g_assert_no_error (error);
  hp_test_assert_error (hp_decoder_forward_with_cache (HP_DECODER (model), first, long_cache,
                                                       &error),
                        &error, HP_ERROR_SHAPE, "4 positions after 14 cached ones exceed max-seq-len 16");
  g_clear_error (&error);
  g_assert_cmpint (hp_kv_cache_get_length (long_cache), ==, 14);
  hp_test_assert_shape (hp_kv_cache_get_keys (long_cache, 1), HP_TEST_SHAPE (BATCH, 14, 1, 4));

  /* the plain forward afterwards is the plain one again */
  {
    g_autoptr(HpModule) fresh = build_decoder (HP_DTYPE_FLOAT32, 1, FALSE, FALSE, FALSE);
    g_autoptr(HpTensor) a = NULL;
    g_autoptr(HpTensor) b = NULL;

    g_assert_true (hp_module_init_states (fresh, 0, &error));
    g_assert_true (hp_module_init_states (model, 0, &error));
    a = hp_module_call1 (model, ids, &error);
    g_assert_no_error (error);
    b = hp_module_call1 (fresh, ids, &error);
    g_assert_no_error (error);
    hp_test_assert_identical (a, b);
  }
}

int
main (int   argc,
      char *argv[])
{
  static const Variant variants[] = {
    { HP_DTYPE_FLOAT64, FALSE, FALSE, TRUE },
    { HP_DTYPE_FLOAT32, FALSE, FALSE, TRUE },
    { HP_DTYPE_FLOAT64, TRUE, FALSE, TRUE },
    { HP_DTYPE_FLOAT32, TRUE, FALSE, TRUE },
    { HP_DTYPE_FLOAT64, TRUE, TRUE, TRUE },
    { HP_DTYPE_FLOAT64, TRUE, FALSE, FALSE },
    { HP_DTYPE_FLOAT64, TRUE, TRUE, TRUE, TRUE },
  };
  static const gchar *names[] = {
    "/kv-cache/one-rank/f64",
    "/kv-cache/one-rank/f32",
    "/kv-cache/tp/f64",
    "/kv-cache/tp/f32",
    "/kv-cache/tp/loss-parallel",
    "/kv-cache/tp/without-local-map",
    "/kv-cache/tp/loss-parallel+sequence-parallel",
  };

  hp_test_init_world (&argc, &argv);
  for (guint i = 0; i < G_N_ELEMENTS (variants); i++)
    g_test_add_data_func (names[i], &variants[i], test_cached_forward);
  g_test_add_func ("/kv-cache/errors", test_errors);
  return g_test_run ();
}
