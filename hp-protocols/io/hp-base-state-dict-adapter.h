/* hp-base-state-dict-adapter.h: Hugging Face checkpoints on disk
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-safetensors.h"
#include "hp-state-dict-adapter.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_BASE_STATE_DICT_ADAPTER (hp_base_state_dict_adapter_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (HpBaseStateDictAdapter, hp_base_state_dict_adapter, HP, BASE_STATE_DICT_ADAPTER, GObject)

/**
 * HpBaseStateDictAdapterClass::from_hf:
 *
 * The reverse of [vfunc@Hp.BaseStateDictAdapter.to_hf]
 *
 * Since: 1.0
 */

/**
 * HpBaseStateDictAdapterClass::to_hf:
 *
 * Renames (and reshapes) a state dict to the Hugging Face names
 *
 * Since: 1.0
 */

/**
 * HpBaseStateDictAdapterClass:
 * @parent_class: the parent class
 * @to_hf: renames (and reshapes) a state dict to the Hugging Face names
 * @from_hf: the reverse of @to_hf
 *
 * The class of adapters that read and write Hugging Face safetensors
 * checkpoints; a subclass implements the renaming.
 *
 * Since: 1.0
 */
struct _HpBaseStateDictAdapterClass
{
  GObjectClass parent_class;

  HpStateDict *(*to_hf)   (HpBaseStateDictAdapter  *self,
                           HpStateDict             *state_dict,
                           GError                 **error);
  HpStateDict *(*from_hf) (HpBaseStateDictAdapter  *self,
                           HpStateDict             *hf_state_dict,
                           GError                 **error);

  /*< private >*/
  gpointer padding[8];
};

HP_AVAILABLE_IN_ALL
guint64     hp_base_state_dict_adapter_get_max_shard_size     (HpBaseStateDictAdapter  *self);
HP_AVAILABLE_IN_ALL
void        hp_base_state_dict_adapter_set_max_shard_size     (HpBaseStateDictAdapter  *self,
                                                               guint64                  max_shard_size);
HP_AVAILABLE_IN_ALL
HpSafetensorsDType hp_base_state_dict_adapter_get_save_dtype  (HpBaseStateDictAdapter  *self);
HP_AVAILABLE_IN_ALL
void        hp_base_state_dict_adapter_set_save_dtype         (HpBaseStateDictAdapter  *self,
                                                               HpSafetensorsDType       save_dtype);
HP_AVAILABLE_IN_ALL
GHashTable *hp_base_state_dict_adapter_fqn_to_index_mapping   (HpBaseStateDictAdapter  *self,
                                                               const gchar             *path,
                                                               GError                 **error);

G_END_DECLS
