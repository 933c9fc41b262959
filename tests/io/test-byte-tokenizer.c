/* test-byte-tokenizer.c: text to the bytes of its UTF-8 and back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include "hp-test-utils.h"

static void
test_round_trip (void)
{
  static const gchar *texts[] = { "", "hello", "héllo wörld — ✓ 𝄞", "a\nb\tc" };
  g_autoptr(HpByteTokenizer) tokenizer = hp_byte_tokenizer_new ();

  for (guint t = 0; t < G_N_ELEMENTS (texts); t++)
    {
      g_autoptr(GError) error = NULL;
      gsize n_ids = 99;
      g_autofree gint64 *ids = hp_byte_tokenizer_encode (tokenizer, texts[t], -1, &n_ids);
      g_autofree gchar *text = NULL;

      g_assert_cmpuint (n_ids, ==, strlen (texts[t]));
      for (gsize i = 0; i < n_ids; i++)
        g_assert_cmpint (ids[i], ==, (guint8) texts[t][i]);
      text = hp_byte_tokenizer_decode (tokenizer, ids, n_ids, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (text, ==, texts[t]);
    }
}

/* a NUL inside the text is a byte like the others when the length is given */
static void
test_length (void)
{
  g_autoptr(HpByteTokenizer) tokenizer = hp_byte_tokenizer_new ();
  gsize n_ids;
  g_autofree gint64 *ids = hp_byte_tokenizer_encode (tokenizer, "a\0b", 3, &n_ids);

  g_assert_cmpuint (n_ids, ==, 3);
  g_assert_cmpint (ids[0], ==, 'a');
  g_assert_cmpint (ids[1], ==, 0);
  g_assert_cmpint (ids[2], ==, 'b');
}

static void
test_decode (void)
{
  g_autoptr(HpByteTokenizer) tokenizer = hp_byte_tokenizer_new ();
  g_autoptr(GError) error = NULL;
  /* "a", end-of-text, a lone continuation byte, "é" cut after its first
   * byte, then "b" */
  const gint64 ids[] = { 'a', HP_BYTE_TOKENIZER_EOT, 0x80, 0xc3, 'b', HP_BYTE_TOKENIZER_EOT };
  g_autofree gchar *text = hp_byte_tokenizer_decode (tokenizer, ids, G_N_ELEMENTS (ids), &error);

  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "a\xef\xbf\xbd\xef\xbf\xbd" "b");
  g_assert_true (g_utf8_validate (text, -1, NULL));
  g_assert_cmpint (HP_BYTE_TOKENIZER_VOCAB_SIZE, ==, HP_BYTE_TOKENIZER_EOT + 1);
}

static void
test_decode_errors (void)
{
  g_autoptr(HpByteTokenizer) tokenizer = hp_byte_tokenizer_new ();
  const gint64 bad[][2] = { { 'a', HP_BYTE_TOKENIZER_VOCAB_SIZE }, { 'a', -1 } };
  const gchar *messages[] = {
    "id 257 at 1 is not a byte (0 to 255) or end-of-text (256)",
    "id -1 at 1 is not a byte (0 to 255) or end-of-text (256)",
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree gchar *text = hp_byte_tokenizer_decode (tokenizer, bad[i], 2, &error);

      g_assert_null (text);
      g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
      g_assert_cmpstr (error->message, ==, messages[i]);
    }
}

int
main (int    argc,
      char **argv)
{
  hp_test_init (&argc, &argv);
  g_test_add_func ("/byte-tokenizer/round-trip", test_round_trip);
  g_test_add_func ("/byte-tokenizer/length", test_length);
  g_test_add_func ("/byte-tokenizer/decode", test_decode);
  g_test_add_func ("/byte-tokenizer/decode-errors", test_decode_errors);
  return g_test_run ();
}
