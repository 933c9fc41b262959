/* hp-tensor-cast.c: converting a tensor to another dtype
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>

#include "hp-tensor-ops.h"
#include "hp-op-call-private.h"
#include "hp-tensor-private.h"

#define CAST_ELEMENTS(FROM, TO) \
  G_STMT_START { \
    const FROM *restrict _in = in; \
    TO *restrict _out = out; \
    for (gint64 _i = 0; _i < n; _i++) \
      _out[_i] = (TO) _in[_i]; \
  } G_STMT_END

/* Converts every element, each pair of dtypes in one step, so that an
 * int64 becomes the float32 nearest to it and not the float32 nearest to
 * the float64 nearest to it */
static void
cast_elements (HpDType       from,
               HpDType       to,
               gconstpointer in,
               gpointer      out,
               gint64        n)
{
#define CAST_TO(FROM) \
  G_STMT_START { \
    switch (to) \
      { \
      case HP_DTYPE_FLOAT32: CAST_ELEMENTS (FROM, gfloat); break; \
      case HP_DTYPE_FLOAT64: CAST_ELEMENTS (FROM, gdouble); break; \
      case HP_DTYPE_INT64: CAST_ELEMENTS (FROM, gint64); break; \
      } \
  } G_STMT_END

  switch (from)
    {
    case HP_DTYPE_FLOAT32:
      CAST_TO (gfloat);
      break;
    case HP_DTYPE_FLOAT64:
      CAST_TO (gdouble);
      break;
    case HP_DTYPE_INT64:
      CAST_TO (gint64);
      break;
    }
#undef CAST_TO
}

static HpTensor *
cast_compute (HpTensor *self,
              HpDType   dtype)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (self, &ndim);
  HpTensor *out = _hp_tensor_new_uninit (dtype, shape, ndim);

  cast_elements (hp_tensor_get_dtype (self), dtype, _hp_tensor_data (self),
                 _hp_tensor_data (out), hp_tensor_get_numel (self));
  return out;
}

/* The gradient goes back to the input's dtype */
static gboolean
to_dtype_backward (HpAutogradNode  *node,
                   HpTensor       **grad_outputs,
                   HpTensor       **grad_inputs,
                   GError         **error)
{
  const HpDType *from = _hp_op_node_get_data (node);

  grad_inputs[0] = cast_compute (grad_outputs[0], *from);
  return TRUE;
}

/* to_dtype (call->dtype) */
static gboolean
to_dtype_infer (const HpOpCall    *call,
                HpTensor * const  *inputs,
                HpOpInfo          *info,
                GError           **error)
{
  if (call->dtype != HP_DTYPE_FLOAT32 && call->dtype != HP_DTYPE_FLOAT64 &&
      call->dtype != HP_DTYPE_INT64)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "to_dtype: %d is not a dtype", (gint) call->dtype);
      return FALSE;
    }
  _hp_op_shape_like (&info->out[0], inputs[0]);
  info->out[0].dtype = call->dtype;
  return TRUE;
}

/* A float converts to int64 by truncation toward zero, like torch, when
 * the truncated value fits; NaN, the infinities and values out of
 * range have no int64 value (torch leaves those undefined). */
static gboolean
check_int64_range (HpTensor  *self,
                   GError   **error)
{
  HpDType dtype = hp_tensor_get_dtype (self);
  gconstpointer data = _hp_tensor_data (self);
  gint64 n = hp_tensor_get_numel (self);

  /* -2^63 and 2^63 are exact doubles */
  for (gint64 i = 0; i < n; i++)
    {
      gdouble value = _hp_load_f64 (data, dtype, i);

      if (!(value >= -9223372036854775808.0 && value < 9223372036854775808.0))
        {
          g_autofree gchar *self_str = _hp_tensor_describe (self);

          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "to_dtype: element %" G_GINT64_FORMAT " of %s is %g, which has "
                       "no int64 value", i, self_str, value);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
to_dtype_kernel (const HpOpCall    *call,
                 const HpOpInfo    *info,
                 HpTensor * const  *inputs,
                 HpTensor         **outputs,
                 HpOpSaved         *saved,
                 GError           **error)
{
  HpDType from = hp_tensor_get_dtype (inputs[0]);

  if (call->dtype == HP_DTYPE_INT64 && hp_dtype_is_floating (from) &&
      !check_int64_range (inputs[0], error))
    return FALSE;
  outputs[0] = cast_compute (inputs[0], call->dtype);
  saved->data = g_memdup2 (&from, sizeof from);
  saved->destroy = g_free;
  return TRUE;
}

/* Three ops of one kernel, for the DTensor dispatch: a cast between
 * float dtypes keeps a Partial(sum) a sum (up to rounding, like any sum
 * of partials); a cast from float into int64 truncates, which is not
 * linear, and checks the values; a cast from int64 does neither (int64
 * partials stay exact only when reduced as int64) */
static const HpOp to_dtype_float_op = {
  .name = "to_dtype", .n_outputs = 1,
  .infer = to_dtype_infer, .kernel = to_dtype_kernel, .backward = to_dtype_backward,
  .sharding = HP_OP_SHARDING_POINTWISE, .linear_inputs = HP_OP_INPUT (0),
};

static const HpOp to_dtype_truncate_op = {
  .name = "to_dtype", .n_outputs = 1,
  .infer = to_dtype_infer, .kernel = to_dtype_kernel, .backward = to_dtype_backward,
  .sharding = HP_OP_SHARDING_POINTWISE, .checks_values = TRUE,
};

static const HpOp to_dtype_from_int64_op = {
  .name = "to_dtype", .n_outputs = 1,
  .infer = to_dtype_infer, .kernel = to_dtype_kernel, .backward = to_dtype_backward,
  .sharding = HP_OP_SHARDING_POINTWISE,
};

/**
 * hp_tensor_to_dtype:
 * @self: a [class@Hp.Tensor]
 * @dtype: the dtype of the result
 * @error: return location for a [struct@GLib.Error]
 *
 * Converts the elements of @self to @dtype, as torch.Tensor.to() does:
 * floats round to the nearest value of the narrower float, int64 values
 * to the nearest float, and floats become int64 by truncation toward
 * zero. The result is a new tensor even when @dtype is the dtype of
 * @self.
 *
 * Between float dtypes the op is differentiable: the gradient is
 * converted back to the dtype of @self. An int64 result has no gradient.
 *
 * Returns: (transfer full): the converted tensor, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] if @dtype is not a dtype, or a float
 *   converted to int64 is NaN, infinite or out of the range of int64
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_to_dtype (HpTensor  *self,
                    HpDType    dtype,
                    GError   **error)
{
  const HpOp *op;

  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!hp_dtype_is_floating (hp_tensor_get_dtype (self)))
    op = &to_dtype_from_int64_op;
  else if (dtype == HP_DTYPE_INT64)
    op = &to_dtype_truncate_op;
  else
    op = &to_dtype_float_op;
  return HP_OP_CALL (error, .op = op, .inputs = { self }, .n_inputs = 1, .dtype = dtype);
}
