/* hp-config-list.h: an ordered list of configurations
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <gio/gio.h>

#include "hp-config.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_CONFIG_LIST (hp_config_list_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpConfigList, hp_config_list, HP, CONFIG_LIST, GObject)

HP_AVAILABLE_IN_ALL
HpConfigList *hp_config_list_new        (void);
HP_AVAILABLE_IN_ALL
void          hp_config_list_append     (HpConfigList *self,
                                         HpConfig     *config);
HP_AVAILABLE_IN_ALL
void          hp_config_list_insert     (HpConfigList *self,
                                         guint         position,
                                         HpConfig     *config);
HP_AVAILABLE_IN_ALL
void          hp_config_list_remove     (HpConfigList *self,
                                         guint         position);
HP_AVAILABLE_IN_ALL
HpConfig     *hp_config_list_peek       (HpConfigList *self,
                                         guint         position);
HP_AVAILABLE_IN_ALL
guint         hp_config_list_get_length (HpConfigList *self);
HP_AVAILABLE_IN_ALL
HpConfigList *hp_config_list_copy       (HpConfigList *self);

G_END_DECLS
