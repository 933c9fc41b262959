/* hp-model-spec.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-error-private.h"
#include "hp-error.h"
#include "hp-model-spec.h"
#include "hp-state-dict-adapter.h"

/**
 * HpModelSpec:
 *
 * Everything a trainer needs to know about one model, under a name (the
 * `ModelSpec` of torchtitan): how to build it, how to parallelize it
 * and split it into pipeline stages, what to do once its optimizers
 * exist, and which [iface@Hp.StateDictAdapter] converts its checkpoints to and
 * from Hugging Face's.
 *
 * The model comes from exactly one of two sources: a model
 * configuration ([property@Hp.ModelSpec:model]), built with [method@Hp.Config.build], or
 * a build function ([method@Hp.ModelSpec.set_build_model_func]), the older
 * way that lets existing specs keep working.
 * [method@Hp.ModelSpec.validate] checks that one and only one is set, and
 * [method@Hp.ModelSpec.build_model] builds from it.
 *
 * Specs are registered by name in a process-wide registry
 * ([method@Hp.ModelSpec.register], [func@Hp.ModelSpec.lookup],
 * [func@Hp.ModelSpec.list_names]), the [class@Hp.ModelSpecRegistry], which signals
 * each registration. The registry keeps a reference to the spec itself,
 * so changes made to a spec after registering it are seen by the
 * callers that look it up; the name is fixed at construction.
 *
 * |[<!-- language="C" -->
 * g_autoptr(HpModelSpec) spec = hp_model_spec_new ("llama3");
 * hp_model_spec_set_model (spec, model_config);
 * hp_model_spec_set_parallelize_func (spec, parallelize_llama, NULL, NULL);
 * if (!hp_model_spec_register (spec, &error))
 *   return FALSE;
 * ...
 * g_autoptr(HpModelSpec) found = hp_model_spec_lookup ("llama3", &error);
 * g_autoptr(HpBaseModel) model = hp_model_spec_build_model (found, &error);
 * ]|
 *
 * Since: 1.0
 */

/* A function with its data, freed by its destroy notify */
typedef struct
{
  GCallback func;
  gpointer user_data;
  GDestroyNotify destroy;
} Callback;

struct _HpModelSpec
{
  GObject parent_instance;

  gchar *name;
  gchar *flavor;
  HpBaseModelConfig *model;
  GType state_dict_adapter_type;

  Callback build_model;
  Callback parallelize;
  Callback pipelining;
  Callback post_optimizer_build;
};

G_DEFINE_FINAL_TYPE (HpModelSpec, hp_model_spec, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_NAME,
  PROP_FLAVOR,
  PROP_MODEL,
  PROP_STATE_DICT_ADAPTER_TYPE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
callback_clear (Callback *callback)
{
  GDestroyNotify destroy = callback->destroy;
  gpointer user_data = callback->user_data;

  callback->func = NULL;
  callback->user_data = NULL;
  callback->destroy = NULL;
  if (destroy != NULL)
    destroy (user_data);
}

static void
callback_set (Callback       *callback,
              GCallback       func,
              gpointer        user_data,
              GDestroyNotify  destroy)
{
  callback_clear (callback);
  callback->func = func;
  callback->user_data = user_data;
  callback->destroy = destroy;
}

static void
hp_model_spec_dispose (GObject *object)
{
  HpModelSpec *self = HP_MODEL_SPEC (object);

  g_clear_object (&self->model);
  callback_clear (&self->build_model);
  callback_clear (&self->parallelize);
  callback_clear (&self->pipelining);
  callback_clear (&self->post_optimizer_build);

  G_OBJECT_CLASS (hp_model_spec_parent_class)->dispose (object);
}

static void
hp_model_spec_finalize (GObject *object)
{
  HpModelSpec *self = HP_MODEL_SPEC (object);

  g_free (self->name);
  g_free (self->flavor);

  G_OBJECT_CLASS (hp_model_spec_parent_class)->finalize (object);
}

static void
hp_model_spec_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  HpModelSpec *self = HP_MODEL_SPEC (object);

  switch (prop_id)
    {
    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;
    case PROP_FLAVOR:
      g_value_set_string (value, self->flavor);
      break;
    case PROP_MODEL:
      g_value_set_object (value, self->model);
      break;
    case PROP_STATE_DICT_ADAPTER_TYPE:
      g_value_set_gtype (value, self->state_dict_adapter_type);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_model_spec_set_property (GObject      *object,
                            guint         prop_id,
                            const GValue *value,
                            GParamSpec   *pspec)
{
  HpModelSpec *self = HP_MODEL_SPEC (object);

  switch (prop_id)
    {
    case PROP_NAME:
      self->name = g_value_dup_string (value);
      break;
    case PROP_FLAVOR:
      hp_model_spec_set_flavor (self, g_value_get_string (value));
      break;
    case PROP_MODEL:
      hp_model_spec_set_model (self, g_value_get_object (value));
      break;
    case PROP_STATE_DICT_ADAPTER_TYPE:
      hp_model_spec_set_state_dict_adapter_type (self, g_value_get_gtype (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_model_spec_class_init (HpModelSpecClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = hp_model_spec_dispose;
  object_class->finalize = hp_model_spec_finalize;
  object_class->get_property = hp_model_spec_get_property;
  object_class->set_property = hp_model_spec_set_property;

  /**
   * HpModelSpec:name:
   *
   * The name the spec is registered and looked up by, such as
   * `llama3`. It is set at construction and does not change.
   *
   * Since: 1.0
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE |
                          G_PARAM_CONSTRUCT_ONLY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpModelSpec:flavor:
   *
   * The variant of the model, such as `debugmodel` or `8B`, or %NULL.
   *
   * Since: 1.0
   */
  properties[PROP_FLAVOR] =
    g_param_spec_string ("flavor", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpModelSpec:model:
   *
   * The configuration the model is built from, or %NULL when the spec
   * has a build function instead ([method@Hp.ModelSpec.set_build_model_func]).
   *
   * Since: 1.0
   */
  properties[PROP_MODEL] =
    g_param_spec_object ("model", NULL, NULL,
                         HP_TYPE_BASE_MODEL_CONFIG,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpModelSpec:state-dict-adapter-type:
   *
   * The type of the [iface@Hp.StateDictAdapter] that converts the model's state
   * dicts to and from Hugging Face checkpoints, an instantiable type
   * implementing the interface, or %G_TYPE_NONE for none.
   *
   * Since: 1.0
   */
  properties[PROP_STATE_DICT_ADAPTER_TYPE] =
    g_param_spec_gtype ("state-dict-adapter-type", NULL, NULL,
                        G_TYPE_NONE,
                        (G_PARAM_READWRITE |
                         G_PARAM_EXPLICIT_NOTIFY |
                         G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_model_spec_init (HpModelSpec *self)
{
  self->state_dict_adapter_type = G_TYPE_NONE;
}

/**
 * hp_model_spec_new:
 * @name: the name of the model, not empty
 *
 * Creates a spec with no model configuration and no functions; set one
 * of the two sources of the model before building or registering it.
 *
 * Returns: (transfer full): a new [class@Hp.ModelSpec]
 *
 * Since: 1.0
 */
HpModelSpec *
hp_model_spec_new (const gchar *name)
{
  g_return_val_if_fail (name != NULL && *name != '\0', NULL);

  return g_object_new (HP_TYPE_MODEL_SPEC, "name", name, NULL);
}

/**
 * hp_model_spec_get_name:
 * @self: a [class@Hp.ModelSpec]
 *
 * Gets the name the spec is registered under.
 *
 * Returns: (nullable): the [property@Hp.ModelSpec:name], %NULL only for a spec
 *   made without one
 *
 * Since: 1.0
 */
const gchar *
hp_model_spec_get_name (HpModelSpec *self)
{
  g_return_val_if_fail (HP_IS_MODEL_SPEC (self), NULL);

  return self->name;
}

/**
 * hp_model_spec_get_flavor:
 * @self: a [class@Hp.ModelSpec]
 *
 * Gets the flavor of the model, such as a size name.
 *
 * Returns: (nullable): the [property@Hp.ModelSpec:flavor]
 *
 * Since: 1.0
 */
const gchar *
hp_model_spec_get_flavor (HpModelSpec *self)
{
  g_return_val_if_fail (HP_IS_MODEL_SPEC (self), NULL);

  return self->flavor;
}

/**
 * hp_model_spec_set_flavor:
 * @self: a [class@Hp.ModelSpec]
 * @flavor: (nullable): the variant of the model
 *
 * Sets [property@Hp.ModelSpec:flavor].
 *
 * Since: 1.0
 */
void
hp_model_spec_set_flavor (HpModelSpec *self,
                          const gchar *flavor)
{
  g_return_if_fail (HP_IS_MODEL_SPEC (self));

  if (g_strcmp0 (self->flavor, flavor) == 0)
    return;
  g_free (self->flavor);
  self->flavor = g_strdup (flavor);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FLAVOR]);
}

/**
 * hp_model_spec_get_model:
 * @self: a [class@Hp.ModelSpec]
 *
 * Gets the model configuration the spec builds from.
 *
 * Returns: (transfer none) (nullable): the [property@Hp.ModelSpec:model]
 *
 * Since: 1.0
 */
HpBaseModelConfig *
hp_model_spec_get_model (HpModelSpec *self)
{
  g_return_val_if_fail (HP_IS_MODEL_SPEC (self), NULL);

  return self->model;
}

/**
 * hp_model_spec_set_model:
 * @self: a [class@Hp.ModelSpec]
 * @model: (nullable): the configuration the model is built from
 *
 * Sets [property@Hp.ModelSpec:model]. The spec keeps a reference to @model, not a
 * copy.
 *
 * Since: 1.0
 */
void
hp_model_spec_set_model (HpModelSpec       *self,
                         HpBaseModelConfig *model)
{
  g_return_if_fail (HP_IS_MODEL_SPEC (self));
  g_return_if_fail (model == NULL || HP_IS_BASE_MODEL_CONFIG (model));

  if (g_set_object (&self->model, model))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MODEL]);
}

/**
 * hp_model_spec_get_state_dict_adapter_type:
 * @self: a [class@Hp.ModelSpec]
 *
 * Gets the type of the adapter to Hugging Face checkpoints.
 *
 * Returns: the [property@Hp.ModelSpec:state-dict-adapter-type], %G_TYPE_NONE for
 *   none
 *
 * Since: 1.0
 */
GType
hp_model_spec_get_state_dict_adapter_type (HpModelSpec *self)
{
  g_return_val_if_fail (HP_IS_MODEL_SPEC (self), G_TYPE_NONE);

  return self->state_dict_adapter_type;
}

/**
 * hp_model_spec_set_state_dict_adapter_type:
 * @self: a [class@Hp.ModelSpec]
 * @adapter_type: an instantiable, non-abstract type implementing
 *   [iface@Hp.StateDictAdapter], or %G_TYPE_NONE
 *
 * Sets [property@Hp.ModelSpec:state-dict-adapter-type].
 *
 * Since: 1.0
 */
void
hp_model_spec_set_state_dict_adapter_type (HpModelSpec *self,
                                           GType        adapter_type)
{
  g_return_if_fail (HP_IS_MODEL_SPEC (self));
  g_return_if_fail (adapter_type == G_TYPE_NONE ||
                    (G_TYPE_IS_INSTANTIATABLE (adapter_type) &&
                     !G_TYPE_IS_ABSTRACT (adapter_type) &&
                     g_type_is_a (adapter_type, HP_TYPE_STATE_DICT_ADAPTER)));

  if (self->state_dict_adapter_type == adapter_type)
    return;
  self->state_dict_adapter_type = adapter_type;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE_DICT_ADAPTER_TYPE]);
}

/**
 * hp_model_spec_set_build_model_func:
 * @self: a [class@Hp.ModelSpec]
 * @func: (nullable) (scope notified) (closure user_data) (destroy destroy):
 *   the function that builds the model, or %NULL for none
 * @user_data: data for @func
 * @destroy: (nullable): frees @user_data when the function is replaced
 *   or the spec is disposed
 *
 * Sets the function that builds the model, for a spec without
 * [property@Hp.ModelSpec:model] (the `build_model_fn` of torchtitan).
 *
 * Since: 1.0
 */
void
hp_model_spec_set_build_model_func (HpModelSpec      *self,
                                    HpBuildModelFunc  func,
                                    gpointer          user_data,
                                    GDestroyNotify    destroy)
{
  g_return_if_fail (HP_IS_MODEL_SPEC (self));

  callback_set (&self->build_model, G_CALLBACK (func), user_data, destroy);
}

/**
 * hp_model_spec_has_build_model_func:
 * @self: a [class@Hp.ModelSpec]
 *
 * Whether a build-model function is set.
 *
 * Returns: %TRUE if @self has a build function
 *
 * Since: 1.0
 */
gboolean
hp_model_spec_has_build_model_func (HpModelSpec *self)
{
  g_return_val_if_fail (HP_IS_MODEL_SPEC (self), FALSE);

  return self->build_model.func != NULL;
}

/**
 * hp_model_spec_set_parallelize_func:
 * @self: a [class@Hp.ModelSpec]
 * @func: (nullable) (scope notified) (closure user_data) (destroy destroy):
 *   the function that parallelizes the model, or %NULL for none
 * @user_data: data for @func
 * @destroy: (nullable): frees @user_data when the function is replaced
 *   or the spec is disposed
 *
 * Sets the function [method@Hp.ModelSpec.parallelize] runs.
 *
 * Since: 1.0
 */
void
hp_model_spec_set_parallelize_func (HpModelSpec       *self,
                                    HpParallelizeFunc  func,
                                    gpointer           user_data,
                                    GDestroyNotify     destroy)
{
  g_return_if_fail (HP_IS_MODEL_SPEC (self));

  callback_set (&self->parallelize, G_CALLBACK (func), user_data, destroy);
}

/**
 * hp_model_spec_has_parallelize_func:
 * @self: a [class@Hp.ModelSpec]
 *
 * Whether a parallelize function is set.
 *
 * Returns: %TRUE if @self has a parallelize function
 *
 * Since: 1.0
 */
gboolean
hp_model_spec_has_parallelize_func (HpModelSpec *self)
{
  g_return_val_if_fail (HP_IS_MODEL_SPEC (self), FALSE);

  return self->parallelize.func != NULL;
}

/**
 * hp_model_spec_set_pipelining_func:
 * @self: a [class@Hp.ModelSpec]
 * @func: (nullable) (scope notified) (closure user_data) (destroy destroy):
 *   the function that applies pipeline parallelism, or %NULL for none
 * @user_data: data for @func
 * @destroy: (nullable): frees @user_data when the function is replaced
 *   or the spec is disposed
 *
 * Sets the function [method@Hp.ModelSpec.pipeline] runs.
 *
 * Since: 1.0
 */
void
hp_model_spec_set_pipelining_func (HpModelSpec      *self,
                                   HpPipeliningFunc  func,
                                   gpointer          user_data,
                                   GDestroyNotify    destroy)
{
  g_return_if_fail (HP_IS_MODEL_SPEC (self));

  callback_set (&self->pipelining, G_CALLBACK (func), user_data, destroy);
}

/**
 * hp_model_spec_has_pipelining_func:
 * @self: a [class@Hp.ModelSpec]
 *
 * Whether a pipelining function is set.
 *
 * Returns: %TRUE if @self has a pipelining function, that is, if the
 *   model supports pipeline parallelism
 *
 * Since: 1.0
 */
gboolean
hp_model_spec_has_pipelining_func (HpModelSpec *self)
{
  g_return_val_if_fail (HP_IS_MODEL_SPEC (self), FALSE);

  return self->pipelining.func != NULL;
}

/**
 * hp_model_spec_set_post_optimizer_build_func:
 * @self: a [class@Hp.ModelSpec]
 * @func: (nullable) (scope notified) (closure user_data) (destroy destroy):
 *   the function to run once the optimizers are built, or %NULL for none
 * @user_data: data for @func
 * @destroy: (nullable): frees @user_data when the function is replaced
 *   or the spec is disposed
 *
 * Sets the function [method@Hp.ModelSpec.post_optimizer_build] runs.
 *
 * Since: 1.0
 */
void
hp_model_spec_set_post_optimizer_build_func (HpModelSpec              *self,
                                             HpPostOptimizerBuildFunc  func,
                                             gpointer                  user_data,
                                             GDestroyNotify            destroy)
{
  g_return_if_fail (HP_IS_MODEL_SPEC (self));

  callback_set (&self->post_optimizer_build, G_CALLBACK (func), user_data, destroy);
}

/**
 * hp_model_spec_has_post_optimizer_build_func:
 * @self: a [class@Hp.ModelSpec]
 *
 * Whether a post-optimizer-build function is set.
 *
 * Returns: %TRUE if @self has a post-optimizer-build function
 *
 * Since: 1.0
 */
gboolean
hp_model_spec_has_post_optimizer_build_func (HpModelSpec *self)
{
  g_return_val_if_fail (HP_IS_MODEL_SPEC (self), FALSE);

  return self->post_optimizer_build.func != NULL;
}

/**
 * hp_model_spec_validate:
 * @self: a [class@Hp.ModelSpec]
 * @error: return location for a [struct@GLib.Error]
 *
 * Checks that @self has a name and exactly one source for its model:
 * a [property@Hp.ModelSpec:model] or a build function.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_CONFIG][error@Hp.Error]: `ModelSpec 'llama3'
 *   requires build_model_fn or model config` when it has neither,
 *   `ModelSpec 'llama3' must not set both build_model_fn and model
 *   config` when it has both, or `ModelSpec has no name`
 *
 * Since: 1.0
 */
gboolean
hp_model_spec_validate (HpModelSpec  *self,
                        GError      **error)
{
  gboolean has_func;

  g_return_val_if_fail (HP_IS_MODEL_SPEC (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->name == NULL || *self->name == '\0')
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "ModelSpec has no name");
      return FALSE;
    }

  has_func = self->build_model.func != NULL;
  if (!has_func && self->model == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "ModelSpec '%s' requires build_model_fn or model config", self->name);
      return FALSE;
    }
  if (has_func && self->model != NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "ModelSpec '%s' must not set both build_model_fn and model config",
                   self->name);
      return FALSE;
    }
  return TRUE;
}

static HpBaseModel *
build_from_config (HpModelSpec  *self,
                   GError      **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GObject) model = hp_config_build (HP_CONFIG (self->model), &local_error);

  if (model == NULL)
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                  "ModelSpec '%s': ", self->name);
      return NULL;
    }
  if (!HP_IS_BASE_MODEL (model))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "ModelSpec '%s': model config %s builds a %s, which is not a HpBaseModel",
                   self->name, G_OBJECT_TYPE_NAME (self->model), G_OBJECT_TYPE_NAME (model));
      return NULL;
    }
  return HP_BASE_MODEL (g_steal_pointer (&model));
}

/**
 * hp_model_spec_build_model:
 * @self: a [class@Hp.ModelSpec]
 * @error: return location for a [struct@GLib.Error]
 *
 * Builds the model: with [method@Hp.Config.build] from [property@Hp.ModelSpec:model], or
 * with the build function. @self must be valid
 * ([method@Hp.ModelSpec.validate]). A model configuration is built as it is
 * now; the model keeps a copy of it.
 *
 * Returns: (transfer full): a new model, or %NULL with @error set: the
 *   error of [method@Hp.ModelSpec.validate]; the error of [method@Hp.Config.build]
 *   prefixed with the spec's name; [HP_ERROR_CONFIG][error@Hp.Error] if the model
 *   configuration builds something that is not a [class@Hp.BaseModel];
 *   [HP_ERROR_STATE][error@Hp.Error] if the build function returns something that is
 *   not a [class@Hp.BaseModel], or nothing without an error; or the error of
 *   the build function
 *
 * Since: 1.0
 */
HpBaseModel *
hp_model_spec_build_model (HpModelSpec  *self,
                           GError      **error)
{
  GError *local_error = NULL;
  HpBaseModel *model;

  g_return_val_if_fail (HP_IS_MODEL_SPEC (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!hp_model_spec_validate (self, error))
    return NULL;

  if (self->model != NULL)
    return build_from_config (self, error);

  model = ((HpBuildModelFunc) self->build_model.func) (self, self->build_model.user_data,
                                                       &local_error);
  return _hp_error_check_returned (model, local_error, HP_TYPE_BASE_MODEL, "model", error,
                                   "build_model_fn of ModelSpec '%s'", self->name);
}

/* Runs a parallelize or pipelining function */
static gboolean
run_model_func (HpModelSpec     *self,
                Callback        *callback,
                const gchar     *field,
                const gchar     *missing,
                HpBaseModel     *model,
                HpParallelDims  *dims,
                GError         **error)
{
  GError *local_error = NULL;
  gboolean ok;

  if (callback->func == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "ModelSpec '%s' has no %s: %s", self->name, field, missing);
      return FALSE;
    }

  ok = ((HpParallelizeFunc) callback->func) (model, dims, callback->user_data, &local_error);
  return _hp_error_check_succeeded (ok, local_error, error,
                                    "%s of ModelSpec '%s'", field, self->name);
}

/**
 * hp_model_spec_parallelize:
 * @self: a [class@Hp.ModelSpec]
 * @model: the model to parallelize
 * @dims: the resolved parallel dims of the job
 *   ([method@Hp.ParallelDims.resolve])
 * @error: return location for a [struct@GLib.Error]
 *
 * Runs the parallelize function on @model.
 *
 * Returns: %TRUE, or %FALSE with @error set: [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] if
 *   @self has no parallelize function, [HP_ERROR_STATE][error@Hp.Error] if it failed
 *   without an error, or its error
 *
 * Since: 1.0
 */
gboolean
hp_model_spec_parallelize (HpModelSpec     *self,
                           HpBaseModel     *model,
                           HpParallelDims  *dims,
                           GError         **error)
{
  g_return_val_if_fail (HP_IS_MODEL_SPEC (self), FALSE);
  g_return_val_if_fail (HP_IS_BASE_MODEL (model), FALSE);
  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (dims), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return run_model_func (self, &self->parallelize, "parallelize_fn",
                         "the model cannot be parallelized", model, dims, error);
}

/**
 * hp_model_spec_pipeline:
 * @self: a [class@Hp.ModelSpec]
 * @model: the model to split into pipeline stages
 * @dims: the resolved parallel dims of the job
 *   ([method@Hp.ParallelDims.resolve])
 * @error: return location for a [struct@GLib.Error]
 *
 * Runs the pipelining function on @model.
 *
 * Returns: %TRUE, or %FALSE with @error set: [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] if
 *   @self has no pipelining function (the model does not support
 *   pipeline parallelism), [HP_ERROR_STATE][error@Hp.Error] if it failed without an
 *   error, or its error
 *
 * Since: 1.0
 */
gboolean
hp_model_spec_pipeline (HpModelSpec     *self,
                        HpBaseModel     *model,
                        HpParallelDims  *dims,
                        GError         **error)
{
  g_return_val_if_fail (HP_IS_MODEL_SPEC (self), FALSE);
  g_return_val_if_fail (HP_IS_BASE_MODEL (model), FALSE);
  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (dims), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return run_model_func (self, &self->pipelining, "pipelining_fn",
                         "the model does not support pipeline parallelism", model, dims, error);
}

/**
 * hp_model_spec_post_optimizer_build:
 * @self: a [class@Hp.ModelSpec]
 * @optimizers: the optimizers of the job
 * @model: the model they optimize
 *
 * Runs the post-optimizer-build function, if @self has one; does
 * nothing otherwise.
 *
 * Since: 1.0
 */
void
hp_model_spec_post_optimizer_build (HpModelSpec *self,
                                    GObject     *optimizers,
                                    HpBaseModel *model)
{
  g_return_if_fail (HP_IS_MODEL_SPEC (self));
  g_return_if_fail (G_IS_OBJECT (optimizers));
  g_return_if_fail (HP_IS_BASE_MODEL (model));

  if (self->post_optimizer_build.func != NULL)
    ((HpPostOptimizerBuildFunc) self->post_optimizer_build.func) (optimizers, model,
                                                                  self->post_optimizer_build.user_data);
}
