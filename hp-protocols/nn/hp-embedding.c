/* hp-embedding.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-config-field.h"
#include "hp-embedding.h"
#include "hp-error.h"
#include "hp-initializer.h"
#include "hp-nn-basic-private.h"
#include "hp-tensor-enum-types.h"
#include "hp-tensor-ops.h"

/**
 * HpEmbeddingConfig:
 *
 * The configuration of a [class@Hp.Embedding]: the number of rows of the table
 * (the vocabulary size), the size of each row and the element type.
 *
 * Since: 1.0
 */

/**
 * HpEmbedding:
 *
 * A lookup table of torch's `nn.Embedding`, as a [class@Hp.Module] built from a
 * [class@Hp.EmbeddingConfig].
 *
 * Its one parameter, `weight`, has shape [num-embeddings,
 * embedding-dim]. Without a [class@Hp.ParamInit], [method@Hp.Module.init_states]
 * draws it from the standard normal distribution (torchtitan's
 * initialisation of token embeddings), from the seed
 * `hp_module_derive_seed (seed, "weight")`.
 *
 * The forward argument is `ids`, an int64 tensor of any shape with
 * values in [0, num-embeddings); the output has shape `ids.shape +
 * [embedding-dim]`. The class is marked as an embedding
 * ([func@Hp.Module.type_set_embedding]), so that the parameter counts of
 * [class@Hp.BaseModelConfig] leave it out of the FLOPs.
 *
 * Since: 1.0
 */

struct _HpEmbeddingConfig
{
  HpModuleConfig parent_instance;

  gint num_embeddings;
  gint embedding_dim;
  HpDType dtype;
};

G_DEFINE_FINAL_TYPE (HpEmbeddingConfig, hp_embedding_config, HP_TYPE_MODULE_CONFIG)

struct _HpEmbedding
{
  HpModule parent_instance;
};

G_DEFINE_FINAL_TYPE (HpEmbedding, hp_embedding, HP_TYPE_MODULE)

/* HpEmbeddingConfig */

/**
 * HpEmbeddingConfig:num-embeddings:
 *
 * The number of rows of the table: ids lie in [0, num-embeddings).
 *
 * Since: 1.0
 */
/**
 * HpEmbeddingConfig:embedding-dim:
 *
 * The size of each row: the last dim of the output.
 *
 * Since: 1.0
 */
/**
 * HpEmbeddingConfig:dtype:
 *
 * The element type of the table: float32 or float64.
 *
 * Since: 1.0
 */
static const HpConfigField embedding_config_fields[] = {
  HP_CONFIG_FIELD_INT (HpEmbeddingConfig, num_embeddings, "num-embeddings",
                       "Number of rows (the vocabulary size)", 1, G_MAXINT, 1),
  HP_CONFIG_FIELD_INT (HpEmbeddingConfig, embedding_dim, "embedding-dim",
                       "Size of each embedding vector", 1, G_MAXINT, 1),
  HP_CONFIG_FIELD_ENUM (HpEmbeddingConfig, dtype, "dtype", "Parameter dtype", hp_dtype_get_type,
                        HP_DTYPE_FLOAT32),
};

static gboolean
hp_embedding_config_validate (HpConfig  *config,
                              GError   **error)
{
  return HP_CONFIG_CLASS (hp_embedding_config_parent_class)->validate (config, error) &&
         _hp_nn_check_dtype (config, HP_EMBEDDING_CONFIG (config)->dtype, error);
}

static void
hp_embedding_config_class_init (HpEmbeddingConfigClass *klass)
{
  HP_CONFIG_CLASS (klass)->validate = hp_embedding_config_validate;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), embedding_config_fields,
                                  G_N_ELEMENTS (embedding_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_EMBEDDING);
}

static void
hp_embedding_config_init (HpEmbeddingConfig *self)
{
}

/**
 * hp_embedding_config_new:
 * @num_embeddings: the number of rows, at least 1
 * @embedding_dim: the size of a row, at least 1
 *
 * Creates the configuration of an embedding table with float32 values.
 *
 * Returns: (transfer full): a new [class@Hp.EmbeddingConfig]
 *
 * Since: 1.0
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

/* HpEmbedding */

static gboolean
hp_embedding_setup (HpConfigurable  *configurable,
                    GError         **error)
{
  HpEmbeddingConfig *config = HP_EMBEDDING_CONFIG (hp_configurable_get_config (configurable));
  g_autoptr(HpTensor) weight = NULL;

  if (!HP_CONFIGURABLE_CLASS (hp_embedding_parent_class)->setup (configurable, error))
    return FALSE;

  weight = hp_tensor_new_zeros (config->dtype,
                                (gint64[]) { config->num_embeddings, config->embedding_dim }, 2);
  return hp_module_register_parameter (HP_MODULE (configurable), "weight", weight, error);
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
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_embedding_setup;
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
 * @config: a [class@Hp.EmbeddingConfig]
 * @error: return location for a [struct@GLib.Error]
 *
 * Builds an embedding table from @config, as [method@Hp.Config.build] does.
 *
 * Returns: (transfer full): the new [class@Hp.Embedding], or %NULL with
 *   [HP_ERROR_CONFIG][error@Hp.Error] when [property@Hp.EmbeddingConfig:dtype] is not a
 *   floating-point type
 *
 * Since: 1.0
 */
HpEmbedding *
hp_embedding_new (HpEmbeddingConfig  *config,
                  GError            **error)
{
  g_return_val_if_fail (HP_IS_EMBEDDING_CONFIG (config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_EMBEDDING (hp_config_build (HP_CONFIG (config), error));
}

#include "hp-embedding-fields.c"
