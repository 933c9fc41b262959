/* hp-module-parallelize.c: laying a module tree out over a device mesh
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-dtensor-private.h"
#include "hp-dtensor.h"
#include "hp-error.h"
#include "hp-grad-mode.h"
#include "hp-module-private.h"

/* A DTensor with @placements made of a plain tensor: each rank's
 * tensor is its local part */
static HpTensor *
wrap_local (HpModule   *self,
            HpTensor   *tensor,
            GPtrArray  *placements,
            GError    **error)
{
  HpModulePrivate *priv = _hp_module_get_private (self);

  return HP_TENSOR (hp_dtensor_new_from_local (tensor, priv->mesh, placements,
                                               NULL, 0, FALSE, error));
}

/* @placements with negative shard dims counted from the end of
 * @tensor's dims, as a DTensor stores them */
static GPtrArray *
normalized (HpModule     *self,
            GPtrArray    *placements,
            HpTensor     *tensor,
            const gchar  *what,
            GError      **error)
{
  GPtrArray *out = _hp_placements_normalize (_hp_module_type_name (self), placements,
                                             _hp_module_get_private (self)->mesh,
                                             hp_tensor_get_ndim (tensor), error);

  if (out == NULL)
    g_prefix_error (error, "%s.%s: ", _hp_module_type_name (self), what);
  return out;
}

/* @value laid out as @src expects (checked, or given to a plain
 * tensor) and then as @dst asks; @what names it in errors */
static HpTensor *
convert (HpModule     *self,
         HpTensor     *value,
         GPtrArray    *src,
         GPtrArray    *dst,
         const gchar  *what,
         const gchar  *direction,
         GError      **error)
{
  g_autoptr(HpTensor) current = NULL;

  if (!HP_IS_DTENSOR (value))
    {
      GPtrArray *given = src != NULL ? src : dst;

      if (given == NULL)
        return g_object_ref (value);
      current = wrap_local (self, value, given, error);
      if (current == NULL)
        {
          g_prefix_error (error, "%s.%s: ", _hp_module_type_name (self), what);
          return NULL;
        }
    }
  else
    {
      GPtrArray *have = hp_dtensor_get_placements (HP_DTENSOR (value));
      g_autoptr(GPtrArray) expected = NULL;

      if (src != NULL && !(expected = normalized (self, src, value, what, error)))
        return NULL;
      if (expected != NULL && !_hp_placements_equal (have, expected))
        {
          g_autofree gchar *have_text = hp_placements_to_string (have);
          g_autofree gchar *src_text = hp_placements_to_string (src);

          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "%s.%s: %s DTensor has placements %s, but %s_src_shardings expects %s.",
                       _hp_module_type_name (self), what, direction, have_text,
                       g_str_equal (direction, "input") ? "in" : "out", src_text);
          return NULL;
        }
      current = g_object_ref (value);
    }

  if (dst != NULL)
    {
      g_autoptr(GPtrArray) wanted = normalized (self, dst, current, what, error);
      HpDTensor *moved;

      if (wanted == NULL)
        return NULL;
      if (_hp_placements_equal (hp_dtensor_get_placements (HP_DTENSOR (current)), wanted))
        return g_steal_pointer (&current);
      moved = hp_dtensor_redistribute (HP_DTENSOR (current), wanted, error);

      if (moved == NULL)
        {
          g_prefix_error (error, "%s.%s: ", _hp_module_type_name (self), what);
          return NULL;
        }
      return HP_TENSOR (moved);
    }
  return g_steal_pointer (&current);
}

GPtrArray *
_hp_module_shard_inputs (HpModule   *self,
                         GPtrArray  *args,
                         GError    **error)
{
  HpModulePrivate *priv = _hp_module_get_private (self);
  const gchar * const *names = hp_module_get_forward_arg_names (self);
  guint n_names = g_strv_length ((GStrv) names);
  g_autoptr(GPtrArray) out = g_ptr_array_new_full (args->len, _hp_object_unref_nullable);

  for (guint i = 0; i < args->len; i++)
    {
      HpTensor *arg = g_ptr_array_index (args, i);
      GPtrArray *src = NULL;
      GPtrArray *dst = NULL;
      HpTensor *converted;

      if (arg == NULL || i >= n_names)
        {
          g_ptr_array_add (out, arg != NULL ? g_object_ref (arg) : NULL);
          continue;
        }
      src = g_hash_table_lookup (priv->in_src, names[i]);
      dst = g_hash_table_lookup (priv->in_dst, names[i]);
      converted = convert (self, arg, src, dst, names[i], "input", error);
      if (converted == NULL)
        return NULL;
      g_ptr_array_add (out, converted);
    }
  return g_steal_pointer (&out);
}

GPtrArray *
_hp_module_shard_outputs (HpModule   *self,
                          GPtrArray  *outputs,
                          GError    **error)
{
  HpModulePrivate *priv = _hp_module_get_private (self);
  g_autoptr(GPtrArray) out = g_ptr_array_new_full (outputs->len, _hp_object_unref_nullable);

  for (guint j = 0; j < outputs->len; j++)
    {
      HpTensor *output = g_ptr_array_index (outputs, j);
      GPtrArray *src = j < priv->out_src->len ? g_ptr_array_index (priv->out_src, j) : NULL;
      GPtrArray *dst = j < priv->out_dst->len ? g_ptr_array_index (priv->out_dst, j) : NULL;
      g_autofree gchar *what = g_strdup_printf ("output[%u]", j);
      HpTensor *converted;

      if (output == NULL)
        {
          g_ptr_array_add (out, NULL);
          continue;
        }
      converted = convert (self, output, src, dst, what, "output", error);
      if (converted == NULL)
        return NULL;
      g_ptr_array_add (out, converted);
    }
  return g_steal_pointer (&out);
}

/* What hp_module_parallelize() will do, worked out before anything
 * changes so that an error leaves the whole tree as it was */

typedef struct
{
  HpTensor *original;
  HpTensor *replacement;        /* the DTensor, once distributed */
  GPtrArray *placements;
  gboolean is_parameter;
  gchar *where;                 /* `HpFoo.path`, for errors */
} StatePlan;

typedef struct
{
  HpModule *module;
  GHashTable *in_src;
  GHashTable *in_dst;
  GPtrArray *out_src;
  GPtrArray *out_dst;
  HpModuleCallable *callable;
  HpLocalMap *map;
} ModulePlan;

typedef struct
{
  HpDeviceMesh *mesh;
  GPtrArray *modules;           /* ModulePlan, in pre-order */
  GHashTable *states;           /* original tensor -> StatePlan */
  GHashTable *visited;          /* modules planned already */
} Plan;

static void
state_plan_free (gpointer data)
{
  StatePlan *plan = data;

  g_object_unref (plan->original);
  g_clear_object (&plan->replacement);
  g_ptr_array_unref (plan->placements);
  g_free (plan->where);
  g_free (plan);
}

static void
module_plan_free (gpointer data)
{
  ModulePlan *plan = data;

  g_clear_pointer (&plan->in_src, g_hash_table_unref);
  g_clear_pointer (&plan->in_dst, g_hash_table_unref);
  g_clear_pointer (&plan->out_src, g_ptr_array_unref);
  g_clear_pointer (&plan->out_dst, g_ptr_array_unref);
  g_clear_object (&plan->map);
  g_free (plan);
}

static void
plan_free (Plan *plan)
{
  g_ptr_array_unref (plan->modules);
  g_hash_table_unref (plan->states);
  g_hash_table_unref (plan->visited);
  g_free (plan);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Plan, plan_free)

static GPtrArray *
resolve (HpModule          *self,
         HpNamedPlacement  *named,
         HpDeviceMesh      *mesh,
         const gchar       *field,
         const gchar       *key,
         GError           **error)
{
  GPtrArray *placements =
    hp_resolve_placements (named, hp_device_mesh_get_dim_names (mesh), error);

  if (placements == NULL)
    g_prefix_error (error, "%s.%s[%s]: ", _hp_module_type_name (self), field, key);
  return placements;
}

static gboolean
plan_state (HpModule          *self,
            HpShardingConfig  *config,
            const gchar       *path,
            Plan              *plan,
            GError           **error)
{
  g_autoptr(GPtrArray) placements = NULL;
  HpModuleStateEntry *entry;
  gboolean is_parameter = TRUE;
  StatePlan *state;

  entry = _hp_module_lookup_state (self, path, FALSE);
  if (entry == NULL)
    {
      entry = _hp_module_lookup_state (self, path, TRUE);
      is_parameter = FALSE;
    }
  if (entry == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "%s.state_shardings: '%s' names no parameter or buffer",
                   _hp_module_type_name (self), path);
      return FALSE;
    }

  placements = resolve (self, hp_sharding_config_get_state_sharding (config, path),
                        plan->mesh, "state_shardings", path, error);
  if (placements == NULL)
    return FALSE;

  if (HP_IS_DTENSOR (entry->tensor))
    {
      GPtrArray *have = hp_dtensor_get_placements (HP_DTENSOR (entry->tensor));

      if (!_hp_placements_equal (have, placements))
        {
          g_autofree gchar *have_text = hp_placements_to_string (have);
          g_autofree gchar *want_text = hp_placements_to_string (placements);

          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "%s.%s is already a DTensor with placements %s, "
                       "but state_shardings asks for %s",
                       _hp_module_type_name (self), path, have_text, want_text);
          return FALSE;
        }
      return TRUE;
    }

  state = g_hash_table_lookup (plan->states, entry->tensor);
  if (state != NULL)
    {
      if (!_hp_placements_equal (state->placements, placements))
        {
          g_autofree gchar *have_text = hp_placements_to_string (state->placements);
          g_autofree gchar *want_text = hp_placements_to_string (placements);

          g_set_error (error, HP_ERROR, HP_ERROR_PLACEMENT,
                       "%s.%s is tied to a state laid out as %s, "
                       "but state_shardings asks for %s",
                       _hp_module_type_name (self), path, have_text, want_text);
          return FALSE;
        }
      return TRUE;
    }

  state = g_new0 (StatePlan, 1);
  state->original = g_object_ref (entry->tensor);
  state->placements = g_steal_pointer (&placements);
  state->is_parameter = is_parameter;
  state->where = g_strdup_printf ("%s.%s", _hp_module_type_name (self), path);
  g_hash_table_insert (plan->states, entry->tensor, state);
  return TRUE;
}

static GHashTable *
plan_inputs (HpModule          *self,
             HpShardingConfig  *config,
             gboolean           src,
             HpDeviceMesh      *mesh,
             GError           **error)
{
  const gchar *field = src ? "in_src_shardings" : "in_dst_shardings";
  g_auto(GStrv) names = src ? hp_sharding_config_list_in_src_shardings (config)
                            : hp_sharding_config_list_in_dst_shardings (config);
  g_autoptr(GHashTable) out =
    g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_ptr_array_unref);

  for (guint i = 0; names[i] != NULL; i++)
    {
      HpNamedPlacement *named = src ? hp_sharding_config_get_in_src_sharding (config, names[i])
                                    : hp_sharding_config_get_in_dst_sharding (config, names[i]);
      GPtrArray *placements = resolve (self, named, mesh, field, names[i], error);

      if (placements == NULL)
        return NULL;
      g_hash_table_insert (out, g_strdup (names[i]), placements);
    }
  return g_steal_pointer (&out);
}

static GPtrArray *
plan_outputs (HpModule          *self,
              HpShardingConfig  *config,
              gboolean           src,
              HpDeviceMesh      *mesh,
              GError           **error)
{
  const gchar *field = src ? "out_src_shardings" : "out_dst_shardings";
  guint n = src ? hp_sharding_config_get_n_out_src_shardings (config)
                : hp_sharding_config_get_n_out_dst_shardings (config);
  g_autoptr(GPtrArray) out = g_ptr_array_new_full (n, _hp_module_placements_free);

  for (guint j = 0; j < n; j++)
    {
      HpNamedPlacement *named = src ? hp_sharding_config_get_out_src_sharding (config, j)
                                    : hp_sharding_config_get_out_dst_sharding (config, j);
      g_autofree gchar *key = g_strdup_printf ("%u", j);
      GPtrArray *placements = NULL;

      if (named != NULL)
        {
          placements = resolve (self, named, mesh, field, key, error);
          if (placements == NULL)
            return NULL;
        }
      g_ptr_array_add (out, placements);
    }
  return g_steal_pointer (&out);
}

/* The local function of the local map of a module's callable: the
 * callable, given its module (the map lives in the callable, which
 * lives in the module) */
static GPtrArray *
run_callable_locally (GPtrArray  *args,
                      gpointer    user_data,
                      GError    **error)
{
  HpModuleCallable *callable = user_data;

  return callable->func (callable->module, args, callable->user_data, error);
}

static gboolean
plan_module (HpModule  *self,
             Plan      *plan,
             GError   **error)
{
  HpModulePrivate *priv = _hp_module_get_private (self);
  HpShardingConfig *config = priv->sharding_config;
  ModulePlan *module_plan;

  if (!g_hash_table_add (plan->visited, self))
    return TRUE;
  if (priv->mesh != NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_STATE,
                   "%s has already been parallelized", _hp_module_type_name (self));
      return FALSE;
    }

  module_plan = g_new0 (ModulePlan, 1);
  module_plan->module = self;
  g_ptr_array_add (plan->modules, module_plan);

  if (config != NULL)
    {
      g_auto(GStrv) paths = hp_sharding_config_list_state_shardings (config);
      HpLocalMapConfig *local_map = hp_sharding_config_get_local_map (config);

      for (guint i = 0; paths[i] != NULL; i++)
        if (!plan_state (self, config, paths[i], plan, error))
          return FALSE;

      module_plan->in_src = plan_inputs (self, config, TRUE, plan->mesh, error);
      if (module_plan->in_src == NULL)
        return FALSE;
      module_plan->in_dst = plan_inputs (self, config, FALSE, plan->mesh, error);
      if (module_plan->in_dst == NULL)
        return FALSE;
      module_plan->out_src = plan_outputs (self, config, TRUE, plan->mesh, error);
      if (module_plan->out_src == NULL)
        return FALSE;
      module_plan->out_dst = plan_outputs (self, config, FALSE, plan->mesh, error);
      if (module_plan->out_dst == NULL)
        return FALSE;

      if (local_map != NULL)
        {
          const gchar *path = hp_local_map_config_get_callable_path (local_map);

          module_plan->callable = path != NULL ? _hp_module_lookup_callable (self, path) : NULL;
          if (module_plan->callable == NULL)
            {
              g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                           "%s.local_map: no callable '%s' is registered",
                           _hp_module_type_name (self), path != NULL ? path : "(null)");
              return FALSE;
            }
          module_plan->map =
            hp_local_map_new (run_callable_locally,
                              hp_local_map_config_get_out_placements (local_map),
                              hp_local_map_config_get_in_placements (local_map),
                              hp_local_map_config_get_in_grad_placements (local_map),
                              plan->mesh, TRUE,
                              module_plan->callable, NULL);
        }
    }

  for (guint i = 0; i < priv->children->len; i++)
    {
      HpModuleChildEntry *entry = g_ptr_array_index (priv->children, i);

      if (!plan_module (entry->module, plan, error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
distribute_states (Plan    *plan,
                   GError **error)
{
  GHashTableIter iter;
  StatePlan *state;
  gboolean enabled = hp_grad_mode_is_enabled ();
  gboolean ok = TRUE;

  /* the DTensors are new leaves, not views of the whole tensors */
  hp_grad_mode_set_enabled (FALSE);
  g_hash_table_iter_init (&iter, plan->states);
  while (ok && g_hash_table_iter_next (&iter, NULL, (gpointer *) &state))
    {
      HpDTensor *dt = hp_dtensor_distribute (state->original, plan->mesh,
                                             state->placements, -1, error);

      ok = dt != NULL;
      if (ok)
        {
          hp_tensor_set_requires_grad (HP_TENSOR (dt),
                                       hp_tensor_get_requires_grad (state->original));
          state->replacement = HP_TENSOR (dt);
        }
      else
        {
          g_prefix_error (error, "%s: ", state->where);
        }
    }
  hp_grad_mode_set_enabled (enabled);
  return ok;
}

static void
replace_states (GPtrArray  *entries,
                GHashTable *states)
{
  for (guint i = 0; i < entries->len; i++)
    {
      HpModuleStateEntry *entry = g_ptr_array_index (entries, i);
      StatePlan *state = g_hash_table_lookup (states, entry->tensor);

      if (state != NULL)
        g_set_object (&entry->tensor, state->replacement);
    }
}

static void
commit (Plan *plan)
{
  for (guint i = 0; i < plan->modules->len; i++)
    {
      ModulePlan *module_plan = g_ptr_array_index (plan->modules, i);
      HpModulePrivate *priv = _hp_module_get_private (module_plan->module);

      /* a tensor tied between modules stays tied, whichever module's
       * configuration laid it out */
      replace_states (priv->parameters, plan->states);
      replace_states (priv->buffers, plan->states);

      if (module_plan->in_src != NULL)
        {
          priv->in_src = g_steal_pointer (&module_plan->in_src);
          priv->in_dst = g_steal_pointer (&module_plan->in_dst);
          priv->out_src = g_steal_pointer (&module_plan->out_src);
          priv->out_dst = g_steal_pointer (&module_plan->out_dst);
        }
      if (module_plan->map != NULL)
        g_set_object (&module_plan->callable->mapped, module_plan->map);
      g_set_object (&priv->mesh, plan->mesh);
    }
}

/**
 * hp_module_parallelize:
 * @self: a [class@Hp.Module]
 * @mesh: a device mesh with dim names
 * @error: return location for a [struct@GLib.Error]
 *
 * Lays the tree out over @mesh as the modules' sharding configurations
 * say. For each module with a [class@Hp.ShardingConfig]:
 *
 * 1. each `state_shardings` entry (a parameter or buffer path, dots
 *    allowed) is resolved against the mesh's dim names
 *    ([func@Hp.resolve_placements]) and the state replaced by
 *    `hp_dtensor_distribute (state, mesh, placements, -1)`, a new leaf
 *    that requires gradients when the state did. A state that is
 *    already a DTensor must have those placements; a tensor shared by
 *    several modules is distributed once and stays shared.
 * 2. the input and output shardings take effect in [method@Hp.Module.call].
 * 3. a [class@Hp.LocalMapConfig] wraps the registered callable at its
 *    `callable_path` in a [class@Hp.LocalMap] over @mesh; [method@Hp.Module.run_callable] runs
 *    it on local shards from then on.
 *
 * Modules without a sharding configuration are passed through to their
 * children. Everything is checked for the whole tree before any state
 * changes, so on error the tree is as it was. Then
 * [signal@Hp.Module::parallelized] is emitted on every module. Collective over
 * @mesh only in that distributing a state cuts the local part out of
 * it, without communication.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_STATE][error@Hp.Error] (`HpFoo has already
 *   been parallelized`), [HP_ERROR_MESH][error@Hp.Error] (a mesh without dim names),
 *   [HP_ERROR_CONFIG][error@Hp.Error] (a state path or callable path that names
 *   nothing), [HP_ERROR_PLACEMENT][error@Hp.Error] (an axis not in the mesh, placements
 *   that do not fit a state)
 *
 * Since: 1.0
 */
gboolean
hp_module_parallelize (HpModule      *self,
                       HpDeviceMesh  *mesh,
                       GError       **error)
{
  g_autoptr(Plan) plan = NULL;

  g_return_val_if_fail (HP_IS_MODULE (self), FALSE);
  g_return_val_if_fail (HP_IS_DEVICE_MESH (mesh), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (hp_device_mesh_get_dim_names (mesh) == NULL)
    {
      g_autofree gchar *text = hp_device_mesh_to_string (mesh);

      g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                   "%s: cannot parallelize over %s: the mesh has no dim names",
                   _hp_module_type_name (self), text);
      return FALSE;
    }

  plan = g_new0 (Plan, 1);
  plan->mesh = mesh;
  plan->modules = g_ptr_array_new_with_free_func (module_plan_free);
  plan->states = g_hash_table_new_full (NULL, NULL, NULL, state_plan_free);
  plan->visited = g_hash_table_new (NULL, NULL);

  if (!plan_module (self, plan, error) || !distribute_states (plan, error))
    return FALSE;

  commit (plan);
  for (guint i = 0; i < plan->modules->len; i++)
    {
      ModulePlan *module_plan = g_ptr_array_index (plan->modules, i);

      _hp_module_emit_parallelized (module_plan->module);
    }
  return TRUE;
}
