/* hp-op-call-private.h: the op table and op calls
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every op is one HpOp, defined next to its kernel: its inference (which
 * checks the inputs' dtypes and shapes and the arguments, with the error
 * messages, and says what the results are), its kernel, its backward and
 * how it lays out DTensor inputs. A public op describes its call as an
 * HpOpCall and hands it to _hp_op_call(). When an input belongs to a
 * class with a dispatch function (the distributed tensor), that function
 * takes over: it runs the same inference on the global shapes, works out
 * the layout of the result from the op's sharding kind, runs the op on
 * the local tensors through _hp_op_call_run() and wraps the results.
 * Otherwise _hp_op_call_run() infers, runs the kernel and records the
 * autograd node.
 *
 * Inference reads only dtypes and shapes, so one function serves plain
 * tensors and DTensors (whose shape is the global one); checks that read
 * values (an embedding id out of range) are the kernel's.
 */

#pragma once

#include "hp-tensor-private.h"

G_BEGIN_DECLS

#define HP_OP_MAX_INPUTS 4
#define HP_OP_MAX_OUTPUTS 2
#define HP_OP_MAX_SAVED 4

typedef struct _HpOp HpOp;

struct _HpOpCall
{
  const HpOp *op;
  /* the tensor arguments in signature order; optional ones may be NULL */
  HpTensor *inputs[HP_OP_MAX_INPUTS];
  guint n_inputs;
  /* a list of tensors (cat), instead of inputs */
  GPtrArray *tensors;
  /* dim arguments: transpose's two, permute's list, one for the others */
  gint dims[HP_TENSOR_MAX_NDIM];
  guint n_dims;
  /* integer arguments: a shape, narrow's start and length, ignore_index */
  gint64 sizes[HP_TENSOR_MAX_NDIM];
  guint n_sizes;
  /* a number: scale's factor, rms_norm's eps, attention's scale,
   * pow_scalar's exponent, masked_fill's value, clamp's min */
  gdouble scalar;
  /* a second number: clamp's max */
  gdouble scalar2;
  /* keepdim, is_causal */
  gboolean flag;
  /* to_dtype's target dtype */
  HpDType dtype;
};

/* A result's dtype and shape */
typedef struct
{
  HpDType dtype;
  guint ndim;
  gint64 shape[HP_TENSOR_MAX_NDIM];
} HpOpShape;

/* What inference finds out about a call */
typedef struct
{
  HpOpShape out[HP_OP_MAX_OUTPUTS];
  /* the dim argument, counted from 0 */
  guint dim;
  /* a layout op's result dim o is input dim perm[o] */
  guint perm[HP_TENSOR_MAX_NDIM];
} HpOpInfo;

/* What a kernel leaves for backward: tensors (borrowed; the node keeps
 * detached aliases) and op data that the node frees with @destroy */
typedef struct
{
  HpTensor *tensors[HP_OP_MAX_SAVED];
  guint n_tensors;
  gpointer data;
  GDestroyNotify destroy;
} HpOpSaved;

/* How an op lays out DTensor inputs, mesh dim by mesh dim (the rules are
 * in distributed/hp-dtensor-dispatch.c and spec/dtensor.md §4); a mesh
 * dim that a rule does not cover is Replicate for every input and the
 * result */
typedef enum
{
  /* every input Replicate */
  HP_OP_SHARDING_REPLICATE,
  /* element by element over the broadcast result (info->out[0]): a shard
   * of a dim the result does not broadcast passes through. Also repeat
   * (a dim repeated once keeps its shard, shifted by the new leading
   * dims; the others are whole) and to_dtype */
  HP_OP_SHARDING_POINTWISE,
  /* as POINTWISE for one input, whose expanded dims are whole; the local
   * call keeps the local size (-1) of every dim that passes a shard */
  HP_OP_SHARDING_EXPAND,
  /* info->dim stays whole in input 0; its other shards pass through, the
   * other inputs are Replicate (index_select's index) */
  HP_OP_SHARDING_ALONG_DIM,
  /* as ALONG_DIM, with every input sharded like input 0, where every
   * input has input 0's size (gather's index: a shard of a dim where the
   * index is shorter than self does not pass) */
  HP_OP_SHARDING_ALONG_DIM_ALL,
  /* the last two dims of input 0 stay whole; shards of the leading dims
   * pass through (tril, triu) */
  HP_OP_SHARDING_BATCHED_MATRIX,
  /* a sum over info->dim (or everything): a shard of the reduced dim
   * gives Partial(sum) */
  HP_OP_SHARDING_REDUCE,
  /* the shards move with their dims by info->perm */
  HP_OP_SHARDING_PERMUTE,
  HP_OP_SHARDING_RESHAPE,
  HP_OP_SHARDING_MATMUL,
  HP_OP_SHARDING_LINEAR,
  HP_OP_SHARDING_EMBEDDING,
  HP_OP_SHARDING_ROTARY,
  HP_OP_SHARDING_ATTENTION,
  HP_OP_SHARDING_CROSS_ENTROPY,
  /* topk, max, min, argmax, argmin over info->dim: shards of the other
   * dims pass through; a shard of info->dim (on one mesh dim) gives a
   * Replicate result there, from the candidates of every shard
   * (hp-select-private.h) */
  HP_OP_SHARDING_SELECT,
} HpOpSharding;

typedef gboolean (*HpOpInferFunc)  (const HpOpCall    *call,
                                    HpTensor * const  *inputs,
                                    HpOpInfo          *info,
                                    GError           **error);
typedef gboolean (*HpOpKernelFunc) (const HpOpCall    *call,
                                    const HpOpInfo    *info,
                                    HpTensor * const  *inputs,
                                    HpTensor         **outputs,
                                    HpOpSaved         *saved,
                                    GError           **error);

struct _HpOp
{
  const gchar *name;
  /* which member of a family of ops that share their functions */
  guint variant;
  guint n_outputs;
  HpOpInferFunc infer;
  HpOpKernelFunc kernel;
  /* NULL: not differentiable (integer results) */
  HpBackwardFunc backward;
  HpOpSharding sharding;
  /* Partial inputs (per mesh dim) that the op keeps Partial: bit i of
   * @linear_inputs, when the op is linear in input i alone (a
   * Partial(sum) or Partial(avg) input i with every other input
   * Replicate); @additive_inputs, when these inputs are added to the
   * result (Partials of one op summed, and a Replicate one added once,
   * by the ranks at coordinate 0); @moves_partials, when the op only
   * moves elements, so that every Partial passes */
  guint linear_inputs;
  guint additive_inputs;
  gboolean moves_partials;
  /* the kernel checks the values of an input that may be sharded
   * (gather's index): on DTensors the ranks agree on the outcome, so
   * that all fail or none does */
  gboolean checks_values;
};

#define HP_OP_INPUT(i) (1u << (i))

gboolean        _hp_op_call_needs_dispatch (const HpOpCall    *call);
const gchar    *_hp_op_call_get_name       (const HpOpCall    *call);
guint           _hp_op_call_get_n_inputs   (const HpOpCall    *call);
HpTensor       *_hp_op_call_get_input      (const HpOpCall    *call,
                                            guint              index);
HpTensor      **_hp_op_call_get_inputs     (const HpOpCall    *call);
gboolean        _hp_op_call_infer          (const HpOpCall    *call,
                                            HpTensor * const  *inputs,
                                            HpOpInfo          *info,
                                            GError           **error);
gboolean        _hp_op_call_outputs        (const HpOpCall    *call,
                                            HpTensor         **outputs,
                                            GError           **error);
HpTensor       *_hp_op_call                (const HpOpCall    *call,
                                            GError           **error);
gboolean        _hp_op_call_run            (const HpOpCall    *call,
                                            HpTensor * const  *inputs,
                                            HpTensor         **outputs,
                                            GError           **error);

/* For backward: the call (without its tensors) and what inference found */
const HpOpCall *_hp_op_node_get_call       (HpAutogradNode    *node);
const HpOpInfo *_hp_op_node_get_info       (HpAutogradNode    *node);
gpointer        _hp_op_node_get_data       (HpAutogradNode    *node);

/* Inference helpers */
void            _hp_op_shape_set           (HpOpShape         *shape,
                                            HpDType            dtype,
                                            const gint64      *dims,
                                            guint              ndim);
void            _hp_op_shape_like          (HpOpShape         *shape,
                                            HpTensor          *like);
HpTensor       *_hp_op_shape_new_uninit    (const HpOpShape   *shape);

/* Reading a tensor at listed element offsets (hp-tensor-index.c):
 * gather, index_select and repeat work out, for each element of their
 * result, the offset of the element of the input it copies; their
 * gradient adds each element of the output gradient back at its
 * offset. The HpTake is the kernel's saved data. */
typedef struct
{
  /* the input's shape */
  guint ndim;
  gint64 shape[HP_TENSOR_MAX_NDIM];
  /* one per result element, in row-major order */
  gint64 n;
  gint64 offsets[];
} HpTake;

HpTake         *_hp_take_new               (HpTensor          *input,
                                            gint64             n);
HpTensor       *_hp_take_run               (const HpTake      *take,
                                            HpTensor          *input,
                                            const HpOpShape   *out);
gboolean        _hp_take_backward          (HpAutogradNode    *node,
                                            HpTensor         **grad_outputs,
                                            HpTensor         **grad_inputs,
                                            GError           **error);

/* A single-output call of @op: returns what _hp_op_call() returns */
#define HP_OP_CALL(error, ...) \
  _hp_op_call (&(const HpOpCall) { __VA_ARGS__ }, (error))

G_END_DECLS
