/* test-generator.c: greedy and seeded decoding with and without the
 * key/value cache, on one rank and tensor parallel over every rank
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi): the tensor-parallel
 * decoder's tokens are those of the same decoder on one rank.
 */

#include "hp-test-utils.h"

#define VOCAB 23
#define NEW_TOKENS 12

static const gint64 prompt[] = { 3, 17, 5, 9, 0 };

/* A float64 decoder whose heads split over @tp ranks, laid out over
 * every rank when @parallel */
static HpDecoder *
build_decoder (gboolean parallel)
{
  g_autoptr(GError) error = NULL;
  gint tp = hp_get_world_size ();
  g_autoptr(HpParallelDims) dims = hp_parallel_dims_new ();
  g_autoptr(HpParallelDims) resolved = NULL;
  g_autoptr(HpDecoderConfig) config = g_object_new (HP_TYPE_DECODER_CONFIG,
                                                    "dim", 8 * tp, "n-layers", 2,
                                                    "n-heads", 2 * tp, "n-kv-heads", tp,
                                                    "vocab-size", VOCAB, "ffn-hidden", 16,
                                                    "max-seq-len", 24,
                                                    "dtype", HP_DTYPE_FLOAT64, NULL);
  g_autoptr(GObject) model = NULL;

  g_object_set (dims, "dp-replicate", 1, "dp-shard", 1, "tp", parallel ? tp : 1, NULL);
  resolved = hp_parallel_dims_resolve (dims, parallel ? tp : 1, &error);
  g_assert_no_error (error);
  g_assert_true (hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config),
                                                          HP_CONFIG (resolved), &error));
  model = hp_config_build (HP_CONFIG (config), &error);
  g_assert_no_error (error);
  if (parallel && tp > 1)
    {
      g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();

      g_assert_true (hp_module_parallelize (HP_MODULE (model), mesh, &error));
      g_assert_no_error (error);
    }
  g_assert_true (hp_base_model_init_weights (HP_BASE_MODEL (model), 11, &error));
  g_assert_no_error (error);
  return HP_DECODER (g_steal_pointer (&model));
}

static gint64 *
generate (HpDecoder   *decoder,
          HpGenerator *generator,
          gboolean     use_cache,
          gsize       *n_out)
{
  g_autoptr(GError) error = NULL;
  gint64 *tokens;

  g_object_set (generator, "use-cache", use_cache, NULL);
  tokens = hp_generator_generate (generator, decoder, prompt, G_N_ELEMENTS (prompt), n_out,
                                  &error);
  g_assert_no_error (error);
  return tokens;
}

static void
assert_same_tokens (const gint64 *a,
                    gsize         n_a,
                    const gint64 *b,
                    gsize         n_b)
{
  g_assert_cmpmem (a, n_a * sizeof (gint64), b, n_b * sizeof (gint64));
}

/* The greedy tokens by hand: the plain forward of the whole sequence,
 * and the largest logit of its last position */
static gint64 *
greedy_by_hand (HpDecoder *decoder)
{
  g_autoptr(GError) error = NULL;
  gint64 *tokens = g_new (gint64, G_N_ELEMENTS (prompt) + NEW_TOKENS);
  gsize n = G_N_ELEMENTS (prompt);

  memcpy (tokens, prompt, sizeof prompt);
  for (; n < G_N_ELEMENTS (prompt) + NEW_TOKENS; n++)
    {
      g_autoptr(HpTensor) ids = hp_test_tensor_ids (tokens, n, HP_TEST_SHAPE (1, (gint64) n));
      g_autoptr(HpTensor) logits = hp_module_call1 (HP_MODULE (decoder), ids, &error);
      g_autofree gdouble *values = NULL;
      gsize n_values;
      gint64 best = 0;

      g_assert_no_error (error);
      values = hp_tensor_to_float64_array (logits, &n_values);
      g_assert_cmpuint (n_values, ==, n * VOCAB);
      for (gint64 v = 1; v < VOCAB; v++)
        if (values[(n - 1) * VOCAB + v] > values[(n - 1) * VOCAB + best])
          best = v;
      tokens[n] = best;
    }
  memmove (tokens, tokens + G_N_ELEMENTS (prompt), NEW_TOKENS * sizeof (gint64));
  return tokens;
}

typedef struct
{
  gdouble temperature;
  guint top_k;
  gdouble top_p;
} Sampling;

/* Greedy and seeded sampling: the same tokens with and without the
 * cache, and tensor parallel */
static void
test_same_tokens (gconstpointer data)
{
  const Sampling *sampling = data;
  g_autoptr(HpDecoder) one = build_decoder (FALSE);
  g_autoptr(HpDecoder) parallel = build_decoder (TRUE);
  g_autoptr(HpGenerator) generator = hp_generator_new ();
  g_autofree gint64 *cached = NULL;
  g_autofree gint64 *uncached = NULL;
  g_autofree gint64 *tp_cached = NULL;
  g_autofree gint64 *tp_uncached = NULL;
  gsize n_cached, n_uncached, n_tp_cached, n_tp_uncached;

  g_object_set (generator, "max-new-tokens", NEW_TOKENS, "temperature", sampling->temperature,
                "top-k", sampling->top_k, "top-p", sampling->top_p, "seed", (guint64) 42, NULL);
  cached = generate (one, generator, TRUE, &n_cached);
  uncached = generate (one, generator, FALSE, &n_uncached);
  tp_cached = generate (parallel, generator, TRUE, &n_tp_cached);
  tp_uncached = generate (parallel, generator, FALSE, &n_tp_uncached);

  g_assert_cmpuint (n_cached, ==, NEW_TOKENS);
  for (gsize i = 0; i < n_cached; i++)
    g_assert_true (cached[i] >= 0 && cached[i] < VOCAB);
  assert_same_tokens (uncached, n_uncached, cached, n_cached);
  assert_same_tokens (tp_cached, n_tp_cached, cached, n_cached);
  assert_same_tokens (tp_uncached, n_tp_uncached, cached, n_cached);

  if (sampling->temperature == 0.0 || sampling->top_k == 1)
    {
      g_autofree gint64 *expected = greedy_by_hand (one);

      assert_same_tokens (cached, n_cached, expected, NEW_TOKENS);
    }
  else
    {
      g_autofree gint64 *greedy = NULL;
      g_autofree gint64 *other_seed = NULL;
      gsize n_greedy, n_other;

      /* sampling is not greedy decoding, and the seed matters */
      g_object_set (generator, "temperature", 0.0, NULL);
      greedy = generate (one, generator, TRUE, &n_greedy);
      g_object_set (generator, "temperature", sampling->temperature, "seed", (guint64) 7, NULL);
      other_seed = generate (one, generator, TRUE, &n_other);
      g_assert_true (memcmp (greedy, cached, NEW_TOKENS * sizeof (gint64)) != 0);
      g_assert_true (memcmp (other_seed, cached, NEW_TOKENS * sizeof (gint64)) != 0);
    }
}

/* Tokens drawn only among the top k, or the nucleus: with top-k 2 each
 * token is one of the two most likely after its sequence */
static void
test_top_k_candidates (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoder) one = build_decoder (FALSE);
  g_autoptr(HpGenerator) generator = hp_generator_new ();
  g_autofree gint64 *tokens = NULL;
  gint64 sequence[G_N_ELEMENTS (prompt) + NEW_TOKENS];
  gsize n_out;

  g_object_set (generator, "max-new-tokens", NEW_TOKENS, "temperature", 5.0, "top-k", 2,
                "seed", (guint64) 1, NULL);
  tokens = generate (one, generator, TRUE, &n_out);
  memcpy (sequence, prompt, sizeof prompt);
  memcpy (sequence + G_N_ELEMENTS (prompt), tokens, n_out * sizeof (gint64));
  for (gsize i = 0; i < n_out; i++)
    {
      gsize n = G_N_ELEMENTS (prompt) + i;
      g_autoptr(HpTensor) ids = hp_test_tensor_ids (sequence, n, HP_TEST_SHAPE (1, (gint64) n));
      g_autoptr(HpTensor) logits = hp_module_call1 (HP_MODULE (one), ids, &error);
      g_autofree gdouble *values = NULL;
      gsize n_values;
      gint larger = 0;

      g_assert_no_error (error);
      values = hp_tensor_to_float64_array (logits, &n_values);
      for (gint64 v = 0; v < VOCAB; v++)
        larger += values[(n - 1) * VOCAB + v] > values[(n - 1) * VOCAB + tokens[i]];
      g_assert_cmpint (larger, <, 2);
    }
}

static void
test_stop_id (void)
{
  g_autoptr(HpDecoder) one = build_decoder (FALSE);
  g_autoptr(HpGenerator) generator = hp_generator_new ();
  g_autofree gint64 *all = NULL;
  g_autofree gint64 *stopped = NULL;
  gsize n_all, n_stopped, first = 0;
  gint64 stop_id;

  g_object_set (generator, "max-new-tokens", NEW_TOKENS, NULL);
  all = generate (one, generator, TRUE, &n_all);
  stop_id = all[3];
  while (all[first] != stop_id)
    first++;
  g_object_set (generator, "stop-id", stop_id, NULL);
  stopped = generate (one, generator, TRUE, &n_stopped);
  assert_same_tokens (stopped, n_stopped, all, first + 1);

  g_object_set (generator, "max-new-tokens", 0, NULL);
  g_free (stopped);
  stopped = generate (one, generator, TRUE, &n_stopped);
  g_assert_cmpuint (n_stopped, ==, 0);
}

static void
test_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoder) one = build_decoder (FALSE);
  g_autoptr(HpGenerator) generator = hp_generator_new ();
  gsize n_out = 99;

  hp_test_assert_error (hp_generator_generate (generator, one, prompt, 0, &n_out, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "the prompt is empty");
  g_clear_error (&error);
  g_assert_cmpuint (n_out, ==, 0);
  hp_test_assert_error (hp_generator_generate (generator, one, (const gint64[]) { 1, VOCAB }, 2,
                                               &n_out, &error),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "prompt token 1 is 23, outside the vocabulary [0, 23)");
  g_clear_error (&error);
  hp_test_assert_error (hp_generator_generate (generator, one, (const gint64[]) { -1 }, 1,
                                               &n_out, &error),
                        &error, HP_ERROR_INVALID_ARGUMENT, "prompt token 0 is -1");
  g_clear_error (&error);
  g_object_set (generator, "max-new-tokens", 21, NULL);
  hp_test_assert_error (hp_generator_generate (generator, one, prompt, G_N_ELEMENTS (prompt),
                                               &n_out, &error),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "a prompt of 5 tokens and 21 new ones need 25 positions, but the decoder "
                        "has max-seq-len 24");
  g_clear_error (&error);
  /* 24 positions fit */
  g_object_set (generator, "max-new-tokens", 20, NULL);
  g_free (hp_generator_generate (generator, one, prompt, G_N_ELEMENTS (prompt), &n_out, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n_out, ==, 20);
}

int
main (int   argc,
      char *argv[])
{
  static const Sampling samplings[] = {
    { 0.0, 0, 1.0 },
    { 1.0, 1, 1.0 },
    { 1.5, 0, 1.0 },
    { 1.5, 6, 1.0 },
    { 1.5, 0, 0.8 },
    { 2.0, 8, 0.9 },
  };
  static const gchar *names[] = {
    "/generator/greedy",
    "/generator/top-k-1-is-greedy",
    "/generator/sample",
    "/generator/sample/top-k",
    "/generator/sample/top-p",
    "/generator/sample/top-k+top-p",
  };

  hp_test_init_world (&argc, &argv);
  for (guint i = 0; i < G_N_ELEMENTS (samplings); i++)
    g_test_add_data_func (names[i], &samplings[i], test_same_tokens);
  g_test_add_func ("/generator/top-k-candidates", test_top_k_candidates);
  g_test_add_func ("/generator/stop-id", test_stop_id);
  g_test_add_func ("/generator/errors", test_errors);
  return g_test_run ();
}
