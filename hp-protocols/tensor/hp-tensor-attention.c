/* hp-tensor-attention.c: scaled dot-product attention with grouped
 * key/value heads
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every (batch, query head) pair is one small attention problem: the
 * scores Q K^T are a BLAS product, each score row goes through a
 * numerically stable softmax, and the output P V is a second product.
 * The probabilities P are kept for backward, which needs no other
 * intermediate result.
 *
 * Under the causal mask the queries go in blocks of CAUSAL_BLOCK, each
 * multiplied with the keys its last query sees only: with 128 queries,
 * four blocks, the six products of a head do 5/8 of the work of the
 * full score matrix, whose upper triangle the mask would zero. Blocks
 * of 64 (3/4 of the work) and of 16 measured slower: products that
 * small lose more to BLAS's overheads than the triangle saves.
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "hp-tensor-ops.h"
#include "hp-op-call-private.h"
#include "hp-tensor-private.h"
#include "hp-vec-private.h"

#define OP_NAME "scaled_dot_product_attention"

/* Sizes of one call: query [B, H, S, D], key [B, Hkv, Skv, D],
 * value [B, Hkv, Skv, Dv]. */
typedef struct
{
  gint64 batch;
  gint64 heads;
  gint64 kv_heads;
  gint64 group;        /* query heads per key/value head */
  gint64 q_len;
  gint64 kv_len;
  gint64 head_dim;
  gint64 value_dim;
} Dims;

#define CAUSAL_BLOCK 32

/* The queries a block holds: all of them without the causal mask */
static gint64
block_rows (const Dims *dims,
            gboolean    is_causal)
{
  return is_causal ? CAUSAL_BLOCK : MAX (dims->q_len, 1);
}

/* The keys that the queries up to @end of a block are multiplied with:
 * under the causal mask those that its last query sees. The last block
 * takes all keys, so that those no query sees (with more keys than
 * queries) still get probability 0 and zero gradients. */
static gint64
block_keys (const Dims *dims,
            gboolean    is_causal,
            gint64      end)
{
  return is_causal && end < dims->q_len ? MIN (end, dims->kv_len) : dims->kv_len;
}

/* What backward needs beyond the saved query, key and value: the
 * probabilities (owned), the scale used and the mask's shape */
typedef struct
{
  Dims dims;
  HpTensor *probs;
  gdouble scale;
  gboolean is_causal;
  guint mask_ndim;
  gint64 mask_shape[HP_TENSOR_MAX_NDIM];
} AttentionData;

static void
attention_data_free (gpointer data)
{
  AttentionData *self = data;

  g_clear_object (&self->probs);
  g_free (self);
}

/* row[j] = e^(row[j] - max) / sum over the row, the sum in double; in
 * float32 the exponentials are taken in float, vectorised */
HP_VEC_CLONES static void
softmax_normalize_f32 (gfloat *restrict row,
                       gint64           n,
                       gfloat           max)
{
  gdouble sum = 0.0;
  gfloat inv;

  HP_SIMD_SUM (sum)
  for (gint64 j = 0; j < n; j++)
    {
      row[j] = _hp_expf (row[j] - max);
      sum += row[j];
    }
  inv = (gfloat) (1.0 / sum);
  HP_SIMD
  for (gint64 j = 0; j < n; j++)
    row[j] *= inv;
}

static void
softmax_normalize_f64 (gdouble *restrict row,
                       gint64            n,
                       gdouble           max)
{
  gdouble sum = 0.0;

  for (gint64 j = 0; j < n; j++)
    {
      row[j] = exp (row[j] - max);
      sum += row[j];
    }
  for (gint64 j = 0; j < n; j++)
    row[j] /= sum;
}

/* Turns the scaled scores of the queries [i0, i1) of one (batch, head)
 * into probabilities in place: adds the mask row (elements mask_step
 * apart) or cuts the row at the causal limit, then the softmax.
 * Excluded keys get probability 0; a row with no key left becomes NaN. */
#define SOFTMAX_ROWS(T, SUFFIX) \
  G_STMT_START { \
    T *restrict _p = scores; \
    const T *_mask = mask_data; \
    for (gint64 i = i0; i < i1; i++) \
      { \
        T *restrict row = _p + i * kv_len; \
        const T *mrow = _mask != NULL ? _mask + mask_offset + i * mask_row_stride : NULL; \
        gint64 n = is_causal ? MIN (i + 1, kv_len) : kv_len; \
        gdouble max = -INFINITY; \
        for (gint64 j = 0; j < n; j++) \
          { \
            gdouble x = row[j]; \
            if (mrow != NULL) \
              x += mrow[j * mask_step]; \
            row[j] = (T) x; \
            if (row[j] > max) \
              max = row[j]; \
          } \
        if (max == -INFINITY) \
          { \
            for (gint64 j = 0; j < kv_len; j++) \
              row[j] = (T) NAN; \
            continue; \
          } \
        softmax_normalize_##SUFFIX (row, n, max); \
        for (gint64 j = n; j < kv_len; j++) \
          row[j] = 0; \
      } \
  } G_STMT_END

static HpTensor *
attention_compute (HpTensor     *query,
                   HpTensor     *key,
                   HpTensor     *value,
                   HpTensor     *mask,
                   gboolean      is_causal,
                   gdouble       scale,
                   const Dims   *dims,
                   HpTensor    **probs_out)
{
  HpDType dtype = hp_tensor_get_dtype (query);
  gsize elem = hp_dtype_get_size (dtype);
  gint64 kv_len = dims->kv_len;
  gint64 out_shape[4] = { dims->batch, dims->heads, dims->q_len, dims->value_dim };
  gint64 probs_shape[4] = { dims->batch, dims->heads, dims->q_len, kv_len };
  gint64 mask_strides[4] = { 0, 0, 0, 0 };
  const guint8 *q = _hp_tensor_data (query);
  const guint8 *k = _hp_tensor_data (key);
  const guint8 *v = _hp_tensor_data (value);
  gconstpointer mask_data = NULL;
  HpTensor *out = _hp_tensor_new_uninit (dtype, out_shape, 4);
  HpTensor *probs = _hp_tensor_new_uninit (dtype, probs_shape, 4);
  guint8 *o = _hp_tensor_data (out);
  guint8 *p = _hp_tensor_data (probs);
  gint64 rows = block_rows (dims, is_causal);

  if (mask != NULL)
    {
      guint mask_ndim;
      const gint64 *mask_shape = hp_tensor_get_shape (mask, &mask_ndim);

      _hp_broadcast_strides (mask_shape, mask_ndim, probs_shape, 4, mask_strides);
      mask_data = _hp_tensor_data (mask);
    }

  for (gint64 b = 0; b < dims->batch; b++)
    for (gint64 h = 0; h < dims->heads; h++)
      {
        gint64 bh = b * dims->heads + h;
        gint64 bg = b * dims->kv_heads + h / dims->group;
        const guint8 *q_bh = q + elem * (bh * dims->q_len * dims->head_dim);
        const guint8 *k_bg = k + elem * (bg * kv_len * dims->head_dim);
        const guint8 *v_bg = v + elem * (bg * kv_len * dims->value_dim);
        gpointer scores = p + elem * (bh * dims->q_len * kv_len);
        gint64 mask_offset = b * mask_strides[0] + h * mask_strides[1];
        gint64 mask_row_stride = mask_strides[2];
        gint64 mask_step = mask_strides[3];
        guint8 *o_bh = o + elem * (bh * dims->q_len * dims->value_dim);

        for (gint64 i0 = 0; i0 < dims->q_len; i0 += rows)
          {
            gint64 i1 = MIN (i0 + rows, dims->q_len);
            gint64 keys = block_keys (dims, is_causal, i1);
            /* the block's score rows, which the softmax reads only up
             * to the keys of the causal limit and zeroes beyond */
            guint8 *s_rows = (guint8 *) scores + elem * (i0 * kv_len);

            /* a head dim of 0 leaves every score 0, whatever the scale */
            _hp_gemm_ld (dtype, FALSE, TRUE, i1 - i0, keys, dims->head_dim, scale,
                         q_bh + elem * (i0 * dims->head_dim), dims->head_dim, k_bg,
                         dims->head_dim, 0.0, s_rows, kv_len);

            if (dtype == HP_DTYPE_FLOAT32)
              SOFTMAX_ROWS (gfloat, f32);
            else
              SOFTMAX_ROWS (gdouble, f64);

            _hp_gemm_ld (dtype, FALSE, FALSE, i1 - i0, dims->value_dim, keys, 1.0, s_rows,
                         kv_len, v_bg, dims->value_dim, 0.0,
                         o_bh + elem * (i0 * dims->value_dim), dims->value_dim);
          }
      }

  *probs_out = probs;
  return out;
}

/* dS = P * (dP - rowsum(dP * P)) of @rows score rows of one head, their
 * first @n columns, rows @stride apart, in place over dP, the sums in
 * double, vectorised */
#define DEFINE_SOFTMAX_GRAD_ROWS(T, SUFFIX) \
HP_VEC_CLONES static void \
softmax_grad_rows_##SUFFIX (T       *restrict ds, \
                            const T *restrict p, \
                            gint64            rows, \
                            gint64            n, \
                            gint64            stride) \
{ \
  for (gint64 i = 0; i < rows; i++) \
    { \
      T *restrict ds_row = ds + i * stride; \
      const T *restrict p_row = p + i * stride; \
      gdouble dot = 0.0; \
 \
      HP_SIMD_SUM (dot) \
      for (gint64 j = 0; j < n; j++) \
        dot += (gdouble) ds_row[j] * p_row[j]; \
      HP_SIMD \
      for (gint64 j = 0; j < n; j++) \
        ds_row[j] = (T) (p_row[j] * (ds_row[j] - dot)); \
    } \
}

DEFINE_SOFTMAX_GRAD_ROWS (gfloat, f32)
DEFINE_SOFTMAX_GRAD_ROWS (gdouble, f64)

static gboolean
attention_backward (HpAutogradNode  *node,
                    HpTensor       **grad_outputs,
                    HpTensor       **grad_inputs,
                    GError         **error)
{
  const AttentionData *data = _hp_op_node_get_data (node);
  const Dims *dims = &data->dims;
  HpTensor *query = _hp_autograd_node_get_saved (node, 0);
  HpTensor *key = _hp_autograd_node_get_saved (node, 1);
  HpTensor *value = _hp_autograd_node_get_saved (node, 2);
  HpTensor *probs = data->probs;
  HpDType dtype = hp_tensor_get_dtype (query);
  gsize elem = hp_dtype_get_size (dtype);
  gint64 kv_len = dims->kv_len;
  gint64 rows = block_rows (dims, data->is_causal);
  gboolean want_q = _hp_autograd_node_needs_input_grad (node, 0);
  gboolean want_k = _hp_autograd_node_needs_input_grad (node, 1);
  gboolean want_v = _hp_autograd_node_needs_input_grad (node, 2);
  gboolean want_mask = _hp_autograd_node_needs_input_grad (node, 3);
  gboolean want_ds = want_q || want_k || want_mask;
  const guint8 *q = _hp_tensor_data (query);
  const guint8 *k = _hp_tensor_data (key);
  const guint8 *v = _hp_tensor_data (value);
  const guint8 *p = _hp_tensor_data (probs);
  const guint8 *d_out = _hp_tensor_data (grad_outputs[0]);
  g_autoptr(HpTensor) dq = want_q ? _hp_tensor_new_uninit (dtype, hp_tensor_get_shape (query, NULL), 4) : NULL;
  /* the first query head of a group writes dK and dV of its key/value
   * head (beta 0), the others add to them; with no query head at all
   * they stay zeros */
  gboolean covered = dims->heads > 0;
  g_autoptr(HpTensor) dk = !want_k ? NULL : covered
    ? _hp_tensor_new_uninit (dtype, hp_tensor_get_shape (key, NULL), 4)
    : _hp_tensor_new_zeros_like (key);
  g_autoptr(HpTensor) dv = !want_v ? NULL : covered
    ? _hp_tensor_new_uninit (dtype, hp_tensor_get_shape (value, NULL), 4)
    : _hp_tensor_new_zeros_like (value);
  g_autoptr(HpTensor) ds_all = want_mask ? _hp_tensor_new_zeros_like (probs) : NULL;
  g_autofree guint8 *ds_scratch = NULL;

  if (want_ds && !want_mask)
    ds_scratch = g_malloc (MAX (dims->q_len * kv_len, 1) * elem);

  for (gint64 b = 0; b < dims->batch; b++)
    for (gint64 h = 0; h < dims->heads; h++)
      {
        gint64 bh = b * dims->heads + h;
        gint64 bg = b * dims->kv_heads + h / dims->group;
        const guint8 *q_bh = q + elem * (bh * dims->q_len * dims->head_dim);
        const guint8 *k_bg = k + elem * (bg * kv_len * dims->head_dim);
        const guint8 *v_bg = v + elem * (bg * kv_len * dims->value_dim);
        const guint8 *p_bh = p + elem * (bh * dims->q_len * kv_len);
        const guint8 *do_bh = d_out + elem * (bh * dims->q_len * dims->value_dim);
        guint8 *dk_bg = want_k
          ? (guint8 *) _hp_tensor_data (dk) + elem * (bg * kv_len * dims->head_dim) : NULL;
        guint8 *dv_bg = want_v
          ? (guint8 *) _hp_tensor_data (dv) + elem * (bg * kv_len * dims->value_dim) : NULL;
        guint8 *ds_bh = !want_ds ? NULL : want_mask
          ? (guint8 *) _hp_tensor_data (ds_all) + elem * (bh * dims->q_len * kv_len)
          : ds_scratch;
        /* one block even without queries, which zeroes dK and dV */
        gint64 n_blocks = MAX ((dims->q_len + rows - 1) / rows, 1);

        /* the last block first: it takes all keys, so that it writes
         * dK and dV whole (beta 0) for the group's first query head */
        for (gint64 blk = n_blocks - 1; blk >= 0; blk--)
          {
            gint64 i0 = blk * rows;
            gint64 i1 = MIN (i0 + rows, dims->q_len);
            gint64 keys = block_keys (dims, data->is_causal, i1);
            gdouble beta = h % dims->group == 0 && blk == n_blocks - 1 ? 0.0 : 1.0;
            const guint8 *p_rows = p_bh + elem * (i0 * kv_len);
            const guint8 *do_rows = do_bh + elem * (i0 * dims->value_dim);
            const guint8 *q_rows = q_bh + elem * (i0 * dims->head_dim);
            guint8 *ds_rows;

            /* dV[g] = sum of P^T dO over the query heads of the group */
            if (want_v)
              _hp_gemm_ld (dtype, TRUE, FALSE, keys, dims->value_dim, i1 - i0, 1.0, p_rows,
                           kv_len, do_rows, dims->value_dim, beta, dv_bg, dims->value_dim);

            if (!want_ds)
              continue;
            ds_rows = ds_bh + elem * (i0 * kv_len);

            /* dP = dO V^T, then the softmax gradient turns it into dS */
            _hp_gemm_ld (dtype, FALSE, TRUE, i1 - i0, keys, dims->value_dim, 1.0, do_rows,
                         dims->value_dim, v_bg, dims->value_dim, 0.0, ds_rows, kv_len);
            if (dtype == HP_DTYPE_FLOAT32)
              softmax_grad_rows_f32 ((gpointer) ds_rows, (gconstpointer) p_rows, i1 - i0,
                                     keys, kv_len);
            else
              softmax_grad_rows_f64 ((gpointer) ds_rows, (gconstpointer) p_rows, i1 - i0,
                                     keys, kv_len);

            if (want_q)
              _hp_gemm_ld (dtype, FALSE, FALSE, i1 - i0, dims->head_dim, keys, data->scale,
                           ds_rows, kv_len, k_bg, dims->head_dim, 0.0,
                           (guint8 *) _hp_tensor_data (dq)
                           + elem * ((bh * dims->q_len + i0) * dims->head_dim),
                           dims->head_dim);
            if (want_k)
              _hp_gemm_ld (dtype, TRUE, FALSE, keys, dims->head_dim, i1 - i0, data->scale,
                           ds_rows, kv_len, q_rows, dims->head_dim, beta, dk_bg,
                           dims->head_dim);
          }
      }

  if (want_mask)
    {
      grad_inputs[3] = _hp_tensor_sum_to_shape (ds_all, data->mask_shape, data->mask_ndim, error);
      if (grad_inputs[3] == NULL)
        return FALSE;
    }
  grad_inputs[0] = g_steal_pointer (&dq);
  grad_inputs[1] = g_steal_pointer (&dk);
  grad_inputs[2] = g_steal_pointer (&dv);
  return TRUE;
}

/* The sizes of a call whose shapes inference has checked */
static void
attention_dims (HpTensor *query,
                HpTensor *key,
                HpTensor *value,
                Dims     *dims)
{
  const gint64 *qs = hp_tensor_get_shape (query, NULL);
  const gint64 *ks = hp_tensor_get_shape (key, NULL);
  const gint64 *vs = hp_tensor_get_shape (value, NULL);

  dims->batch = qs[0];
  dims->heads = qs[1];
  dims->kv_heads = ks[1];
  dims->group = ks[1] == 0 ? 1 : qs[1] / ks[1];
  dims->q_len = qs[2];
  dims->kv_len = ks[2];
  dims->head_dim = qs[3];
  dims->value_dim = vs[3];
}

/* Shards of the batch or the heads leave the lengths and head dims whole,
 * so their BLAS range is checked on the global shapes too */
static gboolean
attention_infer (const HpOpCall    *call,
                 HpTensor * const  *inputs,
                 HpOpInfo          *info,
                 GError           **error)
{
  HpTensor *query = inputs[0], *key = inputs[1], *value = inputs[2], *mask = inputs[3];
  gboolean is_causal = call->flag;
  guint q_ndim, k_ndim, v_ndim;
  const gint64 *qs = hp_tensor_get_shape (query, &q_ndim);
  const gint64 *ks = hp_tensor_get_shape (key, &k_ndim);
  const gint64 *vs = hp_tensor_get_shape (value, &v_ndim);
  g_autofree gchar *q_str = _hp_shape_to_string (qs, q_ndim);
  g_autofree gchar *k_str = _hp_shape_to_string (ks, k_ndim);
  g_autofree gchar *v_str = _hp_shape_to_string (vs, v_ndim);
  const gchar *problem = NULL;

  if (!_hp_check_floating (OP_NAME, query, error) ||
      !_hp_check_same_dtype (OP_NAME, query, key, error) ||
      !_hp_check_same_dtype (OP_NAME, query, value, error) ||
      (mask != NULL && !_hp_check_same_dtype (OP_NAME, query, mask, error)))
    return FALSE;

  if (mask != NULL && is_causal)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   OP_NAME ": a mask and is_causal cannot be given together");
      return FALSE;
    }

  if (q_ndim != 4 || k_ndim != 4 || v_ndim != 4)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   OP_NAME ": query %s, key %s and value %s must all have 4 dims "
                   "[batch, heads, length, dim]", q_str, k_str, v_str);
      return FALSE;
    }

  if (qs[0] != ks[0] || qs[0] != vs[0])
    problem = "batch sizes differ";
  else if (ks[1] != vs[1])
    problem = "key and value heads differ";
  else if (ks[2] != vs[2])
    problem = "key and value lengths differ";
  else if (qs[3] != ks[3])
    problem = "query and key head dims differ";
  else if (ks[1] == 0 ? qs[1] != 0 : qs[1] % ks[1] != 0)
    problem = "query heads are not a multiple of key/value heads";
  else if (qs[2] > G_MAXINT || ks[2] > G_MAXINT || qs[3] > G_MAXINT || vs[3] > G_MAXINT)
    problem = "a length or head dim exceeds the BLAS integer range";

  if (problem != NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   OP_NAME ": query %s, key %s and value %s do not fit (%s)",
                   q_str, k_str, v_str, problem);
      return FALSE;
    }

  if (mask != NULL)
    {
      guint m_ndim;
      const gint64 *ms = hp_tensor_get_shape (mask, &m_ndim);
      gint64 scores[4] = { qs[0], qs[1], qs[2], ks[2] };
      gboolean fits = m_ndim <= 4;

      for (guint i = 0; fits && i < m_ndim; i++)
        {
          gint64 want = scores[4 - m_ndim + i];

          fits = ms[i] == want || ms[i] == 1;
        }

      if (!fits)
        {
          g_autofree gchar *m_str = _hp_shape_to_string (ms, m_ndim);
          g_autofree gchar *s_str = _hp_shape_to_string (scores, 4);

          g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                       OP_NAME ": mask %s does not broadcast to the scores %s",
                       m_str, s_str);
          return FALSE;
        }
    }

  _hp_op_shape_set (&info->out[0], hp_tensor_get_dtype (query), qs, 4);
  info->out[0].shape[3] = vs[3];
  return TRUE;
}

static gboolean
attention_kernel (const HpOpCall    *call,
                  const HpOpInfo    *info,
                  HpTensor * const  *inputs,
                  HpTensor         **outputs,
                  HpOpSaved         *saved,
                  GError           **error)
{
  HpTensor *mask = inputs[3];
  gdouble scale = call->scalar;
  AttentionData *data = g_new0 (AttentionData, 1);

  attention_dims (inputs[0], inputs[1], inputs[2], &data->dims);
  if (!(scale > 0.0))
    scale = 1.0 / sqrt ((gdouble) data->dims.head_dim);

  outputs[0] = attention_compute (inputs[0], inputs[1], inputs[2], mask, call->flag, scale,
                                  &data->dims, &data->probs);

  data->scale = scale;
  data->is_causal = call->flag;
  if (mask != NULL)
    {
      const gint64 *mask_shape = hp_tensor_get_shape (mask, &data->mask_ndim);

      memcpy (data->mask_shape, mask_shape, data->mask_ndim * sizeof (gint64));
    }

  for (guint i = 0; i < 3; i++)
    saved->tensors[saved->n_tensors++] = inputs[i];
  saved->data = data;
  saved->destroy = attention_data_free;
  return TRUE;
}

static const HpOp attention_op = {
  .name = OP_NAME, .n_outputs = 1,
  .infer = attention_infer, .kernel = attention_kernel, .backward = attention_backward,
  .sharding = HP_OP_SHARDING_ATTENTION,
};



/**
 * hp_tensor_scaled_dot_product_attention:
 * @query: a floating point [class@Hp.Tensor] of shape [B, H, S, D]
 * @key: a [class@Hp.Tensor] of the same dtype and shape [B, Hkv, Skv, D]
 * @value: a [class@Hp.Tensor] of the same dtype and shape [B, Hkv, Skv, Dv]
 * @mask: (nullable): an additive mask of the same dtype, broadcastable
 *   to [B, H, S, Skv]; `-inf` entries exclude keys
 * @is_causal: whether query i sees only keys j <= i
 * @scale: the factor applied to the scores; a value <= 0 or NaN means
 *   `1 / sqrt(D)`
 * @error: return location for a [struct@GLib.Error]
 *
 * Computes `softmax(query key^T * scale + mask) value` per batch and
 * head, as `torch.nn.functional.scaled_dot_product_attention` with
 * `enable_gqa=True`.
 *
 * H must be a multiple of Hkv: query head h uses key/value head
 * h / (H / Hkv) (grouped-query attention; H == Hkv is plain multi-head
 * attention). The causal mask is aligned to the top left, so with
 * S > Skv the queries from Skv on see every key. @mask and @is_causal
 * cannot be combined.
 *
 * A query whose keys are all excluded by @mask gets a row of NaN, as in
 * PyTorch's math implementation. With Skv == 0 the result is zero;
 * with D == 0 every score is zero, so each query averages the values.
 *
 * Gradients flow to @query, @key, @value and @mask.
 *
 * Returns: (transfer full): the attention output of shape
 *   [B, H, S, Dv], or %NULL with [HP_ERROR_SHAPE][error@Hp.Error] if the shapes do not
 *   fit or [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] for wrong dtypes or a mask
 *   together with @is_causal
 *
 * Since: 1.0
 */
HpTensor *
hp_tensor_scaled_dot_product_attention (HpTensor  *query,
                                        HpTensor  *key,
                                        HpTensor  *value,
                                        HpTensor  *mask,
                                        gboolean   is_causal,
                                        gdouble    scale,
                                        GError   **error)
{
  g_return_val_if_fail (HP_IS_TENSOR (query), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (key), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (value), NULL);
  g_return_val_if_fail (mask == NULL || HP_IS_TENSOR (mask), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return HP_OP_CALL (error, .op = &attention_op, .inputs = { query, key, value, mask },
                     .n_inputs = 4, .scalar = scale, .flag = is_causal);
}
