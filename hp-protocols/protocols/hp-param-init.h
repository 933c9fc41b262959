/* hp-param-init.h: initialisers by parameter name
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-initializer.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_PARAM_INIT (hp_param_init_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpParamInit, hp_param_init, HP, PARAM_INIT, GObject)

HP_AVAILABLE_IN_ALL
HpParamInit   *hp_param_init_new             (void);
HP_AVAILABLE_IN_ALL
HpParamInit   *hp_param_init_new_from_string (const gchar    *text,
                                              GError        **error);
HP_AVAILABLE_IN_ALL
void           hp_param_init_set             (HpParamInit    *self,
                                              const gchar    *param_name,
                                              HpInitializer  *initializer);
HP_AVAILABLE_IN_ALL
HpInitializer *hp_param_init_get             (HpParamInit    *self,
                                              const gchar    *param_name);
HP_AVAILABLE_IN_ALL
GStrv          hp_param_init_get_names       (HpParamInit    *self);
HP_AVAILABLE_IN_ALL
guint          hp_param_init_get_n_entries   (HpParamInit    *self);
HP_AVAILABLE_IN_ALL
gchar         *hp_param_init_to_string       (HpParamInit    *self);
HP_AVAILABLE_IN_ALL
gboolean       hp_param_init_equal           (HpParamInit    *self,
                                              HpParamInit    *other);
HP_AVAILABLE_IN_ALL
HpParamInit   *hp_param_init_copy            (HpParamInit    *self);

G_END_DECLS
