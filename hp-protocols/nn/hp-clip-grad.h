/* hp-clip-grad.h: clipping gradients by their global norm
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

HP_AVAILABLE_IN_ALL
gdouble hp_clip_grad_norm (GPtrArray  *parameters,
                           gdouble     max_norm,
                           gdouble     norm_type,
                           GError    **error);

G_END_DECLS
