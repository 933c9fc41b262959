/* hp-config-value.c: the values of config fields: numbers checked
 * against the field's range, their shortest text, conversions between
 * GValue types, and equality
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hp-config-list.h"
#include "hp-config-private.h"
#include "hp-config.h"
#include "hp-enum-private.h"
#include "hp-error.h"
#include "hp-initializer.h"
#include "hp-local-map-config.h"
#include "hp-named-placement.h"
#include "hp-param-init.h"
#include "hp-sharding-config.h"

/* The param spec that holds the range of @pspec */
static GParamSpec *
range_pspec (GParamSpec *pspec)
{
  GParamSpec *target = g_param_spec_get_redirect_target (pspec);

  return target != NULL ? target : pspec;
}

gint64
_hp_config_value_get_signed (const GValue *value)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value)))
    {
    case G_TYPE_INT:
      return g_value_get_int (value);
    case G_TYPE_LONG:
      return g_value_get_long (value);
    case G_TYPE_INT64:
      return g_value_get_int64 (value);
    default:
      g_return_val_if_reached (0);
    }
}

guint64
_hp_config_value_get_unsigned (const GValue *value)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value)))
    {
    case G_TYPE_UINT:
      return g_value_get_uint (value);
    case G_TYPE_ULONG:
      return g_value_get_ulong (value);
    case G_TYPE_UINT64:
      return g_value_get_uint64 (value);
    default:
      g_return_val_if_reached (0);
    }
}

static void
signed_range (GParamSpec *pspec,
              gint64     *min,
              gint64     *max)
{
  pspec = range_pspec (pspec);
  if (G_IS_PARAM_SPEC_INT (pspec))
    {
      *min = G_PARAM_SPEC_INT (pspec)->minimum;
      *max = G_PARAM_SPEC_INT (pspec)->maximum;
    }
  else if (G_IS_PARAM_SPEC_LONG (pspec))
    {
      *min = G_PARAM_SPEC_LONG (pspec)->minimum;
      *max = G_PARAM_SPEC_LONG (pspec)->maximum;
    }
  else
    {
      *min = G_PARAM_SPEC_INT64 (pspec)->minimum;
      *max = G_PARAM_SPEC_INT64 (pspec)->maximum;
    }
}

static void
unsigned_range (GParamSpec *pspec,
                guint64    *min,
                guint64    *max)
{
  pspec = range_pspec (pspec);
  if (G_IS_PARAM_SPEC_UINT (pspec))
    {
      *min = G_PARAM_SPEC_UINT (pspec)->minimum;
      *max = G_PARAM_SPEC_UINT (pspec)->maximum;
    }
  else if (G_IS_PARAM_SPEC_ULONG (pspec))
    {
      *min = G_PARAM_SPEC_ULONG (pspec)->minimum;
      *max = G_PARAM_SPEC_ULONG (pspec)->maximum;
    }
  else
    {
      *min = G_PARAM_SPEC_UINT64 (pspec)->minimum;
      *max = G_PARAM_SPEC_UINT64 (pspec)->maximum;
    }
}

static void
double_range (GParamSpec *pspec,
              gdouble    *min,
              gdouble    *max)
{
  pspec = range_pspec (pspec);
  if (G_IS_PARAM_SPEC_FLOAT (pspec))
    {
      *min = G_PARAM_SPEC_FLOAT (pspec)->minimum;
      *max = G_PARAM_SPEC_FLOAT (pspec)->maximum;
    }
  else
    {
      *min = G_PARAM_SPEC_DOUBLE (pspec)->minimum;
      *max = G_PARAM_SPEC_DOUBLE (pspec)->maximum;
    }
}

static void
value_set_signed (GValue *value,
                  gint64  number)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value)))
    {
    case G_TYPE_INT:
      g_value_set_int (value, (gint) number);
      break;
    case G_TYPE_LONG:
      g_value_set_long (value, (glong) number);
      break;
    default:
      g_value_set_int64 (value, number);
      break;
    }
}

static void
value_set_unsigned (GValue  *value,
                    guint64  number)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value)))
    {
    case G_TYPE_UINT:
      g_value_set_uint (value, (guint) number);
      break;
    case G_TYPE_ULONG:
      g_value_set_ulong (value, (gulong) number);
      break;
    default:
      g_value_set_uint64 (value, number);
      break;
    }
}

/* @number with @precision significant digits, written out in full rather
 * than with an exponent below 1e16, as Python's repr() does */
static void
format_with_precision (gchar   *buffer,
                       gint     precision,
                       gdouble  number)
{
  gchar format[8];
  const gchar *e;
  gint exponent;

  g_snprintf (format, sizeof format, "%%.%dg", precision);
  g_ascii_formatd (buffer, G_ASCII_DTOSTR_BUF_SIZE, format, number);
  e = strchr (buffer, 'e');
  if (e == NULL)
    return;
  exponent = atoi (e + 1);
  if (exponent >= precision && exponent < 16)
    {
      g_snprintf (format, sizeof format, "%%.%dg", exponent + 1);
      g_ascii_formatd (buffer, G_ASCII_DTOSTR_BUF_SIZE, format, number);
    }
}

/* Keeps a number a floating-point number for JSON readers (10 -> 10.0)
 * and for YAML 1.1 readers, whose floats have a point (1e-05 ->
 * 1.0e-05) */
static gchar *
finish_number (const gchar *buffer)
{
  const gchar *e = strchr (buffer, 'e');

  if (strchr (buffer, '.') != NULL)
    return g_strdup (buffer);
  if (e == NULL)
    return g_strconcat (buffer, ".0", NULL);
  return g_strdup_printf ("%.*s.0%s", (gint) (e - buffer), buffer, e);
}

gchar *
_hp_config_format_double (gdouble number)
{
  gchar buffer[G_ASCII_DTOSTR_BUF_SIZE];

  if (!isfinite (number))
    return g_strdup (isnan (number) ? "nan" : number > 0 ? "inf" : "-inf");

  for (gint precision = 1; precision <= 17; precision++)
    {
      gdouble back;

      format_with_precision (buffer, precision, number);
      back = g_ascii_strtod (buffer, NULL);
      if (memcmp (&back, &number, sizeof number) == 0)
        break;
    }
  return finish_number (buffer);
}

gchar *
_hp_config_format_float (gfloat number)
{
  gchar buffer[G_ASCII_DTOSTR_BUF_SIZE];

  if (!isfinite (number))
    return _hp_config_format_double (number);

  for (gint precision = 1; precision <= 9; precision++)
    {
      gfloat back;

      format_with_precision (buffer, precision, number);
      back = (gfloat) g_ascii_strtod (buffer, NULL);
      if (memcmp (&back, &number, sizeof number) == 0)
        break;
    }
  return finish_number (buffer);
}

gboolean
_hp_config_parse_non_finite (const gchar *text,
                             gdouble     *number)
{
  if (g_str_equal (text, "inf"))
    *number = INFINITY;
  else if (g_str_equal (text, "-inf"))
    *number = -INFINITY;
  else
    return FALSE;
  return TRUE;
}

void
_hp_config_set_range_error (GParamSpec   *pspec,
                            const gchar  *shown,
                            GError      **error)
{
  if (_hp_config_field_kind (pspec) == HP_CONFIG_FIELD_SIGNED)
    {
      gint64 min, max;

      signed_range (pspec, &min, &max);
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "value %s out of range [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                   shown, min, max);
    }
  else
    {
      guint64 min, max;

      unsigned_range (pspec, &min, &max);
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "value %s out of range [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "]",
                   shown, min, max);
    }
}

static gboolean
signed_in_range (GParamSpec  *pspec,
                 GValue      *value,
                 const gchar *shown,
                 gint64       number,
                 GError     **error)
{
  gint64 min, max;

  signed_range (pspec, &min, &max);
  if (number < min || number > max)
    {
      _hp_config_set_range_error (pspec, shown, error);
      return FALSE;
    }
  value_set_signed (value, number);
  return TRUE;
}

static gboolean
unsigned_in_range (GParamSpec  *pspec,
                   GValue      *value,
                   const gchar *shown,
                   guint64      number,
                   gboolean     negative,
                   GError     **error)
{
  guint64 min, max;

  unsigned_range (pspec, &min, &max);
  if (negative || number < min || number > max)
    {
      _hp_config_set_range_error (pspec, shown, error);
      return FALSE;
    }
  value_set_unsigned (value, number);
  return TRUE;
}

gboolean
_hp_config_value_set_double (GParamSpec  *pspec,
                             GValue      *value,
                             gdouble      number,
                             GError     **error)
{
  HpConfigFieldKind kind = _hp_config_field_kind (pspec);
  gdouble min, max;

  if (kind == HP_CONFIG_FIELD_SIGNED || kind == HP_CONFIG_FIELD_UNSIGNED)
    {
      g_autofree gchar *shown = _hp_config_format_double (number);

      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "expected an integer, got %s", shown);
      return FALSE;
    }
  g_return_val_if_fail (kind == HP_CONFIG_FIELD_FLOAT || kind == HP_CONFIG_FIELD_DOUBLE, FALSE);

  /* GObject takes NaN for out of range too */
  if (isnan (number))
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_CONFIG, "NaN is not allowed");
      return FALSE;
    }

  /* a float field compares the float the number rounds to: the
   * shortest text of FLT_MAX reads as a double above it */
  double_range (pspec, &min, &max);
  if (kind == HP_CONFIG_FIELD_FLOAT ? ((gfloat) number < min || (gfloat) number > max)
                                    : (number < min || number > max))
    {
      g_autofree gchar *shown = _hp_config_format_double (number);
      g_autofree gchar *shown_min = kind == HP_CONFIG_FIELD_FLOAT
        ? _hp_config_format_float ((gfloat) min) : _hp_config_format_double (min);
      g_autofree gchar *shown_max = kind == HP_CONFIG_FIELD_FLOAT
        ? _hp_config_format_float ((gfloat) max) : _hp_config_format_double (max);

      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "value %s out of range [%s, %s]", shown, shown_min, shown_max);
      return FALSE;
    }

  if (kind == HP_CONFIG_FIELD_FLOAT)
    g_value_set_float (value, (gfloat) number);
  else
    g_value_set_double (value, number);
  return TRUE;
}

/* An integer for a double field, which takes it only when the double
 * holds it exactly (@exact) */
static gboolean
set_integer_as_double (GParamSpec   *pspec,
                       GValue       *value,
                       const gchar  *shown,
                       gdouble       number,
                       gboolean      exact,
                       GError      **error)
{
  if (!exact)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "integer %s has no exact double value", shown);
      return FALSE;
    }
  return _hp_config_value_set_double (pspec, value, number, error);
}

gboolean
_hp_config_value_set_int64 (GParamSpec  *pspec,
                            GValue      *value,
                            gint64       number,
                            GError     **error)
{
  g_autofree gchar *shown = g_strdup_printf ("%" G_GINT64_FORMAT, number);

  switch (_hp_config_field_kind (pspec))
    {
    case HP_CONFIG_FIELD_SIGNED:
      return signed_in_range (pspec, value, shown, number, error);
    case HP_CONFIG_FIELD_UNSIGNED:
      return unsigned_in_range (pspec, value, shown, (guint64) number, number < 0, error);
    case HP_CONFIG_FIELD_FLOAT:
      return _hp_config_value_set_double (pspec, value, (gdouble) number, error);
    case HP_CONFIG_FIELD_DOUBLE:
      /* 2^63 does not fit an int64: the conversion back is only defined
       * below it */
      return set_integer_as_double (pspec, value, shown, (gdouble) number,
                                    (gdouble) number < 9223372036854775808.0 &&
                                    (gint64) (gdouble) number == number, error);
    default:
      g_return_val_if_reached (FALSE);
    }
}

gboolean
_hp_config_value_set_uint64 (GParamSpec  *pspec,
                             GValue      *value,
                             guint64      number,
                             GError     **error)
{
  g_autofree gchar *shown = g_strdup_printf ("%" G_GUINT64_FORMAT, number);

  switch (_hp_config_field_kind (pspec))
    {
    case HP_CONFIG_FIELD_SIGNED:
      if (number > G_MAXINT64)
        {
          _hp_config_set_range_error (pspec, shown, error);
          return FALSE;
        }
      return signed_in_range (pspec, value, shown, (gint64) number, error);
    case HP_CONFIG_FIELD_UNSIGNED:
      return unsigned_in_range (pspec, value, shown, number, FALSE, error);
    case HP_CONFIG_FIELD_FLOAT:
      return _hp_config_value_set_double (pspec, value, (gdouble) number, error);
    case HP_CONFIG_FIELD_DOUBLE:
      return set_integer_as_double (pspec, value, shown, (gdouble) number,
                                    (gdouble) number < 18446744073709551616.0 &&
                                    (guint64) (gdouble) number == number, error);
    default:
      g_return_val_if_reached (FALSE);
    }
}

gboolean
_hp_config_value_validate (GParamSpec    *pspec,
                           const GValue  *value,
                           GError       **error)
{
  g_auto(GValue) check = G_VALUE_INIT;

  g_value_init (&check, G_PARAM_SPEC_VALUE_TYPE (pspec));
  g_value_copy (value, &check);
  if (g_param_value_validate (pspec, &check))
    {
      g_autofree gchar *contents = g_strdup_value_contents (value);

      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "invalid value %s for a field of type %s",
                   contents, g_type_name (G_PARAM_SPEC_VALUE_TYPE (pspec)));
      return FALSE;
    }
  return TRUE;
}

gboolean
_hp_config_value_set_enum_nick (GParamSpec   *pspec,
                                const gchar  *text,
                                gboolean      names_too,
                                GValue       *value,
                                GError      **error)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (G_PARAM_SPEC_VALUE_TYPE (pspec));
  GEnumValue *member = g_enum_get_value_by_nick (klass, text);

  if (member == NULL && names_too)
    member = g_enum_get_value_by_name (klass, text);
  if (member == NULL)
    {
      g_autofree gchar *nicks = _hp_enum_list_nicks (G_PARAM_SPEC_VALUE_TYPE (pspec));

      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "expected one of {%s}, got '%s'", nicks, text);
      return FALSE;
    }
  g_value_set_enum (value, member->value);
  return TRUE;
}

gchar *
_hp_config_value_dup_enum_nick (const GValue *value)
{
  /* GObject keeps enum properties to the values of their type */
  g_autoptr(GEnumClass) klass = g_type_class_ref (G_VALUE_TYPE (value));

  return g_strdup (g_enum_get_value (klass, g_value_get_enum (value))->value_nick);
}

GStrv
_hp_config_value_dup_flag_nicks (const GValue *value)
{
  g_autoptr(GFlagsClass) klass = g_type_class_ref (G_VALUE_TYPE (value));
  g_autoptr(GStrvBuilder) nicks = g_strv_builder_new ();
  guint flags = g_value_get_flags (value);

  while (flags != 0)
    {
      GFlagsValue *flag = g_flags_get_first_value (klass, flags);

      if (flag == NULL || flag->value == 0)
        break;
      g_strv_builder_add (nicks, flag->value_nick);
      flags &= ~flag->value;
    }
  return g_strv_builder_end (nicks);
}

gboolean
_hp_config_flags_from_nick (GFlagsClass *klass,
                            const gchar *nick,
                            guint       *flags)
{
  GFlagsValue *flag = g_flags_get_value_by_nick (klass, nick);

  if (flag == NULL)
    return FALSE;
  *flags |= flag->value;
  return TRUE;
}

static gboolean
is_numeric_type (GType type)
{
  switch (G_TYPE_FUNDAMENTAL (type))
    {
    case G_TYPE_CHAR:
    case G_TYPE_UCHAR:
    case G_TYPE_INT:
    case G_TYPE_UINT:
    case G_TYPE_LONG:
    case G_TYPE_ULONG:
    case G_TYPE_INT64:
    case G_TYPE_UINT64:
    case G_TYPE_FLOAT:
    case G_TYPE_DOUBLE:
      return TRUE;
    default:
      return FALSE;
    }
}

static gboolean
is_numeric_kind (HpConfigFieldKind kind)
{
  return kind == HP_CONFIG_FIELD_SIGNED || kind == HP_CONFIG_FIELD_UNSIGNED ||
         kind == HP_CONFIG_FIELD_FLOAT || kind == HP_CONFIG_FIELD_DOUBLE;
}

gboolean
_hp_config_value_convert (GParamSpec    *pspec,
                          const GValue  *source,
                          GValue        *dest,
                          GError       **error)
{
  GType want = G_PARAM_SPEC_VALUE_TYPE (pspec);
  GType have = G_VALUE_TYPE (source);
  gboolean ok = TRUE;

  g_value_init (dest, want);

  if (is_numeric_type (have) && is_numeric_kind (_hp_config_field_kind (pspec)))
    {
      switch (G_TYPE_FUNDAMENTAL (have))
        {
        case G_TYPE_CHAR:
          ok = _hp_config_value_set_int64 (pspec, dest, g_value_get_schar (source), error);
          break;
        case G_TYPE_UCHAR:
          ok = _hp_config_value_set_int64 (pspec, dest, g_value_get_uchar (source), error);
          break;
        case G_TYPE_INT:
        case G_TYPE_LONG:
        case G_TYPE_INT64:
          ok = _hp_config_value_set_int64 (pspec, dest, _hp_config_value_get_signed (source), error);
          break;
        case G_TYPE_UINT:
        case G_TYPE_ULONG:
        case G_TYPE_UINT64:
          ok = _hp_config_value_set_uint64 (pspec, dest, _hp_config_value_get_unsigned (source), error);
          break;
        case G_TYPE_FLOAT:
          ok = _hp_config_value_set_double (pspec, dest, g_value_get_float (source), error);
          break;
        default:
          ok = _hp_config_value_set_double (pspec, dest, g_value_get_double (source), error);
          break;
        }
    }
  else if (g_value_type_compatible (have, want))
    g_value_copy (source, dest);
  else if (G_VALUE_HOLDS_OBJECT (source) && g_type_is_a (want, G_TYPE_OBJECT))
    {
      GObject *object = g_value_get_object (source);

      if (object != NULL && !G_TYPE_CHECK_INSTANCE_TYPE (object, want))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "expected a %s, got a %s",
                       g_type_name (want), G_OBJECT_TYPE_NAME (object));
          ok = FALSE;
        }
      else
        g_value_set_object (dest, object);
    }
  else
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "expected a value of type %s, got %s",
                   g_type_name (want), g_type_name (have));
      ok = FALSE;
    }

  if (ok)
    ok = _hp_config_value_validate (pspec, dest, error);
  if (!ok)
    g_value_unset (dest);
  return ok;
}

static gboolean
config_lists_equal (HpConfigList *a,
                    HpConfigList *b)
{
  guint n = hp_config_list_get_length (a);

  if (n != hp_config_list_get_length (b))
    return FALSE;
  for (guint i = 0; i < n; i++)
    if (!hp_config_equal (hp_config_list_peek (a, i), hp_config_list_peek (b, i)))
      return FALSE;
  return TRUE;
}

gboolean
_hp_config_values_equal (GParamSpec   *pspec,
                         const GValue *a,
                         const GValue *b)
{
  switch (_hp_config_field_kind (pspec))
    {
    case HP_CONFIG_FIELD_BOOLEAN:
      return g_value_get_boolean (a) == g_value_get_boolean (b);
    case HP_CONFIG_FIELD_SIGNED:
      return _hp_config_value_get_signed (a) == _hp_config_value_get_signed (b);
    case HP_CONFIG_FIELD_UNSIGNED:
      return _hp_config_value_get_unsigned (a) == _hp_config_value_get_unsigned (b);
    case HP_CONFIG_FIELD_FLOAT:
      return g_value_get_float (a) == g_value_get_float (b);
    case HP_CONFIG_FIELD_DOUBLE:
      return g_value_get_double (a) == g_value_get_double (b);
    case HP_CONFIG_FIELD_STRING:
      return g_strcmp0 (g_value_get_string (a), g_value_get_string (b)) == 0;
    case HP_CONFIG_FIELD_ENUM:
      return g_value_get_enum (a) == g_value_get_enum (b);
    case HP_CONFIG_FIELD_FLAGS:
      return g_value_get_flags (a) == g_value_get_flags (b);
    case HP_CONFIG_FIELD_STRV:
      {
        const gchar * const *sa = g_value_get_boxed (a);
        const gchar * const *sb = g_value_get_boxed (b);

        if (sa == NULL || sb == NULL)
          return sa == sb;
        return g_strv_equal (sa, sb);
      }
    default:
      break;
    }

  /* object fields: equal when both are NULL or both equal by value */
  {
    GObject *oa = g_value_get_object (a);
    GObject *ob = g_value_get_object (b);

    if (oa == NULL || ob == NULL)
      return oa == ob;

    switch (_hp_config_field_kind (pspec))
      {
      case HP_CONFIG_FIELD_CONFIG:
        return hp_config_equal (HP_CONFIG (oa), HP_CONFIG (ob));
      case HP_CONFIG_FIELD_CONFIG_LIST:
        return config_lists_equal (HP_CONFIG_LIST (oa), HP_CONFIG_LIST (ob));
      case HP_CONFIG_FIELD_NAMED_PLACEMENT:
        return hp_named_placement_equal (HP_NAMED_PLACEMENT (oa), HP_NAMED_PLACEMENT (ob));
      case HP_CONFIG_FIELD_SHARDING_CONFIG:
        return hp_sharding_config_equal (HP_SHARDING_CONFIG (oa), HP_SHARDING_CONFIG (ob));
      case HP_CONFIG_FIELD_LOCAL_MAP_CONFIG:
        return hp_local_map_config_equal (HP_LOCAL_MAP_CONFIG (oa), HP_LOCAL_MAP_CONFIG (ob));
      case HP_CONFIG_FIELD_PARAM_INIT:
        return hp_param_init_equal (HP_PARAM_INIT (oa), HP_PARAM_INIT (ob));
      case HP_CONFIG_FIELD_INITIALIZER:
        return hp_initializer_equal (HP_INITIALIZER (oa), HP_INITIALIZER (ob));
      default:
        g_return_val_if_reached (FALSE);
      }
  }
}
