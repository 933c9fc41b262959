/* hp-tool-test-config.c: a configuration type in a library of its own,
 * for the --require option of hp-config
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "hp-tool-test-config.h"

/**
 * HpToolTestConfig:
 *
 * A configuration that no other library knows: hp-config lists it only
 * when it loads this library's typelib with `--require HpToolTest-1.0`.
 * Its size times its scale is at most 50 (checked by validate).
 */
struct _HpToolTestConfig
{
  HpConfig parent_instance;

  gint size;
  gdouble scale;
  gchar *label;
  HpLinearConfig *linear;
};

G_DEFINE_FINAL_TYPE (HpToolTestConfig, hp_tool_test_config, HP_TYPE_CONFIG)

enum {
  PROP_0,
  PROP_SIZE,
  PROP_SCALE,
  PROP_LABEL,
  PROP_LINEAR,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_tool_test_config_finalize (GObject *object)
{
  HpToolTestConfig *self = HP_TOOL_TEST_CONFIG (object);

  g_free (self->label);
  g_clear_object (&self->linear);

  G_OBJECT_CLASS (hp_tool_test_config_parent_class)->finalize (object);
}

static void
hp_tool_test_config_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  HpToolTestConfig *self = HP_TOOL_TEST_CONFIG (object);

  switch (prop_id)
    {
    case PROP_SIZE:
      g_value_set_int (value, self->size);
      break;
    case PROP_SCALE:
      g_value_set_double (value, self->scale);
      break;
    case PROP_LABEL:
      g_value_set_string (value, self->label);
      break;
    case PROP_LINEAR:
      g_value_set_object (value, self->linear);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_tool_test_config_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  HpToolTestConfig *self = HP_TOOL_TEST_CONFIG (object);

  switch (prop_id)
    {
    case PROP_SIZE:
      self->size = g_value_get_int (value);
      break;
    case PROP_SCALE:
      self->scale = g_value_get_double (value);
      break;
    case PROP_LABEL:
      g_free (self->label);
      self->label = g_value_dup_string (value);
      break;
    case PROP_LINEAR:
      g_set_object (&self->linear, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  g_object_notify_by_pspec (object, pspec);
}

/* A check across fields, for hp-config validate */
static gboolean
hp_tool_test_config_validate (HpConfig  *config,
                              GError   **error)
{
  HpToolTestConfig *self = HP_TOOL_TEST_CONFIG (config);

  if (!HP_CONFIG_CLASS (hp_tool_test_config_parent_class)->validate (config, error))
    return FALSE;
  if (self->size * self->scale > 50)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG, "size * scale is %g, more than 50",
                   self->size * self->scale);
      return FALSE;
    }
  return TRUE;
}

static void
hp_tool_test_config_class_init (HpToolTestConfigClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = hp_tool_test_config_finalize;
  object_class->get_property = hp_tool_test_config_get_property;
  object_class->set_property = hp_tool_test_config_set_property;
  HP_CONFIG_CLASS (klass)->validate = hp_tool_test_config_validate;

  /**
   * HpToolTestConfig:size:
   *
   * A number with a range.
   */
  properties[PROP_SIZE] =
    g_param_spec_int ("size", NULL, "Number of widgets", 1, 100, 3, flags);

  /**
   * HpToolTestConfig:scale:
   *
   * A real number with a range.
   */
  properties[PROP_SCALE] =
    g_param_spec_double ("scale", NULL, "Widget scale", 0, 1, 0.5, flags);

  /**
   * HpToolTestConfig:label:
   *
   * A string.
   */
  properties[PROP_LABEL] =
    g_param_spec_string ("label", NULL, "Widget label", "toy", flags);

  /**
   * HpToolTestConfig:linear:
   *
   * A nested configuration whose type comes from the Hp library.
   */
  properties[PROP_LINEAR] =
    g_param_spec_object ("linear", NULL, "Widget projection", HP_TYPE_LINEAR_CONFIG, flags);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_tool_test_config_init (HpToolTestConfig *self)
{
  self->size = 3;
  self->scale = 0.5;
  self->label = g_strdup ("toy");
}

/**
 * hp_tool_test_config_new:
 *
 * Creates a configuration with the default values.
 *
 * Returns: (transfer full): a new #HpToolTestConfig
 */
HpToolTestConfig *
hp_tool_test_config_new (void)
{
  return g_object_new (HP_TOOL_TEST_TYPE_CONFIG, NULL);
}
