/* hp-safetensors.h: loading and saving state dicts as safetensors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-state-dict.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

/**
 * HpSafetensorsDType:
 * @HP_SAFETENSORS_DTYPE_AS_IS: every tensor in its own dtype (`F32`,
 *   `F64` or `I64`)
 * @HP_SAFETENSORS_DTYPE_BF16: floating tensors as bfloat16 (`BF16`)
 * @HP_SAFETENSORS_DTYPE_F16: floating tensors as IEEE half precision
 *   (`F16`)
 * @HP_SAFETENSORS_DTYPE_F32: floating tensors as float32 (`F32`)
 * @HP_SAFETENSORS_DTYPE_F64: floating tensors as float64 (`F64`)
 *
 * The element type that [func@Hp.safetensors_save_with_dtype] writes
 * floating tensors in; integer tensors are always written as they are.
 * Narrower types are rounded as torch's `tensor.to(dtype)` rounds, see
 * [func@Hp.safetensors_save_with_dtype].
 *
 * Since: 1.0
 */
typedef enum
{
  HP_SAFETENSORS_DTYPE_AS_IS,
  HP_SAFETENSORS_DTYPE_BF16,
  HP_SAFETENSORS_DTYPE_F16,
  HP_SAFETENSORS_DTYPE_F32,
  HP_SAFETENSORS_DTYPE_F64,
} HpSafetensorsDType;

HP_AVAILABLE_IN_ALL
gboolean     hp_safetensors_dtype_from_string (const gchar         *name,
                                               HpSafetensorsDType  *dtype,
                                               GError             **error);

HP_AVAILABLE_IN_ALL
HpStateDict *hp_safetensors_load         (const gchar  *path,
                                          GError      **error);
HP_AVAILABLE_IN_ALL
gboolean     hp_safetensors_save         (HpStateDict  *state_dict,
                                          GHashTable   *metadata,
                                          const gchar  *path,
                                          GError      **error);
HP_AVAILABLE_IN_ALL
gboolean     hp_safetensors_save_sharded (HpStateDict  *state_dict,
                                          GHashTable   *metadata,
                                          const gchar  *directory,
                                          guint64       max_shard_bytes,
                                          GError      **error);
HP_AVAILABLE_IN_ALL
gboolean     hp_safetensors_save_with_dtype (HpStateDict         *state_dict,
                                             GHashTable          *metadata,
                                             const gchar         *path,
                                             HpSafetensorsDType   dtype,
                                             GError             **error);
HP_AVAILABLE_IN_ALL
gboolean     hp_safetensors_save_sharded_with_dtype (HpStateDict         *state_dict,
                                                     GHashTable          *metadata,
                                                     const gchar         *directory,
                                                     guint64              max_shard_bytes,
                                                     HpSafetensorsDType   dtype,
                                                     GError             **error);

G_END_DECLS
