/* hp-checkpoint-manager.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "hp-checkpoint-manager.h"
#include "hp-checkpoint-private.h"
#include "hp-error.h"

/**
 * HpCheckpointManager:
 *
 * A folder of checkpoints, one directory per step as torchtitan lays
 * them out:
 *
 * ```
 * checkpoint/
 *   step-100/  manifest.json, model.safetensors, optimizer.safetensors, …
 *   step-200/
 * ```
 *
 * Saving is crash-consistent. [method@Hp.CheckpointManager.stage] makes
 * a staging directory beside the steps (`.step-N.tmp-XXXXXX`), where the
 * caller writes the step's files; [method@Hp.CheckpointManager.commit]
 * lists them in the step's manifest with their sizes and SHA-256
 * checksums (see [class@Hp.CheckpointStep]), fsyncs every file, the
 * manifest and the directory, renames the directory to `step-N` in one
 * step, and fsyncs the folder. A crash or a full disk at any point
 * leaves either the new step complete or no `step-N` at all, and the
 * steps before it untouched. Only then are steps beyond
 * [property@Hp.CheckpointManager:keep] removed, oldest first, together
 * with staging directories that crashed saves left.
 *
 * [method@Hp.CheckpointManager.open_latest] opens the newest complete
 * step, verifying its manifest; a directory named like a step but
 * without a manifest is not a step (only a hand-made one can be).
 *
 * One job saves into a folder at a time.
 *
 * ```python
 * manager = Hp.CheckpointManager.new("checkpoint")
 * staged = manager.stage(200)
 * Hp.safetensors_save(states, None, os.path.join(staged.get_path(), "model.safetensors"))
 * manager.commit(staged)
 * latest = manager.open_latest()
 * model_file = latest.get_file("model.safetensors")
 * ```
 *
 * Since: 1.0
 */

#define STEP_PREFIX "step-"
#define STAGING_PREFIX ".step-"

struct _HpCheckpointManager
{
  GObject parent_instance;

  gchar *folder;
  guint keep;
};

G_DEFINE_FINAL_TYPE (HpCheckpointManager, hp_checkpoint_manager, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_FOLDER,
  PROP_KEEP,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_checkpoint_manager_finalize (GObject *object)
{
  HpCheckpointManager *self = HP_CHECKPOINT_MANAGER (object);

  g_clear_pointer (&self->folder, g_free);

  G_OBJECT_CLASS (hp_checkpoint_manager_parent_class)->finalize (object);
}

static void
hp_checkpoint_manager_get_property (GObject    *object,
                                    guint       prop_id,
                                    GValue     *value,
                                    GParamSpec *pspec)
{
  HpCheckpointManager *self = HP_CHECKPOINT_MANAGER (object);

  switch (prop_id)
    {
    case PROP_FOLDER:
      g_value_set_string (value, self->folder);
      break;

    case PROP_KEEP:
      g_value_set_uint (value, self->keep);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_checkpoint_manager_set_property (GObject      *object,
                                    guint         prop_id,
                                    const GValue *value,
                                    GParamSpec   *pspec)
{
  HpCheckpointManager *self = HP_CHECKPOINT_MANAGER (object);

  switch (prop_id)
    {
    case PROP_FOLDER:
      self->folder = g_value_dup_string (value);
      break;

    case PROP_KEEP:
      hp_checkpoint_manager_set_keep (self, g_value_get_uint (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_checkpoint_manager_class_init (HpCheckpointManagerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_checkpoint_manager_finalize;
  object_class->get_property = hp_checkpoint_manager_get_property;
  object_class->set_property = hp_checkpoint_manager_set_property;

  /**
   * HpCheckpointManager:folder: (type filename)
   *
   * The folder that holds the step directories; saving creates it.
   *
   * Since: 1.0
   */
  properties[PROP_FOLDER] =
    g_param_spec_string ("folder", NULL, NULL, ".",
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * HpCheckpointManager:keep:
   *
   * How many complete steps a commit leaves, the newest; 0 leaves all.
   *
   * Since: 1.0
   */
  properties[PROP_KEEP] =
    g_param_spec_uint ("keep", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_checkpoint_manager_init (HpCheckpointManager *self)
{
}

/**
 * hp_checkpoint_manager_new:
 * @folder: (type filename): the folder of the steps
 *
 * Makes a manager of the steps in @folder, which need not exist yet:
 * nothing is read or written until it is asked to.
 *
 * Returns: (transfer full): a manager of @folder
 *
 * Since: 1.0
 */
HpCheckpointManager *
hp_checkpoint_manager_new (const gchar *folder)
{
  g_return_val_if_fail (folder != NULL, NULL);

  return g_object_new (HP_TYPE_CHECKPOINT_MANAGER, "folder", folder, NULL);
}

/**
 * hp_checkpoint_manager_get_folder:
 * @self: a manager
 *
 * Gets the folder of the steps.
 *
 * Returns: (type filename): [property@Hp.CheckpointManager:folder]
 *
 * Since: 1.0
 */
const gchar *
hp_checkpoint_manager_get_folder (HpCheckpointManager *self)
{
  g_return_val_if_fail (HP_IS_CHECKPOINT_MANAGER (self), NULL);

  return self->folder;
}

/**
 * hp_checkpoint_manager_get_keep:
 * @self: a manager
 *
 * Gets how many complete steps a commit leaves.
 *
 * Returns: [property@Hp.CheckpointManager:keep]
 *
 * Since: 1.0
 */
guint
hp_checkpoint_manager_get_keep (HpCheckpointManager *self)
{
  g_return_val_if_fail (HP_IS_CHECKPOINT_MANAGER (self), 0);

  return self->keep;
}

/**
 * hp_checkpoint_manager_set_keep:
 * @self: a manager
 * @keep: how many complete steps to leave, 0 for all
 *
 * Sets [property@Hp.CheckpointManager:keep].
 *
 * Since: 1.0
 */
void
hp_checkpoint_manager_set_keep (HpCheckpointManager *self,
                                guint                keep)
{
  g_return_if_fail (HP_IS_CHECKPOINT_MANAGER (self));

  if (self->keep == keep)
    return;
  self->keep = keep;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_KEEP]);
}

static gchar *
step_path (HpCheckpointManager *self,
           gint64               step)
{
  g_autofree gchar *name = g_strdup_printf (STEP_PREFIX "%" G_GINT64_FORMAT, step);

  return g_build_filename (self->folder, name, NULL);
}

/* The step of a directory name `step-N`, N written as printf writes it */
static gboolean
parse_step_name (const gchar *name,
                 gint64      *step)
{
  guint64 parsed;
  g_autofree gchar *canonical = NULL;

  if (!g_str_has_prefix (name, STEP_PREFIX) ||
      !g_ascii_string_to_unsigned (name + strlen (STEP_PREFIX), 10, 0, G_MAXINT64, &parsed, NULL))
    return FALSE;
  canonical = g_strdup_printf (STEP_PREFIX "%" G_GUINT64_FORMAT, parsed);
  *step = (gint64) parsed;
  return strcmp (canonical, name) == 0;
}

static gint
compare_steps (gconstpointer a,
               gconstpointer b)
{
  gint64 x = *(const gint64 *) a;
  gint64 y = *(const gint64 *) b;

  return (x > y) - (x < y);
}

static gboolean
has_manifest (HpCheckpointManager *self,
              gint64               step)
{
  g_autofree gchar *dir = step_path (self, step);
  g_autofree gchar *manifest = g_build_filename (dir, HP_CHECKPOINT_MANIFEST, NULL);

  return g_file_test (manifest, G_FILE_TEST_IS_REGULAR);
}

static GArray *
complete_steps (HpCheckpointManager *self)
{
  GArray *steps = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr(GDir) dir = g_dir_open (self->folder, 0, NULL);
  const gchar *name;
  gint64 step;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (parse_step_name (name, &step) && has_manifest (self, step))
      g_array_append_val (steps, step);
  g_array_sort (steps, compare_steps);
  return steps;
}

/**
 * hp_checkpoint_manager_list_steps:
 * @self: a manager
 * @n_steps: (out): the number of steps
 *
 * The complete steps of the folder, oldest first: its `step-N`
 * directories with a manifest (which this does not verify). A folder
 * that does not exist has none.
 *
 * Returns: (array length=n_steps) (transfer full): the step numbers
 *
 * Since: 1.0
 */
gint64 *
hp_checkpoint_manager_list_steps (HpCheckpointManager *self,
                                  guint               *n_steps)
{
  GArray *steps;

  g_return_val_if_fail (HP_IS_CHECKPOINT_MANAGER (self), NULL);
  g_return_val_if_fail (n_steps != NULL, NULL);

  steps = complete_steps (self);
  *n_steps = steps->len;
  return (gint64 *) g_array_free (steps, FALSE);
}

/**
 * hp_checkpoint_manager_stage:
 * @self: a manager
 * @step: the step to save, 0 or more
 * @error: return location for a [struct@GLib.Error]
 *
 * Starts saving @step: creates the folder if needed and a new staging
 * directory in it, [property@Hp.CheckpointStep:path] of the staged step,
 * where the caller writes the step's files (regular files, flat).
 * Finish with [method@Hp.CheckpointManager.commit], or drop the files
 * with [method@Hp.CheckpointManager.discard]. A step that is already
 * complete in the folder is [HP_ERROR_IO][error@Hp.Error]: steps are
 * never overwritten.
 *
 * Returns: (transfer full): the staged step, or %NULL with @error set
 *
 * Since: 1.0
 */
HpCheckpointStep *
hp_checkpoint_manager_stage (HpCheckpointManager  *self,
                             gint64                step,
                             GError              **error)
{
  g_autofree gchar *final_path = NULL;
  g_autofree gchar *template = NULL;
  g_autofree gchar *staging = NULL;

  g_return_val_if_fail (HP_IS_CHECKPOINT_MANAGER (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (step < 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "step %" G_GINT64_FORMAT ": a checkpoint is taken after step 0 or later", step);
      return NULL;
    }
  final_path = step_path (self, step);
  if (g_file_test (final_path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_IO,
                   "%s: already exists; a checkpoint step is never overwritten", final_path);
      return NULL;
    }
  if (g_mkdir_with_parents (self->folder, 0777) != 0)
    {
      _hp_checkpoint_io_error (error, self->folder, "cannot create", errno);
      return NULL;
    }
  template = g_strdup_printf (STAGING_PREFIX "%" G_GINT64_FORMAT ".tmp-XXXXXX", step);
  staging = g_build_filename (self->folder, template, NULL);
  if (g_mkdtemp_full (staging, 0777) == NULL)
    {
      _hp_checkpoint_io_error (error, self->folder, "cannot create a staging directory", errno);
      return NULL;
    }
  return _hp_checkpoint_step_new_staging (staging, step);
}

/* Removes a step: renamed out of the steps first, so that a crash while
 * its files go never leaves a step-N that lacks some of them */
static gboolean
remove_step (HpCheckpointManager  *self,
             gint64                step,
             GError              **error)
{
  g_autofree gchar *path = step_path (self, step);
  g_autofree gchar *template = g_strdup_printf (STAGING_PREFIX "%" G_GINT64_FORMAT ".old-XXXXXX", step);
  g_autofree gchar *doomed = g_build_filename (self->folder, template, NULL);

  if (g_mkdtemp (doomed) == NULL)
    return _hp_checkpoint_io_error (error, path, "cannot remove", errno);
  if (g_rename (path, doomed) != 0)
    {
      int saved_errno = errno;

      g_rmdir (doomed);
      return _hp_checkpoint_io_error (error, path, "cannot remove", saved_errno);
    }
  return _hp_checkpoint_remove_directory (doomed, error);
}

/* Removes what saves that did not finish left: staging directories */
static gboolean
remove_leftovers (HpCheckpointManager  *self,
                  GError              **error)
{
  g_autoptr(GDir) dir = g_dir_open (self->folder, 0, error);
  g_autoptr(GPtrArray) leftovers = g_ptr_array_new_with_free_func (g_free);
  const gchar *name;

  if (dir == NULL)
    return FALSE;
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, STAGING_PREFIX))
      g_ptr_array_add (leftovers, g_build_filename (self->folder, name, NULL));
  for (guint i = 0; i < leftovers->len; i++)
    if (!_hp_checkpoint_remove_directory (g_ptr_array_index (leftovers, i), error))
      return FALSE;
  return TRUE;
}

static gboolean
is_staged_here (HpCheckpointManager *self,
                HpCheckpointStep    *staged)
{
  g_autofree gchar *parent = g_path_get_dirname (hp_checkpoint_step_get_path (staged));
  g_autofree gchar *folder = g_canonicalize_filename (self->folder, NULL);
  g_autofree gchar *canonical_parent = g_canonicalize_filename (parent, NULL);

  return !hp_checkpoint_step_get_complete (staged) && strcmp (folder, canonical_parent) == 0;
}

/**
 * hp_checkpoint_manager_commit:
 * @self: a manager
 * @staged: a step staged by [method@Hp.CheckpointManager.stage] of @self
 * @error: return location for a [struct@GLib.Error]
 *
 * Puts @staged in place as `step-N`, durably and in one step (see
 * [class@Hp.CheckpointManager]); @staged is then complete, with its
 * path and manifest. Then removes the oldest complete steps beyond
 * [property@Hp.CheckpointManager:keep] and the staging directories of
 * saves that did not finish.
 *
 * An error before the rename (a file that cannot be read or synced, a
 * subdirectory in the staging directory, a full disk) leaves @staged
 * staged and the folder's steps as they were; the caller may
 * [method@Hp.CheckpointManager.discard] it. An error while removing old
 * steps comes after the new step is complete.
 *
 * Returns: whether the step is in place and the old steps removed
 *
 * Since: 1.0
 */
gboolean
hp_checkpoint_manager_commit (HpCheckpointManager  *self,
                              HpCheckpointStep     *staged,
                              GError              **error)
{
  g_autofree gchar *final_path = NULL;
  g_autoptr(GArray) steps = NULL;

  g_return_val_if_fail (HP_IS_CHECKPOINT_MANAGER (self), FALSE);
  g_return_val_if_fail (HP_IS_CHECKPOINT_STEP (staged), FALSE);
  g_return_val_if_fail (is_staged_here (self, staged), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  final_path = step_path (self, hp_checkpoint_step_get_step (staged));
  if (!_hp_checkpoint_step_seal (staged, final_path, error))
    return FALSE;

  steps = complete_steps (self);
  for (guint i = 0; self->keep > 0 && i + self->keep < steps->len; i++)
    if (!remove_step (self, g_array_index (steps, gint64, i), error))
      return FALSE;
  return remove_leftovers (self, error);
}

/**
 * hp_checkpoint_manager_discard:
 * @self: a manager
 * @staged: a step staged by [method@Hp.CheckpointManager.stage] of @self
 *
 * Removes the staging directory of @staged and what was written in it,
 * as far as it can; the folder's steps are untouched.
 *
 * Since: 1.0
 */
void
hp_checkpoint_manager_discard (HpCheckpointManager *self,
                               HpCheckpointStep    *staged)
{
  g_return_if_fail (HP_IS_CHECKPOINT_MANAGER (self));
  g_return_if_fail (HP_IS_CHECKPOINT_STEP (staged));
  g_return_if_fail (is_staged_here (self, staged));

  /* what cannot be removed now goes with the next commit's leftovers */
  _hp_checkpoint_remove_directory (hp_checkpoint_step_get_path (staged), NULL);
}

/**
 * hp_checkpoint_manager_open_step:
 * @self: a manager
 * @step: a step number
 * @error: return location for a [struct@GLib.Error]
 *
 * Opens `step-N` of the folder as [ctor@Hp.CheckpointStep.open] does,
 * and checks that its manifest is of step @step.
 *
 * Returns: (transfer full): the step, or %NULL with @error set
 *
 * Since: 1.0
 */
HpCheckpointStep *
hp_checkpoint_manager_open_step (HpCheckpointManager  *self,
                                 gint64                step,
                                 GError              **error)
{
  g_autofree gchar *path = NULL;
  g_autoptr(HpCheckpointStep) opened = NULL;

  g_return_val_if_fail (HP_IS_CHECKPOINT_MANAGER (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  path = step_path (self, step);
  opened = hp_checkpoint_step_open (path, error);
  if (opened != NULL && hp_checkpoint_step_get_step (opened) != step)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "%s/%s: the manifest is of step %" G_GINT64_FORMAT, path, HP_CHECKPOINT_MANIFEST,
                   hp_checkpoint_step_get_step (opened));
      return NULL;
    }
  return g_steal_pointer (&opened);
}

/**
 * hp_checkpoint_manager_open_latest:
 * @self: a manager
 * @error: return location for a [struct@GLib.Error]
 *
 * Opens the newest complete step, verified as
 * [method@Hp.CheckpointManager.open_step] does. A folder without a
 * complete step is [HP_ERROR_IO][error@Hp.Error]; so is a newest step
 * that fails verification: the error names its file, and an older step
 * is not taken instead (open it by its number).
 *
 * Returns: (transfer full): the newest step, or %NULL with @error set
 *
 * Since: 1.0
 */
HpCheckpointStep *
hp_checkpoint_manager_open_latest (HpCheckpointManager  *self,
                                   GError              **error)
{
  g_autoptr(GArray) steps = NULL;

  g_return_val_if_fail (HP_IS_CHECKPOINT_MANAGER (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  steps = complete_steps (self);
  if (steps->len == 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_IO,
                   "%s: no complete checkpoint (a " STEP_PREFIX "N directory with a %s)",
                   self->folder, HP_CHECKPOINT_MANIFEST);
      return NULL;
    }
  return hp_checkpoint_manager_open_step (self, g_array_index (steps, gint64, steps->len - 1), error);
}
