/* hp-decoder-sharding.c: tensor-parallel styles as sharding configs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The styles of torchtitan's Llama parallelisation (ColwiseParallel,
 * RowwiseParallel, SequenceParallel, PrepareModuleInput), written as
 * HpShardingConfig values over the mesh axis `tp` (spec/dtensor.md §6).
 * Every entry names the `tp` axis only: on a mesh with more dims the
 * others resolve to Replicate.
 */

#include "config.h"

#include "hp-attention-private.h"
#include "hp-attention-sharding.h"
#include "hp-decoder-sharding.h"
#include "hp-transformer-block.h"
#include "hp-mesh-axis-name.h"
#include "hp-replicate.h"
#include "hp-shard.h"

/* {tp: S(dim)}, or {tp: R} for dim G_MAXINT */
static HpNamedPlacement *
on_tp (gint dim)
{
  HpNamedPlacement *named = hp_named_placement_new ();
  g_autoptr(HpPlacement) placement =
    dim == G_MAXINT ? HP_PLACEMENT (hp_replicate_new ()) : HP_PLACEMENT (hp_shard_new (dim));

  hp_named_placement_set_axis (named, HP_MESH_AXIS_NAME_TP, placement);
  return named;
}

#define REPLICATE G_MAXINT

static void
set_state (HpShardingConfig *config,
           const gchar      *path,
           gint              dim)
{
  g_autoptr(HpNamedPlacement) named = on_tp (dim);

  hp_sharding_config_set_state_sharding (config, path, named);
}

static void
set_input (HpShardingConfig *config,
           gint              src_dim,
           gint              dst_dim)
{
  g_autoptr(HpNamedPlacement) src = on_tp (src_dim);
  g_autoptr(HpNamedPlacement) dst = on_tp (dst_dim);

  hp_sharding_config_set_in_src_sharding (config, "input", src);
  hp_sharding_config_set_in_dst_sharding (config, "input", dst);
}

static void
set_output (HpShardingConfig *config,
            gint              dim)
{
  g_autoptr(HpNamedPlacement) named = on_tp (dim);

  hp_sharding_config_set_out_dst_sharding (config, 0, named);
}

static HpShardingConfig *
colwise (gboolean bias)
{
  HpShardingConfig *config = hp_sharding_config_new ();

  set_state (config, "weight", 0);
  if (bias)
    set_state (config, "bias", 0);
  set_input (config, REPLICATE, REPLICATE);
  set_output (config, -1);
  return config;
}

/**
 * hp_sharding_colwise:
 *
 * The column-wise tensor-parallel layout of a [class@Hp.Linear] without bias
 * (torchtitan's `ColwiseParallel`): each rank of the `tp` axis computes
 * a slice of the output features.
 *
 * | entry | placement |
 * |---|---|
 * | state `weight` [out, in] | `tp:S(0)` |
 * | in_src / in_dst `input` | `tp:R` / `tp:R` |
 * | out_dst 0 | `tp:S(-1)` |
 *
 * The input must be the whole tensor on every rank: a plain tensor is
 * taken as such, a DTensor must be Replicate. The output stays sharded
 * on its last dim, ready for an element-wise op with another
 * column-wise output or for a row-wise layer; no communication happens
 * in the forward pass, and the input's gradient is all-reduced over
 * `tp` in the backward pass. Output features that do not divide by the
 * `tp` size give uneven shards (as `torch.chunk`; trailing ranks may
 * hold none), which is exact.
 *
 * Returns: (transfer full): a new [class@Hp.ShardingConfig]
 *
 * Since: 1.0
 */
HpShardingConfig *
hp_sharding_colwise (void)
{
  return colwise (FALSE);
}

/**
 * hp_sharding_colwise_with_bias:
 *
 * [func@Hp.sharding_colwise] for a [class@Hp.Linear] with a bias: the state `bias`
 * is `tp:S(0)` too, so that each rank adds the bias of its output
 * features. A sharding config must not name a parameter the module
 * lacks, hence the two functions.
 *
 * Returns: (transfer full): a new [class@Hp.ShardingConfig]
 *
 * Since: 1.0
 */
HpShardingConfig *
hp_sharding_colwise_with_bias (void)
{
  return colwise (TRUE);
}

static HpShardingConfig *
rowwise (gboolean bias,
         gboolean output_sp)
{
  HpShardingConfig *config = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) input = on_tp (-1);

  set_state (config, "weight", 1);
  if (bias)
    set_state (config, "bias", REPLICATE);
  hp_sharding_config_set_in_dst_sharding (config, "input", input);
  set_output (config, output_sp ? 1 : REPLICATE);
  return config;
}

/**
 * hp_sharding_rowwise:
 * @output_sp: whether the output is sharded on the sequence dim
 *   (sequence parallelism) instead of replicated
 *
 * The row-wise tensor-parallel layout of a [class@Hp.Linear] without bias
 * (torchtitan's `RowwiseParallel`): each rank of the `tp` axis holds a
 * slice of the input features and computes a partial sum of the
 * output.
 *
 * | entry | placement |
 * |---|---|
 * | state `weight` [out, in] | `tp:S(1)` |
 * | in_dst `input` | `tp:S(-1)` |
 * | out_dst 0 | `tp:R`, or `tp:S(1)` with @output_sp |
 *
 * The natural output is `tp:P(sum)`; the output layout turns it into
 * the whole tensor with an all-reduce, or with @output_sp into the
 * sequence shard of each rank with a reduce-scatter (the sequence dim
 * of a [batch, seq, dim] activation is dim 1), which is half the
 * traffic and what a sequence-parallel norm expects next.
 *
 * The input has a destination layout and no source layout: the output
 * of a column-wise layer (or an element-wise op of two) is already
 * `tp:S(-1)` and is used as it is, a replicated DTensor is sliced
 * locally with no communication, and a plain tensor is taken as this
 * rank's slice of the input features. (A source layout `tp:S(-1)` would
 * reject those DTensors, whose shard dim is stored non-negative.)
 *
 * Returns: (transfer full): a new [class@Hp.ShardingConfig]
 *
 * Since: 1.0
 */
HpShardingConfig *
hp_sharding_rowwise (gboolean output_sp)
{
  return rowwise (FALSE, output_sp);
}

/**
 * hp_sharding_rowwise_with_bias:
 * @output_sp: as for [func@Hp.sharding_rowwise]
 *
 * [func@Hp.sharding_rowwise] for a [class@Hp.Linear] with a bias: the state `bias`
 * is `tp:R`. [method@Hp.Tensor.linear] adds a replicated bias to the partial
 * sums of the rank at `tp` coordinate 0 alone (the others add it times
 * zero), so that the reduction adds it once, exactly; its gradient is
 * summed over `tp`, which gives the gradient of the whole bias.
 *
 * Returns: (transfer full): a new [class@Hp.ShardingConfig]
 *
 * Since: 1.0
 */
HpShardingConfig *
hp_sharding_rowwise_with_bias (gboolean output_sp)
{
  return rowwise (TRUE, output_sp);
}

/**
 * hp_sharding_norm:
 * @enable_sp: whether the norm runs sequence-parallel
 *
 * The layout of a [class@Hp.RMSNorm] (or another norm with a `weight` and an
 * argument `input`) in a tensor-parallel decoder.
 *
 * With @enable_sp (torchtitan's `SequenceParallel`):
 *
 * | entry | placement |
 * |---|---|
 * | state `weight` | `tp:R` |
 * | in_src / in_dst `input` | `tp:S(1)` / `tp:S(1)` |
 * | out_dst 0 | `tp:S(1)` |
 *
 * Each rank normalises its part of the sequence (dim 1 of [batch, seq,
 * dim]) with no communication; the gradient of the weight is summed
 * over `tp`.
 *
 * Without @enable_sp, the activations between the layers are
 * replicated:
 *
 * | entry | placement |
 * |---|---|
 * | state `weight` | `tp:R` |
 * | in_src / in_dst `input` | `tp:R` / `tp:R` |
 *
 * and the output is replicated as the input. The weight is still laid
 * out (as a replicated DTensor) rather than left a plain tensor: the
 * input of a norm in a tensor-parallel decoder is a DTensor, and an op
 * does not mix a DTensor with a plain tensor.
 *
 * Returns: (transfer full): a new [class@Hp.ShardingConfig]
 *
 * Since: 1.0
 */
HpShardingConfig *
hp_sharding_norm (gboolean enable_sp)
{
  HpShardingConfig *config = hp_sharding_config_new ();

  set_state (config, "weight", REPLICATE);
  if (enable_sp)
    {
      set_input (config, 1, 1);
      set_output (config, 1);
    }
  else
    set_input (config, REPLICATE, REPLICATE);
  return config;
}

/**
 * hp_sharding_embedding:
 * @output_sp: whether the output is sharded on the sequence dim
 *   (sequence parallelism) instead of replicated
 *
 * The vocabulary-parallel layout of a [class@Hp.Embedding] (what torchtitan's
 * `RowwiseParallel` does to an `nn.Embedding`): each rank of the `tp`
 * axis holds a slice of the rows of the table.
 *
 * | entry | placement |
 * |---|---|
 * | state `weight` [num-embeddings, dim] | `tp:S(0)` |
 * | in_src / in_dst `ids` | `tp:R` / `tp:R` |
 * | out_dst 0 | `tp:R`, or `tp:S(1)` with @output_sp |
 *
 * Each rank looks up the ids that fall in its rows and gives zeros for
 * the others, so the natural output is `tp:P(sum)`; the output layout
 * turns it into the whole tensor with an all-reduce, or with
 * @output_sp into each rank's part of the sequence (dim 1 of [batch,
 * seq]) with a reduce-scatter, the layout a sequence-parallel decoder
 * carries between its blocks. A vocabulary that does not divide by the
 * `tp` size gives uneven shards, which is exact.
 *
 * Returns: (transfer full): a new [class@Hp.ShardingConfig]
 *
 * Since: 1.0
 */
HpShardingConfig *
hp_sharding_embedding (gboolean output_sp)
{
  HpShardingConfig *config = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) ids = on_tp (REPLICATE);

  set_state (config, "weight", 0);
  hp_sharding_config_set_in_src_sharding (config, "ids", ids);
  hp_sharding_config_set_in_dst_sharding (config, "ids", ids);
  set_output (config, output_sp ? 1 : REPLICATE);
  return config;
}

/* Field @layer of @cfg replaced by a copy of @current with @sharding */
static void
set_layer_sharding (HpFeedForwardConfig *cfg,
                    const gchar         *layer,
                    HpLinearConfig      *current,
                    HpShardingConfig    *sharding)
{
  g_autoptr(HpConfig) laid_out =
    hp_config_replace (HP_CONFIG (current), "sharding-config", sharding, NULL);

  g_object_set (cfg, layer, laid_out, NULL);
}

/**
 * hp_set_dense_ffn_sharding:
 * @cfg: a [class@Hp.FeedForwardConfig]
 * @enable_sp: whether the block sits between sequence-parallel norms
 *
 * Lays a feed-forward block out for tensor parallelism as torchtitan's
 * Llama parallelisation does:
 *
 * - `w1` and `w3` column-wise ([func@Hp.sharding_colwise]), `w2` row-wise
 *   ([func@Hp.sharding_rowwise] with @enable_sp as `output_sp`); the
 *   `_with_bias` variants for layers that have a bias;
 * - the block's own input (torchtitan's `PrepareModuleInput`): with
 *   @enable_sp it arrives as `tp:S(1)` and is all-gathered to `tp:R`
 *   once, on entry, for both `w1` and `w3`; without, it is `tp:R` in
 *   and out.
 *
 * | entry | with @enable_sp | without |
 * |---|---|---|
 * | block in_src / in_dst `input` | `tp:S(1)` / `tp:R` | `tp:R` / `tp:R` |
 * | `w1`, `w3` | colwise | colwise |
 * | `w2` | rowwise, out `tp:S(1)` | rowwise, out `tp:R` |
 *
 * The hidden activations `silu (w1 (x)) * w3 (x)` stay `tp:S(-1)`
 * between the layers, so a forward pass costs one all-gather and one
 * reduce-scatter of a [batch, seq, dim] activation with @enable_sp, or
 * one all-reduce without; the backward pass mirrors them. The block's
 * output has the layout of the output of `w2`.
 *
 * The layer configurations are replaced by copies with the new
 * [property@Hp.ModuleConfig:sharding-config] (the old ones may be shared with
 * other configurations and are left alone), and @cfg gets a new
 * sharding config of its own, replacing any it had.
 *
 * Since: 1.0
 */
void
hp_set_dense_ffn_sharding (HpFeedForwardConfig *cfg,
                           gboolean             enable_sp)
{
  HpLinearConfig *w1, *w2, *w3;
  g_autoptr(HpShardingConfig) w1_sharding = NULL;
  g_autoptr(HpShardingConfig) w2_sharding = NULL;
  g_autoptr(HpShardingConfig) w3_sharding = NULL;
  g_autoptr(HpShardingConfig) own = hp_sharding_config_new ();

  g_return_if_fail (HP_IS_FEED_FORWARD_CONFIG (cfg));

  w1 = hp_feed_forward_config_get_w1 (cfg);
  w2 = hp_feed_forward_config_get_w2 (cfg);
  w3 = hp_feed_forward_config_get_w3 (cfg);
  w1_sharding = colwise (hp_linear_config_get_bias (w1));
  w2_sharding = rowwise (hp_linear_config_get_bias (w2), enable_sp);
  w3_sharding = colwise (hp_linear_config_get_bias (w3));

  set_input (own, enable_sp ? 1 : REPLICATE, REPLICATE);

  g_object_freeze_notify (G_OBJECT (cfg));
  set_layer_sharding (cfg, "w1", w1, w1_sharding);
  set_layer_sharding (cfg, "w2", w2, w2_sharding);
  set_layer_sharding (cfg, "w3", w3, w3_sharding);
  hp_module_config_set_sharding_config (HP_MODULE_CONFIG (cfg), own);
  g_object_thaw_notify (G_OBJECT (cfg));
}

static void
install (gpointer          config,
         HpShardingConfig *sharding)
{
  hp_module_config_set_sharding_config (HP_MODULE_CONFIG (config), sharding);
  g_object_unref (sharding);
}

/* A nested configuration field of a decoder configuration (borrowed) */
static gpointer
field (gpointer     config,
       const gchar *name)
{
  gpointer value = NULL;

  g_object_get (config, name, &value, NULL);
  /* the configuration keeps its own reference */
  g_object_unref (value);
  return value;
}

/**
 * hp_set_decoder_sharding_config:
 * @cfg: a [class@Hp.DecoderConfig]
 * @loss_parallel: whether the logits stay sharded over the vocabulary
 *   for the loss
 * @enable_sp: whether norms and the residual stream are sharded over
 *   the sequence (sequence parallelism)
 * @error: return location for a [struct@GLib.Error]
 *
 * Installs the tensor-parallel layout of torchtitan's Llama 3 on every
 * part of @cfg (expanded first with [method@Hp.DecoderConfig.expand]):
 *
 * - `tok-embeddings`: vocabulary-parallel ([func@Hp.sharding_embedding]),
 *   its output replicated, or sharded over the sequence with @enable_sp;
 * - each layer: the norms with [func@Hp.sharding_norm], the attention with
 *   [func@Hp.set_gqa_attention_sharding] and its inner attention on local
 *   heads ([func@Hp.set_gqa_inner_attention_local_map]), the feed-forward
 *   network with [func@Hp.set_dense_ffn_sharding];
 * - `norm` with [func@Hp.sharding_norm];
 * - `lm-head` column-wise: its input gathered to tp:R (from tp:S(1)
 *   with @enable_sp), its output tp:S(-1) with @loss_parallel (the
 *   cross entropy then runs on vocabulary shards) or tp:R.
 *
 * Both layouts shard a [vocab, dim] weight by rows, `tp:S(0)`, so the
 * table of a decoder with [property@Hp.DecoderConfig:tie-word-embeddings]
 * is one DTensor for the lookup and the head: each rank holds the same
 * vocabulary rows for both, and the gradients of the two uses add up on
 * those rows with no communication of their own.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_CONFIG][error@Hp.Error] and @cfg unchanged
 *   when it cannot be expanded or the sizes of a layer's attention do
 *   not fit together
 *
 * Since: 1.0
 */
gboolean
hp_set_decoder_sharding_config (HpDecoderConfig  *cfg,
                                gboolean          loss_parallel,
                                gboolean          enable_sp,
                                GError          **error)
{
  g_autoptr(HpConfigList) given_layers = NULL;
  HpConfigList *layers;
  HpShardingConfig *head;
  g_autoptr(HpNamedPlacement) head_in = NULL;
  g_autoptr(HpNamedPlacement) replicate = NULL;
  g_autoptr(HpNamedPlacement) head_out = NULL;

  g_return_val_if_fail (HP_IS_DECODER_CONFIG (cfg), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* the attention of every layer given is checked before anything
   * changes (its sharding is the only part that can fail) */
  g_object_get (cfg, "layers", &given_layers, NULL);
  for (guint i = 0; given_layers != NULL && i < hp_config_list_get_length (given_layers); i++)
    {
      HpConfig *block = hp_config_list_peek (given_layers, i);
      HpGQAttentionConfig *attention = HP_IS_TRANSFORMER_BLOCK_CONFIG (block)
        ? hp_transformer_block_config_get_attention (HP_TRANSFORMER_BLOCK_CONFIG (block))
        : NULL;

      if (attention != NULL && !_hp_gq_attention_config_check_sizes (attention, error))
        {
          g_prefix_error (error, "layers.%u.attention: ", i);
          return FALSE;
        }
    }
  if (!hp_decoder_config_expand (cfg, error))
    return FALSE;

  install (field (cfg, "tok-embeddings"), hp_sharding_embedding (enable_sp));

  layers = field (cfg, "layers");
  for (guint i = 0; i < hp_config_list_get_length (layers); i++)
    {
      HpTransformerBlockConfig *block = HP_TRANSFORMER_BLOCK_CONFIG (hp_config_list_peek (layers, i));
      HpGQAttentionConfig *attention = hp_transformer_block_config_get_attention (block);

      install (hp_transformer_block_config_get_attention_norm (block), hp_sharding_norm (enable_sp));
      install (hp_transformer_block_config_get_ffn_norm (block), hp_sharding_norm (enable_sp));
      if (!hp_set_gqa_attention_sharding (attention, enable_sp, error))
        {
          g_prefix_error (error, "layers.%u.attention: ", i);
          return FALSE;
        }
      hp_set_gqa_inner_attention_local_map (hp_gq_attention_config_get_inner_attention (attention),
                                            FALSE);
      hp_set_dense_ffn_sharding (hp_transformer_block_config_get_feed_forward (block), enable_sp);
    }

  install (field (cfg, "norm"), hp_sharding_norm (enable_sp));

  head = hp_sharding_colwise ();
  head_in = on_tp (enable_sp ? 1 : REPLICATE);
  replicate = on_tp (REPLICATE);
  head_out = on_tp (loss_parallel ? -1 : REPLICATE);
  hp_sharding_config_set_in_src_sharding (head, "input", head_in);
  hp_sharding_config_set_in_dst_sharding (head, "input", replicate);
  hp_sharding_config_set_out_dst_sharding (head, 0, head_out);
  install (field (cfg, "lm-head"), head);
  return TRUE;
}
