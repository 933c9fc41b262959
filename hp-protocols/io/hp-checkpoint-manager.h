/* hp-checkpoint-manager.h: a folder of checkpoint steps, written so
 * that a crash never leaves a step that looks complete
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-checkpoint-step.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_CHECKPOINT_MANAGER (hp_checkpoint_manager_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpCheckpointManager, hp_checkpoint_manager, HP, CHECKPOINT_MANAGER, GObject)

HP_AVAILABLE_IN_ALL
HpCheckpointManager *hp_checkpoint_manager_new         (const gchar          *folder);
HP_AVAILABLE_IN_ALL
const gchar         *hp_checkpoint_manager_get_folder  (HpCheckpointManager  *self);
HP_AVAILABLE_IN_ALL
guint                hp_checkpoint_manager_get_keep    (HpCheckpointManager  *self);
HP_AVAILABLE_IN_ALL
void                 hp_checkpoint_manager_set_keep    (HpCheckpointManager  *self,
                                                        guint                 keep);
HP_AVAILABLE_IN_ALL
gint64              *hp_checkpoint_manager_list_steps  (HpCheckpointManager  *self,
                                                        guint                *n_steps);
HP_AVAILABLE_IN_ALL
HpCheckpointStep    *hp_checkpoint_manager_stage       (HpCheckpointManager  *self,
                                                        gint64                step,
                                                        GError              **error);
HP_AVAILABLE_IN_ALL
gboolean             hp_checkpoint_manager_commit      (HpCheckpointManager  *self,
                                                        HpCheckpointStep     *staged,
                                                        GError              **error);
HP_AVAILABLE_IN_ALL
void                 hp_checkpoint_manager_discard     (HpCheckpointManager  *self,
                                                        HpCheckpointStep     *staged);
HP_AVAILABLE_IN_ALL
HpCheckpointStep    *hp_checkpoint_manager_open_step   (HpCheckpointManager  *self,
                                                        gint64                step,
                                                        GError              **error);
HP_AVAILABLE_IN_ALL
HpCheckpointStep    *hp_checkpoint_manager_open_latest (HpCheckpointManager  *self,
                                                        GError              **error);

G_END_DECLS
