/* hp-fsdp.c: gathering a fully sharded parameter, and its gradient back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A parameter under FSDP is a DTensor over a mesh that has one or two
 * data-parallel dims besides the model-parallel ones: `Shard(0)` over
 * `dp_shard`, `Replicate` over `dp_replicate` (HSDP), and its tensor
 * parallel placements over the rest. _hp_fsdp_unshard() gives the
 * tensor a unit's forward computes with: the parameter all-gathered over
 * the data dims, as a DTensor over the compute mesh (the model-parallel
 * dims) or as a plain tensor when there are none. Its autograd node
 * takes the gradient of that tensor, which holds this rank's own
 * contribution (its share of the batch), as `Partial(avg)` over the data
 * dims and redistributes it to the parameter's placements: a
 * reduce-scatter of the mean over `dp_shard`, then an all-reduce of the
 * shard over `dp_replicate`. Both directions are redistributions, so
 * they use the library's collective agreement and deadline, and uneven
 * shards are exact.
 *
 * A unit that reshards after its forward gives the gathered memory back
 * (_hp_fsdp_release) and gathers it again when its backward begins
 * (_hp_fsdp_refill_before_backward): the backward's saved tensors alias
 * the gathered buffers, so the values are put back at the same address.
 */

#include "config.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hp-autograd-private.h"
#include "hp-dtensor-private.h"
#include "hp-fsdp-private.h"
#include "hp-grad-mode.h"
#include "hp-partial.h"
#include "hp-replicate.h"
#include "hp-tensor-private.h"

typedef struct
{
  HpDeviceMesh *mesh;
  GPtrArray *placements;        /* the parameter's */
  GPtrArray *partial;           /* Partial(avg) over the data dims */
  gint64 *shape;
  guint ndim;
} UnshardData;

static void
unshard_data_free (gpointer pointer)
{
  UnshardData *data = pointer;

  g_object_unref (data->mesh);
  g_ptr_array_unref (data->placements);
  g_ptr_array_unref (data->partial);
  g_free (data->shape);
  g_free (data);
}

static gboolean
unshard_backward (HpAutogradNode  *node,
                  HpTensor       **grad_outputs,
                  HpTensor       **grad_inputs,
                  GError         **error)
{
  UnshardData *data = _hp_autograd_node_get_data (node);
  HpTensor *grad = grad_outputs[0];
  HpTensor *local = HP_IS_DTENSOR (grad) ? _hp_dtensor_peek_local (HP_DTENSOR (grad)) : grad;
  g_autoptr(HpTensor) alias = hp_tensor_detach (local);
  g_autoptr(HpDTensor) partial = _hp_dtensor_new (alias, data->mesh, data->partial,
                                                  data->shape, data->ndim);
  gboolean was_enabled = hp_grad_mode_is_enabled ();

  hp_grad_mode_set_enabled (FALSE);
  grad_inputs[0] = HP_TENSOR (hp_dtensor_redistribute (partial, data->placements, error));
  hp_grad_mode_set_enabled (was_enabled);
  return grad_inputs[0] != NULL;
}

/* The parameter @shard gathered over the mesh dims in the bit mask
 * @data_dims, on @compute_mesh (its other dims, in order; %NULL when
 * there are none); recorded so that its gradient comes back as the
 * mean over the data dims, in @shard's placements. */
HpTensor *
_hp_fsdp_unshard (HpDTensor     *shard,
                  guint64        data_dims,
                  HpDeviceMesh  *compute_mesh,
                  GError       **error)
{
  HpDeviceMesh *mesh;
  GPtrArray *placements;
  g_autoptr(GPtrArray) gathered_placements = NULL;
  g_autoptr(GPtrArray) compute_placements = NULL;
  g_autoptr(GPtrArray) partial = NULL;
  g_autoptr(HpDTensor) gathered = NULL;
  g_autoptr(HpTensor) local = NULL;
  HpTensor *result;
  const gint64 *shape;
  guint ndim;
  gboolean was_enabled;

  g_return_val_if_fail (HP_IS_DTENSOR (shard), NULL);
  g_return_val_if_fail (compute_mesh == NULL || HP_IS_DEVICE_MESH (compute_mesh), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  mesh = hp_dtensor_get_mesh (shard);
  placements = hp_dtensor_get_placements (shard);
  shape = hp_tensor_get_shape (HP_TENSOR (shard), &ndim);
  gathered_placements = g_ptr_array_new_with_free_func (g_object_unref);
  compute_placements = g_ptr_array_new_with_free_func (g_object_unref);
  partial = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < placements->len; i++)
    {
      HpPlacement *placement = g_ptr_array_index (placements, i);

      if (data_dims & (G_GUINT64_CONSTANT (1) << i))
        {
          g_ptr_array_add (gathered_placements, hp_replicate_new ());
          g_ptr_array_add (partial, hp_partial_new (HP_REDUCE_OP_AVG));
        }
      else
        {
          g_ptr_array_add (gathered_placements, g_object_ref (placement));
          g_ptr_array_add (compute_placements, g_object_ref (placement));
          g_ptr_array_add (partial, g_object_ref (placement));
        }
    }

  was_enabled = hp_grad_mode_is_enabled ();
  hp_grad_mode_set_enabled (FALSE);
  gathered = hp_dtensor_redistribute (shard, gathered_placements, error);
  hp_grad_mode_set_enabled (was_enabled);
  if (gathered == NULL)
    return NULL;

  local = hp_tensor_detach (_hp_dtensor_peek_local (gathered));
  result = compute_mesh != NULL
    ? HP_TENSOR (_hp_dtensor_new (local, compute_mesh, compute_placements, shape, ndim))
    : g_object_ref (local);

  if (_hp_autograd_should_record ((HpTensor * const *) &shard, 1))
    {
      UnshardData *data = g_new0 (UnshardData, 1);

      data->mesh = g_object_ref (mesh);
      data->placements = g_ptr_array_ref (placements);
      data->partial = g_steal_pointer (&partial);
      data->shape = g_memdup2 (shape, sizeof (gint64) * ndim);
      data->ndim = ndim;
      _hp_autograd_record ("fsdp_unshard", unshard_backward, (HpTensor * const *) &shard, 1,
                           result, NULL, 0, data, unshard_data_free);
    }
  return result;
}

/* The tensor that holds @tensor's values on this rank */
static HpTensor *
values_of (HpTensor *tensor)
{
  return HP_IS_DTENSOR (tensor) ? _hp_dtensor_peek_local (HP_DTENSOR (tensor)) : tensor;
}

/* Gives the memory of @full, the gathered form of @shard, back to the
 * system while the tensor (and the aliases the backward keeps of it)
 * stays at its address: the whole pages inside its buffer are dropped
 * (MADV_DONTNEED, so they read as zeros until written) and
 * _hp_fsdp_refill() gathers the values into them again. Nothing is
 * dropped when the gathered tensor is the shard's own memory (a data
 * dim of size 1) or a buffer smaller than a page. */
void
_hp_fsdp_release (HpTensor  *full,
                  HpDTensor *shard)
{
  HpTensor *local = values_of (full);
  guint8 *data = _hp_tensor_data (local);
  gsize size = hp_tensor_get_numel (local) * hp_dtype_get_size (hp_tensor_get_dtype (local));
  gsize page = (gsize) sysconf (_SC_PAGESIZE);
  guintptr start = ((guintptr) data + page - 1) & ~(guintptr) (page - 1);
  guintptr end = ((guintptr) data + size) & ~(guintptr) (page - 1);

  if ((gpointer) data == _hp_tensor_data (_hp_dtensor_peek_local (shard)) || end <= start)
    return;
  (void) madvise ((gpointer) start, end - start, MADV_DONTNEED);
}

/* Gathers @shard again into the memory of @full (see _hp_fsdp_release) */
gboolean
_hp_fsdp_refill (HpTensor   *full,
                 HpDTensor  *shard,
                 guint64     data_dims,
                 GError    **error)
{
  HpTensor *local = values_of (full);
  g_autoptr(HpTensor) again = NULL;
  gboolean was_enabled = hp_grad_mode_is_enabled ();

  if (_hp_tensor_data (local) == _hp_tensor_data (_hp_dtensor_peek_local (shard)))
    return TRUE;
  hp_grad_mode_set_enabled (FALSE);
  again = _hp_fsdp_unshard (shard, data_dims, NULL, error);
  hp_grad_mode_set_enabled (was_enabled);
  if (again == NULL)
    return FALSE;
  memcpy (_hp_tensor_data (local), _hp_tensor_data (again),
          hp_tensor_get_numel (local) * hp_dtype_get_size (hp_tensor_get_dtype (local)));
  return TRUE;
}

typedef struct
{
  GPtrArray *fulls;             /* HpTensor */
  GPtrArray *shards;            /* HpDTensor */
  guint64 data_dims;
} RefillData;

static void
refill_data_free (gpointer pointer)
{
  RefillData *data = pointer;

  g_ptr_array_unref (data->fulls);
  g_ptr_array_unref (data->shards);
  g_free (data);
}

static gboolean
refill_backward (HpAutogradNode  *node,
                 HpTensor       **grad_outputs,
                 HpTensor       **grad_inputs,
                 GError         **error)
{
  RefillData *data = _hp_autograd_node_get_data (node);

  for (guint i = 0; i < data->fulls->len; i++)
    if (!_hp_fsdp_refill (g_ptr_array_index (data->fulls, i), g_ptr_array_index (data->shards, i),
                          data->data_dims, error))
      return FALSE;
  grad_inputs[0] = g_object_ref (grad_outputs[0]);
  return TRUE;
}

/* An alias of @output whose backward, which runs before that of the
 * ops that made @output, gathers each of @shards into @fulls again:
 * the parameters a unit freed after its forward are back before its
 * backward reads them */
HpTensor *
_hp_fsdp_refill_before_backward (HpTensor  *output,
                                 GPtrArray *fulls,
                                 GPtrArray *shards,
                                 guint64    data_dims)
{
  HpTensor *alias = hp_tensor_detach (output);
  RefillData *data = g_new0 (RefillData, 1);

  data->fulls = g_ptr_array_ref (fulls);
  data->shards = g_ptr_array_ref (shards);
  data->data_dims = data_dims;
  _hp_autograd_record ("fsdp_refill", refill_backward, &output, 1, alias, NULL, 0, data,
                       refill_data_free);
  return alias;
}
