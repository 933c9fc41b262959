/* hp-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-error.h"

G_DEFINE_QUARK (hp-error-quark, hp_error)
