/* fuzz-common.h: what the text-parser targets share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <hp-protocols/hp-protocols.h>

/* A warning or critical that input can cause is a missing check: abort */
void fuzz_make_warnings_fatal (void);

/* Prints what failed to read back as it was written, then aborts */
void fuzz_round_trip_failure  (const gchar *target,
                               const gchar *what,
                               const gchar *input,
                               const gchar *written) G_GNUC_NORETURN;

/* A parser failed: aborts unless @error is @code of HP_ERROR with a
 * UTF-8 message (bindings read it as such) */
void fuzz_check_error         (GError      *error,
                               gint         code);
