/* hp-decoder-state-dict-adapter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include "hp-decoder-state-dict-adapter.h"
#include "hp-dtensor.h"
#include "hp-error.h"
#include "hp-grad-mode.h"
#include "hp-tensor-ops.h"
#include "hp-tensor-private.h"

/**
 * HpDecoderStateDictAdapter:
 *
 * Reads and writes the states of a [class@Hp.Decoder] as a Hugging Face Llama
 * checkpoint (`LlamaForCausalLM`): `tok_embeddings.weight` is
 * `model.embed_tokens.weight`, `layers.N.attention.wq.weight` is
 * `model.layers.N.self_attn.q_proj.weight`, the feed-forward `w1`, `w2`,
 * `w3` are `mlp.gate_proj`, `mlp.down_proj`, `mlp.up_proj`, the norms
 * `input_layernorm` and `post_attention_layernorm`, `norm.weight` is
 * `model.norm.weight` and `lm_head.weight` keeps its name. The attention
 * biases ([property@Hp.DecoderConfig:attention-bias]),
 * `layers.N.attention.wq.bias` to `wo.bias`, are
 * `model.layers.N.self_attn.q_proj.bias` to `o_proj.bias`.
 *
 * The query and key projections (weights and biases) are also permuted:
 * the decoder rotates interleaved pairs of each head (Meta's
 * convention), Hugging Face rotates the two halves of each head, so the
 * rows of each head are reordered from (0, 1, 2, 3, ...) pairs to
 * halves on the way out and back on the way in, as Hugging Face's own
 * conversion script does.
 * The head counts come from [property@Hp.DecoderStateDictAdapter:model-config].
 *
 * A decoder with [property@Hp.DecoderConfig:tie-word-embeddings] has no
 * head weight of its own, and its Hugging Face checkpoint has none
 * either, as `save_pretrained` writes it: `to_hf` leaves
 * `lm_head.weight` out, and `from_hf` gives the table of
 * `model.embed_tokens.weight` under both of the decoder's paths,
 * `tok_embeddings.weight` and `lm_head.weight`. A tied checkpoint that
 * has `lm_head.weight` anyway is read only when it holds the values of
 * the embedding (a copy made by another writer); other values are an
 * error naming the key rather than a head silently replaced. The same
 * check guards `to_hf` against a state dict whose head is not the
 * embedding's table.
 *
 * Since: 1.0
 */

struct _HpDecoderStateDictAdapter
{
  HpBaseStateDictAdapter parent_instance;

  HpDecoderConfig *model_config;
};

G_DEFINE_FINAL_TYPE (HpDecoderStateDictAdapter, hp_decoder_state_dict_adapter,
                     HP_TYPE_BASE_STATE_DICT_ADAPTER)

enum {
  PROP_0,
  PROP_MODEL_CONFIG,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* hp name -> Hugging Face name, within a layer and for the whole model */
static const struct
{
  const gchar *hp;
  const gchar *hf;
} layer_names[] = {
  { "attention.wq.weight", "self_attn.q_proj.weight" },
  { "attention.wk.weight", "self_attn.k_proj.weight" },
  { "attention.wv.weight", "self_attn.v_proj.weight" },
  { "attention.wo.weight", "self_attn.o_proj.weight" },
  { "attention.wq.bias", "self_attn.q_proj.bias" },
  { "attention.wk.bias", "self_attn.k_proj.bias" },
  { "attention.wv.bias", "self_attn.v_proj.bias" },
  { "attention.wo.bias", "self_attn.o_proj.bias" },
  { "feed_forward.w1.weight", "mlp.gate_proj.weight" },
  { "feed_forward.w2.weight", "mlp.down_proj.weight" },
  { "feed_forward.w3.weight", "mlp.up_proj.weight" },
  { "attention_norm.weight", "input_layernorm.weight" },
  { "ffn_norm.weight", "post_attention_layernorm.weight" },
}, model_names[] = {
  { "tok_embeddings.weight", "model.embed_tokens.weight" },
  { "norm.weight", "model.norm.weight" },
  { "lm_head.weight", "lm_head.weight" },
};

#define HP_LAYER "layers."
#define HF_LAYER "model.layers."

/* The other side's name of @name, and whether it is a query (1) or key
 * (2) projection that needs its heads permuted */
static gchar *
translate (const gchar *name,
           gboolean     to_hf,
           gint        *projection)
{
  const gchar *prefix = to_hf ? HP_LAYER : HF_LAYER;
  guint layer;
  gint consumed = 0;

  *projection = 0;
  for (guint i = 0; i < G_N_ELEMENTS (model_names); i++)
    if (g_str_equal (name, to_hf ? model_names[i].hp : model_names[i].hf))
      return g_strdup (to_hf ? model_names[i].hf : model_names[i].hp);

  if (!g_str_has_prefix (name, prefix) ||
      sscanf (name + strlen (prefix), "%u.%n", &layer, &consumed) != 1 || consumed == 0)
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (layer_names); i++)
    {
      const gchar *from = to_hf ? layer_names[i].hp : layer_names[i].hf;
      const gchar *into = to_hf ? layer_names[i].hf : layer_names[i].hp;

      if (g_str_equal (name + strlen (prefix) + consumed, from))
        {
          *projection = i == 0 || i == 4 ? 1 : i == 1 || i == 5 ? 2 : 0;
          return g_strdup_printf ("%s%u.%s", to_hf ? HF_LAYER : HP_LAYER, layer, into);
        }
    }
  return NULL;
}

/* The rows of each of @n_heads heads of @tensor, a weight [n_heads *
 * head_dim, cols] or a bias [n_heads * head_dim], reordered from
 * interleaved pairs to halves (@to_hf) or back */
static HpTensor *
permute_heads (HpTensor  *tensor,
               gint       n_heads,
               gboolean   to_hf,
               GError   **error)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (tensor, &ndim);
  gint64 rows = ndim >= 1 ? shape[0] : 0;
  gint64 cols = ndim == 2 ? shape[1] : 1;
  gint64 half;
  g_autoptr(HpTensor) split = NULL;
  g_autoptr(HpTensor) swapped = NULL;

  if (ndim < 1 || ndim > 2 || n_heads <= 0 || rows % (2 * n_heads) != 0)
    {
      g_autofree gchar *text = _hp_tensor_shape_to_string (tensor);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "a projection of shape %s does not split into %d heads of even size",
                   text, n_heads);
      return NULL;
    }
  half = rows / n_heads / 2;
  split = to_hf ? hp_tensor_reshape (tensor, (gint64[]) { n_heads, half, 2, cols }, 4, error)
                : hp_tensor_reshape (tensor, (gint64[]) { n_heads, 2, half, cols }, 4, error);
  if (split == NULL)
    return NULL;
  swapped = hp_tensor_transpose (split, 1, 2, error);
  if (swapped == NULL)
    return NULL;
  return hp_tensor_reshape (swapped, shape, ndim, error);
}

#define TABLE "tok_embeddings.weight"
#define HEAD "lm_head.weight"

/* Whether @head (named @head_name) holds the values of the tied @table
 * (named @table_name); a DTensor only matches itself, since comparing
 * shards would take communication */
static gboolean
check_tied_head (HpTensor     *table,
                 const gchar  *table_name,
                 HpTensor     *head,
                 const gchar  *head_name,
                 GError      **error)
{
  if (head == table)
    return TRUE;
  if (HP_IS_DTENSOR (head) || HP_IS_DTENSOR (table))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "HpDecoderStateDictAdapter: '%s' is not the tensor of '%s', which a decoder "
                   "with tie-word-embeddings uses as its head, and DTensors are not compared; "
                   "give their full tensors", head_name, table_name);
      return FALSE;
    }
  if (!hp_tensor_allclose (head, table, 0, 0))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "HpDecoderStateDictAdapter: '%s' differs from '%s', which a decoder with "
                   "tie-word-embeddings uses as its head", head_name, table_name);
      return FALSE;
    }
  return TRUE;
}

/* The decoder's states of a tied model: the table under both paths,
 * from whichever of them @out has (both: the same values) */
static gboolean
tie_from_hf (HpStateDict  *out,
             GError      **error)
{
  HpTensor *table = hp_state_dict_lookup (out, TABLE);
  HpTensor *head = hp_state_dict_lookup (out, HEAD);

  if (table != NULL && head != NULL)
    return check_tied_head (table, "model.embed_tokens.weight", head, HEAD, error);
  if (table != NULL)
    hp_state_dict_insert (out, HEAD, table);
  else if (head != NULL)
    hp_state_dict_insert (out, TABLE, head);
  return TRUE;
}

static HpStateDict *
convert (HpDecoderStateDictAdapter  *self,
         HpStateDict                *state_dict,
         gboolean                    to_hf,
         GError                    **error)
{
  g_autoptr(HpStateDict) out = hp_state_dict_new ();
  gint n_heads = 0;
  gint n_kv_heads = 0;
  gboolean tied = FALSE;
  gboolean enabled = hp_grad_mode_is_enabled ();
  gboolean ok = TRUE;

  g_object_get (self->model_config, "n-heads", &n_heads, "n-kv-heads", &n_kv_heads,
                "tie-word-embeddings", &tied, NULL);
  if (n_kv_heads == 0)
    n_kv_heads = n_heads;

  hp_grad_mode_set_enabled (FALSE);
  for (guint i = 0; ok && i < hp_state_dict_get_size (state_dict); i++)
    {
      const gchar *name = hp_state_dict_get_name (state_dict, i);
      HpTensor *tensor = hp_state_dict_get_tensor (state_dict, i);
      gint projection;
      g_autofree gchar *other = translate (name, to_hf, &projection);
      g_autoptr(HpTensor) permuted = NULL;

      /* a tied head is the embedding's table, which Hugging Face keeps
       * under the embedding's name only */
      if (tied && to_hf && g_str_equal (name, HEAD) && hp_state_dict_contains (state_dict, TABLE))
        {
          ok = check_tied_head (hp_state_dict_lookup (state_dict, TABLE), TABLE, tensor, HEAD,
                                error);
          continue;
        }
      if (other == NULL)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "%s: no %s name for '%s'", G_OBJECT_TYPE_NAME (self),
                       to_hf ? "Hugging Face" : "decoder", name);
          ok = FALSE;
          break;
        }
      if (projection != 0)
        {
          permuted = permute_heads (tensor, projection == 1 ? n_heads : n_kv_heads, to_hf, error);
          if (permuted == NULL)
            {
              g_prefix_error (error, "%s: %s: ", G_OBJECT_TYPE_NAME (self), name);
              ok = FALSE;
              break;
            }
        }
      hp_state_dict_insert (out, other, permuted != NULL ? permuted : tensor);
    }
  hp_grad_mode_set_enabled (enabled);
  if (ok && tied && !to_hf)
    ok = tie_from_hf (out, error);
  return ok ? g_steal_pointer (&out) : NULL;
}

static HpStateDict *
hp_decoder_state_dict_adapter_to_hf (HpBaseStateDictAdapter  *adapter,
                                     HpStateDict             *state_dict,
                                     GError                 **error)
{
  return convert (HP_DECODER_STATE_DICT_ADAPTER (adapter), state_dict, TRUE, error);
}

static HpStateDict *
hp_decoder_state_dict_adapter_from_hf (HpBaseStateDictAdapter  *adapter,
                                       HpStateDict             *hf_state_dict,
                                       GError                 **error)
{
  return convert (HP_DECODER_STATE_DICT_ADAPTER (adapter), hf_state_dict, FALSE, error);
}

static void
hp_decoder_state_dict_adapter_dispose (GObject *object)
{
  HpDecoderStateDictAdapter *self = HP_DECODER_STATE_DICT_ADAPTER (object);

  g_clear_object (&self->model_config);

  G_OBJECT_CLASS (hp_decoder_state_dict_adapter_parent_class)->dispose (object);
}

static void
hp_decoder_state_dict_adapter_get_property (GObject    *object,
                                            guint       prop_id,
                                            GValue     *value,
                                            GParamSpec *pspec)
{
  HpDecoderStateDictAdapter *self = HP_DECODER_STATE_DICT_ADAPTER (object);

  switch (prop_id)
    {
    case PROP_MODEL_CONFIG:
      g_value_set_object (value, self->model_config);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_decoder_state_dict_adapter_set_property (GObject      *object,
                                            guint         prop_id,
                                            const GValue *value,
                                            GParamSpec   *pspec)
{
  HpDecoderStateDictAdapter *self = HP_DECODER_STATE_DICT_ADAPTER (object);

  switch (prop_id)
    {
    case PROP_MODEL_CONFIG:
      g_set_object (&self->model_config, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_decoder_state_dict_adapter_class_init (HpDecoderStateDictAdapterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  HpBaseStateDictAdapterClass *adapter_class = HP_BASE_STATE_DICT_ADAPTER_CLASS (klass);

  object_class->dispose = hp_decoder_state_dict_adapter_dispose;
  object_class->get_property = hp_decoder_state_dict_adapter_get_property;
  object_class->set_property = hp_decoder_state_dict_adapter_set_property;
  adapter_class->to_hf = hp_decoder_state_dict_adapter_to_hf;
  adapter_class->from_hf = hp_decoder_state_dict_adapter_from_hf;

  /**
   * HpDecoderStateDictAdapter:model-config:
   *
   * The configuration of the decoder whose states are converted; its
   * head counts say how the query and key projections are permuted.
   *
   * Since: 1.0
   */
  properties[PROP_MODEL_CONFIG] =
    g_param_spec_object ("model-config", NULL, NULL,
                         HP_TYPE_DECODER_CONFIG,
                         (G_PARAM_READWRITE |
                          G_PARAM_CONSTRUCT_ONLY |
                          G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_decoder_state_dict_adapter_init (HpDecoderStateDictAdapter *self)
{
}

/**
 * hp_decoder_state_dict_adapter_new:
 * @model_config: the decoder's configuration
 *
 * Creates the adapter for the decoders built from @model_config.
 *
 * Returns: (transfer full): a new [class@Hp.DecoderStateDictAdapter]
 *
 * Since: 1.0
 */
HpDecoderStateDictAdapter *
hp_decoder_state_dict_adapter_new (HpDecoderConfig *model_config)
{
  g_return_val_if_fail (HP_IS_DECODER_CONFIG (model_config), NULL);

  return g_object_new (HP_TYPE_DECODER_STATE_DICT_ADAPTER, "model-config", model_config, NULL);
}

/**
 * hp_decoder_state_dict_adapter_get_model_config:
 * @self: a [class@Hp.DecoderStateDictAdapter]
 *
 * Gets the decoder configuration the adapter converts for.
 *
 * Returns: (transfer none): the [property@Hp.DecoderStateDictAdapter:model-config]
 *
 * Since: 1.0
 */
HpDecoderConfig *
hp_decoder_state_dict_adapter_get_model_config (HpDecoderStateDictAdapter *self)
{
  g_return_val_if_fail (HP_IS_DECODER_STATE_DICT_ADAPTER (self), NULL);

  return self->model_config;
}
