/* hp-tensor-pointwise.c: element-wise ops with numpy broadcasting
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

static const gchar * const binary_names[] = { "add", "sub", "mul", "div" };

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

static HpTensor *
binary_compute (BinaryOp   op,
                HpTensor  *a,
                HpTensor  *b,
                GError   **error)
{
  const gchar *name = binary_names[op];
  guint a_ndim, b_ndim, ndim;
  const gint64 *a_shape = hp_tensor_get_shape (a, &a_ndim);
  const gint64 *b_shape = hp_tensor_get_shape (b, &b_ndim);
  gint64 shape[HP_TENSOR_MAX_NDIM];
  gint64 a_strides[HP_TENSOR_MAX_NDIM];
  gint64 b_strides[HP_TENSOR_MAX_NDIM];
  gint64 index[HP_TENSOR_MAX_NDIM] = { 0 };
  HpDType dtype = hp_tensor_get_dtype (a);
  gsize elem = hp_dtype_get_size (dtype);
  const guint8 *a_data;
  const guint8 *b_data;
  guint8 *out_data;
  HpTensor *out;
  gint64 row, n_rows;

  if (!_hp_check_same_dtype (name, a, b, error) ||
      !_hp_broadcast_shapes (name, a_shape, a_ndim, b_shape, b_ndim, shape, &ndim, error))
    return NULL;
  if (op == BINARY_DIV && !hp_dtype_is_floating (dtype))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "div: needs floating point tensors, got %s", hp_dtype_to_string (dtype));
      return NULL;
    }

  a_data = _hp_tensor_data (a);
  b_data = _hp_tensor_data (b);

  if (_hp_shape_equal (a_shape, a_ndim, b_shape, b_ndim))
    {
      out = _hp_tensor_new_uninit (dtype, shape, ndim);
      binary_same_shape (op, dtype, a_data, b_data, _hp_tensor_data (out),
                         hp_tensor_get_numel (out));
      return out;
    }

  out = _hp_tensor_new_uninit (dtype, shape, ndim);
  out_data = _hp_tensor_data (out);

  if (ndim == 0)
    {
      binary_row (op, dtype, a_data, 1, b_data, 1, out_data, 1);
      return out;
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

  return out;
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
  BinaryOp op = GPOINTER_TO_INT (_hp_autograd_node_get_data (node));
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

static HpTensor *
binary_op (BinaryOp   op,
           HpTensor  *a,
           HpTensor  *b,
           GError   **error)
{
  HpTensor *inputs[2] = { a, b };
  HpTensor *out = binary_compute (op, a, b, error);

  if (out != NULL)
    _hp_autograd_record (binary_names[op], binary_backward, inputs, 2, out,
                         inputs, 2, GINT_TO_POINTER (op), NULL);
  return out;
}

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

  HP_OP_DISPATCH (error, .kind = HP_OP_ADD, .name = "add", .inputs = { self, other },
                  .n_inputs = 2);

  return binary_op (BINARY_ADD, self, other, error);
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

  HP_OP_DISPATCH (error, .kind = HP_OP_SUB, .name = "sub", .inputs = { self, other },
                  .n_inputs = 2);

  return binary_op (BINARY_SUB, self, other, error);
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

  HP_OP_DISPATCH (error, .kind = HP_OP_MUL, .name = "mul", .inputs = { self, other },
                  .n_inputs = 2);

  return binary_op (BINARY_MUL, self, other, error);
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

  HP_OP_DISPATCH (error, .kind = HP_OP_DIV, .name = "div", .inputs = { self, other },
                  .n_inputs = 2);

  return binary_op (BINARY_DIV, self, other, error);
}

/* Unary ops: forward f(x) and the local derivative f'(x) as used by
 * backward (grad * f'(x)); both computed in double precision. */

typedef enum
{
  UNARY_SCALE,
  UNARY_NEG,
  UNARY_EXP,
  UNARY_SILU,
  UNARY_GELU,
  UNARY_RELU,
} UnaryOp;

static const gchar * const unary_names[] = { "scale", "neg", "exp", "silu", "gelu", "relu" };

typedef struct
{
  UnaryOp op;
  gdouble factor;
} UnaryData;

static inline gdouble
sigmoid (gdouble x)
{
  return 1.0 / (1.0 + exp (-x));
}

static inline gdouble
unary_value (UnaryOp op,
             gdouble factor,
             gdouble x)
{
  switch (op)
    {
    case UNARY_SCALE: return factor * x;
    case UNARY_NEG:   return -x;
    case UNARY_EXP:   return exp (x);
    case UNARY_SILU:  return x * sigmoid (x);
    case UNARY_GELU:  return 0.5 * x * (1.0 + erf (x * G_SQRT2 / 2.0));
    case UNARY_RELU:  return x > 0.0 ? x : 0.0;
    default:          g_assert_not_reached ();
    }
}

static inline gdouble
unary_derivative (UnaryOp op,
                  gdouble factor,
                  gdouble x)
{
  switch (op)
    {
    case UNARY_SCALE: return factor;
    case UNARY_NEG:   return -1.0;
    case UNARY_EXP:   return exp (x);
    case UNARY_SILU:
      {
        gdouble s = sigmoid (x);
        return s * (1.0 + x * (1.0 - s));
      }
    case UNARY_GELU:
      return 0.5 * (1.0 + erf (x * G_SQRT2 / 2.0)) +
             x * exp (-0.5 * x * x) / sqrt (2.0 * G_PI);
    case UNARY_RELU:  return x > 0.0 ? 1.0 : 0.0;
    default:          g_assert_not_reached ();
    }
}

#define UNARY_LOOP(T, EXPR) \
  G_STMT_START { \
    const T *restrict _x = in; \
    T *restrict _o = out_data; \
    for (gint64 _i = 0; _i < n; _i++) \
      { \
        gdouble x = _x[_i]; \
        _o[_i] = (T) (EXPR); \
      } \
  } G_STMT_END

static HpTensor *
unary_compute (UnaryOp  op,
               gdouble  factor,
               HpTensor *self)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);
  HpDType dtype = hp_tensor_get_dtype (self);
  HpTensor *out = _hp_tensor_new_uninit (dtype, shape, ndim);
  gconstpointer in = _hp_tensor_data (self);
  gpointer out_data = _hp_tensor_data (out);
  gint64 n = hp_tensor_get_numel (self);

  switch (dtype)
    {
    case HP_DTYPE_FLOAT32:
      UNARY_LOOP (gfloat, unary_value (op, factor, x));
      break;
    case HP_DTYPE_FLOAT64:
      UNARY_LOOP (gdouble, unary_value (op, factor, x));
      break;
    case HP_DTYPE_INT64:
      {
        const gint64 *x = in;
        gint64 *o = out_data;

        /* only neg reaches here for integers */
        for (gint64 i = 0; i < n; i++)
          o[i] = -x[i];
      }
      break;
    }

  return out;
}

static gboolean
unary_backward (HpAutogradNode  *node,
                HpTensor       **grad_outputs,
                HpTensor       **grad_inputs,
                GError         **error)
{
  const UnaryData *data = _hp_autograd_node_get_data (node);
  HpTensor *x = _hp_autograd_node_get_saved (node, 0);
  HpTensor *grad = grad_outputs[0];
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (x, &ndim);
  HpDType dtype = hp_tensor_get_dtype (x);
  HpTensor *out = _hp_tensor_new_uninit (dtype, shape, ndim);
  gconstpointer x_data = _hp_tensor_data (x);
  gconstpointer g_data = _hp_tensor_data (grad);
  gpointer out_data = _hp_tensor_data (out);
  gint64 n = hp_tensor_get_numel (x);

  for (gint64 i = 0; i < n; i++)
    _hp_store_f64 (out_data, dtype, i,
                   _hp_load_f64 (g_data, dtype, i) *
                   unary_derivative (data->op, data->factor, _hp_load_f64 (x_data, dtype, i)));

  grad_inputs[0] = out;
  return TRUE;
}

static HpTensor *
unary_op (UnaryOp    op,
          gdouble    factor,
          HpTensor  *self,
          GError   **error)
{
  HpTensor *out;
  UnaryData *data;

  if (!(op == UNARY_NEG || _hp_check_floating (unary_names[op], self, error)))
    return NULL;

  out = unary_compute (op, factor, self);
  data = g_new (UnaryData, 1);
  data->op = op;
  data->factor = factor;
  _hp_autograd_record (unary_names[op], unary_backward, &self, 1, out,
                       &self, 1, data, g_free);
  return out;
}

/**
 * hp_tensor_scale:
 * @self: a floating point [class@Hp.Tensor]
 * @factor: the factor
 * @error: return location for a [struct@GLib.Error]
 *
 * Multiplies every element by a number.
 *
 * Returns: (transfer full): @factor * @self, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_scale (HpTensor  *self,
                 gdouble    factor,
                 GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  HP_OP_DISPATCH (error, .kind = HP_OP_SCALE, .name = "scale", .inputs = { self }, .n_inputs = 1,
                  .scalar = factor);

  return unary_op (UNARY_SCALE, factor, self, error);
}

/**
 * hp_tensor_neg:
 * @self: a [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Negates every element.
 *
 * Returns: (transfer full): -@self
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_neg (HpTensor  *self,
               GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  HP_OP_DISPATCH (error, .kind = HP_OP_NEG, .name = "neg", .inputs = { self }, .n_inputs = 1);

  return unary_op (UNARY_NEG, 0.0, self, error);
}

/**
 * hp_tensor_exp:
 * @self: a floating point [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Computes e to the power of every element.
 *
 * Returns: (transfer full): exp(@self), or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_exp (HpTensor  *self,
               GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  HP_OP_DISPATCH (error, .kind = HP_OP_EXP, .name = "exp", .inputs = { self }, .n_inputs = 1);

  return unary_op (UNARY_EXP, 0.0, self, error);
}

/**
 * hp_tensor_silu:
 * @self: a floating point [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Applies the SiLU (swish) activation `x * sigmoid(x)` to every element.
 *
 * Returns: (transfer full): silu(@self), or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_silu (HpTensor  *self,
                GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  HP_OP_DISPATCH (error, .kind = HP_OP_SILU, .name = "silu", .inputs = { self }, .n_inputs = 1);

  return unary_op (UNARY_SILU, 0.0, self, error);
}

/**
 * hp_tensor_gelu:
 * @self: a floating point [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Applies the exact GELU activation `x * Phi(x)` (with the error
 * function, as PyTorch's default) to every element.
 *
 * Returns: (transfer full): gelu(@self), or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_gelu (HpTensor  *self,
                GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  HP_OP_DISPATCH (error, .kind = HP_OP_GELU, .name = "gelu", .inputs = { self }, .n_inputs = 1);

  return unary_op (UNARY_GELU, 0.0, self, error);
}

/**
 * hp_tensor_relu:
 * @self: a floating point [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Replaces negative elements by zero. The gradient at 0 is 0.
 *
 * Returns: (transfer full): max(@self, 0), or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_relu (HpTensor  *self,
                GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  HP_OP_DISPATCH (error, .kind = HP_OP_RELU, .name = "relu", .inputs = { self }, .n_inputs = 1);

  return unary_op (UNARY_RELU, 0.0, self, error);
}
