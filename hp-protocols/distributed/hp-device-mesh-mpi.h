/* hp-device-mesh-mpi.h: the MPI communicators of device meshes, for C
 * programs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Not read by the introspection scanner: bindings have no MPI_Comm.
 * Programs include <hp-protocols/hp-mpi.h>, which includes this header.
 */

#pragma once

#if !defined (HP_MPI_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-mpi.h> can be included directly."
#endif

#include <mpi.h>

#include "hp-device-mesh.h"
#include "hp-version-macros.h"

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
