/* hp-error-private.h: the errors of callbacks and vfuncs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A function from a language binding can return nothing without setting
 * an error (Python's None), an object of the wrong type, or an error
 * together with a result. These check what such a function returned:
 * its own error wins, and the other cases become HP_ERROR_STATE errors
 * that name the function, as @who_format says ("HpFoo.convert",
 * "build_model_fn of ModelSpec 'llama3'").
 */

#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* Takes @result (transfer full) and @local_error: @result when it is a
 * @type, else NULL with an error ("<who> returned no <noun> and no
 * error", "<who> returned a HpBar, which is not a HpFoo") */
gpointer  _hp_error_check_returned  (gpointer      result,
                                     GError       *local_error,
                                     GType         type,
                                     const gchar  *noun,
                                     GError      **error,
                                     const gchar  *who_format,
                                     ...) G_GNUC_PRINTF (6, 7);
/* Takes @local_error: whether @ok and no error was set, else FALSE with
 * an error ("<who> failed without an error") */
gboolean  _hp_error_check_succeeded (gboolean      ok,
                                     GError       *local_error,
                                     GError      **error,
                                     const gchar  *who_format,
                                     ...) G_GNUC_PRINTF (4, 5);

/* Whether @text is UTF-8; else FALSE with @code, "<what>: the text is
 * not valid UTF-8". Parsers quote their input in messages, which
 * bindings read as UTF-8. */
gboolean  _hp_error_check_utf8      (const gchar  *text,
                                     const gchar  *what,
                                     gint          code,
                                     GError      **error);

G_END_DECLS
