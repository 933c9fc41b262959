/* hp-generator.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each new token is picked from the logits of the last position, which
 * every rank holds whole (a tensor-parallel decoder's are gathered), so
 * that argmax and the counter-based draws give every rank the same
 * token without a broadcast of their own. The draw of the token at
 * position p uses the counter p: with and without the cache, and on
 * any number of ranks, the same logits give the same token.
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "hp-dtensor.h"
#include "hp-error.h"
#include "hp-generator.h"
#include "hp-grad-mode.h"
#include "hp-kv-cache.h"
#include "hp-module-list.h"
#include "hp-tensor-ops.h"

/**
 * HpGenerator:
 *
 * Continues a prompt with a [class@Hp.Decoder], one token at a time, as
 * its properties say: at most [property@Hp.Generator:max-new-tokens]
 * tokens, stopping after [property@Hp.Generator:stop-id] when that is
 * set.
 *
 * With [property@Hp.Generator:temperature] 0 each token is the most
 * likely one ([method@Hp.Tensor.argmax]; of equal logits the lowest
 * id). Otherwise the logits are divided by the temperature, cut to the
 * [property@Hp.Generator:top-k] most likely tokens ([method@Hp.Tensor.topk])
 * and to the smallest set of the most likely ones whose probabilities
 * reach [property@Hp.Generator:top-p] ([method@Hp.Tensor.cumsum] of the
 * sorted probabilities), and the token is drawn with
 * [method@Hp.Tensor.sample_from_probabilities] under
 * [property@Hp.Generator:seed], the counter being the token's position:
 * the same seed gives the same tokens in every run.
 *
 * With [property@Hp.Generator:use-cache] (the default) the prompt goes
 * through the decoder once and each further token costs one position
 * ([method@Hp.Decoder.forward_with_cache]); without, the whole sequence
 * is run again for every token. Both give the same tokens. A
 * tensor-parallel decoder gives the tokens of the decoder on one rank;
 * every rank of its mesh calls [method@Hp.Generator.generate] alike.
 *
 * Since: 1.0
 */

struct _HpGenerator
{
  GObject parent_instance;

  guint max_new_tokens;
  gdouble temperature;
  guint top_k;
  gdouble top_p;
  guint64 seed;
  gboolean use_cache;
  gint64 stop_id;
};

G_DEFINE_FINAL_TYPE (HpGenerator, hp_generator, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_MAX_NEW_TOKENS,
  PROP_TEMPERATURE,
  PROP_TOP_K,
  PROP_TOP_P,
  PROP_SEED,
  PROP_USE_CACHE,
  PROP_STOP_ID,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_generator_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  HpGenerator *self = HP_GENERATOR (object);

  switch (prop_id)
    {
    case PROP_MAX_NEW_TOKENS:
      g_value_set_uint (value, self->max_new_tokens);
      break;
    case PROP_TEMPERATURE:
      g_value_set_double (value, self->temperature);
      break;
    case PROP_TOP_K:
      g_value_set_uint (value, self->top_k);
      break;
    case PROP_TOP_P:
      g_value_set_double (value, self->top_p);
      break;
    case PROP_SEED:
      g_value_set_uint64 (value, self->seed);
      break;
    case PROP_USE_CACHE:
      g_value_set_boolean (value, self->use_cache);
      break;
    case PROP_STOP_ID:
      g_value_set_int64 (value, self->stop_id);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_generator_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  HpGenerator *self = HP_GENERATOR (object);

  switch (prop_id)
    {
    case PROP_MAX_NEW_TOKENS:
      self->max_new_tokens = g_value_get_uint (value);
      break;
    case PROP_TEMPERATURE:
      self->temperature = g_value_get_double (value);
      break;
    case PROP_TOP_K:
      self->top_k = g_value_get_uint (value);
      break;
    case PROP_TOP_P:
      self->top_p = g_value_get_double (value);
      break;
    case PROP_SEED:
      self->seed = g_value_get_uint64 (value);
      break;
    case PROP_USE_CACHE:
      self->use_cache = g_value_get_boolean (value);
      break;
    case PROP_STOP_ID:
      self->stop_id = g_value_get_int64 (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_generator_class_init (HpGeneratorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_EXPLICIT_NOTIFY |
                      G_PARAM_STATIC_STRINGS;

  object_class->get_property = hp_generator_get_property;
  object_class->set_property = hp_generator_set_property;

  /**
   * HpGenerator:max-new-tokens:
   *
   * The most tokens to add to the prompt.
   *
   * Since: 1.0
   */
  properties[PROP_MAX_NEW_TOKENS] =
    g_param_spec_uint ("max-new-tokens", NULL, NULL, 0, G_MAXINT, 16, flags);
  /**
   * HpGenerator:temperature:
   *
   * The divisor of the logits before sampling; 0 (the default) picks
   * the most likely token every time (greedy decoding).
   *
   * Since: 1.0
   */
  properties[PROP_TEMPERATURE] =
    g_param_spec_double ("temperature", NULL, NULL, 0.0, G_MAXDOUBLE, 0.0, flags);
  /**
   * HpGenerator:top-k:
   *
   * Sample among the k most likely tokens only; 0 (the default): among
   * all. 1 is greedy decoding.
   *
   * Since: 1.0
   */
  properties[PROP_TOP_K] = g_param_spec_uint ("top-k", NULL, NULL, 0, G_MAXINT, 0, flags);
  /**
   * HpGenerator:top-p:
   *
   * Sample among the smallest set of the most likely tokens whose
   * probabilities sum to at least p (nucleus sampling); 1 (the default):
   * among all.
   *
   * Since: 1.0
   */
  properties[PROP_TOP_P] =
    g_param_spec_double ("top-p", NULL, NULL, G_MINDOUBLE, 1.0, 1.0, flags);
  /**
   * HpGenerator:seed:
   *
   * The seed of the draws.
   *
   * Since: 1.0
   */
  properties[PROP_SEED] = g_param_spec_uint64 ("seed", NULL, NULL, 0, G_MAXUINT64, 0, flags);
  /**
   * HpGenerator:use-cache:
   *
   * Whether the keys and values of earlier positions are kept in an
   * [class@Hp.KVCache], so that each new token costs one position.
   *
   * Since: 1.0
   */
  properties[PROP_USE_CACHE] = g_param_spec_boolean ("use-cache", NULL, NULL, TRUE, flags);
  /**
   * HpGenerator:stop-id:
   *
   * A token after which generation stops (it is returned too), such
   * as an end-of-text id; -1 (the default): none.
   *
   * Since: 1.0
   */
  properties[PROP_STOP_ID] =
    g_param_spec_int64 ("stop-id", NULL, NULL, -1, G_MAXINT64, -1, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_generator_init (HpGenerator *self)
{
}

/**
 * hp_generator_new:
 *
 * Creates a generator with the default properties: 16 new tokens,
 * greedy, with the cache.
 *
 * Returns: (transfer full): a new [class@Hp.Generator]
 *
 * Since: 1.0
 */
HpGenerator *
hp_generator_new (void)
{
  return g_object_new (HP_TYPE_GENERATOR, NULL);
}

/* The logits of the last position of @logits [1, S, V], whole, as [V] */
static HpTensor *
last_logits (HpTensor  *logits,
             GError   **error)
{
  const gint64 *shape = hp_tensor_get_shape (logits, NULL);
  g_autoptr(HpTensor) last = hp_tensor_narrow (logits, 1, shape[1] - 1, 1, error);
  g_autoptr(HpTensor) whole = NULL;

  if (last == NULL)
    return NULL;
  whole = HP_IS_DTENSOR (last) ? hp_dtensor_full_tensor (HP_DTENSOR (last), error)
                               : g_object_ref (last);
  if (whole == NULL)
    return NULL;
  return hp_tensor_reshape (whole, (gint64[]) { shape[2] }, 1, error);
}

/* The value of the one-element int64 tensor @ids, or -1 with @error set */
static gint64
id_of (HpTensor  *ids,
       GError   **error)
{
  gdouble value;

  if (ids == NULL)
    return -1;
  value = hp_tensor_item (ids, error);
  return isnan (value) ? -1 : (gint64) value;
}

/* How many of the probabilities @sorted (largest first) the nucleus of
 * @top_p keeps: each one whose predecessors sum to less than @top_p */
static gint64
nucleus_size (HpTensor  *sorted,
              gdouble    top_p,
              GError   **error)
{
  g_autoptr(HpTensor) sums = hp_tensor_cumsum (sorted, -1, error);
  g_autofree gdouble *cumulative = NULL;
  g_autofree gdouble *probabilities = NULL;
  gsize n = 0;
  gsize kept = 1;

  if (sums == NULL)
    return -1;
  cumulative = hp_tensor_to_float64_array (sums, &n);
  probabilities = hp_tensor_to_float64_array (sorted, &n);
  while (kept < n && cumulative[kept] - probabilities[kept] < top_p)
    kept++;
  return (gint64) kept;
}

/* The token to put at @position after the logits @row [V] */
static gint64
pick (HpGenerator  *self,
      HpTensor     *row,
      gint64        position,
      GError      **error)
{
  gint64 vocab = hp_tensor_get_shape (row, NULL)[0];
  guint k = self->top_k > 0 && self->top_k < vocab ? self->top_k : (guint) vocab;
  g_autoptr(HpTensor) scaled = NULL;
  g_autoptr(HpTensor) values = NULL;
  g_autoptr(HpTensor) candidates = NULL;
  g_autoptr(HpTensor) probabilities = NULL;
  g_autoptr(HpTensor) nucleus = NULL;
  g_autoptr(HpTensor) drawn = NULL;
  g_autoptr(HpTensor) chosen = NULL;
  gint64 kept;
  gint64 index;

  if (self->temperature == 0.0)
    {
      g_autoptr(HpTensor) best = hp_tensor_argmax (row, -1, FALSE, error);

      return id_of (best, error);
    }

  scaled = hp_tensor_scale (row, 1.0 / self->temperature, error);
  if (scaled == NULL)
    return -1;
  if (k == vocab && self->top_p >= 1.0)
    {
      g_autoptr(HpTensor) any = hp_tensor_sample_from_logits (scaled, self->seed,
                                                              (guint64) position, error);

      return id_of (any, error);
    }

  /* the candidates, most likely first */
  values = hp_tensor_topk (scaled, k, -1, TRUE, &candidates, error);
  if (values == NULL || !(probabilities = hp_tensor_softmax (values, -1, error)))
    return -1;
  kept = self->top_p < 1.0 ? nucleus_size (probabilities, self->top_p, error) : k;
  if (kept < 0 || !(nucleus = hp_tensor_narrow (probabilities, -1, 0, kept, error)))
    return -1;
  drawn = hp_tensor_sample_from_probabilities (nucleus, self->seed, (guint64) position, error);
  index = id_of (drawn, error);
  if (index < 0 || !(chosen = hp_tensor_narrow (candidates, -1, index, 1, error)))
    return -1;
  return id_of (chosen, error);
}

/* The prompt fits the decoder and the new tokens its positions */
static gboolean
check_prompt (HpGenerator   *self,
              HpDecoder     *decoder,
              const gint64  *prompt,
              gsize          n_prompt,
              GError       **error)
{
  HpDecoderConfig *config = HP_DECODER_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (decoder)));
  gint vocab = hp_decoder_config_get_vocab_size (config);
  gint max_seq_len = 0;

  g_object_get (config, "max-seq-len", &max_seq_len, NULL);
  if (n_prompt == 0)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                           "HpGenerator: the prompt is empty (it needs at least one token)");
      return FALSE;
    }
  for (gsize i = 0; i < n_prompt; i++)
    if (prompt[i] < 0 || prompt[i] >= vocab)
      {
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "HpGenerator: prompt token %" G_GSIZE_FORMAT " is %" G_GINT64_FORMAT
                     ", outside the vocabulary [0, %d)", i, prompt[i], vocab);
        return FALSE;
      }
  /* the last new token is not fed back */
  if (self->max_new_tokens > 0 && n_prompt + self->max_new_tokens - 1 > (gsize) max_seq_len)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "HpGenerator: a prompt of %" G_GSIZE_FORMAT " tokens and %u new ones need %"
                   G_GSIZE_FORMAT " positions, but the decoder has max-seq-len %d",
                   n_prompt, self->max_new_tokens, n_prompt + self->max_new_tokens - 1,
                   max_seq_len);
      return FALSE;
    }
  return TRUE;
}

/* The logits of the positions of @tokens [0, @n) that the decoder has
 * not seen: the new ones with @cache, else all */
static HpTensor *
step_logits (HpDecoder     *decoder,
             HpKVCache     *cache,
             const gint64  *tokens,
             gsize          n,
             GError       **error)
{
  gsize first = cache != NULL ? (gsize) hp_kv_cache_get_length (cache) : 0;
  g_autoptr(HpTensor) ids = hp_tensor_new_from_int64_data (tokens + first, n - first,
                                                           (gint64[]) { 1, (gint64) (n - first) },
                                                           2, error);

  if (ids == NULL)
    return NULL;
  if (cache != NULL)
    return hp_decoder_forward_with_cache (decoder, ids, cache, error);
  return hp_module_call1 (HP_MODULE (decoder), ids, error);
}

/**
 * hp_generator_generate:
 * @self: a [class@Hp.Generator]
 * @decoder: the [class@Hp.Decoder] to continue the prompt with
 * @prompt: (array length=n_prompt): the prompt's token ids
 * @n_prompt: the number of prompt tokens, at least 1
 * @n_out: (out): return location for the number of new tokens
 * @error: return location for a [struct@GLib.Error]
 *
 * Continues @prompt as the generator's properties say (see
 * [class@Hp.Generator]), without recording gradients. For a
 * tensor-parallel @decoder every rank of its mesh calls this with the
 * same prompt and gets the same tokens.
 *
 * Returns: (array length=n_out) (transfer full): the new token ids
 *   (without the prompt), or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an empty prompt, a
 *   token outside the vocabulary or more positions than the decoder's
 *   max-seq-len, or the error of the decoder's forward
 *
 * Since: 1.0
 */
gint64 *
hp_generator_generate (HpGenerator   *self,
                       HpDecoder     *decoder,
                       const gint64  *prompt,
                       gsize          n_prompt,
                       gsize         *n_out,
                       GError       **error)
{
  g_autoptr(HpKVCache) cache = NULL;
  g_autofree gint64 *tokens = NULL;
  GError *local_error = NULL;
  gboolean grad_mode;
  gsize n;

  g_return_val_if_fail (HP_IS_GENERATOR (self), NULL);
  g_return_val_if_fail (HP_IS_DECODER (decoder), NULL);
  g_return_val_if_fail (prompt != NULL || n_prompt == 0, NULL);
  g_return_val_if_fail (n_out != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  *n_out = 0;
  if (!check_prompt (self, decoder, prompt, n_prompt, error))
    return NULL;

  /* one more, so that no token still leaves something to copy */
  tokens = g_new0 (gint64, n_prompt + self->max_new_tokens + 1);
  memcpy (tokens, prompt, n_prompt * sizeof (gint64));
  if (self->use_cache && self->max_new_tokens > 0)
    {
      HpModule *layers = hp_module_get_child (HP_MODULE (decoder), "layers");

      cache = hp_kv_cache_new (hp_module_list_get_length (HP_MODULE_LIST (layers)), 1,
                               (gint64) (n_prompt + self->max_new_tokens));
    }

  grad_mode = hp_grad_mode_is_enabled ();
  hp_grad_mode_set_enabled (FALSE);
  for (n = n_prompt; n < n_prompt + self->max_new_tokens; n++)
    {
      g_autoptr(HpTensor) logits = step_logits (decoder, cache, tokens, n, &local_error);
      g_autoptr(HpTensor) row = logits != NULL ? last_logits (logits, &local_error) : NULL;

      if (row == NULL || (tokens[n] = pick (self, row, (gint64) n, &local_error)) < 0)
        break;
      if (tokens[n] == self->stop_id)
        {
          n++;
          break;
        }
    }
  hp_grad_mode_set_enabled (grad_mode);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return NULL;
    }

  *n_out = n - n_prompt;
  return g_memdup2 (tokens + n_prompt, MAX (*n_out, 1) * sizeof (gint64));
}
