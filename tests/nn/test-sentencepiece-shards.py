#!/usr/bin/env python3
# test-sentencepiece-shards.py: examples/python/sentencepiece-shards.py
# writes llm.c shards of a text tokenized by sentencepiece, and hp-train
# trains on them on 2 ranks (tp 2), validating on the val shard.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: test-sentencepiece-shards.py PYTHON EXAMPLE HP_TRAIN TEXT... (TAP on stdout)

import os
import re
import struct
import subprocess
import sys
import tempfile

from hptrain import check, loss_lines, report
import hptrain

PYTHON, EXAMPLE, HP_TRAIN = sys.argv[1:4]
TEXTS = sys.argv[4:]

with tempfile.TemporaryDirectory() as tmp:
    shards = os.path.join(tmp, "shards")
    made = subprocess.run([PYTHON, EXAMPLE, shards, *TEXTS, "--vocab-size", "512"],
                          capture_output=True, text=True, timeout=300)
    check("the example writes the shards and the model", made.returncode == 0 and
          sorted(os.listdir(shards)) == ["text_train_000000.bin", "text_val_000000.bin",
                                         "tokenizer.model"], made.stdout + made.stderr)
    counts = []
    for name in ("text_train_000000.bin", "text_val_000000.bin"):
        try:
            with open(os.path.join(shards, name), "rb") as f:
                data = f.read()
            magic, version, count = struct.unpack("<3i", data[:12])
            ids = struct.unpack(f"<{count}H", data[1024:])
        except (OSError, struct.error, ValueError):
            magic = version = count = None
            ids = ()
        counts.append(count)
        check(f"{name}: llm.c's uint16 header, its count of ids below 512",
              (magic, version) == (20240520, 1) and count and len(ids) == count and
              max(ids) < 512, f"{magic} {version} {count}")

    run = hptrain.mpirun(HP_TRAIN, 2, ["--tp", "2", "--data", shards, "--set", "vocab-size=512",
                                       "--steps", "30", "--log-every", "10", "--eval-every", "15"])
    losses = [float(loss) for loss in loss_lines(run.stdout)]
    val = re.findall(r"^step +\d+/30 +val loss ([0-9.]+)", run.stdout, re.M)
    check("hp-train learns from the shards and validates on the val shard",
          run.returncode == 0 and len(losses) == 3 and losses[-1] < losses[0] - 0.5 and
          len(val) == 2 and float(val[1]) < float(val[0]), run.stdout + run.stderr)

report()
