/* hp-data-parallel.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-collective-private.h"
#include "hp-data-parallel.h"
#include "hp-device-mesh-mpi.h"
#include "hp-dtensor-private.h"
#include "hp-dtensor.h"
#include "hp-error.h"
#include "hp-mpi-private.h"
#include "hp-tensor-private.h"

/* Elements of a gradient reduced and divided at a time: 512 KiB of
 * float32 (1 MiB of float64), half the L2 cache of a core of the
 * machines measured */
#define AVERAGE_PIECE ((gint64) 1 << 17)

/* The tensor that holds this rank's values of @grad */
static HpTensor *
local_values (HpTensor *grad)
{
  return HP_IS_DTENSOR (grad) ? _hp_dtensor_peek_local (HP_DTENSOR (grad)) : grad;
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
 * rank must agree on. Each gradient is summed by `MPI_Allreduce` in
 * pieces of 2^17 elements (512 KiB of float32), each divided by the
 * count while it is in the cache; collective over @dp_mesh.
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
  gint n;
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (HP_COLLECTIVE_ALLREDUCE, "average_gradients");

  g_return_val_if_fail (params != NULL, FALSE);
  g_return_val_if_fail (HP_IS_DEVICE_MESH (dp_mesh), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_dp_mesh (dp_mesh, error))
    return FALSE;

  n = hp_device_mesh_get_size (dp_mesh);
  if (n == 1)
    return TRUE;
  comm = hp_device_mesh_get_dim_comm (dp_mesh, 0);
  for (guint i = 0; i < params->len; i++)
    {
      HpTensor *grad = hp_tensor_get_grad (g_ptr_array_index (params, i));
      HpTensor *local;
      gint64 numel;
      gpointer data;

      if (grad == NULL)
        continue;
      local = local_values (grad);
      numel = hp_tensor_get_numel (local);
      data = _hp_tensor_data (local);
      /* the ranks of a replica group hold equal local shapes */
      call.dtype = hp_tensor_get_dtype (local);
      call.shape = hp_tensor_get_shape (local, &call.ndim);
      /* The agreement, under the deadline, has every rank here with
       * the same dtype and count, so the reduction itself cannot wait
       * for a rank that is elsewhere: it is the blocking call, whose
       * algorithms beat Open MPI's non-blocking in-place all-reduce (a
       * reduction to one rank and a broadcast on fewer than 4 ranks)
       * for gradients of megabytes (bench/README.md, "The cost of the
       * default checks") */
      if (!_hp_collective_agree (dp_mesh, &call, error))
        return FALSE;
      /* In pieces that stay in the cache between the reduction and the
       * division: a gradient of megabytes divided after its whole
       * reduction is read back from memory, which took as long as the
       * reduction itself (bench/README.md, "after the gradient mean in
       * pieces") */
      for (gint64 start = 0; start < numel; start += AVERAGE_PIECE)
        {
          gint64 count = MIN (AVERAGE_PIECE, numel - start);
          gpointer piece = (guint8 *) data + start * hp_dtype_get_size (call.dtype);

          if (!_hp_mpi_check (MPI_Allreduce (MPI_IN_PLACE, piece, (int) count,
                                             _hp_mpi_datatype (call.dtype), MPI_SUM, comm),
                              "hp_data_parallel_average_gradients: MPI_Allreduce", error))
            return FALSE;
          _hp_divide_values (piece, call.dtype, count, n);
        }
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
