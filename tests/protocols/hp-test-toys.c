/* hp-test-toys.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>

#include "hp-test-toys.h"
#include "hp-test-utils.h"

/* HpToyLinearConfig */

struct _HpToyLinearConfig
{
  HpModuleConfig parent_instance;

  gint in_features;
  gint out_features;
  gboolean bias;
};

G_DEFINE_FINAL_TYPE (HpToyLinearConfig, hp_toy_linear_config, HP_TYPE_MODULE_CONFIG)

static const HpConfigField toy_linear_fields[] = {
  HP_CONFIG_FIELD_INT (HpToyLinearConfig, in_features, "in-features", "Input features", 1, 4096, 4),
  HP_CONFIG_FIELD_INT (HpToyLinearConfig, out_features, "out-features", "Output features", 1, 4096, 4),
  HP_CONFIG_FIELD_BOOLEAN (HpToyLinearConfig, bias, "bias", "Whether there is a bias", FALSE),
};

static void
hp_toy_linear_config_class_init (HpToyLinearConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), toy_linear_fields,
                                  G_N_ELEMENTS (toy_linear_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_TOY_LINEAR);
}

static void
hp_toy_linear_config_init (HpToyLinearConfig *self)
{
}

/* HpToyLinear */

struct _HpToyLinear
{
  HpModule parent_instance;
  guint reset_count;
};

G_DEFINE_FINAL_TYPE (HpToyLinear, hp_toy_linear, HP_TYPE_MODULE)

static gboolean
hp_toy_linear_setup (HpConfigurable  *configurable,
                     GError         **error)
{
  HpToyLinearConfig *config = HP_TOY_LINEAR_CONFIG (hp_configurable_get_config (configurable));
  gint64 shape[2] = { config->out_features, config->in_features };
  g_autoptr(HpTensor) weight = NULL;

  if (!HP_CONFIGURABLE_CLASS (hp_toy_linear_parent_class)->setup (configurable, error))
    return FALSE;

  weight = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, shape, 2);
  if (!hp_module_register_parameter (HP_MODULE (configurable), "weight", weight, error))
    return FALSE;
  if (config->bias)
    {
      g_autoptr(HpTensor) bias = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, shape, 1);

      return hp_module_register_parameter (HP_MODULE (configurable), "bias", bias, error);
    }
  return TRUE;
}

static GPtrArray *
hp_toy_linear_forward (HpModule   *module,
                       GPtrArray  *args,
                       GError    **error)
{
  return hp_test_one_output (hp_tensor_linear (g_ptr_array_index (args, 0),
                                               hp_module_get_parameter (module, "weight"),
                                               hp_module_get_parameter (module, "bias"),
                                               error));
}

static gboolean
hp_toy_linear_reset_parameters (HpModule  *module,
                                guint64    seed,
                                GError   **error)
{
  HpToyLinear *self = HP_TOY_LINEAR (module);
  HpConfig *config = hp_configurable_get_config (HP_CONFIGURABLE (module));
  gdouble bound = 1.0 / sqrt (HP_TOY_LINEAR_CONFIG (config)->in_features);
  g_autoptr(HpInitializer) uniform = hp_initializer_new_uniform (-bound, bound);
  g_autoptr(HpInitializer) zeros = hp_initializer_new_zeros ();
  HpTensor *bias = hp_module_get_parameter (module, "bias");

  self->reset_count++;
  if (!hp_initializer_apply (uniform, hp_module_get_parameter (module, "weight"),
                             hp_module_derive_seed (seed, "weight"), error))
    return FALSE;
  return bias == NULL || hp_initializer_apply (zeros, bias, 0, error);
}

static void
hp_toy_linear_class_init (HpToyLinearClass *klass)
{
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_toy_linear_setup;
  module_class->forward = hp_toy_linear_forward;
  module_class->reset_parameters = hp_toy_linear_reset_parameters;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "input", NULL });
}

static void
hp_toy_linear_init (HpToyLinear *self)
{
}

guint
hp_toy_linear_get_reset_count (HpToyLinear *self)
{
  return self->reset_count;
}

/* HpToyEmbedding */

struct _HpToyEmbedding
{
  HpModule parent_instance;
};

G_DEFINE_FINAL_TYPE (HpToyEmbedding, hp_toy_embedding, HP_TYPE_MODULE)

static GPtrArray *
hp_toy_embedding_forward (HpModule   *module,
                          GPtrArray  *args,
                          GError    **error)
{
  return hp_test_one_output (hp_tensor_embedding (hp_module_get_parameter (module, "weight"),
                                                  g_ptr_array_index (args, 0), error));
}

static void
hp_toy_embedding_class_init (HpToyEmbeddingClass *klass)
{
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  module_class->forward = hp_toy_embedding_forward;
  hp_module_type_set_embedding (G_TYPE_FROM_CLASS (klass), TRUE);
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "ids", NULL });
}

static void
hp_toy_embedding_init (HpToyEmbedding *self)
{
}

HpToyEmbedding *
hp_toy_embedding_new (gint64 vocab,
                      gint64 dim)
{
  g_autoptr(HpModuleConfig) config = hp_module_config_new ();
  g_autoptr(HpParamInit) init = hp_param_init_new ();
  g_autoptr(HpInitializer) normal = hp_initializer_new_normal (0.0, 1.0);
  g_autoptr(HpTensor) weight = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, (gint64[]) { vocab, dim }, 2);
  g_autoptr(GError) error = NULL;
  HpToyEmbedding *self;

  hp_param_init_set (init, "weight", normal);
  hp_module_config_set_param_init (config, init);
  self = g_object_new (HP_TYPE_TOY_EMBEDDING, "config", config, NULL);
  hp_module_register_parameter (HP_MODULE (self), "weight", weight, &error);
  g_assert_no_error (error);
  return self;
}

/* HpToyBuffered */

struct _HpToyBuffered
{
  HpModule parent_instance;
  guint init_count;
};

G_DEFINE_FINAL_TYPE (HpToyBuffered, hp_toy_buffered, HP_TYPE_MODULE)

static gboolean
hp_toy_buffered_init_self_buffers (HpModule  *module,
                                   GError   **error)
{
  HpToyBuffered *self = HP_TOY_BUFFERED (module);
  g_autoptr(HpTensor) table = NULL;
  gdouble data[6];

  self->init_count++;
  for (guint i = 0; i < G_N_ELEMENTS (data); i++)
    data[i] = i * (gdouble) self->init_count;
  table = hp_tensor_new_from_data (HP_DTYPE_FLOAT64, data, 6, (gint64[]) { 6 }, 1, error);
  return table != NULL && hp_module_register_buffer (module, "table", table, TRUE, error);
}

static void
hp_toy_buffered_class_init (HpToyBufferedClass *klass)
{
  HP_MODULE_CLASS (klass)->init_self_buffers = hp_toy_buffered_init_self_buffers;
}

static void
hp_toy_buffered_init (HpToyBuffered *self)
{
}

HpToyBuffered *
hp_toy_buffered_new (void)
{
  HpToyBuffered *self = g_object_new (HP_TYPE_TOY_BUFFERED, NULL);
  g_autoptr(HpTensor) table = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, (gint64[]) { 6 }, 1);
  g_autoptr(HpTensor) scratch = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, (gint64[]) { 2 }, 1);
  g_autoptr(GError) error = NULL;

  hp_module_register_buffer (HP_MODULE (self), "table", table, TRUE, &error);
  g_assert_no_error (error);
  hp_module_register_buffer (HP_MODULE (self), "scratch", scratch, FALSE, &error);
  g_assert_no_error (error);
  return self;
}

/* HpToyNoInit */

HP_TEST_DEFINE_EMPTY_TYPE (HpToyNoInit, hp_toy_no_init, HpModule, HP_TYPE_MODULE)

HpToyNoInit *
hp_toy_no_init_new (void)
{
  HpToyNoInit *self = g_object_new (HP_TYPE_TOY_NO_INIT, NULL);
  g_autoptr(HpTensor) w = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, (gint64[]) { 2 }, 1);
  g_autoptr(HpTensor) v = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, (gint64[]) { 3 }, 1);
  g_autoptr(GError) error = NULL;

  hp_module_register_parameter (HP_MODULE (self), "w", w, &error);
  g_assert_no_error (error);
  hp_module_register_parameter (HP_MODULE (self), "v", v, &error);
  g_assert_no_error (error);
  return self;
}

/* HpToyInner */

struct _HpToyInner
{
  HpModule parent_instance;
  guint inner_calls;
};

G_DEFINE_FINAL_TYPE (HpToyInner, hp_toy_inner, HP_TYPE_MODULE)

static GPtrArray *
toy_inner_softmax (HpModule   *module,
                   GPtrArray  *args,
                   gpointer    user_data,
                   GError    **error)
{
  HpToyInner *self = HP_TOY_INNER (module);

  self->inner_calls++;
  g_assert_false (HP_IS_DTENSOR (g_ptr_array_index (args, 0)));
  return hp_test_one_output (hp_tensor_softmax (g_ptr_array_index (args, 0), -1, error));
}

static GPtrArray *
hp_toy_inner_forward (HpModule   *module,
                      GPtrArray  *args,
                      GError    **error)
{
  return hp_module_run_callable (module, "inner", args, error);
}

static void
hp_toy_inner_class_init (HpToyInnerClass *klass)
{
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  module_class->forward = hp_toy_inner_forward;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "x", NULL });
}

static void
hp_toy_inner_init (HpToyInner *self)
{
  hp_module_register_callable (HP_MODULE (self), "inner", toy_inner_softmax, NULL, NULL);
}

HpToyInner *
hp_toy_inner_new (HpModuleConfig *config)
{
  return g_object_new (HP_TYPE_TOY_INNER, "config", config, NULL);
}

guint
hp_toy_inner_get_inner_calls (HpToyInner *self)
{
  return self->inner_calls;
}

/* HpToyModelConfig */

struct _HpToyModelConfig
{
  HpBaseModelConfig parent_instance;

  gint vocab;
  gint dim;
  gint n_layers;
  gint n_heads;
};

G_DEFINE_FINAL_TYPE (HpToyModelConfig, hp_toy_model_config, HP_TYPE_BASE_MODEL_CONFIG)

/* Fits a job given as a HpParallelDims whose tp degree divides
 * n-heads; changes nothing */
static gboolean
hp_toy_model_config_update_from_config (HpBaseModelConfig  *config,
                                        HpConfig           *job_config,
                                        GError            **error)
{
  gint n_heads = HP_TOY_MODEL_CONFIG (config)->n_heads;
  gint tp;

  if (job_config == NULL)
    return TRUE;
  if (!HP_IS_PARALLEL_DIMS (job_config))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpToyModelConfig: update_from_config takes a HpParallelDims, not a %s",
                   G_OBJECT_TYPE_NAME (job_config));
      return FALSE;
    }
  tp = hp_parallel_dims_get_tp (HP_PARALLEL_DIMS (job_config));
  if (n_heads % tp != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpToyModelConfig: n-heads %d cannot be split over tp = %d", n_heads, tp);
      return FALSE;
    }
  return TRUE;
}

static const HpConfigField toy_model_fields[] = {
  HP_CONFIG_FIELD_INT (HpToyModelConfig, vocab, "vocab", NULL, 1, 1 << 20, 10),
  HP_CONFIG_FIELD_INT (HpToyModelConfig, dim, "dim", NULL, 1, 1 << 20, 4),
  HP_CONFIG_FIELD_INT (HpToyModelConfig, n_layers, "n-layers", NULL, 0, 64, 2),
  HP_CONFIG_FIELD_INT (HpToyModelConfig, n_heads, "n-heads", NULL, 1, 64, 2),
};

static void
hp_toy_model_config_class_init (HpToyModelConfigClass *klass)
{
  HP_BASE_MODEL_CONFIG_CLASS (klass)->update_from_config = hp_toy_model_config_update_from_config;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), toy_model_fields,
                                  G_N_ELEMENTS (toy_model_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_TOY_MODEL);
}

static void
hp_toy_model_config_init (HpToyModelConfig *self)
{
}

/* HpToyModel */

struct _HpToyModel
{
  HpBaseModel parent_instance;
};

G_DEFINE_FINAL_TYPE (HpToyModel, hp_toy_model, HP_TYPE_BASE_MODEL)

static gboolean
hp_toy_model_setup (HpConfigurable  *configurable,
                    GError         **error)
{
  HpModule *module = HP_MODULE (configurable);
  HpToyModelConfig *config = HP_TOY_MODEL_CONFIG (hp_configurable_get_config (configurable));
  g_autoptr(HpToyEmbedding) embed = NULL;
  g_autoptr(HpModuleList) layers = NULL;

  if (!HP_CONFIGURABLE_CLASS (hp_toy_model_parent_class)->setup (configurable, error))
    return FALSE;

  embed = hp_toy_embedding_new (config->vocab, config->dim);
  if (!hp_module_add_child (module, "embed", HP_MODULE (embed), error))
    return FALSE;
  layers = hp_module_list_new ();
  for (gint i = 0; i < config->n_layers; i++)
    {
      g_autoptr(HpConfig) layer_config =
        g_object_new (HP_TYPE_TOY_LINEAR_CONFIG,
                      "in-features", config->dim,
                      "out-features", config->dim,
                      "bias", TRUE,
                      NULL);
      g_autoptr(GObject) layer = hp_config_build (layer_config, error);

      if (layer == NULL || !hp_module_list_append (layers, HP_MODULE (layer), error))
        return FALSE;
    }
  return hp_module_add_child (module, "layers", HP_MODULE (layers), error);
}

static GPtrArray *
hp_toy_model_forward (HpModule   *module,
                      GPtrArray  *args,
                      GError    **error)
{
  HpModuleList *layers = HP_MODULE_LIST (hp_module_get_child (module, "layers"));
  g_autoptr(GPtrArray) current =
    hp_module_call (hp_module_get_child (module, "embed"), args, error);

  for (guint i = 0; current != NULL && i < hp_module_list_get_length (layers); i++)
    {
      GPtrArray *next = hp_module_call (hp_module_list_get (layers, i), current, error);

      g_ptr_array_unref (current);
      current = next;
    }
  return g_steal_pointer (&current);
}

static void
hp_toy_model_class_init (HpToyModelClass *klass)
{
  HP_CONFIGURABLE_CLASS (klass)->setup = hp_toy_model_setup;
  HP_MODULE_CLASS (klass)->forward = hp_toy_model_forward;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "ids", NULL });
}

static void
hp_toy_model_init (HpToyModel *self)
{
}

/* Snapshots */

static void
describe_tensor (GString  *out,
                 HpTensor *tensor)
{
  g_autoptr(HpTensor) local = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree gchar *shape = NULL;
  g_autofree gchar *checksum = NULL;
  const gint64 *dims;
  guint ndim;

  dims = hp_tensor_get_shape (tensor, &ndim);
  shape = g_strdup_printf ("%" G_GINT64_FORMAT, ndim > 0 ? dims[0] : 0);
  for (guint d = 1; d < ndim; d++)
    {
      gchar *longer = g_strdup_printf ("%s, %" G_GINT64_FORMAT, shape, dims[d]);

      g_free (shape);
      shape = longer;
    }
  g_string_append_printf (out, "%p %s [%s]", (gpointer) tensor,
                          hp_dtype_to_string (hp_tensor_get_dtype (tensor)),
                          ndim > 0 ? shape : "");
  if (HP_IS_DTENSOR (tensor))
    {
      g_autofree gchar *placements = hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (tensor)));

      g_string_append_printf (out, " %s on %p", placements,
                              (gpointer) hp_dtensor_get_mesh (HP_DTENSOR (tensor)));
      local = hp_dtensor_get_local (HP_DTENSOR (tensor));
    }
  else
    {
      local = g_object_ref (tensor);
    }
  bytes = hp_tensor_get_bytes (local);
  checksum = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);
  g_string_append_printf (out, " requires-grad=%d grad=%p values=%s\n",
                          hp_tensor_get_requires_grad (tensor),
                          (gpointer) hp_tensor_get_grad (tensor), checksum);
}

static void
describe_module (GString     *out,
                 HpModule    *module,
                 const gchar *prefix,
                 GHashTable  *seen)
{
  g_auto(GStrv) parameters = hp_module_get_parameter_names (module);
  g_auto(GStrv) buffers = hp_module_get_buffer_names (module);
  g_auto(GStrv) children = hp_module_get_child_names (module);
  g_autofree gchar *joined = g_strjoinv (", ", children);
  HpShardingConfig *sharding = hp_module_get_sharding_config (module);
  HpParamInit *param_init = hp_module_get_param_init (module);
  g_autofree gchar *sharding_text = sharding != NULL ? hp_sharding_config_to_string (sharding) : NULL;
  g_autofree gchar *init_text = param_init != NULL ? hp_param_init_to_string (param_init) : NULL;

  g_string_append_printf (out, "module '%s' %s %p", prefix, G_OBJECT_TYPE_NAME (module),
                          (gpointer) module);
  if (!g_hash_table_add (seen, module))
    {
      g_string_append (out, " (seen before)\n");
      return;
    }
  g_string_append_printf (out, " children [%s] mesh %p sharding %s (%p) param-init %s (%p)\n",
                          joined, (gpointer) hp_module_get_mesh (module),
                          sharding_text != NULL ? sharding_text : "none", (gpointer) sharding,
                          init_text != NULL ? init_text : "none", (gpointer) param_init);
  for (guint i = 0; parameters[i] != NULL; i++)
    {
      g_string_append_printf (out, "  parameter %s: ", parameters[i]);
      describe_tensor (out, hp_module_get_parameter (module, parameters[i]));
    }
  for (guint i = 0; buffers[i] != NULL; i++)
    {
      g_string_append_printf (out, "  buffer %s (persistent=%d): ", buffers[i],
                              hp_module_buffer_is_persistent (module, buffers[i]));
      describe_tensor (out, hp_module_get_buffer (module, buffers[i]));
    }
  for (guint i = 0; children[i] != NULL; i++)
    {
      g_autofree gchar *path = prefix[0] != '\0' ? g_strconcat (prefix, ".", children[i], NULL)
                                                 : g_strdup (children[i]);

      describe_module (out, hp_module_get_child (module, children[i]), path, seen);
    }
}

gchar *
hp_test_module_snapshot (HpModule *module)
{
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
  GString *out = g_string_new (NULL);

  describe_module (out, module, "", seen);
  return g_string_free (out, FALSE);
}

gchar *
hp_test_state_dict_snapshot (HpStateDict *state_dict)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < hp_state_dict_get_size (state_dict); i++)
    {
      g_string_append_printf (out, "%s: ", hp_state_dict_get_name (state_dict, i));
      describe_tensor (out, hp_state_dict_get_tensor (state_dict, i));
    }
  return g_string_free (out, FALSE);
}
