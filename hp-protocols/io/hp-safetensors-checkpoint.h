/* hp-safetensors-checkpoint.h: a checkpoint of one safetensors file or
 * of shards listed by an index
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-safetensors-file.h"
#include "hp-state-dict.h"
#include "hp-tensor.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_SAFETENSORS_CHECKPOINT (hp_safetensors_checkpoint_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpSafetensorsCheckpoint, hp_safetensors_checkpoint, HP, SAFETENSORS_CHECKPOINT, GObject)

HP_AVAILABLE_IN_ALL
HpSafetensorsCheckpoint *hp_safetensors_checkpoint_new_for_path (const gchar              *path,
                                                                 GError                  **error);

HP_AVAILABLE_IN_ALL
const gchar       *hp_safetensors_checkpoint_get_path      (HpSafetensorsCheckpoint  *self);
HP_AVAILABLE_IN_ALL
guint              hp_safetensors_checkpoint_get_n_tensors (HpSafetensorsCheckpoint  *self);
HP_AVAILABLE_IN_ALL
guint              hp_safetensors_checkpoint_get_n_files   (HpSafetensorsCheckpoint  *self);
HP_AVAILABLE_IN_ALL
HpSafetensorsFile *hp_safetensors_checkpoint_get_file      (HpSafetensorsCheckpoint  *self,
                                                            guint                     index);
HP_AVAILABLE_IN_ALL
GStrv              hp_safetensors_checkpoint_get_names     (HpSafetensorsCheckpoint  *self);
HP_AVAILABLE_IN_ALL
gboolean           hp_safetensors_checkpoint_contains      (HpSafetensorsCheckpoint  *self,
                                                            const gchar              *name);
HP_AVAILABLE_IN_ALL
GHashTable        *hp_safetensors_checkpoint_get_metadata  (HpSafetensorsCheckpoint  *self);
HP_AVAILABLE_IN_ALL
HpSafetensorsFile *hp_safetensors_checkpoint_lookup_file   (HpSafetensorsCheckpoint  *self,
                                                            const gchar              *name,
                                                            GError                  **error);
HP_AVAILABLE_IN_ALL
HpTensor          *hp_safetensors_checkpoint_get_tensor    (HpSafetensorsCheckpoint  *self,
                                                            const gchar              *name,
                                                            GError                  **error);
HP_AVAILABLE_IN_ALL
HpTensor          *hp_safetensors_checkpoint_get_tensor_slice (HpSafetensorsCheckpoint *self,
                                                            const gchar              *name,
                                                            const gint64             *offsets,
                                                            guint                     n_offsets,
                                                            const gint64             *lengths,
                                                            guint                     n_lengths,
                                                            GError                  **error);
HP_AVAILABLE_IN_ALL
HpStateDict       *hp_safetensors_checkpoint_to_state_dict (HpSafetensorsCheckpoint  *self,
                                                            GError                  **error);

G_END_DECLS
