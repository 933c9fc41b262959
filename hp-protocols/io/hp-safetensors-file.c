/* hp-safetensors-file.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-error.h"
#include "hp-json-private.h"
#include "hp-safetensors-file.h"
#include "hp-safetensors-private.h"
#include "hp-tensor-private.h"

/**
 * HpSafetensorsFile:
 *
 * A file in the [safetensors](https://huggingface.co/docs/safetensors)
 * format, memory-mapped and validated, from which tensors load without
 * reading the whole file.
 *
 * A safetensors file holds an 8-byte little-endian header length N, N
 * bytes of JSON header, and the data buffer. The header maps each tensor
 * name to its `dtype`, `shape` and `data_offsets` (begin and end in the
 * data buffer); an optional `__metadata__` member maps strings to
 * strings. Tensors are stored contiguous, little-endian and row-major.
 *
 * Opening a file validates the whole header, with the rules of the
 * reference implementation: the header length is at least 2, at most
 * 100,000,000 and within the file; the header is strict JSON (no
 * duplicate names) holding an object; each tensor is an object with
 * exactly the fields `dtype` (one of the format's names: `BOOL`, `U8`,
 * `I8`, `F8_E5M2`, `F8_E4M3`, `I16`, `U16`, `F16`, `BF16`, `I32`,
 * `U32`, `F32`, `F64`, `I64`, `U64`), `shape` (non-negative integers)
 * and `data_offsets` (two integers, begin <= end, inside the data
 * buffer, holding exactly the bytes the dtype and shape need); the
 * tensors do not overlap and cover the data buffer without holes or
 * trailing bytes; metadata values are strings. A file that breaks a rule
 * fails with [HP_ERROR_FORMAT][error@Hp.Error] and a message naming the file, the tensor
 * and the field, such as `model.safetensors: tensor 'w': data_offsets
 * [0, 12] hold 12 bytes but dtype F32 and shape [2, 2] need 16`; a file
 * that cannot be read fails with [HP_ERROR_IO][error@Hp.Error].
 *
 * Tensors of dtype `F32`, `F64` and `I64` load as tensors of that dtype
 * over the mapped file, without a copy when their data is aligned (it is
 * in files written by [func@Hp.safetensors_save] and by the reference
 * writer). `BF16` and `F16` tensors load converted to `F32`, exactly.
 * The other dtypes validate but do not load.
 *
 * Tensors share the mapping, which stays valid while any of them or the
 * file object is alive. As with any memory map, the file must not be
 * truncated or rewritten in place meanwhile; [func@Hp.safetensors_save]
 * replaces files with a new file, which is safe.
 *
 * Since: 1.0
 */

typedef struct
{
  HpStDType dtype;
  gint64 *shape;   /* at least one slot, so that a 0-d shape is not NULL */
  guint ndim;
  guint64 begin;   /* in the data buffer */
  guint64 end;
  const gchar *name;  /* the key in entries */
} Entry;

struct _HpSafetensorsFile
{
  GObject parent_instance;

  gchar *path;          /* NULL for a file made from bytes */
  gchar *display_name;  /* the path, or the name given with the bytes */
  GBytes *contents;     /* the whole file */
  gsize data_start;     /* 8 + the header length */
  GHashTable *entries;  /* name -> Entry */
  GHashTable *metadata; /* gchar * -> gchar * */
};

G_DEFINE_FINAL_TYPE (HpSafetensorsFile, hp_safetensors_file, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PATH,
  PROP_N_TENSORS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
entry_free (gpointer data)
{
  Entry *entry = data;

  g_free (entry->shape);
  g_free (entry);
}

static void
hp_safetensors_file_finalize (GObject *object)
{
  HpSafetensorsFile *self = HP_SAFETENSORS_FILE (object);

  g_clear_pointer (&self->entries, g_hash_table_unref);
  g_clear_pointer (&self->metadata, g_hash_table_unref);
  g_clear_pointer (&self->contents, g_bytes_unref);
  g_clear_pointer (&self->path, g_free);
  g_clear_pointer (&self->display_name, g_free);

  G_OBJECT_CLASS (hp_safetensors_file_parent_class)->finalize (object);
}

static void
hp_safetensors_file_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  HpSafetensorsFile *self = HP_SAFETENSORS_FILE (object);

  switch (prop_id)
    {
    case PROP_PATH:
      g_value_set_string (value, self->path);
      break;

    case PROP_N_TENSORS:
      g_value_set_uint (value, g_hash_table_size (self->entries));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_safetensors_file_class_init (HpSafetensorsFileClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_safetensors_file_finalize;
  object_class->get_property = hp_safetensors_file_get_property;

  /**
   * HpSafetensorsFile:path:
   *
   * The path the file was opened from, or %NULL for a file read from
   * bytes.
   *
   * Since: 1.0
   */
  properties[PROP_PATH] =
    g_param_spec_string ("path", NULL, NULL,
                         NULL,
                         (G_PARAM_READABLE |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpSafetensorsFile:n-tensors:
   *
   * The number of tensors in the file.
   *
   * Since: 1.0
   */
  properties[PROP_N_TENSORS] =
    g_param_spec_uint ("n-tensors", NULL, NULL,
                       0, G_MAXUINT, 0,
                       (G_PARAM_READABLE |
                        G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_safetensors_file_init (HpSafetensorsFile *self)
{
  self->entries = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, entry_free);
  self->metadata = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

/* Header validation */

static gboolean
is_nonnegative_int (JsonNode *node,
                    gint64   *value)
{
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  *value = json_node_get_int (node);
  return *value >= 0;
}

static gboolean
parse_dtype (HpSafetensorsFile  *self,
             const gchar        *name,
             JsonNode           *node,
             Entry              *entry,
             GError            **error)
{
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: tensor '%s': dtype is not a string", self->display_name, name);
      return FALSE;
    }
  if (!_hp_st_dtype_from_string (json_node_get_string (node), &entry->dtype))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: tensor '%s': dtype '%s' is not a safetensors dtype",
                   self->display_name, name, json_node_get_string (node));
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_shape (HpSafetensorsFile  *self,
             const gchar        *name,
             JsonNode           *node,
             Entry              *entry,
             GError            **error)
{
  JsonArray *array;

  if (!JSON_NODE_HOLDS_ARRAY (node))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: tensor '%s': shape is not an array", self->display_name, name);
      return FALSE;
    }

  array = json_node_get_array (node);
  entry->ndim = json_array_get_length (array);
  entry->shape = g_new0 (gint64, MAX (entry->ndim, 1));
  for (guint i = 0; i < entry->ndim; i++)
    if (!is_nonnegative_int (json_array_get_element (array, i), &entry->shape[i]))
      {
        g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                     "%s: tensor '%s': shape[%u] is not a non-negative integer",
                     self->display_name, name, i);
        return FALSE;
      }
  return TRUE;
}

static gboolean
parse_offsets (HpSafetensorsFile  *self,
               const gchar        *name,
               JsonNode           *node,
               Entry              *entry,
               GError            **error)
{
  JsonArray *array;
  gint64 offsets[2];

  if (!JSON_NODE_HOLDS_ARRAY (node) || json_array_get_length (json_node_get_array (node)) != 2)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: tensor '%s': data_offsets is not an array of two integers",
                   self->display_name, name);
      return FALSE;
    }

  array = json_node_get_array (node);
  for (guint i = 0; i < 2; i++)
    if (!is_nonnegative_int (json_array_get_element (array, i), &offsets[i]))
      {
        g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                     "%s: tensor '%s': data_offsets[%u] is not a non-negative integer",
                     self->display_name, name, i);
        return FALSE;
      }
  entry->begin = (guint64) offsets[0];
  entry->end = (guint64) offsets[1];
  return TRUE;
}

/* The bytes @entry needs; FALSE if they do not fit in a guint64 */
static gboolean
entry_nbytes (const Entry *entry,
              guint64     *nbytes)
{
  guint64 total = _hp_st_dtype_get_size (entry->dtype);

  for (guint i = 0; i < entry->ndim; i++)
    if (entry->shape[i] == 0)
      {
        *nbytes = 0;
        return TRUE;
      }
  for (guint i = 0; i < entry->ndim; i++)
    if (!g_uint64_checked_mul (&total, total, (guint64) entry->shape[i]))
      return FALSE;
  *nbytes = total;
  return TRUE;
}

static gboolean
check_entry_size (HpSafetensorsFile  *self,
                  const Entry        *entry,
                  guint64             data_length,
                  GError            **error)
{
  guint64 nbytes;
  gboolean fits;
  g_autofree gchar *shape = NULL;

  if (entry->begin > entry->end)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: tensor '%s': data_offsets [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                   "] begin after they end",
                   self->display_name, entry->name, entry->begin, entry->end);
      return FALSE;
    }
  if (entry->end > data_length)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: tensor '%s': data_offsets [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                   "] end past the %" G_GUINT64_FORMAT "-byte data buffer",
                   self->display_name, entry->name, entry->begin, entry->end, data_length);
      return FALSE;
    }

  fits = entry_nbytes (entry, &nbytes);
  if (fits && nbytes == entry->end - entry->begin)
    return TRUE;

  shape = _hp_shape_to_string (entry->shape, entry->ndim);
  if (fits)
    g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                 "%s: tensor '%s': data_offsets [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                 "] hold %" G_GUINT64_FORMAT " bytes but dtype %s and shape %s need %"
                 G_GUINT64_FORMAT,
                 self->display_name, entry->name, entry->begin, entry->end,
                 entry->end - entry->begin, _hp_st_dtype_to_string (entry->dtype), shape,
                 nbytes);
  else
    g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                 "%s: tensor '%s': data_offsets [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                 "] hold %" G_GUINT64_FORMAT " bytes but dtype %s and shape %s need more "
                 "than 2^64",
                 self->display_name, entry->name, entry->begin, entry->end,
                 entry->end - entry->begin, _hp_st_dtype_to_string (entry->dtype), shape);
  return FALSE;
}

static const gchar *const entry_fields[] = { "dtype", "shape", "data_offsets" };

static Entry *
parse_entry (HpSafetensorsFile  *self,
             const gchar        *name,
             JsonNode           *node,
             guint64             data_length,
             GError            **error)
{
  Entry *entry;
  JsonObject *object;
  g_autoptr(GList) members = NULL;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: tensor '%s' is not a JSON object", self->display_name, name);
      return NULL;
    }

  object = json_node_get_object (node);
  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    if (!g_strv_contains (entry_fields, l->data))
      {
        g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                     "%s: tensor '%s' has an unknown field '%s'",
                     self->display_name, name, (const gchar *) l->data);
        return NULL;
      }
  for (guint i = 0; i < G_N_ELEMENTS (entry_fields); i++)
    if (!json_object_has_member (object, entry_fields[i]))
      {
        g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                     "%s: tensor '%s' has no field '%s'",
                     self->display_name, name, entry_fields[i]);
        return NULL;
      }

  entry = g_new0 (Entry, 1);
  entry->name = name;
  if (!parse_dtype (self, name, json_object_get_member (object, "dtype"), entry, error) ||
      !parse_shape (self, name, json_object_get_member (object, "shape"), entry, error) ||
      !parse_offsets (self, name, json_object_get_member (object, "data_offsets"), entry, error) ||
      !check_entry_size (self, entry, data_length, error))
    {
      entry_free (entry);
      return NULL;
    }
  return entry;
}

static gboolean
parse_metadata (HpSafetensorsFile  *self,
                JsonNode           *node,
                GError            **error)
{
  JsonObject *object;
  g_autoptr(GList) members = NULL;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: __metadata__ is not a JSON object", self->display_name);
      return FALSE;
    }

  object = json_node_get_object (node);
  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    {
      const gchar *key = l->data;
      JsonNode *value = json_object_get_member (object, key);

      if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_STRING)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                       "%s: __metadata__ '%s' is not a string", self->display_name, key);
          return FALSE;
        }
      g_hash_table_insert (self->metadata, g_strdup (key), g_strdup (json_node_get_string (value)));
    }
  return TRUE;
}

static gint
compare_by_offsets (gconstpointer a,
                    gconstpointer b)
{
  const Entry *x = *(const Entry * const *) a;
  const Entry *y = *(const Entry * const *) b;

  if (x->begin != y->begin)
    return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end)
    return x->end < y->end ? -1 : 1;
  return strcmp (x->name, y->name);
}

/* The tensors tile the data buffer: no overlap, no hole, nothing after
 * the last one */
static gboolean
check_coverage (HpSafetensorsFile  *self,
                guint64             data_length,
                GError            **error)
{
  g_autoptr(GPtrArray) sorted = g_ptr_array_new ();
  guint64 covered = 0;
  const Entry *last = NULL;
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, self->entries);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (sorted, value);
  g_ptr_array_sort (sorted, compare_by_offsets);
  for (guint i = 0; i < sorted->len; i++)
    {
      const Entry *entry = g_ptr_array_index (sorted, i);

      if (entry->begin < covered)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                       "%s: tensor '%s': data_offsets [%" G_GUINT64_FORMAT ", %"
                       G_GUINT64_FORMAT "] overlap those of tensor '%s', [%" G_GUINT64_FORMAT
                       ", %" G_GUINT64_FORMAT "]",
                       self->display_name, entry->name, entry->begin, entry->end,
                       last->name, last->begin, last->end);
          return FALSE;
        }
      if (entry->begin > covered)
        break;
      /* a tensor that overlaps the next one is the one just before it */
      covered = entry->end;
      last = entry;
    }

  if (covered < data_length)
    {
      guint64 hole_end = data_length;

      for (guint i = 0; i < sorted->len; i++)
        {
          const Entry *entry = g_ptr_array_index (sorted, i);

          if (entry->begin > covered)
            {
              hole_end = entry->begin;
              break;
            }
        }
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: bytes [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                   ") of the %" G_GUINT64_FORMAT "-byte data buffer belong to no tensor",
                   self->display_name, covered, hole_end, data_length);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_header (HpSafetensorsFile  *self,
              GError            **error)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (self->contents, &size);
  guint64 header_length;
  guint64 data_length;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) json_error = NULL;
  g_autoptr(GList) members = NULL;
  JsonObject *object;

  if (size < 8)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: the file has %" G_GSIZE_FORMAT " bytes, too few for the 8-byte "
                   "header length", self->display_name, size);
      return FALSE;
    }

  memcpy (&header_length, data, 8);
  header_length = GUINT64_FROM_LE (header_length);
  if (header_length < 2)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: header length %" G_GUINT64_FORMAT " is less than 2",
                   self->display_name, header_length);
      return FALSE;
    }
  if (header_length > HP_SAFETENSORS_MAX_HEADER_SIZE)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: header length %" G_GUINT64_FORMAT " is more than the limit of %"
                   G_GUINT64_FORMAT " bytes",
                   self->display_name, header_length, HP_SAFETENSORS_MAX_HEADER_SIZE);
      return FALSE;
    }
  if (header_length > size - 8)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: header length %" G_GUINT64_FORMAT " is more than the %"
                   G_GSIZE_FORMAT " bytes after it",
                   self->display_name, header_length, size - 8);
      return FALSE;
    }
  self->data_start = 8 + (gsize) header_length;
  data_length = size - self->data_start;

  root = _hp_json_parse_strict ((const gchar *) data + 8, header_length, &json_error);
  if (root == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: header is %s", self->display_name, json_error->message);
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: header is not a JSON object", self->display_name);
      return FALSE;
    }

  /* in the order of the header, so the first broken tensor is reported */
  object = json_node_get_object (root);
  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    {
      const gchar *name = l->data;
      JsonNode *node = json_object_get_member (object, name);
      Entry *entry;
      gchar *key;

      if (g_str_equal (name, "__metadata__"))
        {
          if (!parse_metadata (self, node, error))
            return FALSE;
          continue;
        }

      key = g_strdup (name);
      entry = parse_entry (self, key, node, data_length, error);
      if (entry == NULL)
        {
          g_free (key);
          return FALSE;
        }
      g_hash_table_insert (self->entries, key, entry);
    }

  return check_coverage (self, data_length, error);
}

static HpSafetensorsFile *
file_new (GBytes       *contents,
          const gchar  *path,
          const gchar  *display_name,
          GError      **error)
{
  g_autoptr(HpSafetensorsFile) self = g_object_new (HP_TYPE_SAFETENSORS_FILE, NULL);

  self->contents = g_bytes_ref (contents);
  self->path = g_strdup (path);
  self->display_name = g_strdup (display_name);
  if (!parse_header (self, error))
    return NULL;
  return g_steal_pointer (&self);
}

/**
 * hp_safetensors_file_new_for_path:
 * @path: (type filename): the path of a safetensors file
 * @error: return location for a [struct@GLib.Error]
 *
 * Maps the file at @path into memory and validates its header (see
 * [class@Hp.SafetensorsFile] for the rules). No tensor data is read.
 *
 * Returns: (transfer full): a new [class@Hp.SafetensorsFile], or %NULL with
 *   [HP_ERROR_IO][error@Hp.Error] if the file cannot be opened or mapped, or
 *   [HP_ERROR_FORMAT][error@Hp.Error] if it is not a valid safetensors file
 *
 * Since: 1.0
 */
HpSafetensorsFile *
hp_safetensors_file_new_for_path (const gchar  *path,
                                  GError      **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GMappedFile) mapped = NULL;
  g_autoptr(GBytes) contents = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_IO,
                   "%s: is a directory, not a safetensors file", path);
      return NULL;
    }

  mapped = g_mapped_file_new (path, FALSE, &local_error);
  if (mapped == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_IO, "%s", local_error->message);
      return NULL;
    }
  contents = g_mapped_file_get_bytes (mapped);
  return file_new (contents, path, path, error);
}

/**
 * hp_safetensors_file_new_from_bytes:
 * @bytes: the contents of a safetensors file
 * @name: (nullable): the name of the data in error messages, or %NULL
 *   for `<bytes>`
 * @error: return location for a [struct@GLib.Error]
 *
 * Validates @bytes as a safetensors file, as
 * [ctor@Hp.SafetensorsFile.new_for_path] does with a file. The tensors it
 * loads share @bytes, which must not change afterwards.
 *
 * Returns: (transfer full): a new [class@Hp.SafetensorsFile], or %NULL with
 *   [HP_ERROR_FORMAT][error@Hp.Error] if @bytes are not a valid safetensors file
 *
 * Since: 1.0
 */
HpSafetensorsFile *
hp_safetensors_file_new_from_bytes (GBytes       *bytes,
                                    const gchar  *name,
                                    GError      **error)
{
  g_return_val_if_fail (bytes != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return file_new (bytes, NULL, name != NULL ? name : "<bytes>", error);
}

/**
 * hp_safetensors_file_get_path:
 * @self: a [class@Hp.SafetensorsFile]
 *
 * Gets the path the file was opened from.
 *
 * Returns: (type filename) (nullable): the path, or %NULL for a file
 *   read from bytes
 *
 * Since: 1.0
 */
const gchar *
hp_safetensors_file_get_path (HpSafetensorsFile *self)
{
  g_return_val_if_fail (HP_IS_SAFETENSORS_FILE (self), NULL);

  return self->path;
}

/**
 * hp_safetensors_file_get_n_tensors:
 * @self: a [class@Hp.SafetensorsFile]
 *
 * Gets the number of tensors in the file.
 *
 * Returns: the number of tensors
 *
 * Since: 1.0
 */
guint
hp_safetensors_file_get_n_tensors (HpSafetensorsFile *self)
{
  g_return_val_if_fail (HP_IS_SAFETENSORS_FILE (self), 0);

  return g_hash_table_size (self->entries);
}

/**
 * hp_safetensors_file_get_names:
 * @self: a [class@Hp.SafetensorsFile]
 *
 * Gets the names of the tensors, sorted by strcmp() (the order of the
 * header does not count).
 *
 * Returns: (transfer full) (array zero-terminated=1): a new
 *   %NULL-terminated array of names
 *
 * Since: 1.0
 */
GStrv
hp_safetensors_file_get_names (HpSafetensorsFile *self)
{
  g_return_val_if_fail (HP_IS_SAFETENSORS_FILE (self), NULL);

  return _hp_safetensors_sorted_keys (self->entries, TRUE, NULL);
}

/**
 * hp_safetensors_file_contains:
 * @self: a [class@Hp.SafetensorsFile]
 * @name: a tensor name
 *
 * Tells whether the file holds a tensor @name.
 *
 * Returns: %TRUE if there is a tensor @name
 *
 * Since: 1.0
 */
gboolean
hp_safetensors_file_contains (HpSafetensorsFile *self,
                              const gchar       *name)
{
  g_return_val_if_fail (HP_IS_SAFETENSORS_FILE (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);

  return g_hash_table_contains (self->entries, name);
}

/**
 * hp_safetensors_file_get_metadata:
 * @self: a [class@Hp.SafetensorsFile]
 *
 * Gets the `__metadata__` of the header.
 *
 * Returns: (transfer none) (element-type utf8 utf8): the metadata keys
 *   and values, empty if the header has none
 *
 * Since: 1.0
 */
GHashTable *
hp_safetensors_file_get_metadata (HpSafetensorsFile *self)
{
  g_return_val_if_fail (HP_IS_SAFETENSORS_FILE (self), NULL);

  return self->metadata;
}

static const Entry *
lookup_entry (HpSafetensorsFile  *self,
              const gchar        *name,
              GError            **error)
{
  const Entry *entry = g_hash_table_lookup (self->entries, name);

  if (entry == NULL)
    g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                 "%s: no tensor '%s'", self->display_name, name);
  return entry;
}

/**
 * hp_safetensors_file_get_dtype:
 * @self: a [class@Hp.SafetensorsFile]
 * @name: a tensor name
 * @error: return location for a [struct@GLib.Error]
 *
 * Gets the dtype of tensor @name as the file stores it, such as `F32`
 * or `BF16` (a tensor loads as [HP_DTYPE_FLOAT32][enum@Hp.DType] for `F32`, `BF16` and
 * `F16`, [HP_DTYPE_FLOAT64][enum@Hp.DType] for `F64` and [HP_DTYPE_INT64][enum@Hp.DType] for `I64`).
 *
 * Returns: (transfer none): the safetensors dtype name, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if the file has no tensor @name
 *
 * Since: 1.0
 */
const gchar *
hp_safetensors_file_get_dtype (HpSafetensorsFile  *self,
                               const gchar        *name,
                               GError            **error)
{
  const Entry *entry;

  g_return_val_if_fail (HP_IS_SAFETENSORS_FILE (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  entry = lookup_entry (self, name, error);
  return entry != NULL ? _hp_st_dtype_to_string (entry->dtype) : NULL;
}

/**
 * hp_safetensors_file_get_shape:
 * @self: a [class@Hp.SafetensorsFile]
 * @name: a tensor name
 * @ndim: (out): return location for the number of dims
 * @error: return location for a [struct@GLib.Error]
 *
 * Gets the shape of tensor @name. The result is not %NULL for a 0-d
 * tensor; @ndim is 0 then.
 *
 * Returns: (transfer none) (array length=ndim): the shape, owned by
 *   @self, or %NULL with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if the file has no
 *   tensor @name
 *
 * Since: 1.0
 */
const gint64 *
hp_safetensors_file_get_shape (HpSafetensorsFile  *self,
                               const gchar        *name,
                               guint              *ndim,
                               GError            **error)
{
  const Entry *entry;

  g_return_val_if_fail (HP_IS_SAFETENSORS_FILE (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (ndim != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  *ndim = 0;
  entry = lookup_entry (self, name, error);
  if (entry == NULL)
    return NULL;
  *ndim = entry->ndim;
  return entry->shape;
}

/* The entry of @name if it loads, and the dtype it loads as */
static const Entry *
lookup_loadable (HpSafetensorsFile  *self,
                 const gchar        *name,
                 HpDType            *dtype,
                 GError            **error)
{
  const Entry *entry = lookup_entry (self, name, error);

  if (entry == NULL)
    return NULL;
  if (!_hp_st_dtype_to_hp (entry->dtype, dtype))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "%s: tensor '%s' has dtype %s, which does not load "
                   "(F32, F64, I64, BF16 and F16 do)",
                   self->display_name, name, _hp_st_dtype_to_string (entry->dtype));
      return NULL;
    }
  if (!_hp_shape_check (entry->shape, entry->ndim, error))
    {
      g_prefix_error (error, "%s: tensor '%s': ", self->display_name, name);
      return NULL;
    }
  return entry;
}

static gboolean
loads_in_place (HpStDType dtype)
{
  return G_BYTE_ORDER == G_LITTLE_ENDIAN &&
    (dtype == HP_ST_DTYPE_F32 || dtype == HP_ST_DTYPE_F64 || dtype == HP_ST_DTYPE_I64);
}

static const guint8 *
entry_data (HpSafetensorsFile *self,
            const Entry       *entry)
{
  return (const guint8 *) g_bytes_get_data (self->contents, NULL) + self->data_start + entry->begin;
}

/**
 * hp_safetensors_file_get_tensor:
 * @self: a [class@Hp.SafetensorsFile]
 * @name: a tensor name
 * @error: return location for a [struct@GLib.Error]
 *
 * Loads tensor @name. An `F32`, `F64` or `I64` tensor shares the mapped
 * file (no copy, when its data is aligned); a `BF16` or `F16` tensor is
 * converted into a new float32 tensor.
 *
 * Returns: (transfer full): the tensor, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if the file has no tensor @name,
 *   [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] if its dtype does not load, or
 *   [HP_ERROR_SHAPE][error@Hp.Error] if its shape is beyond what a [class@Hp.Tensor] holds
 *   (more than [const@Hp.TENSOR_MAX_NDIM] dims)
 *
 * Since: 1.0
 */
HpTensor *
hp_safetensors_file_get_tensor (HpSafetensorsFile  *self,
                                const gchar        *name,
                                GError            **error)
{
  const Entry *entry;
  HpDType dtype;
  HpTensor *tensor;

  g_return_val_if_fail (HP_IS_SAFETENSORS_FILE (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  entry = lookup_loadable (self, name, &dtype, error);
  if (entry == NULL)
    return NULL;

  if (loads_in_place (entry->dtype))
    {
      g_autoptr(GBytes) data = g_bytes_new_from_bytes (self->contents,
                                                       self->data_start + entry->begin,
                                                       entry->end - entry->begin);

      return hp_tensor_new_from_bytes (data, dtype, entry->shape, entry->ndim, error);
    }

  tensor = _hp_tensor_new_uninit (dtype, entry->shape, entry->ndim);
  _hp_st_load_elements (entry->dtype, entry_data (self, entry), _hp_tensor_data (tensor),
                        (gsize) hp_tensor_get_numel (tensor));
  return tensor;
}

/* Whether the block [offsets, offsets + lengths) of @shape is one
 * contiguous run of the row-major data: full in the dims after some dim
 * k and of length 1 in the dims before it */
static gboolean
block_is_contiguous (const gint64 *shape,
                     guint         ndim,
                     const gint64 *lengths)
{
  guint k = ndim;

  while (k > 0 && lengths[k - 1] == shape[k - 1])
    k--;
  /* dims k.. are full; dim k - 1 may be partial; those before must be 1 */
  for (guint d = 0; d + 1 < k; d++)
    if (lengths[d] != 1)
      return FALSE;
  return TRUE;
}

/**
 * hp_safetensors_file_get_tensor_slice:
 * @self: a [class@Hp.SafetensorsFile]
 * @name: a tensor name
 * @offsets: (array length=n_offsets): the first index of the block in
 *   each dim
 * @n_offsets: the number of offsets, the number of dims of the tensor
 * @lengths: (array length=n_lengths): the size of the block in each dim
 * @n_lengths: the number of lengths, the number of dims of the tensor
 * @error: return location for a [struct@GLib.Error]
 *
 * Loads the block of tensor @name that starts at @offsets and has the
 * shape @lengths, reading only that block's data: the way to load the
 * shard of a large tensor that a rank holds. A block that is one
 * contiguous run of an `F32`, `F64` or `I64` tensor (a range of rows,
 * for example) shares the mapped file; other blocks are copied, and
 * `BF16` and `F16` blocks converted to float32.
 *
 * Returns: (transfer full): the block, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if the file has no tensor @name,
 *   [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] if its dtype does not load, or
 *   [HP_ERROR_SHAPE][error@Hp.Error] if the number of offsets or lengths is not the
 *   number of dims or the block reaches outside the tensor
 *
 * Since: 1.0
 */
HpTensor *
hp_safetensors_file_get_tensor_slice (HpSafetensorsFile  *self,
                                      const gchar        *name,
                                      const gint64       *offsets,
                                      guint               n_offsets,
                                      const gint64       *lengths,
                                      guint               n_lengths,
                                      GError            **error)
{
  const Entry *entry;
  HpDType dtype;
  HpTensor *tensor;
  gint64 strides[HP_TENSOR_MAX_NDIM];
  gint64 index[HP_TENSOR_MAX_NDIM] = { 0 };
  gsize src_size;
  gsize dst_size;
  gsize run;
  gsize n_runs;
  guint8 *dst;

  g_return_val_if_fail (HP_IS_SAFETENSORS_FILE (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (offsets != NULL || n_offsets == 0, NULL);
  g_return_val_if_fail (lengths != NULL || n_lengths == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  entry = lookup_loadable (self, name, &dtype, error);
  if (entry == NULL)
    return NULL;

  if (n_offsets != entry->ndim || n_lengths != entry->ndim)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "%s: tensor '%s' has %u dims, but %u offsets and %u lengths were given",
                   self->display_name, name, entry->ndim, n_offsets, n_lengths);
      return NULL;
    }
  for (guint d = 0; d < entry->ndim; d++)
    if (offsets[d] < 0 || lengths[d] < 0 || lengths[d] > entry->shape[d] ||
        offsets[d] > entry->shape[d] - lengths[d])
      {
        g_autofree gchar *shape = _hp_shape_to_string (entry->shape, entry->ndim);

        g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                     "%s: tensor '%s': the block at offset %" G_GINT64_FORMAT
                     " of length %" G_GINT64_FORMAT " in dim %u is outside the shape %s",
                     self->display_name, name, offsets[d], lengths[d], d, shape);
        return NULL;
      }

  /* An empty block needs no data. (The strides of an empty tensor may
   * not even fit in a gint64; those of a non-empty one do, since its
   * data is in the file.) */
  if (_hp_shape_numel (lengths, entry->ndim) == 0)
    return _hp_tensor_new_uninit (dtype, lengths, entry->ndim);

  _hp_shape_strides (entry->shape, entry->ndim, strides);
  src_size = _hp_st_dtype_get_size (entry->dtype);

  if (loads_in_place (entry->dtype) && block_is_contiguous (entry->shape, entry->ndim, lengths))
    {
      gsize first = 0;
      gsize numel = (gsize) _hp_shape_numel (lengths, entry->ndim);
      g_autoptr(GBytes) data = NULL;

      for (guint d = 0; d < entry->ndim; d++)
        first += (gsize) (offsets[d] * strides[d]);
      data = g_bytes_new_from_bytes (self->contents,
                                     self->data_start + entry->begin + first * src_size,
                                     numel * src_size);
      return hp_tensor_new_from_bytes (data, dtype, lengths, entry->ndim, error);
    }

  tensor = _hp_tensor_new_uninit (dtype, lengths, entry->ndim);

  /* Copy run by run: a run is the block's extent in the last dim */
  dst_size = hp_dtype_get_size (dtype);
  run = entry->ndim > 0 ? (gsize) lengths[entry->ndim - 1] : 1;
  n_runs = (gsize) hp_tensor_get_numel (tensor) / run;
  dst = _hp_tensor_data (tensor);
  for (gsize r = 0; r < n_runs; r++)
    {
      gsize first = 0;

      for (guint d = 0; d < entry->ndim; d++)
        first += (gsize) ((offsets[d] + index[d]) * strides[d]);
      _hp_st_load_elements (entry->dtype, entry_data (self, entry) + first * src_size,
                            dst + r * run * dst_size, run);

      /* next index over the dims before the last */
      for (gint d = (gint) entry->ndim - 2; d >= 0; d--)
        {
          if (++index[d] < lengths[d])
            break;
          index[d] = 0;
        }
    }
  return tensor;
}
