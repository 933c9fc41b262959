/* hp-debug.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-debug-private.h"

static const GDebugKey debug_keys[] = {
  { "collectives", HP_DEBUG_COLLECTIVES },
};

HpDebugFlags
_hp_debug_flags (void)
{
  static gsize flags = 0;

  /* stored with a marker bit so that "no flags" is a value too */
  if (g_once_init_enter (&flags))
    {
      guint parsed = g_parse_debug_string (g_getenv ("HP_DEBUG"), debug_keys,
                                           G_N_ELEMENTS (debug_keys));

      g_once_init_leave (&flags, (gsize) parsed | ((gsize) 1 << 31));
    }

  return (HpDebugFlags) (flags & ~((gsize) 1 << 31));
}
