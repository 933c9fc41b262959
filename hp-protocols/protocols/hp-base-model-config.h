/* hp-base-model-config.h: the configuration of a whole model
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-module-config.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

typedef struct _HpBaseModel HpBaseModel;

#define HP_TYPE_BASE_MODEL_CONFIG (hp_base_model_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (HpBaseModelConfig, hp_base_model_config, HP, BASE_MODEL_CONFIG, HpModuleConfig)

/**
 * HpBaseModelConfigClass:
 * @parent_class: the parent class
 * @update_from_config: adjusts the model configuration to the job
 *   configuration (parallelism, sequence length, ...); the default does
 *   nothing
 * @get_nparams_and_flops: counts the parameters of @model and the
 *   training FLOPs per token at @seq_len
 *
 * The class of model configurations.
 *
 * Since: 1.0
 */
struct _HpBaseModelConfigClass
{
  HpModuleConfigClass parent_class;

  gboolean (*update_from_config)    (HpBaseModelConfig  *self,
                                     HpConfig           *job_config,
                                     GError            **error);
  void     (*get_nparams_and_flops) (HpBaseModelConfig  *self,
                                     HpBaseModel        *model,
                                     gint64              seq_len,
                                     gint64             *nparams,
                                     gint64             *flops);

  /*< private >*/
  gpointer padding[8];
};

HP_AVAILABLE_IN_ALL
gboolean hp_base_model_config_update_from_config    (HpBaseModelConfig  *self,
                                                     HpConfig           *job_config,
                                                     GError            **error);
HP_AVAILABLE_IN_ALL
void     hp_base_model_config_get_nparams_and_flops (HpBaseModelConfig  *self,
                                                     HpBaseModel        *model,
                                                     gint64              seq_len,
                                                     gint64             *nparams,
                                                     gint64             *flops);

G_END_DECLS
