/* hp-module-config.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-config-field.h"
#include "hp-module.h"
#include "hp-module-config.h"

/**
 * HpModuleConfig:
 *
 * The configuration every [class@Hp.Module] has: how its parameters get
 * their first values ([property@Hp.ModuleConfig:param-init]) and how its
 * states, inputs and outputs are laid out over a device mesh
 * ([property@Hp.ModuleConfig:sharding-config]).
 *
 * Configurations of concrete modules derive from it and add their own
 * fields. Building a module hands both objects to the module by
 * reference, so a sharding configuration set on the configuration
 * before building is the module's; later changes go through
 * [method@Hp.Module.set_sharding_config] and
 * [method@Hp.Module.set_param_init].
 *
 * Since: 1.0
 */

typedef struct
{
  HpParamInit *param_init;
  HpShardingConfig *sharding_config;
} HpModuleConfigPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (HpModuleConfig, hp_module_config, HP_TYPE_CONFIG)

/**
 * HpModuleConfig:param-init:
 *
 * The initialiser of each parameter, by parameter name; a parameter it
 * does not name is initialised by the module's
 * [vfunc@Hp.Module.reset_parameters]. %NULL (the default) names none.
 *
 * Since: 1.0
 */
/**
 * HpModuleConfig:sharding-config:
 *
 * How the module's states, inputs and outputs are laid out when it is
 * parallelized; %NULL (the default) leaves them to the module's
 * children. The object is shared, not copied: several configurations
 * may use one sharding configuration.
 *
 * Since: 1.0
 */
static const HpConfigField module_config_fields[] = {
  HP_CONFIG_FIELD_OBJECT (HpModuleConfigPrivate, param_init, "param-init",
                          "Initialiser of each parameter by name", hp_param_init_get_type, NULL),
  HP_CONFIG_FIELD_OBJECT (HpModuleConfigPrivate, sharding_config, "sharding-config",
                          "Layout over a device mesh", hp_sharding_config_get_type, NULL),
};

static void
hp_module_config_class_init (HpModuleConfigClass *klass)
{
  hp_config_class_install_private_fields (HP_CONFIG_CLASS (klass), HpModuleConfig_private_offset,
                                          module_config_fields,
                                          G_N_ELEMENTS (module_config_fields));
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
 * configuration; it builds a plain [class@Hp.Module].
 *
 * Returns: (transfer full): a new [class@Hp.ModuleConfig]
 *
 * Since: 1.0
 */
HpModuleConfig *
hp_module_config_new (void)
{
  return g_object_new (HP_TYPE_MODULE_CONFIG, NULL);
}

#include "hp-module-config-fields.c"
