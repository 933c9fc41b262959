/* hp-tensor-layout.c: expand, repeat, tril and triu
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-tensor-ops.h"
#include "hp-op-call-private.h"
#include "hp-tensor-private.h"

/* Expand */

typedef struct
{
  guint ndim;
  gint64 shape[HP_TENSOR_MAX_NDIM];
} ExpandData;

/* The copies of an element add up in its gradient */
static gboolean
expand_backward (HpAutogradNode  *node,
                 HpTensor       **grad_outputs,
                 HpTensor       **grad_inputs,
                 GError         **error)
{
  const ExpandData *data = _hp_op_node_get_data (node);

  grad_inputs[0] = _hp_tensor_sum_to_shape (grad_outputs[0], data->shape, data->ndim, error);
  return grad_inputs[0] != NULL;
}

static gboolean
expand_error (HpTensor      *self,
              const gint64  *shape,
              guint          ndim,
              gint           code,
              const gchar   *why,
              GError       **error)
{
  g_autofree gchar *self_str = _hp_tensor_describe (self);
  g_autofree gchar *shape_str = _hp_shape_to_string (shape, ndim);

  g_set_error (error, HP_ERROR, code, "expand: cannot expand %s to %s: %s",
               self_str, shape_str, why);
  return FALSE;
}

/* expand (call->sizes, call->n_sizes): info->out[0] has the -1 resolved */
static gboolean
expand_infer (const HpOpCall    *call,
              HpTensor * const  *inputs,
              HpOpInfo          *info,
              GError           **error)
{
  HpTensor *self = inputs[0];
  guint ndim, n = call->n_sizes, lead;
  const gint64 *in_shape = hp_tensor_get_shape (self, &ndim);
  gint64 *shape = info->out[0].shape;

  if (n < ndim)
    return expand_error (self, call->sizes, n, HP_ERROR_SHAPE, "the shape has fewer dims", error);

  lead = n - ndim;
  for (guint o = 0; o < n; o++)
    {
      gint64 size = call->sizes[o];

      if (o < lead && size < 0)
        return expand_error (self, call->sizes, n, HP_ERROR_INVALID_ARGUMENT,
                             "a new leading dim needs a size that is not negative", error);
      if (o >= lead && size == -1)
        size = in_shape[o - lead];
      else if (size < 0)
        return expand_error (self, call->sizes, n, HP_ERROR_INVALID_ARGUMENT,
                             "a size is negative and not -1", error);
      else if (o >= lead && in_shape[o - lead] != size && in_shape[o - lead] != 1)
        return expand_error (self, call->sizes, n, HP_ERROR_SHAPE,
                             "only dims of size 1 expand", error);
      shape[o] = size;
    }
  if (!_hp_shape_check (shape, n, error))
    {
      g_prefix_error (error, "expand: ");
      return FALSE;
    }

  info->out[0].dtype = hp_tensor_get_dtype (self);
  info->out[0].ndim = n;
  return TRUE;
}

static gboolean
expand_kernel (const HpOpCall    *call,
               const HpOpInfo    *info,
               HpTensor * const  *inputs,
               HpTensor         **outputs,
               HpOpSaved         *saved,
               GError           **error)
{
  ExpandData *data = g_new (ExpandData, 1);
  const gint64 *in_shape = hp_tensor_get_shape (inputs[0], &data->ndim);

  memcpy (data->shape, in_shape, data->ndim * sizeof (gint64));
  saved->data = data;
  saved->destroy = g_free;
  outputs[0] = _hp_tensor_expand (inputs[0], info->out[0].shape, info->out[0].ndim, error);
  return outputs[0] != NULL;
}

static const HpOp expand_op = {
  .name = "expand", .n_outputs = 1,
  .infer = expand_infer, .kernel = expand_kernel, .backward = expand_backward,
  .sharding = HP_OP_SHARDING_EXPAND, .moves_partials = TRUE,
};

/**
 * hp_tensor_expand:
 * @self: a [class@Hp.Tensor]
 * @shape: (array length=ndim) (nullable): the new shape, with at least
 *   the dims of @self; -1 keeps the size of a dim of @self
 * @ndim: the number of dims of the new shape
 * @error: return location for a [struct@GLib.Error]
 *
 * Repeats @self along its dims of size 1 and along new leading dims, as
 * torch.Tensor.expand() does: the trailing dims of @shape match the dims
 * of @self, each either of the same size (or -1) or grown from size 1.
 * Unlike torch the result is a new tensor holding every copy, not a
 * view.
 *
 * The gradient of @self sums the gradient over the copies.
 *
 * Returns: (transfer full): the expanded tensor, or %NULL with
 *   [HP_ERROR_SHAPE][error@Hp.Error] if @shape has fewer dims than @self, would expand a
 *   dim whose size is not 1 or holds too many elements, or
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for a negative size other than a -1 on
 *   a dim of @self
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_expand (HpTensor      *self,
                  const gint64  *shape,
                  guint          ndim,
                  GError       **error)
{
  HpOpCall call = { .op = &expand_op, .inputs = { self }, .n_inputs = 1, .n_sizes = ndim };

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (shape != NULL || ndim == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (ndim > HP_TENSOR_MAX_NDIM)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "expand: a tensor has at most %d dims, not %u", HP_TENSOR_MAX_NDIM, ndim);
      return NULL;
    }
  if (ndim > 0)
    memcpy (call.sizes, shape, ndim * sizeof (gint64));
  return _hp_op_call (&call, error);
}

/* Repeat */

static gboolean
repeat_error (HpTensor      *self,
              const gint64  *repeats,
              guint          n,
              gint           code,
              const gchar   *why,
              GError       **error)
{
  g_autofree gchar *self_str = _hp_tensor_describe (self);
  g_autofree gchar *repeats_str = _hp_shape_to_string (repeats, n);

  g_set_error (error, HP_ERROR, code, "repeat: cannot repeat %s by %s: %s",
               self_str, repeats_str, why);
  return FALSE;
}

/* The shape of @self with 1s in front, to @n dims */
static void
padded_shape (HpTensor *self,
              guint     n,
              gint64   *padded)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);

  for (guint o = 0; o < n; o++)
    padded[o] = o < n - ndim ? 1 : shape[o - (n - ndim)];
}

/* repeat (call->sizes, call->n_sizes): one count per dim, new leading
 * dims first */
static gboolean
repeat_infer (const HpOpCall    *call,
              HpTensor * const  *inputs,
              HpOpInfo          *info,
              GError           **error)
{
  HpTensor *self = inputs[0];
  guint n = call->n_sizes;
  gint64 *shape = info->out[0].shape;
  g_autoptr(GError) too_big = NULL;

  if (n < hp_tensor_get_ndim (self))
    return repeat_error (self, call->sizes, n, HP_ERROR_INVALID_ARGUMENT,
                         "needs a count for every dim", error);

  padded_shape (self, n, shape);
  for (guint o = 0; o < n; o++)
    {
      if (call->sizes[o] < 0)
        return repeat_error (self, call->sizes, n, HP_ERROR_INVALID_ARGUMENT,
                             "a count is negative", error);
      if (!g_uint64_checked_mul ((guint64 *) &shape[o], (guint64) shape[o],
                                 (guint64) call->sizes[o]) ||
          shape[o] < 0)
        return repeat_error (self, call->sizes, n, HP_ERROR_SHAPE,
                             "the result would hold too many elements", error);
    }
  if (!_hp_shape_check (shape, n, &too_big))
    return repeat_error (self, call->sizes, n, HP_ERROR_SHAPE,
                         "the result would hold too many elements", error);

  info->out[0].dtype = hp_tensor_get_dtype (self);
  info->out[0].ndim = n;
  return TRUE;
}

static gboolean
repeat_kernel (const HpOpCall    *call,
               const HpOpInfo    *info,
               HpTensor * const  *inputs,
               HpTensor         **outputs,
               HpOpSaved         *saved,
               GError           **error)
{
  guint n = info->out[0].ndim;
  const gint64 *shape = info->out[0].shape;
  gint64 in_shape[HP_TENSOR_MAX_NDIM], strides[HP_TENSOR_MAX_NDIM];
  gint64 at[HP_TENSOR_MAX_NDIM] = { 0 }, in_at[HP_TENSOR_MAX_NDIM] = { 0 };
  gint64 numel = _hp_shape_numel (shape, n), offset = 0;
  HpTake *take = _hp_take_new (inputs[0], numel);

  /* walk the result in order; the input coordinate wraps around at the
   * input's size, once per tile */
  padded_shape (inputs[0], n, in_shape);
  _hp_shape_strides (in_shape, n, strides);
  for (gint64 i = 0; i < numel; i++)
    {
      take->offsets[i] = offset;
      for (guint d = n; d-- > 0;)
        {
          offset += strides[d];
          if (++in_at[d] == in_shape[d])
            {
              offset -= strides[d] * in_shape[d];
              in_at[d] = 0;
            }
          if (++at[d] < shape[d])
            break;
          at[d] = 0;
        }
    }

  outputs[0] = _hp_take_run (take, inputs[0], &info->out[0]);
  saved->data = take;
  saved->destroy = g_free;
  return TRUE;
}

static const HpOp repeat_op = {
  .name = "repeat", .n_outputs = 1,
  .infer = repeat_infer, .kernel = repeat_kernel, .backward = _hp_take_backward,
  .sharding = HP_OP_SHARDING_POINTWISE, .moves_partials = TRUE,
};

/**
 * hp_tensor_repeat:
 * @self: a [class@Hp.Tensor]
 * @repeats: (array length=n_repeats) (nullable): how many times to
 *   repeat each dim, at least one count per dim of @self; extra counts
 *   in front add new leading dims
 * @n_repeats: the number of counts
 * @error: return location for a [struct@GLib.Error]
 *
 * Tiles @self, as torch.Tensor.repeat() does: @self, given leading dims
 * of size 1 up to @n_repeats dims, is repeated @repeats[i] times along
 * dim i. A count of 0 gives an empty dim.
 *
 * The gradient of @self sums the gradient over the tiles.
 *
 * Returns: (transfer full): the tiled tensor, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for fewer counts than dims or a negative
 *   count, or [HP_ERROR_SHAPE][error@Hp.Error] if the result would hold too many
 *   elements
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_repeat (HpTensor      *self,
                  const gint64  *repeats,
                  guint          n_repeats,
                  GError       **error)
{
  HpOpCall call = { .op = &repeat_op, .inputs = { self }, .n_inputs = 1, .n_sizes = n_repeats };

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (repeats != NULL || n_repeats == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (n_repeats > HP_TENSOR_MAX_NDIM)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "repeat: a tensor has at most %d dims, not %u", HP_TENSOR_MAX_NDIM, n_repeats);
      return NULL;
    }
  if (n_repeats > 0)
    memcpy (call.sizes, repeats, n_repeats * sizeof (gint64));
  return _hp_op_call (&call, error);
}

/* Tril and triu */

typedef enum
{
  TRI_LOWER,
  TRI_UPPER,
} TriPart;

/* A copy of @self with the elements outside the part zeroed: in each
 * matrix of the last two dims, tril keeps column j of row i when
 * j - i <= @diagonal, triu when j - i >= @diagonal */
static HpTensor *
tri_compute (HpTensor *self,
             TriPart   part,
             gint64    diagonal)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);
  gint64 rows = shape[ndim - 2], cols = shape[ndim - 1];
  /* past the matrix every diagonal keeps all or nothing: clamping keeps
   * the sums below from overflowing */
  gint64 diag = CLAMP (diagonal, -rows, cols);
  gint64 numel = hp_tensor_get_numel (self);
  gsize elem = hp_dtype_get_size (hp_tensor_get_dtype (self));
  HpTensor *out = _hp_tensor_new_uninit (hp_tensor_get_dtype (self), shape, ndim);
  guint8 *data = _hp_tensor_data (out);

  if (numel == 0)
    return out;
  memcpy (data, _hp_tensor_data (self), numel * elem);
  for (gint64 m = 0; m < numel / (rows * cols); m++)
    for (gint64 i = 0; i < rows; i++)
      {
        guint8 *row = data + elem * (m * rows + i) * cols;
        /* the kept columns of row i are [first, last) */
        gint64 first = part == TRI_UPPER ? CLAMP (i + diag, 0, cols) : 0;
        gint64 last = part == TRI_LOWER ? CLAMP (i + diag + 1, 0, cols) : cols;

        memset (row, 0, elem * first);
        memset (row + elem * last, 0, elem * (cols - last));
      }

  return out;
}

/* The gradient is masked the same way */
static gboolean
tri_backward (HpAutogradNode  *node,
              HpTensor       **grad_outputs,
              HpTensor       **grad_inputs,
              GError         **error)
{
  const HpOpCall *call = _hp_op_node_get_call (node);

  grad_inputs[0] = tri_compute (grad_outputs[0], call->op->variant, call->sizes[0]);
  return TRUE;
}

/* tril and triu (call->sizes[0]: the diagonal) */
static gboolean
tri_infer (const HpOpCall    *call,
           HpTensor * const  *inputs,
           HpOpInfo          *info,
           GError           **error)
{
  if (hp_tensor_get_ndim (inputs[0]) < 2)
    {
      g_autofree gchar *self_str = _hp_tensor_describe (inputs[0]);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "%s: needs a tensor of at least 2 dims, got %s", call->op->name, self_str);
      return FALSE;
    }
  _hp_op_shape_like (&info->out[0], inputs[0]);
  return TRUE;
}

static gboolean
tri_kernel (const HpOpCall    *call,
            const HpOpInfo    *info,
            HpTensor * const  *inputs,
            HpTensor         **outputs,
            HpOpSaved         *saved,
            GError           **error)
{
  outputs[0] = tri_compute (inputs[0], call->op->variant, call->sizes[0]);
  return TRUE;
}

static const HpOp tril_op = {
  .name = "tril", .variant = TRI_LOWER, .n_outputs = 1,
  .infer = tri_infer, .kernel = tri_kernel, .backward = tri_backward,
  .sharding = HP_OP_SHARDING_BATCHED_MATRIX, .linear_inputs = HP_OP_INPUT (0),
};

static const HpOp triu_op = {
  .name = "triu", .variant = TRI_UPPER, .n_outputs = 1,
  .infer = tri_infer, .kernel = tri_kernel, .backward = tri_backward,
  .sharding = HP_OP_SHARDING_BATCHED_MATRIX, .linear_inputs = HP_OP_INPUT (0),
};

/**
 * hp_tensor_tril:
 * @self: a [class@Hp.Tensor] of at least 2 dims
 * @diagonal: which diagonal bounds the kept part: 0 the main one,
 *   positive values above it, negative values below it
 * @error: return location for a [struct@GLib.Error]
 *
 * Keeps the lower triangle of each matrix of the last two dims of @self
 * and zeroes the rest, as torch.tril() does: element [i, j] is kept when
 * j - i <= @diagonal. The gradient is masked alike.
 *
 * Returns: (transfer full): the lower triangle, or %NULL with
 *   [HP_ERROR_SHAPE][error@Hp.Error] if @self has fewer than 2 dims
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_tril (HpTensor  *self,
                gint64     diagonal,
                GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &tril_op, .inputs = { self }, .n_inputs = 1,
                     .sizes = { diagonal }, .n_sizes = 1);
}

/**
 * hp_tensor_triu:
 * @self: a [class@Hp.Tensor] of at least 2 dims
 * @diagonal: which diagonal bounds the kept part: 0 the main one,
 *   positive values above it, negative values below it
 * @error: return location for a [struct@GLib.Error]
 *
 * Keeps the upper triangle of each matrix of the last two dims of @self
 * and zeroes the rest, as torch.triu() does: element [i, j] is kept when
 * j - i >= @diagonal. The gradient is masked alike.
 *
 * Returns: (transfer full): the upper triangle, or %NULL with
 *   [HP_ERROR_SHAPE][error@Hp.Error] if @self has fewer than 2 dims
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_triu (HpTensor  *self,
                gint64     diagonal,
                GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &triu_op, .inputs = { self }, .n_inputs = 1,
                     .sizes = { diagonal }, .n_sizes = 1);
}
