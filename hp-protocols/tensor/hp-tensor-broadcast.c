/* hp-tensor-broadcast.c: expanding to and reducing from a broadcast shape
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-tensor-private.h"

/* Walks all indices of @shape in row-major order, keeping the offset of
 * one strided operand. Used where broadcasting makes plain loops wrong. */
#define FOR_EACH_INDEX(shape, ndim, strides, offset, body) \
  G_STMT_START { \
    gint64 _idx[HP_TENSOR_MAX_NDIM] = { 0 }; \
    gint64 _total = _hp_shape_numel ((shape), (ndim)); \
    gint64 offset = 0; \
    for (gint64 _n = 0; _n < _total; _n++) \
      { \
        body; \
        for (guint _d = (ndim); _d-- > 0;) \
          { \
            _idx[_d]++; \
            offset += (strides)[_d]; \
            if (_idx[_d] < (shape)[_d]) \
              break; \
            offset -= (strides)[_d] * (shape)[_d]; \
            _idx[_d] = 0; \
          } \
      } \
  } G_STMT_END

/* Sums @self (of a broadcast shape) down to @shape, the shape of the
 * operand that was broadcast: the gradient rule of every broadcasting op.
 * Not recorded by autograd (used inside backward functions). */
HpTensor *
_hp_tensor_sum_to_shape (HpTensor      *self,
                         const gint64  *shape,
                         guint          ndim,
                         GError       **error)
{
  guint in_ndim;
  const gint64 *in_shape = hp_tensor_get_shape (self, &in_ndim);
  HpDType dtype = hp_tensor_get_dtype (self);
  gint64 strides[HP_TENSOR_MAX_NDIM];
  gint64 check[HP_TENSOR_MAX_NDIM];
  guint check_ndim;
  g_autofree gdouble *acc = NULL;
  gconstpointer in;
  gint64 out_numel = _hp_shape_numel (shape, ndim);

  if (!_hp_broadcast_shapes ("sum_to_shape", in_shape, in_ndim, shape, ndim,
                             check, &check_ndim, error))
    return NULL;
  if (!_hp_shape_equal (check, check_ndim, in_shape, in_ndim))
    {
      g_autofree gchar *a = _hp_shape_to_string (in_shape, in_ndim);
      g_autofree gchar *b = _hp_shape_to_string (shape, ndim);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "sum_to_shape: %s is not a broadcast of %s", a, b);
      return NULL;
    }

  if (_hp_shape_equal (in_shape, in_ndim, shape, ndim))
    return hp_tensor_detach (self);

  _hp_broadcast_strides (shape, ndim, in_shape, in_ndim, strides);
  acc = g_new0 (gdouble, MAX (out_numel, 1));
  in = _hp_tensor_data (self);
  {
    gint64 i = 0;
    FOR_EACH_INDEX (in_shape, in_ndim, strides, offset,
                    acc[offset] += _hp_load_f64 (in, dtype, i++));
  }

  return _hp_tensor_new_from_doubles (dtype, acc, shape, ndim);
}

/* Materialises @self broadcast to @shape. Not recorded by autograd. */
HpTensor *
_hp_tensor_expand (HpTensor      *self,
                   const gint64  *shape,
                   guint          ndim,
                   GError       **error)
{
  guint in_ndim;
  const gint64 *in_shape = hp_tensor_get_shape (self, &in_ndim);
  HpDType dtype = hp_tensor_get_dtype (self);
  gsize elem = hp_dtype_get_size (dtype);
  gint64 strides[HP_TENSOR_MAX_NDIM];
  gint64 check[HP_TENSOR_MAX_NDIM];
  guint check_ndim;
  const guint8 *in;
  guint8 *out_data;
  HpTensor *out;

  if (!_hp_broadcast_shapes ("expand", in_shape, in_ndim, shape, ndim,
                             check, &check_ndim, error))
    return NULL;
  if (!_hp_shape_equal (check, check_ndim, shape, ndim))
    {
      g_autofree gchar *a = _hp_shape_to_string (in_shape, in_ndim);
      g_autofree gchar *b = _hp_shape_to_string (shape, ndim);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "expand: %s cannot be expanded to %s", a, b);
      return NULL;
    }

  _hp_broadcast_strides (in_shape, in_ndim, shape, ndim, strides);
  out = _hp_tensor_new_uninit (dtype, shape, ndim);
  out_data = _hp_tensor_data (out);
  in = _hp_tensor_data (self);
  {
    gint64 i = 0;
    FOR_EACH_INDEX (shape, ndim, strides, offset,
                    memcpy (out_data + elem * i++, in + elem * offset, elem));
  }

  return out;
}

void
_hp_broadcast_iter_init (HpBroadcastIter  *iter,
                         const gint64     *shape,
                         guint             ndim,
                         HpTensor * const *operands,
                         guint             n)
{
  g_return_if_fail (n <= HP_BROADCAST_MAX_OPERANDS);

  memset (iter, 0, sizeof *iter);
  iter->n = n;
  iter->ndim = ndim;
  if (ndim > 0)
    memcpy (iter->shape, shape, ndim * sizeof (gint64));
  for (guint k = 0; k < n; k++)
    {
      guint op_ndim;
      const gint64 *op_shape = hp_tensor_get_shape (operands[k], &op_ndim);

      _hp_broadcast_strides (op_shape, op_ndim, shape, ndim, iter->strides[k]);
    }
}
