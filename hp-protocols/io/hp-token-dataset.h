/* hp-token-dataset.h: a sequence of token ids for training, from text
 * or from llm.c's token shards
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-tensor.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

/**
 * HP_TOKEN_SHARD_HEADER_SIZE:
 *
 * The bytes of the header of a token shard in llm.c's format, 1024:
 * 256 little-endian int32, of which the first three are the magic
 * number, the version and the number of tokens.
 *
 * Since: 1.0
 */
#define HP_TOKEN_SHARD_HEADER_SIZE 1024

#define HP_TYPE_TOKEN_DATASET (hp_token_dataset_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpTokenDataset, hp_token_dataset, HP, TOKEN_DATASET, GObject)

HP_AVAILABLE_IN_ALL
HpTokenDataset *hp_token_dataset_new_from_text  (const gchar          *text,
                                                 gssize                length,
                                                 GError              **error);
HP_AVAILABLE_IN_ALL
HpTokenDataset *hp_token_dataset_new_from_file  (const gchar          *path,
                                                 GError              **error);
HP_AVAILABLE_IN_ALL
HpTokenDataset *hp_token_dataset_new_from_files (const gchar * const  *paths,
                                                 GError              **error);
HP_AVAILABLE_IN_ALL
gchar         **hp_token_dataset_expand_path    (const gchar          *path,
                                                 GError              **error);
HP_AVAILABLE_IN_ALL
gboolean        hp_token_dataset_open_splits    (const gchar          *path,
                                                 gdouble               val_fraction,
                                                 HpTokenDataset      **train,
                                                 HpTokenDataset      **val,
                                                 GError              **error);
HP_AVAILABLE_IN_ALL
gint64          hp_token_dataset_get_n_tokens   (HpTokenDataset       *self);
HP_AVAILABLE_IN_ALL
gint64          hp_token_dataset_get_max_token  (HpTokenDataset       *self);
HP_AVAILABLE_IN_ALL
HpTokenDataset *hp_token_dataset_slice          (HpTokenDataset       *self,
                                                 gint64                start,
                                                 gint64                end,
                                                 GError              **error);
HP_AVAILABLE_IN_ALL
HpTensor       *hp_token_dataset_read           (HpTokenDataset       *self,
                                                 gint64                offset,
                                                 gint64                n_tokens,
                                                 GError              **error);

G_END_DECLS
