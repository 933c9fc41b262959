/* hp-train.c: trains a tiny Llama-style decoder with tensor and data
 * parallelism over MPI
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Without --data the task is learnable and fully determined by the
 * seed: token sequences follow a fixed random bigram table in which
 * every token has a few likely successors, so the loss falls from
 * log(vocab) toward the entropy of the table, which the summary prints.
 * With --data it trains on text (byte tokens) or llm.c token shards,
 * with a validation split. The same seed and data give the same loss
 * curve on any number of ranks: the global batch is the same on every
 * rank and each data-parallel replica takes its share of the rows.
 *
 *   mpirun -np 2 hp-train --tp 2 --steps 200
 *   mpirun -np 4 hp-train --dp 2 --tp 2 --set layers.0.attention.n-heads=4
 *   mpirun -np 4 hp-train --fsdp 2 --tp 2     (FSDP over dp_shard x TP)
 *   mpirun -np 8 hp-train --dp 2 --fsdp 2 --tp 2   (HSDP x TP)
 *   mpirun -np 8 hp-train --pp 2 --fsdp 2 --tp 2   (stages fully sharded, x TP)
 *   mpirun -np 2 hp-train --tp 2 --data story.txt --eval-every 50 --metrics m.jsonl
 *   hp-train --config bench/train-25m.json --batch 8 --seq-len 256 --ac full
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/resource.h>

#include <hp-protocols/hp-protocols.h>
#include <hp-protocols/hp-mpi.h>
#include <json-glib/json-glib.h>

/* The model when --config is not given: about 100k parameters */
static const gchar default_config[] =
  "{\n"
  "  \"@type\": \"HpDecoderConfig\",\n"
  "  \"dim\": 64,\n"
  "  \"n-layers\": 2,\n"
  "  \"n-heads\": 4,\n"
  "  \"n-kv-heads\": 2,\n"
  "  \"vocab-size\": 64,\n"
  "  \"ffn-hidden\": 128,\n"
  "  \"max-seq-len\": 64\n"
  "}\n";

/* The checkpoint manifest's keys of the data: where the next batch
 * starts, and the tokens of the training part it is a position in */
#define DATA_POSITION_KEY "data-position"
#define DATA_TOKENS_KEY "data-tokens"

/* The validation fraction when --val-fraction is not given */
#define DEFAULT_VAL_FRACTION 0.1

/* Successors per token in the bigram table and their probabilities */
#define N_SUCCESSORS 4
static const gdouble successor_probability[N_SUCCESSORS] = { 0.4, 0.3, 0.2, 0.1 };

typedef struct
{
  gchar *config_file;
  gchar **sets;
  gint tp;
  gint fsdp;
  gchar *fsdp_reshard;          /* "true" or "false" */
  gchar *fsdp_prefetch;         /* "on" or "off" */
  gint dp;
  gint steps;
  gint64 seed;
  gdouble lr;
  gint log_every;
  gint batch;
  gint seq_len;
  gboolean print_config;
  gchar *save;
  gint save_every;
  gint keep;
  gchar *save_dtype_name;
  HpSafetensorsDType save_dtype;
  gchar *load;
  gchar *data;
  gdouble val_fraction;
  gint eval_every;
  gint eval_batches;
  gchar *metrics;
  gchar *ac_name;
  HpActivationCheckpointing ac;
  gint ac_every;
  gint pp;
  gchar *pp_schedule_name;
  HpPipelineScheduleKind pp_schedule;
  gint microbatches;
} Options;

typedef struct
{
  gint vocab;
  gint *successors;             /* [vocab][N_SUCCESSORS] */
} Task;

static void
options_clear (Options *options)
{
  g_free (options->config_file);
  g_strfreev (options->sets);
  g_free (options->save);
  g_free (options->save_dtype_name);
  g_free (options->load);
  g_free (options->data);
  g_free (options->metrics);
  g_free (options->ac_name);
  g_free (options->pp_schedule_name);
  g_free (options->fsdp_reshard);
  g_free (options->fsdp_prefetch);
}

/* --ac none, full or every-K */
static gboolean
parse_ac (Options  *options,
          GError  **error)
{
  const gchar *name = options->ac_name;
  guint64 every = 0;

  if (g_str_equal (name, "none") || g_str_equal (name, "full"))
    {
      options->ac = name[0] == 'f' ? HP_ACTIVATION_CHECKPOINTING_FULL
                                   : HP_ACTIVATION_CHECKPOINTING_NONE;
      return TRUE;
    }
  if (g_str_has_prefix (name, "every-") &&
      g_ascii_string_to_unsigned (name + strlen ("every-"), 10, 1, G_MAXINT, &every, NULL))
    {
      options->ac = HP_ACTIVATION_CHECKPOINTING_EVERY_K;
      options->ac_every = (gint) every;
      return TRUE;
    }
  g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
               "--ac %s: expected none, full or every-K with K a whole number from 1, "
               "such as every-2", name);
  return FALSE;
}

static gboolean
parse_options (Options   *options,
               int       *argc,
               char    ***argv,
               GError   **error)
{
  GOptionEntry entries[] = {
    { "config", 'c', 0, G_OPTION_ARG_FILENAME, &options->config_file,
      "Model configuration (HpDecoderConfig JSON; default: a tiny model)", "FILE" },
    { "set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &options->sets,
      "Set a configuration field, e.g. layers.0.attention.n-heads=4 (repeatable)", "PATH=VALUE" },
    { "tp", 0, 0, G_OPTION_ARG_INT, &options->tp, "Tensor-parallel degree (default 1)", "N" },
    { "dp", 0, 0, G_OPTION_ARG_INT, &options->dp,
      "Replicated data-parallel degree, dp_replicate (default: ranks / (fsdp x tp x pp))", "N" },
    { "fsdp", 0, 0, G_OPTION_ARG_INT, &options->fsdp,
      "Fully sharded data-parallel degree, dp_shard; composes with --tp, --dp and --pp (default 1)", "N" },
    { "pp", 0, 0, G_OPTION_ARG_INT, &options->pp,
      "Pipeline-parallel degree: the decoder's blocks split into N stages (default 1)", "N" },
    { "pp-schedule", 0, 0, G_OPTION_ARG_STRING, &options->pp_schedule_name,
      "Pipeline schedule: gpipe or 1f1b (default 1f1b)", "NAME" },
    { "microbatches", 0, 0, G_OPTION_ARG_INT, &options->microbatches,
      "Microbatches a replica's batch is split into for the pipeline (default: --pp)", "M" },
    { "fsdp-reshard-after-forward", 0, 0, G_OPTION_ARG_STRING, &options->fsdp_reshard,
      "FSDP units free their gathered parameters after the forward (default true)", "true|false" },
    { "fsdp-prefetch", 0, 0, G_OPTION_ARG_STRING, &options->fsdp_prefetch,
      "FSDP units start the next unit's all-gather ahead (default on)", "on|off" },
    { "steps", 0, 0, G_OPTION_ARG_INT, &options->steps, "Training steps (default 200)", "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &options->seed, "Seed of the task and the weights", "N" },
    { "lr", 0, 0, G_OPTION_ARG_DOUBLE, &options->lr, "AdamW learning rate (default 3e-3)", "X" },
    { "log-every", 0, 0, G_OPTION_ARG_INT, &options->log_every,
      "Print a progress line every N steps (default 10)", "N" },
    { "batch", 0, 0, G_OPTION_ARG_INT, &options->batch,
      "Global batch size in sequences (default 16)", "N" },
    { "seq-len", 0, 0, G_OPTION_ARG_INT, &options->seq_len,
      "Tokens per sequence (default 32)", "N" },
    { "print-config", 0, 0, G_OPTION_ARG_NONE, &options->print_config,
      "Print the full configuration as JSON and exit", NULL },
    { "save", 0, 0, G_OPTION_ARG_FILENAME, &options->save,
      "Save checkpoints in DIR/step-N at the end (and every --save-every steps): the model "
      "as Hugging Face has it (config.json, safetensors), hp's configuration (hp-config.json), "
      "the optimizer state and a manifest of them", "DIR" },
    { "save-every", 0, 0, G_OPTION_ARG_INT, &options->save_every,
      "Also save after every N steps (default 0: at the end only)", "N" },
    { "keep", 0, 0, G_OPTION_ARG_INT, &options->keep,
      "Keep the newest K steps in the --save folder (default 0: all)", "K" },
    { "save-dtype", 0, 0, G_OPTION_ARG_STRING, &options->save_dtype_name,
      "The dtype of the saved model weights: bf16, f16, f32 or f64, rounded to nearest "
      "even as torch does (default: the training dtype); the optimizer state stays in "
      "the training dtype", "DTYPE" },
    { "load", 0, 0, G_OPTION_ARG_FILENAME, &options->load,
      "Resume from the newest complete step of a --save folder, or from one DIR/step-N: "
      "its configuration, weights and optimizer state; training continues up to --steps. "
      "A Hugging Face Llama directory (config.json and safetensors) gives the model and "
      "its weights", "DIR" },
    { "data", 0, 0, G_OPTION_ARG_FILENAME, &options->data,
      "Train on a UTF-8 text file (byte tokens, vocab-size 257), an llm.c token shard "
      "(NAME.bin), a directory of shards or a quoted pattern of files such as 'shards/*.bin'; "
      "vocab-size is the largest token + 1 unless --config or --set gives it "
      "(default: a random bigram task)", "PATH" },
    { "val-fraction", 0, 0, G_OPTION_ARG_DOUBLE, &options->val_fraction,
      "Validate on the last F of the --data tokens, unless shards are named *val* "
      "(default 0.1)", "F" },
    { "eval-every", 0, 0, G_OPTION_ARG_INT, &options->eval_every,
      "Print the validation loss every N steps and at the end (default 0: never)", "N" },
    { "eval-batches", 0, 0, G_OPTION_ARG_INT, &options->eval_batches,
      "Batches of the validation part that a validation loss averages (default 10)", "M" },
    { "ac", 0, 0, G_OPTION_ARG_STRING, &options->ac_name,
      "Activation checkpointing: none, full (every block keeps only its input and recomputes "
      "its activations in the backward) or every-K (blocks K, 2K, ...); the same losses, "
      "less memory, one more forward per checkpointed block (default: the configuration's "
      "activation-checkpointing, none)", "MODE" },
    { "metrics", 0, 0, G_OPTION_ARG_FILENAME, &options->metrics,
      "Append one JSON line per logged or validated step to FILE: step, train_loss, "
      "val_loss, lr, tokens_per_second, grad_norm, peak_memory_mib", "FILE" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- train a tiny Llama under MPI");

  options->tp = 1;
  options->fsdp = 1;
  options->pp = 1;
  options->pp_schedule = HP_PIPELINE_SCHEDULE_KIND_ONE_F_ONE_B;
  options->steps = 200;
  options->seed = 0;
  options->lr = 3e-3;
  options->log_every = 10;
  options->batch = 16;
  options->seq_len = 32;
  options->val_fraction = -1;
  options->eval_batches = 10;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_summary (context,
    "Trains a Llama-style decoder on text or token shards (--data), or on sequences\n"
    "drawn from a random bigram table given by --seed. Run it under mpirun:\n"
    "ranks = pp * dp * tp.");
  if (!g_option_context_parse (context, argc, argv, error))
    return FALSE;

  /* --lr is checked by the optimizer configuration's field */
  if (options->tp < 1 || options->fsdp < 1 || options->pp < 1 || options->microbatches < 0 ||
      options->dp < 0 || options->steps < 0 || options->log_every < 1 ||
      options->batch < 1 || options->seq_len < 1 || options->save_every < 0 || options->keep < 0 ||
      options->eval_every < 0 || options->eval_batches < 1)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--tp, --fsdp, --pp, --batch, --seq-len, --log-every and --eval-batches must be "
                   "at least 1, --dp, --microbatches, --steps, --save-every, --keep and --eval-every "
                   "not negative");
      return FALSE;
    }
  if ((options->fsdp_reshard != NULL && g_strcmp0 (options->fsdp_reshard, "true") != 0 &&
       g_strcmp0 (options->fsdp_reshard, "false") != 0) ||
      (options->fsdp_prefetch != NULL && g_strcmp0 (options->fsdp_prefetch, "on") != 0 &&
       g_strcmp0 (options->fsdp_prefetch, "off") != 0))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--fsdp-reshard-after-forward takes true or false, --fsdp-prefetch on or off");
      return FALSE;
    }
  if (options->data == NULL && (options->eval_every > 0 || options->val_fraction >= 0))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--%s: validation needs --data",
                   options->eval_every > 0 ? "eval-every" : "val-fraction");
      return FALSE;
    }
  if (options->save == NULL && (options->save_every > 0 || options->keep > 0))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--%s tells how to save checkpoints: it needs --save DIR",
                   options->save_every > 0 ? "save-every" : "keep");
      return FALSE;
    }
  if (options->save_dtype_name != NULL && options->save == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--save-dtype %s: there is no --save DIR to write", options->save_dtype_name);
      return FALSE;
    }
  if (options->save_dtype_name != NULL &&
      !hp_safetensors_dtype_from_string (options->save_dtype_name, &options->save_dtype, error))
    {
      g_prefix_error (error, "--save-dtype: ");
      return FALSE;
    }
  if (options->ac_name != NULL && !parse_ac (options, error))
    return FALSE;
  if (options->pp_schedule_name != NULL)
    {
      if (g_str_equal (options->pp_schedule_name, "gpipe"))
        options->pp_schedule = HP_PIPELINE_SCHEDULE_KIND_GPIPE;
      else if (!g_str_equal (options->pp_schedule_name, "1f1b"))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "--pp-schedule %s: expected gpipe or 1f1b", options->pp_schedule_name);
          return FALSE;
        }
    }
  if (options->microbatches == 0)
    options->microbatches = options->pp;
  if (options->load != NULL && options->sets != NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--set %s: --load resumes the model of the checkpoint, whose configuration "
                   "cannot change (the learning rate is --lr)", options->sets[0]);
      return FALSE;
    }
  return TRUE;
}

/* Applies the --set options whose path is nested (has a dot) or not */
static gboolean
apply_sets (HpConfig  *config,
            gchar    **sets,
            gboolean   nested,
            GError   **error)
{
  for (guint i = 0; sets != NULL && sets[i] != NULL; i++)
    {
      g_auto(GStrv) parts = g_strsplit (sets[i], "=", 2);

      if (parts[0] == NULL || parts[1] == NULL)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "--set %s: expected PATH=VALUE", sets[i]);
          return FALSE;
        }
      if ((strchr (parts[0], '.') != NULL) != nested)
        continue;
      if (!hp_config_set_path_from_string (config, parts[0], parts[1], error))
        {
          g_prefix_error (error, "--set ");
          return FALSE;
        }
    }
  return TRUE;
}

/* The configuration: of --config or the default one, with --set; or
 * that of the --load @source. The default one takes @data_vocab (when
 * above 0) as its vocab-size, which --set may change. */
static HpDecoderConfig *
load_config (Options        *options,
             HpModelSource  *source,
             gint64          data_vocab,
             GError        **error)
{
  g_autofree gchar *text = NULL;
  g_autoptr(HpConfig) config = NULL;
  const gchar *file = options->config_file;

  if (options->load != NULL && options->config_file != NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--load takes the configuration of the checkpoint: leave out --config");
      return NULL;
    }
  if (source != NULL)
    {
      config = HP_CONFIG (hp_model_source_load_config (source, error));
      if (config == NULL)
        return NULL;
    }
  else
    {
      if (file != NULL && !g_file_get_contents (file, &text, NULL, error))
        return NULL;
      config = hp_config_new_from_json (HP_TYPE_DECODER_CONFIG,
                                        text != NULL ? text : default_config, error);
      if (config == NULL)
        {
          g_prefix_error (error, "%s: ", file != NULL ? file : "default configuration");
          return NULL;
        }
    }
  if (source == NULL && file == NULL && data_vocab > 0)
    {
      g_autofree gchar *vocab = g_strdup_printf ("%" G_GINT64_FORMAT, data_vocab);

      if (!hp_config_set_path_from_string (config, "vocab-size", vocab, error))
        return NULL;
    }
  /* top-level fields (dim, n-layers, ...) first, so that the nested
   * configurations are made from them; then the nested paths such as
   * layers.0.attention.n-heads, which exist only once they are made */
  if (!apply_sets (config, options->sets, FALSE, error) ||
      !hp_decoder_config_expand (HP_DECODER_CONFIG (config), error) ||
      !apply_sets (config, options->sets, TRUE, error))
    return NULL;
  return HP_DECODER_CONFIG (g_steal_pointer (&config));
}

/* The bigram table: each token's successors are distinct random tokens */
static void
task_init (Task    *task,
           gint     vocab,
           guint64  seed)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed ((guint32) (seed ^ (seed >> 32) ^ 0x5eed));

  task->vocab = vocab;
  task->successors = g_new (gint, (gsize) vocab * N_SUCCESSORS);
  for (gint t = 0; t < vocab; t++)
    for (gint k = 0; k < N_SUCCESSORS; k++)
      {
        gint candidate;
        gboolean taken;

        do
          {
            candidate = g_rand_int_range (rand, 0, vocab);
            taken = FALSE;
            for (gint j = 0; j < k; j++)
              taken |= task->successors[t * N_SUCCESSORS + j] == candidate;
          }
        while (taken && vocab >= N_SUCCESSORS);
        task->successors[t * N_SUCCESSORS + k] = candidate;
      }
}

/* The mean loss of a perfect model: the entropy of the successors */
static gdouble
task_entropy (void)
{
  gdouble entropy = 0;

  for (guint k = 0; k < N_SUCCESSORS; k++)
    entropy -= successor_probability[k] * log (successor_probability[k]);
  return entropy;
}

/* Rows [first, first + n) of the global batch of @step: [batch, len + 1]
 * tokens, the same on every rank */
static void
task_batch (Task    *task,
            guint64  seed,
            gint     step,
            gint     batch,
            gint     len,
            gint64  *tokens)
{
  g_autoptr(GRand) rand = g_rand_new ();
  guint32 words[3] = { (guint32) seed, (guint32) (seed >> 32), (guint32) step };

  g_rand_set_seed_array (rand, words, G_N_ELEMENTS (words));
  for (gint b = 0; b < batch; b++)
    {
      gint64 *row = tokens + (gsize) b * (len + 1);

      row[0] = g_rand_int_range (rand, 0, task->vocab);
      for (gint s = 1; s <= len; s++)
        {
          gdouble u = g_rand_double (rand);
          gint k = 0;

          while (k < N_SUCCESSORS - 1 && u >= successor_probability[k])
            u -= successor_probability[k++];
          row[s] = task->successors[row[s - 1] * N_SUCCESSORS + k];
        }
    }
}

/* The value of the one-element loss @tensor; NaN with @error set when
 * it cannot be read or is NaN itself (the training diverged), as the
 * pipeline schedule reports it */
static gdouble
scalar_value (HpTensor  *tensor,
              GError   **error)
{
  g_autoptr(HpTensor) full = HP_IS_DTENSOR (tensor)
    ? hp_dtensor_full_tensor (HP_DTENSOR (tensor), error) : g_object_ref (tensor);
  g_autoptr(GError) local_error = NULL;
  gdouble value;

  if (full == NULL)
    return NAN;
  value = hp_tensor_item (full, &local_error);
  if (local_error != NULL)
    g_propagate_error (error, g_steal_pointer (&local_error));
  else if (isnan (value))
    g_set_error (error, HP_ERROR, HP_ERROR_STATE, "the loss is NaN: the training diverged");
  return value;
}

/* The largest peak resident memory of any rank, in MiB */
static gdouble
peak_memory_mib (HpDeviceMesh *mesh)
{
  struct rusage usage;
  long peak_kib = 0;

  if (getrusage (RUSAGE_SELF, &usage) == 0)
    peak_kib = usage.ru_maxrss;
  MPI_Allreduce (MPI_IN_PLACE, &peak_kib, 1, MPI_LONG, MPI_MAX, hp_device_mesh_get_comm (mesh));
  return peak_kib / 1024.0;
}

static gchar *
format_seconds (gdouble seconds)
{
  if (seconds < 60)
    return g_strdup_printf ("%.1fs", seconds);
  return g_strdup_printf ("%dm%02ds", (gint) seconds / 60, (gint) seconds % 60);
}

typedef struct
{
  Options *options;
  HpDecoder *model;
  HpOptimizer *optimizer;
  GPtrArray *params;
  HpDeviceMesh *tp_mesh;        /* NULL when not tensor-parallel */
  HpDeviceMesh *dp_mesh;        /* dp_replicate */
  HpDeviceMesh *shard_mesh;     /* dp_shard */
  gboolean fsdp;                /* gradients are reduced in the backward */
  HpDeviceMesh *mesh;           /* (dp_replicate, dp_shard, tp, pp) */
  HpDeviceMesh *pp_mesh;        /* NULL when not pipeline-parallel */
  HpPipelineSchedule *schedule; /* NULL without --pp or --microbatches */
  GHashTable *global_index;     /* a stage's parameter index -> the whole model's */
  Task task;
  gint local_batch;
  gint64 *tokens;
  HpTokenLoader *train_loader;  /* NULL for the bigram task */
  HpTokenLoader *val_loader;    /* NULL without --eval-every */
  gint64 data_usec;             /* in the training batches of train_loader */
} Trainer;

/* @value averaged over dp_shard and dp_replicate: equal shares, so the
 * mean of the means is the mean */
static gboolean
average_over_data (Trainer  *trainer,
                   gdouble  *value,
                   GError  **error)
{
  return hp_data_parallel_average_scalar (trainer->shard_mesh, value, error) &&
         hp_data_parallel_average_scalar (trainer->dp_mesh, value, error);
}

/* This replica's rows of the next batch of @loader, or of the bigram
 * task's batch of @step when @loader is NULL */
static gboolean
next_rows (Trainer        *trainer,
           HpTokenLoader  *loader,
           gint            step,
           HpTensor      **ids,
           HpTensor      **targets,
           GError        **error)
{
  Options *options = trainer->options;
  gint len = options->seq_len;
  gint first = (hp_device_mesh_get_local_rank (trainer->dp_mesh, 0) * trainer->options->fsdp +
                hp_device_mesh_get_local_rank (trainer->shard_mesh, 0)) * trainer->local_batch;
  g_autofree gint64 *ids_data = NULL;
  g_autofree gint64 *target_data = NULL;
  gint64 shape[] = { trainer->local_batch, len };

  if (loader != NULL)
    return hp_token_loader_next (loader, (guint) first, (guint) trainer->local_batch, ids, targets,
                                 error);
  ids_data = g_new (gint64, (gsize) trainer->local_batch * len);
  target_data = g_new (gint64, (gsize) trainer->local_batch * len);
  task_batch (&trainer->task, options->seed, step, options->batch, len, trainer->tokens);
  for (gint b = 0; b < trainer->local_batch; b++)
    for (gint s = 0; s < len; s++)
      {
        const gint64 *row = trainer->tokens + (gsize) (first + b) * (len + 1);

        ids_data[b * len + s] = row[s];
        target_data[b * len + s] = row[s + 1];
      }
  *ids = hp_tensor_new_from_int64_data (ids_data, (gsize) trainer->local_batch * len, shape, 2, error);
  *targets = *ids != NULL
    ? hp_tensor_new_from_int64_data (target_data, (gsize) trainer->local_batch * len, shape, 2, error)
    : NULL;
  if (*targets == NULL)
    g_clear_object (ids);
  return *targets != NULL;
}

/* The mean loss of this replica's rows */
static HpTensor *
replica_loss (Trainer   *trainer,
              HpTensor  *ids,
              HpTensor  *targets,
              GError   **error)
{
  g_autoptr(HpTensor) laid_out = g_object_ref (targets);
  g_autoptr(HpTensor) logits = NULL;

  if (trainer->tp_mesh != NULL)
    {
      g_autoptr(GPtrArray) replicate = hp_placements_new_from_string ("R", error);

      if (replicate == NULL)
        return NULL;
      g_clear_object (&laid_out);
      laid_out = HP_TENSOR (hp_dtensor_new_from_local (targets, trainer->tp_mesh, replicate, NULL,
                                                       0, FALSE, error));
      if (laid_out == NULL)
        return NULL;
    }
  logits = hp_module_call1 (HP_MODULE (trainer->model), ids, error);
  return logits != NULL ? hp_tensor_cross_entropy (logits, laid_out, -100, error) : NULL;
}

/* The microbatches of this replica's rows, for stage_forward() */
typedef struct
{
  Trainer *trainer;
  GPtrArray *ids;
  GPtrArray *targets;
} Microbatches;

/* @tensor as a replicated DTensor over the tp mesh, or itself without one */
static HpTensor *
over_tp (Trainer   *trainer,
         HpTensor  *tensor,
         GError   **error)
{
  g_autoptr(GPtrArray) replicate = NULL;

  if (trainer->tp_mesh == NULL)
    return g_object_ref (tensor);
  replicate = hp_placements_new_from_string ("R", error);
  return replicate != NULL
    ? HP_TENSOR (hp_dtensor_new_from_local (tensor, trainer->tp_mesh, replicate, NULL, 0, FALSE, error))
    : NULL;
}

/* This rank's pipeline stage on one microbatch: the hidden states it
 * passes on, or on the last stage the microbatch's loss */
static HpTensor *
stage_forward (HpPipelineSchedule  *schedule,
               guint                microbatch,
               HpTensor            *input,
               gpointer             user_data,
               GError             **error)
{
  Microbatches *parts = user_data;
  Trainer *trainer = parts->trainer;
  g_autoptr(HpTensor) in = input != NULL ? over_tp (trainer, input, error)
                                         : g_object_ref (g_ptr_array_index (parts->ids, microbatch));
  g_autoptr(HpTensor) out = in != NULL ? hp_module_call1 (HP_MODULE (trainer->model), in, error) : NULL;
  g_autoptr(HpTensor) targets = NULL;

  if (out == NULL || !hp_pipeline_schedule_is_last_stage (schedule))
    return g_steal_pointer (&out);
  targets = over_tp (trainer, g_ptr_array_index (parts->targets, microbatch), error);
  return targets != NULL ? hp_tensor_cross_entropy (out, targets, -100, error) : NULL;
}

/* One optimizer step on this replica's rows; returns the loss averaged
 * over the replicas and, when @grad_norm is not NULL, the norm of the
 * averaged gradients */
static gboolean
train_step (Trainer  *trainer,
            gint      step,
            gdouble  *loss_value,
            gdouble  *grad_norm,
            GError  **error)
{
  g_autoptr(HpTensor) ids = NULL;
  g_autoptr(HpTensor) targets = NULL;
  g_autoptr(HpTensor) loss = NULL;
  gint64 data_start = g_get_monotonic_time ();

  if (!next_rows (trainer, trainer->train_loader, step, &ids, &targets, error))
    return FALSE;
  trainer->data_usec += g_get_monotonic_time () - data_start;
  if (trainer->schedule != NULL)
    {
      Microbatches parts = { trainer, NULL, NULL };

      parts.ids = hp_pipeline_schedule_split (trainer->schedule, ids, error);
      parts.targets = parts.ids != NULL ? hp_pipeline_schedule_split (trainer->schedule, targets, error)
                                        : NULL;
      *loss_value = parts.targets != NULL
        ? hp_pipeline_schedule_step (trainer->schedule, stage_forward, &parts, error) : NAN;
      g_clear_pointer (&parts.ids, g_ptr_array_unref);
      g_clear_pointer (&parts.targets, g_ptr_array_unref);
      if (isnan (*loss_value))
        return FALSE;
    }
  else
    {
      loss = replica_loss (trainer, ids, targets, error);
      if (loss == NULL || !hp_tensor_backward (loss, NULL, error))
        return FALSE;
      *loss_value = scalar_value (loss, error);
      if (isnan (*loss_value))
        return FALSE;
    }
  if (!trainer->fsdp && !hp_data_parallel_average_gradients (trainer->params, trainer->dp_mesh, error))
    return FALSE;
  /* an infinite maximum clips nothing: the norm is all it gives; with
   * pipeline stages, the squares of the stages' norms add up */
  if (grad_norm != NULL && (*grad_norm = hp_clip_grad_norm (trainer->params, INFINITY, 2, error)) < 0)
    return FALSE;
  if (grad_norm != NULL && trainer->pp_mesh != NULL)
    {
      gdouble square = *grad_norm * *grad_norm;

      if (!hp_data_parallel_average_scalar (trainer->pp_mesh, &square, error))
        return FALSE;
      *grad_norm = sqrt (square * trainer->options->pp);
    }
  if (!hp_optimizer_step (trainer->optimizer, error))
    return FALSE;
  hp_optimizer_zero_grad (trainer->optimizer);

  return average_over_data (trainer, loss_value, error);
}

/* This replica's mean loss on @ids and @targets without gradients,
 * through the pipeline stages when there are */
static gdouble
replica_eval_loss (Trainer   *trainer,
                   HpTensor  *ids,
                   HpTensor  *targets,
                   GError   **error)
{
  g_autoptr(HpTensor) loss = NULL;
  Microbatches parts = { trainer, NULL, NULL };
  gdouble value;

  if (trainer->schedule == NULL)
    {
      loss = replica_loss (trainer, ids, targets, error);
      return loss != NULL ? scalar_value (loss, error) : NAN;
    }
  parts.ids = hp_pipeline_schedule_split (trainer->schedule, ids, error);
  parts.targets = parts.ids != NULL ? hp_pipeline_schedule_split (trainer->schedule, targets, error)
                                    : NULL;
  value = parts.targets != NULL
    ? hp_pipeline_schedule_evaluate (trainer->schedule, stage_forward, &parts, error) : NAN;
  g_clear_pointer (&parts.ids, g_ptr_array_unref);
  g_clear_pointer (&parts.targets, g_ptr_array_unref);
  return value;
}

/* The mean loss of the first --eval-batches batches of the validation
 * part, without gradients; the same batches every time */
static gboolean
evaluate (Trainer  *trainer,
          gdouble  *val_loss,
          GError  **error)
{
  gboolean grad_mode = hp_grad_mode_is_enabled ();
  gboolean ok = hp_token_loader_set_position (trainer->val_loader, 0, error);
  gdouble sum = 0;

  hp_grad_mode_set_enabled (FALSE);
  for (gint m = 0; ok && m < trainer->options->eval_batches; m++)
    {
      g_autoptr(HpTensor) ids = NULL;
      g_autoptr(HpTensor) targets = NULL;
      gdouble value = NAN;

      ok = next_rows (trainer, trainer->val_loader, 0, &ids, &targets, error) &&
           !isnan (value = replica_eval_loss (trainer, ids, targets, error));
      sum += value;
    }
  hp_grad_mode_set_enabled (grad_mode);
  *val_loss = sum / trainer->options->eval_batches;
  return ok && average_over_data (trainer, val_loss, error);
}

/* @states with every DTensor gathered whole; collective, in the same
 * order on every rank */
static HpStateDict *
gather (HpStateDict  *states,
        GError      **error)
{
  g_autoptr(HpStateDict) out = hp_state_dict_new ();

  for (guint i = 0; i < hp_state_dict_get_size (states); i++)
    {
      HpTensor *tensor = hp_state_dict_get_tensor (states, i);
      g_autoptr(HpTensor) whole = NULL;

      whole = HP_IS_DTENSOR (tensor) ? hp_dtensor_full_tensor (HP_DTENSOR (tensor), error)
                                     : g_object_ref (tensor);
      if (whole == NULL)
        return NULL;
      hp_state_dict_insert (out, hp_state_dict_get_name (states, i), whole);
    }
  return g_steal_pointer (&out);
}

/* The optimizer states @states (named `<index>.<state>` by the
 * parameter's index) renamed by @rename from one index to another;
 * entries whose index @rename does not hold are left out */
static HpStateDict *
reindex_states (HpStateDict  *states,
                GHashTable   *rename)
{
  HpStateDict *out = hp_state_dict_new ();

  for (guint i = 0; i < hp_state_dict_get_size (states); i++)
    {
      const gchar *name = hp_state_dict_get_name (states, i);
      const gchar *dot = strchr (name, '.');
      guint64 index;
      g_autofree gchar *head = dot != NULL ? g_strndup (name, dot - name) : NULL;
      gpointer to;

      if (head == NULL || !g_ascii_string_to_unsigned (head, 10, 0, G_MAXUINT, &index, NULL) ||
          !g_hash_table_lookup_extended (rename, GUINT_TO_POINTER ((guint) index), NULL, &to))
        continue;
      {
        g_autofree gchar *renamed = g_strdup_printf ("%u%s", GPOINTER_TO_UINT (to), dot);

        hp_state_dict_insert (out, renamed, hp_state_dict_get_tensor (states, i));
      }
    }
  return out;
}

/* The whole tensors of every pipeline stage on the first stage's rank
 * of (dp_replicate 0, dp_shard 0, tp 0), which then holds the whole
 * model: the stages of that row gather theirs there, with the deadline
 * of the collectives should one of them have failed; the ranks of other
 * rows keep their own */
static gboolean
collect_stages (Trainer      *trainer,
                HpStateDict  *whole,
                GError      **error)
{
  g_auto(GStrv) names = NULL;
  g_autoptr(GPtrArray) tensors = NULL;
  g_auto(GStrv) all_names = NULL;
  g_autoptr(GPtrArray) all_tensors = NULL;

  if (trainer->pp_mesh == NULL ||
      hp_device_mesh_get_local_rank (trainer->mesh, 0) != 0 ||
      hp_device_mesh_get_local_rank (trainer->mesh, 1) != 0 ||
      hp_device_mesh_get_local_rank (trainer->mesh, 2) != 0)
    return TRUE;
  names = hp_state_dict_get_names (whole);
  tensors = g_ptr_array_new ();
  for (guint i = 0; i < hp_state_dict_get_size (whole); i++)
    g_ptr_array_add (tensors, hp_state_dict_get_tensor (whole, i));
  if (!hp_pipeline_schedule_gather (trainer->schedule, (const gchar * const *) names, tensors,
                                    &all_names, &all_tensors, error))
    return FALSE;
  for (guint i = 0; all_names != NULL && all_names[i] != NULL; i++)
    if (!hp_state_dict_contains (whole, all_names[i]))
      hp_state_dict_insert (whole, all_names[i], g_ptr_array_index (all_tensors, i));
  return TRUE;
}

/* Whether rank 0 succeeded, on every rank; the others get an error
 * that rank 0 could not write @what */
static gboolean
rank0_agrees (gboolean      ok,
              const gchar  *what,
              GError      **error)
{
  gint flag = ok;

  MPI_Bcast (&flag, 1, MPI_INT, 0, MPI_COMM_WORLD);
  /* a rank that failed itself keeps its own reason */
  if (!flag && ok && hp_get_world_rank () != 0)
    g_set_error (error, HP_ERROR, HP_ERROR_IO, "rank 0 could not write %s", what);
  return flag;
}

/* The files of one checkpoint step, written in @dir: hp-config.json
 * (the configuration before it was laid out for the ranks, so that any
 * number of ranks writes the same files), the model as Hugging Face has
 * it (config.json and the weights under its names, in @save_dtype) and
 * optimizer.safetensors (in the training dtype) */
static gboolean
write_step_files (HpDecoderConfig     *config,
                  const gchar         *config_json,
                  HpStateDict         *model_whole,
                  HpStateDict         *optimizer_whole,
                  HpSafetensorsDType   save_dtype,
                  const gchar         *dir,
                  GError             **error)
{
  g_autoptr(HpDecoderStateDictAdapter) adapter =
    g_object_new (HP_TYPE_DECODER_STATE_DICT_ADAPTER, "model-config", config,
                  "save-dtype", save_dtype, NULL);
  g_autoptr(HpStateDict) hf = NULL;
  g_autofree gchar *config_file = g_build_filename (dir, HP_MODEL_SOURCE_CONFIG_FILE, NULL);
  g_autofree gchar *hf_config_file = g_build_filename (dir, "config.json", NULL);
  g_autofree gchar *optimizer_file = g_build_filename (dir, "optimizer.safetensors", NULL);
  g_autofree gchar *hf_config = hp_decoder_state_dict_adapter_to_hf_config (adapter, error);

  hf = hf_config != NULL
    ? hp_state_dict_adapter_to_hf (HP_STATE_DICT_ADAPTER (adapter), model_whole, error) : NULL;
  return hf_config != NULL && hf != NULL &&
         hp_state_dict_adapter_save_hf_state_dict (HP_STATE_DICT_ADAPTER (adapter), hf,
                                                   HP_BASE_MODEL_CONFIG (config), dir, error) &&
         g_file_set_contents (hf_config_file, hf_config, -1, error) &&
         g_file_set_contents (config_file, config_json, -1, error) &&
         hp_safetensors_save (optimizer_whole, NULL, optimizer_file, error);
}

/* Saves step @step in the --save folder: rank 0 writes the files in a
 * staging directory, which the manager puts in place with its manifest */
static gboolean
save_checkpoint (Trainer              *trainer,
                 HpCheckpointManager  *manager,
                 HpDecoderConfig      *config,
                 const gchar          *config_json,
                 gint                  step,
                 GError              **error)
{
  g_autoptr(HpStateDict) model_states = hp_module_state_dict (HP_MODULE (trainer->model));
  g_autoptr(HpStateDict) own_states = hp_optimizer_get_state (trainer->optimizer);
  g_autoptr(HpStateDict) optimizer_states = reindex_states (own_states, trainer->global_index);
  g_autoptr(HpStateDict) model_whole = gather (model_states, error);
  g_autoptr(HpStateDict) optimizer_whole = model_whole != NULL ? gather (optimizer_states, error) : NULL;
  gboolean ok = optimizer_whole != NULL &&
                collect_stages (trainer, model_whole, error) &&
                collect_stages (trainer, optimizer_whole, error);

  if (ok && hp_get_world_rank () == 0)
    {
      g_autoptr(HpCheckpointStep) staged = hp_checkpoint_manager_stage (manager, step, error);

      if (staged != NULL && trainer->train_loader != NULL)
        {
          HpTokenDataset *data = hp_token_loader_get_dataset (trainer->train_loader);
          g_autofree gchar *position =
            g_strdup_printf ("%" G_GINT64_FORMAT, hp_token_loader_get_position (trainer->train_loader));
          g_autofree gchar *tokens =
            g_strdup_printf ("%" G_GINT64_FORMAT, hp_token_dataset_get_n_tokens (data));

          hp_checkpoint_step_set_metadata (staged, DATA_POSITION_KEY, position);
          hp_checkpoint_step_set_metadata (staged, DATA_TOKENS_KEY, tokens);
        }
      ok = staged != NULL &&
           write_step_files (config, config_json, model_whole, optimizer_whole,
                             trainer->options->save_dtype, hp_checkpoint_step_get_path (staged),
                             error) &&
           hp_checkpoint_manager_commit (manager, staged, error);
      if (staged != NULL && !hp_checkpoint_step_get_complete (staged))
        hp_checkpoint_manager_discard (manager, staged);
    }
  return rank0_agrees (ok, "the checkpoint", error) && ok;
}

/* The weights of the --load @source and its optimizer state; a Hugging
 * Face directory has weights only: training starts at step 1 with a
 * new optimizer */
static gboolean
load_checkpoint (Trainer        *trainer,
                 HpModelSource  *source,
                 GError        **error)
{
  HpCheckpointStep *step = hp_model_source_get_step (source);
  const gchar *dir = hp_model_source_get_path (source);
  g_autofree gchar *optimizer_file = NULL;
  g_autoptr(HpStateDict) optimizer_states = NULL;
  g_autoptr(HpStateDict) own_states = NULL;
  g_autoptr(GHashTable) local_index = g_hash_table_new (NULL, NULL);
  GHashTableIter iter;
  gpointer from, to;

  if (!hp_model_source_load_weights (source, trainer->model, error))
    return FALSE;
  if (step == NULL)
    return TRUE;
  if (hp_checkpoint_step_get_step (step) > G_MAXINT)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT, "%s: step %" G_GINT64_FORMAT
                   " is beyond what --steps counts", dir, hp_checkpoint_step_get_step (step));
      return FALSE;
    }
  optimizer_file = hp_checkpoint_step_get_file (step, "optimizer.safetensors", error);
  /* the file names the whole model's parameters: a stage takes its own */
  g_hash_table_iter_init (&iter, trainer->global_index);
  while (g_hash_table_iter_next (&iter, &from, &to))
    g_hash_table_insert (local_index, to, from);
  return optimizer_file != NULL &&
         (optimizer_states = hp_safetensors_load (optimizer_file, error)) != NULL &&
         (own_states = reindex_states (optimizer_states, local_index)) != NULL &&
         hp_optimizer_load_state (trainer->optimizer, own_states,
                                  (gint) hp_checkpoint_step_get_step (step), error);
}

/* Where the --data of the --load step goes on: the position that its
 * manifest keeps, or the start for a step saved without --data */
static gboolean
resume_data (Trainer           *trainer,
             HpCheckpointStep  *step,
             GError           **error)
{
  GHashTable *metadata = hp_checkpoint_step_get_metadata (step);
  const gchar *position_text = g_hash_table_lookup (metadata, DATA_POSITION_KEY);
  const gchar *tokens_text = g_hash_table_lookup (metadata, DATA_TOKENS_KEY);
  HpTokenDataset *data = hp_token_loader_get_dataset (trainer->train_loader);
  g_autofree gchar *tokens = g_strdup_printf ("%" G_GINT64_FORMAT, hp_token_dataset_get_n_tokens (data));
  gint64 position;

  if (position_text == NULL)
    return TRUE;
  if (g_strcmp0 (tokens_text, tokens) != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--load %s trained on %s tokens, and --data %s has %s: the run resumes on "
                   "the data it stopped in", hp_checkpoint_step_get_path (step),
                   tokens_text != NULL ? tokens_text : "an unknown number of",
                   trainer->options->data, tokens);
      return FALSE;
    }
  if (!g_ascii_string_to_signed (position_text, 10, 0, G_MAXINT64, &position, error) ||
      !hp_token_loader_set_position (trainer->train_loader, position, error))
    {
      g_prefix_error (error, "%s: %s: ", hp_checkpoint_step_get_path (step), DATA_POSITION_KEY);
      return FALSE;
    }
  return TRUE;
}

/* Opens the --data files, checks that the model's vocabulary holds
 * their ids, and makes the loaders of the training part and (for
 * --eval-every) of the validation part */
static gboolean
open_data (Options         *options,
           HpTokenDataset **train,
           HpTokenDataset **val,
           GError         **error)
{
  gdouble fraction = options->val_fraction < 0 ? DEFAULT_VAL_FRACTION : options->val_fraction;

  if (!hp_token_dataset_open_splits (options->data, fraction, train, val, error))
    {
      g_prefix_error (error, "--data: ");
      return FALSE;
    }
  if (options->eval_every > 0 && *val == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--eval-every: --data %s has no validation part: give --val-fraction above 0 "
                   "or shards named *val*", options->data);
      return FALSE;
    }
  return TRUE;
}

static HpTokenLoader *
new_loader (Options         *options,
            HpTokenDataset  *data,
            const gchar     *part,
            GError         **error)
{
  HpTokenLoader *loader = hp_token_loader_new (data, (guint) options->batch,
                                               (guint) options->seq_len, error);

  if (loader == NULL)
    g_prefix_error (error, "--data %s: the %s part: ", options->data, part);
  return loader;
}

/* Appends the JSON line of one step to the --metrics file */
static void
write_metrics (FILE    *file,
               gint     step,
               gdouble  loss,
               gdouble  val_loss,
               gdouble  lr,
               gdouble  tokens_per_second,
               gdouble  grad_norm,
               gdouble  peak_mib)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree gchar *line = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "step");
  json_builder_add_int_value (builder, step);
  json_builder_set_member_name (builder, "train_loss");
  json_builder_add_double_value (builder, loss);
  if (!isnan (val_loss))
    {
      json_builder_set_member_name (builder, "val_loss");
      json_builder_add_double_value (builder, val_loss);
    }
  json_builder_set_member_name (builder, "lr");
  json_builder_add_double_value (builder, lr);
  json_builder_set_member_name (builder, "tokens_per_second");
  json_builder_add_double_value (builder, tokens_per_second);
  json_builder_set_member_name (builder, "grad_norm");
  json_builder_add_double_value (builder, grad_norm);
  json_builder_set_member_name (builder, "peak_memory_mib");
  json_builder_add_double_value (builder, peak_mib);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  line = json_generator_to_data (generator, NULL);
  fprintf (file, "%s\n", line);
  fflush (file);
}

/* The newest complete step of the --save folder, -1 if none */
static gint64
newest_saved_step (HpCheckpointManager *manager)
{
  guint n_steps;
  g_autofree gint64 *steps = hp_checkpoint_manager_list_steps (manager, &n_steps);

  return n_steps > 0 ? steps[n_steps - 1] : -1;
}

static gboolean
save_and_report (Trainer              *trainer,
                 HpCheckpointManager  *manager,
                 HpDecoderConfig      *config,
                 const gchar          *config_json,
                 gint                  step,
                 GError              **error)
{
  if (!save_checkpoint (trainer, manager, config, config_json, step, error))
    return FALSE;
  if (hp_get_world_rank () == 0)
    g_print ("hp-train: saved %s" G_DIR_SEPARATOR_S "step-%d\n",
             hp_checkpoint_manager_get_folder (manager), step);
  return TRUE;
}

static gboolean
run (Options  *options,
     GError  **error)
{
  gint world = hp_get_world_size ();
  gboolean chatty = hp_get_world_rank () == 0;
  g_autoptr(HpDecoderConfig) config = NULL;
  g_autoptr(HpParallelDims) dims = hp_parallel_dims_new ();
  g_autoptr(HpParallelDims) resolved = NULL;
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpDeviceMesh) tp_mesh = NULL;
  g_autoptr(HpDeviceMesh) dp_mesh = NULL;
  g_autoptr(HpDeviceMesh) shard_mesh = NULL;
  g_autoptr(HpDeviceMesh) pp_mesh = NULL;
  g_autoptr(HpModelSpec) spec = NULL;
  g_autoptr(HpPipelineSchedule) schedule = NULL;
  g_autoptr(GHashTable) global_index = g_hash_table_new (NULL, NULL);
  g_autoptr(HpBaseModel) model = NULL;
  g_autoptr(HpAdamWConfig) optimizer_config = NULL;
  g_autoptr(HpOptimizer) optimizer = NULL;
  g_autoptr(GPtrArray) params = NULL;
  g_autofree gint64 *tokens = NULL;
  Trainer trainer = { 0 };
  gint dp = options->dp > 0 ? options->dp : world / (options->tp * options->fsdp * options->pp);
  gint64 nparams = 0;
  gint64 flops = 0;
  gdouble loss = NAN;
  gdouble first_loss = NAN;
  gdouble peak;
  gint64 start;
  gint first_step = 1;
  g_autofree gchar *config_json = NULL;
  g_auto(GValue) lr = G_VALUE_INIT;
  g_autoptr(HpModelSource) source = NULL;
  HpCheckpointStep *loaded = NULL;
  g_autoptr(HpCheckpointManager) manager = NULL;
  g_autoptr(HpTokenDataset) train_data = NULL;
  g_autoptr(HpTokenDataset) val_data = NULL;
  g_autoptr(HpTokenLoader) train_loader = NULL;
  g_autoptr(HpTokenLoader) val_loader = NULL;
  gint64 data_vocab = 0;
  FILE *metrics = NULL;
  gboolean ok = TRUE;

  /* the optimizer's fields check --lr (NaN, infinity, negative) before
   * anything is loaded or built */
  optimizer_config = hp_adamw_config_new ();
  g_value_init (&lr, G_TYPE_DOUBLE);
  g_value_set_double (&lr, options->lr);
  if (!hp_config_set_value (HP_CONFIG (optimizer_config), "lr", &lr, error))
    {
      g_prefix_error (error, "--");
      return FALSE;
    }
  hp_optimizer_config_set_weight_decay (HP_OPTIMIZER_CONFIG (optimizer_config), 0.0);
  /* every rank knows the layout alike: an error here (or, for --dp,
   * hp_parallel_dims_resolve's) stops them all before any collective */
  if (options->dp == 0 && world % (options->tp * options->fsdp * options->pp) != 0)
    {
      if (options->fsdp == 1 && options->pp == 1)
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "--tp %d does not divide world size %d", options->tp, world);
      else if (options->pp == 1)
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "--fsdp %d x --tp %d does not divide world size %d", options->fsdp,
                     options->tp, world);
      else if (options->fsdp == 1)
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "--pp %d x --tp %d does not divide world size %d", options->pp,
                     options->tp, world);
      else
        g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                     "--pp %d x --fsdp %d x --tp %d does not divide world size %d", options->pp,
                     options->fsdp, options->tp, world);
      return FALSE;
    }

  /* every rank reads the data alike, so that bad data stops them all
   * before any collective */
  if (options->data != NULL)
    {
      if (!open_data (options, &train_data, &val_data, error))
        return FALSE;
      data_vocab = MAX (hp_token_dataset_get_max_token (train_data),
                        val_data != NULL ? hp_token_dataset_get_max_token (val_data) : -1) + 1;
      train_loader = new_loader (options, train_data, "training", error);
      if (train_loader == NULL ||
          (options->eval_every > 0 &&
           !(val_loader = new_loader (options, val_data, "validation", error))))
        return FALSE;
    }

  if (options->load != NULL)
    {
      if (!(source = hp_model_source_open (options->load, error)))
        return FALSE;
      loaded = hp_model_source_get_step (source);
    }
  config = load_config (options, source, data_vocab, error);
  if (config == NULL)
    return FALSE;
  /* how the backward gets its activations changes no number: a
   * checkpoint's model may take it too */
  if (options->ac_name != NULL)
    {
      hp_decoder_config_set_activation_checkpointing (config, options->ac);
      if (options->ac == HP_ACTIVATION_CHECKPOINTING_EVERY_K)
        hp_decoder_config_set_ac_every (config, options->ac_every);
    }
  if (data_vocab > hp_decoder_config_get_vocab_size (config))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--data %s holds token %" G_GINT64_FORMAT ", beyond the model's vocab-size %d%s%"
                   G_GINT64_FORMAT " or more",
                   options->data, data_vocab - 1, hp_decoder_config_get_vocab_size (config),
                   options->load != NULL ? ", which a --load model keeps; its data needs "
                                         : ": give --set vocab-size=",
                   data_vocab);
      return FALSE;
    }
  /* a checkpoint opens in Hugging Face: find out now, not after training,
   * whether its config.json can describe the model */
  if (options->save != NULL)
    {
      g_autoptr(HpDecoderStateDictAdapter) adapter = hp_decoder_state_dict_adapter_new (config);
      g_autofree gchar *hf_config = hp_decoder_state_dict_adapter_to_hf_config (adapter, error);

      if (hf_config == NULL)
        {
          g_prefix_error (error, "--save: ");
          return FALSE;
        }
    }

  config_json = hp_config_to_json (HP_CONFIG (config), TRUE);
  g_object_set (dims, "tp", options->tp, "dp-replicate", dp, "dp-shard", options->fsdp,
                "pp", options->pp, NULL);
  resolved = hp_parallel_dims_resolve (dims, world, error);
  if (resolved == NULL ||
      !hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config),
                                                HP_CONFIG (resolved), error))
    return FALSE;
  if (options->batch % (dp * options->fsdp) != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--batch %d cannot be split over dp_replicate x dp_shard = %d",
                   options->batch, dp * options->fsdp);
      return FALSE;
    }
  if ((options->batch / (dp * options->fsdp)) % options->microbatches != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--microbatches %d: a replica's %d rows of --batch %d cannot be split into "
                   "%d microbatches of equal size", options->microbatches,
                   options->batch / (dp * options->fsdp),
                   options->batch, options->microbatches);
      return FALSE;
    }

  if (options->print_config)
    {
      g_autofree gchar *json = hp_config_to_json (HP_CONFIG (config), TRUE);

      if (chatty)
        g_print ("%s\n", json);
      return TRUE;
    }

  spec = hp_decoder_config_build_model_spec (config);
  model = hp_model_spec_build_model (spec, error);
  if (model == NULL)
    return FALSE;
  /* the whole model's size, and the index of each parameter in it, which
   * the optimizer's file names */
  hp_base_model_config_get_nparams_and_flops (HP_BASE_MODEL_CONFIG (config), model,
                                              options->seq_len, &nparams, &flops);
  {
    g_autoptr(HpStateDict) named = hp_module_named_parameters (HP_MODULE (model));
    g_autoptr(HpStateDict) kept = NULL;

    /* the stage of this rank: the pp coordinate of the mesh below */
    if (options->pp > 1 && !hp_model_spec_pipeline (spec, model, resolved, error))
      return FALSE;
    kept = hp_module_named_parameters (HP_MODULE (model));
    for (guint i = 0, k = 0; i < hp_state_dict_get_size (named) && k < hp_state_dict_get_size (kept); i++)
      if (g_str_equal (hp_state_dict_get_name (named, i), hp_state_dict_get_name (kept, k)))
        g_hash_table_insert (global_index, GUINT_TO_POINTER (k++), GUINT_TO_POINTER (i));
  }

  /* the 4-D (dp_replicate, dp_shard, tp, pp) mesh, degrees of 1
   * included, in HpParallelDims' order of dims: the pp coordinate is the
   * world rank modulo pp, as the decoder's pipelining function takes it */
  {
    const gchar *names[] = { "dp_replicate", "dp_shard", "tp", "pp", NULL };
    gint shape[] = { dp, options->fsdp, options->tp, options->pp };

    mesh = hp_device_mesh_new (shape, 4, names, error);
    if (mesh == NULL)
      return FALSE;
    tp_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "tp", NULL }, error);
    dp_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "dp_replicate", NULL }, error);
    shard_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "dp_shard", NULL }, error);
    pp_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "pp", NULL }, error);
    if (tp_mesh == NULL || dp_mesh == NULL || shard_mesh == NULL || pp_mesh == NULL)
      return FALSE;
  }
  if ((options->pp > 1 || options->microbatches > 1) &&
      !(schedule = hp_pipeline_schedule_new (pp_mesh, "pp", options->pp_schedule,
                                             (guint) options->microbatches, error)))
    return FALSE;
  if (options->tp > 1 && !hp_module_parallelize (HP_MODULE (model), tp_mesh, error))
    return FALSE;
  if (!hp_base_model_verify_module_protocol (HP_BASE_MODEL (model), error) ||
      !hp_base_model_init_weights (HP_BASE_MODEL (model), (guint64) options->seed, error))
    return FALSE;

  /* FSDP: each block of this rank's stage a unit, then the root for the
   * rest, as torchtitan; over the mesh without its pp dim */
  if (options->fsdp > 1)
    {
      gboolean reshard = g_strcmp0 (options->fsdp_reshard, "false") != 0;
      g_autoptr(HpDeviceMesh) fsdp_mesh =
        hp_device_mesh_slice (mesh, (const gchar *[]) { "dp_replicate", "dp_shard", "tp", NULL },
                              error);

      if (fsdp_mesh == NULL)
        return FALSE;
      for (gint i = 0; i < hp_decoder_config_get_n_layers (config); i++)
        {
          g_autofree gchar *path = g_strdup_printf ("layers.%d", i);
          HpModule *block = hp_module_get_child (HP_MODULE (model), path);

          /* another stage's block is not in this rank's model */
          if (block != NULL && !hp_module_fully_shard (block, fsdp_mesh, reshard, error))
            return FALSE;
        }
      if (!hp_module_fully_shard (HP_MODULE (model), fsdp_mesh, reshard, error))
        return FALSE;
      hp_module_set_fsdp_prefetch (HP_MODULE (model), g_strcmp0 (options->fsdp_prefetch, "off") != 0);
    }
  params = hp_module_parameters (HP_MODULE (model));
  optimizer = hp_optimizer_config_build_optimizer (HP_OPTIMIZER_CONFIG (optimizer_config),
                                                   params, error);
  if (optimizer == NULL)
    return FALSE;

  task_init (&trainer.task, hp_decoder_config_get_vocab_size (config), (guint64) options->seed);
  tokens = g_new (gint64, (gsize) options->batch * (options->seq_len + 1));
  trainer.options = options;
  trainer.model = HP_DECODER (model);
  trainer.optimizer = optimizer;
  trainer.params = params;
  trainer.tp_mesh = options->tp > 1 ? tp_mesh : NULL;
  trainer.dp_mesh = dp_mesh;
  trainer.shard_mesh = shard_mesh;
  trainer.fsdp = options->fsdp > 1;
  trainer.mesh = mesh;
  trainer.pp_mesh = options->pp > 1 ? pp_mesh : NULL;
  trainer.schedule = schedule;
  trainer.global_index = global_index;
  trainer.local_batch = options->batch / (dp * options->fsdp);
  trainer.tokens = tokens;
  trainer.train_loader = train_loader;
  trainer.val_loader = val_loader;

  if (chatty)
    {
      HpActivationCheckpointing ac = hp_decoder_config_get_activation_checkpointing (config);
      g_autofree gchar *ac_text =
        ac == HP_ACTIVATION_CHECKPOINTING_EVERY_K
        ? g_strdup_printf ("every-%d", hp_decoder_config_get_ac_every (config))
        : g_strdup (ac == HP_ACTIVATION_CHECKPOINTING_FULL ? "full" : "none");

      g_autofree gchar *pp_text =
        schedule != NULL
        ? g_strdup_printf (", %s, %d microbatches",
                           options->pp_schedule == HP_PIPELINE_SCHEDULE_KIND_GPIPE ? "gpipe" : "1f1b",
                           options->microbatches)
        : g_strdup ("");
      g_autofree gchar *dp_text = options->fsdp > 1
        ? g_strdup_printf ("dp_replicate %d x dp_shard %d", dp, options->fsdp)
        : g_strdup_printf ("dp %d", dp);

      g_print ("hp-train: %" G_GINT64_FORMAT " parameters, %d ranks (pp %d x %s x tp %d%s), "
               "%d steps of %d x %d tokens, activation checkpointing %s\n",
               nparams, world, options->pp, dp_text, options->tp, pp_text, options->steps,
               options->batch, options->seq_len, ac_text);
    }

  if (options->load != NULL)
    {
      const gchar *path = hp_model_source_get_path (source);
      gint saved_step = loaded != NULL ? (gint) hp_checkpoint_step_get_step (loaded) : 0;

      if (!load_checkpoint (&trainer, source, error) ||
          (loaded != NULL && train_loader != NULL && !resume_data (&trainer, loaded, error)))
        {
          g_free (trainer.task.successors);
          return FALSE;
        }
      first_step = saved_step + 1;
      if (chatty && loaded == NULL)
        g_print ("hp-train: the weights of %s, with a new optimizer\n", path);
      else if (chatty && first_step > options->steps)
        g_print ("hp-train: %s is at step %d, and --steps is %d: nothing to train\n",
                 path, saved_step, options->steps);
      else if (chatty)
        g_print ("hp-train: resumed from %s after step %d\n", path, saved_step);
    }
  /* a folder holds the steps of one run: none past where this one starts */
  if (options->save != NULL)
    {
      manager = hp_checkpoint_manager_new (options->save);
      hp_checkpoint_manager_set_keep (manager, (guint) options->keep);
      if (newest_saved_step (manager) >= first_step)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "--save %s holds step %" G_GINT64_FORMAT ", and this run starts after "
                       "step %d: a folder keeps the steps of one run, and a step is never "
                       "overwritten", options->save, newest_saved_step (manager), first_step - 1);
          g_free (trainer.task.successors);
          return FALSE;
        }
    }

  if (options->metrics != NULL)
    {
      if (chatty && (metrics = fopen (options->metrics, "a")) == NULL)
        {
          int saved_errno = errno;

          g_set_error (error, HP_ERROR, HP_ERROR_IO, "--metrics %s: %s", options->metrics,
                       g_strerror (saved_errno));
        }
      if (!rank0_agrees (!chatty || metrics != NULL, "the --metrics file", error))
        {
          g_free (trainer.task.successors);
          return FALSE;
        }
    }

  start = g_get_monotonic_time ();
  for (gint step = first_step; ok && step <= options->steps; step++)
    {
      gint64 step_start = g_get_monotonic_time ();
      gboolean logged = step % options->log_every == 0 || step == options->steps;
      gboolean validated = val_loader != NULL &&
                           (step % options->eval_every == 0 || step == options->steps);
      gboolean measured = options->metrics != NULL && (logged || validated);
      gdouble grad_norm = NAN;
      gdouble val_loss = NAN;
      gdouble tokens_per_second;

      if (!train_step (&trainer, step, &loss, measured ? &grad_norm : NULL, error))
        {
          ok = FALSE;
          break;
        }
      tokens_per_second = options->batch * options->seq_len /
                          MAX ((g_get_monotonic_time () - step_start) / 1e6, 1e-9);
      if (step == first_step)
        first_loss = loss;
      if (chatty && logged)
        {
          gdouble elapsed = (g_get_monotonic_time () - start) / 1e6;
          g_autofree gchar *elapsed_text = format_seconds (elapsed);
          g_autofree gchar *eta_text = format_seconds (elapsed / (step - first_step + 1) * (options->steps - step));

          g_print ("step %5d/%d  loss %.6f  tokens/s %8.0f  elapsed %s  eta %s\n",
                   step, options->steps, loss, tokens_per_second, elapsed_text, eta_text);
        }
      if (validated)
        {
          if (!evaluate (&trainer, &val_loss, error))
            {
              ok = FALSE;
              break;
            }
          if (chatty)
            g_print ("step %5d/%d  val loss %.4f  ppl %.2f\n", step, options->steps, val_loss,
                     exp (val_loss));
        }
      if (measured)
        {
          gdouble peak_mib = peak_memory_mib (mesh);

          if (chatty)
            write_metrics (metrics, step, loss, val_loss, options->lr, tokens_per_second,
                           grad_norm, peak_mib);
        }
      ok = manager == NULL || options->save_every == 0 || step % options->save_every != 0 ||
           save_and_report (&trainer, manager, config, config_json, step, error);
    }
  g_clear_pointer (&metrics, fclose);

  if (ok && manager != NULL && newest_saved_step (manager) != MAX (options->steps, first_step - 1))
    ok = save_and_report (&trainer, manager, config, config_json,
                          MAX (options->steps, first_step - 1), error);
  if (!ok)
    {
      g_free (trainer.task.successors);
      return FALSE;
    }

  peak = peak_memory_mib (mesh);
  if (chatty && first_step <= options->steps)
    {
      gdouble elapsed = (g_get_monotonic_time () - start) / 1e6;
      g_autofree gchar *elapsed_text = format_seconds (elapsed);
      g_autofree gchar *entropy = train_loader != NULL
        ? g_strdup ("") : g_strdup_printf ("the task's entropy is %.4f, ", task_entropy ());
      gint ran = options->steps - first_step + 1;

      g_print ("done: %d steps in %s, %.0f tokens/s; loss %.4f -> %.4f (%slog(vocab) %.4f)\n",
               ran, elapsed_text,
               ran * (gdouble) options->batch * options->seq_len / MAX (elapsed, 1e-9),
               first_loss, loss, entropy, log (hp_decoder_config_get_vocab_size (config)));
      g_print ("peak memory per rank: %.1f MiB\n", peak);
      /* the cost of the data on rank 0, which reads as many rows as any */
      if (train_loader != NULL)
        g_print ("data loading: %.1f us per step, %.2f %% of the training time\n",
                 trainer.data_usec / (gdouble) ran,
                 100.0 * trainer.data_usec / MAX (elapsed * 1e6, 1));
    }
  g_free (trainer.task.successors);
  return TRUE;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  Options options = { 0 };
  gboolean ok;

  if (!hp_init (&error))
    {
      g_printerr ("hp-train: %s\n", error->message);
      return EXIT_FAILURE;
    }

  ok = parse_options (&options, &argc, &argv, &error) && run (&options, &error);
  if (!ok && hp_get_world_rank () == 0)
    g_printerr ("hp-train: %s\n", error->message);
  options_clear (&options);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
