/* fuzz-common.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdio.h>
#include <stdlib.h>

#include "fuzz-common.h"

void
fuzz_make_warnings_fatal (void)
{
  g_log_set_always_fatal (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
}

void
fuzz_round_trip_failure (const gchar *target,
                         const gchar *what,
                         const gchar *input,
                         const gchar *written)
{
  fprintf (stderr, "%s round trip: %s\n--- input:\n%s\n--- written:\n%s\n",
           target, what, input, written != NULL ? written : "");
  abort ();
}

void
fuzz_check_error (GError *error,
                  gint    code)
{
  if (error == NULL || !g_error_matches (error, HP_ERROR, code) ||
      !g_utf8_validate (error->message, -1, NULL))
    abort ();
}
