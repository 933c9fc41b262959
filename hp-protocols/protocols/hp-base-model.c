/* hp-base-model.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-base-model.h"
#include "hp-error.h"

/**
 * HpBaseModel:
 *
 * The root module of a model, built from a [class@Hp.BaseModelConfig]. On top
 * of [class@Hp.Module] it checks that the whole tree follows the module
 * protocol ([method@Hp.BaseModel.verify_module_protocol]) and initialises
 * its weights ([method@Hp.BaseModel.init_weights]).
 *
 * Since: 1.0
 */

G_DEFINE_TYPE (HpBaseModel, hp_base_model, HP_TYPE_MODULE)

static void
hp_base_model_class_init (HpBaseModelClass *klass)
{
}

static void
hp_base_model_init (HpBaseModel *self)
{
}

static void
check_initializers (HpModule    *module,
                    const gchar *prefix,
                    GPtrArray   *problems)
{
  HpParamInit *param_init = hp_module_get_param_init (module);
  g_auto(GStrv) names = hp_module_get_parameter_names (module);
  gboolean has_reset = HP_MODULE_GET_CLASS (module)->reset_parameters != NULL;

  for (guint i = 0; names[i] != NULL; i++)
    {
      gboolean covered = param_init != NULL ? hp_param_init_get (param_init, names[i]) != NULL
                                            : has_reset;

      if (!covered)
        g_ptr_array_add (problems,
                         g_strdup_printf ("parameter '%s%s' has no initializer", prefix, names[i]));
    }
}

static void
check_sharding (HpModule    *module,
                const gchar *where,
                GPtrArray   *problems)
{
  HpShardingConfig *config = hp_module_get_sharding_config (module);
  const gchar * const *arg_names;
  HpLocalMapConfig *local_map;
  g_auto(GStrv) states = NULL;
  g_auto(GStrv) in_src = NULL;
  g_auto(GStrv) in_dst = NULL;

  if (config == NULL)
    return;

  states = hp_sharding_config_list_state_shardings (config);
  for (guint i = 0; states[i] != NULL; i++)
    if (hp_module_get_parameter (module, states[i]) == NULL &&
        hp_module_get_buffer (module, states[i]) == NULL)
      g_ptr_array_add (problems,
                       g_strdup_printf ("state_shardings of %s names '%s', which is "
                                        "not a parameter or buffer", where, states[i]));

  arg_names = hp_module_get_forward_arg_names (module);
  in_src = hp_sharding_config_list_in_src_shardings (config);
  in_dst = hp_sharding_config_list_in_dst_shardings (config);
  for (guint i = 0; in_src[i] != NULL; i++)
    if (!g_strv_contains (arg_names, in_src[i]))
      g_ptr_array_add (problems,
                       g_strdup_printf ("in_src_shardings of %s names '%s', which is "
                                        "not a forward argument", where, in_src[i]));
  for (guint i = 0; in_dst[i] != NULL; i++)
    if (!g_strv_contains (arg_names, in_dst[i]))
      g_ptr_array_add (problems,
                       g_strdup_printf ("in_dst_shardings of %s names '%s', which is "
                                        "not a forward argument", where, in_dst[i]));

  local_map = hp_sharding_config_get_local_map (config);
  if (local_map != NULL)
    {
      const gchar *path = hp_local_map_config_get_callable_path (local_map);

      if (path == NULL || !hp_module_has_callable (module, path))
        g_ptr_array_add (problems,
                         g_strdup_printf ("local_map of %s names callable '%s', which is "
                                          "not registered", where,
                                          path != NULL ? path : "(null)"));
    }
}

/* @prefix is the module's path with a trailing dot, "" for the root */
static void
check_tree (HpModule    *module,
            const gchar *prefix,
            GHashTable  *seen,
            GPtrArray   *problems)
{
  g_auto(GStrv) children = NULL;
  g_autofree gchar *where = NULL;

  if (!g_hash_table_add (seen, module))
    return;

  where = prefix[0] != '\0' ? g_strndup (prefix, strlen (prefix) - 1) : g_strdup ("(root)");
  check_initializers (module, prefix, problems);
  check_sharding (module, where, problems);

  children = hp_module_get_child_names (module);
  for (guint i = 0; children[i] != NULL; i++)
    {
      g_autofree gchar *child_prefix = g_strconcat (prefix, children[i], ".", NULL);

      check_tree (hp_module_get_child (module, children[i]), child_prefix, seen, problems);
    }
}

/**
 * hp_base_model_verify_module_protocol:
 * @self: a [class@Hp.BaseModel]
 * @error: return location for a [struct@GLib.Error]
 *
 * Checks that every module of the tree follows the protocol: each
 * parameter has an initialiser (an entry in its module's [class@Hp.ParamInit],
 * or, without one, a [vfunc@Hp.Module.reset_parameters]); each
 * `state_shardings` key names a parameter or buffer of its module; each
 * `in_src_shardings` and `in_dst_shardings` key names a forward
 * argument; each [class@Hp.LocalMapConfig] names a registered callable.
 * Output shardings are by index and are checked when the module runs.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_CONFIG][error@Hp.Error] listing every
 *   offender, with its path from @self
 *
 * Since: 1.0
 */
gboolean
hp_base_model_verify_module_protocol (HpBaseModel  *self,
                                      GError      **error)
{
  g_autoptr(GPtrArray) problems = NULL;
  g_autoptr(GHashTable) seen = NULL;
  g_autofree gchar *joined = NULL;

  g_return_val_if_fail (HP_IS_BASE_MODEL (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  problems = g_ptr_array_new_with_free_func (g_free);
  seen = g_hash_table_new (NULL, NULL);
  check_tree (HP_MODULE (self), "", seen, problems);
  if (problems->len == 0)
    return TRUE;

  g_ptr_array_add (problems, NULL);
  joined = g_strjoinv ("; ", (GStrv) problems->pdata);
  g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
               "%s does not follow the module protocol: %s",
               G_OBJECT_TYPE_NAME (self), joined);
  return FALSE;
}

/**
 * hp_base_model_init_weights:
 * @self: a [class@Hp.BaseModel]
 * @seed: the seed of the whole model
 * @error: return location for a [struct@GLib.Error]
 *
 * Initialises every parameter and buffer of the model: the same as
 * [method@Hp.Module.init_states].
 *
 * Returns: %TRUE, or %FALSE with the errors of [method@Hp.Module.init_states]
 *
 * Since: 1.0
 */
gboolean
hp_base_model_init_weights (HpBaseModel  *self,
                            guint64       seed,
                            GError      **error)
{
  g_return_val_if_fail (HP_IS_BASE_MODEL (self), FALSE);

  return hp_module_init_states (HP_MODULE (self), seed, error);
}
