/* hp-decoder.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>

#include "hp-config-field.h"
#include "hp-decoder.h"
#include "hp-decoder-sharding.h"
#include "hp-error.h"
#include "hp-kv-cache-private.h"
#include "hp-init.h"
#include "hp-module-dict.h"
#include "hp-module-list.h"
#include "hp-module-private.h"
#include "hp-attention-private.h"
#include "hp-nn-basic-private.h"
#include "hp-nn-enum-types.h"
#include "hp-parallel-dims.h"
#include "hp-tensor-enum-types.h"
#include "hp-tensor-private.h"
#include "hp-tensor-ops.h"
#include "hp-transformer-block.h"

/**
 * HpDecoderConfig:
 *
 * The configuration of a [class@Hp.Decoder]: the sizes of a Llama-style
 * model ([property@Hp.DecoderConfig:dim],
 * [property@Hp.DecoderConfig:n-layers], heads, vocabulary, feed-forward
 * width, ...) and, as nested configurations, the configuration of every
 * part: [property@Hp.DecoderConfig:tok-embeddings],
 * [property@Hp.DecoderConfig:layers] (one
 * [class@Hp.TransformerBlockConfig] per layer),
 * [property@Hp.DecoderConfig:norm] and
 * [property@Hp.DecoderConfig:lm-head].
 *
 * The nested configurations are %NULL by default: they are made from
 * the sizes by [method@Hp.DecoderConfig.expand], which fills only those
 * that are missing, and which building runs on the built model's copy.
 * After it, a path such as `layers.0.attention.n-heads` names one
 * layer's field, and each part carries its own initialisers and
 * sharding configuration. [method@Hp.BaseModelConfig.update_from_config]
 * expands, checks the sizes against the parallelism (a
 * [class@Hp.ParallelDims]) and, for tensor parallelism, installs the
 * sharding configurations ([func@Hp.set_decoder_sharding_config]).
 *
 * [vfunc@Hp.Config.validate] checks what expanding checks (the heads
 * split dim into even head sizes or head-dim is even, the key/value
 * heads divide the heads, the llama3 scaling's factors leave a band,
 * a list of layers has n-layers blocks with all their parts) and that
 * the dtype is a floating-point type.
 *
 * Initialisers follow torchtitan's Llama: embeddings normal (std 1),
 * attention and feed-forward input projections truncated normal
 * (std 0.02), output projections of layer i depth-scaled
 * (std 0.02 / sqrt (2 (i + 1))), the output head truncated normal with
 * std dim^-1/2 cut at 3 std, norms ones, attention biases zeros.
 *
 * Since: 1.0
 */

struct _HpDecoderConfig
{
  HpBaseModelConfig parent_instance;

  gint dim;
  gint n_layers;
  gint n_heads;
  gint n_kv_heads;
  gint head_dim;
  gboolean attention_bias;
  gint vocab_size;
  gboolean tie_word_embeddings;
  gint ffn_hidden;
  gdouble norm_eps;
  gdouble rope_theta;
  HpRopeScaling rope_scaling;
  gdouble rope_scaling_factor;
  gdouble rope_low_freq_factor;
  gdouble rope_high_freq_factor;
  gint rope_original_max_seq_len;
  gint max_seq_len;
  HpDType dtype;
  gboolean loss_parallel;
  gboolean sequence_parallel;
  HpActivationCheckpointing activation_checkpointing;
  gint ac_every;

  HpEmbeddingConfig *tok_embeddings;
  HpConfigList *layers;
  HpRMSNormConfig *norm;
  HpLinearConfig *lm_head;
};

G_DEFINE_FINAL_TYPE (HpDecoderConfig, hp_decoder_config, HP_TYPE_BASE_MODEL_CONFIG)

/**
 * HpDecoderConfig:dim:
 *
 * The model width: the size of a token's hidden state.
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:n-layers:
 *
 * The number of transformer blocks.
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:n-heads:
 *
 * The number of attention (query) heads; divides
 * [property@Hp.DecoderConfig:dim] unless
 * [property@Hp.DecoderConfig:head-dim] is given.
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:n-kv-heads:
 *
 * The number of key/value heads (grouped-query attention); 0 means as
 * many as [property@Hp.DecoderConfig:n-heads].
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:head-dim:
 *
 * The size of each attention head, an even number; 0 (the default)
 * means dim / n-heads. The layers' query projections are
 * n-heads * head-dim wide, their key and value projections
 * n-kv-heads * head-dim ([property@Hp.GQAttentionConfig:head-dim]).
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:attention-bias:
 *
 * Whether the attention projections (query, key, value and output)
 * have biases, as Hugging Face's `attention_bias` gives them
 * ([property@Hp.GQAttentionConfig:bias]).
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:vocab-size:
 *
 * The number of token ids.
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:tie-word-embeddings:
 *
 * Whether the output head uses the token embedding's table as its
 * weight (Hugging Face's `tie_word_embeddings`, as in Llama 3.2 1B and
 * 3B). The decoder then has one parameter for both,
 * `tok_embeddings.weight`: [method@Hp.Module.named_parameters] and
 * [method@Hp.Module.parameters] list it once (so an optimizer steps it
 * once, and gradient averaging and clipping count it once), its
 * gradient is the sum of those of the lookup and of the projection,
 * and [method@Hp.Module.state_dict] lists it under both paths,
 * `tok_embeddings.weight` and `lm_head.weight`, as PyTorch does. The
 * shared weight's first values are those of the head's initialiser,
 * which runs after the embedding's (a table of standard deviation 1
 * would make the logits sqrt (dim) times too large).
 *
 * [property@Hp.DecoderConfig:tok-embeddings] and
 * [property@Hp.DecoderConfig:lm-head] must then describe the same
 * [vocab-size, dim] table of the same dtype, and the head has no bias.
 * Under tensor parallelism both plans shard it `tp:S(0)` (vocabulary
 * rows), so one DTensor serves both, with or without
 * [property@Hp.DecoderConfig:loss-parallel] and
 * [property@Hp.DecoderConfig:sequence-parallel].
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:ffn-hidden:
 *
 * The hidden width of the feed-forward networks; 0 means Llama's
 * default, 2/3 of 4 dim rounded up to a multiple of 8.
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:norm-eps:
 *
 * The epsilon of the RMS norms.
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:rope-theta:
 *
 * The base of the rotary position embedding.
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:rope-scaling:
 *
 * The scaling of the rotary frequencies, Hugging Face's
 * `rope_scaling.rope_type` ([property@Hp.RotaryEmbeddingConfig:scaling]).
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:rope-scaling-factor:
 *
 * The rotary scaling factor, `rope_scaling.factor`
 * ([property@Hp.RotaryEmbeddingConfig:scaling-factor]).
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:rope-low-freq-factor:
 *
 * The llama3 scaling's `rope_scaling.low_freq_factor`
 * ([property@Hp.RotaryEmbeddingConfig:low-freq-factor]).
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:rope-high-freq-factor:
 *
 * The llama3 scaling's `rope_scaling.high_freq_factor`
 * ([property@Hp.RotaryEmbeddingConfig:high-freq-factor]).
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:rope-original-max-seq-len:
 *
 * The llama3 scaling's `rope_scaling.original_max_position_embeddings`
 * ([property@Hp.RotaryEmbeddingConfig:original-max-seq-len]).
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:max-seq-len:
 *
 * The longest sequence the rotary tables cover.
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:dtype:
 *
 * The dtype of the parameters and activations.
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:loss-parallel:
 *
 * Under tensor parallelism, whether the logits stay sharded over the
 * vocabulary for the loss (no gather of the largest activation).
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:sequence-parallel:
 *
 * Under tensor parallelism, whether the norms and residual stream are
 * sharded over the sequence.
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:activation-checkpointing:
 *
 * Which blocks keep only their input in the forward and recompute their
 * activations in the backward: none (the default), all of them, or
 * every [property@Hp.DecoderConfig:ac-every]-th one. The gradients are
 * those without it, bit for bit, under tensor and data parallelism too;
 * only the peak memory (lower) and the step time (one more forward of
 * each such block) change. It applies while gradients are recorded;
 * a forward in no-grad mode keeps nothing anyway.
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:ac-every:
 *
 * With [property@Hp.DecoderConfig:activation-checkpointing] every-k,
 * the k: blocks k, 2k, ... (counting from 1) are checkpointed. It may
 * not exceed [property@Hp.DecoderConfig:n-layers].
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:tok-embeddings:
 *
 * The token embedding's configuration; %NULL (the default): made from
 * the sizes by [method@Hp.DecoderConfig.expand].
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:layers:
 *
 * One [class@Hp.TransformerBlockConfig] per layer; %NULL (the default)
 * or empty: made from the sizes by [method@Hp.DecoderConfig.expand].
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:norm:
 *
 * The final norm's configuration; %NULL (the default): made from the
 * sizes by [method@Hp.DecoderConfig.expand].
 *
 * Since: 1.0
 */
/**
 * HpDecoderConfig:lm-head:
 *
 * The output head's configuration (dim to vocabulary); %NULL (the
 * default): made from the sizes by [method@Hp.DecoderConfig.expand].
 *
 * Since: 1.0
 */
static const HpConfigField decoder_config_fields[] = {
  HP_CONFIG_FIELD_INT (HpDecoderConfig, dim, "dim", "Model width", 2, 1 << 16, 64),
  HP_CONFIG_FIELD_INT (HpDecoderConfig, n_layers, "n-layers", "Number of layers", 0, 1024, 2),
  HP_CONFIG_FIELD_INT (HpDecoderConfig, n_heads, "n-heads", "Attention heads", 1, 1024, 4),
  HP_CONFIG_FIELD_INT (HpDecoderConfig, n_kv_heads, "n-kv-heads", "Key/value heads (0: n-heads)",
                       0, 1024, 0),
  HP_CONFIG_FIELD_INT (HpDecoderConfig, head_dim, "head-dim", "Head size (0: dim / n-heads)",
                       0, 1 << 16, 0),
  HP_CONFIG_FIELD_BOOLEAN (HpDecoderConfig, attention_bias, "attention-bias",
                           "Attention projection biases", FALSE),
  HP_CONFIG_FIELD_INT (HpDecoderConfig, vocab_size, "vocab-size", "Vocabulary size", 1, 1 << 24, 256),
  HP_CONFIG_FIELD_BOOLEAN (HpDecoderConfig, tie_word_embeddings, "tie-word-embeddings",
                           "Output head tied to the token embedding", FALSE),
  HP_CONFIG_FIELD_INT (HpDecoderConfig, ffn_hidden, "ffn-hidden", "Feed-forward width (0: auto)",
                       0, 1 << 20, 0),
  HP_CONFIG_FIELD_DOUBLE (HpDecoderConfig, norm_eps, "norm-eps", "RMS norm epsilon", 0, 1, 1e-5),
  HP_CONFIG_FIELD_DOUBLE (HpDecoderConfig, rope_theta, "rope-theta", "Rotary embedding base",
                          1, G_MAXDOUBLE, 10000),
  HP_CONFIG_FIELD_ENUM (HpDecoderConfig, rope_scaling, "rope-scaling", "Rotary frequency scaling",
                        hp_rope_scaling_get_type, HP_ROPE_SCALING_NONE),
  HP_CONFIG_FIELD_DOUBLE (HpDecoderConfig, rope_scaling_factor, "rope-scaling-factor",
                          "Rotary scaling factor", G_MINDOUBLE, G_MAXDOUBLE, 8.0),
  HP_CONFIG_FIELD_DOUBLE (HpDecoderConfig, rope_low_freq_factor, "rope-low-freq-factor",
                          "llama3 low-frequency factor", G_MINDOUBLE, G_MAXDOUBLE, 1.0),
  HP_CONFIG_FIELD_DOUBLE (HpDecoderConfig, rope_high_freq_factor, "rope-high-freq-factor",
                          "llama3 high-frequency factor", G_MINDOUBLE, G_MAXDOUBLE, 4.0),
  HP_CONFIG_FIELD_INT (HpDecoderConfig, rope_original_max_seq_len, "rope-original-max-seq-len",
                       "llama3 original context length", 1, G_MAXINT, 8192),
  HP_CONFIG_FIELD_INT (HpDecoderConfig, max_seq_len, "max-seq-len", "Longest sequence", 1, 1 << 20, 128),
  HP_CONFIG_FIELD_ENUM (HpDecoderConfig, dtype, "dtype", "Parameter dtype", hp_dtype_get_type,
                        HP_DTYPE_FLOAT32),
  HP_CONFIG_FIELD_BOOLEAN (HpDecoderConfig, loss_parallel, "loss-parallel", "Vocabulary-parallel loss",
                           TRUE),
  HP_CONFIG_FIELD_BOOLEAN (HpDecoderConfig, sequence_parallel, "sequence-parallel",
                           "Sequence parallelism", FALSE),
  HP_CONFIG_FIELD_ENUM (HpDecoderConfig, activation_checkpointing, "activation-checkpointing",
                        "Blocks that recompute their activations", hp_activation_checkpointing_get_type,
                        HP_ACTIVATION_CHECKPOINTING_NONE),
  HP_CONFIG_FIELD_INT (HpDecoderConfig, ac_every, "ac-every", "k of every-k checkpointing",
                       1, 1024, 2),
  HP_CONFIG_FIELD_OBJECT (HpDecoderConfig, tok_embeddings, "tok-embeddings", "Token embedding",
                          hp_embedding_config_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpDecoderConfig, layers, "layers", "Transformer blocks",
                          hp_config_list_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpDecoderConfig, norm, "norm", "Final norm", hp_rms_norm_config_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpDecoderConfig, lm_head, "lm-head", "Output head", hp_linear_config_get_type,
                          NULL),
};

/* A list takes any configuration, as JSON can name one: whether every
 * layer is a block with all its parts */
static gboolean
check_layers (HpDecoderConfig  *self,
              GError          **error)
{
  for (guint i = 0; self->layers != NULL && i < hp_config_list_get_length (self->layers); i++)
    {
      HpConfig *layer = hp_config_list_peek (self->layers, i);
      HpTransformerBlockConfig *block;
      const gchar *missing = NULL;

      if (!HP_IS_TRANSFORMER_BLOCK_CONFIG (layer))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                       "layers.%u: expected a HpTransformerBlockConfig, got a %s",
                       i, layer != NULL ? G_OBJECT_TYPE_NAME (layer) : "null");
          return FALSE;
        }

      block = HP_TRANSFORMER_BLOCK_CONFIG (layer);
      if (hp_transformer_block_config_get_attention (block) == NULL)
        missing = "attention";
      else if (hp_transformer_block_config_get_feed_forward (block) == NULL)
        missing = "feed-forward";
      else if (hp_transformer_block_config_get_attention_norm (block) == NULL)
        missing = "attention-norm";
      else if (hp_transformer_block_config_get_ffn_norm (block) == NULL)
        missing = "ffn-norm";
      if (missing != NULL)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                       "layers.%u.%s: a block of a decoder needs one", i, missing);
          return FALSE;
        }
    }
  return TRUE;
}

/* A tied head takes the embedding's table [vocab, dim] as its weight:
 * the two configurations must describe the same one, and the head has
 * nothing of its own. Parts not made yet are made to agree. */
static gboolean
check_tied (HpDecoderConfig  *self,
            GError          **error)
{
  HpEmbeddingConfig *table = self->tok_embeddings;
  HpLinearConfig *head = self->lm_head;

  if (!self->tie_word_embeddings || table == NULL || head == NULL)
    return TRUE;
  if (hp_linear_config_get_bias (head))
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_CONFIG,
                           "tie-word-embeddings: lm-head has a bias, which a head tied to "
                           "the token embedding cannot have");
      return FALSE;
    }
  if (hp_linear_config_get_out_features (head) != hp_embedding_config_get_num_embeddings (table) ||
      hp_linear_config_get_in_features (head) != hp_embedding_config_get_embedding_dim (table) ||
      hp_linear_config_get_dtype (head) != hp_embedding_config_get_dtype (table))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "tie-word-embeddings: lm-head (out-features %d, in-features %d, %s) "
                   "cannot share the table of tok-embeddings (num-embeddings %d, "
                   "embedding-dim %d, %s)",
                   hp_linear_config_get_out_features (head),
                   hp_linear_config_get_in_features (head),
                   hp_dtype_to_string (hp_linear_config_get_dtype (head)),
                   hp_embedding_config_get_num_embeddings (table),
                   hp_embedding_config_get_embedding_dim (table),
                   hp_dtype_to_string (hp_embedding_config_get_dtype (table)));
      return FALSE;
    }
  return TRUE;
}

/* What hp_decoder_config_expand() checks before it makes anything */
static gboolean
check_sizes (HpDecoderConfig  *self,
             GError          **error)
{
  gint n_kv_heads = self->n_kv_heads > 0 ? self->n_kv_heads : self->n_heads;

  if (self->head_dim == 0 && (self->dim % self->n_heads != 0 || (self->dim / self->n_heads) % 2 != 0))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "n-heads: %d heads do not split dim %d into even head sizes",
                   self->n_heads, self->dim);
      return FALSE;
    }
  if (self->head_dim % 2 != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "head-dim: %d must be even (the rotary embedding turns pairs)", self->head_dim);
      return FALSE;
    }
  if (!_hp_rotary_check_scaling ("", "rope-", self->rope_scaling, self->rope_low_freq_factor,
                                 self->rope_high_freq_factor, error))
    return FALSE;
  if (self->n_heads % n_kv_heads != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "n-kv-heads: %d key/value heads do not divide %d heads",
                   n_kv_heads, self->n_heads);
      return FALSE;
    }
  if (self->layers != NULL && hp_config_list_get_length (self->layers) > 0 &&
      hp_config_list_get_length (self->layers) != (guint) self->n_layers)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "layers: %u blocks configured but n-layers is %d",
                   hp_config_list_get_length (self->layers), self->n_layers);
      return FALSE;
    }
  return check_layers (self, error) && check_tied (self, error);
}

/* expand's checks, and the dtype, which the parts expand makes carry
 * and would reject only once built */
static gboolean
hp_decoder_config_validate (HpConfig  *config,
                            GError   **error)
{
  HpDecoderConfig *self = HP_DECODER_CONFIG (config);

  if (self->activation_checkpointing == HP_ACTIVATION_CHECKPOINTING_EVERY_K &&
      self->ac_every > self->n_layers)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "ac-every: %d is more than n-layers %d, so activation-checkpointing "
                   "every-k would checkpoint no block", self->ac_every, self->n_layers);
      return FALSE;
    }
  return HP_CONFIG_CLASS (hp_decoder_config_parent_class)->validate (config, error) &&
         check_sizes (self, error) &&
         _hp_nn_check_dtype (config, self->dtype, error);
}

/* Whether @n_heads query and @n_kv_heads key/value heads split over @tp
 * ranks; @where prefixes the field names in the error */
static gboolean
check_heads_split (const gchar  *where,
                   gint          n_heads,
                   gint          n_kv_heads,
                   gint          tp,
                   GError      **error)
{
  if (n_heads % tp != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "%sn-heads: %d heads cannot be split over tp = %d", where, n_heads, tp);
      return FALSE;
    }
  if (n_kv_heads % tp != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "%sn-kv-heads: %d key/value heads cannot be split over tp = %d",
                   where, n_kv_heads, tp);
      return FALSE;
    }
  return TRUE;
}

static gboolean
hp_decoder_config_update_from_config (HpBaseModelConfig  *config,
                                      HpConfig           *job_config,
                                      GError            **error)
{
  HpDecoderConfig *self = HP_DECODER_CONFIG (config);
  g_autoptr(HpEmbeddingConfig) tok_embeddings = NULL;
  g_autoptr(HpConfigList) layers = NULL;
  g_autoptr(HpRMSNormConfig) norm = NULL;
  g_autoptr(HpLinearConfig) lm_head = NULL;
  gint tp = 1;

  if (job_config != NULL && !HP_IS_PARALLEL_DIMS (job_config))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpDecoderConfig: update_from_config takes a HpParallelDims, not a %s",
                   G_OBJECT_TYPE_NAME (job_config));
      return FALSE;
    }
  if (job_config != NULL)
    tp = hp_parallel_dims_get_tp (HP_PARALLEL_DIMS (job_config));

  /* the layers and heads are checked before anything is expanded */
  if (!check_layers (self, error))
    return FALSE;
  if (self->layers != NULL && hp_config_list_get_length (self->layers) > 0)
    {
      for (guint i = 0; i < hp_config_list_get_length (self->layers); i++)
        {
          HpTransformerBlockConfig *block =
            HP_TRANSFORMER_BLOCK_CONFIG (hp_config_list_peek (self->layers, i));
          HpGQAttentionConfig *attention = hp_transformer_block_config_get_attention (block);
          gint n_heads = 0;
          gint n_kv_heads = 0;
          g_autofree gchar *where = g_strdup_printf ("layers.%u.attention.", i);

          g_object_get (attention, "n-heads", &n_heads, "n-kv-heads", &n_kv_heads, NULL);
          if (!check_heads_split (where, n_heads, n_kv_heads, tp, error))
            return FALSE;
        }
    }
  else if (!check_heads_split ("", self->n_heads,
                               self->n_kv_heads > 0 ? self->n_kv_heads : self->n_heads, tp, error))
    return FALSE;

  if (tp == 1)
    return hp_decoder_config_expand (self, error);

  /* what expand fills in, to put back if the sharding fails after it */
  tok_embeddings = self->tok_embeddings != NULL ? g_object_ref (self->tok_embeddings) : NULL;
  layers = self->layers != NULL ? g_object_ref (self->layers) : NULL;
  norm = self->norm != NULL ? g_object_ref (self->norm) : NULL;
  lm_head = self->lm_head != NULL ? g_object_ref (self->lm_head) : NULL;

  if (!hp_decoder_config_expand (self, error))
    return FALSE;
  if (!hp_set_decoder_sharding_config (self, self->loss_parallel, self->sequence_parallel, error))
    {
      g_object_set (self, "tok-embeddings", tok_embeddings, "layers", layers,
                    "norm", norm, "lm-head", lm_head, NULL);
      return FALSE;
    }
  return TRUE;
}

static void
hp_decoder_config_class_init (HpDecoderConfigClass *klass)
{
  HP_CONFIG_CLASS (klass)->validate = hp_decoder_config_validate;
  HP_BASE_MODEL_CONFIG_CLASS (klass)->update_from_config = hp_decoder_config_update_from_config;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), decoder_config_fields,
                                  G_N_ELEMENTS (decoder_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_DECODER);

  /* the items of "layers" name their type in JSON ("@type"), which must
   * be registered to be found by name */
  g_type_ensure (HP_TYPE_TRANSFORMER_BLOCK_CONFIG);
}

static void
hp_decoder_config_init (HpDecoderConfig *self)
{
}

/**
 * hp_decoder_config_new:
 *
 * Creates a decoder configuration with the default sizes and no nested
 * configurations yet.
 *
 * Returns: (transfer full): a new [class@Hp.DecoderConfig]
 *
 * Since: 1.0
 */
HpDecoderConfig *
hp_decoder_config_new (void)
{
  return g_object_new (HP_TYPE_DECODER_CONFIG, NULL);
}

/**
 * hp_decoder_config_get_ffn_hidden_size:
 * @self: a decoder configuration
 *
 * Gets the feed-forward width the layers get:
 * [property@Hp.DecoderConfig:ffn-hidden] or, when that is 0, 2/3 of
 * 4 dim rounded up to a multiple of 8.
 *
 * Returns: the width
 *
 * Since: 1.0
 */
gint
hp_decoder_config_get_ffn_hidden_size (HpDecoderConfig *self)
{
  g_return_val_if_fail (HP_IS_DECODER_CONFIG (self), 0);

  if (self->ffn_hidden > 0)
    return self->ffn_hidden;
  return ((8 * self->dim / 3) + 7) / 8 * 8;
}

static HpParamInit *
param_init_of (const gchar   *name,
               HpInitializer *initializer)
{
  HpParamInit *param_init = hp_param_init_new ();

  hp_param_init_set (param_init, name, initializer);
  return param_init;
}

/* Gives @config (a module configuration) the initialiser @initializer
 * for its "weight", and zeros for the "bias" of a linear layer that has
 * one (as Hugging Face initialises the attention biases), unless it has
 * initialisers already */
static void
init_weight (gpointer       config,
             HpInitializer *initializer)
{
  g_autoptr(HpParamInit) param_init = NULL;

  if (hp_module_config_get_param_init (HP_MODULE_CONFIG (config)) != NULL)
    return;
  param_init = param_init_of ("weight", initializer);
  if (HP_IS_LINEAR_CONFIG (config) && hp_linear_config_get_bias (config))
    {
      g_autoptr(HpInitializer) zeros = hp_initializer_new_zeros ();

      hp_param_init_set (param_init, "bias", zeros);
    }
  hp_module_config_set_param_init (HP_MODULE_CONFIG (config), param_init);
}

static HpRMSNormConfig *
new_norm (HpDecoderConfig *self)
{
  return g_object_new (HP_TYPE_RMS_NORM_CONFIG, "dim", self->dim, "eps", self->norm_eps,
                       "dtype", self->dtype, NULL);
}

static HpTransformerBlockConfig *
new_block (HpDecoderConfig  *self,
           guint             layer,
           GError          **error)
{
  gint n_kv_heads = self->n_kv_heads > 0 ? self->n_kv_heads : self->n_heads;
  g_autoptr(HpGQAttentionConfig) attention = NULL;
  g_autoptr(HpFeedForwardConfig) feed_forward = NULL;
  g_autoptr(HpRMSNormConfig) attention_norm = new_norm (self);
  g_autoptr(HpRMSNormConfig) ffn_norm = new_norm (self);
  g_autoptr(HpInitializer) input_init = hp_initializer_new_trunc_normal (0, 0.02, -2, 2);
  g_autoptr(HpInitializer) output_init = hp_initializer_new_depth_scaled_normal (0.02, layer);

  attention = g_object_new (HP_TYPE_GQ_ATTENTION_CONFIG,
                            "dim", self->dim,
                            "n-heads", self->n_heads,
                            "n-kv-heads", n_kv_heads,
                            "head-dim", self->head_dim,
                            "bias", self->attention_bias,
                            "max-seq-len", self->max_seq_len,
                            "rope-theta", self->rope_theta,
                            "rope-scaling", self->rope_scaling,
                            "rope-scaling-factor", self->rope_scaling_factor,
                            "rope-low-freq-factor", self->rope_low_freq_factor,
                            "rope-high-freq-factor", self->rope_high_freq_factor,
                            "rope-original-max-seq-len", self->rope_original_max_seq_len,
                            "dtype", self->dtype,
                            NULL);
  if (!hp_gq_attention_config_fill_children (attention, error))
    return NULL;
  init_weight (hp_gq_attention_config_get_wq (attention), input_init);
  init_weight (hp_gq_attention_config_get_wk (attention), input_init);
  init_weight (hp_gq_attention_config_get_wv (attention), input_init);
  init_weight (hp_gq_attention_config_get_wo (attention), output_init);

  feed_forward = g_object_new (HP_TYPE_FEED_FORWARD_CONFIG,
                               "dim", self->dim,
                               "hidden-dim", hp_decoder_config_get_ffn_hidden_size (self),
                               "dtype", self->dtype,
                               NULL);
  init_weight (hp_feed_forward_config_get_w1 (feed_forward), input_init);
  init_weight (hp_feed_forward_config_get_w2 (feed_forward), output_init);
  init_weight (hp_feed_forward_config_get_w3 (feed_forward), output_init);
  return hp_transformer_block_config_new (attention, feed_forward, attention_norm, ffn_norm);
}

/**
 * hp_decoder_config_expand:
 * @self: a decoder configuration
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes the nested configurations that are missing from the sizes: the
 * token embedding, one block per layer (when
 * [property@Hp.DecoderConfig:layers] is %NULL or empty), the final norm
 * and the output head, each with its initialisers. Nested
 * configurations already there are kept, so paths set on them stay
 * set. A new list replaces an empty one, so configurations sharing the
 * empty list are not changed.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_CONFIG][error@Hp.Error] and @self unchanged
 *   when the sizes do not fit (heads not dividing dim, key/value heads
 *   not dividing heads, a layer list whose length is not
 *   [property@Hp.DecoderConfig:n-layers]), a layer is not a
 *   [class@Hp.TransformerBlockConfig] with all its parts or the dtype
 *   is not a floating-point type
 *
 * Since: 1.0
 */
gboolean
hp_decoder_config_expand (HpDecoderConfig  *self,
                          GError          **error)
{
  g_autoptr(HpConfigList) layers = NULL;

  g_return_val_if_fail (HP_IS_DECODER_CONFIG (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_sizes (self, error))
    return FALSE;

  /* the blocks, whose making can fail, come first: on error nothing is
   * set */
  if (self->layers == NULL || hp_config_list_get_length (self->layers) == 0)
    {
      layers = hp_config_list_new ();
      for (gint i = 0; i < self->n_layers; i++)
        {
          g_autoptr(HpTransformerBlockConfig) block = new_block (self, i, error);

          if (block == NULL)
            {
              g_prefix_error (error, "layers.%d: ", i);
              return FALSE;
            }
          hp_config_list_append (layers, HP_CONFIG (block));
        }
    }

  if (self->tok_embeddings == NULL)
    {
      g_autoptr(HpEmbeddingConfig) embeddings =
        g_object_new (HP_TYPE_EMBEDDING_CONFIG,
                      "num-embeddings", self->vocab_size,
                      "embedding-dim", self->dim,
                      "dtype", self->dtype,
                      NULL);
      g_autoptr(HpInitializer) normal = hp_initializer_new_normal (0, 1);

      init_weight (embeddings, normal);
      g_object_set (self, "tok-embeddings", embeddings, NULL);
    }
  if (layers != NULL)
    g_object_set (self, "layers", layers, NULL);
  if (self->norm == NULL)
    {
      g_autoptr(HpRMSNormConfig) norm = new_norm (self);

      g_object_set (self, "norm", norm, NULL);
    }
  if (self->lm_head == NULL)
    {
      gdouble std = 1 / sqrt (self->dim);
      g_autoptr(HpLinearConfig) lm_head =
        g_object_new (HP_TYPE_LINEAR_CONFIG,
                      "in-features", self->dim,
                      "out-features", self->vocab_size,
                      "dtype", self->dtype,
                      NULL);
      g_autoptr(HpInitializer) head_init = hp_initializer_new_trunc_normal (0, std, -3 * std, 3 * std);

      init_weight (lm_head, head_init);
      g_object_set (self, "lm-head", lm_head, NULL);
    }
  return TRUE;
}

/**
 * HpDecoder:
 *
 * A decoder-only transformer in the style of Meta Llama, the model of
 * torchtitan's Llama 3: `tok_embeddings`, `layers` (a
 * [class@Hp.ModuleList] of [class@Hp.TransformerBlock]), `norm` and
 * `lm_head` (whose weight is the embedding's table with
 * [property@Hp.DecoderConfig:tie-word-embeddings]). Its forward takes
 * token ids [B, S] (int64) and returns
 * logits [B, S, vocab]; the training loss is
 * [method@Hp.Tensor.cross_entropy] of the logits against the next
 * tokens.
 *
 * Build it with [method@Hp.Config.build] from a
 * [class@Hp.DecoderConfig] (the nested configurations are expanded on
 * the built model's copy when missing). With the sharding
 * configurations of [func@Hp.set_decoder_sharding_config] installed,
 * [method@Hp.Module.parallelize] over a mesh with a `tp` dim runs it
 * tensor-parallel.
 *
 * With [property@Hp.DecoderConfig:activation-checkpointing], the
 * chosen blocks keep only their input for the backward and run their
 * forward again in it: less memory, the same gradients.
 *
 * For generation, [method@Hp.Decoder.forward_with_cache] runs the
 * forward on new positions only, with the keys and values of the
 * earlier ones kept in a [class@Hp.KVCache].
 *
 * Since: 1.0
 */

struct _HpDecoder
{
  HpBaseModel parent_instance;
};

G_DEFINE_FINAL_TYPE (HpDecoder, hp_decoder, HP_TYPE_BASE_MODEL)

static gboolean
add_built (HpModule     *module,
           const gchar  *name,
           gpointer      config,
           GError      **error)
{
  g_autoptr(GObject) child = hp_config_build (HP_CONFIG (config), error);

  if (child == NULL)
    {
      g_prefix_error (error, "HpDecoder.%s: ", name);
      return FALSE;
    }
  return hp_module_add_child (module, name, HP_MODULE (child), error);
}

static gboolean
hp_decoder_setup (HpConfigurable  *configurable,
                  GError         **error)
{
  HpModule *module = HP_MODULE (configurable);
  HpDecoderConfig *config = HP_DECODER_CONFIG (hp_configurable_get_config (configurable));
  g_autoptr(HpModuleList) layers = hp_module_list_new ();

  if (!HP_CONFIGURABLE_CLASS (hp_decoder_parent_class)->setup (configurable, error))
    return FALSE;

  /* expand made the parts that were missing, which may not agree with
   * a tied part that was there */
  if (!hp_decoder_config_expand (config, error) || !check_tied (config, error))
    return FALSE;

  if (!add_built (module, "tok_embeddings", config->tok_embeddings, error))
    return FALSE;
  for (guint i = 0; i < hp_config_list_get_length (config->layers); i++)
    {
      g_autoptr(GObject) block = hp_config_build (hp_config_list_peek (config->layers, i), error);

      if (block == NULL)
        {
          g_prefix_error (error, "HpDecoder.layers.%u: ", i);
          return FALSE;
        }
      if (!hp_module_list_append (layers, HP_MODULE (block), error))
        return FALSE;
    }
  if (!hp_module_add_child (module, "layers", HP_MODULE (layers), error))
    return FALSE;
  if (!add_built (module, "norm", config->norm, error) ||
      !add_built (module, "lm_head", config->lm_head, error))
    return FALSE;

  /* the head's own weight gives way to the embedding's table: one
   * tensor, whose gradient accumulates both uses, and which
   * parallelize lays out once */
  return !config->tie_word_embeddings ||
         hp_module_register_parameter (hp_module_get_child (module, "lm_head"), "weight",
                                       hp_module_get_parameter (module, "tok_embeddings.weight"),
                                       error);
}

/* Whether block @i (from 0) of a decoder configured by @config
 * recomputes its activations */
static gboolean
is_checkpointed (HpDecoderConfig *config,
                 guint            i)
{
  switch (config->activation_checkpointing)
    {
    case HP_ACTIVATION_CHECKPOINTING_FULL:
      return TRUE;
    case HP_ACTIVATION_CHECKPOINTING_EVERY_K:
      return (i + 1) % config->ac_every == 0;
    case HP_ACTIVATION_CHECKPOINTING_NONE:
    default:
      return FALSE;
    }
}

/* Block @i on @h, checkpointed or not */
static HpTensor *
call_block (HpDecoderConfig  *config,
            HpModule         *block,
            guint             i,
            HpTensor         *h,
            GError          **error)
{
  g_autoptr(GPtrArray) args = NULL;
  g_autoptr(GPtrArray) outputs = NULL;

  if (!is_checkpointed (config, i))
    return hp_module_call1 (block, h, error);

  args = g_ptr_array_new ();
  g_ptr_array_add (args, h);
  outputs = _hp_module_call_checkpointed (block, args, error);
  return outputs != NULL ? g_object_ref (g_ptr_array_index (outputs, 0)) : NULL;
}

/* The global index of block @name of a decoder: its position in the
 * whole model, which a pipeline stage's blocks keep as their names */
static guint
block_index (const gchar *name)
{
  return (guint) g_ascii_strtoull (name, NULL, 10);
}

static GPtrArray *
hp_decoder_forward (HpModule   *module,
                    GPtrArray  *args,
                    GError    **error)
{
  HpModule *layers = hp_module_get_child (module, "layers");
  HpModule *tok_embeddings = hp_module_get_child (module, "tok_embeddings");
  HpModule *norm = hp_module_get_child (module, "norm");
  HpDecoderConfig *config = HP_DECODER_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (module)));
  g_auto(GStrv) names = hp_module_get_child_names (layers);
  g_autoptr(HpTensor) h = NULL;
  g_autoptr(HpTensor) normed = NULL;
  HpTensor *logits;
  GPtrArray *outputs;

  if (args->len != 1 || g_ptr_array_index (args, 0) == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "HpDecoder.forward takes one tensor of token ids, got %u arguments",
                   args->len);
      return NULL;
    }

  /* a pipeline stage after the first takes the hidden states of the
   * one before it, and one before the last gives its own */
  h = tok_embeddings != NULL
    ? hp_module_call1 (tok_embeddings, g_ptr_array_index (args, 0), error)
    : g_object_ref (g_ptr_array_index (args, 0));
  for (guint i = 0; h != NULL && names[i] != NULL; i++)
    {
      HpTensor *next = call_block (config, hp_module_get_child (layers, names[i]),
                                   block_index (names[i]), h, error);

      g_object_unref (h);
      h = next;
    }
  if (h == NULL)
    return NULL;
  outputs = g_ptr_array_new_with_free_func (g_object_unref);
  if (norm == NULL)
    {
      g_ptr_array_add (outputs, g_steal_pointer (&h));
      return outputs;
    }
  normed = hp_module_call1 (norm, h, error);
  logits = normed != NULL ? hp_module_call1 (hp_module_get_child (module, "lm_head"), normed, error)
                          : NULL;
  if (logits == NULL)
    {
      g_ptr_array_unref (outputs);
      return NULL;
    }
  g_ptr_array_add (outputs, logits);
  return outputs;
}

static void
hp_decoder_class_init (HpDecoderClass *klass)
{
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_decoder_setup;
  module_class->forward = hp_decoder_forward;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "ids", NULL });
}

static void
hp_decoder_init (HpDecoder *self)
{
}

/* @ids fits @cache and the cache has room for them, else an error
 * naming what does not fit */
static gboolean
check_cached_ids (HpDecoder  *self,
                  HpTensor   *ids,
                  HpKVCache  *cache,
                  GError    **error)
{
  guint n_layers = hp_module_list_get_length (HP_MODULE_LIST (hp_module_get_child (HP_MODULE (self),
                                                                                    "layers")));
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (ids, &ndim);
  g_autofree gchar *text = _hp_tensor_shape_to_string (ids);

  if (hp_tensor_get_dtype (ids) != HP_DTYPE_INT64)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "HpDecoder.forward_with_cache: ids have dtype %s, but token ids are int64",
                   hp_dtype_to_string (hp_tensor_get_dtype (ids)));
      return FALSE;
    }
  if (ndim != 2 || shape[1] < 1)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "HpDecoder.forward_with_cache: ids have shape %s, but need [batch, new "
                   "positions] with at least one new position", text);
      return FALSE;
    }
  if (shape[0] != hp_kv_cache_get_batch_size (cache))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "HpDecoder.forward_with_cache: ids have shape %s, but the cache holds a "
                   "batch of %" G_GINT64_FORMAT, text, hp_kv_cache_get_batch_size (cache));
      return FALSE;
    }
  if (hp_kv_cache_get_n_layers (cache) != n_layers)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "HpDecoder.forward_with_cache: the cache has %u layers, but the decoder %u",
                   hp_kv_cache_get_n_layers (cache), n_layers);
      return FALSE;
    }
  if (shape[1] > hp_kv_cache_get_capacity (cache) - hp_kv_cache_get_length (cache))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "HpDecoder.forward_with_cache: %" G_GINT64_FORMAT " new positions do not "
                   "fit in the cache (%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " positions "
                   "used)", shape[1], hp_kv_cache_get_length (cache),
                   hp_kv_cache_get_capacity (cache));
      return FALSE;
    }
  return TRUE;
}

/* Points every attention of @self at @cache (NULL: at none) */
static void
set_caches (HpDecoder *self,
            HpKVCache *cache)
{
  HpModuleList *layers = HP_MODULE_LIST (hp_module_get_child (HP_MODULE (self), "layers"));

  for (guint i = 0; i < hp_module_list_get_length (layers); i++)
    {
      HpModule *attention = hp_module_get_child (hp_module_list_get (layers, i), "attention");

      _hp_gq_attention_set_cache (HP_GQ_ATTENTION (attention), cache, i);
    }
}

/**
 * hp_decoder_forward_with_cache:
 * @self: a [class@Hp.Decoder]
 * @ids: the token ids of the new positions, int64 [batch, new positions]
 * @cache: a [class@Hp.KVCache] for @self holding the positions before them
 * @error: return location for a [struct@GLib.Error]
 *
 * Runs the decoder on the positions that follow those in @cache: the
 * rotary embedding turns them as positions `length`, `length + 1`, ...
 * of the cache, and each layer's attention sees the cached keys and
 * values and the new ones, causally. The cache then holds the new
 * positions too. Feeding a sequence whole, in pieces or one token at a
 * time gives the logits of the plain forward on the whole sequence.
 *
 * The forward runs through [method@Hp.Module.call] (hooks and the
 * sharding configurations of a parallelized decoder apply), without
 * recording gradients; for tensor parallelism every rank calls it with
 * the same ids, and the cache keeps each rank's heads.
 *
 * Returns: (transfer full): the logits of the new positions,
 *   [batch, new positions, vocab], or %NULL with the cache unchanged
 *   and [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when @ids are not
 *   int64, the cache was made for another number of layers or has no
 *   room for the new positions, [HP_ERROR_SHAPE][error@Hp.Error] when
 *   @ids are not [batch, positions] with at least one position or their
 *   batch is not the cache's, or the error of the forward (such as
 *   more positions than the rotary tables hold)
 *
 * Since: 1.0
 */
HpTensor *
hp_decoder_forward_with_cache (HpDecoder  *self,
                               HpTensor   *ids,
                               HpKVCache  *cache,
                               GError    **error)
{
  gboolean grad_mode;
  HpTensor *logits;

  g_return_val_if_fail (HP_IS_DECODER (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (ids), NULL);
  g_return_val_if_fail (HP_IS_KV_CACHE (cache), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!HP_IS_MODULE_LIST (hp_module_get_child (HP_MODULE (self), "layers")))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "HpDecoder.forward_with_cache: the decoder is one pipeline stage; "
                   "generation runs on the whole model");
      return NULL;
    }
  if (!check_cached_ids (self, ids, cache, error))
    return NULL;

  grad_mode = hp_grad_mode_is_enabled ();
  hp_grad_mode_set_enabled (FALSE);
  set_caches (self, cache);
  logits = hp_module_call1 (HP_MODULE (self), ids, error);
  set_caches (self, NULL);
  hp_grad_mode_set_enabled (grad_mode);
  if (logits == NULL)
    {
      _hp_kv_cache_discard (cache);
      return NULL;
    }
  _hp_kv_cache_commit (cache, hp_tensor_get_shape (ids, NULL)[1]);
  return logits;
}

/**
 * hp_decoder_stage_layers:
 * @n_layers: the number of blocks of the whole decoder
 * @n_stages: the number of pipeline stages, at least 1
 * @stage: a stage, below @n_stages
 * @n_stage_layers: (out) (optional): the number of blocks of @stage
 *
 * How [method@Hp.Decoder.split_stage] balances blocks over stages: each
 * stage gets `n_layers / n_stages` blocks and the first
 * `n_layers % n_stages` stages one more (3 blocks on 2 stages are 2 + 1).
 *
 * Returns: the global index of the first block of @stage
 *
 * Since: 1.0
 */
guint
hp_decoder_stage_layers (guint  n_layers,
                         guint  n_stages,
                         guint  stage,
                         guint *n_stage_layers)
{
  guint base, extra;

  g_return_val_if_fail (n_stages > 0, 0);
  g_return_val_if_fail (stage < n_stages, 0);

  base = n_layers / n_stages;
  extra = n_layers % n_stages;
  if (n_stage_layers != NULL)
    *n_stage_layers = base + (stage < extra ? 1 : 0);
  return stage * base + MIN (stage, extra);
}

/**
 * hp_decoder_split_stage:
 * @self: a whole [class@Hp.Decoder], not parallelized yet
 * @stage: which stage @self becomes, below @n_stages
 * @n_stages: the number of pipeline stages
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes @self pipeline stage @stage of @n_stages, in place (torchtitan's
 * pipeline split of Llama): it keeps its share of the blocks
 * ([func@Hp.Decoder.stage_layers]) under their global names
 * (`layers.3.attention.wq.weight` stays that on stage 1), the first
 * stage keeps `tok_embeddings` and the last `norm` and `lm_head`, and
 * the parts that other stages hold are removed. The forward of a stage
 * after the first takes the hidden states the stage before it gives,
 * and a stage before the last returns its hidden states. Its state dict
 * holds only its own tensors, under the names of the whole model's, and
 * initialising it with a seed gives them the values the whole model
 * gets with that seed. One stage is the whole model: nothing changes.
 *
 * Returns: %TRUE, or %FALSE with @self unchanged and
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when the decoder has
 *   fewer blocks than @n_stages, or was split already,
 *   [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] when @n_stages is above 1
 *   and the embedding and head are tied (the first and the last stage
 *   would share a tensor)
 *
 * Since: 1.0
 */
gboolean
hp_decoder_split_stage (HpDecoder  *self,
                        guint       stage,
                        guint       n_stages,
                        GError    **error)
{
  HpModule *module = HP_MODULE (self);
  HpDecoderConfig *config;
  HpModule *layers;
  g_autoptr(HpModuleDict) kept = NULL;
  guint n_layers, first, count;

  g_return_val_if_fail (HP_IS_DECODER (self), FALSE);
  g_return_val_if_fail (stage < n_stages, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  config = HP_DECODER_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (self)));
  layers = hp_module_get_child (module, "layers");
  if (!HP_IS_MODULE_LIST (layers))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "HpDecoder: the decoder is a pipeline stage already");
      return FALSE;
    }
  n_layers = hp_module_list_get_length (HP_MODULE_LIST (layers));
  if (n_layers < n_stages)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "HpDecoder: n-layers %u cannot be split into %u pipeline stages: "
                   "every stage needs a block", n_layers, n_stages);
      return FALSE;
    }
  if (n_stages > 1 && config->tie_word_embeddings)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "HpDecoder: tie-word-embeddings with %u pipeline stages: the embedding "
                   "of the first stage and the head of the last would be one tensor", n_stages);
      return FALSE;
    }
  if (n_stages == 1)
    return TRUE;

  first = hp_decoder_stage_layers (n_layers, n_stages, stage, &count);
  kept = hp_module_dict_new ();
  for (guint i = first; i < first + count; i++)
    {
      g_autofree gchar *name = g_strdup_printf ("%u", i);

      if (!hp_module_dict_insert (kept, name, hp_module_list_get (HP_MODULE_LIST (layers), i), error))
        return FALSE;
    }
  if (!hp_module_add_child (module, "layers", HP_MODULE (kept), error))
    return FALSE;
  if (stage > 0)
    hp_module_remove_child (module, "tok_embeddings");
  if (stage + 1 < n_stages)
    {
      hp_module_remove_child (module, "norm");
      hp_module_remove_child (module, "lm_head");
    }
  return TRUE;
}

/* The pipelining function of hp_decoder_config_build_model_spec() */
static gboolean
pipeline_decoder (HpBaseModel     *model,
                  HpParallelDims  *dims,
                  gpointer         user_data,
                  GError         **error)
{
  gint pp = 1;

  g_object_get (dims, "pp", &pp, NULL);
  if (!HP_IS_DECODER (model))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "decoder pipelining: the model is a %s, not a HpDecoder",
                   G_OBJECT_TYPE_NAME (model));
      return FALSE;
    }
  /* the pp dim is the last of HpParallelDims' meshes, so a rank's stage
   * is its world rank modulo pp */
  return hp_decoder_split_stage (HP_DECODER (model), (guint) (hp_get_world_rank () % MAX (pp, 1)),
                                 (guint) MAX (pp, 1), error);
}

/**
 * hp_decoder_config_build_model_spec:
 * @self: a [class@Hp.DecoderConfig]
 *
 * Makes the [class@Hp.ModelSpec] of a decoder: @self as its model, and
 * a pipelining function that makes the model the stage of this rank
 * ([method@Hp.Decoder.split_stage]; the stage is the rank's coordinate
 * on the `pp` dim of [method@Hp.ParallelDims.build_mesh], which is the
 * last: the world rank modulo the pp degree).
 *
 * Returns: (transfer full): a new model spec named `decoder`
 *
 * Since: 1.0
 */
HpModelSpec *
hp_decoder_config_build_model_spec (HpDecoderConfig *self)
{
  HpModelSpec *spec;

  g_return_val_if_fail (HP_IS_DECODER_CONFIG (self), NULL);

  spec = hp_model_spec_new ("decoder");
  hp_model_spec_set_model (spec, HP_BASE_MODEL_CONFIG (self));
  hp_model_spec_set_pipelining_func (spec, pipeline_decoder, NULL, NULL);
  return spec;
}

#include "hp-decoder-fields.c"
