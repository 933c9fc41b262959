/* hp-token-loader.h: batches of sequences from a token dataset, each
 * rank taking its rows
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-tensor.h"
#include "hp-token-dataset.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_TOKEN_LOADER (hp_token_loader_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpTokenLoader, hp_token_loader, HP, TOKEN_LOADER, GObject)

HP_AVAILABLE_IN_ALL
HpTokenLoader  *hp_token_loader_new            (HpTokenDataset  *dataset,
                                                guint            batch_size,
                                                guint            seq_len,
                                                GError         **error);
HP_AVAILABLE_IN_ALL
HpTokenDataset *hp_token_loader_get_dataset    (HpTokenLoader   *self);
HP_AVAILABLE_IN_ALL
guint           hp_token_loader_get_batch_size (HpTokenLoader   *self);
HP_AVAILABLE_IN_ALL
guint           hp_token_loader_get_seq_len    (HpTokenLoader   *self);
HP_AVAILABLE_IN_ALL
gint64          hp_token_loader_get_position   (HpTokenLoader   *self);
HP_AVAILABLE_IN_ALL
gboolean        hp_token_loader_set_position   (HpTokenLoader   *self,
                                                gint64           position,
                                                GError         **error);
HP_AVAILABLE_IN_ALL
gboolean        hp_token_loader_next           (HpTokenLoader   *self,
                                                guint            first_row,
                                                guint            n_rows,
                                                HpTensor       **inputs,
                                                HpTensor       **targets,
                                                GError         **error);

G_END_DECLS
