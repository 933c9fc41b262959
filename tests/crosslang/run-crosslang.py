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
# run-mpi.sh (mpirun --oversubscribe). The outputs, lines of
# "loss V", "param NAME V..." and "grad NAME V...", must agree with the
# reference to 1e-12 (|a - b| <= 1e-12 + 1e-12 |b|), parameter names and
# order included. Prints TAP, one test per run.

import argparse
import os
import subprocess
import sys
import tempfile

TOLERANCE = 1e-12

# (ranks, layout): one rank as it is and laid out over a mesh of one,
# tensor parallel on 2, data x tensor parallel (2 x 2) on 4
RUNS = [(1, "none"), (1, "tp"), (2, "tp"), (4, "dp,tp")]


def read_output(path):
    """The loss and the [(kind, name, values)] of an output file"""
    loss = None
    entries = []
    with open(path, encoding="utf-8") as output:
        for line in output:
            words = line.split()
            if words[0] == "loss":
                loss = float(words[1])
            else:
                entries.append((words[0], words[1], [float(w) for w in words[2:]]))
    return loss, entries


def close(value, expected):
    return abs(value - expected) <= TOLERANCE + TOLERANCE * abs(expected)


def compare(output, reference):
    """The differences between two outputs, as lines of text (none when
    they agree), and the largest absolute difference"""
    loss, entries = output
    ref_loss, ref_entries = reference
    problems = []
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


def run(args, command, prefix, ranks, layout, directory):
    """Runs command on ranks ranks in directory, on the document whose
    type names have prefix: the output, or None with the reason printed
    as TAP diagnostics"""
    document = os.path.join(directory, "model.json")
    output = os.path.join(directory, "output.txt")
    with open(args.template, encoding="utf-8") as template:
        text = template.read()
    with open(document, "w", encoding="utf-8") as out:
        out.write(text.replace("@PREFIX@", prefix))
    full = [args.run_mpi, str(ranks)] + command + [document, output, layout]
    result = subprocess.run(full, cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, timeout=args.timeout, check=False)
    if result.returncode != 0 or not os.path.exists(output):
        print("# %s exited with status %d" % (" ".join(full), result.returncode))
        for line in result.stdout.splitlines():
            print("#   " + line)
        return None
    return read_output(output)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run-mpi", required=True)
    parser.add_argument("--template", required=True)
    parser.add_argument("--reference", required=True, help="the C program")
    parser.add_argument("--prefix", required=True, help="the prefix of the language's type names")
    parser.add_argument("--name", required=True, help="the language, for the report")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    # the runs start in directories of their own
    args.reference = os.path.abspath(args.reference)
    args.command = [os.path.abspath(word) if os.path.exists(word) else word for word in args.command]

    print("1..%d" % (1 + len(RUNS)))
    failed = 0
    with tempfile.TemporaryDirectory(prefix="crosslang-") as root:
        directory = os.path.join(root, "reference")
        os.mkdir(directory)
        reference = run(args, [args.reference], "Xl", 1, "none", directory)
        if reference is None:
            print("not ok 1 the C reference on 1 rank")
            print("Bail out! no reference")
            return 1
        print("ok 1 the C reference on 1 rank: loss %.17g" % reference[0])
        for number, (ranks, layout) in enumerate(RUNS, start=2):
            what = "%s, %d rank%s, layout %s" % (args.name, ranks, "" if ranks == 1 else "s", layout)
            directory = os.path.join(root, "%s-np%d-%s" % (args.name, ranks, layout.replace(",", "-")))
            os.mkdir(directory)
            output = run(args, args.command, args.prefix, ranks, layout, directory)
            if output is None:
                print("not ok %d %s: the run failed" % (number, what))
                failed += 1
                continue
            problems, largest = compare(output, reference)
            if problems:
                print("not ok %d %s: differs from the C reference on 1 rank" % (number, what))
                for problem in problems:
                    print("#   " + problem)
                failed += 1
            else:
                print("ok %d %s: max |difference| %.3g" % (number, what, largest))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
