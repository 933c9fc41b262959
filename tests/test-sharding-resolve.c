/* test-sharding-resolve.c: hp_resolve_placements, the seed's
 * test_sharding_resolve group: a missing axis is Replicate, an axis not
 * in the mesh is an error, the result follows the mesh's order
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "hp-test-utils.h"

static void
assert_placements (GPtrArray   *placements,
                   const gchar *expected)
{
  g_autofree gchar *text = NULL;

  g_assert_nonnull (placements);
  text = hp_placements_to_string (placements);
  g_assert_cmpstr (text, ==, expected);
}

static void
test_resolve (void)
{
  const gchar *dp_tp[] = { "dp", "tp", NULL };
  const gchar *tp_dp[] = { "tp", "dp", NULL };
  const gchar *upper[] = { "DP", "TP", NULL };
  const gchar *none[] = { NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpNamedPlacement) tp = hp_test_named ("tp:S(0)");
  g_autoptr(HpNamedPlacement) both = hp_test_named ("tp:S(0), dp:P(sum)");
  g_autoptr(HpNamedPlacement) extra = hp_test_named ("ep:R, tp:S(0), pp:S(1)");
  g_autoptr(HpNamedPlacement) empty = hp_named_placement_new ();
  g_autoptr(GPtrArray) a = NULL;
  g_autoptr(GPtrArray) b = NULL;
  g_autoptr(GPtrArray) c = NULL;
  g_autoptr(GPtrArray) d = NULL;
  g_autoptr(GPtrArray) e = NULL;
  g_autoptr(GPtrArray) f = NULL;
  g_autoptr(GPtrArray) g = NULL;

  /* missing axis -> Replicate; mesh order, not the map's */
  a = hp_resolve_placements (tp, dp_tp, &error);
  g_assert_no_error (error);
  assert_placements (a, "(R, S(0))");
  b = hp_resolve_placements (both, dp_tp, &error);
  g_assert_no_error (error);
  assert_placements (b, "(P(sum), S(0))");
  c = hp_resolve_placements (both, tp_dp, &error);
  g_assert_no_error (error);
  assert_placements (c, "(S(0), P(sum))");
  /* the resolved array shares the map's placement objects */
  g_assert_true (g_ptr_array_index (c, 0) == hp_named_placement_get (both, "tp"));

  /* empty map: all Replicate, or nothing for a mesh without dims */
  d = hp_resolve_placements (empty, dp_tp, &error);
  g_assert_no_error (error);
  assert_placements (d, "(R, R)");
  e = hp_resolve_placements (empty, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (e->len, ==, 0);
  f = hp_resolve_placements (NULL, none, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (f->len, ==, 0);
  g = hp_resolve_placements (NULL, tp_dp, &error);
  g_assert_no_error (error);
  assert_placements (g, "(R, R)");

  /* axes not in the mesh: all of them, in the map's order */
  hp_test_assert_error (hp_resolve_placements (extra, dp_tp, &error), &error, HP_ERROR_PLACEMENT,
                        "NamedPlacement has axes not in mesh: {ep, pp}");
  hp_test_assert_error (hp_resolve_placements (tp, NULL, &error), &error, HP_ERROR_PLACEMENT,
                        "NamedPlacement has axes not in mesh: {tp}");
  /* case-sensitive */
  hp_test_assert_error (hp_resolve_placements (both, upper, &error), &error, HP_ERROR_PLACEMENT,
                        "NamedPlacement has axes not in mesh: {tp, dp} (mesh dims: {DP, TP})");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sharding-resolve/resolve", test_resolve);

  return g_test_run ();
}
