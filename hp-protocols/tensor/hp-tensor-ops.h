/* hp-tensor-ops.h: operations on tensors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every op returns a new tensor (transfer full), or NULL with @error set;
 * on error nothing changes. Ops record autograd nodes when an input
 * requires grad and grad mode is on.
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-tensor.h"

G_BEGIN_DECLS

/* Pointwise (hp-tensor-pointwise.c) */
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_add        (HpTensor *self, HpTensor *other, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_sub        (HpTensor *self, HpTensor *other, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_mul        (HpTensor *self, HpTensor *other, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_div        (HpTensor *self, HpTensor *other, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_pow        (HpTensor *self, HpTensor *exponent, GError **error);

/* Unary (hp-tensor-unary.c) */
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_scale      (HpTensor *self, gdouble factor, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_neg        (HpTensor *self, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_exp        (HpTensor *self, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_silu       (HpTensor *self, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_gelu       (HpTensor *self, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_relu       (HpTensor *self, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_log        (HpTensor *self, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_sqrt       (HpTensor *self, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_rsqrt      (HpTensor *self, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_tanh       (HpTensor *self, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_sigmoid    (HpTensor *self, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_abs        (HpTensor *self, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_clamp      (HpTensor *self, gdouble min, gdouble max, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_pow_scalar (HpTensor *self, gdouble exponent, GError **error);

/* Masks (hp-tensor-mask.c) */
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_eq         (HpTensor *self, HpTensor *other, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_ne         (HpTensor *self, HpTensor *other, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_lt         (HpTensor *self, HpTensor *other, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_le         (HpTensor *self, HpTensor *other, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_gt         (HpTensor *self, HpTensor *other, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_ge         (HpTensor *self, HpTensor *other, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_where      (HpTensor *condition, HpTensor *self, HpTensor *other, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_masked_fill (HpTensor *self, HpTensor *mask, gdouble value, GError **error);

/* Linear algebra (hp-tensor-linalg.c) */
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_matmul     (HpTensor *self, HpTensor *other, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_linear     (HpTensor *self, HpTensor *weight, HpTensor *bias, GError **error);

/* Shape (hp-tensor-shape.c) */
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_transpose  (HpTensor *self, gint dim0, gint dim1, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_permute    (HpTensor *self, const gint *dims, guint n_dims, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_reshape    (HpTensor *self, const gint64 *shape, guint ndim, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_narrow     (HpTensor *self, gint dim, gint64 start, gint64 length, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_cat        (GPtrArray *tensors, gint dim, GError **error);

/* Layout (hp-tensor-layout.c) */
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_expand     (HpTensor *self, const gint64 *shape, guint ndim, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_repeat     (HpTensor *self, const gint64 *repeats, guint n_repeats, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_tril       (HpTensor *self, gint64 diagonal, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_triu       (HpTensor *self, gint64 diagonal, GError **error);

/* Indexing (hp-tensor-index.c) */
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_gather     (HpTensor *self, gint dim, HpTensor *index, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_index_select (HpTensor *self, gint dim, HpTensor *index, GError **error);

/* Conversion (hp-tensor-cast.c) */
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_to_dtype   (HpTensor *self, HpDType dtype, GError **error);

/* Reductions (hp-tensor-reduce.c) */
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_sum        (HpTensor *self, gint dim, gboolean keepdim, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_sum_all    (HpTensor *self, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_mean       (HpTensor *self, gint dim, gboolean keepdim, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_mean_all   (HpTensor *self, GError **error);

/* Selection, running sums and sampling (hp-tensor-select.c) */
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_topk       (HpTensor *self, guint k, gint dim, gboolean largest,
                                HpTensor **indices, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_max        (HpTensor *self, gint dim, gboolean keepdim, HpTensor **indices,
                                GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_min        (HpTensor *self, gint dim, gboolean keepdim, HpTensor **indices,
                                GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_argmax     (HpTensor *self, gint dim, gboolean keepdim, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_argmin     (HpTensor *self, gint dim, gboolean keepdim, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_cumsum     (HpTensor *self, gint dim, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_sample_from_probabilities (HpTensor *probabilities, guint64 seed,
                                               guint64 offset, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_sample_from_logits (HpTensor *logits, guint64 seed, guint64 offset,
                                        GError **error);

/* Neural network functions (hp-tensor-nn.c) */
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_softmax    (HpTensor *self, gint dim, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_log_softmax (HpTensor *self, gint dim, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_rms_norm   (HpTensor *self, HpTensor *weight, gdouble eps, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_embedding  (HpTensor *weight, HpTensor *ids, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_apply_rotary (HpTensor *self, HpTensor *cos_table, HpTensor *sin_table, GError **error);
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_cross_entropy (HpTensor *logits, HpTensor *targets, gint64 ignore_index, GError **error);

/* Attention (hp-tensor-attention.c) */
HP_AVAILABLE_IN_ALL
HpTensor *hp_tensor_scaled_dot_product_attention (HpTensor  *query,
                                                  HpTensor  *key,
                                                  HpTensor  *value,
                                                  HpTensor  *mask,
                                                  gboolean   is_causal,
                                                  gdouble    scale,
                                                  GError   **error);

G_END_DECLS
