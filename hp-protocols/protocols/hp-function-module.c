/* hp-function-module.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gio/gio.h>

#include "hp-function-module.h"
#include "hp-module-private.h"

/**
 * HpFunctionModule:
 *
 * A module whose forward is a plain function: the way a kernel or a
 * piece of code written outside the protocol joins a module tree, with
 * a configuration, parameters the caller registers, sharding and
 * parallelize like any other module (the `from_nn_module` escape hatch
 * of the torchtitan protocols).
 *
 * Several function modules may share one [class@Hp.ModuleConfig]: it is used as
 * given, not copied.
 *
 * Since: 1.0
 */

struct _HpFunctionModule
{
  HpModule parent_instance;

  HpModuleForwardFunc func;
  gpointer user_data;
  GDestroyNotify destroy;
};

G_DEFINE_FINAL_TYPE (HpFunctionModule, hp_function_module, HP_TYPE_MODULE)

static void
hp_function_module_finalize (GObject *object)
{
  HpFunctionModule *self = HP_FUNCTION_MODULE (object);

  if (self->destroy != NULL)
    self->destroy (self->user_data);

  G_OBJECT_CLASS (hp_function_module_parent_class)->finalize (object);
}

static GPtrArray *
hp_function_module_forward (HpModule   *module,
                            GPtrArray  *args,
                            GError    **error)
{
  HpFunctionModule *self = HP_FUNCTION_MODULE (module);

  return self->func (module, args, self->user_data, error);
}

static void
hp_function_module_class_init (HpFunctionModuleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  object_class->finalize = hp_function_module_finalize;
  module_class->forward = hp_function_module_forward;
}

static void
hp_function_module_init (HpFunctionModule *self)
{
}

/**
 * hp_function_module_new:
 * @config: (nullable): the configuration (its initialisers and sharding
 *   configuration become the module's), or %NULL for an empty one
 * @arg_names: (nullable) (array zero-terminated=1): the names of the
 *   forward arguments, or %NULL for the single name `input`
 * @func: (scope notified) (closure user_data) (destroy destroy): the
 *   forward
 * @user_data: data for @func
 * @destroy: (nullable): frees @user_data with the module
 *
 * Creates a module whose forward is @func.
 *
 * Returns: (transfer full): a new [class@Hp.FunctionModule]
 *
 * Since: 1.0
 */
HpFunctionModule *
hp_function_module_new (HpModuleConfig      *config,
                        const gchar * const *arg_names,
                        HpModuleForwardFunc  func,
                        gpointer             user_data,
                        GDestroyNotify       destroy)
{
  HpFunctionModule *self;

  g_return_val_if_fail (config == NULL || HP_IS_MODULE_CONFIG (config), NULL);
  g_return_val_if_fail (func != NULL, NULL);

  /* cannot fail: a function module has nothing of its own to set up */
  self = g_initable_new (HP_TYPE_FUNCTION_MODULE, NULL, NULL, "config", config, NULL);
  self->func = func;
  self->user_data = user_data;
  self->destroy = destroy;
  _hp_module_get_private (HP_MODULE (self))->forward_arg_names = g_strdupv ((GStrv) arg_names);
  return self;
}
