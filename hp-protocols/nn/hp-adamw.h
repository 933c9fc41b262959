/* hp-adamw.h: Adam with decoupled weight decay
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-optimizer.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_ADAMW (hp_adamw_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpAdamW, hp_adamw, HP, ADAMW, HpOptimizer)

G_END_DECLS
