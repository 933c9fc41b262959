/* hp-op-call.c: running op calls, on plain tensors or through a tensor
 * subclass
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-mpi-private.h"
#include "hp-op-call-private.h"

/* A node's data: the call without its tensors, what inference found and
 * the kernel's own data */
typedef struct
{
  HpOpCall call;
  HpOpInfo info;
  gpointer data;
  GDestroyNotify destroy;
} OpRecord;

const gchar *
_hp_op_call_get_name (const HpOpCall *call)
{
  return call->op->name;
}

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

HpTensor **
_hp_op_call_get_inputs (const HpOpCall *call)
{
  return call->tensors != NULL ? (HpTensor **) call->tensors->pdata : (HpTensor **) call->inputs;
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

gboolean
_hp_op_call_infer (const HpOpCall    *call,
                   HpTensor * const  *inputs,
                   HpOpInfo          *info,
                   GError           **error)
{
  memset (info, 0, sizeof *info);
  return call->op->infer (call, inputs, info, error);
}

/* Runs @call and stores its results (transfer full) in @outputs */
gboolean
_hp_op_call_outputs (const HpOpCall  *call,
                     HpTensor       **outputs,
                     GError         **error)
{
  HpTensorDispatchFunc dispatch = find_dispatch (call);

  /* collectives started ahead (FSDP's prefetch) move on only in MPI
   * calls: every op gives them one */
  _hp_mpi_progress ();
  if (dispatch != NULL)
    return dispatch (call, outputs, error);
  return _hp_op_call_run (call, _hp_op_call_get_inputs (call), outputs, error);
}

HpTensor *
_hp_op_call (const HpOpCall  *call,
             GError         **error)
{
  HpTensor *outputs[HP_OP_MAX_OUTPUTS] = { NULL };

  g_return_val_if_fail (call->op->n_outputs == 1, NULL);

  if (!_hp_op_call_outputs (call, outputs, error))
    return NULL;
  return outputs[0];
}

static void
op_record_free (gpointer data)
{
  OpRecord *record = data;

  if (record->destroy != NULL && record->data != NULL)
    record->destroy (record->data);
  g_free (record);
}

static void
record_node (const HpOpCall   *call,
             const HpOpInfo   *info,
             HpTensor * const *inputs,
             HpTensor * const *outputs,
             HpOpSaved        *saved)
{
  const HpOp *op = call->op;
  guint n_inputs = _hp_op_call_get_n_inputs (call);
  g_autoptr(HpAutogradNode) node = NULL;
  OpRecord *record;

  if (op->backward == NULL || !_hp_autograd_should_record (inputs, n_inputs))
    {
      if (saved->destroy != NULL && saved->data != NULL)
        saved->destroy (saved->data);
      return;
    }

  node = _hp_autograd_node_new (op->name, op->backward, inputs, n_inputs, op->n_outputs);
  for (guint i = 0; i < saved->n_tensors; i++)
    _hp_autograd_node_save (node, saved->tensors[i]);

  record = g_new (OpRecord, 1);
  record->call = *call;
  memset (record->call.inputs, 0, sizeof record->call.inputs);
  record->call.tensors = NULL;
  record->info = *info;
  record->data = saved->data;
  record->destroy = saved->destroy;
  _hp_autograd_node_set_data (node, record, op_record_free);

  /* integer results (indices) carry no gradient */
  for (guint o = 0; o < op->n_outputs; o++)
    if (hp_dtype_is_floating (hp_tensor_get_dtype (outputs[o])))
      _hp_autograd_node_set_output (node, outputs[o], o);
}

/* Runs @call with @inputs (one per input of @call, in order) in place of
 * its own, on plain tensors */
gboolean
_hp_op_call_run (const HpOpCall    *call,
                 HpTensor * const  *inputs,
                 HpTensor         **outputs,
                 GError           **error)
{
  const HpOp *op = call->op;
  HpOpInfo info;
  HpOpSaved saved = { .n_tensors = 0 };

  if (!_hp_op_call_infer (call, inputs, &info, error))
    return FALSE;
  if (!op->kernel (call, &info, inputs, outputs, &saved, error))
    {
      for (guint o = 0; o < op->n_outputs; o++)
        g_clear_object (&outputs[o]);
      if (saved.destroy != NULL && saved.data != NULL)
        saved.destroy (saved.data);
      return FALSE;
    }
  record_node (call, &info, inputs, outputs, &saved);
  return TRUE;
}

const HpOpCall *
_hp_op_node_get_call (HpAutogradNode *node)
{
  return &((OpRecord *) _hp_autograd_node_get_data (node))->call;
}

const HpOpInfo *
_hp_op_node_get_info (HpAutogradNode *node)
{
  return &((OpRecord *) _hp_autograd_node_get_data (node))->info;
}

gpointer
_hp_op_node_get_data (HpAutogradNode *node)
{
  return ((OpRecord *) _hp_autograd_node_get_data (node))->data;
}

void
_hp_op_shape_set (HpOpShape    *shape,
                  HpDType       dtype,
                  const gint64 *dims,
                  guint         ndim)
{
  shape->dtype = dtype;
  shape->ndim = ndim;
  if (ndim > 0)
    memcpy (shape->shape, dims, ndim * sizeof (gint64));
}

void
_hp_op_shape_like (HpOpShape *shape,
                   HpTensor  *like)
{
  guint ndim;
  const gint64 *dims = hp_tensor_get_shape (like, &ndim);

  _hp_op_shape_set (shape, hp_tensor_get_dtype (like), dims, ndim);
}

HpTensor *
_hp_op_shape_new_uninit (const HpOpShape *shape)
{
  return _hp_tensor_new_uninit (shape->dtype, shape->shape, shape->ndim);
}
