/* test-autograd.c: the backward pass, gradient accumulation and grad mode
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>
#include <string.h>

#include "hp-test-utils.h"

static HpTensor *
leaf (const gdouble *data,
      gsize          n)
{
  HpTensor *t = hp_test_tensor (HP_DTYPE_FLOAT64, data, n, (const gint64[]) { n }, 1);

  hp_tensor_set_requires_grad (t, TRUE);
  return t;
}

static void
test_requires_grad (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = leaf (HP_TEST_DATA (1, 2));
  g_autoptr(HpTensor) c = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (3, 4), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) y = hp_tensor_mul (x, c, &error);
  g_autoptr(HpTensor) z = hp_tensor_mul (c, c, &error);
  g_autoptr(HpTensor) d = hp_tensor_detach (y);

  g_assert_no_error (error);
  g_assert_true (hp_tensor_is_leaf (x));
  g_assert_true (hp_tensor_get_requires_grad (y));
  g_assert_false (hp_tensor_is_leaf (y));
  g_assert_false (hp_tensor_get_requires_grad (z));
  g_assert_true (hp_tensor_is_leaf (z));
  g_assert_false (hp_tensor_get_requires_grad (d));
  g_assert_true (hp_tensor_is_leaf (d));
  /* detach shares the buffer */
  {
    g_autoptr(GBytes) yb = hp_tensor_get_bytes (y);
    g_autoptr(GBytes) db = hp_tensor_get_bytes (d);
    g_assert_true (g_bytes_get_data (yb, NULL) == g_bytes_get_data (db, NULL));
  }

  g_assert_false (hp_tensor_backward (z, NULL, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_STATE);
  g_assert_nonnull (strstr (error->message, "does not require grad"));
}

static void
test_notify (void)
{
  g_autoptr(HpTensor) x = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2));
  guint count = 0;

  g_signal_connect_swapped (x, "notify::requires-grad", G_CALLBACK (g_atomic_int_inc), &count);
  g_object_set (x, "requires-grad", TRUE, NULL);
  g_object_set (x, "requires-grad", TRUE, NULL);
  g_assert_cmpuint (count, ==, 1);
  g_assert_true (hp_tensor_get_requires_grad (x));
}

static void
test_accumulate (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = leaf (HP_TEST_DATA (1, 2, 3));
  g_autoptr(HpTensor) w = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 10, 100), HP_TEST_SHAPE (3));

  for (int round = 1; round <= 2; round++)
    {
      /* x is used twice in one graph: d/dx (x*w + x) = w + 1 */
      g_autoptr(HpTensor) xw = hp_tensor_mul (x, w, &error);
      g_autoptr(HpTensor) y = hp_tensor_add (xw, x, &error);

      g_assert_no_error (error);
      g_assert_true (hp_tensor_backward (y, w, &error));
      g_assert_no_error (error);
      hp_test_assert_values (hp_tensor_get_grad (x),
                             (const gdouble[]) { round * 2, round * 110, round * 10100 }, 3,
                             HP_TEST_SHAPE (3), 0, 0);
    }

  hp_tensor_zero_grad (x);
  g_assert_null (hp_tensor_get_grad (x));
}

static void
test_graph_freed (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = leaf (HP_TEST_DATA (2));
  g_autoptr(HpTensor) y = hp_tensor_exp (x, &error);
  g_autoptr(HpTensor) z = hp_tensor_scale (y, 3.0, &error);

  g_assert_true (hp_tensor_backward (z, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (hp_tensor_backward (z, NULL, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_STATE);
  g_assert_nonnull (strstr (error->message, "a second time"));
  g_clear_error (&error);

  /* the failed call left the gradient as it was */
  hp_test_assert_values (hp_tensor_get_grad (x), HP_TEST_DATA (3 * 7.38905609893065), HP_TEST_SHAPE (1), 1e-12, 0);
}

static void
test_bad_seed (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = leaf (HP_TEST_DATA (1, 2));
  g_autoptr(HpTensor) y = hp_tensor_neg (x, &error);
  g_autoptr(HpTensor) wrong = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) wrong_dtype = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2));

  hp_test_assert_error (GINT_TO_POINTER (hp_tensor_backward (y, NULL, &error)), &error, HP_ERROR_SHAPE,
                        "backward: a gradient can be left out only for a tensor with one element, "
                        "not shape [2]");
  hp_test_assert_error (GINT_TO_POINTER (hp_tensor_backward (y, wrong, &error)), &error, HP_ERROR_SHAPE,
                        "backward: gradient float64 [3] does not fit tensor float64 [2]");
  hp_test_assert_error (GINT_TO_POINTER (hp_tensor_backward (y, wrong_dtype, &error)), &error,
                        HP_ERROR_SHAPE, "backward: gradient float32 [2] does not fit tensor float64 [2]");
  g_assert_null (hp_tensor_get_grad (x));
  hp_test_assert_values (x, HP_TEST_DATA (1, 2), HP_TEST_SHAPE (2), 0, 0);

  /* the graph survived the rejected calls */
  {
    g_autoptr(HpTensor) seed = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2));

    g_assert_true (hp_tensor_backward (y, seed, &error));
    g_assert_no_error (error);
    hp_test_assert_values (hp_tensor_get_grad (x), HP_TEST_DATA (-1, -1), HP_TEST_SHAPE (2), 0, 0);
  }
}

static void
test_backward_on_leaf (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = leaf (HP_TEST_DATA (5));

  g_assert_true (hp_tensor_backward (x, NULL, &error));
  g_assert_true (hp_tensor_backward (x, NULL, &error));
  g_assert_no_error (error);
  hp_test_assert_values (hp_tensor_get_grad (x), HP_TEST_DATA (2), HP_TEST_SHAPE (1), 0, 0);
}

static void
test_no_grad (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = leaf (HP_TEST_DATA (1, 2));
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) z = NULL;

  g_assert_true (hp_grad_mode_is_enabled ());
  hp_grad_mode_set_enabled (FALSE);
  g_assert_false (hp_grad_mode_is_enabled ());
  y = hp_tensor_exp (x, &error);
  hp_grad_mode_set_enabled (TRUE);
  g_assert_no_error (error);
  g_assert_false (hp_tensor_get_requires_grad (y));
  g_assert_true (hp_tensor_is_leaf (y));

  z = hp_tensor_exp (x, &error);
  g_assert_true (hp_tensor_get_requires_grad (z));
}

static gpointer
grad_mode_in_thread (gpointer data)
{
  return GINT_TO_POINTER (hp_grad_mode_is_enabled ());
}

static void
test_grad_mode_per_thread (void)
{
  GThread *thread;

  hp_grad_mode_set_enabled (FALSE);
  thread = g_thread_new ("grad-mode", grad_mode_in_thread, NULL);
  g_assert_true (GPOINTER_TO_INT (g_thread_join (thread)));
  hp_grad_mode_set_enabled (TRUE);
}

static void
test_partial_graph (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = leaf (HP_TEST_DATA (1, 2));
  g_autoptr(HpTensor) c = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (3, 4), HP_TEST_SHAPE (2));
  g_autoptr(HpTensor) y = hp_tensor_mul (c, x, &error);
  g_autoptr(HpTensor) z = hp_tensor_sub (y, c, &error);
  g_autoptr(HpTensor) seed = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2));

  /* only the input that requires grad gets one */
  g_assert_true (hp_tensor_backward (z, seed, &error));
  g_assert_no_error (error);
  hp_test_assert_values (hp_tensor_get_grad (x), HP_TEST_DATA (3, 4), HP_TEST_SHAPE (2), 0, 0);
  g_assert_null (hp_tensor_get_grad (c));
}

static void
test_intermediates_dropped (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = leaf (HP_TEST_DATA (1, -2));
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) seed = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2));

  /* nodes whose outputs are gone live on through the graph only, and the
   * backward pass must not free them while it still walks them */
  {
    g_autoptr(HpTensor) n = hp_tensor_neg (x, &error);
    g_autoptr(HpTensor) m = hp_tensor_scale (n, 2.0, &error);

    y = hp_tensor_exp (m, &error);
  }
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (y, seed, &error));
  g_assert_no_error (error);
  hp_test_assert_values (hp_tensor_get_grad (x), HP_TEST_DATA (-2 * exp (-2), -2 * exp (4)),
                         HP_TEST_SHAPE (2), 1e-14, 0);
}

static void
test_drop_deep_chain (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = leaf (HP_TEST_DATA (1));
  HpTensor *y = g_object_ref (x);

  /* a long graph dropped without backward is freed without recursion */
  for (int i = 0; i < 200000; i++)
    {
      HpTensor *next = hp_tensor_neg (y, &error);
      g_object_unref (y);
      y = next;
    }
  g_assert_no_error (error);
  g_object_unref (y);
}

static void
test_deep_chain (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x = leaf (HP_TEST_DATA (1));
  g_autoptr(HpTensor) y = g_object_ref (x);

  /* long chains do not recurse */
  for (int i = 0; i < 100000; i++)
    {
      HpTensor *next = hp_tensor_scale (y, 1.0, &error);
      g_object_unref (y);
      y = next;
    }
  g_assert_true (hp_tensor_backward (y, NULL, &error));
  g_assert_no_error (error);
  hp_test_assert_values (hp_tensor_get_grad (x), HP_TEST_DATA (1), HP_TEST_SHAPE (1), 0, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/autograd/requires-grad", test_requires_grad);
  g_test_add_func ("/autograd/notify", test_notify);
  g_test_add_func ("/autograd/accumulate", test_accumulate);
  g_test_add_func ("/autograd/graph-freed", test_graph_freed);
  g_test_add_func ("/autograd/bad-seed", test_bad_seed);
  g_test_add_func ("/autograd/backward-on-leaf", test_backward_on_leaf);
  g_test_add_func ("/autograd/no-grad", test_no_grad);
  g_test_add_func ("/autograd/grad-mode-per-thread", test_grad_mode_per_thread);
  g_test_add_func ("/autograd/partial-graph", test_partial_graph);
  g_test_add_func ("/autograd/deep-chain", test_deep_chain);
  g_test_add_func ("/autograd/drop-deep-chain", test_drop_deep_chain);
  g_test_add_func ("/autograd/intermediates-dropped", test_intermediates_dropped);

  return g_test_run ();
}
