/* hp-transformer-block.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gio/gio.h>

#include "hp-error.h"
#include "hp-tensor-ops.h"
#include "hp-transformer-block.h"

/**
 * HpTransformerBlockConfig:
 *
 * The configuration of one #HpTransformerBlock: the configurations of
 * its attention, its feed-forward network and its two norms, each a
 * field of its own so that paths such as `attention.n-heads` reach
 * them.
 */

struct _HpTransformerBlockConfig
{
  HpModuleConfig parent_instance;

  HpGQAttentionConfig *attention;
  HpFeedForwardConfig *feed_forward;
  HpRMSNormConfig *attention_norm;
  HpRMSNormConfig *ffn_norm;
};

G_DEFINE_FINAL_TYPE (HpTransformerBlockConfig, hp_transformer_block_config, HP_TYPE_MODULE_CONFIG)

enum {
  CONFIG_PROP_0,
  CONFIG_PROP_ATTENTION,
  CONFIG_PROP_FEED_FORWARD,
  CONFIG_PROP_ATTENTION_NORM,
  CONFIG_PROP_FFN_NORM,
  CONFIG_N_PROPS
};

static GParamSpec *config_properties[CONFIG_N_PROPS];

static gpointer *
config_field (HpTransformerBlockConfig *self,
              guint                     prop_id)
{
  switch (prop_id)
    {
    case CONFIG_PROP_ATTENTION:
      return (gpointer *) &self->attention;
    case CONFIG_PROP_FEED_FORWARD:
      return (gpointer *) &self->feed_forward;
    case CONFIG_PROP_ATTENTION_NORM:
      return (gpointer *) &self->attention_norm;
    case CONFIG_PROP_FFN_NORM:
      return (gpointer *) &self->ffn_norm;
    default:
      return NULL;
    }
}

static void
hp_transformer_block_config_dispose (GObject *object)
{
  HpTransformerBlockConfig *self = HP_TRANSFORMER_BLOCK_CONFIG (object);

  g_clear_object (&self->attention);
  g_clear_object (&self->feed_forward);
  g_clear_object (&self->attention_norm);
  g_clear_object (&self->ffn_norm);

  G_OBJECT_CLASS (hp_transformer_block_config_parent_class)->dispose (object);
}

static void
hp_transformer_block_config_get_property (GObject    *object,
                                          guint       prop_id,
                                          GValue     *value,
                                          GParamSpec *pspec)
{
  gpointer *field = config_field (HP_TRANSFORMER_BLOCK_CONFIG (object), prop_id);

  if (field == NULL)
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  g_value_set_object (value, *field);
}

static void
hp_transformer_block_config_set_property (GObject      *object,
                                          guint         prop_id,
                                          const GValue *value,
                                          GParamSpec   *pspec)
{
  gpointer *field = config_field (HP_TRANSFORMER_BLOCK_CONFIG (object), prop_id);

  if (field == NULL)
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  if (g_set_object ((GObject **) field, g_value_get_object (value)))
    g_object_notify_by_pspec (object, pspec);
}

static void
hp_transformer_block_config_class_init (HpTransformerBlockConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = hp_transformer_block_config_dispose;
  object_class->get_property = hp_transformer_block_config_get_property;
  object_class->set_property = hp_transformer_block_config_set_property;

  /**
   * HpTransformerBlockConfig:attention:
   *
   * The configuration of the attention.
   */
  config_properties[CONFIG_PROP_ATTENTION] =
    g_param_spec_object ("attention", NULL, "Attention",
                         HP_TYPE_GQ_ATTENTION_CONFIG,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpTransformerBlockConfig:feed-forward:
   *
   * The configuration of the feed-forward network.
   */
  config_properties[CONFIG_PROP_FEED_FORWARD] =
    g_param_spec_object ("feed-forward", NULL, "Feed-forward network",
                         HP_TYPE_FEED_FORWARD_CONFIG,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpTransformerBlockConfig:attention-norm:
   *
   * The configuration of the norm before the attention.
   */
  config_properties[CONFIG_PROP_ATTENTION_NORM] =
    g_param_spec_object ("attention-norm", NULL, "Norm before the attention",
                         HP_TYPE_RMS_NORM_CONFIG,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpTransformerBlockConfig:ffn-norm:
   *
   * The configuration of the norm before the feed-forward network.
   */
  config_properties[CONFIG_PROP_FFN_NORM] =
    g_param_spec_object ("ffn-norm", NULL, "Norm before the feed-forward network",
                         HP_TYPE_RMS_NORM_CONFIG,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, CONFIG_N_PROPS, config_properties);

  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_TRANSFORMER_BLOCK);
}

static void
hp_transformer_block_config_init (HpTransformerBlockConfig *self)
{
}

/**
 * hp_transformer_block_config_new:
 * @attention: the attention's configuration
 * @feed_forward: the feed-forward network's configuration
 * @attention_norm: the configuration of the norm before the attention
 * @ffn_norm: the configuration of the norm before the feed-forward
 *   network
 *
 * Creates a block configuration holding the four configurations (by
 * reference).
 *
 * Returns: (transfer full): a new #HpTransformerBlockConfig
 */
HpTransformerBlockConfig *
hp_transformer_block_config_new (HpGQAttentionConfig *attention,
                                 HpFeedForwardConfig *feed_forward,
                                 HpRMSNormConfig     *attention_norm,
                                 HpRMSNormConfig     *ffn_norm)
{
  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (attention), NULL);
  g_return_val_if_fail (HP_IS_FEED_FORWARD_CONFIG (feed_forward), NULL);
  g_return_val_if_fail (HP_IS_RMS_NORM_CONFIG (attention_norm), NULL);
  g_return_val_if_fail (HP_IS_RMS_NORM_CONFIG (ffn_norm), NULL);

  return g_object_new (HP_TYPE_TRANSFORMER_BLOCK_CONFIG,
                       "attention", attention,
                       "feed-forward", feed_forward,
                       "attention-norm", attention_norm,
                       "ffn-norm", ffn_norm,
                       NULL);
}

/**
 * hp_transformer_block_config_get_attention:
 * @self: a #HpTransformerBlockConfig
 *
 * Gets the attention's configuration.
 *
 * Returns: (transfer none) (nullable): the #HpTransformerBlockConfig:attention
 */
HpGQAttentionConfig *
hp_transformer_block_config_get_attention (HpTransformerBlockConfig *self)
{
  g_return_val_if_fail (HP_IS_TRANSFORMER_BLOCK_CONFIG (self), NULL);

  return self->attention;
}

/**
 * hp_transformer_block_config_get_feed_forward:
 * @self: a #HpTransformerBlockConfig
 *
 * Gets the feed-forward network's configuration.
 *
 * Returns: (transfer none) (nullable): the
 *   #HpTransformerBlockConfig:feed-forward
 */
HpFeedForwardConfig *
hp_transformer_block_config_get_feed_forward (HpTransformerBlockConfig *self)
{
  g_return_val_if_fail (HP_IS_TRANSFORMER_BLOCK_CONFIG (self), NULL);

  return self->feed_forward;
}

/**
 * hp_transformer_block_config_get_attention_norm:
 * @self: a #HpTransformerBlockConfig
 *
 * Gets the configuration of the norm before the attention.
 *
 * Returns: (transfer none) (nullable): the
 *   #HpTransformerBlockConfig:attention-norm
 */
HpRMSNormConfig *
hp_transformer_block_config_get_attention_norm (HpTransformerBlockConfig *self)
{
  g_return_val_if_fail (HP_IS_TRANSFORMER_BLOCK_CONFIG (self), NULL);

  return self->attention_norm;
}

/**
 * hp_transformer_block_config_get_ffn_norm:
 * @self: a #HpTransformerBlockConfig
 *
 * Gets the configuration of the norm before the feed-forward network.
 *
 * Returns: (transfer none) (nullable): the #HpTransformerBlockConfig:ffn-norm
 */
HpRMSNormConfig *
hp_transformer_block_config_get_ffn_norm (HpTransformerBlockConfig *self)
{
  g_return_val_if_fail (HP_IS_TRANSFORMER_BLOCK_CONFIG (self), NULL);

  return self->ffn_norm;
}

/**
 * HpTransformerBlock:
 *
 * One layer of a Llama-style decoder, with pre-norm residual
 * connections: `h = x + attention (attention_norm (x))`, then
 * `out = h + feed_forward (ffn_norm (h))`. Its children are named
 * `attention_norm`, `attention`, `ffn_norm` and `feed_forward`, as in
 * torchtitan, and are built from the four configurations of its
 * #HpTransformerBlockConfig, each keeping its own sharding
 * configuration.
 */

struct _HpTransformerBlock
{
  HpModule parent_instance;
};

G_DEFINE_FINAL_TYPE (HpTransformerBlock, hp_transformer_block, HP_TYPE_MODULE)

static const struct
{
  const gchar *field;
  const gchar *child;
} block_children[] = {
  { "attention-norm", "attention_norm" },
  { "attention", "attention" },
  { "ffn-norm", "ffn_norm" },
  { "feed-forward", "feed_forward" },
};

static gboolean
hp_transformer_block_setup (HpConfigurable  *configurable,
                            GError         **error)
{
  HpModule *module = HP_MODULE (configurable);
  HpConfig *config = hp_configurable_get_config (HP_CONFIGURABLE (configurable));

  if (!HP_CONFIGURABLE_CLASS (hp_transformer_block_parent_class)->setup (configurable, error))
    return FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (block_children); i++)
    {
      g_autoptr(HpConfig) child_config = NULL;
      g_autoptr(GObject) child = NULL;

      g_object_get (config, block_children[i].field, &child_config, NULL);
      if (child_config == NULL)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                       "HpTransformerBlockConfig.%s is not set", block_children[i].field);
          return FALSE;
        }
      child = hp_config_build (child_config, error);
      if (child == NULL)
        {
          g_prefix_error (error, "HpTransformerBlock.%s: ", block_children[i].child);
          return FALSE;
        }
      if (!hp_module_add_child (module, block_children[i].child, HP_MODULE (child), error))
        return FALSE;
    }
  return TRUE;
}

/* @x plus what the child @name makes of @norm_name's output */
static HpTensor *
residual (HpModule     *module,
          const gchar  *norm_name,
          const gchar  *name,
          HpTensor     *x,
          GError      **error)
{
  g_autoptr(HpTensor) normed = NULL;
  g_autoptr(HpTensor) branch = NULL;

  normed = hp_module_call1 (hp_module_get_child (module, norm_name), x, error);
  if (normed == NULL)
    return NULL;
  branch = hp_module_call1 (hp_module_get_child (module, name), normed, error);
  if (branch == NULL)
    return NULL;
  return hp_tensor_add (x, branch, error);
}

static GPtrArray *
hp_transformer_block_forward (HpModule   *module,
                              GPtrArray  *args,
                              GError    **error)
{
  g_autoptr(HpTensor) h = NULL;
  HpTensor *out;
  GPtrArray *outputs;

  if (args->len != 1 || g_ptr_array_index (args, 0) == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "HpTransformerBlock.forward takes one tensor, got %u arguments", args->len);
      return NULL;
    }
  h = residual (module, "attention_norm", "attention", g_ptr_array_index (args, 0), error);
  if (h == NULL)
    return NULL;
  out = residual (module, "ffn_norm", "feed_forward", h, error);
  if (out == NULL)
    return NULL;
  outputs = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (outputs, out);
  return outputs;
}

static void
hp_transformer_block_class_init (HpTransformerBlockClass *klass)
{
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_transformer_block_setup;
  module_class->forward = hp_transformer_block_forward;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "x", NULL });
}

static void
hp_transformer_block_init (HpTransformerBlock *self)
{
}
