/* hp-tensor-linalg.c: matrix products through CBLAS
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every product, forward and backward, is a cblas_sgemm or cblas_dgemm
 * call on the contiguous row-major buffers; transposes are expressed with
 * the BLAS transpose flags and never materialised.
 */

#include "config.h"

#include <string.h>

#include <cblas.h>

#include "hp-tensor-ops.h"
#include "hp-op-call-private.h"
#include "hp-tensor-private.h"

/* C = alpha * op(A) op(B) + beta * C on row-major matrices whose rows
 * are @lda, @ldb and @ldc elements apart, op(A) being m x k and op(B)
 * k x n; @beta is 0 or 1. Empty products stay away from BLAS (beta 0
 * then zeroes C), so every leading dimension passed to it is at least
 * 1. The attention op multiplies blocks of its score matrices with it. */
void
_hp_gemm_ld (HpDType        dtype,
             gboolean       trans_a,
             gboolean       trans_b,
             gint64         m,
             gint64         n,
             gint64         k,
             gdouble        alpha,
             gconstpointer  a,
             gint64         lda,
             gconstpointer  b,
             gint64         ldb,
             gdouble        beta,
             gpointer       c,
             gint64         ldc)
{
  enum CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans;
  enum CBLAS_TRANSPOSE tb = trans_b ? CblasTrans : CblasNoTrans;
  gsize elem = hp_dtype_get_size (dtype);

  if (m == 0 || n == 0)
    return;

  if (k == 0)
    {
      if (beta == 0.0)
        for (gint64 i = 0; i < m; i++)
          memset ((guint8 *) c + (gsize) (i * ldc) * elem, 0, (gsize) n * elem);
      return;
    }

  if (dtype == HP_DTYPE_FLOAT32)
    cblas_sgemm (CblasRowMajor, ta, tb, (int) m, (int) n, (int) k,
                 (float) alpha, a, (int) lda, b, (int) ldb, (float) beta, c, (int) ldc);
  else
    cblas_dgemm (CblasRowMajor, ta, tb, (int) m, (int) n, (int) k,
                 alpha, a, (int) lda, b, (int) ldb, beta, c, (int) ldc);
}

/* _hp_gemm_ld on packed matrices */
void
_hp_gemm (HpDType        dtype,
          gboolean       trans_a,
          gboolean       trans_b,
          gint64         m,
          gint64         n,
          gint64         k,
          gdouble        alpha,
          gconstpointer  a,
          gconstpointer  b,
          gdouble        beta,
          gpointer       c)
{
  _hp_gemm_ld (dtype, trans_a, trans_b, m, n, k, alpha, a, trans_a ? m : k, b,
               trans_b ? k : n, beta, c, n);
}

/* BLAS indexes with int: a product that would reach BLAS with a larger
 * size is refused instead of being computed wrongly. */
static gboolean
check_blas_sizes (const gchar   *op,
                  HpTensor      *a,
                  HpTensor      *b,
                  const gint64  *sizes,
                  guint          n_sizes,
                  GError       **error)
{
  for (guint i = 0; i < n_sizes; i++)
    if (sizes[i] == 0)
      return TRUE;

  for (guint i = 0; i < n_sizes; i++)
    if (sizes[i] > G_MAXINT)
      {
        g_autofree gchar *a_str = _hp_tensor_describe (a);
        g_autofree gchar *b_str = _hp_tensor_describe (b);

        g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                     "%s: %s and %s give a matrix size of %" G_GINT64_FORMAT
                     ", more than BLAS can index (%d)",
                     op, a_str, b_str, sizes[i], G_MAXINT);
        return FALSE;
      }

  return TRUE;
}

/* ---- matmul ------------------------------------------------------------ */

/* How a matmul maps onto gemm calls: the operands as stacks of matrices
 * a [.., m, k] and b [.., k, n] (a 1-d a is one row, a 1-d b one column)
 * whose batch dims broadcast to @batch_shape. The output, and the
 * gradient arriving at it, is the stack [batch.., m, n] in memory
 * whatever 1-d dims were dropped from its shape. */
typedef struct
{
  gint64 m, k, n;
  guint batch_ndim;
  gint64 batch_shape[HP_TENSOR_MAX_NDIM];
  /* in matrices; 0 along the batch dims an operand is broadcast in */
  gint64 a_strides[HP_TENSOR_MAX_NDIM];
  gint64 b_strides[HP_TENSOR_MAX_NDIM];
  gint64 batch_numel;
  gint64 a_batch_numel;
  gint64 b_batch_numel;
} MatmulPlan;

/* With a single b matrix the batch dims of a fold into the rows, so the
 * whole product is one gemm of (batch * m) rows. */
static inline gboolean
matmul_plan_folds (const MatmulPlan *plan)
{
  return plan->b_batch_numel == 1;
}

/* The matrices of a and b that output matrix @i is the product of */
static void
matmul_plan_operands (const MatmulPlan *plan,
                      gint64            i,
                      gint64           *a_index,
                      gint64           *b_index)
{
  gint64 rest = i;

  *a_index = 0;
  *b_index = 0;
  for (guint d = plan->batch_ndim; d-- > 0;)
    {
      gint64 pos = rest % plan->batch_shape[d];

      rest /= plan->batch_shape[d];
      *a_index += pos * plan->a_strides[d];
      *b_index += pos * plan->b_strides[d];
    }
}

/* The plan of a product of operands with at least 1 dim each; FALSE
 * (with @error set) when their matrices or batch dims do not fit. With
 * shapes that inference has checked it cannot fail. */
static gboolean
matmul_plan_init (MatmulPlan  *plan,
                  HpTensor    *a,
                  HpTensor    *b,
                  GError     **error)
{
  guint a_ndim, b_ndim, a_batch_ndim, b_batch_ndim;
  const gint64 *a_shape = hp_tensor_get_shape (a, &a_ndim);
  const gint64 *b_shape = hp_tensor_get_shape (b, &b_ndim);
  g_autofree gchar *a_str = NULL;
  g_autofree gchar *b_str = NULL;

  plan->m = a_ndim == 1 ? 1 : a_shape[a_ndim - 2];
  plan->k = a_shape[a_ndim - 1];
  plan->n = b_ndim == 1 ? 1 : b_shape[b_ndim - 1];
  a_batch_ndim = a_ndim < 2 ? 0 : a_ndim - 2;
  b_batch_ndim = b_ndim < 2 ? 0 : b_ndim - 2;

  if (plan->k != b_shape[b_ndim == 1 ? 0 : b_ndim - 2])
    {
      a_str = _hp_shape_to_string (a_shape, a_ndim);
      b_str = _hp_shape_to_string (b_shape, b_ndim);
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "matmul: shapes %s and %s do not fit (%" G_GINT64_FORMAT
                   " != %" G_GINT64_FORMAT ")", a_str, b_str, plan->k,
                   b_shape[b_ndim == 1 ? 0 : b_ndim - 2]);
      return FALSE;
    }

  if (!_hp_broadcast_shapes ("matmul", a_shape, a_batch_ndim, b_shape, b_batch_ndim,
                             plan->batch_shape, &plan->batch_ndim, NULL))
    {
      g_autofree gchar *a_batch = _hp_shape_to_string (a_shape, a_batch_ndim);
      g_autofree gchar *b_batch = _hp_shape_to_string (b_shape, b_batch_ndim);

      a_str = _hp_shape_to_string (a_shape, a_ndim);
      b_str = _hp_shape_to_string (b_shape, b_ndim);
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "matmul: shapes %s and %s do not fit (batch dims %s and %s "
                   "cannot be broadcast together)", a_str, b_str, a_batch, b_batch);
      return FALSE;
    }

  _hp_broadcast_strides (a_shape, a_batch_ndim, plan->batch_shape, plan->batch_ndim,
                         plan->a_strides);
  _hp_broadcast_strides (b_shape, b_batch_ndim, plan->batch_shape, plan->batch_ndim,
                         plan->b_strides);
  plan->batch_numel = _hp_shape_numel (plan->batch_shape, plan->batch_ndim);
  plan->a_batch_numel = _hp_shape_numel (a_shape, a_batch_ndim);
  plan->b_batch_numel = _hp_shape_numel (b_shape, b_batch_ndim);
  return TRUE;
}

static gboolean
matmul_infer (const HpOpCall    *call,
              HpTensor * const  *inputs,
              HpOpInfo          *info,
              GError           **error)
{
  HpTensor *a = inputs[0], *b = inputs[1];
  guint a_ndim = hp_tensor_get_ndim (a), b_ndim = hp_tensor_get_ndim (b);
  HpOpShape *out = &info->out[0];
  MatmulPlan plan;

  if (a_ndim == 0 || b_ndim == 0)
    {
      g_autofree gchar *a_str = _hp_tensor_shape_to_string (a);
      g_autofree gchar *b_str = _hp_tensor_shape_to_string (b);

      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "matmul: both operands need at least 1 dim, got %s and %s",
                   a_str, b_str);
      return FALSE;
    }
  if (!_hp_check_floating ("matmul", a, error) ||
      !_hp_check_same_dtype ("matmul", a, b, error) ||
      !matmul_plan_init (&plan, a, b, error))
    return FALSE;

  _hp_op_shape_set (out, hp_tensor_get_dtype (a), plan.batch_shape, plan.batch_ndim);
  if (a_ndim > 1)
    out->shape[out->ndim++] = plan.m;
  if (b_ndim > 1)
    out->shape[out->ndim++] = plan.n;

  if (!_hp_shape_check (out->shape, out->ndim, error))
    {
      g_prefix_error (error, "matmul: ");
      return FALSE;
    }
  return TRUE;
}

static void
matmul_compute (const MatmulPlan *plan,
                HpDType           dtype,
                gconstpointer     a,
                gconstpointer     b,
                gpointer          out)
{
  gsize elem = hp_dtype_get_size (dtype);
  gint64 m = plan->m, k = plan->k, n = plan->n;

  if (matmul_plan_folds (plan))
    {
      _hp_gemm (dtype, FALSE, FALSE, plan->batch_numel * m, n, k, 1.0, a, b, 0.0, out);
      return;
    }

  for (gint64 i = 0; i < plan->batch_numel; i++)
    {
      gint64 ai, bi;

      matmul_plan_operands (plan, i, &ai, &bi);
      _hp_gemm (dtype, FALSE, FALSE, m, n, k, 1.0, (const guint8 *) a + elem * ai * m * k,
                (const guint8 *) b + elem * bi * k * n, 0.0,
                (guint8 *) out + elem * i * m * n);
    }
}

/* grad_a[.., m, k] = grad[.., m, n] b[.., k, n]^T, summed over the batch
 * dims a was broadcast in (gemm accumulates with beta = 1 into a zeroed
 * buffer then). */
static HpTensor *
matmul_grad_a (const MatmulPlan *plan,
               HpTensor         *a,
               HpTensor         *b,
               HpTensor         *grad)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (a, &ndim);
  HpDType dtype = hp_tensor_get_dtype (a);
  gsize elem = hp_dtype_get_size (dtype);
  HpTensor *out = _hp_tensor_new_uninit (dtype, shape, ndim);
  guint8 *ga = _hp_tensor_data (out);
  const guint8 *gb = _hp_tensor_data (b);
  const guint8 *g = _hp_tensor_data (grad);
  gint64 m = plan->m, k = plan->k, n = plan->n;
  gboolean accumulate = plan->a_batch_numel != plan->batch_numel;

  if (matmul_plan_folds (plan))
    {
      _hp_gemm (dtype, FALSE, TRUE, plan->batch_numel * m, k, n, 1.0, g, gb, 0.0, ga);
      return out;
    }

  if (accumulate)
    memset (ga, 0, elem * hp_tensor_get_numel (out));

  for (gint64 i = 0; i < plan->batch_numel; i++)
    {
      gint64 ai, bi;

      matmul_plan_operands (plan, i, &ai, &bi);
      _hp_gemm (dtype, FALSE, TRUE, m, k, n, 1.0, g + elem * i * m * n,
                gb + elem * bi * k * n, accumulate ? 1.0 : 0.0, ga + elem * ai * m * k);
    }

  return out;
}

/* grad_b[.., k, n] = a[.., m, k]^T grad[.., m, n], summed over the batch
 * dims b was broadcast in. With a single b matrix that sum runs over
 * all the folded rows of one gemm. */
static HpTensor *
matmul_grad_b (const MatmulPlan *plan,
               HpTensor         *a,
               HpTensor         *b,
               HpTensor         *grad)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (b, &ndim);
  HpDType dtype = hp_tensor_get_dtype (b);
  gsize elem = hp_dtype_get_size (dtype);
  HpTensor *out = _hp_tensor_new_uninit (dtype, shape, ndim);
  guint8 *gbuf = _hp_tensor_data (out);
  const guint8 *ga = _hp_tensor_data (a);
  const guint8 *g = _hp_tensor_data (grad);
  gint64 m = plan->m, k = plan->k, n = plan->n;
  gboolean accumulate = plan->b_batch_numel != plan->batch_numel;

  if (matmul_plan_folds (plan))
    {
      _hp_gemm (dtype, TRUE, FALSE, k, n, plan->batch_numel * m, 1.0, ga, g, 0.0, gbuf);
      return out;
    }

  if (accumulate)
    memset (gbuf, 0, elem * hp_tensor_get_numel (out));

  for (gint64 i = 0; i < plan->batch_numel; i++)
    {
      gint64 ai, bi;

      matmul_plan_operands (plan, i, &ai, &bi);
      _hp_gemm (dtype, TRUE, FALSE, k, n, m, 1.0, ga + elem * ai * m * k,
                g + elem * i * m * n, accumulate ? 1.0 : 0.0, gbuf + elem * bi * k * n);
    }

  return out;
}

static gboolean
matmul_backward (HpAutogradNode  *node,
                 HpTensor       **grad_outputs,
                 HpTensor       **grad_inputs,
                 GError         **error)
{
  HpTensor *a = _hp_autograd_node_get_saved (node, 0);
  HpTensor *b = _hp_autograd_node_get_saved (node, 1);
  MatmulPlan plan;

  /* the operands' shapes passed inference in forward */
  matmul_plan_init (&plan, a, b, NULL);
  if (_hp_autograd_node_needs_input_grad (node, 0))
    grad_inputs[0] = matmul_grad_a (&plan, a, b, grad_outputs[0]);
  if (_hp_autograd_node_needs_input_grad (node, 1))
    grad_inputs[1] = matmul_grad_b (&plan, a, b, grad_outputs[0]);

  return TRUE;
}

/* BLAS limits the local product, not the global one of a DTensor call,
 * so they are checked here and not by inference */
static gboolean
matmul_kernel (const HpOpCall    *call,
               const HpOpInfo    *info,
               HpTensor * const  *inputs,
               HpTensor         **outputs,
               HpOpSaved         *saved,
               GError           **error)
{
  HpTensor *a = inputs[0], *b = inputs[1];
  HpDType dtype = info->out[0].dtype;
  MatmulPlan plan;
  gint64 sizes[3];

  matmul_plan_init (&plan, a, b, NULL);
  sizes[0] = matmul_plan_folds (&plan) ? plan.batch_numel * plan.m : plan.m;
  sizes[1] = plan.n;
  sizes[2] = plan.k;
  if (!check_blas_sizes ("matmul", a, b, sizes, 3, error))
    return FALSE;

  outputs[0] = _hp_op_shape_new_uninit (&info->out[0]);
  matmul_compute (&plan, dtype, _hp_tensor_data (a), _hp_tensor_data (b),
                  _hp_tensor_data (outputs[0]));
  saved->tensors[saved->n_tensors++] = a;
  saved->tensors[saved->n_tensors++] = b;
  return TRUE;
}

static const HpOp matmul_op = {
  .name = "matmul", .n_outputs = 1,
  .infer = matmul_infer, .kernel = matmul_kernel, .backward = matmul_backward,
  .sharding = HP_OP_SHARDING_MATMUL,
};

/**
 * hp_tensor_matmul:
 * @self: a float32 or float64 [class@Hp.Tensor] with at least 1 dim
 * @other: a [class@Hp.Tensor] of the same dtype with at least 1 dim
 * @error: return location for a [struct@GLib.Error]
 *
 * Multiplies two tensors as matrices, with the semantics of numpy's
 * `matmul`. The last two dims of each operand are the matrices
 * (@self [.., m, k] and @other [.., k, n]); the dims before them are
 * batch dims and broadcast as numpy does, so [2, 1, 3, 4] @ [5, 4, 6]
 * gives [2, 5, 3, 6]. A 1-d @self [k] is taken as one row [1, k] and a
 * 1-d @other [k] as one column [k, 1]; that dim of 1 is then dropped from
 * the result, so two 1-d tensors give their dot product as a 0-d tensor.
 *
 * Empty dims are allowed: an inner size k of 0 gives zeros, and m, n or a
 * batch dim of 0 gives an empty result. The products are computed by
 * CBLAS (one gemm for all rows when @other has no batch dims).
 *
 * Returns: (transfer full): the product, or %NULL with
 *   [HP_ERROR_SHAPE][error@Hp.Error] if the inner sizes or batch dims do not fit, or
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for a 0-d operand, an integer dtype or
 *   dtypes that differ
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_matmul (HpTensor  *self,
                  HpTensor  *other,
                  GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (other), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &matmul_op, .inputs = { self, other }, .n_inputs = 2);
}

/* ---- linear ------------------------------------------------------------ */

#define BIAS_GRAD_LOOP(T) \
  G_STMT_START { \
    const T *restrict _g = g_data; \
    T *restrict _o = out_data; \
    for (gint64 _r = 0; _r < rows; _r++) \
      for (gint64 _j = 0; _j < n_out; _j++) \
        acc[_j] += _g[_r * n_out + _j]; \
    for (gint64 _j = 0; _j < n_out; _j++) \
      _o[_j] = (T) acc[_j]; \
  } G_STMT_END

/* db = sum of grad [rows, out] over the rows, accumulated in double */
static HpTensor *
linear_grad_bias (HpTensor *grad,
                  gint64    rows,
                  gint64    n_out)
{
  HpDType dtype = hp_tensor_get_dtype (grad);
  HpTensor *out = _hp_tensor_new_uninit (dtype, &n_out, 1);
  g_autofree gdouble *acc = g_new0 (gdouble, MAX (n_out, 1));
  gconstpointer g_data = _hp_tensor_data (grad);
  gpointer out_data = _hp_tensor_data (out);

  if (dtype == HP_DTYPE_FLOAT32)
    BIAS_GRAD_LOOP (gfloat);
  else
    BIAS_GRAD_LOOP (gdouble);

  return out;
}

static gboolean
linear_backward (HpAutogradNode  *node,
                 HpTensor       **grad_outputs,
                 HpTensor       **grad_inputs,
                 GError         **error)
{
  HpTensor *x = _hp_autograd_node_get_saved (node, 0);
  HpTensor *weight = _hp_autograd_node_get_saved (node, 1);
  HpTensor *grad = grad_outputs[0];
  HpDType dtype = hp_tensor_get_dtype (x);
  guint x_ndim;
  const gint64 *x_shape = hp_tensor_get_shape (x, &x_ndim);
  const gint64 *w_shape = hp_tensor_get_shape (weight, NULL);
  gint64 n_out = w_shape[0], n_in = w_shape[1];
  gint64 rows = _hp_shape_numel (x_shape, x_ndim - 1);
  gconstpointer g = _hp_tensor_data (grad);

  /* dx [rows, in] = grad [rows, out] W [out, in] */
  if (_hp_autograd_node_needs_input_grad (node, 0))
    {
      HpTensor *dx = _hp_tensor_new_uninit (dtype, x_shape, x_ndim);

      _hp_gemm (dtype, FALSE, FALSE, rows, n_in, n_out, 1.0, g, _hp_tensor_data (weight),
                0.0, _hp_tensor_data (dx));
      grad_inputs[0] = dx;
    }

  /* dW [out, in] = grad^T [out, rows] x [rows, in] */
  if (_hp_autograd_node_needs_input_grad (node, 1))
    {
      HpTensor *dw = _hp_tensor_new_uninit (dtype, w_shape, 2);

      _hp_gemm (dtype, TRUE, FALSE, n_out, n_in, rows, 1.0, g, _hp_tensor_data (x), 0.0,
                _hp_tensor_data (dw));
      grad_inputs[1] = dw;
    }

  if (_hp_autograd_node_needs_input_grad (node, 2))
    grad_inputs[2] = linear_grad_bias (grad, rows, n_out);

  return TRUE;
}

static gboolean
linear_infer (const HpOpCall    *call,
              HpTensor * const  *inputs,
              HpOpInfo          *info,
              GError           **error)
{
  HpTensor *x = inputs[0], *weight = inputs[1], *bias = inputs[2];
  guint x_ndim, w_ndim, b_ndim = 0;
  const gint64 *x_shape = hp_tensor_get_shape (x, &x_ndim);
  const gint64 *w_shape = hp_tensor_get_shape (weight, &w_ndim);
  const gint64 *b_shape = bias != NULL ? hp_tensor_get_shape (bias, &b_ndim) : NULL;
  g_autofree gchar *x_str = _hp_shape_to_string (x_shape, x_ndim);
  g_autofree gchar *w_str = _hp_shape_to_string (w_shape, w_ndim);

  if (x_ndim == 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "linear: input needs at least 1 dim, got %s", x_str);
      return FALSE;
    }
  if (!_hp_check_floating ("linear", x, error) ||
      !_hp_check_same_dtype ("linear", x, weight, error) ||
      (bias != NULL && !_hp_check_same_dtype ("linear", x, bias, error)))
    return FALSE;

  if (w_ndim != 2)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "linear: weight must be 2-d [out, in], got %s", w_str);
      return FALSE;
    }
  if (x_shape[x_ndim - 1] != w_shape[1])
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "linear: input %s and weight %s do not fit (%" G_GINT64_FORMAT
                   " != %" G_GINT64_FORMAT ")", x_str, w_str,
                   x_shape[x_ndim - 1], w_shape[1]);
      return FALSE;
    }
  if (bias != NULL && (b_ndim != 1 || b_shape[0] != w_shape[0]))
    {
      g_autofree gchar *b_str = _hp_shape_to_string (b_shape, b_ndim);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "linear: bias %s does not fit weight %s (needs [%" G_GINT64_FORMAT "])",
                   b_str, w_str, w_shape[0]);
      return FALSE;
    }

  _hp_op_shape_like (&info->out[0], x);
  info->out[0].shape[x_ndim - 1] = w_shape[0];
  return TRUE;
}

/* BLAS limits the local product, not the global one of a DTensor call,
 * so they are checked here and not by inference */
static gboolean
linear_kernel (const HpOpCall    *call,
               const HpOpInfo    *info,
               HpTensor * const  *inputs,
               HpTensor         **outputs,
               HpOpSaved         *saved,
               GError           **error)
{
  HpTensor *x = inputs[0], *weight = inputs[1], *bias = inputs[2];
  HpDType dtype = info->out[0].dtype;
  gsize elem = hp_dtype_get_size (dtype);
  guint ndim;
  const gint64 *x_shape = hp_tensor_get_shape (x, &ndim);
  const gint64 *w_shape = hp_tensor_get_shape (weight, NULL);
  gint64 n_out = w_shape[0], n_in = w_shape[1];
  gint64 rows = _hp_shape_numel (x_shape, ndim - 1);
  gint64 sizes[3] = { rows, n_out, n_in };
  guint8 *out_data;

  if (!check_blas_sizes ("linear", x, weight, sizes, 3, error))
    return FALSE;

  outputs[0] = _hp_op_shape_new_uninit (&info->out[0]);
  out_data = _hp_tensor_data (outputs[0]);

  /* The bias rows go in first and gemm adds the product onto them */
  if (bias != NULL)
    for (gint64 r = 0; r < rows; r++)
      memcpy (out_data + elem * r * n_out, _hp_tensor_data (bias), elem * n_out);

  _hp_gemm (dtype, FALSE, TRUE, rows, n_out, n_in, 1.0, _hp_tensor_data (x),
            _hp_tensor_data (weight), bias != NULL ? 1.0 : 0.0, out_data);

  saved->tensors[saved->n_tensors++] = x;
  saved->tensors[saved->n_tensors++] = weight;
  return TRUE;
}

/* the bias is added to the result; the op is linear in the input alone */
static const HpOp linear_op = {
  .name = "linear", .n_outputs = 1,
  .infer = linear_infer, .kernel = linear_kernel, .backward = linear_backward,
  .sharding = HP_OP_SHARDING_LINEAR,
  .additive_inputs = HP_OP_INPUT (2), .linear_inputs = HP_OP_INPUT (0),
};

/**
 * hp_tensor_linear:
 * @self: the input, a float32 or float64 [class@Hp.Tensor] [.., in] with at
 *   least 1 dim
 * @weight: the weight [out, in], of the same dtype
 * @bias: (nullable): the bias [out], of the same dtype, or %NULL for none
 * @error: return location for a [struct@GLib.Error]
 *
 * Applies an affine map to the last dim: the result [.., out] is
 * @self @weight^T + @bias, as PyTorch's `linear`. All the rows of @self
 * go through one gemm call, with @weight used transposed in place.
 * Empty dims are allowed: with in = 0 every row of the result is the
 * bias (or zeros without one).
 *
 * Returns: (transfer full): the result, or %NULL with [HP_ERROR_SHAPE][error@Hp.Error] if
 *   the shapes do not fit or [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for a 0-d input,
 *   an integer dtype or dtypes that differ
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_linear (HpTensor  *self,
                  HpTensor  *weight,
                  HpTensor  *bias,
                  GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (weight), NULL);
  g_return_val_if_fail (bias == NULL || HP_IS_TENSOR (bias), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &linear_op, .inputs = { self, weight, bias }, .n_inputs = 3);
}
