/* hp-sgd-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <float.h>

#include "hp-sgd.h"
#include "hp-sgd-config.h"

/**
 * HpSGDConfig:
 *
 * The configuration of #HpSGD, stochastic gradient descent with
 * optional momentum, as `torch.optim.SGD`: besides the learning rate
 * and the weight decay of #HpOptimizerConfig (defaults 0.001 and 0),
 * #HpSGDConfig:momentum, #HpSGDConfig:dampening and
 * #HpSGDConfig:nesterov, all off by default.
 *
 * Nesterov momentum needs a momentum above 0 and no dampening; building
 * an #HpSGD from a configuration that has #HpSGDConfig:nesterov set
 * otherwise fails with %HP_ERROR_CONFIG.
 */

struct _HpSGDConfig
{
  HpOptimizerConfig parent_instance;

  gdouble momentum;
  gdouble dampening;
  gboolean nesterov;
};

G_DEFINE_FINAL_TYPE (HpSGDConfig, hp_sgd_config, HP_TYPE_OPTIMIZER_CONFIG)

enum {
  PROP_0,
  PROP_MOMENTUM,
  PROP_DAMPENING,
  PROP_NESTEROV,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_sgd_config_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  HpSGDConfig *self = HP_SGD_CONFIG (object);

  switch (prop_id)
    {
    case PROP_MOMENTUM:
      g_value_set_double (value, self->momentum);
      break;
    case PROP_DAMPENING:
      g_value_set_double (value, self->dampening);
      break;
    case PROP_NESTEROV:
      g_value_set_boolean (value, self->nesterov);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_sgd_config_set_property (GObject      *object,
                            guint         prop_id,
                            const GValue *value,
                            GParamSpec   *pspec)
{
  HpSGDConfig *self = HP_SGD_CONFIG (object);

  switch (prop_id)
    {
    case PROP_MOMENTUM:
      hp_sgd_config_set_momentum (self, g_value_get_double (value));
      break;
    case PROP_DAMPENING:
      hp_sgd_config_set_dampening (self, g_value_get_double (value));
      break;
    case PROP_NESTEROV:
      hp_sgd_config_set_nesterov (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_sgd_config_class_init (HpSGDConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = hp_sgd_config_get_property;
  object_class->set_property = hp_sgd_config_set_property;

  /**
   * HpSGDConfig:momentum:
   *
   * The momentum factor; 0 turns momentum off.
   */
  properties[PROP_MOMENTUM] =
    g_param_spec_double ("momentum", NULL, "Momentum factor",
                         0.0, DBL_MAX, 0.0,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpSGDConfig:dampening:
   *
   * The dampening of momentum: each step adds `1 - dampening` times the
   * gradient to the momentum buffer (the first step copies the gradient
   * whole).
   */
  properties[PROP_DAMPENING] =
    g_param_spec_double ("dampening", NULL, "Dampening of the momentum",
                         0.0, 1.0, 0.0,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpSGDConfig:nesterov:
   *
   * Whether to use Nesterov momentum; needs #HpSGDConfig:momentum above
   * 0 and #HpSGDConfig:dampening 0.
   */
  properties[PROP_NESTEROV] =
    g_param_spec_boolean ("nesterov", NULL, "Nesterov momentum",
                          FALSE,
                          (G_PARAM_READWRITE |
                           G_PARAM_EXPLICIT_NOTIFY |
                           G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

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
 * Returns: (transfer full): a new #HpSGDConfig
 */
HpSGDConfig *
hp_sgd_config_new (void)
{
  return g_object_new (HP_TYPE_SGD_CONFIG, NULL);
}

/**
 * hp_sgd_config_get_momentum:
 * @self: a #HpSGDConfig
 *
 * Gets the momentum factor.
 *
 * Returns: the #HpSGDConfig:momentum
 */
gdouble
hp_sgd_config_get_momentum (HpSGDConfig *self)
{
  g_return_val_if_fail (HP_IS_SGD_CONFIG (self), 0.0);

  return self->momentum;
}

/**
 * hp_sgd_config_set_momentum:
 * @self: a #HpSGDConfig
 * @momentum: the momentum factor, 0 or more
 *
 * Sets #HpSGDConfig:momentum.
 */
void
hp_sgd_config_set_momentum (HpSGDConfig *self,
                            gdouble      momentum)
{
  g_return_if_fail (HP_IS_SGD_CONFIG (self));
  g_return_if_fail (momentum >= 0.0);

  if (self->momentum != momentum)
    {
      self->momentum = momentum;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MOMENTUM]);
    }
}

/**
 * hp_sgd_config_get_dampening:
 * @self: a #HpSGDConfig
 *
 * Gets the dampening of momentum.
 *
 * Returns: the #HpSGDConfig:dampening
 */
gdouble
hp_sgd_config_get_dampening (HpSGDConfig *self)
{
  g_return_val_if_fail (HP_IS_SGD_CONFIG (self), 0.0);

  return self->dampening;
}

/**
 * hp_sgd_config_set_dampening:
 * @self: a #HpSGDConfig
 * @dampening: the dampening, from 0 to 1
 *
 * Sets #HpSGDConfig:dampening.
 */
void
hp_sgd_config_set_dampening (HpSGDConfig *self,
                             gdouble      dampening)
{
  g_return_if_fail (HP_IS_SGD_CONFIG (self));
  g_return_if_fail (dampening >= 0.0 && dampening <= 1.0);

  if (self->dampening != dampening)
    {
      self->dampening = dampening;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DAMPENING]);
    }
}

/**
 * hp_sgd_config_get_nesterov:
 * @self: a #HpSGDConfig
 *
 * Gets whether Nesterov momentum is used.
 *
 * Returns: the #HpSGDConfig:nesterov
 */
gboolean
hp_sgd_config_get_nesterov (HpSGDConfig *self)
{
  g_return_val_if_fail (HP_IS_SGD_CONFIG (self), FALSE);

  return self->nesterov;
}

/**
 * hp_sgd_config_set_nesterov:
 * @self: a #HpSGDConfig
 * @nesterov: whether to use Nesterov momentum
 *
 * Sets #HpSGDConfig:nesterov.
 */
void
hp_sgd_config_set_nesterov (HpSGDConfig *self,
                            gboolean     nesterov)
{
  g_return_if_fail (HP_IS_SGD_CONFIG (self));

  nesterov = !!nesterov;
  if (self->nesterov != nesterov)
    {
      self->nesterov = nesterov;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NESTEROV]);
    }
}
