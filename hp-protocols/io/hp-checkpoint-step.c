/* hp-checkpoint-step.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "hp-checkpoint-private.h"
#include "hp-error.h"
#include "hp-json-private.h"

/**
 * HpCheckpointStep:
 *
 * One step of a checkpoint folder (see [class@Hp.CheckpointManager]): a
 * directory `step-N` whose files belong together, because its manifest,
 * `manifest.json`, lists every one of them with its size and SHA-256
 * checksum, beside the step number and string metadata (the data
 * position of a training job, for instance):
 *
 * ```json
 * {
 *   "format": "hp-checkpoint",
 *   "version": 1,
 *   "step": 200,
 *   "metadata": {"data-position": "4096"},
 *   "files": [
 *     {"name": "model.safetensors", "size": 74512, "sha256": "9f86d0…"}
 *   ]
 * }
 * ```
 *
 * [ctor@Hp.CheckpointStep.open] opens a step only when every listed
 * file is there with its size and checksum, so a file of another step
 * or one cut short is refused, naming it. A step being written (from
 * [method@Hp.CheckpointManager.stage]) is not
 * [property@Hp.CheckpointStep:complete] until
 * [method@Hp.CheckpointManager.commit] has written its manifest.
 *
 * Since: 1.0
 */

#define MANIFEST_FORMAT "hp-checkpoint"
#define MANIFEST_VERSION 1
#define SHA256_HEX_LENGTH 64

struct _HpCheckpointStep
{
  GObject parent_instance;

  gchar *path;
  gint64 step;
  gboolean complete;
  GPtrArray *file_names;  /* gchar *, in the manifest's order */
  GHashTable *metadata;   /* gchar * -> gchar * */
};

G_DEFINE_FINAL_TYPE (HpCheckpointStep, hp_checkpoint_step, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PATH,
  PROP_STEP,
  PROP_COMPLETE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_checkpoint_step_finalize (GObject *object)
{
  HpCheckpointStep *self = HP_CHECKPOINT_STEP (object);

  g_clear_pointer (&self->path, g_free);
  g_clear_pointer (&self->file_names, g_ptr_array_unref);
  g_clear_pointer (&self->metadata, g_hash_table_unref);

  G_OBJECT_CLASS (hp_checkpoint_step_parent_class)->finalize (object);
}

static void
hp_checkpoint_step_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  HpCheckpointStep *self = HP_CHECKPOINT_STEP (object);

  switch (prop_id)
    {
    case PROP_PATH:
      g_value_set_string (value, self->path);
      break;

    case PROP_STEP:
      g_value_set_int64 (value, self->step);
      break;

    case PROP_COMPLETE:
      g_value_set_boolean (value, self->complete);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_checkpoint_step_class_init (HpCheckpointStepClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_checkpoint_step_finalize;
  object_class->get_property = hp_checkpoint_step_get_property;

  /**
   * HpCheckpointStep:path: (type filename)
   *
   * The step's directory: `FOLDER/step-N` once complete, a staging
   * directory beside it while it is written.
   *
   * Since: 1.0
   */
  properties[PROP_PATH] =
    g_param_spec_string ("path", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  /**
   * HpCheckpointStep:step:
   *
   * The training step the checkpoint was taken after.
   *
   * Since: 1.0
   */
  properties[PROP_STEP] =
    g_param_spec_int64 ("step", NULL, NULL, 0, G_MAXINT64, 0,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * HpCheckpointStep:complete:
   *
   * Whether the step is in place with its manifest; a staged step is
   * not, until it is committed.
   *
   * Since: 1.0
   */
  properties[PROP_COMPLETE] =
    g_param_spec_boolean ("complete", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_checkpoint_step_init (HpCheckpointStep *self)
{
  self->file_names = g_ptr_array_new_with_free_func (g_free);
  self->metadata = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

HpCheckpointStep *
_hp_checkpoint_step_new_staging (const gchar *path,
                                 gint64       step)
{
  HpCheckpointStep *self = g_object_new (HP_TYPE_CHECKPOINT_STEP, NULL);

  self->path = g_strdup (path);
  self->step = step;
  return self;
}

gboolean
_hp_checkpoint_io_error (GError      **error,
                         const gchar  *path,
                         const gchar  *what,
                         int           saved_errno)
{
  g_set_error (error, HP_ERROR, HP_ERROR_IO, "%s: %s: %s", path, what, g_strerror (saved_errno));
  return FALSE;
}

/* A file name the manifest can list: a plain name in the directory */
static gboolean
is_plain_name (const gchar *name)
{
  return name[0] != '\0' && strchr (name, G_DIR_SEPARATOR) == NULL &&
         strcmp (name, ".") != 0 && strcmp (name, "..") != 0 &&
         strcmp (name, HP_CHECKPOINT_MANIFEST) != 0;
}

/* Reads @path through, giving its size and SHA-256; with @durable, the
 * file is also fsync'ed */
static gboolean
hash_file (const gchar  *path,
           gboolean      durable,
           guint64      *size,
           gchar       **sha256,
           GError      **error)
{
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree guchar *buffer = g_malloc (1 << 20);
  int fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  gssize got;

  if (fd < 0)
    return _hp_checkpoint_io_error (error, path, "cannot read", errno);
  *size = 0;
  while ((got = read (fd, buffer, 1 << 20)) != 0)
    {
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        {
          int saved_errno = errno;

          close (fd);
          return _hp_checkpoint_io_error (error, path, "cannot read", saved_errno);
        }
      g_checksum_update (checksum, buffer, got);
      *size += (guint64) got;
    }
  if (durable && fsync (fd) != 0)
    {
      int saved_errno = errno;

      close (fd);
      return _hp_checkpoint_io_error (error, path, "cannot sync to disk", saved_errno);
    }
  close (fd);
  *sha256 = g_strdup (g_checksum_get_string (checksum));
  return TRUE;
}

/* fsync of a file, or with O_DIRECTORY in @flags of a directory */
static gboolean
sync_path (const gchar  *path,
           int           flags,
           GError      **error)
{
  int fd = g_open (path, O_RDONLY | O_CLOEXEC | flags, 0);
  int saved_errno;

  if (fd < 0)
    return _hp_checkpoint_io_error (error, path, "cannot open", errno);
  if (fsync (fd) == 0)
    {
      close (fd);
      return TRUE;
    }
  saved_errno = errno;
  close (fd);
  return _hp_checkpoint_io_error (error, path, "cannot sync to disk", saved_errno);
}

static gint
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const gchar **) a, *(const gchar **) b);
}

/* The names of the regular files of the staging directory, sorted */
static GPtrArray *
list_staged_files (const gchar  *path,
                   GError      **error)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, error);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const gchar *name;

  if (dir == NULL)
    return NULL;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree gchar *file = g_build_filename (path, name, NULL);

      if (!is_plain_name (name) || !g_file_test (file, G_FILE_TEST_IS_REGULAR) ||
          g_file_test (file, G_FILE_TEST_IS_SYMLINK))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "%s: a checkpoint step holds regular files other than %s only",
                       file, HP_CHECKPOINT_MANIFEST);
          return NULL;
        }
      g_ptr_array_add (names, g_strdup (name));
    }
  g_ptr_array_sort (names, compare_names);
  return g_steal_pointer (&names);
}

static gchar *
build_manifest (HpCheckpointStep  *self,
                GPtrArray         *names,
                GPtrArray         *sizes,
                GPtrArray         *checksums)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GList) keys = g_hash_table_get_keys (self->metadata);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "format");
  json_builder_add_string_value (builder, MANIFEST_FORMAT);
  json_builder_set_member_name (builder, "version");
  json_builder_add_int_value (builder, MANIFEST_VERSION);
  json_builder_set_member_name (builder, "step");
  json_builder_add_int_value (builder, self->step);
  json_builder_set_member_name (builder, "metadata");
  json_builder_begin_object (builder);
  keys = g_list_sort (keys, (GCompareFunc) strcmp);
  for (GList *l = keys; l != NULL; l = l->next)
    {
      json_builder_set_member_name (builder, l->data);
      json_builder_add_string_value (builder, g_hash_table_lookup (self->metadata, l->data));
    }
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "files");
  json_builder_begin_array (builder);
  for (guint i = 0; i < names->len; i++)
    {
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, g_ptr_array_index (names, i));
      json_builder_set_member_name (builder, "size");
      json_builder_add_int_value (builder, *(guint64 *) g_ptr_array_index (sizes, i));
      json_builder_set_member_name (builder, "sha256");
      json_builder_add_string_value (builder, g_ptr_array_index (checksums, i));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  json_generator_set_pretty (generator, TRUE);
  return json_generator_to_data (generator, NULL);
}

gboolean
_hp_checkpoint_step_seal (HpCheckpointStep  *self,
                          const gchar       *final_path,
                          GError           **error)
{
  g_autoptr(GPtrArray) names = list_staged_files (self->path, error);
  g_autoptr(GPtrArray) sizes = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) checksums = g_ptr_array_new_with_free_func (g_free);
  g_autofree gchar *manifest_path = g_build_filename (self->path, HP_CHECKPOINT_MANIFEST, NULL);
  g_autofree gchar *manifest = NULL;
  g_autofree gchar *parent = g_path_get_dirname (final_path);

  if (names == NULL)
    return FALSE;
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree gchar *file = g_build_filename (self->path, g_ptr_array_index (names, i), NULL);
      guint64 *size = g_new (guint64, 1);
      gchar *sha256 = NULL;

      g_ptr_array_add (sizes, size);
      if (!hash_file (file, TRUE, size, &sha256, error))
        return FALSE;
      g_ptr_array_add (checksums, sha256);
    }
  manifest = build_manifest (self, names, sizes, checksums);
  /* written in place: the step is not one until its directory is renamed */
  if (!g_file_set_contents_full (manifest_path, manifest, -1, G_FILE_SET_CONTENTS_NONE, 0666, error) ||
      !sync_path (manifest_path, 0, error) ||
      !sync_path (self->path, O_DIRECTORY, error))
    return FALSE;
  if (g_rename (self->path, final_path) != 0)
    return _hp_checkpoint_io_error (error, final_path, "cannot put the checkpoint in place", errno);

  /* a staged step lists no files until it is complete */
  g_ptr_array_extend_and_steal (self->file_names, g_steal_pointer (&names));
  g_free (self->path);
  self->path = g_strdup (final_path);
  self->complete = TRUE;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PATH]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMPLETE]);
  return sync_path (parent, O_DIRECTORY, error);
}

gboolean
_hp_checkpoint_remove_directory (const gchar  *path,
                                 GError      **error)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, error);
  const gchar *name;

  if (dir == NULL)
    return FALSE;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree gchar *file = g_build_filename (path, name, NULL);

      if (g_unlink (file) != 0)
        return _hp_checkpoint_io_error (error, file, "cannot remove", errno);
    }
  if (g_rmdir (path) != 0)
    return _hp_checkpoint_io_error (error, path, "cannot remove", errno);
  return TRUE;
}

static gboolean
set_manifest_error (GError      **error,
                    const gchar  *manifest,
                    const gchar  *what)
{
  g_set_error (error, HP_ERROR, HP_ERROR_FORMAT, "%s: %s", manifest, what);
  return FALSE;
}

static gboolean
read_metadata (HpCheckpointStep  *self,
               const gchar       *manifest,
               JsonNode          *node,
               GError           **error)
{
  g_autoptr(GList) members = NULL;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return set_manifest_error (error, manifest, "'metadata' is not an object");
  members = json_object_get_members (json_node_get_object (node));
  for (GList *l = members; l != NULL; l = l->next)
    {
      JsonNode *value = json_object_get_member (json_node_get_object (node), l->data);

      if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_STRING)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                       "%s: metadata '%s' is not a string", manifest, (const gchar *) l->data);
          return FALSE;
        }
      g_hash_table_insert (self->metadata, g_strdup (l->data), g_strdup (json_node_get_string (value)));
    }
  return TRUE;
}

static gboolean
is_int_node (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_INT64;
}

static gboolean
is_string_node (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING;
}

static gboolean
is_sha256 (const gchar *text)
{
  if (strlen (text) != SHA256_HEX_LENGTH)
    return FALSE;
  for (const gchar *c = text; *c != '\0'; c++)
    if (!g_ascii_isxdigit (*c) || g_ascii_isupper (*c))
      return FALSE;
  return TRUE;
}

/* Checks one entry of "files" against the file it names */
static gboolean
verify_file (HpCheckpointStep  *self,
             const gchar       *manifest,
             guint              index,
             JsonNode          *entry,
             GError           **error)
{
  static const gchar *const members[] = { "name", "size", "sha256" };
  JsonObject *object;
  const gchar *name;
  const gchar *sha256;
  gint64 size;
  g_autofree gchar *file = NULL;
  g_autofree gchar *actual_sha256 = NULL;
  guint64 actual_size;

  if (!JSON_NODE_HOLDS_OBJECT (entry) ||
      json_object_get_size (json_node_get_object (entry)) != G_N_ELEMENTS (members))
    goto malformed;
  object = json_node_get_object (entry);
  if (!is_string_node (json_object_get_member (object, "name")) ||
      !is_int_node (json_object_get_member (object, "size")) ||
      !is_string_node (json_object_get_member (object, "sha256")))
    goto malformed;
  name = json_object_get_string_member (object, "name");
  size = json_object_get_int_member (object, "size");
  sha256 = json_object_get_string_member (object, "sha256");
  if (!is_plain_name (name) || size < 0 || !is_sha256 (sha256))
    goto malformed;
  for (guint i = 0; i < self->file_names->len; i++)
    if (strcmp (g_ptr_array_index (self->file_names, i), name) == 0)
      {
        g_set_error (error, HP_ERROR, HP_ERROR_FORMAT, "%s: '%s' is listed twice", manifest, name);
        return FALSE;
      }

  file = g_build_filename (self->path, name, NULL);
  if (!g_file_test (file, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_IO,
                   "%s: missing, but listed in %s: the checkpoint is incomplete", file, manifest);
      return FALSE;
    }
  if (!hash_file (file, FALSE, &actual_size, &actual_sha256, error))
    return FALSE;
  if (actual_size != (guint64) size)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: %" G_GUINT64_FORMAT " bytes, but %s lists %" G_GINT64_FORMAT
                   ": not the file of this checkpoint", file, actual_size, manifest, size);
      return FALSE;
    }
  if (strcmp (actual_sha256, sha256) != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s: its SHA-256 differs from the one %s lists: not the file of this checkpoint",
                   file, manifest);
      return FALSE;
    }
  g_ptr_array_add (self->file_names, g_strdup (name));
  return TRUE;

malformed:
  g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
               "%s: files[%u] is not {\"name\": a file name, \"size\": bytes, \"sha256\": 64 hex digits}",
               manifest, index);
  return FALSE;
}

static gboolean
read_manifest (HpCheckpointStep  *self,
               const gchar       *manifest,
               GError           **error)
{
  static const gchar *const known[] = { "format", "version", "step", "metadata", "files", NULL };
  g_autofree gchar *contents = NULL;
  gsize length;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GList) members = NULL;
  JsonObject *object;
  JsonNode *node;
  JsonArray *files;

  if (!g_file_test (manifest, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_IO,
                   "%s: missing: %s is not a complete checkpoint", manifest, self->path);
      return FALSE;
    }
  if (!g_file_get_contents (manifest, &contents, &length, error))
    return FALSE;
  root = _hp_json_parse_strict (contents, length, error);
  if (root == NULL)
    {
      g_prefix_error (error, "%s: ", manifest);
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (root))
    return set_manifest_error (error, manifest, "not a JSON object");
  object = json_node_get_object (root);
  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    if (!g_strv_contains (known, l->data))
      {
        g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                     "%s: unknown member '%s'", manifest, (const gchar *) l->data);
        return FALSE;
      }

  node = json_object_get_member (object, "format");
  if (!is_string_node (node) || strcmp (json_node_get_string (node), MANIFEST_FORMAT) != 0)
    return set_manifest_error (error, manifest, "'format' is not \"" MANIFEST_FORMAT "\"");
  node = json_object_get_member (object, "version");
  if (!is_int_node (node) || json_node_get_int (node) != MANIFEST_VERSION)
    return set_manifest_error (error, manifest, "'version' is not 1, the version this library reads");
  node = json_object_get_member (object, "step");
  if (!is_int_node (node) || json_node_get_int (node) < 0)
    return set_manifest_error (error, manifest, "'step' is not a number of steps");
  self->step = json_node_get_int (node);
  node = json_object_get_member (object, "metadata");
  if (node != NULL && !read_metadata (self, manifest, node, error))
    return FALSE;
  node = json_object_get_member (object, "files");
  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return set_manifest_error (error, manifest, "'files' is not an array");
  files = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (files); i++)
    if (!verify_file (self, manifest, i, json_array_get_element (files, i), error))
      return FALSE;
  return TRUE;
}

/**
 * hp_checkpoint_step_open: (constructor)
 * @path: (type filename): a step directory, such as `checkpoint/step-200`
 * @error: return location for a [struct@GLib.Error]
 *
 * Opens a complete step: reads its manifest and checks that every file
 * it lists is there, with the listed size and SHA-256 checksum (which
 * reads each file once). A directory without a manifest, a malformed
 * manifest, or a file that is missing or differs from its entry is an
 * error naming the file ([HP_ERROR_IO][error@Hp.Error] for what cannot
 * be read, [HP_ERROR_FORMAT][error@Hp.Error] for what does not match).
 * Files that the manifest does not list are not part of the step.
 *
 * Returns: (transfer full): the step, or %NULL with @error set
 *
 * Since: 1.0
 */
HpCheckpointStep *
hp_checkpoint_step_open (const gchar  *path,
                         GError      **error)
{
  g_autoptr(HpCheckpointStep) self = NULL;
  g_autofree gchar *manifest = NULL;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_IO, "%s: %s", path,
                   g_file_test (path, G_FILE_TEST_EXISTS) ? "not a directory" : "no such directory");
      return NULL;
    }
  self = g_object_new (HP_TYPE_CHECKPOINT_STEP, NULL);
  self->path = g_strdup (path);
  manifest = g_build_filename (path, HP_CHECKPOINT_MANIFEST, NULL);
  if (!read_manifest (self, manifest, error))
    return NULL;
  self->complete = TRUE;
  return g_steal_pointer (&self);
}

/**
 * hp_checkpoint_step_get_path:
 * @self: a step
 *
 * Gets the step's directory.
 *
 * Returns: (type filename): [property@Hp.CheckpointStep:path]
 *
 * Since: 1.0
 */
const gchar *
hp_checkpoint_step_get_path (HpCheckpointStep *self)
{
  g_return_val_if_fail (HP_IS_CHECKPOINT_STEP (self), NULL);

  return self->path;
}

/**
 * hp_checkpoint_step_get_step:
 * @self: a step
 *
 * Gets the training step the checkpoint was taken after.
 *
 * Returns: [property@Hp.CheckpointStep:step]
 *
 * Since: 1.0
 */
gint64
hp_checkpoint_step_get_step (HpCheckpointStep *self)
{
  g_return_val_if_fail (HP_IS_CHECKPOINT_STEP (self), 0);

  return self->step;
}

/**
 * hp_checkpoint_step_get_complete:
 * @self: a step
 *
 * Gets whether the step is in place with its manifest.
 *
 * Returns: [property@Hp.CheckpointStep:complete]
 *
 * Since: 1.0
 */
gboolean
hp_checkpoint_step_get_complete (HpCheckpointStep *self)
{
  g_return_val_if_fail (HP_IS_CHECKPOINT_STEP (self), FALSE);

  return self->complete;
}

/**
 * hp_checkpoint_step_get_file_names:
 * @self: a step
 *
 * The files of a complete step, as its manifest lists them (the
 * manifest itself is not one of them); none for a staged step.
 *
 * Returns: (transfer full): the file names
 *
 * Since: 1.0
 */
GStrv
hp_checkpoint_step_get_file_names (HpCheckpointStep *self)
{
  GStrv names;

  g_return_val_if_fail (HP_IS_CHECKPOINT_STEP (self), NULL);

  names = g_new0 (gchar *, self->file_names->len + 1);
  for (guint i = 0; i < self->file_names->len; i++)
    names[i] = g_strdup (g_ptr_array_index (self->file_names, i));
  return names;
}

/**
 * hp_checkpoint_step_get_file:
 * @self: a complete step
 * @name: a file name, such as `model.safetensors`
 * @error: return location for a [struct@GLib.Error]
 *
 * The path of one of the step's files; a name its manifest does not
 * list is [HP_ERROR_IO][error@Hp.Error].
 *
 * Returns: (transfer full) (type filename): the path, or %NULL with
 *   @error set
 *
 * Since: 1.0
 */
gchar *
hp_checkpoint_step_get_file (HpCheckpointStep  *self,
                             const gchar       *name,
                             GError           **error)
{
  g_return_val_if_fail (HP_IS_CHECKPOINT_STEP (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  for (guint i = 0; i < self->file_names->len; i++)
    if (strcmp (g_ptr_array_index (self->file_names, i), name) == 0)
      return g_build_filename (self->path, name, NULL);
  g_set_error (error, HP_ERROR, HP_ERROR_IO, "%s: no file '%s' in this checkpoint", self->path, name);
  return NULL;
}

/**
 * hp_checkpoint_step_get_metadata:
 * @self: a step
 *
 * The step's string metadata: those of its manifest, or those set on a
 * staged step with [method@Hp.CheckpointStep.set_metadata].
 *
 * Returns: (transfer none) (element-type utf8 utf8): the metadata
 *
 * Since: 1.0
 */
GHashTable *
hp_checkpoint_step_get_metadata (HpCheckpointStep *self)
{
  g_return_val_if_fail (HP_IS_CHECKPOINT_STEP (self), NULL);

  return self->metadata;
}

/**
 * hp_checkpoint_step_set_metadata:
 * @self: a staged step
 * @key: the name
 * @value: the value
 *
 * Sets a string the manifest will hold, such as the position of the
 * training data; only a staged step takes metadata.
 *
 * Since: 1.0
 */
void
hp_checkpoint_step_set_metadata (HpCheckpointStep *self,
                                 const gchar      *key,
                                 const gchar      *value)
{
  g_return_if_fail (HP_IS_CHECKPOINT_STEP (self));
  g_return_if_fail (!self->complete);
  g_return_if_fail (key != NULL && g_utf8_validate (key, -1, NULL));
  g_return_if_fail (value != NULL && g_utf8_validate (value, -1, NULL));

  g_hash_table_insert (self->metadata, g_strdup (key), g_strdup (value));
}
