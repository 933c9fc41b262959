/* hp-local-map-config.h: which inner callable runs on local shards
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-named-placement.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_LOCAL_MAP_CONFIG (hp_local_map_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpLocalMapConfig, hp_local_map_config, HP, LOCAL_MAP_CONFIG, GObject)

HP_AVAILABLE_IN_ALL
HpLocalMapConfig *hp_local_map_config_new                    (const gchar      *callable_path);
HP_AVAILABLE_IN_ALL
const gchar      *hp_local_map_config_get_callable_path      (HpLocalMapConfig *self);
HP_AVAILABLE_IN_ALL
void              hp_local_map_config_set_callable_path      (HpLocalMapConfig *self,
                                                              const gchar      *callable_path);
HP_AVAILABLE_IN_ALL
GPtrArray        *hp_local_map_config_get_in_placements      (HpLocalMapConfig *self);
HP_AVAILABLE_IN_ALL
void              hp_local_map_config_set_in_placements      (HpLocalMapConfig *self,
                                                              GPtrArray        *placements);
HP_AVAILABLE_IN_ALL
GPtrArray        *hp_local_map_config_get_out_placements     (HpLocalMapConfig *self);
HP_AVAILABLE_IN_ALL
void              hp_local_map_config_set_out_placements     (HpLocalMapConfig *self,
                                                              GPtrArray        *placements);
HP_AVAILABLE_IN_ALL
GPtrArray        *hp_local_map_config_get_in_grad_placements (HpLocalMapConfig *self);
HP_AVAILABLE_IN_ALL
void              hp_local_map_config_set_in_grad_placements (HpLocalMapConfig *self,
                                                              GPtrArray        *placements);
HP_AVAILABLE_IN_ALL
HpLocalMapConfig *hp_local_map_config_copy                   (HpLocalMapConfig *self);
HP_AVAILABLE_IN_ALL
gboolean          hp_local_map_config_equal                  (HpLocalMapConfig *self,
                                                              HpLocalMapConfig *other);

G_END_DECLS
