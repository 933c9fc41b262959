/* hp-decoder-state-dict-adapter.h: HpDecoder states under Hugging Face
 * Llama names
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-base-state-dict-adapter.h"
#include "hp-decoder.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_DECODER_STATE_DICT_ADAPTER (hp_decoder_state_dict_adapter_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpDecoderStateDictAdapter, hp_decoder_state_dict_adapter, HP, DECODER_STATE_DICT_ADAPTER, HpBaseStateDictAdapter)

HP_AVAILABLE_IN_ALL
HpDecoderStateDictAdapter *hp_decoder_state_dict_adapter_new              (HpDecoderConfig           *model_config);
HP_AVAILABLE_IN_ALL
HpDecoderConfig           *hp_decoder_state_dict_adapter_get_model_config (HpDecoderStateDictAdapter *self);

HP_AVAILABLE_IN_ALL
HpDecoderStateDictAdapter *hp_decoder_state_dict_adapter_new_from_hf_config (const gchar  *hf_config,
                                                                             gssize        length,
                                                                             GError      **error);
HP_AVAILABLE_IN_ALL
gchar                     *hp_decoder_state_dict_adapter_to_hf_config       (HpDecoderStateDictAdapter  *self,
                                                                             GError                    **error);

G_END_DECLS
