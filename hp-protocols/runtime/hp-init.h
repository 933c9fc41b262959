/* hp-init.h: library start-up and the MPI world
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
gboolean hp_init             (GError **error);
HP_AVAILABLE_IN_ALL
gint     hp_get_world_rank   (void);
HP_AVAILABLE_IN_ALL
gint     hp_get_world_size   (void);

G_END_DECLS
