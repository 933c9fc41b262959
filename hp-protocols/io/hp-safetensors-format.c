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

const gchar *
_hp_st_dtype_from_hp (HpDType dtype)
{
  switch (dtype)
    {
    case HP_DTYPE_FLOAT32:
      return "F32";
    case HP_DTYPE_FLOAT64:
      return "F64";
    case HP_DTYPE_INT64:
    default:
      return "I64";
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

static guint16
load_u16_le (const guint8 *p)
{
  return (guint16) (p[0] | (p[1] << 8));
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
