/* hp-placement.h: how a tensor is laid out across one mesh dim
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_PLACEMENT (hp_placement_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (HpPlacement, hp_placement, HP, PLACEMENT, GObject)

/**
 * HpPlacementClass:
 * @parent_class: the parent class
 * @equal: compares with another placement of the same type
 * @to_string: formats the placement as `S(0)`, `R` or `P(sum)`
 *
 * The class of the placements; the library's own [class@Hp.Shard], [class@Hp.Replicate]
 * and [class@Hp.Partial] are the only subclasses.
 *
 * Since: 1.0
 */
struct _HpPlacementClass
{
  GObjectClass parent_class;

  gboolean  (*equal)     (HpPlacement *self,
                          HpPlacement *other);
  gchar    *(*to_string) (HpPlacement *self);

  /*< private >*/
  gpointer padding[8];
};

HP_AVAILABLE_IN_ALL
HpPlacement *hp_placement_new_from_string (const gchar  *text,
                                           GError      **error);
HP_AVAILABLE_IN_ALL
gboolean     hp_placement_equal           (HpPlacement  *self,
                                           HpPlacement  *other);
HP_AVAILABLE_IN_ALL
gchar       *hp_placement_to_string       (HpPlacement  *self);
HP_AVAILABLE_IN_ALL
gboolean     hp_placement_is_shard        (HpPlacement  *self);
HP_AVAILABLE_IN_ALL
gboolean     hp_placement_is_replicate    (HpPlacement  *self);
HP_AVAILABLE_IN_ALL
gboolean     hp_placement_is_partial      (HpPlacement  *self);
HP_AVAILABLE_IN_ALL
gchar       *hp_placements_to_string      (GPtrArray    *placements);
HP_AVAILABLE_IN_ALL
GPtrArray   *hp_placements_new_from_string (const gchar *text,
                                           GError      **error);

G_END_DECLS
