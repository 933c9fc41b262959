/* hp-replicate.h: the whole tensor on every rank of a mesh dim
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-placement.h"

G_BEGIN_DECLS

#define HP_TYPE_REPLICATE (hp_replicate_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpReplicate, hp_replicate, HP, REPLICATE, HpPlacement)

HP_AVAILABLE_IN_ALL
HpPlacement *hp_replicate_new             (void);

G_END_DECLS
