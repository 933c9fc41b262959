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

typedef struct
{
  gboolean mean;
  gboolean all;
  guint dim;
  /* the input shape */
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
reduce_kernel (HpDType        dtype,
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
  const ReduceData *data = _hp_autograd_node_get_data (node);
  HpTensor *grad = grad_outputs[0];
  g_autoptr(HpTensor) scaled = NULL;
  g_autoptr(HpTensor) kept = NULL;
  g_autoptr(GBytes) bytes = NULL;
  gint64 keep_shape[HP_TENSOR_MAX_NDIM];
  gint64 count;

  if (data->all)
    count = _hp_shape_numel (data->shape, data->ndim);
  else
    count = data->shape[data->dim];

  if (data->mean && count > 0)
    {
      scaled = hp_tensor_scale (grad, 1.0 / (gdouble) count, error);
      if (scaled == NULL)
        return FALSE;
    }
  else
    scaled = g_object_ref (grad);

  if (data->all)
    kept = g_steal_pointer (&scaled);
  else
    {
      memcpy (keep_shape, data->shape, data->ndim * sizeof (gint64));
      keep_shape[data->dim] = 1;
      bytes = hp_tensor_get_bytes (scaled);
      kept = _hp_tensor_new_with_bytes (hp_tensor_get_dtype (scaled),
                                        keep_shape, data->ndim, bytes);
    }

  grad_inputs[0] = _hp_tensor_expand (kept, data->shape, data->ndim, error);
  return grad_inputs[0] != NULL;
}

/* Reduces @self over @dim (or over everything when @all) and records the
 * node. The arguments have been checked. */
static HpTensor *
reduce_op (const gchar *name,
           HpTensor    *self,
           gboolean     mean,
           gboolean     all,
           guint        dim,
           gboolean     keepdim)
{
  guint ndim, out_ndim = 0;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);
  HpDType dtype = hp_tensor_get_dtype (self);
  gint64 out_shape[HP_TENSOR_MAX_NDIM];
  gint64 outer = 1, n, inner = 1;
  ReduceData *data;
  HpTensor *out;

  if (all)
    n = hp_tensor_get_numel (self);
  else
    {
      _hp_shape_split_at_dim (shape, ndim, dim, &outer, &inner);
      n = shape[dim];
      for (guint d = 0; d < ndim; d++)
        {
          if (d != dim)
            out_shape[out_ndim++] = shape[d];
          else if (keepdim)
            out_shape[out_ndim++] = 1;
        }
    }

  out = _hp_tensor_new_uninit (dtype, out_shape, out_ndim);
  /* a mean over no elements divides 0 by 0 and gives NaN */
  reduce_kernel (dtype, _hp_tensor_data (self), _hp_tensor_data (out),
                 outer, n, inner, mean ? (gdouble) n : 1.0);

  data = g_new (ReduceData, 1);
  data->mean = mean;
  data->all = all;
  data->dim = dim;
  data->ndim = ndim;
  memcpy (data->shape, shape, ndim * sizeof (gint64));
  _hp_autograd_record (name, reduce_backward, &self, 1, out, NULL, 0, data, g_free);
  return out;
}

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
  guint d;

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  HP_OP_DISPATCH (error, .kind = HP_OP_SUM, .name = "sum", .inputs = { self }, .n_inputs = 1,
                  .dims = { dim }, .n_dims = 1, .flag = keepdim);

  if (!_hp_normalize_dim ("sum", dim, hp_tensor_get_ndim (self), &d, error))
    return NULL;

  return reduce_op ("sum", self, FALSE, FALSE, d, keepdim);
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

  HP_OP_DISPATCH (error, .kind = HP_OP_SUM_ALL, .name = "sum_all", .inputs = { self },
                  .n_inputs = 1);

  return reduce_op ("sum_all", self, FALSE, TRUE, 0, FALSE);
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
  guint d;

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  HP_OP_DISPATCH (error, .kind = HP_OP_MEAN, .name = "mean", .inputs = { self }, .n_inputs = 1,
                  .dims = { dim }, .n_dims = 1, .flag = keepdim);

  if (!_hp_check_floating ("mean", self, error) ||
      !_hp_normalize_dim ("mean", dim, hp_tensor_get_ndim (self), &d, error))
    return NULL;

  return reduce_op ("mean", self, TRUE, FALSE, d, keepdim);
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

  HP_OP_DISPATCH (error, .kind = HP_OP_MEAN_ALL, .name = "mean_all", .inputs = { self },
                  .n_inputs = 1);

  if (!_hp_check_floating ("mean_all", self, error))
    return NULL;

  return reduce_op ("mean_all", self, TRUE, TRUE, 0, FALSE);
}
