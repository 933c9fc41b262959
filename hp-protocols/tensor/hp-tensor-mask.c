/* hp-tensor-mask.c: masks, the comparisons that make them, and where and
 * masked_fill that use them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A mask is an int64 tensor: nonzero is true. The comparisons give
 * int64 0 and 1 and carry no gradient; where and masked_fill pass the
 * gradient of the elements they take through and none to the mask.
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "hp-tensor-ops.h"
#include "hp-op-call-private.h"
#include "hp-tensor-private.h"

typedef enum
{
  COMPARE_EQ,
  COMPARE_NE,
  COMPARE_LT,
  COMPARE_LE,
  COMPARE_GT,
  COMPARE_GE,
} CompareOp;

static gboolean
compare_infer (const HpOpCall    *call,
               HpTensor * const  *inputs,
               HpOpInfo          *info,
               GError           **error)
{
  const gchar *name = call->op->name;
  HpTensor *a = inputs[0], *b = inputs[1];
  guint a_ndim, b_ndim;
  const gint64 *a_shape = hp_tensor_get_shape (a, &a_ndim);
  const gint64 *b_shape = hp_tensor_get_shape (b, &b_ndim);

  if (!_hp_check_same_dtype (name, a, b, error) ||
      !_hp_broadcast_shapes (name, a_shape, a_ndim, b_shape, b_ndim, info->out[0].shape,
                             &info->out[0].ndim, error))
    return FALSE;
  info->out[0].dtype = HP_DTYPE_INT64;
  return TRUE;
}

/* In the operands' own type, so that int64 compares exactly; NaN is
 * unequal to everything, itself included, as in C */
#define COMPARE_LOOP(T) \
  G_STMT_START { \
    const T *_a = a_data; \
    const T *_b = b_data; \
    for (gint64 _i = 0; _i < n; _i++, _hp_broadcast_iter_next (&iter)) \
      { \
        T x = _a[iter.offsets[0]], y = _b[iter.offsets[1]]; \
        switch (op) \
          { \
          case COMPARE_EQ: o[_i] = x == y; break; \
          case COMPARE_NE: o[_i] = x != y; break; \
          case COMPARE_LT: o[_i] = x < y; break; \
          case COMPARE_LE: o[_i] = x <= y; break; \
          case COMPARE_GT: o[_i] = x > y; break; \
          case COMPARE_GE: o[_i] = x >= y; break; \
          } \
      } \
  } G_STMT_END

static gboolean
compare_kernel (const HpOpCall    *call,
                const HpOpInfo    *info,
                HpTensor * const  *inputs,
                HpTensor         **outputs,
                HpOpSaved         *saved,
                GError           **error)
{
  CompareOp op = call->op->variant;
  HpTensor *out = _hp_op_shape_new_uninit (&info->out[0]);
  gconstpointer a_data = _hp_tensor_data (inputs[0]);
  gconstpointer b_data = _hp_tensor_data (inputs[1]);
  gint64 *o = _hp_tensor_data (out);
  gint64 n = hp_tensor_get_numel (out);
  HpBroadcastIter iter;

  _hp_broadcast_iter_init (&iter, info->out[0].shape, info->out[0].ndim, inputs, 2);
  switch (hp_tensor_get_dtype (inputs[0]))
    {
    case HP_DTYPE_FLOAT32: COMPARE_LOOP (gfloat); break;
    case HP_DTYPE_FLOAT64: COMPARE_LOOP (gdouble); break;
    case HP_DTYPE_INT64:   COMPARE_LOOP (gint64); break;
    }

  outputs[0] = out;
  return TRUE;
}

/* A comparison has an int64 result and no backward; its layout is the
 * one of its operands */
#define COMPARE_OP(NAME, VARIANT) \
  static const HpOp NAME##_op = { \
    .name = #NAME, .variant = VARIANT, .n_outputs = 1, \
    .infer = compare_infer, .kernel = compare_kernel, \
    .sharding = HP_OP_SHARDING_POINTWISE, \
  };

COMPARE_OP (eq, COMPARE_EQ)
COMPARE_OP (ne, COMPARE_NE)
COMPARE_OP (lt, COMPARE_LT)
COMPARE_OP (le, COMPARE_LE)
COMPARE_OP (gt, COMPARE_GT)
COMPARE_OP (ge, COMPARE_GE)

#define COMPARE_FUNCTION(NAME) \
  HpTensor * \
  hp_tensor_##NAME (HpTensor  *self, \
                    HpTensor  *other, \
                    GError   **error) \
  { \
    g_return_val_if_fail (HP_IS_TENSOR (self), NULL); \
    g_return_val_if_fail (HP_IS_TENSOR (other), NULL); \
    g_return_val_if_fail (error == NULL || *error == NULL, NULL); \
    \
    return HP_OP_CALL (error, .op = &NAME##_op, .inputs = { self, other }, .n_inputs = 2); \
  }

/**
 * hp_tensor_eq:
 * @self: a [class@Hp.Tensor]
 * @other: a [class@Hp.Tensor] of the same dtype, broadcastable with @self
 * @error: return location for a [struct@GLib.Error]
 *
 * Compares two tensors element by element, with broadcasting: 1 where
 * @self equals @other, 0 elsewhere (NaN equals nothing). Every dtype
 * compares, exactly, in its own type. The result has no gradient.
 *
 * Returns: (transfer full): an int64 mask, or %NULL with
 *   [HP_ERROR_SHAPE][error@Hp.Error] if the shapes do not broadcast or
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if the dtypes differ
 *
 * Since: 1.0
 */
COMPARE_FUNCTION (eq)

/**
 * hp_tensor_ne:
 * @self: a [class@Hp.Tensor]
 * @other: a [class@Hp.Tensor] of the same dtype, broadcastable with @self
 * @error: return location for a [struct@GLib.Error]
 *
 * 1 where @self differs from @other (NaN differs from everything), 0
 * elsewhere; as [method@Hp.Tensor.eq] otherwise.
 *
 * Returns: (transfer full): an int64 mask, or %NULL with @error set
 *
 * Since: 1.0
 */
COMPARE_FUNCTION (ne)

/**
 * hp_tensor_lt:
 * @self: a [class@Hp.Tensor]
 * @other: a [class@Hp.Tensor] of the same dtype, broadcastable with @self
 * @error: return location for a [struct@GLib.Error]
 *
 * 1 where @self < @other, 0 elsewhere (and where either is NaN); as
 * [method@Hp.Tensor.eq] otherwise.
 *
 * Returns: (transfer full): an int64 mask, or %NULL with @error set
 *
 * Since: 1.0
 */
COMPARE_FUNCTION (lt)

/**
 * hp_tensor_le:
 * @self: a [class@Hp.Tensor]
 * @other: a [class@Hp.Tensor] of the same dtype, broadcastable with @self
 * @error: return location for a [struct@GLib.Error]
 *
 * 1 where @self <= @other, 0 elsewhere (and where either is NaN); as
 * [method@Hp.Tensor.eq] otherwise.
 *
 * Returns: (transfer full): an int64 mask, or %NULL with @error set
 *
 * Since: 1.0
 */
COMPARE_FUNCTION (le)

/**
 * hp_tensor_gt:
 * @self: a [class@Hp.Tensor]
 * @other: a [class@Hp.Tensor] of the same dtype, broadcastable with @self
 * @error: return location for a [struct@GLib.Error]
 *
 * 1 where @self > @other, 0 elsewhere (and where either is NaN); as
 * [method@Hp.Tensor.eq] otherwise.
 *
 * Returns: (transfer full): an int64 mask, or %NULL with @error set
 *
 * Since: 1.0
 */
COMPARE_FUNCTION (gt)

/**
 * hp_tensor_ge:
 * @self: a [class@Hp.Tensor]
 * @other: a [class@Hp.Tensor] of the same dtype, broadcastable with @self
 * @error: return location for a [struct@GLib.Error]
 *
 * 1 where @self >= @other, 0 elsewhere (and where either is NaN); as
 * [method@Hp.Tensor.eq] otherwise.
 *
 * Returns: (transfer full): an int64 mask, or %NULL with @error set
 *
 * Since: 1.0
 */
COMPARE_FUNCTION (ge)

/* where (condition, self, other) */

static gboolean
where_infer (const HpOpCall    *call,
             HpTensor * const  *inputs,
             HpOpInfo          *info,
             GError           **error)
{
  const gchar *name = call->op->name;
  HpTensor *cond = inputs[0], *a = inputs[1], *b = inputs[2];
  guint c_ndim, a_ndim, b_ndim, ca_ndim;
  const gint64 *c_shape = hp_tensor_get_shape (cond, &c_ndim);
  const gint64 *a_shape = hp_tensor_get_shape (a, &a_ndim);
  const gint64 *b_shape = hp_tensor_get_shape (b, &b_ndim);
  gint64 ca_shape[HP_TENSOR_MAX_NDIM];

  if (!_hp_check_dtype (name, "condition", cond, HP_DTYPE_INT64, error) ||
      !_hp_check_same_dtype (name, a, b, error) ||
      !_hp_broadcast_shapes (name, c_shape, c_ndim, a_shape, a_ndim, ca_shape, &ca_ndim, error) ||
      !_hp_broadcast_shapes (name, ca_shape, ca_ndim, b_shape, b_ndim, info->out[0].shape,
                             &info->out[0].ndim, error))
    return FALSE;
  info->out[0].dtype = hp_tensor_get_dtype (a);
  return TRUE;
}

static gboolean
where_kernel (const HpOpCall    *call,
              const HpOpInfo    *info,
              HpTensor * const  *inputs,
              HpTensor         **outputs,
              HpOpSaved         *saved,
              GError           **error)
{
  HpTensor *out = _hp_op_shape_new_uninit (&info->out[0]);
  gsize elem = hp_dtype_get_size (info->out[0].dtype);
  const gint64 *cond = _hp_tensor_data (inputs[0]);
  const guint8 *a = _hp_tensor_data (inputs[1]);
  const guint8 *b = _hp_tensor_data (inputs[2]);
  guint8 *o = _hp_tensor_data (out);
  gint64 n = hp_tensor_get_numel (out);
  HpBroadcastIter iter;

  _hp_broadcast_iter_init (&iter, info->out[0].shape, info->out[0].ndim, inputs, 3);
  for (gint64 i = 0; i < n; i++, _hp_broadcast_iter_next (&iter))
    memcpy (o + elem * i,
            cond[iter.offsets[0]] != 0 ? a + elem * iter.offsets[1] : b + elem * iter.offsets[2],
            elem);

  outputs[0] = out;
  for (guint k = 0; k < 3; k++)
    saved->tensors[saved->n_tensors++] = inputs[k];
  return TRUE;
}

/* Each operand gets the gradient where it was taken, zero elsewhere,
 * summed over the dims it was broadcast along */
static gboolean
where_backward (HpAutogradNode  *node,
                HpTensor       **grad_outputs,
                HpTensor       **grad_inputs,
                GError         **error)
{
  HpTensor *cond = _hp_autograd_node_get_saved (node, 0);
  HpTensor *grad = grad_outputs[0];
  g_autoptr(HpTensor) zero = hp_tensor_new_zeros (hp_tensor_get_dtype (grad), NULL, 0);

  for (guint k = 1; k <= 2; k++)
    {
      HpTensor *like = _hp_autograd_node_get_saved (node, k);
      g_autoptr(HpTensor) taken = NULL;
      guint ndim;
      const gint64 *shape = hp_tensor_get_shape (like, &ndim);

      if (!_hp_autograd_node_needs_input_grad (node, k))
        continue;
      taken = k == 1 ? hp_tensor_where (cond, grad, zero, error)
                     : hp_tensor_where (cond, zero, grad, error);
      if (taken == NULL ||
          (grad_inputs[k] = _hp_tensor_sum_to_shape (taken, shape, ndim, error)) == NULL)
        return FALSE;
    }
  return TRUE;
}

/* Linear in self and other only jointly (a Partial pair would need the
 * same split of both), so no Partial passes */
static const HpOp where_op = {
  .name = "where", .n_outputs = 1,
  .infer = where_infer, .kernel = where_kernel, .backward = where_backward,
  .sharding = HP_OP_SHARDING_POINTWISE,
};

/**
 * hp_tensor_where:
 * @condition: an int64 [class@Hp.Tensor], nonzero where @self is taken
 * @self: a [class@Hp.Tensor]
 * @other: a [class@Hp.Tensor] of the dtype of @self
 * @error: return location for a [struct@GLib.Error]
 *
 * Takes each element from @self where @condition is nonzero and from
 * @other elsewhere; the three shapes broadcast together. The gradient
 * goes to @self where the condition holds and to @other where it does
 * not; @condition has none.
 *
 * Returns: (transfer full): the selection, of the dtype of @self, or
 *   %NULL with [HP_ERROR_SHAPE][error@Hp.Error] if the shapes do not
 *   broadcast or [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if
 *   @condition is not int64 or the dtypes of @self and @other differ
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_where (HpTensor  *condition,
                 HpTensor  *self,
                 HpTensor  *other,
                 GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (condition), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (other), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &where_op, .inputs = { condition, self, other }, .n_inputs = 3);
}

/* masked_fill (self, mask, value) */

static gboolean
masked_fill_infer (const HpOpCall    *call,
                   HpTensor * const  *inputs,
                   HpOpInfo          *info,
                   GError           **error)
{
  const gchar *name = call->op->name;
  HpTensor *self = inputs[0], *mask = inputs[1];
  guint ndim, m_ndim, b_ndim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);
  const gint64 *m_shape = hp_tensor_get_shape (mask, &m_ndim);
  gint64 b_shape[HP_TENSOR_MAX_NDIM];
  gdouble value = call->scalar;

  if (!_hp_check_dtype (name, "mask", mask, HP_DTYPE_INT64, error))
    return FALSE;
  if (!_hp_broadcast_shapes (name, shape, ndim, m_shape, m_ndim, b_shape, &b_ndim, NULL) ||
      !_hp_shape_equal (b_shape, b_ndim, shape, ndim))
    {
      g_autofree gchar *m_str = _hp_shape_to_string (m_shape, m_ndim);
      g_autofree gchar *s_str = _hp_shape_to_string (shape, ndim);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "%s: mask of shape %s does not broadcast to the shape %s of self",
                   name, m_str, s_str);
      return FALSE;
    }
  /* 2^63 itself is out of range: the largest int64 rounds up to it */
  if (hp_tensor_get_dtype (self) == HP_DTYPE_INT64 &&
      !(value == floor (value) && value >= -9223372036854775808.0 && value < 9223372036854775808.0))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: value %g is not an int64, as self is", name, value);
      return FALSE;
    }
  _hp_op_shape_like (&info->out[0], self);
  return TRUE;
}

static gboolean
masked_fill_kernel (const HpOpCall    *call,
                    const HpOpInfo    *info,
                    HpTensor * const  *inputs,
                    HpTensor         **outputs,
                    HpOpSaved         *saved,
                    GError           **error)
{
  HpDType dtype = info->out[0].dtype;
  gsize elem = hp_dtype_get_size (dtype);
  HpTensor *out = _hp_op_shape_new_uninit (&info->out[0]);
  const gint64 *mask = _hp_tensor_data (inputs[1]);
  guint8 *o = _hp_tensor_data (out);
  gint64 n = hp_tensor_get_numel (out);
  guint8 fill[sizeof (gdouble)];
  HpBroadcastIter iter;

  /* exact for int64 too: infer checked that the value is an int64 */
  _hp_store_f64 (fill, dtype, 0, call->scalar);

  if (n > 0)
    memcpy (o, _hp_tensor_data (inputs[0]), elem * n);
  _hp_broadcast_iter_init (&iter, info->out[0].shape, info->out[0].ndim, &inputs[1], 1);
  for (gint64 i = 0; i < n; i++, _hp_broadcast_iter_next (&iter))
    if (mask[iter.offsets[0]] != 0)
      memcpy (o + elem * i, fill, elem);

  outputs[0] = out;
  saved->tensors[saved->n_tensors++] = inputs[1];
  return TRUE;
}

/* The filled elements do not depend on self */
static gboolean
masked_fill_backward (HpAutogradNode  *node,
                      HpTensor       **grad_outputs,
                      HpTensor       **grad_inputs,
                      GError         **error)
{
  HpTensor *mask = _hp_autograd_node_get_saved (node, 0);

  grad_inputs[0] = hp_tensor_masked_fill (grad_outputs[0], mask, 0.0, error);
  return grad_inputs[0] != NULL;
}

/* Linear in self only for a value of 0; a Partial self is reduced first
 * for every value, which is always right */
static const HpOp masked_fill_op = {
  .name = "masked_fill", .n_outputs = 1,
  .infer = masked_fill_infer, .kernel = masked_fill_kernel, .backward = masked_fill_backward,
  .sharding = HP_OP_SHARDING_POINTWISE,
};

/**
 * hp_tensor_masked_fill:
 * @self: a [class@Hp.Tensor]
 * @mask: an int64 [class@Hp.Tensor] that broadcasts to the shape of @self,
 *   nonzero where @value goes
 * @value: the value to fill in; an integer for an int64 @self
 * @error: return location for a [struct@GLib.Error]
 *
 * Replaces the elements of @self where @mask is nonzero by @value (as
 * attention masks do with -infinity). The gradient of @self is zero where
 * it was filled; @mask has none.
 *
 * Returns: (transfer full): the filled copy of @self, or %NULL with
 *   [HP_ERROR_SHAPE][error@Hp.Error] if @mask does not broadcast to the
 *   shape of @self or [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if
 *   @mask is not int64 or @value is not an integer for an int64 @self
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_masked_fill (HpTensor  *self,
                       HpTensor  *mask,
                       gdouble    value,
                       GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (mask), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &masked_fill_op, .inputs = { self, mask }, .n_inputs = 2,
                     .scalar = value);
}
