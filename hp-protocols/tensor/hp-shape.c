/* hp-shape.c: shape arithmetic and argument checks shared by the ops
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-tensor-private.h"

gint64
_hp_shape_numel (const gint64 *shape,
                 guint         ndim)
{
  gint64 numel = 1;

  for (guint i = 0; i < ndim; i++)
    numel *= shape[i];
  return numel;
}

gchar *
_hp_shape_to_string (const gint64 *shape,
                     guint         ndim)
{
  GString *out = g_string_new ("[");

  for (guint i = 0; i < ndim; i++)
    g_string_append_printf (out, "%s%" G_GINT64_FORMAT, i > 0 ? ", " : "", shape[i]);
  g_string_append_c (out, ']');

  return g_string_free (out, FALSE);
}

gchar *
_hp_tensor_shape_to_string (HpTensor *self)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);

  return _hp_shape_to_string (shape, ndim);
}

gboolean
_hp_shape_equal (const gint64 *a,
                 guint         a_ndim,
                 const gint64 *b,
                 guint         b_ndim)
{
  return a_ndim == b_ndim && (a_ndim == 0 || memcmp (a, b, a_ndim * sizeof (gint64)) == 0);
}

gboolean
_hp_tensor_has_shape (HpTensor     *self,
                      const gint64 *shape,
                      guint         ndim)
{
  guint own_ndim;
  const gint64 *own = hp_tensor_get_shape (self, &own_ndim);

  return _hp_shape_equal (own, own_ndim, shape, ndim);
}

/* The product of the sizes before @dim and of those after it, so that a
 * tensor reads as [outer, shape[dim], inner] around @dim. */
void
_hp_shape_split_at_dim (const gint64 *shape,
                        guint         ndim,
                        guint         dim,
                        gint64       *outer,
                        gint64       *inner)
{
  *outer = _hp_shape_numel (shape, dim);
  *inner = _hp_shape_numel (shape + dim + 1, ndim - dim - 1);
}

/* "float32 [2, 3]": how error messages name a tensor */
gchar *
_hp_tensor_describe (HpTensor *self)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);
  g_autofree gchar *shape_str = _hp_shape_to_string (shape, ndim);

  return g_strdup_printf ("%s %s", hp_dtype_to_string (hp_tensor_get_dtype (self)), shape_str);
}

void
_hp_shape_strides (const gint64 *shape,
                   guint         ndim,
                   gint64       *strides)
{
  gint64 stride = 1;

  for (guint i = ndim; i-- > 0;)
    {
      strides[i] = stride;
      stride *= shape[i];
    }
}

gboolean
_hp_shape_check (const gint64  *shape,
                 guint          ndim,
                 GError       **error)
{
  gint64 numel = 1;

  if (ndim > HP_TENSOR_MAX_NDIM)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "a tensor has at most %d dims, not %u", HP_TENSOR_MAX_NDIM, ndim);
      return FALSE;
    }
  if (ndim > 0 && shape == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "no shape given for %u dims", ndim);
      return FALSE;
    }

  for (guint i = 0; i < ndim; i++)
    {
      if (shape[i] < 0)
        {
          g_autofree gchar *shape_str = _hp_shape_to_string (shape, ndim);

          g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                       "shape %s has a negative size in dim %u", shape_str, i);
          return FALSE;
        }
      if (shape[i] > 0 && numel > G_MAXINT64 / 16 / shape[i])
        {
          g_autofree gchar *shape_str = _hp_shape_to_string (shape, ndim);

          g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                       "shape %s has too many elements", shape_str);
          return FALSE;
        }
      numel *= shape[i];
    }

  return TRUE;
}

gboolean
_hp_normalize_dim (const gchar  *op,
                   gint          dim,
                   guint         ndim,
                   guint        *out_dim,
                   GError      **error)
{
  gint n = (gint) ndim;

  if (dim < -n || dim >= n || n == 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: dim %d is out of range for a tensor of %u dims",
                   op, dim, ndim);
      return FALSE;
    }

  *out_dim = (guint) (dim < 0 ? dim + n : dim);
  return TRUE;
}

gboolean
_hp_broadcast_shapes (const gchar   *op,
                      const gint64  *a,
                      guint          a_ndim,
                      const gint64  *b,
                      guint          b_ndim,
                      gint64        *out,
                      guint         *out_ndim,
                      GError       **error)
{
  guint ndim = MAX (a_ndim, b_ndim);

  for (guint i = 0; i < ndim; i++)
    {
      gint64 sa = i < ndim - a_ndim ? 1 : a[i - (ndim - a_ndim)];
      gint64 sb = i < ndim - b_ndim ? 1 : b[i - (ndim - b_ndim)];

      if (sa != sb && sa != 1 && sb != 1)
        {
          g_autofree gchar *a_str = _hp_shape_to_string (a, a_ndim);
          g_autofree gchar *b_str = _hp_shape_to_string (b, b_ndim);

          g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                       "%s: shapes %s and %s cannot be broadcast together",
                       op, a_str, b_str);
          return FALSE;
        }
      out[i] = sa == 1 ? sb : sa;
    }

  *out_ndim = ndim;
  return TRUE;
}

/* Strides for reading a tensor of @shape as if it had @out_shape: the
 * broadcast dims (missing or of size 1) get stride 0. */
void
_hp_broadcast_strides (const gint64 *shape,
                       guint         ndim,
                       const gint64 *out_shape,
                       guint         out_ndim,
                       gint64       *strides)
{
  gint64 own[HP_TENSOR_MAX_NDIM];

  _hp_shape_strides (shape, ndim, own);
  for (guint i = 0; i < out_ndim; i++)
    {
      if (i < out_ndim - ndim)
        strides[i] = 0;
      else
        {
          guint j = i - (out_ndim - ndim);
          strides[i] = (shape[j] == 1 && out_shape[i] != 1) ? 0 : own[j];
        }
    }
}

gboolean
_hp_check_same_dtype (const gchar  *op,
                      HpTensor     *a,
                      HpTensor     *b,
                      GError      **error)
{
  if (hp_tensor_get_dtype (a) != hp_tensor_get_dtype (b))
    {
      g_autofree gchar *a_str = _hp_tensor_describe (a);
      g_autofree gchar *b_str = _hp_tensor_describe (b);

      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: dtypes differ (%s and %s)", op, a_str, b_str);
      return FALSE;
    }
  return TRUE;
}

gboolean
_hp_check_floating (const gchar  *op,
                    HpTensor     *self,
                    GError      **error)
{
  if (!hp_dtype_is_floating (hp_tensor_get_dtype (self)))
    {
      g_autofree gchar *str = _hp_tensor_describe (self);

      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: needs a floating point tensor, got %s", op, str);
      return FALSE;
    }
  return TRUE;
}

gboolean
_hp_check_dtype (const gchar  *op,
                 const gchar  *what,
                 HpTensor     *self,
                 HpDType       dtype,
                 GError      **error)
{
  if (hp_tensor_get_dtype (self) != dtype)
    {
      g_autofree gchar *str = _hp_tensor_describe (self);

      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: %s must be %s, got %s", op, what,
                   hp_dtype_to_string (dtype), str);
      return FALSE;
    }
  return TRUE;
}
