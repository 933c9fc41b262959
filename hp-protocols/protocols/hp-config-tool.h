/* hp-config-tool.h: the hp-config command line, for every language's
 * configuration types
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_CONFIG_TOOL (hp_config_tool_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpConfigTool, hp_config_tool, HP, CONFIG_TOOL, GObject)

/**
 * HpConfigToolLoadFunc:
 * @tool: the tool that runs a command
 * @values: (array zero-terminated=1): the values the option was given,
 *   in the order given; empty when it was not given
 * @user_data: (closure): the data given to
 *   [method@Hp.ConfigTool.add_load_option]
 * @error: return location for a [struct@GLib.Error]
 *
 * Loads the configuration types that the values of a load option name
 * (the libraries of `--require NAMESPACE-VERSION`, the Python modules
 * of `--import MODULE`), so that the command finds them. It is called
 * once before each command runs, after its command line has been read,
 * even when the option was not given.
 *
 * Returns: %TRUE, or %FALSE with @error set: an error in the
 *   %G_OPTION_ERROR domain is a usage error (exit status 2), any other
 *   an error of the command
 *
 * Since: 1.0
 */
typedef gboolean (*HpConfigToolLoadFunc) (HpConfigTool        *tool,
                                          const gchar * const *values,
                                          gpointer             user_data,
                                          GError             **error);

HP_AVAILABLE_IN_ALL
HpConfigTool *hp_config_tool_new             (void);

HP_AVAILABLE_IN_ALL
void          hp_config_tool_add_load_option (HpConfigTool         *self,
                                              const gchar          *long_name,
                                              gchar                 short_name,
                                              const gchar          *description,
                                              const gchar          *arg_description,
                                              HpConfigToolLoadFunc  func,
                                              gpointer              user_data,
                                              GDestroyNotify        destroy);

HP_AVAILABLE_IN_ALL
const gchar  *hp_config_tool_get_description (HpConfigTool         *self);
HP_AVAILABLE_IN_ALL
void          hp_config_tool_set_description (HpConfigTool         *self,
                                              const gchar          *description);

HP_AVAILABLE_IN_ALL
gint          hp_config_tool_run             (HpConfigTool         *self,
                                              const gchar * const  *args);

G_END_DECLS
