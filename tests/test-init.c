/* test-init.c: starting MPI, the world, and finalisation at exit
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Run alone it checks the one-rank world and, in subprocesses, that MPI
 * started by the application is left to it. Under mpirun (suite mpi) it
 * checks the world, and it returns from main() without MPI_Finalize():
 * mpirun fails the job unless hp-protocols, which started MPI, finalises
 * it at exit.
 */

#include <mpi.h>
#include <stdlib.h>

#include "hp-test-utils.h"

static void
test_world (void)
{
  g_autoptr(GError) error = NULL;
  const gchar *env_size = g_getenv ("OMPI_COMM_WORLD_SIZE");
  const gchar *env_rank = g_getenv ("OMPI_COMM_WORLD_RANK");
  int initialized = 0;

  g_assert_true (hp_init (&error));
  g_assert_no_error (error);
  g_assert_true (hp_init (&error));
  g_assert_no_error (error);

  MPI_Initialized (&initialized);
  g_assert_true (initialized);
  g_assert_cmpint (hp_get_world_size (), ==, env_size ? atoi (env_size) : 1);
  g_assert_cmpint (hp_get_world_rank (), ==, env_rank ? atoi (env_rank) : 0);
}

static void
test_foreign_mpi_left_alone (void)
{
  if (g_test_subprocess ())
    {
      int provided = 0;
      int finalized = 0;

      g_assert_cmpint (MPI_Init_thread (NULL, NULL, MPI_THREAD_FUNNELED, &provided), ==, MPI_SUCCESS);
      g_assert_true (hp_init (NULL));
      g_assert_cmpint (hp_get_world_size (), ==, 1);
      /* the application owns MPI and finalises it itself */
      g_assert_cmpint (MPI_Finalize (), ==, MPI_SUCCESS);
      MPI_Finalized (&finalized);
      g_assert_true (finalized);
      exit (0);
    }

  g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_init_after_finalize (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(GError) error = NULL;
      int provided = 0;

      MPI_Init_thread (NULL, NULL, MPI_THREAD_FUNNELED, &provided);
      MPI_Finalize ();
      g_assert_false (hp_init (&error));
      g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
      g_assert_cmpstr (error->message, ==, "MPI has already been finalized");
      /* the world then counts as one rank */
      g_assert_cmpint (hp_get_world_size (), ==, 1);
      g_assert_cmpint (hp_get_world_rank (), ==, 0);
      exit (0);
    }

  g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

int
main (int   argc,
      char *argv[])
{
  gboolean under_mpirun = g_getenv ("OMPI_COMM_WORLD_SIZE") != NULL;

  hp_test_init (&argc, &argv);

  g_test_add_func ("/init/world", test_world);
  if (!under_mpirun)
    {
      g_test_add_func ("/init/foreign-mpi-left-alone", test_foreign_mpi_left_alone);
      g_test_add_func ("/init/init-after-finalize", test_init_after_finalize);
    }

  return g_test_run ();
}
