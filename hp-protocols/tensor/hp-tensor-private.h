/* hp-tensor-private.h: what the ops need of HpTensor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-autograd-private.h"
#include "hp-error.h"
#include "hp-grad-mode.h"
#include "hp-tensor.h"

G_BEGIN_DECLS

typedef struct _HpOpCall HpOpCall;

/* The private vfuncs of HpTensorClass (gpointer there, so that the
 * introspection scanner does not see them). The distributed tensor sets
 * all four; a plain tensor leaves dispatch NULL. */
typedef gchar    *(*HpTensorToStringFunc)   (HpTensor        *self);
typedef HpTensor *(*HpTensorDetachFunc)     (HpTensor        *self);
typedef HpTensor *(*HpTensorNewOnesLikeFunc) (HpTensor       *self);
typedef gboolean (*HpTensorDispatchFunc)   (const HpOpCall  *call,
                                             HpTensor       **outputs,
                                             GError         **error);

/* A tensor of a subclass that keeps only the metadata here (dtype and
 * shape) and holds its data elsewhere: reading its bytes is an error. */
HpTensor     *_hp_tensor_new_meta         (GType             type,
                                           HpDType           dtype,
                                           const gint64     *shape,
                                           guint             ndim);
gboolean      _hp_tensor_has_storage      (HpTensor         *self);
/* Ones with the layout the gradient of @self has (the seed of backward) */
HpTensor     *_hp_tensor_new_ones_like    (HpTensor         *self);

/* Storage is 64-byte aligned so that BLAS and vector loops see aligned
 * rows. A fresh tensor's data may be written until it is handed out;
 * after that a tensor never changes. */
GBytes       *_hp_storage_new             (gsize             size);
HpTensor     *_hp_tensor_new_uninit       (HpDType           dtype,
                                           const gint64     *shape,
                                           guint             ndim);
HpTensor     *_hp_tensor_new_zeros_like   (HpTensor         *like);
HpTensor     *_hp_tensor_new_from_doubles (HpDType           dtype,
                                           const gdouble    *values,
                                           const gint64     *shape,
                                           guint             ndim);
HpTensor     *_hp_tensor_new_with_bytes   (HpDType           dtype,
                                           const gint64     *shape,
                                           guint             ndim,
                                           GBytes           *bytes);
gpointer      _hp_tensor_data             (HpTensor         *self);
HpAutogradNode *_hp_tensor_get_grad_fn    (HpTensor         *self,
                                           guint            *output_nr);
void          _hp_tensor_set_grad_fn      (HpTensor         *self,
                                           HpAutogradNode   *node,
                                           guint             output_nr);

/* Shapes */
gint64        _hp_shape_numel             (const gint64     *shape,
                                           guint             ndim);
gchar        *_hp_shape_to_string         (const gint64     *shape,
                                           guint             ndim);
gchar        *_hp_tensor_describe         (HpTensor         *self);
gchar        *_hp_tensor_shape_to_string  (HpTensor         *self);
gboolean      _hp_tensor_has_shape        (HpTensor         *self,
                                           const gint64     *shape,
                                           guint             ndim);
gboolean      _hp_shape_equal             (const gint64     *a,
                                           guint             a_ndim,
                                           const gint64     *b,
                                           guint             b_ndim);
void          _hp_shape_split_at_dim      (const gint64     *shape,
                                           guint             ndim,
                                           guint             dim,
                                           gint64           *outer,
                                           gint64           *inner);
void          _hp_shape_strides           (const gint64     *shape,
                                           guint             ndim,
                                           gint64           *strides);
gboolean      _hp_shape_check             (const gint64     *shape,
                                           guint             ndim,
                                           GError          **error);
gboolean      _hp_normalize_dim           (const gchar      *op,
                                           gint              dim,
                                           guint             ndim,
                                           guint            *out_dim,
                                           GError          **error);
gboolean      _hp_broadcast_shapes        (const gchar      *op,
                                           const gint64     *a,
                                           guint             a_ndim,
                                           const gint64     *b,
                                           guint             b_ndim,
                                           gint64           *out,
                                           guint            *out_ndim,
                                           GError          **error);
void          _hp_broadcast_strides       (const gint64     *shape,
                                           guint             ndim,
                                           const gint64     *out_shape,
                                           guint             out_ndim,
                                           gint64           *strides);

/* Walks the elements of a broadcast result of @shape in row-major order
 * (init, then next after each element), keeping the offset of the
 * element of each operand in @offsets */
#define HP_BROADCAST_MAX_OPERANDS 3

typedef struct
{
  guint n;
  guint ndim;
  gint64 shape[HP_TENSOR_MAX_NDIM];
  gint64 index[HP_TENSOR_MAX_NDIM];
  gint64 strides[HP_BROADCAST_MAX_OPERANDS][HP_TENSOR_MAX_NDIM];
  gint64 offsets[HP_BROADCAST_MAX_OPERANDS];
} HpBroadcastIter;

void          _hp_broadcast_iter_init     (HpBroadcastIter  *iter,
                                           const gint64     *shape,
                                           guint             ndim,
                                           HpTensor * const *operands,
                                           guint             n);

static inline void
_hp_broadcast_iter_next (HpBroadcastIter *iter)
{
  for (guint d = iter->ndim; d-- > 0;)
    {
      iter->index[d]++;
      for (guint k = 0; k < iter->n; k++)
        iter->offsets[k] += iter->strides[k][d];
      if (iter->index[d] < iter->shape[d])
        return;
      for (guint k = 0; k < iter->n; k++)
        iter->offsets[k] -= iter->strides[k][d] * iter->shape[d];
      iter->index[d] = 0;
    }
}

HpTensor     *_hp_tensor_sum_to_shape     (HpTensor         *self,
                                           const gint64     *shape,
                                           guint             ndim,
                                           GError          **error);
HpTensor     *_hp_tensor_expand           (HpTensor         *self,
                                           const gint64     *shape,
                                           guint             ndim,
                                           GError          **error);

/* silu(gate) * up in one op, forward and backward, for the feed-forward
 * block (hp-tensor-glu.c) */
HpTensor     *_hp_tensor_silu_mul         (HpTensor         *gate,
                                           HpTensor         *up,
                                           GError          **error);

/* The kernels of cross entropy (hp-tensor-nn.c), for float32 and
 * float64. Over one row of @c values: the largest, and the sum of
 * e^(x - @max) (in double). Over @rows rows of @c logits that hold
 * classes [@first_class, @first_class + @c): the gradient
 * (softmax - onehot (target)) * @scale from each row's logsumexp @lse,
 * zero for the rows whose target is @ignore_index. */
gdouble       _hp_row_max                 (HpDType           dtype,
                                           gconstpointer     x,
                                           gint64            c);
gdouble       _hp_row_exp_sum             (HpDType           dtype,
                                           gconstpointer     x,
                                           gint64            c,
                                           gdouble           max);
void          _hp_cross_entropy_backward_rows (HpDType        dtype,
                                               gconstpointer  x,
                                               const gint64  *targets,
                                               const gdouble *lse,
                                               gpointer       gx,
                                               gint64         rows,
                                               gint64         c,
                                               gint64         ignore_index,
                                               gint64         first_class,
                                               gdouble        scale);

/* BLAS products of row-major matrices, packed or with rows the leading
 * dimensions apart (hp-tensor-linalg.c) */
void          _hp_gemm_ld                 (HpDType           dtype,
                                           gboolean          trans_a,
                                           gboolean          trans_b,
                                           gint64            m,
                                           gint64            n,
                                           gint64            k,
                                           gdouble           alpha,
                                           gconstpointer     a,
                                           gint64            lda,
                                           gconstpointer     b,
                                           gint64            ldb,
                                           gdouble           beta,
                                           gpointer          c,
                                           gint64            ldc);
void          _hp_gemm                    (HpDType           dtype,
                                           gboolean          trans_a,
                                           gboolean          trans_b,
                                           gint64            m,
                                           gint64            n,
                                           gint64            k,
                                           gdouble           alpha,
                                           gconstpointer     a,
                                           gconstpointer     b,
                                           gdouble           beta,
                                           gpointer          c);

/* The uniform number in [0, 1) of the Philox counter @counter under
 * @seed: element @counter of hp_tensor_new_uniform (.., 0, 1, @seed)
 * (hp-random.c) */
gdouble       _hp_random_uniform          (guint64           counter,
                                           guint64           seed);

/* Argument checks that set HP_ERROR_INVALID_ARGUMENT naming @op */
gboolean      _hp_check_same_dtype        (const gchar      *op,
                                           HpTensor         *a,
                                           HpTensor         *b,
                                           GError          **error);
gboolean      _hp_check_floating          (const gchar      *op,
                                           HpTensor         *self,
                                           GError          **error);
gboolean      _hp_check_dtype             (const gchar      *op,
                                           const gchar      *what,
                                           HpTensor         *self,
                                           HpDType           dtype,
                                           GError          **error);

/* Reads element i of any dtype as a double and writes one back */
static inline gdouble
_hp_load_f64 (gconstpointer data, HpDType dtype, gint64 i)
{
  switch (dtype)
    {
    case HP_DTYPE_FLOAT32:
      return ((const gfloat *) data)[i];
    case HP_DTYPE_FLOAT64:
      return ((const gdouble *) data)[i];
    case HP_DTYPE_INT64:
    default:
      return (gdouble) ((const gint64 *) data)[i];
    }
}

static inline void
_hp_store_f64 (gpointer data, HpDType dtype, gint64 i, gdouble value)
{
  switch (dtype)
    {
    case HP_DTYPE_FLOAT32:
      ((gfloat *) data)[i] = (gfloat) value;
      break;
    case HP_DTYPE_FLOAT64:
      ((gdouble *) data)[i] = value;
      break;
    case HP_DTYPE_INT64:
    default:
      ((gint64 *) data)[i] = (gint64) value;
      break;
    }
}

void          _hp_object_unref_nullable   (gpointer          object);
GPtrArray    *_hp_object_array_take       (GPtrArray        *array);
GPtrArray    *_hp_object_array_copy       (GPtrArray        *array);

G_END_DECLS
