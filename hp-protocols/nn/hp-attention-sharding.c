/* hp-attention-sharding.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-attention-sharding.h"
#include "hp-decoder-sharding.h"
#include "hp-local-map-config.h"
#include "hp-replicate.h"
#include "hp-shard.h"
#include "hp-sharding-config.h"

/* {tp: S(dim)} */
static HpNamedPlacement *
tp_shard (gint dim)
{
  HpNamedPlacement *named = hp_named_placement_new ();
  g_autoptr(HpPlacement) shard = hp_shard_new (dim);

  hp_named_placement_set_axis (named, HP_MESH_AXIS_NAME_TP, shard);
  return named;
}

/* {tp: R} */
static HpNamedPlacement *
tp_replicate (void)
{
  HpNamedPlacement *named = hp_named_placement_new ();
  g_autoptr(HpPlacement) replicate = hp_replicate_new ();

  hp_named_placement_set_axis (named, HP_MESH_AXIS_NAME_TP, replicate);
  return named;
}

/**
 * hp_set_gqa_attention_sharding:
 * @cfg: a [class@Hp.GQAttentionConfig]
 * @enable_sp: whether the attention sits between sequence-parallel
 *   norms
 * @error: return location for a [struct@GLib.Error]
 *
 * Lays a grouped-query attention out for tensor parallelism on the
 * mesh dim `tp`, as torchtitan's Llama plan does. First
 * [method@Hp.GQAttentionConfig.fill_children] writes out the children; then
 *
 * - `wq`, `wk` and `wv` get [func@Hp.sharding_colwise] (with a bias,
 *   [func@Hp.sharding_colwise_with_bias]): their outputs, and so q, k and v,
 *   are sharded on the heads (`tp:S(2)` once reshaped to [B, S, H, Dh];
 *   the reshape keeps the shard when every rank holds whole heads);
 * - `wo` gets [func@Hp.sharding_rowwise] with @enable_sp as `output_sp`
 *   (with a bias, [func@Hp.sharding_rowwise_with_bias]): its output is all-reduced to
 *   `tp:R`, or reduce-scattered to `tp:S(1)` on the sequence;
 * - `rope` lays its `cos` and `sin` tables out as `tp:R`;
 * - the attention itself takes `x` as `tp:R`, or with @enable_sp as
 *   `tp:S(1)` (the sequence shard a sequence-parallel norm leaves),
 *   which it gathers to `tp:R`.
 *
 * Each gets a new [class@Hp.ShardingConfig], replacing any it had. The inner
 * attention is left as it is: without a local map its DTensor inputs
 * go through the sharding rule of [method@Hp.Tensor.scaled_dot_product_attention];
 * [func@Hp.set_gqa_inner_attention_local_map] runs it on local heads.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_CONFIG][error@Hp.Error] and @cfg unchanged
 *   when its scalar fields do not fit together
 *
 * Since: 1.0
 */
gboolean
hp_set_gqa_attention_sharding (HpGQAttentionConfig  *cfg,
                               gboolean              enable_sp,
                               GError              **error)
{
  g_autoptr(HpShardingConfig) own = hp_sharding_config_new ();
  g_autoptr(HpShardingConfig) rope = hp_sharding_config_new ();
  g_autoptr(HpNamedPlacement) replicate = tp_replicate ();
  g_autoptr(HpNamedPlacement) input = enable_sp ? tp_shard (1) : tp_replicate ();
  g_autoptr(HpShardingConfig) rowwise = NULL;
  HpLinearConfig *projections[3];
  HpLinearConfig *wo;

  g_return_val_if_fail (HP_IS_GQ_ATTENTION_CONFIG (cfg), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!hp_gq_attention_config_fill_children (cfg, error))
    return FALSE;

  projections[0] = hp_gq_attention_config_get_wq (cfg);
  projections[1] = hp_gq_attention_config_get_wk (cfg);
  projections[2] = hp_gq_attention_config_get_wv (cfg);
  for (guint i = 0; i < G_N_ELEMENTS (projections); i++)
    {
      g_autoptr(HpShardingConfig) colwise = hp_linear_config_get_bias (projections[i])
                                              ? hp_sharding_colwise_with_bias ()
                                              : hp_sharding_colwise ();

      hp_module_config_set_sharding_config (HP_MODULE_CONFIG (projections[i]), colwise);
    }
  wo = hp_gq_attention_config_get_wo (cfg);
  rowwise = hp_linear_config_get_bias (wo) ? hp_sharding_rowwise_with_bias (enable_sp)
                                           : hp_sharding_rowwise (enable_sp);
  hp_module_config_set_sharding_config (HP_MODULE_CONFIG (wo), rowwise);

  hp_sharding_config_set_state_sharding (rope, "cos", replicate);
  hp_sharding_config_set_state_sharding (rope, "sin", replicate);
  hp_module_config_set_sharding_config (HP_MODULE_CONFIG (hp_gq_attention_config_get_rope (cfg)),
                                        rope);

  hp_sharding_config_set_in_src_sharding (own, "x", input);
  hp_sharding_config_set_in_dst_sharding (own, "x", replicate);
  hp_module_config_set_sharding_config (HP_MODULE_CONFIG (cfg), own);
  return TRUE;
}

/**
 * hp_set_gqa_inner_attention_local_map:
 * @inner_attn_cfg: the configuration of the inner attention
 * @return_lse: whether the inner attention returns the log-sum-exp as
 *   a second output (as [property@Hp.SDPAConfig:return-lse] says)
 *
 * Marks the inner attention as a local-map region (seed Part 9 §3.3):
 * gives @inner_attn_cfg a new [class@Hp.ShardingConfig] whose only entry is a
 * [class@Hp.LocalMapConfig] for the callable `inner_sdpa` with in_placements
 * q, k, v `tp:S(2)` (the heads of [B, S, H, D]) and out_placements
 * `tp:S(2)` for the output, plus `tp:S(2)` for the log-sum-exp
 * [B, S, H] when @return_lse. After [method@Hp.Module.parallelize] the
 * attention then runs on each rank's local heads, without
 * communication. Replaces any sharding configuration @inner_attn_cfg
 * had; [property@Hp.SDPAConfig:return-lse] is not changed.
 *
 * Since: 1.0
 */
void
hp_set_gqa_inner_attention_local_map (HpSDPAConfig *inner_attn_cfg,
                                      gboolean      return_lse)
{
  g_autoptr(HpShardingConfig) sharding = hp_sharding_config_new ();
  g_autoptr(HpLocalMapConfig) local_map = hp_local_map_config_new (HP_SDPA_CALLABLE);
  g_autoptr(GPtrArray) in_placements = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) out_placements = g_ptr_array_new_with_free_func (g_object_unref);

  g_return_if_fail (HP_IS_SDPA_CONFIG (inner_attn_cfg));

  for (guint i = 0; i < 3; i++)
    g_ptr_array_add (in_placements, tp_shard (2));
  g_ptr_array_add (out_placements, tp_shard (2));
  if (return_lse)
    g_ptr_array_add (out_placements, tp_shard (2));

  hp_local_map_config_set_in_placements (local_map, in_placements);
  hp_local_map_config_set_out_placements (local_map, out_placements);
  hp_sharding_config_set_local_map (sharding, local_map);
  hp_module_config_set_sharding_config (HP_MODULE_CONFIG (inner_attn_cfg), sharding);
}
