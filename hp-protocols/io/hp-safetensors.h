/* hp-safetensors.h: loading and saving state dicts as safetensors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-state-dict.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

HP_AVAILABLE_IN_ALL
HpStateDict *hp_safetensors_load         (const gchar  *path,
                                          GError      **error);
HP_AVAILABLE_IN_ALL
gboolean     hp_safetensors_save         (HpStateDict  *state_dict,
                                          GHashTable   *metadata,
                                          const gchar  *path,
                                          GError      **error);
HP_AVAILABLE_IN_ALL
gboolean     hp_safetensors_save_sharded (HpStateDict  *state_dict,
                                          GHashTable   *metadata,
                                          const gchar  *directory,
                                          guint64       max_shard_bytes,
                                          GError      **error);

G_END_DECLS
