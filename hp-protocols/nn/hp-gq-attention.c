/* hp-gq-attention.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gio/gio.h>

#include "hp-attention-private.h"
#include "hp-error.h"
#include "hp-gq-attention.h"
#include "hp-tensor-enum-types.h"
#include "hp-tensor-ops.h"
#include "hp-tensor-private.h"

/**
 * HpGQAttentionConfig:
 *
 * The configuration of a #HpGQAttention.
 *
 * The scalar fields give the sizes: the model dim, the number of query
 * heads and of key/value heads (0: as many as query heads), the head
 * dim `dim / n-heads` that follows from them, the longest sequence,
 * the rotary base and the dtype of the parameters.
 *
 * The nested fields are the configurations of the children: the four
 * projections #HpGQAttentionConfig:wq, #HpGQAttentionConfig:wk,
 * #HpGQAttentionConfig:wv and #HpGQAttentionConfig:wo,
 * #HpGQAttentionConfig:rope and #HpGQAttentionConfig:inner-attention.
 * A %NULL field stands for the configuration the scalar fields imply
 * (projections without bias, a causal #HpSDPAConfig);
 * hp_gq_attention_config_fill_children() writes those out, so that a
 * child's own fields, such as its sharding configuration, can be set.
 * A child given explicitly must agree with the scalar fields in its
 * sizes and dtype.
 */

struct _HpGQAttentionConfig
{
  HpModuleConfig parent_instance;

  gint dim;
  gint n_heads;
  gint n_kv_heads;
  gint max_seq_len;
  gdouble rope_theta;
  HpDType dtype;
  /* wq, wk, wv, wo, rope, inner-attention, in property order */
  HpConfig *children[6];
};

G_DEFINE_FINAL_TYPE (HpGQAttentionConfig, hp_gq_attention_config, HP_TYPE_MODULE_CONFIG)

enum {
  CONFIG_PROP_0,
  CONFIG_PROP_DIM,
  CONFIG_PROP_N_HEADS,
  CONFIG_PROP_N_KV_HEADS,
  CONFIG_PROP_MAX_SEQ_LEN,
  CONFIG_PROP_ROPE_THETA,
  CONFIG_PROP_DTYPE,
  CONFIG_PROP_WQ,
  CONFIG_PROP_WK,
  CONFIG_PROP_WV,
  CONFIG_PROP_WO,
  CONFIG_PROP_ROPE,
  CONFIG_PROP_INNER_ATTENTION,
  CONFIG_N_PROPS
};

static GParamSpec *config_properties[CONFIG_N_PROPS];

/* The child configuration of @prop_id; NULL when it is derived */
#define CHILD(self, prop_id) ((self)->children[(prop_id) - CONFIG_PROP_WQ])

static void
set_child (HpGQAttentionConfig *self,
           guint                prop_id,
           gpointer             child)
{
  if (g_set_object (&CHILD (self, prop_id), child))
    g_object_notify_by_pspec (G_OBJECT (self), config_properties[prop_id]);
}

static void
hp_gq_attention_config_dispose (GObject *object)
{
  HpGQAttentionConfig *self = HP_GQ_ATTENTION_CONFIG (object);

  for (guint i = 0; i < G_N_ELEMENTS (self->children); i++)
    g_clear_object (&self->children[i]);

  G_OBJECT_CLASS (hp_gq_attention_config_parent_class)->dispose (object);
}

static void
hp_gq_attention_config_get_property (GObject    *object,
                                     guint       prop_id,
                                     GValue     *value,
                                     GParamSpec *pspec)
{
  HpGQAttentionConfig *self = HP_GQ_ATTENTION_CONFIG (object);

  switch (prop_id)
    {
    case CONFIG_PROP_DIM:
      g_value_set_int (value, self->dim);
      break;
    case CONFIG_PROP_N_HEADS:
      g_value_set_int (value, self->n_heads);
      break;
    case CONFIG_PROP_N_KV_HEADS:
      g_value_set_int (value, self->n_kv_heads);
      break;
    case CONFIG_PROP_MAX_SEQ_LEN:
      g_value_set_int (value, self->max_seq_len);
      break;
    case CONFIG_PROP_ROPE_THETA:
      g_value_set_double (value, self->rope_theta);
      break;
    case CONFIG_PROP_DTYPE:
      g_value_set_enum (value, self->dtype);
      break;
    case CONFIG_PROP_WQ:
    case CONFIG_PROP_WK:
    case CONFIG_PROP_WV:
    case CONFIG_PROP_WO:
    case CONFIG_PROP_ROPE:
    case CONFIG_PROP_INNER_ATTENTION:
      g_value_set_object (value, CHILD (self, prop_id));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_int (GObject      *object,
         gint         *field,
         const GValue *value,
         GParamSpec   *pspec)
{
  if (*field == g_value_get_int (value))
    return;
  *field = g_value_get_int (value);
  g_object_notify_by_pspec (object, pspec);
}

static void
hp_gq_attention_config_set_property (GObject      *object,
                                     guint         prop_id,
                                     const GValue *value,
                                     GParamSpec   *pspec)
{
  HpGQAttentionConfig *self = HP_GQ_ATTENTION_CONFIG (object);

  switch (prop_id)
    {
    case CONFIG_PROP_DIM:
      set_int (object, &self->dim, value, pspec);
      break;
    case CONFIG_PROP_N_HEADS:
      set_int (object, &self->n_heads, value, pspec);
      break;
    case CONFIG_PROP_N_KV_HEADS:
      set_int (object, &self->n_kv_heads, value, pspec);
      break;
    case CONFIG_PROP_MAX_SEQ_LEN:
      set_int (object, &self->max_seq_len, value, pspec);
      break;
    case CONFIG_PROP_ROPE_THETA:
      if (self->rope_theta != g_value_get_double (value))
        {
          self->rope_theta = g_value_get_double (value);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case CONFIG_PROP_DTYPE:
      if (self->dtype != (HpDType) g_value_get_enum (value))
        {
          self->dtype = g_value_get_enum (value);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case CONFIG_PROP_WQ:
    case CONFIG_PROP_WK:
    case CONFIG_PROP_WV:
    case CONFIG_PROP_WO:
    case CONFIG_PROP_ROPE:
    case CONFIG_PROP_INNER_ATTENTION:
      set_child (self, prop_id, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_gq_attention_config_class_init (HpGQAttentionConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = hp_gq_attention_config_dispose;
  object_class->get_property = hp_gq_attention_config_get_property;
  object_class->set_property = hp_gq_attention_config_set_property;

  /**
   * HpGQAttentionConfig:dim:
   *
   * The model dim: the size of the last dim of the input and output.
   * It must be a multiple of #HpGQAttentionConfig:n-heads.
   */
  config_properties[CONFIG_PROP_DIM] =
    g_param_spec_int ("dim", NULL, "Model width", 1, G_MAXINT, 256, flags);

  /**
   * HpGQAttentionConfig:n-heads:
   *
   * The number of query heads.
   */
  config_properties[CONFIG_PROP_N_HEADS] =
    g_param_spec_int ("n-heads", NULL, "Query heads", 1, G_MAXINT, 8, flags);

  /**
   * HpGQAttentionConfig:n-kv-heads:
   *
   * The number of key/value heads, which must divide
   * #HpGQAttentionConfig:n-heads; 0 means as many as query heads
   * (multi-head attention).
   */
  config_properties[CONFIG_PROP_N_KV_HEADS] =
    g_param_spec_int ("n-kv-heads", NULL, "Key/value heads (0: n-heads)", 0, G_MAXINT, 0, flags);

  /**
   * HpGQAttentionConfig:max-seq-len:
   *
   * The longest sequence, the length of the rotary tables.
   */
  config_properties[CONFIG_PROP_MAX_SEQ_LEN] =
    g_param_spec_int ("max-seq-len", NULL, "Longest sequence the rotary tables cover", 1, G_MAXINT, 2048, flags);

  /**
   * HpGQAttentionConfig:rope-theta:
   *
   * The base of the rotary frequencies.
   */
  config_properties[CONFIG_PROP_ROPE_THETA] =
    g_param_spec_double ("rope-theta", NULL, "Rotary embedding base", G_MINDOUBLE, G_MAXDOUBLE, 10000.0, flags);

  /**
   * HpGQAttentionConfig:dtype:
   *
   * The dtype of the parameters and of the rotary tables.
   */
  config_properties[CONFIG_PROP_DTYPE] =
    g_param_spec_enum ("dtype", NULL, "Parameter dtype", HP_TYPE_DTYPE, HP_DTYPE_FLOAT32, flags);

  /**
   * HpGQAttentionConfig:wq:
   *
   * The query projection, [dim -> n-heads * head dim]; %NULL: derived
   * from the scalar fields.
   */
  config_properties[CONFIG_PROP_WQ] =
    g_param_spec_object ("wq", NULL, "Query projection (made from the sizes when null)", HP_TYPE_LINEAR_CONFIG, flags);

  /**
   * HpGQAttentionConfig:wk:
   *
   * The key projection, [dim -> n-kv-heads * head dim]; %NULL: derived
   * from the scalar fields.
   */
  config_properties[CONFIG_PROP_WK] =
    g_param_spec_object ("wk", NULL, "Key projection (made from the sizes when null)", HP_TYPE_LINEAR_CONFIG, flags);

  /**
   * HpGQAttentionConfig:wv:
   *
   * The value projection, [dim -> n-kv-heads * head dim]; %NULL:
   * derived from the scalar fields.
   */
  config_properties[CONFIG_PROP_WV] =
    g_param_spec_object ("wv", NULL, "Value projection (made from the sizes when null)", HP_TYPE_LINEAR_CONFIG, flags);

  /**
   * HpGQAttentionConfig:wo:
   *
   * The output projection, [n-heads * head dim -> dim]; %NULL: derived
   * from the scalar fields.
   */
  config_properties[CONFIG_PROP_WO] =
    g_param_spec_object ("wo", NULL, "Output projection (made from the sizes when null)", HP_TYPE_LINEAR_CONFIG, flags);

  /**
   * HpGQAttentionConfig:rope:
   *
   * The rotary embedding of queries and keys; %NULL: derived from the
   * scalar fields.
   */
  config_properties[CONFIG_PROP_ROPE] =
    g_param_spec_object ("rope", NULL, "Rotary embedding (made from the sizes when null)", HP_TYPE_ROTARY_EMBEDDING_CONFIG, flags);

  /**
   * HpGQAttentionConfig:inner-attention:
   *
   * The attention over the projected, rotated heads; %NULL: a default
   * (causal) #HpSDPAConfig.
   */
  config_properties[CONFIG_PROP_INNER_ATTENTION] =
    g_param_spec_object ("inner-attention", NULL, "Inner attention (made from the sizes when null)", HP_TYPE_SDPA_CONFIG, flags);

  g_object_class_install_properties (object_class, CONFIG_N_PROPS, config_properties);

  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_GQ_ATTENTION);
}

static void
hp_gq_attention_config_init (HpGQAttentionConfig *self)
{
  self->dim = 256;
  self->n_heads = 8;
  self->max_seq_len = 2048;
  self->rope_theta = 10000.0;
  self->dtype = HP_DTYPE_FLOAT32;
}

/**
 * hp_gq_attention_config_new:
 *
 * Creates a grouped-query attention configuration with the default
 * fields: dim 256, 8 heads, as many key/value heads, 2048 positions,
 * rotary base 10000, float32, every child derived.
 *
 * Returns: (transfer full): a new #HpGQAttentionConfig
 */
HpGQAttentionConfig *
hp_gq_attention_config_new (void)
{
  return g_object_new (HP_TYPE_GQ_ATTENTION_CONFIG, NULL);
}

/**
 * hp_gq_attention_config_get_dim:
 * @self: a #HpGQAttentionConfig
 *
 * Gets the model dim.
 *
 * Returns: the #HpGQAttentionConfig:dim
 */
gint
hp_gq_attention_config_get_dim (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), 0);

  return self->dim;
}

/**
 * hp_gq_attention_config_get_n_heads:
 * @self: a #HpGQAttentionConfig
 *
 * Gets the number of query heads.
 *
 * Returns: the #HpGQAttentionConfig:n-heads
 */
gint
hp_gq_attention_config_get_n_heads (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), 0);

  return self->n_heads;
}

/**
 * hp_gq_attention_config_get_n_kv_heads:
 * @self: a #HpGQAttentionConfig
 *
 * Gets the number of key/value heads the module has:
 * #HpGQAttentionConfig:n-kv-heads, or #HpGQAttentionConfig:n-heads
 * when that is 0.
 *
 * Returns: the number of key/value heads
 */
gint
hp_gq_attention_config_get_n_kv_heads (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), 0);

  return self->n_kv_heads > 0 ? self->n_kv_heads : self->n_heads;
}

/**
 * hp_gq_attention_config_get_head_dim:
 * @self: a #HpGQAttentionConfig
 *
 * Gets the head dim, `dim / n-heads` (rounded down when n-heads does
 * not divide dim, which building rejects).
 *
 * Returns: the head dim
 */
gint
hp_gq_attention_config_get_head_dim (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), 0);

  return self->dim / self->n_heads;
}

/**
 * hp_gq_attention_config_get_max_seq_len:
 * @self: a #HpGQAttentionConfig
 *
 * Gets the longest sequence.
 *
 * Returns: the #HpGQAttentionConfig:max-seq-len
 */
gint
hp_gq_attention_config_get_max_seq_len (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), 0);

  return self->max_seq_len;
}

/**
 * hp_gq_attention_config_get_rope_theta:
 * @self: a #HpGQAttentionConfig
 *
 * Gets the base of the rotary frequencies.
 *
 * Returns: the #HpGQAttentionConfig:rope-theta
 */
gdouble
hp_gq_attention_config_get_rope_theta (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), 0.0);

  return self->rope_theta;
}

/**
 * hp_gq_attention_config_get_dtype:
 * @self: a #HpGQAttentionConfig
 *
 * Gets the dtype of the parameters.
 *
 * Returns: the #HpGQAttentionConfig:dtype
 */
HpDType
hp_gq_attention_config_get_dtype (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), HP_DTYPE_FLOAT32);

  return self->dtype;
}

/**
 * hp_gq_attention_config_get_wq:
 * @self: a #HpGQAttentionConfig
 *
 * Gets the configuration of the query projection.
 *
 * Returns: (transfer none) (nullable): the #HpGQAttentionConfig:wq
 */
HpLinearConfig *
hp_gq_attention_config_get_wq (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), NULL);

  return (gpointer) CHILD (self, CONFIG_PROP_WQ);
}

/**
 * hp_gq_attention_config_set_wq:
 * @self: a #HpGQAttentionConfig
 * @wq: (nullable): the configuration, or %NULL to derive it
 *
 * Sets #HpGQAttentionConfig:wq. The object is shared, not copied.
 */
void
hp_gq_attention_config_set_wq (HpGQAttentionConfig *self,
                               HpLinearConfig      *wq)
{
  g_return_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self));
  g_return_if_fail (wq == NULL || HP_IS_LINEAR_CONFIG (wq));

  set_child (self, CONFIG_PROP_WQ, wq);
}

/**
 * hp_gq_attention_config_get_wk:
 * @self: a #HpGQAttentionConfig
 *
 * Gets the configuration of the key projection.
 *
 * Returns: (transfer none) (nullable): the #HpGQAttentionConfig:wk
 */
HpLinearConfig *
hp_gq_attention_config_get_wk (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), NULL);

  return (gpointer) CHILD (self, CONFIG_PROP_WK);
}

/**
 * hp_gq_attention_config_set_wk:
 * @self: a #HpGQAttentionConfig
 * @wk: (nullable): the configuration, or %NULL to derive it
 *
 * Sets #HpGQAttentionConfig:wk. The object is shared, not copied.
 */
void
hp_gq_attention_config_set_wk (HpGQAttentionConfig *self,
                               HpLinearConfig      *wk)
{
  g_return_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self));
  g_return_if_fail (wk == NULL || HP_IS_LINEAR_CONFIG (wk));

  set_child (self, CONFIG_PROP_WK, wk);
}

/**
 * hp_gq_attention_config_get_wv:
 * @self: a #HpGQAttentionConfig
 *
 * Gets the configuration of the value projection.
 *
 * Returns: (transfer none) (nullable): the #HpGQAttentionConfig:wv
 */
HpLinearConfig *
hp_gq_attention_config_get_wv (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), NULL);

  return (gpointer) CHILD (self, CONFIG_PROP_WV);
}

/**
 * hp_gq_attention_config_set_wv:
 * @self: a #HpGQAttentionConfig
 * @wv: (nullable): the configuration, or %NULL to derive it
 *
 * Sets #HpGQAttentionConfig:wv. The object is shared, not copied.
 */
void
hp_gq_attention_config_set_wv (HpGQAttentionConfig *self,
                               HpLinearConfig      *wv)
{
  g_return_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self));
  g_return_if_fail (wv == NULL || HP_IS_LINEAR_CONFIG (wv));

  set_child (self, CONFIG_PROP_WV, wv);
}

/**
 * hp_gq_attention_config_get_wo:
 * @self: a #HpGQAttentionConfig
 *
 * Gets the configuration of the output projection.
 *
 * Returns: (transfer none) (nullable): the #HpGQAttentionConfig:wo
 */
HpLinearConfig *
hp_gq_attention_config_get_wo (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), NULL);

  return (gpointer) CHILD (self, CONFIG_PROP_WO);
}

/**
 * hp_gq_attention_config_set_wo:
 * @self: a #HpGQAttentionConfig
 * @wo: (nullable): the configuration, or %NULL to derive it
 *
 * Sets #HpGQAttentionConfig:wo. The object is shared, not copied.
 */
void
hp_gq_attention_config_set_wo (HpGQAttentionConfig *self,
                               HpLinearConfig      *wo)
{
  g_return_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self));
  g_return_if_fail (wo == NULL || HP_IS_LINEAR_CONFIG (wo));

  set_child (self, CONFIG_PROP_WO, wo);
}

/**
 * hp_gq_attention_config_get_rope:
 * @self: a #HpGQAttentionConfig
 *
 * Gets the configuration of the rotary embedding.
 *
 * Returns: (transfer none) (nullable): the #HpGQAttentionConfig:rope
 */
HpRotaryEmbeddingConfig *
hp_gq_attention_config_get_rope (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), NULL);

  return (gpointer) CHILD (self, CONFIG_PROP_ROPE);
}

/**
 * hp_gq_attention_config_set_rope:
 * @self: a #HpGQAttentionConfig
 * @rope: (nullable): the configuration, or %NULL to derive it
 *
 * Sets #HpGQAttentionConfig:rope. The object is shared, not copied.
 */
void
hp_gq_attention_config_set_rope (HpGQAttentionConfig     *self,
                                 HpRotaryEmbeddingConfig *rope)
{
  g_return_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self));
  g_return_if_fail (rope == NULL || HP_IS_ROTARY_EMBEDDING_CONFIG (rope));

  set_child (self, CONFIG_PROP_ROPE, rope);
}

/**
 * hp_gq_attention_config_get_inner_attention:
 * @self: a #HpGQAttentionConfig
 *
 * Gets the configuration of the inner attention.
 *
 * Returns: (transfer none) (nullable): the
 *   #HpGQAttentionConfig:inner-attention
 */
HpSDPAConfig *
hp_gq_attention_config_get_inner_attention (HpGQAttentionConfig *self)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), NULL);

  return (gpointer) CHILD (self, CONFIG_PROP_INNER_ATTENTION);
}

/**
 * hp_gq_attention_config_set_inner_attention:
 * @self: a #HpGQAttentionConfig
 * @inner_attention: (nullable): the configuration, or %NULL for the
 *   default
 *
 * Sets #HpGQAttentionConfig:inner-attention. The object is shared, not
 * copied.
 */
void
hp_gq_attention_config_set_inner_attention (HpGQAttentionConfig *self,
                                            HpSDPAConfig        *inner_attention)
{
  g_return_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self));
  g_return_if_fail (inner_attention == NULL || HP_IS_SDPA_CONFIG (inner_attention));

  set_child (self, CONFIG_PROP_INNER_ATTENTION, inner_attention);
}

/* The checks on the scalar fields */
static gboolean
check_sizes (HpGQAttentionConfig  *self,
             GError              **error)
{
  gint n_kv_heads = hp_gq_attention_config_get_n_kv_heads (self);

  if (self->dim % self->n_heads != 0)
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
  if ((self->dim / self->n_heads) % 2 != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpGQAttention: head dim %d (dim %d / n-heads %d) must be even "
                   "for the rotary embedding", self->dim / self->n_heads, self->dim,
                   self->n_heads);
      return FALSE;
    }
  if (!hp_dtype_is_floating (self->dtype))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpGQAttention: dtype %s is not a floating-point type",
                   hp_dtype_to_string (self->dtype));
      return FALSE;
    }
  return TRUE;
}

gboolean
_hp_gq_attention_config_check_sizes (HpGQAttentionConfig  *config,
                                     GError              **error)
{
  return check_sizes (config, error);
}

static HpLinearConfig *
derive_linear (HpGQAttentionConfig *self,
               gint                 in_features,
               gint                 out_features)
{
  return g_object_new (HP_TYPE_LINEAR_CONFIG,
                       "in-features", in_features,
                       "out-features", out_features,
                       "dtype", self->dtype,
                       NULL);
}

/* The child at @prop_id as given, or as the scalar fields (checked
 * already) imply it */
static HpConfig *
effective_child (HpGQAttentionConfig *self,
                 guint                prop_id)
{
  gint head_dim = self->dim / self->n_heads;
  gint q_features = self->n_heads * head_dim;
  gint kv_features = hp_gq_attention_config_get_n_kv_heads (self) * head_dim;
  HpConfig *given = CHILD (self, prop_id);

  if (given != NULL)
    return g_object_ref (given);

  switch (prop_id)
    {
    case CONFIG_PROP_WQ:
      return HP_CONFIG (derive_linear (self, self->dim, q_features));
    case CONFIG_PROP_WK:
    case CONFIG_PROP_WV:
      return HP_CONFIG (derive_linear (self, self->dim, kv_features));
    case CONFIG_PROP_WO:
      return HP_CONFIG (derive_linear (self, q_features, self->dim));
    case CONFIG_PROP_ROPE:
      return g_object_new (HP_TYPE_ROTARY_EMBEDDING_CONFIG,
                           "head-dim", head_dim,
                           "max-seq-len", self->max_seq_len,
                           "theta", self->rope_theta,
                           "dtype", self->dtype,
                           NULL);
    case CONFIG_PROP_INNER_ATTENTION:
      return HP_CONFIG (hp_sdpa_config_new ());
    default:
      g_return_val_if_reached (NULL);
    }
}

/**
 * hp_gq_attention_config_fill_children:
 * @self: a #HpGQAttentionConfig
 * @error: return location for a #GError
 *
 * Sets every child field that is %NULL to the configuration the scalar
 * fields imply, so that the children can be configured further (as
 * hp_set_gqa_attention_sharding() does). Children already set are kept.
 * Changing a scalar field afterwards does not change the children.
 *
 * Returns: %TRUE, or %FALSE with %HP_ERROR_CONFIG, leaving @self as it
 *   was, when the scalar fields do not fit together (see
 *   #HpGQAttention)
 */
gboolean
hp_gq_attention_config_fill_children (HpGQAttentionConfig  *self,
                                      GError              **error)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_sizes (self, error))
    return FALSE;
  for (guint prop_id = CONFIG_PROP_WQ; prop_id <= CONFIG_PROP_INNER_ATTENTION; prop_id++)
    {
      g_autoptr(HpConfig) child = effective_child (self, prop_id);

      set_child (self, prop_id, child);
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
 * [dim -> Hkv * Dh], `wo` [H * Dh -> dim] (#HpLinear without bias),
 * `rope` (#HpRotaryEmbedding) and `inner_attention` (#HpSDPA), with H
 * query heads, Hkv key/value heads and head dim Dh = dim / H. The
 * forward takes `x` [B, S, dim]: it projects x to q [B, S, H, Dh] and
 * k, v [B, S, Hkv, Dh], rotates q and k, runs the inner attention on
 * (q, k, v), merges the heads back to [B, S, H * Dh] and projects with
 * `wo` to [B, S, dim]. When the inner attention also returns a
 * log-sum-exp, only the attention output is used.
 *
 * Building checks the configuration (#GInitable; %HP_ERROR_CONFIG):
 * dim must be a multiple of n-heads, n-heads a multiple of the number
 * of key/value heads, the head dim even, the dtype floating-point, and
 * children given explicitly must have the sizes and dtype the scalar
 * fields imply (the rotary tables may be longer than
 * #HpGQAttentionConfig:max-seq-len).
 *
 * Tensor parallelism: hp_set_gqa_attention_sharding() lays the
 * projections out column- and row-wise so that the heads are sharded
 * (`tp:S(2)` on [B, S, H, Dh]) between `wq`/`wk`/`wv` and `wo`, and
 * hp_set_gqa_inner_attention_local_map() runs the inner attention on
 * each rank's local heads.
 */

struct _HpGQAttention
{
  HpModule parent_instance;

  gboolean initialized;
};

G_DEFINE_FINAL_TYPE (HpGQAttention, hp_gq_attention, HP_TYPE_MODULE)

static HpGQAttentionConfig *
gqa_config (HpGQAttention *self)
{
  return HP_GQ_ATTENTION_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (self)));
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

/* The projection at @prop_id, when given, maps @in_features to
 * @out_features in the dtype of @self */
static gboolean
check_linear (HpGQAttentionConfig  *self,
              guint                 prop_id,
              gint                  in_features,
              gint                  out_features,
              GError              **error)
{
  HpLinearConfig *linear = (gpointer) CHILD (self, prop_id);
  const gchar *name = config_properties[prop_id]->name;
  gint have_in, have_out;

  if (linear == NULL)
    return TRUE;
  have_in = hp_linear_config_get_in_features (linear);
  have_out = hp_linear_config_get_out_features (linear);
  if (have_in != in_features || have_out != out_features)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpGQAttention: %s maps %d to %d features, but dim %d with %d heads and %d "
                   "key/value heads of dim %d needs %d to %d", name, have_in, have_out,
                   self->dim, self->n_heads, hp_gq_attention_config_get_n_kv_heads (self),
                   self->dim / self->n_heads, in_features, out_features);
      return FALSE;
    }
  return check_dtype (self, name, hp_linear_config_get_dtype (linear), error);
}

/* The rotary embedding, when given, has the head dim and dtype of @self */
static gboolean
check_rope (HpGQAttentionConfig  *self,
            GError              **error)
{
  HpRotaryEmbeddingConfig *rope = (gpointer) CHILD (self, CONFIG_PROP_ROPE);
  gint head_dim = self->dim / self->n_heads;

  if (rope == NULL)
    return TRUE;
  if (hp_rotary_embedding_config_get_head_dim (rope) != head_dim)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpGQAttention: rope has head-dim %d, but the head dim is %d",
                   hp_rotary_embedding_config_get_head_dim (rope), head_dim);
      return FALSE;
    }
  return check_dtype (self, "rope", hp_rotary_embedding_config_get_dtype (rope), error);
}

/* Builds the child of @prop_id under @name */
static gboolean
add_child (HpGQAttention  *self,
           guint           prop_id,
           const gchar    *name,
           GError        **error)
{
  g_autoptr(HpConfig) config = effective_child (gqa_config (self), prop_id);
  g_autoptr(GObject) child = hp_config_build (config, error);

  if (child == NULL)
    {
      g_prefix_error (error, "HpGQAttention.%s: ", name);
      return FALSE;
    }
  return hp_module_add_child (HP_MODULE (self), name, HP_MODULE (child), error);
}

static gboolean
hp_gq_attention_setup (HpConfigurable  *configurable,
                       GError         **error)
{
  HpGQAttention *self = HP_GQ_ATTENTION (configurable);
  HpConfig *base = hp_configurable_get_config (HP_CONFIGURABLE (self));
  HpGQAttentionConfig *config;
  gint q_features, kv_features;

  if (!HP_CONFIGURABLE_CLASS (hp_gq_attention_parent_class)->setup (configurable, error))
    return FALSE;

  if (self->initialized)
    return TRUE;
  if (!_hp_attention_check_config (self, base, HP_TYPE_GQ_ATTENTION_CONFIG, error))
    return FALSE;
  config = HP_GQ_ATTENTION_CONFIG (base);
  if (!check_sizes (config, error))
    return FALSE;

  q_features = config->dim;
  kv_features = hp_gq_attention_config_get_n_kv_heads (config) * (config->dim / config->n_heads);
  if (!check_linear (config, CONFIG_PROP_WQ, config->dim, q_features, error) ||
      !check_linear (config, CONFIG_PROP_WK, config->dim, kv_features, error) ||
      !check_linear (config, CONFIG_PROP_WV, config->dim, kv_features, error) ||
      !check_linear (config, CONFIG_PROP_WO, q_features, config->dim, error) ||
      !check_rope (config, error))
    return FALSE;

  if (!add_child (self, CONFIG_PROP_WQ, "wq", error) ||
      !add_child (self, CONFIG_PROP_WK, "wk", error) ||
      !add_child (self, CONFIG_PROP_WV, "wv", error) ||
      !add_child (self, CONFIG_PROP_WO, "wo", error) ||
      !add_child (self, CONFIG_PROP_ROPE, "rope", error) ||
      !add_child (self, CONFIG_PROP_INNER_ATTENTION, "inner_attention", error))
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
  q_rotated = run_child (self, "rope", q, error);
  if (q_rotated == NULL)
    return NULL;
  k_rotated = run_child (self, "rope", k, error);
  if (k_rotated == NULL)
    return NULL;

  inner_args = g_ptr_array_new ();
  g_ptr_array_add (inner_args, q_rotated);
  g_ptr_array_add (inner_args, k_rotated);
  g_ptr_array_add (inner_args, v);
  attended = hp_module_call (hp_module_get_child (module, "inner_attention"), inner_args,
                                error);
  if (attended == NULL)
    return NULL;
  merged = hp_tensor_reshape (g_ptr_array_index (attended, 0),
                              (gint64[]) { shape[0], shape[1], config->dim }, 3, error);
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
hp_gq_attention_class_init (HpGQAttentionClass *klass)
{
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

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
 * @config: a #HpGQAttentionConfig
 * @error: return location for a #GError
 *
 * Builds a grouped-query attention module from @config, as
 * hp_config_build() does.
 *
 * Returns: (transfer full): the new #HpGQAttention, or %NULL with
 *   %HP_ERROR_CONFIG when the configuration does not fit together (see
 *   #HpGQAttention)
 */
HpGQAttention *
hp_gq_attention_new (HpGQAttentionConfig  *config,
                     GError              **error)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_GQ_ATTENTION (hp_config_build (HP_CONFIG (config), error));
}
