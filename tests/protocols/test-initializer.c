/* test-initializer.c: initialisers (text form, values, statistics) and
 * param-init maps
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <float.h>
#include <math.h>
#include <string.h>

#include "hp-test-utils.h"

#define N_SAMPLES 100000

static HpInitializer *
parse (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  HpInitializer *init = hp_initializer_new_from_string (text, &error);

  g_assert_no_error (error);
  g_assert_nonnull (init);
  return init;
}

static void
assert_text (HpInitializer *init,
             const gchar   *expected)
{
  g_autofree gchar *text = hp_initializer_to_string (init);

  g_assert_cmpstr (text, ==, expected);
}

static void
assert_args (HpInitializer *init,
             HpInitKind     kind,
             gdouble        value,
             gdouble        mean,
             gdouble        std,
             gdouble        a,
             gdouble        b,
             guint          depth)
{
  g_assert_cmpint (hp_initializer_get_kind (init), ==, kind);
  g_assert_cmpfloat (hp_initializer_get_value (init), ==, value);
  g_assert_cmpfloat (hp_initializer_get_mean (init), ==, mean);
  g_assert_cmpfloat (hp_initializer_get_std (init), ==, std);
  g_assert_cmpfloat (hp_initializer_get_a (init), ==, a);
  g_assert_cmpfloat (hp_initializer_get_b (init), ==, b);
  g_assert_cmpuint (hp_initializer_get_depth (init), ==, depth);
}

/* A tensor of @dtype filled by @init with @seed */
static HpTensor *
filled (HpInitializer *init,
        HpDType        dtype,
        const gint64  *shape,
        guint          ndim,
        guint64        seed)
{
  g_autoptr(GError) error = NULL;
  HpTensor *t = hp_tensor_new_full (dtype, shape, ndim, 7.0);

  g_assert_true (hp_initializer_apply (init, t, seed, &error));
  g_assert_no_error (error);
  return t;
}

static gdouble *
samples_of (HpInitializer *init,
            HpDType        dtype,
            guint64        seed,
            gsize         *n)
{
  g_autoptr(HpTensor) t = filled (init, dtype, HP_TEST_SHAPE (N_SAMPLES / 100, 100), seed);
  gdouble *values = hp_tensor_to_float64_array (t, n);

  g_assert_cmpuint (*n, ==, N_SAMPLES);
  return values;
}

static void
moments (const gdouble *x,
         gsize          n,
         gdouble       *mean,
         gdouble       *std)
{
  gdouble sum = 0.0, sq = 0.0;

  for (gsize i = 0; i < n; i++)
    sum += x[i];
  *mean = sum / n;
  for (gsize i = 0; i < n; i++)
    sq += (x[i] - *mean) * (x[i] - *mean);
  *std = sqrt (sq / (n - 1));
}

static gdouble
fraction_below (const gdouble *x,
                gsize          n,
                gdouble        t)
{
  gsize count = 0;

  for (gsize i = 0; i < n; i++)
    count += x[i] < t;
  return (gdouble) count / n;
}

/* The standard normal density and distribution function, written here
 * independently of the library */
static gdouble
pdf (gdouble x)
{
  return exp (-0.5 * x * x) / sqrt (2.0 * G_PI);
}

static gdouble
cdf (gdouble x)
{
  return 0.5 * erfc (-x / sqrt (2.0));
}

/* Mean and standard deviation of N(mean, std) truncated to [a, b] */
static void
trunc_moments (gdouble  mean,
               gdouble  std,
               gdouble  a,
               gdouble  b,
               gdouble *out_mean,
               gdouble *out_std)
{
  gdouble alpha = (a - mean) / std, beta = (b - mean) / std;
  /* Z from the side where both values are small, for the tails */
  gdouble z = alpha > 0 ? cdf (-alpha) - cdf (-beta) : cdf (beta) - cdf (alpha);
  gdouble d = (pdf (alpha) - pdf (beta)) / z;

  *out_mean = mean + std * d;
  *out_std = std * sqrt (1.0 + (alpha * pdf (alpha) - beta * pdf (beta)) / z - d * d);
}

static void
assert_tensors_identical (HpTensor *a,
                          HpTensor *b)
{
  gsize na, nb;
  g_autofree gdouble *x = hp_tensor_to_float64_array (a, &na);
  g_autofree gdouble *y = hp_tensor_to_float64_array (b, &nb);

  g_assert_cmpint (hp_tensor_get_dtype (a), ==, hp_tensor_get_dtype (b));
  g_assert_cmpuint (na, ==, nb);
  for (gsize i = 0; i < na; i++)
    g_assert_cmpfloat (x[i], ==, y[i]);
}

static void
test_constructors_and_text (void)
{
  g_autoptr(HpInitializer) zeros = hp_initializer_new_zeros ();
  g_autoptr(HpInitializer) ones = hp_initializer_new_ones ();
  g_autoptr(HpInitializer) constant = hp_initializer_new_constant (0.5);
  g_autoptr(HpInitializer) normal = hp_initializer_new_normal (0.0, 0.02);
  g_autoptr(HpInitializer) trunc = hp_initializer_new_trunc_normal (0.0, 0.02, -0.04, 0.04);
  g_autoptr(HpInitializer) uniform = hp_initializer_new_uniform (-0.1, 0.1);
  g_autoptr(HpInitializer) depth = hp_initializer_new_depth_scaled_normal (0.02, 3);
  g_autoptr(GEnumClass) klass = g_type_class_ref (HP_TYPE_INIT_KIND);

  assert_text (zeros, "zeros");
  assert_text (ones, "ones");
  assert_text (constant, "constant(value=0.5)");
  assert_text (normal, "normal(mean=0, std=0.02)");
  assert_text (trunc, "trunc_normal(mean=0, std=0.02, a=-0.04, b=0.04)");
  assert_text (uniform, "uniform(a=-0.1, b=0.1)");
  assert_text (depth, "depth_scaled_normal(std=0.02, depth=3)");

  assert_args (zeros, HP_INIT_KIND_ZEROS, 0, 0, 0, 0, 0, 0);
  assert_args (ones, HP_INIT_KIND_ONES, 1, 0, 0, 0, 0, 0);
  assert_args (constant, HP_INIT_KIND_CONSTANT, 0.5, 0, 0, 0, 0, 0);
  assert_args (normal, HP_INIT_KIND_NORMAL, 0, 0, 0.02, 0, 0, 0);
  assert_args (trunc, HP_INIT_KIND_TRUNC_NORMAL, 0, 0, 0.02, -0.04, 0.04, 0);
  assert_args (uniform, HP_INIT_KIND_UNIFORM, 0, 0, 0, -0.1, 0.1, 0);
  assert_args (depth, HP_INIT_KIND_DEPTH_SCALED_NORMAL, 0, 0, 0.02, -2, 2, 3);

  /* the enum nicks are the kind names of the text form */
  g_assert_cmpuint (klass->n_values, ==, 7);
  g_assert_cmpstr (g_enum_get_value (klass, HP_INIT_KIND_TRUNC_NORMAL)->value_nick, ==, "trunc_normal");
  g_assert_cmpstr (g_enum_get_value (klass, HP_INIT_KIND_DEPTH_SCALED_NORMAL)->value_nick, ==,
                   "depth_scaled_normal");

  /* every form reads back equal */
  {
    HpInitializer *all[] = { zeros, ones, constant, normal, trunc, uniform, depth };

    for (guint i = 0; i < G_N_ELEMENTS (all); i++)
      {
        g_autofree gchar *text = hp_initializer_to_string (all[i]);
        g_autoptr(HpInitializer) back = parse (text);

        g_assert_true (hp_initializer_equal (all[i], back));
        for (guint j = 0; j < G_N_ELEMENTS (all); j++)
          g_assert_true (hp_initializer_equal (all[i], all[j]) == (i == j));
      }
  }
}

static void
test_equal (void)
{
  g_autoptr(HpInitializer) n1 = hp_initializer_new_normal (0.0, 0.02);
  g_autoptr(HpInitializer) n2 = hp_initializer_new_normal (0.0, 0.02);
  g_autoptr(HpInitializer) n3 = hp_initializer_new_normal (0.0, 0.03);
  g_autoptr(HpInitializer) t1 = hp_initializer_new_trunc_normal (0.0, 0.02, -2, 2);
  g_autoptr(HpInitializer) d1 = hp_initializer_new_depth_scaled_normal (0.02, 1);
  g_autoptr(HpInitializer) d2 = hp_initializer_new_depth_scaled_normal (0.02, 2);
  g_autoptr(HpInitializer) c1 = hp_initializer_new_constant (1.0);
  g_autoptr(HpInitializer) ones = hp_initializer_new_ones ();

  g_assert_true (hp_initializer_equal (n1, n2));
  g_assert_false (hp_initializer_equal (n1, n3));
  g_assert_false (hp_initializer_equal (n1, t1));
  g_assert_false (hp_initializer_equal (d1, d2));
  /* same values, different kinds */
  g_assert_false (hp_initializer_equal (c1, ones));
}

static void
test_round_trip_doubles (void)
{
  const gdouble values[] = {
    0.1, 1e-300, -1e-300, 1.0 / 3.0, 2.0 / 3.0, 5e-324, DBL_MIN, DBL_MAX, -DBL_MAX,
    123456789.123456789, 0.02, 9007199254740993.0, 1e21, 1e-7, 0.3, -0.0, 100000.0,
  };

  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autoptr(HpInitializer) constant = hp_initializer_new_constant (values[i]);
      g_autoptr(HpInitializer) normal = hp_initializer_new_normal (values[i], fabs (values[i]));
      g_autofree gchar *c_text = hp_initializer_to_string (constant);
      g_autofree gchar *n_text = hp_initializer_to_string (normal);
      g_autoptr(HpInitializer) c_back = parse (c_text);
      g_autoptr(HpInitializer) n_back = parse (n_text);
      gdouble c_value = hp_initializer_get_value (c_back);
      gdouble n_mean = hp_initializer_get_mean (n_back);
      gdouble n_std = hp_initializer_get_std (n_back);
      gdouble abs_value = fabs (values[i]);
      g_autofree gchar *c_again = hp_initializer_to_string (c_back);

      /* bit-identical, sign of zero included */
      g_assert_cmpmem (&c_value, sizeof c_value, &values[i], sizeof values[i]);
      g_assert_cmpmem (&n_mean, sizeof n_mean, &values[i], sizeof values[i]);
      g_assert_cmpmem (&n_std, sizeof n_std, &abs_value, sizeof abs_value);
      g_assert_cmpstr (c_again, ==, c_text);
    }

  /* the shortest form, not 17 digits */
  {
    g_autoptr(HpInitializer) c = hp_initializer_new_constant (0.1);
    g_autoptr(HpInitializer) tiny = hp_initializer_new_constant (1e-300);
    g_autoptr(HpInitializer) third = hp_initializer_new_constant (1.0 / 3.0);

    assert_text (c, "constant(value=0.1)");
    assert_text (tiny, "constant(value=1e-300)");
    assert_text (third, "constant(value=0.3333333333333333)");
  }

  /* whole numbers below 1e17 without an exponent */
  {
    static const struct { gdouble value; const gchar *text; } forms[] = {
      { 1000.0, "constant(value=1000)" },
      { -1200.0, "constant(value=-1200)" },
      { 123456.5, "constant(value=123456.5)" },
      { 1e16, "constant(value=10000000000000000)" },
      { 1e17, "constant(value=1e+17)" },
      { 1e21, "constant(value=1e+21)" },
      { 1e-7, "constant(value=1e-07)" },
      { 0.0001, "constant(value=0.0001)" },
      { -0.0, "constant(value=-0)" },
    };

    for (guint i = 0; i < G_N_ELEMENTS (forms); i++)
      {
        g_autoptr(HpInitializer) c = hp_initializer_new_constant (forms[i].value);

        assert_text (c, forms[i].text);
      }
  }
}

static void
test_parse_forms (void)
{
  static const struct { const gchar *text; const gchar *canonical; } cases[] = {
    { "zeros", "zeros" },
    { "zeros()", "zeros" },
    { "  ones ( )  ", "ones" },
    { "constant(value=-2)", "constant(value=-2)" },
    { "constant( value = 1e3 )", "constant(value=1000)" },
    { "normal", "normal(mean=0, std=1)" },
    { "normal()", "normal(mean=0, std=1)" },
    { "normal(std=0.02)", "normal(mean=0, std=0.02)" },
    { " normal ( std = 0.02 , mean = 1.5 ) ", "normal(mean=1.5, std=0.02)" },
    { "normal(std=0)", "normal(mean=0, std=0)" },
    { "trunc_normal", "trunc_normal(mean=0, std=1, a=-2, b=2)" },
    { "trunc_normal(std=0.02)", "trunc_normal(mean=0, std=0.02, a=-2, b=2)" },
    { "trunc_normal(b=0.04, a=-0.04, std=0.02, mean=0)", "trunc_normal(mean=0, std=0.02, a=-0.04, b=0.04)" },
    { "uniform", "uniform(a=0, b=1)" },
    { "uniform(b=0.5)", "uniform(a=0, b=0.5)" },
    { "uniform(a=-1)", "uniform(a=-1, b=1)" },
    { "depth_scaled_normal", "depth_scaled_normal(std=0.02, depth=0)" },
    { "depth_scaled_normal(depth=11)", "depth_scaled_normal(std=0.02, depth=11)" },
    { "depth_scaled_normal(depth = 2, std = 0.01)", "depth_scaled_normal(std=0.01, depth=2)" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(HpInitializer) init = parse (cases[i].text);

      assert_text (init, cases[i].canonical);
    }
}

static void
test_parse_errors (void)
{
  static const struct { const gchar *text; const gchar *message; } cases[] = {
    { "", "cannot parse initializer '': unknown kind '' (expected one of zeros, ones, "
          "constant, normal, trunc_normal, uniform, depth_scaled_normal)" },
    { "gaussian(std=1)", "cannot parse initializer 'gaussian(std=1)': unknown kind 'gaussian' "
                         "(expected one of zeros, ones, constant, normal, trunc_normal, uniform, "
                         "depth_scaled_normal)" },
    { "Normal", "unknown kind 'Normal'" },
    { "(std=1)", "unknown kind ''" },
    { "normal std=1", "cannot parse initializer 'normal std=1': expected '(' after 'normal'" },
    { "normal(std=1", "cannot parse initializer 'normal(std=1': the arguments of normal must be "
                      "one list in parentheses at the end" },
    { "normal(std=1))", "the arguments of normal must be one list in parentheses at the end" },
    { "normal(std=1) x", "the arguments of normal must be one list in parentheses at the end" },
    { "normal((std=1))", "the arguments of normal must be one list in parentheses at the end" },
    { "zeros(value=1)", "cannot parse initializer 'zeros(value=1)': zeros takes no arguments" },
    { "normal(0.02)", "cannot parse initializer 'normal(0.02)': argument '0.02' is not name=value" },
    { "normal(std=1,)", "argument '' is not name=value" },
    { "normal(sigma=1)", "cannot parse initializer 'normal(sigma=1)': unknown argument 'sigma' "
                         "for normal (expected mean, std)" },
    { "uniform(low=0)", "unknown argument 'low' for uniform (expected a, b)" },
    { "trunc_normal(depth=1)", "unknown argument 'depth' for trunc_normal (expected mean, std, a, b)" },
    { "normal(std=1, std=2)", "cannot parse initializer 'normal(std=1, std=2)': argument 'std' is "
                              "given twice" },
    { "normal(std=abc)", "cannot parse initializer 'normal(std=abc)': 'abc' is not a finite "
                         "number (argument std)" },
    { "normal(std=)", "'' is not a finite number (argument std)" },
    { "normal(std=0.1x)", "'0.1x' is not a finite number (argument std)" },
    { "normal(mean=inf)", "'inf' is not a finite number (argument mean)" },
    { "constant(value=nan)", "'nan' is not a finite number (argument value)" },
    { "uniform(a=1e999)", "'1e999' is not a finite number (argument a)" },
    { "depth_scaled_normal(depth=-1)", "cannot parse initializer 'depth_scaled_normal(depth=-1)': "
                                       "'-1' is not a non-negative integer (argument depth)" },
    { "depth_scaled_normal(depth=1.5)", "'1.5' is not a non-negative integer (argument depth)" },
    { "depth_scaled_normal(depth=99999999999)", "'99999999999' is not a non-negative integer" },
    { "constant", "cannot parse initializer 'constant': constant needs the argument 'value'" },
    { "constant()", "constant needs the argument 'value'" },
    { "normal(std=-1)", "cannot parse initializer 'normal(std=-1)': std must not be negative (got -1)" },
    { "trunc_normal(std=-0.5)", "std must not be negative (got -0.5)" },
    { "depth_scaled_normal(std=-0.02)", "std must not be negative (got -0.02)" },
    { "trunc_normal(a=1, b=0)", "cannot parse initializer 'trunc_normal(a=1, b=0)': a must be "
                                "less than b (got a=1, b=0)" },
    { "trunc_normal(a=3)", "a must be less than b (got a=3, b=2)" },
    { "uniform(a=1, b=1)", "cannot parse initializer 'uniform(a=1, b=1)': a must be less than b "
                           "(got a=1, b=1)" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      HpInitializer *init = hp_initializer_new_from_string (cases[i].text, &error);

      g_test_message ("parsing '%s'", cases[i].text);
      hp_test_assert_error (init, &error, HP_ERROR_INVALID_ARGUMENT, cases[i].message);
    }
}

static void
test_constant_kinds (void)
{
  g_autoptr(HpInitializer) zeros = hp_initializer_new_zeros ();
  g_autoptr(HpInitializer) ones = hp_initializer_new_ones ();
  g_autoptr(HpInitializer) constant = hp_initializer_new_constant (-2.5);
  g_autoptr(HpInitializer) integral = hp_initializer_new_constant (-3.0);
  const HpDType dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64, HP_DTYPE_INT64 };

  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      g_autoptr(HpTensor) z = filled (zeros, dtypes[d], HP_TEST_SHAPE (2, 3), 1);
      g_autoptr(HpTensor) o = filled (ones, dtypes[d], HP_TEST_SHAPE (4), 1);
      g_autoptr(HpTensor) i = filled (integral, dtypes[d], HP_TEST_SHAPE (2, 1, 2), 1);
      g_autoptr(HpTensor) scalar = filled (ones, dtypes[d], NULL, 0, 1);

      hp_test_assert_values (z, HP_TEST_DATA (0, 0, 0, 0, 0, 0), HP_TEST_SHAPE (2, 3), 0, 0);
      hp_test_assert_values (o, HP_TEST_DATA (1, 1, 1, 1), HP_TEST_SHAPE (4), 0, 0);
      hp_test_assert_values (i, HP_TEST_DATA (-3, -3, -3, -3), HP_TEST_SHAPE (2, 1, 2), 0, 0);
      hp_test_assert_values (scalar, HP_TEST_DATA (1), NULL, 0, 0, 0);
      g_assert_cmpint (hp_tensor_get_dtype (z), ==, dtypes[d]);
    }

  {
    g_autoptr(HpTensor) f = filled (constant, HP_DTYPE_FLOAT32, HP_TEST_SHAPE (3), 1);
    g_autoptr(HpTensor) empty = filled (constant, HP_DTYPE_FLOAT64, HP_TEST_SHAPE (0, 3), 1);

    hp_test_assert_values (f, HP_TEST_DATA (-2.5, -2.5, -2.5), HP_TEST_SHAPE (3), 0, 0);
    g_assert_cmpint (hp_tensor_get_numel (empty), ==, 0);
  }
}

static void
test_dtype_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 4, 5, 6 }, 3, HP_TEST_SHAPE (3));
  g_autoptr(HpInitializer) half = hp_initializer_new_constant (0.5);
  g_autoptr(HpInitializer) huge = hp_initializer_new_constant (1e19);
  HpInitializer *randoms[] = {
    hp_initializer_new_normal (0, 1),
    hp_initializer_new_trunc_normal (0, 1, -2, 2),
    hp_initializer_new_uniform (0, 1),
    hp_initializer_new_depth_scaled_normal (0.02, 0),
  };

  for (guint i = 0; i < G_N_ELEMENTS (randoms); i++)
    {
      g_autofree gchar *text = hp_initializer_to_string (randoms[i]);
      g_autofree gchar *expected = g_strdup_printf ("HpInitializer %s: cannot fill an int64 tensor "
                                                    "(random initialisers need float32 or float64)",
                                                    text);

      hp_test_assert_error (GINT_TO_POINTER (hp_initializer_apply (randoms[i], ids, 1, &error)), &error,
                            HP_ERROR_INVALID_ARGUMENT, expected);
      g_object_unref (randoms[i]);
    }

  hp_test_assert_error (GINT_TO_POINTER (hp_initializer_apply (half, ids, 1, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpInitializer constant(value=0.5): cannot fill an int64 tensor with 0.5, "
                        "which is not an int64 value");
  hp_test_assert_error (GINT_TO_POINTER (hp_initializer_apply (huge, ids, 1, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpInitializer constant(value=1e+19): cannot fill an int64 tensor with 1e+19, "
                        "which is not an int64 value");

  /* nothing was written */
  hp_test_assert_values (ids, HP_TEST_DATA (4, 5, 6), HP_TEST_SHAPE (3), 0, 0);
}

static void
test_normal (void)
{
  g_autoptr(HpInitializer) normal = hp_initializer_new_normal (1.5, 0.5);
  g_autoptr(HpInitializer) standard = hp_initializer_new_normal (0.0, 1.0);
  g_autoptr(HpInitializer) degenerate = hp_initializer_new_normal (0.25, 0.0);
  const HpDType dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64 };

  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      gsize n;
      g_autofree gdouble *x = samples_of (normal, dtypes[d], 42, &n);
      gdouble mean, std;

      moments (x, n, &mean, &std);
      /* standard error of the mean 0.0016, of the std 0.0011 */
      g_assert_cmpfloat_with_epsilon (mean, 1.5, 0.008);
      g_assert_cmpfloat_with_epsilon (std, 0.5, 0.006);
      g_assert_cmpfloat_with_epsilon (fraction_below (x, n, 1.0), cdf (-1.0), 0.006);
      g_assert_cmpfloat_with_epsilon (fraction_below (x, n, 2.5), cdf (2.0), 0.004);
    }

  /* normal(0, 1) gives the values of hp_tensor_new_randn */
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      g_autoptr(HpTensor) t = filled (standard, dtypes[d], HP_TEST_SHAPE (7, 9), 1234);
      g_autoptr(HpTensor) expected = hp_tensor_new_randn (dtypes[d], HP_TEST_SHAPE (7, 9), 1234);

      assert_tensors_identical (t, expected);
    }

  {
    g_autoptr(HpTensor) t = filled (degenerate, HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3), 5);

    hp_test_assert_values (t, HP_TEST_DATA (0.25, 0.25, 0.25), HP_TEST_SHAPE (3), 0, 0);
  }
}

static void
check_trunc_normal (HpInitializer *init,
                    gdouble        mean,
                    gdouble        std,
                    gdouble        a,
                    gdouble        b,
                    guint64        seed)
{
  const HpDType dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64 };
  gdouble want_mean, want_std;

  trunc_moments (mean, std, a, b, &want_mean, &want_std);

  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      gsize n;
      g_autofree gdouble *x = samples_of (init, dtypes[d], seed, &n);
      gdouble lo = dtypes[d] == HP_DTYPE_FLOAT32 ? (gfloat) a : a;
      gdouble hi = dtypes[d] == HP_DTYPE_FLOAT32 ? (gfloat) b : b;
      gdouble got_mean, got_std;
      gdouble min = G_MAXDOUBLE, max = -G_MAXDOUBLE;

      for (gsize i = 0; i < n; i++)
        {
          min = MIN (min, x[i]);
          max = MAX (max, x[i]);
        }
      g_assert_cmpfloat (min, >=, lo);
      g_assert_cmpfloat (max, <=, hi);
      /* the samples fill the interval */
      g_assert_cmpfloat (min, <, lo + 0.1 * (b - a));
      g_assert_cmpfloat (max, >, hi - 0.1 * (b - a));

      moments (x, n, &got_mean, &got_std);
      g_test_message ("trunc normal: mean %g (want %g), std %g (want %g)",
                      got_mean, want_mean, got_std, want_std);
      g_assert_cmpfloat_with_epsilon (got_mean, want_mean, 5.0 * want_std / sqrt (n));
      /* 5 standard errors, allowing for the kurtosis of a tail */
      g_assert_cmpfloat_with_epsilon (got_std, want_std, 5.0 * want_std * sqrt (2.0 / n));
    }
}

static void
test_trunc_normal (void)
{
  g_autoptr(HpInitializer) standard = hp_initializer_new_trunc_normal (0, 1, -2, 2);
  g_autoptr(HpInitializer) skewed = hp_initializer_new_trunc_normal (1, 2, 0, 3);
  g_autoptr(HpInitializer) tail = hp_initializer_new_trunc_normal (0, 1, 5, 6);
  g_autoptr(HpInitializer) lower_tail = hp_initializer_new_trunc_normal (0, 1, -9, -8);
  g_autoptr(HpInitializer) narrow = hp_initializer_new_trunc_normal (0, 0.02, -0.04, 0.04);
  g_autoptr(HpInitializer) degenerate = hp_initializer_new_trunc_normal (5, 0, -1, 1);

  check_trunc_normal (standard, 0, 1, -2, 2, 1);
  check_trunc_normal (skewed, 1, 2, 0, 3, 2);
  check_trunc_normal (tail, 0, 1, 5, 6, 3);
  check_trunc_normal (lower_tail, 0, 1, -9, -8, 4);
  check_trunc_normal (narrow, 0, 0.02, -0.04, 0.04, 5);

  /* the distribution function, not only the moments: P(x < t | [-2, 2]) */
  {
    gsize n;
    g_autofree gdouble *x = samples_of (standard, HP_DTYPE_FLOAT64, 9, &n);
    gdouble z = cdf (2) - cdf (-2);
    const gdouble points[] = { -1.5, -0.5, 0.0, 0.7, 1.9 };

    for (guint i = 0; i < G_N_ELEMENTS (points); i++)
      g_assert_cmpfloat_with_epsilon (fraction_below (x, n, points[i]),
                                      (cdf (points[i]) - cdf (-2)) / z, 0.006);
  }

  /* std 0: the mean, clamped to the bounds */
  {
    g_autoptr(HpTensor) t = filled (degenerate, HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2), 5);

    hp_test_assert_values (t, HP_TEST_DATA (1, 1), HP_TEST_SHAPE (2), 0, 0);
  }
}

static void
test_uniform (void)
{
  g_autoptr(HpInitializer) uniform = hp_initializer_new_uniform (-0.1, 0.3);
  const HpDType dtypes[] = { HP_DTYPE_FLOAT32, HP_DTYPE_FLOAT64 };

  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      gsize n;
      g_autofree gdouble *x = samples_of (uniform, dtypes[d], 77, &n);
      gdouble mean, std;
      gdouble lo = dtypes[d] == HP_DTYPE_FLOAT32 ? (gfloat) -0.1 : -0.1;
      gdouble hi = dtypes[d] == HP_DTYPE_FLOAT32 ? (gfloat) 0.3 : 0.3;
      g_autoptr(HpTensor) t = filled (uniform, dtypes[d], HP_TEST_SHAPE (3, 4, 5), 8);
      g_autoptr(HpTensor) expected = hp_tensor_new_uniform (dtypes[d], HP_TEST_SHAPE (3, 4, 5),
                                                            -0.1, 0.3, 8);

      for (gsize i = 0; i < n; i++)
        {
          g_assert_cmpfloat (x[i], >=, lo);
          g_assert_cmpfloat (x[i], <=, hi);
          if (dtypes[d] == HP_DTYPE_FLOAT64)
            g_assert_cmpfloat (x[i], <, hi);
        }
      moments (x, n, &mean, &std);
      g_assert_cmpfloat_with_epsilon (mean, 0.1, 0.002);
      g_assert_cmpfloat_with_epsilon (std, 0.4 / sqrt (12.0), 0.002);
      g_assert_cmpfloat_with_epsilon (fraction_below (x, n, 0.0), 0.25, 0.007);

      /* the values of hp_tensor_new_uniform */
      assert_tensors_identical (t, expected);
    }
}

/* Bounds further apart than the largest double: the values stay finite
 * and within them, half below the middle (found by fuzz-initializer) */
static void
test_uniform_wide (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpInitializer) wide = hp_initializer_new_from_string ("uniform(a=-1e308, b=1.5e308)", &error);
  g_autofree gdouble *x = NULL;
  gsize n;

  g_assert_no_error (error);
  x = samples_of (wide, HP_DTYPE_FLOAT64, 5, &n);
  for (gsize i = 0; i < n; i++)
    {
      g_assert_true (isfinite (x[i]));
      g_assert_cmpfloat (x[i], >=, -1e308);
      g_assert_cmpfloat (x[i], <=, 1.5e308);
    }
  g_assert_cmpfloat_with_epsilon (fraction_below (x, n, 0.25e308), 0.5, 0.01);
}

static void
test_depth_scaled_normal (void)
{
  const guint depths[] = { 0, 3, 11 };

  for (guint i = 0; i < G_N_ELEMENTS (depths); i++)
    {
      g_autoptr(HpInitializer) depth = hp_initializer_new_depth_scaled_normal (0.02, depths[i]);
      gdouble std = 0.02 / sqrt (2.0 * (depths[i] + 1));
      g_autoptr(HpInitializer) same = hp_initializer_new_trunc_normal (0, std, -2, 2);
      g_autoptr(HpTensor) a = filled (depth, HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 5), 21);
      g_autoptr(HpTensor) b = filled (same, HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 5), 21);
      gsize n;
      g_autofree gdouble *x = samples_of (depth, HP_DTYPE_FLOAT64, 3, &n);
      gdouble mean, got_std;

      /* documented as trunc_normal(0, std / sqrt(2 (depth + 1)), -2, 2) */
      assert_tensors_identical (a, b);
      moments (x, n, &mean, &got_std);
      g_assert_cmpfloat_with_epsilon (mean, 0.0, 5.0 * std / sqrt (n));
      g_assert_cmpfloat_with_epsilon (got_std, std, 5.0 * std * sqrt (2.0 / n));
    }
}

static void
test_seeds (void)
{
  HpInitializer *inits[] = {
    hp_initializer_new_normal (0, 1),
    hp_initializer_new_trunc_normal (0, 1, -1, 1),
    hp_initializer_new_uniform (0, 1),
    hp_initializer_new_depth_scaled_normal (1, 0),
  };

  for (guint i = 0; i < G_N_ELEMENTS (inits); i++)
    {
      g_autoptr(HpTensor) a = filled (inits[i], HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 4), 99);
      g_autoptr(HpTensor) b = filled (inits[i], HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 4), 99);
      g_autoptr(HpTensor) c = filled (inits[i], HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 4), 100);
      gsize n;
      g_autofree gdouble *x = hp_tensor_to_float64_array (a, &n);
      g_autofree gdouble *y = hp_tensor_to_float64_array (c, &n);
      guint same = 0;

      assert_tensors_identical (a, b);
      for (gsize k = 0; k < n; k++)
        same += x[k] == y[k];
      g_assert_cmpuint (same, ==, 0);

      /* a prefix of a bigger tensor holds the same values: element i
       * depends only on i and the seed */
      {
        g_autoptr(HpTensor) flat = filled (inits[i], HP_DTYPE_FLOAT64, HP_TEST_SHAPE (20), 99);
        g_autofree gdouble *z = hp_tensor_to_float64_array (flat, &n);

        for (gsize k = 0; k < 16; k++)
          g_assert_cmpfloat (z[k], ==, x[k]);
      }
      g_object_unref (inits[i]);
    }
}

static void
test_in_place (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpInitializer) ones = hp_initializer_new_ones ();
  g_autoptr(HpInitializer) normal = hp_initializer_new_normal (0, 1);
  g_autoptr(HpTensor) param = hp_tensor_new_zeros (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (2, 2));
  g_autoptr(HpTensor) shared = NULL;
  g_autoptr(HpTensor) product = NULL;

  hp_tensor_set_requires_grad (param, TRUE);
  shared = hp_tensor_detach (param);

  g_assert_true (hp_initializer_apply (ones, param, 0, &error));
  g_assert_no_error (error);
  hp_test_assert_values (param, HP_TEST_DATA (1, 1, 1, 1), HP_TEST_SHAPE (2, 2), 0, 0);
  /* a leaf stays a leaf that requires grad; tensors sharing the buffer
   * see the new values */
  g_assert_true (hp_tensor_get_requires_grad (param));
  g_assert_true (hp_tensor_is_leaf (param));
  hp_test_assert_values (shared, HP_TEST_DATA (1, 1, 1, 1), HP_TEST_SHAPE (2, 2), 0, 0);

  /* a tensor with gradient history is refused, and left alone */
  product = hp_tensor_scale (param, 3.0, &error);
  g_assert_no_error (error);
  g_assert_false (hp_tensor_is_leaf (product));
  g_assert_false (hp_initializer_apply (normal, product, 0, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_STATE);
  g_assert_cmpstr (error->message, ==,
                   "HpInitializer normal(mean=0, std=1): cannot initialise a tensor that has "
                   "gradient history (a non-leaf, the result of an op); initialise a leaf such "
                   "as a parameter");
  g_clear_error (&error);
  hp_test_assert_values (product, HP_TEST_DATA (3, 3, 3, 3), HP_TEST_SHAPE (2, 2), 0, 0);
}

/* HpParamInit */

static HpParamInit *
parse_map (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  HpParamInit *map = hp_param_init_new_from_string (text, &error);

  g_assert_no_error (error);
  g_assert_nonnull (map);
  return map;
}

static void
assert_map (HpParamInit *map,
            const gchar *expected)
{
  g_autofree gchar *text = hp_param_init_to_string (map);

  g_assert_cmpstr (text, ==, expected);
}

static void
test_param_init_map (void)
{
  g_autoptr(HpParamInit) map = hp_param_init_new ();
  g_autoptr(HpInitializer) normal = hp_initializer_new_normal (0, 0.02);
  g_autoptr(HpInitializer) zeros = hp_initializer_new_zeros ();
  g_autoptr(HpInitializer) ones = hp_initializer_new_ones ();
  g_auto(GStrv) empty_names = hp_param_init_get_names (map);
  g_auto(GStrv) names = NULL;

  g_assert_cmpuint (g_strv_length (empty_names), ==, 0);
  g_assert_cmpuint (hp_param_init_get_n_entries (map), ==, 0);
  assert_map (map, "");

  hp_param_init_set (map, "weight", normal);
  hp_param_init_set (map, "bias", zeros);
  hp_param_init_set (map, "scale", ones);
  g_assert_cmpuint (hp_param_init_get_n_entries (map), ==, 3);
  g_assert_true (hp_param_init_get (map, "weight") == normal);
  g_assert_true (hp_param_init_get (map, "bias") == zeros);
  g_assert_null (hp_param_init_get (map, "missing"));
  assert_map (map, "weight=normal(mean=0, std=0.02); bias=zeros; scale=ones");

  /* replacing keeps the position; NULL removes; removing twice is fine */
  hp_param_init_set (map, "weight", ones);
  assert_map (map, "weight=ones; bias=zeros; scale=ones");
  hp_param_init_set (map, "bias", NULL);
  hp_param_init_set (map, "bias", NULL);
  hp_param_init_set (map, "missing", NULL);
  assert_map (map, "weight=ones; scale=ones");
  hp_param_init_set (map, "bias", normal);
  names = hp_param_init_get_names (map);
  g_assert_cmpstrv (names, ((const gchar *[]) { "weight", "scale", "bias", NULL }));
  g_assert_cmpuint (hp_param_init_get_n_entries (map), ==, 3);
}

static void
test_param_init_text (void)
{
  g_autoptr(HpParamInit) map = parse_map (" weight = normal(std=0.02) ;bias=zeros;  layers.0.w_1=trunc_normal(a=-1, b=1) ");
  g_autoptr(HpParamInit) empty = parse_map ("   ");
  g_autofree gchar *text = hp_param_init_to_string (map);
  g_autoptr(HpParamInit) back = parse_map (text);

  g_assert_cmpstr (text, ==, "weight=normal(mean=0, std=0.02); bias=zeros; "
                             "layers.0.w_1=trunc_normal(mean=0, std=1, a=-1, b=1)");
  g_assert_cmpuint (hp_param_init_get_n_entries (empty), ==, 0);
  g_assert_true (hp_param_init_equal (map, back));
  assert_map (back, text);
}

static void
test_param_init_errors (void)
{
  static const struct { const gchar *text; const gchar *message; } cases[] = {
    { "weight=zeros;;bias=ones", "cannot parse param init 'weight=zeros;;bias=ones': entry 1 is empty" },
    { "weight=zeros;", "cannot parse param init 'weight=zeros;': entry 1 is empty" },
    { "weight zeros", "cannot parse param init 'weight zeros': entry 'weight zeros' is not "
                      "name=initializer" },
    { "=zeros", "cannot parse param init '=zeros': entry '=zeros' has an empty parameter name" },
    { "my weight=zeros", "cannot parse param init 'my weight=zeros': entry 'my weight=zeros' has "
                         "an invalid parameter name 'my weight' (letters, digits, '_', '-' and '.' only)" },
    { "w=zeros; w=ones", "cannot parse param init 'w=zeros; w=ones': entry 'w=ones' repeats "
                         "parameter 'w'" },
    { "w=zeros; b=normal(std=x)", "cannot parse param init 'w=zeros; b=normal(std=x)': entry "
                                  "'b=normal(std=x)': cannot parse initializer 'normal(std=x)': "
                                  "'x' is not a finite number (argument std)" },
    { "w=", "entry 'w=': cannot parse initializer '': unknown kind ''" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      HpParamInit *map = hp_param_init_new_from_string (cases[i].text, &error);

      g_test_message ("parsing '%s'", cases[i].text);
      hp_test_assert_error (map, &error, HP_ERROR_INVALID_ARGUMENT, cases[i].message);
    }
}

static void
test_param_init_copy_equal (void)
{
  g_autoptr(HpParamInit) map = parse_map ("weight=normal(std=0.02); bias=zeros");
  g_autoptr(HpParamInit) copy = hp_param_init_copy (map);
  g_autoptr(HpParamInit) reordered = parse_map ("bias=zeros; weight=normal(std=0.02)");
  g_autoptr(HpParamInit) other = parse_map ("bias=zeros; weight=normal(std=0.03)");
  g_autoptr(HpParamInit) fewer = parse_map ("weight=normal(std=0.02)");
  g_autoptr(HpInitializer) ones = hp_initializer_new_ones ();

  g_assert_true (hp_param_init_equal (map, copy));
  /* the initialisers are shared, the maps are not */
  g_assert_true (hp_param_init_get (map, "weight") == hp_param_init_get (copy, "weight"));
  assert_map (copy, "weight=normal(mean=0, std=0.02); bias=zeros");

  g_assert_true (hp_param_init_equal (map, reordered));
  g_assert_false (hp_param_init_equal (map, other));
  g_assert_false (hp_param_init_equal (map, fewer));
  g_assert_false (hp_param_init_equal (fewer, map));

  hp_param_init_set (copy, "bias", ones);
  hp_param_init_set (copy, "gamma", ones);
  hp_param_init_set (copy, "weight", NULL);
  assert_map (map, "weight=normal(mean=0, std=0.02); bias=zeros");
  assert_map (copy, "bias=ones; gamma=ones");
  g_assert_false (hp_param_init_equal (map, copy));
}

/* Messages quote the input; text that is not UTF-8 is refused before */
static void
test_not_utf8 (void)
{
  g_autoptr(GError) error = NULL;
  HpMeshAxisName axis = HP_MESH_AXIS_NAME_TP;

  hp_test_assert_error (hp_initializer_new_from_string ("normal(std=\xff)", &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "cannot parse initializer: the text is not valid UTF-8");
  hp_test_assert_error (hp_param_init_new_from_string ("w\xe9ight=zeros()", &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "cannot parse param init: the text is not valid UTF-8");
  hp_test_assert_error (hp_named_placement_new_from_string ("tp:S(\xc3)", &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "cannot parse named placement: the text is not valid UTF-8");
  hp_test_assert_error (GINT_TO_POINTER (hp_mesh_axis_name_from_string ("t\xff", &axis, &error)), &error,
                        HP_ERROR_INVALID_ARGUMENT, "mesh axis name: the text is not valid UTF-8");
  g_assert_cmpint (axis, ==, HP_MESH_AXIS_NAME_TP);
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init (&argc, &argv);

  g_test_add_func ("/initializer/constructors-and-text", test_constructors_and_text);
  g_test_add_func ("/initializer/equal", test_equal);
  g_test_add_func ("/initializer/round-trip-doubles", test_round_trip_doubles);
  g_test_add_func ("/initializer/parse-forms", test_parse_forms);
  g_test_add_func ("/initializer/parse-errors", test_parse_errors);
  g_test_add_func ("/initializer/constant-kinds", test_constant_kinds);
  g_test_add_func ("/initializer/dtype-errors", test_dtype_errors);
  g_test_add_func ("/initializer/normal", test_normal);
  g_test_add_func ("/initializer/trunc-normal", test_trunc_normal);
  g_test_add_func ("/initializer/uniform", test_uniform);
  g_test_add_func ("/initializer/uniform/wide", test_uniform_wide);
  g_test_add_func ("/initializer/depth-scaled-normal", test_depth_scaled_normal);
  g_test_add_func ("/initializer/seeds", test_seeds);
  g_test_add_func ("/initializer/in-place", test_in_place);
  g_test_add_func ("/param-init/map", test_param_init_map);
  g_test_add_func ("/param-init/text", test_param_init_text);
  g_test_add_func ("/param-init/errors", test_param_init_errors);
  g_test_add_func ("/initializer/not-utf8", test_not_utf8);
  g_test_add_func ("/param-init/copy-equal", test_param_init_copy_equal);

  return g_test_run ();
}
