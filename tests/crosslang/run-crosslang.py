#!/usr/bin/env python3
# run-crosslang.py: runs the model of one language on 1, 2 and 4 ranks
# and compares every run with the C model on one rank
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
#   run-crosslang.py --run-mpi RUN_MPI --template model.json
#                    --reference C_PROGRAM --prefix PREFIX --name NAME
#                    -- COMMAND...
#
# The template is the one JSON document of every language: "@PREFIX@"
# in it stands for the prefix of the language's type names (Xl, PyXl,
# JsXl, ValaXl), the only text that differs between the languages. Each
# run gets a temporary directory of its own holding its document and
# its output; COMMAND is run as COMMAND DOCUMENT OUTPUT LAYOUT through
# run-mpi.sh (mpirun --oversubscribe). An output has lines
#
#   config JSON                 the model's configuration, as it writes it
#   loss V                      the loss (averaged over dp)
#   mapped 0|1                  whether attention.inner_attention is local-mapped
#   callable-heads N            the heads of the q it was last given on rank 0
#   callable-dtensor 0|1        whether that q was a DTensor
#   placement NAME P G          placements of a parameter and its gradient
#   param NAME V...             the parameter after the step, gathered
#   grad NAME V...              its gradient, gathered
#
# The configuration must be the reference's but for the prefix of the
# type names, and the values must agree with the reference's to 1e-12
# (|a - b| <= 1e-12 + 1e-12 |b|), parameter names and order included;
# the layout must be the plan's (PLAN). Then documents the programs must
# refuse (ERROR_CASES), as plain processes. Prints TAP, one test per run.

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

TOLERANCE = 1e-12

# The most differences shown for one run
SHOWN = 8

# Documents the build must refuse, with the error the program must
# print: a config's validate and a module's setup that fail, written in
# each language (what, path from "model", value, message)
ERROR_CASES = [
    ("a validate that fails", ("mlp", "activation"), "relu", "unknown activation 'relu'"),
    ("a setup that fails", ("attention", "n-heads"), 3, "3 heads do not divide 8 features"),
]

# The tensor-parallel plan the document describes, stated here again so
# that a document or a program that lays a layer out otherwise fails:
# column-wise layers shard the weight and the bias by output features,
# row-wise ones the weight by input features and replicate the bias
PLAN = {"attention.wq": "colwise", "attention.wk": "colwise", "attention.wv": "colwise",
        "attention.wo": "rowwise", "mlp.w1": "colwise", "mlp.w2": "rowwise", "head": "colwise"}
STYLES = {"colwise": {"weight": "(S(0))", "bias": "(S(0))"},
          "rowwise": {"weight": "(S(1))", "bias": "(R)"}}

# (ranks, layout): one rank as it is and laid out over a mesh of one,
# tensor parallel on 2, data x tensor parallel (2 x 2) on 4
RUNS = [(1, "none"), (1, "tp"), (2, "tp"), (4, "dp,tp")]


class Output:
    """What a run wrote: the loss, facts about the layout, the
    placements by parameter name and the [(kind, name, values)]"""

    def __init__(self, path):
        self.config = None
        self.loss = None
        self.facts = {}
        self.placements = {}
        self.entries = []
        with open(path, encoding="utf-8") as output:
            for line in output:
                words = line.split()
                if words[0] == "config":
                    self.config = line[len("config "):].rstrip("\n")
                elif words[0] == "loss":
                    self.loss = float(words[1])
                elif words[0] in ("mapped", "callable-heads", "callable-dtensor"):
                    self.facts[words[0]] = int(words[1])
                elif words[0] == "placement":
                    self.placements[words[1]] = tuple(words[2:])
                else:
                    self.entries.append((words[0], words[1], [float(w) for w in words[2:]]))


def expected_layout(layout, ranks, n_heads, names):
    """The facts and placements a run on ranks ranks with layout must show"""
    tp = {"none": 1, "tp": ranks, "dp,tp": ranks // 2}[layout]
    facts = {"mapped": int(layout != "none"), "callable-heads": n_heads // tp, "callable-dtensor": 0}
    placements = {}
    for name in names:
        module, _, state = name.rpartition(".")
        placement = "plain" if layout == "none" else STYLES[PLAN[module]][state]
        placements[name] = (placement, placement)
    return facts, placements


def check_layout(output, facts, placements):
    """How output's layout differs from the expected one, as lines"""
    problems = []
    for fact, value in facts.items():
        if output.facts.get(fact) != value:
            problems.append("%s is %s, expected %s" % (fact, output.facts.get(fact), value))
    for name, expected in placements.items():
        if output.placements.get(name) != expected:
            problems.append("placements of %s and its gradient are %s, expected %s" % (
                name, " and ".join(output.placements.get(name, ("none",))), " and ".join(expected)))
    return problems


def close(value, expected):
    return abs(value - expected) <= TOLERANCE + TOLERANCE * abs(expected)


def compare(output, reference, prefix):
    """The differences between two outputs, as lines of text (none when
    they agree), and the largest absolute difference between their
    values; prefix is that of output's type names"""
    loss, entries = output.loss, output.entries
    ref_loss, ref_entries = reference.loss, reference.entries
    problems = []
    config = (output.config or "").replace('"@type": "%s' % prefix, '"@type": "Xl')
    if config != reference.config:
        problems.append("configuration %s, expected %s (type names of prefix Xl)" % (config, reference.config))
    largest = abs(loss - ref_loss)
    if not close(loss, ref_loss):
        problems.append("loss %.17g, expected %.17g (difference %.3g)" % (loss, ref_loss, loss - ref_loss))
    names = [(kind, name) for kind, name, _ in entries]
    ref_names = [(kind, name) for kind, name, _ in ref_entries]
    if names != ref_names:
        problems.append("parameters %s, expected %s" % (
            " ".join("%s:%s" % n for n in names), " ".join("%s:%s" % n for n in ref_names)))
        return problems, largest
    for (kind, name, values), (_, _, expected) in zip(entries, ref_entries):
        if len(values) != len(expected):
            problems.append("%s %s has %d values, expected %d" % (kind, name, len(values), len(expected)))
            continue
        worst = max(range(len(values)), key=lambda i: abs(values[i] - expected[i]), default=None)
        if worst is None:
            continue
        largest = max(largest, abs(values[worst] - expected[worst]))
        bad = [i for i in range(len(values)) if not close(values[i], expected[i])]
        if bad:
            problems.append("%s %s: %d of %d values differ; worst [%d] %.17g, expected %.17g (difference %.3g)" % (
                kind, name, len(bad), len(values), worst, values[worst], expected[worst],
                values[worst] - expected[worst]))
    return problems, largest


def run(args, command, document_text, ranks, layout, directory):
    """Runs command on ranks ranks in directory (ranks None: as a plain
    process, one rank), on the document document_text: its exit status,
    what it printed, and its output (None when it wrote none)"""
    document = os.path.join(directory, "model.json")
    output = os.path.join(directory, "output.txt")
    with open(document, "w", encoding="utf-8") as out:
        out.write(document_text)
    full = ([] if ranks is None else [args.run_mpi, str(ranks)]) + command + [document, output, layout]
    start = time.monotonic()
    try:
        result = subprocess.run(full, cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, timeout=args.timeout, check=False)
    except subprocess.TimeoutExpired as expired:
        print("# %s: stopped after %g s" % (" ".join(full[:-3] + [layout]), args.timeout))
        printed = expired.stdout.decode(errors="replace") if expired.stdout else ""
        return None, printed, None
    print("# %s: exit status %d, %.1f s" % (" ".join(full[:-3] + [layout]), result.returncode,
                                             time.monotonic() - start))
    return result.returncode, result.stdout, Output(output) if os.path.exists(output) else None


def run_training(args, command, document_text, ranks, layout, directory):
    """run(), for a run that must succeed: its output, or None with the
    reason printed as TAP diagnostics"""
    status, printed, output = run(args, command, document_text, ranks, layout, directory)
    if status != 0 or output is None:
        for line in printed.splitlines():
            print("#   " + line)
        return None
    return output


def document_with(template, path, value):
    """The template with the field at path (keys from "model") set to value"""
    document = json.loads(template)
    place = document["model"]
    for key in path[:-1]:
        place = place[key]
    place[path[-1]] = value
    return json.dumps(document, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run-mpi", required=True)
    parser.add_argument("--template", required=True)
    parser.add_argument("--reference", required=True, help="the C program")
    parser.add_argument("--prefix", required=True, help="the prefix of the language's type names")
    parser.add_argument("--name", required=True, help="the language, for the report")
    # meson stops the whole test at its timeout, which test setups scale
    parser.add_argument("--timeout", type=float, default=None, help="seconds a run may take (default: no limit)")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    # the runs start in directories of their own
    args.reference = os.path.abspath(args.reference)
    args.command = [os.path.abspath(word) if os.path.exists(word) else word for word in args.command]
    with open(args.template, encoding="utf-8") as template_file:
        template = template_file.read()

    print("1..%d" % (1 + len(RUNS) + len(ERROR_CASES)))
    failed = 0
    with tempfile.TemporaryDirectory(prefix="crosslang-") as root:
        directory = os.path.join(root, "reference")
        os.mkdir(directory)
        reference = run_training(args, [args.reference], template.replace("@PREFIX@", "Xl"), 1, "none",
                                 directory)
        if reference is None:
            print("not ok 1 the C reference on 1 rank")
            print("Bail out! no reference")
            return 1
        print("ok 1 the C reference on 1 rank: loss %.17g" % reference.loss)
        n_heads = json.loads(template)["model"]["attention"]["n-heads"]
        names = [name for kind, name, _ in reference.entries if kind == "param"]
        number = 1
        for ranks, layout in RUNS:
            number += 1
            what = "%s, %d rank%s, layout %s" % (args.name, ranks, "" if ranks == 1 else "s", layout)
            directory = os.path.join(root, "%s-np%d-%s" % (args.name, ranks, layout.replace(",", "-")))
            os.mkdir(directory)
            output = run_training(args, args.command, template.replace("@PREFIX@", args.prefix), ranks, layout,
                                  directory)
            if output is None:
                print("not ok %d %s: the run failed" % (number, what))
                failed += 1
                continue
            problems, largest = compare(output, reference, args.prefix)
            problems += check_layout(output, *expected_layout(layout, ranks, n_heads, names))
            if problems:
                print("not ok %d %s: differs from the C reference on 1 rank or from the plan" % (number, what))
                for problem in problems[:SHOWN]:
                    print("#   " + problem)
                if len(problems) > SHOWN:
                    print("#   and %d more" % (len(problems) - SHOWN))
                failed += 1
            else:
                print("ok %d %s: max |difference| %.3g" % (number, what, largest))
        for what, path, value, message in ERROR_CASES:
            number += 1
            directory = os.path.join(root, "%s-error-%d" % (args.name, number))
            os.mkdir(directory)
            document = document_with(template, path, value).replace("@PREFIX@", args.prefix)
            # mpirun takes seconds to stop after a failure
            status, printed, output = run(args, args.command, document, None, "none", directory)
            expected = "rank 0: " + message
            if status not in (0, None) and output is None and expected in printed.splitlines():
                print("ok %d %s, %s: %s" % (number, args.name, what, message))
            else:
                print("not ok %d %s, %s: exit status %s, expected a failure with \"%s\"" % (
                    number, args.name, what, status, expected))
                for line in printed.splitlines():
                    print("#   " + line)
                failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
