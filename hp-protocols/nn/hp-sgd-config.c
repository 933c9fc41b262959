/* hp-sgd-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <float.h>

#include "hp-config-field.h"
#include "hp-error.h"
#include "hp-sgd.h"
#include "hp-sgd-config.h"

/**
 * HpSGDConfig:
 *
 * The configuration of [class@Hp.SGD], stochastic gradient descent with
 * optional momentum, as `torch.optim.SGD`: besides the learning rate
 * and the weight decay of [class@Hp.OptimizerConfig] (defaults 0.001
 * and 0), [property@Hp.SGDConfig:momentum],
 * [property@Hp.SGDConfig:dampening] and
 * [property@Hp.SGDConfig:nesterov], all off by default.
 *
 * Nesterov momentum needs a momentum above 0 and no dampening; a
 * configuration that has [property@Hp.SGDConfig:nesterov] set
 * otherwise does not validate ([vfunc@Hp.Config.validate]), so
 * building an [class@Hp.SGD] from it fails with [HP_ERROR_CONFIG][error@Hp.Error].
 *
 * Since: 1.0
 */

struct _HpSGDConfig
{
  HpOptimizerConfig parent_instance;

  gdouble momentum;
  gdouble dampening;
  gboolean nesterov;
};

G_DEFINE_FINAL_TYPE (HpSGDConfig, hp_sgd_config, HP_TYPE_OPTIMIZER_CONFIG)

/**
 * HpSGDConfig:momentum:
 *
 * The momentum factor; 0 turns momentum off.
 *
 * Since: 1.0
 */
/**
 * HpSGDConfig:dampening:
 *
 * The dampening of momentum: each step adds `1 - dampening` times the
 * gradient to the momentum buffer (the first step copies the gradient
 * whole).
 *
 * Since: 1.0
 */
/**
 * HpSGDConfig:nesterov:
 *
 * Whether to use Nesterov momentum; needs
 * [property@Hp.SGDConfig:momentum] above 0 and
 * [property@Hp.SGDConfig:dampening] 0.
 *
 * Since: 1.0
 */
static const HpConfigField sgd_config_fields[] = {
  HP_CONFIG_FIELD_DOUBLE (HpSGDConfig, momentum, "momentum", "Momentum factor", 0.0, DBL_MAX, 0.0),
  HP_CONFIG_FIELD_DOUBLE (HpSGDConfig, dampening, "dampening", "Dampening of the momentum",
                          0.0, 1.0, 0.0),
  HP_CONFIG_FIELD_BOOLEAN (HpSGDConfig, nesterov, "nesterov", "Nesterov momentum", FALSE),
};

static gboolean
hp_sgd_config_validate (HpConfig  *config,
                        GError   **error)
{
  HpSGDConfig *self = HP_SGD_CONFIG (config);

  if (!HP_CONFIG_CLASS (hp_sgd_config_parent_class)->validate (config, error))
    return FALSE;

  if (self->nesterov && (self->momentum <= 0.0 || self->dampening != 0.0))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpSGD: Nesterov momentum needs momentum > 0 and dampening 0, "
                   "not momentum %g and dampening %g", self->momentum, self->dampening);
      return FALSE;
    }
  return TRUE;
}

static void
hp_sgd_config_class_init (HpSGDConfigClass *klass)
{
  HP_CONFIG_CLASS (klass)->validate = hp_sgd_config_validate;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), sgd_config_fields,
                                  G_N_ELEMENTS (sgd_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_SGD);
}

static void
hp_sgd_config_init (HpSGDConfig *self)
{
}

/**
 * hp_sgd_config_new:
 *
 * Creates an SGD configuration with the defaults: learning rate 0.001,
 * no momentum, no dampening, no Nesterov momentum, no weight decay.
 *
 * Returns: (transfer full): a new [class@Hp.SGDConfig]
 *
 * Since: 1.0
 */
HpSGDConfig *
hp_sgd_config_new (void)
{
  return g_object_new (HP_TYPE_SGD_CONFIG, NULL);
}

#include "hp-sgd-config-fields.c"
