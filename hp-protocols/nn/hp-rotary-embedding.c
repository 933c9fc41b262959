/* hp-rotary-embedding.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>

#include "hp-config-field.h"
#include "hp-dtensor-private.h"
#include "hp-error.h"
#include "hp-attention-private.h"
#include "hp-nn-basic-private.h"
#include "hp-nn-enum-types.h"
#include "hp-rotary-embedding.h"
#include "hp-tensor-enum-types.h"
#include "hp-tensor-ops.h"

/**
 * HpRotaryEmbeddingConfig:
 *
 * The configuration of a [class@Hp.RotaryEmbedding]: the head dim it rotates,
 * the longest sequence its tables cover, the base of its frequencies,
 * their scaling ([property@Hp.RotaryEmbeddingConfig:scaling] and its
 * parameters) and the dtype of its tables (that of the tensors it
 * rotates).
 *
 * Since: 1.0
 */

struct _HpRotaryEmbeddingConfig
{
  HpModuleConfig parent_instance;

  gint head_dim;
  gint max_seq_len;
  gdouble theta;
  HpRopeScaling scaling;
  gdouble scaling_factor;
  gdouble low_freq_factor;
  gdouble high_freq_factor;
  gint original_max_seq_len;
  HpDType dtype;
};

G_DEFINE_FINAL_TYPE (HpRotaryEmbeddingConfig, hp_rotary_embedding_config, HP_TYPE_MODULE_CONFIG)

/**
 * HpRotaryEmbeddingConfig:head-dim:
 *
 * The size D of the last dim of the tensors rotated, an even number:
 * the tables hold D/2 frequencies.
 *
 * Since: 1.0
 */
/**
 * HpRotaryEmbeddingConfig:max-seq-len:
 *
 * The number of positions the tables cover; a forward argument may
 * be at most this long.
 *
 * Since: 1.0
 */
/**
 * HpRotaryEmbeddingConfig:theta:
 *
 * The base of the frequencies: pair i of the head dim turns by
 * `position * theta^(-2i/D)` radians.
 *
 * Since: 1.0
 */
/**
 * HpRotaryEmbeddingConfig:scaling:
 *
 * How the frequencies are scaled (a [enum@Hp.RopeScaling]); the
 * default, none, leaves them as [property@Hp.RotaryEmbeddingConfig:theta]
 * gives them.
 *
 * Since: 1.0
 */
/**
 * HpRotaryEmbeddingConfig:scaling-factor:
 *
 * The factor the scaled frequencies are divided by (Hugging Face's
 * `rope_scaling.factor`); used by the linear and llama3 scalings.
 *
 * Since: 1.0
 */
/**
 * HpRotaryEmbeddingConfig:low-freq-factor:
 *
 * llama3 scaling: frequencies with a wavelength longer than
 * [property@Hp.RotaryEmbeddingConfig:original-max-seq-len] divided by
 * this are divided by the full factor (`rope_scaling.low_freq_factor`).
 *
 * Since: 1.0
 */
/**
 * HpRotaryEmbeddingConfig:high-freq-factor:
 *
 * llama3 scaling: frequencies with a wavelength shorter than
 * [property@Hp.RotaryEmbeddingConfig:original-max-seq-len] divided by
 * this are kept (`rope_scaling.high_freq_factor`); it must be greater
 * than [property@Hp.RotaryEmbeddingConfig:low-freq-factor].
 *
 * Since: 1.0
 */
/**
 * HpRotaryEmbeddingConfig:original-max-seq-len:
 *
 * llama3 scaling: the context length the model was trained on
 * (`rope_scaling.original_max_position_embeddings`).
 *
 * Since: 1.0
 */
/**
 * HpRotaryEmbeddingConfig:dtype:
 *
 * The dtype of the tables, which must be that of the tensors rotated:
 * float32 or float64.
 *
 * Since: 1.0
 */
static const HpConfigField rotary_embedding_config_fields[] = {
  HP_CONFIG_FIELD_INT (HpRotaryEmbeddingConfig, head_dim, "head-dim", "Head size (even)",
                       2, G_MAXINT, 64),
  HP_CONFIG_FIELD_INT (HpRotaryEmbeddingConfig, max_seq_len, "max-seq-len", "Rows of the tables",
                       1, G_MAXINT, 2048),
  HP_CONFIG_FIELD_DOUBLE (HpRotaryEmbeddingConfig, theta, "theta", "Rotary embedding base",
                          G_MINDOUBLE, G_MAXDOUBLE, 10000.0),
  HP_CONFIG_FIELD_ENUM (HpRotaryEmbeddingConfig, scaling, "scaling", "Frequency scaling",
                        hp_rope_scaling_get_type, HP_ROPE_SCALING_NONE),
  HP_CONFIG_FIELD_DOUBLE (HpRotaryEmbeddingConfig, scaling_factor, "scaling-factor",
                          "Scaling factor", G_MINDOUBLE, G_MAXDOUBLE, 8.0),
  HP_CONFIG_FIELD_DOUBLE (HpRotaryEmbeddingConfig, low_freq_factor, "low-freq-factor",
                          "llama3 low-frequency factor", G_MINDOUBLE, G_MAXDOUBLE, 1.0),
  HP_CONFIG_FIELD_DOUBLE (HpRotaryEmbeddingConfig, high_freq_factor, "high-freq-factor",
                          "llama3 high-frequency factor", G_MINDOUBLE, G_MAXDOUBLE, 4.0),
  HP_CONFIG_FIELD_INT (HpRotaryEmbeddingConfig, original_max_seq_len, "original-max-seq-len",
                       "llama3 original context length", 1, G_MAXINT, 8192),
  HP_CONFIG_FIELD_ENUM (HpRotaryEmbeddingConfig, dtype, "dtype", "Table dtype", hp_dtype_get_type,
                        HP_DTYPE_FLOAT32),
};

static gboolean
hp_rotary_embedding_config_validate (HpConfig  *config,
                                     GError   **error)
{
  HpRotaryEmbeddingConfig *self = HP_ROTARY_EMBEDDING_CONFIG (config);

  if (!HP_CONFIG_CLASS (hp_rotary_embedding_config_parent_class)->validate (config, error))
    return FALSE;

  if (self->head_dim % 2 != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpRotaryEmbedding: head-dim %d must be even (the rotation turns pairs)",
                   self->head_dim);
      return FALSE;
    }
  return _hp_rotary_check_scaling ("HpRotaryEmbedding: ", "", self->scaling, self->low_freq_factor,
                                   self->high_freq_factor, error) &&
         _hp_nn_check_dtype (HP_CONFIG (self), self->dtype, error);
}

static void
hp_rotary_embedding_config_class_init (HpRotaryEmbeddingConfigClass *klass)
{
  HP_CONFIG_CLASS (klass)->validate = hp_rotary_embedding_config_validate;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), rotary_embedding_config_fields,
                                  G_N_ELEMENTS (rotary_embedding_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_ROTARY_EMBEDDING);
}

static void
hp_rotary_embedding_config_init (HpRotaryEmbeddingConfig *self)
{
}

/**
 * hp_rotary_embedding_config_new:
 *
 * Creates a rotary embedding configuration with the default fields:
 * head dim 64, 2048 positions, theta 10000, no scaling, float32 tables.
 *
 * Returns: (transfer full): a new [class@Hp.RotaryEmbeddingConfig]
 *
 * Since: 1.0
 */
HpRotaryEmbeddingConfig *
hp_rotary_embedding_config_new (void)
{
  return g_object_new (HP_TYPE_ROTARY_EMBEDDING_CONFIG, NULL);
}

/**
 * HpRotaryEmbedding:
 *
 * Rotary position embedding (RoPE) as Meta Llama and torchtitan apply
 * it to queries and keys, in the interleaved-pairs convention of
 * [method@Hp.Tensor.apply_rotary].
 *
 * The module keeps two non-persistent buffers, `cos` and `sin`, of
 * shape [max-seq-len, head-dim / 2]: entry [s, i] is the cosine and
 * sine of `s * f_i`, computed in double precision and stored in
 * [property@Hp.RotaryEmbeddingConfig:dtype]. The frequency f_i is
 * `theta^(-2i / head-dim)` scaled as
 * [property@Hp.RotaryEmbeddingConfig:scaling] says, with the formulas
 * of Hugging Face's `modeling_rope_utils`: linear divides it by the
 * factor F; llama3, with the original length L and the factors lo and
 * hi, keeps it when its wavelength `2 pi / f_i` is below L / hi,
 * divides it by F when the wavelength is above L / lo, and in between
 * gives `(1 - s) f_i / F + s f_i` with `s = (L / wavelength - lo) /
 * (hi - lo)`. They are computed when
 * the module is built and again by [method@Hp.Module.init_states].
 *
 * Its forward takes one argument `x` of shape [B, S, H, D] (any number
 * of leading dims before S works) with D = head-dim and S at most
 * max-seq-len, and returns x rotated with the first S rows of the
 * tables. `x` may be a DTensor sharded on any dim but the last, such
 * as the heads (dim 2) after a column-wise projection or the sequence
 * (dim 1): the tables are used as Replicate DTensors then (a plain
 * table is wrapped without communication; laying the buffers out as
 * `tp:R` in the module's sharding configuration does the same once).
 *
 * Build it with [method@Hp.Config.build], which refuses a configuration
 * with an odd head-dim or an integer dtype ([vfunc@Hp.Config.validate],
 * [HP_ERROR_CONFIG][error@Hp.Error]).
 *
 * Since: 1.0
 */

struct _HpRotaryEmbedding
{
  HpModule parent_instance;

  gboolean initialized;
  /* the position of the first row of x: the length of the key/value
   * cache while a cached forward runs, else 0 */
  gint64 offset;
};

G_DEFINE_FINAL_TYPE (HpRotaryEmbedding, hp_rotary_embedding, HP_TYPE_MODULE)

static HpRotaryEmbeddingConfig *
rotary_config (HpRotaryEmbedding *self)
{
  return HP_ROTARY_EMBEDDING_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (self)));
}

/* @frequency scaled as @config says, as Hugging Face's
 * _compute_linear_scaling_rope_parameters and _compute_llama3_parameters
 * do */
static gdouble
scaled_frequency (HpRotaryEmbeddingConfig *config,
                  gdouble                  frequency)
{
  gdouble factor = config->scaling_factor;
  gdouble length = config->original_max_seq_len;
  gdouble wavelength, smooth;

  switch (config->scaling)
    {
    case HP_ROPE_SCALING_LINEAR:
      return frequency / factor;
    case HP_ROPE_SCALING_LLAMA3:
      wavelength = 2 * G_PI / frequency;
      if (wavelength < length / config->high_freq_factor)
        return frequency;
      if (wavelength > length / config->low_freq_factor)
        return frequency / factor;
      smooth = (length / wavelength - config->low_freq_factor) /
               (config->high_freq_factor - config->low_freq_factor);
      return (1 - smooth) * frequency / factor + smooth * frequency;
    case HP_ROPE_SCALING_NONE:
    default:
      return frequency;
    }
}

gboolean
_hp_rotary_check_scaling (const gchar    *prefix,
                          const gchar    *field_prefix,
                          HpRopeScaling   scaling,
                          gdouble         low_freq_factor,
                          gdouble         high_freq_factor,
                          GError        **error)
{
  if (scaling != HP_ROPE_SCALING_LLAMA3 || high_freq_factor > low_freq_factor)
    return TRUE;
  g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
               "%s%shigh-freq-factor %g must be greater than %slow-freq-factor %g for the llama3 "
               "scaling", prefix, field_prefix, high_freq_factor, field_prefix, low_freq_factor);
  return FALSE;
}

/* Computes the tables and registers them as the buffers cos and sin */
static gboolean
compute_tables (HpRotaryEmbedding  *self,
                GError            **error)
{
  HpRotaryEmbeddingConfig *config = rotary_config (self);
  gint64 half = config->head_dim / 2;
  gint64 shape[2] = { config->max_seq_len, half };
  gsize n = (gsize) (config->max_seq_len * half);
  g_autofree gdouble *cos_data = g_new (gdouble, n);
  g_autofree gdouble *sin_data = g_new (gdouble, n);
  g_autofree gdouble *frequency = g_new (gdouble, half);
  g_autoptr(HpTensor) cos_table = NULL;
  g_autoptr(HpTensor) sin_table = NULL;

  for (gint64 i = 0; i < half; i++)
    frequency[i] = scaled_frequency (config, pow (config->theta,
                                                  -2.0 * (gdouble) i / (gdouble) config->head_dim));
  for (gint64 s = 0; s < config->max_seq_len; s++)
    for (gint64 i = 0; i < half; i++)
      {
        gdouble angle = (gdouble) s * frequency[i];

        cos_data[s * half + i] = cos (angle);
        sin_data[s * half + i] = sin (angle);
      }

  cos_table = hp_tensor_new_from_data (config->dtype, cos_data, n, shape, 2, error);
  if (cos_table == NULL)
    return FALSE;
  sin_table = hp_tensor_new_from_data (config->dtype, sin_data, n, shape, 2, error);
  if (sin_table == NULL)
    return FALSE;
  return hp_module_register_buffer (HP_MODULE (self), "cos", cos_table, FALSE, error) &&
         hp_module_register_buffer (HP_MODULE (self), "sin", sin_table, FALSE, error);
}

static gboolean
hp_rotary_embedding_setup (HpConfigurable  *configurable,
                           GError         **error)
{
  HpRotaryEmbedding *self = HP_ROTARY_EMBEDDING (configurable);

  if (!HP_CONFIGURABLE_CLASS (hp_rotary_embedding_parent_class)->setup (configurable, error))
    return FALSE;

  if (!_hp_attention_check_config (self, hp_configurable_get_config (configurable),
                                   HP_TYPE_ROTARY_EMBEDDING_CONFIG, error) ||
      !compute_tables (self, error))
    return FALSE;
  self->initialized = TRUE;
  return TRUE;
}

/* @length rows of the buffer @name from the offset on, laid out to go
 * with @x */
static HpTensor *
table_for (HpRotaryEmbedding  *self,
           const gchar        *name,
           HpTensor           *x,
           gint64              length,
           GError            **error)
{
  g_autoptr(HpTensor) rows =
    hp_tensor_narrow (hp_module_get_buffer (HP_MODULE (self), name), 0, self->offset, length,
                      error);

  if (rows == NULL)
    return NULL;
  if (HP_IS_DTENSOR (x) && !HP_IS_DTENSOR (rows))
    return _hp_attention_replicate_like (rows, x, error);
  if (!HP_IS_DTENSOR (x) && HP_IS_DTENSOR (rows))
    return hp_dtensor_full_tensor (HP_DTENSOR (rows), error);
  return g_steal_pointer (&rows);
}

static GPtrArray *
hp_rotary_embedding_forward (HpModule   *module,
                             GPtrArray  *args,
                             GError    **error)
{
  HpRotaryEmbedding *self = HP_ROTARY_EMBEDDING (module);
  HpRotaryEmbeddingConfig *config;
  g_autoptr(HpTensor) cos_table = NULL;
  g_autoptr(HpTensor) sin_table = NULL;
  HpTensor *x;
  HpTensor *out;
  GPtrArray *outputs;
  const gint64 *shape;
  guint ndim;

  if (!_hp_attention_check_ready (self, self->initialized, error) ||
      !_hp_attention_check_args (self, args, 1, error))
    return NULL;

  config = rotary_config (self);
  x = g_ptr_array_index (args, 0);
  shape = hp_tensor_get_shape (x, &ndim);
  if (ndim < 3 || shape[ndim - 1] != config->head_dim)
    {
      g_autofree gchar *text = _hp_tensor_shape_to_string (x);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "HpRotaryEmbedding: x has shape %s, but needs [..., S, H, %d] "
                   "(head-dim %d)", text, config->head_dim, config->head_dim);
      return NULL;
    }
  if (shape[ndim - 3] > config->max_seq_len - self->offset)
    {
      if (self->offset == 0)
        g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                     "HpRotaryEmbedding: sequence length %" G_GINT64_FORMAT
                     " exceeds max-seq-len %d", shape[ndim - 3], config->max_seq_len);
      else
        g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                     "HpRotaryEmbedding: %" G_GINT64_FORMAT " positions after %" G_GINT64_FORMAT
                     " cached ones exceed max-seq-len %d", shape[ndim - 3], self->offset,
                     config->max_seq_len);
      return NULL;
    }

  cos_table = table_for (self, "cos", x, shape[ndim - 3], error);
  if (cos_table == NULL)
    return NULL;
  sin_table = table_for (self, "sin", x, shape[ndim - 3], error);
  if (sin_table == NULL)
    return NULL;
  out = hp_tensor_apply_rotary (x, cos_table, sin_table, error);
  if (out == NULL)
    {
      g_prefix_error (error, "HpRotaryEmbedding: ");
      return NULL;
    }
  outputs = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (outputs, out);
  return outputs;
}

void
_hp_rotary_embedding_set_offset (HpRotaryEmbedding *self,
                                 gint64             offset)
{
  self->offset = offset;
}

static gboolean
hp_rotary_embedding_init_self_buffers (HpModule  *module,
                                       GError   **error)
{
  HpRotaryEmbedding *self = HP_ROTARY_EMBEDDING (module);

  return _hp_attention_check_ready (self, self->initialized, error) &&
         compute_tables (self, error);
}

static void
hp_rotary_embedding_class_init (HpRotaryEmbeddingClass *klass)
{
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_rotary_embedding_setup;
  module_class->forward = hp_rotary_embedding_forward;
  module_class->init_self_buffers = hp_rotary_embedding_init_self_buffers;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "x", NULL });
}

static void
hp_rotary_embedding_init (HpRotaryEmbedding *self)
{
}

/**
 * hp_rotary_embedding_new:
 * @config: a [class@Hp.RotaryEmbeddingConfig]
 * @error: return location for a [struct@GLib.Error]
 *
 * Builds a rotary embedding from @config, as [method@Hp.Config.build] does.
 *
 * Returns: (transfer full): the new [class@Hp.RotaryEmbedding], or %NULL with
 *   [HP_ERROR_CONFIG][error@Hp.Error] for an odd [property@Hp.RotaryEmbeddingConfig:head-dim] or an
 *   integer [property@Hp.RotaryEmbeddingConfig:dtype]
 *
 * Since: 1.0
 */
HpRotaryEmbedding *
hp_rotary_embedding_new (HpRotaryEmbeddingConfig  *config,
                         GError                  **error)
{
  g_return_val_if_fail (HP_IS_ROTARY_EMBEDDING_CONFIG (config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_ROTARY_EMBEDDING (hp_config_build (HP_CONFIG (config), error));
}

#include "hp-rotary-embedding-fields.c"
