/* hp-tensor-index.c: gather and index_select, and the offset reads they
 * share with repeat
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The kernel checks every index value before it writes anything, so a
 * value out of range leaves no result behind.
 */

#include "config.h"

#include <string.h>

#include "hp-tensor-ops.h"
#include "hp-op-call-private.h"
#include "hp-tensor-private.h"

/* Reading at offsets */

HpTake *
_hp_take_new (HpTensor *input,
              gint64    n)
{
  HpTake *take = g_malloc (sizeof (HpTake) + MAX (n, 1) * sizeof (gint64));
  const gint64 *shape = hp_tensor_get_shape (input, &take->ndim);

  memcpy (take->shape, shape, take->ndim * sizeof (gint64));
  take->n = n;
  return take;
}

#define TAKE_ELEMENTS(T) \
  G_STMT_START { \
    const T *restrict _in = _hp_tensor_data (input); \
    T *restrict _out = _hp_tensor_data (result); \
    for (gint64 _i = 0; _i < take->n; _i++) \
      _out[_i] = _in[take->offsets[_i]]; \
  } G_STMT_END

HpTensor *
_hp_take_run (const HpTake    *take,
              HpTensor        *input,
              const HpOpShape *out)
{
  HpTensor *result = _hp_op_shape_new_uninit (out);

  /* every dtype is 4 or 8 bytes wide: copy bits, whatever they mean */
  if (hp_dtype_get_size (out->dtype) == sizeof (guint32))
    TAKE_ELEMENTS (guint32);
  else
    TAKE_ELEMENTS (guint64);
  return result;
}

/* Output elements that read one input element (repeat's tiles, a
 * repeated index) add up in its gradient */
gboolean
_hp_take_backward (HpAutogradNode  *node,
                   HpTensor       **grad_outputs,
                   HpTensor       **grad_inputs,
                   GError         **error)
{
  const HpTake *take = _hp_op_node_get_data (node);
  HpTensor *grad = grad_outputs[0];
  HpDType dtype = hp_tensor_get_dtype (grad);
  gconstpointer in = _hp_tensor_data (grad);
  g_autofree gdouble *acc = g_new0 (gdouble, MAX (_hp_shape_numel (take->shape, take->ndim), 1));

  for (gint64 i = 0; i < take->n; i++)
    acc[take->offsets[i]] += _hp_load_f64 (in, dtype, i);
  grad_inputs[0] = _hp_tensor_new_from_doubles (dtype, acc, take->shape, take->ndim);
  return TRUE;
}

static gboolean
index_value_error (const gchar  *op,
                   gint64        value,
                   guint         dim,
                   HpTensor     *self,
                   GError      **error)
{
  g_autofree gchar *self_str = _hp_tensor_describe (self);

  g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
               "%s: index %" G_GINT64_FORMAT " is out of range for dim %u of %s",
               op, value, dim, self_str);
  return FALSE;
}

/* Gather */

/* gather (self, index; call->dims[0]): like torch.gather, the index has
 * the dims of self and is no longer in any dim but @dim */
static gboolean
gather_infer (const HpOpCall    *call,
              HpTensor * const  *inputs,
              HpOpInfo          *info,
              GError           **error)
{
  HpTensor *self = inputs[0], *index = inputs[1];
  guint ndim, index_ndim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);
  const gint64 *index_shape = hp_tensor_get_shape (index, &index_ndim);
  gboolean fits;

  if (!_hp_check_dtype ("gather", "index", index, HP_DTYPE_INT64, error) ||
      !_hp_normalize_dim ("gather", call->dims[0], ndim, &info->dim, error))
    return FALSE;

  fits = index_ndim == ndim;
  for (guint d = 0; fits && d < ndim; d++)
    fits = d == info->dim || index_shape[d] <= shape[d];
  if (!fits)
    {
      g_autofree gchar *self_str = _hp_tensor_describe (self);
      g_autofree gchar *index_str = _hp_tensor_describe (index);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "gather: index %s must have the %u dims of self %s and be no "
                   "longer in any dim but %u", index_str, ndim, self_str, info->dim);
      return FALSE;
    }

  _hp_op_shape_set (&info->out[0], hp_tensor_get_dtype (self), index_shape, ndim);
  return TRUE;
}

static gboolean
gather_kernel (const HpOpCall    *call,
               const HpOpInfo    *info,
               HpTensor * const  *inputs,
               HpTensor         **outputs,
               HpOpSaved         *saved,
               GError           **error)
{
  HpTensor *self = inputs[0], *index = inputs[1];
  guint ndim, dim = info->dim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);
  const gint64 *index_shape = info->out[0].shape;
  const gint64 *values = _hp_tensor_data (index);
  gint64 strides[HP_TENSOR_MAX_NDIM], walk[HP_TENSOR_MAX_NDIM];
  gint64 at[HP_TENSOR_MAX_NDIM] = { 0 };
  gint64 n = hp_tensor_get_numel (index), base = 0;
  HpTake *take;

  for (gint64 i = 0; i < n; i++)
    if (values[i] < 0 || values[i] >= shape[dim])
      return index_value_error ("gather", values[i], dim, self, error);

  /* walk the index in order; its position in @dim comes from its value */
  _hp_shape_strides (shape, ndim, strides);
  for (guint d = 0; d < ndim; d++)
    walk[d] = d == dim ? 0 : strides[d];
  take = _hp_take_new (self, n);
  for (gint64 i = 0; i < n; i++)
    {
      take->offsets[i] = base + values[i] * strides[dim];
      for (guint d = ndim; d-- > 0;)
        {
          base += walk[d];
          if (++at[d] < index_shape[d])
            break;
          base -= walk[d] * index_shape[d];
          at[d] = 0;
        }
    }

  outputs[0] = _hp_take_run (take, self, &info->out[0]);
  saved->data = take;
  saved->destroy = g_free;
  return TRUE;
}

static const HpOp gather_op = {
  .name = "gather", .n_outputs = 1,
  .infer = gather_infer, .kernel = gather_kernel, .backward = _hp_take_backward,
  .sharding = HP_OP_SHARDING_ALONG_DIM_ALL, .linear_inputs = HP_OP_INPUT (0),
  .checks_values = TRUE,
};

/**
 * hp_tensor_gather:
 * @self: a [class@Hp.Tensor] of at least one dim
 * @dim: the dim the index values point into; negative values count
 *   from the end
 * @index: an int64 [class@Hp.Tensor] with as many dims as @self, no
 *   longer than @self in any dim but @dim
 * @error: return location for a [struct@GLib.Error]
 *
 * Picks elements of @self along @dim, as torch.gather() does: the result
 * has the shape of @index, and its element at position p is the element
 * of @self at p with the coordinate in @dim replaced by @index[p]. For a
 * matrix and @dim 1, out[i][j] = self[i][index[i][j]].
 *
 * The gradient of @self adds the gradient of each result element at
 * the place it was read from.
 *
 * Returns: (transfer full): the gathered tensor, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if @dim is out of range, @index is not
 *   int64 or holds a value outside [0, size of @dim), or
 *   [HP_ERROR_SHAPE][error@Hp.Error] if the shape of @index does not fit
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_gather (HpTensor  *self,
                  gint       dim,
                  HpTensor  *index,
                  GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (index), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &gather_op, .inputs = { self, index }, .n_inputs = 2,
                     .dims = { dim }, .n_dims = 1);
}

/* Index select */

/* index_select (self, index; call->dims[0]) with a 1-d index */
static gboolean
index_select_infer (const HpOpCall    *call,
                    HpTensor * const  *inputs,
                    HpOpInfo          *info,
                    GError           **error)
{
  HpTensor *self = inputs[0], *index = inputs[1];

  if (!_hp_check_dtype ("index_select", "index", index, HP_DTYPE_INT64, error) ||
      !_hp_normalize_dim ("index_select", call->dims[0], hp_tensor_get_ndim (self),
                          &info->dim, error))
    return FALSE;
  if (hp_tensor_get_ndim (index) != 1)
    {
      g_autofree gchar *index_str = _hp_tensor_describe (index);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "index_select: index must have one dim, got %s", index_str);
      return FALSE;
    }

  _hp_op_shape_like (&info->out[0], self);
  info->out[0].shape[info->dim] = hp_tensor_get_numel (index);
  /* a long index over a large self may select more than a tensor holds */
  if (!_hp_shape_check (info->out[0].shape, info->out[0].ndim, error))
    {
      g_prefix_error (error, "index_select: ");
      return FALSE;
    }
  return TRUE;
}

static gboolean
index_select_kernel (const HpOpCall    *call,
                     const HpOpInfo    *info,
                     HpTensor * const  *inputs,
                     HpTensor         **outputs,
                     HpOpSaved         *saved,
                     GError           **error)
{
  HpTensor *self = inputs[0], *index = inputs[1];
  guint ndim, dim = info->dim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);
  const gint64 *values = _hp_tensor_data (index);
  gint64 m = hp_tensor_get_numel (index), outer, inner, *offsets;
  HpTake *take;

  for (gint64 j = 0; j < m; j++)
    if (values[j] < 0 || values[j] >= shape[dim])
      return index_value_error ("index_select", values[j], dim, self, error);

  /* self is [outer, shape[dim], inner], the result [outer, m, inner] */
  _hp_shape_split_at_dim (shape, ndim, dim, &outer, &inner);
  take = _hp_take_new (self, outer * m * inner);
  offsets = take->offsets;
  for (gint64 o = 0; o < outer; o++)
    for (gint64 j = 0; j < m; j++)
      for (gint64 r = 0; r < inner; r++)
        *offsets++ = (o * shape[dim] + values[j]) * inner + r;

  outputs[0] = _hp_take_run (take, self, &info->out[0]);
  saved->data = take;
  saved->destroy = g_free;
  return TRUE;
}

static const HpOp index_select_op = {
  .name = "index_select", .n_outputs = 1,
  .infer = index_select_infer, .kernel = index_select_kernel, .backward = _hp_take_backward,
  .sharding = HP_OP_SHARDING_ALONG_DIM, .linear_inputs = HP_OP_INPUT (0),
};

/**
 * hp_tensor_index_select:
 * @self: a [class@Hp.Tensor] of at least one dim
 * @dim: the dim to select along; negative values count from the end
 * @index: a one-dim int64 [class@Hp.Tensor] of positions in @dim, in any
 *   order and possibly repeated
 * @error: return location for a [struct@GLib.Error]
 *
 * Copies the slices of @self at the positions @index names along @dim,
 * as torch.index_select() does: the result has the shape of @self with
 * the size of @dim replaced by the length of @index.
 *
 * The gradient of @self adds the gradient of each selected slice at
 * the position it came from.
 *
 * Returns: (transfer full): the selected tensor, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if @dim is out of range, @index is not
 *   int64 or holds a value outside [0, size of @dim), or
 *   [HP_ERROR_SHAPE][error@Hp.Error] if @index does not have one dim or the result
 *   would hold too many elements
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_index_select (HpTensor  *self,
                        gint       dim,
                        HpTensor  *index,
                        GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (index), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &index_select_op, .inputs = { self, index }, .n_inputs = 2,
                     .dims = { dim }, .n_dims = 1);
}
