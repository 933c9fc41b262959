/* hp-op-call.c: dispatching op calls to tensor subclasses
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-op-call-private.h"
#include "hp-tensor-ops.h"

guint
_hp_op_call_get_n_inputs (const HpOpCall *call)
{
  return call->tensors != NULL ? call->tensors->len : call->n_inputs;
}

HpTensor *
_hp_op_call_get_input (const HpOpCall *call,
                       guint           index)
{
  g_return_val_if_fail (index < _hp_op_call_get_n_inputs (call), NULL);

  return call->tensors != NULL ? g_ptr_array_index (call->tensors, index) : call->inputs[index];
}

static HpTensorDispatchFunc
find_dispatch (const HpOpCall *call)
{
  guint n = _hp_op_call_get_n_inputs (call);

  for (guint i = 0; i < n; i++)
    {
      HpTensor *input = _hp_op_call_get_input (call, i);

      if (input != NULL && HP_TENSOR_GET_CLASS (input)->dispatch != NULL)
        return (HpTensorDispatchFunc) HP_TENSOR_GET_CLASS (input)->dispatch;
    }

  return NULL;
}

gboolean
_hp_op_call_needs_dispatch (const HpOpCall *call)
{
  return find_dispatch (call) != NULL;
}

HpTensor *
_hp_op_call_dispatch (const HpOpCall  *call,
                      GError         **error)
{
  HpTensorDispatchFunc dispatch = find_dispatch (call);

  g_return_val_if_fail (dispatch != NULL, NULL);

  return dispatch (call, error);
}

/* Runs the op of @call with @inputs (one per input of @call, in order)
 * in place of its own. */
HpTensor *
_hp_op_call_run (const HpOpCall    *call,
                 HpTensor * const  *inputs,
                 GError           **error)
{
  HpTensor * const *in = inputs;

  switch (call->kind)
    {
    case HP_OP_ADD:           return hp_tensor_add (in[0], in[1], error);
    case HP_OP_SUB:           return hp_tensor_sub (in[0], in[1], error);
    case HP_OP_MUL:           return hp_tensor_mul (in[0], in[1], error);
    case HP_OP_DIV:           return hp_tensor_div (in[0], in[1], error);
    case HP_OP_SCALE:         return hp_tensor_scale (in[0], call->scalar, error);
    case HP_OP_NEG:           return hp_tensor_neg (in[0], error);
    case HP_OP_EXP:           return hp_tensor_exp (in[0], error);
    case HP_OP_SILU:          return hp_tensor_silu (in[0], error);
    case HP_OP_GELU:          return hp_tensor_gelu (in[0], error);
    case HP_OP_RELU:          return hp_tensor_relu (in[0], error);
    case HP_OP_MATMUL:        return hp_tensor_matmul (in[0], in[1], error);
    case HP_OP_LINEAR:        return hp_tensor_linear (in[0], in[1], in[2], error);
    case HP_OP_TRANSPOSE:     return hp_tensor_transpose (in[0], call->dims[0], call->dims[1], error);
    case HP_OP_PERMUTE:       return hp_tensor_permute (in[0], call->dims, call->n_dims, error);
    case HP_OP_RESHAPE:       return hp_tensor_reshape (in[0], call->sizes, call->n_sizes, error);
    case HP_OP_NARROW:        return hp_tensor_narrow (in[0], call->dims[0], call->sizes[0], call->sizes[1], error);
    case HP_OP_SUM:           return hp_tensor_sum (in[0], call->dims[0], call->flag, error);
    case HP_OP_SUM_ALL:       return hp_tensor_sum_all (in[0], error);
    case HP_OP_MEAN:          return hp_tensor_mean (in[0], call->dims[0], call->flag, error);
    case HP_OP_MEAN_ALL:      return hp_tensor_mean_all (in[0], error);
    case HP_OP_SOFTMAX:       return hp_tensor_softmax (in[0], call->dims[0], error);
    case HP_OP_LOG_SOFTMAX:   return hp_tensor_log_softmax (in[0], call->dims[0], error);
    case HP_OP_RMS_NORM:      return hp_tensor_rms_norm (in[0], in[1], call->scalar, error);
    case HP_OP_EMBEDDING:     return hp_tensor_embedding (in[0], in[1], error);
    case HP_OP_APPLY_ROTARY:  return hp_tensor_apply_rotary (in[0], in[1], in[2], error);
    case HP_OP_CROSS_ENTROPY: return hp_tensor_cross_entropy (in[0], in[1], call->sizes[0], error);
    case HP_OP_SDPA:
      return hp_tensor_scaled_dot_product_attention (in[0], in[1], in[2], in[3], call->flag,
                                                     call->scalar, error);
    case HP_OP_CAT:
      {
        g_autoptr(GPtrArray) list = g_ptr_array_new ();

        for (guint i = 0; i < call->tensors->len; i++)
          g_ptr_array_add (list, inputs[i]);
        return hp_tensor_cat (list, call->dims[0], error);
      }
    }

  g_return_val_if_reached (NULL);
}
