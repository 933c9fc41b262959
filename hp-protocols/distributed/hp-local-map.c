/* hp-local-map.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-collective-private.h"
#include "hp-device-mesh-mpi.h"
#include "hp-dtensor-private.h"
#include "hp-error.h"
#include "hp-local-map.h"
#include "hp-mpi-private.h"

/**
 * HpLocalMap:
 *
 * A plain function made to work on DTensors: it runs on every rank on
 * that rank's local tensors, and its outputs become DTensors again.
 *
 * This is the `local_map` of PyTorch DTensor. Use it for a piece of
 * computation whose sharded form you know better than the ops'
 * sharding rules do, such as attention on the local heads: with q, k
 * and v sharded on the head dim, attention needs no communication at
 * all, and the map says so.
 *
 * A map is made once with [ctor@Hp.LocalMap.new] from the function and
 * [class@Hp.NamedPlacement] entries (axis name to placement) for its arguments,
 * its outputs and, optionally, the gradients of its arguments; they are
 * resolved against the dim names of the map's mesh when the map is
 * called. A %NULL entry marks an argument or output that is not a
 * tensor. [method@Hp.LocalMap.call] then:
 *
 * 1. checks that there is one `in_placements` entry per argument;
 * 2. redistributes each DTensor argument whose placements differ from
 *    its entry (or, without [property@Hp.LocalMap:redistribute-inputs], fails) and
 *    passes its local tensor to the function; plain tensors and %NULL
 *    pass through unchanged;
 * 3. without any DTensor argument, returns the function's outputs as
 *    they are;
 * 4. otherwise wraps each output as a DTensor with its `out_placements`
 *    entry. The global size of a sharded dim is the sum of the local
 *    sizes over the mesh dims sharding it, so uneven outputs come out
 *    right; the ranks exchange their output shapes once (one small
 *    `MPI_Allgather`) when an output is sharded;
 * 5. makes the whole call differentiable. The gradient of a DTensor
 *    argument follows its `in_grad_placements` entry: `P(sum)` on a
 *    mesh dim where the argument is Replicate sums the ranks' local
 *    gradients over that dim, `R` leaves them as they are, and a Shard
 *    must be the argument's own. Without `in_grad_placements`, an
 *    argument that is Replicate on a mesh dim where some output is not
 *    Replicate gets its local gradients summed over that dim: each
 *    rank's copy then contributed a different part of the result.
 *
 * Calling a map is collective over its mesh when any argument is a
 * DTensor. Errors that depend only on the map and the layouts of the
 * arguments are raised on every rank before any communication; when
 * the ranks exchange output shapes, a failure of the function on one
 * rank becomes an error on every rank.
 *
 * Since: 1.0
 */

struct _HpLocalMap
{
  GObject parent_instance;

  HpLocalMapFunc func;
  gpointer user_data;
  GDestroyNotify destroy;

  /* copies of the caller's named placements; NULL entries kept */
  GPtrArray *out_placements;
  GPtrArray *in_placements;
  GPtrArray *in_grad_placements;

  HpDeviceMesh *mesh;
  gboolean redistribute_inputs;
};

G_DEFINE_FINAL_TYPE (HpLocalMap, hp_local_map, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_MESH,
  PROP_REDISTRIBUTE_INPUTS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_local_map_finalize (GObject *object)
{
  HpLocalMap *self = HP_LOCAL_MAP (object);

  if (self->destroy != NULL)
    self->destroy (self->user_data);
  g_clear_pointer (&self->out_placements, g_ptr_array_unref);
  g_clear_pointer (&self->in_placements, g_ptr_array_unref);
  g_clear_pointer (&self->in_grad_placements, g_ptr_array_unref);
  g_clear_object (&self->mesh);

  G_OBJECT_CLASS (hp_local_map_parent_class)->finalize (object);
}

static void
hp_local_map_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  HpLocalMap *self = HP_LOCAL_MAP (object);

  switch (prop_id)
    {
    case PROP_MESH:
      g_value_set_object (value, self->mesh);
      break;

    case PROP_REDISTRIBUTE_INPUTS:
      g_value_set_boolean (value, self->redistribute_inputs);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_local_map_class_init (HpLocalMapClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_local_map_finalize;
  object_class->get_property = hp_local_map_get_property;

  /**
   * HpLocalMap:mesh:
   *
   * The device mesh whose dim names resolve the named placements, and
   * on which the DTensor arguments and outputs live.
   *
   * Since: 1.0
   */
  properties[PROP_MESH] =
    g_param_spec_object ("mesh", NULL, NULL,
                         HP_TYPE_DEVICE_MESH,
                         (G_PARAM_READABLE |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpLocalMap:redistribute-inputs:
   *
   * Whether a DTensor argument whose placements differ from its
   * `in_placements` entry is redistributed to them; if not, such an
   * argument is an error.
   *
   * Since: 1.0
   */
  properties[PROP_REDISTRIBUTE_INPUTS] =
    g_param_spec_boolean ("redistribute-inputs", NULL, NULL,
                          FALSE,
                          (G_PARAM_READABLE |
                           G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_local_map_init (HpLocalMap *self)
{
}

static void
free_placements_nullable (gpointer placements)
{
  if (placements != NULL)
    g_ptr_array_unref (placements);
}

static GPtrArray *
copy_named_list (GPtrArray *list)
{
  GPtrArray *out = g_ptr_array_new_full (list->len, _hp_object_unref_nullable);

  for (guint i = 0; i < list->len; i++)
    {
      HpNamedPlacement *named = g_ptr_array_index (list, i);

      g_ptr_array_add (out, named != NULL ? hp_named_placement_copy (named) : NULL);
    }
  return out;
}

static gboolean
check_named_list (GPtrArray *list)
{
  for (guint i = 0; i < list->len; i++)
    {
      gpointer named = g_ptr_array_index (list, i);

      if (named != NULL && !HP_IS_NAMED_PLACEMENT (named))
        return FALSE;
    }
  return TRUE;
}

/**
 * hp_local_map_new:
 * @func: (scope notified) (closure user_data) (destroy destroy): the
 *   function to run on the local tensors
 * @out_placements: (element-type HpNamedPlacement): one entry per output
 *   of @func, %NULL for an output that is not a tensor
 * @in_placements: (element-type HpNamedPlacement): one entry per
 *   argument, %NULL for an argument that is not a tensor
 * @in_grad_placements: (element-type HpNamedPlacement) (nullable): one
 *   entry per argument giving the placements of its gradient (a %NULL
 *   entry leaves the gradient as it is); %NULL or empty for the default
 *   rule
 * @mesh: the device mesh whose dim names resolve the placements
 * @redistribute_inputs: whether to redistribute DTensor arguments whose
 *   placements differ from their `in_placements` entries, rather than
 *   fail
 * @user_data: data for @func
 * @destroy: (nullable): frees @user_data when the map is finalized
 *
 * Wraps @func so that [method@Hp.LocalMap.call] runs it on the local tensors
 * of DTensor arguments and makes its outputs DTensors (see [class@Hp.LocalMap]).
 * The map keeps copies of the named placements, so changing them later
 * does not change the map. The entries are resolved against the dim
 * names of @mesh at each call; entries that do not fit are reported
 * there.
 *
 * The data for @func and its destroy function come last, after the
 * arguments that follow the spec's order, so that bindings can leave
 * them out: from Python, `Hp.LocalMap.new(func, out_placements,
 * in_placements, None, mesh, True)`.
 *
 * Returns: (transfer full): a new [class@Hp.LocalMap]
 *
 * Since: 1.0
 */
HpLocalMap *
hp_local_map_new (HpLocalMapFunc  func,
                  GPtrArray      *out_placements,
                  GPtrArray      *in_placements,
                  GPtrArray      *in_grad_placements,
                  HpDeviceMesh   *mesh,
                  gboolean        redistribute_inputs,
                  gpointer        user_data,
                  GDestroyNotify  destroy)
{
  HpLocalMap *self;

  g_return_val_if_fail (func != NULL, NULL);
  g_return_val_if_fail (out_placements != NULL && check_named_list (out_placements), NULL);
  g_return_val_if_fail (in_placements != NULL && check_named_list (in_placements), NULL);
  g_return_val_if_fail (in_grad_placements == NULL || check_named_list (in_grad_placements), NULL);
  g_return_val_if_fail (HP_IS_DEVICE_MESH (mesh), NULL);

  self = g_object_new (HP_TYPE_LOCAL_MAP, NULL);
  self->func = func;
  self->user_data = user_data;
  self->destroy = destroy;
  self->out_placements = copy_named_list (out_placements);
  self->in_placements = copy_named_list (in_placements);
  /* gjs passes null as an empty array; an empty list could only fit a
   * call without arguments, where it means nothing either */
  if (in_grad_placements != NULL && in_grad_placements->len > 0)
    self->in_grad_placements = copy_named_list (in_grad_placements);
  self->mesh = g_object_ref (mesh);
  self->redistribute_inputs = !!redistribute_inputs;
  return self;
}

/* Resolves the entries of @list against the mesh dim names, keeping
 * NULL entries: an array of placement arrays. */
static GPtrArray *
resolve_list (HpLocalMap   *self,
              GPtrArray    *list,
              const gchar  *what,
              GError      **error)
{
  const gchar * const *names = hp_device_mesh_get_dim_names (self->mesh);
  g_autoptr(GPtrArray) out = g_ptr_array_new_full (list->len, free_placements_nullable);

  for (guint i = 0; i < list->len; i++)
    {
      HpNamedPlacement *named = g_ptr_array_index (list, i);
      g_autoptr(GError) local_error = NULL;
      GPtrArray *resolved;

      if (named == NULL)
        {
          g_ptr_array_add (out, NULL);
          continue;
        }
      resolved = hp_resolve_placements (named, names, &local_error);
      if (resolved == NULL)
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                      "local_map: %s[%u]: ", what, i);
          return NULL;
        }
      g_ptr_array_add (out, resolved);
    }
  return g_steal_pointer (&out);
}

static guint64
dim_bit (guint d)
{
  return G_GUINT64_CONSTANT (1) << d;
}

/* Mesh dims where some output entry is not Replicate */
static guint64
outputs_not_replicate (GPtrArray *out_resolved)
{
  guint64 mask = 0;

  for (guint j = 0; j < out_resolved->len; j++)
    {
      GPtrArray *placements = g_ptr_array_index (out_resolved, j);

      for (guint d = 0; placements != NULL && d < placements->len; d++)
        if (!hp_placement_is_replicate (g_ptr_array_index (placements, d)))
          mask |= dim_bit (d);
    }
  return mask;
}

/* The mesh dims over which the local gradients of an argument passed
 * with @placements are summed, from its in_grad entry @grad (already
 * normalised): P(sum) where the argument is Replicate sums, R leaves
 * the gradient alone, a Shard must be the argument's own. */
static gboolean
grad_sum_dims (guint        index,
               GPtrArray   *placements,
               GPtrArray   *grad,
               guint64     *sum_dims,
               GError     **error)
{
  *sum_dims = 0;
  for (guint d = 0; d < placements->len; d++)
    {
      HpPlacement *have = g_ptr_array_index (placements, d);
      HpPlacement *want = g_ptr_array_index (grad, d);
      g_autofree gchar *have_str = NULL;
      g_autofree gchar *want_str = NULL;

      if (hp_placement_is_replicate (want) ||
          (hp_placement_is_shard (want) && hp_placement_equal (want, have)))
        continue;

      have_str = hp_placement_to_string (have);
      want_str = hp_placement_to_string (want);
      if (hp_placement_is_partial (want) && hp_placement_is_replicate (have))
        {
          if (hp_partial_get_reduce_op (HP_PARTIAL (want)) == HP_REDUCE_OP_SUM)
            {
              *sum_dims |= dim_bit (d);
              continue;
            }
          g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                       "local_map: in_grad_placements[%u] has %s on mesh dim %u; only P(sum) "
                       "can reduce the local gradients", index, want_str, d);
          return FALSE;
        }

      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "local_map: in_grad_placements[%u] has %s on mesh dim %u, where "
                   "argument %u is passed as %s", index, want_str, d, index, have_str);
      return FALSE;
    }
  return TRUE;
}

/* What the checks of the arguments decide for one DTensor argument */
typedef struct
{
  GPtrArray *target;   /* normalised in_placements entry */
  guint64 sum_dims;
} ArgPlan;

static void
arg_plan_clear (ArgPlan *plan)
{
  g_clear_pointer (&plan->target, g_ptr_array_unref);
}

/* Checks argument @i against its entries without communicating and
 * fills @plan for a DTensor. */
static gboolean
plan_argument (HpLocalMap  *self,
               guint        i,
               HpTensor    *arg,
               GPtrArray   *entry,
               GPtrArray   *grad_entry,
               guint64      default_sum_dims,
               ArgPlan     *plan,
               GError     **error)
{
  g_autofree gchar *context = g_strdup_printf ("local_map: argument %u", i);
  GPtrArray *have;
  guint ndim;

  if (arg == NULL)
    {
      if (entry != NULL)
        {
          g_autofree gchar *text = hp_placements_to_string (entry);

          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "%s is NULL (not a tensor), but in_placements[%u] is %s",
                       context, i, text);
          return FALSE;
        }
      return TRUE;
    }
  if (!HP_IS_DTENSOR (arg))
    return TRUE;

  if (!hp_device_mesh_equal (hp_dtensor_get_mesh (HP_DTENSOR (arg)), self->mesh))
    {
      g_autofree gchar *theirs = hp_device_mesh_to_string (hp_dtensor_get_mesh (HP_DTENSOR (arg)));
      g_autofree gchar *ours = hp_device_mesh_to_string (self->mesh);

      g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                   "%s lives on %s, not on the map's %s", context, theirs, ours);
      return FALSE;
    }
  if (entry == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "%s is an HpDTensor, but in_placements[%u] is NULL", context, i);
      return FALSE;
    }

  hp_tensor_get_shape (arg, &ndim);
  have = hp_dtensor_get_placements (HP_DTENSOR (arg));
  plan->target = _hp_placements_normalize (context, entry, self->mesh, ndim, error);
  if (plan->target == NULL)
    return FALSE;

  if (!_hp_placements_equal (have, plan->target))
    {
      g_autofree gchar *have_str = hp_placements_to_string (have);
      g_autofree gchar *want_str = hp_placements_to_string (entry);

      if (!self->redistribute_inputs)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "%s has placements %s, but in_placements expects %s (and "
                       "redistribute-inputs is off)", context, have_str, want_str);
          return FALSE;
        }
      for (guint d = 0; d < have->len; d++)
        if (hp_placement_is_partial (g_ptr_array_index (plan->target, d)) &&
            !hp_placement_equal (g_ptr_array_index (have, d), g_ptr_array_index (plan->target, d)))
          {
            g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                         "%s has placements %s, but in_placements expects %s; a "
                         "redistribution cannot make Partial placements", context,
                         have_str, want_str);
            return FALSE;
          }
    }

  if (grad_entry != NULL)
    {
      g_autofree gchar *grad_context = g_strdup_printf ("local_map: in_grad_placements[%u]", i);
      g_autoptr(GPtrArray) grad = _hp_placements_normalize (grad_context, grad_entry, self->mesh,
                                                            ndim, error);

      return grad != NULL && grad_sum_dims (i, plan->target, grad, &plan->sum_dims, error);
    }

  /* the default rule; dims where the argument is not Replicate are
   * dropped by _hp_dtensor_get_local_summing_grad() */
  plan->sum_dims = default_sum_dims;
  return TRUE;
}

/* The local tensor passed for a planned DTensor argument */
static HpTensor *
local_argument (HpDTensor  *arg,
                ArgPlan    *plan,
                GError    **error)
{
  g_autoptr(HpDTensor) moved = NULL;

  if (_hp_placements_equal (hp_dtensor_get_placements (arg), plan->target))
    moved = g_object_ref (arg);
  else
    {
      moved = hp_dtensor_redistribute (arg, plan->target, error);
      if (moved == NULL)
        return NULL;
    }
  return _hp_dtensor_get_local_summing_grad (moved, plan->sum_dims);
}

/* Checks the outputs against their entries on this rank; fills
 * @normalized with the normalised placements of each tensor output. */
static gboolean
check_outputs (GPtrArray  *outputs,
               GPtrArray  *out_resolved,
               HpLocalMap *self,
               GPtrArray  *normalized,
               GError    **error)
{
  if (outputs->len != out_resolved->len)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "local_map: func returned %u outputs, but out_placements has %u entries",
                   outputs->len, out_resolved->len);
      return FALSE;
    }

  for (guint j = 0; j < outputs->len; j++)
    {
      HpTensor *out = g_ptr_array_index (outputs, j);
      GPtrArray *entry = g_ptr_array_index (out_resolved, j);
      g_autofree gchar *context = NULL;
      GPtrArray *placements;
      guint ndim;

      if (out != NULL && HP_IS_DTENSOR (out))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "local_map: output %u is already an HpDTensor; func must return "
                       "local tensors", j);
          return FALSE;
        }
      if (out == NULL && entry != NULL)
        {
          g_autofree gchar *text = hp_placements_to_string (entry);

          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "local_map: output %u is NULL, but out_placements[%u] is %s",
                       j, j, text);
          return FALSE;
        }
      if (out != NULL && entry == NULL)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "local_map: output %u is a tensor, but out_placements[%u] is NULL",
                       j, j);
          return FALSE;
        }
      if (out == NULL)
        {
          g_ptr_array_add (normalized, NULL);
          continue;
        }

      context = g_strdup_printf ("local_map: output %u", j);
      hp_tensor_get_shape (out, &ndim);
      placements = _hp_placements_normalize (context, entry, self->mesh, ndim, error);
      if (placements == NULL)
        return FALSE;
      g_ptr_array_add (normalized, placements);
    }
  return TRUE;
}

/* Whether an output may be sharded on a mesh dim with more than one
 * rank, so that its global shape needs the other ranks' local shapes */
static gboolean
needs_shapes (HpLocalMap *self,
              GPtrArray  *out_resolved)
{
  const gint *mesh_shape = hp_device_mesh_get_shape (self->mesh, NULL);

  for (guint j = 0; j < out_resolved->len; j++)
    {
      GPtrArray *placements = g_ptr_array_index (out_resolved, j);

      for (guint d = 0; placements != NULL && d < placements->len; d++)
        if (hp_placement_is_shard (g_ptr_array_index (placements, d)) && mesh_shape[d] > 1)
          return TRUE;
    }
  return FALSE;
}

/* The record each rank contributes to the exchange of output shapes:
 * whether it succeeded, then per output entry its dtype, number of dims
 * and local shape. Records arrive in mesh rank order. */
enum { OUT_FIELDS = 2 + HP_TENSOR_MAX_NDIM };

static gsize
record_size (guint n_outputs)
{
  return 1 + (gsize) n_outputs * OUT_FIELDS;
}

static gsize
output_field (guint j)
{
  return 1 + (gsize) j * OUT_FIELDS;
}

/* The coordinate of mesh rank @rank (row-major) */
static void
unravel (HpDeviceMesh *mesh,
         gint          rank,
         gint         *coordinate)
{
  guint mesh_ndim;
  const gint *mesh_shape = hp_device_mesh_get_shape (mesh, &mesh_ndim);

  for (guint d = mesh_ndim; d-- > 0;)
    {
      coordinate[d] = rank % mesh_shape[d];
      rank /= mesh_shape[d];
    }
}

/* From every rank's record: the global shape of output @j, checked to
 * be laid out with @placements exactly as the ranks' local shapes are */
static gboolean
global_shape (HpLocalMap    *self,
              guint          j,
              GPtrArray     *placements,
              const gint64  *all,
              gsize          size,
              gint64        *global,
              GError       **error)
{
  guint mesh_ndim;
  const gint *mesh_shape = hp_device_mesh_get_shape (self->mesh, &mesh_ndim);
  const gint *world = hp_device_mesh_get_ranks (self->mesh, NULL);
  gint n_ranks = hp_device_mesh_get_size (self->mesh);
  gint me = hp_device_mesh_get_rank (self->mesh);
  const gint64 *mine = all + me * size + output_field (j);
  guint ndim = (guint) mine[1];
  g_autofree gint *coordinate = g_new0 (gint, mesh_ndim);

  for (gint r = 0; r < n_ranks; r++)
    {
      const gint64 *theirs = all + r * size + output_field (j);

      if (theirs[0] != mine[0] || theirs[1] != mine[1])
        {
          g_autofree gchar *a = _hp_shape_to_string (mine + 2, ndim);
          g_autofree gchar *b = _hp_shape_to_string (theirs + 2, (guint) theirs[1]);

          g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                       "local_map: output %u: the ranks disagree on its dtype or number "
                       "of dims (rank %d: %s %s, rank %d: %s %s)", j,
                       world[me], hp_dtype_to_string ((HpDType) mine[0]), a,
                       world[r], hp_dtype_to_string ((HpDType) theirs[0]), b);
          return FALSE;
        }
    }

  for (guint k = 0; k < ndim; k++)
    {
      gint64 total = 0, copies = n_ranks;

      global[k] = mine[2 + k];
      for (guint d = 0; d < mesh_ndim; d++)
        {
          HpPlacement *p = g_ptr_array_index (placements, d);

          if (hp_placement_is_shard (p) && (guint) hp_shard_get_dim (HP_SHARD (p)) == k)
            copies /= mesh_shape[d];
        }
      if (copies == n_ranks)
        continue;

      /* the ranks that differ only in the coordinates of the mesh dims
       * sharding k hold one whole dim between them; the others hold
       * `copies` such copies in all */
      for (gint r = 0; r < n_ranks; r++)
        total += all[r * size + output_field (j) + 2 + k];
      global[k] = total / copies;
    }

  /* every rank's part of that shape must be what it holds */
  for (gint r = 0; r < n_ranks; r++)
    {
      const gint64 *theirs = all + r * size + output_field (j);
      gint64 offsets[HP_TENSOR_MAX_NDIM], lengths[HP_TENSOR_MAX_NDIM];

      unravel (self->mesh, r, coordinate);
      _hp_layout_local_region (global, ndim, placements, self->mesh, coordinate, offsets, lengths);
      if (!_hp_shape_equal (lengths, ndim, theirs + 2, ndim))
        {
          g_autofree gchar *text = hp_placements_to_string (placements);
          g_autofree gchar *have = _hp_shape_to_string (theirs + 2, ndim);
          g_autofree gchar *want = _hp_shape_to_string (lengths, ndim);
          g_autofree gchar *whole = _hp_shape_to_string (global, ndim);

          g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                       "local_map: output %u: the local shapes do not form one tensor with "
                       "placements %s (rank %d holds %s, but its part of %s would be %s)",
                       j, text, world[r], have, whole, want);
          return FALSE;
        }
    }
  return TRUE;
}

/* Every rank tells the others whether it got this far and the shapes of
 * its outputs; then all compute the same global shapes, or all fail.
 * @local_error is this rank's failure so far, if any. */
static gboolean
exchange_shapes (HpLocalMap  *self,
                 GPtrArray   *outputs,
                 GPtrArray   *normalized,
                 guint        n_entries,
                 GError     **local_error,
                 gint64      *globals,
                 GError     **error)
{
  const gint *world = hp_device_mesh_get_ranks (self->mesh, NULL);
  gint n_ranks = hp_device_mesh_get_size (self->mesh);
  gsize size = record_size (n_entries);
  g_autofree gint64 *mine = g_new0 (gint64, size);
  g_autofree gint64 *all = g_new0 (gint64, size * n_ranks);
  gboolean ok = *local_error == NULL;
  /* the ranks agree on the number of outputs whose shapes they exchange */
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (HP_COLLECTIVE_ALLGATHER, "local_map");
  MPI_Request request;
  gint64 n_outputs;

  mine[0] = ok;
  for (guint j = 0; ok && j < n_entries; j++)
    {
      HpTensor *out = g_ptr_array_index (outputs, j);
      gint64 *field = mine + output_field (j);
      guint ndim;
      const gint64 *shape;

      if (out == NULL)
        continue;
      shape = hp_tensor_get_shape (out, &ndim);
      field[0] = hp_tensor_get_dtype (out);
      field[1] = ndim;
      memcpy (field + 2, shape, ndim * sizeof (gint64));
    }

  n_outputs = (gint64) n_entries;
  call.shape = &n_outputs;
  call.ndim = 1;
  if (!_hp_collective_agree (self->mesh, &call, error) ||
      !_hp_mpi_check (MPI_Iallgather (mine, (int) size, MPI_INT64_T, all, (int) size, MPI_INT64_T,
                                      hp_device_mesh_get_comm (self->mesh), &request),
                      "MPI_Iallgather", error))
    return FALSE;
  if (!_hp_collective_wait (&request, self->mesh, HP_COLLECTIVE_ALLGATHER, "local_map", error))
    {
      _hp_collective_abandon (g_steal_pointer (&mine));
      _hp_collective_abandon (g_steal_pointer (&all));
      return FALSE;
    }

  if (!ok)
    {
      g_propagate_error (error, g_steal_pointer (local_error));
      return FALSE;
    }
  for (gint r = 0; r < n_ranks; r++)
    if (all[r * size] == 0)
      {
        g_set_error (error, HP_ERROR, HP_ERROR_MPI,
                     "local_map: func or its outputs failed on rank %d", world[r]);
        return FALSE;
      }

  for (guint j = 0; j < n_entries; j++)
    {
      GPtrArray *placements = g_ptr_array_index (normalized, j);

      if (placements != NULL &&
          !global_shape (self, j, placements, all, size, globals + j * HP_TENSOR_MAX_NDIM, error))
        return FALSE;
    }
  return TRUE;
}

/* Makes DTensors of the outputs of a call with DTensor arguments */
static GPtrArray *
wrap_outputs (HpLocalMap  *self,
              GPtrArray   *outputs,
              GPtrArray   *out_resolved,
              GError     **func_error,
              GError     **error)
{
  g_autoptr(GPtrArray) normalized = g_ptr_array_new_full (out_resolved->len, free_placements_nullable);
  g_autoptr(GPtrArray) wrapped = NULL;
  g_autofree gint64 *globals = g_new0 (gint64, MAX (out_resolved->len, 1) * HP_TENSOR_MAX_NDIM);
  g_autoptr(GError) local_error = g_steal_pointer (func_error);

  if (local_error == NULL)
    check_outputs (outputs, out_resolved, self, normalized, &local_error);

  if (needs_shapes (self, out_resolved))
    {
      if (!exchange_shapes (self, outputs, normalized, out_resolved->len, &local_error,
                            globals, error))
        return NULL;
    }
  else if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  else
    {
      /* nothing sharded across ranks: the global shapes are the local ones */
      for (guint j = 0; j < outputs->len; j++)
        {
          HpTensor *out = g_ptr_array_index (outputs, j);
          guint ndim;
          const gint64 *shape;

          if (out == NULL)
            continue;
          shape = hp_tensor_get_shape (out, &ndim);
          memcpy (globals + j * HP_TENSOR_MAX_NDIM, shape, ndim * sizeof (gint64));
        }
    }

  wrapped = g_ptr_array_new_full (outputs->len, _hp_object_unref_nullable);
  for (guint j = 0; j < outputs->len; j++)
    {
      HpTensor *out = g_ptr_array_index (outputs, j);
      HpDTensor *dt;
      guint ndim;

      if (out == NULL)
        {
          g_ptr_array_add (wrapped, NULL);
          continue;
        }
      hp_tensor_get_shape (out, &ndim);
      dt = hp_dtensor_new_from_local (out, self->mesh, g_ptr_array_index (normalized, j),
                                      globals + j * HP_TENSOR_MAX_NDIM, ndim, FALSE, error);
      if (dt == NULL)
        return NULL;
      g_ptr_array_add (wrapped, dt);
    }
  return g_steal_pointer (&wrapped);
}

/**
 * hp_local_map_call:
 * @self: a [class@Hp.LocalMap]
 * @args: (element-type HpTensor): the arguments: DTensors, plain
 *   tensors, or %NULL for an argument that is not a tensor
 * @error: return location for a [struct@GLib.Error]
 *
 * Runs the map's function on the local tensors of @args and wraps its
 * outputs, as described for [class@Hp.LocalMap]. Without a DTensor in @args the
 * function's outputs are returned as they are; otherwise each tensor
 * output is a DTensor with its `out_placements` entry, and the call is
 * collective over the map's mesh.
 *
 * The array is annotated `(transfer container)` although the caller
 * owns the outputs too: its free function unrefs them, so freeing the
 * array is all a caller does (see [func@Hp.placements_new_from_string]).
 *
 * Returns: (transfer container) (element-type HpTensor): a new array of
 *   the outputs (%NULL entries for non-tensor outputs), or %NULL with
 *   @error set: [HP_ERROR_MESH][error@Hp.Error] when the mesh has no dim names or a
 *   DTensor argument lives on another mesh, [HP_ERROR_PLACEMENT][error@Hp.Error] when
 *   the entries do not fit the arguments or outputs (in number, in
 *   kind, or in placements without [property@Hp.LocalMap:redistribute-inputs]),
 *   [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] for an in_grad entry that reduces by other
 *   than a sum, [HP_ERROR_SHAPE][error@Hp.Error] when the ranks' outputs do not form
 *   one tensor, [HP_ERROR_MPI][error@Hp.Error] on a rank whose function succeeded when
 *   it failed on another, or the function's own error
 *
 * Since: 1.0
 */
GPtrArray *
hp_local_map_call (HpLocalMap  *self,
                   GPtrArray   *args,
                   GError     **error)
{
  g_autoptr(GPtrArray) in_resolved = NULL;
  g_autoptr(GPtrArray) out_resolved = NULL;
  g_autoptr(GPtrArray) grad_resolved = NULL;
  g_autoptr(GPtrArray) locals = NULL;
  g_autoptr(GPtrArray) outputs = NULL;
  g_autoptr(GError) func_error = NULL;
  g_autofree ArgPlan *plans = NULL;
  GPtrArray *returned;
  gboolean any_dtensor = FALSE;
  guint64 default_sum_dims;
  gboolean ok = TRUE;

  g_return_val_if_fail (HP_IS_LOCAL_MAP (self), NULL);
  g_return_val_if_fail (self->func != NULL, NULL);
  g_return_val_if_fail (args != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  for (guint i = 0; i < args->len; i++)
    g_return_val_if_fail (g_ptr_array_index (args, i) == NULL ||
                          HP_IS_TENSOR (g_ptr_array_index (args, i)), NULL);

  if (args->len != self->in_placements->len)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "local_map: %u arguments given, but in_placements has %u entries",
                   args->len, self->in_placements->len);
      return NULL;
    }
  if (self->in_grad_placements != NULL && self->in_grad_placements->len != args->len)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                   "local_map: %u arguments given, but in_grad_placements has %u entries",
                   args->len, self->in_grad_placements->len);
      return NULL;
    }
  if (hp_device_mesh_get_dim_names (self->mesh) == NULL)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_MESH,
                           "local_map: the mesh has no dim names to resolve the named "
                           "placements against");
      return NULL;
    }

  in_resolved = resolve_list (self, self->in_placements, "in_placements", error);
  if (in_resolved == NULL)
    return NULL;
  out_resolved = resolve_list (self, self->out_placements, "out_placements", error);
  if (out_resolved == NULL)
    return NULL;
  if (self->in_grad_placements != NULL)
    {
      grad_resolved = resolve_list (self, self->in_grad_placements, "in_grad_placements", error);
      if (grad_resolved == NULL)
        return NULL;
    }

  /* every check that needs no communication, for all arguments first */
  default_sum_dims = outputs_not_replicate (out_resolved);
  plans = g_new0 (ArgPlan, MAX (args->len, 1));
  for (guint i = 0; i < args->len && ok; i++)
    {
      HpTensor *arg = g_ptr_array_index (args, i);

      any_dtensor |= arg != NULL && HP_IS_DTENSOR (arg);
      ok = plan_argument (self, i, arg, g_ptr_array_index (in_resolved, i),
                               grad_resolved != NULL ? g_ptr_array_index (grad_resolved, i) : NULL,
                               default_sum_dims, &plans[i], error);
    }

  locals = g_ptr_array_new_full (args->len, _hp_object_unref_nullable);
  for (guint i = 0; i < args->len && ok; i++)
    {
      HpTensor *arg = g_ptr_array_index (args, i);
      HpTensor *local = NULL;

      if (arg != NULL && HP_IS_DTENSOR (arg))
        {
          local = local_argument (HP_DTENSOR (arg), &plans[i], error);
          ok = local != NULL;
        }
      else if (arg != NULL)
        local = g_object_ref (arg);
      g_ptr_array_add (locals, local);
    }

  for (guint i = 0; i < args->len; i++)
    arg_plan_clear (&plans[i]);
  if (!ok)
    return NULL;

  returned = self->func (locals, self->user_data, &func_error);
  outputs = returned != NULL ? _hp_object_array_take (returned) : g_ptr_array_new ();
  if (returned == NULL && func_error == NULL)
    g_set_error_literal (&func_error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                         "local_map: func returned NULL without setting an error");

  if (!any_dtensor)
    {
      if (func_error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&func_error));
          return NULL;
        }
      return g_steal_pointer (&outputs);
    }

  return wrap_outputs (self, outputs, out_resolved, &func_error, error);
}

/**
 * hp_local_map_get_mesh:
 * @self: a [class@Hp.LocalMap]
 *
 * Gets the device mesh of the map.
 *
 * Returns: (transfer none): the mesh
 *
 * Since: 1.0
 */
HpDeviceMesh *
hp_local_map_get_mesh (HpLocalMap *self)
{
  g_return_val_if_fail (HP_IS_LOCAL_MAP (self), NULL);

  return self->mesh;
}

/**
 * hp_local_map_get_redistribute_inputs:
 * @self: a [class@Hp.LocalMap]
 *
 * Gets whether DTensor arguments are redistributed to their
 * `in_placements` entries.
 *
 * Returns: the value of [property@Hp.LocalMap:redistribute-inputs]
 *
 * Since: 1.0
 */
gboolean
hp_local_map_get_redistribute_inputs (HpLocalMap *self)
{
  g_return_val_if_fail (HP_IS_LOCAL_MAP (self), FALSE);

  return self->redistribute_inputs;
}
