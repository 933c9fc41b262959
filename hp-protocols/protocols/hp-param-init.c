/* hp-param-init.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-error.h"
#include "hp-param-init.h"

/**
 * HpParamInit:
 *
 * Initialisers by parameter name: the `param_init` of a module config,
 * which says how hp_module_init_states() fills each parameter the
 * module registers itself.
 *
 * The map keeps its entries in the order their names were first set;
 * setting a name again replaces its initialiser in place, and setting
 * %NULL removes the entry. The initialisers are immutable, so maps and
 * their copies share them.
 *
 * The text form, read by hp_param_init_new_from_string() and written by
 * hp_param_init_to_string(), is a list of `name=initializer` entries
 * separated by semicolons, for example
 * `weight=normal(mean=0, std=0.02); bias=zeros` (see #HpInitializer for
 * the initialisers).
 */

struct _HpParamInit
{
  GObject parent_instance;

  GPtrArray *names;         /* gchar *, in insertion order */
  GPtrArray *initializers;  /* HpInitializer *, one per name */
};

G_DEFINE_FINAL_TYPE (HpParamInit, hp_param_init, G_TYPE_OBJECT)

static void
hp_param_init_finalize (GObject *object)
{
  HpParamInit *self = HP_PARAM_INIT (object);

  g_clear_pointer (&self->names, g_ptr_array_unref);
  g_clear_pointer (&self->initializers, g_ptr_array_unref);

  G_OBJECT_CLASS (hp_param_init_parent_class)->finalize (object);
}

static void
hp_param_init_class_init (HpParamInitClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_param_init_finalize;
}

static void
hp_param_init_init (HpParamInit *self)
{
  self->names = g_ptr_array_new_with_free_func (g_free);
  self->initializers = g_ptr_array_new_with_free_func (g_object_unref);
}

/**
 * hp_param_init_new:
 *
 * Creates an empty map.
 *
 * Returns: (transfer full): a new #HpParamInit
 */
HpParamInit *
hp_param_init_new (void)
{
  return g_object_new (HP_TYPE_PARAM_INIT, NULL);
}

static gboolean
find_name (HpParamInit *self,
           const gchar *name,
           guint       *index)
{
  for (guint i = 0; i < self->names->len; i++)
    if (g_str_equal (g_ptr_array_index (self->names, i), name))
      {
        *index = i;
        return TRUE;
      }
  return FALSE;
}

/**
 * hp_param_init_set:
 * @self: a #HpParamInit
 * @param_name: the name of a parameter, not empty
 * @initializer: (nullable): its initialiser, or %NULL to remove the entry
 *
 * Sets the initialiser of @param_name. A new name goes after the
 * existing ones; an existing name keeps its position. %NULL removes
 * @param_name if it is there.
 */
void
hp_param_init_set (HpParamInit   *self,
                   const gchar   *param_name,
                   HpInitializer *initializer)
{
  guint index;

  g_return_if_fail (HP_IS_PARAM_INIT (self));
  g_return_if_fail (param_name != NULL && *param_name != '\0');
  g_return_if_fail (initializer == NULL || HP_IS_INITIALIZER (initializer));

  if (!find_name (self, param_name, &index))
    {
      if (initializer == NULL)
        return;
      g_ptr_array_add (self->names, g_strdup (param_name));
      g_ptr_array_add (self->initializers, g_object_ref (initializer));
      return;
    }

  if (initializer == NULL)
    {
      g_ptr_array_remove_index (self->names, index);
      g_ptr_array_remove_index (self->initializers, index);
      return;
    }

  g_object_ref (initializer);
  g_object_unref (g_ptr_array_index (self->initializers, index));
  g_ptr_array_index (self->initializers, index) = initializer;
}

/**
 * hp_param_init_get:
 * @self: a #HpParamInit
 * @param_name: the name of a parameter
 *
 * Gets the initialiser of @param_name.
 *
 * Returns: (transfer none) (nullable): the initialiser, or %NULL if
 *   @self has none for @param_name
 */
HpInitializer *
hp_param_init_get (HpParamInit *self,
                   const gchar *param_name)
{
  guint index;

  g_return_val_if_fail (HP_IS_PARAM_INIT (self), NULL);
  g_return_val_if_fail (param_name != NULL, NULL);

  if (!find_name (self, param_name, &index))
    return NULL;
  return g_ptr_array_index (self->initializers, index);
}

/**
 * hp_param_init_get_names:
 * @self: a #HpParamInit
 *
 * Gets the parameter names, in the order they were first set.
 *
 * Returns: (transfer full) (array zero-terminated=1): a new
 *   %NULL-terminated array of the names; empty for an empty map
 */
GStrv
hp_param_init_get_names (HpParamInit *self)
{
  GStrv out;

  g_return_val_if_fail (HP_IS_PARAM_INIT (self), NULL);

  out = g_new0 (gchar *, self->names->len + 1);
  for (guint i = 0; i < self->names->len; i++)
    out[i] = g_strdup (g_ptr_array_index (self->names, i));
  return out;
}

/**
 * hp_param_init_get_n_entries:
 * @self: a #HpParamInit
 *
 * Gets the number of parameters @self has an initialiser for.
 *
 * Returns: the number of entries
 */
guint
hp_param_init_get_n_entries (HpParamInit *self)
{
  g_return_val_if_fail (HP_IS_PARAM_INIT (self), 0);

  return self->names->len;
}

static gboolean
is_name_char (gchar c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-' || c == '.';
}

/* Reads one stripped, non-empty "name=initializer" entry into @self */
static gboolean
parse_entry (HpParamInit  *self,
             const gchar  *text,
             gchar        *entry,
             GError      **error)
{
  g_autofree gchar *quoted = g_strdup (entry);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(HpInitializer) initializer = NULL;
  gchar *equals = strchr (entry, '=');
  gchar *name;
  guint index;

  if (equals == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "cannot parse param init '%s': entry '%s' is not name=initializer",
                   text, quoted);
      return FALSE;
    }

  *equals = '\0';
  name = g_strstrip (entry);
  if (*name == '\0')
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "cannot parse param init '%s': entry '%s' has an empty parameter name",
                   text, quoted);
      return FALSE;
    }
  for (const gchar *p = name; *p != '\0'; p++)
    if (!is_name_char (*p))
      {
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "cannot parse param init '%s': entry '%s' has an invalid parameter "
                     "name '%s' (letters, digits, '_', '-' and '.' only)",
                     text, quoted, name);
        return FALSE;
      }
  if (find_name (self, name, &index))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "cannot parse param init '%s': entry '%s' repeats parameter '%s'",
                   text, quoted, name);
      return FALSE;
    }

  initializer = hp_initializer_new_from_string (equals + 1, &local_error);
  if (initializer == NULL)
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                  "cannot parse param init '%s': entry '%s': ",
                                  text, quoted);
      return FALSE;
    }

  g_ptr_array_add (self->names, g_strdup (name));
  g_ptr_array_add (self->initializers, g_steal_pointer (&initializer));
  return TRUE;
}

/**
 * hp_param_init_new_from_string:
 * @text: entries such as "weight=normal(std=0.02); bias=zeros"
 * @error: return location for a #GError
 *
 * Parses a map as written by hp_param_init_to_string(): entries
 * separated by semicolons, each a parameter name, `=` and an initialiser
 * in any form hp_initializer_new_from_string() reads. Names are made of
 * letters, digits, `_`, `-` and `.`; whitespace around entries, names
 * and initialisers is allowed. A blank @text gives an empty map. The
 * entries keep the order of @text.
 *
 * Returns: (transfer full): a new #HpParamInit, or %NULL with
 *   %HP_ERROR_INVALID_ARGUMENT, naming the entry, for an empty entry, an
 *   entry without `=`, an empty or invalid name, a name given twice or
 *   an initialiser that does not parse
 */
HpParamInit *
hp_param_init_new_from_string (const gchar  *text,
                               GError      **error)
{
  g_autoptr(HpParamInit) self = NULL;
  g_autofree gchar *copy = NULL;
  g_auto(GStrv) entries = NULL;

  g_return_val_if_fail (text != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  self = hp_param_init_new ();
  copy = g_strstrip (g_strdup (text));
  if (*copy == '\0')
    return g_steal_pointer (&self);

  entries = g_strsplit (copy, ";", -1);
  for (guint i = 0; entries[i] != NULL; i++)
    {
      gchar *entry = g_strstrip (entries[i]);

      if (*entry == '\0')
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "cannot parse param init '%s': entry %u is empty", text, i);
          return NULL;
        }
      if (!parse_entry (self, text, entry, error))
        return NULL;
    }

  return g_steal_pointer (&self);
}

/**
 * hp_param_init_to_string:
 * @self: a #HpParamInit
 *
 * Formats @self as `weight=normal(mean=0, std=0.02); bias=zeros`: the
 * entries in order, each initialiser in the form of
 * hp_initializer_to_string(). An empty map gives an empty string.
 * hp_param_init_new_from_string() reads the result back when the names
 * are made of the characters it accepts.
 *
 * Returns: (transfer full): the text
 */
gchar *
hp_param_init_to_string (HpParamInit *self)
{
  GString *out;

  g_return_val_if_fail (HP_IS_PARAM_INIT (self), NULL);

  out = g_string_new (NULL);
  for (guint i = 0; i < self->names->len; i++)
    {
      g_autofree gchar *init = hp_initializer_to_string (g_ptr_array_index (self->initializers, i));

      g_string_append_printf (out, "%s%s=%s", i > 0 ? "; " : "",
                              (const gchar *) g_ptr_array_index (self->names, i), init);
    }
  return g_string_free (out, FALSE);
}

/**
 * hp_param_init_equal:
 * @self: a #HpParamInit
 * @other: another #HpParamInit
 *
 * Tells whether two maps give the same parameters equal initialisers
 * (see hp_initializer_equal()). The order of the entries does not
 * matter.
 *
 * Returns: %TRUE if @self and @other are equal
 */
gboolean
hp_param_init_equal (HpParamInit *self,
                     HpParamInit *other)
{
  g_return_val_if_fail (HP_IS_PARAM_INIT (self), FALSE);
  g_return_val_if_fail (HP_IS_PARAM_INIT (other), FALSE);

  if (self->names->len != other->names->len)
    return FALSE;

  for (guint i = 0; i < self->names->len; i++)
    {
      HpInitializer *theirs = hp_param_init_get (other, g_ptr_array_index (self->names, i));

      if (theirs == NULL || !hp_initializer_equal (g_ptr_array_index (self->initializers, i), theirs))
        return FALSE;
    }
  return TRUE;
}

/**
 * hp_param_init_copy:
 * @self: a #HpParamInit
 *
 * Copies @self: the same entries in the same order, sharing the
 * (immutable) initialisers. Later changes to either map do not affect
 * the other.
 *
 * Returns: (transfer full): a new #HpParamInit
 */
HpParamInit *
hp_param_init_copy (HpParamInit *self)
{
  HpParamInit *copy;

  g_return_val_if_fail (HP_IS_PARAM_INIT (self), NULL);

  copy = hp_param_init_new ();
  for (guint i = 0; i < self->names->len; i++)
    {
      g_ptr_array_add (copy->names, g_strdup (g_ptr_array_index (self->names, i)));
      g_ptr_array_add (copy->initializers, g_object_ref (g_ptr_array_index (self->initializers, i)));
    }
  return copy;
}
