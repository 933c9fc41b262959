/* hp-initializer.h: how a parameter gets its first values
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-tensor.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

/**
 * HpInitKind:
 * @HP_INIT_KIND_ZEROS: every value 0
 * @HP_INIT_KIND_ONES: every value 1
 * @HP_INIT_KIND_CONSTANT: every value the same constant
 * @HP_INIT_KIND_NORMAL: normal distribution (mean, std)
 * @HP_INIT_KIND_TRUNC_NORMAL: normal distribution (mean, std) truncated to
 *   [a, b]
 * @HP_INIT_KIND_UNIFORM: uniform distribution on [a, b)
 * @HP_INIT_KIND_DEPTH_SCALED_NORMAL: truncated normal whose std is divided
 *   by sqrt (2 (depth + 1)), as deep transformers scale their output
 *   projections
 *
 * The kinds of [class@Hp.Initializer].
 *
 * Since: 1.0
 */
typedef enum
{
  HP_INIT_KIND_ZEROS,                 /*< nick=zeros >*/
  HP_INIT_KIND_ONES,                  /*< nick=ones >*/
  HP_INIT_KIND_CONSTANT,              /*< nick=constant >*/
  HP_INIT_KIND_NORMAL,                /*< nick=normal >*/
  HP_INIT_KIND_TRUNC_NORMAL,          /*< nick=trunc_normal >*/
  HP_INIT_KIND_UNIFORM,               /*< nick=uniform >*/
  HP_INIT_KIND_DEPTH_SCALED_NORMAL,   /*< nick=depth_scaled_normal >*/
} HpInitKind;

#define HP_TYPE_INITIALIZER (hp_initializer_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpInitializer, hp_initializer, HP, INITIALIZER, GObject)

HP_AVAILABLE_IN_ALL
HpInitializer *hp_initializer_new_zeros               (void);
HP_AVAILABLE_IN_ALL
HpInitializer *hp_initializer_new_ones                (void);
HP_AVAILABLE_IN_ALL
HpInitializer *hp_initializer_new_constant            (gdouble         value);
HP_AVAILABLE_IN_ALL
HpInitializer *hp_initializer_new_normal              (gdouble         mean,
                                                       gdouble         std);
HP_AVAILABLE_IN_ALL
HpInitializer *hp_initializer_new_trunc_normal        (gdouble         mean,
                                                       gdouble         std,
                                                       gdouble         a,
                                                       gdouble         b);
HP_AVAILABLE_IN_ALL
HpInitializer *hp_initializer_new_uniform             (gdouble         a,
                                                       gdouble         b);
HP_AVAILABLE_IN_ALL
HpInitializer *hp_initializer_new_depth_scaled_normal (gdouble         std,
                                                       guint           depth);
HP_AVAILABLE_IN_ALL
HpInitializer *hp_initializer_new_from_string         (const gchar    *text,
                                                       GError        **error);

HP_AVAILABLE_IN_ALL
HpInitKind     hp_initializer_get_kind                (HpInitializer  *self);
HP_AVAILABLE_IN_ALL
gdouble        hp_initializer_get_mean                (HpInitializer  *self);
HP_AVAILABLE_IN_ALL
gdouble        hp_initializer_get_std                 (HpInitializer  *self);
HP_AVAILABLE_IN_ALL
gdouble        hp_initializer_get_a                   (HpInitializer  *self);
HP_AVAILABLE_IN_ALL
gdouble        hp_initializer_get_b                   (HpInitializer  *self);
HP_AVAILABLE_IN_ALL
gdouble        hp_initializer_get_value               (HpInitializer  *self);
HP_AVAILABLE_IN_ALL
guint          hp_initializer_get_depth               (HpInitializer  *self);
HP_AVAILABLE_IN_ALL
gchar         *hp_initializer_to_string               (HpInitializer  *self);
HP_AVAILABLE_IN_ALL
gboolean       hp_initializer_equal                   (HpInitializer  *self,
                                                       HpInitializer  *other);

HP_AVAILABLE_IN_ALL
gboolean       hp_initializer_apply                   (HpInitializer  *self,
                                                       HpTensor       *tensor,
                                                       guint64         seed,
                                                       GError        **error);

G_END_DECLS
