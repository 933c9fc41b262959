/* hp-param-init.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-error-private.h"
#include "hp-error.h"
#include "hp-name-map-private.h"
#include "hp-param-init.h"

/**
 * HpParamInit:
 *
 * Initialisers by parameter name: the `param_init` of a module config,
 * which says how [method@Hp.Module.init_states] fills each parameter the
 * module registers itself.
 *
 * The map keeps its entries in the order their names were first set;
 * setting a name again replaces its initialiser in place, and setting
 * %NULL removes the entry. The initialisers are immutable, so maps and
 * their copies share them.
 *
 * The text form, read by [ctor@Hp.ParamInit.new_from_string] and written by
 * [method@Hp.ParamInit.to_string], is a list of `name=initializer` entries
 * separated by semicolons, for example
 * `weight=normal(mean=0, std=0.02); bias=zeros` (see [class@Hp.Initializer] for
 * the initialisers).
 *
 * Since: 1.0
 */

struct _HpParamInit
{
  GObject parent_instance;

  HpNameMap initializers;  /* parameter name -> HpInitializer */
};

G_DEFINE_FINAL_TYPE (HpParamInit, hp_param_init, G_TYPE_OBJECT)

static void
hp_param_init_finalize (GObject *object)
{
  HpParamInit *self = HP_PARAM_INIT (object);

  _hp_name_map_clear (&self->initializers);

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
  _hp_name_map_init (&self->initializers);
}

/**
 * hp_param_init_new:
 *
 * Creates an empty map.
 *
 * Returns: (transfer full): a new [class@Hp.ParamInit]
 *
 * Since: 1.0
 */
HpParamInit *
hp_param_init_new (void)
{
  return g_object_new (HP_TYPE_PARAM_INIT, NULL);
}

/**
 * hp_param_init_set:
 * @self: a [class@Hp.ParamInit]
 * @param_name: the name of a parameter, not empty
 * @initializer: (nullable): its initialiser, or %NULL to remove the entry
 *
 * Sets the initialiser of @param_name. A new name goes after the
 * existing ones; an existing name keeps its position. %NULL removes
 * @param_name if it is there.
 *
 * Since: 1.0
 */
void
hp_param_init_set (HpParamInit   *self,
                   const gchar   *param_name,
                   HpInitializer *initializer)
{
  g_return_if_fail (HP_IS_PARAM_INIT (self));
  g_return_if_fail (param_name != NULL && *param_name != '\0');
  g_return_if_fail (initializer == NULL || HP_IS_INITIALIZER (initializer));

  _hp_name_map_set (&self->initializers, param_name, initializer, NULL);
}

/**
 * hp_param_init_get:
 * @self: a [class@Hp.ParamInit]
 * @param_name: the name of a parameter
 *
 * Gets the initialiser of @param_name.
 *
 * Returns: (transfer none) (nullable): the initialiser, or %NULL if
 *   @self has none for @param_name
 *
 * Since: 1.0
 */
HpInitializer *
hp_param_init_get (HpParamInit *self,
                   const gchar *param_name)
{
  g_return_val_if_fail (HP_IS_PARAM_INIT (self), NULL);
  g_return_val_if_fail (param_name != NULL, NULL);

  return _hp_name_map_lookup (&self->initializers, param_name);
}

/**
 * hp_param_init_get_names:
 * @self: a [class@Hp.ParamInit]
 *
 * Gets the parameter names, in the order they were first set.
 *
 * Returns: (transfer full) (array zero-terminated=1): a new
 *   %NULL-terminated array of the names; empty for an empty map
 *
 * Since: 1.0
 */
GStrv
hp_param_init_get_names (HpParamInit *self)
{
  g_return_val_if_fail (HP_IS_PARAM_INIT (self), NULL);

  return _hp_name_map_dup_names (&self->initializers);
}

/**
 * hp_param_init_get_n_entries:
 * @self: a [class@Hp.ParamInit]
 *
 * Gets the number of parameters @self has an initialiser for.
 *
 * Returns: the number of entries
 *
 * Since: 1.0
 */
guint
hp_param_init_get_n_entries (HpParamInit *self)
{
  g_return_val_if_fail (HP_IS_PARAM_INIT (self), 0);

  return self->initializers.names->len;
}

static const HpNameMapSyntax syntax = {
  "param init", '=', "name=initializer", "parameter",
  (HpNameMapParseFunc) hp_initializer_new_from_string,
};

/**
 * hp_param_init_new_from_string:
 * @text: entries such as "weight=normal(std=0.02); bias=zeros"
 * @error: return location for a [struct@GLib.Error]
 *
 * Parses a map as written by [method@Hp.ParamInit.to_string]: entries
 * separated by semicolons, each a parameter name, `=` and an initialiser
 * in any form [ctor@Hp.Initializer.new_from_string] reads. Names are made of
 * letters, digits, `_`, `-` and `.`; whitespace around entries, names
 * and initialisers is allowed. A blank @text gives an empty map. The
 * entries keep the order of @text.
 *
 * Returns: (transfer full): a new [class@Hp.ParamInit], or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error], naming the entry, for an empty entry, an
 *   entry without `=`, an empty or invalid name, a name given twice or
 *   an initialiser that does not parse
 *
 * Since: 1.0
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

  if (!_hp_error_check_utf8 (text, "cannot parse param init", HP_ERROR_INVALID_ARGUMENT, error))
    return NULL;

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
      if (!_hp_name_map_parse_entry (&self->initializers, &syntax, text, entry, error))
        return NULL;
    }

  return g_steal_pointer (&self);
}

/**
 * hp_param_init_to_string:
 * @self: a [class@Hp.ParamInit]
 *
 * Formats @self as `weight=normal(mean=0, std=0.02); bias=zeros`: the
 * entries in order, each initialiser in the form of
 * [method@Hp.Initializer.to_string]. An empty map gives an empty string.
 * [ctor@Hp.ParamInit.new_from_string] reads the result back when the names
 * are made of the characters it accepts.
 *
 * Returns: (transfer full): the text
 *
 * Since: 1.0
 */
gchar *
hp_param_init_to_string (HpParamInit *self)
{
  GString *out;

  g_return_val_if_fail (HP_IS_PARAM_INIT (self), NULL);

  out = g_string_new (NULL);
  for (guint i = 0; i < self->initializers.names->len; i++)
    {
      g_autofree gchar *init = hp_initializer_to_string (g_ptr_array_index (self->initializers.values, i));

      g_string_append_printf (out, "%s%s=%s", i > 0 ? "; " : "",
                              (const gchar *) g_ptr_array_index (self->initializers.names, i), init);
    }
  return g_string_free (out, FALSE);
}

/**
 * hp_param_init_equal:
 * @self: a [class@Hp.ParamInit]
 * @other: another [class@Hp.ParamInit]
 *
 * Tells whether two maps give the same parameters equal initialisers
 * (see [method@Hp.Initializer.equal]). The order of the entries does not
 * matter.
 *
 * Returns: %TRUE if @self and @other are equal
 *
 * Since: 1.0
 */
gboolean
hp_param_init_equal (HpParamInit *self,
                     HpParamInit *other)
{
  g_return_val_if_fail (HP_IS_PARAM_INIT (self), FALSE);
  g_return_val_if_fail (HP_IS_PARAM_INIT (other), FALSE);

  return _hp_name_map_equal (&self->initializers, &other->initializers,
                             (GEqualFunc) hp_initializer_equal);
}

/**
 * hp_param_init_copy:
 * @self: a [class@Hp.ParamInit]
 *
 * Copies @self: the same entries in the same order, sharing the
 * (immutable) initialisers. Later changes to either map do not affect
 * the other.
 *
 * Returns: (transfer full): a new [class@Hp.ParamInit]
 *
 * Since: 1.0
 */
HpParamInit *
hp_param_init_copy (HpParamInit *self)
{
  HpParamInit *copy;

  g_return_val_if_fail (HP_IS_PARAM_INIT (self), NULL);

  copy = hp_param_init_new ();
  _hp_name_map_copy (&copy->initializers, &self->initializers);
  return copy;
}
