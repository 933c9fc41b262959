/* test-dtensor-select.c: topk, max, min, argmax, argmin, cumsum and the
 * samplers on DTensors, against the single-rank ops
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi). Every op runs on a plain
 * tensor and on DTensors laid out every way the meshes allow: [n] over
 * all ranks and, on 4 and 8 ranks, 2 x n/2, with the selected dim
 * sharded (the dim of 7 is uneven on 2, 3, 4 and 8 ranks and leaves
 * empty shards on 8) or not. The values and indices must be the
 * single-rank ones to the bit, the output placements as the rules say,
 * and the gradient of sum (values * w) the single-rank gradient.
 */

#include <math.h>
#include <string.h>

#include "hp-test-utils.h"

static gint world_size;

typedef struct
{
  gint shape[2];
  guint ndim;
  HpDeviceMesh *mesh;
} Mesh;

static Mesh meshes[2];
static guint n_meshes;

typedef enum { OP_TOPK, OP_MAX, OP_MIN, OP_ARGMAX, OP_ARGMIN, OP_CUMSUM } Op;

typedef struct
{
  Op op;
  guint k;
  gint dim;
  /* largest for topk, keepdim for the others */
  gboolean flag;
} Call;

static const gchar *
op_name (Op op)
{
  static const gchar *names[] = { "topk", "max", "min", "argmax", "argmin", "cumsum" };

  return names[op];
}

/* The values (NULL for argmax and argmin) and the indices (NULL for
 * cumsum) of @call on @x */
static void
run (const Call *c,
     HpTensor   *x,
     HpTensor  **values,
     HpTensor  **indices)
{
  g_autoptr(GError) error = NULL;

  *values = *indices = NULL;
  switch (c->op)
    {
    case OP_TOPK:
      *values = hp_tensor_topk (x, c->k, c->dim, c->flag, indices, &error);
      break;
    case OP_MAX:
      *values = hp_tensor_max (x, c->dim, c->flag, indices, &error);
      break;
    case OP_MIN:
      *values = hp_tensor_min (x, c->dim, c->flag, indices, &error);
      break;
    case OP_ARGMAX:
      *indices = hp_tensor_argmax (x, c->dim, c->flag, &error);
      break;
    case OP_ARGMIN:
      *indices = hp_tensor_argmin (x, c->dim, c->flag, &error);
      break;
    case OP_CUMSUM:
      *values = hp_tensor_cumsum (x, c->dim, &error);
      break;
    }
  g_assert_no_error (error);
}

/* The placements the results must have, from the rules: a shard of the
 * selected dim gives Replicate (cumsum gathers it), a shard of another
 * dim stays, one lower past a dim that the results drop */
static gchar *
expected_placements (const Call    *c,
                     gchar * const *texts,
                     guint          mesh_ndim,
                     guint          ndim)
{
  guint dim = c->dim < 0 ? (guint) (c->dim + (gint) ndim) : (guint) c->dim;
  gboolean drops = c->op != OP_TOPK && c->op != OP_CUMSUM && !c->flag;
  GString *out = g_string_new ("(");

  for (guint d = 0; d < mesh_ndim; d++)
    {
      gint k = texts[d][0] == 'S' ? (gint) g_ascii_strtoll (texts[d] + 2, NULL, 10) : -1;

      if (d > 0)
        g_string_append (out, ", ");
      if (k < 0 || (guint) k == dim)
        g_string_append (out, "R");
      else
        g_string_append_printf (out, "S(%d)", drops && (guint) k > dim ? k - 1 : k);
    }
  g_string_append_c (out, ')');
  return g_string_free (out, FALSE);
}

static HpTensor *
full (HpTensor *t)
{
  g_autoptr(GError) error = NULL;
  HpTensor *whole = hp_dtensor_full_tensor (HP_DTENSOR (t), &error);

  g_assert_no_error (error);
  return whole;
}

/* sum (values * w) and its backward */
static void
backward (HpTensor *values,
          HpTensor *w)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) weighted = hp_tensor_mul (values, w, &error);
  g_autoptr(HpTensor) loss = hp_tensor_sum_all (weighted, &error);

  g_assert_no_error (error);
  hp_tensor_backward (loss, NULL, &error);
  g_assert_no_error (error);
}

static void
check (const Mesh  *m,
       const Call  *c,
       HpTensor    *global,
       const gchar *layout)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) texts = g_strsplit (layout, ",", -1);
  g_autoptr(GPtrArray) placements = hp_placements_new_from_string (layout, &error);
  gboolean floating = hp_tensor_get_dtype (global) != HP_DTYPE_INT64;
  g_autoptr(HpTensor) x = hp_tensor_detach (global);
  g_autoptr(HpTensor) dx = NULL;
  g_autoptr(HpTensor) values = NULL;
  g_autoptr(HpTensor) indices = NULL;
  g_autoptr(HpTensor) dvalues = NULL;
  g_autoptr(HpTensor) dindices = NULL;
  g_autofree gchar *want = NULL;

  g_assert_no_error (error);
  g_test_message ("%s k %u dim %d flag %d on (%s)", op_name (c->op), c->k, c->dim, c->flag, layout);
  if (floating)
    hp_tensor_set_requires_grad (x, TRUE);
  run (c, x, &values, &indices);

  dx = HP_TENSOR (hp_dtensor_distribute (global, m->mesh, placements, -1, &error));
  g_assert_no_error (error);
  if (floating)
    hp_tensor_set_requires_grad (dx, TRUE);
  run (c, dx, &dvalues, &dindices);

  want = expected_placements (c, texts, m->ndim, hp_tensor_get_ndim (global));
  if (values != NULL)
    {
      g_autoptr(HpTensor) whole = full (dvalues);

      hp_test_assert_placements (dvalues, want);
      hp_test_assert_identical (whole, values);
    }
  if (indices != NULL)
    {
      g_autoptr(HpTensor) whole = full (dindices);

      hp_test_assert_placements (dindices, want);
      g_assert_false (hp_tensor_get_requires_grad (dindices));
      hp_test_assert_identical (whole, indices);
    }

  if (floating && values != NULL)
    {
      guint ndim;
      const gint64 *shape = hp_tensor_get_shape (values, &ndim);
      g_autoptr(HpTensor) w = hp_tensor_new_randn (hp_tensor_get_dtype (values), shape, ndim, 77);
      g_autoptr(HpTensor) dwhole = full (dvalues);
      g_autoptr(HpTensor) grad = NULL;

      backward (values, w);
      backward (dwhole, w);
      g_assert_nonnull (hp_tensor_get_grad (dx));
      grad = full (hp_tensor_get_grad (dx));
      hp_test_assert_close (grad, hp_tensor_get_grad (x), 1e-12, 1e-12);
    }
}

/* The layouts of a tensor of @ndim dims on @m: every mesh dim Replicate
 * or a shard of any dim */
static GPtrArray *
layouts (const Mesh *m,
         guint       ndim)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);

  for (gint a = -1; a < (gint) ndim; a++)
    {
      g_autofree gchar *first = a < 0 ? g_strdup ("R") : g_strdup_printf ("S(%d)", a);

      if (m->ndim == 1)
        g_ptr_array_add (out, g_strdup (first));
      else
        for (gint b = -1; b < (gint) ndim; b++)
          g_ptr_array_add (out, b < 0 ? g_strdup_printf ("%s,R", first)
                                      : g_strdup_printf ("%s,S(%d)", first, b));
    }
  return out;
}

/* Small integers, many of them equal, and a NaN if @nan */
static HpTensor *
tied (HpDType       dtype,
      const gint64 *shape,
      guint         ndim,
      gboolean      nan)
{
  gint64 n = 1;
  g_autofree gdouble *v = NULL;

  for (guint d = 0; d < ndim; d++)
    n *= shape[d];
  v = g_new (gdouble, n);
  for (gint64 i = 0; i < n; i++)
    v[i] = (gdouble) ((i * 7 + 3) % 5) - 2.0;
  if (nan)
    {
      v[n / 2] = NAN;
      v[n - 1] = NAN;
    }
  return hp_test_tensor (dtype, v, n, shape, ndim);
}

static void
check_all (HpTensor *x)
{
  guint ndim = hp_tensor_get_ndim (x);

  for (guint mi = 0; mi < n_meshes; mi++)
    {
      g_autoptr(GPtrArray) list = layouts (&meshes[mi], ndim);

      for (guint l = 0; l < list->len; l++)
        for (gint dim = -(gint) ndim; dim < (gint) ndim; dim++)
          {
            guint d = dim < 0 ? (guint) (dim + (gint) ndim) : (guint) dim;
            gint64 size = hp_tensor_get_shape (x, NULL)[d];
            const gchar *layout = g_ptr_array_index (list, l);

            for (int flag = 0; flag < 2; flag++)
              {
                guint ks[] = { 0, 1, 3, (guint) size };

                for (gsize i = 0; i < G_N_ELEMENTS (ks); i++)
                  if (ks[i] <= size)
                    check (&meshes[mi], &(Call) { OP_TOPK, ks[i], dim, flag }, x, layout);
                for (Op op = OP_MAX; op <= OP_ARGMIN; op++)
                  check (&meshes[mi], &(Call) { op, 0, dim, flag }, x, layout);
              }
            check (&meshes[mi], &(Call) { OP_CUMSUM, 0, dim, FALSE }, x, layout);
          }
    }
}

static void
test_float64 (void)
{
  g_autoptr(HpTensor) x = tied (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 7), FALSE);
  g_autoptr(HpTensor) y = hp_tensor_new_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 7, 4), 5);

  check_all (x);
  check_all (y);
}

static void
test_nan (void)
{
  g_autoptr(HpTensor) x = tied (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 7), TRUE);

  check_all (x);
}

static void
test_other_dtypes (void)
{
  g_autoptr(HpTensor) f = tied (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (7, 3), TRUE);
  g_autoptr(HpTensor) ids = tied (HP_DTYPE_INT64, HP_TEST_SHAPE (3, 7), FALSE);

  check_all (f);
  check_all (ids);
}

/* The samplers gather their input: every rank draws the single-rank ids */
static void
test_samplers (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) logits = hp_tensor_new_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 7), 3);
  g_autoptr(HpTensor) p = hp_tensor_softmax (logits, -1, &error);
  g_autoptr(HpTensor) want = hp_tensor_sample_from_logits (logits, 11, 40, &error);
  g_autoptr(HpTensor) want_p = hp_tensor_sample_from_probabilities (p, 11, 40, &error);

  g_assert_no_error (error);
  hp_test_assert_identical (want, want_p);
  for (guint mi = 0; mi < n_meshes; mi++)
    {
      g_autoptr(GPtrArray) list = layouts (&meshes[mi], 2);

      for (guint l = 0; l < list->len; l++)
        {
          const gchar *layout = g_ptr_array_index (list, l);
          g_autoptr(GPtrArray) placements = hp_placements_new_from_string (layout, &error);
          g_autoptr(HpDTensor) dl = hp_dtensor_distribute (logits, meshes[mi].mesh, placements, -1, &error);
          g_autoptr(HpDTensor) dp = hp_dtensor_distribute (p, meshes[mi].mesh, placements, -1, &error);
          g_autoptr(HpTensor) got = hp_tensor_sample_from_logits (HP_TENSOR (dl), 11, 40, &error);
          g_autoptr(HpTensor) got_p = hp_tensor_sample_from_probabilities (HP_TENSOR (dp), 11, 40, &error);
          g_autoptr(HpTensor) local = NULL;
          g_autoptr(HpTensor) local_p = NULL;

          g_assert_no_error (error);
          hp_test_assert_placements (got, meshes[mi].ndim == 1 ? "(R)" : "(R, R)");
          hp_test_assert_placements (got_p, meshes[mi].ndim == 1 ? "(R)" : "(R, R)");
          /* every rank holds the whole result */
          local = hp_dtensor_get_local (HP_DTENSOR (got));
          local_p = hp_dtensor_get_local (HP_DTENSOR (got_p));
          hp_test_assert_identical (local, want);
          hp_test_assert_identical (local_p, want);
        }
    }
}

/* cumsum is linear: a Partial(sum) input stays Partial; a selection
 * reduces it first */
static void
test_partial (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = tied (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 7), FALSE);
  g_autoptr(HpTensor) zeros = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 7));
  g_autoptr(GPtrArray) placements = hp_placements_new_from_string ("P(sum)", &error);
  /* rank 0 holds x, the others zeros: the sum is x exactly */
  g_autoptr(HpDTensor) dx = hp_dtensor_new_from_local (hp_get_world_rank () == 0 ? x : zeros,
                                                       meshes[0].mesh, placements,
                                                       HP_TEST_SHAPE (3, 7), FALSE, &error);
  g_autoptr(HpTensor) sums = hp_tensor_cumsum (x, 1, &error);
  g_autoptr(HpTensor) dsums = hp_tensor_cumsum (HP_TENSOR (dx), 1, &error);
  g_autoptr(HpTensor) top_idx = NULL;
  g_autoptr(HpTensor) dtop_idx = NULL;
  g_autoptr(HpTensor) top = hp_tensor_topk (x, 3, 1, TRUE, &top_idx, &error);
  g_autoptr(HpTensor) dtop = hp_tensor_topk (HP_TENSOR (dx), 3, 1, TRUE, &dtop_idx, &error);
  g_autoptr(HpTensor) whole_sums = NULL;
  g_autoptr(HpTensor) whole_top = NULL;
  g_autoptr(HpTensor) whole_idx = NULL;

  g_assert_no_error (error);
  hp_test_assert_placements (dsums, "(P(sum))");
  whole_sums = full (dsums);
  hp_test_assert_identical (whole_sums, sums);
  hp_test_assert_placements (dtop, "(R)");
  whole_top = full (dtop);
  whole_idx = full (dtop_idx);
  hp_test_assert_identical (whole_top, top);
  hp_test_assert_identical (whole_idx, top_idx);
}

/* Bad input fails on every rank alike, before any communication */
static void
test_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = tied (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 7), FALSE);
  g_autoptr(GPtrArray) placements = hp_placements_new_from_string ("S(1)", &error);
  g_autoptr(HpDTensor) dx = hp_dtensor_distribute (x, meshes[0].mesh, placements, -1, &error);
  g_autoptr(HpTensor) ids = hp_tensor_new_zeros (HP_DTYPE_INT64, HP_TEST_SHAPE (3, 7));
  g_autoptr(HpDTensor) dids = hp_dtensor_distribute (ids, meshes[0].mesh, placements, -1, &error);

  g_assert_no_error (error);
  hp_test_assert_error (hp_tensor_topk (HP_TENSOR (dx), 8, 1, TRUE, NULL, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "topk: k 8 is more than the 7 elements of dim 1");
  hp_test_assert_error (hp_tensor_argmax (HP_TENSOR (dx), 2, FALSE, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "argmax: dim 2 is out of range");
  hp_test_assert_error (hp_tensor_cumsum (HP_TENSOR (dx), -3, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "cumsum: dim -3 is out of range");
  hp_test_assert_error (hp_tensor_sample_from_probabilities (HP_TENSOR (dids), 1, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "sample_from_probabilities: needs a floating point tensor");
}

int
main (int   argc,
      char *argv[])
{
  int status;

  hp_test_init_world (&argc, &argv);
  world_size = hp_get_world_size ();

  meshes[0] = (Mesh) { { world_size, 0 }, 1, NULL };
  meshes[0].mesh = hp_test_mesh (meshes[0].shape, 1, NULL);
  n_meshes = 1;
  if (world_size == 4 || world_size == 8)
    {
      meshes[1] = (Mesh) { { 2, world_size / 2 }, 2, NULL };
      meshes[1].mesh = hp_test_mesh (meshes[1].shape, 2, NULL);
      n_meshes = 2;
    }

  g_test_add_func ("/dtensor-select/float64", test_float64);
  g_test_add_func ("/dtensor-select/nan", test_nan);
  g_test_add_func ("/dtensor-select/other-dtypes", test_other_dtypes);
  g_test_add_func ("/dtensor-select/samplers", test_samplers);
  g_test_add_func ("/dtensor-select/partial", test_partial);
  g_test_add_func ("/dtensor-select/bad-input", test_bad_input);

  status = g_test_run ();

  for (guint m = 0; m < n_meshes; m++)
    g_clear_object (&meshes[m].mesh);
  return status;
}
