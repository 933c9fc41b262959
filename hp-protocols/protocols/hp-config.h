/* hp-config.h: configuration objects whose fields are properties
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>
#include <json-glib/json-glib.h>

#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_CONFIG (hp_config_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (HpConfig, hp_config, HP, CONFIG, GObject)

/**
 * HpConfigClass:
 * @parent_class: the parent class
 * @validate: checks how the fields agree with each other (see
 *   [vfunc@Hp.Config.validate])
 *
 * The class of configurations. A subclass declares its fields (in C
 * with a table, `hp_config_class_install_fields()`; in a language
 * binding with [func@Hp.Config.type_add_field]) and names the class it
 * builds with [method@Hp.ConfigClass.set_owner_type] or
 * [func@Hp.Config.register_owner].
 *
 * Since: 1.0
 */
struct _HpConfigClass
{
  GObjectClass parent_class;

  gboolean (*validate) (HpConfig  *self,
                        GError   **error);

  /*< private >*/
  gpointer padding[11];
};

/**
 * HpConfigTraverseFunc:
 * @fqn: the dotted path of @config from the root ("" for the root)
 * @config: the matching configuration
 * @parent: (nullable): the configuration holding @config, %NULL for the
 *   root
 * @attribute: (nullable): the name of the field of @parent holding
 *   @config (for a list item, the list's field), %NULL for the root
 * @index: the position of @config in its [class@Hp.ConfigList], or -1
 * @user_data: (closure): the data given to [method@Hp.Config.traverse]
 *
 * Called by [method@Hp.Config.traverse] for each configuration that matches.
 *
 * Since: 1.0
 */
typedef void (*HpConfigTraverseFunc) (const gchar *fqn,
                                      HpConfig    *config,
                                      HpConfig    *parent,
                                      const gchar *attribute,
                                      gint         index,
                                      gpointer     user_data);

HP_AVAILABLE_IN_ALL
void         hp_config_class_set_owner_type   (HpConfigClass        *klass,
                                               GType                 owner_type);
HP_AVAILABLE_IN_ALL
void         hp_config_register_owner         (GType                 config_type,
                                               GType                 owner_type);
HP_AVAILABLE_IN_ALL
GType        hp_config_get_owner_type         (HpConfig             *self);
HP_AVAILABLE_IN_ALL
GType        hp_config_type_for_owner         (GType                 owner_type);
HP_AVAILABLE_IN_ALL
GParamSpec **hp_config_list_fields            (HpConfig             *self,
                                               guint                *n_fields);
HP_AVAILABLE_IN_ALL
gboolean     hp_config_type_add_field         (GType                 config_type,
                                               const gchar          *name,
                                               GType                 value_type,
                                               const GValue         *default_value,
                                               const GValue         *minimum,
                                               const GValue         *maximum,
                                               const gchar          *blurb,
                                               GError              **error);
HP_AVAILABLE_IN_ALL
gboolean     hp_config_validate               (HpConfig             *self,
                                               GError              **error);

HP_AVAILABLE_IN_ALL
GObject     *hp_config_build                  (HpConfig             *self,
                                               GError              **error);
HP_AVAILABLE_IN_ALL
GObject     *hp_config_build_with_properties  (HpConfig             *self,
                                               guint                 n_properties,
                                               const gchar         **names,
                                               const GValue         *values,
                                               GError              **error);

HP_AVAILABLE_IN_ALL
HpConfig    *hp_config_copy                   (HpConfig             *self);
HP_AVAILABLE_IN_ALL
HpConfig    *hp_config_replace                (HpConfig             *self,
                                               const gchar          *first_property_name,
                                               ...) G_GNUC_NULL_TERMINATED;
HP_AVAILABLE_IN_ALL
HpConfig    *hp_config_replace_with_properties (HpConfig            *self,
                                               guint                 n_properties,
                                               const gchar         **names,
                                               const GValue         *values,
                                               GError              **error);
HP_AVAILABLE_IN_ALL
gboolean     hp_config_equal                  (HpConfig             *self,
                                               HpConfig             *other);

HP_AVAILABLE_IN_ALL
void         hp_config_traverse               (HpConfig             *self,
                                               GType                 match_type,
                                               gboolean              recurse,
                                               HpConfigTraverseFunc  func,
                                               gpointer              user_data);

HP_AVAILABLE_IN_ALL
gboolean     hp_config_set_path_from_string   (HpConfig             *self,
                                               const gchar          *path,
                                               const gchar          *value,
                                               GError              **error);
HP_AVAILABLE_IN_ALL
gchar       *hp_config_get_path_as_string     (HpConfig             *self,
                                               const gchar          *path,
                                               GError              **error);
HP_AVAILABLE_IN_ALL
gboolean     hp_config_get_value              (HpConfig             *self,
                                               const gchar          *path,
                                               GValue               *value,
                                               GError              **error);
HP_AVAILABLE_IN_ALL
gboolean     hp_config_set_value              (HpConfig             *self,
                                               const gchar          *path,
                                               const GValue         *value,
                                               GError              **error);

HP_AVAILABLE_IN_ALL
gchar       *hp_config_to_json                (HpConfig             *self,
                                               gboolean              pretty);
HP_AVAILABLE_IN_ALL
JsonNode    *hp_config_to_json_node           (HpConfig             *self);
HP_AVAILABLE_IN_ALL
HpConfig    *hp_config_new_from_json          (GType                 config_type,
                                               const gchar          *json,
                                               GError              **error);
HP_AVAILABLE_IN_ALL
HpConfig    *hp_config_new_from_json_node     (GType                 config_type,
                                               JsonNode             *node,
                                               GError              **error);

G_END_DECLS
