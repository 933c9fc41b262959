/* hp-optimizer-private.h: what the library's optimizers share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-optimizer.h"

G_BEGIN_DECLS

/* One parameter to update in a step: this rank's values of the
 * parameter, written in place (the parameter itself, or the local
 * tensor of a DTensor), and the matching part of its gradient */
typedef struct
{
  guint index;
  HpTensor *value;
  HpTensor *grad;
} HpOptimizerItem;

/* The parameters that have a gradient, in order, after checking that
 * every gradient has its parameter's layout (an array of
 * HpOptimizerItem); NULL with @error set, naming @self's type, when one
 * has not. */
GArray   *_hp_optimizer_collect      (HpOptimizer  *self,
                                      GError      **error);

/* The local tensor of the state @name of parameter @index, or NULL if
 * there is none yet */
HpTensor *_hp_optimizer_lookup_state (HpOptimizer  *self,
                                      guint         index,
                                      const gchar  *name);
/* Adds the state @name of parameter @index, taking @local (a new tensor
 * nobody else holds). With @like_parameter, @local has the local shape
 * of the parameter and hp_optimizer_get_state() shows it with the
 * parameter's layout (a DTensor for a DTensor parameter). Returns
 * @local. */
HpTensor *_hp_optimizer_add_state    (HpOptimizer  *self,
                                      guint         index,
                                      const gchar  *name,
                                      HpTensor     *local,
                                      gboolean      like_parameter);

/* The states that the step of an optimizer class keeps per parameter:
 * a tensor like the parameter (its global shape, dtype and layout) or
 * a float64 scalar */
typedef enum
{
  HP_OPTIMIZER_STATE_LIKE_PARAMETER,
  HP_OPTIMIZER_STATE_SCALAR,
} HpOptimizerStateKind;

typedef struct
{
  const gchar *name;
  HpOptimizerStateKind kind;
} HpOptimizerStateSpec;

/* Declares the states of @klass (a static array of @n_specs), which the
 * step reads without checking: hp_optimizer_load_state() then accepts,
 * for each parameter, either none or all of them, each of its kind,
 * and no other name. */
void      _hp_optimizer_class_set_states (HpOptimizerClass           *klass,
                                          const HpOptimizerStateSpec *specs,
                                          guint                       n_specs);

G_END_DECLS
