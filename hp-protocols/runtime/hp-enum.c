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

gchar *
_hp_enum_list_nicks (GType type)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (type);
  gboolean is_enum = G_IS_ENUM_CLASS (klass);
  guint n_values = is_enum ? G_ENUM_CLASS (klass)->n_values : G_FLAGS_CLASS (klass)->n_values;
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < n_values; i++)
    g_string_append_printf (out, "%s%s", i > 0 ? ", " : "",
                            is_enum ? G_ENUM_CLASS (klass)->values[i].value_nick
                                    : G_FLAGS_CLASS (klass)->values[i].value_nick);
  return g_string_free (out, FALSE);
}
