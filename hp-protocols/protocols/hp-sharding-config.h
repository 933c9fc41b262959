/* hp-sharding-config.h: how a module's states, inputs and outputs are laid out
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-local-map-config.h"
#include "hp-named-placement.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_SHARDING_CONFIG (hp_sharding_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpShardingConfig, hp_sharding_config, HP, SHARDING_CONFIG, GObject)

HP_AVAILABLE_IN_ALL
HpShardingConfig *hp_sharding_config_new                    (void);

HP_AVAILABLE_IN_ALL
void              hp_sharding_config_set_state_sharding     (HpShardingConfig *self,
                                                             const gchar      *path,
                                                             HpNamedPlacement *named);
HP_AVAILABLE_IN_ALL
HpNamedPlacement *hp_sharding_config_get_state_sharding     (HpShardingConfig *self,
                                                             const gchar      *path);
HP_AVAILABLE_IN_ALL
GStrv             hp_sharding_config_list_state_shardings   (HpShardingConfig *self);

HP_AVAILABLE_IN_ALL
void              hp_sharding_config_set_in_src_sharding    (HpShardingConfig *self,
                                                             const gchar      *arg_name,
                                                             HpNamedPlacement *named);
HP_AVAILABLE_IN_ALL
HpNamedPlacement *hp_sharding_config_get_in_src_sharding    (HpShardingConfig *self,
                                                             const gchar      *arg_name);
HP_AVAILABLE_IN_ALL
GStrv             hp_sharding_config_list_in_src_shardings  (HpShardingConfig *self);

HP_AVAILABLE_IN_ALL
void              hp_sharding_config_set_in_dst_sharding    (HpShardingConfig *self,
                                                             const gchar      *arg_name,
                                                             HpNamedPlacement *named);
HP_AVAILABLE_IN_ALL
HpNamedPlacement *hp_sharding_config_get_in_dst_sharding    (HpShardingConfig *self,
                                                             const gchar      *arg_name);
HP_AVAILABLE_IN_ALL
GStrv             hp_sharding_config_list_in_dst_shardings  (HpShardingConfig *self);

HP_AVAILABLE_IN_ALL
void              hp_sharding_config_set_out_src_sharding   (HpShardingConfig *self,
                                                             guint             index,
                                                             HpNamedPlacement *named);
HP_AVAILABLE_IN_ALL
HpNamedPlacement *hp_sharding_config_get_out_src_sharding   (HpShardingConfig *self,
                                                             guint             index);
HP_AVAILABLE_IN_ALL
guint             hp_sharding_config_get_n_out_src_shardings (HpShardingConfig *self);

HP_AVAILABLE_IN_ALL
void              hp_sharding_config_set_out_dst_sharding   (HpShardingConfig *self,
                                                             guint             index,
                                                             HpNamedPlacement *named);
HP_AVAILABLE_IN_ALL
HpNamedPlacement *hp_sharding_config_get_out_dst_sharding   (HpShardingConfig *self,
                                                             guint             index);
HP_AVAILABLE_IN_ALL
guint             hp_sharding_config_get_n_out_dst_shardings (HpShardingConfig *self);

HP_AVAILABLE_IN_ALL
void              hp_sharding_config_set_local_map          (HpShardingConfig *self,
                                                             HpLocalMapConfig *local_map);
HP_AVAILABLE_IN_ALL
HpLocalMapConfig *hp_sharding_config_get_local_map          (HpShardingConfig *self);

HP_AVAILABLE_IN_ALL
HpShardingConfig *hp_sharding_config_copy                   (HpShardingConfig *self);
HP_AVAILABLE_IN_ALL
gboolean          hp_sharding_config_equal                  (HpShardingConfig *self,
                                                             HpShardingConfig *other);
HP_AVAILABLE_IN_ALL
gchar            *hp_sharding_config_to_string              (HpShardingConfig *self);

G_END_DECLS
