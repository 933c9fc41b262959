/* test-hf-checkpoint.c: the decoder under Hugging Face Llama names, saved
 * and loaded as safetensors, and loaded into a laid-out decoder
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi): rank 0 writes the checkpoint,
 * every rank loads it.
 */

#include <glib/gstdio.h>
#include <mpi.h>
#include <string.h>

#include "hp-test-utils.h"

/* the rounding of the writer */
#include "hp-safetensors-private.h"

static gint world_size;

/* A float64 decoder whose heads split over @tp ranks */
static HpDecoderConfig *
decoder_config (gint tp)
{
  return g_object_new (HP_TYPE_DECODER_CONFIG,
                       "dim", 8 * tp, "n-layers", 2, "n-heads", 2 * tp, "n-kv-heads", tp,
                       "vocab-size", 11, "ffn-hidden", 12, "max-seq-len", 8,
                       "dtype", HP_DTYPE_FLOAT64, NULL);
}

static HpModule *
build (HpDecoderConfig *config,
       guint64          seed)
{
  g_autoptr(GError) error = NULL;
  GObject *model = hp_config_build (HP_CONFIG (config), &error);

  g_assert_no_error (error);
  g_assert_true (hp_module_init_states (HP_MODULE (model), seed, &error));
  g_assert_no_error (error);
  return HP_MODULE (model);
}

static void
test_names_and_permutation (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoderConfig) config = decoder_config (1);
  g_autoptr(HpModule) model = build (config, 1);
  g_autoptr(HpDecoderStateDictAdapter) adapter = hp_decoder_state_dict_adapter_new (config);
  HpStateDictAdapter *as_adapter = HP_STATE_DICT_ADAPTER (adapter);
  g_autoptr(HpStateDict) states = hp_module_state_dict (model);
  g_autoptr(HpStateDict) hf = NULL;
  g_autoptr(HpStateDict) back = NULL;
  g_autoptr(HpStateDict) stray = hp_state_dict_new ();
  g_autofree gdouble *wq = NULL;
  g_autofree gdouble *q_proj = NULL;
  gsize n;

  hf = hp_state_dict_adapter_to_hf (as_adapter, states, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hp_state_dict_get_size (hf), ==, hp_state_dict_get_size (states));
  g_assert_cmpstr (hp_state_dict_get_name (hf, 0), ==, "model.embed_tokens.weight");
  g_assert_true (hp_state_dict_contains (hf, "model.layers.1.self_attn.k_proj.weight"));
  g_assert_true (hp_state_dict_contains (hf, "model.layers.0.mlp.down_proj.weight"));
  g_assert_true (hp_state_dict_contains (hf, "model.layers.0.post_attention_layernorm.weight"));
  g_assert_true (hp_state_dict_contains (hf, "model.norm.weight"));
  g_assert_true (hp_state_dict_contains (hf, "lm_head.weight"));
  /* unpermuted names keep their tensors */
  g_assert_true (hp_state_dict_lookup (hf, "model.layers.0.self_attn.v_proj.weight") ==
                 hp_state_dict_lookup (states, "layers.0.attention.wv.weight"));

  /* head size 4: Meta's interleaved rows 0 1 2 3 become halves 0 2 1 3 */
  wq = hp_tensor_to_float64_array (hp_state_dict_lookup (states, "layers.0.attention.wq.weight"), &n);
  q_proj = hp_tensor_to_float64_array (hp_state_dict_lookup (hf, "model.layers.0.self_attn.q_proj.weight"), &n);
  for (guint head = 0; head < 2; head++)
    for (guint col = 0; col < 8; col++)
      {
        guint base = head * 4;

        g_assert_cmpfloat (q_proj[(base + 0) * 8 + col], ==, wq[(base + 0) * 8 + col]);
        g_assert_cmpfloat (q_proj[(base + 1) * 8 + col], ==, wq[(base + 2) * 8 + col]);
        g_assert_cmpfloat (q_proj[(base + 2) * 8 + col], ==, wq[(base + 1) * 8 + col]);
        g_assert_cmpfloat (q_proj[(base + 3) * 8 + col], ==, wq[(base + 3) * 8 + col]);
      }

  back = hp_state_dict_adapter_from_hf (as_adapter, hf, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < hp_state_dict_get_size (states); i++)
    hp_test_assert_close (hp_state_dict_lookup (back, hp_state_dict_get_name (states, i)),
                          hp_state_dict_get_tensor (states, i), 0, 0);

  hp_state_dict_insert (stray, "model.layers.0.self_attn.rotary_emb.inv_freq",
                        hp_state_dict_get_tensor (states, 0));
  hp_test_assert_error (hp_state_dict_adapter_from_hf (as_adapter, stray, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "no decoder name for 'model.layers.0.self_attn.rotary_emb.inv_freq'");
}

/* A directory every rank knows: made by rank 0 */
static gchar *
shared_tmp_dir (void)
{
  gchar path[1024] = { 0 };

  if (hp_get_world_rank () == 0)
    {
      g_autoptr(GError) error = NULL;
      g_autofree gchar *made = g_dir_make_tmp ("hp-test-hf-XXXXXX", &error);

      g_assert_no_error (error);
      g_strlcpy (path, made, sizeof path);
    }
  MPI_Bcast (path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  return g_strdup (path);
}

static void
remove_dir (const gchar *path)
{
  g_autoptr(GDir) dir = NULL;
  const gchar *name;

  MPI_Barrier (MPI_COMM_WORLD);
  if (hp_get_world_rank () != 0)
    return;
  dir = g_dir_open (path, 0, NULL);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree gchar *file = g_build_filename (path, name, NULL);

      g_unlink (file);
    }
  g_rmdir (path);
}

/* Saved in shards by rank 0, loaded into a decoder laid out over every
 * rank: its states are the saved ones */
static void
test_sharded_save_and_laid_out_load (void)
{
  g_autoptr(GError) error = NULL;
  gint tp = world_size;
  g_autoptr(HpDecoderConfig) config = decoder_config (tp);
  g_autoptr(HpDecoderConfig) laid_out_config = decoder_config (tp);
  g_autoptr(HpModule) saved = build (config, 5);
  g_autoptr(HpModule) laid_out = NULL;
  g_autoptr(HpDecoderStateDictAdapter) adapter = hp_decoder_state_dict_adapter_new (config);
  HpStateDictAdapter *as_adapter = HP_STATE_DICT_ADAPTER (adapter);
  g_autoptr(HpStateDict) states = hp_module_state_dict (saved);
  g_autoptr(HpStateDict) hf = NULL;
  g_autoptr(HpStateDict) loaded = NULL;
  g_autoptr(HpStateDict) back = NULL;
  g_autoptr(HpStateDict) after = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(GHashTable) shards = NULL;
  g_autofree gchar *dir = shared_tmp_dir ();
  g_autofree gchar *index = g_build_filename (dir, "model.safetensors.index.json", NULL);
  guint largest = 0;
  GHashTableIter iter;
  gpointer value;

  hp_base_state_dict_adapter_set_max_shard_size (HP_BASE_STATE_DICT_ADAPTER (adapter), 4096);
  hf = hp_state_dict_adapter_to_hf (as_adapter, states, &error);
  g_assert_no_error (error);
  if (hp_get_world_rank () == 0)
    {
      g_assert_true (hp_state_dict_adapter_save_hf_state_dict (as_adapter, hf,
                                                               HP_BASE_MODEL_CONFIG (config),
                                                               dir, &error));
      g_assert_no_error (error);
    }
  MPI_Barrier (MPI_COMM_WORLD);
  g_assert_true (g_file_test (index, G_FILE_TEST_EXISTS));

  shards = hp_base_state_dict_adapter_fqn_to_index_mapping (HP_BASE_STATE_DICT_ADAPTER (adapter),
                                                            dir, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_hash_table_size (shards), ==, hp_state_dict_get_size (hf));
  g_hash_table_iter_init (&iter, shards);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    largest = MAX (largest, GPOINTER_TO_UINT (value));
  g_assert_cmpuint (largest, >, 1);

  g_assert_true (hp_set_decoder_sharding_config (laid_out_config, TRUE, FALSE, &error));
  laid_out = build (laid_out_config, 9);
  g_assert_true (hp_module_parallelize (laid_out, mesh, &error));
  g_assert_no_error (error);

  loaded = hp_state_dict_adapter_load_hf_state_dict (as_adapter, dir, HP_BASE_MODEL_CONFIG (config),
                                                     HP_DTYPE_FLOAT64, &error);
  g_assert_no_error (error);
  back = hp_state_dict_adapter_from_hf (as_adapter, loaded, &error);
  g_assert_no_error (error);
  g_assert_true (hp_module_load_state_dict (laid_out, back, TRUE, &error));
  g_assert_no_error (error);

  after = hp_module_state_dict (laid_out);
  g_assert_true (HP_IS_DTENSOR (hp_state_dict_lookup (after, "layers.0.attention.wq.weight")));
  for (guint i = 0; i < hp_state_dict_get_size (states); i++)
    {
      HpTensor *state = hp_state_dict_lookup (after, hp_state_dict_get_name (states, i));
      g_autoptr(HpTensor) whole = HP_IS_DTENSOR (state) ? hp_test_full_tensor (state)
                                                        : g_object_ref (state);

      hp_test_assert_close (whole, hp_state_dict_get_tensor (states, i), 0, 0);
    }
  remove_dir (dir);
}

/* A tied decoder's checkpoint has no lm_head.weight, as transformers
 * writes one: saved by rank 0, loaded into a tied decoder laid out over
 * every rank. An lm_head.weight in a tied checkpoint is read only with
 * the embedding's values; an untied decoder still needs one. */
static void
test_tied (void)
{
  g_autoptr(GError) error = NULL;
  gint tp = world_size;
  g_autoptr(HpDecoderConfig) config = decoder_config (tp);
  g_autoptr(HpDecoderConfig) laid_out_config = decoder_config (tp);
  g_autoptr(HpDecoderConfig) untied_config = decoder_config (tp);
  g_autoptr(HpModule) saved = NULL;
  g_autoptr(HpModule) laid_out = NULL;
  g_autoptr(HpModule) untied = NULL;
  g_autoptr(HpDecoderStateDictAdapter) adapter = NULL;
  g_autoptr(HpDecoderStateDictAdapter) untied_adapter = hp_decoder_state_dict_adapter_new (untied_config);
  HpStateDictAdapter *as_adapter;
  g_autoptr(HpStateDict) states = NULL;
  g_autoptr(HpStateDict) hf = NULL;
  g_autoptr(HpStateDict) loaded = NULL;
  g_autoptr(HpStateDict) back = NULL;
  g_autoptr(HpStateDict) after = NULL;
  g_autoptr(HpStateDict) laid_out_hf = NULL;
  g_autoptr(HpStateDict) other_head = hp_state_dict_new ();
  g_autoptr(HpStateDict) two_dtensors = hp_state_dict_new ();
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpTensor) copy = NULL;
  g_autoptr(HpTensor) changed = NULL;
  g_autofree gchar *dir = shared_tmp_dir ();
  HpTensor *table;

  g_object_set (config, "tie-word-embeddings", TRUE, NULL);
  g_object_set (laid_out_config, "tie-word-embeddings", TRUE, NULL);
  saved = build (config, 5);
  adapter = hp_decoder_state_dict_adapter_new (config);
  as_adapter = HP_STATE_DICT_ADAPTER (adapter);
  states = hp_module_state_dict (saved);
  g_assert_true (hp_state_dict_contains (states, "lm_head.weight"));
  hf = hp_state_dict_adapter_to_hf (as_adapter, states, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hp_state_dict_get_size (hf), ==, hp_state_dict_get_size (states) - 1);
  g_assert_false (hp_state_dict_contains (hf, "lm_head.weight"));
  if (hp_get_world_rank () == 0)
    {
      g_assert_true (hp_state_dict_adapter_save_hf_state_dict (as_adapter, hf,
                                                               HP_BASE_MODEL_CONFIG (config),
                                                               dir, &error));
      g_assert_no_error (error);
    }
  MPI_Barrier (MPI_COMM_WORLD);

  g_assert_true (hp_set_decoder_sharding_config (laid_out_config, TRUE, FALSE, &error));
  laid_out = build (laid_out_config, 9);
  g_assert_true (hp_module_parallelize (laid_out, mesh, &error));
  g_assert_no_error (error);
  loaded = hp_state_dict_adapter_load_hf_state_dict (as_adapter, dir, HP_BASE_MODEL_CONFIG (config),
                                                     HP_DTYPE_FLOAT64, &error);
  g_assert_no_error (error);
  g_assert_false (hp_state_dict_contains (loaded, "lm_head.weight"));
  back = hp_state_dict_adapter_from_hf (as_adapter, loaded, &error);
  g_assert_no_error (error);
  g_assert_true (hp_state_dict_lookup (back, "lm_head.weight") ==
                 hp_state_dict_lookup (back, "tok_embeddings.weight"));
  g_assert_true (hp_module_load_state_dict (laid_out, back, TRUE, &error));
  g_assert_no_error (error);
  after = hp_module_state_dict (laid_out);
  for (guint i = 0; i < hp_state_dict_get_size (states); i++)
    {
      HpTensor *state = hp_state_dict_lookup (after, hp_state_dict_get_name (states, i));
      g_autoptr(HpTensor) whole = HP_IS_DTENSOR (state) ? hp_test_full_tensor (state)
                                                        : g_object_ref (state);

      hp_test_assert_close (whole, hp_state_dict_get_tensor (states, i), 0, 0);
    }

  /* a laid-out tied decoder writes its table once, without gathering */
  laid_out_hf = hp_state_dict_adapter_to_hf (as_adapter, after, &error);
  g_assert_no_error (error);
  g_assert_false (hp_state_dict_contains (laid_out_hf, "lm_head.weight"));

  /* an lm_head.weight that copies the table is read; another is not */
  table = hp_state_dict_lookup (loaded, "model.embed_tokens.weight");
  copy = hp_tensor_detach (table);
  hp_state_dict_insert (loaded, "lm_head.weight", copy);
  g_clear_object (&back);
  back = hp_state_dict_adapter_from_hf (as_adapter, loaded, &error);
  g_assert_no_error (error);
  g_assert_true (hp_module_load_state_dict (laid_out, back, TRUE, &error));
  g_assert_no_error (error);
  changed = hp_tensor_scale (table, 2, &error);
  g_assert_no_error (error);
  hp_state_dict_insert (loaded, "lm_head.weight", changed);
  hp_test_assert_error (hp_state_dict_adapter_from_hf (as_adapter, loaded, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "HpDecoderStateDictAdapter: 'lm_head.weight' differs from "
                        "'model.embed_tokens.weight', which a decoder with tie-word-embeddings "
                        "uses as its head");

  /* a tied checkpoint with the head alone gives it under both paths */
  {
    g_autoptr(HpStateDict) head_only = hp_state_dict_new ();
    g_autoptr(HpStateDict) both = NULL;

    hp_state_dict_insert (head_only, "lm_head.weight", table);
    both = hp_state_dict_adapter_from_hf (as_adapter, head_only, &error);
    g_assert_no_error (error);
    g_assert_true (hp_state_dict_lookup (both, "tok_embeddings.weight") == table);
    g_assert_true (hp_state_dict_lookup (both, "lm_head.weight") == table);
  }

  /* writing a head that is not the table would lose it */
  hp_state_dict_insert (other_head, "tok_embeddings.weight",
                        hp_state_dict_lookup (states, "tok_embeddings.weight"));
  hp_state_dict_insert (other_head, "lm_head.weight", changed);
  hp_test_assert_error (hp_state_dict_adapter_to_hf (as_adapter, other_head, &error), &error,
                        HP_ERROR_INVALID_ARGUMENT,
                        "'lm_head.weight' differs from 'tok_embeddings.weight'");
  hp_state_dict_insert (two_dtensors, "tok_embeddings.weight",
                        hp_state_dict_lookup (after, "tok_embeddings.weight"));
  hp_state_dict_insert (two_dtensors, "lm_head.weight",
                        hp_state_dict_lookup (after, "layers.0.attention.wq.weight"));
  hp_test_assert_error (hp_state_dict_adapter_to_hf (as_adapter, two_dtensors, &error), &error,
                        HP_ERROR_NOT_SUPPORTED,
                        "HpDecoderStateDictAdapter: 'lm_head.weight' is not the tensor of "
                        "'tok_embeddings.weight', which a decoder with tie-word-embeddings uses "
                        "as its head, and DTensors are not compared; give their full tensors");

  /* an untied decoder needs its head */
  g_clear_object (&back);
  hp_state_dict_remove (loaded, "lm_head.weight");
  back = hp_state_dict_adapter_from_hf (HP_STATE_DICT_ADAPTER (untied_adapter), loaded, &error);
  g_assert_no_error (error);
  untied = build (untied_config, 9);
  hp_test_assert_error (GINT_TO_POINTER (hp_module_load_state_dict (untied, back, TRUE, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT, "Missing key(s): 'lm_head.weight'.");
  remove_dir (dir);
}

/* A decoder with the attention variants: a head dim that is not
 * dim / n-heads, q/k/v/o biases and llama3 RoPE scaling */
static HpDecoderConfig *
variant_config (gint tp)
{
  HpDecoderConfig *config = decoder_config (tp);

  g_object_set (config, "head-dim", 6, "attention-bias", TRUE,
                "rope-scaling", HP_ROPE_SCALING_LLAMA3, "rope-scaling-factor", 3.0,
                "rope-original-max-seq-len", 8, NULL);
  return config;
}

/* Logits of @model for fixed ids, gathered */
static HpTensor *
logits_of (HpModule *model)
{
  g_autoptr(GError) error = NULL;
  const gint64 ids[] = { 1, 5, 9, 2, 0, 7, 3, 10 };
  g_autoptr(HpTensor) input = hp_test_tensor_ids (ids, G_N_ELEMENTS (ids), HP_TEST_SHAPE (2, 4));
  g_autoptr(HpTensor) logits = hp_module_call1 (model, input, &error);

  g_assert_no_error (error);
  return HP_IS_DTENSOR (logits) ? hp_test_full_tensor (logits) : g_object_ref (logits);
}

/* A Hugging Face directory of the variants (config.json from the
 * adapter, weights under HF names, biases permuted like their weights)
 * loads from its config.json alone into a decoder laid out over every
 * rank, which gives the logits of the decoder saved */
static void
test_variants_hf_layout (void)
{
  g_autoptr(GError) error = NULL;
  gint tp = world_size;
  g_autoptr(HpDecoderConfig) config = variant_config (tp);
  g_autoptr(HpModule) saved = build (config, 3);
  g_autoptr(HpDecoderStateDictAdapter) adapter = hp_decoder_state_dict_adapter_new (config);
  g_autoptr(HpDecoderStateDictAdapter) from_json = NULL;
  g_autoptr(HpStateDict) states = hp_module_state_dict (saved);
  g_autoptr(HpStateDict) biases = hp_state_dict_new ();
  g_autoptr(HpStateDict) hf = NULL;
  g_autoptr(HpStateDict) loaded = NULL;
  g_autoptr(HpStateDict) back = NULL;
  g_autoptr(HpModule) laid_out = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpTensor) expected = NULL;
  g_autoptr(HpTensor) logits = NULL;
  g_autofree gchar *dir = shared_tmp_dir ();
  g_autofree gchar *config_json = g_build_filename (dir, "config.json", NULL);
  g_autofree gchar *text = NULL;
  g_autofree gdouble *wq_bias = NULL;
  g_autofree gdouble *q_bias = NULL;
  HpDecoderConfig *read;
  gsize n;

  /* biases start as zeros: random ones, to see them moved */
  for (guint i = 0; i < hp_state_dict_get_size (states); i++)
    if (g_str_has_suffix (hp_state_dict_get_name (states, i), ".bias"))
      {
        g_autoptr(HpTensor) random =
          hp_test_randn (HP_DTYPE_FLOAT64, hp_tensor_get_shape (hp_state_dict_get_tensor (states, i), NULL),
                         1, 40 + i, FALSE);

        hp_state_dict_insert (biases, hp_state_dict_get_name (states, i), random);
      }
  g_assert_cmpuint (hp_state_dict_get_size (biases), ==, 8);
  g_assert_true (hp_module_load_state_dict (saved, biases, FALSE, &error));
  g_assert_no_error (error);
  g_clear_object (&states);
  states = hp_module_state_dict (saved);

  hf = hp_state_dict_adapter_to_hf (HP_STATE_DICT_ADAPTER (adapter), states, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < 4; i++)
    {
      g_autofree gchar *name = g_strdup_printf ("model.layers.1.self_attn.%c_proj.bias", "qkvo"[i]);

      g_assert_true (hp_state_dict_contains (hf, name));
    }
  /* head size 6: Meta's interleaved rows 0 1 2 3 4 5 become halves 0 2 4 1 3 5 */
  wq_bias = hp_tensor_to_float64_array (hp_state_dict_lookup (states, "layers.0.attention.wq.bias"), &n);
  q_bias = hp_tensor_to_float64_array (hp_state_dict_lookup (hf, "model.layers.0.self_attn.q_proj.bias"),
                                       &n);
  g_assert_cmpuint (n, ==, 2 * tp * 6);
  for (guint head = 0; head < 2 * (guint) tp; head++)
    for (guint j = 0; j < 6; j++)
      g_assert_cmpfloat (q_bias[head * 6 + j], ==, wq_bias[head * 6 + (j < 3 ? 2 * j : 2 * (j - 3) + 1)]);
  g_assert_true (hp_state_dict_lookup (hf, "model.layers.0.self_attn.v_proj.bias") ==
                 hp_state_dict_lookup (states, "layers.0.attention.wv.bias"));

  if (hp_get_world_rank () == 0)
    {
      g_autofree gchar *written = hp_decoder_state_dict_adapter_to_hf_config (adapter, &error);

      g_assert_no_error (error);
      g_assert_true (g_file_set_contents (config_json, written, -1, &error));
      g_assert_true (hp_state_dict_adapter_save_hf_state_dict (HP_STATE_DICT_ADAPTER (adapter), hf,
                                                               HP_BASE_MODEL_CONFIG (config), dir,
                                                               &error));
      g_assert_no_error (error);
    }
  MPI_Barrier (MPI_COMM_WORLD);

  /* only the HF files from here on */
  g_assert_true (g_file_get_contents (config_json, &text, NULL, &error));
  g_assert_no_error (error);
  from_json = hp_decoder_state_dict_adapter_new_from_hf_config (text, -1, &error);
  g_assert_no_error (error);
  read = hp_decoder_state_dict_adapter_get_model_config (from_json);
  g_assert_cmpint (hp_decoder_config_get_head_dim (read), ==, 6);
  g_assert_true (hp_decoder_config_get_attention_bias (read));
  g_assert_cmpint (hp_decoder_config_get_rope_scaling (read), ==, HP_ROPE_SCALING_LLAMA3);
  g_assert_true (hp_set_decoder_sharding_config (read, TRUE, FALSE, &error));
  g_assert_no_error (error);
  laid_out = build (read, 11);
  g_assert_true (hp_module_parallelize (laid_out, mesh, &error));
  g_assert_no_error (error);
  loaded = hp_state_dict_adapter_load_hf_state_dict (HP_STATE_DICT_ADAPTER (from_json), dir,
                                                     HP_BASE_MODEL_CONFIG (read), HP_DTYPE_FLOAT64,
                                                     &error);
  g_assert_no_error (error);
  back = hp_state_dict_adapter_from_hf (HP_STATE_DICT_ADAPTER (from_json), loaded, &error);
  g_assert_no_error (error);
  g_assert_true (hp_module_load_state_dict (laid_out, back, TRUE, &error));
  g_assert_no_error (error);

  expected = logits_of (saved);
  logits = logits_of (laid_out);
  hp_test_assert_close (logits, expected, 1e-12, 1e-12);
  remove_dir (dir);
}

/* The value a file of @dtype holds for @value */
static gdouble
saved_value (gdouble            value,
             HpSafetensorsDType dtype)
{
  switch (dtype)
    {
    case HP_SAFETENSORS_DTYPE_BF16:
      return _hp_bfloat16_to_float (_hp_float_to_bfloat16 ((gfloat) value));
    case HP_SAFETENSORS_DTYPE_F16:
      return _hp_float16_to_float (_hp_float_to_float16 ((gfloat) value));
    case HP_SAFETENSORS_DTYPE_F32:
      return (gfloat) value;
    case HP_SAFETENSORS_DTYPE_F64:
    case HP_SAFETENSORS_DTYPE_AS_IS:
    default:
      return value;
    }
}

/* A float64 decoder saved in every dtype by rank 0: config.json's
 * torch_dtype says it, the files hold it, they load on every rank into
 * float64 exactly as stored, and the shard size counts the bytes in the
 * files */
static void
test_save_dtype (void)
{
  static const struct
  {
    HpSafetensorsDType dtype;
    const gchar *torch;
    const gchar *file;
  } cases[] = {
    { HP_SAFETENSORS_DTYPE_AS_IS, "float64", "F64" },
    { HP_SAFETENSORS_DTYPE_BF16, "bfloat16", "BF16" },
    { HP_SAFETENSORS_DTYPE_F16, "float16", "F16" },
    { HP_SAFETENSORS_DTYPE_F32, "float32", "F32" },
    { HP_SAFETENSORS_DTYPE_F64, "float64", "F64" },
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoderConfig) config = decoder_config (1);
  g_autoptr(HpModule) model = build (config, 3);
  g_autoptr(HpDecoderStateDictAdapter) adapter = hp_decoder_state_dict_adapter_new (config);
  HpStateDictAdapter *as_adapter = HP_STATE_DICT_ADAPTER (adapter);
  HpBaseStateDictAdapter *base = HP_BASE_STATE_DICT_ADAPTER (adapter);
  g_autoptr(HpStateDict) states = hp_module_state_dict (model);
  g_autoptr(HpStateDict) hf = hp_state_dict_adapter_to_hf (as_adapter, states, &error);
  guint64 numel = 0;
  HpSafetensorsDType dtype = HP_SAFETENSORS_DTYPE_F64;

  g_assert_no_error (error);
  g_assert_cmpint (hp_base_state_dict_adapter_get_save_dtype (base), ==, HP_SAFETENSORS_DTYPE_AS_IS);
  for (guint i = 0; i < hp_state_dict_get_size (hf); i++)
    numel += (guint64) hp_tensor_get_numel (hp_state_dict_get_tensor (hf, i));
  /* one file in 2 bytes a value, shards in 8 */
  hp_base_state_dict_adapter_set_max_shard_size (base, 2 * numel);

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree gchar *path = shared_tmp_dir ();
      g_autofree gchar *single = g_build_filename (path, "model.safetensors", NULL);
      g_autofree gchar *hf_config = NULL;
      g_autofree gchar *torch = g_strdup_printf ("\"torch_dtype\": \"%s\"", cases[c].torch);
      g_autoptr(HpSafetensorsCheckpoint) checkpoint = NULL;
      g_autoptr(HpStateDict) loaded = NULL;
      gsize size = g_str_equal (cases[c].file, "F64") ? 8 : g_str_equal (cases[c].file, "F32") ? 4 : 2;

      /* the property and its setter */
      if (c % 2 == 0)
        g_object_set (adapter, "save-dtype", cases[c].dtype, NULL);
      else
        hp_base_state_dict_adapter_set_save_dtype (base, cases[c].dtype);
      g_object_get (adapter, "save-dtype", &dtype, NULL);
      g_assert_cmpint (dtype, ==, cases[c].dtype);

      hf_config = hp_decoder_state_dict_adapter_to_hf_config (adapter, &error);
      g_assert_no_error (error);
      g_assert_nonnull (strstr (hf_config, torch));

      if (hp_get_world_rank () == 0)
        {
          g_assert_true (hp_state_dict_adapter_save_hf_state_dict (as_adapter, hf,
                                                                   HP_BASE_MODEL_CONFIG (config),
                                                                   path, &error));
          g_assert_no_error (error);
        }
      MPI_Barrier (MPI_COMM_WORLD);
      g_assert_true (g_file_test (single, G_FILE_TEST_EXISTS) == (size == 2));
      checkpoint = hp_safetensors_checkpoint_new_for_path (path, &error);
      g_assert_no_error (error);
      for (guint i = 0; i < hp_state_dict_get_size (hf); i++)
        {
          const gchar *tensor_name = hp_state_dict_get_name (hf, i);
          HpSafetensorsFile *file = hp_safetensors_checkpoint_lookup_file (checkpoint, tensor_name, &error);

          g_assert_no_error (error);
          g_assert_cmpstr (hp_safetensors_file_get_dtype (file, tensor_name, &error), ==, cases[c].file);
        }

      loaded = hp_state_dict_adapter_load_hf_state_dict (as_adapter, path, HP_BASE_MODEL_CONFIG (config),
                                                         HP_DTYPE_FLOAT64, &error);
      g_assert_no_error (error);
      for (guint i = 0; i < hp_state_dict_get_size (hf); i++)
        {
          HpTensor *original = hp_state_dict_get_tensor (hf, i);
          HpTensor *back = hp_state_dict_lookup (loaded, hp_state_dict_get_name (hf, i));
          gsize n;
          g_autofree gdouble *values = hp_tensor_to_float64_array (original, &n);
          g_autofree gdouble *expected = g_new (gdouble, n);
          guint ndim;
          const gint64 *shape = hp_tensor_get_shape (original, &ndim);

          g_assert_cmpint (hp_tensor_get_dtype (back), ==, HP_DTYPE_FLOAT64);
          for (gsize k = 0; k < n; k++)
            expected[k] = saved_value (values[k], cases[c].dtype);
          hp_test_assert_values (back, expected, n, shape, ndim, 0, 0);
        }
      remove_dir (path);
    }
}

/* Bad input of the adapter's file functions: a failed save makes no
 * directory and leaves an earlier checkpoint as it was; a missing or
 * damaged checkpoint has no index mapping. Every rank in a directory of
 * its own. */
static void
test_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoderConfig) config = decoder_config (1);
  g_autoptr(HpDecoderStateDictAdapter) adapter = hp_decoder_state_dict_adapter_new (config);
  HpStateDictAdapter *as_adapter = HP_STATE_DICT_ADAPTER (adapter);
  HpBaseStateDictAdapter *base = HP_BASE_STATE_DICT_ADAPTER (adapter);
  g_autofree gchar *dir = g_dir_make_tmp ("hp-test-hf-XXXXXX", &error);
  g_autofree gchar *fresh = g_build_filename (dir, "fresh", NULL);
  g_autofree gchar *fresh_ckpt = g_build_filename (fresh, "ckpt", NULL);
  g_autofree gchar *old = g_build_filename (dir, "old", NULL);
  g_autofree gchar *old_file = g_build_filename (old, "model.safetensors", NULL);
  g_autofree gchar *broken = g_build_filename (dir, "broken", NULL);
  g_autofree gchar *broken_index = g_build_filename (broken, "model.safetensors.index.json", NULL);
  g_autofree gchar *missing = g_build_filename (dir, "missing", NULL);
  g_autofree gchar *message = NULL;
  g_autoptr(HpTensor) w = hp_test_tensor (HP_DTYPE_FLOAT64, HP_TEST_DATA (1, 2), HP_TEST_SHAPE (2));
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  const gchar *r[] = { "R" };
  g_autoptr(GPtrArray) replicate = hp_test_placements (r, 1);
  g_autoptr(HpDTensor) dw = hp_dtensor_distribute (w, mesh, replicate, -1, &error);
  g_autoptr(HpStateDict) good = hp_state_dict_new ();
  g_autoptr(HpStateDict) distributed = hp_state_dict_new ();
  g_autoptr(HpStateDict) reserved = hp_state_dict_new ();
  g_autoptr(GHashTable) mapping = NULL;
  gchar *before = NULL;
  gchar *after = NULL;
  gsize before_length, after_length;

  g_assert_no_error (error);
  hp_state_dict_insert (good, "model.norm.weight", w);
  hp_state_dict_insert (distributed, "model.norm.weight", w);
  hp_state_dict_insert (distributed, "lm_head.weight", HP_TENSOR (dw));
  hp_state_dict_insert (reserved, "__metadata__", w);

  /* nothing made for a save that fails */
  hp_test_assert_error (GINT_TO_POINTER (hp_state_dict_adapter_save_hf_state_dict (
                          as_adapter, distributed, HP_BASE_MODEL_CONFIG (config), fresh_ckpt, &error)),
                        &error, HP_ERROR_NOT_SUPPORTED,
                        "tensor 'lm_head.weight' is a DTensor; save its full tensor");
  hp_test_assert_error (GINT_TO_POINTER (hp_state_dict_adapter_save_hf_state_dict (
                          as_adapter, reserved, HP_BASE_MODEL_CONFIG (config), fresh_ckpt, &error)),
                        &error, HP_ERROR_INVALID_ARGUMENT,
                        "the name '__metadata__' is reserved for the metadata, not a tensor");
  g_assert_false (g_file_test (fresh, G_FILE_TEST_EXISTS));

  /* an earlier checkpoint stays */
  g_assert_true (hp_state_dict_adapter_save_hf_state_dict (as_adapter, good, HP_BASE_MODEL_CONFIG (config),
                                                           old, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (old_file, &before, &before_length, NULL));
  hp_test_assert_error (GINT_TO_POINTER (hp_state_dict_adapter_save_hf_state_dict (
                          as_adapter, distributed, HP_BASE_MODEL_CONFIG (config), old, &error)),
                        &error, HP_ERROR_NOT_SUPPORTED, "is a DTensor");
  g_assert_true (g_file_get_contents (old_file, &after, &after_length, NULL));
  g_assert_cmpmem (after, after_length, before, before_length);
  g_free (before);
  g_free (after);

  /* the index mapping of checkpoints that are not there or are damaged */
  hp_test_assert_error (hp_base_state_dict_adapter_fqn_to_index_mapping (base, missing, &error), &error,
                        HP_ERROR_IO, "No such file or directory");
  g_assert_cmpint (g_mkdir (broken, 0700), ==, 0);
  g_assert_true (g_file_set_contents (broken_index, "{\"weight_map\": [", -1, NULL));
  message = g_strdup_printf ("%s: the index is not valid JSON", broken_index);
  hp_test_assert_error (hp_base_state_dict_adapter_fqn_to_index_mapping (base, broken, &error), &error,
                        HP_ERROR_FORMAT, message);
  /* and of the good one */
  mapping = hp_base_state_dict_adapter_fqn_to_index_mapping (base, old, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_hash_table_size (mapping), ==, 1);

  g_unlink (broken_index);
  g_rmdir (broken);
  g_unlink (old_file);
  g_rmdir (old);
  g_rmdir (dir);
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init_world (&argc, &argv);
  world_size = hp_get_world_size ();

  g_test_add_func ("/hf-checkpoint/names-and-permutation", test_names_and_permutation);
  g_test_add_func ("/hf-checkpoint/sharded-save-and-laid-out-load",
                   test_sharded_save_and_laid_out_load);
  g_test_add_func ("/hf-checkpoint/tied", test_tied);
  g_test_add_func ("/hf-checkpoint/variants-hf-layout", test_variants_hf_layout);
  g_test_add_func ("/hf-checkpoint/save-dtype", test_save_dtype);
  g_test_add_func ("/hf-checkpoint/errors", test_errors);

  return g_test_run ();
}
