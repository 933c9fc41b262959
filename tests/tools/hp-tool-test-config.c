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

/**
 * HpToolTestConfig:size:
 *
 * A number with a range.
 */
/**
 * HpToolTestConfig:scale:
 *
 * A real number with a range.
 */
/**
 * HpToolTestConfig:label:
 *
 * A string.
 */
/**
 * HpToolTestConfig:linear:
 *
 * A nested configuration whose type comes from the Hp library; %NULL
 * by default, so that hp-config shows the fields of a type it has no
 * value of.
 */
static const HpConfigField fields[] = {
  HP_CONFIG_FIELD_INT (HpToolTestConfig, size, "size", "Number of widgets", 1, 100, 3),
  HP_CONFIG_FIELD_DOUBLE (HpToolTestConfig, scale, "scale", "Widget scale", 0, 1, 0.5),
  HP_CONFIG_FIELD_STRING (HpToolTestConfig, label, "label", "Widget label", "toy"),
  HP_CONFIG_FIELD_OBJECT (HpToolTestConfig, linear, "linear", "Widget projection",
                          hp_linear_config_get_type, NULL),
};

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
  HP_CONFIG_CLASS (klass)->validate = hp_tool_test_config_validate;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), fields, G_N_ELEMENTS (fields));
}

static void
hp_tool_test_config_init (HpToolTestConfig *self)
{
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
