/* hp-error.h: the hp-protocols error domain
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
 * HP_ERROR:
 *
 * The error domain of every error reported by hp-protocols.
 */
#define HP_ERROR (hp_error_quark ())

/**
 * HpError:
 * @HP_ERROR_INVALID_ARGUMENT: an argument has a value the function does not
 *   accept (a dimension out of range, a wrong dtype, a bad string)
 * @HP_ERROR_SHAPE: tensor shapes do not fit together
 * @HP_ERROR_PLACEMENT: placements do not fit the tensor, the mesh or the
 *   operation
 * @HP_ERROR_MESH: a device mesh is malformed or does not fit the world
 * @HP_ERROR_CONFIG: a configuration is invalid
 * @HP_ERROR_STATE: the object is not in a state that allows the call
 * @HP_ERROR_NOT_SUPPORTED: the operation is not supported
 * @HP_ERROR_IO: reading or writing a file failed
 * @HP_ERROR_FORMAT: a file or string is not in the expected format
 * @HP_ERROR_MPI: an MPI call failed or ranks disagree
 *
 * Error codes of the [HP_ERROR][error@Hp.Error] domain.
 *
 * Since: 1.0
 */
typedef enum
{
  HP_ERROR_INVALID_ARGUMENT,
  HP_ERROR_SHAPE,
  HP_ERROR_PLACEMENT,
  HP_ERROR_MESH,
  HP_ERROR_CONFIG,
  HP_ERROR_STATE,
  HP_ERROR_NOT_SUPPORTED,
  HP_ERROR_IO,
  HP_ERROR_FORMAT,
  HP_ERROR_MPI,
} HpError;

HP_AVAILABLE_IN_ALL
GQuark hp_error_quark (void);

G_END_DECLS
