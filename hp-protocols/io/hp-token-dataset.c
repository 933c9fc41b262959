/* hp-token-dataset.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fnmatch.h>
#include <math.h>
#include <string.h>

#include "hp-byte-tokenizer.h"
#include "hp-error.h"
#include "hp-token-dataset-private.h"

/**
 * HpTokenDataset:
 *
 * A sequence of token ids to train a language model on, read from
 *
 * - UTF-8 text, as [class@Hp.ByteTokenizer] gives it, each file one
 *   document ended by [const@Hp.BYTE_TOKENIZER_EOT];
 * - token shards in the format of llm.c's data scripts (files ending in
 *   `.bin`): a header of 256 little-endian int32, the magic number
 *   20240520, version 1 and the number of tokens, followed by that many
 *   little-endian uint16 ids; or magic 20240801, version 7 and uint32
 *   ids. A shard is mapped, not read, so a large one costs no memory.
 *
 * Several files make one sequence, in the order given.
 * [func@Hp.TokenDataset.open_splits] takes a file, a directory of
 * shards or a glob of files, and gives the training and validation
 * parts: the shards whose name contains `val` (llm.c names them
 * `NAME_val_000000.bin`), or else the last fraction of the tokens.
 *
 * ```python
 * train, val = Hp.TokenDataset.open_splits("shards", 0.0)
 * print(train.get_n_tokens(), train.get_max_token())
 * first = train.read(0, 8).numpy()
 * ```
 *
 * [class@Hp.TokenLoader] cuts a dataset into batches.
 *
 * Since: 1.0
 */

/* the two headers of llm.c's shards */
#define SHARD_MAGIC_U16 20240520
#define SHARD_VERSION_U16 1
#define SHARD_MAGIC_U32 20240801
#define SHARD_VERSION_U32 7

/* Tokens of one file, or of text, of @width bytes each */
typedef struct
{
  GBytes *bytes;
  const guint8 *data;
  guint width;
  gint64 n;
} Piece;

struct _HpTokenDataset
{
  GObject parent_instance;

  GArray *pieces;               /* of Piece */
  gint64 *starts;               /* where each piece starts; [n_pieces] is n_tokens */
  gint64 max_token;
};

G_DEFINE_FINAL_TYPE (HpTokenDataset, hp_token_dataset, G_TYPE_OBJECT)

static void
piece_clear (gpointer data)
{
  Piece *piece = data;

  g_clear_pointer (&piece->bytes, g_bytes_unref);
}

static inline gint64
piece_token (const Piece *piece,
             gint64       i)
{
  if (piece->width == 2)
    return GUINT16_FROM_LE (((const guint16 *) piece->data)[i]);
  return GUINT32_FROM_LE (((const guint32 *) piece->data)[i]);
}

static void
hp_token_dataset_finalize (GObject *object)
{
  HpTokenDataset *self = HP_TOKEN_DATASET (object);

  g_clear_pointer (&self->pieces, g_array_unref);
  g_clear_pointer (&self->starts, g_free);

  G_OBJECT_CLASS (hp_token_dataset_parent_class)->finalize (object);
}

static void
hp_token_dataset_class_init (HpTokenDatasetClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_token_dataset_finalize;
}

static void
hp_token_dataset_init (HpTokenDataset *self)
{
  self->pieces = g_array_new (FALSE, TRUE, sizeof (Piece));
  g_array_set_clear_func (self->pieces, piece_clear);
}

static void
dataset_add_piece (HpTokenDataset *self,
                   GBytes         *bytes,
                   const guint8   *data,
                   guint           width,
                   gint64          n)
{
  Piece piece = { g_bytes_ref (bytes), data, width, n };

  g_array_append_val (self->pieces, piece);
}

/* The starts of the pieces and the largest id, once they are added */
static HpTokenDataset *
dataset_seal (HpTokenDataset *self)
{
  self->starts = g_new (gint64, self->pieces->len + 1);
  self->starts[0] = 0;
  self->max_token = -1;
  for (guint p = 0; p < self->pieces->len; p++)
    {
      const Piece *piece = &g_array_index (self->pieces, Piece, p);

      self->starts[p + 1] = self->starts[p] + piece->n;
      for (gint64 i = 0; i < piece->n; i++)
        self->max_token = MAX (self->max_token, piece_token (piece, i));
    }
  return self;
}

static gboolean
add_text (HpTokenDataset  *self,
          const gchar     *text,
          gsize            length,
          const gchar     *path,
          GError         **error)
{
  const gchar *end;
  g_autoptr(GBytes) bytes = NULL;
  guint16 *ids;

  if (!g_utf8_validate_len (text, length, &end))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s%snot UTF-8 text: the byte at %" G_GSIZE_FORMAT " is not valid%s",
                   path != NULL ? path : "", path != NULL ? ": " : "", (gsize) (end - text),
                   path != NULL ? " (token shards end in .bin)" : "");
      return FALSE;
    }
  ids = g_new (guint16, length + 1);
  for (gsize i = 0; i < length; i++)
    ids[i] = GUINT16_TO_LE ((guint8) text[i]);
  ids[length] = GUINT16_TO_LE (HP_BYTE_TOKENIZER_EOT);
  bytes = g_bytes_new_take (ids, (length + 1) * sizeof (guint16));
  dataset_add_piece (self, bytes, g_bytes_get_data (bytes, NULL), sizeof (guint16), length + 1);
  return TRUE;
}

static gboolean
add_shard (HpTokenDataset  *self,
           const gchar     *path,
           GError         **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GMappedFile) file = g_mapped_file_new (path, FALSE, &local_error);
  g_autoptr(GBytes) bytes = NULL;
  const guint8 *data;
  gsize size;
  gint32 header[3];
  guint width;

  if (file == NULL)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_IO, local_error->message);
      return FALSE;
    }
  bytes = g_mapped_file_get_bytes (file);
  data = g_bytes_get_data (bytes, &size);
  if (size < HP_TOKEN_SHARD_HEADER_SIZE)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: %" G_GSIZE_FORMAT " bytes, shorter than the %d-byte header of a token shard",
                   path, size, HP_TOKEN_SHARD_HEADER_SIZE);
      return FALSE;
    }
  memcpy (header, data, sizeof header);
  for (guint i = 0; i < G_N_ELEMENTS (header); i++)
    header[i] = GINT32_FROM_LE (header[i]);
  if (header[0] != SHARD_MAGIC_U16 && header[0] != SHARD_MAGIC_U32)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: magic number %d is not that of a token shard (%d for uint16 ids, "
                   "%d for uint32)", path, header[0], SHARD_MAGIC_U16, SHARD_MAGIC_U32);
      return FALSE;
    }
  width = header[0] == SHARD_MAGIC_U16 ? sizeof (guint16) : sizeof (guint32);
  if (header[1] != (header[0] == SHARD_MAGIC_U16 ? SHARD_VERSION_U16 : SHARD_VERSION_U32))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: version %d of a token shard with magic %d, which has version %d only",
                   path, header[1], header[0],
                   header[0] == SHARD_MAGIC_U16 ? SHARD_VERSION_U16 : SHARD_VERSION_U32);
      return FALSE;
    }
  if (header[2] < 0 || (gsize) header[2] * width != size - HP_TOKEN_SHARD_HEADER_SIZE)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: the header counts %d tokens of %u bytes, but %" G_GSIZE_FORMAT
                   " bytes follow it", path, header[2], width, size - HP_TOKEN_SHARD_HEADER_SIZE);
      return FALSE;
    }
  dataset_add_piece (self, bytes, data + HP_TOKEN_SHARD_HEADER_SIZE, width, header[2]);
  return TRUE;
}

static gboolean
add_file (HpTokenDataset  *self,
          const gchar     *path,
          GError         **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree gchar *text = NULL;
  gsize length;

  if (g_str_has_suffix (path, ".bin"))
    return add_shard (self, path, error);
  if (!g_file_get_contents (path, &text, &length, &local_error))
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_IO, local_error->message);
      return FALSE;
    }
  return add_text (self, text, length, path, error);
}

/**
 * hp_token_dataset_new_from_text:
 * @text: UTF-8 text
 * @length: the bytes of @text, or -1 when it ends with a NUL
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes a dataset of the ids of one document: the bytes of @text and
 * an end-of-text, as [class@Hp.ByteTokenizer] gives them.
 *
 * Returns: (transfer full): a new dataset, or %NULL with
 *   [HP_ERROR_FORMAT][error@Hp.Error] when @text is not valid UTF-8
 *
 * Since: 1.0
 */
HpTokenDataset *
hp_token_dataset_new_from_text (const gchar  *text,
                                gssize        length,
                                GError      **error)
{
  g_autoptr(HpTokenDataset) self = NULL;

  g_return_val_if_fail (text != NULL || length == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  self = g_object_new (HP_TYPE_TOKEN_DATASET, NULL);
  if (!add_text (self, text, length < 0 ? strlen (text) : (gsize) length, NULL, error))
    return NULL;
  return dataset_seal (g_steal_pointer (&self));
}

/**
 * hp_token_dataset_new_from_file:
 * @path: (type filename): a token shard (a name ending in `.bin`) or a
 *   UTF-8 text file
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes a dataset of the ids of one file: a shard's ids, or a text's
 * bytes ended by an end-of-text.
 *
 * Returns: (transfer full): a new dataset, or %NULL with
 *   [HP_ERROR_IO][error@Hp.Error] when the file cannot be read, or
 *   [HP_ERROR_FORMAT][error@Hp.Error] for a shard with another magic
 *   number or version, one whose size differs from what its header
 *   counts, and text that is not UTF-8
 *
 * Since: 1.0
 */
HpTokenDataset *
hp_token_dataset_new_from_file (const gchar  *path,
                                GError      **error)
{
  const gchar *paths[] = { path, NULL };

  g_return_val_if_fail (path != NULL, NULL);

  return hp_token_dataset_new_from_files (paths, error);
}

/**
 * hp_token_dataset_new_from_files:
 * @paths: (array zero-terminated=1) (element-type filename): token
 *   shards and text files
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes a dataset of the ids of @paths one after the other, each read
 * as [ctor@Hp.TokenDataset.new_from_file] reads it.
 *
 * Returns: (transfer full): a new dataset, or %NULL with the error of
 *   the first file that does not read, or
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when @paths is empty
 *
 * Since: 1.0
 */
HpTokenDataset *
hp_token_dataset_new_from_files (const gchar * const  *paths,
                                 GError              **error)
{
  g_autoptr(HpTokenDataset) self = NULL;

  g_return_val_if_fail (paths != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (paths[0] == NULL)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT, "no files to read");
      return NULL;
    }
  self = g_object_new (HP_TYPE_TOKEN_DATASET, NULL);
  for (guint i = 0; paths[i] != NULL; i++)
    if (!add_file (self, paths[i], error))
      return NULL;
  return dataset_seal (g_steal_pointer (&self));
}

static gboolean
is_pattern (const gchar *path)
{
  return strpbrk (path, "*?[") != NULL;
}

static gint
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* The files of @path and whether it names a set of them (a directory
 * or a pattern) */
static gchar **
expand (const gchar  *path,
        gboolean     *is_set,
        GError      **error)
{
  g_autofree gchar *dir_name = NULL;
  g_autofree gchar *pattern = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GPtrArray) files = g_ptr_array_new_null_terminated (0, g_free, TRUE);
  const gchar *name;

  *is_set = g_file_test (path, G_FILE_TEST_IS_DIR) || is_pattern (path);
  if (!*is_set)
    {
      g_ptr_array_add (files, g_strdup (path));
      return (gchar **) g_ptr_array_steal (files, NULL);
    }
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      dir_name = g_strdup (path);
      pattern = g_strdup ("*.bin");
    }
  else
    {
      dir_name = g_path_get_dirname (path);
      pattern = g_path_get_basename (path);
    }
  if (is_pattern (dir_name))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: a pattern matches file names in one directory, not directories", path);
      return NULL;
    }
  dir = g_dir_open (dir_name, 0, &local_error);
  if (dir == NULL)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_IO, local_error->message);
      return NULL;
    }
  while ((name = g_dir_read_name (dir)) != NULL)
    if (fnmatch (pattern, name, FNM_PERIOD) == 0)
      g_ptr_array_add (files, g_build_filename (dir_name, name, NULL));
  if (files->len == 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_IO, "%s: no file matches %s", path, pattern);
      return NULL;
    }
  g_ptr_array_sort (files, compare_names);
  return (gchar **) g_ptr_array_steal (files, NULL);
}

/**
 * hp_token_dataset_expand_path:
 * @path: (type filename): a file, a directory or a pattern of file
 *   names in one directory (`*`, `?` and `[...]` as the shell has them)
 * @error: return location for a [struct@GLib.Error]
 *
 * Gives the files that @path names: itself when it is neither a
 * directory nor a pattern, or the token shards (`*.bin`) of the
 * directory, or the files that match the pattern, in the byte order of
 * their names.
 *
 * Returns: (transfer full) (array zero-terminated=1) (element-type filename):
 *   the files, or %NULL with [HP_ERROR_IO][error@Hp.Error] when no file
 *   matches or the directory does not read, or
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for a pattern in the
 *   directory part
 *
 * Since: 1.0
 */
gchar **
hp_token_dataset_expand_path (const gchar  *path,
                              GError      **error)
{
  gboolean is_set;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return expand (path, &is_set, error);
}

/**
 * hp_token_dataset_open_splits:
 * @path: (type filename): what [func@Hp.TokenDataset.expand_path] takes
 * @val_fraction: the fraction of the tokens to validate on, in [0, 1),
 *   when no shard is named for validation
 * @train: (out) (transfer full): the training part
 * @val: (out) (optional) (nullable) (transfer full): the validation part, %NULL
 *   when there is none
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads the files of @path and splits them, the same way on every run
 * and rank. When @path is a directory or a pattern and some of its
 * files have `val` in their name, those are the validation part, the
 * others the training part, and @val_fraction is not used. Otherwise
 * the tokens of all the files, one after the other, are split: the last
 * @val_fraction of them (rounded down) validate, the others train.
 *
 * Returns: (skip): whether the files read, or %FALSE with the error of
 *   [ctor@Hp.TokenDataset.new_from_files] or
 *   [func@Hp.TokenDataset.expand_path], or
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for a fraction outside
 *   [0, 1) or a set of files that are all named for validation
 *
 * Since: 1.0
 */
gboolean
hp_token_dataset_open_splits (const gchar      *path,
                              gdouble           val_fraction,
                              HpTokenDataset  **train,
                              HpTokenDataset  **val,
                              GError          **error)
{
  g_auto(GStrv) files = NULL;
  g_autoptr(GPtrArray) train_files = g_ptr_array_new_null_terminated (0, NULL, TRUE);
  g_autoptr(GPtrArray) val_files = g_ptr_array_new_null_terminated (0, NULL, TRUE);
  g_autoptr(HpTokenDataset) all = NULL;
  g_autoptr(HpTokenDataset) train_part = NULL;
  g_autoptr(HpTokenDataset) val_part = NULL;
  gboolean is_set;
  gint64 n_val;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (train != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!(val_fraction >= 0 && val_fraction < 1))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "validation fraction %g: expected at least 0 and less than 1", val_fraction);
      return FALSE;
    }
  files = expand (path, &is_set, error);
  if (files == NULL)
    return FALSE;
  for (guint i = 0; files[i] != NULL; i++)
    {
      g_autofree gchar *name = g_path_get_basename (files[i]);

      g_ptr_array_add (is_set && strstr (name, "val") != NULL ? val_files : train_files, files[i]);
    }
  if (val_files->len > 0)
    {
      if (train_files->len == 0)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "%s: every file has 'val' in its name: none is left to train on", path);
          return FALSE;
        }
      train_part = hp_token_dataset_new_from_files ((const gchar * const *) train_files->pdata, error);
      val_part = train_part != NULL
        ? hp_token_dataset_new_from_files ((const gchar * const *) val_files->pdata, error) : NULL;
      if (val_part == NULL)
        return FALSE;
    }
  else
    {
      all = hp_token_dataset_new_from_files ((const gchar * const *) files, error);
      if (all == NULL)
        return FALSE;
      n_val = (gint64) floor (hp_token_dataset_get_n_tokens (all) * val_fraction);
      train_part = hp_token_dataset_slice (all, 0, hp_token_dataset_get_n_tokens (all) - n_val, NULL);
      if (val_fraction > 0)
        val_part = hp_token_dataset_slice (all, hp_token_dataset_get_n_tokens (all) - n_val,
                                           hp_token_dataset_get_n_tokens (all), NULL);
    }
  *train = g_steal_pointer (&train_part);
  if (val != NULL)
    *val = g_steal_pointer (&val_part);
  return TRUE;
}

/**
 * hp_token_dataset_get_n_tokens:
 * @self: a [class@Hp.TokenDataset]
 *
 * Gives the number of tokens of the dataset.
 *
 * Returns: the number of tokens
 *
 * Since: 1.0
 */
gint64
hp_token_dataset_get_n_tokens (HpTokenDataset *self)
{
  g_return_val_if_fail (HP_IS_TOKEN_DATASET (self), 0);

  return self->starts[self->pieces->len];
}

/**
 * hp_token_dataset_get_max_token:
 * @self: a [class@Hp.TokenDataset]
 *
 * Gives the largest id of the dataset: a model that trains on it needs
 * a vocabulary of more ids than that.
 *
 * Returns: the largest id, or -1 when the dataset is empty
 *
 * Since: 1.0
 */
gint64
hp_token_dataset_get_max_token (HpTokenDataset *self)
{
  g_return_val_if_fail (HP_IS_TOKEN_DATASET (self), -1);

  return self->max_token;
}

static gboolean
check_range (HpTokenDataset  *self,
             gint64           start,
             gint64           end,
             GError         **error)
{
  if (start < 0 || end < start || end > hp_token_dataset_get_n_tokens (self))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "tokens [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") are not within the %"
                   G_GINT64_FORMAT " of the dataset", start, end, hp_token_dataset_get_n_tokens (self));
      return FALSE;
    }
  return TRUE;
}

/**
 * hp_token_dataset_slice:
 * @self: a [class@Hp.TokenDataset]
 * @start: the first token
 * @end: the token after the last
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes a dataset of tokens [@start, @end) of @self, sharing its
 * memory.
 *
 * Returns: (transfer full): a new dataset, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when the range is not
 *   within @self
 *
 * Since: 1.0
 */
HpTokenDataset *
hp_token_dataset_slice (HpTokenDataset  *self,
                        gint64           start,
                        gint64           end,
                        GError         **error)
{
  HpTokenDataset *slice;

  g_return_val_if_fail (HP_IS_TOKEN_DATASET (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_range (self, start, end, error))
    return NULL;
  slice = g_object_new (HP_TYPE_TOKEN_DATASET, NULL);
  for (guint p = 0; p < self->pieces->len; p++)
    {
      const Piece *piece = &g_array_index (self->pieces, Piece, p);
      gint64 from = MAX (start, self->starts[p]) - self->starts[p];
      gint64 to = MIN (end, self->starts[p + 1]) - self->starts[p];

      if (from < to)
        dataset_add_piece (slice, piece->bytes, piece->data + from * piece->width, piece->width,
                           to - from);
    }
  return dataset_seal (slice);
}

void
_hp_token_dataset_copy (HpTokenDataset *self,
                        gint64          offset,
                        gint64          n,
                        gint64         *out)
{
  guint lo = 0;
  guint hi = self->pieces->len;

  /* the piece that holds @offset: the last whose start is not after it */
  while (hi - lo > 1)
    {
      guint mid = (lo + hi) / 2;

      if (self->starts[mid] <= offset)
        lo = mid;
      else
        hi = mid;
    }
  for (guint p = lo; n > 0; p++)
    {
      const Piece *piece = &g_array_index (self->pieces, Piece, p);
      gint64 from = offset - self->starts[p];
      gint64 count = MIN (n, piece->n - from);

      for (gint64 i = 0; i < count; i++)
        out[i] = piece_token (piece, from + i);
      out += count;
      offset += count;
      n -= count;
    }
}

/**
 * hp_token_dataset_read:
 * @self: a [class@Hp.TokenDataset]
 * @offset: the first token
 * @n_tokens: the number of tokens, at least 1
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads tokens [@offset, @offset + @n_tokens).
 *
 * Returns: (transfer full): an int64 tensor of shape [@n_tokens], or
 *   %NULL with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when the
 *   range is empty or not within @self
 *
 * Since: 1.0
 */
HpTensor *
hp_token_dataset_read (HpTokenDataset  *self,
                       gint64           offset,
                       gint64           n_tokens,
                       GError         **error)
{
  g_autofree gint64 *tokens = NULL;

  g_return_val_if_fail (HP_IS_TOKEN_DATASET (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (n_tokens < 1 || offset < 0 || offset > hp_token_dataset_get_n_tokens (self) - n_tokens)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%" G_GINT64_FORMAT " tokens at %" G_GINT64_FORMAT ": expected at least 1, "
                   "within the %" G_GINT64_FORMAT " of the dataset", n_tokens, offset,
                   hp_token_dataset_get_n_tokens (self));
      return NULL;
    }
  tokens = g_new (gint64, n_tokens);
  _hp_token_dataset_copy (self, offset, n_tokens, tokens);
  return hp_tensor_new_from_int64_data (tokens, n_tokens, &n_tokens, 1, error);
}
