/* hp-linear.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-error.h"
#include "hp-initializer.h"
#include "hp-linear.h"
#include "hp-nn-basic-private.h"
#include "hp-tensor-enum-types.h"
#include "hp-tensor-ops.h"

/**
 * HpLinearConfig:
 *
 * The configuration of a #HpLinear: the numbers of input and output
 * features, whether there is a bias, and the element type of the
 * parameters.
 *
 * |[<!-- language="C" -->
 * g_autoptr(HpLinearConfig) config = hp_linear_config_new (64, 256);
 * g_autoptr(HpLinear) linear = hp_linear_new (config, &error);
 * ]|
 */

/**
 * HpLinear:
 *
 * The linear layer `y = x W^T + b` of torch's `nn.Linear`, as a
 * #HpModule built from a #HpLinearConfig.
 *
 * Its parameters are `weight`, of shape [out-features, in-features],
 * and, when #HpLinearConfig:bias is set, `bias` of shape
 * [out-features]. Without a #HpParamInit, hp_module_init_states()
 * draws the weight from a normal distribution with standard deviation
 * 0.02 truncated to [-2, 2] (torchtitan's default for linear layers)
 * and sets the bias to zeros. The weight draws from
 * `hp_module_derive_seed (seed, "weight")`, the seed a #HpParamInit
 * entry would use, so that a sharded weight gets exactly its slice of
 * the values.
 *
 * The forward argument is `input`, of shape [..., in-features]; the
 * output has shape [..., out-features]. The computation is
 * hp_tensor_linear(), so DTensor inputs and parameters follow its
 * sharding rules: see hp_sharding_colwise() and hp_sharding_rowwise()
 * for the two tensor-parallel layouts.
 */

struct _HpLinearConfig
{
  HpModuleConfig parent_instance;

  gint in_features;
  gint out_features;
  gboolean bias;
  HpDType dtype;
};

G_DEFINE_FINAL_TYPE (HpLinearConfig, hp_linear_config, HP_TYPE_MODULE_CONFIG)

enum {
  CONFIG_PROP_0,
  CONFIG_PROP_IN_FEATURES,
  CONFIG_PROP_OUT_FEATURES,
  CONFIG_PROP_BIAS,
  CONFIG_PROP_DTYPE,
  CONFIG_N_PROPS
};

static GParamSpec *config_properties[CONFIG_N_PROPS];

struct _HpLinear
{
  HpModule parent_instance;
};

static void hp_linear_initable_iface_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (HpLinear, hp_linear, HP_TYPE_MODULE,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE,
                                                      hp_linear_initable_iface_init))

/* HpLinearConfig */

static void
hp_linear_config_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  HpLinearConfig *self = HP_LINEAR_CONFIG (object);

  switch (prop_id)
    {
    case CONFIG_PROP_IN_FEATURES:
      g_value_set_int (value, self->in_features);
      break;
    case CONFIG_PROP_OUT_FEATURES:
      g_value_set_int (value, self->out_features);
      break;
    case CONFIG_PROP_BIAS:
      g_value_set_boolean (value, self->bias);
      break;
    case CONFIG_PROP_DTYPE:
      g_value_set_enum (value, self->dtype);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_int (GObject      *object,
         gint         *field,
         const GValue *value,
         GParamSpec   *pspec)
{
  if (*field != g_value_get_int (value))
    {
      *field = g_value_get_int (value);
      g_object_notify_by_pspec (object, pspec);
    }
}

static void
hp_linear_config_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  HpLinearConfig *self = HP_LINEAR_CONFIG (object);

  switch (prop_id)
    {
    case CONFIG_PROP_IN_FEATURES:
      set_int (object, &self->in_features, value, pspec);
      break;
    case CONFIG_PROP_OUT_FEATURES:
      set_int (object, &self->out_features, value, pspec);
      break;
    case CONFIG_PROP_BIAS:
      if (self->bias != g_value_get_boolean (value))
        {
          self->bias = g_value_get_boolean (value);
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
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_linear_config_class_init (HpLinearConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->get_property = hp_linear_config_get_property;
  object_class->set_property = hp_linear_config_set_property;

  /**
   * HpLinearConfig:in-features:
   *
   * The size of the last dim of the input.
   */
  config_properties[CONFIG_PROP_IN_FEATURES] =
    g_param_spec_int ("in-features", NULL, "Input features", 1, G_MAXINT, 1, flags);

  /**
   * HpLinearConfig:out-features:
   *
   * The size of the last dim of the output.
   */
  config_properties[CONFIG_PROP_OUT_FEATURES] =
    g_param_spec_int ("out-features", NULL, "Output features", 1, G_MAXINT, 1, flags);

  /**
   * HpLinearConfig:bias:
   *
   * Whether the layer adds a learned bias.
   */
  config_properties[CONFIG_PROP_BIAS] =
    g_param_spec_boolean ("bias", NULL, "Whether there is a bias", FALSE, flags);

  /**
   * HpLinearConfig:dtype:
   *
   * The element type of the parameters: float32 or float64.
   */
  config_properties[CONFIG_PROP_DTYPE] =
    g_param_spec_enum ("dtype", NULL, "Parameter dtype", HP_TYPE_DTYPE, HP_DTYPE_FLOAT32, flags);

  g_object_class_install_properties (object_class, CONFIG_N_PROPS, config_properties);

  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_LINEAR);
}

static void
hp_linear_config_init (HpLinearConfig *self)
{
  self->in_features = 1;
  self->out_features = 1;
  self->dtype = HP_DTYPE_FLOAT32;
}

/**
 * hp_linear_config_new:
 * @in_features: the number of input features, at least 1
 * @out_features: the number of output features, at least 1
 *
 * Creates the configuration of a linear layer without bias, with
 * float32 parameters.
 *
 * Returns: (transfer full): a new #HpLinearConfig
 */
HpLinearConfig *
hp_linear_config_new (gint in_features,
                      gint out_features)
{
  g_return_val_if_fail (in_features >= 1, NULL);
  g_return_val_if_fail (out_features >= 1, NULL);

  return g_object_new (HP_TYPE_LINEAR_CONFIG,
                       "in-features", in_features,
                       "out-features", out_features,
                       NULL);
}

/**
 * hp_linear_config_get_in_features:
 * @self: a #HpLinearConfig
 *
 * Gets #HpLinearConfig:in-features.
 *
 * Returns: the number of input features
 */
gint
hp_linear_config_get_in_features (HpLinearConfig *self)
{
  g_return_val_if_fail (HP_IS_LINEAR_CONFIG (self), 0);

  return self->in_features;
}

/**
 * hp_linear_config_get_out_features:
 * @self: a #HpLinearConfig
 *
 * Gets #HpLinearConfig:out-features.
 *
 * Returns: the number of output features
 */
gint
hp_linear_config_get_out_features (HpLinearConfig *self)
{
  g_return_val_if_fail (HP_IS_LINEAR_CONFIG (self), 0);

  return self->out_features;
}

/**
 * hp_linear_config_get_bias:
 * @self: a #HpLinearConfig
 *
 * Gets #HpLinearConfig:bias.
 *
 * Returns: whether the layer has a bias
 */
gboolean
hp_linear_config_get_bias (HpLinearConfig *self)
{
  g_return_val_if_fail (HP_IS_LINEAR_CONFIG (self), FALSE);

  return self->bias;
}

/**
 * hp_linear_config_get_dtype:
 * @self: a #HpLinearConfig
 *
 * Gets #HpLinearConfig:dtype.
 *
 * Returns: the element type of the parameters
 */
HpDType
hp_linear_config_get_dtype (HpLinearConfig *self)
{
  g_return_val_if_fail (HP_IS_LINEAR_CONFIG (self), HP_DTYPE_FLOAT32);

  return self->dtype;
}

/* HpLinear */

static HpLinearConfig *
get_config (HpLinear *self)
{
  return HP_LINEAR_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (self)));
}

static void
hp_linear_constructed (GObject *object)
{
  HpLinear *self = HP_LINEAR (object);
  HpLinearConfig *config;
  g_autoptr(HpTensor) weight = NULL;

  G_OBJECT_CLASS (hp_linear_parent_class)->constructed (object);

  /* a config that g_initable_init() rejects registers nothing */
  config = get_config (self);
  if (!hp_dtype_is_floating (config->dtype))
    return;

  weight = hp_tensor_new_zeros (config->dtype,
                                (gint64[]) { config->out_features, config->in_features }, 2);
  hp_module_register_parameter (HP_MODULE (self), "weight", weight, NULL);
  if (config->bias)
    {
      g_autoptr(HpTensor) bias =
        hp_tensor_new_zeros (config->dtype, (gint64[]) { config->out_features }, 1);

      hp_module_register_parameter (HP_MODULE (self), "bias", bias, NULL);
    }
}

static gboolean
hp_linear_initable_init (GInitable     *initable,
                         GCancellable  *cancellable,
                         GError       **error)
{
  HpLinearConfig *config = get_config (HP_LINEAR (initable));

  return _hp_nn_check_dtype (HP_CONFIG (config), config->dtype, error);
}

static void
hp_linear_initable_iface_init (GInitableIface *iface)
{
  iface->init = hp_linear_initable_init;
}

static GPtrArray *
hp_linear_forward (HpModule   *module,
                   GPtrArray  *args,
                   GError    **error)
{
  HpTensor *input = _hp_nn_single_arg (module, args, error);

  if (input == NULL)
    return NULL;
  return _hp_nn_single_output (hp_tensor_linear (input,
                                                 hp_module_get_parameter (module, "weight"),
                                                 hp_module_get_parameter (module, "bias"),
                                                 error));
}

static gboolean
hp_linear_reset_parameters (HpModule  *module,
                            guint64    seed,
                            GError   **error)
{
  g_autoptr(HpInitializer) normal = hp_initializer_new_trunc_normal (0.0, 0.02, -2.0, 2.0);
  g_autoptr(HpInitializer) zeros = hp_initializer_new_zeros ();
  HpTensor *bias = hp_module_get_parameter (module, "bias");

  if (!hp_initializer_apply (normal, hp_module_get_parameter (module, "weight"),
                             hp_module_derive_seed (seed, "weight"), error))
    return FALSE;
  return bias == NULL || hp_initializer_apply (zeros, bias, hp_module_derive_seed (seed, "bias"),
                                               error);
}

static void
hp_linear_class_init (HpLinearClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  object_class->constructed = hp_linear_constructed;
  module_class->compute = hp_linear_forward;
  module_class->reset_parameters = hp_linear_reset_parameters;
  hp_module_class_set_forward_arg_names (module_class,
                                         (const gchar * const[]) { "input", NULL });
}

static void
hp_linear_init (HpLinear *self)
{
}

/**
 * hp_linear_new:
 * @config: a #HpLinearConfig
 * @error: return location for a #GError
 *
 * Builds a linear layer from @config, as hp_config_build() does.
 *
 * Returns: (transfer full): the new #HpLinear, or %NULL with
 *   %HP_ERROR_CONFIG when #HpLinearConfig:dtype is not a floating-point
 *   type
 */
HpLinear *
hp_linear_new (HpLinearConfig  *config,
               GError         **error)
{
  g_return_val_if_fail (HP_IS_LINEAR_CONFIG (config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_LINEAR (hp_config_build (HP_CONFIG (config), error));
}
