/* hp-module-private.h: what the protocols layer knows of modules
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-module.h"

G_BEGIN_DECLS

gboolean _hp_module_is_embedding (HpModule *self);

G_END_DECLS
