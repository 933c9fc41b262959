/* hp-transformer-block.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-config-field.h"
#include "hp-error.h"
#include "hp-tensor-ops.h"
#include "hp-transformer-block.h"

/**
 * HpTransformerBlockConfig:
 *
 * The configuration of one [class@Hp.TransformerBlock]: the
 * configurations of its attention, its feed-forward network and its two
 * norms, each a field of its own so that paths such as
 * `attention.n-heads` reach them.
 *
 * A block has no sizes of its own to make its parts from: the four
 * fields are %NULL until they are set, and a block builds only with all
 * four ([vfunc@Hp.Config.validate] checks that).
 * [method@Hp.DecoderConfig.expand] makes whole blocks from the sizes of
 * a decoder.
 *
 * Since: 1.0
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

/**
 * HpTransformerBlockConfig:attention:
 *
 * The configuration of the attention; %NULL (the default): not set.
 *
 * Since: 1.0
 */
/**
 * HpTransformerBlockConfig:feed-forward:
 *
 * The configuration of the feed-forward network; %NULL (the default):
 * not set.
 *
 * Since: 1.0
 */
/**
 * HpTransformerBlockConfig:attention-norm:
 *
 * The configuration of the norm before the attention; %NULL (the
 * default): not set.
 *
 * Since: 1.0
 */
/**
 * HpTransformerBlockConfig:ffn-norm:
 *
 * The configuration of the norm before the feed-forward network; %NULL
 * (the default): not set.
 *
 * Since: 1.0
 */
static const HpConfigField block_config_fields[] = {
  HP_CONFIG_FIELD_OBJECT (HpTransformerBlockConfig, attention, "attention", "Attention",
                          hp_gq_attention_config_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpTransformerBlockConfig, feed_forward, "feed-forward", "Feed-forward network",
                          hp_feed_forward_config_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpTransformerBlockConfig, attention_norm, "attention-norm",
                          "Norm before the attention", hp_rms_norm_config_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpTransformerBlockConfig, ffn_norm, "ffn-norm",
                          "Norm before the feed-forward network", hp_rms_norm_config_get_type, NULL),
};

/* The parts, in the order the block adds them as children */
static const struct
{
  const gchar *field;
  const gchar *child;
  gsize offset;
} block_parts[] = {
  { "attention-norm", "attention_norm", G_STRUCT_OFFSET (HpTransformerBlockConfig, attention_norm) },
  { "attention", "attention", G_STRUCT_OFFSET (HpTransformerBlockConfig, attention) },
  { "ffn-norm", "ffn_norm", G_STRUCT_OFFSET (HpTransformerBlockConfig, ffn_norm) },
  { "feed-forward", "feed_forward", G_STRUCT_OFFSET (HpTransformerBlockConfig, feed_forward) },
};

/* Part @i of @self, or NULL with HP_ERROR_CONFIG when it is not set */
static HpConfig *
get_part (HpTransformerBlockConfig  *self,
          guint                      i,
          GError                   **error)
{
  HpConfig *part = G_STRUCT_MEMBER (HpConfig *, self, block_parts[i].offset);

  if (part == NULL)
    g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "HpTransformerBlockConfig.%s is not set",
                 block_parts[i].field);
  return part;
}

static gboolean
hp_transformer_block_config_validate (HpConfig  *config,
                                      GError   **error)
{
  if (!HP_CONFIG_CLASS (hp_transformer_block_config_parent_class)->validate (config, error))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (block_parts); i++)
    if (get_part (HP_TRANSFORMER_BLOCK_CONFIG (config), i, error) == NULL)
      return FALSE;
  return TRUE;
}

static void
hp_transformer_block_config_class_init (HpTransformerBlockConfigClass *klass)
{
  HP_CONFIG_CLASS (klass)->validate = hp_transformer_block_config_validate;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), block_config_fields,
                                  G_N_ELEMENTS (block_config_fields));
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
 * Returns: (transfer full): a new [class@Hp.TransformerBlockConfig]
 *
 * Since: 1.0
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
 * HpTransformerBlock:
 *
 * One layer of a Llama-style decoder, with pre-norm residual
 * connections: `h = x + attention (attention_norm (x))`, then
 * `out = h + feed_forward (ffn_norm (h))`. Its children are named
 * `attention_norm`, `attention`, `ffn_norm` and `feed_forward`, as in
 * torchtitan, and are built from the four configurations of its
 * [class@Hp.TransformerBlockConfig], each keeping its own sharding
 * configuration.
 *
 * Since: 1.0
 */

struct _HpTransformerBlock
{
  HpModule parent_instance;
};

G_DEFINE_FINAL_TYPE (HpTransformerBlock, hp_transformer_block, HP_TYPE_MODULE)

static gboolean
hp_transformer_block_setup (HpConfigurable  *configurable,
                            GError         **error)
{
  HpTransformerBlockConfig *config =
    HP_TRANSFORMER_BLOCK_CONFIG (hp_configurable_get_config (configurable));

  if (!HP_CONFIGURABLE_CLASS (hp_transformer_block_parent_class)->setup (configurable, error))
    return FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (block_parts); i++)
    {
      /* set, unless the block was made with g_object_new() */
      HpConfig *part = get_part (config, i, error);
      g_autoptr(GObject) child = NULL;

      if (part == NULL)
        return FALSE;
      child = hp_config_build (part, error);
      if (child == NULL)
        {
          g_prefix_error (error, "HpTransformerBlock.%s: ", block_parts[i].child);
          return FALSE;
        }
      if (!hp_module_add_child (HP_MODULE (configurable), block_parts[i].child, HP_MODULE (child),
                                error))
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

#include "hp-transformer-block-fields.c"
