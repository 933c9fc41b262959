/* test-shape.c: values and gradients of transpose, permute, reshape,
 * narrow and cat
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

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

/* What permute must give, worked out one element at a time from the
 * row-major offsets */
static HpTensor *
reference_permute (HpTensor   *x,
                   const gint *perm)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (x, &ndim);
  gint64 out_shape[HP_TENSOR_MAX_NDIM];
  gint64 in_strides[HP_TENSOR_MAX_NDIM];
  gsize n;
  g_autofree gdouble *in = hp_tensor_to_float64_array (x, &n);
  g_autofree gdouble *out = g_new (gdouble, MAX (n, 1));
  gint64 stride = 1;

  for (guint d = ndim; d-- > 0;)
    {
      in_strides[d] = stride;
      stride *= shape[d];
    }
  for (guint d = 0; d < ndim; d++)
    out_shape[d] = shape[perm[d]];

  for (gsize i = 0; i < n; i++)
    {
      gint64 rest = (gint64) i;
      gint64 offset = 0;

      for (guint d = ndim; d-- > 0;)
        {
          offset += (rest % out_shape[d]) * in_strides[perm[d]];
          rest /= out_shape[d];
        }
      out[i] = in[offset];
    }

  return hp_test_tensor (hp_tensor_get_dtype (x), out, n, out_shape, ndim);
}

/* Transpose */

static void
test_transpose_values (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (all_dtypes); t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) a = counting (all_dtypes[t], HP_TEST_SHAPE (2, 3));
      g_autoptr(HpTensor) b = counting (all_dtypes[t], HP_TEST_SHAPE (2, 3, 4));
      g_autoptr(HpTensor) at = hp_tensor_transpose (a, 0, 1, &error);
      g_autoptr(HpTensor) at_neg = hp_tensor_transpose (a, -1, -2, &error);
      g_autoptr(HpTensor) bt = hp_tensor_transpose (b, 0, -1, &error);
      g_autoptr(HpTensor) bt_want = reference_permute (b, (const gint[]) { 2, 1, 0 });
      g_autoptr(HpTensor) bt_inner = hp_tensor_transpose (b, 1, 2, &error);
      g_autoptr(HpTensor) bt_inner_want = reference_permute (b, (const gint[]) { 0, 2, 1 });
      g_autoptr(HpTensor) same = hp_tensor_transpose (b, 1, -2, &error);

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (at), ==, all_dtypes[t]);
      hp_test_assert_values (at, HP_TEST_DATA (0, 3, 1, 4, 2, 5), HP_TEST_SHAPE (3, 2), 0, 0);
      hp_test_assert_values (at_neg, HP_TEST_DATA (0, 3, 1, 4, 2, 5), HP_TEST_SHAPE (3, 2), 0, 0);
      hp_test_assert_shape (bt, HP_TEST_SHAPE (4, 3, 2));
      hp_test_assert_close (bt, bt_want, 0, 0);
      /* element [1, 2, 3] of b is 1 * 12 + 2 * 4 + 3 = 23; bt[3, 2, 1] */
      {
        gsize n;
        g_autofree gdouble *v = hp_tensor_to_float64_array (bt, &n);
        g_assert_cmpfloat (v[3 * 6 + 2 * 2 + 1], ==, 23.0);
      }
      hp_test_assert_shape (bt_inner, HP_TEST_SHAPE (2, 4, 3));
      hp_test_assert_close (bt_inner, bt_inner_want, 0, 0);

      /* the same dim twice: a copy */
      g_assert_true (same != b);
      hp_test_assert_close (same, b, 0, 0);
    }
}

static void
test_transpose_edge_shapes (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 0, 3));
  g_autoptr(HpTensor) ones = counting (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 4, 1));
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT32, NULL, 0, 1.0);
  g_autoptr(HpTensor) r1 = hp_tensor_transpose (empty, 0, 2, &error);
  g_autoptr(HpTensor) r2 = hp_tensor_transpose (ones, 0, 2, &error);
  g_autoptr(HpTensor) r3 = hp_tensor_transpose (ones, 1, 2, &error);

  g_assert_no_error (error);
  hp_test_assert_shape (r1, HP_TEST_SHAPE (3, 0, 2));
  hp_test_assert_values (r2, HP_TEST_DATA (0, 1, 2, 3), HP_TEST_SHAPE (1, 4, 1), 0, 0);
  hp_test_assert_values (r3, HP_TEST_DATA (0, 1, 2, 3), HP_TEST_SHAPE (1, 1, 4), 0, 0);

  hp_test_assert_error (hp_tensor_transpose (ones, 0, 3, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "transpose: dim 3 is out of range for a tensor of 3 dims");
  hp_test_assert_error (hp_tensor_transpose (ones, -4, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "transpose: dim -4 is out of range");
  hp_test_assert_error (hp_tensor_transpose (scalar, 0, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "transpose: dim 0 is out of range");
}

/* Permute */

static void
test_permute_values (void)
{
  static const gint perms[][4] = {
    { 0, 1, 2, 3 },
    { 3, 2, 1, 0 },
    { 1, 0, 2, 3 },  /* inner run stays contiguous */
    { 0, 1, 3, 2 },  /* inner run strided */
    { 2, 0, 3, 1 },
    { 1, 3, 0, 2 },
  };
  static const gint64 shapes[][4] = {
    { 2, 3, 4, 5 },
    { 2, 1, 3, 1 },
    { 1, 1, 1, 1 },
    { 3, 0, 2, 2 },
  };

  for (gsize t = 0; t < G_N_ELEMENTS (all_dtypes); t++)
    for (gsize s = 0; s < G_N_ELEMENTS (shapes); s++)
      for (gsize p = 0; p < G_N_ELEMENTS (perms); p++)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(HpTensor) x = counting (all_dtypes[t], shapes[s], 4);
          g_autoptr(HpTensor) got = hp_tensor_permute (x, perms[p], 4, &error);
          g_autoptr(HpTensor) want = reference_permute (x, perms[p]);

          g_assert_no_error (error);
          g_assert_cmpint (hp_tensor_get_dtype (got), ==, all_dtypes[t]);
          hp_test_assert_close (got, want, 0, 0);
        }
}

static void
test_permute_negative_and_scalar (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = counting (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3, 4));
  g_autoptr(HpTensor) neg = hp_tensor_permute (x, (const gint[]) { -1, 0, -2 }, 3, &error);
  g_autoptr(HpTensor) want = reference_permute (x, (const gint[]) { 2, 0, 1 });
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 7.0);
  g_autoptr(HpTensor) scalar_copy = hp_tensor_permute (scalar, NULL, 0, &error);

  g_assert_no_error (error);
  hp_test_assert_shape (neg, HP_TEST_SHAPE (4, 2, 3));
  hp_test_assert_close (neg, want, 0, 0);
  hp_test_assert_shape (scalar_copy, NULL, 0);
  g_assert_cmpfloat (hp_tensor_item (scalar_copy, &error), ==, 7.0);
}

static void
test_permute_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3));

  hp_test_assert_error (hp_tensor_permute (x, (const gint[]) { 0, 1, 2 }, 3, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "permute: dims [0, 1, 2] name 3 dims, but the tensor float32 [2, 3] has 2");
  hp_test_assert_error (hp_tensor_permute (x, (const gint[]) { 0 }, 1, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "permute: dims [0] name 1 dims");
  hp_test_assert_error (hp_tensor_permute (x, (const gint[]) { 1, 1 }, 2, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "permute: dims [1, 1] are not a permutation of the 2 dims of float32 [2, 3]");
  /* -1 and 1 are the same dim */
  hp_test_assert_error (hp_tensor_permute (x, (const gint[]) { -1, 1 }, 2, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "permute: dims [-1, 1] are not a permutation");
  hp_test_assert_error (hp_tensor_permute (x, (const gint[]) { 0, 2 }, 2, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "permute: dims [0, 2] are not a permutation");
  hp_test_assert_error (hp_tensor_permute (x, (const gint[]) { -3, 0 }, 2, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "permute: dims [-3, 0] are not a permutation");
}

/* Reshape */

static void
test_reshape_values (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (all_dtypes); t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) x = counting (all_dtypes[t], HP_TEST_SHAPE (2, 3));
      g_autoptr(HpTensor) r1 = hp_tensor_reshape (x, HP_TEST_SHAPE (3, 2), &error);
      g_autoptr(HpTensor) r2 = hp_tensor_reshape (x, HP_TEST_SHAPE (-1), &error);
      g_autoptr(HpTensor) r3 = hp_tensor_reshape (x, HP_TEST_SHAPE (1, -1, 2, 1), &error);
      g_autoptr(GBytes) x_bytes = hp_tensor_get_bytes (x);
      g_autoptr(GBytes) r1_bytes = hp_tensor_get_bytes (r1);

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (r1), ==, all_dtypes[t]);
      hp_test_assert_values (r1, HP_TEST_DATA (0, 1, 2, 3, 4, 5), HP_TEST_SHAPE (3, 2), 0, 0);
      hp_test_assert_values (r2, HP_TEST_DATA (0, 1, 2, 3, 4, 5), HP_TEST_SHAPE (6), 0, 0);
      hp_test_assert_values (r3, HP_TEST_DATA (0, 1, 2, 3, 4, 5), HP_TEST_SHAPE (1, 3, 2, 1), 0, 0);

      /* no copy: the result reads the same buffer */
      g_assert_true (g_bytes_get_data (x_bytes, NULL) == g_bytes_get_data (r1_bytes, NULL));
    }
}

static void
test_reshape_edge_shapes (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 4.5);
  g_autoptr(HpTensor) one = hp_tensor_new_full (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 1), 2.5);
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0, 3));
  g_autoptr(HpTensor) s1 = hp_tensor_reshape (scalar, HP_TEST_SHAPE (1, 1, 1), &error);
  g_autoptr(HpTensor) s2 = hp_tensor_reshape (scalar, HP_TEST_SHAPE (-1), &error);
  g_autoptr(HpTensor) s3 = hp_tensor_reshape (one, NULL, 0, &error);
  g_autoptr(HpTensor) e1 = hp_tensor_reshape (empty, HP_TEST_SHAPE (3, 0, 5), &error);
  g_autoptr(HpTensor) e2 = hp_tensor_reshape (empty, HP_TEST_SHAPE (-1, 6), &error);

  g_assert_no_error (error);
  hp_test_assert_values (s1, HP_TEST_DATA (4.5), HP_TEST_SHAPE (1, 1, 1), 0, 0);
  hp_test_assert_values (s2, HP_TEST_DATA (4.5), HP_TEST_SHAPE (1), 0, 0);
  hp_test_assert_shape (s3, NULL, 0);
  g_assert_cmpfloat (hp_tensor_item (s3, &error), ==, 2.5);
  hp_test_assert_shape (e1, HP_TEST_SHAPE (3, 0, 5));
  hp_test_assert_shape (e2, HP_TEST_SHAPE (0, 6));
}

static void
test_reshape_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0, 3));
  const gint64 huge = G_GINT64_CONSTANT (1) << 40;

  hp_test_assert_error (hp_tensor_reshape (x, HP_TEST_SHAPE (4, 2), &error), &error,
                        HP_ERROR_SHAPE, "reshape: cannot reshape [2, 3] (6 elements) to [4, 2]");
  hp_test_assert_error (hp_tensor_reshape (x, HP_TEST_SHAPE (-1, 4), &error), &error,
                        HP_ERROR_SHAPE, "reshape: cannot reshape [2, 3] (6 elements) to [-1, 4]");
  hp_test_assert_error (hp_tensor_reshape (x, HP_TEST_SHAPE (huge, huge, huge), &error), &error,
                        HP_ERROR_SHAPE, "reshape: cannot reshape [2, 3]");
  hp_test_assert_error (hp_tensor_reshape (x, HP_TEST_SHAPE (-1, -1), &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "reshape: shape [-1, -1] may hold one -1 and no other negative size");
  hp_test_assert_error (hp_tensor_reshape (x, HP_TEST_SHAPE (-2, -3), &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "reshape: shape [-2, -3]");
  hp_test_assert_error (hp_tensor_reshape (x, HP_TEST_SHAPE (-1, 0), &error), &error,
                        HP_ERROR_SHAPE,
                        "reshape: cannot reshape [2, 3] to [-1, 0]: the -1 has no size that fits");
  hp_test_assert_error (hp_tensor_reshape (empty, HP_TEST_SHAPE (-1, 0), &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "reshape: cannot reshape [0, 3] to [-1, 0]: the -1 could be any size");
  hp_test_assert_error (hp_tensor_reshape (empty, HP_TEST_SHAPE (2), &error), &error,
                        HP_ERROR_SHAPE, "reshape: cannot reshape [0, 3] (0 elements) to [2]");
  hp_test_assert_error (hp_tensor_reshape (x, HP_TEST_SHAPE (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                                             1, 1, 1, 2, 3), &error), &error,
                        HP_ERROR_SHAPE, "reshape: a tensor has at most 16 dims, not 17");
}

/* Narrow */

static void
test_narrow_values (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (all_dtypes); t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) x = counting (all_dtypes[t], HP_TEST_SHAPE (3, 4));
      g_autoptr(HpTensor) y = counting (all_dtypes[t], HP_TEST_SHAPE (2, 3, 2));
      g_autoptr(HpTensor) cols = hp_tensor_narrow (x, 1, 1, 2, &error);
      g_autoptr(HpTensor) rows = hp_tensor_narrow (x, 0, -2, 2, &error);
      g_autoptr(HpTensor) last = hp_tensor_narrow (x, -1, -1, 1, &error);
      g_autoptr(HpTensor) middle = hp_tensor_narrow (y, 1, 2, 1, &error);
      g_autoptr(HpTensor) whole = hp_tensor_narrow (y, 0, 0, 2, &error);

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (cols), ==, all_dtypes[t]);
      hp_test_assert_values (cols, HP_TEST_DATA (1, 2, 5, 6, 9, 10), HP_TEST_SHAPE (3, 2), 0, 0);
      hp_test_assert_values (rows, HP_TEST_DATA (4, 5, 6, 7, 8, 9, 10, 11), HP_TEST_SHAPE (2, 4), 0, 0);
      hp_test_assert_values (last, HP_TEST_DATA (3, 7, 11), HP_TEST_SHAPE (3, 1), 0, 0);
      hp_test_assert_values (middle, HP_TEST_DATA (4, 5, 10, 11), HP_TEST_SHAPE (2, 1, 2), 0, 0);
      hp_test_assert_close (whole, y, 0, 0);
    }
}

static void
test_narrow_edge_shapes (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = counting (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 4));
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0, 4));
  g_autoptr(HpTensor) none = hp_tensor_narrow (x, 1, 2, 0, &error);
  g_autoptr(HpTensor) at_end = hp_tensor_narrow (x, 0, 3, 0, &error);
  g_autoptr(HpTensor) of_empty = hp_tensor_narrow (empty, 1, 1, 3, &error);

  g_assert_no_error (error);
  hp_test_assert_shape (none, HP_TEST_SHAPE (3, 0));
  hp_test_assert_shape (at_end, HP_TEST_SHAPE (0, 4));
  hp_test_assert_shape (of_empty, HP_TEST_SHAPE (0, 3));
}

static void
test_narrow_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3, 4));
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT32, NULL, 0, 1.0);

  hp_test_assert_error (hp_tensor_narrow (x, 1, 3, 2, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "narrow: start 3 and length 2 do not fit dim 1 of size 4 (shape [3, 4])");
  hp_test_assert_error (hp_tensor_narrow (x, 0, -4, 1, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "narrow: start -4 and length 1 do not fit dim 0 of size 3");
  hp_test_assert_error (hp_tensor_narrow (x, -1, 0, -1, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "narrow: start 0 and length -1 do not fit dim -1 of size 4");
  hp_test_assert_error (hp_tensor_narrow (x, 0, 4, 0, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "narrow: start 4 and length 0 do not fit dim 0 of size 3");
  hp_test_assert_error (hp_tensor_narrow (x, 2, 0, 1, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "narrow: dim 2 is out of range for a tensor of 2 dims");
  hp_test_assert_error (hp_tensor_narrow (scalar, 0, 0, 1, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "narrow: dim 0 is out of range");
}

/* Cat */

static HpTensor *
cat_of (HpTensor **tensors,
        guint      n,
        gint       dim,
        GError   **error)
{
  g_autoptr(GPtrArray) array = g_ptr_array_new ();

  for (guint i = 0; i < n; i++)
    g_ptr_array_add (array, tensors[i]);
  return hp_tensor_cat (array, dim, error);
}

static void
test_cat_values (void)
{
  for (gsize t = 0; t < G_N_ELEMENTS (all_dtypes); t++)
    {
      HpDType dtype = all_dtypes[t];
      g_autoptr(GError) error = NULL;
      g_autoptr(HpTensor) a = counting (dtype, HP_TEST_SHAPE (2, 3));
      g_autoptr(HpTensor) b = hp_test_tensor (dtype, HP_TEST_DATA (10, 11, 12), HP_TEST_SHAPE (1, 3));
      g_autoptr(HpTensor) c = hp_test_tensor (dtype, HP_TEST_DATA (20, 21), HP_TEST_SHAPE (2, 1));
      g_autoptr(HpTensor) e = hp_tensor_new_zeros (dtype, HP_TEST_SHAPE (2, 0));
      HpTensor *rows_in[] = { a, b };
      HpTensor *cols_in[] = { c, e, a, c };
      HpTensor *one_in[] = { b };
      g_autoptr(HpTensor) rows = cat_of (rows_in, 2, 0, &error);
      g_autoptr(HpTensor) cols = cat_of (cols_in, 4, -1, &error);
      g_autoptr(HpTensor) one = cat_of (one_in, 1, 1, &error);

      g_assert_no_error (error);
      g_assert_cmpint (hp_tensor_get_dtype (rows), ==, dtype);
      hp_test_assert_values (rows, HP_TEST_DATA (0, 1, 2, 3, 4, 5, 10, 11, 12),
                             HP_TEST_SHAPE (3, 3), 0, 0);
      hp_test_assert_values (cols, HP_TEST_DATA (20, 0, 1, 2, 20, 21, 3, 4, 5, 21),
                             HP_TEST_SHAPE (2, 5), 0, 0);
      g_assert_true (one != b);
      hp_test_assert_close (one, b, 0, 0);
    }
}

static void
test_cat_middle_dim (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) a = counting (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 1, 2));
  g_autoptr(HpTensor) b = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (10, 11, 12, 13, 14, 15, 16, 17),
                                          HP_TEST_SHAPE (2, 2, 2));
  g_autoptr(HpTensor) e = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 0, 2));
  HpTensor *in[] = { a, e, b };
  HpTensor *empties[] = { e, e };
  g_autoptr(HpTensor) out = cat_of (in, 3, 1, &error);
  g_autoptr(HpTensor) all_empty = cat_of (empties, 2, 1, &error);

  g_assert_no_error (error);
  hp_test_assert_values (out, HP_TEST_DATA (0, 1, 10, 11, 12, 13, 2, 3, 14, 15, 16, 17),
                         HP_TEST_SHAPE (2, 3, 2), 0, 0);
  hp_test_assert_shape (all_empty, HP_TEST_SHAPE (2, 0, 2));
}

static void
test_cat_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) a = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) b = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 4));
  g_autoptr(HpTensor) c = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) d = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3, 1));
  g_autoptr(HpTensor) s = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, NULL, 0);
  g_autoptr(GPtrArray) none = g_ptr_array_new ();
  HpTensor *shape_bad[] = { a, a, b };
  HpTensor *dtype_bad[] = { a, c };
  HpTensor *ndim_bad[] = { a, d };
  HpTensor *scalars[] = { s, s };

  hp_test_assert_error (hp_tensor_cat (none, 0, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "cat: needs at least one tensor");
  hp_test_assert_error (cat_of (shape_bad, 3, 0, &error), &error, HP_ERROR_SHAPE,
                        "cat: tensor 2 has shape [2, 4] but tensor 0 has shape [2, 3]; "
                        "they must match in every dim but 0");
  hp_test_assert_error (cat_of (dtype_bad, 2, 0, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "cat: tensor 1 is float64 [2, 3] but tensor 0 is float32 [2, 3]");
  hp_test_assert_error (cat_of (ndim_bad, 2, 1, &error), &error, HP_ERROR_SHAPE,
                        "cat: tensor 1 has shape [2, 3, 1] but tensor 0 has shape [2, 3]");
  hp_test_assert_error (cat_of (shape_bad, 2, 2, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "cat: dim 2 is out of range for a tensor of 2 dims");
  hp_test_assert_error (cat_of (scalars, 2, 0, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                        "cat: dim 0 is out of range for a tensor of 0 dims");
}

/* Gradients */

typedef struct
{
  gint dims[HP_TENSOR_MAX_NDIM];
  guint n_dims;
  gint64 shape[HP_TENSOR_MAX_NDIM];
  guint ndim;
  gint64 start;
  gint64 length;
} ShapeArgs;

static HpTensor *
call_transpose (HpTensor **inputs,
                gpointer   user_data,
                GError   **error)
{
  const ShapeArgs *args = user_data;

  return hp_tensor_transpose (inputs[0], args->dims[0], args->dims[1], error);
}

static HpTensor *
call_permute (HpTensor **inputs,
              gpointer   user_data,
              GError   **error)
{
  const ShapeArgs *args = user_data;

  return hp_tensor_permute (inputs[0], args->dims, args->n_dims, error);
}

static HpTensor *
call_reshape (HpTensor **inputs,
              gpointer   user_data,
              GError   **error)
{
  const ShapeArgs *args = user_data;

  return hp_tensor_reshape (inputs[0], args->shape, args->ndim, error);
}

static HpTensor *
call_narrow (HpTensor **inputs,
             gpointer   user_data,
             GError   **error)
{
  const ShapeArgs *args = user_data;

  return hp_tensor_narrow (inputs[0], args->dims[0], args->start, args->length, error);
}

/* cat of the inputs along dims[0], with the first input once more at
 * the end when n_dims is 2 (one node that uses an input twice) */
static HpTensor *
call_cat (HpTensor **inputs,
          gpointer   user_data,
          GError   **error)
{
  const ShapeArgs *args = user_data;
  HpTensor *list[HP_TENSOR_MAX_NDIM];

  for (guint i = 0; i < args->ndim; i++)
    list[i] = inputs[i];
  list[args->ndim] = inputs[0];
  return cat_of (list, args->ndim + (args->n_dims == 2 ? 1 : 0), args->dims[0], error);
}

static void
test_gradients (void)
{
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3, 4), 11, TRUE);
  g_autoptr(HpTensor) a = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 1, 3), 12, TRUE);
  g_autoptr(HpTensor) b = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 2, 3), 13, FALSE);
  g_autoptr(HpTensor) c = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 0, 3), 14, TRUE);
  g_autoptr(HpTensor) d = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3, 3), 15, TRUE);
  HpTensor *one[] = { x };
  HpTensor *several[] = { a, b, c, d };
  ShapeArgs transpose_args = { .dims = { 0, -1 } };
  ShapeArgs transpose_same = { .dims = { 1, 1 } };
  ShapeArgs permute_args = { .dims = { 2, 0, 1 }, .n_dims = 3 };
  ShapeArgs reshape_args = { .shape = { 4, -1, 2 }, .ndim = 3 };
  ShapeArgs narrow_args = { .dims = { 1 }, .start = -2, .length = 2 };
  ShapeArgs narrow_last = { .dims = { -1 }, .start = 1, .length = 2 };
  ShapeArgs cat_args = { .dims = { 1 }, .ndim = 4 };
  ShapeArgs cat_twice = { .dims = { -2 }, .n_dims = 2, .ndim = 4 };

  hp_test_gradcheck ("transpose", call_transpose, &transpose_args, one, 1);
  hp_test_gradcheck ("transpose same dim", call_transpose, &transpose_same, one, 1);
  hp_test_gradcheck ("permute", call_permute, &permute_args, one, 1);
  hp_test_gradcheck ("reshape", call_reshape, &reshape_args, one, 1);
  hp_test_gradcheck ("narrow", call_narrow, &narrow_args, one, 1);
  hp_test_gradcheck ("narrow last dim", call_narrow, &narrow_last, one, 1);
  hp_test_gradcheck ("cat", call_cat, &cat_args, several, 4);
  hp_test_gradcheck ("cat twice", call_cat, &cat_twice, several, 4);
}

/* The recorded graph reaches the leaf through a chain of shape ops and
 * leaves an input that needs no gradient alone. */
static void
test_gradient_chain (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 2, 3, 4, 5, 6),
                                          HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) y = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (7, 8), HP_TEST_SHAPE (2, 1));
  HpTensor *in[2];
  g_autoptr(HpTensor) t = NULL;
  g_autoptr(HpTensor) n = NULL;
  g_autoptr(HpTensor) r = NULL;
  g_autoptr(HpTensor) cat = NULL;
  g_autoptr(HpTensor) w = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 10, 100, 1000),
                                          HP_TEST_SHAPE (2, 2));

  hp_tensor_set_requires_grad (x, TRUE);
  t = hp_tensor_transpose (x, 0, 1, &error);        /* [3, 2] */
  n = hp_tensor_narrow (t, 0, 1, 1, &error);        /* [1, 2]: x[0, 1], x[1, 1] */
  r = hp_tensor_reshape (n, HP_TEST_SHAPE (2, 1), &error);
  in[0] = r;
  in[1] = y;
  cat = cat_of (in, 2, 1, &error);                  /* [2, 2] */
  g_assert_no_error (error);
  g_assert_true (hp_tensor_get_requires_grad (cat));
  g_assert_false (hp_tensor_is_leaf (cat));

  hp_tensor_backward (cat, w, &error);
  g_assert_no_error (error);
  hp_test_assert_values (hp_tensor_get_grad (x), HP_TEST_DATA (0, 1, 0, 0, 100, 0),
                         HP_TEST_SHAPE (2, 3), 0, 0);
  g_assert_cmpint (hp_tensor_get_dtype (hp_tensor_get_grad (x)), ==, HP_DTYPE_FLOAT32);
  g_assert_null (hp_tensor_get_grad (y));
}

static void
test_no_record_without_grad (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = counting (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) t = hp_tensor_transpose (x, 0, 1, &error);
  g_autoptr(HpTensor) r = hp_tensor_reshape (x, HP_TEST_SHAPE (6), &error);

  g_assert_no_error (error);
  g_assert_false (hp_tensor_get_requires_grad (t));
  g_assert_false (hp_tensor_get_requires_grad (r));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/shape/transpose/values", test_transpose_values);
  g_test_add_func ("/shape/transpose/edge-shapes", test_transpose_edge_shapes);
  g_test_add_func ("/shape/permute/values", test_permute_values);
  g_test_add_func ("/shape/permute/negative-and-scalar", test_permute_negative_and_scalar);
  g_test_add_func ("/shape/permute/bad-input", test_permute_bad_input);
  g_test_add_func ("/shape/reshape/values", test_reshape_values);
  g_test_add_func ("/shape/reshape/edge-shapes", test_reshape_edge_shapes);
  g_test_add_func ("/shape/reshape/bad-input", test_reshape_bad_input);
  g_test_add_func ("/shape/narrow/values", test_narrow_values);
  g_test_add_func ("/shape/narrow/edge-shapes", test_narrow_edge_shapes);
  g_test_add_func ("/shape/narrow/bad-input", test_narrow_bad_input);
  g_test_add_func ("/shape/cat/values", test_cat_values);
  g_test_add_func ("/shape/cat/middle-dim", test_cat_middle_dim);
  g_test_add_func ("/shape/cat/bad-input", test_cat_bad_input);
  g_test_add_func ("/shape/gradients", test_gradients);
  g_test_add_func ("/shape/gradient-chain", test_gradient_chain);
  g_test_add_func ("/shape/no-record-without-grad", test_no_record_without_grad);

  return g_test_run ();
}
