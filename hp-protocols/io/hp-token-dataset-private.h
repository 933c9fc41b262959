/* hp-token-dataset-private.h: what HpTokenLoader needs of a dataset
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-token-dataset.h"

G_BEGIN_DECLS

/* Copies tokens [@offset, @offset + @n) into @out; no checks */
void _hp_token_dataset_copy (HpTokenDataset *self,
                             gint64          offset,
                             gint64          n,
                             gint64         *out);

G_END_DECLS
