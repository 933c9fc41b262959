/* hp-grad-mode.h: switching autograd recording on and off
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib.h>

#include "hp-version-macros.h"

G_BEGIN_DECLS

HP_AVAILABLE_IN_ALL
gboolean hp_grad_mode_is_enabled   (void);
HP_AVAILABLE_IN_ALL
void     hp_grad_mode_set_enabled  (gboolean enabled);

G_END_DECLS
