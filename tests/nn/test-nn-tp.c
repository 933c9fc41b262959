/* test-nn-tp.c: the basic layers laid out with the tensor-parallel styles
 * against the same layers on one rank
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun on 1, 2, 3, 4 and 8 ranks (suite mpi);
 * every rank runs every assertion. Each case builds a layer twice from
 * float64 configurations that differ only in their sharding, initialises
 * both with one seed, lays one out over a mesh with a `tp` axis and
 * compares the output, the parameter gradients (gathered whole) and the
 * input gradient of a weighted sum of the output with those of the
 * other, within 1e-10.
 *
 * Every case runs on two meshes: the 1-d mesh `tp` of all ranks, and the
 * 2-d mesh `dp` x `tp` (dp 2 when the world size is even, else 1) on
 * which the styles' `tp` entries leave `dp` replicated. A last case
 * splits the batch over `dp` and lays the block out on the `tp` slice,
 * data and tensor parallelism together.
 *
 * The sizes do not divide the `tp` sizes on purpose (a hidden dim of 6
 * on 4 or 8 ranks, a sequence of 5): uneven and empty shards work.
 */

#include <math.h>
#include <string.h>

#include <hp-protocols/hp-mpi.h>

#include "hp-test-utils.h"

#define TOLERANCE 1e-10

static HpDeviceMesh *
new_mesh (gboolean two_dims)
{
  g_autoptr(GError) error = NULL;
  gint world = hp_get_world_size ();
  gint dp = world % 2 == 0 ? 2 : 1;
  HpDeviceMesh *mesh;

  if (two_dims)
    mesh = hp_device_mesh_new ((const gint[]) { dp, world / dp }, 2,
                               (const gchar *[]) { "dp", "tp", NULL }, &error);
  else
    mesh = hp_device_mesh_new ((const gint[]) { world }, 1, (const gchar *[]) { "tp", NULL }, &error);
  g_assert_no_error (error);
  return mesh;
}

/* The placements of @mesh: Replicate on `dp`, @tp on `tp` */
static GPtrArray *
placements_on (HpDeviceMesh *mesh,
               const gchar  *tp)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *placements = g_ptr_array_new_with_free_func (g_object_unref);

  if (hp_device_mesh_get_ndim (mesh) == 2)
    g_ptr_array_add (placements, hp_replicate_new ());
  g_ptr_array_add (placements, hp_placement_new_from_string (tp, &error));
  g_assert_no_error (error);
  return placements;
}

static void
assert_placements (HpTensor     *tensor,
                   HpDeviceMesh *mesh,
                   const gchar  *tp)
{
  g_autofree gchar *text = NULL;
  g_autofree gchar *expected = NULL;

  g_assert_true (HP_IS_DTENSOR (tensor));
  text = hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (tensor)));
  expected = hp_device_mesh_get_ndim (mesh) == 2 ? g_strdup_printf ("(R, %s)", tp)
                                                  : g_strdup_printf ("(%s)", tp);
  g_assert_cmpstr (text, ==, expected);
}

static HpParamInit *
param_init (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  HpParamInit *init = hp_param_init_new_from_string (text, &error);

  g_assert_no_error (error);
  return init;
}

static HpModule *
build_module (HpConfig *config)
{
  g_autoptr(GError) error = NULL;
  GObject *built = hp_config_build (config, &error);

  g_assert_no_error (error);
  return HP_MODULE (built);
}

static HpTensor *
whole (HpTensor *tensor)
{
  g_autoptr(GError) error = NULL;
  HpTensor *full;

  if (!HP_IS_DTENSOR (tensor))
    return g_object_ref (tensor);
  full = hp_dtensor_full_tensor (HP_DTENSOR (tensor), &error);
  g_assert_no_error (error);
  return full;
}

/* Weighted sum of @y with weights drawn from @seed; a DTensor @y gets
 * the weights as a replicated DTensor */
static HpTensor *
weighted_loss (HpTensor *y)
{
  g_autoptr(GError) error = NULL;
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (y, &ndim);
  g_autoptr(HpTensor) weights = hp_test_randn (HP_DTYPE_FLOAT64, shape, ndim, 99, FALSE);
  g_autoptr(HpTensor) laid_out = NULL;
  g_autoptr(HpTensor) product = NULL;
  HpTensor *loss;

  if (HP_IS_DTENSOR (y))
    {
      HpDeviceMesh *mesh = hp_dtensor_get_mesh (HP_DTENSOR (y));
      g_autoptr(GPtrArray) replicated = g_ptr_array_new_with_free_func (g_object_unref);

      for (guint d = 0; d < hp_device_mesh_get_ndim (mesh); d++)
        g_ptr_array_add (replicated, hp_replicate_new ());
      laid_out = HP_TENSOR (hp_dtensor_distribute (weights, mesh, replicated, -1, &error));
      g_assert_no_error (error);
    }
  product = hp_tensor_mul (y, laid_out != NULL ? laid_out : weights, &error);
  g_assert_no_error (error);
  loss = hp_tensor_sum_all (product, &error);
  g_assert_no_error (error);
  return loss;
}

static void
assert_same_parameters (HpModule *parallel,
                        HpModule *reference,
                        gboolean  gradients)
{
  g_autoptr(HpStateDict) mine = hp_module_named_parameters (parallel);
  g_autoptr(HpStateDict) theirs = hp_module_named_parameters (reference);

  g_assert_cmpuint (hp_state_dict_get_size (mine), ==, hp_state_dict_get_size (theirs));
  for (guint i = 0; i < hp_state_dict_get_size (theirs); i++)
    {
      const gchar *name = hp_state_dict_get_name (theirs, i);
      HpTensor *expected = hp_state_dict_lookup (theirs, name);
      HpTensor *actual = hp_state_dict_lookup (mine, name);
      g_autoptr(HpTensor) full = NULL;

      g_assert_nonnull (actual);
      g_assert_true (HP_IS_DTENSOR (actual));
      if (gradients)
        {
          g_assert_nonnull (hp_tensor_get_grad (actual));
          g_assert_true (HP_IS_DTENSOR (hp_tensor_get_grad (actual)));
          full = whole (hp_tensor_get_grad (actual));
          hp_test_assert_close (full, hp_tensor_get_grad (expected), TOLERANCE, TOLERANCE);
        }
      else
        {
          full = whole (actual);
          hp_test_assert_close (full, expected, 0, 0);
        }
    }
}

/* Parallelises @parallel on @mesh, initialises both modules with one
 * seed, runs both on the same input (laid out as @input_tp for
 * @parallel, or given plain when %NULL) and compares everything;
 * returns the parallel output */
static void
assert_equals_one_rank (HpModule     *parallel,
                        HpModule     *reference,
                        HpDeviceMesh *mesh,
                        const gint64 *shape,
                        guint         ndim,
                        const gchar  *input_tp,
                        const gchar  *output_tp)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) x_ref = hp_test_randn (HP_DTYPE_FLOAT64, shape, ndim, 3, TRUE);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, shape, ndim, 3, TRUE);
  g_autoptr(HpTensor) input = NULL;
  g_autoptr(HpTensor) y_ref = NULL;
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) y_full = NULL;
  g_autoptr(HpTensor) loss_ref = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpTensor) loss_full = NULL;

  g_assert_true (hp_module_parallelize (parallel, mesh, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_init_states (parallel, 7, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_init_states (reference, 7, &error));
  g_assert_no_error (error);
  assert_same_parameters (parallel, reference, FALSE);

  if (input_tp != NULL)
    {
      g_autoptr(GPtrArray) placements = placements_on (mesh, input_tp);

      input = HP_TENSOR (hp_dtensor_distribute (x, mesh, placements, -1, &error));
      g_assert_no_error (error);
    }
  else
    input = g_object_ref (x);

  y_ref = hp_module_call1 (reference, x_ref, &error);
  g_assert_no_error (error);
  y = hp_module_call1 (parallel, input, &error);
  g_assert_no_error (error);
  assert_placements (y, mesh, output_tp);
  y_full = whole (y);
  hp_test_assert_close (y_full, y_ref, TOLERANCE, TOLERANCE);

  loss_ref = weighted_loss (y_ref);
  loss = weighted_loss (y);
  loss_full = whole (loss);
  hp_test_assert_close (loss_full, loss_ref, TOLERANCE, TOLERANCE);
  g_assert_true (hp_tensor_backward (loss_ref, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);

  assert_same_parameters (parallel, reference, TRUE);
  g_assert_nonnull (hp_tensor_get_grad (x));
  g_assert_false (HP_IS_DTENSOR (hp_tensor_get_grad (x)));
  hp_test_assert_close (hp_tensor_get_grad (x), hp_tensor_get_grad (x_ref), TOLERANCE, TOLERANCE);
}

static void
assert_parameter_placements (HpModule     *module,
                             HpDeviceMesh *mesh,
                             const gchar  *path,
                             const gchar  *tp)
{
  HpTensor *parameter = hp_module_get_parameter (module, path);

  g_assert_nonnull (parameter);
  assert_placements (parameter, mesh, tp);
}

/* HpLinear */

static HpConfig *
linear_config (gint              in_features,
               gint              out_features,
               gboolean          bias,
               HpShardingConfig *sharding)
{
  g_autoptr(HpParamInit) init = param_init (bias ? "weight=normal(std=0.5); bias=normal(std=0.5)"
                                                 : "weight=normal(std=0.5)");

  return g_object_new (HP_TYPE_LINEAR_CONFIG,
                       "in-features", in_features,
                       "out-features", out_features,
                       "bias", bias,
                       "dtype", HP_DTYPE_FLOAT64,
                       "param-init", init,
                       "sharding-config", sharding,
                       NULL);
}

static void
check_colwise (gboolean two_dims,
               gboolean bias)
{
  g_autoptr(HpDeviceMesh) mesh = new_mesh (two_dims);
  g_autoptr(HpShardingConfig) sharding = bias ? hp_sharding_colwise_with_bias () : hp_sharding_colwise ();
  g_autoptr(HpConfig) parallel_config = linear_config (5, 6, bias, sharding);
  g_autoptr(HpConfig) reference_config = linear_config (5, 6, bias, NULL);
  g_autoptr(HpModule) parallel = build_module (parallel_config);
  g_autoptr(HpModule) reference = build_module (reference_config);

  /* 6 output features: uneven on 4 ranks ([2, 2, 2, 0]) and 8 */
  assert_equals_one_rank (parallel, reference, mesh, HP_TEST_SHAPE (2, 3, 5), "R", "S(2)");
  assert_parameter_placements (parallel, mesh, "weight", "S(0)");
  if (bias)
    assert_parameter_placements (parallel, mesh, "bias", "S(0)");
}

static void
test_colwise (void)
{
  check_colwise (FALSE, FALSE);
  check_colwise (FALSE, TRUE);
  check_colwise (TRUE, FALSE);
  check_colwise (TRUE, TRUE);
}

/* A plain input of a colwise layer is taken as the whole tensor */
static void
test_colwise_plain_input (void)
{
  g_autoptr(HpDeviceMesh) mesh = new_mesh (FALSE);
  g_autoptr(HpShardingConfig) sharding = hp_sharding_colwise ();
  g_autoptr(HpConfig) parallel_config = linear_config (4, 7, FALSE, sharding);
  g_autoptr(HpConfig) reference_config = linear_config (4, 7, FALSE, NULL);
  g_autoptr(HpModule) parallel = build_module (parallel_config);
  g_autoptr(HpModule) reference = build_module (reference_config);

  assert_equals_one_rank (parallel, reference, mesh, HP_TEST_SHAPE (3, 4), NULL, "S(1)");
}

static void
check_rowwise (gboolean     two_dims,
               gboolean     bias,
               gboolean     output_sp,
               const gchar *input_tp)
{
  g_autoptr(HpDeviceMesh) mesh = new_mesh (two_dims);
  g_autoptr(HpShardingConfig) sharding = bias ? hp_sharding_rowwise_with_bias (output_sp)
                                              : hp_sharding_rowwise (output_sp);
  g_autoptr(HpConfig) parallel_config = linear_config (6, 5, bias, sharding);
  g_autoptr(HpConfig) reference_config = linear_config (6, 5, bias, NULL);
  g_autoptr(HpModule) parallel = build_module (parallel_config);
  g_autoptr(HpModule) reference = build_module (reference_config);

  /* 6 input features, a sequence of 5: both uneven on 4 and 8 ranks */
  assert_equals_one_rank (parallel, reference, mesh, HP_TEST_SHAPE (2, 5, 6), input_tp,
                          output_sp ? "S(1)" : "R");
  assert_parameter_placements (parallel, mesh, "weight", "S(1)");
  if (bias)
    assert_parameter_placements (parallel, mesh, "bias", "R");
}

static void
test_rowwise (void)
{
  for (gint two_dims = 0; two_dims < 2; two_dims++)
    for (gint bias = 0; bias < 2; bias++)
      for (gint output_sp = 0; output_sp < 2; output_sp++)
        check_rowwise (two_dims, bias, output_sp, "S(2)");
}

/* A replicated input is sliced locally */
static void
test_rowwise_replicated_input (void)
{
  check_rowwise (FALSE, TRUE, FALSE, "R");
  check_rowwise (TRUE, FALSE, TRUE, "R");
}

/* HpRMSNorm */

static HpConfig *
norm_config (gint              dim,
             HpShardingConfig *sharding)
{
  g_autoptr(HpParamInit) init = param_init ("weight=normal(mean=1, std=0.5)");

  return g_object_new (HP_TYPE_RMS_NORM_CONFIG,
                       "dim", dim,
                       "eps", 1e-5,
                       "dtype", HP_DTYPE_FLOAT64,
                       "param-init", init,
                       "sharding-config", sharding,
                       NULL);
}

static void
check_norm (gboolean two_dims,
            gboolean enable_sp)
{
  g_autoptr(HpDeviceMesh) mesh = new_mesh (two_dims);
  g_autoptr(HpShardingConfig) sharding = hp_sharding_norm (enable_sp);
  g_autoptr(HpConfig) parallel_config = norm_config (4, sharding);
  g_autoptr(HpConfig) reference_config = norm_config (4, NULL);
  g_autoptr(HpModule) parallel = build_module (parallel_config);
  g_autoptr(HpModule) reference = build_module (reference_config);
  const gchar *tp = enable_sp ? "S(1)" : "R";

  assert_equals_one_rank (parallel, reference, mesh, HP_TEST_SHAPE (2, 5, 4), tp, tp);
  assert_parameter_placements (parallel, mesh, "weight", "R");
}

static void
test_norm (void)
{
  check_norm (FALSE, TRUE);
  check_norm (FALSE, FALSE);
  check_norm (TRUE, TRUE);
  check_norm (TRUE, FALSE);
}

/* The sequence-parallel norm refuses a replicated input: the layout
 * between the layers is part of the contract */
static void
test_norm_wrong_input (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = new_mesh (FALSE);
  g_autoptr(HpShardingConfig) sharding = hp_sharding_norm (TRUE);
  g_autoptr(HpConfig) config = norm_config (4, sharding);
  g_autoptr(HpModule) norm = build_module (config);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 5, 4), 3, FALSE);
  g_autoptr(GPtrArray) replicated = placements_on (mesh, "R");
  g_autoptr(HpDTensor) input = NULL;

  g_assert_true (hp_module_parallelize (norm, mesh, &error));
  g_assert_no_error (error);
  input = hp_dtensor_distribute (x, mesh, replicated, -1, &error);
  g_assert_no_error (error);
  hp_test_assert_error (hp_module_call1 (norm, HP_TENSOR (input), &error), &error, HP_ERROR_PLACEMENT,
                        "HpRMSNorm.input: input DTensor has placements (R), "
                        "but in_src_shardings expects (S(1)).");
}

/* HpEmbedding */

static HpConfig *
embedding_config (HpShardingConfig *sharding)
{
  return g_object_new (HP_TYPE_EMBEDDING_CONFIG,
                       "num-embeddings", 7,
                       "embedding-dim", 4,
                       "dtype", HP_DTYPE_FLOAT64,
                       "sharding-config", sharding,
                       NULL);
}

static void
check_embedding (gboolean two_dims,
                 gboolean output_sp)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = new_mesh (two_dims);
  g_autoptr(HpShardingConfig) sharding = hp_sharding_embedding (output_sp);
  g_autoptr(HpConfig) parallel_config = embedding_config (sharding);
  g_autoptr(HpConfig) reference_config = embedding_config (NULL);
  g_autoptr(HpModule) parallel = build_module (parallel_config);
  g_autoptr(HpModule) reference = build_module (reference_config);
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 6, 0, 3, 3, 1, 2, 5, 6, 4, 0 }, 10,
                                                HP_TEST_SHAPE (2, 5));
  g_autoptr(HpTensor) y_ref = NULL;
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) y_full = NULL;
  g_autoptr(HpTensor) loss_ref = NULL;
  g_autoptr(HpTensor) loss = NULL;

  /* 7 rows: uneven on every tp size but 1 and 7, empty shards on 8 */
  g_assert_true (hp_module_parallelize (parallel, mesh, &error));
  g_assert_no_error (error);
  g_assert_true (hp_module_init_states (parallel, 7, &error));
  g_assert_true (hp_module_init_states (reference, 7, &error));
  g_assert_no_error (error);
  assert_same_parameters (parallel, reference, FALSE);
  assert_parameter_placements (parallel, mesh, "weight", "S(0)");

  y_ref = hp_module_call1 (reference, ids, &error);
  y = hp_module_call1 (parallel, ids, &error);
  g_assert_no_error (error);
  assert_placements (y, mesh, output_sp ? "S(1)" : "R");
  y_full = whole (y);
  hp_test_assert_close (y_full, y_ref, 0, 0);

  loss_ref = weighted_loss (y_ref);
  loss = weighted_loss (y);
  g_assert_true (hp_tensor_backward (loss_ref, NULL, &error));
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);
  assert_same_parameters (parallel, reference, TRUE);
}

static void
test_embedding (void)
{
  check_embedding (FALSE, FALSE);
  check_embedding (FALSE, TRUE);
  check_embedding (TRUE, FALSE);
  check_embedding (TRUE, TRUE);
}

/* HpFeedForward */

static HpFeedForwardConfig *
ffn_config (gint dim,
            gint hidden_dim)
{
  g_autoptr(GError) error = NULL;
  HpFeedForwardConfig *config = HP_FEED_FORWARD_CONFIG (g_object_new (HP_TYPE_FEED_FORWARD_CONFIG,
                                                                      "dim", dim,
                                                                      "hidden-dim", hidden_dim,
                                                                      "dtype", HP_DTYPE_FLOAT64,
                                                                      NULL));
  const gchar *layers[] = { "w1.param-init", "w2.param-init", "w3.param-init" };

  for (guint i = 0; i < G_N_ELEMENTS (layers); i++)
    {
      g_assert_true (hp_config_set_path_from_string (HP_CONFIG (config), layers[i],
                                                     "weight=normal(std=0.5)", &error));
      g_assert_no_error (error);
    }
  return config;
}

static void
check_ffn (gboolean     two_dims,
           gboolean     enable_sp,
           const gchar *input_tp)
{
  g_autoptr(HpDeviceMesh) mesh = new_mesh (two_dims);
  g_autoptr(HpFeedForwardConfig) parallel_config = ffn_config (4, 6);
  g_autoptr(HpFeedForwardConfig) reference_config = ffn_config (4, 6);
  g_autoptr(HpModule) parallel = NULL;
  g_autoptr(HpModule) reference = build_module (HP_CONFIG (reference_config));

  hp_set_dense_ffn_sharding (parallel_config, enable_sp);
  parallel = build_module (HP_CONFIG (parallel_config));

  /* hidden 6 on 4 or 8 ranks, sequence 5 */
  assert_equals_one_rank (parallel, reference, mesh, HP_TEST_SHAPE (2, 5, 4), input_tp,
                          enable_sp ? "S(1)" : "R");
  assert_parameter_placements (parallel, mesh, "w1.weight", "S(0)");
  assert_parameter_placements (parallel, mesh, "w2.weight", "S(1)");
  assert_parameter_placements (parallel, mesh, "w3.weight", "S(0)");
}

static void
test_ffn (void)
{
  check_ffn (FALSE, TRUE, "S(1)");
  check_ffn (FALSE, FALSE, "R");
  check_ffn (TRUE, TRUE, "S(1)");
  check_ffn (TRUE, FALSE, "R");
}

/* Without sequence parallelism a plain input is the whole tensor */
static void
test_ffn_plain_input (void)
{
  check_ffn (FALSE, FALSE, NULL);
  check_ffn (TRUE, FALSE, NULL);
}

/* Data and tensor parallelism: each `dp` group runs its part of the
 * batch through a block laid out on its `tp` slice; the sum of the
 * groups' gradients over `dp` (what a data-parallel trainer all-reduces)
 * is the gradient of the whole batch */
static void
test_ffn_data_parallel (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = new_mesh (TRUE);
  g_autoptr(HpDeviceMesh) tp = hp_device_mesh_slice (mesh, (const gchar *[]) { "tp", NULL }, &error);
  g_autoptr(HpFeedForwardConfig) parallel_config = ffn_config (4, 6);
  g_autoptr(HpFeedForwardConfig) reference_config = ffn_config (4, 6);
  g_autoptr(HpModule) parallel = NULL;
  g_autoptr(HpModule) reference = build_module (HP_CONFIG (reference_config));
  g_autoptr(HpTensor) x_ref = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 5, 4), 3, TRUE);
  g_autoptr(HpTensor) x = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (4, 5, 4), 3, TRUE);
  g_autoptr(HpTensor) part = NULL;
  g_autoptr(HpTensor) input = NULL;
  g_autoptr(HpTensor) y_ref = NULL;
  g_autoptr(HpTensor) y_ref_part = NULL;
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) y_full = NULL;
  g_autoptr(HpTensor) loss_ref = NULL;
  g_autoptr(HpTensor) loss = NULL;
  g_autoptr(HpTensor) x_grad_part = NULL;
  g_autoptr(GPtrArray) sequence = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(HpStateDict) params = NULL;
  gint dp = hp_device_mesh_get_shape (mesh, NULL)[0];
  gint group = hp_device_mesh_get_local_rank (mesh, 0);
  gint64 rows = 4 / dp;

  g_assert_no_error (error);
  hp_set_dense_ffn_sharding (parallel_config, TRUE);
  parallel = build_module (HP_CONFIG (parallel_config));
  g_assert_true (hp_module_parallelize (parallel, tp, &error));
  g_assert_true (hp_module_init_states (parallel, 7, &error));
  g_assert_true (hp_module_init_states (reference, 7, &error));
  g_assert_no_error (error);

  /* this group's rows of the batch, sequence-sharded over tp */
  part = hp_tensor_narrow (x, 0, group * rows, rows, &error);
  g_assert_no_error (error);
  g_ptr_array_add (sequence, hp_shard_new (1));
  input = HP_TENSOR (hp_dtensor_distribute (part, tp, sequence, -1, &error));
  g_assert_no_error (error);

  y_ref = hp_module_call1 (reference, x_ref, &error);
  g_assert_no_error (error);
  y = hp_module_call1 (parallel, input, &error);
  g_assert_no_error (error);
  y_full = whole (y);
  y_ref_part = hp_tensor_narrow (y_ref, 0, group * rows, rows, &error);
  g_assert_no_error (error);
  hp_test_assert_close (y_full, y_ref_part, TOLERANCE, TOLERANCE);

  loss_ref = hp_tensor_sum_all (y_ref, &error);
  loss = hp_tensor_sum_all (y, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (loss_ref, NULL, &error));
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);

  /* the input gradient of this group's rows */
  x_grad_part = hp_tensor_narrow (hp_tensor_get_grad (x_ref), 0, group * rows, rows, &error);
  g_assert_no_error (error);
  {
    g_autoptr(HpTensor) mine = hp_tensor_narrow (hp_tensor_get_grad (x), 0, group * rows, rows, &error);

    g_assert_no_error (error);
    hp_test_assert_close (mine, x_grad_part, TOLERANCE, TOLERANCE);
  }

  /* parameter gradients summed over dp */
  params = hp_module_named_parameters (parallel);
  for (guint i = 0; i < hp_state_dict_get_size (params); i++)
    {
      const gchar *name = hp_state_dict_get_name (params, i);
      g_autoptr(HpTensor) grad = whole (hp_tensor_get_grad (hp_state_dict_get_tensor (params, i)));
      gsize n;
      g_autofree gdouble *values = hp_tensor_to_float64_array (grad, &n);
      g_autoptr(HpTensor) summed = NULL;
      guint ndim;
      const gint64 *shape = hp_tensor_get_shape (grad, &ndim);

      g_assert_cmpint (MPI_Allreduce (MPI_IN_PLACE, values, (int) n, MPI_DOUBLE, MPI_SUM,
                                      hp_device_mesh_get_dim_comm (mesh, 0)), ==, MPI_SUCCESS);
      summed = hp_test_tensor (HP_DTYPE_FLOAT64, values, n, shape, ndim);
      hp_test_assert_close (summed, hp_tensor_get_grad (hp_module_get_parameter (reference, name)),
                            TOLERANCE, TOLERANCE);
    }
}

int
main (int    argc,
      char **argv)
{
  hp_test_init (&argc, &argv);

  g_test_add_func ("/nn-tp/linear/colwise", test_colwise);
  g_test_add_func ("/nn-tp/linear/colwise-plain-input", test_colwise_plain_input);
  g_test_add_func ("/nn-tp/linear/rowwise", test_rowwise);
  g_test_add_func ("/nn-tp/linear/rowwise-replicated-input", test_rowwise_replicated_input);
  g_test_add_func ("/nn-tp/rms-norm/styles", test_norm);
  g_test_add_func ("/nn-tp/rms-norm/wrong-input", test_norm_wrong_input);
  g_test_add_func ("/nn-tp/embedding/vocab-parallel", test_embedding);
  g_test_add_func ("/nn-tp/feed-forward/dense", test_ffn);
  g_test_add_func ("/nn-tp/feed-forward/plain-input", test_ffn_plain_input);
  g_test_add_func ("/nn-tp/feed-forward/data-parallel", test_ffn_data_parallel);

  return g_test_run ();
}
