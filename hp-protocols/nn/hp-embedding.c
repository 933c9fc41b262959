/* hp-embedding.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-embedding.h"
#include "hp-error.h"
#include "hp-initializer.h"
#include "hp-nn-basic-private.h"
#include "hp-tensor-enum-types.h"
#include "hp-tensor-ops.h"

/**
 * HpEmbeddingConfig:
 *
 * The configuration of a #HpEmbedding: the number of rows of the table
 * (the vocabulary size), the size of each row and the element type.
 */

/**
 * HpEmbedding:
 *
 * A lookup table of torch's `nn.Embedding`, as a #HpModule built from a
 * #HpEmbeddingConfig.
 *
 * Its one parameter, `weight`, has shape [num-embeddings,
 * embedding-dim]. Without a #HpParamInit, hp_module_init_states()
 * draws it from the standard normal distribution (torchtitan's
 * initialisation of token embeddings), from the seed
 * `hp_module_derive_seed (seed, "weight")`.
 *
 * The forward argument is `ids`, an int64 tensor of any shape with
 * values in [0, num-embeddings); the output has shape `ids.shape +
 * [embedding-dim]`. The class is marked as an embedding
 * (hp_module_class_set_embedding()), so that the parameter counts of
 * #HpBaseModelConfig leave it out of the FLOPs.
 */

struct _HpEmbeddingConfig
{
  HpModuleConfig parent_instance;

  gint num_embeddings;
  gint embedding_dim;
  HpDType dtype;
};

G_DEFINE_FINAL_TYPE (HpEmbeddingConfig, hp_embedding_config, HP_TYPE_MODULE_CONFIG)

enum {
  CONFIG_PROP_0,
  CONFIG_PROP_NUM_EMBEDDINGS,
  CONFIG_PROP_EMBEDDING_DIM,
  CONFIG_PROP_DTYPE,
  CONFIG_N_PROPS
};

static GParamSpec *config_properties[CONFIG_N_PROPS];

struct _HpEmbedding
{
  HpModule parent_instance;
};

G_DEFINE_FINAL_TYPE (HpEmbedding, hp_embedding, HP_TYPE_MODULE)

/* HpEmbeddingConfig */

static void
hp_embedding_config_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  HpEmbeddingConfig *self = HP_EMBEDDING_CONFIG (object);

  switch (prop_id)
    {
    case CONFIG_PROP_NUM_EMBEDDINGS:
      g_value_set_int (value, self->num_embeddings);
      break;
    case CONFIG_PROP_EMBEDDING_DIM:
      g_value_set_int (value, self->embedding_dim);
      break;
    case CONFIG_PROP_DTYPE:
      g_value_set_enum (value, self->dtype);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_embedding_config_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  HpEmbeddingConfig *self = HP_EMBEDDING_CONFIG (object);
  gint *field = NULL;

  switch (prop_id)
    {
    case CONFIG_PROP_NUM_EMBEDDINGS:
      field = &self->num_embeddings;
      break;
    case CONFIG_PROP_EMBEDDING_DIM:
      field = &self->embedding_dim;
      break;
    case CONFIG_PROP_DTYPE:
      if (self->dtype != (HpDType) g_value_get_enum (value))
        {
          self->dtype = g_value_get_enum (value);
          g_object_notify_by_pspec (object, pspec);
        }
      return;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }

  if (*field != g_value_get_int (value))
    {
      *field = g_value_get_int (value);
      g_object_notify_by_pspec (object, pspec);
    }
}

static void
hp_embedding_config_class_init (HpEmbeddingConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->get_property = hp_embedding_config_get_property;
  object_class->set_property = hp_embedding_config_set_property;

  /**
   * HpEmbeddingConfig:num-embeddings:
   *
   * The number of rows of the table: ids lie in [0, num-embeddings).
   */
  config_properties[CONFIG_PROP_NUM_EMBEDDINGS] =
    g_param_spec_int ("num-embeddings", NULL, "Number of rows (the vocabulary size)", 1, G_MAXINT, 1, flags);

  /**
   * HpEmbeddingConfig:embedding-dim:
   *
   * The size of each row: the last dim of the output.
   */
  config_properties[CONFIG_PROP_EMBEDDING_DIM] =
    g_param_spec_int ("embedding-dim", NULL, "Size of each embedding vector", 1, G_MAXINT, 1, flags);

  /**
   * HpEmbeddingConfig:dtype:
   *
   * The element type of the table: float32 or float64.
   */
  config_properties[CONFIG_PROP_DTYPE] =
    g_param_spec_enum ("dtype", NULL, "Parameter dtype", HP_TYPE_DTYPE, HP_DTYPE_FLOAT32, flags);

  g_object_class_install_properties (object_class, CONFIG_N_PROPS, config_properties);

  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_EMBEDDING);
}

static void
hp_embedding_config_init (HpEmbeddingConfig *self)
{
  self->num_embeddings = 1;
  self->embedding_dim = 1;
  self->dtype = HP_DTYPE_FLOAT32;
}

/**
 * hp_embedding_config_new:
 * @num_embeddings: the number of rows, at least 1
 * @embedding_dim: the size of a row, at least 1
 *
 * Creates the configuration of an embedding table with float32 values.
 *
 * Returns: (transfer full): a new #HpEmbeddingConfig
 */
HpEmbeddingConfig *
hp_embedding_config_new (gint num_embeddings,
                         gint embedding_dim)
{
  g_return_val_if_fail (num_embeddings >= 1, NULL);
  g_return_val_if_fail (embedding_dim >= 1, NULL);

  return g_object_new (HP_TYPE_EMBEDDING_CONFIG,
                       "num-embeddings", num_embeddings,
                       "embedding-dim", embedding_dim,
                       NULL);
}

/**
 * hp_embedding_config_get_num_embeddings:
 * @self: a #HpEmbeddingConfig
 *
 * Gets #HpEmbeddingConfig:num-embeddings.
 *
 * Returns: the number of rows
 */
gint
hp_embedding_config_get_num_embeddings (HpEmbeddingConfig *self)
{
  g_return_val_if_fail (HP_IS_EMBEDDING_CONFIG (self), 0);

  return self->num_embeddings;
}

/**
 * hp_embedding_config_get_embedding_dim:
 * @self: a #HpEmbeddingConfig
 *
 * Gets #HpEmbeddingConfig:embedding-dim.
 *
 * Returns: the size of a row
 */
gint
hp_embedding_config_get_embedding_dim (HpEmbeddingConfig *self)
{
  g_return_val_if_fail (HP_IS_EMBEDDING_CONFIG (self), 0);

  return self->embedding_dim;
}

/**
 * hp_embedding_config_get_dtype:
 * @self: a #HpEmbeddingConfig
 *
 * Gets #HpEmbeddingConfig:dtype.
 *
 * Returns: the element type of the table
 */
HpDType
hp_embedding_config_get_dtype (HpEmbeddingConfig *self)
{
  g_return_val_if_fail (HP_IS_EMBEDDING_CONFIG (self), HP_DTYPE_FLOAT32);

  return self->dtype;
}

/* HpEmbedding */

static HpEmbeddingConfig *
get_config (HpEmbedding *self)
{
  return HP_EMBEDDING_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (self)));
}

static void
hp_embedding_constructed (GObject *object)
{
  HpEmbeddingConfig *config;
  g_autoptr(HpTensor) weight = NULL;

  G_OBJECT_CLASS (hp_embedding_parent_class)->constructed (object);

  /* a config that g_initable_init() rejects registers nothing */
  config = get_config (HP_EMBEDDING (object));
  if (!hp_dtype_is_floating (config->dtype))
    return;

  weight = hp_tensor_new_zeros (config->dtype,
                                (gint64[]) { config->num_embeddings, config->embedding_dim }, 2);
  hp_module_register_parameter (HP_MODULE (object), "weight", weight, NULL);
}

static gboolean
hp_embedding_setup (HpConfigurable  *configurable,
                    GError         **error)
{
  HpEmbeddingConfig *config = get_config (HP_EMBEDDING (configurable));

  if (!HP_CONFIGURABLE_CLASS (hp_embedding_parent_class)->setup (configurable, error))
    return FALSE;

  return _hp_nn_check_dtype (HP_CONFIG (config), config->dtype, error);
}

static GPtrArray *
hp_embedding_forward (HpModule   *module,
                      GPtrArray  *args,
                      GError    **error)
{
  HpTensor *ids = _hp_nn_single_arg (module, args, error);

  if (ids == NULL)
    return NULL;
  return _hp_nn_single_output (hp_tensor_embedding (hp_module_get_parameter (module, "weight"),
                                                    ids, error));
}

static gboolean
hp_embedding_reset_parameters (HpModule  *module,
                               guint64    seed,
                               GError   **error)
{
  g_autoptr(HpInitializer) normal = hp_initializer_new_normal (0.0, 1.0);

  return hp_initializer_apply (normal, hp_module_get_parameter (module, "weight"),
                               hp_module_derive_seed (seed, "weight"), error);
}

static void
hp_embedding_class_init (HpEmbeddingClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_embedding_setup;
  object_class->constructed = hp_embedding_constructed;
  module_class->forward = hp_embedding_forward;
  module_class->reset_parameters = hp_embedding_reset_parameters;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "ids", NULL });
  hp_module_type_set_embedding (G_TYPE_FROM_CLASS (klass), TRUE);
}

static void
hp_embedding_init (HpEmbedding *self)
{
}

/**
 * hp_embedding_new:
 * @config: a #HpEmbeddingConfig
 * @error: return location for a #GError
 *
 * Builds an embedding table from @config, as hp_config_build() does.
 *
 * Returns: (transfer full): the new #HpEmbedding, or %NULL with
 *   %HP_ERROR_CONFIG when #HpEmbeddingConfig:dtype is not a
 *   floating-point type
 */
HpEmbedding *
hp_embedding_new (HpEmbeddingConfig  *config,
                  GError            **error)
{
  g_return_val_if_fail (HP_IS_EMBEDDING_CONFIG (config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_EMBEDDING (hp_config_build (HP_CONFIG (config), error));
}
