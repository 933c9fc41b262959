/* hp-sdpa.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The log-sum-exp is composed of differentiable ops, so it needs no
 * backward of its own: with s the scaled (and causally masked) scores
 * of one query and any key j it sees, log_softmax (s)_j = s_j - lse, so
 * lse = s_j - log_softmax (s)_j. Key 0 is seen by every query (the
 * causal mask is aligned to the top left), so j = 0 serves every row;
 * its gradient, e_0 - (e_0 - softmax (s)), is softmax (s), the gradient
 * of the log-sum-exp.
 */

#include "config.h"

#include <math.h>

#include "hp-attention-private.h"
#include "hp-config-field.h"
#include "hp-dtensor-private.h"
#include "hp-error.h"
#include "hp-module-private.h"
#include "hp-sdpa.h"
#include "hp-tensor-ops.h"

/**
 * HpSDPAConfig:
 *
 * The configuration of a [class@Hp.SDPA]: whether attention is causal, the
 * scale of the scores and whether the module also returns the
 * log-sum-exp of the scores.
 *
 * Since: 1.0
 */

struct _HpSDPAConfig
{
  HpModuleConfig parent_instance;

  gboolean causal;
  gboolean return_lse;
  gdouble scale;
};

G_DEFINE_FINAL_TYPE (HpSDPAConfig, hp_sdpa_config, HP_TYPE_MODULE_CONFIG)

/**
 * HpSDPAConfig:causal:
 *
 * Whether query i sees only keys j <= i (the mask is aligned to the
 * top left, as in [method@Hp.Tensor.scaled_dot_product_attention]).
 *
 * Since: 1.0
 */
/**
 * HpSDPAConfig:return-lse:
 *
 * Whether the module returns, after the attention output, the
 * log-sum-exp of each query's scaled and masked scores, of shape
 * [B, S, H].
 *
 * Since: 1.0
 */
/**
 * HpSDPAConfig:scale:
 *
 * The factor applied to the scores q k^T; a value <= 0 means
 * `1 / sqrt(D)`, D being the head dim.
 *
 * Since: 1.0
 */
static const HpConfigField sdpa_config_fields[] = {
  HP_CONFIG_FIELD_BOOLEAN (HpSDPAConfig, causal, "causal", "Whether query i sees only keys j <= i",
                           TRUE),
  HP_CONFIG_FIELD_BOOLEAN (HpSDPAConfig, return_lse, "return-lse",
                           "Whether the log-sum-exp is a second output", FALSE),
  HP_CONFIG_FIELD_DOUBLE (HpSDPAConfig, scale, "scale", "Score scale (<= 0: 1/sqrt(head size))",
                          -G_MAXDOUBLE, G_MAXDOUBLE, 0.0),
};

static void
hp_sdpa_config_class_init (HpSDPAConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), sdpa_config_fields,
                                  G_N_ELEMENTS (sdpa_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_SDPA);
}

static void
hp_sdpa_config_init (HpSDPAConfig *self)
{
}

/**
 * hp_sdpa_config_new:
 *
 * Creates an inner attention configuration with the default fields:
 * causal, no log-sum-exp, scale `1 / sqrt(D)`.
 *
 * Returns: (transfer full): a new [class@Hp.SDPAConfig]
 *
 * Since: 1.0
 */
HpSDPAConfig *
hp_sdpa_config_new (void)
{
  return g_object_new (HP_TYPE_SDPA_CONFIG, NULL);
}

/**
 * HpSDPA:
 *
 * Scaled dot-product attention over queries, keys and values laid out
 * as [batch, seq, heads, head_dim], the inner attention of
 * [class@Hp.GQAttention].
 *
 * Its forward takes `q` [B, S, H, D], `k` and `v` [B, Skv, Hkv, D]
 * (grouped-query attention when Hkv divides H: query head h uses key
 * and value head h / (H / Hkv)) and returns the attention output
 * [B, S, H, D]; with [property@Hp.SDPAConfig:return-lse] also the log-sum-exp of
 * each query's scaled, masked scores, [B, S, H]. Both are
 * differentiable.
 *
 * The work is done by the module's registered callable
 * [const@Hp.SDPA_CALLABLE] (`inner_sdpa`): it moves the heads in front of the
 * sequence, calls [method@Hp.Tensor.scaled_dot_product_attention] and moves
 * them back. A [class@Hp.LocalMapConfig] naming `inner_sdpa` (see
 * [func@Hp.set_gqa_inner_attention_local_map]) makes [method@Hp.Module.parallelize]
 * run it on each rank's local heads with no communication. The heads
 * must then split into whole groups: with H != Hkv both must be
 * multiples of the number of ranks sharding them, else the forward
 * fails with [HP_ERROR_PLACEMENT][error@Hp.Error] before anything is computed. Without
 * a local map, DTensor inputs go through the ops' sharding rules.
 *
 * Since: 1.0
 */

struct _HpSDPA
{
  HpModule parent_instance;

  gboolean initialized;
  /* the position of the first query among the keys: the cache length
   * during a cached forward, else 0 (the mask aligned to the top left) */
  gint64 query_offset;
};

G_DEFINE_FINAL_TYPE (HpSDPA, hp_sdpa, HP_TYPE_MODULE)

static HpSDPAConfig *
sdpa_config (HpSDPA *self)
{
  return HP_SDPA_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (self)));
}

static gboolean
check_shapes (HpTensor  *q,
              HpTensor  *k,
              HpTensor  *v,
              GError   **error)
{
  guint q_ndim, k_ndim, v_ndim;
  const gint64 *qs = hp_tensor_get_shape (q, &q_ndim);
  const gint64 *ks = hp_tensor_get_shape (k, &k_ndim);
  const gint64 *vs = hp_tensor_get_shape (v, &v_ndim);
  g_autofree gchar *q_text = _hp_tensor_shape_to_string (q);
  g_autofree gchar *k_text = _hp_tensor_shape_to_string (k);
  g_autofree gchar *v_text = _hp_tensor_shape_to_string (v);
  const gchar *problem = NULL;

  if (q_ndim != 4 || k_ndim != 4 || v_ndim != 4)
    problem = "all must be [batch, seq, heads, head_dim]";
  else if (qs[0] != ks[0] || qs[0] != vs[0])
    problem = "batch sizes differ";
  else if (ks[1] != vs[1])
    problem = "k and v lengths differ";
  else if (ks[2] != vs[2])
    problem = "k and v heads differ";
  else if (qs[3] != ks[3])
    problem = "q and k head dims differ";
  else if (ks[2] == 0 ? qs[2] != 0 : qs[2] % ks[2] != 0)
    problem = "q heads are not a multiple of k and v heads";

  if (problem == NULL)
    return TRUE;
  g_set_error (error, HP_ERROR, HP_ERROR_SHAPE, "HpSDPA: q %s, k %s and v %s do not fit (%s)",
               q_text, k_text, v_text, problem);
  return FALSE;
}

/* [S, Skv] with -inf where key j comes after query i, which is key
 * @offset + i, in the dtype of @like and laid out like it */
static HpTensor *
causal_mask (HpTensor  *like,
             gint64     q_len,
             gint64     kv_len,
             gint64     offset,
             GError   **error)
{
  gsize n = (gsize) (q_len * kv_len);
  g_autofree gdouble *data = g_new0 (gdouble, MAX (n, 1));
  g_autoptr(HpTensor) mask = NULL;

  for (gint64 i = 0; i < q_len; i++)
    for (gint64 j = offset + i + 1; j < kv_len; j++)
      data[i * kv_len + j] = -INFINITY;
  mask = hp_tensor_new_from_data (hp_tensor_get_dtype (like), data, n,
                                  (gint64[]) { q_len, kv_len }, 2, error);
  if (mask == NULL || !HP_IS_DTENSOR (like))
    return g_steal_pointer (&mask);
  return _hp_attention_replicate_like (mask, like, error);
}

/* The log-sum-exp [B, S, H] of the scaled, masked scores of @qt
 * [B, H, S, D] against @kt [B, Hkv, Skv, D] (see the top of the file) */
static HpTensor *
scores_lse (HpTensor  *qt,
            HpTensor  *kt,
            gboolean   causal,
            gint64     offset,
            gdouble    scale,
            GError   **error)
{
  const gint64 *qs = hp_tensor_get_shape (qt, NULL);
  const gint64 *ks = hp_tensor_get_shape (kt, NULL);
  gint64 batch = qs[0], heads = qs[1], q_len = qs[2], head_dim = qs[3];
  gint64 kv_heads = ks[1], kv_len = ks[2];
  gint64 group = kv_heads > 0 ? heads / kv_heads : 1;
  g_autoptr(HpTensor) q5 = NULL;
  g_autoptr(HpTensor) k_t = NULL;
  g_autoptr(HpTensor) k5 = NULL;
  g_autoptr(HpTensor) products = NULL;
  g_autoptr(HpTensor) flat = NULL;
  g_autoptr(HpTensor) scores = NULL;
  g_autoptr(HpTensor) log_probs = NULL;
  g_autoptr(HpTensor) first_score = NULL;
  g_autoptr(HpTensor) first_log_prob = NULL;
  g_autoptr(HpTensor) lse4 = NULL;
  g_autoptr(HpTensor) lse3 = NULL;

  if (kv_len == 0 || kv_heads == 0)
    {
      /* no key: the sum is empty */
      g_autoptr(HpTensor) empty =
        hp_tensor_new_full (hp_tensor_get_dtype (qt), (gint64[]) { batch, q_len, heads }, 3,
                            -INFINITY);

      if (!HP_IS_DTENSOR (qt))
        return g_steal_pointer (&empty);
      return _hp_attention_replicate_like (empty, qt, error);
    }
  if (!(scale > 0.0))
    scale = head_dim > 0 ? 1.0 / sqrt ((gdouble) head_dim) : 1.0;

  /* the query heads of one key/value head side by side, so that one
   * broadcast product serves the whole group */
  q5 = hp_tensor_reshape (qt, (gint64[]) { batch, kv_heads, group, q_len, head_dim }, 5, error);
  if (q5 == NULL)
    return NULL;
  k_t = hp_tensor_transpose (kt, 2, 3, error);
  if (k_t == NULL)
    return NULL;
  k5 = hp_tensor_reshape (k_t, (gint64[]) { batch, kv_heads, 1, head_dim, kv_len }, 5, error);
  if (k5 == NULL)
    return NULL;
  products = hp_tensor_matmul (q5, k5, error);
  if (products == NULL)
    return NULL;
  flat = hp_tensor_reshape (products, (gint64[]) { batch, heads, q_len, kv_len }, 4, error);
  if (flat == NULL)
    return NULL;
  scores = hp_tensor_scale (flat, scale, error);
  if (scores == NULL)
    return NULL;

  if (causal && kv_len > 1)
    {
      g_autoptr(HpTensor) mask = causal_mask (scores, q_len, kv_len, offset, error);
      g_autoptr(HpTensor) masked = NULL;

      if (mask == NULL)
        return NULL;
      masked = hp_tensor_add (scores, mask, error);
      if (masked == NULL)
        return NULL;
      g_set_object (&scores, masked);
    }

  log_probs = hp_tensor_log_softmax (scores, -1, error);
  if (log_probs == NULL)
    return NULL;
  first_score = hp_tensor_narrow (scores, -1, 0, 1, error);
  if (first_score == NULL)
    return NULL;
  first_log_prob = hp_tensor_narrow (log_probs, -1, 0, 1, error);
  if (first_log_prob == NULL)
    return NULL;
  lse4 = hp_tensor_sub (first_score, first_log_prob, error);
  if (lse4 == NULL)
    return NULL;
  lse3 = hp_tensor_reshape (lse4, (gint64[]) { batch, heads, q_len }, 3, error);
  if (lse3 == NULL)
    return NULL;
  return hp_tensor_transpose (lse3, 1, 2, error);
}

/* The callable inner_sdpa: (q, k, v) -> (out) or (out, lse) */
static GPtrArray *
inner_sdpa (HpModule   *module,
            GPtrArray  *args,
            gpointer    user_data,
            GError    **error)
{
  HpSDPA *self = HP_SDPA (module);
  HpSDPAConfig *config;
  g_autoptr(GPtrArray) outputs = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(HpTensor) qt = NULL;
  g_autoptr(HpTensor) kt = NULL;
  g_autoptr(HpTensor) vt = NULL;
  g_autoptr(HpTensor) mask = NULL;
  g_autoptr(HpTensor) attended = NULL;
  HpTensor *out;
  gint64 q_len;

  if (!_hp_attention_check_ready (self, self->initialized, error) ||
      !_hp_attention_check_args (self, args, 3, error))
    return NULL;
  config = sdpa_config (self);
  if (!check_shapes (g_ptr_array_index (args, 0), g_ptr_array_index (args, 1),
                     g_ptr_array_index (args, 2), error))
    return NULL;

  qt = hp_tensor_transpose (g_ptr_array_index (args, 0), 1, 2, error);
  if (qt == NULL)
    return NULL;
  kt = hp_tensor_transpose (g_ptr_array_index (args, 1), 1, 2, error);
  if (kt == NULL)
    return NULL;
  vt = hp_tensor_transpose (g_ptr_array_index (args, 2), 1, 2, error);
  if (vt == NULL)
    return NULL;
  /* queries after cached keys: the op's causal mask is aligned to the
   * top left, so the shifted one is given; one query sees every key */
  q_len = hp_tensor_get_shape (qt, NULL)[2];
  if (config->causal && self->query_offset > 0 && q_len > 1)
    {
      mask = causal_mask (qt, q_len, hp_tensor_get_shape (kt, NULL)[2], self->query_offset,
                          error);
      if (mask == NULL)
        return NULL;
    }
  attended = hp_tensor_scaled_dot_product_attention (qt, kt, vt, mask,
                                                     config->causal && self->query_offset == 0,
                                                     config->scale, error);
  if (attended == NULL)
    return NULL;
  out = hp_tensor_transpose (attended, 1, 2, error);
  if (out == NULL)
    return NULL;
  g_ptr_array_add (outputs, out);

  if (config->return_lse)
    {
      HpTensor *lse = scores_lse (qt, kt, config->causal, self->query_offset, config->scale,
                                  error);

      if (lse == NULL)
        return NULL;
      g_ptr_array_add (outputs, lse);
    }
  return g_steal_pointer (&outputs);
}

static gint
head_shard (HpNamedPlacement *named,
            const gchar      *axis)
{
  HpPlacement *p = named != NULL ? hp_named_placement_get (named, axis) : NULL;
  gint dim;

  if (p == NULL || !hp_placement_is_shard (p))
    return -1;
  dim = hp_shard_get_dim (HP_SHARD (p));
  return dim < 0 ? dim + 4 : dim;
}

/* With the callable local-mapped, each rank's query heads must come
 * with their own key/value heads, as the attention op's sharding rule
 * requires (spec/dtensor.md §4) */
static gboolean
check_head_split (HpSDPA    *self,
                  HpTensor  *q,
                  HpTensor  *k,
                  GError   **error)
{
  HpShardingConfig *sharding = hp_module_get_sharding_config (HP_MODULE (self));
  HpLocalMapConfig *local_map = sharding != NULL ? hp_sharding_config_get_local_map (sharding) : NULL;
  HpDeviceMesh *mesh = hp_module_get_mesh (HP_MODULE (self));
  GPtrArray *in = local_map != NULL ? hp_local_map_config_get_in_placements (local_map) : NULL;
  const gchar * const *names;
  const gint *mesh_shape;
  gint64 q_heads, kv_heads;

  if (in == NULL || in->len < 2 || mesh == NULL ||
      hp_tensor_get_ndim (q) != 4 || hp_tensor_get_ndim (k) != 4)
    return TRUE;

  names = hp_device_mesh_get_dim_names (mesh);
  mesh_shape = hp_device_mesh_get_shape (mesh, NULL);
  q_heads = hp_tensor_get_shape (q, NULL)[2];
  kv_heads = hp_tensor_get_shape (k, NULL)[2];
  for (guint d = 0; names[d] != NULL; d++)
    {
      gint q_dim = head_shard (g_ptr_array_index (in, 0), names[d]);
      gint k_dim = head_shard (g_ptr_array_index (in, 1), names[d]);
      gint n = mesh_shape[d];

      if ((q_dim != 2 && k_dim != 2) || n == 1)
        continue;
      if (q_dim != k_dim)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "HpSDPA: the local_map of '%s' shards the heads of %s but not of %s "
                       "over mesh dim '%s'", HP_SDPA_CALLABLE, q_dim == 2 ? "q" : "k",
                       q_dim == 2 ? "k" : "q", names[d]);
          return FALSE;
        }
      if (q_heads == kv_heads)
        continue;
      if (q_heads % n != 0 || kv_heads % n != 0)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "HpSDPA: %" G_GINT64_FORMAT " query heads and %" G_GINT64_FORMAT
                       " key/value heads cannot be split over the %d ranks of mesh dim '%s' "
                       "(the local_map of '%s' needs whole head groups on each rank: both "
                       "counts must be multiples of %d)", q_heads, kv_heads, n, names[d],
                       HP_SDPA_CALLABLE, n);
          return FALSE;
        }
      q_heads /= n;
      kv_heads /= n;
    }
  return TRUE;
}

static GPtrArray *
hp_sdpa_forward (HpModule   *module,
                 GPtrArray  *args,
                 GError    **error)
{
  HpSDPA *self = HP_SDPA (module);

  if (!_hp_attention_check_ready (self, self->initialized, error) ||
      !_hp_attention_check_args (self, args, 3, error))
    return NULL;
  if (hp_module_callable_is_local_mapped (module, HP_SDPA_CALLABLE) &&
      !check_head_split (self, g_ptr_array_index (args, 0), g_ptr_array_index (args, 1), error))
    return NULL;
  return hp_module_run_callable (module, HP_SDPA_CALLABLE, args, error);
}

void
_hp_sdpa_set_query_offset (HpSDPA *self,
                           gint64  offset)
{
  self->query_offset = offset;
}

static gboolean
hp_sdpa_setup (HpConfigurable  *configurable,
               GError         **error)
{
  HpSDPA *self = HP_SDPA (configurable);

  if (!HP_CONFIGURABLE_CLASS (hp_sdpa_parent_class)->setup (configurable, error))
    return FALSE;

  if (!_hp_attention_check_config (self, hp_configurable_get_config (configurable),
                                   HP_TYPE_SDPA_CONFIG, error))
    return FALSE;
  self->initialized = TRUE;
  return TRUE;
}

static void
hp_sdpa_class_init (HpSDPAClass *klass)
{
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_sdpa_setup;
  module_class->forward = hp_sdpa_forward;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "q", "k", "v", NULL });
}

static void
hp_sdpa_init (HpSDPA *self)
{
  /* the module owns the callable, so the callable does not own it */
  hp_module_register_callable (HP_MODULE (self), HP_SDPA_CALLABLE, inner_sdpa, NULL, NULL);
}

/**
 * hp_sdpa_new:
 * @config: a [class@Hp.SDPAConfig]
 * @error: return location for a [struct@GLib.Error]
 *
 * Builds an inner attention module from @config, as [method@Hp.Config.build]
 * does.
 *
 * Returns: (transfer full): the new [class@Hp.SDPA], or %NULL with @error set
 *
 * Since: 1.0
 */
HpSDPA *
hp_sdpa_new (HpSDPAConfig  *config,
             GError       **error)
{
  g_return_val_if_fail (HP_IS_SDPA_CONFIG (config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_SDPA (hp_config_build (HP_CONFIG (config), error));
}

#include "hp-sdpa-fields.c"
