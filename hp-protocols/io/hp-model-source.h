/* hp-model-source.h: a trained decoder on disk, an hp checkpoint step
 * or a Hugging Face directory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-checkpoint-step.h"
#include "hp-decoder.h"
#include "hp-device-mesh.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

/**
 * HP_MODEL_SOURCE_CONFIG_FILE:
 *
 * The file of a checkpoint step that holds the decoder's configuration
 * as [method@Hp.Config.to_json] writes it, `hp-config.json`.
 *
 * Since: 1.0
 */
#define HP_MODEL_SOURCE_CONFIG_FILE "hp-config.json"

#define HP_TYPE_MODEL_SOURCE (hp_model_source_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpModelSource, hp_model_source, HP, MODEL_SOURCE, GObject)

HP_AVAILABLE_IN_ALL
HpModelSource    *hp_model_source_open         (const gchar     *path,
                                                GError         **error);
HP_AVAILABLE_IN_ALL
const gchar      *hp_model_source_get_path     (HpModelSource   *self);
HP_AVAILABLE_IN_ALL
HpCheckpointStep *hp_model_source_get_step     (HpModelSource   *self);
HP_AVAILABLE_IN_ALL
HpDecoderConfig  *hp_model_source_load_config  (HpModelSource   *self,
                                                GError         **error);
HP_AVAILABLE_IN_ALL
gboolean          hp_model_source_load_weights (HpModelSource   *self,
                                                HpDecoder       *model,
                                                GError         **error);
HP_AVAILABLE_IN_ALL
HpDecoder        *hp_model_source_load_decoder (HpModelSource   *self,
                                                HpDeviceMesh    *tp_mesh,
                                                GError         **error);

G_END_DECLS
