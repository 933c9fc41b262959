/* hp-tensor.h: dense CPU tensors with reverse-mode autograd
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-dtype.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

/**
 * HP_TENSOR_MAX_NDIM:
 *
 * The largest number of dimensions a tensor can have.
 *
 * Since: 1.0
 */
#define HP_TENSOR_MAX_NDIM 16

#define HP_TYPE_TENSOR (hp_tensor_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (HpTensor, hp_tensor, HP, TENSOR, GObject)

/**
 * HpTensorClass:
 * @parent_class: the parent class
 *
 * The class of [class@Hp.Tensor]. Its only subclass is the library's distributed
 * tensor, which keeps the global metadata here and holds its data in a
 * local tensor.
 *
 * Since: 1.0
 */
struct _HpTensorClass
{
  GObjectClass parent_class;

  /*< private >*/
  /* Overridden by the library's distributed tensor; see
   * hp-tensor-private.h for their signatures. */
  gpointer to_string;
  gpointer detach;
  gpointer new_ones_like;
  gpointer dispatch;

  gpointer padding[8];
};

HP_AVAILABLE_IN_ALL
HpTensor       *hp_tensor_new_zeros        (HpDType         dtype,
                                            const gint64   *shape,
                                            guint           ndim);
HP_AVAILABLE_IN_ALL
HpTensor       *hp_tensor_new_ones         (HpDType         dtype,
                                            const gint64   *shape,
                                            guint           ndim);
HP_AVAILABLE_IN_ALL
HpTensor       *hp_tensor_new_full         (HpDType         dtype,
                                            const gint64   *shape,
                                            guint           ndim,
                                            gdouble         value);
HP_AVAILABLE_IN_ALL
HpTensor       *hp_tensor_new_arange       (HpDType         dtype,
                                            gint64          n);
HP_AVAILABLE_IN_ALL
HpTensor       *hp_tensor_new_from_data    (HpDType         dtype,
                                            const gdouble  *data,
                                            gsize           n_data,
                                            const gint64   *shape,
                                            guint           ndim,
                                            GError        **error);
HP_AVAILABLE_IN_ALL
HpTensor       *hp_tensor_new_from_int64_data (const gint64 *data,
                                            gsize           n_data,
                                            const gint64   *shape,
                                            guint           ndim,
                                            GError        **error);
HP_AVAILABLE_IN_ALL
HpTensor       *hp_tensor_new_from_bytes   (GBytes         *bytes,
                                            HpDType         dtype,
                                            const gint64   *shape,
                                            guint           ndim,
                                            GError        **error);
HP_AVAILABLE_IN_ALL
HpTensor       *hp_tensor_new_randn        (HpDType         dtype,
                                            const gint64   *shape,
                                            guint           ndim,
                                            guint64         seed);
HP_AVAILABLE_IN_ALL
HpTensor       *hp_tensor_new_uniform      (HpDType         dtype,
                                            const gint64   *shape,
                                            guint           ndim,
                                            gdouble         low,
                                            gdouble         high,
                                            guint64         seed);
HP_AVAILABLE_IN_ALL
HpTensor       *hp_tensor_new_randn_slice  (HpDType         dtype,
                                            const gint64   *global_shape,
                                            guint           ndim,
                                            const gint64   *offsets,
                                            guint           n_offsets,
                                            const gint64   *shape,
                                            guint           n_shape,
                                            guint64         seed,
                                            GError        **error);
HP_AVAILABLE_IN_ALL
HpTensor       *hp_tensor_new_uniform_slice (HpDType        dtype,
                                            const gint64   *global_shape,
                                            guint           ndim,
                                            const gint64   *offsets,
                                            guint           n_offsets,
                                            const gint64   *shape,
                                            guint           n_shape,
                                            gdouble         low,
                                            gdouble         high,
                                            guint64         seed,
                                            GError        **error);

HP_AVAILABLE_IN_ALL
const gint64   *hp_tensor_get_shape        (HpTensor       *self,
                                            guint          *ndim);
HP_AVAILABLE_IN_ALL
guint           hp_tensor_get_ndim         (HpTensor       *self);
HP_AVAILABLE_IN_ALL
gint64          hp_tensor_get_numel        (HpTensor       *self);
HP_AVAILABLE_IN_ALL
HpDType         hp_tensor_get_dtype        (HpTensor       *self);
HP_AVAILABLE_IN_ALL
GBytes         *hp_tensor_get_bytes        (HpTensor       *self);
HP_AVAILABLE_IN_ALL
gdouble        *hp_tensor_to_float64_array (HpTensor       *self,
                                            gsize          *n_data);
HP_AVAILABLE_IN_ALL
gdouble         hp_tensor_item             (HpTensor       *self,
                                            GError        **error);
HP_AVAILABLE_IN_ALL
gchar          *hp_tensor_to_string        (HpTensor       *self);
HP_AVAILABLE_IN_ALL
gboolean        hp_tensor_allclose         (HpTensor       *self,
                                            HpTensor       *other,
                                            gdouble         rtol,
                                            gdouble         atol);

HP_AVAILABLE_IN_ALL
gboolean        hp_tensor_get_requires_grad (HpTensor      *self);
HP_AVAILABLE_IN_ALL
void            hp_tensor_set_requires_grad (HpTensor      *self,
                                            gboolean        requires_grad);
HP_AVAILABLE_IN_ALL
gboolean        hp_tensor_is_leaf          (HpTensor       *self);
HP_AVAILABLE_IN_ALL
HpTensor       *hp_tensor_get_grad         (HpTensor       *self);
HP_AVAILABLE_IN_ALL
void            hp_tensor_set_grad         (HpTensor       *self,
                                            HpTensor       *grad);
HP_AVAILABLE_IN_ALL
void            hp_tensor_zero_grad        (HpTensor       *self);
HP_AVAILABLE_IN_ALL
HpTensor       *hp_tensor_detach           (HpTensor       *self);
HP_AVAILABLE_IN_ALL
gboolean        hp_tensor_backward         (HpTensor       *self,
                                            HpTensor       *grad,
                                            GError        **error);

G_END_DECLS
