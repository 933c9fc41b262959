/* hp-configurable.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-configurable.h"

/**
 * HpConfigurable:
 *
 * The base class of objects made from a configuration, torchtitan's
 * `Configurable`: hp_config_build() makes an instance of the owner class
 * of a configuration and passes it a shallow copy of the configuration
 * as #HpConfigurable:config.
 *
 * An instance made without a configuration (g_object_new() with no
 * `config`) gets a new default configuration of the type
 * hp_config_type_for_owner() gives for its class, when there is one.
 */

typedef struct
{
  HpConfig *config;
} HpConfigurablePrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (HpConfigurable, hp_configurable, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_CONFIG,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_configurable_constructed (GObject *object)
{
  HpConfigurable *self = HP_CONFIGURABLE (object);
  HpConfigurablePrivate *priv = hp_configurable_get_instance_private (self);

  G_OBJECT_CLASS (hp_configurable_parent_class)->constructed (object);

  if (priv->config == NULL)
    {
      GType config_type = hp_config_type_for_owner (G_OBJECT_TYPE (self));

      if (config_type != G_TYPE_INVALID && !G_TYPE_IS_ABSTRACT (config_type))
        priv->config = g_object_new (config_type, NULL);
    }
}

static void
hp_configurable_dispose (GObject *object)
{
  HpConfigurable *self = HP_CONFIGURABLE (object);
  HpConfigurablePrivate *priv = hp_configurable_get_instance_private (self);

  g_clear_object (&priv->config);

  G_OBJECT_CLASS (hp_configurable_parent_class)->dispose (object);
}

static void
hp_configurable_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  HpConfigurable *self = HP_CONFIGURABLE (object);
  HpConfigurablePrivate *priv = hp_configurable_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_CONFIG:
      g_value_set_object (value, priv->config);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_configurable_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  HpConfigurable *self = HP_CONFIGURABLE (object);
  HpConfigurablePrivate *priv = hp_configurable_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_CONFIG:
      g_set_object (&priv->config, g_value_get_object (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_configurable_class_init (HpConfigurableClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = hp_configurable_constructed;
  object_class->dispose = hp_configurable_dispose;
  object_class->get_property = hp_configurable_get_property;
  object_class->set_property = hp_configurable_set_property;

  /**
   * HpConfigurable:config:
   *
   * The configuration the object was made from. hp_config_build()
   * passes a shallow copy of the configuration it was called on; an
   * object made without one gets a default configuration of the type
   * hp_config_type_for_owner() gives for its class, or none if there is
   * no such type.
   */
  properties[PROP_CONFIG] =
    g_param_spec_object ("config", NULL, NULL,
                         HP_TYPE_CONFIG,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                         G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_configurable_init (HpConfigurable *self)
{
}

/**
 * hp_configurable_get_config:
 * @self: a #HpConfigurable
 *
 * Gets the configuration @self was made from (see
 * #HpConfigurable:config).
 *
 * Returns: (transfer none) (nullable): the configuration, or %NULL if
 *   @self was made without one and its class has no configuration type
 */
HpConfig *
hp_configurable_get_config (HpConfigurable *self)
{
  HpConfigurablePrivate *priv;

  g_return_val_if_fail (HP_IS_CONFIGURABLE (self), NULL);

  priv = hp_configurable_get_instance_private (self);
  return priv->config;
}
