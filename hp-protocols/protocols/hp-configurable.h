/* hp-configurable.h: objects built from a configuration
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-config.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_CONFIGURABLE (hp_configurable_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (HpConfigurable, hp_configurable, HP, CONFIGURABLE, GObject)

/**
 * HpConfigurableClass:
 * @parent_class: the parent class
 * @setup: makes the object's state from its configuration; run once,
 *   when the object is initialised (see [vfunc@Hp.Configurable.setup])
 *
 * The class of objects built by [method@Hp.Config.build].
 *
 * Since: 1.0
 */
struct _HpConfigurableClass
{
  GObjectClass parent_class;

  gboolean (*setup) (HpConfigurable  *self,
                     GError         **error);

  /*< private >*/
  gpointer padding[7];
};

HP_AVAILABLE_IN_ALL
HpConfig *hp_configurable_get_config (HpConfigurable *self);

G_END_DECLS
