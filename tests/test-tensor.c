/* test-tensor.c: constructors, accessors and formatting of HpTensor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>
#include <string.h>

#include "hp-test-utils.h"

static void
test_constructors (void)
{
  g_autoptr(HpTensor) zeros = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) ones = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) full = hp_tensor_new_full (HP_DTYPE_INT64, HP_TEST_SHAPE (2), -7.9);
  g_autoptr(HpTensor) range = hp_tensor_new_arange (HP_DTYPE_INT64, 4);
  g_autoptr(HpTensor) frange = hp_tensor_new_arange (HP_DTYPE_FLOAT32, 3);
  guint ndim = 99;
  const gint64 *shape = hp_tensor_get_shape (zeros, &ndim);

  g_assert_cmpuint (ndim, ==, 2);
  g_assert_cmpint (shape[0], ==, 2);
  g_assert_cmpint (shape[1], ==, 3);
  g_assert_cmpuint (hp_tensor_get_ndim (zeros), ==, 2);
  g_assert_cmpint (hp_tensor_get_numel (zeros), ==, 6);
  g_assert_cmpint (hp_tensor_get_dtype (zeros), ==, HP_DTYPE_FLOAT32);
  hp_test_assert_values (zeros, HP_TEST_DATA (0, 0, 0, 0, 0, 0), HP_TEST_SHAPE (2, 3), 0, 0);
  hp_test_assert_values (ones, HP_TEST_DATA (1, 1, 1), HP_TEST_SHAPE (3), 0, 0);
  /* int64 truncates toward zero, like a C cast */
  hp_test_assert_values (full, HP_TEST_DATA (-7, -7), HP_TEST_SHAPE (2), 0, 0);
  hp_test_assert_values (range, HP_TEST_DATA (0, 1, 2, 3), HP_TEST_SHAPE (4), 0, 0);
  hp_test_assert_values (frange, HP_TEST_DATA (0, 1, 2), HP_TEST_SHAPE (3), 0, 0);
}

static void
test_properties (void)
{
  g_autoptr(HpTensor) t = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 5));
  g_autoptr(HpTensor) bare = g_object_new (HP_TYPE_TENSOR, "dtype", HP_DTYPE_INT64, NULL);
  HpDType dtype;
  guint ndim;
  gint64 numel;
  gboolean requires_grad;
  g_autoptr(GError) error = NULL;

  g_object_get (t, "dtype", &dtype, "ndim", &ndim, "numel", &numel,
                "requires-grad", &requires_grad, NULL);
  g_assert_cmpint (dtype, ==, HP_DTYPE_FLOAT64);
  g_assert_cmpuint (ndim, ==, 2);
  g_assert_cmpint (numel, ==, 20);
  g_assert_false (requires_grad);

  /* a tensor made without a constructor is the zero scalar */
  g_assert_cmpuint (hp_tensor_get_ndim (bare), ==, 0);
  g_assert_cmpint (hp_tensor_get_numel (bare), ==, 1);
  g_assert_cmpfloat (hp_tensor_item (bare, &error), ==, 0.0);
  g_assert_no_error (error);
}

static void
test_from_data (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) t = NULL;
  const gint64 ids[] = { G_MAXINT64, -3 };
  g_autoptr(HpTensor) it = NULL;
  g_autoptr(GBytes) bytes = NULL;
  const gint64 *raw;

  t = hp_tensor_new_from_data (HP_DTYPE_FLOAT32, HP_TEST_DATA (1.5, 2.5, 3.5), HP_TEST_SHAPE (3, 1), &error);
  g_assert_no_error (error);
  hp_test_assert_values (t, HP_TEST_DATA (1.5, 2.5, 3.5), HP_TEST_SHAPE (3, 1), 0, 0);

  it = hp_tensor_new_from_int64_data (ids, 2, HP_TEST_SHAPE (2), &error);
  g_assert_no_error (error);
  bytes = hp_tensor_get_bytes (it);
  raw = g_bytes_get_data (bytes, NULL);
  g_assert_cmpint (raw[0], ==, G_MAXINT64);
  g_assert_cmpint (raw[1], ==, -3);

  hp_test_assert_error (hp_tensor_new_from_data (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 2, 3), HP_TEST_SHAPE (2, 2), &error),
                        &error, HP_ERROR_SHAPE, "3 values given for shape [2, 2], which has 4 elements");
  hp_test_assert_error (hp_tensor_new_from_data (HP_DTYPE_FLOAT32, HP_TEST_DATA (1), HP_TEST_SHAPE (-1), &error),
                        &error, HP_ERROR_SHAPE, "negative size");
  hp_test_assert_error (hp_tensor_new_from_int64_data (ids, 2, HP_TEST_SHAPE (3), &error),
                        &error, HP_ERROR_SHAPE, "2 values given for shape [3]");
}

static void
test_from_bytes (void)
{
  g_autoptr(GError) error = NULL;
  gfloat *data = g_new (gfloat, 6);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GBytes) back = NULL;
  g_autoptr(HpTensor) t = NULL;
  g_autoptr(GBytes) odd = NULL;
  g_autoptr(HpTensor) unaligned = NULL;
  guint8 *buffer;

  for (int i = 0; i < 6; i++)
    data[i] = i * 0.5f;
  bytes = g_bytes_new_take (data, 6 * sizeof (gfloat));

  t = hp_tensor_new_from_bytes (bytes, HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3), &error);
  g_assert_no_error (error);
  hp_test_assert_values (t, HP_TEST_DATA (0, 0.5, 1, 1.5, 2, 2.5), HP_TEST_SHAPE (2, 3), 0, 0);

  /* zero-copy both ways */
  back = hp_tensor_get_bytes (t);
  g_assert_true (g_bytes_get_data (back, NULL) == (gconstpointer) data);

  hp_test_assert_error (hp_tensor_new_from_bytes (bytes, HP_DTYPE_FLOAT32, HP_TEST_SHAPE (7), &error),
                        &error, HP_ERROR_SHAPE,
                        "24 bytes given for a float32 tensor of shape [7], which needs 28 bytes");
  hp_test_assert_error (hp_tensor_new_from_bytes (bytes, HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 2), &error),
                        &error, HP_ERROR_SHAPE, "needs 32 bytes");

  /* a misaligned view is copied once into aligned storage */
  buffer = g_malloc0 (1 + 2 * sizeof (gdouble));
  {
    gdouble v[2] = { 3.25, -1.0 };
    memcpy (buffer + 1, v, sizeof v);
  }
  odd = g_bytes_new_with_free_func (buffer + 1, 2 * sizeof (gdouble), g_free, buffer);
  unaligned = hp_tensor_new_from_bytes (odd, HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2), &error);
  g_assert_no_error (error);
  hp_test_assert_values (unaligned, HP_TEST_DATA (3.25, -1.0), HP_TEST_SHAPE (2), 0, 0);
}

static void
test_item (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) one = hp_tensor_new_full (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 1), 4.5);
  g_autoptr(HpTensor) two = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2));
  gdouble value;

  g_assert_cmpfloat (hp_tensor_item (one, &error), ==, 4.5);
  g_assert_no_error (error);

  value = hp_tensor_item (two, &error);
  g_assert_cmpfloat (value, ==, 0.0);
  g_assert_error (error, HP_ERROR, HP_ERROR_SHAPE);
  g_assert_nonnull (strstr (error->message, "shape [2]"));
}

static void
test_to_string (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) m = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 2.5, -3, 4), HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) ids = hp_tensor_new_arange (HP_DTYPE_INT64, 3);
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 0.125);
  g_autoptr(HpTensor) empty = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (0, 2));
  g_autoptr(HpTensor) big = hp_tensor_new_arange (HP_DTYPE_INT64, 5000);
  g_autoptr(HpTensor) leaf = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) derived = NULL;
  g_autofree gchar *s_m = hp_tensor_to_string (m);
  g_autofree gchar *s_ids = hp_tensor_to_string (ids);
  g_autofree gchar *s_scalar = hp_tensor_to_string (scalar);
  g_autofree gchar *s_empty = hp_tensor_to_string (empty);
  g_autofree gchar *s_big = hp_tensor_to_string (big);
  g_autofree gchar *s_leaf = NULL;
  g_autofree gchar *s_derived = NULL;

  g_assert_cmpstr (s_m, ==, "tensor([[1., 2.5],\n        [-3., 4.]], dtype=float32)");
  g_assert_cmpstr (s_ids, ==, "tensor([0, 1, 2], dtype=int64)");
  g_assert_cmpstr (s_scalar, ==, "tensor(0.125, dtype=float64)");
  g_assert_cmpstr (s_empty, ==, "tensor([], size=[0, 2], dtype=float32)");
  g_assert_cmpstr (s_big, ==, "tensor([0, 1, 2, ..., 4997, 4998, 4999], dtype=int64)");

  hp_tensor_set_requires_grad (leaf, TRUE);
  derived = hp_tensor_neg (leaf, &error);
  g_assert_no_error (error);
  s_leaf = hp_tensor_to_string (leaf);
  s_derived = hp_tensor_to_string (derived);
  g_assert_cmpstr (s_leaf, ==, "tensor([1.], dtype=float32, requires_grad=True)");
  g_assert_cmpstr (s_derived, ==, "tensor([-1.], dtype=float32, grad_fn=<neg>)");
}

static void
test_allclose (void)
{
  g_autoptr(HpTensor) a = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2, 3), HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) b = hp_test_tensor (HP_DTYPE_FLOAT32, HP_TEST_DATA (1, 2, 3.001), HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) c = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2, 3), HP_TEST_SHAPE (1, 3));
  g_autoptr(HpTensor) n = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (NAN), HP_TEST_SHAPE (1));
  g_autoptr(HpTensor) inf = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (INFINITY), HP_TEST_SHAPE (1));

  g_assert_true (hp_tensor_allclose (a, a, 0, 0));
  g_assert_false (hp_tensor_allclose (a, b, 1e-5, 0));
  g_assert_true (hp_tensor_allclose (a, b, 1e-3, 0));
  g_assert_true (hp_tensor_allclose (a, b, 0, 2e-3));
  g_assert_false (hp_tensor_allclose (a, c, 1, 1));
  g_assert_false (hp_tensor_allclose (n, n, 1, 1));
  g_assert_true (hp_tensor_allclose (inf, inf, 0, 0));
}

static void
test_random (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) a = hp_tensor_new_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (64, 96), 7);
  g_autoptr(HpTensor) b = hp_tensor_new_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (64, 96), 7);
  g_autoptr(HpTensor) c = hp_tensor_new_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (64, 96), 8);
  g_autoptr(HpTensor) f = hp_tensor_new_randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (64, 96), 7);
  g_autoptr(HpTensor) u = hp_tensor_new_uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (10000), -2.0, 3.0, 1);
  g_autoptr(HpTensor) slice = NULL;
  g_autoptr(HpTensor) uslice = NULL;
  g_autofree gdouble *va = NULL;
  g_autofree gdouble *vs = NULL;
  g_autofree gdouble *vu = NULL;
  g_autofree gdouble *vus = NULL;
  gsize n, n_slice;
  gdouble mean = 0, var = 0, umin = G_MAXDOUBLE, umax = -G_MAXDOUBLE, umean = 0;

  g_assert_true (hp_tensor_allclose (a, b, 0, 0));
  g_assert_false (hp_tensor_allclose (a, c, 0.5, 0));
  /* float32 is the same samples, rounded */
  g_assert_true (hp_tensor_allclose (f, a, 1e-6, 1e-6));

  va = hp_tensor_to_float64_array (a, &n);
  for (gsize i = 0; i < n; i++)
    mean += va[i] / n;
  for (gsize i = 0; i < n; i++)
    var += (va[i] - mean) * (va[i] - mean) / n;
  g_assert_cmpfloat (fabs (mean), <, 0.05);
  g_assert_cmpfloat (fabs (var - 1.0), <, 0.05);

  vu = hp_tensor_to_float64_array (u, &n);
  for (gsize i = 0; i < n; i++)
    {
      umin = MIN (umin, vu[i]);
      umax = MAX (umax, vu[i]);
      umean += vu[i] / n;
    }
  g_assert_cmpfloat (umin, >=, -2.0);
  g_assert_cmpfloat (umax, <, 3.0);
  g_assert_cmpfloat (fabs (umean - 0.5), <, 0.05);

  /* a slice equals the same part of the whole tensor */
  slice = hp_tensor_new_randn_slice (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (64, 96),
                                     HP_TEST_SHAPE (10, 32), HP_TEST_SHAPE (5, 40), 7, &error);
  g_assert_no_error (error);
  vs = hp_tensor_to_float64_array (slice, &n_slice);
  g_assert_cmpuint (n_slice, ==, 200);
  for (gint64 r = 0; r < 5; r++)
    for (gint64 col = 0; col < 40; col++)
      g_assert_cmpfloat (vs[r * 40 + col], ==, va[(10 + r) * 96 + 32 + col]);

  uslice = hp_tensor_new_uniform_slice (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (10000), HP_TEST_SHAPE (9990),
                                        HP_TEST_SHAPE (10), -2.0, 3.0, 1, &error);
  g_assert_no_error (error);
  vus = hp_tensor_to_float64_array (uslice, &n_slice);
  for (gsize i = 0; i < 10; i++)
    g_assert_cmpfloat (vus[i], ==, vu[9990 + i]);

  hp_test_assert_error (hp_tensor_new_randn_slice (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 4), HP_TEST_SHAPE (2, 2),
                                                   HP_TEST_SHAPE (3, 1), 1, &error),
                        &error, HP_ERROR_SHAPE, "dim 0 range [2, 5) is outside the shape [4, 4]");
  hp_test_assert_error (hp_tensor_new_randn_slice (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 4), HP_TEST_SHAPE (0),
                                                   HP_TEST_SHAPE (1, 1), 1, &error),
                        &error, HP_ERROR_SHAPE, "1 offsets and 2 sizes given for 2 dims");
  hp_test_assert_error (hp_tensor_new_uniform_slice (HP_DTYPE_INT64, HP_TEST_SHAPE (4), HP_TEST_SHAPE (0),
                                                     HP_TEST_SHAPE (1), 0, 1, 1, &error),
                        &error, HP_ERROR_INVALID_ARGUMENT, "int64");
}

static void
test_dtype (void)
{
  g_autoptr(GError) error = NULL;
  HpDType dtype = HP_DTYPE_FLOAT32;

  g_assert_cmpuint (hp_dtype_get_size (HP_DTYPE_FLOAT32), ==, 4);
  g_assert_cmpuint (hp_dtype_get_size (HP_DTYPE_FLOAT64), ==, 8);
  g_assert_cmpuint (hp_dtype_get_size (HP_DTYPE_INT64), ==, 8);
  g_assert_true (hp_dtype_is_floating (HP_DTYPE_FLOAT64));
  g_assert_false (hp_dtype_is_floating (HP_DTYPE_INT64));
  g_assert_cmpstr (hp_dtype_to_string (HP_DTYPE_INT64), ==, "int64");
  g_assert_true (hp_dtype_from_string ("float64", &dtype, &error));
  g_assert_cmpint (dtype, ==, HP_DTYPE_FLOAT64);
  hp_test_assert_error (GINT_TO_POINTER (hp_dtype_from_string ("bfloat16", &dtype, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "unknown dtype 'bfloat16' (expected float32, float64 or int64)");
  /* names are exact */
  hp_test_assert_error (GINT_TO_POINTER (hp_dtype_from_string ("Float32", &dtype, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT, "unknown dtype 'Float32'");
  hp_test_assert_error (GINT_TO_POINTER (hp_dtype_from_string ("", &dtype, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT, "unknown dtype ''");
  /* the output is untouched on failure */
  g_assert_cmpint (dtype, ==, HP_DTYPE_FLOAT64);
}

static void
test_version (void)
{
  g_assert_true (HP_CHECK_VERSION (0, 0, 0));
  g_assert_false (HP_CHECK_VERSION (HP_MAJOR_VERSION + 1, 0, 0));
  g_assert_nonnull (strstr (HP_VERSION_S, "."));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tensor/constructors", test_constructors);
  g_test_add_func ("/tensor/properties", test_properties);
  g_test_add_func ("/tensor/from-data", test_from_data);
  g_test_add_func ("/tensor/from-bytes", test_from_bytes);
  g_test_add_func ("/tensor/item", test_item);
  g_test_add_func ("/tensor/to-string", test_to_string);
  g_test_add_func ("/tensor/allclose", test_allclose);
  g_test_add_func ("/tensor/random", test_random);
  g_test_add_func ("/tensor/dtype", test_dtype);
  g_test_add_func ("/tensor/version", test_version);

  return g_test_run ();
}
