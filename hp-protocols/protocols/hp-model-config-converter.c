/* hp-model-config-converter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-error-private.h"
#include "hp-error.h"
#include "hp-model-config-converter.h"

/**
 * HpModelConfigConverter:
 *
 * An object, built from its own configuration, that rewrites a model
 * configuration before the model is built: switching the linear layers
 * to another kind, changing a precision, adding adapters, and so on
 * (the `ModelConfigConverter` of the torchtitan protocols).
 *
 * The class is abstract: a converter derives from it, implements
 * [vfunc@Hp.ModelConfigConverter.convert] and, like every
 * [class@Hp.Configurable], has a configuration class whose owner it is
 * ([method@Hp.ConfigClass.set_owner_type]), so a job configuration can list
 * converters by their configurations and build them with
 * [method@Hp.Config.build].
 *
 * |[<!-- language="C" -->
 * g_autoptr(HpModelConfigConverter) converter =
 *   HP_MODEL_CONFIG_CONVERTER (hp_config_build (converter_config, &error));
 * g_autoptr(HpBaseModelConfig) converted =
 *   hp_model_config_converter_convert (converter, model_config, &error);
 * ]|
 *
 * Since: 1.0
 */

G_DEFINE_ABSTRACT_TYPE (HpModelConfigConverter, hp_model_config_converter, HP_TYPE_CONFIGURABLE)

static void
hp_model_config_converter_class_init (HpModelConfigConverterClass *klass)
{
}

static void
hp_model_config_converter_init (HpModelConfigConverter *self)
{
}

/**
 * hp_model_config_converter_convert:
 * @self: a [class@Hp.ModelConfigConverter]
 * @model_config: the model configuration to convert
 * @error: return location for a [struct@GLib.Error]
 *
 * Converts @model_config with [vfunc@Hp.ModelConfigConverter.convert].
 * Depending on the converter, the result is a new configuration and
 * @model_config is left as it was, or it is @model_config itself,
 * changed in place.
 *
 * Returns: (transfer full): the converted configuration, or %NULL with
 *   @error set: [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] if the class of @self does not
 *   implement [vfunc@Hp.ModelConfigConverter.convert], [HP_ERROR_STATE][error@Hp.Error] if
 *   it returns something other than a [class@Hp.BaseModelConfig] or nothing
 *   without an error, or the error of the converter
 *
 * Since: 1.0
 */
HpBaseModelConfig *
hp_model_config_converter_convert (HpModelConfigConverter  *self,
                                   HpBaseModelConfig       *model_config,
                                   GError                 **error)
{
  HpModelConfigConverterClass *klass;
  GError *local_error = NULL;
  HpBaseModelConfig *result;

  g_return_val_if_fail (HP_IS_MODEL_CONFIG_CONVERTER (self), NULL);
  g_return_val_if_fail (HP_IS_BASE_MODEL_CONFIG (model_config), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  klass = HP_MODEL_CONFIG_CONVERTER_GET_CLASS (self);
  if (klass->convert == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "%s does not implement convert", G_OBJECT_TYPE_NAME (self));
      return NULL;
    }

  result = klass->convert (self, model_config, &local_error);
  return _hp_error_check_returned (result, local_error, HP_TYPE_BASE_MODEL_CONFIG,
                                   "model configuration", error,
                                   "%s.convert", G_OBJECT_TYPE_NAME (self));
}
