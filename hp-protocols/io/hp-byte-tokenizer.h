/* hp-byte-tokenizer.h: text as the bytes of its UTF-8, plus an
 * end-of-text id
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-version-macros.h"

G_BEGIN_DECLS

/**
 * HP_BYTE_TOKENIZER_EOT:
 *
 * The id of end-of-text in [class@Hp.ByteTokenizer], 256: the one id
 * after the 256 byte values.
 *
 * Since: 1.0
 */
#define HP_BYTE_TOKENIZER_EOT 256

/**
 * HP_BYTE_TOKENIZER_VOCAB_SIZE:
 *
 * The number of ids of [class@Hp.ByteTokenizer], 257: the bytes 0 to
 * 255 and [const@Hp.BYTE_TOKENIZER_EOT].
 *
 * Since: 1.0
 */
#define HP_BYTE_TOKENIZER_VOCAB_SIZE 257

#define HP_TYPE_BYTE_TOKENIZER (hp_byte_tokenizer_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpByteTokenizer, hp_byte_tokenizer, HP, BYTE_TOKENIZER, GObject)

HP_AVAILABLE_IN_ALL
HpByteTokenizer *hp_byte_tokenizer_new    (void);
HP_AVAILABLE_IN_ALL
gint64          *hp_byte_tokenizer_encode (HpByteTokenizer  *self,
                                           const gchar      *text,
                                           gssize            length,
                                           gsize            *n_ids);
HP_AVAILABLE_IN_ALL
gchar           *hp_byte_tokenizer_decode (HpByteTokenizer  *self,
                                           const gint64     *ids,
                                           gsize             n_ids,
                                           GError          **error);

G_END_DECLS
