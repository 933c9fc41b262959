/* hp-configurable.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gio/gio.h>

#include "hp-configurable.h"
#include "hp-error.h"

/**
 * HpConfigurable:
 *
 * The base class of objects made from a configuration, torchtitan's
 * `Configurable`: [method@Hp.Config.build] makes an instance of the
 * owner class of a configuration, passes it a shallow copy of the
 * configuration as [property@Hp.Configurable:config], and initialises
 * it, which runs [vfunc@Hp.Configurable.setup] once.
 *
 * `setup` is where a class makes what depends on its configuration:
 * parameters, children, buffers, checks of the configuration against
 * what the class supports. It runs after every construct property is
 * set, in every language the same way: C classes implement
 * [vfunc@Hp.Configurable.setup] (chaining up first), Python classes
 * `do_setup(self)`, gjs classes `vfunc_setup()`, Vala classes
 * `public override bool setup () throws Error`. An error there is the
 * error of [method@Hp.Config.build], which then returns nothing.
 *
 * The object implements [iface@Gio.Initable]: an instance made with
 * [ctor@GObject.Object.new] is set up by [method@Gio.Initable.init]; only the first call
 * runs `setup`, later calls give its result again.
 *
 * An instance made without a configuration ([ctor@GObject.Object.new] with no
 * `config`) gets a new default configuration of the type
 * [func@Hp.Config.type_for_owner] gives for its class, when there is
 * one.
 *
 * Since: 1.0
 */

typedef enum
{
  SETUP_PENDING,
  SETUP_DONE,
  SETUP_FAILED,
} SetupState;

typedef struct
{
  HpConfig *config;
  SetupState setup_state;
  GError *setup_error;
} HpConfigurablePrivate;

static void hp_configurable_initable_iface_init (GInitableIface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (HpConfigurable, hp_configurable, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (HpConfigurable)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE,
                                                         hp_configurable_initable_iface_init))

enum {
  PROP_0,
  PROP_CONFIG,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static gboolean
hp_configurable_initable_init (GInitable     *initable,
                               GCancellable  *cancellable,
                               GError       **error)
{
  HpConfigurable *self = HP_CONFIGURABLE (initable);
  HpConfigurablePrivate *priv = hp_configurable_get_instance_private (self);
  g_autoptr(GError) local_error = NULL;

  if (priv->setup_state == SETUP_PENDING)
    {
      gboolean done = HP_CONFIGURABLE_GET_CLASS (self)->setup (self, &local_error);

      /* a binding that returns FALSE (gjs's undefined) without raising
       * still fails, with an error that says what it should have done */
      if (!done && local_error == NULL)
        g_set_error (&local_error, HP_ERROR, HP_ERROR_CONFIG,
                     "%s.setup() returned FALSE without an error; it returns TRUE when it succeeds",
                     G_OBJECT_TYPE_NAME (self));
      if (done && local_error != NULL)
        g_prefix_error (&local_error, "%s.setup() returned TRUE with an error: ",
                        G_OBJECT_TYPE_NAME (self));

      priv->setup_state = local_error == NULL ? SETUP_DONE : SETUP_FAILED;
      priv->setup_error = g_steal_pointer (&local_error);
    }

  if (priv->setup_state == SETUP_FAILED)
    {
      g_propagate_error (error, g_error_copy (priv->setup_error));
      return FALSE;
    }
  return TRUE;
}

static void
hp_configurable_initable_iface_init (GInitableIface *iface)
{
  iface->init = hp_configurable_initable_init;
}

static gboolean
hp_configurable_real_setup (HpConfigurable  *self,
                            GError         **error)
{
  return TRUE;
}

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
hp_configurable_finalize (GObject *object)
{
  HpConfigurable *self = HP_CONFIGURABLE (object);
  HpConfigurablePrivate *priv = hp_configurable_get_instance_private (self);

  g_clear_error (&priv->setup_error);

  G_OBJECT_CLASS (hp_configurable_parent_class)->finalize (object);
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

/**
 * HpConfigurableClass::setup:
 * @self: the object, with its configuration and every construct
 *   property set
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes the object's state from its configuration. Runs once, when the
 * object is initialised (by [method@Hp.Config.build] or
 * [method@Gio.Initable.init]). An implementation chains up to its parent class
 * first; the base implementation does nothing.
 *
 * Returns: %TRUE on success, %FALSE with @error set otherwise
 *
 * Since: 1.0
 */

static void
hp_configurable_class_init (HpConfigurableClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = hp_configurable_constructed;
  object_class->dispose = hp_configurable_dispose;
  object_class->finalize = hp_configurable_finalize;
  object_class->get_property = hp_configurable_get_property;
  object_class->set_property = hp_configurable_set_property;

  klass->setup = hp_configurable_real_setup;

  /**
   * HpConfigurable:config:
   *
   * The configuration the object was made from. [method@Hp.Config.build]
   * passes a shallow copy of the configuration it was called on; an
   * object made without one gets a default configuration of the type
   * [func@Hp.Config.type_for_owner] gives for its class, or none if
   * there is no such type.
   *
   * Since: 1.0
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
 * @self: a configurable object
 *
 * Gets the configuration @self was made from (see
 * [property@Hp.Configurable:config]).
 *
 * Returns: (transfer none) (nullable): the configuration, or %NULL if
 *   @self was made without one and its class has no configuration type
 *
 * Since: 1.0
 */
HpConfig *
hp_configurable_get_config (HpConfigurable *self)
{
  HpConfigurablePrivate *priv;

  g_return_val_if_fail (HP_IS_CONFIGURABLE (self), NULL);

  priv = hp_configurable_get_instance_private (self);
  return priv->config;
}
