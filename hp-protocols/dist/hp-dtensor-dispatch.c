/* hp-dtensor-dispatch.c: tensor ops on DTensors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An op with a DTensor input lands here (see hp-op-call-private.h). The
 * inputs must live on one mesh; a plain tensor may join them only if it
 * has one element (it counts as Replicate). Element-wise ops whose inputs
 * share shape and placements run on the local tensors directly. Every
 * other op takes the general path: all inputs to Replicate, the op on the
 * whole local tensors, a Replicate result. Each piece of both paths is a
 * differentiable DTensor operation, so gradients need nothing more.
 */

#include "config.h"

#include "hp-dtensor-private.h"
#include "hp-error.h"
#include "hp-op-call-private.h"

static gboolean
is_elementwise (HpOpKind kind)
{
  switch (kind)
    {
    case HP_OP_ADD:
    case HP_OP_SUB:
    case HP_OP_MUL:
    case HP_OP_DIV:
    case HP_OP_SCALE:
    case HP_OP_NEG:
    case HP_OP_EXP:
    case HP_OP_SILU:
    case HP_OP_GELU:
    case HP_OP_RELU:
      return TRUE;
    default:
      return FALSE;
    }
}

/* Whether an element-wise op may run on local values of @placements:
 * Shard and Replicate always; Partial(sum or avg) only through the ops
 * that are linear in it (add and sub of two such, scale, neg). */
static gboolean
elementwise_keeps (HpOpKind   kind,
                   GPtrArray *placements)
{
  for (guint d = 0; d < placements->len; d++)
    {
      HpPlacement *p = g_ptr_array_index (placements, d);
      HpReduceOp op;

      if (!hp_placement_is_partial (p))
        continue;
      op = hp_partial_get_reduce_op (HP_PARTIAL (p));
      if (op != HP_REDUCE_OP_SUM && op != HP_REDUCE_OP_AVG)
        return FALSE;
      if (kind != HP_OP_ADD && kind != HP_OP_SUB && kind != HP_OP_SCALE && kind != HP_OP_NEG)
        return FALSE;
    }
  return TRUE;
}

/* Gathers the inputs as DTensors on one mesh; plain one-element tensors
 * become Replicate DTensors. */
static GPtrArray *
collect_inputs (const HpOpCall  *call,
                HpDeviceMesh   **mesh_out,
                GError         **error)
{
  guint n = _hp_op_call_get_n_inputs (call);
  HpDeviceMesh *mesh = NULL;
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_full (n, (GDestroyNotify) g_object_unref);

  for (guint i = 0; i < n && mesh == NULL; i++)
    {
      HpTensor *input = _hp_op_call_get_input (call, i);

      if (input != NULL && HP_IS_DTENSOR (input))
        mesh = hp_dtensor_get_mesh (HP_DTENSOR (input));
    }

  for (guint i = 0; i < n; i++)
    {
      HpTensor *input = _hp_op_call_get_input (call, i);

      if (input == NULL)
        g_ptr_array_add (inputs, NULL);
      else if (HP_IS_DTENSOR (input))
        {
          HpDeviceMesh *other = hp_dtensor_get_mesh (HP_DTENSOR (input));

          if (other != mesh && !hp_device_mesh_equal (other, mesh))
            {
              g_autofree gchar *a = hp_device_mesh_to_string (mesh);
              g_autofree gchar *b = hp_device_mesh_to_string (other);

              g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                           "%s: the inputs live on different device meshes (%s and %s)",
                           call->name, a, b);
              return NULL;
            }
          g_ptr_array_add (inputs, g_object_ref (input));
        }
      else if (hp_tensor_get_numel (input) == 1)
        {
          g_autoptr(GPtrArray) replicated = _hp_placements_replicated (hp_device_mesh_get_ndim (mesh));
          guint ndim;
          const gint64 *shape = hp_tensor_get_shape (input, &ndim);
          HpDTensor *wrapped = hp_dtensor_new_from_local (input, mesh, replicated, shape, ndim,
                                                          FALSE, error);

          if (wrapped == NULL)
            return NULL;
          g_ptr_array_add (inputs, wrapped);
        }
      else
        {
          g_autofree gchar *what = _hp_tensor_describe (input);

          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "%s: mixed HpTensor and HpDTensor (input %u is a plain %s)",
                       call->name, i, what);
          return NULL;
        }
    }

  *mesh_out = mesh;
  return g_steal_pointer (&inputs);
}

/* Runs the op on the local tensors and wraps the result with
 * @placements; the result's global shape follows from the inputs'
 * global shapes, which for these paths equals the local op's output
 * shape with the same sharding applied. */
static HpTensor *
run_local (const HpOpCall  *call,
           GPtrArray       *inputs,
           HpDeviceMesh    *mesh,
           GPtrArray       *placements,
           const gint64    *shape,
           guint            ndim,
           GError         **error)
{
  g_autoptr(GPtrArray) locals = g_ptr_array_new_full (inputs->len, (GDestroyNotify) g_object_unref);
  g_autoptr(HpTensor) out = NULL;

  for (guint i = 0; i < inputs->len; i++)
    {
      HpDTensor *input = g_ptr_array_index (inputs, i);

      g_ptr_array_add (locals, input != NULL ? hp_dtensor_get_local (input) : NULL);
    }

  out = _hp_op_call_run (call, (HpTensor * const *) locals->pdata, error);
  if (out == NULL)
    return NULL;

  if (shape == NULL)
    shape = hp_tensor_get_shape (out, &ndim);
  return HP_TENSOR (hp_dtensor_new_from_local (out, mesh, placements, shape, ndim, FALSE, error));
}

static HpTensor *
run_elementwise (const HpOpCall  *call,
                 GPtrArray       *inputs,
                 HpDeviceMesh    *mesh,
                 GError         **error)
{
  HpDTensor *first = g_ptr_array_index (inputs, 0);
  GPtrArray *placements = hp_dtensor_get_placements (first);
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (HP_TENSOR (first), &ndim);

  return run_local (call, inputs, mesh, placements, shape, ndim, error);
}

static gboolean
same_layout (GPtrArray *inputs)
{
  HpDTensor *first = g_ptr_array_index (inputs, 0);
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (HP_TENSOR (first), &ndim);

  for (guint i = 1; i < inputs->len; i++)
    {
      HpDTensor *other = g_ptr_array_index (inputs, i);

      if (!_hp_tensor_has_shape (HP_TENSOR (other), shape, ndim) ||
          !_hp_placements_equal (hp_dtensor_get_placements (first),
                                 hp_dtensor_get_placements (other)))
        return FALSE;
    }
  return TRUE;
}

/* The general path: every input whole on every rank */
static HpTensor *
run_replicated (const HpOpCall  *call,
                GPtrArray       *inputs,
                HpDeviceMesh    *mesh,
                GError         **error)
{
  g_autoptr(GPtrArray) replicated = _hp_placements_replicated (hp_device_mesh_get_ndim (mesh));
  g_autoptr(GPtrArray) whole = g_ptr_array_new_full (inputs->len, (GDestroyNotify) g_object_unref);

  for (guint i = 0; i < inputs->len; i++)
    {
      HpDTensor *input = g_ptr_array_index (inputs, i);
      HpDTensor *moved = NULL;

      if (input != NULL)
        {
          moved = hp_dtensor_redistribute (input, replicated, error);
          if (moved == NULL)
            return NULL;
        }
      g_ptr_array_add (whole, moved);
    }

  return run_local (call, whole, mesh, replicated, NULL, 0, error);
}

HpTensor *
_hp_dtensor_dispatch (const HpOpCall  *call,
                      GError         **error)
{
  g_autoptr(GPtrArray) inputs = NULL;
  HpDeviceMesh *mesh = NULL;

  inputs = collect_inputs (call, &mesh, error);
  if (inputs == NULL)
    return NULL;

  if (is_elementwise (call->kind) && same_layout (inputs) &&
      elementwise_keeps (call->kind, hp_dtensor_get_placements (g_ptr_array_index (inputs, 0))))
    return run_elementwise (call, inputs, mesh, error);

  return run_replicated (call, inputs, mesh, error);
}
