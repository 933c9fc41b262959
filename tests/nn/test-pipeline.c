/* test-pipeline.c: pipeline parallelism of the decoder (GPipe, 1F1B),
 * alone and with tensor and data parallelism, against one rank
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every rank first trains the whole decoder alone; the layouts that fit
 * the world size then train it split into stages and must give the same
 * loss curve and the same final weights, and the same loss on a batch
 * it never trains on, evaluated halfway through and at the end.
 */

#include <math.h>
#include <string.h>

#include <hp-protocols/hp-protocols.h>
#include <hp-protocols/hp-mpi.h>

#include "hp-test-utils.h"

#define N_STEPS 10
#define BATCH 8
#define SEQ 6
#define VOCAB 11
/* the step before which both models are evaluated, as after the last */
#define EVAL_AT (N_STEPS / 2)

typedef struct
{
  gint pp, dp, tp, fsdp;      /* fsdp: the dp_shard degree */
  HpPipelineScheduleKind kind;
  guint microbatches;
  HpDType dtype;
  gboolean checkpointed;
} Case;

static HpDecoderConfig *
decoder_config (const Case *c,
                gint        tp)
{
  return g_object_new (HP_TYPE_DECODER_CONFIG,
                       "dim", 8 * tp, "n-layers", 3, "n-heads", 2 * tp, "n-kv-heads", tp,
                       "vocab-size", VOCAB, "ffn-hidden", 12, "max-seq-len", 16,
                       "dtype", c->dtype,
                       "activation-checkpointing", c->checkpointed ? HP_ACTIVATION_CHECKPOINTING_FULL
                                                                   : HP_ACTIVATION_CHECKPOINTING_NONE,
                       NULL);
}

/* Rows [first, first + rows) of step @step's batch */
static void
make_batch (gint       step,
            gint       first,
            gint       rows,
            HpTensor **ids,
            HpTensor **targets)
{
  g_autofree gint64 *a = g_new (gint64, rows * SEQ);
  g_autofree gint64 *b = g_new (gint64, rows * SEQ);

  for (gint r = 0; r < rows; r++)
    for (gint s = 0; s < SEQ; s++)
      {
        gint row = step * BATCH + first + r;

        a[r * SEQ + s] = (row * 7 + s * 3) % VOCAB;
        b[r * SEQ + s] = (row * 5 + s * 4 + 1) % VOCAB;
      }
  *ids = hp_test_tensor_ids (a, rows * SEQ, HP_TEST_SHAPE (rows, SEQ));
  *targets = hp_test_tensor_ids (b, rows * SEQ, HP_TEST_SHAPE (rows, SEQ));
}

static HpOptimizer *
new_optimizer (GPtrArray *params)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpAdamWConfig) config = hp_adamw_config_new ();
  HpOptimizer *optimizer;

  hp_optimizer_config_set_weight_decay (HP_OPTIMIZER_CONFIG (config), 0.0);
  optimizer = hp_optimizer_config_build_optimizer (HP_OPTIMIZER_CONFIG (config), params, &error);
  g_assert_no_error (error);
  return optimizer;
}

/* The whole decoder's loss on the batch after the training ones,
 * without gradients */
static gdouble
evaluate_alone (HpModule *model)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ids = NULL;
  g_autoptr(HpTensor) targets = NULL;
  g_autoptr(HpTensor) logits = NULL;
  g_autoptr(HpTensor) loss = NULL;
  gdouble value;

  make_batch (N_STEPS, 0, BATCH, &ids, &targets);
  hp_grad_mode_set_enabled (FALSE);
  logits = hp_module_call1 (model, ids, &error);
  g_assert_no_error (error);
  loss = hp_tensor_cross_entropy (logits, targets, -100, &error);
  g_assert_no_error (error);
  value = hp_tensor_item (loss, &error);
  g_assert_no_error (error);
  hp_grad_mode_set_enabled (TRUE);
  return value;
}

/* The loss curve, the evaluations (before step EVAL_AT and at the end)
 * and final weights of the whole decoder on one rank */
static HpModule *
train_alone (const Case *c,
             gdouble    *losses,
             gdouble    *evals)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoderConfig) config = decoder_config (c, c->tp);
  g_autoptr(GObject) model = hp_config_build (HP_CONFIG (config), &error);
  g_autoptr(GPtrArray) params = NULL;
  g_autoptr(HpOptimizer) optimizer = NULL;

  g_assert_no_error (error);
  g_assert_true (hp_module_init_states (HP_MODULE (model), 7, &error));
  params = hp_module_parameters (HP_MODULE (model));
  optimizer = new_optimizer (params);
  for (gint step = 0; step < N_STEPS; step++)
    {
      g_autoptr(HpTensor) ids = NULL;
      g_autoptr(HpTensor) targets = NULL;
      g_autoptr(HpTensor) logits = NULL;
      g_autoptr(HpTensor) loss = NULL;

      if (step == EVAL_AT)
        evals[0] = evaluate_alone (HP_MODULE (model));
      make_batch (step, 0, BATCH, &ids, &targets);
      logits = hp_module_call1 (HP_MODULE (model), ids, &error);
      g_assert_no_error (error);
      loss = hp_tensor_cross_entropy (logits, targets, -100, &error);
      g_assert_no_error (error);
      g_assert_true (hp_tensor_backward (loss, NULL, &error));
      losses[step] = hp_tensor_item (loss, &error);
      g_assert_true (hp_optimizer_step (optimizer, &error));
      hp_optimizer_zero_grad (optimizer);
    }
  evals[1] = evaluate_alone (HP_MODULE (model));
  return HP_MODULE (g_steal_pointer (&model));
}

typedef struct
{
  HpModule *model;
  HpDeviceMesh *tp_mesh;
  GPtrArray *ids;
  GPtrArray *targets;
} Stage;

static HpTensor *
replicated (HpTensor     *tensor,
            HpDeviceMesh *tp_mesh,
            GError      **error)
{
  g_autoptr(GPtrArray) replicate = NULL;

  if (tp_mesh == NULL)
    return g_object_ref (tensor);
  replicate = hp_placements_new_from_string ("R", error);
  return HP_TENSOR (hp_dtensor_new_from_local (tensor, tp_mesh, replicate, NULL, 0, FALSE, error));
}

static HpTensor *
stage_forward (HpPipelineSchedule  *schedule,
               guint                microbatch,
               HpTensor            *input,
               gpointer             user_data,
               GError             **error)
{
  Stage *stage = user_data;
  g_autoptr(HpTensor) in = input != NULL ? replicated (input, stage->tp_mesh, error)
                                         : g_object_ref (g_ptr_array_index (stage->ids, microbatch));
  g_autoptr(HpTensor) out = in != NULL ? hp_module_call1 (stage->model, in, error) : NULL;
  g_autoptr(HpTensor) targets = NULL;

  if (out == NULL || !hp_pipeline_schedule_is_last_stage (schedule))
    return g_steal_pointer (&out);
  targets = replicated (g_ptr_array_index (stage->targets, microbatch), stage->tp_mesh, error);
  return targets != NULL ? hp_tensor_cross_entropy (out, targets, -100, error) : NULL;
}

/* The replicas' mean loss on their rows [first, first + rows) of the
 * batch after the training ones, through the pipeline without
 * gradients: the stage's parameters keep none */
static gdouble
evaluate_stages (HpPipelineSchedule *schedule,
                 Stage              *stage,
                 GPtrArray          *params,
                 HpDeviceMesh       *dp_mesh,
                 HpDeviceMesh       *shard_mesh,
                 gint                first,
                 gint                rows)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ids = NULL;
  g_autoptr(HpTensor) targets = NULL;
  gdouble loss;

  make_batch (N_STEPS, first, rows, &ids, &targets);
  stage->ids = hp_pipeline_schedule_split (schedule, ids, &error);
  stage->targets = hp_pipeline_schedule_split (schedule, targets, &error);
  g_assert_no_error (error);
  loss = hp_pipeline_schedule_evaluate (schedule, stage_forward, stage, &error);
  g_assert_no_error (error);
  g_clear_pointer (&stage->ids, g_ptr_array_unref);
  g_clear_pointer (&stage->targets, g_ptr_array_unref);
  g_assert_true (hp_grad_mode_is_enabled ());
  for (guint i = 0; i < params->len; i++)
    g_assert_null (hp_tensor_get_grad (g_ptr_array_index (params, i)));
  if (dp_mesh != NULL)
    g_assert_true (hp_data_parallel_average_scalar (dp_mesh, &loss, &error));
  if (shard_mesh != NULL)
    g_assert_true (hp_data_parallel_average_scalar (shard_mesh, &loss, &error));
  g_assert_no_error (error);
  return loss;
}

static void
test_layout (gconstpointer data)
{
  const Case *c = data;
  g_autoptr(GError) error = NULL;
  gdouble expected[N_STEPS];
  gdouble evals[2] = { NAN, NAN };
  g_autoptr(HpModule) alone = train_alone (c, expected, evals);
  g_autoptr(HpParallelDims) dims = hp_parallel_dims_new ();
  g_autoptr(HpParallelDims) resolved = NULL;
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpDeviceMesh) pp_mesh = NULL;
  g_autoptr(HpDeviceMesh) tp_mesh = NULL;
  g_autoptr(HpDeviceMesh) dp_mesh = NULL;
  g_autoptr(HpDeviceMesh) shard_mesh = NULL;
  g_autoptr(HpDecoderConfig) config = decoder_config (c, c->tp);
  g_autoptr(HpModelSpec) spec = hp_decoder_config_build_model_spec (config);
  g_autoptr(HpBaseModel) model = NULL;
  g_autoptr(GPtrArray) params = NULL;
  g_autoptr(HpOptimizer) optimizer = NULL;
  g_autoptr(HpPipelineSchedule) schedule = NULL;
  g_autoptr(HpStateDict) states = NULL;
  gdouble tolerance = c->dtype == HP_DTYPE_FLOAT64 ? 1e-10 : 1e-5;
  gint rows, first;
  Stage stage = { NULL };

  g_object_set (dims, "pp", c->pp, "dp-replicate", c->dp, "dp-shard", c->fsdp, "tp", c->tp, NULL);
  resolved = hp_parallel_dims_resolve (dims, c->pp * c->dp * c->fsdp * c->tp, &error);
  g_assert_no_error (error);
  mesh = hp_parallel_dims_build_mesh (resolved, &error);
  g_assert_no_error (error);
  if (c->pp > 1)
    pp_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "pp", NULL }, &error);
  if (c->tp > 1)
    tp_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "tp", NULL }, &error);
  if (c->dp > 1)
    dp_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "dp_replicate", NULL }, &error);
  if (c->fsdp > 1)
    shard_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "dp_shard", NULL }, &error);
  g_assert_no_error (error);
  if (pp_mesh == NULL)
    pp_mesh = g_object_ref (mesh);

  g_assert_true (hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config),
                                                          HP_CONFIG (resolved), &error));
  model = hp_model_spec_build_model (spec, &error);
  g_assert_no_error (error);
  g_assert_true (hp_model_spec_pipeline (spec, model, resolved, &error));
  g_assert_no_error (error);
  if (tp_mesh != NULL)
    g_assert_true (hp_module_parallelize (HP_MODULE (model), tp_mesh, &error));
  g_assert_true (hp_module_init_states (HP_MODULE (model), 7, &error));
  g_assert_no_error (error);
  /* FSDP: the stage's blocks, then its root, over the mesh without pp */
  if (c->fsdp > 1)
    {
      const gchar * const *all = hp_device_mesh_get_dim_names (mesh);
      const gchar *kept[HP_TENSOR_MAX_NDIM + 1] = { NULL };
      g_autoptr(HpDeviceMesh) fsdp_mesh = NULL;
      guint n = 0;

      /* the mesh has the dims of degree above 1 only */
      for (guint d = 0; all[d] != NULL; d++)
        if (!g_str_equal (all[d], "pp"))
          kept[n++] = all[d];
      fsdp_mesh = hp_device_mesh_slice (mesh, kept, &error);
      g_assert_no_error (error);
      for (guint i = 0; i < 3; i++)
        {
          g_autofree gchar *path = g_strdup_printf ("layers.%u", i);
          HpModule *block = hp_module_get_child (HP_MODULE (model), path);

          if (block != NULL)
            g_assert_true (hp_module_fully_shard (block, fsdp_mesh, i % 2 == 0, &error));
          g_assert_no_error (error);
        }
      g_assert_true (hp_module_fully_shard (HP_MODULE (model), fsdp_mesh, TRUE, &error));
      g_assert_no_error (error);
    }
  params = hp_module_parameters (HP_MODULE (model));
  optimizer = new_optimizer (params);
  schedule = hp_pipeline_schedule_new (pp_mesh, c->pp > 1 ? "pp" : NULL, c->kind,
                                       c->microbatches, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hp_pipeline_schedule_get_n_stages (schedule), ==, (guint) c->pp);

  rows = BATCH / (c->dp * c->fsdp);
  first = ((dp_mesh != NULL ? hp_device_mesh_get_local_rank (dp_mesh, 0) * c->fsdp : 0) +
           (shard_mesh != NULL ? hp_device_mesh_get_local_rank (shard_mesh, 0) : 0)) * rows;
  stage.model = HP_MODULE (model);
  stage.tp_mesh = tp_mesh;
  for (gint step = 0; step < N_STEPS; step++)
    {
      g_autoptr(HpTensor) ids = NULL;
      g_autoptr(HpTensor) targets = NULL;
      gdouble loss;

      if (step == EVAL_AT)
        {
          loss = evaluate_stages (schedule, &stage, params, dp_mesh, shard_mesh, first, rows);
          g_assert_cmpfloat_with_epsilon (loss, evals[0], tolerance * MAX (1, fabs (evals[0])));
        }
      make_batch (step, first, rows, &ids, &targets);
      stage.ids = hp_pipeline_schedule_split (schedule, ids, &error);
      stage.targets = hp_pipeline_schedule_split (schedule, targets, &error);
      g_assert_no_error (error);
      loss = hp_pipeline_schedule_step (schedule, stage_forward, &stage, &error);
      g_assert_no_error (error);
      g_clear_pointer (&stage.ids, g_ptr_array_unref);
      g_clear_pointer (&stage.targets, g_ptr_array_unref);
      /* FSDP averaged the gradients in the backward, over both data dims */
      if (dp_mesh != NULL && shard_mesh == NULL)
        g_assert_true (hp_data_parallel_average_gradients (params, dp_mesh, &error));
      if (dp_mesh != NULL)
        g_assert_true (hp_data_parallel_average_scalar (dp_mesh, &loss, &error));
      if (shard_mesh != NULL)
        g_assert_true (hp_data_parallel_average_scalar (shard_mesh, &loss, &error));
      g_assert_no_error (error);
      g_assert_cmpfloat_with_epsilon (loss, expected[step], tolerance * MAX (1, fabs (expected[step])));
      g_assert_true (hp_optimizer_step (optimizer, &error));
      hp_optimizer_zero_grad (optimizer);
    }
  {
    gdouble loss = evaluate_stages (schedule, &stage, params, dp_mesh, shard_mesh, first, rows);

    g_assert_cmpfloat_with_epsilon (loss, evals[1], tolerance * MAX (1, fabs (evals[1])));
  }

  /* the stage's tensors under the whole model's names, with its values */
  states = hp_module_state_dict (HP_MODULE (model));
  g_assert_cmpuint (hp_state_dict_get_size (states), >, 0);
  for (guint i = 0; i < hp_state_dict_get_size (states); i++)
    {
      const gchar *name = hp_state_dict_get_name (states, i);
      HpTensor *reference = hp_module_get_parameter (alone, name);
      HpTensor *mine = hp_state_dict_get_tensor (states, i);
      g_autoptr(HpTensor) full = HP_IS_DTENSOR (mine) ? hp_test_full_tensor (mine) : g_object_ref (mine);

      if (reference == NULL)
        reference = hp_module_get_buffer (alone, name);
      g_assert_nonnull (reference);
      hp_test_assert_close (full, reference, c->dtype == HP_DTYPE_FLOAT64 ? 1e-8 : 1e-4,
                            c->dtype == HP_DTYPE_FLOAT64 ? 1e-10 : 1e-5);
    }
}

/* The stages of 3 blocks, and what cannot be split */
static void
test_split (void)
{
  g_autoptr(GError) error = NULL;
  guint n;
  g_autoptr(HpDecoderConfig) config = g_object_new (HP_TYPE_DECODER_CONFIG, "dim", 8, "n-layers", 3,
                                                    "n-heads", 2, "vocab-size", VOCAB, NULL);
  g_autoptr(GObject) model = hp_config_build (HP_CONFIG (config), &error);
  g_autoptr(HpDecoderConfig) tied = g_object_new (HP_TYPE_DECODER_CONFIG, "dim", 8, "n-layers", 3,
                                                  "n-heads", 2, "vocab-size", VOCAB,
                                                  "tie-word-embeddings", TRUE, NULL);
  g_autoptr(GObject) tied_model = hp_config_build (HP_CONFIG (tied), &error);
  g_auto(GStrv) names = NULL;

  g_assert_no_error (error);
  g_assert_cmpuint (hp_decoder_stage_layers (3, 2, 0, &n), ==, 0);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpuint (hp_decoder_stage_layers (3, 2, 1, &n), ==, 2);
  g_assert_cmpuint (n, ==, 1);

  g_assert_false (hp_decoder_split_stage (HP_DECODER (model), 0, 4, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, "HpDecoder: n-layers 3 cannot be split into 4 pipeline "
                                       "stages: every stage needs a block");
  g_clear_error (&error);
  g_assert_false (hp_decoder_split_stage (HP_DECODER (tied_model), 0, 2, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED);
  g_assert_cmpstr (error->message, ==, "HpDecoder: tie-word-embeddings with 2 pipeline stages: "
                                       "the embedding of the first stage and the head of the "
                                       "last would be one tensor");
  g_clear_error (&error);

  g_assert_true (hp_decoder_split_stage (HP_DECODER (model), 1, 2, &error));
  g_assert_no_error (error);
  names = hp_module_get_parameter_names (HP_MODULE (model));
  {
    g_autoptr(HpStateDict) states = hp_module_state_dict (HP_MODULE (model));

    g_assert_nonnull (hp_state_dict_lookup (states, "layers.2.attention.wq.weight"));
    g_assert_nonnull (hp_state_dict_lookup (states, "lm_head.weight"));
    g_assert_null (hp_state_dict_lookup (states, "tok_embeddings.weight"));
    g_assert_null (hp_state_dict_lookup (states, "layers.0.attention.wq.weight"));
  }
  g_assert_false (hp_decoder_split_stage (HP_DECODER (model), 1, 2, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, "HpDecoder: the decoder is a pipeline stage already");
  g_clear_error (&error);
  {
    g_autoptr(HpKVCache) cache = hp_kv_cache_new (3, 1, 8);
    g_autoptr(HpTensor) ids = hp_tensor_new_zeros (HP_DTYPE_INT64, HP_TEST_SHAPE (1, 2));

    g_assert_null (hp_decoder_forward_with_cache (HP_DECODER (model), ids, cache, &error));
    g_assert_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED);
    g_assert_cmpstr (error->message, ==, "HpDecoder.forward_with_cache: the decoder is one "
                                         "pipeline stage; generation runs on the whole model");
  }
}

static HpTensor *
no_output (HpPipelineSchedule  *schedule,
           guint                microbatch,
           HpTensor            *input,
           gpointer             user_data,
           GError             **error)
{
  return NULL;
}

static HpTensor *
not_a_loss (HpPipelineSchedule  *schedule,
            guint                microbatch,
            HpTensor            *input,
            gpointer             user_data,
            GError             **error)
{
  return hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (2, 3));
}

static HpTensor *
nan_loss (HpPipelineSchedule  *schedule,
          guint                microbatch,
          HpTensor            *input,
          gpointer             user_data,
          GError             **error)
{
  return hp_tensor_new_full (HP_DTYPE_FLOAT64, NULL, 0, NAN);
}

/* A batch that does not split into the microbatches, no microbatch, a
 * stage function that gives nothing, a loss of more than one element or
 * a NaN loss */
static void
test_schedule_errors (void)
{
  g_autoptr(GError) error = NULL;
  gint shape[] = { 1 };
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpPipelineSchedule) schedule = NULL;
  g_autoptr(HpTensor) batch = hp_tensor_new_zeros (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (6, 2));
  g_autoptr(GPtrArray) parts = NULL;

  /* one rank's own mesh: the world's would make every rank collective */
  mesh = hp_device_mesh_new_for_comm (MPI_COMM_SELF, shape, 1, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (hp_pipeline_schedule_new (mesh, NULL, HP_PIPELINE_SCHEDULE_KIND_GPIPE, 0, &error));
  g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, "HpPipelineSchedule: a step needs at least one "
                                       "microbatch, got 0");
  g_clear_error (&error);
  schedule = hp_pipeline_schedule_new (mesh, NULL, HP_PIPELINE_SCHEDULE_KIND_ONE_F_ONE_B, 4, &error);
  g_assert_no_error (error);
  parts = hp_pipeline_schedule_split (schedule, batch, &error);
  g_assert_null (parts);
  g_assert_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, "HpPipelineSchedule: a batch of 6 rows cannot be split "
                                       "into 4 microbatches of equal size");
  g_clear_error (&error);

  g_assert_true (isnan (hp_pipeline_schedule_step (schedule, no_output, NULL, &error)));
  g_assert_error (error, HP_ERROR, HP_ERROR_STATE);
  g_assert_cmpstr (error->message, ==, "HpPipelineSchedule: stage 0 gave no tensor for "
                                       "microbatch 0");
  g_clear_error (&error);
  g_assert_true (isnan (hp_pipeline_schedule_step (schedule, not_a_loss, NULL, &error)));
  g_assert_error (error, HP_ERROR, HP_ERROR_SHAPE);
  g_assert_cmpstr (error->message, ==, "HpPipelineSchedule: the last stage's loss of microbatch "
                                       "0 has shape [2, 3], but a loss has one element");
  g_clear_error (&error);

  /* an evaluation fails alike, and gives recording back */
  g_assert_true (isnan (hp_pipeline_schedule_evaluate (schedule, no_output, NULL, &error)));
  g_assert_error (error, HP_ERROR, HP_ERROR_STATE);
  g_assert_cmpstr (error->message, ==, "HpPipelineSchedule: stage 0 gave no tensor for "
                                       "microbatch 0");
  g_clear_error (&error);
  g_assert_true (isnan (hp_pipeline_schedule_evaluate (schedule, not_a_loss, NULL, &error)));
  g_assert_error (error, HP_ERROR, HP_ERROR_SHAPE);
  g_assert_true (hp_grad_mode_is_enabled ());
  g_clear_error (&error);
  g_assert_true (isnan (hp_pipeline_schedule_evaluate (schedule, nan_loss, NULL, &error)));
  g_assert_error (error, HP_ERROR, HP_ERROR_STATE);
  g_assert_cmpstr (error->message, ==, "HpPipelineSchedule: the loss of microbatch 0 is NaN");
}

/* Stage 0 trains while the others evaluate: one error on every stage
 * before any message, instead of waiting for gradients */
/* The world as one mesh dim "pp", a stage per rank */
static HpDeviceMesh *
world_pp_mesh (void)
{
  g_autoptr(GError) error = NULL;
  gint shape[] = { hp_get_world_size () };
  HpDeviceMesh *mesh = hp_device_mesh_new (shape, 1, (const gchar *[]) { "pp", NULL }, &error);

  g_assert_no_error (error);
  return mesh;
}

static void
test_train_and_evaluate (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = world_pp_mesh ();
  g_autoptr(HpPipelineSchedule) schedule = NULL;
  gdouble loss;

  schedule = hp_pipeline_schedule_new (mesh, "pp", HP_PIPELINE_SCHEDULE_KIND_GPIPE, 2, &error);
  g_assert_no_error (error);
  loss = hp_pipeline_schedule_is_first_stage (schedule)
    ? hp_pipeline_schedule_step (schedule, no_output, NULL, &error)
    : hp_pipeline_schedule_evaluate (schedule, no_output, NULL, &error);
  g_assert_true (isnan (loss));
  g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
  g_assert_nonnull (strstr (error->message, "pipeline schedule"));
}

/* Which stage fails at which microbatch, for failing_forward() */
typedef struct
{
  guint stage;
  guint microbatch;
  HpTensor *leaf;     /* the first stage's input, which autograd does not keep */
  HpTensor *wide;     /* when not NULL, that of microbatch 1, of another shape */
} Failure;

/* The first stage gives 0, 1, ..., 5 as [2, 3], the middle ones twice
 * their input, the last its mean; stage @user_data->stage fails at its
 * microbatch (none when it is G_MAXUINT) */
static HpTensor *
failing_forward (HpPipelineSchedule  *schedule,
                 guint                microbatch,
                 HpTensor            *input,
                 gpointer             user_data,
                 GError             **error)
{
  const Failure *failure = user_data;

  if (hp_pipeline_schedule_get_stage (schedule) == failure->stage &&
      microbatch == failure->microbatch)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_STATE, "a bad number");
      return NULL;
    }
  if (hp_pipeline_schedule_is_last_stage (schedule))
    return hp_tensor_mean_all (input, error);
  if (input != NULL)
    return hp_tensor_scale (input, 2.0, error);
  return hp_tensor_scale (microbatch == 1 && failure->wide != NULL ? failure->wide : failure->leaf,
                          1.0, error);
}

/* A stage fails in the middle of a step or evaluation: it reports its
 * own error and every other stage an HP_ERROR_MPI that one failed, at
 * once rather than at the deadline (set to a minute here, which a
 * regression would reach and fail on with another message); the next
 * run on the same schedule, whose messages have tags of their own, is
 * right */
static void
test_stage_fails (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = world_pp_mesh ();
  gint n_stages = hp_get_world_size ();
  guint last = (guint) n_stages - 1;
  const gint64 leaf_shape[] = { 2, 3 };
  g_autoptr(HpTensor) leaf = hp_test_counting (HP_DTYPE_FLOAT64, leaf_shape, 2);
  gdouble expected = n_stages == 1 ? 0 : 2.5 * (1 << (n_stages - 2));

  hp_tensor_set_requires_grad (leaf, TRUE);
  g_setenv ("HP_COLLECTIVE_TIMEOUT", "60", TRUE);
  for (guint k = 0; k < 2; k++)
    for (guint failing = 0; failing < 2; failing++)
      for (guint training = 0; training < 2; training++)
        {
          g_autoptr(HpPipelineSchedule) schedule =
            hp_pipeline_schedule_new (mesh, "pp", k == 0 ? HP_PIPELINE_SCHEDULE_KIND_GPIPE
                                                         : HP_PIPELINE_SCHEDULE_KIND_ONE_F_ONE_B,
                                      3, &error);
          Failure failure = { failing == 0 ? 0 : last, 1, leaf, NULL };
          Failure none = { G_MAXUINT, 0, leaf, NULL };
          guint stage;
          gdouble loss;

          g_assert_no_error (error);
          stage = hp_pipeline_schedule_get_stage (schedule);
          loss = training ? hp_pipeline_schedule_step (schedule, failing_forward, &failure, &error)
                          : hp_pipeline_schedule_evaluate (schedule, failing_forward, &failure, &error);
          g_assert_true (isnan (loss));
          if (stage == failure.stage)
            {
              g_assert_error (error, HP_ERROR, HP_ERROR_STATE);
              g_assert_cmpstr (error->message, ==, "a bad number");
            }
          else
            {
              g_autofree gchar *told = g_strdup_printf ("HpPipelineSchedule: stage %u failed in this step "
                                                        "(a bad number), so stage %u stops",
                                                        failure.stage, stage);
              g_autofree gchar *heard = g_strdup_printf ("HpPipelineSchedule: 1 of the %d stages "
                                                         "failed in this step", n_stages);

              g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
              if (!g_str_has_prefix (error->message, told))
                g_assert_cmpstr (error->message, ==, heard);
            }
          g_clear_error (&error);

          loss = training ? hp_pipeline_schedule_step (schedule, failing_forward, &none, &error)
                          : hp_pipeline_schedule_evaluate (schedule, failing_forward, &none, &error);
          g_assert_no_error (error);
          g_assert_cmpfloat (loss, ==, expected);
        }
  g_unsetenv ("HP_COLLECTIVE_TIMEOUT");
}

/* The first stage sends microbatch 1's activation as [2, 4] after
 * microbatch 0's [2, 3]: the second stage fails with HP_ERROR_MPI naming
 * both and never reads the data as the other shape, the others hear of
 * it; the next step is right */
static void
test_shape_mismatch (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = world_pp_mesh ();
  const gint64 leaf_shape[] = { 2, 3 }, wide_shape[] = { 2, 4 };
  g_autoptr(HpTensor) leaf = hp_test_counting (HP_DTYPE_FLOAT64, leaf_shape, 2);
  g_autoptr(HpTensor) wide = hp_test_counting (HP_DTYPE_FLOAT64, wide_shape, 2);
  g_autoptr(HpPipelineSchedule) schedule = NULL;
  Failure mismatch = { G_MAXUINT, 0, leaf, wide };
  Failure none = { G_MAXUINT, 0, leaf, NULL };
  gdouble loss;

  hp_tensor_set_requires_grad (leaf, TRUE);
  hp_tensor_set_requires_grad (wide, TRUE);
  schedule = hp_pipeline_schedule_new (mesh, "pp", HP_PIPELINE_SCHEDULE_KIND_GPIPE, 2, &error);
  g_assert_no_error (error);
  g_setenv ("HP_COLLECTIVE_TIMEOUT", "60", TRUE);
  loss = hp_pipeline_schedule_step (schedule, failing_forward, &mismatch, &error);
  g_assert_true (isnan (loss));
  g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
  if (hp_pipeline_schedule_get_stage (schedule) == 1)
    g_assert_cmpstr (error->message, ==, "HpPipelineSchedule: stage 1 got the activation of "
                                         "microbatch 1 from stage 0 as float64 [2, 4], but "
                                         "expected float64 [2, 3]");
  else
    g_assert_true (strstr (error->message, "stage 1 failed in this step") != NULL ||
                   strstr (error->message, "stages failed in this step") != NULL);
  g_clear_error (&error);
  loss = hp_pipeline_schedule_step (schedule, failing_forward, &none, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (loss, ==, 2.5 * (1 << (hp_get_world_size () - 2)));
  g_unsetenv ("HP_COLLECTIVE_TIMEOUT");
}

/* Stage s's tensors: s + 1 of them ("s.0", ...) but none on stage 1,
 * of the three dtypes, shapes [s + 1, i + 1] */
static void
stage_tensors (guint       stage,
               GStrv      *names,
               GPtrArray **tensors)
{
  static const HpDType dtypes[] = { HP_DTYPE_FLOAT64, HP_DTYPE_FLOAT32, HP_DTYPE_INT64 };
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  *tensors = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; stage != 1 && i <= stage; i++)
    {
      g_autofree gchar *name = g_strdup_printf ("%u.%u", stage, i);
      const gint64 shape[] = { stage + 1, i + 1 };

      g_strv_builder_add (builder, name);
      g_ptr_array_add (*tensors, hp_test_counting (dtypes[i % 3], shape, 2));
    }
  *names = g_strv_builder_end (builder);
}

/* Every stage's named tensors on the first, in stage order, as they
 * were; nothing on the others */
static void
test_gather (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = world_pp_mesh ();
  g_autoptr(HpPipelineSchedule) schedule = NULL;
  g_auto(GStrv) names = NULL;
  g_autoptr(GPtrArray) tensors = NULL;
  g_auto(GStrv) all_names = NULL;
  g_autoptr(GPtrArray) all_tensors = NULL;
  guint n = 0;

  schedule = hp_pipeline_schedule_new (mesh, "pp", HP_PIPELINE_SCHEDULE_KIND_ONE_F_ONE_B, 1, &error);
  g_assert_no_error (error);
  stage_tensors (hp_pipeline_schedule_get_stage (schedule), &names, &tensors);
  g_assert_true (hp_pipeline_schedule_gather (schedule, (const gchar * const *) names, tensors,
                                              &all_names, &all_tensors, &error));
  g_assert_no_error (error);
  if (!hp_pipeline_schedule_is_first_stage (schedule))
    {
      g_assert_null (all_names);
      g_assert_null (all_tensors);
      return;
    }
  for (guint s = 0; s < hp_pipeline_schedule_get_n_stages (schedule); s++)
    {
      g_auto(GStrv) expected_names = NULL;
      g_autoptr(GPtrArray) expected = NULL;

      stage_tensors (s, &expected_names, &expected);
      for (guint i = 0; expected_names[i] != NULL; i++, n++)
        {
          g_assert_cmpstr (all_names[n], ==, expected_names[i]);
          hp_test_assert_identical (g_ptr_array_index (all_tensors, n), g_ptr_array_index (expected, i));
        }
    }
  g_assert_null (all_names[n]);
  g_assert_cmpuint (all_tensors->len, ==, n);
}

/* Only the first stage gathers, as when the others failed before: it
 * gives up at the deadline (set short here) instead of waiting for
 * ever. The mesh is of no use afterwards; nothing else uses it. */
static void
test_gather_never_reached (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = world_pp_mesh ();
  g_autoptr(HpPipelineSchedule) schedule = NULL;
  g_auto(GStrv) names = NULL;
  g_autoptr(GPtrArray) tensors = NULL;
  g_auto(GStrv) all_names = NULL;
  g_autoptr(GPtrArray) all_tensors = NULL;

  schedule = hp_pipeline_schedule_new (mesh, "pp", HP_PIPELINE_SCHEDULE_KIND_ONE_F_ONE_B, 1, &error);
  g_assert_no_error (error);
  if (hp_pipeline_schedule_is_first_stage (schedule))
    {
      stage_tensors (0, &names, &tensors);
      g_setenv ("HP_COLLECTIVE_TIMEOUT", "1", TRUE);
      g_assert_false (hp_pipeline_schedule_gather (schedule, (const gchar * const *) names, tensors,
                                                   &all_names, &all_tensors, &error));
      g_unsetenv ("HP_COLLECTIVE_TIMEOUT");
      g_assert_error (error, HP_ERROR, HP_ERROR_MPI);
      g_assert_nonnull (strstr (error->message, "pipeline gather"));
      g_assert_null (all_names);
      g_assert_null (all_tensors);
    }
  MPI_Barrier (MPI_COMM_WORLD);
}

static void
add_case (const Case *c)
{
  g_autofree gchar *path =
    g_strdup_printf ("/pipeline/pp%d-dp%d-fsdp%d-tp%d/%s/m%u/%s%s", c->pp, c->dp, c->fsdp, c->tp,
                     c->kind == HP_PIPELINE_SCHEDULE_KIND_GPIPE ? "gpipe" : "1f1b", c->microbatches,
                     c->dtype == HP_DTYPE_FLOAT64 ? "float64" : "float32",
                     c->checkpointed ? "/ac" : "");
  Case *copy = g_memdup2 (c, sizeof *c);

  g_test_add_data_func_full (path, copy, test_layout, g_free);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  gint world;
  /* the layouts of each world size: pp alone on 1 to 3 ranks (3 blocks:
   * 2 + 1 on 2 stages), pp 2 x tp 2, pp 2 x dp 2 and pp 2 x dp_shard 2
   * on 4, pp x dp x tp and pp x dp_shard x tp on 8: { pp, dp, tp, fsdp } */
  static const gint layouts[][4] = {
    { 1, 1, 1, 1 }, { 2, 1, 1, 1 }, { 3, 1, 1, 1 }, { 2, 1, 2, 1 }, { 2, 2, 1, 1 }, { 2, 1, 1, 2 },
    { 2, 2, 2, 1 }, { 2, 1, 2, 2 },
  };
  static const guint microbatches[] = { 1, 2, 4 };

  hp_test_init (&argc, &argv);
  g_assert_true (hp_init (&error));
  world = hp_get_world_size ();

  for (guint l = 0; l < G_N_ELEMENTS (layouts); l++)
    {
      if (layouts[l][0] * layouts[l][1] * layouts[l][2] * layouts[l][3] != world)
        continue;
      for (guint k = 0; k < 2; k++)
        for (guint m = 0; m < G_N_ELEMENTS (microbatches); m++)
          {
            Case c = { layouts[l][0], layouts[l][1], layouts[l][2], layouts[l][3],
                       k == 0 ? HP_PIPELINE_SCHEDULE_KIND_GPIPE : HP_PIPELINE_SCHEDULE_KIND_ONE_F_ONE_B,
                       microbatches[m], HP_DTYPE_FLOAT64, FALSE };

            add_case (&c);
            if (m == 1)
              {
                c.checkpointed = TRUE;
                add_case (&c);
                c.dtype = HP_DTYPE_FLOAT32;
                add_case (&c);
              }
          }
    }
  g_test_add_func ("/pipeline/split", test_split);
  g_test_add_func ("/pipeline/schedule-errors", test_schedule_errors);
  g_test_add_func ("/pipeline/gather", test_gather);
  if (world > 1)
    {
      g_test_add_func ("/pipeline/train-and-evaluate", test_train_and_evaluate);
      g_test_add_func ("/pipeline/stage-fails", test_stage_fails);
      g_test_add_func ("/pipeline/shape-mismatch", test_shape_mismatch);
      /* last: it leaves its mesh's communicator unusable */
      g_test_add_func ("/pipeline/gather-never-reached", test_gather_never_reached);
    }
  return g_test_run ();
}
