/* hp-optimizer-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <float.h>

#include "hp-optimizer.h"
#include "hp-optimizer-config.h"

/**
 * HpOptimizerConfig:
 *
 * The fields every optimizer configuration has: the learning rate
 * (#HpOptimizerConfig:lr) and the weight decay
 * (#HpOptimizerConfig:weight-decay). The class is abstract; the
 * configurations of concrete optimizers, such as #HpSGDConfig and
 * #HpAdamWConfig, derive from it, add their own fields and build their
 * optimizer with hp_config_build() or
 * hp_optimizer_config_build_optimizer().
 *
 * Like every configuration it copies, compares and reads from and
 * writes to JSON field by field, so a job configuration can hold the
 * optimizer's settings.
 */

typedef struct
{
  gdouble lr;
  gdouble weight_decay;
} HpOptimizerConfigPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (HpOptimizerConfig, hp_optimizer_config, HP_TYPE_CONFIG)

enum {
  PROP_0,
  PROP_LR,
  PROP_WEIGHT_DECAY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_optimizer_config_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  HpOptimizerConfig *self = HP_OPTIMIZER_CONFIG (object);

  switch (prop_id)
    {
    case PROP_LR:
      g_value_set_double (value, hp_optimizer_config_get_lr (self));
      break;
    case PROP_WEIGHT_DECAY:
      g_value_set_double (value, hp_optimizer_config_get_weight_decay (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_optimizer_config_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  HpOptimizerConfig *self = HP_OPTIMIZER_CONFIG (object);

  switch (prop_id)
    {
    case PROP_LR:
      hp_optimizer_config_set_lr (self, g_value_get_double (value));
      break;
    case PROP_WEIGHT_DECAY:
      hp_optimizer_config_set_weight_decay (self, g_value_get_double (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_optimizer_config_class_init (HpOptimizerConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = hp_optimizer_config_get_property;
  object_class->set_property = hp_optimizer_config_set_property;

  /**
   * HpOptimizerConfig:lr:
   *
   * The learning rate the optimizer starts with. The optimizer keeps its
   * own copy (#HpOptimizer:lr), which a schedule changes while training.
   */
  properties[PROP_LR] =
    g_param_spec_double ("lr", NULL, "Learning rate",
                         0.0, DBL_MAX, 1e-3,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpOptimizerConfig:weight-decay:
   *
   * The weight decay factor. How it is applied depends on the
   * optimizer: #HpSGD adds it times the parameter to the gradient (L2
   * regularisation), #HpAdamW shrinks the parameter by `lr *
   * weight_decay` before its update (decoupled weight decay). Its
   * default is 0, except in #HpAdamWConfig, which starts at 0.01 as
   * torch.optim.AdamW does.
   */
  properties[PROP_WEIGHT_DECAY] =
    g_param_spec_double ("weight-decay", NULL, "Weight decay",
                         0.0, DBL_MAX, 0.0,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_OPTIMIZER);
}

static void
hp_optimizer_config_init (HpOptimizerConfig *self)
{
  HpOptimizerConfigPrivate *priv = hp_optimizer_config_get_instance_private (self);

  priv->lr = 1e-3;
}

/**
 * hp_optimizer_config_get_lr:
 * @self: a #HpOptimizerConfig
 *
 * Gets the learning rate the optimizer starts with.
 *
 * Returns: the #HpOptimizerConfig:lr
 */
gdouble
hp_optimizer_config_get_lr (HpOptimizerConfig *self)
{
  HpOptimizerConfigPrivate *priv;

  g_return_val_if_fail (HP_IS_OPTIMIZER_CONFIG (self), 0.0);

  priv = hp_optimizer_config_get_instance_private (self);
  return priv->lr;
}

/**
 * hp_optimizer_config_set_lr:
 * @self: a #HpOptimizerConfig
 * @lr: the learning rate, 0 or more
 *
 * Sets #HpOptimizerConfig:lr.
 */
void
hp_optimizer_config_set_lr (HpOptimizerConfig *self,
                            gdouble            lr)
{
  HpOptimizerConfigPrivate *priv;

  g_return_if_fail (HP_IS_OPTIMIZER_CONFIG (self));
  g_return_if_fail (lr >= 0.0);

  priv = hp_optimizer_config_get_instance_private (self);
  if (priv->lr != lr)
    {
      priv->lr = lr;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LR]);
    }
}

/**
 * hp_optimizer_config_get_weight_decay:
 * @self: a #HpOptimizerConfig
 *
 * Gets the weight decay factor.
 *
 * Returns: the #HpOptimizerConfig:weight-decay
 */
gdouble
hp_optimizer_config_get_weight_decay (HpOptimizerConfig *self)
{
  HpOptimizerConfigPrivate *priv;

  g_return_val_if_fail (HP_IS_OPTIMIZER_CONFIG (self), 0.0);

  priv = hp_optimizer_config_get_instance_private (self);
  return priv->weight_decay;
}

/**
 * hp_optimizer_config_set_weight_decay:
 * @self: a #HpOptimizerConfig
 * @weight_decay: the weight decay factor, 0 or more
 *
 * Sets #HpOptimizerConfig:weight-decay.
 */
void
hp_optimizer_config_set_weight_decay (HpOptimizerConfig *self,
                                      gdouble            weight_decay)
{
  HpOptimizerConfigPrivate *priv;

  g_return_if_fail (HP_IS_OPTIMIZER_CONFIG (self));
  g_return_if_fail (weight_decay >= 0.0);

  priv = hp_optimizer_config_get_instance_private (self);
  if (priv->weight_decay != weight_decay)
    {
      priv->weight_decay = weight_decay;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WEIGHT_DECAY]);
    }
}
