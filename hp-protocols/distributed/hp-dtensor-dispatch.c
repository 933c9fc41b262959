/* hp-dtensor-dispatch.c: sharding propagation for tensor ops on DTensors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An op with a DTensor input lands here (see hp-op-call-private.h). The
 * inputs must live on one mesh; a plain tensor may join them only if it
 * has one element (it counts as Replicate).
 *
 * For each mesh dim on its own, the op's rule looks at the inputs'
 * placements and picks the placement of the result and the placement
 * each input needs (spec/dtensor.md §4); a mesh dim no rule covers gets
 * Replicate everywhere. The inputs that do not fit are redistributed, the
 * op runs on the local tensors and the result is wrapped with its
 * placements. Three more things make the local computation right:
 *
 * - the gradient rule (DESIGN.md §5): an input that is Replicate on a
 *   mesh dim where the result is not contributes a different part of the
 *   result on each rank, so the gradients of its copies are summed over
 *   that mesh dim;
 * - an additive Replicate operand of a Partial(sum) result (a bias, the
 *   other side of an add) is added by the ranks at coordinate 0 of that
 *   mesh dim alone (the others add it times zero, which keeps them in
 *   the gradient's sum), so that the sum over the ranks adds it once
 *   and exactly: dividing it by the mesh dim's size would round for a
 *   size that is not a power of two, and so would its gradient, the sum
 *   of the divided copies. (An infinite operand times zero is NaN: such
 *   an operand gives NaN where one rank would give infinity.)
 * - a kernel that checks the values of a sharded input (gather's index,
 *   a cast into int64) may fail on some ranks alone: the ranks agree on
 *   the outcome, so that all fail or none does.
 *
 * Every step is a differentiable DTensor operation or a local op, so
 * backward needs nothing more.
 */

#include "config.h"

#include <string.h>

#include "hp-collective-private.h"
#include "hp-device-mesh-mpi.h"
#include "hp-dtensor-private.h"
#include "hp-error.h"
#include "hp-mpi-private.h"
#include "hp-op-call-private.h"
#include "hp-select-private.h"
#include "hp-tensor-ops.h"

/* The decision for one call */
typedef struct
{
  const HpOpCall *call;
  HpDeviceMesh *mesh;
  guint mesh_ndim;
  const gint *mesh_shape;
  /* the inputs as DTensors (NULL for absent optional inputs) */
  GPtrArray *inputs;
  /* per input: the placements it needs */
  GPtrArray **want;
  /* the result's placements */
  GPtrArray *out;
  /* a mean over a sharded dim: the local op divides by the global count */
  gboolean exact_mean;
  /* reshape: the global target shape, and for each sharded target dim
   * the local size as local_in[from_dim] * num / den (from_dim -1: the
   * target dim is whole) */
  gboolean reshape;
  guint reshape_ndim;
  gint64 reshape_shape[HP_TENSOR_MAX_NDIM];
  gint reshape_from_dim[HP_TENSOR_MAX_NDIM];
  gint64 reshape_num[HP_TENSOR_MAX_NDIM];
  gint64 reshape_den[HP_TENSOR_MAX_NDIM];
  /* cross entropy with the classes sharded on this mesh dim, or -1 */
  gint class_parallel_dim;
  /* a selection over a dim sharded on this mesh dim, or -1 */
  gint select_mesh_dim;
} Plan;

static HpPlacement *
current (Plan *plan,
         guint i,
         guint d)
{
  HpDTensor *input = g_ptr_array_index (plan->inputs, i);

  return input != NULL ? g_ptr_array_index (hp_dtensor_get_placements (input), d) : NULL;
}

static gint
shard_dim (HpPlacement *p)
{
  return p != NULL && hp_placement_is_shard (p) ? hp_shard_get_dim (HP_SHARD (p)) : -1;
}

static gboolean
is_linear_partial (HpPlacement *p)
{
  HpReduceOp op;

  if (p == NULL || !hp_placement_is_partial (p))
    return FALSE;
  op = hp_partial_get_reduce_op (HP_PARTIAL (p));
  return op == HP_REDUCE_OP_SUM || op == HP_REDUCE_OP_AVG;
}

static guint
input_ndim (Plan *plan,
            guint i)
{
  return hp_tensor_get_ndim (HP_TENSOR (g_ptr_array_index (plan->inputs, i)));
}

static const gint64 *
input_shape (Plan *plan,
             guint i)
{
  return hp_tensor_get_shape (HP_TENSOR (g_ptr_array_index (plan->inputs, i)), NULL);
}

/* The ranks agree on a collective of @caller over
 * input @i, by its global shape and current placements */
static gboolean
agree_on_input (Plan          *plan,
                HpCollective   op,
                const gchar   *caller,
                gint           mesh_dim,
                guint          i,
                GError       **error)
{
  HpDTensor *input = g_ptr_array_index (plan->inputs, i);
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (op, caller);

  call.mesh_dim = mesh_dim;
  call.dtype = hp_tensor_get_dtype (HP_TENSOR (input));
  call.shape = hp_tensor_get_shape (HP_TENSOR (input), &call.ndim);
  call.placements = hp_dtensor_get_placements (input);
  return _hp_collective_agree (plan->mesh, &call, error);
}

static void
set_placement (GPtrArray   *array,
               guint        d,
               HpPlacement *placement)
{
  g_object_unref (g_ptr_array_index (array, d));
  g_ptr_array_index (array, d) = placement;
}

static void
want (Plan        *plan,
      guint        i,
      guint        d,
      HpPlacement *placement)
{
  if (g_ptr_array_index (plan->inputs, i) == NULL)
    {
      g_object_unref (placement);
      return;
    }
  set_placement (plan->want[i], d, placement);
}

static void
want_shard (Plan *plan,
            guint i,
            guint d,
            gint  dim)
{
  want (plan, i, d, _hp_placement_shared_shard (dim));
}

static void
keep (Plan *plan,
      guint i,
      guint d)
{
  HpPlacement *p = current (plan, i, d);

  if (p != NULL)
    want (plan, i, d, g_object_ref (p));
}

/* The result is sharded on @out_dim */
static void
out_shard (Plan *plan,
           guint d,
           guint out_dim)
{
  set_placement (plan->out, d, _hp_placement_shared_shard (out_dim));
}

static void
out_partial (Plan       *plan,
             guint       d,
             HpReduceOp  op)
{
  set_placement (plan->out, d, _hp_placement_shared_partial (op));
}

/* Rules: each sets plan->want[*][d] and plan->out[d] (both start as
 * Replicate) and returns FALSE when it has no better answer than
 * Replicate for everything. */

/* Element-wise with broadcasting: input i's dim k is result dim
 * k + (out_ndim - ndim_i); a dim of size 1 that the result broadcasts
 * cannot carry a shard. */
static gboolean
rule_elementwise (Plan *plan,
                  guint d,
                  guint out_ndim,
                  const gint64 *out_shape)
{
  guint n = plan->inputs->len;
  gint best = -1, best_shards = -1, out_dim = -1;

  for (guint i = 0; i < n; i++)
    {
      HpPlacement *p = current (plan, i, d);
      gint k = shard_dim (p);

      if (p == NULL)
        continue;
      if (k >= 0)
        {
          guint offset = out_ndim - input_ndim (plan, i);
          gint shards = 0;

          if (input_shape (plan, i)[k] != out_shape[k + offset])
            continue;
          for (guint e = 0; e < plan->mesh_ndim; e++)
            shards += shard_dim (current (plan, i, e)) >= 0;
          if (shards > best_shards)
            {
              best = i;
              best_shards = shards;
              out_dim = k + offset;
            }
        }
    }

  if (best >= 0)
    {
      /* follow the input with the most shards */
      for (guint i = 0; i < n; i++)
        {
          guint offset = out_ndim - input_ndim (plan, i);
          gint k = out_dim - (gint) offset;

          if (g_ptr_array_index (plan->inputs, i) == NULL)
            continue;
          if (k >= 0 && input_shape (plan, i)[k] == out_shape[out_dim])
            want_shard (plan, i, d, k);
        }
      out_shard (plan, d, out_dim);
      return TRUE;
    }

  return FALSE;
}

/* linear (x [..., in], W [out, in], b [out]) */
static gboolean
rule_linear (Plan *plan,
             guint d)
{
  guint x_ndim = input_ndim (plan, 0);
  gint xk = shard_dim (current (plan, 0, d));
  gint wk = shard_dim (current (plan, 1, d));
  HpPlacement *x = current (plan, 0, d);

  if (wk == 0)
    {
      /* colwise: each rank makes its slice of the output features */
      want_shard (plan, 1, d, 0);
      want_shard (plan, 2, d, 0);
      out_shard (plan, d, x_ndim - 1);
      return TRUE;
    }
  if (wk == 1 || xk == (gint) x_ndim - 1)
    {
      /* rowwise: partial sums over the input features */
      want_shard (plan, 0, d, x_ndim - 1);
      want_shard (plan, 1, d, 1);
      out_partial (plan, d, HP_REDUCE_OP_SUM);
      return TRUE;
    }
  if (xk >= 0)
    {
      /* batch or sequence sharded input, whole weight */
      want_shard (plan, 0, d, xk);
      out_shard (plan, d, xk);
      return TRUE;
    }
  if (is_linear_partial (x) && wk < 0 && !hp_placement_is_partial (current (plan, 1, d)))
    {
      keep (plan, 0, d);
      out_partial (plan, d, hp_partial_get_reduce_op (HP_PARTIAL (x)));
      return TRUE;
    }
  return FALSE;
}

/* matmul of at least 2-d operands (a [..., m, k] @ b [..., k, n]); 1-d
 * operands go through Replicate */
static gboolean
rule_matmul (Plan         *plan,
             guint         d,
             guint         out_ndim,
             const gint64 *out_shape)
{
  guint an = input_ndim (plan, 0), bn = input_ndim (plan, 1);
  gint ak = shard_dim (current (plan, 0, d)), bk = shard_dim (current (plan, 1, d));

  if (an < 2 || bn < 2)
    return FALSE;

  /* contraction dim sharded on both sides (or one of them) */
  if (ak == (gint) an - 1 || bk == (gint) bn - 2)
    {
      want_shard (plan, 0, d, an - 1);
      want_shard (plan, 1, d, bn - 2);
      out_partial (plan, d, HP_REDUCE_OP_SUM);
      return TRUE;
    }
  if (ak == (gint) an - 2)
    {
      want_shard (plan, 0, d, an - 2);
      out_shard (plan, d, out_ndim - 2);
      return TRUE;
    }
  if (bk == (gint) bn - 1)
    {
      want_shard (plan, 1, d, bn - 1);
      out_shard (plan, d, out_ndim - 1);
      return TRUE;
    }
  /* a batch dim: both operands sharded there unless broadcast */
  if (ak >= 0 || bk >= 0)
    {
      guint i = ak >= 0 ? 0 : 1;
      gint k = ak >= 0 ? ak : bk;
      guint o = k + (out_ndim - input_ndim (plan, i));

      for (guint j = 0; j < 2; j++)
        {
          gint kj = (gint) o - (gint) (out_ndim - input_ndim (plan, j));

          if (kj >= 0 && input_shape (plan, j)[kj] == out_shape[o])
            want_shard (plan, j, d, kj);
        }
      out_shard (plan, d, o);
      return TRUE;
    }
  return FALSE;
}

/* softmax, log_softmax, rms_norm: the normalised dim whole, other shards
 * pass through */
static gboolean
rule_normalize (Plan *plan,
                guint d,
                guint dim)
{
  gint k = shard_dim (current (plan, 0, d));

  if (k < 0 || (guint) k == dim)
    return FALSE;
  want_shard (plan, 0, d, k);
  out_shard (plan, d, k);
  return TRUE;
}

/* sum and mean over @dim (G_MAXUINT: every dim) */
static gboolean
rule_reduce (Plan    *plan,
             guint    d,
             guint    dim,
             gboolean keepdim)
{
  HpPlacement *p = current (plan, 0, d);
  gint k = shard_dim (p);

  if (k >= 0 && (dim == G_MAXUINT || (guint) k == dim))
    {
      want_shard (plan, 0, d, k);
      out_partial (plan, d, HP_REDUCE_OP_SUM);
      plan->exact_mean = TRUE;
      return TRUE;
    }
  if (k >= 0)
    {
      want_shard (plan, 0, d, k);
      out_shard (plan, d, keepdim || (guint) k < dim ? (guint) k : (guint) k - 1);
      return TRUE;
    }
  return FALSE;
}

/* tril and triu: the matrices of the last two dims whole, shards of the
 * leading dims pass through */
static gboolean
rule_batched_matrix (Plan *plan,
                     guint d)
{
  gint k = shard_dim (current (plan, 0, d));

  if (k < 0 || k + 2 >= (gint) input_ndim (plan, 0))
    return FALSE;
  want_shard (plan, 0, d, k);
  out_shard (plan, d, k);
  return TRUE;
}

/* transpose and permute: a shard moves with its dim */
static gboolean
rule_permute (Plan        *plan,
              guint        d,
              const guint *perm,
              guint        ndim)
{
  HpPlacement *p = current (plan, 0, d);
  gint k = shard_dim (p);

  if (k >= 0)
    {
      for (guint o = 0; o < ndim; o++)
        if (perm[o] == (guint) k)
          {
            want_shard (plan, 0, d, k);
            out_shard (plan, d, o);
            return TRUE;
          }
    }
  return FALSE;
}

/* scaled_dot_product_attention: heads (dim 1) or batch (dim 0) sharded on
 * q, k, v and the result; a mask follows where it is not broadcast */
static gboolean
rule_attention (Plan *plan,
                guint d)
{
  gint n = plan->mesh_shape[d];
  gint dim = -1;

  for (guint i = 0; i < 3; i++)
    {
      gint k = shard_dim (current (plan, i, d));

      if (k == 1)
        dim = 1;
      else if (k == 0 && dim < 0)
        dim = 0;
    }
  if (dim < 0)
    return FALSE;
  /* every rank's query heads must use its own key/value heads: equal
   * head counts are chunked alike; grouped heads must divide evenly at
   * this mesh dim, after the earlier mesh dims' shards of the heads */
  if (dim == 1)
    {
      gint64 q_heads = input_shape (plan, 0)[1], kv_heads = input_shape (plan, 1)[1];

      for (guint e = 0; e < d; e++)
        if (shard_dim (g_ptr_array_index (plan->want[0], e)) == 1)
          {
            q_heads /= plan->mesh_shape[e];
            kv_heads /= plan->mesh_shape[e];
          }
      if (q_heads != kv_heads && (q_heads % n != 0 || kv_heads % n != 0))
        return FALSE;
    }

  for (guint i = 0; i < 3; i++)
    want_shard (plan, i, d, dim);
  if (g_ptr_array_index (plan->inputs, 3) != NULL)
    {
      guint mn = input_ndim (plan, 3);
      gint k = (gint) mn - 4 + dim;

      if (k >= 0 && input_shape (plan, 3)[k] > 1)
        want_shard (plan, 3, d, k);
    }
  out_shard (plan, d, dim);
  return TRUE;
}

/* embedding (weight [V, D], ids): features or ids sharded; a
 * vocabulary-sharded weight gives zero rows for other ranks' ids and a
 * Partial(sum) result */
static gboolean
rule_embedding (Plan *plan,
                guint d)
{
  gint wk = shard_dim (current (plan, 0, d));
  gint ik = shard_dim (current (plan, 1, d));
  guint out_ndim = input_ndim (plan, 1) + 1;

  if (wk == 1)
    {
      want_shard (plan, 0, d, 1);
      out_shard (plan, d, out_ndim - 1);
      return TRUE;
    }
  if (wk == 0)
    {
      want_shard (plan, 0, d, 0);
      out_partial (plan, d, HP_REDUCE_OP_SUM);
      return TRUE;
    }
  if (ik >= 0)
    {
      want_shard (plan, 1, d, ik);
      out_shard (plan, d, ik);
      return TRUE;
    }
  return FALSE;
}

/* apply_rotary (x [..., S, H, D], cos [S, D/2], sin [S, D/2]) */
static gboolean
rule_rotary (Plan *plan,
             guint d)
{
  guint ndim = input_ndim (plan, 0);
  gint k = shard_dim (current (plan, 0, d));

  if (k < 0 || k == (gint) ndim - 1)
    return FALSE;
  want_shard (plan, 0, d, k);
  if (k == (gint) ndim - 3)
    {
      /* positions: the tables follow */
      want_shard (plan, 1, d, 0);
      want_shard (plan, 2, d, 0);
    }
  out_shard (plan, d, k);
  return TRUE;
}

/* Whether every rank's piece of @from, scaled by @num / @den, is its
 * piece of @to, so that reshaping the local tensors cuts @to as
 * torch.chunk would */
static gboolean
chunks_scale (gint64 from,
              gint64 to,
              gint   n,
              gint64 num,
              gint64 den)
{
  for (gint c = 0; c < n; c++)
    {
      gint64 offset, length, to_offset, to_length;

      _hp_chunk (from, n, c, &offset, &length);
      _hp_chunk (to, n, c, &to_offset, &to_length);
      if (offset % den != 0 || length % den != 0 ||
          offset / den * num != to_offset || length / den * num != to_length)
        return FALSE;
    }
  return TRUE;
}

/* reshape: a shard stays when its dim is kept, split with the shard on
 * the leading piece and every rank holding whole trailing blocks (the
 * aligned head split [B, S, H*D] -> [B, S, H, D]), or merged as the
 * leading dim of the merge */
static gboolean
rule_reshape (Plan *plan,
              guint d)
{
  const gint64 *in = input_shape (plan, 0);
  guint in_ndim = input_ndim (plan, 0);
  const gint64 *out = plan->reshape_shape;
  guint out_ndim = plan->reshape_ndim;
  HpPlacement *p = current (plan, 0, d);
  gint k = shard_dim (p);
  gint64 before = 1, out_before = 1;
  guint o;

  if (k < 0)
    return FALSE;

  /* the shard must be this mesh dim's alone, and the target dim must start
   * where the sharded dim starts */
  for (guint e = 0; e < plan->mesh_ndim; e++)
    if (e != d && shard_dim (current (plan, 0, e)) == k)
      return FALSE;
  for (gint j = 0; j < k; j++)
    before *= in[j];
  for (o = 0; o < out_ndim && out_before < before; o++)
    out_before *= out[o];
  while (o < out_ndim && out_before == before && out[o] == 1 && in[k] != 1)
    o++;
  if (o >= out_ndim || out_before != before)
    return FALSE;

  if (out[o] == in[k])
    {
      plan->reshape_num[o] = plan->reshape_den[o] = 1;
    }
  else if (out[o] < in[k] && out[o] > 0 && in[k] % out[o] == 0)
    {
      gint64 inner = in[k] / out[o];

      if (!chunks_scale (in[k], out[o], plan->mesh_shape[d], 1, inner))
        return FALSE;
      plan->reshape_num[o] = 1;
      plan->reshape_den[o] = inner;
    }
  else if (out[o] > in[k] && in[k] > 0 && out[o] % in[k] == 0)
    {
      gint64 merged = in[k], factor = 1;

      /* the dims merged behind the sharded one are whole on every mesh dim */
      for (guint j = k + 1; j < in_ndim && merged < out[o]; j++)
        {
          for (guint e = 0; e < plan->mesh_ndim; e++)
            if (shard_dim (current (plan, 0, e)) == (gint) j)
              return FALSE;
          merged *= in[j];
          factor *= in[j];
        }
      if (merged != out[o] || !chunks_scale (in[k], out[o], plan->mesh_shape[d], factor, 1))
        return FALSE;
      plan->reshape_num[o] = factor;
      plan->reshape_den[o] = 1;
    }
  else
    return FALSE;

  want_shard (plan, 0, d, k);
  set_placement (plan->out, d, hp_shard_new (o));
  plan->reshape_from_dim[o] = k;
  return TRUE;
}

/* cross_entropy (logits [..., C], targets): loss parallelism when the
 * classes are sharded on exactly one mesh dim and the logits are whole on
 * the others; everything else goes through Replicate */
static void
plan_cross_entropy (Plan *plan)
{
  HpTensor *logits = HP_TENSOR (g_ptr_array_index (plan->inputs, 0));
  HpTensor *targets = HP_TENSOR (g_ptr_array_index (plan->inputs, 1));
  guint ndim = hp_tensor_get_ndim (logits);
  gint dim = -1;

  if (ndim == 0 || !hp_dtype_is_floating (hp_tensor_get_dtype (logits)) ||
      hp_tensor_get_dtype (targets) != HP_DTYPE_INT64 ||
      !_hp_tensor_has_shape (targets, hp_tensor_get_shape (logits, NULL), ndim - 1))
    return;

  for (guint d = 0; d < plan->mesh_ndim; d++)
    {
      HpPlacement *p = current (plan, 0, d);

      if (shard_dim (p) == (gint) ndim - 1 && dim < 0)
        dim = d;
      else if (!hp_placement_is_replicate (p))
        return;
    }
  if (dim < 0)
    return;

  want_shard (plan, 0, dim, ndim - 1);
  plan->class_parallel_dim = dim;
}

/* narrow, cat and gather: shards of the other dims pass through, on
 * every input alike, when every input has input 0's size there (gather's
 * index may be shorter than self) */
static gboolean
rule_along_dim (Plan *plan,
                guint d,
                guint dim)
{
  gint k = shard_dim (current (plan, 0, d));

  if (k < 0 || (guint) k == dim)
    return FALSE;
  for (guint i = 1; i < plan->inputs->len; i++)
    if (g_ptr_array_index (plan->inputs, i) != NULL &&
        input_shape (plan, i)[k] != input_shape (plan, 0)[k])
      return FALSE;
  for (guint i = 0; i < plan->inputs->len; i++)
    want_shard (plan, i, d, k);
  out_shard (plan, d, k);
  return TRUE;
}

/* topk, max, min, argmax and argmin over @info->dim: a shard of another
 * dim passes through (one dim lower past a dim the results drop); a
 * shard of the selected dim on the first mesh dim that has one gives a
 * Replicate result, selected from the candidates of every shard
 * (select_over_shards); further shards of that dim are gathered */
static gboolean
rule_select (Plan           *plan,
             guint           d,
             const HpOpInfo *info)
{
  guint dim = info->dim;
  gboolean keepdim = info->out[0].ndim == input_ndim (plan, 0);
  gint k = shard_dim (current (plan, 0, d));

  if (k < 0)
    return FALSE;
  if ((guint) k != dim)
    {
      want_shard (plan, 0, d, k);
      out_shard (plan, d, keepdim || (guint) k < dim ? (guint) k : (guint) k - 1);
      return TRUE;
    }
  if (plan->select_mesh_dim >= 0)
    return FALSE;
  plan->select_mesh_dim = d;
  want_shard (plan, 0, d, dim);
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
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_full (n, _hp_object_unref_nullable);

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
                           _hp_op_call_get_name (call), a, b);
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
                       _hp_op_call_get_name (call), i, what);
          return NULL;
        }
    }

  *mesh_out = mesh;
  return g_steal_pointer (&inputs);
}

static void
plan_reset_dim (Plan *plan,
                guint d)
{
  for (guint i = 0; i < plan->inputs->len; i++)
    want (plan, i, d, _hp_placement_shared_replicate ());
  set_placement (plan->out, d, _hp_placement_shared_replicate ());
}

static void
plan_clear (Plan *plan)
{
  for (guint i = 0; i < plan->inputs->len; i++)
    g_clear_pointer (&plan->want[i], g_ptr_array_unref);
  g_free (plan->want);
  g_clear_pointer (&plan->out, g_ptr_array_unref);
}

/* The Partial inputs that @op keeps Partial on mesh dim @d (see
 * HpOp): one reduce op throughout, every other input Replicate */
static gboolean
rule_partial (Plan *plan,
              guint d)
{
  const HpOp *op = plan->call->op;
  HpPlacement *partial = NULL;
  guint partials = 0, present = 0, n_partial = 0;

  for (guint i = 0; i < plan->inputs->len; i++)
    {
      HpPlacement *p = current (plan, i, d);

      if (p == NULL)
        continue;
      present |= HP_OP_INPUT (i);
      if (hp_placement_is_partial (p))
        {
          if (partial != NULL && !hp_placement_equal (partial, p))
            return FALSE;
          partial = p;
          partials |= HP_OP_INPUT (i);
          n_partial++;
        }
      else if (!hp_placement_is_replicate (p))
        return FALSE;
    }
  if (partial == NULL)
    return FALSE;

  if (!(op->moves_partials && n_partial == 1) &&
      !(is_linear_partial (partial) &&
        ((present & ~op->additive_inputs) == 0 ||
         (n_partial == 1 && (partials & op->linear_inputs) != 0))))
    return FALSE;

  for (guint i = 0; i < plan->inputs->len; i++)
    keep (plan, i, d);
  out_partial (plan, d, hp_partial_get_reduce_op (HP_PARTIAL (partial)));
  return TRUE;
}

/* The rule of the op's sharding kind for mesh dim @d (the kinds are
 * described at HpOpSharding); HP_OP_SHARDING_SELECT over a sharded dim
 * and HP_OP_SHARDING_CROSS_ENTROPY over sharded classes only note the
 * mesh dim here, and plan_run runs their own computation */
static gboolean
rule_of_kind (Plan           *plan,
              const HpOpInfo *info,
              guint           d)
{
  const HpOpCall *call = plan->call;
  guint ndim = input_ndim (plan, 0);

  switch (call->op->sharding)
    {
    case HP_OP_SHARDING_REPLICATE:
      return FALSE;
    case HP_OP_SHARDING_POINTWISE:
    case HP_OP_SHARDING_EXPAND:
      return rule_elementwise (plan, d, info->out[0].ndim, info->out[0].shape);
    case HP_OP_SHARDING_ALONG_DIM:
      return rule_normalize (plan, d, info->dim);
    case HP_OP_SHARDING_ALONG_DIM_ALL:
      return rule_along_dim (plan, d, info->dim);
    case HP_OP_SHARDING_BATCHED_MATRIX:
      return rule_batched_matrix (plan, d);
    case HP_OP_SHARDING_REDUCE:
      return rule_reduce (plan, d, info->dim, call->flag);
    case HP_OP_SHARDING_PERMUTE:
      return rule_permute (plan, d, info->perm, ndim);
    case HP_OP_SHARDING_RESHAPE:
      return rule_reshape (plan, d);
    case HP_OP_SHARDING_MATMUL:
      return rule_matmul (plan, d, info->out[0].ndim, info->out[0].shape);
    case HP_OP_SHARDING_LINEAR:
      return rule_linear (plan, d);
    case HP_OP_SHARDING_EMBEDDING:
      return rule_embedding (plan, d);
    case HP_OP_SHARDING_ROTARY:
      return rule_rotary (plan, d);
    case HP_OP_SHARDING_ATTENTION:
      return rule_attention (plan, d);
    case HP_OP_SHARDING_CROSS_ENTROPY:
      return (gint) d == plan->class_parallel_dim;
    case HP_OP_SHARDING_SELECT:
      return rule_select (plan, d, info);
    }
  g_return_val_if_reached (FALSE);
}

/* Fills in the plan of an op of the table, mesh dim by mesh dim, after
 * its inference has checked the global shapes */
static void
plan_table_rules (Plan           *plan,
                  const HpOpInfo *info)
{
  switch (plan->call->op->sharding)
    {
    case HP_OP_SHARDING_RESHAPE:
      plan->reshape = TRUE;
      plan->reshape_ndim = info->out[0].ndim;
      memcpy (plan->reshape_shape, info->out[0].shape, info->out[0].ndim * sizeof (gint64));
      break;
    case HP_OP_SHARDING_CROSS_ENTROPY:
      plan_cross_entropy (plan);
      break;
    default:
      break;
    }

  for (guint d = 0; d < plan->mesh_ndim; d++)
    if (!rule_of_kind (plan, info, d) && !rule_partial (plan, d))
      plan_reset_dim (plan, d);
}

/* Vocabulary-parallel embedding on local tensors: ids outside this
 * rank's rows [first, first + rows) give zero rows; ids outside the
 * whole vocabulary (@global_shape [V, D]) are an error */
static HpTensor *
embedding_rows (HpTensor      *weight,
                HpTensor      *ids,
                gint64         first,
                const gint64  *global_shape,
                GError       **error)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (ids, &ndim);
  gint64 rows = hp_tensor_get_shape (weight, NULL)[0];
  gint64 n = hp_tensor_get_numel (ids);
  const gint64 *in = _hp_tensor_data (ids);
  gint64 mask_shape[HP_TENSOR_MAX_NDIM];
  g_autoptr(HpTensor) local_ids = _hp_tensor_new_uninit (HP_DTYPE_INT64, shape, ndim);
  g_autoptr(HpTensor) mask = NULL;
  g_autoptr(HpTensor) looked_up = NULL;
  gint64 *out_ids = _hp_tensor_data (local_ids);
  gpointer mask_data;

  for (gint64 i = 0; i < n; i++)
    if (in[i] < 0 || in[i] >= global_shape[0])
      {
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "embedding: id %" G_GINT64_FORMAT " is outside [0, %" G_GINT64_FORMAT
                     ") for weight of shape [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                     in[i], global_shape[0], global_shape[0], global_shape[1]);
        return NULL;
      }

  memcpy (mask_shape, shape, ndim * sizeof (gint64));
  mask_shape[ndim] = 1;
  mask = _hp_tensor_new_uninit (hp_tensor_get_dtype (weight), mask_shape, ndim + 1);
  mask_data = _hp_tensor_data (mask);
  for (gint64 i = 0; i < n; i++)
    {
      gboolean mine = in[i] >= first && in[i] < first + rows;

      out_ids[i] = mine ? in[i] - first : 0;
      _hp_store_f64 (mask_data, hp_tensor_get_dtype (weight), i, mine ? 1.0 : 0.0);
    }

  if (rows == 0)
    {
      /* no rows here: zeros that still depend on the weight, so that
       * every rank's graph, and so its backward collectives, are alike */
      g_autoptr(HpTensor) none = hp_tensor_sum_all (weight, error);
      g_autoptr(HpTensor) zeros = NULL;

      mask_shape[ndim] = hp_tensor_get_shape (weight, NULL)[1];
      zeros = hp_tensor_new_zeros (hp_tensor_get_dtype (weight), mask_shape, ndim + 1);
      return none != NULL ? hp_tensor_mul (zeros, none, error) : NULL;
    }

  looked_up = hp_tensor_embedding (weight, local_ids, error);
  if (looked_up == NULL)
    return NULL;
  return hp_tensor_mul (looked_up, mask, error);
}

/* A selection over the dim sharded on mesh dim plan->select_mesh_dim:
 * each rank takes the k candidates of its shard with their global
 * indices, one all-gather on that mesh dim brings every rank's
 * candidates together and the selection over them, ties going to the
 * lower global index, gives what one rank would. Gathering k per rank
 * (padded where a shard is shorter) keeps the gather even. */
static gboolean
select_over_shards (Plan            *plan,
                    const HpOpInfo  *info,
                    HpTensor        *local,
                    HpTensor       **outputs,
                    GError         **error)
{
  guint d = plan->select_mesh_dim, dim = info->dim, ndim = input_ndim (plan, 0);
  gint64 offsets[HP_TENSOR_MAX_NDIM], lengths[HP_TENSOR_MAX_NDIM], global[HP_TENSOR_MAX_NDIM];
  g_autoptr(HpTensor) values = NULL;
  g_autoptr(HpTensor) keys = NULL;
  g_autoptr(GPtrArray) gathered = NULL;
  g_autoptr(HpDTensor) values_dt = NULL;
  g_autoptr(HpDTensor) keys_dt = NULL;
  g_autoptr(HpDTensor) all_values = NULL;
  g_autoptr(HpDTensor) all_keys = NULL;
  g_autoptr(HpTensor) local_values = NULL;
  g_autoptr(HpTensor) local_keys = NULL;

  _hp_layout_local_region (input_shape (plan, 0), ndim, plan->want[0], plan->mesh,
                           hp_device_mesh_get_coordinate (plan->mesh, NULL), offsets, lengths);
  if (!_hp_select_candidates (plan->call, local, dim, offsets[dim], &values, &keys, error))
    return FALSE;

  memcpy (global, input_shape (plan, 0), ndim * sizeof (gint64));
  global[dim] = _hp_select_get_k (plan->call) * plan->mesh_shape[d];
  gathered = _hp_placements_copy (plan->want[0]);
  set_placement (gathered, d, _hp_placement_shared_replicate ());
  values_dt = hp_dtensor_new_from_local (values, plan->mesh, plan->want[0], global, ndim,
                                         FALSE, error);
  if (values_dt == NULL)
    return FALSE;
  keys_dt = hp_dtensor_new_from_local (keys, plan->mesh, plan->want[0], global, ndim,
                                       FALSE, error);
  if (keys_dt == NULL)
    return FALSE;
  all_values = hp_dtensor_redistribute (values_dt, gathered, error);
  if (all_values == NULL)
    return FALSE;
  all_keys = hp_dtensor_redistribute (keys_dt, gathered, error);
  if (all_keys == NULL)
    return FALSE;

  local_values = _hp_dtensor_get_local_summing_grad (all_values, 0);
  local_keys = _hp_dtensor_get_local_summing_grad (all_keys, 0);
  return _hp_select_merge (plan->call, local_values, local_keys, dim, outputs, error);
}

static gboolean
is_additive_input (const HpOpCall *call,
                   guint           i)
{
  return (call->op->additive_inputs & HP_OP_INPUT (i)) != 0;
}

static gboolean
is_embedding (const HpOpCall *call)
{
  return call->op->sharding == HP_OP_SHARDING_EMBEDDING;
}

/* Sharded ids are checked by every rank for its own part; the ranks then
 * agree, so that all fail or none does */
static gboolean
check_sharded_ids (Plan    *plan,
                   GError **error)
{
  HpDTensor *ids = g_ptr_array_index (plan->inputs, 1);
  HpTensor *local = _hp_dtensor_peek_local (ids);
  gint64 vocab = input_shape (plan, 0)[0];
  gint64 n = hp_tensor_get_numel (local);
  const gint64 *data;
  gint64 bad = G_MININT64, any_bad;
  gboolean sharded = FALSE;

  for (guint d = 0; d < plan->mesh_ndim; d++)
    sharded |= !hp_placement_is_replicate (current (plan, 1, d));
  if (!sharded || hp_tensor_get_dtype (local) != HP_DTYPE_INT64 || input_ndim (plan, 0) != 2)
    return TRUE;

  data = _hp_tensor_data (local);
  for (gint64 i = 0; i < n && bad == G_MININT64; i++)
    if (data[i] < 0 || data[i] >= vocab)
      bad = data[i];

  any_bad = bad != G_MININT64;
  if (!agree_on_input (plan, HP_COLLECTIVE_ALLREDUCE, "embedding", -1, 1, error) ||
      !_hp_collective_allreduce (plan->mesh, hp_device_mesh_get_comm (plan->mesh), &any_bad, 1,
                                 MPI_INT64_T, MPI_MAX, "embedding", error))
    return FALSE;
  if (any_bad)
    {
      if (bad != G_MININT64)
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "embedding: id %" G_GINT64_FORMAT " is outside [0, %" G_GINT64_FORMAT ")",
                     bad, vocab);
      else
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "embedding: another rank's ids hold an id outside [0, %" G_GINT64_FORMAT ")",
                     vocab);
      return FALSE;
    }
  return TRUE;
}

/* The kernel of an op that checks the values of a sharded input may
 * fail on some ranks alone: the ranks agree on whether it @ran
 * everywhere, so that all fail or none does. On failure *@run_error
 * holds the local error, or says that another rank failed. */
static gboolean
agree_on_outcome (Plan      *plan,
                  gboolean   ran,
                  GError   **run_error)
{
  const gchar *name = _hp_op_call_get_name (plan->call);
  g_autoptr(GError) agree_error = NULL;
  gint64 failed = !ran;
  gboolean sharded = FALSE;

  /* whole inputs fail alike on every rank (the plan is every rank's) */
  for (guint i = 0; i < plan->inputs->len; i++)
    for (guint d = 0; d < plan->mesh_ndim; d++)
      sharded |= g_ptr_array_index (plan->inputs, i) != NULL &&
                 !hp_placement_is_replicate (g_ptr_array_index (plan->want[i], d));
  if (!sharded)
    return ran;

  if (!agree_on_input (plan, HP_COLLECTIVE_ALLREDUCE, name, -1, 0, &agree_error) ||
      !_hp_collective_allreduce (plan->mesh, hp_device_mesh_get_comm (plan->mesh), &failed, 1,
                                 MPI_INT64_T, MPI_MAX, name, &agree_error))
    {
      if (*run_error == NULL)
        g_propagate_error (run_error, g_steal_pointer (&agree_error));
      return FALSE;
    }
  if (failed && ran)
    g_set_error (run_error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                 "%s: another rank's part of the inputs failed the op's checks", name);
  return !failed;
}

/* Redistributes the inputs as planned, runs the op on the local tensors
 * and wraps the results */
static gboolean
plan_run (Plan           *plan,
          const HpOpInfo *info,
          HpTensor      **outputs,
          GError        **error)
{
  const HpOpCall *call = plan->call;
  guint n = plan->inputs->len;
  const gint *coordinate = hp_device_mesh_get_coordinate (plan->mesh, NULL);
  g_autoptr(GPtrArray) locals = g_ptr_array_new_full (n, _hp_object_unref_nullable);
  guint n_outputs = call->op->n_outputs;
  HpTensor *local_out[HP_OP_MAX_OUTPUTS] = { NULL };
  g_autoptr(HpTensor) out = NULL;
  g_autoptr(GError) run_error = NULL;
  gboolean ran;

  if (is_embedding (call) && !check_sharded_ids (plan, error))
    return FALSE;

  for (guint i = 0; i < n; i++)
    {
      HpDTensor *input = g_ptr_array_index (plan->inputs, i);
      g_autoptr(HpDTensor) moved = NULL;
      guint64 sum_dims = 0;
      gdouble factor = 1.0;
      HpTensor *local;

      if (input == NULL)
        {
          g_ptr_array_add (locals, NULL);
          continue;
        }

      if (_hp_placements_equal (hp_dtensor_get_placements (input), plan->want[i]))
        moved = g_object_ref (input);
      else if ((moved = hp_dtensor_redistribute (input, plan->want[i], error)) == NULL)
        return FALSE;

      for (guint d = 0; d < plan->mesh_ndim; d++)
        {
          HpPlacement *o = g_ptr_array_index (plan->out, d);

          if (!hp_placement_is_replicate (g_ptr_array_index (plan->want[i], d)) ||
              hp_placement_is_replicate (o))
            continue;
          sum_dims |= G_GUINT64_CONSTANT (1) << d;
          if (is_additive_input (call, i) && hp_placement_is_partial (o) &&
              hp_partial_get_reduce_op (HP_PARTIAL (o)) == HP_REDUCE_OP_SUM && coordinate[d] != 0)
            factor = 0.0;
        }

      local = _hp_dtensor_get_local_summing_grad (moved, sum_dims);
      if (factor != 1.0)
        {
          HpTensor *scaled = hp_tensor_scale (local, factor, error);

          g_object_unref (local);
          if (scaled == NULL)
            return FALSE;
          local = scaled;
        }
      g_ptr_array_add (locals, local);
    }

  if (is_embedding (call))
    {
      gint64 offsets[2], lengths[2];
      gboolean vocab = FALSE;

      for (guint d = 0; d < plan->mesh_ndim; d++)
        vocab |= shard_dim (g_ptr_array_index (plan->want[0], d)) == 0;
      if (vocab)
        {
          _hp_layout_local_region (input_shape (plan, 0), 2, plan->want[0], plan->mesh,
                                   hp_device_mesh_get_coordinate (plan->mesh, NULL),
                                   offsets, lengths);
          out = embedding_rows (g_ptr_array_index (locals, 0), g_ptr_array_index (locals, 1),
                                offsets[0], input_shape (plan, 0), error);
          if (out == NULL)
            return FALSE;
        }
    }

  if (out == NULL && plan->class_parallel_dim >= 0)
    {
      gint64 offsets[HP_TENSOR_MAX_NDIM], lengths[HP_TENSOR_MAX_NDIM];
      guint ndim_logits = input_ndim (plan, 0);

      /* one agreement covers the loss's two all-reduces, which follow
       * each other unconditionally */
      if (!agree_on_input (plan, HP_COLLECTIVE_ALLREDUCE, "cross_entropy",
                           plan->class_parallel_dim, 0, error))
        return FALSE;
      _hp_layout_local_region (input_shape (plan, 0), ndim_logits, plan->want[0], plan->mesh,
                               hp_device_mesh_get_coordinate (plan->mesh, NULL), offsets, lengths);
      out = _hp_cross_entropy_class_parallel (g_ptr_array_index (locals, 0),
                                              g_ptr_array_index (locals, 1), call->sizes[0],
                                              offsets[ndim_logits - 1],
                                              input_shape (plan, 0)[ndim_logits - 1],
                                              plan->mesh, (guint) plan->class_parallel_dim,
                                              error);
    }
  else if (out == NULL && plan->select_mesh_dim >= 0)
    {
      if (!select_over_shards (plan, info, g_ptr_array_index (locals, 0), local_out, error))
        return FALSE;
    }
  else if (out == NULL)
    {
      HpOpCall local_call = *call;

      /* the local call: a reshape to the local target shape; a mean over
       * a sharded dim divides by the global count */
      if (plan->reshape)
        {
          const gint64 *local_in = hp_tensor_get_shape (g_ptr_array_index (locals, 0), NULL);

          for (guint o = 0; o < plan->reshape_ndim; o++)
            local_call.sizes[o] = plan->reshape_from_dim[o] >= 0
              ? local_in[plan->reshape_from_dim[o]] * plan->reshape_num[o] / plan->reshape_den[o]
              : plan->reshape_shape[o];
        }
      if (plan->exact_mean)
        local_call.scalar = info->dim == G_MAXUINT
          ? (gdouble) hp_tensor_get_numel (g_ptr_array_index (plan->inputs, 0))
          : (gdouble) input_shape (plan, 0)[info->dim];
      /* an expand keeps the local size of each dim that passes a shard */
      if (call->op->sharding == HP_OP_SHARDING_EXPAND)
        for (guint d = 0; d < plan->mesh_ndim; d++)
          {
            gint o = shard_dim (g_ptr_array_index (plan->out, d));

            if (o >= 0)
              local_call.sizes[o] = -1;
          }
      ran = _hp_op_call_run (&local_call, (HpTensor * const *) locals->pdata, local_out,
                             &run_error);
      if (call->op->checks_values)
        ran = agree_on_outcome (plan, ran, &run_error);
      if (!ran)
        {
          for (guint o = 0; o < n_outputs; o++)
            g_clear_object (&local_out[o]);
          g_propagate_error (error, g_steal_pointer (&run_error));
          return FALSE;
        }
    }
  if (out != NULL)
    local_out[0] = g_steal_pointer (&out);
  if (local_out[0] == NULL)
    return FALSE;

  for (guint o = 0; o < n_outputs; o++)
    {
      g_autoptr(HpTensor) local = local_out[o];
      gint64 global[HP_TENSOR_MAX_NDIM];
      guint ndim;

      ndim = info->out[o].ndim;
      memcpy (global, info->out[o].shape, ndim * sizeof (gint64));
      outputs[o] = HP_TENSOR (hp_dtensor_new_from_local (local, plan->mesh, plan->out, global,
                                                         ndim, FALSE, error));
      if (outputs[o] == NULL)
        {
          for (guint p = 0; p < o; p++)
            g_clear_object (&outputs[p]);
          for (guint p = o + 1; p < n_outputs; p++)
            g_clear_object (&local_out[p]);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
_hp_dtensor_dispatch (const HpOpCall  *call,
                      HpTensor       **outputs,
                      GError         **error)
{
  g_autoptr(GPtrArray) inputs = NULL;
  HpDeviceMesh *mesh = NULL;
  gboolean ok = FALSE;
  HpOpInfo info;
  Plan plan = { .call = call };
  const gchar *issuer;

  inputs = collect_inputs (call, &mesh, error);
  if (inputs == NULL)
    return FALSE;

  /* the checks of the local op, on the global shapes, so that every rank
   * fails alike before anybody communicates */
  if (!_hp_op_call_infer (call, (HpTensor * const *) inputs->pdata, &info, error))
    return FALSE;

  plan.mesh = mesh;
  plan.mesh_shape = hp_device_mesh_get_shape (mesh, &plan.mesh_ndim);
  plan.inputs = inputs;
  plan.want = g_new0 (GPtrArray *, MAX (inputs->len, 1));
  for (guint i = 0; i < inputs->len; i++)
    plan.want[i] = _hp_placements_replicated (plan.mesh_ndim);
  plan.out = _hp_placements_replicated (plan.mesh_ndim);
  for (guint k = 0; k < HP_TENSOR_MAX_NDIM; k++)
    plan.reshape_from_dim[k] = -1;
  plan.class_parallel_dim = -1;
  plan.select_mesh_dim = -1;

  plan_table_rules (&plan, &info);
  /* the redistributions of the inputs and the op's own collectives name
   * the op, in messages and in the ranks' agreement */
  issuer = _hp_collective_set_issuer (_hp_op_call_get_name (call));
  ok = plan_run (&plan, &info, outputs, error);
  _hp_collective_set_issuer (issuer);

  plan_clear (&plan);
  return ok;
}
