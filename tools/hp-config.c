/* hp-config.c: lists, shows, makes, edits, checks and compares
 * configurations from the command line
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The commands are the library's (HpConfigTool); this program gives
 * them the configuration types of the introspected libraries it loads:
 * the Hp typelib and those named with --require, registered by walking
 * the introspection repository.
 *
 *   hp-config show HpDecoderConfig
 *   hp-config new HpDecoderConfig --set dim=128 -o model.json
 *   hp-config set model.json n-heads=8 norm-eps=1e-6
 *   hp-config diff model.json other.json
 */

#include "config.h"

#include <locale.h>
#include <string.h>

#include <girepository.h>

#include <hp-protocols/hp-protocols.h>

/* Whether the object type of @info is HpConfig or derives from it */
static gboolean
info_derives_from_config (GIBaseInfo *info)
{
  const gchar *config_name = g_type_name (HP_TYPE_CONFIG);
  GIBaseInfo *current = g_base_info_ref (info);
  gboolean found = FALSE;

  while (current != NULL && !found)
    {
      GIBaseInfo *parent = NULL;

      found = g_strcmp0 (g_registered_type_info_get_type_name ((GIRegisteredTypeInfo *) current),
                         config_name) == 0;
      if (!found)
        parent = (GIBaseInfo *) g_object_info_get_parent ((GIObjectInfo *) current);
      /* a parent whose namespace is not loaded comes back unresolved */
      if (parent != NULL && g_base_info_get_type (parent) != GI_INFO_TYPE_OBJECT)
        g_clear_pointer (&parent, g_base_info_unref);
      g_base_info_unref (current);
      current = parent;
    }
  return found;
}

/* Registers the configuration types of every loaded namespace: getting
 * the GType of an object info runs its get_type function, from the
 * namespace's shared library */
static gboolean
register_config_types (GIRepository  *repository,
                       GError       **error)
{
  g_auto(GStrv) namespaces = g_irepository_get_loaded_namespaces (repository);

  for (guint i = 0; namespaces[i] != NULL; i++)
    {
      gint n_infos = g_irepository_get_n_infos (repository, namespaces[i]);

      for (gint j = 0; j < n_infos; j++)
        {
          GIBaseInfo *info = g_irepository_get_info (repository, namespaces[i], j);
          gboolean registered = TRUE;

          if (g_base_info_get_type (info) == GI_INFO_TYPE_OBJECT && info_derives_from_config (info))
            registered = g_registered_type_info_get_g_type ((GIRegisteredTypeInfo *) info) != G_TYPE_NONE;
          if (!registered)
            {
              const gchar *library = g_irepository_get_shared_library (repository, namespaces[i]);

              g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                           "%s.%s: the type cannot be registered (does %s load?)",
                           namespaces[i], g_base_info_get_name (info),
                           library != NULL ? library : "its library");
            }
          g_base_info_unref (info);
          if (!registered)
            return FALSE;
        }
    }
  return TRUE;
}

/* Loads @namespace_ from GI_TYPELIB_PATH and the system directory, or
 * else from the directory the Hp typelib is installed in */
static gboolean
require_namespace (GIRepository  *repository,
                   const gchar   *namespace_,
                   const gchar   *version,
                   GError       **error)
{
  g_autoptr(GError) local_error = NULL;

  if (g_irepository_require (repository, namespace_, version, 0, &local_error) != NULL)
    return TRUE;
  if (g_irepository_require_private (repository, HP_TYPELIB_DIR, namespace_, version, 0, NULL) != NULL)
    return TRUE;
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

/* The load function of --require: the Hp typelib, then each
 * NAMESPACE-VERSION given */
static gboolean
load_typelibs (HpConfigTool        *tool,
               const gchar * const *values,
               gpointer             user_data,
               GError             **error)
{
  GIRepository *repository = g_irepository_get_default ();

  for (guint i = 0; values[i] != NULL; i++)
    {
      const gchar *dash = strchr (values[i], '-');

      if (dash == NULL || dash == values[i] || dash[1] == '\0')
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--require: expected NAMESPACE-VERSION such as Hp-1.0, got '%s'", values[i]);
          return FALSE;
        }
    }
  if (!require_namespace (repository, "Hp", "1.0", error))
    {
      g_prefix_error (error, "cannot load the Hp-1.0 typelib (is GI_TYPELIB_PATH right?): ");
      return FALSE;
    }
  for (guint i = 0; values[i] != NULL; i++)
    {
      const gchar *dash = strchr (values[i], '-');
      g_autofree gchar *namespace_ = g_strndup (values[i], dash - values[i]);

      if (!require_namespace (repository, namespace_, dash + 1, error))
        {
          g_prefix_error (error, "--require %s: ", values[i]);
          return FALSE;
        }
    }
  return register_config_types (repository, error);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(HpConfigTool) tool = hp_config_tool_new ();

  setlocale (LC_ALL, "");
  hp_config_tool_add_load_option (tool, "require", 'r',
                                  "Load the typelib of another library for its configuration types (repeatable)",
                                  "NAMESPACE-VERSION", load_typelibs, NULL, NULL);
  hp_config_tool_set_description (tool,
    "The configuration types are those of the Hp library and of the libraries loaded\n"
    "with --require, found through GObject introspection: the typelibs are looked for\n"
    "in GI_TYPELIB_PATH, in the system typelib directory and in the directory the Hp\n"
    "typelib is installed in.\n");
  return hp_config_tool_run (tool, (const gchar * const *) argv + 1);
}
