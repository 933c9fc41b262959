/* test-placement.c: the placements, their equality and their strings
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include "hp-test-utils.h"

static const HpReduceOp all_ops[] = {
  HP_REDUCE_OP_SUM,
  HP_REDUCE_OP_AVG,
  HP_REDUCE_OP_MAX,
  HP_REDUCE_OP_MIN,
  HP_REDUCE_OP_PRODUCT,
};

static const gchar *const all_op_names[] = {
  "sum", "avg", "max", "min", "product",
};

/* Asserts the string form of @placement and frees it */
static void
assert_placement_string (HpPlacement *placement,
                         const gchar *expected)
{
  g_autofree gchar *text = hp_placement_to_string (placement);

  g_assert_cmpstr (text, ==, expected);
}

static void
test_type_hierarchy (void)
{
  g_assert_true (G_TYPE_IS_ABSTRACT (HP_TYPE_PLACEMENT));
  g_assert_true (g_type_is_a (HP_TYPE_SHARD, HP_TYPE_PLACEMENT));
  g_assert_true (g_type_is_a (HP_TYPE_REPLICATE, HP_TYPE_PLACEMENT));
  g_assert_true (g_type_is_a (HP_TYPE_PARTIAL, HP_TYPE_PLACEMENT));
  g_assert_true (G_TYPE_IS_FINAL (HP_TYPE_SHARD));
  g_assert_true (G_TYPE_IS_FINAL (HP_TYPE_REPLICATE));
  g_assert_true (G_TYPE_IS_FINAL (HP_TYPE_PARTIAL));
  g_assert_true (G_TYPE_IS_ENUM (HP_TYPE_REDUCE_OP));
}

static void
test_shard (void)
{
  const gint dims[] = { 0, 1, 3, -1, -2, G_MININT, G_MAXINT };

  for (gsize i = 0; i < G_N_ELEMENTS (dims); i++)
    {
      g_autoptr(HpPlacement) shard = hp_shard_new (dims[i]);
      g_autofree gchar *expected = g_strdup_printf ("S(%d)", dims[i]);
      gint dim = 12345;

      g_assert_true (HP_IS_SHARD (shard));
      g_assert_cmpint (hp_shard_get_dim (HP_SHARD (shard)), ==, dims[i]);
      g_object_get (shard, "dim", &dim, NULL);
      g_assert_cmpint (dim, ==, dims[i]);

      g_assert_true (hp_placement_is_shard (shard));
      g_assert_false (hp_placement_is_replicate (shard));
      g_assert_false (hp_placement_is_partial (shard));
      assert_placement_string (shard, expected);
    }
}

static void
test_shard_properties (void)
{
  g_autoptr(HpPlacement) by_default = g_object_new (HP_TYPE_SHARD, NULL);
  g_autoptr(HpPlacement) by_property = g_object_new (HP_TYPE_SHARD, "dim", -3, NULL);
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (by_default), "dim");

  g_assert_cmpint (hp_shard_get_dim (HP_SHARD (by_default)), ==, 0);
  g_assert_cmpint (hp_shard_get_dim (HP_SHARD (by_property)), ==, -3);
  assert_placement_string (by_property, "S(-3)");

  /* immutable: the only way to set the dim is at construction */
  g_assert_nonnull (pspec);
  g_assert_cmpint (pspec->value_type, ==, G_TYPE_INT);
  g_assert_true (pspec->flags & G_PARAM_CONSTRUCT_ONLY);
  g_assert_true (pspec->flags & G_PARAM_READABLE);
  g_assert_cmpint (G_PARAM_SPEC_INT (pspec)->minimum, ==, G_MININT);
  g_assert_cmpint (G_PARAM_SPEC_INT (pspec)->maximum, ==, G_MAXINT);
}

static void
test_replicate (void)
{
  g_autoptr(HpPlacement) replicate = hp_replicate_new ();
  g_autoptr(HpPlacement) by_object_new = g_object_new (HP_TYPE_REPLICATE, NULL);
  guint n_properties = 0;
  g_autofree GParamSpec **pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (replicate),
                                                                  &n_properties);

  g_assert_true (HP_IS_REPLICATE (replicate));
  g_assert_false (hp_placement_is_shard (replicate));
  g_assert_true (hp_placement_is_replicate (replicate));
  g_assert_false (hp_placement_is_partial (replicate));
  assert_placement_string (replicate, "R");
  assert_placement_string (by_object_new, "R");
  g_assert_true (hp_placement_equal (replicate, by_object_new));

  /* nothing to change, so nothing to set */
  g_assert_cmpuint (n_properties, ==, 0);
}

static void
test_partial (void)
{
  g_autoptr(HpPlacement) by_default = g_object_new (HP_TYPE_PARTIAL, NULL);
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (by_default), "reduce-op");

  for (gsize i = 0; i < G_N_ELEMENTS (all_ops); i++)
    {
      g_autoptr(HpPlacement) partial = hp_partial_new (all_ops[i]);
      g_autoptr(HpPlacement) by_property = g_object_new (HP_TYPE_PARTIAL, "reduce-op", all_ops[i], NULL);
      g_autofree gchar *expected = g_strdup_printf ("P(%s)", all_op_names[i]);
      HpReduceOp op = (HpReduceOp) 99;

      g_assert_true (HP_IS_PARTIAL (partial));
      g_assert_cmpint (hp_partial_get_reduce_op (HP_PARTIAL (partial)), ==, all_ops[i]);
      g_assert_cmpint (hp_partial_get_reduce_op (HP_PARTIAL (by_property)), ==, all_ops[i]);
      g_object_get (partial, "reduce-op", &op, NULL);
      g_assert_cmpint (op, ==, all_ops[i]);

      g_assert_false (hp_placement_is_shard (partial));
      g_assert_false (hp_placement_is_replicate (partial));
      g_assert_true (hp_placement_is_partial (partial));
      assert_placement_string (partial, expected);
    }

  g_assert_cmpint (hp_partial_get_reduce_op (HP_PARTIAL (by_default)), ==, HP_REDUCE_OP_SUM);
  assert_placement_string (by_default, "P(sum)");

  g_assert_nonnull (pspec);
  g_assert_cmpint (pspec->value_type, ==, HP_TYPE_REDUCE_OP);
  g_assert_true (pspec->flags & G_PARAM_CONSTRUCT_ONLY);
  g_assert_true (pspec->flags & G_PARAM_READABLE);
  g_assert_cmpint (G_PARAM_SPEC_ENUM (pspec)->default_value, ==, HP_REDUCE_OP_SUM);
}

static void
test_reduce_op_strings (void)
{
  const gchar *bad_names[] = { "", "SUM", "Sum", "mean", "prod", " sum", "sum ", "avg(", "P(sum)" };

  for (gsize i = 0; i < G_N_ELEMENTS (all_ops); i++)
    {
      g_autoptr(GError) error = NULL;
      HpReduceOp op = HP_REDUCE_OP_SUM;

      g_assert_cmpstr (hp_reduce_op_to_string (all_ops[i]), ==, all_op_names[i]);

      /* start from a different op so that a silent success cannot pass */
      op = all_ops[(i + 1) % G_N_ELEMENTS (all_ops)];
      g_assert_true (hp_reduce_op_from_string (all_op_names[i], &op, &error));
      g_assert_no_error (error);
      g_assert_cmpint (op, ==, all_ops[i]);
    }

  for (gsize i = 0; i < G_N_ELEMENTS (bad_names); i++)
    {
      g_autoptr(GError) error = NULL;
      HpReduceOp op = HP_REDUCE_OP_MIN;
      g_autofree gchar *quoted = g_strdup_printf ("unknown reduce op '%s'", bad_names[i]);

      g_assert_false (hp_reduce_op_from_string (bad_names[i], &op, &error));
      g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, quoted));
      g_assert_nonnull (strstr (error->message, "sum, avg, max, min or product"));
      /* untouched on failure */
      g_assert_cmpint (op, ==, HP_REDUCE_OP_MIN);
    }
}

/* Two lists of distinct but equal placements, one of every kind */
static GPtrArray *
make_every_kind (void)
{
  GPtrArray *placements = g_ptr_array_new_with_free_func (g_object_unref);

  g_ptr_array_add (placements, hp_shard_new (0));
  g_ptr_array_add (placements, hp_shard_new (1));
  g_ptr_array_add (placements, hp_shard_new (-1));
  g_ptr_array_add (placements, hp_shard_new (-2));
  g_ptr_array_add (placements, hp_replicate_new ());
  for (gsize i = 0; i < G_N_ELEMENTS (all_ops); i++)
    g_ptr_array_add (placements, hp_partial_new (all_ops[i]));

  return placements;
}

static void
test_equal (void)
{
  g_autoptr(GPtrArray) left = make_every_kind ();
  g_autoptr(GPtrArray) right = make_every_kind ();
  g_autoptr(HpPlacement) shard = hp_shard_new (1);
  g_autoptr(HpPlacement) negative = hp_shard_new (-1);

  for (guint i = 0; i < left->len; i++)
    for (guint j = 0; j < right->len; j++)
      {
        HpPlacement *a = g_ptr_array_index (left, i);
        HpPlacement *b = g_ptr_array_index (right, j);

        g_assert_true (a != b);
        if (hp_placement_equal (a, b) != (i == j))
          {
            g_autofree gchar *sa = hp_placement_to_string (a);
            g_autofree gchar *sb = hp_placement_to_string (b);

            g_error ("equal (%s, %s) should be %s", sa, sb, i == j ? "TRUE" : "FALSE");
          }
        g_assert_cmpint (hp_placement_equal (b, a), ==, i == j);
      }

  for (guint i = 0; i < left->len; i++)
    g_assert_true (hp_placement_equal (g_ptr_array_index (left, i), g_ptr_array_index (left, i)));

  /* the raw dim counts: -1 may be dim 1 of a 2-d tensor, but not here */
  g_assert_false (hp_placement_equal (shard, negative));
  g_assert_false (hp_placement_equal (negative, shard));
}

typedef struct
{
  const gchar *text;
  const gchar *expected;
} RoundTrip;

static const RoundTrip placement_spellings[] = {
  { "S(0)", "S(0)" },
  { "S(1)", "S(1)" },
  { "S(-1)", "S(-1)" },
  { "S(-2147483648)", "S(-2147483648)" },
  { "S(2147483647)", "S(2147483647)" },
  { "S(007)", "S(7)" },
  { "S(-0)", "S(0)" },
  { "Shard(0)", "S(0)" },
  { "Shard(-1)", "S(-1)" },
  { "Shard(dim=0)", "S(0)" },
  { "Shard(dim=-3)", "S(-3)" },
  { "S(dim=2)", "S(2)" },
  { "  S(0)  ", "S(0)" },
  { "\tS( 1 )\n", "S(1)" },
  { "Shard ( dim = 4 )", "S(4)" },
  { "R", "R" },
  { "R()", "R" },
  { "Replicate", "R" },
  { "Replicate()", "R" },
  { " Replicate( ) ", "R" },
  { "P", "P(sum)" },
  { "P()", "P(sum)" },
  { "P(sum)", "P(sum)" },
  { "P(avg)", "P(avg)" },
  { "P(max)", "P(max)" },
  { "P(min)", "P(min)" },
  { "P(product)", "P(product)" },
  { "Partial", "P(sum)" },
  { "Partial()", "P(sum)" },
  { "Partial(max)", "P(max)" },
  { "Partial(reduce_op=max)", "P(max)" },
  { "Partial( reduce_op = product )", "P(product)" },
  { "P(reduce_op=avg)", "P(avg)" },
  { " P ( min ) ", "P(min)" },
};

static void
test_from_string (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (placement_spellings); i++)
    {
      const RoundTrip *trip = &placement_spellings[i];
      g_autoptr(GError) error = NULL;
      g_autoptr(HpPlacement) placement = hp_placement_new_from_string (trip->text, &error);
      g_autoptr(HpPlacement) again = NULL;
      g_autofree gchar *text = NULL;

      g_assert_no_error (error);
      g_assert_nonnull (placement);
      text = hp_placement_to_string (placement);
      g_assert_cmpstr (text, ==, trip->expected);

      /* and back: the short form parses to an equal placement */
      again = hp_placement_new_from_string (text, &error);
      g_assert_no_error (error);
      g_assert_true (hp_placement_equal (placement, again));
    }
}

static void
test_from_string_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpPlacement) shard = hp_placement_new_from_string ("Shard(dim=-1)", &error);
  g_autoptr(HpPlacement) replicate = hp_placement_new_from_string ("Replicate()", &error);
  g_autoptr(HpPlacement) partial = hp_placement_new_from_string ("Partial(reduce_op=min)", &error);
  g_autoptr(HpPlacement) default_partial = hp_placement_new_from_string ("P", &error);

  g_assert_no_error (error);
  g_assert_true (HP_IS_SHARD (shard));
  g_assert_cmpint (hp_shard_get_dim (HP_SHARD (shard)), ==, -1);
  g_assert_true (HP_IS_REPLICATE (replicate));
  g_assert_true (HP_IS_PARTIAL (partial));
  g_assert_cmpint (hp_partial_get_reduce_op (HP_PARTIAL (partial)), ==, HP_REDUCE_OP_MIN);
  g_assert_true (HP_IS_PARTIAL (default_partial));
  g_assert_cmpint (hp_partial_get_reduce_op (HP_PARTIAL (default_partial)), ==, HP_REDUCE_OP_SUM);
}

typedef struct
{
  const gchar *text;
  const gchar *message_part;
} BadString;

#define HINT "expected S(dim), R or P(op)"

static const BadString bad_placements[] = {
  { "", "cannot parse placement '': " HINT },
  { "   ", "cannot parse placement '   ': " HINT },
  { "X", "cannot parse placement 'X': " HINT },
  { "s(0)", "cannot parse placement 's(0)': " HINT },
  { "r", "cannot parse placement 'r': " HINT },
  { "shard(0)", "cannot parse placement 'shard(0)': " HINT },
  { "REPLICATE", "cannot parse placement 'REPLICATE': " HINT },
  { "S0", "cannot parse placement 'S0': " HINT },
  { "S 0", "cannot parse placement 'S 0': " HINT },
  { "S(0", "cannot parse placement 'S(0': " HINT },
  { "S0)", "cannot parse placement 'S0)': " HINT },
  { "S(0))", "cannot parse placement 'S(0))': " HINT },
  { "S((0))", "cannot parse placement 'S((0))': " HINT },
  { "S(0)x", "cannot parse placement 'S(0)x': " HINT },
  { "S(0) R", "cannot parse placement 'S(0) R': " HINT },
  { "(S(0))", "cannot parse placement '(S(0))': " HINT },
  { "R(0)", "cannot parse placement 'R(0)': " HINT },
  { "Replicate(x)", "cannot parse placement 'Replicate(x)': " HINT },
  { "Shard(axis=0)", "cannot parse placement 'Shard(axis=0)': " HINT },
  { "Partial(op=max)", "cannot parse placement 'Partial(op=max)': " HINT },
  { "S(0), R", "cannot parse placement 'S(0), R': " HINT },
  { "S", "cannot parse placement 'S': a shard needs a dim" },
  { "S()", "cannot parse placement 'S()': a shard needs a dim" },
  { "Shard(dim=)", "a shard needs a dim" },
  { "S(x)", "cannot parse placement 'S(x)': shard dim 'x' is not an integer" },
  { "S(1.5)", "shard dim '1.5' is not an integer" },
  { "S(+1)", "shard dim '+1' is not an integer" },
  { "S(-)", "shard dim '-' is not an integer" },
  { "S(1 2)", "shard dim '1 2' is not an integer" },
  { "S(0x1)", "shard dim '0x1' is not an integer" },
  { "S(dim=a)", "shard dim 'a' is not an integer" },
  { "S(dim=1=2)", "shard dim '1=2' is not an integer" },
  { "S(99999999999)", "cannot parse placement 'S(99999999999)': shard dim 99999999999 is out of range" },
  { "S(2147483648)", "shard dim 2147483648 is out of range" },
  { "S(-2147483649)", "shard dim -2147483649 is out of range" },
  { "S(-99999999999999999999999999)", "shard dim -99999999999999999999999999 is out of range" },
  /* 2^64 + 5: wrapping 64-bit arithmetic would read 5 */
  { "S(18446744073709551621)", "shard dim 18446744073709551621 is out of range" },
  { "P(foo)", "cannot parse placement 'P(foo)': unknown reduce op 'foo' (expected sum, avg, max, min or product)" },
  { "P(SUM)", "unknown reduce op 'SUM'" },
  { "Partial(reduce_op=mean)", "cannot parse placement 'Partial(reduce_op=mean)': unknown reduce op 'mean'" },
  { "P(reduce_op=)", "unknown reduce op ''" },
};

static void
test_from_string_bad (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (bad_placements); i++)
    {
      g_autoptr(GError) error = NULL;

      g_test_message ("parsing '%s'", bad_placements[i].text);
      hp_test_assert_error (hp_placement_new_from_string (bad_placements[i].text, &error),
                            &error, HP_ERROR_INVALID_ARGUMENT, bad_placements[i].message_part);
    }
}

static void
test_list_to_string (void)
{
  g_autoptr(GPtrArray) empty = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) one = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) every_kind = make_every_kind ();
  g_autofree gchar *empty_text = hp_placements_to_string (empty);
  g_autofree gchar *one_text = NULL;
  g_autofree gchar *every_text = NULL;

  g_assert_cmpstr (empty_text, ==, "()");

  g_ptr_array_add (one, hp_shard_new (-1));
  one_text = hp_placements_to_string (one);
  g_assert_cmpstr (one_text, ==, "(S(-1))");

  every_text = hp_placements_to_string (every_kind);
  g_assert_cmpstr (every_text, ==,
                   "(S(0), S(1), S(-1), S(-2), R, P(sum), P(avg), P(max), P(min), P(product))");
}

static const RoundTrip list_spellings[] = {
  { "(S(0), R)", "(S(0), R)" },
  { "S(0), R", "(S(0), R)" },
  { "[S(0), R]", "(S(0), R)" },
  { "()", "()" },
  { "[]", "()" },
  { "", "()" },
  { "  ( )  ", "()" },
  { "R", "(R)" },
  { "(R)", "(R)" },
  { "S(0)", "(S(0))" },
  { "(S(0))", "(S(0))" },
  { "(S(0),)", "(S(0))" },
  { "S(0), R,", "(S(0), R)" },
  { "(Shard(dim=0), Replicate())", "(S(0), R)" },
  { "(Shard(dim=1), Partial(reduce_op=max), Partial(), P)", "(S(1), P(max), P(sum), P(sum))" },
  { "[ S( -1 ) ,R,P(avg) ]", "(S(-1), R, P(avg))" },
  { "(S(0), S(0))", "(S(0), S(0))" },
  { "(P(sum), P(avg), P(max), P(min), P(product))", "(P(sum), P(avg), P(max), P(min), P(product))" },
};

static void
test_list_from_string (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (list_spellings); i++)
    {
      const RoundTrip *trip = &list_spellings[i];
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) placements = hp_placements_new_from_string (trip->text, &error);
      g_autoptr(GPtrArray) again = NULL;
      g_autofree gchar *text = NULL;

      g_test_message ("parsing '%s'", trip->text);
      g_assert_no_error (error);
      g_assert_nonnull (placements);
      for (guint j = 0; j < placements->len; j++)
        g_assert_true (HP_IS_PLACEMENT (g_ptr_array_index (placements, j)));
      text = hp_placements_to_string (placements);
      g_assert_cmpstr (text, ==, trip->expected);

      again = hp_placements_new_from_string (text, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (again->len, ==, placements->len);
      for (guint j = 0; j < placements->len; j++)
        g_assert_true (hp_placement_equal (g_ptr_array_index (placements, j),
                                           g_ptr_array_index (again, j)));
    }
}

static void
test_list_owns_elements (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) placements = hp_placements_new_from_string ("(S(2), P(max))", &error);
  g_autoptr(HpPlacement) kept = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (placements->len, ==, 2);
  kept = g_object_ref (g_ptr_array_index (placements, 1));
  g_assert_cmpint (hp_shard_get_dim (g_ptr_array_index (placements, 0)), ==, 2);

  /* freeing the array drops its references, and only those */
  g_clear_pointer (&placements, g_ptr_array_unref);
  g_assert_cmpuint (G_OBJECT (kept)->ref_count, ==, 1);
  g_assert_cmpint (hp_partial_get_reduce_op (HP_PARTIAL (kept)), ==, HP_REDUCE_OP_MAX);
}

static const BadString bad_lists[] = {
  { "(S(0), R", "cannot parse placements '(S(0), R': unbalanced parentheses" },
  { "S(0), R)", "cannot parse placements 'S(0), R)': unbalanced parentheses" },
  { ")(", "unbalanced parentheses" },
  { "(S(0)))", "unbalanced parentheses" },
  { "[S(0), R", "cannot parse placements '[S(0), R': unbalanced brackets" },
  { "[", "unbalanced brackets" },
  { "(S(0), Q)", "placement 1: cannot parse placement 'Q': " HINT },
  { "Q, S(0)", "placement 0: cannot parse placement 'Q': " HINT },
  { "(S(0), R, S(x))", "placement 2: cannot parse placement 'S(x)': shard dim 'x' is not an integer" },
  { "(R, P(foo))", "placement 1: cannot parse placement 'P(foo)': unknown reduce op 'foo'" },
  { "(S(0),, R)", "placement 1: cannot parse placement '': " HINT },
  { "(,)", "placement 0: cannot parse placement '': " HINT },
  { "(S(0), R,,)", "placement 2: cannot parse placement '': " HINT },
  { "(S(0) R)", "placement 0: cannot parse placement 'S(0) R': " HINT },
  { "[(S(0), R)]", "placement 0: cannot parse placement '(S(0), R)': " HINT },
  { "(S(0)), (R)", "placement 0: cannot parse placement '(S(0))': " HINT },
  { "[S(0)], [R]", "placement 0: cannot parse placement 'S(0)]': " HINT },
  { "(S(99999999999))", "placement 0: cannot parse placement 'S(99999999999)': shard dim 99999999999 is out of range" },
  { "((S(0), R))", "placement 0: cannot parse placement '(S(0), R)': " HINT },
  { "S(0); R", "placement 0: cannot parse placement 'S(0); R': " HINT },
};

static void
test_list_from_string_bad (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (bad_lists); i++)
    {
      g_autoptr(GError) error = NULL;

      g_test_message ("parsing '%s'", bad_lists[i].text);
      hp_test_assert_error (hp_placements_new_from_string (bad_lists[i].text, &error),
                            &error, HP_ERROR_INVALID_ARGUMENT, bad_lists[i].message_part);
    }
}

/* Messages quote the input; text that is not UTF-8 is refused before */
static void
test_from_string_not_utf8 (void)
{
  g_autoptr(GError) error = NULL;
  HpReduceOp op = HP_REDUCE_OP_MAX;
  HpDType dtype = HP_DTYPE_INT64;

  hp_test_assert_error (hp_placement_new_from_string ("S(\xff)", &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "cannot parse placement: the text is not valid UTF-8");
  hp_test_assert_error (hp_placements_new_from_string ("(R, \xc3)", &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "cannot parse placements: the text is not valid UTF-8");
  hp_test_assert_error (GINT_TO_POINTER (hp_reduce_op_from_string ("s\xffm", &op, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT, "reduce op: the text is not valid UTF-8");
  g_assert_cmpint (op, ==, HP_REDUCE_OP_MAX);
  hp_test_assert_error (GINT_TO_POINTER (hp_dtype_from_string ("float\xe9", &dtype, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT, "dtype: the text is not valid UTF-8");
  g_assert_cmpint (dtype, ==, HP_DTYPE_INT64);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/placement/types", test_type_hierarchy);
  g_test_add_func ("/placement/shard", test_shard);
  g_test_add_func ("/placement/shard/properties", test_shard_properties);
  g_test_add_func ("/placement/replicate", test_replicate);
  g_test_add_func ("/placement/partial", test_partial);
  g_test_add_func ("/placement/reduce-op/strings", test_reduce_op_strings);
  g_test_add_func ("/placement/equal", test_equal);
  g_test_add_func ("/placement/from-string", test_from_string);
  g_test_add_func ("/placement/from-string/values", test_from_string_values);
  g_test_add_func ("/placement/from-string/bad", test_from_string_bad);
  g_test_add_func ("/placement/list/to-string", test_list_to_string);
  g_test_add_func ("/placement/list/from-string", test_list_from_string);
  g_test_add_func ("/placement/list/owns-elements", test_list_owns_elements);
  g_test_add_func ("/placement/list/from-string/bad", test_list_from_string_bad);
  g_test_add_func ("/placement/from-string/not-utf8", test_from_string_not_utf8);

  return g_test_run ();
}
