/* hp-safetensors.c: loading and saving state dicts as safetensors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "hp-dtensor.h"
#include "hp-enum-private.h"
#include "hp-error-private.h"
#include "hp-error.h"
#include "hp-io-enum-types.h"
#include "hp-safetensors.h"
#include "hp-safetensors-checkpoint.h"
#include "hp-safetensors-private.h"

/* A tensor to write, and where its data goes in its file */
typedef struct
{
  const gchar *name;
  HpTensor *tensor;
  HpStDType dtype;
  gsize elem_size;
  guint64 nbytes;
  guint64 begin;
} Item;

/**
 * hp_safetensors_load:
 * @path: (type filename): a checkpoint directory, an index file or a
 *   safetensors file, as [ctor@Hp.SafetensorsCheckpoint.new_for_path] takes
 * @error: return location for a [struct@GLib.Error]
 *
 * Loads every tensor of a checkpoint into a state dict, names sorted by
 * strcmp(). `F32`, `F64` and `I64` tensors share the mapped files;
 * `BF16` and `F16` tensors are converted to float32. To load only some
 * tensors, or blocks of them, use [class@Hp.SafetensorsCheckpoint].
 *
 * Returns: (transfer full): a new [class@Hp.StateDict], or %NULL with an error
 *   of [ctor@Hp.SafetensorsCheckpoint.new_for_path] or
 *   [method@Hp.SafetensorsFile.get_tensor]
 *
 * Since: 1.0
 */
HpStateDict *
hp_safetensors_load (const gchar  *path,
                     GError      **error)
{
  g_autoptr(HpSafetensorsCheckpoint) checkpoint = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  checkpoint = hp_safetensors_checkpoint_new_for_path (path, error);
  if (checkpoint == NULL)
    return NULL;
  return hp_safetensors_checkpoint_to_state_dict (checkpoint, error);
}

/* The tensors of @state_dict as items to write in @dtype, in its
 * order, if they can be written */
static GArray *
collect_items (HpStateDict         *state_dict,
               HpSafetensorsDType   dtype,
               const gchar         *path,
               GError             **error)
{
  guint n = hp_state_dict_get_size (state_dict);
  g_autoptr(GArray) items = g_array_sized_new (FALSE, TRUE, sizeof (Item), n);

  for (guint i = 0; i < n; i++)
    {
      Item item = { 0 };

      item.name = hp_state_dict_get_name (state_dict, i);
      item.tensor = hp_state_dict_get_tensor (state_dict, i);
      if (g_str_equal (item.name, "__metadata__"))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "%s: the name '__metadata__' is reserved for the metadata, "
                       "not a tensor", path);
          return NULL;
        }
      if (HP_IS_DTENSOR (item.tensor))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                       "%s: tensor '%s' is a DTensor; save its full tensor "
                       "(hp_dtensor_full_tensor()) or its local tensor", path, item.name);
          return NULL;
        }
      item.dtype = _hp_st_dtype_for_save (dtype, hp_tensor_get_dtype (item.tensor));
      item.elem_size = _hp_st_dtype_get_size (item.dtype);
      item.nbytes = (guint64) hp_tensor_get_numel (item.tensor) * item.elem_size;
      g_array_append_val (items, item);
    }
  return g_steal_pointer (&items);
}

gboolean
_hp_safetensors_check_state_dict (HpStateDict  *state_dict,
                                  const gchar  *path,
                                  GError      **error)
{
  g_autoptr(GArray) items = collect_items (state_dict, HP_SAFETENSORS_DTYPE_AS_IS, path, error);

  return items != NULL;
}

/* The reference writer's order: larger elements first, then by name, so
 * that every tensor's data is aligned to its element size */
static gint
compare_for_layout (gconstpointer a,
                    gconstpointer b)
{
  const Item *x = *(const Item * const *) a;
  const Item *y = *(const Item * const *) b;

  if (x->elem_size != y->elem_size)
    return x->elem_size > y->elem_size ? -1 : 1;
  return strcmp (x->name, y->name);
}

static gint
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* The keys of @table (not copies), sorted, NULL-terminated */
static const gchar **
sorted_keys (GHashTable *table,
             guint      *n)
{
  const gchar **keys = (const gchar **) g_hash_table_get_keys_as_array (table, n);

  qsort (keys, *n, sizeof (gchar *), compare_strings);
  return keys;
}

static void
add_metadata_members (JsonBuilder *builder,
                      GHashTable  *metadata)
{
  guint n;
  g_autofree const gchar **keys = sorted_keys (metadata, &n);

  for (guint i = 0; i < n; i++)
    {
      json_builder_set_member_name (builder, keys[i]);
      json_builder_add_string_value (builder, g_hash_table_lookup (metadata, keys[i]));
    }
}

static gchar *
generate_json (JsonBuilder *builder,
               gboolean     pretty,
               gsize       *length)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = json_builder_get_root (builder);

  json_generator_set_root (generator, root);
  json_generator_set_pretty (generator, pretty);
  json_generator_set_indent (generator, 2);
  return json_generator_to_data (generator, length);
}

/* The header of @layout (items in file order, offsets set), padded with
 * spaces to a multiple of 8 bytes as the reference writer does, so the
 * data buffer starts 8-byte aligned */
static GString *
build_header (GPtrArray  *layout,
              GHashTable *metadata)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autofree gchar *json = NULL;
  gsize length;
  GString *header;

  json_builder_begin_object (builder);
  if (metadata != NULL && g_hash_table_size (metadata) > 0)
    {
      json_builder_set_member_name (builder, "__metadata__");
      json_builder_begin_object (builder);
      add_metadata_members (builder, metadata);
      json_builder_end_object (builder);
    }
  for (guint i = 0; i < layout->len; i++)
    {
      const Item *item = g_ptr_array_index (layout, i);
      guint ndim;
      const gint64 *shape = hp_tensor_get_shape (item->tensor, &ndim);

      json_builder_set_member_name (builder, item->name);
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "dtype");
      json_builder_add_string_value (builder, _hp_st_dtype_to_string (item->dtype));
      json_builder_set_member_name (builder, "shape");
      json_builder_begin_array (builder);
      for (guint d = 0; d < ndim; d++)
        json_builder_add_int_value (builder, shape[d]);
      json_builder_end_array (builder);
      json_builder_set_member_name (builder, "data_offsets");
      json_builder_begin_array (builder);
      json_builder_add_int_value (builder, (gint64) item->begin);
      json_builder_add_int_value (builder, (gint64) (item->begin + item->nbytes));
      json_builder_end_array (builder);
      json_builder_end_object (builder);
    }
  json_builder_end_object (builder);

  json = generate_json (builder, FALSE, &length);
  header = g_string_new_len (json, (gssize) length);
  while (header->len % 8 != 0)
    g_string_append_c (header, ' ');
  return header;
}

static gboolean
write_all (FILE          *out,
           gconstpointer  data,
           gsize          size)
{
  return size == 0 || fwrite (data, 1, size, out) == size;
}

static gboolean
write_tensor (FILE       *out,
              const Item *item)
{
  g_autoptr(GBytes) bytes = hp_tensor_get_bytes (item->tensor);
  HpDType from = hp_tensor_get_dtype (item->tensor);
  gsize size;
  gconstpointer data = g_bytes_get_data (bytes, &size);
  g_autofree guint8 *converted = NULL;

  if (G_BYTE_ORDER == G_LITTLE_ENDIAN &&
      item->dtype == _hp_st_dtype_for_save (HP_SAFETENSORS_DTYPE_AS_IS, from))
    return write_all (out, data, size);

  converted = g_malloc (item->nbytes);
  _hp_st_store_elements (from, item->dtype, data, converted, size / hp_dtype_get_size (from));
  return write_all (out, converted, item->nbytes);
}

/* Opens a new file next to @path, under a temporary name (*@tmp_path) */
static FILE *
open_temp (const gchar  *path,
           gchar       **tmp_path,
           GError      **error)
{
  g_autofree gchar *tmp = g_strdup_printf ("%s.XXXXXX", path);
  FILE *out;
  gint fd;
  int saved_errno;

  fd = g_mkstemp_full (tmp, O_WRONLY, 0666);
  if (fd < 0)
    {
      saved_errno = errno;
      g_set_error (error, HP_ERROR, HP_ERROR_IO, "%s: cannot write: %s",
                   path, g_strerror (saved_errno));
      return NULL;
    }
  out = fdopen (fd, "wb");
  if (out == NULL)
    {
      saved_errno = errno;
      g_close (fd, NULL);
      g_unlink (tmp);
      g_set_error (error, HP_ERROR, HP_ERROR_IO, "%s: cannot write: %s",
                   path, g_strerror (saved_errno));
      return NULL;
    }
  *tmp_path = g_steal_pointer (&tmp);
  return out;
}

/* Closes @out, the temporary file @tmp_path for @path, after writes that
 * went well if @ok (else @saved_errno says why); removes it on failure */
static gboolean
close_temp (FILE         *out,
            const gchar  *path,
            const gchar  *tmp_path,
            gboolean      ok,
            int           saved_errno,
            GError      **error)
{
  if (fclose (out) != 0 && ok)
    {
      ok = FALSE;
      saved_errno = errno;
    }
  if (!ok)
    {
      g_unlink (tmp_path);
      g_set_error (error, HP_ERROR, HP_ERROR_IO, "%s: cannot write: %s",
                   path, g_strerror (saved_errno));
    }
  return ok;
}

/* Moves the complete temporary file @tmp_path to @path, or removes it */
static gboolean
commit_temp (const gchar  *tmp_path,
             const gchar  *path,
             GError      **error)
{
  int saved_errno;

  if (g_rename (tmp_path, path) == 0)
    return TRUE;
  saved_errno = errno;
  g_unlink (tmp_path);
  g_set_error (error, HP_ERROR, HP_ERROR_IO, "%s: cannot write: %s",
               path, g_strerror (saved_errno));
  return FALSE;
}

/* Writes the safetensors file of @items for @path under a temporary name
 * next to it (*@tmp_path), leaving @path as it is */
static gboolean
write_temp_file (const gchar  *path,
                 GPtrArray    *items,
                 GHashTable   *metadata,
                 gchar       **tmp_path,
                 GError      **error)
{
  g_autoptr(GPtrArray) layout = g_ptr_array_copy (items, NULL, NULL);
  g_autoptr(GString) header = NULL;
  g_autofree gchar *tmp = NULL;
  guint64 begin = 0;
  guint64 header_length;
  FILE *out;
  gboolean ok;

  g_ptr_array_sort (layout, compare_for_layout);
  for (guint i = 0; i < layout->len; i++)
    {
      Item *item = g_ptr_array_index (layout, i);

      item->begin = begin;
      begin += item->nbytes;
    }
  header = build_header (layout, metadata);
  header_length = GUINT64_TO_LE ((guint64) header->len);

  out = open_temp (path, &tmp, error);
  if (out == NULL)
    return FALSE;
  ok = write_all (out, &header_length, 8) && write_all (out, header->str, header->len);
  for (guint i = 0; ok && i < layout->len; i++)
    ok = write_tensor (out, g_ptr_array_index (layout, i));
  if (!close_temp (out, path, tmp, ok, errno, error))
    return FALSE;
  *tmp_path = g_steal_pointer (&tmp);
  return TRUE;
}

/* The free function of a list of temporary files: removes the file */
static void
remove_temp (gpointer tmp_path)
{
  if (tmp_path != NULL)
    g_unlink (tmp_path);
  g_free (tmp_path);
}

/* Writes a file through a temporary file next to it, renamed over @path
 * once complete, so that @path is either untouched or complete */
static gboolean
write_file (const gchar  *path,
            GPtrArray    *items,
            GHashTable   *metadata,
            GError      **error)
{
  g_autofree gchar *tmp_path = NULL;

  return write_temp_file (path, items, metadata, &tmp_path, error) &&
         commit_temp (tmp_path, path, error);
}

/**
 * hp_safetensors_dtype_from_string:
 * @name: the nick of a [enum@Hp.SafetensorsDType]: `as-is`, `bf16`,
 *   `f16`, `f32` or `f64`
 * @dtype: (out): return location for the element type
 * @error: return location for a [struct@GLib.Error]
 *
 * Parses the name of an element type to save in, as a command line
 * gives it (`hp-train --save-dtype bf16`).
 *
 * Returns: %TRUE on success; %FALSE with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for another name, which
 *   the message lists the names for
 *
 * Since: 1.0
 */
gboolean
hp_safetensors_dtype_from_string (const gchar         *name,
                                  HpSafetensorsDType  *dtype,
                                  GError             **error)
{
  gint value;

  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (dtype != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!_hp_error_check_utf8 (name, "safetensors dtype", HP_ERROR_INVALID_ARGUMENT, error))
    return FALSE;
  if (!_hp_enum_from_nick (HP_TYPE_SAFETENSORS_DTYPE, name, &value))
    {
      g_autofree gchar *nicks = _hp_enum_list_nicks (HP_TYPE_SAFETENSORS_DTYPE);

      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "unknown safetensors dtype '%s' (expected one of %s)", name, nicks);
      return FALSE;
    }
  *dtype = value;
  return TRUE;
}

/**
 * hp_safetensors_save:
 * @state_dict: the tensors to save
 * @metadata: (nullable) (element-type utf8 utf8): the `__metadata__`
 *   keys and values, or %NULL for none
 * @path: (type filename): the file to write
 * @error: return location for a [struct@GLib.Error]
 *
 * Writes @state_dict as a safetensors file, each tensor in its own
 * dtype (`F32`, `F64` or `I64`): [func@Hp.safetensors_save_with_dtype]
 * with [HP_SAFETENSORS_DTYPE_AS_IS][enum@Hp.SafetensorsDType].
 *
 * Returns: %TRUE on success; %FALSE with an error of
 *   [func@Hp.safetensors_save_with_dtype]
 *
 * Since: 1.0
 */
gboolean
hp_safetensors_save (HpStateDict  *state_dict,
                     GHashTable   *metadata,
                     const gchar  *path,
                     GError      **error)
{
  return hp_safetensors_save_with_dtype (state_dict, metadata, path,
                                         HP_SAFETENSORS_DTYPE_AS_IS, error);
}

/**
 * hp_safetensors_save_with_dtype:
 * @state_dict: the tensors to save
 * @metadata: (nullable) (element-type utf8 utf8): the `__metadata__`
 *   keys and values, or %NULL for none
 * @path: (type filename): the file to write
 * @dtype: the element type of the floating tensors in the file
 * @error: return location for a [struct@GLib.Error]
 *
 * Writes @state_dict as a safetensors file: each tensor with its dtype,
 * shape and data, little-endian and row-major. Floating tensors are
 * written in @dtype (`BF16`, `F16`, `F32` or `F64`; or in their own
 * with [HP_SAFETENSORS_DTYPE_AS_IS][enum@Hp.SafetensorsDType]), integer
 * tensors (`I64`) always as they are.
 *
 * A narrower type is rounded to nearest, ties to even, as torch's
 * `tensor.to(torch.bfloat16)` and `tensor.to(torch.float16)` round: a
 * magnitude from the largest finite value plus half its ulp up
 * (65520 for `F16`) becomes an infinity of its sign, `F16` subnormals
 * are rounded like the other values, down to the smallest, 2^-24; -0,
 * infinities and the signs of zeros stay. A NaN stays a quiet NaN: in
 * `BF16` always `0x7fc0`, as torch writes it; in `F16` of its sign,
 * with the top bits of its payload, as torch's CPU conversion (F16C or
 * ARM) gives. A float64 tensor is rounded to float32 first, as torch
 * does (its `BFloat16` and `Half` are made from a float only), so it is
 * rounded twice: a float64 value very near a tie can land on another
 * neighbour than one rounding would give (numpy's float64
 * `astype(float16)` rounds once). `F32` from float64 is the C
 * conversion (to nearest, ties to even), `F64` from float32 is exact.
 * [func@Hp.safetensors_load] reads every one of these back exactly:
 * `BF16` and `F16` as float32, which holds all their values.
 *
 * The layout is that of the reference writer: the header lists
 * `__metadata__` first (keys sorted), then the tensors in the order
 * their data follows, which is by decreasing element size in the file
 * (`F64` and `I64`, then `F32`, then `BF16` and `F16`) and, within one
 * element size, by name (strcmp()); the data is contiguous without
 * gaps, and every tensor starts at an offset aligned to its element
 * size, since the header is padded with spaces to a multiple of 8
 * bytes. The order of @state_dict does not count.
 *
 * The file is written under a temporary name in the same directory and
 * renamed to @path when complete, so @path is never left half-written.
 *
 * Returns: %TRUE on success; %FALSE with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if a
 *   tensor is named `__metadata__`, [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] if a tensor
 *   is a [class@Hp.DTensor], or [HP_ERROR_IO][error@Hp.Error] if the file cannot be written
 *
 * Since: 1.0
 */
gboolean
hp_safetensors_save_with_dtype (HpStateDict         *state_dict,
                                GHashTable          *metadata,
                                const gchar         *path,
                                HpSafetensorsDType   dtype,
                                GError             **error)
{
  g_autoptr(GArray) items = NULL;
  g_autoptr(GPtrArray) pointers = NULL;

  g_return_val_if_fail (HP_IS_STATE_DICT (state_dict), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (dtype <= HP_SAFETENSORS_DTYPE_F64, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  items = collect_items (state_dict, dtype, path, error);
  if (items == NULL)
    return FALSE;

  pointers = g_ptr_array_sized_new (items->len);
  for (guint i = 0; i < items->len; i++)
    g_ptr_array_add (pointers, &g_array_index (items, Item, i));
  return write_file (path, pointers, metadata, error);
}

/* Writes the index for @path under a temporary name next to it
 * (*@tmp_path), leaving @path as it is */
static gboolean
write_temp_index (const gchar  *path,
                  GArray       *items,
                  GPtrArray    *shard_of,
                  GHashTable   *metadata,
                  guint64       total_size,
                  gchar       **tmp_path,
                  GError      **error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(GHashTable) weight_map = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree gchar *json = NULL;
  g_autofree gchar *tmp = NULL;
  FILE *out;
  gboolean ok;
  g_autofree const gchar **names = NULL;
  gsize length;
  guint n;

  for (guint i = 0; i < items->len; i++)
    g_hash_table_insert (weight_map, (gpointer) g_array_index (items, Item, i).name,
                         g_ptr_array_index (shard_of, i));

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "metadata");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "total_size");
  json_builder_add_int_value (builder, (gint64) total_size);
  if (metadata != NULL)
    add_metadata_members (builder, metadata);
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "weight_map");
  json_builder_begin_object (builder);
  names = sorted_keys (weight_map, &n);
  for (guint i = 0; i < n; i++)
    {
      json_builder_set_member_name (builder, names[i]);
      json_builder_add_string_value (builder, g_hash_table_lookup (weight_map, names[i]));
    }
  json_builder_end_object (builder);
  json_builder_end_object (builder);

  json = generate_json (builder, TRUE, &length);
  out = open_temp (path, &tmp, error);
  if (out == NULL)
    return FALSE;
  ok = write_all (out, json, length);
  if (!close_temp (out, path, tmp, ok, errno, error))
    return FALSE;
  *tmp_path = g_steal_pointer (&tmp);
  return TRUE;
}

/**
 * hp_safetensors_save_sharded:
 * @state_dict: the tensors to save
 * @metadata: (nullable) (element-type utf8 utf8): metadata keys and
 *   values, or %NULL for none
 * @directory: (type filename): the directory to write into; it is
 *   created if it does not exist
 * @max_shard_bytes: the most tensor data bytes a shard holds, at least 1
 * @error: return location for a [struct@GLib.Error]
 *
 * Writes @state_dict as a sharded checkpoint, each tensor in its own
 * dtype: [func@Hp.safetensors_save_sharded_with_dtype] with
 * [HP_SAFETENSORS_DTYPE_AS_IS][enum@Hp.SafetensorsDType].
 *
 * Returns: %TRUE on success; %FALSE with an error of
 *   [func@Hp.safetensors_save_sharded_with_dtype]
 *
 * Since: 1.0
 */
gboolean
hp_safetensors_save_sharded (HpStateDict  *state_dict,
                             GHashTable   *metadata,
                             const gchar  *directory,
                             guint64       max_shard_bytes,
                             GError      **error)
{
  return hp_safetensors_save_sharded_with_dtype (state_dict, metadata, directory, max_shard_bytes,
                                                 HP_SAFETENSORS_DTYPE_AS_IS, error);
}

/**
 * hp_safetensors_save_sharded_with_dtype:
 * @state_dict: the tensors to save
 * @metadata: (nullable) (element-type utf8 utf8): metadata keys and
 *   values, or %NULL for none
 * @directory: (type filename): the directory to write into; it is
 *   created if it does not exist
 * @max_shard_bytes: the most tensor data bytes a shard holds, at least 1
 * @dtype: the element type of the floating tensors in the files
 * @error: return location for a [struct@GLib.Error]
 *
 * Writes @state_dict as a sharded checkpoint, as Hugging Face does:
 * shard files `model-00001-of-0000N.safetensors` ... in @directory and
 * the index `model.safetensors.index.json`, which maps each tensor name
 * to its shard and has `total_size`, the sum of the tensors' data bytes,
 * in its `metadata`. Floating tensors are written in @dtype, rounded as
 * [func@Hp.safetensors_save_with_dtype] says, and the sizes are those
 * of the data in the files.
 *
 * Tensors go into shards in the order of @state_dict: a tensor that
 * would take the current shard past @max_shard_bytes starts a new one,
 * and a tensor larger than @max_shard_bytes has a shard of its own. An
 * empty state dict makes one empty shard. Each shard is written as
 * [func@Hp.safetensors_save_with_dtype] writes a file, with @metadata
 * as its `__metadata__`; @metadata also goes into the index's `metadata`. Every
 * file is written under a temporary name first and renamed into place
 * when all are complete (the index last), so that an error leaves the
 * files already in @directory as they were. Files of an earlier
 * checkpoint with other names are left in @directory.
 *
 * Returns: %TRUE on success; %FALSE with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if
 *   @max_shard_bytes is 0, @metadata has the key `total_size` (reserved
 *   for the index) or a tensor is named `__metadata__`,
 *   [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] if a tensor is a [class@Hp.DTensor], or
 *   [HP_ERROR_IO][error@Hp.Error] if a file cannot be written
 *
 * Since: 1.0
 */
gboolean
hp_safetensors_save_sharded_with_dtype (HpStateDict         *state_dict,
                                        GHashTable          *metadata,
                                        const gchar         *directory,
                                        guint64              max_shard_bytes,
                                        HpSafetensorsDType   dtype,
                                        GError             **error)
{
  g_autoptr(GArray) items = NULL;
  g_autoptr(GPtrArray) shards = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  g_autoptr(GPtrArray) shard_names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) shard_of = g_ptr_array_new ();
  g_autoptr(GPtrArray) targets = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) temps = g_ptr_array_new_with_free_func (remove_temp);
  guint64 shard_bytes = 0;
  guint64 total_size = 0;

  g_return_val_if_fail (HP_IS_STATE_DICT (state_dict), FALSE);
  g_return_val_if_fail (directory != NULL, FALSE);
  g_return_val_if_fail (dtype <= HP_SAFETENSORS_DTYPE_F64, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (max_shard_bytes == 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: the largest shard size must be at least 1 byte, not 0", directory);
      return FALSE;
    }
  if (metadata != NULL && g_hash_table_contains (metadata, "total_size"))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: the metadata key 'total_size' is reserved for the index", directory);
      return FALSE;
    }
  items = collect_items (state_dict, dtype, directory, error);
  if (items == NULL)
    return FALSE;

  if (g_mkdir_with_parents (directory, 0777) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, HP_ERROR, HP_ERROR_IO, "%s: cannot create the directory: %s",
                   directory, g_strerror (saved_errno));
      return FALSE;
    }

  /* Split in order */
  g_ptr_array_add (shards, g_ptr_array_new ());
  for (guint i = 0; i < items->len; i++)
    {
      Item *item = &g_array_index (items, Item, i);
      GPtrArray *current = g_ptr_array_index (shards, shards->len - 1);

      if (current->len > 0 && shard_bytes + item->nbytes > max_shard_bytes)
        {
          current = g_ptr_array_new ();
          g_ptr_array_add (shards, current);
          shard_bytes = 0;
        }
      g_ptr_array_add (current, item);
      shard_bytes += item->nbytes;
      total_size += item->nbytes;
    }

  /* Every file is written under a temporary name first, and they
   * replace what @directory holds only when all are complete, so that a
   * failure leaves an earlier checkpoint there as it was */
  for (guint s = 0; s < shards->len; s++)
    {
      GPtrArray *shard = g_ptr_array_index (shards, s);
      gchar *name = g_strdup_printf ("model-%05u-of-%05u.safetensors", s + 1, shards->len);
      gchar *path = g_build_filename (directory, name, NULL);
      gchar *tmp = NULL;

      g_ptr_array_add (shard_names, name);
      g_ptr_array_add (targets, path);
      for (guint i = 0; i < shard->len; i++)
        g_ptr_array_add (shard_of, name);
      if (!write_temp_file (path, shard, metadata, &tmp, error))
        return FALSE;
      g_ptr_array_add (temps, tmp);
    }
  {
    gchar *index_path = g_build_filename (directory, HP_SAFETENSORS_INDEX_NAME, NULL);
    gchar *tmp = NULL;

    g_ptr_array_add (targets, index_path);
    if (!write_temp_index (index_path, items, shard_of, metadata, total_size, &tmp, error))
      return FALSE;
    g_ptr_array_add (temps, tmp);
  }

  /* a directory in the way of one of them fails before any is moved */
  for (guint i = 0; i < targets->len; i++)
    if (g_file_test (g_ptr_array_index (targets, i), G_FILE_TEST_IS_DIR))
      {
        g_set_error (error, HP_ERROR, HP_ERROR_IO, "%s: cannot write: %s",
                     (const gchar *) g_ptr_array_index (targets, i), g_strerror (EISDIR));
        return FALSE;
      }
  for (guint i = 0; i < targets->len; i++)
    {
      gboolean ok = commit_temp (g_ptr_array_index (temps, i), g_ptr_array_index (targets, i), error);

      /* moved, or removed on failure */
      g_clear_pointer (&g_ptr_array_index (temps, i), g_free);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}
