/* hp-enum-private.h: enum values and their nicks, for the to/from string
 * functions of the library's enums
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

const gchar *_hp_enum_to_nick   (GType        type,
                                 gint         value);
gboolean     _hp_enum_from_nick (GType        type,
                                 const gchar *nick,
                                 gint        *value);
/* The nicks of an enum or flags @type, "a, b, c", for error messages */
gchar       *_hp_enum_list_nicks (GType       type);

G_END_DECLS
