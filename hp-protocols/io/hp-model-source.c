/* hp-model-source.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-checkpoint-manager.h"
#include "hp-configurable.h"
#include "hp-decoder-state-dict-adapter.h"
#include "hp-error.h"
#include "hp-model-source.h"
#include "hp-module-list.h"
#include "hp-parallel-dims.h"

/**
 * HpModelSource:
 *
 * Where a trained [class@Hp.Decoder] is read from: a step of an hp
 * checkpoint (a `step-N` directory with its [const@Hp.CHECKPOINT_MANIFEST]
 * and [const@Hp.MODEL_SOURCE_CONFIG_FILE], as `hp-train --save` writes
 * them), the newest complete step of a folder of such steps, or a
 * Hugging Face Llama directory (`config.json` and safetensors weights).
 *
 * [ctor@Hp.ModelSource.open] finds out which of them a path is;
 * [method@Hp.ModelSource.load_config] reads the decoder's configuration,
 * [method@Hp.ModelSource.load_weights] loads the weights into a built
 * decoder, and [method@Hp.ModelSource.load_decoder] does all of it,
 * laying the decoder out over a tensor-parallel mesh.
 *
 * Since: 1.0
 */

struct _HpModelSource
{
  GObject parent_instance;

  gchar *path;               /* the directory of the weights */
  HpCheckpointStep *step;    /* NULL for a Hugging Face directory */
};

G_DEFINE_FINAL_TYPE (HpModelSource, hp_model_source, G_TYPE_OBJECT)

static void
hp_model_source_finalize (GObject *object)
{
  HpModelSource *self = HP_MODEL_SOURCE (object);

  g_free (self->path);
  g_clear_object (&self->step);
  G_OBJECT_CLASS (hp_model_source_parent_class)->finalize (object);
}

static void
hp_model_source_class_init (HpModelSourceClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = hp_model_source_finalize;
}

static void
hp_model_source_init (HpModelSource *self)
{
}

/**
 * hp_model_source_open: (constructor)
 * @path: a checkpoint step, a folder of steps or a Hugging Face directory
 * @error: return location for a [struct@GLib.Error]
 *
 * Opens what @path holds. A directory with a manifest or an
 * `hp-config.json`, or named `step-N`, is a step, opened and verified
 * with [ctor@Hp.CheckpointStep.open]; a folder with complete `step-N`
 * directories stands for its newest one
 * ([method@Hp.CheckpointManager.open_latest]); a directory with a
 * `config.json` is a Hugging Face directory.
 *
 * Returns: (transfer full): the source, or %NULL with
 *   [HP_ERROR_IO][error@Hp.Error] when @path is none of them, or the
 *   error of opening the step (an incomplete or damaged one)
 *
 * Since: 1.0
 */
HpModelSource *
hp_model_source_open (const gchar  *path,
                      GError      **error)
{
  g_autofree gchar *manifest = NULL;
  g_autofree gchar *hp_config = NULL;
  g_autofree gchar *hf_config = NULL;
  g_autoptr(HpCheckpointManager) folder = NULL;
  g_autofree gint64 *steps = NULL;
  g_autofree gchar *name = NULL;
  g_autoptr(HpCheckpointStep) step = NULL;
  HpModelSource *self;
  guint n_steps = 0;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  manifest = g_build_filename (path, HP_CHECKPOINT_MANIFEST, NULL);
  hp_config = g_build_filename (path, HP_MODEL_SOURCE_CONFIG_FILE, NULL);
  hf_config = g_build_filename (path, "config.json", NULL);
  folder = hp_checkpoint_manager_new (path);
  steps = hp_checkpoint_manager_list_steps (folder, &n_steps);
  name = g_path_get_basename (path);

  /* what is meant as a step but lacks its manifest is refused as one */
  if (g_file_test (manifest, G_FILE_TEST_EXISTS) || g_file_test (hp_config, G_FILE_TEST_EXISTS) ||
      g_str_has_prefix (name, "step-"))
    {
      if (!(step = hp_checkpoint_step_open (path, error)))
        return NULL;
    }
  else if (n_steps > 0)
    {
      if (!(step = hp_checkpoint_manager_open_latest (folder, error)))
        return NULL;
    }
  else if (!g_file_test (hf_config, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_IO,
                   "%s: no checkpoint: neither a step (with %s), a folder of complete step-N "
                   "directories, nor a Hugging Face directory (with config.json)",
                   path, HP_CHECKPOINT_MANIFEST);
      return NULL;
    }

  self = g_object_new (HP_TYPE_MODEL_SOURCE, NULL);
  self->step = g_steal_pointer (&step);
  self->path = g_strdup (self->step != NULL ? hp_checkpoint_step_get_path (self->step) : path);
  return self;
}

/**
 * hp_model_source_get_path:
 * @self: a [class@Hp.ModelSource]
 *
 * Gets the directory the weights are read from: the step's (for a
 * folder, its newest step's) or the Hugging Face directory.
 *
 * Returns: the directory
 *
 * Since: 1.0
 */
const gchar *
hp_model_source_get_path (HpModelSource *self)
{
  g_return_val_if_fail (HP_IS_MODEL_SOURCE (self), NULL);

  return self->path;
}

/**
 * hp_model_source_get_step:
 * @self: a [class@Hp.ModelSource]
 *
 * Gets the checkpoint step, with its step number and metadata.
 *
 * Returns: (transfer none) (nullable): the step, or %NULL for a Hugging
 *   Face directory
 *
 * Since: 1.0
 */
HpCheckpointStep *
hp_model_source_get_step (HpModelSource *self)
{
  g_return_val_if_fail (HP_IS_MODEL_SOURCE (self), NULL);

  return self->step;
}

/**
 * hp_model_source_load_config:
 * @self: a [class@Hp.ModelSource]
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads the decoder's configuration: the step's `hp-config.json`, or
 * the one a Hugging Face `config.json` describes
 * ([ctor@Hp.DecoderStateDictAdapter.new_from_hf_config]). Its nested
 * configurations are as the file has them (see
 * [method@Hp.DecoderConfig.expand]).
 *
 * Returns: (transfer full): a new configuration, or %NULL with the
 *   error of reading or parsing the file, its message starting with the
 *   file's path
 *
 * Since: 1.0
 */
HpDecoderConfig *
hp_model_source_load_config (HpModelSource  *self,
                             GError        **error)
{
  g_autofree gchar *file = NULL;
  g_autofree gchar *text = NULL;
  g_autoptr(HpConfig) config = NULL;

  g_return_val_if_fail (HP_IS_MODEL_SOURCE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  file = self->step != NULL ? hp_checkpoint_step_get_file (self->step, HP_MODEL_SOURCE_CONFIG_FILE,
                                                           error)
                            : g_build_filename (self->path, "config.json", NULL);
  if (file == NULL || !g_file_get_contents (file, &text, NULL, error))
    return NULL;
  if (self->step == NULL)
    {
      g_autoptr(HpDecoderStateDictAdapter) adapter =
        hp_decoder_state_dict_adapter_new_from_hf_config (text, -1, error);

      config = adapter != NULL
        ? g_object_ref (HP_CONFIG (hp_decoder_state_dict_adapter_get_model_config (adapter))) : NULL;
    }
  else
    config = hp_config_new_from_json (HP_TYPE_DECODER_CONFIG, text, error);
  if (config == NULL)
    {
      g_prefix_error (error, "%s: ", file);
      return NULL;
    }
  return HP_DECODER_CONFIG (g_steal_pointer (&config));
}

/**
 * hp_model_source_load_weights:
 * @self: a [class@Hp.ModelSource]
 * @model: a built decoder of the source's configuration, laid out over
 *   any mesh
 * @error: return location for a [struct@GLib.Error]
 *
 * Loads the weights (Hugging Face names, converted with a
 * [class@Hp.DecoderStateDictAdapter] of @model's configuration, in its
 * dtype) into @model; every parameter must be there. Each rank reads
 * the files and keeps its own shards; a pipeline stage of a decoder
 * ([method@Hp.Decoder.split_stage]) takes the weights of its own parts.
 *
 * Returns: %TRUE, or %FALSE with the error of reading the weights
 *   ([HP_ERROR_IO][error@Hp.Error], [HP_ERROR_FORMAT][error@Hp.Error])
 *   or of loading them ([method@Hp.Module.load_state_dict]: a missing
 *   or misshapen weight)
 *
 * Since: 1.0
 */
gboolean
hp_model_source_load_weights (HpModelSource  *self,
                              HpDecoder      *model,
                              GError        **error)
{
  HpDecoderConfig *config;
  g_autoptr(HpDecoderStateDictAdapter) adapter = NULL;
  g_autoptr(HpStateDict) hf = NULL;
  g_autoptr(HpStateDict) states = NULL;
  HpDType dtype;

  g_return_val_if_fail (HP_IS_MODEL_SOURCE (self), FALSE);
  g_return_val_if_fail (HP_IS_DECODER (model), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  config = HP_DECODER_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (model)));
  adapter = hp_decoder_state_dict_adapter_new (config);
  g_object_get (config, "dtype", &dtype, NULL);
  hf = hp_state_dict_adapter_load_hf_state_dict (HP_STATE_DICT_ADAPTER (adapter), self->path,
                                                 HP_BASE_MODEL_CONFIG (config), dtype, error);
  if (hf == NULL ||
      !(states = hp_state_dict_adapter_from_hf (HP_STATE_DICT_ADAPTER (adapter), hf, error)))
    return FALSE;
  /* a pipeline stage ([method@Hp.Decoder.split_stage]) takes its own */
  if (!HP_IS_MODULE_LIST (hp_module_get_child (HP_MODULE (model), "layers")))
    {
      g_autoptr(HpStateDict) mine = hp_module_state_dict (HP_MODULE (model));
      g_autoptr(HpStateDict) own = hp_state_dict_new ();

      for (guint i = 0; i < hp_state_dict_get_size (mine); i++)
        {
          const gchar *name = hp_state_dict_get_name (mine, i);

          if (hp_state_dict_contains (states, name))
            hp_state_dict_insert (own, name, hp_state_dict_lookup (states, name));
        }
      g_set_object (&states, own);
    }
  return hp_module_load_state_dict (HP_MODULE (model), states, TRUE, error);
}

/**
 * hp_model_source_load_decoder:
 * @self: a [class@Hp.ModelSource]
 * @tp_mesh: (nullable): a 1-D mesh with the dim name `tp` to lay the
 *   decoder out over, or %NULL for a decoder on one rank
 * @error: return location for a [struct@GLib.Error]
 *
 * Builds the decoder of [method@Hp.ModelSource.load_config], tensor
 * parallel over @tp_mesh when it has more than one rank (with the
 * sharding configurations [method@Hp.BaseModelConfig.update_from_config]
 * installs, then [method@Hp.Module.parallelize]), and loads its
 * weights. Collective over @tp_mesh: every rank of it calls this.
 *
 * Returns: (transfer full): the decoder, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for a mesh that is not
 *   1-D, [HP_ERROR_CONFIG][error@Hp.Error] when the heads do not split
 *   over the mesh, or the error of
 *   [method@Hp.ModelSource.load_config] or
 *   [method@Hp.ModelSource.load_weights]
 *
 * Since: 1.0
 */
HpDecoder *
hp_model_source_load_decoder (HpModelSource  *self,
                              HpDeviceMesh   *tp_mesh,
                              GError        **error)
{
  g_autoptr(HpDecoderConfig) config = NULL;
  g_autoptr(HpParallelDims) dims = hp_parallel_dims_new ();
  g_autoptr(HpParallelDims) resolved = NULL;
  g_autoptr(GObject) model = NULL;
  gint tp = tp_mesh != NULL ? hp_device_mesh_get_size (tp_mesh) : 1;

  g_return_val_if_fail (HP_IS_MODEL_SOURCE (self), NULL);
  g_return_val_if_fail (tp_mesh == NULL || HP_IS_DEVICE_MESH (tp_mesh), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (tp_mesh != NULL && hp_device_mesh_get_ndim (tp_mesh) != 1)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "HpModelSource: the tensor-parallel mesh has %u dims, but needs 1",
                   hp_device_mesh_get_ndim (tp_mesh));
      return NULL;
    }
  config = hp_model_source_load_config (self, error);
  if (config == NULL)
    return NULL;
  g_object_set (dims, "tp", tp, "dp-replicate", 1, "dp-shard", 1, NULL);
  resolved = hp_parallel_dims_resolve (dims, tp, error);
  if (resolved == NULL ||
      !hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config),
                                                HP_CONFIG (resolved), error) ||
      !(model = hp_config_build (HP_CONFIG (config), error)))
    return NULL;
  if (tp > 1 && !hp_module_parallelize (HP_MODULE (model), tp_mesh, error))
    return NULL;
  /* the buffers, which the files do not hold, are computed again over
   * the mesh; the weights are then overwritten */
  if (!hp_base_model_verify_module_protocol (HP_BASE_MODEL (model), error) ||
      !hp_base_model_init_weights (HP_BASE_MODEL (model), 0, error) ||
      !hp_model_source_load_weights (self, HP_DECODER (model), error))
    return NULL;
  return HP_DECODER (g_steal_pointer (&model));
}
