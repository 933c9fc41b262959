/* hp-tensor-unary.c: element-wise ops of one tensor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One op family: every op is a variant with its value f(x) and its
 * derivative f'(x), both computed in double precision; backward is
 * grad * f'(x) of the saved input. SiLU, the activation of the training
 * step, has a float32 loop of its own in float arithmetic, vectorised
 * (hp-vec-private.h), within a few ulp of the double one.
 */

#include "config.h"

#include <math.h>

#include "hp-tensor-ops.h"
#include "hp-op-call-private.h"
#include "hp-tensor-private.h"
#include "hp-vec-private.h"

typedef enum
{
  UNARY_SCALE,
  UNARY_NEG,
  UNARY_EXP,
  UNARY_SILU,
  UNARY_GELU,
  UNARY_RELU,
  UNARY_LOG,
  UNARY_SQRT,
  UNARY_RSQRT,
  UNARY_TANH,
  UNARY_SIGMOID,
  UNARY_ABS,
  UNARY_CLAMP,
  UNARY_POW,
} UnaryOp;

static inline gdouble
sigmoid (gdouble x)
{
  return 1.0 / (1.0 + exp (-x));
}

/* scale's factor and pow_scalar's exponent are call->scalar; clamp's
 * bounds are call->scalar and call->scalar2 */
static inline gdouble
unary_value (const HpOpCall *call,
             gdouble         x)
{
  switch ((UnaryOp) call->op->variant)
    {
    case UNARY_SCALE:   return call->scalar * x;
    case UNARY_NEG:     return -x;
    case UNARY_EXP:     return exp (x);
    case UNARY_SILU:    return x * sigmoid (x);
    case UNARY_GELU:    return 0.5 * x * (1.0 + erf (x * G_SQRT2 / 2.0));
    case UNARY_RELU:    return x > 0.0 ? x : 0.0;
    case UNARY_LOG:     return log (x);
    case UNARY_SQRT:    return sqrt (x);
    case UNARY_RSQRT:   return 1.0 / sqrt (x);
    case UNARY_TANH:    return tanh (x);
    case UNARY_SIGMOID: return sigmoid (x);
    case UNARY_ABS:     return fabs (x);
    /* written out rather than fmin/fmax, which would turn NaN into a bound */
    case UNARY_CLAMP:   return x < call->scalar ? call->scalar : x > call->scalar2 ? call->scalar2 : x;
    case UNARY_POW:     return pow (x, call->scalar);
    }
  g_return_val_if_reached (NAN);
}

static inline gdouble
unary_derivative (const HpOpCall *call,
                  gdouble         x)
{
  switch ((UnaryOp) call->op->variant)
    {
    case UNARY_SCALE: return call->scalar;
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
    case UNARY_LOG:   return 1.0 / x;
    case UNARY_SQRT:  return 0.5 / sqrt (x);
    case UNARY_RSQRT: return -0.5 / (x * sqrt (x));
    case UNARY_TANH:
      {
        gdouble t = tanh (x);
        return 1.0 - t * t;
      }
    case UNARY_SIGMOID:
      {
        gdouble s = sigmoid (x);
        return s * (1.0 - s);
      }
    /* as PyTorch: 0 at 0 (the sign of x) */
    case UNARY_ABS:   return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : 0.0;
    /* as PyTorch: the gradient passes on the bounds too */
    case UNARY_CLAMP: return x >= call->scalar && x <= call->scalar2 ? 1.0 : 0.0;
    /* as PyTorch: x^0 is constant, even at x = 0 where p x^(p-1) is NaN */
    case UNARY_POW:   return call->scalar == 0.0 ? 0.0 : call->scalar * pow (x, call->scalar - 1.0);
    }
  g_return_val_if_reached (NAN);
}

/* SiLU, the activation of every MLP, in float32 arithmetic so that it
 * vectorises: its value and its derivative */
HP_VEC_CLONES static void
silu_f32 (const gfloat *restrict x,
          gfloat       *restrict out,
          gint64        n)
{
  HP_SIMD
  for (gint64 i = 0; i < n; i++)
    out[i] = x[i] * _hp_sigmoidf (x[i]);
}

HP_VEC_CLONES static void
silu_backward_f32 (const gfloat *restrict x,
                   const gfloat *restrict grad,
                   gfloat       *restrict out,
                   gint64        n)
{
  HP_SIMD
  for (gint64 i = 0; i < n; i++)
    {
      gfloat s = _hp_sigmoidf (x[i]);

      out[i] = grad[i] * _hp_silu_gradf (x[i], s);
    }
}

#define UNARY_LOOP(T) \
  G_STMT_START { \
    const T *restrict _x = in; \
    T *restrict _o = out_data; \
    for (gint64 _i = 0; _i < n; _i++) \
      _o[_i] = (T) unary_value (call, _x[_i]); \
  } G_STMT_END

static gboolean
unary_infer (const HpOpCall    *call,
             HpTensor * const  *inputs,
             HpOpInfo          *info,
             GError           **error)
{
  UnaryOp op = call->op->variant;
  const gchar *name = call->op->name;

  /* neg and abs are exact on integers too */
  if (op != UNARY_NEG && op != UNARY_ABS && !_hp_check_floating (name, inputs[0], error))
    return FALSE;
  if (op == UNARY_CLAMP && (isnan (call->scalar) || isnan (call->scalar2)))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: a bound is NaN (min %g, max %g)", name, call->scalar, call->scalar2);
      return FALSE;
    }
  if (op == UNARY_CLAMP && call->scalar > call->scalar2)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: min %g is greater than max %g", name, call->scalar, call->scalar2);
      return FALSE;
    }
  _hp_op_shape_like (&info->out[0], inputs[0]);
  return TRUE;
}

static gboolean
unary_kernel (const HpOpCall    *call,
              const HpOpInfo    *info,
              HpTensor * const  *inputs,
              HpTensor         **outputs,
              HpOpSaved         *saved,
              GError           **error)
{
  HpTensor *out = _hp_op_shape_new_uninit (&info->out[0]);
  gconstpointer in = _hp_tensor_data (inputs[0]);
  gpointer out_data = _hp_tensor_data (out);
  gint64 n = hp_tensor_get_numel (out);

  switch (info->out[0].dtype)
    {
    case HP_DTYPE_FLOAT32:
      if (call->op->variant == UNARY_SILU)
        silu_f32 (in, out_data, n);
      else
        UNARY_LOOP (gfloat);
      break;
    case HP_DTYPE_FLOAT64:
      UNARY_LOOP (gdouble);
      break;
    case HP_DTYPE_INT64:
      {
        const gint64 *x = in;
        gint64 *o = out_data;
        gboolean neg = call->op->variant == UNARY_NEG;

        /* only neg and abs reach here; negated in unsigned arithmetic,
         * which wraps G_MININT64 to itself as two's complement does */
        for (gint64 i = 0; i < n; i++)
          o[i] = neg || x[i] < 0 ? (gint64) (0u - (guint64) x[i]) : x[i];
      }
      break;
    }

  outputs[0] = out;
  saved->tensors[saved->n_tensors++] = inputs[0];
  return TRUE;
}

static gboolean
unary_backward (HpAutogradNode  *node,
                HpTensor       **grad_outputs,
                HpTensor       **grad_inputs,
                GError         **error)
{
  const HpOpCall *call = _hp_op_node_get_call (node);
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

  if (dtype == HP_DTYPE_FLOAT32 && call->op->variant == UNARY_SILU)
    silu_backward_f32 (x_data, g_data, out_data, n);
  else
    for (gint64 i = 0; i < n; i++)
      _hp_store_f64 (out_data, dtype, i,
                     _hp_load_f64 (g_data, dtype, i) *
                     unary_derivative (call, _hp_load_f64 (x_data, dtype, i)));

  grad_inputs[0] = out;
  return TRUE;
}

#define UNARY_OP(NAME, VARIANT, LINEAR) \
  static const HpOp NAME##_op = { \
    .name = #NAME, .variant = VARIANT, .n_outputs = 1, \
    .infer = unary_infer, .kernel = unary_kernel, .backward = unary_backward, \
    .sharding = HP_OP_SHARDING_POINTWISE, .linear_inputs = LINEAR, \
  };

UNARY_OP (scale, UNARY_SCALE, HP_OP_INPUT (0))
UNARY_OP (neg, UNARY_NEG, HP_OP_INPUT (0))
UNARY_OP (exp, UNARY_EXP, 0)
UNARY_OP (silu, UNARY_SILU, 0)
UNARY_OP (gelu, UNARY_GELU, 0)
UNARY_OP (relu, UNARY_RELU, 0)
UNARY_OP (log, UNARY_LOG, 0)
UNARY_OP (sqrt, UNARY_SQRT, 0)
UNARY_OP (rsqrt, UNARY_RSQRT, 0)
UNARY_OP (tanh, UNARY_TANH, 0)
UNARY_OP (sigmoid, UNARY_SIGMOID, 0)
UNARY_OP (abs, UNARY_ABS, 0)
UNARY_OP (clamp, UNARY_CLAMP, 0)
UNARY_OP (pow_scalar, UNARY_POW, 0)

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

  return HP_OP_CALL (error, .op = &scale_op, .inputs = { self }, .n_inputs = 1, .scalar = factor);
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

  return HP_OP_CALL (error, .op = &neg_op, .inputs = { self }, .n_inputs = 1);
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

  return HP_OP_CALL (error, .op = &exp_op, .inputs = { self }, .n_inputs = 1);
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

  return HP_OP_CALL (error, .op = &silu_op, .inputs = { self }, .n_inputs = 1);
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

  return HP_OP_CALL (error, .op = &gelu_op, .inputs = { self }, .n_inputs = 1);
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

  return HP_OP_CALL (error, .op = &relu_op, .inputs = { self }, .n_inputs = 1);
}

/**
 * hp_tensor_log:
 * @self: a floating point [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Computes the natural logarithm of every element: negative elements
 * give NaN and zeros give -infinity, as in C.
 *
 * Returns: (transfer full): log(@self), or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_log (HpTensor  *self,
               GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &log_op, .inputs = { self }, .n_inputs = 1);
}

/**
 * hp_tensor_sqrt:
 * @self: a floating point [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Computes the square root of every element (NaN for negative ones).
 *
 * Returns: (transfer full): sqrt(@self), or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_sqrt (HpTensor  *self,
                GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &sqrt_op, .inputs = { self }, .n_inputs = 1);
}

/**
 * hp_tensor_rsqrt:
 * @self: a floating point [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Computes the reciprocal square root `1 / sqrt(x)` of every element.
 *
 * Returns: (transfer full): rsqrt(@self), or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_rsqrt (HpTensor  *self,
                 GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &rsqrt_op, .inputs = { self }, .n_inputs = 1);
}

/**
 * hp_tensor_tanh:
 * @self: a floating point [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Computes the hyperbolic tangent of every element.
 *
 * Returns: (transfer full): tanh(@self), or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_tanh (HpTensor  *self,
                GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &tanh_op, .inputs = { self }, .n_inputs = 1);
}

/**
 * hp_tensor_sigmoid:
 * @self: a floating point [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Applies the logistic function `1 / (1 + exp(-x))` to every element.
 *
 * Returns: (transfer full): sigmoid(@self), or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_sigmoid (HpTensor  *self,
                   GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &sigmoid_op, .inputs = { self }, .n_inputs = 1);
}

/**
 * hp_tensor_abs:
 * @self: a [class@Hp.Tensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Computes the absolute value of every element, for every dtype (the
 * absolute value of the smallest int64 wraps to itself). The gradient
 * is the sign of the element, 0 at 0.
 *
 * Returns: (transfer full): |@self|
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_abs (HpTensor  *self,
               GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &abs_op, .inputs = { self }, .n_inputs = 1);
}

/**
 * hp_tensor_clamp:
 * @self: a floating point [class@Hp.Tensor]
 * @min: the lower bound, or -infinity for none
 * @max: the upper bound, or +infinity for none
 * @error: return location for a [struct@GLib.Error]
 *
 * Limits every element to [@min, @max]; NaN elements stay NaN. The
 * gradient is 1 where @min <= x <= @max (on the bounds too, as in
 * PyTorch) and 0 elsewhere.
 *
 * Returns: (transfer full): @self clamped, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor, a
 *   NaN bound or @min greater than @max
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_clamp (HpTensor  *self,
                 gdouble    min,
                 gdouble    max,
                 GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &clamp_op, .inputs = { self }, .n_inputs = 1,
                     .scalar = min, .scalar2 = max);
}

/**
 * hp_tensor_pow_scalar:
 * @self: a floating point [class@Hp.Tensor]
 * @exponent: the exponent
 * @error: return location for a [struct@GLib.Error]
 *
 * Raises every element to the power @exponent, as C's pow() does. The
 * gradient is `exponent * x^(exponent - 1)`, and 0 for an exponent of 0.
 * For a tensor exponent see [method@Hp.Tensor.pow].
 *
 * Returns: (transfer full): @self ^ @exponent, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for an integer tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_pow_scalar (HpTensor  *self,
                      gdouble    exponent,
                      GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &pow_scalar_op, .inputs = { self }, .n_inputs = 1,
                     .scalar = exponent);
}
