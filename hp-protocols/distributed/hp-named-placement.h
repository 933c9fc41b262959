/* hp-named-placement.h: placements keyed by mesh axis name
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-mesh-axis-name.h"
#include "hp-placement.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_NAMED_PLACEMENT (hp_named_placement_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpNamedPlacement, hp_named_placement, HP, NAMED_PLACEMENT, GObject)

HP_AVAILABLE_IN_ALL
HpNamedPlacement *hp_named_placement_new             (void);
HP_AVAILABLE_IN_ALL
HpNamedPlacement *hp_named_placement_new_from_string (const gchar          *text,
                                                      GError              **error);
HP_AVAILABLE_IN_ALL
void              hp_named_placement_set             (HpNamedPlacement     *self,
                                                      const gchar          *axis,
                                                      HpPlacement          *placement);
HP_AVAILABLE_IN_ALL
void              hp_named_placement_set_axis        (HpNamedPlacement     *self,
                                                      HpMeshAxisName        axis,
                                                      HpPlacement          *placement);
HP_AVAILABLE_IN_ALL
HpPlacement      *hp_named_placement_get             (HpNamedPlacement     *self,
                                                      const gchar          *axis);
HP_AVAILABLE_IN_ALL
GStrv             hp_named_placement_get_axes        (HpNamedPlacement     *self);
HP_AVAILABLE_IN_ALL
guint             hp_named_placement_get_n_axes      (HpNamedPlacement     *self);
HP_AVAILABLE_IN_ALL
gchar            *hp_named_placement_to_string       (HpNamedPlacement     *self);
HP_AVAILABLE_IN_ALL
gboolean          hp_named_placement_equal           (HpNamedPlacement     *self,
                                                      HpNamedPlacement     *other);
HP_AVAILABLE_IN_ALL
HpNamedPlacement *hp_named_placement_copy            (HpNamedPlacement     *self);

HP_AVAILABLE_IN_ALL
GPtrArray        *hp_resolve_placements              (HpNamedPlacement     *named,
                                                      const gchar * const  *mesh_dim_names,
                                                      GError              **error);

G_END_DECLS
