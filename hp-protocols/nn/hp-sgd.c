/* hp-sgd.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-error.h"
#include "hp-optimizer-private.h"
#include "hp-sgd-config.h"
#include "hp-sgd.h"
#include "hp-tensor-private.h"

/**
 * HpSGD:
 *
 * Stochastic gradient descent with optional momentum, Nesterov momentum
 * and weight decay, the update of `torch.optim.SGD`, built from an
 * [class@Hp.SGDConfig]. For each parameter `p` with gradient `g`, with learning
 * rate `lr`, weight decay `wd`, momentum `mu` and dampening `tau`:
 *
 * |[
 * g = g + wd * p                          (if wd != 0)
 * b = g                                   (first step, if mu != 0)
 * b = mu * b + (1 - tau) * g              (later steps)
 * g = g + mu * b   if nesterov,  else g = b
 * p = p - lr * g
 * ]|
 *
 * The momentum buffer `b` is the state `momentum_buffer` of the
 * parameter (see [method@Hp.Optimizer.get_state]); it exists only with
 * momentum. Arithmetic is in double precision; float32 parameters and
 * buffers are rounded when they are stored.
 *
 * Since: 1.0
 */

struct _HpSGD
{
  HpOptimizer parent_instance;

  gdouble weight_decay;
  gdouble momentum;
  gdouble dampening;
  gboolean nesterov;
};

G_DEFINE_FINAL_TYPE (HpSGD, hp_sgd, HP_TYPE_OPTIMIZER)

static gboolean
hp_sgd_setup (HpConfigurable  *configurable,
              GError         **error)
{
  HpSGD *self = HP_SGD (configurable);
  HpConfig *config = hp_configurable_get_config (configurable);
  HpSGDConfig *sgd;

  if (!HP_CONFIGURABLE_CLASS (hp_sgd_parent_class)->setup (configurable, error))
    return FALSE;

  if (!HP_IS_SGD_CONFIG (config))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpSGD: the configuration must be an HpSGDConfig, not %s",
                   config != NULL ? G_OBJECT_TYPE_NAME (config) : "NULL");
      return FALSE;
    }

  sgd = HP_SGD_CONFIG (config);
  self->weight_decay = hp_optimizer_config_get_weight_decay (HP_OPTIMIZER_CONFIG (sgd));
  self->momentum = hp_sgd_config_get_momentum (sgd);
  self->dampening = hp_sgd_config_get_dampening (sgd);
  self->nesterov = hp_sgd_config_get_nesterov (sgd);
  return TRUE;
}

/* The update of one parameter; @buffer is NULL without momentum and
 * @fresh when it has just been made */
static void
update (HpSGD                 *self,
        gdouble                lr,
        const HpOptimizerItem *item,
        HpTensor              *buffer,
        gboolean               fresh)
{
  HpDType dtype = hp_tensor_get_dtype (item->value);
  gint64 n = hp_tensor_get_numel (item->value);
  gpointer p = _hp_tensor_data (item->value);
  gconstpointer grad = _hp_tensor_data (item->grad);
  gpointer b = buffer != NULL ? _hp_tensor_data (buffer) : NULL;

  for (gint64 i = 0; i < n; i++)
    {
      gdouble value = _hp_load_f64 (p, dtype, i);
      gdouble g = _hp_load_f64 (grad, dtype, i);

      if (self->weight_decay != 0.0)
        g = g + self->weight_decay * value;
      if (b != NULL)
        {
          gdouble m = fresh ? g
                            : self->momentum * _hp_load_f64 (b, dtype, i) + (1.0 - self->dampening) * g;

          _hp_store_f64 (b, dtype, i, m);
          m = _hp_load_f64 (b, dtype, i);
          g = self->nesterov ? g + self->momentum * m : m;
        }
      _hp_store_f64 (p, dtype, i, value + (-lr) * g);
    }
}

static gboolean
hp_sgd_step (HpOptimizer  *optimizer,
             GError      **error)
{
  HpSGD *self = HP_SGD (optimizer);
  gdouble lr = hp_optimizer_get_lr (optimizer);
  g_autoptr(GArray) items = _hp_optimizer_collect (optimizer, error);

  if (items == NULL)
    return FALSE;

  for (guint k = 0; k < items->len; k++)
    {
      const HpOptimizerItem *item = &g_array_index (items, HpOptimizerItem, k);
      HpTensor *buffer = NULL;
      gboolean fresh = FALSE;

      if (self->momentum != 0.0)
        {
          buffer = _hp_optimizer_lookup_state (optimizer, item->index, "momentum_buffer");
          if (buffer == NULL)
            {
              guint ndim;
              const gint64 *shape = hp_tensor_get_shape (item->value, &ndim);

              buffer = _hp_optimizer_add_state (optimizer, item->index, "momentum_buffer",
                                                _hp_tensor_new_uninit (hp_tensor_get_dtype (item->value),
                                                                       shape, ndim),
                                                TRUE);
              fresh = TRUE;
            }
        }
      update (self, lr, item, buffer, fresh);
    }
  return TRUE;
}

static const HpOptimizerStateSpec sgd_states[] = {
  { "momentum_buffer", HP_OPTIMIZER_STATE_LIKE_PARAMETER },
};

static void
hp_sgd_class_init (HpSGDClass *klass)
{
  HpOptimizerClass *optimizer_class = HP_OPTIMIZER_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_sgd_setup;
  optimizer_class->step = hp_sgd_step;
  _hp_optimizer_class_set_states (optimizer_class, sgd_states, G_N_ELEMENTS (sgd_states));

  g_type_ensure (HP_TYPE_SGD_CONFIG);
}

static void
hp_sgd_init (HpSGD *self)
{
}
