/* test-collectives-default.c: without any environment variable, ranks
 * that disagree get an error on every rank instead of a hang or a wrong
 * number
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone (suite unit) and under mpirun (suite mpi). Each case is one
 * that used to hang or to return garbage without HP_DEBUG=collectives:
 * rank 0 does something different from the others. Every rank must fail
 * with HP_ERROR_MPI naming the collective (and the op being dispatched,
 * where there is one), no rank may return data, and the tensors
 * involved must be as before. The cases that the agreement before a
 * collective catches must fail at once, without waiting for the
 * deadline (which stays at its default there); only the rank that waits
 * for ranks that never come needs the deadline, which that case sets
 * short. On one rank nothing can differ: the same calls succeed.
 */

#include <string.h>

#include <hp-protocols/hp-mpi.h>

#include "hp-test-utils.h"

#define SHORT_TIMEOUT "2"

static gint world_size;
static gint world_rank;

/* Asserts that @error is the mismatch error, that it contains every one
 * of the NULL-terminated @parts, and that it came without waiting for a
 * deadline (a minute is far below the default one); clears it */
static void
assert_caught (GError  **error,
               gint64    start,
               ...)
{
  gdouble waited = (g_get_monotonic_time () - start) / (gdouble) G_USEC_PER_SEC;
  va_list parts;
  const gchar *part;

  g_assert_error (*error, HP_ERROR, HP_ERROR_MPI);
  g_test_message ("%s", (*error)->message);
  g_assert_true (g_str_has_prefix ((*error)->message, "collective mismatch on DeviceMesh("));
  va_start (parts, start);
  while ((part = va_arg (parts, const gchar *)) != NULL)
    if (strstr ((*error)->message, part) == NULL)
      {
        g_autofree gchar *msg = g_strdup_printf ("error message '%s' lacks '%s'",
                                                 (*error)->message, part);
        g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC, msg);
      }
  va_end (parts);
  g_assert_cmpfloat (waited, <, 60.0);
  g_clear_error (error);
}

/* One redistribution, to R on rank 0 and to S(1) elsewhere */
static void
test_targets_differ (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  const gint64 shape[] = { 2, 2 * world_size };
  g_autoptr(HpTensor) local = hp_test_counting (HP_DTYPE_FLOAT64, shape, 2);
  g_autoptr(HpDTensor) dt = hp_test_local_dtensor (local, mesh, "(S(0))");
  gint64 start = g_get_monotonic_time ();
  GError *error = hp_test_redistribute_expecting_error (dt, world_rank == 0 ? "(R)" : "(S(1))");
  g_autofree gchar *others = hp_test_other_ranks ();
  g_autofree gchar *target = g_strdup_printf ("target placement: R on rank 0, S(1) on %s", others);

  if (world_size > 1)
    assert_caught (&error, start, "MPI_Allgatherv in redistribute on rank 0", target, NULL);
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
  gint64 start = g_get_monotonic_time ();
  gdouble value = 2.0;

  if (world_rank == 0)
    error = hp_test_redistribute_expecting_error (dt, "(R)");
  if (world_size == 1)
    return;
  if (world_rank != 0)
    {
      g_assert_false (hp_data_parallel_average_scalar (mesh, &value, &error));
      g_assert_cmpfloat (value, ==, 2.0);
    }
  assert_caught (&error, start, "operation: MPI_Allgatherv in redistribute on rank 0, "
                 "MPI_Allreduce in average_scalar on ", NULL);
}

/* Rank 0 multiplies two DTensors, the others add them: the inputs'
 * redistributions name the two ops */
static void
test_ops_differ (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(GError) error = NULL;
  /* a [2n, 2n] split by rows, b [2n, 2n] by columns */
  const gint64 rows[] = { 2, 2 * world_size };
  const gint64 columns[] = { 2 * world_size, 2 };
  g_autoptr(HpTensor) a_local = hp_test_counting (HP_DTYPE_FLOAT64, rows, 2);
  g_autoptr(HpTensor) b_local = hp_test_counting (HP_DTYPE_FLOAT64, columns, 2);
  g_autoptr(HpDTensor) a = hp_test_local_dtensor (a_local, mesh, "(S(0))");
  g_autoptr(HpDTensor) b = hp_test_local_dtensor (b_local, mesh, "(S(1))");
  g_autoptr(HpTensor) out = NULL;
  gint64 start = g_get_monotonic_time ();

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
  assert_caught (&error, start, " for matmul on rank 0", " for add on ", NULL);
  hp_test_assert_placements (HP_TENSOR (a), "(S(0))");
  hp_test_assert_placements (HP_TENSOR (b), "(S(1))");
}

/* Local shards [2, 4] on rank 0 and [2, 3] elsewhere, then a gather */
static void
test_local_shapes_differ (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  const gint64 shape[] = { 2, world_rank == 0 ? 4 : 3 };
  g_autoptr(HpTensor) local = hp_test_counting (HP_DTYPE_FLOAT64, shape, 2);
  g_autoptr(HpDTensor) dt = hp_test_local_dtensor (local, mesh, "(S(0))");
  gint64 start = g_get_monotonic_time ();
  GError *error = hp_test_redistribute_expecting_error (dt, "(R)");
  g_autofree gchar *others = hp_test_other_ranks ();
  g_autofree gchar *shapes = g_strdup_printf ("shape: [%d, 4] on rank 0, [%d, 3] on %s",
                                              2 * world_size, 2 * world_size, others);

  if (world_size > 1)
    assert_caught (&error, start, "MPI_Allgatherv in redistribute", shapes, NULL);
}

/* P(sum) on rank 0, P(max) elsewhere, then an all-reduce */
static void
test_reduce_ops_differ (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  const gint64 shape[] = { 3 };
  g_autoptr(HpTensor) local = hp_test_counting (HP_DTYPE_FLOAT64, shape, 1);
  g_autoptr(HpDTensor) dt = hp_test_local_dtensor (local, mesh,
                                                   world_rank == 0 ? "(P(sum))" : "(P(max))");
  gint64 start = g_get_monotonic_time ();
  GError *error = hp_test_redistribute_expecting_error (dt, "(R)");
  g_autofree gchar *others = hp_test_other_ranks ();
  g_autofree gchar *placements = g_strdup_printf ("placements: (P(sum)) on rank 0, (P(max)) on %s",
                                                  others);

  if (world_size > 1)
    assert_caught (&error, start, "MPI_Allreduce in redistribute", placements, NULL);
}

/* float32 on rank 0, float64 elsewhere */
static void
test_dtypes_differ (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  const gint64 shape[] = { 3 };
  g_autoptr(HpTensor) local = hp_test_counting (world_rank == 0 ? HP_DTYPE_FLOAT32 : HP_DTYPE_FLOAT64,
                                                shape, 1);
  g_autoptr(HpDTensor) dt = hp_test_local_dtensor (local, mesh, "(S(0))");
  gint64 start = g_get_monotonic_time ();
  GError *error = hp_test_redistribute_expecting_error (dt, "(R)");
  g_autofree gchar *others = hp_test_other_ranks ();
  g_autofree gchar *dtypes = g_strdup_printf ("dtype: float32 on rank 0, float64 on %s", others);

  if (world_size > 1)
    assert_caught (&error, start, "MPI_Allgatherv in redistribute", dtypes, NULL);
}

/* Rank 0 asks for a 1-d mesh, the others for a 2-d one of the same size */
static void
test_mesh_shapes_differ (void)
{
  g_autoptr(GError) error = NULL;
  const gint flat[] = { world_size };
  const gint grid[] = { 1, world_size };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  gint64 start = g_get_monotonic_time ();
  gdouble waited;

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

  waited = (g_get_monotonic_time () - start) / (gdouble) G_USEC_PER_SEC;
  g_assert_null (mesh);
  g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
  g_assert_true (g_str_has_prefix (error->message, "collective mismatch on the communicator of a "
                                                   "new mesh at MPI_Comm_dup in hp_device_mesh_new: "
                                                   "the ranks differ in shape: "));
  g_assert_cmpfloat (waited, <, 60.0);
}

/* Rank 0 gathers; the others make no collective at all until it has
 * given up at the deadline, then one that meets what it left behind.
 * Both sides fail, naming the collective they were at; the mesh's
 * communicator is of no use afterwards, as the message says. */
static void
test_collective_never_reached (void)
{
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(GError) error = NULL;
  const gint64 shape[] = { 2 };
  g_autoptr(HpTensor) local = hp_test_counting (HP_DTYPE_FLOAT64, shape, 1);
  g_autoptr(HpDTensor) dt = hp_test_local_dtensor (local, mesh, "(S(0))");
  gint64 start = g_get_monotonic_time ();
  gdouble value = 1.0, waited;

  g_setenv ("HP_COLLECTIVE_TIMEOUT", SHORT_TIMEOUT, TRUE);
  if (world_rank == 0)
    {
      error = hp_test_redistribute_expecting_error (dt, "(R)");
      if (world_size == 1)
        {
          g_unsetenv ("HP_COLLECTIVE_TIMEOUT");
          return;
        }
      g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
      g_test_message ("%s", error->message);
      g_assert_nonnull (strstr (error->message, "waited " SHORT_TIMEOUT " s for the other ranks "
                                                "to reach MPI_Allgatherv in redistribute"));
      g_assert_nonnull (strstr (error->message, "the communicator cannot be used afterwards"));
    }

  MPI_Barrier (MPI_COMM_WORLD);
  if (world_rank != 0)
    {
      g_assert_false (hp_data_parallel_average_scalar (mesh, &value, &error));
      g_assert_cmpfloat (value, ==, 1.0);
      g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
      g_test_message ("%s", error->message);
      g_assert_nonnull (strstr (error->message, "MPI_Allreduce in average_scalar"));
    }
  waited = (g_get_monotonic_time () - start) / (gdouble) G_USEC_PER_SEC;
  g_assert_cmpfloat (waited, >=, 2.0);
  g_assert_cmpfloat (waited, <, 60.0);
  g_unsetenv ("HP_COLLECTIVE_TIMEOUT");
}

/* Ranks that agree pass through every kind of collective */
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
  g_autoptr(HpDTensor) partial = NULL;
  g_autoptr(HpDTensor) reduced = NULL;
  g_autoptr(HpTensor) reduced_local = NULL;
  const gdouble sum[] = { 0.0, world_size, 2.0 * world_size };
  const gint64 three[] = { 3 };
  g_autoptr(HpTensor) ones = hp_test_counting (HP_DTYPE_FLOAT64, three, 1);
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

  partial = hp_test_local_dtensor (ones, mesh, "(P(sum))");
  {
    g_autoptr(GPtrArray) to = hp_placements_new_from_string ("(R)", NULL);

    reduced = hp_dtensor_redistribute (partial, to, &error);
  }
  g_assert_no_error (error);
  reduced_local = hp_dtensor_get_local (reduced);
  hp_test_assert_values (reduced_local, sum, G_N_ELEMENTS (sum), three, 1, 0.0, 0.0);

  g_assert_true (hp_data_parallel_average_scalar (mesh, &value, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (value, ==, (world_size - 1) / 2.0);
}

int
main (int   argc,
      char *argv[])
{
  /* the default mode: whatever the caller's environment says */
  g_unsetenv ("HP_DEBUG");
  g_unsetenv ("HP_COLLECTIVE_TIMEOUT");
  hp_test_init_world (&argc, &argv);
  world_size = hp_get_world_size ();
  world_rank = hp_get_world_rank ();

  g_test_add_func ("/collectives-default/agreeing-ranks", test_agreeing_ranks);
  g_test_add_func ("/collectives-default/targets-differ", test_targets_differ);
  g_test_add_func ("/collectives-default/skipped-collective", test_skipped_collective);
  g_test_add_func ("/collectives-default/ops-differ", test_ops_differ);
  g_test_add_func ("/collectives-default/local-shapes-differ", test_local_shapes_differ);
  g_test_add_func ("/collectives-default/reduce-ops-differ", test_reduce_ops_differ);
  g_test_add_func ("/collectives-default/dtypes-differ", test_dtypes_differ);
  g_test_add_func ("/collectives-default/mesh-shapes-differ", test_mesh_shapes_differ);
  /* last: it leaves the communicator of its mesh out of step */
  g_test_add_func ("/collectives-default/never-reached", test_collective_never_reached);

  return g_test_run ();
}
