#!/usr/bin/env python3
# test-hp-train-data.py: hp-train --data on text and on llm.c token
# shards written here by an independent writer (struct only): the same
# tokens give the same losses whatever file holds them, the validation
# loss is the same on 1, 2 and 4 ranks, a resumed run sees the tokens
# the uninterrupted one saw, --metrics writes JSON lines that the plot
# script draws, and bad data stops every rank with one message.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: test-hp-train-data.py HP_TRAIN PLOT_SCRIPT PYTHON (TAP on stdout), PYTHON
# one with matplotlib to run PLOT_SCRIPT

import functools
import json
import math
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

from hptrain import check, loss_lines, report
import hptrain

HP_TRAIN = sys.argv[1]
PLOT = sys.argv[2]
PLOT_PYTHON = sys.argv[3]
STEPS = 12
COMMON = ["--steps", str(STEPS), "--log-every", "1", "--seed", "3", "--eval-every", "6",
          "--eval-batches", "2"]

# llm.c's two headers: (magic, version, struct code of a token)
U16 = (20240520, 1, "H")
U32 = (20240801, 7, "I")


def write_shard(path, tokens, kind=U16, magic=None, version=None, count=None, cut=0):
    """A shard as llm.c's write_datafile lays it out: 256 little-endian
    int32 (magic, version, token count, zeros), then the tokens; the
    arguments after kind damage it"""
    header = [0] * 256
    header[0] = kind[0] if magic is None else magic
    header[1] = kind[1] if version is None else version
    header[2] = len(tokens) if count is None else count
    data = struct.pack("<256i", *header) + struct.pack(f"<{len(tokens)}{kind[2]}", *tokens)
    with open(path, "wb") as f:
        f.write(data[:len(data) - cut])


def mpirun(np, *args):
    return hptrain.mpirun(HP_TRAIN, np, args)


def losses(run):
    return [float(loss) for loss in loss_lines(run.stdout)]


def val_losses(run):
    return [float(m.group(1)) for m in
            re.finditer(r"^step +\d+/\d+ +val loss ([0-9.]+) +ppl ([0-9.]+)$", run.stdout, re.M)]


def close(a, b):
    return len(a) == len(b) and len(a) > 0 and all(abs(x - y) <= 1e-4 * abs(y) for x, y in zip(a, b))


expect_error = functools.partial(hptrain.expect_error, HP_TRAIN)


# Text with some structure to learn: sentences of a small vocabulary,
# non-ASCII letters included
rand = random.Random(5)
words = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "über", "café", "to",
         "see", "what", "is", "there", "naïve", "bird", "sang"]
text = "".join(" ".join(rand.choice(words) for _ in range(rand.randint(4, 12))).capitalize() +
               ".\n" for _ in range(600))
ids = list(text.encode("utf-8")) + [256]
n_val = math.floor(len(ids) * 0.1)

with tempfile.TemporaryDirectory() as tmp:
    text_file = os.path.join(tmp, "story.txt")
    with open(text_file, "w", encoding="utf-8") as f:
        f.write(text)

    one = mpirun(1, "--data", text_file, *COMMON)
    reference = losses(one)
    reference_val = val_losses(one)
    check("text: 1 rank trains and validates at steps 6 and 12",
          one.returncode == 0 and len(reference) == STEPS and len(reference_val) == 2,
          one.stdout + one.stderr)
    check("text: the loss falls by more than a nat in 12 steps",
          len(reference) == STEPS and reference[-1] < reference[0] - 1.0, str(reference))
    check("text: the perplexity printed is exp(val loss)",
          all(abs(math.exp(float(loss)) - float(ppl)) <= 0.01 * float(ppl) for loss, ppl in
              re.findall(r"val loss ([0-9.]+) +ppl ([0-9.]+)", one.stdout)) and reference_val,
          one.stdout)

    for np, extra in ((2, ["--tp", "2"]), (2, ["--dp", "2"]), (4, ["--dp", "2", "--tp", "2"])):
        run = mpirun(np, "--data", text_file, *COMMON, *extra)
        check(f"text: {np} ranks {' '.join(extra)} give the same train and val losses",
              run.returncode == 0 and close(losses(run), reference) and
              close(val_losses(run), reference_val),
              run.stderr + "\n" + str(losses(run)) + str(val_losses(run)) + "\n" +
              str(reference) + str(reference_val))

    # the same ids in shards of either width: the same curves
    for kind, name in ((U16, "uint16"), (U32, "uint32")):
        shard = os.path.join(tmp, f"story-{name}.bin")
        write_shard(shard, ids, kind)
        run = mpirun(2, "--tp", "2", "--data", shard, *COMMON)
        check(f"a {name} shard of the text's ids trains as the text does",
              run.returncode == 0 and close(losses(run), reference) and
              close(val_losses(run), reference_val), run.stdout + run.stderr)

    # a directory of shards: the training shards in name order, the one
    # named val validating; the same split as --val-fraction 0.1
    shards = os.path.join(tmp, "shards")
    os.mkdir(shards)
    cut = (len(ids) - n_val) // 3
    write_shard(os.path.join(shards, "story_train_000001.bin"), ids[cut:len(ids) - n_val], U32)
    write_shard(os.path.join(shards, "story_train_000000.bin"), ids[:cut])
    write_shard(os.path.join(shards, "story_val_000000.bin"), ids[len(ids) - n_val:])
    for data in (shards, os.path.join(shards, "story_*.bin")):
        run = mpirun(2, "--dp", "2", "--data", data, *COMMON)
        check(f"shards of {os.path.basename(data)}: train in name order, validate on *val*",
              run.returncode == 0 and close(losses(run), reference) and
              close(val_losses(run), reference_val), run.stdout + run.stderr)

    # resume: the data position is in the manifest
    half = os.path.join(tmp, "half")
    first = mpirun(2, "--tp", "2", "--data", text_file, *COMMON, "--steps", "5", "--save", half)
    rest = mpirun(4, "--dp", "2", "--tp", "2", "--data", text_file, *COMMON, "--load", half)
    try:
        with open(os.path.join(half, "step-5", "manifest.json"), encoding="utf-8") as f:
            metadata = json.load(f).get("metadata", {})
    except (OSError, ValueError):
        metadata = {}
    check("the manifest holds the data position and the training tokens",
          metadata.get("data-position") == str(5 * 16 * 32 % (len(ids) - n_val)) and
          metadata.get("data-tokens") == str(len(ids) - n_val), json.dumps(metadata))
    check("save at step 5, load on 4 ranks: the same losses as the run that did not stop",
          first.returncode == 0 and rest.returncode == 0 and
          close(losses(first) + losses(rest), reference) and close(val_losses(rest), reference_val),
          first.stderr + rest.stderr + "\n" + str(losses(first) + losses(rest)))
    expect_error("--load of a run on other data", 1,
                 ["--data", os.path.join(tmp, "story-uint16.bin"), "--val-fraction", "0.2",
                  "--load", half, "--steps", "6"],
                 f"trained on {len(ids) - n_val} tokens, and --data")

    # --metrics: a JSON line per logged or validated step; the plot
    metrics = os.path.join(tmp, "metrics.jsonl")
    run = mpirun(2, "--tp", "2", "--data", text_file, *COMMON, "--log-every", "4",
                 "--metrics", metrics)
    try:
        with open(metrics, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
    except (OSError, ValueError):
        rows = []
    keys = {"step", "train_loss", "lr", "tokens_per_second", "grad_norm", "peak_memory_mib"}
    check("--metrics: one JSON line per logged or validated step, the val loss where computed",
          run.returncode == 0 and [row.get("step") for row in rows] == [4, 6, 8, 12] and
          all(keys <= set(row) for row in rows) and
          [row["step"] for row in rows if "val_loss" in row] == [6, 12] and
          close([row["val_loss"] for row in rows if "val_loss" in row], reference_val) and
          close([rows[0]["train_loss"]], [reference[3]]) and
          all(row["grad_norm"] > 0 and row["peak_memory_mib"] > 1 and row["lr"] == 3e-3
              for row in rows), run.stderr + json.dumps(rows))
    for ext, magic in (("png", b"\x89PNG\r\n\x1a\n"), ("svg", b"<?xml")):
        image = os.path.join(tmp, f"loss.{ext}")
        plot = subprocess.run([PLOT_PYTHON, PLOT, metrics, image], capture_output=True,
                              text=True, timeout=120)
        try:
            with open(image, "rb") as f:
                head = f.read()
        except OSError:
            head = b""
        check(f"plot-metrics.py draws the losses into {ext}",
              plot.returncode == 0 and head.startswith(magic) and
              (ext != "svg" or b"<svg" in head), plot.stdout + plot.stderr)

    # bad data: one message on rank 0, every rank stops before training
    bad = os.path.join(tmp, "bad.bin")
    write_shard(bad, ids, magic=20240521)
    expect_error("a shard with another magic number", 2, ["--tp", "2", "--data", bad],
                 f"{bad}: magic number 20240521 is not that of a token shard")
    write_shard(bad, ids, version=2)
    expect_error("a shard of another version", 2, ["--dp", "2", "--data", bad],
                 f"{bad}: version 2 of a token shard with magic 20240520")
    write_shard(bad, ids, U32, cut=6)
    expect_error("a truncated shard", 2, ["--tp", "2", "--data", bad],
                 f"{bad}: the header counts {len(ids)} tokens of 4 bytes, but "
                 f"{len(ids) * 4 - 6} bytes follow it")
    write_shard(bad, ids[:10], cut=10 * 2 + 1024 - 100)
    expect_error("a shard shorter than its header", 2, ["--tp", "2", "--data", bad],
                 f"{bad}: 100 bytes, shorter than the 1024-byte header of a token shard")
    expect_error("a missing file", 2, ["--tp", "2", "--data", os.path.join(tmp, "none.txt")],
                 "none.txt")
    expect_error("a pattern that matches nothing", 2,
                 ["--tp", "2", "--data", os.path.join(tmp, "*.none")], "no file matches *.none")
    expect_error("text data and a vocab-size below 257", 2,
                 ["--tp", "2", "--data", text_file, "--set", "vocab-size=64"],
                 f"--data {text_file} holds token 256, beyond the model's vocab-size 64: "
                 "give --set vocab-size=257 or more")
    write_shard(bad, ids[:500] + [70000] + ids[500:], U32)
    expect_error("a token beyond the vocab-size of --config", 1,
                 ["--data", bad, "--set", "vocab-size=1000"], "holds token 70000")
    short = os.path.join(tmp, "short.txt")
    with open(short, "w", encoding="utf-8") as f:
        f.write("too short")
    expect_error("text shorter than one sequence", 2, ["--tp", "2", "--data", short],
                 f"--data {short}: the training part: 9 tokens, fewer than one sequence of 32 + 1")
    expect_error("a validation part shorter than one sequence", 2,
                 ["--tp", "2", "--data", text_file, "--val-fraction", "0.001", "--eval-every", "5"],
                 "the validation part: ")
    expect_error("--eval-every without a validation part", 2,
                 ["--tp", "2", "--data", text_file, "--val-fraction", "0", "--eval-every", "5"],
                 "--eval-every: --data")
    with open(bad, "wb") as f:
        f.write(b"caf\xe9 au lait")
    os.rename(bad, short)
    expect_error("text that is not UTF-8", 2, ["--tp", "2", "--data", short],
                 f"{short}: not UTF-8 text: the byte at 3 is not valid")
    expect_error("--eval-every without --data", 1, ["--eval-every", "5"],
                 "--eval-every: validation needs --data")

report()
