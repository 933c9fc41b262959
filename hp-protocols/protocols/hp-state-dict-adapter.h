/* hp-state-dict-adapter.h: conversion between state dicts and Hugging Face
 * checkpoints
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-base-model-config.h"
#include "hp-dtype.h"
#include "hp-state-dict.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_STATE_DICT_ADAPTER (hp_state_dict_adapter_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE (HpStateDictAdapter, hp_state_dict_adapter, HP, STATE_DICT_ADAPTER, GObject)

/**
 * HpStateDictAdapterInterface:
 * @g_iface: the parent interface
 * @to_hf: converts a state dict of the model into the names and shapes
 *   of the Hugging Face checkpoint
 * @from_hf: converts a state dict with the names and shapes of the
 *   Hugging Face checkpoint into one of the model
 * @load_hf_state_dict: reads a Hugging Face checkpoint; the default
 *   fails with [HP_ERROR_NOT_SUPPORTED][error@Hp.Error]
 * @save_hf_state_dict: writes a Hugging Face checkpoint; the default
 *   fails with [HP_ERROR_NOT_SUPPORTED][error@Hp.Error]
 *
 * The interface of state dict adapters. An implementation provides
 * @to_hf and @from_hf; the file functions have defaults.
 *
 * Since: 1.0
 */
struct _HpStateDictAdapterInterface
{
  GTypeInterface g_iface;

  HpStateDict *(*to_hf)              (HpStateDictAdapter  *self,
                                      HpStateDict         *sd,
                                      GError             **error);
  HpStateDict *(*from_hf)            (HpStateDictAdapter  *self,
                                      HpStateDict         *hf_sd,
                                      GError             **error);
  HpStateDict *(*load_hf_state_dict) (HpStateDictAdapter  *self,
                                      const gchar         *path,
                                      HpBaseModelConfig   *model_config,
                                      HpDType              dtype,
                                      GError             **error);
  gboolean     (*save_hf_state_dict) (HpStateDictAdapter  *self,
                                      HpStateDict         *sd,
                                      HpBaseModelConfig   *model_config,
                                      const gchar         *path,
                                      GError             **error);
};

HP_AVAILABLE_IN_ALL
HpStateDict *hp_state_dict_adapter_to_hf              (HpStateDictAdapter  *self,
                                                       HpStateDict         *sd,
                                                       GError             **error);
HP_AVAILABLE_IN_ALL
HpStateDict *hp_state_dict_adapter_from_hf            (HpStateDictAdapter  *self,
                                                       HpStateDict         *hf_sd,
                                                       GError             **error);
HP_AVAILABLE_IN_ALL
HpStateDict *hp_state_dict_adapter_load_hf_state_dict (HpStateDictAdapter  *self,
                                                       const gchar         *path,
                                                       HpBaseModelConfig   *model_config,
                                                       HpDType              dtype,
                                                       GError             **error);
HP_AVAILABLE_IN_ALL
gboolean     hp_state_dict_adapter_save_hf_state_dict (HpStateDictAdapter  *self,
                                                       HpStateDict         *sd,
                                                       HpBaseModelConfig   *model_config,
                                                       const gchar         *path,
                                                       GError             **error);

G_END_DECLS
