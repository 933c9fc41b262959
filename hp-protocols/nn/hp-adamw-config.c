/* hp-adamw-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <float.h>

#include "hp-adamw.h"
#include "hp-adamw-config.h"

/**
 * HpAdamWConfig:
 *
 * The configuration of #HpAdamW, Adam with decoupled weight decay, as
 * `torch.optim.AdamW`: the learning rate (#HpOptimizerConfig:lr,
 * default 0.001), the weight decay (#HpOptimizerConfig:weight-decay,
 * which starts at 0.01 in this class), the decay rates of the moment
 * estimates #HpAdamWConfig:beta1 (0.9) and #HpAdamWConfig:beta2
 * (0.999), and #HpAdamWConfig:eps (1e-8).
 *
 * Both betas must be below 1; building an #HpAdamW from a
 * configuration where one is 1 fails with %HP_ERROR_CONFIG.
 */

struct _HpAdamWConfig
{
  HpOptimizerConfig parent_instance;

  gdouble beta1;
  gdouble beta2;
  gdouble eps;
};

G_DEFINE_FINAL_TYPE (HpAdamWConfig, hp_adamw_config, HP_TYPE_OPTIMIZER_CONFIG)

enum {
  PROP_0,
  PROP_BETA1,
  PROP_BETA2,
  PROP_EPS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_adamw_config_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  HpAdamWConfig *self = HP_ADAMW_CONFIG (object);

  switch (prop_id)
    {
    case PROP_BETA1:
      g_value_set_double (value, self->beta1);
      break;
    case PROP_BETA2:
      g_value_set_double (value, self->beta2);
      break;
    case PROP_EPS:
      g_value_set_double (value, self->eps);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_adamw_config_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  HpAdamWConfig *self = HP_ADAMW_CONFIG (object);

  switch (prop_id)
    {
    case PROP_BETA1:
      hp_adamw_config_set_beta1 (self, g_value_get_double (value));
      break;
    case PROP_BETA2:
      hp_adamw_config_set_beta2 (self, g_value_get_double (value));
      break;
    case PROP_EPS:
      hp_adamw_config_set_eps (self, g_value_get_double (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static GParamSpec *
double_param (const gchar *name,
              const gchar *blurb,
              gdouble      maximum,
              gdouble      default_value)
{
  return g_param_spec_double (name, NULL, blurb,
                              0.0, maximum, default_value,
                              (G_PARAM_READWRITE |
                               G_PARAM_EXPLICIT_NOTIFY |
                               G_PARAM_STATIC_STRINGS));
}

static void
hp_adamw_config_class_init (HpAdamWConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = hp_adamw_config_get_property;
  object_class->set_property = hp_adamw_config_set_property;

  /**
   * HpAdamWConfig:beta1:
   *
   * The decay rate of the running average of the gradient (the first
   * moment), below 1.
   */
  properties[PROP_BETA1] = double_param ("beta1", "Decay of the first moment", 1.0, 0.9);

  /**
   * HpAdamWConfig:beta2:
   *
   * The decay rate of the running average of the squared gradient (the
   * second moment), below 1.
   */
  properties[PROP_BETA2] = double_param ("beta2", "Decay of the second moment", 1.0, 0.999);

  /**
   * HpAdamWConfig:eps:
   *
   * The term added to the denominator of the update, for numerical
   * stability.
   */
  properties[PROP_EPS] = double_param ("eps", "Added to the denominator", DBL_MAX, 1e-8);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_ADAMW);
}

static void
hp_adamw_config_init (HpAdamWConfig *self)
{
  self->beta1 = 0.9;
  self->beta2 = 0.999;
  self->eps = 1e-8;
  hp_optimizer_config_set_weight_decay (HP_OPTIMIZER_CONFIG (self), 1e-2);
}

/**
 * hp_adamw_config_new:
 *
 * Creates an AdamW configuration with the defaults of
 * `torch.optim.AdamW`: learning rate 0.001, betas 0.9 and 0.999, eps
 * 1e-8, weight decay 0.01.
 *
 * Returns: (transfer full): a new #HpAdamWConfig
 */
HpAdamWConfig *
hp_adamw_config_new (void)
{
  return g_object_new (HP_TYPE_ADAMW_CONFIG, NULL);
}

/**
 * hp_adamw_config_get_beta1:
 * @self: a #HpAdamWConfig
 *
 * Gets the decay rate of the first moment.
 *
 * Returns: the #HpAdamWConfig:beta1
 */
gdouble
hp_adamw_config_get_beta1 (HpAdamWConfig *self)
{
  g_return_val_if_fail (HP_IS_ADAMW_CONFIG (self), 0.0);

  return self->beta1;
}

/**
 * hp_adamw_config_set_beta1:
 * @self: a #HpAdamWConfig
 * @beta1: the decay rate, from 0 to below 1
 *
 * Sets #HpAdamWConfig:beta1.
 */
void
hp_adamw_config_set_beta1 (HpAdamWConfig *self,
                           gdouble        beta1)
{
  g_return_if_fail (HP_IS_ADAMW_CONFIG (self));
  g_return_if_fail (beta1 >= 0.0 && beta1 <= 1.0);

  if (self->beta1 != beta1)
    {
      self->beta1 = beta1;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BETA1]);
    }
}

/**
 * hp_adamw_config_get_beta2:
 * @self: a #HpAdamWConfig
 *
 * Gets the decay rate of the second moment.
 *
 * Returns: the #HpAdamWConfig:beta2
 */
gdouble
hp_adamw_config_get_beta2 (HpAdamWConfig *self)
{
  g_return_val_if_fail (HP_IS_ADAMW_CONFIG (self), 0.0);

  return self->beta2;
}

/**
 * hp_adamw_config_set_beta2:
 * @self: a #HpAdamWConfig
 * @beta2: the decay rate, from 0 to below 1
 *
 * Sets #HpAdamWConfig:beta2.
 */
void
hp_adamw_config_set_beta2 (HpAdamWConfig *self,
                           gdouble        beta2)
{
  g_return_if_fail (HP_IS_ADAMW_CONFIG (self));
  g_return_if_fail (beta2 >= 0.0 && beta2 <= 1.0);

  if (self->beta2 != beta2)
    {
      self->beta2 = beta2;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BETA2]);
    }
}

/**
 * hp_adamw_config_get_eps:
 * @self: a #HpAdamWConfig
 *
 * Gets the term added to the denominator of the update.
 *
 * Returns: the #HpAdamWConfig:eps
 */
gdouble
hp_adamw_config_get_eps (HpAdamWConfig *self)
{
  g_return_val_if_fail (HP_IS_ADAMW_CONFIG (self), 0.0);

  return self->eps;
}

/**
 * hp_adamw_config_set_eps:
 * @self: a #HpAdamWConfig
 * @eps: the term, 0 or more
 *
 * Sets #HpAdamWConfig:eps.
 */
void
hp_adamw_config_set_eps (HpAdamWConfig *self,
                         gdouble        eps)
{
  g_return_if_fail (HP_IS_ADAMW_CONFIG (self));
  g_return_if_fail (eps >= 0.0);

  if (self->eps != eps)
    {
      self->eps = eps;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_EPS]);
    }
}
