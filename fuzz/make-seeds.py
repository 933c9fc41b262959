#!/usr/bin/env python3
# make-seeds.py: writes the seed corpora of the fuzz targets into
# fuzz/corpus/NAME (valid inputs of every form each parser reads, and
# broken ones near each validation rule) and the libFuzzer dictionary
# fuzz/config-json.dict:
#
#   safetensors  fuzz-safetensors-header
#   config-json  fuzz-config-json (and config-json.dict)
#   placement    fuzz-placement
#   initializer  fuzz-initializer
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def file_bytes(header, data=b"", pad=True):
    """A safetensors file: header length, header (a dict or text), data."""
    text = header if isinstance(header, str) else json.dumps(header, separators=(",", ":"))
    raw = text.encode("utf-8")
    if pad:
        raw += b" " * (-(8 + len(raw)) % 8)
    return struct.pack("<Q", len(raw)) + raw + data


def tensor(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


SAFETENSORS_SEEDS = {
    # valid
    "valid-empty": file_bytes({}),
    "valid-metadata": file_bytes({"__metadata__": {"format": "pt", "note": "\u00fc"}}),
    "valid-every-dtype": file_bytes(
        {"d": tensor("F64", [2], 0, 16), "i": tensor("I64", [1, 1], 16, 24),
         "f": tensor("F32", [3], 24, 36), "b": tensor("BF16", [2], 36, 40),
         "h": tensor("F16", [2], 40, 44), "u": tensor("U8", [4], 44, 48)},
        struct.pack("<2d", 1.5, -2.0) + struct.pack("<q", 7) + struct.pack("<3f", 1, 2, 3)
        + bytes([0x80, 0x3f, 0x80, 0x7f]) + bytes([0x00, 0x3c, 0x01, 0x00]) + bytes(4)),
    "valid-scalar-and-empty": file_bytes(
        {"s": tensor("F32", [], 0, 4), "e": tensor("F64", [0, 3], 4, 4),
         "t": tensor("I64", [2, 0], 4, 4)}, struct.pack("<f", 0.5)),
    "valid-3d": file_bytes({"w": tensor("F32", [2, 3, 2], 0, 48)},
                           struct.pack("<12f", *range(12))),
    # broken
    "bad-short": b"\x10\x00\x00",
    "bad-length-huge": struct.pack("<Q", 2 ** 63) + b"{}",
    "bad-length-past-end": struct.pack("<Q", 64) + b"{}",
    "bad-json": file_bytes('{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]', bytes(4)),
    "bad-json-comment": file_bytes('/**/{}'),
    "bad-json-duplicate": file_bytes('{"w":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}}',
                                     bytes(4)),
    "bad-json-deep": file_bytes('{"w":' + "[" * 80 + "]" * 80 + "}"),
    "bad-json-big-int": file_bytes('{"w":{"dtype":"F32","shape":[18446744073709551617],'
                                   '"data_offsets":[0,4]}}', bytes(4)),
    "bad-not-object": file_bytes("[1, 2]"),
    "bad-unknown-field": file_bytes({"w": {**tensor("F32", [1], 0, 4), "x": 1}}, bytes(4)),
    "bad-dtype": file_bytes({"w": tensor("F33", [1], 0, 4)}, bytes(4)),
    "bad-shape": file_bytes({"w": tensor("F32", [-1], 0, 4)}, bytes(4)),
    "bad-offsets-reversed": file_bytes({"w": tensor("F32", [1], 4, 0)}, bytes(4)),
    "bad-offsets-past-end": file_bytes({"w": tensor("F32", [4], 0, 16)}, bytes(4)),
    "bad-size": file_bytes({"w": tensor("F32", [2, 2], 0, 12)}, bytes(12)),
    "bad-overlap": file_bytes({"a": tensor("F32", [2], 0, 8), "b": tensor("F32", [2], 4, 12)},
                              bytes(12)),
    "bad-hole": file_bytes({"a": tensor("F32", [1], 0, 4), "b": tensor("F32", [1], 8, 12)},
                           bytes(12)),
    "bad-metadata": file_bytes({"__metadata__": {"n": 1}}),
    "bad-utf8": struct.pack("<Q", 4) + b'{"\xff"',
}


# ------------------------------------------------------------------
# fuzz-config-json: a digit picking the type asked for (see
# fuzz-config-json.c), then JSON text

ANY, DECODER, LINEAR, MODULE, OPTIMIZER, EVERY = "012345"


def config_input(kind, value, pretty=False):
    """The type digit @kind, then @value: a dict or list written as JSON,
    or text (str or bytes) as it is."""
    if isinstance(value, bytes):
        return kind.encode("ascii") + value
    if isinstance(value, str):
        text = value
    elif pretty:
        text = json.dumps(value, indent=2, ensure_ascii=False)
    else:
        text = json.dumps(value, separators=(", ", ": "), ensure_ascii=False)
    return (kind + text).encode("utf-8")


def sharding(state=None, in_src=None, in_dst=None, out_src=None, out_dst=None, local_map=None):
    return {"state-shardings": state or {}, "in-src-shardings": in_src or {},
            "in-dst-shardings": in_dst or {}, "out-src-shardings": out_src or [],
            "out-dst-shardings": out_dst or [], "local-map": local_map}


def local_map(path, ins, outs, in_grads=None):
    return {"callable-path": path, "in-placements": ins, "out-placements": outs,
            "in-grad-placements": in_grads}


COLWISE = sharding({"weight": {"tp": "S(0)"}}, {"input": {"tp": "R"}}, {"input": {"tp": "R"}},
                   [], [{"tp": "S(-1)"}])
ROWWISE = sharding({"weight": {"tp": "S(1)"}}, {}, {"input": {"tp": "S(-1)"}}, [], [{"tp": "R"}])
NORM = sharding({"weight": {"tp": "R"}}, {"input": {"tp": "R"}}, {"input": {"tp": "R"}})
SDPA = sharding(local_map=local_map("inner_sdpa", [{"tp": "S(2)"}] * 3, [{"tp": "S(2)"}]))

SMALL_INIT = "trunc_normal(mean=0, std=0.02, a=-2, b=2)"


def linear(n_in, n_out, init=SMALL_INIT, shard=None, bias=False):
    return {"@type": "HpLinearConfig", "param-init": {"weight": init} if init else None,
            "sharding-config": shard, "in-features": n_in, "out-features": n_out,
            "bias": bias, "dtype": "float32"}


def norm(dim, shard=None):
    return {"@type": "HpRMSNormConfig", "param-init": None, "sharding-config": shard,
            "dim": dim, "eps": 1e-05, "dtype": "float32"}


def block(dim, n_heads, hidden, depth, sharded):
    head = dim // n_heads
    deep = "depth_scaled_normal(std=0.02, depth=%d)" % depth
    return {
        "@type": "HpTransformerBlockConfig", "param-init": None, "sharding-config": None,
        "attention": {
            "@type": "HpGQAttentionConfig", "param-init": None,
            "sharding-config": sharding(in_src={"x": {"tp": "R"}}, in_dst={"x": {"tp": "R"}}) if sharded else None,
            "dim": dim, "n-heads": n_heads, "n-kv-heads": n_heads, "max-seq-len": 8,
            "rope-theta": 10000.0, "dtype": "float32",
            "wq": linear(dim, dim, shard=COLWISE if sharded else None),
            "wk": linear(dim, dim, shard=COLWISE if sharded else None),
            "wv": linear(dim, dim, shard=COLWISE if sharded else None),
            "wo": linear(dim, dim, deep, ROWWISE if sharded else None),
            "rope": {"@type": "HpRotaryEmbeddingConfig", "param-init": None,
                     "sharding-config": sharding({"cos": {"tp": "R"}, "sin": {"tp": "R"}}) if sharded else None,
                     "head-dim": head, "max-seq-len": 8, "theta": 10000.0, "dtype": "float32"},
            "inner-attention": {"@type": "HpSDPAConfig", "param-init": None,
                                "sharding-config": SDPA if sharded else None,
                                "causal": True, "return-lse": False, "scale": 0.0},
        },
        "feed-forward": {
            "@type": "HpFeedForwardConfig", "param-init": None,
            "sharding-config": sharding(in_src={"input": {"tp": "R"}}, in_dst={"input": {"tp": "R"}}) if sharded else None,
            "dim": dim, "hidden-dim": hidden, "dtype": "float32",
            "w1": linear(dim, hidden, shard=COLWISE if sharded else None),
            "w2": linear(hidden, dim, deep, ROWWISE if sharded else None),
            "w3": linear(dim, hidden, deep, COLWISE if sharded else None),
        },
        "attention-norm": norm(dim, NORM if sharded else None),
        "ffn-norm": norm(dim, NORM if sharded else None),
    }


def decoder(n_layers=1, sharded=False, sequence_parallel=False):
    dim, n_heads, vocab, hidden = 16, 2, 32, 48
    return {
        "@type": "HpDecoderConfig", "param-init": None, "sharding-config": None,
        "dim": dim, "n-layers": n_layers, "n-heads": n_heads, "n-kv-heads": 0,
        "vocab-size": vocab, "ffn-hidden": 0, "norm-eps": 1e-05, "rope-theta": 10000.0,
        "max-seq-len": 8, "dtype": "float32", "loss-parallel": True,
        "sequence-parallel": sequence_parallel,
        "tok-embeddings": {
            "@type": "HpEmbeddingConfig", "param-init": {"weight": "normal(mean=0, std=1)"},
            "sharding-config": sharding({"weight": {"tp": "S(0)"}}, {"ids": {"tp": "R"}},
                                        {"ids": {"tp": "R"}}, [], [{"tp": "R"}]) if sharded else None,
            "num-embeddings": vocab, "embedding-dim": dim, "dtype": "float32"},
        "layers": [block(dim, n_heads, hidden, i, sharded) for i in range(n_layers)],
        "norm": norm(dim, NORM if sharded else None),
        "lm-head": linear(dim, vocab, "trunc_normal(mean=0, std=0.25, a=-0.75, b=0.75)",
                          COLWISE if sharded else None),
    }


EVERY_FULL = {
    "@type": "FuzzEveryConfig",
    "flag": True, "count": -5, "n-items": 4294967295, "offset": -9223372036854775808,
    "size": "18446744073709551615", "big": 9223372036854775807, "seed": "9223372036854775808",
    "ratio": 3.4028235e+38, "scale": "-inf", "lr": 1.0,
    "name": "q\"b\\s/\n\t\u0001\u007f\u0085\u00e9\u2028\ufeff\U0001f600",
    "dtype": "int64", "options": ["alpha", "gamma"], "tags": ["", "a,b", " c ", "null"],
    "child": {"@type": "HpParallelDims", "tp": 2, "dp-shard": 4},
    "module": {"@type": "HpSDPAConfig", "causal": False, "scale": 0.125},
    "items": [{"@type": "HpAdamWConfig", "lr": 0.5}, {"@type": "FuzzEveryConfig", "count": 7},
              {"@type": "HpModuleConfig"}],
    "placement": {"tp": "S(0)", "dp": "P(max)", "ep": "R", "my.axis-2": "Shard(dim=-3)"},
    "sharding": sharding({"layers.0.weight": {"tp": "S(0)"}, "bias": {"tp": "R"}},
                         {"x": {"tp": "R"}}, {"x": {"tp": "S(1)", "dp": "S(0)"}},
                         [None, {"tp": "S(-1)"}], [{}],
                         local_map("inner", [{"tp": "S(0)"}, None], [{"tp": "S(0)", "dp": "R"}],
                                   [{"tp": "P(sum)"}, None])),
    "local-map": local_map(None, [], []),
    "param-init": {"weight": "normal(mean=0, std=0.02)", "bias": "zeros", "scale": "ones",
                   "gate": "uniform(a=-0.1, b=0.1)", "shift": "constant(value=0.5)"},
    "init": "trunc_normal(mean=0, std=0.5, a=-1, b=1)",
}

CONFIG_JSON_SEEDS = {
    # valid: every requested type
    "valid-decoder-defaults": config_input(DECODER, {}),
    "valid-decoder-sizes": config_input(DECODER, {"dim": 32, "n-layers": 3, "n-heads": 4, "n-kv-heads": 2,
                                                  "vocab-size": 100, "ffn-hidden": 64, "norm-eps": 1e-6,
                                                  "rope-theta": 500000, "dtype": "float64",
                                                  "loss-parallel": False, "sequence-parallel": True}),
    "valid-decoder-expanded": config_input(DECODER, decoder(2), pretty=True),
    "valid-decoder-sharded": config_input(DECODER, decoder(1, sharded=True)),
    "valid-decoder-any": config_input(ANY, decoder(1, sharded=True, sequence_parallel=True)),
    "valid-linear": config_input(LINEAR, linear(8, 4, bias=True)),
    "valid-linear-defaults": config_input(LINEAR, {}),
    "valid-linear-rowwise": config_input(LINEAR, linear(4, 8, "zeros", ROWWISE)),
    "valid-module": config_input(MODULE, {"param-init": {"w": "ones"}, "sharding-config": NORM}),
    "valid-module-subtype": config_input(MODULE, {"@type": "HpFeedForwardConfig", "dim": 4, "hidden-dim": 8}),
    "valid-optimizer-adamw": config_input(OPTIMIZER, {"@type": "HpAdamWConfig", "lr": 0.1, "beta1": 0.8,
                                                      "beta2": 0.99, "eps": 1e-10, "weight-decay": 0}),
    "valid-optimizer-sgd": config_input(OPTIMIZER, {"@type": "HpSGDConfig", "momentum": 0.9,
                                                    "dampening": 0.1, "nesterov": True}),
    "valid-any-parallel-dims": config_input(ANY, {"@type": "HpParallelDims", "dp-replicate": 2,
                                                  "dp-shard": -1, "cp": 1, "tp": 2, "pp": 1, "ep": 1}),
    "valid-any-rope": config_input(ANY, {"@type": "HpRotaryEmbeddingConfig", "head-dim": 8}),
    "valid-every-defaults": config_input(EVERY, {}),
    "valid-every-full": config_input(EVERY, EVERY_FULL, pretty=True),
    "valid-every-any": config_input(ANY, EVERY_FULL),
    "valid-every-nulls": config_input(EVERY, {"name": None, "tags": None, "child": None, "items": None,
                                              "placement": None, "sharding": None, "local-map": None,
                                              "param-init": None, "init": None}),
    "valid-every-empty": config_input(EVERY, {"name": "", "tags": [], "options": [], "items": [],
                                              "placement": {}, "sharding": {}, "param-init": {}}),
    "valid-every-numbers": config_input(EVERY, {"ratio": 1e-45, "scale": 5e-324, "lr": 0.1,
                                                "seed": 18446744073709551615 // 2, "big": -1,
                                                "size": 0, "offset": 9223372036854775807}),
    # the lenient forms of a configuration (the JSON is strict): '_'
    # for '-', integers for numbers, "inf"
    "valid-lenient": config_input(EVERY, "{\"n_items\": 2, \"scale\": \"inf\", \"lr\": 1, "
                                         "\"local_map\": {\"callable_path\": \"f\"}}"),
    "valid-lenient-decoder": config_input(DECODER, "{\"n_layers\": 1, \"loss_parallel\": false, "
                                                   "\"rope_theta\": 10000}"),
    "valid-deep-configs": config_input(EVERY, "{\"@type\": \"FuzzEveryConfig\", \"child\": " * 40
                                              + "{\"@type\": \"FuzzEveryConfig\", \"count\": 1}" + "}" * 40),
    # broken: the JSON
    "bad-json-empty": config_input(DECODER, ""),
    "bad-json-comment-only": config_input(DECODER, " /* nothing */ "),
    "bad-json-truncated": config_input(DECODER, "{\"dim\": 16, \"layers\": [{\"@type\": "),
    "bad-json-trailing": config_input(LINEAR, "{} xyz"),
    "bad-json-big-int": config_input(DECODER, "{\"dim\": 99999999999999999999}"),
    "bad-json-big-negative": config_input(EVERY, "{\n\"big\": -9223372036854775809}"),
    "bad-json-huge-number": config_input(EVERY, "{\"scale\": -1e400}"),
    "bad-json-deep": config_input(ANY, "[" * 200 + "]" * 200),
    "bad-json-deep-arrays": config_input(EVERY, "{\"tags\": " + "[" * 200 + "]" * 200 + "}"),
    "bad-json-not-utf8": config_input(EVERY, b"{\"name\": \"\xff\xfe\"}"),
    "bad-json-nul-escape": config_input(EVERY, "{\"name\": \"a\\u0000b\"}"),
    "bad-json-lone-surrogate": config_input(EVERY, "{\"name\": \"\\ud800\"}"),
    "bad-json-surrogate-name": config_input(EVERY, "{\"name\": \"\\ud800x\"}"),
    "bad-json-surrogate-member": config_input(EVERY, "{\"placement\": {\"\\ud8\\dtp\": \"R\"}}"),
    # what json-glib alone reads: comments, single quotes, a member given
    # twice (it keeps the last), two documents (it reads the first)
    "bad-json-comment": config_input(EVERY, "/* every */ {\"n_items\": 2}"),
    "bad-json-single-quotes": config_input(EVERY, "{'n_items': 2, \"scale\": \"inf\"}"),
    "bad-json-duplicate-member": config_input(LINEAR, "{\"bias\": true, \"bias\": false}"),
    "bad-json-two-documents": config_input(LINEAR, "{\"bias\": true} {\"bias\": false}"),
    # nested configurations deeper than the 64 levels JSON may have
    "bad-json-deep-configs": config_input(EVERY, "{\"@type\": \"FuzzEveryConfig\", \"child\": " * 64
                                                 + "{\"@type\": \"FuzzEveryConfig\"}" + "}" * 64),

    # broken: the configuration
    "bad-not-object": config_input(DECODER, [1, 2]),
    "bad-number-at-end": config_input(DECODER, "-12"),
    "bad-unknown-field": config_input(LINEAR, {"weights": 1}),
    "bad-given-twice": config_input(DECODER, "{\"n-layers\": 2, \"n_layers\": 3}"),
    "bad-wrong-type-bool": config_input(LINEAR, {"bias": 1}),
    "bad-wrong-type-int": config_input(DECODER, {"dim": "16"}),
    "bad-int-as-number": config_input(DECODER, {"dim": 16.0}),
    "bad-out-of-range": config_input(DECODER, {"n-heads": 0}),
    "bad-out-of-range-double": config_input(DECODER, {"norm-eps": 2}),
    "bad-unsigned-negative": config_input(EVERY, {"n-items": -1}),
    "bad-unsigned-text": config_input(EVERY, {"seed": "12"}),
    "bad-float-range": config_input(EVERY, {"ratio": 1e39}),
    "bad-nan-text": config_input(EVERY, {"scale": "nan"}),
    "bad-enum": config_input(DECODER, {"dtype": "float16"}),
    "bad-enum-type": config_input(DECODER, {"dtype": 1}),
    "bad-flags": config_input(EVERY, {"options": ["alpha", "delta"]}),
    "bad-strv": config_input(EVERY, {"tags": ["a", 2]}),
    "bad-null": config_input(DECODER, {"dim": None}),
    "bad-type-unknown": config_input(ANY, {"@type": "NoSuchConfig"}),
    "bad-type-abstract": config_input(ANY, {"dim": 2}),
    "bad-type-abstract-optimizer": config_input(OPTIMIZER, {"lr": 0.1}),
    "bad-type-unrelated": config_input(LINEAR, {"@type": "HpRMSNormConfig"}),
    "bad-type-not-config": config_input(ANY, {"@type": "GObject"}),
    "bad-type-module": config_input(ANY, {"@type": "HpDecoder"}),
    "bad-type-number": config_input(DECODER, {"@type": 3}),
    "bad-nested-type": config_input(DECODER, {"norm": {"@type": "HpLinearConfig"}}),
    "bad-list-not-array": config_input(DECODER, {"layers": {}}),
    "bad-list-item": config_input(DECODER, {"layers": [{"@type": "HpTransformerBlockConfig"}, 2]}),
    "bad-list-item-abstract": config_input(DECODER, {"layers": [{"dim": 2}]}),
    "bad-list-wrong-configs": config_input(DECODER, {"n-layers": 1, "layers": [linear(16, 16)]}),
    "bad-list-length": config_input(DECODER, {"n-layers": 3, "layers": [block(16, 2, 48, 0, False)]}),
    "bad-heads": config_input(DECODER, {"dim": 18, "n-heads": 4}),
    "bad-kv-heads": config_input(DECODER, {"n-heads": 4, "n-kv-heads": 3}),
    "bad-tp-heads": config_input(DECODER, {"dim": 24, "n-heads": 3}),
    "bad-placement-string": config_input(EVERY, {"placement": "tp:S(0)"}),
    "bad-placement": config_input(EVERY, {"placement": {"tp": "X(0)"}}),
    "bad-placement-dim": config_input(EVERY, {"placement": {"tp": "S(99999999999)"}}),
    "bad-placement-axis": config_input(EVERY, {"placement": {"": "R"}}),
    "bad-placement-value": config_input(EVERY, {"placement": {"tp": 0}}),
    "bad-sharding-member": config_input(EVERY, {"sharding": {"shardings": {}}}),
    "bad-sharding-twice": config_input(EVERY, "{\"sharding\": {\"in-src-shardings\": {}, "
                                              "\"in_src_shardings\": {}}}"),
    "bad-sharding-map": config_input(EVERY, {"sharding": {"state-shardings": []}}),
    "bad-sharding-null-entry": config_input(EVERY, {"sharding": {"state-shardings": {"w": None}}}),
    "bad-sharding-empty-name": config_input(EVERY, {"sharding": {"in-dst-shardings": {"": {}}}}),
    "bad-sharding-outputs": config_input(EVERY, {"sharding": {"out-dst-shardings": None}}),
    "bad-sharding-output-item": config_input(EVERY, {"sharding": {"out-src-shardings": [None, 3]}}),
    "bad-local-map": config_input(EVERY, {"local-map": {"callable": "f"}}),
    "bad-local-map-path": config_input(EVERY, {"local-map": {"callable-path": 1}}),
    "bad-local-map-inputs": config_input(EVERY, {"local-map": {"in-placements": None}}),
    "bad-local-map-grads": config_input(EVERY, {"local-map": {"in-grad-placements": {}}}),
    "bad-param-init-string": config_input(LINEAR, {"param-init": "weight=zeros"}),
    "bad-param-init": config_input(LINEAR, {"param-init": {"weight": "gaussian"}}),
    "bad-param-init-name": config_input(LINEAR, {"param-init": {"": "zeros"}}),
    "bad-initializer": config_input(EVERY, {"init": "normal(std=-1)"}),
    "bad-initializer-type": config_input(EVERY, {"init": 0}),
}

# Field, type and value names of the configuration JSON, which the
# dictionary gives as JSON strings; then tokens it gives as they are
CONFIG_JSON_WORDS = sorted({
    "@type", "inf", "-inf", "18446744073709551615", "9223372036854775808",
    # types
    "HpConfig", "HpModuleConfig", "HpBaseModelConfig", "HpDecoderConfig", "HpEmbeddingConfig",
    "HpTransformerBlockConfig", "HpGQAttentionConfig", "HpLinearConfig", "HpRotaryEmbeddingConfig",
    "HpSDPAConfig", "HpFeedForwardConfig", "HpRMSNormConfig", "HpParallelDims", "HpOptimizerConfig",
    "HpAdamWConfig", "HpSGDConfig", "FuzzEveryConfig", "HpShardingConfig", "HpLocalMapConfig",
    # fields
    "param-init", "sharding-config", "dim", "n-layers", "n-heads", "n-kv-heads", "vocab-size",
    "ffn-hidden", "norm-eps", "rope-theta", "max-seq-len", "dtype", "loss-parallel",
    "sequence-parallel", "tok-embeddings", "layers", "norm", "lm-head", "num-embeddings",
    "embedding-dim", "attention", "feed-forward", "attention-norm", "ffn-norm", "wq", "wk", "wv",
    "wo", "rope", "inner-attention", "head-dim", "theta", "causal", "return-lse", "scale",
    "hidden-dim", "w1", "w2", "w3", "in-features", "out-features", "bias", "eps", "lr",
    "weight-decay", "beta1", "beta2", "momentum", "dampening", "nesterov", "dp-replicate",
    "dp-shard", "cp", "tp", "pp", "ep", "dp",
    "flag", "count", "n-items", "offset", "size", "big", "seed", "ratio", "name", "options",
    "tags", "child", "module", "items", "placement", "sharding", "local-map", "init",
    "state-shardings", "in-src-shardings", "in-dst-shardings", "out-src-shardings",
    "out-dst-shardings", "callable-path", "in-placements", "out-placements", "in-grad-placements",
    "weight", "input", "x", "ids",
    # values
    "float32", "float64", "int64", "alpha", "beta", "gamma",
    "S(0)", "S(-1)", "R", "P(sum)", "P(max)", "Shard(dim=1)", "Partial(reduce_op=avg)",
    "zeros", "ones", "constant(value=0.5)", "normal(mean=0, std=0.02)",
    "trunc_normal(mean=0, std=0.02, a=-2, b=2)", "uniform(a=-0.1, b=0.1)",
    "depth_scaled_normal(std=0.02, depth=3)",
})


CONFIG_JSON_TOKENS = [
    "{", "}", "[", "]", ": ", ", ", "null", "true", "false", "/*", "*/", "'",
    "\\u0000", "\\ud83d\\ude00", "\\ud800", "\\n", "-0", "1.0e-05", "5e-324", "3.4028235e+38",
    "1e39", "9223372036854775807", "-9223372036854775809", "4294967296",
    "\"@type\": \"", "\": {", "\": [", "\": \"", "\": null", "\": true", "\": 0", "\": -1",
    "\": 1.5e+300",
]


def dict_line(token):
    """A libFuzzer dictionary line for @token (ASCII)."""
    return '"%s"' % token.replace("\\", "\\\\").replace('"', '\\"')


def config_json_dict():
    lines = ["# libFuzzer dictionary of fuzz-config-json, written by make-seeds.py"]
    lines += [dict_line(json.dumps(word)) for word in CONFIG_JSON_WORDS]
    lines += [dict_line(token) for token in CONFIG_JSON_TOKENS]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------
# fuzz-placement: placement text of every parser, whole

PLACEMENT_SEEDS = {
    # valid placements
    "valid-shard": b"S(0)",
    "valid-shard-negative": b"S(-1)",
    "valid-shard-long": b"Shard(dim=2)",
    "valid-shard-spaces": b"  Shard ( dim = 3 )  ",
    "valid-shard-max": b"S(2147483647)",
    "valid-shard-min": b"S(-2147483648)",
    "valid-replicate": b"R",
    "valid-replicate-long": b"Replicate()",
    "valid-partial": b"P",
    "valid-partial-empty": b"P()",
    "valid-partial-long": b"Partial(reduce_op=max)",
    "valid-partial-ops": b"P(avg)",
    # valid lists
    "valid-list": b"(S(0), R)",
    "valid-list-brackets": b"[S(0), P(product), R]",
    "valid-list-bare": b"S(1), Replicate(), Partial(min)",
    "valid-list-trailing-comma": b"(S(0),)",
    "valid-list-empty": b"()",
    "valid-list-empty-brackets": b"[]",
    # valid named placements, reduce ops and axis names
    "valid-named": b"tp:S(0), dp:R",
    "valid-named-names": b"dp_shard: Shard(dim=-2) , my.axis-1:P(sum),ep:R",
    "valid-named-one": b"tp:P(max)",
    "valid-blank": b"   ",
    "valid-empty": b"",
    "valid-reduce-op": b"product",
    "valid-axis": b"dp_replicate",
    "valid-axis-efsdp": b"efsdp",
    # broken
    "bad-name": b"X(0)",
    "bad-case": b"s(0)",
    "bad-shard-no-dim": b"S",
    "bad-shard-empty": b"S()",
    "bad-shard-text": b"S(x)",
    "bad-shard-float": b"S(1.5)",
    "bad-shard-big": b"S(2147483648)",
    "bad-shard-huge": b"S(-99999999999999999999999)",
    "bad-shard-minus": b"S(-)",
    "bad-shard-keyword": b"Shard(axis=0)",
    "bad-shard-two-equals": b"S(dim=dim=0)",
    "bad-replicate-arg": b"R(0)",
    "bad-partial-op": b"P(mean)",
    "bad-partial-keyword": b"Partial(op=sum)",
    "bad-nested": b"S((0))",
    "bad-unclosed": b"S(0",
    "bad-trailing": b"S(0)x",
    "bad-unbalanced": b"(S(0), R",
    "bad-close-first": b")S(0)(",
    "bad-brackets": b"[S(0), R",
    "bad-bracket-only": b"[",
    "bad-list-blank-item": b"(S(0), , R)",
    "bad-list-item": b"(S(0), Q)",
    "bad-named-no-colon": b"tp S(0)",
    "bad-named-empty-axis": b":S(0)",
    "bad-named-bad-axis": b"t p:S(0)",
    "bad-named-twice": b"tp:S(0), tp:R",
    "bad-named-empty-entry": b"tp:S(0),,dp:R",
    "bad-named-placement": b"tp:S(zero)",
    "bad-named-parentheses": b"tp:S(0)), dp:(R",
    "bad-reduce-op-case": b"SUM",
    "bad-axis-case": b"TP",
    "bad-not-utf8": b"S(\xff)",
    "bad-not-utf8-axis": b"t\xc3\x28:R",
    "bad-not-utf8-alone": b"\xfe\xff",
    "valid-nul-ends-text": b"R\x00junk",
    "bad-control": b"S(\x01)",
}


# ------------------------------------------------------------------
# fuzz-initializer: initialiser and param-init text, whole

INITIALIZER_SEEDS = {
    # valid initialisers
    "valid-zeros": b"zeros",
    "valid-ones-parentheses": b"ones()",
    "valid-constant": b"constant(value=0.5)",
    "valid-normal": b"normal(mean=0, std=0.02)",
    "valid-normal-defaults": b"normal",
    "valid-normal-order": b" normal ( std = 1e-3 , mean = -2 ) ",
    "valid-trunc-normal": b"trunc_normal(mean=0, std=0.02, a=-2, b=2)",
    "valid-uniform": b"uniform(a=-0.1, b=0.1)",
    "valid-uniform-wide": b"uniform(a=-1e308, b=1e308)",
    "valid-depth-scaled": b"depth_scaled_normal(std=0.02, depth=3)",
    "valid-depth-max": b"depth_scaled_normal(depth=4294967295)",
    "valid-numbers": b"trunc_normal(mean=-0, std=5e-324, a=-1.7976931348623157e308, b=0x1p3)",
    "valid-std-zero": b"trunc_normal(mean=5, std=0, a=-1, b=1)",
    # valid param inits
    "valid-param-init": b"weight=normal(mean=0, std=0.02); bias=zeros",
    "valid-param-init-names": b" layers.0.w_1-a = ones ;x=constant(value=-1e-300)",
    "valid-param-init-empty": b"",
    # broken initialisers
    "bad-kind": b"gaussian",
    "bad-kind-case": b"Normal",
    "bad-no-parenthesis": b"normal std=1",
    "bad-unclosed": b"normal(std=1",
    "bad-nested": b"normal((std=1))",
    "bad-trailing": b"normal(std=1)x",
    "bad-args-zeros": b"zeros(value=1)",
    "bad-not-keyword": b"constant(0.5)",
    "bad-unknown-arg": b"normal(sigma=1)",
    "bad-arg-twice": b"normal(std=1, std=2)",
    "bad-missing-value": b"constant",
    "bad-empty-arg": b"normal(std=1,)",
    "bad-number": b"normal(std=abc)",
    "bad-infinite": b"normal(mean=1e999)",
    "bad-nan": b"constant(value=nan)",
    "bad-inf-text": b"constant(value=inf)",
    "bad-negative-std": b"normal(std=-1)",
    "bad-bounds": b"uniform(a=1, b=1)",
    "bad-trunc-bounds": b"trunc_normal(a=2, b=-2)",
    "bad-depth-negative": b"depth_scaled_normal(depth=-1)",
    "bad-depth-float": b"depth_scaled_normal(depth=1.5)",
    "bad-depth-big": b"depth_scaled_normal(depth=4294967296)",
    # broken param inits
    "bad-param-init-no-equals": b"weight normal",
    "bad-param-init-empty-name": b"=zeros",
    "bad-param-init-bad-name": b"we ight=zeros",
    "bad-param-init-twice": b"w=zeros; w=ones",
    "bad-param-init-empty-entry": b"w=zeros;;b=ones",
    "bad-param-init-initializer": b"w=normal(std=-1)",
    "bad-not-utf8": b"normal(std=\xff)",
    "bad-not-utf8-name": b"\xc3\x28=zeros",
    "valid-nul-ends-text": b"zeros\x00(value=1)",
}


def write_corpus(name, seeds, suffix):
    out_dir = os.path.join(HERE, "corpus", name)
    os.makedirs(out_dir, exist_ok=True)
    for seed, data in seeds.items():
        with open(os.path.join(out_dir, seed + suffix), "wb") as out:
            out.write(data)


def main():
    write_corpus("safetensors", SAFETENSORS_SEEDS, ".safetensors")
    write_corpus("config-json", CONFIG_JSON_SEEDS, ".json")
    write_corpus("placement", PLACEMENT_SEEDS, ".txt")
    write_corpus("initializer", INITIALIZER_SEEDS, ".txt")
    with open(os.path.join(HERE, "config-json.dict"), "w") as out:
        out.write(config_json_dict())


if __name__ == "__main__":
    main()
