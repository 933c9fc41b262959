/* hp-device-mesh.h: an N-d grid of MPI ranks with named dims
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

#define HP_TYPE_DEVICE_MESH (hp_device_mesh_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpDeviceMesh, hp_device_mesh, HP, DEVICE_MESH, GObject)

HP_AVAILABLE_IN_ALL
HpDeviceMesh        *hp_device_mesh_new            (const gint          *shape,
                                                    guint                ndim,
                                                    const gchar * const *dim_names,
                                                    GError             **error);
HP_AVAILABLE_IN_ALL
guint                hp_device_mesh_get_ndim       (HpDeviceMesh        *self);
HP_AVAILABLE_IN_ALL
const gint          *hp_device_mesh_get_shape      (HpDeviceMesh        *self,
                                                    guint               *ndim);
HP_AVAILABLE_IN_ALL
gint                 hp_device_mesh_get_size       (HpDeviceMesh        *self);
HP_AVAILABLE_IN_ALL
const gchar * const *hp_device_mesh_get_dim_names  (HpDeviceMesh        *self);
HP_AVAILABLE_IN_ALL
gint                 hp_device_mesh_get_dim_index  (HpDeviceMesh        *self,
                                                    const gchar         *name,
                                                    GError             **error);
HP_AVAILABLE_IN_ALL
gint                 hp_device_mesh_get_local_rank (HpDeviceMesh        *self,
                                                    guint                dim);
HP_AVAILABLE_IN_ALL
const gint          *hp_device_mesh_get_coordinate (HpDeviceMesh        *self,
                                                    guint               *ndim);
HP_AVAILABLE_IN_ALL
gint                 hp_device_mesh_get_rank       (HpDeviceMesh        *self);
HP_AVAILABLE_IN_ALL
const gint          *hp_device_mesh_get_ranks      (HpDeviceMesh        *self,
                                                    gsize               *n_ranks);
HP_AVAILABLE_IN_ALL
HpDeviceMesh        *hp_device_mesh_slice          (HpDeviceMesh        *self,
                                                    const gchar * const *names,
                                                    GError             **error);
HP_AVAILABLE_IN_ALL
gchar               *hp_device_mesh_to_string      (HpDeviceMesh        *self);
HP_AVAILABLE_IN_ALL
gboolean             hp_device_mesh_equal          (HpDeviceMesh        *self,
                                                    HpDeviceMesh        *other);

G_END_DECLS
