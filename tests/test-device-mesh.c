/* test-device-mesh.c: device meshes, their communicators and slices
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every test adapts to the world it runs in (one rank alone, or 2, 3, 4
 * and 8 ranks under mpirun) and every rank checks every assertion. The
 * expected grids are worked out here from world ranks, row-major, and
 * compared with what the mesh says and with what its communicators do.
 */

#include <mpi.h>
#include <stdlib.h>

#include "hp-test-utils.h"
#include <hp-protocols/hp-mpi.h>

#define MAX_NDIM 16

static gint world_size;
static gint world_rank;

/* What a mesh should look like on this rank. */
typedef struct
{
  guint ndim;
  gint shape[MAX_NDIM];
  gint coordinate[MAX_NDIM];
  gboolean has_names;
  const gchar *names[MAX_NDIM + 1];
  gint size;
  /* the ranks of the root communicator at each position, row-major */
  gint *grid;
  /* this process's rank in the root communicator */
  gint root_rank;
} Expected;

static void
expected_clear (Expected *e)
{
  g_clear_pointer (&e->grid, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Expected, expected_clear)

static void
to_coordinate (gint        index,
               const gint *shape,
               guint       ndim,
               gint       *coordinate)
{
  for (guint i = ndim; i-- > 0;)
    {
      coordinate[i] = index % shape[i];
      index /= shape[i];
    }
}

static gint
product (const gint *shape,
         guint       ndim)
{
  gint p = 1;

  for (guint i = 0; i < ndim; i++)
    p *= shape[i];
  return p;
}

/* The sub-mesh over the dims in @kept (bit i for dim i) of a root mesh of
 * @shape, seen from the process with @root_rank; all dims for the root
 * mesh itself. Works from the definition: every root rank whose
 * coordinates outside @kept equal ours, in row-major order. */
static void
expect_mesh (Expected            *e,
             const gint          *shape,
             guint                ndim,
             const gchar * const *names,
             guint32              kept,
             gint                 root_rank)
{
  gint mine[MAX_NDIM];
  gint other[MAX_NDIM];
  gint root_size = product (shape, ndim);
  gint n = 0;

  to_coordinate (root_rank, shape, ndim, mine);
  e->ndim = 0;
  e->size = 1;
  e->root_rank = root_rank;
  e->has_names = names != NULL;
  for (guint i = 0; i < ndim; i++)
    if (kept & (1u << i))
      {
        e->shape[e->ndim] = shape[i];
        e->coordinate[e->ndim] = mine[i];
        e->names[e->ndim] = names != NULL ? names[i] : NULL;
        e->size *= shape[i];
        e->ndim++;
      }
  e->names[e->ndim] = NULL;

  e->grid = g_new (gint, e->size);
  for (gint r = 0; r < root_size; r++)
    {
      gboolean same = TRUE;

      to_coordinate (r, shape, ndim, other);
      for (guint i = 0; i < ndim; i++)
        if (!(kept & (1u << i)) && other[i] != mine[i])
          same = FALSE;
      if (same)
        e->grid[n++] = r;
    }
  g_assert_cmpint (n, ==, e->size);
}

/* @comm holds exactly @members (in rank order) and we are @my_index:
 * checked with its size and rank, with a sum of everybody's @my_value
 * and with a gather of them. */
static void
assert_comm_group (MPI_Comm    comm,
                   const gint *members,
                   gint        n_members,
                   gint        my_index,
                   gint        my_value)
{
  g_autofree gint *gathered = g_new (gint, n_members);
  MPI_Errhandler handler;
  int size = 0;
  int rank = -1;
  int sum = 0;
  int expected_sum = 0;

  g_assert_true (comm != MPI_COMM_NULL);
  g_assert_cmpint (MPI_Comm_size (comm, &size), ==, MPI_SUCCESS);
  g_assert_cmpint (size, ==, n_members);
  g_assert_cmpint (MPI_Comm_rank (comm, &rank), ==, MPI_SUCCESS);
  g_assert_cmpint (rank, ==, my_index);

  g_assert_cmpint (MPI_Comm_get_errhandler (comm, &handler), ==, MPI_SUCCESS);
  g_assert_true (handler == MPI_ERRORS_RETURN);
  MPI_Errhandler_free (&handler);

  for (gint i = 0; i < n_members; i++)
    expected_sum += members[i];
  g_assert_cmpint (MPI_Allreduce (&my_value, &sum, 1, MPI_INT, MPI_SUM, comm), ==, MPI_SUCCESS);
  g_assert_cmpint (sum, ==, expected_sum);

  g_assert_cmpint (MPI_Allgather (&my_value, 1, MPI_INT, gathered, 1, MPI_INT, comm), ==, MPI_SUCCESS);
  for (gint i = 0; i < n_members; i++)
    g_assert_cmpint (gathered[i], ==, members[i]);
}

static void
assert_mesh (HpDeviceMesh   *mesh,
             const Expected *e)
{
  const gint *shape;
  const gint *coordinate;
  const gint *ranks;
  const gchar * const *names;
  guint ndim = 0;
  gsize n_ranks = 0;
  gint my_index = -1;

  shape = hp_device_mesh_get_shape (mesh, &ndim);
  g_assert_cmpuint (ndim, ==, e->ndim);
  g_assert_cmpuint (hp_device_mesh_get_ndim (mesh), ==, e->ndim);
  for (guint i = 0; i < ndim; i++)
    g_assert_cmpint (shape[i], ==, e->shape[i]);
  g_assert_cmpint (hp_device_mesh_get_size (mesh), ==, e->size);

  names = hp_device_mesh_get_dim_names (mesh);
  if (e->has_names)
    {
      g_assert_nonnull (names);
      g_assert_true (g_strv_equal (names, e->names));
    }
  else
    g_assert_null (names);

  coordinate = hp_device_mesh_get_coordinate (mesh, &ndim);
  g_assert_cmpuint (ndim, ==, e->ndim);
  for (guint i = 0; i < ndim; i++)
    {
      g_assert_cmpint (coordinate[i], ==, e->coordinate[i]);
      g_assert_cmpint (hp_device_mesh_get_local_rank (mesh, i), ==, e->coordinate[i]);
    }

  ranks = hp_device_mesh_get_ranks (mesh, &n_ranks);
  g_assert_cmpuint (n_ranks, ==, e->size);
  for (gint i = 0; i < e->size; i++)
    {
      g_assert_cmpint (ranks[i], ==, e->grid[i]);
      if (e->grid[i] == e->root_rank)
        my_index = i;
    }
  g_assert_cmpint (hp_device_mesh_get_rank (mesh), ==, my_index);

  assert_comm_group (hp_device_mesh_get_comm (mesh), e->grid, e->size,
                     my_index, e->root_rank);

  /* dim d: the positions that match ours except on d, by coordinate d */
  for (guint d = 0; d < e->ndim; d++)
    {
      g_autofree gint *group = g_new (gint, e->shape[d]);
      gint n = 0;

      for (gint j = 0; j < e->size; j++)
        {
          gint other[MAX_NDIM];
          gboolean same = TRUE;

          to_coordinate (j, e->shape, e->ndim, other);
          for (guint i = 0; i < e->ndim; i++)
            if (i != d && other[i] != e->coordinate[i])
              same = FALSE;
          if (same)
            group[n++] = e->grid[j];
        }
      g_assert_cmpint (n, ==, e->shape[d]);

      assert_comm_group (hp_device_mesh_get_dim_comm (mesh, d), group, n,
                         e->coordinate[d], e->root_rank);
    }
}

static HpDeviceMesh *
slice_mesh (HpDeviceMesh        *mesh,
            const gchar * const *names)
{
  g_autoptr(GError) error = NULL;
  HpDeviceMesh *slice = hp_device_mesh_slice (mesh, names, &error);

  g_assert_no_error (error);
  g_assert_nonnull (slice);
  return slice;
}

/* [2, N/2] on an even world, [1, N] otherwise */
static void
shape_2d (gint *shape)
{
  shape[0] = world_size % 2 == 0 ? 2 : 1;
  shape[1] = world_size / shape[0];
}

/* [2, 2, N/4] when 4 divides N (2x2x2 on 8 ranks), [2, 1, N/2] on other
 * even worlds, [1, N, 1] on odd ones */
static void
shape_3d (gint *shape)
{
  if (world_size % 4 == 0)
    {
      shape[0] = 2;
      shape[1] = 2;
    }
  else if (world_size % 2 == 0)
    {
      shape[0] = 2;
      shape[1] = 1;
    }
  else
    {
      shape[0] = 1;
      shape[1] = world_size;
    }
  shape[2] = world_size / (shape[0] * shape[1]);
}

static void
test_shapes (void)
{
  static const gchar * const names_1d[] = { "dp", NULL };
  static const gchar * const names_2d[] = { "dp", "tp", NULL };
  const gint candidates[][2] = {
    { 2, 2 }, { 2, 4 }, { 4, 2 }, { 1, world_size }, { world_size, 1 },
  };
  const gint shape_1d[] = { world_size };
  guint n_tested = 0;

  for (guint with_names = 0; with_names < 2; with_names++)
    {
      g_autoptr(HpDeviceMesh) mesh = NULL;
      g_auto(Expected) e = { 0 };
      const gchar * const *names = with_names ? names_1d : NULL;

      mesh = hp_test_mesh (shape_1d, 1, names);
      expect_mesh (&e, shape_1d, 1, names, 0x1, world_rank);
      assert_mesh (mesh, &e);
      g_assert_cmpint (hp_device_mesh_get_rank (mesh), ==, world_rank);
    }

  for (guint i = 0; i < G_N_ELEMENTS (candidates); i++)
    for (guint with_names = 0; with_names < 2; with_names++)
      {
        g_autoptr(HpDeviceMesh) mesh = NULL;
        g_auto(Expected) e = { 0 };
        const gchar * const *names = with_names ? names_2d : NULL;
        int comparison = MPI_UNEQUAL;

        if (product (candidates[i], 2) != world_size)
          continue;

        mesh = hp_test_mesh (candidates[i], 2, names);
        expect_mesh (&e, candidates[i], 2, names, 0x3, world_rank);
        assert_mesh (mesh, &e);
        g_assert_cmpint (hp_device_mesh_get_rank (mesh), ==, world_rank);

        /* a duplicate of the world: same group, its own context */
        MPI_Comm_compare (hp_device_mesh_get_comm (mesh), MPI_COMM_WORLD, &comparison);
        g_assert_cmpint (comparison, ==, MPI_CONGRUENT);
        n_tested++;
      }

  /* 1xN and Nx1 always fit */
  g_assert_cmpuint (n_tested, >=, 4);
}

static void
test_shape_3d (void)
{
  static const gchar * const names[] = { "dp", "tp", "pp", NULL };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_auto(Expected) e = { 0 };
  gint shape[3];

  shape_3d (shape);
  mesh = hp_test_mesh (shape, 3, names);
  expect_mesh (&e, shape, 3, names, 0x7, world_rank);
  assert_mesh (mesh, &e);
}

static void
test_slice_one_dim (void)
{
  static const gchar * const names[] = { "dp", "tp", NULL };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  gint shape[2];

  shape_2d (shape);
  mesh = hp_test_mesh (shape, 2, names);

  for (guint d = 0; d < 2; d++)
    {
      const gchar * const slice_names[] = { names[d], NULL };
      g_autoptr(HpDeviceMesh) slice = slice_mesh (mesh, slice_names);
      g_auto(Expected) e = { 0 };

      expect_mesh (&e, shape, 2, names, 1u << d, world_rank);
      assert_mesh (slice, &e);

      /* no new communicator: the parent's dim comm is the slice's */
      g_assert_true (hp_device_mesh_get_dim_comm (slice, 0) == hp_device_mesh_get_dim_comm (mesh, d));
      g_assert_true (hp_device_mesh_get_comm (slice) == hp_device_mesh_get_dim_comm (mesh, d));
      g_assert_cmpint (hp_device_mesh_get_rank (slice), ==, hp_device_mesh_get_local_rank (mesh, d));
    }
}

static void
test_slice_two_of_three (void)
{
  static const gchar * const names[] = { "dp", "tp", "pp", NULL };
  static const guint pairs[][2] = { { 0, 1 }, { 0, 2 }, { 1, 2 } };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  gint shape[3];

  shape_3d (shape);
  mesh = hp_test_mesh (shape, 3, names);

  for (guint p = 0; p < G_N_ELEMENTS (pairs); p++)
    {
      const gchar * const slice_names[] = { names[pairs[p][0]], names[pairs[p][1]], NULL };
      g_autoptr(HpDeviceMesh) slice = slice_mesh (mesh, slice_names);
      g_auto(Expected) e = { 0 };

      expect_mesh (&e, shape, 3, names, (1u << pairs[p][0]) | (1u << pairs[p][1]), world_rank);
      assert_mesh (slice, &e);

      for (guint i = 0; i < 2; i++)
        g_assert_true (hp_device_mesh_get_dim_comm (slice, i) == hp_device_mesh_get_dim_comm (mesh, pairs[p][i]));
      g_assert_true (hp_device_mesh_get_comm (slice) != hp_device_mesh_get_comm (mesh));
    }
}

static void
test_slice_nested (void)
{
  static const gchar * const names[] = { "dp", "tp", "pp", NULL };
  static const gchar * const outer_names[] = { "dp", "pp", NULL };
  static const gchar * const inner_names[] = { "pp", NULL };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpDeviceMesh) outer = NULL;
  g_autoptr(HpDeviceMesh) inner = NULL;
  g_autoptr(HpDeviceMesh) direct = NULL;
  g_auto(Expected) e = { 0 };
  gint shape[3];

  shape_3d (shape);
  mesh = hp_test_mesh (shape, 3, names);
  outer = slice_mesh (mesh, outer_names);
  inner = slice_mesh (outer, inner_names);
  direct = slice_mesh (mesh, inner_names);

  /* ranks come from the root mesh through both levels */
  expect_mesh (&e, shape, 3, names, 0x4, world_rank);
  assert_mesh (inner, &e);
  g_assert_true (hp_device_mesh_equal (inner, direct));
  g_assert_true (hp_device_mesh_get_dim_comm (inner, 0) == hp_device_mesh_get_dim_comm (mesh, 2));
  g_assert_true (hp_device_mesh_get_comm (inner) == hp_device_mesh_get_dim_comm (mesh, 2));
}

static void
test_slice_all (void)
{
  static const gchar * const names[] = { "dp", "tp", NULL };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpDeviceMesh) slice = NULL;
  g_auto(Expected) e = { 0 };
  gint shape[2];

  shape_2d (shape);
  mesh = hp_test_mesh (shape, 2, names);
  slice = slice_mesh (mesh, names);

  g_assert_true (slice != mesh);
  g_assert_true (hp_device_mesh_equal (slice, mesh));
  expect_mesh (&e, shape, 2, names, 0x3, world_rank);
  assert_mesh (slice, &e);
  g_assert_true (hp_device_mesh_get_comm (slice) == hp_device_mesh_get_comm (mesh));
  for (guint d = 0; d < 2; d++)
    g_assert_true (hp_device_mesh_get_dim_comm (slice, d) == hp_device_mesh_get_dim_comm (mesh, d));
}

/* Counts MPI_Comm_free() through an attribute whose delete callback runs
 * when the communicator goes. */
static int
count_free (MPI_Comm  comm,
            int       keyval,
            void     *attribute_val,
            void     *extra_state)
{
  (*(gint *) attribute_val)++;
  return MPI_SUCCESS;
}

static void
watch_comm (MPI_Comm  comm,
            int       keyval,
            gint     *counter)
{
  g_assert_cmpint (MPI_Comm_set_attr (comm, keyval, counter), ==, MPI_SUCCESS);
}

static void
test_comm_lifetime (void)
{
  static const gchar * const names[] = { "dp", "tp", NULL };
  static const gchar * const tp_names[] = { "tp", NULL };
  static const gchar * const names_3d[] = { "dp", "tp", "pp", NULL };
  static const gchar * const dp_pp_names[] = { "dp", "pp", NULL };
  HpDeviceMesh *mesh;
  HpDeviceMesh *slice_tp;
  HpDeviceMesh *slice_all;
  HpDeviceMesh *slice_dp_pp;
  gint freed_base = 0;
  gint freed_dp = 0;
  gint freed_tp = 0;
  gint freed_split = 0;
  gint freed_3d[4] = { 0 };
  int keyval = MPI_KEYVAL_INVALID;
  int one = 1;
  int sum = 0;
  gint shape[3];

  g_assert_cmpint (MPI_Comm_create_keyval (MPI_COMM_NULL_COPY_FN, count_free, &keyval, NULL), ==, MPI_SUCCESS);

  shape_2d (shape);
  mesh = hp_test_mesh (shape, 2, names);
  slice_tp = slice_mesh (mesh, tp_names);
  slice_all = slice_mesh (mesh, names);
  watch_comm (hp_device_mesh_get_comm (mesh), keyval, &freed_base);
  watch_comm (hp_device_mesh_get_dim_comm (mesh, 0), keyval, &freed_dp);
  watch_comm (hp_device_mesh_get_dim_comm (mesh, 1), keyval, &freed_tp);

  /* the slices still use all three */
  g_object_unref (mesh);
  g_assert_cmpint (freed_base + freed_dp + freed_tp, ==, 0);

  /* the dim-tp communicator stays for slice_tp */
  g_object_unref (slice_all);
  g_assert_cmpint (freed_base, ==, 1);
  g_assert_cmpint (freed_dp, ==, 1);
  g_assert_cmpint (freed_tp, ==, 0);

  g_assert_cmpint (MPI_Allreduce (&one, &sum, 1, MPI_INT, MPI_SUM, hp_device_mesh_get_comm (slice_tp)),
                   ==, MPI_SUCCESS);
  g_assert_cmpint (sum, ==, shape[1]);

  g_object_unref (slice_tp);
  g_assert_cmpint (freed_tp, ==, 1);

  /* a slice of two of three dims owns one communicator of its own */
  shape_3d (shape);
  mesh = hp_test_mesh (shape, 3, names_3d);
  slice_dp_pp = slice_mesh (mesh, dp_pp_names);
  watch_comm (hp_device_mesh_get_comm (mesh), keyval, &freed_3d[0]);
  for (guint d = 0; d < 3; d++)
    watch_comm (hp_device_mesh_get_dim_comm (mesh, d), keyval, &freed_3d[d + 1]);
  watch_comm (hp_device_mesh_get_comm (slice_dp_pp), keyval, &freed_split);

  g_object_unref (slice_dp_pp);
  g_assert_cmpint (freed_split, ==, 1);
  for (guint i = 0; i < 4; i++)
    g_assert_cmpint (freed_3d[i], ==, 0);

  g_object_unref (mesh);
  for (guint i = 0; i < 4; i++)
    g_assert_cmpint (freed_3d[i], ==, 1);

  MPI_Comm_free_keyval (&keyval);
}

static void
assert_new_fails (const gint          *shape,
                  guint                ndim,
                  const gchar * const *names,
                  const gchar         *message)
{
  g_autoptr(GError) error = NULL;
  HpDeviceMesh *mesh = hp_device_mesh_new (shape, ndim, names, &error);

  hp_test_assert_error (mesh, &error, HP_ERROR_MESH, message);
}

static void
test_new_errors (void)
{
  static const gchar * const dup_names[] = { "dp", "dp", NULL };
  static const gchar * const empty_names[] = { "dp", "", NULL };
  static const gchar * const one_name[] = { "dp", NULL };
  static const gchar * const three_names[] = { "dp", "tp", "pp", NULL };
  static const gchar * const no_names[] = { NULL };
  const gint too_big[] = { world_size + 1 };
  const gint doubled[] = { 2, world_size };
  const gint huge[] = { 65536, 65536 };
  const gint zero[] = { world_size, 0 };
  const gint negative[] = { -2 };
  const gint wide[] = { world_size, 1 };
  const gint ones[17] = { world_size, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
  g_autofree gchar *message = NULL;
  g_autoptr(HpDeviceMesh) mesh = NULL;

  message = g_strdup_printf ("mesh shape [%d] needs %d ranks, but the communicator has %d",
                             world_size + 1, world_size + 1, world_size);
  assert_new_fails (too_big, 1, NULL, message);
  g_free (message);

  message = g_strdup_printf ("mesh shape [2, %d] needs %d ranks, but the communicator has %d",
                             world_size, 2 * world_size, world_size);
  assert_new_fails (doubled, 2, NULL, message);
  g_free (message);

  message = g_strdup_printf ("mesh shape [65536, 65536] needs more than 2147483647 ranks, "
                             "but the communicator has %d", world_size);
  assert_new_fails (huge, 2, NULL, message);
  g_free (message);

  message = g_strdup_printf ("mesh shape [%d, 0] has size 0 on dim 1, sizes must be at least 1",
                             world_size);
  assert_new_fails (zero, 2, NULL, message);
  assert_new_fails (negative, 1, NULL,
                    "mesh shape [-2] has size -2 on dim 0, sizes must be at least 1");

  assert_new_fails (wide, 0, NULL, "mesh needs from 1 to 16 dims, got 0");
  assert_new_fails (ones, 17, NULL, "mesh needs from 1 to 16 dims, got 17");

  assert_new_fails (wide, 2, dup_names, "mesh dim name 'dp' is used twice (dims 0 and 1)");
  assert_new_fails (wide, 2, empty_names, "mesh dim name 1 is empty");
  g_free (message);
  message = g_strdup_printf ("mesh shape [%d, 1] needs 2 dim names, got 1: (dp)", world_size);
  assert_new_fails (wide, 2, one_name, message);
  g_free (message);
  message = g_strdup_printf ("mesh shape [%d, 1] needs 2 dim names, got 3: (dp, tp, pp)", world_size);
  assert_new_fails (wide, 2, three_names, message);
  g_free (message);
  message = g_strdup_printf ("mesh shape [%d] needs 1 dim name, got 0: ()", world_size);
  assert_new_fails (wide, 1, no_names, message);

  /* every rank failed without communicating, so they are all here */
  g_assert_cmpint (MPI_Barrier (MPI_COMM_WORLD), ==, MPI_SUCCESS);
  mesh = hp_test_mesh (wide, 1, one_name);
  g_assert_cmpint (hp_device_mesh_get_size (mesh), ==, world_size);
}

static void
test_dim_index (void)
{
  static const gchar * const names[] = { "dp", "tp", NULL };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpDeviceMesh) unnamed = NULL;
  g_autoptr(GError) error = NULL;
  gint shape[2];

  shape_2d (shape);
  mesh = hp_test_mesh (shape, 2, names);
  g_assert_cmpint (hp_device_mesh_get_dim_index (mesh, "dp", &error), ==, 0);
  g_assert_no_error (error);
  g_assert_cmpint (hp_device_mesh_get_dim_index (mesh, "tp", &error), ==, 1);
  g_assert_no_error (error);

  g_assert_cmpint (hp_device_mesh_get_dim_index (mesh, "x", &error), ==, -1);
  g_assert_error (error, HP_ERROR, HP_ERROR_MESH);
  g_assert_cmpstr (error->message, ==, "mesh has no dim 'x' (dims: dp, tp)");
  g_clear_error (&error);

  /* names are case-sensitive */
  g_assert_cmpint (hp_device_mesh_get_dim_index (mesh, "DP", &error), ==, -1);
  g_assert_error (error, HP_ERROR, HP_ERROR_MESH);
  g_clear_error (&error);

  unnamed = hp_test_mesh (shape, 2, NULL);
  g_assert_cmpint (hp_device_mesh_get_dim_index (unnamed, "dp", &error), ==, -1);
  g_assert_error (error, HP_ERROR, HP_ERROR_MESH);
  g_assert_cmpstr (error->message, ==, "mesh has no dim 'dp' (the mesh has no dim names)");
}

static void
assert_slice_fails (HpDeviceMesh        *mesh,
                    const gchar * const *names,
                    const gchar         *message)
{
  g_autoptr(GError) error = NULL;
  HpDeviceMesh *slice = hp_device_mesh_slice (mesh, names, &error);

  hp_test_assert_error (slice, &error, HP_ERROR_MESH, message);
}

static void
test_slice_errors (void)
{
  static const gchar * const names[] = { "dp", "tp", "pp", NULL };
  static const gchar * const unknown[] = { "dp", "x", NULL };
  static const gchar * const reversed[] = { "tp", "dp", NULL };
  static const gchar * const shuffled[] = { "dp", "pp", "tp", NULL };
  static const gchar * const repeated[] = { "dp", "dp", NULL };
  static const gchar * const repeated_late[] = { "tp", "dp", "tp", NULL };
  static const gchar * const empty[] = { NULL };
  static const gchar * const dp[] = { "dp", NULL };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpDeviceMesh) unnamed = NULL;
  gint shape[3];

  shape_3d (shape);
  mesh = hp_test_mesh (shape, 3, names);
  unnamed = hp_test_mesh (shape, 3, NULL);

  assert_slice_fails (mesh, unknown, "mesh has no dim 'x' (dims: dp, tp, pp)");
  assert_slice_fails (mesh, reversed,
                      "slice names must follow the mesh's dim order (dp, tp, pp), got (tp, dp)");
  assert_slice_fails (mesh, shuffled,
                      "slice names must follow the mesh's dim order (dp, tp, pp), got (dp, pp, tp)");
  assert_slice_fails (mesh, repeated, "slice names repeat dim 'dp'");
  assert_slice_fails (mesh, repeated_late, "slice names repeat dim 'tp'");
  assert_slice_fails (mesh, empty, "slice needs at least one dim name");
  assert_slice_fails (unnamed, dp, "mesh has no dim 'dp' (the mesh has no dim names)");

  /* no rank communicated, and the mesh still works */
  g_assert_cmpint (MPI_Barrier (hp_device_mesh_get_comm (mesh)), ==, MPI_SUCCESS);
}

static gchar *
range_string (gint start,
              gint step,
              gint n)
{
  GString *s = g_string_new ("[");

  for (gint i = 0; i < n; i++)
    g_string_append_printf (s, i > 0 ? ", %d" : "%d", start + i * step);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

static void
assert_to_string (HpDeviceMesh *mesh,
                  const gchar  *expected)
{
  g_autofree gchar *s = hp_device_mesh_to_string (mesh);

  g_assert_cmpstr (s, ==, expected);
}

static void
test_to_string (void)
{
  static const gchar * const names[] = { "a", "b", NULL };
  static const gchar * const dp_tp[] = { "dp", "tp", NULL };
  static const gchar * const dp_tp_pp[] = { "dp", "tp", "pp", NULL };
  static const gchar * const a[] = { "a", NULL };
  static const gchar * const dp[] = { "dp", NULL };
  const gint shape_1d[] = { world_size };
  const gint row[] = { 1, world_size };
  const gint column[] = { world_size, 1 };
  g_autoptr(HpDeviceMesh) flat = hp_test_mesh (shape_1d, 1, NULL);
  g_autoptr(HpDeviceMesh) named_row = hp_test_mesh (row, 2, names);
  g_autoptr(HpDeviceMesh) named_column = hp_test_mesh (column, 2, names);
  g_autoptr(HpDeviceMesh) column_slice = slice_mesh (named_column, a);
  g_autofree gchar *all = range_string (0, 1, world_size);
  g_autofree gchar *expected = NULL;
  GString *columns = g_string_new ("DeviceMesh([");

  expected = g_strdup_printf ("DeviceMesh(%s)", all);
  assert_to_string (flat, expected);
  g_free (expected);

  expected = g_strdup_printf ("DeviceMesh([%s], dim_names=(a, b))", all);
  assert_to_string (named_row, expected);

  for (gint r = 0; r < world_size; r++)
    g_string_append_printf (columns, r > 0 ? ", [%d]" : "[%d]", r);
  g_string_append (columns, "], dim_names=(a, b))");
  assert_to_string (named_column, columns->str);
  g_string_free (columns, TRUE);

  g_free (expected);
  expected = g_strdup_printf ("DeviceMesh(%s, dim_names=(a))", all);
  assert_to_string (column_slice, expected);

  if (world_size % 2 == 0)
    {
      gint shape[2];
      g_autoptr(HpDeviceMesh) mesh = NULL;
      g_autoptr(HpDeviceMesh) dp_slice = NULL;
      g_autofree gchar *group = NULL;

      shape_2d (shape);
      mesh = hp_test_mesh (shape, 2, dp_tp);
      dp_slice = slice_mesh (mesh, dp);
      group = range_string (world_rank % shape[1], shape[1], 2);
      g_free (expected);
      expected = g_strdup_printf ("DeviceMesh(%s, dim_names=(dp))", group);
      assert_to_string (dp_slice, expected);
    }

  if (world_size == 4)
    {
      const gint square[] = { 2, 2 };
      g_autoptr(HpDeviceMesh) mesh = hp_test_mesh (square, 2, dp_tp);

      assert_to_string (mesh, "DeviceMesh([[0, 1], [2, 3]], dim_names=(dp, tp))");
    }

  if (world_size == 8)
    {
      const gint cube[] = { 2, 2, 2 };
      g_autoptr(HpDeviceMesh) mesh = hp_test_mesh (cube, 3, dp_tp_pp);

      assert_to_string (mesh, "DeviceMesh([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], dim_names=(dp, tp, pp))");
    }
}

static void
test_equal (void)
{
  static const gchar * const x[] = { "x", NULL };
  static const gchar * const y[] = { "y", NULL };
  static const gchar * const x_y[] = { "x", "y", NULL };
  const gint shape_1d[] = { world_size };
  const gint column[] = { world_size, 1 };
  const gint row[] = { 1, world_size };
  g_autoptr(HpDeviceMesh) a = hp_test_mesh (shape_1d, 1, x);
  g_autoptr(HpDeviceMesh) b = hp_test_mesh (shape_1d, 1, x);
  g_autoptr(HpDeviceMesh) renamed = hp_test_mesh (shape_1d, 1, y);
  g_autoptr(HpDeviceMesh) unnamed = hp_test_mesh (shape_1d, 1, NULL);
  g_autoptr(HpDeviceMesh) unnamed2 = hp_test_mesh (shape_1d, 1, NULL);
  g_autoptr(HpDeviceMesh) col = hp_test_mesh (column, 2, x_y);
  g_autoptr(HpDeviceMesh) rw = hp_test_mesh (row, 2, x_y);
  g_autoptr(HpDeviceMesh) col_x = slice_mesh (col, x);

  g_assert_true (hp_device_mesh_equal (a, a));
  g_assert_true (hp_device_mesh_equal (a, b));
  g_assert_true (hp_device_mesh_get_comm (a) != hp_device_mesh_get_comm (b));
  g_assert_true (hp_device_mesh_equal (unnamed, unnamed2));
  g_assert_false (hp_device_mesh_equal (a, renamed));
  g_assert_false (hp_device_mesh_equal (a, unnamed));
  g_assert_false (hp_device_mesh_equal (unnamed, a));
  /* [N, 1] and [1, N] differ unless N is 1 */
  g_assert_cmpint (hp_device_mesh_equal (col, rw), ==, world_size == 1);
  g_assert_false (hp_device_mesh_equal (col, a));
  /* same shape, names and ranks through a slice */
  g_assert_true (hp_device_mesh_equal (col_x, a));

  /* same shape and names, other ranks: the second half's slice of a
   * [2, N/2] mesh against a mesh over that half alone (ranks from 0) */
  if (world_size % 2 == 0)
    {
      static const gchar * const names[] = { "dp", "tp", NULL };
      static const gchar * const tp[] = { "tp", NULL };
      gint shape[2];
      const gint half_shape[1] = { world_size / 2 };
      g_autoptr(HpDeviceMesh) mesh = NULL;
      g_autoptr(HpDeviceMesh) slice = NULL;
      g_autoptr(HpDeviceMesh) half_mesh = NULL;
      g_autoptr(GError) error = NULL;
      MPI_Comm half = MPI_COMM_NULL;
      gint color = world_rank / (world_size / 2);

      shape_2d (shape);
      mesh = hp_test_mesh (shape, 2, names);
      slice = slice_mesh (mesh, tp);
      MPI_Comm_split (MPI_COMM_WORLD, color, world_rank, &half);
      half_mesh = hp_device_mesh_new_for_comm (half, half_shape, 1, tp, &error);
      g_assert_no_error (error);
      MPI_Comm_free (&half);

      if (color == 0)
        g_assert_true (hp_device_mesh_equal (slice, half_mesh));
      else
        g_assert_false (hp_device_mesh_equal (slice, half_mesh));
    }
}

static void
test_new_for_comm (void)
{
  static const gchar * const dp[] = { "dp", NULL };
  static const gchar * const dp_tp[] = { "dp", "tp", NULL };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gint *world_ranks = NULL;
  g_autofree gchar *message = NULL;
  MPI_Comm half = MPI_COMM_NULL;
  int half_size = 0;
  int half_rank = 0;
  int comparison = MPI_UNEQUAL;
  gint shape[2];

  /* even and odd world ranks; on one rank the odd half is empty */
  MPI_Comm_split (MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
  MPI_Comm_size (half, &half_size);
  MPI_Comm_rank (half, &half_rank);

  shape[0] = half_size;
  mesh = hp_device_mesh_new_for_comm (half, shape, 1, dp, &error);
  g_assert_no_error (error);
  {
    g_auto(Expected) e = { 0 };

    /* ranks of the half communicator, not of the world */
    expect_mesh (&e, shape, 1, dp, 0x1, half_rank);
    assert_mesh (mesh, &e);
  }
  MPI_Comm_compare (hp_device_mesh_get_comm (mesh), half, &comparison);
  g_assert_cmpint (comparison, ==, MPI_CONGRUENT);

  /* the dim group is this half of the world */
  world_ranks = g_new (gint, half_size);
  for (gint i = 0; i < half_size; i++)
    world_ranks[i] = world_rank % 2 + 2 * i;
  assert_comm_group (hp_device_mesh_get_dim_comm (mesh, 0), world_ranks, half_size,
                     half_rank, world_rank);

  shape[0] = half_size + 1;
  message = g_strdup_printf ("mesh shape [%d] needs %d ranks, but the communicator has %d",
                             half_size + 1, half_size + 1, half_size);
  hp_test_assert_error (hp_device_mesh_new_for_comm (half, shape, 1, dp, &error),
                        &error, HP_ERROR_MESH, message);

  /* a 2-d mesh over each half where it fits, [1, n] otherwise */
  shape[0] = half_size % 2 == 0 ? 2 : 1;
  shape[1] = half_size / shape[0];
  g_clear_object (&mesh);
  mesh = hp_device_mesh_new_for_comm (half, shape, 2, dp_tp, &error);
  g_assert_no_error (error);
  {
    g_auto(Expected) e = { 0 };

    expect_mesh (&e, shape, 2, dp_tp, 0x3, half_rank);
    assert_mesh (mesh, &e);
  }

  /* the mesh keeps its own duplicate, not the application's handle */
  MPI_Comm_free (&half);
  assert_comm_group (hp_device_mesh_get_dim_comm (mesh, 1), world_ranks + shape[1] * hp_device_mesh_get_local_rank (mesh, 0),
                     shape[1], hp_device_mesh_get_local_rank (mesh, 1), world_rank);
}

static void
test_properties (void)
{
  static const gchar * const names[] = { "dp", "tp", NULL };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpDeviceMesh) unnamed = NULL;
  g_auto(GStrv) got_names = NULL;
  guint ndim = 0;
  gint size = 0;
  gint shape[2];

  shape_2d (shape);
  mesh = hp_test_mesh (shape, 2, names);
  g_object_get (mesh, "ndim", &ndim, "size", &size, "dim-names", &got_names, NULL);
  g_assert_cmpuint (ndim, ==, 2);
  g_assert_cmpint (size, ==, world_size);
  g_assert_true (g_strv_equal ((const gchar * const *) got_names, names));
  /* a copy */
  g_assert_true ((gpointer) got_names != (gpointer) hp_device_mesh_get_dim_names (mesh));
  g_clear_pointer (&got_names, g_strfreev);

  shape[0] = world_size;
  unnamed = hp_test_mesh (shape, 1, NULL);
  g_object_get (unnamed, "ndim", &ndim, "size", &size, "dim-names", &got_names, NULL);
  g_assert_cmpuint (ndim, ==, 1);
  g_assert_cmpint (size, ==, world_size);
  g_assert_null (got_names);
}

static void
test_bare_object (void)
{
  static const gchar * const dp[] = { "dp", NULL };
  g_autoptr(HpDeviceMesh) mesh = g_object_new (HP_TYPE_DEVICE_MESH, NULL);
  g_autoptr(GError) error = NULL;
  const gint *ranks;
  gsize n_ranks = 0;

  g_assert_cmpuint (hp_device_mesh_get_ndim (mesh), ==, 1);
  g_assert_cmpint (hp_device_mesh_get_size (mesh), ==, 1);
  ranks = hp_device_mesh_get_ranks (mesh, &n_ranks);
  g_assert_cmpuint (n_ranks, ==, 1);
  g_assert_cmpint (ranks[0], ==, 0);
  g_assert_null (hp_device_mesh_get_dim_names (mesh));
  g_assert_true (hp_device_mesh_get_comm (mesh) == MPI_COMM_NULL);
  g_assert_true (hp_device_mesh_get_dim_comm (mesh, 0) == MPI_COMM_NULL);
  assert_to_string (mesh, "DeviceMesh([0])");
  hp_test_assert_error (hp_device_mesh_slice (mesh, dp, &error), &error, HP_ERROR_MESH,
                        "mesh has no dim 'dp' (the mesh has no dim names)");
}

static void
test_after_finalize (void)
{
  if (g_test_subprocess ())
    {
      const gint shape[] = { 1 };
      g_autoptr(GError) error = NULL;
      HpDeviceMesh *mesh = hp_test_mesh (shape, 1, NULL);
      HpDeviceMesh *late;

      g_assert_cmpint (MPI_Finalize (), ==, MPI_SUCCESS);

      /* the handles are gone with MPI; dropping the mesh must not touch them */
      g_object_unref (mesh);

      late = hp_device_mesh_new (shape, 1, NULL, &error);
      hp_test_assert_error (late, &error, HP_ERROR_MPI, "MPI has already been finalized");
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

  world_size = hp_get_world_size ();
  world_rank = hp_get_world_rank ();

  g_test_add_func ("/device-mesh/shapes", test_shapes);
  g_test_add_func ("/device-mesh/shape-3d", test_shape_3d);
  g_test_add_func ("/device-mesh/slice/one-dim", test_slice_one_dim);
  g_test_add_func ("/device-mesh/slice/two-of-three", test_slice_two_of_three);
  g_test_add_func ("/device-mesh/slice/nested", test_slice_nested);
  g_test_add_func ("/device-mesh/slice/all", test_slice_all);
  g_test_add_func ("/device-mesh/comm-lifetime", test_comm_lifetime);
  g_test_add_func ("/device-mesh/new-errors", test_new_errors);
  g_test_add_func ("/device-mesh/dim-index", test_dim_index);
  g_test_add_func ("/device-mesh/slice/errors", test_slice_errors);
  g_test_add_func ("/device-mesh/to-string", test_to_string);
  g_test_add_func ("/device-mesh/equal", test_equal);
  g_test_add_func ("/device-mesh/new-for-comm", test_new_for_comm);
  g_test_add_func ("/device-mesh/properties", test_properties);
  g_test_add_func ("/device-mesh/bare-object", test_bare_object);
  if (!under_mpirun)
    g_test_add_func ("/device-mesh/after-finalize", test_after_finalize);

  return g_test_run ();
}
