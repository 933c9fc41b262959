/* test-model-source.c: decoders read back from a checkpoint step and a
 * Hugging Face directory, on one rank and tensor parallel
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi). Each rank writes the files
 * of the same model into its own temporary directory, so no name is
 * shared between the ranks.
 */

#include <glib/gstdio.h>

#include "hp-test-utils.h"

static HpDecoderConfig *
small_config (gint tp)
{
  return g_object_new (HP_TYPE_DECODER_CONFIG,
                       "dim", 8 * tp, "n-layers", 2, "n-heads", 2 * tp, "n-kv-heads", tp,
                       "vocab-size", 13, "ffn-hidden", 12, "max-seq-len", 16,
                       "dtype", HP_DTYPE_FLOAT64, NULL);
}

/* A built, initialized one-rank decoder of @config */
static HpModule *
build (HpDecoderConfig *config)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpConfig) copy = hp_config_copy (HP_CONFIG (config));
  GObject *model;

  g_assert_true (hp_decoder_config_expand (HP_DECODER_CONFIG (copy), &error));
  model = hp_config_build (copy, &error);
  g_assert_no_error (error);
  g_assert_true (hp_base_model_init_weights (HP_BASE_MODEL (model), 7, &error));
  g_assert_no_error (error);
  return HP_MODULE (model);
}

/* Writes @model as Hugging Face has it into @dir, with @hp_config
 * (the configuration's JSON, for a step) when not NULL */
static void
write_files (HpModule        *model,
             HpDecoderConfig *config,
             const gchar     *dir,
             gboolean         hp_config)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoderStateDictAdapter) adapter = hp_decoder_state_dict_adapter_new (config);
  g_autoptr(HpStateDict) states = hp_module_state_dict (model);
  g_autoptr(HpStateDict) hf = hp_state_dict_adapter_to_hf (HP_STATE_DICT_ADAPTER (adapter), states,
                                                           &error);
  g_autofree gchar *hf_config = hp_decoder_state_dict_adapter_to_hf_config (adapter, &error);
  g_autofree gchar *hf_file = g_build_filename (dir, "config.json", NULL);

  g_assert_no_error (error);
  g_assert_true (hp_state_dict_adapter_save_hf_state_dict (HP_STATE_DICT_ADAPTER (adapter), hf,
                                                           HP_BASE_MODEL_CONFIG (config), dir,
                                                           &error));
  g_assert_true (g_file_set_contents (hf_file, hf_config, -1, &error));
  g_assert_no_error (error);
  if (hp_config)
    {
      g_autofree gchar *json = hp_config_to_json (HP_CONFIG (config), TRUE);
      g_autofree gchar *file = g_build_filename (dir, HP_MODEL_SOURCE_CONFIG_FILE, NULL);

      g_assert_true (g_file_set_contents (file, json, -1, &error));
      g_assert_no_error (error);
    }
}

static HpTensor *
logits_of (HpModule *model)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) ids = hp_test_tensor_ids ((const gint64[]) { 1, 5, 2, 12, 0, 7, 3, 3 }, 8,
                                                HP_TEST_SHAPE (2, 4));
  g_autoptr(HpTensor) logits = hp_module_call1 (model, ids, &error);

  g_assert_no_error (error);
  return HP_IS_DTENSOR (logits) ? hp_test_full_tensor (logits) : g_object_ref (logits);
}

/* A folder of one committed step, and a Hugging Face directory: both
 * give back the model, on one rank and over every rank */
static void
test_round_trip (void)
{
  g_autoptr(GError) error = NULL;
  gint tp = hp_get_world_size ();
  g_autoptr(HpDecoderConfig) config = small_config (tp);
  g_autoptr(HpModule) model = build (config);
  g_autoptr(HpTensor) expected = logits_of (model);
  g_autofree gchar *root = g_dir_make_tmp ("hp-test-model-source-XXXXXX", &error);
  g_autofree gchar *folder = g_build_filename (root, "run", NULL);
  g_autofree gchar *hf_dir = g_build_filename (root, "hf", NULL);
  g_autoptr(HpCheckpointManager) manager = hp_checkpoint_manager_new (folder);
  g_autoptr(HpCheckpointStep) staged = hp_checkpoint_manager_stage (manager, 4, &error);
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  const gchar *paths[] = { folder, hf_dir };

  g_assert_no_error (error);
  write_files (model, config, hp_checkpoint_step_get_path (staged), TRUE);
  g_assert_true (hp_checkpoint_manager_commit (manager, staged, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir (hf_dir, 0700), ==, 0);
  write_files (model, config, hf_dir, FALSE);

  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      g_autoptr(HpModelSource) source = hp_model_source_open (paths[i], &error);
      g_autoptr(HpDecoderConfig) loaded_config = NULL;
      g_autoptr(HpDecoder) one = NULL;
      g_autoptr(HpDecoder) parallel = NULL;
      g_autoptr(HpTensor) got = NULL;
      g_autoptr(HpTensor) got_parallel = NULL;

      g_assert_no_error (error);
      g_assert_true ((hp_model_source_get_step (source) != NULL) == (i == 0));
      if (i == 0)
        {
          g_autofree gchar *name = g_path_get_basename (hp_model_source_get_path (source));

          g_assert_cmpint (hp_checkpoint_step_get_step (hp_model_source_get_step (source)), ==, 4);
          g_assert_cmpstr (name, ==, "step-4");
        }
      else
        g_assert_cmpstr (hp_model_source_get_path (source), ==, hf_dir);
      loaded_config = hp_model_source_load_config (source, &error);
      g_assert_no_error (error);
      g_assert_cmpint (hp_decoder_config_get_vocab_size (loaded_config), ==, 13);

      one = hp_model_source_load_decoder (source, NULL, &error);
      g_assert_no_error (error);
      got = logits_of (HP_MODULE (one));
      hp_test_assert_close (got, expected, 1e-12, 1e-12);

      parallel = hp_model_source_load_decoder (source, mesh, &error);
      g_assert_no_error (error);
      if (tp > 1)
        g_assert_true (HP_IS_DTENSOR (hp_module_get_parameter (HP_MODULE (parallel),
                                                               "layers.0.attention.wq.weight")));
      got_parallel = logits_of (HP_MODULE (parallel));
      hp_test_assert_close (got_parallel, expected, 1e-10, 1e-12);
    }
  hp_test_remove_tree (root);
}

/* Paths that hold no model, broken files, a mesh and a model that do
 * not fit */
static void
test_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *root = g_dir_make_tmp ("hp-test-model-source-XXXXXX", &error);
  g_autofree gchar *empty = g_build_filename (root, "empty", NULL);
  g_autofree gchar *fake_step = g_build_filename (root, "step-3", NULL);
  g_autofree gchar *broken = g_build_filename (root, "broken", NULL);
  g_autofree gchar *broken_config = g_build_filename (broken, "config.json", NULL);
  g_autofree gchar *hf_dir = g_build_filename (root, "hf", NULL);
  g_autofree gchar *message = NULL;
  g_autoptr(HpDecoderConfig) config = small_config (1);
  g_autoptr(HpModule) model = build (config);
  g_autoptr(HpDecoderConfig) other_config = small_config (1);
  g_autoptr(HpModule) other = NULL;
  g_autoptr(HpModelSource) source = NULL;
  g_autoptr(HpModelSource) broken_source = NULL;
  g_autoptr(HpDeviceMesh) square = NULL;
  g_autoptr(HpStateDict) before = NULL;
  gint shape[] = { 1, hp_get_world_size () };

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir (empty, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (fake_step, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (broken, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (hf_dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (broken_config, "{ \"hidden_size\": ", -1, &error));
  write_files (model, config, hf_dir, FALSE);

  message = g_strdup_printf ("%s: no checkpoint: neither a step", empty);
  hp_test_assert_error (hp_model_source_open (empty, &error), &error, HP_ERROR_IO, message);
  g_clear_error (&error);
  hp_test_assert_error (hp_model_source_open (fake_step, &error), &error, HP_ERROR_IO, NULL);
  g_clear_error (&error);

  /* a broken config.json opens, and fails when read */
  broken_source = hp_model_source_open (broken, &error);
  g_assert_no_error (error);
  g_free (message);
  message = g_strdup_printf ("%s: ", broken_config);
  hp_test_assert_error (hp_model_source_load_config (broken_source, &error), &error,
                        HP_ERROR_FORMAT, message);
  g_clear_error (&error);
  hp_test_assert_error (hp_model_source_load_decoder (broken_source, NULL, &error), &error,
                        HP_ERROR_FORMAT, "HF config: not valid JSON");
  g_clear_error (&error);

  source = hp_model_source_open (hf_dir, &error);
  g_assert_no_error (error);
  square = hp_device_mesh_new (shape, 2, (const gchar *[]) { "dp", "tp", NULL }, &error);
  g_assert_no_error (error);
  hp_test_assert_error (hp_model_source_load_decoder (source, square, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT, "the tensor-parallel mesh has 2 dims, but needs 1");
  g_clear_error (&error);

  /* weights of another vocabulary: refused, the model unchanged */
  g_object_set (other_config, "vocab-size", 17, NULL);
  other = build (other_config);
  before = hp_module_state_dict (other);
  hp_test_assert_error (GINT_TO_POINTER (hp_model_source_load_weights (source, HP_DECODER (other),
                                                                       &error)),
                        &error, HP_ERROR_SHAPE, NULL);
  g_clear_error (&error);
  {
    g_autoptr(HpStateDict) after = hp_module_state_dict (other);

    for (guint i = 0; i < hp_state_dict_get_size (after); i++)
      g_assert_true (hp_state_dict_get_tensor (after, i) == hp_state_dict_get_tensor (before, i));
  }
  hp_test_remove_tree (root);
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init_world (&argc, &argv);
  g_test_add_func ("/model-source/round-trip", test_round_trip);
  g_test_add_func ("/model-source/errors", test_errors);
  return g_test_run ();
}
