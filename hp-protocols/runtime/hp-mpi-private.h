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

/* Requests started ahead and waited for later, moved on while ops run
 * (hp-mpi-progress.c) */
void     _hp_mpi_progress_add    (MPI_Request *request);
void     _hp_mpi_progress_remove (MPI_Request *request);
void     _hp_mpi_progress        (void);

G_END_DECLS
