/* hp-dtensor.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-collective-private.h"
#include "hp-device-mesh-mpi.h"
#include "hp-dtensor-private.h"
#include "hp-error.h"
#include "hp-grad-mode.h"
#include "hp-init.h"
#include "hp-mpi-private.h"
#include "hp-tensor-ops.h"

/**
 * HpDTensor:
 *
 * A tensor laid out over a [class@Hp.DeviceMesh]: one [class@Hp.Placement] per mesh dim
 * says whether the tensor is split along one of its dims ([class@Hp.Shard]),
 * copied whole ([class@Hp.Replicate]) or held as partial values still to be
 * reduced ([class@Hp.Partial]) across that mesh dim.
 *
 * The shape and dtype of a DTensor, as [class@Hp.Tensor] reports them, are those
 * of the whole (global) tensor; each rank holds its own part, the local
 * tensor. Shards are cut like `torch.chunk`, so uneven sizes and empty
 * pieces on trailing ranks are exact.
 *
 * Every tensor op accepts DTensors and returns a DTensor. Moving data
 * between layouts ([method@Hp.DTensor.redistribute]) uses MPI collectives on the
 * mesh dims' communicators; it, [func@Hp.DTensor.distribute],
 * [ctor@Hp.DTensor.new_from_local], [method@Hp.DTensor.get_local] and
 * [method@Hp.DTensor.full_tensor] are differentiable, and the gradient of a
 * DTensor is a DTensor with its placements (Partial ones become
 * Replicate).
 *
 * Calls that communicate are collective: every rank of the mesh must make
 * them in the same order with the same layouts. Errors that depend only on
 * such arguments are raised on every rank before any communication, so
 * no rank is left waiting.
 *
 * Since: 1.0
 */

struct _HpDTensor
{
  HpTensor parent_instance;

  HpTensor *local;
  HpDeviceMesh *mesh;
  GPtrArray *placements;
};

G_DEFINE_FINAL_TYPE (HpDTensor, hp_dtensor, HP_TYPE_TENSOR)

enum {
  PROP_0,
  PROP_MESH,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_dtensor_finalize (GObject *object)
{
  HpDTensor *self = HP_DTENSOR (object);

  g_clear_object (&self->local);
  g_clear_object (&self->mesh);
  g_clear_pointer (&self->placements, g_ptr_array_unref);

  G_OBJECT_CLASS (hp_dtensor_parent_class)->finalize (object);
}

static void
hp_dtensor_get_property (GObject    *object,
                         guint       prop_id,
                         GValue     *value,
                         GParamSpec *pspec)
{
  HpDTensor *self = HP_DTENSOR (object);

  switch (prop_id)
    {
    case PROP_MESH:
      g_value_set_object (value, self->mesh);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static gchar *
hp_dtensor_to_string_vfunc (HpTensor *tensor)
{
  HpDTensor *self = HP_DTENSOR (tensor);
  g_autofree gchar *local = hp_tensor_to_string (self->local);
  g_autofree gchar *mesh = hp_device_mesh_to_string (self->mesh);
  g_autofree gchar *placements = hp_placements_to_string (self->placements);
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (tensor, &ndim);
  g_autofree gchar *shape_str = _hp_shape_to_string (shape, ndim);

  return g_strdup_printf ("DTensor(local_tensor=%s, device_mesh=%s, placements=%s, shape=%s)",
                          local, mesh, placements, shape_str);
}

static HpTensor *
hp_dtensor_detach_vfunc (HpTensor *tensor)
{
  HpDTensor *self = HP_DTENSOR (tensor);
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (tensor, &ndim);

  return HP_TENSOR (_hp_dtensor_new (self->local, self->mesh, self->placements, shape, ndim));
}

static HpTensor *
hp_dtensor_new_ones_like_vfunc (HpTensor *tensor)
{
  HpDTensor *self = HP_DTENSOR (tensor);
  guint ndim, local_ndim;
  const gint64 *shape = hp_tensor_get_shape (tensor, &ndim);
  const gint64 *local_shape = hp_tensor_get_shape (self->local, &local_ndim);
  g_autoptr(HpTensor) ones = hp_tensor_new_ones (hp_tensor_get_dtype (tensor), local_shape, local_ndim);
  g_autoptr(GPtrArray) placements = _hp_placements_for_grad (self->placements);

  return HP_TENSOR (_hp_dtensor_new (ones, self->mesh, placements, shape, ndim));
}

static void
hp_dtensor_class_init (HpDTensorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  HpTensorClass *tensor_class = HP_TENSOR_CLASS (klass);

  object_class->finalize = hp_dtensor_finalize;
  object_class->get_property = hp_dtensor_get_property;

  tensor_class->to_string = hp_dtensor_to_string_vfunc;
  tensor_class->detach = hp_dtensor_detach_vfunc;
  tensor_class->new_ones_like = hp_dtensor_new_ones_like_vfunc;
  tensor_class->dispatch = _hp_dtensor_dispatch;

  /**
   * HpDTensor:mesh:
   *
   * The device mesh the tensor is laid out over.
   *
   * Since: 1.0
   */
  properties[PROP_MESH] =
    g_param_spec_object ("mesh", NULL, NULL,
                         HP_TYPE_DEVICE_MESH,
                         (G_PARAM_READABLE |
                          G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_dtensor_init (HpDTensor *self)
{
}

HpDTensor *
_hp_dtensor_new (HpTensor     *local,
                 HpDeviceMesh *mesh,
                 GPtrArray    *placements,
                 const gint64 *shape,
                 guint         ndim)
{
  HpDTensor *self = HP_DTENSOR (_hp_tensor_new_meta (HP_TYPE_DTENSOR, hp_tensor_get_dtype (local),
                                                     shape, ndim));

  g_return_val_if_fail (hp_tensor_is_leaf (local) && !hp_tensor_get_requires_grad (local), self);

  self->local = g_object_ref (local);
  self->mesh = g_object_ref (mesh);
  self->placements = g_ptr_array_ref (placements);
  return self;
}

HpTensor *
_hp_dtensor_peek_local (HpDTensor *self)
{
  return self->local;
}

/* What the backward functions of this file keep: the layout of one side */
typedef struct
{
  HpDeviceMesh *mesh;
  GPtrArray *placements;
  guint ndim;
  gint64 shape[HP_TENSOR_MAX_NDIM];
  /* get_local: mesh dims over which the local gradients are summed */
  guint64 sum_dims;
} Layout;

static Layout *
layout_new (HpDeviceMesh *mesh,
            GPtrArray    *placements,
            const gint64 *shape,
            guint         ndim)
{
  Layout *layout = g_new0 (Layout, 1);

  layout->mesh = g_object_ref (mesh);
  layout->placements = g_ptr_array_ref (placements);
  layout->ndim = ndim;
  if (ndim > 0)
    memcpy (layout->shape, shape, ndim * sizeof (gint64));
  return layout;
}

static void
layout_free (gpointer data)
{
  Layout *layout = data;

  g_object_unref (layout->mesh);
  g_ptr_array_unref (layout->placements);
  g_free (layout);
}

static gboolean
require_dtensor_grad (const gchar  *node,
                      HpTensor     *grad,
                      GError      **error)
{
  if (!HP_IS_DTENSOR (grad))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "%s backward: the gradient of a distributed tensor must be an "
                   "HpDTensor, got a plain HpTensor", node);
      return FALSE;
    }
  return TRUE;
}

/* Records @node_name on @output with the single @input (may be NULL),
 * when @requires_grad says so. Unlike ordinary ops, the node is recorded
 * even where @input is NULL or needs no gradient, so that every rank
 * builds the same graph and runs the same collectives in backward. */
static void
record (const gchar    *node_name,
        HpBackwardFunc  backward,
        HpTensor       *input,
        HpTensor       *output,
        gboolean        requires_grad,
        Layout         *layout)
{
  g_autoptr(HpAutogradNode) node = NULL;

  if (!requires_grad || !hp_grad_mode_is_enabled ())
    {
      layout_free (layout);
      return;
    }

  node = _hp_autograd_node_new (node_name, backward, &input, 1, 1);
  _hp_autograd_node_set_data (node, layout, layout_free);
  _hp_autograd_node_set_output (node, output, 0);
}

static gboolean
check_mesh_and_placements (const gchar   *op,
                           HpDeviceMesh  *mesh,
                           GPtrArray     *placements,
                           GError       **error)
{
  if (placements->len != hp_device_mesh_get_ndim (mesh))
    {
      g_autofree gchar *text = hp_placements_to_string (placements);

      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "%s: %u placements %s given for a mesh of %u dims",
                   op, placements->len, text, hp_device_mesh_get_ndim (mesh));
      return FALSE;
    }
  return TRUE;
}

/* distribute */

static gboolean
distribute_backward (HpAutogradNode  *node,
                     HpTensor       **grad_outputs,
                     HpTensor       **grad_inputs,
                     GError         **error)
{
  if (!require_dtensor_grad ("distribute", grad_outputs[0], error))
    return FALSE;

  /* collective: every rank gathers, whether or not it has an input */
  grad_inputs[0] = hp_dtensor_full_tensor (HP_DTENSOR (grad_outputs[0]), error);
  return grad_inputs[0] != NULL;
}

/* The mesh rank whose coordinate on every dim is @source */
static gint
source_rank (HpDeviceMesh *mesh,
             gint          source)
{
  guint ndim;
  const gint *shape = hp_device_mesh_get_shape (mesh, &ndim);
  gint rank = 0;

  for (guint d = 0; d < ndim; d++)
    rank = rank * shape[d] + source;
  return rank;
}

/* The ranks agree on a collective of @caller */
static gboolean
agree_on (HpDeviceMesh  *mesh,
          HpCollective   op,
          const gchar   *caller,
          gint           mesh_dim,
          gint           dtype,
          const gint64  *shape,
          guint          ndim,
          GPtrArray     *placements,
          GError       **error)
{
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (op, caller);

  call.mesh_dim = mesh_dim;
  call.dtype = dtype;
  call.shape = shape;
  call.ndim = ndim;
  call.placements = placements;
  return _hp_collective_agree (mesh, &call, error);
}

/* One scatter or broadcast along mesh dim @d from coordinate @source, of
 * the part the ranks hold after the dims before @d. */
static gboolean
distribute_step (HpTensor      **part,
                 HpDType         dtype,
                 const gint64   *shape,
                 guint           ndim,
                 HpDeviceMesh   *mesh,
                 GPtrArray      *placements,
                 guint           d,
                 gint            source,
                 GError        **error)
{
  const gint *mesh_shape = hp_device_mesh_get_shape (mesh, NULL);
  const gint *coordinate = hp_device_mesh_get_coordinate (mesh, NULL);
  HpPlacement *placement = g_ptr_array_index (placements, d);
  MPI_Comm comm = hp_device_mesh_get_dim_comm (mesh, d);
  MPI_Datatype type = _hp_mpi_datatype (dtype);
  gsize elem = hp_dtype_get_size (dtype);
  gint n = mesh_shape[d];
  gboolean is_root = coordinate[d] == source;
  gint64 stage[HP_TENSOR_MAX_NDIM];
  g_autoptr(HpTensor) received = NULL;

  for (guint k = 0; k < ndim; k++)
    stage[k] = _hp_layout_level_size (shape, placements, mesh, coordinate, d, k, NULL);

  if (hp_placement_is_replicate (placement))
    {
      gint64 numel = _hp_shape_numel (stage, ndim);
      MPI_Request request;

      if (numel > G_MAXINT)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                       "distribute: a message of %" G_GINT64_FORMAT " elements is more "
                       "than MPI can count", numel);
          return FALSE;
        }
      if (!is_root)
        *part = _hp_tensor_new_uninit (dtype, stage, ndim);
      if (!_hp_mpi_check (MPI_Ibcast (_hp_tensor_data (*part), (int) numel, type, source, comm,
                                      &request),
                          "MPI_Ibcast", error))
        return FALSE;
      if (_hp_collective_wait (&request, mesh, HP_COLLECTIVE_BCAST, "distribute", error))
        return TRUE;
      _hp_collective_abandon (g_object_ref (*part));
      return FALSE;
    }
  else
    {
      guint k = hp_shard_get_dim (HP_SHARD (placement));
      gint64 outer = _hp_shape_numel (stage, k);
      gint64 inner = _hp_shape_numel (stage + k + 1, ndim - k - 1);
      g_autofree int *counts = g_new (int, n);
      g_autofree int *displs = g_new (int, n);
      g_autofree guint8 *packed = NULL;
      gconstpointer send = NULL;
      gint64 total = 0, offset, length;
      gint64 mine[HP_TENSOR_MAX_NDIM];
      MPI_Request request;

      if (_hp_shape_numel (stage, ndim) > G_MAXINT)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                       "distribute: a message of %" G_GINT64_FORMAT " elements is more "
                       "than MPI can count", _hp_shape_numel (stage, ndim));
          return FALSE;
        }

      for (gint c = 0; c < n; c++)
        {
          _hp_chunk (stage[k], n, c, &offset, &length);
          counts[c] = (int) (outer * length * inner);
          displs[c] = (int) total;
          total += counts[c];
        }

      if (is_root)
        {
          if (outer == 1)
            send = _hp_tensor_data (*part);
          else
            {
              /* each rank's piece as one contiguous block */
              packed = g_malloc (MAX (total, 1) * elem);
              for (gint c = 0; c < n; c++)
                {
                  gint64 offsets[HP_TENSOR_MAX_NDIM] = { 0 };
                  gint64 lengths[HP_TENSOR_MAX_NDIM];
                  g_autoptr(HpTensor) piece = NULL;

                  memcpy (lengths, stage, ndim * sizeof (gint64));
                  _hp_chunk (stage[k], n, c, &offsets[k], &lengths[k]);
                  piece = _hp_tensor_copy_region (*part, offsets, lengths);
                  memcpy (packed + elem * displs[c], _hp_tensor_data (piece), elem * counts[c]);
                }
              send = packed;
            }
        }

      memcpy (mine, stage, ndim * sizeof (gint64));
      _hp_chunk (stage[k], n, coordinate[d], &offset, &mine[k]);
      received = _hp_tensor_new_uninit (dtype, mine, ndim);
      if (!_hp_mpi_check (MPI_Iscatterv (send, counts, displs, type, _hp_tensor_data (received),
                                         counts[coordinate[d]], type, source, comm, &request),
                          "MPI_Iscatterv", error))
        return FALSE;
      if (!_hp_collective_wait (&request, mesh, HP_COLLECTIVE_SCATTERV, "distribute", error))
        {
          /* MPI may still use every buffer of the scatter */
          if (*part != NULL)
            _hp_collective_abandon (g_object_ref (*part));
          _hp_collective_abandon (g_steal_pointer (&received));
          _hp_collective_abandon (g_steal_pointer (&packed));
          _hp_collective_abandon (g_steal_pointer (&counts));
          _hp_collective_abandon (g_steal_pointer (&displs));
          return FALSE;
        }

      g_clear_object (part);
      *part = g_steal_pointer (&received);
      return TRUE;
    }
}

/**
 * hp_dtensor_distribute:
 * @tensor: (nullable): the whole tensor; may be %NULL on ranks that are
 *   not the source when @src_data_rank is not -1
 * @mesh: the device mesh
 * @placements: (element-type HpPlacement): one placement per mesh dim,
 *   [class@Hp.Shard] or [class@Hp.Replicate]
 * @src_data_rank: the coordinate, on every mesh dim, of the rank whose
 *   @tensor is distributed; or -1 for every rank to cut its own part out
 *   of its own @tensor without communication
 * @error: return location for a [struct@GLib.Error]
 *
 * Lays a tensor out over @mesh. Mesh dims are processed in order: along
 * mesh dim d, the rank at coordinate @src_data_rank scatters the pieces
 * of a [class@Hp.Shard] (`MPI_Scatterv`, uneven pieces exact) or broadcasts a
 * [class@Hp.Replicate]. The source rank is the one whose coordinate is
 * @src_data_rank on every mesh dim; only it needs @tensor, and the others
 * learn the shape and dtype from it. A rank never holds more than its
 * part and the piece it passes on.
 *
 * The result requires gradients when the source's @tensor does; its
 * gradient flows back to @tensor as the whole gradient. Collective over
 * @mesh unless @src_data_rank is -1.
 *
 * Returns: (transfer full): the distributed tensor, or %NULL with
 *   [HP_ERROR_PLACEMENT][error@Hp.Error] (wrong number of placements, a [class@Hp.Partial], a shard
 *   dim out of range) or [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] (no tensor on the
 *   source, a bad @src_data_rank), the same on every rank
 *
 * Since: 1.0
 */
HpDTensor *
hp_dtensor_distribute (HpTensor      *tensor,
                       HpDeviceMesh  *mesh,
                       GPtrArray     *placements,
                       gint           src_data_rank,
                       GError       **error)
{
  guint mesh_ndim;
  const gint *mesh_shape;
  const gint *coordinate;
  g_autoptr(GPtrArray) normalized = NULL;
  g_autoptr(HpTensor) part = NULL;
  HpTensor *input = NULL;
  /* on the heap: a broadcast given up on may still write it */
  g_autofree gint64 *meta = g_new0 (gint64, 4 + HP_TENSOR_MAX_NDIM);
  MPI_Request request;
  gint64 shape[HP_TENSOR_MAX_NDIM];
  guint ndim;
  HpDType dtype;
  gboolean requires_grad;
  HpDTensor *out;

  g_return_val_if_fail (tensor == NULL || HP_IS_TENSOR (tensor), NULL);
  g_return_val_if_fail (HP_IS_DEVICE_MESH (mesh), NULL);
  g_return_val_if_fail (placements != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  mesh_shape = hp_device_mesh_get_shape (mesh, &mesh_ndim);
  coordinate = hp_device_mesh_get_coordinate (mesh, NULL);

  if (!check_mesh_and_placements ("distribute", mesh, placements, error))
    return NULL;
  for (guint d = 0; d < mesh_ndim; d++)
    {
      HpPlacement *p = g_ptr_array_index (placements, d);

      g_return_val_if_fail (HP_IS_PLACEMENT (p), NULL);
      if (hp_placement_is_partial (p))
        {
          g_autofree gchar *text = hp_placements_to_string (placements);

          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "distribute: %s has a Partial placement; Partial tensors come "
                       "from ops and hp_dtensor_new_from_local()", text);
          return NULL;
        }
    }
  for (guint d = 0; d < mesh_ndim; d++)
    if (src_data_rank < -1 || src_data_rank >= mesh_shape[d])
      {
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "distribute: src_data_rank %d is not a coordinate of mesh dim %u "
                     "(size %d)", src_data_rank, d, mesh_shape[d]);
        return NULL;
      }

  if (src_data_rank == -1)
    {
      gint64 offsets[HP_TENSOR_MAX_NDIM], lengths[HP_TENSOR_MAX_NDIM];
      const gint64 *tshape;

      if (tensor == NULL || HP_IS_DTENSOR (tensor))
        {
          g_set_error_literal (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                               "distribute: with src_data_rank -1 every rank needs a "
                               "plain tensor of its own");
          return NULL;
        }

      tshape = hp_tensor_get_shape (tensor, &ndim);
      normalized = _hp_placements_normalize ("distribute", placements, mesh, ndim, error);
      if (normalized == NULL)
        return NULL;

      memcpy (shape, tshape, ndim * sizeof (gint64));
      dtype = hp_tensor_get_dtype (tensor);
      requires_grad = hp_tensor_get_requires_grad (tensor);
      _hp_layout_local_region (shape, ndim, normalized, mesh, coordinate, offsets, lengths);
      part = _hp_tensor_copy_region (tensor, offsets, lengths);
      input = tensor;
    }
  else
    {
      gint root = source_rank (mesh, src_data_rank);
      gboolean is_source = hp_device_mesh_get_rank (mesh) == root;

      /* the source tells everybody what there is to receive */
      if (is_source && tensor != NULL && !HP_IS_DTENSOR (tensor))
        {
          const gint64 *tshape = hp_tensor_get_shape (tensor, &ndim);

          meta[0] = 1;
          meta[1] = hp_tensor_get_dtype (tensor);
          meta[2] = hp_tensor_get_requires_grad (tensor);
          meta[3] = ndim;
          memcpy (meta + 4, tshape, ndim * sizeof (gint64));
        }
      if (!agree_on (mesh, HP_COLLECTIVE_BCAST, "distribute", -1, -1, NULL, 0, placements, error) ||
          !_hp_mpi_check (MPI_Ibcast (meta, 4 + HP_TENSOR_MAX_NDIM, MPI_INT64_T, root,
                                      hp_device_mesh_get_comm (mesh), &request),
                          "MPI_Ibcast", error))
        return NULL;
      if (!_hp_collective_wait (&request, mesh, HP_COLLECTIVE_BCAST, "distribute", error))
        {
          _hp_collective_abandon (g_steal_pointer (&meta));
          return NULL;
        }

      if (meta[0] == 0)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "distribute: the source rank (mesh rank %d) has no plain tensor "
                       "to distribute", root);
          return NULL;
        }

      dtype = (HpDType) meta[1];
      requires_grad = meta[2] != 0;
      ndim = (guint) meta[3];
      memcpy (shape, meta + 4, ndim * sizeof (gint64));
      normalized = _hp_placements_normalize ("distribute", placements, mesh, ndim, error);
      if (normalized == NULL)
        return NULL;

      if (is_source)
        {
          part = hp_tensor_detach (tensor);
          input = tensor;
        }

      /* along dim d, only the groups the data has reached take part:
       * those whose later coordinates are all the source's */
      for (guint d = 0; d < mesh_ndim; d++)
        {
          gboolean active = TRUE;

          for (guint e = d + 1; e < mesh_ndim; e++)
            active &= coordinate[e] == src_data_rank;

          /* every rank agrees on the step, active or not */
          if (mesh_shape[d] > 1 &&
              !agree_on (mesh,
                         hp_placement_is_shard (g_ptr_array_index (normalized, d))
                           ? HP_COLLECTIVE_SCATTERV : HP_COLLECTIVE_BCAST,
                         "distribute", (gint) d, dtype, shape, ndim, normalized, error))
            return NULL;
          if (active && mesh_shape[d] > 1 &&
              !distribute_step (&part, dtype, shape, ndim, mesh, normalized, d,
                                src_data_rank, error))
            return NULL;
        }
    }

  out = _hp_dtensor_new (part, mesh, normalized, shape, ndim);
  record ("distribute", distribute_backward, input, HP_TENSOR (out), requires_grad,
          layout_new (mesh, normalized, shape, ndim));
  return out;
}

/* new_from_local */

static gboolean
from_local_backward (HpAutogradNode  *node,
                     HpTensor       **grad_outputs,
                     HpTensor       **grad_inputs,
                     GError         **error)
{
  Layout *layout = _hp_autograd_node_get_data (node);
  const gint *mesh_shape = hp_device_mesh_get_shape (layout->mesh, NULL);
  g_autoptr(GPtrArray) target = NULL;
  g_autoptr(HpDTensor) moved = NULL;
  gdouble scale = 1.0;

  if (!require_dtensor_grad ("new_from_local", grad_outputs[0], error))
    return FALSE;

  /* d(local) of a Partial(avg) is the gradient over n; max, min and
   * product have no gradient a placement can express */
  for (guint d = 0; d < layout->placements->len; d++)
    {
      HpPlacement *p = g_ptr_array_index (layout->placements, d);

      if (!hp_placement_is_partial (p))
        continue;
      switch (hp_partial_get_reduce_op (HP_PARTIAL (p)))
        {
        case HP_REDUCE_OP_SUM:
          break;
        case HP_REDUCE_OP_AVG:
          scale /= mesh_shape[d];
          break;
        default:
          g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                       "new_from_local backward: no gradient through a %s placement",
                       hp_reduce_op_to_string (hp_partial_get_reduce_op (HP_PARTIAL (p))));
          return FALSE;
        }
    }

  target = _hp_placements_for_grad (layout->placements);
  moved = hp_dtensor_redistribute (HP_DTENSOR (grad_outputs[0]), target, error);
  if (moved == NULL)
    return FALSE;

  grad_inputs[0] = scale == 1.0 ? hp_tensor_detach (moved->local)
                                : hp_tensor_scale (moved->local, scale, error);
  return grad_inputs[0] != NULL;
}

/* Asks every rank whether all agree on the local tensors; sets the same
 * error on all of them if not. */
static gboolean
check_ranks_agree (HpTensor      *local,
                   const gint64  *shape,
                   guint          ndim,
                   gboolean       local_fits,
                   HpDeviceMesh  *mesh,
                   GPtrArray     *placements,
                   GError       **error)
{
  MPI_Comm comm = hp_device_mesh_get_comm (mesh);
  gint size = hp_device_mesh_get_size (mesh);
  enum { INFO = 3 + 2 * HP_TENSOR_MAX_NDIM };
  /* on the heap: a gather given up on may still use them */
  g_autofree gint64 *mine = g_new0 (gint64, INFO);
  g_autofree gint64 *all = g_new (gint64, (gsize) size * INFO);
  MPI_Request request;
  guint local_ndim;
  const gint64 *local_shape = hp_tensor_get_shape (local, &local_ndim);

  mine[0] = hp_tensor_get_dtype (local);
  mine[1] = local_ndim;
  mine[2] = local_fits;
  memcpy (mine + 3, local_shape, local_ndim * sizeof (gint64));
  if (shape != NULL)
    memcpy (mine + 3 + HP_TENSOR_MAX_NDIM, shape, ndim * sizeof (gint64));

  if (!agree_on (mesh, HP_COLLECTIVE_ALLGATHER, "new_from_local", -1, -1, shape, ndim,
                 placements, error) ||
      !_hp_mpi_check (MPI_Iallgather (mine, INFO, MPI_INT64_T, all, INFO, MPI_INT64_T, comm,
                                      &request),
                      "MPI_Iallgather", error))
    return FALSE;
  if (!_hp_collective_wait (&request, mesh, HP_COLLECTIVE_ALLGATHER, "new_from_local", error))
    {
      _hp_collective_abandon (g_steal_pointer (&mine));
      _hp_collective_abandon (g_steal_pointer (&all));
      return FALSE;
    }

  for (gint r = 0; r < size; r++)
    {
      const gint64 *theirs = all + (gsize) r * INFO;
      gboolean same = theirs[0] == all[0] && theirs[1] == all[1] && theirs[2] &&
                      memcmp (theirs + 3 + HP_TENSOR_MAX_NDIM, all + 3 + HP_TENSOR_MAX_NDIM,
                              HP_TENSOR_MAX_NDIM * sizeof (gint64)) == 0 &&
                      (shape != NULL ||
                       memcmp (theirs + 3, all + 3, HP_TENSOR_MAX_NDIM * sizeof (gint64)) == 0);

      if (!same)
        {
          g_autofree gchar *first = _hp_shape_to_string (all + 3, (guint) all[1]);
          g_autofree gchar *other = _hp_shape_to_string (theirs + 3, (guint) theirs[1]);

          g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                       "new_from_local: the ranks' local tensors do not fit together "
                       "(rank 0: %s %s, rank %d: %s %s%s)",
                       hp_dtype_to_string ((HpDType) all[0]), first, r,
                       hp_dtype_to_string ((HpDType) theirs[0]), other,
                       theirs[2] ? "" : ", which is not its part of the given shape");
          return FALSE;
        }
    }

  return TRUE;
}

/**
 * hp_dtensor_new_from_local:
 * @local: this rank's part of the tensor (a plain tensor)
 * @mesh: the device mesh
 * @placements: (element-type HpPlacement): one placement per mesh dim;
 *   [class@Hp.Partial] is allowed here
 * @shape: (array length=ndim) (nullable): the global shape, or %NULL to
 *   assume even shards (each sharded dim is the local size times the
 *   size of the mesh dims sharding it)
 * @ndim: the number of dims of @shape
 * @run_check: whether to check with the other ranks that the local
 *   tensors fit together and to make the Replicate parts equal by
 *   broadcasting them from coordinate 0
 * @error: return location for a [struct@GLib.Error]
 *
 * Wraps each rank's local tensor as one distributed tensor, without
 * moving data (unless @run_check). With @run_check all ranks must agree
 * on the dtype, the number of dims and, without @shape, the local shape;
 * otherwise every rank gets [HP_ERROR_SHAPE][error@Hp.Error]. Differentiable: the gradient
 * of @local is this rank's part of the result's gradient.
 *
 * Returns: (transfer full): the distributed tensor, or %NULL with
 *   @error set
 *
 * Since: 1.0
 */
HpDTensor *
hp_dtensor_new_from_local (HpTensor      *local,
                           HpDeviceMesh  *mesh,
                           GPtrArray     *placements,
                           const gint64  *shape,
                           guint          ndim,
                           gboolean       run_check,
                           GError       **error)
{
  guint local_ndim, mesh_ndim;
  const gint64 *local_shape;
  const gint *mesh_shape;
  g_autoptr(GPtrArray) normalized = NULL;
  g_autoptr(HpTensor) stored = NULL;
  gint64 global[HP_TENSOR_MAX_NDIM];
  gboolean local_fits = TRUE;
  HpDTensor *out;

  g_return_val_if_fail (HP_IS_TENSOR (local), NULL);
  g_return_val_if_fail (HP_IS_DEVICE_MESH (mesh), NULL);
  g_return_val_if_fail (placements != NULL, NULL);
  g_return_val_if_fail (shape != NULL || ndim == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (HP_IS_DTENSOR (local))
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                           "new_from_local: the local tensor is already an HpDTensor");
      return NULL;
    }

  local_shape = hp_tensor_get_shape (local, &local_ndim);
  mesh_shape = hp_device_mesh_get_shape (mesh, &mesh_ndim);
  normalized = _hp_placements_normalize ("new_from_local", placements, mesh, local_ndim, error);
  if (normalized == NULL)
    return NULL;

  if (shape != NULL)
    {
      gint64 offsets[HP_TENSOR_MAX_NDIM], lengths[HP_TENSOR_MAX_NDIM];

      if (ndim != local_ndim)
        {
          g_autofree gchar *want = _hp_shape_to_string (shape, ndim);
          g_autofree gchar *have = _hp_shape_to_string (local_shape, local_ndim);

          g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                       "new_from_local: global shape %s and local shape %s differ in "
                       "the number of dims", want, have);
          return NULL;
        }
      if (!_hp_shape_check (shape, ndim, error))
        return NULL;
      memcpy (global, shape, ndim * sizeof (gint64));
      _hp_layout_local_region (global, ndim, normalized, mesh,
                               hp_device_mesh_get_coordinate (mesh, NULL), offsets, lengths);
      local_fits = _hp_shape_equal (lengths, ndim, local_shape, local_ndim);
    }
  else
    {
      memcpy (global, local_shape, local_ndim * sizeof (gint64));
      for (guint d = 0; d < mesh_ndim; d++)
        {
          HpPlacement *p = g_ptr_array_index (normalized, d);

          if (hp_placement_is_shard (p))
            global[hp_shard_get_dim (HP_SHARD (p))] *= mesh_shape[d];
        }
    }

  if (run_check)
    {
      if (!check_ranks_agree (local, shape, ndim, local_fits, mesh, normalized, error))
        return NULL;

      if (hp_tensor_get_numel (local) > G_MAXINT)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                       "new_from_local: a local tensor of %" G_GINT64_FORMAT " elements is "
                       "more than MPI can count", hp_tensor_get_numel (local));
          return NULL;
        }

      /* Replicate parts become the copy of coordinate 0 */
      stored = _hp_tensor_copy_region (local, (gint64[HP_TENSOR_MAX_NDIM]) { 0 }, local_shape);
      for (guint d = 0; d < mesh_ndim; d++)
        {
          MPI_Request request;

          if (!hp_placement_is_replicate (g_ptr_array_index (normalized, d)) || mesh_shape[d] == 1)
            continue;
          if (!agree_on (mesh, HP_COLLECTIVE_BCAST, "new_from_local", (gint) d,
                         hp_tensor_get_dtype (stored), global, local_ndim, normalized, error) ||
              !_hp_mpi_check (MPI_Ibcast (_hp_tensor_data (stored), (int) hp_tensor_get_numel (stored),
                                          _hp_mpi_datatype (hp_tensor_get_dtype (stored)), 0,
                                          hp_device_mesh_get_dim_comm (mesh, d), &request),
                              "MPI_Ibcast", error))
            return NULL;
          if (!_hp_collective_wait (&request, mesh, HP_COLLECTIVE_BCAST, "new_from_local", error))
            {
              _hp_collective_abandon (g_steal_pointer (&stored));
              return NULL;
            }
        }
    }
  else if (!local_fits)
    {
      g_autofree gchar *want = _hp_shape_to_string (global, local_ndim);
      g_autofree gchar *have = _hp_shape_to_string (local_shape, local_ndim);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "new_from_local: local shape %s is not this rank's part of %s",
                   have, want);
      return NULL;
    }
  else
    stored = hp_tensor_detach (local);

  out = _hp_dtensor_new (stored, mesh, normalized, global, local_ndim);
  record ("new_from_local", from_local_backward, local, HP_TENSOR (out),
          _hp_autograd_should_record (&local, 1),
          layout_new (mesh, normalized, global, local_ndim));
  return out;
}

/* get_local */

static gboolean
get_local_backward (HpAutogradNode  *node,
                    HpTensor       **grad_outputs,
                    HpTensor       **grad_inputs,
                    GError         **error)
{
  Layout *layout = _hp_autograd_node_get_data (node);
  g_autoptr(GPtrArray) placements = _hp_placements_for_grad (layout->placements);
  g_autoptr(HpTensor) grad = hp_tensor_detach (grad_outputs[0]);
  g_autoptr(GPtrArray) partial = NULL;
  g_autoptr(HpDTensor) summed = NULL;

  if (layout->sum_dims == 0)
    {
      grad_inputs[0] = HP_TENSOR (_hp_dtensor_new (grad, layout->mesh, placements,
                                                   layout->shape, layout->ndim));
      return TRUE;
    }

  /* the ranks' local gradients are parts of one sum on those dims */
  partial = _hp_placements_copy (placements);
  for (guint d = 0; d < partial->len; d++)
    if (layout->sum_dims & (G_GUINT64_CONSTANT (1) << d))
      {
        g_object_unref (g_ptr_array_index (partial, d));
        g_ptr_array_index (partial, d) = _hp_placement_shared_partial (HP_REDUCE_OP_SUM);
      }

  summed = _hp_dtensor_new (grad, layout->mesh, partial, layout->shape, layout->ndim);
  grad_inputs[0] = HP_TENSOR (hp_dtensor_redistribute (summed, placements, error));
  return grad_inputs[0] != NULL;
}

/* This rank's part of @self, recorded as get_local with @sum_dims (mesh
 * dims over which the gradients of the ranks' parts are summed). With
 * @may_share and nothing to record, the result is @self's own local
 * tensor, which is all right for a caller that only reads it. */
static HpTensor *
get_local (HpDTensor *self,
           guint64    sum_dims,
           gboolean   may_share)
{
  gboolean recorded = _hp_autograd_should_record ((HpTensor *[]) { HP_TENSOR (self) }, 1);
  HpTensor *local;
  guint ndim;
  const gint64 *shape;
  Layout *layout;

  if (may_share && !recorded)
    return g_object_ref (self->local);

  for (guint d = 0; d < self->placements->len; d++)
    if (!hp_placement_is_replicate (g_ptr_array_index (self->placements, d)))
      sum_dims &= ~(G_GUINT64_CONSTANT (1) << d);

  local = hp_tensor_detach (self->local);
  if (!recorded)
    return local;

  shape = hp_tensor_get_shape (HP_TENSOR (self), &ndim);
  layout = layout_new (self->mesh, self->placements, shape, ndim);
  layout->sum_dims = sum_dims;
  record ("get_local", get_local_backward, HP_TENSOR (self), local, TRUE, layout);
  return local;
}

/* get_local for an op whose result is not Replicate on the mesh dims in
 * @sum_dims where @self is Replicate: each rank's use of its copy then
 * contributes a different part of the result, so the gradients of the
 * copies are summed over those dims (the gradient rule of DESIGN.md §5).
 * Bits of @sum_dims where @self is not Replicate are ignored.
 *
 * For the op dispatcher, which only hands the result to a local op: when
 * no gradient is recorded it is @self's own local tensor rather than a
 * new tensor over the same data (hp_dtensor_get_local() always makes
 * one, since its caller may change the tensor's gradient settings). */
HpTensor *
_hp_dtensor_get_local_summing_grad (HpDTensor *self,
                                    guint64    sum_dims)
{
  g_return_val_if_fail (HP_IS_DTENSOR (self), NULL);

  return get_local (self, sum_dims, TRUE);
}

/**
 * hp_dtensor_get_local:
 * @self: a [class@Hp.DTensor]
 *
 * Gets this rank's part of the tensor; for a [class@Hp.Partial] placement, the
 * value before the reduction. No data is copied. Differentiable: the
 * gradient of the result becomes this rank's part of the gradient of
 * @self.
 *
 * Returns: (transfer full): the local tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_dtensor_get_local (HpDTensor *self)
{
  g_return_val_if_fail (HP_IS_DTENSOR (self), NULL);

  return get_local (self, 0, FALSE);
}

/**
 * hp_dtensor_get_mesh:
 * @self: a [class@Hp.DTensor]
 *
 * Gets the device mesh the tensor is laid out over.
 *
 * Returns: (transfer none): the mesh
 *
 * Since: 1.0
 */
HpDeviceMesh *
hp_dtensor_get_mesh (HpDTensor *self)
{
  g_return_val_if_fail (HP_IS_DTENSOR (self), NULL);

  return self->mesh;
}

/**
 * hp_dtensor_get_placements:
 * @self: a [class@Hp.DTensor]
 *
 * Gets the placements, one per mesh dim, with shard dims made
 * non-negative.
 *
 * Returns: (transfer none) (element-type HpPlacement): the placements
 *
 * Since: 1.0
 */
GPtrArray *
hp_dtensor_get_placements (HpDTensor *self)
{
  g_return_val_if_fail (HP_IS_DTENSOR (self), NULL);

  return self->placements;
}

/* redistribute */

static gboolean
redistribute_backward (HpAutogradNode  *node,
                       HpTensor       **grad_outputs,
                       HpTensor       **grad_inputs,
                       GError         **error)
{
  Layout *source = _hp_autograd_node_get_data (node);
  g_autoptr(GPtrArray) target = _hp_placements_for_grad (source->placements);

  if (!require_dtensor_grad ("redistribute", grad_outputs[0], error))
    return FALSE;

  grad_inputs[0] = HP_TENSOR (hp_dtensor_redistribute (HP_DTENSOR (grad_outputs[0]), target, error));
  return grad_inputs[0] != NULL;
}

/**
 * hp_dtensor_redistribute:
 * @self: a [class@Hp.DTensor]
 * @placements: (element-type HpPlacement): the target placements, one
 *   per mesh dim
 * @error: return location for a [struct@GLib.Error]
 *
 * Moves the data to another layout on the same mesh, one mesh dim at a
 * time in the order of the DTensor spec: Shard to Replicate all-gathers,
 * Shard to Shard exchanges all-to-all, Replicate to Shard keeps the own
 * piece, Partial to Replicate all-reduces and Partial to Shard
 * reduce-scatters (Partial(avg) divides by the mesh dim's size after
 * summing). A Partial target must equal the current placement on its mesh
 * dim: Partial values come only from ops and [ctor@Hp.DTensor.new_from_local].
 * The same placements give a new DTensor over the same local tensor.
 *
 * Differentiable: the gradient goes back to the source placements, with
 * Partial replaced by Replicate. Collective over the mesh.
 *
 * Returns: (transfer full): the redistributed tensor, or %NULL with
 *   [HP_ERROR_PLACEMENT][error@Hp.Error] (on every rank) for placements that do not fit
 *
 * Since: 1.0
 */
HpDTensor *
hp_dtensor_redistribute (HpDTensor  *self,
                         GPtrArray  *placements,
                         GError    **error)
{
  g_autoptr(GPtrArray) normalized = NULL;
  g_autoptr(HpTensor) local = NULL;
  guint ndim;
  const gint64 *shape;
  HpDTensor *out;

  g_return_val_if_fail (HP_IS_DTENSOR (self), NULL);
  g_return_val_if_fail (placements != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  shape = hp_tensor_get_shape (HP_TENSOR (self), &ndim);
  normalized = _hp_placements_normalize ("redistribute", placements, self->mesh, ndim, error);
  if (normalized == NULL)
    return NULL;

  for (guint d = 0; d < normalized->len; d++)
    {
      HpPlacement *from = g_ptr_array_index (self->placements, d);
      HpPlacement *to = g_ptr_array_index (normalized, d);

      if (hp_placement_is_partial (to) && !hp_placement_equal (from, to))
        {
          g_autofree gchar *from_str = hp_placement_to_string (from);
          g_autofree gchar *to_str = hp_placement_to_string (to);

          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "redistribute: cannot go from %s to %s on mesh dim %u; Partial "
                       "placements come only from ops and hp_dtensor_new_from_local()",
                       from_str, to_str, d);
          return NULL;
        }
    }

  if (_hp_placements_equal (self->placements, normalized))
    local = g_object_ref (self->local);
  else
    {
      local = _hp_redistribute_local (self->local, shape, ndim, self->mesh,
                                      self->placements, normalized, error);
      if (local == NULL)
        return NULL;
    }

  out = _hp_dtensor_new (local, self->mesh, normalized, shape, ndim);
  record ("redistribute", redistribute_backward, HP_TENSOR (self), HP_TENSOR (out),
          _hp_autograd_should_record ((HpTensor *[]) { HP_TENSOR (self) }, 1),
          layout_new (self->mesh, self->placements, shape, ndim));
  return out;
}

/**
 * hp_dtensor_full_tensor:
 * @self: a [class@Hp.DTensor]
 * @error: return location for a [struct@GLib.Error]
 *
 * Gathers the whole tensor on every rank: redistributes to Replicate on
 * every mesh dim and takes the local tensor. Differentiable. Collective
 * over the mesh.
 *
 * Returns: (transfer full): the whole tensor, a plain [class@Hp.Tensor], or
 *   %NULL with @error set
 *
 * Since: 1.0
 */
HpTensor *
hp_dtensor_full_tensor (HpDTensor  *self,
                        GError    **error)
{
  g_autoptr(GPtrArray) replicated = NULL;
  g_autoptr(HpDTensor) whole = NULL;

  g_return_val_if_fail (HP_IS_DTENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  replicated = _hp_placements_replicated (self->placements->len);
  whole = hp_dtensor_redistribute (self, replicated, error);
  if (whole == NULL)
    return NULL;

  return hp_dtensor_get_local (whole);
}

/**
 * hp_dtensor_visualize:
 * @self: a [class@Hp.DTensor]
 *
 * Describes which rank holds which part of the tensor, as a text table
 * with one row per rank of the mesh: its coordinate and, per tensor dim,
 * the index range `[start:end)` it holds (Partial placements are named).
 * Computed from the layout alone, without communication.
 *
 * Returns: (transfer full): the table
 *
 * Since: 1.0
 */
gchar *
hp_dtensor_visualize (HpDTensor *self)
{
  GString *out;
  guint ndim, mesh_ndim;
  const gint64 *shape;
  const gint *mesh_shape;
  const gint *ranks;
  gsize n_ranks;
  g_autofree gchar *shape_str = NULL;
  g_autofree gchar *placements_str = NULL;
  g_autofree gchar *mesh_str = NULL;
  g_autofree gint *coordinate = NULL;

  g_return_val_if_fail (HP_IS_DTENSOR (self), NULL);

  shape = hp_tensor_get_shape (HP_TENSOR (self), &ndim);
  mesh_shape = hp_device_mesh_get_shape (self->mesh, &mesh_ndim);
  ranks = hp_device_mesh_get_ranks (self->mesh, &n_ranks);
  shape_str = _hp_shape_to_string (shape, ndim);
  placements_str = hp_placements_to_string (self->placements);
  mesh_str = hp_device_mesh_to_string (self->mesh);
  coordinate = g_new0 (gint, mesh_ndim);

  out = g_string_new (NULL);
  g_string_append_printf (out, "DTensor %s %s on %s with %s\n",
                          hp_dtype_to_string (hp_tensor_get_dtype (HP_TENSOR (self))),
                          shape_str, mesh_str, placements_str);
  g_string_append_printf (out, "%-6s %-14s", "rank", "coordinate");
  for (guint k = 0; k < ndim; k++)
    {
      gchar header[16];

      g_snprintf (header, sizeof header, "dim %u", k);
      g_string_append_printf (out, " %-14s", header);
    }
  g_string_append (out, " partial\n");

  for (gsize r = 0; r < n_ranks; r++)
    {
      gint64 offsets[HP_TENSOR_MAX_NDIM], lengths[HP_TENSOR_MAX_NDIM];
      GString *coord = g_string_new ("(");
      GString *partial = g_string_new (NULL);
      gsize rest = r;

      for (guint d = mesh_ndim; d-- > 0;)
        {
          coordinate[d] = rest % mesh_shape[d];
          rest /= mesh_shape[d];
        }
      for (guint d = 0; d < mesh_ndim; d++)
        {
          HpPlacement *p = g_ptr_array_index (self->placements, d);

          g_string_append_printf (coord, "%s%d", d > 0 ? ", " : "", coordinate[d]);
          if (hp_placement_is_partial (p))
            {
              g_autofree gchar *text = hp_placement_to_string (p);
              g_string_append_printf (partial, "%s%s on dim %u", partial->len ? ", " : "", text, d);
            }
        }
      g_string_append_c (coord, ')');

      _hp_layout_local_region (shape, ndim, self->placements, self->mesh, coordinate,
                               offsets, lengths);
      g_string_append_printf (out, "%-6d %-14s", ranks[r], coord->str);
      for (guint k = 0; k < ndim; k++)
        {
          g_autofree gchar *range = g_strdup_printf ("[%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ")",
                                                     offsets[k], offsets[k] + lengths[k]);
          g_string_append_printf (out, " %-14s", range);
        }
      g_string_append_printf (out, " %s\n", partial->len ? partial->str : "-");

      g_string_free (coord, TRUE);
      g_string_free (partial, TRUE);
    }

  return g_string_free (out, FALSE);
}
