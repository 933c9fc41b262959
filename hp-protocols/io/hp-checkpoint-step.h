/* hp-checkpoint-step.h: one step directory of a checkpoint folder, its
 * files tied together by a manifest
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-version-macros.h"

G_BEGIN_DECLS

/**
 * HP_CHECKPOINT_MANIFEST:
 *
 * The file name of a step's manifest, `manifest.json`.
 *
 * Since: 1.0
 */
#define HP_CHECKPOINT_MANIFEST "manifest.json"

#define HP_TYPE_CHECKPOINT_STEP (hp_checkpoint_step_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpCheckpointStep, hp_checkpoint_step, HP, CHECKPOINT_STEP, GObject)

HP_AVAILABLE_IN_ALL
HpCheckpointStep *hp_checkpoint_step_open           (const gchar       *path,
                                                     GError           **error);
HP_AVAILABLE_IN_ALL
const gchar      *hp_checkpoint_step_get_path       (HpCheckpointStep  *self);
HP_AVAILABLE_IN_ALL
gint64            hp_checkpoint_step_get_step       (HpCheckpointStep  *self);
HP_AVAILABLE_IN_ALL
gboolean          hp_checkpoint_step_get_complete   (HpCheckpointStep  *self);
HP_AVAILABLE_IN_ALL
GStrv             hp_checkpoint_step_get_file_names (HpCheckpointStep  *self);
HP_AVAILABLE_IN_ALL
gchar            *hp_checkpoint_step_get_file       (HpCheckpointStep  *self,
                                                     const gchar       *name,
                                                     GError           **error);
HP_AVAILABLE_IN_ALL
GHashTable       *hp_checkpoint_step_get_metadata   (HpCheckpointStep  *self);
HP_AVAILABLE_IN_ALL
void              hp_checkpoint_step_set_metadata   (HpCheckpointStep  *self,
                                                     const gchar       *key,
                                                     const gchar       *value);

G_END_DECLS
