/* hp-tensor-select.c: picking elements by their order (topk, max, min,
 * argmax, argmin), running sums (cumsum) and categorical sampling
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * topk, max, min, argmax and argmin are one family: each picks the k
 * first elements of every slice along a dim in one total order, which
 * puts the larger (or smaller) value first, NaN before or after every
 * number, and of two equal values the one at the lower index first. max
 * and min are topk with k = 1 whose dim may go; argmax and argmin keep
 * only the indices. A slice is seen as [outer, n, inner] around the dim,
 * like a reduction, and read with stride inner.
 *
 * The same kernel also selects over candidates that carry their own
 * indices ("keys"): the DTensor dispatch takes the candidates of each
 * shard of a vocabulary-sharded dim, gathers them and selects again, and
 * ordering equal values by their keys (global indices) instead of their
 * positions makes that give exactly the single-rank result. A negative
 * key marks padding, which comes after everything.
 *
 * The samplers draw one category per row from the uniform number of the
 * Philox counter (offset + row) under the seed (hp-random.c), so the
 * draw is a pure function of the values, the seed and the offset.
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "hp-tensor-ops.h"
#include "hp-op-call-private.h"
#include "hp-select-private.h"
#include "hp-tensor-private.h"

typedef enum
{
  SELECT_TOPK,
  SELECT_MAX,
  SELECT_MIN,
  SELECT_ARGMAX,
  SELECT_ARGMIN,
  /* topk over candidates with keys (input 1, optional), the order and
   * the keepdim in call->sizes: what the DTensor dispatch runs locally */
  SELECT_MERGE,
} SelectVariant;

/* What a call selects */
typedef struct
{
  gint64 k;
  gboolean largest;
  gboolean nan_first;
  gboolean keepdim;
} Selection;

/* As PyTorch: NaN counts as larger than every number in topk and max,
 * and min and argmin pick a NaN too (a NaN propagates) */
static void
selection_of_call (const HpOpCall *call,
                   Selection      *s)
{
  switch ((SelectVariant) call->op->variant)
    {
    case SELECT_TOPK:
      *s = (Selection) { call->sizes[0], call->flag, call->flag, TRUE };
      return;
    case SELECT_MAX:
    case SELECT_ARGMAX:
      *s = (Selection) { 1, TRUE, TRUE, call->flag };
      return;
    case SELECT_MIN:
    case SELECT_ARGMIN:
      *s = (Selection) { 1, FALSE, TRUE, call->flag };
      return;
    case SELECT_MERGE:
      *s = (Selection) { call->sizes[0], call->sizes[1] != 0, call->sizes[2] != 0,
                         call->sizes[3] != 0 };
      return;
    }
  g_return_if_reached ();
}

/* The index output is the last one; values, when there are any, come first */
static gboolean
has_values (const HpOpCall *call)
{
  return call->op->n_outputs == 2;
}

/* The candidates' keys of a merge, or NULL */
static HpTensor *
keys_of (const HpOpCall   *call,
         HpTensor * const *inputs)
{
  return call->n_inputs > 1 ? inputs[1] : NULL;
}

/* The positions picked along the dim, and the input shape, for backward */
typedef struct
{
  gint64 *positions;
  guint ndim;
  gint64 shape[HP_TENSOR_MAX_NDIM];
} SelectData;

static void
select_data_free (gpointer data)
{
  SelectData *select = data;

  g_free (select->positions);
  g_free (select);
}

#define NEVER_NAN(x) ((void) (x), FALSE)

/* For one dtype: order (a negative result puts position a first) and the
 * selection of the @k first positions of a slice of @n into @idx (room
 * for @n). One best element is a scan; up to half of the slice goes
 * through a heap; more sort the slice. */
#define DEFINE_SELECT(T, SUFFIX, IS_NAN) \
typedef struct \
{ \
  const T *row; \
  const gint64 *keys; \
  gint64 stride; \
  gboolean largest; \
  gboolean nan_first; \
} Order_##SUFFIX; \
 \
static gint \
order_##SUFFIX (gint64                 a, \
                gint64                 b, \
                const Order_##SUFFIX  *o) \
{ \
  T x = o->row[a * o->stride], y = o->row[b * o->stride]; \
  gint64 ka = o->keys != NULL ? o->keys[a * o->stride] : a; \
  gint64 kb = o->keys != NULL ? o->keys[b * o->stride] : b; \
  gboolean xn = IS_NAN (x), yn = IS_NAN (y); \
 \
  if ((ka < 0) != (kb < 0)) \
    return ka < 0 ? 1 : -1; \
  if (xn != yn) \
    return xn == o->nan_first ? -1 : 1; \
  if (!xn && x != y) \
    return (x > y) == o->largest ? -1 : 1; \
  return (ka > kb) - (ka < kb); \
} \
 \
static gint \
compare_##SUFFIX (gconstpointer a, \
                  gconstpointer b, \
                  gpointer      order) \
{ \
  return order_##SUFFIX (*(const gint64 *) a, *(const gint64 *) b, order); \
} \
 \
/* Restores the heap below @at: every parent comes after its children in \
 * the order, so the root is the last of the positions held */ \
static void \
sift_down_##SUFFIX (gint64               *heap, \
                    gint64                size, \
                    gint64                at, \
                    const Order_##SUFFIX *o) \
{ \
  for (;;) \
    { \
      gint64 last = at, left = 2 * at + 1, right = left + 1, held; \
 \
      if (left < size && order_##SUFFIX (heap[left], heap[last], o) > 0) \
        last = left; \
      if (right < size && order_##SUFFIX (heap[right], heap[last], o) > 0) \
        last = right; \
      if (last == at) \
        return; \
      held = heap[at]; \
      heap[at] = heap[last]; \
      heap[last] = held; \
      at = last; \
    } \
} \
 \
/* A few of many (top-k sampling over a vocabulary) keep the k first in \
 * a heap, which makes n log k steps instead of the n log n of a sort */ \
static void \
select_slice_##SUFFIX (const Order_##SUFFIX *o, \
                       gint64                n, \
                       gint64                k, \
                       gint64               *idx) \
{ \
  if (k == 0) \
    return; \
  if (k == 1) \
    { \
      idx[0] = 0; \
      for (gint64 i = 1; i < n; i++) \
        if (order_##SUFFIX (i, idx[0], o) < 0) \
          idx[0] = i; \
      return; \
    } \
  if (k <= n / 2) \
    { \
      for (gint64 i = 0; i < k; i++) \
        idx[i] = i; \
      for (gint64 i = k / 2; i-- > 0;) \
        sift_down_##SUFFIX (idx, k, i, o); \
      for (gint64 i = k; i < n; i++) \
        if (order_##SUFFIX (i, idx[0], o) < 0) \
          { \
            idx[0] = i; \
            sift_down_##SUFFIX (idx, k, 0, o); \
          } \
      g_qsort_with_data (idx, (gint) k, sizeof (gint64), compare_##SUFFIX, (gpointer) o); \
      return; \
    } \
  for (gint64 i = 0; i < n; i++) \
    idx[i] = i; \
  g_qsort_with_data (idx, (gint) n, sizeof (gint64), compare_##SUFFIX, (gpointer) o); \
} \
 \
static void \
select_rows_##SUFFIX (const T          *in, \
                      const gint64     *keys, \
                      T                *values, \
                      gint64           *indices, \
                      gint64           *positions, \
                      gint64            outer, \
                      gint64            n, \
                      gint64            inner, \
                      const Selection  *s) \
{ \
  g_autofree gint64 *idx = g_new (gint64, MAX (n, 1)); \
  Order_##SUFFIX o = { .stride = inner, .largest = s->largest, .nan_first = s->nan_first }; \
 \
  for (gint64 b = 0; b < outer; b++) \
    for (gint64 i = 0; i < inner; i++) \
      { \
        gint64 base = b * n * inner + i; \
        gint64 out = b * s->k * inner + i; \
 \
        o.row = in + base; \
        o.keys = keys != NULL ? keys + base : NULL; \
        select_slice_##SUFFIX (&o, n, s->k, idx); \
        for (gint64 j = 0; j < s->k; j++) \
          { \
            gint64 p = idx[j]; \
 \
            if (values != NULL) \
              values[out + j * inner] = o.row[p * inner]; \
            indices[out + j * inner] = o.keys != NULL ? o.keys[p * inner] : p; \
            positions[out + j * inner] = p; \
          } \
      } \
}

DEFINE_SELECT (gfloat, f32, isnan)
DEFINE_SELECT (gdouble, f64, isnan)
DEFINE_SELECT (gint64, i64, NEVER_NAN)

static gboolean
select_infer (const HpOpCall    *call,
              HpTensor * const  *inputs,
              HpOpInfo          *info,
              GError           **error)
{
  const gchar *name = call->op->name;
  guint ndim, out_ndim = 0;
  const gint64 *shape = hp_tensor_get_shape (inputs[0], &ndim);
  gint64 out_shape[HP_TENSOR_MAX_NDIM];
  Selection s;
  guint o = 0;

  selection_of_call (call, &s);
  if (!_hp_normalize_dim (name, call->dims[0], ndim, &info->dim, error))
    return FALSE;
  if (call->op->variant == SELECT_TOPK && s.k > shape[info->dim])
    {
      g_autofree gchar *str = _hp_tensor_describe (inputs[0]);

      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: k %" G_GINT64_FORMAT " is more than the %" G_GINT64_FORMAT
                   " elements of dim %d of %s", name, s.k, shape[info->dim], call->dims[0], str);
      return FALSE;
    }
  if (call->op->variant != SELECT_TOPK && call->op->variant != SELECT_MERGE &&
      shape[info->dim] == 0)
    {
      g_autofree gchar *str = _hp_tensor_describe (inputs[0]);

      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: dim %d of %s is empty, so there is nothing to pick",
                   name, call->dims[0], str);
      return FALSE;
    }
  /* the dispatch makes the keys; they always fit */
  g_return_val_if_fail (keys_of (call, inputs) == NULL ||
                        (hp_tensor_get_dtype (inputs[1]) == HP_DTYPE_INT64 &&
                         _hp_tensor_has_shape (inputs[1], shape, ndim)), FALSE);

  for (guint d = 0; d < ndim; d++)
    {
      if (d != info->dim)
        out_shape[out_ndim++] = shape[d];
      else if (s.keepdim)
        out_shape[out_ndim++] = s.k;
    }
  if (has_values (call))
    _hp_op_shape_set (&info->out[o++], hp_tensor_get_dtype (inputs[0]), out_shape, out_ndim);
  _hp_op_shape_set (&info->out[o], HP_DTYPE_INT64, out_shape, out_ndim);
  return TRUE;
}

static gboolean
select_kernel (const HpOpCall    *call,
               const HpOpInfo    *info,
               HpTensor * const  *inputs,
               HpTensor         **outputs,
               HpOpSaved         *saved,
               GError           **error)
{
  HpTensor *self = inputs[0];
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);
  HpTensor *key_tensor = keys_of (call, inputs);
  const gint64 *keys = key_tensor != NULL ? _hp_tensor_data (key_tensor) : NULL;
  gboolean values = has_values (call);
  HpTensor *indices;
  gpointer value_data = NULL;
  gint64 outer, inner, n = shape[info->dim];
  SelectData *data;
  Selection s;

  selection_of_call (call, &s);
  _hp_shape_split_at_dim (shape, ndim, info->dim, &outer, &inner);
  if (values)
    {
      outputs[0] = _hp_op_shape_new_uninit (&info->out[0]);
      value_data = _hp_tensor_data (outputs[0]);
    }
  indices = outputs[values ? 1 : 0] = _hp_op_shape_new_uninit (&info->out[values ? 1 : 0]);

  data = g_new (SelectData, 1);
  data->positions = g_new (gint64, MAX (outer * s.k * inner, 1));
  data->ndim = ndim;
  memcpy (data->shape, shape, ndim * sizeof (gint64));

  switch (hp_tensor_get_dtype (self))
    {
    case HP_DTYPE_FLOAT32:
      select_rows_f32 (_hp_tensor_data (self), keys, value_data, _hp_tensor_data (indices),
                       data->positions, outer, n, inner, &s);
      break;
    case HP_DTYPE_FLOAT64:
      select_rows_f64 (_hp_tensor_data (self), keys, value_data, _hp_tensor_data (indices),
                       data->positions, outer, n, inner, &s);
      break;
    case HP_DTYPE_INT64:
      select_rows_i64 (_hp_tensor_data (self), keys, value_data, _hp_tensor_data (indices),
                       data->positions, outer, n, inner, &s);
      break;
    }

  saved->data = data;
  saved->destroy = select_data_free;
  return TRUE;
}

/* The gradient of the picked values goes to the positions they came
 * from; every other element gets 0. The values' gradient has the layout
 * of [outer, k, inner] whether or not the dim was kept. */
static gboolean
select_backward (HpAutogradNode  *node,
                 HpTensor       **grad_outputs,
                 HpTensor       **grad_inputs,
                 GError         **error)
{
  const SelectData *data = _hp_op_node_get_data (node);
  guint dim = _hp_op_node_get_info (node)->dim;
  HpTensor *grad = grad_outputs[0];
  HpDType dtype = hp_tensor_get_dtype (grad);
  HpTensor *gi = hp_tensor_new_zeros (dtype, data->shape, data->ndim);
  gconstpointer g = _hp_tensor_data (grad);
  gpointer out = _hp_tensor_data (gi);
  gint64 outer, inner, k, n = data->shape[dim];

  _hp_shape_split_at_dim (data->shape, data->ndim, dim, &outer, &inner);
  k = outer * inner > 0 ? hp_tensor_get_numel (grad) / (outer * inner) : 0;
  for (gint64 b = 0; b < outer; b++)
    for (gint64 j = 0; j < k; j++)
      for (gint64 i = 0; i < inner; i++)
        {
          gint64 from = (b * k + j) * inner + i;
          gint64 to = (b * n + data->positions[from]) * inner + i;

          _hp_store_f64 (out, dtype, to, _hp_load_f64 (out, dtype, to) + _hp_load_f64 (g, dtype, from));
        }

  grad_inputs[0] = gi;
  return TRUE;
}

#define SELECT_OP(NAME, VARIANT, N_OUTPUTS, BACKWARD, SHARDING) \
  static const HpOp NAME##_op = { \
    .name = #NAME, .variant = VARIANT, .n_outputs = N_OUTPUTS, \
    .infer = select_infer, .kernel = select_kernel, .backward = BACKWARD, \
    .sharding = SHARDING, \
  };

SELECT_OP (topk, SELECT_TOPK, 2, select_backward, HP_OP_SHARDING_SELECT)
SELECT_OP (max, SELECT_MAX, 2, select_backward, HP_OP_SHARDING_SELECT)
SELECT_OP (min, SELECT_MIN, 2, select_backward, HP_OP_SHARDING_SELECT)
SELECT_OP (argmax, SELECT_ARGMAX, 1, NULL, HP_OP_SHARDING_SELECT)
SELECT_OP (argmin, SELECT_ARGMIN, 1, NULL, HP_OP_SHARDING_SELECT)
/* runs on local tensors only */
SELECT_OP (select_merge, SELECT_MERGE, 2, select_backward, HP_OP_SHARDING_REPLICATE)

/* Hands out a values-and-indices call's results */
static HpTensor *
split_outputs (gboolean    ok,
               HpTensor  **outputs,
               HpTensor  **indices)
{
  if (!ok)
    return NULL;
  if (indices != NULL)
    *indices = outputs[1];
  else
    g_object_unref (outputs[1]);
  return outputs[0];
}

/**
 * hp_tensor_topk:
 * @self: a [class@Hp.Tensor]
 * @k: how many elements to pick from each slice, from 0 to the size of @dim
 * @dim: the dim to pick along; negative values count from the end
 * @largest: whether to pick the largest elements (else the smallest)
 * @indices: (out) (optional) (transfer full): return location for the
 *   int64 indices along @dim of the picked elements
 * @error: return location for a [struct@GLib.Error]
 *
 * Picks the @k largest (or smallest) elements of every slice along @dim,
 * as torch.topk with sorted results: the first is the largest (or the
 * smallest), and of equal values the one at the lower index comes first.
 * As in PyTorch, NaN counts as larger than every number: it comes first
 * when @largest and last otherwise. @k 0 gives empty results.
 * Differentiable in the values: their gradient goes back to the picked
 * elements.
 *
 * Returns: (transfer full): the picked values, of the shape of @self
 *   with @k in @dim, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if @dim is out of range
 *   (a 0-d tensor has no dim) or @k is more than the size of @dim
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_topk (HpTensor  *self,
                guint      k,
                gint       dim,
                gboolean   largest,
                HpTensor **indices,
                GError   **error)
{
  HpTensor *outputs[HP_OP_MAX_OUTPUTS] = { NULL };
  gboolean ok;

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  ok = _hp_op_call_outputs (&(const HpOpCall) { .op = &topk_op, .inputs = { self }, .n_inputs = 1,
                                                .dims = { dim }, .n_dims = 1,
                                                .sizes = { k }, .n_sizes = 1, .flag = largest },
                            outputs, error);
  return split_outputs (ok, outputs, indices);
}

/**
 * hp_tensor_max:
 * @self: a [class@Hp.Tensor]
 * @dim: the dim to reduce; negative values count from the end
 * @keepdim: whether the results keep @dim with size 1
 * @indices: (out) (optional) (transfer full): return location for the
 *   int64 index along @dim of each maximum
 * @error: return location for a [struct@GLib.Error]
 *
 * The largest element of every slice along @dim and its index, as
 * torch.max with a dim: of equal maxima the lower index; a NaN in a
 * slice is its maximum (the first NaN). Differentiable in the values:
 * the gradient goes to the picked element alone.
 *
 * Returns: (transfer full): the maxima, of the shape of @self without
 *   @dim (or with size 1 there if @keepdim), or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if @dim is out of range
 *   or empty
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_max (HpTensor  *self,
               gint       dim,
               gboolean   keepdim,
               HpTensor **indices,
               GError   **error)
{
  HpTensor *outputs[HP_OP_MAX_OUTPUTS] = { NULL };
  gboolean ok;

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  ok = _hp_op_call_outputs (&(const HpOpCall) { .op = &max_op, .inputs = { self }, .n_inputs = 1,
                                                .dims = { dim }, .n_dims = 1, .flag = keepdim },
                            outputs, error);
  return split_outputs (ok, outputs, indices);
}

/**
 * hp_tensor_min:
 * @self: a [class@Hp.Tensor]
 * @dim: the dim to reduce; negative values count from the end
 * @keepdim: whether the results keep @dim with size 1
 * @indices: (out) (optional) (transfer full): return location for the
 *   int64 index along @dim of each minimum
 * @error: return location for a [struct@GLib.Error]
 *
 * The smallest element of every slice along @dim and its index, as
 * torch.min with a dim: of equal minima the lower index; a NaN in a
 * slice is its minimum (the first NaN), so NaN propagates as in
 * PyTorch. Differentiable in the values like [method@Hp.Tensor.max].
 *
 * Returns: (transfer full): the minima, shaped as for
 *   [method@Hp.Tensor.max], or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if @dim is out of range
 *   or empty
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_min (HpTensor  *self,
               gint       dim,
               gboolean   keepdim,
               HpTensor **indices,
               GError   **error)
{
  HpTensor *outputs[HP_OP_MAX_OUTPUTS] = { NULL };
  gboolean ok;

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  ok = _hp_op_call_outputs (&(const HpOpCall) { .op = &min_op, .inputs = { self }, .n_inputs = 1,
                                                .dims = { dim }, .n_dims = 1, .flag = keepdim },
                            outputs, error);
  return split_outputs (ok, outputs, indices);
}

/**
 * hp_tensor_argmax:
 * @self: a [class@Hp.Tensor]
 * @dim: the dim to reduce; negative values count from the end
 * @keepdim: whether the result keeps @dim with size 1
 * @error: return location for a [struct@GLib.Error]
 *
 * The indices that [method@Hp.Tensor.max] gives: of equal maxima the
 * lowest index, and the first NaN of a slice that holds one.
 *
 * Returns: (transfer full): the int64 indices, shaped as for
 *   [method@Hp.Tensor.max], or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if @dim is out of range
 *   or empty
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_argmax (HpTensor  *self,
                  gint       dim,
                  gboolean   keepdim,
                  GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &argmax_op, .inputs = { self }, .n_inputs = 1,
                     .dims = { dim }, .n_dims = 1, .flag = keepdim);
}

/**
 * hp_tensor_argmin:
 * @self: a [class@Hp.Tensor]
 * @dim: the dim to reduce; negative values count from the end
 * @keepdim: whether the result keeps @dim with size 1
 * @error: return location for a [struct@GLib.Error]
 *
 * The indices that [method@Hp.Tensor.min] gives: of equal minima the
 * lowest index, and the first NaN of a slice that holds one.
 *
 * Returns: (transfer full): the int64 indices, shaped as for
 *   [method@Hp.Tensor.max], or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if @dim is out of range
 *   or empty
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_argmin (HpTensor  *self,
                  gint       dim,
                  gboolean   keepdim,
                  GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &argmin_op, .inputs = { self }, .n_inputs = 1,
                     .dims = { dim }, .n_dims = 1, .flag = keepdim);
}

/* A merge call for @call's selection, with @k and @keepdim */
static HpOpCall
merge_call (const HpOpCall *call,
            HpTensor       *values,
            HpTensor       *keys,
            guint           dim,
            gint64          k,
            gboolean        keepdim)
{
  Selection s;

  selection_of_call (call, &s);
  return (HpOpCall) { .op = &select_merge_op, .inputs = { values, keys }, .n_inputs = 2,
                      .dims = { (gint) dim }, .n_dims = 1,
                      .sizes = { k, s.largest, s.nan_first, keepdim }, .n_sizes = 4 };
}

gint64
_hp_select_get_k (const HpOpCall *call)
{
  Selection s;

  selection_of_call (call, &s);
  return s.k;
}

gboolean
_hp_select_candidates (const HpOpCall  *call,
                       HpTensor        *local,
                       guint            dim,
                       gint64           offset,
                       HpTensor       **values,
                       HpTensor       **keys,
                       GError         **error)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (local, &ndim);
  gint64 k = _hp_select_get_k (call), mine = MIN (k, shape[dim]);
  HpOpCall local_call = merge_call (call, local, NULL, dim, mine, TRUE);
  HpTensor *picked[HP_OP_MAX_OUTPUTS] = { NULL };
  g_autoptr(HpTensor) positions = NULL;
  g_autoptr(HpTensor) padding = NULL;
  g_autoptr(GPtrArray) parts = NULL;
  gint64 pad_shape[HP_TENSOR_MAX_NDIM];
  gint64 outer, inner;
  const gint64 *from;
  gint64 *to;

  if (!_hp_op_call_run (&local_call, local_call.inputs, picked, error))
    return FALSE;
  positions = picked[1];

  /* a shard with fewer than k elements pads with keys -1 */
  memcpy (pad_shape, shape, ndim * sizeof (gint64));
  pad_shape[dim] = k - mine;
  padding = hp_tensor_new_zeros (hp_tensor_get_dtype (local), pad_shape, ndim);
  parts = g_ptr_array_new_full (2, g_object_unref);
  g_ptr_array_add (parts, picked[0]);
  g_ptr_array_add (parts, g_object_ref (padding));
  *values = hp_tensor_cat (parts, (gint) dim, error);
  if (*values == NULL)
    return FALSE;

  pad_shape[dim] = k;
  *keys = hp_tensor_new_zeros (HP_DTYPE_INT64, pad_shape, ndim);
  from = _hp_tensor_data (positions);
  to = _hp_tensor_data (*keys);
  _hp_shape_split_at_dim (shape, ndim, dim, &outer, &inner);
  for (gint64 b = 0; b < outer; b++)
    for (gint64 j = 0; j < k; j++)
      for (gint64 i = 0; i < inner; i++)
        to[(b * k + j) * inner + i] = j < mine ? from[(b * mine + j) * inner + i] + offset : -1;
  return TRUE;
}

gboolean
_hp_select_merge (const HpOpCall  *call,
                  HpTensor        *values,
                  HpTensor        *keys,
                  guint            dim,
                  HpTensor       **outputs,
                  GError         **error)
{
  Selection s;
  HpOpCall merge;
  HpTensor *picked[HP_OP_MAX_OUTPUTS] = { NULL };

  selection_of_call (call, &s);
  merge = merge_call (call, values, keys, dim, s.k, s.keepdim);
  if (!_hp_op_call_run (&merge, merge.inputs, picked, error))
    return FALSE;
  if (has_values (call))
    {
      outputs[0] = picked[0];
      outputs[1] = picked[1];
    }
  else
    {
      g_object_unref (picked[0]);
      outputs[0] = picked[1];
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* cumsum                                                              */
/* ------------------------------------------------------------------ */

/* Running sums along the dim, from its end when @reverse (the gradient),
 * kept in ACC (double for both float types, as the sums of reduce.c) */
#define CUMSUM_KERNEL(T, ACC) \
  G_STMT_START { \
    const T *restrict _in = in_data; \
    T *restrict _out = out_data; \
    for (gint64 _b = 0; _b < outer; _b++) \
      for (gint64 _i = 0; _i < inner; _i++) \
        { \
          ACC _acc = 0; \
          for (gint64 _s = 0; _s < n; _s++) \
            { \
              gint64 _k = reverse ? n - 1 - _s : _s; \
              gint64 _at = (_b * n + _k) * inner + _i; \
              _acc += _in[_at]; \
              _out[_at] = (T) _acc; \
            } \
        } \
  } G_STMT_END

static HpTensor *
cumsum_along (HpTensor *self,
              guint     dim,
              gboolean  reverse)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);
  HpTensor *out = _hp_tensor_new_uninit (hp_tensor_get_dtype (self), shape, ndim);
  gconstpointer in_data = _hp_tensor_data (self);
  gpointer out_data = _hp_tensor_data (out);
  gint64 outer = 1, inner = 1, n = 1;

  if (ndim > 0)
    {
      _hp_shape_split_at_dim (shape, ndim, dim, &outer, &inner);
      n = shape[dim];
    }
  switch (hp_tensor_get_dtype (self))
    {
    case HP_DTYPE_FLOAT32:
      CUMSUM_KERNEL (gfloat, gdouble);
      break;
    case HP_DTYPE_FLOAT64:
      CUMSUM_KERNEL (gdouble, gdouble);
      break;
    case HP_DTYPE_INT64:
      CUMSUM_KERNEL (gint64, gint64);
      break;
    }
  return out;
}

/* Input element k adds to the outputs k, k+1, ...: its gradient is the
 * sum of their gradients, a running sum from the end */
static gboolean
cumsum_backward (HpAutogradNode  *node,
                 HpTensor       **grad_outputs,
                 HpTensor       **grad_inputs,
                 GError         **error)
{
  grad_inputs[0] = cumsum_along (grad_outputs[0], _hp_op_node_get_info (node)->dim, TRUE);
  return TRUE;
}

static gboolean
cumsum_infer (const HpOpCall    *call,
              HpTensor * const  *inputs,
              HpOpInfo          *info,
              GError           **error)
{
  guint ndim = hp_tensor_get_ndim (inputs[0]);
  gint dim = call->dims[0];

  /* like PyTorch, a 0-d tensor takes dim 0 or -1 */
  if (!(ndim == 0 && (dim == 0 || dim == -1)) &&
      !_hp_normalize_dim (call->op->name, dim, ndim, &info->dim, error))
    return FALSE;
  _hp_op_shape_like (&info->out[0], inputs[0]);
  return TRUE;
}

static gboolean
cumsum_kernel (const HpOpCall    *call,
               const HpOpInfo    *info,
               HpTensor * const  *inputs,
               HpTensor         **outputs,
               HpOpSaved         *saved,
               GError           **error)
{
  outputs[0] = cumsum_along (inputs[0], info->dim, FALSE);
  return TRUE;
}

static const HpOp cumsum_op = {
  .name = "cumsum", .n_outputs = 1,
  .infer = cumsum_infer, .kernel = cumsum_kernel, .backward = cumsum_backward,
  .sharding = HP_OP_SHARDING_ALONG_DIM, .linear_inputs = HP_OP_INPUT (0),
};

/**
 * hp_tensor_cumsum:
 * @self: a [class@Hp.Tensor]
 * @dim: the dim to sum along; negative values count from the end
 * @error: return location for a [struct@GLib.Error]
 *
 * Running sums along @dim, as torch.cumsum: element k of a slice is the
 * sum of its elements 0 to k. Float32 sums are kept in double precision
 * and rounded once per element; int64 sums stay int64 (an overflow is
 * not detected). A 0-d tensor
 * accepts @dim 0 or -1 and gives itself. Differentiable: the gradient is
 * the running sum of the output gradient from the end of @dim.
 *
 * Returns: (transfer full): the running sums, of the shape and dtype of
 *   @self, or %NULL with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if
 *   @dim is out of range
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_cumsum (HpTensor  *self,
                  gint       dim,
                  GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &cumsum_op, .inputs = { self }, .n_inputs = 1,
                     .dims = { dim }, .n_dims = 1);
}

/* ------------------------------------------------------------------ */
/* Categorical sampling                                                */
/* ------------------------------------------------------------------ */

typedef enum
{
  SAMPLE_PROBABILITIES,
  SAMPLE_LOGITS,
} SampleVariant;

static gboolean
sample_infer (const HpOpCall    *call,
              HpTensor * const  *inputs,
              HpOpInfo          *info,
              GError           **error)
{
  const gchar *name = call->op->name;
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (inputs[0], &ndim);

  if (!_hp_check_floating (name, inputs[0], error))
    return FALSE;
  if (ndim == 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: needs a tensor of at least 1 dim (the categories), got a 0-d tensor",
                   name);
      return FALSE;
    }
  _hp_op_shape_set (&info->out[0], HP_DTYPE_INT64, shape, ndim - 1);
  return TRUE;
}

/* Logits that softmax cannot turn into probabilities */
static gboolean
check_logits (const gchar  *name,
              HpTensor     *logits,
              GError      **error)
{
  HpDType dtype = hp_tensor_get_dtype (logits);
  gconstpointer data = _hp_tensor_data (logits);
  gint64 n = hp_tensor_get_shape (logits, NULL)[hp_tensor_get_ndim (logits) - 1];
  gint64 rows = n > 0 ? hp_tensor_get_numel (logits) / n : 0;

  for (gint64 r = 0; r < rows; r++)
    {
      gboolean finite = FALSE;

      for (gint64 j = 0; j < n; j++)
        {
          gdouble x = _hp_load_f64 (data, dtype, r * n + j);

          if (isnan (x) || x == INFINITY)
            {
              g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                           "%s: row %" G_GINT64_FORMAT " holds the logit %g", name, r, x);
              return FALSE;
            }
          finite |= x != -INFINITY;
        }
      if (!finite)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "%s: row %" G_GINT64_FORMAT " is all -inf", name, r);
          return FALSE;
        }
    }
  return TRUE;
}

/* Row r picks the first category whose running sum of probabilities
 * passes u * total, u the Philox uniform of counter offset + r; zero
 * probabilities are never picked (rounding past the end picks the last
 * positive one) */
static gboolean
draw_categories (const gchar  *name,
                 HpTensor     *probabilities,
                 guint64       seed,
                 guint64       offset,
                 HpTensor     *ids,
                 GError      **error)
{
  HpDType dtype = hp_tensor_get_dtype (probabilities);
  gconstpointer data = _hp_tensor_data (probabilities);
  gint64 n = hp_tensor_get_shape (probabilities, NULL)[hp_tensor_get_ndim (probabilities) - 1];
  gint64 rows = hp_tensor_get_numel (ids);
  gint64 *out = _hp_tensor_data (ids);

  for (gint64 r = 0; r < rows; r++)
    {
      gdouble total = 0.0, target, running = 0.0;
      gint64 last = -1;

      for (gint64 j = 0; j < n; j++)
        {
          gdouble p = _hp_load_f64 (data, dtype, r * n + j);

          if (!(p >= 0.0 && p < INFINITY))
            {
              g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                           "%s: row %" G_GINT64_FORMAT " holds the probability %g",
                           name, r, p);
              return FALSE;
            }
          total += p;
          if (p > 0.0)
            last = j;
        }
      if (last < 0 || total == INFINITY)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "%s: row %" G_GINT64_FORMAT " sums to %g", name, r, total);
          return FALSE;
        }

      target = _hp_random_uniform (offset + (guint64) r, seed) * total;
      out[r] = last;
      for (gint64 j = 0; j < last; j++)
        {
          gdouble p = _hp_load_f64 (data, dtype, r * n + j);

          running += p;
          if (p > 0.0 && target < running)
            {
              out[r] = j;
              break;
            }
        }
    }
  return TRUE;
}

static gboolean
sample_kernel (const HpOpCall    *call,
               const HpOpInfo    *info,
               HpTensor * const  *inputs,
               HpTensor         **outputs,
               HpOpSaved         *saved,
               GError           **error)
{
  const gchar *name = call->op->name;
  g_autoptr(HpTensor) probabilities = NULL;
  g_autoptr(HpTensor) ids = _hp_op_shape_new_uninit (&info->out[0]);

  /* logits take the very softmax of hp_tensor_softmax(), so that they and
   * its probabilities draw the same ids */
  if (call->op->variant == SAMPLE_LOGITS)
    {
      if (!check_logits (name, inputs[0], error))
        return FALSE;
      probabilities = hp_tensor_softmax (inputs[0], -1, error);
      if (probabilities == NULL)
        return FALSE;
    }
  else
    probabilities = g_object_ref (inputs[0]);

  if (!draw_categories (name, probabilities, (guint64) call->sizes[0], (guint64) call->sizes[1],
                        ids, error))
    return FALSE;
  outputs[0] = g_steal_pointer (&ids);
  return TRUE;
}

#define SAMPLE_OP(NAME, VARIANT) \
  static const HpOp NAME##_op = { \
    .name = #NAME, .variant = VARIANT, .n_outputs = 1, \
    .infer = sample_infer, .kernel = sample_kernel, \
    .sharding = HP_OP_SHARDING_REPLICATE, \
  };

SAMPLE_OP (sample_from_probabilities, SAMPLE_PROBABILITIES)
SAMPLE_OP (sample_from_logits, SAMPLE_LOGITS)

/**
 * hp_tensor_sample_from_probabilities:
 * @probabilities: a floating point [class@Hp.Tensor] of at least 1 dim:
 *   the weights of the categories along its last dim
 * @seed: the seed
 * @offset: the counter of the first row
 * @error: return location for a [struct@GLib.Error]
 *
 * Draws one category per row of @probabilities (row-major over the
 * leading dims): row r picks category j with probability p_j / sum(p),
 * by the uniform number in [0, 1) of the Philox counter @offset + r
 * under @seed (the generator of [ctor@Hp.Tensor.new_uniform]). The draw
 * is a function of the values, @seed and @offset alone, so every run and
 * every rank draws the same ids; a decoding loop moves @offset on by the
 * number of rows for each step. The probabilities need not sum to 1.
 * A category of probability 0 is never drawn. Not differentiable.
 *
 * Returns: (transfer full): the int64 ids, of the shape of
 *   @probabilities without its last dim, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer or 0-d
 *   tensor, a negative, infinite or NaN probability or a row that sums
 *   to 0 (or to more than the largest double)
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_sample_from_probabilities (HpTensor  *probabilities,
                                     guint64    seed,
                                     guint64    offset,
                                     GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (probabilities), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &sample_from_probabilities_op, .inputs = { probabilities },
                     .n_inputs = 1, .sizes = { (gint64) seed, (gint64) offset }, .n_sizes = 2);
}

/**
 * hp_tensor_sample_from_logits:
 * @logits: a floating point [class@Hp.Tensor] of at least 1 dim: the
 *   logits of the categories along its last dim
 * @seed: the seed
 * @offset: the counter of the first row
 * @error: return location for a [struct@GLib.Error]
 *
 * Draws one category per row from softmax(@logits) along the last dim,
 * exactly as [method@Hp.Tensor.sample_from_probabilities] draws from the
 * result of [method@Hp.Tensor.softmax]: the same @seed and @offset give
 * the same ids. A logit of -inf is never drawn. Not differentiable.
 *
 * Returns: (transfer full): the int64 ids, of the shape of @logits
 *   without its last dim, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer or 0-d
 *   tensor, a NaN or +inf logit or a row that is all -inf
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_sample_from_logits (HpTensor  *logits,
                              guint64    seed,
                              guint64    offset,
                              GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (logits), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &sample_from_logits_op, .inputs = { logits },
                     .n_inputs = 1, .sizes = { (gint64) seed, (gint64) offset }, .n_sizes = 2);
}
