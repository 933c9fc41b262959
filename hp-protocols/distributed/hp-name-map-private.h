/* hp-name-map-private.h: an ordered map from names to objects, the
 * storage of HpNamedPlacement, HpParamInit and the entries of
 * HpShardingConfig
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Entries keep the order in which their names were first set; setting a
 * name again replaces its value in place. Lookups are linear: the maps
 * hold a handful of entries (mesh axes, parameters of one module).
 */

#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

typedef struct
{
  GPtrArray *names;   /* gchar *, in insertion order */
  GPtrArray *values;  /* GObject *, one per name */
} HpNameMap;

void      _hp_name_map_init        (HpNameMap        *map);
void      _hp_name_map_clear       (HpNameMap        *map);
/* Appends the entries of @src to @dst, sharing the values */
void      _hp_name_map_copy        (HpNameMap        *dst,
                                    const HpNameMap  *src);

gboolean  _hp_name_map_find        (const HpNameMap  *map,
                                    const gchar      *name,
                                    guint            *index);
gpointer  _hp_name_map_lookup      (const HpNameMap  *map,
                                    const gchar      *name);
/* Adds, replaces or (a NULL @value) removes the entry of @name. Returns
 * whether the map changed: replacing a value by itself or, with @equal,
 * by an equal value changes nothing. */
gboolean  _hp_name_map_set         (HpNameMap        *map,
                                    const gchar      *name,
                                    gpointer          value,
                                    GEqualFunc        equal);
GStrv     _hp_name_map_dup_names   (const HpNameMap  *map);
/* The same names with @equal values, in any order */
gboolean  _hp_name_map_equal       (const HpNameMap  *a,
                                    const HpNameMap  *b,
                                    GEqualFunc        equal);

/* The text form of the maps that have one: entries such as `tp:S(0)`
 * (HpNamedPlacement) or `weight=normal(std=0.02)` (HpParamInit) */
typedef GObject *(*HpNameMapParseFunc) (const gchar  *text,
                                        GError      **error);
typedef struct
{
  const gchar *map_kind;     /* "named placement" */
  gchar separator;           /* ':' */
  const gchar *entry_form;   /* "axis:placement" */
  const gchar *name_kind;    /* "axis" */
  HpNameMapParseFunc parse;  /* reads the text after the separator */
} HpNameMapSyntax;

/* Reads one stripped, non-empty @entry of the map text @text into @map:
 * names are letters, digits, '_', '-' and '.'; a name given twice, or
 * a value that does not parse, is an error naming @text and @entry
 * (HP_ERROR_INVALID_ARGUMENT). @entry is changed. */
gboolean  _hp_name_map_parse_entry (HpNameMap              *map,
                                    const HpNameMapSyntax  *syntax,
                                    const gchar            *text,
                                    gchar                  *entry,
                                    GError                **error);

G_END_DECLS
