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
#include "hp-collective-private.h"
#include "hp-device-mesh-mpi.h"
#include "hp-dtensor-private.h"
#include "hp-fsdp-private.h"
#include "hp-grad-mode.h"
#include "hp-partial.h"
#include "hp-replicate.h"
#include "hp-mpi-private.h"
#include "hp-shard.h"
#include "hp-tensor-private.h"

typedef struct
{
  HpDeviceMesh *mesh;
  GPtrArray *placements;        /* the parameter's */
  GPtrArray *partial;           /* Partial(avg) over the data dims */
  guint64 data_dims;
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

/* The mesh dim of @placements (over @mesh) that alone shards dim 0
 * when it is one of @data_dims and has more than one rank, and no
 * placement is partial: the layouts whose gather and reduce-scatter are
 * one collective over that dim of whole rows; -1 otherwise */
static gint
dim0_data_dim (HpDeviceMesh *mesh,
               GPtrArray    *placements,
               guint64       data_dims)
{
  const gint *mesh_shape = hp_device_mesh_get_shape (mesh, NULL);
  gint d = -1;

  for (guint i = 0; i < placements->len; i++)
    {
      HpPlacement *p = g_ptr_array_index (placements, i);

      if (hp_placement_is_partial (p))
        return -1;
      if (!hp_placement_is_shard (p) || hp_shard_get_dim (HP_SHARD (p)) != 0)
        continue;
      if (d >= 0 || !(data_dims & (G_GUINT64_CONSTANT (1) << i)))
        return -1;
      d = (gint) i;
    }
  return d >= 0 && mesh_shape[d] >= 2 ? d : -1;
}

/* A gradient's reduce-scatter over dp_shard under way: the values of
 * the shard's gradient arrive while the backward goes on */
typedef struct
{
  HpDeviceMesh *mesh;
  HpTensor *send;               /* the gradient of the gathered parameter */
  HpTensor *out;                /* this rank's rows of the sum, then of the mean */
  int *counts;
  gint n;
  MPI_Request request;
} ReduceScatter;

static void
reduce_scatter_free (gpointer pointer)
{
  ReduceScatter *rs = pointer;

  g_object_unref (rs->mesh);
  g_clear_object (&rs->send);
  g_clear_object (&rs->out);
  g_free (rs->counts);
  g_free (rs);
}

static gboolean
reduce_scatter_finish (gpointer   pointer,
                       gboolean   abandon,
                       GError   **error)
{
  ReduceScatter *rs = pointer;

  _hp_mpi_progress_remove (&rs->request);
  if (abandon || !_hp_collective_wait (&rs->request, rs->mesh, HP_COLLECTIVE_REDUCE_SCATTER,
                                       "fsdp_reduce_scatter", error))
    {
      /* the request still uses the mesh's communicators */
      if (abandon)
        _hp_collective_abandon (g_object_ref (rs->mesh));
      _hp_collective_abandon (g_steal_pointer (&rs->send));
      _hp_collective_abandon (g_steal_pointer (&rs->out));
      _hp_collective_abandon (g_steal_pointer (&rs->counts));
      return FALSE;
    }
  _hp_dtensor_divide_for_avg (rs->out, rs->n);
  return TRUE;
}

/* Starts the reduce-scatter of @local, this rank's gradient of the
 * gathered parameter, into the gradient of the shard, which autograd
 * finishes before it reads it (_hp_autograd_defer): the values travel
 * while the backward of the units before goes on. The same numbers as
 * the redistribution of the blocking path, step_reduce_scatter of
 * hp-dtensor-redistribute.c. *@result stays %NULL, and nothing
 * starts, when the layout is not one reduce-scatter of whole rows over
 * dp_shard alone (HSDP, a dim 0 that tensor parallelism shards too):
 * the caller redistributes then. */
static gboolean
reduce_scatter_start (UnshardData  *data,
                      HpTensor     *local,
                      HpTensor    **result,
                      GError      **error)
{
  const gint *mesh_shape = hp_device_mesh_get_shape (data->mesh, NULL);
  const gint *coordinate = hp_device_mesh_get_coordinate (data->mesh, NULL);
  const gint64 *local_shape = hp_tensor_get_shape (local, NULL);
  HpDType dtype = hp_tensor_get_dtype (local);
  gint d = dim0_data_dim (data->mesh, data->placements, data->data_dims);
  gint64 out_shape[HP_TENSOR_MAX_NDIM];
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (HP_COLLECTIVE_REDUCE_SCATTER,
                                                   "fsdp_reduce_scatter");
  g_autoptr(HpPlacement) shard0 = NULL;
  g_autoptr(HpDTensor) grad = NULL;
  ReduceScatter *rs;
  gint64 inner, offset, length;

  *result = NULL;
  if (d < 0 || !hp_dtype_is_floating (dtype) || hp_tensor_get_ndim (local) != data->ndim ||
      local_shape[0] != data->shape[0] || hp_tensor_get_numel (local) > G_MAXINT)
    return TRUE;
  for (guint i = 0; i < data->placements->len; i++)
    if ((gint) i != d && (data->data_dims & (G_GUINT64_CONSTANT (1) << i)) && mesh_shape[i] > 1)
      return TRUE;

  shard0 = hp_shard_new (0);
  call.mesh_dim = d;
  call.dtype = dtype;
  call.shape = data->shape;
  call.ndim = data->ndim;
  call.placements = data->partial;
  call.target = shard0;
  if (!_hp_collective_agree (data->mesh, &call, error))
    return FALSE;

  inner = _hp_shape_numel (local_shape + 1, data->ndim - 1);
  rs = g_new0 (ReduceScatter, 1);
  rs->mesh = g_object_ref (data->mesh);
  rs->send = g_object_ref (local);
  rs->n = mesh_shape[d];
  rs->counts = g_new (int, rs->n);
  for (gint c = 0; c < rs->n; c++)
    {
      _hp_chunk (local_shape[0], rs->n, c, &offset, &length);
      rs->counts[c] = (int) (length * inner);
    }
  _hp_chunk (local_shape[0], rs->n, coordinate[d], &offset, &length);
  memcpy (out_shape, local_shape, data->ndim * sizeof (gint64));
  out_shape[0] = length;
  rs->out = _hp_tensor_new_uninit (dtype, out_shape, data->ndim);
  if (!_hp_mpi_check (MPI_Ireduce_scatter (_hp_tensor_data (local), _hp_tensor_data (rs->out),
                                           rs->counts, _hp_mpi_datatype (dtype), MPI_SUM,
                                           hp_device_mesh_get_dim_comm (data->mesh, d),
                                           &rs->request),
                      "MPI_Ireduce_scatter", error))
    {
      reduce_scatter_free (rs);
      return FALSE;
    }
  /* the ops of the backward that runs meanwhile move it on */
  _hp_mpi_progress_add (&rs->request);
  grad = _hp_dtensor_new (rs->out, data->mesh, data->placements, data->shape, data->ndim);
  if (!_hp_autograd_defer (HP_TENSOR (grad), reduce_scatter_finish, rs, reduce_scatter_free, error))
    return FALSE;
  *result = HP_TENSOR (g_steal_pointer (&grad));
  return TRUE;
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
  g_autoptr(HpTensor) alias = NULL;
  g_autoptr(HpDTensor) partial = NULL;
  gboolean was_enabled;

  if (!reduce_scatter_start (data, local, &grad_inputs[0], error))
    return FALSE;
  if (grad_inputs[0] != NULL)
    return TRUE;
  alias = hp_tensor_detach (local);
  partial = _hp_dtensor_new (alias, data->mesh, data->partial, data->shape, data->ndim);
  was_enabled = hp_grad_mode_is_enabled ();
  hp_grad_mode_set_enabled (FALSE);
  grad_inputs[0] = HP_TENSOR (hp_dtensor_redistribute (partial, data->placements, error));
  hp_grad_mode_set_enabled (was_enabled);
  return grad_inputs[0] != NULL;
}

/* The tensor that holds @tensor's values on this rank */
static HpTensor *
values_of (HpTensor *tensor)
{
  return HP_IS_DTENSOR (tensor) ? _hp_dtensor_peek_local (HP_DTENSOR (tensor)) : tensor;
}

/* The placements of @shard's gathered form (Replicate over the data
 * dims), of the tensor the unit computes with (the other dims only) and
 * of its gradient (Partial(avg) over the data dims) */
static void
unshard_placements (HpDTensor  *shard,
                    guint64     data_dims,
                    GPtrArray **gathered,
                    GPtrArray **compute,
                    GPtrArray **partial)
{
  GPtrArray *placements = hp_dtensor_get_placements (shard);

  *gathered = g_ptr_array_new_with_free_func (g_object_unref);
  *compute = g_ptr_array_new_with_free_func (g_object_unref);
  *partial = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < placements->len; i++)
    {
      HpPlacement *placement = g_ptr_array_index (placements, i);

      if (data_dims & (G_GUINT64_CONSTANT (1) << i))
        {
          g_ptr_array_add (*gathered, hp_replicate_new ());
          g_ptr_array_add (*partial, hp_partial_new (HP_REDUCE_OP_AVG));
        }
      else
        {
          g_ptr_array_add (*gathered, g_object_ref (placement));
          g_ptr_array_add (*compute, g_object_ref (placement));
          g_ptr_array_add (*partial, g_object_ref (placement));
        }
    }
}

/* The tensor a unit computes with, from @gathered, the local values of
 * @shard gathered over the data dims: recorded so that its gradient
 * comes back as the mean over the data dims, in @shard's placements */
static HpTensor *
computed_from (HpDTensor    *shard,
               guint64       data_dims,
               HpTensor     *gathered,
               HpDeviceMesh *compute_mesh,
               GPtrArray    *compute_placements,
               GPtrArray    *partial)
{
  g_autoptr(HpTensor) local = hp_tensor_detach (gathered);
  const gint64 *shape;
  guint ndim;
  HpTensor *result;

  shape = hp_tensor_get_shape (HP_TENSOR (shard), &ndim);
  result = compute_mesh != NULL
    ? HP_TENSOR (_hp_dtensor_new (local, compute_mesh, compute_placements, shape, ndim))
    : g_object_ref (local);

  if (_hp_autograd_should_record ((HpTensor * const *) &shard, 1))
    {
      UnshardData *data = g_new0 (UnshardData, 1);

      data->mesh = g_object_ref (hp_dtensor_get_mesh (shard));
      data->placements = g_ptr_array_ref (hp_dtensor_get_placements (shard));
      data->partial = g_ptr_array_ref (partial);
      data->data_dims = data_dims;
      data->shape = g_memdup2 (shape, sizeof (gint64) * ndim);
      data->ndim = ndim;
      _hp_autograd_record ("fsdp_unshard", unshard_backward, (HpTensor * const *) &shard, 1,
                           result, NULL, 0, data, unshard_data_free);
    }
  return result;
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
  g_autoptr(GPtrArray) gathered_placements = NULL;
  g_autoptr(GPtrArray) compute_placements = NULL;
  g_autoptr(GPtrArray) partial = NULL;
  g_autoptr(HpDTensor) gathered = NULL;
  gboolean was_enabled;

  g_return_val_if_fail (HP_IS_DTENSOR (shard), NULL);
  g_return_val_if_fail (compute_mesh == NULL || HP_IS_DEVICE_MESH (compute_mesh), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  unshard_placements (shard, data_dims, &gathered_placements, &compute_placements, &partial);
  was_enabled = hp_grad_mode_is_enabled ();
  hp_grad_mode_set_enabled (FALSE);
  gathered = hp_dtensor_redistribute (shard, gathered_placements, error);
  hp_grad_mode_set_enabled (was_enabled);
  if (gathered == NULL)
    return NULL;
  return computed_from (shard, data_dims, _hp_dtensor_peek_local (gathered), compute_mesh,
                        compute_placements, partial);
}

/* A gather started ahead of the unit that needs it (prefetch): the
 * same values _hp_fsdp_unshard() gives, by one MPI_Iallgatherv over
 * dp_shard that runs while the ranks compute something else */
struct _HpFsdpGather
{
  HpDTensor *shard;
  guint64 data_dims;
  HpTensor *out;                /* the gathered local values */
  gboolean into;                /* @out is the caller's tensor */
  int *counts;
  int *displs;
  MPI_Request request;
};

static void
gather_abandon (HpFsdpGather *gather)
{
  _hp_collective_abandon (g_steal_pointer (&gather->shard));
  _hp_collective_abandon (g_steal_pointer (&gather->out));
  _hp_collective_abandon (g_steal_pointer (&gather->counts));
  _hp_collective_abandon (g_steal_pointer (&gather->displs));
  g_free (gather);
}

static void
gather_free (HpFsdpGather *gather)
{
  g_object_unref (gather->shard);
  g_object_unref (gather->out);
  g_free (gather->counts);
  g_free (gather->displs);
  g_free (gather);
}

/* Starts gathering @shard over @data_dims, into the values of @into
 * (the tensor _hp_fsdp_release() emptied) or a new tensor. Returns
 * %NULL without an error when the layout is not one all-gather of
 * dim 0 over one mesh dim (another dim also shards dim 0, a partial
 * placement, a message MPI cannot count, nothing to gather): the
 * caller gathers with _hp_fsdp_unshard() then. Agrees with the other
 * ranks first, as every collective of the library does. */
HpFsdpGather *
_hp_fsdp_gather_start (HpDTensor  *shard,
                       guint64     data_dims,
                       HpTensor   *into,
                       GError    **error)
{
  HpDeviceMesh *mesh = hp_dtensor_get_mesh (shard);
  GPtrArray *placements = hp_dtensor_get_placements (shard);
  const gint *coordinate = hp_device_mesh_get_coordinate (mesh, NULL);
  const gint *mesh_shape = hp_device_mesh_get_shape (mesh, NULL);
  HpTensor *local = _hp_dtensor_peek_local (shard);
  HpDType dtype = hp_tensor_get_dtype (local);
  const gint64 *shape, *local_shape;
  gint64 out_shape[HP_TENSOR_MAX_NDIM];
  g_autoptr(HpPlacement) replicate = NULL;
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (HP_COLLECTIVE_ALLGATHERV, "fsdp_prefetch");
  HpFsdpGather *gather;
  gint64 inner, total = 0;
  guint ndim;
  gint d;
  gint n;

  g_return_val_if_fail (HP_IS_DTENSOR (shard), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  d = dim0_data_dim (mesh, placements, data_dims);
  if (d < 0)
    return NULL;

  n = mesh_shape[d];
  shape = hp_tensor_get_shape (HP_TENSOR (shard), &ndim);
  local_shape = hp_tensor_get_shape (local, NULL);
  memcpy (out_shape, local_shape, ndim * sizeof (gint64));
  out_shape[0] = shape[0];
  inner = _hp_shape_numel (local_shape + 1, ndim - 1);
  if (shape[0] * inner > G_MAXINT)
    return NULL;
  if (into != NULL &&
      (hp_tensor_get_numel (values_of (into)) != shape[0] * inner ||
       hp_tensor_get_dtype (values_of (into)) != dtype))
    return NULL;

  replicate = hp_replicate_new ();
  call.mesh_dim = d;
  call.dtype = dtype;
  call.shape = shape;
  call.ndim = ndim;
  call.placements = placements;
  call.target = replicate;
  if (!_hp_collective_agree (mesh, &call, error))
    return NULL;

  gather = g_new0 (HpFsdpGather, 1);
  gather->shard = g_object_ref (shard);
  gather->data_dims = data_dims;
  gather->into = into != NULL;
  gather->out = into != NULL ? g_object_ref (values_of (into))
                             : _hp_tensor_new_uninit (dtype, out_shape, ndim);
  gather->counts = g_new (int, n);
  gather->displs = g_new (int, n);
  for (gint c = 0; c < n; c++)
    {
      gint64 offset, length;

      _hp_chunk (shape[0], n, c, &offset, &length);
      gather->counts[c] = (int) (length * inner);
      gather->displs[c] = (int) total;
      total += length * inner;
    }
  if (!_hp_mpi_check (MPI_Iallgatherv (_hp_tensor_data (local), gather->counts[coordinate[d]],
                                       _hp_mpi_datatype (dtype), _hp_tensor_data (gather->out),
                                       gather->counts, gather->displs, _hp_mpi_datatype (dtype),
                                       hp_device_mesh_get_dim_comm (mesh, d), &gather->request),
                      "MPI_Iallgatherv", error))
    {
      gather_free (gather);
      return NULL;
    }
  /* the ops of the unit that runs meanwhile move it on */
  _hp_mpi_progress_add (&gather->request);
  return gather;
}

/* Waits for @gather (consumed) and gives the tensor the unit computes
 * with, as _hp_fsdp_unshard() does (or a reference to the caller's
 * tensor when it gathered into one) */
HpTensor *
_hp_fsdp_gather_finish (HpFsdpGather  *gather,
                        HpDeviceMesh  *compute_mesh,
                        GError       **error)
{
  g_autoptr(GPtrArray) gathered_placements = NULL;
  g_autoptr(GPtrArray) compute_placements = NULL;
  g_autoptr(GPtrArray) partial = NULL;
  HpTensor *result;

  _hp_mpi_progress_remove (&gather->request);
  if (!_hp_collective_wait (&gather->request, hp_dtensor_get_mesh (gather->shard),
                            HP_COLLECTIVE_ALLGATHERV, "fsdp_prefetch", error))
    {
      gather_abandon (gather);
      return NULL;
    }
  if (gather->into)
    result = g_object_ref (gather->out);
  else
    {
      unshard_placements (gather->shard, gather->data_dims, &gathered_placements,
                          &compute_placements, &partial);
      result = computed_from (gather->shard, gather->data_dims, gather->out, compute_mesh,
                              compute_placements, partial);
    }
  gather_free (gather);
  return result;
}

/* Waits for @gather and forgets its values (a prefetch nobody used) */
void
_hp_fsdp_gather_drop (HpFsdpGather *gather)
{
  g_autoptr(GError) error = NULL;

  if (gather == NULL)
    return;
  _hp_mpi_progress_remove (&gather->request);
  if (!_hp_collective_wait (&gather->request, hp_dtensor_get_mesh (gather->shard),
                            HP_COLLECTIVE_ALLGATHERV, "fsdp_prefetch", &error))
    gather_abandon (gather);
  else
    gather_free (gather);
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

/* The gathering again of one unit's released parameters when its
 * backward begins; with prefetch, that of the unit whose backward comes
 * next (the one whose forward ended before) starts there too */
struct _HpFsdpRefill
{
  GPtrArray *fulls;             /* HpTensor */
  GPtrArray *shards;            /* HpDTensor */
  guint64 data_dims;
  gboolean prefetch;
  HpFsdpGather **gathers;       /* one per full, started ahead, or NULL */
  gboolean started;             /* the gathers were started */
  HpFsdpRefill *previous;       /* the unit whose forward ended before, until this one's backward */
};

static void
refill_free (gpointer pointer)
{
  HpFsdpRefill *refill = pointer;

  for (guint i = 0; i < refill->fulls->len; i++)
    _hp_fsdp_gather_drop (refill->gathers[i]);
  g_free (refill->gathers);
  g_ptr_array_unref (refill->fulls);
  g_ptr_array_unref (refill->shards);
  g_clear_pointer (&refill->previous, _hp_fsdp_refill_unref);
}

HpFsdpRefill *
_hp_fsdp_refill_ref (HpFsdpRefill *refill)
{
  return g_rc_box_acquire (refill);
}

void
_hp_fsdp_refill_unref (HpFsdpRefill *refill)
{
  g_rc_box_release_full (refill, refill_free);
}

/* Starts the gathers of @refill ahead of its backward */
static gboolean
refill_start (HpFsdpRefill  *refill,
              GError       **error)
{
  if (refill->started)
    return TRUE;
  refill->started = TRUE;
  for (guint i = 0; i < refill->fulls->len; i++)
    {
      HpTensor *full = g_ptr_array_index (refill->fulls, i);
      HpDTensor *shard = g_ptr_array_index (refill->shards, i);

      if (_hp_tensor_data (values_of (full)) == _hp_tensor_data (_hp_dtensor_peek_local (shard)))
        continue;
      refill->gathers[i] = _hp_fsdp_gather_start (shard, refill->data_dims, full, error);
      if (refill->gathers[i] == NULL && error != NULL && *error != NULL)
        return FALSE;
    }
  return TRUE;
}

static gboolean
refill_backward (HpAutogradNode  *node,
                 HpTensor       **grad_outputs,
                 HpTensor       **grad_inputs,
                 GError         **error)
{
  HpFsdpRefill *refill = _hp_autograd_node_get_data (node);
  g_autoptr(HpFsdpRefill) previous = g_steal_pointer (&refill->previous);

  refill->started = TRUE;
  for (guint i = 0; i < refill->fulls->len; i++)
    {
      HpFsdpGather *gather = g_steal_pointer (&refill->gathers[i]);

      if (gather != NULL)
        {
          g_autoptr(HpTensor) done = _hp_fsdp_gather_finish (gather, NULL, error);

          if (done == NULL)
            return FALSE;
        }
      else if (!_hp_fsdp_refill (g_ptr_array_index (refill->fulls, i),
                                 g_ptr_array_index (refill->shards, i), refill->data_dims, error))
        return FALSE;
    }
  /* the next unit's parameters travel while this one computes */
  if (refill->prefetch && previous != NULL && !refill_start (previous, error))
    return FALSE;
  grad_inputs[0] = g_object_ref (grad_outputs[0]);
  return TRUE;
}

/* An alias of @output whose backward, which runs before that of the
 * ops that made @output, gathers each of @shards into @fulls again:
 * the parameters a unit freed after its forward are back before its
 * backward reads them. *@chain holds the refill of the unit whose
 * forward ended before this one in the same forward (or %NULL), and is
 * set to this one: with @prefetch, this unit's backward starts that
 * unit's gathers, since its backward comes next. */
HpTensor *
_hp_fsdp_refill_before_backward (HpTensor      *output,
                                 GPtrArray     *fulls,
                                 GPtrArray     *shards,
                                 guint64        data_dims,
                                 gboolean       prefetch,
                                 HpFsdpRefill **chain)
{
  HpTensor *alias = hp_tensor_detach (output);
  HpFsdpRefill *refill = g_rc_box_new0 (HpFsdpRefill);

  refill->fulls = g_ptr_array_ref (fulls);
  refill->shards = g_ptr_array_ref (shards);
  refill->data_dims = data_dims;
  refill->prefetch = prefetch;
  refill->gathers = g_new0 (HpFsdpGather *, fulls->len);
  refill->previous = g_steal_pointer (chain);
  *chain = _hp_fsdp_refill_ref (refill);
  _hp_autograd_record ("fsdp_refill", refill_backward, &output, 1, alias, NULL, 0, refill,
                       (GDestroyNotify) _hp_fsdp_refill_unref);
  return alias;
}
