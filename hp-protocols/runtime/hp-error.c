/* hp-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-error-private.h"
#include "hp-error.h"

/**
 * hp_error_quark:
 *
 * Gets the error domain of hp-protocols, [HP_ERROR][error@Hp.Error].
 *
 * Returns: the quark of the domain
 *
 * Since: 1.0
 */
G_DEFINE_QUARK (hp-error-quark, hp_error)

gpointer
_hp_error_check_returned (gpointer      result,
                          GError       *local_error,
                          GType         type,
                          const gchar  *noun,
                          GError      **error,
                          const gchar  *who_format,
                          ...)
{
  g_autoptr(GObject) object = result;
  g_autofree gchar *who = NULL;
  va_list args;

  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return NULL;
    }
  if (object != NULL && G_TYPE_CHECK_INSTANCE_TYPE (object, type))
    return g_steal_pointer (&object);

  va_start (args, who_format);
  who = g_strdup_vprintf (who_format, args);
  va_end (args);
  if (object == NULL)
    g_set_error (error, HP_ERROR, HP_ERROR_STATE, "%s returned no %s and no error", who, noun);
  else
    g_set_error (error, HP_ERROR, HP_ERROR_STATE, "%s returned a %s, which is not a %s",
                 who, G_OBJECT_TYPE_NAME (object), g_type_name (type));
  return NULL;
}

gboolean
_hp_error_check_succeeded (gboolean      ok,
                           GError       *local_error,
                           GError      **error,
                           const gchar  *who_format,
                           ...)
{
  g_autofree gchar *who = NULL;
  va_list args;

  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return FALSE;
    }
  if (ok)
    return TRUE;

  va_start (args, who_format);
  who = g_strdup_vprintf (who_format, args);
  va_end (args);
  g_set_error (error, HP_ERROR, HP_ERROR_STATE, "%s failed without an error", who);
  return FALSE;
}

gboolean
_hp_error_check_utf8 (const gchar  *text,
                      const gchar  *what,
                      gint          code,
                      GError      **error)
{
  if (g_utf8_validate (text, -1, NULL))
    return TRUE;

  g_set_error (error, HP_ERROR, code, "%s: the text is not valid UTF-8", what);
  return FALSE;
}
