/* hp-optimizer.h: gradient-based optimizers of parameters
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-configurable.h"
#include "hp-optimizer-config.h"
#include "hp-state-dict.h"
#include "hp-tensor.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_OPTIMIZER (hp_optimizer_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (HpOptimizer, hp_optimizer, HP, OPTIMIZER, HpConfigurable)

/**
 * HpOptimizerClass:
 * @parent_class: the parent class
 * @step: updates the parameters from their gradients; called by
 *   [method@Hp.Optimizer.step] with gradient recording off. Returns %FALSE with
 *   the error set, in which case no parameter and no state may have
 *   changed.
 *
 * The class of optimizers. A subclass implements @step.
 *
 * Since: 1.0
 */
struct _HpOptimizerClass
{
  HpConfigurableClass parent_class;

  gboolean (*step) (HpOptimizer  *self,
                    GError      **error);

  /*< private >*/
  gpointer padding[8];
};

HP_AVAILABLE_IN_ALL
HpOptimizer *hp_optimizer_config_build_optimizer (HpOptimizerConfig  *self,
                                                  GPtrArray          *parameters,
                                                  GError            **error);

HP_AVAILABLE_IN_ALL
gboolean     hp_optimizer_add_parameters     (HpOptimizer        *self,
                                              GPtrArray          *parameters,
                                              GError            **error);
HP_AVAILABLE_IN_ALL
GPtrArray   *hp_optimizer_get_parameters     (HpOptimizer        *self);
HP_AVAILABLE_IN_ALL
guint        hp_optimizer_get_n_parameters   (HpOptimizer        *self);

HP_AVAILABLE_IN_ALL
gboolean     hp_optimizer_step               (HpOptimizer        *self,
                                              GError            **error);
HP_AVAILABLE_IN_ALL
void         hp_optimizer_zero_grad          (HpOptimizer        *self);

HP_AVAILABLE_IN_ALL
guint64      hp_optimizer_get_step_count     (HpOptimizer        *self);
HP_AVAILABLE_IN_ALL
gdouble      hp_optimizer_get_lr             (HpOptimizer        *self);
HP_AVAILABLE_IN_ALL
void         hp_optimizer_set_lr             (HpOptimizer        *self,
                                              gdouble             lr);
HP_AVAILABLE_IN_ALL
HpStateDict *hp_optimizer_get_state          (HpOptimizer        *self);
HP_AVAILABLE_IN_ALL
gboolean     hp_optimizer_load_state         (HpOptimizer        *self,
                                              HpStateDict        *state,
                                              guint64             step_count,
                                              GError            **error);

G_END_DECLS
