/* test-token-dataset.c: token datasets of text and of llm.c shards,
 * their splits, and the batches of a token loader
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "hp-test-utils.h"

/* Writes a shard as llm.c lays it out: 256 little-endian int32 (magic,
 * version, count), then @n tokens of @width bytes; @cut bytes fewer */
static gchar *
write_shard (const gchar  *dir,
             const gchar  *name,
             gint32        magic,
             gint32        version,
             guint         width,
             const guint32 *tokens,
             gsize         n,
             gsize         cut)
{
  g_autoptr(GByteArray) data = g_byte_array_new ();
  gint32 header[256] = { 0 };
  gchar *path = g_build_filename (dir, name, NULL);
  g_autoptr(GError) error = NULL;

  header[0] = GINT32_TO_LE (magic);
  header[1] = GINT32_TO_LE (version);
  header[2] = GINT32_TO_LE ((gint32) n);
  g_byte_array_append (data, (const guint8 *) header, sizeof header);
  for (gsize i = 0; i < n; i++)
    {
      guint16 u16 = GUINT16_TO_LE ((guint16) tokens[i]);
      guint32 u32 = GUINT32_TO_LE (tokens[i]);

      g_byte_array_append (data, width == 2 ? (const guint8 *) &u16 : (const guint8 *) &u32, width);
    }
  g_file_set_contents (path, (const gchar *) data->data, data->len - cut, &error);
  g_assert_no_error (error);
  return path;
}

static void
assert_tokens (HpTensor     *tensor,
               const gint64 *expected,
               gsize         n)
{
  g_autoptr(GBytes) bytes = hp_tensor_get_bytes (tensor);
  gsize size;
  const gint64 *values = g_bytes_get_data (bytes, &size);

  g_assert_cmpint (hp_tensor_get_dtype (tensor), ==, HP_DTYPE_INT64);
  g_assert_cmpmem (values, size, expected, n * sizeof (gint64));
}

static void
assert_read (HpTokenDataset *dataset,
             gint64          offset,
             const gint64   *expected,
             gsize           n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) tokens = hp_token_dataset_read (dataset, offset, (gint64) n, &error);

  g_assert_no_error (error);
  assert_tokens (tokens, expected, n);
}

/* A temporary directory, removed with its files */
typedef gchar TmpDir;

static void
remove_dir (TmpDir *dir)
{
  hp_test_remove_tree (dir);
  g_free (dir);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TmpDir, remove_dir)

static void
test_text (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTokenDataset) dataset = hp_token_dataset_new_from_text ("hé", -1, &error);
  const gint64 ids[] = { 'h', 0xc3, 0xa9, HP_BYTE_TOKENIZER_EOT };

  g_assert_no_error (error);
  g_assert_cmpint (hp_token_dataset_get_n_tokens (dataset), ==, 4);
  g_assert_cmpint (hp_token_dataset_get_max_token (dataset), ==, HP_BYTE_TOKENIZER_EOT);
  assert_read (dataset, 0, ids, 4);
  assert_read (dataset, 2, ids + 2, 2);

  hp_test_assert_error (hp_token_dataset_new_from_text ("ab\xff", -1, &error), &error,
                        HP_ERROR_FORMAT, "not UTF-8 text: the byte at 2 is not valid");
}

static void
test_shards (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TmpDir) dir = g_dir_make_tmp ("hp-tokens-XXXXXX", NULL);
  const guint32 small[] = { 1, 2, 65535 };
  const guint32 large[] = { 70000, 4 };
  g_autofree gchar *a = write_shard (dir, "a.bin", 20240520, 1, 2, small, 3, 0);
  g_autofree gchar *b = write_shard (dir, "b.bin", 20240801, 7, 4, large, 2, 0);
  g_autofree gchar *text = g_build_filename (dir, "c.txt", NULL);
  const gchar *files[] = { a, b, text, NULL };
  const gint64 all[] = { 1, 2, 65535, 70000, 4, 'x', HP_BYTE_TOKENIZER_EOT };
  g_autoptr(HpTokenDataset) dataset = NULL;
  g_autoptr(HpTokenDataset) slice = NULL;
  g_autoptr(HpTokenDataset) single = NULL;

  g_file_set_contents (text, "x", -1, &error);
  g_assert_no_error (error);
  dataset = hp_token_dataset_new_from_files (files, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hp_token_dataset_get_n_tokens (dataset), ==, 7);
  g_assert_cmpint (hp_token_dataset_get_max_token (dataset), ==, 70000);
  assert_read (dataset, 0, all, 7);
  /* across the end of one file */
  assert_read (dataset, 2, all + 2, 3);

  slice = hp_token_dataset_slice (dataset, 2, 6, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hp_token_dataset_get_n_tokens (slice), ==, 4);
  g_assert_cmpint (hp_token_dataset_get_max_token (slice), ==, 70000);
  assert_read (slice, 0, all + 2, 4);
  g_clear_object (&slice);
  slice = hp_token_dataset_slice (dataset, 3, 3, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hp_token_dataset_get_n_tokens (slice), ==, 0);
  g_assert_cmpint (hp_token_dataset_get_max_token (slice), ==, -1);

  single = hp_token_dataset_new_from_file (a, &error);
  g_assert_no_error (error);
  assert_read (single, 0, all, 3);
}

static void
test_shard_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TmpDir) dir = g_dir_make_tmp ("hp-tokens-XXXXXX", NULL);
  const guint32 tokens[] = { 1, 2, 3 };
  g_autofree gchar *magic = write_shard (dir, "magic.bin", 20240521, 1, 2, tokens, 3, 0);
  g_autofree gchar *version = write_shard (dir, "version.bin", 20240801, 1, 4, tokens, 3, 0);
  g_autofree gchar *cut = write_shard (dir, "cut.bin", 20240520, 1, 2, tokens, 3, 1);
  g_autofree gchar *header = write_shard (dir, "header.bin", 20240520, 1, 2, tokens, 3, 1000);
  g_autofree gchar *missing = g_build_filename (dir, "missing.txt", NULL);
  g_autofree gchar *latin1 = g_build_filename (dir, "latin1.txt", NULL);
  const gchar *both[] = { magic, cut, NULL };
  const gchar *none[] = { NULL };

  hp_test_assert_error (hp_token_dataset_new_from_file (magic, &error), &error, HP_ERROR_FORMAT,
                        "magic.bin: magic number 20240521 is not that of a token shard "
                        "(20240520 for uint16 ids, 20240801 for uint32)");
  hp_test_assert_error (hp_token_dataset_new_from_file (version, &error), &error, HP_ERROR_FORMAT,
                        "version.bin: version 1 of a token shard with magic 20240801, which has "
                        "version 7 only");
  hp_test_assert_error (hp_token_dataset_new_from_file (cut, &error), &error, HP_ERROR_FORMAT,
                        "cut.bin: the header counts 3 tokens of 2 bytes, but 5 bytes follow it");
  hp_test_assert_error (hp_token_dataset_new_from_file (header, &error), &error, HP_ERROR_FORMAT,
                        "header.bin: 30 bytes, shorter than the 1024-byte header of a token shard");
  hp_test_assert_error (hp_token_dataset_new_from_file (missing, &error), &error, HP_ERROR_IO,
                        "missing.txt");
  g_file_set_contents (latin1, "caf\xe9", -1, &error);
  g_assert_no_error (error);
  hp_test_assert_error (hp_token_dataset_new_from_file (latin1, &error), &error, HP_ERROR_FORMAT,
                        "latin1.txt: not UTF-8 text: the byte at 3 is not valid "
                        "(token shards end in .bin)");
  /* the first file that does not read */
  hp_test_assert_error (hp_token_dataset_new_from_files (both, &error), &error, HP_ERROR_FORMAT,
                        "magic.bin: magic number");
  hp_test_assert_error (hp_token_dataset_new_from_files (none, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "no files to read");
}

static void
test_expand (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TmpDir) dir = g_dir_make_tmp ("hp-tokens-XXXXXX", NULL);
  const guint32 tokens[] = { 1 };
  g_autofree gchar *b = write_shard (dir, "s_train_000001.bin", 20240520, 1, 2, tokens, 1, 0);
  g_autofree gchar *a = write_shard (dir, "s_train_000000.bin", 20240520, 1, 2, tokens, 1, 0);
  g_autofree gchar *v = write_shard (dir, "s_val_000000.bin", 20240520, 1, 2, tokens, 1, 0);
  g_autofree gchar *text = g_build_filename (dir, "notes.txt", NULL);
  g_autofree gchar *pattern = g_build_filename (dir, "s_train_*", NULL);
  g_autofree gchar *nothing = g_build_filename (dir, "*.none", NULL);
  g_autofree gchar *in_dir = g_build_filename (dir, "*", "x.bin", NULL);
  g_auto(GStrv) all = NULL;
  g_auto(GStrv) matched = NULL;
  g_auto(GStrv) one = NULL;

  g_file_set_contents (text, "notes", -1, &error);
  g_assert_no_error (error);
  /* a directory: its shards, not its other files, in name order */
  all = hp_token_dataset_expand_path (dir, &error);
  g_assert_no_error (error);
  g_assert_cmpstrv (all, ((const gchar *[]) { a, b, v, NULL }));
  matched = hp_token_dataset_expand_path (pattern, &error);
  g_assert_no_error (error);
  g_assert_cmpstrv (matched, ((const gchar *[]) { a, b, NULL }));
  one = hp_token_dataset_expand_path (text, &error);
  g_assert_no_error (error);
  g_assert_cmpstrv (one, ((const gchar *[]) { text, NULL }));

  hp_test_assert_error (hp_token_dataset_expand_path (nothing, &error), &error, HP_ERROR_IO,
                        "no file matches *.none");
  hp_test_assert_error (hp_token_dataset_expand_path (in_dir, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "a pattern matches file names in one directory, not directories");
}

static void
test_splits (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TmpDir) dir = g_dir_make_tmp ("hp-tokens-XXXXXX", NULL);
  const guint32 tokens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
  g_autofree gchar *train_file = write_shard (dir, "d_train_0.bin", 20240520, 1, 2, tokens, 8, 0);
  g_autofree gchar *val_file = write_shard (dir, "d_val_0.bin", 20240520, 1, 2, tokens + 8, 2, 0);
  g_autofree gchar *val_only = g_build_filename (dir, "*val*", NULL);
  const gint64 ids[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
  HpTokenDataset *train = NULL;
  HpTokenDataset *val = NULL;

  /* the shard named val validates, whatever the fraction */
  g_assert_true (hp_token_dataset_open_splits (dir, 0.5, &train, &val, &error));
  g_assert_no_error (error);
  g_assert_cmpint (hp_token_dataset_get_n_tokens (train), ==, 8);
  g_assert_cmpint (hp_token_dataset_get_n_tokens (val), ==, 2);
  assert_read (val, 0, ids + 8, 2);
  g_clear_object (&train);
  g_clear_object (&val);

  /* one file: the last fraction, rounded down */
  g_assert_true (hp_token_dataset_open_splits (train_file, 0.3, &train, &val, &error));
  g_assert_no_error (error);
  g_assert_cmpint (hp_token_dataset_get_n_tokens (train), ==, 6);
  assert_read (train, 0, ids, 6);
  assert_read (val, 0, ids + 6, 2);
  g_clear_object (&train);
  g_clear_object (&val);

  g_assert_true (hp_token_dataset_open_splits (val_file, 0, &train, &val, &error));
  g_assert_no_error (error);
  g_assert_cmpint (hp_token_dataset_get_n_tokens (train), ==, 2);
  g_assert_null (val);
  g_clear_object (&train);

  for (guint i = 0; i < 3; i++)
    {
      const gdouble bad[] = { -0.1, 1, NAN };

      g_assert_false (hp_token_dataset_open_splits (dir, bad[i], &train, &val, &error));
      g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, ": expected at least 0 and less than 1"));
      g_clear_error (&error);
    }
  g_assert_false (hp_token_dataset_open_splits (val_only, 0, &train, &val, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "every file has 'val' in its name"));
  g_clear_error (&error);
  g_assert_null (train);
  g_assert_null (val);
}

static void
test_range_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTokenDataset) dataset = hp_token_dataset_new_from_text ("abc", -1, &error);

  g_assert_no_error (error);
  hp_test_assert_error (hp_token_dataset_slice (dataset, 2, 5, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "tokens [2, 5) are not within the 4 of the dataset");
  hp_test_assert_error (hp_token_dataset_slice (dataset, 3, 2, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "tokens [3, 2)");
  hp_test_assert_error (hp_token_dataset_read (dataset, 2, 3, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "3 tokens at 2: expected at least 1, within the 4 of the dataset");
  hp_test_assert_error (hp_token_dataset_read (dataset, 0, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "0 tokens at 0");
  hp_test_assert_error (hp_token_dataset_read (dataset, -1, 1, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "1 tokens at -1");
}

static void
next_ok (HpTokenLoader  *loader,
         guint           first_row,
         guint           n_rows,
         HpTensor      **inputs,
         HpTensor      **targets)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (hp_token_loader_next (loader, first_row, n_rows, inputs, targets, &error));
  g_assert_no_error (error);
}

static void
test_loader (void)
{
  g_autoptr(GError) error = NULL;
  /* 10 tokens: "abcdefghi" and end-of-text */
  g_autoptr(HpTokenDataset) dataset = hp_token_dataset_new_from_text ("abcdefghi", -1, &error);
  g_autoptr(HpTokenLoader) loader = hp_token_loader_new (dataset, 2, 3, &error);
  g_autoptr(HpTensor) inputs = NULL;
  g_autoptr(HpTensor) targets = NULL;
  g_autoptr(HpTensor) half_inputs = NULL;
  g_autoptr(HpTensor) half_targets = NULL;
  const gint64 eot = HP_BYTE_TOKENIZER_EOT;

  g_assert_no_error (error);
  g_assert_true (hp_token_loader_get_dataset (loader) == dataset);
  g_assert_cmpuint (hp_token_loader_get_batch_size (loader), ==, 2);
  g_assert_cmpuint (hp_token_loader_get_seq_len (loader), ==, 3);
  g_assert_cmpint (hp_token_loader_get_position (loader), ==, 0);

  /* rows at 0 and 3; the targets one token on */
  next_ok (loader, 0, 2, &inputs, &targets);
  hp_test_assert_shape (inputs, HP_TEST_SHAPE (2, 3));
  assert_tokens (inputs, (const gint64[]) { 'a', 'b', 'c', 'd', 'e', 'f' }, 6);
  assert_tokens (targets, (const gint64[]) { 'b', 'c', 'd', 'e', 'f', 'g' }, 6);
  g_assert_cmpint (hp_token_loader_get_position (loader), ==, 6);
  g_clear_object (&inputs);
  g_clear_object (&targets);

  /* rows at 6 and 9: the second goes on at the start */
  next_ok (loader, 0, 2, &inputs, &targets);
  assert_tokens (inputs, (const gint64[]) { 'g', 'h', 'i', eot, 'a', 'b' }, 6);
  assert_tokens (targets, (const gint64[]) { 'h', 'i', eot, 'a', 'b', 'c' }, 6);
  g_assert_cmpint (hp_token_loader_get_position (loader), ==, 2);

  /* a rank's rows are those rows of the whole batch */
  g_assert_true (hp_token_loader_set_position (loader, 6, &error));
  g_assert_no_error (error);
  next_ok (loader, 1, 1, &half_inputs, &half_targets);
  assert_tokens (half_inputs, (const gint64[]) { eot, 'a', 'b' }, 3);
  assert_tokens (half_targets, (const gint64[]) { 'a', 'b', 'c' }, 3);
  g_assert_cmpint (hp_token_loader_get_position (loader), ==, 2);
}

static void
test_loader_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTokenDataset) dataset = hp_token_dataset_new_from_text ("abc", -1, &error);
  g_autoptr(HpTokenLoader) loader = NULL;
  HpTensor *inputs = NULL;
  HpTensor *targets = NULL;

  g_assert_no_error (error);
  hp_test_assert_error (hp_token_loader_new (dataset, 1, 4, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "4 tokens, fewer than one sequence of 4 + 1");
  hp_test_assert_error (hp_token_loader_new (dataset, 0, 2, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "a batch of 0 rows of 2 tokens: expected at least 1 of each");
  hp_test_assert_error (hp_token_loader_new (dataset, 2, 0, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "a batch of 2 rows of 0 tokens");

  loader = hp_token_loader_new (dataset, 2, 3, &error);
  g_assert_no_error (error);
  g_assert_true (hp_token_loader_set_position (loader, 1, &error));
  g_assert_false (hp_token_loader_set_position (loader, 4, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, "position 4 is outside the 4 tokens of the dataset");
  g_clear_error (&error);
  g_assert_false (hp_token_loader_set_position (loader, -1, &error));
  g_clear_error (&error);
  g_assert_cmpint (hp_token_loader_get_position (loader), ==, 1);

  for (guint i = 0; i < 3; i++)
    {
      const guint rows[][2] = { { 1, 2 }, { 2, 1 }, { 0, 0 } };

      g_assert_false (hp_token_loader_next (loader, rows[i][0], rows[i][1], &inputs, &targets, &error));
      g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, "are not at least one within the batch of 2"));
      g_clear_error (&error);
    }
  g_assert_null (inputs);
  g_assert_null (targets);
  g_assert_cmpint (hp_token_loader_get_position (loader), ==, 1);
}

int
main (int    argc,
      char **argv)
{
  hp_test_init (&argc, &argv);
  g_test_add_func ("/token-dataset/text", test_text);
  g_test_add_func ("/token-dataset/shards", test_shards);
  g_test_add_func ("/token-dataset/shard-errors", test_shard_errors);
  g_test_add_func ("/token-dataset/expand", test_expand);
  g_test_add_func ("/token-dataset/splits", test_splits);
  g_test_add_func ("/token-dataset/range-errors", test_range_errors);
  g_test_add_func ("/token-loader/batches", test_loader);
  g_test_add_func ("/token-loader/errors", test_loader_errors);
  return g_test_run ();
}
