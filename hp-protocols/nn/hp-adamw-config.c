/* hp-adamw-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <float.h>

#include "hp-adamw.h"
#include "hp-adamw-config.h"
#include "hp-config-field.h"
#include "hp-error.h"

/**
 * HpAdamWConfig:
 *
 * The configuration of [class@Hp.AdamW], Adam with decoupled weight
 * decay, as `torch.optim.AdamW`: the learning rate
 * ([property@Hp.OptimizerConfig:lr], default 0.001), the weight decay
 * ([property@Hp.OptimizerConfig:weight-decay], which starts at 0.01 in
 * this class), the decay rates of the moment estimates
 * [property@Hp.AdamWConfig:beta1] (0.9) and
 * [property@Hp.AdamWConfig:beta2] (0.999), and
 * [property@Hp.AdamWConfig:eps] (1e-8).
 *
 * Both betas must be below 1: a configuration where one is 1 does not
 * validate ([vfunc@Hp.Config.validate]), so building an
 * [class@Hp.AdamW] from it fails with [HP_ERROR_CONFIG][error@Hp.Error].
 *
 * Since: 1.0
 */

struct _HpAdamWConfig
{
  HpOptimizerConfig parent_instance;

  gdouble beta1;
  gdouble beta2;
  gdouble eps;
};

G_DEFINE_FINAL_TYPE (HpAdamWConfig, hp_adamw_config, HP_TYPE_OPTIMIZER_CONFIG)

/**
 * HpAdamWConfig:beta1:
 *
 * The decay rate of the running average of the gradient (the first
 * moment), below 1.
 *
 * Since: 1.0
 */
/**
 * HpAdamWConfig:beta2:
 *
 * The decay rate of the running average of the squared gradient (the
 * second moment), below 1.
 *
 * Since: 1.0
 */
/**
 * HpAdamWConfig:eps:
 *
 * The term added to the denominator of the update, for numerical
 * stability.
 *
 * Since: 1.0
 */
static const HpConfigField adamw_config_fields[] = {
  HP_CONFIG_FIELD_DOUBLE (HpAdamWConfig, beta1, "beta1", "Decay of the first moment", 0.0, 1.0, 0.9),
  HP_CONFIG_FIELD_DOUBLE (HpAdamWConfig, beta2, "beta2", "Decay of the second moment",
                          0.0, 1.0, 0.999),
  HP_CONFIG_FIELD_DOUBLE (HpAdamWConfig, eps, "eps", "Added to the denominator", 0.0, DBL_MAX, 1e-8),
};

static void
hp_adamw_config_constructed (GObject *object)
{
  G_OBJECT_CLASS (hp_adamw_config_parent_class)->constructed (object);

  /* torch.optim.AdamW's default, over the one of the parent's table
   * just applied and before the fields given to g_object_new() */
  hp_optimizer_config_set_weight_decay (HP_OPTIMIZER_CONFIG (object), 1e-2);
}

static gboolean
hp_adamw_config_validate (HpConfig  *config,
                          GError   **error)
{
  HpAdamWConfig *self = HP_ADAMW_CONFIG (config);

  if (!HP_CONFIG_CLASS (hp_adamw_config_parent_class)->validate (config, error))
    return FALSE;

  if (self->beta1 >= 1.0 || self->beta2 >= 1.0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpAdamW: beta1 and beta2 must be below 1, not %g and %g",
                   self->beta1, self->beta2);
      return FALSE;
    }
  return TRUE;
}

static void
hp_adamw_config_class_init (HpAdamWConfigClass *klass)
{
  G_OBJECT_CLASS (klass)->constructed = hp_adamw_config_constructed;
  HP_CONFIG_CLASS (klass)->validate = hp_adamw_config_validate;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), adamw_config_fields,
                                  G_N_ELEMENTS (adamw_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_ADAMW);
}

static void
hp_adamw_config_init (HpAdamWConfig *self)
{
}

/**
 * hp_adamw_config_new:
 *
 * Creates an AdamW configuration with the defaults of
 * `torch.optim.AdamW`: learning rate 0.001, betas 0.9 and 0.999, eps
 * 1e-8, weight decay 0.01.
 *
 * Returns: (transfer full): a new [class@Hp.AdamWConfig]
 *
 * Since: 1.0
 */
HpAdamWConfig *
hp_adamw_config_new (void)
{
  return g_object_new (HP_TYPE_ADAMW_CONFIG, NULL);
}

#include "hp-adamw-config-fields.c"
