/* hp-sequential.h: modules run one after the other
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-module-list.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_SEQUENTIAL (hp_sequential_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpSequential, hp_sequential, HP, SEQUENTIAL, HpModuleList)

HP_AVAILABLE_IN_ALL
HpSequential *hp_sequential_new (void);

G_END_DECLS
