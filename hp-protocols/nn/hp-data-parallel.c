/* hp-data-parallel.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-autograd-private.h"
#include "hp-collective-private.h"
#include "hp-data-parallel.h"
#include "hp-device-mesh-mpi.h"
#include "hp-dtensor-private.h"
#include "hp-dtensor.h"
#include "hp-error.h"
#include "hp-mpi-private.h"
#include "hp-tensor-private.h"

/* The tensor that holds this rank's values of @grad */
static HpTensor *
local_values (HpTensor *grad)
{
  return HP_IS_DTENSOR (grad) ? _hp_dtensor_peek_local (HP_DTENSOR (grad)) : grad;
}

/* Set on a gradient that the backward averaged already */
#define AVERAGED_KEY "hp-data-parallel-averaged"

/* Multiplies the sum over the replicas by @scale, 1 / their number */
static void
scale_sum (HpTensor *local,
           gdouble   scale)
{
  gpointer data = _hp_tensor_data (local);
  gint64 numel = hp_tensor_get_numel (local);

  if (hp_tensor_get_dtype (local) == HP_DTYPE_FLOAT32)
    for (gint64 j = 0; j < numel; j++)
      ((gfloat *) data)[j] *= (gfloat) scale;
  else
    for (gint64 j = 0; j < numel; j++)
      ((gdouble *) data)[j] *= scale;
}

static gboolean
check_dp_mesh (HpDeviceMesh  *dp_mesh,
               GError       **error)
{
  if (hp_device_mesh_get_ndim (dp_mesh) != 1)
    {
      g_autofree gchar *text = hp_device_mesh_to_string (dp_mesh);

      g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                   "data parallelism needs a 1-D mesh, got %s", text);
      return FALSE;
    }
  return TRUE;
}

/**
 * hp_data_parallel_average_gradients:
 * @params: (element-type HpTensor): the parameters, as
 *   [method@Hp.Module.parameters] gives them
 * @dp_mesh: the 1-D mesh of the ranks that hold replicas of the model
 *   and train on different data
 * @error: return location for a [struct@GLib.Error]
 *
 * Replicated data parallelism (PyTorch's DDP): replaces each
 * parameter's gradient, in place, by its mean over the ranks of
 * @dp_mesh, so that every replica takes the same optimizer step — the
 * step of the whole batch when each rank's loss is the mean over its
 * equal share of it. For a DTensor parameter (tensor parallelism on
 * another mesh dim) the local gradient is averaged: replicas hold the
 * same shards. Parameters without a gradient are skipped, which every
 * rank must agree on, and so are gradients that the backward averaged
 * already ([func@Hp.data_parallel_set_overlap]). One `MPI_Allreduce`
 * per gradient; collective over @dp_mesh.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_MESH][error@Hp.Error] for a mesh that is not
 *   1-D or [HP_ERROR_MPI][error@Hp.Error] when the reduction fails
 *
 * Since: 1.0
 */
gboolean
hp_data_parallel_average_gradients (GPtrArray     *params,
                                    HpDeviceMesh  *dp_mesh,
                                    GError       **error)
{
  MPI_Comm comm;
  gdouble scale;
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (HP_COLLECTIVE_ALLREDUCE, "average_gradients");

  g_return_val_if_fail (params != NULL, FALSE);
  g_return_val_if_fail (HP_IS_DEVICE_MESH (dp_mesh), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_dp_mesh (dp_mesh, error))
    return FALSE;
  if (hp_device_mesh_get_size (dp_mesh) == 1)
    return TRUE;

  comm = hp_device_mesh_get_dim_comm (dp_mesh, 0);
  scale = 1.0 / hp_device_mesh_get_size (dp_mesh);
  for (guint i = 0; i < params->len; i++)
    {
      HpTensor *grad = hp_tensor_get_grad (g_ptr_array_index (params, i));
      HpTensor *local;
      gint64 numel;
      gpointer data;
      MPI_Request request;

      if (grad == NULL || g_object_get_data (G_OBJECT (grad), AVERAGED_KEY) != NULL)
        continue;
      local = local_values (grad);
      numel = hp_tensor_get_numel (local);
      data = _hp_tensor_data (local);
      /* the ranks of a replica group hold equal local shapes */
      call.dtype = hp_tensor_get_dtype (local);
      call.shape = hp_tensor_get_shape (local, &call.ndim);
      if (!_hp_collective_agree (dp_mesh, &call, error) ||
          !_hp_mpi_check (MPI_Iallreduce (MPI_IN_PLACE, data, (int) numel,
                                          _hp_mpi_datatype (hp_tensor_get_dtype (local)),
                                          MPI_SUM, comm, &request),
                          "hp_data_parallel_average_gradients: MPI_Iallreduce", error))
        return FALSE;
      if (!_hp_collective_wait (&request, dp_mesh, HP_COLLECTIVE_ALLREDUCE, "average_gradients",
                                error))
        {
          _hp_collective_abandon (g_object_ref (local));
          return FALSE;
        }
      scale_sum (local, scale);
    }
  return TRUE;
}

/* One gradient's all-reduce under way in a backward */
typedef struct
{
  HpDeviceMesh *dp_mesh;
  HpTensor *send;               /* the backward's gradient, this rank's */
  HpTensor *sum;                /* the replicas' sum, then their mean */
  MPI_Request request;
} Averaging;

static void
averaging_free (gpointer pointer)
{
  Averaging *averaging = pointer;

  g_object_unref (averaging->dp_mesh);
  g_clear_object (&averaging->send);
  g_clear_object (&averaging->sum);
  g_free (averaging);
}

static gboolean
averaging_finish (gpointer   pointer,
                  gboolean   abandon,
                  GError   **error)
{
  Averaging *averaging = pointer;

  _hp_mpi_progress_remove (&averaging->request);
  if (abandon || !_hp_collective_wait (&averaging->request, averaging->dp_mesh,
                                       HP_COLLECTIVE_ALLREDUCE, "average_gradients", error))
    {
      /* the request still uses the mesh's communicator */
      if (abandon)
        _hp_collective_abandon (g_object_ref (averaging->dp_mesh));
      _hp_collective_abandon (g_steal_pointer (&averaging->send));
      _hp_collective_abandon (g_steal_pointer (&averaging->sum));
      return FALSE;
    }
  scale_sum (averaging->sum, 1.0 / hp_device_mesh_get_size (averaging->dp_mesh));
  return TRUE;
}

/* The leaf hook: starts averaging @grad, this rank's whole gradient of
 * a parameter in the backward that runs, into a new tensor that becomes
 * the grad; the backward finishes it before it returns. The same
 * collective and arithmetic as hp_data_parallel_average_gradients(),
 * into another buffer: the backward may still read @grad. */
static HpTensor *
averaging_start (HpTensor  *leaf,
                 HpTensor  *grad,
                 gpointer   data,
                 GError   **error)
{
  HpDeviceMesh *dp_mesh = data;
  HpTensor *local = local_values (grad);
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (HP_COLLECTIVE_ALLREDUCE, "average_gradients");
  g_autoptr(HpTensor) result = NULL;
  Averaging *averaging;

  call.dtype = hp_tensor_get_dtype (local);
  call.shape = hp_tensor_get_shape (local, &call.ndim);
  if (!_hp_collective_agree (dp_mesh, &call, error))
    return NULL;

  averaging = g_new0 (Averaging, 1);
  averaging->dp_mesh = g_object_ref (dp_mesh);
  averaging->send = g_object_ref (local);
  averaging->sum = _hp_tensor_new_uninit (call.dtype, call.shape, call.ndim);
  if (!_hp_mpi_check (MPI_Iallreduce (_hp_tensor_data (local), _hp_tensor_data (averaging->sum),
                                      (int) hp_tensor_get_numel (local),
                                      _hp_mpi_datatype (call.dtype), MPI_SUM,
                                      hp_device_mesh_get_dim_comm (dp_mesh, 0), &averaging->request),
                      "hp_data_parallel_average_gradients: MPI_Iallreduce", error))
    {
      averaging_free (averaging);
      return NULL;
    }
  /* the ops of the rest of the backward move it on */
  _hp_mpi_progress_add (&averaging->request);
  if (HP_IS_DTENSOR (grad))
    {
      const gint64 *shape;
      guint ndim;

      shape = hp_tensor_get_shape (grad, &ndim);
      result = HP_TENSOR (_hp_dtensor_new (averaging->sum, hp_dtensor_get_mesh (HP_DTENSOR (grad)),
                                           hp_dtensor_get_placements (HP_DTENSOR (grad)),
                                           shape, ndim));
    }
  else
    result = g_object_ref (averaging->sum);
  g_object_set_data (G_OBJECT (result), AVERAGED_KEY, GINT_TO_POINTER (1));
  if (!_hp_autograd_defer (result, averaging_finish, averaging, averaging_free, error))
    return NULL;
  (void) leaf;
  return g_steal_pointer (&result);
}

/**
 * hp_data_parallel_set_overlap:
 * @params: (element-type HpTensor): the parameters, as
 *   [method@Hp.Module.parameters] gives them
 * @dp_mesh: the 1-D mesh of the ranks that hold replicas of the model
 * @overlap: whether the backward averages the gradients of @params
 * @error: return location for a [struct@GLib.Error]
 *
 * Overlaps the averaging of [func@Hp.data_parallel_average_gradients]
 * with the backward, as DDP does: with @overlap, each
 * [method@Hp.Tensor.backward] that gives a parameter of @params its
 * gradient (the parameter had none, as after
 * [method@Hp.Optimizer.zero_grad]) starts the non-blocking all-reduce of
 * that gradient over @dp_mesh as soon as the pass has all of it, so
 * that it travels while the backward computes the gradients of the
 * layers before, and returns only when every one of them has arrived.
 * [func@Hp.data_parallel_average_gradients] then leaves those gradients as
 * they are, so a training loop calls it in either case; it still
 * averages a gradient that a later backward added to (accumulation over
 * micro-batches), which gives the same mean up to rounding. The numbers
 * are those of that function, bit for bit, when
 * each step makes one backward. Every rank must make the same choice;
 * the collectives agree and run under the deadline as every collective
 * does, and one that fails fails the backward with
 * [HP_ERROR_MPI][error@Hp.Error], setting no gradient. Without
 * @overlap, the backward leaves the gradients of @params alone again.
 * No collective here; nothing to do on a mesh of one rank.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_MESH][error@Hp.Error] for a
 *   mesh that is not 1-D, changing nothing
 *
 * Since: 1.0
 */
gboolean
hp_data_parallel_set_overlap (GPtrArray     *params,
                              HpDeviceMesh  *dp_mesh,
                              gboolean       overlap,
                              GError       **error)
{
  g_return_val_if_fail (params != NULL, FALSE);
  g_return_val_if_fail (HP_IS_DEVICE_MESH (dp_mesh), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_dp_mesh (dp_mesh, error))
    return FALSE;
  overlap = overlap && hp_device_mesh_get_size (dp_mesh) > 1;
  for (guint i = 0; i < params->len; i++)
    {
      HpTensor *param = g_ptr_array_index (params, i);

      if (overlap)
        _hp_autograd_set_leaf_hook (param, averaging_start, g_object_ref (dp_mesh), g_object_unref);
      else
        _hp_autograd_set_leaf_hook (param, NULL, NULL, NULL);
    }
  return TRUE;
}

/**
 * hp_data_parallel_average_scalar:
 * @dp_mesh: the 1-D data-parallel mesh
 * @value: (inout): this rank's value, replaced by the mean over the ranks
 * @error: return location for a [struct@GLib.Error]
 *
 * Averages a number, such as a loss to print, over the replicas.
 * Collective over @dp_mesh.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_MESH][error@Hp.Error] or [HP_ERROR_MPI][error@Hp.Error]
 *
 * Since: 1.0
 */
gboolean
hp_data_parallel_average_scalar (HpDeviceMesh  *dp_mesh,
                                 gdouble       *value,
                                 GError       **error)
{
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (HP_COLLECTIVE_ALLREDUCE, "average_scalar");

  g_return_val_if_fail (HP_IS_DEVICE_MESH (dp_mesh), FALSE);
  g_return_val_if_fail (value != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  call.dtype = HP_DTYPE_FLOAT64;
  if (!check_dp_mesh (dp_mesh, error) ||
      !_hp_collective_agree (dp_mesh, &call, error))
    return FALSE;
  if (!_hp_collective_allreduce (dp_mesh, hp_device_mesh_get_dim_comm (dp_mesh, 0), value, 1,
                                 MPI_DOUBLE, MPI_SUM, "average_scalar", error))
    return FALSE;
  *value /= hp_device_mesh_get_size (dp_mesh);
  return TRUE;
}
