/* hp-model-spec-registry.c: the process-wide registry of model specs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-error.h"
#include "hp-model-spec.h"

/**
 * HpModelSpecRegistry:
 *
 * The process-wide registry of model specs by name, reached with
 * [func@Hp.ModelSpecRegistry.get_default]. Specs are added with
 * [method@Hp.ModelSpec.register] and found with [func@Hp.ModelSpec.lookup]; the
 * registry itself is there to emit [signal@Hp.ModelSpecRegistry::registered].
 *
 * The registry may be used from several threads; its signal is emitted
 * on the thread that registers.
 *
 * Since: 1.0
 */

struct _HpModelSpecRegistry
{
  GObject parent_instance;

  GMutex lock;
  GHashTable *specs;  /* name -> HpModelSpec */
};

G_DEFINE_FINAL_TYPE (HpModelSpecRegistry, hp_model_spec_registry, G_TYPE_OBJECT)

enum {
  REGISTERED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
hp_model_spec_registry_finalize (GObject *object)
{
  HpModelSpecRegistry *self = HP_MODEL_SPEC_REGISTRY (object);

  g_clear_pointer (&self->specs, g_hash_table_unref);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (hp_model_spec_registry_parent_class)->finalize (object);
}

static void
hp_model_spec_registry_class_init (HpModelSpecRegistryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_model_spec_registry_finalize;

  /**
   * HpModelSpecRegistry::registered:
   * @self: the registry
   * @spec: the spec just registered
   *
   * Emitted after [method@Hp.ModelSpec.register] added @spec.
   *
   * Since: 1.0
   */
  signals[REGISTERED] =
    g_signal_new ("registered",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, HP_TYPE_MODEL_SPEC);
}

static void
hp_model_spec_registry_init (HpModelSpecRegistry *self)
{
  g_mutex_init (&self->lock);
  self->specs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
}

/**
 * hp_model_spec_registry_get_default:
 *
 * Gets the registry of model specs, made on first use and kept for
 * the life of the process.
 *
 * Returns: (transfer none): the registry
 *
 * Since: 1.0
 */
HpModelSpecRegistry *
hp_model_spec_registry_get_default (void)
{
  static HpModelSpecRegistry *registry;

  if (g_once_init_enter (&registry))
    g_once_init_leave (&registry, g_object_new (HP_TYPE_MODEL_SPEC_REGISTRY, NULL));

  return registry;
}

static gint
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* The names of the registered specs, sorted; call with the lock held */
static GStrv
sorted_names (HpModelSpecRegistry *self)
{
  GPtrArray *names = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, self->specs);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (names, g_strdup (key));
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return (GStrv) g_ptr_array_free (names, FALSE);
}

/**
 * hp_model_spec_register:
 * @self: a [class@Hp.ModelSpec]
 * @error: return location for a [struct@GLib.Error]
 *
 * Validates @self ([method@Hp.ModelSpec.validate]) and adds it to the
 * registry under its name, then emits [signal@Hp.ModelSpecRegistry::registered].
 * The registry keeps a reference to @self.
 *
 * Returns: %TRUE, or %FALSE with @error set: the error of
 *   [method@Hp.ModelSpec.validate], or [HP_ERROR_CONFIG][error@Hp.Error] (`ModelSpec 'llama3'
 *   is already registered`) if a spec of that name is
 *
 * Since: 1.0
 */
gboolean
hp_model_spec_register (HpModelSpec  *self,
                        GError      **error)
{
  HpModelSpecRegistry *registry;
  const gchar *name;
  gboolean added = FALSE;

  g_return_val_if_fail (HP_IS_MODEL_SPEC (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!hp_model_spec_validate (self, error))
    return FALSE;

  name = hp_model_spec_get_name (self);
  registry = hp_model_spec_registry_get_default ();
  g_mutex_lock (&registry->lock);
  if (!g_hash_table_contains (registry->specs, name))
    {
      g_hash_table_insert (registry->specs, g_strdup (name), g_object_ref (self));
      added = TRUE;
    }
  g_mutex_unlock (&registry->lock);

  if (!added)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "ModelSpec '%s' is already registered", name);
      return FALSE;
    }

  g_signal_emit (registry, signals[REGISTERED], 0, self);
  return TRUE;
}

/**
 * hp_model_spec_lookup:
 * @name: the name of a registered spec
 * @error: return location for a [struct@GLib.Error]
 *
 * Finds the spec registered under @name.
 *
 * Returns: (transfer full): the spec, or %NULL with [HP_ERROR_CONFIG][error@Hp.Error]
 *   listing the registered names in order (`Unknown model 'x'.
 *   Available: [llama3, qwen3]`) if no spec has that name
 *
 * Since: 1.0
 */
HpModelSpec *
hp_model_spec_lookup (const gchar  *name,
                      GError      **error)
{
  HpModelSpecRegistry *registry;
  HpModelSpec *spec;
  g_auto(GStrv) names = NULL;
  g_autofree gchar *joined = NULL;

  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  registry = hp_model_spec_registry_get_default ();
  g_mutex_lock (&registry->lock);
  spec = g_hash_table_lookup (registry->specs, name);
  if (spec != NULL)
    g_object_ref (spec);
  else
    names = sorted_names (registry);
  g_mutex_unlock (&registry->lock);

  if (spec != NULL)
    return spec;

  joined = g_strjoinv (", ", names);
  g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
               "Unknown model '%s'. Available: [%s]", name, joined);
  return NULL;
}

/**
 * hp_model_spec_list_names:
 *
 * Lists the names of the registered specs.
 *
 * Returns: (transfer full) (array zero-terminated=1): the names in
 *   ascending order, an empty array if none is registered
 *
 * Since: 1.0
 */
GStrv
hp_model_spec_list_names (void)
{
  HpModelSpecRegistry *registry = hp_model_spec_registry_get_default ();
  GStrv names;

  g_mutex_lock (&registry->lock);
  names = sorted_names (registry);
  g_mutex_unlock (&registry->lock);
  return names;
}

/**
 * hp_model_spec_unregister:
 * @name: the name of a registered spec
 *
 * Removes the spec registered under @name, for tests and for bindings
 * that register specs of their own for a while.
 *
 * Returns: %TRUE if a spec was removed, %FALSE if none had that name
 *
 * Since: 1.0
 */
gboolean
hp_model_spec_unregister (const gchar *name)
{
  HpModelSpecRegistry *registry;
  gpointer key = NULL;
  gpointer spec = NULL;
  gboolean found;

  g_return_val_if_fail (name != NULL, FALSE);

  registry = hp_model_spec_registry_get_default ();
  g_mutex_lock (&registry->lock);
  found = g_hash_table_steal_extended (registry->specs, name, &key, &spec);
  g_mutex_unlock (&registry->lock);

  /* the spec may run its destroy notifies: not under the lock */
  g_free (key);
  g_clear_object (&spec);
  return found;
}
