#!/usr/bin/env python3
# test-hp-train.py: the main job's loss curve is the same on 1 rank,
# on 2 ranks (tp 2, dp 2, fsdp 2) and on 4 ranks (dp 2 x tp 2, fsdp 2 x
# tp 2, dp 2 x fsdp 2); bad input gives one
# line on rank 0 and a non-zero exit on every rank.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: test-hp-train.py HP_TRAIN (TAP on stdout)

import functools
import hashlib
import json
import os
import re
import shutil
import struct
import sys
import tempfile

from hptrain import check, loss_lines, report
import hptrain

HP_TRAIN = sys.argv[1]
STEPS = 20


def mpirun(np, *args, env=None):
    return hptrain.mpirun(HP_TRAIN, np, args, env=env)


def losses(run):
    return [float(loss) for loss in loss_lines(run.stdout)]


common = ["--steps", str(STEPS), "--log-every", "1", "--seed", "7"]
one = mpirun(1, *common)
check("1 rank runs", one.returncode == 0, one.stderr)
reference = losses(one)
check("1 rank logs every step", len(reference) == STEPS, one.stdout)
check("the loss falls", len(reference) == STEPS and reference[-1] < reference[0] - 0.2,
      str(reference))

for np, extra in ((2, ["--tp", "2"]), (4, ["--dp", "2", "--tp", "2"]), (2, ["--dp", "2"]),
                  (2, ["--fsdp", "2"]), (4, ["--fsdp", "2", "--tp", "2"]),
                  (4, ["--dp", "2", "--fsdp", "2"]),
                  (2, ["--fsdp", "2", "--fsdp-reshard-after-forward", "false"]),
                  (2, ["--fsdp", "2", "--fsdp-prefetch", "off"])):
    run = mpirun(np, *common, *extra)
    curve = losses(run)
    same = (run.returncode == 0 and len(curve) == STEPS and
            all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(curve, reference)))
    check(f"{np} ranks {' '.join(extra)} give the same losses", same,
          run.stderr + "\n" + str(curve) + "\n" + str(reference))
    check(f"{np} ranks {' '.join(extra)}: one line per step, from rank 0 only",
          len(re.findall(r"^step +1/", run.stdout, re.M)) == 1, run.stdout)

# Activation checkpointing recomputes the blocks' activations in the
# backward: the same ops in the same order, so the very same losses, on
# one rank and under tensor parallelism; the header names the mode
for np, extra in ((1, []), (2, ["--tp", "2"])):
    plain = one if np == 1 else mpirun(np, *common, *extra)
    for mode in ("full", "every-2"):
        run = mpirun(np, *common, *extra, "--ac", mode)
        check(f"{np} ranks {' '.join(extra)} --ac {mode} gives the losses without it",
              run.returncode == 0 and plain.returncode == 0 and
              loss_lines(run.stdout) == loss_lines(plain.stdout) and
              len(loss_lines(run.stdout)) == STEPS,
              run.stderr + "\n" + str(losses(run)) + "\n" + str(losses(plain)))
        check(f"{np} ranks --ac {mode}: the header names it",
              f"activation checkpointing {mode}\n" in run.stdout, run.stdout)
check("without --ac the header says none", "activation checkpointing none\n" in one.stdout,
      one.stdout)

# The same job with the ranks agreeing before every collective (every
# kind the job makes: mesh making and slicing, distributing the weights,
# redistributions, the loss, data parallelism): no false mismatch, the
# same losses
debug = mpirun(4, *common, "--dp", "2", "--tp", "2", env=dict(os.environ, HP_DEBUG="collectives"))
debug_reference = mpirun(4, *common, "--dp", "2", "--tp", "2")
check("HP_DEBUG=collectives finds no mismatch in dp 2 x tp 2",
      debug.returncode == 0 and losses(debug) == losses(debug_reference) and
      len(losses(debug)) == STEPS,
      debug.stderr + "\n" + str(losses(debug)) + "\n" + str(losses(debug_reference)))


expect_error = functools.partial(hptrain.expect_error, HP_TRAIN)


expect_error("heads not divisible by tp", 2,
             ["--tp", "2", "--set", "layers.0.attention.n-heads=3", "--set",
              "layers.0.attention.n-kv-heads=3"],
             "layers.0.attention.n-heads")
expect_error("--set path that does not exist", 2, ["--tp", "2", "--set", "layers.5.dim=3"],
             "layers.5")
expect_error("--ac with an unknown mode", 2, ["--ac", "sometimes"],
             "--ac sometimes: expected none, full or every-K")
expect_error("--ac every-0", 2, ["--ac", "every-0"], "--ac every-0: expected none, full or every-K")
expect_error("--ac every-K past the last layer", 2, ["--ac", "every-3"],
             "ac-every: 3 is more than n-layers 2")
expect_error("--set value of the wrong type", 2, ["--set", "dim=wide"], "dim")
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as bad:
    bad.write('{"@type": "HpDecoderConfig", "dim": 64, "heads": 4}')
try:
    expect_error("--config with an unknown member", 2, ["--config", bad.name], "heads")
finally:
    os.unlink(bad.name)
expect_error("ranks that do not fit tp x dp", 2, ["--tp", "4"], "world size")
expect_error("--tp that does not divide the ranks", 2, ["--tp", "3"],
             "--tp 3 does not divide world size 2")
expect_error("--dp x --tp that is not the ranks", 2, ["--dp", "2", "--tp", "2"],
             "!= world size 2")
expect_error("--fsdp x --tp that does not divide the ranks", 2, ["--fsdp", "2", "--tp", "2"],
             "--fsdp 2 x --tp 2 does not divide world size 2")
expect_error("--dp x --fsdp that is not the ranks", 2, ["--dp", "2", "--fsdp", "2"],
             "!= world size 2")
expect_error("--fsdp 0", 2, ["--fsdp", "0"], "--fsdp")
expect_error("--fsdp-reshard-after-forward maybe", 2,
             ["--fsdp", "2", "--fsdp-reshard-after-forward", "maybe"],
             "--fsdp-reshard-after-forward takes true or false")
expect_error("--fsdp-prefetch sometimes", 2, ["--fsdp", "2", "--fsdp-prefetch", "sometimes"],
             "--fsdp-prefetch on or off")
for value, message in (("nan", "--lr: NaN is not allowed"),
                       ("inf", "--lr: value inf out of range"),
                       ("-inf", "--lr: value -inf out of range"),
                       ("-0.5", "--lr: value -0.5 out of range")):
    expect_error(f"--lr {value}", 2, ["--lr", value], message)
expect_error("--set of a float field to NaN", 1, ["--set", "norm-eps=nan"],
             "--set norm-eps: expected a number (or inf, -inf), got 'nan'")
expect_error("--set of a float field to infinity", 1, ["--set", "rope-theta=inf"],
             "rope-theta: value inf out of range")

printed = mpirun(1, "--print-config", "--set", "layers.1.attention.n-heads=2",
                 "--set", "layers.1.attention.n-kv-heads=2")
try:
    config = json.loads(printed.stdout)
    heads = [layer["attention"]["n-heads"] for layer in config["layers"]]
except (ValueError, KeyError, TypeError):
    heads = None
check("--print-config prints the configuration with the --set fields",
      printed.returncode == 0 and heads == [4, 2], printed.stdout + printed.stderr)

# --save / --load: resuming continues the exact curve, and any number of
# ranks writes the same files
with tempfile.TemporaryDirectory() as tmp:
    half = os.path.join(tmp, "half")
    first = mpirun(1, "--steps", "10", "--log-every", "1", "--seed", "7", "--save", half)
    rest = mpirun(1, *common, "--load", half)
    resumed = losses(first) + losses(rest)
    check("save after 10 steps, load and train 10 more: the same 20 losses",
          first.returncode == 0 and rest.returncode == 0 and resumed == reference,
          first.stderr + rest.stderr + "\n" + str(resumed) + "\n" + str(reference))
    step10 = os.path.join(half, "step-10")
    files = ("config.json", "hp-config.json", "model.safetensors", "optimizer.safetensors",
             "manifest.json")
    for np, extra in ((2, ["--tp", "2"]), (4, ["--dp", "2", "--tp", "2"])):
        again = os.path.join(tmp, f"np{np}")
        run = mpirun(np, *extra, "--steps", "10", "--seed", "7", "--load", half, "--save", again)
        same = run.returncode == 0 and all(
            open(os.path.join(step10, f), "rb").read() ==
            open(os.path.join(again, "step-10", f), "rb").read() for f in files)
        check(f"{np} ranks {' '.join(extra)} load and save the same files", same, run.stderr)
    # FSDP: the 1-rank checkpoint resumes on 4 ranks --fsdp 4 on the same
    # curve, and a checkpoint --fsdp 4 saves loads on one rank
    resumed_fsdp = mpirun(4, "--fsdp", "4", *common, "--load", half)
    curve = losses(resumed_fsdp)
    check("4 ranks --fsdp 4 resume the 1-rank checkpoint on the same curve",
          resumed_fsdp.returncode == 0 and len(curve) == 10 and
          all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(curve, reference[10:])),
          resumed_fsdp.stderr + "\n" + str(curve))
    sharded = os.path.join(tmp, "fsdp4")
    run = mpirun(4, "--fsdp", "4", "--steps", "10", "--log-every", "1", "--seed", "7",
                 "--save", sharded)
    rest = mpirun(1, *common, "--load", sharded)
    check("a checkpoint saved on 4 ranks --fsdp 4 loads on 1 rank and goes on on the curve",
          run.returncode == 0 and rest.returncode == 0 and len(losses(rest)) == 10 and
          all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(losses(rest), reference[10:])),
          run.stderr + rest.stderr + "\n" + str(losses(rest)))
    check("4 ranks --fsdp 4 save the files of 1 rank (the weights within rounding)",
          run.returncode == 0 and all(os.path.exists(os.path.join(sharded, "step-10", f))
                                      for f in files), run.stderr)
    resumed_tp = mpirun(2, "--tp", "2", *common, "--load", half)
    curve = losses(resumed_tp)
    check("2 ranks --tp 2 resume the 1-rank checkpoint on the same curve",
          resumed_tp.returncode == 0 and len(curve) == 10 and
          all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(curve, reference[10:])),
          resumed_tp.stderr + "\n" + str(curve))
    expect_error("--load of a directory without a checkpoint", 1, ["--load", tmp],
                 "no checkpoint: neither a step (with manifest.json), a folder of complete "
                 "step-N directories, nor a Hugging Face directory (with config.json)")

    # config.json is Hugging Face's; a directory of its files alone loads
    with open(os.path.join(step10, "config.json"), encoding="utf-8") as f:
        hf = json.load(f)
    with open(os.path.join(step10, "hp-config.json"), encoding="utf-8") as f:
        hp = json.load(f)
    pairs = {"hidden_size": "dim", "num_hidden_layers": "n-layers",
             "num_attention_heads": "n-heads", "vocab_size": "vocab-size",
             "max_position_embeddings": "max-seq-len", "rms_norm_eps": "norm-eps",
             "rope_theta": "rope-theta"}
    check("the saved config.json is a Hugging Face Llama configuration",
          hf.get("model_type") == "llama" and hf.get("architectures") == ["LlamaForCausalLM"]
          and all(hf.get(key) == hp[field] for key, field in pairs.items())
          and hf.get("num_key_value_heads") == (hp["n-kv-heads"] or hp["n-heads"])
          and hf.get("head_dim") == hp["dim"] // hp["n-heads"]
          and hf.get("tie_word_embeddings") is False and hf.get("torch_dtype") == "float32",
          json.dumps(hf))
    hf_only = os.path.join(tmp, "hf")
    os.mkdir(hf_only)
    for name in ("config.json", "model.safetensors"):
        with open(os.path.join(step10, name), "rb") as src, \
                open(os.path.join(hf_only, name), "wb") as dst:
            dst.write(src.read())
    runs = [mpirun(np, *extra, "--steps", "3", "--log-every", "1", "--seed", "7",
                   "--load", hf_only) for np, extra in ((1, []), (2, ["--tp", "2"]))]
    curves = [losses(run) for run in runs]
    check("a Hugging Face directory alone loads, on 1 rank and tp 2 alike",
          all(run.returncode == 0 and "with a new optimizer" in run.stdout for run in runs)
          and len(curves[0]) == 3 and curves[0][0] < reference[0] - 0.2
          and all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(curves[1], curves[0])),
          "".join(run.stdout + run.stderr for run in runs))
    hf["sliding_window"] = 4096
    with open(os.path.join(hf_only, "config.json"), "w", encoding="utf-8") as f:
        json.dump(hf, f)
    expect_error("a Hugging Face setting the decoder does not have", 1, ["--load", hf_only],
                 "HF config: unknown key 'sliding_window'")
    expect_error("--save of layers that a Hugging Face config.json cannot describe", 1,
                 ["--set", "layers.1.attention.n-heads=2", "--set", "layers.1.attention.n-kv-heads=2",
                  "--save", os.path.join(tmp, "uneven")],
                 "--save: layers.1.attention.n-heads: 2, but the decoder's fields give 4")
    check("... and nothing was saved", not os.path.exists(os.path.join(tmp, "uneven")))
    expect_error("--load with --set", 1, ["--load", half, "--set", "dim=32"],
                 "--set dim=32: --load resumes the model of the checkpoint")
    past = mpirun(2, "--tp", "2", "--steps", "4", "--load", half)
    check("--load of a step-10 checkpoint with --steps 4 says so and trains nothing",
          past.returncode == 0 and "is at step 10, and --steps is 4: nothing to train" in past.stdout
          and not losses(past) and "nan" not in past.stdout and "WARNING" not in past.stderr,
          past.stdout + past.stderr)

# Checkpoint folders: step-N directories with a manifest, --save-every,
# --keep; --load takes the newest complete step, verified
with tempfile.TemporaryDirectory() as tmp:
    folder = os.path.join(tmp, "ck")
    saving = mpirun(2, "--tp", "2", *common[2:], "--steps", "10", "--save-every", "4",
                    "--keep", "2", "--save", folder)
    check("--save-every 4 --keep 2 leaves step-8 and step-10 alone in the folder",
          saving.returncode == 0 and sorted(os.listdir(folder)) == ["step-10", "step-8"] and
          saving.stdout.count("hp-train: saved") == 3, saving.stdout + saving.stderr)
    step10 = os.path.join(folder, "step-10")
    with open(os.path.join(step10, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    listed = {entry["name"]: entry for entry in manifest["files"]}
    on_disk = sorted(name for name in os.listdir(step10) if name != "manifest.json")

    def matches(name):
        with open(os.path.join(step10, name), "rb") as f:
            data = f.read()
        return (listed[name]["size"] == len(data) and
                listed[name]["sha256"] == hashlib.sha256(data).hexdigest())
    check("the manifest lists every file of the step with its size and SHA-256, and the step",
          manifest["format"] == "hp-checkpoint" and manifest["step"] == 10 and
          sorted(listed) == on_disk and all(matches(name) for name in on_disk),
          json.dumps(manifest))
    rest = mpirun(1, *common, "--load", folder)
    explicit = mpirun(1, *common, "--load", os.path.join(folder, "step-8"))
    check("--load of the folder resumes its newest step on the 1-rank curve",
          rest.returncode == 0 and "after step 10" in rest.stdout and
          all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(losses(rest), reference[10:])) and
          len(losses(rest)) == 10, rest.stdout + rest.stderr)
    check("--load of DIR/step-8 resumes that step",
          explicit.returncode == 0 and "after step 8" in explicit.stdout and
          len(losses(explicit)) == 12 and
          all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(losses(explicit), reference[8:])),
          explicit.stdout + explicit.stderr)

    # a save that never finished and a hand-made step-12 without a
    # manifest: neither is taken
    os.mkdir(os.path.join(folder, ".step-12.tmp-abcdef"))
    os.mkdir(os.path.join(folder, "step-12"))
    shutil.copy(os.path.join(step10, "model.safetensors"), os.path.join(folder, "step-12"))
    newest = mpirun(1, *common, "--load", folder)
    check("an incomplete step is never chosen",
          newest.returncode == 0 and "resumed from " + step10 + " after step 10" in newest.stdout,
          newest.stdout + newest.stderr)
    expect_error("a step directory without its manifest is refused", 1,
                 ["--load", os.path.join(folder, "step-12")],
                 "manifest.json: missing: " + os.path.join(folder, "step-12") +
                 " is not a complete checkpoint")
    expect_error("--save into a folder that holds a later step", 1,
                 ["--steps", "12", "--load", os.path.join(folder, "step-8"), "--save", folder],
                 f"--save {folder} holds step 10, and this run starts after step 8")
    expect_error("--keep without --save", 1, ["--keep", "2"], "--keep tells how to save")
    expect_error("--save-every below 0", 1, ["--save-every", "-1", "--save", folder],
                 "--save-every, --keep and --eval-every not negative")
    # a hand-mixed step: the optimizer of step 8 in step 10
    shutil.copy(os.path.join(folder, "step-8", "optimizer.safetensors"), step10)
    expect_error("a hand-mixed step is refused, naming the file", 2,
                 ["--tp", "2", *common, "--load", folder],
                 os.path.join(step10, "optimizer.safetensors") +
                 ": its SHA-256 differs from the one")
    os.remove(os.path.join(step10, "config.json"))
    expect_error("a step missing a file is refused, naming it", 1, ["--load", step10],
                 os.path.join(step10, "config.json") + ": missing, but listed in")

# A tied decoder (--set tie-word-embeddings=true) trains on tp 2 as on
# 1 rank, saves its table once (no lm_head.weight, as transformers
# writes it) and resumes on the exact curve, from hp's checkpoint and
# from the Hugging Face files alone
tied = ["--set", "tie-word-embeddings=true"]
with tempfile.TemporaryDirectory() as tmp:
    tied_one = mpirun(1, *common, *tied)
    tied_reference = losses(tied_one)
    check("a tied decoder trains", tied_one.returncode == 0 and len(tied_reference) == STEPS
          and tied_reference[-1] < tied_reference[0] - 0.2, tied_one.stderr + str(tied_reference))
    tied_tp = mpirun(2, "--tp", "2", *common, *tied)
    curve = losses(tied_tp)
    check("a tied decoder gives the same losses on tp 2",
          tied_tp.returncode == 0 and len(curve) == STEPS and
          all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(curve, tied_reference)),
          tied_tp.stderr + "\n" + str(curve) + "\n" + str(tied_reference))
    half = os.path.join(tmp, "tied")
    first = mpirun(1, "--steps", "10", "--log-every", "1", "--seed", "7", *tied, "--save", half)
    rest = mpirun(1, *common, "--load", half)
    check("a tied decoder saved after 10 steps resumes on the same 20 losses",
          first.returncode == 0 and rest.returncode == 0
          and losses(first) + losses(rest) == tied_reference,
          first.stderr + rest.stderr + "\n" + str(losses(first) + losses(rest)))
    resumed_tp = mpirun(2, "--tp", "2", *common, "--load", half)
    curve = losses(resumed_tp)
    check("... and on tp 2",
          resumed_tp.returncode == 0 and len(curve) == 10 and
          all(abs(a - b) <= 1e-4 * abs(b) for a, b in zip(curve, tied_reference[10:])),
          resumed_tp.stderr + "\n" + str(curve))
    step10 = os.path.join(half, "step-10")
    with open(os.path.join(step10, "model.safetensors"), "rb") as f:
        header_size = int.from_bytes(f.read(8), "little")
        names = set(json.loads(f.read(header_size))) - {"__metadata__"}
    with open(os.path.join(step10, "config.json"), encoding="utf-8") as f:
        hf = json.load(f)
    with open(os.path.join(step10, "hp-config.json"), encoding="utf-8") as f:
        hp = json.load(f)
    check("the tied checkpoint holds the table once, as model.embed_tokens.weight",
          "model.embed_tokens.weight" in names and "lm_head.weight" not in names
          and hf.get("tie_word_embeddings") is True and hp.get("tie-word-embeddings") is True,
          str(sorted(names)) + json.dumps(hf))
    hf_only = os.path.join(tmp, "hf")
    os.mkdir(hf_only)
    for name in ("config.json", "model.safetensors"):
        with open(os.path.join(step10, name), "rb") as src, \
                open(os.path.join(hf_only, name), "wb") as dst:
            dst.write(src.read())
    run = mpirun(2, "--tp", "2", "--steps", "3", "--log-every", "1", "--seed", "7", "--load", hf_only)
    curve = losses(run)
    check("the tied Hugging Face files alone load, on tp 2",
          run.returncode == 0 and "with a new optimizer" in run.stdout and len(curve) == 3
          and curve[0] < tied_reference[0] - 0.2, run.stdout + run.stderr)


def safetensors_header(path):
    """The JSON header of a safetensors file, __metadata__ left out"""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    header.pop("__metadata__", None)
    return header


# --save-dtype: the weights in that dtype, config.json says so, the
# optimizer state stays as trained, and --load resumes from them
with tempfile.TemporaryDirectory() as tmp:
    low = os.path.join(tmp, "bf16")
    saved = mpirun(1, "--steps", "10", "--seed", "7", "--save", low, "--save-dtype", "bf16")
    ok = saved.returncode == 0
    low10 = os.path.join(low, "step-10")
    weights, optimizer, torch_dtype = {}, {}, None
    if ok:
        weights = safetensors_header(os.path.join(low10, "model.safetensors"))
        optimizer = safetensors_header(os.path.join(low10, "optimizer.safetensors"))
        with open(os.path.join(low10, "config.json"), encoding="utf-8") as f:
            torch_dtype = json.load(f).get("torch_dtype")
    check("--save-dtype bf16 writes the weights in BF16 and config.json says bfloat16",
          ok and weights and all(t["dtype"] == "BF16" for t in weights.values())
          and torch_dtype == "bfloat16", saved.stderr + json.dumps(weights)[:300])
    check("... and the optimizer state in the training dtype",
          optimizer and not any(t["dtype"] in ("BF16", "F16") for t in optimizer.values()),
          json.dumps(optimizer)[:300])
    rest = mpirun(1, *common, "--load", low)
    curve = losses(rest)
    # the weights rounded to bfloat16 move the curve a little (3e-4 here)
    check("--load of a bf16 checkpoint resumes after step 10, near the f32 curve",
          rest.returncode == 0 and "resumed from" in rest.stdout and len(curve) == 10
          and all(abs(a - b) <= 2e-3 * abs(b) for a, b in zip(curve, reference[10:])),
          rest.stdout + rest.stderr + "\n" + str(curve) + "\n" + str(reference[10:]))
    for value in ("bfloat16", "f8"):
        unknown = os.path.join(tmp, value)
        expect_error(f"--save-dtype {value}", 1, ["--save", unknown, "--save-dtype", value],
                     f"--save-dtype: unknown safetensors dtype '{value}' "
                     "(expected one of as-is, bf16, f16, f32, f64)")
        check(f"--save-dtype {value}: exit status 1, nothing saved",
              mpirun(1, "--save", unknown, "--save-dtype", value).returncode == 1
              and not os.path.exists(unknown))
    expect_error("--save-dtype without --save", 1, ["--save-dtype", "f16"],
                 "--save-dtype f16: there is no --save DIR to write")

# Pipeline parallelism: the blocks split into stages (--pp), GPipe or
# 1F1B over microbatches, alone and with tp or dp: the 1-rank curve; a
# checkpoint is the same files in any layout and resumes in any other
for np, extra in ((2, ["--pp", "2"]), (2, ["--pp", "2", "--pp-schedule", "gpipe"]),
                  (2, ["--pp", "2", "--microbatches", "4"]),
                  (4, ["--pp", "2", "--tp", "2"]), (4, ["--pp", "2", "--tp", "2", "--pp-schedule", "gpipe"]),
                  (4, ["--pp", "2", "--dp", "2"]), (4, ["--pp", "2", "--dp", "2", "--ac", "full"]),
                  (4, ["--pp", "2", "--fsdp", "2"])):
    run = mpirun(np, *common, *extra)
    curve = losses(run)
    check(f"{np} ranks {' '.join(extra)} give the 1-rank losses",
          run.returncode == 0 and len(curve) == STEPS and
          all(abs(a - b) <= 1e-5 * abs(b) for a, b in zip(curve, reference)),
          run.stderr + "\n" + str(curve) + "\n" + str(reference))
layout = mpirun(4, *common, "--pp", "2", "--tp", "2", "--microbatches", "4")
check("the header shows the pipeline layout",
      "4 ranks (pp 2 x dp 1 x tp 2, 1f1b, 4 microbatches)" in layout.stdout, layout.stdout)
with tempfile.TemporaryDirectory() as tmp:
    half = os.path.join(tmp, "half")
    first = mpirun(1, "--steps", "10", "--log-every", "1", "--seed", "7", "--save", half)
    staged = os.path.join(tmp, "staged")
    run = mpirun(2, "--pp", "2", "--steps", "10", "--seed", "7", "--load", half, "--save", staged)
    files = ("config.json", "hp-config.json", "model.safetensors", "optimizer.safetensors")
    check("--pp 2 loads a 1-rank checkpoint and saves the same files",
          first.returncode == 0 and run.returncode == 0 and all(
              open(os.path.join(half, "step-10", f), "rb").read() ==
              open(os.path.join(staged, "step-10", f), "rb").read() for f in files),
          first.stderr + run.stderr)
    for np, extra in ((2, ["--pp", "2"]), (4, ["--pp", "2", "--tp", "2", "--pp-schedule", "gpipe"])):
        rest = mpirun(np, *extra, *common, "--load", half)
        curve = losses(rest)
        check(f"{np} ranks {' '.join(extra)} resume the 1-rank checkpoint on its curve",
              rest.returncode == 0 and len(curve) == 10 and
              all(abs(a - b) <= 1e-5 * abs(b) for a, b in zip(curve, reference[10:])),
              rest.stderr + "\n" + str(curve))
    for np, extra in ((2, ["--pp", "2"]), (4, ["--pp", "2", "--fsdp", "2"])):
        pp_half = os.path.join(tmp, "pp-half-%d" % np)
        saved = mpirun(np, *extra, "--steps", "10", "--log-every", "1", "--seed", "7",
                       "--save", pp_half)
        rest = mpirun(1, *common, "--load", pp_half)
        check(f"a checkpoint saved with {' '.join(extra)} resumes on 1 rank on the same curve",
              saved.returncode == 0 and rest.returncode == 0 and
              all(abs(a - b) <= 1e-5 * abs(b) for a, b in zip(losses(saved) + losses(rest), reference))
              and len(losses(rest)) == 10,
              saved.stderr + rest.stderr + str(losses(saved) + losses(rest)))

expect_error("--pp with more stages than blocks", 3, ["--pp", "3", "--batch", "12"],
             "HpDecoder: n-layers 2 cannot be split into 3 pipeline stages: every stage needs a block")
expect_error("--microbatches that do not divide a replica's rows", 2,
             ["--pp", "2", "--batch", "6", "--microbatches", "4"],
             "--microbatches 4: a replica's 6 rows of --batch 6 cannot be split into 4 "
             "microbatches of equal size")
expect_error("--pp x --fsdp x --tp that does not divide the ranks", 3, ["--pp", "2", "--fsdp", "2"],
             "--pp 2 x --fsdp 2 x --tp 1 does not divide world size 3")
expect_error("--pp-schedule unknown", 2, ["--pp", "2", "--pp-schedule", "zigzag"],
             "--pp-schedule zigzag: expected gpipe or 1f1b")
expect_error("--pp with tied embeddings", 2, ["--pp", "2", "--set", "tie-word-embeddings=true"],
             "HpDecoder: tie-word-embeddings with 2 pipeline stages")
expect_error("--pp x --tp that does not divide the ranks", 3, ["--pp", "2", "--tp", "1"],
             "--pp 2 x --tp 1 does not divide world size 3")
expect_error("--pp x --dp x --tp that is not the ranks", 4, ["--pp", "2", "--dp", "1", "--tp", "1"],
             "world size 4")

# A diverging run (--lr 1e30: a NaN loss at step 2) stops with one line
# on rank 0 and a non-zero exit, on one rank and through the pipeline,
# whose first stage hears at once that the last failed, and why
for np, extra, message in ((1, [], "the loss is NaN: the training diverged"),
                           (2, ["--pp", "2"], "HpPipelineSchedule: stage 1 failed in this step "
                                              "(HpPipelineSchedule: the loss of microbatch 0 is NaN)")):
    run = mpirun(np, "--steps", "5", "--log-every", "1", "--lr", "1e30", *extra)
    lines = [line for line in run.stderr.splitlines() if line.startswith("hp-train:")]
    check(f"{np} ranks {' '.join(extra)}: a NaN loss stops the run with one clear line",
          run.returncode != 0 and len(lines) == 1 and message in lines[0] and
          "WARNING" not in run.stderr and "CRITICAL" not in run.stderr and len(losses(run)) == 1,
          run.stdout + run.stderr)

# Validation through the pipeline: the forwards of the stages without
# gradients give the 1-rank validation losses (in --metrics, to every
# digit printed there), alone and composed with tp, dp and fsdp, and
# training goes on on the 1-rank curve after each
with tempfile.TemporaryDirectory() as tmp:
    text = os.path.join(tmp, "pipeline.txt")
    with open(text, "w") as f:
        f.write("the pipeline carries the hidden states from stage to stage. " * 40)
    validating = ["--steps", "10", "--log-every", "1", "--seed", "7", "--data", text,
                  "--eval-every", "5", "--eval-batches", "2"]

    def val_curve(np, *extra):
        metrics = os.path.join(tmp, "metrics-%d-%s.jsonl" % (np, "-".join(extra)))
        run = mpirun(np, *validating, *extra, "--metrics", metrics)
        with open(metrics) if os.path.exists(metrics) else open(os.devnull) as f:
            rows = [json.loads(line) for line in f]
        return run, losses(run), [(row["step"], row["val_loss"]) for row in rows if "val_loss" in row]

    _, train_one, val_one = val_curve(1)
    check("1 rank validates at steps 5 and 10", [step for step, _ in val_one] == [5, 10], str(val_one))
    for np, extra in ((2, ["--pp", "2"]), (2, ["--pp", "2", "--pp-schedule", "gpipe", "--microbatches", "4"]),
                      (4, ["--pp", "2", "--tp", "2"]), (4, ["--pp", "2", "--dp", "2"]),
                      (4, ["--pp", "2", "--fsdp", "2"])):
        run, train, val = val_curve(np, *extra)
        check(f"{np} ranks {' '.join(extra)} --eval-every give the 1-rank validation losses",
              run.returncode == 0 and len(val) == len(val_one) == 2 and len(train) == 10 and
              all(s == t and abs(a - b) <= 1e-5 * abs(b) for (s, a), (t, b) in zip(val, val_one)) and
              all(abs(a - b) <= 1e-5 * abs(b) for a, b in zip(train, train_one)),
              run.stderr + "\n" + str(val) + str(val_one))

report()
