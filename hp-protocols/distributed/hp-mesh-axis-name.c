/* hp-mesh-axis-name.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-distributed-enum-types.h"
#include "hp-enum-private.h"
#include "hp-error-private.h"
#include "hp-error.h"
#include "hp-mesh-axis-name.h"

/**
 * hp_mesh_axis_name_to_string:
 * @axis: a [enum@Hp.MeshAxisName]
 *
 * Gets the mesh dim name of @axis, such as `tp` or `dp_shard`.
 *
 * Returns: (transfer none): the name, a static string
 *
 * Since: 1.0
 */
const gchar *
hp_mesh_axis_name_to_string (HpMeshAxisName axis)
{
  const gchar *nick = _hp_enum_to_nick (HP_TYPE_MESH_AXIS_NAME, axis);

  g_return_val_if_fail (nick != NULL, NULL);

  return nick;
}

/**
 * hp_mesh_axis_name_from_string:
 * @name: a mesh dim name such as "tp"
 * @axis: (out): return location for the axis
 * @error: return location for a [struct@GLib.Error]
 *
 * Looks up the standard axis whose name is @name. Names are
 * case-sensitive: `tp` is an axis, `TP` is not.
 *
 * Returns: %TRUE on success; %FALSE with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error],
 *   listing the valid names, when @name is not one of them, in which case
 *   @axis is left unchanged
 *
 * Since: 1.0
 */
gboolean
hp_mesh_axis_name_from_string (const gchar     *name,
                               HpMeshAxisName  *axis,
                               GError         **error)
{
  gint value;

  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (axis != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!_hp_error_check_utf8 (name, "mesh axis name", HP_ERROR_INVALID_ARGUMENT, error))
    return FALSE;

  if (!_hp_enum_from_nick (HP_TYPE_MESH_AXIS_NAME, name, &value))
    {
      g_autofree gchar *names = _hp_enum_list_nicks (HP_TYPE_MESH_AXIS_NAME);

      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "unknown mesh axis name '%s' (expected one of %s)", name, names);
      return FALSE;
    }

  *axis = value;
  return TRUE;
}
