/* hp-state-dict-adapter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-error-private.h"
#include "hp-error.h"
#include "hp-state-dict-adapter.h"

/**
 * HpStateDictAdapter:
 *
 * Converts between the state dict of a model and a Hugging Face
 * checkpoint of the same model: the names (`tok_embeddings.weight`
 * here, `model.embed_tokens.weight` there), and where they differ the
 * shapes and layouts of the tensors.
 *
 * An implementation provides [vfunc@Hp.StateDictAdapter.to_hf] and
 * [vfunc@Hp.StateDictAdapter.from_hf]. Reading and writing the
 * checkpoint files (`model.safetensors`, or
 * `model.safetensors.index.json` and its shards) goes through
 * [method@Hp.StateDictAdapter.load_hf_state_dict] and
 * [method@Hp.StateDictAdapter.save_hf_state_dict]; their default
 * implementations report [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] until the library
 * reads and writes safetensors files, and an implementation may
 * provide its own.
 *
 * A [class@Hp.ModelSpec] names the adapter type of its model
 * ([property@Hp.ModelSpec:state-dict-adapter-type]).
 *
 * Since: 1.0
 */

G_DEFINE_INTERFACE (HpStateDictAdapter, hp_state_dict_adapter, G_TYPE_OBJECT)

static HpStateDict *
hp_state_dict_adapter_real_load_hf_state_dict (HpStateDictAdapter  *self,
                                               const gchar         *path,
                                               HpBaseModelConfig   *model_config,
                                               HpDType              dtype,
                                               GError             **error)
{
  g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
               "%s cannot load the Hugging Face checkpoint '%s': reading safetensors "
               "files is not available yet (it comes with checkpoint support)",
               G_OBJECT_TYPE_NAME (self), path);
  return NULL;
}

static gboolean
hp_state_dict_adapter_real_save_hf_state_dict (HpStateDictAdapter  *self,
                                               HpStateDict         *sd,
                                               HpBaseModelConfig   *model_config,
                                               const gchar         *path,
                                               GError             **error)
{
  g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
               "%s cannot save the Hugging Face checkpoint '%s': writing safetensors "
               "files is not available yet (it comes with checkpoint support)",
               G_OBJECT_TYPE_NAME (self), path);
  return FALSE;
}

static void
hp_state_dict_adapter_default_init (HpStateDictAdapterInterface *iface)
{
  iface->load_hf_state_dict = hp_state_dict_adapter_real_load_hf_state_dict;
  iface->save_hf_state_dict = hp_state_dict_adapter_real_save_hf_state_dict;
}

static HpStateDict *
convert (HpStateDictAdapter  *self,
         const gchar         *vfunc,
         HpStateDict *      (*func) (HpStateDictAdapter *, HpStateDict *, GError **),
         HpStateDict         *sd,
         GError             **error)
{
  GError *local_error = NULL;
  HpStateDict *result;

  if (func == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "%s does not implement %s", G_OBJECT_TYPE_NAME (self), vfunc);
      return NULL;
    }

  result = func (self, sd, &local_error);
  return _hp_error_check_returned (result, local_error, HP_TYPE_STATE_DICT, "state dict", error,
                                   "%s.%s", G_OBJECT_TYPE_NAME (self), vfunc);
}

/**
 * hp_state_dict_adapter_to_hf:
 * @self: a [iface@Hp.StateDictAdapter]
 * @sd: a state dict of the model
 * @error: return location for a [struct@GLib.Error]
 *
 * Converts a state dict of the model into one with the names and
 * shapes of the Hugging Face checkpoint. @sd is left as it was.
 *
 * Returns: (transfer full): a new state dict, or %NULL with @error set:
 *   [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] if the implementation has no
 *   [vfunc@Hp.StateDictAdapter.to_hf], [HP_ERROR_STATE][error@Hp.Error] if it returned
 *   nothing without an error or something that is not a state dict,
 *   or the implementation's own error
 *
 * Since: 1.0
 */
HpStateDict *
hp_state_dict_adapter_to_hf (HpStateDictAdapter  *self,
                             HpStateDict         *sd,
                             GError             **error)
{
  g_return_val_if_fail (HP_IS_STATE_DICT_ADAPTER (self), NULL);
  g_return_val_if_fail (HP_IS_STATE_DICT (sd), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return convert (self, "to_hf", HP_STATE_DICT_ADAPTER_GET_IFACE (self)->to_hf, sd, error);
}

/**
 * hp_state_dict_adapter_from_hf:
 * @self: a [iface@Hp.StateDictAdapter]
 * @hf_sd: a state dict with the names and shapes of the Hugging Face
 *   checkpoint
 * @error: return location for a [struct@GLib.Error]
 *
 * Converts a state dict read from a Hugging Face checkpoint into a
 * state dict of the model. @hf_sd is left as it was.
 *
 * Returns: (transfer full): a new state dict, or %NULL with @error set:
 *   [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] if the implementation has no
 *   [vfunc@Hp.StateDictAdapter.from_hf], [HP_ERROR_STATE][error@Hp.Error] if it
 *   returned nothing without an error or something that is not a state
 *   dict, or the implementation's own error
 *
 * Since: 1.0
 */
HpStateDict *
hp_state_dict_adapter_from_hf (HpStateDictAdapter  *self,
                               HpStateDict         *hf_sd,
                               GError             **error)
{
  g_return_val_if_fail (HP_IS_STATE_DICT_ADAPTER (self), NULL);
  g_return_val_if_fail (HP_IS_STATE_DICT (hf_sd), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return convert (self, "from_hf", HP_STATE_DICT_ADAPTER_GET_IFACE (self)->from_hf, hf_sd, error);
}

/**
 * hp_state_dict_adapter_load_hf_state_dict:
 * @self: a [iface@Hp.StateDictAdapter]
 * @path: the checkpoint directory, holding `model.safetensors` or
 *   `model.safetensors.index.json` and the shard files it names
 * @model_config: (nullable): the configuration of the model the
 *   checkpoint is for, when the implementation needs it
 * @dtype: the element type of the tensors returned
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads a Hugging Face checkpoint, keeping its names and shapes; see
 * [method@Hp.StateDictAdapter.from_hf] for converting it.
 *
 * Returns: (transfer full): the checkpoint's tensors, or %NULL with
 *   @error set: [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] from the default
 *   implementation, [HP_ERROR_STATE][error@Hp.Error] if the implementation returned
 *   nothing without an error, or the implementation's own error
 *
 * Since: 1.0
 */
HpStateDict *
hp_state_dict_adapter_load_hf_state_dict (HpStateDictAdapter  *self,
                                          const gchar         *path,
                                          HpBaseModelConfig   *model_config,
                                          HpDType              dtype,
                                          GError             **error)
{
  HpStateDictAdapterInterface *iface;
  GError *local_error = NULL;
  HpStateDict *result;

  g_return_val_if_fail (HP_IS_STATE_DICT_ADAPTER (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (model_config == NULL || HP_IS_BASE_MODEL_CONFIG (model_config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  iface = HP_STATE_DICT_ADAPTER_GET_IFACE (self);
  if (iface->load_hf_state_dict == NULL)
    return hp_state_dict_adapter_real_load_hf_state_dict (self, path, model_config, dtype, error);

  result = iface->load_hf_state_dict (self, path, model_config, dtype, &local_error);
  return _hp_error_check_returned (result, local_error, HP_TYPE_STATE_DICT, "state dict", error,
                                   "%s.load_hf_state_dict", G_OBJECT_TYPE_NAME (self));
}

/**
 * hp_state_dict_adapter_save_hf_state_dict:
 * @self: a [iface@Hp.StateDictAdapter]
 * @sd: the tensors to write, with the names and shapes of the Hugging
 *   Face checkpoint (see [method@Hp.StateDictAdapter.to_hf])
 * @model_config: (nullable): the configuration of the model, when the
 *   implementation needs it
 * @path: the checkpoint directory to write
 * @error: return location for a [struct@GLib.Error]
 *
 * Writes a Hugging Face checkpoint.
 *
 * Returns: %TRUE, or %FALSE with @error set: [HP_ERROR_NOT_SUPPORTED][error@Hp.Error]
 *   from the default implementation, [HP_ERROR_STATE][error@Hp.Error] if the
 *   implementation failed without an error, or the implementation's own
 *   error
 *
 * Since: 1.0
 */
gboolean
hp_state_dict_adapter_save_hf_state_dict (HpStateDictAdapter  *self,
                                          HpStateDict         *sd,
                                          HpBaseModelConfig   *model_config,
                                          const gchar         *path,
                                          GError             **error)
{
  HpStateDictAdapterInterface *iface;
  GError *local_error = NULL;
  gboolean ok;

  g_return_val_if_fail (HP_IS_STATE_DICT_ADAPTER (self), FALSE);
  g_return_val_if_fail (HP_IS_STATE_DICT (sd), FALSE);
  g_return_val_if_fail (model_config == NULL || HP_IS_BASE_MODEL_CONFIG (model_config), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  iface = HP_STATE_DICT_ADAPTER_GET_IFACE (self);
  if (iface->save_hf_state_dict == NULL)
    return hp_state_dict_adapter_real_save_hf_state_dict (self, sd, model_config, path, error);

  ok = iface->save_hf_state_dict (self, sd, model_config, path, &local_error);
  return _hp_error_check_succeeded (ok, local_error, error,
                                    "%s.save_hf_state_dict", G_OBJECT_TYPE_NAME (self));
}
