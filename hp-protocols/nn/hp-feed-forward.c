/* hp-feed-forward.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-error.h"
#include "hp-feed-forward.h"
#include "hp-nn-basic-private.h"
#include "hp-tensor-enum-types.h"
#include "hp-tensor-ops.h"

/**
 * HpFeedForwardConfig:
 *
 * The configuration of a #HpFeedForward: the model dim, the hidden dim,
 * the element type, and the configurations of the three linear layers
 * `w1` (dim to hidden-dim), `w2` (hidden-dim to dim) and `w3` (dim to
 * hidden-dim).
 *
 * The three layer configurations are nested fields, so that JSON, the
 * traversal of hp_config_traverse() and dotted paths such as
 * `w2.param-init` reach them. A field that is %NULL when the
 * configuration is constructed, or that is set to %NULL later, gets a
 * #HpLinearConfig without bias derived from #HpFeedForwardConfig:dim,
 * #HpFeedForwardConfig:hidden-dim and #HpFeedForwardConfig:dtype; the
 * fields therefore never read %NULL. Changing the dims afterwards does
 * not change the layer configurations (they may be shared with copies,
 * see hp_config_copy()): to derive them again, set them to %NULL in the
 * same call, for example
 * `hp_config_replace (cfg, "dim", 16, "w1", NULL, "w2", NULL, "w3", NULL, NULL)`.
 * Building checks that the layers fit the dims.
 */

/**
 * HpFeedForward:
 *
 * The SwiGLU feed-forward block of Llama,
 * `out = w2 (silu (w1 (x)) * w3 (x))`, as a #HpModule built from a
 * #HpFeedForwardConfig. Its children are the #HpLinear layers `w1`,
 * `w2` and `w3`, built from the configuration's nested fields; it has
 * no parameters of its own. Each layer initialises its own weight
 * (see #HpLinear), unless the layer configurations carry a
 * #HpParamInit.
 *
 * The forward argument is `input`, of shape [..., dim]; the output has
 * its shape. hp_set_dense_ffn_sharding() lays the block out for tensor
 * parallelism.
 */

enum {
  LAYER_W1,
  LAYER_W2,
  LAYER_W3,
  N_LAYERS
};

static const gchar * const layer_names[N_LAYERS] = { "w1", "w2", "w3" };

struct _HpFeedForwardConfig
{
  HpModuleConfig parent_instance;

  gint dim;
  gint hidden_dim;
  HpDType dtype;
  HpLinearConfig *layers[N_LAYERS];
  gboolean constructed;
};

G_DEFINE_FINAL_TYPE (HpFeedForwardConfig, hp_feed_forward_config, HP_TYPE_MODULE_CONFIG)

enum {
  CONFIG_PROP_0,
  CONFIG_PROP_DIM,
  CONFIG_PROP_HIDDEN_DIM,
  CONFIG_PROP_DTYPE,
  CONFIG_PROP_W1,
  CONFIG_PROP_W2,
  CONFIG_PROP_W3,
  CONFIG_N_PROPS
};

static GParamSpec *config_properties[CONFIG_N_PROPS];

struct _HpFeedForward
{
  HpModule parent_instance;

  /* why a layer could not be built in constructed(), for
   * g_initable_init() */
  GError *build_error;
};

G_DEFINE_FINAL_TYPE (HpFeedForward, hp_feed_forward, HP_TYPE_MODULE)

/* HpFeedForwardConfig */

/* The in and out features layer @layer has in a block of these dims */
static void
layer_features (gint  layer,
                gint  dim,
                gint  hidden_dim,
                gint *in_features,
                gint *out_features)
{
  *in_features = layer == LAYER_W2 ? hidden_dim : dim;
  *out_features = layer == LAYER_W2 ? dim : hidden_dim;
}

static HpLinearConfig *
derive_layer (HpFeedForwardConfig *self,
              gint                 layer)
{
  gint in_features, out_features;

  layer_features (layer, self->dim, self->hidden_dim, &in_features, &out_features);
  return g_object_new (HP_TYPE_LINEAR_CONFIG,
                       "in-features", in_features,
                       "out-features", out_features,
                       "dtype", self->dtype,
                       NULL);
}

static void
hp_feed_forward_config_constructed (GObject *object)
{
  HpFeedForwardConfig *self = HP_FEED_FORWARD_CONFIG (object);

  G_OBJECT_CLASS (hp_feed_forward_config_parent_class)->constructed (object);

  for (gint i = 0; i < N_LAYERS; i++)
    if (self->layers[i] == NULL)
      self->layers[i] = derive_layer (self, i);
  self->constructed = TRUE;
}

static void
hp_feed_forward_config_dispose (GObject *object)
{
  HpFeedForwardConfig *self = HP_FEED_FORWARD_CONFIG (object);

  for (gint i = 0; i < N_LAYERS; i++)
    g_clear_object (&self->layers[i]);

  G_OBJECT_CLASS (hp_feed_forward_config_parent_class)->dispose (object);
}

static void
hp_feed_forward_config_get_property (GObject    *object,
                                     guint       prop_id,
                                     GValue     *value,
                                     GParamSpec *pspec)
{
  HpFeedForwardConfig *self = HP_FEED_FORWARD_CONFIG (object);

  switch (prop_id)
    {
    case CONFIG_PROP_DIM:
      g_value_set_int (value, self->dim);
      break;
    case CONFIG_PROP_HIDDEN_DIM:
      g_value_set_int (value, self->hidden_dim);
      break;
    case CONFIG_PROP_DTYPE:
      g_value_set_enum (value, self->dtype);
      break;
    case CONFIG_PROP_W1:
    case CONFIG_PROP_W2:
    case CONFIG_PROP_W3:
      g_value_set_object (value, self->layers[prop_id - CONFIG_PROP_W1]);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_layer (HpFeedForwardConfig *self,
           gint                 layer,
           HpLinearConfig      *config,
           GParamSpec          *pspec)
{
  g_autoptr(HpLinearConfig) derived = NULL;

  /* during construction, constructed() derives what is missing */
  if (config == NULL && self->constructed)
    config = derived = derive_layer (self, layer);
  if (g_set_object (&self->layers[layer], config))
    g_object_notify_by_pspec (G_OBJECT (self), pspec);
}

static void
hp_feed_forward_config_set_property (GObject      *object,
                                     guint         prop_id,
                                     const GValue *value,
                                     GParamSpec   *pspec)
{
  HpFeedForwardConfig *self = HP_FEED_FORWARD_CONFIG (object);

  switch (prop_id)
    {
    case CONFIG_PROP_DIM:
      if (self->dim != g_value_get_int (value))
        {
          self->dim = g_value_get_int (value);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case CONFIG_PROP_HIDDEN_DIM:
      if (self->hidden_dim != g_value_get_int (value))
        {
          self->hidden_dim = g_value_get_int (value);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case CONFIG_PROP_DTYPE:
      if (self->dtype != (HpDType) g_value_get_enum (value))
        {
          self->dtype = g_value_get_enum (value);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case CONFIG_PROP_W1:
    case CONFIG_PROP_W2:
    case CONFIG_PROP_W3:
      set_layer (self, prop_id - CONFIG_PROP_W1, g_value_get_object (value), pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_feed_forward_config_class_init (HpFeedForwardConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = (G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_EXPLICIT_NOTIFY |
                       G_PARAM_STATIC_STRINGS);

  object_class->constructed = hp_feed_forward_config_constructed;
  object_class->dispose = hp_feed_forward_config_dispose;
  object_class->get_property = hp_feed_forward_config_get_property;
  object_class->set_property = hp_feed_forward_config_set_property;

  /**
   * HpFeedForwardConfig:dim:
   *
   * The size of the last dim of the input and the output.
   */
  config_properties[CONFIG_PROP_DIM] =
    g_param_spec_int ("dim", NULL, "Input and output width", 1, G_MAXINT, 1, flags);

  /**
   * HpFeedForwardConfig:hidden-dim:
   *
   * The size of the hidden activations: the output features of `w1`
   * and `w3`, the input features of `w2`.
   */
  config_properties[CONFIG_PROP_HIDDEN_DIM] =
    g_param_spec_int ("hidden-dim", NULL, "Hidden width of w1 and w3", 1, G_MAXINT, 1, flags);

  /**
   * HpFeedForwardConfig:dtype:
   *
   * The element type of the layers' parameters: float32 or float64.
   * Layer configurations derived from the dims get it; given ones must
   * have it.
   */
  config_properties[CONFIG_PROP_DTYPE] =
    g_param_spec_enum ("dtype", NULL, "Parameter dtype", HP_TYPE_DTYPE, HP_DTYPE_FLOAT32, flags);

  /**
   * HpFeedForwardConfig:w1:
   *
   * The configuration of the gate projection `w1`, from dim to
   * hidden-dim; setting %NULL derives it from the dims.
   */
  config_properties[CONFIG_PROP_W1] =
    g_param_spec_object ("w1", NULL, NULL, HP_TYPE_LINEAR_CONFIG, flags);

  /**
   * HpFeedForwardConfig:w2:
   *
   * The configuration of the output projection `w2`, from hidden-dim to
   * dim; setting %NULL derives it from the dims.
   */
  config_properties[CONFIG_PROP_W2] =
    g_param_spec_object ("w2", NULL, NULL, HP_TYPE_LINEAR_CONFIG, flags);

  /**
   * HpFeedForwardConfig:w3:
   *
   * The configuration of the up projection `w3`, from dim to
   * hidden-dim; setting %NULL derives it from the dims.
   */
  config_properties[CONFIG_PROP_W3] =
    g_param_spec_object ("w3", NULL, NULL, HP_TYPE_LINEAR_CONFIG, flags);

  g_object_class_install_properties (object_class, CONFIG_N_PROPS, config_properties);

  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_FEED_FORWARD);
}

static void
hp_feed_forward_config_init (HpFeedForwardConfig *self)
{
  self->dim = 1;
  self->hidden_dim = 1;
  self->dtype = HP_DTYPE_FLOAT32;
}

/**
 * hp_feed_forward_config_new:
 * @dim: the model dim, at least 1
 * @hidden_dim: the hidden dim, at least 1
 *
 * Creates the configuration of a feed-forward block with float32
 * parameters, whose layers are derived from the dims.
 *
 * Returns: (transfer full): a new #HpFeedForwardConfig
 */
HpFeedForwardConfig *
hp_feed_forward_config_new (gint dim,
                            gint hidden_dim)
{
  g_return_val_if_fail (dim >= 1, NULL);
  g_return_val_if_fail (hidden_dim >= 1, NULL);

  return g_object_new (HP_TYPE_FEED_FORWARD_CONFIG,
                       "dim", dim,
                       "hidden-dim", hidden_dim,
                       NULL);
}

/**
 * hp_feed_forward_config_get_dim:
 * @self: a #HpFeedForwardConfig
 *
 * Gets #HpFeedForwardConfig:dim.
 *
 * Returns: the model dim
 */
gint
hp_feed_forward_config_get_dim (HpFeedForwardConfig *self)
{
  g_return_val_if_fail (HP_IS_FEED_FORWARD_CONFIG (self), 0);

  return self->dim;
}

/**
 * hp_feed_forward_config_get_hidden_dim:
 * @self: a #HpFeedForwardConfig
 *
 * Gets #HpFeedForwardConfig:hidden-dim.
 *
 * Returns: the hidden dim
 */
gint
hp_feed_forward_config_get_hidden_dim (HpFeedForwardConfig *self)
{
  g_return_val_if_fail (HP_IS_FEED_FORWARD_CONFIG (self), 0);

  return self->hidden_dim;
}

/**
 * hp_feed_forward_config_get_dtype:
 * @self: a #HpFeedForwardConfig
 *
 * Gets #HpFeedForwardConfig:dtype.
 *
 * Returns: the element type of the parameters
 */
HpDType
hp_feed_forward_config_get_dtype (HpFeedForwardConfig *self)
{
  g_return_val_if_fail (HP_IS_FEED_FORWARD_CONFIG (self), HP_DTYPE_FLOAT32);

  return self->dtype;
}

/**
 * hp_feed_forward_config_get_w1:
 * @self: a #HpFeedForwardConfig
 *
 * Gets #HpFeedForwardConfig:w1.
 *
 * Returns: (transfer none): the configuration of `w1`
 */
HpLinearConfig *
hp_feed_forward_config_get_w1 (HpFeedForwardConfig *self)
{
  g_return_val_if_fail (HP_IS_FEED_FORWARD_CONFIG (self), NULL);

  return self->layers[LAYER_W1];
}

/**
 * hp_feed_forward_config_get_w2:
 * @self: a #HpFeedForwardConfig
 *
 * Gets #HpFeedForwardConfig:w2.
 *
 * Returns: (transfer none): the configuration of `w2`
 */
HpLinearConfig *
hp_feed_forward_config_get_w2 (HpFeedForwardConfig *self)
{
  g_return_val_if_fail (HP_IS_FEED_FORWARD_CONFIG (self), NULL);

  return self->layers[LAYER_W2];
}

/**
 * hp_feed_forward_config_get_w3:
 * @self: a #HpFeedForwardConfig
 *
 * Gets #HpFeedForwardConfig:w3.
 *
 * Returns: (transfer none): the configuration of `w3`
 */
HpLinearConfig *
hp_feed_forward_config_get_w3 (HpFeedForwardConfig *self)
{
  g_return_val_if_fail (HP_IS_FEED_FORWARD_CONFIG (self), NULL);

  return self->layers[LAYER_W3];
}

/* HpFeedForward */

static HpFeedForwardConfig *
get_config (HpFeedForward *self)
{
  return HP_FEED_FORWARD_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (self)));
}

static void
hp_feed_forward_constructed (GObject *object)
{
  HpFeedForward *self = HP_FEED_FORWARD (object);
  HpFeedForwardConfig *config;

  G_OBJECT_CLASS (hp_feed_forward_parent_class)->constructed (object);

  /* a layer that cannot be built leaves its error to g_initable_init() */
  config = get_config (self);
  for (gint i = 0; i < N_LAYERS; i++)
    {
      g_autoptr(GError) local_error = NULL;
      g_autoptr(GObject) layer = hp_config_build (HP_CONFIG (config->layers[i]), &local_error);

      if (layer == NULL)
        {
          if (self->build_error == NULL)
            {
              g_prefix_error (&local_error, "HpFeedForwardConfig.%s: ", layer_names[i]);
              self->build_error = g_steal_pointer (&local_error);
            }
          continue;
        }
      hp_module_add_child (HP_MODULE (self), layer_names[i], HP_MODULE (layer), NULL);
    }
}

static void
hp_feed_forward_finalize (GObject *object)
{
  HpFeedForward *self = HP_FEED_FORWARD (object);

  g_clear_error (&self->build_error);

  G_OBJECT_CLASS (hp_feed_forward_parent_class)->finalize (object);
}

static gboolean
check_layer (HpFeedForwardConfig  *config,
             gint                  layer,
             GError              **error)
{
  HpLinearConfig *linear = config->layers[layer];
  gint in_features, out_features;

  layer_features (layer, config->dim, config->hidden_dim, &in_features, &out_features);
  if (hp_linear_config_get_in_features (linear) != in_features)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpFeedForwardConfig.%s: in-features %d does not match %s %d",
                   layer_names[layer], hp_linear_config_get_in_features (linear),
                   layer == LAYER_W2 ? "hidden-dim" : "dim", in_features);
      return FALSE;
    }
  if (hp_linear_config_get_out_features (linear) != out_features)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpFeedForwardConfig.%s: out-features %d does not match %s %d",
                   layer_names[layer], hp_linear_config_get_out_features (linear),
                   layer == LAYER_W2 ? "dim" : "hidden-dim", out_features);
      return FALSE;
    }
  if (hp_linear_config_get_dtype (linear) != config->dtype)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpFeedForwardConfig.%s: dtype %s does not match dtype %s",
                   layer_names[layer], hp_dtype_to_string (hp_linear_config_get_dtype (linear)),
                   hp_dtype_to_string (config->dtype));
      return FALSE;
    }
  return TRUE;
}

static gboolean
hp_feed_forward_setup (HpConfigurable  *configurable,
                       GError         **error)
{
  HpFeedForward *self = HP_FEED_FORWARD (configurable);
  HpFeedForwardConfig *config = get_config (self);

  if (!HP_CONFIGURABLE_CLASS (hp_feed_forward_parent_class)->setup (configurable, error))
    return FALSE;

  if (!_hp_nn_check_dtype (HP_CONFIG (config), config->dtype, error))
    return FALSE;
  if (self->build_error != NULL)
    {
      g_propagate_error (error, g_error_copy (self->build_error));
      return FALSE;
    }
  for (gint i = 0; i < N_LAYERS; i++)
    if (!check_layer (config, i, error))
      return FALSE;
  return TRUE;
}

static HpTensor *
run_layer (HpModule     *module,
           gint          layer,
           HpTensor     *input,
           GError      **error)
{
  return hp_module_call1 (hp_module_get_child (module, layer_names[layer]), input, error);
}

static GPtrArray *
hp_feed_forward_forward (HpModule   *module,
                         GPtrArray  *args,
                         GError    **error)
{
  HpTensor *input = _hp_nn_single_arg (module, args, error);
  g_autoptr(HpTensor) gate = NULL;
  g_autoptr(HpTensor) up = NULL;
  g_autoptr(HpTensor) activated = NULL;
  g_autoptr(HpTensor) hidden = NULL;

  if (input == NULL ||
      (gate = run_layer (module, LAYER_W1, input, error)) == NULL ||
      (up = run_layer (module, LAYER_W3, input, error)) == NULL ||
      (activated = hp_tensor_silu (gate, error)) == NULL ||
      (hidden = hp_tensor_mul (activated, up, error)) == NULL)
    return NULL;
  return _hp_nn_single_output (run_layer (module, LAYER_W2, hidden, error));
}

static void
hp_feed_forward_class_init (HpFeedForwardClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_feed_forward_setup;
  object_class->constructed = hp_feed_forward_constructed;
  object_class->finalize = hp_feed_forward_finalize;
  module_class->forward = hp_feed_forward_forward;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "input", NULL });
}

static void
hp_feed_forward_init (HpFeedForward *self)
{
}

/**
 * hp_feed_forward_new:
 * @config: a #HpFeedForwardConfig
 * @error: return location for a #GError
 *
 * Builds a feed-forward block from @config, as hp_config_build() does.
 *
 * Returns: (transfer full): the new #HpFeedForward, or %NULL with
 *   %HP_ERROR_CONFIG when #HpFeedForwardConfig:dtype is not a
 *   floating-point type or a layer configuration does not fit the dims
 *   or the dtype, or with the error of building a layer
 */
HpFeedForward *
hp_feed_forward_new (HpFeedForwardConfig  *config,
                     GError              **error)
{
  g_return_val_if_fail (HP_IS_FEED_FORWARD_CONFIG (config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_FEED_FORWARD (hp_config_build (HP_CONFIG (config), error));
}
