/* hp-config-field.h: configuration fields declared in one table (C only)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-config.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

/* The C side of "a field is declared once": a configuration class lists
 * its fields in a static table of HpConfigField entries, one per field,
 * and installs it in its class_init with hp_config_class_install_fields().
 * The table gives each field's name, type, default, range and blurb and
 * the member of the instance struct that holds it; the param specs, the
 * get and set functions, the defaults of new instances (a new default
 * instance for each nested configuration), the notifications and the
 * clean-up all come from it. The fields keep the order of the table.
 *
 *   struct _MyLinearConfig
 *   {
 *     HpModuleConfig parent_instance;
 *     gint in_features;
 *     gboolean bias;
 *     HpDType dtype;
 *   };
 *
 *   static const HpConfigField fields[] = {
 *     HP_CONFIG_FIELD_INT (MyLinearConfig, in_features, "in-features",
 *                          "Input features", 1, G_MAXINT, 1),
 *     HP_CONFIG_FIELD_BOOLEAN (MyLinearConfig, bias, "bias",
 *                              "Whether there is a bias", FALSE),
 *     HP_CONFIG_FIELD_ENUM (MyLinearConfig, dtype, "dtype", "Parameter dtype",
 *                           hp_dtype_get_type, HP_DTYPE_FLOAT32),
 *   };
 *
 *   hp_config_class_install_fields (HP_CONFIG_CLASS (klass), fields,
 *                                   G_N_ELEMENTS (fields));
 *
 * A derivable class, whose instance struct is not its own to add
 * members to, keeps its fields in its private struct: the table names
 * members of that struct (`HP_CONFIG_FIELD_INT (MyConfigPrivate, ...)`)
 * and hp_config_class_install_private_fields() is given the private
 * offset that G_DEFINE_TYPE_WITH_PRIVATE() makes:
 *
 *   hp_config_class_install_private_fields (HP_CONFIG_CLASS (klass),
 *                                           MyConfig_private_offset,
 *                                           fields, G_N_ELEMENTS (fields));
 *
 * Language bindings, whose classes have no C struct, declare fields with
 * hp_config_type_add_field(); the library then keeps the values.
 *
 * This header is C only: the introspected API is hp_config_type_add_field().
 */

typedef enum
{
  HP_CONFIG_FIELD_TYPE_BOOLEAN,   /* gboolean */
  HP_CONFIG_FIELD_TYPE_INT,       /* gint */
  HP_CONFIG_FIELD_TYPE_UINT,      /* guint */
  HP_CONFIG_FIELD_TYPE_INT64,     /* gint64 */
  HP_CONFIG_FIELD_TYPE_UINT64,    /* guint64 */
  HP_CONFIG_FIELD_TYPE_DOUBLE,    /* gdouble */
  HP_CONFIG_FIELD_TYPE_STRING,    /* gchar *, owned */
  HP_CONFIG_FIELD_TYPE_ENUM,      /* an enum (int-sized) */
  HP_CONFIG_FIELD_TYPE_FLAGS,     /* a flags type (guint) */
  HP_CONFIG_FIELD_TYPE_STRV,      /* GStrv, owned */
  HP_CONFIG_FIELD_TYPE_OBJECT,    /* a GObject pointer, one reference owned */
  HP_CONFIG_FIELD_TYPE_LONG,      /* glong */
  HP_CONFIG_FIELD_TYPE_ULONG,     /* gulong */
  HP_CONFIG_FIELD_TYPE_FLOAT,     /* gfloat */
} HpConfigFieldType;

typedef struct _HpConfigField HpConfigField;

/* One field. Use the HP_CONFIG_FIELD_* macros, which fill in the members
 * a type needs and check at compile time that the struct member has the
 * size of the field's type. */
struct _HpConfigField
{
  const gchar *name;              /* canonical: words joined by '-' */
  const gchar *blurb;
  HpConfigFieldType type;
  gsize offset;                   /* of the member in the instance struct
                                   * (or the private struct) */
  GType (*value_type) (void);     /* ENUM, FLAGS, OBJECT: the GType */
  GType (*default_type) (void);   /* OBJECT: every new configuration gets a
                                   * new instance of this type; NULL: the
                                   * default is NULL */
  union
  {
    gboolean b;
    gint64 i;
    guint64 u;
    gdouble d;
    const gchar *s;
  } default_value;
  gint64 int_minimum;
  gint64 int_maximum;
  guint64 uint_maximum;
  gdouble double_minimum;
  gdouble double_maximum;
  GParamFlags flags;              /* added to readable, writable, explicit notify */
};

/* The offset of @member, which must have the size of @ctype */
#define _HP_CONFIG_FIELD_OFFSET(Type, member, ctype)                              \
  (G_STRUCT_OFFSET (Type, member) +                                              \
   0 * sizeof (char[sizeof (((Type *) NULL)->member) == sizeof (ctype) ? 1 : -1]))

#define HP_CONFIG_FIELD_BOOLEAN(Type, member, field_name, field_blurb, def)        \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_BOOLEAN, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, gboolean), .default_value.b = (def) }

#define HP_CONFIG_FIELD_INT(Type, member, field_name, field_blurb, min, max, def)  \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_INT, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, gint), .default_value.i = (def), \
    .int_minimum = (min), .int_maximum = (max) }

#define HP_CONFIG_FIELD_UINT(Type, member, field_name, field_blurb, max, def)      \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_UINT, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, guint), .default_value.u = (def), \
    .uint_maximum = (max) }

#define HP_CONFIG_FIELD_INT64(Type, member, field_name, field_blurb, min, max, def) \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_INT64, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, gint64), .default_value.i = (def), \
    .int_minimum = (min), .int_maximum = (max) }

#define HP_CONFIG_FIELD_UINT64(Type, member, field_name, field_blurb, max, def)    \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_UINT64, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, guint64), .default_value.u = (def), \
    .uint_maximum = (max) }

#define HP_CONFIG_FIELD_LONG(Type, member, field_name, field_blurb, min, max, def)  \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_LONG, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, glong), .default_value.i = (def), \
    .int_minimum = (min), .int_maximum = (max) }

#define HP_CONFIG_FIELD_ULONG(Type, member, field_name, field_blurb, max, def)      \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_ULONG, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, gulong), .default_value.u = (def), \
    .uint_maximum = (max) }

#define HP_CONFIG_FIELD_FLOAT(Type, member, field_name, field_blurb, min, max, def) \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_FLOAT, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, gfloat), .default_value.d = (def), \
    .double_minimum = (min), .double_maximum = (max) }

#define HP_CONFIG_FIELD_DOUBLE(Type, member, field_name, field_blurb, min, max, def) \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_DOUBLE, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, gdouble), .default_value.d = (def), \
    .double_minimum = (min), .double_maximum = (max) }

#define HP_CONFIG_FIELD_STRING(Type, member, field_name, field_blurb, def)         \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_STRING, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, gchar *), .default_value.s = (def) }

#define HP_CONFIG_FIELD_ENUM(Type, member, field_name, field_blurb, get_type, def) \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_ENUM, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, gint), .value_type = (get_type), \
    .default_value.i = (def) }

#define HP_CONFIG_FIELD_FLAGS(Type, member, field_name, field_blurb, get_type, def) \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_FLAGS, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, guint), .value_type = (get_type), \
    .default_value.u = (def) }

#define HP_CONFIG_FIELD_STRV(Type, member, field_name, field_blurb)                \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_STRV, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, GStrv) }

/* @default_get_type: NULL for a NULL default, else the get_type function
 * of the class of each new configuration's own default instance (a
 * nested configuration's `field(default_factory=...)`) */
#define HP_CONFIG_FIELD_OBJECT(Type, member, field_name, field_blurb, get_type, default_get_type) \
  { .name = (field_name), .blurb = (field_blurb), .type = HP_CONFIG_FIELD_TYPE_OBJECT, \
    .offset = _HP_CONFIG_FIELD_OFFSET (Type, member, gpointer), .value_type = (get_type), \
    .default_type = (default_get_type) }

HP_AVAILABLE_IN_ALL
void hp_config_class_install_fields (HpConfigClass       *klass,
                                     const HpConfigField *fields,
                                     guint                n_fields);
HP_AVAILABLE_IN_ALL
void hp_config_class_install_private_fields (HpConfigClass       *klass,
                                             gint                 private_offset,
                                             const HpConfigField *fields,
                                             guint                n_fields);

/* Typed accessors of table fields. Each expands to the definition of a
 * public function `prefix_get_member` (or `prefix_set_member`). The
 * library's classes get them, declared and documented, from
 * hp-mkfields.py at build time; a class written by hand declares each
 * in its header and documents it above the macro as any function.
 * The getter of an object field returns it (transfer none); the setter
 * sets the field as g_object_set() does. */
#define HP_CONFIG_DEFINE_GETTER(prefix, Type, ctype, member, fallback)             \
  ctype                                                                          \
  prefix##_get_##member (Type *self)                                             \
  {                                                                              \
    g_return_val_if_fail (G_TYPE_CHECK_INSTANCE_TYPE (self, prefix##_get_type ()), fallback); \
    return self->member;                                                         \
  }

/* The getter of a field kept in the private struct of the type
 * (hp_config_class_install_private_fields()) */
#define HP_CONFIG_DEFINE_PRIVATE_GETTER(prefix, Type, ctype, member, fallback)     \
  ctype                                                                          \
  prefix##_get_##member (Type *self)                                             \
  {                                                                              \
    g_return_val_if_fail (G_TYPE_CHECK_INSTANCE_TYPE (self, prefix##_get_type ()), fallback); \
    return ((Type##Private *) prefix##_get_instance_private (self))->member;     \
  }

#define HP_CONFIG_DEFINE_SETTER(prefix, Type, ctype, member, field_name)           \
  void                                                                           \
  prefix##_set_##member (Type *self,                                             \
                         ctype value)                                            \
  {                                                                              \
    g_return_if_fail (G_TYPE_CHECK_INSTANCE_TYPE (self, prefix##_get_type ()));  \
    g_object_set (self, field_name, value, NULL);                                \
  }

G_END_DECLS
