/* hp-name-map.c: an ordered map from names to objects
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-error.h"
#include "hp-name-map-private.h"

void
_hp_name_map_init (HpNameMap *map)
{
  map->names = g_ptr_array_new_with_free_func (g_free);
  map->values = g_ptr_array_new_with_free_func (g_object_unref);
}

void
_hp_name_map_clear (HpNameMap *map)
{
  g_clear_pointer (&map->names, g_ptr_array_unref);
  g_clear_pointer (&map->values, g_ptr_array_unref);
}

void
_hp_name_map_copy (HpNameMap       *dst,
                   const HpNameMap *src)
{
  for (guint i = 0; i < src->names->len; i++)
    {
      g_ptr_array_add (dst->names, g_strdup (g_ptr_array_index (src->names, i)));
      g_ptr_array_add (dst->values, g_object_ref (g_ptr_array_index (src->values, i)));
    }
}

gboolean
_hp_name_map_find (const HpNameMap *map,
                   const gchar     *name,
                   guint           *index)
{
  for (guint i = 0; i < map->names->len; i++)
    if (g_str_equal (g_ptr_array_index (map->names, i), name))
      {
        *index = i;
        return TRUE;
      }
  return FALSE;
}

gpointer
_hp_name_map_lookup (const HpNameMap *map,
                     const gchar     *name)
{
  guint index;

  if (!_hp_name_map_find (map, name, &index))
    return NULL;
  return g_ptr_array_index (map->values, index);
}

gboolean
_hp_name_map_set (HpNameMap   *map,
                  const gchar *name,
                  gpointer     value,
                  GEqualFunc   equal)
{
  gpointer old;
  guint index;

  if (!_hp_name_map_find (map, name, &index))
    {
      if (value == NULL)
        return FALSE;
      g_ptr_array_add (map->names, g_strdup (name));
      g_ptr_array_add (map->values, g_object_ref (value));
      return TRUE;
    }

  if (value == NULL)
    {
      g_ptr_array_remove_index (map->names, index);
      g_ptr_array_remove_index (map->values, index);
      return TRUE;
    }

  old = g_ptr_array_index (map->values, index);
  if (old == value || (equal != NULL && equal (old, value)))
    return FALSE;
  g_ptr_array_index (map->values, index) = g_object_ref (value);
  g_object_unref (old);
  return TRUE;
}

GStrv
_hp_name_map_dup_names (const HpNameMap *map)
{
  GStrv out = g_new0 (gchar *, map->names->len + 1);

  for (guint i = 0; i < map->names->len; i++)
    out[i] = g_strdup (g_ptr_array_index (map->names, i));
  return out;
}

gboolean
_hp_name_map_equal (const HpNameMap *a,
                    const HpNameMap *b,
                    GEqualFunc       equal)
{
  if (a->names->len != b->names->len)
    return FALSE;

  for (guint i = 0; i < a->names->len; i++)
    {
      gpointer theirs = _hp_name_map_lookup (b, g_ptr_array_index (a->names, i));

      if (theirs == NULL || !equal (g_ptr_array_index (a->values, i), theirs))
        return FALSE;
    }
  return TRUE;
}

static gboolean
is_name_char (gchar c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-' || c == '.';
}

gboolean
_hp_name_map_parse_entry (HpNameMap              *map,
                          const HpNameMapSyntax  *syntax,
                          const gchar            *text,
                          gchar                  *entry,
                          GError                **error)
{
  g_autofree gchar *quoted = g_strdup (entry);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GObject) value = NULL;
  gchar *separator = strchr (entry, syntax->separator);
  gchar *name;
  guint index;

  if (separator == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "cannot parse %s '%s': entry '%s' is not %s",
                   syntax->map_kind, text, quoted, syntax->entry_form);
      return FALSE;
    }

  *separator = '\0';
  name = g_strstrip (entry);
  if (*name == '\0')
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "cannot parse %s '%s': entry '%s' has an empty %s name",
                   syntax->map_kind, text, quoted, syntax->name_kind);
      return FALSE;
    }
  for (const gchar *p = name; *p != '\0'; p++)
    if (!is_name_char (*p))
      {
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "cannot parse %s '%s': entry '%s' has an invalid %s "
                     "name '%s' (letters, digits, '_', '-' and '.' only)",
                     syntax->map_kind, text, quoted, syntax->name_kind, name);
        return FALSE;
      }
  if (_hp_name_map_find (map, name, &index))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "cannot parse %s '%s': entry '%s' repeats %s '%s'",
                   syntax->map_kind, text, quoted, syntax->name_kind, name);
      return FALSE;
    }

  value = syntax->parse (separator + 1, &local_error);
  if (value == NULL)
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                  "cannot parse %s '%s': entry '%s': ",
                                  syntax->map_kind, text, quoted);
      return FALSE;
    }

  g_ptr_array_add (map->names, g_strdup (name));
  g_ptr_array_add (map->values, g_steal_pointer (&value));
  return TRUE;
}
