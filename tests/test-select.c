/* test-select.c: topk, max, min, argmax, argmin, cumsum and the
 * categorical samplers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>
#include <stdlib.h>

#include "hp-test-utils.h"

static HpTensor *
x_2x5 (HpDType dtype)
{
  return hp_test_tensor (dtype, HP_TEST_DATA (3, 1, 4, 1, 5,
                                              9, 2, 6, 5, 3), HP_TEST_SHAPE (2, 5));
}

static void
test_topk_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = x_2x5 (HP_DTYPE_FLOAT64);
  g_autoptr(HpTensor) idx = NULL;
  g_autoptr(HpTensor) small_idx = NULL;
  g_autoptr(HpTensor) all_idx = NULL;
  g_autoptr(HpTensor) col_idx = NULL;
  g_autoptr(HpTensor) none_idx = NULL;
  g_autoptr(HpTensor) top = hp_tensor_topk (x, 3, 1, TRUE, &idx, &error);
  g_autoptr(HpTensor) small = hp_tensor_topk (x, 2, -1, FALSE, &small_idx, &error);
  g_autoptr(HpTensor) all = hp_tensor_topk (x, 5, 1, TRUE, &all_idx, &error);
  g_autoptr(HpTensor) col = hp_tensor_topk (x, 1, -2, TRUE, &col_idx, &error);
  g_autoptr(HpTensor) none = hp_tensor_topk (x, 0, 1, TRUE, &none_idx, &error);
  g_autoptr(HpTensor) no_out = hp_tensor_topk (x, 2, 0, FALSE, NULL, &error);

  g_assert_no_error (error);
  hp_test_assert_values (top, HP_TEST_DATA (5, 4, 3, 9, 6, 5), HP_TEST_SHAPE (2, 3), 0, 0);
  hp_test_assert_values (idx, HP_TEST_DATA (4, 2, 0, 0, 2, 3), HP_TEST_SHAPE (2, 3), 0, 0);
  g_assert_cmpint (hp_tensor_get_dtype (idx), ==, HP_DTYPE_INT64);
  /* ties: the lower index first */
  hp_test_assert_values (small, HP_TEST_DATA (1, 1, 2, 3), HP_TEST_SHAPE (2, 2), 0, 0);
  hp_test_assert_values (small_idx, HP_TEST_DATA (1, 3, 1, 4), HP_TEST_SHAPE (2, 2), 0, 0);
  /* k equal to the size sorts the whole slice */
  hp_test_assert_values (all, HP_TEST_DATA (5, 4, 3, 1, 1, 9, 6, 5, 3, 2), HP_TEST_SHAPE (2, 5), 0, 0);
  hp_test_assert_values (all_idx, HP_TEST_DATA (4, 2, 0, 1, 3, 0, 2, 3, 4, 1), HP_TEST_SHAPE (2, 5), 0, 0);
  hp_test_assert_values (col, HP_TEST_DATA (9, 2, 6, 5, 5), HP_TEST_SHAPE (1, 5), 0, 0);
  hp_test_assert_values (col_idx, HP_TEST_DATA (1, 1, 1, 1, 0), HP_TEST_SHAPE (1, 5), 0, 0);
  /* k 0, as in PyTorch: empty results */
  hp_test_assert_shape (none, HP_TEST_SHAPE (2, 0));
  hp_test_assert_shape (none_idx, HP_TEST_SHAPE (2, 0));
  hp_test_assert_values (no_out, HP_TEST_DATA (3, 1, 4, 1, 3, 9, 2, 6, 5, 5), HP_TEST_SHAPE (2, 5), 0, 0);
}

static void
test_max_min_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = x_2x5 (HP_DTYPE_FLOAT32);
  g_autoptr(HpTensor) max_idx = NULL;
  g_autoptr(HpTensor) min_idx = NULL;
  g_autoptr(HpTensor) col_idx = NULL;
  g_autoptr(HpTensor) max = hp_tensor_max (x, 1, FALSE, &max_idx, &error);
  g_autoptr(HpTensor) min = hp_tensor_min (x, -1, TRUE, &min_idx, &error);
  g_autoptr(HpTensor) col = hp_tensor_max (x, 0, TRUE, &col_idx, &error);
  g_autoptr(HpTensor) col_min = hp_tensor_min (x, -2, FALSE, NULL, &error);
  g_autoptr(HpTensor) argmax = hp_tensor_argmax (x, 1, FALSE, &error);
  g_autoptr(HpTensor) argmin = hp_tensor_argmin (x, 1, TRUE, &error);
  g_autoptr(HpTensor) argmax0 = hp_tensor_argmax (x, -2, FALSE, &error);

  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (max), ==, HP_DTYPE_FLOAT32);
  hp_test_assert_values (max, HP_TEST_DATA (5, 9), HP_TEST_SHAPE (2), 0, 0);
  hp_test_assert_values (max_idx, HP_TEST_DATA (4, 0), HP_TEST_SHAPE (2), 0, 0);
  hp_test_assert_values (min, HP_TEST_DATA (1, 2), HP_TEST_SHAPE (2, 1), 0, 0);
  hp_test_assert_values (min_idx, HP_TEST_DATA (1, 1), HP_TEST_SHAPE (2, 1), 0, 0);
  hp_test_assert_values (col, HP_TEST_DATA (9, 2, 6, 5, 5), HP_TEST_SHAPE (1, 5), 0, 0);
  hp_test_assert_values (col_idx, HP_TEST_DATA (1, 1, 1, 1, 0), HP_TEST_SHAPE (1, 5), 0, 0);
  hp_test_assert_values (col_min, HP_TEST_DATA (3, 1, 4, 1, 3), HP_TEST_SHAPE (5), 0, 0);
  g_assert_cmpint (hp_tensor_get_dtype (argmax), ==, HP_DTYPE_INT64);
  hp_test_assert_values (argmax, HP_TEST_DATA (4, 0), HP_TEST_SHAPE (2), 0, 0);
  hp_test_assert_values (argmin, HP_TEST_DATA (1, 1), HP_TEST_SHAPE (2, 1), 0, 0);
  hp_test_assert_values (argmax0, HP_TEST_DATA (1, 1, 1, 1, 0), HP_TEST_SHAPE (5), 0, 0);
}

/* A slice's elements in the order of a stable sort: larger first (or
 * smaller), NaN first or last, equal values by index */
typedef struct
{
  gdouble value;
  gint64 index;
  gboolean largest;
  gboolean nan_first;
} Item;

static int
item_compare (const void *pa,
              const void *pb)
{
  const Item *a = pa, *b = pb;
  gboolean an = isnan (a->value), bn = isnan (b->value);

  if (an != bn)
    return an == a->nan_first ? -1 : 1;
  if (!an && a->value != b->value)
    return (a->value > b->value) == a->largest ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

/* The k first of every slice along @dim, with the dim kept */
static void
reference_topk (HpTensor  *x,
                guint      dim,
                gint64     k,
                gboolean   largest,
                gboolean   nan_first,
                HpTensor **values,
                HpTensor **indices)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (x, &ndim);
  gsize numel;
  g_autofree gdouble *in = hp_tensor_to_float64_array (x, &numel);
  gint64 outer = 1, inner = 1, n = shape[dim];
  gint64 out_shape[HP_TENSOR_MAX_NDIM];
  g_autofree Item *items = g_new (Item, MAX (n, 1));
  g_autofree gdouble *v = NULL;
  g_autofree gint64 *ids = NULL;

  for (guint d = 0; d < dim; d++)
    outer *= shape[d];
  for (guint d = dim + 1; d < ndim; d++)
    inner *= shape[d];
  v = g_new (gdouble, MAX (outer * k * inner, 1));
  ids = g_new (gint64, MAX (outer * k * inner, 1));
  for (gint64 o = 0; o < outer; o++)
    for (gint64 i = 0; i < inner; i++)
      {
        for (gint64 j = 0; j < n; j++)
          items[j] = (Item) { in[(o * n + j) * inner + i], j, largest, nan_first };
        qsort (items, n, sizeof (Item), item_compare);
        for (gint64 j = 0; j < k; j++)
          {
            v[(o * k + j) * inner + i] = items[j].value;
            ids[(o * k + j) * inner + i] = items[j].index;
          }
      }
  memcpy (out_shape, shape, ndim * sizeof (gint64));
  out_shape[dim] = k;
  *values = hp_test_tensor (hp_tensor_get_dtype (x), v, outer * k * inner, out_shape, ndim);
  *indices = hp_test_tensor_ids (ids, outer * k * inner, out_shape, ndim);
}

/* Random values from a small set, so that ties are frequent */
static HpTensor *
tied_values (HpDType       dtype,
             const gint64 *shape,
             guint         ndim,
             guint         seed)
{
  gint64 n = 1;
  g_autofree gdouble *v = NULL;
  GRand *rand = g_rand_new_with_seed (seed);

  for (guint d = 0; d < ndim; d++)
    n *= shape[d];
  v = g_new (gdouble, MAX (n, 1));
  for (gint64 i = 0; i < n; i++)
    v[i] = g_rand_int_range (rand, -3, 4) * (dtype == HP_DTYPE_INT64 ? 1 : 0.5);
  g_rand_free (rand);
  return hp_test_tensor (dtype, v, n, shape, ndim);
}

static void
reshape_to (HpTensor    **t,
            const gint64 *shape,
            guint         ndim)
{
  g_autoptr(GError) error = NULL;
  HpTensor *reshaped = hp_tensor_reshape (*t, shape, ndim, &error);

  g_assert_no_error (error);
  g_object_unref (*t);
  *t = reshaped;
}

static void
check_reference (HpDType       dtype,
                 const gint64 *shape,
                 guint         ndim)
{
  g_autoptr(HpTensor) x = tied_values (dtype, shape, ndim, 7 + ndim);

  for (gint dim = -(gint) ndim; dim < (gint) ndim; dim++)
    {
      guint d = dim < 0 ? (guint) (dim + (gint) ndim) : (guint) dim;

      for (gint64 k = 0; k <= shape[d]; k++)
        for (int largest = 0; largest < 2; largest++)
          {
            g_autoptr(GError) error = NULL;
            g_autoptr(HpTensor) idx = NULL;
            g_autoptr(HpTensor) want = NULL;
            g_autoptr(HpTensor) want_idx = NULL;
            g_autoptr(HpTensor) got = hp_tensor_topk (x, k, dim, largest, &idx, &error);

            g_assert_no_error (error);
            reference_topk (x, d, k, largest, largest, &want, &want_idx);
            g_assert_cmpint (hp_tensor_get_dtype (got), ==, dtype);
            hp_test_assert_identical (got, want);
            hp_test_assert_identical (idx, want_idx);
          }

      for (int keepdim = 0; keepdim < 2 && shape[d] > 0; keepdim++)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(HpTensor) max_idx = NULL;
          g_autoptr(HpTensor) min_idx = NULL;
          g_autoptr(HpTensor) max = hp_tensor_max (x, dim, keepdim, &max_idx, &error);
          g_autoptr(HpTensor) min = hp_tensor_min (x, dim, keepdim, &min_idx, &error);
          g_autoptr(HpTensor) argmax = hp_tensor_argmax (x, dim, keepdim, &error);
          g_autoptr(HpTensor) argmin = hp_tensor_argmin (x, dim, keepdim, &error);
          g_autoptr(HpTensor) top = NULL;
          g_autoptr(HpTensor) top_idx = NULL;
          g_autoptr(HpTensor) bottom = NULL;
          g_autoptr(HpTensor) bottom_idx = NULL;
          gint64 out_shape[HP_TENSOR_MAX_NDIM];
          guint out_ndim = 0;

          g_assert_no_error (error);
          reference_topk (x, d, 1, TRUE, TRUE, &top, &top_idx);
          reference_topk (x, d, 1, FALSE, TRUE, &bottom, &bottom_idx);
          for (guint e = 0; e < ndim; e++)
            if (e != d || keepdim)
              out_shape[out_ndim++] = e == d ? 1 : shape[e];
          hp_test_assert_shape (max, out_shape, out_ndim);
          hp_test_assert_shape (argmin, out_shape, out_ndim);
          reshape_to (&top, out_shape, out_ndim);
          reshape_to (&top_idx, out_shape, out_ndim);
          reshape_to (&bottom, out_shape, out_ndim);
          reshape_to (&bottom_idx, out_shape, out_ndim);
          hp_test_assert_close (max, top, 0, 0);
          hp_test_assert_close (max_idx, top_idx, 0, 0);
          hp_test_assert_close (argmax, top_idx, 0, 0);
          hp_test_assert_close (min, bottom, 0, 0);
          hp_test_assert_close (min_idx, bottom_idx, 0, 0);
          hp_test_assert_close (argmin, bottom_idx, 0, 0);
        }
    }
}

static void
test_reference (void)
{
  static const HpDType dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64, HP_DTYPE_INT64 };

  for (gsize t = 0; t < G_N_ELEMENTS (dtypes); t++)
    {
      check_reference (dtypes[t], HP_TEST_SHAPE (3, 4, 5));
      check_reference (dtypes[t], HP_TEST_SHAPE (2, 1, 3, 1));
      check_reference (dtypes[t], HP_TEST_SHAPE (9));
      check_reference (dtypes[t], HP_TEST_SHAPE (2, 0, 3));
      /* long slices: a heap picks up to half of them */
      check_reference (dtypes[t], HP_TEST_SHAPE (3, 200));
    }
}

/* int64 values beyond 2^53 are compared exactly */
static void
test_int64_exact (void)
{
  g_autoptr(GError) error = NULL;
  const gint64 big = G_GINT64_CONSTANT (1) << 53;
  g_autoptr(HpTensor) x = hp_test_tensor_ids ((const gint64[]) { big, big + 1, big - 1 }, 3,
                                              HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) max = hp_tensor_max (x, 0, FALSE, NULL, &error);
  g_autoptr(HpTensor) argmax = hp_tensor_argmax (x, 0, FALSE, &error);
  g_autoptr(GBytes) bytes = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (max), ==, HP_DTYPE_INT64);
  bytes = hp_tensor_get_bytes (max);
  g_assert_cmpint (((const gint64 *) g_bytes_get_data (bytes, NULL))[0], ==, big + 1);
  hp_test_assert_values (argmax, HP_TEST_DATA (1), NULL, 0, 0, 0);
}

/* NaN counts as the largest value in topk and max; min and argmin pick
 * it too (it propagates), as in PyTorch */
static void
test_nan (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, NAN, 3, NAN, -1),
                                          HP_TEST_SHAPE (5));
  g_autoptr(HpTensor) top_idx = NULL;
  g_autoptr(HpTensor) bottom_idx = NULL;
  g_autoptr(HpTensor) max_idx = NULL;
  g_autoptr(HpTensor) min_idx = NULL;
  g_autoptr(HpTensor) top = hp_tensor_topk (x, 3, 0, TRUE, &top_idx, &error);
  g_autoptr(HpTensor) bottom = hp_tensor_topk (x, 5, 0, FALSE, &bottom_idx, &error);
  g_autoptr(HpTensor) max = hp_tensor_max (x, 0, FALSE, &max_idx, &error);
  g_autoptr(HpTensor) min = hp_tensor_min (x, 0, FALSE, &min_idx, &error);
  g_autoptr(HpTensor) argmax = hp_tensor_argmax (x, 0, FALSE, &error);
  g_autoptr(HpTensor) argmin = hp_tensor_argmin (x, 0, FALSE, &error);
  gsize n;
  g_autofree gdouble *t = NULL;
  g_autofree gdouble *b = NULL;

  g_assert_no_error (error);
  t = hp_tensor_to_float64_array (top, &n);
  g_assert_true (isnan (t[0]) && isnan (t[1]));
  g_assert_cmpfloat (t[2], ==, 3);
  hp_test_assert_values (top_idx, HP_TEST_DATA (1, 3, 2), HP_TEST_SHAPE (3), 0, 0);
  b = hp_tensor_to_float64_array (bottom, &n);
  g_assert_cmpfloat (b[0], ==, -1);
  g_assert_cmpfloat (b[1], ==, 1);
  g_assert_cmpfloat (b[2], ==, 3);
  g_assert_true (isnan (b[3]) && isnan (b[4]));
  hp_test_assert_values (bottom_idx, HP_TEST_DATA (4, 0, 2, 1, 3), HP_TEST_SHAPE (5), 0, 0);
  g_assert_true (isnan (hp_tensor_item (max, &error)));
  g_assert_true (isnan (hp_tensor_item (min, &error)));
  g_assert_no_error (error);
  hp_test_assert_values (max_idx, HP_TEST_DATA (1), NULL, 0, 0, 0);
  hp_test_assert_values (min_idx, HP_TEST_DATA (1), NULL, 0, 0, 0);
  hp_test_assert_values (argmax, HP_TEST_DATA (1), NULL, 0, 0, 0);
  hp_test_assert_values (argmin, HP_TEST_DATA (1), NULL, 0, 0, 0);
}

static void
test_size_one (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (2, -1, 7), HP_TEST_SHAPE (3, 1));
  g_autoptr(HpTensor) idx = NULL;
  g_autoptr(HpTensor) top_idx = NULL;
  g_autoptr(HpTensor) max = hp_tensor_max (x, 1, FALSE, &idx, &error);
  g_autoptr(HpTensor) top = hp_tensor_topk (x, 1, -1, FALSE, &top_idx, &error);
  g_autoptr(HpTensor) argmin = hp_tensor_argmin (x, 0, TRUE, &error);

  g_assert_no_error (error);
  hp_test_assert_values (max, HP_TEST_DATA (2, -1, 7), HP_TEST_SHAPE (3), 0, 0);
  hp_test_assert_values (idx, HP_TEST_DATA (0, 0, 0), HP_TEST_SHAPE (3), 0, 0);
  hp_test_assert_values (top, HP_TEST_DATA (2, -1, 7), HP_TEST_SHAPE (3, 1), 0, 0);
  hp_test_assert_values (top_idx, HP_TEST_DATA (0, 0, 0), HP_TEST_SHAPE (3, 1), 0, 0);
  hp_test_assert_values (argmin, HP_TEST_DATA (1), HP_TEST_SHAPE (1, 1), 0, 0);
}

static void
test_select_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = x_2x5 (HP_DTYPE_FLOAT64);
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 0));
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 1.0);
  HpTensor *idx = NULL;

  hp_test_assert_error (hp_tensor_topk (x, 6, 1, TRUE, &idx, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "topk: k 6 is more than the 5 elements of dim 1 of float64 [2, 5]");
  g_assert_null (idx);
  hp_test_assert_error (hp_tensor_topk (x, 3, 0, TRUE, &idx, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "topk: k 3 is more than the 2 elements of dim 0 of float64 [2, 5]");
  hp_test_assert_error (hp_tensor_topk (x, 1, 2, TRUE, &idx, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "topk: dim 2 is out of range for a tensor of 2 dims");
  hp_test_assert_error (hp_tensor_max (x, -3, FALSE, &idx, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "max: dim -3 is out of range for a tensor of 2 dims");
  hp_test_assert_error (hp_tensor_min (x, 2, TRUE, &idx, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "min: dim 2 is out of range");
  hp_test_assert_error (hp_tensor_argmax (x, 5, TRUE, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "argmax: dim 5 is out of range");
  hp_test_assert_error (hp_tensor_argmin (scalar, 0, TRUE, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "argmin: dim 0 is out of range for a tensor of 0 dims");
  hp_test_assert_error (hp_tensor_max (empty, 1, FALSE, &idx, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "max: dim 1 of float32 [2, 0] is empty, so there is nothing to pick");
  hp_test_assert_error (hp_tensor_argmin (empty, -1, FALSE, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "argmin: dim -1 of float32 [2, 0] is empty");
  g_assert_null (idx);
  hp_test_assert_values (x, HP_TEST_DATA (3, 1, 4, 1, 5, 9, 2, 6, 5, 3), HP_TEST_SHAPE (2, 5), 0, 0);
  g_assert_false (hp_tensor_get_requires_grad (x));
}

/* cumsum */

static void
test_cumsum_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2, 3, 4, 5, 6),
                                          HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) rows = hp_tensor_cumsum (x, 1, &error);
  g_autoptr(HpTensor) cols = hp_tensor_cumsum (x, -2, &error);
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { (G_GINT64_CONSTANT (1) << 53) + 1, 2 },
                                                2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) id_sums = hp_tensor_cumsum (ids, 0, &error);
  /* 2^24 + 1 is no float32: a float accumulator would lose the ones */
  g_autoptr(HpTensor) f = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (16777216, 1, 1, 1, 1),
                                          HP_TEST_SHAPE (5));
  g_autoptr(HpTensor) f_sums = hp_tensor_cumsum (f, 0, &error);
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, -2.5);
  g_autoptr(HpTensor) scalar_sum = hp_tensor_cumsum (scalar, -1, &error);
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0, 3));
  g_autoptr(HpTensor) empty_sum = hp_tensor_cumsum (empty, 0, &error);
  g_autoptr(GBytes) bytes = NULL;

  g_assert_no_error (error);
  hp_test_assert_values (rows, HP_TEST_DATA (1, 3, 6, 4, 9, 15), HP_TEST_SHAPE (2, 3), 0, 0);
  hp_test_assert_values (cols, HP_TEST_DATA (1, 2, 3, 5, 7, 9), HP_TEST_SHAPE (2, 3), 0, 0);
  g_assert_cmpint (hp_tensor_get_dtype (id_sums), ==, HP_DTYPE_INT64);
  bytes = hp_tensor_get_bytes (id_sums);
  g_assert_cmpint (((const gint64 *) g_bytes_get_data (bytes, NULL))[1], ==,
                   (G_GINT64_CONSTANT (1) << 53) + 3);
  hp_test_assert_values (f_sums, HP_TEST_DATA (16777216, 16777216, 16777218, 16777220, 16777220),
                         HP_TEST_SHAPE (5), 0, 0);
  hp_test_assert_values (scalar_sum, HP_TEST_DATA (-2.5), NULL, 0, 0, 0);
  hp_test_assert_shape (empty_sum, HP_TEST_SHAPE (0, 3));

  hp_test_assert_error (hp_tensor_cumsum (x, 2, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "cumsum: dim 2 is out of range for a tensor of 2 dims");
  hp_test_assert_error (hp_tensor_cumsum (scalar, 1, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "cumsum: dim 1 is out of range for a tensor of 0 dims");
  hp_test_assert_values (x, HP_TEST_DATA (1, 2, 3, 4, 5, 6), HP_TEST_SHAPE (2, 3), 0, 0);
}

/* Gradients */

typedef enum { FN_TOPK, FN_MAX, FN_MIN, FN_CUMSUM } Fn;

typedef struct
{
  Fn fn;
  guint k;
  gint dim;
  gboolean flag;
} Args;

static HpTensor *
call_fn (HpTensor **inputs,
         gpointer   user_data,
         GError   **error)
{
  const Args *a = user_data;

  switch (a->fn)
    {
    case FN_TOPK:
      return hp_tensor_topk (inputs[0], a->k, a->dim, a->flag, NULL, error);
    case FN_MAX:
      return hp_tensor_max (inputs[0], a->dim, a->flag, NULL, error);
    case FN_MIN:
      return hp_tensor_min (inputs[0], a->dim, a->flag, NULL, error);
    case FN_CUMSUM:
      return hp_tensor_cumsum (inputs[0], a->dim, error);
    }
  g_assert_not_reached ();
}

static void
test_gradients (void)
{
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 4, 5), 41, TRUE);
  g_autoptr(HpTensor) column = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 1), 42, TRUE);
  HpTensor *in[] = { x };
  HpTensor *column_in[] = { column };

  for (gint dim = -3; dim < 3; dim++)
    for (int flag = 0; flag < 2; flag++)
      {
        guint d = dim < 0 ? (guint) (dim + 3) : (guint) dim;
        Args topk = { FN_TOPK, hp_tensor_get_shape (x, NULL)[d] - 1, dim, flag };
        Args max = { FN_MAX, 0, dim, flag };
        Args min = { FN_MIN, 0, dim, flag };
        Args cumsum = { FN_CUMSUM, 0, dim, 0 };

        hp_test_gradcheck ("topk", call_fn, &topk, in, 1);
        hp_test_gradcheck ("max", call_fn, &max, in, 1);
        hp_test_gradcheck ("min", call_fn, &min, in, 1);
        hp_test_gradcheck ("cumsum", call_fn, &cumsum, in, 1);
      }
  for (gint dim = -2; dim < 2; dim++)
    {
      Args topk = { FN_TOPK, 1, dim, TRUE };
      Args cumsum = { FN_CUMSUM, 0, dim, 0 };

      hp_test_gradcheck ("topk", call_fn, &topk, column_in, 1);
      hp_test_gradcheck ("cumsum", call_fn, &cumsum, column_in, 1);
    }
}

/* The values' gradient goes to the picked elements alone; the indices
 * and argmax carry no gradient */
static void
test_gradient_scatter (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = x_2x5 (HP_DTYPE_FLOAT32);
  g_autoptr(HpTensor) idx = NULL;
  g_autoptr(HpTensor) top = NULL;
  g_autoptr(HpTensor) argmax = NULL;
  g_autoptr(HpTensor) w = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 10, 100, 1000),
                                          HP_TEST_SHAPE (2, 2));

  hp_tensor_set_requires_grad (x, TRUE);
  top = hp_tensor_topk (x, 2, 1, FALSE, &idx, &error);
  argmax = hp_tensor_argmax (x, 1, FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_get_requires_grad (top));
  g_assert_false (hp_tensor_get_requires_grad (idx));
  g_assert_false (hp_tensor_get_requires_grad (argmax));
  hp_tensor_backward (top, w, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (hp_tensor_get_grad (x)), ==, HP_DTYPE_FLOAT32);
  hp_test_assert_values (hp_tensor_get_grad (x), HP_TEST_DATA (0, 1, 0, 10, 0, 0, 100, 0, 0, 1000),
                         HP_TEST_SHAPE (2, 5), 0, 0);
}

/* Samplers */

/* What row r must draw: the first j with u * sum < p_0 + ... + p_j, u
 * element offset + r of the uniform tensor of the seed */
static void
assert_draws (HpTensor *ids,
              HpTensor *probabilities,
              guint64   seed,
              guint64   offset)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (probabilities, &ndim);
  gint64 n = shape[ndim - 1];
  gsize rows, numel;
  g_autofree gdouble *got = hp_tensor_to_float64_array (ids, &rows);
  g_autofree gdouble *p = hp_tensor_to_float64_array (probabilities, &numel);
  g_autoptr(HpTensor) u = hp_tensor_new_uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (offset + rows),
                                                 0.0, 1.0, seed);
  gsize n_uniform;
  g_autofree gdouble *uniform = hp_tensor_to_float64_array (u, &n_uniform);

  for (gsize r = 0; r < rows; r++)
    {
      gdouble total = 0, running = 0;
      gint64 want = -1;

      for (gint64 j = 0; j < n; j++)
        total += p[r * n + j];
      for (gint64 j = 0; j < n && want < 0; j++)
        {
          running += p[r * n + j];
          if (p[r * n + j] > 0 && uniform[offset + r] * total < running)
            want = j;
        }
      g_assert_cmpfloat (got[r], ==, (gdouble) want);
    }
}

static void
test_sample_deterministic (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) p = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0.1, 0.2, 0.3, 0.4,
                                                                          1, 1, 1, 1,
                                                                          0, 3, 0, 1,
                                                                          5, 0, 0, 0,
                                                                          1, 2, 3, 4,
                                                                          0, 0, 0, 2),
                                          HP_TEST_SHAPE (2, 3, 4));
  g_autoptr(HpTensor) a = hp_tensor_sample_from_probabilities (p, 1234, 17, &error);
  g_autoptr(HpTensor) b = hp_tensor_sample_from_probabilities (p, 1234, 17, &error);
  g_autoptr(HpTensor) c = hp_tensor_sample_from_probabilities (p, 1234, 18, &error);

  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (a), ==, HP_DTYPE_INT64);
  hp_test_assert_shape (a, HP_TEST_SHAPE (2, 3));
  hp_test_assert_identical (a, b);
  assert_draws (a, p, 1234, 17);
  assert_draws (c, p, 1234, 18);
  g_assert_false (hp_tensor_get_requires_grad (a));
}

/* Over many rows (fixed seed: the same counts every run), the draws
 * follow the distribution; with 40000 rows the standard deviation of a
 * frequency is at most 0.0025, and the bound is 0.01 */
static void
test_sample_frequencies (void)
{
  enum { ROWS = 40000, N = 5 };
  static const gdouble weights[N] = { 0.05, 0.0, 0.45, 0.2, 0.3 };
  g_autoptr(GError) error = NULL;
  g_autofree gdouble *data = g_new (gdouble, ROWS * N);
  g_autoptr(HpTensor) p = NULL;
  g_autoptr(HpTensor) ids = NULL;
  g_autofree gdouble *got = NULL;
  gsize count[N] = { 0 };
  gsize n_got;

  for (gsize i = 0; i < ROWS * N; i++)
    data[i] = weights[i % N] * 3;    /* not normalised */
  p = hp_test_tensor (HP_DTYPE_FLOAT32, data, ROWS * N, HP_TEST_SHAPE (ROWS, N));
  ids = hp_tensor_sample_from_probabilities (p, 99, 1000, &error);
  g_assert_no_error (error);
  got = hp_tensor_to_float64_array (ids, &n_got);
  for (gsize r = 0; r < ROWS; r++)
    count[(gsize) got[r]]++;
  g_assert_cmpuint (count[1], ==, 0);
  for (gsize j = 0; j < N; j++)
    g_assert_cmpfloat (fabs ((gdouble) count[j] / ROWS - weights[j]), <, 0.01);
}

/* One row drawn again and again with the offsets of a decoding loop
 * follows the distribution too (at most 0.0035 standard deviation over
 * 20000 offsets, the bound 0.015) */
static void
test_sample_offsets (void)
{
  enum { DRAWS = 20000, N = 4 };
  static const gdouble weights[N] = { 0.25, 0.5, 0.0, 0.25 };
  g_autoptr(HpTensor) p = hp_test_tensor (HP_DTYPE_FLOAT64, weights, N, HP_TEST_SHAPE (1, N));
  gsize count[N] = { 0 };

  for (guint64 offset = 0; offset < DRAWS; offset++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) id = hp_tensor_sample_from_probabilities (p, 4321, offset, &error);
      g_autoptr(GBytes) bytes = NULL;

      g_assert_no_error (error);
      bytes = hp_tensor_get_bytes (id);
      count[((const gint64 *) g_bytes_get_data (bytes, NULL))[0]]++;
    }
  g_assert_cmpuint (count[2], ==, 0);
  for (gsize j = 0; j < N; j++)
    g_assert_cmpfloat (fabs ((gdouble) count[j] / DRAWS - weights[j]), <, 0.015);
}

static void
test_sample_one_hot (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) p = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (0, 0, 1, 0), HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) logits = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (-INFINITY, 2, -INFINITY),
                                               HP_TEST_SHAPE (1, 3));

  for (guint64 offset = 0; offset < 200; offset++)
    {
      g_autoptr(HpTensor) id = hp_tensor_sample_from_probabilities (p, offset * 31, offset, &error);
      g_autoptr(HpTensor) from_logits = hp_tensor_sample_from_logits (logits, 5, offset, &error);

      g_assert_no_error (error);
      hp_test_assert_shape (id, NULL, 0);
      hp_test_assert_values (id, HP_TEST_DATA (2), NULL, 0, 0, 0);
      hp_test_assert_values (from_logits, HP_TEST_DATA (1), HP_TEST_SHAPE (1), 0, 0);
    }
}

static void
test_sample_logits (void)
{
  static const HpDType dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64 };

  for (gsize t = 0; t < G_N_ELEMENTS (dtypes); t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) logits = hp_test_randn (dtypes[t], HP_TEST_SHAPE (50, 7, 11), 8, FALSE);
      g_autoptr(HpTensor) scaled = hp_tensor_scale (logits, 3.0, &error);
      g_autoptr(HpTensor) p = hp_tensor_softmax (scaled, -1, &error);
      g_autoptr(HpTensor) from_logits = hp_tensor_sample_from_logits (scaled, 77, 3, &error);
      g_autoptr(HpTensor) from_p = hp_tensor_sample_from_probabilities (p, 77, 3, &error);

      g_assert_no_error (error);
      hp_test_assert_shape (from_logits, HP_TEST_SHAPE (50, 7));
      hp_test_assert_identical (from_logits, from_p);
      assert_draws (from_p, p, 77, 3);
    }
}

static void
test_sample_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 1, 2 }, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) negative = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0.5, 0.5, 1, -0.5),
                                                 HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) zero = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (0.5, 0.5, 0, 0),
                                             HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) nan = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (NAN, 1), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) inf = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (INFINITY, 1), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) all_neg_inf = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0, 1, -INFINITY, -INFINITY),
                                                    HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) huge = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1e308, 1e308), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 1.0);

  hp_test_assert_error (hp_tensor_sample_from_probabilities (huge, 1, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "sample_from_probabilities: row 0 sums to inf");
  hp_test_assert_error (hp_tensor_sample_from_probabilities (ids, 1, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "sample_from_probabilities: needs a floating point tensor, got int64 [2]");
  hp_test_assert_error (hp_tensor_sample_from_logits (ids, 1, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "sample_from_logits: needs a floating point tensor, got int64 [2]");
  hp_test_assert_error (hp_tensor_sample_from_probabilities (negative, 1, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "sample_from_probabilities: row 1 holds the probability -0.5");
  hp_test_assert_error (hp_tensor_sample_from_probabilities (zero, 1, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "sample_from_probabilities: row 1 sums to 0");
  hp_test_assert_error (hp_tensor_sample_from_probabilities (nan, 1, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "sample_from_probabilities: row 0 holds the probability nan");
  hp_test_assert_error (hp_tensor_sample_from_probabilities (inf, 1, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "sample_from_probabilities: row 0 holds the probability inf");
  hp_test_assert_error (hp_tensor_sample_from_logits (nan, 1, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "sample_from_logits: row 0 holds the logit nan");
  hp_test_assert_error (hp_tensor_sample_from_logits (inf, 1, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "sample_from_logits: row 0 holds the logit inf");
  hp_test_assert_error (hp_tensor_sample_from_logits (all_neg_inf, 1, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "sample_from_logits: row 1 is all -inf");
  hp_test_assert_error (hp_tensor_sample_from_logits (scalar, 1, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "sample_from_logits: needs a tensor of at least 1 dim (the categories), got a 0-d tensor");
  hp_test_assert_error (hp_tensor_sample_from_probabilities (scalar, 1, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "sample_from_probabilities: needs a tensor of at least 1 dim");
  hp_test_assert_values (negative, HP_TEST_DATA (0.5, 0.5, 1, -0.5), HP_TEST_SHAPE (2, 2), 0, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/select/topk/values", test_topk_values);
  g_test_add_func ("/select/max-min/values", test_max_min_values);
  g_test_add_func ("/select/reference", test_reference);
  g_test_add_func ("/select/int64-exact", test_int64_exact);
  g_test_add_func ("/select/nan", test_nan);
  g_test_add_func ("/select/size-one", test_size_one);
  g_test_add_func ("/select/errors", test_select_errors);
  g_test_add_func ("/select/cumsum/values", test_cumsum_values);
  g_test_add_func ("/select/gradients", test_gradients);
  g_test_add_func ("/select/gradient-scatter", test_gradient_scatter);
  g_test_add_func ("/select/sample/deterministic", test_sample_deterministic);
  g_test_add_func ("/select/sample/frequencies", test_sample_frequencies);
  g_test_add_func ("/select/sample/offsets", test_sample_offsets);
  g_test_add_func ("/select/sample/one-hot", test_sample_one_hot);
  g_test_add_func ("/select/sample/logits", test_sample_logits);
  g_test_add_func ("/select/sample/errors", test_sample_errors);

  return g_test_run ();
}
