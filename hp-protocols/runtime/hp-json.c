/* hp-json.c: strict JSON for every reader of JSON text in the library
 * (safetensors headers and indexes, configurations)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * json-glib reads more than JSON: comments, single quotes, hex numbers
 * and unquoted names; it wraps integers beyond 64 bits, decodes lone
 * surrogate escapes into strings that are not UTF-8, keeps the last of
 * two members of one name and reads only the first of two documents.
 * _hp_json_parse_strict() checks the grammar first with a scanner of
 * its own, then lets json-glib build the tree and watches it for
 * duplicate members.
 */

#include "config.h"

#include <string.h>

#include "hp-error.h"
#include "hp-json-private.h"

typedef enum
{
  EXPECT_VALUE,
  EXPECT_VALUE_OR_CLOSE,   /* after '[' */
  EXPECT_KEY,              /* after ',' in an object */
  EXPECT_KEY_OR_CLOSE,     /* after '{' */
  EXPECT_COLON,
  EXPECT_COMMA_OR_CLOSE,   /* after a value */
} JsonState;

typedef struct
{
  const gchar *data;
  gsize length;
  gsize pos;
  GError **error;
} JsonScan;

static gboolean G_GNUC_PRINTF (3, 4)
scan_fail (JsonScan    *scan,
           gsize        at,
           const gchar *format,
           ...)
{
  g_autofree gchar *what = NULL;
  va_list args;

  va_start (args, format);
  what = g_strdup_vprintf (format, args);
  va_end (args);

  g_set_error (scan->error, HP_ERROR, HP_ERROR_FORMAT,
               "not valid JSON: %s at byte %" G_GSIZE_FORMAT, what, at);
  return FALSE;
}

static gboolean
scan_unexpected (JsonScan *scan)
{
  guchar c = (guchar) scan->data[scan->pos];

  if (c > 0x20 && c < 0x7f)
    return scan_fail (scan, scan->pos, "unexpected character '%c'", c);
  return scan_fail (scan, scan->pos, "unexpected byte 0x%02x", c);
}

static gint
hex_digit (gchar c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Reads the 4 hex digits after "\u" at @at; -1 if they are not there */
static gint
read_hex4 (JsonScan *scan,
           gsize     at)
{
  gint value = 0;

  if (at + 4 > scan->length)
    return -1;
  for (gsize i = at; i < at + 4; i++)
    {
      gint digit = hex_digit (scan->data[i]);

      if (digit < 0)
        return -1;
      value = value * 16 + digit;
    }
  return value;
}

static gboolean
scan_string (JsonScan *scan)
{
  gsize start = scan->pos;

  scan->pos++;
  while (scan->pos < scan->length)
    {
      guchar c = (guchar) scan->data[scan->pos];
      gsize at = scan->pos;
      gint unit;

      if (c == '"')
        {
          scan->pos++;
          return TRUE;
        }
      if (c < 0x20)
        return scan_fail (scan, at, "control character 0x%02x in a string", c);
      if (c != '\\')
        {
          scan->pos++;
          continue;
        }

      if (at + 1 >= scan->length)
        break;
      c = (guchar) scan->data[at + 1];
      if (strchr ("\"\\/bfnrt", c) != NULL && c != '\0')
        {
          scan->pos = at + 2;
          continue;
        }
      if (c != 'u')
        return scan_fail (scan, at, "bad escape in a string");

      unit = read_hex4 (scan, at + 2);
      if (unit < 0)
        return scan_fail (scan, at, "bad \\u escape in a string");
      if (unit == 0)
        return scan_fail (scan, at, "\\u0000 in a string");
      scan->pos = at + 6;
      if (unit >= 0xdc00 && unit <= 0xdfff)
        return scan_fail (scan, at, "unpaired surrogate \\u%04x in a string", unit);
      if (unit >= 0xd800 && unit <= 0xdbff)
        {
          gint low = -1;

          if (scan->pos + 1 < scan->length && scan->data[scan->pos] == '\\' &&
              scan->data[scan->pos + 1] == 'u')
            low = read_hex4 (scan, scan->pos + 2);
          if (low < 0xdc00 || low > 0xdfff)
            return scan_fail (scan, at, "unpaired surrogate \\u%04x in a string", unit);
          scan->pos += 6;
        }
    }

  return scan_fail (scan, start, "unterminated string");
}

static gboolean
is_digit (JsonScan *scan,
          gsize     at)
{
  return at < scan->length && g_ascii_isdigit (scan->data[at]);
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, and an integer (no
 * fraction or exponent) must fit in a gint64 */
static gboolean
scan_number (JsonScan *scan)
{
  gsize start = scan->pos;
  gboolean negative = FALSE;
  gboolean integer = TRUE;
  guint64 magnitude = 0;
  gboolean overflow = FALSE;
  gsize p = scan->pos;

  if (scan->data[p] == '-')
    {
      negative = TRUE;
      p++;
    }
  if (!is_digit (scan, p))
    return scan_fail (scan, start, "bad number");
  if (scan->data[p] == '0' && is_digit (scan, p + 1))
    return scan_fail (scan, start, "number with a leading zero");

  for (; is_digit (scan, p); p++)
    {
      guint digit = (guint) (scan->data[p] - '0');

      if (magnitude > (G_MAXUINT64 - digit) / 10)
        overflow = TRUE;
      else
        magnitude = magnitude * 10 + digit;
    }

  if (p < scan->length && scan->data[p] == '.')
    {
      integer = FALSE;
      p++;
      if (!is_digit (scan, p))
        return scan_fail (scan, start, "bad number");
      while (is_digit (scan, p))
        p++;
    }
  if (p < scan->length && (scan->data[p] == 'e' || scan->data[p] == 'E'))
    {
      integer = FALSE;
      p++;
      if (p < scan->length && (scan->data[p] == '+' || scan->data[p] == '-'))
        p++;
      if (!is_digit (scan, p))
        return scan_fail (scan, start, "bad number");
      while (is_digit (scan, p))
        p++;
    }

  if (integer &&
      (overflow || magnitude > (guint64) G_MAXINT64 + (negative ? 1 : 0)))
    return scan_fail (scan, start, "integer out of the 64-bit range");

  scan->pos = p;
  return TRUE;
}

static gboolean
scan_literal (JsonScan *scan)
{
  static const gchar *const literals[] = { "true", "false", "null" };

  for (guint i = 0; i < G_N_ELEMENTS (literals); i++)
    {
      gsize len = strlen (literals[i]);

      if (scan->length - scan->pos >= len &&
          memcmp (scan->data + scan->pos, literals[i], len) == 0)
        {
          scan->pos += len;
          return TRUE;
        }
    }
  return scan_unexpected (scan);
}

/* Checks the grammar of JSON text; json-glib accepts more (comments,
 * single quotes, hex numbers) and wraps integers silently */
static gboolean
check_json_syntax (const gchar  *data,
                   gsize         length,
                   GError      **error)
{
  JsonScan scan = { data, length, 0, error };
  gchar stack[HP_JSON_MAX_DEPTH];
  guint depth = 0;
  JsonState state = EXPECT_VALUE;

  for (;;)
    {
      gboolean ok;
      gchar c;

      while (scan.pos < length && strchr (" \t\n\r", data[scan.pos]) != NULL &&
             data[scan.pos] != '\0')
        scan.pos++;
      if (scan.pos >= length)
        break;

      c = data[scan.pos];
      switch (state)
        {
        case EXPECT_VALUE_OR_CLOSE:
          if (c == ']')
            {
              depth--;
              scan.pos++;
              state = EXPECT_COMMA_OR_CLOSE;
              break;
            }
          G_GNUC_FALLTHROUGH;
        case EXPECT_VALUE:
          if (c == '{' || c == '[')
            {
              if (depth == HP_JSON_MAX_DEPTH)
                return scan_fail (&scan, scan.pos, "nested deeper than %d levels",
                                  HP_JSON_MAX_DEPTH);
              stack[depth++] = c;
              scan.pos++;
              state = c == '{' ? EXPECT_KEY_OR_CLOSE : EXPECT_VALUE_OR_CLOSE;
              break;
            }
          if (c == '"')
            ok = scan_string (&scan);
          else if (c == '-' || g_ascii_isdigit (c))
            ok = scan_number (&scan);
          else
            ok = scan_literal (&scan);
          if (!ok)
            return FALSE;
          state = EXPECT_COMMA_OR_CLOSE;
          break;

        case EXPECT_KEY_OR_CLOSE:
          if (c == '}')
            {
              depth--;
              scan.pos++;
              state = EXPECT_COMMA_OR_CLOSE;
              break;
            }
          G_GNUC_FALLTHROUGH;
        case EXPECT_KEY:
          if (c != '"')
            return scan_unexpected (&scan);
          if (!scan_string (&scan))
            return FALSE;
          state = EXPECT_COLON;
          break;

        case EXPECT_COLON:
          if (c != ':')
            return scan_unexpected (&scan);
          scan.pos++;
          state = EXPECT_VALUE;
          break;

        case EXPECT_COMMA_OR_CLOSE:
        default:
          if (depth == 0)
            return scan_fail (&scan, scan.pos, "data after the JSON value");
          if (c == ',')
            state = stack[depth - 1] == '{' ? EXPECT_KEY : EXPECT_VALUE;
          else if ((c == '}' && stack[depth - 1] == '{') || (c == ']' && stack[depth - 1] == '['))
            depth--;
          else
            return scan_unexpected (&scan);
          scan.pos++;
          break;
        }
    }

  if (depth == 0 && state == EXPECT_VALUE)
    return scan_fail (&scan, length, "no value");
  if (depth > 0 || state != EXPECT_COMMA_OR_CLOSE)
    return scan_fail (&scan, length, "unexpected end");
  return TRUE;
}

typedef struct
{
  GHashTable *counts;   /* JsonObject * -> members parsed so far */
  gchar *duplicate;     /* the first name seen twice in one object */
} MemberCheck;

static void
on_object_member (JsonParser  *parser,
                  JsonObject  *object,
                  const gchar *member_name,
                  MemberCheck *check)
{
  guint count = GPOINTER_TO_UINT (g_hash_table_lookup (check->counts, object)) + 1;

  g_hash_table_insert (check->counts, object, GUINT_TO_POINTER (count));
  /* json-glib replaces a member parsed twice, so the object is smaller
   * than the number of members parsed into it */
  if (check->duplicate == NULL && json_object_get_size (object) != count)
    check->duplicate = g_strdup (member_name);
}

JsonNode *
_hp_json_parse_strict (const gchar  *data,
                       gsize         length,
                       GError      **error)
{
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(GError) json_error = NULL;
  const gchar *end = NULL;
  MemberCheck check = { NULL, NULL };
  JsonNode *root;

  if (length > G_MAXSSIZE || !g_utf8_validate_len (data, length, &end))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "not valid UTF-8 at byte %" G_GSIZE_FORMAT,
                   (gsize) (end != NULL ? end - data : 0));
      return NULL;
    }
  if (!check_json_syntax (data, length, error))
    return NULL;

  parser = json_parser_new_immutable ();
  check.counts = g_hash_table_new (NULL, NULL);
  g_signal_connect (parser, "object-member", G_CALLBACK (on_object_member), &check);
  if (!json_parser_load_from_data (parser, data, (gssize) length, &json_error))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "not valid JSON: %s", json_error->message);
      g_hash_table_unref (check.counts);
      return NULL;
    }
  g_hash_table_unref (check.counts);

  if (check.duplicate != NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "not valid JSON: member '%s' appears twice in one object",
                   check.duplicate);
      g_free (check.duplicate);
      return NULL;
    }

  root = json_parser_get_root (parser);
  return root != NULL ? json_node_ref (root) : NULL;
}
