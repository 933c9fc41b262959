/* hp-adamw.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>

#include "hp-adamw-config.h"
#include "hp-adamw.h"
#include "hp-error.h"
#include "hp-optimizer-private.h"
#include "hp-tensor-private.h"
#include "hp-vec-private.h"

/**
 * HpAdamW:
 *
 * Adam with decoupled weight decay, the update of `torch.optim.AdamW`
 * (without amsgrad), built from an [class@Hp.AdamWConfig]. For each parameter
 * `p` with gradient `g`, at the parameter's step `t` (1 at its first
 * update), with learning rate `lr`, weight decay `wd`, betas `b1`, `b2`
 * and `eps`:
 *
 * |[
 * p = p * (1 - lr * wd)
 * m = m + (1 - b1) * (g - m)
 * v = b2 * v + (1 - b2) * g * g
 * p = p - (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 * ]|
 *
 * The moments `m` and `v` start at zero. They are the states
 * `exp_avg` and `exp_avg_sq` of the parameter, with its layout, and
 * `t` is its state `step`, a float64 scalar (see
 * [method@Hp.Optimizer.get_state]). A parameter's step advances only when it
 * has a gradient, so the bias corrections of a parameter that skipped
 * steps are those of its own updates, as in PyTorch. For float64
 * parameters the arithmetic is in double precision; for float32 ones,
 * as in PyTorch, the moments and the step `m / (sqrt(v) / sqrt(1 - b2^t) + eps)`
 * are in float, and the decay and the update of the parameter in double.
 *
 * Since: 1.0
 */

struct _HpAdamW
{
  HpOptimizer parent_instance;

  gdouble weight_decay;
  gdouble beta1;
  gdouble beta2;
  gdouble eps;
};

G_DEFINE_FINAL_TYPE (HpAdamW, hp_adamw, HP_TYPE_OPTIMIZER)

static gboolean
hp_adamw_setup (HpConfigurable  *configurable,
                GError         **error)
{
  HpAdamW *self = HP_ADAMW (configurable);
  HpConfig *config = hp_configurable_get_config (configurable);
  HpAdamWConfig *adamw;

  if (!HP_CONFIGURABLE_CLASS (hp_adamw_parent_class)->setup (configurable, error))
    return FALSE;

  if (!HP_IS_ADAMW_CONFIG (config))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpAdamW: the configuration must be an HpAdamWConfig, not %s",
                   config != NULL ? G_OBJECT_TYPE_NAME (config) : "NULL");
      return FALSE;
    }

  adamw = HP_ADAMW_CONFIG (config);
  self->weight_decay = hp_optimizer_config_get_weight_decay (HP_OPTIMIZER_CONFIG (adamw));
  self->beta1 = hp_adamw_config_get_beta1 (adamw);
  self->beta2 = hp_adamw_config_get_beta2 (adamw);
  self->eps = hp_adamw_config_get_eps (adamw);
  return TRUE;
}

/* torch.lerp: @start + @weight * (@end - @start), computed from the
 * nearer end */
static inline gdouble
lerp (gdouble start,
      gdouble end,
      gdouble weight)
{
  return weight < 0.5 ? start + weight * (end - start)
                      : end - (end - start) * (1.0 - weight);
}

/* The update of float32 parameters, on typed arrays so that it
 * vectorises. The moments and the step m / (sqrt (v) / c2 + eps) are in
 * float, as PyTorch has them (sqrt and division in double cost more than
 * the rest of the update together, and the moments are stored in float
 * anyway); decaying the parameter and adding the step stay in double, so
 * that a decay factor such as 0.9997 is not rounded to float on every
 * step. lerp's choice of end depends on the weight only, so it is made
 * once. */
HP_VEC_CLONES static void
update_f32 (gfloat       *restrict p,
            const gfloat *restrict grad,
            gfloat       *restrict m,
            gfloat       *restrict v,
            gint64        n,
            gdouble       decay,
            gdouble       weight1,
            gdouble       beta2,
            gdouble       step_size,
            gdouble       correction2_sqrt,
            gdouble       eps)
{
  gboolean from_start = weight1 < 0.5;
  gfloat w1 = (gfloat) weight1, w1_rest = (gfloat) (1.0 - weight1);
  gfloat b2 = (gfloat) beta2, b2_rest = (gfloat) (1.0 - beta2);
  gfloat inv_c2 = (gfloat) (1.0 / correction2_sqrt), eps_f = (gfloat) eps;

  HP_SIMD
  for (gint64 i = 0; i < n; i++)
    {
      gfloat g = grad[i];
      gfloat mean = from_start ? m[i] + w1 * (g - m[i]) : g - (g - m[i]) * w1_rest;
      gfloat square = v[i] * b2 + b2_rest * g * g;
      gfloat ratio = mean / (sqrtf (square) * inv_c2 + eps_f);

      m[i] = mean;
      v[i] = square;
      p[i] = (gfloat) (p[i] * decay - step_size * ratio);
    }
}

static void
update (HpAdamW               *self,
        gdouble                lr,
        gdouble                t,
        const HpOptimizerItem *item,
        HpTensor              *exp_avg,
        HpTensor              *exp_avg_sq)
{
  HpDType dtype = hp_tensor_get_dtype (item->value);
  gint64 n = hp_tensor_get_numel (item->value);
  gpointer p = _hp_tensor_data (item->value);
  gconstpointer grad = _hp_tensor_data (item->grad);
  gpointer m = _hp_tensor_data (exp_avg);
  gpointer v = _hp_tensor_data (exp_avg_sq);
  gdouble decay = 1.0 - lr * self->weight_decay;
  gdouble step_size = lr / (1.0 - pow (self->beta1, t));
  gdouble correction2_sqrt = sqrt (1.0 - pow (self->beta2, t));

  if (dtype == HP_DTYPE_FLOAT32)
    {
      update_f32 (p, grad, m, v, n, decay, 1.0 - self->beta1, self->beta2,
                  step_size, correction2_sqrt, self->eps);
      return;
    }
  for (gint64 i = 0; i < n; i++)
    {
      gdouble g = _hp_load_f64 (grad, dtype, i);
      gdouble value = _hp_load_f64 (p, dtype, i) * decay;
      gdouble mean, square, denom;

      _hp_store_f64 (m, dtype, i, lerp (_hp_load_f64 (m, dtype, i), g, 1.0 - self->beta1));
      _hp_store_f64 (v, dtype, i, _hp_load_f64 (v, dtype, i) * self->beta2 + (1.0 - self->beta2) * g * g);
      mean = _hp_load_f64 (m, dtype, i);
      square = _hp_load_f64 (v, dtype, i);
      denom = sqrt (square) / correction2_sqrt + self->eps;
      _hp_store_f64 (p, dtype, i, value + (-step_size) * mean / denom);
    }
}

static gboolean
hp_adamw_step (HpOptimizer  *optimizer,
               GError      **error)
{
  HpAdamW *self = HP_ADAMW (optimizer);
  gdouble lr = hp_optimizer_get_lr (optimizer);
  g_autoptr(GArray) items = _hp_optimizer_collect (optimizer, error);

  if (items == NULL)
    return FALSE;

  for (guint k = 0; k < items->len; k++)
    {
      const HpOptimizerItem *item = &g_array_index (items, HpOptimizerItem, k);
      HpTensor *step = _hp_optimizer_lookup_state (optimizer, item->index, "step");
      HpTensor *exp_avg, *exp_avg_sq;
      gdouble *t;

      if (step == NULL)
        {
          step = _hp_optimizer_add_state (optimizer, item->index, "step",
                                          hp_tensor_new_zeros (HP_DTYPE_FLOAT64, NULL, 0), FALSE);
          _hp_optimizer_add_state (optimizer, item->index, "exp_avg",
                                   _hp_tensor_new_zeros_like (item->value), TRUE);
          _hp_optimizer_add_state (optimizer, item->index, "exp_avg_sq",
                                   _hp_tensor_new_zeros_like (item->value), TRUE);
        }
      exp_avg = _hp_optimizer_lookup_state (optimizer, item->index, "exp_avg");
      exp_avg_sq = _hp_optimizer_lookup_state (optimizer, item->index, "exp_avg_sq");

      t = _hp_tensor_data (step);
      *t += 1.0;
      update (self, lr, *t, item, exp_avg, exp_avg_sq);
    }
  return TRUE;
}

static const HpOptimizerStateSpec adamw_states[] = {
  { "step", HP_OPTIMIZER_STATE_SCALAR },
  { "exp_avg", HP_OPTIMIZER_STATE_LIKE_PARAMETER },
  { "exp_avg_sq", HP_OPTIMIZER_STATE_LIKE_PARAMETER },
};

static void
hp_adamw_class_init (HpAdamWClass *klass)
{
  HpOptimizerClass *optimizer_class = HP_OPTIMIZER_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_adamw_setup;
  optimizer_class->step = hp_adamw_step;
  _hp_optimizer_class_set_states (optimizer_class, adamw_states, G_N_ELEMENTS (adamw_states));

  g_type_ensure (HP_TYPE_ADAMW_CONFIG);
}

static void
hp_adamw_init (HpAdamW *self)
{
}
