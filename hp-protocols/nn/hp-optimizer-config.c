/* hp-optimizer-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <float.h>

#include "hp-config-field.h"
#include "hp-optimizer.h"
#include "hp-adamw-config.h"
#include "hp-optimizer-config.h"
#include "hp-sgd-config.h"

/**
 * HpOptimizerConfig:
 *
 * The fields every optimizer configuration has: the learning rate
 * ([property@Hp.OptimizerConfig:lr]) and the weight decay
 * ([property@Hp.OptimizerConfig:weight-decay]). The class is abstract;
 * the configurations of concrete optimizers, such as
 * [class@Hp.SGDConfig] and [class@Hp.AdamWConfig], derive from it, add
 * their own fields and build their optimizer with
 * [method@Hp.Config.build] or
 * [method@Hp.OptimizerConfig.build_optimizer].
 *
 * Like every configuration it copies, compares and reads from and
 * writes to JSON field by field, so a job configuration can hold the
 * optimizer's settings.
 *
 * Since: 1.0
 */

typedef struct
{
  gdouble lr;
  gdouble weight_decay;
} HpOptimizerConfigPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (HpOptimizerConfig, hp_optimizer_config, HP_TYPE_CONFIG)

/**
 * HpOptimizerConfig:lr:
 *
 * The learning rate the optimizer starts with. The optimizer keeps its
 * own copy ([property@Hp.Optimizer:lr]), which a schedule changes while
 * training.
 *
 * Since: 1.0
 */
/**
 * HpOptimizerConfig:weight-decay:
 *
 * The weight decay factor. How it is applied depends on the
 * optimizer: [class@Hp.SGD] adds it times the parameter to the
 * gradient (L2 regularisation), [class@Hp.AdamW] shrinks the parameter
 * by `lr * weight_decay` before its update (decoupled weight decay).
 * Its default is 0, except in [class@Hp.AdamWConfig], which starts at
 * 0.01 as torch.optim.AdamW does.
 *
 * Since: 1.0
 */
static const HpConfigField optimizer_config_fields[] = {
  HP_CONFIG_FIELD_DOUBLE (HpOptimizerConfigPrivate, lr, "lr", "Learning rate", 0.0, DBL_MAX, 1e-3),
  HP_CONFIG_FIELD_DOUBLE (HpOptimizerConfigPrivate, weight_decay, "weight-decay", "Weight decay",
                          0.0, DBL_MAX, 0.0),
};

static void
hp_optimizer_config_class_init (HpOptimizerConfigClass *klass)
{
  hp_config_class_install_private_fields (HP_CONFIG_CLASS (klass), HpOptimizerConfig_private_offset,
                                          optimizer_config_fields,
                                          G_N_ELEMENTS (optimizer_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_OPTIMIZER);
  /* JSON read as an optimizer config may name the library's optimizers
   * before anything has made one */
  g_type_ensure (HP_TYPE_ADAMW_CONFIG);
  g_type_ensure (HP_TYPE_SGD_CONFIG);
}

static void
hp_optimizer_config_init (HpOptimizerConfig *self)
{
}

#include "hp-optimizer-config-fields.c"
