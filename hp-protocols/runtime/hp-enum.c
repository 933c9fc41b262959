/* hp-enum.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-enum-private.h"

/* The nick of @value, or NULL if @type has no such value */
const gchar *
_hp_enum_to_nick (GType type,
                  gint  value)
{
  GEnumClass *klass = g_type_class_ref (type);
  GEnumValue *found = g_enum_get_value (klass, value);

  g_type_class_unref (klass);
  return found != NULL ? found->value_nick : NULL;
}

/* Looks up @nick (case-sensitive); @value is left alone if it is unknown */
gboolean
_hp_enum_from_nick (GType        type,
                    const gchar *nick,
                    gint        *value)
{
  GEnumClass *klass = g_type_class_ref (type);
  GEnumValue *found = g_enum_get_value_by_nick (klass, nick);

  g_type_class_unref (klass);
  if (found == NULL)
    return FALSE;

  *value = found->value;
  return TRUE;
}
