/* hp-enum-types.h: the GTypes of the enums of hp-protocols
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * glib-mkenums makes one header per layer, from that layer's headers
 * alone, so that each layer includes only its own and lower layers'
 * (hp-LAYER-enum-types.h, in the layer's build folder); this header
 * gathers them for the umbrella header.
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-runtime-enum-types.h"
#include "hp-tensor-enum-types.h"
#include "hp-distributed-enum-types.h"
#include "hp-protocols-enum-types.h"
#include "hp-nn-enum-types.h"
#include "hp-io-enum-types.h"
