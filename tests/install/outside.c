/* outside.c: a program built against an installed hp-protocols, as a
 * user builds one: with `pkg-config --cflags --libs hp-protocols-1.0`
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Usage: outside ROOT. Builds a linear layer from a configuration read
 * from JSON, runs it, and checks that the hp-protocols library this
 * process loaded lies under ROOT (the temporary installation).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hp-protocols/hp-protocols.h>
/* the C-only header compiles against the installed headers too */
#include <hp-protocols/hp-mpi.h>

/* The path of the hp-protocols library mapped into this process */
static gchar *
loaded_library (void)
{
  g_autofree gchar *maps = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL))
    return NULL;
  lines = g_strsplit (maps, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const gchar *path = strchr (lines[i], '/');

      if (path != NULL && strstr (path, "/libhp-protocols-1.0.so") != NULL)
        return g_strdup (path);
    }
  return NULL;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) config = NULL;
  g_autoptr(GObject) linear = NULL;
  g_autoptr(HpTensor) x = hp_tensor_new_ones (HP_DTYPE_FLOAT64, (const gint64[]) { 2, 3 }, 2);
  g_autoptr(HpTensor) y = NULL;
  g_autofree gchar *library = NULL;
  guint ndim;
  const gint64 *shape;

  if (argc != 2)
    {
      fprintf (stderr, "usage: outside ROOT\n");
      return EXIT_FAILURE;
    }
  if (!HP_CHECK_VERSION (0, 1, 0))
    {
      fprintf (stderr, "outside: version %s is older than 0.1.0\n", HP_VERSION_S);
      return EXIT_FAILURE;
    }

  config = hp_config_new_from_json (HP_TYPE_LINEAR_CONFIG,
                                    "{\"@type\": \"HpLinearConfig\", \"in-features\": 3, "
                                    "\"out-features\": 5, \"bias\": true, \"dtype\": \"float64\"}",
                                    &error);
  if (config == NULL ||
      !hp_init (&error) ||
      (linear = hp_config_build (config, &error)) == NULL ||
      !hp_module_init_states (HP_MODULE (linear), 3, &error) ||
      (y = hp_module_call1 (HP_MODULE (linear), x, &error)) == NULL)
    {
      fprintf (stderr, "outside: %s\n", error->message);
      return EXIT_FAILURE;
    }
  shape = hp_tensor_get_shape (y, &ndim);
  if (ndim != 2 || shape[0] != 2 || shape[1] != 5)
    {
      fprintf (stderr, "outside: the output has the wrong shape\n");
      return EXIT_FAILURE;
    }

  library = loaded_library ();
  if (library == NULL || !g_str_has_prefix (library, argv[1]))
    {
      fprintf (stderr, "outside: loaded %s, not the library under %s\n",
               library != NULL ? library : "no hp-protocols library", argv[1]);
      return EXIT_FAILURE;
    }
  printf ("outside: hp-protocols %s from %s\n", HP_VERSION_S, library);
  return EXIT_SUCCESS;
}
