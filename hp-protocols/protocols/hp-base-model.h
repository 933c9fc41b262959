/* hp-base-model.h: the root module of a model
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-base-model-config.h"
#include "hp-module.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_BASE_MODEL (hp_base_model_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (HpBaseModel, hp_base_model, HP, BASE_MODEL, HpModule)

/**
 * HpBaseModelClass:
 * @parent_class: the parent class
 *
 * The class of models.
 *
 * Since: 1.0
 */
struct _HpBaseModelClass
{
  HpModuleClass parent_class;

  /*< private >*/
  gpointer padding[8];
};

HP_AVAILABLE_IN_ALL
gboolean hp_base_model_verify_module_protocol (HpBaseModel  *self,
                                               GError      **error);
HP_AVAILABLE_IN_ALL
gboolean hp_base_model_init_weights           (HpBaseModel  *self,
                                               guint64       seed,
                                               GError      **error);

G_END_DECLS
