/* hp-json-private.h: the strict JSON parser every reader of JSON text
 * in the library uses (hp-json.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* JSON nesting the strict parser accepts (objects and arrays); a
 * safetensors header needs 3, a configuration one level per nested
 * configuration, list and map */
#define HP_JSON_MAX_DEPTH 64

/* Parses @length bytes of strict JSON: UTF-8 text of exactly one value
 * as RFC 8259 describes it (no comments, single quotes, hex numbers,
 * unquoted names or trailing data); integers within gint64; no
 * duplicate member names in one object; no \u0000 and no unpaired
 * surrogate escape in strings; at most HP_JSON_MAX_DEPTH levels.
 * json-glib alone accepts all of these. Returns the root, or NULL with
 * %HP_ERROR_FORMAT and a message such as "not valid JSON: unexpected
 * character '/' at byte 12" or "not valid UTF-8 at byte 3". */
JsonNode  *_hp_json_parse_strict (const gchar  *data,
                                  gsize         length,
                                  GError      **error);

G_END_DECLS
