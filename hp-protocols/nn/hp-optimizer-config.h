/* hp-optimizer-config.h: the configuration every optimizer has
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-config.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_OPTIMIZER_CONFIG (hp_optimizer_config_get_type ())

/* What G_DECLARE_DERIVABLE_TYPE declares, written out because the
 * instance struct holds the fields, which the field table of
 * hp_config_class_install_fields() addresses by their offset in it
 * (instance private data has no offset known when the table is made) */
HP_AVAILABLE_IN_ALL
GType hp_optimizer_config_get_type (void);

typedef struct _HpOptimizerConfig HpOptimizerConfig;
typedef struct _HpOptimizerConfigClass HpOptimizerConfigClass;

struct _HpOptimizerConfig
{
  HpConfig parent_instance;

  /*< private >*/
  gdouble lr;
  gdouble weight_decay;
};

/**
 * HpOptimizerConfigClass:
 * @parent_class: the parent class
 *
 * The class of optimizer configurations.
 *
 * Since: 1.0
 */
struct _HpOptimizerConfigClass
{
  HpConfigClass parent_class;

  /*< private >*/
  gpointer padding[8];
};

G_DEFINE_AUTOPTR_CLEANUP_FUNC (HpOptimizerConfig, g_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HpOptimizerConfigClass, g_type_class_unref)

G_GNUC_UNUSED static inline HpOptimizerConfig *
HP_OPTIMIZER_CONFIG (gpointer ptr)
{
  return G_TYPE_CHECK_INSTANCE_CAST (ptr, HP_TYPE_OPTIMIZER_CONFIG, HpOptimizerConfig);
}

G_GNUC_UNUSED static inline HpOptimizerConfigClass *
HP_OPTIMIZER_CONFIG_CLASS (gpointer ptr)
{
  return G_TYPE_CHECK_CLASS_CAST (ptr, HP_TYPE_OPTIMIZER_CONFIG, HpOptimizerConfigClass);
}

G_GNUC_UNUSED static inline gboolean
HP_IS_OPTIMIZER_CONFIG (gpointer ptr)
{
  return G_TYPE_CHECK_INSTANCE_TYPE (ptr, HP_TYPE_OPTIMIZER_CONFIG);
}

G_GNUC_UNUSED static inline gboolean
HP_IS_OPTIMIZER_CONFIG_CLASS (gpointer ptr)
{
  return G_TYPE_CHECK_CLASS_TYPE (ptr, HP_TYPE_OPTIMIZER_CONFIG);
}

G_GNUC_UNUSED static inline HpOptimizerConfigClass *
HP_OPTIMIZER_CONFIG_GET_CLASS (gpointer ptr)
{
  return G_TYPE_INSTANCE_GET_CLASS (ptr, HP_TYPE_OPTIMIZER_CONFIG, HpOptimizerConfigClass);
}

HP_AVAILABLE_IN_ALL
gdouble hp_optimizer_config_get_lr           (HpOptimizerConfig *self);
HP_AVAILABLE_IN_ALL
void    hp_optimizer_config_set_lr           (HpOptimizerConfig *self,
                                              gdouble            lr);
HP_AVAILABLE_IN_ALL
gdouble hp_optimizer_config_get_weight_decay (HpOptimizerConfig *self);
HP_AVAILABLE_IN_ALL
void    hp_optimizer_config_set_weight_decay (HpOptimizerConfig *self,
                                              gdouble            weight_decay);

G_END_DECLS
