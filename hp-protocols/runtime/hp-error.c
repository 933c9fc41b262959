/* hp-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-error.h"

/**
 * hp_error_quark:
 *
 * Gets the error domain of hp-protocols, %HP_ERROR.
 *
 * Returns: the quark of the domain
 */
G_DEFINE_QUARK (hp-error-quark, hp_error)
