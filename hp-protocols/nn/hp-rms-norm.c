/* hp-rms-norm.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-error.h"
#include "hp-initializer.h"
#include "hp-nn-basic-private.h"
#include "hp-rms-norm.h"
#include "hp-tensor-enum-types.h"
#include "hp-tensor-ops.h"

/**
 * HpRMSNormConfig:
 *
 * The configuration of a #HpRMSNorm: the size of the normalised dim,
 * the epsilon added to the mean square and the element type of the
 * scale.
 */

/**
 * HpRMSNorm:
 *
 * Root mean square normalisation over the last dim with a learned
 * scale, `y = x / sqrt (mean (x^2) + eps) * weight`, as torch's
 * `nn.RMSNorm`; a #HpModule built from a #HpRMSNormConfig.
 *
 * Its one parameter, `weight`, has shape [dim]; without a #HpParamInit,
 * hp_module_init_states() sets it to ones. The forward argument is
 * `input`, of shape [..., dim]; the output has its shape. The
 * computation is hp_tensor_rms_norm(): a DTensor input sharded on any
 * dim but the last (sequence parallelism, see hp_sharding_norm()) is
 * normalised shard by shard with no communication.
 */

struct _HpRMSNormConfig
{
  HpModuleConfig parent_instance;

  gint dim;
  gdouble eps;
  HpDType dtype;
};

G_DEFINE_FINAL_TYPE (HpRMSNormConfig, hp_rms_norm_config, HP_TYPE_MODULE_CONFIG)

enum {
  CONFIG_PROP_0,
  CONFIG_PROP_DIM,
  CONFIG_PROP_EPS,
  CONFIG_PROP_DTYPE,
  CONFIG_N_PROPS
};

static GParamSpec *config_properties[CONFIG_N_PROPS];

struct _HpRMSNorm
{
  HpModule parent_instance;
};

G_DEFINE_FINAL_TYPE (HpRMSNorm, hp_rms_norm, HP_TYPE_MODULE)

/* HpRMSNormConfig */

static void
hp_rms_norm_config_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  HpRMSNormConfig *self = HP_RMS_NORM_CONFIG (object);

  switch (prop_id)
    {
    case CONFIG_PROP_DIM:
      g_value_set_int (value, self->dim);
      break;
    case CONFIG_PROP_EPS:
      g_value_set_double (value, self->eps);
      break;
    case CONFIG_PROP_DTYPE:
      g_value_set_enum (value, self->dtype);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_rms_norm_config_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  HpRMSNormConfig *self = HP_RMS_NORM_CONFIG (object);

  switch (prop_id)
    {
    case CONFIG_PROP_DIM:
      if (self->dim != g_value_get_int (value))
        {
          self->dim = g_value_get_int (value);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case CONFIG_PROP_EPS:
      if (self->eps != g_value_get_double (value))
        {
          self->eps = g_value_get_double (value);
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
hp_rms_norm_config_class_init (HpRMSNormConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->get_property = hp_rms_norm_config_get_property;
  object_class->set_property = hp_rms_norm_config_set_property;

  /**
   * HpRMSNormConfig:dim:
   *
   * The size of the normalised (last) dim of the input.
   */
  config_properties[CONFIG_PROP_DIM] =
    g_param_spec_int ("dim", NULL, "Normalised width", 1, G_MAXINT, 1, flags);

  /**
   * HpRMSNormConfig:eps:
   *
   * The number added to the mean square before the square root; not
   * negative.
   */
  config_properties[CONFIG_PROP_EPS] =
    g_param_spec_double ("eps", NULL, "Epsilon added to the mean square", 0.0, G_MAXDOUBLE, 1e-6, flags);

  /**
   * HpRMSNormConfig:dtype:
   *
   * The element type of the scale: float32 or float64.
   */
  config_properties[CONFIG_PROP_DTYPE] =
    g_param_spec_enum ("dtype", NULL, "Parameter dtype", HP_TYPE_DTYPE, HP_DTYPE_FLOAT32, flags);

  g_object_class_install_properties (object_class, CONFIG_N_PROPS, config_properties);

  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_RMS_NORM);
}

static void
hp_rms_norm_config_init (HpRMSNormConfig *self)
{
  self->dim = 1;
  self->eps = 1e-6;
  self->dtype = HP_DTYPE_FLOAT32;
}

/**
 * hp_rms_norm_config_new:
 * @dim: the size of the normalised dim, at least 1
 *
 * Creates the configuration of an RMS normalisation with eps 1e-6 and a
 * float32 scale.
 *
 * Returns: (transfer full): a new #HpRMSNormConfig
 */
HpRMSNormConfig *
hp_rms_norm_config_new (gint dim)
{
  g_return_val_if_fail (dim >= 1, NULL);

  return g_object_new (HP_TYPE_RMS_NORM_CONFIG, "dim", dim, NULL);
}

/**
 * hp_rms_norm_config_get_dim:
 * @self: a #HpRMSNormConfig
 *
 * Gets #HpRMSNormConfig:dim.
 *
 * Returns: the size of the normalised dim
 */
gint
hp_rms_norm_config_get_dim (HpRMSNormConfig *self)
{
  g_return_val_if_fail (HP_IS_RMS_NORM_CONFIG (self), 0);

  return self->dim;
}

/**
 * hp_rms_norm_config_get_eps:
 * @self: a #HpRMSNormConfig
 *
 * Gets #HpRMSNormConfig:eps.
 *
 * Returns: the epsilon
 */
gdouble
hp_rms_norm_config_get_eps (HpRMSNormConfig *self)
{
  g_return_val_if_fail (HP_IS_RMS_NORM_CONFIG (self), 0.0);

  return self->eps;
}

/**
 * hp_rms_norm_config_get_dtype:
 * @self: a #HpRMSNormConfig
 *
 * Gets #HpRMSNormConfig:dtype.
 *
 * Returns: the element type of the scale
 */
HpDType
hp_rms_norm_config_get_dtype (HpRMSNormConfig *self)
{
  g_return_val_if_fail (HP_IS_RMS_NORM_CONFIG (self), HP_DTYPE_FLOAT32);

  return self->dtype;
}

/* HpRMSNorm */

static HpRMSNormConfig *
get_config (HpRMSNorm *self)
{
  return HP_RMS_NORM_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (self)));
}

static void
hp_rms_norm_constructed (GObject *object)
{
  HpRMSNormConfig *config;
  g_autoptr(HpTensor) weight = NULL;

  G_OBJECT_CLASS (hp_rms_norm_parent_class)->constructed (object);

  /* a config that g_initable_init() rejects registers nothing */
  config = get_config (HP_RMS_NORM (object));
  if (!hp_dtype_is_floating (config->dtype))
    return;

  weight = hp_tensor_new_ones (config->dtype, (gint64[]) { config->dim }, 1);
  hp_module_register_parameter (HP_MODULE (object), "weight", weight, NULL);
}

static gboolean
hp_rms_norm_setup (HpConfigurable  *configurable,
                   GError         **error)
{
  HpRMSNormConfig *config = get_config (HP_RMS_NORM (configurable));

  if (!HP_CONFIGURABLE_CLASS (hp_rms_norm_parent_class)->setup (configurable, error))
    return FALSE;

  return _hp_nn_check_dtype (HP_CONFIG (config), config->dtype, error);
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
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  HpModuleClass *module_class = HP_MODULE_CLASS (klass);

  HP_CONFIGURABLE_CLASS (klass)->setup = hp_rms_norm_setup;
  object_class->constructed = hp_rms_norm_constructed;
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
 * @config: a #HpRMSNormConfig
 * @error: return location for a #GError
 *
 * Builds an RMS normalisation from @config, as hp_config_build() does.
 *
 * Returns: (transfer full): the new #HpRMSNorm, or %NULL with
 *   %HP_ERROR_CONFIG when #HpRMSNormConfig:dtype is not a
 *   floating-point type
 */
HpRMSNorm *
hp_rms_norm_new (HpRMSNormConfig  *config,
                 GError          **error)
{
  g_return_val_if_fail (HP_IS_RMS_NORM_CONFIG (config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_RMS_NORM (hp_config_build (HP_CONFIG (config), error));
}
