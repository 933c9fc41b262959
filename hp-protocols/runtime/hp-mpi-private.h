/* hp-mpi-private.h: MPI helpers shared inside the library
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <mpi.h>
#include <glib.h>

G_BEGIN_DECLS

gboolean _hp_mpi_check (int          mpi_code,
                        const gchar *what,
                        GError     **error);

G_END_DECLS
