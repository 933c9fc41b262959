/* hp-model-config-converter.h: objects that rewrite a model configuration
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-base-model-config.h"
#include "hp-configurable.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_MODEL_CONFIG_CONVERTER (hp_model_config_converter_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (HpModelConfigConverter, hp_model_config_converter, HP, MODEL_CONFIG_CONVERTER, HpConfigurable)

/**
 * HpModelConfigConverterClass:
 * @parent_class: the parent class
 * @convert: returns the converted model configuration, a new one or
 *   @model_config itself with a new reference after changing it, or
 *   %NULL with @error set
 *
 * The class of model configuration converters. A subclass implements
 * @convert.
 *
 * Since: 1.0
 */
struct _HpModelConfigConverterClass
{
  HpConfigurableClass parent_class;

  HpBaseModelConfig *(*convert) (HpModelConfigConverter  *self,
                                 HpBaseModelConfig       *model_config,
                                 GError                 **error);

  /*< private >*/
  gpointer padding[8];
};

HP_AVAILABLE_IN_ALL
HpBaseModelConfig *hp_model_config_converter_convert (HpModelConfigConverter  *self,
                                                      HpBaseModelConfig       *model_config,
                                                      GError                 **error);

G_END_DECLS
