/* hp-safetensors-checkpoint.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-error.h"
#include "hp-json-private.h"
#include "hp-safetensors-checkpoint.h"
#include "hp-safetensors-private.h"

/**
 * HpSafetensorsCheckpoint:
 *
 * The tensors of a checkpoint stored in safetensors files: either one
 * file, or shards listed by an index file as Hugging Face writes them.
 *
 * [ctor@Hp.SafetensorsCheckpoint.new_for_path] takes a path to
 *
 * - a directory: the checkpoint of its `model.safetensors.index.json`
 *   if it has one, else of its `model.safetensors`;
 * - a file whose name ends in `.json`: an index;
 * - any other file: one safetensors file.
 *
 * An index is a JSON object with a `weight_map` object that maps each
 * tensor name to the file name of its shard, in the directory of the
 * index, and an optional `metadata` object:
 *
 * ```json
 * {
 *   "metadata": {"total_size": 1234},
 *   "weight_map": {
 *     "embed.weight": "model-00001-of-00002.safetensors",
 *     "output.weight": "model-00002-of-00002.safetensors"
 *   }
 * }
 * ```
 *
 * Opening the checkpoint opens and validates every shard (see
 * [class@Hp.SafetensorsFile]) and checks that each shard holds exactly the
 * tensors the index maps to it. Errors in the index are
 * [HP_ERROR_FORMAT][error@Hp.Error]; files that cannot be read, [HP_ERROR_IO][error@Hp.Error].
 *
 * The metadata of a sharded checkpoint are the string values of the
 * index's `metadata` object (others, such as `total_size`, are left
 * out); that of a single file, its `__metadata__`.
 *
 * Since: 1.0
 */

struct _HpSafetensorsCheckpoint
{
  GObject parent_instance;

  gchar *path;
  GPtrArray *files;         /* HpSafetensorsFile *, in the order of the index */
  GHashTable *tensor_files; /* name -> HpSafetensorsFile * (owned by files) */
  GHashTable *metadata;     /* gchar * -> gchar * */
};

G_DEFINE_FINAL_TYPE (HpSafetensorsCheckpoint, hp_safetensors_checkpoint, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PATH,
  PROP_N_TENSORS,
  PROP_N_FILES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_safetensors_checkpoint_finalize (GObject *object)
{
  HpSafetensorsCheckpoint *self = HP_SAFETENSORS_CHECKPOINT (object);

  g_clear_pointer (&self->tensor_files, g_hash_table_unref);
  g_clear_pointer (&self->files, g_ptr_array_unref);
  g_clear_pointer (&self->metadata, g_hash_table_unref);
  g_clear_pointer (&self->path, g_free);

  G_OBJECT_CLASS (hp_safetensors_checkpoint_parent_class)->finalize (object);
}

static void
hp_safetensors_checkpoint_get_property (GObject    *object,
                                        guint       prop_id,
                                        GValue     *value,
                                        GParamSpec *pspec)
{
  HpSafetensorsCheckpoint *self = HP_SAFETENSORS_CHECKPOINT (object);

  switch (prop_id)
    {
    case PROP_PATH:
      g_value_set_string (value, self->path);
      break;

    case PROP_N_TENSORS:
      g_value_set_uint (value, g_hash_table_size (self->tensor_files));
      break;

    case PROP_N_FILES:
      g_value_set_uint (value, self->files->len);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_safetensors_checkpoint_class_init (HpSafetensorsCheckpointClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_safetensors_checkpoint_finalize;
  object_class->get_property = hp_safetensors_checkpoint_get_property;

  /**
   * HpSafetensorsCheckpoint:path:
   *
   * The path the checkpoint was opened from: a directory, an index or
   * a safetensors file.
   *
   * Since: 1.0
   */
  properties[PROP_PATH] =
    g_param_spec_string ("path", NULL, NULL,
                         NULL,
                         (G_PARAM_READABLE |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpSafetensorsCheckpoint:n-tensors:
   *
   * The number of tensors in all files of the checkpoint.
   *
   * Since: 1.0
   */
  properties[PROP_N_TENSORS] =
    g_param_spec_uint ("n-tensors", NULL, NULL,
                       0, G_MAXUINT, 0,
                       (G_PARAM_READABLE |
                        G_PARAM_STATIC_STRINGS));

  /**
   * HpSafetensorsCheckpoint:n-files:
   *
   * The number of safetensors files: 1 for a single file, the number of
   * shards for an index.
   *
   * Since: 1.0
   */
  properties[PROP_N_FILES] =
    g_param_spec_uint ("n-files", NULL, NULL,
                       0, G_MAXUINT, 0,
                       (G_PARAM_READABLE |
                        G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_safetensors_checkpoint_init (HpSafetensorsCheckpoint *self)
{
  self->files = g_ptr_array_new_with_free_func (g_object_unref);
  self->tensor_files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->metadata = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

static void
add_file (HpSafetensorsCheckpoint *self,
          HpSafetensorsFile       *file)
{
  g_ptr_array_add (self->files, g_object_ref (file));
}

static gboolean
open_single (HpSafetensorsCheckpoint  *self,
             const gchar              *path,
             GError                  **error)
{
  g_autoptr(HpSafetensorsFile) file = hp_safetensors_file_new_for_path (path, error);
  g_auto(GStrv) names = NULL;
  GHashTableIter iter;
  gpointer key, value;

  if (file == NULL)
    return FALSE;

  add_file (self, file);
  names = hp_safetensors_file_get_names (file);
  for (guint i = 0; names[i] != NULL; i++)
    g_hash_table_insert (self->tensor_files, g_strdup (names[i]), file);
  g_hash_table_iter_init (&iter, hp_safetensors_file_get_metadata (file));
  while (g_hash_table_iter_next (&iter, &key, &value))
    g_hash_table_insert (self->metadata, g_strdup (key), g_strdup (value));
  return TRUE;
}

/* A shard is named by a plain file name in the directory of the index */
static gboolean
is_plain_file_name (const gchar *name)
{
  return *name != '\0' && strchr (name, '/') == NULL && strchr (name, '\\') == NULL &&
    !g_str_equal (name, ".") && !g_str_equal (name, "..");
}

static gboolean
parse_index_metadata (HpSafetensorsCheckpoint  *self,
                      const gchar              *path,
                      JsonNode                 *node,
                      GError                  **error)
{
  JsonObject *object;
  g_autoptr(GList) members = NULL;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: metadata is not a JSON object", path);
      return FALSE;
    }
  object = json_node_get_object (node);
  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    {
      JsonNode *value = json_object_get_member (object, l->data);

      if (JSON_NODE_HOLDS_VALUE (value) && json_node_get_value_type (value) == G_TYPE_STRING)
        g_hash_table_insert (self->metadata, g_strdup (l->data), g_strdup (json_node_get_string (value)));
    }
  return TRUE;
}

/* Opens each shard that @weight_map names once, in the order of their
 * file names, and checks that each holds exactly the tensors mapped to
 * it */
static gboolean
open_shards (HpSafetensorsCheckpoint  *self,
             const gchar              *path,
             JsonObject               *weight_map,
             GError                  **error)
{
  g_autofree gchar *dir = g_path_get_dirname (path);
  g_autoptr(GHashTable) shards = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GList) members = json_object_get_members (weight_map);
  g_autofree const gchar **shard_names = NULL;
  guint n_shards;

  for (GList *l = members; l != NULL; l = l->next)
    {
      const gchar *name = l->data;
      JsonNode *value = json_object_get_member (weight_map, name);
      const gchar *shard;

      if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_STRING)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                       "%s: weight_map '%s' is not a string", path, name);
          return FALSE;
        }
      shard = json_node_get_string (value);
      if (!is_plain_file_name (shard))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                       "%s: weight_map '%s': '%s' is not a file name in the directory "
                       "of the index", path, name, shard);
          return FALSE;
        }
      g_hash_table_insert (shards, (gpointer) shard, NULL);
    }

  shard_names = (const gchar **) _hp_safetensors_sorted_keys (shards, FALSE, &n_shards);
  for (guint i = 0; i < n_shards; i++)
    {
      g_autofree gchar *shard_path = g_build_filename (dir, shard_names[i], NULL);
      g_autoptr(HpSafetensorsFile) file = hp_safetensors_file_new_for_path (shard_path, error);

      if (file == NULL)
        return FALSE;
      add_file (self, file);
      g_hash_table_insert (shards, (gpointer) shard_names[i], file);
    }

  for (GList *l = members; l != NULL; l = l->next)
    {
      const gchar *name = l->data;
      const gchar *shard = json_object_get_string_member (weight_map, name);
      HpSafetensorsFile *file = g_hash_table_lookup (shards, shard);

      if (!hp_safetensors_file_contains (file, name))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                       "%s: weight_map maps tensor '%s' to %s, which does not hold it",
                       path, name, shard);
          return FALSE;
        }
      g_hash_table_insert (self->tensor_files, g_strdup (name), file);
    }

  /* no shard holds a tensor that the index maps elsewhere or not at all */
  for (guint i = 0; i < self->files->len; i++)
    {
      HpSafetensorsFile *file = g_ptr_array_index (self->files, i);
      g_auto(GStrv) names = hp_safetensors_file_get_names (file);

      for (guint j = 0; names[j] != NULL; j++)
        if (g_hash_table_lookup (self->tensor_files, names[j]) != file)
          {
            g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                         "%s: %s holds tensor '%s', which weight_map does not map to it",
                         path, shard_names[i], names[j]);
            return FALSE;
          }
    }
  return TRUE;
}

static gboolean
open_index (HpSafetensorsCheckpoint  *self,
            const gchar              *path,
            GError                  **error)
{
  g_autofree gchar *contents = NULL;
  gsize length;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object;
  g_autoptr(GList) members = NULL;
  JsonNode *value;

  if (!g_file_get_contents (path, &contents, &length, &local_error))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_IO, "%s", local_error->message);
      return FALSE;
    }

  root = _hp_json_parse_strict (contents, length, &local_error);
  if (root == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: the index is %s", path, local_error->message);
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: the index is not a JSON object", path);
      return FALSE;
    }

  object = json_node_get_object (root);
  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    if (!g_str_equal (l->data, "metadata") && !g_str_equal (l->data, "weight_map"))
      {
        g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                     "%s: the index has an unknown field '%s'", path, (const gchar *) l->data);
        return FALSE;
      }
  if (json_object_has_member (object, "metadata") &&
      !parse_index_metadata (self, path, json_object_get_member (object, "metadata"), error))
    return FALSE;

  value = json_object_get_member (object, "weight_map");
  if (value == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: the index has no field 'weight_map'", path);
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (value))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: weight_map is not a JSON object", path);
      return FALSE;
    }
  return open_shards (self, path, json_node_get_object (value), error);
}

/**
 * hp_safetensors_checkpoint_new_for_path:
 * @path: (type filename): a checkpoint directory, an index file or a
 *   safetensors file
 * @error: return location for a [struct@GLib.Error]
 *
 * Opens the checkpoint at @path (see [class@Hp.SafetensorsCheckpoint] for how
 * @path is read) and validates the index and every file. No tensor data
 * is read.
 *
 * Returns: (transfer full): a new [class@Hp.SafetensorsCheckpoint], or %NULL
 *   with [HP_ERROR_IO][error@Hp.Error] if a file cannot be read or a directory holds no
 *   checkpoint, or [HP_ERROR_FORMAT][error@Hp.Error] if the index or a file is not valid
 *
 * Since: 1.0
 */
HpSafetensorsCheckpoint *
hp_safetensors_checkpoint_new_for_path (const gchar  *path,
                                        GError      **error)
{
  g_autoptr(HpSafetensorsCheckpoint) self = NULL;
  gboolean ok;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  self = g_object_new (HP_TYPE_SAFETENSORS_CHECKPOINT, NULL);
  self->path = g_strdup (path);

  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_autofree gchar *index = g_build_filename (path, HP_SAFETENSORS_INDEX_NAME, NULL);
      g_autofree gchar *single = g_build_filename (path, HP_SAFETENSORS_SINGLE_NAME, NULL);

      if (g_file_test (index, G_FILE_TEST_EXISTS))
        ok = open_index (self, index, error);
      else if (g_file_test (single, G_FILE_TEST_EXISTS))
        ok = open_single (self, single, error);
      else
        {
          g_set_error (error, HP_ERROR, HP_ERROR_IO,
                       "%s: the directory has neither %s nor %s",
                       path, HP_SAFETENSORS_INDEX_NAME, HP_SAFETENSORS_SINGLE_NAME);
          ok = FALSE;
        }
    }
  else if (g_str_has_suffix (path, ".json"))
    ok = open_index (self, path, error);
  else
    ok = open_single (self, path, error);

  return ok ? g_steal_pointer (&self) : NULL;
}

/**
 * hp_safetensors_checkpoint_get_path:
 * @self: a [class@Hp.SafetensorsCheckpoint]
 *
 * Gets the path the checkpoint was opened from.
 *
 * Returns: (type filename): the path
 *
 * Since: 1.0
 */
const gchar *
hp_safetensors_checkpoint_get_path (HpSafetensorsCheckpoint *self)
{
  g_return_val_if_fail (HP_IS_SAFETENSORS_CHECKPOINT (self), NULL);

  return self->path;
}

/**
 * hp_safetensors_checkpoint_get_n_tensors:
 * @self: a [class@Hp.SafetensorsCheckpoint]
 *
 * Gets the number of tensors in all files of the checkpoint.
 *
 * Returns: the number of tensors
 *
 * Since: 1.0
 */
guint
hp_safetensors_checkpoint_get_n_tensors (HpSafetensorsCheckpoint *self)
{
  g_return_val_if_fail (HP_IS_SAFETENSORS_CHECKPOINT (self), 0);

  return g_hash_table_size (self->tensor_files);
}

/**
 * hp_safetensors_checkpoint_get_n_files:
 * @self: a [class@Hp.SafetensorsCheckpoint]
 *
 * Gets the number of safetensors files of the checkpoint.
 *
 * Returns: 1 for a single file, the number of shards for an index
 *
 * Since: 1.0
 */
guint
hp_safetensors_checkpoint_get_n_files (HpSafetensorsCheckpoint *self)
{
  g_return_val_if_fail (HP_IS_SAFETENSORS_CHECKPOINT (self), 0);

  return self->files->len;
}

/**
 * hp_safetensors_checkpoint_get_file:
 * @self: a [class@Hp.SafetensorsCheckpoint]
 * @index: a position, less than [method@Hp.SafetensorsCheckpoint.get_n_files]
 *
 * Gets a file of the checkpoint; shards come in the order of their file
 * names.
 *
 * Returns: (transfer none): the file
 *
 * Since: 1.0
 */
HpSafetensorsFile *
hp_safetensors_checkpoint_get_file (HpSafetensorsCheckpoint *self,
                                    guint                    index)
{
  g_return_val_if_fail (HP_IS_SAFETENSORS_CHECKPOINT (self), NULL);
  g_return_val_if_fail (index < self->files->len, NULL);

  return g_ptr_array_index (self->files, index);
}

/**
 * hp_safetensors_checkpoint_get_names:
 * @self: a [class@Hp.SafetensorsCheckpoint]
 *
 * Gets the names of all tensors, sorted by strcmp().
 *
 * Returns: (transfer full) (array zero-terminated=1): a new
 *   %NULL-terminated array of names
 *
 * Since: 1.0
 */
GStrv
hp_safetensors_checkpoint_get_names (HpSafetensorsCheckpoint *self)
{
  g_return_val_if_fail (HP_IS_SAFETENSORS_CHECKPOINT (self), NULL);

  return _hp_safetensors_sorted_keys (self->tensor_files, TRUE, NULL);
}

/**
 * hp_safetensors_checkpoint_contains:
 * @self: a [class@Hp.SafetensorsCheckpoint]
 * @name: a tensor name
 *
 * Tells whether the checkpoint has a tensor @name.
 *
 * Returns: %TRUE if there is a tensor @name
 *
 * Since: 1.0
 */
gboolean
hp_safetensors_checkpoint_contains (HpSafetensorsCheckpoint *self,
                                    const gchar             *name)
{
  g_return_val_if_fail (HP_IS_SAFETENSORS_CHECKPOINT (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);

  return g_hash_table_contains (self->tensor_files, name);
}

/**
 * hp_safetensors_checkpoint_get_metadata:
 * @self: a [class@Hp.SafetensorsCheckpoint]
 *
 * Gets the metadata: the string values of the index's `metadata`, or
 * the `__metadata__` of a single file.
 *
 * Returns: (transfer none) (element-type utf8 utf8): the metadata keys
 *   and values, possibly empty
 *
 * Since: 1.0
 */
GHashTable *
hp_safetensors_checkpoint_get_metadata (HpSafetensorsCheckpoint *self)
{
  g_return_val_if_fail (HP_IS_SAFETENSORS_CHECKPOINT (self), NULL);

  return self->metadata;
}

/**
 * hp_safetensors_checkpoint_lookup_file:
 * @self: a [class@Hp.SafetensorsCheckpoint]
 * @name: a tensor name
 * @error: return location for a [struct@GLib.Error]
 *
 * Gets the file that holds tensor @name, to read its dtype and shape or
 * load it.
 *
 * Returns: (transfer none): the file, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if the checkpoint has no tensor @name
 *
 * Since: 1.0
 */
HpSafetensorsFile *
hp_safetensors_checkpoint_lookup_file (HpSafetensorsCheckpoint  *self,
                                       const gchar              *name,
                                       GError                  **error)
{
  HpSafetensorsFile *file;

  g_return_val_if_fail (HP_IS_SAFETENSORS_CHECKPOINT (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  file = g_hash_table_lookup (self->tensor_files, name);
  if (file == NULL)
    g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                 "%s: no tensor '%s'", self->path, name);
  return file;
}

/**
 * hp_safetensors_checkpoint_get_tensor:
 * @self: a [class@Hp.SafetensorsCheckpoint]
 * @name: a tensor name
 * @error: return location for a [struct@GLib.Error]
 *
 * Loads tensor @name from its file, as [method@Hp.SafetensorsFile.get_tensor]
 * does.
 *
 * Returns: (transfer full): the tensor, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if the checkpoint has no tensor @name, or
 *   an error of [method@Hp.SafetensorsFile.get_tensor]
 *
 * Since: 1.0
 */
HpTensor *
hp_safetensors_checkpoint_get_tensor (HpSafetensorsCheckpoint  *self,
                                      const gchar              *name,
                                      GError                  **error)
{
  HpSafetensorsFile *file;

  g_return_val_if_fail (HP_IS_SAFETENSORS_CHECKPOINT (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  file = hp_safetensors_checkpoint_lookup_file (self, name, error);
  return file != NULL ? hp_safetensors_file_get_tensor (file, name, error) : NULL;
}

/**
 * hp_safetensors_checkpoint_get_tensor_slice:
 * @self: a [class@Hp.SafetensorsCheckpoint]
 * @name: a tensor name
 * @offsets: (array length=n_offsets): the first index of the block in
 *   each dim
 * @n_offsets: the number of offsets, the number of dims of the tensor
 * @lengths: (array length=n_lengths): the size of the block in each dim
 * @n_lengths: the number of lengths, the number of dims of the tensor
 * @error: return location for a [struct@GLib.Error]
 *
 * Loads a block of tensor @name from its file, as
 * [method@Hp.SafetensorsFile.get_tensor_slice] does.
 *
 * Returns: (transfer full): the block, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if the checkpoint has no tensor @name, or
 *   an error of [method@Hp.SafetensorsFile.get_tensor_slice]
 *
 * Since: 1.0
 */
HpTensor *
hp_safetensors_checkpoint_get_tensor_slice (HpSafetensorsCheckpoint  *self,
                                            const gchar              *name,
                                            const gint64             *offsets,
                                            guint                     n_offsets,
                                            const gint64             *lengths,
                                            guint                     n_lengths,
                                            GError                  **error)
{
  HpSafetensorsFile *file;

  g_return_val_if_fail (HP_IS_SAFETENSORS_CHECKPOINT (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  file = hp_safetensors_checkpoint_lookup_file (self, name, error);
  if (file == NULL)
    return NULL;
  return hp_safetensors_file_get_tensor_slice (file, name, offsets, n_offsets,
                                               lengths, n_lengths, error);
}

/**
 * hp_safetensors_checkpoint_to_state_dict:
 * @self: a [class@Hp.SafetensorsCheckpoint]
 * @error: return location for a [struct@GLib.Error]
 *
 * Loads every tensor into a state dict, in the order of
 * [method@Hp.SafetensorsCheckpoint.get_names].
 *
 * Returns: (transfer full): a new [class@Hp.StateDict], or %NULL with the error
 *   of the first tensor that does not load
 *
 * Since: 1.0
 */
HpStateDict *
hp_safetensors_checkpoint_to_state_dict (HpSafetensorsCheckpoint  *self,
                                         GError                  **error)
{
  g_autoptr(HpStateDict) sd = NULL;
  g_auto(GStrv) names = NULL;

  g_return_val_if_fail (HP_IS_SAFETENSORS_CHECKPOINT (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  sd = hp_state_dict_new ();
  names = hp_safetensors_checkpoint_get_names (self);
  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autoptr(HpTensor) tensor = hp_safetensors_checkpoint_get_tensor (self, names[i], error);

      if (tensor == NULL)
        return NULL;
      hp_state_dict_insert (sd, names[i], tensor);
    }
  return g_steal_pointer (&sd);
}
