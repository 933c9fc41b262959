/* hp-module-fsdp.c: fully sharded data parallelism of a module (FSDP2)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * hp_module_fully_shard() makes a module a unit of FSDP, as torch's
 * fully_shard() does: the parameters of its tree that no inner unit
 * holds become DTensors sharded over the mesh's data-parallel dims, and
 * its forward-pre and forward-post signals swap them for their gathered
 * form and back (the collectives are in distributed/hp-fsdp.c).
 */

#include "config.h"

#include "hp-dtensor-private.h"
#include "hp-error.h"
#include "hp-fsdp-private.h"
#include "hp-grad-mode.h"
#include "hp-module-private.h"
#include "hp-replicate.h"
#include "hp-shard.h"

#define UNIT_KEY "hp-fsdp-unit"
#define SHARDED_KEY "hp-fsdp-sharded"
#define SCHEDULE_KEY "hp-fsdp-schedule"

typedef struct _FsdpUnit FsdpUnit;

/* What the units over one mesh share: where the current forward is, so
 * that a unit can start the next one's gather (prefetch) */
typedef struct
{
  HpDeviceMesh *mesh;
  GPtrArray *units;             /* FsdpUnit, not owned, in registration order */
  guint depth;                  /* units whose forward runs */
  FsdpUnit *last;               /* the unit whose forward began last, in this forward */
  HpFsdpRefill *chain;          /* the refill of the unit whose forward ended last */
} FsdpSchedule;

struct _FsdpUnit
{
  HpDeviceMesh *compute_mesh;   /* NULL when the mesh has only data dims */
  guint64 data_dims;
  GPtrArray *names;             /* gchar *, the fqns below the unit */
  GPtrArray *shards;            /* HpDTensor, one per name */
  GArray *plain;                /* gboolean per name: it was a plain tensor */
  GPtrArray *alias_names;       /* gchar *, other paths of the same tensors (tied) */
  GArray *alias_of;             /* guint per alias: its index in names */
  gboolean reshard_after_forward;
  GPtrArray *fulls;             /* HpTensor, the gathered ones, during a forward */
  gboolean has_inner;           /* some of its tree's parameters are inner units' */
  gboolean prefetch;
  FsdpSchedule *schedule;
  FsdpUnit *next;               /* the unit whose forward began after this one's last time */
  HpFsdpGather **pending;       /* one per name, started ahead, or NULL */
};

static void
drop_pending (FsdpUnit *unit)
{
  if (unit->pending == NULL)
    return;
  for (guint i = 0; i < unit->names->len; i++)
    _hp_fsdp_gather_drop (g_steal_pointer (&unit->pending[i]));
  g_clear_pointer (&unit->pending, g_free);
}

/* The end of a forward (or of one that failed): every gather started
 * ahead and not used is forgotten, since the optimizer may change the
 * shards before the next */
static void
schedule_reset (FsdpSchedule *schedule)
{
  for (guint i = 0; i < schedule->units->len; i++)
    drop_pending (g_ptr_array_index (schedule->units, i));
  schedule->depth = 0;
  schedule->last = NULL;
  g_clear_pointer (&schedule->chain, _hp_fsdp_refill_unref);
}

static void
schedule_free (gpointer pointer)
{
  FsdpSchedule *schedule = pointer;

  g_clear_pointer (&schedule->chain, _hp_fsdp_refill_unref);
  g_ptr_array_unref (schedule->units);
  g_object_set_data (G_OBJECT (schedule->mesh), SCHEDULE_KEY, NULL);
  g_object_unref (schedule->mesh);
}

static FsdpSchedule *
schedule_for (HpDeviceMesh *mesh)
{
  FsdpSchedule *schedule = g_object_get_data (G_OBJECT (mesh), SCHEDULE_KEY);

  if (schedule != NULL)
    return g_rc_box_acquire (schedule);
  schedule = g_rc_box_new0 (FsdpSchedule);
  schedule->mesh = g_object_ref (mesh);
  schedule->units = g_ptr_array_new ();
  g_object_set_data (G_OBJECT (mesh), SCHEDULE_KEY, schedule);
  return schedule;
}

static void
schedule_add (FsdpSchedule *schedule,
              FsdpUnit     *unit)
{
  /* until a forward shows the order, the registration order */
  if (schedule->units->len > 0)
    {
      FsdpUnit *before = g_ptr_array_index (schedule->units, schedule->units->len - 1);

      if (before->next == NULL)
        before->next = unit;
    }
  g_ptr_array_add (schedule->units, unit);
}

static void
schedule_remove (FsdpSchedule *schedule,
                 FsdpUnit     *unit)
{
  for (guint i = 0; i < schedule->units->len; i++)
    {
      FsdpUnit *other = g_ptr_array_index (schedule->units, i);

      if (other->next == unit)
        other->next = NULL;
    }
  if (schedule->last == unit)
    schedule->last = NULL;
  g_ptr_array_remove (schedule->units, unit);
}

static void
fsdp_unit_free (gpointer pointer)
{
  FsdpUnit *unit = pointer;

  drop_pending (unit);
  schedule_remove (unit->schedule, unit);
  g_rc_box_release_full (unit->schedule, schedule_free);
  g_clear_object (&unit->compute_mesh);
  g_ptr_array_unref (unit->names);
  g_ptr_array_unref (unit->shards);
  g_array_unref (unit->plain);
  g_ptr_array_unref (unit->alias_names);
  g_array_unref (unit->alias_of);
  g_clear_pointer (&unit->fulls, g_ptr_array_unref);
  g_free (unit);
}

static void
swap_in (HpModule    *self,
         const gchar *name,
         HpTensor    *tensor)
{
  HpModuleStateEntry *entry = _hp_module_lookup_state (self, name, FALSE);

  if (entry != NULL)
    g_set_object (&entry->tensor, tensor);
}

/* Starts the gathers of @unit ahead of its forward */
static gboolean
prefetch (FsdpUnit  *unit,
          GError   **error)
{
  unit->pending = g_new0 (HpFsdpGather *, unit->names->len);
  for (guint i = 0; i < unit->names->len; i++)
    {
      unit->pending[i] = _hp_fsdp_gather_start (g_ptr_array_index (unit->shards, i),
                                                unit->data_dims, NULL, error);
      if (unit->pending[i] == NULL && error != NULL && *error != NULL)
        return FALSE;
    }
  return TRUE;
}

/* Puts the shards back in @unit's slots */
static void
swap_out (HpModule *self,
          FsdpUnit *unit)
{
  for (guint i = 0; i < unit->names->len; i++)
    swap_in (self, g_ptr_array_index (unit->names, i), g_ptr_array_index (unit->shards, i));
  for (guint a = 0; a < unit->alias_names->len; a++)
    swap_in (self, g_ptr_array_index (unit->alias_names, a),
             g_ptr_array_index (unit->shards, g_array_index (unit->alias_of, guint, a)));
}

static void
on_forward_pre (HpModule  *self,
                GPtrArray *args,
                gpointer   user_data)
{
  FsdpUnit *unit = user_data;
  FsdpSchedule *schedule = unit->schedule;
  g_autoptr(GError) error = NULL;
  g_autofree HpFsdpGather **pending = NULL;
  gboolean nested;

  /* a unit still in its forward: that forward failed, start over */
  if (unit->fulls != NULL)
    {
      swap_out (self, unit);
      g_clear_pointer (&unit->fulls, g_ptr_array_unref);
      schedule_reset (schedule);
    }
  if (schedule->depth == 0)
    schedule_reset (schedule);
  nested = schedule->depth > 0;
  if (nested && schedule->last != NULL && schedule->last != unit)
    schedule->last->next = unit;
  schedule->last = unit;

  pending = g_steal_pointer (&unit->pending);
  unit->fulls = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < unit->names->len; i++)
    {
      gboolean plain = g_array_index (unit->plain, gboolean, i);
      HpDeviceMesh *compute_mesh = plain ? NULL : unit->compute_mesh;
      HpFsdpGather *gather = pending != NULL ? g_steal_pointer (&pending[i]) : NULL;
      g_autoptr(HpTensor) full = gather != NULL
        ? _hp_fsdp_gather_finish (gather, compute_mesh, &error)
        : _hp_fsdp_unshard (g_ptr_array_index (unit->shards, i), unit->data_dims, compute_mesh,
                            &error);

      /* only an MPI failure gets here: the module call fails with it */
      if (full == NULL)
        {
          for (guint j = i + 1; pending != NULL && j < unit->names->len; j++)
            _hp_fsdp_gather_drop (g_steal_pointer (&pending[j]));
          goto failed;
        }
      swap_in (self, g_ptr_array_index (unit->names, i), full);
      g_ptr_array_add (unit->fulls, g_steal_pointer (&full));
    }
  for (guint a = 0; a < unit->alias_names->len; a++)
    swap_in (self, g_ptr_array_index (unit->alias_names, a),
             g_ptr_array_index (unit->fulls, g_array_index (unit->alias_of, guint, a)));
  schedule->depth++;

  /* the next unit's parameters travel while this one computes; not
   * from a block recomputed alone (activation checkpointing), whose
   * next unit ran already */
  if (unit->prefetch && (nested || unit->has_inner) && unit->next != NULL &&
      unit->next->fulls == NULL && unit->next->pending == NULL && !prefetch (unit->next, &error))
    goto failed;
  (void) args;
  return;

failed:
  swap_out (self, unit);
  g_clear_pointer (&unit->fulls, g_ptr_array_unref);
  schedule_reset (schedule);
  g_prefix_error (&error, "%s: ", _hp_module_type_name (self));
  _hp_module_fail_forward (self, g_steal_pointer (&error));
}

static void
on_forward_post (HpModule  *self,
                 GPtrArray *args,
                 GPtrArray *outputs,
                 gpointer   user_data)
{
  FsdpUnit *unit = user_data;
  g_autoptr(GPtrArray) fulls = g_steal_pointer (&unit->fulls);
  HpTensor *output = outputs->len == 1 ? g_ptr_array_index (outputs, 0) : NULL;

  swap_out (self, unit);

  /* the backward keeps the gathered parameters: give their memory back
   * until it begins, when they are gathered again */
  if (unit->reshard_after_forward && fulls != NULL && fulls->len == unit->shards->len &&
      output != NULL && hp_grad_mode_is_enabled () && hp_tensor_get_requires_grad (output))
    {
      for (guint i = 0; i < fulls->len; i++)
        _hp_fsdp_release (g_ptr_array_index (fulls, i), g_ptr_array_index (unit->shards, i));
      outputs->pdata[0] = _hp_fsdp_refill_before_backward (output, fulls, unit->shards,
                                                           unit->data_dims, unit->prefetch,
                                                           &unit->schedule->chain);
      g_object_unref (output);
    }
  if (unit->schedule->depth > 0 && --unit->schedule->depth == 0)
    schedule_reset (unit->schedule);
  (void) args;
  (void) outputs;
}

/* Every parameter slot of @self's tree, with its path: a tensor that
 * two modules hold (tied weights) is there twice */
static void
collect_slots (HpModule    *self,
               const gchar *prefix,
               GPtrArray   *paths,
               GPtrArray   *tensors)
{
  HpModulePrivate *priv = _hp_module_get_private (self);

  for (guint i = 0; i < priv->parameters->len; i++)
    {
      HpModuleStateEntry *entry = g_ptr_array_index (priv->parameters, i);

      g_ptr_array_add (paths, g_strconcat (prefix, entry->name, NULL));
      g_ptr_array_add (tensors, entry->tensor);
    }
  for (guint i = 0; i < priv->children->len; i++)
    {
      HpModuleChildEntry *child = g_ptr_array_index (priv->children, i);
      g_autofree gchar *inner = g_strconcat (prefix, child->name, ".", NULL);

      collect_slots (child->module, inner, paths, tensors);
    }
}

/* The placements of @tensor over the compute dims of @mesh: its own
 * when it is a DTensor over exactly those, all Replicate when plain */
static GPtrArray *
compute_placements (HpModule      *self,
                    const gchar   *name,
                    HpTensor      *tensor,
                    HpDeviceMesh  *compute_mesh,
                    GError       **error)
{
  GPtrArray *placements;

  if (!HP_IS_DTENSOR (tensor))
    {
      placements = g_ptr_array_new_with_free_func (g_object_unref);
      for (guint d = 0; compute_mesh != NULL && d < hp_device_mesh_get_ndim (compute_mesh); d++)
        g_ptr_array_add (placements, hp_replicate_new ());
      return placements;
    }
  if (compute_mesh == NULL ||
      !hp_device_mesh_equal (hp_dtensor_get_mesh (HP_DTENSOR (tensor)), compute_mesh))
    {
      g_autofree gchar *have = hp_device_mesh_to_string (hp_dtensor_get_mesh (HP_DTENSOR (tensor)));

      g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                   "%s.%s: fully_shard needs a parameter that is plain or a DTensor over the "
                   "mesh's non-data dims, but it is laid out over %s",
                   _hp_module_type_name (self), name, have);
      return NULL;
    }
  return g_ptr_array_ref (hp_dtensor_get_placements (HP_DTENSOR (tensor)));
}

/**
 * hp_module_fully_shard:
 * @self: a [class@Hp.Module]
 * @mesh: the mesh: a `dp_shard` dim, optionally `dp_replicate`, and the
 *   dims the parameters are already laid out over (such as `tp`), in the
 *   order [method@Hp.ParallelDims.build_mesh] gives them
 * @reshard_after_forward: whether the gathered parameters give their
 *   memory back after the forward and are gathered again when the
 *   unit's backward begins (%TRUE, torchtitan's default), or stay
 *   gathered until the backward is through
 * @error: return location for a [struct@GLib.Error]
 *
 * Fully sharded data parallelism (FSDP2's `fully_shard`): makes @self a
 * unit whose parameters — those of its tree that no inner unit holds, so
 * call it on the blocks first and then on the root — are stored as
 * DTensors over @mesh, `Shard(0)` over `dp_shard` (uneven shards as
 * `torch.chunk` cuts them), `Replicate` over `dp_replicate` and, over
 * the other dims, the placements they had: a parameter that tensor
 * parallelism laid out over the mesh's slice of those dims keeps them.
 * The gradients and the optimizer's state of these parameters have the
 * same placements, so an optimizer steps on the shards,
 * [func@Hp.clip_grad_norm] takes the global norm and
 * [method@Hp.DTensor.full_tensor] gathers them for a checkpoint.
 *
 * Before each forward of @self ([signal@Hp.Module::forward-pre]) its
 * parameters are all-gathered over the data dims; the module computes
 * with the gathered tensors, which autograd keeps for the backward, and
 * holds its shards again once the forward is done. With
 * @reshard_after_forward the memory of the gathered tensors (whole
 * pages) goes back to the system at the end of the forward and the
 * tensors are all-gathered again into the same place when the unit's
 * backward begins; otherwise the backward keeps them. In the backward, the
 * gradient of each gathered parameter is reduce-scattered into its
 * shard as the mean over `dp_shard` and then averaged over
 * `dp_replicate` (HSDP), as soon as the unit's backward is through: no
 * gradient averaging afterwards. Without HSDP the reduce-scatter is
 * non-blocking and travels while the backward of the units before runs;
 * the backward is through only when every gradient has arrived. Each
 * rank's loss must be the mean over its equal share of the batch. Activation checkpointing composes: a
 * recomputation gathers again.
 *
 * A tensor that several modules of the tree hold (tied weights) is
 * sharded once, and each of them holds the same shard.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_MESH][error@Hp.Error] when
 *   @mesh has no `dp_shard` dim or a parameter is a DTensor over another
 *   mesh than the slice of the non-data dims,
 *   [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] for a parameter with no
 *   dims, or [HP_ERROR_STATE][error@Hp.Error] when @self is a unit
 *   already; on error nothing changes. No collective.
 *
 * Since: 1.0
 */
gboolean
hp_module_fully_shard (HpModule      *self,
                       HpDeviceMesh  *mesh,
                       gboolean       reshard_after_forward,
                       GError       **error)
{
  const gchar * const *dim_names;
  g_autoptr(GPtrArray) compute_names = NULL;
  g_autoptr(HpDeviceMesh) compute_mesh = NULL;
  g_autoptr(HpStateDict) named = NULL;
  g_autoptr(GPtrArray) names = NULL;
  g_autoptr(GPtrArray) shards = NULL;
  g_autoptr(GArray) plain = NULL;
  g_autoptr(GPtrArray) alias_names = NULL;
  g_autoptr(GArray) alias_of = NULL;
  guint64 data_dims = 0;
  gboolean has_inner = FALSE;
  guint ndim;
  FsdpUnit *unit;

  g_return_val_if_fail (HP_IS_MODULE (self), FALSE);
  g_return_val_if_fail (HP_IS_DEVICE_MESH (mesh), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (g_object_get_data (G_OBJECT (self), UNIT_KEY) != NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_STATE,
                   "%s: fully_shard was called on this module already", _hp_module_type_name (self));
      return FALSE;
    }
  if (hp_device_mesh_get_dim_index (mesh, "dp_shard", NULL) < 0)
    {
      g_autofree gchar *text = hp_device_mesh_to_string (mesh);

      g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                   "%s: fully_shard needs a mesh with a dp_shard dim, got %s",
                   _hp_module_type_name (self), text);
      return FALSE;
    }

  ndim = hp_device_mesh_get_ndim (mesh);
  dim_names = hp_device_mesh_get_dim_names (mesh);
  compute_names = g_ptr_array_new ();
  for (guint d = 0; d < ndim; d++)
    if (g_strcmp0 (dim_names[d], "dp_shard") == 0 || g_strcmp0 (dim_names[d], "dp_replicate") == 0)
      data_dims |= G_GUINT64_CONSTANT (1) << d;
    else
      g_ptr_array_add (compute_names, (gpointer) dim_names[d]);
  g_ptr_array_add (compute_names, NULL);
  if (compute_names->len > 1)
    {
      compute_mesh = hp_device_mesh_slice (mesh, (const gchar * const *) compute_names->pdata, error);
      if (compute_mesh == NULL)
        return FALSE;
    }

  /* every check first, so that an error leaves the module as it was */
  named = hp_module_named_parameters (self);
  names = g_ptr_array_new_with_free_func (g_free);
  shards = g_ptr_array_new_with_free_func (g_object_unref);
  plain = g_array_new (FALSE, FALSE, sizeof (gboolean));
  for (guint i = 0; i < hp_state_dict_get_size (named); i++)
    {
      const gchar *name = hp_state_dict_get_name (named, i);
      HpTensor *tensor = hp_state_dict_get_tensor (named, i);
      HpTensor *local = HP_IS_DTENSOR (tensor) ? _hp_dtensor_peek_local (HP_DTENSOR (tensor)) : tensor;
      g_autoptr(GPtrArray) inner = NULL;
      g_autoptr(GPtrArray) replicated = NULL;
      g_autoptr(GPtrArray) sharded = NULL;
      g_autoptr(HpTensor) detached = NULL;
      g_autoptr(HpDTensor) whole = NULL;
      g_autoptr(HpDTensor) shard = NULL;
      const gint64 *shape;
      guint tensor_ndim;
      guint c = 0;
      gboolean is_plain;

      if (g_object_get_data (G_OBJECT (tensor), SHARDED_KEY) != NULL)
        {
          has_inner = TRUE;
          continue;             /* an inner unit's */
        }
      shape = hp_tensor_get_shape (tensor, &tensor_ndim);
      if (tensor_ndim == 0)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                       "%s.%s: fully_shard cannot shard a parameter with no dims over dp_shard",
                       _hp_module_type_name (self), name);
          return FALSE;
        }
      inner = compute_placements (self, name, tensor, compute_mesh, error);
      if (inner == NULL)
        return FALSE;
      replicated = g_ptr_array_new_with_free_func (g_object_unref);
      sharded = g_ptr_array_new_with_free_func (g_object_unref);
      for (guint d = 0; d < ndim; d++)
        if (data_dims & (G_GUINT64_CONSTANT (1) << d))
          {
            g_ptr_array_add (replicated, hp_replicate_new ());
            g_ptr_array_add (sharded, g_strcmp0 (dim_names[d], "dp_shard") == 0
                             ? hp_shard_new (0) : hp_replicate_new ());
          }
        else
          {
            g_ptr_array_add (replicated, g_object_ref (g_ptr_array_index (inner, c)));
            g_ptr_array_add (sharded, g_object_ref (g_ptr_array_index (inner, c)));
            c++;
          }
      /* every rank holds the same values: Replicate to Shard is a slice */
      detached = hp_tensor_detach (local);
      whole = _hp_dtensor_new (detached, mesh, replicated, shape, tensor_ndim);
      shard = hp_dtensor_redistribute (whole, sharded, error);
      if (shard == NULL)
        return FALSE;
      is_plain = !HP_IS_DTENSOR (tensor);
      g_array_append_val (plain, is_plain);
      g_ptr_array_add (names, g_strdup (name));
      g_ptr_array_add (shards, g_steal_pointer (&shard));
    }

  /* the other slots of the same tensors, which get the same shard */
  alias_names = g_ptr_array_new_with_free_func (g_free);
  alias_of = g_array_new (FALSE, FALSE, sizeof (guint));
  {
    g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
    g_autoptr(GPtrArray) tensors = g_ptr_array_new ();

    collect_slots (self, "", paths, tensors);
    for (guint k = 0; k < paths->len; k++)
      for (guint i = 0; i < names->len; i++)
        if (g_ptr_array_index (tensors, k) == hp_state_dict_lookup (named, g_ptr_array_index (names, i)) &&
            g_strcmp0 (g_ptr_array_index (paths, k), g_ptr_array_index (names, i)) != 0)
          {
            g_ptr_array_add (alias_names, g_strdup (g_ptr_array_index (paths, k)));
            g_array_append_val (alias_of, i);
          }
  }

  for (guint a = 0; a < alias_names->len; a++)
    swap_in (self, g_ptr_array_index (alias_names, a),
             g_ptr_array_index (shards, g_array_index (alias_of, guint, a)));
  for (guint i = 0; i < names->len; i++)
    {
      HpTensor *shard = g_ptr_array_index (shards, i);

      hp_tensor_set_requires_grad (shard, TRUE);
      g_object_set_data (G_OBJECT (shard), SHARDED_KEY, GINT_TO_POINTER (1));
      swap_in (self, g_ptr_array_index (names, i), shard);
    }

  unit = g_new0 (FsdpUnit, 1);
  unit->compute_mesh = g_steal_pointer (&compute_mesh);
  unit->data_dims = data_dims;
  unit->names = g_steal_pointer (&names);
  unit->shards = g_steal_pointer (&shards);
  unit->plain = g_steal_pointer (&plain);
  unit->alias_names = g_steal_pointer (&alias_names);
  unit->alias_of = g_steal_pointer (&alias_of);
  unit->reshard_after_forward = reshard_after_forward;
  unit->has_inner = has_inner;
  unit->prefetch = TRUE;
  unit->schedule = schedule_for (mesh);
  schedule_add (unit->schedule, unit);
  g_signal_connect (self, "forward-pre", G_CALLBACK (on_forward_pre), unit);
  g_signal_connect (self, "forward-post", G_CALLBACK (on_forward_post), unit);
  g_object_set_data_full (G_OBJECT (self), UNIT_KEY, unit, fsdp_unit_free);
  return TRUE;
}

static guint
set_prefetch (HpModule *self,
              gboolean  prefetch)
{
  HpModulePrivate *priv = _hp_module_get_private (self);
  FsdpUnit *unit = g_object_get_data (G_OBJECT (self), UNIT_KEY);
  guint count = 0;

  if (unit != NULL)
    {
      unit->prefetch = prefetch;
      if (!prefetch)
        drop_pending (unit);
      count++;
    }
  for (guint i = 0; i < priv->children->len; i++)
    count += set_prefetch (((HpModuleChildEntry *) g_ptr_array_index (priv->children, i))->module,
                           prefetch);
  return count;
}

/**
 * hp_module_set_fsdp_prefetch:
 * @self: a [class@Hp.Module]
 * @prefetch: whether each FSDP unit starts the next unit's all-gather
 *
 * Chooses, for every unit of [method@Hp.Module.fully_shard] in @self's
 * tree (@self included), whether it prefetches (the default): when a
 * unit's forward begins, it starts the non-blocking all-gather of the
 * unit whose forward came next the last time (at first, the one made a
 * unit after it), and when a unit's backward begins and gathers its
 * parameters again (reshard-after-forward), it starts that of the unit
 * whose backward comes next, so that the gathers travel while the ranks
 * compute. The numbers are the same bit for bit either way; only the
 * time and the memory differ (a prefetching unit holds the next unit's
 * gathered parameters too). A parameter whose dim 0 is also sharded by
 * a dim other than `dp_shard` is gathered when its unit needs it. All
 * the ranks must make the same choice. No collective.
 *
 * Returns: the number of units whose choice was set
 *
 * Since: 1.0
 */
guint
hp_module_set_fsdp_prefetch (HpModule *self,
                             gboolean  prefetch)
{
  g_return_val_if_fail (HP_IS_MODULE (self), 0);

  return set_prefetch (self, prefetch);
}
