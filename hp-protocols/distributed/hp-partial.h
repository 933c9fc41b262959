/* hp-partial.h: partial values still to be reduced across a mesh dim
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-placement.h"

G_BEGIN_DECLS

/**
 * HpReduceOp:
 * @HP_REDUCE_OP_SUM: the sum over the ranks
 * @HP_REDUCE_OP_AVG: the mean over the ranks
 * @HP_REDUCE_OP_MAX: the maximum over the ranks
 * @HP_REDUCE_OP_MIN: the minimum over the ranks
 * @HP_REDUCE_OP_PRODUCT: the product over the ranks
 *
 * How the partial values of a [class@Hp.Partial] placement combine.
 *
 * Since: 1.0
 */
typedef enum
{
  HP_REDUCE_OP_SUM,
  HP_REDUCE_OP_AVG,
  HP_REDUCE_OP_MAX,
  HP_REDUCE_OP_MIN,
  HP_REDUCE_OP_PRODUCT,
} HpReduceOp;

#define HP_TYPE_PARTIAL (hp_partial_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpPartial, hp_partial, HP, PARTIAL, HpPlacement)

HP_AVAILABLE_IN_ALL
HpPlacement *hp_partial_new               (HpReduceOp    reduce_op);
HP_AVAILABLE_IN_ALL
HpReduceOp   hp_partial_get_reduce_op     (HpPartial    *self);

HP_AVAILABLE_IN_ALL
const gchar *hp_reduce_op_to_string       (HpReduceOp    op);
HP_AVAILABLE_IN_ALL
gboolean     hp_reduce_op_from_string     (const gchar  *name,
                                           HpReduceOp   *op,
                                           GError      **error);

G_END_DECLS
