/* hp-mesh-axis-name.h: the standard names of mesh dims
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

/**
 * HpMeshAxisName:
 * @HP_MESH_AXIS_NAME_DP: data parallel, `dp`
 * @HP_MESH_AXIS_NAME_DP_REPLICATE: replicated data parallel (DDP),
 *   `dp_replicate`
 * @HP_MESH_AXIS_NAME_DP_SHARD: sharded data parallel, `dp_shard`
 * @HP_MESH_AXIS_NAME_FSDP: fully sharded data parallel, `fsdp`
 * @HP_MESH_AXIS_NAME_TP: tensor parallel, `tp`
 * @HP_MESH_AXIS_NAME_CP: context parallel, `cp`
 * @HP_MESH_AXIS_NAME_PP: pipeline parallel, `pp`
 * @HP_MESH_AXIS_NAME_EP: expert parallel, `ep`
 * @HP_MESH_AXIS_NAME_EFSDP: fully sharded data parallel of the experts,
 *   `efsdp`
 *
 * The standard names of device mesh dims. Each value's nick is the dim
 * name itself, as given to [ctor@Hp.DeviceMesh.new] and used as the axis of
 * a [class@Hp.NamedPlacement]; [func@Hp.MeshAxisName.to_string] and
 * [func@Hp.MeshAxisName.from_string] convert.
 *
 * Since: 1.0
 */
typedef enum
{
  HP_MESH_AXIS_NAME_DP,                 /*< nick=dp >*/
  HP_MESH_AXIS_NAME_DP_REPLICATE,       /*< nick=dp_replicate >*/
  HP_MESH_AXIS_NAME_DP_SHARD,           /*< nick=dp_shard >*/
  HP_MESH_AXIS_NAME_FSDP,               /*< nick=fsdp >*/
  HP_MESH_AXIS_NAME_TP,                 /*< nick=tp >*/
  HP_MESH_AXIS_NAME_CP,                 /*< nick=cp >*/
  HP_MESH_AXIS_NAME_PP,                 /*< nick=pp >*/
  HP_MESH_AXIS_NAME_EP,                 /*< nick=ep >*/
  HP_MESH_AXIS_NAME_EFSDP,              /*< nick=efsdp >*/
} HpMeshAxisName;

HP_AVAILABLE_IN_ALL
const gchar *hp_mesh_axis_name_to_string   (HpMeshAxisName   axis);
HP_AVAILABLE_IN_ALL
gboolean     hp_mesh_axis_name_from_string (const gchar     *name,
                                            HpMeshAxisName  *axis,
                                            GError         **error);

G_END_DECLS
