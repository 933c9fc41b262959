/* hp-model-spec.h: how to build, parallelize and convert a model, and a
 * registry of them by name
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-base-model.h"
#include "hp-base-model-config.h"
#include "hp-parallel-dims.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_MODEL_SPEC (hp_model_spec_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpModelSpec, hp_model_spec, HP, MODEL_SPEC, GObject)

#define HP_TYPE_MODEL_SPEC_REGISTRY (hp_model_spec_registry_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpModelSpecRegistry, hp_model_spec_registry, HP, MODEL_SPEC_REGISTRY, GObject)

/**
 * HpBuildModelFunc:
 * @spec: the model spec
 * @user_data: (closure): the data given to
 *   [method@Hp.ModelSpec.set_build_model_func]
 * @error: return location for a [struct@GLib.Error]
 *
 * Builds the model of a [class@Hp.ModelSpec] that has no model configuration
 * (the `build_model_fn` of torchtitan).
 *
 * Returns: (transfer full) (nullable): a new model, or %NULL with
 *   @error set
 *
 * Since: 1.0
 */
typedef HpBaseModel *(*HpBuildModelFunc) (HpModelSpec  *spec,
                                          gpointer      user_data,
                                          GError      **error);

/**
 * HpParallelizeFunc:
 * @model: the model to parallelize, changed in place
 * @dims: the resolved parallel dims of the job
 * @user_data: (closure): the data given to
 *   [method@Hp.ModelSpec.set_parallelize_func]
 * @error: return location for a [struct@GLib.Error]
 *
 * Applies tensor, context and data parallelism to a model (the
 * `parallelize_fn` of torchtitan).
 *
 * Returns: %TRUE, or %FALSE with @error set
 *
 * Since: 1.0
 */
typedef gboolean (*HpParallelizeFunc) (HpBaseModel     *model,
                                       HpParallelDims  *dims,
                                       gpointer         user_data,
                                       GError         **error);

/**
 * HpPipeliningFunc:
 * @model: the model to split into pipeline stages, changed in place
 * @dims: the resolved parallel dims of the job
 * @user_data: (closure): the data given to
 *   [method@Hp.ModelSpec.set_pipelining_func]
 * @error: return location for a [struct@GLib.Error]
 *
 * Applies pipeline parallelism to a model (the `pipelining_fn` of
 * torchtitan).
 *
 * Returns: %TRUE, or %FALSE with @error set
 *
 * Since: 1.0
 */
typedef gboolean (*HpPipeliningFunc) (HpBaseModel     *model,
                                      HpParallelDims  *dims,
                                      gpointer         user_data,
                                      GError         **error);

/**
 * HpPostOptimizerBuildFunc:
 * @optimizers: the optimizers of the job
 * @model: the model they optimize
 * @user_data: (closure): the data given to
 *   [method@Hp.ModelSpec.set_post_optimizer_build_func]
 *
 * Adjusts the optimizers once they are built, for example by adding
 * hooks (the `post_optimizer_build_fn` of torchtitan).
 *
 * Since: 1.0
 */
typedef void (*HpPostOptimizerBuildFunc) (GObject     *optimizers,
                                          HpBaseModel *model,
                                          gpointer     user_data);

HP_AVAILABLE_IN_ALL
HpModelSpec         *hp_model_spec_new                          (const gchar               *name);
HP_AVAILABLE_IN_ALL
const gchar         *hp_model_spec_get_name                     (HpModelSpec               *self);
HP_AVAILABLE_IN_ALL
const gchar         *hp_model_spec_get_flavor                   (HpModelSpec               *self);
HP_AVAILABLE_IN_ALL
void                 hp_model_spec_set_flavor                   (HpModelSpec               *self,
                                                                 const gchar               *flavor);
HP_AVAILABLE_IN_ALL
HpBaseModelConfig   *hp_model_spec_get_model                    (HpModelSpec               *self);
HP_AVAILABLE_IN_ALL
void                 hp_model_spec_set_model                    (HpModelSpec               *self,
                                                                 HpBaseModelConfig         *model);
HP_AVAILABLE_IN_ALL
GType                hp_model_spec_get_state_dict_adapter_type  (HpModelSpec               *self);
HP_AVAILABLE_IN_ALL
void                 hp_model_spec_set_state_dict_adapter_type  (HpModelSpec               *self,
                                                                 GType                      adapter_type);

HP_AVAILABLE_IN_ALL
void                 hp_model_spec_set_build_model_func         (HpModelSpec               *self,
                                                                 HpBuildModelFunc           func,
                                                                 gpointer                   user_data,
                                                                 GDestroyNotify             destroy);
HP_AVAILABLE_IN_ALL
gboolean             hp_model_spec_has_build_model_func         (HpModelSpec               *self);
HP_AVAILABLE_IN_ALL
void                 hp_model_spec_set_parallelize_func         (HpModelSpec               *self,
                                                                 HpParallelizeFunc          func,
                                                                 gpointer                   user_data,
                                                                 GDestroyNotify             destroy);
HP_AVAILABLE_IN_ALL
gboolean             hp_model_spec_has_parallelize_func         (HpModelSpec               *self);
HP_AVAILABLE_IN_ALL
void                 hp_model_spec_set_pipelining_func          (HpModelSpec               *self,
                                                                 HpPipeliningFunc           func,
                                                                 gpointer                   user_data,
                                                                 GDestroyNotify             destroy);
HP_AVAILABLE_IN_ALL
gboolean             hp_model_spec_has_pipelining_func          (HpModelSpec               *self);
HP_AVAILABLE_IN_ALL
void                 hp_model_spec_set_post_optimizer_build_func (HpModelSpec              *self,
                                                                 HpPostOptimizerBuildFunc   func,
                                                                 gpointer                   user_data,
                                                                 GDestroyNotify             destroy);
HP_AVAILABLE_IN_ALL
gboolean             hp_model_spec_has_post_optimizer_build_func (HpModelSpec              *self);

HP_AVAILABLE_IN_ALL
gboolean             hp_model_spec_validate                     (HpModelSpec               *self,
                                                                 GError                   **error);
HP_AVAILABLE_IN_ALL
HpBaseModel         *hp_model_spec_build_model                  (HpModelSpec               *self,
                                                                 GError                   **error);
HP_AVAILABLE_IN_ALL
gboolean             hp_model_spec_parallelize                  (HpModelSpec               *self,
                                                                 HpBaseModel               *model,
                                                                 HpParallelDims            *dims,
                                                                 GError                   **error);
HP_AVAILABLE_IN_ALL
gboolean             hp_model_spec_pipeline                     (HpModelSpec               *self,
                                                                 HpBaseModel               *model,
                                                                 HpParallelDims            *dims,
                                                                 GError                   **error);
HP_AVAILABLE_IN_ALL
void                 hp_model_spec_post_optimizer_build         (HpModelSpec               *self,
                                                                 GObject                   *optimizers,
                                                                 HpBaseModel               *model);

HP_AVAILABLE_IN_ALL
gboolean             hp_model_spec_register                     (HpModelSpec               *self,
                                                                 GError                   **error);
HP_AVAILABLE_IN_ALL
HpModelSpec         *hp_model_spec_lookup                       (const gchar               *name,
                                                                 GError                   **error);
HP_AVAILABLE_IN_ALL
GStrv                hp_model_spec_list_names                   (void);
HP_AVAILABLE_IN_ALL
gboolean             hp_model_spec_unregister                   (const gchar               *name);

HP_AVAILABLE_IN_ALL
HpModelSpecRegistry *hp_model_spec_registry_get_default         (void);

G_END_DECLS
