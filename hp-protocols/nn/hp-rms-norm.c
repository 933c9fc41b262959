/* hp-rms-norm.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-config-field.h"
#include "hp-error.h"
#include "hp-initializer.h"
#include "hp-nn-basic-private.h"
#include "hp-rms-norm.h"
#include "hp-tensor-enum-types.h"
#include "hp-tensor-ops.h"

/**
 * HpRMSNormConfig:
 *
 * The configuration of a [class@Hp.RMSNorm]: the size of the normalised dim,
 * the epsilon added to the mean square and the element type of the
 * scale.
 *
 * Since: 1.0
 */

/**
 * HpRMSNorm:
 *
 * Root mean square normalisation over the last dim with a learned
 * scale, `y = x / sqrt (mean (x^2) + eps) * weight`, as torch's
 * `nn.RMSNorm`; a [class@Hp.Module] built from a [class@Hp.RMSNormConfig].
 *
 * Its one parameter, `weight`, has shape [dim]; without a [class@Hp.ParamInit],
 * [method@Hp.Module.init_states] sets it to ones. The forward argument is
 * `input`, of shape [..., dim]; the output has its shape. The
 * computation is [method@Hp.Tensor.rms_norm]: a DTensor input sharded on any
 * dim but the last (sequence parallelism, see [func@Hp.sharding_norm]) is
 * normalised shard by shard with no communication.
 *
 * Since: 1.0
 */

struct _HpRMSNormConfig
{
  HpModuleConfig parent_instance;

  gint dim;
  gdouble eps;
  HpDType dtype;
};

G_DEFINE_FINAL_TYPE (HpRMSNormConfig, hp_rms_norm_config, HP_TYPE_MODULE_CONFIG)

struct _HpRMSNorm
{
  HpModule parent_instance;
};

G_DEFINE_FINAL_TYPE (HpRMSNorm, hp_rms_norm, HP_TYPE_MODULE)

/* HpRMSNormConfig */

/**
 * HpRMSNormConfig:dim:
 *
 * The size of the normalised (last) dim of the input.
 *
 * Since: 1.0
 */
/**
 * HpRMSNormConfig:eps:
 *
 * The number added to the mean square before the square root; not
 * negative.
 *
 * Since: 1.0
 */
/**
 * HpRMSNormConfig:dtype:
 *
 * The element type of the scale: float32 or float64.
 *
 * Since: 1.0
 */
static const HpConfigField rms_norm_config_fields[] = {
  HP_CONFIG_FIELD_INT (HpRMSNormConfig, dim, "dim", "Normalised width", 1, G_MAXINT, 1),
  HP_CONFIG_FIELD_DOUBLE (HpRMSNormConfig, eps, "eps", "Epsilon added to the mean square",
                          0.0, G_MAXDOUBLE, 1e-6),
  HP_CONFIG_FIELD_ENUM (HpRMSNormConfig, dtype, "dtype", "Parameter dtype", hp_dtype_get_type,
                        HP_DTYPE_FLOAT32),
};

static gboolean
hp_rms_norm_config_validate (HpConfig  *config,
                             GError   **error)
{
  return HP_CONFIG_CLASS (hp_rms_norm_config_parent_class)->validate (config, error) &&
         _hp_nn_check_dtype (config, HP_RMS_NORM_CONFIG (config)->dtype, error);
}

static void
hp_rms_norm_config_class_init (HpRMSNormConfigClass *klass)
{
  HP_CONFIG_CLASS (klass)->validate = hp_rms_norm_config_validate;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), rms_norm_config_fields,
                                  G_N_ELEMENTS (rms_norm_config_fields));
  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_RMS_NORM);
}

static void
hp_rms_norm_config_init (HpRMSNormConfig *self)
{
}

/**
 * hp_rms_norm_config_new:
 * @dim: the size of the normalised dim, at least 1
 *
 * Creates the configuration of an RMS normalisation with eps 1e-6 and a
 * float32 scale.
 *
 * Returns: (transfer full): a new [class@Hp.RMSNormConfig]
 *
 * Since: 1.0
 */
HpRMSNormConfig *
hp_rms_norm_config_new (gint dim)
{
  g_return_val_if_fail (dim >= 1, NULL);

  return g_object_new (HP_TYPE_RMS_NORM_CONFIG, "dim", dim, NULL);
}

/* HpRMSNorm */

static HpRMSNormConfig *
get_config (HpRMSNorm *self)
{
  return HP_RMS_NORM_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (self)));
}

static gboolean
hp_rms_norm_setup (HpConfigurable  *configurable,
                   GError         **error)
{
  HpRMSNormConfig *config = get_config (HP_RMS_NORM (configurable));
  g_autoptr(HpTensor) weight = NULL;

  if (!HP_CONFIGURABLE_CLASS (hp_rms_norm_parent_class)->setup (configurable, error))
    return FALSE;

  weight = hp_tensor_new_ones (config->dtype, (gint64[]) { config->dim }, 1);
  return hp_module_register_parameter (HP_MODULE (configurable), "weight", weight, error);
}

static GPtrArray *
hp_rms_norm_forward (HpModule   *module,
                     GPtrArray  *args,
                     GError    **error)
{
  HpTensor *input = _hp_nn_single_arg (module, args, error);

  if (input == NULL)
    return NULL;
  return _hp_nn_single_output (hp_tensor_rms_norm (input, hp_module_get_parameter (module, "weight"),
                                                   get_config (HP_RMS_NORM (module))->eps, error));
}

static gboolean
hp_rms_norm_reset_parameters (HpModule  *module,
                              guint64    seed,
                              GError   **error)
{
  g_autoptr(HpInitializer) ones = hp_initializer_new_ones ();

  return hp_initializer_apply (ones, hp_module_get_parameter (module, "weight"),
                               hp_module_derive_seed (seed, "weight"), error);
}

static void
hp_rms_norm_class_init (HpRMSNormClass *klass)
{
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_rms_norm_setup;
  module_class->forward = hp_rms_norm_forward;
  module_class->reset_parameters = hp_rms_norm_reset_parameters;
  hp_module_type_set_forward_arg_names (G_TYPE_FROM_CLASS (klass),
                                        (const gchar * const[]) { "input", NULL });
}

static void
hp_rms_norm_init (HpRMSNorm *self)
{
}

/**
 * hp_rms_norm_new:
 * @config: a [class@Hp.RMSNormConfig]
 * @error: return location for a [struct@GLib.Error]
 *
 * Builds an RMS normalisation from @config, as [method@Hp.Config.build] does.
 *
 * Returns: (transfer full): the new [class@Hp.RMSNorm], or %NULL with
 *   [HP_ERROR_CONFIG][error@Hp.Error] when [property@Hp.RMSNormConfig:dtype] is not a
 *   floating-point type
 *
 * Since: 1.0
 */
HpRMSNorm *
hp_rms_norm_new (HpRMSNormConfig  *config,
                 GError          **error)
{
  g_return_val_if_fail (HP_IS_RMS_NORM_CONFIG (config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_RMS_NORM (hp_config_build (HP_CONFIG (config), error));
}

#include "hp-rms-norm-fields.c"
