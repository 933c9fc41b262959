/* hp-optimizer.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <float.h>

#include "hp-dtensor-private.h"
#include "hp-error.h"
#include "hp-grad-mode.h"
#include "hp-optimizer-private.h"

/**
 * HpOptimizer:
 *
 * The base class of optimizers, which update parameters from their
 * gradients, as `torch.optim.Optimizer` does. It is an
 * [class@Hp.Configurable]: a concrete optimizer such as [class@Hp.SGD] or [class@Hp.AdamW] is
 * built from its configuration ([class@Hp.OptimizerConfig] and subclasses),
 * with [method@Hp.Config.build] followed by [method@Hp.Optimizer.add_parameters], or
 * in one call with [method@Hp.OptimizerConfig.build_optimizer].
 *
 * |[<!-- language="C" -->
 * g_autoptr(HpAdamWConfig) config = hp_adamw_config_new ();
 * g_autoptr(GPtrArray) params = hp_module_parameters (model);
 * g_autoptr(HpOptimizer) optimizer =
 *   hp_optimizer_config_build_optimizer (HP_OPTIMIZER_CONFIG (config), params, &error);
 *
 * for (guint i = 0; i < n_steps; i++)
 *   {
 *     g_autoptr(HpTensor) loss = compute_loss (model, i, &error);
 *
 *     hp_optimizer_zero_grad (optimizer);
 *     hp_tensor_backward (loss, NULL, &error);
 *     hp_clip_grad_norm (params, 1.0, 2.0, &error);
 *     hp_optimizer_set_lr (optimizer, schedule (i));
 *     hp_optimizer_step (optimizer, &error);
 *   }
 * ]|
 *
 * The optimizer holds the parameter objects themselves, in the order
 * they were added; the states it keeps per parameter and the names of
 * [method@Hp.Optimizer.get_state] refer to that position. [method@Hp.Optimizer.step]
 * runs with gradient recording off and writes the new values into the
 * parameters' buffers, so every module and every tensor that holds a
 * parameter sees them, as in PyTorch. Tensors sharing a parameter's
 * buffer (made by [method@Hp.Tensor.detach] or [method@Hp.Tensor.reshape], or the
 * [struct@GLib.Bytes] of [method@Hp.Tensor.get_bytes]) see them too, and the buffer must
 * be writable: do not optimise a tensor made by
 * [ctor@Hp.Tensor.new_from_bytes] over read-only memory. Build the optimizer
 * after [method@Hp.Module.parallelize], which replaces the parameters it
 * distributes by new [class@Hp.DTensor] objects.
 *
 * Parameters may be [class@Hp.DTensor] objects: each rank updates its local
 * tensor with its local part of the gradient and keeps its states with
 * the same local layout, so a sharded parameter is optimised without
 * communication and ends up exactly as the same optimisation of the
 * whole tensor on one rank. The gradient of a DTensor parameter, as
 * [method@Hp.Tensor.backward] leaves it, is a DTensor with the parameter's
 * placements; a gradient with other placements, for example a
 * `Partial` one set with [method@Hp.Tensor.set_grad], is refused by the step
 * (redistribute it to the parameter's placements first).
 *
 * A parameter without a gradient is skipped: neither it nor its states
 * change in that step. [method@Hp.Optimizer.zero_grad] drops the gradients of
 * all parameters. [property@Hp.Optimizer:lr] is the learning rate of the next step;
 * a schedule sets it between steps. [property@Hp.Optimizer:step-count] counts the
 * steps taken.
 *
 * Since: 1.0
 */

/* A parameter and the states the optimizer keeps for it, by name in
 * the order they were made (each a tensor with the parameter's layout,
 * or a plain scalar) */
typedef struct
{
  HpTensor *tensor;
  HpStateDict *state;
} Param;

typedef struct
{
  GPtrArray *params;
  guint64 step;
  gdouble lr;
} HpOptimizerPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (HpOptimizer, hp_optimizer, HP_TYPE_CONFIGURABLE)

enum {
  PROP_0,
  PROP_LR,
  PROP_STEP_COUNT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
param_free (gpointer data)
{
  Param *param = data;

  g_object_unref (param->tensor);
  g_object_unref (param->state);
  g_free (param);
}

static gboolean
hp_optimizer_setup (HpConfigurable  *configurable,
                    GError         **error)
{
  HpOptimizerPrivate *priv = hp_optimizer_get_instance_private (HP_OPTIMIZER (configurable));
  HpConfig *config = hp_configurable_get_config (configurable);

  if (!HP_CONFIGURABLE_CLASS (hp_optimizer_parent_class)->setup (configurable, error))
    return FALSE;

  if (config == NULL)
    return TRUE;
  if (!HP_IS_OPTIMIZER_CONFIG (config))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "%s: the configuration of an optimizer must be an HpOptimizerConfig, not %s",
                   G_OBJECT_TYPE_NAME (configurable), G_OBJECT_TYPE_NAME (config));
      return FALSE;
    }
  priv->lr = hp_optimizer_config_get_lr (HP_OPTIMIZER_CONFIG (config));
  return TRUE;
}

static void
hp_optimizer_finalize (GObject *object)
{
  HpOptimizerPrivate *priv = hp_optimizer_get_instance_private (HP_OPTIMIZER (object));

  g_ptr_array_unref (priv->params);

  G_OBJECT_CLASS (hp_optimizer_parent_class)->finalize (object);
}

static void
hp_optimizer_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  HpOptimizer *self = HP_OPTIMIZER (object);

  switch (prop_id)
    {
    case PROP_LR:
      g_value_set_double (value, hp_optimizer_get_lr (self));
      break;
    case PROP_STEP_COUNT:
      g_value_set_uint64 (value, hp_optimizer_get_step_count (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_optimizer_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  HpOptimizer *self = HP_OPTIMIZER (object);

  switch (prop_id)
    {
    case PROP_LR:
      hp_optimizer_set_lr (self, g_value_get_double (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_optimizer_class_init (HpOptimizerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_optimizer_setup;
  object_class->finalize = hp_optimizer_finalize;
  object_class->get_property = hp_optimizer_get_property;
  object_class->set_property = hp_optimizer_set_property;

  /**
   * HpOptimizer:lr:
   *
   * The learning rate of the next step. It starts as the
   * configuration's [property@Hp.OptimizerConfig:lr]; a learning rate schedule
   * changes it between steps. The configuration itself keeps the
   * starting value.
   *
   * Since: 1.0
   */
  properties[PROP_LR] =
    g_param_spec_double ("lr", NULL, NULL,
                         0.0, DBL_MAX, 1e-3,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpOptimizer:step-count:
   *
   * The number of steps taken: [method@Hp.Optimizer.step] calls that
   * succeeded. (It is not named `step`, which would clash with
   * [method@Hp.Optimizer.step] in some languages.)
   *
   * Since: 1.0
   */
  properties[PROP_STEP_COUNT] =
    g_param_spec_uint64 ("step-count", NULL, NULL,
                         0, G_MAXUINT64, 0,
                         (G_PARAM_READABLE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (HP_TYPE_OPTIMIZER_CONFIG);
}

static void
hp_optimizer_init (HpOptimizer *self)
{
  HpOptimizerPrivate *priv = hp_optimizer_get_instance_private (self);

  priv->params = g_ptr_array_new_with_free_func (param_free);
  priv->lr = 1e-3;
}

/**
 * hp_optimizer_config_build_optimizer:
 * @self: the configuration of a concrete optimizer, such as an
 *   [class@Hp.SGDConfig] or an [class@Hp.AdamWConfig]
 * @parameters: (element-type HpTensor) (nullable): the parameters to
 *   optimise, as [method@Hp.Module.parameters] gives them, or %NULL to add them
 *   later
 * @error: return location for a [struct@GLib.Error]
 *
 * Builds the optimizer @self names ([method@Hp.Config.build]) and adds
 * @parameters to it ([method@Hp.Optimizer.add_parameters]), the equivalent of
 * `torch.optim.AdamW(model.parameters(), lr=...)`.
 *
 * Returns: (transfer full): the new optimizer, or %NULL with the error
 *   of [method@Hp.Config.build] or [method@Hp.Optimizer.add_parameters]
 *
 * Since: 1.0
 */
HpOptimizer *
hp_optimizer_config_build_optimizer (HpOptimizerConfig  *self,
                                     GPtrArray          *parameters,
                                     GError            **error)
{
  g_autoptr(GObject) built = NULL;

  g_return_val_if_fail (HP_IS_OPTIMIZER_CONFIG (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  built = hp_config_build (HP_CONFIG (self), error);
  if (built == NULL)
    return NULL;
  if (!HP_IS_OPTIMIZER (built))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "%s builds %s, which is not an HpOptimizer",
                   G_OBJECT_TYPE_NAME (self), G_OBJECT_TYPE_NAME (built));
      return NULL;
    }
  if (parameters != NULL &&
      !hp_optimizer_add_parameters (HP_OPTIMIZER (built), parameters, error))
    return NULL;

  return HP_OPTIMIZER (g_steal_pointer (&built));
}

/* The position of @tensor among the parameters of @self, or -1 */
static gint
find_parameter (HpOptimizerPrivate *priv,
                HpTensor           *tensor)
{
  for (guint i = 0; i < priv->params->len; i++)
    {
      Param *param = g_ptr_array_index (priv->params, i);

      if (param->tensor == tensor)
        return (gint) i;
    }
  return -1;
}

static gboolean
check_new_parameter (HpOptimizer  *self,
                     GPtrArray    *parameters,
                     guint         i,
                     GError      **error)
{
  HpOptimizerPrivate *priv = hp_optimizer_get_instance_private (self);
  HpTensor *tensor = g_ptr_array_index (parameters, i);
  guint index = priv->params->len + i;
  g_autofree gchar *what = _hp_tensor_describe (tensor);
  gint held = find_parameter (priv, tensor);

  if (held >= 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: parameter %u (%s) is already optimised, as parameter %d",
                   G_OBJECT_TYPE_NAME (self), index, what, held);
      return FALSE;
    }
  for (guint j = 0; j < i; j++)
    if (g_ptr_array_index (parameters, j) == (gpointer) tensor)
      {
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "%s: parameter %u (%s) is already optimised, as parameter %u",
                     G_OBJECT_TYPE_NAME (self), index, what, priv->params->len + j);
        return FALSE;
      }

  if (!hp_dtype_is_floating (hp_tensor_get_dtype (tensor)))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: cannot optimise parameter %u (%s): only float32 and float64 "
                   "tensors have gradients", G_OBJECT_TYPE_NAME (self), index, what);
      return FALSE;
    }
  if (!hp_tensor_is_leaf (tensor))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: cannot optimise parameter %u (%s): it has gradient history "
                   "(only leaf tensors can be optimised)", G_OBJECT_TYPE_NAME (self), index, what);
      return FALSE;
    }
  if (HP_IS_DTENSOR (tensor) &&
      _hp_placements_have_partial (hp_dtensor_get_placements (HP_DTENSOR (tensor))))
    {
      g_autofree gchar *text = hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (tensor)));

      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "%s: cannot optimise parameter %u (%s): a DTensor with placements %s "
                   "holds partial values still to be reduced",
                   G_OBJECT_TYPE_NAME (self), index, what, text);
      return FALSE;
    }
  return TRUE;
}

/**
 * hp_optimizer_add_parameters:
 * @self: a [class@Hp.Optimizer]
 * @parameters: (element-type HpTensor): the parameters to add
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds parameters to optimise, after those @self already has. A
 * parameter is a floating point leaf tensor, usually one of
 * [method@Hp.Module.parameters]; it does not need to require gradients
 * (parameters without a gradient are skipped by the step). A [class@Hp.DTensor]
 * may not have a `Partial` placement.
 *
 * Returns: %TRUE on success; %FALSE with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for
 *   a tensor given twice or already held, an int64 tensor or one with
 *   gradient history, or [HP_ERROR_PLACEMENT][error@Hp.Error] for a `Partial` DTensor. No
 *   parameter is added then.
 *
 * Since: 1.0
 */
gboolean
hp_optimizer_add_parameters (HpOptimizer  *self,
                             GPtrArray    *parameters,
                             GError      **error)
{
  HpOptimizerPrivate *priv;

  g_return_val_if_fail (HP_IS_OPTIMIZER (self), FALSE);
  g_return_val_if_fail (parameters != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  priv = hp_optimizer_get_instance_private (self);
  for (guint i = 0; i < parameters->len; i++)
    {
      g_return_val_if_fail (HP_IS_TENSOR (g_ptr_array_index (parameters, i)), FALSE);
      if (!check_new_parameter (self, parameters, i, error))
        return FALSE;
    }

  for (guint i = 0; i < parameters->len; i++)
    {
      Param *param = g_new0 (Param, 1);

      param->tensor = g_object_ref (g_ptr_array_index (parameters, i));
      param->state = hp_state_dict_new ();
      g_ptr_array_add (priv->params, param);
    }
  return TRUE;
}

/**
 * hp_optimizer_get_parameters:
 * @self: a [class@Hp.Optimizer]
 *
 * Gets the parameters @self optimises, in the order they were added.
 *
 * The array is annotated `(transfer container)` although the caller owns
 * the parameters' references too: the array holds one reference to each
 * and drops it when it is freed (its free function is [method@GObject.Object.unref]),
 * so freeing the array is all a caller does. Language bindings read
 * `(transfer full)` on such an array as one reference per element on top
 * of that and unref the elements twice.
 *
 * Returns: (transfer container) (element-type HpTensor): a new array of
 *   the parameters that unrefs them when freed
 *
 * Since: 1.0
 */
GPtrArray *
hp_optimizer_get_parameters (HpOptimizer *self)
{
  HpOptimizerPrivate *priv;
  GPtrArray *out;

  g_return_val_if_fail (HP_IS_OPTIMIZER (self), NULL);

  priv = hp_optimizer_get_instance_private (self);
  out = g_ptr_array_new_full (priv->params->len, g_object_unref);
  for (guint i = 0; i < priv->params->len; i++)
    {
      Param *param = g_ptr_array_index (priv->params, i);

      g_ptr_array_add (out, g_object_ref (param->tensor));
    }
  return out;
}

/**
 * hp_optimizer_get_n_parameters:
 * @self: a [class@Hp.Optimizer]
 *
 * Gets the number of parameters @self optimises.
 *
 * Returns: the number of parameters
 *
 * Since: 1.0
 */
guint
hp_optimizer_get_n_parameters (HpOptimizer *self)
{
  HpOptimizerPrivate *priv;

  g_return_val_if_fail (HP_IS_OPTIMIZER (self), 0);

  priv = hp_optimizer_get_instance_private (self);
  return priv->params->len;
}

/* Checks that @grad has the layout of @tensor, parameter @index */
static gboolean
check_gradient (HpOptimizer  *self,
                guint         index,
                HpTensor     *tensor,
                HpTensor     *grad,
                GError      **error)
{
  HpDTensor *dt, *dgrad;
  g_autofree gchar *want = NULL;
  g_autofree gchar *have = NULL;

  if (!HP_IS_DTENSOR (tensor))
    {
      if (HP_IS_DTENSOR (grad))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "%s: parameter %u is a plain HpTensor but its gradient is an HpDTensor",
                       G_OBJECT_TYPE_NAME (self), index);
          return FALSE;
        }
      return TRUE;
    }

  if (!HP_IS_DTENSOR (grad))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "%s: parameter %u is an HpDTensor but its gradient is a plain HpTensor",
                   G_OBJECT_TYPE_NAME (self), index);
      return FALSE;
    }

  dt = HP_DTENSOR (tensor);
  dgrad = HP_DTENSOR (grad);
  if (!hp_device_mesh_equal (hp_dtensor_get_mesh (dt), hp_dtensor_get_mesh (dgrad)))
    {
      g_autofree gchar *mesh = hp_device_mesh_to_string (hp_dtensor_get_mesh (dt));
      g_autofree gchar *grad_mesh = hp_device_mesh_to_string (hp_dtensor_get_mesh (dgrad));

      g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                   "%s: the gradient of parameter %u is on %s, but the parameter is on %s",
                   G_OBJECT_TYPE_NAME (self), index, grad_mesh, mesh);
      return FALSE;
    }
  if (_hp_placements_equal (hp_dtensor_get_placements (dt), hp_dtensor_get_placements (dgrad)))
    return TRUE;

  want = hp_placements_to_string (hp_dtensor_get_placements (dt));
  have = hp_placements_to_string (hp_dtensor_get_placements (dgrad));
  if (_hp_placements_have_partial (hp_dtensor_get_placements (dgrad)))
    g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                 "%s: the gradient of parameter %u has placements %s, but the parameter "
                 "has %s: reduce the Partial gradient to the parameter's placements "
                 "(hp_dtensor_redistribute()) before the step",
                 G_OBJECT_TYPE_NAME (self), index, have, want);
  else
    g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                 "%s: the gradient of parameter %u has placements %s, but the parameter "
                 "has %s", G_OBJECT_TYPE_NAME (self), index, have, want);
  return FALSE;
}

GArray *
_hp_optimizer_collect (HpOptimizer  *self,
                       GError      **error)
{
  HpOptimizerPrivate *priv = hp_optimizer_get_instance_private (self);
  g_autoptr(GArray) items = g_array_new (FALSE, FALSE, sizeof (HpOptimizerItem));

  for (guint i = 0; i < priv->params->len; i++)
    {
      Param *param = g_ptr_array_index (priv->params, i);
      HpTensor *grad = hp_tensor_get_grad (param->tensor);
      HpOptimizerItem item;

      if (grad == NULL)
        continue;
      if (!check_gradient (self, i, param->tensor, grad, error))
        return NULL;

      item.index = i;
      if (HP_IS_DTENSOR (param->tensor))
        {
          item.value = _hp_dtensor_peek_local (HP_DTENSOR (param->tensor));
          item.grad = _hp_dtensor_peek_local (HP_DTENSOR (grad));
        }
      else
        {
          item.value = param->tensor;
          item.grad = grad;
        }
      g_array_append_val (items, item);
    }
  return g_steal_pointer (&items);
}

HpTensor *
_hp_optimizer_lookup_state (HpOptimizer *self,
                            guint        index,
                            const gchar *name)
{
  HpOptimizerPrivate *priv = hp_optimizer_get_instance_private (self);
  Param *param = g_ptr_array_index (priv->params, index);
  HpTensor *state = hp_state_dict_lookup (param->state, name);

  if (state != NULL && HP_IS_DTENSOR (state))
    return _hp_dtensor_peek_local (HP_DTENSOR (state));
  return state;
}

HpTensor *
_hp_optimizer_add_state (HpOptimizer *self,
                         guint        index,
                         const gchar *name,
                         HpTensor    *local,
                         gboolean     like_parameter)
{
  HpOptimizerPrivate *priv = hp_optimizer_get_instance_private (self);
  Param *param = g_ptr_array_index (priv->params, index);

  if (like_parameter && HP_IS_DTENSOR (param->tensor))
    {
      HpDTensor *dt = HP_DTENSOR (param->tensor);
      guint ndim;
      const gint64 *shape = hp_tensor_get_shape (param->tensor, &ndim);
      g_autoptr(HpDTensor) wrapped = _hp_dtensor_new (local, hp_dtensor_get_mesh (dt),
                                                      hp_dtensor_get_placements (dt), shape, ndim);

      hp_state_dict_insert (param->state, name, HP_TENSOR (wrapped));
    }
  else
    {
      hp_state_dict_insert (param->state, name, local);
    }

  g_object_unref (local);
  return local;
}

/**
 * hp_optimizer_step:
 * @self: a [class@Hp.Optimizer]
 * @error: return location for a [struct@GLib.Error]
 *
 * Updates every parameter that has a gradient, in place, with
 * [vfunc@Hp.Optimizer.step], with gradient recording off, then advances
 * [property@Hp.Optimizer:step-count]. It needs no communication between ranks.
 *
 * Returns: %TRUE on success; %FALSE with [HP_ERROR_PLACEMENT][error@Hp.Error] or
 *   [HP_ERROR_MESH][error@Hp.Error] if the gradient of a parameter does not have the
 *   parameter's layout (a plain gradient for a DTensor, or other
 *   placements such as `Partial`), [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] if the class
 *   of @self does not implement [vfunc@Hp.Optimizer.step], or the error of
 *   the step. No parameter and no state changes then.
 *
 * Since: 1.0
 */
gboolean
hp_optimizer_step (HpOptimizer  *self,
                   GError      **error)
{
  HpOptimizerPrivate *priv;
  HpOptimizerClass *klass;
  gboolean was_enabled;
  gboolean ok;

  g_return_val_if_fail (HP_IS_OPTIMIZER (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  priv = hp_optimizer_get_instance_private (self);
  klass = HP_OPTIMIZER_GET_CLASS (self);
  if (klass->step == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "%s does not implement step", G_OBJECT_TYPE_NAME (self));
      return FALSE;
    }

  was_enabled = hp_grad_mode_is_enabled ();
  hp_grad_mode_set_enabled (FALSE);
  ok = klass->step (self, error);
  hp_grad_mode_set_enabled (was_enabled);
  if (!ok)
    return FALSE;

  priv->step++;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STEP_COUNT]);
  return TRUE;
}

/**
 * hp_optimizer_zero_grad:
 * @self: a [class@Hp.Optimizer]
 *
 * Drops the gradient of every parameter ([method@Hp.Tensor.zero_grad]), so
 * that the next backward pass starts from nothing.
 *
 * Since: 1.0
 */
void
hp_optimizer_zero_grad (HpOptimizer *self)
{
  HpOptimizerPrivate *priv;

  g_return_if_fail (HP_IS_OPTIMIZER (self));

  priv = hp_optimizer_get_instance_private (self);
  for (guint i = 0; i < priv->params->len; i++)
    {
      Param *param = g_ptr_array_index (priv->params, i);

      hp_tensor_zero_grad (param->tensor);
    }
}

/**
 * hp_optimizer_get_step_count:
 * @self: a [class@Hp.Optimizer]
 *
 * Gets the number of steps taken.
 *
 * Returns: the [property@Hp.Optimizer:step-count]
 *
 * Since: 1.0
 */
guint64
hp_optimizer_get_step_count (HpOptimizer *self)
{
  HpOptimizerPrivate *priv;

  g_return_val_if_fail (HP_IS_OPTIMIZER (self), 0);

  priv = hp_optimizer_get_instance_private (self);
  return priv->step;
}

/**
 * hp_optimizer_get_lr:
 * @self: a [class@Hp.Optimizer]
 *
 * Gets the learning rate of the next step.
 *
 * Returns: the [property@Hp.Optimizer:lr]
 *
 * Since: 1.0
 */
gdouble
hp_optimizer_get_lr (HpOptimizer *self)
{
  HpOptimizerPrivate *priv;

  g_return_val_if_fail (HP_IS_OPTIMIZER (self), 0.0);

  priv = hp_optimizer_get_instance_private (self);
  return priv->lr;
}

/**
 * hp_optimizer_set_lr:
 * @self: a [class@Hp.Optimizer]
 * @lr: the learning rate, 0 or more
 *
 * Sets the learning rate of the next steps ([property@Hp.Optimizer:lr]), as a
 * learning rate schedule does. The configuration is not changed.
 *
 * Since: 1.0
 */
void
hp_optimizer_set_lr (HpOptimizer *self,
                     gdouble      lr)
{
  HpOptimizerPrivate *priv;

  g_return_if_fail (HP_IS_OPTIMIZER (self));
  g_return_if_fail (lr >= 0.0);

  priv = hp_optimizer_get_instance_private (self);
  if (priv->lr != lr)
    {
      priv->lr = lr;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LR]);
    }
}

/**
 * hp_optimizer_get_state:
 * @self: a [class@Hp.Optimizer]
 *
 * Gets the states @self keeps per parameter, such as the momentum
 * buffer of [class@Hp.SGD] or the moments of [class@Hp.AdamW], named
 * `<index>.<state>` after the parameter's position in @self (`0.exp_avg`,
 * `0.exp_avg_sq`, `0.step`, `1.exp_avg`, ...), in parameter order. A
 * state that has the parameter's shape has its layout too: for a
 * [class@Hp.DTensor] parameter it is a DTensor with the parameter's mesh and
 * placements. A parameter gets its states at its first update, so a
 * parameter that never had a gradient has none.
 *
 * The tensors are the optimizer's own, not copies: the next step
 * changes them in place.
 *
 * Returns: (transfer full): the states
 *
 * Since: 1.0
 */
HpStateDict *
hp_optimizer_get_state (HpOptimizer *self)
{
  HpOptimizerPrivate *priv;
  HpStateDict *out;

  g_return_val_if_fail (HP_IS_OPTIMIZER (self), NULL);

  priv = hp_optimizer_get_instance_private (self);
  out = hp_state_dict_new ();
  for (guint i = 0; i < priv->params->len; i++)
    {
      Param *param = g_ptr_array_index (priv->params, i);
      guint n = hp_state_dict_get_size (param->state);

      for (guint j = 0; j < n; j++)
        {
          g_autofree gchar *name = g_strdup_printf ("%u.%s", i,
                                                    hp_state_dict_get_name (param->state, j));

          hp_state_dict_insert (out, name, hp_state_dict_get_tensor (param->state, j));
        }
    }
  return out;
}

/* Parses "<index>.<state>"; the state name must not be empty */
static gboolean
parse_state_name (const gchar  *name,
                  guint64      *index,
                  const gchar **state)
{
  gchar *end = NULL;

  if (!g_ascii_isdigit (name[0]))
    return FALSE;
  *index = g_ascii_strtoull (name, &end, 10);
  if (end == NULL || *end != '.' || end[1] == '\0')
    return FALSE;
  *state = end + 1;
  return TRUE;
}

typedef struct
{
  const HpOptimizerStateSpec *specs;
  guint n_specs;
} StateSpecs;

static GQuark
state_specs_quark (void)
{
  return g_quark_from_static_string ("hp-optimizer-state-specs");
}

void
_hp_optimizer_class_set_states (HpOptimizerClass           *klass,
                                const HpOptimizerStateSpec *specs,
                                guint                       n_specs)
{
  StateSpecs *data = g_new (StateSpecs, 1);

  g_return_if_fail (n_specs <= 32);

  data->specs = specs;
  data->n_specs = n_specs;
  g_type_set_qdata (G_TYPE_FROM_CLASS (klass), state_specs_quark (), data);
}

/* The states declared by the class of @self or the nearest ancestor
 * that declares them, or NULL */
static const StateSpecs *
lookup_state_specs (HpOptimizer *self)
{
  for (GType type = G_OBJECT_TYPE (self); type != HP_TYPE_OPTIMIZER; type = g_type_parent (type))
    {
      const StateSpecs *data = g_type_get_qdata (type, state_specs_quark ());

      if (data != NULL)
        return data;
    }
  return NULL;
}

/* The names of the states in @mask (bit i for spec i), as "a, b" */
static gchar *
state_names (const StateSpecs *specs,
             guint32           mask)
{
  GString *names = g_string_new (NULL);

  for (guint i = 0; i < specs->n_specs; i++)
    if (mask & (1u << i))
      g_string_append_printf (names, "%s%s", names->len > 0 ? ", " : "", specs->specs[i].name);
  return g_string_free (names, FALSE);
}

/* Checks @source, the entry @name, as the state @state_name of
 * parameter @index of @self, which @specs declares; sets the bit of its
 * spec in *@mask */
static gboolean
check_declared_state (HpOptimizer       *self,
                      const StateSpecs  *specs,
                      const gchar       *name,
                      const gchar       *state_name,
                      guint              index,
                      HpTensor          *param,
                      HpTensor          *source,
                      guint32           *mask,
                      GError           **error)
{
  const HpOptimizerStateSpec *spec = NULL;
  g_autofree gchar *source_text = NULL;
  guint ndim, source_ndim;
  const gint64 *shape = hp_tensor_get_shape (param, &ndim);
  const gint64 *source_shape = hp_tensor_get_shape (source, &source_ndim);

  for (guint i = 0; i < specs->n_specs && spec == NULL; i++)
    if (g_str_equal (specs->specs[i].name, state_name))
      {
        spec = &specs->specs[i];
        *mask |= 1u << i;
      }
  if (spec == NULL)
    {
      g_autofree gchar *all = state_names (specs, G_MAXUINT32);

      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: no optimizer state '%s' (the states of a parameter are %s)",
                   G_OBJECT_TYPE_NAME (self), name, all);
      return FALSE;
    }

  source_text = _hp_tensor_describe (source);
  if (spec->kind == HP_OPTIMIZER_STATE_SCALAR)
    {
      if (HP_IS_DTENSOR (source) || source_ndim != 0 ||
          hp_tensor_get_dtype (source) != HP_DTYPE_FLOAT64)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                       "%s: state '%s' is %s%s, but it must be a plain float64 scalar",
                       G_OBJECT_TYPE_NAME (self), name,
                       HP_IS_DTENSOR (source) ? "a DTensor " : "", source_text);
          return FALSE;
        }
      return TRUE;
    }

  if (hp_tensor_get_dtype (source) != hp_tensor_get_dtype (param) ||
      !_hp_shape_equal (shape, ndim, source_shape, source_ndim))
    {
      g_autofree gchar *param_text = _hp_tensor_describe (param);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "%s: state '%s' is %s, but parameter %u is %s",
                   G_OBJECT_TYPE_NAME (self), name, source_text, index, param_text);
      return FALSE;
    }
  if (HP_IS_DTENSOR (source) && HP_IS_DTENSOR (param) &&
      !hp_device_mesh_equal (hp_dtensor_get_mesh (HP_DTENSOR (source)),
                             hp_dtensor_get_mesh (HP_DTENSOR (param))))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                   "%s: state '%s' is a DTensor on another mesh than parameter %u",
                   G_OBJECT_TYPE_NAME (self), name, index);
      return FALSE;
    }
  return TRUE;
}

/* The local values of @source for a state of @param: a state with the
 * parameter's (global) shape takes its layout; any other is kept as
 * it is, a plain tensor */
static HpTensor *
state_values (HpTensor *param,
              HpTensor *source,
              gboolean *like_parameter)
{
  guint ndim;
  guint source_ndim;
  const gint64 *shape = hp_tensor_get_shape (param, &ndim);
  const gint64 *source_shape = hp_tensor_get_shape (source, &source_ndim);
  const gint64 zeros[HP_TENSOR_MAX_NDIM] = { 0 };
  g_autoptr(HpTensor) block = NULL;

  *like_parameter = source_ndim > 0 && _hp_shape_equal (shape, ndim, source_shape, source_ndim);
  if (HP_IS_DTENSOR (source))
    block = g_object_ref (_hp_dtensor_peek_local (HP_DTENSOR (source)));
  else if (*like_parameter && HP_IS_DTENSOR (param))
    block = _hp_dtensor_local_block (HP_DTENSOR (param), source);
  else
    block = g_object_ref (source);
  /* a copy the optimizer owns and updates in place */
  return _hp_tensor_copy_region (block, zeros, hp_tensor_get_shape (block, NULL));
}

/**
 * hp_optimizer_load_state:
 * @self: a [class@Hp.Optimizer]
 * @state: states named as [method@Hp.Optimizer.get_state] names them
 * @step_count: the [property@Hp.Optimizer:step-count] to continue from
 * @error: return location for a [struct@GLib.Error]
 *
 * Restores the states of [method@Hp.Optimizer.get_state], for example from a
 * checkpoint, so that training continues exactly: each parameter's
 * states are replaced by copies of the entries `<index>.<state>` (a
 * parameter without entries gets none, as before its first update).
 * An entry with the parameter's global shape may be a plain tensor of
 * that shape, of which each rank keeps the block its parameter holds, or
 * a DTensor laid out like the parameter; other entries (scalars such as
 * AdamW's step) are kept as they are. No communication.
 *
 * For [class@Hp.SGD] and [class@Hp.AdamW], the states must be those their step keeps
 * (`momentum_buffer`; `step`, `exp_avg` and `exp_avg_sq`), all of them
 * for a parameter that has any, each with the parameter's dtype and
 * global shape (`step`: a float64 scalar).
 *
 * Everything is checked first: on error the optimizer is unchanged.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for a name
 *   that is not `<index>.<state>` with an index below the number of
 *   parameters, a state the optimizer does not keep or a parameter
 *   with only some of its states, [HP_ERROR_SHAPE][error@Hp.Error] for a state of the
 *   wrong shape or dtype, [HP_ERROR_MESH][error@Hp.Error] or [HP_ERROR_PLACEMENT][error@Hp.Error] for a
 *   DTensor laid out unlike its parameter
 *
 * Since: 1.0
 */
gboolean
hp_optimizer_load_state (HpOptimizer  *self,
                         HpStateDict  *state,
                         guint64       step_count,
                         GError      **error)
{
  HpOptimizerPrivate *priv;
  g_autoptr(GPtrArray) states = NULL;
  g_autofree guint32 *masks = NULL;
  const StateSpecs *specs;

  g_return_val_if_fail (HP_IS_OPTIMIZER (self), FALSE);
  g_return_val_if_fail (HP_IS_STATE_DICT (state), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  priv = hp_optimizer_get_instance_private (self);
  specs = lookup_state_specs (self);
  masks = g_new0 (guint32, priv->params->len);
  for (guint i = 0; i < hp_state_dict_get_size (state); i++)
    {
      const gchar *name = hp_state_dict_get_name (state, i);
      HpTensor *source = hp_state_dict_get_tensor (state, i);
      const gchar *state_name;
      guint64 index;
      Param *param;

      if (!parse_state_name (name, &index, &state_name) || index >= priv->params->len)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "%s: no optimizer state '%s' (names are <index>.<state> "
                       "with an index below %u)", G_OBJECT_TYPE_NAME (self), name,
                       priv->params->len);
          return FALSE;
        }
      param = g_ptr_array_index (priv->params, index);
      if (specs != NULL &&
          !check_declared_state (self, specs, name, state_name, (guint) index, param->tensor,
                                 source, &masks[index], error))
        return FALSE;
      if (HP_IS_DTENSOR (source) &&
          (!HP_IS_DTENSOR (param->tensor) ||
           !_hp_placements_equal (hp_dtensor_get_placements (HP_DTENSOR (source)),
                                  hp_dtensor_get_placements (HP_DTENSOR (param->tensor)))))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "%s: state '%s' is a DTensor laid out unlike its parameter",
                       G_OBJECT_TYPE_NAME (self), name);
          return FALSE;
        }
    }
  /* the step takes a parameter's states as a whole */
  for (guint i = 0; specs != NULL && i < priv->params->len; i++)
    {
      guint32 all = specs->n_specs == 32 ? G_MAXUINT32 : (1u << specs->n_specs) - 1;

      if (masks[i] != 0 && masks[i] != all)
        {
          g_autofree gchar *have = state_names (specs, masks[i]);
          g_autofree gchar *need = state_names (specs, all);

          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "%s: parameter %u has the states (%s) but needs all of (%s)",
                       G_OBJECT_TYPE_NAME (self), i, have, need);
          return FALSE;
        }
    }

  states = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < priv->params->len; i++)
    g_ptr_array_add (states, hp_state_dict_new ());
  for (guint i = 0; i < hp_state_dict_get_size (state); i++)
    {
      const gchar *state_name;
      guint64 index;
      Param *param;
      gboolean like_parameter;
      g_autoptr(HpTensor) local = NULL;

      parse_state_name (hp_state_dict_get_name (state, i), &index, &state_name);
      param = g_ptr_array_index (priv->params, index);
      local = state_values (param->tensor, hp_state_dict_get_tensor (state, i), &like_parameter);
      if (like_parameter && HP_IS_DTENSOR (param->tensor))
        {
          HpDTensor *dt = HP_DTENSOR (param->tensor);
          guint ndim;
          const gint64 *shape = hp_tensor_get_shape (param->tensor, &ndim);
          g_autoptr(HpDTensor) wrapped = _hp_dtensor_new (local, hp_dtensor_get_mesh (dt),
                                                          hp_dtensor_get_placements (dt),
                                                          shape, ndim);

          hp_state_dict_insert (g_ptr_array_index (states, index), state_name, HP_TENSOR (wrapped));
        }
      else
        {
          hp_state_dict_insert (g_ptr_array_index (states, index), state_name, local);
        }
    }

  for (guint i = 0; i < priv->params->len; i++)
    {
      Param *param = g_ptr_array_index (priv->params, i);

      g_set_object (&param->state, g_ptr_array_index (states, i));
    }
  if (priv->step != step_count)
    {
      priv->step = step_count;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STEP_COUNT]);
    }
  return TRUE;
}
