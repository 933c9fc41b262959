/* test-collectives-debug.c: HP_DEBUG=collectives turns mismatched
 * collectives into errors on every rank instead of hangs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone (suite unit) and under mpirun (suite mpi). Each case makes
 * rank 0 do something different from the others: a different shape,
 * placement, dtype, mesh dim or operation, a collective the others skip,
 * or one they never reach. Every rank must then fail with HP_ERROR_MPI
 * and the same message, naming exactly the fields that differ, and the
 * tensors involved must be as before. On one rank nothing can differ:
 * the same calls succeed.
 *
 * main() turns the mode on before the library reads HP_DEBUG, and sets
 * a short timeout for the rank that waits for ranks that never come.
 */

#include <string.h>

#include <hp-protocols/hp-mpi.h>

#include "hp-test-utils.h"

#define TIMEOUT_SECONDS "2"

static gint world_size;
static gint world_rank;

/* Asserts that @error is the mismatch error and that its message ends
 * with "the ranks differ in " @differences, which it frees */
static void
assert_mismatch (GError **error,
                 gchar   *differences)
{
  g_autofree gchar *owned = differences;
  g_autofree gchar *suffix = g_strconcat ("the ranks differ in ", differences, NULL);

  g_assert_error (*error, HP_ERROR, HP_ERROR_MPI);
  g_test_message ("%s", (*error)->message);
  g_assert_true (g_str_has_prefix ((*error)->message, "collective mismatch on DeviceMesh("));
  if (!g_str_has_suffix ((*error)->message, suffix))
    {
      g_autofree gchar *msg = g_strdup_printf ("error message '%s' does not end with '%s'",
                                               (*error)->message, suffix);
      g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC, msg);
    }
  g_clear_error (error);
}

/* On one rank the result is the whole tensor; on more @dt is unchanged
 * after the error, which is returned */
static GError *
replicate_expecting_error (HpDTensor *dt)
{
  guint mesh_ndim = hp_device_mesh_get_ndim (hp_dtensor_get_mesh (dt));

  return hp_test_redistribute_expecting_error (dt, mesh_ndim == 1 ? "(R)" : "(R, R)");
}

static void
test_shapes_differ (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  const gint64 shape[] = { 2, world_rank == 0 ? 8 : 6 };
  g_autoptr(HpTensor) local = hp_test_counting (HP_DTYPE_FLOAT64, shape, 2);
  g_autoptr(HpDTensor) dt = hp_test_local_dtensor (local, mesh, "(S(0))");
  GError *error = replicate_expecting_error (dt);

  if (error != NULL)
    {
      g_autofree gchar *others = hp_test_other_ranks ();

      assert_mismatch (&error, g_strdup_printf ("shape: [%d, 8] on rank 0, [%d, 6] on %s",
                                                2 * world_size, 2 * world_size, others));
    }
}

static void
test_placements_differ (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  /* the same global [2n, 2n], split by rows on rank 0, by columns elsewhere */
  const gint64 rows[] = { 2, 2 * world_size };
  const gint64 columns[] = { 2 * world_size, 2 };
  g_autoptr(HpTensor) local = hp_test_counting (HP_DTYPE_FLOAT64, world_rank == 0 ? rows : columns, 2);
  g_autoptr(HpDTensor) dt = hp_test_local_dtensor (local, mesh, world_rank == 0 ? "(S(0))" : "(S(1))");
  GError *error = replicate_expecting_error (dt);

  if (world_size == 1)
    return;
  {
    g_autofree gchar *others = hp_test_other_ranks ();

    assert_mismatch (&error, g_strdup_printf ("placements: (S(0)) on rank 0, (S(1)) on %s",
                                              others));
  }
}

static void
test_dtypes_differ (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  const gint64 shape[] = { 3 };
  g_autoptr(HpTensor) local = hp_test_counting (world_rank == 0 ? HP_DTYPE_FLOAT32 : HP_DTYPE_FLOAT64,
                                        shape, 1);
  g_autoptr(HpDTensor) dt = hp_test_local_dtensor (local, mesh, "(S(0))");
  GError *error = replicate_expecting_error (dt);

  if (error != NULL)
    {
      g_autofree gchar *others = hp_test_other_ranks ();

      assert_mismatch (&error, g_strdup_printf ("dtype: float32 on rank 0, float64 on %s", others));
    }
}

/* A 2-d mesh [2, n/2]: rank 0 gathers over mesh dim 0, the others over
 * mesh dim 1 */
static void
test_mesh_dims_differ (void)
{
  const gint mesh_shape[] = { 2, world_size / 2 };
  const gchar * const names[] = { "dp", "tp", NULL };
  g_autoptr(HpDeviceMesh) mesh = hp_test_mesh (mesh_shape, 2, names);
  const gint64 local_shape[] = { world_rank == 0 ? world_size / 2 : 2, 4 };
  g_autoptr(HpTensor) local = hp_test_counting (HP_DTYPE_FLOAT64, local_shape, 2);
  g_autoptr(HpDTensor) dt = hp_test_local_dtensor (local, mesh, world_rank == 0 ? "(S(0), R)" : "(R, S(0))");
  GError *error = replicate_expecting_error (dt);
  g_autofree gchar *others = hp_test_other_ranks ();

  assert_mismatch (&error, g_strdup_printf ("mesh dim: 0 on rank 0, 1 on %s; "
                                            "placements: (S(0), R) on rank 0, (R, S(0)) on %s",
                                            others, others));
}

/* Rank 0 averages a number over the mesh while the others gather a
 * DTensor: the operations differ */
static void
test_operations_differ (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(GError) error = NULL;
  const gint64 shape[] = { 2 };
  g_autoptr(HpTensor) local = hp_test_counting (HP_DTYPE_FLOAT64, shape, 1);
  g_autoptr(HpDTensor) dt = hp_test_local_dtensor (local, mesh, "(S(0))");
  g_autofree gchar *others = NULL;
  gdouble value = 1.0 + world_rank;

  if (world_rank == 0)
    {
      gboolean ok = hp_data_parallel_average_scalar (mesh, &value, &error);

      if (world_size == 1)
        {
          g_assert_no_error (error);
          g_assert_true (ok);
          g_assert_cmpfloat (value, ==, 1.0);
          return;
        }
      g_assert_false (ok);
      g_assert_cmpfloat (value, ==, 1.0);
    }
  else
    error = replicate_expecting_error (dt);

  others = hp_test_other_ranks ();
  assert_mismatch (&error,
                   g_strdup_printf ("operation: MPI_Allreduce in average_scalar on rank 0, "
                                    "MPI_Allgatherv in redistribute on %s; "
                                    "mesh dim: all on rank 0, 0 on %s; "
                                    "shape: none on rank 0, [%d] on %s; "
                                    "placements: none on rank 0, (S(0)) on %s; "
                                    "target placement: none on rank 0, R on %s",
                                    others, others, 2 * world_size,
                                    others, others, others));
}

/* Rank 0 multiplies two DTensors, the others add them: the messages
 * name the op whose inputs are being redistributed */
static void
test_ops_differ (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(GError) error = NULL;
  const gint64 rows[] = { 2, 2 * world_size };
  const gint64 columns[] = { 2 * world_size, 2 };
  g_autoptr(HpTensor) a_local = hp_test_counting (HP_DTYPE_FLOAT64, rows, 2);
  g_autoptr(HpTensor) b_local = hp_test_counting (HP_DTYPE_FLOAT64, columns, 2);
  g_autoptr(HpDTensor) a = hp_test_local_dtensor (a_local, mesh, "(S(0))");
  g_autoptr(HpDTensor) b = hp_test_local_dtensor (b_local, mesh, "(S(1))");
  g_autoptr(HpTensor) out = NULL;
  g_autofree gchar *others = NULL;

  if (world_rank == 0)
    out = hp_tensor_matmul (HP_TENSOR (a), HP_TENSOR (b), &error);
  else
    out = hp_tensor_add (HP_TENSOR (a), HP_TENSOR (b), &error);
  if (world_size == 1)
    {
      g_assert_no_error (error);
      g_assert_nonnull (out);
      return;
    }

  g_assert_null (out);
  others = hp_test_other_ranks ();
  assert_mismatch (&error,
                   g_strdup_printf ("operation: MPI_Allgatherv in redistribute for matmul on rank 0, "
                                    "MPI_Alltoallv in redistribute for add on %s; "
                                    "target placement: R on rank 0, S(0) on %s", others, others));
}

/* The others skip a gather that rank 0 makes and go on to average a
 * number: the skipped collective meets the next one */
static void
test_skipped_collective (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(GError) error = NULL;
  const gint64 shape[] = { 2 };
  g_autoptr(HpTensor) local = hp_test_counting (HP_DTYPE_FLOAT64, shape, 1);
  g_autoptr(HpDTensor) dt = hp_test_local_dtensor (local, mesh, "(S(0))");
  gdouble value = 2.0;

  if (world_rank == 0)
    error = replicate_expecting_error (dt);
  if (world_size == 1)
    return;
  if (world_rank != 0)
    {
      g_assert_false (hp_data_parallel_average_scalar (mesh, &value, &error));
      g_assert_cmpfloat (value, ==, 2.0);
    }
  g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
  g_assert_nonnull (strstr (error->message, "operation: MPI_Allgatherv in redistribute on rank 0, "
                                            "MPI_Allreduce in average_scalar on "));
}

/* Rank 0 gathers on a mesh the others never use again: it gives up
 * after the timeout instead of waiting for ever */
static void
test_collective_never_reached (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(GError) error = NULL;
  const gint64 shape[] = { 2 };
  g_autoptr(HpTensor) local = hp_test_counting (HP_DTYPE_FLOAT64, shape, 1);
  g_autoptr(HpDTensor) dt = hp_test_local_dtensor (local, mesh, "(S(0))");
  gint64 start = g_get_monotonic_time ();
  gdouble value = 0.0;

  if (world_rank == 0)
    {
      gdouble waited;

      error = replicate_expecting_error (dt);
      if (world_size == 1)
        return;
      waited = (g_get_monotonic_time () - start) / (gdouble) G_USEC_PER_SEC;
      g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
      g_assert_nonnull (strstr (error->message, "waited " TIMEOUT_SECONDS " s for the other ranks "
                                                "to reach MPI_Allgatherv in redistribute"));
      g_assert_cmpfloat (waited, >=, 2.0);
      g_assert_cmpfloat (waited, <, 60.0);
    }

  /* The others come late, with something else: they meet rank 0's
   * abandoned agreement and fail too, which leaves the mesh's
   * communicator in step for the rest of the program */
  MPI_Barrier (MPI_COMM_WORLD);
  if (world_rank != 0)
    {
      g_assert_false (hp_data_parallel_average_scalar (mesh, &value, &error));
      g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
      g_assert_nonnull (strstr (error->message, "operation: MPI_Allgatherv in redistribute on rank 0"));
    }
}

/* Rank 0 asks for a 1-d mesh, the others for a 2-d one of the same size */
static void
test_mesh_shapes_differ (void)
{
  g_autoptr(GError) error = NULL;
  const gint flat[] = { world_size };
  const gint grid[] = { 1, world_size };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autofree gchar *others = NULL;
  g_autofree gchar *expected = NULL;

  if (world_rank == 0)
    mesh = hp_device_mesh_new (flat, 1, NULL, &error);
  else
    mesh = hp_device_mesh_new (grid, 2, NULL, &error);
  if (world_size == 1)
    {
      g_assert_no_error (error);
      g_assert_nonnull (mesh);
      return;
    }

  others = hp_test_other_ranks ();
  expected = g_strdup_printf ("collective mismatch on the communicator of a new mesh at MPI_Comm_dup in "
                              "hp_device_mesh_new: the ranks "
                              "differ in shape: [%d] on rank 0, [1, %d] on %s",
                              world_size, world_size, others);
  g_assert_null (mesh);
  g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
  g_assert_cmpstr (error->message, ==, expected);
}

/* Ranks that agree pass, on meshes of every shape this size allows */
static void
test_agreeing_ranks (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(GError) error = NULL;
  const gint64 shape[] = { 2 * world_size + 1, 3 };
  g_autoptr(HpTensor) whole = hp_test_counting (HP_DTYPE_FLOAT64, shape, 2);
  const gchar *steps[] = { "(S(0))", "(S(1))", "(R)", "(S(1))", "(R)" };
  g_autoptr(HpDTensor) dt = NULL;
  g_autoptr(HpTensor) full = NULL;
  g_autoptr(GPtrArray) first = hp_placements_new_from_string ("(R)", NULL);
  gdouble value = world_rank;

  dt = hp_dtensor_distribute (whole, mesh, first, 0, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      g_autoptr(GPtrArray) to = hp_placements_new_from_string (steps[i], NULL);
      g_autoptr(HpDTensor) next = hp_dtensor_redistribute (dt, to, &error);

      g_assert_no_error (error);
      g_set_object (&dt, next);
    }
  full = hp_dtensor_full_tensor (dt, &error);
  g_assert_no_error (error);
  hp_test_assert_identical (full, whole);

  g_assert_true (hp_data_parallel_average_scalar (mesh, &value, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (value, ==, (world_size - 1) / 2.0);
}

int
main (int   argc,
      char *argv[])
{
  g_setenv ("HP_DEBUG", "collectives", TRUE);
  g_setenv ("HP_COLLECTIVE_TIMEOUT", TIMEOUT_SECONDS, TRUE);
  hp_test_init_world (&argc, &argv);
  world_size = hp_get_world_size ();
  world_rank = hp_get_world_rank ();

  g_test_add_func ("/collectives-debug/agreeing-ranks", test_agreeing_ranks);
  g_test_add_func ("/collectives-debug/shapes-differ", test_shapes_differ);
  g_test_add_func ("/collectives-debug/placements-differ", test_placements_differ);
  g_test_add_func ("/collectives-debug/dtypes-differ", test_dtypes_differ);
  /* a second mesh dim of size above 1 needs an even size from 4 up */
  if (world_size >= 4 && world_size % 2 == 0)
    g_test_add_func ("/collectives-debug/mesh-dims-differ", test_mesh_dims_differ);
  g_test_add_func ("/collectives-debug/mesh-shapes-differ", test_mesh_shapes_differ);
  g_test_add_func ("/collectives-debug/operations-differ", test_operations_differ);
  g_test_add_func ("/collectives-debug/ops-differ", test_ops_differ);
  g_test_add_func ("/collectives-debug/skipped-collective", test_skipped_collective);
  g_test_add_func ("/collectives-debug/never-reached", test_collective_never_reached);

  return g_test_run ();
}
