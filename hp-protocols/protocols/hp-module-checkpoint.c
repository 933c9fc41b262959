/* hp-module-checkpoint.c: activation checkpointing of a module call
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * As torch.utils.checkpoint does: the forward runs the module with grad
 * mode off, so none of its activations is kept, and records one node
 * whose inputs are the call's arguments and the module's parameters.
 * That node keeps only the arguments (aliases, no copies). Its backward
 * runs the module's forward again, with grad mode on, on fresh leaves
 * over the same argument data, and sends the incoming gradient through
 * the graph that recomputation recorded, back to the arguments and the
 * parameters.
 *
 * The recomputation performs the same ops in the same order on the same
 * values as the first forward, so the gradients are those of a call
 * without checkpointing, bit for bit: the graph it records is the
 * module's own graph, and the outer backward reaches the node when it
 * would have reached the module's last op. A DTensor module makes the
 * same collectives again, on every rank at the same point of the
 * backward. The forward-pre and forward-post signals are emitted again
 * by the recomputation. Random draws stay replayable because random
 * tensors are pure functions of an explicit seed (hp-random.c): a
 * module drawing one must take its seed from its arguments or its own
 * state, not from a counter advanced per call.
 */

#include "config.h"

#include "hp-autograd-private.h"
#include "hp-error.h"
#include "hp-module-private.h"
#include "hp-tensor-private.h"

typedef struct
{
  HpModule *module;
  guint n_args;         /* the node's first inputs; the parameters follow */
  GPtrArray *params;    /* HpTensor */
} CheckpointData;

static void
checkpoint_data_free (gpointer pointer)
{
  CheckpointData *data = pointer;

  g_object_unref (data->module);
  g_ptr_array_unref (data->params);
  g_free (data);
}

/* Whether @outputs is what a checkpointed call can hand on: one
 * floating-point tensor */
static gboolean
check_outputs (HpModule   *self,
               GPtrArray  *outputs,
               GError    **error)
{
  HpTensor *first = outputs->len > 0 ? g_ptr_array_index (outputs, 0) : NULL;

  if (outputs->len != 1 || first == NULL || !hp_dtype_is_floating (hp_tensor_get_dtype (first)))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "%s: activation checkpointing needs a forward that returns one "
                   "floating-point tensor", _hp_module_type_name (self));
      return FALSE;
    }
  return TRUE;
}

static gboolean
checkpoint_backward (HpAutogradNode  *node,
                     HpTensor       **grad_outputs,
                     HpTensor       **grad_inputs,
                     GError         **error)
{
  CheckpointData *data = _hp_autograd_node_get_data (node);
  guint n_inputs = data->n_args + data->params->len;
  g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func (_hp_object_unref_nullable);
  g_autofree HpTensor **leaves = g_new0 (HpTensor *, n_inputs);
  g_autoptr(GPtrArray) outputs = NULL;
  gboolean was_enabled = hp_grad_mode_is_enabled ();

  for (guint i = 0; i < data->n_args; i++)
    {
      HpTensor *saved = _hp_autograd_node_get_saved (node, i);
      HpTensor *arg = saved != NULL ? hp_tensor_detach (saved) : NULL;

      if (arg != NULL && _hp_autograd_node_needs_input_grad (node, i))
        {
          hp_tensor_set_requires_grad (arg, TRUE);
          leaves[i] = arg;
        }
      g_ptr_array_add (args, arg);
    }
  for (guint i = 0; i < data->params->len; i++)
    if (_hp_autograd_node_needs_input_grad (node, data->n_args + i))
      leaves[data->n_args + i] = g_ptr_array_index (data->params, i);

  hp_grad_mode_set_enabled (TRUE);
  outputs = hp_module_call (data->module, args, error);
  hp_grad_mode_set_enabled (was_enabled);
  if (outputs == NULL || !check_outputs (data->module, outputs, error))
    return FALSE;

  /* an output that depends on nothing needing grad sends none back */
  if (!hp_tensor_get_requires_grad (g_ptr_array_index (outputs, 0)))
    return TRUE;

  return _hp_autograd_grad (_hp_module_type_name (data->module), g_ptr_array_index (outputs, 0),
                            grad_outputs[0], leaves, n_inputs, grad_inputs, error);
}

/* hp_module_call() keeping only @args for the backward, which
 * recomputes the rest; a plain call when nothing is recorded (grad mode
 * off, or no argument or parameter requires grad). The outputs are as
 * hp_module_call() gives them. */
GPtrArray *
_hp_module_call_checkpointed (HpModule   *self,
                              GPtrArray  *args,
                              GError    **error)
{
  g_autoptr(GPtrArray) params = NULL;
  g_autoptr(GPtrArray) inputs = NULL;
  g_autoptr(GPtrArray) outputs = NULL;
  g_autoptr(HpAutogradNode) node = NULL;
  GPtrArray *result;
  HpTensor *out;
  CheckpointData *data;

  g_return_val_if_fail (HP_IS_MODULE (self), NULL);
  g_return_val_if_fail (args != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  params = hp_module_parameters (self);
  inputs = g_ptr_array_new ();
  for (guint i = 0; i < args->len; i++)
    g_ptr_array_add (inputs, g_ptr_array_index (args, i));
  for (guint i = 0; i < params->len; i++)
    g_ptr_array_add (inputs, g_ptr_array_index (params, i));

  if (!_hp_autograd_should_record ((HpTensor * const *) inputs->pdata, inputs->len))
    return hp_module_call (self, args, error);

  hp_grad_mode_set_enabled (FALSE);
  outputs = hp_module_call (self, args, error);
  hp_grad_mode_set_enabled (TRUE);
  if (outputs == NULL || !check_outputs (self, outputs, error))
    return NULL;

  node = _hp_autograd_node_new ("checkpoint", checkpoint_backward,
                                (HpTensor * const *) inputs->pdata, inputs->len, 1);
  for (guint i = 0; i < args->len; i++)
    _hp_autograd_node_save (node, g_ptr_array_index (args, i));
  data = g_new0 (CheckpointData, 1);
  data->module = g_object_ref (self);
  data->n_args = args->len;
  data->params = g_steal_pointer (&params);
  _hp_autograd_node_set_data (node, data, checkpoint_data_free);

  /* a fresh alias carries the history, so that an output that is an
   * argument or a parameter keeps its own */
  out = hp_tensor_detach (g_ptr_array_index (outputs, 0));
  _hp_autograd_node_set_output (node, out, 0);
  result = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (result, out);
  return result;
}
