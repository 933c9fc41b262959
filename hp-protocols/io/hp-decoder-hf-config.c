/* hp-decoder-hf-config.c: a decoder configuration as a Hugging Face
 * Llama config.json, both ways (HpDecoderStateDictAdapter)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "hp-config-private.h"
#include "hp-decoder-state-dict-adapter.h"
#include "hp-error.h"
#include "hp-json-private.h"
#include "hp-nn-enum-types.h"

/* The HF keys that are decoder fields, in the order they are written */
static const struct
{
  const gchar *hf;
  const gchar *field;
} field_keys[] = {
  { "hidden_size", "dim" },
  { "intermediate_size", "ffn-hidden" },
  { "num_hidden_layers", "n-layers" },
  { "num_attention_heads", "n-heads" },
  { "num_key_value_heads", "n-kv-heads" },
  { "head_dim", "head-dim" },
  { "attention_bias", "attention-bias" },
  { "rms_norm_eps", "norm-eps" },
  { "rope_theta", "rope-theta" },
  { "max_position_embeddings", "max-seq-len" },
  { "vocab_size", "vocab-size" },
  { "tie_word_embeddings", "tie-word-embeddings" },
};

/* The keys of rope_scaling that are decoder fields: the first one for
 * the linear scaling, all of them for llama3 (Hugging Face requires
 * each) */
static const struct
{
  const gchar *hf;
  const gchar *field;
} rope_scaling_keys[] = {
  { "factor", "rope-scaling-factor" },
  { "low_freq_factor", "rope-low-freq-factor" },
  { "high_freq_factor", "rope-high-freq-factor" },
  { "original_max_position_embeddings", "rope-original-max-seq-len" },
};

/* Keys without a field whose only value the decoder supports is this
 * JSON text */
static const struct
{
  const gchar *hf;
  const gchar *json;
} fixed_keys[] = {
  { "model_type", "\"llama\"" },
  { "architectures", "[\"LlamaForCausalLM\"]" },
  { "hidden_act", "\"silu\"" },
  { "mlp_bias", "false" },
  { "attention_dropout", "0.0" },
  { "pretraining_tp", "1" },
};

/* Keys that do not change the model: token ids, initialisation, cache
 * and provenance */
static const gchar * const ignored_keys[] = {
  "bos_token_id", "eos_token_id", "pad_token_id", "initializer_range", "use_cache",
  "transformers_version", "_name_or_path",
};

/* Hugging Face's defaults of LlamaConfig for field keys left out (the
 * decoder's own defaults differ) */
static const struct
{
  const gchar *hf;
  const gchar *json;
} hf_defaults[] = {
  { "rms_norm_eps", "1e-06" },
  { "rope_theta", "10000.0" },
  { "max_position_embeddings", "2048" },
};

static const gchar * const required_keys[] = {
  "model_type", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
  "vocab_size",
};

static gboolean
is_ignored (const gchar *key)
{
  for (guint i = 0; i < G_N_ELEMENTS (ignored_keys); i++)
    if (g_str_equal (key, ignored_keys[i]))
      return TRUE;
  return FALSE;
}

static gboolean
is_number (JsonNode *node)
{
  return JSON_NODE_HOLDS_VALUE (node) && (json_node_get_value_type (node) == G_TYPE_INT64 ||
                                          json_node_get_value_type (node) == G_TYPE_DOUBLE);
}

static gboolean
is_boolean (JsonNode *node)
{
  return JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_BOOLEAN;
}

static gboolean
equal_json (JsonNode    *node,
            const gchar *json)
{
  g_autoptr(JsonNode) expected = json_from_string (json, NULL);

  /* 0 and 0.0, 1 and 1.0 are one number here */
  if (is_number (node) && is_number (expected))
    return json_node_get_double (node) == json_node_get_double (expected);
  return json_node_equal (node, expected);
}

static gboolean
set_field (HpConfig     *config,
           const gchar  *key,
           const gchar  *field,
           JsonNode     *node,
           GError      **error)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_auto(GValue) current = G_VALUE_INIT;
  g_autoptr(GError) local_error = NULL;
  gboolean flag;

  /* a number does not stand for a flag, nor a flag for a number */
  hp_config_get_value (config, field, &current, NULL);
  flag = G_VALUE_HOLDS_BOOLEAN (&current);
  if (flag ? !is_boolean (node) : !is_number (node))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT, "HF config: %s: expected %s", key,
                   flag ? "true or false" : "a number");
      return FALSE;
    }
  json_node_get_value (node, &value);
  if (!hp_config_set_value (config, field, &value, &local_error))
    {
      /* the field's own message, under the HF key */
      const gchar *message = g_str_has_prefix (local_error->message, field) &&
                             local_error->message[strlen (field)] == ':'
                             ? local_error->message + strlen (field) + 2 : local_error->message;

      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT, "HF config: %s: %s", key, message);
      return FALSE;
    }
  return TRUE;
}

static gboolean
set_dtype (HpConfig     *config,
           JsonNode     *node,
           GError      **error)
{
  const gchar *name = JSON_NODE_HOLDS_VALUE (node) &&
                      json_node_get_value_type (node) == G_TYPE_STRING
                      ? json_node_get_string (node) : NULL;
  HpDType dtype;

  /* bfloat16 and float16 files load as float32, exactly */
  if (g_strcmp0 (name, "float32") == 0 || g_strcmp0 (name, "bfloat16") == 0 ||
      g_strcmp0 (name, "float16") == 0)
    dtype = HP_DTYPE_FLOAT32;
  else if (g_strcmp0 (name, "float64") == 0)
    dtype = HP_DTYPE_FLOAT64;
  else
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "HF config: torch_dtype: expected \"float32\", \"bfloat16\", \"float16\" or "
                   "\"float64\"");
      return FALSE;
    }
  g_object_set (config, "dtype", dtype, NULL);
  return TRUE;
}

/* The number of rope_scaling_keys that @scaling has */
static guint
n_rope_scaling_keys (HpRopeScaling scaling)
{
  return scaling == HP_ROPE_SCALING_LLAMA3 ? G_N_ELEMENTS (rope_scaling_keys)
         : scaling == HP_ROPE_SCALING_LINEAR ? 1 : 0;
}

/* rope_scaling: null, or an object with a supported rope_type (older
 * files: type) and exactly the keys of that type; Hugging Face's
 * "default" is no scaling */
static gboolean
set_rope_scaling (HpConfig  *config,
                  JsonNode  *node,
                  GError   **error)
{
  JsonObject *object;
  const gchar *type_key = NULL;
  const gchar *type = NULL;
  g_autoptr(GEnumClass) scalings = g_type_class_ref (HP_TYPE_ROPE_SCALING);
  GEnumValue *scaling;
  g_autoptr(GList) members = NULL;

  if (JSON_NODE_HOLDS_NULL (node))
    {
      g_object_set (config, "rope-scaling", HP_ROPE_SCALING_NONE, NULL);
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                   "HF config: rope_scaling: expected null or an object");
      return FALSE;
    }
  object = json_node_get_object (node);
  for (guint i = 0; i < 2; i++)
    {
      const gchar *key = i == 0 ? "rope_type" : "type";
      JsonNode *member = json_object_get_member (object, key);
      const gchar *name = member != NULL && JSON_NODE_HOLDS_VALUE (member) &&
                          json_node_get_value_type (member) == G_TYPE_STRING
                          ? json_node_get_string (member) : NULL;

      if (member != NULL && (name == NULL || (type != NULL && !g_str_equal (name, type))))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_FORMAT,
                       "HF config: rope_scaling.%s: expected a string%s", key,
                       type != NULL ? " equal to rope_type" : "");
          return FALSE;
        }
      if (type == NULL && name != NULL)
        {
          type = name;
          type_key = key;
        }
    }
  if (type == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT, "HF config: rope_scaling: no key 'rope_type'");
      return FALSE;
    }
  scaling = g_str_equal (type, "default") ? g_enum_get_value (scalings, HP_ROPE_SCALING_NONE)
            : g_str_equal (type, "none") ? NULL : g_enum_get_value_by_nick (scalings, type);
  if (scaling == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "HF config: rope_scaling.%s: \"%s\" is not supported (the decoder has "
                   "\"default\", \"linear\" and \"llama3\")", type_key, type);
      return FALSE;
    }

  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    {
      const gchar *key = l->data;
      gboolean known = g_str_equal (key, "rope_type") || g_str_equal (key, "type");

      for (guint i = 0; !known && i < n_rope_scaling_keys (scaling->value); i++)
        known = g_str_equal (key, rope_scaling_keys[i].hf);
      if (!known)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                       "HF config: rope_scaling.%s: unknown key for rope_type \"%s\"", key, type);
          return FALSE;
        }
    }
  for (guint i = 0; i < n_rope_scaling_keys (scaling->value); i++)
    {
      g_autofree gchar *key = g_strconcat ("rope_scaling.", rope_scaling_keys[i].hf, NULL);
      JsonNode *member = json_object_get_member (object, rope_scaling_keys[i].hf);

      if (member == NULL)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_FORMAT, "HF config: rope_scaling: no key '%s'",
                       rope_scaling_keys[i].hf);
          return FALSE;
        }
      if (!set_field (config, key, rope_scaling_keys[i].field, member, error))
        return FALSE;
    }
  g_object_set (config, "rope-scaling", scaling->value, NULL);
  return TRUE;
}

/* Every member of @object is a field, a supported fixed value, the
 * dtype or a key to ignore */
static gboolean
read_members (HpConfig    *config,
              JsonObject  *object,
              GError     **error)
{
  g_autoptr(GList) members = json_object_get_members (object);

  for (GList *l = members; l != NULL; l = l->next)
    {
      const gchar *key = l->data;
      JsonNode *node = json_object_get_member (object, key);
      gboolean known = is_ignored (key);

      if (g_str_equal (key, "torch_dtype"))
        {
          if (!set_dtype (config, node, error))
            return FALSE;
          known = TRUE;
        }
      else if (g_str_equal (key, "rope_scaling"))
        {
          if (!set_rope_scaling (config, node, error))
            return FALSE;
          known = TRUE;
        }
      else if (g_str_equal (key, "head_dim") && JSON_NODE_HOLDS_NULL (node))
        known = TRUE;
      for (guint i = 0; !known && i < G_N_ELEMENTS (field_keys); i++)
        if (g_str_equal (key, field_keys[i].hf))
          {
            if (!set_field (config, key, field_keys[i].field, node, error))
              return FALSE;
            known = TRUE;
          }
      for (guint i = 0; !known && i < G_N_ELEMENTS (fixed_keys); i++)
        if (g_str_equal (key, fixed_keys[i].hf))
          {
            if (!equal_json (node, fixed_keys[i].json))
              {
                g_autofree gchar *given = json_to_string (node, FALSE);

                g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                             "HF config: %s: %s is not supported (the decoder has %s)",
                             key, given, fixed_keys[i].json);
                return FALSE;
              }
            known = TRUE;
          }
      if (!known)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                       "HF config: unknown key '%s'", key);
          return FALSE;
        }
    }
  return TRUE;
}

/* A head_dim that the sizes imply is the field's default, 0, so that
 * the configurations written read back equal */
static void
normalize_head_dim (HpDecoderConfig *config)
{
  gint dim, n_heads, head_dim;

  g_object_get (config, "dim", &dim, "n-heads", &n_heads, "head-dim", &head_dim, NULL);
  if (dim % n_heads == 0 && head_dim == dim / n_heads)
    g_object_set (config, "head-dim", 0, NULL);
}

/**
 * hp_decoder_state_dict_adapter_new_from_hf_config:
 * @hf_config: the text of a Hugging Face `config.json`
 * @length: its length in bytes, or -1 when it ends with a nul
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates an adapter for the [class@Hp.Decoder] that a Hugging Face
 * Llama configuration (`"model_type": "llama"`) describes. Its
 * [property@Hp.DecoderStateDictAdapter:model-config] has the sizes of
 * the keys, mapped as `docs/checkpoints.md` lists (`hidden_size` is
 * [property@Hp.DecoderConfig:dim], `intermediate_size`
 * [property@Hp.DecoderConfig:ffn-hidden], and so on), Hugging Face's
 * defaults where a key is left out, and a `float32` dtype for
 * `torch_dtype` `float32`, `bfloat16` or `float16` (such weights load
 * as float32, exactly).
 *
 * `head_dim`, `attention_bias` and `rope_scaling` (`null`, or
 * `rope_type` (or `type`) `"default"`, or `"linear"` with `factor`, or `"llama3"` with
 * `factor`, `low_freq_factor`, `high_freq_factor` and
 * `original_max_position_embeddings`) are fields too; a `head_dim`
 * equal to `hidden_size / num_attention_heads` reads as
 * [property@Hp.DecoderConfig:head-dim] 0.
 *
 * Every key counts: a key with no field (token ids, `initializer_range`,
 * `use_cache`, `transformers_version`) is read and left, a setting the
 * decoder does not have (another RoPE scaling type, MLP biases,
 * another activation) and an unknown key, also within `rope_scaling`,
 * are errors naming the key; nothing is dropped silently.
 *
 * Returns: (transfer full): a new adapter, or %NULL with
 *   [HP_ERROR_FORMAT][error@Hp.Error] for text that is not a JSON
 *   object, a missing key or a value out of its field's range, or
 *   [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] for a setting the decoder
 *   does not support; the message names the key
 *
 * Since: 1.0
 */
HpDecoderStateDictAdapter *
hp_decoder_state_dict_adapter_new_from_hf_config (const gchar  *hf_config,
                                                  gssize        length,
                                                  GError      **error)
{
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(HpDecoderConfig) config = NULL;
  g_autoptr(GError) local_error = NULL;
  JsonObject *object;

  g_return_val_if_fail (hf_config != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  root = _hp_json_parse_strict (hf_config, length < 0 ? strlen (hf_config) : (gsize) length,
                                &local_error);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT, "HF config: %s",
                   root == NULL ? local_error->message : "not a JSON object");
      return NULL;
    }
  object = json_node_get_object (root);
  for (guint i = 0; i < G_N_ELEMENTS (required_keys); i++)
    if (!json_object_has_member (object, required_keys[i]))
      {
        g_set_error (error, HP_ERROR, HP_ERROR_FORMAT, "HF config: no key '%s'", required_keys[i]);
        return NULL;
      }

  config = hp_decoder_config_new ();
  for (guint i = 0; i < G_N_ELEMENTS (hf_defaults); i++)
    {
      g_autoptr(JsonNode) node = json_from_string (hf_defaults[i].json, NULL);

      if (!json_object_has_member (object, hf_defaults[i].hf))
        json_object_set_member (object, hf_defaults[i].hf, g_steal_pointer (&node));
    }
  if (!read_members (HP_CONFIG (config), object, error))
    return NULL;
  normalize_head_dim (config);
  if (!hp_config_validate (HP_CONFIG (config), &local_error))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_FORMAT, "HF config: %s", local_error->message);
      return NULL;
    }
  return hp_decoder_state_dict_adapter_new (config);
}

/* What a layer has that the HF config gives every layer, as a path in
 * the layer and the decoder field it must equal */
static const struct
{
  const gchar *path;
  const gchar *field;
} layer_sizes[] = {
  { "attention.dim", "dim" },
  { "attention.n-heads", "n-heads" },
  { "attention.rope-theta", "rope-theta" },
  { "attention.rope-scaling", "rope-scaling" },
  { "attention.rope-scaling-factor", "rope-scaling-factor" },
  { "attention.rope-low-freq-factor", "rope-low-freq-factor" },
  { "attention.rope-high-freq-factor", "rope-high-freq-factor" },
  { "attention.rope-original-max-seq-len", "rope-original-max-seq-len" },
  { "attention.bias", "attention-bias" },
  { "attention.wq.bias", "attention-bias" },
  { "attention.wk.bias", "attention-bias" },
  { "attention.wv.bias", "attention-bias" },
  { "attention.wo.bias", "attention-bias" },
  { "feed-forward.dim", "dim" },
  { "attention-norm.eps", "norm-eps" },
  { "ffn-norm.eps", "norm-eps" },
};

static gdouble
number_at (HpConfig    *config,
           const gchar *path)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_auto(GValue) number = G_VALUE_INIT;

  g_value_init (&number, G_TYPE_DOUBLE);
  if (!hp_config_get_value (config, path, &value, NULL))
    return NAN;
  /* GLib has no transformation of these to a double */
  if (G_VALUE_HOLDS_BOOLEAN (&value))
    return g_value_get_boolean (&value);
  if (G_VALUE_HOLDS_ENUM (&value))
    return g_value_get_enum (&value);
  if (!g_value_transform (&value, &number))
    return NAN;
  return g_value_get_double (&number);
}

/* The size @n of a field where 0 stands for @otherwise */
static gdouble
or_derived (gdouble n,
            gdouble otherwise)
{
  return n == 0 ? otherwise : n;
}

/* A count as an integer, an epsilon or base as its shortest text, a
 * switch or a choice (the field at @path of @config, when given) as
 * its name */
static gchar *
format_size (HpConfig    *config,
             const gchar *path,
             gdouble      number)
{
  g_auto(GValue) value = G_VALUE_INIT;

  if (path != NULL && hp_config_get_value (config, path, &value, NULL) &&
      (G_VALUE_HOLDS_BOOLEAN (&value) || G_VALUE_HOLDS_ENUM (&value)))
    return hp_config_get_path_as_string (config, path, NULL);
  return number == (gint64) number ? g_strdup_printf ("%" G_GINT64_FORMAT, (gint64) number)
                                   : _hp_config_format_double (number);
}

/* The JSON text of the double, boolean or int @field of @config */
static gchar *
format_field (HpDecoderConfig *config,
              const gchar     *field)
{
  g_auto(GValue) value = G_VALUE_INIT;

  hp_config_get_value (HP_CONFIG (config), field, &value, NULL);
  if (G_VALUE_HOLDS_DOUBLE (&value))
    return _hp_config_format_double (g_value_get_double (&value));
  if (G_VALUE_HOLDS_BOOLEAN (&value))
    return g_strdup (g_value_get_boolean (&value) ? "true" : "false");
  return g_strdup_printf ("%d", g_value_get_int (&value));
}

/* "rope_scaling": null, or the object of the decoder's scaling */
static void
append_rope_scaling (GString         *json,
                     HpDecoderConfig *config)
{
  HpRopeScaling scaling = hp_decoder_config_get_rope_scaling (config);
  g_autoptr(GEnumClass) scalings = g_type_class_ref (HP_TYPE_ROPE_SCALING);
  GEnumValue *value = g_enum_get_value (scalings, scaling);

  if (scaling == HP_ROPE_SCALING_NONE)
    {
      g_string_append (json, "  \"rope_scaling\": null,\n");
      return;
    }
  g_string_append_printf (json, "  \"rope_scaling\": {\n    \"rope_type\": \"%s\"",
                          value->value_nick);
  for (guint i = 0; i < n_rope_scaling_keys (scaling); i++)
    {
      g_autofree gchar *text = format_field (config, rope_scaling_keys[i].field);

      g_string_append_printf (json, ",\n    \"%s\": %s", rope_scaling_keys[i].hf, text);
    }
  g_string_append (json, "\n  },\n");
}

/* Each layer, once expanded, has the sizes of the decoder's fields */
static gboolean
check_uniform (HpDecoderConfig  *config,
               GError          **error)
{
  HpConfig *self = HP_CONFIG (config);
  HpConfigList *layers = hp_decoder_config_get_layers (config);
  gdouble n_heads = number_at (self, "n-heads");
  gdouble head_dim = or_derived (number_at (self, "head-dim"),
                                 floor (number_at (self, "dim") / n_heads));

  for (guint i = 0; layers != NULL && i < hp_config_list_get_length (layers); i++)
    {
      g_autofree gchar *prefix = g_strdup_printf ("layers.%u.", i);
      /* field: the decoder field of a check that is one, for its text */
      struct { const gchar *path, *field; gdouble have, want; } checks[G_N_ELEMENTS (layer_sizes) + 3];
      guint n = 0;

      for (guint k = 0; k < G_N_ELEMENTS (layer_sizes); k++, n++)
        {
          g_autofree gchar *path = g_strconcat (prefix, layer_sizes[k].path, NULL);

          checks[n].path = layer_sizes[k].path;
          checks[n].field = layer_sizes[k].field;
          checks[n].have = number_at (self, path);
          checks[n].want = number_at (self, layer_sizes[k].field);
        }
      {
        g_autofree gchar *heads = g_strconcat (prefix, "attention.n-heads", NULL);
        g_autofree gchar *kv = g_strconcat (prefix, "attention.n-kv-heads", NULL);
        g_autofree gchar *hidden = g_strconcat (prefix, "feed-forward.hidden-dim", NULL);
        g_autofree gchar *layer_dim = g_strconcat (prefix, "attention.dim", NULL);
        g_autofree gchar *layer_head_dim = g_strconcat (prefix, "attention.head-dim", NULL);

        checks[n].path = "attention.n-kv-heads";
        checks[n].field = NULL;
        checks[n].have = or_derived (number_at (self, kv), number_at (self, heads));
        checks[n++].want = or_derived (number_at (self, "n-kv-heads"), n_heads);
        checks[n].path = "attention.head-dim";
        checks[n].field = NULL;
        checks[n].have = or_derived (number_at (self, layer_head_dim),
                                     floor (number_at (self, layer_dim) / number_at (self, heads)));
        checks[n++].want = head_dim;
        checks[n].path = "feed-forward.hidden-dim";
        checks[n].field = NULL;
        checks[n].have = number_at (self, hidden);
        checks[n++].want = hp_decoder_config_get_ffn_hidden_size (config);
      }
      for (guint k = 0; k < n; k++)
        /* a part the layer lacks is validation's to report */
        if (!isnan (checks[k].have) && checks[k].have != checks[k].want)
          {
            g_autofree gchar *path = g_strconcat (prefix, checks[k].path, NULL);
            g_autofree gchar *have = format_size (self, checks[k].field != NULL ? path : NULL,
                                                  checks[k].have);
            g_autofree gchar *want = format_size (self, checks[k].field, checks[k].want);

            g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                         "%s%s: %s, but the decoder's fields give %s: a Hugging Face Llama "
                         "configuration gives every layer the same sizes",
                         prefix, checks[k].path, have, want);
            return FALSE;
          }
    }
  return TRUE;
}

/* The torch name of the dtype the weights are saved in */
static const gchar *
torch_dtype (HpDecoderStateDictAdapter *self)
{
  HpDecoderConfig *config = hp_decoder_state_dict_adapter_get_model_config (self);

  switch (hp_base_state_dict_adapter_get_save_dtype (HP_BASE_STATE_DICT_ADAPTER (self)))
    {
    case HP_SAFETENSORS_DTYPE_BF16:
      return "bfloat16";
    case HP_SAFETENSORS_DTYPE_F16:
      return "float16";
    case HP_SAFETENSORS_DTYPE_F32:
      return "float32";
    case HP_SAFETENSORS_DTYPE_F64:
      return "float64";
    case HP_SAFETENSORS_DTYPE_AS_IS:
    default:
      return hp_dtype_to_string (hp_decoder_config_get_dtype (config));
    }
}

/**
 * hp_decoder_state_dict_adapter_to_hf_config:
 * @self: a [class@Hp.DecoderStateDictAdapter]
 * @error: return location for a [struct@GLib.Error]
 *
 * Writes [property@Hp.DecoderStateDictAdapter:model-config] as a
 * Hugging Face Llama `config.json` (`LlamaForCausalLM`), with the keys
 * that [ctor@Hp.DecoderStateDictAdapter.new_from_hf_config] reads back
 * to an equal configuration: `model_type`, `architectures`,
 * `hidden_size`, `intermediate_size`, `num_hidden_layers`,
 * `num_attention_heads`, `num_key_value_heads`, `head_dim`,
 * `hidden_act`, `rms_norm_eps`, `rope_theta`, `rope_scaling`,
 * `max_position_embeddings`, `vocab_size`, `tie_word_embeddings`,
 * `attention_bias`, `mlp_bias` and `torch_dtype`, the dtype the
 * weights are saved in ([property@Hp.BaseStateDictAdapter:save-dtype]:
 * `bfloat16`, `float16`, `float32` or `float64`; the configuration's
 * dtype when each tensor is saved in its own). The derived sizes are
 * written out: `num_key_value_heads` when n-kv-heads is 0,
 * `intermediate_size` when ffn-hidden is 0.
 *
 * Returns: (transfer full): the JSON text, or %NULL with
 *   [HP_ERROR_NOT_SUPPORTED][error@Hp.Error] when the layers of the
 *   configuration differ from each other or from its fields, which a
 *   Hugging Face configuration cannot say (the message names the layer's
 *   field), or the error of [method@Hp.Config.validate] for a
 *   configuration that does not build
 *
 * Since: 1.0
 */
gchar *
hp_decoder_state_dict_adapter_to_hf_config (HpDecoderStateDictAdapter  *self,
                                            GError                    **error)
{
  HpDecoderConfig *config;
  g_autoptr(GString) json = g_string_new ("{\n");
  gint dim, n_heads;

  g_return_val_if_fail (HP_IS_DECODER_STATE_DICT_ADAPTER (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  config = hp_decoder_state_dict_adapter_get_model_config (self);
  if (!check_uniform (config, error) || !hp_config_validate (HP_CONFIG (config), error))
    return NULL;
  g_object_get (config, "dim", &dim, "n-heads", &n_heads, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (fixed_keys); i++)
    g_string_append_printf (json, "  \"%s\": %s,\n", fixed_keys[i].hf, fixed_keys[i].json);
  for (guint i = 0; i < G_N_ELEMENTS (field_keys); i++)
    {
      const gchar *field = field_keys[i].field;
      g_autofree gchar *text = NULL;

      if (g_str_equal (field, "n-kv-heads"))
        text = g_strdup_printf ("%d", hp_decoder_config_get_n_kv_heads (config) > 0
                                      ? hp_decoder_config_get_n_kv_heads (config) : n_heads);
      else if (g_str_equal (field, "head-dim"))
        text = g_strdup_printf ("%d", hp_decoder_config_get_head_dim (config) > 0
                                      ? hp_decoder_config_get_head_dim (config) : dim / n_heads);
      else if (g_str_equal (field, "ffn-hidden"))
        text = g_strdup_printf ("%d", hp_decoder_config_get_ffn_hidden_size (config));
      else
        text = format_field (config, field);
      g_string_append_printf (json, "  \"%s\": %s,\n", field_keys[i].hf, text);
    }
  append_rope_scaling (json, config);
  g_string_append_printf (json, "  \"torch_dtype\": \"%s\"\n}\n", torch_dtype (self));
  return g_string_free (g_steal_pointer (&json), FALSE);
}
