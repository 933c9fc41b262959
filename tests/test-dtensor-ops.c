/* test-dtensor-ops.c: every op on DTensors against the single-rank op,
 * forward and backward, and the layouts the sharding rules pick
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi). One harness does all the work:
 * given an op, its global inputs and one layout per input, it runs the op
 * on plain tensors and on DTensors laid out that way, contracts both
 * outputs with the same fixed random weights, runs backward, and compares
 * the output, the loss and every input's gradient (float64: 1e-12
 * relative and absolute; float32: 1e-5); an output without gradient (an
 * int64 one, such as a comparison, or a cast of int64 inputs alone)
 * counts alone, to the bit. It also checks the layout of the output, so
 * that a silent fallback to Replicate shows, and that each gradient is
 * laid out like its input (Partial as Replicate).
 *
 * The meshes are [n] over all ranks and, on 4 and 8 ranks, 2 x n/2 (dp,
 * tp). On the 2-d mesh each 1-d layout p also runs as (p, R), (R, p) and
 * (p, p), where the rules work on every mesh dim on its own.
 */

#include <math.h>
#include <string.h>

#include "hp-test-utils.h"

#define MAX_INPUTS 6

static gint world_size;

typedef struct
{
  gint shape[2];
  guint ndim;
  HpDeviceMesh *mesh;
  gchar *name;
} Mesh;

/* [n]; 2 x n/2 on 4 and 8 ranks */
static Mesh meshes[2];
static guint n_meshes;

/* The arguments of an op besides its tensors */
typedef struct
{
  gint dims[HP_TENSOR_MAX_NDIM];
  guint n_dims;
  gint64 sizes[HP_TENSOR_MAX_NDIM];
  guint n_sizes;
  gboolean flag;
  gdouble scalar;
} Params;

typedef HpTensor *(*OpFunc) (HpTensor    **in,
                             guint         n,
                             const Params *p,
                             GError      **error);

/* Data */

/* Small integers in [-9, 9], 0 included unless @nonzero */
static HpTensor *
small_ints (const gint64 *shape,
            guint         ndim,
            guint64       salt,
            gboolean      nonzero)
{
  gint64 n = 1;
  g_autofree gdouble *data = NULL;

  for (guint k = 0; k < ndim; k++)
    n *= shape[k];
  data = g_new (gdouble, MAX (n, 1));
  for (gint64 i = 0; i < n; i++)
    {
      gint64 v = (gint64) ((i * 37 + (gint64) salt * 11) % 19) - 9;

      data[i] = nonzero && v == 0 ? 5.0 : (gdouble) v;
    }
  return hp_test_tensor (HP_DTYPE_FLOAT64, data, n, shape, ndim);
}

static HpTensor *
ints (const gint64 *shape,
      guint         ndim,
      guint64       salt)
{
  return small_ints (shape, ndim, salt, FALSE);
}

static HpTensor *
randn (HpDType       dtype,
       const gint64 *shape,
       guint         ndim,
       guint64       seed)
{
  return hp_tensor_new_randn (dtype, shape, ndim, seed);
}

static HpTensor *
uniform (HpDType       dtype,
         const gint64 *shape,
         guint         ndim,
         gdouble       low,
         gdouble       high,
         guint64       seed)
{
  return hp_tensor_new_uniform (dtype, shape, ndim, low, high, seed);
}

/* Layouts, computed here from the spec's chunk formula */

/* The tensor dim a placement text shards (normalised), or -1 */
static gint
text_shard_dim (const gchar *text,
                guint        ndim)
{
  gint k;

  if (text[0] != 'S')
    return -1;
  k = (gint) g_ascii_strtoll (text + 2, NULL, 10);
  return k < 0 ? k + (gint) ndim : k;
}

/* This rank's block of a tensor of @shape laid out by @texts (one per
 * mesh dim) */
static void
expected_region (const gint64  *shape,
                 guint          ndim,
                 gchar * const *texts,
                 const Mesh    *m,
                 gint64        *offsets,
                 gint64        *lengths)
{
  const gint *coordinate = hp_device_mesh_get_coordinate (m->mesh, NULL);

  for (guint k = 0; k < ndim; k++)
    {
      offsets[k] = 0;
      lengths[k] = shape[k];
      for (guint d = 0; d < m->ndim; d++)
        if (text_shard_dim (texts[d], ndim) == (gint) k)
          {
            gint64 off, len;

            hp_test_chunk (lengths[k], m->shape[d], coordinate[d], &off, &len);
            offsets[k] += off;
            lengths[k] = len;
          }
    }
}

/* This rank's local tensor for a layout with Partial(sum) mesh dims: its
 * block of @whole, split into shares that add up to it over each Partial
 * mesh dim */
static HpTensor *
partial_local (HpTensor      *whole,
               gchar * const *texts,
               const Mesh    *m)
{
  const gint *coordinate = hp_device_mesh_get_coordinate (m->mesh, NULL);
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (whole, &ndim);
  gint64 offsets[HP_TENSOR_MAX_NDIM], lengths[HP_TENSOR_MAX_NDIM];
  gsize count;
  g_autofree gdouble *values = NULL;

  expected_region (shape, ndim, texts, m, offsets, lengths);
  values = hp_test_region_values (whole, offsets, lengths, &count);

  for (guint d = 0; d < m->ndim; d++)
    if (strcmp (texts[d], "P(sum)") == 0)
      for (gsize i = 0; i < count; i++)
        {
          gdouble share = (gdouble) ((i * 3 + d) % 5) - 2.0;
          gint parts = m->shape[d];

          values[i] = coordinate[d] == parts - 1 ? values[i] - (parts - 1) * share : share;
        }

  return hp_test_tensor (hp_tensor_get_dtype (whole), values, count, lengths, ndim);
}

/* @global laid out by @text ("S(0)" on a 1-d mesh, "S(0),R" on a 2-d
 * one), a DTensor leaf that requires grad when it is floating point */
static HpTensor *
lay_out (const Mesh  *m,
         HpTensor    *global,
         const gchar *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) placements = hp_placements_new_from_string (text, &error);
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (global, &ndim);
  HpDTensor *dt;

  g_assert_no_error (error);
  g_assert_cmpuint (placements->len, ==, m->ndim);
  if (strchr (text, 'P') != NULL)
    {
      g_auto(GStrv) texts = g_strsplit (text, ",", -1);
      g_autoptr(HpTensor) local = partial_local (global, texts, m);

      dt = hp_dtensor_new_from_local (local, m->mesh, placements, shape, ndim, FALSE, &error);
    }
  else
    dt = hp_dtensor_distribute (global, m->mesh, placements, -1, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_is_leaf (HP_TENSOR (dt)));
  if (hp_tensor_get_dtype (global) != HP_DTYPE_INT64)
    hp_tensor_set_requires_grad (HP_TENSOR (dt), TRUE);
  return HP_TENSOR (dt);
}

/* Assertions naming the case */

static void
fail (const gchar *where,
      const gchar *what,
      const gchar *detail)
{
  g_autofree gchar *msg = g_strdup_printf ("%s: %s: %s", where, what, detail);

  g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC, msg);
}

static void
assert_ok (const gchar *where,
           const gchar *what,
           gpointer     result,
           GError      *error)
{
  if (error != NULL)
    fail (where, what, error->message);
  if (result == NULL)
    fail (where, what, "no result and no error");
}

static void
assert_close (const gchar *where,
              const gchar *what,
              HpTensor    *got,
              HpTensor    *want,
              gdouble      tol)
{
  if (!hp_tensor_allclose (got, want, tol, tol))
    {
      g_autofree gchar *a = hp_tensor_to_string (got);
      g_autofree gchar *b = hp_tensor_to_string (want);
      g_autofree gchar *detail = g_strdup_printf ("differs\n got  %s\n want %s", a, b);

      fail (where, what, detail);
    }
}

/* @t must be a DTensor laid out by @want_text, with negative shard dims
 * normalised and, for gradients, Partial read as Replicate */
static void
assert_placements (const gchar *where,
                   const gchar *what,
                   HpTensor    *t,
                   const gchar *want_text,
                   gboolean     partial_as_replicate)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) want = hp_placements_new_from_string (want_text, &error);
  GPtrArray *have;
  guint ndim = hp_tensor_get_ndim (t);
  gboolean same;

  g_assert_no_error (error);
  if (!HP_IS_DTENSOR (t))
    fail (where, what, "not an HpDTensor");
  have = hp_dtensor_get_placements (HP_DTENSOR (t));
  same = have->len == want->len;
  for (guint d = 0; same && d < want->len; d++)
    {
      g_autoptr(HpPlacement) fixed = NULL;
      HpPlacement *w = g_ptr_array_index (want, d);

      if (hp_placement_is_shard (w) && hp_shard_get_dim (HP_SHARD (w)) < 0)
        w = fixed = hp_shard_new (hp_shard_get_dim (HP_SHARD (w)) + (gint) ndim);
      else if (partial_as_replicate && hp_placement_is_partial (w))
        w = fixed = hp_replicate_new ();
      same = hp_placement_equal (g_ptr_array_index (have, d), w);
    }
  if (!same)
    {
      g_autofree gchar *got = hp_placements_to_string (have);
      g_autofree gchar *detail = g_strdup_printf ("placements %s, want (%s)%s", got, want_text,
                                                  partial_as_replicate ? " with P as R" : "");

      fail (where, what, detail);
    }
}

/* The harness */

/* check()'s backward through the full output @full and the comparison
 * of every input's gradient with the single-rank one */
static void
check_gradients (const gchar    *where,
                 HpTensor      **leaves,
                 HpTensor      **dts,
                 guint           n,
                 gchar * const  *texts,
                 HpTensor       *full,
                 HpTensor       *weights,
                 HpTensor       *loss,
                 gdouble         tol)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) dweighted = NULL;
  g_autoptr(HpTensor) dloss = NULL;

  dweighted = hp_tensor_mul (full, weights, &error);
  dloss = hp_tensor_sum_all (dweighted, &error);
  assert_ok (where, "loss", dloss, error);
  assert_close (where, "loss", dloss, loss, tol);
  if (!hp_tensor_backward (dloss, NULL, &error))
    fail (where, "backward", error->message);

  for (guint i = 0; i < n; i++)
    {
      g_autofree gchar *what = g_strdup_printf ("gradient of input %u", i);
      g_autoptr(HpTensor) grad_full = NULL;
      HpTensor *want, *grad;

      if (dts[i] == NULL)
        continue;
      if (hp_tensor_get_dtype (dts[i]) == HP_DTYPE_INT64)
        {
          if (hp_tensor_get_grad (dts[i]) != NULL)
            fail (where, what, "ids have no gradient");
          continue;
        }
      want = hp_tensor_get_grad (leaves[i]);
      grad = hp_tensor_get_grad (dts[i]);
      if (want == NULL)
        {
          if (grad != NULL)
            fail (where, what, "the single-rank run has none");
          continue;
        }
      if (grad == NULL)
        fail (where, what, "missing");
      assert_placements (where, what, grad, texts[i], TRUE);
      grad_full = hp_dtensor_full_tensor (HP_DTENSOR (grad), &error);
      assert_ok (where, what, grad_full, error);
      assert_close (where, what, grad_full, want, tol);
    }
}

/* Runs @op on plain @globals and on DTensors laid out by @layout (one
 * placement text per input separated by spaces, mesh dims separated by
 * commas, "-" for an absent input) and compares outputs and gradients;
 * @want_out (NULL: not checked) is the layout the output must have. */
static void
check (const Mesh   *m,
       const gchar  *label,
       OpFunc        op,
       const Params *p,
       HpTensor    **globals,
       guint         n,
       const gchar  *layout,
       const gchar  *want_out)
{
  static const Params none = { { 0 }, 0, { 0 }, 0, FALSE, 0.0 };
  g_auto(GStrv) texts = g_strsplit (layout, " ", -1);
  g_autofree gchar *where = g_strdup_printf ("%s on %s with (%s)", label, m->name, layout);
  HpTensor *leaves[MAX_INPUTS] = { NULL };
  HpTensor *dts[MAX_INPUTS] = { NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) out = NULL;
  g_autoptr(HpTensor) weights = NULL;
  g_autoptr(HpTensor) weighted = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpTensor) dout = NULL;
  g_autoptr(HpTensor) full = NULL;
  gdouble tol = 1e-12;
  gboolean integer;
  guint ndim;
  const gint64 *shape;

  g_assert_cmpuint (n, <=, MAX_INPUTS);
  g_assert_cmpuint (g_strv_length (texts), ==, n);
  if (p == NULL)
    p = &none;

  /* the single-rank run */
  for (guint i = 0; i < n; i++)
    {
      if (globals[i] == NULL)
        {
          g_assert_cmpstr (texts[i], ==, "-");
          continue;
        }
      leaves[i] = hp_tensor_detach (globals[i]);
      if (hp_tensor_get_dtype (globals[i]) == HP_DTYPE_FLOAT32)
        tol = 1e-5;
      if (hp_tensor_get_dtype (globals[i]) != HP_DTYPE_INT64)
        hp_tensor_set_requires_grad (leaves[i], TRUE);
    }
  out = op (leaves, n, p, &error);
  assert_ok (where, "single-rank op", out, error);
  /* an int64 output (a comparison), or a float one of int64 inputs
   * alone (a cast), has no gradient */
  integer = !hp_tensor_get_requires_grad (out);
  if (integer)
    tol = 0.0;
  else
    {
      shape = hp_tensor_get_shape (out, &ndim);
      weights = randn (hp_tensor_get_dtype (out), shape, ndim, 4242);
      weighted = hp_tensor_mul (out, weights, &error);
      loss = hp_tensor_sum_all (weighted, &error);
      assert_ok (where, "single-rank loss", loss, error);
      if (!hp_tensor_backward (loss, NULL, &error))
        fail (where, "single-rank backward", error->message);
    }

  /* the distributed run */
  for (guint i = 0; i < n; i++)
    if (globals[i] != NULL)
      dts[i] = lay_out (m, globals[i], texts[i]);
  dout = op (dts, n, p, &error);
  assert_ok (where, "op on DTensors", dout, error);
  if (!HP_IS_DTENSOR (dout))
    fail (where, "output", "not an HpDTensor");
  if (want_out != NULL)
    assert_placements (where, "output", dout, want_out, FALSE);
  full = hp_dtensor_full_tensor (HP_DTENSOR (dout), &error);
  assert_ok (where, "full_tensor of the output", full, error);
  assert_close (where, "output", full, out, tol);
  if (hp_tensor_get_dtype (full) != hp_tensor_get_dtype (out))
    fail (where, "output", "the dtypes differ");
  if (integer && hp_tensor_get_requires_grad (dout))
    fail (where, "output", "an output without gradient requires grad");

  if (!integer)
    check_gradients (where, leaves, dts, n, texts, full, weights, loss, tol);

  for (guint i = 0; i < n; i++)
    {
      g_clear_object (&leaves[i]);
      g_clear_object (&dts[i]);
    }
}

/* Each placement text of @layout as (p, R) (@which 0), (R, p) (1) or
 * (p, p) (2) */
static gchar *
on_two_dims (const gchar *layout,
             guint        which)
{
  g_auto(GStrv) texts = g_strsplit (layout, " ", -1);
  GString *out = g_string_new (NULL);

  for (guint i = 0; texts[i] != NULL; i++)
    {
      if (i > 0)
        g_string_append_c (out, ' ');
      if (strcmp (texts[i], "-") == 0)
        g_string_append (out, "-");
      else if (which == 0)
        g_string_append_printf (out, "%s,R", texts[i]);
      else if (which == 1)
        g_string_append_printf (out, "R,%s", texts[i]);
      else
        g_string_append_printf (out, "%s,%s", texts[i], texts[i]);
    }
  return g_string_free (out, FALSE);
}

/* check() on the 1-d mesh and, with the 2-d mesh, as (p, R), (R, p) and
 * (p, p) */
static void
check_layout (const gchar  *label,
              OpFunc        op,
              const Params *p,
              HpTensor    **globals,
              guint         n,
              const gchar  *layout,
              const gchar  *want_out)
{
  check (&meshes[0], label, op, p, globals, n, layout, want_out);
  for (guint m = 1; m < n_meshes; m++)
    for (guint which = 0; which < 3; which++)
      {
        g_autofree gchar *layout2 = on_two_dims (layout, which);
        g_autofree gchar *want2 = want_out != NULL ? on_two_dims (want_out, which) : NULL;

        check (&meshes[m], label, op, p, globals, n, layout2, want2);
      }
}

#define IN(...) ((HpTensor *[]) { __VA_ARGS__ }), \
  (sizeof ((HpTensor *[]) { __VA_ARGS__ }) / sizeof (HpTensor *))

/* The ops */

#define OP_WRAPPER(func, call) \
  static HpTensor * \
  func (HpTensor     **in, \
        guint          n G_GNUC_UNUSED, \
        const Params  *p G_GNUC_UNUSED, \
        GError       **error) \
  { \
    return call; \
  }

OP_WRAPPER (op_add, hp_tensor_add (in[0], in[1], error))
OP_WRAPPER (op_sub, hp_tensor_sub (in[0], in[1], error))
OP_WRAPPER (op_mul, hp_tensor_mul (in[0], in[1], error))
OP_WRAPPER (op_div, hp_tensor_div (in[0], in[1], error))
OP_WRAPPER (op_scale, hp_tensor_scale (in[0], p->scalar, error))
OP_WRAPPER (op_neg, hp_tensor_neg (in[0], error))
OP_WRAPPER (op_exp, hp_tensor_exp (in[0], error))
OP_WRAPPER (op_silu, hp_tensor_silu (in[0], error))
OP_WRAPPER (op_gelu, hp_tensor_gelu (in[0], error))
OP_WRAPPER (op_relu, hp_tensor_relu (in[0], error))
OP_WRAPPER (op_log, hp_tensor_log (in[0], error))
OP_WRAPPER (op_sqrt, hp_tensor_sqrt (in[0], error))
OP_WRAPPER (op_rsqrt, hp_tensor_rsqrt (in[0], error))
OP_WRAPPER (op_tanh, hp_tensor_tanh (in[0], error))
OP_WRAPPER (op_sigmoid, hp_tensor_sigmoid (in[0], error))
OP_WRAPPER (op_abs, hp_tensor_abs (in[0], error))
OP_WRAPPER (op_clamp, hp_tensor_clamp (in[0], -p->scalar, p->scalar, error))
OP_WRAPPER (op_pow_scalar, hp_tensor_pow_scalar (in[0], p->scalar, error))
OP_WRAPPER (op_pow, hp_tensor_pow (in[0], in[1], error))
OP_WRAPPER (op_eq, hp_tensor_eq (in[0], in[1], error))
OP_WRAPPER (op_ne, hp_tensor_ne (in[0], in[1], error))
OP_WRAPPER (op_lt, hp_tensor_lt (in[0], in[1], error))
OP_WRAPPER (op_le, hp_tensor_le (in[0], in[1], error))
OP_WRAPPER (op_gt, hp_tensor_gt (in[0], in[1], error))
OP_WRAPPER (op_ge, hp_tensor_ge (in[0], in[1], error))
OP_WRAPPER (op_where, hp_tensor_where (in[0], in[1], in[2], error))
OP_WRAPPER (op_masked_fill, hp_tensor_masked_fill (in[0], in[1], p->scalar, error))
OP_WRAPPER (op_linear, hp_tensor_linear (in[0], in[1], in[2], error))
OP_WRAPPER (op_matmul, hp_tensor_matmul (in[0], in[1], error))
OP_WRAPPER (op_softmax, hp_tensor_softmax (in[0], p->dims[0], error))
OP_WRAPPER (op_log_softmax, hp_tensor_log_softmax (in[0], p->dims[0], error))
OP_WRAPPER (op_rms_norm, hp_tensor_rms_norm (in[0], in[1], p->scalar, error))
OP_WRAPPER (op_sum, hp_tensor_sum (in[0], p->dims[0], p->flag, error))
OP_WRAPPER (op_mean, hp_tensor_mean (in[0], p->dims[0], p->flag, error))
OP_WRAPPER (op_sum_all, hp_tensor_sum_all (in[0], error))
OP_WRAPPER (op_mean_all, hp_tensor_mean_all (in[0], error))
OP_WRAPPER (op_transpose, hp_tensor_transpose (in[0], p->dims[0], p->dims[1], error))
OP_WRAPPER (op_permute, hp_tensor_permute (in[0], p->dims, p->n_dims, error))
OP_WRAPPER (op_reshape, hp_tensor_reshape (in[0], p->sizes, p->n_sizes, error))
OP_WRAPPER (op_narrow, hp_tensor_narrow (in[0], p->dims[0], p->sizes[0], p->sizes[1], error))
OP_WRAPPER (op_embedding, hp_tensor_embedding (in[0], in[1], error))
OP_WRAPPER (op_rotary, hp_tensor_apply_rotary (in[0], in[1], in[2], error))
OP_WRAPPER (op_sdpa, hp_tensor_scaled_dot_product_attention (in[0], in[1], in[2], in[3], p->flag,
                                                        p->scalar, error))
OP_WRAPPER (op_cross_entropy, hp_tensor_cross_entropy (in[0], in[1], -100, error))
OP_WRAPPER (op_gather, hp_tensor_gather (in[0], p->dims[0], in[1], error))
OP_WRAPPER (op_index_select, hp_tensor_index_select (in[0], p->dims[0], in[1], error))
OP_WRAPPER (op_expand, hp_tensor_expand (in[0], p->sizes, p->n_sizes, error))
OP_WRAPPER (op_repeat, hp_tensor_repeat (in[0], p->sizes, p->n_sizes, error))
OP_WRAPPER (op_tril, hp_tensor_tril (in[0], p->sizes[0], error))
OP_WRAPPER (op_triu, hp_tensor_triu (in[0], p->sizes[0], error))
OP_WRAPPER (op_to_dtype, hp_tensor_to_dtype (in[0], (HpDType) p->sizes[0], error))

static HpTensor *
op_cat (HpTensor     **in,
        guint          n,
        const Params  *p,
        GError       **error)
{
  g_autoptr(GPtrArray) list = g_ptr_array_new ();

  for (guint i = 0; i < n; i++)
    g_ptr_array_add (list, in[i]);
  return hp_tensor_cat (list, p->dims[0], error);
}

/* linear, gelu, linear; with a sixth input w, sum_all (out * w) */
static HpTensor *
op_mlp (HpTensor     **in,
        guint          n,
        const Params  *p G_GNUC_UNUSED,
        GError       **error)
{
  g_autoptr(HpTensor) hidden = hp_tensor_linear (in[0], in[1], in[2], error);
  g_autoptr(HpTensor) active = NULL;
  g_autoptr(HpTensor) out = NULL;
  g_autoptr(HpTensor) weighted = NULL;

  if (hidden == NULL || (active = hp_tensor_gelu (hidden, error)) == NULL ||
      (out = hp_tensor_linear (active, in[3], in[4], error)) == NULL)
    return NULL;
  if (n < 6)
    return g_steal_pointer (&out);
  weighted = hp_tensor_mul (out, in[5], error);
  return weighted != NULL ? hp_tensor_sum_all (weighted, error) : NULL;
}

/* Tests */

static void
test_pointwise_binary (void)
{
  static const struct { const gchar *name; OpFunc op; } ops[] = {
    { "add", op_add }, { "sub", op_sub }, { "mul", op_mul }, { "div", op_div },
  };
  g_autoptr(HpTensor) a = ints (HP_TEST_SHAPE (6, 4), 1);
  g_autoptr(HpTensor) b = small_ints (HP_TEST_SHAPE (6, 4), 2, TRUE);
  g_autoptr(HpTensor) row = small_ints (HP_TEST_SHAPE (4), 3, TRUE);
  g_autoptr(HpTensor) col = small_ints (HP_TEST_SHAPE (6, 1), 4, TRUE);
  g_autoptr(HpTensor) one_row = small_ints (HP_TEST_SHAPE (1, 4), 5, TRUE);
  g_autoptr(HpTensor) odd = ints (HP_TEST_SHAPE (5, 3), 6);
  g_autoptr(HpTensor) odd_b = small_ints (HP_TEST_SHAPE (5, 3), 7, TRUE);

  for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
    {
      const gchar *name = ops[o].name;
      OpFunc op = ops[o].op;

      /* broadcast operands are Replicate where they broadcast */
      check_layout (name, op, NULL, IN (a, row), "S(0) R", "S(0)");
      check_layout (name, op, NULL, IN (a, col), "S(1) R", "S(1)");
      check_layout (name, op, NULL, IN (a, row), "R S(0)", "S(1)");
      check_layout (name, op, NULL, IN (a, one_row), "R S(0)", "R");
      check_layout (name, op, NULL, IN (a, b), "S(0) S(0)", "S(0)");
      check_layout (name, op, NULL, IN (a, b), "S(-1) S(1)", "S(1)");
      check_layout (name, op, NULL, IN (a, b), "S(0) S(1)", "S(0)");
      check_layout (name, op, NULL, IN (a, b), "R S(1)", "S(1)");
      check_layout (name, op, NULL, IN (odd, odd_b), "S(0) S(0)", "S(0)");
      check_layout (name, op, NULL, IN (odd, odd_b), "S(1) R", "S(1)");
      /* a shard wins over a Partial, which is reduce-scattered */
      check_layout (name, op, NULL, IN (a, b), "P(sum) S(0)", "S(0)");
    }

  /* Partial survives where the op is linear in it */
  check_layout ("add", op_add, NULL, IN (a, b), "P(sum) R", "P(sum)");
  check_layout ("add", op_add, NULL, IN (a, row), "R P(sum)", "P(sum)");
  check_layout ("add", op_add, NULL, IN (a, b), "P(sum) P(sum)", "P(sum)");
  check_layout ("sub", op_sub, NULL, IN (a, row), "P(sum) R", "P(sum)");
  check_layout ("sub", op_sub, NULL, IN (a, b), "R P(sum)", "P(sum)");
  check_layout ("sub", op_sub, NULL, IN (a, b), "P(sum) P(sum)", "P(sum)");
  check_layout ("mul", op_mul, NULL, IN (a, b), "P(sum) R", "P(sum)");
  check_layout ("mul", op_mul, NULL, IN (a, row), "R P(sum)", "P(sum)");
  check_layout ("div", op_div, NULL, IN (a, b), "P(sum) R", "P(sum)");
  check_layout ("div", op_div, NULL, IN (a, col), "P(sum) R", "P(sum)");
  /* not linear: reduced first */
  check_layout ("div", op_div, NULL, IN (a, b), "R P(sum)", "R");
  check_layout ("mul", op_mul, NULL, IN (a, b), "P(sum) P(sum)", "R");
}

/* The gradient rule: a Replicate input of a sharded result gets its
 * gradient summed over the mesh dim, so that it equals the single-rank
 * one and stays Replicate */
static void
test_gradient_rule (void)
{
  g_autoptr(HpTensor) x = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (7, 4), 11);
  g_autoptr(HpTensor) w = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4), 12);
  g_autoptr(HpTensor) c = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (7, 1), 13);

  check_layout ("weight times activation", op_mul, NULL, IN (w, x), "R S(0)", "S(0)");
  check_layout ("activation times weight", op_mul, NULL, IN (x, w), "S(1) R", "S(1)");
  check_layout ("activation plus bias", op_add, NULL, IN (x, w), "S(0) R", "S(0)");
  check_layout ("activation over column", op_div, NULL, IN (x, c), "S(1) R", "S(1)");
}

static void
test_pointwise_unary (void)
{
  static const struct { const gchar *name; OpFunc op; } ops[] = {
    { "exp", op_exp }, { "silu", op_silu }, { "gelu", op_gelu }, { "relu", op_relu },
    { "neg", op_neg }, { "scale", op_scale },
  };
  const Params half = { .scalar = -0.5 };
  g_autoptr(HpTensor) x = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 6), 21);
  g_autoptr(HpTensor) x3 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 7, 3), 22);

  for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
    {
      check_layout (ops[o].name, ops[o].op, &half, IN (x), "S(0)", "S(0)");
      check_layout (ops[o].name, ops[o].op, &half, IN (x), "S(1)", "S(1)");
      check_layout (ops[o].name, ops[o].op, &half, IN (x3), "S(1)", "S(1)");
      check_layout (ops[o].name, ops[o].op, &half, IN (x), "R", "R");
    }

  check_layout ("scale", op_scale, &half, IN (x), "P(sum)", "P(sum)");
  check_layout ("neg", op_neg, NULL, IN (x), "P(sum)", "P(sum)");
  check_layout ("exp", op_exp, NULL, IN (x), "P(sum)", "R");
  check_layout ("relu", op_relu, NULL, IN (x), "P(sum)", "R");
}

/* The math ops of one tensor: no Partial passes (none is linear) */
static void
test_pointwise_math (void)
{
  static const struct { const gchar *name; OpFunc op; gboolean positive; gdouble scalar; } ops[] = {
    { "log", op_log, TRUE, 0 }, { "sqrt", op_sqrt, TRUE, 0 }, { "rsqrt", op_rsqrt, TRUE, 0 },
    { "pow_scalar", op_pow_scalar, TRUE, 2.5 }, { "tanh", op_tanh, FALSE, 0 },
    { "sigmoid", op_sigmoid, FALSE, 0 }, { "abs", op_abs, FALSE, 0 },
    { "clamp", op_clamp, FALSE, 0.7 }, { "pow_scalar", op_pow_scalar, FALSE, 3.0 },
  };
  g_autoptr(HpTensor) x = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 6), 61);
  g_autoptr(HpTensor) x3 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 7, 3), 62);
  g_autoptr(HpTensor) pos = uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 6), 0.5, 2.0, 63);
  g_autoptr(HpTensor) pos3 = uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 7, 3), 0.5, 2.0, 64);

  for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
    {
      const Params p = { .scalar = ops[o].scalar };
      HpTensor *x2 = ops[o].positive ? pos : x, *xx3 = ops[o].positive ? pos3 : x3;

      check_layout (ops[o].name, ops[o].op, &p, IN (x2), "S(0)", "S(0)");
      check_layout (ops[o].name, ops[o].op, &p, IN (x2), "S(1)", "S(1)");
      check_layout (ops[o].name, ops[o].op, &p, IN (xx3), "S(1)", "S(1)");
      check_layout (ops[o].name, ops[o].op, &p, IN (x2), "R", "R");
      check_layout (ops[o].name, ops[o].op, &p, IN (x2), "P(sum)", "R");
    }
}

/* An int64 mask of @shape, nonzero (1, or -2) about every third element */
static HpTensor *
mask_of (const gint64 *shape,
         guint         ndim,
         guint64       salt)
{
  gint64 n = 1;
  g_autofree gint64 *data = NULL;

  for (guint k = 0; k < ndim; k++)
    n *= shape[k];
  data = g_new (gint64, MAX (n, 1));
  for (gint64 i = 0; i < n; i++)
    data[i] = (i * 5 + (gint64) salt) % 3 == 0 ? ((i % 2) ? -2 : 1) : 0;
  return hp_test_tensor_ids (data, n, shape, ndim);
}

/* pow with a tensor exponent, the comparisons, where and masked_fill:
 * broadcasting like the binary ops, and no Partial passes */
static void
test_pointwise_broadcast (void)
{
  static const struct { const gchar *name; OpFunc op; } compare[] = {
    { "eq", op_eq }, { "ne", op_ne }, { "lt", op_lt }, { "le", op_le }, { "gt", op_gt }, { "ge", op_ge },
  };
  static const gint64 ids_a[] = { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8 };
  static const gint64 ids_b[] = { 3, 2, 4, 7 };
  const Params value = { .scalar = -2.5 };
  g_autoptr(HpTensor) base = uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 4), 0.5, 2.0, 71);
  g_autoptr(HpTensor) exponent = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 4), 72);
  g_autoptr(HpTensor) row = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4), 73);
  g_autoptr(HpTensor) col = uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 1), 0.5, 2.0, 74);
  g_autoptr(HpTensor) a = ints (HP_TEST_SHAPE (6, 4), 75);
  g_autoptr(HpTensor) b = ints (HP_TEST_SHAPE (6, 4), 76);
  g_autoptr(HpTensor) b_row = ints (HP_TEST_SHAPE (4), 77);
  g_autoptr(HpTensor) ia = hp_test_tensor_ids (ids_a, 12, HP_TEST_SHAPE (3, 4));
  g_autoptr(HpTensor) ib = hp_test_tensor_ids (ids_b, 4, HP_TEST_SHAPE (4));
  g_autoptr(HpTensor) x = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 4), 78);
  g_autoptr(HpTensor) y = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 4), 79);
  g_autoptr(HpTensor) cond = mask_of (HP_TEST_SHAPE (6, 4), 1);
  g_autoptr(HpTensor) cond_col = mask_of (HP_TEST_SHAPE (6, 1), 2);
  g_autoptr(HpTensor) mask_row = mask_of (HP_TEST_SHAPE (1, 4), 3);

  check_layout ("pow", op_pow, NULL, IN (base, exponent), "S(0) S(0)", "S(0)");
  check_layout ("pow", op_pow, NULL, IN (base, exponent), "S(1) R", "S(1)");
  check_layout ("pow", op_pow, NULL, IN (base, row), "S(0) R", "S(0)");
  check_layout ("pow", op_pow, NULL, IN (col, exponent), "R S(1)", "S(1)");
  check_layout ("pow", op_pow, NULL, IN (base, exponent), "R R", "R");
  check_layout ("pow", op_pow, NULL, IN (base, exponent), "P(sum) R", "R");
  check_layout ("pow", op_pow, NULL, IN (base, exponent), "R P(sum)", "R");

  for (guint o = 0; o < G_N_ELEMENTS (compare); o++)
    {
      check_layout (compare[o].name, compare[o].op, NULL, IN (a, b), "S(0) S(0)", "S(0)");
      check_layout (compare[o].name, compare[o].op, NULL, IN (a, b), "S(1) R", "S(1)");
      check_layout (compare[o].name, compare[o].op, NULL, IN (a, b_row), "S(0) R", "S(0)");
      check_layout (compare[o].name, compare[o].op, NULL, IN (a, b_row), "R S(0)", "S(1)");
      check_layout (compare[o].name, compare[o].op, NULL, IN (a, b), "P(sum) R", "R");
      check_layout (compare[o].name, compare[o].op, NULL, IN (ia, ib), "S(0) R", "S(0)");
      check_layout (compare[o].name, compare[o].op, NULL, IN (ia, ib), "R R", "R");
    }

  check_layout ("where", op_where, NULL, IN (cond, x, y), "S(0) S(0) S(0)", "S(0)");
  check_layout ("where", op_where, NULL, IN (cond, x, row), "S(0) R R", "S(0)");
  check_layout ("where", op_where, NULL, IN (cond, x, y), "R S(1) R", "S(1)");
  check_layout ("where", op_where, NULL, IN (cond_col, x, row), "S(0) R R", "S(0)");
  check_layout ("where", op_where, NULL, IN (cond_col, row, x), "R R S(1)", "S(1)");
  check_layout ("where", op_where, NULL, IN (cond, x, y), "R R R", "R");
  check_layout ("where", op_where, NULL, IN (cond, x, y), "R P(sum) P(sum)", "R");

  check_layout ("masked_fill", op_masked_fill, &value, IN (x, cond), "S(0) S(0)", "S(0)");
  check_layout ("masked_fill", op_masked_fill, &value, IN (x, cond), "S(1) R", "S(1)");
  check_layout ("masked_fill", op_masked_fill, &value, IN (x, mask_row), "S(0) R", "S(0)");
  check_layout ("masked_fill", op_masked_fill, &value, IN (x, mask_row), "R S(1)", "S(1)");
  check_layout ("masked_fill", op_masked_fill, &value, IN (x, cond_col), "S(1) R", "S(1)");
  check_layout ("masked_fill", op_masked_fill, &value, IN (x, cond), "R R", "R");
  check_layout ("masked_fill", op_masked_fill, &value, IN (x, cond), "P(sum) R", "R");
}

static void
test_linear (void)
{
  g_autoptr(HpTensor) x = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 3, 8), 31);
  g_autoptr(HpTensor) w = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 8), 32);
  g_autoptr(HpTensor) b = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6), 33);
  g_autoptr(HpTensor) x2 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (7, 5), 34);
  g_autoptr(HpTensor) w2 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 5), 35);
  g_autoptr(HpTensor) b2 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3), 36);

  /* colwise */
  check_layout ("linear", op_linear, NULL, IN (x, w, b), "R S(0) S(0)", "S(-1)");
  check_layout ("linear", op_linear, NULL, IN (x, w, b), "R S(0) R", "S(2)");
  check_layout ("linear", op_linear, NULL, IN (x, w, NULL), "R S(0) -", "S(2)");
  check_layout ("linear", op_linear, NULL, IN (x2, w2, b2), "R S(0) S(0)", "S(1)");
  /* rowwise */
  check_layout ("linear", op_linear, NULL, IN (x, w, b), "S(2) S(1) R", "P(sum)");
  check_layout ("linear", op_linear, NULL, IN (x, w, NULL), "S(-1) S(1) -", "P(sum)");
  check_layout ("linear", op_linear, NULL, IN (x, w, b), "R S(1) R", "P(sum)");
  check_layout ("linear", op_linear, NULL, IN (x, w, b), "S(2) R R", "P(sum)");
  check_layout ("linear", op_linear, NULL, IN (x2, w2, b2), "S(1) S(1) R", "P(sum)");
  /* batch and sequence */
  check_layout ("linear", op_linear, NULL, IN (x, w, b), "S(0) R R", "S(0)");
  check_layout ("linear", op_linear, NULL, IN (x, w, NULL), "S(0) R -", "S(0)");
  check_layout ("linear", op_linear, NULL, IN (x, w, b), "S(1) R R", "S(1)");
  check_layout ("linear", op_linear, NULL, IN (x2, w2, b2), "S(0) R R", "S(0)");
  /* a Partial input through a whole weight; the bias counted once */
  check_layout ("linear", op_linear, NULL, IN (x, w, b), "P(sum) R R", "P(sum)");
  check_layout ("linear", op_linear, NULL, IN (x, w, b), "R R R", "R");
}

static void
test_matmul (void)
{
  g_autoptr(HpTensor) a = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 5), 41);
  g_autoptr(HpTensor) b = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 4), 42);
  g_autoptr(HpTensor) a3 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 6, 5), 43);
  g_autoptr(HpTensor) b3 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 5, 4), 44);
  g_autoptr(HpTensor) v = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5), 45);
  g_autoptr(HpTensor) u = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5), 46);

  check_layout ("matmul", op_matmul, NULL, IN (a, b), "S(0) R", "S(0)");
  check_layout ("matmul", op_matmul, NULL, IN (a, b), "R S(1)", "S(1)");
  check_layout ("matmul", op_matmul, NULL, IN (a, b), "S(1) S(0)", "P(sum)");
  check_layout ("matmul", op_matmul, NULL, IN (a, b), "S(1) R", "P(sum)");
  check_layout ("matmul", op_matmul, NULL, IN (a, b), "R S(0)", "P(sum)");
  check_layout ("matmul", op_matmul, NULL, IN (a, b), "S(0) S(1)", "S(0)");
  check_layout ("matmul", op_matmul, NULL, IN (a, b), "R R", "R");
  /* batched */
  check_layout ("matmul", op_matmul, NULL, IN (a3, b), "S(0) R", "S(0)");
  check_layout ("matmul", op_matmul, NULL, IN (a3, b), "S(1) R", "S(1)");
  check_layout ("matmul", op_matmul, NULL, IN (a3, b), "S(2) S(0)", "P(sum)");
  check_layout ("matmul", op_matmul, NULL, IN (a3, b3), "S(0) S(0)", "S(0)");
  check_layout ("matmul", op_matmul, NULL, IN (a3, b3), "S(0) R", "S(0)");
  check_layout ("matmul", op_matmul, NULL, IN (a3, b3), "R S(2)", "S(2)");
  /* 1-d operands through Replicate */
  check_layout ("matmul", op_matmul, NULL, IN (v, b), "S(0) R", "R");
  check_layout ("matmul", op_matmul, NULL, IN (a, v), "S(0) S(0)", "R");
  check_layout ("matmul", op_matmul, NULL, IN (v, u), "S(0) S(0)", "R");
}

static void
test_normalize (void)
{
  const Params d0 = { .dims = { 0 } }, d1 = { .dims = { 1 } }, dlast = { .dims = { -1 } };
  const Params eps = { .scalar = 1e-6 };
  g_autoptr(HpTensor) x = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 5), 51);
  g_autoptr(HpTensor) x8 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 8), 52);
  g_autoptr(HpTensor) x3 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 5, 8), 53);
  g_autoptr(HpTensor) w = uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (8), 0.5, 1.5, 54);

  for (guint o = 0; o < 2; o++)
    {
      const gchar *name = o == 0 ? "softmax" : "log_softmax";
      OpFunc op = o == 0 ? op_softmax : op_log_softmax;

      check_layout (name, op, &d0, IN (x), "S(0)", "R");
      check_layout (name, op, &d1, IN (x), "S(0)", "S(0)");
      check_layout (name, op, &dlast, IN (x), "S(1)", "R");
      check_layout (name, op, &d0, IN (x), "S(1)", "S(1)");
      check_layout (name, op, &dlast, IN (x3), "S(1)", "S(1)");
      check_layout (name, op, &d1, IN (x), "P(sum)", "R");
    }

  check_layout ("rms_norm", op_rms_norm, &eps, IN (x8, w), "S(0) R", "S(0)");
  check_layout ("rms_norm", op_rms_norm, &eps, IN (x8, w), "S(1) R", "R");
  check_layout ("rms_norm", op_rms_norm, &eps, IN (x8, w), "S(1) S(0)", "R");
  check_layout ("rms_norm", op_rms_norm, &eps, IN (x8, NULL), "S(0) -", "S(0)");
  check_layout ("rms_norm", op_rms_norm, &eps, IN (x3, w), "S(1) R", "S(1)");
  check_layout ("rms_norm", op_rms_norm, &eps, IN (x3, w), "P(sum) R", "R");
}

static void
test_reduce (void)
{
  g_autoptr(HpTensor) x = ints (HP_TEST_SHAPE (7, 3), 61);
  g_autoptr(HpTensor) y = ints (HP_TEST_SHAPE (5, 4, 3), 62);
  g_autoptr(HpTensor) r = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 7), 63);

  for (guint o = 0; o < 2; o++)
    {
      const gchar *name = o == 0 ? "sum" : "mean";
      OpFunc op = o == 0 ? op_sum : op_mean;

      for (gint keep = 0; keep < 2; keep++)
        {
          const Params d0 = { .dims = { 0 }, .flag = keep }, d1 = { .dims = { 1 }, .flag = keep };
          const Params dlast = { .dims = { -1 }, .flag = keep }, d2 = { .dims = { 2 }, .flag = keep };

          /* over the sharded dim: partial sums, exact means */
          check_layout (name, op, &d0, IN (x), "S(0)", "P(sum)");
          check_layout (name, op, &dlast, IN (r), "S(1)", "P(sum)");
          check_layout (name, op, &d1, IN (y), "S(1)", "P(sum)");
          /* over another dim: the shard stays, its dim shifted */
          check_layout (name, op, &d1, IN (x), "S(0)", "S(0)");
          check_layout (name, op, &d0, IN (y), "S(2)", keep ? "S(2)" : "S(1)");
          check_layout (name, op, &d2, IN (y), "S(0)", "S(0)");
          check_layout (name, op, &d1, IN (y), "S(2)", keep ? "S(2)" : "S(1)");
          /* Partial stays Partial */
          check_layout (name, op, &d0, IN (x), "P(sum)", "P(sum)");
        }
    }

  check_layout ("sum_all", op_sum_all, NULL, IN (x), "S(0)", "P(sum)");
  check_layout ("sum_all", op_sum_all, NULL, IN (y), "S(1)", "P(sum)");
  check_layout ("sum_all", op_sum_all, NULL, IN (x), "P(sum)", "P(sum)");
  check_layout ("sum_all", op_sum_all, NULL, IN (x), "R", "R");
  check_layout ("mean_all", op_mean_all, NULL, IN (x), "S(0)", "P(sum)");
  check_layout ("mean_all", op_mean_all, NULL, IN (y), "S(2)", "P(sum)");
  check_layout ("mean_all", op_mean_all, NULL, IN (r), "P(sum)", "P(sum)");
}

static void
test_shape (void)
{
  const Params t01 = { .dims = { 0, 1 } }, t02 = { .dims = { 0, 2 } }, tneg = { .dims = { -1, -2 } };
  const Params perm = { .dims = { 2, 0, 1 }, .n_dims = 3 };
  const Params narrow1 = { .dims = { 1 }, .sizes = { 1, 3 } };
  const Params narrow0 = { .dims = { 0 }, .sizes = { 2, 3 } };
  const Params cat1 = { .dims = { 1 } }, cat0 = { .dims = { 0 } };
  const Params flat = { .sizes = { 4, 6 }, .n_sizes = 2 };
  const Params split = { .sizes = { 2, 3, 4 }, .n_sizes = 3 };
  const Params heads = { .sizes = { 5, 2, 4 }, .n_sizes = 3 };
  g_autoptr(HpTensor) x = ints (HP_TEST_SHAPE (6, 4), 71);
  g_autoptr(HpTensor) y = ints (HP_TEST_SHAPE (5, 3, 4), 72);
  g_autoptr(HpTensor) z = ints (HP_TEST_SHAPE (6, 5), 73);
  g_autoptr(HpTensor) c1 = ints (HP_TEST_SHAPE (6, 2), 74);
  g_autoptr(HpTensor) c2 = ints (HP_TEST_SHAPE (6, 3), 75);
  g_autoptr(HpTensor) c3 = ints (HP_TEST_SHAPE (3, 4), 76);
  g_autoptr(HpTensor) h = ints (HP_TEST_SHAPE (5, 8), 77);

  check_layout ("transpose", op_transpose, &t01, IN (x), "S(0)", "S(1)");
  check_layout ("transpose", op_transpose, &t01, IN (x), "S(1)", "S(0)");
  check_layout ("transpose", op_transpose, &t02, IN (y), "S(2)", "S(0)");
  check_layout ("transpose", op_transpose, &t02, IN (y), "S(1)", "S(1)");
  check_layout ("transpose", op_transpose, &tneg, IN (y), "S(1)", "S(2)");
  check_layout ("transpose", op_transpose, &t01, IN (x), "P(sum)", "P(sum)");
  check_layout ("permute", op_permute, &perm, IN (y), "S(0)", "S(1)");
  check_layout ("permute", op_permute, &perm, IN (y), "S(2)", "S(0)");
  check_layout ("permute", op_permute, &perm, IN (y), "P(sum)", "P(sum)");

  check_layout ("narrow", op_narrow, &narrow1, IN (z), "S(0)", "S(0)");
  check_layout ("narrow", op_narrow, &narrow0, IN (z), "S(1)", "S(1)");
  check_layout ("narrow", op_narrow, &narrow0, IN (z), "S(0)", "R");

  check_layout ("cat", op_cat, &cat1, IN (c1, c2), "S(0) S(0)", "S(0)");
  check_layout ("cat", op_cat, &cat1, IN (c1, c2, c1), "S(0) R S(0)", "S(0)");
  check_layout ("cat", op_cat, &cat0, IN (x, c3), "S(1) S(1)", "S(1)");
  check_layout ("cat", op_cat, &cat0, IN (x, c3), "S(0) S(0)", "R");

  /* reshape goes through Replicate for now: values only */
  check_layout ("reshape", op_reshape, &flat, IN (x), "S(0)", NULL);
  check_layout ("reshape", op_reshape, &split, IN (x), "S(1)", NULL);
  check_layout ("reshape", op_reshape, &heads, IN (h), "S(1)", NULL);
}

/* Ids in [0, @bound), repeating, with a shift by @salt */
static HpTensor *
positions (const gint64 *shape,
           guint         ndim,
           gint64        bound,
           guint64       salt)
{
  gint64 n = 1;
  g_autofree gint64 *data = NULL;

  for (guint k = 0; k < ndim; k++)
    n *= shape[k];
  data = g_new (gint64, MAX (n, 1));
  for (gint64 i = 0; i < n; i++)
    data[i] = (i * 7 + (gint64) salt) % bound;
  return hp_test_tensor_ids (data, n, shape, ndim);
}

static void
test_index (void)
{
  const Params d0 = { .dims = { 0 } }, d1 = { .dims = { 1 } }, dlast = { .dims = { -1 } };
  g_autoptr(HpTensor) x = ints (HP_TEST_SHAPE (6, 4), 181);
  g_autoptr(HpTensor) y = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 3, 4), 182);
  g_autoptr(HpTensor) cols = positions (HP_TEST_SHAPE (6, 4), 4, 1);
  g_autoptr(HpTensor) rows = positions (HP_TEST_SHAPE (6, 4), 6, 2);
  g_autoptr(HpTensor) short_cols = positions (HP_TEST_SHAPE (3, 4), 4, 3);
  g_autoptr(HpTensor) long_cols = positions (HP_TEST_SHAPE (6, 7), 4, 7);
  g_autoptr(HpTensor) y_index = positions (HP_TEST_SHAPE (5, 2, 4), 3, 4);
  g_autoptr(HpTensor) picks = positions (HP_TEST_SHAPE (7), 4, 5);
  g_autoptr(HpTensor) row_picks = positions (HP_TEST_SHAPE (9), 6, 6);

  /* gather: the shards of the other dims pass, self and index alike */
  check_layout ("gather", op_gather, &d1, IN (x, cols), "S(0) S(0)", "S(0)");
  check_layout ("gather", op_gather, &dlast, IN (x, cols), "S(0) R", "S(0)");
  check_layout ("gather", op_gather, &d1, IN (x, long_cols), "S(0) S(0)", "S(0)");
  check_layout ("gather", op_gather, &d0, IN (x, rows), "S(1) S(1)", "S(1)");
  check_layout ("gather", op_gather, &d1, IN (y, y_index), "S(0) S(0)", "S(0)");
  check_layout ("gather", op_gather, &d1, IN (y, y_index), "S(2) S(2)", "S(2)");
  /* the gathered dim whole */
  check_layout ("gather", op_gather, &d0, IN (x, rows), "S(0) S(0)", "R");
  check_layout ("gather", op_gather, &d1, IN (x, cols), "S(1) R", "R");
  /* an index shorter than self where self is sharded */
  check_layout ("gather", op_gather, &d1, IN (x, short_cols), "S(0) S(0)", "R");
  check_layout ("gather", op_gather, &d1, IN (x, short_cols), "R S(0)", "R");
  check_layout ("gather", op_gather, &d1, IN (x, cols), "P(sum) R", "P(sum)");

  /* index_select: self's other shards pass, the index whole */
  check_layout ("index_select", op_index_select, &d1, IN (x, picks), "S(0) R", "S(0)");
  check_layout ("index_select", op_index_select, &d1, IN (x, picks), "S(0) S(0)", "S(0)");
  check_layout ("index_select", op_index_select, &d0, IN (x, row_picks), "S(1) R", "S(1)");
  check_layout ("index_select", op_index_select, &d0, IN (x, row_picks), "S(0) R", "R");
  check_layout ("index_select", op_index_select, &dlast, IN (y, picks), "S(1) R", "S(1)");
  check_layout ("index_select", op_index_select, &d1, IN (x, picks), "P(sum) R", "P(sum)");
}

static void
test_layout (void)
{
  const Params grow = { .sizes = { 2, 6, 5 }, .n_sizes = 3 };
  const Params keep = { .sizes = { 3, -1, 4 }, .n_sizes = 3 };
  const Params same = { .sizes = { 6, 4 }, .n_sizes = 2 };
  const Params tile = { .sizes = { 1, 2 }, .n_sizes = 2 };
  const Params tile_lead = { .sizes = { 2, 1, 3 }, .n_sizes = 3 };
  const Params tile_rows = { .sizes = { 3, 1 }, .n_sizes = 2 };
  const Params diag0 = { .sizes = { 0 } }, diag_up = { .sizes = { 2 } }, diag_down = { .sizes = { -1 } };
  g_autoptr(HpTensor) col = ints (HP_TEST_SHAPE (6, 1), 191);
  g_autoptr(HpTensor) x = ints (HP_TEST_SHAPE (6, 4), 192);
  g_autoptr(HpTensor) m = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 5, 5), 193);
  g_autoptr(HpTensor) sq = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 6), 194);

  /* expand: a dim that keeps its size keeps its shard, shifted by the
   * new leading dims; an expanded dim is whole */
  check_layout ("expand", op_expand, &grow, IN (col), "S(0)", "S(1)");
  check_layout ("expand", op_expand, &grow, IN (col), "S(1)", "R");
  check_layout ("expand", op_expand, &keep, IN (x), "S(0)", "S(1)");
  check_layout ("expand", op_expand, &keep, IN (x), "S(1)", "S(2)");
  check_layout ("expand", op_expand, &same, IN (x), "S(1)", "S(1)");
  check_layout ("expand", op_expand, &grow, IN (col), "P(sum)", "P(sum)");

  /* repeat: a dim repeated once keeps its shard */
  check_layout ("repeat", op_repeat, &tile, IN (x), "S(0)", "S(0)");
  check_layout ("repeat", op_repeat, &tile, IN (x), "S(1)", "R");
  check_layout ("repeat", op_repeat, &tile_lead, IN (x), "S(0)", "S(1)");
  check_layout ("repeat", op_repeat, &tile_lead, IN (x), "S(1)", "R");
  check_layout ("repeat", op_repeat, &tile_rows, IN (x), "S(1)", "S(1)");
  check_layout ("repeat", op_repeat, &tile, IN (x), "P(sum)", "P(sum)");

  /* tril, triu: the matrices whole, the batch dims' shards pass */
  for (guint o = 0; o < 2; o++)
    {
      const gchar *name = o == 0 ? "tril" : "triu";
      OpFunc op = o == 0 ? op_tril : op_triu;

      check_layout (name, op, &diag0, IN (m), "S(0)", "S(0)");
      check_layout (name, op, &diag_up, IN (m), "S(0)", "S(0)");
      check_layout (name, op, &diag_down, IN (m), "S(1)", "R");
      check_layout (name, op, &diag0, IN (m), "S(2)", "R");
      check_layout (name, op, &diag_down, IN (sq), "S(0)", "R");
      check_layout (name, op, &diag0, IN (m), "P(sum)", "P(sum)");
    }
}

static void
test_to_dtype (void)
{
  const Params f32 = { .sizes = { HP_DTYPE_FLOAT32 } }, f64 = { .sizes = { HP_DTYPE_FLOAT64 } };
  const Params i64 = { .sizes = { HP_DTYPE_INT64 } };
  g_autoptr(HpTensor) x = ints (HP_TEST_SHAPE (6, 4), 201);
  g_autoptr(HpTensor) r = uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 3), -20.0, 20.0, 202);
  g_autoptr(HpTensor) ids = positions (HP_TEST_SHAPE (7, 3), 11, 203);

  check_layout ("to_dtype f32", op_to_dtype, &f32, IN (x), "S(0)", "S(0)");
  check_layout ("to_dtype f32", op_to_dtype, &f32, IN (x), "S(1)", "S(1)");
  check_layout ("to_dtype f64", op_to_dtype, &f64, IN (x), "R", "R");
  /* integer partial shares add up exactly in float32 too */
  check_layout ("to_dtype f32", op_to_dtype, &f32, IN (x), "P(sum)", "P(sum)");
  check_layout ("to_dtype i64", op_to_dtype, &i64, IN (r), "S(0)", "S(0)");
  check_layout ("to_dtype i64", op_to_dtype, &i64, IN (r), "S(1)", "S(1)");
  /* truncation is not linear: the partials are added first */
  check_layout ("to_dtype i64", op_to_dtype, &i64, IN (x), "P(sum)", "R");
  check_layout ("to_dtype from i64", op_to_dtype, &f64, IN (ids), "S(0)", "S(0)");
  check_layout ("to_dtype from i64", op_to_dtype, &f32, IN (ids), "S(1)", "S(1)");
  check_layout ("to_dtype i64 copy", op_to_dtype, &i64, IN (ids), "S(0)", "S(0)");
}

static void
test_embedding (void)
{
  static const gint64 ids_data[] = { 0, 9, 3, 3, 7, 1, 2, 4, 5, 6, 8, 9, 0, 0, 5 };
  g_autoptr(HpTensor) ids = hp_test_tensor_ids (ids_data, 15, HP_TEST_SHAPE (3, 5));
  g_autoptr(HpTensor) w = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (10, 4), 81);
  g_autoptr(HpTensor) w7 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (10, 7), 82);

  /* vocabulary-parallel: every rank's rows are looked up, some twice */
  check_layout ("embedding", op_embedding, NULL, IN (w, ids), "S(0) R", "P(sum)");
  check_layout ("embedding", op_embedding, NULL, IN (w, ids), "S(0) S(0)", "P(sum)");
  check_layout ("embedding", op_embedding, NULL, IN (w, ids), "S(1) R", "S(-1)");
  check_layout ("embedding", op_embedding, NULL, IN (w7, ids), "S(1) R", "S(2)");
  check_layout ("embedding", op_embedding, NULL, IN (w, ids), "R S(0)", "S(0)");
  check_layout ("embedding", op_embedding, NULL, IN (w, ids), "R S(1)", "S(1)");
  check_layout ("embedding", op_embedding, NULL, IN (w, ids), "R R", "R");
}

static void
test_rotary (void)
{
  g_autoptr(HpTensor) x = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 6, 4, 8), 91);
  g_autoptr(HpTensor) cos_table = uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 4), -1, 1, 92);
  g_autoptr(HpTensor) sin_table = uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 4), -1, 1, 93);
  g_autoptr(HpTensor) x5 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 3, 6), 94);
  g_autoptr(HpTensor) cos5 = uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 3), -1, 1, 95);
  g_autoptr(HpTensor) sin5 = uniform (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 3), -1, 1, 96);

  check_layout ("apply_rotary", op_rotary, NULL, IN (x, cos_table, sin_table), "S(1) R R", "S(1)");
  check_layout ("apply_rotary", op_rotary, NULL, IN (x, cos_table, sin_table), "S(2) R R", "S(2)");
  check_layout ("apply_rotary", op_rotary, NULL, IN (x, cos_table, sin_table), "S(0) R R", "S(0)");
  check_layout ("apply_rotary", op_rotary, NULL, IN (x, cos_table, sin_table), "S(1) S(0) R", "S(1)");
  check_layout ("apply_rotary", op_rotary, NULL, IN (x, cos_table, sin_table), "S(3) R R", "R");
  check_layout ("apply_rotary", op_rotary, NULL, IN (x5, cos5, sin5), "S(0) R R", "S(0)");
  check_layout ("apply_rotary", op_rotary, NULL, IN (x5, cos5, sin5), "S(1) R R", "S(1)");
}

/* The heads rule needs the key/value heads of each rank to serve its
 * query heads: for grouped-query attention on a mesh dim of size s, both
 * head counts (at that level) must divide by s */
static const gchar *
gqa_heads (gint64 q_heads,
           gint64 kv_heads,
           gint   s)
{
  return q_heads % s == 0 && kv_heads % s == 0 ? "S(1)" : "R";
}

static void
test_attention (void)
{
  const Params causal = { .flag = TRUE }, plain = { .flag = FALSE }, scaled = { .scalar = 0.3 };
  g_autoptr(HpTensor) q = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4, 5, 3), 101);
  g_autoptr(HpTensor) k = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4, 5, 3), 102);
  g_autoptr(HpTensor) v = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4, 5, 3), 103);
  g_autoptr(HpTensor) k2 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 2, 5, 3), 104);
  g_autoptr(HpTensor) v2 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 2, 5, 3), 105);
  g_autoptr(HpTensor) mask = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 5), 106);
  g_autoptr(HpTensor) batch_mask = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 1, 5, 5), 107);
  g_autoptr(HpTensor) k7 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4, 7, 3), 108);
  g_autoptr(HpTensor) v7 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4, 7, 2), 109);

  for (guint c = 0; c < 2; c++)
    {
      const Params *p = c == 0 ? &plain : &causal;

      check_layout ("sdpa", op_sdpa, p, IN (q, k, v, NULL), "S(1) S(1) S(1) -", "S(1)");
      check_layout ("sdpa", op_sdpa, p, IN (q, k, v, NULL), "S(0) S(0) S(0) -", "S(0)");
      check_layout ("sdpa", op_sdpa, p, IN (q, k, v, NULL), "S(1) R R -", "S(1)");
      check_layout ("sdpa", op_sdpa, p, IN (q, k, v, NULL), "R R R -", "R");
      check_layout ("sdpa", op_sdpa, p, IN (q, k7, v7, NULL), "S(1) S(1) S(1) -", "S(1)");
      check_layout ("sdpa", op_sdpa, p, IN (q, k7, v7, NULL), "S(0) R S(0) -", "S(0)");
    }
  check_layout ("sdpa", op_sdpa, &scaled, IN (q, k, v, mask), "S(1) S(1) S(1) R", "S(1)");
  check_layout ("sdpa", op_sdpa, &plain, IN (q, k, v, mask), "S(0) S(0) S(0) R", "S(0)");
  check_layout ("sdpa", op_sdpa, &plain, IN (q, k, v, batch_mask), "S(0) S(0) S(0) R", "S(0)");
  check_layout ("sdpa", op_sdpa, &plain, IN (q, k, v, batch_mask), "S(1) S(1) S(1) S(0)", "S(1)");

  /* grouped-query attention: the layouts depend on the mesh sizes */
  for (guint c = 0; c < 2; c++)
    {
      const Params *p = c == 0 ? &plain : &causal;
      const Mesh *one = &meshes[0];

      check (one, "sdpa gqa", op_sdpa, p, IN (q, k2, v2, NULL), "S(1) S(1) S(1) -",
             gqa_heads (4, 2, one->shape[0]));
      check (one, "sdpa gqa", op_sdpa, p, IN (q, k2, v2, NULL), "S(0) S(0) S(0) -", "S(0)");
      if (!p->flag)
        check (one, "sdpa gqa", op_sdpa, p, IN (q, k2, v2, mask), "S(1) R S(1) R",
               gqa_heads (4, 2, one->shape[0]));
      for (guint m = 1; m < n_meshes; m++)
        {
          const Mesh *two = &meshes[m];
          gint s0 = two->shape[0], s1 = two->shape[1];
          g_autofree gchar *heads_dp = g_strdup_printf ("%s,R", gqa_heads (4, 2, s0));
          g_autofree gchar *heads_tp = g_strdup_printf ("R,%s", gqa_heads (4, 2, s1));
          /* heads on both mesh dims: tp splits what dp left */
          gboolean both = 4 % s0 == 0 && 2 % s0 == 0 && (4 / s0) % s1 == 0 && (2 / s0) % s1 == 0;
          g_autofree gchar *heads_both = g_strdup_printf ("%s,%s", gqa_heads (4, 2, s0),
                                                          both ? "S(1)" : "R");
          g_autofree gchar *batch_heads = g_strdup_printf ("S(0),%s", gqa_heads (4, 2, s1));

          check (two, "sdpa gqa", op_sdpa, p, IN (q, k2, v2, NULL), "S(1),R S(1),R S(1),R -",
                 heads_dp);
          check (two, "sdpa gqa", op_sdpa, p, IN (q, k2, v2, NULL), "R,S(1) R,S(1) R,S(1) -",
                 heads_tp);
          check (two, "sdpa gqa", op_sdpa, p, IN (q, k2, v2, NULL), "S(1),S(1) S(1),S(1) S(1),S(1) -",
                 heads_both);
          check (two, "sdpa gqa", op_sdpa, p, IN (q, k2, v2, NULL), "S(0),S(1) S(0),S(1) S(0),S(1) -",
                 batch_heads);
        }
    }
}

static void
test_cross_entropy (void)
{
  static const gint64 targets_data[] = { 0, 4, 2, -100, 1, 3 };
  g_autoptr(HpTensor) targets = hp_test_tensor_ids (targets_data, 6, HP_TEST_SHAPE (6));
  g_autoptr(HpTensor) logits = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 5), 111);

  /* through Replicate for now: values only */
  check_layout ("cross_entropy", op_cross_entropy, NULL, IN (logits, targets), "S(0) R", NULL);
  check_layout ("cross_entropy", op_cross_entropy, NULL, IN (logits, targets), "S(1) R", NULL);
  check_layout ("cross_entropy", op_cross_entropy, NULL, IN (logits, targets), "S(0) S(0)", NULL);
  check_layout ("cross_entropy", op_cross_entropy, NULL, IN (logits, targets), "P(sum) R", NULL);
}

/* Two layers of a tensor-parallel MLP: colwise, gelu, rowwise */
static void
check_mlp (HpDType dtype)
{
  g_autoptr(HpTensor) x = randn (dtype, HP_TEST_SHAPE (8, 16), 121);
  g_autoptr(HpTensor) w1 = uniform (dtype, HP_TEST_SHAPE (32, 16), -0.25, 0.25, 122);
  g_autoptr(HpTensor) b1 = uniform (dtype, HP_TEST_SHAPE (32), -0.25, 0.25, 123);
  g_autoptr(HpTensor) w2 = uniform (dtype, HP_TEST_SHAPE (16, 32), -0.25, 0.25, 124);
  g_autoptr(HpTensor) b2 = uniform (dtype, HP_TEST_SHAPE (16), -0.25, 0.25, 125);
  g_autoptr(HpTensor) wl = randn (dtype, HP_TEST_SHAPE (8, 16), 126);

  check (&meshes[0], "mlp", op_mlp, NULL, IN (x, w1, b1, w2, b2), "R S(0) S(0) S(1) R", "P(sum)");
  check (&meshes[0], "mlp loss", op_mlp, NULL, IN (x, w1, b1, w2, b2, wl),
         "R S(0) S(0) S(1) R R", "P(sum)");
  check (&meshes[0], "mlp data-parallel", op_mlp, NULL, IN (x, w1, b1, w2, b2, wl),
         "S(0) R R R R S(0)", "P(sum)");

  for (guint m = 1; m < n_meshes; m++)
    {
      check (&meshes[m], "mlp", op_mlp, NULL, IN (x, w1, b1, w2, b2),
             "S(0),R R,S(0) R,S(0) R,S(1) R,R", "S(0),P(sum)");
      check (&meshes[m], "mlp loss", op_mlp, NULL, IN (x, w1, b1, w2, b2, wl),
             "S(0),R R,S(0) R,S(0) R,S(1) R,R R,R", "P(sum),P(sum)");
      check (&meshes[m], "mlp loss", op_mlp, NULL, IN (x, w1, b1, w2, b2, wl),
             "S(0),R R,S(0) R,S(0) R,S(1) R,R S(0),R", "P(sum),P(sum)");
    }
}

static void
test_mlp (void)
{
  check_mlp (HP_DTYPE_FLOAT64);
  check_mlp (HP_DTYPE_FLOAT32);
}

/* A few ops in float32 as well */
static void
test_float32 (void)
{
  const Params d0 = { .dims = { 0 } };
  g_autoptr(HpTensor) x = randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (5, 3, 8), 131);
  g_autoptr(HpTensor) w = randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (6, 8), 132);
  g_autoptr(HpTensor) b = randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (6), 133);
  g_autoptr(HpTensor) y = randn (HP_DTYPE_FLOAT32, HP_TEST_SHAPE (7, 3), 134);

  check_layout ("linear f32", op_linear, NULL, IN (x, w, b), "S(2) S(1) R", "P(sum)");
  check_layout ("linear f32", op_linear, NULL, IN (x, w, b), "R S(0) S(0)", "S(2)");
  check_layout ("add f32", op_add, NULL, IN (y, y), "P(sum) R", "P(sum)");
  check_layout ("mean f32", op_mean, &d0, IN (y), "S(0)", "P(sum)");
  check_layout ("softmax f32", op_softmax, &d0, IN (y), "S(0)", "R");
}

/* Different rules on the two mesh dims of one call */
static void
test_two_dims (void)
{
  static const gint64 ids_data[] = { 0, 9, 3, 3, 7, 1, 2, 4, 5, 6, 8, 9 };
  const Params d1 = { .dims = { 1 } }, last = { .dims = { -1 } };
  g_autoptr(HpTensor) a = ints (HP_TEST_SHAPE (6, 5), 171);
  g_autoptr(HpTensor) b = small_ints (HP_TEST_SHAPE (6, 5), 172, TRUE);
  g_autoptr(HpTensor) m = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 4), 173);
  g_autoptr(HpTensor) x = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 3, 8), 174);
  g_autoptr(HpTensor) w = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 8), 175);
  g_autoptr(HpTensor) bias = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6), 176);
  g_autoptr(HpTensor) table = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (10, 4), 177);
  g_autoptr(HpTensor) ids = hp_test_tensor_ids (ids_data, 12, HP_TEST_SHAPE (4, 3));

  for (guint i = 1; i < n_meshes; i++)
    {
      const Mesh *two = &meshes[i];

      check (two, "add", op_add, NULL, IN (a, b), "S(0),S(1) R,R", "S(0),S(1)");
      check (two, "mul", op_mul, NULL, IN (a, b), "S(0),P(sum) R,R", "S(0),P(sum)");
      check (two, "sub", op_sub, NULL, IN (a, b), "P(sum),R R,S(1)", "P(sum),S(1)");
      check (two, "matmul", op_matmul, NULL, IN (a, m), "S(0),S(1) R,S(0)", "S(0),P(sum)");
      check (two, "matmul", op_matmul, NULL, IN (a, m), "S(0),R R,S(1)", "S(0),S(1)");
      check (two, "linear", op_linear, NULL, IN (x, w, bias), "S(0),R R,S(0) R,S(0)", "S(0),S(2)");
      check (two, "linear", op_linear, NULL, IN (x, w, bias), "S(1),S(2) R,S(1) R,R", "S(1),P(sum)");
      check (two, "sum", op_sum, &d1, IN (a), "S(0),S(1)", "S(0),P(sum)");
      check (two, "mean", op_mean, &d1, IN (a), "S(1),S(1)", "P(sum),P(sum)");
      check (two, "softmax", op_softmax, &last, IN (a), "S(0),S(1)", "S(0),R");
      check (two, "embedding", op_embedding, NULL, IN (table, ids), "R,S(0) S(0),R", "S(0),P(sum)");
      check (two, "embedding", op_embedding, NULL, IN (table, ids), "S(1),S(0) R,R", "S(2),P(sum)");
    }
}

static HpTensor *
dtensor_on (HpDeviceMesh *mesh,
            HpTensor     *global,
            const gchar  *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) placements = hp_placements_new_from_string (text, &error);
  HpDTensor *dt;

  g_assert_no_error (error);
  dt = hp_dtensor_distribute (global, mesh, placements, -1, &error);
  g_assert_no_error (error);
  return HP_TENSOR (dt);
}

static void
test_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  const gchar *tp_name[] = { "tp", NULL }, *two_names[] = { "dp", "tp", NULL };
  HpDeviceMesh *mesh = meshes[0].mesh;
  g_autoptr(HpDeviceMesh) same = hp_device_mesh_new ((gint[]) { world_size }, 1, NULL, &error);
  g_autoptr(HpDeviceMesh) named = hp_device_mesh_new ((gint[]) { world_size }, 1, tp_name, &error);
  g_autoptr(HpDeviceMesh) two = hp_device_mesh_new ((gint[]) { 1, world_size }, 2, two_names, &error);
  g_autoptr(HpTensor) x = ints (HP_TEST_SHAPE (6, 4), 141);
  g_autoptr(HpTensor) a = dtensor_on (mesh, x, "S(0)");
  g_autoptr(HpTensor) b = dtensor_on (same, x, "R");
  g_autoptr(HpTensor) c = dtensor_on (named, x, "R");
  g_autoptr(HpTensor) d = dtensor_on (two, x, "R,S(0)");
  g_autoptr(HpTensor) ok = NULL;
  g_autoptr(HpTensor) plain = hp_tensor_new_ones (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 4));
  g_autoptr(HpTensor) scalar = hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, 3.0);
  gboolean holds_last = hp_get_world_rank () == world_size - 1;

  g_assert_no_error (error);

  /* an equal mesh made again is the same mesh */
  ok = hp_tensor_add (a, b, &error);
  g_assert_no_error (error);
  assert_placements ("add on equal meshes", "output", ok, "S(0)", FALSE);
  g_clear_object (&ok);

  /* different meshes */
  hp_test_assert_error (hp_tensor_add (a, c, &error), &error, HP_ERROR_MESH,
                        "add: the inputs live on different device meshes");
  hp_test_assert_error (hp_tensor_matmul (c, a, &error), &error, HP_ERROR_MESH,
                        "matmul: the inputs live on different device meshes");
  hp_test_assert_error (hp_tensor_mul (a, d, &error), &error, HP_ERROR_MESH,
                        "mul: the inputs live on different device meshes");
  hp_test_assert_error (hp_tensor_linear (d, a, NULL, &error), &error, HP_ERROR_MESH,
                        "linear: the inputs live on different device meshes");

  /* a plain tensor joins only with one element */
  hp_test_assert_error (hp_tensor_add (a, plain, &error), &error, HP_ERROR_PLACEMENT,
                        "add: mixed HpTensor and HpDTensor (input 1 is a plain float64 [6, 4])");
  hp_test_assert_error (hp_tensor_sub (plain, a, &error), &error, HP_ERROR_PLACEMENT,
                        "sub: mixed HpTensor and HpDTensor (input 0 is a plain");
  hp_test_assert_error (hp_tensor_linear (a, plain, NULL, &error), &error, HP_ERROR_PLACEMENT,
                        "mixed HpTensor and HpDTensor");
  ok = hp_tensor_mul (a, scalar, &error);
  g_assert_no_error (error);
  assert_placements ("mul by a plain scalar", "output", ok, "S(0)", FALSE);
  g_clear_object (&ok);

  /* global shapes that do not fit, although some ranks' shards would:
   * every rank fails, nobody hangs */
  {
    g_autoptr(HpTensor) g53 = ints (HP_TEST_SHAPE (5, 3), 142);
    g_autoptr(HpTensor) g43 = ints (HP_TEST_SHAPE (4, 3), 143);
    g_autoptr(HpTensor) g46 = ints (HP_TEST_SHAPE (4, 6), 144);
    g_autoptr(HpTensor) g54 = ints (HP_TEST_SHAPE (5, 4), 145);
    g_autoptr(HpTensor) g36 = ints (HP_TEST_SHAPE (3, 6), 146);
    g_autoptr(HpTensor) g45 = ints (HP_TEST_SHAPE (4, 5), 147);
    g_autoptr(HpTensor) g35 = ints (HP_TEST_SHAPE (3, 5), 148);
    g_autoptr(HpTensor) g3 = ints (HP_TEST_SHAPE (3), 149);
    g_autoptr(HpTensor) g62 = ints (HP_TEST_SHAPE (6, 2), 150);
    g_autoptr(HpTensor) x_rot = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 6, 4, 8), 151);
    g_autoptr(HpTensor) t54 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (5, 4), 152);
    g_autoptr(HpTensor) q = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 4, 5, 3), 153);
    g_autoptr(HpTensor) kv = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 4, 5, 3), 154);
    g_autoptr(HpTensor) x68 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 8), 155);
    g_autoptr(HpTensor) w7 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (7), 156);
    g_autoptr(HpTensor) da = dtensor_on (mesh, g53, "S(0)");
    g_autoptr(HpTensor) db = dtensor_on (mesh, g43, "S(0)");
    g_autoptr(HpTensor) m1 = dtensor_on (mesh, g46, "S(1)");
    g_autoptr(HpTensor) m2 = dtensor_on (mesh, g54, "S(0)");
    g_autoptr(HpTensor) l1 = dtensor_on (mesh, g36, "S(1)");
    g_autoptr(HpTensor) l2 = dtensor_on (mesh, g45, "S(1)");
    g_autoptr(HpTensor) lx = dtensor_on (mesh, g35, "R");
    g_autoptr(HpTensor) lw = dtensor_on (mesh, g45, "S(0)");
    g_autoptr(HpTensor) lb = dtensor_on (mesh, g3, "S(0)");
    g_autoptr(HpTensor) c1 = dtensor_on (mesh, x, "S(0)");
    g_autoptr(HpTensor) c2 = dtensor_on (mesh, g53, "S(0)");
    g_autoptr(HpTensor) c3 = dtensor_on (mesh, g62, "S(0)");
    g_autoptr(HpTensor) rx = dtensor_on (mesh, x_rot, "S(1)");
    g_autoptr(HpTensor) rt = dtensor_on (mesh, t54, "R");
    g_autoptr(HpTensor) dq = dtensor_on (mesh, q, "S(0)");
    g_autoptr(HpTensor) dkv = dtensor_on (mesh, kv, "S(0)");
    g_autoptr(HpTensor) nx = dtensor_on (mesh, x68, "S(0)");
    g_autoptr(HpTensor) nw = dtensor_on (mesh, w7, "R");
    g_autoptr(GPtrArray) list = g_ptr_array_new ();

    hp_test_assert_error (hp_tensor_add (da, db, &error), &error, HP_ERROR_SHAPE,
                          "add: shapes [5, 3] and [4, 3] cannot be broadcast together");
    hp_test_assert_error (hp_tensor_mul (db, da, &error), &error, HP_ERROR_SHAPE,
                          "mul: shapes [4, 3] and [5, 3] cannot be broadcast together");
    hp_test_assert_error (hp_tensor_matmul (m1, m2, &error), &error, HP_ERROR_SHAPE,
                          "matmul: shapes [4, 6] and [5, 4] do not fit (6 != 5)");
    hp_test_assert_error (hp_tensor_linear (l1, l2, NULL, &error), &error, HP_ERROR_SHAPE,
                          "linear: input [3, 6] and weight [4, 5] do not fit (6 != 5)");
    hp_test_assert_error (hp_tensor_linear (lx, lw, lb, &error), &error, HP_ERROR_SHAPE,
                          "linear: bias [3] does not fit weight [4, 5]");
    g_ptr_array_add (list, c2);
    g_ptr_array_add (list, c3);
    hp_test_assert_error (hp_tensor_cat (list, 1, &error), &error, HP_ERROR_SHAPE, "cat: tensor 1");
    g_ptr_array_set_size (list, 0);
    g_ptr_array_add (list, c1);
    g_ptr_array_add (list, c2);
    hp_test_assert_error (hp_tensor_cat (list, 1, &error), &error, HP_ERROR_SHAPE, "cat: tensor 1");
    hp_test_assert_error (hp_tensor_apply_rotary (rx, rt, rt, &error), &error, HP_ERROR_SHAPE,
                          "apply_rotary");
    hp_test_assert_error (hp_tensor_scaled_dot_product_attention (dq, dkv, dkv, NULL, FALSE, 0,
                                                                  &error),
                          &error, HP_ERROR_SHAPE, "batch sizes differ");
    hp_test_assert_error (hp_tensor_rms_norm (nx, nw, 1e-6, &error), &error, HP_ERROR_SHAPE,
                          "rms_norm");
  }

  /* a gather whose index is sharded checks every rank's part, and all
   * ranks fail when one part holds a value out of range; the last of 8
   * rows is the last rank's on every mesh of this suite */
  {
    g_autoptr(HpTensor) gx = ints (HP_TEST_SHAPE (8, 4), 163);
    g_autoptr(HpTensor) gi = positions (HP_TEST_SHAPE (8, 4), 4, 164);
    g_autoptr(HpTensor) bad_last = NULL;
    g_autoptr(HpTensor) dgx = dtensor_on (mesh, gx, "S(0)");
    g_autoptr(HpTensor) dgi = NULL;
    gsize n;
    g_autofree gdouble *values = hp_tensor_to_float64_array (gi, &n);
    g_autofree gint64 *bad = g_new (gint64, n);

    for (gsize i = 0; i < n; i++)
      bad[i] = (gint64) values[i];
    bad[n - 1] = 4;
    bad_last = hp_test_tensor_ids (bad, n, HP_TEST_SHAPE (8, 4));
    dgi = dtensor_on (mesh, bad_last, "S(0)");
    hp_test_assert_error (hp_tensor_gather (dgx, 1, dgi, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT,
                          holds_last ? "gather: index 4 is out of range for dim 1"
                                     : "gather: another rank's part of the inputs failed");
    hp_test_assert_error (hp_tensor_index_select (dgx, 1, dgi, &error), &error, HP_ERROR_SHAPE,
                          "index_select: index must have one dim");
  }

  /* so does a conversion to int64 of a sharded tensor */
  {
    g_autoptr(HpTensor) fx = ints (HP_TEST_SHAPE (8, 4), 165);
    gsize n;
    g_autofree gdouble *values = hp_tensor_to_float64_array (fx, &n);
    g_autoptr(HpTensor) with_nan = NULL;
    g_autoptr(HpTensor) dnan = NULL;
    g_autoptr(HpTensor) vector = NULL;

    values[n - 1] = NAN;
    with_nan = hp_test_tensor (HP_DTYPE_FLOAT64, values, n, HP_TEST_SHAPE (8, 4));
    dnan = dtensor_on (mesh, with_nan, "S(0)");
    vector = dtensor_on (mesh, with_nan, "R");
    hp_test_assert_error (hp_tensor_to_dtype (dnan, HP_DTYPE_INT64, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT,
                          holds_last ? "is nan, which has no int64 value"
                                     : "to_dtype: another rank's part of the inputs failed");
    hp_test_assert_error (hp_tensor_to_dtype (vector, (HpDType) 9, &error), &error,
                          HP_ERROR_INVALID_ARGUMENT, "to_dtype: 9 is not a dtype");
  }

  /* a vocabulary-parallel lookup checks its ids and weight like the
   * single-rank one, on every rank */
  {
    static const gint64 bad_high[] = { 0, 10, 3 }, bad_low[] = { 2, -1, 3 };
    g_autoptr(HpTensor) ids_high = hp_test_tensor_ids (bad_high, 3, HP_TEST_SHAPE (3));
    g_autoptr(HpTensor) ids_low = hp_test_tensor_ids (bad_low, 3, HP_TEST_SHAPE (3));
    g_autoptr(HpTensor) float_ids = ints (HP_TEST_SHAPE (3), 160);
    g_autoptr(HpTensor) w = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (10, 4), 161);
    g_autoptr(HpTensor) w1 = randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (10), 162);
    g_autoptr(HpTensor) dw = dtensor_on (mesh, w, "S(0)");
    g_autoptr(HpTensor) dw1 = dtensor_on (mesh, w1, "S(0)");
    g_autoptr(HpTensor) dhigh = dtensor_on (mesh, ids_high, "R");
    g_autoptr(HpTensor) dlow = dtensor_on (mesh, ids_low, "R");
    g_autoptr(HpTensor) dfloat = dtensor_on (mesh, float_ids, "R");

    hp_test_assert_error (hp_tensor_embedding (dw, dhigh, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                          "embedding: id 10 is outside [0, 10) for weight of shape [10, 4]");
    hp_test_assert_error (hp_tensor_embedding (dw, dlow, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                          "embedding: id -1 is outside [0, 10)");
    hp_test_assert_error (hp_tensor_embedding (dw, dfloat, &error), &error, HP_ERROR_INVALID_ARGUMENT,
                          "embedding: ids must be int64");
    hp_test_assert_error (hp_tensor_embedding (dw1, dlow, &error), &error, HP_ERROR_SHAPE,
                          "embedding: weight must be 2-d [V, D], got shape [10]");
  }
}

static void
setup_meshes (void)
{
  g_autoptr(GError) error = NULL;
  const gchar *names[] = { "dp", "tp", NULL };

  meshes[0].shape[0] = world_size;
  meshes[0].ndim = 1;
  n_meshes = 1;
  if (world_size == 4 || world_size == 8)
    {
      meshes[1].shape[0] = 2;
      meshes[1].shape[1] = world_size / 2;
      meshes[1].ndim = 2;
      n_meshes = 2;
    }
  for (guint m = 0; m < n_meshes; m++)
    {
      meshes[m].mesh = hp_device_mesh_new (meshes[m].shape, meshes[m].ndim,
                                           meshes[m].ndim == 2 ? names : NULL, &error);
      g_assert_no_error (error);
      meshes[m].name = hp_device_mesh_to_string (meshes[m].mesh);
    }
}

int
main (int   argc,
      char *argv[])
{
  int status;

  hp_test_init_world (&argc, &argv);
  world_size = hp_get_world_size ();
  setup_meshes ();

  g_test_add_func ("/dtensor-ops/pointwise/binary", test_pointwise_binary);
  g_test_add_func ("/dtensor-ops/pointwise/unary", test_pointwise_unary);
  g_test_add_func ("/dtensor-ops/pointwise/math", test_pointwise_math);
  g_test_add_func ("/dtensor-ops/pointwise/broadcast", test_pointwise_broadcast);
  g_test_add_func ("/dtensor-ops/gradient-rule", test_gradient_rule);
  g_test_add_func ("/dtensor-ops/linear", test_linear);
  g_test_add_func ("/dtensor-ops/matmul", test_matmul);
  g_test_add_func ("/dtensor-ops/normalize", test_normalize);
  g_test_add_func ("/dtensor-ops/reduce", test_reduce);
  g_test_add_func ("/dtensor-ops/shape", test_shape);
  g_test_add_func ("/dtensor-ops/index", test_index);
  g_test_add_func ("/dtensor-ops/layout", test_layout);
  g_test_add_func ("/dtensor-ops/to-dtype", test_to_dtype);
  g_test_add_func ("/dtensor-ops/embedding", test_embedding);
  g_test_add_func ("/dtensor-ops/rotary", test_rotary);
  g_test_add_func ("/dtensor-ops/attention", test_attention);
  g_test_add_func ("/dtensor-ops/cross-entropy", test_cross_entropy);
  g_test_add_func ("/dtensor-ops/mlp", test_mlp);
  g_test_add_func ("/dtensor-ops/float32", test_float32);
  g_test_add_func ("/dtensor-ops/two-dims", test_two_dims);
  g_test_add_func ("/dtensor-ops/bad-input", test_bad_input);

  status = g_test_run ();

  for (guint m = 0; m < n_meshes; m++)
    {
      g_clear_object (&meshes[m].mesh);
      g_clear_pointer (&meshes[m].name, g_free);
    }
  return status;
}
