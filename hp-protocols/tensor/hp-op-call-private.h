/* hp-op-call-private.h: an op call as data, for tensor subclasses
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every public op first describes itself as an HpOpCall. When one of its
 * inputs belongs to a class with a dispatch function (the distributed
 * tensor), that function takes over the call: it works out the layout of
 * the result, runs the same op on local tensors through
 * _hp_op_call_run() and wraps the result.
 */

#pragma once

#include "hp-tensor-private.h"

G_BEGIN_DECLS

typedef enum
{
  HP_OP_ADD,
  HP_OP_SUB,
  HP_OP_MUL,
  HP_OP_DIV,
  HP_OP_SCALE,
  HP_OP_NEG,
  HP_OP_EXP,
  HP_OP_SILU,
  HP_OP_GELU,
  HP_OP_RELU,
  HP_OP_MATMUL,
  HP_OP_LINEAR,
  HP_OP_TRANSPOSE,
  HP_OP_PERMUTE,
  HP_OP_RESHAPE,
  HP_OP_NARROW,
  HP_OP_CAT,
  HP_OP_SUM,
  HP_OP_SUM_ALL,
  HP_OP_MEAN,
  HP_OP_MEAN_ALL,
  HP_OP_SOFTMAX,
  HP_OP_LOG_SOFTMAX,
  HP_OP_RMS_NORM,
  HP_OP_EMBEDDING,
  HP_OP_APPLY_ROTARY,
  HP_OP_CROSS_ENTROPY,
  HP_OP_SDPA,
} HpOpKind;

#define HP_OP_MAX_INPUTS 4

struct _HpOpCall
{
  HpOpKind kind;
  const gchar *name;
  /* the tensor arguments in signature order; optional ones may be NULL */
  HpTensor *inputs[HP_OP_MAX_INPUTS];
  guint n_inputs;
  /* cat's list, instead of inputs */
  GPtrArray *tensors;
  /* dim arguments: transpose's two, permute's list, one for the others */
  gint dims[HP_TENSOR_MAX_NDIM];
  guint n_dims;
  /* reshape's shape; narrow's start and length; ignore_index */
  gint64 sizes[HP_TENSOR_MAX_NDIM];
  guint n_sizes;
  /* scale's factor, rms_norm's eps, attention's scale */
  gdouble scalar;
  /* keepdim, is_causal */
  gboolean flag;
};

gboolean  _hp_op_call_needs_dispatch (const HpOpCall    *call);
HpTensor *_hp_op_call_dispatch       (const HpOpCall    *call,
                                      GError           **error);
guint     _hp_op_call_get_n_inputs   (const HpOpCall    *call);
HpTensor *_hp_op_call_get_input      (const HpOpCall    *call,
                                      guint              index);
HpTensor *_hp_op_call_run            (const HpOpCall    *call,
                                      HpTensor * const  *inputs,
                                      GError           **error);

/* Hands the op to a tensor subclass when an input asks for it */
#define HP_OP_DISPATCH(error, ...) \
  G_STMT_START { \
    const HpOpCall _hp_op_call = { __VA_ARGS__ }; \
    if (_hp_op_call_needs_dispatch (&_hp_op_call)) \
      return _hp_op_call_dispatch (&_hp_op_call, (error)); \
  } G_STMT_END

G_END_DECLS
