/* hp-safetensors-private.h: what the safetensors reader, writer and
 * checkpoint share (hp-safetensors-format.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-dtype.h"
#include "hp-safetensors.h"
#include "hp-safetensors-file.h"
#include "hp-state-dict.h"

G_BEGIN_DECLS

/* The largest header the reader accepts, as the reference reader */
#define HP_SAFETENSORS_MAX_HEADER_SIZE ((guint64) 100000000)

#define HP_SAFETENSORS_INDEX_NAME "model.safetensors.index.json"
#define HP_SAFETENSORS_SINGLE_NAME "model.safetensors"

/* The element types of the safetensors format. Only F32, F64 and I64
 * load as they are, and BF16 and F16 load as F32; the others are known
 * so that their files validate, and fail to load. */
typedef enum
{
  HP_ST_DTYPE_BOOL,
  HP_ST_DTYPE_U8,
  HP_ST_DTYPE_I8,
  HP_ST_DTYPE_F8_E5M2,
  HP_ST_DTYPE_F8_E4M3,
  HP_ST_DTYPE_I16,
  HP_ST_DTYPE_U16,
  HP_ST_DTYPE_F16,
  HP_ST_DTYPE_BF16,
  HP_ST_DTYPE_I32,
  HP_ST_DTYPE_U32,
  HP_ST_DTYPE_F32,
  HP_ST_DTYPE_F64,
  HP_ST_DTYPE_I64,
  HP_ST_DTYPE_U64,
} HpStDType;

gboolean      _hp_st_dtype_from_string   (const gchar   *name,
                                          HpStDType     *dtype);
const gchar  *_hp_st_dtype_to_string     (HpStDType      dtype);
gsize         _hp_st_dtype_get_size      (HpStDType      dtype);
/* The HpDType a tensor of @dtype loads as; FALSE if it does not load */
gboolean      _hp_st_dtype_to_hp         (HpStDType      dtype,
                                          HpDType       *out);
/* The element type a tensor of @have is written as for @save (integer
 * tensors as they are) */
HpStDType     _hp_st_dtype_for_save      (HpSafetensorsDType save,
                                          HpDType        have);

/* Half-precision values (their bits) as floats, exactly */
gfloat        _hp_bfloat16_to_float      (guint16        bits);
gfloat        _hp_float16_to_float       (guint16        bits);
/* The bits of the half-precision value nearest to @value, ties to even,
 * as torch's .to(torch.bfloat16) and .to(torch.float16) give */
guint16       _hp_float_to_bfloat16      (gfloat         value);
guint16       _hp_float_to_float16       (gfloat         value);

/* Converts @n little-endian elements of @dtype at @src (any alignment)
 * into elements of the type it loads as at @dst (aligned). */
void          _hp_st_load_elements       (HpStDType      dtype,
                                          gconstpointer  src,
                                          gpointer       dst,
                                          gsize          n);
/* Converts @n elements of @from at @src (host order, aligned) into
 * little-endian elements of @to, a type that _hp_st_dtype_for_save()
 * gives for @from, at @dst (any alignment), rounding as the functions
 * above */
void          _hp_st_store_elements      (HpDType        from,
                                          HpStDType      to,
                                          gconstpointer  src,
                                          gpointer       dst,
                                          gsize          n);
/* Copies @n elements of @size bytes from host to little-endian order
 * (or back: the same swap) */
void          _hp_st_copy_le             (gconstpointer  src,
                                          gpointer       dst,
                                          gsize          n,
                                          gsize          size);

/* The keys of @table (strings) sorted by strcmp(): borrowed, in a
 * container to free with g_free(), or copied with @copy into a GStrv */
gchar  **_hp_safetensors_sorted_keys (GHashTable *table,
                                      gboolean    copy,
                                      guint      *n_keys);

/* Whether hp_safetensors_save() and hp_safetensors_save_sharded() can
 * write every tensor of @state_dict (none is a DTensor or named
 * `__metadata__`), with their errors naming @path; writes nothing */
gboolean _hp_safetensors_check_state_dict (HpStateDict  *state_dict,
                                           const gchar  *path,
                                           GError      **error);

G_END_DECLS
