/* hp-byte-tokenizer.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-byte-tokenizer.h"
#include "hp-error.h"

/**
 * HpByteTokenizer:
 *
 * The simplest tokenizer that takes any text: the ids of a text are the
 * bytes of its UTF-8, 0 to 255, and [const@Hp.BYTE_TOKENIZER_EOT] (256)
 * ends a document, so a model that reads them needs a vocabulary of
 * [const@Hp.BYTE_TOKENIZER_VOCAB_SIZE] (257) ids. It has no training
 * and no state, and every text round-trips.
 *
 * Decoding gives text even for ids a model made up: bytes that are not
 * UTF-8 become U+FFFD, and end-of-text gives no text.
 *
 * ```python
 * tokenizer = Hp.ByteTokenizer.new()
 * ids = tokenizer.encode("héllo", -1)   # [104, 195, 169, 108, 108, 111]
 * text = tokenizer.decode(ids + [Hp.BYTE_TOKENIZER_EOT])   # "héllo"
 * ```
 *
 * Since: 1.0
 */

struct _HpByteTokenizer
{
  GObject parent_instance;
};

G_DEFINE_FINAL_TYPE (HpByteTokenizer, hp_byte_tokenizer, G_TYPE_OBJECT)

static void
hp_byte_tokenizer_class_init (HpByteTokenizerClass *klass)
{
}

static void
hp_byte_tokenizer_init (HpByteTokenizer *self)
{
}

/**
 * hp_byte_tokenizer_new:
 *
 * Makes a byte tokenizer.
 *
 * Returns: (transfer full): a new [class@Hp.ByteTokenizer]
 *
 * Since: 1.0
 */
HpByteTokenizer *
hp_byte_tokenizer_new (void)
{
  return g_object_new (HP_TYPE_BYTE_TOKENIZER, NULL);
}

/**
 * hp_byte_tokenizer_encode:
 * @self: a [class@Hp.ByteTokenizer]
 * @text: UTF-8 text
 * @length: the bytes of @text, or -1 when it ends with a NUL
 * @n_ids: (out): where to store the number of ids, the bytes of @text
 *
 * Gives the ids of @text: one per byte, without an end-of-text, which
 * the caller adds where a document ends.
 *
 * Returns: (transfer full) (array length=n_ids): the ids, each in [0, 256)
 *
 * Since: 1.0
 */
gint64 *
hp_byte_tokenizer_encode (HpByteTokenizer *self,
                          const gchar     *text,
                          gssize           length,
                          gsize           *n_ids)
{
  gsize n;
  gint64 *ids;

  g_return_val_if_fail (HP_IS_BYTE_TOKENIZER (self), NULL);
  g_return_val_if_fail (text != NULL || length == 0, NULL);
  g_return_val_if_fail (n_ids != NULL, NULL);

  n = length < 0 ? strlen (text) : (gsize) length;
  /* one more than the ids, so that an empty text is an array, not NULL */
  ids = g_new (gint64, n + 1);
  for (gsize i = 0; i < n; i++)
    ids[i] = (guint8) text[i];
  *n_ids = n;
  return ids;
}

/**
 * hp_byte_tokenizer_decode:
 * @self: a [class@Hp.ByteTokenizer]
 * @ids: (array length=n_ids): ids, each in [0, 257)
 * @n_ids: the number of @ids
 * @error: return location for a [struct@GLib.Error]
 *
 * Gives the text of @ids: their bytes as UTF-8, in which a byte that
 * does not belong to a valid sequence becomes U+FFFD; an end-of-text id
 * gives no text.
 *
 * Returns: (transfer full): valid UTF-8 text, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an id outside [0, 257)
 *
 * Since: 1.0
 */
gchar *
hp_byte_tokenizer_decode (HpByteTokenizer  *self,
                          const gint64     *ids,
                          gsize             n_ids,
                          GError          **error)
{
  g_autofree gchar *bytes = NULL;
  gsize n_bytes = 0;

  g_return_val_if_fail (HP_IS_BYTE_TOKENIZER (self), NULL);
  g_return_val_if_fail (ids != NULL || n_ids == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  bytes = g_new (gchar, n_ids + 1);
  for (gsize i = 0; i < n_ids; i++)
    {
      if (ids[i] < 0 || ids[i] >= HP_BYTE_TOKENIZER_VOCAB_SIZE)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "id %" G_GINT64_FORMAT " at %" G_GSIZE_FORMAT " is not a byte (0 to 255) "
                       "or end-of-text (%d)", ids[i], i, HP_BYTE_TOKENIZER_EOT);
          return NULL;
        }
      if (ids[i] != HP_BYTE_TOKENIZER_EOT)
        bytes[n_bytes++] = (gchar) ids[i];
    }
  return g_utf8_make_valid (bytes, n_bytes);
}
