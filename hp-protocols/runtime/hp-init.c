/* hp-init.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdlib.h>

#include <gmodule.h>

#include "hp-error.h"
#include "hp-init.h"
#include "hp-mpi-private.h"


gboolean
_hp_mpi_check (int          mpi_code,
               const gchar *what,
               GError     **error)
{
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;

  if (mpi_code == MPI_SUCCESS)
    return TRUE;

  if (MPI_Error_string (mpi_code, message, &length) != MPI_SUCCESS)
    g_snprintf (message, sizeof message, "MPI error code %d", mpi_code);

  g_set_error (error, HP_ERROR, HP_ERROR_MPI, "%s failed: %s", what, message);
  return FALSE;
}

static void
finalize_owned_mpi (void)
{
  int finalized = 0;

  MPI_Finalized (&finalized);
  if (!finalized)
    MPI_Finalize ();
}

/* Open MPI loads its components with dlopen() and expects the symbols of
 * libmpi to be global. A host that loads us with RTLD_LOCAL (Python, gjs
 * through GObject introspection) hides them, so the library is opened
 * again with global binding before MPI starts. */
static void
make_mpi_symbols_global (void)
{
  static const gchar * const names[] = { "libmpi.so.40", "libmpi.so.12", "libmpi.so" };

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      GModule *module = g_module_open (names[i], G_MODULE_BIND_LAZY);

      if (module != NULL)
        {
          g_module_make_resident (module);
          return;
        }
    }
}

/**
 * hp_init:
 * @error: return location for a [struct@GLib.Error]
 *
 * Starts the MPI runtime if nobody has started it yet, with
 * `MPI_Init_thread()` at `MPI_THREAD_FUNNELED`. Calling it again, or
 * after the application initialised MPI itself, does nothing. When
 * hp-protocols started MPI it also finalises it when the process exits.
 *
 * A program started without `mpirun` runs as a world of one rank.
 * Device meshes call this function themselves; call it early to see
 * MPI start-up errors in one place.
 *
 * Returns: %TRUE on success, %FALSE with @error set if MPI failed to start
 *
 * Since: 1.0
 */
gboolean
hp_init (GError **error)
{
  int initialized = 0;
  int finalized = 0;
  int provided = 0;

  /* MPI_Initialized() stays true after MPI_Finalize(), so ask this first */
  MPI_Finalized (&finalized);
  if (finalized)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_MPI,
                           "MPI has already been finalized");
      return FALSE;
    }

  MPI_Initialized (&initialized);
  if (initialized)
    return TRUE;

  make_mpi_symbols_global ();

  if (!_hp_mpi_check (MPI_Init_thread (NULL, NULL, MPI_THREAD_FUNNELED, &provided),
                      "MPI_Init_thread", error))
    return FALSE;

  MPI_Comm_set_errhandler (MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  atexit (finalize_owned_mpi);

  return TRUE;
}

/**
 * hp_get_world_rank:
 *
 * Gets the rank of this process in `MPI_COMM_WORLD`, starting MPI with
 * [func@Hp.init] if needed. If MPI cannot start, the process counts as rank 0
 * of a world of one.
 *
 * Returns: the world rank
 *
 * Since: 1.0
 */
gint
hp_get_world_rank (void)
{
  int rank = 0;

  if (!hp_init (NULL))
    return 0;

  MPI_Comm_rank (MPI_COMM_WORLD, &rank);
  return rank;
}

/**
 * hp_get_world_size:
 *
 * Gets the number of processes in `MPI_COMM_WORLD`, starting MPI with
 * [func@Hp.init] if needed. If MPI cannot start, the world has one rank.
 *
 * Returns: the world size
 *
 * Since: 1.0
 */
gint
hp_get_world_size (void)
{
  int size = 1;

  if (!hp_init (NULL))
    return 1;

  MPI_Comm_size (MPI_COMM_WORLD, &size);
  return size;
}
