/* hp-dtensor.h: a tensor laid out over a device mesh
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-device-mesh.h"
#include "hp-placement.h"
#include "hp-tensor.h"

G_BEGIN_DECLS

#define HP_TYPE_DTENSOR (hp_dtensor_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpDTensor, hp_dtensor, HP, DTENSOR, HpTensor)

HP_AVAILABLE_IN_ALL
HpDTensor    *hp_dtensor_distribute      (HpTensor      *tensor,
                                          HpDeviceMesh  *mesh,
                                          GPtrArray     *placements,
                                          gint           src_data_rank,
                                          GError       **error);
HP_AVAILABLE_IN_ALL
HpDTensor    *hp_dtensor_new_from_local  (HpTensor      *local,
                                          HpDeviceMesh  *mesh,
                                          GPtrArray     *placements,
                                          const gint64  *shape,
                                          guint          ndim,
                                          gboolean       run_check,
                                          GError       **error);
HP_AVAILABLE_IN_ALL
HpTensor     *hp_dtensor_get_local       (HpDTensor     *self);
HP_AVAILABLE_IN_ALL
HpDeviceMesh *hp_dtensor_get_mesh        (HpDTensor     *self);
HP_AVAILABLE_IN_ALL
GPtrArray    *hp_dtensor_get_placements  (HpDTensor     *self);
HP_AVAILABLE_IN_ALL
HpTensor     *hp_dtensor_full_tensor     (HpDTensor     *self,
                                          GError       **error);
HP_AVAILABLE_IN_ALL
HpDTensor    *hp_dtensor_redistribute    (HpDTensor     *self,
                                          GPtrArray     *placements,
                                          GError       **error);
HP_AVAILABLE_IN_ALL
gchar        *hp_dtensor_visualize       (HpDTensor     *self);

G_END_DECLS
