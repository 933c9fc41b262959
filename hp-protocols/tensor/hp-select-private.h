/* hp-select-private.h: the steps of a selection over a sharded dim
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * For the DTensor dispatch of topk, max, min, argmax and argmin over a
 * dim sharded on a mesh dim (hp-tensor-select.c, HP_OP_SHARDING_SELECT):
 * each rank takes the k candidates of its shard, the candidates of all
 * ranks are gathered, and the selection over them gives the result.
 */

#pragma once

#include "hp-op-call-private.h"

G_BEGIN_DECLS

/* How many elements @call picks from each slice */
gint64    _hp_select_get_k       (const HpOpCall  *call);
/* The k candidates of the shard @local along @dim (its first element
 * has the global index @offset): their values (differentiable) and
 * their keys, the global indices, -1 for the padding of a shard of
 * fewer than k elements */
gboolean  _hp_select_candidates  (const HpOpCall  *call,
                                  HpTensor        *local,
                                  guint            dim,
                                  gint64           offset,
                                  HpTensor       **values,
                                  HpTensor       **keys,
                                  GError         **error);
/* @call's results, selected from gathered candidates; ties go to the
 * lower key, as the single-rank op's go to the lower index */
gboolean  _hp_select_merge       (const HpOpCall  *call,
                                  HpTensor        *values,
                                  HpTensor        *keys,
                                  guint            dim,
                                  HpTensor       **outputs,
                                  GError         **error);

G_END_DECLS
