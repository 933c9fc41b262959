/* bench/generate.c: the cost of a new token at a given context, with and
 * without the key/value cache
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A measurement, not a test: it prints one line per figure and always
 * exits 0. Run it on one rank or under mpirun, where every rank is one
 * tensor-parallel rank of the decoder (see README.md).
 *
 * The decoder: 4 layers, dim 256, 8 heads (2 key/value heads), vocab
 * 512, float32, random weights. For each context C (64, 256, 1024) the
 * prompt is C ids; then
 *  - with the cache: the prompt goes through
 *    hp_decoder_forward_with_cache() once (not timed), then each new
 *    token is one more position through the cache;
 *  - without: each new token runs the plain forward on the whole
 *    sequence so far, as a decoder without a cache must.
 * The figure is new tokens per second (the median of --repeats runs of
 * --tokens tokens), and the cached / uncached ratio. A new token reads
 * the logits of its last position whole on every rank, as
 * HpGenerator does. Target: the cached cost per token grows far less
 * from C = 64 to C = 1024 than the uncached one (whose forward grows
 * linearly in C, and its attention quadratically).
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <hp-protocols/hp-protocols.h>
#include <hp-protocols/hp-mpi.h>

static gint n_tokens = 8;
static gint n_repeats = 3;

static int
compare_doubles (const void *a,
                 const void *b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return (x > y) - (x < y);
}

static HpDecoder *
build (GError **error)
{
  gint tp = hp_get_world_size ();
  g_autoptr(HpParallelDims) dims = hp_parallel_dims_new ();
  g_autoptr(HpParallelDims) resolved = NULL;
  g_autoptr(HpDecoderConfig) config = g_object_new (HP_TYPE_DECODER_CONFIG,
                                                    "dim", 256, "n-layers", 4, "n-heads", 8,
                                                    "n-kv-heads", 2, "vocab-size", 512,
                                                    "max-seq-len", 1024 + 64,
                                                    "dtype", HP_DTYPE_FLOAT32, NULL);
  g_autoptr(GObject) model = NULL;

  g_object_set (dims, "tp", tp, "dp-replicate", 1, "dp-shard", 1, NULL);
  resolved = hp_parallel_dims_resolve (dims, tp, error);
  if (resolved == NULL ||
      !hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config),
                                                HP_CONFIG (resolved), error) ||
      !(model = hp_config_build (HP_CONFIG (config), error)))
    return NULL;
  if (tp > 1)
    {
      g_autoptr(HpDeviceMesh) mesh = hp_device_mesh_new ((gint[]) { tp }, 1,
                                                         (const gchar *[]) { "tp", NULL }, error);

      if (mesh == NULL || !hp_module_parallelize (HP_MODULE (model), mesh, error))
        return NULL;
    }
  if (!hp_base_model_init_weights (HP_BASE_MODEL (model), 1, error))
    return NULL;
  return HP_DECODER (g_steal_pointer (&model));
}

/* The last position's logits, whole on every rank */
static gboolean
read_last (HpTensor  *logits,
           GError   **error)
{
  const gint64 *shape = hp_tensor_get_shape (logits, NULL);
  g_autoptr(HpTensor) last = hp_tensor_narrow (logits, 1, shape[1] - 1, 1, error);
  g_autoptr(HpTensor) whole = NULL;

  if (last == NULL)
    return FALSE;
  whole = HP_IS_DTENSOR (last) ? hp_dtensor_full_tensor (HP_DTENSOR (last), error)
                               : g_object_ref (last);
  return whole != NULL;
}

static HpTensor *
ids_tensor (const gint64 *ids,
            gsize         n,
            GError      **error)
{
  return hp_tensor_new_from_int64_data (ids, n, (gint64[]) { 1, (gint64) n }, 2, error);
}

/* Seconds for n_tokens new tokens after a context of @context ids */
static gdouble
time_tokens (HpDecoder  *decoder,
             gint        context,
             gboolean    cached,
             GError    **error)
{
  g_autofree gint64 *ids = g_new (gint64, context + n_tokens);
  g_autoptr(HpKVCache) cache = NULL;
  gint64 start;

  for (gint i = 0; i < context + n_tokens; i++)
    ids[i] = (i * 37 + 11) % 512;
  if (cached)
    {
      g_autoptr(HpTensor) prompt = ids_tensor (ids, context, error);
      g_autoptr(HpTensor) logits = NULL;

      cache = hp_kv_cache_new (4, 1, context + n_tokens);
      if (prompt == NULL ||
          !(logits = hp_decoder_forward_with_cache (decoder, prompt, cache, error)))
        return NAN;
    }
  MPI_Barrier (MPI_COMM_WORLD);
  start = g_get_monotonic_time ();
  for (gint t = 0; t < n_tokens; t++)
    {
      gsize n = context + t + 1;
      g_autoptr(HpTensor) step = cached ? ids_tensor (ids + n - 1, 1, error)
                                        : ids_tensor (ids, n, error);
      g_autoptr(HpTensor) logits = NULL;

      if (step == NULL)
        return NAN;
      logits = cached ? hp_decoder_forward_with_cache (decoder, step, cache, error)
                      : hp_module_call1 (HP_MODULE (decoder), step, error);
      if (logits == NULL || !read_last (logits, error))
        return NAN;
    }
  return (g_get_monotonic_time () - start) / 1e6;
}

static gdouble
median_tokens_per_second (HpDecoder  *decoder,
                          gint        context,
                          gboolean    cached,
                          GError    **error)
{
  g_autofree gdouble *rates = g_new (gdouble, n_repeats);

  /* one run to warm the allocator and the caches up, not counted */
  if (isnan (time_tokens (decoder, context, cached, error)))
    return NAN;
  for (gint r = 0; r < n_repeats; r++)
    {
      gdouble seconds = time_tokens (decoder, context, cached, error);

      if (isnan (seconds))
        return NAN;
      rates[r] = n_tokens / seconds;
    }
  qsort (rates, n_repeats, sizeof (gdouble), compare_doubles);
  return rates[n_repeats / 2];
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoder) decoder = NULL;
  GOptionEntry entries[] = {
    { "tokens", 0, 0, G_OPTION_ARG_INT, &n_tokens, "New tokens per run (default 8)", "N" },
    { "repeats", 0, 0, G_OPTION_ARG_INT, &n_repeats, "Runs per figure, median (default 3)", "N" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) options = g_option_context_new ("- tokens/s with and without the KV cache");
  static const gint contexts[] = { 64, 256, 1024 };
  gdouble first_cached = NAN, first_uncached = NAN;
  gdouble growth_cached = NAN, growth_uncached = NAN;
  gboolean chatty;

  g_option_context_add_main_entries (options, entries, NULL);
  if (!hp_init (&error) || !g_option_context_parse (options, &argc, &argv, &error) ||
      n_tokens < 1 || n_repeats < 1 || !(decoder = build (&error)))
    {
      g_printerr ("bench-generate: %s\n", error != NULL ? error->message : "bad --tokens or --repeats");
      return EXIT_SUCCESS;
    }
  chatty = hp_get_world_rank () == 0;
  hp_grad_mode_set_enabled (FALSE);
  if (chatty)
    g_print ("bench-generate: %d rank(s), decoder dim 256, 4 layers, %d new tokens, median of %d\n",
             hp_get_world_size (), n_tokens, n_repeats);
  for (guint i = 0; i < G_N_ELEMENTS (contexts); i++)
    {
      gdouble cached = median_tokens_per_second (decoder, contexts[i], TRUE, &error);
      gdouble uncached = isnan (cached) ? NAN
                                        : median_tokens_per_second (decoder, contexts[i], FALSE, &error);

      if (isnan (uncached))
        {
          g_printerr ("bench-generate: %s\n", error->message);
          return EXIT_SUCCESS;
        }
      if (i == 0)
        {
          first_cached = cached;
          first_uncached = uncached;
        }
      growth_cached = first_cached / cached;
      growth_uncached = first_uncached / uncached;
      if (chatty)
        g_print ("context %4d: cache %8.1f tokens/s, no cache %8.1f tokens/s, ratio %6.1f; "
                 "cost per token x%.2f (cache) and x%.2f (no cache) of context 64\n",
                 contexts[i], cached, uncached, cached / uncached, growth_cached,
                 growth_uncached);
    }
  /* the target: from context 64 to 1024 the cached cost per token grows
   * by less than a quarter of the uncached one's growth */
  if (chatty)
    g_print ("%s: from context 64 to 1024 a cached token costs x%.2f, an uncached one x%.2f "
             "(target: below a quarter of it)\n",
             growth_cached < 0.25 * growth_uncached ? "PASS" : "FAIL", growth_cached,
             growth_uncached);
  return EXIT_SUCCESS;
}
