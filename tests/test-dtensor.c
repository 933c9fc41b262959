/* test-dtensor.c: distribute, new_from_local and every redistribution
 * against the single-rank tensor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi). The data are small integers in
 * float64, so every reduction is exact and results are compared with ==.
 * The expected parts are computed here from the spec's chunk formula,
 * independently of the library's layout code.
 */

#include <math.h>
#include <string.h>

#include <hp-protocols/hp-mpi.h>

#include "hp-test-utils.h"

#define N_KINDS 6
static const gchar * const placement_texts[N_KINDS] = { "R", "S(0)", "S(1)", "S(-1)", "P(sum)", "P(max)" };

static gint world_size;
static gint world_rank;

typedef struct
{
  gint shape[2];
  guint ndim;
} MeshShape;

/* The meshes this world size allows: [n], and 2 x n/2, n/2 x 2 */
static GArray *
mesh_shapes (void)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (MeshShape));
  MeshShape one = { { world_size, 0 }, 1 };

  g_array_append_val (out, one);
  if (world_size % 2 == 0 && world_size >= 4)
    {
      MeshShape a = { { 2, world_size / 2 }, 2 };
      MeshShape b = { { world_size / 2, 2 }, 2 };

      g_array_append_val (out, a);
      g_array_append_val (out, b);
    }
  if (world_size == 2)
    {
      MeshShape a = { { 1, 2 }, 2 };
      g_array_append_val (out, a);
    }
  return out;
}

static HpDeviceMesh *
make_mesh (const MeshShape *ms)
{
  const gchar * const names[] = { "dp", "tp", NULL };

  return hp_test_mesh (ms->shape, ms->ndim, ms->ndim == 2 ? names : NULL);
}

/* Shard dims of @texts, normalised for @ndim; -1 where not a shard */
static gint
shard_dim (const gchar *text,
           guint        ndim)
{
  if (text[0] != 'S')
    return -1;
  return strcmp (text, "S(-1)") == 0 ? (gint) ndim - 1 : text[2] - '0';
}

static void
expected_region (const gint64  *shape,
                 guint          ndim,
                 const gchar  **texts,
                 const MeshShape *ms,
                 const gint    *coordinate,
                 gint64        *offsets,
                 gint64        *lengths)
{
  for (guint k = 0; k < ndim; k++)
    {
      offsets[k] = 0;
      lengths[k] = shape[k];
      for (guint d = 0; d < ms->ndim; d++)
        if (shard_dim (texts[d], ndim) == (gint) k)
          {
            gint64 off, len;

            hp_test_chunk (lengths[k], ms->shape[d], coordinate[d], &off, &len);
            offsets[k] += off;
            lengths[k] = len;
          }
    }
}

static gdouble
global_value (gint64 i)
{
  return (gdouble) ((i * 7919) % 201 - 100);
}

static HpTensor *
global_tensor (const gint64 *shape,
               guint         ndim,
               guint64       salt)
{
  gint64 n = 1;
  g_autofree gdouble *data = NULL;

  for (guint k = 0; k < ndim; k++)
    n *= shape[k];
  data = g_new (gdouble, MAX (n, 1));
  for (gint64 i = 0; i < n; i++)
    data[i] = global_value (i + (gint64) salt * 31);
  return hp_test_tensor (HP_DTYPE_FLOAT64, data, n, shape, ndim);
}

/* This rank's local values for @texts: its block of @whole, split into
 * partial values on the Partial mesh dims (last mesh dim first, since
 * the reductions run first mesh dim first). */
static HpTensor *
local_for (HpTensor        *whole,
           const gchar    **texts,
           const MeshShape *ms,
           const gint      *coordinate)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (whole, &ndim);
  gint64 offsets[HP_TENSOR_MAX_NDIM], lengths[HP_TENSOR_MAX_NDIM];
  gsize n;
  g_autofree gdouble *values = NULL;

  expected_region (shape, ndim, texts, ms, coordinate, offsets, lengths);
  values = hp_test_region_values (whole, offsets, lengths, &n);

  for (guint d = ms->ndim; d-- > 0;)
    {
      gint parts = ms->shape[d], c = coordinate[d];

      if (strcmp (texts[d], "P(sum)") == 0)
        for (gsize i = 0; i < n; i++)
          {
            gdouble share = (gdouble) ((gint64) (i * 3 + d) % 5 - 2);
            values[i] = c == parts - 1 ? values[i] - (parts - 1) * share : share;
          }
      else if (strcmp (texts[d], "P(max)") == 0)
        for (gsize i = 0; i < n; i++)
          values[i] -= (gdouble) ((c + (gint) i) % parts);
    }

  return hp_test_tensor (HP_DTYPE_FLOAT64, values, n, lengths, ndim);
}

static void
assert_local_is_region (HpDTensor       *dt,
                        HpTensor        *whole,
                        const gchar    **texts,
                        const MeshShape *ms,
                        const gint      *coordinate)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (whole, &ndim);
  gint64 offsets[HP_TENSOR_MAX_NDIM], lengths[HP_TENSOR_MAX_NDIM];
  gsize n, n_local;
  g_autofree gdouble *want = NULL;
  g_autofree gdouble *got = NULL;
  g_autoptr(HpTensor) local = hp_dtensor_get_local (dt);

  expected_region (shape, ndim, texts, ms, coordinate, offsets, lengths);
  want = hp_test_region_values (whole, offsets, lengths, &n);
  hp_test_assert_shape (local, lengths, ndim);
  got = hp_tensor_to_float64_array (local, &n_local);
  g_assert_cmpuint (n_local, ==, n);
  for (gsize i = 0; i < n; i++)
    g_assert_cmpfloat (got[i], ==, want[i]);
}

static gboolean
has_partial (const gchar **texts,
             guint         n)
{
  for (guint i = 0; i < n; i++)
    if (texts[i][0] == 'P')
      return TRUE;
  return FALSE;
}

/* Every source -> target pair over the six placements per mesh dim, for
 * shapes that divide, that do not, and that are smaller than the mesh */
static void
test_redistribute_all_pairs (void)
{
  static const gint64 shapes[][3] = { { 8, 4, 0 }, { 5, 3, 0 }, { 2, 1, 0 }, { 3, 5, 2 } };
  static const guint ndims[] = { 2, 2, 2, 3 };
  g_autoptr(GArray) meshes = mesh_shapes ();
  guint checked = 0;

  for (guint m = 0; m < meshes->len; m++)
    {
      const MeshShape *ms = &g_array_index (meshes, MeshShape, m);
      g_autoptr(HpDeviceMesh) mesh = make_mesh (ms);
      const gint *coordinate = hp_device_mesh_get_coordinate (mesh, NULL);
      guint combos = ms->ndim == 1 ? N_KINDS : N_KINDS * N_KINDS;

      for (guint s = 0; s < G_N_ELEMENTS (ndims); s++)
        {
          g_autoptr(HpTensor) whole = global_tensor (shapes[s], ndims[s], s);

          for (guint a = 0; a < combos; a++)
            {
              const gchar *src[2] = { placement_texts[a % N_KINDS], placement_texts[a / N_KINDS] };
              g_autoptr(GPtrArray) src_p = hp_test_placements (src, ms->ndim);
              g_autoptr(HpTensor) local = local_for (whole, src, ms, coordinate);
              g_autoptr(GError) error = NULL;
              g_autoptr(HpDTensor) x = hp_dtensor_new_from_local (local, mesh, src_p, shapes[s],
                                                                  ndims[s], FALSE, &error);

              g_assert_no_error (error);
              for (guint b = 0; b < combos; b++)
                {
                  const gchar *dst[2] = { placement_texts[b % N_KINDS], placement_texts[b / N_KINDS] };
                  g_autoptr(GPtrArray) dst_p = hp_test_placements (dst, ms->ndim);
                  g_autoptr(HpDTensor) y = NULL;
                  g_autoptr(HpTensor) full = NULL;
                  gboolean allowed = TRUE;

                  for (guint d = 0; d < ms->ndim; d++)
                    if (dst[d][0] == 'P' && strcmp (dst[d], src[d]) != 0)
                      allowed = FALSE;

                  y = hp_dtensor_redistribute (x, dst_p, &error);
                  if (!allowed)
                    {
                      hp_test_assert_error (y, &error, HP_ERROR_PLACEMENT, "Partial placements come only");
                      continue;
                    }
                  g_assert_no_error (error);

                  if (!has_partial (dst, ms->ndim))
                    assert_local_is_region (y, whole, dst, ms, coordinate);

                  full = hp_dtensor_full_tensor (y, &error);
                  g_assert_no_error (error);
                  hp_test_assert_close (full, whole, 0, 0);
                  checked++;
                }
            }
        }
    }

  g_test_message ("%u redistributions checked", checked);
  g_assert_cmpuint (checked, >, 0);
}

static void
test_redistribute_dtypes (void)
{
  static const HpDType dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_INT64 };
  g_autoptr(GError) error = NULL;
  MeshShape ms = { { world_size, 0 }, 1 };
  g_autoptr(HpDeviceMesh) mesh = make_mesh (&ms);

  for (guint t = 0; t < G_N_ELEMENTS (dtypes); t++)
    {
      const gchar *src[] = { "P(sum)" }, *mid[] = { "S(1)" }, *dst[] = { "S(0)" };
      g_autoptr(HpTensor) whole64 = global_tensor ((gint64[]) { 7, 3 }, 2, 9);
      g_autoptr(HpTensor) local64 = local_for (whole64, src, &ms, hp_device_mesh_get_coordinate (mesh, NULL));
      gsize n;
      g_autofree gdouble *values = hp_tensor_to_float64_array (local64, &n);
      g_autoptr(HpTensor) local = NULL;
      g_autoptr(GPtrArray) src_p = hp_test_placements (src, 1);
      g_autoptr(GPtrArray) mid_p = hp_test_placements (mid, 1);
      g_autoptr(GPtrArray) dst_p = hp_test_placements (dst, 1);
      g_autoptr(HpDTensor) x = NULL;
      g_autoptr(HpDTensor) y = NULL;
      g_autoptr(HpDTensor) z = NULL;
      g_autoptr(HpTensor) full = NULL;

      if (dtypes[t] == HP_DTYPE_INT64)
        {
          g_autofree gint64 *ints = g_new (gint64, n);
          for (gsize i = 0; i < n; i++)
            ints[i] = (gint64) values[i];
          local = hp_test_tensor_ids (ints, n, hp_tensor_get_shape (local64, NULL), 2);
        }
      else
        local = hp_test_tensor (dtypes[t], values, n, hp_tensor_get_shape (local64, NULL), 2);

      x = hp_dtensor_new_from_local (local, mesh, src_p, (gint64[]) { 7, 3 }, 2, TRUE, &error);
      g_assert_no_error (error);
      y = hp_dtensor_redistribute (x, mid_p, &error);
      g_assert_no_error (error);
      z = hp_dtensor_redistribute (y, dst_p, &error);
      g_assert_no_error (error);
      full = hp_dtensor_full_tensor (z, &error);
      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (full), ==, dtypes[t]);
      hp_test_assert_close (full, whole64, 0, 0);
    }
}

static void
test_partial_avg (void)
{
  g_autoptr(GError) error = NULL;
  MeshShape ms = { { world_size, 0 }, 1 };
  g_autoptr(HpDeviceMesh) mesh = make_mesh (&ms);
  g_autoptr(GPtrArray) avg = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) replicate = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(HpTensor) local = hp_tensor_new_full (HP_DTYPE_FLOAT64, (gint64[]) { 3 }, 1, 2.0 * world_rank);
  g_autoptr(HpDTensor) x = NULL;
  g_autoptr(HpTensor) full = NULL;
  gdouble want = world_size - 1.0;   /* mean of 0, 2, 4, ... */

  g_ptr_array_add (avg, hp_partial_new (HP_REDUCE_OP_AVG));
  g_ptr_array_add (replicate, hp_replicate_new ());
  x = hp_dtensor_new_from_local (local, mesh, avg, NULL, 0, FALSE, &error);
  g_assert_no_error (error);
  full = hp_dtensor_full_tensor (x, &error);
  g_assert_no_error (error);
  hp_test_assert_values (full, (gdouble[]) { want, want, want }, 3, (gint64[]) { 3 }, 1, 1e-15, 0);
}

/* Partial(min) and Partial(product) through all-reduce and
 * reduce-scatter, with values that make each rank's part count */
static void
test_partial_min_product (void)
{
  g_autoptr(GError) error = NULL;
  MeshShape ms = { { world_size, 0 }, 1 };
  g_autoptr(HpDeviceMesh) mesh = make_mesh (&ms);
  static const gint64 shape[] = { 5, 2 };
  gdouble mine[10], want_min[10], want_product[10];
  const gchar *to_r[] = { "R" }, *to_s[] = { "S(0)" };
  g_autoptr(GPtrArray) r_p = hp_test_placements (to_r, 1);
  g_autoptr(GPtrArray) s_p = hp_test_placements (to_s, 1);

  for (gint i = 0; i < 10; i++)
    {
      mine[i] = (gdouble) ((world_rank + i) % 3 + 1) * (i % 2 ? -1 : 1);
      want_min[i] = G_MAXDOUBLE;
      want_product[i] = 1.0;
      for (gint r = 0; r < world_size; r++)
        {
          gdouble v = (gdouble) ((r + i) % 3 + 1) * (i % 2 ? -1 : 1);

          want_min[i] = MIN (want_min[i], v);
          want_product[i] *= v;
        }
    }

  for (gint op = 0; op < 2; op++)
    {
      g_autoptr(GPtrArray) partial = g_ptr_array_new_with_free_func (g_object_unref);
      g_autoptr(HpTensor) local = hp_test_tensor (HP_DTYPE_FLOAT64, mine, 10, shape, 2);
      g_autoptr(HpTensor) want = hp_test_tensor (HP_DTYPE_FLOAT64, op == 0 ? want_min : want_product,
                                                 10, shape, 2);
      g_autoptr(HpDTensor) x = NULL;
      g_autoptr(HpDTensor) r = NULL;
      g_autoptr(HpDTensor) sh = NULL;
      const gchar *s0[] = { "S(0)" };

      g_ptr_array_add (partial, hp_partial_new (op == 0 ? HP_REDUCE_OP_MIN : HP_REDUCE_OP_PRODUCT));
      x = hp_dtensor_new_from_local (local, mesh, partial, NULL, 0, FALSE, &error);
      g_assert_no_error (error);
      r = hp_dtensor_redistribute (x, r_p, &error);
      g_assert_no_error (error);
      {
        g_autoptr(HpTensor) got = hp_dtensor_get_local (r);
        hp_test_assert_close (got, want, 0, 0);
      }
      sh = hp_dtensor_redistribute (x, s_p, &error);
      g_assert_no_error (error);
      assert_local_is_region (sh, want, s0, &ms, hp_device_mesh_get_coordinate (mesh, NULL));
    }
}

/* distribute from a source rank (NULL elsewhere) and from every rank's
 * own copy, for every placement without Partial */
static void
test_distribute (void)
{
  static const gint64 shape[] = { 5, 3 };
  g_autoptr(GArray) meshes = mesh_shapes ();
  g_autoptr(HpTensor) whole = global_tensor (shape, 2, 4);

  for (guint m = 0; m < meshes->len; m++)
    {
      const MeshShape *ms = &g_array_index (meshes, MeshShape, m);
      g_autoptr(HpDeviceMesh) mesh = make_mesh (ms);
      const gint *coordinate = hp_device_mesh_get_coordinate (mesh, NULL);
      guint kinds = 4, combos = ms->ndim == 1 ? kinds : kinds * kinds;
      gint max_source = ms->shape[0];

      for (guint d = 1; d < ms->ndim; d++)
        max_source = MIN (max_source, ms->shape[d]);

      for (guint a = 0; a < combos; a++)
        for (gint source = -1; source < max_source; source++)
          {
            const gchar *texts[2] = { placement_texts[a % kinds], placement_texts[a / kinds] };
            g_autoptr(GPtrArray) placements = hp_test_placements (texts, ms->ndim);
            g_autoptr(GError) error = NULL;
            gboolean is_source = TRUE;
            g_autoptr(HpDTensor) dt = NULL;
            g_autoptr(HpTensor) full = NULL;

            for (guint d = 0; d < ms->ndim; d++)
              is_source &= coordinate[d] == source;

            dt = hp_dtensor_distribute (source == -1 || is_source ? whole : NULL, mesh,
                                        placements, source, &error);
            g_assert_no_error (error);
            hp_test_assert_shape (HP_TENSOR (dt), shape, 2);
            assert_local_is_region (dt, whole, texts, ms, coordinate);

            full = hp_dtensor_full_tensor (dt, &error);
            g_assert_no_error (error);
            hp_test_assert_close (full, whole, 0, 0);
          }
    }
}

/* The gradient through redistribute is the single-rank gradient laid out
 * by the source's placements (Partial as Replicate) */
static void
test_redistribute_gradients (void)
{
  static const gint64 shape[] = { 5, 4 };
  g_autoptr(GArray) meshes = mesh_shapes ();
  g_autoptr(HpTensor) whole = global_tensor (shape, 2, 1);
  g_autoptr(HpTensor) weights = global_tensor (shape, 2, 2);

  for (guint m = 0; m < meshes->len; m++)
    {
      const MeshShape *ms = &g_array_index (meshes, MeshShape, m);
      g_autoptr(HpDeviceMesh) mesh = make_mesh (ms);
      const gint *coordinate = hp_device_mesh_get_coordinate (mesh, NULL);
      guint combos = ms->ndim == 1 ? N_KINDS : N_KINDS * N_KINDS;

      for (guint a = 0; a < combos; a++)
        for (guint b = 0; b < combos; b++)
          {
            const gchar *src[2] = { placement_texts[a % N_KINDS], placement_texts[a / N_KINDS] };
            const gchar *dst[2] = { placement_texts[b % N_KINDS], placement_texts[b / N_KINDS] };
            const gchar *grad_texts[2];
            g_autoptr(GPtrArray) src_p = hp_test_placements (src, ms->ndim);
            g_autoptr(GPtrArray) dst_p = NULL;
            g_autoptr(HpTensor) local = NULL;
            g_autoptr(HpDTensor) x = NULL;
            g_autoptr(HpDTensor) y = NULL;
            g_autoptr(HpTensor) full = NULL;
            g_autoptr(HpTensor) weighted = NULL;
            g_autoptr(HpTensor) loss = NULL;
            g_autoptr(GError) error = NULL;
            HpDTensor *grad;
            gboolean skip = FALSE;

            for (guint d = 0; d < ms->ndim; d++)
              {
                if (dst[d][0] == 'P')
                  skip = TRUE;
                grad_texts[d] = src[d][0] == 'P' ? "R" : src[d];
              }
            if (skip)
              continue;

            dst_p = hp_test_placements (dst, ms->ndim);
            local = local_for (whole, src, ms, coordinate);
            x = hp_dtensor_new_from_local (local, mesh, src_p, shape, 2, FALSE, &error);
            g_assert_no_error (error);
            hp_tensor_set_requires_grad (HP_TENSOR (x), TRUE);

            y = hp_dtensor_redistribute (x, dst_p, &error);
            g_assert_no_error (error);
            full = hp_dtensor_full_tensor (y, &error);
            g_assert_no_error (error);
            weighted = hp_tensor_mul (full, weights, &error);
            g_assert_no_error (error);
            loss = hp_tensor_sum_all (weighted, &error);
            g_assert_no_error (error);
            g_assert_true (hp_tensor_backward (loss, NULL, &error));
            g_assert_no_error (error);

            grad = HP_DTENSOR (hp_tensor_get_grad (HP_TENSOR (x)));
            g_assert_true (HP_IS_DTENSOR (grad));
            {
              g_autoptr(GPtrArray) want = hp_test_placements (grad_texts, ms->ndim);
              GPtrArray *have = hp_dtensor_get_placements (grad);

              for (guint d = 0; d < ms->ndim; d++)
                {
                  g_autoptr(HpPlacement) normal = NULL;
                  HpPlacement *w = g_ptr_array_index (want, d);

                  if (hp_placement_is_shard (w) && hp_shard_get_dim (HP_SHARD (w)) < 0)
                    w = normal = hp_shard_new (1);
                  g_assert_true (hp_placement_equal (g_ptr_array_index (have, d), w));
                }
            }
            assert_local_is_region (grad, weights, grad_texts, ms, coordinate);
          }
    }
}

/* The gradient of new_from_local is this rank's part; Partial(avg)
 * divides it by the mesh size; distribute's is the whole gradient */
static void
test_local_gradients (void)
{
  g_autoptr(GError) error = NULL;
  MeshShape ms = { { world_size, 0 }, 1 };
  g_autoptr(HpDeviceMesh) mesh = make_mesh (&ms);
  const gint *coordinate = hp_device_mesh_get_coordinate (mesh, NULL);
  static const gint64 shape[] = { 6, 2 };
  g_autoptr(HpTensor) weights = global_tensor (shape, 2, 5);
  const gchar *kinds[] = { "S(0)", "R", "P(sum)", "P(avg)" };

  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      const gchar *texts[] = { kinds[i] };
      g_autoptr(GPtrArray) placements = hp_test_placements (texts, 1);
      g_autoptr(HpTensor) whole = global_tensor (shape, 2, 3);
      g_autoptr(HpTensor) local = local_for (whole, texts[0][0] == 'P' ? (const gchar *[]) { "R" } : texts,
                                             &ms, coordinate);
      g_autoptr(HpDTensor) x = NULL;
      g_autoptr(HpTensor) full = NULL;
      g_autoptr(HpTensor) weighted = NULL;
      g_autoptr(HpTensor) loss = NULL;
      g_autofree gdouble *want = NULL;
      g_autofree gdouble *got = NULL;
      gint64 offsets[2], lengths[2];
      gsize n, n_got;
      gdouble factor = strcmp (kinds[i], "P(avg)") == 0 ? 1.0 / world_size : 1.0;

      hp_tensor_set_requires_grad (local, TRUE);
      x = hp_dtensor_new_from_local (local, mesh, placements, shape, 2, FALSE, &error);
      g_assert_no_error (error);
      full = hp_dtensor_full_tensor (x, &error);
      weighted = hp_tensor_mul (full, weights, &error);
      loss = hp_tensor_sum_all (weighted, &error);
      g_assert_no_error (error);
      g_assert_true (hp_tensor_backward (loss, NULL, &error));
      g_assert_no_error (error);

      expected_region (shape, 2, texts[0][0] == 'P' ? (const gchar *[]) { "R" } : texts, &ms,
                       coordinate, offsets, lengths);
      want = hp_test_region_values (weights, offsets, lengths, &n);
      got = hp_tensor_to_float64_array (hp_tensor_get_grad (local), &n_got);
      g_assert_cmpuint (n, ==, n_got);
      for (gsize j = 0; j < n; j++)
        g_assert_cmpfloat (fabs (got[j] - want[j] * factor), <=, 1e-14 * fabs (want[j]));
    }

  /* distribute: every rank's copy gets the whole gradient */
  {
    const gchar *texts[] = { "S(0)" };
    g_autoptr(GPtrArray) placements = hp_test_placements (texts, 1);
    g_autoptr(HpTensor) whole = global_tensor (shape, 2, 3);
    g_autoptr(HpDTensor) x = NULL;
    g_autoptr(HpTensor) full = NULL;
    g_autoptr(HpTensor) weighted = NULL;
    g_autoptr(HpTensor) loss = NULL;

    hp_tensor_set_requires_grad (whole, TRUE);
    x = hp_dtensor_distribute (world_rank == 0 ? whole : NULL, mesh, placements, 0, &error);
    g_assert_no_error (error);
    g_assert_true (hp_tensor_get_requires_grad (HP_TENSOR (x)));
    full = hp_dtensor_full_tensor (x, &error);
    weighted = hp_tensor_mul (full, weights, &error);
    loss = hp_tensor_sum_all (weighted, &error);
    g_assert_true (hp_tensor_backward (loss, NULL, &error));
    g_assert_no_error (error);
    if (world_rank == 0)
      hp_test_assert_close (hp_tensor_get_grad (whole), weights, 0, 0);
    else
      g_assert_null (hp_tensor_get_grad (whole));
  }
}

static void
test_ops_and_accumulation (void)
{
  g_autoptr(GError) error = NULL;
  MeshShape ms = { { world_size, 0 }, 1 };
  g_autoptr(HpDeviceMesh) mesh = make_mesh (&ms);
  const gchar *texts[] = { "S(0)" };
  g_autoptr(GPtrArray) placements = hp_test_placements (texts, 1);
  static const gint64 shape[] = { 7, 3 };
  g_autoptr(HpTensor) a = global_tensor (shape, 2, 6);
  g_autoptr(HpTensor) b = global_tensor (shape, 2, 7);
  g_autoptr(HpDTensor) da = hp_dtensor_distribute (a, mesh, placements, -1, &error);
  g_autoptr(HpDTensor) db = hp_dtensor_distribute (b, mesh, placements, -1, &error);
  g_autoptr(HpTensor) sum = NULL;
  g_autoptr(HpTensor) want = NULL;
  g_autoptr(HpTensor) full = NULL;
  g_autoptr(HpTensor) mm = NULL;
  g_autoptr(HpTensor) bt = NULL;
  g_autoptr(HpTensor) want_mm = NULL;
  g_autoptr(HpTensor) plain = hp_tensor_new_ones (HP_DTYPE_FLOAT64, shape, 2);
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 2.0);

  g_assert_no_error (error);

  /* same layout: element-wise on the shards, the layout kept */
  sum = hp_tensor_add (HP_TENSOR (da), HP_TENSOR (db), &error);
  g_assert_no_error (error);
  g_assert_true (HP_IS_DTENSOR (sum));
  g_assert_true (hp_placement_equal (g_ptr_array_index (hp_dtensor_get_placements (HP_DTENSOR (sum)), 0),
                                     g_ptr_array_index (placements, 0)));
  want = hp_tensor_add (a, b, &error);
  full = hp_dtensor_full_tensor (HP_DTENSOR (sum), &error);
  g_assert_no_error (error);
  hp_test_assert_close (full, want, 0, 0);

  /* any other op: on the whole tensors, Replicate out */
  bt = hp_tensor_transpose (HP_TENSOR (db), 0, 1, &error);
  g_assert_no_error (error);
  mm = hp_tensor_matmul (HP_TENSOR (da), bt, &error);
  g_assert_no_error (error);
  g_clear_object (&full);
  full = hp_dtensor_full_tensor (HP_DTENSOR (mm), &error);
  {
    g_autoptr(HpTensor) tb = hp_tensor_transpose (b, 0, 1, &error);
    want_mm = hp_tensor_matmul (a, tb, &error);
  }
  hp_test_assert_close (full, want_mm, 0, 0);

  /* a plain tensor joins only with one element */
  g_clear_object (&full);
  full = hp_tensor_mul (HP_TENSOR (da), scalar, &error);
  g_assert_no_error (error);
  g_assert_true (HP_IS_DTENSOR (full));
  hp_test_assert_error (hp_tensor_add (HP_TENSOR (da), plain, &error), &error, HP_ERROR_PLACEMENT,
                        "add: mixed HpTensor and HpDTensor (input 1 is a plain float64 [7, 3])");

  /* DTensor leaves accumulate DTensor gradients with their placements */
  hp_tensor_set_requires_grad (HP_TENSOR (da), TRUE);
  for (int round = 1; round <= 2; round++)
    {
      g_autoptr(HpTensor) y = hp_tensor_mul (HP_TENSOR (da), HP_TENSOR (db), &error);
      g_autoptr(HpTensor) l = hp_tensor_sum_all (y, &error);
      HpTensor *grad;
      g_autoptr(HpTensor) grad_full = NULL;
      g_autoptr(HpTensor) want_grad = hp_tensor_scale (b, round, &error);

      g_assert_no_error (error);
      g_assert_true (hp_tensor_backward (l, NULL, &error));
      g_assert_no_error (error);
      grad = hp_tensor_get_grad (HP_TENSOR (da));
      g_assert_true (HP_IS_DTENSOR (grad));
      g_assert_true (hp_placement_is_shard (g_ptr_array_index (hp_dtensor_get_placements (HP_DTENSOR (grad)), 0)));
      grad_full = hp_dtensor_full_tensor (HP_DTENSOR (grad), &error);
      g_assert_no_error (error);
      hp_test_assert_close (grad_full, want_grad, 0, 0);
    }
}

/* reshape keeps a shard that stays whole, an aligned head split and a
 * merge; other shards go through Replicate; values always exact */
static void
test_reshape (void)
{
  static const struct
  {
    gint64 in[3];
    guint in_ndim;
    const gchar *placement;
    gint64 out[4];
    guint out_ndim;
    gint want_dim;      /* the shard dim of the result, -1 for R */
    /* the sharded dim's size before and after, when they differ: the
     * shard stays only if each rank's piece scales to its new piece */
    gint64 from, to;
  } cases[] = {
    /* the dim is kept: [6, 8] S(0) -> [6, 2, 4] S(0) */
    { { 6, 8 }, 2, "S(0)", { 6, 2, 4 }, 3, 0, 0, 0 },
    /* head split: [3, 12] S(1) -> [3, 4, 3] S(1) when whole heads */
    { { 3, 12 }, 2, "S(1)", { 3, 4, -1 }, 3, 1, 12, 4 },
    /* merge with the shard leading: [4, 3, 2] S(0) -> [12, 2] S(0) */
    { { 4, 3, 2 }, 3, "S(0)", { 12, 2 }, 2, 0, 4, 12 },
    /* merge with the shard trailing: through Replicate */
    { { 4, 3, 2 }, 3, "S(1)", { 12, 2 }, 2, -1, 0, 0 },
  };
  g_autoptr(GError) error = NULL;
  MeshShape ms = { { world_size, 0 }, 1 };
  g_autoptr(HpDeviceMesh) mesh = make_mesh (&ms);

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      const gchar *texts[] = { cases[c].placement };
      g_autoptr(GPtrArray) placements = hp_test_placements (texts, 1);
      g_autoptr(HpTensor) whole = global_tensor (cases[c].in, cases[c].in_ndim, c);
      g_autoptr(HpTensor) want = hp_tensor_reshape (whole, cases[c].out, cases[c].out_ndim, &error);
      g_autoptr(HpDTensor) x = hp_dtensor_distribute (whole, mesh, placements, -1, &error);
      g_autoptr(HpTensor) y = NULL;
      g_autoptr(HpTensor) full = NULL;
      HpPlacement *p;
      gint want_dim = cases[c].want_dim;

      g_assert_no_error (error);
      for (gint r = 0; r < world_size && cases[c].from != 0; r++)
        {
          gint64 fo, fl, to, tl;
          gint64 num = MAX (cases[c].to / cases[c].from, 1), den = MAX (cases[c].from / cases[c].to, 1);

          hp_test_chunk (cases[c].from, world_size, r, &fo, &fl);
          hp_test_chunk (cases[c].to, world_size, r, &to, &tl);
          if (fo % den || fl % den || fo / den * num != to || fl / den * num != tl)
            want_dim = -1;
        }

      y = hp_tensor_reshape (HP_TENSOR (x), cases[c].out, cases[c].out_ndim, &error);
      g_assert_no_error (error);
      g_assert_true (HP_IS_DTENSOR (y));
      p = g_ptr_array_index (hp_dtensor_get_placements (HP_DTENSOR (y)), 0);
      if (want_dim >= 0 && world_size > 1)
        {
          g_assert_true (hp_placement_is_shard (p));
          g_assert_cmpint (hp_shard_get_dim (HP_SHARD (p)), ==, want_dim);
        }
      else if (world_size > 1)
        g_assert_true (hp_placement_is_replicate (p));

      full = hp_dtensor_full_tensor (HP_DTENSOR (y), &error);
      g_assert_no_error (error);
      hp_test_assert_close (full, want, 0, 0);
    }
}

/* cross entropy with the classes sharded: exact loss and gradient without
 * gathering the logits */
static void
test_loss_parallel (void)
{
  g_autoptr(GError) error = NULL;
  MeshShape ms = { { world_size, 0 }, 1 };
  g_autoptr(HpDeviceMesh) mesh = make_mesh (&ms);
  static const gint64 shape[] = { 6, 7 };
  const gint64 targets_data[] = { 0, 6, 3, -100, 5, 1 };
  const gchar *s1[] = { "S(1)" }, *r[] = { "R" };
  g_autoptr(GPtrArray) s1_p = hp_test_placements (s1, 1);
  g_autoptr(GPtrArray) r_p = hp_test_placements (r, 1);
  g_autoptr(HpTensor) logits = hp_tensor_new_randn (HP_DTYPE_FLOAT64, shape, 2, 11);
  g_autoptr(HpTensor) targets = hp_test_tensor_ids (targets_data, 6, shape, 1);
  g_autoptr(HpTensor) plain_loss = NULL;
  g_autoptr(HpDTensor) dlogits = NULL;
  g_autoptr(HpDTensor) dtargets = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpTensor) loss_full = NULL;
  g_autoptr(HpTensor) grad_full = NULL;
  HpTensor *grad;

  hp_tensor_set_requires_grad (logits, TRUE);
  plain_loss = hp_tensor_cross_entropy (logits, targets, -100, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (plain_loss, NULL, &error));

  {
    g_autoptr(HpTensor) values = hp_tensor_detach (logits);
    dlogits = hp_dtensor_distribute (values, mesh, s1_p, -1, &error);
  }
  dtargets = hp_dtensor_distribute (targets, mesh, r_p, -1, &error);
  g_assert_no_error (error);
  hp_tensor_set_requires_grad (HP_TENSOR (dlogits), TRUE);
  loss = hp_tensor_cross_entropy (HP_TENSOR (dlogits), HP_TENSOR (dtargets), -100, &error);
  g_assert_no_error (error);
  g_assert_true (hp_placement_is_replicate (g_ptr_array_index (hp_dtensor_get_placements (HP_DTENSOR (loss)), 0)));
  loss_full = hp_dtensor_full_tensor (HP_DTENSOR (loss), &error);
  hp_test_assert_close (loss_full, plain_loss, 1e-13, 0);

  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);
  grad = hp_tensor_get_grad (HP_TENSOR (dlogits));
  g_assert_true (HP_IS_DTENSOR (grad));
  g_assert_true (hp_placement_is_shard (g_ptr_array_index (hp_dtensor_get_placements (HP_DTENSOR (grad)), 0)));
  grad_full = hp_dtensor_full_tensor (HP_DTENSOR (grad), &error);
  hp_test_assert_close (grad_full, hp_tensor_get_grad (logits), 1e-12, 1e-15);

  /* a target outside the classes fails on every rank */
  {
    const gint64 bad[] = { 0, 7, 0, 0, 0, 0 };
    g_autoptr(HpTensor) bad_targets = hp_test_tensor_ids (bad, 6, shape, 1);
    g_autoptr(HpDTensor) dbad = hp_dtensor_distribute (bad_targets, mesh, r_p, -1, &error);

    g_assert_no_error (error);
    hp_test_assert_error (hp_tensor_cross_entropy (HP_TENSOR (dlogits), HP_TENSOR (dbad), -100, &error),
                          &error, HP_ERROR_INVALID_ARGUMENT, "target 7 is outside [0, 7)");
  }
}

static void
test_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  MeshShape ms = { { world_size, 0 }, 1 };
  g_autoptr(HpDeviceMesh) mesh = make_mesh (&ms);
  g_autoptr(HpTensor) whole = global_tensor ((gint64[]) { 4, 2 }, 2, 0);
  const gchar *two[] = { "R", "R" }, *s2[] = { "S(2)" }, *part[] = { "P(sum)" }, *s0[] = { "S(0)" };
  const gchar *pmax[] = { "P(max)" };
  g_autoptr(GPtrArray) two_p = hp_test_placements (two, 2);
  g_autoptr(GPtrArray) s2_p = hp_test_placements (s2, 1);
  g_autoptr(GPtrArray) part_p = hp_test_placements (part, 1);
  g_autoptr(GPtrArray) s0_p = hp_test_placements (s0, 1);
  g_autoptr(GPtrArray) pmax_p = hp_test_placements (pmax, 1);
  g_autoptr(HpDTensor) dt = hp_dtensor_distribute (whole, mesh, s0_p, -1, &error);
  g_autoptr(HpDTensor) partial = NULL;
  g_autoptr(HpTensor) mismatched = NULL;

  g_assert_no_error (error);

  hp_test_assert_error (hp_dtensor_distribute (whole, mesh, two_p, 0, &error), &error,
                        HP_ERROR_PLACEMENT, "distribute: 2 placements (R, R) given for a mesh of 1 dims");
  hp_test_assert_error (hp_dtensor_distribute (whole, mesh, s2_p, 0, &error), &error,
                        HP_ERROR_PLACEMENT, "placement S(2) of (S(2)) is out of range for a tensor of 2 dims");
  hp_test_assert_error (hp_dtensor_distribute (whole, mesh, part_p, 0, &error), &error,
                        HP_ERROR_PLACEMENT, "has a Partial placement");
  hp_test_assert_error (hp_dtensor_distribute (whole, mesh, s0_p, world_size, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "src_data_rank");
  /* no tensor on the source: every rank learns it */
  hp_test_assert_error (hp_dtensor_distribute (NULL, mesh, s0_p, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "the source rank (mesh rank 0) has no plain tensor");
  hp_test_assert_error (hp_dtensor_redistribute (dt, two_p, &error), &error,
                        HP_ERROR_PLACEMENT, "redistribute: 2 placements");
  hp_test_assert_error (hp_dtensor_redistribute (dt, part_p, &error), &error,
                        HP_ERROR_PLACEMENT, "cannot go from S(0) to P(sum) on mesh dim 0");
  hp_test_assert_error (hp_dtensor_new_from_local (whole, mesh, s2_p, NULL, 0, FALSE, &error), &error,
                        HP_ERROR_PLACEMENT, "out of range");

  partial = hp_dtensor_new_from_local (whole, mesh, part_p, NULL, 0, FALSE, &error);
  g_assert_no_error (error);
  hp_test_assert_error (hp_dtensor_redistribute (partial, pmax_p, &error), &error,
                        HP_ERROR_PLACEMENT, "cannot go from P(sum) to P(max)");

  /* ranks that disagree on the local shape all get the error */
  mismatched = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, (gint64[]) { world_rank == 0 ? 2 : 3, 2 }, 2);
  if (world_size > 1)
    hp_test_assert_error (hp_dtensor_new_from_local (mismatched, mesh, s0_p, NULL, 0, TRUE, &error),
                          &error, HP_ERROR_SHAPE, "the ranks' local tensors do not fit together");
  /* a local part that is not this rank's part of the given shape */
  hp_test_assert_error (hp_dtensor_new_from_local (whole, mesh, s0_p, (gint64[]) { 3, 2 }, 2, TRUE, &error),
                        &error, HP_ERROR_SHAPE, NULL);
  hp_test_assert_error (hp_dtensor_new_from_local (HP_TENSOR (dt), mesh, s0_p, NULL, 0, FALSE, &error),
                        &error, HP_ERROR_INVALID_ARGUMENT, "already an HpDTensor");

  /* after the errors, every input is as it was: the plain tensor, the
   * DTensors' placements and values, the placement lists */
  {
    g_autoptr(HpTensor) expected = global_tensor ((gint64[]) { 4, 2 }, 2, 0);
    g_autoptr(HpTensor) dt_full = NULL;
    g_autoptr(HpTensor) partial_local = hp_dtensor_get_local (partial);

    hp_test_assert_identical (whole, expected);
    g_assert_false (hp_tensor_get_requires_grad (whole));
    hp_test_assert_placements (HP_TENSOR (dt), "(S(0))");
    dt_full = hp_test_full_tensor (HP_TENSOR (dt));
    hp_test_assert_identical (dt_full, expected);
    hp_test_assert_placements (HP_TENSOR (partial), "(P(sum))");
    hp_test_assert_identical (partial_local, expected);
    g_assert_cmpuint (two_p->len, ==, 2);
    g_assert_cmpuint (s0_p->len, ==, 1);
    g_assert_cmpuint (pmax_p->len, ==, 1);
  }

  /* a bad id in one rank's part of sharded ids fails on every rank */
  {
    const gint64 ids_data[] = { 0, 1, 2, 9 };
    g_autoptr(HpTensor) ids = hp_test_tensor_ids (ids_data, 4, (gint64[]) { 4 }, 1);
    g_autoptr(HpTensor) table = global_tensor ((gint64[]) { 5, 3 }, 2, 1);
    const gchar *rr[] = { "R" };
    g_autoptr(GPtrArray) r_p = hp_test_placements (rr, 1);
    g_autoptr(HpDTensor) dids = hp_dtensor_distribute (ids, mesh, s0_p, -1, &error);
    g_autoptr(HpDTensor) dtable = hp_dtensor_distribute (table, mesh, r_p, -1, &error);

    g_assert_no_error (error);
    hp_test_assert_error (hp_tensor_embedding (HP_TENSOR (dtable), HP_TENSOR (dids), &error),
                          &error, HP_ERROR_INVALID_ARGUMENT, "outside [0, 5)");
  }

  /* a plain gradient for a DTensor */
  {
    g_autoptr(HpTensor) leaf = hp_tensor_detach (HP_TENSOR (dt));
    g_autoptr(HpTensor) plain_grad = hp_tensor_new_ones (HP_DTYPE_FLOAT64, (gint64[]) { 4, 2 }, 2);

    hp_tensor_set_requires_grad (leaf, TRUE);
    g_assert_false (hp_tensor_backward (leaf, plain_grad, &error));
    g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "the gradient of an HpDTensor must be an HpDTensor too"));
    g_clear_error (&error);
    g_assert_null (hp_tensor_get_grad (leaf));
  }

  /* reading the bytes of a DTensor is refused with an error */
  {
    gdouble value = hp_tensor_item (HP_TENSOR (dt), &error);
    g_assert_cmpfloat (value, ==, 0.0);
    g_assert_error (error, HP_ERROR, HP_ERROR_STATE);
    g_clear_error (&error);
  }
}

/* hp_dtensor_full_tensor() has no input it refuses (every placement,
 * Partial ones too, goes to Replicate): shards that are empty on some
 * ranks, a 0-d tensor and a Partial max all give the whole tensor and
 * leave the DTensor as it was */
static void
test_full_tensor_any_input (void)
{
  g_autoptr(GError) error = NULL;
  MeshShape ms = { { world_size, 0 }, 1 };
  g_autoptr(HpDeviceMesh) mesh = make_mesh (&ms);
  const gchar *s0[] = { "S(0)" }, *pmax[] = { "P(max)" }, *r[] = { "R" };
  g_autoptr(GPtrArray) s0_p = hp_test_placements (s0, 1);
  g_autoptr(GPtrArray) pmax_p = hp_test_placements (pmax, 1);
  g_autoptr(GPtrArray) r_p = hp_test_placements (r, 1);
  g_autoptr(HpTensor) two = global_tensor ((gint64[]) { 2 }, 1, 3);
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 2.5);
  g_autoptr(HpDTensor) uneven = hp_dtensor_distribute (two, mesh, s0_p, -1, &error);
  g_autoptr(HpDTensor) maxed = hp_dtensor_new_from_local (two, mesh, pmax_p, NULL, 0, FALSE, &error);
  g_autoptr(HpDTensor) zero_d = hp_dtensor_distribute (scalar, mesh, r_p, -1, &error);
  g_autoptr(HpTensor) uneven_local = NULL;
  g_autoptr(HpTensor) maxed_local = NULL;
  HpDTensor *inputs[] = { uneven, maxed, zero_d };
  HpTensor *expected[] = { two, two, scalar };
  const gchar *placements[] = { "(S(0))", "(P(max))", "(R)" };

  g_assert_no_error (error);
  uneven_local = hp_dtensor_get_local (uneven);
  maxed_local = hp_dtensor_get_local (maxed);
  for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
    {
      g_autoptr(HpTensor) whole = hp_dtensor_full_tensor (inputs[i], &error);

      g_assert_no_error (error);
      g_assert_false (HP_IS_DTENSOR (whole));
      hp_test_assert_identical (whole, expected[i]);
      hp_test_assert_placements (HP_TENSOR (inputs[i]), placements[i]);
    }
  {
    g_autoptr(HpTensor) after = hp_dtensor_get_local (uneven);
    gint64 offset, length;

    hp_test_chunk (2, world_size, world_rank, &offset, &length);
    hp_test_assert_identical (after, uneven_local);
    hp_test_assert_shape (after, &length, 1);
  }
  {
    g_autoptr(HpTensor) after = hp_dtensor_get_local (maxed);

    hp_test_assert_identical (after, maxed_local);
    hp_test_assert_identical (after, two);
  }
}

static void
test_visualize_and_string (void)
{
  g_autoptr(GError) error = NULL;
  MeshShape ms = { { world_size, 0 }, 1 };
  g_autoptr(HpDeviceMesh) mesh = make_mesh (&ms);
  const gchar *s0[] = { "S(0)" };
  g_autoptr(GPtrArray) s0_p = hp_test_placements (s0, 1);
  g_autoptr(HpTensor) whole = global_tensor ((gint64[]) { 5 }, 1, 0);
  g_autoptr(HpDTensor) dt = hp_dtensor_distribute (whole, mesh, s0_p, -1, &error);
  g_autofree gchar *table = hp_dtensor_visualize (dt);
  g_autofree gchar *text = hp_tensor_to_string (HP_TENSOR (dt));
  g_auto(GStrv) lines = g_strsplit (table, "\n", -1);

  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length (lines), ==, world_size + 3);
  g_assert_true (g_str_has_prefix (lines[0], "DTensor float64 [5] on DeviceMesh("));
  for (gint r = 0; r < world_size; r++)
    {
      gint64 offset, length;
      g_autofree gchar *range = NULL;

      hp_test_chunk (5, world_size, r, &offset, &length);
      range = g_strdup_printf ("[%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ")", offset, offset + length);
      g_assert_nonnull (strstr (lines[2 + r], range));
    }
  g_assert_true (g_str_has_prefix (text, "DTensor(local_tensor=tensor("));
  g_assert_nonnull (strstr (text, "placements=(S(0))"));
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init_world (&argc, &argv);
  world_size = hp_get_world_size ();
  world_rank = hp_get_world_rank ();

  g_test_add_func ("/dtensor/redistribute/all-pairs", test_redistribute_all_pairs);
  g_test_add_func ("/dtensor/redistribute/dtypes", test_redistribute_dtypes);
  g_test_add_func ("/dtensor/redistribute/partial-avg", test_partial_avg);
  g_test_add_func ("/dtensor/redistribute/partial-min-product", test_partial_min_product);
  g_test_add_func ("/dtensor/redistribute/gradients", test_redistribute_gradients);
  g_test_add_func ("/dtensor/distribute", test_distribute);
  g_test_add_func ("/dtensor/local-gradients", test_local_gradients);
  g_test_add_func ("/dtensor/ops-and-accumulation", test_ops_and_accumulation);
  g_test_add_func ("/dtensor/reshape", test_reshape);
  g_test_add_func ("/dtensor/loss-parallel", test_loss_parallel);
  g_test_add_func ("/dtensor/bad-input", test_bad_input);
  g_test_add_func ("/dtensor/full-tensor/any-input", test_full_tensor_any_input);
  g_test_add_func ("/dtensor/visualize", test_visualize_and_string);

  return g_test_run ();
}
