/* test-state-dict.c: the ordered name -> tensor map
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "hp-test-utils.h"

static void
assert_names (HpStateDict         *sd,
              const gchar * const *expected)
{
  g_auto(GStrv) names = hp_state_dict_get_names (sd);
  guint n = g_strv_length ((GStrv) expected);

  g_assert_cmpstrv (names, expected);
  g_assert_cmpuint (hp_state_dict_get_size (sd), ==, n);
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpstr (hp_state_dict_get_name (sd, i), ==, expected[i]);
      g_assert_true (hp_state_dict_get_tensor (sd, i) == hp_state_dict_lookup (sd, expected[i]));
      g_assert_true (hp_state_dict_contains (sd, expected[i]));
    }
}

static void
test_empty (void)
{
  g_autoptr(HpStateDict) sd = hp_state_dict_new ();

  assert_names (sd, (const gchar *[]) { NULL });
  g_assert_null (hp_state_dict_lookup (sd, "weight"));
  g_assert_false (hp_state_dict_contains (sd, "weight"));
  g_assert_false (hp_state_dict_remove (sd, "weight"));
}

static void
test_insert_lookup_remove (void)
{
  g_autoptr(HpStateDict) sd = hp_state_dict_new ();
  g_autoptr(HpTensor) w = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3));
  g_autoptr(HpTensor) b = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3));
  g_autoptr(HpTensor) e = hp_tensor_new_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 2), 1);
  g_autoptr(HpTensor) w2 = hp_tensor_new_ones (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 3));

  hp_state_dict_insert (sd, "layers.0.weight", w);
  hp_state_dict_insert (sd, "layers.0.bias", b);
  hp_state_dict_insert (sd, "tok_embeddings.weight", e);
  assert_names (sd, (const gchar *[]) { "layers.0.weight", "layers.0.bias", "tok_embeddings.weight", NULL });
  /* references, not copies */
  g_assert_true (hp_state_dict_lookup (sd, "layers.0.weight") == w);
  g_assert_true (hp_state_dict_get_tensor (sd, 2) == e);
  g_assert_null (hp_state_dict_lookup (sd, "layers.0"));
  g_assert_false (hp_state_dict_contains (sd, "Layers.0.weight"));

  /* an existing name keeps its position */
  hp_state_dict_insert (sd, "layers.0.weight", w2);
  assert_names (sd, (const gchar *[]) { "layers.0.weight", "layers.0.bias", "tok_embeddings.weight", NULL });
  g_assert_true (hp_state_dict_lookup (sd, "layers.0.weight") == w2);
  /* the same tensor again is fine */
  hp_state_dict_insert (sd, "layers.0.weight", w2);
  g_assert_true (hp_state_dict_get_tensor (sd, 0) == w2);

  /* removal moves the later entries up */
  g_assert_true (hp_state_dict_remove (sd, "layers.0.weight"));
  g_assert_false (hp_state_dict_remove (sd, "layers.0.weight"));
  assert_names (sd, (const gchar *[]) { "layers.0.bias", "tok_embeddings.weight", NULL });
  g_assert_null (hp_state_dict_lookup (sd, "layers.0.weight"));

  /* re-inserting a removed name appends it; the index stays consistent */
  hp_state_dict_insert (sd, "layers.0.weight", w);
  hp_state_dict_insert (sd, "norm.weight", b);
  assert_names (sd, (const gchar *[]) { "layers.0.bias", "tok_embeddings.weight", "layers.0.weight",
                                        "norm.weight", NULL });
  g_assert_true (hp_state_dict_remove (sd, "layers.0.bias"));
  assert_names (sd, (const gchar *[]) { "tok_embeddings.weight", "layers.0.weight", "norm.weight", NULL });
  g_assert_true (hp_state_dict_remove (sd, "norm.weight"));
  assert_names (sd, (const gchar *[]) { "tok_embeddings.weight", "layers.0.weight", NULL });
  hp_state_dict_insert (sd, "tok_embeddings.weight", b);
  g_assert_true (hp_state_dict_get_tensor (sd, 0) == b);
}

static void
test_holds_references (void)
{
  HpStateDict *sd = hp_state_dict_new ();
  HpTensor *t = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2));

  g_object_add_weak_pointer (G_OBJECT (t), (gpointer *) &t);
  hp_state_dict_insert (sd, "t", t);
  g_object_unref (t);
  g_assert_nonnull (t);
  g_assert_true (hp_state_dict_lookup (sd, "t") == t);
  g_object_unref (sd);
  g_assert_null (t);
}

static void
test_many (void)
{
  g_autoptr(HpStateDict) sd = hp_state_dict_new ();
  g_autoptr(HpTensor) t = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (1));

  for (guint i = 0; i < 200; i++)
    {
      g_autofree gchar *name = g_strdup_printf ("layers.%u.weight", i);

      hp_state_dict_insert (sd, name, t);
    }
  for (guint i = 0; i < 200; i += 2)
    {
      g_autofree gchar *name = g_strdup_printf ("layers.%u.weight", i);

      g_assert_true (hp_state_dict_remove (sd, name));
    }
  g_assert_cmpuint (hp_state_dict_get_size (sd), ==, 100);
  for (guint i = 0; i < 100; i++)
    {
      g_autofree gchar *name = g_strdup_printf ("layers.%u.weight", 2 * i + 1);

      g_assert_cmpstr (hp_state_dict_get_name (sd, i), ==, name);
      g_assert_true (hp_state_dict_contains (sd, name));
    }
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init (&argc, &argv);

  g_test_add_func ("/state-dict/empty", test_empty);
  g_test_add_func ("/state-dict/insert-lookup-remove", test_insert_lookup_remove);
  g_test_add_func ("/state-dict/holds-references", test_holds_references);
  g_test_add_func ("/state-dict/many", test_many);

  return g_test_run ();
}
