/* hp-module-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-module.h"
#include "hp-module-config.h"

/**
 * HpModuleConfig:
 *
 * The configuration every #HpModule has: how its parameters get their
 * first values (#HpModuleConfig:param-init) and how its states, inputs
 * and outputs are laid out over a device mesh
 * (#HpModuleConfig:sharding-config).
 *
 * Configurations of concrete modules derive from it and add their own
 * fields. Building a module hands both objects to the module by
 * reference, so a sharding configuration set on the configuration
 * before building is the module's; later changes go through
 * hp_module_set_sharding_config() and hp_module_set_param_init().
 */

typedef struct
{
  HpParamInit *param_init;
  HpShardingConfig *sharding_config;
} HpModuleConfigPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (HpModuleConfig, hp_module_config, HP_TYPE_CONFIG)

enum {
  PROP_0,
  PROP_PARAM_INIT,
  PROP_SHARDING_CONFIG,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_module_config_dispose (GObject *object)
{
  HpModuleConfigPrivate *priv =
    hp_module_config_get_instance_private (HP_MODULE_CONFIG (object));

  g_clear_object (&priv->param_init);
  g_clear_object (&priv->sharding_config);

  G_OBJECT_CLASS (hp_module_config_parent_class)->dispose (object);
}

static void
hp_module_config_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  HpModuleConfig *self = HP_MODULE_CONFIG (object);

  switch (prop_id)
    {
    case PROP_PARAM_INIT:
      g_value_set_object (value, hp_module_config_get_param_init (self));
      break;
    case PROP_SHARDING_CONFIG:
      g_value_set_object (value, hp_module_config_get_sharding_config (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_module_config_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  HpModuleConfig *self = HP_MODULE_CONFIG (object);

  switch (prop_id)
    {
    case PROP_PARAM_INIT:
      hp_module_config_set_param_init (self, g_value_get_object (value));
      break;
    case PROP_SHARDING_CONFIG:
      hp_module_config_set_sharding_config (self, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_module_config_class_init (HpModuleConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = hp_module_config_dispose;
  object_class->get_property = hp_module_config_get_property;
  object_class->set_property = hp_module_config_set_property;

  /**
   * HpModuleConfig:param-init:
   *
   * The initialiser of each parameter, by parameter name; a parameter
   * it does not name is initialised by the module's
   * #HpModuleClass.reset_parameters.
   */
  properties[PROP_PARAM_INIT] =
    g_param_spec_object ("param-init", NULL, "Initialiser of each parameter by name",
                         HP_TYPE_PARAM_INIT,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  /**
   * HpModuleConfig:sharding-config:
   *
   * How the module's states, inputs and outputs are laid out when it is
   * parallelized; %NULL leaves them to the module's children.
   */
  properties[PROP_SHARDING_CONFIG] =
    g_param_spec_object ("sharding-config", NULL, "Layout over a device mesh",
                         HP_TYPE_SHARDING_CONFIG,
                         (G_PARAM_READWRITE |
                          G_PARAM_EXPLICIT_NOTIFY |
                          G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  hp_config_class_set_owner_type (HP_CONFIG_CLASS (klass), HP_TYPE_MODULE);
}

static void
hp_module_config_init (HpModuleConfig *self)
{
}

/**
 * hp_module_config_new:
 *
 * Creates a module configuration with no initialisers and no sharding
 * configuration; it builds a plain #HpModule.
 *
 * Returns: (transfer full): a new #HpModuleConfig
 */
HpModuleConfig *
hp_module_config_new (void)
{
  return g_object_new (HP_TYPE_MODULE_CONFIG, NULL);
}

/**
 * hp_module_config_get_param_init:
 * @self: a #HpModuleConfig
 *
 * Gets the initialisers the configuration gives its module.
 *
 * Returns: (transfer none) (nullable): the #HpModuleConfig:param-init
 */
HpParamInit *
hp_module_config_get_param_init (HpModuleConfig *self)
{
  HpModuleConfigPrivate *priv;

  g_return_val_if_fail (HP_IS_MODULE_CONFIG (self), NULL);

  priv = hp_module_config_get_instance_private (self);
  return priv->param_init;
}

/**
 * hp_module_config_set_param_init:
 * @self: a #HpModuleConfig
 * @param_init: (nullable): the initialisers
 *
 * Sets #HpModuleConfig:param-init.
 */
void
hp_module_config_set_param_init (HpModuleConfig *self,
                                 HpParamInit    *param_init)
{
  HpModuleConfigPrivate *priv;

  g_return_if_fail (HP_IS_MODULE_CONFIG (self));
  g_return_if_fail (param_init == NULL || HP_IS_PARAM_INIT (param_init));

  priv = hp_module_config_get_instance_private (self);
  if (g_set_object (&priv->param_init, param_init))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PARAM_INIT]);
}

/**
 * hp_module_config_get_sharding_config:
 * @self: a #HpModuleConfig
 *
 * Gets the sharding configuration the configuration gives its module.
 *
 * Returns: (transfer none) (nullable): the #HpModuleConfig:sharding-config
 */
HpShardingConfig *
hp_module_config_get_sharding_config (HpModuleConfig *self)
{
  HpModuleConfigPrivate *priv;

  g_return_val_if_fail (HP_IS_MODULE_CONFIG (self), NULL);

  priv = hp_module_config_get_instance_private (self);
  return priv->sharding_config;
}

/**
 * hp_module_config_set_sharding_config:
 * @self: a #HpModuleConfig
 * @sharding_config: (nullable): the sharding configuration
 *
 * Sets #HpModuleConfig:sharding-config. The object is shared, not
 * copied: several configurations may use one sharding configuration.
 */
void
hp_module_config_set_sharding_config (HpModuleConfig   *self,
                                      HpShardingConfig *sharding_config)
{
  HpModuleConfigPrivate *priv;

  g_return_if_fail (HP_IS_MODULE_CONFIG (self));
  g_return_if_fail (sharding_config == NULL || HP_IS_SHARDING_CONFIG (sharding_config));

  priv = hp_module_config_get_instance_private (self);
  if (g_set_object (&priv->sharding_config, sharding_config))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SHARDING_CONFIG]);
}
