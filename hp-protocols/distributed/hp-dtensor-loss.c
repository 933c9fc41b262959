/* hp-dtensor-loss.c: cross entropy over logits sharded on the class dim
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Loss parallelism: each rank holds some classes of every row. The row's
 * log-sum-exp comes from an all-reduced maximum and an all-reduced sum of
 * exponentials, the target's logit from the one rank that holds it (an
 * all-reduced sum), so the loss is exact without gathering the logits.
 * The gradient of each rank's logits is local: (softmax - onehot) * g /
 * count with the global log-sum-exp.
 */

#include "config.h"

#include <math.h>

#include "hp-collective-private.h"
#include "hp-device-mesh-mpi.h"
#include "hp-dtensor-private.h"
#include "hp-error.h"
#include "hp-mpi-private.h"

typedef struct
{
  gint64 ignore_index;
  gint64 first_class;
  gint64 count;
  /* per row: the global log-sum-exp */
  gdouble *lse;
} LossData;

static void
loss_data_free (gpointer data)
{
  LossData *loss = data;

  g_free (loss->lse);
  g_free (loss);
}

static gboolean
loss_backward (HpAutogradNode  *node,
               HpTensor       **grad_outputs,
               HpTensor       **grad_inputs,
               GError         **error)
{
  LossData *loss = _hp_autograd_node_get_data (node);
  HpTensor *logits = _hp_autograd_node_get_saved (node, 0);
  HpTensor *targets = _hp_autograd_node_get_saved (node, 1);
  HpDType dtype = hp_tensor_get_dtype (logits);
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (logits, &ndim);
  gint64 classes = shape[ndim - 1];
  gint64 rows = classes > 0 ? hp_tensor_get_numel (logits) / classes : hp_tensor_get_numel (targets);
  gdouble g = _hp_load_f64 (_hp_tensor_data (grad_outputs[0]), dtype, 0);
  gdouble scale = loss->count > 0 ? g / loss->count : 0.0;
  HpTensor *out = _hp_tensor_new_uninit (dtype, shape, ndim);

  _hp_cross_entropy_backward_rows (dtype, _hp_tensor_data (logits), _hp_tensor_data (targets),
                                   loss->lse, _hp_tensor_data (out), rows, classes,
                                   loss->ignore_index, loss->first_class, scale);

  grad_inputs[0] = out;
  return TRUE;
}

/* The mean cross entropy of the rows whose target is not @ignore_index,
 * where @logits holds classes [first_class, first_class + its last dim)
 * of @n_classes for every row and the other classes live on the other
 * ranks of mesh dim @mesh_dim of @mesh; @targets are whole on every rank.
 * Returns a 0-d tensor, the same on every rank. Collective over that mesh
 * dim; a bad target fails on
 * every rank before any communication. */
HpTensor *
_hp_cross_entropy_class_parallel (HpTensor      *logits,
                                  HpTensor      *targets,
                                  gint64         ignore_index,
                                  gint64         first_class,
                                  gint64         n_classes,
                                  HpDeviceMesh  *mesh,
                                  guint          mesh_dim,
                                  GError       **error)
{
  MPI_Comm comm = hp_device_mesh_get_dim_comm (mesh, mesh_dim);
  HpDType dtype = hp_tensor_get_dtype (logits);
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (logits, &ndim);
  gint64 classes = shape[ndim - 1];
  gint64 rows = hp_tensor_get_numel (targets);
  gsize size = hp_dtype_get_size (dtype);
  const guint8 *x = _hp_tensor_data (logits);
  const gint64 *t = _hp_tensor_data (targets);
  g_autofree gdouble *row_max = g_new (gdouble, MAX (rows, 1));
  g_autofree gdouble *sums = g_new (gdouble, MAX (2 * rows, 1));
  LossData *loss;
  gdouble total = 0.0;
  HpTensor *out;
  HpTensor *inputs[2] = { logits, targets };

  for (gint64 r = 0; r < rows; r++)
    if (t[r] != ignore_index && (t[r] < 0 || t[r] >= n_classes))
      {
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "cross_entropy: target %" G_GINT64_FORMAT " is outside [0, %"
                     G_GINT64_FORMAT ")", t[r], n_classes);
        return NULL;
      }

  if (rows > G_MAXINT / 2)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "cross_entropy: %" G_GINT64_FORMAT " rows are more than MPI can count", rows);
      return NULL;
    }

  for (gint64 r = 0; r < rows; r++)
    row_max[r] = _hp_row_max (dtype, x + r * classes * size, classes);
  if (!_hp_collective_allreduce (mesh, comm, row_max, (int) rows, MPI_DOUBLE, MPI_MAX,
                                 "cross_entropy", error))
    return NULL;

  /* per row: the sum of exponentials and the target's logit */
  for (gint64 r = 0; r < rows; r++)
    {
      const guint8 *row = x + r * classes * size;
      gint64 local = t[r] - first_class;

      sums[2 * r] = _hp_row_exp_sum (dtype, row, classes, row_max[r]);
      sums[2 * r + 1] = local >= 0 && local < classes ? _hp_load_f64 (row, dtype, local) : 0.0;
    }
  if (!_hp_collective_allreduce (mesh, comm, sums, (int) (2 * rows), MPI_DOUBLE, MPI_SUM,
                                 "cross_entropy", error))
    return NULL;

  loss = g_new0 (LossData, 1);
  loss->ignore_index = ignore_index;
  loss->first_class = first_class;
  loss->lse = g_new (gdouble, MAX (rows, 1));
  for (gint64 r = 0; r < rows; r++)
    {
      loss->lse[r] = row_max[r] + log (sums[2 * r]);
      if (t[r] == ignore_index)
        continue;
      total += loss->lse[r] - sums[2 * r + 1];
      loss->count++;
    }

  out = _hp_tensor_new_uninit (dtype, NULL, 0);
  _hp_store_f64 (_hp_tensor_data (out), dtype, 0, loss->count > 0 ? total / loss->count : NAN);
  _hp_autograd_record ("cross_entropy", loss_backward, inputs, 1, out, inputs, 2,
                       loss, loss_data_free);
  return out;
}
