/* hp-version-macros.h: symbol visibility for hp-protocols
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib.h>

/* The library is built with hidden default visibility; only symbols marked
 * with HP_AVAILABLE_IN_ALL are exported. */
#if defined (_WIN32) && !defined (__CYGWIN__)
# if defined (HP_PROTOCOLS_COMPILATION)
#  define _HP_EXTERN __declspec(dllexport) extern
# else
#  define _HP_EXTERN __declspec(dllimport) extern
# endif
#else
# define _HP_EXTERN __attribute__((visibility ("default"))) extern
#endif

#define HP_AVAILABLE_IN_ALL _HP_EXTERN
