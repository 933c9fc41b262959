/* hp-debug-private.h: the HP_DEBUG environment variable
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * HP_DEBUG holds keys separated by commas, colons or spaces, read once
 * per process: "collectives" makes the ranks gather their whole
 * signatures before every collective instead of a digest of them
 * (hp-collective-private.h); "all" turns on every key and
 * "help" lists them.
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  HP_DEBUG_COLLECTIVES = 1 << 0,
} HpDebugFlags;

HpDebugFlags _hp_debug_flags (void);

G_END_DECLS
