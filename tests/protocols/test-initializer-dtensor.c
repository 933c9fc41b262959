/* test-initializer-dtensor.c: initialising DTensors in place
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi). Each rank fills its local
 * tensor; the result must be exactly the block of the plain tensor
 * filled with the same initialiser and seed, for replicated, sharded and
 * unevenly sharded layouts on 1-D and 2-D meshes. The expected blocks
 * come from the torch.chunk reference of the test utilities, not from
 * the library's layout code.
 */

#include <string.h>

#include "hp-test-utils.h"

static gint world_size;

typedef struct
{
  gint shape[2];
  guint ndim;
} MeshShape;

static HpDeviceMesh *
make_mesh (const MeshShape *ms)
{
  const gchar * const names_1d[] = { "tp", NULL };
  const gchar * const names_2d[] = { "dp", "tp", NULL };

  return hp_test_mesh (ms->shape, ms->ndim, ms->ndim == 2 ? names_2d : names_1d);
}

/* The block this rank holds: mesh dims in order cut the tensor dim they
 * shard into torch.chunk pieces */
static void
expected_block (const gint64        *shape,
                guint                ndim,
                const gchar * const *texts,
                HpDeviceMesh        *mesh,
                gint64              *offsets,
                gint64              *lengths)
{
  guint mesh_ndim;
  const gint *mesh_shape = hp_device_mesh_get_shape (mesh, &mesh_ndim);
  const gint *coordinate = hp_device_mesh_get_coordinate (mesh, NULL);

  for (guint k = 0; k < ndim; k++)
    {
      offsets[k] = 0;
      lengths[k] = shape[k];
    }
  for (guint e = 0; e < mesh_ndim; e++)
    {
      gint dim;
      gint64 piece_offset, piece_length;

      if (texts[e][0] != 'S')
        continue;
      dim = strcmp (texts[e], "S(-1)") == 0 ? (gint) ndim - 1 : texts[e][2] - '0';
      hp_test_chunk (lengths[dim], mesh_shape[e], coordinate[e], &piece_offset, &piece_length);
      offsets[dim] += piece_offset;
      lengths[dim] = piece_length;
    }
}

static void
check_case (HpInitializer       *init,
            HpDType              dtype,
            const gint64        *shape,
            guint                ndim,
            const MeshShape     *ms,
            const gchar * const *texts,
            guint64              seed)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = make_mesh (ms);
  g_autoptr(GPtrArray) placements = hp_test_placements (texts, ms->ndim);
  g_autoptr(HpTensor) whole = hp_tensor_new_full (dtype, shape, ndim, -7.0);
  g_autoptr(HpTensor) blank = hp_tensor_new_full (dtype, shape, ndim, -7.0);
  g_autoptr(HpDTensor) dt = NULL;
  g_autoptr(HpTensor) full = NULL;
  g_autofree gchar *init_text = hp_initializer_to_string (init);
  g_autofree gchar *placement_text = hp_placements_to_string (placements);
  gint64 offsets[HP_TENSOR_MAX_NDIM], lengths[HP_TENSOR_MAX_NDIM];
  gsize n_expected, n_local;
  g_autofree gdouble *expected = NULL;
  g_autofree gdouble *local = NULL;
  g_autoptr(HpTensor) local_tensor = NULL;

  g_test_message ("%s on %s, mesh %d x %d, placements %s", init_text, hp_dtype_to_string (dtype),
                  ms->shape[0], ms->ndim == 2 ? ms->shape[1] : 1, placement_text);

  g_assert_true (hp_initializer_apply (init, whole, seed, &error));
  g_assert_no_error (error);

  dt = hp_dtensor_distribute (blank, mesh, placements, -1, &error);
  g_assert_no_error (error);
  hp_tensor_set_requires_grad (HP_TENSOR (dt), hp_dtype_is_floating (dtype));
  g_assert_true (hp_initializer_apply (init, HP_TENSOR (dt), seed, &error));
  g_assert_no_error (error);
  g_assert_true (hp_tensor_is_leaf (HP_TENSOR (dt)));
  g_assert_true (hp_tensor_get_requires_grad (HP_TENSOR (dt)) == hp_dtype_is_floating (dtype));

  /* this rank's block, value for value */
  local_tensor = hp_dtensor_get_local (dt);
  expected_block (shape, ndim, texts, mesh, offsets, lengths);
  hp_test_assert_shape (local_tensor, lengths, ndim);
  expected = hp_test_region_values (whole, offsets, lengths, &n_expected);
  local = hp_tensor_to_float64_array (local_tensor, &n_local);
  g_assert_cmpuint (n_local, ==, n_expected);
  for (gsize i = 0; i < n_local; i++)
    g_assert_cmpfloat (local[i], ==, expected[i]);

  /* and the whole tensor, gathered */
  full = hp_dtensor_full_tensor (dt, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_allclose (full, whole, 0.0, 0.0));
}

static GPtrArray *
initializers (void)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_object_unref);

  g_ptr_array_add (out, hp_initializer_new_normal (0.5, 2.0));
  g_ptr_array_add (out, hp_initializer_new_trunc_normal (0.0, 1.0, -1.5, 1.0));
  g_ptr_array_add (out, hp_initializer_new_uniform (-3.0, 3.0));
  g_ptr_array_add (out, hp_initializer_new_depth_scaled_normal (0.02, 2));
  g_ptr_array_add (out, hp_initializer_new_constant (3.25));
  return out;
}

static void
test_one_dim_mesh (void)
{
  static const gint64 shapes[][2] = { { 7, 5 }, { 3, 11 }, { 8, 8 }, { 2, 3 } };
  static const gchar * const layouts[] = { "R", "S(0)", "S(1)", "S(-1)" };
  MeshShape ms = { { world_size, 0 }, 1 };
  g_autoptr(GPtrArray) inits = initializers ();
  guint64 seed = 11;

  for (guint i = 0; i < inits->len; i++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      for (guint l = 0; l < G_N_ELEMENTS (layouts); l++)
        {
          const gchar *texts[] = { layouts[l] };

          check_case (g_ptr_array_index (inits, i), (i + s + l) % 2 ? HP_DTYPE_FLOAT32 : HP_DTYPE_FLOAT64,
                      shapes[s], 2, &ms, texts, seed++);
        }

  /* 1-D and 3-D tensors */
  {
    const gchar *s0[] = { "S(0)" };
    const gchar *s2[] = { "S(2)" };

    check_case (g_ptr_array_index (inits, 0), HP_DTYPE_FLOAT64, (const gint64[]) { 13 }, 1, &ms, s0, 5);
    check_case (g_ptr_array_index (inits, 1), HP_DTYPE_FLOAT32, (const gint64[]) { 2, 3, 5 }, 3, &ms,
                s2, 6);
  }
}

static void
test_two_dim_mesh (void)
{
  static const gchar * const layouts[][2] = {
    { "S(0)", "S(1)" }, { "S(1)", "S(0)" }, { "S(0)", "S(0)" }, { "S(1)", "S(1)" },
    { "R", "S(1)" }, { "S(0)", "R" }, { "R", "R" },
  };
  static const gint64 shapes[][2] = { { 9, 7 }, { 4, 6 }, { 1, 5 } };
  g_autoptr(GPtrArray) inits = initializers ();
  g_autoptr(GArray) meshes = g_array_new (FALSE, FALSE, sizeof (MeshShape));
  guint64 seed = 101;

  {
    MeshShape row = { { 1, world_size }, 2 };
    MeshShape column = { { world_size, 1 }, 2 };

    g_array_append_val (meshes, row);
    g_array_append_val (meshes, column);
    if (world_size % 2 == 0 && world_size >= 4)
      {
        MeshShape a = { { 2, world_size / 2 }, 2 };
        MeshShape b = { { world_size / 2, 2 }, 2 };

        g_array_append_val (meshes, a);
        g_array_append_val (meshes, b);
      }
  }

  for (guint m = 0; m < meshes->len; m++)
    for (guint i = 0; i < inits->len; i++)
      for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
        for (guint l = 0; l < G_N_ELEMENTS (layouts); l++)
          check_case (g_ptr_array_index (inits, i), (m + i + l) % 2 ? HP_DTYPE_FLOAT32 : HP_DTYPE_FLOAT64,
                      shapes[s], 2, &g_array_index (meshes, MeshShape, m), layouts[l], seed++);
}

static void
test_int64 (void)
{
  g_autoptr(HpInitializer) ones = hp_initializer_new_ones ();
  g_autoptr(HpInitializer) constant = hp_initializer_new_constant (-4.0);
  MeshShape ms = { { world_size, 0 }, 1 };
  const gchar *s0[] = { "S(0)" };
  const gchar *r[] = { "R" };

  check_case (ones, HP_DTYPE_INT64, (const gint64[]) { 5, 2 }, 2, &ms, s0, 1);
  check_case (constant, HP_DTYPE_INT64, (const gint64[]) { 3, 3 }, 2, &ms, r, 1);
}

static void
test_errors (void)
{
  g_autoptr(GError) error = NULL;
  MeshShape ms = { { world_size, 0 }, 1 };
  g_autoptr(HpDeviceMesh) mesh = make_mesh (&ms);
  const gchar *partial_text[] = { "P(sum)" };
  const gchar *s0_text[] = { "S(0)" };
  g_autoptr(GPtrArray) partial = hp_test_placements (partial_text, 1);
  g_autoptr(GPtrArray) s0 = hp_test_placements (s0_text, 1);
  g_autoptr(HpInitializer) normal = hp_initializer_new_normal (0, 1);
  g_autoptr(HpInitializer) zeros = hp_initializer_new_zeros ();
  g_autoptr(HpTensor) local = hp_tensor_new_full (HP_DTYPE_FLOAT64, (const gint64[]) { 2, 3 }, 2, 5.0);
  g_autoptr(HpTensor) whole = hp_tensor_new_full (HP_DTYPE_FLOAT64, (const gint64[]) { 6, 3 }, 2, 5.0);
  g_autoptr(HpDTensor) summed = hp_dtensor_new_from_local (local, mesh, partial, NULL, 0, FALSE, &error);
  g_autoptr(HpDTensor) history = NULL;
  g_autoptr(HpTensor) summed_local = NULL;
  gsize n;
  g_autofree gdouble *values = NULL;

  g_assert_no_error (error);

  /* Partial: refused for every kind, the local tensor untouched */
  hp_test_assert_error (GINT_TO_POINTER (hp_initializer_apply (normal, HP_TENSOR (summed), 1, &error)),
                        &error, HP_ERROR_PLACEMENT,
                        "HpInitializer normal(mean=0, std=1): cannot initialise a Partial DTensor "
                        "(placements (P(sum)))");
  hp_test_assert_error (GINT_TO_POINTER (hp_initializer_apply (zeros, HP_TENSOR (summed), 1, &error)),
                        &error, HP_ERROR_PLACEMENT,
                        "HpInitializer zeros: cannot initialise a Partial DTensor (placements (P(sum)))");
  summed_local = hp_dtensor_get_local (summed);
  values = hp_tensor_to_float64_array (summed_local, &n);
  for (gsize i = 0; i < n; i++)
    g_assert_cmpfloat (values[i], ==, 5.0);

  /* a DTensor with gradient history (distributed from a tensor that
   * requires grad) is refused */
  hp_tensor_set_requires_grad (whole, TRUE);
  history = hp_dtensor_distribute (whole, mesh, s0, -1, &error);
  g_assert_no_error (error);
  g_assert_false (hp_tensor_is_leaf (HP_TENSOR (history)));
  hp_test_assert_error (GINT_TO_POINTER (hp_initializer_apply (normal, HP_TENSOR (history), 1, &error)),
                        &error, HP_ERROR_STATE,
                        "HpInitializer normal(mean=0, std=1): cannot initialise a tensor that has "
                        "gradient history (a non-leaf, the result of an op); initialise a leaf such as "
                        "a parameter");
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init_world (&argc, &argv);
  world_size = hp_get_world_size ();

  g_test_add_func ("/initializer-dtensor/one-dim-mesh", test_one_dim_mesh);
  g_test_add_func ("/initializer-dtensor/two-dim-mesh", test_two_dim_mesh);
  g_test_add_func ("/initializer-dtensor/int64", test_int64);
  g_test_add_func ("/initializer-dtensor/errors", test_errors);

  return g_test_run ();
}
