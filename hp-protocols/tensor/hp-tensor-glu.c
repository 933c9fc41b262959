/* hp-tensor-glu.c: the gated activation silu(gate) * up in one op
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The feed-forward block of a Llama-style decoder computes
 * silu(w1 x) * (w3 x). As two ops, silu and mul, forward writes the
 * activation and reads it back, and keeps it for backward; backward
 * writes the gradient of the activation and reads it back for SiLU's.
 * One op makes one pass each way over arrays of [tokens, ffn-hidden] and
 * keeps only its two inputs. In float32 the loops round exactly as the
 * two ops did (silu(g) rounded to float, then the product), so that a
 * model gives the same numbers with either.
 */

#include "config.h"

#include <math.h>

#include "hp-op-call-private.h"
#include "hp-tensor-private.h"
#include "hp-vec-private.h"

#define OP_NAME "silu_mul"

HP_VEC_CLONES static void
silu_mul_f32 (const gfloat *restrict gate,
              const gfloat *restrict up,
              gfloat       *restrict out,
              gint64                 n)
{
  HP_SIMD
  for (gint64 i = 0; i < n; i++)
    {
      gfloat act = gate[i] * _hp_sigmoidf (gate[i]);

      out[i] = act * up[i];
    }
}

/* d gate = grad up silu'(gate), d up = grad silu(gate); either may be NULL */
HP_VEC_CLONES static void
silu_mul_backward_f32 (const gfloat *restrict gate,
                       const gfloat *restrict up,
                       const gfloat *restrict grad,
                       gfloat       *restrict d_gate,
                       gfloat       *restrict d_up,
                       gint64                 n)
{
  if (d_gate != NULL && d_up != NULL)
    {
      HP_SIMD
      for (gint64 i = 0; i < n; i++)
        {
          gfloat s = _hp_sigmoidf (gate[i]);
          gfloat d_act = grad[i] * up[i];

          d_up[i] = grad[i] * (gate[i] * s);
          d_gate[i] = d_act * _hp_silu_gradf (gate[i], s);
        }
    }
  else if (d_gate != NULL)
    {
      HP_SIMD
      for (gint64 i = 0; i < n; i++)
        {
          gfloat s = _hp_sigmoidf (gate[i]);
          gfloat d_act = grad[i] * up[i];

          d_gate[i] = d_act * _hp_silu_gradf (gate[i], s);
        }
    }
  else if (d_up != NULL)
    {
      HP_SIMD
      for (gint64 i = 0; i < n; i++)
        d_up[i] = grad[i] * (gate[i] * _hp_sigmoidf (gate[i]));
    }
}

static inline gdouble
sigmoid_f64 (gdouble x)
{
  return 1.0 / (1.0 + exp (-x));
}

static gboolean
silu_mul_infer (const HpOpCall    *call,
                HpTensor * const  *inputs,
                HpOpInfo          *info,
                GError           **error)
{
  HpTensor *gate = inputs[0], *up = inputs[1];
  guint g_ndim, u_ndim;
  const gint64 *g_shape = hp_tensor_get_shape (gate, &g_ndim);
  const gint64 *u_shape = hp_tensor_get_shape (up, &u_ndim);

  if (!_hp_check_floating (OP_NAME, gate, error) ||
      !_hp_check_same_dtype (OP_NAME, gate, up, error))
    return FALSE;
  if (!_hp_shape_equal (g_shape, g_ndim, u_shape, u_ndim))
    {
      g_autofree gchar *g_str = _hp_shape_to_string (g_shape, g_ndim);
      g_autofree gchar *u_str = _hp_shape_to_string (u_shape, u_ndim);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   OP_NAME ": gate %s and up %s differ in shape", g_str, u_str);
      return FALSE;
    }
  _hp_op_shape_like (&info->out[0], gate);
  return TRUE;
}

static gboolean
silu_mul_kernel (const HpOpCall    *call,
                 const HpOpInfo    *info,
                 HpTensor * const  *inputs,
                 HpTensor         **outputs,
                 HpOpSaved         *saved,
                 GError           **error)
{
  HpTensor *out = _hp_op_shape_new_uninit (&info->out[0]);
  gint64 n = hp_tensor_get_numel (out);

  if (info->out[0].dtype == HP_DTYPE_FLOAT32)
    silu_mul_f32 (_hp_tensor_data (inputs[0]), _hp_tensor_data (inputs[1]),
                  _hp_tensor_data (out), n);
  else
    {
      const gdouble *g = _hp_tensor_data (inputs[0]);
      const gdouble *u = _hp_tensor_data (inputs[1]);
      gdouble *o = _hp_tensor_data (out);

      for (gint64 i = 0; i < n; i++)
        o[i] = g[i] * sigmoid_f64 (g[i]) * u[i];
    }

  outputs[0] = out;
  saved->tensors[saved->n_tensors++] = inputs[0];
  saved->tensors[saved->n_tensors++] = inputs[1];
  return TRUE;
}

static gboolean
silu_mul_backward (HpAutogradNode  *node,
                   HpTensor       **grad_outputs,
                   HpTensor       **grad_inputs,
                   GError         **error)
{
  HpTensor *gate = _hp_autograd_node_get_saved (node, 0);
  HpTensor *up = _hp_autograd_node_get_saved (node, 1);
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (gate, &ndim);
  HpDType dtype = hp_tensor_get_dtype (gate);
  gint64 n = hp_tensor_get_numel (gate);
  HpTensor *d_gate = _hp_autograd_node_needs_input_grad (node, 0)
    ? _hp_tensor_new_uninit (dtype, shape, ndim) : NULL;
  HpTensor *d_up = _hp_autograd_node_needs_input_grad (node, 1)
    ? _hp_tensor_new_uninit (dtype, shape, ndim) : NULL;

  if (dtype == HP_DTYPE_FLOAT32)
    silu_mul_backward_f32 (_hp_tensor_data (gate), _hp_tensor_data (up),
                           _hp_tensor_data (grad_outputs[0]),
                           d_gate != NULL ? _hp_tensor_data (d_gate) : NULL,
                           d_up != NULL ? _hp_tensor_data (d_up) : NULL, n);
  else
    {
      const gdouble *g = _hp_tensor_data (gate);
      const gdouble *u = _hp_tensor_data (up);
      const gdouble *d = _hp_tensor_data (grad_outputs[0]);
      gdouble *dg = d_gate != NULL ? _hp_tensor_data (d_gate) : NULL;
      gdouble *du = d_up != NULL ? _hp_tensor_data (d_up) : NULL;

      for (gint64 i = 0; i < n; i++)
        {
          gdouble s = sigmoid_f64 (g[i]);

          if (du != NULL)
            du[i] = d[i] * (g[i] * s);
          if (dg != NULL)
            dg[i] = d[i] * u[i] * (s * (1.0 + g[i] * (1.0 - s)));
        }
    }

  grad_inputs[0] = d_gate;
  grad_inputs[1] = d_up;
  return TRUE;
}

/* element by element; linear in up alone */
static const HpOp silu_mul_op = {
  .name = OP_NAME, .n_outputs = 1,
  .infer = silu_mul_infer, .kernel = silu_mul_kernel, .backward = silu_mul_backward,
  .sharding = HP_OP_SHARDING_POINTWISE, .linear_inputs = HP_OP_INPUT (1),
};

/* silu(@gate) * @up, for floating point tensors of one dtype and shape
 * (plain tensors or DTensors, as any op); HP_ERROR_SHAPE when the shapes
 * differ, HP_ERROR_INVALID_ARGUMENT for integers or dtypes that differ */
HpTensor *
_hp_tensor_silu_mul (HpTensor  *gate,
                     HpTensor  *up,
                     GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (gate), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (up), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &silu_mul_op, .inputs = { gate, up }, .n_inputs = 2);
}
