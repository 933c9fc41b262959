/* hp-dtype.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-dtype.h"
#include "hp-enum-private.h"
#include "hp-error-private.h"
#include "hp-error.h"
#include "hp-tensor-enum-types.h"

/**
 * hp_dtype_get_size:
 * @dtype: a [enum@Hp.DType]
 *
 * Gets the size of one element of @dtype in bytes.
 *
 * Returns: the element size
 *
 * Since: 1.0
 */
gsize
hp_dtype_get_size (HpDType dtype)
{
  switch (dtype)
    {
    case HP_DTYPE_FLOAT32:
      return sizeof (gfloat);
    case HP_DTYPE_FLOAT64:
      return sizeof (gdouble);
    case HP_DTYPE_INT64:
      return sizeof (gint64);
    default:
      g_return_val_if_reached (0);
    }
}

/**
 * hp_dtype_is_floating:
 * @dtype: a [enum@Hp.DType]
 *
 * Tells whether @dtype is a floating point type, the only kind of tensor
 * that can require gradients.
 *
 * Returns: %TRUE for [HP_DTYPE_FLOAT32][enum@Hp.DType] and [HP_DTYPE_FLOAT64][enum@Hp.DType]
 *
 * Since: 1.0
 */
gboolean
hp_dtype_is_floating (HpDType dtype)
{
  return dtype == HP_DTYPE_FLOAT32 || dtype == HP_DTYPE_FLOAT64;
}

/**
 * hp_dtype_to_string:
 * @dtype: a [enum@Hp.DType]
 *
 * Gets the name of @dtype: "float32", "float64" or "int64".
 *
 * Returns: (transfer none): the name
 *
 * Since: 1.0
 */
const gchar *
hp_dtype_to_string (HpDType dtype)
{
  const gchar *nick = _hp_enum_to_nick (HP_TYPE_DTYPE, dtype);

  g_return_val_if_fail (nick != NULL, "invalid");

  return nick;
}

/**
 * hp_dtype_from_string:
 * @name: a dtype name such as "float32"
 * @dtype: (out): return location for the dtype
 * @error: return location for a [struct@GLib.Error]
 *
 * Parses a dtype name as written by [func@Hp.DType.to_string].
 *
 * Returns: %TRUE on success; %FALSE with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an
 *   unknown name
 *
 * Since: 1.0
 */
gboolean
hp_dtype_from_string (const gchar  *name,
                      HpDType      *dtype,
                      GError      **error)
{
  gint value;

  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (dtype != NULL, FALSE);

  if (!_hp_error_check_utf8 (name, "dtype", HP_ERROR_INVALID_ARGUMENT, error))
    return FALSE;

  if (!_hp_enum_from_nick (HP_TYPE_DTYPE, name, &value))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "unknown dtype '%s' (expected float32, float64 or int64)",
                   name);
      return FALSE;
    }

  *dtype = value;
  return TRUE;
}
