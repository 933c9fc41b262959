#!/usr/bin/env python3
# test_hf_reference.py: directories of Hugging Face Llama files, written
# here without the library (numpy, json, struct), load through the HF
# adapter and give the logits of a float64 numpy forward written here
# from Hugging Face's definition of the model (rotary embedding on
# halves, rotate_half; repeat_kv; RMSNorm; SiLU MLP)
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import json
import os
import struct
import tempfile
import unittest

import numpy as np
from hptest import Hp, to_numpy

F32 = Hp.DType.FLOAT32

BASE = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 16,
    "intermediate_size": 24,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "max_position_embeddings": 32,
    "vocab_size": 19,
    "hidden_act": "silu",
    "tie_word_embeddings": False,
    "attention_bias": False,
    "torch_dtype": "float32",
}


# --- the files, written as Hugging Face writes them ---------------------

def bf16_bits(values):
    """float32 values rounded to bfloat16 (to nearest, ties to even), as
    the upper 16 bits of their float32 pattern"""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def stored(values, dtype):
    """What a file of DTYPE holds for VALUES, as float64"""
    if dtype == "BF16":
        return (bf16_bits(values).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def write_safetensors(path, tensors, dtype):
    header, blobs, offset = {}, [], 0
    for name, values in tensors.items():
        data = (bf16_bits(values) if dtype == "BF16"
                else np.asarray(values, dtype="<f4")).tobytes()
        header[name] = {"dtype": dtype, "shape": list(values.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write_hf_directory(directory, config, tensors, dtype="F32", shards=1):
    with open(os.path.join(directory, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)
    names = list(tensors)
    if shards == 1:
        write_safetensors(os.path.join(directory, "model.safetensors"), tensors, dtype)
        return
    weight_map = {}
    for i in range(shards):
        file = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        part = {name: tensors[name] for name in names[i::shards]}
        write_safetensors(os.path.join(directory, file), part, dtype)
        weight_map.update({name: file for name in part})
    with open(os.path.join(directory, "model.safetensors.index.json"), "w", encoding="utf-8") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f)


def read_safetensors(path):
    """The tensors of a safetensors file, read here: float64 arrays by name"""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        raw = data[8 + length + begin:8 + length + end]
        if entry["dtype"] == "BF16":
            values = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            values = np.frombuffer(raw, {"F32": "<f4", "F64": "<f8"}[entry["dtype"]])
        tensors[name] = values.astype(np.float64).reshape(entry["shape"])
    return tensors


# --- the model, as Hugging Face defines it -------------------------------

def head_dim(config):
    return config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]


def random_weights(config, seed):
    rng = np.random.default_rng(seed)
    dim, ffn, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    heads, kv_heads, hd = config["num_attention_heads"], config["num_key_value_heads"], head_dim(config)

    def w(*shape):
        return rng.standard_normal(shape) * 0.3

    tensors = {"model.embed_tokens.weight": w(vocab, dim)}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        tensors[p + "input_layernorm.weight"] = 1 + w(dim)
        tensors[p + "self_attn.q_proj.weight"] = w(heads * hd, dim)
        tensors[p + "self_attn.k_proj.weight"] = w(kv_heads * hd, dim)
        tensors[p + "self_attn.v_proj.weight"] = w(kv_heads * hd, dim)
        tensors[p + "self_attn.o_proj.weight"] = w(dim, heads * hd)
        if config.get("attention_bias"):
            tensors[p + "self_attn.q_proj.bias"] = w(heads * hd)
            tensors[p + "self_attn.k_proj.bias"] = w(kv_heads * hd)
            tensors[p + "self_attn.v_proj.bias"] = w(kv_heads * hd)
            tensors[p + "self_attn.o_proj.bias"] = w(dim)
        tensors[p + "post_attention_layernorm.weight"] = 1 + w(dim)
        tensors[p + "mlp.gate_proj.weight"] = w(ffn, dim)
        tensors[p + "mlp.up_proj.weight"] = w(ffn, dim)
        tensors[p + "mlp.down_proj.weight"] = w(dim, ffn)
    tensors["model.norm.weight"] = 1 + w(dim)
    if not config.get("tie_word_embeddings"):
        tensors["lm_head.weight"] = w(vocab, dim)
    return tensors


def inverse_frequencies(config):
    hd = head_dim(config)
    inv_freq = 1.0 / config["rope_theta"] ** (np.arange(0, hd, 2) / hd)
    scaling = config.get("rope_scaling")
    if not scaling:
        return inv_freq
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind == "linear":
        return inv_freq / scaling["factor"]
    assert kind == "llama3"
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old_context = scaling["original_max_position_embeddings"]
    wavelen = 2 * np.pi / inv_freq
    scaled = np.where(wavelen > old_context / low, inv_freq / factor, inv_freq)
    smooth = (old_context / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelen >= old_context / high) & (wavelen <= old_context / low)
    return np.where(medium, smoothed, scaled)


def rms_norm(x, weight, eps):
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + eps) * weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def linear(x, tensors, name):
    out = x @ tensors[name + ".weight"].T
    bias = tensors.get(name + ".bias")
    return out if bias is None else out + bias


def reference_logits(config, tensors, ids):
    """LlamaForCausalLM's forward in float64"""
    batch, seq = ids.shape
    heads, kv_heads, hd = config["num_attention_heads"], config["num_key_value_heads"], head_dim(config)
    eps = config["rms_norm_eps"]
    freqs = np.outer(np.arange(seq), inverse_frequencies(config))
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb)[None, None], np.sin(emb)[None, None]
    mask = np.triu(np.full((seq, seq), -np.inf), 1)

    x = tensors["model.embed_tokens.weight"][ids]
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms_norm(x, tensors[p + "input_layernorm.weight"], eps)
        q = linear(h, tensors, p + "self_attn.q_proj").reshape(batch, seq, heads, hd).transpose(0, 2, 1, 3)
        k = linear(h, tensors, p + "self_attn.k_proj").reshape(batch, seq, kv_heads, hd).transpose(0, 2, 1, 3)
        v = linear(h, tensors, p + "self_attn.v_proj").reshape(batch, seq, kv_heads, hd).transpose(0, 2, 1, 3)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = np.repeat(k, heads // kv_heads, axis=1)
        v = np.repeat(v, heads // kv_heads, axis=1)
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd) + mask
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        attended = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, heads * hd)
        x = x + linear(attended, tensors, p + "self_attn.o_proj")
        h = rms_norm(x, tensors[p + "post_attention_layernorm.weight"], eps)
        gate = linear(h, tensors, p + "mlp.gate_proj")
        x = x + linear(gate / (1 + np.exp(-gate)) * linear(h, tensors, p + "mlp.up_proj"),
                       tensors, p + "mlp.down_proj")
    x = rms_norm(x, tensors["model.norm.weight"], eps)
    head = tensors.get("lm_head.weight", tensors["model.embed_tokens.weight"])
    return x @ head.T


# --- hp, reading only those files ----------------------------------------

def hp_logits(directory, ids):
    """The logits of the decoder that the HF adapter builds from
    DIRECTORY's config.json and loads with its weights, the adapter, and
    the tensors of the model.safetensors it saves again, read here"""
    with open(os.path.join(directory, "config.json"), encoding="utf-8") as f:
        adapter = Hp.DecoderStateDictAdapter.new_from_hf_config(f.read(), -1)
    config = adapter.get_model_config()
    model = config.build()
    model.load_state_dict(adapter.from_hf(adapter.load_hf_state_dict(directory, config, F32)), True)
    again = os.path.join(directory, "again")
    os.mkdir(again)
    adapter.save_hf_state_dict(adapter.to_hf(model.state_dict()), config, again)
    saved = read_safetensors(os.path.join(again, "model.safetensors"))
    return to_numpy(model(Hp.Tensor.from_numpy(ids))), adapter, saved


LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8}
VARIANTS = {
    "gqa": {},
    "tied": {"tie_word_embeddings": True, "num_key_value_heads": 4},
    "llama3": {"rope_scaling": LLAMA3, "rope_theta": 500000.0},
    "linear": {"rope_scaling": {"rope_type": "linear", "factor": 2.0}},
    "bias+head_dim": {"attention_bias": True, "head_dim": 6},
    "tied+llama3+bias+head_dim": {"tie_word_embeddings": True, "rope_scaling": LLAMA3,
                                  "attention_bias": True, "head_dim": 10},
}


class HuggingFaceReferenceTest(unittest.TestCase):
    def check_variant(self, overrides, dtype, shards, seed):
        config = dict(BASE, **overrides)
        if dtype == "BF16":
            config["torch_dtype"] = "bfloat16"
        tensors = random_weights(config, seed)
        ids = np.random.default_rng(seed + 1).integers(0, config["vocab_size"], (2, 7))
        with tempfile.TemporaryDirectory() as directory:
            write_hf_directory(directory, config, tensors, dtype, shards)
            got, adapter, saved = hp_logits(directory, ids)
        values = {n: stored(t, dtype) for n, t in tensors.items()}
        want = reference_logits(config, values, ids)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        # saved again, the files hold the same names and values
        self.assertEqual(sorted(saved), sorted(values))
        for name, value in values.items():
            np.testing.assert_array_equal(saved[name], value, name)
        # hp's config.json for the model says what the files said
        written = json.loads(adapter.to_hf_config())
        for key, value in config.items():
            if key != "torch_dtype":
                self.assertEqual(written.get(key), value, key)

    def test_variants(self):
        for seed, (name, overrides) in enumerate(VARIANTS.items()):
            for dtype, shards in (("F32", 1), ("BF16", 1), ("F32", 3)):
                with self.subTest(variant=name, dtype=dtype, shards=shards):
                    self.check_variant(overrides, dtype, shards, seed)

    def test_reference_rounds_like_torch(self):
        # ties go to the even bfloat16, others to the nearest
        values = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -9, -2.5], dtype=np.float32)
        np.testing.assert_array_equal(stored(values, "BF16"), [1.0, 1 + 2 ** -6, 1.0, -2.5])


if __name__ == "__main__":
    unittest.main(verbosity=2)
