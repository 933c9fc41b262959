/* hp-token-loader.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-error.h"
#include "hp-token-dataset-private.h"
#include "hp-token-loader.h"

/**
 * HpTokenLoader:
 *
 * Cuts a [class@Hp.TokenDataset] into batches for next-token training,
 * as llm.c's loader does. A batch is @batch_size rows of @seq_len + 1
 * consecutive tokens; row r starts at the position plus r × @seq_len,
 * its first @seq_len tokens are the inputs and its last @seq_len the
 * targets. Each batch moves the position by @batch_size × @seq_len.
 * The dataset is read as a ring: a row that runs past its end goes on
 * at its start, and so does the position, so batches never run out.
 *
 * The batch is a function of the position alone, which is one number
 * to keep in a checkpoint ([method@Hp.TokenLoader.get_position]) and
 * to resume from ([method@Hp.TokenLoader.set_position]). Data-parallel
 * ranks read their own rows of the same batch with
 * [method@Hp.TokenLoader.next]: each reads only what it trains on, and
 * together they train on what one rank would.
 *
 * ```python
 * loader = Hp.TokenLoader.new(train, 16, 32)
 * inputs, targets = loader.next(rank * 8, 8)   # rows 8 × rank … of 16
 * ```
 *
 * Since: 1.0
 */

struct _HpTokenLoader
{
  GObject parent_instance;

  HpTokenDataset *dataset;
  guint batch_size;
  guint seq_len;
  gint64 position;
};

G_DEFINE_FINAL_TYPE (HpTokenLoader, hp_token_loader, G_TYPE_OBJECT)

static void
hp_token_loader_finalize (GObject *object)
{
  HpTokenLoader *self = HP_TOKEN_LOADER (object);

  g_clear_object (&self->dataset);

  G_OBJECT_CLASS (hp_token_loader_parent_class)->finalize (object);
}

static void
hp_token_loader_class_init (HpTokenLoaderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_token_loader_finalize;
}

static void
hp_token_loader_init (HpTokenLoader *self)
{
}

/**
 * hp_token_loader_new:
 * @dataset: the tokens
 * @batch_size: the rows of a batch, at least 1
 * @seq_len: the tokens of a row's inputs, at least 1
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes a loader of batches of @dataset at position 0.
 *
 * Returns: (transfer full): a new loader, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for a size of 0 or a
 *   dataset of fewer tokens than one row's @seq_len + 1
 *
 * Since: 1.0
 */
HpTokenLoader *
hp_token_loader_new (HpTokenDataset  *dataset,
                     guint            batch_size,
                     guint            seq_len,
                     GError         **error)
{
  HpTokenLoader *self;

  g_return_val_if_fail (HP_IS_TOKEN_DATASET (dataset), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (batch_size == 0 || seq_len == 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "a batch of %u rows of %u tokens: expected at least 1 of each",
                   batch_size, seq_len);
      return NULL;
    }
  if (hp_token_dataset_get_n_tokens (dataset) < (gint64) seq_len + 1)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%" G_GINT64_FORMAT " tokens, fewer than one sequence of %u + 1",
                   hp_token_dataset_get_n_tokens (dataset), seq_len);
      return NULL;
    }
  self = g_object_new (HP_TYPE_TOKEN_LOADER, NULL);
  self->dataset = g_object_ref (dataset);
  self->batch_size = batch_size;
  self->seq_len = seq_len;
  return self;
}

/**
 * hp_token_loader_get_dataset:
 * @self: a [class@Hp.TokenLoader]
 *
 * Gives the dataset the loader reads.
 *
 * Returns: (transfer none): the dataset
 *
 * Since: 1.0
 */
HpTokenDataset *
hp_token_loader_get_dataset (HpTokenLoader *self)
{
  g_return_val_if_fail (HP_IS_TOKEN_LOADER (self), NULL);

  return self->dataset;
}

/**
 * hp_token_loader_get_batch_size:
 * @self: a [class@Hp.TokenLoader]
 *
 * Gives the rows of a batch.
 *
 * Returns: the batch size
 *
 * Since: 1.0
 */
guint
hp_token_loader_get_batch_size (HpTokenLoader *self)
{
  g_return_val_if_fail (HP_IS_TOKEN_LOADER (self), 0);

  return self->batch_size;
}

/**
 * hp_token_loader_get_seq_len:
 * @self: a [class@Hp.TokenLoader]
 *
 * Gives the tokens of a row's inputs (and of its targets).
 *
 * Returns: the sequence length
 *
 * Since: 1.0
 */
guint
hp_token_loader_get_seq_len (HpTokenLoader *self)
{
  g_return_val_if_fail (HP_IS_TOKEN_LOADER (self), 0);

  return self->seq_len;
}

/**
 * hp_token_loader_get_position:
 * @self: a [class@Hp.TokenLoader]
 *
 * Gives the token where the next batch starts.
 *
 * Returns: the position, in [0, tokens of the dataset)
 *
 * Since: 1.0
 */
gint64
hp_token_loader_get_position (HpTokenLoader *self)
{
  g_return_val_if_fail (HP_IS_TOKEN_LOADER (self), 0);

  return self->position;
}

/**
 * hp_token_loader_set_position:
 * @self: a [class@Hp.TokenLoader]
 * @position: the token where the next batch starts
 * @error: return location for a [struct@GLib.Error]
 *
 * Sets the token where the next batch starts, such as the position of
 * a run that stopped.
 *
 * Returns: whether the position is set, or %FALSE with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for a position outside
 *   the dataset (the position unchanged)
 *
 * Since: 1.0
 */
gboolean
hp_token_loader_set_position (HpTokenLoader  *self,
                              gint64          position,
                              GError        **error)
{
  g_return_val_if_fail (HP_IS_TOKEN_LOADER (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (position < 0 || position >= hp_token_dataset_get_n_tokens (self->dataset))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "position %" G_GINT64_FORMAT " is outside the %" G_GINT64_FORMAT
                   " tokens of the dataset", position, hp_token_dataset_get_n_tokens (self->dataset));
      return FALSE;
    }
  self->position = position;
  return TRUE;
}

/* @n tokens from @offset on, around the end of the dataset to its start */
static void
copy_ring (HpTokenDataset *dataset,
           gint64          offset,
           gint64          n,
           gint64         *out)
{
  gint64 size = hp_token_dataset_get_n_tokens (dataset);

  while (n > 0)
    {
      gint64 count = MIN (n, size - offset);

      _hp_token_dataset_copy (dataset, offset, count, out);
      out += count;
      n -= count;
      offset = 0;
    }
}

/**
 * hp_token_loader_next:
 * @self: a [class@Hp.TokenLoader]
 * @first_row: the first row of the batch to read
 * @n_rows: the rows to read, at least 1
 * @inputs: (out) (transfer full): int64 ids of shape [@n_rows, seq-len]
 * @targets: (out) (transfer full): the ids that follow each input, of
 *   the same shape
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads rows [@first_row, @first_row + @n_rows) of the batch at the
 * position, and moves the position to the next batch.
 *
 * Returns: (skip): whether the rows are read, or %FALSE with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for rows outside the
 *   batch (the position unchanged)
 *
 * Since: 1.0
 */
gboolean
hp_token_loader_next (HpTokenLoader  *self,
                      guint           first_row,
                      guint           n_rows,
                      HpTensor      **inputs,
                      HpTensor      **targets,
                      GError        **error)
{
  gint64 size;
  gint64 len;
  gint64 shape[2];
  g_autofree gint64 *row = NULL;
  g_autofree gint64 *input_ids = NULL;
  g_autofree gint64 *target_ids = NULL;
  g_autoptr(HpTensor) input_tensor = NULL;
  g_autoptr(HpTensor) target_tensor = NULL;

  g_return_val_if_fail (HP_IS_TOKEN_LOADER (self), FALSE);
  g_return_val_if_fail (inputs != NULL && targets != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (n_rows == 0 || first_row >= self->batch_size || n_rows > self->batch_size - first_row)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "rows [%u, %u + %u) are not at least one within the batch of %u",
                   first_row, first_row, n_rows, self->batch_size);
      return FALSE;
    }
  size = hp_token_dataset_get_n_tokens (self->dataset);
  len = self->seq_len;
  shape[0] = n_rows;
  shape[1] = len;
  row = g_new (gint64, len + 1);
  input_ids = g_new (gint64, n_rows * len);
  target_ids = g_new (gint64, n_rows * len);
  for (guint r = 0; r < n_rows; r++)
    {
      /* the modulo first: position + row × len can be beyond gint64 */
      gint64 start = (self->position + ((gint64) (first_row + r) * len) % size) % size;

      copy_ring (self->dataset, start, len + 1, row);
      memcpy (input_ids + r * len, row, len * sizeof (gint64));
      memcpy (target_ids + r * len, row + 1, len * sizeof (gint64));
    }
  input_tensor = hp_tensor_new_from_int64_data (input_ids, n_rows * len, shape, 2, error);
  target_tensor = input_tensor != NULL
    ? hp_tensor_new_from_int64_data (target_ids, n_rows * len, shape, 2, error) : NULL;
  if (target_tensor == NULL)
    return FALSE;
  self->position = (self->position + ((gint64) self->batch_size * len) % size) % size;
  *inputs = g_steal_pointer (&input_tensor);
  *targets = g_steal_pointer (&target_tensor);
  return TRUE;
}
