/* hp-clip-grad.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>

#include "hp-collective-private.h"
#include "hp-clip-grad.h"
#include "hp-device-mesh-mpi.h"
#include "hp-dtensor-private.h"
#include "hp-error.h"
#include "hp-grad-mode.h"
#include "hp-mpi-private.h"
#include "hp-tensor-ops.h"

/* The contributions of the gradients laid out the same way: over @mesh,
 * split across the mesh dims in @dims (bit d for mesh dim d), so that
 * the whole contribution is the sum (or max) of the ranks' values over
 * those dims. Plain gradients and those only replicated have no mesh
 * dims to reduce over. */
typedef struct
{
  HpDeviceMesh *mesh;
  guint64 dims;
  gdouble value;
} Group;

/* What one gradient adds to the norm: the largest absolute value for
 * the infinity norm, else the sum of the absolute values to the power
 * @norm_type */
static gdouble
local_contribution (HpTensor *grad,
                    gdouble   norm_type)
{
  HpDType dtype = hp_tensor_get_dtype (grad);
  gint64 n = hp_tensor_get_numel (grad);
  gconstpointer data;
  gdouble total = 0.0;

  if (n == 0)
    return 0.0;

  data = _hp_tensor_data (grad);
  for (gint64 i = 0; i < n; i++)
    {
      gdouble x = fabs (_hp_load_f64 (data, dtype, i));

      if (isinf (norm_type))
        total = MAX (total, x);
      else if (norm_type == 2.0)
        total += x * x;
      else if (norm_type == 1.0)
        total += x;
      else
        total += pow (x, norm_type);
    }
  return total;
}

static gdouble
combine (gdouble a,
         gdouble b,
         gdouble norm_type)
{
  return isinf (norm_type) ? MAX (a, b) : a + b;
}

/* Reduces @value over mesh dim @d of @mesh. A sum is gathered and added
 * up in coordinate order, so every rank gets the same bits. */
static gboolean
reduce_over_dim (HpDeviceMesh  *mesh,
                 guint          d,
                 gdouble        norm_type,
                 gdouble       *value,
                 GError       **error)
{
  MPI_Comm comm = hp_device_mesh_get_dim_comm (mesh, d);
  gint n = hp_device_mesh_get_shape (mesh, NULL)[d];
  g_autofree gdouble *values = NULL;
  g_autofree gdouble *mine = NULL;
  MPI_Request request;
  gdouble total = 0.0;
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (isinf (norm_type) ? HP_COLLECTIVE_ALLREDUCE
                                                                     : HP_COLLECTIVE_ALLGATHER,
                                                   "clip_grad_norm");

  call.mesh_dim = (gint) d;
  call.dtype = HP_DTYPE_FLOAT64;
  if (!_hp_collective_agree (mesh, &call, error))
    return FALSE;
  if (isinf (norm_type))
    return _hp_collective_allreduce (mesh, comm, value, 1, MPI_DOUBLE, MPI_MAX, "clip_grad_norm",
                                     error);

  /* on the heap: a gather given up on may still use them */
  mine = g_memdup2 (value, sizeof *value);
  values = g_new (gdouble, n);
  if (!_hp_mpi_check (MPI_Iallgather (mine, 1, MPI_DOUBLE, values, 1, MPI_DOUBLE, comm, &request),
                      "MPI_Iallgather", error))
    return FALSE;
  if (!_hp_collective_wait (&request, mesh, HP_COLLECTIVE_ALLGATHER, "clip_grad_norm", error))
    {
      _hp_collective_abandon (g_steal_pointer (&mine));
      _hp_collective_abandon (g_steal_pointer (&values));
      return FALSE;
    }
  for (gint r = 0; r < n; r++)
    total += values[r];
  *value = total;
  return TRUE;
}

static Group *
find_group (GArray       *groups,
            HpDeviceMesh *mesh,
            guint64       dims)
{
  for (guint i = 0; i < groups->len; i++)
    {
      Group *group = &g_array_index (groups, Group, i);

      if (group->dims == dims &&
          (group->mesh == mesh ||
           (group->mesh != NULL && mesh != NULL && hp_device_mesh_equal (group->mesh, mesh))))
        return group;
    }
  return NULL;
}

/* The mesh dims over which the local parts of @grad are pieces of the
 * whole: those where it is sharded and that have more than one rank */
static guint64
shard_dims (HpDTensor *grad)
{
  GPtrArray *placements = hp_dtensor_get_placements (grad);
  const gint *mesh_shape = hp_device_mesh_get_shape (hp_dtensor_get_mesh (grad), NULL);
  guint64 dims = 0;

  for (guint d = 0; d < placements->len; d++)
    if (hp_placement_is_shard (g_ptr_array_index (placements, d)) && mesh_shape[d] > 1)
      dims |= G_GUINT64_CONSTANT (1) << d;
  return dims;
}

/* @grad times @factor, with the layout of @grad */
static HpTensor *
scale_gradient (HpTensor  *grad,
                gdouble    factor,
                GError   **error)
{
  g_autoptr(HpTensor) scaled = NULL;
  HpDTensor *dgrad;
  guint ndim;
  const gint64 *shape;

  if (!HP_IS_DTENSOR (grad))
    return hp_tensor_scale (grad, factor, error);

  dgrad = HP_DTENSOR (grad);
  scaled = hp_tensor_scale (_hp_dtensor_peek_local (dgrad), factor, error);
  if (scaled == NULL)
    return NULL;
  shape = hp_tensor_get_shape (grad, &ndim);
  return HP_TENSOR (_hp_dtensor_new (scaled, hp_dtensor_get_mesh (dgrad),
                                     hp_dtensor_get_placements (dgrad), shape, ndim));
}

static gdouble
total_norm (GPtrArray  *parameters,
            gdouble     norm_type,
            GError    **error)
{
  g_autoptr(GArray) groups = g_array_new (FALSE, FALSE, sizeof (Group));
  gdouble total = 0.0;

  for (guint i = 0; i < parameters->len; i++)
    {
      HpTensor *grad = hp_tensor_get_grad (g_ptr_array_index (parameters, i));
      HpDeviceMesh *mesh = NULL;
      HpTensor *local = grad;
      guint64 dims = 0;
      Group *group;

      if (grad == NULL)
        continue;
      if (HP_IS_DTENSOR (grad))
        {
          dims = shard_dims (HP_DTENSOR (grad));
          local = _hp_dtensor_peek_local (HP_DTENSOR (grad));
          if (dims != 0)
            mesh = hp_dtensor_get_mesh (HP_DTENSOR (grad));
        }

      group = find_group (groups, mesh, dims);
      if (group == NULL)
        {
          Group fresh = { mesh, dims, 0.0 };

          g_array_append_val (groups, fresh);
          group = &g_array_index (groups, Group, groups->len - 1);
        }
      group->value = combine (group->value, local_contribution (local, norm_type), norm_type);
    }

  /* every rank holds the same parameters in the same order, so the
   * groups and their collectives come in the same order everywhere */
  for (guint i = 0; i < groups->len; i++)
    {
      Group *group = &g_array_index (groups, Group, i);

      for (guint d = 0; group->mesh != NULL && d < hp_device_mesh_get_ndim (group->mesh); d++)
        if ((group->dims & (G_GUINT64_CONSTANT (1) << d)) &&
            !reduce_over_dim (group->mesh, d, norm_type, &group->value, error))
          return -1.0;
      total = combine (total, group->value, norm_type);
    }

  if (isinf (norm_type))
    return total;
  if (norm_type == 2.0)
    return sqrt (total);
  if (norm_type == 1.0)
    return total;
  return pow (total, 1.0 / norm_type);
}

/**
 * hp_clip_grad_norm:
 * @parameters: (element-type HpTensor): the parameters whose gradients
 *   to clip, usually those of [method@Hp.Module.parameters] or
 *   [method@Hp.Optimizer.get_parameters]
 * @max_norm: the largest norm the gradients may have together, 0 or
 *   more
 * @norm_type: the p of the p-norm: 2 for the Euclidean norm, any
 *   positive value, or infinity (`INFINITY`) for the largest absolute
 *   value
 * @error: return location for a [struct@GLib.Error]
 *
 * Clips the gradients of @parameters by their global norm, as
 * `torch.nn.utils.clip_grad_norm_` does: computes the norm of all the
 * gradients together, as if they were one vector, and when
 * `max_norm / (norm + 1e-6)` is below 1, multiplies every gradient by
 * it. Parameters without a gradient are ignored.
 *
 * The norm is global: the gradient of a [class@Hp.DTensor] parameter counts as
 * the whole tensor (its full_tensor), each element once, whatever its
 * placements. Its local parts are summed across the mesh dims where it
 * is sharded and not across those where it is replicated. A plain
 * gradient counts as one copy, the same on every rank. The result is
 * the same, to the bit, on every rank, and equals the norm of the whole
 * gradients on one rank up to rounding. Collective: every rank of the
 * meshes of the gradients must call it with the same parameters in the
 * same order. The sums are in double precision.
 *
 * The clipped gradients are new tensors set with [method@Hp.Tensor.set_grad],
 * DTensors with the placements of the gradients they replace: the old
 * gradient tensors are not written, since a gradient may share its
 * buffer with other tensors (an earlier gradient, or the tensor given
 * to [method@Hp.Tensor.backward]).
 *
 * A gradient that is not finite gives a norm that is not finite; an
 * infinite norm scales the gradients by 0 and a NaN norm makes them NaN,
 * as in PyTorch.
 *
 * Returns: the total norm of the gradients before clipping, or -1 with
 *   @error set: [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for a negative or NaN
 *   @max_norm or a @norm_type that is not positive,
 *   [HP_ERROR_PLACEMENT][error@Hp.Error] for a DTensor gradient with a `Partial`
 *   placement (reduce it first), [HP_ERROR_MPI][error@Hp.Error] if a collective fails.
 *   No gradient changes then.
 *
 * Since: 1.0
 */
gdouble
hp_clip_grad_norm (GPtrArray  *parameters,
                   gdouble     max_norm,
                   gdouble     norm_type,
                   GError    **error)
{
  g_autoptr(GPtrArray) scaled = NULL;
  gboolean was_enabled;
  gdouble norm, factor;

  g_return_val_if_fail (parameters != NULL, -1.0);
  g_return_val_if_fail (error == NULL || *error == NULL, -1.0);

  if (!(max_norm >= 0.0))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "hp_clip_grad_norm: max_norm must be 0 or more, not %g", max_norm);
      return -1.0;
    }
  if (!(norm_type > 0.0))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "hp_clip_grad_norm: norm_type must be positive (2 for the Euclidean "
                   "norm, infinity for the largest absolute value), not %g", norm_type);
      return -1.0;
    }

  for (guint i = 0; i < parameters->len; i++)
    {
      HpTensor *param = g_ptr_array_index (parameters, i);
      HpTensor *grad;

      g_return_val_if_fail (HP_IS_TENSOR (param), -1.0);
      grad = hp_tensor_get_grad (param);
      if (grad != NULL && HP_IS_DTENSOR (grad) &&
          _hp_placements_have_partial (hp_dtensor_get_placements (HP_DTENSOR (grad))))
        {
          g_autofree gchar *text = hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (grad)));

          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "hp_clip_grad_norm: the gradient of parameter %u has placements %s: "
                       "reduce a Partial gradient (hp_dtensor_redistribute()) before clipping",
                       i, text);
          return -1.0;
        }
    }

  norm = total_norm (parameters, norm_type, error);
  if (norm < 0.0)
    return -1.0;

  factor = max_norm / (norm + 1e-6);
  if (factor >= 1.0)
    return norm;

  /* every product first, so that an error leaves all gradients as
   * they were */
  was_enabled = hp_grad_mode_is_enabled ();
  hp_grad_mode_set_enabled (FALSE);
  scaled = g_ptr_array_new_full (parameters->len, _hp_object_unref_nullable);
  for (guint i = 0; i < parameters->len; i++)
    {
      HpTensor *grad = hp_tensor_get_grad (g_ptr_array_index (parameters, i));
      HpTensor *product = NULL;

      if (grad != NULL && (product = scale_gradient (grad, factor, error)) == NULL)
        {
          hp_grad_mode_set_enabled (was_enabled);
          return -1.0;
        }
      g_ptr_array_add (scaled, product);
    }
  hp_grad_mode_set_enabled (was_enabled);

  for (guint i = 0; i < parameters->len; i++)
    if (g_ptr_array_index (scaled, i) != NULL)
      hp_tensor_set_grad (g_ptr_array_index (parameters, i), g_ptr_array_index (scaled, i));
  return norm;
}
