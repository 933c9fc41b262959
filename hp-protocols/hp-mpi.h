/* hp-mpi.h: the MPI side of hp-protocols, for C programs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Not read by the introspection scanner: bindings have no MPI_Comm.
 * Include it after, or instead of, <hp-protocols/hp-protocols.h>.
 *
 * Like the umbrella header, this one belongs to no layer of the library:
 * the layers include the headers it gathers, such as
 * hp-device-mesh-mpi.h (distributed).
 */

#pragma once

#include <mpi.h>

#include "hp-protocols.h"

#define HP_MPI_INSIDE

#include "hp-device-mesh-mpi.h"

#undef HP_MPI_INSIDE
