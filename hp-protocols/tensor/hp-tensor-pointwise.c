/* hp-tensor-pointwise.c: element-wise arithmetic of two tensors with numpy
 * broadcasting (the ops of one tensor are in hp-tensor-unary.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "hp-tensor-ops.h"
#include "hp-op-call-private.h"
#include "hp-tensor-private.h"

typedef enum
{
  BINARY_ADD,
  BINARY_SUB,
  BINARY_MUL,
  BINARY_DIV,
} BinaryOp;


#define BINARY_KERNEL(T, OP) \
  G_STMT_START { \
    const T *restrict _a = a_data; \
    const T *restrict _b = b_data; \
    T *restrict _o = out_data; \
    for (gint64 _i = 0; _i < n; _i++) \
      _o[_i] = _a[_i * sa] OP _b[_i * sb]; \
  } G_STMT_END

#define BINARY_KERNEL_CONTIGUOUS(T, OP) \
  G_STMT_START { \
    const T *restrict _a = a_data; \
    const T *restrict _b = b_data; \
    T *restrict _o = out_data; \
    for (gint64 _i = 0; _i < n; _i++) \
      _o[_i] = _a[_i] OP _b[_i]; \
  } G_STMT_END

#define BINARY_DISPATCH(KERNEL, T) \
  G_STMT_START { \
    switch (op) \
      { \
      case BINARY_ADD: KERNEL (T, +); break; \
      case BINARY_SUB: KERNEL (T, -); break; \
      case BINARY_MUL: KERNEL (T, *); break; \
      case BINARY_DIV: KERNEL (T, /); break; \
      } \
  } G_STMT_END

/* One row of @n elements; operand elements are @sa and @sb apart (0 when
 * broadcast along the row, 1 otherwise). */
static void
binary_row (BinaryOp       op,
            HpDType        dtype,
            gconstpointer  a_data,
            gint64         sa,
            gconstpointer  b_data,
            gint64         sb,
            gpointer       out_data,
            gint64         n)
{
  if (sa == 1 && sb == 1)
    {
      switch (dtype)
        {
        case HP_DTYPE_FLOAT32: BINARY_DISPATCH (BINARY_KERNEL_CONTIGUOUS, gfloat); break;
        case HP_DTYPE_FLOAT64: BINARY_DISPATCH (BINARY_KERNEL_CONTIGUOUS, gdouble); break;
        case HP_DTYPE_INT64:   BINARY_DISPATCH (BINARY_KERNEL_CONTIGUOUS, gint64); break;
        }
      return;
    }

  switch (dtype)
    {
    case HP_DTYPE_FLOAT32: BINARY_DISPATCH (BINARY_KERNEL, gfloat); break;
    case HP_DTYPE_FLOAT64: BINARY_DISPATCH (BINARY_KERNEL, gdouble); break;
    case HP_DTYPE_INT64:   BINARY_DISPATCH (BINARY_KERNEL, gint64); break;
    }
}

/* The same-shape fast path runs over whole tensors in blocks of a fixed
 * length, then over the remaining tail: at -O2 GCC vectorises such
 * blocks (an open-ended loop stays scalar there), provided the arrays
 * are restrict parameters, so there is one small function per dtype and
 * op. */
#define SAME_SHAPE_BLOCK 16

#define DEFINE_SAME_SHAPE_KERNEL(NAME, T, OP) \
  static void \
  NAME (const T *restrict a, \
        const T *restrict b, \
        T       *restrict out, \
        gint64            n) \
  { \
    gint64 i = 0; \
    for (; i + SAME_SHAPE_BLOCK <= n; i += SAME_SHAPE_BLOCK) \
      for (gint64 j = 0; j < SAME_SHAPE_BLOCK; j++) \
        out[i + j] = a[i + j] OP b[i + j]; \
    for (; i < n; i++) \
      out[i] = a[i] OP b[i]; \
  }

#define DEFINE_SAME_SHAPE_KERNELS(SUFFIX, T) \
  DEFINE_SAME_SHAPE_KERNEL (same_shape_add_##SUFFIX, T, +) \
  DEFINE_SAME_SHAPE_KERNEL (same_shape_sub_##SUFFIX, T, -) \
  DEFINE_SAME_SHAPE_KERNEL (same_shape_mul_##SUFFIX, T, *) \
  DEFINE_SAME_SHAPE_KERNEL (same_shape_div_##SUFFIX, T, /)

DEFINE_SAME_SHAPE_KERNELS (f32, gfloat)
DEFINE_SAME_SHAPE_KERNELS (f64, gdouble)
DEFINE_SAME_SHAPE_KERNELS (i64, gint64)

#define SAME_SHAPE_DISPATCH(SUFFIX) \
  G_STMT_START { \
    switch (op) \
      { \
      case BINARY_ADD: same_shape_add_##SUFFIX (a_data, b_data, out_data, n); break; \
      case BINARY_SUB: same_shape_sub_##SUFFIX (a_data, b_data, out_data, n); break; \
      case BINARY_MUL: same_shape_mul_##SUFFIX (a_data, b_data, out_data, n); break; \
      case BINARY_DIV: same_shape_div_##SUFFIX (a_data, b_data, out_data, n); break; \
      } \
  } G_STMT_END

static void
binary_same_shape (BinaryOp       op,
                   HpDType        dtype,
                   gconstpointer  a_data,
                   gconstpointer  b_data,
                   gpointer       out_data,
                   gint64         n)
{
  switch (dtype)
    {
    case HP_DTYPE_FLOAT32: SAME_SHAPE_DISPATCH (f32); break;
    case HP_DTYPE_FLOAT64: SAME_SHAPE_DISPATCH (f64); break;
    case HP_DTYPE_INT64:   SAME_SHAPE_DISPATCH (i64); break;
    }
}

static gboolean
binary_infer (const HpOpCall    *call,
              HpTensor * const  *inputs,
              HpOpInfo          *info,
              GError           **error)
{
  const gchar *name = call->op->name;
  HpTensor *a = inputs[0], *b = inputs[1];
  guint a_ndim, b_ndim;
  const gint64 *a_shape = hp_tensor_get_shape (a, &a_ndim);
  const gint64 *b_shape = hp_tensor_get_shape (b, &b_ndim);
  HpDType dtype = hp_tensor_get_dtype (a);

  if (!_hp_check_same_dtype (name, a, b, error) ||
      !_hp_broadcast_shapes (name, a_shape, a_ndim, b_shape, b_ndim, info->out[0].shape,
                             &info->out[0].ndim, error))
    return FALSE;
  if (call->op->variant == BINARY_DIV && !hp_dtype_is_floating (dtype))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "div: needs floating point tensors, got %s", hp_dtype_to_string (dtype));
      return FALSE;
    }
  info->out[0].dtype = dtype;
  return TRUE;
}

static gboolean
binary_kernel (const HpOpCall    *call,
               const HpOpInfo    *info,
               HpTensor * const  *inputs,
               HpTensor         **outputs,
               HpOpSaved         *saved,
               GError           **error)
{
  BinaryOp op = call->op->variant;
  HpTensor *a = inputs[0], *b = inputs[1];
  guint a_ndim, b_ndim;
  const gint64 *a_shape = hp_tensor_get_shape (a, &a_ndim);
  const gint64 *b_shape = hp_tensor_get_shape (b, &b_ndim);
  const gint64 *shape = info->out[0].shape;
  guint ndim = info->out[0].ndim;
  gint64 a_strides[HP_TENSOR_MAX_NDIM];
  gint64 b_strides[HP_TENSOR_MAX_NDIM];
  gint64 index[HP_TENSOR_MAX_NDIM] = { 0 };
  HpDType dtype = info->out[0].dtype;
  gsize elem = hp_dtype_get_size (dtype);
  const guint8 *a_data = _hp_tensor_data (a);
  const guint8 *b_data = _hp_tensor_data (b);
  HpTensor *out = _hp_op_shape_new_uninit (&info->out[0]);
  guint8 *out_data = _hp_tensor_data (out);
  gint64 row, n_rows;

  outputs[0] = out;
  saved->tensors[saved->n_tensors++] = a;
  saved->tensors[saved->n_tensors++] = b;

  if (_hp_shape_equal (a_shape, a_ndim, b_shape, b_ndim))
    {
      binary_same_shape (op, dtype, a_data, b_data, out_data, hp_tensor_get_numel (out));
      return TRUE;
    }

  if (ndim == 0)
    {
      binary_row (op, dtype, a_data, 1, b_data, 1, out_data, 1);
      return TRUE;
    }

  /* Rows along the last dim; the outer dims are walked with an index. */
  _hp_broadcast_strides (a_shape, a_ndim, shape, ndim, a_strides);
  _hp_broadcast_strides (b_shape, b_ndim, shape, ndim, b_strides);
  n_rows = hp_tensor_get_numel (out) / MAX (shape[ndim - 1], 1);
  if (shape[ndim - 1] == 0)
    n_rows = 0;

  for (row = 0; row < n_rows; row++)
    {
      gint64 a_off = 0, b_off = 0;

      for (guint d = 0; d + 1 < ndim; d++)
        {
          a_off += index[d] * a_strides[d];
          b_off += index[d] * b_strides[d];
        }

      binary_row (op, dtype,
                  a_data + elem * a_off, a_strides[ndim - 1],
                  b_data + elem * b_off, b_strides[ndim - 1],
                  out_data + elem * row * shape[ndim - 1], shape[ndim - 1]);

      for (guint d = ndim - 1; d-- > 0;)
        {
          if (++index[d] < shape[d])
            break;
          index[d] = 0;
        }
    }

  return TRUE;
}

static gboolean
reduce_grad_to (HpTensor   *grad,
                HpTensor   *like,
                HpTensor  **out,
                GError    **error)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (like, &ndim);

  *out = _hp_tensor_sum_to_shape (grad, shape, ndim, error);
  return *out != NULL;
}

static gboolean
binary_backward (HpAutogradNode  *node,
                 HpTensor       **grad_outputs,
                 HpTensor       **grad_inputs,
                 GError         **error)
{
  BinaryOp op = _hp_op_node_get_call (node)->op->variant;
  HpTensor *a = _hp_autograd_node_get_saved (node, 0);
  HpTensor *b = _hp_autograd_node_get_saved (node, 1);
  HpTensor *grad = grad_outputs[0];
  g_autoptr(HpTensor) ga = NULL;
  g_autoptr(HpTensor) gb = NULL;

  switch (op)
    {
    case BINARY_ADD:
    case BINARY_SUB:
      ga = g_object_ref (grad);
      gb = op == BINARY_ADD ? g_object_ref (grad) : hp_tensor_neg (grad, error);
      break;

    case BINARY_MUL:
      if (_hp_autograd_node_needs_input_grad (node, 0))
        ga = hp_tensor_mul (grad, b, error);
      if (_hp_autograd_node_needs_input_grad (node, 1))
        gb = hp_tensor_mul (grad, a, error);
      break;

    case BINARY_DIV:
      if (_hp_autograd_node_needs_input_grad (node, 0))
        ga = hp_tensor_div (grad, b, error);
      if (_hp_autograd_node_needs_input_grad (node, 1))
        {
          g_autoptr(HpTensor) ga_b = hp_tensor_div (grad, b, error);
          g_autoptr(HpTensor) q = ga_b ? hp_tensor_div (a, b, error) : NULL;
          g_autoptr(HpTensor) prod = q ? hp_tensor_mul (ga_b, q, error) : NULL;

          gb = prod ? hp_tensor_neg (prod, error) : NULL;
        }
      break;
    }

  if (error != NULL && *error != NULL)
    return FALSE;

  if (_hp_autograd_node_needs_input_grad (node, 0) &&
      !reduce_grad_to (ga, a, &grad_inputs[0], error))
    return FALSE;
  if (_hp_autograd_node_needs_input_grad (node, 1) &&
      !reduce_grad_to (gb, b, &grad_inputs[1], error))
    return FALSE;

  return TRUE;
}

#define BINARY_OP(NAME, VARIANT, ADDITIVE, LINEAR) \
  static const HpOp NAME##_op = { \
    .name = #NAME, .variant = VARIANT, .n_outputs = 1, \
    .infer = binary_infer, .kernel = binary_kernel, .backward = binary_backward, \
    .sharding = HP_OP_SHARDING_POINTWISE, \
    .additive_inputs = ADDITIVE, .linear_inputs = LINEAR, \
  };

/* add and sub keep Partials of one op and add a Replicate operand once;
 * mul is linear in either operand, div in its numerator */
BINARY_OP (add, BINARY_ADD, HP_OP_INPUT (0) | HP_OP_INPUT (1), 0)
BINARY_OP (sub, BINARY_SUB, HP_OP_INPUT (0) | HP_OP_INPUT (1), 0)
BINARY_OP (mul, BINARY_MUL, 0, HP_OP_INPUT (0) | HP_OP_INPUT (1))
BINARY_OP (div, BINARY_DIV, 0, HP_OP_INPUT (0))

/**
 * hp_tensor_add:
 * @self: a [class@Hp.Tensor]
 * @other: a [class@Hp.Tensor] of the same dtype, broadcastable with @self
 * @error: return location for a [struct@GLib.Error]
 *
 * Adds two tensors element by element, broadcasting their shapes as
 * numpy does.
 *
 * Returns: (transfer full): @self + @other, or %NULL with
 *   [HP_ERROR_SHAPE][error@Hp.Error] if the shapes do not broadcast or
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if the dtypes differ
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_add (HpTensor  *self,
               HpTensor  *other,
               GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (other), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &add_op, .inputs = { self, other }, .n_inputs = 2);
}

/**
 * hp_tensor_sub:
 * @self: a [class@Hp.Tensor]
 * @other: a [class@Hp.Tensor] of the same dtype, broadcastable with @self
 * @error: return location for a [struct@GLib.Error]
 *
 * Subtracts @other from @self element by element, with broadcasting.
 *
 * Returns: (transfer full): @self - @other, or %NULL with @error set
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_sub (HpTensor  *self,
               HpTensor  *other,
               GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (other), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &sub_op, .inputs = { self, other }, .n_inputs = 2);
}

/**
 * hp_tensor_mul:
 * @self: a [class@Hp.Tensor]
 * @other: a [class@Hp.Tensor] of the same dtype, broadcastable with @self
 * @error: return location for a [struct@GLib.Error]
 *
 * Multiplies two tensors element by element, with broadcasting.
 *
 * Returns: (transfer full): @self * @other, or %NULL with @error set
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_mul (HpTensor  *self,
               HpTensor  *other,
               GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (other), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &mul_op, .inputs = { self, other }, .n_inputs = 2);
}

/**
 * hp_tensor_div:
 * @self: a floating point [class@Hp.Tensor]
 * @other: a [class@Hp.Tensor] of the same dtype, broadcastable with @self
 * @error: return location for a [struct@GLib.Error]
 *
 * Divides @self by @other element by element, with broadcasting.
 * Integer tensors are rejected with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error].
 *
 * Returns: (transfer full): @self / @other, or %NULL with @error set
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_div (HpTensor  *self,
               HpTensor  *other,
               GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (other), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &div_op, .inputs = { self, other }, .n_inputs = 2);
}

/* pow with a tensor exponent shares the binary ops' inference and
 * gradient reduction; its kernels walk the broadcast operands
 * element by element (libm's pow does not vectorise anyway) */

static gboolean
pow_infer (const HpOpCall    *call,
           HpTensor * const  *inputs,
           HpOpInfo          *info,
           GError           **error)
{
  /* after binary_infer, both operands have the same dtype */
  return binary_infer (call, inputs, info, error) &&
         _hp_check_floating (call->op->name, inputs[0], error);
}

static gboolean
pow_kernel (const HpOpCall    *call,
            const HpOpInfo    *info,
            HpTensor * const  *inputs,
            HpTensor         **outputs,
            HpOpSaved         *saved,
            GError           **error)
{
  HpTensor *out = _hp_op_shape_new_uninit (&info->out[0]);
  HpDType dtype = info->out[0].dtype;
  gconstpointer a = _hp_tensor_data (inputs[0]);
  gconstpointer b = _hp_tensor_data (inputs[1]);
  gpointer out_data = _hp_tensor_data (out);
  gint64 n = hp_tensor_get_numel (out);
  HpBroadcastIter iter;

  _hp_broadcast_iter_init (&iter, info->out[0].shape, info->out[0].ndim, inputs, 2);
  for (gint64 i = 0; i < n; i++, _hp_broadcast_iter_next (&iter))
    _hp_store_f64 (out_data, dtype, i,
                   pow (_hp_load_f64 (a, dtype, iter.offsets[0]),
                        _hp_load_f64 (b, dtype, iter.offsets[1])));

  outputs[0] = out;
  saved->tensors[saved->n_tensors++] = inputs[0];
  saved->tensors[saved->n_tensors++] = inputs[1];
  return TRUE;
}

/* d/da a^b = b a^(b-1) (0 where b = 0, as PyTorch, so that 0^0 has no
 * NaN gradient); d/db a^b = a^b log a (0 where a = 0 and b >= 0, as
 * PyTorch, where the limit is 0 rather than the NaN of 0 * -inf) */
static gboolean
pow_backward (HpAutogradNode  *node,
              HpTensor       **grad_outputs,
              HpTensor       **grad_inputs,
              GError         **error)
{
  const HpOpShape *shape = &_hp_op_node_get_info (node)->out[0];
  HpTensor *saved[] = {
    _hp_autograd_node_get_saved (node, 0),
    _hp_autograd_node_get_saved (node, 1),
  };
  HpDType dtype = shape->dtype;
  gconstpointer a = _hp_tensor_data (saved[0]);
  gconstpointer b = _hp_tensor_data (saved[1]);
  gconstpointer g = _hp_tensor_data (grad_outputs[0]);
  gint64 n = hp_tensor_get_numel (grad_outputs[0]);
  g_autoptr(HpTensor) ga = _hp_op_shape_new_uninit (shape);
  g_autoptr(HpTensor) gb = _hp_op_shape_new_uninit (shape);
  gpointer ga_data = _hp_tensor_data (ga);
  gpointer gb_data = _hp_tensor_data (gb);
  HpBroadcastIter iter;

  _hp_broadcast_iter_init (&iter, shape->shape, shape->ndim, saved, 2);
  for (gint64 i = 0; i < n; i++, _hp_broadcast_iter_next (&iter))
    {
      gdouble x = _hp_load_f64 (a, dtype, iter.offsets[0]);
      gdouble p = _hp_load_f64 (b, dtype, iter.offsets[1]);
      gdouble dy = _hp_load_f64 (g, dtype, i);

      _hp_store_f64 (ga_data, dtype, i, p == 0.0 ? 0.0 : dy * p * pow (x, p - 1.0));
      _hp_store_f64 (gb_data, dtype, i, x == 0.0 && p >= 0.0 ? 0.0 : dy * pow (x, p) * log (x));
    }

  if (_hp_autograd_node_needs_input_grad (node, 0) &&
      !reduce_grad_to (ga, saved[0], &grad_inputs[0], error))
    return FALSE;
  if (_hp_autograd_node_needs_input_grad (node, 1) &&
      !reduce_grad_to (gb, saved[1], &grad_inputs[1], error))
    return FALSE;
  return TRUE;
}

static const HpOp pow_op = {
  .name = "pow", .n_outputs = 1,
  .infer = pow_infer, .kernel = pow_kernel, .backward = pow_backward,
  .sharding = HP_OP_SHARDING_POINTWISE,
};

/**
 * hp_tensor_pow:
 * @self: a floating point [class@Hp.Tensor], the base
 * @exponent: a [class@Hp.Tensor] of the same dtype, broadcastable with @self
 * @error: return location for a [struct@GLib.Error]
 *
 * Raises @self to the power @exponent element by element, with
 * broadcasting, as C's pow() does (a negative base with a non-integer
 * exponent gives NaN). Both operands get gradients: `b a^(b-1)` for the
 * base (0 where the exponent is 0) and `a^b log a` for the exponent (0
 * where the base is 0 and the exponent not negative), as in PyTorch. For
 * a number as exponent see [method@Hp.Tensor.pow_scalar].
 *
 * Returns: (transfer full): @self ^ @exponent, or %NULL with
 *   [HP_ERROR_SHAPE][error@Hp.Error] if the shapes do not broadcast or
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if the dtypes differ or
 *   are integer
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_pow (HpTensor  *self,
               HpTensor  *exponent,
               GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (exponent), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &pow_op, .inputs = { self, exponent }, .n_inputs = 2);
}
