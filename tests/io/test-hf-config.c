/* test-hf-config.c: a decoder configuration as a Hugging Face Llama
 * config.json and back; every key counts, unsupported settings and
 * unknown keys are errors naming the key
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include "hp-test-utils.h"

/* Llama 3.2 style, shrunk; the keys a saved HF config.json has */
static const gchar llama[] =
  "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
  "\"hidden_size\": 64, \"intermediate_size\": 176, \"num_hidden_layers\": 2, "
  "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 16, "
  "\"rms_norm_eps\": 1e-05, \"rope_theta\": 500000, \"max_position_embeddings\": 128, "
  "\"vocab_size\": 256, \"tie_word_embeddings\": false, \"hidden_act\": \"silu\", "
  "\"attention_bias\": false, \"mlp_bias\": false, \"attention_dropout\": 0.0, "
  "\"pretraining_tp\": 1, \"rope_scaling\": null, \"torch_dtype\": \"bfloat16\", "
  "\"bos_token_id\": 1, \"eos_token_id\": [2, 3], \"initializer_range\": 0.02, "
  "\"use_cache\": true, \"transformers_version\": \"4.45.0\"}";

static HpDecoderStateDictAdapter *
read_hf (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  HpDecoderStateDictAdapter *adapter =
    hp_decoder_state_dict_adapter_new_from_hf_config (text, -1, &error);

  g_assert_no_error (error);
  g_assert_nonnull (adapter);
  return adapter;
}

static void
test_read (void)
{
  g_autoptr(HpDecoderStateDictAdapter) adapter = read_hf (llama);
  HpDecoderConfig *config = hp_decoder_state_dict_adapter_get_model_config (adapter);

  g_assert_cmpint (hp_decoder_config_get_dim (config), ==, 64);
  g_assert_cmpint (hp_decoder_config_get_ffn_hidden (config), ==, 176);
  g_assert_cmpint (hp_decoder_config_get_n_layers (config), ==, 2);
  g_assert_cmpint (hp_decoder_config_get_n_heads (config), ==, 4);
  g_assert_cmpint (hp_decoder_config_get_n_kv_heads (config), ==, 2);
  g_assert_cmpfloat (hp_decoder_config_get_norm_eps (config), ==, 1e-5);
  g_assert_cmpfloat (hp_decoder_config_get_rope_theta (config), ==, 500000.0);
  g_assert_cmpint (hp_decoder_config_get_max_seq_len (config), ==, 128);
  g_assert_cmpint (hp_decoder_config_get_vocab_size (config), ==, 256);
  g_assert_false (hp_decoder_config_get_tie_word_embeddings (config));
  /* bfloat16 weights load as float32, exactly */
  g_assert_cmpint (hp_decoder_config_get_dtype (config), ==, HP_DTYPE_FLOAT32);
}

/* Hugging Face's LlamaConfig defaults for keys left out */
static void
test_defaults (void)
{
  g_autoptr(HpDecoderStateDictAdapter) adapter =
    read_hf ("{\"model_type\": \"llama\", \"hidden_size\": 32, \"intermediate_size\": 64, "
             "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, \"vocab_size\": 10}");
  HpDecoderConfig *config = hp_decoder_state_dict_adapter_get_model_config (adapter);

  g_assert_cmpfloat (hp_decoder_config_get_norm_eps (config), ==, 1e-6);
  g_assert_cmpfloat (hp_decoder_config_get_rope_theta (config), ==, 10000.0);
  g_assert_cmpint (hp_decoder_config_get_max_seq_len (config), ==, 2048);
  g_assert_cmpint (hp_decoder_config_get_n_kv_heads (config), ==, 0);     /* as many as heads */
  g_assert_false (hp_decoder_config_get_tie_word_embeddings (config));
}

/* tie_word_embeddings is the field, both ways */
static void
test_tied (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) text = g_string_new (llama);
  g_autoptr(HpDecoderStateDictAdapter) adapter = NULL;
  g_autoptr(HpDecoderStateDictAdapter) back = NULL;
  g_autofree gchar *written = NULL;
  g_autoptr(JsonNode) root = NULL;

  g_string_replace (text, "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true", 1);
  adapter = read_hf (text->str);
  g_assert_true (hp_decoder_config_get_tie_word_embeddings (
                   hp_decoder_state_dict_adapter_get_model_config (adapter)));

  written = hp_decoder_state_dict_adapter_to_hf_config (adapter, &error);
  g_assert_no_error (error);
  root = json_from_string (written, &error);
  g_assert_no_error (error);
  g_assert_true (json_object_get_boolean_member (json_node_get_object (root), "tie_word_embeddings"));
  back = read_hf (written);
  g_assert_true (hp_config_equal (HP_CONFIG (hp_decoder_state_dict_adapter_get_model_config (back)),
                                  HP_CONFIG (hp_decoder_state_dict_adapter_get_model_config (adapter))));
}

/* hp -> HF -> hp gives an equal configuration, derived sizes written out */
static void
test_round_trip (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoderConfig) config = g_object_new (HP_TYPE_DECODER_CONFIG,
                                                    "dim", 48, "n-heads", 6, "n-layers", 3,
                                                    "vocab-size", 100, "norm-eps", 1e-6,
                                                    "dtype", HP_DTYPE_FLOAT64, NULL);
  g_autoptr(HpDecoderStateDictAdapter) adapter = hp_decoder_state_dict_adapter_new (config);
  g_autofree gchar *text = hp_decoder_state_dict_adapter_to_hf_config (adapter, &error);
  g_autoptr(HpDecoderStateDictAdapter) back = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object;
  HpDecoderConfig *read;

  g_assert_no_error (error);
  root = json_from_string (text, &error);
  g_assert_no_error (error);
  object = json_node_get_object (root);
  g_assert_cmpstr (json_object_get_string_member (object, "model_type"), ==, "llama");
  g_assert_cmpstr (json_array_get_string_element (
                     json_object_get_array_member (object, "architectures"), 0),
                   ==, "LlamaForCausalLM");
  g_assert_cmpint (json_object_get_int_member (object, "hidden_size"), ==, 48);
  g_assert_cmpint (json_object_get_int_member (object, "num_key_value_heads"), ==, 6);
  g_assert_cmpint (json_object_get_int_member (object, "head_dim"), ==, 8);
  g_assert_cmpint (json_object_get_int_member (object, "intermediate_size"), ==,
                   hp_decoder_config_get_ffn_hidden_size (config));
  g_assert_false (json_object_get_boolean_member (object, "tie_word_embeddings"));
  g_assert_true (json_object_get_null_member (object, "rope_scaling"));
  g_assert_cmpstr (json_object_get_string_member (object, "torch_dtype"), ==, "float64");

  back = read_hf (text);
  read = hp_decoder_state_dict_adapter_get_model_config (back);
  g_assert_cmpint (hp_decoder_config_get_n_kv_heads (read), ==, 6);
  g_assert_cmpint (hp_decoder_config_get_ffn_hidden (read), ==,
                   hp_decoder_config_get_ffn_hidden_size (config));
  g_object_set (config, "n-kv-heads", 6, "ffn-hidden", hp_decoder_config_get_ffn_hidden_size (config),
                NULL);
  g_assert_true (hp_config_equal (HP_CONFIG (read), HP_CONFIG (config)));
}

/* The attention variants: another head_dim, biases, RoPE scaling */
static void
test_variants (void)
{
  g_autoptr(GString) text = g_string_new (llama);
  g_autoptr(HpDecoderStateDictAdapter) adapter = NULL;
  g_autoptr(HpDecoderStateDictAdapter) linear = NULL;
  HpDecoderConfig *config;

  g_string_replace (text, "\"head_dim\": 16", "\"head_dim\": 24", 1);
  g_string_replace (text, "\"attention_bias\": false", "\"attention_bias\": true", 1);
  g_string_replace (text, "\"rope_scaling\": null",
                    "\"rope_scaling\": {\"factor\": 32.0, \"high_freq_factor\": 4.0, "
                    "\"low_freq_factor\": 1.0, \"original_max_position_embeddings\": 8192, "
                    "\"rope_type\": \"llama3\"}", 1);
  adapter = read_hf (text->str);
  config = hp_decoder_state_dict_adapter_get_model_config (adapter);
  g_assert_cmpint (hp_decoder_config_get_head_dim (config), ==, 24);
  g_assert_true (hp_decoder_config_get_attention_bias (config));
  g_assert_cmpint (hp_decoder_config_get_rope_scaling (config), ==, HP_ROPE_SCALING_LLAMA3);
  g_assert_cmpfloat (hp_decoder_config_get_rope_scaling_factor (config), ==, 32.0);
  g_assert_cmpfloat (hp_decoder_config_get_rope_low_freq_factor (config), ==, 1.0);
  g_assert_cmpfloat (hp_decoder_config_get_rope_high_freq_factor (config), ==, 4.0);
  g_assert_cmpint (hp_decoder_config_get_rope_original_max_seq_len (config), ==, 8192);

  /* older files name the type "type" */
  g_string_assign (text, llama);
  g_string_replace (text, "\"rope_scaling\": null",
                    "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.5}", 1);
  linear = read_hf (text->str);
  config = hp_decoder_state_dict_adapter_get_model_config (linear);
  g_assert_cmpint (hp_decoder_config_get_rope_scaling (config), ==, HP_ROPE_SCALING_LINEAR);
  g_assert_cmpfloat (hp_decoder_config_get_rope_scaling_factor (config), ==, 2.5);
  /* head_dim 16 is hidden_size / num_attention_heads: the default */
  g_assert_cmpint (hp_decoder_config_get_head_dim (config), ==, 0);

  /* Hugging Face's "default" is no scaling */
  {
    g_autoptr(HpDecoderStateDictAdapter) plain = NULL;

    g_string_assign (text, llama);
    g_string_replace (text, "\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"default\"}", 1);
    plain = read_hf (text->str);
    g_assert_cmpint (hp_decoder_config_get_rope_scaling (hp_decoder_state_dict_adapter_get_model_config (plain)),
                     ==, HP_ROPE_SCALING_NONE);
  }
}

/* The variants through hp -> HF -> hp, each scaling */
static void
test_variants_round_trip (void)
{
  for (HpRopeScaling scaling = HP_ROPE_SCALING_NONE; scaling <= HP_ROPE_SCALING_LLAMA3; scaling++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpDecoderConfig) config =
        g_object_new (HP_TYPE_DECODER_CONFIG, "dim", 48, "n-heads", 4, "n-kv-heads", 2,
                      "head-dim", 10, "attention-bias", TRUE, "rope-scaling", scaling,
                      "rope-scaling-factor", 16.0, "rope-low-freq-factor", 0.5,
                      "rope-high-freq-factor", 2.25, "rope-original-max-seq-len", 512,
                      "ffn-hidden", 96, NULL);
      g_autoptr(HpDecoderStateDictAdapter) adapter = hp_decoder_state_dict_adapter_new (config);
      g_autofree gchar *text = hp_decoder_state_dict_adapter_to_hf_config (adapter, &error);
      g_autoptr(HpDecoderStateDictAdapter) back = NULL;
      g_autoptr(JsonNode) root = NULL;
      JsonObject *object;
      JsonNode *rope_scaling;

      g_assert_no_error (error);
      root = json_from_string (text, &error);
      g_assert_no_error (error);
      object = json_node_get_object (root);
      g_assert_cmpint (json_object_get_int_member (object, "head_dim"), ==, 10);
      g_assert_true (json_object_get_boolean_member (object, "attention_bias"));
      rope_scaling = json_object_get_member (object, "rope_scaling");
      if (scaling == HP_ROPE_SCALING_NONE)
        g_assert_true (JSON_NODE_HOLDS_NULL (rope_scaling));
      else
        {
          JsonObject *scaled = json_node_get_object (rope_scaling);

          g_assert_cmpstr (json_object_get_string_member (scaled, "rope_type"), ==,
                           scaling == HP_ROPE_SCALING_LINEAR ? "linear" : "llama3");
          g_assert_cmpfloat (json_object_get_double_member (scaled, "factor"), ==, 16.0);
          g_assert_cmpuint (json_object_get_size (scaled), ==,
                            scaling == HP_ROPE_SCALING_LINEAR ? 2 : 5);
          if (scaling == HP_ROPE_SCALING_LLAMA3)
            {
              g_assert_cmpfloat (json_object_get_double_member (scaled, "low_freq_factor"), ==, 0.5);
              g_assert_cmpfloat (json_object_get_double_member (scaled, "high_freq_factor"), ==, 2.25);
              g_assert_cmpint (json_object_get_int_member (scaled, "original_max_position_embeddings"),
                               ==, 512);
            }
        }

      back = read_hf (text);
      /* the parameters of another scaling are not written: they read
       * back as the defaults */
      if (scaling != HP_ROPE_SCALING_LLAMA3)
        g_object_set (config, "rope-low-freq-factor", 1.0, "rope-high-freq-factor", 4.0,
                      "rope-original-max-seq-len", 8192, NULL);
      if (scaling == HP_ROPE_SCALING_NONE)
        g_object_set (config, "rope-scaling-factor", 8.0, NULL);
      g_object_set (config, "n-kv-heads", 2, NULL);
      g_assert_true (hp_config_equal (HP_CONFIG (hp_decoder_state_dict_adapter_get_model_config (back)),
                                      HP_CONFIG (config)));
    }
}

/* A layer whose bias or scaling is not the decoder's has no HF form */
static void
test_variants_not_uniform (void)
{
  static const gchar * const paths[][2] = {
    { "layers.1.attention.wo.bias", "layers.1.attention.wo.bias: true, but the decoder's fields give "
      "false" },
    { "layers.0.attention.rope-scaling", "layers.0.attention.rope-scaling: llama3, but the decoder's "
      "fields give none" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpDecoderConfig) config = g_object_new (HP_TYPE_DECODER_CONFIG, NULL);
      g_autoptr(HpDecoderStateDictAdapter) adapter = NULL;

      g_assert_true (hp_decoder_config_expand (config, &error));
      g_assert_true (hp_config_set_path_from_string (HP_CONFIG (config), paths[i][0],
                                                     i == 0 ? "true" : "llama3", &error));
      g_assert_no_error (error);
      adapter = hp_decoder_state_dict_adapter_new (config);
      g_assert_null (hp_decoder_state_dict_adapter_to_hf_config (adapter, &error));
      g_assert_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED);
      g_assert_true (g_str_has_prefix (error->message, paths[i][1]));
    }
}

static void
test_not_uniform (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoderConfig) config = g_object_new (HP_TYPE_DECODER_CONFIG, NULL);
  g_autoptr(HpDecoderStateDictAdapter) adapter = NULL;

  g_assert_true (hp_decoder_config_expand (config, &error));
  g_assert_true (hp_config_set_path_from_string (HP_CONFIG (config), "layers.1.attention.n-heads",
                                                 "2", &error));
  g_assert_true (hp_config_set_path_from_string (HP_CONFIG (config), "layers.1.attention.n-kv-heads",
                                                 "2", &error));
  g_assert_no_error (error);
  adapter = hp_decoder_state_dict_adapter_new (config);
  hp_test_assert_error (hp_decoder_state_dict_adapter_to_hf_config (adapter, &error), &error,
                        HP_ERROR_NOT_SUPPORTED,
                        "layers.1.attention.n-heads: 2, but the decoder's fields give 4: a "
                        "Hugging Face Llama configuration gives every layer the same sizes");
}

/* A configuration that would not build has no Hugging Face form either */
static void
test_invalid (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDecoderConfig) config = g_object_new (HP_TYPE_DECODER_CONFIG, "dim", 10, "n-heads", 4,
                                                    NULL);
  g_autoptr(HpDecoderStateDictAdapter) adapter = hp_decoder_state_dict_adapter_new (config);

  hp_test_assert_error (hp_decoder_state_dict_adapter_to_hf_config (adapter, &error), &error,
                        HP_ERROR_CONFIG, "n-heads: 4 heads do not split dim 10");
}

/* Each edit of the Llama text is refused with the message */
static void
test_errors (void)
{
  static const struct
  {
    const gchar *from;
    const gchar *to;
    HpError code;
    const gchar *message;
  } cases[] = {
    { "\"use_cache\": true", "\"use_cache\": true, \"sliding_window\": 4096", HP_ERROR_NOT_SUPPORTED,
      "HF config: unknown key 'sliding_window'" },
    { "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": 1", HP_ERROR_FORMAT,
      "HF config: tie_word_embeddings: expected true or false" },
    { "\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0}",
      HP_ERROR_FORMAT, "HF config: rope_scaling: no key 'low_freq_factor'" },
    { "\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0}",
      HP_ERROR_NOT_SUPPORTED, "HF config: rope_scaling.rope_type: \"yarn\" is not supported (the "
      "decoder has \"default\", \"linear\" and \"llama3\")" },
    { "\"rope_scaling\": null", "\"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 4.0}",
      HP_ERROR_NOT_SUPPORTED, "HF config: rope_scaling.type: \"dynamic\" is not supported (the "
      "decoder has \"default\", \"linear\" and \"llama3\")" },
    { "\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"none\"}",
      HP_ERROR_NOT_SUPPORTED, "HF config: rope_scaling.rope_type: \"none\" is not supported" },
    { "\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"default\", \"factor\": 2.0}",
      HP_ERROR_NOT_SUPPORTED, "HF config: rope_scaling.factor: unknown key for rope_type \"default\"" },
    { "\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2.0, "
      "\"low_freq_factor\": 1.0}", HP_ERROR_NOT_SUPPORTED,
      "HF config: rope_scaling.low_freq_factor: unknown key for rope_type \"linear\"" },
    { "\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"linear\", \"type\": \"llama3\", "
      "\"factor\": 2.0}", HP_ERROR_FORMAT,
      "HF config: rope_scaling.type: expected a string equal to rope_type" },
    { "\"rope_scaling\": null", "\"rope_scaling\": {\"factor\": 2.0}", HP_ERROR_FORMAT,
      "HF config: rope_scaling: no key 'rope_type'" },
    { "\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 0}",
      HP_ERROR_FORMAT, "HF config: rope_scaling.factor: value 0.0 out of range" },
    { "\"rope_scaling\": null", "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0, "
      "\"low_freq_factor\": 4.0, \"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 64}",
      HP_ERROR_FORMAT, "HF config: rope-high-freq-factor 4 must be greater than "
      "rope-low-freq-factor 4 for the llama3 scaling" },
    { "\"rope_scaling\": null", "\"rope_scaling\": 8", HP_ERROR_FORMAT,
      "HF config: rope_scaling: expected null or an object" },
    { "\"head_dim\": 16", "\"head_dim\": 15", HP_ERROR_FORMAT,
      "HF config: head-dim: 15 must be even (the rotary embedding turns pairs)" },
    { "\"head_dim\": 16", "\"head_dim\": 0.5", HP_ERROR_FORMAT, NULL },
    { "\"attention_bias\": false", "\"attention_bias\": 1", HP_ERROR_FORMAT,
      "HF config: attention_bias: expected true or false" },
    { "\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\"", HP_ERROR_NOT_SUPPORTED,
      "HF config: hidden_act: \"gelu\" is not supported (the decoder has \"silu\")" },
    { "\"model_type\": \"llama\"", "\"model_type\": \"mistral\"", HP_ERROR_NOT_SUPPORTED,
      "HF config: model_type: \"mistral\" is not supported (the decoder has \"llama\")" },
    { "\"torch_dtype\": \"bfloat16\"", "\"torch_dtype\": \"int8\"", HP_ERROR_NOT_SUPPORTED,
      "HF config: torch_dtype: expected \"float32\", \"bfloat16\", \"float16\" or \"float64\"" },
    { "\"hidden_size\": 64", "\"hidden_size\": 0", HP_ERROR_FORMAT,
      "HF config: hidden_size: value 0 out of range [2, 65536]" },
    { "\"hidden_size\": 64", "\"hidden_size\": \"64\"", HP_ERROR_FORMAT,
      "HF config: hidden_size: expected a number" },
    { "\"vocab_size\": 256, ", "", HP_ERROR_FORMAT, "HF config: no key 'vocab_size'" },
    { "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3", HP_ERROR_FORMAT,
      "HF config: n-kv-heads: 3 key/value heads do not divide 4 heads" },
    { "{", "[", HP_ERROR_FORMAT, NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GString) text = g_string_new (llama);
      HpDecoderStateDictAdapter *adapter;

      g_assert_cmpuint (g_string_replace (text, cases[i].from, cases[i].to, 1), ==, 1);
      adapter = hp_decoder_state_dict_adapter_new_from_hf_config (text->str, text->len, &error);
      g_assert_null (adapter);
      g_assert_error (error, HP_ERROR, (gint) cases[i].code);
      if (cases[i].message != NULL)
        {
          if (!g_str_has_prefix (error->message, cases[i].message))
            g_assert_cmpstr (error->message, ==, cases[i].message);
        }
      else
        g_assert_true (g_str_has_prefix (error->message, "HF config: "));
    }
}

int
main (int    argc,
      char **argv)
{
  hp_test_init (&argc, &argv);
  g_test_add_func ("/hf-config/read", test_read);
  g_test_add_func ("/hf-config/defaults", test_defaults);
  g_test_add_func ("/hf-config/round-trip", test_round_trip);
  g_test_add_func ("/hf-config/tied", test_tied);
  g_test_add_func ("/hf-config/variants", test_variants);
  g_test_add_func ("/hf-config/variants-round-trip", test_variants_round_trip);
  g_test_add_func ("/hf-config/variants-not-uniform", test_variants_not_uniform);
  g_test_add_func ("/hf-config/not-uniform", test_not_uniform);
  g_test_add_func ("/hf-config/invalid", test_invalid);
  g_test_add_func ("/hf-config/errors", test_errors);
  return g_test_run ();
}
