/* hp-gq-attention.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-attention-private.h"
#include "hp-config-field.h"
#include "hp-error.h"
#include "hp-gq-attention.h"
#include "hp-kv-cache-private.h"
#include "hp-nn-basic-private.h"
#include "hp-nn-enum-types.h"
#include "hp-tensor-enum-types.h"
#include "hp-tensor-ops.h"
#include "hp-tensor-private.h"

/**
 * HpGQAttentionConfig:
 *
 * The configuration of a [class@Hp.GQAttention].
 *
 * The scalar fields give the sizes: the model dim, the number of query
 * heads and of key/value heads (0: as many as query heads), the head
 * dim (0: `dim / n-heads`), whether the projections have biases, the
 * longest sequence, the rotary base and scaling and the dtype of the
 * parameters.
 *
 * The nested fields are the configurations of the children: the four
 * projections [property@Hp.GQAttentionConfig:wq],
 * [property@Hp.GQAttentionConfig:wk], [property@Hp.GQAttentionConfig:wv]
 * and [property@Hp.GQAttentionConfig:wo],
 * [property@Hp.GQAttentionConfig:rope] and
 * [property@Hp.GQAttentionConfig:inner-attention]. Their default is
 * %NULL, which stands for the configuration the scalar fields imply
 * (projections with a bias when [property@Hp.GQAttentionConfig:bias]
 * is set, a causal [class@Hp.SDPAConfig]), made when
 * the module is built, so that a child follows the sizes until it is
 * given. [method@Hp.GQAttentionConfig.fill_children] writes those out,
 * so that a child's own fields, such as its sharding configuration, can
 * be set. A child given explicitly must agree with the scalar fields in
 * its sizes and dtype, which [vfunc@Hp.Config.validate] checks with the
 * sizes themselves (see [class@Hp.GQAttention]).
 *
 * Since: 1.0
 */

struct _HpGQAttentionConfig
{
  HpModuleConfig parent_instance;

  gint dim;
  gint n_heads;
  gint n_kv_heads;
  gint head_dim;
  gboolean bias;
  gint max_seq_len;
  gdouble rope_theta;
  HpRopeScaling rope_scaling;
  gdouble rope_scaling_factor;
  gdouble rope_low_freq_factor;
  gdouble rope_high_freq_factor;
  gint rope_original_max_seq_len;
  HpDType dtype;
  HpLinearConfig *wq;
  HpLinearConfig *wk;
  HpLinearConfig *wv;
  HpLinearConfig *wo;
  HpRotaryEmbeddingConfig *rope;
  HpSDPAConfig *inner_attention;
};

G_DEFINE_FINAL_TYPE (HpGQAttentionConfig, hp_gq_attention_config, HP_TYPE_MODULE_CONFIG)

/**
 * HpGQAttentionConfig:dim:
 *
 * The model dim: the size of the last dim of the input and output;
 * without a [property@Hp.GQAttentionConfig:head-dim], a multiple of
 * [property@Hp.GQAttentionConfig:n-heads].
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:n-heads:
 *
 * The number of query heads.
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:n-kv-heads:
 *
 * The number of key/value heads, which must divide
 * [property@Hp.GQAttentionConfig:n-heads]; 0 means as many as query
 * heads (multi-head attention).
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:head-dim:
 *
 * The size of each head, an even number (the rotary embedding turns
 * pairs); 0 (the default) means `dim / n-heads`. The query projection
 * is n-heads * head-dim wide, the key and value projections
 * n-kv-heads * head-dim, and the output projection maps
 * n-heads * head-dim back to dim. [method@Hp.GQAttentionConfig.get_head_dim]
 * gives the head dim in use.
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:bias:
 *
 * Whether the four projections the scalar fields imply (`wq`, `wk`,
 * `wv` and `wo`) have a bias, as Hugging Face's Llama has with
 * `attention_bias`.
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:max-seq-len:
 *
 * The longest sequence, the length of the rotary tables.
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:rope-theta:
 *
 * The base of the rotary frequencies.
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:rope-scaling:
 *
 * The scaling of the rotary frequencies
 * ([property@Hp.RotaryEmbeddingConfig:scaling]).
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:rope-scaling-factor:
 *
 * The rotary scaling factor
 * ([property@Hp.RotaryEmbeddingConfig:scaling-factor]).
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:rope-low-freq-factor:
 *
 * The llama3 scaling's low-frequency factor
 * ([property@Hp.RotaryEmbeddingConfig:low-freq-factor]).
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:rope-high-freq-factor:
 *
 * The llama3 scaling's high-frequency factor
 * ([property@Hp.RotaryEmbeddingConfig:high-freq-factor]).
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:rope-original-max-seq-len:
 *
 * The llama3 scaling's original context length
 * ([property@Hp.RotaryEmbeddingConfig:original-max-seq-len]).
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:dtype:
 *
 * The dtype of the parameters and of the rotary tables.
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:wq:
 *
 * The query projection, [dim -> n-heads * head dim]; %NULL (the
 * default): derived from the scalar fields.
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:wk:
 *
 * The key projection, [dim -> n-kv-heads * head dim]; %NULL (the
 * default): derived from the scalar fields.
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:wv:
 *
 * The value projection, [dim -> n-kv-heads * head dim]; %NULL (the
 * default): derived from the scalar fields.
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:wo:
 *
 * The output projection, [n-heads * head dim -> dim]; %NULL (the
 * default): derived from the scalar fields.
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:rope:
 *
 * The rotary embedding of queries and keys; %NULL (the default):
 * derived from the scalar fields.
 *
 * Since: 1.0
 */
/**
 * HpGQAttentionConfig:inner-attention:
 *
 * The attention over the projected, rotated heads; %NULL (the default):
 * a causal [class@Hp.SDPAConfig].
 *
 * Since: 1.0
 */
static const HpConfigField gqa_config_fields[] = {
  HP_CONFIG_FIELD_INT (HpGQAttentionConfig, dim, "dim", "Model width", 1, G_MAXINT, 256),
  HP_CONFIG_FIELD_INT (HpGQAttentionConfig, n_heads, "n-heads", "Query heads", 1, G_MAXINT, 8),
  HP_CONFIG_FIELD_INT (HpGQAttentionConfig, n_kv_heads, "n-kv-heads",
                       "Key/value heads (0: n-heads)", 0, G_MAXINT, 0),
  HP_CONFIG_FIELD_INT (HpGQAttentionConfig, head_dim, "head-dim", "Head size (0: dim / n-heads)",
                       0, G_MAXINT, 0),
  HP_CONFIG_FIELD_BOOLEAN (HpGQAttentionConfig, bias, "bias", "Projection biases", FALSE),
  HP_CONFIG_FIELD_INT (HpGQAttentionConfig, max_seq_len, "max-seq-len",
                       "Longest sequence the rotary tables cover", 1, G_MAXINT, 2048),
  HP_CONFIG_FIELD_DOUBLE (HpGQAttentionConfig, rope_theta, "rope-theta", "Rotary embedding base",
                          G_MINDOUBLE, G_MAXDOUBLE, 10000.0),
  HP_CONFIG_FIELD_ENUM (HpGQAttentionConfig, rope_scaling, "rope-scaling", "Rotary frequency scaling",
                        hp_rope_scaling_get_type, HP_ROPE_SCALING_NONE),
  HP_CONFIG_FIELD_DOUBLE (HpGQAttentionConfig, rope_scaling_factor, "rope-scaling-factor",
                          "Rotary scaling factor", G_MINDOUBLE, G_MAXDOUBLE, 8.0),
  HP_CONFIG_FIELD_DOUBLE (HpGQAttentionConfig, rope_low_freq_factor, "rope-low-freq-factor",
                          "llama3 low-frequency factor", G_MINDOUBLE, G_MAXDOUBLE, 1.0),
  HP_CONFIG_FIELD_DOUBLE (HpGQAttentionConfig, rope_high_freq_factor, "rope-high-freq-factor",
                          "llama3 high-frequency factor", G_MINDOUBLE, G_MAXDOUBLE, 4.0),
  HP_CONFIG_FIELD_INT (HpGQAttentionConfig, rope_original_max_seq_len, "rope-original-max-seq-len",
                       "llama3 original context length", 1, G_MAXINT, 8192),
  HP_CONFIG_FIELD_ENUM (HpGQAttentionConfig, dtype, "dtype", "Parameter dtype", hp_dtype_get_type,
                        HP_DTYPE_FLOAT32),
  /* the children, in the order of the enum below */
  HP_CONFIG_FIELD_OBJECT (HpGQAttentionConfig, wq, "wq", "Query projection (made from the sizes when null)",
                          hp_linear_config_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpGQAttentionConfig, wk, "wk", "Key projection (made from the sizes when null)",
                          hp_linear_config_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpGQAttentionConfig, wv, "wv", "Value projection (made from the sizes when null)",
                          hp_linear_config_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpGQAttentionConfig, wo, "wo", "Output projection (made from the sizes when null)",
                          hp_linear_config_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpGQAttentionConfig, rope, "rope", "Rotary embedding (made from the sizes when null)",
                          hp_rotary_embedding_config_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpGQAttentionConfig, inner_attention, "inner-attention",
                          "Inner attention (made from the sizes when null)", hp_sdpa_config_get_type, NULL),
};

enum {
  CHILD_WQ,
  CHILD_WK,
  CHILD_WV,
  CHILD_WO,
  CHILD_ROPE,
  CHILD_INNER_ATTENTION,
  N_CHILDREN
};

/* The table entry of the field of @child */
#define CHILD_FIELD(child) (&gqa_config_fields[G_N_ELEMENTS (gqa_config_fields) - N_CHILDREN + (child)])

/* The children's names in the module */
static const gchar * const child_names[N_CHILDREN] = {
  "wq", "wk", "wv", "wo", "rope", "inner_attention"
};

gboolean
_hp_gq_attention_config_check_sizes (HpGQAttentionConfig  *self,
                                     GError              **error)
{
  gint n_kv_heads = hp_gq_attention_config_get_n_kv_heads (self);
  gint head_dim = hp_gq_attention_config_get_head_dim (self);

  if (self->head_dim == 0 && self->dim % self->n_heads != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpGQAttention: dim %d is not a multiple of n-heads %d",
                   self->dim, self->n_heads);
      return FALSE;
    }
  if (self->n_heads % n_kv_heads != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpGQAttention: n-heads %d is not a multiple of n-kv-heads %d",
                   self->n_heads, n_kv_heads);
      return FALSE;
    }
  if (self->head_dim == 0 && head_dim % 2 != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpGQAttention: head dim %d (dim %d / n-heads %d) must be even "
                   "for the rotary embedding", head_dim, self->dim, self->n_heads);
      return FALSE;
    }
  if (head_dim % 2 != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpGQAttention: head-dim %d must be even for the rotary embedding", head_dim);
      return FALSE;
    }
  if ((gint64) self->n_heads * head_dim > G_MAXINT)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpGQAttention: head-dim %d with n-heads %d gives more than %d features",
                   head_dim, self->n_heads, G_MAXINT);
      return FALSE;
    }
  return _hp_rotary_check_scaling ("HpGQAttention: ", "rope-", self->rope_scaling,
                                   self->rope_low_freq_factor, self->rope_high_freq_factor, error) &&
         _hp_nn_check_dtype (HP_CONFIG (self), self->dtype, error);
}

static gboolean
check_dtype (HpGQAttentionConfig  *self,
             const gchar          *name,
             HpDType               dtype,
             GError              **error)
{
  if (dtype == self->dtype)
    return TRUE;
  g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "HpGQAttention: %s has dtype %s, but dtype is %s",
               name, hp_dtype_to_string (dtype), hp_dtype_to_string (self->dtype));
  return FALSE;
}

/* The in and out features of the projection @child (wq to wo) that
 * the sizes imply */
static void
projection_features (HpGQAttentionConfig *self,
                     guint                child,
                     gint                *in_features,
                     gint                *out_features)
{
  gint head_dim = hp_gq_attention_config_get_head_dim (self);
  gint heads = child == CHILD_WK || child == CHILD_WV ? hp_gq_attention_config_get_n_kv_heads (self)
                                                      : self->n_heads;

  *in_features = child == CHILD_WO ? heads * head_dim : self->dim;
  *out_features = child == CHILD_WO ? self->dim : heads * head_dim;
}

/* The projection @child, when given, has the features and dtype the
 * sizes imply */
static gboolean
check_linear (HpGQAttentionConfig  *self,
              guint                 child,
              GError              **error)
{
  HpLinearConfig *linear = G_STRUCT_MEMBER (HpLinearConfig *, self, CHILD_FIELD (child)->offset);
  const gchar *name = CHILD_FIELD (child)->name;
  gint in_features, out_features, have_in, have_out;

  if (linear == NULL)
    return TRUE;
  projection_features (self, child, &in_features, &out_features);
  have_in = hp_linear_config_get_in_features (linear);
  have_out = hp_linear_config_get_out_features (linear);
  if (have_in != in_features || have_out != out_features)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpGQAttention: %s maps %d to %d features, but dim %d with %d heads and %d "
                   "key/value heads of dim %d needs %d to %d", name, have_in, have_out,
                   self->dim, self->n_heads, hp_gq_attention_config_get_n_kv_heads (self),
                   hp_gq_attention_config_get_head_dim (self), in_features, out_features);
      return FALSE;
    }
  return check_dtype (self, name, hp_linear_config_get_dtype (linear), error);
}

/* The rotary embedding, when given, has the head dim and dtype of @self
 * (its tables may be longer than max-seq-len) */
static gboolean
check_rope (HpGQAttentionConfig  *self,
            GError              **error)
{
  gint head_dim = hp_gq_attention_config_get_head_dim (self);

  if (self->rope == NULL)
    return TRUE;
  if (hp_rotary_embedding_config_get_head_dim (self->rope) != head_dim)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpGQAttention: rope has head-dim %d, but the head dim is %d",
                   hp_rotary_embedding_config_get_head_dim (self->rope), head_dim);
      return FALSE;
    }
  return check_dtype (self, "rope", hp_rotary_embedding_config_get_dtype (self->rope), error);
}

static gboolean
hp_gq_attention_config_validate (HpConfig  *config,
                                 GError   **error)
{
  HpGQAttentionConfig *self = HP_GQ_ATTENTION_CONFIG (config);

  if (!HP_CONFIG_CLASS (hp_gq_attention_config_parent_class)->validate (config, error) ||
      !_hp_gq_attention_config_check_sizes (self, error))
    return FALSE;
  for (guint i = CHILD_WQ; i <= CHILD_WO; i++)
    if (!check_linear (self, i, error))
      return FALSE;
  return check_rope (self, error);
}

static void
hp_gq_attention_config_class_init (HpGQAttentionConfigClass *klass)
{
  HP_CONFIG_CLASS (klass)->validate = hp_gq_attention_config_validate;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), gqa_config_fields,
                                  G_N_ELEMENTS (gqa_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_GQ_ATTENTION);
}

static void
hp_gq_attention_config_init (HpGQAttentionConfig *self)
{
}

/**
 * hp_gq_attention_config_new:
 *
 * Creates a grouped-query attention configuration with the default
 * fields: dim 256, 8 heads, as many key/value heads, head dim
 * dim / n-heads, no biases, 2048 positions, rotary base 10000 without
 * scaling, float32, every child derived.
 *
 * Returns: (transfer full): a new [class@Hp.GQAttentionConfig]
 *
 * Since: 1.0
 */
HpGQAttentionConfig *
hp_gq_attention_config_new (void)
{
  return g_object_new (HP_TYPE_GQ_ATTENTION_CONFIG, NULL);
}

/**
 * hp_gq_attention_config_get_n_kv_heads:
 * @self: a grouped-query attention configuration
 *
 * Gets the number of key/value heads the module has:
 * [property@Hp.GQAttentionConfig:n-kv-heads], or
 * [property@Hp.GQAttentionConfig:n-heads] when that is 0.
 *
 * Returns: the number of key/value heads
 *
 * Since: 1.0
 */
gint
hp_gq_attention_config_get_n_kv_heads (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), 0);

  return self->n_kv_heads > 0 ? self->n_kv_heads : self->n_heads;
}

/**
 * hp_gq_attention_config_get_head_dim:
 * @self: a grouped-query attention configuration
 *
 * Gets the head dim in use: [property@Hp.GQAttentionConfig:head-dim],
 * or when that is 0 `dim / n-heads` (rounded down when n-heads does
 * not divide dim, which validation rejects).
 *
 * Returns: the head dim
 *
 * Since: 1.0
 */
gint
hp_gq_attention_config_get_head_dim (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), 0);

  return self->head_dim > 0 ? self->head_dim : self->dim / self->n_heads;
}

/* @child as given, or as the scalar fields imply it */
static HpConfig *
effective_child (HpGQAttentionConfig *self,
                 guint                child)
{
  HpConfig *given = G_STRUCT_MEMBER (HpConfig *, self, CHILD_FIELD (child)->offset);
  gint in_features, out_features;

  if (given != NULL)
    return g_object_ref (given);
  if (child == CHILD_ROPE)
    return g_object_new (HP_TYPE_ROTARY_EMBEDDING_CONFIG,
                         "head-dim", hp_gq_attention_config_get_head_dim (self),
                         "max-seq-len", self->max_seq_len,
                         "theta", self->rope_theta,
                         "scaling", self->rope_scaling,
                         "scaling-factor", self->rope_scaling_factor,
                         "low-freq-factor", self->rope_low_freq_factor,
                         "high-freq-factor", self->rope_high_freq_factor,
                         "original-max-seq-len", self->rope_original_max_seq_len,
                         "dtype", self->dtype,
                         NULL);
  if (child == CHILD_INNER_ATTENTION)
    return HP_CONFIG (hp_sdpa_config_new ());
  projection_features (self, child, &in_features, &out_features);
  return g_object_new (HP_TYPE_LINEAR_CONFIG,
                       "in-features", in_features,
                       "out-features", out_features,
                       "bias", self->bias,
                       "dtype", self->dtype,
                       NULL);
}

/**
 * hp_gq_attention_config_fill_children:
 * @self: a grouped-query attention configuration
 * @error: return location for a [struct@GLib.Error]
 *
 * Sets every child field that is %NULL to the configuration the scalar
 * fields imply, so that the children can be configured further (as
 * [func@Hp.set_gqa_attention_sharding] does). Children already set are
 * kept. Changing a scalar field afterwards does not change the
 * children.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_CONFIG][error@Hp.Error], leaving @self as it
 *   was, when the scalar fields do not fit together (see
 *   [class@Hp.GQAttention])
 *
 * Since: 1.0
 */
gboolean
hp_gq_attention_config_fill_children (HpGQAttentionConfig  *self,
                                      GError              **error)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!_hp_gq_attention_config_check_sizes (self, error))
    return FALSE;
  for (guint i = 0; i < N_CHILDREN; i++)
    {
      g_autoptr(HpConfig) child = effective_child (self, i);

      g_object_set (self, CHILD_FIELD (i)->name, child, NULL);
    }
  return TRUE;
}

/**
 * HpGQAttention:
 *
 * Grouped-query self-attention with rotary position embedding, the
 * attention of Llama 3 and torchtitan's decoders.
 *
 * Its children are `wq` [dim -> H * Dh], `wk` and `wv`
 * [dim -> Hkv * Dh], `wo` [H * Dh -> dim] ([class@Hp.Linear], with
 * biases when [property@Hp.GQAttentionConfig:bias] is set), `rope`
 * ([class@Hp.RotaryEmbedding]) and `inner_attention` ([class@Hp.SDPA]),
 * with H query heads, Hkv key/value heads and head dim Dh
 * ([property@Hp.GQAttentionConfig:head-dim], by default dim / H).
 * The forward takes `x` [B, S, dim]: it projects x to
 * q [B, S, H, Dh] and k, v [B, S, Hkv, Dh], rotates q and k, runs the
 * inner attention on (q, k, v), merges the heads back to [B, S, H * Dh]
 * and projects with `wo` to [B, S, dim]. When the inner attention also
 * returns a log-sum-exp, only the attention output is used. Inside
 * [method@Hp.Decoder.forward_with_cache] x holds the new positions
 * only: they are rotated at their positions after the cached ones, and
 * attend over the cached keys and values and their own.
 *
 * The configuration's [vfunc@Hp.Config.validate], which
 * [method@Hp.Config.build] runs, checks it ([HP_ERROR_CONFIG][error@Hp.Error]): dim must
 * be a multiple of n-heads (unless head-dim is given), n-heads a
 * multiple of the number of key/value heads, the head dim even, the
 * llama3 scaling's high-frequency factor above its low-frequency one,
 * the dtype floating-point, and
 * children given explicitly must have the sizes and dtype the scalar
 * fields imply (the rotary tables may be longer than
 * [property@Hp.GQAttentionConfig:max-seq-len]).
 *
 * Tensor parallelism: [func@Hp.set_gqa_attention_sharding] lays the
 * projections out column- and row-wise so that the heads are sharded
 * (`tp:S(2)` on [B, S, H, Dh]) between `wq`/`wk`/`wv` and `wo`, and
 * [func@Hp.set_gqa_inner_attention_local_map] runs the inner attention
 * on each rank's local heads.
 *
 * Since: 1.0
 */

struct _HpGQAttention
{
  HpModule parent_instance;

  gboolean initialized;
  /* set by hp_decoder_forward_with_cache() for the length of its call */
  HpKVCache *cache;
  guint cache_layer;
};

G_DEFINE_FINAL_TYPE (HpGQAttention, hp_gq_attention, HP_TYPE_MODULE)

static HpGQAttentionConfig *
gqa_config (HpGQAttention *self)
{
  return HP_GQ_ATTENTION_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (self)));
}

/* Builds @child and adds it under its name */
static gboolean
add_child (HpGQAttention  *self,
           guint           child,
           GError        **error)
{
  g_autoptr(HpConfig) config = effective_child (gqa_config (self), child);
  g_autoptr(GObject) built = hp_config_build (config, error);

  if (built == NULL)
    {
      g_prefix_error (error, "HpGQAttention.%s: ", child_names[child]);
      return FALSE;
    }
  return hp_module_add_child (HP_MODULE (self), child_names[child], HP_MODULE (built), error);
}

static gboolean
hp_gq_attention_setup (HpConfigurable  *configurable,
                       GError         **error)
{
  HpGQAttention *self = HP_GQ_ATTENTION (configurable);

  if (!HP_CONFIGURABLE_CLASS (hp_gq_attention_parent_class)->setup (configurable, error))
    return FALSE;

  /* an object made with g_object_new() may have any configuration */
  if (!_hp_attention_check_config (self, hp_configurable_get_config (configurable),
                                   HP_TYPE_GQ_ATTENTION_CONFIG, error))
    return FALSE;
  for (guint i = 0; i < N_CHILDREN; i++)
    if (!add_child (self, i, error))
      return FALSE;
  self->initialized = TRUE;
  return TRUE;
}

/* One tensor through one child */
static HpTensor *
run_child (HpGQAttention  *self,
           const gchar    *name,
           HpTensor       *input,
           GError        **error)
{
  return hp_module_call1 (hp_module_get_child (HP_MODULE (self), name), input, error);
}

/* @name projected from @x and split into @heads heads */
static HpTensor *
project_heads (HpGQAttention  *self,
               const gchar    *name,
               HpTensor       *x,
               gint64          heads,
               GError        **error)
{
  const gint64 *shape = hp_tensor_get_shape (x, NULL);
  gint64 head_dim = hp_gq_attention_config_get_head_dim (gqa_config (self));
  g_autoptr(HpTensor) projected = run_child (self, name, x, error);

  if (projected == NULL)
    return NULL;
  return hp_tensor_reshape (projected, (gint64[]) { shape[0], shape[1], heads, head_dim }, 4,
                            error);
}

/* The positions of the new rows: after the cached ones */
static gint64
cache_offset (HpGQAttention *self)
{
  return self->cache != NULL ? hp_kv_cache_get_length (self->cache) : 0;
}

/* @q and @k through the rotary embedding, at the positions after the
 * cached ones */
static gboolean
rotate (HpGQAttention  *self,
        HpTensor       *q,
        HpTensor       *k,
        HpTensor      **q_rotated,
        HpTensor      **k_rotated,
        GError        **error)
{
  HpRotaryEmbedding *rope = HP_ROTARY_EMBEDDING (hp_module_get_child (HP_MODULE (self), "rope"));

  _hp_rotary_embedding_set_offset (rope, cache_offset (self));
  *q_rotated = run_child (self, "rope", q, error);
  *k_rotated = *q_rotated != NULL ? run_child (self, "rope", k, error) : NULL;
  _hp_rotary_embedding_set_offset (rope, 0);
  return *k_rotated != NULL;
}

/* The inner attention of the queries over the keys and values in
 * @inner_args, which start with the cached ones */
static GPtrArray *
attend (HpGQAttention  *self,
        GPtrArray      *inner_args,
        GError        **error)
{
  HpSDPA *inner = HP_SDPA (hp_module_get_child (HP_MODULE (self), "inner_attention"));
  GPtrArray *attended;

  _hp_sdpa_set_query_offset (inner, cache_offset (self));
  attended = hp_module_call (HP_MODULE (inner), inner_args, error);
  _hp_sdpa_set_query_offset (inner, 0);
  return attended;
}

void
_hp_gq_attention_set_cache (HpGQAttention *self,
                            HpKVCache     *cache,
                            guint          layer)
{
  g_set_object (&self->cache, cache);
  self->cache_layer = layer;
}

static GPtrArray *
hp_gq_attention_forward (HpModule   *module,
                         GPtrArray  *args,
                         GError    **error)
{
  HpGQAttention *self = HP_GQ_ATTENTION (module);
  HpGQAttentionConfig *config;
  g_autoptr(HpTensor) q = NULL;
  g_autoptr(HpTensor) k = NULL;
  g_autoptr(HpTensor) v = NULL;
  g_autoptr(HpTensor) q_rotated = NULL;
  g_autoptr(HpTensor) k_rotated = NULL;
  g_autoptr(GPtrArray) inner_args = NULL;
  g_autoptr(GPtrArray) attended = NULL;
  g_autoptr(HpTensor) merged = NULL;
  HpTensor *x;
  HpTensor *out;
  GPtrArray *outputs;
  const gint64 *shape;
  guint ndim;

  if (!_hp_attention_check_ready (self, self->initialized, error) ||
      !_hp_attention_check_args (self, args, 1, error))
    return NULL;

  config = gqa_config (self);
  x = g_ptr_array_index (args, 0);
  shape = hp_tensor_get_shape (x, &ndim);
  if (ndim != 3 || shape[2] != config->dim)
    {
      g_autofree gchar *text = _hp_tensor_shape_to_string (x);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "HpGQAttention: x has shape %s, but needs [batch, seq, %d] (dim %d)",
                   text, config->dim, config->dim);
      return NULL;
    }

  q = project_heads (self, "wq", x, config->n_heads, error);
  if (q == NULL)
    return NULL;
  k = project_heads (self, "wk", x, hp_gq_attention_config_get_n_kv_heads (config), error);
  if (k == NULL)
    return NULL;
  v = project_heads (self, "wv", x, hp_gq_attention_config_get_n_kv_heads (config), error);
  if (v == NULL)
    return NULL;
  if (!rotate (self, q, k, &q_rotated, &k_rotated, error))
    return NULL;

  inner_args = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (inner_args, g_object_ref (q_rotated));
  if (self->cache == NULL)
    {
      g_ptr_array_add (inner_args, g_object_ref (k_rotated));
      g_ptr_array_add (inner_args, g_object_ref (v));
    }
  else
    {
      HpTensor *all_keys, *all_values;

      if (!_hp_kv_cache_extend (self->cache, self->cache_layer, k_rotated, v, &all_keys,
                                &all_values, error))
        return NULL;
      g_ptr_array_add (inner_args, all_keys);
      g_ptr_array_add (inner_args, all_values);
    }
  attended = attend (self, inner_args, error);
  if (attended == NULL)
    return NULL;
  merged = hp_tensor_reshape (g_ptr_array_index (attended, 0),
                              (gint64[]) { shape[0], shape[1],
                                           (gint64) config->n_heads *
                                           hp_gq_attention_config_get_head_dim (config) },
                              3, error);
  if (merged == NULL)
    return NULL;
  out = run_child (self, "wo", merged, error);
  if (out == NULL)
    return NULL;

  outputs = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (outputs, out);
  return outputs;
}

static void
hp_gq_attention_dispose (GObject *object)
{
  g_clear_object (&HP_GQ_ATTENTION (object)->cache);
  G_OBJECT_CLASS (hp_gq_attention_parent_class)->dispose (object);
}

static void
hp_gq_attention_class_init (HpGQAttentionClass *klass)
{
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = hp_gq_attention_dispose;
  HP_CONFIGURABLE_CLASS (klass)->setup = hp_gq_attention_setup;
  module_class->forward = hp_gq_attention_forward;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "x", NULL });
}

static void
hp_gq_attention_init (HpGQAttention *self)
{
}

/**
 * hp_gq_attention_new:
 * @config: a grouped-query attention configuration
 * @error: return location for a [struct@GLib.Error]
 *
 * Builds a grouped-query attention module from @config, as
 * [method@Hp.Config.build] does.
 *
 * Returns: (transfer full): the new [class@Hp.GQAttention], or %NULL
 *   with [HP_ERROR_CONFIG][error@Hp.Error] when the configuration does not fit together
 *   (see [class@Hp.GQAttention])
 *
 * Since: 1.0
 */
HpGQAttention *
hp_gq_attention_new (HpGQAttentionConfig  *config,
                     GError              **error)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_GQ_ATTENTION (hp_config_build (HP_CONFIG (config), error));
}

#include "hp-gq-attention-fields.c"
