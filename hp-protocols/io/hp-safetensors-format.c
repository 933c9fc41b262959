/* hp-safetensors-format.c: dtypes and element conversions for the
 * safetensors reader and writer (strict JSON is in hp-json.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-error.h"
#include "hp-safetensors-private.h"

typedef struct
{
  const gchar *name;
  gsize size;
} StDTypeInfo;

/* In the order of HpStDType */
static const StDTypeInfo st_dtypes[] = {
  { "BOOL", 1 },
  { "U8", 1 },
  { "I8", 1 },
  { "F8_E5M2", 1 },
  { "F8_E4M3", 1 },
  { "I16", 2 },
  { "U16", 2 },
  { "F16", 2 },
  { "BF16", 2 },
  { "I32", 4 },
  { "U32", 4 },
  { "F32", 4 },
  { "F64", 8 },
  { "I64", 8 },
  { "U64", 8 },
};

gboolean
_hp_st_dtype_from_string (const gchar *name,
                          HpStDType   *dtype)
{
  for (guint i = 0; i < G_N_ELEMENTS (st_dtypes); i++)
    if (g_str_equal (st_dtypes[i].name, name))
      {
        *dtype = (HpStDType) i;
        return TRUE;
      }
  return FALSE;
}

const gchar *
_hp_st_dtype_to_string (HpStDType dtype)
{
  return st_dtypes[dtype].name;
}

gsize
_hp_st_dtype_get_size (HpStDType dtype)
{
  return st_dtypes[dtype].size;
}

gboolean
_hp_st_dtype_to_hp (HpStDType  dtype,
                    HpDType   *out)
{
  switch (dtype)
    {
    case HP_ST_DTYPE_F16:
    case HP_ST_DTYPE_BF16:
    case HP_ST_DTYPE_F32:
      *out = HP_DTYPE_FLOAT32;
      return TRUE;
    case HP_ST_DTYPE_F64:
      *out = HP_DTYPE_FLOAT64;
      return TRUE;
    case HP_ST_DTYPE_I64:
      *out = HP_DTYPE_INT64;
      return TRUE;
    case HP_ST_DTYPE_BOOL:
    case HP_ST_DTYPE_U8:
    case HP_ST_DTYPE_I8:
    case HP_ST_DTYPE_F8_E5M2:
    case HP_ST_DTYPE_F8_E4M3:
    case HP_ST_DTYPE_I16:
    case HP_ST_DTYPE_U16:
    case HP_ST_DTYPE_I32:
    case HP_ST_DTYPE_U32:
    case HP_ST_DTYPE_U64:
    default:
      return FALSE;
    }
}

HpStDType
_hp_st_dtype_for_save (HpSafetensorsDType save,
                       HpDType            have)
{
  if (have == HP_DTYPE_INT64)
    return HP_ST_DTYPE_I64;
  switch (save)
    {
    case HP_SAFETENSORS_DTYPE_BF16:
      return HP_ST_DTYPE_BF16;
    case HP_SAFETENSORS_DTYPE_F16:
      return HP_ST_DTYPE_F16;
    case HP_SAFETENSORS_DTYPE_F32:
      return HP_ST_DTYPE_F32;
    case HP_SAFETENSORS_DTYPE_F64:
      return HP_ST_DTYPE_F64;
    case HP_SAFETENSORS_DTYPE_AS_IS:
    default:
      return have == HP_DTYPE_FLOAT64 ? HP_ST_DTYPE_F64 : HP_ST_DTYPE_F32;
    }
}

static gfloat
float_from_bits (guint32 bits)
{
  gfloat value;

  memcpy (&value, &bits, sizeof value);
  return value;
}

/* bfloat16 is the upper half of a float32 */
gfloat
_hp_bfloat16_to_float (guint16 bits)
{
  return float_from_bits ((guint32) bits << 16);
}

/* IEEE binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa
 * bits. Every value is exactly representable as a float32. */
gfloat
_hp_float16_to_float (guint16 bits)
{
  guint32 sign = (guint32) (bits & 0x8000) << 16;
  guint32 exponent = (bits >> 10) & 0x1f;
  guint32 mantissa = bits & 0x3ff;
  gfloat subnormal;

  if (exponent == 0x1f)
    /* infinity, or NaN with its payload kept */
    return float_from_bits (sign | 0x7f800000 | (mantissa << 13));
  if (exponent != 0)
    /* rebias from 15 to 127 */
    return float_from_bits (sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));

  /* zero or subnormal: mantissa * 2^-24, exact in float32 */
  subnormal = (gfloat) mantissa * 5.9604644775390625e-08f;
  return sign != 0 ? -subnormal : subnormal;
}

static guint32
float_to_bits (gfloat value)
{
  guint32 bits;

  memcpy (&bits, &value, sizeof bits);
  return bits;
}

/* As c10's round_to_nearest_even(): adding 0x7fff, plus one when the
 * kept half is odd, carries into it exactly when the dropped half is
 * above one half, or one half and the kept half odd; the carry may go
 * on into the exponent (the next binade, or infinity past the largest
 * finite value). Every NaN becomes the quiet NaN 0x7fc0, as in torch. */
guint16
_hp_float_to_bfloat16 (gfloat value)
{
  guint32 bits = float_to_bits (value);

  if ((bits & 0x7fffffff) > 0x7f800000)
    return 0x7fc0;
  return (guint16) ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

/* Rounds to nearest, ties to even, the 13 (or, for a binary16
 * subnormal, more) low bits that binary16 drops. A NaN stays a NaN of
 * the same sign, quiet, with the top bits of its payload, as the F16C
 * and ARM conversions give (torch's CPU kernels use them). */
guint16
_hp_float_to_float16 (gfloat value)
{
  guint32 bits = float_to_bits (value);
  guint16 sign = (guint16) ((bits >> 16) & 0x8000);
  guint32 magnitude = bits & 0x7fffffff;
  guint32 significand, shift, kept, dropped, half;

  if (magnitude > 0x7f800000)
    return sign | 0x7e00 | (guint16) ((magnitude >> 13) & 0x3ff);
  /* 2^16 and more, infinity included, overflow */
  if (magnitude >= 0x47800000)
    return sign | 0x7c00;
  /* 2^-14 and more: normal in binary16; the exponent is rebiased from
   * 127 to 15 after rounding, whose carry can make the next binade, or
   * infinity from 65520 (65504 and half its ulp) up */
  if (magnitude >= 0x38800000)
    return sign | (guint16) ((magnitude + 0xfff + ((magnitude >> 13) & 1) - (112u << 23)) >> 13);
  /* 2^-25 and less round to zero (2^-25 itself is a tie, to even 0) */
  if (magnitude <= 0x33000000)
    return sign;
  /* a binary16 subnormal counts units of 2^-24: the significand, with
   * its implicit bit, shifted right by 14 to 24 bits and rounded; 0x400,
   * the smallest normal, comes out right when it rounds up */
  significand = (magnitude & 0x7fffff) | 0x800000;
  shift = 126 - (magnitude >> 23);
  kept = significand >> shift;
  dropped = significand & ((1u << shift) - 1);
  half = 1u << (shift - 1);
  if (dropped > half || (dropped == half && (kept & 1) != 0))
    kept++;
  return sign | (guint16) kept;
}

static guint16
load_u16_le (const guint8 *p)
{
  return (guint16) (p[0] | (p[1] << 8));
}

static void
store_u16_le (guint8  *p,
              guint16  value)
{
  p[0] = (guint8) (value & 0xff);
  p[1] = (guint8) (value >> 8);
}

void
_hp_st_load_elements (HpStDType     dtype,
                      gconstpointer src,
                      gpointer      dst,
                      gsize         n)
{
  const guint8 *in = src;

  switch (dtype)
    {
    case HP_ST_DTYPE_BF16:
      for (gsize i = 0; i < n; i++)
        ((gfloat *) dst)[i] = _hp_bfloat16_to_float (load_u16_le (in + 2 * i));
      break;
    case HP_ST_DTYPE_F16:
      for (gsize i = 0; i < n; i++)
        ((gfloat *) dst)[i] = _hp_float16_to_float (load_u16_le (in + 2 * i));
      break;
    default:
      _hp_st_copy_le (src, dst, n, _hp_st_dtype_get_size (dtype));
      break;
    }
}

/* Element @i of @src, of @from (float32 or float64), as a float32: a
 * float64 is rounded to float32 first, to nearest even, because torch's
 * Half and BFloat16 are made from a float only, so that a float64
 * tensor's .to(torch.bfloat16) rounds twice */
static gfloat
element_as_float (HpDType       from,
                  gconstpointer src,
                  gsize         i)
{
  return from == HP_DTYPE_FLOAT64 ? (gfloat) ((const gdouble *) src)[i]
                                  : ((const gfloat *) src)[i];
}

void
_hp_st_store_elements (HpDType       from,
                       HpStDType     to,
                       gconstpointer src,
                       gpointer      dst,
                       gsize         n)
{
  guint8 *out = dst;

  if (to == _hp_st_dtype_for_save (HP_SAFETENSORS_DTYPE_AS_IS, from))
    {
      _hp_st_copy_le (src, dst, n, _hp_st_dtype_get_size (to));
      return;
    }

  switch (to)
    {
    case HP_ST_DTYPE_BF16:
      for (gsize i = 0; i < n; i++)
        store_u16_le (out + 2 * i, _hp_float_to_bfloat16 (element_as_float (from, src, i)));
      break;
    case HP_ST_DTYPE_F16:
      for (gsize i = 0; i < n; i++)
        store_u16_le (out + 2 * i, _hp_float_to_float16 (element_as_float (from, src, i)));
      break;
    case HP_ST_DTYPE_F32:
      /* from float64: the C conversion rounds to nearest even */
      for (gsize i = 0; i < n; i++)
        {
          gfloat value = element_as_float (from, src, i);

          _hp_st_copy_le (&value, out + 4 * i, 1, 4);
        }
      break;
    case HP_ST_DTYPE_F64:
      /* from float32: exact */
      for (gsize i = 0; i < n; i++)
        {
          gdouble value = ((const gfloat *) src)[i];

          _hp_st_copy_le (&value, out + 8 * i, 1, 8);
        }
      break;
    default:
      g_return_if_reached ();
    }
}

void
_hp_st_copy_le (gconstpointer src,
                gpointer      dst,
                gsize         n,
                gsize         size)
{
  const guint8 *in = src;
  guint8 *out = dst;

  if (G_BYTE_ORDER == G_LITTLE_ENDIAN)
    {
      if (n > 0)
        memcpy (out, in, n * size);
      return;
    }

  for (gsize i = 0; i < n; i++)
    for (gsize b = 0; b < size; b++)
      out[i * size + b] = in[i * size + size - 1 - b];
}

static gint
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

gchar **
_hp_safetensors_sorted_keys (GHashTable *table,
                             gboolean    copy,
                             guint      *n_keys)
{
  guint n;
  gchar **keys = (gchar **) g_hash_table_get_keys_as_array (table, &n);

  qsort (keys, n, sizeof (gchar *), compare_names);
  for (guint i = 0; copy && i < n; i++)
    keys[i] = g_strdup (keys[i]);
  if (n_keys != NULL)
    *n_keys = n;
  return keys;
}
