/* hp-data-parallel.h: replicated data parallelism over a mesh dim
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-device-mesh.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

HP_AVAILABLE_IN_ALL
gboolean hp_data_parallel_average_gradients (GPtrArray     *params,
                                             HpDeviceMesh  *dp_mesh,
                                             GError       **error);
HP_AVAILABLE_IN_ALL
gboolean hp_data_parallel_average_scalar    (HpDeviceMesh  *dp_mesh,
                                             gdouble       *value,
                                             GError       **error);

G_END_DECLS
