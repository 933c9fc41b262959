/* hp-dtensor-redistribute.c: moving DTensor data between layouts
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A redistribution is a list of steps, each changing the placement of one
 * mesh dim, in the order of spec/dtensor.md §3 (inner shards undone
 * first, then the rest from the outermost mesh dim). Each step is one
 * collective on that mesh dim's communicator; a shard of a dim other than
 * the outermost one is packed into per-rank blocks before the collective
 * and unpacked after it, so no element is copied more than twice. Pieces
 * of the outermost dim are contiguous already: they are sent from and
 * received into the tensors themselves.
 *
 * Packing space comes from the tensor buffer cache (hp-storage.c), like
 * the results: a large malloc() is a fresh mapping whose pages all fault
 * on first write, which costs more than the copy itself.
 */

#include "config.h"

#include <string.h>

#include "hp-collective-private.h"
#include "hp-device-mesh-mpi.h"
#include "hp-dtensor-private.h"
#include "hp-error.h"
#include "hp-mpi-private.h"
#include "hp-vec-private.h"

MPI_Datatype
_hp_mpi_datatype (HpDType dtype)
{
  switch (dtype)
    {
    case HP_DTYPE_FLOAT32:
      return MPI_FLOAT;
    case HP_DTYPE_FLOAT64:
      return MPI_DOUBLE;
    case HP_DTYPE_INT64:
    default:
      return MPI_INT64_T;
    }
}

static MPI_Op
mpi_op (HpReduceOp op)
{
  switch (op)
    {
    case HP_REDUCE_OP_MAX:
      return MPI_MAX;
    case HP_REDUCE_OP_MIN:
      return MPI_MIN;
    case HP_REDUCE_OP_PRODUCT:
      return MPI_PROD;
    case HP_REDUCE_OP_SUM:
    case HP_REDUCE_OP_AVG:
    default:
      return MPI_SUM;
    }
}

/* Copies the block of @lengths at @src_offsets in @src (of @src_shape)
 * to @dst_offsets in @dst (of @dst_shape), whole rows at a time. */
static void
copy_block (guint8         *dst,
            const gint64   *dst_shape,
            const gint64   *dst_offsets,
            const guint8   *src,
            const gint64   *src_shape,
            const gint64   *src_offsets,
            const gint64   *lengths,
            guint           ndim,
            gsize           elem)
{
  gint64 dst_strides[HP_TENSOR_MAX_NDIM], src_strides[HP_TENSOR_MAX_NDIM];
  gint64 index[HP_TENSOR_MAX_NDIM] = { 0 };
  gint64 rows, run;

  if (ndim == 0)
    {
      memcpy (dst, src, elem);
      return;
    }
  if (_hp_shape_numel (lengths, ndim) == 0)
    return;

  _hp_shape_strides (dst_shape, ndim, dst_strides);
  _hp_shape_strides (src_shape, ndim, src_strides);
  run = lengths[ndim - 1];
  rows = _hp_shape_numel (lengths, ndim - 1);
  for (gint64 r = 0; r < rows; r++)
    {
      gint64 d = dst_offsets[ndim - 1], s = src_offsets[ndim - 1];

      for (guint k = 0; k + 1 < ndim; k++)
        {
          d += (dst_offsets[k] + index[k]) * dst_strides[k];
          s += (src_offsets[k] + index[k]) * src_strides[k];
        }
      memcpy (dst + elem * d, src + elem * s, elem * run);

      for (guint k = ndim - 1; k-- > 0;)
        {
          if (++index[k] < lengths[k])
            break;
          index[k] = 0;
        }
    }
}

/* Packing space of @n_elems elements of @elem bytes; the data of the
 * result stays valid while the result lives */
static GBytes *
scratch_new (gint64 n_elems,
             gsize  elem)
{
  return _hp_storage_new (MAX (n_elems, 1) * elem);
}

static guint8 *
scratch_data (GBytes *scratch)
{
  return (guint8 *) g_bytes_get_data (scratch, NULL);
}

static gboolean
check_count (gint64   count,
             GError **error)
{
  if (count > G_MAXINT)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "redistribute: a message of %" G_GINT64_FORMAT " elements is "
                   "more than MPI can count", count);
      return FALSE;
    }
  return TRUE;
}

/* x / n, vectorised; for n a power of two, x * (1 / n) is the same
 * number and a multiplication costs a fraction of a division */
#define DEFINE_DIVIDE(T, SUFFIX) \
HP_VEC_CLONES static void \
divide_##SUFFIX (T *restrict data, \
                 gint64      numel, \
                 gint        n) \
{ \
  T by = (T) n, inverse = (T) 1 / (T) n; \
 \
  if ((n & (n - 1)) == 0) \
    { \
      HP_SIMD \
      for (gint64 i = 0; i < numel; i++) \
        data[i] *= inverse; \
    } \
  else \
    { \
      HP_SIMD \
      for (gint64 i = 0; i < numel; i++) \
        data[i] /= by; \
    } \
}

DEFINE_DIVIDE (gfloat, f32)
DEFINE_DIVIDE (gdouble, f64)

/* Divides @numel values of @dtype at @data by @n: the mean of values
 * summed over @n ranks */
void
_hp_divide_values (gpointer data,
                   HpDType  dtype,
                   gint64   numel,
                   gint     n)
{
  g_return_if_fail (n > 0);

  switch (dtype)
    {
    case HP_DTYPE_FLOAT32:
      divide_f32 (data, numel, n);
      break;
    case HP_DTYPE_FLOAT64:
      divide_f64 (data, numel, n);
      break;
    case HP_DTYPE_INT64:
      for (gint64 i = 0; i < numel; i++)
        ((gint64 *) data)[i] /= n;
      break;
    }
}

/* Divides the reduced values by @n for Partial(avg) */
void
_hp_dtensor_divide_for_avg (HpTensor *t,
                            gint      n)
{
  _hp_divide_values (_hp_tensor_data (t), hp_tensor_get_dtype (t), hp_tensor_get_numel (t), n);
}

typedef struct
{
  HpTensor *local;
  GPtrArray *current;
  const gint64 *shape;
  guint ndim;
  HpDeviceMesh *mesh;
  const gint *coordinate;
  const gint *mesh_shape;
} State;

static void
state_set_local (State    *st,
                 HpTensor *local)
{
  g_object_unref (st->local);
  st->local = local;
}

/* The shape of @st's local tensor with dim @k set to @size */
static void
shape_with (State  *st,
            guint   k,
            gint64  size,
            gint64 *out)
{
  memcpy (out, hp_tensor_get_shape (st->local, NULL), st->ndim * sizeof (gint64));
  out[k] = size;
}

/* A collective given up on may still read the local tensor and write
 * the others: they stay with MPI for good */
static void
give_up (State       *st,
         HpTensor   **out,
         GBytes     **scratch,
         GBytes     **other_scratch)
{
  _hp_collective_abandon (g_object_ref (st->local));
  _hp_collective_abandon (g_steal_pointer (out));
  if (scratch != NULL)
    _hp_collective_abandon (g_steal_pointer (scratch));
  if (other_scratch != NULL)
    _hp_collective_abandon (g_steal_pointer (other_scratch));
}

/* S(k) -> R: all-gather the pieces of dim k */
static gboolean
step_all_gather (State   *st,
                 guint    d,
                 guint    k,
                 GError **error)
{
  gint n = st->mesh_shape[d];
  MPI_Comm comm = hp_device_mesh_get_dim_comm (st->mesh, d);
  HpDType dtype = hp_tensor_get_dtype (st->local);
  gsize elem = hp_dtype_get_size (dtype);
  const gint64 *local_shape = hp_tensor_get_shape (st->local, NULL);
  gint64 level = _hp_layout_level_size (st->shape, st->current, st->mesh, st->coordinate, d, k, NULL);
  gint64 outer = _hp_shape_numel (local_shape, k);
  gint64 inner = _hp_shape_numel (local_shape + k + 1, st->ndim - k - 1);
  gint64 out_shape[HP_TENSOR_MAX_NDIM];
  g_autofree int *counts = g_new (int, n);
  g_autofree int *displs = g_new (int, n);
  g_autoptr(HpTensor) out = NULL;
  g_autoptr(GBytes) scratch = NULL;
  guint8 *gathered = NULL;
  MPI_Request request;
  gint64 total = 0;

  shape_with (st, k, level, out_shape);
  if (!check_count (outer * level * inner, error))
    return FALSE;

  for (gint c = 0; c < n; c++)
    {
      gint64 offset, length;

      _hp_chunk (level, n, c, &offset, &length);
      counts[c] = (int) (outer * length * inner);
      displs[c] = (int) total;
      total += outer * length * inner;
    }

  out = _hp_tensor_new_uninit (dtype, out_shape, st->ndim);

  /* pieces of the outermost dim land in place; others are unpacked */
  if (outer > 1)
    {
      scratch = scratch_new (total, elem);
      gathered = scratch_data (scratch);
    }
  if (!_hp_mpi_check (MPI_Iallgatherv (_hp_tensor_data (st->local), counts[st->coordinate[d]],
                                       _hp_mpi_datatype (dtype),
                                       outer > 1 ? gathered : _hp_tensor_data (out),
                                       counts, displs, _hp_mpi_datatype (dtype), comm, &request),
                      "MPI_Iallgatherv", error))
    return FALSE;
  if (!_hp_collective_wait (&request, st->mesh, HP_COLLECTIVE_ALLGATHERV, "redistribute", error))
    {
      give_up (st, &out, &scratch, NULL);
      _hp_collective_abandon (g_steal_pointer (&counts));
      _hp_collective_abandon (g_steal_pointer (&displs));
      return FALSE;
    }

  for (gint c = 0; outer > 1 && c < n; c++)
    {
      gint64 offset, length;
      gint64 block_shape[HP_TENSOR_MAX_NDIM], zeros[HP_TENSOR_MAX_NDIM] = { 0 };
      gint64 at[HP_TENSOR_MAX_NDIM] = { 0 };

      _hp_chunk (level, n, c, &offset, &length);
      shape_with (st, k, length, block_shape);
      at[k] = offset;
      copy_block (_hp_tensor_data (out), out_shape, at, gathered + elem * displs[c],
                  block_shape, zeros, block_shape, st->ndim, elem);
    }

  state_set_local (st, g_steal_pointer (&out));
  return TRUE;
}

/* R -> S(k): keep this rank's piece */
static gboolean
step_chunk (State   *st,
            guint    d,
            guint    k,
            GError **error)
{
  const gint64 *local_shape = hp_tensor_get_shape (st->local, NULL);
  gint64 offsets[HP_TENSOR_MAX_NDIM] = { 0 };
  gint64 lengths[HP_TENSOR_MAX_NDIM];

  memcpy (lengths, local_shape, st->ndim * sizeof (gint64));
  _hp_chunk (local_shape[k], st->mesh_shape[d], st->coordinate[d], &offsets[k], &lengths[k]);
  state_set_local (st, _hp_tensor_copy_region (st->local, offsets, lengths));
  return TRUE;
}

/* S(i) -> S(j): all-to-all; every rank sends piece c of dim j to rank c
 * and puts the pieces of dim i it receives side by side. */
static gboolean
step_all_to_all (State   *st,
                 guint    d,
                 guint    i,
                 guint    j,
                 GError **error)
{
  gint n = st->mesh_shape[d];
  gint me = st->coordinate[d];
  MPI_Comm comm = hp_device_mesh_get_dim_comm (st->mesh, d);
  HpDType dtype = hp_tensor_get_dtype (st->local);
  MPI_Datatype type = _hp_mpi_datatype (dtype);
  gsize elem = hp_dtype_get_size (dtype);
  gint64 local_shape[HP_TENSOR_MAX_NDIM];
  gint64 level_i = _hp_layout_level_size (st->shape, st->current, st->mesh, st->coordinate, d, i, NULL);
  gint64 level_j, my_j_offset, my_j_length;
  gint64 out_shape[HP_TENSOR_MAX_NDIM];
  g_autofree int *send_counts = g_new (int, n);
  g_autofree int *send_displs = g_new (int, n);
  g_autofree int *recv_counts = g_new (int, n);
  g_autofree int *recv_displs = g_new (int, n);
  g_autoptr(GBytes) send_scratch = NULL;
  g_autoptr(GBytes) recv_scratch = NULL;
  guint8 *send, *recv;
  gboolean send_in_place, recv_in_place;
  g_autoptr(HpTensor) out = NULL;
  gint64 send_total = 0, recv_total = 0;
  MPI_Request request;

  memcpy (local_shape, hp_tensor_get_shape (st->local, NULL), st->ndim * sizeof (gint64));
  level_j = local_shape[j];
  _hp_chunk (level_j, n, me, &my_j_offset, &my_j_length);
  memcpy (out_shape, local_shape, st->ndim * sizeof (gint64));
  out_shape[i] = level_i;
  out_shape[j] = my_j_length;

  for (gint c = 0; c < n; c++)
    {
      gint64 block[HP_TENSOR_MAX_NDIM];
      gint64 i_offset, i_length, j_offset, j_length;

      _hp_chunk (level_j, n, c, &j_offset, &j_length);
      memcpy (block, local_shape, st->ndim * sizeof (gint64));
      block[j] = j_length;
      send_displs[c] = (int) send_total;
      send_total += _hp_shape_numel (block, st->ndim);
      send_counts[c] = (int) (send_total - send_displs[c]);

      _hp_chunk (level_i, n, c, &i_offset, &i_length);
      memcpy (block, out_shape, st->ndim * sizeof (gint64));
      block[i] = i_length;
      recv_displs[c] = (int) recv_total;
      recv_total += _hp_shape_numel (block, st->ndim);
      recv_counts[c] = (int) (recv_total - recv_displs[c]);
    }
  if (!check_count (send_total, error) || !check_count (recv_total, error))
    return FALSE;

  /* with only dims of size 1 before it, the pieces of a dim follow each
   * other in memory in rank order, as the collective wants them */
  send_in_place = _hp_shape_numel (local_shape, j) == 1;
  recv_in_place = _hp_shape_numel (out_shape, i) == 1;

  out = _hp_tensor_new_uninit (dtype, out_shape, st->ndim);
  if (send_in_place)
    send = _hp_tensor_data (st->local);
  else
    {
      send_scratch = scratch_new (send_total, elem);
      send = scratch_data (send_scratch);
    }
  if (recv_in_place)
    recv = _hp_tensor_data (out);
  else
    {
      recv_scratch = scratch_new (recv_total, elem);
      recv = scratch_data (recv_scratch);
    }

  for (gint c = 0; !send_in_place && c < n; c++)
    {
      gint64 block[HP_TENSOR_MAX_NDIM], from[HP_TENSOR_MAX_NDIM] = { 0 };
      gint64 zeros[HP_TENSOR_MAX_NDIM] = { 0 };
      gint64 j_offset, j_length;

      _hp_chunk (level_j, n, c, &j_offset, &j_length);
      memcpy (block, local_shape, st->ndim * sizeof (gint64));
      block[j] = j_length;
      from[j] = j_offset;
      copy_block (send + elem * send_displs[c], block, zeros,
                  _hp_tensor_data (st->local), local_shape, from, block, st->ndim, elem);
    }

  if (!_hp_mpi_check (MPI_Ialltoallv (send, send_counts, send_displs, type,
                                      recv, recv_counts, recv_displs, type, comm, &request),
                      "MPI_Ialltoallv", error))
    return FALSE;
  if (!_hp_collective_wait (&request, st->mesh, HP_COLLECTIVE_ALLTOALLV, "redistribute", error))
    {
      give_up (st, &out, &send_scratch, &recv_scratch);
      _hp_collective_abandon (g_steal_pointer (&send_counts));
      _hp_collective_abandon (g_steal_pointer (&send_displs));
      _hp_collective_abandon (g_steal_pointer (&recv_counts));
      _hp_collective_abandon (g_steal_pointer (&recv_displs));
      return FALSE;
    }

  for (gint c = 0; !recv_in_place && c < n; c++)
    {
      gint64 block[HP_TENSOR_MAX_NDIM], at[HP_TENSOR_MAX_NDIM] = { 0 };
      gint64 zeros[HP_TENSOR_MAX_NDIM] = { 0 };
      gint64 i_offset, i_length;

      _hp_chunk (level_i, n, c, &i_offset, &i_length);
      memcpy (block, out_shape, st->ndim * sizeof (gint64));
      block[i] = i_length;
      at[i] = i_offset;
      copy_block (_hp_tensor_data (out), out_shape, at, recv + elem * recv_displs[c],
                  block, zeros, block, st->ndim, elem);
    }

  state_set_local (st, g_steal_pointer (&out));
  return TRUE;
}

/* P -> R: all-reduce */
static gboolean
step_all_reduce (State      *st,
                 guint       d,
                 HpReduceOp  op,
                 GError    **error)
{
  guint ndim;
  const gint64 *local_shape = hp_tensor_get_shape (st->local, &ndim);
  HpDType dtype = hp_tensor_get_dtype (st->local);
  gint64 numel = hp_tensor_get_numel (st->local);
  g_autoptr(HpTensor) out = NULL;
  MPI_Request request;

  if (!check_count (numel, error))
    return FALSE;

  out = _hp_tensor_new_uninit (dtype, local_shape, ndim);
  if (!_hp_mpi_check (MPI_Iallreduce (_hp_tensor_data (st->local), _hp_tensor_data (out), (int) numel,
                                      _hp_mpi_datatype (dtype), mpi_op (op),
                                      hp_device_mesh_get_dim_comm (st->mesh, d), &request),
                      "MPI_Iallreduce", error))
    return FALSE;
  if (!_hp_collective_wait (&request, st->mesh, HP_COLLECTIVE_ALLREDUCE, "redistribute", error))
    {
      give_up (st, &out, NULL, NULL);
      return FALSE;
    }

  if (op == HP_REDUCE_OP_AVG)
    _hp_dtensor_divide_for_avg (out, st->mesh_shape[d]);
  state_set_local (st, g_steal_pointer (&out));
  return TRUE;
}

/* P -> S(k): reduce-scatter the pieces of dim k */
static gboolean
step_reduce_scatter (State      *st,
                     guint       d,
                     guint       k,
                     HpReduceOp  op,
                     GError    **error)
{
  gint n = st->mesh_shape[d];
  HpDType dtype = hp_tensor_get_dtype (st->local);
  gsize elem = hp_dtype_get_size (dtype);
  gint64 local_shape[HP_TENSOR_MAX_NDIM];
  gint64 outer, inner, level, out_shape[HP_TENSOR_MAX_NDIM];
  g_autofree int *counts = g_new (int, n);
  g_autoptr(GBytes) scratch = NULL;
  guint8 *packed;
  g_autoptr(HpTensor) out = NULL;
  gconstpointer send;
  gint64 my_offset, my_length;
  MPI_Request request;

  memcpy (local_shape, hp_tensor_get_shape (st->local, NULL), st->ndim * sizeof (gint64));
  level = local_shape[k];
  outer = _hp_shape_numel (local_shape, k);
  inner = _hp_shape_numel (local_shape + k + 1, st->ndim - k - 1);
  if (!check_count (hp_tensor_get_numel (st->local), error))
    return FALSE;

  _hp_chunk (level, n, st->coordinate[d], &my_offset, &my_length);
  memcpy (out_shape, local_shape, st->ndim * sizeof (gint64));
  out_shape[k] = my_length;

  for (gint c = 0; c < n; c++)
    {
      gint64 offset, length;

      _hp_chunk (level, n, c, &offset, &length);
      counts[c] = (int) (outer * length * inner);
    }

  if (outer == 1)
    send = _hp_tensor_data (st->local);
  else
    {
      gint64 at = 0;

      scratch = scratch_new (hp_tensor_get_numel (st->local), elem);
      packed = scratch_data (scratch);
      for (gint c = 0; c < n; c++)
        {
          gint64 block[HP_TENSOR_MAX_NDIM], from[HP_TENSOR_MAX_NDIM] = { 0 };
          gint64 zeros[HP_TENSOR_MAX_NDIM] = { 0 };
          gint64 offset, length;

          _hp_chunk (level, n, c, &offset, &length);
          memcpy (block, local_shape, st->ndim * sizeof (gint64));
          block[k] = length;
          from[k] = offset;
          copy_block (packed + elem * at, block, zeros, _hp_tensor_data (st->local),
                      local_shape, from, block, st->ndim, elem);
          at += counts[c];
        }
      send = packed;
    }

  out = _hp_tensor_new_uninit (dtype, out_shape, st->ndim);
  if (!_hp_mpi_check (MPI_Ireduce_scatter (send, _hp_tensor_data (out), counts,
                                           _hp_mpi_datatype (dtype), mpi_op (op),
                                           hp_device_mesh_get_dim_comm (st->mesh, d), &request),
                      "MPI_Ireduce_scatter", error))
    return FALSE;
  if (!_hp_collective_wait (&request, st->mesh, HP_COLLECTIVE_REDUCE_SCATTER, "redistribute", error))
    {
      give_up (st, &out, &scratch, NULL);
      _hp_collective_abandon (g_steal_pointer (&counts));
      return FALSE;
    }

  if (op == HP_REDUCE_OP_AVG)
    _hp_dtensor_divide_for_avg (out, n);
  state_set_local (st, g_steal_pointer (&out));
  return TRUE;
}

/* The ranks agree on the step from the placement
 * of mesh dim @d to @to before its collective */
static gboolean
agree_on_step (State        *st,
               guint         d,
               HpPlacement  *to,
               GError      **error)
{
  HpPlacement *from = g_ptr_array_index (st->current, d);
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (HP_COLLECTIVE_ALLGATHERV, "redistribute");

  if (hp_placement_is_shard (from))
    call.op = hp_placement_is_shard (to) ? HP_COLLECTIVE_ALLTOALLV : HP_COLLECTIVE_ALLGATHERV;
  else
    call.op = hp_placement_is_shard (to) ? HP_COLLECTIVE_REDUCE_SCATTER : HP_COLLECTIVE_ALLREDUCE;
  call.mesh_dim = (gint) d;
  call.dtype = hp_tensor_get_dtype (st->local);
  call.shape = st->shape;
  call.ndim = st->ndim;
  call.placements = st->current;
  call.target = to;
  return _hp_collective_agree (st->mesh, &call, error);
}

static gboolean
run_step (State        *st,
          guint         d,
          HpPlacement  *to,
          GError      **error)
{
  HpPlacement *from = g_ptr_array_index (st->current, d);
  gboolean ok = TRUE;

  if (st->mesh_shape[d] > 1)
    {
      /* every step but R -> S(k) communicates */
      if (!hp_placement_is_replicate (from) && !agree_on_step (st, d, to, error))
        return FALSE;
      if (hp_placement_is_shard (from) && hp_placement_is_replicate (to))
        ok = step_all_gather (st, d, hp_shard_get_dim (HP_SHARD (from)), error);
      else if (hp_placement_is_replicate (from) && hp_placement_is_shard (to))
        ok = step_chunk (st, d, hp_shard_get_dim (HP_SHARD (to)), error);
      else if (hp_placement_is_shard (from) && hp_placement_is_shard (to))
        ok = step_all_to_all (st, d, hp_shard_get_dim (HP_SHARD (from)),
                              hp_shard_get_dim (HP_SHARD (to)), error);
      else if (hp_placement_is_partial (from) && hp_placement_is_replicate (to))
        ok = step_all_reduce (st, d, hp_partial_get_reduce_op (HP_PARTIAL (from)), error);
      else if (hp_placement_is_partial (from) && hp_placement_is_shard (to))
        ok = step_reduce_scatter (st, d, hp_shard_get_dim (HP_SHARD (to)),
                                  hp_partial_get_reduce_op (HP_PARTIAL (from)), error);
      else
        g_return_val_if_reached (FALSE);
    }

  if (ok)
    {
      g_ptr_array_index (st->current, d) = g_object_ref (to);
      g_object_unref (from);
    }
  return ok;
}

/* The mesh dims before @d that shard tensor dim @k, as a bit set */
static guint64
sharding_dims_before (GPtrArray *placements,
                      guint      d,
                      guint      k)
{
  guint64 set = 0;

  for (guint e = 0; e < d; e++)
    {
      HpPlacement *p = g_ptr_array_index (placements, e);

      if (hp_placement_is_shard (p) && (guint) hp_shard_get_dim (HP_SHARD (p)) == k)
        set |= G_GUINT64_CONSTANT (1) << e;
    }
  return set;
}

static gboolean
have_shard (GPtrArray *placements)
{
  for (guint i = 0; i < placements->len; i++)
    if (hp_placement_is_shard (g_ptr_array_index (placements, i)))
      return TRUE;
  return FALSE;
}

/* Moves @local, this rank's part of a tensor of global @shape laid out
 * by @from, to the layout @to (both normalised). Every target that is
 * Partial must equal its source; the caller checks that before any rank
 * communicates. Returns the new local tensor, with no autograd history. */
HpTensor *
_hp_redistribute_local (HpTensor      *local,
                        const gint64  *shape,
                        guint          ndim,
                        HpDeviceMesh  *mesh,
                        GPtrArray     *from,
                        GPtrArray     *to,
                        GError       **error)
{
  guint mesh_ndim = hp_device_mesh_get_ndim (mesh);
  g_autoptr(GPtrArray) current = _hp_placements_copy (from);
  State st = {
    .local = hp_tensor_detach (local),
    .current = current,
    .shape = shape,
    .ndim = ndim,
    .mesh = mesh,
    .coordinate = hp_device_mesh_get_coordinate (mesh, NULL),
    .mesh_shape = hp_device_mesh_get_shape (mesh, NULL),
  };
  gboolean ok = TRUE;

  /* 1. undo inner shards that stand in the way, last mesh dim first */
  if (have_shard (from))
    for (guint d = mesh_ndim; ok && d-- > 0;)
      {
        HpPlacement *target = g_ptr_array_index (to, d);
        HpPlacement *now = g_ptr_array_index (current, d);

        if (hp_placement_is_shard (target))
          {
            guint k = hp_shard_get_dim (HP_SHARD (target));

            if (sharding_dims_before (current, d, k) != sharding_dims_before (to, d, k))
              {
                if (!hp_placement_is_replicate (now))
                  {
                    g_autoptr(HpPlacement) replicate = hp_replicate_new ();
                    ok = run_step (&st, d, replicate, error);
                  }
                continue;
              }
          }

        if (!hp_placement_equal (now, target))
          ok = run_step (&st, d, target, error);
      }

  /* 2. the remaining differences, first mesh dim first */
  for (guint d = 0; ok && d < mesh_ndim; d++)
    if (!hp_placement_equal (g_ptr_array_index (current, d), g_ptr_array_index (to, d)))
      ok = run_step (&st, d, g_ptr_array_index (to, d), error);

  if (!ok)
    {
      g_object_unref (st.local);
      return NULL;
    }
  return st.local;
}
