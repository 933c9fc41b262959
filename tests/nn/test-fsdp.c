/* test-fsdp.c: a decoder under fully sharded data parallelism (FSDP,
 * HSDP, FSDP x TP) trains as on one rank
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi). Each layout that fits the
 * world size trains a small decoder for ten AdamW steps with clipped
 * gradients; every rank takes its share of the batch, and the mean loss
 * and the final weights match one rank training on the whole batch.
 * The vocabulary (11) and the hidden size (12) do not divide most
 * dp_shard degrees, so shards are uneven. Both reshard-after-forward
 * choices run; the wide cases have gathered weights of several pages,
 * whose memory resharding gives back and gathers again.
 */

#include <math.h>
#include <string.h>

#include "hp-test-utils.h"

static gint world_size;

typedef struct
{
  HpDType dtype;
  gint dp_replicate;            /* 0: as many as fit after the others */
  gint dp_shard;                /* 0: the rest of the world */
  gint tp;
  HpActivationCheckpointing ac;
  gboolean reshard;             /* reshard after forward */
  gint width;                   /* dim 8 * tp * width: 12 puts whole pages in the weights */
  gboolean tied;                /* the head is the embedding table */
} Case;

static HpDecoderConfig *
decoder_config (gint        tp,
                const Case *c)
{
  return g_object_new (HP_TYPE_DECODER_CONFIG,
                       "dim", 8 * tp * MAX (c->width, 1), "n-layers", 2, "n-heads", 2 * tp, "n-kv-heads", tp,
                       "vocab-size", 11, "ffn-hidden", 12, "max-seq-len", 16,
                       "dtype", c->dtype, "activation-checkpointing", c->ac,
                       "tie-word-embeddings", c->tied,
                       NULL);
}

static HpModule *
build (HpDecoderConfig *config,
       gint             tp,
       HpDeviceMesh    *tp_mesh)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParallelDims) dims = hp_parallel_dims_new ();
  g_autoptr(HpParallelDims) resolved = NULL;

  g_object_set (dims, "dp-shard", 1, "tp", tp, NULL);
  resolved = hp_parallel_dims_resolve (dims, tp, &error);
  g_assert_no_error (error);
  return hp_test_decoder_build (config, resolved, tp_mesh);
}

/* Ten steps of @model on rows [first, first + rows) of each batch; the
 * losses averaged over @dp_meshes */
static void
train (HpModule      *model,
       HpDeviceMesh  *tp_mesh,
       HpDeviceMesh **dp_meshes,
       guint          n_dp_meshes,
       gint           first,
       gint           rows,
       gdouble       *losses)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) params = hp_module_parameters (model);
  g_autoptr(HpOptimizerConfig) config = g_object_new (HP_TYPE_ADAMW_CONFIG, "lr", 0.01,
                                                      "weight-decay", 0.1, NULL);
  g_autoptr(HpOptimizer) optimizer = hp_optimizer_config_build_optimizer (config, params, &error);

  g_assert_no_error (error);
  for (gint step = 0; step < 10; step++)
    {
      g_autoptr(HpTensor) ids = NULL;
      g_autoptr(HpTensor) targets = NULL;
      g_autoptr(HpTensor) logits = NULL;
      g_autoptr(HpTensor) loss = NULL;
      g_autoptr(HpTensor) whole = NULL;

      hp_test_token_batch (step, first, rows, &ids, &targets);
      if (tp_mesh != NULL)
        {
          HpTensor *local = targets;

          targets = HP_TENSOR (hp_test_local_dtensor (local, tp_mesh, "R"));
          g_object_unref (local);
        }
      hp_optimizer_zero_grad (optimizer);
      logits = hp_module_call1 (model, ids, &error);
      g_assert_no_error (error);
      loss = hp_tensor_cross_entropy (logits, targets, -100, &error);
      g_assert_no_error (error);
      g_assert_true (hp_tensor_backward (loss, NULL, &error));
      g_assert_no_error (error);
      hp_clip_grad_norm (params, 1.0, 2.0, &error);
      g_assert_no_error (error);
      g_assert_true (hp_optimizer_step (optimizer, &error));
      whole = HP_IS_DTENSOR (loss) ? hp_test_full_tensor (loss) : g_object_ref (loss);
      losses[step] = hp_tensor_item (whole, &error);
      g_assert_no_error (error);
      for (guint m = 0; m < n_dp_meshes; m++)
        g_assert_true (hp_data_parallel_average_scalar (dp_meshes[m], &losses[step], &error));
      g_assert_no_error (error);
    }
}

/* The blocks and then the root, as units over @mesh */
static void
fully_shard (HpModule     *model,
             HpDeviceMesh *mesh,
             gboolean      reshard)
{
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < 2; i++)
    {
      g_autofree gchar *path = g_strdup_printf ("layers.%u", i);

      g_assert_true (hp_module_fully_shard (hp_module_get_child (model, path), mesh, reshard,
                                            &error));
      g_assert_no_error (error);
    }
  g_assert_true (hp_module_fully_shard (model, mesh, reshard, &error));
  g_assert_no_error (error);
}

/* The degrees of @c on this world size, its zeros filled in; whether
 * they multiply to the world size */
static gboolean
resolve_layout (const Case *c,
                gint       *dp_replicate,
                gint       *dp_shard)
{
  *dp_replicate = c->dp_replicate;
  *dp_shard = c->dp_shard;
  if (*dp_shard == 0)
    *dp_shard = world_size / (c->tp * MAX (*dp_replicate, 1));
  if (*dp_replicate == 0)
    *dp_replicate = *dp_shard > 0 ? world_size / (c->tp * *dp_shard) : 0;
  return *dp_shard >= 1 && *dp_replicate * *dp_shard * c->tp == world_size;
}

static void
test_layout (gconstpointer data)
{
  const Case *c = data;
  g_autoptr(GError) error = NULL;
  gint tp = c->tp;
  gint dp_replicate;
  gint dp_shard;
  gint shape[3];
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpDeviceMesh) tp_mesh = NULL;
  g_autoptr(HpDeviceMesh) shard_mesh = NULL;
  g_autoptr(HpDeviceMesh) replicate_mesh = NULL;
  g_autoptr(HpDecoderConfig) reference_config = decoder_config (tp, c);
  g_autoptr(HpDecoderConfig) config = decoder_config (tp, c);
  g_autoptr(HpModule) reference = NULL;
  g_autoptr(HpModule) model = NULL;
  g_autoptr(HpModule) unfetched = NULL;
  g_autoptr(HpStateDict) params = NULL;
  g_autoptr(HpStateDict) unfetched_params = NULL;
  g_autoptr(HpStateDict) expected = NULL;
  HpDeviceMesh *dp_meshes[2];
  gdouble losses[10], reference_losses[10], unfetched_losses[10];
  gdouble rtol = c->dtype == HP_DTYPE_FLOAT64 ? 1e-10 : 1e-5;
  gint dp_index;

  g_assert_true (resolve_layout (c, &dp_replicate, &dp_shard));
  shape[0] = dp_replicate;
  shape[1] = dp_shard;
  shape[2] = tp;
  mesh = hp_device_mesh_new (shape, 3, (const gchar *[]) { "dp_replicate", "dp_shard", "tp", NULL },
                             &error);
  g_assert_no_error (error);
  tp_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "tp", NULL }, &error);
  shard_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "dp_shard", NULL }, &error);
  replicate_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "dp_replicate", NULL }, &error);
  g_assert_no_error (error);
  dp_meshes[0] = shard_mesh;
  dp_meshes[1] = replicate_mesh;

  reference = build (reference_config, 1, NULL);
  model = build (config, tp, tp > 1 ? tp_mesh : NULL);
  fully_shard (model, mesh, c->reshard);
  unfetched = build (config, tp, tp > 1 ? tp_mesh : NULL);
  fully_shard (unfetched, mesh, c->reshard);
  g_assert_cmpuint (hp_module_set_fsdp_prefetch (unfetched, FALSE), ==, 3);
  g_assert_true (HP_IS_DTENSOR (hp_module_get_parameter (model, "layers.0.feed_forward.w1.weight")));
  g_assert_true (HP_IS_DTENSOR (hp_module_get_parameter (model, "norm.weight")));
  if (c->tied)
    g_assert_true (hp_module_get_parameter (model, "tok_embeddings.weight") ==
                   hp_module_get_parameter (model, "lm_head.weight"));

  dp_index = hp_device_mesh_get_local_rank (replicate_mesh, 0) * dp_shard +
             hp_device_mesh_get_local_rank (shard_mesh, 0);
  train (reference, NULL, NULL, 0, 0, 2 * dp_replicate * dp_shard, reference_losses);
  train (model, tp > 1 ? tp_mesh : NULL, dp_meshes, 2, 2 * dp_index, 2, losses);
  train (unfetched, tp > 1 ? tp_mesh : NULL, dp_meshes, 2, 2 * dp_index, 2, unfetched_losses);
  for (gint step = 0; step < 10; step++)
    {
      g_assert_cmpfloat_with_epsilon (losses[step], reference_losses[step],
                                      rtol * fabs (reference_losses[step]));
      /* prefetch changes when the gathers travel, not a bit of the numbers */
      g_assert_cmpmem (&losses[step], sizeof (gdouble), &unfetched_losses[step], sizeof (gdouble));
    }

  params = hp_module_named_parameters (model);
  unfetched_params = hp_module_named_parameters (unfetched);
  expected = hp_module_named_parameters (reference);
  g_assert_cmpuint (hp_state_dict_get_size (params), ==, hp_state_dict_get_size (expected));
  for (guint i = 0; i < hp_state_dict_get_size (params); i++)
    {
      g_autoptr(HpTensor) full = hp_test_full_tensor (hp_state_dict_get_tensor (params, i));
      g_autoptr(HpTensor) unfetched_full =
        hp_test_full_tensor (hp_state_dict_get_tensor (unfetched_params, i));

      g_assert_cmpstr (hp_state_dict_get_name (params, i), ==, hp_state_dict_get_name (expected, i));
      hp_test_assert_close (full, hp_state_dict_get_tensor (expected, i), rtol * 100, rtol);
      hp_test_assert_close (full, unfetched_full, 0, 0);
    }
}

static void
test_errors (void)
{
  g_autoptr(GError) error = NULL;
  Case c = { HP_DTYPE_FLOAT64, 1, 1, 1, HP_ACTIVATION_CHECKPOINTING_NONE, TRUE };
  g_autoptr(HpDecoderConfig) config = decoder_config (1, &c);
  g_autoptr(HpModule) model = build (config, 1, NULL);
  gint shape[] = { world_size };
  g_autoptr(HpDeviceMesh) no_shard = hp_device_mesh_new (shape, 1, (const gchar *[]) { "dp", NULL },
                                                         &error);
  g_autoptr(HpDeviceMesh) mesh = NULL;
  HpTensor *before = hp_module_get_parameter (model, "norm.weight");

  g_assert_no_error (error);
  g_assert_false (hp_module_fully_shard (model, no_shard, TRUE, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_MESH);
  g_assert_nonnull (strstr (error->message, "fully_shard needs a mesh with a dp_shard dim"));
  g_clear_error (&error);
  g_assert_true (hp_module_get_parameter (model, "norm.weight") == before);

  mesh = hp_device_mesh_new (shape, 1, (const gchar *[]) { "dp_shard", NULL }, &error);
  g_assert_true (hp_module_fully_shard (model, mesh, TRUE, &error));
  g_assert_no_error (error);
  g_assert_false (hp_module_fully_shard (model, mesh, FALSE, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_STATE);
  g_assert_nonnull (strstr (error->message, "fully_shard was called on this module already"));
}

/* What the ranks other than 0 do while rank 0 makes an FSDP
 * collective: another one, which fails with HP_ERROR_MPI on them too */
static void
make_another_collective (HpDeviceMesh *mesh)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sharded = hp_placements_new_from_string ("S(0)", &error);
  g_autoptr(GPtrArray) replicated = hp_placements_new_from_string ("R", &error);
  g_autoptr(HpTensor) local = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3, 5));
  g_autoptr(HpDTensor) other = hp_dtensor_new_from_local (local, mesh, sharded, NULL, 0, FALSE,
                                                          &error);

  g_assert_no_error (error);
  g_assert_null (hp_dtensor_redistribute (other, replicated, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
}

/* A gather that fails (here: the other ranks make another collective)
 * fails the module call with HP_ERROR_MPI, and the module computes as
 * before once the ranks agree again */
static void
test_gather_failure (void)
{
  g_autoptr(GError) error = NULL;
  Case c = { HP_DTYPE_FLOAT64, 1, 0, 1, HP_ACTIVATION_CHECKPOINTING_NONE, TRUE };
  g_autoptr(HpDecoderConfig) config = decoder_config (1, &c);
  g_autoptr(HpModule) model = build (config, 1, NULL);
  g_autoptr(HpModule) reference = build (config, 1, NULL);
  gint shape[] = { world_size };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpTensor) ids = NULL;
  g_autoptr(HpTensor) targets = NULL;
  g_autoptr(HpTensor) logits = NULL;
  g_autoptr(HpTensor) expected = NULL;

  mesh = hp_device_mesh_new (shape, 1, (const gchar *[]) { "dp_shard", NULL }, &error);
  g_assert_no_error (error);
  fully_shard (model, mesh, TRUE);
  hp_test_token_batch (0, 0, 2, &ids, &targets);

  if (hp_get_world_rank () == 0)
    {
      g_assert_null (hp_module_call1 (model, ids, &error));
      g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
    }
  else
    make_another_collective (mesh);
  g_clear_error (&error);

  logits = hp_module_call1 (model, ids, &error);
  g_assert_no_error (error);
  expected = hp_module_call1 (reference, ids, &error);
  g_assert_no_error (error);
  hp_test_assert_close (logits, expected, 0, 0);
}

/* A gradient's reduce-scatter that fails (the other ranks make another
 * collective) fails the backward with HP_ERROR_MPI and sets no
 * gradient; a backward after it gives the gradients of one rank */
static void
test_reduce_scatter_failure (void)
{
  g_autoptr(GError) error = NULL;
  Case c = { HP_DTYPE_FLOAT64, 1, 0, 1, HP_ACTIVATION_CHECKPOINTING_NONE, FALSE };
  g_autoptr(HpDecoderConfig) config = decoder_config (1, &c);
  g_autoptr(HpModule) model = build (config, 1, NULL);
  g_autoptr(HpModule) reference = build (config, 1, NULL);
  gint shape[] = { world_size };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpTensor) ids = NULL;
  g_autoptr(HpTensor) targets = NULL;
  g_autoptr(HpTensor) full = NULL;
  const gchar *name = "layers.0.feed_forward.w1.weight";

  mesh = hp_device_mesh_new (shape, 1, (const gchar *[]) { "dp_shard", NULL }, &error);
  g_assert_no_error (error);
  /* without resharding, the backward's first collective is a reduce-scatter */
  fully_shard (model, mesh, FALSE);
  hp_test_token_batch (0, 0, 2, &ids, &targets);

  for (gint round = 0; round < 2; round++)
    {
      g_autoptr(HpTensor) logits = hp_module_call1 (model, ids, &error);
      g_autoptr(HpTensor) loss = NULL;

      g_assert_no_error (error);
      loss = hp_tensor_cross_entropy (logits, targets, -100, &error);
      g_assert_no_error (error);
      if (round == 1)
        {
          g_assert_true (hp_tensor_backward (loss, NULL, &error));
          g_assert_no_error (error);
        }
      else if (hp_get_world_rank () == 0)
        {
          g_assert_false (hp_tensor_backward (loss, NULL, &error));
          g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
          g_assert_nonnull (strstr (error->message, "fsdp_reduce_scatter"));
          g_assert_null (hp_tensor_get_grad (hp_module_get_parameter (model, name)));
        }
      else
        make_another_collective (mesh);
      g_clear_error (&error);
    }

  {
    g_autoptr(HpTensor) logits = hp_module_call1 (reference, ids, &error);
    g_autoptr(HpTensor) loss = NULL;

    g_assert_no_error (error);
    loss = hp_tensor_cross_entropy (logits, targets, -100, &error);
    g_assert_no_error (error);
    g_assert_true (hp_tensor_backward (loss, NULL, &error));
    g_assert_no_error (error);
  }
  full = hp_test_full_tensor (hp_tensor_get_grad (hp_module_get_parameter (model, name)));
  hp_test_assert_close (full, hp_tensor_get_grad (hp_module_get_parameter (reference, name)),
                        1e-12, 1e-12);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  static const Case cases[] = {
    { HP_DTYPE_FLOAT64, 1, 0, 1, HP_ACTIVATION_CHECKPOINTING_NONE, TRUE },
    { HP_DTYPE_FLOAT64, 1, 0, 1, HP_ACTIVATION_CHECKPOINTING_NONE, FALSE },
    { HP_DTYPE_FLOAT32, 1, 0, 1, HP_ACTIVATION_CHECKPOINTING_NONE, TRUE },
    { HP_DTYPE_FLOAT64, 1, 0, 1, HP_ACTIVATION_CHECKPOINTING_FULL, TRUE },
    { HP_DTYPE_FLOAT64, 1, 0, 1, HP_ACTIVATION_CHECKPOINTING_FULL, FALSE },
    { HP_DTYPE_FLOAT64, 2, 0, 1, HP_ACTIVATION_CHECKPOINTING_NONE, TRUE },
    { HP_DTYPE_FLOAT64, 1, 0, 2, HP_ACTIVATION_CHECKPOINTING_NONE, TRUE },
    { HP_DTYPE_FLOAT64, 1, 0, 2, HP_ACTIVATION_CHECKPOINTING_NONE, FALSE },
    { HP_DTYPE_FLOAT32, 1, 0, 2, HP_ACTIVATION_CHECKPOINTING_FULL, TRUE },
    { HP_DTYPE_FLOAT64, 2, 0, 2, HP_ACTIVATION_CHECKPOINTING_FULL, TRUE },
    { HP_DTYPE_FLOAT64, 1, 0, 1, HP_ACTIVATION_CHECKPOINTING_NONE, TRUE, 12 },
    { HP_DTYPE_FLOAT64, 1, 0, 2, HP_ACTIVATION_CHECKPOINTING_FULL, TRUE, 12 },
    { HP_DTYPE_FLOAT64, 1, 0, 1, HP_ACTIVATION_CHECKPOINTING_NONE, TRUE, 12, TRUE },
    { HP_DTYPE_FLOAT64, 1, 0, 2, HP_ACTIVATION_CHECKPOINTING_NONE, TRUE, 1, TRUE },
  };
  static const gchar *names[] = {
    "fsdp/float64", "fsdp/float64/keep", "fsdp/float32", "fsdp/float64/ac",
    "fsdp/float64/ac/keep", "hsdp/float64", "fsdp-tp/float64", "fsdp-tp/float64/keep",
    "fsdp-tp/float32/ac", "hsdp-tp/float64/ac", "fsdp/float64/wide", "fsdp-tp/float64/ac/wide",
    "fsdp/float64/wide/tied", "fsdp-tp/float64/tied",
  };

  hp_test_init (&argc, &argv);
  g_assert_true (hp_init (&error));
  world_size = hp_get_world_size ();

  /* a layout whose degrees do not multiply to the world size is not
   * one of this run's cases: the mpi suite runs it on the sizes it fits */
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree gchar *path = g_strdup_printf ("/fsdp/%s", names[i]);
      gint dp_replicate, dp_shard;

      if (resolve_layout (&cases[i], &dp_replicate, &dp_shard))
        g_test_add_data_func (path, &cases[i], test_layout);
    }
  g_test_add_func ("/fsdp/errors", test_errors);
  if (world_size >= 2)
    {
      g_test_add_func ("/fsdp/gather-failure", test_gather_failure);
      g_test_add_func ("/fsdp/reduce-scatter-failure", test_reduce_scatter_failure);
    }
  return g_test_run ();
}
