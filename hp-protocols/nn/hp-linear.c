/* hp-linear.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-config-field.h"
#include "hp-error.h"
#include "hp-initializer.h"
#include "hp-linear.h"
#include "hp-nn-basic-private.h"
#include "hp-tensor-enum-types.h"
#include "hp-tensor-ops.h"

/**
 * HpLinearConfig:
 *
 * The configuration of a [class@Hp.Linear]: the numbers of input and output
 * features, whether there is a bias, and the element type of the
 * parameters.
 *
 * |[<!-- language="C" -->
 * g_autoptr(HpLinearConfig) config = hp_linear_config_new (64, 256);
 * g_autoptr(HpLinear) linear = hp_linear_new (config, &error);
 * ]|
 *
 * Since: 1.0
 */

/**
 * HpLinear:
 *
 * The linear layer `y = x W^T + b` of torch's `nn.Linear`, as a
 * [class@Hp.Module] built from a [class@Hp.LinearConfig].
 *
 * Its parameters are `weight`, of shape [out-features, in-features],
 * and, when [property@Hp.LinearConfig:bias] is set, `bias` of shape
 * [out-features]. Without a [class@Hp.ParamInit], [method@Hp.Module.init_states]
 * draws the weight from a normal distribution with standard deviation
 * 0.02 truncated to [-2, 2] (torchtitan's default for linear layers)
 * and sets the bias to zeros. The weight draws from
 * `hp_module_derive_seed (seed, "weight")`, the seed a [class@Hp.ParamInit]
 * entry would use, so that a sharded weight gets exactly its slice of
 * the values.
 *
 * The forward argument is `input`, of shape [..., in-features]; the
 * output has shape [..., out-features]. The computation is
 * [method@Hp.Tensor.linear], so DTensor inputs and parameters follow its
 * sharding rules: see [func@Hp.sharding_colwise] and [func@Hp.sharding_rowwise]
 * for the two tensor-parallel layouts.
 *
 * Since: 1.0
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

struct _HpLinear
{
  HpModule parent_instance;
};

G_DEFINE_FINAL_TYPE (HpLinear, hp_linear, HP_TYPE_MODULE)

/* HpLinearConfig */

/**
 * HpLinearConfig:in-features:
 *
 * The size of the last dim of the input.
 *
 * Since: 1.0
 */
/**
 * HpLinearConfig:out-features:
 *
 * The size of the last dim of the output.
 *
 * Since: 1.0
 */
/**
 * HpLinearConfig:bias:
 *
 * Whether the layer adds a learned bias.
 *
 * Since: 1.0
 */
/**
 * HpLinearConfig:dtype:
 *
 * The element type of the parameters: float32 or float64.
 *
 * Since: 1.0
 */
static const HpConfigField linear_config_fields[] = {
  HP_CONFIG_FIELD_INT (HpLinearConfig, in_features, "in-features", "Input features", 1, G_MAXINT, 1),
  HP_CONFIG_FIELD_INT (HpLinearConfig, out_features, "out-features", "Output features", 1, G_MAXINT, 1),
  HP_CONFIG_FIELD_BOOLEAN (HpLinearConfig, bias, "bias", "Whether there is a bias", FALSE),
  HP_CONFIG_FIELD_ENUM (HpLinearConfig, dtype, "dtype", "Parameter dtype", hp_dtype_get_type,
                        HP_DTYPE_FLOAT32),
};

static gboolean
hp_linear_config_validate (HpConfig  *config,
                           GError   **error)
{
  return HP_CONFIG_CLASS (hp_linear_config_parent_class)->validate (config, error) &&
         _hp_nn_check_dtype (config, HP_LINEAR_CONFIG (config)->dtype, error);
}

static void
hp_linear_config_class_init (HpLinearConfigClass *klass)
{
  HP_CONFIG_CLASS (klass)->validate = hp_linear_config_validate;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), linear_config_fields,
                                  G_N_ELEMENTS (linear_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_LINEAR);
}

static void
hp_linear_config_init (HpLinearConfig *self)
{
}

/**
 * hp_linear_config_new:
 * @in_features: the number of input features, at least 1
 * @out_features: the number of output features, at least 1
 *
 * Creates the configuration of a linear layer without bias, with
 * float32 parameters.
 *
 * Returns: (transfer full): a new [class@Hp.LinearConfig]
 *
 * Since: 1.0
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

/* HpLinear */

static gboolean
hp_linear_setup (HpConfigurable  *configurable,
                 GError         **error)
{
  HpLinearConfig *config = HP_LINEAR_CONFIG (hp_configurable_get_config (configurable));
  g_autoptr(HpTensor) weight = NULL;

  if (!HP_CONFIGURABLE_CLASS (hp_linear_parent_class)->setup (configurable, error))
    return FALSE;

  weight = hp_tensor_new_zeros (config->dtype,
                                (gint64[]) { config->out_features, config->in_features }, 2);
  if (!hp_module_register_parameter (HP_MODULE (configurable), "weight", weight, error))
    return FALSE;
  if (config->bias)
    {
      g_autoptr(HpTensor) bias =
        hp_tensor_new_zeros (config->dtype, (gint64[]) { config->out_features }, 1);

      return hp_module_register_parameter (HP_MODULE (configurable), "bias", bias, error);
    }
  return TRUE;
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
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_linear_setup;
  module_class->forward = hp_linear_forward;
  module_class->reset_parameters = hp_linear_reset_parameters;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "input", NULL });
}

static void
hp_linear_init (HpLinear *self)
{
}

/**
 * hp_linear_new:
 * @config: a [class@Hp.LinearConfig]
 * @error: return location for a [struct@GLib.Error]
 *
 * Builds a linear layer from @config, as [method@Hp.Config.build] does.
 *
 * Returns: (transfer full): the new [class@Hp.Linear], or %NULL with
 *   [HP_ERROR_CONFIG][error@Hp.Error] when [property@Hp.LinearConfig:dtype] is not a floating-point
 *   type
 *
 * Since: 1.0
 */
HpLinear *
hp_linear_new (HpLinearConfig  *config,
               GError         **error)
{
  g_return_val_if_fail (HP_IS_LINEAR_CONFIG (config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_LINEAR (hp_config_build (HP_CONFIG (config), error));
}

#include "hp-linear-fields.c"
