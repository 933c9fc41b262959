/* test-sdpa-tp.c: the inner attention run on local heads through its
 * local map (seed Part 9 §6, test_sdpa_tp), against one rank
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi, 1, 2, 3, 4 and 8 ranks);
 * every rank runs every assertion. q, k and v come in as DTensors
 * sharded on the heads (tp:S(2) of [B, S, H, D]) or replicated, the
 * attention runs on each rank's heads and the output comes back as
 * tp:S(2). Head counts that do not split into whole groups over the
 * ranks are refused with a clear error.
 */

#include <math.h>
#include <string.h>

#include "hp-test-utils.h"

static HpDeviceMesh *
tp_mesh (void)
{
  g_autoptr(GError) error = NULL;
  gint shape[] = { hp_get_world_size () };
  HpDeviceMesh *mesh = hp_device_mesh_new (shape, 1, (const gchar *[]) { "tp", NULL }, &error);

  g_assert_no_error (error);
  return mesh;
}

static HpSDPA *
new_sdpa (gboolean return_lse,
          gboolean local_map)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpSDPAConfig) config = g_object_new (HP_TYPE_SDPA_CONFIG,
                                                 "return-lse", return_lse, NULL);
  HpSDPA *sdpa;

  if (local_map)
    hp_set_gqa_inner_attention_local_map (config, return_lse);
  sdpa = hp_sdpa_new (config, &error);
  g_assert_no_error (error);
  return sdpa;
}

/* A new leaf DTensor with the values of @tensor */
static HpTensor *
distributed (HpTensor     *tensor,
             HpDeviceMesh *mesh,
             const gchar  *placements,
             gboolean      requires_grad)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) parsed = hp_placements_new_from_string (placements, &error);
  g_autoptr(HpTensor) values = hp_tensor_detach (tensor);
  HpDTensor *dt = hp_dtensor_distribute (values, mesh, parsed, -1, &error);

  g_assert_no_error (error);
  hp_tensor_set_requires_grad (HP_TENSOR (dt), requires_grad);
  return HP_TENSOR (dt);
}

static GPtrArray *
run (HpSDPA    *sdpa,
     HpTensor  *q,
     HpTensor  *k,
     HpTensor  *v,
     GError   **error)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new ();

  g_ptr_array_add (args, q);
  g_ptr_array_add (args, k);
  g_ptr_array_add (args, v);
  return hp_module_call (HP_MODULE (sdpa), args, error);
}

/* sum (out * weights) for every output, weights laid out like out */
static HpTensor *
weighted_loss (GPtrArray    *outputs,
               guint64       seed,
               HpDeviceMesh *mesh)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) loss = NULL;

  for (guint i = 0; i < outputs->len; i++)
    {
      HpTensor *out = g_ptr_array_index (outputs, i);
      guint ndim;
      const gint64 *shape = hp_tensor_get_shape (out, &ndim);
      g_autoptr(HpTensor) w = hp_test_randn (hp_tensor_get_dtype (out), shape, ndim, seed + i, FALSE);
      g_autoptr(HpTensor) w_laid = NULL;
      g_autoptr(HpTensor) product = NULL;
      g_autoptr(HpTensor) term = NULL;

      if (HP_IS_DTENSOR (out))
        {
          w_laid = HP_TENSOR (hp_dtensor_distribute (w, mesh,
                                                     hp_dtensor_get_placements (HP_DTENSOR (out)),
                                                     -1, &error));
          g_assert_no_error (error);
        }
      else
        w_laid = g_object_ref (w);
      product = hp_tensor_mul (out, w_laid, &error);
      g_assert_no_error (error);
      term = hp_tensor_sum_all (product, &error);
      g_assert_no_error (error);
      if (loss == NULL)
        loss = g_steal_pointer (&term);
      else
        {
          g_autoptr(HpTensor) sum = hp_tensor_add (loss, term, &error);

          g_assert_no_error (error);
          g_set_object (&loss, sum);
        }
    }
  return g_steal_pointer (&loss);
}

static HpTensor *
full (HpTensor *tensor)
{
  g_autoptr(GError) error = NULL;
  HpTensor *out;

  g_assert_nonnull (tensor);
  if (!HP_IS_DTENSOR (tensor))
    return g_object_ref (tensor);
  out = hp_dtensor_full_tensor (HP_DTENSOR (tensor), &error);
  g_assert_no_error (error);
  return out;
}

static void
assert_placements (HpTensor    *tensor,
                   const gchar *expected)
{
  g_autofree gchar *text = NULL;

  g_assert_true (HP_IS_DTENSOR (tensor));
  text = hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (tensor)));
  g_assert_cmpstr (text, ==, expected);
}

/* Whether the local map can run @heads query heads and @kv_heads
 * key/value heads on @n ranks */
static gboolean
splits (gint64 heads,
        gint64 kv_heads,
        gint   n)
{
  return heads == kv_heads || (heads % n == 0 && kv_heads % n == 0);
}

typedef struct
{
  gint64 heads;
  gint64 kv_heads;
  HpDType dtype;
  gboolean return_lse;
  const gchar *in_placements;
} Case;

static void
run_case (const Case *c)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = tp_mesh ();
  gint n = hp_get_world_size ();
  gdouble tol = c->dtype == HP_DTYPE_FLOAT32 ? 1e-5 : 1e-12;
  g_autoptr(HpSDPA) sharded = new_sdpa (c->return_lse, TRUE);
  g_autoptr(HpSDPA) reference = new_sdpa (c->return_lse, FALSE);
  guint64 seed = 100 * c->heads + 10 * c->kv_heads + c->return_lse;
  g_autoptr(HpTensor) q = hp_test_randn (c->dtype, HP_TEST_SHAPE (2, 6, c->heads, 4), seed, TRUE);
  g_autoptr(HpTensor) k = hp_test_randn (c->dtype, HP_TEST_SHAPE (2, 6, c->kv_heads, 4), seed + 1, TRUE);
  g_autoptr(HpTensor) v = hp_test_randn (c->dtype, HP_TEST_SHAPE (2, 6, c->kv_heads, 4), seed + 2, TRUE);
  g_autoptr(HpTensor) q_dt = distributed (q, mesh, c->in_placements, TRUE);
  g_autoptr(HpTensor) k_dt = distributed (k, mesh, c->in_placements, TRUE);
  g_autoptr(HpTensor) v_dt = distributed (v, mesh, c->in_placements, TRUE);
  g_autoptr(GPtrArray) outputs = NULL;
  g_autoptr(GPtrArray) expected = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpTensor) loss_ref = NULL;
  HpTensor *sharded_inputs[] = { q_dt, k_dt, v_dt };
  HpTensor *plain_inputs[] = { q, k, v };

  g_assert_true (hp_module_parallelize (HP_MODULE (sharded), mesh, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_callable_is_local_mapped (HP_MODULE (sharded), "inner_sdpa"));

  outputs = run (sharded, q_dt, k_dt, v_dt, &error);
  if (!splits (c->heads, c->kv_heads, n))
    {
      g_autofree gchar *message =
        g_strdup_printf ("HpSDPA: %" G_GINT64_FORMAT " query heads and %" G_GINT64_FORMAT
                         " key/value heads cannot be split over the %d ranks of mesh dim 'tp'",
                         c->heads, c->kv_heads, n);

      hp_test_assert_error (outputs, &error, HP_ERROR_PLACEMENT, message);
      return;
    }
  g_assert_no_error (error);
  expected = run (reference, q, k, v, &error);
  g_assert_no_error (error);

  g_assert_cmpuint (outputs->len, ==, c->return_lse ? 2 : 1);
  for (guint i = 0; i < outputs->len; i++)
    {
      g_autoptr(HpTensor) whole = full (g_ptr_array_index (outputs, i));

      assert_placements (g_ptr_array_index (outputs, i), "(S(2))");
      hp_test_assert_close (whole, g_ptr_array_index (expected, i), 0.0, tol);
    }

  loss = weighted_loss (outputs, seed + 7, mesh);
  loss_ref = weighted_loss (expected, seed + 7, mesh);
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (loss_ref, NULL, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < 3; i++)
    {
      HpTensor *grad = hp_tensor_get_grad (sharded_inputs[i]);
      g_autoptr(HpTensor) whole = full (grad);
      g_autofree gchar *want = g_strdup_printf ("(%s)", c->in_placements);

      assert_placements (grad, want);
      hp_test_assert_close (whole, hp_tensor_get_grad (plain_inputs[i]), 0.0, tol);
    }
}

static void
test_heads (gconstpointer data)
{
  const Case *base = data;
  const gint64 head_counts[][2] = { { 8, 8 }, { 8, 4 }, { 8, 2 }, { 6, 3 } };

  for (guint h = 0; h < G_N_ELEMENTS (head_counts); h++)
    {
      Case c = *base;

      c.heads = head_counts[h][0];
      c.kv_heads = head_counts[h][1];
      run_case (&c);
    }
}

/* Without the local map, DTensor inputs go through the attention op's
 * sharding rule and give the same numbers */
static void
test_without_local_map (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = tp_mesh ();
  g_autoptr(HpSDPA) plain = new_sdpa (TRUE, FALSE);
  g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 5, 8, 4), 1, FALSE);
  g_autoptr(HpTensor) k = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 5, 8, 4), 2, FALSE);
  g_autoptr(HpTensor) v = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 5, 8, 4), 3, FALSE);
  g_autoptr(HpTensor) q_dt = distributed (q, mesh, "S(2)", FALSE);
  g_autoptr(HpTensor) k_dt = distributed (k, mesh, "S(2)", FALSE);
  g_autoptr(HpTensor) v_dt = distributed (v, mesh, "S(2)", FALSE);
  g_autoptr(GPtrArray) outputs = NULL;
  g_autoptr(GPtrArray) expected = NULL;

  g_assert_true (hp_module_parallelize (HP_MODULE (plain), mesh, &error));
  g_assert_false (hp_module_callable_is_local_mapped (HP_MODULE (plain), "inner_sdpa"));
  outputs = run (plain, q_dt, k_dt, v_dt, &error);
  g_assert_no_error (error);
  expected = run (plain, q, k, v, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(HpTensor) whole = full (g_ptr_array_index (outputs, i));

      hp_test_assert_close (whole, g_ptr_array_index (expected, i), 0.0, 1e-12);
    }
  assert_placements (g_ptr_array_index (outputs, 0), "(S(2))");
}

/* A local map declaring one output where the module returns two */
static void
test_output_count_mismatch (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = tp_mesh ();
  g_autoptr(HpSDPAConfig) config = g_object_new (HP_TYPE_SDPA_CONFIG, "return-lse", TRUE, NULL);
  g_autoptr(HpSDPA) sdpa = NULL;
  g_autoptr(HpTensor) q = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (1, 3, 8, 2), 1, FALSE);
  g_autoptr(HpTensor) q_dt = distributed (q, mesh, "S(2)", FALSE);

  hp_set_gqa_inner_attention_local_map (config, FALSE);
  sdpa = hp_sdpa_new (config, &error);
  g_assert_true (hp_module_parallelize (HP_MODULE (sdpa), mesh, &error));
  g_assert_no_error (error);
  hp_test_assert_error (run (sdpa, q_dt, q_dt, q_dt, &error), &error, HP_ERROR_PLACEMENT,
                        "local_map: func returned 2 outputs, but out_placements has 1 entries");
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  static const Case cases[] = {
    { 0, 0, HP_DTYPE_FLOAT32, FALSE, "S(2)" },
    { 0, 0, HP_DTYPE_FLOAT32, TRUE, "S(2)" },
    { 0, 0, HP_DTYPE_FLOAT64, FALSE, "S(2)" },
    { 0, 0, HP_DTYPE_FLOAT64, TRUE, "S(2)" },
    { 0, 0, HP_DTYPE_FLOAT64, TRUE, "R" },
  };
  static const gchar *names[] = {
    "/sdpa-tp/heads/float32",
    "/sdpa-tp/heads/float32-lse",
    "/sdpa-tp/heads/float64",
    "/sdpa-tp/heads/float64-lse",
    "/sdpa-tp/heads/replicated-inputs-lse",
  };

  hp_test_init (&argc, &argv);
  g_assert_true (hp_init (&error));
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    g_test_add_data_func (names[i], &cases[i], test_heads);
  g_test_add_func ("/sdpa-tp/without-local-map", test_without_local_map);
  g_test_add_func ("/sdpa-tp/output-count-mismatch", test_output_count_mismatch);

  return g_test_run ();
}
