/* test-named-placement.c: mesh axis names and named placements (their
 * resolution against a mesh is tests/test-sharding-resolve.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include "hp-test-utils.h"

static HpPlacement *
placement (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  HpPlacement *p = hp_placement_new_from_string (text, &error);

  g_assert_no_error (error);
  return p;
}

static void
assert_named (HpNamedPlacement *named,
              const gchar      *expected)
{
  g_autofree gchar *text = hp_named_placement_to_string (named);

  g_assert_cmpstr (text, ==, expected);
}

static void
test_axis_names (void)
{
  static const struct { HpMeshAxisName axis; const gchar *name; } table[] = {
    { HP_MESH_AXIS_NAME_DP, "dp" },
    { HP_MESH_AXIS_NAME_DP_REPLICATE, "dp_replicate" },
    { HP_MESH_AXIS_NAME_DP_SHARD, "dp_shard" },
    { HP_MESH_AXIS_NAME_FSDP, "fsdp" },
    { HP_MESH_AXIS_NAME_TP, "tp" },
    { HP_MESH_AXIS_NAME_CP, "cp" },
    { HP_MESH_AXIS_NAME_PP, "pp" },
    { HP_MESH_AXIS_NAME_EP, "ep" },
    { HP_MESH_AXIS_NAME_EFSDP, "efsdp" },
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(GEnumClass) klass = g_type_class_ref (HP_TYPE_MESH_AXIS_NAME);
  HpMeshAxisName axis;

  g_assert_cmpuint (klass->n_values, ==, G_N_ELEMENTS (table));
  for (guint i = 0; i < G_N_ELEMENTS (table); i++)
    {
      g_assert_cmpstr (hp_mesh_axis_name_to_string (table[i].axis), ==, table[i].name);
      axis = HP_MESH_AXIS_NAME_PP;
      g_assert_true (hp_mesh_axis_name_from_string (table[i].name, &axis, &error));
      g_assert_no_error (error);
      g_assert_cmpint (axis, ==, table[i].axis);
      /* the nick is the name, so GValue and JSON code agree with it */
      g_assert_cmpstr (g_enum_get_value (klass, table[i].axis)->value_nick, ==, table[i].name);
    }

  /* case-sensitive; unknown names list the valid ones; @axis untouched */
  axis = HP_MESH_AXIS_NAME_EP;
  hp_test_assert_error (GINT_TO_POINTER (hp_mesh_axis_name_from_string ("TP", &axis, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "unknown mesh axis name 'TP' (expected one of dp, dp_replicate, dp_shard, "
                        "fsdp, tp, cp, pp, ep, efsdp)");
  g_assert_cmpint (axis, ==, HP_MESH_AXIS_NAME_EP);
  hp_test_assert_error (GINT_TO_POINTER (hp_mesh_axis_name_from_string ("", &axis, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT, "unknown mesh axis name '' (expected one of ");
  hp_test_assert_error (GINT_TO_POINTER (hp_mesh_axis_name_from_string ("dp-shard", &axis, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT, "unknown mesh axis name 'dp-shard' (expected one of ");
  g_assert_cmpint (axis, ==, HP_MESH_AXIS_NAME_EP);
}

static void
test_set_get (void)
{
  g_autoptr(HpNamedPlacement) named = hp_named_placement_new ();
  g_autoptr(HpPlacement) s0 = placement ("S(0)");
  g_autoptr(HpPlacement) s0_again = placement ("Shard(0)");
  g_autoptr(HpPlacement) r = placement ("R");
  g_autoptr(HpPlacement) p = placement ("P(sum)");
  g_auto(GStrv) empty_axes = hp_named_placement_get_axes (named);
  g_auto(GStrv) axes = NULL;
  guint changed = 0;

  hp_test_count_signal (named, "changed", &changed);

  g_assert_cmpuint (hp_named_placement_get_n_axes (named), ==, 0);
  g_assert_nonnull (empty_axes);
  g_assert_null (empty_axes[0]);
  g_assert_null (hp_named_placement_get (named, "tp"));
  assert_named (named, "");

  hp_named_placement_set (named, "tp", s0);
  hp_named_placement_set_axis (named, HP_MESH_AXIS_NAME_DP, r);
  hp_named_placement_set (named, "custom", p);
  g_assert_cmpuint (changed, ==, 3);
  g_assert_cmpuint (hp_named_placement_get_n_axes (named), ==, 3);
  g_assert_true (hp_named_placement_get (named, "tp") == s0);
  g_assert_true (hp_named_placement_get (named, "dp") == r);
  g_assert_null (hp_named_placement_get (named, "TP"));
  assert_named (named, "tp:S(0), dp:R, custom:P(sum)");

  /* replacing keeps the position; an equal placement changes nothing */
  hp_named_placement_set_axis (named, HP_MESH_AXIS_NAME_TP, r);
  g_assert_cmpuint (changed, ==, 4);
  assert_named (named, "tp:R, dp:R, custom:P(sum)");
  hp_named_placement_set (named, "tp", s0);
  hp_named_placement_set (named, "tp", s0_again);
  g_assert_cmpuint (changed, ==, 5);
  g_assert_true (hp_named_placement_get (named, "tp") == s0);

  axes = hp_named_placement_get_axes (named);
  g_assert_cmpuint (g_strv_length (axes), ==, 3);
  g_assert_cmpstr (axes[0], ==, "tp");
  g_assert_cmpstr (axes[1], ==, "dp");
  g_assert_cmpstr (axes[2], ==, "custom");
}

static void
test_strings (void)
{
  static const struct { const gchar *text; const gchar *canonical; } good[] = {
    { "tp:S(0),dp:R", "tp:S(0), dp:R" },
    { "  tp : S( 0 ) ,  dp:Replicate()  ", "tp:S(0), dp:R" },
    { "tp:S(-1)", "tp:S(-1)" },
    { "dp_shard:Shard(dim=1), tp:Partial(reduce_op=max), ep:P", "dp_shard:S(1), tp:P(max), ep:P(sum)" },
    { "", "" },
    { "   ", "" },
    { "x.y-z_1:R", "x.y-z_1:R" },
  };
  static const struct { const gchar *text; const gchar *message; } bad[] = {
    { "tp:S(0),dp", "cannot parse named placement 'tp:S(0),dp': entry 'dp' is not axis:placement" },
    { ":R", "entry ':R' has an empty axis name" },
    { " :R", "entry ':R' has an empty axis name" },
    { "tp:S(0),tp:R", "entry 'tp:R' repeats axis 'tp'" },
    { "tp:S(0),,dp:R", "entry 1 is empty" },
    { "tp:S(0),", "entry 1 is empty" },
    { ",tp:R", "entry 0 is empty" },
    { "tp:X", "entry 'tp:X': cannot parse placement 'X'" },
    { "tp:", "entry 'tp:': cannot parse placement ''" },
    { "S(0):tp", "entry 'S(0):tp' has an invalid axis name 'S(0)'" },
    { "t p:R", "invalid axis name 't p'" },
    { "tp:S(0,dp:R", "cannot parse placement 'S(0,dp:R'" },
    { "tp:P(bogus)", "unknown reduce op 'bogus'" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr(HpNamedPlacement) named = hp_test_named (good[i].text);
      g_autofree gchar *text = hp_named_placement_to_string (named);
      g_autoptr(HpNamedPlacement) again = hp_test_named (text);
      g_autofree gchar *text_again = hp_named_placement_to_string (again);

      g_assert_cmpstr (text, ==, good[i].canonical);
      g_assert_cmpstr (text_again, ==, text);
      g_assert_true (hp_named_placement_equal (named, again));
    }

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;

      hp_test_assert_error (hp_named_placement_new_from_string (bad[i].text, &error), &error,
                            HP_ERROR_INVALID_ARGUMENT, bad[i].message);
    }
}

static void
test_equal_copy (void)
{
  g_autoptr(HpNamedPlacement) a = hp_test_named ("tp:S(0), dp:R");
  g_autoptr(HpNamedPlacement) reordered = hp_test_named ("dp:R, tp:Shard(0)");
  g_autoptr(HpNamedPlacement) fewer = hp_test_named ("tp:S(0)");
  g_autoptr(HpNamedPlacement) other = hp_test_named ("tp:S(1), dp:R");
  g_autoptr(HpNamedPlacement) renamed = hp_test_named ("tp:S(0), cp:R");
  g_autoptr(HpNamedPlacement) empty = hp_named_placement_new ();
  g_autoptr(HpNamedPlacement) empty2 = hp_test_named ("");
  g_autoptr(HpNamedPlacement) copy = hp_named_placement_copy (a);
  g_autoptr(HpPlacement) p = placement ("P(avg)");

  g_assert_true (hp_named_placement_equal (a, a));
  g_assert_true (hp_named_placement_equal (a, reordered));
  g_assert_false (hp_named_placement_equal (a, fewer));
  g_assert_false (hp_named_placement_equal (fewer, a));
  g_assert_false (hp_named_placement_equal (a, other));
  g_assert_false (hp_named_placement_equal (a, renamed));
  g_assert_true (hp_named_placement_equal (empty, empty2));
  g_assert_false (hp_named_placement_equal (empty, a));

  g_assert_true (copy != a);
  g_assert_true (hp_named_placement_equal (copy, a));
  assert_named (copy, "tp:S(0), dp:R");

  /* the copy and the original are independent */
  hp_named_placement_set (copy, "tp", p);
  hp_named_placement_set (copy, "ep", p);
  assert_named (copy, "tp:P(avg), dp:R, ep:P(avg)");
  assert_named (a, "tp:S(0), dp:R");
  hp_named_placement_set (a, "cp", p);
  g_assert_null (hp_named_placement_get (copy, "cp"));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/named-placement/axis-names", test_axis_names);
  g_test_add_func ("/named-placement/set-get", test_set_get);
  g_test_add_func ("/named-placement/strings", test_strings);
  g_test_add_func ("/named-placement/equal-copy", test_equal_copy);

  return g_test_run ();
}
