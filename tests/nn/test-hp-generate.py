#!/usr/bin/env python3
# test-hp-generate.py: hp-generate continues a prompt with what hp-train
# saved: the same tokens on 1 rank and on 2 ranks with --tp 2, with and
# without the key/value cache; bad options give one line on rank 0 and
# a non-zero exit.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: test-hp-generate.py HP_TRAIN HP_GENERATE (TAP on stdout)

import os
import re
import sys
import tempfile

from hptrain import check, report
import hptrain

HP_TRAIN, HP_GENERATE = sys.argv[1], sys.argv[2]

TEXT = ("The cat sat on the mat. The dog sat on the log. A bird sang in the tree, "
        "and the cat looked up at the bird. ") * 40


def generate(np, *args):
    return hptrain.mpirun(HP_GENERATE, np, args)


def expect_error(name, np, args, message):
    """One line on rank 0 holding MESSAGE, nothing printed on stdout, no
    GLib warning or critical, a non-zero exit"""
    run = generate(np, *args)
    lines = [line for line in run.stderr.splitlines() if line.startswith("hp-generate:")]
    ok = run.returncode != 0 and len(lines) == 1 and message in lines[0] and \
        not run.stdout and "WARNING" not in run.stderr and "CRITICAL" not in run.stderr
    check(name, ok, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}")


with tempfile.TemporaryDirectory() as tmp:
    text_file = os.path.join(tmp, "story.txt")
    with open(text_file, "w") as f:
        f.write(TEXT)
    text_run = os.path.join(tmp, "text-run")
    trained = hptrain.mpirun(HP_TRAIN, 1, ["--data", text_file, "--steps", "30", "--seq-len", "16",
                                           "--batch", "8", "--log-every", "10", "--save", text_run])
    check("hp-train --data --save runs", trained.returncode == 0, trained.stderr)
    bigram_run = os.path.join(tmp, "bigram-run")
    trained = hptrain.mpirun(HP_TRAIN, 1, ["--steps", "2", "--save", bigram_run])
    check("hp-train --save (no data) runs", trained.returncode == 0, trained.stderr)

    # the same tokens on 1 and 2 ranks, with and without the cache
    for name, options in (("greedy", ["--temperature", "0"]),
                          ("sampled", ["--temperature", "0.9", "--top-k", "20", "--top-p", "0.95",
                                       "--seed", "3"])):
        common = ["--load", text_run, "--prompt", "The cat ", "--max-new-tokens", "24", *options]
        one = generate(1, *common)
        check(f"{name}: 1 rank runs", one.returncode == 0 and one.stdout.startswith("The cat "),
              one.stdout + one.stderr)
        check(f"{name}: a tokens/s line on stderr",
              re.search(r"^hp-generate: \d+ tokens after 8 of prompt in [0-9.]+ s", one.stderr, re.M)
              is not None, one.stderr)
        for np, extra in ((2, ["--tp", "2"]), (1, ["--no-cache"]), (2, ["--tp", "2", "--no-cache"]),
                          (2, [])):
            run = generate(np, *common, *extra)
            check(f"{name}: {np} ranks {' '.join(extra)} give the tokens of 1 rank",
                  run.returncode == 0 and run.stdout == one.stdout,
                  run.stderr + "\n" + repr(run.stdout) + "\n" + repr(one.stdout))
        ids = generate(1, *common, "--print-ids")
        check(f"{name}: --print-ids prints the new ids", ids.returncode == 0 and
              re.fullmatch(r"\d+(,\d+)*\n", ids.stdout) is not None, ids.stdout + ids.stderr)

    # greedy text after training on the story continues it in its words
    learned = generate(1, "--load", text_run, "--prompt", "The cat sat on the ",
                       "--max-new-tokens", "12", "--temperature", "0")
    check("greedy text continues with bytes of the story",
          learned.returncode == 0 and set(learned.stdout.strip()) <= set(TEXT), learned.stdout)

    # ids into a model of 64 tokens, on 2 ranks, from the step directory itself
    step = os.path.join(bigram_run, "step-2")
    one = generate(1, "--load", step, "--prompt-ids", "1, 2,3", "--print-ids", "--seed", "5")
    two = generate(2, "--load", step, "--prompt-ids", "1, 2,3", "--print-ids", "--seed", "5",
                   "--tp", "2")
    check("--prompt-ids: 32 new ids, the same on 2 ranks",
          one.returncode == 0 and len(one.stdout.strip().split(",")) == 32 and
          two.stdout == one.stdout, one.stdout + one.stderr + two.stdout + two.stderr)
    check("--max-new-tokens 0 prints nothing new",
          generate(1, "--load", step, "--prompt-ids", "4", "--print-ids",
                   "--max-new-tokens", "0").stdout == "\n")

    expect_error("no --load", 1, ["--prompt", "x"], "--load DIR is needed")
    expect_error("no prompt", 2, ["--load", text_run], "give the prompt as --prompt TEXT")
    expect_error("two prompts", 1, ["--load", text_run, "--prompt", "x", "--prompt-ids", "1"],
                 "(one of them)")
    expect_error("a prompt id that is not a number", 1,
                 ["--load", text_run, "--prompt-ids", "1,x"], "--prompt-ids 1,x: 'x' is not a token id")
    expect_error("a prompt id outside the vocabulary", 2,
                 ["--load", step, "--prompt-ids", "1,64", "--tp", "2"],
                 "prompt token 1 is 64, outside the vocabulary [0, 64)")
    expect_error("text into a model without byte tokens", 1, ["--load", step, "--prompt", "x"],
                 "--prompt: the model's vocab-size 64 does not hold the 257 byte tokens")
    expect_error("an empty prompt", 1, ["--load", text_run, "--prompt", ""], "the prompt is empty")
    expect_error("more tokens than positions", 1,
                 ["--load", step, "--prompt-ids", "1", "--max-new-tokens", "100"],
                 "but the decoder has max-seq-len 64")
    expect_error("--top-p 0", 1, ["--load", step, "--prompt-ids", "1", "--top-p", "0"],
                 "--top-p 0: needs a number in (0, 1]")
    expect_error("a negative temperature", 1,
                 ["--load", step, "--prompt-ids", "1", "--temperature", "-1"],
                 "--temperature -1: needs a finite number, at least 0")
    expect_error("a negative --top-k", 1, ["--load", step, "--prompt-ids", "1", "--top-k", "-2"],
                 "--max-new-tokens and --top-k not negative")
    expect_error("--tp that does not divide the ranks", 2,
                 ["--load", step, "--prompt-ids", "1", "--tp", "3"],
                 "--tp 3 does not divide world size 2")
    missing = os.path.join(tmp, "missing")
    expect_error("--load of nothing", 1, ["--load", missing, "--prompt-ids", "1"],
                 "no checkpoint: neither a step")
    expect_error("an unknown option", 1, ["--load", step, "--prompt-ids", "1", "--beam", "4"],
                 "--beam")

report()
