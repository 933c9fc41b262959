/* test-index.c: values, gradients and bad input of gather, index_select,
 * expand, repeat, tril, triu and to_dtype
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>

#include "hp-test-utils.h"

static const HpDType all_dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64, HP_DTYPE_INT64 };

/* 0, 1, 2, ... in @dtype and @shape */
static HpTensor *
counting (HpDType       dtype,
          const gint64 *shape,
          guint         ndim)
{
  gint64 n = 1;
  g_autofree gdouble *values = NULL;

  for (guint i = 0; i < ndim; i++)
    n *= shape[i];
  values = g_new (gdouble, MAX (n, 1));
  for (gint64 i = 0; i < n; i++)
    values[i] = (gdouble) i;

  return hp_test_tensor (dtype, values, n, shape, ndim);
}

/* Asserts @result NULL with @code and @message_part, and that @self
 * still holds @before and has no gradient */
static void
assert_error_unchanged (HpTensor     *result,
                        GError      **error,
                        gint          code,
                        const gchar  *message_part,
                        HpTensor     *self,
                        HpTensor     *before)
{
  hp_test_assert_error (result, error, code, message_part);
  hp_test_assert_identical (self, before);
  g_assert_null (hp_tensor_get_grad (self));
}

/* The elements of an int64 tensor @t must be @want */
static void
assert_int64s (HpTensor     *t,
               const gint64 *want,
               gsize         n)
{
  g_autoptr(GBytes) bytes = hp_tensor_get_bytes (t);
  gsize size;
  const gint64 *have = g_bytes_get_data (bytes, &size);

  g_assert_cmpint (hp_tensor_get_dtype (t), ==, HP_DTYPE_INT64);
  g_assert_cmpuint (size, ==, n * sizeof (gint64));
  for (gsize i = 0; i < n; i++)
    g_assert_cmpint (have[i], ==, want[i]);
}

/* Element @i of a float32 tensor */
static gfloat
float32_at (HpTensor *t,
            gsize     i)
{
  g_autoptr(GBytes) bytes = hp_tensor_get_bytes (t);

  g_assert_cmpint (hp_tensor_get_dtype (t), ==, HP_DTYPE_FLOAT32);
  return ((const gfloat *) g_bytes_get_data (bytes, NULL))[i];
}

/* Gather */

static void
test_gather_values (void)
{
  static const gint64 cols[] = { 0, 3, 1, 1, 2, 0 }, rows[] = { 2, 0, 1, 0 };
  static const gint64 narrow[] = { 3, 2 }, wide[] = { 3, 3, 0, 1, 2, 1 };
  g_autoptr(HpTensor) by_cols = hp_test_tensor_ids (cols, 6, HP_TEST_SHAPE (3, 2));
  g_autoptr(HpTensor) by_rows = hp_test_tensor_ids (rows, 4, HP_TEST_SHAPE (1, 4));
  g_autoptr(HpTensor) shorter = hp_test_tensor_ids (narrow, 2, HP_TEST_SHAPE (2, 1));
  g_autoptr(HpTensor) longer = hp_test_tensor_ids (wide, 6, HP_TEST_SHAPE (1, 6));

  for (gsize t = 0; t < G_N_ELEMENTS (all_dtypes); t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) x = counting (all_dtypes[t], HP_TEST_SHAPE (3, 4));
      g_autoptr(HpTensor) a = hp_tensor_gather (x, 1, by_cols, &error);
      g_autoptr(HpTensor) a_neg = hp_tensor_gather (x, -1, by_cols, &error);
      g_autoptr(HpTensor) b = hp_tensor_gather (x, 0, by_rows, &error);
      g_autoptr(HpTensor) c = hp_tensor_gather (x, 1, shorter, &error);
      g_autoptr(HpTensor) d = hp_tensor_gather (x, 1, longer, &error);

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (a), ==, all_dtypes[t]);
      /* out[i][j] = x[i][index[i][j]] = 4 i + index[i][j] */
      hp_test_assert_values (a, HP_TEST_DATA (0, 3, 5, 5, 10, 8), HP_TEST_SHAPE (3, 2), 0, 0);
      hp_test_assert_values (a_neg, HP_TEST_DATA (0, 3, 5, 5, 10, 8), HP_TEST_SHAPE (3, 2), 0, 0);
      /* out[0][j] = x[index[0][j]][j] */
      hp_test_assert_values (b, HP_TEST_DATA (8, 1, 6, 3), HP_TEST_SHAPE (1, 4), 0, 0);
      /* an index shorter than self in the other dim reads its first rows */
      hp_test_assert_values (c, HP_TEST_DATA (3, 6), HP_TEST_SHAPE (2, 1), 0, 0);
      /* and it may be longer in the dim it gathers along */
      hp_test_assert_values (d, HP_TEST_DATA (3, 3, 0, 1, 2, 1), HP_TEST_SHAPE (1, 6), 0, 0);
    }
}

static void
test_gather_three_dims (void)
{
  static const gint64 idx[] = { 1, 0, 2, 2, 0, 1, 1, 1, 0, 2, 2, 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = counting (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3, 4));
  g_autoptr(HpTensor) index = hp_test_tensor_ids (idx, 12, HP_TEST_SHAPE (2, 2, 3));
  g_autoptr(HpTensor) got = hp_tensor_gather (x, 1, index, &error);
  gdouble want[12];

  g_assert_no_error (error);
  /* out[i][j][k] = x[i][index[i][j][k]][k] = 12 i + 4 index + k */
  for (gint i = 0; i < 2; i++)
    for (gint j = 0; j < 2; j++)
      for (gint k = 0; k < 3; k++)
        want[(i * 2 + j) * 3 + k] = 12 * i + 4 * idx[(i * 2 + j) * 3 + k] + k;
  hp_test_assert_values (got, want, 12, HP_TEST_SHAPE (2, 2, 3), 0, 0);
}

static void
test_gather_edge_shapes (void)
{
  static const gint64 zero[] = { 0, 0, 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = counting (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3, 4));
  g_autoptr(HpTensor) no_index = hp_tensor_new_zeros (HP_DTYPE_INT64, HP_TEST_SHAPE (0, 2));
  g_autoptr(HpTensor) empty_x = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0, 4));
  g_autoptr(HpTensor) column = counting (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 1));
  g_autoptr(HpTensor) zeros = hp_test_tensor_ids (zero, 3, HP_TEST_SHAPE (3, 1));
  g_autoptr(HpTensor) r1 = hp_tensor_gather (x, 1, no_index, &error);
  g_autoptr(HpTensor) r2 = hp_tensor_gather (empty_x, 0, no_index, &error);
  g_autoptr(HpTensor) r3 = hp_tensor_gather (column, 1, zeros, &error);

  g_assert_no_error (error);
  hp_test_assert_shape (r1, HP_TEST_SHAPE (0, 2));
  hp_test_assert_shape (r2, HP_TEST_SHAPE (0, 2));
  hp_test_assert_values (r3, HP_TEST_DATA (0, 1, 2), HP_TEST_SHAPE (3, 1), 0, 0);
}

static void
test_gather_bad_input (void)
{
  static const gint64 high[] = { 0, 4 }, low[] = { -1, 0 }, ok[] = { 0, 1 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = counting (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 4));
  g_autoptr(HpTensor) before = hp_tensor_detach (x);
  g_autoptr(HpTensor) index = hp_test_tensor_ids (ok, 2, HP_TEST_SHAPE (1, 2));
  g_autoptr(HpTensor) index_before = hp_tensor_detach (index);
  g_autoptr(HpTensor) index_high = hp_test_tensor_ids (high, 2, HP_TEST_SHAPE (1, 2));
  g_autoptr(HpTensor) index_low = hp_test_tensor_ids (low, 2, HP_TEST_SHAPE (2, 1));
  g_autoptr(HpTensor) index_1d = hp_test_tensor_ids (ok, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) index_wide = hp_tensor_new_zeros (HP_DTYPE_INT64, HP_TEST_SHAPE (1, 5));
  g_autoptr(HpTensor) index_float = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 2));
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 1.0);
  g_autoptr(HpTensor) scalar_index = hp_tensor_new_zeros (HP_DTYPE_INT64, NULL, 0);

  hp_tensor_set_requires_grad (x, TRUE);
  assert_error_unchanged (hp_tensor_gather (x, 2, index, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                          "gather: dim 2 is out of range for a tensor of 2 dims", x, before);
  assert_error_unchanged (hp_tensor_gather (x, -3, index, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "gather: dim -3 is out of range", x, before);
  assert_error_unchanged (hp_tensor_gather (x, 1, index_float, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT,
                          "gather: index must be int64, got float64 [1, 2]", x, before);
  assert_error_unchanged (hp_tensor_gather (x, 1, index_1d, &error), &error, HP_ERROR_SHAPE,
                          "gather: index int64 [2] must have the 2 dims of self float64 [3, 4]",
                          x, before);
  /* longer than self in a dim it does not gather along */
  assert_error_unchanged (hp_tensor_gather (x, 0, index_wide, &error), &error, HP_ERROR_SHAPE,
                          "and be no longer in any dim but 0", x, before);
  assert_error_unchanged (hp_tensor_gather (x, 1, index_high, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT,
                          "gather: index 4 is out of range for dim 1 of float64 [3, 4]", x, before);
  assert_error_unchanged (hp_tensor_gather (x, 0, index_low, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "gather: index -1 is out of range for dim 0",
                          x, before);
  assert_error_unchanged (hp_tensor_gather (scalar, 0, scalar_index, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "gather: dim 0 is out of range", scalar,
                          scalar);
  hp_test_assert_identical (index, index_before);
}

/* Index select */

static void
test_index_select_values (void)
{
  static const gint64 rows[] = { 2, 0, 2 }, cols[] = { 3, 0 };
  g_autoptr(HpTensor) by_rows = hp_test_tensor_ids (rows, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) by_cols = hp_test_tensor_ids (cols, 2, HP_TEST_SHAPE (2));

  for (gsize t = 0; t < G_N_ELEMENTS (all_dtypes); t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) x = counting (all_dtypes[t], HP_TEST_SHAPE (3, 4));
      g_autoptr(HpTensor) y = counting (all_dtypes[t], HP_TEST_SHAPE (2, 4, 2));
      g_autoptr(HpTensor) a = hp_tensor_index_select (x, 0, by_rows, &error);
      g_autoptr(HpTensor) b = hp_tensor_index_select (x, -1, by_cols, &error);
      g_autoptr(HpTensor) c = hp_tensor_index_select (y, 1, by_cols, &error);

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (a), ==, all_dtypes[t]);
      hp_test_assert_values (a, HP_TEST_DATA (8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11),
                             HP_TEST_SHAPE (3, 4), 0, 0);
      hp_test_assert_values (b, HP_TEST_DATA (3, 0, 7, 4, 11, 8), HP_TEST_SHAPE (3, 2), 0, 0);
      /* y[i][j][k] = 8 i + 2 j + k */
      hp_test_assert_values (c, HP_TEST_DATA (6, 7, 0, 1, 14, 15, 8, 9), HP_TEST_SHAPE (2, 2, 2),
                             0, 0);
    }
}

static void
test_index_select_edge_shapes (void)
{
  static const gint64 zero[] = { 0, 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = counting (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 4));
  g_autoptr(HpTensor) none = hp_tensor_new_zeros (HP_DTYPE_INT64, HP_TEST_SHAPE (0));
  g_autoptr(HpTensor) empty_x = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (0, 4));
  g_autoptr(HpTensor) one = counting (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 3));
  g_autoptr(HpTensor) zeros = hp_test_tensor_ids (zero, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) r1 = hp_tensor_index_select (x, 1, none, &error);
  g_autoptr(HpTensor) r2 = hp_tensor_index_select (empty_x, 1, zeros, &error);
  g_autoptr(HpTensor) r3 = hp_tensor_index_select (one, 0, zeros, &error);

  g_assert_no_error (error);
  hp_test_assert_shape (r1, HP_TEST_SHAPE (3, 0));
  hp_test_assert_shape (r2, HP_TEST_SHAPE (0, 2));
  hp_test_assert_values (r3, HP_TEST_DATA (0, 1, 2, 0, 1, 2), HP_TEST_SHAPE (2, 3), 0, 0);
}

static void
test_index_select_bad_input (void)
{
  static const gint64 high[] = { 0, 3 }, low[] = { -1 }, ok[] = { 0, 1 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = counting (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3, 4));
  g_autoptr(HpTensor) before = hp_tensor_detach (x);
  g_autoptr(HpTensor) index = hp_test_tensor_ids (ok, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) index_high = hp_test_tensor_ids (high, 2, HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) index_low = hp_test_tensor_ids (low, 1, HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) index_2d = hp_test_tensor_ids (ok, 2, HP_TEST_SHAPE (1, 2));
  g_autoptr(HpTensor) index_float = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2));

  hp_tensor_set_requires_grad (x, TRUE);
  assert_error_unchanged (hp_tensor_index_select (x, 2, index, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT,
                          "index_select: dim 2 is out of range for a tensor of 2 dims", x, before);
  assert_error_unchanged (hp_tensor_index_select (x, 0, index_float, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "index_select: index must be int64", x, before);
  assert_error_unchanged (hp_tensor_index_select (x, 0, index_2d, &error), &error, HP_ERROR_SHAPE,
                          "index_select: index must have one dim, got int64 [1, 2]", x, before);
  assert_error_unchanged (hp_tensor_index_select (x, 0, index_high, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT,
                          "index_select: index 3 is out of range for dim 0 of float32 [3, 4]",
                          x, before);
  assert_error_unchanged (hp_tensor_index_select (x, -1, index_low, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "index_select: index -1 is out of range for dim 1",
                          x, before);
  /* an empty self with a huge dim: the selection would hold too many
   * elements (found before the index values are read) */
  {
    g_autoptr(HpTensor) wide = hp_tensor_new_zeros (HP_DTYPE_FLOAT32,
                                                    HP_TEST_SHAPE (0, G_GINT64_CONSTANT (1) << 60));
    g_autoptr(HpTensor) many = hp_tensor_new_zeros (HP_DTYPE_INT64, HP_TEST_SHAPE (32));

    hp_test_assert_error (hp_tensor_index_select (wide, 0, many, &error), &error, HP_ERROR_SHAPE,
                          "index_select: shape [32, 1152921504606846976] has too many elements");
  }
}

/* Expand */

static void
test_expand_values (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (all_dtypes); t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) col = counting (all_dtypes[t], HP_TEST_SHAPE (3, 1));
      g_autoptr(HpTensor) row = counting (all_dtypes[t], HP_TEST_SHAPE (3));
      g_autoptr(HpTensor) a = hp_tensor_expand (col, HP_TEST_SHAPE (3, 2), &error);
      g_autoptr(HpTensor) b = hp_tensor_expand (col, HP_TEST_SHAPE (2, -1, 2), &error);
      g_autoptr(HpTensor) c = hp_tensor_expand (row, HP_TEST_SHAPE (2, 3), &error);
      g_autoptr(HpTensor) same = hp_tensor_expand (row, HP_TEST_SHAPE (-1), &error);

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (a), ==, all_dtypes[t]);
      hp_test_assert_values (a, HP_TEST_DATA (0, 0, 1, 1, 2, 2), HP_TEST_SHAPE (3, 2), 0, 0);
      hp_test_assert_values (b, HP_TEST_DATA (0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2),
                             HP_TEST_SHAPE (2, 3, 2), 0, 0);
      hp_test_assert_values (c, HP_TEST_DATA (0, 1, 2, 0, 1, 2), HP_TEST_SHAPE (2, 3), 0, 0);
      /* a new tensor even when nothing expands */
      g_assert_true (same != row);
      hp_test_assert_identical (same, row);
    }
}

static void
test_expand_edge_shapes (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 7.0);
  g_autoptr(HpTensor) col = counting (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 1));
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0, 1));
  g_autoptr(HpTensor) r1 = hp_tensor_expand (scalar, HP_TEST_SHAPE (2, 2), &error);
  g_autoptr(HpTensor) r2 = hp_tensor_expand (col, HP_TEST_SHAPE (2, 0), &error);
  g_autoptr(HpTensor) r3 = hp_tensor_expand (empty, HP_TEST_SHAPE (3, -1, 4), &error);
  g_autoptr(HpTensor) r4 = hp_tensor_expand (scalar, NULL, 0, &error);

  g_assert_no_error (error);
  hp_test_assert_values (r1, HP_TEST_DATA (7, 7, 7, 7), HP_TEST_SHAPE (2, 2), 0, 0);
  hp_test_assert_shape (r2, HP_TEST_SHAPE (2, 0));
  hp_test_assert_shape (r3, HP_TEST_SHAPE (3, 0, 4));
  hp_test_assert_values (r4, HP_TEST_DATA (7), NULL, 0, 0, 0);
}

static void
test_expand_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = counting (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 1));
  g_autoptr(HpTensor) before = hp_tensor_detach (x);
  gint64 many[HP_TENSOR_MAX_NDIM + 1];

  for (guint i = 0; i < G_N_ELEMENTS (many); i++)
    many[i] = 1;
  hp_tensor_set_requires_grad (x, TRUE);
  assert_error_unchanged (hp_tensor_expand (x, HP_TEST_SHAPE (4, 2), &error), &error, HP_ERROR_SHAPE,
                          "expand: cannot expand float64 [3, 1] to [4, 2]: only dims of size 1 "
                          "expand", x, before);
  assert_error_unchanged (hp_tensor_expand (x, HP_TEST_SHAPE (3), &error), &error, HP_ERROR_SHAPE,
                          "expand: cannot expand float64 [3, 1] to [3]: the shape has fewer dims",
                          x, before);
  assert_error_unchanged (hp_tensor_expand (x, HP_TEST_SHAPE (-1, 3, 1), &error), &error,
                          HP_ERROR_INVALID_ARGUMENT,
                          "a new leading dim needs a size that is not negative", x, before);
  assert_error_unchanged (hp_tensor_expand (x, HP_TEST_SHAPE (3, -2), &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "a size is negative and not -1", x, before);
  assert_error_unchanged (hp_tensor_expand (x, HP_TEST_SHAPE (G_MAXINT64 / 4, 3, 4), &error), &error,
                          HP_ERROR_SHAPE, "expand: shape", x, before);
  hp_test_assert_error (hp_tensor_expand (x, many, G_N_ELEMENTS (many), &error), &error,
                        HP_ERROR_SHAPE, "expand: a tensor has at most 16 dims, not 17");
}

/* Repeat */

static void
test_repeat_values (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (all_dtypes); t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) x = counting (all_dtypes[t], HP_TEST_SHAPE (2, 3));
      g_autoptr(HpTensor) a = hp_tensor_repeat (x, HP_TEST_SHAPE (2, 1), &error);
      g_autoptr(HpTensor) b = hp_tensor_repeat (x, HP_TEST_SHAPE (1, 2), &error);
      g_autoptr(HpTensor) c = hp_tensor_repeat (x, HP_TEST_SHAPE (2, 1, 2), &error);
      g_autoptr(HpTensor) same = hp_tensor_repeat (x, HP_TEST_SHAPE (1, 1), &error);

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (a), ==, all_dtypes[t]);
      hp_test_assert_values (a, HP_TEST_DATA (0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5),
                             HP_TEST_SHAPE (4, 3), 0, 0);
      hp_test_assert_values (b, HP_TEST_DATA (0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5),
                             HP_TEST_SHAPE (2, 6), 0, 0);
      hp_test_assert_values (c, HP_TEST_DATA (0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5,
                                              0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5),
                             HP_TEST_SHAPE (2, 2, 6), 0, 0);
      g_assert_true (same != x);
      hp_test_assert_identical (same, x);
    }
}

static void
test_repeat_edge_shapes (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 5.0);
  g_autoptr(HpTensor) x = counting (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 2));
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0, 2));
  g_autoptr(HpTensor) r1 = hp_tensor_repeat (scalar, HP_TEST_SHAPE (3), &error);
  g_autoptr(HpTensor) r2 = hp_tensor_repeat (x, HP_TEST_SHAPE (3, 0), &error);
  g_autoptr(HpTensor) r3 = hp_tensor_repeat (empty, HP_TEST_SHAPE (2, 3), &error);
  g_autoptr(HpTensor) r4 = hp_tensor_repeat (x, HP_TEST_SHAPE (3, 1), &error);
  g_autoptr(HpTensor) r5 = hp_tensor_repeat (scalar, NULL, 0, &error);

  g_assert_no_error (error);
  hp_test_assert_values (r1, HP_TEST_DATA (5, 5, 5), HP_TEST_SHAPE (3), 0, 0);
  hp_test_assert_shape (r2, HP_TEST_SHAPE (3, 0));
  hp_test_assert_shape (r3, HP_TEST_SHAPE (0, 6));
  hp_test_assert_values (r4, HP_TEST_DATA (0, 1, 0, 1, 0, 1), HP_TEST_SHAPE (3, 2), 0, 0);
  hp_test_assert_values (r5, HP_TEST_DATA (5), NULL, 0, 0, 0);
}

static void
test_repeat_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = counting (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) before = hp_tensor_detach (x);
  gint64 many[HP_TENSOR_MAX_NDIM + 1];

  for (guint i = 0; i < G_N_ELEMENTS (many); i++)
    many[i] = 1;
  hp_tensor_set_requires_grad (x, TRUE);
  assert_error_unchanged (hp_tensor_repeat (x, HP_TEST_SHAPE (2), &error), &error,
                          HP_ERROR_INVALID_ARGUMENT,
                          "repeat: cannot repeat float64 [2, 3] by [2]: needs a count for every dim",
                          x, before);
  assert_error_unchanged (hp_tensor_repeat (x, HP_TEST_SHAPE (2, -1), &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "a count is negative", x, before);
  /* the size of a dim overflows */
  assert_error_unchanged (hp_tensor_repeat (x, HP_TEST_SHAPE (1, G_MAXINT64 / 2), &error), &error,
                          HP_ERROR_SHAPE,
                          "repeat: cannot repeat float64 [2, 3] by [1, 4611686018427387903]: "
                          "the result would hold too many elements", x, before);
  /* every dim fits, their product does not */
  assert_error_unchanged (hp_tensor_repeat (x, HP_TEST_SHAPE (G_MAXINT32, G_MAXINT32), &error),
                          &error, HP_ERROR_SHAPE, "the result would hold too many elements",
                          x, before);
  hp_test_assert_error (hp_tensor_repeat (x, many, G_N_ELEMENTS (many), &error), &error,
                        HP_ERROR_SHAPE, "repeat: a tensor has at most 16 dims, not 17");
}

/* Tril and triu */

static void
test_tri_values (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (all_dtypes); t++)
    {
      g_autoptr(GError) error = NULL;
      /* 1 .. 12, so that a kept element is never 0 */
      g_autoptr(HpTensor) zero_based = counting (all_dtypes[t], HP_TEST_SHAPE (3, 4));
      g_autoptr(HpTensor) one = hp_tensor_new_ones (all_dtypes[t], HP_TEST_SHAPE (3, 4));
      g_autoptr(HpTensor) x = hp_tensor_add (zero_based, one, &error);
      g_autoptr(HpTensor) l0 = hp_tensor_tril (x, 0, &error);
      g_autoptr(HpTensor) l1 = hp_tensor_tril (x, 1, &error);
      g_autoptr(HpTensor) lm1 = hp_tensor_tril (x, -1, &error);
      g_autoptr(HpTensor) u0 = hp_tensor_triu (x, 0, &error);
      g_autoptr(HpTensor) u1 = hp_tensor_triu (x, 1, &error);
      g_autoptr(HpTensor) um1 = hp_tensor_triu (x, -1, &error);
      g_autoptr(HpTensor) l_all = hp_tensor_tril (x, G_MAXINT64, &error);
      g_autoptr(HpTensor) l_none = hp_tensor_tril (x, G_MININT64, &error);
      g_autoptr(HpTensor) u_all = hp_tensor_triu (x, G_MININT64, &error);
      g_autoptr(HpTensor) u_none = hp_tensor_triu (x, 4, &error);

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (l0), ==, all_dtypes[t]);
      hp_test_assert_values (l0, HP_TEST_DATA (1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0),
                             HP_TEST_SHAPE (3, 4), 0, 0);
      hp_test_assert_values (l1, HP_TEST_DATA (1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12),
                             HP_TEST_SHAPE (3, 4), 0, 0);
      hp_test_assert_values (lm1, HP_TEST_DATA (0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0),
                             HP_TEST_SHAPE (3, 4), 0, 0);
      hp_test_assert_values (u0, HP_TEST_DATA (1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12),
                             HP_TEST_SHAPE (3, 4), 0, 0);
      hp_test_assert_values (u1, HP_TEST_DATA (0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12),
                             HP_TEST_SHAPE (3, 4), 0, 0);
      hp_test_assert_values (um1, HP_TEST_DATA (1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12),
                             HP_TEST_SHAPE (3, 4), 0, 0);
      hp_test_assert_identical (l_all, x);
      hp_test_assert_identical (u_all, x);
      hp_test_assert_values (l_none, HP_TEST_DATA (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                             HP_TEST_SHAPE (3, 4), 0, 0);
      hp_test_assert_values (u_none, HP_TEST_DATA (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                             HP_TEST_SHAPE (3, 4), 0, 0);
    }
}

static void
test_tri_edge_shapes (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) batch = counting (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 2, 2));
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3, 0, 2));
  g_autoptr(HpTensor) one = counting (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1, 1));
  g_autoptr(HpTensor) r1 = hp_tensor_tril (batch, 0, &error);
  g_autoptr(HpTensor) r2 = hp_tensor_triu (batch, 0, &error);
  g_autoptr(HpTensor) r3 = hp_tensor_tril (empty, 0, &error);
  g_autoptr(HpTensor) r4 = hp_tensor_triu (one, 1, &error);

  g_assert_no_error (error);
  hp_test_assert_values (r1, HP_TEST_DATA (0, 0, 2, 3, 4, 0, 6, 7), HP_TEST_SHAPE (2, 2, 2), 0, 0);
  hp_test_assert_values (r2, HP_TEST_DATA (0, 1, 0, 3, 4, 5, 0, 7), HP_TEST_SHAPE (2, 2, 2), 0, 0);
  hp_test_assert_shape (r3, HP_TEST_SHAPE (3, 0, 2));
  hp_test_assert_values (r4, HP_TEST_DATA (0), HP_TEST_SHAPE (1, 1), 0, 0);
}

static void
test_tri_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = counting (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) before = hp_tensor_detach (x);
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 1.0);

  hp_tensor_set_requires_grad (x, TRUE);
  assert_error_unchanged (hp_tensor_tril (x, 0, &error), &error, HP_ERROR_SHAPE,
                          "tril: needs a tensor of at least 2 dims, got float64 [3]", x, before);
  assert_error_unchanged (hp_tensor_triu (x, 0, &error), &error, HP_ERROR_SHAPE,
                          "triu: needs a tensor of at least 2 dims, got float64 [3]", x, before);
  assert_error_unchanged (hp_tensor_triu (scalar, 0, &error), &error, HP_ERROR_SHAPE,
                          "triu: needs a tensor of at least 2 dims", scalar, scalar);
}

/* To dtype */

static void
test_to_dtype_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) f = hp_test_tensor (HP_DTYPE_FLOAT64,
                                          HP_TEST_DATA (1.5, -1.5, 2.7, -2.7, 0, -0.2, 1e15, 0.1),
                                          HP_TEST_SHAPE (2, 4));
  g_autoptr(HpTensor) as_int = hp_tensor_to_dtype (f, HP_DTYPE_INT64, &error);
  g_autoptr(HpTensor) as_f32 = hp_tensor_to_dtype (f, HP_DTYPE_FLOAT32, &error);
  g_autoptr(HpTensor) back = hp_tensor_to_dtype (as_f32, HP_DTYPE_FLOAT64, &error);
  g_autoptr(HpTensor) same = hp_tensor_to_dtype (f, HP_DTYPE_FLOAT64, &error);
  g_autoptr(HpTensor) f32_int = hp_tensor_to_dtype (as_f32, HP_DTYPE_INT64, &error);
  static const gint64 big[] = { 16777217, -3, G_MAXINT64, G_MININT64 };
  g_autoptr(HpTensor) ids = hp_test_tensor_ids (big, 4, HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) ids_f32 = hp_tensor_to_dtype (ids, HP_DTYPE_FLOAT32, &error);
  g_autoptr(HpTensor) ids_f64 = hp_tensor_to_dtype (ids, HP_DTYPE_FLOAT64, &error);
  g_autoptr(HpTensor) ids_same = hp_tensor_to_dtype (ids, HP_DTYPE_INT64, &error);
  /* the extremes of int64 that a double holds */
  g_autoptr(HpTensor) edge = hp_test_tensor (HP_DTYPE_FLOAT64,
                                             HP_TEST_DATA (-9223372036854775808.0,
                                                           9223372036854774784.0),
                                             HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) edge_int = hp_tensor_to_dtype (edge, HP_DTYPE_INT64, &error);
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0, 3));
  g_autoptr(HpTensor) empty_int = hp_tensor_to_dtype (empty, HP_DTYPE_INT64, &error);

  g_assert_no_error (error);
  /* truncation toward zero */
  assert_int64s (as_int, (const gint64[]) { 1, -1, 2, -2, 0, 0, 1000000000000000, 0 }, 8);
  hp_test_assert_shape (as_int, HP_TEST_SHAPE (2, 4));

  g_assert_cmpfloat (float32_at (as_f32, 7), ==, 0.1f);
  g_assert_cmpfloat (float32_at (as_f32, 2), ==, 2.7f);
  hp_test_assert_values (back, HP_TEST_DATA (1.5, -1.5, (gfloat) 2.7, (gfloat) -2.7, 0,
                                             (gfloat) -0.2, (gfloat) 1e15, (gfloat) 0.1),
                         HP_TEST_SHAPE (2, 4), 0, 0);
  g_assert_true (same != f);
  hp_test_assert_identical (same, f);
  g_assert_true (ids_same != ids);
  hp_test_assert_identical (ids_same, ids);
  assert_int64s (f32_int, (const gint64[]) { 1, -1, 2, -2, 0, 0, (gint64) (gfloat) 1e15, 0 }, 8);

  /* int64 to float32 rounds once: 2^24 + 1 is a tie, to even */
  g_assert_cmpfloat (float32_at (ids_f32, 0), ==, 16777216.0f);
  g_assert_cmpfloat (float32_at (ids_f32, 1), ==, -3.0f);
  g_assert_cmpfloat (float32_at (ids_f32, 2), ==, 9223372036854775808.0f);
  hp_test_assert_values (ids_f64, HP_TEST_DATA (16777217, -3, 9223372036854775808.0,
                                                -9223372036854775808.0),
                         HP_TEST_SHAPE (4), 0, 0);

  assert_int64s (edge_int, (const gint64[]) { G_MININT64, G_GINT64_CONSTANT (9223372036854774784) },
                 2);
  hp_test_assert_shape (empty_int, HP_TEST_SHAPE (0, 3));
}

static void
test_to_dtype_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) nan = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, NAN),
                                            HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) nan_before = hp_tensor_detach (nan);
  g_autoptr(HpTensor) inf = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (INFINITY),
                                            HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) minus_inf = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (-INFINITY),
                                                  HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) high = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (0, 0, 9.3e18),
                                             HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) two63 = hp_test_tensor (HP_DTYPE_FLOAT64,
                                              HP_TEST_DATA (9223372036854775808.0),
                                              HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) low = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (-1e19),
                                            HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) ids = hp_tensor_new_zeros (HP_DTYPE_INT64, HP_TEST_SHAPE (2));

  hp_tensor_set_requires_grad (nan, TRUE);
  assert_error_unchanged (hp_tensor_to_dtype (nan, HP_DTYPE_INT64, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT,
                          "to_dtype: element 1 of float64 [2] is nan, which has no int64 value",
                          nan, nan_before);
  assert_error_unchanged (hp_tensor_to_dtype (inf, HP_DTYPE_INT64, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "is inf, which has no int64 value", inf, inf);
  assert_error_unchanged (hp_tensor_to_dtype (minus_inf, HP_DTYPE_INT64, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "is -inf", minus_inf, minus_inf);
  assert_error_unchanged (hp_tensor_to_dtype (high, HP_DTYPE_INT64, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "to_dtype: element 2 of float64 [3] is 9.3e+18",
                          high, high);
  assert_error_unchanged (hp_tensor_to_dtype (two63, HP_DTYPE_INT64, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "which has no int64 value", two63, two63);
  assert_error_unchanged (hp_tensor_to_dtype (low, HP_DTYPE_INT64, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "is -1e+19", low, low);
  assert_error_unchanged (hp_tensor_to_dtype (nan, (HpDType) 7, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "to_dtype: 7 is not a dtype", nan, nan_before);
  assert_error_unchanged (hp_tensor_to_dtype (ids, (HpDType) -1, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "to_dtype: -1 is not a dtype", ids, ids);
}

/* Gradients */

typedef struct
{
  gint dim;
  HpTensor *index;
  gint64 sizes[4];
  guint n_sizes;
  gint64 diagonal;
  gboolean upper;
} IndexArgs;

static HpTensor *
call_gather (HpTensor **inputs, gpointer user_data, GError **error)
{
  const IndexArgs *args = user_data;

  return hp_tensor_gather (inputs[0], args->dim, args->index, error);
}

static HpTensor *
call_index_select (HpTensor **inputs, gpointer user_data, GError **error)
{
  const IndexArgs *args = user_data;

  return hp_tensor_index_select (inputs[0], args->dim, args->index, error);
}

static HpTensor *
call_expand (HpTensor **inputs, gpointer user_data, GError **error)
{
  const IndexArgs *args = user_data;

  return hp_tensor_expand (inputs[0], args->sizes, args->n_sizes, error);
}

static HpTensor *
call_repeat (HpTensor **inputs, gpointer user_data, GError **error)
{
  const IndexArgs *args = user_data;

  return hp_tensor_repeat (inputs[0], args->sizes, args->n_sizes, error);
}

static HpTensor *
call_tri (HpTensor **inputs, gpointer user_data, GError **error)
{
  const IndexArgs *args = user_data;

  return args->upper ? hp_tensor_triu (inputs[0], args->diagonal, error)
                     : hp_tensor_tril (inputs[0], args->diagonal, error);
}

static HpTensor *
call_to_dtype (HpTensor **inputs, gpointer user_data, GError **error)
{
  return hp_tensor_to_dtype (inputs[0], HP_DTYPE_FLOAT64, error);
}

static void
test_gradients (void)
{
  /* repeated index values: their gradients add up */
  static const gint64 gidx_rows[] = { 1, 1, 0, 2, 2, 2, 1, 0 };
  static const gint64 gidx_cols[] = { 1, 1, 0, 3, 3, 2 };
  static const gint64 sidx[] = { 2, 0, 2, 2 };
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 4), 21, TRUE);
  g_autoptr(HpTensor) col = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 1), 22, TRUE);
  g_autoptr(HpTensor) batch = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3, 3), 23, TRUE);
  g_autoptr(HpTensor) gindex = hp_test_tensor_ids (gidx_rows, 8, HP_TEST_SHAPE (2, 4));
  g_autoptr(HpTensor) gindex_rows = hp_test_tensor_ids (gidx_cols, 6, HP_TEST_SHAPE (3, 2));
  g_autoptr(HpTensor) sindex = hp_test_tensor_ids (sidx, 4, HP_TEST_SHAPE (4));
  IndexArgs gather_rows = { .dim = 0, .index = gindex };
  IndexArgs gather_cols = { .dim = -1, .index = gindex_rows };
  IndexArgs select_rows = { .dim = 0, .index = sindex };
  IndexArgs select_cols = { .dim = 1, .index = sindex };
  IndexArgs expand = { .sizes = { 2, -1, 5 }, .n_sizes = 3 };
  IndexArgs repeat = { .sizes = { 2, 3 }, .n_sizes = 2 };
  IndexArgs repeat_lead = { .sizes = { 2, 1, 2 }, .n_sizes = 3 };
  IndexArgs tril = { .diagonal = 0 }, tril_up = { .diagonal = 1 };
  IndexArgs triu = { .diagonal = 0, .upper = TRUE }, triu_down = { .diagonal = -1, .upper = TRUE };
  HpTensor *xs[] = { x }, *cols[] = { col }, *batches[] = { batch };

  hp_test_gradcheck ("gather rows", call_gather, &gather_rows, xs, 1);
  hp_test_gradcheck ("gather cols", call_gather, &gather_cols, xs, 1);
  hp_test_gradcheck ("index_select rows", call_index_select, &select_rows, xs, 1);
  hp_test_gradcheck ("index_select cols", call_index_select, &select_cols, xs, 1);
  hp_test_gradcheck ("expand", call_expand, &expand, cols, 1);
  hp_test_gradcheck ("repeat", call_repeat, &repeat, xs, 1);
  hp_test_gradcheck ("repeat leading", call_repeat, &repeat_lead, cols, 1);
  hp_test_gradcheck ("tril", call_tri, &tril, xs, 1);
  hp_test_gradcheck ("tril above", call_tri, &tril_up, batches, 1);
  hp_test_gradcheck ("triu", call_tri, &triu, batches, 1);
  hp_test_gradcheck ("triu below", call_tri, &triu_down, xs, 1);
  hp_test_gradcheck ("to_dtype", call_to_dtype, NULL, xs, 1);
}

/* Between float dtypes the gradient comes back in the input's dtype; an
 * int64 result records nothing */
static void
test_to_dtype_gradient (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1.25, -2, 3),
                                          HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) y = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (0.5, 4), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) w = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (2, -1, 0.5),
                                          HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) x32 = NULL;
  g_autoptr(HpTensor) xw = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpTensor) y64 = NULL;
  g_autoptr(HpTensor) loss_y = NULL;
  g_autoptr(HpTensor) as_int = NULL;

  hp_tensor_set_requires_grad (x, TRUE);
  hp_tensor_set_requires_grad (y, TRUE);
  x32 = hp_tensor_to_dtype (x, HP_DTYPE_FLOAT32, &error);
  xw = hp_tensor_mul (x32, w, &error);
  loss = hp_tensor_sum_all (xw, &error);
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (hp_tensor_get_grad (x)), ==, HP_DTYPE_FLOAT64);
  hp_test_assert_values (hp_tensor_get_grad (x), HP_TEST_DATA (2, -1, 0.5), HP_TEST_SHAPE (3), 0, 0);

  y64 = hp_tensor_to_dtype (y, HP_DTYPE_FLOAT64, &error);
  loss_y = hp_tensor_sum_all (y64, &error);
  g_assert_true (hp_tensor_backward (loss_y, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (hp_tensor_get_dtype (hp_tensor_get_grad (y)), ==, HP_DTYPE_FLOAT32);
  hp_test_assert_values (hp_tensor_get_grad (y), HP_TEST_DATA (1, 1), HP_TEST_SHAPE (2), 0, 0);

  as_int = hp_tensor_to_dtype (x, HP_DTYPE_INT64, &error);
  g_assert_no_error (error);
  g_assert_false (hp_tensor_get_requires_grad (as_int));
  g_assert_true (hp_tensor_is_leaf (as_int));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/index/gather/values", test_gather_values);
  g_test_add_func ("/index/gather/three-dims", test_gather_three_dims);
  g_test_add_func ("/index/gather/edge-shapes", test_gather_edge_shapes);
  g_test_add_func ("/index/gather/bad-input", test_gather_bad_input);
  g_test_add_func ("/index/index-select/values", test_index_select_values);
  g_test_add_func ("/index/index-select/edge-shapes", test_index_select_edge_shapes);
  g_test_add_func ("/index/index-select/bad-input", test_index_select_bad_input);
  g_test_add_func ("/index/expand/values", test_expand_values);
  g_test_add_func ("/index/expand/edge-shapes", test_expand_edge_shapes);
  g_test_add_func ("/index/expand/bad-input", test_expand_bad_input);
  g_test_add_func ("/index/repeat/values", test_repeat_values);
  g_test_add_func ("/index/repeat/edge-shapes", test_repeat_edge_shapes);
  g_test_add_func ("/index/repeat/bad-input", test_repeat_bad_input);
  g_test_add_func ("/index/tri/values", test_tri_values);
  g_test_add_func ("/index/tri/edge-shapes", test_tri_edge_shapes);
  g_test_add_func ("/index/tri/bad-input", test_tri_bad_input);
  g_test_add_func ("/index/to-dtype/values", test_to_dtype_values);
  g_test_add_func ("/index/to-dtype/bad-input", test_to_dtype_bad_input);
  g_test_add_func ("/index/gradients", test_gradients);
  g_test_add_func ("/index/to-dtype/gradient", test_to_dtype_gradient);

  return g_test_run ();
}
