/* crosslang-model.c: the model of the cross-language test, in C
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A linear layer, a Megatron MLP (w1 column-wise, w2 row-wise), an
 * attention block whose inner attention is a registered callable that
 * local_map runs on the local heads, and a model chaining them into a
 * mean squared error, each written as a subclass of HpModule with its
 * own HpModuleConfig subclass (fields in a table, a setup, a forward).
 * crosslang_model.py, crosslang-model.js and crosslang-model.vala write
 * the same classes in the other languages; run-crosslang.py compares
 * what they print (README.md of this directory).
 *
 *   crosslang-model DOCUMENT OUTPUT LAYOUT
 *
 * reads the model and the optimizer from the JSON DOCUMENT, lays the
 * model out as LAYOUT says (none, tp, or dp,tp), runs one training step
 * and writes to OUTPUT, on rank 0, the configuration, the loss,
 * whether the inner attention is local-mapped and what it was given
 * (heads, DTensor or not), and the placements and the values, gathered,
 * of every parameter and its gradient.
 */

#include <hp-protocols/hp-protocols.h>

/* Linear: y = x W^T + b, W of shape [out-features, in-features] */

#define XL_TYPE_LINEAR_CONFIG (xl_linear_config_get_type ())
G_DECLARE_FINAL_TYPE (XlLinearConfig, xl_linear_config, XL, LINEAR_CONFIG, HpModuleConfig)

#define XL_TYPE_LINEAR (xl_linear_get_type ())
G_DECLARE_FINAL_TYPE (XlLinear, xl_linear, XL, LINEAR, HpModule)

struct _XlLinearConfig
{
  HpModuleConfig parent_instance;

  gint in_features;
  gint out_features;
  gboolean bias;
};

struct _XlLinear
{
  HpModule parent_instance;
};

G_DEFINE_FINAL_TYPE (XlLinearConfig, xl_linear_config, HP_TYPE_MODULE_CONFIG)
G_DEFINE_FINAL_TYPE (XlLinear, xl_linear, HP_TYPE_MODULE)

static const HpConfigField linear_config_fields[] = {
  HP_CONFIG_FIELD_INT (XlLinearConfig, in_features, "in-features", "Input features", 1, G_MAXINT, 1),
  HP_CONFIG_FIELD_INT (XlLinearConfig, out_features, "out-features", "Output features", 1, G_MAXINT, 1),
  HP_CONFIG_FIELD_BOOLEAN (XlLinearConfig, bias, "bias", "Whether there is a bias", FALSE),
};

static void
xl_linear_config_class_init (XlLinearConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), linear_config_fields,
                                  G_N_ELEMENTS (linear_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), XL_TYPE_LINEAR);
}

static void
xl_linear_config_init (XlLinearConfig *self)
{
}

static gboolean
xl_linear_setup (HpConfigurable  *configurable,
                 GError         **error)
{
  XlLinearConfig *config = XL_LINEAR_CONFIG (hp_configurable_get_config (configurable));
  HpModule *module = HP_MODULE (configurable);
  g_autoptr(HpTensor) weight = NULL;

  if (!HP_CONFIGURABLE_CLASS (xl_linear_parent_class)->setup (configurable, error))
    return FALSE;

  weight = hp_tensor_new_zeros (HP_DTYPE_FLOAT64,
                                (gint64[]) { config->out_features, config->in_features }, 2);
  if (!hp_module_register_parameter (module, "weight", weight, error))
    return FALSE;
  if (config->bias)
    {
      g_autoptr(HpTensor) bias = hp_tensor_new_zeros (HP_DTYPE_FLOAT64,
                                                      (gint64[]) { config->out_features }, 1);

      return hp_module_register_parameter (module, "bias", bias, error);
    }
  return TRUE;
}

/* @tensor, which may be NULL with @error set, as the one output */
static GPtrArray *
single_output (HpTensor *tensor)
{
  GPtrArray *outputs;

  if (tensor == NULL)
    return NULL;
  outputs = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (outputs, tensor);
  return outputs;
}

static GPtrArray *
xl_linear_forward (HpModule   *module,
                   GPtrArray  *args,
                   GError    **error)
{
  return single_output (hp_tensor_linear (g_ptr_array_index (args, 0),
                                          hp_module_get_parameter (module, "weight"),
                                          hp_module_get_parameter (module, "bias"),
                                          error));
}

static void
xl_linear_class_init (XlLinearClass *klass)
{
  HP_CONFIGURABLE_CLASS (klass)->setup = xl_linear_setup;
  HP_MODULE_CLASS (klass)->forward = xl_linear_forward;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "x", NULL });
}

static void
xl_linear_init (XlLinear *self)
{
}

/* Builds the child @name of @self from the nested configuration @config */
static gboolean
add_child (HpModule     *self,
           const gchar  *name,
           gpointer      config,
           GError      **error)
{
  g_autoptr(GObject) child = hp_config_build (HP_CONFIG (config), error);

  return child != NULL && hp_module_add_child (self, name, HP_MODULE (child), error);
}

/* MLP: w2 (act (w1 x)) */

#define XL_TYPE_MLP_CONFIG (xl_mlp_config_get_type ())
G_DECLARE_FINAL_TYPE (XlMLPConfig, xl_mlp_config, XL, MLP_CONFIG, HpModuleConfig)

#define XL_TYPE_MLP (xl_mlp_get_type ())
G_DECLARE_FINAL_TYPE (XlMLP, xl_mlp, XL, MLP, HpModule)

struct _XlMLPConfig
{
  HpModuleConfig parent_instance;

  gchar *activation;
  XlLinearConfig *w1;
  XlLinearConfig *w2;
};

struct _XlMLP
{
  HpModule parent_instance;

  HpTensor *(*activation) (HpTensor *, GError **);
};

G_DEFINE_FINAL_TYPE (XlMLPConfig, xl_mlp_config, HP_TYPE_MODULE_CONFIG)
G_DEFINE_FINAL_TYPE (XlMLP, xl_mlp, HP_TYPE_MODULE)

static const HpConfigField mlp_config_fields[] = {
  HP_CONFIG_FIELD_STRING (XlMLPConfig, activation, "activation", "silu or gelu", "silu"),
  HP_CONFIG_FIELD_OBJECT (XlMLPConfig, w1, "w1", "The first layer (column-wise)",
                          xl_linear_config_get_type, xl_linear_config_get_type),
  HP_CONFIG_FIELD_OBJECT (XlMLPConfig, w2, "w2", "The second layer (row-wise)",
                          xl_linear_config_get_type, xl_linear_config_get_type),
};

static gboolean
xl_mlp_config_validate (HpConfig  *config,
                        GError   **error)
{
  XlMLPConfig *self = XL_MLP_CONFIG (config);

  if (!HP_CONFIG_CLASS (xl_mlp_config_parent_class)->validate (config, error))
    return FALSE;
  if (g_strcmp0 (self->activation, "silu") != 0 && g_strcmp0 (self->activation, "gelu") != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "unknown activation '%s'",
                   self->activation != NULL ? self->activation : "(null)");
      return FALSE;
    }
  return TRUE;
}

static void
xl_mlp_config_class_init (XlMLPConfigClass *klass)
{
  HP_CONFIG_CLASS (klass)->validate = xl_mlp_config_validate;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), mlp_config_fields,
                                  G_N_ELEMENTS (mlp_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), XL_TYPE_MLP);
}

static void
xl_mlp_config_init (XlMLPConfig *self)
{
}

static gboolean
xl_mlp_setup (HpConfigurable  *configurable,
              GError         **error)
{
  XlMLPConfig *config = XL_MLP_CONFIG (hp_configurable_get_config (configurable));
  XlMLP *self = XL_MLP (configurable);

  if (!HP_CONFIGURABLE_CLASS (xl_mlp_parent_class)->setup (configurable, error))
    return FALSE;

  self->activation = g_str_equal (config->activation, "gelu") ? hp_tensor_gelu : hp_tensor_silu;
  return add_child (HP_MODULE (self), "w1", config->w1, error) &&
         add_child (HP_MODULE (self), "w2", config->w2, error);
}

static GPtrArray *
xl_mlp_forward (HpModule   *module,
                GPtrArray  *args,
                GError    **error)
{
  g_autoptr(HpTensor) hidden = NULL;
  g_autoptr(HpTensor) activated = NULL;

  if (!(hidden = hp_module_call1 (hp_module_get_child (module, "w1"), g_ptr_array_index (args, 0), error)) ||
      !(activated = XL_MLP (module)->activation (hidden, error)))
    return NULL;
  return single_output (hp_module_call1 (hp_module_get_child (module, "w2"), activated, error));
}

static void
xl_mlp_class_init (XlMLPClass *klass)
{
  HP_CONFIGURABLE_CLASS (klass)->setup = xl_mlp_setup;
  HP_MODULE_CLASS (klass)->forward = xl_mlp_forward;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "x", NULL });
}

static void
xl_mlp_init (XlMLP *self)
{
}

/* Attention: wo (inner_attention (heads (wq x), heads (wk x), heads (wv x))) */

#define XL_TYPE_ATTENTION_CONFIG (xl_attention_config_get_type ())
G_DECLARE_FINAL_TYPE (XlAttentionConfig, xl_attention_config, XL, ATTENTION_CONFIG, HpModuleConfig)

#define XL_TYPE_ATTENTION (xl_attention_get_type ())
G_DECLARE_FINAL_TYPE (XlAttention, xl_attention, XL, ATTENTION, HpModule)

struct _XlAttentionConfig
{
  HpModuleConfig parent_instance;

  gint n_heads;
  gboolean causal;
  XlLinearConfig *wq;
  XlLinearConfig *wk;
  XlLinearConfig *wv;
  XlLinearConfig *wo;
};

struct _XlAttention
{
  HpModule parent_instance;

  /* what the callable was last given: the heads of q, and whether q
   * was a DTensor */
  gint64 seen_heads;
  gboolean seen_dtensor;
};

G_DEFINE_FINAL_TYPE (XlAttentionConfig, xl_attention_config, HP_TYPE_MODULE_CONFIG)
G_DEFINE_FINAL_TYPE (XlAttention, xl_attention, HP_TYPE_MODULE)

static const HpConfigField attention_config_fields[] = {
  HP_CONFIG_FIELD_INT (XlAttentionConfig, n_heads, "n-heads", "Attention heads", 1, G_MAXINT, 1),
  HP_CONFIG_FIELD_BOOLEAN (XlAttentionConfig, causal, "causal", "Whether a query sees only earlier keys", TRUE),
  HP_CONFIG_FIELD_OBJECT (XlAttentionConfig, wq, "wq", "The query projection",
                          xl_linear_config_get_type, xl_linear_config_get_type),
  HP_CONFIG_FIELD_OBJECT (XlAttentionConfig, wk, "wk", "The key projection",
                          xl_linear_config_get_type, xl_linear_config_get_type),
  HP_CONFIG_FIELD_OBJECT (XlAttentionConfig, wv, "wv", "The value projection",
                          xl_linear_config_get_type, xl_linear_config_get_type),
  HP_CONFIG_FIELD_OBJECT (XlAttentionConfig, wo, "wo", "The output projection",
                          xl_linear_config_get_type, xl_linear_config_get_type),
};

static void
xl_attention_config_class_init (XlAttentionConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), attention_config_fields,
                                  G_N_ELEMENTS (attention_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), XL_TYPE_ATTENTION);
}

static void
xl_attention_config_init (XlAttentionConfig *self)
{
}

/* The callable that local_map may wrap: q, k, v [B, H, S, D] to the
 * attention output, on whichever heads it is given */
static GPtrArray *
xl_attention_inner (HpModule   *module,
                    GPtrArray  *args,
                    gpointer    user_data,
                    GError    **error)
{
  XlAttention *self = XL_ATTENTION (module);
  XlAttentionConfig *config = XL_ATTENTION_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (module)));
  HpTensor *q = g_ptr_array_index (args, 0);

  self->seen_heads = hp_tensor_get_shape (q, NULL)[1];
  self->seen_dtensor = HP_IS_DTENSOR (q);
  return single_output (hp_tensor_scaled_dot_product_attention (g_ptr_array_index (args, 0),
                                                                g_ptr_array_index (args, 1),
                                                                g_ptr_array_index (args, 2),
                                                                NULL, config->causal, 0.0,
                                                                error));
}

static gboolean
xl_attention_setup (HpConfigurable  *configurable,
                    GError         **error)
{
  XlAttentionConfig *config = XL_ATTENTION_CONFIG (hp_configurable_get_config (configurable));
  HpModule *module = HP_MODULE (configurable);

  if (!HP_CONFIGURABLE_CLASS (xl_attention_parent_class)->setup (configurable, error))
    return FALSE;

  if (config->wq->out_features % config->n_heads != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "%d heads do not divide %d features",
                   config->n_heads, config->wq->out_features);
      return FALSE;
    }
  /* the module owns the callable: it borrows the module */
  hp_module_register_callable (module, "inner_attention", xl_attention_inner, NULL, NULL);
  return add_child (module, "wq", config->wq, error) &&
         add_child (module, "wk", config->wk, error) &&
         add_child (module, "wv", config->wv, error) &&
         add_child (module, "wo", config->wo, error);
}

/* [B, S, H * D] -> [B, H, S, D] */
static HpTensor *
split_heads (HpTensor  *x,
             gint       n_heads,
             GError   **error)
{
  const gint64 *shape = hp_tensor_get_shape (x, NULL);
  g_autoptr(HpTensor) split =
    hp_tensor_reshape (x, (gint64[]) { shape[0], shape[1], n_heads, shape[2] / n_heads }, 4, error);

  return split != NULL ? hp_tensor_transpose (split, 1, 2, error) : NULL;
}

/* [B, H, S, D] -> [B, S, H * D] */
static HpTensor *
merge_heads (HpTensor  *x,
             GError   **error)
{
  g_autoptr(HpTensor) swapped = hp_tensor_transpose (x, 1, 2, error);
  const gint64 *shape;

  if (swapped == NULL)
    return NULL;
  shape = hp_tensor_get_shape (swapped, NULL);
  return hp_tensor_reshape (swapped, (gint64[]) { shape[0], shape[1], shape[2] * shape[3] }, 3, error);
}

static GPtrArray *
xl_attention_forward (HpModule   *module,
                      GPtrArray  *args,
                      GError    **error)
{
  XlAttentionConfig *config = XL_ATTENTION_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (module)));
  HpTensor *x = g_ptr_array_index (args, 0);
  const gchar *names[] = { "wq", "wk", "wv" };
  g_autoptr(GPtrArray) heads = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) attended = NULL;
  g_autoptr(HpTensor) merged = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(HpTensor) projected = hp_module_call1 (hp_module_get_child (module, names[i]), x, error);
      HpTensor *split;

      if (projected == NULL || !(split = split_heads (projected, config->n_heads, error)))
        return NULL;
      g_ptr_array_add (heads, split);
    }
  if (!(attended = hp_module_run_callable (module, "inner_attention", heads, error)) ||
      !(merged = merge_heads (g_ptr_array_index (attended, 0), error)))
    return NULL;
  return single_output (hp_module_call1 (hp_module_get_child (module, "wo"), merged, error));
}

static void
xl_attention_class_init (XlAttentionClass *klass)
{
  HP_CONFIGURABLE_CLASS (klass)->setup = xl_attention_setup;
  HP_MODULE_CLASS (klass)->forward = xl_attention_forward;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "x", NULL });
}

static void
xl_attention_init (XlAttention *self)
{
}

/* Model: h = x + attention (x); h = h + mlp (h); loss = mean ((head (h) - target)^2) */

#define XL_TYPE_MODEL_CONFIG (xl_model_config_get_type ())
G_DECLARE_FINAL_TYPE (XlModelConfig, xl_model_config, XL, MODEL_CONFIG, HpModuleConfig)

#define XL_TYPE_MODEL (xl_model_get_type ())
G_DECLARE_FINAL_TYPE (XlModel, xl_model, XL, MODEL, HpModule)

struct _XlModelConfig
{
  HpModuleConfig parent_instance;

  XlAttentionConfig *attention;
  XlMLPConfig *mlp;
  XlLinearConfig *head;
};

struct _XlModel
{
  HpModule parent_instance;
};

G_DEFINE_FINAL_TYPE (XlModelConfig, xl_model_config, HP_TYPE_MODULE_CONFIG)
G_DEFINE_FINAL_TYPE (XlModel, xl_model, HP_TYPE_MODULE)

static const HpConfigField model_config_fields[] = {
  HP_CONFIG_FIELD_OBJECT (XlModelConfig, attention, "attention", "The attention block",
                          xl_attention_config_get_type, xl_attention_config_get_type),
  HP_CONFIG_FIELD_OBJECT (XlModelConfig, mlp, "mlp", "The MLP",
                          xl_mlp_config_get_type, xl_mlp_config_get_type),
  HP_CONFIG_FIELD_OBJECT (XlModelConfig, head, "head", "The output layer",
                          xl_linear_config_get_type, xl_linear_config_get_type),
};

static void
xl_model_config_class_init (XlModelConfigClass *klass)
{
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), model_config_fields,
                                  G_N_ELEMENTS (model_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), XL_TYPE_MODEL);
}

static void
xl_model_config_init (XlModelConfig *self)
{
}

static gboolean
xl_model_setup (HpConfigurable  *configurable,
                GError         **error)
{
  XlModelConfig *config = XL_MODEL_CONFIG (hp_configurable_get_config (configurable));
  HpModule *module = HP_MODULE (configurable);

  if (!HP_CONFIGURABLE_CLASS (xl_model_parent_class)->setup (configurable, error))
    return FALSE;

  return add_child (module, "attention", config->attention, error) &&
         add_child (module, "mlp", config->mlp, error) &&
         add_child (module, "head", config->head, error);
}

static GPtrArray *
xl_model_forward (HpModule   *module,
                  GPtrArray  *args,
                  GError    **error)
{
  HpTensor *x = g_ptr_array_index (args, 0);
  HpTensor *target = g_ptr_array_index (args, 1);
  g_autoptr(HpTensor) attended = NULL;
  g_autoptr(HpTensor) h = NULL;
  g_autoptr(HpTensor) transformed = NULL;
  g_autoptr(HpTensor) h2 = NULL;
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) diff = NULL;
  g_autoptr(HpTensor) squared = NULL;

  if (!(attended = hp_module_call1 (hp_module_get_child (module, "attention"), x, error)) ||
      !(h = hp_tensor_add (x, attended, error)) ||
      !(transformed = hp_module_call1 (hp_module_get_child (module, "mlp"), h, error)) ||
      !(h2 = hp_tensor_add (h, transformed, error)) ||
      !(y = hp_module_call1 (hp_module_get_child (module, "head"), h2, error)) ||
      !(diff = hp_tensor_sub (y, target, error)) ||
      !(squared = hp_tensor_mul (diff, diff, error)))
    return NULL;
  return single_output (hp_tensor_mean_all (squared, error));
}

static void
xl_model_class_init (XlModelClass *klass)
{
  HP_CONFIGURABLE_CLASS (klass)->setup = xl_model_setup;
  HP_MODULE_CLASS (klass)->forward = xl_model_forward;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "x", "target", NULL });
}

static void
xl_model_init (XlModel *self)
{
}

/* The training step, the same in every language */

/* x[b, s, d] and target[b, s, c] of batch rows [first, first + rows) */
static HpTensor *
batch_tensor (gboolean   target,
              gint64     first,
              gint64     rows,
              gint64     seq_len,
              gint64     width)
{
  g_autofree gdouble *data = g_new (gdouble, rows * seq_len * width);
  gsize i = 0;

  for (gint64 b = first; b < first + rows; b++)
    for (gint64 s = 0; s < seq_len; s++)
      for (gint64 d = 0; d < width; d++)
        data[i++] = target ? ((b * 3 + s * 2 + d * 5) % 7 - 3) / 2.0
                           : ((b * 7 + s * 5 + d * 3) % 11 - 5) / 4.0;
  return hp_tensor_new_from_data (HP_DTYPE_FLOAT64, data, i,
                                  (gint64[]) { rows, seq_len, width }, 3, NULL);
}

static gint64
document_int (JsonObject  *document,
              const gchar *name)
{
  return json_object_get_int_member (document, name);
}

static gint
config_int (HpConfig    *config,
            const gchar *path,
            GError     **error)
{
  g_auto(GValue) value = G_VALUE_INIT;

  if (!hp_config_get_value (config, path, &value, error))
    return 0;
  return g_value_get_int (&value);
}

static gchar *
placements_text (HpTensor *tensor)
{
  return HP_IS_DTENSOR (tensor) ? hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (tensor)))
                                : g_strdup ("plain");
}

/* The full values of @tensor, gathered if it is a DTensor, as
 * "KIND NAME v v v..." */
static gboolean
append_values (GString      *out,
               const gchar  *kind,
               const gchar  *name,
               HpTensor     *tensor,
               GError      **error)
{
  g_autoptr(HpTensor) full = HP_IS_DTENSOR (tensor) ? hp_dtensor_full_tensor (HP_DTENSOR (tensor), error)
                                                    : g_object_ref (tensor);
  g_autofree gdouble *values = NULL;
  gsize n = 0;

  if (full == NULL)
    return FALSE;
  values = hp_tensor_to_float64_array (full, &n);
  g_string_append_printf (out, "%s %s", kind, name);
  for (gsize i = 0; i < n; i++)
    g_string_append_printf (out, " %.17g", values[i]);
  g_string_append_c (out, '\n');
  return TRUE;
}

static gboolean
run (const gchar  *document_path,
     const gchar  *output_path,
     const gchar  *layout,
     GError      **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *document;
  g_autoptr(HpConfig) model_config = NULL;
  g_autoptr(HpConfig) optimizer_config = NULL;
  g_autoptr(HpModule) model = NULL;
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpDeviceMesh) tp_mesh = NULL;
  g_autoptr(HpDeviceMesh) dp_mesh = NULL;
  g_autoptr(HpOptimizer) optimizer = NULL;
  g_autoptr(GPtrArray) parameters = NULL;
  g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) outputs = NULL;
  g_autoptr(HpTensor) loss_full = NULL;
  g_autoptr(HpStateDict) named = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree gchar *json = NULL;
  XlAttention *attention;
  gint world = hp_get_world_size ();
  gint64 batch, seq_len, rows, first = 0;
  gint dim, classes;
  gdouble loss;

  if (!json_parser_load_from_file (parser, document_path, error))
    return FALSE;
  document = json_node_get_object (json_parser_get_root (parser));
  model_config = hp_config_new_from_json_node (XL_TYPE_MODEL_CONFIG,
                                               json_object_get_member (document, "model"), error);
  if (model_config == NULL)
    return FALSE;
  optimizer_config = hp_config_new_from_json_node (HP_TYPE_OPTIMIZER_CONFIG,
                                                   json_object_get_member (document, "optimizer"),
                                                   error);
  if (optimizer_config == NULL)
    return FALSE;
  model = HP_MODULE (hp_config_build (model_config, error));
  if (model == NULL)
    return FALSE;

  if (g_str_equal (layout, "tp"))
    {
      mesh = hp_device_mesh_new ((gint[]) { world }, 1, (const gchar * const[]) { "tp", NULL }, error);
      tp_mesh = mesh != NULL ? g_object_ref (mesh) : NULL;
    }
  else if (g_str_equal (layout, "dp,tp"))
    {
      mesh = hp_device_mesh_new ((gint[]) { 2, world / 2 }, 2,
                                 (const gchar * const[]) { "dp", "tp", NULL }, error);
      if (mesh != NULL)
        tp_mesh = hp_device_mesh_slice (mesh, (const gchar * const[]) { "tp", NULL }, error);
      if (tp_mesh != NULL)
        dp_mesh = hp_device_mesh_slice (mesh, (const gchar * const[]) { "dp", NULL }, error);
      if (dp_mesh == NULL)
        return FALSE;
    }
  else if (!g_str_equal (layout, "none"))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT, "unknown layout '%s'", layout);
      return FALSE;
    }
  if (mesh != NULL && tp_mesh == NULL)
    return FALSE;
  if (tp_mesh != NULL && !hp_module_parallelize (model, tp_mesh, error))
    return FALSE;
  if (!hp_module_init_states (model, document_int (document, "seed"), error))
    return FALSE;

  batch = document_int (document, "batch");
  seq_len = document_int (document, "seq-len");
  if (!(dim = config_int (model_config, "attention.wq.in-features", error)) ||
      !(classes = config_int (model_config, "head.out-features", error)))
    return FALSE;
  rows = batch;
  if (dp_mesh != NULL)
    {
      rows = batch / hp_device_mesh_get_size (dp_mesh);
      first = rows * hp_device_mesh_get_local_rank (dp_mesh, 0);
    }
  g_ptr_array_add (args, batch_tensor (FALSE, first, rows, seq_len, dim));
  g_ptr_array_add (args, batch_tensor (TRUE, first, rows, seq_len, classes));

  parameters = hp_module_parameters (model);
  optimizer = hp_optimizer_config_build_optimizer (HP_OPTIMIZER_CONFIG (optimizer_config),
                                                   parameters, error);
  if (optimizer == NULL)
    return FALSE;
  outputs = hp_module_call (model, args, error);
  if (outputs == NULL || !hp_tensor_backward (g_ptr_array_index (outputs, 0), NULL, error))
    return FALSE;
  loss_full = HP_IS_DTENSOR (g_ptr_array_index (outputs, 0))
    ? hp_dtensor_full_tensor (g_ptr_array_index (outputs, 0), error)
    : g_object_ref (g_ptr_array_index (outputs, 0));
  if (loss_full == NULL)
    return FALSE;
  loss = hp_tensor_item (loss_full, error);
  if (dp_mesh != NULL &&
      (!hp_data_parallel_average_gradients (parameters, dp_mesh, error) ||
       !hp_data_parallel_average_scalar (dp_mesh, &loss, error)))
    return FALSE;
  if (!hp_optimizer_step (optimizer, error))
    return FALSE;

  json = hp_config_to_json (hp_configurable_get_config (HP_CONFIGURABLE (model)), FALSE);
  g_string_append_printf (out, "config %s\n", json);
  g_string_append_printf (out, "loss %.17g\n", loss);
  attention = XL_ATTENTION (hp_module_get_child (model, "attention"));
  g_string_append_printf (out, "mapped %d\ncallable-heads %" G_GINT64_FORMAT "\ncallable-dtensor %d\n",
                          hp_module_callable_is_local_mapped (model, "attention.inner_attention"),
                          attention->seen_heads, attention->seen_dtensor);
  named = hp_module_named_parameters (model);
  for (guint i = 0; i < hp_state_dict_get_size (named); i++)
    {
      const gchar *name = hp_state_dict_get_name (named, i);
      HpTensor *parameter = hp_state_dict_get_tensor (named, i);
      g_autofree gchar *placements = placements_text (parameter);
      g_autofree gchar *grad_placements = placements_text (hp_tensor_get_grad (parameter));

      g_string_append_printf (out, "placement %s %s %s\n", name, placements, grad_placements);
      if (!append_values (out, "param", name, parameter, error) ||
          !append_values (out, "grad", name, hp_tensor_get_grad (parameter), error))
        return FALSE;
    }
  return hp_get_world_rank () != 0 || g_file_set_contents (output_path, out->str, out->len, error);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;

  if (argc != 4)
    {
      g_printerr ("usage: %s DOCUMENT OUTPUT none|tp|dp,tp\n", argv[0]);
      return 2;
    }
  if (!hp_init (&error) || !run (argv[1], argv[2], argv[3], &error))
    {
      g_printerr ("rank %d: %s\n", hp_get_world_rank (), error->message);
      return 1;
    }
  return 0;
}
