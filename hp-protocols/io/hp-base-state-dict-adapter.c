/* hp-base-state-dict-adapter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>

#include "hp-base-state-dict-adapter.h"
#include "hp-error.h"
#include "hp-io-enum-types.h"
#include "hp-safetensors-checkpoint.h"
#include "hp-safetensors-private.h"
#include "hp-safetensors.h"
#include "hp-tensor-ops.h"

/**
 * HpBaseStateDictAdapter:
 *
 * An [iface@Hp.StateDictAdapter] that keeps Hugging Face checkpoints in
 * safetensors files: [method@Hp.StateDictAdapter.load_hf_state_dict] maps a
 * single `model.safetensors` or a sharded checkpoint
 * (`model.safetensors.index.json` and its `model-0000i-of-0000n.safetensors`
 * files), [method@Hp.StateDictAdapter.save_hf_state_dict] writes one, in
 * shards of at most [property@Hp.BaseStateDictAdapter:max-shard-size] bytes,
 * its floating tensors in [property@Hp.BaseStateDictAdapter:save-dtype].
 * Subclasses implement only the renaming between the model's names and
 * Hugging Face's ([vfunc@Hp.BaseStateDictAdapter.to_hf] and
 * [vfunc@Hp.BaseStateDictAdapter.from_hf]).
 *
 * Since: 1.0
 */

typedef struct
{
  guint64 max_shard_size;
  HpSafetensorsDType save_dtype;
} HpBaseStateDictAdapterPrivate;

static void hp_base_state_dict_adapter_iface_init (HpStateDictAdapterInterface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (HpBaseStateDictAdapter, hp_base_state_dict_adapter, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (HpBaseStateDictAdapter)
                                  G_IMPLEMENT_INTERFACE (HP_TYPE_STATE_DICT_ADAPTER,
                                                         hp_base_state_dict_adapter_iface_init))

enum {
  PROP_0,
  PROP_MAX_SHARD_SIZE,
  PROP_SAVE_DTYPE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* Hugging Face's default: 5 GB shards */
#define DEFAULT_MAX_SHARD_SIZE G_GUINT64_CONSTANT (5000000000)

static HpStateDict *
hp_base_state_dict_adapter_to_hf (HpStateDictAdapter  *adapter,
                                  HpStateDict         *state_dict,
                                  GError             **error)
{
  HpBaseStateDictAdapter *self = HP_BASE_STATE_DICT_ADAPTER (adapter);
  HpBaseStateDictAdapterClass *klass = HP_BASE_STATE_DICT_ADAPTER_GET_CLASS (self);

  if (klass->to_hf == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "%s does not implement to_hf", G_OBJECT_TYPE_NAME (self));
      return NULL;
    }
  return klass->to_hf (self, state_dict, error);
}

static HpStateDict *
hp_base_state_dict_adapter_from_hf (HpStateDictAdapter  *adapter,
                                    HpStateDict         *hf_state_dict,
                                    GError             **error)
{
  HpBaseStateDictAdapter *self = HP_BASE_STATE_DICT_ADAPTER (adapter);
  HpBaseStateDictAdapterClass *klass = HP_BASE_STATE_DICT_ADAPTER_GET_CLASS (self);

  if (klass->from_hf == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "%s does not implement from_hf", G_OBJECT_TYPE_NAME (self));
      return NULL;
    }
  return klass->from_hf (self, hf_state_dict, error);
}

static HpStateDict *
hp_base_state_dict_adapter_load (HpStateDictAdapter  *adapter,
                                 const gchar         *path,
                                 HpBaseModelConfig   *model_config,
                                 HpDType              dtype,
                                 GError             **error)
{
  g_autoptr(HpStateDict) loaded = hp_safetensors_load (path, error);
  HpStateDict *out;

  if (loaded == NULL)
    return NULL;

  /* the mapped tensors are kept as they are unless another dtype is
   * asked for (converting reads them whole) */
  out = hp_state_dict_new ();
  for (guint i = 0; i < hp_state_dict_get_size (loaded); i++)
    {
      HpTensor *tensor = hp_state_dict_get_tensor (loaded, i);
      HpDType have = hp_tensor_get_dtype (tensor);
      g_autoptr(HpTensor) converted = NULL;

      if (have != dtype && have != HP_DTYPE_INT64 && dtype != HP_DTYPE_INT64)
        {
          gsize n;
          guint ndim;
          const gint64 *shape = hp_tensor_get_shape (tensor, &ndim);
          g_autofree gdouble *values = hp_tensor_to_float64_array (tensor, &n);

          converted = hp_tensor_new_from_data (dtype, values, n, shape, ndim, error);
          if (converted == NULL)
            {
              g_object_unref (out);
              return NULL;
            }
        }
      hp_state_dict_insert (out, hp_state_dict_get_name (loaded, i),
                            converted != NULL ? converted : tensor);
    }
  return out;
}

/* The bytes of tensor data of @state_dict in files of @save_dtype */
static guint64
total_bytes (HpStateDict        *state_dict,
             HpSafetensorsDType  save_dtype)
{
  guint64 total = 0;

  for (guint i = 0; i < hp_state_dict_get_size (state_dict); i++)
    {
      HpTensor *tensor = hp_state_dict_get_tensor (state_dict, i);
      HpStDType stored = _hp_st_dtype_for_save (save_dtype, hp_tensor_get_dtype (tensor));

      total += (guint64) hp_tensor_get_numel (tensor) * _hp_st_dtype_get_size (stored);
    }
  return total;
}

static gboolean
hp_base_state_dict_adapter_save (HpStateDictAdapter  *adapter,
                                 HpStateDict         *state_dict,
                                 HpBaseModelConfig   *model_config,
                                 const gchar         *path,
                                 GError             **error)
{
  HpBaseStateDictAdapter *self = HP_BASE_STATE_DICT_ADAPTER (adapter);
  HpBaseStateDictAdapterPrivate *priv = hp_base_state_dict_adapter_get_instance_private (self);
  g_autoptr(GHashTable) metadata = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree gchar *file = NULL;

  /* what can be refused is, before the directory is made */
  if (!_hp_safetensors_check_state_dict (state_dict, path, error))
    return FALSE;
  if (g_mkdir_with_parents (path, 0755) != 0)
    {
      gint saved_errno = errno;

      g_set_error (error, HP_ERROR, HP_ERROR_IO, "cannot make directory %s: %s",
                   path, g_strerror (saved_errno));
      return FALSE;
    }
  g_hash_table_insert (metadata, (gpointer) "format", (gpointer) "pt");
  if (total_bytes (state_dict, priv->save_dtype) > priv->max_shard_size)
    return hp_safetensors_save_sharded_with_dtype (state_dict, metadata, path, priv->max_shard_size,
                                                   priv->save_dtype, error);
  file = g_build_filename (path, "model.safetensors", NULL);
  return hp_safetensors_save_with_dtype (state_dict, metadata, file, priv->save_dtype, error);
}

static void
hp_base_state_dict_adapter_iface_init (HpStateDictAdapterInterface *iface)
{
  iface->to_hf = hp_base_state_dict_adapter_to_hf;
  iface->from_hf = hp_base_state_dict_adapter_from_hf;
  iface->load_hf_state_dict = hp_base_state_dict_adapter_load;
  iface->save_hf_state_dict = hp_base_state_dict_adapter_save;
}

static void
hp_base_state_dict_adapter_get_property (GObject    *object,
                                         guint       prop_id,
                                         GValue     *value,
                                         GParamSpec *pspec)
{
  HpBaseStateDictAdapter *self = HP_BASE_STATE_DICT_ADAPTER (object);

  switch (prop_id)
    {
    case PROP_MAX_SHARD_SIZE:
      g_value_set_uint64 (value, hp_base_state_dict_adapter_get_max_shard_size (self));
      break;
    case PROP_SAVE_DTYPE:
      g_value_set_enum (value, hp_base_state_dict_adapter_get_save_dtype (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_base_state_dict_adapter_set_property (GObject      *object,
                                         guint         prop_id,
                                         const GValue *value,
                                         GParamSpec   *pspec)
{
  HpBaseStateDictAdapter *self = HP_BASE_STATE_DICT_ADAPTER (object);

  switch (prop_id)
    {
    case PROP_MAX_SHARD_SIZE:
      hp_base_state_dict_adapter_set_max_shard_size (self, g_value_get_uint64 (value));
      break;
    case PROP_SAVE_DTYPE:
      hp_base_state_dict_adapter_set_save_dtype (self, g_value_get_enum (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_base_state_dict_adapter_class_init (HpBaseStateDictAdapterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = hp_base_state_dict_adapter_get_property;
  object_class->set_property = hp_base_state_dict_adapter_set_property;

  /**
   * HpBaseStateDictAdapter:max-shard-size:
   *
   * The largest checkpoint, in bytes of tensor data, written as one
   * `model.safetensors`; larger ones are split into shards of at most
   * this size with an index, as Hugging Face does (5 GB by default).
   *
   * Since: 1.0
   */
  properties[PROP_MAX_SHARD_SIZE] =
    g_param_spec_uint64 ("max-shard-size", NULL, NULL,
                         1, G_MAXUINT64, DEFAULT_MAX_SHARD_SIZE,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpBaseStateDictAdapter:save-dtype:
   *
   * The element type that [method@Hp.StateDictAdapter.save_hf_state_dict]
   * writes floating tensors in, rounded as
   * [func@Hp.safetensors_save_with_dtype] says (integer tensors stay as
   * they are); each in its own dtype by default. Loading does not
   * depend on it: every file type loads, exactly, into the dtype asked.
   *
   * Since: 1.0
   */
  properties[PROP_SAVE_DTYPE] =
    g_param_spec_enum ("save-dtype", NULL, NULL,
                       HP_TYPE_SAFETENSORS_DTYPE, HP_SAFETENSORS_DTYPE_AS_IS,
                       (G_PARAM_READWRITE |
                        G_PARAM_EXPLICIT_NOTIFY |
                        G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_base_state_dict_adapter_init (HpBaseStateDictAdapter *self)
{
  HpBaseStateDictAdapterPrivate *priv = hp_base_state_dict_adapter_get_instance_private (self);

  priv->max_shard_size = DEFAULT_MAX_SHARD_SIZE;
}

/**
 * hp_base_state_dict_adapter_get_max_shard_size:
 * @self: a [class@Hp.BaseStateDictAdapter]
 *
 * Gets the largest checkpoint written as one file.
 *
 * Returns: the [property@Hp.BaseStateDictAdapter:max-shard-size], in bytes
 *
 * Since: 1.0
 */
guint64
hp_base_state_dict_adapter_get_max_shard_size (HpBaseStateDictAdapter *self)
{
  HpBaseStateDictAdapterPrivate *priv;

  g_return_val_if_fail (HP_IS_BASE_STATE_DICT_ADAPTER (self), 0);

  priv = hp_base_state_dict_adapter_get_instance_private (self);
  return priv->max_shard_size;
}

/**
 * hp_base_state_dict_adapter_set_max_shard_size:
 * @self: a [class@Hp.BaseStateDictAdapter]
 * @max_shard_size: bytes of tensor data per file, at least 1
 *
 * Sets [property@Hp.BaseStateDictAdapter:max-shard-size].
 *
 * Since: 1.0
 */
void
hp_base_state_dict_adapter_set_max_shard_size (HpBaseStateDictAdapter *self,
                                               guint64                 max_shard_size)
{
  HpBaseStateDictAdapterPrivate *priv;

  g_return_if_fail (HP_IS_BASE_STATE_DICT_ADAPTER (self));
  g_return_if_fail (max_shard_size > 0);

  priv = hp_base_state_dict_adapter_get_instance_private (self);
  if (priv->max_shard_size == max_shard_size)
    return;
  priv->max_shard_size = max_shard_size;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_SHARD_SIZE]);
}

/**
 * hp_base_state_dict_adapter_get_save_dtype:
 * @self: a [class@Hp.BaseStateDictAdapter]
 *
 * Gets the element type that floating tensors are saved in.
 *
 * Returns: the [property@Hp.BaseStateDictAdapter:save-dtype]
 *
 * Since: 1.0
 */
HpSafetensorsDType
hp_base_state_dict_adapter_get_save_dtype (HpBaseStateDictAdapter *self)
{
  HpBaseStateDictAdapterPrivate *priv;

  g_return_val_if_fail (HP_IS_BASE_STATE_DICT_ADAPTER (self), HP_SAFETENSORS_DTYPE_AS_IS);

  priv = hp_base_state_dict_adapter_get_instance_private (self);
  return priv->save_dtype;
}

/**
 * hp_base_state_dict_adapter_set_save_dtype:
 * @self: a [class@Hp.BaseStateDictAdapter]
 * @save_dtype: the element type of the floating tensors in the files
 *
 * Sets [property@Hp.BaseStateDictAdapter:save-dtype].
 *
 * Since: 1.0
 */
void
hp_base_state_dict_adapter_set_save_dtype (HpBaseStateDictAdapter *self,
                                           HpSafetensorsDType      save_dtype)
{
  HpBaseStateDictAdapterPrivate *priv;

  g_return_if_fail (HP_IS_BASE_STATE_DICT_ADAPTER (self));
  g_return_if_fail (save_dtype <= HP_SAFETENSORS_DTYPE_F64);

  priv = hp_base_state_dict_adapter_get_instance_private (self);
  if (priv->save_dtype == save_dtype)
    return;
  priv->save_dtype = save_dtype;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SAVE_DTYPE]);
}

/**
 * hp_base_state_dict_adapter_fqn_to_index_mapping:
 * @self: a [class@Hp.BaseStateDictAdapter]
 * @path: a checkpoint: a directory, `model.safetensors` or
 *   `model.safetensors.index.json`
 * @error: return location for a [struct@GLib.Error]
 *
 * Which file of a checkpoint holds each tensor: the shard number (1 for
 * `model-00001-of-0000n.safetensors`, and 1 for an unsharded
 * checkpoint), by Hugging Face name — what a writer needs to keep the
 * same split.
 *
 * Returns: (transfer full) (element-type utf8 gint): the shard number
 *   of each tensor, or %NULL with [HP_ERROR_IO][error@Hp.Error] or [HP_ERROR_FORMAT][error@Hp.Error]
 *
 * Since: 1.0
 */
GHashTable *
hp_base_state_dict_adapter_fqn_to_index_mapping (HpBaseStateDictAdapter  *self,
                                                 const gchar             *path,
                                                 GError                 **error)
{
  g_autoptr(HpSafetensorsCheckpoint) checkpoint = NULL;
  g_auto(GStrv) names = NULL;
  GHashTable *mapping;

  g_return_val_if_fail (HP_IS_BASE_STATE_DICT_ADAPTER (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  checkpoint = hp_safetensors_checkpoint_new_for_path (path, error);
  if (checkpoint == NULL)
    return NULL;

  mapping = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  names = hp_safetensors_checkpoint_get_names (checkpoint);
  for (guint i = 0; names[i] != NULL; i++)
    {
      HpSafetensorsFile *file = hp_safetensors_checkpoint_lookup_file (checkpoint, names[i], NULL);
      g_autofree gchar *base = g_path_get_basename (hp_safetensors_file_get_path (file));
      guint shard = 1;
      guint count = 0;

      if (sscanf (base, "model-%u-of-%u.safetensors", &shard, &count) != 2)
        shard = 1;
      g_hash_table_insert (mapping, g_strdup (names[i]), GUINT_TO_POINTER (shard));
    }
  return mapping;
}
