/* hp-mpi.h: the MPI side of hp-protocols, for C programs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Not read by the introspection scanner: bindings have no MPI_Comm.
 * Include it after, or instead of, <hp-protocols/hp-protocols.h>.
 */

#pragma once

#include <mpi.h>

#include "hp-protocols.h"

G_BEGIN_DECLS

HP_AVAILABLE_IN_ALL
HpDeviceMesh *hp_device_mesh_new_for_comm  (MPI_Comm             comm,
                                            const gint          *shape,
                                            guint                ndim,
                                            const gchar * const *dim_names,
                                            GError             **error);
HP_AVAILABLE_IN_ALL
MPI_Comm      hp_device_mesh_get_comm      (HpDeviceMesh        *self);
HP_AVAILABLE_IN_ALL
MPI_Comm      hp_device_mesh_get_dim_comm  (HpDeviceMesh        *self,
                                            guint                dim);

G_END_DECLS
