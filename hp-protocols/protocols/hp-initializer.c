/* hp-initializer.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hp-dtensor-private.h"
#include "hp-enum-private.h"
#include "hp-error-private.h"
#include "hp-error.h"
#include "hp-initializer.h"
#include "hp-protocols-enum-types.h"

/**
 * HpInitializer:
 *
 * How a parameter gets its first values: zeros, ones, a constant, or
 * samples of a normal, truncated normal or uniform distribution.
 *
 * An initialiser is an immutable value: make one with a constructor such
 * as [ctor@Hp.Initializer.new_normal] or parse its text form with
 * [ctor@Hp.Initializer.new_from_string], then fill tensors with
 * [method@Hp.Initializer.apply]. Since nothing changes after construction, one
 * initialiser can be shared by any number of [class@Hp.ParamInit] maps.
 *
 * The text form, written by [method@Hp.Initializer.to_string], is the kind
 * followed by its arguments as keywords:
 *
 * - `zeros`, `ones`
 * - `constant(value=0.5)`
 * - `normal(mean=0, std=0.02)`
 * - `trunc_normal(mean=0, std=0.02, a=-0.04, b=0.04)`: a and b are
 *   absolute bounds, as in `torch.nn.init.trunc_normal_`
 * - `uniform(a=-0.1, b=0.1)`
 * - `depth_scaled_normal(std=0.02, depth=3)`
 *
 * Numbers are written in the shortest form that reads back to the same
 * double, so the text round-trips exactly.
 *
 * `depth_scaled_normal (std, depth)` is the depth initialisation of
 * torchtitan's Llama: `trunc_normal (mean=0, std=std / sqrt (2 (depth + 1)),
 * a=-2, b=2)`, with torch's default absolute bounds -2 and 2 (which, for
 * the small standard deviations it is used with, hardly truncate at all).
 *
 * Random kinds are counter-based: the value of element i of a tensor
 * filled with seed s depends on i and s only. So a [class@Hp.DTensor] filled on
 * any number of ranks holds exactly the slice of the tensor one rank
 * fills with the same seed. `normal (mean=0, std=1)` gives the values of
 * [ctor@Hp.Tensor.new_randn] and `uniform (a, b)` those of
 * [ctor@Hp.Tensor.new_uniform] with the same seed. The truncated normal turns
 * the uniform stream into normal samples on [a, b] by the inverse of the
 * normal distribution function, so it needs no rejection and stays
 * slice-exact.
 *
 * Since: 1.0
 */

struct _HpInitializer
{
  GObject parent_instance;

  HpInitKind kind;
  gdouble value;
  gdouble mean;
  gdouble std;
  gdouble a;
  gdouble b;
  guint depth;
};

G_DEFINE_FINAL_TYPE (HpInitializer, hp_initializer, G_TYPE_OBJECT)

/* The bounds of depth_scaled_normal, torch's trunc_normal_ defaults */
#define DEPTH_SCALED_A (-2.0)
#define DEPTH_SCALED_B 2.0

/* The keyword arguments of each kind, in the order of the text form */
typedef struct
{
  const gchar *name;
  gboolean required;
  gboolean is_integer;
  gdouble fallback;
} ArgSpec;

typedef struct
{
  guint n_args;
  ArgSpec args[4];
} KindSpec;

static const KindSpec kind_specs[] = {
  [HP_INIT_KIND_ZEROS] = { 0, { { NULL } } },
  [HP_INIT_KIND_ONES] = { 0, { { NULL } } },
  [HP_INIT_KIND_CONSTANT] = { 1, { { "value", TRUE, FALSE, 0.0 } } },
  [HP_INIT_KIND_NORMAL] = { 2, { { "mean", FALSE, FALSE, 0.0 },
                                 { "std", FALSE, FALSE, 1.0 } } },
  [HP_INIT_KIND_TRUNC_NORMAL] = { 4, { { "mean", FALSE, FALSE, 0.0 },
                                       { "std", FALSE, FALSE, 1.0 },
                                       { "a", FALSE, FALSE, -2.0 },
                                       { "b", FALSE, FALSE, 2.0 } } },
  [HP_INIT_KIND_UNIFORM] = { 2, { { "a", FALSE, FALSE, 0.0 },
                                  { "b", FALSE, FALSE, 1.0 } } },
  [HP_INIT_KIND_DEPTH_SCALED_NORMAL] = { 2, { { "std", FALSE, FALSE, 0.02 },
                                              { "depth", FALSE, TRUE, 0.0 } } },
};

static void
hp_initializer_class_init (HpInitializerClass *klass)
{
}

static void
hp_initializer_init (HpInitializer *self)
{
  self->kind = HP_INIT_KIND_ZEROS;
}

static HpInitializer *
initializer_new (HpInitKind kind)
{
  HpInitializer *self = g_object_new (HP_TYPE_INITIALIZER, NULL);

  self->kind = kind;
  return self;
}

/**
 * hp_initializer_new_zeros:
 *
 * Creates the initialiser that sets every value to 0.
 *
 * Returns: (transfer full): a new [class@Hp.Initializer]
 *
 * Since: 1.0
 */
HpInitializer *
hp_initializer_new_zeros (void)
{
  return initializer_new (HP_INIT_KIND_ZEROS);
}

/**
 * hp_initializer_new_ones:
 *
 * Creates the initialiser that sets every value to 1.
 *
 * Returns: (transfer full): a new [class@Hp.Initializer]
 *
 * Since: 1.0
 */
HpInitializer *
hp_initializer_new_ones (void)
{
  HpInitializer *self = initializer_new (HP_INIT_KIND_ONES);

  self->value = 1.0;
  return self;
}

/**
 * hp_initializer_new_constant:
 * @value: the value, finite
 *
 * Creates the initialiser that sets every value to @value.
 *
 * Returns: (transfer full): a new [class@Hp.Initializer]
 *
 * Since: 1.0
 */
HpInitializer *
hp_initializer_new_constant (gdouble value)
{
  HpInitializer *self;

  g_return_val_if_fail (isfinite (value), NULL);

  self = initializer_new (HP_INIT_KIND_CONSTANT);
  self->value = value;
  return self;
}

/**
 * hp_initializer_new_normal:
 * @mean: the mean, finite
 * @std: the standard deviation, finite and not negative
 *
 * Creates the initialiser that draws samples of the normal distribution
 * with @mean and @std.
 *
 * Returns: (transfer full): a new [class@Hp.Initializer]
 *
 * Since: 1.0
 */
HpInitializer *
hp_initializer_new_normal (gdouble mean,
                           gdouble std)
{
  HpInitializer *self;

  g_return_val_if_fail (isfinite (mean), NULL);
  g_return_val_if_fail (isfinite (std) && std >= 0.0, NULL);

  self = initializer_new (HP_INIT_KIND_NORMAL);
  self->mean = mean;
  self->std = std;
  return self;
}

/**
 * hp_initializer_new_trunc_normal:
 * @mean: the mean of the normal distribution, finite
 * @std: its standard deviation, finite and not negative
 * @a: the lower bound, finite
 * @b: the upper bound, finite and greater than @a
 *
 * Creates the initialiser that draws samples of the normal distribution
 * with @mean and @std restricted to [@a, @b]. Like
 * `torch.nn.init.trunc_normal_`, @a and @b are absolute values, not
 * multiples of @std.
 *
 * Returns: (transfer full): a new [class@Hp.Initializer]
 *
 * Since: 1.0
 */
HpInitializer *
hp_initializer_new_trunc_normal (gdouble mean,
                                 gdouble std,
                                 gdouble a,
                                 gdouble b)
{
  HpInitializer *self;

  g_return_val_if_fail (isfinite (mean), NULL);
  g_return_val_if_fail (isfinite (std) && std >= 0.0, NULL);
  g_return_val_if_fail (isfinite (a) && isfinite (b) && a < b, NULL);

  self = initializer_new (HP_INIT_KIND_TRUNC_NORMAL);
  self->mean = mean;
  self->std = std;
  self->a = a;
  self->b = b;
  return self;
}

/**
 * hp_initializer_new_uniform:
 * @a: the lower bound (included), finite
 * @b: the upper bound (excluded), finite and greater than @a
 *
 * Creates the initialiser that draws samples uniform on [@a, @b).
 *
 * Returns: (transfer full): a new [class@Hp.Initializer]
 *
 * Since: 1.0
 */
HpInitializer *
hp_initializer_new_uniform (gdouble a,
                            gdouble b)
{
  HpInitializer *self;

  g_return_val_if_fail (isfinite (a) && isfinite (b) && a < b, NULL);

  self = initializer_new (HP_INIT_KIND_UNIFORM);
  self->a = a;
  self->b = b;
  return self;
}

/**
 * hp_initializer_new_depth_scaled_normal:
 * @std: the standard deviation before scaling, finite and not negative
 * @depth: the depth of the layer, 0 for the first
 *
 * Creates the initialiser of the output projections of deep
 * transformers (torchtitan's `depth_init`): a truncated normal with
 * mean 0, standard deviation `std / sqrt (2 (depth + 1))` and the
 * absolute bounds -2 and 2.
 *
 * Returns: (transfer full): a new [class@Hp.Initializer]
 *
 * Since: 1.0
 */
HpInitializer *
hp_initializer_new_depth_scaled_normal (gdouble std,
                                        guint   depth)
{
  HpInitializer *self;

  g_return_val_if_fail (isfinite (std) && std >= 0.0, NULL);

  self = initializer_new (HP_INIT_KIND_DEPTH_SCALED_NORMAL);
  self->std = std;
  self->depth = depth;
  self->a = DEPTH_SCALED_A;
  self->b = DEPTH_SCALED_B;
  return self;
}

/**
 * hp_initializer_get_kind:
 * @self: a [class@Hp.Initializer]
 *
 * Gets the kind of @self, which says which of the other getters carry
 * its arguments.
 *
 * Returns: the kind
 *
 * Since: 1.0
 */
HpInitKind
hp_initializer_get_kind (HpInitializer *self)
{
  g_return_val_if_fail (HP_IS_INITIALIZER (self), HP_INIT_KIND_ZEROS);

  return self->kind;
}

/**
 * hp_initializer_get_mean:
 * @self: a [class@Hp.Initializer]
 *
 * Gets the mean of a normal or truncated normal initialiser.
 *
 * Returns: the mean; 0 for the other kinds (depth_scaled_normal always
 *   has mean 0)
 *
 * Since: 1.0
 */
gdouble
hp_initializer_get_mean (HpInitializer *self)
{
  g_return_val_if_fail (HP_IS_INITIALIZER (self), 0.0);

  return self->mean;
}

/**
 * hp_initializer_get_std:
 * @self: a [class@Hp.Initializer]
 *
 * Gets the standard deviation of a normal, truncated normal or
 * depth-scaled normal initialiser. For depth_scaled_normal this is the
 * argument before the scaling by depth.
 *
 * Returns: the standard deviation; 0 for the other kinds
 *
 * Since: 1.0
 */
gdouble
hp_initializer_get_std (HpInitializer *self)
{
  g_return_val_if_fail (HP_IS_INITIALIZER (self), 0.0);

  return self->std;
}

/**
 * hp_initializer_get_a:
 * @self: a [class@Hp.Initializer]
 *
 * Gets the lower bound of a truncated normal or uniform initialiser.
 *
 * Returns: the lower bound; -2 for depth_scaled_normal, whose bounds
 *   are fixed; 0 for the other kinds
 *
 * Since: 1.0
 */
gdouble
hp_initializer_get_a (HpInitializer *self)
{
  g_return_val_if_fail (HP_IS_INITIALIZER (self), 0.0);

  return self->a;
}

/**
 * hp_initializer_get_b:
 * @self: a [class@Hp.Initializer]
 *
 * Gets the upper bound of a truncated normal or uniform initialiser.
 *
 * Returns: the upper bound; 2 for depth_scaled_normal, whose bounds are
 *   fixed; 0 for the other kinds
 *
 * Since: 1.0
 */
gdouble
hp_initializer_get_b (HpInitializer *self)
{
  g_return_val_if_fail (HP_IS_INITIALIZER (self), 0.0);

  return self->b;
}

/**
 * hp_initializer_get_value:
 * @self: a [class@Hp.Initializer]
 *
 * Gets the value a constant initialiser fills in.
 *
 * Returns: the value of a constant; 0 for zeros, 1 for ones; 0 for the
 *   random kinds
 *
 * Since: 1.0
 */
gdouble
hp_initializer_get_value (HpInitializer *self)
{
  g_return_val_if_fail (HP_IS_INITIALIZER (self), 0.0);

  return self->value;
}

/**
 * hp_initializer_get_depth:
 * @self: a [class@Hp.Initializer]
 *
 * Gets the layer depth of a depth-scaled normal initialiser.
 *
 * Returns: the depth; 0 for the other kinds
 *
 * Since: 1.0
 */
guint
hp_initializer_get_depth (HpInitializer *self)
{
  g_return_val_if_fail (HP_IS_INITIALIZER (self), 0);

  return self->depth;
}

static gdouble
get_arg (HpInitializer *self,
         const gchar   *name)
{
  if (g_str_equal (name, "value"))
    return self->value;
  if (g_str_equal (name, "mean"))
    return self->mean;
  if (g_str_equal (name, "std"))
    return self->std;
  if (g_str_equal (name, "a"))
    return self->a;
  if (g_str_equal (name, "b"))
    return self->b;
  return self->depth;
}

static void
format_with_precision (gchar   *buffer,
                       gint     precision,
                       gdouble  value)
{
  gchar format[8];

  g_snprintf (format, sizeof format, "%%.%dg", precision);
  g_ascii_formatd (buffer, G_ASCII_DTOSTR_BUF_SIZE, format, value);
}

/* The shortest decimal form of @value that reads back to the same
 * double, in @buffer of G_ASCII_DTOSTR_BUF_SIZE bytes: the fewest
 * significant digits that round-trip, written without an exponent when
 * the value is a whole number below 1e17 (`1000`, not `1e+03`) */
static const gchar *
format_double (gchar   *buffer,
               gdouble  value)
{
  const gchar *e;
  gint precision;

  precision = 1;
  format_with_precision (buffer, precision, value);
  while (precision < 17 && g_ascii_strtod (buffer, NULL) != value)
    format_with_precision (buffer, ++precision, value);

  e = strchr (buffer, 'e');
  if (e != NULL && e[1] == '+' && atoi (e + 2) < 17)
    format_with_precision (buffer, atoi (e + 2) + 1, value);
  return buffer;
}

static void
append_double (GString *out,
               gdouble  value)
{
  gchar buffer[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append (out, format_double (buffer, value));
}

/**
 * hp_initializer_to_string:
 * @self: a [class@Hp.Initializer]
 *
 * Formats @self in its canonical text form, such as `zeros` or
 * `normal(mean=0, std=0.02)`: the kind, then every argument of the kind
 * as `name=value` in a fixed order. Numbers are the shortest decimal
 * form that reads back to the same double, so
 * [ctor@Hp.Initializer.new_from_string] gives back an equal initialiser.
 *
 * Returns: (transfer full): the text
 *
 * Since: 1.0
 */
gchar *
hp_initializer_to_string (HpInitializer *self)
{
  const KindSpec *spec;
  GString *out;

  g_return_val_if_fail (HP_IS_INITIALIZER (self), NULL);

  spec = &kind_specs[self->kind];
  out = g_string_new (_hp_enum_to_nick (HP_TYPE_INIT_KIND, self->kind));
  if (spec->n_args == 0)
    return g_string_free (out, FALSE);

  g_string_append_c (out, '(');
  for (guint i = 0; i < spec->n_args; i++)
    {
      g_string_append_printf (out, "%s%s=", i > 0 ? ", " : "", spec->args[i].name);
      if (spec->args[i].is_integer)
        g_string_append_printf (out, "%u", self->depth);
      else
        append_double (out, get_arg (self, spec->args[i].name));
    }
  g_string_append_c (out, ')');
  return g_string_free (out, FALSE);
}

/**
 * hp_initializer_equal:
 * @self: a [class@Hp.Initializer]
 * @other: another [class@Hp.Initializer]
 *
 * Tells whether two initialisers have the same kind and the same
 * arguments, so that they fill tensors with the same values.
 *
 * Returns: %TRUE if @self and @other are equal
 *
 * Since: 1.0
 */
gboolean
hp_initializer_equal (HpInitializer *self,
                      HpInitializer *other)
{
  g_return_val_if_fail (HP_IS_INITIALIZER (self), FALSE);
  g_return_val_if_fail (HP_IS_INITIALIZER (other), FALSE);

  return self->kind == other->kind &&
         self->value == other->value &&
         self->mean == other->mean &&
         self->std == other->std &&
         self->a == other->a &&
         self->b == other->b &&
         self->depth == other->depth;
}

/* Parsing */

static gchar *
arg_names (const KindSpec *spec)
{
  GString *names = g_string_new (NULL);

  for (guint i = 0; i < spec->n_args; i++)
    g_string_append_printf (names, "%s%s", i > 0 ? ", " : "", spec->args[i].name);
  return g_string_free (names, FALSE);
}

static gboolean
parse_number (const gchar *text,
              const gchar *name,
              const gchar *number,
              gdouble     *value,
              GError     **error)
{
  gchar *end = NULL;

  *value = g_ascii_strtod (number, &end);
  if (*number == '\0' || end == NULL || *end != '\0' || !isfinite (*value))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "cannot parse initializer '%s': '%s' is not a finite number "
                   "(argument %s)", text, number, name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_depth (const gchar *text,
             const gchar *name,
             const gchar *number,
             gdouble     *value,
             GError     **error)
{
  guint64 depth;

  if (!g_ascii_string_to_unsigned (number, 10, 0, G_MAXUINT, &depth, NULL))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "cannot parse initializer '%s': '%s' is not a non-negative "
                   "integer (argument %s)", text, number, name);
      return FALSE;
    }
  *value = (gdouble) depth;
  return TRUE;
}

/* Reads the comma-separated keyword arguments in @inner into @values,
 * one per argument of @spec, with the defaults for those not given */
static gboolean
parse_args (const gchar    *text,
            const gchar    *kind_name,
            const KindSpec *spec,
            gchar          *inner,
            gdouble        *values,
            GError        **error)
{
  gboolean seen[G_N_ELEMENTS (spec->args)] = { FALSE };
  g_auto(GStrv) items = NULL;

  if (*g_strstrip (inner) != '\0')
    {
      if (spec->n_args == 0)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "cannot parse initializer '%s': %s takes no arguments",
                       text, kind_name);
          return FALSE;
        }
      items = g_strsplit (inner, ",", -1);
    }

  for (guint k = 0; items != NULL && items[k] != NULL; k++)
    {
      gchar *item = g_strstrip (items[k]);
      gchar *equals = strchr (item, '=');
      gchar *name, *number;
      gboolean ok;
      guint i;

      if (equals == NULL)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "cannot parse initializer '%s': argument '%s' is not name=value",
                       text, item);
          return FALSE;
        }
      *equals = '\0';
      name = g_strstrip (item);
      number = g_strstrip (equals + 1);

      for (i = 0; i < spec->n_args; i++)
        if (g_str_equal (spec->args[i].name, name))
          break;
      if (i == spec->n_args)
        {
          g_autofree gchar *expected = arg_names (spec);

          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "cannot parse initializer '%s': unknown argument '%s' for %s "
                       "(expected %s)", text, name, kind_name, expected);
          return FALSE;
        }
      if (seen[i])
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "cannot parse initializer '%s': argument '%s' is given twice",
                       text, name);
          return FALSE;
        }

      if (spec->args[i].is_integer)
        ok = parse_depth (text, name, number, &values[i], error);
      else
        ok = parse_number (text, name, number, &values[i], error);
      if (!ok)
        return FALSE;
      seen[i] = TRUE;
    }

  for (guint i = 0; i < spec->n_args; i++)
    {
      if (seen[i])
        continue;
      if (spec->args[i].required)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "cannot parse initializer '%s': %s needs the argument '%s'",
                       text, kind_name, spec->args[i].name);
          return FALSE;
        }
      values[i] = spec->args[i].fallback;
    }
  return TRUE;
}

static gboolean
check_std (const gchar  *text,
           gdouble       std,
           GError      **error)
{
  gchar buffer[G_ASCII_DTOSTR_BUF_SIZE];

  if (std >= 0.0)
    return TRUE;

  g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
               "cannot parse initializer '%s': std must not be negative (got %s)",
               text, format_double (buffer, std));
  return FALSE;
}

static gboolean
check_bounds (const gchar  *text,
              gdouble       a,
              gdouble       b,
              GError      **error)
{
  gchar a_text[G_ASCII_DTOSTR_BUF_SIZE];
  gchar b_text[G_ASCII_DTOSTR_BUF_SIZE];

  if (a < b)
    return TRUE;

  g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
               "cannot parse initializer '%s': a must be less than b (got a=%s, b=%s)",
               text, format_double (a_text, a), format_double (b_text, b));
  return FALSE;
}

/**
 * hp_initializer_new_from_string:
 * @text: an initialiser such as "normal(std=0.02)"
 * @error: return location for a [struct@GLib.Error]
 *
 * Parses an initialiser in the text form [method@Hp.Initializer.to_string]
 * writes: a kind name (`zeros`, `ones`, `constant`, `normal`,
 * `trunc_normal`, `uniform`, `depth_scaled_normal`), optionally followed
 * by keyword arguments in parentheses, in any order. Whitespace around
 * names, values and parentheses is allowed. Omitted arguments take their
 * defaults: normal `mean=0, std=1`; trunc_normal `mean=0, std=1, a=-2,
 * b=2`; uniform `a=0, b=1`; depth_scaled_normal `std=0.02, depth=0`.
 * constant needs its `value`.
 *
 * Returns: (transfer full): a new [class@Hp.Initializer], or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error], quoting @text, for an unknown kind,
 *   unbalanced parentheses, an unknown, repeated or missing argument, a
 *   value that is not a finite number (or, for depth, a non-negative
 *   integer), a negative std, or bounds with a not less than b
 *
 * Since: 1.0
 */
HpInitializer *
hp_initializer_new_from_string (const gchar  *text,
                                GError      **error)
{
  g_autofree gchar *copy = NULL;
  g_autofree gchar *kind_name = NULL;
  gdouble values[G_N_ELEMENTS (kind_specs[0].args)] = { 0.0 };
  const KindSpec *spec;
  gchar no_args[1] = "";
  gchar *inner = no_args;
  gchar *rest;
  gint kind;
  gsize name_length = 0;

  g_return_val_if_fail (text != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!_hp_error_check_utf8 (text, "cannot parse initializer", HP_ERROR_INVALID_ARGUMENT, error))
    return NULL;

  copy = g_strstrip (g_strdup (text));
  while (g_ascii_isalnum (copy[name_length]) || copy[name_length] == '_')
    name_length++;
  kind_name = g_strndup (copy, name_length);

  if (!_hp_enum_from_nick (HP_TYPE_INIT_KIND, kind_name, &kind))
    {
      g_autofree gchar *expected = _hp_enum_list_nicks (HP_TYPE_INIT_KIND);

      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "cannot parse initializer '%s': unknown kind '%s' (expected one of %s)",
                   text, kind_name, expected);
      return NULL;
    }
  spec = &kind_specs[kind];

  rest = g_strchug (copy + name_length);
  if (*rest != '\0')
    {
      gsize length = strlen (rest);

      if (*rest != '(')
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "cannot parse initializer '%s': expected '(' after '%s'",
                       text, kind_name);
          return NULL;
        }
      if (rest[length - 1] != ')' || strchr (rest + 1, '(') != NULL ||
          strchr (rest, ')') != rest + length - 1)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "cannot parse initializer '%s': the arguments of %s must be "
                       "one list in parentheses at the end", text, kind_name);
          return NULL;
        }
      rest[length - 1] = '\0';
      inner = rest + 1;
    }

  if (!parse_args (text, kind_name, spec, inner, values, error))
    return NULL;

  switch ((HpInitKind) kind)
    {
    case HP_INIT_KIND_ZEROS:
      return hp_initializer_new_zeros ();

    case HP_INIT_KIND_ONES:
      return hp_initializer_new_ones ();

    case HP_INIT_KIND_CONSTANT:
      return hp_initializer_new_constant (values[0]);

    case HP_INIT_KIND_NORMAL:
      if (!check_std (text, values[1], error))
        return NULL;
      return hp_initializer_new_normal (values[0], values[1]);

    case HP_INIT_KIND_TRUNC_NORMAL:
      if (!check_std (text, values[1], error) ||
          !check_bounds (text, values[2], values[3], error))
        return NULL;
      return hp_initializer_new_trunc_normal (values[0], values[1], values[2], values[3]);

    case HP_INIT_KIND_UNIFORM:
      if (!check_bounds (text, values[0], values[1], error))
        return NULL;
      return hp_initializer_new_uniform (values[0], values[1]);

    case HP_INIT_KIND_DEPTH_SCALED_NORMAL:
    default:
      if (!check_std (text, values[0], error))
        return NULL;
      return hp_initializer_new_depth_scaled_normal (values[0], (guint) values[1]);
    }
}

/* Sampling */

/* The standard normal distribution function, accurate in the lower tail */
static gdouble
normal_cdf (gdouble x)
{
  return 0.5 * erfc (-x * G_SQRT2 / 2.0);
}

/* Its inverse: a rational approximation in three regions (P. J. Acklam's
 * coefficients, relative error below 1.2e-9) polished by one Halley step
 * on the exact distribution function, which brings it to double
 * precision. */
static gdouble
normal_quantile (gdouble p)
{
  static const gdouble a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00 };
  static const gdouble b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01 };
  static const gdouble c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00, 2.938163982698783e+00 };
  static const gdouble d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00 };
  const gdouble split = 0.02425;
  gdouble x, q, r;

  if (p <= 0.0)
    return -INFINITY;
  if (p >= 1.0)
    return INFINITY;

  if (p < split || p > 1.0 - split)
    {
      /* tails, written for the lower one and mirrored for the upper */
      q = sqrt (-2.0 * log (p < split ? p : 1.0 - p));
      x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
          ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
      if (p > split)
        x = -x;
    }
  else
    {
      q = p - 0.5;
      r = q * q;
      x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
          (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
    }

  /* Halley's step; exp (x^2 / 2) overflows beyond |x| = 37.67, which
   * only p below 1e-308 (subnormal) reach */
  if (fabs (x) < 37.5)
    {
      gdouble e = normal_cdf (x) - p;
      gdouble u = e * sqrt (2.0 * G_PI) * exp (0.5 * x * x);

      x -= u / (1.0 + 0.5 * x * u);
    }
  return x;
}

/* A normal distribution restricted to [a, b], sampled from a uniform u */
typedef struct
{
  gdouble mean;
  gdouble std;
  gdouble a;
  gdouble b;
  /* the standardised interval, mirrored into the lower half where the
   * distribution function is accurate */
  gboolean mirrored;
  gdouble cdf_low;
  gdouble cdf_width;
} TruncNormal;

static void
trunc_normal_init (TruncNormal *t,
                   gdouble      mean,
                   gdouble      std,
                   gdouble      a,
                   gdouble      b)
{
  gdouble alpha, beta;

  t->mean = mean;
  t->std = std;
  t->a = a;
  t->b = b;
  t->mirrored = FALSE;
  t->cdf_low = 0.0;
  t->cdf_width = 0.0;
  if (std == 0.0)
    return;

  alpha = (a - mean) / std;
  beta = (b - mean) / std;
  if (alpha + beta > 0.0)
    {
      gdouble low = -beta;

      beta = -alpha;
      alpha = low;
      t->mirrored = TRUE;
    }
  t->cdf_low = normal_cdf (alpha);
  t->cdf_width = normal_cdf (beta) - t->cdf_low;
}

static gdouble
trunc_normal_sample (const TruncNormal *t,
                     gdouble            u)
{
  gdouble z, x;

  if (t->std == 0.0)
    return CLAMP (t->mean, t->a, t->b);

  z = normal_quantile (t->cdf_low + u * t->cdf_width);
  if (t->mirrored)
    z = -z;
  x = t->mean + t->std * z;
  /* rounding (and a degenerate interval far in a tail) may step out */
  return CLAMP (x, t->a, t->b);
}

static gchar *
describe (HpInitializer *self)
{
  g_autofree gchar *text = hp_initializer_to_string (self);

  return g_strdup_printf ("HpInitializer %s", text);
}

static gboolean
check_target (HpInitializer  *self,
              HpTensor       *tensor,
              GError        **error)
{
  HpDType dtype = hp_tensor_get_dtype (tensor);
  g_autofree gchar *what = NULL;

  if (!hp_tensor_is_leaf (tensor))
    {
      what = describe (self);
      g_set_error (error, HP_ERROR, HP_ERROR_STATE,
                   "%s: cannot initialise a tensor that has gradient history "
                   "(a non-leaf, the result of an op); initialise a leaf such as a parameter",
                   what);
      return FALSE;
    }

  if (HP_IS_DTENSOR (tensor) &&
      _hp_placements_have_partial (hp_dtensor_get_placements (HP_DTENSOR (tensor))))
    {
      g_autofree gchar *placements = hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (tensor)));

      what = describe (self);
      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "%s: cannot initialise a Partial DTensor (placements %s)",
                   what, placements);
      return FALSE;
    }

  if (hp_dtype_is_floating (dtype))
    return TRUE;

  switch (self->kind)
    {
    case HP_INIT_KIND_ZEROS:
    case HP_INIT_KIND_ONES:
      return TRUE;

    case HP_INIT_KIND_CONSTANT:
      {
        gchar buffer[G_ASCII_DTOSTR_BUF_SIZE];

        /* 2^63 is exact as a double; every integer below it in size fits */
        if (self->value == floor (self->value) && fabs (self->value) < 9223372036854775808.0)
          return TRUE;
        what = describe (self);
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "%s: cannot fill an %s tensor with %s, which is not an %s value",
                     what, hp_dtype_to_string (dtype), format_double (buffer, self->value),
                     hp_dtype_to_string (dtype));
        return FALSE;
      }

    case HP_INIT_KIND_NORMAL:
    case HP_INIT_KIND_TRUNC_NORMAL:
    case HP_INIT_KIND_UNIFORM:
    case HP_INIT_KIND_DEPTH_SCALED_NORMAL:
    default:
      what = describe (self);
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: cannot fill an %s tensor (random initialisers need float32 "
                   "or float64)", what, hp_dtype_to_string (dtype));
      return FALSE;
    }
}

/* Fills @local, the block [offsets, offsets + shape of @local) of a
 * tensor of shape @global, with that block of the values @self gives the
 * whole tensor */
static gboolean
fill_block (HpInitializer  *self,
            HpTensor       *local,
            const gint64   *global,
            guint           ndim,
            const gint64   *offsets,
            guint64         seed,
            GError        **error)
{
  HpDType dtype = hp_tensor_get_dtype (local);
  const gint64 *lengths = hp_tensor_get_shape (local, NULL);
  gint64 numel = hp_tensor_get_numel (local);
  gpointer data = _hp_tensor_data (local);
  g_autoptr(HpTensor) random = NULL;
  const gdouble *samples;
  TruncNormal trunc;

  switch (self->kind)
    {
    case HP_INIT_KIND_ZEROS:
    case HP_INIT_KIND_ONES:
    case HP_INIT_KIND_CONSTANT:
      for (gint64 i = 0; i < numel; i++)
        _hp_store_f64 (data, dtype, i, self->value);
      return TRUE;

    case HP_INIT_KIND_NORMAL:
      random = hp_tensor_new_randn_slice (HP_DTYPE_FLOAT64, global, ndim, offsets, ndim,
                                          lengths, ndim, seed, error);
      if (random == NULL)
        return FALSE;
      samples = _hp_tensor_data (random);
      for (gint64 i = 0; i < numel; i++)
        _hp_store_f64 (data, dtype, i, self->mean + self->std * samples[i]);
      return TRUE;

    case HP_INIT_KIND_UNIFORM:
      random = hp_tensor_new_uniform_slice (HP_DTYPE_FLOAT64, global, ndim, offsets, ndim,
                                            lengths, ndim, self->a, self->b, seed, error);
      if (random == NULL)
        return FALSE;
      samples = _hp_tensor_data (random);
      for (gint64 i = 0; i < numel; i++)
        _hp_store_f64 (data, dtype, i, samples[i]);
      return TRUE;

    case HP_INIT_KIND_TRUNC_NORMAL:
    case HP_INIT_KIND_DEPTH_SCALED_NORMAL:
    default:
      if (self->kind == HP_INIT_KIND_TRUNC_NORMAL)
        trunc_normal_init (&trunc, self->mean, self->std, self->a, self->b);
      else
        trunc_normal_init (&trunc, 0.0, self->std / sqrt (2.0 * (self->depth + 1.0)),
                           DEPTH_SCALED_A, DEPTH_SCALED_B);
      random = hp_tensor_new_uniform_slice (HP_DTYPE_FLOAT64, global, ndim, offsets, ndim,
                                            lengths, ndim, 0.0, 1.0, seed, error);
      if (random == NULL)
        return FALSE;
      samples = _hp_tensor_data (random);
      for (gint64 i = 0; i < numel; i++)
        _hp_store_f64 (data, dtype, i, trunc_normal_sample (&trunc, samples[i]));
      return TRUE;
    }
}

/**
 * hp_initializer_apply:
 * @self: a [class@Hp.Initializer]
 * @tensor: the tensor to fill: a leaf, such as a parameter
 * @seed: the seed of the random kinds
 * @error: return location for a [struct@GLib.Error]
 *
 * Fills @tensor in place with the values @self gives it. Random kinds
 * give element i (row-major index) a value that depends only on i and
 * @seed, so the same seed fills the same tensor the same way on every
 * machine.
 *
 * For a [class@Hp.DTensor], each rank fills its local tensor with exactly its
 * block of the values @self gives the global tensor: a sharded
 * parameter (`Shard` placements, uneven shards included) or a
 * replicated one ends up equal to the tensor filled on one rank with
 * the same seed. This needs no communication.
 *
 * Float32 tensors get the values computed in double precision and
 * rounded, so the bounds of trunc_normal hold for the rounded values
 * against the rounded bounds. Int64 tensors can take zeros, ones and
 * integral constants only.
 *
 * This is one of the few places where a tensor changes after it was
 * made: its buffer is overwritten. Tensors that share the buffer (made
 * by [method@Hp.Tensor.detach] or [method@Hp.Tensor.reshape] of @tensor, or the
 * [struct@GLib.Bytes] of [method@Hp.Tensor.get_bytes]) see the new values too, as views do
 * in PyTorch. The buffer must be writable: a tensor made by
 * [ctor@Hp.Tensor.new_from_bytes] shares the caller's memory, so do not fill
 * one made over read-only memory. The gradient and the requires-grad
 * flag of @tensor stay as they are.
 *
 * Returns: %TRUE on success; %FALSE with [HP_ERROR_STATE][error@Hp.Error] if @tensor was
 *   produced by a recorded op (it has gradient history),
 *   [HP_ERROR_PLACEMENT][error@Hp.Error] for a DTensor with a `Partial` placement, or
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for a random kind and an int64 tensor, or
 *   a constant that is not an integer and an int64 tensor; @tensor is
 *   unchanged then
 *
 * Since: 1.0
 */
gboolean
hp_initializer_apply (HpInitializer  *self,
                      HpTensor       *tensor,
                      guint64         seed,
                      GError        **error)
{
  gint64 offsets[HP_TENSOR_MAX_NDIM] = { 0 };
  gint64 lengths[HP_TENSOR_MAX_NDIM];
  const gint64 *global;
  HpTensor *local;
  guint ndim;

  g_return_val_if_fail (HP_IS_INITIALIZER (self), FALSE);
  g_return_val_if_fail (HP_IS_TENSOR (tensor), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_target (self, tensor, error))
    return FALSE;

  global = hp_tensor_get_shape (tensor, &ndim);
  if (HP_IS_DTENSOR (tensor))
    {
      HpDTensor *dtensor = HP_DTENSOR (tensor);
      HpDeviceMesh *mesh = hp_dtensor_get_mesh (dtensor);

      local = _hp_dtensor_peek_local (dtensor);
      _hp_layout_local_region (global, ndim, hp_dtensor_get_placements (dtensor), mesh,
                               hp_device_mesh_get_coordinate (mesh, NULL), offsets, lengths);
      g_return_val_if_fail (_hp_tensor_has_shape (local, lengths, ndim), FALSE);
    }
  else
    {
      local = tensor;
    }

  g_return_val_if_fail (_hp_tensor_has_storage (local), FALSE);

  return fill_block (self, local, global, ndim, offsets, seed, error);
}
