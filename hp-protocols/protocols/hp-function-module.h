/* hp-function-module.h: a forward function that joins the module protocol
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-module.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

/**
 * HpModuleForwardFunc:
 * @module: the [class@Hp.FunctionModule] being run
 * @args: (element-type HpTensor): the arguments
 * @user_data: (closure): the data given to [ctor@Hp.FunctionModule.new]
 * @error: return location for a [struct@GLib.Error]
 *
 * The forward of a [class@Hp.FunctionModule]. It may use the parameters the
 * caller registered on @module.
 *
 * Returns: (transfer full) (element-type HpTensor) (nullable): the
 *   outputs, or %NULL with @error set
 *
 * Since: 1.0
 */
typedef GPtrArray *(*HpModuleForwardFunc) (HpModule   *module,
                                           GPtrArray  *args,
                                           gpointer    user_data,
                                           GError    **error);

#define HP_TYPE_FUNCTION_MODULE (hp_function_module_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpFunctionModule, hp_function_module, HP, FUNCTION_MODULE, HpModule)

HP_AVAILABLE_IN_ALL
HpFunctionModule *hp_function_module_new (HpModuleConfig      *config,
                                          const gchar * const *arg_names,
                                          HpModuleForwardFunc  func,
                                          gpointer             user_data,
                                          GDestroyNotify       destroy);

G_END_DECLS
