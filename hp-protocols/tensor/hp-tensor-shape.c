/* hp-tensor-shape.c: ops that move elements around without arithmetic
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-tensor-ops.h"
#include "hp-op-call-private.h"
#include "hp-tensor-private.h"

/* "[1, 0, 2]": how error messages show a list of dims */
static gchar *
dims_to_string (const gint *dims,
                guint       n_dims)
{
  GString *out = g_string_new ("[");

  for (guint i = 0; i < n_dims; i++)
    g_string_append_printf (out, "%s%d", i > 0 ? ", " : "", dims[i]);
  g_string_append_c (out, ']');

  return g_string_free (out, FALSE);
}

/* Copies @rows runs of @run bytes; consecutive runs start @src_pitch bytes
 * apart in @src and @dst_pitch bytes apart in @dst. Narrow, its backward
 * and cat are all this copy with different pitches. */
static void
copy_rows (guint8       *dst,
           gsize         dst_pitch,
           const guint8 *src,
           gsize         src_pitch,
           gint64        rows,
           gsize         run)
{
  if (run == 0)
    return;

  for (gint64 r = 0; r < rows; r++)
    memcpy (dst + r * dst_pitch, src + r * src_pitch, run);
}

/* Permute and transpose */

#define STRIDED_ROW(T) \
  G_STMT_START { \
    const T *restrict _src = (const T *) (in + elem * offset); \
    T *restrict _dst = (T *) (out_data + elem * row * run); \
    for (gint64 _i = 0; _i < run; _i++) \
      _dst[_i] = _src[_i * inner_stride]; \
  } G_STMT_END

/* A new tensor whose dim i is dim @perm[i] of @self. The output is written
 * in order; the input is read through strides. Output dims that are also
 * adjacent in the input merge into one and size-1 dims drop out, so the
 * innermost loop is as long as it can be and becomes a memcpy when it
 * reads the input contiguously. */
static HpTensor *
permute_compute (HpTensor    *self,
                 const guint *perm)
{
  guint ndim;
  const gint64 *in_shape = hp_tensor_get_shape (self, &ndim);
  HpDType dtype = hp_tensor_get_dtype (self);
  gsize elem = hp_dtype_get_size (dtype);
  gint64 in_strides[HP_TENSOR_MAX_NDIM];
  gint64 out_shape[HP_TENSOR_MAX_NDIM];
  gint64 shape[HP_TENSOR_MAX_NDIM];
  gint64 strides[HP_TENSOR_MAX_NDIM];
  gint64 index[HP_TENSOR_MAX_NDIM] = { 0 };
  guint m = 0;
  gint64 run, inner_stride, n_rows, offset = 0;
  const guint8 *in;
  guint8 *out_data;
  HpTensor *out;

  _hp_shape_strides (in_shape, ndim, in_strides);
  for (guint i = 0; i < ndim; i++)
    out_shape[i] = in_shape[perm[i]];

  out = _hp_tensor_new_uninit (dtype, out_shape, ndim);
  if (hp_tensor_get_numel (out) == 0)
    return out;

  for (guint i = 0; i < ndim; i++)
    {
      gint64 size = out_shape[i];
      gint64 stride = in_strides[perm[i]];

      if (size == 1)
        continue;
      if (m > 0 && strides[m - 1] == stride * size)
        {
          shape[m - 1] *= size;
          strides[m - 1] = stride;
        }
      else
        {
          shape[m] = size;
          strides[m] = stride;
          m++;
        }
    }

  run = m > 0 ? shape[m - 1] : 1;
  inner_stride = m > 0 ? strides[m - 1] : 1;
  n_rows = hp_tensor_get_numel (out) / run;
  in = _hp_tensor_data (self);
  out_data = _hp_tensor_data (out);

  for (gint64 row = 0; row < n_rows; row++)
    {
      if (inner_stride == 1)
        memcpy (out_data + elem * row * run, in + elem * offset, elem * run);
      else if (elem == sizeof (guint32))
        STRIDED_ROW (guint32);
      else
        STRIDED_ROW (guint64);

      /* step the index of the dims outside the run */
      for (guint d = m > 0 ? m - 1 : 0; d-- > 0;)
        {
          offset += strides[d];
          if (++index[d] < shape[d])
            break;
          offset -= strides[d] * shape[d];
          index[d] = 0;
        }
    }

  return out;
}

static gboolean
permute_backward (HpAutogradNode  *node,
                  HpTensor       **grad_outputs,
                  HpTensor       **grad_inputs,
                  GError         **error)
{
  const HpOpInfo *info = _hp_op_node_get_info (node);
  guint inverse[HP_TENSOR_MAX_NDIM];

  for (guint i = 0; i < info->out[0].ndim; i++)
    inverse[info->perm[i]] = i;
  grad_inputs[0] = permute_compute (grad_outputs[0], inverse);
  return TRUE;
}

static gboolean
permute_kernel (const HpOpCall    *call,
                const HpOpInfo    *info,
                HpTensor * const  *inputs,
                HpTensor         **outputs,
                HpOpSaved         *saved,
                GError           **error)
{
  outputs[0] = permute_compute (inputs[0], info->perm);
  return TRUE;
}

static void
set_permuted_shape (HpOpInfo *info,
                    HpTensor *self)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);

  info->out[0].dtype = hp_tensor_get_dtype (self);
  info->out[0].ndim = ndim;
  for (guint i = 0; i < ndim; i++)
    info->out[0].shape[i] = shape[info->perm[i]];
}

/* transpose (call->dims[0], call->dims[1]) */
static gboolean
transpose_infer (const HpOpCall    *call,
                 HpTensor * const  *inputs,
                 HpOpInfo          *info,
                 GError           **error)
{
  guint ndim = hp_tensor_get_ndim (inputs[0]), d0, d1;

  if (!_hp_normalize_dim ("transpose", call->dims[0], ndim, &d0, error) ||
      !_hp_normalize_dim ("transpose", call->dims[1], ndim, &d1, error))
    return FALSE;
  for (guint i = 0; i < ndim; i++)
    info->perm[i] = i;
  info->perm[d0] = d1;
  info->perm[d1] = d0;
  set_permuted_shape (info, inputs[0]);
  return TRUE;
}

static gboolean
permute_count_error (const gint  *dims,
                     guint        n_dims,
                     HpTensor    *self,
                     GError     **error)
{
  g_autofree gchar *dims_str = dims_to_string (dims, n_dims);
  g_autofree gchar *self_str = _hp_tensor_describe (self);

  g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
               "permute: dims %s name %u dims, but the tensor %s has %u",
               dims_str, n_dims, self_str, hp_tensor_get_ndim (self));
  return FALSE;
}

/* permute (call->dims, call->n_dims) */
static gboolean
permute_infer (const HpOpCall    *call,
               HpTensor * const  *inputs,
               HpOpInfo          *info,
               GError           **error)
{
  HpTensor *self = inputs[0];
  guint ndim = hp_tensor_get_ndim (self);
  gboolean seen[HP_TENSOR_MAX_NDIM] = { FALSE };

  if (call->n_dims != ndim)
    return permute_count_error (call->dims, call->n_dims, self, error);

  for (guint i = 0; i < ndim; i++)
    {
      gint n = (gint) ndim;
      gint d = call->dims[i];

      if (d < -n || d >= n || seen[d < 0 ? d + n : d])
        {
          g_autofree gchar *dims_str = dims_to_string (call->dims, call->n_dims);
          g_autofree gchar *self_str = _hp_tensor_describe (self);

          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "permute: dims %s are not a permutation of the %u dims of %s",
                       dims_str, ndim, self_str);
          return FALSE;
        }
      info->perm[i] = (guint) (d < 0 ? d + n : d);
      seen[info->perm[i]] = TRUE;
    }
  set_permuted_shape (info, self);
  return TRUE;
}

static const HpOp transpose_op = {
  .name = "transpose", .n_outputs = 1,
  .infer = transpose_infer, .kernel = permute_kernel, .backward = permute_backward,
  .sharding = HP_OP_SHARDING_PERMUTE, .moves_partials = TRUE,
};

static const HpOp permute_op = {
  .name = "permute", .n_outputs = 1,
  .infer = permute_infer, .kernel = permute_kernel, .backward = permute_backward,
  .sharding = HP_OP_SHARDING_PERMUTE, .moves_partials = TRUE,
};

/**
 * hp_tensor_transpose:
 * @self: a [class@Hp.Tensor]
 * @dim0: a dim; negative values count from the end
 * @dim1: another dim; negative values count from the end
 * @error: return location for a [struct@GLib.Error]
 *
 * Swaps two dims, copying the elements into the new order. When @dim0
 * and @dim1 name the same dim the result is a copy of @self.
 *
 * Returns: (transfer full): the transposed tensor, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if a dim is out of range
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_transpose (HpTensor  *self,
                     gint       dim0,
                     gint       dim1,
                     GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &transpose_op, .inputs = { self }, .n_inputs = 1,
                     .dims = { dim0, dim1 }, .n_dims = 2);
}

/**
 * hp_tensor_permute:
 * @self: a [class@Hp.Tensor]
 * @dims: (array length=n_dims) (nullable): for each dim of the result, the
 *   dim of @self it takes; negative values count from the end
 * @n_dims: the number of entries in @dims, which must be the number of
 *   dims of @self
 * @error: return location for a [struct@GLib.Error]
 *
 * Reorders the dims of @self, copying the elements into the new order:
 * dim i of the result is dim @dims[i] of @self.
 *
 * Returns: (transfer full): the permuted tensor, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if @dims is not a permutation of the dims
 *   of @self
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_permute (HpTensor    *self,
                   const gint  *dims,
                   guint        n_dims,
                   GError     **error)
{
  HpOpCall call = { .op = &permute_op, .inputs = { self }, .n_inputs = 1, .n_dims = n_dims };

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (dims != NULL || n_dims == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* a tensor has no more dims than the call can hold */
  if (n_dims > HP_TENSOR_MAX_NDIM)
    {
      permute_count_error (dims, n_dims, self, error);
      return NULL;
    }
  if (n_dims > 0)
    memcpy (call.dims, dims, n_dims * sizeof (gint));
  return _hp_op_call (&call, error);
}

/* Reshape */

typedef struct
{
  guint ndim;
  gint64 shape[HP_TENSOR_MAX_NDIM];
} ReshapeData;

/* A tensor of @shape sharing the buffer of @self (same element count) */
static HpTensor *
reshape_share (HpTensor     *self,
               const gint64 *shape,
               guint         ndim)
{
  g_autoptr(GBytes) bytes = hp_tensor_get_bytes (self);

  return _hp_tensor_new_with_bytes (hp_tensor_get_dtype (self), shape, ndim, bytes);
}

static gboolean
reshape_backward (HpAutogradNode  *node,
                  HpTensor       **grad_outputs,
                  HpTensor       **grad_inputs,
                  GError         **error)
{
  const ReshapeData *data = _hp_op_node_get_data (node);

  grad_inputs[0] = reshape_share (grad_outputs[0], data->shape, data->ndim);
  return TRUE;
}

/* reshape (call->sizes, call->n_sizes); info->out[0] has the -1 resolved */
static gboolean
reshape_infer (const HpOpCall    *call,
               HpTensor * const  *inputs,
               HpOpInfo          *info,
               GError           **error)
{
  HpTensor *self = inputs[0];
  const gint64 *shape = call->sizes;
  guint ndim = call->n_sizes;
  guint in_ndim;
  const gint64 *in_shape = hp_tensor_get_shape (self, &in_ndim);
  gint64 numel = hp_tensor_get_numel (self), rest = 1;
  gint64 *new_shape = info->out[0].shape;
  gint infer = -1;
  gboolean rest_is_zero = FALSE;

  for (guint i = 0; i < ndim; i++)
    {
      if (shape[i] == -1 && infer < 0)
        infer = (gint) i;
      else if (shape[i] < 0)
        {
          g_autofree gchar *shape_str = _hp_shape_to_string (shape, ndim);

          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "reshape: shape %s may hold one -1 and no other negative size",
                       shape_str);
          return FALSE;
        }
      else if (shape[i] == 0)
        rest_is_zero = TRUE;
      else
        /* past @numel the product is wrong anyway: saturate at @numel + 1
         * rather than overflow */
        rest = rest > numel / shape[i] ? numel + 1 : rest * shape[i];
      new_shape[i] = shape[i];
    }
  if (rest_is_zero)
    rest = 0;

  if (infer >= 0)
    {
      if (rest == 0)
        {
          g_autofree gchar *in_str = _hp_shape_to_string (in_shape, in_ndim);
          g_autofree gchar *shape_str = _hp_shape_to_string (shape, ndim);

          g_set_error (error, HP_ERROR,
                       numel == 0 ? HP_ERROR_INVALID_ARGUMENT : HP_ERROR_SHAPE,
                       "reshape: cannot reshape %s to %s: the -1 %s", in_str, shape_str,
                       numel == 0 ? "could be any size" : "has no size that fits");
          return FALSE;
        }
      new_shape[infer] = numel / rest;
      rest *= new_shape[infer];
    }

  if (rest != numel)
    {
      g_autofree gchar *in_str = _hp_shape_to_string (in_shape, in_ndim);
      g_autofree gchar *shape_str = _hp_shape_to_string (shape, ndim);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "reshape: cannot reshape %s (%" G_GINT64_FORMAT " elements) to %s",
                   in_str, numel, shape_str);
      return FALSE;
    }

  info->out[0].dtype = hp_tensor_get_dtype (self);
  info->out[0].ndim = ndim;
  return TRUE;
}

static gboolean
reshape_kernel (const HpOpCall    *call,
                const HpOpInfo    *info,
                HpTensor * const  *inputs,
                HpTensor         **outputs,
                HpOpSaved         *saved,
                GError           **error)
{
  guint in_ndim;
  const gint64 *in_shape = hp_tensor_get_shape (inputs[0], &in_ndim);
  ReshapeData *data = g_new (ReshapeData, 1);

  outputs[0] = reshape_share (inputs[0], info->out[0].shape, info->out[0].ndim);
  data->ndim = in_ndim;
  memcpy (data->shape, in_shape, in_ndim * sizeof (gint64));
  saved->data = data;
  saved->destroy = g_free;
  return TRUE;
}

static const HpOp reshape_op = {
  .name = "reshape", .n_outputs = 1,
  .infer = reshape_infer, .kernel = reshape_kernel, .backward = reshape_backward,
  .sharding = HP_OP_SHARDING_RESHAPE, .moves_partials = TRUE,
};

/**
 * hp_tensor_reshape:
 * @self: a [class@Hp.Tensor]
 * @shape: (array length=ndim) (nullable): the new shape; at most one size
 *   may be -1, which is inferred from the element count
 * @ndim: the number of dims of the new shape
 * @error: return location for a [struct@GLib.Error]
 *
 * Gives the elements of @self a new shape with the same number of
 * elements, in the same row-major order. No element is copied: the
 * result shares the buffer of @self (tensors never change once made, so
 * sharing is safe).
 *
 * A -1 cannot be inferred when the other sizes multiply to zero; that is
 * an error ([HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when @self is empty too, since
 * any size would do, [HP_ERROR_SHAPE][error@Hp.Error] otherwise).
 *
 * Returns: (transfer full): the reshaped tensor, or %NULL with
 *   [HP_ERROR_SHAPE][error@Hp.Error] if the element counts differ or
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for more than one -1 or another negative
 *   size
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_reshape (HpTensor      *self,
                   const gint64  *shape,
                   guint          ndim,
                   GError       **error)
{
  HpOpCall call = { .op = &reshape_op, .inputs = { self }, .n_inputs = 1, .n_sizes = ndim };

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (shape != NULL || ndim == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (ndim > HP_TENSOR_MAX_NDIM)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "reshape: a tensor has at most %d dims, not %u",
                   HP_TENSOR_MAX_NDIM, ndim);
      return NULL;
    }
  if (ndim > 0)
    memcpy (call.sizes, shape, ndim * sizeof (gint64));
  return _hp_op_call (&call, error);
}

/* Narrow */

/* The first index narrow keeps, from its (possibly negative) start */
static gint64
narrow_first (const HpOpCall *call,
              gint64          size)
{
  return call->sizes[0] < 0 ? call->sizes[0] + size : call->sizes[0];
}

static gboolean
narrow_backward (HpAutogradNode  *node,
                 HpTensor       **grad_outputs,
                 HpTensor       **grad_inputs,
                 GError         **error)
{
  guint dim = _hp_op_node_get_info (node)->dim;
  const gint64 *size = _hp_op_node_get_data (node);
  gint64 first = narrow_first (_hp_op_node_get_call (node), *size);
  HpTensor *grad = grad_outputs[0];
  guint ndim;
  const gint64 *grad_shape = hp_tensor_get_shape (grad, &ndim);
  gsize elem = hp_dtype_get_size (hp_tensor_get_dtype (grad));
  gint64 shape[HP_TENSOR_MAX_NDIM];
  gint64 outer, inner, length = grad_shape[dim];
  HpTensor *out;

  memcpy (shape, grad_shape, ndim * sizeof (gint64));
  shape[dim] = *size;
  _hp_shape_split_at_dim (shape, ndim, dim, &outer, &inner);

  out = hp_tensor_new_zeros (hp_tensor_get_dtype (grad), shape, ndim);
  copy_rows ((guint8 *) _hp_tensor_data (out) + elem * first * inner,
             elem * *size * inner,
             _hp_tensor_data (grad), elem * length * inner,
             outer, elem * length * inner);

  grad_inputs[0] = out;
  return TRUE;
}

/* narrow (call->dims[0]; start and length in call->sizes) */
static gboolean
narrow_infer (const HpOpCall    *call,
              HpTensor * const  *inputs,
              HpOpInfo          *info,
              GError           **error)
{
  guint ndim;
  const gint64 *in_shape = hp_tensor_get_shape (inputs[0], &ndim);
  gint64 start = call->sizes[0], length = call->sizes[1], size, first;

  if (!_hp_normalize_dim ("narrow", call->dims[0], ndim, &info->dim, error))
    return FALSE;

  size = in_shape[info->dim];
  first = narrow_first (call, size);
  if (first < 0 || first > size || length < 0 || length > size - first)
    {
      g_autofree gchar *shape_str = _hp_shape_to_string (in_shape, ndim);

      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "narrow: start %" G_GINT64_FORMAT " and length %" G_GINT64_FORMAT
                   " do not fit dim %d of size %" G_GINT64_FORMAT " (shape %s)",
                   start, length, call->dims[0], size, shape_str);
      return FALSE;
    }

  _hp_op_shape_like (&info->out[0], inputs[0]);
  info->out[0].shape[info->dim] = length;
  return TRUE;
}

static gboolean
narrow_kernel (const HpOpCall    *call,
               const HpOpInfo    *info,
               HpTensor * const  *inputs,
               HpTensor         **outputs,
               HpOpSaved         *saved,
               GError           **error)
{
  HpTensor *self = inputs[0];
  guint ndim, d = info->dim;
  const gint64 *in_shape = hp_tensor_get_shape (self, &ndim);
  gint64 length = call->sizes[1], size = in_shape[d], first = narrow_first (call, size);
  gint64 outer, inner;
  gsize elem = hp_dtype_get_size (hp_tensor_get_dtype (self));

  _hp_shape_split_at_dim (in_shape, ndim, d, &outer, &inner);
  outputs[0] = _hp_op_shape_new_uninit (&info->out[0]);
  copy_rows (_hp_tensor_data (outputs[0]), elem * length * inner,
             (const guint8 *) _hp_tensor_data (self) + elem * first * inner,
             elem * size * inner,
             outer, elem * length * inner);

  saved->data = g_memdup2 (&size, sizeof size);
  saved->destroy = g_free;
  return TRUE;
}

static const HpOp narrow_op = {
  .name = "narrow", .n_outputs = 1,
  .infer = narrow_infer, .kernel = narrow_kernel, .backward = narrow_backward,
  .sharding = HP_OP_SHARDING_ALONG_DIM_ALL,
};

/**
 * hp_tensor_narrow:
 * @self: a [class@Hp.Tensor]
 * @dim: the dim to narrow; negative values count from the end
 * @start: the first index kept; negative values count from the end
 * @length: how many indices to keep
 * @error: return location for a [struct@GLib.Error]
 *
 * Copies the part of @self whose index in @dim runs from @start to
 * @start + @length - 1, as torch.narrow() selects it. A @length of 0
 * gives an empty tensor.
 *
 * Returns: (transfer full): the narrowed tensor, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if @dim is out of range or @start and
 *   @length do not lie within it
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_narrow (HpTensor  *self,
                  gint       dim,
                  gint64     start,
                  gint64     length,
                  GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &narrow_op, .inputs = { self }, .n_inputs = 1,
                     .dims = { dim }, .n_dims = 1, .sizes = { start, length }, .n_sizes = 2);
}

/* Cat */

typedef struct
{
  guint dim;
  guint n;
  gint64 sizes[];  /* of @dim in each input */
} CatData;

static gboolean
cat_backward (HpAutogradNode  *node,
              HpTensor       **grad_outputs,
              HpTensor       **grad_inputs,
              GError         **error)
{
  const CatData *data = _hp_op_node_get_data (node);
  gint64 offset = 0;

  for (guint i = 0; i < data->n; i++)
    {
      if (_hp_autograd_node_needs_input_grad (node, i))
        {
          grad_inputs[i] = hp_tensor_narrow (grad_outputs[0], (gint) data->dim,
                                             offset, data->sizes[i], error);
          if (grad_inputs[i] == NULL)
            return FALSE;
        }
      offset += data->sizes[i];
    }

  return TRUE;
}

/* Sets an error unless @other may be joined to @first along @dim */
static gboolean
cat_check (HpTensor  *first,
           HpTensor  *other,
           guint      index,
           guint      dim,
           GError   **error)
{
  guint ndim, other_ndim;
  const gint64 *shape = hp_tensor_get_shape (first, &ndim);
  const gint64 *other_shape = hp_tensor_get_shape (other, &other_ndim);
  gboolean fits = ndim == other_ndim;

  if (hp_tensor_get_dtype (first) != hp_tensor_get_dtype (other))
    {
      g_autofree gchar *first_str = _hp_tensor_describe (first);
      g_autofree gchar *other_str = _hp_tensor_describe (other);

      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "cat: tensor %u is %s but tensor 0 is %s; dtypes must match",
                   index, other_str, first_str);
      return FALSE;
    }

  for (guint d = 0; fits && d < ndim; d++)
    fits = d == dim || shape[d] == other_shape[d];

  if (!fits)
    {
      g_autofree gchar *first_str = _hp_shape_to_string (shape, ndim);
      g_autofree gchar *other_str = _hp_shape_to_string (other_shape, other_ndim);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "cat: tensor %u has shape %s but tensor 0 has shape %s; "
                   "they must match in every dim but %u",
                   index, other_str, first_str, dim);
      return FALSE;
    }

  return TRUE;
}

/* cat (call->tensors along call->dims[0]) */
static gboolean
cat_infer (const HpOpCall    *call,
           HpTensor * const  *inputs,
           HpOpInfo          *info,
           GError           **error)
{
  guint n = call->tensors->len;

  if (n == 0)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                           "cat: needs at least one tensor");
      return FALSE;
    }
  if (!_hp_normalize_dim ("cat", call->dims[0], hp_tensor_get_ndim (inputs[0]), &info->dim, error))
    return FALSE;

  _hp_op_shape_like (&info->out[0], inputs[0]);
  for (guint i = 1; i < n; i++)
    {
      if (!cat_check (inputs[0], inputs[i], i, info->dim, error))
        return FALSE;
      info->out[0].shape[info->dim] += hp_tensor_get_shape (inputs[i], NULL)[info->dim];
    }
  return TRUE;
}

static gboolean
cat_kernel (const HpOpCall    *call,
            const HpOpInfo    *info,
            HpTensor * const  *inputs,
            HpTensor         **outputs,
            HpOpSaved         *saved,
            GError           **error)
{
  guint n = call->tensors->len, d = info->dim;
  const gint64 *shape = info->out[0].shape;
  gsize elem = hp_dtype_get_size (info->out[0].dtype);
  gint64 outer, inner, offset = 0;
  CatData *data = g_malloc (sizeof (CatData) + n * sizeof (gint64));
  guint8 *out_data;

  outputs[0] = _hp_op_shape_new_uninit (&info->out[0]);
  out_data = _hp_tensor_data (outputs[0]);
  _hp_shape_split_at_dim (shape, info->out[0].ndim, d, &outer, &inner);

  data->dim = d;
  data->n = n;
  for (guint i = 0; i < n; i++)
    {
      gint64 size = hp_tensor_get_shape (inputs[i], NULL)[d];

      copy_rows (out_data + elem * offset * inner, elem * shape[d] * inner,
                 _hp_tensor_data (inputs[i]), elem * size * inner,
                 outer, elem * size * inner);
      data->sizes[i] = size;
      offset += size;
    }

  saved->data = data;
  saved->destroy = g_free;
  return TRUE;
}

static const HpOp cat_op = {
  .name = "cat", .n_outputs = 1,
  .infer = cat_infer, .kernel = cat_kernel, .backward = cat_backward,
  .sharding = HP_OP_SHARDING_ALONG_DIM_ALL,
};

/**
 * hp_tensor_cat:
 * @tensors: (element-type HpTensor): the tensors to join, at least one
 * @dim: the dim to join along; negative values count from the end
 * @error: return location for a [struct@GLib.Error]
 *
 * Joins tensors along an existing dim, in order. All tensors must have
 * the same dtype and number of dims and the same size in every dim but
 * @dim; tensors of size 0 in @dim are allowed and add nothing.
 *
 * Returns: (transfer full): the joined tensor, or %NULL with
 *   [HP_ERROR_SHAPE][error@Hp.Error] if the shapes do not fit or
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if @tensors is empty, the dtypes differ or
 *   @dim is out of range
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_cat (GPtrArray  *tensors,
               gint        dim,
               GError    **error)
{
  g_return_val_if_fail (tensors != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  for (guint i = 0; i < tensors->len; i++)
    g_return_val_if_fail (HP_IS_TENSOR (g_ptr_array_index (tensors, i)), NULL);

  return HP_OP_CALL (error, .op = &cat_op, .tensors = tensors, .dims = { dim }, .n_dims = 1);
}
