/* hp-base-model-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-base-model.h"
#include "hp-base-model-config.h"
#include "hp-module-private.h"

/**
 * HpBaseModelConfig:
 *
 * The configuration of a whole model ([class@Hp.BaseModel]). Besides its
 * fields it knows how to adjust itself to a training job
 * ([vfunc@Hp.BaseModelConfig.update_from_config]) and how to count the
 * parameters and FLOPs of the model it builds
 * ([vfunc@Hp.BaseModelConfig.get_nparams_and_flops]).
 *
 * Since: 1.0
 */

G_DEFINE_TYPE (HpBaseModelConfig, hp_base_model_config, HP_TYPE_MODULE_CONFIG)

static gboolean
hp_base_model_config_real_update_from_config (HpBaseModelConfig  *self,
                                              HpConfig           *job_config,
                                              GError            **error)
{
  return TRUE;
}

static gint64
tensor_numel (HpTensor *tensor)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (tensor, &ndim);
  gint64 numel = 1;

  for (guint d = 0; d < ndim; d++)
    numel *= shape[d];
  return numel;
}

/* A numeric field of @config as an integer, or 0 when it has none of
 * that name */
static gint64
int_field (HpBaseModelConfig *self,
           const gchar       *name)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_auto(GValue) as_int64 = G_VALUE_INIT;

  if (!hp_config_get_value (HP_CONFIG (self), name, &value, NULL) ||
      !g_value_type_transformable (G_VALUE_TYPE (&value), G_TYPE_INT64))
    return 0;
  g_value_init (&as_int64, G_TYPE_INT64);
  g_value_transform (&value, &as_int64);
  return g_value_get_int64 (&as_int64);
}

static void
hp_base_model_config_real_get_nparams_and_flops (HpBaseModelConfig *self,
                                                 HpBaseModel       *model,
                                                 gint64             seq_len,
                                                 gint64            *nparams,
                                                 gint64            *flops)
{
  g_autoptr(HpStateDict) params = hp_module_named_parameters (HP_MODULE (model));
  g_autoptr(GHashTable) embedding = g_hash_table_new (NULL, NULL);
  g_auto(GStrv) children = hp_module_get_child_names (HP_MODULE (model));
  gint64 total = 0;
  gint64 embedding_total = 0;
  gint64 n_layers = int_field (self, "n-layers");
  gint64 n_heads = int_field (self, "n-heads");
  gint64 dim = int_field (self, "dim");
  gint64 head_dim = n_heads > 0 ? dim / n_heads : 0;

  for (guint i = 0; children[i] != NULL; i++)
    {
      HpModule *child = hp_module_get_child (HP_MODULE (model), children[i]);
      g_autoptr(HpStateDict) own = NULL;

      if (!_hp_module_is_embedding (child))
        continue;
      own = hp_module_named_parameters (child);
      for (guint j = 0; j < hp_state_dict_get_size (own); j++)
        g_hash_table_add (embedding, hp_state_dict_get_tensor (own, j));
    }

  for (guint i = 0; i < hp_state_dict_get_size (params); i++)
    {
      HpTensor *tensor = hp_state_dict_get_tensor (params, i);
      gint64 numel = tensor_numel (tensor);

      total += numel;
      if (g_hash_table_contains (embedding, tensor))
        embedding_total += numel;
    }

  *nparams = total;
  *flops = 6 * (total - embedding_total) + 6 * n_layers * n_heads * head_dim * seq_len;
}

static void
hp_base_model_config_class_init (HpBaseModelConfigClass *klass)
{
  klass->update_from_config = hp_base_model_config_real_update_from_config;
  klass->get_nparams_and_flops = hp_base_model_config_real_get_nparams_and_flops;

  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_BASE_MODEL);
}

static void
hp_base_model_config_init (HpBaseModelConfig *self)
{
}

/**
 * hp_base_model_config_update_from_config:
 * @self: a [class@Hp.BaseModelConfig]
 * @job_config: (nullable): the configuration of the training job
 * @error: return location for a [struct@GLib.Error]
 *
 * Adjusts @self to @job_config: a model checks that it fits the
 * parallelism (heads divisible by the tensor-parallel degree, ...) and
 * installs its sharding configurations. The base class does nothing.
 *
 * Returns: %TRUE, or %FALSE with @error set when the model cannot run
 *   that job
 *
 * Since: 1.0
 */
gboolean
hp_base_model_config_update_from_config (HpBaseModelConfig  *self,
                                         HpConfig           *job_config,
                                         GError            **error)
{
  g_return_val_if_fail (HP_IS_BASE_MODEL_CONFIG (self), FALSE);
  g_return_val_if_fail (job_config == NULL || HP_IS_CONFIG (job_config), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return HP_BASE_MODEL_CONFIG_GET_CLASS (self)->update_from_config (self, job_config, error);
}

/**
 * hp_base_model_config_get_nparams_and_flops:
 * @self: a [class@Hp.BaseModelConfig]
 * @model: the model built from @self
 * @seq_len: the training sequence length
 * @nparams: (out): the number of parameters (global sizes; shared
 *   tensors counted once)
 * @flops: (out): the training FLOPs per token
 *
 * Counts the model's size and cost. The base class gives the dense
 * transformer estimate: `6 * (nparams - embedding parameters) +
 * 6 * n_layers * n_heads * head_dim * seq_len`, where the embedding
 * parameters are those of direct children marked with
 * [func@Hp.Module.type_set_embedding], and `n-layers`, `n-heads` and `dim`
 * are integer fields of @self (the attention term is 0 without them;
 * head_dim = dim / n_heads).
 *
 * Since: 1.0
 */
void
hp_base_model_config_get_nparams_and_flops (HpBaseModelConfig *self,
                                            HpBaseModel       *model,
                                            gint64             seq_len,
                                            gint64            *nparams,
                                            gint64            *flops)
{
  gint64 ignored_nparams;
  gint64 ignored_flops;

  g_return_if_fail (HP_IS_BASE_MODEL_CONFIG (self));
  g_return_if_fail (HP_IS_BASE_MODEL (model));

  HP_BASE_MODEL_CONFIG_GET_CLASS (self)->get_nparams_and_flops (self, model, seq_len,
                                                               nparams != NULL ? nparams : &ignored_nparams,
                                                               flops != NULL ? flops : &ignored_flops);
}
