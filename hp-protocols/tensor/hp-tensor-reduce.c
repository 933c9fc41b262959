/* hp-tensor-reduce.c: sums and means over one dim or over everything
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A reduction over dim d sees the input as [outer, n, inner]: outer is
 * the product of the sizes before d, n the size of d and inner the
 * product of the sizes after it. Each output row of inner elements sums n
 * input rows that lie inner elements apart, so reducing any dim reads the
 * input in order and needs no transpose. Reducing everything is the case
 * outer = inner = 1.
 */

#include "config.h"

#include <string.h>

#include "hp-tensor-ops.h"
#include "hp-op-call-private.h"
#include "hp-tensor-private.h"

typedef enum
{
  REDUCE_SUM,
  REDUCE_MEAN,
} ReduceOp;

/* The input shape, for backward */
typedef struct
{
  guint ndim;
  gint64 shape[HP_TENSOR_MAX_NDIM];
} ReduceData;

/* Accumulates in ACC (double for both float types, so float32 sums do not
 * lose precision; int64 for int64) and divides by @divisor at the end. */
#define REDUCE_KERNEL(T, ACC) \
  G_STMT_START { \
    const T *restrict _in = in_data; \
    T *restrict _out = out_data; \
    g_autofree ACC *_acc = g_new (ACC, MAX (inner, 1)); \
    const ACC _divisor = (ACC) divisor; \
    for (gint64 _o = 0; _o < outer; _o++) \
      { \
        const T *_block = _in + _o * n * inner; \
        for (gint64 _i = 0; _i < inner; _i++) \
          _acc[_i] = 0; \
        for (gint64 _k = 0; _k < n; _k++) \
          { \
            const T *_row = _block + _k * inner; \
            for (gint64 _i = 0; _i < inner; _i++) \
              _acc[_i] += _row[_i]; \
          } \
        for (gint64 _i = 0; _i < inner; _i++) \
          _out[_o * inner + _i] = (T) (_acc[_i] / _divisor); \
      } \
  } G_STMT_END

static void
reduce_rows (HpDType        dtype,
               gconstpointer  in_data,
               gpointer       out_data,
               gint64         outer,
               gint64         n,
               gint64         inner,
               gdouble        divisor)
{
  switch (dtype)
    {
    case HP_DTYPE_FLOAT32:
      REDUCE_KERNEL (gfloat, gdouble);
      break;
    case HP_DTYPE_FLOAT64:
      REDUCE_KERNEL (gdouble, gdouble);
      break;
    case HP_DTYPE_INT64:
      REDUCE_KERNEL (gint64, gint64);
      break;
    }
}

/* How many elements each mean divides: the count of the reduced
 * elements, or the call's scalar when it is set (the DTensor dispatch
 * sets the global count for a mean over a sharded dim) */
static gdouble
mean_divisor (const HpOpCall *call,
              const gint64   *shape,
              guint           ndim,
              guint           dim)
{
  if (call->scalar != 0.0)
    return call->scalar;
  return (gdouble) (dim == G_MAXUINT ? _hp_shape_numel (shape, ndim) : shape[dim]);
}

/* The gradient of a sum is the output gradient repeated along the reduced
 * dim; that of a mean is the same divided by the count. The gradient is
 * first given the keepdim shape (a view of its buffer: only a size-1 dim
 * is reinserted) and then expanded to the input shape. */
static gboolean
reduce_backward (HpAutogradNode  *node,
                 HpTensor       **grad_outputs,
                 HpTensor       **grad_inputs,
                 GError         **error)
{
  const HpOpCall *call = _hp_op_node_get_call (node);
  guint dim = _hp_op_node_get_info (node)->dim;
  const ReduceData *data = _hp_op_node_get_data (node);
  HpTensor *grad = grad_outputs[0];
  g_autoptr(HpTensor) scaled = NULL;
  g_autoptr(HpTensor) kept = NULL;
  g_autoptr(GBytes) bytes = NULL;
  gint64 keep_shape[HP_TENSOR_MAX_NDIM];
  gdouble count = mean_divisor (call, data->shape, data->ndim, dim);

  if (call->op->variant == REDUCE_MEAN && count > 0)
    {
      scaled = hp_tensor_scale (grad, 1.0 / count, error);
      if (scaled == NULL)
        return FALSE;
    }
  else
    scaled = g_object_ref (grad);

  if (dim == G_MAXUINT)
    kept = g_steal_pointer (&scaled);
  else
    {
      memcpy (keep_shape, data->shape, data->ndim * sizeof (gint64));
      keep_shape[dim] = 1;
      bytes = hp_tensor_get_bytes (scaled);
      kept = _hp_tensor_new_with_bytes (hp_tensor_get_dtype (scaled),
                                        keep_shape, data->ndim, bytes);
    }

  grad_inputs[0] = _hp_tensor_expand (kept, data->shape, data->ndim, error);
  return grad_inputs[0] != NULL;
}

/* sum and mean over call->dims[0] (kept with size 1 if call->flag);
 * sum_all and mean_all (info->dim G_MAXUINT: every dim) */
static gboolean
reduce_infer (const HpOpCall    *call,
              HpTensor * const  *inputs,
              HpOpInfo          *info,
              GError           **error)
{
  const gchar *name = call->op->name;
  gboolean all = call->n_dims == 0;
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (inputs[0], &ndim);
  HpOpShape *out = &info->out[0];

  if (call->op->variant == REDUCE_MEAN && !_hp_check_floating (name, inputs[0], error))
    return FALSE;
  out->dtype = hp_tensor_get_dtype (inputs[0]);
  out->ndim = 0;
  if (all)
    {
      info->dim = G_MAXUINT;
      return TRUE;
    }
  if (!_hp_normalize_dim (name, call->dims[0], ndim, &info->dim, error))
    return FALSE;
  for (guint d = 0; d < ndim; d++)
    {
      if (d != info->dim)
        out->shape[out->ndim++] = shape[d];
      else if (call->flag)
        out->shape[out->ndim++] = 1;
    }
  return TRUE;
}

static gboolean
reduce_kernel (const HpOpCall    *call,
               const HpOpInfo    *info,
               HpTensor * const  *inputs,
               HpTensor         **outputs,
               HpOpSaved         *saved,
               GError           **error)
{
  HpTensor *self = inputs[0];
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);
  gint64 outer = 1, n, inner = 1;
  ReduceData *data;

  if (info->dim == G_MAXUINT)
    n = hp_tensor_get_numel (self);
  else
    {
      _hp_shape_split_at_dim (shape, ndim, info->dim, &outer, &inner);
      n = shape[info->dim];
    }

  outputs[0] = _hp_op_shape_new_uninit (&info->out[0]);
  /* a mean over no elements divides 0 by 0 and gives NaN */
  reduce_rows (info->out[0].dtype, _hp_tensor_data (self), _hp_tensor_data (outputs[0]),
               outer, n, inner,
               call->op->variant == REDUCE_MEAN ? mean_divisor (call, shape, ndim, info->dim) : 1.0);

  data = g_new (ReduceData, 1);
  data->ndim = ndim;
  memcpy (data->shape, shape, ndim * sizeof (gint64));
  saved->data = data;
  saved->destroy = g_free;
  return TRUE;
}

#define REDUCE_OP(NAME, VARIANT) \
  static const HpOp NAME##_op = { \
    .name = #NAME, .variant = VARIANT, .n_outputs = 1, \
    .infer = reduce_infer, .kernel = reduce_kernel, .backward = reduce_backward, \
    .sharding = HP_OP_SHARDING_REDUCE, .linear_inputs = HP_OP_INPUT (0), \
  };

REDUCE_OP (sum, REDUCE_SUM)
REDUCE_OP (sum_all, REDUCE_SUM)
REDUCE_OP (mean, REDUCE_MEAN)
REDUCE_OP (mean_all, REDUCE_MEAN)

/**
 * hp_tensor_sum:
 * @self: a [class@Hp.Tensor]
 * @dim: the dim to sum over; negative values count from the end
 * @keepdim: whether the result keeps @dim with size 1
 * @error: return location for a [struct@GLib.Error]
 *
 * Sums the elements along one dim. Float32 sums are accumulated in double
 * precision; int64 sums stay int64 (an int64 sum that overflows is not
 * detected). A sum over a dim of size 0 is 0.
 *
 * Returns: (transfer full): the sums, of the shape of @self without @dim
 *   (or with size 1 in @dim if @keepdim), or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if @dim is out of range (a 0-d tensor has
 *   no dim to sum over)
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_sum (HpTensor  *self,
               gint       dim,
               gboolean   keepdim,
               GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &sum_op, .inputs = { self }, .n_inputs = 1,
                     .dims = { dim }, .n_dims = 1, .flag = keepdim);
}

/**
 * hp_tensor_sum_all:
 * @self: a [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Sums all elements, with the precision rules of [method@Hp.Tensor.sum]. The
 * sum of an empty tensor is 0.
 *
 * Returns: (transfer full): the sum as a 0-d tensor of the dtype of @self
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_sum_all (HpTensor  *self,
                   GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &sum_all_op, .inputs = { self }, .n_inputs = 1);
}

/**
 * hp_tensor_mean:
 * @self: a floating point [class@Hp.Tensor]
 * @dim: the dim to average over; negative values count from the end
 * @keepdim: whether the result keeps @dim with size 1
 * @error: return location for a [struct@GLib.Error]
 *
 * Averages the elements along one dim, accumulating in double precision.
 * As in PyTorch, the mean over a dim of size 0 is NaN.
 *
 * Returns: (transfer full): the means, shaped as for [method@Hp.Tensor.sum], or
 *   %NULL with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor or a dim
 *   out of range
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_mean (HpTensor  *self,
                gint       dim,
                gboolean   keepdim,
                GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &mean_op, .inputs = { self }, .n_inputs = 1,
                     .dims = { dim }, .n_dims = 1, .flag = keepdim);
}

/**
 * hp_tensor_mean_all:
 * @self: a floating point [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Averages all elements, accumulating in double precision. The mean of
 * an empty tensor is NaN.
 *
 * Returns: (transfer full): the mean as a 0-d tensor of the dtype of
 *   @self, or %NULL with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_mean_all (HpTensor  *self,
                    GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &mean_all_op, .inputs = { self }, .n_inputs = 1);
}
