/* hp-safetensors-file.h: one safetensors file, memory-mapped
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-tensor.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_SAFETENSORS_FILE (hp_safetensors_file_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpSafetensorsFile, hp_safetensors_file, HP, SAFETENSORS_FILE, GObject)

HP_AVAILABLE_IN_ALL
HpSafetensorsFile *hp_safetensors_file_new_for_path  (const gchar        *path,
                                                      GError            **error);
HP_AVAILABLE_IN_ALL
HpSafetensorsFile *hp_safetensors_file_new_from_bytes (GBytes            *bytes,
                                                      const gchar        *name,
                                                      GError            **error);

HP_AVAILABLE_IN_ALL
const gchar       *hp_safetensors_file_get_path      (HpSafetensorsFile  *self);
HP_AVAILABLE_IN_ALL
guint              hp_safetensors_file_get_n_tensors (HpSafetensorsFile  *self);
HP_AVAILABLE_IN_ALL
GStrv              hp_safetensors_file_get_names     (HpSafetensorsFile  *self);
HP_AVAILABLE_IN_ALL
gboolean           hp_safetensors_file_contains      (HpSafetensorsFile  *self,
                                                      const gchar        *name);
HP_AVAILABLE_IN_ALL
GHashTable        *hp_safetensors_file_get_metadata  (HpSafetensorsFile  *self);
HP_AVAILABLE_IN_ALL
const gchar       *hp_safetensors_file_get_dtype     (HpSafetensorsFile  *self,
                                                      const gchar        *name,
                                                      GError            **error);
HP_AVAILABLE_IN_ALL
const gint64      *hp_safetensors_file_get_shape     (HpSafetensorsFile  *self,
                                                      const gchar        *name,
                                                      guint              *ndim,
                                                      GError            **error);
HP_AVAILABLE_IN_ALL
HpTensor          *hp_safetensors_file_get_tensor    (HpSafetensorsFile  *self,
                                                      const gchar        *name,
                                                      GError            **error);
HP_AVAILABLE_IN_ALL
HpTensor          *hp_safetensors_file_get_tensor_slice (HpSafetensorsFile *self,
                                                      const gchar        *name,
                                                      const gint64       *offsets,
                                                      guint               n_offsets,
                                                      const gint64       *lengths,
                                                      guint               n_lengths,
                                                      GError            **error);

G_END_DECLS
