/* hp-named-placement-private.h: comparing the lists of named placements
 * that sharding and local map configs hold
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-named-placement.h"

G_BEGIN_DECLS

/* hp_named_placement_equal() where NULL equals only NULL */
gboolean  _hp_named_placement_equal0      (HpNamedPlacement *a,
                                           HpNamedPlacement *b);
/* Both NULL, or the same length and _hp_named_placement_equal0()
 * entries */
gboolean  _hp_named_placement_lists_equal (GPtrArray        *a,
                                           GPtrArray        *b);

G_END_DECLS
