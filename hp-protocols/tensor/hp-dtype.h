/* hp-dtype.h: element types of tensors
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
 * HpDType:
 * @HP_DTYPE_FLOAT32: 32-bit IEEE float
 * @HP_DTYPE_FLOAT64: 64-bit IEEE float
 * @HP_DTYPE_INT64: 64-bit signed integer (token ids, class targets)
 *
 * The element type of a [class@Hp.Tensor]. Elements are stored in the host's
 * byte order.
 *
 * Since: 1.0
 */
typedef enum
{
  HP_DTYPE_FLOAT32,
  HP_DTYPE_FLOAT64,
  HP_DTYPE_INT64,
} HpDType;

HP_AVAILABLE_IN_ALL
gsize         hp_dtype_get_size         (HpDType dtype);
HP_AVAILABLE_IN_ALL
gboolean      hp_dtype_is_floating      (HpDType dtype);
HP_AVAILABLE_IN_ALL
const gchar  *hp_dtype_to_string        (HpDType dtype);
HP_AVAILABLE_IN_ALL
gboolean      hp_dtype_from_string      (const gchar  *name,
                                         HpDType      *dtype,
                                         GError      **error);

G_END_DECLS
