/* hp-checkpoint-private.h: what HpCheckpointManager needs of a step
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-checkpoint-step.h"

G_BEGIN_DECLS

/* A step being written in the staging directory @path */
HpCheckpointStep *_hp_checkpoint_step_new_staging  (const gchar       *path,
                                                    gint64             step);

/* Lists every file of the staging directory in a manifest, makes the
 * files, the manifest and the directory durable (fsync), renames the
 * directory to @final_path in one step and makes that rename durable;
 * the step is then complete at @final_path */
gboolean          _hp_checkpoint_step_seal         (HpCheckpointStep  *self,
                                                    const gchar       *final_path,
                                                    GError           **error);

/* Removes the directory @path and the files in it */
gboolean          _hp_checkpoint_remove_directory  (const gchar       *path,
                                                    GError           **error);

/* Sets "PATH: WHAT: strerror" as HP_ERROR_IO; returns FALSE */
gboolean          _hp_checkpoint_io_error          (GError           **error,
                                                    const gchar       *path,
                                                    const gchar       *what,
                                                    int                saved_errno);

G_END_DECLS
