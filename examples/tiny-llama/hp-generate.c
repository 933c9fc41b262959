/* hp-generate.c: continues a prompt with a decoder that hp-train saved,
 * or a Hugging Face Llama directory, on one rank or tensor parallel
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The prompt is text (byte tokens, as hp-train --data reads text) or
 * token ids. Every rank computes the same tokens; rank 0 prints them.
 *
 *   hp-generate --load run/ --prompt "Once upon a time" --max-new-tokens 64
 *   mpirun -np 2 hp-generate --tp 2 --load run/step-200 --prompt-ids 1,2,3 --print-ids
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hp-protocols/hp-protocols.h>

typedef struct
{
  gchar *load;
  gchar *prompt;
  gchar *prompt_ids;
  gint max_new_tokens;
  gdouble temperature;
  gint top_k;
  gdouble top_p;
  gint64 seed;
  gint tp;
  gboolean no_cache;
  gboolean print_ids;
} Options;

static void
options_clear (Options *options)
{
  g_free (options->load);
  g_free (options->prompt);
  g_free (options->prompt_ids);
}

static gboolean
parse_options (Options   *options,
               int       *argc,
               char    ***argv,
               GError   **error)
{
  GOptionEntry entries[] = {
    { "load", 0, 0, G_OPTION_ARG_FILENAME, &options->load,
      "The model: a checkpoint step of hp-train --save, its folder (the newest step) or a "
      "Hugging Face directory", "DIR" },
    { "prompt", 0, 0, G_OPTION_ARG_STRING, &options->prompt,
      "The prompt as text (byte tokens, for a model trained on text)", "TEXT" },
    { "prompt-ids", 0, 0, G_OPTION_ARG_STRING, &options->prompt_ids,
      "The prompt as token ids separated by commas", "ID,ID,..." },
    { "max-new-tokens", 0, 0, G_OPTION_ARG_INT, &options->max_new_tokens,
      "The most tokens to add (default 32)", "N" },
    { "temperature", 0, 0, G_OPTION_ARG_DOUBLE, &options->temperature,
      "Divisor of the logits; 0 picks the most likely token (default 0.8)", "X" },
    { "top-k", 0, 0, G_OPTION_ARG_INT, &options->top_k,
      "Sample among the k most likely tokens (default 0: all)", "K" },
    { "top-p", 0, 0, G_OPTION_ARG_DOUBLE, &options->top_p,
      "Sample among the most likely tokens whose probabilities reach p (default 1: all)", "P" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &options->seed, "Seed of the draws (default 0)", "N" },
    { "tp", 0, 0, G_OPTION_ARG_INT, &options->tp, "Tensor-parallel degree (default 1)", "N" },
    { "no-cache", 0, 0, G_OPTION_ARG_NONE, &options->no_cache,
      "Run the whole sequence for every token instead of keeping a key/value cache", NULL },
    { "print-ids", 0, 0, G_OPTION_ARG_NONE, &options->print_ids,
      "Print the new token ids instead of the text", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- continue a prompt with a decoder");

  options->max_new_tokens = 32;
  options->temperature = 0.8;
  options->top_p = 1.0;
  options->tp = 1;

  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_summary (context,
    "Loads a decoder and continues a prompt, with a key/value cache so that each new\n"
    "token costs one position. Under mpirun with --tp N it gives the tokens of 1 rank.");
  if (!g_option_context_parse (context, argc, argv, error))
    return FALSE;

  if (options->load == NULL)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                           "--load DIR is needed: the model to generate with");
      return FALSE;
    }
  if ((options->prompt == NULL) == (options->prompt_ids == NULL))
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                           "give the prompt as --prompt TEXT or as --prompt-ids ID,ID,... (one "
                           "of them)");
      return FALSE;
    }
  if (options->tp < 1 || options->max_new_tokens < 0 || options->top_k < 0)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                           "--tp must be at least 1, --max-new-tokens and --top-k not negative");
      return FALSE;
    }
  if (!(options->temperature >= 0) || isinf (options->temperature))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--temperature %g: needs a finite number, at least 0", options->temperature);
      return FALSE;
    }
  if (!(options->top_p > 0 && options->top_p <= 1))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--top-p %g: needs a number in (0, 1]", options->top_p);
      return FALSE;
    }
  return TRUE;
}

/* The ids of --prompt-ids */
static gint64 *
parse_ids (const gchar  *text,
           gsize        *n_ids,
           GError      **error)
{
  g_auto(GStrv) parts = g_strsplit (text, ",", -1);
  guint n = g_strv_length (parts);
  g_autofree gint64 *ids = g_new (gint64, MAX (n, 1));

  for (guint i = 0; i < n; i++)
    {
      g_autofree gchar *part = g_strstrip (g_strdup (parts[i]));
      guint64 id;

      if (!g_ascii_string_to_unsigned (part, 10, 0, G_MAXINT64, &id, NULL))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                       "--prompt-ids %s: '%s' is not a token id", text, part);
          return NULL;
        }
      ids[i] = (gint64) id;
    }
  *n_ids = n;
  return g_steal_pointer (&ids);
}

/* The decoder of --load over the tp ranks of a [world / tp, tp] mesh:
 * the replicas generate alike */
static HpDecoder *
load_decoder (Options  *options,
              GError  **error)
{
  gint world = hp_get_world_size ();
  g_autoptr(HpModelSource) source = NULL;
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpDeviceMesh) tp_mesh = NULL;

  if (world % options->tp != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--tp %d does not divide world size %d", options->tp, world);
      return NULL;
    }
  source = hp_model_source_open (options->load, error);
  if (source == NULL)
    return NULL;
  if (options->tp == 1)
    return hp_model_source_load_decoder (source, NULL, error);
  mesh = hp_device_mesh_new ((gint[]) { world / options->tp, options->tp }, 2,
                             (const gchar *[]) { "dp_replicate", "tp", NULL }, error);
  if (mesh == NULL ||
      !(tp_mesh = hp_device_mesh_slice (mesh, (const gchar *[]) { "tp", NULL }, error)))
    return NULL;
  return hp_model_source_load_decoder (source, tp_mesh, error);
}

/* The prompt's ids: --prompt-ids, or --prompt as byte tokens, which the
 * model's vocabulary must hold */
static gint64 *
prompt_of (Options    *options,
           HpDecoder  *decoder,
           gsize      *n_ids,
           GError    **error)
{
  HpDecoderConfig *config = HP_DECODER_CONFIG (hp_configurable_get_config (HP_CONFIGURABLE (decoder)));
  gint vocab = hp_decoder_config_get_vocab_size (config);
  g_autoptr(HpByteTokenizer) tokenizer = NULL;

  if (options->prompt_ids != NULL)
    return parse_ids (options->prompt_ids, n_ids, error);
  if (vocab < HP_BYTE_TOKENIZER_VOCAB_SIZE)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "--prompt: the model's vocab-size %d does not hold the %d byte tokens of "
                   "text; give --prompt-ids", vocab, HP_BYTE_TOKENIZER_VOCAB_SIZE);
      return NULL;
    }
  tokenizer = hp_byte_tokenizer_new ();
  return hp_byte_tokenizer_encode (tokenizer, options->prompt, -1, n_ids);
}

/* What rank 0 prints: the new ids, or the text of the prompt and them */
static gchar *
output_of (Options       *options,
           const gint64  *prompt,
           gsize          n_prompt,
           const gint64  *tokens,
           gsize          n_tokens,
           GError       **error)
{
  g_autoptr(HpByteTokenizer) tokenizer = hp_byte_tokenizer_new ();
  g_autofree gint64 *all = NULL;
  g_autofree gchar *text = NULL;

  if (options->print_ids)
    {
      GString *line = g_string_new (NULL);

      for (gsize i = 0; i < n_tokens; i++)
        g_string_append_printf (line, "%s%" G_GINT64_FORMAT, i > 0 ? "," : "", tokens[i]);
      return g_string_free (line, FALSE);
    }
  all = g_new (gint64, n_prompt + n_tokens + 1);
  memcpy (all, prompt, n_prompt * sizeof (gint64));
  memcpy (all + n_prompt, tokens, n_tokens * sizeof (gint64));
  text = hp_byte_tokenizer_decode (tokenizer, all, n_prompt + n_tokens, error);
  if (text == NULL)
    {
      g_prefix_error (error, "the tokens are not bytes of text (give --print-ids): ");
      return NULL;
    }
  return g_steal_pointer (&text);
}

static gboolean
run (Options  *options,
     GError  **error)
{
  g_autoptr(HpDecoder) decoder = NULL;
  g_autoptr(HpGenerator) generator = NULL;
  g_autofree gint64 *prompt = NULL;
  g_autofree gint64 *tokens = NULL;
  g_autofree gchar *output = NULL;
  gsize n_prompt = 0;
  gsize n_tokens = 0;
  gint64 start;
  gdouble seconds;

  decoder = load_decoder (options, error);
  if (decoder == NULL)
    return FALSE;
  prompt = prompt_of (options, decoder, &n_prompt, error);
  if (prompt == NULL)
    return FALSE;

  /* text stops at its end; ids go on for all --max-new-tokens */
  generator = g_object_new (HP_TYPE_GENERATOR,
                            "max-new-tokens", (guint) options->max_new_tokens,
                            "temperature", options->temperature,
                            "top-k", (guint) options->top_k,
                            "top-p", options->top_p,
                            "seed", (guint64) options->seed,
                            "use-cache", !options->no_cache,
                            "stop-id", (gint64) (options->prompt != NULL ? HP_BYTE_TOKENIZER_EOT : -1),
                            NULL);
  start = g_get_monotonic_time ();
  tokens = hp_generator_generate (generator, decoder, prompt, n_prompt, &n_tokens, error);
  if (tokens == NULL)
    return FALSE;
  seconds = (g_get_monotonic_time () - start) / 1e6;

  output = output_of (options, prompt, n_prompt, tokens, n_tokens, error);
  if (output == NULL)
    return FALSE;
  if (hp_get_world_rank () == 0)
    {
      g_print ("%s\n", output);
      g_printerr ("hp-generate: %" G_GSIZE_FORMAT " tokens after %" G_GSIZE_FORMAT
                  " of prompt in %.3f s (%.1f tokens/s, %s, tp %d)\n", n_tokens, n_prompt,
                  seconds, n_tokens / MAX (seconds, 1e-9),
                  options->no_cache ? "no cache" : "key/value cache", options->tp);
    }
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
      g_printerr ("hp-generate: %s\n", error->message);
      return EXIT_FAILURE;
    }

  ok = parse_options (&options, &argc, &argv, &error) && run (&options, &error);
  if (!ok && hp_get_world_rank () == 0)
    g_printerr ("hp-generate: %s\n", error->message);
  options_clear (&options);
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
