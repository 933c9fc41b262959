/* hp-local-map.h: run a local function on the shards of DTensors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-device-mesh.h"
#include "hp-named-placement.h"
#include "hp-tensor.h"

G_BEGIN_DECLS

/**
 * HpLocalMapFunc:
 * @args: (element-type HpTensor): the arguments, local tensors in place
 *   of the DTensors; an entry is %NULL where the argument is
 * @user_data: (closure): the data given to [ctor@Hp.LocalMap.new]
 * @error: return location for a [struct@GLib.Error]
 *
 * The plain function a [class@Hp.LocalMap] runs on every rank, on that rank's
 * local tensors. It sees no DTensor and does no communication of its
 * own; its outputs must be plain tensors as well.
 *
 * The map takes the array and one reference to each output. A C
 * function usually returns an array made with
 * `g_ptr_array_new_with_free_func (g_object_unref)` that holds new
 * tensors; an array without a free function whose elements carry a
 * reference each, as language bindings make, is just as right. The map
 * takes the elements out with [func@GLib.PtrArray.steal] and frees the array,
 * so each reference is dropped exactly once either way.
 *
 * Returns: (transfer full) (element-type HpTensor) (nullable): a new
 *   array of the outputs (%NULL entries stand for non-tensor outputs),
 *   or %NULL with @error set
 *
 * Since: 1.0
 */
typedef GPtrArray *(*HpLocalMapFunc) (GPtrArray  *args,
                                      gpointer    user_data,
                                      GError    **error);

#define HP_TYPE_LOCAL_MAP (hp_local_map_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpLocalMap, hp_local_map, HP, LOCAL_MAP, GObject)

HP_AVAILABLE_IN_ALL
HpLocalMap   *hp_local_map_new                     (HpLocalMapFunc   func,
                                                    GPtrArray       *out_placements,
                                                    GPtrArray       *in_placements,
                                                    GPtrArray       *in_grad_placements,
                                                    HpDeviceMesh    *mesh,
                                                    gboolean         redistribute_inputs,
                                                    gpointer         user_data,
                                                    GDestroyNotify   destroy);
HP_AVAILABLE_IN_ALL
GPtrArray    *hp_local_map_call                    (HpLocalMap      *self,
                                                    GPtrArray       *args,
                                                    GError         **error);
HP_AVAILABLE_IN_ALL
HpDeviceMesh *hp_local_map_get_mesh                (HpLocalMap      *self);
HP_AVAILABLE_IN_ALL
gboolean      hp_local_map_get_redistribute_inputs (HpLocalMap      *self);

G_END_DECLS
