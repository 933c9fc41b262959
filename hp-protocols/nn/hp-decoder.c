/* hp-decoder.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gio/gio.h>
#include <math.h>

#include "hp-decoder.h"
#include "hp-decoder-sharding.h"
#include "hp-error.h"
#include "hp-module-list.h"
#include "hp-parallel-dims.h"
#include "hp-tensor-enum-types.h"
#include "hp-tensor-ops.h"
#include "hp-transformer-block.h"

/**
 * HpDecoderConfig:
 *
 * The configuration of a #HpDecoder: the sizes of a Llama-style
 * model (#HpDecoderConfig:dim, #HpDecoderConfig:n-layers, heads,
 * vocabulary, feed-forward width, ...) and, as nested configurations,
 * the configuration of every part: #HpDecoderConfig:tok-embeddings,
 * #HpDecoderConfig:layers (one #HpTransformerBlockConfig per layer),
 * #HpDecoderConfig:norm and #HpDecoderConfig:lm-head.
 *
 * The nested configurations are made from the sizes by
 * hp_decoder_config_expand(), which fills only those that are missing;
 * after it, a path such as `layers.0.attention.n-heads` names one
 * layer's field, and each part carries its own initialisers and
 * sharding configuration. hp_base_model_config_update_from_config()
 * expands, checks the sizes against the parallelism (a #HpParallelDims)
 * and, for tensor parallelism, installs the sharding configurations
 * (hp_set_decoder_sharding_config()).
 *
 * Initialisers follow torchtitan's Llama: embeddings normal (std 1),
 * attention and feed-forward input projections truncated normal
 * (std 0.02), output projections of layer i depth-scaled
 * (std 0.02 / sqrt (2 (i + 1))), the output head truncated normal with
 * std dim^-1/2 cut at 3 std, norms ones.
 */

struct _HpDecoderConfig
{
  HpBaseModelConfig parent_instance;

  gint dim;
  gint n_layers;
  gint n_heads;
  gint n_kv_heads;
  gint vocab_size;
  gint ffn_hidden;
  gdouble norm_eps;
  gdouble rope_theta;
  gint max_seq_len;
  HpDType dtype;
  gboolean loss_parallel;
  gboolean sequence_parallel;

  HpEmbeddingConfig *tok_embeddings;
  HpConfigList *layers;
  HpRMSNormConfig *norm;
  HpLinearConfig *lm_head;
};

G_DEFINE_FINAL_TYPE (HpDecoderConfig, hp_decoder_config, HP_TYPE_BASE_MODEL_CONFIG)

enum {
  PROP_0,
  PROP_DIM,
  PROP_N_LAYERS,
  PROP_N_HEADS,
  PROP_N_KV_HEADS,
  PROP_VOCAB_SIZE,
  PROP_FFN_HIDDEN,
  PROP_NORM_EPS,
  PROP_ROPE_THETA,
  PROP_MAX_SEQ_LEN,
  PROP_DTYPE,
  PROP_LOSS_PARALLEL,
  PROP_SEQUENCE_PARALLEL,
  PROP_TOK_EMBEDDINGS,
  PROP_LAYERS,
  PROP_NORM,
  PROP_LM_HEAD,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static gint *
int_field (HpDecoderConfig *self,
           guint            prop_id)
{
  switch (prop_id)
    {
    case PROP_DIM:
      return &self->dim;
    case PROP_N_LAYERS:
      return &self->n_layers;
    case PROP_N_HEADS:
      return &self->n_heads;
    case PROP_N_KV_HEADS:
      return &self->n_kv_heads;
    case PROP_VOCAB_SIZE:
      return &self->vocab_size;
    case PROP_FFN_HIDDEN:
      return &self->ffn_hidden;
    case PROP_MAX_SEQ_LEN:
      return &self->max_seq_len;
    default:
      return NULL;
    }
}

static gpointer *
object_field (HpDecoderConfig *self,
              guint            prop_id)
{
  switch (prop_id)
    {
    case PROP_TOK_EMBEDDINGS:
      return (gpointer *) &self->tok_embeddings;
    case PROP_LAYERS:
      return (gpointer *) &self->layers;
    case PROP_NORM:
      return (gpointer *) &self->norm;
    case PROP_LM_HEAD:
      return (gpointer *) &self->lm_head;
    default:
      return NULL;
    }
}

static void
hp_decoder_config_dispose (GObject *object)
{
  HpDecoderConfig *self = HP_DECODER_CONFIG (object);

  g_clear_object (&self->tok_embeddings);
  g_clear_object (&self->layers);
  g_clear_object (&self->norm);
  g_clear_object (&self->lm_head);

  G_OBJECT_CLASS (hp_decoder_config_parent_class)->dispose (object);
}

static void
hp_decoder_config_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  HpDecoderConfig *self = HP_DECODER_CONFIG (object);
  gint *int_value = int_field (self, prop_id);
  gpointer *object_value = object_field (self, prop_id);

  if (int_value != NULL)
    {
      g_value_set_int (value, *int_value);
      return;
    }
  if (object_value != NULL)
    {
      g_value_set_object (value, *object_value);
      return;
    }
  switch (prop_id)
    {
    case PROP_NORM_EPS:
      g_value_set_double (value, self->norm_eps);
      break;
    case PROP_ROPE_THETA:
      g_value_set_double (value, self->rope_theta);
      break;
    case PROP_DTYPE:
      g_value_set_enum (value, self->dtype);
      break;
    case PROP_LOSS_PARALLEL:
      g_value_set_boolean (value, self->loss_parallel);
      break;
    case PROP_SEQUENCE_PARALLEL:
      g_value_set_boolean (value, self->sequence_parallel);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_decoder_config_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  HpDecoderConfig *self = HP_DECODER_CONFIG (object);
  gint *int_value = int_field (self, prop_id);
  gpointer *object_value = object_field (self, prop_id);

  if (int_value != NULL)
    {
      if (*int_value != g_value_get_int (value))
        {
          *int_value = g_value_get_int (value);
          g_object_notify_by_pspec (object, pspec);
        }
      return;
    }
  if (object_value != NULL)
    {
      if (g_set_object ((GObject **) object_value, g_value_get_object (value)))
        g_object_notify_by_pspec (object, pspec);
      return;
    }
  switch (prop_id)
    {
    case PROP_NORM_EPS:
      self->norm_eps = g_value_get_double (value);
      break;
    case PROP_ROPE_THETA:
      self->rope_theta = g_value_get_double (value);
      break;
    case PROP_DTYPE:
      self->dtype = g_value_get_enum (value);
      break;
    case PROP_LOSS_PARALLEL:
      self->loss_parallel = g_value_get_boolean (value);
      break;
    case PROP_SEQUENCE_PARALLEL:
      self->sequence_parallel = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  g_object_notify_by_pspec (object, pspec);
}

static GParamSpec *
int_property (const gchar *name,
              const gchar *blurb,
              gint         minimum,
              gint         maximum,
              gint         default_value)
{
  return g_param_spec_int (name, NULL, blurb, minimum, maximum, default_value,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
}

static GParamSpec *
object_property (const gchar *name,
                 const gchar *blurb,
                 GType        type)
{
  return g_param_spec_object (name, NULL, blurb, type,
                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
}

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
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  HpBaseModelConfigClass *model_class = HP_BASE_MODEL_CONFIG_CLASS (klass);

  object_class->dispose = hp_decoder_config_dispose;
  object_class->get_property = hp_decoder_config_get_property;
  object_class->set_property = hp_decoder_config_set_property;
  model_class->update_from_config = hp_decoder_config_update_from_config;

  /**
   * HpDecoderConfig:dim:
   *
   * The model width: the size of a token's hidden state.
   */
  properties[PROP_DIM] = int_property ("dim", "Model width", 2, 1 << 16, 64);

  /**
   * HpDecoderConfig:n-layers:
   *
   * The number of transformer blocks.
   */
  properties[PROP_N_LAYERS] = int_property ("n-layers", "Number of layers", 0, 1024, 2);

  /**
   * HpDecoderConfig:n-heads:
   *
   * The number of attention (query) heads; divides #HpDecoderConfig:dim.
   */
  properties[PROP_N_HEADS] = int_property ("n-heads", "Attention heads", 1, 1024, 4);

  /**
   * HpDecoderConfig:n-kv-heads:
   *
   * The number of key/value heads (grouped-query attention); 0 means
   * as many as #HpDecoderConfig:n-heads.
   */
  properties[PROP_N_KV_HEADS] = int_property ("n-kv-heads", "Key/value heads (0: n-heads)",
                                              0, 1024, 0);

  /**
   * HpDecoderConfig:vocab-size:
   *
   * The number of token ids.
   */
  properties[PROP_VOCAB_SIZE] = int_property ("vocab-size", "Vocabulary size", 1, 1 << 24, 256);

  /**
   * HpDecoderConfig:ffn-hidden:
   *
   * The hidden width of the feed-forward networks; 0 means Llama's
   * default, 2/3 of 4 dim rounded up to a multiple of 8.
   */
  properties[PROP_FFN_HIDDEN] = int_property ("ffn-hidden", "Feed-forward width (0: auto)",
                                              0, 1 << 20, 0);

  /**
   * HpDecoderConfig:norm-eps:
   *
   * The epsilon of the RMS norms.
   */
  properties[PROP_NORM_EPS] =
    g_param_spec_double ("norm-eps", NULL, "RMS norm epsilon", 0, 1, 1e-5,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * HpDecoderConfig:rope-theta:
   *
   * The base of the rotary position embedding.
   */
  properties[PROP_ROPE_THETA] =
    g_param_spec_double ("rope-theta", NULL, "Rotary embedding base", 1, G_MAXDOUBLE, 10000,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * HpDecoderConfig:max-seq-len:
   *
   * The longest sequence the rotary tables cover.
   */
  properties[PROP_MAX_SEQ_LEN] = int_property ("max-seq-len", "Longest sequence", 1, 1 << 20, 128);

  /**
   * HpDecoderConfig:dtype:
   *
   * The dtype of the parameters and activations.
   */
  properties[PROP_DTYPE] =
    g_param_spec_enum ("dtype", NULL, "Parameter dtype", HP_TYPE_DTYPE, HP_DTYPE_FLOAT32,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * HpDecoderConfig:loss-parallel:
   *
   * Under tensor parallelism, whether the logits stay sharded over the
   * vocabulary for the loss (no gather of the largest activation).
   */
  properties[PROP_LOSS_PARALLEL] =
    g_param_spec_boolean ("loss-parallel", NULL, "Vocabulary-parallel loss", TRUE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * HpDecoderConfig:sequence-parallel:
   *
   * Under tensor parallelism, whether the norms and residual stream
   * are sharded over the sequence.
   */
  properties[PROP_SEQUENCE_PARALLEL] =
    g_param_spec_boolean ("sequence-parallel", NULL, "Sequence parallelism", FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * HpDecoderConfig:tok-embeddings:
   *
   * The token embedding's configuration; made by
   * hp_decoder_config_expand() when %NULL.
   */
  properties[PROP_TOK_EMBEDDINGS] = object_property ("tok-embeddings", "Token embedding",
                                                     HP_TYPE_EMBEDDING_CONFIG);

  /**
   * HpDecoderConfig:layers:
   *
   * One #HpTransformerBlockConfig per layer; made by
   * hp_decoder_config_expand() when %NULL or empty.
   */
  properties[PROP_LAYERS] = object_property ("layers", "Transformer blocks", HP_TYPE_CONFIG_LIST);

  /**
   * HpDecoderConfig:norm:
   *
   * The final norm's configuration.
   */
  properties[PROP_NORM] = object_property ("norm", "Final norm", HP_TYPE_RMS_NORM_CONFIG);

  /**
   * HpDecoderConfig:lm-head:
   *
   * The output head's configuration (dim to vocabulary).
   */
  properties[PROP_LM_HEAD] = object_property ("lm-head", "Output head", HP_TYPE_LINEAR_CONFIG);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_DECODER);

  /* the items of "layers" name their type in JSON ("@type"), which must
   * be registered to be found by name */
  g_type_ensure (HP_TYPE_TRANSFORMER_BLOCK_CONFIG);
}

static void
hp_decoder_config_init (HpDecoderConfig *self)
{
  self->dim = 64;
  self->n_layers = 2;
  self->n_heads = 4;
  self->vocab_size = 256;
  self->norm_eps = 1e-5;
  self->rope_theta = 10000;
  self->max_seq_len = 128;
  self->dtype = HP_DTYPE_FLOAT32;
  self->loss_parallel = TRUE;
}

/**
 * hp_decoder_config_new:
 *
 * Creates a decoder configuration with the default sizes and no nested
 * configurations yet.
 *
 * Returns: (transfer full): a new #HpDecoderConfig
 */
HpDecoderConfig *
hp_decoder_config_new (void)
{
  return g_object_new (HP_TYPE_DECODER_CONFIG, NULL);
}

/**
 * hp_decoder_config_get_ffn_hidden_size:
 * @self: a #HpDecoderConfig
 *
 * Gets the feed-forward width the layers get: #HpDecoderConfig:ffn-hidden
 * or, when that is 0, 2/3 of 4 dim rounded up to a multiple of 8.
 *
 * Returns: the width
 */
gint
hp_decoder_config_get_ffn_hidden_size (HpDecoderConfig *self)
{
  g_return_val_if_fail (HP_IS_DECODER_CONFIG (self), 0);

  if (self->ffn_hidden > 0)
    return self->ffn_hidden;
  return ((8 * self->dim / 3) + 7) / 8 * 8;
}

/**
 * hp_decoder_config_get_vocab_size:
 * @self: a #HpDecoderConfig
 *
 * Gets the number of token ids.
 *
 * Returns: the #HpDecoderConfig:vocab-size
 */
gint
hp_decoder_config_get_vocab_size (HpDecoderConfig *self)
{
  g_return_val_if_fail (HP_IS_DECODER_CONFIG (self), 0);

  return self->vocab_size;
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
 * for its "weight", unless it has initialisers already */
static void
init_weight (gpointer       config,
             HpInitializer *initializer)
{
  g_autoptr(HpParamInit) param_init = NULL;

  if (hp_module_config_get_param_init (HP_MODULE_CONFIG (config)) != NULL)
    return;
  param_init = param_init_of ("weight", initializer);
  hp_module_config_set_param_init (HP_MODULE_CONFIG (config), param_init);
}

static HpTransformerBlockConfig *
new_block (HpDecoderConfig  *self,
           guint             layer,
           GError          **error)
{
  gint n_kv_heads = self->n_kv_heads > 0 ? self->n_kv_heads : self->n_heads;
  g_autoptr(HpGQAttentionConfig) attention = NULL;
  g_autoptr(HpFeedForwardConfig) feed_forward = NULL;
  g_autoptr(HpRMSNormConfig) attention_norm = NULL;
  g_autoptr(HpRMSNormConfig) ffn_norm = NULL;
  g_autoptr(HpInitializer) input_init = hp_initializer_new_trunc_normal (0, 0.02, -2, 2);
  g_autoptr(HpInitializer) output_init = hp_initializer_new_depth_scaled_normal (0.02, layer);

  attention = g_object_new (HP_TYPE_GQ_ATTENTION_CONFIG,
                            "dim", self->dim,
                            "n-heads", self->n_heads,
                            "n-kv-heads", n_kv_heads,
                            "max-seq-len", self->max_seq_len,
                            "rope-theta", self->rope_theta,
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

  attention_norm = g_object_new (HP_TYPE_RMS_NORM_CONFIG,
                                 "dim", self->dim, "eps", self->norm_eps,
                                 "dtype", self->dtype, NULL);
  ffn_norm = g_object_new (HP_TYPE_RMS_NORM_CONFIG,
                           "dim", self->dim, "eps", self->norm_eps,
                           "dtype", self->dtype, NULL);
  return hp_transformer_block_config_new (attention, feed_forward, attention_norm, ffn_norm);
}

/**
 * hp_decoder_config_expand:
 * @self: a #HpDecoderConfig
 * @error: return location for a #GError
 *
 * Makes the nested configurations that are missing from the sizes: the
 * token embedding, one block per layer (when #HpDecoderConfig:layers
 * is %NULL or empty), the final norm and the output head, each with its
 * initialisers. Nested configurations already there are kept, so paths
 * set on them stay set. A new list replaces an empty one, so configurations
 * sharing the empty list are not changed.
 *
 * Returns: %TRUE, or %FALSE with %HP_ERROR_CONFIG and @self unchanged
 *   when the sizes do not fit (heads not dividing dim, key/value heads
 *   not dividing heads, a layer list whose length is not
 *   #HpDecoderConfig:n-layers), a layer is not a
 *   #HpTransformerBlockConfig with all its parts or the dtype is not a
 *   floating-point type
 */
gboolean
hp_decoder_config_expand (HpDecoderConfig  *self,
                          GError          **error)
{
  g_autoptr(HpConfigList) layers = NULL;
  gint n_kv_heads;

  g_return_val_if_fail (HP_IS_DECODER_CONFIG (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  n_kv_heads = self->n_kv_heads > 0 ? self->n_kv_heads : self->n_heads;
  if (self->dim % self->n_heads != 0 || (self->dim / self->n_heads) % 2 != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "n-heads: %d heads do not split dim %d into even head sizes",
                   self->n_heads, self->dim);
      return FALSE;
    }
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
  if (!check_layers (self, error))
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
      g_autoptr(HpRMSNormConfig) norm =
        g_object_new (HP_TYPE_RMS_NORM_CONFIG,
                      "dim", self->dim, "eps", self->norm_eps,
                      "dtype", self->dtype, NULL);

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
 * torchtitan's Llama 3: `tok_embeddings`, `layers` (a #HpModuleList of
 * #HpTransformerBlock), `norm` and `lm_head`. Its forward takes token
 * ids [B, S] (int64) and returns logits [B, S, vocab]; the training loss
 * is hp_tensor_cross_entropy() of the logits against the next tokens.
 *
 * Build it with hp_config_build() from a #HpDecoderConfig (the nested
 * configurations are expanded on the built model's copy when missing).
 * With the sharding configurations of hp_set_decoder_sharding_config()
 * installed, hp_module_parallelize() over a mesh with a `tp` dim runs
 * it tensor-parallel.
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
  HpDecoderConfig *config = HP_DECODER_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (configurable)));
  g_autoptr(HpModuleList) layers = hp_module_list_new ();

  if (!HP_CONFIGURABLE_CLASS (hp_decoder_parent_class)->setup (configurable, error))
    return FALSE;

  if (!hp_decoder_config_expand (config, error))
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
  return add_built (module, "norm", config->norm, error) &&
         add_built (module, "lm_head", config->lm_head, error);
}

static GPtrArray *
hp_decoder_forward (HpModule   *module,
                    GPtrArray  *args,
                    GError    **error)
{
  HpModuleList *layers = HP_MODULE_LIST (hp_module_get_child (module, "layers"));
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

  h = hp_module_call1 (hp_module_get_child (module, "tok_embeddings"),
                          g_ptr_array_index (args, 0), error);
  for (guint i = 0; h != NULL && i < hp_module_list_get_length (layers); i++)
    {
      HpTensor *next = hp_module_call1 (hp_module_list_get (layers, i), h, error);

      g_object_unref (h);
      h = next;
    }
  if (h == NULL)
    return NULL;
  normed = hp_module_call1 (hp_module_get_child (module, "norm"), h, error);
  if (normed == NULL)
    return NULL;
  logits = hp_module_call1 (hp_module_get_child (module, "lm_head"), normed, error);
  if (logits == NULL)
    return NULL;
  outputs = g_ptr_array_new_with_free_func (g_object_unref);
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
